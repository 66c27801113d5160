// libcucore C++ façade: virtual memory management (over cucore/virtual_memory.h).
//
//   cucore::VirtualMemoryResourceOptions options;
//   options.reserve_size = 1 << 30;                  // room to grow in place
//   cucore::MemoryResource vmm = cucore::MemoryResource::virtual_memory(dev, options);
//   cucore::Buffer buf = vmm.allocate(1 << 20);      // synchronous
//   buf.grow(64 << 20);                              // keeps its contents
//
// Virtual memory resources [VirtualMemoryResource] with their options. Their
// buffers grow with Buffer::grow (buffer.hpp); other devices' access is
// granted with MemoryResource::set_peer_access (memory_pool.hpp).
#ifndef CUCORE_VIRTUAL_MEMORY_HPP
#define CUCORE_VIRTUAL_MEMORY_HPP

#include <cstdint>

#include "common.hpp"
#include "device.hpp"
#include "memory_resource.hpp"
#include "virtual_memory.h"

namespace cucore {

namespace detail {
// The C defaults, so the options struct below defaults to exactly the *_INIT
// macro (one source of truth).
inline constexpr cucore_virtual_memory_resource_options_t kVirtualMemoryResourceDefaults =
    CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT;
} // namespace detail

// The options of a virtual-memory resource (MemoryResource::virtual_memory;
// cuda.core: VirtualMemoryResourceOptions).
struct VirtualMemoryResourceOptions {
    // Where the physical memory lives: NONE (the default) or DEVICE: the
    // resource's device; HOST_NUMA (location_id: the node); HOST.
    cucore_location_type_t location_type = detail::kVirtualMemoryResourceDefaults.location_type;
    int location_id = detail::kVirtualMemoryResourceDefaults.location_id;
    // Round sizes to the driver's minimum granularity (true) or its recommended one (false, the default).
    bool minimum_granularity = detail::kVirtualMemoryResourceDefaults.minimum_granularity != 0;
    // Physical memory exportable as a POSIX file descriptor.
    bool posix_fd_shareable = detail::kVirtualMemoryResourceDefaults.posix_fd_shareable != 0;
    // Address space reserved per buffer (a buffer grows in place up to it);
    // 0: just the buffer's size.
    std::uint64_t reserve_size = detail::kVirtualMemoryResourceDefaults.reserve_size;
    // Access granted to the resource's own device: NONE (the default) or
    // READ_WRITE: read-write; READ: read-only.
    cucore_access_t self_access = detail::kVirtualMemoryResourceDefaults.self_access;
    // Memory usable by GPUDirect RDMA (a hint).
    bool gpu_direct_rdma = detail::kVirtualMemoryResourceDefaults.gpu_direct_rdma != 0;
    // Physical memory exportable as a fabric handle.
    bool fabric_shareable = detail::kVirtualMemoryResourceDefaults.fabric_shareable != 0;
    // Where each buffer's address range should start if free (0: the driver chooses).
    std::uint64_t address_hint = detail::kVirtualMemoryResourceDefaults.address_hint;
    // Alignment of each buffer's address range, a power of two (0: the granularity).
    std::uint64_t address_alignment = detail::kVirtualMemoryResourceDefaults.address_alignment;

    cucore_virtual_memory_resource_options_t to_c() const noexcept {
        cucore_virtual_memory_resource_options_t o = detail::kVirtualMemoryResourceDefaults;
        o.location_type = location_type;
        o.location_id = location_id;
        o.minimum_granularity = minimum_granularity ? 1u : 0u;
        o.posix_fd_shareable = posix_fd_shareable ? 1u : 0u;
        o.reserve_size = reserve_size;
        o.self_access = self_access;
        o.gpu_direct_rdma = gpu_direct_rdma ? 1u : 0u;
        o.fabric_shareable = fabric_shareable ? 1u : 0u;
        o.address_hint = address_hint;
        o.address_alignment = address_alignment;
        return o;
    }
};

// Virtual memory on `device` (cuMemCreate + cuMemAddressReserve + cuMemMap):
// synchronous (allocate without a stream), sizes rounded up to the
// granularity, buffers can grow (Buffer::grow). Throws Error:
// INVALID_HANDLE, INVALID_ARGUMENT, NOT_SUPPORTED (no VMM), CUDA.
inline MemoryResource MemoryResource::virtual_memory(const Device &device,
                                                     const VirtualMemoryResourceOptions &options) {
    const cucore_virtual_memory_resource_options_t o = options.to_c();
    cucore_memory_resource_t *raw = nullptr;
    detail::check(cucore_virtual_memory_resource_create(device.get(), &o, &raw));
    return adopt(raw);
}

inline MemoryResource MemoryResource::virtual_memory(const Device &device) {
    return virtual_memory(device, VirtualMemoryResourceOptions{});
}

} // namespace cucore

#endif // CUCORE_VIRTUAL_MEMORY_HPP
