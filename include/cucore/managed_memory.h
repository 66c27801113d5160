/* libcucore: managed (unified) memory: its resource, and the advice, prefetches and
 * discards a managed buffer takes.
 */
#ifndef CUCORE_MANAGED_MEMORY_H
#define CUCORE_MANAGED_MEMORY_H

#include "buffer.h"
#include "memory_resource.h"

/* Options of a managed memory resource. */
typedef struct cucore_managed_memory_resource_options {
    uint32_t struct_size;
    /* 0 (default): cuMemAllocManaged and cuMemFree (synchronous; every advice
     * works). 1: a managed memory pool (CU_MEM_ALLOCATION_TYPE_MANAGED, CUDA 13
     * drivers): stream-ordered like the other pools, but drivers may refuse
     * advice on its memory (an H100 with driver 580 answers cuMemAdvise with
     * CUDA_ERROR_NOT_SUPPORTED there; prefetch works). */
    uint32_t use_pool;
    /* The preferred location of the memory: NONE (the default), DEVICE (id:
     * ordinal), HOST or HOST_NUMA (of the pool, or advised for each allocation). */
    cucore_location_t preferred_location;
    uint64_t max_size;           /* pools only; 0: no limit */
    uint64_t release_threshold;  /* pools only; 0: the driver's default */
} cucore_managed_memory_resource_options_t;

#define CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT \
    {(uint32_t)sizeof(cucore_managed_memory_resource_options_t), 0, {CUCORE_LOCATION_NONE, 0}, 0, 0}

/* Managed-memory advice (cucore_buffer_advise). */
typedef enum cucore_memory_advice {
    CUCORE_ADVICE_UNSET = 0,
    CUCORE_ADVICE_SET_READ_MOSTLY = 1,
    CUCORE_ADVICE_UNSET_READ_MOSTLY = 2,
    CUCORE_ADVICE_SET_PREFERRED_LOCATION = 3,
    CUCORE_ADVICE_UNSET_PREFERRED_LOCATION = 4,
    CUCORE_ADVICE_SET_ACCESSED_BY = 5,
    CUCORE_ADVICE_UNSET_ACCESSED_BY = 6,
    CUCORE_ADVICE_FORCE_INT32 = 0x7fffffff
} cucore_memory_advice_t;

CUCORE_EXTERN_C_BEGIN

/* A resource of managed memory on `device` (+1 reference): cuMemAllocManaged
 * (synchronous: the stream may be NULL) or, with options.use_pool, a managed
 * pool allocating in stream order on `device`'s streams. Buffers are host- and
 * device-accessible and managed (advice, prefetch and discard apply). Options
 * NULL: defaults.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out, bad options, a preferred
 * location of an unknown type, max_size or release_threshold without use_pool),
 * NOT_SUPPORTED (no managed memory, or managed pools: driver before CUDA 13),
 * CUDA. */
CUCORE_API cucore_status_t cucore_managed_memory_resource_create(
    cucore_device_t *device, const cucore_managed_memory_resource_options_t *options,
    cucore_memory_resource_t **resource);

/* The memory resource of the driver's current pool of managed memory without a
 * preferred location (cuMemGetMemPool; its default pool unless another was
 * made current), not owned: releasing the resource never destroys it (+1
 * reference). It allocates in stream order on `device`'s streams; buffers are
 * managed. cuda.core's ManagedMemoryResource() without options.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), NOT_SUPPORTED (no managed
 * memory or memory pools, or a driver before CUDA 13), CUDA. */
CUCORE_API cucore_status_t cucore_managed_memory_resource_get_default(cucore_device_t *device,
                                                                      cucore_memory_resource_t **resource);

/* Gives the driver advice about a managed buffer's memory (cuMemAdvise):
 * read-mostly and unsetting the preferred location (location ignored: NONE
 * will do), setting a preferred location and accessed-by (a DEVICE or
 * HOST/HOST_NUMA location).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (not managed memory, unknown advice
 * or location), INVALID_STATE (closed), CUDA. */
CUCORE_API cucore_status_t cucore_buffer_advise(cucore_buffer_t *buffer, cucore_memory_advice_t advice,
                                                cucore_location_t location);

/* Reads the advice in effect: read-mostly (1/0) and the preferred location
 * (type NONE when there is none); either out may be NULL.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (not managed), INVALID_STATE, CUDA. */
CUCORE_API cucore_status_t cucore_buffer_advice(const cucore_buffer_t *buffer, int *read_mostly,
                                                cucore_location_t *preferred_location);

/* Whether the accessed-by advice is set for `location` (a device or the host)
 * on the buffer's memory: 1/0. Errors: as cucore_buffer_advice. */
CUCORE_API cucore_status_t cucore_buffer_is_accessed_by(const cucore_buffer_t *buffer,
                                                        cucore_location_t location, int *accessed_by);

/* The location the buffer was last prefetched to (type NONE if never or not
 * all in one place). Errors: as cucore_buffer_advice. */
CUCORE_API cucore_status_t cucore_buffer_last_prefetch_location(const cucore_buffer_t *buffer,
                                                                cucore_location_t *location);

/* Migrates a managed buffer's memory to `location`, ordered on `stream`
 * (cuMemPrefetchAsync). Errors: INVALID_HANDLE, INVALID_ARGUMENT (not managed,
 * bad location), INVALID_STATE (closed), CUDA. */
CUCORE_API cucore_status_t cucore_buffer_prefetch(cucore_buffer_t *buffer, cucore_location_t location,
                                                  cucore_stream_t *stream);

/* Tells the driver the managed buffer's contents are no longer needed, ordered
 * on `stream` (cuMemDiscardBatchAsync); with `prefetch_location` not NULL the
 * pages are then made resident there (cuMemDiscardAndPrefetchBatchAsync).
 * Reading before writing after a discard gives unspecified values.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (not managed), INVALID_STATE,
 * NOT_SUPPORTED (driver before CUDA 13), CUDA. */
CUCORE_API cucore_status_t cucore_buffer_discard(cucore_buffer_t *buffer, const cucore_location_t *prefetch_location,
                                                 cucore_stream_t *stream);

CUCORE_EXTERN_C_END

#endif /* CUCORE_MANAGED_MEMORY_H */
