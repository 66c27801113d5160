// Texture and surface objects through the fake driver: every resource kind
// and every sampling option reaches cuTexObjectCreate field by field (the fake
// records the CUDA_RESOURCE_DESC and CUDA_TEXTURE_DESC); what the library
// checks is refused before the driver; textures and surfaces hold their
// array, mipmapped array or buffer memory in every release order; close; the
// caller's context.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "array_support.hpp"

namespace {

class TextureTest : public ArrayFixture {
  protected:
    cucore_opaque_array_t *array_2d(cucore_array_format_t format = CUCORE_ARRAY_FORMAT_FLOAT32, uint32_t flags = 0) {
        return create(array_options(format, 16, 16, 0, CUCORE_ARRAY_KIND_PLAIN, 0, 0, flags));
    }
    // The default sampling, as the driver must see it: ELEMENT_TYPE reads integer elements as integers
    // (CU_TRSF_READ_AS_INTEGER); other elements are read as what they are, with no flag.
    static CUDA_TEXTURE_DESC default_texture(bool integer_elements) {
        CUDA_TEXTURE_DESC t{};
        for (CUaddress_mode &mode : t.addressMode) mode = CU_TR_ADDRESS_MODE_CLAMP;
        t.filterMode = CU_TR_FILTER_MODE_POINT;
        t.flags = integer_elements ? CU_TRSF_READ_AS_INTEGER : 0;
        t.mipmapFilterMode = CU_TR_FILTER_MODE_POINT;
        return t;
    }
    static void expect_same(const CUDA_TEXTURE_DESC &got, const CUDA_TEXTURE_DESC &expected) {
        for (int i = 0; i < 3; ++i) EXPECT_EQ(got.addressMode[i], expected.addressMode[i]) << "address mode " << i;
        EXPECT_EQ(got.filterMode, expected.filterMode);
        EXPECT_EQ(got.flags, expected.flags);
        EXPECT_EQ(got.maxAnisotropy, expected.maxAnisotropy);
        EXPECT_EQ(got.mipmapFilterMode, expected.mipmapFilterMode);
        EXPECT_EQ(got.mipmapLevelBias, expected.mipmapLevelBias);
        EXPECT_EQ(got.minMipmapLevelClamp, expected.minMipmapLevelClamp);
        EXPECT_EQ(got.maxMipmapLevelClamp, expected.maxMipmapLevelClamp);
        for (int i = 0; i < 4; ++i) EXPECT_EQ(got.borderColor[i], expected.borderColor[i]) << "border color " << i;
    }
    // Expects the create to be refused with INVALID_ARGUMENT before the driver.
    void expect_refused(const cucore_resource_descriptor_t &resource, const cucore_texture_object_options_t *options,
                        const char *named = "", cucore_device_t *on = nullptr) {
        fake::reset_calls();
        cucore_texture_object_t *t = reinterpret_cast<cucore_texture_object_t *>(0x1);
        EXPECT_EQ(cucore_texture_object_create(on, &resource, options, &t), CUCORE_ERROR_INVALID_ARGUMENT) << message();
        EXPECT_EQ(t, nullptr) << "out-pointer cleared";
        EXPECT_EQ(message().rfind("cucore_texture_object_create:", 0), 0u) << message();
        EXPECT_TRUE(contains(message(), named)) << message();
        EXPECT_FALSE(driver_called("cuTexObjectCreate")) << "refused before the driver";
    }
};

// ---- Resources ------------------------------------------------------------------------------

TEST_F(TextureTest, AnArrayResourceWithTheDefaultSampling) {
    cucore_opaque_array_t *a = array_2d();
    cucore_texture_object_t *t = texture(of(a));
    ASSERT_NE(t, nullptr);
    const uint64_t handle = handle_of(t);
    EXPECT_NE(handle, 0u);
    const fake::TextureRecord r = record_of(t);
    EXPECT_EQ(r.resource.resType, CU_RESOURCE_TYPE_ARRAY);
    EXPECT_EQ(r.resource.res.array.hArray, raw(a));
    EXPECT_EQ(r.resource.flags, 0u);
    expect_same(r.texture, default_texture(false));
    EXPECT_FALSE(r.has_view);
    EXPECT_NE(r.context, nullptr) << "made in the array's context";
    // Explicit defaults are the same as NULL options.
    const cucore_texture_object_options_t defaults = CUCORE_TEXTURE_OBJECT_OPTIONS_INIT;
    cucore_texture_object_t *same = texture(of(a), &defaults);
    expect_same(record_of(same).texture, default_texture(false));
    // Integer elements are read as integers by default.
    cucore_opaque_array_t *ints = array_2d(CUCORE_ARRAY_FORMAT_INT16);
    cucore_texture_object_t *of_ints = texture(of(ints));
    expect_same(record_of(of_ints).texture, default_texture(true));
    EXPECT_EQ(cucore_texture_object_release(of_ints), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_opaque_array_release(ints), CUCORE_SUCCESS);
    EXPECT_NE(handle_of(same), handle) << "a texture object of its own";
    EXPECT_EQ(fake::counters().texture_objects, 2);
    EXPECT_EQ(cucore_texture_object_release(same), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_texture_object_release(t), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().texture_objects, 0);
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
}

TEST_F(TextureTest, AMipmappedArrayResource) {
    cucore_mipmapped_array_t *m = create_mipmapped(array_options(CUCORE_ARRAY_FORMAT_FLOAT16, 32, 32, 0,
                                                                 CUCORE_ARRAY_KIND_PLAIN, 0, 4), 6);
    cucore_texture_object_options_t o = CUCORE_TEXTURE_OBJECT_OPTIONS_INIT;
    o.mipmap_filter_mode = CUCORE_FILTER_MODE_LINEAR;
    o.filter_mode = CUCORE_FILTER_MODE_LINEAR;
    o.mipmap_level_bias = 0.5f;
    o.min_mipmap_level_clamp = 1.0f;
    o.max_mipmap_level_clamp = 3.5f;
    cucore_texture_object_t *t = texture(of(m), &o);
    ASSERT_NE(t, nullptr);
    const fake::TextureRecord r = record_of(t);
    EXPECT_EQ(r.resource.resType, CU_RESOURCE_TYPE_MIPMAPPED_ARRAY);
    EXPECT_EQ(r.resource.res.mipmap.hMipmappedArray, raw(m));
    CUDA_TEXTURE_DESC expected = default_texture(false);  // half floats
    expected.filterMode = CU_TR_FILTER_MODE_LINEAR;
    expected.mipmapFilterMode = CU_TR_FILTER_MODE_LINEAR;
    expected.mipmapLevelBias = 0.5f;
    expected.minMipmapLevelClamp = 1.0f;
    expected.maxMipmapLevelClamp = 3.5f;
    expect_same(r.texture, expected);
    EXPECT_EQ(cucore_texture_object_release(t), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_mipmapped_array_release(m), CUCORE_SUCCESS);
}

TEST_F(TextureTest, ALevelOfAMipmappedArrayIsAnArrayResource) {
    cucore_mipmapped_array_t *m = create_mipmapped(array_options(CUCORE_ARRAY_FORMAT_UINT8, 16, 16, 0,
                                                                 CUCORE_ARRAY_KIND_PLAIN, 0, 4), 3);
    cucore_opaque_array_t *level = nullptr;
    ASSERT_EQ(cucore_mipmapped_array_level(m, 2, &level), CUCORE_SUCCESS) << message();
    cucore_texture_object_t *t = texture(of(level));
    EXPECT_EQ(record_of(t).resource.res.array.hArray, raw(level));
    EXPECT_EQ(cucore_opaque_array_release(level), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_mipmapped_array_release(m), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().mipmapped_arrays, 1) << "the texture holds its level, which holds the mipmapped array";
    EXPECT_EQ(cucore_texture_object_release(t), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().mipmapped_arrays, 0);
}

TEST_F(TextureTest, LinearMemoryResources) {
    cucore_buffer_t *b = allocate(4096);
    struct Row {
        cucore_array_format_t format;
        uint32_t channels;
        uint64_t size;
        int driver_format;
        unsigned driver_channels;
        size_t driver_size;
    };
    const Row rows[] = {
        {CUCORE_ARRAY_FORMAT_FLOAT32, 4, 1024, CU_AD_FORMAT_FLOAT, 4, 1024},
        {CUCORE_ARRAY_FORMAT_FLOAT32, 0, 0, CU_AD_FORMAT_FLOAT, 1, 4096},  // 0: one channel, the whole buffer
        {CUCORE_ARRAY_FORMAT_INT16, 2, 12, CU_AD_FORMAT_SIGNED_INT16, 2, 12},
        {CUCORE_ARRAY_FORMAT_UNORM_INT8X4, 0, 64, CU_AD_FORMAT_UNORM_INT8X4, 4, 64},  // its own count
    };
    for (const Row &row : rows) {
        SCOPED_TRACE("format " + std::to_string(row.format));
        cucore_texture_object_t *t = texture(linear(b, row.format, row.channels, row.size));
        ASSERT_NE(t, nullptr);
        const fake::TextureRecord r = record_of(t);
        EXPECT_EQ(r.resource.resType, CU_RESOURCE_TYPE_LINEAR);
        EXPECT_EQ(r.resource.res.linear.devPtr, address_of(b));
        EXPECT_EQ(static_cast<int>(r.resource.res.linear.format), row.driver_format);
        EXPECT_EQ(r.resource.res.linear.numChannels, row.driver_channels);
        EXPECT_EQ(r.resource.res.linear.sizeInBytes, row.driver_size);
        EXPECT_EQ(cucore_texture_object_release(t), CUCORE_SUCCESS);
    }
    // A view at an aligned offset reads from its own address.
    cucore_buffer_t *view = nullptr;
    ASSERT_EQ(cucore_buffer_view(b, fake::kTextureAlignment, 1024, &view), CUCORE_SUCCESS);
    cucore_texture_object_t *t = texture(linear(view, CUCORE_ARRAY_FORMAT_UINT32));
    EXPECT_EQ(record_of(t).resource.res.linear.devPtr, address_of(b) + fake::kTextureAlignment);
    EXPECT_EQ(record_of(t).resource.res.linear.sizeInBytes, 1024u);
    EXPECT_EQ(cucore_texture_object_release(t), CUCORE_SUCCESS);
    cucore_buffer_release(view);
    cucore_buffer_release(b);
}

TEST_F(TextureTest, PitchedMemoryResources) {
    cucore_buffer_t *b = allocate(4096);
    cucore_texture_object_t *t = texture(pitched(b, CUCORE_ARRAY_FORMAT_UINT8, 4, 16, 8, 64));
    ASSERT_NE(t, nullptr);
    const fake::TextureRecord r = record_of(t);
    EXPECT_EQ(r.resource.resType, CU_RESOURCE_TYPE_PITCH2D);
    EXPECT_EQ(r.resource.res.pitch2D.devPtr, address_of(b));
    EXPECT_EQ(static_cast<int>(r.resource.res.pitch2D.format), CU_AD_FORMAT_UNSIGNED_INT8);
    EXPECT_EQ(r.resource.res.pitch2D.numChannels, 4u);
    EXPECT_EQ(r.resource.res.pitch2D.width, 16u);
    EXPECT_EQ(r.resource.res.pitch2D.height, 8u);
    EXPECT_EQ(r.resource.res.pitch2D.pitchInBytes, 64u);
    EXPECT_EQ(cucore_texture_object_release(t), CUCORE_SUCCESS);
    // The last row need not be padded: 15 rows of 96 bytes at a pitch of 256 end at 14 * 256 + 96.
    cucore_buffer_t *exact = allocate(14 * 256 + 96);
    t = texture(pitched(exact, CUCORE_ARRAY_FORMAT_FLOAT32, 2, 12, 15, 256));
    EXPECT_NE(t, nullptr);
    EXPECT_EQ(cucore_texture_object_release(t), CUCORE_SUCCESS);
    cucore_buffer_release(exact);
    cucore_buffer_release(b);
}

// ---- Sampling options -----------------------------------------------------------------------

TEST_F(TextureTest, EverySamplingOptionReachesTheDriver) {
    cucore_opaque_array_t *floats = array_2d(CUCORE_ARRAY_FORMAT_FLOAT32);
    cucore_opaque_array_t *bytes = array_2d(CUCORE_ARRAY_FORMAT_UINT8);
    cucore_opaque_array_t *cube = create(array_options(CUCORE_ARRAY_FORMAT_FLOAT32, 8, 8, 0,
                                                       CUCORE_ARRAY_KIND_LAYERED_CUBEMAP, 2, 4));
    cucore_opaque_array_t *srgb = create(array_options(CUCORE_ARRAY_FORMAT_BC7_UNORM_SRGB, 16, 16));
    struct Row {
        const char *name;
        cucore_opaque_array_t *array;
        std::function<void(cucore_texture_object_options_t &)> set;
        std::function<void(CUDA_TEXTURE_DESC &)> expect;
    };
    const std::vector<Row> rows = {
        {"address modes", floats,
         [](auto &o) {
             o.address_mode[0] = CUCORE_ADDRESS_MODE_WRAP;
             o.address_mode[1] = CUCORE_ADDRESS_MODE_MIRROR;
             o.address_mode[2] = CUCORE_ADDRESS_MODE_BORDER;
             o.normalized_coords = 1;  // wrap and mirror need them
         },
         [](auto &t) {
             t.addressMode[0] = CU_TR_ADDRESS_MODE_WRAP;
             t.addressMode[1] = CU_TR_ADDRESS_MODE_MIRROR;
             t.addressMode[2] = CU_TR_ADDRESS_MODE_BORDER;
             t.flags |= CU_TRSF_NORMALIZED_COORDINATES;
         }},
        {"address modes, other dimensions", floats,
         [](auto &o) {
             o.address_mode[0] = CUCORE_ADDRESS_MODE_BORDER;
             o.address_mode[1] = CUCORE_ADDRESS_MODE_CLAMP;
             o.address_mode[2] = CUCORE_ADDRESS_MODE_WRAP;
             o.normalized_coords = 1;
         },
         [](auto &t) {
             t.addressMode[0] = CU_TR_ADDRESS_MODE_BORDER;
             t.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
             t.addressMode[2] = CU_TR_ADDRESS_MODE_WRAP;
             t.flags |= CU_TRSF_NORMALIZED_COORDINATES;
         }},
        {"linear filtering of floats", floats, [](auto &o) { o.filter_mode = CUCORE_FILTER_MODE_LINEAR; },
         [](auto &t) { t.filterMode = CU_TR_FILTER_MODE_LINEAR; }},
        {"normalized floats from bytes, filtered", bytes,
         [](auto &o) {
             o.read_mode = CUCORE_READ_MODE_NORMALIZED_FLOAT;
             o.filter_mode = CUCORE_FILTER_MODE_LINEAR;
         },
         [](auto &t) {
             t.flags &= ~unsigned{CU_TRSF_READ_AS_INTEGER};
             t.filterMode = CU_TR_FILTER_MODE_LINEAR;
         }},
        {"normalized coordinates", floats, [](auto &o) { o.normalized_coords = 1; },
         [](auto &t) { t.flags |= CU_TRSF_NORMALIZED_COORDINATES; }},
        {"sRGB", srgb,
         [](auto &o) {
             o.srgb = 1;
             o.read_mode = CUCORE_READ_MODE_NORMALIZED_FLOAT;
         },
         [](auto &t) { t.flags = CU_TRSF_SRGB; }},
        {"trilinear optimization off", floats, [](auto &o) { o.disable_trilinear_optimization = 1; },
         [](auto &t) { t.flags |= CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION; }},
        {"seamless cubemap", cube, [](auto &o) { o.seamless_cubemap = 1; },
         [](auto &t) { t.flags |= CU_TRSF_SEAMLESS_CUBEMAP; }},
        {"anisotropy", floats, [](auto &o) { o.max_anisotropy = 16; }, [](auto &t) { t.maxAnisotropy = 16; }},
        {"mipmap fields (of an array: passed on)", floats,
         [](auto &o) {
             o.mipmap_filter_mode = CUCORE_FILTER_MODE_LINEAR;
             o.mipmap_level_bias = -1.25f;
             o.min_mipmap_level_clamp = 0.5f;
             o.max_mipmap_level_clamp = 8.0f;
         },
         [](auto &t) {
             t.mipmapFilterMode = CU_TR_FILTER_MODE_LINEAR;
             t.mipmapLevelBias = -1.25f;
             t.minMipmapLevelClamp = 0.5f;
             t.maxMipmapLevelClamp = 8.0f;
         }},
        {"border color", floats,
         [](auto &o) {
             o.address_mode[0] = o.address_mode[1] = CUCORE_ADDRESS_MODE_BORDER;
             o.border_color[0] = 0.25f;
             o.border_color[1] = 0.5f;
             o.border_color[2] = 0.75f;
             o.border_color[3] = 1.0f;
         },
         [](auto &t) {
             t.addressMode[0] = t.addressMode[1] = CU_TR_ADDRESS_MODE_BORDER;
             t.borderColor[0] = 0.25f;
             t.borderColor[1] = 0.5f;
             t.borderColor[2] = 0.75f;
             t.borderColor[3] = 1.0f;
         }},
        {"everything at once", cube,
         [](auto &o) {
             o.address_mode[0] = CUCORE_ADDRESS_MODE_MIRROR;
             o.address_mode[1] = CUCORE_ADDRESS_MODE_WRAP;
             o.address_mode[2] = CUCORE_ADDRESS_MODE_BORDER;
             o.filter_mode = CUCORE_FILTER_MODE_LINEAR;
             o.read_mode = CUCORE_READ_MODE_NORMALIZED_FLOAT;
             o.normalized_coords = 1;
             o.srgb = 1;
             o.disable_trilinear_optimization = 1;
             o.seamless_cubemap = 1;
             o.max_anisotropy = 4;
             o.mipmap_filter_mode = CUCORE_FILTER_MODE_LINEAR;
             o.mipmap_level_bias = 2.0f;
             o.max_mipmap_level_clamp = 1.0f;
             o.border_color[3] = 0.125f;
         },
         [](auto &t) {
             t.addressMode[0] = CU_TR_ADDRESS_MODE_MIRROR;
             t.addressMode[1] = CU_TR_ADDRESS_MODE_WRAP;
             t.addressMode[2] = CU_TR_ADDRESS_MODE_BORDER;
             t.filterMode = CU_TR_FILTER_MODE_LINEAR;
             t.flags = CU_TRSF_NORMALIZED_COORDINATES | CU_TRSF_SRGB | CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION |
                       CU_TRSF_SEAMLESS_CUBEMAP;
             t.maxAnisotropy = 4;
             t.mipmapFilterMode = CU_TR_FILTER_MODE_LINEAR;
             t.mipmapLevelBias = 2.0f;
             t.maxMipmapLevelClamp = 1.0f;
             t.borderColor[3] = 0.125f;
         }},
    };
    for (const Row &row : rows) {
        SCOPED_TRACE(row.name);
        cucore_texture_object_options_t o = CUCORE_TEXTURE_OBJECT_OPTIONS_INIT;
        row.set(o);
        cucore_texture_object_t *t = texture(of(row.array), &o);
        ASSERT_NE(t, nullptr);
        cucore_opaque_array_info_t i = info(row.array);
        const bool integers = i.format == CUCORE_ARRAY_FORMAT_UINT8;  // the only integer array of the rows
        CUDA_TEXTURE_DESC expected = default_texture(integers);
        row.expect(expected);
        expect_same(record_of(t).texture, expected);
        EXPECT_EQ(cucore_texture_object_release(t), CUCORE_SUCCESS);
    }
    for (cucore_opaque_array_t *a : {floats, bytes, cube, srgb}) EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
}

// ---- What the library checks first ----------------------------------------------------------

TEST_F(TextureTest, SamplingThatCannotWorkIsRefusedBeforeTheDriver) {
    cucore_opaque_array_t *ints = array_2d(CUCORE_ARRAY_FORMAT_INT32);
    cucore_opaque_array_t *bytes = array_2d(CUCORE_ARRAY_FORMAT_UINT8);
    cucore_opaque_array_t *floats = array_2d(CUCORE_ARRAY_FORMAT_FLOAT32);
    cucore_opaque_array_t *srgb = create(array_options(CUCORE_ARRAY_FORMAT_BC1_UNORM_SRGB, 16, 16));
    cucore_opaque_array_t *layered = create(array_options(CUCORE_ARRAY_FORMAT_FLOAT32, 8, 8, 0, CUCORE_ARRAY_KIND_LAYERED, 6));
    static constexpr float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    struct Row {
        const char *name;
        cucore_opaque_array_t *array;
        std::function<void(cucore_texture_object_options_t &)> set;
        const char *named;
    };
    const std::vector<Row> rows = {
        {"linear filtering of integers read as integers", ints, [](auto &o) { o.filter_mode = CUCORE_FILTER_MODE_LINEAR; }, ""},
        {"linear filtering of bytes read as integers", bytes, [](auto &o) { o.filter_mode = CUCORE_FILTER_MODE_LINEAR; }, ""},
        {"an sRGB format without srgb", srgb, [](auto &o) { o.read_mode = CUCORE_READ_MODE_NORMALIZED_FLOAT; }, "srgb"},
        {"seamless over a 2D array", floats, [](auto &o) { o.seamless_cubemap = 1; }, "seamless_cubemap"},
        {"seamless over layers (6 of them, no cubemap)", layered, [](auto &o) { o.seamless_cubemap = 1; }, "seamless_cubemap"},
        {"anisotropy 17", floats, [](auto &o) { o.max_anisotropy = 17; }, "max_anisotropy"},
        {"a NaN bias", floats, [](auto &o) { o.mipmap_level_bias = nan; }, "mipmap_level_bias"},
        {"an infinite clamp", floats, [](auto &o) { o.max_mipmap_level_clamp = inf; }, "max_mipmap_level_clamp"},
        {"a NaN minimum clamp", floats, [](auto &o) { o.min_mipmap_level_clamp = nan; }, "min_mipmap_level_clamp"},
        {"address mode 4", floats, [](auto &o) { o.address_mode[2] = static_cast<cucore_address_mode_t>(4); }, "address_mode"},
        {"filter mode 2", floats, [](auto &o) { o.filter_mode = static_cast<cucore_filter_mode_t>(2); }, "filter_mode"},
        {"mipmap filter mode 2", floats, [](auto &o) { o.mipmap_filter_mode = static_cast<cucore_filter_mode_t>(2); },
         "mipmap_filter_mode"},
        {"read mode 2", floats, [](auto &o) { o.read_mode = static_cast<cucore_read_mode_t>(2); }, "read_mode"},
        {"normalized_coords 2", floats, [](auto &o) { o.normalized_coords = 2; }, "normalized_coords"},
        {"struct_size 0", floats, [](auto &o) { o.struct_size = 0; }, "struct_size"},
    };
    for (const Row &row : rows) {
        SCOPED_TRACE(row.name);
        cucore_texture_object_options_t o = CUCORE_TEXTURE_OBJECT_OPTIONS_INIT;
        row.set(o);
        expect_refused(of(row.array), &o, row.named);
    }
    // Linear filtering of bytes read as normalized floats is fine, and so is sRGB with srgb set.
    cucore_texture_object_options_t o = CUCORE_TEXTURE_OBJECT_OPTIONS_INIT;
    o.filter_mode = CUCORE_FILTER_MODE_LINEAR;
    o.read_mode = CUCORE_READ_MODE_NORMALIZED_FLOAT;
    cucore_texture_object_t *t = texture(of(bytes), &o);
    EXPECT_EQ(cucore_texture_object_release(t), CUCORE_SUCCESS);
    o = CUCORE_TEXTURE_OBJECT_OPTIONS_INIT;
    o.srgb = 1;
    t = texture(of(srgb), &o);
    EXPECT_EQ(cucore_texture_object_release(t), CUCORE_SUCCESS);
    for (cucore_opaque_array_t *a : {ints, bytes, floats, srgb, layered}) EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
}

TEST_F(TextureTest, ResourceDescriptorsAreCheckedBeforeTheDriver) {
    cucore_buffer_t *b = allocate(4096);
    cucore_opaque_array_t *a = array_2d();
    cucore_mipmapped_array_t *m = create_mipmapped(array_options(CUCORE_ARRAY_FORMAT_FLOAT32, 8, 8), 2);
    struct Row {
        const char *name;
        cucore_resource_descriptor_t resource;
        const char *named;
    };
    std::vector<Row> rows = {
        {"linear: size not a multiple of the element", linear(b, CUCORE_ARRAY_FORMAT_FLOAT32, 1, 1022), "1022"},
        {"linear: size past the buffer", linear(b, CUCORE_ARRAY_FORMAT_UINT8, 1, 4097), "4097"},
        {"linear: no format", linear(b, CUCORE_ARRAY_FORMAT_UNSET), "format"},
        {"linear: a BC format", linear(b, CUCORE_ARRAY_FORMAT_BC1_UNORM), "format"},
        {"linear: 3 channels", linear(b, CUCORE_ARRAY_FORMAT_FLOAT32, 3), "num_channels"},
        {"linear: 101010_2 with 2 channels", linear(b, CUCORE_ARRAY_FORMAT_UNORM_INT_101010_2, 2), "num_channels"},
        {"pitch: shorter than a row", pitched(b, CUCORE_ARRAY_FORMAT_FLOAT32, 4, 16, 4, 128), "pitch"},
        {"pitch: off the pitch alignment", pitched(b, CUCORE_ARRAY_FORMAT_UINT8, 1, 16, 4, 48), "32"},
        {"pitch: rows past the buffer", pitched(b, CUCORE_ARRAY_FORMAT_UINT8, 1, 64, 65, 64), ""},
        {"pitch: width 0", pitched(b, CUCORE_ARRAY_FORMAT_UINT8, 1, 0, 4, 64), "width"},
        {"pitch: height 0", pitched(b, CUCORE_ARRAY_FORMAT_UINT8, 1, 16, 0, 64), "height"},
        {"pitch: no format", pitched(b, CUCORE_ARRAY_FORMAT_UNSET, 1, 16, 4, 64), "format"},
    };
    cucore_resource_descriptor_t r = of(a);
    r.buffer = b;
    rows.push_back({"array: a buffer too", r, "buffer"});
    r = of(a);
    r.format = CUCORE_ARRAY_FORMAT_FLOAT32;
    rows.push_back({"array: a format too", r, "format"});
    r = of(a);
    r.mipmapped_array = m;
    rows.push_back({"array: a mipmapped array too", r, "mipmapped_array"});
    r = of(m);
    r.width = 4;
    rows.push_back({"mipmapped: a width too", r, "width"});
    r = linear(b, CUCORE_ARRAY_FORMAT_FLOAT32);
    r.array = a;
    rows.push_back({"linear: an array too", r, "array"});
    r = linear(b, CUCORE_ARRAY_FORMAT_FLOAT32);
    r.pitch_bytes = 64;
    rows.push_back({"linear: a pitch too", r, "pitch_bytes"});
    r = pitched(b, CUCORE_ARRAY_FORMAT_UINT8, 1, 16, 4, 64);
    r.size_bytes = 64;
    rows.push_back({"pitch: a size too", r, "size_bytes"});
    r = of(a);
    r.kind = CUCORE_RESOURCE_KIND_UNSET;
    rows.push_back({"no kind", r, "kind"});
    r.kind = static_cast<cucore_resource_kind_t>(5);
    rows.push_back({"kind 5", r, "kind"});
    r = of(a);
    r.struct_size = 2;  // less than the struct_size field itself
    rows.push_back({"struct_size 2", r, "struct_size"});
    for (const Row &row : rows) {
        SCOPED_TRACE(row.name);
        expect_refused(row.resource, nullptr, row.named);
    }
    // The buffer's address must meet the texture alignment: a view 16 bytes in is refused, naming 512.
    cucore_buffer_t *view = nullptr;
    ASSERT_EQ(cucore_buffer_view(b, 16, 1024, &view), CUCORE_SUCCESS);
    {
        SCOPED_TRACE("a misaligned view");
        expect_refused(linear(view, CUCORE_ARRAY_FORMAT_UINT8), nullptr, "512");
        expect_refused(pitched(view, CUCORE_ARRAY_FORMAT_UINT8, 1, 16, 4, 64), nullptr, "512");
    }
    // Not the resource's device.
    cucore_device_t *d1 = device(1);
    {
        SCOPED_TRACE("another device");
        expect_refused(of(a), nullptr, "device", d1);
        expect_refused(linear(b, CUCORE_ARRAY_FORMAT_UINT8), nullptr, "device", d1);
    }
    cucore_texture_object_t *t = nullptr;
    ASSERT_EQ(cucore_texture_object_create(d_, &r, nullptr, &t), CUCORE_ERROR_INVALID_ARGUMENT) << "struct_size 2";
    const cucore_resource_descriptor_t good = of(a);
    ASSERT_EQ(cucore_texture_object_create(d_, &good, nullptr, &t), CUCORE_SUCCESS) << "its own device: " << message();
    EXPECT_EQ(cucore_texture_object_release(t), CUCORE_SUCCESS);
    fake::reset_calls();
    EXPECT_EQ(cucore_texture_object_create(nullptr, nullptr, nullptr, &t), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "'resource'")) << message();
    EXPECT_EQ(cucore_texture_object_create(nullptr, &good, nullptr, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "'texture'")) << message();
    EXPECT_EQ(fake::calls(), 0);
    cucore_device_release(d1);
    cucore_buffer_release(view);
    cucore_buffer_release(b);
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_mipmapped_array_release(m), CUCORE_SUCCESS);
}

// ---- Handles and close ----------------------------------------------------------------------

TEST_F(TextureTest, CloseDestroysAtOnceAndTheHandleIsThenInvalidState) {
    cucore_opaque_array_t *a = array_2d(CUCORE_ARRAY_FORMAT_FLOAT32, CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE);
    cucore_texture_object_t *t = texture(of(a));
    const uint64_t handle = handle_of(t);
    cucore_surface_object_t *s = nullptr;
    const cucore_resource_descriptor_t r = of(a);
    ASSERT_EQ(cucore_surface_object_create(nullptr, &r, &s), CUCORE_SUCCESS) << message();
    const uint64_t surface = handle_of(s);
    EXPECT_NE(surface, handle);
    ASSERT_EQ(cucore_texture_object_close(t), CUCORE_SUCCESS) << message();
    fake::TextureRecord tr;
    ASSERT_TRUE(fake::texture_record(handle, tr));
    EXPECT_TRUE(tr.destroyed) << "destroyed at once";
    EXPECT_EQ(cucore_texture_object_close(t), CUCORE_SUCCESS) << "idempotent";
    uint64_t h = 7;
    EXPECT_EQ(cucore_texture_object_handle(t, &h), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(h, 0u);
    EXPECT_TRUE(contains(message(), "closed")) << message();
    ASSERT_EQ(cucore_surface_object_close(s), CUCORE_SUCCESS) << message();
    fake::SurfaceRecord sr;
    ASSERT_TRUE(fake::surface_record(surface, sr));
    EXPECT_TRUE(sr.destroyed);
    EXPECT_EQ(cucore_surface_object_close(s), CUCORE_SUCCESS);
    h = 7;
    EXPECT_EQ(cucore_surface_object_handle(s, &h), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(h, 0u);
    // The handles stay valid until released.
    EXPECT_EQ(cucore_texture_object_retain(t), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_texture_object_release(t), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_texture_object_release(t), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_texture_object_release(t), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(cucore_surface_object_retain(s), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_surface_object_release(s), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_surface_object_release(s), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_surface_object_release(s), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(fake::counters().texture_objects + fake::counters().surface_objects, 0);
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
}

TEST_F(TextureTest, AFailedDestroyIsReturnedAndTheObjectIsGoneAnyway) {
    cucore_opaque_array_t *a = array_2d();
    cucore_texture_object_t *t = texture(of(a));
    const uint64_t handle = handle_of(t);
    fake::fail_entry("cuTexObjectDestroy", CUDA_ERROR_UNKNOWN);
    EXPECT_EQ(cucore_texture_object_close(t), CUCORE_ERROR_CUDA);
    EXPECT_TRUE(contains(message(), "cuTexObjectDestroy")) << message();
    fake::fail_entry("");
    // What the fake refused, destroyed by hand (before the array goes, which would otherwise count as a
    // destroy under a live texture), so the fixture's counts balance.
    ASSERT_EQ(fake::table().cuTexObjectDestroy(handle), CUDA_SUCCESS);
    uint64_t h = 0;
    EXPECT_EQ(cucore_texture_object_handle(t, &h), CUCORE_ERROR_INVALID_STATE) << "gone anyway";
    EXPECT_EQ(cucore_texture_object_close(t), CUCORE_SUCCESS) << "nothing more to destroy";
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().arrays, 0) << "the texture let go of its array";
    EXPECT_EQ(cucore_texture_object_release(t), CUCORE_SUCCESS);
    // A returned failure is no release error: the fixture checks that none was reported.
}

// ---- Surfaces ---------------------------------------------------------------------------------

TEST_F(TextureTest, SurfacesNeedAnArrayWithSurfaceLoadStore) {
    cucore_opaque_array_t *plain = array_2d();
    cucore_opaque_array_t *ldst = create(array_options(CUCORE_ARRAY_FORMAT_UINT32, 8, 8, 4, CUCORE_ARRAY_KIND_PLAIN, 0, 2,
                                                       CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE));
    cucore_surface_object_t *s = reinterpret_cast<cucore_surface_object_t *>(0x1);
    cucore_resource_descriptor_t r = of(plain);
    fake::reset_calls();
    EXPECT_EQ(cucore_surface_object_create(nullptr, &r, &s), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(s, nullptr);
    EXPECT_TRUE(contains(message(), "SURFACE_LOAD_STORE")) << "names the flag: " << message();
    EXPECT_FALSE(driver_called("cuSurfObjectCreate")) << "the driver would take it: we check";
    // Other resource kinds.
    cucore_buffer_t *b = allocate(1024);
    cucore_mipmapped_array_t *m = create_mipmapped(array_options(CUCORE_ARRAY_FORMAT_UINT32, 8, 8, 0, CUCORE_ARRAY_KIND_PLAIN,
                                                                 0, 1, CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE), 2);
    for (const cucore_resource_descriptor_t &other : {linear(b, CUCORE_ARRAY_FORMAT_UINT32),
                                                      pitched(b, CUCORE_ARRAY_FORMAT_UINT8, 1, 32, 4, 64), of(m)}) {
        fake::reset_calls();
        EXPECT_EQ(cucore_surface_object_create(nullptr, &other, &s), CUCORE_ERROR_INVALID_ARGUMENT) << message();
        EXPECT_EQ(s, nullptr);
        EXPECT_FALSE(driver_called("cuSurfObjectCreate"));
    }
    // With the flag: the array reaches the driver.
    r = of(ldst);
    ASSERT_EQ(cucore_surface_object_create(d_, &r, &s), CUCORE_SUCCESS) << message();
    fake::SurfaceRecord record;
    ASSERT_TRUE(fake::surface_record(handle_of(s), record));
    EXPECT_EQ(record.resource.resType, CU_RESOURCE_TYPE_ARRAY);
    EXPECT_EQ(record.resource.res.array.hArray, raw(ldst));
    EXPECT_EQ(record.resource.flags, 0u);
    EXPECT_NE(record.context, nullptr);
    EXPECT_EQ(cucore_surface_object_release(s), CUCORE_SUCCESS);
    // A level of a mipmapped array made with the flag has it.
    cucore_opaque_array_t *level = nullptr;
    ASSERT_EQ(cucore_mipmapped_array_level(m, 1, &level), CUCORE_SUCCESS);
    r = of(level);
    ASSERT_EQ(cucore_surface_object_create(nullptr, &r, &s), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_surface_object_release(s), CUCORE_SUCCESS);
    // Not on another device, not over a closed array.
    cucore_device_t *d1 = device(1);
    r = of(ldst);
    EXPECT_EQ(cucore_surface_object_create(d1, &r, &s), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_device_release(d1);
    ASSERT_EQ(cucore_opaque_array_close(ldst), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_surface_object_create(nullptr, &r, &s), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(s, nullptr);
    cucore_resource_descriptor_t bad = of(plain);
    bad.struct_size = 0;
    EXPECT_EQ(cucore_surface_object_create(nullptr, &bad, &s), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_surface_object_create(nullptr, nullptr, &s), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "'resource'")) << message();
    EXPECT_EQ(cucore_surface_object_create(nullptr, &r, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "'surface'")) << message();
    EXPECT_EQ(cucore_opaque_array_release(level), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_mipmapped_array_release(m), CUCORE_SUCCESS);
    cucore_buffer_release(b);
    for (cucore_opaque_array_t *x : {plain, ldst}) EXPECT_EQ(cucore_opaque_array_release(x), CUCORE_SUCCESS);
}

// ---- Lifetimes --------------------------------------------------------------------------------

TEST_F(TextureTest, AClosedOrReleasedArrayLivesUntilItsLastTextureAndSurface) {
    for (bool close : {true, false}) {
        SCOPED_TRACE(close ? "closed" : "released");
        cucore_opaque_array_t *a = array_2d(CUCORE_ARRAY_FORMAT_FLOAT32, CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE);
        cucore_texture_object_t *t = texture(of(a));
        cucore_surface_object_t *s = nullptr;
        const cucore_resource_descriptor_t r = of(a);
        ASSERT_EQ(cucore_surface_object_create(nullptr, &r, &s), CUCORE_SUCCESS) << message();
        if (close) {
            ASSERT_EQ(cucore_opaque_array_close(a), CUCORE_SUCCESS);
            cucore_opaque_array_info_t i = CUCORE_OPAQUE_ARRAY_INFO_INIT;
            EXPECT_EQ(cucore_opaque_array_info(a, &i), CUCORE_ERROR_INVALID_STATE);
        }
        ASSERT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
        EXPECT_EQ(fake::counters().arrays, 1) << "the texture and the surface hold it";
        EXPECT_EQ(handle_of(t), handle_of(t)) << "still usable";
        EXPECT_EQ(cucore_texture_object_release(t), CUCORE_SUCCESS);
        EXPECT_EQ(fake::counters().arrays, 1) << "the surface holds it";
        EXPECT_EQ(cucore_surface_object_release(s), CUCORE_SUCCESS);
        EXPECT_EQ(fake::counters().arrays, 0) << "destroyed with its last holder";
        EXPECT_EQ(fake::resource_violations(), 0) << "never destroyed under a live object";
    }
}

TEST_F(TextureTest, ABufferClosedOrReleasedKeepsItsMemoryForItsTextures) {
    for (int way = 0; way < 3; ++way) {
        SCOPED_TRACE(way == 0 ? "buffer closed" : way == 1 ? "buffer released" : "a view, then its buffer, released");
        const int allocations = fake::counters().allocations;
        cucore_buffer_t *b = allocate(8192);
        cucore_buffer_t *resource = b;
        if (way == 2) {
            ASSERT_EQ(cucore_buffer_view(b, 4096, 2048, &resource), CUCORE_SUCCESS);
        }
        const uint64_t address = address_of(resource);
        cucore_texture_object_t *linear_texture = texture(linear(resource, CUCORE_ARRAY_FORMAT_FLOAT32, 4));
        cucore_texture_object_t *pitched_texture = texture(pitched(resource, CUCORE_ARRAY_FORMAT_UINT8, 4, 16, 8, 128));
        EXPECT_EQ(fake::counters().allocations, allocations + 1);
        if (way == 0) {
            ASSERT_EQ(cucore_buffer_close(b, nullptr), CUCORE_SUCCESS) << message();
            uint64_t size = 1;
            EXPECT_EQ(cucore_buffer_size(b, &size), CUCORE_SUCCESS);
            EXPECT_EQ(size, 0u) << "the buffer reads as closed";
        }
        if (way == 2) {
            EXPECT_EQ(cucore_buffer_release(resource), CUCORE_SUCCESS);
        }
        EXPECT_EQ(cucore_buffer_release(b), CUCORE_SUCCESS);
        EXPECT_EQ(fake::counters().allocations, allocations + 1) << "the textures hold the memory";
        EXPECT_EQ(record_of(linear_texture).resource.res.linear.devPtr, address);
        EXPECT_EQ(cucore_texture_object_release(linear_texture), CUCORE_SUCCESS);
        EXPECT_EQ(fake::counters().allocations, allocations + 1);
        EXPECT_EQ(cucore_texture_object_release(pitched_texture), CUCORE_SUCCESS);
        ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
        EXPECT_EQ(fake::counters().allocations, allocations) << "freed after the last texture";
        EXPECT_EQ(fake::resource_violations(), 0);
    }
    // A closed buffer is no resource.
    cucore_buffer_t *b = allocate(1024);
    ASSERT_EQ(cucore_buffer_close(b, nullptr), CUCORE_SUCCESS);
    cucore_texture_object_t *t = reinterpret_cast<cucore_texture_object_t *>(0x1);
    const cucore_resource_descriptor_t r = linear(b, CUCORE_ARRAY_FORMAT_UINT8);
    EXPECT_EQ(cucore_texture_object_create(nullptr, &r, nullptr, &t), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(t, nullptr);
    cucore_buffer_release(b);
}

// Every order of releasing an array, a texture and a surface over it (closing the array first or not)
// leaves nothing alive, and the array goes with the last of them.
TEST_F(TextureTest, EveryReleaseOrderOfArrayTextureAndSurface) {
    for (bool close_first : {false, true}) {
        std::vector<int> order = {0, 1, 2};
        do {
            SCOPED_TRACE(std::string(close_first ? "closed, " : "") + "order " + std::to_string(order[0]) +
                         std::to_string(order[1]) + std::to_string(order[2]));
            cucore_opaque_array_t *a = array_2d(CUCORE_ARRAY_FORMAT_UINT8, CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE);
            cucore_texture_object_t *t = texture(of(a));
            cucore_surface_object_t *s = nullptr;
            const cucore_resource_descriptor_t r = of(a);
            ASSERT_EQ(cucore_surface_object_create(nullptr, &r, &s), CUCORE_SUCCESS) << message();
            if (close_first) {
                ASSERT_EQ(cucore_opaque_array_close(a), CUCORE_SUCCESS);
            }
            bool held[3] = {!close_first, true, true};  // a closed array's handle holds nothing
            for (size_t i = 0; i < 3; ++i) {
                EXPECT_EQ(fake::counters().arrays, held[0] || held[1] || held[2] ? 1 : 0)
                    << "alive while something holds it";
                const int which = order[i];
                held[which] = false;
                if (which == 0) {
                    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
                }
                if (which == 1) {
                    EXPECT_EQ(cucore_texture_object_release(t), CUCORE_SUCCESS);
                }
                if (which == 2) {
                    EXPECT_EQ(cucore_surface_object_release(s), CUCORE_SUCCESS);
                }
            }
            const fake::Counters c = fake::counters();
            EXPECT_EQ(c.arrays + c.texture_objects + c.surface_objects, 0);
            for (cucore_object_type_t type : kTypes) EXPECT_EQ(live(type), 0u);
            EXPECT_EQ(fake::resource_violations(), 0);
        } while (std::next_permutation(order.begin(), order.end()));
    }
}

TEST_F(TextureTest, EveryReleaseOrderOfMipmappedArrayLevelAndTexture) {
    std::vector<int> order = {0, 1, 2, 3};
    do {
        SCOPED_TRACE("order " + std::to_string(order[0]) + std::to_string(order[1]) + std::to_string(order[2]) +
                     std::to_string(order[3]));
        cucore_mipmapped_array_t *m = create_mipmapped(array_options(CUCORE_ARRAY_FORMAT_FLOAT32, 16, 16), 3);
        cucore_opaque_array_t *level = nullptr;
        ASSERT_EQ(cucore_mipmapped_array_level(m, 1, &level), CUCORE_SUCCESS) << message();
        cucore_texture_object_t *over_mipmapped = texture(of(m));
        cucore_texture_object_t *over_level = texture(of(level));
        for (size_t i = 0; i < 4; ++i) {
            EXPECT_EQ(fake::counters().mipmapped_arrays, 1) << "alive before the last release";
            switch (order[i]) {
                case 0: EXPECT_EQ(cucore_mipmapped_array_release(m), CUCORE_SUCCESS); break;
                case 1: EXPECT_EQ(cucore_opaque_array_release(level), CUCORE_SUCCESS); break;
                case 2: EXPECT_EQ(cucore_texture_object_release(over_mipmapped), CUCORE_SUCCESS); break;
                default: EXPECT_EQ(cucore_texture_object_release(over_level), CUCORE_SUCCESS); break;
            }
        }
        const fake::Counters c = fake::counters();
        EXPECT_EQ(c.mipmapped_arrays + c.texture_objects, 0);
        for (cucore_object_type_t type : kTypes) EXPECT_EQ(live(type), 0u);
        EXPECT_EQ(fake::resource_violations(), 0);
    } while (std::next_permutation(order.begin(), order.end()));
}

TEST_F(TextureTest, EveryReleaseOrderOfBufferViewAndTexture) {
    const int allocations = fake::counters().allocations;
    std::vector<int> order = {0, 1, 2};
    do {
        SCOPED_TRACE("order " + std::to_string(order[0]) + std::to_string(order[1]) + std::to_string(order[2]));
        cucore_buffer_t *b = allocate(4096);
        cucore_buffer_t *view = nullptr;
        ASSERT_EQ(cucore_buffer_view(b, 1024, 1024, &view), CUCORE_SUCCESS);
        cucore_texture_object_t *t = texture(linear(view, CUCORE_ARRAY_FORMAT_UINT16, 2));
        for (size_t i = 0; i < 3; ++i) {
            EXPECT_EQ(fake::counters().allocations, allocations + 1) << "alive before the last release";
            if (order[i] == 0) {
                EXPECT_EQ(cucore_buffer_release(b), CUCORE_SUCCESS);
            }
            if (order[i] == 1) {
                EXPECT_EQ(cucore_buffer_release(view), CUCORE_SUCCESS);
            }
            if (order[i] == 2) {
                EXPECT_EQ(cucore_texture_object_release(t), CUCORE_SUCCESS);
            }
        }
        ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
        EXPECT_EQ(fake::counters().allocations, allocations);
        EXPECT_EQ(fake::counters().texture_objects, 0);
        EXPECT_EQ(fake::resource_violations(), 0);
    } while (std::next_permutation(order.begin(), order.end()));
}

// ---- Contexts ---------------------------------------------------------------------------------

TEST_F(TextureTest, TheCallersContextIsLeftAsItWas) {
    cucore_opaque_array_t *a = array_2d(CUCORE_ARRAY_FORMAT_FLOAT32, CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE);
    cucore_buffer_t *b = allocate(2048);
    const CUcontext callers = fake::make_foreign_context(0);
    fake::set_current_context(callers);
    cucore_texture_object_t *t = texture(of(a));
    EXPECT_EQ(fake::current_context(), callers);
    EXPECT_NE(record_of(t).context, callers) << "made in the array's (primary) context";
    cucore_texture_object_t *lt = texture(linear(b, CUCORE_ARRAY_FORMAT_FLOAT32));
    EXPECT_EQ(fake::current_context(), callers);
    cucore_surface_object_t *s = nullptr;
    const cucore_resource_descriptor_t r = of(a);
    ASSERT_EQ(cucore_surface_object_create(nullptr, &r, &s), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::current_context(), callers);
    EXPECT_EQ(cucore_texture_object_close(t), CUCORE_SUCCESS);
    EXPECT_EQ(fake::current_context(), callers);
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_buffer_release(b), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_texture_object_release(lt), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_surface_object_release(s), CUCORE_SUCCESS);  // destroys the array too
    EXPECT_EQ(cucore_texture_object_release(t), CUCORE_SUCCESS);
    EXPECT_EQ(fake::current_context(), callers);
    fake::set_current_context(nullptr);
    EXPECT_EQ(fake::counters().arrays, 0);
    ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
}

}  // namespace
