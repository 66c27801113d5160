// Pinned pools, managed memory (cuMemAllocManaged and managed pools), user resources, stream-ordered frees on another
// stream, and copies and peer access between two devices, on a real GPU. Data
// is checked byte by byte through libcucore, through the raw driver and, for
// host-accessible memory, by the host directly.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include "memory_gpu.hpp"

namespace {

using gpu::Bytes;
using gpu::cu;
using gpu::Gate;
using gpu::kMiB;
using gpu::pattern;
using gpu::same_bytes;

class MemoryResourcesGpuTest : public gpu::MemoryGpuTest {
protected:
    // A new pinned pool, or a skip when the driver has no host pools.
    cucore_memory_resource_t *pinned_pool() {
        cucore_memory_resource_t *mr = nullptr;
        last_status_ = cucore_pinned_memory_resource_create(dev_, nullptr, &mr);
        return mr;
    }
    // A new managed memory pool (options.use_pool), or NULL with last_status_.
    cucore_memory_resource_t *managed_pool() {
        cucore_managed_memory_resource_options_t o = CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
        o.use_pool = 1;
        cucore_memory_resource_t *mr = nullptr;
        last_status_ = cucore_managed_memory_resource_create(dev_, &o, &mr);
        return mr;
    }
    // Managed memory of `managed` allocated on `stream` (NULL: synchronous)
    // written and read by the host and the device, through views and copies.
    // Leaves the buffer holding `data` (returned, +1) for the caller's checks.
    cucore_buffer_t *managed_round_trip(cucore_memory_resource_t *managed, cucore_stream_t *stream, const Bytes &data);
    cucore_status_t last_status_ = CUCORE_SUCCESS;
};

// ---- Pinned pools ---------------------------------------------------------------

TEST_F(MemoryResourcesGpuTest, PinnedPoolAllocateFillCopyFree) {
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

// ---- Managed memory ---------------------------------------------------------------

cucore_buffer_t *MemoryResourcesGpuTest::managed_round_trip(cucore_memory_resource_t *managed,
                                                           cucore_stream_t *stream, const Bytes &data) {
    const std::uint64_t n = data.size();
    cucore_buffer_t *b = alloc(managed, n, stream);
    if (b == nullptr) return nullptr;
    EXPECT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS) << cucore_last_error_message();
    int d = 9, h = 9, m = 9;
    CUCORE_EXPECT_OK(cucore_buffer_accessibility(b, &d, &h, &m));
    EXPECT_EQ(d, 1);
    EXPECT_EQ(h, 1);
    EXPECT_EQ(m, 1);
    const std::uint64_t address = gpu::address_of(b);
    EXPECT_EQ(pointer_attribute<unsigned int>(address, CU_POINTER_ATTRIBUTE_IS_MANAGED), 1u)
        << "the driver says it is managed memory";
    auto *host = reinterpret_cast<std::uint8_t *>(static_cast<std::uintptr_t>(address));
    // Host writes, device copies out.
    std::memcpy(host, data.data(), data.size());
    cucore_memory_resource_t *pool = nullptr;
    CUCORE_EXPECT_OK(cucore_device_memory_resource_get_default(dev_, &pool));
    cucore_buffer_t *dev_buf = alloc(pool, n, s_);
    if (dev_buf == nullptr) {
        cucore_memory_resource_release(pool);
        return b;
    }
    CUCORE_EXPECT_OK(cucore_buffer_copy(dev_buf, b, s_));
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
    EXPECT_TRUE(same_bytes(raw_read(gpu::address_of(dev_buf), data.size()), data));
    EXPECT_TRUE(same_bytes(read(b), data));
    // Device fills, host reads after synchronizing. n is not a multiple of 4:
    // a 4-byte pattern goes into a view of the whole words.
    Bytes expected(static_cast<std::size_t>(n), 0xA7);
    cucore_buffer_t *words = nullptr;
    CUCORE_EXPECT_OK(cucore_buffer_view(b, 0, n & ~std::uint64_t{3}, &words));
    CUCORE_EXPECT_OK(cucore_buffer_fill(words, 0xA7A7A7A7u, 4, s_));
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
    std::memcpy(expected.data() + (n & ~std::uint64_t{3}), data.data() + (n & ~std::uint64_t{3}), n & 3);
    EXPECT_TRUE(same_bytes(Bytes(host, host + n), expected));
    // Device memory copied in, read by the host.
    CUCORE_EXPECT_OK(cucore_buffer_copy(b, dev_buf, s_));
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
    EXPECT_TRUE(same_bytes(Bytes(host, host + n), data));
    CUCORE_EXPECT_OK(cucore_buffer_release(words));
    CUCORE_EXPECT_OK(cucore_buffer_release(dev_buf));
    CUCORE_EXPECT_OK(cucore_memory_resource_release(pool));
    return b;
}

// The default: cuMemAllocManaged, synchronous (no stream needed), no pool.
TEST_F(MemoryResourcesGpuTest, ManagedMemoryAllocateFillCopyFreeAndHostAccess) {
    cucore_memory_resource_t *managed = nullptr;
    const cucore_status_t st = cucore_managed_memory_resource_create(dev_, nullptr, &managed);
    CUCORE_SKIP_IF_NOT_SUPPORTED(st, "managed memory");
    CUCORE_ASSERT_OK(st);
    void *raw_pool = reinterpret_cast<void *>(0x1);
    CUCORE_ASSERT_OK(cucore_memory_resource_handle(managed, &raw_pool));
    EXPECT_EQ(raw_pool, nullptr) << "no pool";
    std::uint64_t threshold = 0;
    CUCORE_EXPECT_STATUS(
        cucore_memory_resource_pool_attribute(managed, CUCORE_POOL_ATTRIBUTE_RELEASE_THRESHOLD, &threshold),
        CUCORE_ERROR_NOT_SUPPORTED);
    const Bytes data = pattern(static_cast<std::size_t>(2 * kMiB + 5), 2);
    cucore_buffer_t *b = managed_round_trip(managed, nullptr, data);
    ASSERT_NE(b, nullptr);
    cucore_stream_t *dealloc = s_;
    CUCORE_EXPECT_OK(cucore_buffer_deallocation_stream(b, &dealloc));
    EXPECT_EQ(dealloc, nullptr) << "freed synchronously (cuMemFree)";
    // Allocated on a stream too (which it does not keep).
    cucore_buffer_t *b2 = managed_round_trip(managed, s_, pattern(static_cast<std::size_t>(kMiB), 12));
    EXPECT_NE(b2, nullptr);
    CUCORE_EXPECT_OK(cucore_buffer_release(b2));
    CUCORE_EXPECT_OK(cucore_buffer_release(b));
    CUCORE_EXPECT_OK(cucore_memory_resource_release(managed));
}

// A managed pool (options.use_pool): stream-ordered; prefetch works on its
// memory, advice may not (an H100 with driver 580 answers cuMemAdvise with
// CUDA_ERROR_NOT_SUPPORTED there), which is reported, not failed.
TEST_F(MemoryResourcesGpuTest, ManagedPoolAllocateFillCopyPrefetchAndHostAccess) {
    cucore_memory_resource_t *managed = managed_pool();
    CUCORE_SKIP_IF_NOT_SUPPORTED(last_status_, "a managed memory pool (CUDA 13 driver)");
    CUCORE_ASSERT_OK(last_status_);
    void *raw_pool = nullptr;
    CUCORE_ASSERT_OK(cucore_memory_resource_handle(managed, &raw_pool));
    ASSERT_NE(raw_pool, nullptr);
    const Bytes data = pattern(static_cast<std::size_t>(2 * kMiB + 5), 3);
    cucore_buffer_t *b = managed_round_trip(managed, s_, data);
    ASSERT_NE(b, nullptr);
    const std::uint64_t address = gpu::address_of(b);
    EXPECT_EQ(pointer_attribute<CUmemoryPool>(address, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE),
              static_cast<CUmemoryPool>(raw_pool))
        << "the memory comes from the pool";
    cucore_stream_t *dealloc = nullptr;
    CUCORE_EXPECT_OK(cucore_buffer_deallocation_stream(b, &dealloc));
    EXPECT_EQ(dealloc, s_) << "stream-ordered: freed on its allocation stream";
    cucore_stream_release(dealloc);
    // Prefetch to the device and back to the host: the data moves with the pages.
    const auto *host = reinterpret_cast<const std::uint8_t *>(static_cast<std::uintptr_t>(address));
    CUCORE_ASSERT_OK(cucore_buffer_prefetch(b, cucore_location_t{CUCORE_LOCATION_DEVICE, 0}, s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_TRUE(same_bytes(raw_read(address, data.size()), data));
    CUCORE_ASSERT_OK(cucore_buffer_prefetch(b, cucore_location_t{CUCORE_LOCATION_HOST, 0}, s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_TRUE(same_bytes(Bytes(host, host + data.size()), data));
    // Advice: works, or NOT_SUPPORTED (reported); nothing else.
    const cucore_status_t advised =
        cucore_buffer_advise(b, CUCORE_ADVICE_SET_READ_MOSTLY, cucore_location_t{CUCORE_LOCATION_NONE, 0});
    if (advised == CUCORE_ERROR_NOT_SUPPORTED) {
        std::printf("[   INFO   ] advice on managed-pool memory is not supported by this driver: %s\n",
                    cucore_last_error_message());
    } else {
        CUCORE_EXPECT_OK(advised);
        int read_mostly = -1;
        CUCORE_EXPECT_OK(cucore_buffer_advice(b, &read_mostly, nullptr));
        EXPECT_EQ(read_mostly, 1);
        CUCORE_EXPECT_OK(
            cucore_buffer_advise(b, CUCORE_ADVICE_UNSET_READ_MOSTLY, cucore_location_t{CUCORE_LOCATION_NONE, 0}));
    }
    EXPECT_TRUE(same_bytes(read(b), data)) << "the data survives prefetches and advice";
    CUCORE_EXPECT_OK(cucore_buffer_release(b));
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
    CUCORE_EXPECT_OK(cucore_memory_resource_release(managed));
}

// ---- Stream-ordered frees on another stream -----------------------------------------

// Stream A reads a buffer behind a closed gate; the buffer is freed on stream B,
// which waits for A, while its last user (A) has not run; an unrelated stream C
// then allocates as much from the pool and overwrites it. Freed on B after A,
// the memory cannot reach C before A's read, so A must read the original bytes.
void check_free_on_waiting_stream(cucore_device_t *dev, cucore_memory_resource_t *mr, std::uint64_t n) {
    cucore_stream_t *a = nullptr, *b = nullptr, *c = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_create(dev, nullptr, &a));
    CUCORE_ASSERT_OK(cucore_stream_create(dev, nullptr, &b));
    CUCORE_ASSERT_OK(cucore_stream_create(dev, nullptr, &c));
    // The reader's destination: page-locked, so the gated copy never makes a call wait.
    cucore_memory_resource_t *legacy = nullptr;
    cucore_buffer_t *out = nullptr, *buf = nullptr, *buf2 = nullptr;
    CUCORE_ASSERT_OK(cucore_legacy_pinned_memory_resource_create(dev, &legacy));
    CUCORE_ASSERT_OK(cucore_memory_resource_allocate(legacy, n, nullptr, &out));
    auto *out_bytes = reinterpret_cast<std::uint8_t *>(static_cast<std::uintptr_t>(gpu::address_of(out)));
    std::memset(out_bytes, 0xEE, static_cast<std::size_t>(n));
    {
        Gate gate;
        CUCORE_ASSERT_OK(cucore_memory_resource_allocate(mr, n, a, &buf));
        CUCORE_ASSERT_OK(cucore_buffer_fill(buf, 0x5A, 1, a));
        CUCORE_ASSERT_OK(gpu::launch(a, gate.waiter()));
        CUCORE_ASSERT_OK(cucore_buffer_copy(out, buf, a));
        gate.open_after(std::chrono::milliseconds(3000));  // a safety net, should a call below wait
        CUCORE_EXPECT_OK(cucore_stream_wait_stream(b, a));
        CUCORE_EXPECT_OK(cucore_buffer_set_deallocation_stream(buf, b));
        cucore_stream_t *dealloc = nullptr;
        CUCORE_EXPECT_OK(cucore_buffer_deallocation_stream(buf, &dealloc));
        EXPECT_EQ(dealloc, b);
        cucore_stream_release(dealloc);
        CUCORE_EXPECT_OK(cucore_buffer_release(buf));
        buf = nullptr;
        CUCORE_ASSERT_OK(cucore_memory_resource_allocate(mr, n, c, &buf2));
        CUCORE_ASSERT_OK(cucore_buffer_fill(buf2, 0xA5, 1, c));
        gpu::sleep_ms(50);
        if (gate.is_open()) std::printf("[   INFO   ] a call waited for gated work; the ordering was not stressed\n");
        gate.open();
        CUCORE_EXPECT_OK(cucore_stream_synchronize(a));
        CUCORE_EXPECT_OK(cucore_stream_synchronize(b));
        CUCORE_EXPECT_OK(cucore_stream_synchronize(c));
    }
    EXPECT_TRUE(same_bytes(Bytes(out_bytes, out_bytes + n), Bytes(static_cast<std::size_t>(n), 0x5A)))
        << "the reader saw the memory after it had gone to another stream";
    cucore_buffer_release(buf2);
    cucore_buffer_release(out);
    cucore_memory_resource_release(legacy);
    for (cucore_stream_t *s : {a, b, c}) {
        CUCORE_EXPECT_OK(cucore_stream_synchronize(s));
        cucore_stream_release(s);
    }
}

TEST_F(MemoryResourcesGpuTest, PinnedPoolFreesOnAStreamThatWaitedForTheUser) {
    cucore_memory_resource_t *pinned = pinned_pool();
    CUCORE_SKIP_IF_NOT_SUPPORTED(last_status_, "a pinned (host) memory pool");
    CUCORE_ASSERT_OK(last_status_);
    check_free_on_waiting_stream(dev_, pinned, 4 * kMiB);
    cucore_memory_resource_release(pinned);
}

TEST_F(MemoryResourcesGpuTest, ManagedPoolFreesOnAStreamThatWaitedForTheUser) {
    cucore_memory_resource_t *managed = managed_pool();
    CUCORE_SKIP_IF_NOT_SUPPORTED(last_status_, "a managed memory pool (CUDA 13 driver)");
    CUCORE_ASSERT_OK(last_status_);
    check_free_on_waiting_stream(dev_, managed, 4 * kMiB);
    cucore_memory_resource_release(managed);
}

TEST_F(MemoryResourcesGpuTest, DevicePoolFreesOnAStreamThatWaitedForTheUser) {
    cucore_memory_resource_t *pool = nullptr;
    CUCORE_ASSERT_OK(cucore_device_memory_resource_create(dev_, nullptr, &pool));
    check_free_on_waiting_stream(dev_, pool, 4 * kMiB);
    cucore_memory_resource_release(pool);
}

// ---- A user resource over raw cuMemAlloc -----------------------------------------------

struct RawAllocator {
    CUcontext context = nullptr;
    std::mutex mutex;
    std::vector<std::uint64_t> allocated, freed;
    std::vector<cucore_stream_t *> streams;
    CUresult last_free = CUDA_ERROR_UNKNOWN;
    std::atomic<int> destroyed{0};

    static cucore_status_t allocate(void *self, std::uint64_t size, cucore_stream_t *stream, std::uint64_t *address) {
        auto *r = static_cast<RawAllocator *>(self);
        CUdeviceptr ptr = 0;
        CUresult result;
        {
            gpu::ScopedContext scope(r->context);
            result = cu().MemAlloc(&ptr, static_cast<size_t>(size));
        }
        if (result == CUDA_ERROR_OUT_OF_MEMORY) return CUCORE_ERROR_OUT_OF_MEMORY;
        if (result != CUDA_SUCCESS) return CUCORE_ERROR_CUDA;
        std::lock_guard<std::mutex> lock(r->mutex);
        r->allocated.push_back(ptr);
        r->streams.push_back(stream);
        *address = ptr;
        return CUCORE_SUCCESS;
    }
    static cucore_status_t deallocate(void *self, std::uint64_t address, std::uint64_t, cucore_stream_t *) {
        auto *r = static_cast<RawAllocator *>(self);
        CUresult result;
        {
            gpu::ScopedContext scope(r->context);
            result = cu().MemFree(static_cast<CUdeviceptr>(address));
        }
        std::lock_guard<std::mutex> lock(r->mutex);
        r->freed.push_back(address);
        r->last_free = result;
        return result == CUDA_SUCCESS ? CUCORE_SUCCESS : CUCORE_ERROR_CUDA;  // a failure is a release error
    }
    static void destroy(void *self) { ++static_cast<RawAllocator *>(self)->destroyed; }
};

TEST_F(MemoryResourcesGpuTest, UserResourceOverRawCuMemAlloc) {
    RawAllocator raw_alloc;
    raw_alloc.context = primary_;
    cucore_memory_resource_callbacks_t callbacks{};
    callbacks.struct_size = sizeof callbacks;
    callbacks.allocate = &RawAllocator::allocate;
    callbacks.deallocate = &RawAllocator::deallocate;
    callbacks.destroy = &RawAllocator::destroy;
    callbacks.user_data = &raw_alloc;
    callbacks.device_id = 0;
    callbacks.device_accessible = 1;
    cucore_memory_resource_t *user = nullptr;
    CUCORE_ASSERT_OK(cucore_user_memory_resource_create(&callbacks, &user));
    const std::uint64_t n = 3 * kMiB + 1;
    cucore_buffer_t *b = alloc(user, n, s_);
    ASSERT_NE(b, nullptr);
    ASSERT_EQ(raw_alloc.allocated.size(), 1u);
    EXPECT_EQ(gpu::address_of(b), raw_alloc.allocated[0]);
    EXPECT_EQ(raw_alloc.streams[0], s_);
    EXPECT_EQ(pointer_attribute<int>(gpu::address_of(b), CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL), 0);
    int device_id = 9;
    CUCORE_EXPECT_OK(cucore_buffer_device_id(b, &device_id));
    EXPECT_EQ(device_id, 0);
    // The library's copies and fills reach the memory; the raw driver agrees.
    const Bytes data = pattern(static_cast<std::size_t>(n), 3);
    write(b, data);
    EXPECT_TRUE(same_bytes(raw_read(gpu::address_of(b), data.size()), data));
    const Bytes raw_data = pattern(static_cast<std::size_t>(n), 4);
    raw_write(gpu::address_of(b), raw_data);
    EXPECT_TRUE(same_bytes(read(b), raw_data));
    CUCORE_ASSERT_OK(cucore_buffer_fill(b, 0x6B, 1, s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_TRUE(same_bytes(raw_read(gpu::address_of(b), data.size()), Bytes(static_cast<std::size_t>(n), 0x6B)));
    // Released in any order: freed with the buffer, destroyed with the last reference.
    std::uint64_t release_errors_before = 0;
    CUCORE_ASSERT_OK(cucore_release_error_count(&release_errors_before));
    CUCORE_EXPECT_OK(cucore_memory_resource_release(user));
    EXPECT_EQ(raw_alloc.destroyed.load(), 0);
    CUCORE_EXPECT_OK(cucore_buffer_release(b));
    ASSERT_EQ(raw_alloc.freed.size(), 1u);
    EXPECT_EQ(raw_alloc.freed[0], raw_alloc.allocated[0]);
    EXPECT_EQ(raw_alloc.last_free, CUDA_SUCCESS) << raw::error_name(raw_alloc.last_free);
    std::uint64_t release_errors_after = 0;
    CUCORE_ASSERT_OK(cucore_release_error_count(&release_errors_after));
    EXPECT_EQ(release_errors_after, release_errors_before) << "a successful free reports nothing";
    EXPECT_EQ(raw_alloc.destroyed.load(), 1);
}

// ---- The façade --------------------------------------------------------------------------

TEST_F(MemoryResourcesGpuTest, FacadePinnedAndManagedPools) {
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

// ---- Two devices ---------------------------------------------------------------------------

TEST_F(MemoryResourcesGpuTest, PeerCopiesAndPeerAccessBetweenTwoDevices) {
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

} // namespace
