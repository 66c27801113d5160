/* libcucore: sharing memory and events between processes (Linux).
 *
 * A process exports an IPC-enabled pool (device or pinned, created with
 * ipc_enabled = 1) as a POSIX file descriptor plus the pool's identifier;
 * another process (having received the fd, e.g. over a Unix socket with
 * SCM_RIGHTS) imports it as a resource of kind IMPORTED. Buffers of the pool
 * are then exported as fixed-size byte descriptors and imported into the
 * imported resource, giving the same memory at a local address. The exporting
 * process must not free a buffer before every importer released its import:
 * order the processes with IPC events. Descriptors carry a checksum and the
 * pool's identifier, so truncated, corrupted or foreign descriptors are
 * refused with INVALID_ARGUMENT, never passed to the driver.
 */
#ifndef CUCORE_IPC_H
#define CUCORE_IPC_H

#include "buffer.h"
#include "memory_pool.h"

/* The identifier of an exported pool: random, made when the pool is exported first. */
#define CUCORE_IPC_POOL_ID_SIZE 16
/* The size of a buffer descriptor in bytes. */
#define CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE 128
/* The size of an event descriptor in bytes. */
#define CUCORE_IPC_EVENT_DESCRIPTOR_SIZE 72

/* An exported pool: a file descriptor (owned by whoever holds this struct:
 * close it when done) and the pool's identifier. */
typedef struct cucore_ipc_pool_handle {
    int32_t fd;
    /* The exported pool's kind: CUCORE_MEMORY_RESOURCE_DEVICE or _PINNED (the
     * imported resource's memory is device or page-locked host memory). */
    uint32_t kind;
    uint8_t pool_id[CUCORE_IPC_POOL_ID_SIZE];
} cucore_ipc_pool_handle_t;

CUCORE_EXTERN_C_BEGIN

/* Exports an IPC-enabled pool resource (cuMemPoolExportToShareableHandle):
 * `handle->fd` is a new file descriptor the caller owns and must close (-1
 * when the call fails). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), NOT_SUPPORTED (not a pool
 * created with ipc_enabled, or not Linux), CUDA. */
CUCORE_API cucore_status_t cucore_ipc_export_memory_resource(cucore_memory_resource_t *resource,
                                                             cucore_ipc_pool_handle_t *handle);

/* Imports a pool another process exported (+1 reference to a resource of kind
 * IMPORTED on `device`, or on the host for a pinned pool when `device` is the
 * device whose streams will use it). The fd is not consumed: the caller still
 * closes it. Importing the same pool twice gives the same resource again.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, fd not an open file
 * descriptor, kind not DEVICE or PINNED, the pool already imported on another
 * device), NOT_SUPPORTED (not Linux), CUDA (not a pool's fd). */
CUCORE_API cucore_status_t cucore_ipc_import_memory_resource(cucore_device_t *device,
                                                             const cucore_ipc_pool_handle_t *handle,
                                                             cucore_memory_resource_t **resource);

/* The identifier of an IPC-enabled or imported pool. Errors: INVALID_HANDLE,
 * INVALID_ARGUMENT (NULL), NOT_SUPPORTED (not such a pool). */
CUCORE_API cucore_status_t cucore_ipc_memory_resource_pool_id(const cucore_memory_resource_t *resource,
                                                              uint8_t pool_id[CUCORE_IPC_POOL_ID_SIZE]);

/* Writes the descriptor of a whole buffer of an IPC-enabled pool
 * (cuMemPoolExportPointer) to `descriptor` (CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE
 * bytes). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, a view, a zero-size
 * buffer, a buffer not from an IPC-enabled pool), INVALID_STATE (closed), CUDA. */
CUCORE_API cucore_status_t cucore_ipc_export_buffer(cucore_buffer_t *buffer,
                                                    uint8_t descriptor[CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE]);

/* Imports a buffer from its descriptor into the imported pool `resource`
 * (cuMemPoolImportPointer) (+1 reference). `descriptor_size` is the number of
 * bytes at `descriptor`. The buffer's memory resource is `resource`, which it
 * holds; its memory is unmapped by the buffer's release (its last holder), with
 * cuMemFreeAsync on `stream` (its deallocation stream unless changed).
 * Importing a buffer already imported and still alive gives a buffer sharing
 * that import (the driver maps each once; the first
 * import's deallocation stream stays). Do not use the memory before the
 * exporting process's writes are ordered before it (an IPC event).
 * The descriptor's checksum only catches damage, not forgery: the buffer's size
 * it gives is checked against the range the driver mapped at the imported
 * pointer (cuMemGetAddressRange), and a descriptor that claims more is refused
 * (INVALID_ARGUMENT, the import undone).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, wrong size, corrupted
 * descriptor, a size larger than the driver's imported range, descriptor of
 * another pool, `resource` not an imported pool, `stream` of another device
 * than an imported device pool's), CUDA. */
CUCORE_API cucore_status_t cucore_ipc_import_buffer(cucore_memory_resource_t *resource, const uint8_t *descriptor,
                                                    uint64_t descriptor_size, cucore_stream_t *stream,
                                                    cucore_buffer_t **buffer);

/* Writes the descriptor of an event created with CUCORE_EVENT_INTERPROCESS
 * (cuIpcGetEventHandle). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, an
 * event without the interprocess flag), CUDA. */
CUCORE_API cucore_status_t cucore_ipc_export_event(cucore_event_t *event,
                                                   uint8_t descriptor[CUCORE_IPC_EVENT_DESCRIPTOR_SIZE]);

/* Opens an event another process exported (cuIpcOpenEventHandle) in
 * `device`'s primary context (+1 reference); record it, wait on it and
 * synchronize it as any event (no timing).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, wrong size, corrupted
 * descriptor), CUDA. */
CUCORE_API cucore_status_t cucore_ipc_import_event(cucore_device_t *device, const uint8_t *descriptor,
                                                   uint64_t descriptor_size, cucore_event_t **event);

CUCORE_EXTERN_C_END

#endif /* CUCORE_IPC_H */
