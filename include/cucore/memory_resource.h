/* libcucore: memory resources, the noun every kind of memory shares.
 *
 * A memory resource allocates buffers (cucore/buffer.h). The kinds are made in their
 * own headers: stream-ordered device and pinned pools (memory_pool.h), managed memory
 * (managed_memory.h), virtual memory (virtual_memory.h), user-defined resources
 * (user_memory.h). This header holds what every kind answers, the device's default
 * resource, the legacy pinned kind (page-locked host memory) and the enums the other
 * memory headers share (kinds, locations, access). Stream-ordered resources free a
 * buffer on its deallocation stream (the allocation stream unless changed) when its
 * last reference goes or when it is closed.
 */
#ifndef CUCORE_MEMORY_RESOURCE_H
#define CUCORE_MEMORY_RESOURCE_H

#include "common.h"

typedef enum cucore_memory_resource_kind {
    CUCORE_MEMORY_RESOURCE_UNSET = 0,
    /* A stream-ordered device memory pool (cuMemAllocFromPoolAsync/cuMemFreeAsync). */
    CUCORE_MEMORY_RESOURCE_DEVICE = 1,
    /* Page-locked host memory from cuMemAllocHost/cuMemFreeHost (synchronous). */
    CUCORE_MEMORY_RESOURCE_LEGACY_PINNED = 2,
    /* A stream-ordered pool of page-locked host memory (a host or host-NUMA cuMemPoolCreate). */
    CUCORE_MEMORY_RESOURCE_PINNED = 3,
    /* Managed (unified) memory: cuMemAllocManaged (synchronous), or with options.use_pool a
     * stream-ordered managed pool (cuMemPoolCreate, CU_MEM_ALLOCATION_TYPE_MANAGED). */
    CUCORE_MEMORY_RESOURCE_MANAGED = 4,
    /* Virtual memory management: cuMemCreate + cuMemAddressReserve + cuMemMap + cuMemSetAccess
     * (synchronous); its buffers can grow (cucore_buffer_grow). */
    CUCORE_MEMORY_RESOURCE_VIRTUAL = 5,
    /* A resource whose allocate/deallocate are the user's callbacks. */
    CUCORE_MEMORY_RESOURCE_USER = 6,
    /* A pool imported from another process (cucore_ipc_import_memory_resource): it maps buffers
     * that process exports (cucore_ipc_import_buffer) and cannot allocate. It is the resource of the
     * buffers imported into it, which hold it; each buffer's memory is unmapped by the buffer's own
     * release (cuMemFreeAsync on its deallocation stream), not by the pool. */
    CUCORE_MEMORY_RESOURCE_IMPORTED = 7,
    /* No longer produced; kept so that the values stay stable. A mapped graphics buffer
     * (cucore_graphics_resource_map) is memory of no memory resource: cucore_buffer_memory_resource
     * gives NULL for it, as for foreign memory, and its release unmaps it. */
    CUCORE_MEMORY_RESOURCE_GRAPHICS = 8,
    /* Graph memory (graph_memory.h): allocations on a capturing stream become
     * allocation nodes of the graph being captured. */
    CUCORE_MEMORY_RESOURCE_GRAPH = 9,
    CUCORE_MEMORY_RESOURCE_KIND_FORCE_INT32 = 0x7fffffff
} cucore_memory_resource_kind_t;

/* Where memory lives or is wanted (the driver's CUmemLocation). */
typedef enum cucore_location_type {
    CUCORE_LOCATION_NONE = 0,              /* no location (e.g. no preferred location) */
    CUCORE_LOCATION_DEVICE = 1,            /* id: a device ordinal */
    CUCORE_LOCATION_HOST = 2,              /* id ignored */
    CUCORE_LOCATION_HOST_NUMA = 3,         /* id: a host NUMA node */
    CUCORE_LOCATION_HOST_NUMA_CURRENT = 4, /* the calling thread's NUMA node; id ignored */
    CUCORE_LOCATION_TYPE_FORCE_INT32 = 0x7fffffff
} cucore_location_type_t;

typedef struct cucore_location {
    cucore_location_type_t type;
    int32_t id;
} cucore_location_t;

/* Access a device (or the host) is granted to memory. */
typedef enum cucore_access {
    CUCORE_ACCESS_NONE = 0,
    CUCORE_ACCESS_READ = 1,
    CUCORE_ACCESS_READ_WRITE = 3,
    CUCORE_ACCESS_FORCE_INT32 = 0x7fffffff
} cucore_access_t;

CUCORE_EXTERN_C_BEGIN

/* A resource of page-locked host memory (cuMemAllocHost) made in `device`'s
 * primary context; allocation and release are synchronous (+1 reference).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), CUDA. */
CUCORE_API cucore_status_t cucore_legacy_pinned_memory_resource_create(cucore_device_t *device,
                                                                       cucore_memory_resource_t **resource);

/* The device's default memory resource (+1 reference): the one set with
 * cucore_device_set_memory_resource, else a resource on the device's current
 * pool (as cucore_device_memory_resource_get_default).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), NOT_SUPPORTED (no pools and
 * none set), CUDA. */
CUCORE_API cucore_status_t cucore_device_get_memory_resource(cucore_device_t *device,
                                                         cucore_memory_resource_t **resource);

/* Makes `resource` (any kind; the device keeps a reference for the life of the
 * process or until replaced) the device's default memory resource, or NULL to
 * return to the device's current pool. Process-wide, seen by every language.
 * Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_device_set_memory_resource(cucore_device_t *device,
                                                             cucore_memory_resource_t *resource);

/* Allocates `size` bytes from the device's default memory resource, ordered on
 * `stream` (NULL only if that resource is synchronous) (+1 reference).
 * Errors: as cucore_device_get_memory_resource and cucore_memory_resource_allocate. */
CUCORE_API cucore_status_t cucore_device_allocate(cucore_device_t *device, uint64_t size, cucore_stream_t *stream,
                                                  cucore_buffer_t **buffer);

/* Adds a reference. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_memory_resource_retain(cucore_memory_resource_t *resource);

/* Drops a reference; NULL is a no-op. A pool this library created is destroyed
 * with the last reference (buffers hold one). Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_memory_resource_release(cucore_memory_resource_t *resource);

/* Allocates `size` bytes (0 is valid: a buffer with address 0) ordered on
 * `stream` (+1 reference to the new buffer, whose deallocation stream is
 * `stream` for stream-ordered resources and user resources). `stream` may be
 * NULL for the synchronous ones (legacy pinned, managed without a pool,
 * virtual, user); see cucore_memory_resource_is_stream_ordered.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out, NULL stream for a pool,
 * stream of another device), INVALID_STATE (an imported pool), OUT_OF_MEMORY,
 * CUDA (or a user resource's allocate status). */
CUCORE_API cucore_status_t cucore_memory_resource_allocate(cucore_memory_resource_t *resource, uint64_t size,
                                                           cucore_stream_t *stream, cucore_buffer_t **buffer);

/* Returns `size` bytes at `address` to the resource, ordered on `stream` as
 * allocate orders (NULL for the synchronous resources): memory the caller
 * owns outside any buffer, such as a user resource's or a pool's allocation
 * wrapped by cucore_buffer_from_handle. Never pass the memory of a live
 * buffer: the buffer frees it again. Address 0 is a no-op.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL stream for a pool, stream of
 * another device), CUDA (the driver rejects the address), or a user resource's
 * deallocate status. */
CUCORE_API cucore_status_t cucore_memory_resource_deallocate(cucore_memory_resource_t *resource, uint64_t address,
                                                             uint64_t size, cucore_stream_t *stream);

/* The raw CUmemoryPool of a pool resource, or NULL for a resource without a
 * pool (legacy pinned, managed without a pool, virtual, user).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_memory_resource_handle(const cucore_memory_resource_t *resource,
                                                         void **cu_memory_pool);

/* The resource's kind. Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_memory_resource_kind(const cucore_memory_resource_t *resource,
                                                       cucore_memory_resource_kind_t *kind);

/* The ordinal of the device whose memory the resource gives, or -1 for host
 * memory. Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_memory_resource_device_id(const cucore_memory_resource_t *resource,
                                                            int *device_id);

/* Whether the resource's memory is accessible from the device (1/0) and from
 * the host (1/0). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_memory_resource_accessibility(const cucore_memory_resource_t *resource,
                                                                int *device_accessible, int *host_accessible);

/* Whether the resource allocates and frees in stream order (1: a pool, which
 * needs a stream) or synchronously (0). Errors: INVALID_HANDLE,
 * INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_memory_resource_is_stream_ordered(const cucore_memory_resource_t *resource,
                                                                    int *stream_ordered);

/* Whether the resource gives managed memory (1/0). Errors: INVALID_HANDLE,
 * INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_memory_resource_is_managed(const cucore_memory_resource_t *resource,
                                                             int *managed);

CUCORE_EXTERN_C_END

#endif /* CUCORE_MEMORY_RESOURCE_H */
