// Memory resources and buffers against the fake driver, whose "device" memory
// is host memory, so fills and copies really move bytes.
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace {

class MemoryTest : public FakeDriverTest {
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

TEST_F(MemoryTest, ResourcesDescribeThemselves) {
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

TEST_F(MemoryTest, FillsWriteTheirPatternAndCopiesMoveBytes) {
    cucore_buffer_t *a = allocate(64), *b = allocate(64);
    ASSERT_EQ(cucore_buffer_fill(a, 0xAB, 1, s_), CUCORE_SUCCESS);
    EXPECT_EQ(read(a, 0, 64), std::vector<unsigned char>(64, 0xAB));
    ASSERT_EQ(cucore_buffer_fill(a, 0x1234, 2, s_), CUCORE_SUCCESS);
    std::vector<unsigned char> got = read(a, 0, 4);
    EXPECT_EQ(got, (std::vector<unsigned char>{0x34, 0x12, 0x34, 0x12}));
    ASSERT_EQ(cucore_buffer_fill(a, 0xDEADBEEF, 4, s_), CUCORE_SUCCESS);
    uint32_t word = 0;
    ASSERT_EQ(cucore_buffer_copy_to_host(a, 60, &word, 4, s_), CUCORE_SUCCESS);
    EXPECT_EQ(word, 0xDEADBEEFu);
    std::vector<unsigned char> pattern(64);
    std::iota(pattern.begin(), pattern.end(), 1);
    ASSERT_EQ(cucore_buffer_copy_from_host(a, 0, pattern.data(), 64, s_), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_buffer_copy(b, a, s_), CUCORE_SUCCESS);
    EXPECT_EQ(read(b, 0, 64), pattern);
    EXPECT_EQ(read(b, 10, 5), std::vector<unsigned char>(pattern.begin() + 10, pattern.begin() + 15));
    cucore_buffer_release(a);
    cucore_buffer_release(b);
}

TEST_F(MemoryTest, ArgumentsAreCheckedBeforeTheDriver) {
    cucore_buffer_t *a = allocate(64), *small = allocate(16);
    fake::reset_calls();
    EXPECT_EQ(cucore_buffer_copy(a, small, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("sizes differ"), std::string::npos) << message();
    EXPECT_EQ(cucore_buffer_fill(a, 7, 3, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_buffer_fill(a, 0x1FF, 1, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("does not fit"), std::string::npos) << message();
    cucore_buffer_t *odd = nullptr;
    ASSERT_EQ(cucore_buffer_view(a, 1, 6, &odd), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_buffer_fill(odd, 1, 4, s_), CUCORE_ERROR_INVALID_ARGUMENT) << "6 bytes are not 4-byte words";
    EXPECT_EQ(cucore_buffer_fill(odd, 1, 2, s_), CUCORE_ERROR_INVALID_ARGUMENT) << "misaligned for 2-byte words";
    char host[8];
    EXPECT_EQ(cucore_buffer_copy_to_host(a, 60, host, 8, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("outside"), std::string::npos) << message();
    EXPECT_EQ(cucore_buffer_copy_from_host(a, 0, nullptr, 8, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_buffer_t *view = reinterpret_cast<cucore_buffer_t *>(0x1);
    EXPECT_EQ(cucore_buffer_view(a, 65, 0, &view), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(view, nullptr);
    EXPECT_EQ(cucore_buffer_view(a, 8, UINT64_MAX, &view), CUCORE_ERROR_INVALID_ARGUMENT) << "no overflow";
    cucore_buffer_t *b = nullptr;
    EXPECT_EQ(cucore_memory_resource_allocate(pool_, 16, nullptr, &b), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("stream order"), std::string::npos) << message();
    EXPECT_EQ(fake::calls(), 0);
    cucore_device_memory_resource_options_t options = CUCORE_DEVICE_MEMORY_RESOURCE_OPTIONS_INIT;
    options.reserved0 = 1;
    cucore_memory_resource_t *mr = reinterpret_cast<cucore_memory_resource_t *>(0x1);
    EXPECT_EQ(cucore_device_memory_resource_create(d_, &options, &mr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(mr, nullptr);
    uint64_t size = 1;
    EXPECT_EQ(cucore_buffer_size(a, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_buffer_address(a, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_buffer_device_id(a, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_buffer_memory_resource(a, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_memory_resource_kind(pool_, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_memory_resource_device_id(pool_, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    int x = 0;
    EXPECT_EQ(cucore_memory_resource_accessibility(pool_, nullptr, &x), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_memory_resource_allocate(pool_, 16, s_, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_buffer_from_handle(0, 16, nullptr, nullptr, nullptr, &b), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_buffer_size(a, &size), CUCORE_SUCCESS);
    EXPECT_EQ(size, 64u);
    cucore_buffer_release(odd);
    cucore_buffer_release(a);
    cucore_buffer_release(small);
}

TEST_F(MemoryTest, ViewsShareMemoryAndOutliveAClosedParent) {
    cucore_buffer_t *a = allocate(32);
    ASSERT_EQ(cucore_buffer_fill(a, 0, 1, s_), CUCORE_SUCCESS);
    cucore_buffer_t *view = nullptr;
    ASSERT_EQ(cucore_buffer_view(a, 8, 8, &view), CUCORE_SUCCESS);
    uint64_t parent_address = 0, view_address = 0, view_size = 0;
    cucore_buffer_address(a, &parent_address);
    cucore_buffer_address(view, &view_address);
    cucore_buffer_size(view, &view_size);
    EXPECT_EQ(view_address, parent_address + 8);
    EXPECT_EQ(view_size, 8u);
    ASSERT_EQ(cucore_buffer_fill(view, 0x55, 1, s_), CUCORE_SUCCESS);
    std::vector<unsigned char> expected(32, 0);
    std::fill(expected.begin() + 8, expected.begin() + 16, 0x55);
    EXPECT_EQ(read(a, 0, 32), expected);
    int allocations = fake::counters().allocations;
    ASSERT_EQ(cucore_buffer_close(a, nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().allocations, allocations) << "the view keeps the memory";
    EXPECT_EQ(read(view, 0, 8), std::vector<unsigned char>(8, 0x55));
    cucore_buffer_release(view);
    EXPECT_EQ(fake::counters().allocations, allocations - 1) << "freed with the last holder";
    cucore_buffer_release(a);
}

TEST_F(MemoryTest, CloseFreesOnTheGivenStreamAndLeavesAClosedHandle) {
    cucore_stream_t *other = nullptr;
    ASSERT_EQ(cucore_stream_create(d_, nullptr, &other), CUCORE_SUCCESS);
    cucore_buffer_t *a = allocate(16);
    int allocations = fake::counters().allocations;
    fake::reset_calls();
    ASSERT_EQ(cucore_buffer_close(a, other), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().allocations, allocations - 1);
    std::vector<std::string> log = fake::call_log();
    EXPECT_NE(std::find(log.begin(), log.end(), "cuMemFreeAsync"), log.end());
    uint64_t size = 9, address = 9;
    ASSERT_EQ(cucore_buffer_size(a, &size), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_buffer_address(a, &address), CUCORE_SUCCESS);
    EXPECT_EQ(size, 0u);
    EXPECT_EQ(address, 0u);
    EXPECT_EQ(cucore_buffer_fill(a, 1, 1, s_), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("closed"), std::string::npos) << message();
    EXPECT_EQ(cucore_buffer_set_deallocation_stream(a, s_), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(cucore_buffer_close(a, nullptr), CUCORE_SUCCESS) << "closing twice is a no-op";
    cucore_buffer_release(a);
    EXPECT_EQ(fake::counters().allocations, allocations - 1) << "no double free";
    // The deallocation stream is held by the buffer: releasing the caller's
    // stream first is fine, and the buffer is freed on it.
    cucore_buffer_t *b = allocate(16);
    ASSERT_EQ(cucore_buffer_set_deallocation_stream(b, other), CUCORE_SUCCESS);
    cucore_stream_release(other);
    EXPECT_EQ(fake::counters().streams, 2) << "the buffer keeps its deallocation stream";
    cucore_buffer_release(b);
    EXPECT_EQ(fake::counters().streams, 1);
}

TEST_F(MemoryTest, ReleaseOrderNeverMattersForPools) {
    cucore_memory_resource_t *pool = nullptr;
    cucore_device_memory_resource_options_t options = CUCORE_DEVICE_MEMORY_RESOURCE_OPTIONS_INIT;
    options.max_size = 1 << 20;
    ASSERT_EQ(cucore_device_memory_resource_create(d_, &options, &pool), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().pools, 1);
    cucore_buffer_t *b = allocate(128, pool);
    cucore_memory_resource_t *owner = nullptr;
    ASSERT_EQ(cucore_buffer_memory_resource(b, &owner), CUCORE_SUCCESS);
    EXPECT_EQ(owner, pool);
    cucore_memory_resource_release(owner);
    cucore_memory_resource_release(pool);
    EXPECT_EQ(fake::counters().pools, 1) << "the buffer holds its pool";
    ASSERT_EQ(cucore_buffer_fill(b, 3, 1, s_), CUCORE_SUCCESS);
    EXPECT_EQ(read(b, 100, 4), std::vector<unsigned char>(4, 3));
    cucore_buffer_release(b);
    EXPECT_EQ(fake::counters().pools, 0) << "destroyed after its last buffer";
    // The default pool is never destroyed.
    cucore_buffer_t *c = allocate(8);
    cucore_buffer_release(c);
}

TEST_F(MemoryTest, PoolAttributesReadAndWriteTheDriversPool) {
    cucore_memory_resource_t *pool = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_create(d_, nullptr, &pool), CUCORE_SUCCESS);
    uint64_t used = 9;
    ASSERT_EQ(cucore_memory_resource_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_USED_MEM_CURRENT, &used), CUCORE_SUCCESS);
    EXPECT_EQ(used, 0u);
    cucore_buffer_t *b = allocate(1000, pool);
    ASSERT_EQ(cucore_memory_resource_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_USED_MEM_CURRENT, &used), CUCORE_SUCCESS);
    EXPECT_EQ(used, 1000u);
    cucore_buffer_release(b);
    uint64_t high = 0;
    ASSERT_EQ(cucore_memory_resource_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_USED_MEM_HIGH, &high), CUCORE_SUCCESS);
    EXPECT_EQ(high, 1000u);
    ASSERT_EQ(cucore_memory_resource_set_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_USED_MEM_HIGH, 0), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_USED_MEM_HIGH, &high), CUCORE_SUCCESS);
    EXPECT_EQ(high, 0u) << "reset";
    ASSERT_EQ(cucore_memory_resource_set_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_RELEASE_THRESHOLD, 1 << 20),
              CUCORE_SUCCESS);
    uint64_t threshold = 0;
    ASSERT_EQ(cucore_memory_resource_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_RELEASE_THRESHOLD, &threshold),
              CUCORE_SUCCESS);
    EXPECT_EQ(threshold, uint64_t{1} << 20);
    ASSERT_EQ(cucore_memory_resource_set_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_REUSE_ALLOW_OPPORTUNISTIC, 0),
              CUCORE_SUCCESS);
    uint64_t flag = 9;
    ASSERT_EQ(cucore_memory_resource_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_REUSE_ALLOW_OPPORTUNISTIC, &flag),
              CUCORE_SUCCESS);
    EXPECT_EQ(flag, 0u);
    EXPECT_EQ(cucore_memory_resource_trim(pool, 0), CUCORE_SUCCESS);
    // Checked before the driver: read-only, reset-only, flag range, unknown attribute.
    fake::reset_calls();
    EXPECT_EQ(cucore_memory_resource_set_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_USED_MEM_CURRENT, 0),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("read-only"), std::string::npos) << message();
    EXPECT_EQ(cucore_memory_resource_set_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_USED_MEM_HIGH, 5),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_memory_resource_set_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_REUSE_ALLOW_OPPORTUNISTIC, 2),
              CUCORE_ERROR_INVALID_ARGUMENT);
    uint64_t value = 7;
    EXPECT_EQ(cucore_memory_resource_pool_attribute(pool, static_cast<cucore_pool_attribute_t>(99), &value),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(value, 0u);
    EXPECT_EQ(cucore_memory_resource_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_USED_MEM_HIGH, nullptr),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(fake::calls(), 0);
    // A resource without a pool says so.
    cucore_memory_resource_t *pinned = nullptr;
    ASSERT_EQ(cucore_legacy_pinned_memory_resource_create(d_, &pinned), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_memory_resource_trim(pinned, 0), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(cucore_memory_resource_pool_attribute(pinned, CUCORE_POOL_ATTRIBUTE_USED_MEM_HIGH, &value),
              CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_NE(message().find("no memory pool"), std::string::npos) << message();
    EXPECT_EQ(cucore_memory_resource_set_pool_attribute(pinned, CUCORE_POOL_ATTRIBUTE_RELEASE_THRESHOLD, 0),
              CUCORE_ERROR_NOT_SUPPORTED);
    cucore_memory_resource_release(pinned);
    cucore_memory_resource_release(pool);
}

TEST_F(MemoryTest, TheDevicesDefaultResourceCanBeSetAndReset) {
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
    cucore_memory_resource_release(mine);
    EXPECT_EQ(fake::counters().pools, 1) << "the device holds the resource";
    cucore_memory_resource_t *got = nullptr;
    ASSERT_EQ(cucore_device_get_memory_resource(d_, &got), CUCORE_SUCCESS);
    EXPECT_EQ(got, mine) << "the same object";
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
    EXPECT_EQ(got, mine);
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

TEST_F(MemoryTest, ZeroSizeBuffersAreValidAndOwnNothing) {
    int allocations = fake::counters().allocations;
    fake::reset_calls();
    cucore_buffer_t *z = allocate(0);
    EXPECT_EQ(fake::calls(), 0) << "no driver call for zero bytes";
    uint64_t address = 1;
    ASSERT_EQ(cucore_buffer_address(z, &address), CUCORE_SUCCESS);
    EXPECT_EQ(address, 0u);
    EXPECT_EQ(cucore_buffer_fill(z, 1, 4, s_), CUCORE_SUCCESS);
    cucore_buffer_t *z2 = allocate(0);
    EXPECT_EQ(cucore_buffer_copy(z2, z, s_), CUCORE_SUCCESS);
    cucore_buffer_release(z);
    cucore_buffer_release(z2);
    EXPECT_EQ(fake::counters().allocations, allocations);
}

TEST_F(MemoryTest, LegacyPinnedMemoryIsHostMemory) {
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

struct Owner {
    int released = 0;
};

TEST_F(MemoryTest, ForeignMemoryIsNotFreedAndItsOwnerIsToldOnce) {
    cucore_buffer_t *backing = allocate(32);
    uint64_t address = 0;
    cucore_buffer_address(backing, &address);
    Owner owner;
    cucore_buffer_t *foreign = nullptr;
    ASSERT_EQ(cucore_buffer_from_handle(address, 32, d_, [](void *p) { ++static_cast<Owner *>(p)->released; },
                                        &owner, &foreign),
              CUCORE_SUCCESS);
    cucore_memory_resource_t *resource = reinterpret_cast<cucore_memory_resource_t *>(0x1);
    ASSERT_EQ(cucore_buffer_memory_resource(foreign, &resource), CUCORE_SUCCESS);
    EXPECT_EQ(resource, nullptr) << "foreign memory has no resource";
    ASSERT_EQ(cucore_buffer_fill(foreign, 9, 1, s_), CUCORE_SUCCESS);
    EXPECT_EQ(read(backing, 0, 32), std::vector<unsigned char>(32, 9));
    cucore_buffer_t *view = nullptr;
    ASSERT_EQ(cucore_buffer_view(foreign, 4, 4, &view), CUCORE_SUCCESS);
    int allocations = fake::counters().allocations;
    cucore_buffer_release(foreign);
    EXPECT_EQ(owner.released, 0) << "the view still holds it";
    cucore_buffer_release(view);
    EXPECT_EQ(owner.released, 1);
    EXPECT_EQ(fake::counters().allocations, allocations) << "foreign memory is not freed";
    cucore_buffer_t *host = nullptr;
    char local[4];
    ASSERT_EQ(cucore_buffer_from_handle(reinterpret_cast<uintptr_t>(local), 4, nullptr, nullptr, nullptr, &host),
              CUCORE_SUCCESS);
    int device_id = 0;
    cucore_buffer_device_id(host, &device_id);
    EXPECT_EQ(device_id, -1);
    cucore_buffer_release(host);
    cucore_buffer_release(backing);
}

TEST_F(MemoryTest, AStreamOfAnotherDeviceIsRejected) {
    cucore_device_t *d1 = device(1);
    cucore_stream_t *s1 = nullptr;
    ASSERT_EQ(cucore_stream_create(d1, nullptr, &s1), CUCORE_SUCCESS);
    cucore_buffer_t *b = nullptr;
    EXPECT_EQ(cucore_memory_resource_allocate(pool_, 16, s1, &b), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("belongs to device 1"), std::string::npos) << message();
    cucore_stream_release(s1);
    cucore_device_release(d1);
}

TEST_F(MemoryTest, AFailedFreeIsReported) {
    expects_release_errors_ = true;
    cucore_buffer_t *b = allocate(16);
    fake::fail_entry("cuMemFreeAsync", CUDA_ERROR_INVALID_VALUE);
    uint64_t before = release_errors();
    EXPECT_EQ(cucore_buffer_release(b), CUCORE_SUCCESS);
    fake::fail_entry("");
    EXPECT_EQ(release_errors(), before + 1);
    EXPECT_EQ(fake::counters().allocations, 1) << "the driver refused: the memory is still allocated";
    fake::forget_allocations();  // so the leak check at the end sees only what the library owns
}

}  // namespace
