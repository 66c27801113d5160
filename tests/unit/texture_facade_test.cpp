// The C++ façade of texture and surface objects (texture.hpp) against the fake
// driver: TextureObjectOptions' conversion field by field, ResourceDescriptor's
// named constructors (and that it holds its resource), what the driver's
// cuTexObjectCreate and cuSurfObjectCreate received for every resource kind,
// launch() passing TextureObject and SurfaceObject as their 64-bit handles,
// lifetimes in any release order, close, and errors thrown with the C status.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "memory_facade_support.hpp"

namespace {

class TextureFacadeTest : public MemoryFacadeFixture {
  protected:
    cucore::OpaqueArray array_2d(std::uint32_t flags = 0) const {
        cucore::OpaqueArrayOptions o;
        o.format = CUCORE_ARRAY_FORMAT_FLOAT32;
        o.num_channels = 1;
        o.width = 8;
        o.height = 4;
        o.flags = flags;
        return dev_.create_opaque_array(o);
    }
    // A view of `size` bytes of a fresh buffer whose address meets the texture alignment.
    cucore::Buffer aligned(std::uint64_t size, std::uint64_t misalign = 0) const {
        const cucore::Buffer backing = dev_.allocate(size + 2 * fake::kTextureAlignment, s_);
        const std::uint64_t a = backing.address();
        const std::uint64_t offset = (fake::kTextureAlignment - a % fake::kTextureAlignment) % fake::kTextureAlignment;
        return backing.view(offset + misalign, size);
    }
    static fake::TextureRecord record(const cucore::TextureObject &t) {
        fake::TextureRecord r;
        EXPECT_TRUE(fake::texture_record(static_cast<CUtexObject>(t.handle()), r));
        return r;
    }
};

TEST_F(TextureFacadeTest, OptionsConvertFieldByField) {
    const cucore_texture_object_options_t init = CUCORE_TEXTURE_OBJECT_OPTIONS_INIT;
    const cucore_texture_object_options_t dflt = cucore::TextureObjectOptions{}.to_c();
    EXPECT_EQ(std::memcmp(&init, &dflt, sizeof init), 0) << "the defaults are the C *_INIT macro";
    cucore::TextureObjectOptions o;
    o.address_mode = {CUCORE_ADDRESS_MODE_WRAP, CUCORE_ADDRESS_MODE_MIRROR, CUCORE_ADDRESS_MODE_BORDER};
    o.filter_mode = CUCORE_FILTER_MODE_LINEAR;
    o.read_mode = CUCORE_READ_MODE_NORMALIZED_FLOAT;
    o.normalized_coords = true;
    o.srgb = true;
    o.disable_trilinear_optimization = true;
    o.seamless_cubemap = true;
    o.max_anisotropy = 8;
    o.mipmap_filter_mode = CUCORE_FILTER_MODE_LINEAR;
    o.mipmap_level_bias = 0.25f;
    o.min_mipmap_level_clamp = 1.5f;
    o.max_mipmap_level_clamp = 6.0f;
    o.border_color = {0.1f, 0.2f, 0.3f, 0.4f};
    const cucore_texture_object_options_t c = o.to_c();
    EXPECT_EQ(c.struct_size, sizeof c);
    EXPECT_EQ(c.address_mode[0], CUCORE_ADDRESS_MODE_WRAP);
    EXPECT_EQ(c.address_mode[1], CUCORE_ADDRESS_MODE_MIRROR);
    EXPECT_EQ(c.address_mode[2], CUCORE_ADDRESS_MODE_BORDER);
    EXPECT_EQ(c.filter_mode, CUCORE_FILTER_MODE_LINEAR);
    EXPECT_EQ(c.read_mode, CUCORE_READ_MODE_NORMALIZED_FLOAT);
    EXPECT_EQ(c.normalized_coords, 1u);
    EXPECT_EQ(c.srgb, 1u);
    EXPECT_EQ(c.disable_trilinear_optimization, 1u);
    EXPECT_EQ(c.seamless_cubemap, 1u);
    EXPECT_EQ(c.max_anisotropy, 8u);
    EXPECT_EQ(c.mipmap_filter_mode, CUCORE_FILTER_MODE_LINEAR);
    EXPECT_EQ(c.mipmap_level_bias, 0.25f);
    EXPECT_EQ(c.min_mipmap_level_clamp, 1.5f);
    EXPECT_EQ(c.max_mipmap_level_clamp, 6.0f);
    EXPECT_EQ(c.border_color[0], 0.1f);
    EXPECT_EQ(c.border_color[3], 0.4f);
}

// The named constructors fill the fields of their kind and hold the resource.
TEST_F(TextureFacadeTest, ResourceDescriptorsHoldTheirResource) {
    const std::size_t arrays = live(CUCORE_OBJECT_OPAQUE_ARRAY);
    cucore::ResourceDescriptor r = cucore::ResourceDescriptor::from_opaque_array(array_2d());
    EXPECT_EQ(live(CUCORE_OBJECT_OPAQUE_ARRAY), arrays + 1) << "the descriptor holds the temporary array";
    EXPECT_EQ(r.kind(), CUCORE_RESOURCE_KIND_OPAQUE_ARRAY);
    const cucore_resource_descriptor_t &c = r.to_c();
    EXPECT_EQ(c.struct_size, sizeof c);
    EXPECT_EQ(c.kind, CUCORE_RESOURCE_KIND_OPAQUE_ARRAY);
    EXPECT_EQ(c.array, r.opaque_array().get());
    EXPECT_NE(c.array, nullptr);
    EXPECT_EQ(c.mipmapped_array, nullptr);
    EXPECT_EQ(c.buffer, nullptr);
    // Copies share the resource; a moved-from descriptor names nothing.
    cucore::ResourceDescriptor copy = r;
    EXPECT_EQ(copy.to_c().array, c.array);
    cucore::ResourceDescriptor moved = std::move(copy);
    EXPECT_EQ(moved.to_c().array, c.array);
    EXPECT_EQ(copy.to_c().array, nullptr); // NOLINT(bugprone-use-after-move): moved-from is empty by contract
    r = cucore::ResourceDescriptor();
    moved = cucore::ResourceDescriptor();
    EXPECT_EQ(live(CUCORE_OBJECT_OPAQUE_ARRAY), arrays) << "the last descriptor let go of the array";

    cucore::OpaqueArrayOptions mo;
    mo.format = CUCORE_ARRAY_FORMAT_UINT8;
    mo.num_channels = 4;
    mo.width = 16;
    mo.height = 16;
    const cucore::MipmappedArray m = dev_.create_mipmapped_array(mo, 2);
    const cucore::ResourceDescriptor rm = cucore::ResourceDescriptor::from_mipmapped_array(m);
    EXPECT_EQ(rm.kind(), CUCORE_RESOURCE_KIND_MIPMAPPED_ARRAY);
    EXPECT_EQ(rm.to_c().mipmapped_array, m.get());
    EXPECT_EQ(rm.mipmapped_array(), m);
    const cucore::Buffer b = dev_.allocate(4096, s_);
    const cucore::ResourceDescriptor rl = cucore::ResourceDescriptor::from_linear(b, CUCORE_ARRAY_FORMAT_INT16, 2, 1024);
    EXPECT_EQ(rl.to_c().kind, CUCORE_RESOURCE_KIND_LINEAR);
    EXPECT_EQ(rl.to_c().buffer, b.get());
    EXPECT_EQ(rl.to_c().format, CUCORE_ARRAY_FORMAT_INT16);
    EXPECT_EQ(rl.to_c().num_channels, 2u);
    EXPECT_EQ(rl.to_c().size_bytes, 1024u);
    EXPECT_EQ(rl.to_c().width, 0u);
    EXPECT_EQ(rl.buffer(), b);
    const cucore::ResourceDescriptor rp =
        cucore::ResourceDescriptor::from_pitch2d(b, CUCORE_ARRAY_FORMAT_FLOAT16, 4, 10, 20, 96);
    EXPECT_EQ(rp.to_c().kind, CUCORE_RESOURCE_KIND_PITCH_2D);
    EXPECT_EQ(rp.to_c().format, CUCORE_ARRAY_FORMAT_FLOAT16);
    EXPECT_EQ(rp.to_c().num_channels, 4u);
    EXPECT_EQ(rp.to_c().width, 10u);
    EXPECT_EQ(rp.to_c().height, 20u);
    EXPECT_EQ(rp.to_c().pitch_bytes, 96u);
    EXPECT_EQ(rp.to_c().size_bytes, 0u);
    // An empty descriptor is refused.
    EXPECT_THROWS_STATUS(cucore::TextureObject::create(cucore::ResourceDescriptor()), CUCORE_ERROR_INVALID_ARGUMENT);
}

// What cuTexObjectCreate received for each resource kind and the options.
TEST_F(TextureFacadeTest, TexturesReachTheDriverAsDescribed) {
    const cucore::OpaqueArray a = array_2d();
    cucore::TextureObjectOptions o;
    o.address_mode = {CUCORE_ADDRESS_MODE_WRAP, CUCORE_ADDRESS_MODE_MIRROR, CUCORE_ADDRESS_MODE_BORDER};
    o.filter_mode = CUCORE_FILTER_MODE_LINEAR;
    o.normalized_coords = true;
    o.max_anisotropy = 4;
    o.border_color = {1.0f, 2.0f, 3.0f, 4.0f};
    o.max_mipmap_level_clamp = 3.0f;
    const cucore::TextureObject t = dev_.create_texture_object(cucore::ResourceDescriptor::from_opaque_array(a), o);
    const fake::TextureRecord r = record(t);
    EXPECT_EQ(r.resource.resType, CU_RESOURCE_TYPE_ARRAY);
    EXPECT_EQ(static_cast<void *>(r.resource.res.array.hArray), a.handle());
    EXPECT_EQ(r.texture.addressMode[0], CU_TR_ADDRESS_MODE_WRAP);
    EXPECT_EQ(r.texture.addressMode[1], CU_TR_ADDRESS_MODE_MIRROR);
    EXPECT_EQ(r.texture.addressMode[2], CU_TR_ADDRESS_MODE_BORDER);
    EXPECT_EQ(r.texture.filterMode, CU_TR_FILTER_MODE_LINEAR);
    EXPECT_EQ(r.texture.flags, static_cast<unsigned>(CU_TRSF_NORMALIZED_COORDINATES));
    EXPECT_EQ(r.texture.maxAnisotropy, 4u);
    EXPECT_EQ(r.texture.borderColor[2], 3.0f);
    EXPECT_EQ(r.texture.maxMipmapLevelClamp, 3.0f);
    EXPECT_FALSE(r.has_view);
    // Defaults: clamp everywhere, point; the static factory and a device given.
    const cucore::TextureObject d = cucore::TextureObject::create(dev_, cucore::ResourceDescriptor::from_opaque_array(a));
    const fake::TextureRecord rd = record(d);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(rd.texture.addressMode[i], CU_TR_ADDRESS_MODE_CLAMP);
    EXPECT_EQ(rd.texture.filterMode, CU_TR_FILTER_MODE_POINT);
    EXPECT_EQ(rd.texture.flags, 0u);
    EXPECT_NE(d.handle(), t.handle());
    // Another device than the array's.
    EXPECT_THROWS_STATUS(dev1_.create_texture_object(cucore::ResourceDescriptor::from_opaque_array(a)),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    // Integers read as integers cannot be filtered.
    cucore::OpaqueArrayOptions io;
    io.format = CUCORE_ARRAY_FORMAT_UINT8;
    io.width = 8;
    const cucore::OpaqueArray ints = dev_.create_opaque_array(io);
    cucore::TextureObjectOptions lin;
    lin.filter_mode = CUCORE_FILTER_MODE_LINEAR;
    EXPECT_THROWS_STATUS(cucore::TextureObject::create(cucore::ResourceDescriptor::from_opaque_array(ints), lin),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    const cucore::TextureObject as_int = cucore::TextureObject::create(cucore::ResourceDescriptor::from_opaque_array(ints));
    EXPECT_EQ(record(as_int).texture.flags, static_cast<unsigned>(CU_TRSF_READ_AS_INTEGER));
    lin.read_mode = CUCORE_READ_MODE_NORMALIZED_FLOAT;
    const cucore::TextureObject as_float =
        cucore::TextureObject::create(cucore::ResourceDescriptor::from_opaque_array(ints), lin);
    EXPECT_EQ(record(as_float).texture.flags, 0u);

    // Mipmapped.
    cucore::OpaqueArrayOptions mo;
    mo.format = CUCORE_ARRAY_FORMAT_FLOAT32;
    mo.width = 16;
    mo.height = 16;
    const cucore::MipmappedArray m = dev_.create_mipmapped_array(mo, 3);
    const cucore::TextureObject tm = dev_.create_texture_object(cucore::ResourceDescriptor::from_mipmapped_array(m));
    const fake::TextureRecord rm = record(tm);
    EXPECT_EQ(rm.resource.resType, CU_RESOURCE_TYPE_MIPMAPPED_ARRAY);
    EXPECT_EQ(static_cast<void *>(rm.resource.res.mipmap.hMipmappedArray), m.handle());
    // Linear and pitched memory.
    const cucore::Buffer b = aligned(8192);
    const cucore::TextureObject tl =
        dev_.create_texture_object(cucore::ResourceDescriptor::from_linear(b, CUCORE_ARRAY_FORMAT_FLOAT32, 4, 4096));
    const fake::TextureRecord rl = record(tl);
    EXPECT_EQ(rl.resource.resType, CU_RESOURCE_TYPE_LINEAR);
    EXPECT_EQ(rl.resource.res.linear.devPtr, static_cast<CUdeviceptr>(b.address()));
    EXPECT_EQ(rl.resource.res.linear.format, CU_AD_FORMAT_FLOAT);
    EXPECT_EQ(rl.resource.res.linear.numChannels, 4u);
    EXPECT_EQ(rl.resource.res.linear.sizeInBytes, 4096u);
    const cucore::TextureObject whole =
        dev_.create_texture_object(cucore::ResourceDescriptor::from_linear(b, CUCORE_ARRAY_FORMAT_UINT32));
    EXPECT_EQ(record(whole).resource.res.linear.sizeInBytes, 8192u) << "size 0: the whole buffer";
    EXPECT_EQ(record(whole).resource.res.linear.numChannels, 1u);
    const std::uint64_t pitch = 2 * fake::kTexturePitchAlignment;
    const cucore::TextureObject tp = dev_.create_texture_object(
        cucore::ResourceDescriptor::from_pitch2d(b, CUCORE_ARRAY_FORMAT_UINT8, 4, 12, 30, pitch));
    const fake::TextureRecord rp = record(tp);
    EXPECT_EQ(rp.resource.resType, CU_RESOURCE_TYPE_PITCH2D);
    EXPECT_EQ(rp.resource.res.pitch2D.devPtr, static_cast<CUdeviceptr>(b.address()));
    EXPECT_EQ(rp.resource.res.pitch2D.numChannels, 4u);
    EXPECT_EQ(rp.resource.res.pitch2D.width, 12u);
    EXPECT_EQ(rp.resource.res.pitch2D.height, 30u);
    EXPECT_EQ(rp.resource.res.pitch2D.pitchInBytes, pitch);
    // Checked before the driver: alignment, pitch, sizes.
    EXPECT_THROWS_STATUS(dev_.create_texture_object(cucore::ResourceDescriptor::from_linear(
                             aligned(1024, fake::kTextureAlignment / 2), CUCORE_ARRAY_FORMAT_FLOAT32)),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(dev_.create_texture_object(cucore::ResourceDescriptor::from_pitch2d(
                             b, CUCORE_ARRAY_FORMAT_UINT8, 4, 12, 30, pitch + 4)),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(dev_.create_texture_object(
                             cucore::ResourceDescriptor::from_linear(b, CUCORE_ARRAY_FORMAT_FLOAT32, 4, 8200)),
                         CUCORE_ERROR_INVALID_ARGUMENT);
}

TEST_F(TextureFacadeTest, SurfacesNeedLoadStoreArrays) {
    const cucore::OpaqueArray ls = array_2d(CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE);
    const cucore::SurfaceObject s = dev_.create_surface_object(cucore::ResourceDescriptor::from_opaque_array(ls));
    fake::SurfaceRecord r;
    ASSERT_TRUE(fake::surface_record(static_cast<CUsurfObject>(s.handle()), r));
    EXPECT_EQ(r.resource.resType, CU_RESOURCE_TYPE_ARRAY);
    EXPECT_EQ(static_cast<void *>(r.resource.res.array.hArray), ls.handle());
    const cucore::SurfaceObject s2 = cucore::SurfaceObject::create(cucore::ResourceDescriptor::from_opaque_array(ls));
    const cucore::SurfaceObject s3 = cucore::SurfaceObject::create(dev_, cucore::ResourceDescriptor::from_opaque_array(ls));
    EXPECT_NE(s2.handle(), s3.handle());
    try {
        (void)cucore::SurfaceObject::create(cucore::ResourceDescriptor::from_opaque_array(array_2d()));
        ADD_FAILURE() << "a surface over an array without surface load/store";
    } catch (const cucore::Error &e) {
        EXPECT_EQ(e.status(), CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_NE(std::string(e.what()).find("SURFACE_LOAD_STORE"), std::string::npos) << e.what();
    }
    const cucore::Buffer b = aligned(1024);
    EXPECT_THROWS_STATUS(cucore::SurfaceObject::create(cucore::ResourceDescriptor::from_linear(b, CUCORE_ARRAY_FORMAT_UINT32)),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    s.close();
    s.close();
    EXPECT_THROWS_STATUS(s.handle(), CUCORE_ERROR_INVALID_STATE);
    EXPECT_THROWS_STATUS(cucore::SurfaceObject().handle(), CUCORE_ERROR_INVALID_HANDLE);
}

// launch() passes texture and surface objects as their 64-bit handles.
TEST_F(TextureFacadeTest, LaunchPassesTheHandles) {
    const cucore::OpaqueArray ls = array_2d(CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE);
    const cucore::TextureObject t = cucore::TextureObject::create(cucore::ResourceDescriptor::from_opaque_array(ls));
    const cucore::SurfaceObject s = cucore::SurfaceObject::create(cucore::ResourceDescriptor::from_opaque_array(ls));
    fake::KernelSpec spec;
    spec.name = "sample";
    spec.param_sizes = {8, 8, 4};
    const cucore::Kernel k = cucore::Kernel::from_handle(fake::make_kernel(spec));
    cucore::launch(s_, cucore::LaunchConfig(2, 32), k, t, s, 7u);
    const std::vector<fake::LaunchRecord> launches = fake::launches();
    ASSERT_EQ(launches.size(), 1u);
    ASSERT_EQ(launches[0].args.size(), 3u);
    std::uint64_t th = 0, sh = 0;
    ASSERT_EQ(launches[0].args[0].size(), 8u);
    ASSERT_EQ(launches[0].args[1].size(), 8u);
    std::memcpy(&th, launches[0].args[0].data(), 8);
    std::memcpy(&sh, launches[0].args[1].data(), 8);
    EXPECT_EQ(th, t.handle());
    EXPECT_EQ(sh, s.handle());
    // A kernel whose first parameter is 4 bytes refuses a texture object.
    spec.param_sizes = {4};
    const cucore::Kernel narrow = cucore::Kernel::from_handle(fake::make_kernel(spec));
    EXPECT_THROWS_STATUS(cucore::launch(s_, cucore::LaunchConfig(1, 1), narrow, t), CUCORE_ERROR_INVALID_ARGUMENT);
    // A closed texture object cannot be passed.
    t.close();
    EXPECT_THROWS_STATUS(cucore::launch(s_, cucore::LaunchConfig(2, 32), k, t, s, 7u), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(fake::launches().size(), 1u);
}

// Release order never matters: textures hold their arrays and buffers.
TEST_F(TextureFacadeTest, TexturesHoldTheirResources) {
    cucore::TextureObject t;
    cucore::TextureObject tl;
    {
        const cucore::OpaqueArray a = array_2d();
        t = cucore::TextureObject::create(cucore::ResourceDescriptor::from_opaque_array(a));
        a.close(); // let go of the array's share: the texture keeps the storage
        const cucore::Buffer b = aligned(4096);
        tl = cucore::TextureObject::create(cucore::ResourceDescriptor::from_linear(b, CUCORE_ARRAY_FORMAT_FLOAT32));
        b.close();
    }
    EXPECT_EQ(fake::counters().arrays, 1) << "the texture holds the closed and released array";
    const auto handle = static_cast<CUtexObject>(t.handle());
    fake::TextureRecord r;
    ASSERT_TRUE(fake::texture_record(handle, r));
    EXPECT_FALSE(r.destroyed);
    t.close();
    ASSERT_TRUE(fake::texture_record(handle, r));
    EXPECT_TRUE(r.destroyed) << "close destroyed the driver's texture object";
    EXPECT_EQ(fake::counters().arrays, 0) << "closing the texture let go of the array";
    EXPECT_EQ(fake::counters().texture_objects, 1);
    EXPECT_THROWS_STATUS(t.handle(), CUCORE_ERROR_INVALID_STATE);
    t.close(); // idempotent
    tl.reset();
    EXPECT_EQ(fake::counters().texture_objects, 0);
    // The fixture checks that no array or memory went while a texture read it (resource_violations).
}

} // namespace
