// Shared fixtures of the memory unit tests (memory_resource, memory_pool,
// managed_memory, virtual_memory, user_memory, buffer, copy_3d), and helpers
// that move bytes through the library (the fake's "device" memory is host
// memory, so every copy and fill really happens):
// - MemoryFixture: two fake devices with a stream each; most memory suites.
// - DefaultPoolFixture: device 0, one stream and the device's default pool;
//   the suites of a single device's buffers and pools (BufferTest,
//   MemoryResourceTest, MemoryPoolTest).
#pragma once

#include <cstdint>
#include <vector>

#include "test_support.hpp"

using Bytes = std::vector<uint8_t>;

// `n` pseudo-random bytes, different for each seed.
inline Bytes pattern(size_t n, uint32_t seed) {
    Bytes v(n);
    uint32_t x = seed * 2654435761u + 12345u;
    for (auto &b : v) {
        x = x * 1664525u + 1013904223u;
        b = static_cast<uint8_t>(x >> 24);
    }
    return v;
}

class MemoryFixture : public FakeDriverTest {
  protected:
    void SetUp() override {
        FakeDriverTest::SetUp();
        d0_ = device(0);
        d1_ = device(1);
        ASSERT_EQ(cucore_stream_create(d0_, nullptr, &s0_), CUCORE_SUCCESS);
        ASSERT_EQ(cucore_stream_create(d1_, nullptr, &s1_), CUCORE_SUCCESS);
    }
    void TearDown() override {
        cucore_stream_release(s1_);
        cucore_stream_release(s0_);
        cucore_device_release(d1_);
        cucore_device_release(d0_);
        FakeDriverTest::TearDown();
    }

    cucore_buffer_t *alloc(cucore_memory_resource_t *resource, uint64_t size, cucore_stream_t *stream) {
        cucore_buffer_t *b = nullptr;
        EXPECT_EQ(cucore_memory_resource_allocate(resource, size, stream, &b), CUCORE_SUCCESS) << message();
        return b;
    }
    // A stream of the buffer's own device (device 1's memory is copied to and from the host on device 1).
    cucore_stream_t *stream_of(cucore_buffer_t *b) {
        int device = 0;
        EXPECT_EQ(cucore_buffer_device_id(b, &device), CUCORE_SUCCESS) << message();
        return device == 1 ? s1_ : s0_;
    }
    Bytes read(cucore_buffer_t *b, uint64_t offset, uint64_t size) {
        Bytes out(size, 0xEE);
        cucore_stream_t *s = stream_of(b);
        EXPECT_EQ(cucore_buffer_copy_to_host(b, offset, out.data(), size, s), CUCORE_SUCCESS) << message();
        EXPECT_EQ(cucore_stream_synchronize(s), CUCORE_SUCCESS);
        return out;
    }
    Bytes read_all(cucore_buffer_t *b) { return read(b, 0, size_of(b)); }
    void write(cucore_buffer_t *b, uint64_t offset, const Bytes &bytes) {
        cucore_stream_t *s = stream_of(b);
        EXPECT_EQ(cucore_buffer_copy_from_host(b, offset, bytes.data(), bytes.size(), s), CUCORE_SUCCESS) << message();
        EXPECT_EQ(cucore_stream_synchronize(s), CUCORE_SUCCESS);
    }
    static uint64_t address_of(const cucore_buffer_t *b) {
        uint64_t a = ~uint64_t{0};
        EXPECT_EQ(cucore_buffer_address(b, &a), CUCORE_SUCCESS);
        return a;
    }
    static uint64_t size_of(const cucore_buffer_t *b) {
        uint64_t n = ~uint64_t{0};
        EXPECT_EQ(cucore_buffer_size(b, &n), CUCORE_SUCCESS);
        return n;
    }
    // device, host, managed as 0/1, or -1 each when the call fails.
    static std::vector<int> accessibility(const cucore_buffer_t *b) {
        int d = -1, h = -1, m = -1;
        EXPECT_EQ(cucore_buffer_accessibility(b, &d, &h, &m), CUCORE_SUCCESS) << message();
        return {d, h, m};
    }
    static cucore_memory_resource_kind_t kind_of(const cucore_memory_resource_t *r) {
        cucore_memory_resource_kind_t k = CUCORE_MEMORY_RESOURCE_UNSET;
        EXPECT_EQ(cucore_memory_resource_kind(r, &k), CUCORE_SUCCESS);
        return k;
    }
    // A managed memory pool (options.use_pool) on `d`; NULL if the call failed.
    static cucore_memory_resource_t *managed_pool(cucore_device_t *d) {
        cucore_managed_memory_resource_options_t o = CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
        o.use_pool = 1;
        cucore_memory_resource_t *r = nullptr;
        EXPECT_EQ(cucore_managed_memory_resource_create(d, &o, &r), CUCORE_SUCCESS) << message();
        return r;
    }
    static CUmemoryPool pool_of(const cucore_memory_resource_t *r) {
        void *pool = nullptr;
        EXPECT_EQ(cucore_memory_resource_handle(r, &pool), CUCORE_SUCCESS);
        return static_cast<CUmemoryPool>(pool);
    }
    // Whether `name` is among the driver calls since the last fake::reset_calls().
    static bool called(const char *name) {
        for (const std::string &call : fake::call_log())
            if (call == name) return true;
        return false;
    }

    cucore_device_t *d0_ = nullptr, *d1_ = nullptr;
    cucore_stream_t *s0_ = nullptr, *s1_ = nullptr;  // on device 0 and 1
};

class DefaultPoolFixture : public FakeDriverTest {
  protected:
    void SetUp() override {
        FakeDriverTest::SetUp();
        d_ = device(0);
        ASSERT_EQ(cucore_stream_create(d_, nullptr, &s_), CUCORE_SUCCESS);
        ASSERT_EQ(cucore_device_memory_resource_get_default(d_, &pool_), CUCORE_SUCCESS);
    }
    void TearDown() override {
        cucore_memory_resource_release(pool_);
        cucore_stream_release(s_);
        cucore_device_release(d_);
        FakeDriverTest::TearDown();
    }
    cucore_buffer_t *allocate(uint64_t size, cucore_memory_resource_t *resource = nullptr) {
        cucore_buffer_t *b = nullptr;
        EXPECT_EQ(cucore_memory_resource_allocate(resource ? resource : pool_, size, s_, &b), CUCORE_SUCCESS)
            << message();
        return b;
    }
    std::vector<unsigned char> read(cucore_buffer_t *b, uint64_t offset, uint64_t size) {
        std::vector<unsigned char> out(size, 0xEE);
        EXPECT_EQ(cucore_buffer_copy_to_host(b, offset, out.data(), size, s_), CUCORE_SUCCESS) << message();
        EXPECT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
        return out;
    }
    cucore_device_t *d_ = nullptr;
    cucore_stream_t *s_ = nullptr;
    cucore_memory_resource_t *pool_ = nullptr;
};
