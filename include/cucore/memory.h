/* libcucore: memory resources and buffers.
 *
 * A memory resource allocates buffers; a buffer is a range of memory with a
 * size, an address and the resource it came from. A buffer holds its resource,
 * its deallocation stream and (for a view) its parent's memory, so release
 * order never matters. Stream-ordered resources free a buffer on its deallocation stream
 * (the allocation stream unless changed) when its last reference goes or when
 * it is closed. Addresses are integers (CUdeviceptr for device memory, a host
 * pointer cast to an integer for host memory), so no CUDA header is needed.
 */
#ifndef CUCORE_MEMORY_H
#define CUCORE_MEMORY_H

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
    CUCORE_MEMORY_RESOURCE_KIND_FORCE_INT32 = 0x7fffffff
} cucore_memory_resource_kind_t;

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

/* Access a device (or the host) is granted to memory. */
typedef enum cucore_access {
    CUCORE_ACCESS_NONE = 0,
    CUCORE_ACCESS_READ = 1,
    CUCORE_ACCESS_READ_WRITE = 3,
    CUCORE_ACCESS_FORCE_INT32 = 0x7fffffff
} cucore_access_t;

/* Options of a virtual memory resource. Zero in every field (with struct_size
 * set) is the default, exactly as the INIT macro. */
typedef struct cucore_virtual_memory_resource_options {
    uint32_t struct_size;
    uint32_t reserved0;          /* must be 0 */
    /* Where the physical memory lives: NONE (0, the default) or DEVICE: the resource's
     * device (id ignored); HOST_NUMA (id: node); HOST. */
    cucore_location_type_t location_type;
    int32_t location_id;
    /* 0 (default): round sizes to the driver's recommended granularity; 1: to its minimum. */
    uint32_t minimum_granularity;
    /* 1: physical memory exportable as a POSIX file descriptor; 0: not (default). */
    uint32_t posix_fd_shareable;
    /* Address space reserved per buffer, in bytes (rounded up to the granularity); a
     * buffer grows in place up to it. 0: just the buffer's size. */
    uint64_t reserve_size;
    /* Access granted to the resource's device: NONE (0, the default) or READ_WRITE:
     * read-write (its own device cannot have no access); READ: read-only. Other devices
     * get none unless cucore_memory_resource_set_peer_access grants it. */
    cucore_access_t self_access;
    uint32_t reserved1;          /* must be 0 */
} cucore_virtual_memory_resource_options_t;

#define CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT \
    {(uint32_t)sizeof(cucore_virtual_memory_resource_options_t), 0, CUCORE_LOCATION_NONE, 0, 0, 0, 0, \
     CUCORE_ACCESS_NONE, 0}

/* A user-defined memory resource: the library calls `allocate` and `deallocate`
 * (from any thread; they must be thread-safe) and `destroy` once, when the
 * resource's last reference goes (after every buffer from it was deallocated).
 * The `stream` they get is borrowed (valid for the call only) and may be NULL
 * when the user allocated without a stream. */
typedef struct cucore_memory_resource_callbacks {
    uint32_t struct_size;
    uint32_t reserved0;          /* must be 0 */
    /* Writes the address of `size` new bytes to *address and returns CUCORE_SUCCESS,
     * or returns an error status (OUT_OF_MEMORY, ...) that the allocating call returns.
     * Never called with size 0. Required. */
    cucore_status_t (*allocate)(void *user_data, uint64_t size, cucore_stream_t *stream, uint64_t *address);
    /* Frees what `allocate` gave and returns CUCORE_SUCCESS, or an error status. The
     * library never retries: an error is counted and passed to the release error handler
     * (cucore_release_error_count, cucore_set_release_error_handler in common.h) with a
     * message naming this callback, since the release that freed the buffer cannot
     * return it. Required. */
    cucore_status_t (*deallocate)(void *user_data, uint64_t address, uint64_t size, cucore_stream_t *stream);
    /* Called once when the resource goes; may be NULL. */
    void (*destroy)(void *user_data);
    void *user_data;
    /* What the memory is: the device ordinal (-1: host memory) and its accessibility (0/1). */
    int32_t device_id;
    uint32_t device_accessible;
    uint32_t host_accessible;
    uint32_t managed;
} cucore_memory_resource_callbacks_t;

#define CUCORE_MEMORY_RESOURCE_CALLBACKS_INIT \
    {(uint32_t)sizeof(cucore_memory_resource_callbacks_t), 0, NULL, NULL, NULL, NULL, 0, 0, 0, 0}

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

/* One side of a strided (2D/3D) copy: `buffer` (then `host` must be NULL) or host
 * memory at `host` (then `buffer` must be NULL), laid out as rows of `pitch`
 * bytes and slices of `height` rows starting at byte `offset`; the copy starts
 * at byte x, row y, slice z of that layout. */
typedef struct cucore_memory_region {
    cucore_buffer_t *buffer;
    void *host;
    uint64_t offset;
    uint64_t pitch;   /* bytes per row; must be >= x + width */
    uint64_t height;  /* rows per slice; must be >= y + rows (3D copies) */
    uint64_t x;       /* bytes */
    uint64_t y;       /* rows */
    uint64_t z;       /* slices */
} cucore_memory_region_t;

/* A strided copy of `depth` slices of `rows` rows of `width` bytes. */
typedef struct cucore_copy_3d {
    uint32_t struct_size;
    uint32_t reserved0;      /* must be 0 */
    cucore_memory_region_t src;
    cucore_memory_region_t dst;
    uint64_t width;          /* bytes per row copied */
    uint64_t rows;           /* rows per slice copied (>= 1) */
    uint64_t depth;          /* slices copied (>= 1; 1 for a 2D copy) */
} cucore_copy_3d_t;

#define CUCORE_MEMORY_REGION_INIT {NULL, NULL, 0, 0, 0, 0, 0, 0}
#define CUCORE_COPY_3D_INIT \
    {(uint32_t)sizeof(cucore_copy_3d_t), 0, CUCORE_MEMORY_REGION_INIT, CUCORE_MEMORY_REGION_INIT, 0, 1, 1}

#define CUCORE_DEVICE_MEMORY_RESOURCE_OPTIONS_INIT \
    {(uint32_t)sizeof(cucore_device_memory_resource_options_t), 0, 0, 0, 0, 0}

CUCORE_EXTERN_C_BEGIN

/* ---- Memory resources ------------------------------------------------------ */

/* The memory resource of `device`'s current memory pool (cuDeviceGetMemPool),
 * which is not owned: releasing the resource never destroys that pool (+1
 * reference). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), NOT_SUPPORTED
 * (the device has no memory pools), CUDA. */
CUCORE_API cucore_status_t cucore_device_memory_resource_get_default(cucore_device_t *device,
                                                                     cucore_memory_resource_t **resource);

/* A new device memory pool on `device` (cuMemPoolCreate; destroyed when the
 * resource and every buffer from it are released) (+1 reference).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out, bad options), NOT_SUPPORTED
 * (no memory pools), OUT_OF_MEMORY, CUDA. */
CUCORE_API cucore_status_t cucore_device_memory_resource_create(
    cucore_device_t *device, const cucore_device_memory_resource_options_t *options,
    cucore_memory_resource_t **resource);

/* A resource of page-locked host memory (cuMemAllocHost) made in `device`'s
 * primary context; allocation and release are synchronous (+1 reference).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), CUDA. */
CUCORE_API cucore_status_t cucore_legacy_pinned_memory_resource_create(cucore_device_t *device,
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

/* A virtual-memory resource on `device` (+1 reference): each buffer is
 * physical memory (cuMemCreate) mapped into an address range reserved for it,
 * which it can grow into (cucore_buffer_grow). Allocation and release are
 * synchronous (the stream argument may be NULL and is not used). Sizes round up
 * to the allocation granularity. Options NULL: defaults.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out, bad options),
 * NOT_SUPPORTED (no virtual memory management on the device), CUDA. */
CUCORE_API cucore_status_t cucore_virtual_memory_resource_create(
    cucore_device_t *device, const cucore_virtual_memory_resource_options_t *options,
    cucore_memory_resource_t **resource);

/* A resource whose memory comes from the user's callbacks (+1 reference; the
 * callbacks struct is copied; `destroy` runs when the last reference goes, and
 * never if this call fails). Errors: INVALID_ARGUMENT (NULL, missing allocate
 * or deallocate, device_id below -1). */
CUCORE_API cucore_status_t cucore_user_memory_resource_create(const cucore_memory_resource_callbacks_t *callbacks,
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

/* ---- Buffers ------------------------------------------------------------------ */

/* Wraps foreign memory at `address` of `size` bytes without owning it (+1
 * reference). `device` names the device whose memory it is, or NULL for host
 * memory. When the last reference goes, `on_release(user_data)` is called if
 * given (never when this call fails). Errors: INVALID_ARGUMENT (NULL out, address
 * 0 with a non-zero size), INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_buffer_from_handle(uint64_t address, uint64_t size, cucore_device_t *device,
                                                     cucore_release_fn on_release, void *user_data,
                                                     cucore_buffer_t **buffer);

/* Adds a reference. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_buffer_retain(cucore_buffer_t *buffer);

/* Drops a reference; NULL is a no-op. The last one frees the memory (stream-
 * ordered on the deallocation stream for pools) unless it was closed. Failures
 * are reported as release errors. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_buffer_release(cucore_buffer_t *buffer);

/* Frees the memory now, ordered on `stream` (NULL: the deallocation stream);
 * the handle stays valid but the buffer is closed: its size and address read 0
 * and using it is INVALID_STATE. Closing twice is a no-op. Views of the buffer
 * keep its memory until they go. A failure to free (the driver's, or a user
 * resource's deallocate callback) is reported as a release error, as by
 * cucore_buffer_release, since the buffer is closed either way.
 * Errors: INVALID_HANDLE, CUDA. */
CUCORE_API cucore_status_t cucore_buffer_close(cucore_buffer_t *buffer, cucore_stream_t *stream);

/* Makes `stream` the stream the memory is freed on (the buffer holds it).
 * Errors: INVALID_HANDLE, INVALID_STATE (closed). */
CUCORE_API cucore_status_t cucore_buffer_set_deallocation_stream(cucore_buffer_t *buffer,
                                                                 cucore_stream_t *stream);

/* The size in bytes (0 when closed). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_buffer_size(const cucore_buffer_t *buffer, uint64_t *size);

/* The address (CUdeviceptr or host pointer as an integer; 0 when closed).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_buffer_address(const cucore_buffer_t *buffer, uint64_t *address);

/* The device ordinal of the memory, or -1 for host memory.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_buffer_device_id(const cucore_buffer_t *buffer, int *device_id);

/* The resource the buffer came from (+1 reference; for a view, its parent's), or
 * NULL for memory of no resource: foreign memory (cucore_buffer_from_handle,
 * DLPack imports) and mapped graphics buffers (cucore_graphics_resource_map),
 * which their release gives back to their owner or unmaps. A buffer imported
 * from another process gives its imported pool (kind IMPORTED).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_buffer_memory_resource(const cucore_buffer_t *buffer,
                                                         cucore_memory_resource_t **resource);

/* Who can reach the buffer's memory: the device (1/0), the host (1/0), and
 * whether it is managed memory (1/0). Any out may be NULL.
 * Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_buffer_accessibility(const cucore_buffer_t *buffer, int *device_accessible,
                                                       int *host_accessible, int *managed);

/* The stream the memory will be freed (or, for a mapped graphics buffer or an
 * imported one, unmapped) on (+1 reference), or NULL for synchronous and foreign
 * memory and closed buffers.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_buffer_deallocation_stream(const cucore_buffer_t *buffer,
                                                             cucore_stream_t **stream);

/* Grows a buffer of a virtual memory resource to `new_size` bytes keeping its
 * contents: new physical memory of the whole size is filled with a copy of the
 * old and takes the old one's place at the same address while the reservation
 * has room; past it the buffer moves to a new address range. (A buffer stays
 * one physical allocation: on an H100 with driver 580, asynchronous copies over
 * a buffer grown by mapping more allocations behind it failed with
 * CUDA_ERROR_INVALID_VALUE.) Shrinking is not supported; a new_size not above the size is a
 * no-op. Not while views or DLPack exports of the buffer exist, nor while work
 * on it may be pending or run concurrently (synchronize first).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (not a virtual-memory buffer),
 * INVALID_STATE (closed, has views), OUT_OF_MEMORY, CUDA. */
CUCORE_API cucore_status_t cucore_buffer_grow(cucore_buffer_t *buffer, uint64_t new_size);

/* A buffer of `size` bytes at `offset` into `buffer`, sharing its memory and
 * keeping that memory alive (not the parent handle) (+1 reference; the memory
 * is freed when the parent and all its views are released or closed).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, range outside the buffer),
 * INVALID_STATE (closed). */
CUCORE_API cucore_status_t cucore_buffer_view(cucore_buffer_t *buffer, uint64_t offset, uint64_t size,
                                              cucore_buffer_t **view);

/* Copies all of `src` into `dst` (equal sizes) ordered on `stream`
 * (cuMemcpyAsync; between the memory of two devices cuMemcpyPeerAsync, which
 * needs no peer access); overlapping ranges (views of one buffer) are undefined. Errors: INVALID_HANDLE, INVALID_ARGUMENT (sizes differ),
 * INVALID_STATE (closed), CUDA. */
CUCORE_API cucore_status_t cucore_buffer_copy(cucore_buffer_t *dst, cucore_buffer_t *src,
                                              cucore_stream_t *stream);

/* Copies `size` bytes from host memory `src` to `buffer` at `offset`, ordered
 * on `stream` (cuMemcpyAsync). From pageable memory the driver has read `src`
 * when the call returns; page-locked memory (legacy pinned buffers, registered
 * memory) is read when the stream reaches the copy, so it must stay valid and
 * unchanged until then (synchronize).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL src with size > 0, range outside
 * the buffer), INVALID_STATE (closed), CUDA. */
CUCORE_API cucore_status_t cucore_buffer_copy_from_host(cucore_buffer_t *buffer, uint64_t offset,
                                                        const void *src, uint64_t size, cucore_stream_t *stream);

/* Copies `size` bytes of `buffer` at `offset` to host memory `dst`, ordered on
 * `stream`. Into pageable memory the copy has completed when the call returns;
 * into page-locked memory, synchronize before reading `dst`.
 * Errors: as copy_from_host. */
CUCORE_API cucore_status_t cucore_buffer_copy_to_host(cucore_buffer_t *buffer, uint64_t offset, void *dst,
                                                      uint64_t size, cucore_stream_t *stream);

/* Fills the buffer with the `value_size`-byte pattern `value` (1, 2 or 4 bytes;
 * the buffer's size must be a multiple of it), ordered on `stream`.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (value_size, value too wide for it,
 * size not a multiple of value_size, address not aligned to it: e.g. a view at
 * an odd offset), INVALID_STATE (closed), CUDA. */
CUCORE_API cucore_status_t cucore_buffer_fill(cucore_buffer_t *buffer, uint32_t value, uint32_t value_size,
                                              cucore_stream_t *stream);

/* A 2D/3D strided copy (cuMemcpy3DAsync) ordered on `stream`; each side is a
 * buffer (the region is checked against its size) or host memory (not
 * checkable: the caller vouches for it). Pageable host memory behaves as in
 * cucore_buffer_copy_from_host.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, both or neither of buffer and
 * host on a side, x + width above pitch, y + rows above height for depth > 1,
 * a region outside its buffer, arithmetic overflow), INVALID_STATE (closed), CUDA. */
CUCORE_API cucore_status_t cucore_copy_3d(const cucore_copy_3d_t *copy, cucore_stream_t *stream);

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

#endif /* CUCORE_MEMORY_H */
