#include "core/texture.hpp"

#include <string>

#include "core/device.hpp"
#include "core/enum_value.hpp"
#include "core/error.hpp"
#include "core/owned.hpp"
#include "core/release.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

namespace {

std::string format_name(const ArrayFormatTraits &format) { return std::string("CUCORE_ARRAY_FORMAT_") + format.name; }

// A buffer's format and channels, checked as an array's are.
ArrayShape buffer_shape(const ResourceRequest &request) {
    ArrayShape shape;
    shape.format = array_format_traits(enum_value(request.format));
    if (!shape.format) throw_invalid_argument("resource.format is unset; a buffer resource names its elements' format");
    if (shape.format->block_compressed)
        throw_invalid_argument("resource.format is " + format_name(*shape.format) +
                               ", a block-compressed format: those are read from arrays only");
    shape.num_channels = channels_of(*shape.format, request.num_channels, "resource.num_channels");
    return shape;
}

CUaddress_mode driver_address_mode(cucore_address_mode_t mode) noexcept {
    switch (mode) {
        case CUCORE_ADDRESS_MODE_WRAP: return CU_TR_ADDRESS_MODE_WRAP;
        case CUCORE_ADDRESS_MODE_MIRROR: return CU_TR_ADDRESS_MODE_MIRROR;
        case CUCORE_ADDRESS_MODE_BORDER: return CU_TR_ADDRESS_MODE_BORDER;
        default: return CU_TR_ADDRESS_MODE_CLAMP;
    }
}

CUfilter_mode driver_filter_mode(cucore_filter_mode_t mode) noexcept {
    return mode == CUCORE_FILTER_MODE_LINEAR ? CU_TR_FILTER_MODE_LINEAR : CU_TR_FILTER_MODE_POINT;
}

void destroy_texture(CUtexObject texture, CUcontext context, const char *what) noexcept {
    ScopedContext bind(context, ScopedContext::ReleasePath{what});
    release_reported("cuTexObjectDestroy", what, [texture](const driver::Table &api) {
        return api.cuTexObjectDestroy ? api.cuTexObjectDestroy(texture) : CUDA_ERROR_NOT_INITIALIZED;
    });
}

void destroy_surface(CUsurfObject surface, CUcontext context, const char *what) noexcept {
    ScopedContext bind(context, ScopedContext::ReleasePath{what});
    release_reported("cuSurfObjectDestroy", what, [surface](const driver::Table &api) {
        return api.cuSurfObjectDestroy ? api.cuSurfObjectDestroy(surface) : CUDA_ERROR_NOT_INITIALIZED;
    });
}

}  // namespace

// ---- Resources -------------------------------------------------------------------------

TextureResource TextureResource::resolve(const ResourceRequest &request, const Device *device) {
    TextureResource resource;
    switch (request.kind) {
        case CUCORE_RESOURCE_KIND_OPAQUE_ARRAY: {
            resource.storage = request.array->storage();
            resource.shape = request.array->shape();
            resource.descriptor.resType = CU_RESOURCE_TYPE_ARRAY;
            resource.descriptor.res.array.hArray = resource.storage->array();
            resource.is_array = true;
            break;
        }
        case CUCORE_RESOURCE_KIND_MIPMAPPED_ARRAY: {
            resource.storage = request.mipmapped_array->storage();
            resource.shape = request.mipmapped_array->shape();
            resource.descriptor.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
            resource.descriptor.res.mipmap.hMipmappedArray = resource.storage->mipmapped();
            resource.is_array = true;
            break;
        }
        case CUCORE_RESOURCE_KIND_LINEAR:
        case CUCORE_RESOURCE_KIND_PITCH_2D: {
            Buffer &buffer = *request.buffer;
            buffer.check_open("resource.buffer");
            if (!buffer.device_accessible() || buffer.device_id() < 0)
                throw_invalid_argument("resource.buffer is not device memory; textures read memory of a device");
            resource.shape = buffer_shape(request);
            const uint64_t element = resource.shape.element_size();
            Ref<Device> owner = Device::get(buffer.device_id());
            const CUdeviceptr address = buffer.address();
            const int alignment = owner->attribute(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT);
            if (alignment > 0 && address % static_cast<CUdeviceptr>(alignment) != 0)
                throw_invalid_argument("resource.buffer's address is not a multiple of the device's texture "
                                       "alignment (CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT = " +
                                       std::to_string(alignment) + " bytes); a view at an offset cannot be read");
            if (request.kind == CUCORE_RESOURCE_KIND_LINEAR) {
                const uint64_t size = request.size_bytes == 0 ? buffer.size() : request.size_bytes;
                if (size > buffer.size())
                    throw_invalid_argument("resource.size_bytes (" + std::to_string(size) +
                                           ") exceeds the buffer's size (" + std::to_string(buffer.size()) + ")");
                if (size < element || size % element != 0)
                    throw_invalid_argument("resource.size_bytes (" + std::to_string(size) +
                                           ") must be a positive multiple of the element size (" +
                                           std::to_string(element) + " bytes: " + format_name(*resource.shape.format) +
                                           " x " + std::to_string(resource.shape.num_channels) + ")");
                require_within(*owner, {CUCORE_LIMIT(size / element, "resource.size_bytes / element size",
                                                     MAXIMUM_TEXTURE1D_LINEAR_WIDTH, "maximum linear texture width")});
                resource.descriptor.resType = CU_RESOURCE_TYPE_LINEAR;
                resource.descriptor.res.linear.devPtr = address;
                resource.descriptor.res.linear.format = static_cast<CUarray_format>(request.format);
                resource.descriptor.res.linear.numChannels = resource.shape.num_channels;
                resource.descriptor.res.linear.sizeInBytes = static_cast<size_t>(size);
                resource.shape.width = size / element;
            } else {
                if (request.width == 0 || request.height == 0)
                    throw_invalid_argument("resource.width and resource.height must be at least 1 (got " +
                                           std::to_string(request.width) + " x " + std::to_string(request.height) +
                                           ")");
                if (request.width > UINT64_MAX / element || request.pitch_bytes < request.width * element)
                    throw_invalid_argument("resource.pitch_bytes (" + std::to_string(request.pitch_bytes) +
                                           ") is below width x element size (" + std::to_string(request.width) +
                                           " x " + std::to_string(element) + ")");
                const int pitch_alignment = owner->attribute(CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT);
                if (pitch_alignment > 0 && request.pitch_bytes % static_cast<uint64_t>(pitch_alignment) != 0)
                    throw_invalid_argument("resource.pitch_bytes (" + std::to_string(request.pitch_bytes) +
                                           ") is not a multiple of the device's texture pitch alignment "
                                           "(CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT = " +
                                           std::to_string(pitch_alignment) + ")");
                require_within(*owner, {CUCORE_LIMIT(request.width, "resource.width", MAXIMUM_TEXTURE2D_LINEAR_WIDTH,
                                                     "maximum pitched 2D texture width"),
                                        CUCORE_LIMIT(request.height, "resource.height", MAXIMUM_TEXTURE2D_LINEAR_HEIGHT,
                                                     "maximum pitched 2D texture height"),
                                        CUCORE_LIMIT(request.pitch_bytes, "resource.pitch_bytes",
                                                     MAXIMUM_TEXTURE2D_LINEAR_PITCH, "maximum pitched 2D texture pitch")});
                // The limits bound every factor, so the end cannot overflow.
                const uint64_t end = (request.height - 1) * request.pitch_bytes + request.width * element;
                if (end > buffer.size())
                    throw_invalid_argument("resource: " + std::to_string(request.height) + " rows of pitch " +
                                           std::to_string(request.pitch_bytes) + " end at byte " +
                                           std::to_string(end) + ", past the buffer's size (" +
                                           std::to_string(buffer.size()) + ")");
                resource.descriptor.resType = CU_RESOURCE_TYPE_PITCH2D;
                resource.descriptor.res.pitch2D.devPtr = address;
                resource.descriptor.res.pitch2D.format = static_cast<CUarray_format>(request.format);
                resource.descriptor.res.pitch2D.numChannels = resource.shape.num_channels;
                resource.descriptor.res.pitch2D.width = static_cast<size_t>(request.width);
                resource.descriptor.res.pitch2D.height = static_cast<size_t>(request.height);
                resource.descriptor.res.pitch2D.pitchInBytes = static_cast<size_t>(request.pitch_bytes);
                resource.shape.width = request.width;
                resource.shape.height = request.height;
            }
            resource.allocation = buffer.allocation();
            if (!resource.allocation) throw Error(CUCORE_ERROR_INVALID_STATE, "resource.buffer is closed");
            resource.context = owner->primary_context();
            break;
        }
        default: throw_invalid_argument("resource.kind is not a cucore_resource_kind_t");  // capi checked it
    }
    if (resource.storage) resource.context = Ref<Context>(&resource.storage->context());
    if (device && device->ordinal() != resource.context->device().ordinal())
        throw_invalid_argument("argument 'device' is device " + std::to_string(device->ordinal()) +
                               ", but the resource is on device " +
                               std::to_string(resource.context->device().ordinal()));
    return resource;
}

CUDA_TEXTURE_DESC texture_descriptor(const TextureResource &resource, const cucore_texture_object_options_t &options) {
    const ArrayFormatTraits &format = *resource.shape.format;
    const bool integer_elements = format.integer && options.read_mode == CUCORE_READ_MODE_ELEMENT_TYPE;
    if (integer_elements &&
        (options.filter_mode == CUCORE_FILTER_MODE_LINEAR || options.mipmap_filter_mode == CUCORE_FILTER_MODE_LINEAR))
        throw_invalid_argument(std::string("options.") +
                               (options.filter_mode == CUCORE_FILTER_MODE_LINEAR ? "filter_mode" : "mipmap_filter_mode") +
                               " is LINEAR over " + format_name(format) +
                               " elements read as ELEMENT_TYPE: integers cannot be interpolated (read them as "
                               "CUCORE_READ_MODE_NORMALIZED_FLOAT, or use POINT)");
    if (format.integer && options.read_mode == CUCORE_READ_MODE_NORMALIZED_FLOAT && format.unit_bytes == 4)
        throw_invalid_argument("options.read_mode is NORMALIZED_FLOAT over " + format_name(format) +
                               " elements: only 8- and 16-bit integers are read normalized");
    if (format.srgb && !options.srgb)
        throw_invalid_argument("the resource's format " + format_name(format) +
                               " is sRGB-encoded: set options.srgb to read it");
    if (options.seamless_cubemap && !(resource.is_array && resource.shape.is_cubemap()))
        throw_invalid_argument("options.seamless_cubemap is set but the resource is not a cubemap");

    CUDA_TEXTURE_DESC descriptor{};
    for (int i = 0; i < 3; ++i) descriptor.addressMode[i] = driver_address_mode(options.address_mode[i]);
    descriptor.filterMode = driver_filter_mode(options.filter_mode);
    unsigned flags = 0;
    if (integer_elements) flags |= CU_TRSF_READ_AS_INTEGER;
    if (options.normalized_coords) flags |= CU_TRSF_NORMALIZED_COORDINATES;
    if (options.srgb) flags |= CU_TRSF_SRGB;
    if (options.disable_trilinear_optimization) flags |= CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION;
    if (options.seamless_cubemap) flags |= CU_TRSF_SEAMLESS_CUBEMAP;
    descriptor.flags = flags;
    descriptor.maxAnisotropy = options.max_anisotropy;
    descriptor.mipmapFilterMode = driver_filter_mode(options.mipmap_filter_mode);
    descriptor.mipmapLevelBias = options.mipmap_level_bias;
    descriptor.minMipmapLevelClamp = options.min_mipmap_level_clamp;
    descriptor.maxMipmapLevelClamp = options.max_mipmap_level_clamp;
    for (int i = 0; i < 4; ++i) descriptor.borderColor[i] = options.border_color[i];
    return descriptor;
}

// ---- TextureObject ---------------------------------------------------------------------

Ref<TextureObject> TextureObject::create(TextureResource resource, const cucore_texture_object_options_t &options) {
    const CUDA_TEXTURE_DESC descriptor = texture_descriptor(resource, options);
    const CUcontext context = resource.context->cu();
    CUtexObject raw = 0;
    {
        ScopedContext bind(context);
        const CUresult result = CUCORE_DRIVER(cuTexObjectCreate)(&raw, &resource.descriptor, &descriptor, nullptr);
        if (result != CUDA_SUCCESS)
            throw Error(status_of(result),
                        "the driver refused the texture object (cuTexObjectCreate: " + cuda_error_name(result) + ")",
                        static_cast<int>(result));
    }
    auto made = own(raw, [context](CUtexObject unmade) noexcept {
        destroy_texture(unmade, context, "destroying a texture object that was not made");
    });
    Ref<TextureObject> texture = make<TextureObject>(std::move(resource), raw);
    made.release();  // the TextureObject destroys it from here
    return texture;
}

TextureObject::TextureObject(TextureResource resource, CUtexObject texture) noexcept
    : Object(CUCORE_OBJECT_TEXTURE_OBJECT), resource_(std::move(resource)), texture_(texture) {}

TextureObject::~TextureObject() {
    if (!closed_) destroy_texture(texture_, resource_.context->cu(), "destroying a texture object");
    // The resource (array storage, buffer memory) goes after, with the members.
}

uint64_t TextureObject::handle() const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) throw Error(CUCORE_ERROR_INVALID_STATE, "the texture object is closed");
    return static_cast<uint64_t>(texture_);
}

void TextureObject::close() {
    TextureResource released;
    CUresult result = CUDA_SUCCESS;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (closed_) return;
        {
            ScopedContext bind(resource_.context->cu());
            result = CUCORE_DRIVER(cuTexObjectDestroy)(texture_);
        }
        closed_ = true;
        released = std::move(resource_);  // let go of outside the lock: the array may be destroyed with it
    }
    if (result != CUDA_SUCCESS) throw_cuda(result, "cuTexObjectDestroy");
}

// ---- SurfaceObject ---------------------------------------------------------------------

Ref<SurfaceObject> SurfaceObject::create(TextureResource resource) {
    if (!(resource.shape.flags & CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE))
        throw_invalid_argument("resource.array was not created with CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE "
                               "(is_surface_load_store=True); a surface object needs it");
    const CUcontext context = resource.context->cu();
    CUsurfObject raw = 0;
    {
        ScopedContext bind(context);
        const CUresult result = CUCORE_DRIVER(cuSurfObjectCreate)(&raw, &resource.descriptor);
        if (result != CUDA_SUCCESS)
            throw Error(status_of(result),
                        "the driver refused the surface object (cuSurfObjectCreate: " + cuda_error_name(result) + ")",
                        static_cast<int>(result));
    }
    auto made = own(raw, [context](CUsurfObject unmade) noexcept {
        destroy_surface(unmade, context, "destroying a surface object that was not made");
    });
    Ref<SurfaceObject> surface = make<SurfaceObject>(std::move(resource), raw);
    made.release();
    return surface;
}

SurfaceObject::SurfaceObject(TextureResource resource, CUsurfObject surface) noexcept
    : Object(CUCORE_OBJECT_SURFACE_OBJECT), resource_(std::move(resource)), surface_(surface) {}

SurfaceObject::~SurfaceObject() {
    if (!closed_) destroy_surface(surface_, resource_.context->cu(), "destroying a surface object");
}

uint64_t SurfaceObject::handle() const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) throw Error(CUCORE_ERROR_INVALID_STATE, "the surface object is closed");
    return static_cast<uint64_t>(surface_);
}

void SurfaceObject::close() {
    TextureResource released;
    CUresult result = CUDA_SUCCESS;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (closed_) return;
        {
            ScopedContext bind(resource_.context->cu());
            result = CUCORE_DRIVER(cuSurfObjectDestroy)(surface_);
        }
        closed_ = true;
        released = std::move(resource_);
    }
    if (result != CUDA_SUCCESS) throw_cuda(result, "cuSurfObjectDestroy");
}

}  // namespace cucore::core
