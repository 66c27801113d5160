// Stream-ordered pools on a real GPU: new device pools are their own driver
// pools, with the options and attributes the driver reports, and outlive their
// handle while buffers hold them (MemoryPoolTest); pinned pools, frees ordered
// on a stream that waited for the memory's last user, and copies and peer
// access between two devices (MemoryPoolKindsGpuTest). Managed pools are in
// managed_memory_test.cpp.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "memory_gpu.hpp"

namespace {

using gpu::Bytes;
using gpu::cu;
using gpu::Gate;
using gpu::kMiB;
using gpu::pattern;
using gpu::same_bytes;
using gpu::address_of;
using gpu::kind_of;
using gpu::kJunkBuffer;
using gpu::check_free_on_waiting_stream;

class MemoryPoolTest : public gpu::DefaultPoolGpuTest {};
class MemoryPoolKindsGpuTest : public gpu::PoolKindsGpuTest {};

TEST_F(MemoryPoolTest, NewPoolIsItsOwnDriverPool) {
    cucore_memory_resource_t *mr = new_pool();
    ASSERT_NE(mr, nullptr);
    EXPECT_EQ(kind_of(mr), CUCORE_MEMORY_RESOURCE_DEVICE);
    int id = -2, dev_ok = -1, host_ok = -1;
    CUCORE_EXPECT_OK(cucore_memory_resource_device_id(mr, &id));
    CUCORE_EXPECT_OK(cucore_memory_resource_accessibility(mr, &dev_ok, &host_ok));
    EXPECT_EQ(id, 0);
    EXPECT_EQ(dev_ok, 1);
    EXPECT_EQ(host_ok, 0);

    cucore_buffer_t *b = alloc(mr, kMiB, s_);
    ASSERT_NE(b, nullptr);
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    CUmemoryPool current = nullptr;
    CU_EXPECT_OK(cu().DeviceGetMemPool(&current, cu_dev_));
    const CUmemoryPool pool = raw_pool_of(address_of(b));
    EXPECT_NE(pool, nullptr);
    EXPECT_NE(pool, current) << "a new pool allocated from the device's current pool";
    // Defaults: release threshold 0 (the driver's default).
    EXPECT_EQ(raw_pool_attribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD), 0u);
    EXPECT_GE(raw_pool_attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT), kMiB);

    const Bytes data = pattern(kMiB, 1);
    write(b, data);
    EXPECT_TRUE(same_bytes(raw_read(address_of(b), data.size()), data));
    CUCORE_EXPECT_OK(cucore_buffer_release(b));
    CUCORE_EXPECT_OK(cucore_memory_resource_release(mr));
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
}

TEST_F(MemoryPoolTest, PoolAttributesAreTheDriversAndTrimWorks) {
    cucore_memory_resource_t *mr = new_pool();
    ASSERT_NE(mr, nullptr);
    void *raw = nullptr;
    CUCORE_ASSERT_OK(cucore_memory_resource_handle(mr, &raw));
    const CUmemoryPool pool = static_cast<CUmemoryPool>(raw);
    cucore_buffer_t *b = alloc(mr, kMiB, s_);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(raw_pool_of(address_of(b)), pool) << "the handle is the pool the memory came from";
    std::uint64_t used = 0, reserved = 0;
    CUCORE_EXPECT_OK(cucore_memory_resource_pool_attribute(mr, CUCORE_POOL_ATTRIBUTE_USED_MEM_CURRENT, &used));
    CUCORE_EXPECT_OK(cucore_memory_resource_pool_attribute(mr, CUCORE_POOL_ATTRIBUTE_RESERVED_MEM_CURRENT, &reserved));
    EXPECT_EQ(used, raw_pool_attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT));
    EXPECT_GE(used, kMiB);
    EXPECT_GE(reserved, used);
    CUCORE_EXPECT_OK(cucore_buffer_release(b));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    CUCORE_EXPECT_OK(cucore_memory_resource_pool_attribute(mr, CUCORE_POOL_ATTRIBUTE_USED_MEM_CURRENT, &used));
    EXPECT_EQ(used, 0u) << "freed in stream order, synchronized";
    // Through the facade: threshold and flag round trips, high-water reset, trim.
    cucore::MemoryResource facade = cucore::MemoryResource::adopt(mr);
    facade.set_pool_attribute(CUCORE_POOL_ATTRIBUTE_RELEASE_THRESHOLD, 2 * kMiB);
    EXPECT_EQ(facade.pool_attribute(CUCORE_POOL_ATTRIBUTE_RELEASE_THRESHOLD), 2 * kMiB);
    EXPECT_EQ(raw_pool_attribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD), 2 * kMiB);
    facade.set_pool_attribute(CUCORE_POOL_ATTRIBUTE_REUSE_ALLOW_OPPORTUNISTIC, 0);
    EXPECT_EQ(facade.pool_attribute(CUCORE_POOL_ATTRIBUTE_REUSE_ALLOW_OPPORTUNISTIC), 0u);
    EXPECT_GE(facade.pool_attribute(CUCORE_POOL_ATTRIBUTE_USED_MEM_HIGH), kMiB);
    facade.set_pool_attribute(CUCORE_POOL_ATTRIBUTE_USED_MEM_HIGH, 0);
    EXPECT_EQ(facade.pool_attribute(CUCORE_POOL_ATTRIBUTE_USED_MEM_HIGH), 0u);
    facade.set_pool_attribute(CUCORE_POOL_ATTRIBUTE_RELEASE_THRESHOLD, 0);
    facade.trim(0);
    EXPECT_EQ(facade.pool_attribute(CUCORE_POOL_ATTRIBUTE_RESERVED_MEM_CURRENT), 0u)
        << "nothing used, threshold 0, trimmed to 0: nothing stays reserved";
    try {
        facade.set_pool_attribute(CUCORE_POOL_ATTRIBUTE_USED_MEM_CURRENT, 0);
        ADD_FAILURE() << "a read-only attribute was set";
    } catch (const cucore::Error &e) {
        EXPECT_EQ(e.status(), CUCORE_ERROR_INVALID_ARGUMENT);
    }
}

TEST_F(MemoryPoolTest, PoolOptionsReachTheDriver) {
    cucore_device_memory_resource_options_t o = CUCORE_DEVICE_MEMORY_RESOURCE_OPTIONS_INIT;
    o.max_size = 64 * kMiB;
    o.release_threshold = 32 * kMiB;
    cucore_memory_resource_t *mr = nullptr;
    const cucore_status_t st = cucore_device_memory_resource_create(dev_, &o, &mr);
    if (st == CUCORE_ERROR_NOT_SUPPORTED)
        GTEST_SKIP() << "pool options not supported by this driver: " << cucore_last_error_message();
    CUCORE_ASSERT_OK(st);

    cucore_buffer_t *b = alloc(mr, 4 * kMiB, s_);
    ASSERT_NE(b, nullptr);
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    const CUmemoryPool pool = raw_pool_of(address_of(b));
    ASSERT_NE(pool, nullptr);
    EXPECT_EQ(raw_pool_attribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD), 32 * kMiB);

    // Under the release threshold the pool keeps its memory reserved after the
    // buffer is freed and the stream synchronized.
    CUCORE_EXPECT_OK(cucore_buffer_release(b));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_EQ(raw_pool_attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 0u);
    EXPECT_GE(raw_pool_attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), 4 * kMiB);

    // max_size has no pool attribute to read (CUDA 13.0): it is checked by its
    // effect. CUmemPoolProps::maxSize exists from CUDA 12.2; older drivers ignore it.
    int driver = 0;
    CUCORE_ASSERT_OK(cucore_driver_version(&driver));
    if (driver >= 12020) {
        cucore_buffer_t *out = kJunkBuffer;
        CUCORE_EXPECT_STATUS(cucore_memory_resource_allocate(mr, 80 * kMiB, s_, &out), CUCORE_ERROR_OUT_OF_MEMORY);
        EXPECT_EQ(out, nullptr);
        cucore_buffer_t *a = alloc(mr, 40 * kMiB, s_);
        ASSERT_NE(a, nullptr);
        out = kJunkBuffer;
        CUCORE_EXPECT_STATUS(cucore_memory_resource_allocate(mr, 40 * kMiB, s_, &out), CUCORE_ERROR_OUT_OF_MEMORY);
        EXPECT_EQ(out, nullptr);
        // Freed (last reference) and closed memory returns to the pool.
        CUCORE_EXPECT_OK(cucore_buffer_release(a));
        CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
        a = alloc(mr, 40 * kMiB, s_);
        ASSERT_NE(a, nullptr);
        CUCORE_EXPECT_OK(cucore_buffer_close(a, nullptr));
        CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
        cucore_buffer_t *c = alloc(mr, 40 * kMiB, s_);
        ASSERT_NE(c, nullptr);
        CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
        EXPECT_LE(raw_pool_attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH), 64 * kMiB);
        CUCORE_EXPECT_OK(cucore_buffer_release(c));
        CUCORE_EXPECT_OK(cucore_buffer_release(a));
    } else {
        std::printf("[   INFO   ] driver %d < 12.2: max_size not checked\n", driver);
    }
    CUCORE_EXPECT_OK(cucore_memory_resource_release(mr));
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
}

TEST_F(MemoryPoolTest, BadPoolOptionsAreRejected) {
    cucore_memory_resource_t *mr = reinterpret_cast<cucore_memory_resource_t *>(std::uintptr_t{0x10});
    cucore_device_memory_resource_options_t o = CUCORE_DEVICE_MEMORY_RESOURCE_OPTIONS_INIT;
    o.struct_size = 0;
    CUCORE_EXPECT_STATUS(cucore_device_memory_resource_create(dev_, &o, &mr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(mr, nullptr);
    o = CUCORE_DEVICE_MEMORY_RESOURCE_OPTIONS_INIT;
    o.reserved0 = 1;
    CUCORE_EXPECT_STATUS(cucore_device_memory_resource_create(dev_, &o, &mr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(mr, nullptr);
    CUCORE_EXPECT_STATUS(cucore_device_memory_resource_create(dev_, nullptr, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_device_memory_resource_get_default(dev_, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_legacy_pinned_memory_resource_create(dev_, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_device_memory_resource_create(nullptr, nullptr, &mr), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(mr, nullptr);
    // A stream is not a device.
    CUCORE_EXPECT_STATUS(cucore_device_memory_resource_get_default(reinterpret_cast<cucore_device_t *>(s_), &mr),
                         CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(mr, nullptr);
}

TEST_F(MemoryPoolTest, PoolReleasedBeforeItsBuffers) {
    cucore_device_memory_resource_options_t o = CUCORE_DEVICE_MEMORY_RESOURCE_OPTIONS_INIT;
    o.release_threshold = 16 * kMiB;
    cucore_memory_resource_t *mr = new_pool(&o);
    ASSERT_NE(mr, nullptr);
    const std::size_t resources = live_resources();
    cucore_buffer_t *a = alloc(mr, 2 * kMiB, s_);
    cucore_buffer_t *b = alloc(mr, 2 * kMiB, s_);
    ASSERT_TRUE(a != nullptr && b != nullptr);
    const Bytes data = pattern(2 * kMiB, 8);
    write(a, data);
    CUCORE_EXPECT_OK(cucore_memory_resource_release(mr));
    EXPECT_EQ(live_resources(), resources) << "the buffers do not hold their resource";
    // Both buffers still work, and still come from that pool.
    CUCORE_EXPECT_OK(cucore_buffer_copy(b, a, s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_TRUE(same_bytes(read(b), data));
    EXPECT_TRUE(same_bytes(raw_read(address_of(b), data.size()), data));
    const CUmemoryPool pool = raw_pool_of(address_of(a));
    EXPECT_EQ(raw_pool_of(address_of(b)), pool);
    EXPECT_EQ(raw_pool_attribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD), 16 * kMiB);
    // The buffer gives its resource back (+1), which still allocates.
    cucore_memory_resource_t *back = nullptr;
    CUCORE_ASSERT_OK(cucore_buffer_memory_resource(a, &back));
    ASSERT_NE(back, nullptr);
    EXPECT_EQ(kind_of(back), CUCORE_MEMORY_RESOURCE_DEVICE);
    cucore_buffer_t *c = alloc(back, 4096, s_);
    ASSERT_NE(c, nullptr);
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_EQ(raw_pool_of(address_of(c)), pool);
    CUCORE_EXPECT_OK(cucore_memory_resource_release(back));
    // The pool goes with its last buffer, whatever the order.
    CUCORE_EXPECT_OK(cucore_buffer_release(a));
    CUCORE_EXPECT_OK(cucore_buffer_release(c));
    EXPECT_EQ(live_resources(), resources);
    CUCORE_EXPECT_OK(cucore_buffer_release(b));
    EXPECT_EQ(live_resources(), resources - 1);
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
}

// ---- Pinned pools ---------------------------------------------------------------

TEST_F(MemoryPoolKindsGpuTest, PinnedPoolAllocateFillCopyFree) {
    cucore_memory_resource_t *pinned = pinned_pool();
    CUCORE_SKIP_IF_NOT_SUPPORTED(last_status_, "a pinned (host) memory pool");
    CUCORE_ASSERT_OK(last_status_);
    cucore_memory_resource_kind_t kind = CUCORE_MEMORY_RESOURCE_UNSET;
    CUCORE_EXPECT_OK(cucore_memory_resource_kind(pinned, &kind));
    EXPECT_EQ(kind, CUCORE_MEMORY_RESOURCE_PINNED);
    int id = 9, device_ok = 9, host_ok = 9;
    CUCORE_EXPECT_OK(cucore_memory_resource_device_id(pinned, &id));
    CUCORE_EXPECT_OK(cucore_memory_resource_accessibility(pinned, &device_ok, &host_ok));
    EXPECT_EQ(id, -1);
    EXPECT_EQ(device_ok, 1);
    EXPECT_EQ(host_ok, 1);
    void *raw_pool = nullptr;
    CUCORE_ASSERT_OK(cucore_memory_resource_handle(pinned, &raw_pool));
    ASSERT_NE(raw_pool, nullptr);
    // The creating device was granted read-write access (the raw driver agrees).
    cucore_access_t access = CUCORE_ACCESS_NONE;
    CUCORE_EXPECT_OK(cucore_memory_resource_peer_access(pinned, dev_, &access));
    EXPECT_EQ(access, CUCORE_ACCESS_READ_WRITE);
    {
        CUmemLocation location{};
        location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        location.id = cu_dev_;
        CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
        CU_EXPECT_OK(cu().MemPoolGetAccess(&flags, static_cast<CUmemoryPool>(raw_pool), &location));
        EXPECT_EQ(flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    }

    const std::uint64_t n = kMiB + 3;
    cucore_buffer_t *h = alloc(pinned, n, s_);
    ASSERT_NE(h, nullptr);
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));  // allocated in stream order: usable once it ran
    int d = 9, hh = 9, m = 9;
    CUCORE_EXPECT_OK(cucore_buffer_accessibility(h, &d, &hh, &m));
    EXPECT_EQ(d, 1);
    EXPECT_EQ(hh, 1);
    EXPECT_EQ(m, 0);
    const std::uint64_t address = gpu::address_of(h);
    EXPECT_EQ(pointer_attribute<CUmemoryPool>(address, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE),
              static_cast<CUmemoryPool>(raw_pool));
    // The host writes it directly; the device copies it.
    const Bytes data = pattern(static_cast<std::size_t>(n), 1);
    std::memcpy(reinterpret_cast<void *>(static_cast<std::uintptr_t>(address)), data.data(), data.size());
    cucore_memory_resource_t *pool = nullptr;
    CUCORE_ASSERT_OK(cucore_device_memory_resource_get_default(dev_, &pool));
    cucore_buffer_t *dev_buf = alloc(pool, n, s_);
    ASSERT_NE(dev_buf, nullptr);
    CUCORE_ASSERT_OK(cucore_buffer_copy(dev_buf, h, s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_TRUE(same_bytes(raw_read(gpu::address_of(dev_buf), data.size()), data));
    // The device fills it; the host reads it directly.
    CUCORE_ASSERT_OK(cucore_buffer_fill(h, 0x5C, 1, s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    const auto *bytes = reinterpret_cast<const std::uint8_t *>(static_cast<std::uintptr_t>(address));
    EXPECT_TRUE(same_bytes(Bytes(bytes, bytes + n), Bytes(static_cast<std::size_t>(n), 0x5C)));
    // And back from device memory.
    CUCORE_ASSERT_OK(cucore_buffer_copy(h, dev_buf, s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_TRUE(same_bytes(Bytes(bytes, bytes + n), data));
    CUCORE_EXPECT_OK(cucore_buffer_release(dev_buf));
    CUCORE_EXPECT_OK(cucore_buffer_release(h));
    CUCORE_EXPECT_OK(cucore_memory_resource_release(pool));
    CUCORE_EXPECT_OK(cucore_memory_resource_release(pinned));
}

// ---- Stream-ordered frees on another stream (gpu::check_free_on_waiting_stream) -------------

TEST_F(MemoryPoolKindsGpuTest, PinnedPoolFreesOnAStreamThatWaitedForTheUser) {
    cucore_memory_resource_t *pinned = pinned_pool();
    CUCORE_SKIP_IF_NOT_SUPPORTED(last_status_, "a pinned (host) memory pool");
    CUCORE_ASSERT_OK(last_status_);
    check_free_on_waiting_stream(dev_, pinned, 4 * kMiB);
    cucore_memory_resource_release(pinned);
}

TEST_F(MemoryPoolKindsGpuTest, DevicePoolFreesOnAStreamThatWaitedForTheUser) {
    cucore_memory_resource_t *pool = nullptr;
    CUCORE_ASSERT_OK(cucore_device_memory_resource_create(dev_, nullptr, &pool));
    check_free_on_waiting_stream(dev_, pool, 4 * kMiB);
    cucore_memory_resource_release(pool);
}

// ---- Two devices ---------------------------------------------------------------------------

TEST_F(MemoryPoolKindsGpuTest, PeerCopiesAndPeerAccessBetweenTwoDevices) {
    if (device_count_ < 2) GTEST_SKIP() << "needs 2 devices, this machine has " << device_count_;
    cucore_device_t *dev1 = nullptr;
    CUCORE_ASSERT_OK(cucore_device_get(1, &dev1));
    cucore_stream_t *s1 = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_create(dev1, nullptr, &s1));
    cucore_memory_resource_t *pool0 = nullptr, *pool1 = nullptr;
    CUCORE_ASSERT_OK(cucore_device_memory_resource_create(dev_, nullptr, &pool0));
    CUCORE_ASSERT_OK(cucore_device_memory_resource_create(dev1, nullptr, &pool1));
    const std::uint64_t n = 8 * kMiB + 9;
    cucore_buffer_t *a = alloc(pool0, n, s_), *b = alloc(pool1, n, s1);
    ASSERT_TRUE(a != nullptr && b != nullptr);
    const Bytes data = pattern(static_cast<std::size_t>(n), 6);
    write(a, data);
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s1));  // b allocated
    // A peer copy needs no peer access: device 0 -> device 1 on either stream.
    CUCORE_ASSERT_OK(cucore_buffer_copy(b, a, s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_TRUE(same_bytes(raw_read(gpu::address_of(b), data.size()), data));
    CUCORE_ASSERT_OK(cucore_buffer_fill(a, 0, 1, s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    CUCORE_ASSERT_OK(cucore_buffer_copy(a, b, s1));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s1));
    EXPECT_TRUE(same_bytes(read(a), data));

    int can_access = 0;
    CUCORE_ASSERT_OK(cucore_device_can_access_peer(dev1, dev_, &can_access));
    cucore_access_t access = CUCORE_ACCESS_READ_WRITE;
    CUCORE_EXPECT_OK(cucore_memory_resource_peer_access(pool0, dev1, &access));
    EXPECT_EQ(access, CUCORE_ACCESS_NONE) << "a new pool grants nothing to other devices";
    if (!can_access) {
        CUCORE_EXPECT_STATUS(cucore_memory_resource_set_peer_access(pool0, dev1, CUCORE_ACCESS_READ_WRITE),
                             CUCORE_ERROR_NOT_SUPPORTED);
        std::printf("[   INFO   ] device 1 cannot access device 0's memory: grant not checked\n");
    } else {
        CUCORE_ASSERT_OK(cucore_memory_resource_set_peer_access(pool0, dev1, CUCORE_ACCESS_READ_WRITE));
        CUCORE_EXPECT_OK(cucore_memory_resource_peer_access(pool0, dev1, &access));
        EXPECT_EQ(access, CUCORE_ACCESS_READ_WRITE);
        void *raw_pool = nullptr;
        CUCORE_ASSERT_OK(cucore_memory_resource_handle(pool0, &raw_pool));
        CUmemLocation location{};
        location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        location.id = 1;
        CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
        CU_EXPECT_OK(cu().MemPoolGetAccess(&flags, static_cast<CUmemoryPool>(raw_pool), &location));
        EXPECT_EQ(flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
        // Device 1's stream copies device 0's pool memory within device 1 terms.
        cucore_buffer_t *c = alloc(pool0, n, s_);
        CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
        CUCORE_ASSERT_OK(cucore_buffer_copy(c, a, s1));
        CUCORE_ASSERT_OK(cucore_stream_synchronize(s1));
        EXPECT_TRUE(same_bytes(read(c), data));
        cucore_buffer_release(c);
        CUCORE_ASSERT_OK(cucore_memory_resource_set_peer_access(pool0, dev1, CUCORE_ACCESS_NONE));
        CUCORE_EXPECT_OK(cucore_memory_resource_peer_access(pool0, dev1, &access));
        EXPECT_EQ(access, CUCORE_ACCESS_NONE);
    }
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s1));
    cucore_buffer_release(a);
    cucore_buffer_release(b);
    cucore_memory_resource_release(pool0);
    cucore_memory_resource_release(pool1);
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s1));
    cucore_stream_release(s1);
    cucore_device_release(dev1);
}

}  // namespace
