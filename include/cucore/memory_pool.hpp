// libcucore C++ façade: stream-ordered memory pools (over cucore/memory_pool.h).
//
//   cucore::DeviceMemoryResourceOptions options;
//   options.release_threshold = 64 << 20;            // keep 64 MiB reserved
//   cucore::MemoryResource pool = cucore::MemoryResource::device_pool(dev, options);
//   cucore::Buffer buf = pool.allocate(1 << 20, s);  // freed on `s` when it goes
//   pool.trim();
//
// A device's current pool (MemoryResource::device_default), new device pools
// [DeviceMemoryResource] and pools of page-locked host memory
// [PinnedMemoryResource], with their options; and the members of
// MemoryResource (memory_resource.hpp) that only pools have: attributes and
// trimming, and peer access, which virtual memory resources grant too. A
// buffer from a stream-ordered pool is freed on its deallocation stream (the
// allocation stream unless changed) when its last reference goes, or at once
// with close().
#ifndef CUCORE_MEMORY_POOL_HPP
#define CUCORE_MEMORY_POOL_HPP

#include <cstdint>
#include <optional>

#include "common.hpp"
#include "device.hpp"
#include "memory_pool.h"
#include "memory_resource.hpp"

namespace cucore {

namespace detail {
// The C defaults, so the options structs below default to exactly the
// *_INIT macros (one source of truth).
inline constexpr cucore_device_memory_resource_options_t kDeviceMemoryResourceDefaults =
    CUCORE_DEVICE_MEMORY_RESOURCE_OPTIONS_INIT;
inline constexpr cucore_pinned_memory_resource_options_t kPinnedMemoryResourceDefaults =
    CUCORE_PINNED_MEMORY_RESOURCE_OPTIONS_INIT;
} // namespace detail

// The options of a new device memory pool (MemoryResource::device_pool;
// cuda.core: DeviceMemoryResourceOptions). Zero means the driver's default.
struct DeviceMemoryResourceOptions {
    // The most the pool may reserve, in bytes; 0: no limit.
    std::uint64_t max_size = detail::kDeviceMemoryResourceDefaults.max_size;
    // Bytes the pool keeps reserved after a synchronization instead of
    // returning them to the system; 0: return everything.
    std::uint64_t release_threshold = detail::kDeviceMemoryResourceDefaults.release_threshold;
    // Shareable with other processes (Linux; see cucore/ipc.h).
    bool ipc_enabled = detail::kDeviceMemoryResourceDefaults.ipc_enabled != 0;

    // The C options these stand for.
    cucore_device_memory_resource_options_t to_c() const noexcept {
        cucore_device_memory_resource_options_t o = detail::kDeviceMemoryResourceDefaults;
        o.max_size = max_size;
        o.release_threshold = release_threshold;
        o.ipc_enabled = ipc_enabled ? 1u : 0u;
        return o;
    }
};

// The options of a pool of page-locked host memory (MemoryResource::
// pinned_pool; cuda.core: PinnedMemoryResourceOptions).
struct PinnedMemoryResourceOptions {
    // Shareable with other processes (needs a NUMA node: without numa_id, node 0).
    bool ipc_enabled = detail::kPinnedMemoryResourceDefaults.ipc_enabled != 0;
    std::uint64_t max_size = detail::kPinnedMemoryResourceDefaults.max_size;                  // 0: no limit
    std::uint64_t release_threshold = detail::kPinnedMemoryResourceDefaults.release_threshold; // 0: driver default
    // The host NUMA node the memory comes from (>= 0); empty (the default): any host memory.
    std::optional<int> numa_id;

    cucore_pinned_memory_resource_options_t to_c() const noexcept {
        cucore_pinned_memory_resource_options_t o = detail::kPinnedMemoryResourceDefaults;
        o.ipc_enabled = ipc_enabled ? 1u : 0u;
        o.max_size = max_size;
        o.release_threshold = release_threshold;
        o.use_numa_id = numa_id.has_value() ? 1u : 0u;
        o.numa_id = numa_id.value_or(0);
        return o;
    }
};

// The resource of `device`'s current memory pool (cuDeviceGetMemPool), not
// owned: releasing it never destroys the pool. Throws Error: INVALID_HANDLE,
// NOT_SUPPORTED (no memory pools), CUDA.
inline MemoryResource MemoryResource::device_default(const Device &device) {
    cucore_memory_resource_t *raw = nullptr;
    detail::check(cucore_device_memory_resource_get_default(device.get(), &raw));
    return adopt(raw);
}

// The resource of the driver's current pool of pinned host memory
// (cuMemGetMemPool, CUDA 13), not owned, allocating on `device`'s streams
// (granted access). Throws Error: INVALID_HANDLE, NOT_SUPPORTED, CUDA.
inline MemoryResource MemoryResource::pinned_default(const Device &device) {
    cucore_memory_resource_t *raw = nullptr;
    detail::check(cucore_pinned_memory_resource_get_default(device.get(), &raw));
    return adopt(raw);
}

// A new memory pool on `device` (cuMemPoolCreate), destroyed when this
// resource and every buffer from it are gone. Throws Error: INVALID_HANDLE,
// INVALID_ARGUMENT, NOT_SUPPORTED, OUT_OF_MEMORY, CUDA.
inline MemoryResource MemoryResource::device_pool(const Device &device, const DeviceMemoryResourceOptions &options) {
    const cucore_device_memory_resource_options_t o = options.to_c();
    cucore_memory_resource_t *raw = nullptr;
    detail::check(cucore_device_memory_resource_create(device.get(), &o, &raw));
    return adopt(raw);
}

inline MemoryResource MemoryResource::device_pool(const Device &device) {
    return device_pool(device, DeviceMemoryResourceOptions{});
}

// A new stream-ordered pool of page-locked host memory; `device` is granted
// read-write access and its streams allocate (others: set_peer_access).
// device_id() is -1. Throws Error: INVALID_HANDLE, INVALID_ARGUMENT,
// NOT_SUPPORTED (no host pools in this driver), CUDA.
inline MemoryResource MemoryResource::pinned_pool(const Device &device, const PinnedMemoryResourceOptions &options) {
    const cucore_pinned_memory_resource_options_t o = options.to_c();
    cucore_memory_resource_t *raw = nullptr;
    detail::check(cucore_pinned_memory_resource_create(device.get(), &o, &raw));
    return adopt(raw);
}

inline MemoryResource MemoryResource::pinned_pool(const Device &device) {
    return pinned_pool(device, PinnedMemoryResourceOptions{});
}

// Grants (READ_WRITE; READ for virtual memory) or revokes (NONE) `peer`'s
// access to the memory of a pool or virtual resource (cuda.core:
// peer_accessible_by). Throws Error: INVALID_HANDLE, INVALID_ARGUMENT
// (the owning device revoked), NOT_SUPPORTED (other kinds; devices that
// cannot access each other), CUDA.
inline void MemoryResource::set_peer_access(const Device &peer, cucore_access_t access) {
    detail::check(cucore_memory_resource_set_peer_access(handle_, peer.get(), access));
}

// The access `peer` has. Throws Error: INVALID_HANDLE, NOT_SUPPORTED, CUDA.
inline cucore_access_t MemoryResource::peer_access(const Device &peer) const {
    cucore_access_t access = CUCORE_ACCESS_NONE;
    detail::check(cucore_memory_resource_peer_access(handle_, peer.get(), &access));
    return access;
}

// A pool attribute (flags read 0 or 1). Throws Error: INVALID_HANDLE,
// INVALID_ARGUMENT, NOT_SUPPORTED (no pool), CUDA.
inline std::uint64_t MemoryResource::pool_attribute(cucore_pool_attribute_t attribute) const {
    std::uint64_t value = 0;
    detail::check(cucore_memory_resource_pool_attribute(handle_, attribute, &value));
    return value;
}

// Sets a settable pool attribute (high-water marks: 0 only). Throws Error:
// INVALID_HANDLE, INVALID_ARGUMENT, NOT_SUPPORTED (no pool), CUDA.
inline void MemoryResource::set_pool_attribute(cucore_pool_attribute_t attribute, std::uint64_t value) {
    detail::check(cucore_memory_resource_set_pool_attribute(handle_, attribute, value));
}

// Returns unused reserved memory to the system, keeping `min_bytes_to_keep`
// (0 unless given). Throws Error: INVALID_HANDLE, NOT_SUPPORTED (no pool), CUDA.
inline void MemoryResource::trim(std::uint64_t min_bytes_to_keep) {
    detail::check(cucore_memory_resource_trim(handle_, min_bytes_to_keep));
}

// Whether the last reference destroys the resource's pool (false for a device's
// current pool and for resources without a pool). Throws Error: INVALID_HANDLE.
inline bool MemoryResource::owns_pool() const {
    int owns = 0;
    detail::check(cucore_memory_resource_owns_pool(handle_, &owns));
    return owns != 0;
}

} // namespace cucore

#endif // CUCORE_MEMORY_POOL_HPP
