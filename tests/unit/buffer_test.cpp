// Buffers against the fake driver, whose "device" memory is host memory, so
// fills and copies really move bytes: fills, copies, views, closing, zero
// sizes, foreign memory, release errors (BufferTest, on device 0's default
// pool), and what buffers of every kind say about themselves, their
// deallocation stream and copies between devices (BufferKindsTest).
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "memory_support.hpp"

namespace {

class BufferTest : public DefaultPoolFixture {};
class BufferKindsTest : public MemoryFixture {};

TEST_F(BufferTest, FillsWriteTheirPatternAndCopiesMoveBytes) {
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

TEST_F(BufferTest, ArgumentsAreCheckedBeforeTheDriver) {
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

TEST_F(BufferTest, ViewsShareMemoryAndOutliveAClosedParent) {
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

TEST_F(BufferTest, CloseFreesOnTheGivenStreamAndLeavesAClosedHandle) {
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

TEST_F(BufferTest, DisposeClosesAndReleasesInOneCall) {
    cucore_stream_t *other = nullptr;
    ASSERT_EQ(cucore_stream_create(d_, nullptr, &other), CUCORE_SUCCESS);
    const size_t buffers = live(CUCORE_OBJECT_BUFFER);
    cucore_buffer_t *a = allocate(16);
    cucore_buffer_t *view = nullptr;
    ASSERT_EQ(cucore_buffer_view(a, 0, 8, &view), CUCORE_SUCCESS);
    const int allocations = fake::counters().allocations;
    fake::reset_calls();
    ASSERT_EQ(cucore_buffer_dispose(a, other), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::counters().allocations, allocations) << "the view keeps the memory, as after a close";
    EXPECT_EQ(live(CUCORE_OBJECT_BUFFER), buffers + 1) << "the buffer went with the caller's reference";
    uint64_t size = 0;
    EXPECT_EQ(cucore_buffer_size(a, &size), CUCORE_ERROR_INVALID_HANDLE) << "released";
    cucore_buffer_release(view);
    EXPECT_EQ(fake::counters().allocations, allocations - 1);
    std::vector<std::string> log = fake::call_log();
    EXPECT_NE(std::find(log.begin(), log.end(), "cuMemFreeAsync"), log.end());
    // Another reference keeps the handle valid, closed; a failed free is reported and the handle released.
    cucore_buffer_t *b = allocate(16);
    ASSERT_EQ(cucore_buffer_retain(b), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_buffer_dispose(b, nullptr), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_buffer_size(b, &size), CUCORE_SUCCESS);
    EXPECT_EQ(size, 0u) << "closed";
    cucore_buffer_release(b);
    EXPECT_EQ(cucore_buffer_dispose(nullptr, nullptr), CUCORE_ERROR_INVALID_HANDLE);
    cucore_stream_release(other);
}

TEST_F(BufferTest, ZeroSizeBuffersAreValidAndOwnNothing) {
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

struct Owner {
    int released = 0;
};

TEST_F(BufferTest, ForeignMemoryIsNotFreedAndItsOwnerIsToldOnce) {
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

TEST_F(BufferTest, AFailedFreeIsReported) {
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

TEST_F(BufferKindsTest, AccessibilityOfEveryKindOfBuffer) {
    cucore_memory_resource_t *pool = nullptr, *legacy = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_get_default(d1_, &pool), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_legacy_pinned_memory_resource_create(d0_, &legacy), CUCORE_SUCCESS);
    cucore_buffer_t *device_buffer = alloc(pool, 16, s1_);
    cucore_buffer_t *host_buffer = alloc(legacy, 16, nullptr);
    EXPECT_EQ(accessibility(device_buffer), (std::vector<int>{1, 0, 0}));
    EXPECT_EQ(accessibility(host_buffer), (std::vector<int>{1, 1, 0}));
    cucore_buffer_t *view = nullptr;
    ASSERT_EQ(cucore_buffer_view(host_buffer, 4, 4, &view), CUCORE_SUCCESS);
    EXPECT_EQ(accessibility(view), (std::vector<int>{1, 1, 0})) << "a view is what its parent is";
    cucore_buffer_t *foreign_device = nullptr, *foreign_host = nullptr;
    ASSERT_EQ(cucore_buffer_from_handle(0x10000, 16, d1_, nullptr, nullptr, &foreign_device), CUCORE_SUCCESS);
    char local[16];
    ASSERT_EQ(cucore_buffer_from_handle(reinterpret_cast<uintptr_t>(local), 16, nullptr, nullptr, nullptr,
                                        &foreign_host),
              CUCORE_SUCCESS);
    EXPECT_EQ(accessibility(foreign_device), (std::vector<int>{1, 0, 0}));
    EXPECT_EQ(accessibility(foreign_host), (std::vector<int>{0, 1, 0}));
    // Closed buffers still say what they were.
    ASSERT_EQ(cucore_buffer_close(device_buffer, nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(accessibility(device_buffer), (std::vector<int>{1, 0, 0}));
    for (cucore_buffer_t *b : {device_buffer, host_buffer, view, foreign_device, foreign_host}) cucore_buffer_release(b);
    cucore_memory_resource_release(legacy);
    cucore_memory_resource_release(pool);
}

TEST_F(BufferKindsTest, DeallocationStreamIsTheAllocationStreamUntilChanged) {
    cucore_memory_resource_t *pool = nullptr, *legacy = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_get_default(d0_, &pool), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_legacy_pinned_memory_resource_create(d0_, &legacy), CUCORE_SUCCESS);
    cucore_buffer_t *b = alloc(pool, 32, s0_);
    cucore_stream_t *got = nullptr;
    ASSERT_EQ(cucore_buffer_deallocation_stream(b, &got), CUCORE_SUCCESS);
    EXPECT_EQ(got, s0_) << "the allocation stream (+1 reference)";
    cucore_stream_release(got);
    cucore_stream_t *other = nullptr;
    ASSERT_EQ(cucore_stream_create(d0_, nullptr, &other), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_buffer_set_deallocation_stream(b, other), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_buffer_deallocation_stream(b, &got), CUCORE_SUCCESS);
    EXPECT_EQ(got, other);
    cucore_stream_release(got);
    // A view frees on its allocation's stream.
    cucore_buffer_t *view = nullptr;
    ASSERT_EQ(cucore_buffer_view(b, 8, 8, &view), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_buffer_deallocation_stream(view, &got), CUCORE_SUCCESS);
    EXPECT_EQ(got, other);
    cucore_stream_release(got);
    cucore_stream_release(other);  // the buffer holds it
    // Closed: none.
    ASSERT_EQ(cucore_buffer_close(b, nullptr), CUCORE_SUCCESS);
    got = s1_;
    ASSERT_EQ(cucore_buffer_deallocation_stream(b, &got), CUCORE_SUCCESS);
    EXPECT_EQ(got, nullptr);
    // Synchronous and foreign memory: none.
    cucore_buffer_t *h = alloc(legacy, 32, nullptr);
    got = s1_;
    ASSERT_EQ(cucore_buffer_deallocation_stream(h, &got), CUCORE_SUCCESS);
    EXPECT_EQ(got, nullptr);
    cucore_buffer_t *foreign = nullptr;
    ASSERT_EQ(cucore_buffer_from_handle(0x10000, 16, d0_, nullptr, nullptr, &foreign), CUCORE_SUCCESS);
    got = s1_;
    ASSERT_EQ(cucore_buffer_deallocation_stream(foreign, &got), CUCORE_SUCCESS);
    EXPECT_EQ(got, nullptr);
    for (cucore_buffer_t *x : {b, view, h, foreign}) cucore_buffer_release(x);
    cucore_memory_resource_release(legacy);
    cucore_memory_resource_release(pool);
}

TEST_F(BufferKindsTest, CopiesBetweenDevicesArePeerCopies) {
    cucore_memory_resource_t *pool0 = nullptr, *pool1 = nullptr, *managed = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_get_default(d0_, &pool0), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_device_memory_resource_get_default(d1_, &pool1), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_managed_memory_resource_create(d1_, nullptr, &managed), CUCORE_SUCCESS);
    cucore_buffer_t *a = alloc(pool0, 256, s0_), *b = alloc(pool1, 256, s1_), *m = alloc(managed, 256, s1_);
    const Bytes data = pattern(256, 7);
    write(a, 0, data);
    fake::reset_calls();
    ASSERT_EQ(cucore_buffer_copy(b, a, s0_), CUCORE_SUCCESS) << message();
    EXPECT_TRUE(called("cuMemcpyPeerAsync")) << "device 0 -> device 1 memory";
    EXPECT_FALSE(called("cuMemcpyAsync"));
    EXPECT_EQ(read_all(b), data);
    // Managed memory is reachable from both devices: a plain copy.
    fake::reset_calls();
    ASSERT_EQ(cucore_buffer_copy(m, a, s0_), CUCORE_SUCCESS) << message();
    EXPECT_TRUE(called("cuMemcpyAsync"));
    EXPECT_FALSE(called("cuMemcpyPeerAsync"));
    EXPECT_EQ(read_all(m), data);
    // Same device: a plain copy.
    cucore_buffer_t *c = alloc(pool1, 256, s1_);
    fake::reset_calls();
    ASSERT_EQ(cucore_buffer_copy(c, b, s1_), CUCORE_SUCCESS);
    EXPECT_FALSE(called("cuMemcpyPeerAsync"));
    EXPECT_EQ(read_all(c), data);
    EXPECT_EQ(fake::current_context(), nullptr) << "the caller's context is left alone";
    // Host copies of a device's memory run on that device's streams (the driver crashes on another's).
    Bytes host(256);
    fake::reset_calls();
    EXPECT_EQ(cucore_buffer_copy_to_host(b, 0, host.data(), 256, s0_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("'buffer' is memory of device 1 and 'stream' a stream of device 0"), std::string::npos)
        << message();
    EXPECT_EQ(cucore_buffer_copy_from_host(a, 0, host.data(), 256, s1_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_buffer_copy(c, b, s0_), CUCORE_SUCCESS) << "two buffers of device 1 on device 0's stream";
    // Managed memory is reachable from any device's stream.
    EXPECT_EQ(cucore_buffer_copy_to_host(m, 0, host.data(), 256, s0_), CUCORE_SUCCESS) << message();
    for (cucore_buffer_t *x : {a, b, m, c}) cucore_buffer_release(x);
    for (cucore_memory_resource_t *r : {pool0, pool1, managed}) cucore_memory_resource_release(r);
}

}  // namespace
