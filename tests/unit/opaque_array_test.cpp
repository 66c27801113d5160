// Opaque arrays and mipmapped arrays through the fake driver: every format,
// kind and flag reaches cuArray3DCreate field by field; shapes and limits are
// refused before the driver (the message names the limit); the packed layout
// and sizes (BC in 4x4 blocks); whole-array and region copies move exactly
// the bytes they should (the fake's arrays are host bytes in the packed
// layout); close; levels; foreign arrays; the caller's context.
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "array_support.hpp"

namespace {

using ArrayTest = ArrayFixture;

struct FormatRow {
    cucore_array_format_t format;
    uint32_t channels;   // what num_channels 0 means for it
    uint32_t bytes;      // per element with `channels` (BC: per 4x4 block)
    bool plain;          // takes 1, 2 or 4 channels of `bytes`
};

const FormatRow kFormats[] = {
    {CUCORE_ARRAY_FORMAT_UINT8, 1, 1, true},
    {CUCORE_ARRAY_FORMAT_UINT16, 1, 2, true},
    {CUCORE_ARRAY_FORMAT_UINT32, 1, 4, true},
    {CUCORE_ARRAY_FORMAT_INT8, 1, 1, true},
    {CUCORE_ARRAY_FORMAT_INT16, 1, 2, true},
    {CUCORE_ARRAY_FORMAT_INT32, 1, 4, true},
    {CUCORE_ARRAY_FORMAT_FLOAT16, 1, 2, true},
    {CUCORE_ARRAY_FORMAT_FLOAT32, 1, 4, true},
    {CUCORE_ARRAY_FORMAT_UNORM_INT_101010_2, 4, 4, false},
    {CUCORE_ARRAY_FORMAT_BC1_UNORM, 4, 8, false},
    {CUCORE_ARRAY_FORMAT_BC1_UNORM_SRGB, 4, 8, false},
    {CUCORE_ARRAY_FORMAT_BC2_UNORM, 4, 16, false},
    {CUCORE_ARRAY_FORMAT_BC2_UNORM_SRGB, 4, 16, false},
    {CUCORE_ARRAY_FORMAT_BC3_UNORM, 4, 16, false},
    {CUCORE_ARRAY_FORMAT_BC3_UNORM_SRGB, 4, 16, false},
    {CUCORE_ARRAY_FORMAT_BC4_UNORM, 1, 8, false},
    {CUCORE_ARRAY_FORMAT_BC4_SNORM, 1, 8, false},
    {CUCORE_ARRAY_FORMAT_BC5_UNORM, 2, 16, false},
    {CUCORE_ARRAY_FORMAT_BC5_SNORM, 2, 16, false},
    {CUCORE_ARRAY_FORMAT_BC6H_UF16, 3, 16, false},
    {CUCORE_ARRAY_FORMAT_BC6H_SF16, 3, 16, false},
    {CUCORE_ARRAY_FORMAT_BC7_UNORM, 4, 16, false},
    {CUCORE_ARRAY_FORMAT_BC7_UNORM_SRGB, 4, 16, false},
    {CUCORE_ARRAY_FORMAT_UNORM_INT8X1, 1, 1, false},
    {CUCORE_ARRAY_FORMAT_UNORM_INT8X2, 2, 2, false},
    {CUCORE_ARRAY_FORMAT_UNORM_INT8X4, 4, 4, false},
    {CUCORE_ARRAY_FORMAT_UNORM_INT16X1, 1, 2, false},
    {CUCORE_ARRAY_FORMAT_UNORM_INT16X2, 2, 4, false},
    {CUCORE_ARRAY_FORMAT_UNORM_INT16X4, 4, 8, false},
    {CUCORE_ARRAY_FORMAT_SNORM_INT8X1, 1, 1, false},
    {CUCORE_ARRAY_FORMAT_SNORM_INT8X2, 2, 2, false},
    {CUCORE_ARRAY_FORMAT_SNORM_INT8X4, 4, 4, false},
    {CUCORE_ARRAY_FORMAT_SNORM_INT16X1, 1, 2, false},
    {CUCORE_ARRAY_FORMAT_SNORM_INT16X2, 2, 4, false},
    {CUCORE_ARRAY_FORMAT_SNORM_INT16X4, 4, 8, false},
};

// ---- Creation: what reaches the driver ----------------------------------------------

TEST_F(ArrayTest, EveryFormatAndChannelCountReachesTheDriver) {
    for (const FormatRow &row : kFormats) {
        SCOPED_TRACE("format " + std::to_string(row.format));
        std::vector<uint32_t> counts = {0};
        if (row.plain) counts.insert(counts.end(), {1, 2, 4});
        else counts.push_back(row.channels);  // its own count, given explicitly
        for (uint32_t channels : counts) {
            SCOPED_TRACE("num_channels " + std::to_string(channels));
            cucore_opaque_array_t *a = create(array_options(row.format, 8, 8, 0, CUCORE_ARRAY_KIND_PLAIN, 0, channels));
            ASSERT_NE(a, nullptr);
            const uint32_t expected = channels ? channels : row.channels;
            const CUDA_ARRAY3D_DESCRIPTOR d = fake::array_descriptor(raw(a));
            EXPECT_EQ(static_cast<int>(d.Format), static_cast<int>(row.format));
            EXPECT_EQ(d.NumChannels, expected);
            EXPECT_EQ(d.Width, 8u);
            EXPECT_EQ(d.Height, 8u);
            EXPECT_EQ(d.Depth, 0u);
            EXPECT_EQ(d.Flags, 0u);
            const cucore_opaque_array_info_t i = info(a);
            EXPECT_EQ(i.format, row.format);
            EXPECT_EQ(i.num_channels, expected);
            EXPECT_EQ(i.element_size, row.plain ? row.bytes * expected : row.bytes);
            EXPECT_EQ(i.device_ordinal, 0);
            EXPECT_EQ(i.is_owned, 1u);
            EXPECT_EQ(i.num_levels, 1u);
            EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
        }
    }
    EXPECT_EQ(fake::counters().arrays, 0);
}

struct KindRow {
    const char *name;
    cucore_array_kind_t kind;
    uint64_t width, height, depth, layers;
    // What the driver gets
    size_t d_height, d_depth;
    unsigned d_flags;
    uint64_t slices;
};

TEST_F(ArrayTest, EveryKindReachesTheDriverAsItsDescriptor) {
    const KindRow rows[] = {
        {"1D", CUCORE_ARRAY_KIND_PLAIN, 64, 0, 0, 0, 0, 0, 0, 1},
        {"2D", CUCORE_ARRAY_KIND_PLAIN, 16, 8, 0, 0, 8, 0, 0, 1},
        {"3D", CUCORE_ARRAY_KIND_PLAIN, 8, 4, 3, 0, 4, 3, 0, 3},
        {"1D layered", CUCORE_ARRAY_KIND_LAYERED, 32, 0, 0, 5, 0, 5, CUDA_ARRAY3D_LAYERED, 5},
        {"2D layered", CUCORE_ARRAY_KIND_LAYERED, 16, 8, 0, 3, 8, 3, CUDA_ARRAY3D_LAYERED, 3},
        {"cubemap", CUCORE_ARRAY_KIND_CUBEMAP, 8, 8, 0, 0, 8, 6, CUDA_ARRAY3D_CUBEMAP, 6},
        {"layered cubemap", CUCORE_ARRAY_KIND_LAYERED_CUBEMAP, 8, 8, 0, 2, 8, 12,
         CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP, 12},
    };
    for (const KindRow &row : rows) {
        SCOPED_TRACE(row.name);
        cucore_opaque_array_t *a =
            create(array_options(CUCORE_ARRAY_FORMAT_FLOAT32, row.width, row.height, row.depth, row.kind, row.layers, 2));
        ASSERT_NE(a, nullptr);
        const CUDA_ARRAY3D_DESCRIPTOR d = fake::array_descriptor(raw(a));
        EXPECT_EQ(d.Width, row.width);
        EXPECT_EQ(d.Height, row.d_height);
        EXPECT_EQ(d.Depth, row.d_depth);
        EXPECT_EQ(d.Flags, row.d_flags);
        EXPECT_EQ(d.NumChannels, 2u);
        const cucore_opaque_array_info_t i = info(a);
        EXPECT_EQ(i.kind, row.kind);
        EXPECT_EQ(i.width, row.width);
        EXPECT_EQ(i.height, row.height);
        EXPECT_EQ(i.depth, row.depth);
        EXPECT_EQ(i.layers, row.layers);
        EXPECT_EQ(i.element_size, 8u);
        EXPECT_EQ(i.row_bytes, row.width * 8);
        EXPECT_EQ(i.row_count, row.height ? row.height : 1);
        EXPECT_EQ(i.slice_count, row.slices);
        EXPECT_EQ(i.size_bytes, i.row_bytes * i.row_count * i.slice_count);
        EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    }
}

TEST_F(ArrayTest, EveryFlagReachesTheDriver) {
    struct Row {
        uint32_t flags;
        unsigned driver;
    };
    const Row rows[] = {
        {CUCORE_ARRAY_FLAG_NONE, 0},
        {CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE, CUDA_ARRAY3D_SURFACE_LDST},
        {CUCORE_ARRAY_FLAG_TEXTURE_GATHER, CUDA_ARRAY3D_TEXTURE_GATHER},
        {CUCORE_ARRAY_FLAG_DEPTH_TEXTURE, CUDA_ARRAY3D_DEPTH_TEXTURE},
        {CUCORE_ARRAY_FLAG_SPARSE, CUDA_ARRAY3D_SPARSE},
        {CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE | CUCORE_ARRAY_FLAG_TEXTURE_GATHER | CUCORE_ARRAY_FLAG_DEPTH_TEXTURE |
             CUCORE_ARRAY_FLAG_SPARSE,
         CUDA_ARRAY3D_SURFACE_LDST | CUDA_ARRAY3D_TEXTURE_GATHER | CUDA_ARRAY3D_DEPTH_TEXTURE | CUDA_ARRAY3D_SPARSE},
    };
    for (const Row &row : rows) {
        SCOPED_TRACE("flags " + std::to_string(row.flags));
        // INT32: a format the driver takes as a depth texture (float, uint8 and uint16 it refuses).
        cucore_opaque_array_t *a = create(
            array_options(CUCORE_ARRAY_FORMAT_INT32, 32, 16, 0, CUCORE_ARRAY_KIND_PLAIN, 0, 1, row.flags));
        ASSERT_NE(a, nullptr);
        EXPECT_EQ(fake::array_descriptor(raw(a)).Flags, row.driver);
        EXPECT_EQ(info(a).flags, row.flags);
        EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    }
    // Layered and cubemap arrays keep their kind's bits beside the flags.
    cucore_opaque_array_t *a = create(array_options(CUCORE_ARRAY_FORMAT_UINT8, 8, 8, 0,
                                                    CUCORE_ARRAY_KIND_LAYERED_CUBEMAP, 1, 4,
                                                    CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE));
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(fake::array_descriptor(raw(a)).Flags,
              unsigned{CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_SURFACE_LDST});
    EXPECT_EQ(info(a).flags, uint32_t{CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE});
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
}

TEST_F(ArrayTest, SparseArraysNeedADeviceThatHasThem) {
    const cucore_opaque_array_options_t sparse =
        array_options(CUCORE_ARRAY_FORMAT_FLOAT32, 256, 256, 0, CUCORE_ARRAY_KIND_PLAIN, 0, 1, CUCORE_ARRAY_FLAG_SPARSE);
    fake::set_attribute(CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED, 0, 0);
    fake::reset_calls();
    cucore_opaque_array_t *a = reinterpret_cast<cucore_opaque_array_t *>(0x1);
    EXPECT_EQ(cucore_opaque_array_create(d_, &sparse, &a), CUCORE_ERROR_NOT_SUPPORTED) << message();
    EXPECT_EQ(a, nullptr);
    EXPECT_TRUE(contains(message(), "cucore_opaque_array_create:")) << message();
    EXPECT_FALSE(driver_called("cuArray3DCreate")) << "refused before the driver";
    cucore_mipmapped_array_t *m = reinterpret_cast<cucore_mipmapped_array_t *>(0x1);
    EXPECT_EQ(cucore_mipmapped_array_create(d_, &sparse, 2, &m), CUCORE_ERROR_NOT_SUPPORTED) << message();
    EXPECT_EQ(m, nullptr);
    // Device 1 has them.
    cucore_device_t *d1 = device(1);
    a = create(sparse, d1);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(fake::array_descriptor(raw(a)).Flags, unsigned{CUDA_ARRAY3D_SPARSE});
    EXPECT_EQ(info(a).device_ordinal, 1);
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    cucore_device_release(d1);
}

TEST_F(ArrayTest, WhatTheDriverRefusesComesBackAsItsError) {
    // DEPTH_TEXTURE is the driver's to judge: driver 580 refuses it for float arrays.
    const cucore_opaque_array_options_t o = array_options(CUCORE_ARRAY_FORMAT_FLOAT32, 16, 16, 0,
                                                          CUCORE_ARRAY_KIND_PLAIN, 0, 1, CUCORE_ARRAY_FLAG_DEPTH_TEXTURE);
    cucore_opaque_array_t *a = reinterpret_cast<cucore_opaque_array_t *>(0x1);
    EXPECT_EQ(cucore_opaque_array_create(d_, &o, &a), CUCORE_ERROR_CUDA);
    EXPECT_EQ(a, nullptr);
    EXPECT_EQ(cucore_last_cuda_result(), CUDA_ERROR_INVALID_VALUE);
    EXPECT_TRUE(contains(message(), "cuArray3DCreate")) << message();
    EXPECT_TRUE(contains(message(), "CUDA_ERROR_INVALID_VALUE")) << message();
    EXPECT_EQ(fake::last_array_descriptor().Flags, unsigned{CUDA_ARRAY3D_DEPTH_TEXTURE});
    EXPECT_EQ(fake::counters().arrays, 0);
}

// ---- Creation: what is refused before the driver ----------------------------------------

struct Refusal {
    const char *name;
    std::function<void(cucore_opaque_array_options_t &)> change;
    const char *named;  // a part of the message ("" when the wording is the library's)
};

TEST_F(ArrayTest, BadShapesAndOptionsAreRefusedBeforeTheDriver) {
    const std::vector<Refusal> refusals = {
        {"unset format", [](auto &o) { o.format = CUCORE_ARRAY_FORMAT_UNSET; }, "format"},
        {"unknown format", [](auto &o) { o.format = static_cast<cucore_array_format_t>(0x04); }, "format"},
        {"a YUV format (NV12)", [](auto &o) { o.format = static_cast<cucore_array_format_t>(0xb0); }, "format"},
        {"3 plain channels", [](auto &o) { o.num_channels = 3; }, "num_channels"},
        {"5 plain channels", [](auto &o) { o.num_channels = 5; }, "num_channels"},
        {"BC1 with 2 channels", [](auto &o) { o.format = CUCORE_ARRAY_FORMAT_BC1_UNORM; o.num_channels = 2; }, "num_channels"},
        {"UNORM_INT8X1 with 4 channels", [](auto &o) { o.format = CUCORE_ARRAY_FORMAT_UNORM_INT8X1; o.num_channels = 4; },
         "num_channels"},
        {"101010_2 with 1 channel", [](auto &o) { o.format = CUCORE_ARRAY_FORMAT_UNORM_INT_101010_2; o.num_channels = 1; },
         "num_channels"},
        {"unknown kind", [](auto &o) { o.kind = static_cast<cucore_array_kind_t>(4); }, "kind"},
        {"kind above INT32_MAX", [](auto &o) { const uint32_t k = 0x80000001u; std::memcpy(&o.kind, &k, 4); }, "kind"},
        {"unknown flag", [](auto &o) { o.flags = 0x10; }, "flags"},
        {"reserved0", [](auto &o) { o.reserved0 = 1; }, "reserved0"},
        {"width 0", [](auto &o) { o.width = 0; }, "width"},
        {"1D with a depth", [](auto &o) { o.height = 0; o.depth = 4; }, ""},
        {"plain with layers", [](auto &o) { o.layers = 3; }, "layers"},
        {"layered with a depth", [](auto &o) { o.kind = CUCORE_ARRAY_KIND_LAYERED; o.layers = 2; o.depth = 2; }, "depth"},
        {"layered without layers", [](auto &o) { o.kind = CUCORE_ARRAY_KIND_LAYERED; }, "layers"},
        {"cubemap not square", [](auto &o) { o.kind = CUCORE_ARRAY_KIND_CUBEMAP; o.height = 8; }, ""},
        {"cubemap with a depth", [](auto &o) { o.kind = CUCORE_ARRAY_KIND_CUBEMAP; o.depth = 6; }, "depth"},
        {"cubemap with layers", [](auto &o) { o.kind = CUCORE_ARRAY_KIND_CUBEMAP; o.layers = 1; }, "layers"},
        {"layered cubemap without layers", [](auto &o) { o.kind = CUCORE_ARRAY_KIND_LAYERED_CUBEMAP; }, "layers"},
        {"gather in 1D", [](auto &o) { o.height = 0; o.flags = CUCORE_ARRAY_FLAG_TEXTURE_GATHER; }, ""},
        {"gather in 3D", [](auto &o) { o.depth = 2; o.flags = CUCORE_ARRAY_FLAG_TEXTURE_GATHER; }, ""},
        {"gather layered",
         [](auto &o) { o.kind = CUCORE_ARRAY_KIND_LAYERED; o.layers = 2; o.flags = CUCORE_ARRAY_FLAG_TEXTURE_GATHER; }, ""},
        {"gather cubemap", [](auto &o) { o.kind = CUCORE_ARRAY_KIND_CUBEMAP; o.flags = CUCORE_ARRAY_FLAG_TEXTURE_GATHER; }, ""},
        {"BC in 1D", [](auto &o) { o.format = CUCORE_ARRAY_FORMAT_BC7_UNORM; o.height = 0; }, ""},
        {"BC in 1D layers",
         [](auto &o) { o.format = CUCORE_ARRAY_FORMAT_BC4_UNORM; o.height = 0; o.kind = CUCORE_ARRAY_KIND_LAYERED; o.layers = 2; },
         ""},
        {"BC with surface load/store",
         [](auto &o) { o.format = CUCORE_ARRAY_FORMAT_BC1_UNORM; o.flags = CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE; }, ""},
    };
    for (const Refusal &refusal : refusals) {
        SCOPED_TRACE(refusal.name);
        // A 16 x 16 2D array, changed by the row.
        cucore_opaque_array_options_t o = array_options(CUCORE_ARRAY_FORMAT_UINT8, 16, 16);
        refusal.change(o);
        fake::reset_calls();
        cucore_opaque_array_t *a = reinterpret_cast<cucore_opaque_array_t *>(0x1);
        EXPECT_EQ(cucore_opaque_array_create(d_, &o, &a), CUCORE_ERROR_INVALID_ARGUMENT) << message();
        EXPECT_EQ(a, nullptr) << "out-pointer cleared";
        EXPECT_EQ(message().rfind("cucore_opaque_array_create:", 0), 0u) << message();
        EXPECT_TRUE(contains(message(), refusal.named)) << message();
        EXPECT_FALSE(driver_called("cuArray3DCreate")) << "refused before the driver";
        cucore_mipmapped_array_t *m = reinterpret_cast<cucore_mipmapped_array_t *>(0x1);
        EXPECT_EQ(cucore_mipmapped_array_create(d_, &o, 1, &m), CUCORE_ERROR_INVALID_ARGUMENT) << message();
        EXPECT_EQ(m, nullptr);
        EXPECT_FALSE(driver_called("cuMipmappedArrayCreate"));
    }
    EXPECT_EQ(fake::counters().arrays, 0);
}

struct Limit {
    const char *name;
    cucore_opaque_array_options_t at;    // at the limit: created
    cucore_opaque_array_options_t over;  // one past it: refused, naming `limit`
    const char *limit;
};

TEST_F(ArrayTest, LimitsAreRefusedBeforeTheDriverWithTheLimitNamed) {
    using F = cucore_array_format_t;
    const F u8 = CUCORE_ARRAY_FORMAT_UINT8;
    const auto L = CUCORE_ARRAY_KIND_LAYERED, C = CUCORE_ARRAY_KIND_CUBEMAP, LC = CUCORE_ARRAY_KIND_LAYERED_CUBEMAP;
    const auto P = CUCORE_ARRAY_KIND_PLAIN;
    const uint32_t gather = CUCORE_ARRAY_FLAG_TEXTURE_GATHER, surface = CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE;
    // The H100's limits (what the fake answers).
    const Limit limits[] = {
        {"1D width", array_options(u8, 131072), array_options(u8, 131073), "131072"},
        {"2D width", array_options(u8, 131072, 1), array_options(u8, 131073, 1), "131072"},
        {"2D height", array_options(u8, 1, 65536), array_options(u8, 1, 65537), "65536"},
        {"3D width", array_options(u8, 16384, 1, 1), array_options(u8, 16385, 1, 1), "16384"},
        // Past both the usual depth (16384) and the alternate (32768): the message names the usual one.
        {"3D depth (the alternate limits)", array_options(u8, 1, 1, 32768), array_options(u8, 1, 1, 32769), "16384"},
        {"1D layered width", array_options(u8, 32768, 0, 0, L, 1), array_options(u8, 32769, 0, 0, L, 1), "32768"},
        {"1D layered layers", array_options(u8, 1, 0, 0, L, 2048), array_options(u8, 1, 0, 0, L, 2049), "2048"},
        {"2D layered height", array_options(u8, 1, 32768, 0, L, 1), array_options(u8, 1, 32769, 0, L, 1), "32768"},
        {"2D layered layers", array_options(u8, 1, 1, 0, L, 2048), array_options(u8, 1, 1, 0, L, 2049), "2048"},
        {"cubemap width", array_options(u8, 32768, 32768, 0, C), array_options(u8, 32769, 32769, 0, C), "32768"},
        {"layered cubemap layers", array_options(u8, 1, 1, 0, LC, 2046), array_options(u8, 1, 1, 0, LC, 2047), "2046"},
        {"gather width", array_options(u8, 32768, 1, 0, P, 0, 1, gather), array_options(u8, 32769, 1, 0, P, 0, 1, gather),
         "32768"},
        {"surface 1D width", array_options(u8, 32768, 0, 0, P, 0, 1, surface),
         array_options(u8, 32769, 0, 0, P, 0, 1, surface), "32768"},
    };
    for (const Limit &limit : limits) {
        SCOPED_TRACE(limit.name);
        cucore_opaque_array_t *a = create(limit.at);
        EXPECT_NE(a, nullptr) << "at the limit";
        EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
        fake::reset_calls();
        a = reinterpret_cast<cucore_opaque_array_t *>(0x1);
        EXPECT_EQ(cucore_opaque_array_create(d_, &limit.over, &a), CUCORE_ERROR_INVALID_ARGUMENT) << message();
        EXPECT_EQ(a, nullptr);
        EXPECT_TRUE(contains(message(), limit.limit)) << "names the limit: " << message();
        EXPECT_FALSE(driver_called("cuArray3DCreate")) << "refused before the driver";
    }
    // 3D: past both the usual and the alternate limits.
    const cucore_opaque_array_options_t both = array_options(u8, 8193, 1, 16385);
    cucore_opaque_array_t *a = nullptr;
    EXPECT_EQ(cucore_opaque_array_create(d_, &both, &a), CUCORE_ERROR_INVALID_ARGUMENT) << message();
    EXPECT_EQ(fake::counters().arrays, 0);
}

TEST_F(ArrayTest, LimitsAreTheDevicesOwn) {
    // Device 1 answers a smaller 1D limit; device 0 keeps the H100's.
    fake::set_attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH, 1, 1000);
    cucore_device_t *d1 = device(1);
    const cucore_opaque_array_options_t o = array_options(CUCORE_ARRAY_FORMAT_FLOAT32, 1001);
    cucore_opaque_array_t *a = nullptr;
    EXPECT_EQ(cucore_opaque_array_create(d1, &o, &a), CUCORE_ERROR_INVALID_ARGUMENT) << message();
    EXPECT_TRUE(contains(message(), "1000")) << message();
    a = create(o);
    EXPECT_NE(a, nullptr);
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    cucore_device_release(d1);
}

// ---- The packed layout ------------------------------------------------------------------

TEST_F(ArrayTest, PackedLayoutAndSizesIncludingBlockCompressed) {
    struct Row {
        const char *name;
        cucore_opaque_array_options_t options;
        uint32_t element_size;
        uint64_t row_bytes, row_count, slice_count;
    };
    const Row rows[] = {
        {"3D float2", array_options(CUCORE_ARRAY_FORMAT_FLOAT32, 5, 3, 2, CUCORE_ARRAY_KIND_PLAIN, 0, 2), 8, 40, 3, 2},
        {"1D uint16x4", array_options(CUCORE_ARRAY_FORMAT_UINT16, 7, 0, 0, CUCORE_ARRAY_KIND_PLAIN, 0, 4), 8, 56, 1, 1},
        {"101010_2", array_options(CUCORE_ARRAY_FORMAT_UNORM_INT_101010_2, 3, 3), 4, 12, 3, 1},
        {"unorm16x4 layered", array_options(CUCORE_ARRAY_FORMAT_UNORM_INT16X4, 2, 2, 0, CUCORE_ARRAY_KIND_LAYERED, 3), 8,
         16, 2, 3},
        {"BC1 10 x 6 (partial blocks)", array_options(CUCORE_ARRAY_FORMAT_BC1_UNORM, 10, 6), 8, 24, 2, 1},
        {"BC4 3 x 3 (one partial block)", array_options(CUCORE_ARRAY_FORMAT_BC4_SNORM, 3, 3), 8, 8, 1, 1},
        {"BC7 16 x 16 layered", array_options(CUCORE_ARRAY_FORMAT_BC7_UNORM, 16, 16, 0, CUCORE_ARRAY_KIND_LAYERED, 2), 16,
         64, 4, 2},
        {"BC6H 3D", array_options(CUCORE_ARRAY_FORMAT_BC6H_UF16, 8, 8, 3), 16, 32, 2, 3},
        {"BC5 cubemap", array_options(CUCORE_ARRAY_FORMAT_BC5_UNORM, 8, 8, 0, CUCORE_ARRAY_KIND_CUBEMAP), 16, 32, 2, 6},
        {"BC2 layered cubemap", array_options(CUCORE_ARRAY_FORMAT_BC2_UNORM, 4, 4, 0, CUCORE_ARRAY_KIND_LAYERED_CUBEMAP, 2),
         16, 16, 1, 12},
    };
    for (const Row &row : rows) {
        SCOPED_TRACE(row.name);
        cucore_opaque_array_t *a = create(row.options);
        ASSERT_NE(a, nullptr);
        const cucore_opaque_array_info_t i = info(a);
        EXPECT_EQ(i.element_size, row.element_size);
        EXPECT_EQ(i.row_bytes, row.row_bytes);
        EXPECT_EQ(i.row_count, row.row_count);
        EXPECT_EQ(i.slice_count, row.slice_count);
        EXPECT_EQ(i.size_bytes, row.row_bytes * row.row_count * row.slice_count);
        EXPECT_EQ(stored(a).size(), i.size_bytes) << "the driver's packed layout is the same";
        EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    }
}

// ---- Whole-array copies -----------------------------------------------------------------

std::vector<cucore_opaque_array_options_t> copy_shapes() {
    return {
        array_options(CUCORE_ARRAY_FORMAT_UINT8, 100),
        array_options(CUCORE_ARRAY_FORMAT_FLOAT32, 7, 5, 0, CUCORE_ARRAY_KIND_PLAIN, 0, 4),
        array_options(CUCORE_ARRAY_FORMAT_INT16, 4, 3, 2, CUCORE_ARRAY_KIND_PLAIN, 0, 2),
        array_options(CUCORE_ARRAY_FORMAT_UINT8, 4, 4, 0, CUCORE_ARRAY_KIND_LAYERED_CUBEMAP, 2, 1),
        array_options(CUCORE_ARRAY_FORMAT_BC1_UNORM, 10, 6),
        array_options(CUCORE_ARRAY_FORMAT_BC7_UNORM, 8, 8, 0, CUCORE_ARRAY_KIND_LAYERED, 2),
    };
}

TEST_F(ArrayTest, WholeArrayCopiesRoundTripThroughHostMemory) {
    uint32_t seed = 1;
    for (const cucore_opaque_array_options_t &o : copy_shapes()) {
        SCOPED_TRACE("format " + std::to_string(o.format) + " kind " + std::to_string(o.kind));
        cucore_opaque_array_t *a = create(o);
        ASSERT_NE(a, nullptr);
        const uint64_t size = info(a).size_bytes;
        const Bytes data = pattern(size, seed++);
        ASSERT_EQ(cucore_opaque_array_copy_from_host(a, data.data(), size, s_), CUCORE_SUCCESS) << message();
        ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
        EXPECT_EQ(stored(a), data) << "the packed layout, byte for byte";
        // Into a larger host buffer: size_bytes are written, the rest is left alone.
        Bytes back(size + 16, 0xEE);
        ASSERT_EQ(cucore_opaque_array_copy_to_host(a, back.data(), back.size(), s_), CUCORE_SUCCESS) << message();
        ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
        EXPECT_EQ(Bytes(back.begin(), back.begin() + static_cast<long>(size)), data);
        EXPECT_EQ(Bytes(back.begin() + static_cast<long>(size), back.end()), Bytes(16, 0xEE));
        EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    }
}

TEST_F(ArrayTest, WholeArrayCopiesRoundTripThroughBuffers) {
    uint32_t seed = 10;
    for (const cucore_opaque_array_options_t &o : copy_shapes()) {
        SCOPED_TRACE("format " + std::to_string(o.format) + " kind " + std::to_string(o.kind));
        cucore_opaque_array_t *a = create(o);
        ASSERT_NE(a, nullptr);
        const uint64_t size = info(a).size_bytes;
        cucore_buffer_t *b = allocate(size + 64);  // larger than the array: its start is copied
        const Bytes data = pattern(size + 64, seed++);
        write(b, data);
        ASSERT_EQ(cucore_opaque_array_copy_from_buffer(a, b, s_), CUCORE_SUCCESS) << message();
        ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
        EXPECT_EQ(stored(a), Bytes(data.begin(), data.begin() + static_cast<long>(size)));
        const Bytes other = pattern(size, seed++);
        store(a, other);
        ASSERT_EQ(cucore_opaque_array_copy_to_buffer(a, b, s_), CUCORE_SUCCESS) << message();
        Bytes expected = other;
        expected.insert(expected.end(), data.begin() + static_cast<long>(size), data.end());
        EXPECT_EQ(read(b, size + 64), expected) << "the array's bytes, then the buffer's own";
        cucore_buffer_release(b);
        EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    }
}

TEST_F(ArrayTest, ShortHostMemoryAndBuffersAreRefusedNamingBothSizes) {
    cucore_opaque_array_t *a = create(array_options(CUCORE_ARRAY_FORMAT_FLOAT32, 8, 4, 0, CUCORE_ARRAY_KIND_PLAIN, 0, 2));
    ASSERT_NE(a, nullptr);
    const Bytes fresh = stored(a);
    ASSERT_EQ(fresh.size(), 256u);
    Bytes host(256, 0x11);
    fake::reset_calls();
    EXPECT_EQ(cucore_opaque_array_copy_from_host(a, host.data(), 255, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "255") && contains(message(), "256")) << message();
    EXPECT_EQ(cucore_opaque_array_copy_to_host(a, host.data(), 100, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "100") && contains(message(), "256")) << message();
    EXPECT_EQ(cucore_opaque_array_copy_from_host(a, nullptr, 256, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_opaque_array_copy_to_host(a, nullptr, 256, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_buffer_t *small = allocate(200);
    EXPECT_EQ(cucore_opaque_array_copy_from_buffer(a, small, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "200") && contains(message(), "256")) << message();
    EXPECT_EQ(cucore_opaque_array_copy_to_buffer(a, small, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "200") && contains(message(), "256")) << message();
    EXPECT_FALSE(driver_called("cuMemcpy3DAsync")) << "nothing reached the driver";
    EXPECT_EQ(stored(a), fresh) << "nothing was written";
    EXPECT_EQ(host, Bytes(256, 0x11));
    cucore_buffer_release(small);
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
}

TEST_F(ArrayTest, ArrayToArrayCopiesNeedTheSameLayout) {
    const cucore_opaque_array_options_t o = array_options(CUCORE_ARRAY_FORMAT_UINT16, 6, 4, 0, CUCORE_ARRAY_KIND_LAYERED, 3, 2);
    cucore_opaque_array_t *a = create(o), *b = create(o);
    const Bytes data = pattern(info(a).size_bytes, 5);
    store(a, data);
    ASSERT_EQ(cucore_opaque_array_copy_from_array(b, a, s_), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
    EXPECT_EQ(stored(b), data);
    cucore_opaque_array_options_t wider = o;
    wider.width = 7;
    cucore_opaque_array_options_t other_element = o;
    other_element.num_channels = 4;
    cucore_opaque_array_options_t fewer_layers = o;
    fewer_layers.layers = 2;
    for (const cucore_opaque_array_options_t &different : {wider, other_element, fewer_layers}) {
        cucore_opaque_array_t *c = create(different);
        const Bytes before = stored(c);
        fake::reset_calls();
        EXPECT_EQ(cucore_opaque_array_copy_from_array(c, a, s_), CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(cucore_opaque_array_copy_from_array(a, c, s_), CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_FALSE(driver_called("cuMemcpy3DAsync"));
        EXPECT_EQ(stored(c), before);
        EXPECT_EQ(cucore_opaque_array_release(c), CUCORE_SUCCESS);
    }
    EXPECT_EQ(stored(a), data);
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_opaque_array_release(b), CUCORE_SUCCESS);
}

// ---- Region copies ----------------------------------------------------------------------

// The bytes of a packed array after writing `region` (rows of `row` bytes) at
// byte x, row y, slice z of a layout of `pitch` bytes and `rows` rows per slice.
Bytes with_region(Bytes array, uint64_t pitch, uint64_t rows, uint64_t x, uint64_t y, uint64_t z, uint64_t row,
                  uint64_t height, uint64_t depth, const Bytes &region) {
    for (uint64_t k = 0; k < depth; ++k)
        for (uint64_t j = 0; j < height; ++j)
            std::memcpy(&array[((z + k) * rows + y + j) * pitch + x], &region[(k * height + j) * row], row);
    return array;
}

cucore_opaque_array_copy_t region_copy(uint64_t width, uint64_t height, uint64_t depth) {
    cucore_opaque_array_copy_t c = CUCORE_OPAQUE_ARRAY_COPY_INIT;
    c.width = width;
    c.height = height;
    c.depth = depth;
    return c;
}

TEST_F(ArrayTest, HostIntoAnArrayRegion) {
    // uint16 x 2: 4 bytes an element; 6 x 5 x 4.
    cucore_opaque_array_t *a = create(array_options(CUCORE_ARRAY_FORMAT_UINT16, 6, 5, 4, CUCORE_ARRAY_KIND_PLAIN, 0, 2));
    ASSERT_NE(a, nullptr);
    const Bytes before = stored(a);
    const Bytes region = pattern(3 * 4 * 2 * 2, 21);  // 3 elements x 2 rows x 2 slices, packed
    cucore_opaque_array_copy_t c = region_copy(3, 2, 2);
    c.src_memory.host = const_cast<uint8_t *>(region.data());  // pitch 0: packed, height 0: the rows copied
    c.dst_array.array = a;
    c.dst_array.x = 1;
    c.dst_array.y = 2;
    c.dst_array.z = 1;
    ASSERT_EQ(cucore_opaque_array_copy(&c, s_), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
    EXPECT_EQ(stored(a), with_region(before, 24, 5, 4, 2, 1, 12, 2, 2, region));
    // Out again into a host layout with a pitch, offsets and slices of its own.
    Bytes out(2 * 4 * 40, 0xEE);
    cucore_opaque_array_copy_t back = region_copy(3, 2, 2);
    back.src_array.array = a;
    back.src_array.x = 1;
    back.src_array.y = 2;
    back.src_array.z = 1;
    back.dst_memory.host = out.data();
    back.dst_memory.offset = 8;
    back.dst_memory.pitch = 40;
    back.dst_memory.height = 4;
    back.dst_memory.x = 4;
    back.dst_memory.y = 1;
    ASSERT_EQ(cucore_opaque_array_copy(&back, s_), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
    Bytes expected(2 * 4 * 40, 0xEE);
    for (int k = 0; k < 2; ++k)
        for (int j = 0; j < 2; ++j)
            std::memcpy(&expected[8 + ((k * 4) + 1 + j) * 40 + 4], &region[(k * 2 + j) * 12], 12);
    EXPECT_EQ(out, expected);
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
}

TEST_F(ArrayTest, ArrayRegionsToAndFromBuffers) {
    cucore_opaque_array_t *a = create(array_options(CUCORE_ARRAY_FORMAT_FLOAT32, 8, 6));  // 4-byte elements
    const Bytes data = pattern(info(a).size_bytes, 31);
    store(a, data);
    cucore_buffer_t *b = allocate(1024);
    const Bytes filler = pattern(1024, 32);
    write(b, filler);
    cucore_opaque_array_copy_t c = region_copy(5, 3, 1);
    c.src_array.array = a;
    c.src_array.x = 2;
    c.src_array.y = 1;
    c.dst_memory.buffer = b;
    c.dst_memory.offset = 16;
    c.dst_memory.pitch = 64;
    c.dst_memory.x = 8;
    c.dst_memory.y = 2;
    ASSERT_EQ(cucore_opaque_array_copy(&c, s_), CUCORE_SUCCESS) << message();
    Bytes expected = filler;
    for (int j = 0; j < 3; ++j) std::memcpy(&expected[16 + (2 + j) * 64 + 8], &data[(1 + j) * 32 + 8], 20);
    EXPECT_EQ(read(b, 1024), expected);
    // And back into another place of the array.
    cucore_opaque_array_copy_t in = region_copy(5, 3, 1);
    in.src_memory = c.dst_memory;
    in.dst_array.array = a;
    in.dst_array.x = 0;
    in.dst_array.y = 3;
    ASSERT_EQ(cucore_opaque_array_copy(&in, s_), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
    Bytes after = data;
    for (int j = 0; j < 3; ++j) std::memcpy(&after[(3 + j) * 32], &data[(1 + j) * 32 + 8], 20);
    EXPECT_EQ(stored(a), after);
    cucore_buffer_release(b);
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
}

TEST_F(ArrayTest, ArrayToArrayRegions) {
    // Element sizes agree (uint8 x 4 and float x 1: 4 bytes), formats need not.
    cucore_opaque_array_t *a = create(array_options(CUCORE_ARRAY_FORMAT_UINT8, 6, 4, 0, CUCORE_ARRAY_KIND_PLAIN, 0, 4));
    cucore_opaque_array_t *b = create(array_options(CUCORE_ARRAY_FORMAT_FLOAT32, 5, 5, 3));
    const Bytes source = pattern(info(a).size_bytes, 41);
    store(a, source);
    const Bytes before = stored(b);
    cucore_opaque_array_copy_t c = region_copy(2, 3, 1);
    c.src_array.array = a;
    c.src_array.x = 4;
    c.src_array.y = 1;
    c.dst_array.array = b;
    c.dst_array.x = 3;
    c.dst_array.y = 2;
    c.dst_array.z = 2;
    ASSERT_EQ(cucore_opaque_array_copy(&c, s_), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
    Bytes region;
    for (int j = 0; j < 3; ++j) region.insert(region.end(), &source[(1 + j) * 24 + 16], &source[(1 + j) * 24 + 24]);
    EXPECT_EQ(stored(b), with_region(before, 20, 5, 12, 2, 2, 8, 3, 1, region));
    // Element sizes that differ.
    cucore_opaque_array_t *small = create(array_options(CUCORE_ARRAY_FORMAT_UINT16, 6, 4));
    c.dst_array.array = small;
    c.dst_array.z = 0;
    fake::reset_calls();
    EXPECT_EQ(cucore_opaque_array_copy(&c, s_), CUCORE_ERROR_INVALID_ARGUMENT) << message();
    EXPECT_FALSE(driver_called("cuMemcpy3DAsync"));
    for (cucore_opaque_array_t *x : {a, b, small}) EXPECT_EQ(cucore_opaque_array_release(x), CUCORE_SUCCESS);
}

TEST_F(ArrayTest, ZIsTheLayerTheFaceOrTheCubemapAndFace) {
    struct Row {
        const char *name;
        cucore_opaque_array_options_t options;
        uint64_t z;
    };
    const Row rows[] = {
        {"3D slice", array_options(CUCORE_ARRAY_FORMAT_UINT8, 4, 4, 5), 3},
        {"layer", array_options(CUCORE_ARRAY_FORMAT_UINT8, 4, 4, 0, CUCORE_ARRAY_KIND_LAYERED, 5), 4},
        {"1D layer", array_options(CUCORE_ARRAY_FORMAT_UINT8, 16, 0, 0, CUCORE_ARRAY_KIND_LAYERED, 3), 2},
        {"cubemap face", array_options(CUCORE_ARRAY_FORMAT_UINT8, 4, 4, 0, CUCORE_ARRAY_KIND_CUBEMAP), 3},
        {"cubemap 1, face 2", array_options(CUCORE_ARRAY_FORMAT_UINT8, 4, 4, 0, CUCORE_ARRAY_KIND_LAYERED_CUBEMAP, 2),
         6 + 2},
    };
    for (const Row &row : rows) {
        SCOPED_TRACE(row.name);
        cucore_opaque_array_t *a = create(row.options);
        const cucore_opaque_array_info_t i = info(a);
        const Bytes before = stored(a);
        const Bytes slice = pattern(i.row_bytes * i.row_count, 50);
        cucore_opaque_array_copy_t c = region_copy(i.width, i.height ? i.height : 1, 1);
        c.src_memory.host = const_cast<uint8_t *>(slice.data());
        c.dst_array.array = a;
        c.dst_array.z = row.z;
        ASSERT_EQ(cucore_opaque_array_copy(&c, s_), CUCORE_SUCCESS) << message();
        ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
        Bytes expected = before;
        std::copy(slice.begin(), slice.end(), expected.begin() + static_cast<long>(row.z * slice.size()));
        EXPECT_EQ(stored(a), expected);
        c.dst_array.z = i.slice_count;  // one past the last
        EXPECT_EQ(cucore_opaque_array_copy(&c, s_), CUCORE_ERROR_INVALID_ARGUMENT) << message();
        EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    }
}

TEST_F(ArrayTest, BlockCompressedRegionsMoveWholeBlocks) {
    // BC1 16 x 12: 4 x 3 blocks of 8 bytes, rows of 32 bytes.
    cucore_opaque_array_t *a = create(array_options(CUCORE_ARRAY_FORMAT_BC1_UNORM, 16, 12));
    ASSERT_NE(a, nullptr);
    const Bytes before = stored(a);
    const Bytes blocks = pattern(2 * 2 * 8, 61);  // 8 x 8 texels: 2 x 2 blocks, rows of 16 bytes
    cucore_opaque_array_copy_t c = region_copy(8, 8, 1);
    c.src_memory.host = const_cast<uint8_t *>(blocks.data());
    c.dst_array.array = a;
    c.dst_array.x = 4;
    c.dst_array.y = 4;
    ASSERT_EQ(cucore_opaque_array_copy(&c, s_), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
    EXPECT_EQ(stored(a), with_region(before, 32, 3, 8, 1, 0, 16, 2, 1, blocks));
    // Off the 4 x 4 grid: refused before the driver.
    fake::reset_calls();
    for (auto change : std::vector<std::function<void(cucore_opaque_array_copy_t &)>>{
             [](auto &k) { k.dst_array.x = 2; }, [](auto &k) { k.dst_array.y = 5; }, [](auto &k) { k.width = 6; },
             [](auto &k) { k.height = 3; }}) {
        cucore_opaque_array_copy_t bad = c;
        change(bad);
        EXPECT_EQ(cucore_opaque_array_copy(&bad, s_), CUCORE_ERROR_INVALID_ARGUMENT) << message();
    }
    EXPECT_FALSE(driver_called("cuMemcpy3DAsync"));
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);

    // An extent may end at the array's edge: BC4 10 x 6 is 3 x 2 blocks; the
    // last column of blocks is 2 texels wide and the last row 2 texels high.
    cucore_opaque_array_t *edge = create(array_options(CUCORE_ARRAY_FORMAT_BC4_UNORM, 10, 6));
    const Bytes edge_before = stored(edge);
    const Bytes one = pattern(8, 62);
    cucore_opaque_array_copy_t e = region_copy(2, 2, 1);
    e.src_memory.host = const_cast<uint8_t *>(one.data());
    e.dst_array.array = edge;
    e.dst_array.x = 8;
    e.dst_array.y = 4;
    ASSERT_EQ(cucore_opaque_array_copy(&e, s_), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
    EXPECT_EQ(stored(edge), with_region(edge_before, 24, 2, 16, 1, 0, 8, 1, 1, one));
    e.width = 3;  // past the edge
    EXPECT_EQ(cucore_opaque_array_copy(&e, s_), CUCORE_ERROR_INVALID_ARGUMENT) << message();
    EXPECT_EQ(cucore_opaque_array_release(edge), CUCORE_SUCCESS);
}

TEST_F(ArrayTest, BadRegionCopiesAreRefusedBeforeTheDriver) {
    cucore_opaque_array_t *a = create(array_options(CUCORE_ARRAY_FORMAT_FLOAT32, 8, 4, 2));  // 4-byte elements
    cucore_opaque_array_t *line = create(array_options(CUCORE_ARRAY_FORMAT_FLOAT32, 8));    // 1D
    cucore_buffer_t *b = allocate(256);
    Bytes host(4096, 0x33);
    // A valid copy from the buffer into all of `a`'s first slice, changed by each row.
    cucore_opaque_array_copy_t good = region_copy(8, 4, 1);
    good.src_memory.buffer = b;
    good.dst_array.array = a;
    ASSERT_EQ(cucore_opaque_array_copy(&good, s_), CUCORE_SUCCESS) << message();
    const Bytes before = stored(a);
    struct Row {
        const char *name;
        std::function<void(cucore_opaque_array_copy_t &)> change;
    };
    const std::vector<Row> rows = {
        {"no array side", [&](auto &k) { k.dst_array.array = nullptr; k.dst_memory.host = host.data(); }},
        {"a memory side with buffer and host", [&](auto &k) { k.src_memory.host = host.data(); }},
        {"a memory side with neither", [&](auto &k) { k.src_memory.buffer = nullptr; }},
        {"x past the width", [](auto &k) { k.dst_array.x = 1; }},
        {"y past the height", [](auto &k) { k.dst_array.y = 1; }},
        {"z past the depth", [](auto &k) { k.dst_array.z = 2; }},
        {"depth past the slices", [](auto &k) { k.depth = 3; }},
        {"outside the buffer", [](auto &k) { k.src_memory.offset = 200; }},
        {"rows past the buffer", [](auto &k) { k.src_memory.y = 5; }},
        {"a pitch shorter than the row", [](auto &k) { k.src_memory.pitch = 16; }},
        {"width 0", [](auto &k) { k.width = 0; }},
        {"height 0", [](auto &k) { k.height = 0; }},
        {"depth 0", [](auto &k) { k.depth = 0; }},
        {"x overflows", [](auto &k) { k.dst_array.x = UINT64_MAX - 2; }},
        {"width overflows", [](auto &k) { k.width = UINT64_MAX / 2; }},
        {"memory offset overflows", [](auto &k) { k.src_memory.offset = UINT64_MAX - 8; }},
        {"a 1D array with 2 rows", [&](auto &k) { k.dst_array.array = line; k.height = 2; }},
        {"reserved0", [](auto &k) { k.reserved0 = 1; }},
        {"struct_size 0", [](auto &k) { k.struct_size = 0; }},
    };
    for (const Row &row : rows) {
        SCOPED_TRACE(row.name);
        cucore_opaque_array_copy_t c = good;
        row.change(c);
        fake::reset_calls();
        EXPECT_EQ(cucore_opaque_array_copy(&c, s_), CUCORE_ERROR_INVALID_ARGUMENT) << message();
        EXPECT_EQ(message().rfind("cucore_opaque_array_copy:", 0), 0u) << message();
        EXPECT_FALSE(driver_called("cuMemcpy3DAsync")) << "refused before the driver";
    }
    EXPECT_EQ(cucore_opaque_array_copy(nullptr, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "'copy'")) << message();
    EXPECT_EQ(stored(a), before) << "nothing was written";
    cucore_buffer_release(b);
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_opaque_array_release(line), CUCORE_SUCCESS);
}

// ---- Close --------------------------------------------------------------------------------

TEST_F(ArrayTest, CloseIsIdempotentAndEverythingElseIsInvalidStateAfterIt) {
    cucore_opaque_array_t *a = create(array_options(CUCORE_ARRAY_FORMAT_UINT8, 16, 16));
    cucore_opaque_array_t *other = create(array_options(CUCORE_ARRAY_FORMAT_UINT8, 16, 16));
    ASSERT_EQ(fake::counters().arrays, 2);
    ASSERT_EQ(cucore_opaque_array_close(a), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::counters().arrays, 1) << "destroyed at once";
    EXPECT_EQ(cucore_opaque_array_close(a), CUCORE_SUCCESS) << "idempotent";
    fake::reset_calls();
    cucore_opaque_array_info_t i = CUCORE_OPAQUE_ARRAY_INFO_INIT;
    EXPECT_EQ(cucore_opaque_array_info(a, &i), CUCORE_ERROR_INVALID_STATE);
    EXPECT_TRUE(contains(message(), "closed")) << message();
    void *handle = reinterpret_cast<void *>(0x1);
    EXPECT_EQ(cucore_opaque_array_handle(a, &handle), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(handle, nullptr);
    Bytes host(256);
    EXPECT_EQ(cucore_opaque_array_copy_from_host(a, host.data(), host.size(), s_), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(cucore_opaque_array_copy_to_host(a, host.data(), host.size(), s_), CUCORE_ERROR_INVALID_STATE);
    cucore_buffer_t *b = allocate(256);
    EXPECT_EQ(cucore_opaque_array_copy_from_buffer(a, b, s_), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(cucore_opaque_array_copy_to_buffer(a, b, s_), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(cucore_opaque_array_copy_from_array(a, other, s_), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(cucore_opaque_array_copy_from_array(other, a, s_), CUCORE_ERROR_INVALID_STATE);
    cucore_opaque_array_copy_t c = region_copy(4, 4, 1);
    c.src_array.array = a;
    c.dst_memory.host = host.data();
    EXPECT_EQ(cucore_opaque_array_copy(&c, s_), CUCORE_ERROR_INVALID_STATE);
    cucore_texture_object_t *t = reinterpret_cast<cucore_texture_object_t *>(0x1);
    const cucore_resource_descriptor_t r = of(a);
    EXPECT_EQ(cucore_texture_object_create(nullptr, &r, nullptr, &t), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(t, nullptr);
    EXPECT_FALSE(driver_called("cuMemcpy3DAsync"));
    EXPECT_FALSE(driver_called("cuTexObjectCreate"));
    // A closed buffer is INVALID_STATE too.
    ASSERT_EQ(cucore_buffer_close(b, nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_opaque_array_copy_from_buffer(other, b, s_), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(cucore_opaque_array_retain(a), CUCORE_SUCCESS) << "the handle stays valid";
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_ERROR_INVALID_HANDLE);
    cucore_buffer_release(b);
    EXPECT_EQ(cucore_opaque_array_release(other), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().arrays, 0);
}

TEST_F(ArrayTest, ReleaseDestroysTheArrayInItsContextAndLeavesTheCallersContext) {
    const CUcontext callers = fake::make_foreign_context(0);
    fake::set_current_context(callers);
    cucore_opaque_array_t *a = create(array_options(CUCORE_ARRAY_FORMAT_FLOAT32, 32, 8));
    EXPECT_EQ(fake::current_context(), callers);
    const Bytes data = pattern(info(a).size_bytes, 70);
    ASSERT_EQ(cucore_opaque_array_copy_from_host(a, data.data(), data.size(), s_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::current_context(), callers);
    Bytes back(data.size());
    ASSERT_EQ(cucore_opaque_array_copy_to_host(a, back.data(), back.size(), s_), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
    EXPECT_EQ(back, data);
    cucore_opaque_array_copy_t c = region_copy(4, 2, 1);
    c.src_array.array = a;
    c.dst_memory.host = back.data();
    ASSERT_EQ(cucore_opaque_array_copy(&c, s_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::current_context(), callers);
    cucore_mipmapped_array_t *m = create_mipmapped(array_options(CUCORE_ARRAY_FORMAT_FLOAT32, 32, 8), 3);
    cucore_opaque_array_t *level = nullptr;
    ASSERT_EQ(cucore_mipmapped_array_level(m, 2, &level), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::current_context(), callers);
    EXPECT_EQ(cucore_opaque_array_close(a), CUCORE_SUCCESS);
    EXPECT_EQ(fake::current_context(), callers);
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_opaque_array_release(level), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_mipmapped_array_release(m), CUCORE_SUCCESS);
    EXPECT_EQ(fake::current_context(), callers);
    EXPECT_EQ(fake::counters().arrays, 0);
    EXPECT_EQ(fake::counters().mipmapped_arrays, 0);
    fake::set_current_context(nullptr);
}

// ---- Mipmapped arrays -------------------------------------------------------------------

TEST_F(ArrayTest, MipmappedArraysAndTheirLevels) {
    const cucore_opaque_array_options_t o = array_options(CUCORE_ARRAY_FORMAT_FLOAT32, 16, 8, 0, CUCORE_ARRAY_KIND_PLAIN, 0, 4);
    cucore_mipmapped_array_t *m = create_mipmapped(o, 5);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(fake::last_mipmap_levels(), 5u);
    EXPECT_EQ(fake::mipmapped_levels(raw(m)), 5u);
    const CUDA_ARRAY3D_DESCRIPTOR d = fake::last_array_descriptor();
    EXPECT_EQ(d.Width, 16u);
    EXPECT_EQ(d.Height, 8u);
    EXPECT_EQ(static_cast<int>(d.Format), CU_AD_FORMAT_FLOAT);
    EXPECT_EQ(d.NumChannels, 4u);
    const cucore_opaque_array_info_t mi = info(m);
    EXPECT_EQ(mi.num_levels, 5u);
    EXPECT_EQ(mi.width, 16u);
    EXPECT_EQ(mi.height, 8u);
    EXPECT_EQ(mi.is_owned, 1u);
    EXPECT_EQ(mi.element_size, 16u);
    for (uint32_t level = 0; level < 5; ++level) {
        SCOPED_TRACE("level " + std::to_string(level));
        cucore_opaque_array_t *a = nullptr;
        ASSERT_EQ(cucore_mipmapped_array_level(m, level, &a), CUCORE_SUCCESS) << message();
        const cucore_opaque_array_info_t i = info(a);
        EXPECT_EQ(i.width, std::max<uint64_t>(1, 16u >> level));
        EXPECT_EQ(i.height, std::max<uint64_t>(1, 8u >> level));
        EXPECT_EQ(i.is_owned, 0u);
        EXPECT_EQ(i.num_levels, 1u);
        EXPECT_EQ(i.size_bytes, i.width * i.height * 16);
        // The driver's own level.
        CUarray expected = nullptr;
        ASSERT_EQ(fake::table().cuMipmappedArrayGetLevel(&expected, raw(m), level), CUDA_SUCCESS);
        EXPECT_EQ(raw(a), expected);
        // A level is an array like any other: copies reach the level's bytes.
        const Bytes data = pattern(i.size_bytes, 80 + level);
        ASSERT_EQ(cucore_opaque_array_copy_from_host(a, data.data(), data.size(), s_), CUCORE_SUCCESS) << message();
        ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
        EXPECT_EQ(stored(a), data);
        EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    }
    cucore_opaque_array_t *past = reinterpret_cast<cucore_opaque_array_t *>(0x1);
    EXPECT_EQ(cucore_mipmapped_array_level(m, 5, &past), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(past, nullptr);
    EXPECT_TRUE(contains(message(), "5")) << "names the count: " << message();
    EXPECT_EQ(cucore_mipmapped_array_release(m), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().mipmapped_arrays, 0);
}

TEST_F(ArrayTest, MipmappedLevelCountsAreCheckedAgainstTheExtent) {
    struct Row {
        const char *name;
        cucore_opaque_array_options_t options;
        uint32_t max;
    };
    const Row rows[] = {
        {"2D 16 x 8", array_options(CUCORE_ARRAY_FORMAT_UINT8, 16, 8), 5},
        {"1D 100", array_options(CUCORE_ARRAY_FORMAT_UINT8, 100), 7},
        {"3D 4 x 4 x 32 (depth counts)", array_options(CUCORE_ARRAY_FORMAT_UINT8, 4, 4, 32), 6},
        {"layered 8 x 4, 64 layers (layers do not)", array_options(CUCORE_ARRAY_FORMAT_UINT8, 8, 4, 0, CUCORE_ARRAY_KIND_LAYERED, 64),
         4},
        {"cubemap 8", array_options(CUCORE_ARRAY_FORMAT_UINT8, 8, 8, 0, CUCORE_ARRAY_KIND_CUBEMAP), 4},
        {"1 x 1", array_options(CUCORE_ARRAY_FORMAT_UINT8, 1, 1), 1},
    };
    for (const Row &row : rows) {
        SCOPED_TRACE(row.name);
        fake::reset_calls();
        cucore_mipmapped_array_t *m = reinterpret_cast<cucore_mipmapped_array_t *>(0x1);
        EXPECT_EQ(cucore_mipmapped_array_create(d_, &row.options, row.max + 1, &m), CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(m, nullptr);
        EXPECT_TRUE(contains(message(), std::to_string(row.max))) << "names the maximum: " << message();
        EXPECT_EQ(cucore_mipmapped_array_create(d_, &row.options, 0, &m), CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_FALSE(driver_called("cuMipmappedArrayCreate"));
        m = create_mipmapped(row.options, row.max);
        ASSERT_NE(m, nullptr);
        EXPECT_EQ(fake::mipmapped_levels(raw(m)), row.max);
        EXPECT_EQ(info(m).num_levels, row.max);
        cucore_opaque_array_t *last = nullptr;
        ASSERT_EQ(cucore_mipmapped_array_level(m, row.max - 1, &last), CUCORE_SUCCESS) << message();
        const cucore_opaque_array_info_t i = info(last);
        EXPECT_EQ(i.width, 1u) << "the last level is one element wide";
        EXPECT_EQ(i.kind, row.options.kind);
        EXPECT_EQ(i.layers, row.options.layers) << "layers are not halved";
        EXPECT_EQ(cucore_opaque_array_release(last), CUCORE_SUCCESS);
        EXPECT_EQ(cucore_mipmapped_array_release(m), CUCORE_SUCCESS);
    }
}

TEST_F(ArrayTest, LevelsKeepTheirMipmappedArray) {
    cucore_mipmapped_array_t *m = create_mipmapped(array_options(CUCORE_ARRAY_FORMAT_UINT8, 8, 8, 0, CUCORE_ARRAY_KIND_PLAIN, 0, 4), 3);
    cucore_opaque_array_t *level = nullptr;
    ASSERT_EQ(cucore_mipmapped_array_level(m, 1, &level), CUCORE_SUCCESS) << message();
    // Closing the mipmapped array lets go of its share; the level keeps it.
    ASSERT_EQ(cucore_mipmapped_array_close(m), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_mipmapped_array_close(m), CUCORE_SUCCESS) << "idempotent";
    EXPECT_EQ(fake::counters().mipmapped_arrays, 1) << "the level still uses it";
    cucore_opaque_array_info_t i = CUCORE_OPAQUE_ARRAY_INFO_INIT;
    EXPECT_EQ(cucore_mipmapped_array_info(m, &i), CUCORE_ERROR_INVALID_STATE);
    void *handle = reinterpret_cast<void *>(0x1);
    EXPECT_EQ(cucore_mipmapped_array_handle(m, &handle), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(handle, nullptr);
    cucore_opaque_array_t *another = reinterpret_cast<cucore_opaque_array_t *>(0x1);
    EXPECT_EQ(cucore_mipmapped_array_level(m, 0, &another), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(another, nullptr);
    const Bytes data = pattern(4 * 4 * 4, 90);
    ASSERT_EQ(cucore_opaque_array_copy_from_host(level, data.data(), data.size(), s_), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
    EXPECT_EQ(stored(level), data);
    EXPECT_EQ(cucore_mipmapped_array_release(m), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().mipmapped_arrays, 1);
    EXPECT_EQ(cucore_opaque_array_release(level), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().mipmapped_arrays, 0) << "destroyed with its last level";

    // Released (not closed) first: the same.
    m = create_mipmapped(array_options(CUCORE_ARRAY_FORMAT_UINT8, 8, 8), 2);
    ASSERT_EQ(cucore_mipmapped_array_level(m, 0, &level), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_mipmapped_array_release(m), CUCORE_SUCCESS);
    EXPECT_EQ(info(level).width, 8u);
    // Closing a level lets go of the level, not of the mipmapped array's storage under it.
    EXPECT_EQ(cucore_opaque_array_close(level), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_opaque_array_info(level, &i), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(cucore_opaque_array_release(level), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().mipmapped_arrays, 0);
}

// ---- Foreign arrays ----------------------------------------------------------------------

struct ReleaseCount {
    int calls = 0;
    static void on_release(void *self) { ++static_cast<ReleaseCount *>(self)->calls; }
};

class ForeignArrayTest : public ArrayFixture {
  protected:
    void SetUp() override {
        ArrayFixture::SetUp();
        ASSERT_EQ(fake::table().cuDevicePrimaryCtxRetain(&context_, 0), CUDA_SUCCESS);
    }
    void TearDown() override {
        EXPECT_EQ(fake::table().cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
        ArrayFixture::TearDown();
    }
    // Runs `f` with the primary context current, as a user of the raw driver would.
    template <class F>
    void in_context(F f) {
        fake::set_current_context(context_);
        f();
        fake::set_current_context(nullptr);
    }
    CUcontext context_ = nullptr;
};

TEST_F(ForeignArrayTest, AWrappedArrayIsDescribedByTheDriverAndNotDestroyed) {
    CUDA_ARRAY3D_DESCRIPTOR d{};
    d.Width = 8;
    d.Height = 4;
    d.Depth = 3;
    d.Format = CU_AD_FORMAT_UNSIGNED_INT16;
    d.NumChannels = 2;
    d.Flags = CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST;
    CUarray foreign = nullptr;
    in_context([&] { ASSERT_EQ(fake::table().cuArray3DCreate(&foreign, &d), CUDA_SUCCESS); });
    ReleaseCount released;
    cucore_opaque_array_t *a = nullptr;
    ASSERT_EQ(cucore_opaque_array_from_handle(d_, foreign, &ReleaseCount::on_release, &released, &a), CUCORE_SUCCESS)
        << message();
    EXPECT_EQ(raw(a), foreign);
    const cucore_opaque_array_info_t i = info(a);
    EXPECT_EQ(i.format, CUCORE_ARRAY_FORMAT_UINT16);
    EXPECT_EQ(i.num_channels, 2u);
    EXPECT_EQ(i.kind, CUCORE_ARRAY_KIND_LAYERED);
    EXPECT_EQ(i.width, 8u);
    EXPECT_EQ(i.height, 4u);
    EXPECT_EQ(i.depth, 0u);
    EXPECT_EQ(i.layers, 3u);
    EXPECT_EQ(i.flags, uint32_t{CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE});
    EXPECT_EQ(i.is_owned, 0u);
    EXPECT_EQ(i.size_bytes, 8u * 4 * 4 * 3);
    const Bytes data = pattern(i.size_bytes, 100);
    ASSERT_EQ(cucore_opaque_array_copy_from_host(a, data.data(), data.size(), s_), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
    EXPECT_EQ(*fake::array_bytes(foreign), data);
    // A texture over it holds it: the callback waits for the texture.
    cucore_texture_object_t *t = texture(of(a));
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    EXPECT_EQ(released.calls, 0);
    EXPECT_EQ(cucore_texture_object_release(t), CUCORE_SUCCESS);
    EXPECT_EQ(released.calls, 1) << "once, when the last holder is gone";
    EXPECT_EQ(fake::counters().arrays, 1) << "not the library's to destroy";
    in_context([&] { EXPECT_EQ(fake::table().cuArrayDestroy(foreign), CUDA_SUCCESS); });

    // Without a callback; closing a wrapped array does not destroy it either.
    in_context([&] { ASSERT_EQ(fake::table().cuArray3DCreate(&foreign, &d), CUDA_SUCCESS); });
    ASSERT_EQ(cucore_opaque_array_from_handle(d_, foreign, nullptr, nullptr, &a), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_opaque_array_close(a), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().arrays, 1);
    in_context([&] { EXPECT_EQ(fake::table().cuArrayDestroy(foreign), CUDA_SUCCESS); });
}

TEST_F(ForeignArrayTest, AWrappedMipmappedArrayCountsItsLevels) {
    CUDA_ARRAY3D_DESCRIPTOR d{};
    d.Width = 32;
    d.Height = 32;
    d.Format = CU_AD_FORMAT_UNORM_INT8X4;
    d.NumChannels = 4;
    CUmipmappedArray foreign = nullptr;
    in_context([&] { ASSERT_EQ(fake::table().cuMipmappedArrayCreate(&foreign, &d, 3), CUDA_SUCCESS); });
    ReleaseCount released;
    cucore_mipmapped_array_t *m = nullptr;
    ASSERT_EQ(cucore_mipmapped_array_from_handle(d_, foreign, &ReleaseCount::on_release, &released, &m),
              CUCORE_SUCCESS)
        << message();
    EXPECT_EQ(raw(m), foreign);
    const cucore_opaque_array_info_t i = info(m);
    EXPECT_EQ(i.num_levels, 3u) << "found by asking for levels until the driver refuses one";
    EXPECT_EQ(i.format, CUCORE_ARRAY_FORMAT_UNORM_INT8X4);
    EXPECT_EQ(i.width, 32u);
    EXPECT_EQ(i.is_owned, 0u);
    cucore_opaque_array_t *level = nullptr;
    ASSERT_EQ(cucore_mipmapped_array_level(m, 2, &level), CUCORE_SUCCESS) << message();
    EXPECT_EQ(info(level).width, 8u);
    EXPECT_EQ(cucore_mipmapped_array_release(m), CUCORE_SUCCESS);
    EXPECT_EQ(released.calls, 0) << "the level holds it";
    EXPECT_EQ(cucore_opaque_array_release(level), CUCORE_SUCCESS);
    EXPECT_EQ(released.calls, 1);
    EXPECT_EQ(fake::counters().mipmapped_arrays, 1) << "not the library's to destroy";
    in_context([&] { EXPECT_EQ(fake::table().cuMipmappedArrayDestroy(foreign), CUDA_SUCCESS); });
}

TEST_F(ForeignArrayTest, WhatIsNoArrayIsRefusedAndTheCallbackIsNotCalled) {
    ReleaseCount released;
    int not_an_array = 0;
    cucore_opaque_array_t *a = reinterpret_cast<cucore_opaque_array_t *>(0x1);
    EXPECT_EQ(cucore_opaque_array_from_handle(d_, &not_an_array, &ReleaseCount::on_release, &released, &a),
              CUCORE_ERROR_CUDA);
    EXPECT_EQ(a, nullptr);
    EXPECT_TRUE(contains(message(), "cuArray3DGetDescriptor")) << message();
    cucore_mipmapped_array_t *m = reinterpret_cast<cucore_mipmapped_array_t *>(0x1);
    EXPECT_EQ(cucore_mipmapped_array_from_handle(d_, &not_an_array, &ReleaseCount::on_release, &released, &m),
              CUCORE_ERROR_CUDA);
    EXPECT_EQ(m, nullptr);
    fake::reset_calls();
    EXPECT_EQ(cucore_opaque_array_from_handle(d_, nullptr, nullptr, nullptr, &a), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "'cu_array'")) << message();
    EXPECT_EQ(cucore_mipmapped_array_from_handle(d_, nullptr, nullptr, nullptr, &m), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "'cu_mipmapped_array'")) << message();
    EXPECT_EQ(fake::calls(), 0);
    EXPECT_EQ(released.calls, 0) << "never when the call fails";
}

}  // namespace
