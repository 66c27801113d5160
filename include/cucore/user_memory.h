/* libcucore: user-defined memory resources, whose allocate and deallocate are the
 * user's callbacks.
 */
#ifndef CUCORE_USER_MEMORY_H
#define CUCORE_USER_MEMORY_H

#include "memory_resource.h"

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

/* No callbacks yet (allocate and deallocate must be set) and device_id -1: host memory, not accessible from
 * the device or the host until said. Also what fields past an older caller's struct_size are read as. */
#define CUCORE_MEMORY_RESOURCE_CALLBACKS_INIT \
    {(uint32_t)sizeof(cucore_memory_resource_callbacks_t), 0, NULL, NULL, NULL, NULL, -1, 0, 0, 0}

CUCORE_EXTERN_C_BEGIN

/* A resource whose memory comes from the user's callbacks (+1 reference; the
 * callbacks struct is copied; `destroy` runs when the last reference goes, and
 * never if this call fails). Errors: INVALID_ARGUMENT (NULL, missing allocate
 * or deallocate, device_id below -1). */
CUCORE_API cucore_status_t cucore_user_memory_resource_create(const cucore_memory_resource_callbacks_t *callbacks,
                                                              cucore_memory_resource_t **resource);

CUCORE_EXTERN_C_END

#endif /* CUCORE_USER_MEMORY_H */
