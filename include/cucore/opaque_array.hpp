// libcucore C++ façade: CUDA arrays and mipmapped arrays (over cucore/opaque_array.h).
//
//   cucore::OpaqueArrayOptions o;
//   o.format = CUCORE_ARRAY_FORMAT_FLOAT32;
//   o.num_channels = 1;
//   o.width = 640;
//   o.height = 480;
//   cucore::OpaqueArray image = dev.create_opaque_array(o);
//   std::vector<float> pixels(640 * 480, 1.0f);
//   image.copy_from(pixels, stream);                  // the whole array, packed
//   // A 16 x 8 tile at (32, 64) into a packed host tile of 16 floats a row:
//   std::vector<float> tile(16 * 8);
//   cucore::OpaqueArray::copy(cucore::MemoryRegion::host(tile.data(), 16 * sizeof(float)),
//                             cucore::ArrayRegion(image).at(32, 64), {16, 8, 1}, stream);
//   stream.synchronize();
//
// An array (cuda.core: OpaqueArray) is memory laid out for the texture units;
// kernels reach it only through texture and surface objects (texture.hpp), and
// data moves in and out by copies. Shapes and offsets are in elements; whole-
// array copies read and write the packed layout info() describes (row_bytes x
// row_count x slice_count). Every copy is ordered on the stream given, like
// Buffer's: host memory must stay valid, and results must not be read, until
// the stream has run the copy.
//
// An array created here is owned: it is destroyed when its last reference and
// every texture or surface object over it are gone (close() lets go of it
// sooner). A level of a mipmapped array, a wrapped foreign CUarray and a mapped
// GL image (GraphicsResource::map_array) are the same type, not owned.
#ifndef CUCORE_OPAQUE_ARRAY_HPP
#define CUCORE_OPAQUE_ARRAY_HPP

#include <cstdint>
#include <iterator>
#include <type_traits>

#include "buffer.hpp"
#include "common.hpp"
#include "copy_3d.hpp"
#include "device.hpp"
#include "opaque_array.h"
#include "stream.hpp"

namespace cucore {

namespace detail {
// The C defaults, so OpaqueArrayOptions defaults to exactly the *_INIT macro.
inline constexpr cucore_opaque_array_options_t kOpaqueArrayDefaults = CUCORE_OPAQUE_ARRAY_OPTIONS_INIT;
} // namespace detail

// What an array (or a mipmapped array's level 0) is: format, channels, element
// size, kind, flags, extents, its packed layout (row_bytes, row_count,
// slice_count, size_bytes), device, whether it is owned, its level count.
using OpaqueArrayInfo = cucore_opaque_array_info_t;

// The description of an array to create (cuda.core: OpaqueArrayOptions); the
// fields of cucore_opaque_array_options_t, zero meaning the default. Shapes are
// in elements: 1D has height 0, 2D depth 0; LAYERED takes `layers` layers of 1D
// or 2D; CUBEMAP is width == height with depth and layers 0; LAYERED_CUBEMAP
// `layers` cubemaps.
struct OpaqueArrayOptions {
    cucore_array_format_t format = detail::kOpaqueArrayDefaults.format; // required
    // 1, 2 or 4 (3 for BC6H); 0: the format's own count (normalized, BC and
    // 101010_2 formats), else 1.
    std::uint32_t num_channels = detail::kOpaqueArrayDefaults.num_channels;
    cucore_array_kind_t kind = detail::kOpaqueArrayDefaults.kind;
    std::uint32_t flags = detail::kOpaqueArrayDefaults.flags; // cucore_array_flag_t bits
    std::uint64_t width = detail::kOpaqueArrayDefaults.width;
    std::uint64_t height = detail::kOpaqueArrayDefaults.height;
    std::uint64_t depth = detail::kOpaqueArrayDefaults.depth;
    std::uint64_t layers = detail::kOpaqueArrayDefaults.layers;

    // The C options these stand for.
    cucore_opaque_array_options_t to_c() const noexcept {
        cucore_opaque_array_options_t o = detail::kOpaqueArrayDefaults;
        o.format = format;
        o.num_channels = num_channels;
        o.kind = kind;
        o.flags = flags;
        o.width = width;
        o.height = height;
        o.depth = depth;
        o.layers = layers;
        return o;
    }
};

class ArrayRegion;

// A CUDA array (cuda.core: OpaqueArray). Copies share the one library object
// (close() closes it for all of them). A default-constructed OpaqueArray is
// empty: calls on it throw Error(INVALID_HANDLE).
class OpaqueArray : public Handle<OpaqueArray, cucore_opaque_array_t> {
public:
    OpaqueArray() noexcept = default;

    // A new array on `device`, in its primary context, owned by the result.
    // The shape is checked against the kind, the format and the device's
    // limits first (the message names the limit exceeded). Throws Error:
    // INVALID_HANDLE, INVALID_ARGUMENT (unset or unknown format, unknown kind
    // or flag bits, a channel count the format does not take, a shape the kind
    // does not take, a limit exceeded, a BC format in 1D or with surface
    // load/store), NOT_SUPPORTED (sparse where the device has none),
    // OUT_OF_MEMORY, CUDA (the driver refused the description).
    static OpaqueArray create(const Device &device, const OpaqueArrayOptions &options) {
        const cucore_opaque_array_options_t o = options.to_c();
        cucore_opaque_array_t *raw = nullptr;
        detail::check(cucore_opaque_array_create(device.get(), &o, &raw));
        return adopt(raw);
    }

    // Wraps a foreign CUarray of `device` without owning it (its description is
    // read from the driver); `on_release(user_data)` runs, if given, when the
    // last reference and every texture or surface object over it are gone.
    // Throws Error: INVALID_HANDLE, INVALID_ARGUMENT (null cu_array), CUDA (not
    // an array), NOT_SUPPORTED (a format this library does not offer).
    static OpaqueArray from_handle(const Device &device, void *cu_array, cucore_release_fn on_release = nullptr,
                                   void *user_data = nullptr) {
        cucore_opaque_array_t *raw = nullptr;
        detail::check(cucore_opaque_array_from_handle(device.get(), cu_array, on_release, user_data, &raw));
        return adopt(raw);
    }

    // The array's description. Throws Error: INVALID_HANDLE, INVALID_STATE
    // (closed, or a GL image that was unmapped).
    OpaqueArrayInfo info() const {
        OpaqueArrayInfo result = CUCORE_OPAQUE_ARRAY_INFO_INIT;
        detail::check(cucore_opaque_array_info(handle_, &result));
        return result;
    }

    // Parts of info() (cuda.core's attributes), each one call. Throw as info().
    cucore_array_format_t format() const { return info().format; }
    std::uint32_t num_channels() const { return info().num_channels; }
    // Bytes per element (BC: per 4x4 block).
    std::uint32_t element_size() const { return info().element_size; }
    // Bytes of the packed layout: what whole-array copies move.
    std::uint64_t size_bytes() const { return info().size_bytes; }
    bool is_surface_load_store() const {
        return (info().flags & static_cast<std::uint32_t>(CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE)) != 0;
    }

    // The raw CUarray, borrowed: valid while the array is open. Throws Error:
    // INVALID_HANDLE, INVALID_STATE (closed, an unmapped GL image).
    void *handle() const {
        void *raw = nullptr;
        detail::check(cucore_opaque_array_handle(handle_, &raw));
        return raw;
    }

    // Lets go of the array now: it is destroyed at once unless texture or
    // surface objects still use it (then with the last of them). Idempotent;
    // the object stays valid and every other call on it throws INVALID_STATE.
    // Throws Error: INVALID_HANDLE.
    void close() const { detail::check(cucore_opaque_array_close(handle_)); }

    // ---- Whole-array copies, ordered on `stream` ----
    // The array's size_bytes from / to host memory of `size` bytes, which must
    // be at least size_bytes. Throws Error: INVALID_HANDLE, INVALID_ARGUMENT
    // (null pointer, `size` below size_bytes: the message names both),
    // INVALID_STATE (closed), CUDA.
    void copy_from(const void *src, std::uint64_t size, const Stream &stream) const {
        detail::check(cucore_opaque_array_copy_from_host(handle_, src, size, stream.get()));
    }
    void copy_to(void *dst, std::uint64_t size, const Stream &stream) const {
        detail::check(cucore_opaque_array_copy_to_host(handle_, dst, size, stream.get()));
    }

    // The same with a contiguous container (std::vector, std::array, a C array,
    // a span...) of trivially copyable elements, whose bytes must be at least
    // size_bytes; copy_to needs non-const elements. Throws as above.
    template <typename C, typename = std::enable_if_t<detail::is_readable_host_range_v<const C>>>
    void copy_from(const C &src, const Stream &stream) const {
        copy_from(static_cast<const void *>(std::data(src)), detail::byte_size(src), stream);
    }
    template <typename C, typename = std::enable_if_t<detail::is_writable_host_range_v<C>>>
    void copy_to(C &dst, const Stream &stream) const {
        copy_to(static_cast<void *>(std::data(dst)), detail::byte_size(dst), stream);
    }

    // From / to a Buffer, from its start; it must hold at least size_bytes.
    // Throws Error: INVALID_HANDLE, INVALID_ARGUMENT (a buffer smaller than
    // size_bytes: the message names both), INVALID_STATE (closed array or
    // buffer), CUDA.
    void copy_from(const Buffer &src, const Stream &stream) const {
        detail::check(cucore_opaque_array_copy_from_buffer(handle_, src.get(), stream.get()));
    }
    void copy_to(const Buffer &dst, const Stream &stream) const {
        detail::check(cucore_opaque_array_copy_to_buffer(handle_, dst.get(), stream.get()));
    }

    // All of `src` into this array / all of this array into `dst`; both must
    // have the same packed layout (extents, slices, element size). Throws
    // Error: INVALID_HANDLE, INVALID_ARGUMENT (layouts differ: the message
    // names both), INVALID_STATE (closed), CUDA.
    void copy_from(const OpaqueArray &src, const Stream &stream) const {
        detail::check(cucore_opaque_array_copy_from_array(handle_, src.get(), stream.get()));
    }
    void copy_to(const OpaqueArray &dst, const Stream &stream) const {
        detail::check(cucore_opaque_array_copy_from_array(dst.get(), handle_, stream.get()));
    }

    // ---- Region copies (cuMemcpy3DAsync), ordered on `stream` ----
    // `extent` elements (width per row, rows, slices/layers/faces; BC: texels)
    // from `src` to `dst`: array to array, memory (a Buffer or host memory,
    // MemoryRegion of copy_3d.hpp, x in bytes) to array, or array to memory.
    // Every side is checked against its array's extents or its buffer's size
    // (host memory is the caller's to vouch for). Throws Error: INVALID_HANDLE,
    // INVALID_ARGUMENT (a region outside its array or buffer, BC offsets or
    // extents off the 4x4 grid, element sizes that differ, rows above 1 for a
    // 1D array, a zero extent, overflow), INVALID_STATE (a closed array or
    // buffer), CUDA.
    static void copy(const ArrayRegion &dst, const ArrayRegion &src, const Extent3D &extent, const Stream &stream);
    static void copy(const ArrayRegion &dst, const MemoryRegion &src, const Extent3D &extent, const Stream &stream);
    static void copy(const MemoryRegion &dst, const ArrayRegion &src, const Extent3D &extent, const Stream &stream);
};

static_assert(sizeof(OpaqueArray) == sizeof(void *), "an OpaqueArray is exactly one C handle");

// One array side of a region copy: `array`, from element x of row y of slice z
// (at(); BC: texels, multiples of 4). z is the slice of a 3D array, the layer
// of a layered one, the face of a cubemap (+X, -X, +Y, -Y, +Z, -Z), 6 x cubemap
// + face of a layered cubemap. It refers to the array without holding it: keep
// the array alive until the copy is queued.
class ArrayRegion {
public:
    explicit ArrayRegion(const OpaqueArray &array) noexcept { region_.array = array.get(); }
    // A temporary array would be gone before the copy: name a variable.
    explicit ArrayRegion(OpaqueArray &&) = delete;

    // Where in the array the copy starts, in elements.
    ArrayRegion &at(std::uint64_t x, std::uint64_t y = 0, std::uint64_t z = 0) noexcept {
        region_.x = x;
        region_.y = y;
        region_.z = z;
        return *this;
    }

    const cucore_array_region_t &to_c() const noexcept { return region_; }

private:
    cucore_array_region_t region_ = CUCORE_ARRAY_REGION_INIT;
};

// The C descriptor of a region copy (CUCORE_OPAQUE_ARRAY_COPY_INIT, then the
// sides and `extent` as width, height, depth in elements).
inline cucore_opaque_array_copy_t to_c(const ArrayRegion &dst, const ArrayRegion &src,
                                       const Extent3D &extent) noexcept {
    cucore_opaque_array_copy_t c = CUCORE_OPAQUE_ARRAY_COPY_INIT;
    c.dst_array = dst.to_c();
    c.src_array = src.to_c();
    c.width = extent.width;
    c.height = extent.rows;
    c.depth = extent.depth;
    return c;
}
inline cucore_opaque_array_copy_t to_c(const ArrayRegion &dst, const MemoryRegion &src,
                                       const Extent3D &extent) noexcept {
    cucore_opaque_array_copy_t c = CUCORE_OPAQUE_ARRAY_COPY_INIT;
    c.dst_array = dst.to_c();
    c.src_memory = src.to_c();
    c.width = extent.width;
    c.height = extent.rows;
    c.depth = extent.depth;
    return c;
}
inline cucore_opaque_array_copy_t to_c(const MemoryRegion &dst, const ArrayRegion &src,
                                       const Extent3D &extent) noexcept {
    cucore_opaque_array_copy_t c = CUCORE_OPAQUE_ARRAY_COPY_INIT;
    c.dst_memory = dst.to_c();
    c.src_array = src.to_c();
    c.width = extent.width;
    c.height = extent.rows;
    c.depth = extent.depth;
    return c;
}

inline void OpaqueArray::copy(const ArrayRegion &dst, const ArrayRegion &src, const Extent3D &extent,
                              const Stream &stream) {
    const cucore_opaque_array_copy_t c = to_c(dst, src, extent);
    detail::check(cucore_opaque_array_copy(&c, stream.get()));
}
inline void OpaqueArray::copy(const ArrayRegion &dst, const MemoryRegion &src, const Extent3D &extent,
                              const Stream &stream) {
    const cucore_opaque_array_copy_t c = to_c(dst, src, extent);
    detail::check(cucore_opaque_array_copy(&c, stream.get()));
}
inline void OpaqueArray::copy(const MemoryRegion &dst, const ArrayRegion &src, const Extent3D &extent,
                              const Stream &stream) {
    const cucore_opaque_array_copy_t c = to_c(dst, src, extent);
    detail::check(cucore_opaque_array_copy(&c, stream.get()));
}

// A mipmapped array (cuda.core: MipmappedArray): a chain of levels, each an
// OpaqueArray (level()) that keeps this one alive. Copies share the one
// library object. A default-constructed MipmappedArray is empty.
class MipmappedArray : public Handle<MipmappedArray, cucore_mipmapped_array_t> {
public:
    MipmappedArray() noexcept = default;

    // A new mipmapped array of `num_levels` levels on `device`, owned by the
    // result; `options` describe level 0 as for OpaqueArray::create.
    // `num_levels` is 1 to 1 + floor(log2(largest extent)). Throws as
    // OpaqueArray::create, and INVALID_ARGUMENT (num_levels 0 or above the
    // maximum, which the message names).
    static MipmappedArray create(const Device &device, const OpaqueArrayOptions &options, std::uint32_t num_levels) {
        const cucore_opaque_array_options_t o = options.to_c();
        cucore_mipmapped_array_t *raw = nullptr;
        detail::check(cucore_mipmapped_array_create(device.get(), &o, num_levels, &raw));
        return adopt(raw);
    }

    // Wraps a foreign CUmipmappedArray of `device` without owning it, as
    // OpaqueArray::from_handle (the level count is found by asking the driver).
    // Throws as OpaqueArray::from_handle.
    static MipmappedArray from_handle(const Device &device, void *cu_mipmapped_array,
                                      cucore_release_fn on_release = nullptr, void *user_data = nullptr) {
        cucore_mipmapped_array_t *raw = nullptr;
        detail::check(
            cucore_mipmapped_array_from_handle(device.get(), cu_mipmapped_array, on_release, user_data, &raw));
        return adopt(raw);
    }

    // Level 0's description, with num_levels. Throws Error: INVALID_HANDLE,
    // INVALID_STATE (closed, an unmapped GL image).
    OpaqueArrayInfo info() const {
        OpaqueArrayInfo result = CUCORE_OPAQUE_ARRAY_INFO_INIT;
        detail::check(cucore_mipmapped_array_info(handle_, &result));
        return result;
    }

    // The number of levels. Throws as info().
    std::uint32_t num_levels() const { return info().num_levels; }

    // Level `level` as an array that is not owned and keeps this mipmapped
    // array alive (and a mapped GL image's mapping). Throws Error:
    // INVALID_HANDLE, INVALID_ARGUMENT (level >= num_levels: the message names
    // the count), INVALID_STATE (closed), CUDA.
    OpaqueArray level(std::uint32_t level) const {
        cucore_opaque_array_t *raw = nullptr;
        detail::check(cucore_mipmapped_array_level(handle_, level, &raw));
        return OpaqueArray::adopt(raw);
    }

    // The raw CUmipmappedArray, borrowed: valid while it is open. Throws as info().
    void *handle() const {
        void *raw = nullptr;
        detail::check(cucore_mipmapped_array_handle(handle_, &raw));
        return raw;
    }

    // Lets go of it now: destroyed at once unless levels or texture objects
    // still use it. Idempotent; every other call then throws INVALID_STATE.
    // Throws Error: INVALID_HANDLE.
    void close() const { detail::check(cucore_mipmapped_array_close(handle_)); }
};

static_assert(sizeof(MipmappedArray) == sizeof(void *), "a MipmappedArray is exactly one C handle");

// Device's factories (declared in device.hpp).
inline OpaqueArray Device::create_opaque_array(const OpaqueArrayOptions &options) const {
    return OpaqueArray::create(*this, options);
}

inline MipmappedArray Device::create_mipmapped_array(const OpaqueArrayOptions &options,
                                                     std::uint32_t num_levels) const {
    return MipmappedArray::create(*this, options, num_levels);
}

} // namespace cucore

#endif // CUCORE_OPAQUE_ARRAY_HPP
