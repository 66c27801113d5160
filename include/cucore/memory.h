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
} cucore_device_memory_resource_options_t;

#define CUCORE_DEVICE_MEMORY_RESOURCE_OPTIONS_INIT \
    {(uint32_t)sizeof(cucore_device_memory_resource_options_t), 0, 0, 0}

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

/* The device's default memory resource (+1 reference): the one set with
 * cucore_device_set_memory_resource, else a resource on the device's current
 * pool (as cucore_device_memory_resource_get_default).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), NOT_SUPPORTED (no pools and
 * none set), CUDA. */
CUCORE_API cucore_status_t cucore_device_memory_resource(cucore_device_t *device,
                                                         cucore_memory_resource_t **resource);

/* Makes `resource` (any kind; the device keeps a reference for the life of the
 * process or until replaced) the device's default memory resource, or NULL to
 * return to the device's current pool. Process-wide, seen by every language.
 * Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_device_set_memory_resource(cucore_device_t *device,
                                                             cucore_memory_resource_t *resource);

/* Allocates `size` bytes from the device's default memory resource, ordered on
 * `stream` (NULL only if that resource is synchronous) (+1 reference).
 * Errors: as cucore_device_memory_resource and cucore_memory_resource_allocate. */
CUCORE_API cucore_status_t cucore_device_allocate(cucore_device_t *device, uint64_t size, cucore_stream_t *stream,
                                                  cucore_buffer_t **buffer);

/* Adds a reference. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_memory_resource_retain(cucore_memory_resource_t *resource);

/* Drops a reference; NULL is a no-op. A pool this library created is destroyed
 * with the last reference (buffers hold one). Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_memory_resource_release(cucore_memory_resource_t *resource);

/* Allocates `size` bytes (0 is valid: a buffer with address 0) ordered on
 * `stream` (+1 reference to the new buffer, whose deallocation stream is
 * `stream`). `stream` may be NULL only for synchronous resources (legacy pinned).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out, NULL stream for a pool,
 * stream of another device), OUT_OF_MEMORY, CUDA. */
CUCORE_API cucore_status_t cucore_memory_resource_allocate(cucore_memory_resource_t *resource, uint64_t size,
                                                           cucore_stream_t *stream, cucore_buffer_t **buffer);

/* The raw CUmemoryPool of a pool resource, or NULL for a resource without a
 * pool (legacy pinned). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
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
 * keep its memory until they go. Errors: INVALID_HANDLE, CUDA. */
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

/* The resource the buffer came from (+1 reference; for a view, its parent's),
 * or NULL for foreign memory. Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_buffer_memory_resource(const cucore_buffer_t *buffer,
                                                         cucore_memory_resource_t **resource);

/* A buffer of `size` bytes at `offset` into `buffer`, sharing its memory and
 * keeping that memory alive (not the parent handle) (+1 reference; the memory
 * is freed when the parent and all its views are released or closed).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, range outside the buffer),
 * INVALID_STATE (closed). */
CUCORE_API cucore_status_t cucore_buffer_view(cucore_buffer_t *buffer, uint64_t offset, uint64_t size,
                                              cucore_buffer_t **view);

/* Copies all of `src` into `dst` (equal sizes) ordered on `stream`
 * (cuMemcpyAsync); overlapping ranges (views of one buffer) are undefined. Errors: INVALID_HANDLE, INVALID_ARGUMENT (sizes differ),
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

CUCORE_EXTERN_C_END

#endif /* CUCORE_MEMORY_H */
