// Shared by the unit tests of arrays and textures (opaque_array_test.cpp,
// texture_test.cpp, opaque_array_fault_injection_test.cpp): a fixture on
// device 0 with a stream and the device's default pool, which checks at the
// end that no array, mipmapped array, texture or surface object is left in
// the library (the driver's counters and resource violations are checked by
// FakeDriverTest for every test), and helpers that build options and read
// what the fake driver recorded (its arrays are host bytes in the packed
// layout, so every copy can be compared byte for byte).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memory_support.hpp"

// The options of an array: `format`, `kind`, extents in elements.
inline cucore_opaque_array_options_t array_options(cucore_array_format_t format, uint64_t width, uint64_t height = 0,
                                                   uint64_t depth = 0, cucore_array_kind_t kind = CUCORE_ARRAY_KIND_PLAIN,
                                                   uint64_t layers = 0, uint32_t num_channels = 0, uint32_t flags = 0) {
    cucore_opaque_array_options_t o = CUCORE_OPAQUE_ARRAY_OPTIONS_INIT;
    o.format = format;
    o.width = width;
    o.height = height;
    o.depth = depth;
    o.kind = kind;
    o.layers = layers;
    o.num_channels = num_channels;
    o.flags = flags;
    return o;
}

inline bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

// Whether `name` was called since the last fake::reset_calls().
inline bool driver_called(const char *name) {
    for (const std::string &call : fake::call_log())
        if (call == name) return true;
    return false;
}

class ArrayFixture : public FakeDriverTest {
  protected:
    void SetUp() override {
        FakeDriverTest::SetUp();
        for (int i = 0; i < 4; ++i) before_[i] = live(kTypes[i]);
        d_ = device(0);
        ASSERT_EQ(cucore_stream_create(d_, nullptr, &s_), CUCORE_SUCCESS) << message();
        ASSERT_EQ(cucore_device_memory_resource_get_default(d_, &pool_), CUCORE_SUCCESS) << message();
    }
    void TearDown() override {
        cucore_memory_resource_release(pool_);
        cucore_stream_release(s_);
        cucore_device_release(d_);
        for (int i = 0; i < 4; ++i)
            EXPECT_EQ(live(kTypes[i]), before_[i]) << "leaked " << cucore_object_type_name(kTypes[i]) << " objects";
        FakeDriverTest::TearDown();
    }

    // Creates an array (expecting success); NULL on failure.
    cucore_opaque_array_t *create(const cucore_opaque_array_options_t &o, cucore_device_t *on = nullptr) {
        cucore_opaque_array_t *a = nullptr;
        EXPECT_EQ(cucore_opaque_array_create(on ? on : d_, &o, &a), CUCORE_SUCCESS) << message();
        return a;
    }
    cucore_mipmapped_array_t *create_mipmapped(const cucore_opaque_array_options_t &o, uint32_t levels) {
        cucore_mipmapped_array_t *m = nullptr;
        EXPECT_EQ(cucore_mipmapped_array_create(d_, &o, levels, &m), CUCORE_SUCCESS) << message();
        return m;
    }
    static cucore_opaque_array_info_t info(const cucore_opaque_array_t *a) {
        cucore_opaque_array_info_t i = CUCORE_OPAQUE_ARRAY_INFO_INIT;
        EXPECT_EQ(cucore_opaque_array_info(a, &i), CUCORE_SUCCESS) << message();
        return i;
    }
    static cucore_opaque_array_info_t info(const cucore_mipmapped_array_t *m) {
        cucore_opaque_array_info_t i = CUCORE_OPAQUE_ARRAY_INFO_INIT;
        EXPECT_EQ(cucore_mipmapped_array_info(m, &i), CUCORE_SUCCESS) << message();
        return i;
    }
    static CUarray raw(const cucore_opaque_array_t *a) {
        void *handle = nullptr;
        EXPECT_EQ(cucore_opaque_array_handle(a, &handle), CUCORE_SUCCESS) << message();
        return static_cast<CUarray>(handle);
    }
    static CUmipmappedArray raw(const cucore_mipmapped_array_t *m) {
        void *handle = nullptr;
        EXPECT_EQ(cucore_mipmapped_array_handle(m, &handle), CUCORE_SUCCESS) << message();
        return static_cast<CUmipmappedArray>(handle);
    }
    // The fake's bytes of an array (its packed layout).
    static Bytes stored(const cucore_opaque_array_t *a) {
        std::vector<unsigned char> *bytes = fake::array_bytes(raw(a));
        EXPECT_NE(bytes, nullptr);
        return bytes ? Bytes(bytes->begin(), bytes->end()) : Bytes{};
    }
    static void store(const cucore_opaque_array_t *a, const Bytes &data) {
        std::vector<unsigned char> *bytes = fake::array_bytes(raw(a));
        ASSERT_NE(bytes, nullptr);
        ASSERT_EQ(bytes->size(), data.size());
        std::copy(data.begin(), data.end(), bytes->begin());
    }
    cucore_buffer_t *allocate(uint64_t size) {
        cucore_buffer_t *b = nullptr;
        EXPECT_EQ(cucore_memory_resource_allocate(pool_, size, s_, &b), CUCORE_SUCCESS) << message();
        return b;
    }
    static uint64_t address_of(const cucore_buffer_t *b) {
        uint64_t a = 0;
        EXPECT_EQ(cucore_buffer_address(b, &a), CUCORE_SUCCESS);
        return a;
    }
    Bytes read(cucore_buffer_t *b, uint64_t size) {
        Bytes out(size, 0xEE);
        EXPECT_EQ(cucore_buffer_copy_to_host(b, 0, out.data(), size, s_), CUCORE_SUCCESS) << message();
        EXPECT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
        return out;
    }
    void write(cucore_buffer_t *b, const Bytes &bytes) {
        EXPECT_EQ(cucore_buffer_copy_from_host(b, 0, bytes.data(), bytes.size(), s_), CUCORE_SUCCESS) << message();
        EXPECT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
    }
    // A texture object over `resource` (expecting success).
    cucore_texture_object_t *texture(const cucore_resource_descriptor_t &resource,
                                     const cucore_texture_object_options_t *options = nullptr) {
        cucore_texture_object_t *t = nullptr;
        EXPECT_EQ(cucore_texture_object_create(nullptr, &resource, options, &t), CUCORE_SUCCESS) << message();
        return t;
    }
    static cucore_resource_descriptor_t of(cucore_opaque_array_t *a) {
        cucore_resource_descriptor_t r = CUCORE_RESOURCE_DESCRIPTOR_INIT;
        r.kind = CUCORE_RESOURCE_KIND_OPAQUE_ARRAY;
        r.array = a;
        return r;
    }
    static cucore_resource_descriptor_t of(cucore_mipmapped_array_t *m) {
        cucore_resource_descriptor_t r = CUCORE_RESOURCE_DESCRIPTOR_INIT;
        r.kind = CUCORE_RESOURCE_KIND_MIPMAPPED_ARRAY;
        r.mipmapped_array = m;
        return r;
    }
    static cucore_resource_descriptor_t linear(cucore_buffer_t *b, cucore_array_format_t format, uint32_t channels = 0,
                                               uint64_t size = 0) {
        cucore_resource_descriptor_t r = CUCORE_RESOURCE_DESCRIPTOR_INIT;
        r.kind = CUCORE_RESOURCE_KIND_LINEAR;
        r.buffer = b;
        r.format = format;
        r.num_channels = channels;
        r.size_bytes = size;
        return r;
    }
    static cucore_resource_descriptor_t pitched(cucore_buffer_t *b, cucore_array_format_t format, uint32_t channels,
                                                uint64_t width, uint64_t height, uint64_t pitch) {
        cucore_resource_descriptor_t r = CUCORE_RESOURCE_DESCRIPTOR_INIT;
        r.kind = CUCORE_RESOURCE_KIND_PITCH_2D;
        r.buffer = b;
        r.format = format;
        r.num_channels = channels;
        r.width = width;
        r.height = height;
        r.pitch_bytes = pitch;
        return r;
    }
    static uint64_t handle_of(const cucore_texture_object_t *t) {
        uint64_t h = 0;
        EXPECT_EQ(cucore_texture_object_handle(t, &h), CUCORE_SUCCESS) << message();
        return h;
    }
    static uint64_t handle_of(const cucore_surface_object_t *s) {
        uint64_t h = 0;
        EXPECT_EQ(cucore_surface_object_handle(s, &h), CUCORE_SUCCESS) << message();
        return h;
    }
    static fake::TextureRecord record_of(const cucore_texture_object_t *t) {
        fake::TextureRecord r;
        EXPECT_TRUE(fake::texture_record(handle_of(t), r)) << "the driver made no such texture object";
        return r;
    }

    static constexpr cucore_object_type_t kTypes[4] = {CUCORE_OBJECT_OPAQUE_ARRAY, CUCORE_OBJECT_MIPMAPPED_ARRAY,
                                                       CUCORE_OBJECT_TEXTURE_OBJECT, CUCORE_OBJECT_SURFACE_OBJECT};
    cucore_device_t *d_ = nullptr;
    cucore_stream_t *s_ = nullptr;
    cucore_memory_resource_t *pool_ = nullptr;

  private:
    size_t before_[4] = {};
};
