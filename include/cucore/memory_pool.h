/* libcucore: stream-ordered memory pools (cuMemPoolCreate / cuMemAllocFromPoolAsync /
 * cuMemFreeAsync): a device's current pool, new device pools and pools of page-locked
 * host memory, their attributes, trimming and peer access. (Managed pools are made by
 * cucore_managed_memory_resource_create, managed_memory.h.)
 */
#ifndef CUCORE_MEMORY_POOL_H
#define CUCORE_MEMORY_POOL_H

#include "memory_resource.h"

/* Attributes of a memory pool (the driver's CUmemPool_attribute values). */
typedef enum cucore_pool_attribute {
    CUCORE_POOL_ATTRIBUTE_UNSET = 0,
    /* 0/1: reuse memory freed on another stream once its free's event dependencies are met. Settable. */
    CUCORE_POOL_ATTRIBUTE_REUSE_FOLLOW_EVENT_DEPENDENCIES = 1,
    /* 0/1: reuse memory whose free has completed on any stream. Settable. */
    CUCORE_POOL_ATTRIBUTE_REUSE_ALLOW_OPPORTUNISTIC = 2,
    /* 0/1: let the driver insert dependencies to reuse memory. Settable. */
    CUCORE_POOL_ATTRIBUTE_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 3,
    /* Bytes kept reserved after a synchronization. Settable. */
    CUCORE_POOL_ATTRIBUTE_RELEASE_THRESHOLD = 4,
    /* Bytes the pool has reserved from the system now. */
    CUCORE_POOL_ATTRIBUTE_RESERVED_MEM_CURRENT = 5,
    /* The high-water mark of the above; settable to 0 only (reset). */
    CUCORE_POOL_ATTRIBUTE_RESERVED_MEM_HIGH = 6,
    /* Bytes allocated from the pool and not yet freed. */
    CUCORE_POOL_ATTRIBUTE_USED_MEM_CURRENT = 7,
    /* The high-water mark of the above; settable to 0 only (reset). */
    CUCORE_POOL_ATTRIBUTE_USED_MEM_HIGH = 8,
    CUCORE_POOL_ATTRIBUTE_FORCE_INT32 = 0x7fffffff
} cucore_pool_attribute_t;

/* Options of a new device memory pool. */
typedef struct cucore_device_memory_resource_options {
    uint32_t struct_size;
    uint32_t reserved0;          /* must be 0 */
    /* The most the pool may reserve, in bytes; 0: no limit (the driver's default). */
    uint64_t max_size;
    /* Bytes the pool keeps reserved after a synchronization instead of returning
     * them to the system; 0: the driver's default (0, return everything). */
    uint64_t release_threshold;
    /* 1: the pool can be shared with other processes (POSIX file descriptor,
     * Linux only; see cucore/ipc.h); 0: not shared. */
    uint32_t ipc_enabled;
    uint32_t reserved1;          /* must be 0 */
} cucore_device_memory_resource_options_t;

#define CUCORE_DEVICE_MEMORY_RESOURCE_OPTIONS_INIT \
    {(uint32_t)sizeof(cucore_device_memory_resource_options_t), 0, 0, 0, 0, 0}

/* Options of a pinned (page-locked host) memory pool. Zero in every field (with
 * struct_size set) is the default, exactly as the INIT macro. */
typedef struct cucore_pinned_memory_resource_options {
    uint32_t struct_size;
    /* 1: shareable with other processes (needs a NUMA node: without use_numa_id, node 0). */
    uint32_t ipc_enabled;
    uint64_t max_size;           /* 0: no limit */
    uint64_t release_threshold;  /* 0: the driver's default */
    /* The host NUMA node the memory comes from (>= 0); read only when use_numa_id is 1. */
    int32_t numa_id;
    /* 0 (default): any host memory (CU_MEM_LOCATION_TYPE_HOST); 1: the node numa_id. */
    uint32_t use_numa_id;
} cucore_pinned_memory_resource_options_t;

#define CUCORE_PINNED_MEMORY_RESOURCE_OPTIONS_INIT \
    {(uint32_t)sizeof(cucore_pinned_memory_resource_options_t), 0, 0, 0, 0, 0}

CUCORE_EXTERN_C_BEGIN

/* The memory resource of `device`'s current memory pool (cuDeviceGetMemPool),
 * which is not owned: releasing the resource never destroys that pool (+1
 * reference). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), NOT_SUPPORTED
 * (the device has no memory pools), CUDA. */
CUCORE_API cucore_status_t cucore_device_memory_resource_get_default(cucore_device_t *device,
                                                                     cucore_memory_resource_t **resource);

/* The memory resource of the driver's current pool of pinned host memory
 * (cuMemGetMemPool at the host location; its default pool unless another was
 * made current), not owned: releasing the resource never destroys it (+1
 * reference). It allocates in stream order on `device`'s streams, and `device`
 * is granted read-write access to the pool. cuda.core's PinnedMemoryResource()
 * without options. Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL),
 * NOT_SUPPORTED (no memory pools, or a driver before CUDA 13), CUDA. */
CUCORE_API cucore_status_t cucore_pinned_memory_resource_get_default(cucore_device_t *device,
                                                                     cucore_memory_resource_t **resource);

/* A new device memory pool on `device` (cuMemPoolCreate; destroyed when the
 * resource and every buffer from it are released) (+1 reference).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out, bad options), NOT_SUPPORTED
 * (no memory pools), OUT_OF_MEMORY, CUDA. */
CUCORE_API cucore_status_t cucore_device_memory_resource_create(
    cucore_device_t *device, const cucore_device_memory_resource_options_t *options,
    cucore_memory_resource_t **resource);

/* A new pool of page-locked host memory (+1 reference), allocating in stream
 * order on any stream of `device`, which is granted read-write access to it
 * (other devices: cucore_memory_resource_set_peer_access). Its buffers are
 * host- and device-accessible; device_id -1. Options NULL: defaults.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out, bad options: a switch
 * above 1, use_numa_id with a negative numa_id),
 * NOT_SUPPORTED (no memory pools, or the driver has no host pools), CUDA. */
CUCORE_API cucore_status_t cucore_pinned_memory_resource_create(
    cucore_device_t *device, const cucore_pinned_memory_resource_options_t *options,
    cucore_memory_resource_t **resource);

/* A pool attribute of a pool resource (flags read as 0 or 1).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, unknown attribute),
 * NOT_SUPPORTED (the resource has no pool), CUDA. */
CUCORE_API cucore_status_t cucore_memory_resource_pool_attribute(const cucore_memory_resource_t *resource,
                                                                 cucore_pool_attribute_t attribute,
                                                                 uint64_t *value);

/* Sets a settable pool attribute (flags take 0 or 1; the high-water marks take
 * only 0, which resets them). Errors: INVALID_HANDLE, INVALID_ARGUMENT (unknown
 * or read-only attribute, value out of range), NOT_SUPPORTED (no pool), CUDA. */
CUCORE_API cucore_status_t cucore_memory_resource_set_pool_attribute(cucore_memory_resource_t *resource,
                                                                     cucore_pool_attribute_t attribute,
                                                                     uint64_t value);

/* Returns reserved memory the pool does not use to the system, keeping at least
 * `min_bytes_to_keep` (cuMemPoolTrimTo). Errors: INVALID_HANDLE, NOT_SUPPORTED
 * (no pool), CUDA. */
CUCORE_API cucore_status_t cucore_memory_resource_trim(cucore_memory_resource_t *resource,
                                                       uint64_t min_bytes_to_keep);

/* Whether the resource owns its pool (1: a pool this library created or
 * imported, destroyed with the last reference; 0: a device's current pool,
 * which the library never destroys, or a resource without a pool).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_memory_resource_owns_pool(const cucore_memory_resource_t *resource, int *owns_pool);

/* Grants `peer` access to the memory of the pool (device, pinned) or virtual
 * resource (cuMemPoolSetAccess / cuMemSetAccess of every mapping made from now
 * on and of the live ones): NONE revokes, READ_WRITE grants (READ is accepted for
 * virtual resources only). Access to the resource's own device cannot be
 * revoked. Errors: INVALID_HANDLE, INVALID_ARGUMENT (unknown access, the owning
 * device revoked), NOT_SUPPORTED (another kind of resource; the devices cannot
 * access each other's memory: cuDeviceCanAccessPeer), CUDA. */
CUCORE_API cucore_status_t cucore_memory_resource_set_peer_access(cucore_memory_resource_t *resource,
                                                                  cucore_device_t *peer, cucore_access_t access);

/* The access `peer` has to the resource's memory (a pool: cuMemPoolGetAccess;
 * a virtual resource: what it grants). Errors: INVALID_HANDLE, INVALID_ARGUMENT
 * (NULL), NOT_SUPPORTED (another kind of resource), CUDA. */
CUCORE_API cucore_status_t cucore_memory_resource_peer_access(const cucore_memory_resource_t *resource,
                                                              cucore_device_t *peer, cucore_access_t *access);

CUCORE_EXTERN_C_END

#endif /* CUCORE_MEMORY_POOL_H */
