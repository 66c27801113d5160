/* libcucore: virtual memory management (cuMemCreate + cuMemAddressReserve + cuMemMap +
 * cuMemSetAccess): a resource whose buffers can grow (cucore_buffer_grow, buffer.h).
 */
#ifndef CUCORE_VIRTUAL_MEMORY_H
#define CUCORE_VIRTUAL_MEMORY_H

#include "memory_resource.h"

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
    /* 1: memory usable by GPUDirect RDMA where the device supports it (a hint). 0: no (default). */
    uint32_t gpu_direct_rdma;
    /* 1: physical memory exportable as a fabric handle (CU_MEM_HANDLE_TYPE_FABRIC), as well as a
     * POSIX file descriptor if posix_fd_shareable; 0: not (default). */
    uint32_t fabric_shareable;
    /* Where each buffer's address range should start, if that range is free (a hint; 0: the
     * driver chooses, the default). */
    uint64_t address_hint;
    /* Alignment of each buffer's address range: a power of two (0: the allocation granularity). */
    uint64_t address_alignment;
} cucore_virtual_memory_resource_options_t;

#define CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT \
    {(uint32_t)sizeof(cucore_virtual_memory_resource_options_t), 0, CUCORE_LOCATION_NONE, 0, 0, 0, 0, \
     CUCORE_ACCESS_NONE, 0, 0, 0, 0, 0}

CUCORE_EXTERN_C_BEGIN

/* A virtual-memory resource on `device` (+1 reference): each buffer is
 * physical memory (cuMemCreate) mapped into an address range reserved for it,
 * which it can grow into (cucore_buffer_grow). Allocation and release are
 * synchronous (the stream argument may be NULL and is not used). Sizes round up
 * to the allocation granularity. Options NULL: defaults.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out, bad options, an
 * address_alignment that is not a power of two), NOT_SUPPORTED (no virtual
 * memory management on the device), CUDA. */
CUCORE_API cucore_status_t cucore_virtual_memory_resource_create(
    cucore_device_t *device, const cucore_virtual_memory_resource_options_t *options,
    cucore_memory_resource_t **resource);

CUCORE_EXTERN_C_END

#endif /* CUCORE_VIRTUAL_MEMORY_H */
