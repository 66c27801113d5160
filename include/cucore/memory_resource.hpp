// libcucore C++ façade: memory resources (over cucore/memory_resource.h).
//
//   cucore::Device dev(0);
//   cucore::MemoryResource pool = cucore::MemoryResource::device_pool(dev);  // memory_pool.hpp
//   cucore::Buffer buf = pool.allocate(1 << 20, stream);                     // buffer.hpp
//
// Like cuda.core: a MemoryResource allocates Buffers (buffer.hpp); a Buffer
// holds its resource, so release order never matters.
//
// The kinds of resource (cuda.core's names in brackets): a device's current
// pool and new device pools [DeviceMemoryResource] and pinned pools
// [PinnedMemoryResource] in memory_pool.hpp, managed memory
// [ManagedMemoryResource] in managed_memory.hpp, virtual memory
// [VirtualMemoryResource] in virtual_memory.hpp, user resources in
// user_memory.hpp, and page-locked host memory [LegacyPinnedMemoryResource]
// here; graph memory [GraphMemoryResource] is a MemoryResource of its own
// type, with the attributes of graph memory, in graph_memory.hpp. MemoryResource declares every kind's factory and operations; each is
// defined, with its options, in its kind's header, which includes this one
// (the headers include each other in one direction only; see device.hpp).
// Include the header of what you use, or cucore.hpp, which brings them all.
#ifndef CUCORE_MEMORY_RESOURCE_HPP
#define CUCORE_MEMORY_RESOURCE_HPP

#include <cstdint>
#include <functional>
#include <memory>

#include "common.hpp"
#include "device.hpp"
#include "memory_pool.h"     // cucore_pool_attribute_t (MemoryResource::pool_attribute)
#include "memory_resource.h"
#include "stream.hpp"
#include "user_memory.h"     // cucore_memory_resource_callbacks_t (MemoryResource::user)

namespace cucore {

class Buffer;
struct DeviceMemoryResourceOptions;
struct PinnedMemoryResourceOptions;
struct ManagedMemoryResourceOptions;
struct VirtualMemoryResourceOptions;
class UserMemoryResource;
struct UserMemoryTraits;

// Where memory lives or is wanted (cuda.core: Device, Host(numa_id),
// Host.numa_current()); the C cucore_location_t. Default: no location.
struct Location {
    cucore_location_type_t type = CUCORE_LOCATION_NONE;
    int id = 0; // a device ordinal or a NUMA node; 0 where the type has none

    static constexpr Location none() noexcept { return {}; }
    static constexpr Location device(int ordinal) noexcept { return {CUCORE_LOCATION_DEVICE, ordinal}; }
    // Throws Error: INVALID_HANDLE (an empty or released device).
    static Location device(const Device &device);
    static constexpr Location host() noexcept { return {CUCORE_LOCATION_HOST, 0}; }
    static constexpr Location host_numa(int node) noexcept { return {CUCORE_LOCATION_HOST_NUMA, node}; }
    static constexpr Location host_numa_current() noexcept { return {CUCORE_LOCATION_HOST_NUMA_CURRENT, 0}; }

    constexpr bool is_none() const noexcept { return type == CUCORE_LOCATION_NONE; }
    constexpr bool is_device() const noexcept { return type == CUCORE_LOCATION_DEVICE; }
    // Any kind of host memory (plain, a NUMA node, the current NUMA node).
    constexpr bool is_host() const noexcept {
        return type == CUCORE_LOCATION_HOST || type == CUCORE_LOCATION_HOST_NUMA ||
               type == CUCORE_LOCATION_HOST_NUMA_CURRENT;
    }

    constexpr cucore_location_t to_c() const noexcept { return {type, static_cast<std::int32_t>(id)}; }
    static constexpr Location from_c(cucore_location_t l) noexcept { return {l.type, static_cast<int>(l.id)}; }

    friend constexpr bool operator==(const Location &a, const Location &b) noexcept {
        return a.type == b.type && a.id == b.id;
    }
    friend constexpr bool operator!=(const Location &a, const Location &b) noexcept { return !(a == b); }
};

// A memory resource (cuda.core: DeviceMemoryResource, PinnedMemoryResource,
// ManagedMemoryResource, LegacyPinnedMemoryResource, VirtualMemoryResource, a
// user's MemoryResource subclass): a device's current memory pool, a new pool
// of device, pinned or managed memory, page-locked host memory, virtual memory,
// or the user's own allocator. A default-constructed MemoryResource is empty.
class MemoryResource : public Handle<MemoryResource, cucore_memory_resource_t> {
public:
    MemoryResource() noexcept = default;

    // ---- Making each kind ----
    // Each factory but legacy_pinned is defined and documented in its kind's
    // header. A factory without options takes the options' defaults (the C
    // *_INIT macros).

    // memory_pool.hpp: the device's current pool; new device and pinned pools.
    static MemoryResource device_default(const Device &device);
    static MemoryResource device_pool(const Device &device);
    static MemoryResource device_pool(const Device &device, const DeviceMemoryResourceOptions &options);
    static MemoryResource pinned_default(const Device &device);
    static MemoryResource managed_default(const Device &device);
    static MemoryResource pinned_pool(const Device &device);
    static MemoryResource pinned_pool(const Device &device, const PinnedMemoryResourceOptions &options);

    // managed_memory.hpp: managed memory, from cuMemAllocManaged or a managed pool.
    static MemoryResource managed(const Device &device);
    static MemoryResource managed(const Device &device, const ManagedMemoryResourceOptions &options);

    // virtual_memory.hpp: virtual memory whose buffers can grow.
    static MemoryResource virtual_memory(const Device &device);
    static MemoryResource virtual_memory(const Device &device, const VirtualMemoryResourceOptions &options);

    // user_memory.hpp: memory from the user's allocator (an object, two
    // callables, or the C callbacks).
    static MemoryResource user(std::shared_ptr<UserMemoryResource> impl, const UserMemoryTraits &traits);
    static MemoryResource user(std::function<std::uint64_t(std::uint64_t, const Stream &)> allocate,
                               std::function<void(std::uint64_t, std::uint64_t, const Stream &)> deallocate,
                               const UserMemoryTraits &traits);
    static MemoryResource user(const cucore_memory_resource_callbacks_t &callbacks);

    // Page-locked host memory (cuMemAllocHost/cuMemFreeHost) made in `device`'s
    // primary context; allocation and release are synchronous. Throws Error:
    // INVALID_HANDLE, CUDA.
    static MemoryResource legacy_pinned(const Device &device);

    // ---- Pools and virtual memory (memory_pool.hpp) ----
    // Peer access (pools and virtual resources), pool attributes and trimming
    // (pools); defined and documented in memory_pool.hpp.
    void set_peer_access(const Device &peer, cucore_access_t access);
    cucore_access_t peer_access(const Device &peer) const;
    std::uint64_t pool_attribute(cucore_pool_attribute_t attribute) const;
    void set_pool_attribute(cucore_pool_attribute_t attribute, std::uint64_t value);
    void trim(std::uint64_t min_bytes_to_keep = 0);
    bool owns_pool() const;

    // ---- Every kind ----

    // The raw CUmemoryPool of a pool resource, nullptr for a resource without
    // one (legacy pinned, managed without a pool, virtual, user). Throws Error:
    // INVALID_HANDLE.
    void *handle() const {
        void *pool = nullptr;
        detail::check(cucore_memory_resource_handle(handle_, &pool));
        return pool;
    }

    // What kind of memory the resource gives. Throws Error: INVALID_HANDLE.
    cucore_memory_resource_kind_t kind() const {
        cucore_memory_resource_kind_t k = CUCORE_MEMORY_RESOURCE_UNSET;
        detail::check(cucore_memory_resource_kind(handle_, &k));
        return k;
    }

    // The ordinal of the device whose memory it gives, or -1 for host memory.
    // Throws Error: INVALID_HANDLE.
    int device_id() const {
        int id = -1;
        detail::check(cucore_memory_resource_device_id(handle_, &id));
        return id;
    }

    // Whether the memory is accessible from the device / from the host.
    // Throw Error: INVALID_HANDLE.
    bool is_device_accessible() const {
        int device = 0, host = 0;
        detail::check(cucore_memory_resource_accessibility(handle_, &device, &host));
        return device != 0;
    }
    bool is_host_accessible() const {
        int device = 0, host = 0;
        detail::check(cucore_memory_resource_accessibility(handle_, &device, &host));
        return host != 0;
    }

    // Whether the memory is managed (cuda.core: is_managed). Throws Error:
    // INVALID_HANDLE.
    bool is_managed() const {
        int managed = 0;
        detail::check(cucore_memory_resource_is_managed(handle_, &managed));
        return managed != 0;
    }

    // Whether allocation and release are stream-ordered (pools; a stream is
    // required). Throws Error: INVALID_HANDLE.
    bool is_stream_ordered() const {
        int ordered = 0;
        detail::check(cucore_memory_resource_is_stream_ordered(handle_, &ordered));
        return ordered != 0;
    }

    // Allocates `size` bytes (0 is valid: address 0) ordered on `stream`, which
    // becomes the buffer's deallocation stream (synchronous resources other
    // than user ones ignore it). Throws Error: INVALID_HANDLE,
    // INVALID_ARGUMENT (stream of another device), OUT_OF_MEMORY, CUDA.
    // (Defined in buffer.hpp, where Buffer is.)
    Buffer allocate(std::uint64_t size, const Stream &stream) const;

    // Allocates `size` bytes from a synchronous resource (legacy pinned,
    // managed without a pool, virtual memory) or a user resource (its
    // callbacks get an empty stream). Throws as above, and INVALID_ARGUMENT
    // for a stream-ordered pool (pass a stream).
    Buffer allocate(std::uint64_t size) const;

    // Returns `size` bytes at `address` (memory the caller owns outside any
    // buffer) to the resource, ordered on `stream` (an empty Stream for the
    // synchronous resources). Never the memory of a live buffer. Throws Error:
    // INVALID_HANDLE, INVALID_ARGUMENT (no stream for a pool, stream of another
    // device), CUDA, or a user resource's deallocate status.
    void deallocate(std::uint64_t address, std::uint64_t size, const Stream &stream) const;
};

static_assert(sizeof(MemoryResource) == sizeof(void *), "a MemoryResource is exactly one C handle");

inline Location Location::device(const Device &dev) { return Location{CUCORE_LOCATION_DEVICE, dev.ordinal()}; }

inline MemoryResource MemoryResource::legacy_pinned(const Device &device) {
    cucore_memory_resource_t *raw = nullptr;
    detail::check(cucore_legacy_pinned_memory_resource_create(device.get(), &raw));
    return adopt(raw);
}

// Device's members that name its default memory resource (declared in device.hpp;
// Device::allocate is in buffer.hpp).
inline MemoryResource Device::memory_resource() const {
    cucore_memory_resource_t *raw = nullptr;
    detail::check(cucore_device_get_memory_resource(handle_, &raw));
    return MemoryResource::adopt(raw);
}

inline void Device::set_memory_resource(const MemoryResource &resource) {
    detail::check(cucore_device_set_memory_resource(handle_, resource.get()));
}

inline void Device::reset_memory_resource() { detail::check(cucore_device_set_memory_resource(handle_, nullptr)); }

} // namespace cucore

#endif // CUCORE_MEMORY_RESOURCE_HPP
