// libcucore C++ façade: memory resources and buffers (over cucore/memory.h).
//
//   cucore::Device dev(0);
//   cucore::Stream s = dev.create_stream();
//   cucore::Buffer buf = dev.allocate(1 << 20, s);        // the device's current pool
//   buf.fill(std::uint32_t{0xdeadbeef}, s);                // pattern width from the type
//   std::vector<float> host(1 << 18);
//   buf.copy_to_host(host, s);
//   s.synchronize();                                       // then read `host`
//
// Like cuda.core: a MemoryResource allocates Buffers; a Buffer holds its
// resource, its deallocation stream and (for a view) its parent, so release
// order never matters. A buffer from a stream-ordered pool is freed on its
// deallocation stream (the allocation stream unless changed) when its last
// reference goes, or at once with close().
//
// The other resources (cuda.core's names in brackets): MemoryResource::
// pinned_pool [PinnedMemoryResource], managed [ManagedMemoryResource],
// virtual_memory [VirtualMemoryResource] and user resources (memory_user.hpp);
// managed buffers take advice and prefetches (Buffer::advise, prefetch,
// discard). User resources (MemoryResource::user, defined there) are in
// memory_user.hpp and strided 2D/3D copies in copy_3d.hpp, which include this
// header (the headers include each other in one direction only; see
// device.hpp); cucore.hpp brings them all.
#ifndef CUCORE_MEMORY_HPP
#define CUCORE_MEMORY_HPP

#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <type_traits>

#include "common.hpp"
#include "device.hpp"
#include "memory.h"
#include "stream.hpp"

namespace cucore {

class Buffer;
class UserMemoryResource;
struct UserMemoryTraits;

namespace detail {

// The element type of a contiguous container `C` (anything with std::data and
// std::size: std::vector, std::array, std::string, C arrays, spans...).
template <typename C>
using contiguous_element_t = std::remove_pointer_t<decltype(std::data(std::declval<C &>()))>;

template <typename C, typename = void> struct is_contiguous_host_range : std::false_type {};
template <typename C>
struct is_contiguous_host_range<
    C, std::void_t<decltype(std::data(std::declval<C &>())), decltype(std::size(std::declval<C &>()))>>
    : std::bool_constant<std::is_pointer_v<decltype(std::data(std::declval<C &>()))> &&
                         std::is_trivially_copyable_v<contiguous_element_t<C>>> {};

// A container whose bytes may be copied to the device.
template <typename C>
constexpr bool is_readable_host_range_v = is_contiguous_host_range<C>::value;
// A container whose bytes may be overwritten from the device (elements not const).
template <typename C>
constexpr bool is_writable_host_range_v =
    is_contiguous_host_range<C>::value && !std::is_const_v<contiguous_element_t<C>>;

template <typename C> std::uint64_t byte_size(C &c) noexcept {
    return static_cast<std::uint64_t>(std::size(c)) * sizeof(contiguous_element_t<C>);
}

// The C defaults, so the options structs below default to exactly the
// *_INIT macros (one source of truth).
inline constexpr cucore_device_memory_resource_options_t kDeviceMemoryResourceDefaults =
    CUCORE_DEVICE_MEMORY_RESOURCE_OPTIONS_INIT;
inline constexpr cucore_pinned_memory_resource_options_t kPinnedMemoryResourceDefaults =
    CUCORE_PINNED_MEMORY_RESOURCE_OPTIONS_INIT;
inline constexpr cucore_managed_memory_resource_options_t kManagedMemoryResourceDefaults =
    CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
inline constexpr cucore_virtual_memory_resource_options_t kVirtualMemoryResourceDefaults =
    CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT;
} // namespace detail

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

// The options of a managed memory resource (MemoryResource::managed; cuda.core:
// ManagedMemoryResourceOptions). By default the memory comes from
// cuMemAllocManaged (synchronous: allocate with or without a stream), where
// every advice works; use_pool asks for a managed memory pool as cuda.core's
// ManagedMemoryResource is (stream-ordered, CUDA 13 drivers), on whose memory
// drivers may refuse advice (an H100 with driver 580 answers NOT_SUPPORTED).
struct ManagedMemoryResourceOptions {
    // A managed memory pool (true) or cuMemAllocManaged (false, the default).
    bool use_pool = detail::kManagedMemoryResourceDefaults.use_pool != 0;
    // The preferred location of the memory (the pool's, or advised for each
    // allocation): none, a device, the host or a NUMA node.
    Location preferred_location = Location::from_c(detail::kManagedMemoryResourceDefaults.preferred_location);
    // Pools only (INVALID_ARGUMENT without use_pool).
    std::uint64_t max_size = detail::kManagedMemoryResourceDefaults.max_size;                  // 0: no limit
    std::uint64_t release_threshold = detail::kManagedMemoryResourceDefaults.release_threshold; // 0: driver default

    cucore_managed_memory_resource_options_t to_c() const noexcept {
        cucore_managed_memory_resource_options_t o = detail::kManagedMemoryResourceDefaults;
        o.use_pool = use_pool ? 1u : 0u;
        o.preferred_location = preferred_location.to_c();
        o.max_size = max_size;
        o.release_threshold = release_threshold;
        return o;
    }
};

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

    cucore_virtual_memory_resource_options_t to_c() const noexcept {
        cucore_virtual_memory_resource_options_t o = detail::kVirtualMemoryResourceDefaults;
        o.location_type = location_type;
        o.location_id = location_id;
        o.minimum_granularity = minimum_granularity ? 1u : 0u;
        o.posix_fd_shareable = posix_fd_shareable ? 1u : 0u;
        o.reserve_size = reserve_size;
        o.self_access = self_access;
        return o;
    }
};

// A memory resource (cuda.core: DeviceMemoryResource, PinnedMemoryResource,
// ManagedMemoryResource, LegacyPinnedMemoryResource, VirtualMemoryResource, a
// user's MemoryResource subclass): a device's current memory pool, a new pool
// of device, pinned or managed memory, page-locked host memory, virtual memory,
// or the user's own allocator. A default-constructed MemoryResource is empty.
class MemoryResource : public Handle<MemoryResource, cucore_memory_resource_t> {
public:
    MemoryResource() noexcept = default;

    // The resource of `device`'s current memory pool (cuDeviceGetMemPool), not
    // owned: releasing it never destroys the pool. Throws Error: INVALID_HANDLE,
    // NOT_SUPPORTED (no memory pools), CUDA.
    static MemoryResource device_default(const Device &device);

    // A new memory pool on `device` (cuMemPoolCreate), destroyed when this
    // resource and every buffer from it are gone. Throws Error: INVALID_HANDLE,
    // INVALID_ARGUMENT, NOT_SUPPORTED, OUT_OF_MEMORY, CUDA.
    static MemoryResource device_pool(const Device &device, const DeviceMemoryResourceOptions &options = {});

    // Page-locked host memory (cuMemAllocHost/cuMemFreeHost) made in `device`'s
    // primary context; allocation and release are synchronous. Throws Error:
    // INVALID_HANDLE, CUDA.
    static MemoryResource legacy_pinned(const Device &device);

    // A new stream-ordered pool of page-locked host memory; `device` is granted
    // read-write access and its streams allocate (others: set_peer_access).
    // device_id() is -1. Throws Error: INVALID_HANDLE, INVALID_ARGUMENT,
    // NOT_SUPPORTED (no host pools in this driver), CUDA.
    static MemoryResource pinned_pool(const Device &device, const PinnedMemoryResourceOptions &options = {});

    // Managed memory of `device`, whose buffers take advice, prefetches and
    // discards: from cuMemAllocManaged (synchronous; the default) or, with
    // options.use_pool, a new stream-ordered pool on `device`'s streams.
    // Throws Error: INVALID_HANDLE, INVALID_ARGUMENT (max_size or
    // release_threshold without use_pool), NOT_SUPPORTED (no managed memory;
    // a pool with a driver before CUDA 13), CUDA.
    static MemoryResource managed(const Device &device, const ManagedMemoryResourceOptions &options = {});

    // Virtual memory on `device` (cuMemCreate + cuMemAddressReserve + cuMemMap):
    // synchronous (allocate without a stream), sizes rounded up to the
    // granularity, buffers can grow (Buffer::grow). Throws Error:
    // INVALID_HANDLE, INVALID_ARGUMENT, NOT_SUPPORTED (no VMM), CUDA.
    static MemoryResource virtual_memory(const Device &device, const VirtualMemoryResourceOptions &options = {});

    // A resource whose memory comes from `impl` (memory_user.hpp), kept alive
    // until the resource and every buffer from it are gone. Throws Error:
    // INVALID_ARGUMENT (empty `impl`, device_id below -1), std::bad_alloc.
    static MemoryResource user(std::shared_ptr<UserMemoryResource> impl, const UserMemoryTraits &traits);

    // The same from two callables: allocate(size, stream) -> address and
    // deallocate(address, size, stream); see UserMemoryResource for their rules.
    static MemoryResource user(std::function<std::uint64_t(std::uint64_t, const Stream &)> allocate,
                               std::function<void(std::uint64_t, std::uint64_t, const Stream &)> deallocate,
                               const UserMemoryTraits &traits);

    // A resource over the C callbacks as they are (copied; `destroy` runs when
    // the last reference goes, never if this throws). Throws Error:
    // INVALID_ARGUMENT (missing allocate/deallocate, bad struct).
    static MemoryResource user(const cucore_memory_resource_callbacks_t &callbacks) {
        cucore_memory_resource_t *raw = nullptr;
        detail::check(cucore_user_memory_resource_create(&callbacks, &raw));
        return adopt(raw);
    }

    // The raw CUmemoryPool of a pool resource, nullptr for a resource without
    // one (legacy pinned, managed without a pool, virtual, user). Throws Error:
    // INVALID_HANDLE.
    void *handle() const {
        void *pool = nullptr;
        detail::check(cucore_memory_resource_handle(handle_, &pool));
        return pool;
    }

    // Grants (READ_WRITE; READ for virtual memory) or revokes (NONE) `peer`'s
    // access to the memory of a pool or virtual resource (cuda.core:
    // peer_accessible_by). Throws Error: INVALID_HANDLE, INVALID_ARGUMENT
    // (the owning device revoked), NOT_SUPPORTED (other kinds; devices that
    // cannot access each other), CUDA.
    void set_peer_access(const Device &peer, cucore_access_t access);

    // The access `peer` has. Throws Error: INVALID_HANDLE, NOT_SUPPORTED, CUDA.
    cucore_access_t peer_access(const Device &peer) const;

    // A pool attribute (flags read 0 or 1). Throws Error: INVALID_HANDLE,
    // INVALID_ARGUMENT, NOT_SUPPORTED (no pool), CUDA.
    std::uint64_t pool_attribute(cucore_pool_attribute_t attribute) const {
        std::uint64_t value = 0;
        detail::check(cucore_memory_resource_pool_attribute(handle_, attribute, &value));
        return value;
    }

    // Sets a settable pool attribute (high-water marks: 0 only). Throws Error:
    // INVALID_HANDLE, INVALID_ARGUMENT, NOT_SUPPORTED (no pool), CUDA.
    void set_pool_attribute(cucore_pool_attribute_t attribute, std::uint64_t value) {
        detail::check(cucore_memory_resource_set_pool_attribute(handle_, attribute, value));
    }

    // Returns unused reserved memory to the system, keeping `min_bytes_to_keep`.
    // Throws Error: INVALID_HANDLE, NOT_SUPPORTED (no pool), CUDA.
    void trim(std::uint64_t min_bytes_to_keep = 0) {
        detail::check(cucore_memory_resource_trim(handle_, min_bytes_to_keep));
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
    Buffer allocate(std::uint64_t size, const Stream &stream) const;

    // Allocates `size` bytes from a synchronous resource (legacy pinned,
    // managed without a pool, virtual memory) or a user resource (its
    // callbacks get an empty stream). Throws as above, and INVALID_ARGUMENT
    // for a stream-ordered pool (pass a stream).
    Buffer allocate(std::uint64_t size) const;
};

static_assert(sizeof(MemoryResource) == sizeof(void *), "a MemoryResource is exactly one C handle");

// A range of memory with a size, an address and the resource it came from
// (cuda.core: Buffer). Copies share the one library object (close() closes it
// for all of them). A default-constructed Buffer is empty.
//
// Every copy and fill is asynchronous, ordered on the stream given: host
// memory passed to copy_from_host/copy_to_host must stay valid, and results
// must not be read, until the stream has run the copy (synchronize).
class Buffer : public Handle<Buffer, cucore_buffer_t> {
public:
    Buffer() noexcept = default;

    // Wraps foreign memory at `address` (CUdeviceptr) of `size` bytes on
    // `device` without owning it: nothing is ever freed; `on_release(user_data)`
    // runs (if given) when the last reference goes. An empty `device` means host
    // memory. Throws Error: INVALID_ARGUMENT (address 0 with a non-zero size),
    // INVALID_HANDLE.
    static Buffer from_handle(std::uint64_t address, std::uint64_t size, const Device &device,
                              cucore_release_fn on_release = nullptr, void *user_data = nullptr);

    // Wraps foreign host memory (as above, device_id() -1).
    static Buffer from_handle(std::uint64_t address, std::uint64_t size, cucore_release_fn on_release = nullptr,
                              void *user_data = nullptr) {
        cucore_buffer_t *raw = nullptr;
        detail::check(cucore_buffer_from_handle(address, size, nullptr, on_release, user_data, &raw));
        return adopt(raw);
    }

    // The size in bytes (0 once closed). Throws Error: INVALID_HANDLE.
    std::uint64_t size() const {
        std::uint64_t n = 0;
        detail::check(cucore_buffer_size(handle_, &n));
        return n;
    }

    // The address: a CUdeviceptr, or a host pointer as an integer (0 once
    // closed, and for a zero-size allocation). Throws Error: INVALID_HANDLE.
    std::uint64_t address() const {
        std::uint64_t a = 0;
        detail::check(cucore_buffer_address(handle_, &a));
        return a;
    }

    // The address as a pointer (host memory is usable through it; device
    // memory only by the device). Throws as address().
    void *data() const { return reinterpret_cast<void *>(static_cast<std::uintptr_t>(address())); }

    // The ordinal of the device whose memory it is, or -1 for host memory.
    // Throws Error: INVALID_HANDLE.
    int device_id() const {
        int id = -1;
        detail::check(cucore_buffer_device_id(handle_, &id));
        return id;
    }

    // The resource the buffer came from; empty for foreign memory. Throws Error:
    // INVALID_HANDLE.
    MemoryResource memory_resource() const {
        cucore_memory_resource_t *raw = nullptr;
        detail::check(cucore_buffer_memory_resource(handle_, &raw));
        return MemoryResource::adopt(raw);
    }

    // Who can reach the memory (cuda.core: is_device_accessible,
    // is_host_accessible, is_managed). Throw Error: INVALID_HANDLE.
    bool is_device_accessible() const { return accessibility(0); }
    bool is_host_accessible() const { return accessibility(1); }
    bool is_managed() const { return accessibility(2); }

    // The stream the memory will be freed on; empty for synchronous and
    // foreign memory and once closed. Throws Error: INVALID_HANDLE.
    Stream deallocation_stream() const;

    // Grows a buffer of a virtual memory resource to `new_size` bytes, keeping
    // its contents: in place within its reservation, else at a new address
    // (read address() again). Not below the size (a no-op), not while views of
    // it exist, not concurrently with other uses. Throws Error: INVALID_HANDLE,
    // INVALID_ARGUMENT (not virtual memory), INVALID_STATE (closed, has views),
    // OUT_OF_MEMORY, CUDA.
    void grow(std::uint64_t new_size) const { detail::check(cucore_buffer_grow(handle_, new_size)); }

    // ---- Managed memory (cuda.core: ManagedBuffer) ----
    // Each throws Error: INVALID_HANDLE, INVALID_ARGUMENT (not managed memory,
    // a bad location), INVALID_STATE (closed), CUDA.

    // Gives the driver advice (cuMemAdvise); `location` is ignored by the
    // read-mostly advice.
    void advise(cucore_memory_advice_t advice, const Location &location = Location{}) const {
        detail::check(cucore_buffer_advise(handle_, advice, location.to_c()));
    }
    // Whether the read-mostly advice is set / sets or clears it.
    bool read_mostly() const {
        int on = 0;
        detail::check(cucore_buffer_advice(handle_, &on, nullptr));
        return on != 0;
    }
    void set_read_mostly(bool on) const {
        advise(on ? CUCORE_ADVICE_SET_READ_MOSTLY : CUCORE_ADVICE_UNSET_READ_MOSTLY);
    }
    // The preferred location (Location::none() when there is none) / sets it;
    // Location::none() unsets it.
    Location preferred_location() const {
        cucore_location_t where{CUCORE_LOCATION_NONE, 0};
        detail::check(cucore_buffer_advice(handle_, nullptr, &where));
        return Location::from_c(where);
    }
    void set_preferred_location(const Location &location) const {
        if (location.is_none())
            advise(CUCORE_ADVICE_UNSET_PREFERRED_LOCATION);
        else
            advise(CUCORE_ADVICE_SET_PREFERRED_LOCATION, location);
    }
    // The accessed-by advice for `location` (a device): query, set, clear.
    bool is_accessed_by(const Location &location) const {
        int yes = 0;
        detail::check(cucore_buffer_is_accessed_by(handle_, location.to_c(), &yes));
        return yes != 0;
    }
    void add_accessed_by(const Location &location) const { advise(CUCORE_ADVICE_SET_ACCESSED_BY, location); }
    void remove_accessed_by(const Location &location) const { advise(CUCORE_ADVICE_UNSET_ACCESSED_BY, location); }
    // Where the memory was last prefetched to (none if never, or not all in one place).
    Location last_prefetch_location() const {
        cucore_location_t where{CUCORE_LOCATION_NONE, 0};
        detail::check(cucore_buffer_last_prefetch_location(handle_, &where));
        return Location::from_c(where);
    }
    // Migrates the memory to `location`, ordered on `stream`.
    void prefetch(const Location &location, const Stream &stream) const;
    // Drops the contents (reading before writing gives unspecified values),
    // ordered on `stream`; discard_prefetch then makes the pages resident at
    // `location`. Also NOT_SUPPORTED (driver before CUDA 13).
    void discard(const Stream &stream) const;
    void discard_prefetch(const Location &location, const Stream &stream) const;

    // Frees the memory now, on the deallocation stream or on `stream`. The
    // object stays valid but closed: size() and address() read 0 and any other
    // use throws INVALID_STATE; closing again does nothing. Views keep the memory
    // until they go. Throws Error: INVALID_HANDLE, CUDA.
    void close() const { detail::check(cucore_buffer_close(handle_, nullptr)); }
    void close(const Stream &stream) const;

    // Makes `stream` the stream the memory is freed on (the buffer holds it).
    // Throws Error: INVALID_HANDLE, INVALID_STATE (closed).
    void set_deallocation_stream(const Stream &stream) const;

    // A buffer of `size` bytes at `offset` into this one, sharing its memory and
    // keeping it alive (releasing a view frees nothing). Throws Error:
    // INVALID_HANDLE, INVALID_ARGUMENT (range outside the buffer), INVALID_STATE.
    Buffer view(std::uint64_t offset, std::uint64_t size) const {
        cucore_buffer_t *raw = nullptr;
        detail::check(cucore_buffer_view(handle_, offset, size, &raw));
        return adopt(raw);
    }

    // Copies all of `src` into this buffer / all of this buffer into `dst`
    // (sizes must be equal), ordered on `stream`. Throws Error: INVALID_HANDLE,
    // INVALID_ARGUMENT (sizes differ), INVALID_STATE (closed), CUDA.
    void copy_from(const Buffer &src, const Stream &stream) const;
    void copy_to(const Buffer &dst, const Stream &stream) const;

    // A new buffer from this buffer's resource, allocated and filled with a copy
    // of this one on `stream` (cuda.core: copy_to(None, stream=...)). Throws as
    // above and MemoryResource::allocate; INVALID_ARGUMENT for foreign memory
    // (no resource: pass a destination).
    Buffer copy_to(const Stream &stream) const;

    // Copies `size` bytes from host memory `src` into this buffer at `offset`.
    // Throws Error: INVALID_HANDLE, INVALID_ARGUMENT (NULL src with size > 0,
    // range outside the buffer), INVALID_STATE (closed), CUDA.
    void copy_from_host(std::uint64_t offset, const void *src, std::uint64_t size, const Stream &stream) const;

    // Copies the bytes of a contiguous container (std::vector, std::array,
    // std::string, C array...) of trivially copyable elements into this buffer
    // at `offset` (0 unless given). Throws as above.
    template <typename C, typename = std::enable_if_t<detail::is_readable_host_range_v<const C>>>
    void copy_from_host(const C &src, const Stream &stream) const {
        copy_from_host(0, std::data(src), detail::byte_size(src), stream);
    }
    template <typename C, typename = std::enable_if_t<detail::is_readable_host_range_v<const C>>>
    void copy_from_host(std::uint64_t offset, const C &src, const Stream &stream) const {
        copy_from_host(offset, std::data(src), detail::byte_size(src), stream);
    }

    // Copies `size` bytes of this buffer at `offset` to host memory `dst`.
    // Throws as copy_from_host.
    void copy_to_host(std::uint64_t offset, void *dst, std::uint64_t size, const Stream &stream) const;

    // Fills a contiguous container of trivially copyable, non-const elements
    // with the bytes of this buffer at `offset` (0 unless given); the container
    // gives the byte count. Throws as copy_from_host.
    template <typename C, typename = std::enable_if_t<detail::is_writable_host_range_v<C>>>
    void copy_to_host(C &dst, const Stream &stream) const {
        copy_to_host(0, static_cast<void *>(std::data(dst)), detail::byte_size(dst), stream);
    }
    template <typename C, typename = std::enable_if_t<detail::is_writable_host_range_v<C>>>
    void copy_to_host(std::uint64_t offset, C &dst, const Stream &stream) const {
        copy_to_host(offset, static_cast<void *>(std::data(dst)), detail::byte_size(dst), stream);
    }

    // Fills the buffer with a 1-, 2- or 4-byte pattern; the width is the type
    // of `value` (write std::uint16_t{0x1234}; a plain int does not compile).
    // The size must be a multiple of the width. Throws Error: INVALID_HANDLE,
    // INVALID_ARGUMENT (size not a multiple), INVALID_STATE (closed), CUDA.
    void fill(std::uint8_t value, const Stream &stream) const { fill_pattern(value, 1, stream); }
    void fill(std::uint16_t value, const Stream &stream) const { fill_pattern(value, 2, stream); }
    void fill(std::uint32_t value, const Stream &stream) const { fill_pattern(value, 4, stream); }
    // Any other type (int, char, uint64_t...) would pick a width by accident.
    template <typename T> void fill(T value, const Stream &stream) const = delete;

private:
    void fill_pattern(std::uint32_t value, std::uint32_t width, const Stream &stream) const;
    // 0: device, 1: host, 2: managed.
    bool accessibility(int which) const {
        int flags[3] = {0, 0, 0};
        detail::check(cucore_buffer_accessibility(handle_, &flags[0], &flags[1], &flags[2]));
        return flags[which] != 0;
    }
};

static_assert(sizeof(Buffer) == sizeof(void *), "a Buffer is exactly one C handle");

inline MemoryResource MemoryResource::device_default(const Device &device) {
    cucore_memory_resource_t *raw = nullptr;
    detail::check(cucore_device_memory_resource_get_default(device.get(), &raw));
    return adopt(raw);
}

inline MemoryResource MemoryResource::device_pool(const Device &device, const DeviceMemoryResourceOptions &options) {
    const cucore_device_memory_resource_options_t o = options.to_c();
    cucore_memory_resource_t *raw = nullptr;
    detail::check(cucore_device_memory_resource_create(device.get(), &o, &raw));
    return adopt(raw);
}

inline MemoryResource MemoryResource::legacy_pinned(const Device &device) {
    cucore_memory_resource_t *raw = nullptr;
    detail::check(cucore_legacy_pinned_memory_resource_create(device.get(), &raw));
    return adopt(raw);
}

inline Location Location::device(const Device &dev) { return Location{CUCORE_LOCATION_DEVICE, dev.ordinal()}; }

inline MemoryResource MemoryResource::pinned_pool(const Device &device, const PinnedMemoryResourceOptions &options) {
    const cucore_pinned_memory_resource_options_t o = options.to_c();
    cucore_memory_resource_t *raw = nullptr;
    detail::check(cucore_pinned_memory_resource_create(device.get(), &o, &raw));
    return adopt(raw);
}

inline MemoryResource MemoryResource::managed(const Device &device, const ManagedMemoryResourceOptions &options) {
    const cucore_managed_memory_resource_options_t o = options.to_c();
    cucore_memory_resource_t *raw = nullptr;
    detail::check(cucore_managed_memory_resource_create(device.get(), &o, &raw));
    return adopt(raw);
}

inline MemoryResource MemoryResource::virtual_memory(const Device &device, const VirtualMemoryResourceOptions &options) {
    const cucore_virtual_memory_resource_options_t o = options.to_c();
    cucore_memory_resource_t *raw = nullptr;
    detail::check(cucore_virtual_memory_resource_create(device.get(), &o, &raw));
    return adopt(raw);
}

inline void MemoryResource::set_peer_access(const Device &peer, cucore_access_t access) {
    detail::check(cucore_memory_resource_set_peer_access(handle_, peer.get(), access));
}

inline cucore_access_t MemoryResource::peer_access(const Device &peer) const {
    cucore_access_t access = CUCORE_ACCESS_NONE;
    detail::check(cucore_memory_resource_peer_access(handle_, peer.get(), &access));
    return access;
}

inline Buffer MemoryResource::allocate(std::uint64_t size, const Stream &stream) const {
    cucore_buffer_t *raw = nullptr;
    detail::check(cucore_memory_resource_allocate(handle_, size, stream.get(), &raw));
    return Buffer::adopt(raw);
}

inline Buffer MemoryResource::allocate(std::uint64_t size) const {
    cucore_buffer_t *raw = nullptr;
    detail::check(cucore_memory_resource_allocate(handle_, size, nullptr, &raw));
    return Buffer::adopt(raw);
}

inline Buffer Buffer::from_handle(std::uint64_t address, std::uint64_t size, const Device &device,
                                  cucore_release_fn on_release, void *user_data) {
    cucore_buffer_t *raw = nullptr;
    detail::check(cucore_buffer_from_handle(address, size, device.get(), on_release, user_data, &raw));
    return adopt(raw);
}

inline void Buffer::close(const Stream &stream) const {
    detail::check(cucore_buffer_close(handle_, stream.get()));
}

inline void Buffer::set_deallocation_stream(const Stream &stream) const {
    detail::check(cucore_buffer_set_deallocation_stream(handle_, stream.get()));
}

inline Stream Buffer::deallocation_stream() const {
    cucore_stream_t *raw = nullptr;
    detail::check(cucore_buffer_deallocation_stream(handle_, &raw));
    return Stream::adopt(raw);
}

inline void Buffer::prefetch(const Location &location, const Stream &stream) const {
    detail::check(cucore_buffer_prefetch(handle_, location.to_c(), stream.get()));
}

inline void Buffer::discard(const Stream &stream) const {
    detail::check(cucore_buffer_discard(handle_, nullptr, stream.get()));
}

inline void Buffer::discard_prefetch(const Location &location, const Stream &stream) const {
    const cucore_location_t where = location.to_c();
    detail::check(cucore_buffer_discard(handle_, &where, stream.get()));
}

inline void Buffer::copy_from(const Buffer &src, const Stream &stream) const {
    detail::check(cucore_buffer_copy(handle_, src.get(), stream.get()));
}

inline void Buffer::copy_to(const Buffer &dst, const Stream &stream) const {
    detail::check(cucore_buffer_copy(dst.get(), handle_, stream.get()));
}

inline Buffer Buffer::copy_to(const Stream &stream) const {
    const MemoryResource resource = memory_resource();
    if (!resource)
        throw Error(CUCORE_ERROR_INVALID_ARGUMENT, 0,
                    "cucore::Buffer::copy_to: the buffer wraps foreign memory and has no memory resource to "
                    "allocate the copy from; pass a destination buffer");
    Buffer dst = resource.allocate(size(), stream);
    copy_to(dst, stream);
    return dst;
}

inline void Buffer::copy_from_host(std::uint64_t offset, const void *src, std::uint64_t size,
                                   const Stream &stream) const {
    detail::check(cucore_buffer_copy_from_host(handle_, offset, src, size, stream.get()));
}

inline void Buffer::copy_to_host(std::uint64_t offset, void *dst, std::uint64_t size, const Stream &stream) const {
    detail::check(cucore_buffer_copy_to_host(handle_, offset, dst, size, stream.get()));
}

inline void Buffer::fill_pattern(std::uint32_t value, std::uint32_t width, const Stream &stream) const {
    detail::check(cucore_buffer_fill(handle_, value, width, stream.get()));
}

// Device's members that allocate or name a memory resource (declared in device.hpp).
inline Buffer Device::allocate(std::uint64_t size, const Stream &stream) const {
    cucore_buffer_t *raw = nullptr;
    detail::check(cucore_device_allocate(handle_, size, stream.get(), &raw));
    return Buffer::adopt(raw);
}

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

#endif // CUCORE_MEMORY_HPP
