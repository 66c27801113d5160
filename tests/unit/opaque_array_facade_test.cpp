// The C++ façade of arrays and mipmapped arrays (opaque_array.hpp) against
// the fake driver: the options' conversion, the description the driver was
// given, whole-array copies with containers, pointers, Buffers and arrays
// moving the right bytes, region copies (ArrayRegion, MemoryRegion) landing
// where the packed layout says, mipmapped levels, foreign arrays, close, and
// GL images mapped as OpaqueArray and MipmappedArray; errors thrown as
// cucore::Error with the C status.
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "memory_facade_support.hpp"

namespace {

constexpr std::uint32_t kTexture2D = 0x0DE1; // GL_TEXTURE_2D

class OpaqueArrayFacadeTest : public MemoryFacadeFixture {
  protected:
    static cucore::OpaqueArrayOptions options(cucore_array_format_t format, std::uint32_t channels,
                                              std::uint64_t width, std::uint64_t height = 0, std::uint64_t depth = 0,
                                              cucore_array_kind_t kind = CUCORE_ARRAY_KIND_PLAIN,
                                              std::uint64_t layers = 0, std::uint32_t flags = 0) {
        cucore::OpaqueArrayOptions o;
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
    static CUarray cu(const cucore::OpaqueArray &a) { return static_cast<CUarray>(a.handle()); }
    static Bytes bytes_of(const cucore::OpaqueArray &a) {
        const std::vector<unsigned char> *b = fake::array_bytes(cu(a));
        return b != nullptr ? Bytes(b->begin(), b->end()) : Bytes();
    }
};

TEST_F(OpaqueArrayFacadeTest, OptionsConvertFieldByField) {
    const cucore_opaque_array_options_t init = CUCORE_OPAQUE_ARRAY_OPTIONS_INIT;
    const cucore_opaque_array_options_t dflt = cucore::OpaqueArrayOptions{}.to_c();
    EXPECT_EQ(std::memcmp(&init, &dflt, sizeof init), 0) << "the defaults are the C *_INIT macro";
    const cucore::OpaqueArrayOptions o =
        options(CUCORE_ARRAY_FORMAT_UINT16, 2, 11, 12, 0, CUCORE_ARRAY_KIND_LAYERED, 5,
                CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE | CUCORE_ARRAY_FLAG_TEXTURE_GATHER);
    const cucore_opaque_array_options_t c = o.to_c();
    EXPECT_EQ(c.struct_size, sizeof c);
    EXPECT_EQ(c.format, CUCORE_ARRAY_FORMAT_UINT16);
    EXPECT_EQ(c.num_channels, 2u);
    EXPECT_EQ(c.kind, CUCORE_ARRAY_KIND_LAYERED);
    EXPECT_EQ(c.flags, 3u);
    EXPECT_EQ(c.reserved0, 0u);
    EXPECT_EQ(c.width, 11u);
    EXPECT_EQ(c.height, 12u);
    EXPECT_EQ(c.depth, 0u);
    EXPECT_EQ(c.layers, 5u);
}

// What the driver was asked for, and what info() and its parts answer.
TEST_F(OpaqueArrayFacadeTest, CreateDescribesTheDriverArray) {
    const cucore::OpaqueArray a = dev_.create_opaque_array(options(
        CUCORE_ARRAY_FORMAT_FLOAT32, 2, 16, 8, 0, CUCORE_ARRAY_KIND_LAYERED, 3, CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE));
    const CUDA_ARRAY3D_DESCRIPTOR d = fake::array_descriptor(cu(a));
    EXPECT_EQ(d.Width, 16u);
    EXPECT_EQ(d.Height, 8u);
    EXPECT_EQ(d.Depth, 3u);
    EXPECT_EQ(d.Format, CU_AD_FORMAT_FLOAT);
    EXPECT_EQ(d.NumChannels, 2u);
    EXPECT_EQ(d.Flags, static_cast<unsigned>(CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST));
    const cucore::OpaqueArrayInfo i = a.info();
    EXPECT_EQ(i.kind, CUCORE_ARRAY_KIND_LAYERED);
    EXPECT_EQ(i.layers, 3u);
    EXPECT_EQ(i.row_bytes, 16u * 8);
    EXPECT_EQ(i.row_count, 8u);
    EXPECT_EQ(i.slice_count, 3u);
    EXPECT_EQ(i.size_bytes, 16u * 8 * 8 * 3);
    EXPECT_EQ(i.is_owned, 1u);
    EXPECT_EQ(i.num_levels, 1u);
    EXPECT_EQ(i.device_ordinal, 0);
    EXPECT_EQ(a.format(), CUCORE_ARRAY_FORMAT_FLOAT32);
    EXPECT_EQ(a.num_channels(), 2u);
    EXPECT_EQ(a.element_size(), 8u);
    EXPECT_EQ(a.size_bytes(), i.size_bytes);
    EXPECT_TRUE(a.is_surface_load_store());
    // A cubemap on device 1 through the static factory.
    const cucore::OpaqueArray cube =
        cucore::OpaqueArray::create(dev1_, options(CUCORE_ARRAY_FORMAT_UINT8, 4, 8, 8, 0, CUCORE_ARRAY_KIND_CUBEMAP));
    const CUDA_ARRAY3D_DESCRIPTOR dc = fake::array_descriptor(cu(cube));
    EXPECT_EQ(dc.Depth, 6u);
    EXPECT_EQ(dc.Flags, static_cast<unsigned>(CUDA_ARRAY3D_CUBEMAP));
    EXPECT_EQ(cube.info().device_ordinal, 1);
    EXPECT_EQ(cube.info().slice_count, 6u);
    EXPECT_FALSE(cube.is_surface_load_store());
    // Refusals throw the C status.
    EXPECT_THROWS_STATUS(dev_.create_opaque_array(options(CUCORE_ARRAY_FORMAT_FLOAT32, 3, 8)),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(dev_.create_opaque_array(cucore::OpaqueArrayOptions{}), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(cucore::OpaqueArray().info(), CUCORE_ERROR_INVALID_HANDLE);
}

// Whole-array copies: containers, pointers, Buffers and arrays, each way.
TEST_F(OpaqueArrayFacadeTest, WholeArrayCopiesMoveThePackedBytes) {
    const cucore::OpaqueArray a = dev_.create_opaque_array(options(CUCORE_ARRAY_FORMAT_UINT8, 4, 10, 6));
    ASSERT_EQ(a.size_bytes(), 240u);
    const Bytes in = pattern(240, 1);
    a.copy_from(in, s_);
    s_.synchronize();
    EXPECT_EQ(bytes_of(a), in) << "copy_from(container)";
    std::array<std::uint8_t, 240> out{};
    a.copy_to(out, s_);
    s_.synchronize();
    EXPECT_EQ(Bytes(out.begin(), out.end()), in) << "copy_to(container)";
    // Pointer and size; a C array of wider elements.
    const Bytes in2 = pattern(240, 2);
    a.copy_from(in2.data(), in2.size(), s_);
    std::uint32_t words[60] = {};
    a.copy_to(words, s_);
    s_.synchronize();
    Bytes from_words(240);
    std::memcpy(from_words.data(), words, 240);
    EXPECT_EQ(from_words, in2) << "pointer in, C array out";
    // Buffers.
    const cucore::Buffer b = dev_.allocate(256, s_);
    a.copy_to(b, s_);
    const Bytes got = read(b);
    EXPECT_EQ(Bytes(got.begin(), got.begin() + 240), in2) << "copy_to(Buffer)";
    const Bytes in3 = pattern(256, 3);
    b.copy_from_host(in3, s_);
    a.copy_from(b, s_);
    s_.synchronize();
    EXPECT_EQ(bytes_of(a), Bytes(in3.begin(), in3.begin() + 240)) << "copy_from(Buffer)";
    // Arrays.
    const cucore::OpaqueArray other = dev_.create_opaque_array(options(CUCORE_ARRAY_FORMAT_UINT8, 4, 10, 6));
    other.copy_from(a, s_);
    s_.synchronize();
    EXPECT_EQ(bytes_of(other), bytes_of(a)) << "copy_from(OpaqueArray)";
    const Bytes in4 = pattern(240, 4);
    other.copy_from(in4, s_);
    other.copy_to(a, s_);
    s_.synchronize();
    EXPECT_EQ(bytes_of(a), in4) << "copy_to(OpaqueArray)";
    // Sizes: a short container, a short buffer, another layout.
    std::vector<std::uint8_t> short_host(239);
    EXPECT_THROWS_STATUS(a.copy_from(short_host, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(a.copy_to(short_host, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    const cucore::Buffer small = dev_.allocate(200, s_);
    EXPECT_THROWS_STATUS(a.copy_to(small, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    const cucore::OpaqueArray wider = dev_.create_opaque_array(options(CUCORE_ARRAY_FORMAT_UINT8, 4, 11, 6));
    EXPECT_THROWS_STATUS(a.copy_from(wider, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(bytes_of(a), in4) << "refused copies changed nothing";
}

// Region copies between host memory, buffers and arrays, through ArrayRegion and MemoryRegion.
TEST_F(OpaqueArrayFacadeTest, RegionCopiesLandWhereThePackedLayoutSays) {
    // 3 layers of 8 x 4 elements of 2 bytes: rows of 16 bytes, 4 rows a layer.
    const cucore::OpaqueArray a =
        dev_.create_opaque_array(options(CUCORE_ARRAY_FORMAT_UINT16, 1, 8, 4, 0, CUCORE_ARRAY_KIND_LAYERED, 3));
    Bytes model = pattern(16 * 4 * 3, 10);
    a.copy_from(model, s_);
    // Host -> array: 3 x 2 elements x 2 layers into (4, 1, layer 1), from rows of 10 bytes starting at byte 2.
    const Bytes host = pattern(10 * 2 * 2 + 2, 11);
    cucore::OpaqueArray::copy(cucore::ArrayRegion(a).at(4, 1, 1), cucore::MemoryRegion::host(host.data(), 10, 2).at(2),
                              cucore::Extent3D{3, 2, 2}, s_);
    for (std::size_t z = 0; z < 2; ++z)
        for (std::size_t y = 0; y < 2; ++y)
            std::memcpy(&model[((1 + z) * 4 + 1 + y) * 16 + 4 * 2], &host[(z * 2 + y) * 10 + 2], 3 * 2);
    s_.synchronize();
    EXPECT_EQ(bytes_of(a), model) << "host -> array";
    // Array -> buffer: layer 2 whole into rows of 32 bytes from byte 64.
    const cucore::Buffer b = dev_.allocate(64 + 4 * 32, s_);
    b.fill(std::uint8_t{0xEE}, s_);
    cucore::OpaqueArray::copy(cucore::MemoryRegion(b, 32, 0, 64), cucore::ArrayRegion(a).at(0, 0, 2), {8, 4, 1}, s_);
    Bytes want(64 + 4 * 32, 0xEE);
    for (std::size_t y = 0; y < 4; ++y) std::memcpy(&want[64 + y * 32], &model[(2 * 4 + y) * 16], 16);
    EXPECT_EQ(read(b), want) << "array -> buffer";
    // Array -> array: 2 x 2 x 3 from (6, 2) into a 3D array at (0, 1, 1).
    const cucore::OpaqueArray v = dev_.create_opaque_array(options(CUCORE_ARRAY_FORMAT_INT16, 1, 4, 4, 4));
    Bytes vmodel = pattern(8 * 4 * 4, 12);
    v.copy_from(vmodel, s_);
    cucore::OpaqueArray::copy(cucore::ArrayRegion(v).at(0, 1, 1), cucore::ArrayRegion(a).at(6, 2, 0), {2, 2, 3}, s_);
    for (std::size_t z = 0; z < 3; ++z)
        for (std::size_t y = 0; y < 2; ++y)
            std::memcpy(&vmodel[((1 + z) * 4 + 1 + y) * 8], &model[(z * 4 + 2 + y) * 16 + 12], 4);
    s_.synchronize();
    EXPECT_EQ(bytes_of(v), vmodel) << "array -> array";
    // The C descriptor the façade builds.
    const cucore_opaque_array_copy_t c =
        cucore::to_c(cucore::ArrayRegion(v).at(1, 2, 3), cucore::MemoryRegion(b, 48, 7, 5).at(9, 8, 6), {4, 5, 6});
    EXPECT_EQ(c.struct_size, sizeof c);
    EXPECT_EQ(c.dst_array.array, v.get());
    EXPECT_EQ(c.dst_array.x, 1u);
    EXPECT_EQ(c.dst_array.y, 2u);
    EXPECT_EQ(c.dst_array.z, 3u);
    EXPECT_EQ(c.src_array.array, nullptr);
    EXPECT_EQ(c.src_memory.buffer, b.get());
    EXPECT_EQ(c.src_memory.host, nullptr);
    EXPECT_EQ(c.src_memory.pitch, 48u);
    EXPECT_EQ(c.src_memory.height, 7u);
    EXPECT_EQ(c.src_memory.offset, 5u);
    EXPECT_EQ(c.src_memory.x, 9u);
    EXPECT_EQ(c.src_memory.y, 8u);
    EXPECT_EQ(c.src_memory.z, 6u);
    EXPECT_EQ(c.dst_memory.buffer, nullptr);
    EXPECT_EQ(c.width, 4u);
    EXPECT_EQ(c.height, 5u);
    EXPECT_EQ(c.depth, 6u);
    const cucore_opaque_array_copy_t out = cucore::to_c(cucore::MemoryRegion::host(host.data(), 0), cucore::ArrayRegion(a), {});
    EXPECT_EQ(out.src_array.array, a.get());
    EXPECT_EQ(out.dst_memory.host, host.data());
    EXPECT_EQ(out.width, 0u);
    EXPECT_EQ(out.height, 1u);
    EXPECT_EQ(out.depth, 1u);
    // Outside the array: thrown, nothing written.
    EXPECT_THROWS_STATUS(cucore::OpaqueArray::copy(cucore::ArrayRegion(a).at(6), cucore::MemoryRegion::host(host.data(), 0),
                                                   cucore::Extent3D{3, 1, 1}, s_),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(cucore::OpaqueArray::copy(cucore::ArrayRegion(a).at(0, 0, 2), cucore::MemoryRegion::host(host.data(), 0),
                                                   cucore::Extent3D{1, 1, 2}, s_),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(bytes_of(a), model);
}

TEST_F(OpaqueArrayFacadeTest, MipmappedArraysGiveTheirLevels) {
    const cucore::MipmappedArray m = dev_.create_mipmapped_array(options(CUCORE_ARRAY_FORMAT_FLOAT32, 1, 16, 8), 3);
    EXPECT_EQ(fake::mipmapped_levels(static_cast<CUmipmappedArray>(m.handle())), 3u);
    EXPECT_EQ(fake::last_mipmap_levels(), 3u);
    EXPECT_EQ(m.num_levels(), 3u);
    const cucore::OpaqueArrayInfo i = m.info();
    EXPECT_EQ(i.width, 16u);
    EXPECT_EQ(i.height, 8u);
    EXPECT_EQ(i.is_owned, 1u);
    EXPECT_EQ(i.num_levels, 3u);
    const cucore::OpaqueArray l2 = m.level(2);
    EXPECT_EQ(l2.info().width, 4u);
    EXPECT_EQ(l2.info().height, 2u);
    EXPECT_EQ(l2.info().is_owned, 0u);
    const std::vector<float> data = {1, 2, 3, 4, 5, 6, 7, 8};
    l2.copy_from(data, s_);
    std::vector<float> back(8, 0.0f);
    l2.copy_to(back, s_);
    s_.synchronize();
    EXPECT_EQ(back, data);
    EXPECT_THROWS_STATUS(m.level(3), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(dev_.create_mipmapped_array(options(CUCORE_ARRAY_FORMAT_FLOAT32, 1, 16, 8), 6),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(cucore::MipmappedArray::create(dev_, options(CUCORE_ARRAY_FORMAT_FLOAT32, 1, 16, 8), 0),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    // close: the level still works, the mipmapped array does not.
    m.close();
    m.close();
    EXPECT_THROWS_STATUS(m.info(), CUCORE_ERROR_INVALID_STATE);
    EXPECT_THROWS_STATUS(m.level(0), CUCORE_ERROR_INVALID_STATE);
    EXPECT_THROWS_STATUS(m.handle(), CUCORE_ERROR_INVALID_STATE);
    l2.copy_to(back, s_);
    s_.synchronize();
    EXPECT_EQ(back, data);
    EXPECT_EQ(fake::counters().mipmapped_arrays, 1) << "the level holds the storage";
}

// A foreign CUarray: wrapped without owning it; on_release once, at the last release.
TEST_F(OpaqueArrayFacadeTest, ForeignArraysAndOwnership) {
    const cucore::OpaqueArray owner = dev_.create_opaque_array(options(CUCORE_ARRAY_FORMAT_INT32, 2, 5, 3));
    int released = 0;
    {
        const cucore::OpaqueArray wrapped =
            cucore::OpaqueArray::from_handle(dev_, owner.handle(), [](void *n) { ++*static_cast<int *>(n); }, &released);
        EXPECT_EQ(wrapped.info().is_owned, 0u);
        EXPECT_EQ(wrapped.info().width, 5u);
        EXPECT_EQ(wrapped.element_size(), 8u);
        EXPECT_EQ(wrapped.handle(), owner.handle());
        EXPECT_NE(wrapped, owner) << "two library objects over one CUarray";
        const Bytes in = pattern(120, 20);
        wrapped.copy_from(in, s_);
        s_.synchronize();
        EXPECT_EQ(bytes_of(owner), in);
        const cucore::OpaqueArray copy = wrapped; // retain
        EXPECT_EQ(copy, wrapped);
    }
    EXPECT_EQ(released, 1);
    EXPECT_EQ(fake::counters().arrays, 1) << "wrapping destroys nothing";
    // adopt / release / borrow.
    cucore::OpaqueArray a = dev_.create_opaque_array(options(CUCORE_ARRAY_FORMAT_UINT8, 1, 4));
    cucore_opaque_array_t *raw = a.release();
    EXPECT_FALSE(a);
    cucore::OpaqueArray back = cucore::OpaqueArray::adopt(raw);
    const cucore::OpaqueArray borrowed = cucore::OpaqueArray::borrow(back.get());
    EXPECT_EQ(borrowed, back);
    // close: every other call throws INVALID_STATE; the handle stays valid.
    back.close();
    back.close();
    std::vector<std::uint8_t> v(4);
    EXPECT_THROWS_STATUS(back.info(), CUCORE_ERROR_INVALID_STATE);
    EXPECT_THROWS_STATUS(borrowed.handle(), CUCORE_ERROR_INVALID_STATE);
    EXPECT_THROWS_STATUS(back.copy_from(v, s_), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(fake::counters().arrays, 1) << "close destroyed the array at once";
    EXPECT_THROWS_STATUS(cucore::OpaqueArray::from_handle(dev_, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
}

// A GL image maps as an OpaqueArray and as a MipmappedArray of the same type as created ones.
TEST_F(OpaqueArrayFacadeTest, GlImagesMapAsArrays) {
    const cucore::GraphicsResource image = cucore::GraphicsResource::from_gl_image(dev_, 9, kTexture2D);
    {
        const cucore::OpaqueArray a = image.map_array(s_, 0, 1, cucore::GraphicsMapHint::read_only);
        EXPECT_TRUE(image.is_mapped());
        const cucore::OpaqueArrayInfo i = a.info();
        EXPECT_EQ(i.width, fake::kGlImageWidth / 2) << "mip level 1";
        EXPECT_EQ(i.format, CUCORE_ARRAY_FORMAT_UINT8);
        EXPECT_EQ(i.num_channels, 4u);
        EXPECT_EQ(i.is_owned, 0u);
        const Bytes in = pattern(static_cast<std::size_t>(i.size_bytes), 30);
        a.copy_from(in, s_);
        s_.synchronize();
        EXPECT_EQ(Bytes(fake::graphics_bytes(static_cast<CUgraphicsResource>(image.handle()), 1)->begin(),
                        fake::graphics_bytes(static_cast<CUgraphicsResource>(image.handle()), 1)->end()),
                  in);
    }
    EXPECT_FALSE(image.is_mapped()) << "the array's release unmapped";
    {
        const cucore::MipmappedArray m = image.map_mipmapped_array(s_);
        EXPECT_EQ(m.num_levels(), 2u);
        const cucore::OpaqueArray l0 = m.level(0);
        EXPECT_EQ(l0.info().width, fake::kGlImageWidth);
        image.unmap();
        EXPECT_THROWS_STATUS(l0.info(), CUCORE_ERROR_INVALID_STATE);
        EXPECT_THROWS_STATUS(m.level(1), CUCORE_ERROR_INVALID_STATE);
    }
    EXPECT_FALSE(image.is_mapped());
    image.close();
}

} // namespace
