// CUDA arrays, mipmapped arrays, texture and surface objects (see "Arrays" in
// fake_driver.hpp). Every array is one kind of object whatever made it
// (cuArray3DCreate, a level of cuMipmappedArrayCreate's array, a GL image's
// level): host bytes in the packed layout, which cuMemcpy3DAsync
// (copy_3d.cpp) copies region by region. Descriptions are checked as driver
// 580 checks them on an H100 (docs: the measured facts of issue 14).
#include <algorithm>

#include "entry_points.hpp"
#include "state.hpp"

namespace fake::detail {
namespace {

// Array bytes the fake allocates at most (larger arrays can be created, as a
// sparse or unused one on a device, but not copied to or from).
constexpr size_t kMaxArrayBytes = size_t{1} << 30;

// What a format is: `bytes` per channel for the eight plain formats (1, 2 or 4
// channels of them), per element for the formats with their own channel
// count, per 4x4 block for BC.
struct Format {
    size_t bytes = 0;
    unsigned channels = 0;  // 0: the caller's 1, 2 or 4
    bool blocks = false;
};

bool format_of(int format, Format &f) {
    switch (format) {
        case CU_AD_FORMAT_UNSIGNED_INT8:
        case CU_AD_FORMAT_SIGNED_INT8: f = {1, 0, false}; return true;
        case CU_AD_FORMAT_UNSIGNED_INT16:
        case CU_AD_FORMAT_SIGNED_INT16:
        case CU_AD_FORMAT_HALF: f = {2, 0, false}; return true;
        case CU_AD_FORMAT_UNSIGNED_INT32:
        case CU_AD_FORMAT_SIGNED_INT32:
        case CU_AD_FORMAT_FLOAT: f = {4, 0, false}; return true;
        case CU_AD_FORMAT_UNORM_INT8X1:
        case CU_AD_FORMAT_SNORM_INT8X1: f = {1, 1, false}; return true;
        case CU_AD_FORMAT_UNORM_INT8X2:
        case CU_AD_FORMAT_SNORM_INT8X2: f = {2, 2, false}; return true;
        case CU_AD_FORMAT_UNORM_INT8X4:
        case CU_AD_FORMAT_SNORM_INT8X4: f = {4, 4, false}; return true;
        case CU_AD_FORMAT_UNORM_INT16X1:
        case CU_AD_FORMAT_SNORM_INT16X1: f = {2, 1, false}; return true;
        case CU_AD_FORMAT_UNORM_INT16X2:
        case CU_AD_FORMAT_SNORM_INT16X2: f = {4, 2, false}; return true;
        case CU_AD_FORMAT_UNORM_INT16X4:
        case CU_AD_FORMAT_SNORM_INT16X4: f = {8, 4, false}; return true;
        case CU_AD_FORMAT_UNORM_INT_101010_2: f = {4, 4, false}; return true;
        case CU_AD_FORMAT_BC1_UNORM:
        case CU_AD_FORMAT_BC1_UNORM_SRGB: f = {8, 4, true}; return true;
        case CU_AD_FORMAT_BC4_UNORM:
        case CU_AD_FORMAT_BC4_SNORM: f = {8, 1, true}; return true;
        case CU_AD_FORMAT_BC2_UNORM:
        case CU_AD_FORMAT_BC2_UNORM_SRGB:
        case CU_AD_FORMAT_BC3_UNORM:
        case CU_AD_FORMAT_BC3_UNORM_SRGB:
        case CU_AD_FORMAT_BC7_UNORM:
        case CU_AD_FORMAT_BC7_UNORM_SRGB: f = {16, 4, true}; return true;
        case CU_AD_FORMAT_BC5_UNORM:
        case CU_AD_FORMAT_BC5_SNORM: f = {16, 2, true}; return true;
        case CU_AD_FORMAT_BC6H_UF16:
        case CU_AD_FORMAT_BC6H_SF16: f = {16, 3, true}; return true;
        default: return false;  // the YUV formats and anything unknown
    }
}

bool srgb_format(int format) {
    return format == CU_AD_FORMAT_BC1_UNORM_SRGB || format == CU_AD_FORMAT_BC2_UNORM_SRGB ||
           format == CU_AD_FORMAT_BC3_UNORM_SRGB || format == CU_AD_FORMAT_BC7_UNORM_SRGB;
}

// Integer elements (what a texture reads as integers unless told otherwise).
bool integer_format(int format) {
    switch (format) {
        case CU_AD_FORMAT_UNSIGNED_INT8:
        case CU_AD_FORMAT_UNSIGNED_INT16:
        case CU_AD_FORMAT_UNSIGNED_INT32:
        case CU_AD_FORMAT_SIGNED_INT8:
        case CU_AD_FORMAT_SIGNED_INT16:
        case CU_AD_FORMAT_SIGNED_INT32: return true;
        default: return false;
    }
}

constexpr unsigned kKnownArrayFlags = CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST | CUDA_ARRAY3D_CUBEMAP |
                                      CUDA_ARRAY3D_TEXTURE_GATHER | CUDA_ARRAY3D_DEPTH_TEXTURE |
                                      CUDA_ARRAY3D_COLOR_ATTACHMENT | CUDA_ARRAY3D_SPARSE |
                                      CUDA_ARRAY3D_DEFERRED_MAPPING | CUDA_ARRAY3D_VIDEO_ENCODE_DECODE;

bool within(size_t value, int attribute, int device) {
    return value <= static_cast<size_t>(std::max(0, attribute_value(attribute, device)));
}

// The device's limits for the description's shape (texture limits, and
// surface limits with SURFACE_LDST). Caller checked the shape.
bool within_limits(const CUDA_ARRAY3D_DESCRIPTOR &d, int device) {
    const size_t w = d.Width, h = d.Height, depth = d.Depth;
    const bool layered = d.Flags & CUDA_ARRAY3D_LAYERED, cubemap = d.Flags & CUDA_ARRAY3D_CUBEMAP;
    const bool surface = d.Flags & CUDA_ARRAY3D_SURFACE_LDST, gather = d.Flags & CUDA_ARRAY3D_TEXTURE_GATHER;
    auto ok = [device](size_t v, int a) { return within(v, a, device); };
    if (cubemap && layered)
        return ok(w, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH) &&
               ok(depth / 6, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS) &&
               (!surface || (ok(w, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH) &&
                             ok(depth / 6, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS)));
    if (cubemap)
        return ok(w, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH) &&
               (!surface || ok(w, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH));
    if (layered && h == 0)
        return ok(w, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH) &&
               ok(depth, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS) &&
               (!surface || (ok(w, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH) &&
                             ok(depth, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS)));
    if (layered)
        return ok(w, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH) &&
               ok(h, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT) &&
               ok(depth, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS) &&
               (!surface || (ok(w, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH) &&
                             ok(h, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT) &&
                             ok(depth, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS)));
    if (h == 0)
        return ok(w, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH) &&
               (!surface || ok(w, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH));
    if (depth == 0)
        return ok(w, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH) && ok(h, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT) &&
               (!gather || (ok(w, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH) &&
                            ok(h, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT))) &&
               (!surface || (ok(w, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH) &&
                             ok(h, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT)));
    const bool first = ok(w, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH) &&
                       ok(h, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT) &&
                       ok(depth, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH);
    const bool alternate = ok(w, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE) &&
                           ok(h, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE) &&
                           ok(depth, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE);
    return (first || alternate) &&
           (!surface || (ok(w, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH) &&
                         ok(h, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT) &&
                         ok(depth, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH)));
}

// The driver's checks of a description (see fake_driver.hpp, "Arrays").
CUresult check_descriptor(const CUDA_ARRAY3D_DESCRIPTOR &d, int device) {
    Format f;
    if (!format_of(value_of(d.Format), f)) return CUDA_ERROR_INVALID_VALUE;
    if (f.channels ? d.NumChannels != f.channels : d.NumChannels != 1 && d.NumChannels != 2 && d.NumChannels != 4)
        return CUDA_ERROR_INVALID_VALUE;
    if (d.Flags & ~kKnownArrayFlags) return CUDA_ERROR_INVALID_VALUE;
    const bool layered = d.Flags & CUDA_ARRAY3D_LAYERED, cubemap = d.Flags & CUDA_ARRAY3D_CUBEMAP;
    if (d.Width == 0) return CUDA_ERROR_INVALID_VALUE;
    if (cubemap) {
        if (d.Width != d.Height) return CUDA_ERROR_INVALID_VALUE;
        if (layered ? d.Depth == 0 || d.Depth % 6 != 0 : d.Depth != 6) return CUDA_ERROR_INVALID_VALUE;
    } else if (layered) {
        if (d.Depth == 0) return CUDA_ERROR_INVALID_VALUE;
    } else if (d.Height == 0 && d.Depth != 0) {
        return CUDA_ERROR_INVALID_VALUE;  // a 1D array has no depth
    }
    const bool two_d = !layered && !cubemap && d.Height != 0 && d.Depth == 0;
    if ((d.Flags & CUDA_ARRAY3D_TEXTURE_GATHER) && !two_d) return CUDA_ERROR_INVALID_VALUE;
    if (f.blocks && (d.Height == 0 || (d.Flags & CUDA_ARRAY3D_SURFACE_LDST))) return CUDA_ERROR_INVALID_VALUE;
    const int format = value_of(d.Format);
    if ((d.Flags & CUDA_ARRAY3D_DEPTH_TEXTURE) && (format == CU_AD_FORMAT_FLOAT || format == CU_AD_FORMAT_UNSIGNED_INT8 ||
                                                   format == CU_AD_FORMAT_UNSIGNED_INT16))
        return CUDA_ERROR_INVALID_VALUE;
    if ((d.Flags & CUDA_ARRAY3D_SPARSE) && !attribute_value(CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED, device))
        return CUDA_ERROR_NOT_SUPPORTED;
    if (!within_limits(d, device)) return CUDA_ERROR_INVALID_VALUE;
    const Layout l = layout_of(d);
    const unsigned __int128 bytes = static_cast<unsigned __int128>(l.row_bytes) * l.rows * l.slices;
    if (bytes > kDeviceMemory) return CUDA_ERROR_OUT_OF_MEMORY;
    return CUDA_SUCCESS;
}

// Level `level` of a mipmapped array whose level 0 is `d`: extents halve (not
// layers or faces), down to 1.
CUDA_ARRAY3D_DESCRIPTOR level_descriptor(const CUDA_ARRAY3D_DESCRIPTOR &d, unsigned level) {
    CUDA_ARRAY3D_DESCRIPTOR out = d;
    auto half = [level](size_t v) { return v == 0 ? 0 : std::max<size_t>(1, v >> level); };
    out.Width = half(d.Width);
    out.Height = half(d.Height);
    const bool volume = !(d.Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP));
    if (volume) out.Depth = half(d.Depth);
    return out;
}

unsigned max_levels(const CUDA_ARRAY3D_DESCRIPTOR &d) {
    size_t largest = std::max(d.Width, d.Height);
    if (!(d.Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP))) largest = std::max(largest, d.Depth);
    unsigned levels = 1;
    while (largest >>= 1) ++levels;
    return levels;
}

Array *new_array(const CUDA_ARRAY3D_DESCRIPTOR &d, int device) {
    State &g = state();
    g.array_storage.push_back(std::make_unique<Array>());
    Array *a = g.array_storage.back().get();
    a->descriptor = d;
    a->device = device;
    g.arrays.insert(a);
    return a;
}

bool usable(const MipmappedArray &m) {
    if (m.destroyed) return false;
    return !m.graphics || (state().graphics.count(m.graphics) && m.graphics->mapped);
}

bool usable(const Array &a) {
    if (a.destroyed) return false;
    return !a.mipmapped || usable(*a.mipmapped);
}

// Whether a live texture or surface object reads `array` (or, with `mipmapped`, that mipmapped array or one of its levels).
bool in_use(const Array *array, const MipmappedArray *mipmapped) {
    auto reads = [&](const CUDA_RESOURCE_DESC &r) {
        if (r.resType == CU_RESOURCE_TYPE_ARRAY) {
            auto *a = reinterpret_cast<const Array *>(r.res.array.hArray);
            return a == array || (mipmapped && state().arrays.count(const_cast<Array *>(a)) && a->mipmapped == mipmapped);
        }
        if (r.resType == CU_RESOURCE_TYPE_MIPMAPPED_ARRAY)
            return mipmapped && reinterpret_cast<const MipmappedArray *>(r.res.mipmap.hMipmappedArray) == mipmapped;
        return false;
    };
    for (auto &[handle, t] : state().textures)
        if (!t.destroyed && reads(t.resource)) return true;
    for (auto &[handle, s] : state().surfaces)
        if (!s.destroyed && reads(s.resource)) return true;
    return false;
}

// Textures and surfaces share one sequence of handles, never reset: a
// handle of an earlier installation, or of the other kind, is never valid.
unsigned long long next_object_handle() {
    static unsigned long long next = 0x1000;
    return next++;
}

// The resource of a texture or surface object, checked as the driver does.
CUresult check_resource(const CUDA_RESOURCE_DESC &r, const Context &context) {
    if (r.flags != 0) return CUDA_ERROR_INVALID_VALUE;
    switch (value_of(r.resType)) {
        case CU_RESOURCE_TYPE_ARRAY: {
            Array *a = as_array(r.res.array.hArray);
            if (!a) return CUDA_ERROR_INVALID_HANDLE;
            return a->device == context.device ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
        }
        case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY: {
            MipmappedArray *m = as_mipmapped(r.res.mipmap.hMipmappedArray);
            if (!m) return CUDA_ERROR_INVALID_HANDLE;
            return m->device == context.device ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
        }
        case CU_RESOURCE_TYPE_LINEAR: {
            Format f;
            const auto &l = r.res.linear;
            if (!format_of(value_of(l.format), f) || f.blocks) return CUDA_ERROR_INVALID_VALUE;
            if (f.channels ? l.numChannels != f.channels : l.numChannels != 1 && l.numChannels != 2 && l.numChannels != 4)
                return CUDA_ERROR_INVALID_VALUE;
            const size_t element = f.channels ? f.bytes : f.bytes * l.numChannels;
            if (l.sizeInBytes == 0 || l.sizeInBytes % element != 0) return CUDA_ERROR_INVALID_VALUE;
            if (!within(l.sizeInBytes / element, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH, context.device))
                return CUDA_ERROR_INVALID_VALUE;
            const auto alignment = static_cast<CUdeviceptr>(
                std::max(1, attribute_value(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, context.device)));
            if (l.devPtr % alignment != 0) return CUDA_ERROR_INVALID_VALUE;
            return classify(l.devPtr, l.sizeInBytes) == 1 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
        }
        case CU_RESOURCE_TYPE_PITCH2D: {
            Format f;
            const auto &p = r.res.pitch2D;
            if (!format_of(value_of(p.format), f) || f.blocks) return CUDA_ERROR_INVALID_VALUE;
            if (f.channels ? p.numChannels != f.channels : p.numChannels != 1 && p.numChannels != 2 && p.numChannels != 4)
                return CUDA_ERROR_INVALID_VALUE;
            const size_t element = f.channels ? f.bytes : f.bytes * p.numChannels;
            const int device = context.device;
            if (p.width == 0 || p.height == 0 || !within(p.width, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH, device) ||
                !within(p.height, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT, device) ||
                !within(p.pitchInBytes, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH, device))
                return CUDA_ERROR_INVALID_VALUE;
            const auto alignment = static_cast<CUdeviceptr>(
                std::max(1, attribute_value(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, device)));
            const auto pitch_alignment =
                static_cast<size_t>(std::max(1, attribute_value(CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT, device)));
            if (p.devPtr % alignment != 0 || p.pitchInBytes % pitch_alignment != 0 || p.pitchInBytes < p.width * element)
                return CUDA_ERROR_INVALID_VALUE;
            const size_t span = (p.height - 1) * p.pitchInBytes + p.width * element;
            return classify(p.devPtr, span) == 1 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
        }
        default: return CUDA_ERROR_INVALID_VALUE;
    }
}

// The element format a resource reads (for the texture descriptor's checks).
int resource_format(const CUDA_RESOURCE_DESC &r) {
    switch (value_of(r.resType)) {
        case CU_RESOURCE_TYPE_ARRAY: return value_of(as_array(r.res.array.hArray)->descriptor.Format);
        case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY:
            return value_of(as_mipmapped(r.res.mipmap.hMipmappedArray)->descriptor.Format);
        case CU_RESOURCE_TYPE_LINEAR: return value_of(r.res.linear.format);
        default: return value_of(r.res.pitch2D.format);
    }
}

constexpr unsigned kKnownTextureFlags = CU_TRSF_READ_AS_INTEGER | CU_TRSF_NORMALIZED_COORDINATES | CU_TRSF_SRGB |
                                        CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION | CU_TRSF_SEAMLESS_CUBEMAP;

CUresult check_texture(const CUDA_TEXTURE_DESC &t, int format) {
    for (const CUaddress_mode &mode : t.addressMode)
        if (value_of(mode) < CU_TR_ADDRESS_MODE_WRAP || value_of(mode) > CU_TR_ADDRESS_MODE_BORDER)
            return CUDA_ERROR_INVALID_VALUE;
    for (int filter : {value_of(t.filterMode), value_of(t.mipmapFilterMode)})
        if (filter != CU_TR_FILTER_MODE_POINT && filter != CU_TR_FILTER_MODE_LINEAR) return CUDA_ERROR_INVALID_VALUE;
    if (t.flags & ~kKnownTextureFlags) return CUDA_ERROR_INVALID_VALUE;
    // Linear filtering interpolates floats: integers read as integers cannot be.
    if (value_of(t.filterMode) == CU_TR_FILTER_MODE_LINEAR && integer_format(format) &&
        (t.flags & CU_TRSF_READ_AS_INTEGER))
        return CUDA_ERROR_INVALID_VALUE;
    if (srgb_format(format) && !(t.flags & CU_TRSF_SRGB)) return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

}  // namespace

Layout layout_of(const CUDA_ARRAY3D_DESCRIPTOR &d) {
    Format f;
    Layout l;
    if (!format_of(value_of(d.Format), f)) return l;
    l.blocks = f.blocks;
    l.element_size = f.channels ? f.bytes : f.bytes * d.NumChannels;
    const size_t height = d.Height ? d.Height : 1;
    l.row_bytes = f.blocks ? (d.Width + 3) / 4 * l.element_size : d.Width * l.element_size;
    l.rows = f.blocks ? (height + 3) / 4 : height;
    l.slices = d.Depth ? d.Depth : 1;
    return l;
}

Array *as_array(CUarray handle) {
    auto *a = reinterpret_cast<Array *>(handle);
    return state().arrays.count(a) && usable(*a) ? a : nullptr;
}

MipmappedArray *as_mipmapped(CUmipmappedArray handle) {
    auto *m = reinterpret_cast<MipmappedArray *>(handle);
    return state().mipmapped_arrays.count(m) && usable(*m) ? m : nullptr;
}

MipmappedArray *new_mipmapped(const CUDA_ARRAY3D_DESCRIPTOR &level0, unsigned levels, int device) {
    State &g = state();
    g.mipmapped_storage.push_back(std::make_unique<MipmappedArray>());
    MipmappedArray *m = g.mipmapped_storage.back().get();
    m->descriptor = level0;
    m->device = device;
    for (unsigned level = 0; level < levels; ++level) {
        Array *a = new_array(level_descriptor(level0, level), device);
        a->mipmapped = m;
        m->levels.push_back(a);
    }
    g.mipmapped_arrays.insert(m);
    return m;
}

std::vector<unsigned char> *array_data(Array &a) {
    const Layout l = layout_of(a.descriptor);
    const unsigned __int128 bytes = static_cast<unsigned __int128>(l.row_bytes) * l.rows * l.slices;
    if (bytes > kMaxArrayBytes) return nullptr;
    if (a.data.size() != static_cast<size_t>(bytes)) a.data.assign(static_cast<size_t>(bytes), kFreshByte);
    return &a.data;
}

CUresult array_as_host(CUmemorytype &type, const void *&host, CUarray handle, size_t x, size_t y, size_t z,
                       size_t width, size_t height, size_t depth, size_t &pitch, size_t &rows) {
    if (type != CU_MEMORYTYPE_ARRAY) return CUDA_SUCCESS;
    Array *a = as_array(handle);
    if (!a) return CUDA_ERROR_INVALID_VALUE;
    const Layout l = layout_of(a->descriptor);
    // Whole elements (BC: whole blocks), within the array's rows and slices.
    if (x % l.element_size != 0 || width % l.element_size != 0) return CUDA_ERROR_INVALID_VALUE;
    if (x > l.row_bytes || width > l.row_bytes - x || y > l.rows || height > l.rows - y || z > l.slices ||
        depth > l.slices - z)
        return CUDA_ERROR_INVALID_VALUE;
    std::vector<unsigned char> *data = array_data(*a);
    if (!data) return CUDA_ERROR_OUT_OF_MEMORY;
    type = CU_MEMORYTYPE_HOST;
    host = data->data();
    pitch = l.row_bytes;
    rows = l.rows;
    return CUDA_SUCCESS;
}

void note_memory_gone(CUdeviceptr base, size_t size) {
    State &g = state();
    auto reads = [&](const CUDA_RESOURCE_DESC &r) {
        CUdeviceptr p = 0;
        if (r.resType == CU_RESOURCE_TYPE_LINEAR) p = r.res.linear.devPtr;
        else if (r.resType == CU_RESOURCE_TYPE_PITCH2D) p = r.res.pitch2D.devPtr;
        else return false;
        return p >= base && p - base < size;
    };
    for (auto &[handle, t] : g.textures)
        if (!t.destroyed && reads(t.resource)) ++g.resource_violations;
}

void note_mipmapped_gone(const MipmappedArray &m) {
    if (in_use(nullptr, &m)) ++state().resource_violations;
}

void forget_arrays() {
    State &g = state();
    g.array_storage.clear();
    g.arrays.clear();
    g.mipmapped_storage.clear();
    g.mipmapped_arrays.clear();
    g.textures.clear();
    g.surfaces.clear();
    g.last_array_descriptor = CUDA_ARRAY3D_DESCRIPTOR{};
    g.last_mipmap_levels = 0;
    g.resource_violations = 0;
}

CUresult f_cuArray3DCreate(CUarray *array, const CUDA_ARRAY3D_DESCRIPTOR *descriptor) {
    if (!array || !descriptor) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    state().last_array_descriptor = *descriptor;
    Context *context = as_context(t_current);
    if (!context) return CUDA_ERROR_INVALID_CONTEXT;
    if (const CUresult error = check_descriptor(*descriptor, context->device); error != CUDA_SUCCESS) return error;
    Array *a = new_array(*descriptor, context->device);
    a->created = true;
    *array = reinterpret_cast<CUarray>(a);
    return CUDA_SUCCESS;
}

// Created arrays only: a level goes with its mipmapped array, a GL image's with the mapping.
CUresult f_cuArrayDestroy(CUarray array) {
    Lock lock(state().mutex);
    Array *a = as_array(array);
    if (!a || !a->created) return CUDA_ERROR_INVALID_HANDLE;
    // The driver destroys an array a texture object still reads (measured): the library must not.
    if (in_use(a, nullptr)) ++state().resource_violations;
    a->destroyed = true;
    return CUDA_SUCCESS;
}

CUresult f_cuArray3DGetDescriptor(CUDA_ARRAY3D_DESCRIPTOR *descriptor, CUarray array) {
    if (!descriptor) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Array *a = as_array(array);
    if (!a) return CUDA_ERROR_INVALID_HANDLE;
    *descriptor = a->descriptor;
    return CUDA_SUCCESS;
}

CUresult f_cuMipmappedArrayCreate(CUmipmappedArray *mipmapped, const CUDA_ARRAY3D_DESCRIPTOR *descriptor,
                                  unsigned levels) {
    if (!mipmapped || !descriptor) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    state().last_array_descriptor = *descriptor;
    state().last_mipmap_levels = levels;
    Context *context = as_context(t_current);
    if (!context) return CUDA_ERROR_INVALID_CONTEXT;
    if (levels == 0) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult error = check_descriptor(*descriptor, context->device); error != CUDA_SUCCESS) return error;
    *mipmapped = reinterpret_cast<CUmipmappedArray>(
        new_mipmapped(*descriptor, std::min(levels, max_levels(*descriptor)), context->device));
    return CUDA_SUCCESS;
}

CUresult f_cuMipmappedArrayDestroy(CUmipmappedArray mipmapped) {
    Lock lock(state().mutex);
    MipmappedArray *m = as_mipmapped(mipmapped);
    if (!m || m->graphics) return CUDA_ERROR_INVALID_HANDLE;
    note_mipmapped_gone(*m);
    m->destroyed = true;
    return CUDA_SUCCESS;
}

CUresult f_cuMipmappedArrayGetLevel(CUarray *array, CUmipmappedArray mipmapped, unsigned level) {
    if (!array) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    MipmappedArray *m = as_mipmapped(mipmapped);
    if (!m) return CUDA_ERROR_INVALID_HANDLE;
    if (level >= m->levels.size()) return CUDA_ERROR_INVALID_VALUE;  // as the driver answers past the last level
    *array = reinterpret_cast<CUarray>(m->levels[level]);
    return CUDA_SUCCESS;
}

CUresult f_cuTexObjectCreate(CUtexObject *texture, const CUDA_RESOURCE_DESC *resource,
                             const CUDA_TEXTURE_DESC *description, const CUDA_RESOURCE_VIEW_DESC *view) {
    if (!texture || !resource || !description) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Context *context = as_context(t_current);
    if (!context) return CUDA_ERROR_INVALID_CONTEXT;
    if (const CUresult error = check_resource(*resource, *context); error != CUDA_SUCCESS) return error;
    if (const CUresult error = check_texture(*description, resource_format(*resource)); error != CUDA_SUCCESS)
        return error;
    TextureRecord record;
    record.resource = *resource;
    record.texture = *description;
    record.has_view = view != nullptr;
    if (view) record.view = *view;
    record.context = t_current;
    *texture = next_object_handle();
    state().textures[*texture] = record;
    return CUDA_SUCCESS;
}

CUresult f_cuTexObjectDestroy(CUtexObject texture) {
    Lock lock(state().mutex);
    auto it = state().textures.find(texture);
    if (it == state().textures.end() || it->second.destroyed) return CUDA_ERROR_INVALID_VALUE;
    it->second.destroyed = true;
    return CUDA_SUCCESS;
}

// The driver does not ask for CUDA_ARRAY3D_SURFACE_LDST (measured): neither does the fake.
CUresult f_cuSurfObjectCreate(CUsurfObject *surface, const CUDA_RESOURCE_DESC *resource) {
    if (!surface || !resource) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Context *context = as_context(t_current);
    if (!context) return CUDA_ERROR_INVALID_CONTEXT;
    if (resource->resType != CU_RESOURCE_TYPE_ARRAY) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult error = check_resource(*resource, *context); error != CUDA_SUCCESS) return error;
    SurfaceRecord record;
    record.resource = *resource;
    record.context = t_current;
    *surface = next_object_handle();
    state().surfaces[*surface] = record;
    return CUDA_SUCCESS;
}

CUresult f_cuSurfObjectDestroy(CUsurfObject surface) {
    Lock lock(state().mutex);
    auto it = state().surfaces.find(surface);
    if (it == state().surfaces.end() || it->second.destroyed) return CUDA_ERROR_INVALID_VALUE;
    it->second.destroyed = true;
    return CUDA_SUCCESS;
}

}  // namespace fake::detail

namespace fake {

using detail::Lock;
using detail::state;

CUDA_ARRAY3D_DESCRIPTOR array_descriptor(CUarray array) {
    Lock lock(state().mutex);
    auto *a = reinterpret_cast<detail::Array *>(array);
    return state().arrays.count(a) ? a->descriptor : CUDA_ARRAY3D_DESCRIPTOR{};
}

CUDA_ARRAY3D_DESCRIPTOR last_array_descriptor() {
    Lock lock(state().mutex);
    return state().last_array_descriptor;
}

unsigned last_mipmap_levels() {
    Lock lock(state().mutex);
    return state().last_mipmap_levels;
}

std::vector<unsigned char> *array_bytes(CUarray array) {
    Lock lock(state().mutex);
    auto *a = reinterpret_cast<detail::Array *>(array);
    return state().arrays.count(a) ? detail::array_data(*a) : nullptr;
}

unsigned mipmapped_levels(CUmipmappedArray mipmapped) {
    Lock lock(state().mutex);
    auto *m = reinterpret_cast<detail::MipmappedArray *>(mipmapped);
    return state().mipmapped_arrays.count(m) ? static_cast<unsigned>(m->levels.size()) : 0;
}

bool texture_record(CUtexObject texture, TextureRecord &record) {
    Lock lock(state().mutex);
    auto it = state().textures.find(texture);
    if (it == state().textures.end()) return false;
    record = it->second;
    return true;
}

bool surface_record(CUsurfObject surface, SurfaceRecord &record) {
    Lock lock(state().mutex);
    auto it = state().surfaces.find(surface);
    if (it == state().surfaces.end()) return false;
    record = it->second;
    return true;
}

int resource_violations() {
    Lock lock(state().mutex);
    return state().resource_violations;
}

}  // namespace fake
