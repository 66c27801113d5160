#include "core/opaque_array.hpp"

#include <cmath>
#include <string>

#include "core/device.hpp"
#include "core/enum_value.hpp"
#include "core/error.hpp"
#include "core/owned.hpp"
#include "core/release.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

// The public formats are the driver's values.
static_assert(CUCORE_ARRAY_FORMAT_UINT8 == static_cast<int>(CU_AD_FORMAT_UNSIGNED_INT8));
static_assert(CUCORE_ARRAY_FORMAT_UINT16 == static_cast<int>(CU_AD_FORMAT_UNSIGNED_INT16));
static_assert(CUCORE_ARRAY_FORMAT_UINT32 == static_cast<int>(CU_AD_FORMAT_UNSIGNED_INT32));
static_assert(CUCORE_ARRAY_FORMAT_INT8 == static_cast<int>(CU_AD_FORMAT_SIGNED_INT8));
static_assert(CUCORE_ARRAY_FORMAT_INT16 == static_cast<int>(CU_AD_FORMAT_SIGNED_INT16));
static_assert(CUCORE_ARRAY_FORMAT_INT32 == static_cast<int>(CU_AD_FORMAT_SIGNED_INT32));
static_assert(CUCORE_ARRAY_FORMAT_FLOAT16 == static_cast<int>(CU_AD_FORMAT_HALF));
static_assert(CUCORE_ARRAY_FORMAT_FLOAT32 == static_cast<int>(CU_AD_FORMAT_FLOAT));
static_assert(CUCORE_ARRAY_FORMAT_UNORM_INT_101010_2 == static_cast<int>(CU_AD_FORMAT_UNORM_INT_101010_2));
static_assert(CUCORE_ARRAY_FORMAT_BC1_UNORM == static_cast<int>(CU_AD_FORMAT_BC1_UNORM));
static_assert(CUCORE_ARRAY_FORMAT_BC7_UNORM_SRGB == static_cast<int>(CU_AD_FORMAT_BC7_UNORM_SRGB));
static_assert(CUCORE_ARRAY_FORMAT_UNORM_INT8X1 == static_cast<int>(CU_AD_FORMAT_UNORM_INT8X1));
static_assert(CUCORE_ARRAY_FORMAT_SNORM_INT16X4 == static_cast<int>(CU_AD_FORMAT_SNORM_INT16X4));

namespace {

constexpr ArrayFormatTraits kFormats[] = {
    // format, name, unit bytes, fixed channels, block, integer, srgb
    {CUCORE_ARRAY_FORMAT_UINT8, "UINT8", 1, 0, false, true, false},
    {CUCORE_ARRAY_FORMAT_UINT16, "UINT16", 2, 0, false, true, false},
    {CUCORE_ARRAY_FORMAT_UINT32, "UINT32", 4, 0, false, true, false},
    {CUCORE_ARRAY_FORMAT_INT8, "INT8", 1, 0, false, true, false},
    {CUCORE_ARRAY_FORMAT_INT16, "INT16", 2, 0, false, true, false},
    {CUCORE_ARRAY_FORMAT_INT32, "INT32", 4, 0, false, true, false},
    {CUCORE_ARRAY_FORMAT_FLOAT16, "FLOAT16", 2, 0, false, false, false},
    {CUCORE_ARRAY_FORMAT_FLOAT32, "FLOAT32", 4, 0, false, false, false},
    {CUCORE_ARRAY_FORMAT_UNORM_INT_101010_2, "UNORM_INT_101010_2", 4, 4, false, false, false},
    {CUCORE_ARRAY_FORMAT_BC1_UNORM, "BC1_UNORM", 8, 4, true, false, false},
    {CUCORE_ARRAY_FORMAT_BC1_UNORM_SRGB, "BC1_UNORM_SRGB", 8, 4, true, false, true},
    {CUCORE_ARRAY_FORMAT_BC2_UNORM, "BC2_UNORM", 16, 4, true, false, false},
    {CUCORE_ARRAY_FORMAT_BC2_UNORM_SRGB, "BC2_UNORM_SRGB", 16, 4, true, false, true},
    {CUCORE_ARRAY_FORMAT_BC3_UNORM, "BC3_UNORM", 16, 4, true, false, false},
    {CUCORE_ARRAY_FORMAT_BC3_UNORM_SRGB, "BC3_UNORM_SRGB", 16, 4, true, false, true},
    {CUCORE_ARRAY_FORMAT_BC4_UNORM, "BC4_UNORM", 8, 1, true, false, false},
    {CUCORE_ARRAY_FORMAT_BC4_SNORM, "BC4_SNORM", 8, 1, true, false, false},
    {CUCORE_ARRAY_FORMAT_BC5_UNORM, "BC5_UNORM", 16, 2, true, false, false},
    {CUCORE_ARRAY_FORMAT_BC5_SNORM, "BC5_SNORM", 16, 2, true, false, false},
    {CUCORE_ARRAY_FORMAT_BC6H_UF16, "BC6H_UF16", 16, 3, true, false, false},
    {CUCORE_ARRAY_FORMAT_BC6H_SF16, "BC6H_SF16", 16, 3, true, false, false},
    {CUCORE_ARRAY_FORMAT_BC7_UNORM, "BC7_UNORM", 16, 4, true, false, false},
    {CUCORE_ARRAY_FORMAT_BC7_UNORM_SRGB, "BC7_UNORM_SRGB", 16, 4, true, false, true},
    // Normalized integers: the channel count is in the format, the unit is one element.
    {CUCORE_ARRAY_FORMAT_UNORM_INT8X1, "UNORM_INT8X1", 1, 1, false, false, false},
    {CUCORE_ARRAY_FORMAT_UNORM_INT8X2, "UNORM_INT8X2", 2, 2, false, false, false},
    {CUCORE_ARRAY_FORMAT_UNORM_INT8X4, "UNORM_INT8X4", 4, 4, false, false, false},
    {CUCORE_ARRAY_FORMAT_UNORM_INT16X1, "UNORM_INT16X1", 2, 1, false, false, false},
    {CUCORE_ARRAY_FORMAT_UNORM_INT16X2, "UNORM_INT16X2", 4, 2, false, false, false},
    {CUCORE_ARRAY_FORMAT_UNORM_INT16X4, "UNORM_INT16X4", 8, 4, false, false, false},
    {CUCORE_ARRAY_FORMAT_SNORM_INT8X1, "SNORM_INT8X1", 1, 1, false, false, false},
    {CUCORE_ARRAY_FORMAT_SNORM_INT8X2, "SNORM_INT8X2", 2, 2, false, false, false},
    {CUCORE_ARRAY_FORMAT_SNORM_INT8X4, "SNORM_INT8X4", 4, 4, false, false, false},
    {CUCORE_ARRAY_FORMAT_SNORM_INT16X1, "SNORM_INT16X1", 2, 1, false, false, false},
    {CUCORE_ARRAY_FORMAT_SNORM_INT16X2, "SNORM_INT16X2", 4, 2, false, false, false},
    {CUCORE_ARRAY_FORMAT_SNORM_INT16X4, "SNORM_INT16X4", 8, 4, false, false, false},
};

// Extents beyond this are refused before any arithmetic (every device limit is far below it).
constexpr uint64_t kMaxExtent = 1u << 30;

const char *kind_name(cucore_array_kind_t kind) noexcept {
    switch (kind) {
        case CUCORE_ARRAY_KIND_LAYERED: return "layered";
        case CUCORE_ARRAY_KIND_CUBEMAP: return "cubemap";
        case CUCORE_ARRAY_KIND_LAYERED_CUBEMAP: return "layered cubemap";
        default: return "plain";
    }
}

void check_extent(uint64_t value, const char *field) {
    if (value > kMaxExtent)
        throw_invalid_argument(std::string("options.") + field + " (" + std::to_string(value) +
                               ") is beyond any device's array limits");
}

unsigned driver_flags(const ArrayShape &shape) noexcept {
    unsigned flags = 0;
    if (shape.kind == CUCORE_ARRAY_KIND_LAYERED || shape.kind == CUCORE_ARRAY_KIND_LAYERED_CUBEMAP)
        flags |= CUDA_ARRAY3D_LAYERED;
    if (shape.is_cubemap()) flags |= CUDA_ARRAY3D_CUBEMAP;
    if (shape.flags & CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE) flags |= CUDA_ARRAY3D_SURFACE_LDST;
    if (shape.flags & CUCORE_ARRAY_FLAG_TEXTURE_GATHER) flags |= CUDA_ARRAY3D_TEXTURE_GATHER;
    if (shape.flags & CUCORE_ARRAY_FLAG_DEPTH_TEXTURE) flags |= CUDA_ARRAY3D_DEPTH_TEXTURE;
    if (shape.flags & CUCORE_ARRAY_FLAG_SPARSE) flags |= CUDA_ARRAY3D_SPARSE;
    return flags;
}

// A driver refusal of an array description, with the description.
[[noreturn]] void throw_create_failure(CUresult result, const char *entry_point, const ArrayShape &shape) {
    throw Error(status_of(result),
                "the driver refused a " + shape.describe() + " (" + entry_point + ": " + cuda_error_name(result) + ")",
                static_cast<int>(result));
}

void destroy_array(CUarray array, CUcontext context, const char *what) noexcept {
    ScopedContext bind(context, ScopedContext::ReleasePath{what});
    release_reported("cuArrayDestroy", what, [array](const driver::Table &api) {
        return api.cuArrayDestroy ? api.cuArrayDestroy(array) : CUDA_ERROR_NOT_INITIALIZED;
    });
}

void destroy_mipmapped_array(CUmipmappedArray mipmapped, CUcontext context, const char *what) noexcept {
    ScopedContext bind(context, ScopedContext::ReleasePath{what});
    release_reported("cuMipmappedArrayDestroy", what, [mipmapped](const driver::Table &api) {
        return api.cuMipmappedArrayDestroy ? api.cuMipmappedArrayDestroy(mipmapped) : CUDA_ERROR_NOT_INITIALIZED;
    });
}

ArrayShape shape_of(CUarray array, CUcontext context) {
    CUDA_ARRAY3D_DESCRIPTOR descriptor{};
    ScopedContext bind(context);
    CUCORE_CALL(cuArray3DGetDescriptor, &descriptor, array);
    return ArrayShape::from_descriptor(descriptor);
}

uint64_t ceil_div(uint64_t value, uint64_t divisor) noexcept { return (value + divisor - 1) / divisor; }

}  // namespace

const DeviceLimit *first_exceeded(const Device &device, const DeviceLimit *limits, size_t count, int *maximum) {
    for (size_t i = 0; i < count; ++i) {
        *maximum = device.attribute(limits[i].attribute);
        if (limits[i].value > static_cast<uint64_t>(*maximum)) return &limits[i];
    }
    return nullptr;
}

void throw_limit(const DeviceLimit &limit, int maximum) {
    throw_invalid_argument(std::string(limit.field) + " " + std::to_string(limit.value) + " exceeds the device's " +
                           limit.what + " (" + limit.attribute_name + " = " + std::to_string(maximum) + ")");
}

const ArrayFormatTraits *array_format_traits(int32_t format) noexcept {
    for (const ArrayFormatTraits &traits : kFormats)
        if (static_cast<int32_t>(traits.format) == format) return &traits;
    return nullptr;
}

// ---- ArrayShape ------------------------------------------------------------------------

uint32_t channels_of(const ArrayFormatTraits &format, uint32_t requested, const char *field) {
    if (format.fixed_channels) {
        if (requested != 0 && requested != format.fixed_channels)
            throw_invalid_argument(std::string(field) + " is " + std::to_string(requested) + "; CUCORE_ARRAY_FORMAT_" +
                                   format.name + " has " + std::to_string(format.fixed_channels) + " (or leave it 0)");
        return format.fixed_channels;
    }
    const uint32_t channels = requested == 0 ? 1 : requested;
    if (channels != 1 && channels != 2 && channels != 4)
        throw_invalid_argument(std::string(field) + " is " + std::to_string(requested) + "; it must be 1, 2 or 4");
    return channels;
}

ArrayShape ArrayShape::from_options(const cucore_opaque_array_options_t &options) {
    ArrayShape shape;
    shape.format = array_format_traits(enum_value(options.format));
    if (!shape.format)  // capi refuses values that name no format; UNSET is the one left
        throw_invalid_argument("options.format is unset; name a cucore_array_format_t (CUCORE_ARRAY_FORMAT_FLOAT32, ...)");
    const ArrayFormatTraits &format = *shape.format;
    shape.num_channels = channels_of(format, options.num_channels, "options.num_channels");
    check_extent(options.width, "width");
    check_extent(options.height, "height");
    check_extent(options.depth, "depth");
    check_extent(options.layers, "layers");
    shape.kind = options.kind;
    shape.flags = options.flags;
    shape.width = options.width;
    shape.height = options.height;
    shape.depth = options.depth;
    shape.layers = options.layers;
    if (shape.width == 0) throw_invalid_argument("options.width is 0; an array has at least one element per row");
    switch (shape.kind) {
        case CUCORE_ARRAY_KIND_PLAIN:
            if (shape.layers != 0)
                throw_invalid_argument("options.layers is " + std::to_string(shape.layers) +
                                       " for a plain array; layers need kind CUCORE_ARRAY_KIND_LAYERED");
            if (shape.depth != 0 && shape.height == 0)
                throw_invalid_argument("options.depth is " + std::to_string(shape.depth) +
                                       " with height 0; a 3D array needs a height");
            break;
        case CUCORE_ARRAY_KIND_LAYERED:
            if (shape.depth != 0)
                throw_invalid_argument("options.depth is " + std::to_string(shape.depth) +
                                       " for a layered array; its layers are 1D or 2D (depth 0)");
            if (shape.layers == 0) throw_invalid_argument("options.layers is 0; a layered array has at least one layer");
            break;
        case CUCORE_ARRAY_KIND_CUBEMAP:
        case CUCORE_ARRAY_KIND_LAYERED_CUBEMAP: {
            const bool layered = shape.kind == CUCORE_ARRAY_KIND_LAYERED_CUBEMAP;
            if (shape.height != shape.width)
                throw_invalid_argument("options.height (" + std::to_string(shape.height) + ") differs from width (" +
                                       std::to_string(shape.width) + "); cubemap faces are square");
            if (shape.depth != 0)
                throw_invalid_argument("options.depth is " + std::to_string(shape.depth) +
                                       " for a cubemap; its six faces are implied (depth 0)");
            if (layered && shape.layers == 0)
                throw_invalid_argument("options.layers is 0; a layered cubemap has at least one cubemap");
            if (!layered && shape.layers != 0)
                throw_invalid_argument("options.layers is " + std::to_string(shape.layers) +
                                       " for a cubemap; several cubemaps need kind CUCORE_ARRAY_KIND_LAYERED_CUBEMAP");
            break;
        }
        default: throw_invalid_argument("options.kind is not a cucore_array_kind_t");  // capi checked it
    }
    if (format.block_compressed) {
        if (shape.is_1d())
            throw_invalid_argument(std::string("CUCORE_ARRAY_FORMAT_") + format.name +
                                   " is block-compressed: arrays of it are 2D or more (options.height is 0)");
        if (shape.flags & CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE)
            throw_invalid_argument(std::string("CUCORE_ARRAY_FORMAT_") + format.name +
                                   " is block-compressed: surfaces cannot store to it "
                                   "(options.flags has CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE)");
    }
    if ((shape.flags & CUCORE_ARRAY_FLAG_TEXTURE_GATHER) &&
        (shape.kind != CUCORE_ARRAY_KIND_PLAIN || shape.is_1d() || shape.depth != 0))
        throw_invalid_argument("options.flags has CUCORE_ARRAY_FLAG_TEXTURE_GATHER, which only 2D arrays take (this "
                               "is a " + shape.describe() + ")");
    return shape;
}

ArrayShape ArrayShape::from_descriptor(const CUDA_ARRAY3D_DESCRIPTOR &descriptor) {
    ArrayShape shape;
    shape.format = array_format_traits(static_cast<int32_t>(descriptor.Format));
    if (!shape.format) {
        char hex[16];
        std::snprintf(hex, sizeof hex, "%#x", static_cast<unsigned>(descriptor.Format));
        throw Error(CUCORE_ERROR_NOT_SUPPORTED,
                    std::string("the array's format (CUarray_format ") + hex + ") is not one libcucore offers");
    }
    shape.num_channels = descriptor.NumChannels;
    const bool layered = descriptor.Flags & CUDA_ARRAY3D_LAYERED;
    const bool cubemap = descriptor.Flags & CUDA_ARRAY3D_CUBEMAP;
    shape.width = descriptor.Width;
    shape.height = descriptor.Height;
    if (cubemap) {
        shape.kind = layered ? CUCORE_ARRAY_KIND_LAYERED_CUBEMAP : CUCORE_ARRAY_KIND_CUBEMAP;
        shape.layers = layered ? descriptor.Depth / 6 : 0;
    } else if (layered) {
        shape.kind = CUCORE_ARRAY_KIND_LAYERED;
        shape.layers = descriptor.Depth;
    } else {
        shape.depth = descriptor.Depth;
    }
    if (descriptor.Flags & CUDA_ARRAY3D_SURFACE_LDST) shape.flags |= CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE;
    if (descriptor.Flags & CUDA_ARRAY3D_TEXTURE_GATHER) shape.flags |= CUCORE_ARRAY_FLAG_TEXTURE_GATHER;
    if (descriptor.Flags & CUDA_ARRAY3D_DEPTH_TEXTURE) shape.flags |= CUCORE_ARRAY_FLAG_DEPTH_TEXTURE;
    if (descriptor.Flags & CUDA_ARRAY3D_SPARSE) shape.flags |= CUCORE_ARRAY_FLAG_SPARSE;
    return shape;
}

CUDA_ARRAY3D_DESCRIPTOR ArrayShape::descriptor() const noexcept {
    CUDA_ARRAY3D_DESCRIPTOR descriptor{};
    descriptor.Width = static_cast<size_t>(width);
    descriptor.Height = static_cast<size_t>(height);
    switch (kind) {
        case CUCORE_ARRAY_KIND_LAYERED: descriptor.Depth = static_cast<size_t>(layers); break;
        case CUCORE_ARRAY_KIND_CUBEMAP: descriptor.Depth = 6; break;
        case CUCORE_ARRAY_KIND_LAYERED_CUBEMAP: descriptor.Depth = static_cast<size_t>(6 * layers); break;
        default: descriptor.Depth = static_cast<size_t>(depth); break;
    }
    descriptor.Format = static_cast<CUarray_format>(format->format);
    descriptor.NumChannels = num_channels;
    descriptor.Flags = driver_flags(*this);
    return descriptor;
}

void ArrayShape::check_limits(const Device &device, bool mipmapped) const {
    const bool surface = flags & CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE;
    switch (kind) {
        case CUCORE_ARRAY_KIND_PLAIN:
            if (is_1d()) {
                if (mipmapped) {
                    require_within(device, {CUCORE_LIMIT(width, "options.width", MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH,
                                                         "maximum mipmapped 1D texture width")});
                } else {
                    require_within(device,
                                   {CUCORE_LIMIT(width, "options.width", MAXIMUM_TEXTURE1D_WIDTH, "maximum 1D texture width")});
                }
                if (surface)
                    require_within(device,
                                   {CUCORE_LIMIT(width, "options.width", MAXIMUM_SURFACE1D_WIDTH, "maximum 1D surface width")});
            } else if (depth == 0) {
                if (mipmapped) {
                    require_within(device, {CUCORE_LIMIT(width, "options.width", MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH,
                                                         "maximum mipmapped 2D texture width"),
                                            CUCORE_LIMIT(height, "options.height", MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT,
                                                         "maximum mipmapped 2D texture height")});
                } else {
                    require_within(device,
                                   {CUCORE_LIMIT(width, "options.width", MAXIMUM_TEXTURE2D_WIDTH, "maximum 2D texture width"),
                                    CUCORE_LIMIT(height, "options.height", MAXIMUM_TEXTURE2D_HEIGHT,
                                                 "maximum 2D texture height")});
                }
                if (flags & CUCORE_ARRAY_FLAG_TEXTURE_GATHER)
                    require_within(device, {CUCORE_LIMIT(width, "options.width", MAXIMUM_TEXTURE2D_GATHER_WIDTH,
                                                         "maximum 2D texture gather width"),
                                            CUCORE_LIMIT(height, "options.height", MAXIMUM_TEXTURE2D_GATHER_HEIGHT,
                                                         "maximum 2D texture gather height")});
                if (surface)
                    require_within(device,
                                   {CUCORE_LIMIT(width, "options.width", MAXIMUM_SURFACE2D_WIDTH, "maximum 2D surface width"),
                                    CUCORE_LIMIT(height, "options.height", MAXIMUM_SURFACE2D_HEIGHT,
                                                 "maximum 2D surface height")});
            } else {
                // 3D: the regular limits, or the alternate ones (narrower, deeper).
                const DeviceLimit regular[] = {
                    CUCORE_LIMIT(width, "options.width", MAXIMUM_TEXTURE3D_WIDTH, "maximum 3D texture width"),
                    CUCORE_LIMIT(height, "options.height", MAXIMUM_TEXTURE3D_HEIGHT, "maximum 3D texture height"),
                    CUCORE_LIMIT(depth, "options.depth", MAXIMUM_TEXTURE3D_DEPTH, "maximum 3D texture depth")};
                const DeviceLimit alternate[] = {
                    CUCORE_LIMIT(width, "options.width", MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE,
                                 "alternate maximum 3D texture width"),
                    CUCORE_LIMIT(height, "options.height", MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE,
                                 "alternate maximum 3D texture height"),
                    CUCORE_LIMIT(depth, "options.depth", MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE,
                                 "alternate maximum 3D texture depth")};
                int maximum = 0, alternate_maximum = 0;
                const DeviceLimit *exceeded = first_exceeded(device, regular, 3, &maximum);
                if (exceeded && !mipmapped && first_exceeded(device, alternate, 3, &alternate_maximum))
                    throw_limit(*exceeded, maximum);
                if (exceeded && mipmapped) throw_limit(*exceeded, maximum);
                if (surface)
                    require_within(device,
                                   {CUCORE_LIMIT(width, "options.width", MAXIMUM_SURFACE3D_WIDTH, "maximum 3D surface width"),
                                    CUCORE_LIMIT(height, "options.height", MAXIMUM_SURFACE3D_HEIGHT,
                                                 "maximum 3D surface height"),
                                    CUCORE_LIMIT(depth, "options.depth", MAXIMUM_SURFACE3D_DEPTH,
                                                 "maximum 3D surface depth")});
            }
            break;
        case CUCORE_ARRAY_KIND_LAYERED:
            if (is_1d()) {
                require_within(device, {CUCORE_LIMIT(width, "options.width", MAXIMUM_TEXTURE1D_LAYERED_WIDTH,
                                                     "maximum 1D layered texture width"),
                                        CUCORE_LIMIT(layers, "options.layers", MAXIMUM_TEXTURE1D_LAYERED_LAYERS,
                                                     "maximum 1D layered texture layers")});
                if (surface)
                    require_within(device, {CUCORE_LIMIT(width, "options.width", MAXIMUM_SURFACE1D_LAYERED_WIDTH,
                                                         "maximum 1D layered surface width"),
                                            CUCORE_LIMIT(layers, "options.layers", MAXIMUM_SURFACE1D_LAYERED_LAYERS,
                                                         "maximum 1D layered surface layers")});
            } else {
                require_within(device, {CUCORE_LIMIT(width, "options.width", MAXIMUM_TEXTURE2D_LAYERED_WIDTH,
                                                     "maximum 2D layered texture width"),
                                        CUCORE_LIMIT(height, "options.height", MAXIMUM_TEXTURE2D_LAYERED_HEIGHT,
                                                     "maximum 2D layered texture height"),
                                        CUCORE_LIMIT(layers, "options.layers", MAXIMUM_TEXTURE2D_LAYERED_LAYERS,
                                                     "maximum 2D layered texture layers")});
                if (surface)
                    require_within(device, {CUCORE_LIMIT(width, "options.width", MAXIMUM_SURFACE2D_LAYERED_WIDTH,
                                                         "maximum 2D layered surface width"),
                                            CUCORE_LIMIT(height, "options.height", MAXIMUM_SURFACE2D_LAYERED_HEIGHT,
                                                         "maximum 2D layered surface height"),
                                            CUCORE_LIMIT(layers, "options.layers", MAXIMUM_SURFACE2D_LAYERED_LAYERS,
                                                         "maximum 2D layered surface layers")});
            }
            break;
        case CUCORE_ARRAY_KIND_CUBEMAP:
            require_within(device, {CUCORE_LIMIT(width, "options.width", MAXIMUM_TEXTURECUBEMAP_WIDTH,
                                                 "maximum cubemap texture width")});
            if (surface)
                require_within(device, {CUCORE_LIMIT(width, "options.width", MAXIMUM_SURFACECUBEMAP_WIDTH,
                                                     "maximum cubemap surface width")});
            break;
        case CUCORE_ARRAY_KIND_LAYERED_CUBEMAP:
            require_within(device, {CUCORE_LIMIT(width, "options.width", MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH,
                                                 "maximum layered cubemap texture width"),
                                    CUCORE_LIMIT(layers, "options.layers", MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS,
                                                 "maximum layered cubemap texture layers")});
            if (surface)
                require_within(device, {CUCORE_LIMIT(width, "options.width", MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH,
                                                     "maximum layered cubemap surface width"),
                                        CUCORE_LIMIT(layers, "options.layers", MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS,
                                                     "maximum layered cubemap surface layers")});
            break;
        default: break;
    }
}

uint32_t ArrayShape::max_levels() const noexcept {
    uint64_t largest = width;
    if (height > largest) largest = height;
    if (kind == CUCORE_ARRAY_KIND_PLAIN && depth > largest) largest = depth;
    uint32_t levels = 1;
    while (largest > 1) {
        largest >>= 1;
        ++levels;
    }
    return levels;
}

uint32_t ArrayShape::element_size() const noexcept {
    if (format->fixed_channels) return format->unit_bytes;  // packed, normalized and BC formats
    return format->unit_bytes * num_channels;
}

uint64_t ArrayShape::row_bytes() const noexcept {
    return (format->block_compressed ? ceil_div(width, 4) : width) * element_size();
}

uint64_t ArrayShape::row_count() const noexcept {
    const uint64_t rows = height == 0 ? 1 : height;
    return format->block_compressed ? ceil_div(rows, 4) : rows;
}

uint64_t ArrayShape::slice_count() const noexcept {
    switch (kind) {
        case CUCORE_ARRAY_KIND_LAYERED: return layers;
        case CUCORE_ARRAY_KIND_CUBEMAP: return 6;
        case CUCORE_ARRAY_KIND_LAYERED_CUBEMAP: return 6 * layers;
        default: return depth == 0 ? 1 : depth;
    }
}

uint64_t ArrayShape::size_bytes() const noexcept { return row_bytes() * row_count() * slice_count(); }

std::string ArrayShape::describe() const {
    std::string text;
    if (kind == CUCORE_ARRAY_KIND_PLAIN)
        text = is_1d() ? "1D" : depth == 0 ? "2D" : "3D";
    else if (kind == CUCORE_ARRAY_KIND_LAYERED)
        text = is_1d() ? "1D layered" : "2D layered";
    else
        text = kind_name(kind);
    text += std::string(" ") + format->name + " x " + std::to_string(num_channels) + " array of " +
            std::to_string(width);
    if (!is_1d()) text += " x " + std::to_string(height);
    if (depth) text += " x " + std::to_string(depth);
    if (layers) text += ", " + std::to_string(layers) + (kind == CUCORE_ARRAY_KIND_LAYERED ? " layers" : " cubemaps");
    std::string flag_names;
    auto add = [&flag_names](const char *name) { flag_names += (flag_names.empty() ? "" : ", ") + std::string(name); };
    if (flags & CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE) add("surface load/store");
    if (flags & CUCORE_ARRAY_FLAG_TEXTURE_GATHER) add("texture gather");
    if (flags & CUCORE_ARRAY_FLAG_DEPTH_TEXTURE) add("depth texture");
    if (flags & CUCORE_ARRAY_FLAG_SPARSE) add("sparse");
    if (!flag_names.empty()) text += " (" + flag_names + ")";
    return text;
}

// ---- ArrayStorage ----------------------------------------------------------------------

ArrayStorage::ArrayStorage(Ref<Context> context, CUarray array, CUmipmappedArray mipmapped, Origin origin) noexcept
    : context_(std::move(context)), array_(array), mipmapped_(mipmapped), origin_(origin) {}

ArrayStorage::~ArrayStorage() {
    if (origin_ == Origin::created) {
        if (array_) destroy_array(array_, context_->cu(), "destroying an array");
        if (mipmapped_) destroy_mipmapped_array(mipmapped_, context_->cu(), "destroying a mipmapped array");
    } else if (origin_ == Origin::foreign) {
        owner_.notify();
    }
    // A level's parent and a lent array's lender go after this, with the members.
}

void ArrayStorage::check_usable() const {
    if (lender_ && !lender_->lends()) throw Error(CUCORE_ERROR_INVALID_STATE, lender_->ended_message());
    if (parent_) parent_->check_usable();
}

// ---- OpaqueArray -----------------------------------------------------------------------

namespace {

// Sparse arrays exist only where the device says so.
void check_sparse(const Device &device, const ArrayShape &shape) {
    if ((shape.flags & CUCORE_ARRAY_FLAG_SPARSE) &&
        !device.attribute(CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED))
        throw Error(CUCORE_ERROR_NOT_SUPPORTED, "device " + std::to_string(device.ordinal()) +
                                                    " has no sparse CUDA arrays "
                                                    "(CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED is 0)");
}

[[noreturn]] void throw_closed(const char *what) {
    throw Error(CUCORE_ERROR_INVALID_STATE, std::string("the ") + what + " is closed");
}

cucore_opaque_array_info_t info_of(const ArrayShape &shape, const ArrayStorage &storage, uint32_t num_levels) {
    cucore_opaque_array_info_t info = CUCORE_OPAQUE_ARRAY_INFO_INIT;
    info.format = shape.format->format;
    info.num_channels = shape.num_channels;
    info.element_size = shape.element_size();
    info.kind = shape.kind;
    info.flags = shape.flags;
    info.width = shape.width;
    info.height = shape.height;
    info.depth = shape.depth;
    info.layers = shape.layers;
    info.row_bytes = shape.row_bytes();
    info.row_count = shape.row_count();
    info.slice_count = shape.slice_count();
    info.size_bytes = shape.size_bytes();
    info.device_ordinal = storage.context().device().ordinal();
    info.is_owned = storage.origin() == ArrayStorage::Origin::created ? 1u : 0u;
    info.num_levels = num_levels;
    return info;
}

std::string packed_description(const ArrayShape &shape) {
    return std::to_string(shape.size_bytes()) + " bytes: " + std::to_string(shape.slice_count()) + " x " +
           std::to_string(shape.row_count()) + " rows of " + std::to_string(shape.row_bytes()) + " bytes, packed";
}

// A whole-array copy between `array` and packed linear memory of `have` bytes, which must hold the array
// (`what` names the memory's size in the message: "the buffer has").
void copy_whole(OpaqueArray &array, const CopySide &memory, uint64_t have, const char *what, bool into_array,
                Stream &stream) {
    const ArrayShape &shape = array.shape();
    if (have < shape.size_bytes())
        throw_invalid_argument(std::string(what) + " " + std::to_string(have) + " bytes, smaller than the array extent (" +
                               packed_description(shape) + ")");
    ArrayCopySide array_side;
    array_side.array = &array;
    ArrayCopySide memory_side;
    memory_side.memory = memory;
    memory_side.memory.region.pitch = shape.row_bytes();
    memory_side.memory.region.height = shape.row_count();
    const uint64_t rows = shape.is_1d() ? 1 : shape.height;
    if (into_array)
        copy_array_region(memory_side, array_side, shape.width, rows, shape.slice_count(), stream);
    else
        copy_array_region(array_side, memory_side, shape.width, rows, shape.slice_count(), stream);
}

}  // namespace

Ref<OpaqueArray> OpaqueArray::create(Device &device, const ArrayShape &shape) {
    shape.check_limits(device, false);
    check_sparse(device, shape);
    Ref<Context> context = device.primary_context();
    const CUDA_ARRAY3D_DESCRIPTOR descriptor = shape.descriptor();
    CUarray raw = nullptr;
    {
        ScopedContext bind(context->cu());
        const CUresult result = CUCORE_DRIVER(cuArray3DCreate)(&raw, &descriptor);
        if (result != CUDA_SUCCESS) throw_create_failure(result, "cuArray3DCreate", shape);
    }
    auto made = own(raw, [cu_context = context->cu()](CUarray unmade) noexcept {
        destroy_array(unmade, cu_context, "destroying an array that was not made");
    });
    auto storage = std::make_shared<ArrayStorage>(std::move(context), raw, nullptr, ArrayStorage::Origin::created);
    made.release();  // the storage destroys it from here
    return make<OpaqueArray>(std::move(storage), shape);
}

Ref<OpaqueArray> OpaqueArray::wrap(Device &device, CUarray array, cucore_release_fn on_release, void *user_data) {
    Ref<Context> context = device.primary_context();
    const ArrayShape shape = shape_of(array, context->cu());
    auto storage = std::make_shared<ArrayStorage>(std::move(context), array, nullptr, ArrayStorage::Origin::foreign);
    Ref<OpaqueArray> wrapped = make<OpaqueArray>(storage, shape);
    storage->set_owner(on_release, user_data);  // only once the wrapper exists: a failed wrap never calls it
    return wrapped;
}

Ref<OpaqueArray> OpaqueArray::over(std::shared_ptr<ArrayStorage> storage) {
    const ArrayShape shape = shape_of(storage->array(), storage->context().cu());
    return make<OpaqueArray>(std::move(storage), shape);
}

OpaqueArray::OpaqueArray(std::shared_ptr<ArrayStorage> storage, const ArrayShape &shape) noexcept
    : Object(CUCORE_OBJECT_OPAQUE_ARRAY), storage_(std::move(storage)), shape_(shape) {}

OpaqueArray::~OpaqueArray() = default;  // the storage's last holder ends it

void OpaqueArray::close() noexcept {
    std::shared_ptr<ArrayStorage> released;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        released.swap(storage_);
    }
    // `released` goes here, outside the lock: the array is destroyed now unless others hold it.
}

std::shared_ptr<ArrayStorage> OpaqueArray::storage() const {
    std::shared_ptr<ArrayStorage> storage;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        storage = storage_;
    }
    if (!storage) throw_closed("opaque array");
    storage->check_usable();
    return storage;
}

cucore_opaque_array_info_t OpaqueArray::info() const { return info_of(shape_, *storage(), 1); }

void OpaqueArray::copy_from_host(const void *source, uint64_t size, Stream &stream) {
    stream.refuse_during_capture("a copy from host memory into an array (copy from a pinned buffer instead)");
    cucore_memory_region_t region = CUCORE_MEMORY_REGION_INIT;
    region.host = const_cast<void *>(source);
    copy_whole(*this, CopySide{nullptr, region}, size, "argument 'size' is", true, stream);
}

void OpaqueArray::copy_to_host(void *destination, uint64_t size, Stream &stream) {
    stream.refuse_during_capture("a copy from an array to host memory (copy to a pinned buffer instead)");
    cucore_memory_region_t region = CUCORE_MEMORY_REGION_INIT;
    region.host = destination;
    copy_whole(*this, CopySide{nullptr, region}, size, "argument 'size' is", false, stream);
}

void OpaqueArray::copy_from_buffer(Buffer &buffer, Stream &stream) {
    buffer.check_open("buffer");
    copy_whole(*this, CopySide{&buffer, CUCORE_MEMORY_REGION_INIT}, buffer.size(), "the buffer has", true, stream);
}

void OpaqueArray::copy_to_buffer(Buffer &buffer, Stream &stream) {
    buffer.check_open("buffer");
    copy_whole(*this, CopySide{&buffer, CUCORE_MEMORY_REGION_INIT}, buffer.size(), "the buffer has", false, stream);
}

void OpaqueArray::copy_from_array(OpaqueArray &source, Stream &stream) {
    const ArrayShape &theirs = source.shape();
    if (theirs.width != shape_.width || theirs.height != shape_.height ||
        theirs.slice_count() != shape_.slice_count() || theirs.element_size() != shape_.element_size() ||
        theirs.format->block_compressed != shape_.format->block_compressed)
        throw_invalid_argument("argument 'src' is a " + theirs.describe() + "; it cannot fill a " + shape_.describe() +
                               " (extents, slices and element size must agree)");
    ArrayCopySide from, to;
    from.array = &source;
    to.array = this;
    copy_array_region(from, to, shape_.width, shape_.is_1d() ? 1 : shape_.height, shape_.slice_count(), stream);
}

// ---- MipmappedArray --------------------------------------------------------------------

Ref<MipmappedArray> MipmappedArray::create(Device &device, const ArrayShape &shape, uint32_t num_levels) {
    const uint32_t most = shape.max_levels();
    if (num_levels == 0 || num_levels > most)
        throw_invalid_argument("argument 'num_levels' is " + std::to_string(num_levels) + "; a " + shape.describe() +
                               " has 1 to " + std::to_string(most) + " levels");
    shape.check_limits(device, true);
    check_sparse(device, shape);
    Ref<Context> context = device.primary_context();
    const CUDA_ARRAY3D_DESCRIPTOR descriptor = shape.descriptor();
    CUmipmappedArray raw = nullptr;
    {
        ScopedContext bind(context->cu());
        const CUresult result = CUCORE_DRIVER(cuMipmappedArrayCreate)(&raw, &descriptor, num_levels);
        if (result != CUDA_SUCCESS) throw_create_failure(result, "cuMipmappedArrayCreate", shape);
    }
    auto made = own(raw, [cu_context = context->cu()](CUmipmappedArray unmade) noexcept {
        destroy_mipmapped_array(unmade, cu_context, "destroying a mipmapped array that was not made");
    });
    auto storage = std::make_shared<ArrayStorage>(std::move(context), nullptr, raw, ArrayStorage::Origin::created);
    made.release();
    return make<MipmappedArray>(std::move(storage), shape, num_levels);
}

namespace {
// Level 0's shape and the level count of a mipmapped array the library did not create: levels are asked for
// until the driver refuses one as past the last (CUDA_ERROR_INVALID_VALUE, as driver 580 answers); any other
// failure is the call's, not the end of the levels (it would give a short count silently).
ArrayShape shape_of_mipmapped(CUmipmappedArray mipmapped, CUcontext context, uint32_t &num_levels) {
    CUarray level = nullptr;
    ScopedContext bind(context);
    CUCORE_CALL(cuMipmappedArrayGetLevel, &level, mipmapped, 0u);
    const ArrayShape shape = shape_of(level, context);
    num_levels = 1;
    for (uint32_t most = shape.max_levels(); num_levels < most; ++num_levels) {
        CUarray next = nullptr;
        const CUresult result = CUCORE_DRIVER(cuMipmappedArrayGetLevel)(&next, mipmapped, num_levels);
        if (result == CUDA_ERROR_INVALID_VALUE) break;
        if (result != CUDA_SUCCESS) throw_cuda(result, "cuMipmappedArrayGetLevel");
    }
    return shape;
}
}  // namespace

Ref<MipmappedArray> MipmappedArray::wrap(Device &device, CUmipmappedArray mipmapped, cucore_release_fn on_release,
                                         void *user_data) {
    Ref<Context> context = device.primary_context();
    uint32_t num_levels = 0;
    const ArrayShape shape = shape_of_mipmapped(mipmapped, context->cu(), num_levels);
    auto storage =
        std::make_shared<ArrayStorage>(std::move(context), nullptr, mipmapped, ArrayStorage::Origin::foreign);
    Ref<MipmappedArray> wrapped = make<MipmappedArray>(storage, shape, num_levels);
    storage->set_owner(on_release, user_data);
    return wrapped;
}

Ref<MipmappedArray> MipmappedArray::over(std::shared_ptr<ArrayStorage> storage) {
    uint32_t num_levels = 0;
    const ArrayShape shape = shape_of_mipmapped(storage->mipmapped(), storage->context().cu(), num_levels);
    return make<MipmappedArray>(std::move(storage), shape, num_levels);
}

MipmappedArray::MipmappedArray(std::shared_ptr<ArrayStorage> storage, const ArrayShape &shape,
                               uint32_t num_levels) noexcept
    : Object(CUCORE_OBJECT_MIPMAPPED_ARRAY), storage_(std::move(storage)), shape_(shape), num_levels_(num_levels) {}

MipmappedArray::~MipmappedArray() = default;

void MipmappedArray::close() noexcept {
    std::shared_ptr<ArrayStorage> released;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        released.swap(storage_);
    }
}

std::shared_ptr<ArrayStorage> MipmappedArray::storage() const {
    std::shared_ptr<ArrayStorage> storage;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        storage = storage_;
    }
    if (!storage) throw_closed("mipmapped array");
    storage->check_usable();
    return storage;
}

cucore_opaque_array_info_t MipmappedArray::info() const { return info_of(shape_, *storage(), num_levels_); }

Ref<OpaqueArray> MipmappedArray::level(uint32_t level) {
    std::shared_ptr<ArrayStorage> parent = storage();
    if (level >= num_levels_)
        throw_invalid_argument("argument 'level' is " + std::to_string(level) + "; the mipmapped array has " +
                               std::to_string(num_levels_) + " level" + (num_levels_ == 1 ? "" : "s"));
    CUarray array = nullptr;
    {
        ScopedContext bind(parent->context().cu());
        CUCORE_CALL(cuMipmappedArrayGetLevel, &array, parent->mipmapped(), level);
    }
    Ref<Context> context(&parent->context());
    auto storage = std::make_shared<ArrayStorage>(std::move(context), array, nullptr, ArrayStorage::Origin::level);
    storage->set_parent(std::move(parent));
    return OpaqueArray::over(std::move(storage));
}

// ---- Region copies ---------------------------------------------------------------------

namespace {

// One array side, checked against its array, in the driver's units (bytes across, block rows for BC).
struct ArrayPlacement {
    std::shared_ptr<ArrayStorage> storage;
    uint64_t x_bytes = 0, y = 0, z = 0;
};

ArrayPlacement place(const ArrayCopySide &side, uint64_t width, uint64_t height, uint64_t depth, const char *name) {
    const ArrayShape &shape = side.array->shape();
    ArrayPlacement placement;
    placement.storage = side.array->storage();
    const std::string array = std::string("copy.") + name;
    auto beyond = [&](const char *axis, uint64_t offset, uint64_t extent, uint64_t limit, const char *what) {
        if (offset > limit || extent > limit - offset)
            throw_invalid_argument(array + "." + axis + " + " + what + " (" + std::to_string(offset) + " + " +
                                   std::to_string(extent) + ") exceeds the array's " + std::to_string(limit) + " (" +
                                   shape.describe() + ")");
    };
    beyond("x", side.x, width, shape.width, "width");
    if (shape.is_1d()) {
        if (side.y != 0 || height != 1)
            throw_invalid_argument(array + " is a 1D array: its y must be 0 and the copy's height 1 (got y " +
                                   std::to_string(side.y) + ", height " + std::to_string(height) + ")");
    } else {
        beyond("y", side.y, height, shape.height, "height");
    }
    beyond("z", side.z, depth, shape.slice_count(), "depth");
    if (shape.format->block_compressed) {
        const std::string grid = array + " is block-compressed (" + shape.format->name + "): ";
        if (side.x % 4 != 0 || side.y % 4 != 0)
            throw_invalid_argument(grid + "its x and y (" + std::to_string(side.x) + ", " + std::to_string(side.y) +
                                   ") must be multiples of 4");
        if ((width % 4 != 0 && side.x + width != shape.width) || (height % 4 != 0 && side.y + height != shape.height))
            throw_invalid_argument(grid + "the copy's width and height (" + std::to_string(width) + " x " +
                                   std::to_string(height) + ") must be multiples of 4 where they do not reach the "
                                   "array's edge");
        placement.x_bytes = side.x / 4 * shape.element_size();
        placement.y = side.y / 4;
    } else {
        placement.x_bytes = side.x * shape.element_size();
        placement.y = side.y;
    }
    placement.z = side.z;
    return placement;
}

}  // namespace

void copy_array_region(const ArrayCopySide &source, const ArrayCopySide &destination, uint64_t width,
                       uint64_t height, uint64_t depth, Stream &stream) {
    if (!source.array && !destination.array)
        throw_invalid_argument("neither 'copy.src_array.array' nor 'copy.dst_array.array' is set: a copy between "
                               "linear memory is cucore_copy_3d's");
    if (width == 0 || height == 0 || depth == 0)
        throw_invalid_argument("the copy's width, height and depth must be at least 1 (got " + std::to_string(width) +
                               " x " + std::to_string(height) + " x " + std::to_string(depth) + ")");
    const ArrayShape &unit = (source.array ? source.array : destination.array)->shape();
    if (source.array && destination.array) {
        const ArrayShape &other = destination.array->shape();
        if (other.element_size() != unit.element_size() ||
            other.format->block_compressed != unit.format->block_compressed)
            throw_invalid_argument(std::string("the arrays' elements differ: copy.src_array is a ") + unit.describe() +
                                   ", copy.dst_array a " + other.describe());
    }
    const bool blocks = unit.format->block_compressed;
    const uint64_t width_bytes = (blocks ? (width + 3) / 4 : width) * unit.element_size();
    const uint64_t rows = blocks ? (height + 3) / 4 : height;

    CUDA_MEMCPY3D params{};
    auto fill = [&](const ArrayCopySide &side, bool is_source, std::shared_ptr<ArrayStorage> &held) {
        const char *name = is_source ? "src_array" : "dst_array";
        if (side.array) {
            ArrayPlacement placement = place(side, width, height, depth, name);
            if (is_source) {
                params.srcMemoryType = CU_MEMORYTYPE_ARRAY;
                params.srcArray = placement.storage->array();
                params.srcXInBytes = static_cast<size_t>(placement.x_bytes);
                params.srcY = static_cast<size_t>(placement.y);
                params.srcZ = static_cast<size_t>(placement.z);
            } else {
                params.dstMemoryType = CU_MEMORYTYPE_ARRAY;
                params.dstArray = placement.storage->array();
                params.dstXInBytes = static_cast<size_t>(placement.x_bytes);
                params.dstY = static_cast<size_t>(placement.y);
                params.dstZ = static_cast<size_t>(placement.z);
            }
            held = std::move(placement.storage);
            return;
        }
        CopySide memory = side.memory;
        const char *memory_name = is_source ? "copy.src_memory" : "copy.dst_memory";
        if (memory.buffer) memory.buffer->check_open(is_source ? "copy.src_memory.buffer" : "copy.dst_memory.buffer");
        if (memory.region.pitch == 0) memory.region.pitch = memory.region.x + width_bytes;
        if (memory.region.height == 0) memory.region.height = memory.region.y + rows;
        check_copy_side(memory, width_bytes, rows, depth, memory_name);
        describe_copy_side(memory, rows, depth, is_source, params);
    };
    std::shared_ptr<ArrayStorage> held_source, held_destination;  // held for the call
    fill(source, true, held_source);
    fill(destination, false, held_destination);
    params.WidthInBytes = static_cast<size_t>(width_bytes);
    params.Height = static_cast<size_t>(rows);
    params.Depth = static_cast<size_t>(depth);
    ScopedContext bind(stream.cu_context(), stream.is_builtin());
    CUCORE_CALL(cuMemcpy3DAsync, &params, stream.cu());
    // A captured copy: the graph holds the arrays and buffers it names.
    for (const ArrayCopySide *side : {&source, &destination}) {
        if (side->array) hold_for_capture(stream, *side->array);
        if (side->memory.buffer) hold_buffer_for_capture(stream, *side->memory.buffer);
    }
}

}  // namespace cucore::core
