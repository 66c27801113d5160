// The fake driver's arrays, texture and surface objects, called directly (no library): the rules it takes from
// driver 580 on an H100 (issue 14's measured facts) and the checks the unit tests rely on it for (bounds of
// region copies, resource violations). The library's own tests are opaque_array_test.cpp and texture_test.cpp.
#include <cstring>
#include <vector>

#include "test_support.hpp"

namespace {

class FakeArraysTest : public FakeDriverTest {
  protected:
    void SetUp() override {
        FakeDriverTest::SetUp();
        ASSERT_EQ(t().cuDevicePrimaryCtxRetain(&context_, 0), CUDA_SUCCESS);
        fake::set_current_context(context_);
    }
    void TearDown() override {
        fake::set_current_context(nullptr);
        EXPECT_EQ(t().cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
        FakeDriverTest::TearDown();
    }
    static cucore::driver::Table &t() { return fake::table(); }
    static CUDA_ARRAY3D_DESCRIPTOR describe(CUarray_format format, unsigned channels, size_t width, size_t height = 0,
                                            size_t depth = 0, unsigned flags = 0) {
        CUDA_ARRAY3D_DESCRIPTOR d{};
        d.Format = format;
        d.NumChannels = channels;
        d.Width = width;
        d.Height = height;
        d.Depth = depth;
        d.Flags = flags;
        return d;
    }
    // What cuArray3DCreate answers for `d` (the array, if made, destroyed again).
    static CUresult create(const CUDA_ARRAY3D_DESCRIPTOR &d) {
        CUarray a = nullptr;
        const CUresult result = t().cuArray3DCreate(&a, &d);
        if (result == CUDA_SUCCESS) {
            EXPECT_EQ(t().cuArrayDestroy(a), CUDA_SUCCESS);
        }
        return result;
    }
    CUcontext context_ = nullptr;
};

TEST_F(FakeArraysTest, ChannelCountsAndFormatsAsTheDriverTakesThem) {
    for (CUarray_format f : {CU_AD_FORMAT_UNSIGNED_INT8, CU_AD_FORMAT_SIGNED_INT16, CU_AD_FORMAT_FLOAT, CU_AD_FORMAT_HALF}) {
        for (unsigned channels : {1u, 2u, 4u}) EXPECT_EQ(create(describe(f, channels, 8, 8)), CUDA_SUCCESS);
        for (unsigned channels : {0u, 3u, 5u}) EXPECT_EQ(create(describe(f, channels, 8, 8)), CUDA_ERROR_INVALID_VALUE);
    }
    EXPECT_EQ(create(describe(CU_AD_FORMAT_UNORM_INT8X2, 2, 8, 8)), CUDA_SUCCESS);
    EXPECT_EQ(create(describe(CU_AD_FORMAT_UNORM_INT8X2, 1, 8, 8)), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(create(describe(CU_AD_FORMAT_BC6H_UF16, 3, 8, 8)), CUDA_SUCCESS);
    EXPECT_EQ(create(describe(CU_AD_FORMAT_BC6H_UF16, 4, 8, 8)), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(create(describe(CU_AD_FORMAT_UNORM_INT_101010_2, 4, 8, 8)), CUDA_SUCCESS);
    EXPECT_EQ(create(describe(CU_AD_FORMAT_UNORM_INT_101010_2, 1, 8, 8)), CUDA_ERROR_INVALID_VALUE);
    for (CUarray_format yuv : {CU_AD_FORMAT_NV12, CU_AD_FORMAT_P010, CU_AD_FORMAT_YUY2, CU_AD_FORMAT_AYUV})
        for (unsigned channels : {1u, 2u, 3u, 4u}) EXPECT_EQ(create(describe(yuv, channels, 8, 8)), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(fake::counters().arrays, 0);
}

TEST_F(FakeArraysTest, ShapesAndFlagsAsTheDriverTakesThem) {
    const CUarray_format u8 = CU_AD_FORMAT_UNSIGNED_INT8;
    EXPECT_EQ(create(describe(u8, 1, 8, 8, 6, CUDA_ARRAY3D_CUBEMAP)), CUDA_SUCCESS);
    EXPECT_EQ(create(describe(u8, 1, 8, 4, 6, CUDA_ARRAY3D_CUBEMAP)), CUDA_ERROR_INVALID_VALUE) << "not square";
    EXPECT_EQ(create(describe(u8, 1, 8, 8, 5, CUDA_ARRAY3D_CUBEMAP)), CUDA_ERROR_INVALID_VALUE) << "not 6 faces";
    EXPECT_EQ(create(describe(u8, 1, 8, 8, 12, CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_LAYERED)), CUDA_SUCCESS);
    EXPECT_EQ(create(describe(u8, 1, 8, 8, 13, CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_LAYERED)), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(create(describe(u8, 1, 8, 0, 3, CUDA_ARRAY3D_LAYERED)), CUDA_SUCCESS) << "1D layers";
    EXPECT_EQ(create(describe(u8, 1, 8, 0, 0, CUDA_ARRAY3D_LAYERED)), CUDA_ERROR_INVALID_VALUE) << "no layers";
    EXPECT_EQ(create(describe(u8, 1, 8, 0, 3)), CUDA_ERROR_INVALID_VALUE) << "1D with a depth";
    EXPECT_EQ(create(describe(u8, 1, 8, 8, 0, CUDA_ARRAY3D_TEXTURE_GATHER)), CUDA_SUCCESS);
    for (const CUDA_ARRAY3D_DESCRIPTOR &d : {describe(u8, 1, 8, 0, 0, CUDA_ARRAY3D_TEXTURE_GATHER),
                                             describe(u8, 1, 8, 8, 2, CUDA_ARRAY3D_TEXTURE_GATHER),
                                             describe(u8, 1, 8, 8, 2, CUDA_ARRAY3D_TEXTURE_GATHER | CUDA_ARRAY3D_LAYERED)})
        EXPECT_EQ(create(d), CUDA_ERROR_INVALID_VALUE) << "gather is 2D only";
    EXPECT_EQ(create(describe(CU_AD_FORMAT_BC1_UNORM, 4, 8, 8, 2)), CUDA_SUCCESS) << "BC in 3D";
    EXPECT_EQ(create(describe(CU_AD_FORMAT_BC1_UNORM, 4, 8)), CUDA_ERROR_INVALID_VALUE) << "BC in 1D";
    EXPECT_EQ(create(describe(CU_AD_FORMAT_BC1_UNORM, 4, 8, 8, 0, CUDA_ARRAY3D_SURFACE_LDST)), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(create(describe(CU_AD_FORMAT_FLOAT, 1, 8, 8, 0, CUDA_ARRAY3D_DEPTH_TEXTURE)), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(create(describe(CU_AD_FORMAT_SIGNED_INT32, 1, 8, 8, 0, CUDA_ARRAY3D_DEPTH_TEXTURE)), CUDA_SUCCESS);
    EXPECT_EQ(create(describe(u8, 1, 8, 8, 0, 0x200)), CUDA_ERROR_INVALID_VALUE) << "an unknown flag";
    EXPECT_EQ(create(describe(u8, 1, 64, 64, 0, CUDA_ARRAY3D_SPARSE)), CUDA_SUCCESS);
    fake::set_attribute(CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED, 0, 0);
    EXPECT_EQ(create(describe(u8, 1, 64, 64, 0, CUDA_ARRAY3D_SPARSE)), CUDA_ERROR_NOT_SUPPORTED);
    // Limits: an H100's, and the device's own where a test changes them.
    EXPECT_EQ(create(describe(u8, 1, 131072)), CUDA_SUCCESS);
    EXPECT_EQ(create(describe(u8, 1, 131073)), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(create(describe(u8, 1, 1, 1, 32768)), CUDA_SUCCESS) << "the alternate 3D limits";
    EXPECT_EQ(create(describe(u8, 1, 32769, 1, 0, CUDA_ARRAY3D_TEXTURE_GATHER)), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(create(describe(u8, 1, 32769, 0, 0, CUDA_ARRAY3D_SURFACE_LDST)), CUDA_ERROR_INVALID_VALUE);
    fake::set_attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH, 0, 100);
    EXPECT_EQ(create(describe(u8, 1, 101, 1)), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(create(describe(u8, 1, 16384, 16384, 16384, 0)), CUDA_ERROR_OUT_OF_MEMORY) << "4 TiB";
    // No context: the driver's answer.
    fake::set_current_context(nullptr);
    EXPECT_EQ(create(describe(u8, 1, 8)), CUDA_ERROR_INVALID_CONTEXT);
}

TEST_F(FakeArraysTest, DescriptorsComeBackAsCreatedAndLevelsHalve) {
    const CUDA_ARRAY3D_DESCRIPTOR layered_cubemap =
        describe(CU_AD_FORMAT_HALF, 4, 16, 16, 12, CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST);
    CUarray a = nullptr;
    ASSERT_EQ(t().cuArray3DCreate(&a, &layered_cubemap), CUDA_SUCCESS);
    CUDA_ARRAY3D_DESCRIPTOR back{};
    ASSERT_EQ(t().cuArray3DGetDescriptor(&back, a), CUDA_SUCCESS);
    EXPECT_EQ(std::memcmp(&back, &layered_cubemap, sizeof back), 0);
    EXPECT_EQ(fake::array_bytes(a)->size(), 16u * 8 * 16 * 12) << "the packed layout";
    ASSERT_EQ(t().cuArrayDestroy(a), CUDA_SUCCESS);
    EXPECT_EQ(t().cuArrayDestroy(a), CUDA_ERROR_INVALID_HANDLE) << "destroyed";
    EXPECT_EQ(t().cuArray3DGetDescriptor(&back, a), CUDA_ERROR_INVALID_HANDLE);

    CUmipmappedArray m = nullptr;
    const CUDA_ARRAY3D_DESCRIPTOR volume = describe(CU_AD_FORMAT_FLOAT, 1, 32, 8, 4);
    EXPECT_EQ(t().cuMipmappedArrayCreate(&m, &volume, 0), CUDA_ERROR_INVALID_VALUE);
    ASSERT_EQ(t().cuMipmappedArrayCreate(&m, &volume, 99), CUDA_SUCCESS);
    EXPECT_EQ(fake::mipmapped_levels(m), 6u) << "clamped to 1 + log2(32)";
    CUarray level = nullptr;
    ASSERT_EQ(t().cuMipmappedArrayGetLevel(&level, m, 3), CUDA_SUCCESS);
    ASSERT_EQ(t().cuArray3DGetDescriptor(&back, level), CUDA_SUCCESS);
    EXPECT_EQ(back.Width, 4u);
    EXPECT_EQ(back.Height, 1u);
    EXPECT_EQ(back.Depth, 1u);
    EXPECT_EQ(t().cuMipmappedArrayGetLevel(&level, m, 6), CUDA_ERROR_INVALID_VALUE) << "past the last level";
    EXPECT_EQ(t().cuArrayDestroy(level), CUDA_ERROR_INVALID_HANDLE) << "a level goes with its mipmapped array";
    ASSERT_EQ(t().cuMipmappedArrayDestroy(m), CUDA_SUCCESS);
    EXPECT_EQ(t().cuArray3DGetDescriptor(&back, level), CUDA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(fake::counters().mipmapped_arrays, 0);
}

TEST_F(FakeArraysTest, RegionCopiesMoveRowsOfBlocksWithinBounds) {
    // BC1 12 x 8: 3 x 2 blocks of 8 bytes, rows of 24 bytes.
    const CUDA_ARRAY3D_DESCRIPTOR d = describe(CU_AD_FORMAT_BC1_UNORM, 4, 12, 8);
    CUarray a = nullptr;
    ASSERT_EQ(t().cuArray3DCreate(&a, &d), CUDA_SUCCESS);
    std::vector<unsigned char> host(16);
    for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<unsigned char>(i + 1);
    CUDA_MEMCPY3D c{};
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = host.data();
    c.srcPitch = 16;
    c.srcHeight = 1;
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    c.dstArray = a;
    c.dstXInBytes = 8;  // block column 1
    c.dstY = 1;         // block row 1
    c.WidthInBytes = 16;
    c.Height = 1;
    c.Depth = 1;
    ASSERT_EQ(t().cuMemcpy3DAsync(&c, nullptr), CUDA_SUCCESS);
    const std::vector<unsigned char> &bytes = *fake::array_bytes(a);
    EXPECT_EQ(std::memcmp(&bytes[24 + 8], host.data(), 16), 0);
    EXPECT_EQ(bytes[24 + 7], fake::kFreshByte);
    CUDA_MEMCPY3D bad = c;
    bad.dstXInBytes = 9;  // not a whole block
    EXPECT_EQ(t().cuMemcpy3DAsync(&bad, nullptr), CUDA_ERROR_INVALID_VALUE);
    bad = c;
    bad.dstY = 2;  // past the rows of blocks
    EXPECT_EQ(t().cuMemcpy3DAsync(&bad, nullptr), CUDA_ERROR_INVALID_VALUE);
    bad = c;
    bad.WidthInBytes = 24;  // past the row
    bad.srcPitch = 24;
    EXPECT_EQ(t().cuMemcpy3DAsync(&bad, nullptr), CUDA_ERROR_INVALID_VALUE);
    bad = c;
    bad.Depth = 2;
    EXPECT_EQ(t().cuMemcpy3DAsync(&bad, nullptr), CUDA_ERROR_INVALID_VALUE) << "one slice";
    ASSERT_EQ(t().cuArrayDestroy(a), CUDA_SUCCESS);
    EXPECT_EQ(t().cuMemcpy3DAsync(&c, nullptr), CUDA_ERROR_INVALID_VALUE) << "a destroyed array";
}

TEST_F(FakeArraysTest, TextureAndSurfaceObjectsAreRecordedAndDestroysUnderThemCounted) {
    const CUDA_ARRAY3D_DESCRIPTOR d = describe(CU_AD_FORMAT_FLOAT, 1, 8, 8);  // no SURFACE_LDST: taken anyway
    CUarray a = nullptr;
    ASSERT_EQ(t().cuArray3DCreate(&a, &d), CUDA_SUCCESS);
    CUDA_RESOURCE_DESC r{};
    r.resType = CU_RESOURCE_TYPE_ARRAY;
    r.res.array.hArray = a;
    CUDA_TEXTURE_DESC td{};
    td.addressMode[0] = CU_TR_ADDRESS_MODE_MIRROR;
    td.filterMode = CU_TR_FILTER_MODE_LINEAR;
    td.borderColor[2] = 0.5f;
    CUtexObject texture = 0;
    ASSERT_EQ(t().cuTexObjectCreate(&texture, &r, &td, nullptr), CUDA_SUCCESS);
    CUsurfObject surface = 0;
    ASSERT_EQ(t().cuSurfObjectCreate(&surface, &r), CUDA_SUCCESS);
    EXPECT_NE(texture, surface);
    fake::TextureRecord record;
    ASSERT_TRUE(fake::texture_record(texture, record));
    EXPECT_EQ(record.resource.res.array.hArray, a);
    EXPECT_EQ(record.texture.addressMode[0], CU_TR_ADDRESS_MODE_MIRROR);
    EXPECT_EQ(record.texture.borderColor[2], 0.5f);
    EXPECT_EQ(record.context, context_);
    EXPECT_FALSE(fake::texture_record(surface, record)) << "not a texture";
    EXPECT_EQ(t().cuTexObjectDestroy(surface), CUDA_ERROR_INVALID_VALUE);
    // Integers read as integers cannot be filtered; sRGB formats need the sRGB flag.
    const CUDA_ARRAY3D_DESCRIPTOR ints = describe(CU_AD_FORMAT_SIGNED_INT32, 1, 8, 8);
    CUarray ia = nullptr;
    ASSERT_EQ(t().cuArray3DCreate(&ia, &ints), CUDA_SUCCESS);
    CUDA_RESOURCE_DESC ir = r;
    ir.res.array.hArray = ia;
    td.flags = CU_TRSF_READ_AS_INTEGER;
    CUtexObject refused = 0;
    EXPECT_EQ(t().cuTexObjectCreate(&refused, &ir, &td, nullptr), CUDA_ERROR_INVALID_VALUE);
    // The driver lets an array go under a texture object (measured): the fake counts it.
    ASSERT_EQ(t().cuArrayDestroy(a), CUDA_SUCCESS);
    EXPECT_EQ(fake::resource_violations(), 1);
    EXPECT_EQ(t().cuTexObjectCreate(&refused, &r, &td, nullptr), CUDA_ERROR_INVALID_HANDLE) << "a destroyed array";
    ASSERT_EQ(t().cuTexObjectDestroy(texture), CUDA_SUCCESS);
    ASSERT_EQ(t().cuSurfObjectDestroy(surface), CUDA_SUCCESS);
    EXPECT_EQ(t().cuSurfObjectDestroy(surface), CUDA_ERROR_INVALID_VALUE) << "destroyed";
    ASSERT_EQ(t().cuArrayDestroy(ia), CUDA_SUCCESS);
    fake::install(2);  // forgets the violation this test provoked (primary-context retains are kept)
}

TEST_F(FakeArraysTest, LinearTexturesNeedAlignedLiveMemory) {
    CUmemoryPool pool = nullptr;
    ASSERT_EQ(t().cuDeviceGetMemPool(&pool, 0), CUDA_SUCCESS);
    CUdeviceptr memory = 0;
    ASSERT_EQ(t().cuMemAllocFromPoolAsync(&memory, 4096, pool, nullptr), CUDA_SUCCESS);
    EXPECT_EQ(memory % fake::kTextureAlignment, 0u) << "allocations are texture-aligned";
    CUDA_RESOURCE_DESC r{};
    r.resType = CU_RESOURCE_TYPE_LINEAR;
    r.res.linear.devPtr = memory;
    r.res.linear.format = CU_AD_FORMAT_FLOAT;
    r.res.linear.numChannels = 1;
    r.res.linear.sizeInBytes = 4096;
    CUDA_TEXTURE_DESC td{};
    CUtexObject texture = 0;
    ASSERT_EQ(t().cuTexObjectCreate(&texture, &r, &td, nullptr), CUDA_SUCCESS);
    CUDA_RESOURCE_DESC bad = r;
    bad.res.linear.devPtr = memory + 256;  // off the 512-byte alignment
    bad.res.linear.sizeInBytes = 1024;
    CUtexObject refused = 0;
    EXPECT_EQ(t().cuTexObjectCreate(&refused, &bad, &td, nullptr), CUDA_ERROR_INVALID_VALUE);
    bad = r;
    bad.res.linear.sizeInBytes = 4100;  // past the allocation
    EXPECT_EQ(t().cuTexObjectCreate(&refused, &bad, &td, nullptr), CUDA_ERROR_INVALID_VALUE);
    ASSERT_EQ(t().cuTexObjectDestroy(texture), CUDA_SUCCESS);
    ASSERT_EQ(t().cuMemFreeAsync(memory, nullptr), CUDA_SUCCESS);
    EXPECT_EQ(fake::resource_violations(), 0) << "freed after its texture";
}

}  // namespace
