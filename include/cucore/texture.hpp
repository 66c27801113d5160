// libcucore C++ façade: texture and surface objects (over cucore/texture.h).
//
//   cucore::TextureObjectOptions o;
//   o.filter_mode = CUCORE_FILTER_MODE_LINEAR;
//   o.read_mode = CUCORE_READ_MODE_NORMALIZED_FLOAT;   // uchar4 texels read as float4 in [0, 1]
//   o.normalized_coords = true;
//   cucore::TextureObject tex =
//       dev.create_texture_object(cucore::ResourceDescriptor::from_opaque_array(image), o);
//   cucore::launch(stream, config, kernel, tex, out_buffer, width, height);  // a cudaTextureObject_t
//
// A texture object (cuda.core: TextureObject) reads a resource through the
// texture units: an array, a mipmapped array, linear memory (a Buffer read as
// typed elements) or pitched 2D memory (a Buffer read as rows). A surface object
// (SurfaceObject) loads and stores the elements of an array created with
// CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE. Both are kernel arguments by their 64-bit
// handle (launch() passes them so, launch.hpp), and both keep their resource
// alive: the array, mipmapped array or buffer memory lives until the last object
// over it is gone, whatever is closed or released first.
#ifndef CUCORE_TEXTURE_HPP
#define CUCORE_TEXTURE_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "buffer.hpp"
#include "common.hpp"
#include "device.hpp"
#include "opaque_array.hpp"
#include "texture.h"

namespace cucore {

namespace detail {
// The C defaults, so the options default to exactly the *_INIT macros.
inline constexpr cucore_resource_descriptor_t kResourceDescriptorDefaults = CUCORE_RESOURCE_DESCRIPTOR_INIT;
inline constexpr cucore_texture_object_options_t kTextureObjectDefaults = CUCORE_TEXTURE_OBJECT_OPTIONS_INIT;
} // namespace detail

// What a texture or surface object reads (cuda.core: ResourceDescriptor), made
// by one of the named constructors. It holds a reference to its array,
// mipmapped array or buffer, so it may be made from a temporary and kept;
// copies share it. Making one checks nothing: TextureObject::create and
// SurfaceObject::create check the fields and throw.
class ResourceDescriptor {
public:
    // An empty descriptor (kind UNSET): creating an object over it throws
    // INVALID_ARGUMENT. Assign one made by a named constructor.
    ResourceDescriptor() noexcept = default;

    // All of an array. Throws Error (INVALID_HANDLE) only when `array` holds a
    // handle that is no longer valid (holding it retains it).
    static ResourceDescriptor from_opaque_array(const OpaqueArray &array) {
        ResourceDescriptor r;
        r.desc_.kind = CUCORE_RESOURCE_KIND_OPAQUE_ARRAY;
        r.array_ = array;
        r.desc_.array = r.array_.get();
        return r;
    }

    // All levels of a mipmapped array. Throws as from_opaque_array.
    static ResourceDescriptor from_mipmapped_array(const MipmappedArray &mipmapped_array) {
        ResourceDescriptor r;
        r.desc_.kind = CUCORE_RESOURCE_KIND_MIPMAPPED_ARRAY;
        r.mipmapped_array_ = mipmapped_array;
        r.desc_.mipmapped_array = r.mipmapped_array_.get();
        return r;
    }

    // `size_bytes` of `buffer` from its start (0: the whole buffer) as 1D
    // elements of `format` x `num_channels` (0: as for arrays), read in kernels
    // with tex1Dfetch: no filtering, no normalized coordinates. Creation checks
    // a size within the buffer and a multiple of the element size, and the
    // buffer's address against the device's texture alignment. Throws as
    // from_opaque_array.
    static ResourceDescriptor from_linear(const Buffer &buffer, cucore_array_format_t format,
                                          std::uint32_t num_channels = 0, std::uint64_t size_bytes = 0) {
        ResourceDescriptor r;
        r.desc_.kind = CUCORE_RESOURCE_KIND_LINEAR;
        r.buffer_ = buffer;
        r.desc_.buffer = r.buffer_.get();
        r.desc_.format = format;
        r.desc_.num_channels = num_channels;
        r.desc_.size_bytes = size_bytes;
        return r;
    }

    // `height` rows of `width` elements of `format` x `num_channels` (0: as for
    // arrays), `pitch_bytes` apart, from the start of `buffer`. Creation checks
    // pitch >= width x element size, the pitch against the device's texture
    // pitch alignment, the rows within the buffer and the address against the
    // texture alignment. Throws as from_opaque_array.
    static ResourceDescriptor from_pitch2d(const Buffer &buffer, cucore_array_format_t format,
                                           std::uint32_t num_channels, std::uint64_t width, std::uint64_t height,
                                           std::uint64_t pitch_bytes) {
        ResourceDescriptor r;
        r.desc_.kind = CUCORE_RESOURCE_KIND_PITCH_2D;
        r.buffer_ = buffer;
        r.desc_.buffer = r.buffer_.get();
        r.desc_.format = format;
        r.desc_.num_channels = num_channels;
        r.desc_.width = width;
        r.desc_.height = height;
        r.desc_.pitch_bytes = pitch_bytes;
        return r;
    }

    // What it describes. Never throws.
    cucore_resource_kind_t kind() const noexcept { return desc_.kind; }

    // The C descriptor; its handles are this object's and valid while it lives.
    const cucore_resource_descriptor_t &to_c() const noexcept { return desc_; }

    // The resource (an empty handle where another kind is described). Never throw.
    const OpaqueArray &opaque_array() const noexcept { return array_; }
    const MipmappedArray &mipmapped_array() const noexcept { return mipmapped_array_; }
    const Buffer &buffer() const noexcept { return buffer_; }

    // Copies share the resource; the C descriptor follows the copy's handles.
    ResourceDescriptor(const ResourceDescriptor &other)
        : desc_(other.desc_), array_(other.array_), mipmapped_array_(other.mipmapped_array_),
          buffer_(other.buffer_) {
        rebind();
    }
    ResourceDescriptor(ResourceDescriptor &&other) noexcept
        : desc_(other.desc_), array_(std::move(other.array_)), mipmapped_array_(std::move(other.mipmapped_array_)),
          buffer_(std::move(other.buffer_)) {
        rebind();
        other.rebind();
    }
    ResourceDescriptor &operator=(const ResourceDescriptor &other) {
        if (this != &other) {
            ResourceDescriptor copy(other);
            *this = std::move(copy);
        }
        return *this;
    }
    ResourceDescriptor &operator=(ResourceDescriptor &&other) noexcept {
        if (this != &other) {
            desc_ = other.desc_;
            array_ = std::move(other.array_);
            mipmapped_array_ = std::move(other.mipmapped_array_);
            buffer_ = std::move(other.buffer_);
            rebind();
            other.rebind();
        }
        return *this;
    }
    ~ResourceDescriptor() = default;

private:
    // The C descriptor's handles are the held ones (the same library objects).
    void rebind() noexcept {
        desc_.array = array_.get();
        desc_.mipmapped_array = mipmapped_array_.get();
        desc_.buffer = buffer_.get();
    }

    cucore_resource_descriptor_t desc_ = detail::kResourceDescriptorDefaults;
    OpaqueArray array_;
    MipmappedArray mipmapped_array_;
    Buffer buffer_;
};

// How a texture object samples (cuda.core: TextureObjectOptions): the fields of
// cucore_texture_object_options_t, zero/false meaning the default.
struct TextureObjectOptions {
    // What a coordinate outside [0, extent) reads, per dimension (x, y, z):
    // CLAMP (default), WRAP and MIRROR (normalized coordinates only), BORDER.
    std::array<cucore_address_mode_t, 3> address_mode = {detail::kTextureObjectDefaults.address_mode[0],
                                                         detail::kTextureObjectDefaults.address_mode[1],
                                                         detail::kTextureObjectDefaults.address_mode[2]};
    cucore_filter_mode_t filter_mode = detail::kTextureObjectDefaults.filter_mode; // POINT or LINEAR (float results)
    // ELEMENT_TYPE (default) or NORMALIZED_FLOAT (8/16-bit integers as [0, 1] or [-1, 1]).
    cucore_read_mode_t read_mode = detail::kTextureObjectDefaults.read_mode;
    bool normalized_coords = detail::kTextureObjectDefaults.normalized_coords != 0; // coordinates in [0, 1)
    bool srgb = detail::kTextureObjectDefaults.srgb != 0;                           // required by *_SRGB formats
    bool disable_trilinear_optimization = detail::kTextureObjectDefaults.disable_trilinear_optimization != 0;
    bool seamless_cubemap = detail::kTextureObjectDefaults.seamless_cubemap != 0; // cubemap resources only
    std::uint32_t max_anisotropy = detail::kTextureObjectDefaults.max_anisotropy; // 0..16
    cucore_filter_mode_t mipmap_filter_mode = detail::kTextureObjectDefaults.mipmap_filter_mode;
    float mipmap_level_bias = detail::kTextureObjectDefaults.mipmap_level_bias;
    float min_mipmap_level_clamp = detail::kTextureObjectDefaults.min_mipmap_level_clamp;
    float max_mipmap_level_clamp = detail::kTextureObjectDefaults.max_mipmap_level_clamp;
    std::array<float, 4> border_color = {0.0f, 0.0f, 0.0f, 0.0f}; // what BORDER reads, per channel

    // The C options these stand for.
    cucore_texture_object_options_t to_c() const noexcept {
        cucore_texture_object_options_t o = detail::kTextureObjectDefaults;
        for (int i = 0; i < 3; ++i) o.address_mode[i] = address_mode[static_cast<std::size_t>(i)];
        o.filter_mode = filter_mode;
        o.read_mode = read_mode;
        o.normalized_coords = normalized_coords ? 1u : 0u;
        o.srgb = srgb ? 1u : 0u;
        o.disable_trilinear_optimization = disable_trilinear_optimization ? 1u : 0u;
        o.seamless_cubemap = seamless_cubemap ? 1u : 0u;
        o.max_anisotropy = max_anisotropy;
        o.mipmap_filter_mode = mipmap_filter_mode;
        o.mipmap_level_bias = mipmap_level_bias;
        o.min_mipmap_level_clamp = min_mipmap_level_clamp;
        o.max_mipmap_level_clamp = max_mipmap_level_clamp;
        for (int i = 0; i < 4; ++i) o.border_color[i] = border_color[static_cast<std::size_t>(i)];
        return o;
    }
};

// A texture object (cuda.core: TextureObject); a kernel argument by its 64-bit
// handle (cudaTextureObject_t). It holds its resource until it is gone. Copies
// share the one library object. A default-constructed TextureObject is empty.
class TextureObject : public Handle<TextureObject, cucore_texture_object_t> {
public:
    TextureObject() noexcept = default;

    // A texture object over `resource` with `options` (defaults when not
    // given), in the resource's device's primary context; `device`, when
    // given, must be the resource's. Checked before the driver: the
    // descriptor's fields for its kind, linear and pitched regions within their
    // buffer, alignments, linear filtering of integer elements read as
    // ELEMENT_TYPE (integers cannot be interpolated), a *_SRGB format without
    // srgb, seamless_cubemap over a resource that is not a cubemap, anisotropy
    // above 16, mipmap fields that are not finite. Throws Error:
    // INVALID_HANDLE, INVALID_ARGUMENT (those checks, another device),
    // INVALID_STATE (a closed array or buffer), CUDA.
    static TextureObject create(const ResourceDescriptor &resource) { return make(nullptr, resource, nullptr); }
    static TextureObject create(const ResourceDescriptor &resource, const TextureObjectOptions &options) {
        const cucore_texture_object_options_t o = options.to_c();
        return make(nullptr, resource, &o);
    }
    static TextureObject create(const Device &device, const ResourceDescriptor &resource) {
        return make(device.get(), resource, nullptr);
    }
    static TextureObject create(const Device &device, const ResourceDescriptor &resource,
                                const TextureObjectOptions &options) {
        const cucore_texture_object_options_t o = options.to_c();
        return make(device.get(), resource, &o);
    }

    // The CUtexObject: the kernel argument (cudaTextureObject_t, an unsigned
    // 64-bit value). Throws Error: INVALID_HANDLE, INVALID_STATE (closed).
    std::uint64_t handle() const {
        std::uint64_t h = 0;
        detail::check(cucore_texture_object_handle(handle_, &h));
        return h;
    }

    // Destroys the texture object now and lets go of its resource. Idempotent;
    // the object stays valid and handle() then throws INVALID_STATE. Throws
    // Error: INVALID_HANDLE, CUDA (the driver object is gone anyway).
    void close() const { detail::check(cucore_texture_object_close(handle_)); }

private:
    static TextureObject make(cucore_device_t *device, const ResourceDescriptor &resource,
                              const cucore_texture_object_options_t *options) {
        cucore_texture_object_t *raw = nullptr;
        detail::check(cucore_texture_object_create(device, &resource.to_c(), options, &raw));
        return adopt(raw);
    }
};

static_assert(sizeof(TextureObject) == sizeof(void *), "a TextureObject is exactly one C handle");

// A surface object (cuda.core: SurfaceObject) over an array created with
// CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE; a kernel argument by its 64-bit handle
// (cudaSurfaceObject_t). It holds the array until it is gone. Copies share the
// one library object. A default-constructed SurfaceObject is empty.
class SurfaceObject : public Handle<SurfaceObject, cucore_surface_object_t> {
public:
    SurfaceObject() noexcept = default;

    // A surface object over `resource` (an OPAQUE_ARRAY descriptor), in the
    // array's device's primary context; `device`, when given, must be the
    // array's. Throws Error: INVALID_HANDLE, INVALID_ARGUMENT (another resource
    // kind, an array without surface load/store: the message names the flag,
    // another device), INVALID_STATE (a closed array), CUDA.
    static SurfaceObject create(const ResourceDescriptor &resource) { return make(nullptr, resource); }
    static SurfaceObject create(const Device &device, const ResourceDescriptor &resource) {
        return make(device.get(), resource);
    }

    // The CUsurfObject: the kernel argument (cudaSurfaceObject_t, an unsigned
    // 64-bit value). Throws Error: INVALID_HANDLE, INVALID_STATE (closed).
    std::uint64_t handle() const {
        std::uint64_t h = 0;
        detail::check(cucore_surface_object_handle(handle_, &h));
        return h;
    }

    // As TextureObject::close.
    void close() const { detail::check(cucore_surface_object_close(handle_)); }

private:
    static SurfaceObject make(cucore_device_t *device, const ResourceDescriptor &resource) {
        cucore_surface_object_t *raw = nullptr;
        detail::check(cucore_surface_object_create(device, &resource.to_c(), &raw));
        return adopt(raw);
    }
};

static_assert(sizeof(SurfaceObject) == sizeof(void *), "a SurfaceObject is exactly one C handle");

// Device's factories (declared in device.hpp).
inline TextureObject Device::create_texture_object(const ResourceDescriptor &resource) const {
    return TextureObject::create(*this, resource);
}

inline TextureObject Device::create_texture_object(const ResourceDescriptor &resource,
                                                   const TextureObjectOptions &options) const {
    return TextureObject::create(*this, resource, options);
}

inline SurfaceObject Device::create_surface_object(const ResourceDescriptor &resource) const {
    return SurfaceObject::create(*this, resource);
}

} // namespace cucore

#endif // CUCORE_TEXTURE_HPP
