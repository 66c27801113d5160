// TensorMap descriptors through the fake driver: every argument of the three
// encodes reaches the driver as given (the fake records them in the 128 bytes,
// tensor_maps.hpp); each rule the driver documents is refused before the
// driver with INVALID_ARGUMENT naming the rule; every data type; buffers and
// raw addresses (within the buffer, tensor fits); replace_address with its
// alignment rule; the descriptor holds its buffer's memory in every release
// order; the 128 bytes (aligned storage and copy); im2col-wide without the
// entry point; fault injection of every create path.
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "array_support.hpp"
#include "fault_injection_support.hpp"
#include "tensor_maps.hpp"

namespace {

cucore_tensor_map_layout_t layout_of(cucore_tensor_map_data_type_t type, std::vector<uint64_t> dims,
                                     std::vector<uint64_t> strides) {
    cucore_tensor_map_layout_t l = CUCORE_TENSOR_MAP_LAYOUT_INIT;
    l.data_type = type;
    l.rank = static_cast<uint32_t>(dims.size());
    for (size_t i = 0; i < dims.size() && i < 5; ++i) l.global_dim[i] = dims[i];
    for (size_t i = 0; i < strides.size() && i < 4; ++i) l.global_strides[i] = strides[i];
    return l;
}

// A 64 x 32 x 4 float tensor, rows of 64 floats (256 bytes), planes of 32 rows.
cucore_tensor_map_layout_t float3d() { return layout_of(CUCORE_TENSOR_MAP_DATA_TYPE_FLOAT32, {64, 32, 4}, {256, 8192}); }
constexpr uint64_t kFloat3dBytes = 4 * 8192;

class TensorMapTest : public ArrayFixture {
  protected:
    void TearDown() override {
        for (cucore_tensor_map_descriptor_t *d : made_) cucore_tensor_map_descriptor_release(d);
        for (cucore_buffer_t *b : buffers_) cucore_buffer_release(b);
        ArrayFixture::TearDown();
    }
    cucore_buffer_t *buffer(uint64_t size) {
        cucore_buffer_t *b = allocate(size);
        buffers_.push_back(b);
        return b;
    }
    cucore_tensor_map_descriptor_t *keep(cucore_tensor_map_descriptor_t *d) {
        if (d) made_.push_back(d);
        return d;
    }
    cucore_tensor_map_descriptor_t *tiled(cucore_buffer_t *b, const cucore_tensor_map_layout_t &l,
                                          std::vector<uint32_t> box,
                                          const cucore_tensor_map_descriptor_options_t *o = nullptr,
                                          uint64_t address = 0) {
        box.resize(5, 0);
        cucore_tensor_map_descriptor_t *d = nullptr;
        EXPECT_EQ(cucore_tensor_map_descriptor_create_tiled(b, address, &l, box.data(), o, &d), CUCORE_SUCCESS)
            << message();
        return keep(d);
    }
    static fake::TensorMapRecord record_of(const cucore_tensor_map_descriptor_t *d) {
        unsigned char bytes[CUCORE_TENSOR_MAP_SIZE];
        EXPECT_EQ(cucore_tensor_map_descriptor_copy(d, bytes, sizeof bytes), CUCORE_SUCCESS) << message();
        return fake::tensor_map_record(bytes);
    }
    // Expects `create` to be refused with INVALID_ARGUMENT naming `rule`, before any encode.
    void expect_refused(const std::function<cucore_status_t(cucore_tensor_map_descriptor_t **)> &create,
                        const char *rule, const char *function = "cucore_tensor_map_descriptor_create_tiled") {
        fake::reset_calls();
        cucore_tensor_map_descriptor_t *d = reinterpret_cast<cucore_tensor_map_descriptor_t *>(0x1);
        EXPECT_EQ(create(&d), CUCORE_ERROR_INVALID_ARGUMENT) << message();
        EXPECT_EQ(d, nullptr) << "out-pointer cleared";
        EXPECT_EQ(message().rfind(std::string(function) + ":", 0), 0u) << message();
        EXPECT_TRUE(contains(message(), rule)) << "expected the rule '" << rule << "' in: " << message();
        for (const char *encode : {"cuTensorMapEncodeTiled", "cuTensorMapEncodeIm2col", "cuTensorMapEncodeIm2colWide"})
            EXPECT_FALSE(driver_called(encode)) << "refused before the driver";
    }
    // A tiled create over a 1 MiB buffer with `l`, `box` and `o`, refused naming `rule`.
    void expect_tiled_refused(const cucore_tensor_map_layout_t &l, std::vector<uint32_t> box,
                              const cucore_tensor_map_descriptor_options_t &o, const char *rule) {
        cucore_buffer_t *b = buffer(1 << 20);
        box.resize(5, 0);
        expect_refused(
            [&](cucore_tensor_map_descriptor_t **d) {
                return cucore_tensor_map_descriptor_create_tiled(b, 0, &l, box.data(), &o, d);
            },
            rule);
    }

    std::vector<cucore_tensor_map_descriptor_t *> made_;
    std::vector<cucore_buffer_t *> buffers_;
};

const cucore_tensor_map_descriptor_options_t kDefaults = CUCORE_TENSOR_MAP_DESCRIPTOR_OPTIONS_INIT;

// ---- What reaches the driver ------------------------------------------------------------------

TEST_F(TensorMapTest, ATiledDescriptorPassesEveryArgument) {
    cucore_buffer_t *b = buffer(kFloat3dBytes);
    cucore_tensor_map_descriptor_options_t o = kDefaults;
    o.element_strides[1] = 2;
    o.swizzle = CUCORE_TENSOR_MAP_SWIZZLE_128B;
    o.l2_promotion = CUCORE_TENSOR_MAP_L2_PROMOTION_L2_256B;
    o.oob_fill = CUCORE_TENSOR_MAP_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    cucore_tensor_map_descriptor_t *d = tiled(b, float3d(), {32, 16, 2}, &o);
    ASSERT_NE(d, nullptr);
    const fake::TensorMapRecord r = record_of(d);
    ASSERT_TRUE(r.valid);
    EXPECT_EQ(r.kind, 1);
    EXPECT_EQ(r.address, address_of(b));
    EXPECT_EQ(r.data_type, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
    EXPECT_EQ(r.rank, 3);
    EXPECT_EQ(r.global_dim[0], 64u);
    EXPECT_EQ(r.global_dim[1], 32u);
    EXPECT_EQ(r.global_dim[2], 4u);
    EXPECT_EQ(r.global_strides[0], 256u);
    EXPECT_EQ(r.global_strides[1], 8192u);
    EXPECT_EQ(r.box_dim[0], 32u);
    EXPECT_EQ(r.box_dim[1], 16u);
    EXPECT_EQ(r.box_dim[2], 2u);
    EXPECT_EQ(r.element_strides[0], 1u) << "an unset element stride is 1";
    EXPECT_EQ(r.element_strides[1], 2u);
    EXPECT_EQ(r.element_strides[2], 1u);
    EXPECT_EQ(r.interleave, CU_TENSOR_MAP_INTERLEAVE_NONE);
    EXPECT_EQ(r.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
    EXPECT_EQ(r.l2_promotion, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
    EXPECT_EQ(r.oob_fill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);
    cucore_tensor_map_kind_t kind = CUCORE_TENSOR_MAP_KIND_FORCE_INT32;
    ASSERT_EQ(cucore_tensor_map_descriptor_kind(d, &kind), CUCORE_SUCCESS);
    EXPECT_EQ(kind, CUCORE_TENSOR_MAP_KIND_TILED);
    uint64_t address = 0;
    ASSERT_EQ(cucore_tensor_map_descriptor_address(d, &address), CUCORE_SUCCESS);
    EXPECT_EQ(address, address_of(b));
    EXPECT_EQ(live(CUCORE_OBJECT_TENSOR_MAP_DESCRIPTOR), 1u);
}

TEST_F(TensorMapTest, NullOptionsAreTheDefaults) {
    cucore_buffer_t *b = buffer(kFloat3dBytes);
    const fake::TensorMapRecord r = record_of(tiled(b, float3d(), {4, 4, 4}));
    EXPECT_EQ(r.interleave, CU_TENSOR_MAP_INTERLEAVE_NONE);
    EXPECT_EQ(r.swizzle, CU_TENSOR_MAP_SWIZZLE_NONE);
    EXPECT_EQ(r.l2_promotion, CU_TENSOR_MAP_L2_PROMOTION_NONE);
    EXPECT_EQ(r.oob_fill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(r.element_strides[i], 1u);
}

TEST_F(TensorMapTest, EveryDataTypeTheDriverTakes) {
    cucore_buffer_t *b = buffer(1 << 20);
    for (int t = CUCORE_TENSOR_MAP_DATA_TYPE_UINT8; t <= CUCORE_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B; ++t) {
        SCOPED_TRACE("data type " + std::to_string(t));
        const auto type = static_cast<cucore_tensor_map_data_type_t>(t);
        const bool align16 = type == CUCORE_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B ||
                             type == CUCORE_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
        // 256 elements a row (a multiple of 128), rows 1024 bytes apart (a multiple of 32); a box of 128 x 2
        // (128 elements: a multiple of 16 bytes for every size, and what the ALIGN16B types require).
        const cucore_tensor_map_descriptor_t *d =
            tiled(b, layout_of(type, {256, 8}, {1024}), {128, 2});
        ASSERT_NE(d, nullptr);
        const fake::TensorMapRecord r = record_of(d);
        EXPECT_EQ(r.data_type, t - 1) << "the driver's value";
        (void)align16;
    }
}

TEST_F(TensorMapTest, RankOneAndFiveAndARawAddress) {
    cucore_buffer_t *b = buffer(1 << 20);
    const fake::TensorMapRecord one =
        record_of(tiled(b, layout_of(CUCORE_TENSOR_MAP_DATA_TYPE_UINT8, {1000}, {}), {64}));
    EXPECT_EQ(one.rank, 1);
    EXPECT_EQ(one.global_dim[0], 1000u);
    const fake::TensorMapRecord five = record_of(
        tiled(b, layout_of(CUCORE_TENSOR_MAP_DATA_TYPE_UINT16, {8, 2, 2, 2, 2}, {16, 32, 64, 128}), {8, 1, 2, 1, 2}));
    EXPECT_EQ(five.rank, 5);
    EXPECT_EQ(five.global_strides[3], 128u);
    EXPECT_EQ(five.box_dim[4], 2u);
    // A raw address: the caller's memory, nothing held.
    const uint64_t raw = address_of(b) + 4096;
    const cucore_tensor_map_layout_t l = float3d();
    const uint32_t box[3] = {8, 8, 1};
    cucore_tensor_map_descriptor_t *d = nullptr;
    ASSERT_EQ(cucore_tensor_map_descriptor_create_tiled(nullptr, raw, &l, box, nullptr, &d), CUCORE_SUCCESS)
        << message();
    keep(d);
    EXPECT_EQ(record_of(d).address, raw);
}

TEST_F(TensorMapTest, AnAddressWithinTheBufferAndATensorThatMustFit) {
    cucore_buffer_t *b = buffer(kFloat3dBytes + 256);
    const cucore_tensor_map_descriptor_t *d = tiled(b, float3d(), {8, 8, 1}, nullptr, address_of(b) + 256);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(record_of(d).address, address_of(b) + 256);
    const cucore_tensor_map_layout_t l = float3d();
    const uint32_t box[3] = {8, 8, 1};
    expect_refused(
        [&](cucore_tensor_map_descriptor_t **out) {
            return cucore_tensor_map_descriptor_create_tiled(b, address_of(b) + 512, &l, box, nullptr, out);
        },
        "the tensor must lie within the buffer");
    expect_refused(
        [&](cucore_tensor_map_descriptor_t **out) {
            return cucore_tensor_map_descriptor_create_tiled(b, address_of(b) + (1 << 30), &l, box, nullptr, out);
        },
        "is outside the buffer");
    expect_refused(
        [&](cucore_tensor_map_descriptor_t **out) {
            return cucore_tensor_map_descriptor_create_tiled(b, address_of(b) + 8, &l, box, nullptr, out);
        },
        "global address must be 16-byte aligned (32 with interleave 32B");
    expect_refused(
        [&](cucore_tensor_map_descriptor_t **out) {
            return cucore_tensor_map_descriptor_create_tiled(nullptr, 0, &l, box, nullptr, out);
        },
        "no buffer is given");
    expect_refused(
        [&](cucore_tensor_map_descriptor_t **out) {
            return cucore_tensor_map_descriptor_create_tiled(nullptr, 0x10008, &l, box, nullptr, out);
        },
        "global address must be 16-byte aligned");
}

// ---- The rules, each named --------------------------------------------------------------------

TEST_F(TensorMapTest, EachTiledRuleIsRefusedBeforeTheDriverNamingIt) {
    const cucore_tensor_map_layout_t good = float3d();
    const std::vector<uint32_t> box = {8, 8, 1};
    auto with = [](std::function<void(cucore_tensor_map_descriptor_options_t &)> f) {
        cucore_tensor_map_descriptor_options_t o = kDefaults;
        f(o);
        return o;
    };
    {
        cucore_tensor_map_layout_t l = good;
        l.rank = 0;
        expect_tiled_refused(l, box, kDefaults, "the rank must be in 1..5");
        l.rank = 6;
        expect_tiled_refused(l, box, kDefaults, "the rank must be in 1..5");
    }
    {
        cucore_tensor_map_layout_t l = layout_of(CUCORE_TENSOR_MAP_DATA_TYPE_UINT16, {64, 8}, {128});
        cucore_tensor_map_descriptor_options_t o = kDefaults;
        o.interleave = CUCORE_TENSOR_MAP_INTERLEAVE_16B;
        expect_tiled_refused(l, {8, 8}, o, "the rank must be at least 3 when interleave is not NONE");
    }
    {
        cucore_tensor_map_layout_t l = good;
        l.global_dim[1] = 0;
        expect_tiled_refused(l, box, kDefaults, "globalDim[i] must be in 1..2^32");
        l.global_dim[1] = (uint64_t{1} << 32) + 1;
        expect_tiled_refused(l, box, kDefaults, "globalDim[i] must be in 1..2^32");
        l = good;
        l.global_dim[3] = 2;
        expect_tiled_refused(l, box, kDefaults, "layout.global_dim[3] is 2, past the rank");
    }
    {
        cucore_tensor_map_layout_t l = good;
        l.global_strides[0] = 264;
        expect_tiled_refused(l, box, kDefaults, "globalStrides[i] must be a multiple of 16 and < 2^40");
        l.global_strides[0] = 0;
        expect_tiled_refused(l, box, kDefaults, "globalStrides[i] must be a multiple of 16 and < 2^40");
        l.global_strides[0] = 256;
        l.global_strides[1] = uint64_t{1} << 40;
        expect_tiled_refused(l, box, kDefaults, "globalStrides[i] must be a multiple of 16 and < 2^40");
        l = good;
        l.global_strides[2] = 16;
        expect_tiled_refused(l, box, kDefaults, "past the rank");
    }
    {
        // Interleave 32B: strides by 32.
        cucore_tensor_map_layout_t l = layout_of(CUCORE_TENSOR_MAP_DATA_TYPE_FLOAT16, {16, 8, 8}, {48, 384});
        cucore_tensor_map_descriptor_options_t o = kDefaults;
        o.interleave = CUCORE_TENSOR_MAP_INTERLEAVE_32B;
        o.swizzle = CUCORE_TENSOR_MAP_SWIZZLE_32B;
        expect_tiled_refused(l, {16, 8, 8}, o, "a multiple of 32 with interleave 32B");
    }
    expect_tiled_refused(good, {0, 8, 1}, kDefaults, "boxDim[i] must be in 1..256");
    expect_tiled_refused(good, {8, 257, 1}, kDefaults, "boxDim[i] must be in 1..256");
    expect_tiled_refused(good, {6, 8, 1}, kDefaults,
                         "boxDim[0]*elementSize must be a multiple of 16 bytes when interleave is NONE");
    expect_tiled_refused(good, box, with([](auto &o) { o.element_strides[2] = 9; }), "elementStrides in 1..8");
    expect_tiled_refused(good, box, with([](auto &o) { o.element_strides[4] = 2; }), "past the rank");
    {
        cucore_tensor_map_layout_t l = layout_of(CUCORE_TENSOR_MAP_DATA_TYPE_FLOAT16, {16, 8, 8}, {64, 512});
        cucore_tensor_map_descriptor_options_t o = kDefaults;
        o.interleave = CUCORE_TENSOR_MAP_INTERLEAVE_32B;
        o.swizzle = CUCORE_TENSOR_MAP_SWIZZLE_64B;
        expect_tiled_refused(l, {16, 8, 8}, o, "interleave 32B requires swizzle 32B");
    }
    expect_tiled_refused(good, {16, 8, 1}, with([](auto &o) { o.swizzle = CUCORE_TENSOR_MAP_SWIZZLE_32B; }),
                         "the inner box dimension must be <= the swizzle span (32 bytes");
    expect_tiled_refused(good, {64, 8, 1}, with([](auto &o) { o.swizzle = CUCORE_TENSOR_MAP_SWIZZLE_128B_ATOM_32B; }),
                         "the inner box dimension must be <= the swizzle span (128 bytes");
    {
        cucore_tensor_map_layout_t l = layout_of(CUCORE_TENSOR_MAP_DATA_TYPE_INT32, {64, 32}, {256});
        expect_tiled_refused(l, {8, 8},
                             with([](auto &o) { o.oob_fill = CUCORE_TENSOR_MAP_OOB_FILL_NAN_REQUEST_ZERO_FMA; }),
                             "OOB NaN fill only for float types");
    }
    expect_tiled_refused(good, box, with([](auto &o) { o.im2col_wide_mode = CUCORE_TENSOR_MAP_IM2COL_WIDE_MODE_W128; }),
                         "for im2col-wide descriptors only");
}

TEST_F(TensorMapTest, ThePackedTypesRules) {
    const auto u4_16 = CUCORE_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B, u6 = CUCORE_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B,
               u4_8 = CUCORE_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B;
    expect_tiled_refused(layout_of(u4_16, {192, 8}, {1024}), {128, 2}, kDefaults,
                         "globalDim[0] must be a multiple of 128");
    expect_tiled_refused(layout_of(u4_8, {255, 8}, {1024}), {64, 2}, kDefaults, "globalDim[0] must be a multiple of 2");
    expect_tiled_refused(layout_of(u6, {256, 8}, {1040}), {128, 2}, kDefaults,
                         "globalStrides[i] must be a multiple of 16 and < 2^40 (non-zero; a multiple of 32");
    expect_tiled_refused(layout_of(u6, {256, 8}, {1024}), {64, 2}, kDefaults, "boxDim[0] must be 128");
    cucore_tensor_map_descriptor_options_t o = kDefaults;
    o.swizzle = CUCORE_TENSOR_MAP_SWIZZLE_64B;
    expect_tiled_refused(layout_of(u4_16, {256, 8}, {1024}), {128, 2}, o, "takes swizzle NONE, 128B, 128B_ATOM_32B");
    o.swizzle = CUCORE_TENSOR_MAP_SWIZZLE_128B_ATOM_64B;
    expect_tiled_refused(layout_of(u4_16, {256, 8}, {1024}), {128, 2}, o, "takes swizzle NONE, 128B, 128B_ATOM_32B");
    o = kDefaults;
    o.interleave = CUCORE_TENSOR_MAP_INTERLEAVE_16B;
    expect_tiled_refused(layout_of(u6, {256, 8, 2}, {1024, 8192}), {128, 2, 1}, o, "requires interleave NONE");
    o = kDefaults;
    o.oob_fill = CUCORE_TENSOR_MAP_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    expect_tiled_refused(layout_of(u6, {256, 8}, {1024}), {128, 2}, o, "OOB NaN fill only for float types");
    // 16U6 takes 128B_ATOM_64B; a 16U4_ALIGN8B inner box of 32 values is 16 bytes.
    cucore_buffer_t *b = buffer(1 << 20);
    o = kDefaults;
    o.swizzle = CUCORE_TENSOR_MAP_SWIZZLE_128B_ATOM_64B;
    EXPECT_NE(tiled(b, layout_of(u6, {256, 8}, {1024}), {128, 2}, &o), nullptr);
    EXPECT_NE(tiled(b, layout_of(u4_8, {256, 8}, {1024}), {32, 2}), nullptr);
    expect_tiled_refused(layout_of(u4_8, {256, 8}, {1024}), {16, 2}, kDefaults, "a multiple of 16 bytes");
}

TEST_F(TensorMapTest, UnknownEnumValuesAndBadStructsAreRefused) {
    const cucore_tensor_map_layout_t good = float3d();
    {
        cucore_tensor_map_layout_t l = good;
        l.data_type = CUCORE_TENSOR_MAP_DATA_TYPE_UNSET;
        expect_tiled_refused(l, {8, 8, 1}, kDefaults, "layout.data_type");
        l.data_type = static_cast<cucore_tensor_map_data_type_t>(17);
        expect_tiled_refused(l, {8, 8, 1}, kDefaults, "layout.data_type");
        l = good;
        l.struct_size = 0;
        expect_tiled_refused(l, {8, 8, 1}, kDefaults, "struct_size");
    }
    cucore_tensor_map_descriptor_options_t o = kDefaults;
    o.interleave = static_cast<cucore_tensor_map_interleave_t>(3);
    expect_tiled_refused(good, {8, 8, 1}, o, "options.interleave");
    o = kDefaults;
    o.swizzle = static_cast<cucore_tensor_map_swizzle_t>(7);
    expect_tiled_refused(good, {8, 8, 1}, o, "options.swizzle");
    o = kDefaults;
    o.l2_promotion = static_cast<cucore_tensor_map_l2_promotion_t>(4);
    expect_tiled_refused(good, {8, 8, 1}, o, "options.l2_promotion");
    o = kDefaults;
    o.oob_fill = static_cast<cucore_tensor_map_oob_fill_t>(2);
    expect_tiled_refused(good, {8, 8, 1}, o, "options.oob_fill");
    o = kDefaults;
    o.im2col_wide_mode = static_cast<cucore_tensor_map_im2col_wide_mode_t>(2);
    expect_tiled_refused(good, {8, 8, 1}, o, "options.im2col_wide_mode");
    o = kDefaults;
    o.struct_size = 2;
    expect_tiled_refused(good, {8, 8, 1}, o, "struct_size");
    cucore_buffer_t *b = buffer(1 << 20);
    expect_refused(
        [&](cucore_tensor_map_descriptor_t **d) {
            return cucore_tensor_map_descriptor_create_tiled(b, 0, nullptr, nullptr, nullptr, d);
        },
        "'layout' is NULL");
    expect_refused(
        [&](cucore_tensor_map_descriptor_t **d) {
            return cucore_tensor_map_descriptor_create_tiled(b, 0, &good, nullptr, nullptr, d);
        },
        "'box_dim' is NULL");
}

// ---- im2col -----------------------------------------------------------------------------------

// An NHWC tensor: C = 64 halves, W = 16, H = 16, N = 2.
cucore_tensor_map_layout_t nhwc() {
    return layout_of(CUCORE_TENSOR_MAP_DATA_TYPE_FLOAT16, {64, 16, 16, 2}, {128, 2048, 32768});
}

TEST_F(TensorMapTest, AnIm2colDescriptorPassesEveryArgument) {
    cucore_buffer_t *b = buffer(65536);
    const cucore_tensor_map_layout_t l = nhwc();
    const int32_t lower[2] = {-1, -1}, upper[2] = {-1, 1};
    cucore_tensor_map_descriptor_options_t o = kDefaults;
    o.swizzle = CUCORE_TENSOR_MAP_SWIZZLE_128B;
    o.element_strides[1] = 2;
    cucore_tensor_map_descriptor_t *d = nullptr;
    ASSERT_EQ(cucore_tensor_map_descriptor_create_im2col(b, 0, &l, lower, upper, 64, 256, &o, &d), CUCORE_SUCCESS)
        << message();
    keep(d);
    const fake::TensorMapRecord r = record_of(d);
    EXPECT_EQ(r.kind, 2);
    EXPECT_EQ(r.rank, 4);
    EXPECT_EQ(r.data_type, CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
    EXPECT_EQ(r.lower_corner[0], -1);
    EXPECT_EQ(r.lower_corner[1], -1);
    EXPECT_EQ(r.upper_corner[0], -1);
    EXPECT_EQ(r.upper_corner[1], 1);
    EXPECT_EQ(r.channels_per_pixel, 64u);
    EXPECT_EQ(r.pixels_per_column, 256u);
    EXPECT_EQ(r.element_strides[1], 2u);
    EXPECT_EQ(r.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
    cucore_tensor_map_kind_t kind{};
    ASSERT_EQ(cucore_tensor_map_descriptor_kind(d, &kind), CUCORE_SUCCESS);
    EXPECT_EQ(kind, CUCORE_TENSOR_MAP_KIND_IM2COL);
}

TEST_F(TensorMapTest, EachIm2colRuleIsRefusedNamingIt) {
    cucore_buffer_t *b = buffer(65536);
    const char *f = "cucore_tensor_map_descriptor_create_im2col";
    auto refused = [&](cucore_tensor_map_layout_t l, std::vector<int32_t> lower, std::vector<int32_t> upper,
                       uint32_t channels, uint32_t pixels, const cucore_tensor_map_descriptor_options_t &o,
                       const char *rule) {
        lower.resize(3, 0);
        upper.resize(3, 0);
        expect_refused(
            [&](cucore_tensor_map_descriptor_t **d) {
                return cucore_tensor_map_descriptor_create_im2col(b, 0, &l, lower.data(), upper.data(), channels,
                                                                  pixels, &o, d);
            },
            rule, f);
    };
    refused(layout_of(CUCORE_TENSOR_MAP_DATA_TYPE_FLOAT16, {64, 16}, {128}), {}, {}, 64, 16, kDefaults,
            "an im2col tensor's rank must be 3, 4 or 5");
    refused(nhwc(), {-129, 0}, {0, 0}, 64, 16, kDefaults, "pixel box corner offsets must be in [-128, 127] for rank 4");
    refused(nhwc(), {0, 0}, {0, 128}, 64, 16, kDefaults, "pixel box corner offsets must be in [-128, 127]");
    refused(layout_of(CUCORE_TENSOR_MAP_DATA_TYPE_FLOAT16, {8, 4, 4, 4, 1}, {16, 64, 256, 1024}), {-16, 0, 0},
            {0, 0, 16}, 8, 16, kDefaults, "in [-16, 15] for rank 5");
    refused(layout_of(CUCORE_TENSOR_MAP_DATA_TYPE_FLOAT16, {64, 16, 2}, {128, 2048}), {40000}, {0}, 64, 16,
            kDefaults, "in [-32768, 32767] for rank 3");
    refused(nhwc(), {0, 10}, {0, -7}, 64, 16, kDefaults, "the pixel box must have non-zero area");
    refused(nhwc(), {0, 0}, {0, 0}, 0, 16, kDefaults, "channelsPerPixel must be in 1..256");
    refused(nhwc(), {0, 0}, {0, 0}, 257, 16, kDefaults, "channelsPerPixel must be in 1..256");
    refused(nhwc(), {0, 0}, {0, 0}, 64, 1025, kDefaults, "pixelsPerColumn must be in 1..1024");
    refused(nhwc(), {0, 0}, {0, 0}, 64, 0, kDefaults, "pixelsPerColumn must be in 1..1024");
    cucore_tensor_map_descriptor_options_t o = kDefaults;
    o.swizzle = CUCORE_TENSOR_MAP_SWIZZLE_64B;
    refused(nhwc(), {0, 0}, {0, 0}, 64, 16, o, "the inner box dimension must be <= the swizzle span (64 bytes");
    const cucore_tensor_map_layout_t l = nhwc();
    const int32_t corner[2] = {0, 0};
    expect_refused(
        [&](cucore_tensor_map_descriptor_t **d) {
            return cucore_tensor_map_descriptor_create_im2col(b, 0, &l, nullptr, corner, 8, 8, nullptr, d);
        },
        "'pixel_box_lower_corner' is NULL", f);
}

TEST_F(TensorMapTest, AnIm2colWideDescriptorAndItsRules) {
    cucore_buffer_t *b = buffer(65536);
    const cucore_tensor_map_layout_t l = nhwc();
    cucore_tensor_map_descriptor_options_t o = kDefaults;
    o.swizzle = CUCORE_TENSOR_MAP_SWIZZLE_128B;
    o.im2col_wide_mode = CUCORE_TENSOR_MAP_IM2COL_WIDE_MODE_W128;
    cucore_tensor_map_descriptor_t *d = nullptr;
    ASSERT_EQ(cucore_tensor_map_descriptor_create_im2col_wide(b, 0, &l, -3, 2, 64, 0, &o, &d), CUCORE_SUCCESS)
        << message();
    keep(d);
    const fake::TensorMapRecord r = record_of(d);
    EXPECT_EQ(r.kind, 3);
    EXPECT_EQ(r.wide_mode, CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128);
    EXPECT_EQ(r.lower_corner[0], -3);
    EXPECT_EQ(r.upper_corner[0], 2);
    EXPECT_EQ(r.channels_per_pixel, 64u);
    const char *f = "cucore_tensor_map_descriptor_create_im2col_wide";
    auto refused = [&](int32_t lower, int32_t upper, uint32_t pixels, const cucore_tensor_map_descriptor_options_t &opt,
                       const char *rule) {
        expect_refused(
            [&](cucore_tensor_map_descriptor_t **out) {
                return cucore_tensor_map_descriptor_create_im2col_wide(b, 0, &l, lower, upper, 64, pixels, &opt, out);
            },
            rule, f);
    };
    cucore_tensor_map_descriptor_options_t w = kDefaults;
    w.swizzle = CUCORE_TENSOR_MAP_SWIZZLE_128B;
    refused(0, 0, 0, w, "pixelsPerColumn must be in 1..1024");  // mode W counts pixels
    refused(-40000, 0, 16, w, "[-32768, 32767] for im2col-wide");
    refused(8, -9, 16, w, "the pixel box must have non-zero area");
    w.swizzle = CUCORE_TENSOR_MAP_SWIZZLE_32B;
    refused(0, 0, 16, w, "an im2col-wide descriptor's swizzle must be 64B, 128B or 128B_ATOM_32B");
    w.swizzle = CUCORE_TENSOR_MAP_SWIZZLE_NONE;
    refused(0, 0, 16, w, "an im2col-wide descriptor's swizzle must be 64B, 128B or 128B_ATOM_32B");
}

TEST_F(TensorMapTest, Im2colWideIsNotSupportedWithoutTheEntryPoint) {
    cucore_buffer_t *b = buffer(65536);
    fake::table().cuTensorMapEncodeIm2colWide = nullptr;
    fake::reinstall();
    const cucore_tensor_map_layout_t l = nhwc();
    cucore_tensor_map_descriptor_options_t o = kDefaults;
    o.swizzle = CUCORE_TENSOR_MAP_SWIZZLE_128B;
    cucore_tensor_map_descriptor_t *d = reinterpret_cast<cucore_tensor_map_descriptor_t *>(0x1);
    EXPECT_EQ(cucore_tensor_map_descriptor_create_im2col_wide(b, 0, &l, 0, 0, 64, 16, &o, &d),
              CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(d, nullptr);
    EXPECT_TRUE(contains(message(), "cuTensorMapEncodeIm2colWide")) << message();
}

TEST_F(TensorMapTest, TheDriversRefusalIsACudaErrorNamingTheEncode) {
    cucore_buffer_t *b = buffer(kFloat3dBytes);
    fake::fail_entry("cuTensorMapEncodeTiled", CUDA_ERROR_INVALID_VALUE);
    const cucore_tensor_map_layout_t l = float3d();
    const uint32_t box[3] = {8, 8, 1};
    cucore_tensor_map_descriptor_t *d = reinterpret_cast<cucore_tensor_map_descriptor_t *>(0x1);
    EXPECT_EQ(cucore_tensor_map_descriptor_create_tiled(b, 0, &l, box, nullptr, &d), CUCORE_ERROR_CUDA);
    fake::fail_entry("");
    EXPECT_EQ(d, nullptr);
    EXPECT_TRUE(contains(message(), "cuTensorMapEncodeTiled")) << message();
    EXPECT_TRUE(contains(message(), "CUDA_ERROR_INVALID_VALUE")) << message();
    EXPECT_EQ(cucore_last_cuda_result(), CUDA_ERROR_INVALID_VALUE);
}

// ---- Replacing the address, holding the buffer ----------------------------------------------

TEST_F(TensorMapTest, ReplaceAddressPointsAtTheNewBufferUnderTheSameRules) {
    cucore_buffer_t *first = buffer(kFloat3dBytes), *second = buffer(kFloat3dBytes), *small = buffer(1024);
    cucore_tensor_map_descriptor_t *d = tiled(first, float3d(), {8, 8, 1});
    ASSERT_NE(d, nullptr);
    ASSERT_EQ(cucore_tensor_map_descriptor_replace_address(d, second, 0), CUCORE_SUCCESS) << message();
    EXPECT_EQ(record_of(d).address, address_of(second));
    uint64_t address = 0;
    ASSERT_EQ(cucore_tensor_map_descriptor_address(d, &address), CUCORE_SUCCESS);
    EXPECT_EQ(address, address_of(second));
    EXPECT_EQ(record_of(d).box_dim[0], 8u) << "the rest of the descriptor is unchanged";
    // The rules: alignment, within the buffer, the tensor fits.
    fake::reset_calls();
    EXPECT_EQ(cucore_tensor_map_descriptor_replace_address(d, second, address_of(second) + 8),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "global address must be 16-byte aligned")) << message();
    EXPECT_EQ(cucore_tensor_map_descriptor_replace_address(d, small, 0), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "the tensor must lie within the buffer")) << message();
    EXPECT_EQ(cucore_tensor_map_descriptor_replace_address(d, nullptr, 0x100008), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_FALSE(driver_called("cuTensorMapReplaceAddress"));
    EXPECT_EQ(record_of(d).address, address_of(second)) << "a refused replace changes nothing";
    // A raw address; then a refusal by the driver leaves the descriptor as it was.
    ASSERT_EQ(cucore_tensor_map_descriptor_replace_address(d, nullptr, 0x100000), CUCORE_SUCCESS) << message();
    EXPECT_EQ(record_of(d).address, 0x100000u);
    fake::fail_entry("cuTensorMapReplaceAddress", CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(cucore_tensor_map_descriptor_replace_address(d, first, 0), CUCORE_ERROR_CUDA);
    fake::fail_entry("");
    EXPECT_TRUE(contains(message(), "cuTensorMapReplaceAddress")) << message();
    EXPECT_EQ(record_of(d).address, 0x100000u);
}

TEST_F(TensorMapTest, InterleavedDescriptorsNeed32ByteAddresses) {
    cucore_buffer_t *b = buffer(1 << 16);
    const cucore_tensor_map_layout_t l = layout_of(CUCORE_TENSOR_MAP_DATA_TYPE_FLOAT16, {16, 8, 8}, {64, 512});
    cucore_tensor_map_descriptor_options_t o = kDefaults;
    o.interleave = CUCORE_TENSOR_MAP_INTERLEAVE_32B;
    o.swizzle = CUCORE_TENSOR_MAP_SWIZZLE_32B;
    const uint32_t box[3] = {16, 8, 8};
    expect_refused(
        [&](cucore_tensor_map_descriptor_t **d) {
            return cucore_tensor_map_descriptor_create_tiled(b, address_of(b) + 16, &l, box, &o, d);
        },
        "is not 32-byte aligned; global address must be 16-byte aligned (32 with interleave 32B");
    cucore_tensor_map_descriptor_t *d = nullptr;
    ASSERT_EQ(cucore_tensor_map_descriptor_create_tiled(b, 0, &l, box, &o, &d), CUCORE_SUCCESS) << message();
    keep(d);
    EXPECT_EQ(record_of(d).interleave, CU_TENSOR_MAP_INTERLEAVE_32B);
    EXPECT_EQ(cucore_tensor_map_descriptor_replace_address(d, b, address_of(b) + 16), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "32-byte aligned")) << message();
    EXPECT_EQ(cucore_tensor_map_descriptor_replace_address(d, b, address_of(b) + 32), CUCORE_SUCCESS) << message();
}

TEST_F(TensorMapTest, TheDescriptorHoldsItsBufferMemoryInEveryReleaseOrder) {
    for (const bool descriptor_first : {true, false}) {
        SCOPED_TRACE(descriptor_first ? "descriptor first" : "buffer first");
        const int allocations = fake::counters().allocations;
        cucore_buffer_t *b = allocate(kFloat3dBytes);
        const cucore_tensor_map_layout_t l = float3d();
        const uint32_t box[3] = {8, 8, 1};
        cucore_tensor_map_descriptor_t *d = nullptr;
        ASSERT_EQ(cucore_tensor_map_descriptor_create_tiled(b, 0, &l, box, nullptr, &d), CUCORE_SUCCESS) << message();
        if (descriptor_first) {
            ASSERT_EQ(cucore_tensor_map_descriptor_release(d), CUCORE_SUCCESS);
            ASSERT_EQ(cucore_buffer_release(b), CUCORE_SUCCESS);
        } else {
            ASSERT_EQ(cucore_buffer_release(b), CUCORE_SUCCESS);
            ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
            EXPECT_EQ(fake::counters().allocations, allocations + 1) << "the memory lives while the descriptor does";
            ASSERT_EQ(cucore_tensor_map_descriptor_release(d), CUCORE_SUCCESS);
        }
        ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
        EXPECT_EQ(fake::counters().allocations, allocations);
    }
    // Replacing lets go of the old buffer's memory and holds the new one's.
    const int allocations = fake::counters().allocations;
    cucore_buffer_t *first = allocate(kFloat3dBytes), *second = allocate(kFloat3dBytes);
    const cucore_tensor_map_layout_t l = float3d();
    const uint32_t box[3] = {8, 8, 1};
    cucore_tensor_map_descriptor_t *d = nullptr;
    ASSERT_EQ(cucore_tensor_map_descriptor_create_tiled(first, 0, &l, box, nullptr, &d), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_buffer_release(first), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_tensor_map_descriptor_replace_address(d, second, 0), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_buffer_release(second), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().allocations, allocations + 1) << "the first buffer's memory went, the second's stays";
    ASSERT_EQ(cucore_tensor_map_descriptor_release(d), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().allocations, allocations);
}

TEST_F(TensorMapTest, AClosedBufferIsRefused) {
    cucore_buffer_t *b = buffer(kFloat3dBytes);
    ASSERT_EQ(cucore_buffer_close(b, nullptr), CUCORE_SUCCESS) << message();
    const cucore_tensor_map_layout_t l = float3d();
    const uint32_t box[3] = {8, 8, 1};
    cucore_tensor_map_descriptor_t *d = nullptr;
    EXPECT_EQ(cucore_tensor_map_descriptor_create_tiled(b, 0, &l, box, nullptr, &d), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(d, nullptr);
}

// ---- The 128 bytes ----------------------------------------------------------------------------

TEST_F(TensorMapTest, TheBytesAreAlignedAndCopied) {
    cucore_buffer_t *b = buffer(kFloat3dBytes), *other = buffer(kFloat3dBytes);
    cucore_tensor_map_descriptor_t *d = tiled(b, float3d(), {8, 8, 1});
    const void *data = nullptr;
    ASSERT_EQ(cucore_tensor_map_descriptor_data(d, &data), CUCORE_SUCCESS);
    ASSERT_NE(data, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % CUCORE_TENSOR_MAP_ALIGNMENT, 0u);
    unsigned char copy[CUCORE_TENSOR_MAP_SIZE + 1];
    ASSERT_EQ(cucore_tensor_map_descriptor_copy(d, copy + 1, CUCORE_TENSOR_MAP_SIZE), CUCORE_SUCCESS)
        << "any alignment";
    EXPECT_EQ(std::memcmp(copy + 1, data, CUCORE_TENSOR_MAP_SIZE), 0);
    EXPECT_EQ(fake::tensor_map_record(data).address, address_of(b));
    // replace_address rewrites the same storage.
    ASSERT_EQ(cucore_tensor_map_descriptor_replace_address(d, other, 0), CUCORE_SUCCESS);
    const void *again = nullptr;
    ASSERT_EQ(cucore_tensor_map_descriptor_data(d, &again), CUCORE_SUCCESS);
    EXPECT_EQ(again, data);
    EXPECT_EQ(fake::tensor_map_record(data).address, address_of(other));
    EXPECT_EQ(cucore_tensor_map_descriptor_copy(d, copy, CUCORE_TENSOR_MAP_SIZE - 1), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "128 bytes")) << message();
    EXPECT_EQ(cucore_tensor_map_descriptor_copy(d, nullptr, CUCORE_TENSOR_MAP_SIZE), CUCORE_ERROR_INVALID_ARGUMENT);
}

// ---- Fault injection ------------------------------------------------------------------------

class TensorMapFaultInjectionTest : public FaultInjection<ArrayFixture> {
  protected:
    void TearDown() override {
        if (b_) cucore_buffer_release(b_);
        FaultInjection<ArrayFixture>::TearDown();
    }
    Scenario scenario(const char *function, std::function<cucore_status_t(cucore_tensor_map_descriptor_t **)> create) {
        return {function,
                [create](void **h) { return create(reinterpret_cast<cucore_tensor_map_descriptor_t **>(h)); },
                [](void *h) {
                    fake::Uncounted cleanup;
                    cucore_tensor_map_descriptor_release(static_cast<cucore_tensor_map_descriptor_t *>(h));
                },
                1};
    }
    cucore_buffer_t *b_ = nullptr;
};

TEST_F(TensorMapFaultInjectionTest, EveryCreatePath) {
    b_ = allocate(65536);
    cucore_buffer_t *b = b_;
    run(scenario("cucore_tensor_map_descriptor_create_tiled", [b](cucore_tensor_map_descriptor_t **d) {
        const cucore_tensor_map_layout_t l = float3d();
        const uint32_t box[3] = {8, 8, 1};
        return cucore_tensor_map_descriptor_create_tiled(b, 0, &l, box, nullptr, d);
    }));
    run(scenario("cucore_tensor_map_descriptor_create_im2col", [b](cucore_tensor_map_descriptor_t **d) {
        const cucore_tensor_map_layout_t l = nhwc();
        const int32_t corner[2] = {0, 0};
        return cucore_tensor_map_descriptor_create_im2col(b, 0, &l, corner, corner, 64, 16, nullptr, d);
    }));
    run(scenario("cucore_tensor_map_descriptor_create_im2col_wide", [b](cucore_tensor_map_descriptor_t **d) {
        const cucore_tensor_map_layout_t l = nhwc();
        cucore_tensor_map_descriptor_options_t o = CUCORE_TENSOR_MAP_DESCRIPTOR_OPTIONS_INIT;
        o.swizzle = CUCORE_TENSOR_MAP_SWIZZLE_128B;
        return cucore_tensor_map_descriptor_create_im2col_wide(b, 0, &l, 0, 0, 64, 16, &o, d);
    }));
    // A raw address binds no context: the encode is the only call.
    run(scenario("cucore_tensor_map_descriptor_create_tiled", [b](cucore_tensor_map_descriptor_t **d) {
        const cucore_tensor_map_layout_t l = float3d();
        const uint32_t box[3] = {8, 8, 1};
        uint64_t address = 0;
        cucore_buffer_address(b, &address);
        return cucore_tensor_map_descriptor_create_tiled(nullptr, address, &l, box, nullptr, d);
    }));
}

}  // namespace
