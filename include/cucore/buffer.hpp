// libcucore C++ façade: buffers (over cucore/buffer.h).
//
//   cucore::Device dev(0);
//   cucore::Stream s = dev.create_stream();
//   cucore::Buffer buf = dev.allocate(1 << 20, s);        // the device's current pool
//   buf.fill(std::uint32_t{0xdeadbeef}, s);                // pattern width from the type
//   std::vector<float> host(1 << 18);
//   buf.copy_to_host(host, s);
//   s.synchronize();                                       // then read `host`
//
// Like cuda.core: a MemoryResource (memory_resource.hpp) allocates Buffers; a
// Buffer holds its resource, its deallocation stream and (for a view) its
// parent, so release order never matters. A buffer from a stream-ordered pool
// is freed on its deallocation stream (the allocation stream unless changed)
// when its last reference goes, or at once with close().
//
// Managed buffers take advice and prefetches (Buffer::advise, prefetch,
// discard), declared here and defined in managed_memory.hpp; strided 2D/3D
// copies are in copy_3d.hpp. Those headers include this one (the headers
// include each other in one direction only; see device.hpp); cucore.hpp brings
// them all.
#ifndef CUCORE_BUFFER_HPP
#define CUCORE_BUFFER_HPP

#include <cstdint>
#include <iterator>
#include <type_traits>

#include "buffer.h"
#include "common.hpp"
#include "device.hpp"
#include "managed_memory.h" // cucore_memory_advice_t (Buffer::advise)
#include "memory_resource.hpp"
#include "stream.hpp"

namespace cucore {

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
// (The element type is looked at only for a contiguous range: for any other
// type, e.g. a class without data(), the answer is false, not a hard error.)
template <typename C, typename = void> struct is_writable_host_range : std::false_type {};
template <typename C>
struct is_writable_host_range<C, std::enable_if_t<is_contiguous_host_range<C>::value>>
    : std::bool_constant<!std::is_const_v<contiguous_element_t<C>>> {};
template <typename C>
constexpr bool is_writable_host_range_v = is_writable_host_range<C>::value;

template <typename C> std::uint64_t byte_size(C &c) noexcept {
    return static_cast<std::uint64_t>(std::size(c)) * sizeof(contiguous_element_t<C>);
}

} // namespace detail

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
    // Defined and documented in managed_memory.hpp.
    void advise(cucore_memory_advice_t advice, const Location &location = Location{}) const;
    bool read_mostly() const;
    void set_read_mostly(bool on) const;
    Location preferred_location() const;
    void set_preferred_location(const Location &location) const;
    bool is_accessed_by(const Location &location) const;
    void add_accessed_by(const Location &location) const;
    void remove_accessed_by(const Location &location) const;
    Location last_prefetch_location() const;
    void prefetch(const Location &location, const Stream &stream) const;
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

// MemoryResource's allocations (declared in memory_resource.hpp, defined here
// where Buffer is complete).
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

inline void MemoryResource::deallocate(std::uint64_t address, std::uint64_t size, const Stream &stream) const {
    detail::check(cucore_memory_resource_deallocate(handle_, address, size, stream.get()));
}

// Buffer's members that take or give other objects.
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

// Device's allocation from its default memory resource (declared in device.hpp).
inline Buffer Device::allocate(std::uint64_t size, const Stream &stream) const {
    cucore_buffer_t *raw = nullptr;
    detail::check(cucore_device_allocate(handle_, size, stream.get(), &raw));
    return Buffer::adopt(raw);
}

} // namespace cucore

#endif // CUCORE_BUFFER_HPP
