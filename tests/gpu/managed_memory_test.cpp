// Managed memory on a real GPU. The resource (ManagedMemoryGpuTest):
// cuMemAllocManaged (the default) and managed pools, written and read by the
// host and the device, freed in stream order. Managed buffers
// (ManagedBufferGpuTest), from the default managed resource (drivers refuse
// advice on managed-pool memory): advice set through libcucore is what the raw
// driver reports (cuMemRangeGetAttribute) and what libcucore reads back; a
// resource's preferred location is advised on each allocation; prefetches move
// the last prefetch location; discards leave memory that takes new data. Skips
// with the reason where there is no managed memory, no managed pool or no
// discard (before CUDA 13).
#include <cstdint>
#include <cstring>
#include <vector>

#include "memory_gpu.hpp"

namespace {

using gpu::Bytes;
using gpu::cu;
using gpu::kMiB;
using gpu::pattern;
using gpu::same_bytes;
using gpu::check_free_on_waiting_stream;

class ManagedMemoryGpuTest : public gpu::PoolKindsGpuTest {
protected:
    // Managed memory of `managed` allocated on `stream` (NULL: synchronous)
    // written and read by the host and the device, through views and copies.
    // Leaves the buffer holding `data` (returned, +1) for the caller's checks.
    cucore_buffer_t *managed_round_trip(cucore_memory_resource_t *managed, cucore_stream_t *stream, const Bytes &data);
};

bool is_host(cucore_location_t l) {
    return l.type == CUCORE_LOCATION_HOST || l.type == CUCORE_LOCATION_HOST_NUMA ||
           l.type == CUCORE_LOCATION_HOST_NUMA_CURRENT;
}

// A managed buffer from the default managed resource (cuMemAllocManaged).
class ManagedBufferGpuTest : public gpu::MemoryGpuTest {
protected:
    void SetUp() override {
        gpu::MemoryGpuTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        const cucore_status_t st = cucore_managed_memory_resource_create(dev_, nullptr, &managed_);
        CUCORE_SKIP_IF_NOT_SUPPORTED(st, "managed memory");
        CUCORE_ASSERT_OK(st);
        b_ = alloc(managed_, kSize, s_);
        ASSERT_NE(b_, nullptr);
        CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    }
    void TearDown() override {
        if (b_ != nullptr) cucore_buffer_release(b_);
        if (managed_ != nullptr) cucore_memory_resource_release(managed_);
        b_ = nullptr;
        managed_ = nullptr;
        gpu::MemoryGpuTest::TearDown();
    }
    // A 4-byte range attribute of `b` (NULL: b_) through the raw driver.
    int raw_attribute(CUmem_range_attribute attribute, const cucore_buffer_t *b = nullptr) {
        if (b == nullptr) b = b_;
        int value = -99;
        gpu::ScopedContext scope(primary_);
        const CUresult r = cu().MemRangeGetAttribute(&value, sizeof value, attribute,
                                                     static_cast<CUdeviceptr>(gpu::address_of(b)), gpu::size_of(b));
        EXPECT_EQ(r, CUDA_SUCCESS) << "cuMemRangeGetAttribute(" << static_cast<int>(attribute)
                                   << ") -> " << raw::error_name(r);
        return value;
    }
    bool raw_accessed_by(int device) {
        int devices[32];
        for (int &d : devices) d = -2;
        gpu::ScopedContext scope(primary_);
        const CUresult r = cu().MemRangeGetAttribute(devices, sizeof devices, CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY,
                                                     static_cast<CUdeviceptr>(gpu::address_of(b_)), kSize);
        EXPECT_EQ(r, CUDA_SUCCESS) << raw::error_name(r);
        for (int d : devices)
            if (d == device) return true;
        return false;
    }
    cucore_location_t preferred(const cucore_buffer_t *b = nullptr) {
        cucore_location_t l{static_cast<cucore_location_type_t>(-1), -1};
        EXPECT_EQ(cucore_buffer_advice(b != nullptr ? b : b_, nullptr, &l), CUCORE_SUCCESS)
            << cucore_last_error_message();
        return l;
    }
    cucore_location_t last_prefetch() {
        cucore_location_t l{static_cast<cucore_location_type_t>(-1), -1};
        EXPECT_EQ(cucore_buffer_last_prefetch_location(b_, &l), CUCORE_SUCCESS) << cucore_last_error_message();
        return l;
    }
    static constexpr std::uint64_t kSize = 4 * kMiB;
    cucore_memory_resource_t *managed_ = nullptr;
    cucore_buffer_t *b_ = nullptr;
};

// ---- The resource: cuMemAllocManaged and managed pools -----------------------------

cucore_buffer_t *ManagedMemoryGpuTest::managed_round_trip(cucore_memory_resource_t *managed,
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

TEST_F(ManagedMemoryGpuTest, ManagedMemoryAllocateFillCopyFreeAndHostAccess) {
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

TEST_F(ManagedMemoryGpuTest, ManagedPoolAllocateFillCopyPrefetchAndHostAccess) {
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

TEST_F(ManagedMemoryGpuTest, ManagedPoolFreesOnAStreamThatWaitedForTheUser) {
    cucore_memory_resource_t *managed = managed_pool();
    CUCORE_SKIP_IF_NOT_SUPPORTED(last_status_, "a managed memory pool (CUDA 13 driver)");
    CUCORE_ASSERT_OK(last_status_);
    check_free_on_waiting_stream(dev_, managed, 4 * kMiB);
    cucore_memory_resource_release(managed);
}

// ---- Managed buffers: advice, prefetch, discard ----------------------------------------

TEST_F(ManagedBufferGpuTest, ReadMostlyAdviceRoundTrips) {
    int read_mostly = -1;
    CUCORE_ASSERT_OK(cucore_buffer_advice(b_, &read_mostly, nullptr));
    EXPECT_EQ(read_mostly, 0);
    CUCORE_ASSERT_OK(cucore_buffer_advise(b_, CUCORE_ADVICE_SET_READ_MOSTLY, cucore_location_t{CUCORE_LOCATION_NONE, 0}));
    CUCORE_ASSERT_OK(cucore_buffer_advice(b_, &read_mostly, nullptr));
    EXPECT_EQ(read_mostly, 1);
    EXPECT_EQ(raw_attribute(CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY), 1) << "the driver agrees";
    CUCORE_ASSERT_OK(
        cucore_buffer_advise(b_, CUCORE_ADVICE_UNSET_READ_MOSTLY, cucore_location_t{CUCORE_LOCATION_NONE, 0}));
    CUCORE_ASSERT_OK(cucore_buffer_advice(b_, &read_mostly, nullptr));
    EXPECT_EQ(read_mostly, 0);
    EXPECT_EQ(raw_attribute(CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY), 0);
    EXPECT_EQ(gpu::current_context(), nullptr);
}

TEST_F(ManagedBufferGpuTest, PreferredLocationAdviceRoundTrips) {
    EXPECT_EQ(preferred().type, CUCORE_LOCATION_NONE) << "none yet";
    CUCORE_ASSERT_OK(cucore_buffer_advise(b_, CUCORE_ADVICE_SET_PREFERRED_LOCATION,
                                          cucore_location_t{CUCORE_LOCATION_DEVICE, 0}));
    cucore_location_t l = preferred();
    EXPECT_EQ(l.type, CUCORE_LOCATION_DEVICE);
    EXPECT_EQ(l.id, 0);
    EXPECT_EQ(raw_attribute(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION), 0) << "the driver: device 0";
    CUCORE_ASSERT_OK(cucore_buffer_advise(b_, CUCORE_ADVICE_SET_PREFERRED_LOCATION,
                                          cucore_location_t{CUCORE_LOCATION_HOST, 0}));
    l = preferred();
    EXPECT_TRUE(is_host(l)) << "type " << static_cast<int>(l.type);
    EXPECT_EQ(raw_attribute(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION), -1) << "the driver: CU_DEVICE_CPU";
    CUCORE_ASSERT_OK(cucore_buffer_advise(b_, CUCORE_ADVICE_UNSET_PREFERRED_LOCATION,
                                          cucore_location_t{CUCORE_LOCATION_NONE, 0}));
    EXPECT_EQ(preferred().type, CUCORE_LOCATION_NONE);
    EXPECT_EQ(raw_attribute(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION), -2) << "the driver: CU_DEVICE_INVALID";
}

// options.preferred_location of a resource without a pool: advised on every
// allocation (the driver reports it), and the memory holds data as any other.

TEST_F(ManagedBufferGpuTest, ResourcePreferredLocationIsAdvisedOnEachAllocation) {
    struct Case {
        cucore_location_t location;
        int raw;  // what cuMemRangeGetAttribute(PREFERRED_LOCATION) says
    };
    const Case cases[] = {{{CUCORE_LOCATION_DEVICE, 0}, 0}, {{CUCORE_LOCATION_HOST, 0}, -1}};
    for (const Case &c : cases) {
        SCOPED_TRACE(static_cast<int>(c.location.type));
        cucore_managed_memory_resource_options_t o = CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
        o.preferred_location = c.location;
        cucore_memory_resource_t *mr = nullptr;
        CUCORE_ASSERT_OK(cucore_managed_memory_resource_create(dev_, &o, &mr));
        for (int i = 0; i < 2; ++i) {
            cucore_buffer_t *b = alloc(mr, kMiB + 7, nullptr);
            ASSERT_NE(b, nullptr);
            EXPECT_EQ(raw_attribute(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, b), c.raw);
            const cucore_location_t l = preferred(b);
            if (c.location.type == CUCORE_LOCATION_HOST) {
                EXPECT_TRUE(is_host(l)) << "type " << static_cast<int>(l.type);
            } else {
                EXPECT_EQ(l.type, CUCORE_LOCATION_DEVICE);
                EXPECT_EQ(l.id, 0);
            }
            const Bytes data = pattern(static_cast<std::size_t>(kMiB + 7), 44 + static_cast<std::uint32_t>(i));
            write(b, data);
            const auto *host = reinterpret_cast<const std::uint8_t *>(static_cast<std::uintptr_t>(gpu::address_of(b)));
            EXPECT_TRUE(same_bytes(Bytes(host, host + data.size()), data)) << "host-readable";
            cucore_buffer_release(b);
        }
        cucore_memory_resource_release(mr);
    }
    EXPECT_EQ(gpu::current_context(), nullptr);
}

TEST_F(ManagedBufferGpuTest, AccessedByAdviceRoundTrips) {
    const cucore_location_t dev0{CUCORE_LOCATION_DEVICE, 0};
    int yes = -1;
    CUCORE_ASSERT_OK(cucore_buffer_is_accessed_by(b_, dev0, &yes));
    EXPECT_EQ(yes, 0);
    CUCORE_ASSERT_OK(cucore_buffer_advise(b_, CUCORE_ADVICE_SET_ACCESSED_BY, dev0));
    CUCORE_ASSERT_OK(cucore_buffer_is_accessed_by(b_, dev0, &yes));
    EXPECT_EQ(yes, 1);
    EXPECT_TRUE(raw_accessed_by(0)) << "the driver lists device 0";
    if (device_count_ > 1) {
        CUCORE_ASSERT_OK(cucore_buffer_is_accessed_by(b_, cucore_location_t{CUCORE_LOCATION_DEVICE, 1}, &yes));
        EXPECT_EQ(yes, 0) << "only the device advised";
    }
    CUCORE_ASSERT_OK(cucore_buffer_advise(b_, CUCORE_ADVICE_UNSET_ACCESSED_BY, dev0));
    CUCORE_ASSERT_OK(cucore_buffer_is_accessed_by(b_, dev0, &yes));
    EXPECT_EQ(yes, 0);
    EXPECT_FALSE(raw_accessed_by(0));
}

TEST_F(ManagedBufferGpuTest, PrefetchToTheDeviceAndToTheHost) {
    const Bytes data = pattern(kSize, 41);
    std::memcpy(reinterpret_cast<void *>(static_cast<std::uintptr_t>(gpu::address_of(b_))), data.data(), kSize);
    CUCORE_ASSERT_OK(cucore_buffer_prefetch(b_, cucore_location_t{CUCORE_LOCATION_DEVICE, 0}, s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    cucore_location_t l = last_prefetch();
    EXPECT_EQ(l.type, CUCORE_LOCATION_DEVICE);
    EXPECT_EQ(l.id, 0);
    EXPECT_EQ(raw_attribute(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION), 0) << "the driver: device 0";
    EXPECT_TRUE(same_bytes(read(b_), data)) << "the data moved with the pages";
    CUCORE_ASSERT_OK(cucore_buffer_prefetch(b_, cucore_location_t{CUCORE_LOCATION_HOST, 0}, s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    l = last_prefetch();
    EXPECT_TRUE(is_host(l)) << "type " << static_cast<int>(l.type);
    EXPECT_EQ(raw_attribute(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION), -1) << "the driver: CU_DEVICE_CPU";
    const auto *host = reinterpret_cast<const std::uint8_t *>(static_cast<std::uintptr_t>(gpu::address_of(b_)));
    EXPECT_TRUE(same_bytes(Bytes(host, host + kSize), data));
    EXPECT_EQ(gpu::current_context(), nullptr);
}

TEST_F(ManagedBufferGpuTest, DiscardThenNewData) {
    CUCORE_ASSERT_OK(cucore_buffer_fill(b_, 0x3E, 1, s_));
    const cucore_status_t st = cucore_buffer_discard(b_, nullptr, s_);
    CUCORE_SKIP_IF_NOT_SUPPORTED(st, "discarding managed memory");
    CUCORE_ASSERT_OK(st);
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    // The contents are unspecified now; new data lands as written.
    const Bytes data = pattern(kSize, 42);
    write(b_, data);
    EXPECT_TRUE(same_bytes(read(b_), data));
    // Discard and prefetch to the device, then write and read again.
    const cucore_location_t dev0{CUCORE_LOCATION_DEVICE, 0};
    const cucore_status_t st2 = cucore_buffer_discard(b_, &dev0, s_);
    CUCORE_SKIP_IF_NOT_SUPPORTED(st2, "discard-and-prefetch of managed memory");
    CUCORE_ASSERT_OK(st2);
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    const cucore_location_t l = last_prefetch();
    std::printf("[   INFO   ] after a discard-and-prefetch to device 0 the last prefetch location is type %d id %d\n",
                static_cast<int>(l.type), l.id);
    CUCORE_ASSERT_OK(cucore_buffer_fill(b_, 0x7A, 1, s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    const auto *host = reinterpret_cast<const std::uint8_t *>(static_cast<std::uintptr_t>(gpu::address_of(b_)));
    EXPECT_TRUE(same_bytes(Bytes(host, host + kSize), Bytes(kSize, 0x7A)));
}

TEST_F(ManagedBufferGpuTest, ManagedCallsRefuseDeviceMemory) {
    cucore_memory_resource_t *pool = nullptr;
    CUCORE_ASSERT_OK(cucore_device_memory_resource_get_default(dev_, &pool));
    cucore_buffer_t *d = alloc(pool, 4096, s_);
    ASSERT_NE(d, nullptr);
    const cucore_location_t dev0{CUCORE_LOCATION_DEVICE, 0};
    CUCORE_EXPECT_STATUS(cucore_buffer_advise(d, CUCORE_ADVICE_SET_READ_MOSTLY, dev0), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_buffer_prefetch(d, dev0, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_buffer_discard(d, nullptr, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_location_t l{CUCORE_LOCATION_HOST, 3};
    CUCORE_EXPECT_STATUS(cucore_buffer_last_prefetch_location(d, &l), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(l.type, CUCORE_LOCATION_NONE);
    cucore_buffer_release(d);
    cucore_memory_resource_release(pool);
}

TEST_F(ManagedBufferGpuTest, FacadeManagedBuffer) {
    cucore::Buffer m = cucore::Buffer::borrow(b_);
    cucore::Stream s = cucore::Stream::borrow(s_);
    EXPECT_TRUE(m.is_managed());
    m.set_read_mostly(true);
    EXPECT_TRUE(m.read_mostly());
    m.set_read_mostly(false);
    m.set_preferred_location(cucore::Location::device(0));
    EXPECT_EQ(m.preferred_location(), cucore::Location::device(0));
    m.set_preferred_location(cucore::Location::none());
    EXPECT_TRUE(m.preferred_location().is_none());
    m.add_accessed_by(cucore::Location::device(cucore::Device::get(0)));
    EXPECT_TRUE(m.is_accessed_by(cucore::Location::device(0)));
    m.remove_accessed_by(cucore::Location::device(0));
    EXPECT_FALSE(m.is_accessed_by(cucore::Location::device(0)));
    m.prefetch(cucore::Location::device(0), s);
    s.synchronize();
    EXPECT_EQ(m.last_prefetch_location(), cucore::Location::device(0));
    const Bytes data = pattern(kSize, 43);
    m.copy_from_host(data, s);
    s.synchronize();
    EXPECT_TRUE(same_bytes(read(b_), data));
}

}  // namespace
