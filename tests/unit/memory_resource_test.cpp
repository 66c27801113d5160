// What every memory resource answers (kind, device, accessibility, raw pool),
// the device's default resource, legacy pinned memory and allocation's stream
// checks, against the fake driver.
#include <cstring>
#include <string>
#include <vector>

#include "memory_support.hpp"

namespace {

class MemoryResourceTest : public DefaultPoolFixture {};

TEST_F(MemoryResourceTest, ResourcesDescribeThemselves) {
    cucore_memory_resource_kind_t kind = CUCORE_MEMORY_RESOURCE_UNSET;
    int device_id = -5, device_ok = -1, host_ok = -1;
    ASSERT_EQ(cucore_memory_resource_kind(pool_, &kind), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_device_id(pool_, &device_id), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_accessibility(pool_, &device_ok, &host_ok), CUCORE_SUCCESS);
    EXPECT_EQ(kind, CUCORE_MEMORY_RESOURCE_DEVICE);
    EXPECT_EQ(device_id, 0);
    EXPECT_EQ(device_ok, 1);
    EXPECT_EQ(host_ok, 0);
    cucore_memory_resource_t *pinned = nullptr;
    ASSERT_EQ(cucore_legacy_pinned_memory_resource_create(d_, &pinned), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_kind(pinned, &kind), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_device_id(pinned, &device_id), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_accessibility(pinned, &device_ok, &host_ok), CUCORE_SUCCESS);
    EXPECT_EQ(kind, CUCORE_MEMORY_RESOURCE_LEGACY_PINNED);
    void *raw_pool = reinterpret_cast<void *>(0x1);
    ASSERT_EQ(cucore_memory_resource_handle(pinned, &raw_pool), CUCORE_SUCCESS);
    EXPECT_EQ(raw_pool, nullptr) << "legacy pinned memory has no pool";
    ASSERT_EQ(cucore_memory_resource_handle(pool_, &raw_pool), CUCORE_SUCCESS);
    CUmemoryPool default_pool = nullptr;
    ASSERT_EQ(fake::table().cuDeviceGetMemPool(&default_pool, 0), CUDA_SUCCESS);
    EXPECT_EQ(raw_pool, static_cast<void *>(default_pool));
    EXPECT_EQ(cucore_memory_resource_handle(pool_, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(device_id, -1);
    EXPECT_EQ(host_ok, 1);
    cucore_memory_resource_release(pinned);
}

TEST_F(MemoryResourceTest, TheDevicesDefaultResourceCanBeSetAndReset) {
    // Unset: a resource on the device's current pool.
    cucore_memory_resource_t *current = nullptr;
    ASSERT_EQ(cucore_device_get_memory_resource(d_, &current), CUCORE_SUCCESS);
    void *current_pool = nullptr, *default_pool = nullptr;
    cucore_memory_resource_handle(current, &current_pool);
    cucore_memory_resource_handle(pool_, &default_pool);
    EXPECT_EQ(current_pool, default_pool);
    cucore_memory_resource_release(current);
    // Set: allocations through the device come from it, and the device keeps it.
    cucore_memory_resource_t *mine = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_create(d_, nullptr, &mine), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_device_set_memory_resource(d_, mine), CUCORE_SUCCESS);
    void *mine_pool = nullptr;
    cucore_memory_resource_handle(mine, &mine_pool);
    cucore_memory_resource_release(mine);
    EXPECT_EQ(fake::counters().pools, 1) << "the device holds the resource";
    cucore_memory_resource_t *got = nullptr;
    ASSERT_EQ(cucore_device_get_memory_resource(d_, &got), CUCORE_SUCCESS);
    // The same object under a new handle: the user released every reference to `mine`, so that handle stays stale.
    EXPECT_NE(got, mine);
    EXPECT_EQ(cucore_memory_resource_handle(mine, &current_pool), CUCORE_ERROR_INVALID_HANDLE);
    void *got_pool = nullptr;
    cucore_memory_resource_handle(got, &got_pool);
    EXPECT_EQ(got_pool, mine_pool) << "the same object";
    cucore_buffer_t *b = nullptr;
    ASSERT_EQ(cucore_device_allocate(d_, 64, s_, &b), CUCORE_SUCCESS) << message();
    cucore_memory_resource_t *owner = nullptr;
    ASSERT_EQ(cucore_buffer_memory_resource(b, &owner), CUCORE_SUCCESS);
    EXPECT_EQ(owner, got);
    cucore_memory_resource_release(owner);
    cucore_memory_resource_release(got);
    // Another device handle of the same ordinal sees it too (it is per device, process-wide).
    cucore_device_t *again = device(0);
    ASSERT_EQ(cucore_device_get_memory_resource(again, &got), CUCORE_SUCCESS);
    cucore_memory_resource_handle(got, &got_pool);
    EXPECT_EQ(got_pool, mine_pool);
    cucore_memory_resource_release(got);
    // Reset: back to the current pool; the pool lives on while its buffer does.
    ASSERT_EQ(cucore_device_set_memory_resource(again, nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().pools, 1) << "its buffer still holds it";
    cucore_buffer_release(b);
    EXPECT_EQ(fake::counters().pools, 0);
    cucore_buffer_t *c = nullptr;
    EXPECT_EQ(cucore_device_allocate(again, 16, nullptr, &c), CUCORE_ERROR_INVALID_ARGUMENT)
        << "the current pool needs a stream";
    EXPECT_EQ(c, nullptr);
    cucore_device_release(again);
}

TEST_F(MemoryResourceTest, LegacyPinnedMemoryIsHostMemory) {
    cucore_memory_resource_t *pinned = nullptr;
    ASSERT_EQ(cucore_legacy_pinned_memory_resource_create(d_, &pinned), CUCORE_SUCCESS);
    cucore_buffer_t *h = nullptr;
    ASSERT_EQ(cucore_memory_resource_allocate(pinned, 16, nullptr, &h), CUCORE_SUCCESS) << "synchronous: no stream";
    uint64_t address = 0;
    ASSERT_EQ(cucore_buffer_address(h, &address), CUCORE_SUCCESS);
    std::memset(reinterpret_cast<void *>(address), 0x42, 16);
    cucore_buffer_t *dev = allocate(16);
    ASSERT_EQ(cucore_buffer_copy(dev, h, s_), CUCORE_SUCCESS);
    EXPECT_EQ(read(dev, 0, 16), std::vector<unsigned char>(16, 0x42));
    int device_id = 9;
    ASSERT_EQ(cucore_buffer_device_id(h, &device_id), CUCORE_SUCCESS);
    EXPECT_EQ(device_id, -1);
    cucore_memory_resource_release(pinned);
    cucore_buffer_release(h);
    cucore_buffer_release(dev);
}

TEST_F(MemoryResourceTest, AStreamOfAnotherDeviceIsRejected) {
    cucore_device_t *d1 = device(1);
    cucore_stream_t *s1 = nullptr;
    ASSERT_EQ(cucore_stream_create(d1, nullptr, &s1), CUCORE_SUCCESS);
    cucore_buffer_t *b = nullptr;
    EXPECT_EQ(cucore_memory_resource_allocate(pool_, 16, s1, &b), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("belongs to device 1"), std::string::npos) << message();
    cucore_stream_release(s1);
    cucore_device_release(d1);
}

}  // namespace
