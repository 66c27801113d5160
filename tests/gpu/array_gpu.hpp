// Helpers of the GPU tests of arrays and textures (opaque_array_test.cpp,
// texture_test.cpp): owning wrappers for the new handle types, the table of
// every array format with the channel counts the driver takes, the packed
// layout the header promises (cucore_opaque_array_info_t), host models of the
// packed layout and of region copies, and small C ABI helpers that create,
// upload and download arrays and fail the test (never crash) on an error.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernel_gpu.hpp"
#include "memory_gpu.hpp"

namespace gpu {

#define CUCORE_GPU_RELEASER(type, fn)                        \
    template <>                                              \
    struct Releaser<type> {                                  \
        void operator()(type *p) const { (void)fn(p); }      \
    };
CUCORE_GPU_RELEASER(cucore_opaque_array_t, cucore_opaque_array_release)
CUCORE_GPU_RELEASER(cucore_mipmapped_array_t, cucore_mipmapped_array_release)
CUCORE_GPU_RELEASER(cucore_texture_object_t, cucore_texture_object_release)
CUCORE_GPU_RELEASER(cucore_surface_object_t, cucore_surface_object_release)
#undef CUCORE_GPU_RELEASER

namespace arrays {

// ---- Formats ----------------------------------------------------------------------

struct Format {
    cucore_array_format_t format;
    const char *name;
    // Plain formats: bytes per channel, channels 1, 2 or 4 (0 means 1).
    // Normalized, 101010_2 and BC formats: the element (BC: 4x4 block) size and
    // their one channel count (0 means it).
    std::uint32_t bytes;
    std::uint32_t own_channels; // 0 for the plain formats
    bool bc;
    bool srgb;
};

inline const std::vector<Format> &formats() {
    static const std::vector<Format> table = {
        {CUCORE_ARRAY_FORMAT_UINT8, "UINT8", 1, 0, false, false},
        {CUCORE_ARRAY_FORMAT_UINT16, "UINT16", 2, 0, false, false},
        {CUCORE_ARRAY_FORMAT_UINT32, "UINT32", 4, 0, false, false},
        {CUCORE_ARRAY_FORMAT_INT8, "INT8", 1, 0, false, false},
        {CUCORE_ARRAY_FORMAT_INT16, "INT16", 2, 0, false, false},
        {CUCORE_ARRAY_FORMAT_INT32, "INT32", 4, 0, false, false},
        {CUCORE_ARRAY_FORMAT_FLOAT16, "FLOAT16", 2, 0, false, false},
        {CUCORE_ARRAY_FORMAT_FLOAT32, "FLOAT32", 4, 0, false, false},
        {CUCORE_ARRAY_FORMAT_UNORM_INT_101010_2, "UNORM_INT_101010_2", 4, 4, false, false},
        {CUCORE_ARRAY_FORMAT_BC1_UNORM, "BC1_UNORM", 8, 4, true, false},
        {CUCORE_ARRAY_FORMAT_BC1_UNORM_SRGB, "BC1_UNORM_SRGB", 8, 4, true, true},
        {CUCORE_ARRAY_FORMAT_BC2_UNORM, "BC2_UNORM", 16, 4, true, false},
        {CUCORE_ARRAY_FORMAT_BC2_UNORM_SRGB, "BC2_UNORM_SRGB", 16, 4, true, true},
        {CUCORE_ARRAY_FORMAT_BC3_UNORM, "BC3_UNORM", 16, 4, true, false},
        {CUCORE_ARRAY_FORMAT_BC3_UNORM_SRGB, "BC3_UNORM_SRGB", 16, 4, true, true},
        {CUCORE_ARRAY_FORMAT_BC4_UNORM, "BC4_UNORM", 8, 1, true, false},
        {CUCORE_ARRAY_FORMAT_BC4_SNORM, "BC4_SNORM", 8, 1, true, false},
        {CUCORE_ARRAY_FORMAT_BC5_UNORM, "BC5_UNORM", 16, 2, true, false},
        {CUCORE_ARRAY_FORMAT_BC5_SNORM, "BC5_SNORM", 16, 2, true, false},
        {CUCORE_ARRAY_FORMAT_BC6H_UF16, "BC6H_UF16", 16, 3, true, false},
        {CUCORE_ARRAY_FORMAT_BC6H_SF16, "BC6H_SF16", 16, 3, true, false},
        {CUCORE_ARRAY_FORMAT_BC7_UNORM, "BC7_UNORM", 16, 4, true, false},
        {CUCORE_ARRAY_FORMAT_BC7_UNORM_SRGB, "BC7_UNORM_SRGB", 16, 4, true, true},
        {CUCORE_ARRAY_FORMAT_UNORM_INT8X1, "UNORM_INT8X1", 1, 1, false, false},
        {CUCORE_ARRAY_FORMAT_UNORM_INT8X2, "UNORM_INT8X2", 2, 2, false, false},
        {CUCORE_ARRAY_FORMAT_UNORM_INT8X4, "UNORM_INT8X4", 4, 4, false, false},
        {CUCORE_ARRAY_FORMAT_UNORM_INT16X1, "UNORM_INT16X1", 2, 1, false, false},
        {CUCORE_ARRAY_FORMAT_UNORM_INT16X2, "UNORM_INT16X2", 4, 2, false, false},
        {CUCORE_ARRAY_FORMAT_UNORM_INT16X4, "UNORM_INT16X4", 8, 4, false, false},
        {CUCORE_ARRAY_FORMAT_SNORM_INT8X1, "SNORM_INT8X1", 1, 1, false, false},
        {CUCORE_ARRAY_FORMAT_SNORM_INT8X2, "SNORM_INT8X2", 2, 2, false, false},
        {CUCORE_ARRAY_FORMAT_SNORM_INT8X4, "SNORM_INT8X4", 4, 4, false, false},
        {CUCORE_ARRAY_FORMAT_SNORM_INT16X1, "SNORM_INT16X1", 2, 1, false, false},
        {CUCORE_ARRAY_FORMAT_SNORM_INT16X2, "SNORM_INT16X2", 4, 2, false, false},
        {CUCORE_ARRAY_FORMAT_SNORM_INT16X4, "SNORM_INT16X4", 8, 4, false, false},
    };
    return table;
}

// The channel counts the driver takes for `f` (0, "the format's own or 1",
// first): 1, 2, 4 for the plain formats, the format's own otherwise.
inline std::vector<std::uint32_t> channel_counts(const Format &f) {
    if (f.own_channels == 0) return {0, 1, 2, 4};
    return {0, f.own_channels};
}

// Channel counts the header says are refused for `f`.
inline std::vector<std::uint32_t> refused_channel_counts(const Format &f) {
    std::vector<std::uint32_t> out;
    for (std::uint32_t c : {1u, 2u, 3u, 4u, 5u, 8u}) {
        const bool taken = f.own_channels == 0 ? (c == 1 || c == 2 || c == 4) : c == f.own_channels;
        if (!taken) out.push_back(c);
    }
    return out;
}

// Bytes per element (BC: per block) for `channels` (0: the default count).
inline std::uint32_t element_size(const Format &f, std::uint32_t channels) {
    if (f.own_channels != 0) return f.bytes;
    return f.bytes * (channels == 0 ? 1 : channels);
}

// ---- The packed layout ----------------------------------------------------------

struct Packed {
    std::uint64_t row_bytes = 0, row_count = 0, slice_count = 0, size_bytes = 0;
};

// What cucore_opaque_array_info_t must say for `o` (docs of opaque_array.h):
// rows of width x element size (BC: ceil(w/4) blocks), height (BC: ceil(h/4))
// or 1 rows a slice, slices = depth, layers, 6, 6 x layers or 1.
inline Packed packed(const cucore_opaque_array_options_t &o, std::uint32_t element_bytes, bool bc) {
    Packed p;
    const std::uint64_t w = bc ? (o.width + 3) / 4 : o.width;
    const std::uint64_t h = o.height == 0 ? 1 : (bc ? (o.height + 3) / 4 : o.height);
    p.row_bytes = w * element_bytes;
    p.row_count = h;
    switch (o.kind) {
    case CUCORE_ARRAY_KIND_LAYERED: p.slice_count = o.layers; break;
    case CUCORE_ARRAY_KIND_CUBEMAP: p.slice_count = 6; break;
    case CUCORE_ARRAY_KIND_LAYERED_CUBEMAP: p.slice_count = 6 * o.layers; break;
    default: p.slice_count = o.depth == 0 ? 1 : o.depth; break;
    }
    p.size_bytes = p.row_bytes * p.row_count * p.slice_count;
    return p;
}

inline cucore_opaque_array_options_t options(cucore_array_format_t format, std::uint32_t channels,
                                             std::uint64_t width, std::uint64_t height = 0, std::uint64_t depth = 0,
                                             cucore_array_kind_t kind = CUCORE_ARRAY_KIND_PLAIN,
                                             std::uint64_t layers = 0, std::uint32_t flags = 0) {
    cucore_opaque_array_options_t o = CUCORE_OPAQUE_ARRAY_OPTIONS_INIT;
    o.format = format;
    o.num_channels = channels;
    o.kind = kind;
    o.flags = flags;
    o.width = width;
    o.height = height;
    o.depth = depth;
    o.layers = layers;
    return o;
}

// A host model of a packed array: bytes at (byte x, row y, slice z).
struct HostArray {
    Packed layout;
    Bytes bytes;
    explicit HostArray(const Packed &p, std::uint8_t fill = 0) : layout(p), bytes(p.size_bytes, fill) {}
    std::uint8_t *at(std::uint64_t x_bytes, std::uint64_t y, std::uint64_t z) {
        return &bytes.at((z * layout.row_count + y) * layout.row_bytes + x_bytes);
    }
};

// Copies `rows` x `slices` rows of `row_bytes` from a strided source (pitch,
// rows per slice) into the model at byte x, row y, slice z.
inline void model_copy_in(HostArray &dst, std::uint64_t x_bytes, std::uint64_t y, std::uint64_t z,
                          const std::uint8_t *src, std::uint64_t pitch, std::uint64_t src_rows_per_slice,
                          std::uint64_t row_bytes, std::uint64_t rows, std::uint64_t slices) {
    for (std::uint64_t k = 0; k < slices; ++k)
        for (std::uint64_t j = 0; j < rows; ++j)
            std::memcpy(dst.at(x_bytes, y + j, z + k), src + (k * src_rows_per_slice + j) * pitch, row_bytes);
}

// ---- C ABI helpers -------------------------------------------------------------------

inline cucore_opaque_array_info_t info(const cucore_opaque_array_t *a) {
    cucore_opaque_array_info_t i = CUCORE_OPAQUE_ARRAY_INFO_INIT;
    EXPECT_EQ(cucore_opaque_array_info(a, &i), CUCORE_SUCCESS) << cucore_last_error_message();
    return i;
}

inline cucore_opaque_array_info_t info(const cucore_mipmapped_array_t *a) {
    cucore_opaque_array_info_t i = CUCORE_OPAQUE_ARRAY_INFO_INIT;
    EXPECT_EQ(cucore_mipmapped_array_info(a, &i), CUCORE_SUCCESS) << cucore_last_error_message();
    return i;
}

inline Owned<cucore_opaque_array_t> create(cucore_device_t *dev, const cucore_opaque_array_options_t &o) {
    cucore_opaque_array_t *a = nullptr;
    EXPECT_EQ(cucore_opaque_array_create(dev, &o, &a), CUCORE_SUCCESS) << cucore_last_error_message();
    return Owned<cucore_opaque_array_t>(a);
}

// The whole array from host bytes, waiting for the copy.
inline void upload(cucore_opaque_array_t *a, const void *data, std::uint64_t size, cucore_stream_t *s) {
    EXPECT_EQ(cucore_opaque_array_copy_from_host(a, data, size, s), CUCORE_SUCCESS) << cucore_last_error_message();
    EXPECT_EQ(cucore_stream_synchronize(s), CUCORE_SUCCESS) << cucore_last_error_message();
}
template <typename T>
void upload(cucore_opaque_array_t *a, const std::vector<T> &v, cucore_stream_t *s) {
    upload(a, v.data(), v.size() * sizeof(T), s);
}

// The whole array as host bytes (its size_bytes), waiting for the copy.
inline Bytes download(cucore_opaque_array_t *a, cucore_stream_t *s) {
    Bytes out(static_cast<std::size_t>(info(a).size_bytes), 0xEE);
    EXPECT_EQ(cucore_opaque_array_copy_to_host(a, out.data(), out.size(), s), CUCORE_SUCCESS)
        << cucore_last_error_message();
    EXPECT_EQ(cucore_stream_synchronize(s), CUCORE_SUCCESS) << cucore_last_error_message();
    return out;
}

template <typename T>
std::vector<T> as(const Bytes &b) {
    std::vector<T> v(b.size() / sizeof(T));
    std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
    return v;
}

template <typename T>
Bytes bytes_of(const std::vector<T> &v) {
    Bytes b(v.size() * sizeof(T));
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

inline int attribute(cucore_device_t *dev, cucore_device_attribute_t a) {
    int v = 0;
    EXPECT_EQ(cucore_device_attribute(dev, a, &v), CUCORE_SUCCESS) << cucore_last_error_message();
    return v;
}

} // namespace arrays
} // namespace gpu
