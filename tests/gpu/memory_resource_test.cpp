// Memory resources on a real GPU: the device's current pool as its default
// resource, set and reset; allocation's argument checks; legacy pinned host
// memory; and the C++ façade's resources of several kinds. Results are checked
// through libcucore and the raw driver (pointer and pool attributes).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "memory_gpu.hpp"

namespace {

using gpu::Bytes;
using gpu::cu;
using gpu::kMiB;
using gpu::pattern;
using gpu::same_bytes;
using gpu::address_of;
using gpu::device_id_of;
using gpu::kind_of;
using gpu::kJunkBuffer;
using gpu::repeated;
using gpu::size_of;

class MemoryResourceTest : public gpu::DefaultPoolGpuTest {};
class MemoryResourceKindsGpuTest : public gpu::PoolKindsGpuTest {};

TEST_F(MemoryResourceTest, DefaultResourceIsTheDevicesCurrentPool) {
    EXPECT_EQ(kind_of(pool_), CUCORE_MEMORY_RESOURCE_DEVICE);
    int id = -2, dev_ok = -1, host_ok = -1;
    CUCORE_EXPECT_OK(cucore_memory_resource_device_id(pool_, &id));
    EXPECT_EQ(id, 0);
    CUCORE_EXPECT_OK(cucore_memory_resource_accessibility(pool_, &dev_ok, &host_ok));
    EXPECT_EQ(dev_ok, 1);
    EXPECT_EQ(host_ok, 0);

    cucore_buffer_t *b = alloc(pool_, 3 * kMiB + 5, s_);
    ASSERT_NE(b, nullptr);
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_EQ(size_of(b), 3 * kMiB + 5);
    const std::uint64_t addr = address_of(b);
    EXPECT_NE(addr, 0u);
    EXPECT_EQ(device_id_of(b), 0);
    EXPECT_EQ(gpu::current_context(), nullptr);

    // The driver agrees: device 0's current pool, device 0's memory.
    CUmemoryPool current = nullptr;
    CU_EXPECT_OK(cu().DeviceGetMemPool(&current, cu_dev_));
    EXPECT_EQ(raw_pool_of(addr), current);
    int ordinal = -1;
    {
        gpu::ScopedContext scope(primary_);
        CU_EXPECT_OK(cu().PointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                              static_cast<CUdeviceptr>(addr)));
        unsigned int type = 0;
        CU_EXPECT_OK(cu().PointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                              static_cast<CUdeviceptr>(addr)));
        EXPECT_EQ(type, static_cast<unsigned int>(CU_MEMORYTYPE_DEVICE));
    }
    EXPECT_EQ(ordinal, 0);

    // The buffer names its resource (+1 reference).
    cucore_memory_resource_t *mr = nullptr;
    CUCORE_ASSERT_OK(cucore_buffer_memory_resource(b, &mr));
    ASSERT_NE(mr, nullptr);
    EXPECT_EQ(kind_of(mr), CUCORE_MEMORY_RESOURCE_DEVICE);
    CUCORE_EXPECT_OK(cucore_memory_resource_release(mr));

    // Releasing a resource of the current pool never destroys that pool: a new
    // resource for it still allocates from the same driver pool.
    CUCORE_EXPECT_OK(cucore_buffer_release(b));
    CUCORE_EXPECT_OK(cucore_memory_resource_release(pool_));
    CUCORE_ASSERT_OK(cucore_device_memory_resource_get_default(dev_, &pool_));
    b = alloc(pool_, kMiB, s_);
    ASSERT_NE(b, nullptr);
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_EQ(raw_pool_of(address_of(b)), current);
    CUCORE_EXPECT_OK(cucore_buffer_release(b));
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
}

TEST_F(MemoryResourceTest, TheDevicesDefaultResourceIsSharedAndResettable) {
    cucore::MemoryResource mine = cucore::MemoryResource::adopt(new_pool());
    cucore::Device dev = cucore::Device::get(0);
    dev.set_memory_resource(mine);
    cucore_memory_resource_t *got = nullptr;
    CUCORE_ASSERT_OK(cucore_device_get_memory_resource(dev_, &got));  // another handle of device 0 sees it
    EXPECT_EQ(got, mine.get());
    cucore_memory_resource_release(got);
    cucore_buffer_t *b = nullptr;
    CUCORE_ASSERT_OK(cucore_device_allocate(dev_, kMiB, s_, &b));
    void *pool = nullptr;
    CUCORE_ASSERT_OK(cucore_memory_resource_handle(mine.get(), &pool));
    EXPECT_EQ(raw_pool_of(address_of(b)), static_cast<CUmemoryPool>(pool)) << "allocated from the set resource";
    dev.reset_memory_resource();
    CUmemoryPool current = nullptr;
    CU_EXPECT_OK(cu().DeviceGetMemPool(&current, cu_dev_));
    CUCORE_ASSERT_OK(cucore_device_get_memory_resource(dev_, &got));
    CUCORE_ASSERT_OK(cucore_memory_resource_handle(got, &pool));
    EXPECT_EQ(static_cast<CUmemoryPool>(pool), current) << "reset to the device's current pool";
    cucore_memory_resource_release(got);
    CUCORE_EXPECT_OK(cucore_buffer_release(b));
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
}

TEST_F(MemoryResourceTest, AllocateArgumentErrors) {
    cucore_buffer_t *out = kJunkBuffer;
    // A pool needs a stream.
    CUCORE_EXPECT_STATUS(cucore_memory_resource_allocate(pool_, 16, nullptr, &out), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(out, nullptr);
    CUCORE_EXPECT_STATUS(cucore_memory_resource_allocate(pool_, 16, s_, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    out = kJunkBuffer;
    CUCORE_EXPECT_STATUS(cucore_memory_resource_allocate(nullptr, 16, s_, &out), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(out, nullptr);
    out = kJunkBuffer;
    CUCORE_EXPECT_STATUS(cucore_memory_resource_allocate(pool_, 16, reinterpret_cast<cucore_stream_t *>(pool_), &out),
                         CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(out, nullptr);
    // More than the device has.
    std::uint64_t total = 0;
    CUCORE_ASSERT_OK(cucore_device_total_memory(dev_, &total));
    out = kJunkBuffer;
    CUCORE_EXPECT_STATUS(cucore_memory_resource_allocate(pool_, total * 2, s_, &out), CUCORE_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(out, nullptr);
    // Queries with NULL outs.
    CUCORE_EXPECT_STATUS(cucore_memory_resource_kind(pool_, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_memory_resource_device_id(pool_, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    // Nothing was left behind, and the stream still works.
    EXPECT_EQ(live_buffers(), baseline_[CUCORE_OBJECT_BUFFER]);
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
}

TEST_F(MemoryResourceTest, StreamOfAnotherDeviceIsRejected) {
    if (device_count_ < 2) GTEST_SKIP() << "needs 2 devices, found " << device_count_;
    cucore_device_t *dev1 = nullptr;
    CUCORE_ASSERT_OK(cucore_device_get(1, &dev1));
    cucore_stream_t *s1 = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_create(dev1, nullptr, &s1));
    cucore_buffer_t *out = kJunkBuffer;
    CUCORE_EXPECT_STATUS(cucore_memory_resource_allocate(pool_, 16, s1, &out), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(out, nullptr);
    // Device 1's own pool gives device 1's memory.
    cucore_memory_resource_t *mr1 = nullptr;
    CUCORE_ASSERT_OK(cucore_device_memory_resource_get_default(dev1, &mr1));
    int id = -2;
    CUCORE_EXPECT_OK(cucore_memory_resource_device_id(mr1, &id));
    EXPECT_EQ(id, 1);
    cucore_buffer_t *b = alloc(mr1, 4096, s1);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(device_id_of(b), 1);
    CUCORE_EXPECT_OK(cucore_buffer_fill(b, 0x5A, 1, s1));
    EXPECT_TRUE(same_bytes(read(b, s1), repeated<std::uint8_t>(0x5A, 4096)));
    cucore_buffer_release(b);
    cucore_memory_resource_release(mr1);
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s1));
    cucore_stream_release(s1);
    cucore_device_release(dev1);
}

// ---- Legacy pinned host memory --------------------------------------------------

TEST_F(MemoryResourceTest, LegacyPinnedMemoryIsHostAccessible) {
    cucore_memory_resource_t *pinned = nullptr;
    CUCORE_ASSERT_OK(cucore_legacy_pinned_memory_resource_create(dev_, &pinned));
    EXPECT_EQ(kind_of(pinned), CUCORE_MEMORY_RESOURCE_LEGACY_PINNED);
    int id = 7, dev_ok = -1, host_ok = -1;
    CUCORE_EXPECT_OK(cucore_memory_resource_device_id(pinned, &id));
    CUCORE_EXPECT_OK(cucore_memory_resource_accessibility(pinned, &dev_ok, &host_ok));
    EXPECT_EQ(id, -1);
    EXPECT_EQ(dev_ok, 1);
    EXPECT_EQ(host_ok, 1);

    const std::uint64_t n = kMiB + 3;
    const Bytes data = pattern(static_cast<std::size_t>(n), 9);
    cucore_buffer_t *h1 = alloc(pinned, n, nullptr); // synchronous: no stream needed
    cucore_buffer_t *h2 = alloc(pinned, n, s_);      // a stream is accepted too
    cucore_buffer_t *d = alloc(pool_, n, s_);
    ASSERT_TRUE(h1 != nullptr && h2 != nullptr && d != nullptr);
    EXPECT_EQ(size_of(h1), n);
    EXPECT_EQ(device_id_of(h1), -1);
    cucore_memory_resource_t *mr = nullptr;
    CUCORE_EXPECT_OK(cucore_buffer_memory_resource(h1, &mr));
    ASSERT_NE(mr, nullptr);
    EXPECT_EQ(kind_of(mr), CUCORE_MEMORY_RESOURCE_LEGACY_PINNED);
    cucore_memory_resource_release(mr);
    const std::uint64_t a1 = address_of(h1), a2 = address_of(h2);
    ASSERT_NE(a1, 0u);
    ASSERT_NE(a2, 0u);
    {
        gpu::ScopedContext scope(primary_);
        unsigned int type = 0;
        CU_EXPECT_OK(cu().PointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, static_cast<CUdeviceptr>(a1)));
        EXPECT_EQ(type, static_cast<unsigned int>(CU_MEMORYTYPE_HOST));
    }
    // Written by the host directly, copied to the device and back.
    auto *p1 = reinterpret_cast<std::uint8_t *>(static_cast<std::uintptr_t>(a1));
    auto *p2 = reinterpret_cast<std::uint8_t *>(static_cast<std::uintptr_t>(a2));
    std::memcpy(p1, data.data(), data.size());
    std::memset(p2, 0xEE, static_cast<std::size_t>(n));
    CUCORE_ASSERT_OK(cucore_buffer_copy(d, h1, s_));
    CUCORE_ASSERT_OK(cucore_buffer_copy(h2, d, s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_TRUE(same_bytes(Bytes(p2, p2 + n), data));
    EXPECT_TRUE(same_bytes(raw_read(address_of(d), data.size()), data));
    // Host-memory copies and fills through the library land where the host sees them.
    const Bytes data2 = pattern(static_cast<std::size_t>(n), 10);
    CUCORE_ASSERT_OK(cucore_buffer_copy_from_host(h1, 0, data2.data(), n, s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_TRUE(same_bytes(Bytes(p1, p1 + n), data2));
    CUCORE_ASSERT_OK(cucore_buffer_fill(d, 0x6B, 1, s_));
    CUCORE_ASSERT_OK(cucore_buffer_copy(h2, d, s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_TRUE(same_bytes(Bytes(p2, p2 + n), repeated<std::uint8_t>(0x6B, static_cast<std::size_t>(n))));
    // A view of pinned memory is host memory at the offset.
    cucore_buffer_t *v = nullptr;
    CUCORE_ASSERT_OK(cucore_buffer_view(h1, 10, 20, &v));
    EXPECT_EQ(address_of(v), a1 + 10);
    EXPECT_EQ(device_id_of(v), -1);
    cucore_buffer_release(v);
    // Closing frees it (synchronously); the resource outlives our handle.
    CUCORE_EXPECT_OK(cucore_memory_resource_release(pinned));
    CUCORE_EXPECT_OK(cucore_buffer_close(h2, nullptr));
    EXPECT_EQ(address_of(h2), 0u);
    cucore_buffer_release(h1);
    cucore_buffer_release(h2);
    cucore_buffer_release(d);
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
    EXPECT_EQ(gpu::current_context(), nullptr);
}

// ---- The C++ façade -------------------------------------------------------------------

TEST_F(MemoryResourceTest, FacadeResourcesDescribeThemselves) {
    const cucore::Device d(0);
    const cucore::MemoryResource def = cucore::MemoryResource::device_default(d);
    EXPECT_EQ(def.kind(), CUCORE_MEMORY_RESOURCE_DEVICE);
    EXPECT_EQ(def.device_id(), 0);
    EXPECT_TRUE(def.is_device_accessible());
    EXPECT_FALSE(def.is_host_accessible());
    const cucore::MemoryResource pool = cucore::MemoryResource::device_pool(d, {0, 8 * kMiB});
    EXPECT_EQ(pool.kind(), CUCORE_MEMORY_RESOURCE_DEVICE);
    EXPECT_NE(pool, def);
    const cucore::MemoryResource pinned = cucore::MemoryResource::legacy_pinned(d);
    EXPECT_EQ(pinned.kind(), CUCORE_MEMORY_RESOURCE_LEGACY_PINNED);
    EXPECT_EQ(pinned.device_id(), -1);
    EXPECT_TRUE(pinned.is_device_accessible());
    EXPECT_TRUE(pinned.is_host_accessible());
    const cucore::Stream s = d.create_stream();
    const cucore::Buffer b = pool.allocate(kMiB, s);
    s.synchronize();
    EXPECT_EQ(raw_pool_attribute(raw_pool_of(b.address()), CU_MEMPOOL_ATTR_RELEASE_THRESHOLD), 8 * kMiB);
    EXPECT_EQ(b.memory_resource().kind(), CUCORE_MEMORY_RESOURCE_DEVICE);
    // Device::allocate takes the device's current pool.
    const cucore::Buffer c = d.allocate(4096, s);
    s.synchronize();
    CUmemoryPool current = nullptr;
    CU_EXPECT_OK(cu().DeviceGetMemPool(&current, cu_dev_));
    EXPECT_EQ(raw_pool_of(c.address()), current);
    EXPECT_EQ(c.size(), 4096u);
    EXPECT_EQ(c.device_id(), 0);
    // Errors throw with their status.
    CUCORE_EXPECT_THROW_STATUS(def.allocate(16), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_THROW_STATUS(cucore::MemoryResource().kind(), CUCORE_ERROR_INVALID_HANDLE);
    CUCORE_EXPECT_THROW_STATUS(cucore::MemoryResource::device_default(cucore::Device()),
                               CUCORE_ERROR_INVALID_HANDLE);
}

TEST_F(MemoryResourceKindsGpuTest, FacadePinnedAndManagedPools) {
    cucore::Device dev = cucore::Device::get(0);
    cucore::Stream s = dev.create_stream();
    const Bytes data = pattern(kMiB, 5);
    try {
        const cucore::MemoryResource pinned = cucore::MemoryResource::pinned_pool(dev);
        EXPECT_EQ(pinned.kind(), CUCORE_MEMORY_RESOURCE_PINNED);
        const cucore::Buffer h = pinned.allocate(kMiB, s);
        h.copy_from_host(data, s);
        const cucore::Buffer copy = h.copy_to(s);  // a new buffer of the same pool
        s.synchronize();
        EXPECT_EQ(copy.memory_resource(), pinned);
        EXPECT_TRUE(copy.is_host_accessible());
        const auto *p = static_cast<const std::uint8_t *>(copy.data());
        EXPECT_TRUE(same_bytes(Bytes(p, p + kMiB), data));
    } catch (const cucore::Error &e) {
        if (e.status() != CUCORE_ERROR_NOT_SUPPORTED) throw;
        std::printf("[   INFO   ] pinned pools not supported here: %s\n", e.what());
    }
    try {
        const cucore::MemoryResource managed = cucore::MemoryResource::managed(dev);
        EXPECT_EQ(managed.handle(), nullptr) << "the default: cuMemAllocManaged";
        const cucore::Buffer m = managed.allocate(kMiB, s);
        EXPECT_TRUE(m.is_managed());
        m.copy_from_host(data, s);
        s.synchronize();
        const auto *p = static_cast<const std::uint8_t *>(m.data());
        EXPECT_TRUE(same_bytes(Bytes(p, p + kMiB), data)) << "managed memory read by the host";
        m.fill(std::uint8_t{0x19}, s);
        s.synchronize();
        EXPECT_TRUE(same_bytes(Bytes(p, p + kMiB), Bytes(kMiB, 0x19)));
    } catch (const cucore::Error &e) {
        if (e.status() != CUCORE_ERROR_NOT_SUPPORTED) throw;
        std::printf("[   INFO   ] managed memory not supported here: %s\n", e.what());
    }
    s.synchronize();
}

}  // namespace
