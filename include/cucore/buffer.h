/* libcucore: buffers.
 *
 * A buffer is a range of memory with a size, an address and the resource it came
 * from (cucore/memory_resource.h), or foreign memory it wraps. A buffer holds its
 * resource, its deallocation stream and (for a view) its parent's memory, so release
 * order never matters. Addresses are integers (CUdeviceptr for device memory, a host
 * pointer cast to an integer for host memory), so no CUDA header is needed. Managed
 * buffers' advice and prefetches are in managed_memory.h, strided copies in copy_3d.h.
 */
#ifndef CUCORE_BUFFER_H
#define CUCORE_BUFFER_H

#include "common.h"

CUCORE_EXTERN_C_BEGIN

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

/* cucore_buffer_close(buffer, stream), then cucore_buffer_release(buffer), in one call: for bindings whose
 * close() does both (one call instead of two on the hot path of every allocate + free). When the close fails
 * the caller keeps its reference. Errors: INVALID_HANDLE, CUDA. */
CUCORE_API cucore_status_t cucore_buffer_dispose(cucore_buffer_t *buffer, cucore_stream_t *stream);

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

CUCORE_EXTERN_C_END

#endif /* CUCORE_BUFFER_H */
