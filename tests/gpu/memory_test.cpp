// Memory resources and buffers: device pools (the current one and new ones),
// legacy pinned host memory, foreign memory, views, copies, fills, closing and
// stream-ordered freeing. Every result is read back and compared byte by byte,
// through libcucore and, where it adds something, through the raw driver
// (cuMemcpyDtoH of a buffer's address, pointer and pool attributes).
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gpu_test.hpp"

namespace {

using gpu::cu;
using gpu::Gate;
using gpu::GpuTest;
using Bytes = std::vector<std::uint8_t>;

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// `n` pseudo-random bytes, different for each seed.
Bytes pattern(std::size_t n, std::uint32_t seed) {
    Bytes v(n);
    std::uint32_t x = seed * 2654435761u + 12345u;
    for (auto &b : v) {
        x = x * 1664525u + 1013904223u;
        b = static_cast<std::uint8_t>(x >> 24);
    }
    return v;
}

// `bytes` bytes holding `value` over and over (host byte order, as the device's).
template <typename T> Bytes repeated(T value, std::size_t bytes) {
    Bytes v(bytes);
    for (std::size_t i = 0; i + sizeof(T) <= bytes; i += sizeof(T)) std::memcpy(&v[i], &value, sizeof(T));
    return v;
}

// Equal byte by byte; on failure names the first differing byte and how many differ.
::testing::AssertionResult same_bytes(const Bytes &got, const Bytes &want) {
    if (got.size() != want.size())
        return ::testing::AssertionFailure() << "sizes differ: got " << got.size() << ", expected " << want.size();
    std::size_t first = got.size(), count = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (got[i] != want[i]) {
            if (count++ == 0) first = i;
        }
    }
    if (count == 0) return ::testing::AssertionSuccess();
    char detail[96];
    std::snprintf(detail, sizeof detail, "got 0x%02x, expected 0x%02x", got[first], want[first]);
    return ::testing::AssertionFailure() << count << " of " << got.size() << " bytes differ; the first at byte "
                                         << first << ": " << detail;
}

int event_done(cucore_event_t *e) {
    int done = -1;
    EXPECT_EQ(cucore_event_query(e, &done), CUCORE_SUCCESS) << cucore_last_error_message();
    return done;
}

std::uint64_t size_of(const cucore_buffer_t *b) {
    std::uint64_t n = ~std::uint64_t{0};
    EXPECT_EQ(cucore_buffer_size(b, &n), CUCORE_SUCCESS) << cucore_last_error_message();
    return n;
}

std::uint64_t address_of(const cucore_buffer_t *b) {
    std::uint64_t a = ~std::uint64_t{0};
    EXPECT_EQ(cucore_buffer_address(b, &a), CUCORE_SUCCESS) << cucore_last_error_message();
    return a;
}

int device_id_of(const cucore_buffer_t *b) {
    int id = -2;
    EXPECT_EQ(cucore_buffer_device_id(b, &id), CUCORE_SUCCESS) << cucore_last_error_message();
    return id;
}

cucore_memory_resource_kind_t kind_of(const cucore_memory_resource_t *mr) {
    cucore_memory_resource_kind_t k = CUCORE_MEMORY_RESOURCE_UNSET;
    EXPECT_EQ(cucore_memory_resource_kind(mr, &k), CUCORE_SUCCESS) << cucore_last_error_message();
    return k;
}

// A buffer pointer no library call ever returns, to see out-pointers cleared.
cucore_buffer_t *const kJunkBuffer = reinterpret_cast<cucore_buffer_t *>(std::uintptr_t{0x10});

// Page-locked host memory from a legacy pinned buffer, for copies queued behind
// a closed gate: a copy between a stream and pageable memory may wait for the
// stream (the driver stages it), a copy to or from pinned memory never does.
class PinnedHost {
public:
    PinnedHost(cucore_device_t *dev, std::uint64_t size) : size_(size) {
        cucore_memory_resource_t *mr = nullptr;
        EXPECT_EQ(cucore_legacy_pinned_memory_resource_create(dev, &mr), CUCORE_SUCCESS)
            << cucore_last_error_message();
        if (mr != nullptr) {
            EXPECT_EQ(cucore_memory_resource_allocate(mr, size, nullptr, &buffer_), CUCORE_SUCCESS)
                << cucore_last_error_message();
        }
        cucore_memory_resource_release(mr);
        if (buffer_ != nullptr)
            data_ = reinterpret_cast<std::uint8_t *>(static_cast<std::uintptr_t>(address_of(buffer_)));
    }
    ~PinnedHost() { cucore_buffer_release(buffer_); } // synchronous: only once the gate is open
    PinnedHost(const PinnedHost &) = delete;
    PinnedHost &operator=(const PinnedHost &) = delete;
    explicit operator bool() const { return data_ != nullptr; }
    std::uint8_t *data() const { return data_; }
    Bytes bytes() const { return Bytes(data_, data_ + size_); }

private:
    std::uint64_t size_;
    cucore_buffer_t *buffer_ = nullptr;
    std::uint8_t *data_ = nullptr;
};

class MemoryTest : public GpuTest {
protected:
    void SetUp() override {
        GpuTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        CUCORE_ASSERT_OK(cucore_release_error_count(&release_errors_));
        CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &s_));
        const cucore_status_t st = cucore_device_memory_resource_get_default(dev_, &pool_);
        if (st == CUCORE_ERROR_NOT_SUPPORTED)
            GTEST_SKIP() << "device 0 has no stream-ordered memory pools: " << cucore_last_error_message();
        CUCORE_ASSERT_OK(st);
    }

    void TearDown() override {
        if (ready_) {
            cucore_memory_resource_release(pool_);
            pool_ = nullptr;
            cucore_stream_release(s_);
            s_ = nullptr;
            std::uint64_t errors = 0;
            EXPECT_EQ(cucore_release_error_count(&errors), CUCORE_SUCCESS);
            EXPECT_EQ(errors, release_errors_) << "failures inside release paths during the test";
            EXPECT_EQ(gpu::current_context(), nullptr) << "a library call left a context current";
        }
        GpuTest::TearDown();
    }

    cucore_buffer_t *alloc(cucore_memory_resource_t *mr, std::uint64_t size, cucore_stream_t *stream) {
        cucore_buffer_t *b = nullptr;
        EXPECT_EQ(cucore_memory_resource_allocate(mr, size, stream, &b), CUCORE_SUCCESS)
            << "allocate " << size << ": " << cucore_last_error_message();
        return b;
    }

    cucore_memory_resource_t *new_pool(const cucore_device_memory_resource_options_t *options = nullptr) {
        cucore_memory_resource_t *mr = nullptr;
        EXPECT_EQ(cucore_device_memory_resource_create(dev_, options, &mr), CUCORE_SUCCESS)
            << cucore_last_error_message();
        return mr;
    }

    // All of `b`'s bytes through the library (copy_to_host, then synchronize).
    Bytes read(cucore_buffer_t *b, cucore_stream_t *stream = nullptr) {
        if (stream == nullptr) stream = s_;
        Bytes out(static_cast<std::size_t>(size_of(b)), 0xEE);
        EXPECT_EQ(cucore_buffer_copy_to_host(b, 0, out.data(), out.size(), stream), CUCORE_SUCCESS)
            << cucore_last_error_message();
        EXPECT_EQ(cucore_stream_synchronize(stream), CUCORE_SUCCESS) << cucore_last_error_message();
        return out;
    }

    void write(cucore_buffer_t *b, const Bytes &bytes, std::uint64_t offset = 0) {
        EXPECT_EQ(cucore_buffer_copy_from_host(b, offset, bytes.data(), bytes.size(), s_), CUCORE_SUCCESS)
            << cucore_last_error_message();
        EXPECT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS) << cucore_last_error_message();
    }

    // `n` bytes at a device address through the raw driver (cuMemcpyDtoH in the
    // primary context). The caller synchronizes the library's work first.
    Bytes raw_read(std::uint64_t address, std::size_t n) {
        Bytes out(n, 0xEE);
        gpu::ScopedContext scope(primary_);
        const CUresult r = cu().MemcpyDtoH(out.data(), static_cast<CUdeviceptr>(address), n);
        EXPECT_EQ(r, CUDA_SUCCESS) << "cuMemcpyDtoH -> " << raw::error_name(r);
        return out;
    }

    // Writes `bytes` at a device address through the raw driver and waits until
    // they have landed: a synchronous cuMemcpyHtoD from pageable memory may
    // return while its DMA is still in flight, and the library's streams are
    // non-blocking (they do not wait for the legacy stream the copy ran on).
    void raw_write(std::uint64_t address, const Bytes &bytes) {
        gpu::ScopedContext scope(primary_);
        const CUresult r = cu().MemcpyHtoD(static_cast<CUdeviceptr>(address), bytes.data(), bytes.size());
        EXPECT_EQ(r, CUDA_SUCCESS) << "cuMemcpyHtoD -> " << raw::error_name(r);
        const CUresult synced = cu().CtxSynchronize();
        EXPECT_EQ(synced, CUDA_SUCCESS) << "cuCtxSynchronize -> " << raw::error_name(synced);
    }

    // The driver's memory pool of an allocation (NULL if none).
    CUmemoryPool raw_pool_of(std::uint64_t address) {
        CUmemoryPool pool = nullptr;
        gpu::ScopedContext scope(primary_);
        const CUresult r = cu().PointerGetAttribute(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
                                                    static_cast<CUdeviceptr>(address));
        EXPECT_EQ(r, CUDA_SUCCESS) << "cuPointerGetAttribute(MEMPOOL_HANDLE) -> " << raw::error_name(r);
        return pool;
    }

    std::uint64_t raw_pool_attribute(CUmemoryPool pool, CUmemPool_attribute attr) {
        cuuint64_t v = 0;
        gpu::ScopedContext scope(primary_);
        const CUresult r = cu().MemPoolGetAttribute(pool, attr, &v);
        EXPECT_EQ(r, CUDA_SUCCESS) << "cuMemPoolGetAttribute(" << static_cast<int>(attr)
                                   << ") -> " << raw::error_name(r);
        return static_cast<std::uint64_t>(v);
    }

    std::size_t live_buffers() { return gpu::live(CUCORE_OBJECT_BUFFER); }
    std::size_t live_resources() { return gpu::live(CUCORE_OBJECT_MEMORY_RESOURCE); }

    cucore_stream_t *s_ = nullptr;             // a stream on device 0
    cucore_memory_resource_t *pool_ = nullptr; // device 0's current memory pool
    std::uint64_t release_errors_ = 0;
};

// ---- Resources --------------------------------------------------------------

TEST_F(MemoryTest, DefaultResourceIsTheDevicesCurrentPool) {
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

TEST_F(MemoryTest, NewPoolIsItsOwnDriverPool) {
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

TEST_F(MemoryTest, PoolAttributesAreTheDriversAndTrimWorks) {
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

TEST_F(MemoryTest, TheDevicesDefaultResourceIsSharedAndResettable) {
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

TEST_F(MemoryTest, PoolOptionsReachTheDriver) {
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

TEST_F(MemoryTest, BadPoolOptionsAreRejected) {
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

// ---- Fills and copies ---------------------------------------------------------

TEST_F(MemoryTest, FillWritesOneTwoAndFourBytePatterns) {
    const std::uint64_t n = 3 * 4096 + 12; // a multiple of 4
    cucore_buffer_t *b = alloc(pool_, n, s_);
    ASSERT_NE(b, nullptr);
    const std::uint64_t addr = address_of(b);

    struct Case {
        std::uint32_t value;
        std::uint32_t width;
        Bytes expected;
    };
    const Case cases[] = {
        {0xA5u, 1, repeated<std::uint8_t>(0xA5, n)},
        {0x00u, 1, repeated<std::uint8_t>(0x00, n)},
        {0x1234u, 2, repeated<std::uint16_t>(0x1234, n)},
        {0xFFFFu, 2, repeated<std::uint16_t>(0xFFFF, n)},
        {0xDEADBEEFu, 4, repeated<std::uint32_t>(0xDEADBEEFu, n)},
        {0x00C0FFEEu, 4, repeated<std::uint32_t>(0x00C0FFEEu, n)},
    };
    for (const Case &c : cases) {
        char trace[48];
        std::snprintf(trace, sizeof trace, "value 0x%x, width %u", c.value, c.width);
        SCOPED_TRACE(trace);
        CUCORE_ASSERT_OK(cucore_buffer_fill(b, c.value, c.width, s_));
        CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
        EXPECT_TRUE(same_bytes(raw_read(addr, n), c.expected));
        EXPECT_TRUE(same_bytes(read(b), c.expected));
    }
    // Odd sizes take 1-byte patterns; 2-byte patterns need an even size.
    cucore_buffer_t *odd = alloc(pool_, 1001, s_);
    ASSERT_NE(odd, nullptr);
    CUCORE_EXPECT_OK(cucore_buffer_fill(odd, 0x3C, 1, s_));
    EXPECT_TRUE(same_bytes(read(odd), repeated<std::uint8_t>(0x3C, 1001)));
    cucore_buffer_t *six = alloc(pool_, 6, s_);
    ASSERT_NE(six, nullptr);
    CUCORE_EXPECT_OK(cucore_buffer_fill(six, 0xBEEF, 2, s_));
    EXPECT_TRUE(same_bytes(read(six), repeated<std::uint16_t>(0xBEEF, 6)));
    CUCORE_EXPECT_OK(cucore_buffer_release(odd));
    CUCORE_EXPECT_OK(cucore_buffer_release(six));
    CUCORE_EXPECT_OK(cucore_buffer_release(b));
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
    EXPECT_EQ(gpu::current_context(), nullptr);
}

TEST_F(MemoryTest, FillRejectsBadWidthsValuesAndSizes) {
    cucore_buffer_t *b = alloc(pool_, 4096, s_);
    cucore_buffer_t *b6 = alloc(pool_, 6, s_);
    cucore_buffer_t *b5 = alloc(pool_, 5, s_);
    ASSERT_TRUE(b != nullptr && b6 != nullptr && b5 != nullptr);
    CUCORE_ASSERT_OK(cucore_buffer_fill(b, 0x77, 1, s_));
    CUCORE_ASSERT_OK(cucore_buffer_fill(b6, 0x77, 1, s_));
    CUCORE_ASSERT_OK(cucore_buffer_fill(b5, 0x77, 1, s_));
    // Widths other than 1, 2, 4.
    for (const std::uint32_t width : {0u, 3u, 8u, 16u, 0xFFFFFFFFu})
        CUCORE_EXPECT_STATUS(cucore_buffer_fill(b, 0, width, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    // Values too wide for the width.
    CUCORE_EXPECT_STATUS(cucore_buffer_fill(b, 0x100, 1, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_buffer_fill(b, 0xFFFFFFFFu, 1, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_buffer_fill(b, 0x10000, 2, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    // Sizes that are not a multiple of the width.
    CUCORE_EXPECT_STATUS(cucore_buffer_fill(b6, 1, 4, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_buffer_fill(b5, 1, 2, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_buffer_fill(b5, 1, 4, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    // The failed calls wrote nothing.
    EXPECT_TRUE(same_bytes(read(b), repeated<std::uint8_t>(0x77, 4096)));
    EXPECT_TRUE(same_bytes(read(b6), repeated<std::uint8_t>(0x77, 6)));
    EXPECT_TRUE(same_bytes(read(b5), repeated<std::uint8_t>(0x77, 5)));
    // The widest values of each width are fine.
    CUCORE_EXPECT_OK(cucore_buffer_fill(b, 0xFF, 1, s_));
    CUCORE_EXPECT_OK(cucore_buffer_fill(b, 0xFFFF, 2, s_));
    CUCORE_EXPECT_OK(cucore_buffer_fill(b, 0xFFFFFFFFu, 4, s_));
    EXPECT_TRUE(same_bytes(read(b), repeated<std::uint8_t>(0xFF, 4096)));
    cucore_buffer_release(b);
    cucore_buffer_release(b6);
    cucore_buffer_release(b5);
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
}

TEST_F(MemoryTest, HostToDeviceToDeviceToHostRoundTrip) {
    cucore_memory_resource_t *own = new_pool();
    ASSERT_NE(own, nullptr);
    std::uint32_t seed = 10;
    for (const std::uint64_t n : {std::uint64_t{1}, std::uint64_t{3}, std::uint64_t{4096}, kMiB + 7, 9 * kMiB}) {
        SCOPED_TRACE("size " + std::to_string(n));
        const Bytes data = pattern(static_cast<std::size_t>(n), ++seed);
        cucore_buffer_t *a = alloc(pool_, n, s_);
        cucore_buffer_t *b = alloc(own, n, s_);
        ASSERT_TRUE(a != nullptr && b != nullptr);
        Bytes out(static_cast<std::size_t>(n), 0xEE);
        // All queued at once: the stream orders them.
        CUCORE_ASSERT_OK(cucore_buffer_copy_from_host(a, 0, data.data(), n, s_));
        CUCORE_ASSERT_OK(cucore_buffer_copy(b, a, s_));
        CUCORE_ASSERT_OK(cucore_buffer_copy_to_host(b, 0, out.data(), n, s_));
        CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
        EXPECT_TRUE(same_bytes(out, data));
        EXPECT_TRUE(same_bytes(raw_read(address_of(a), data.size()), data));
        EXPECT_TRUE(same_bytes(raw_read(address_of(b), data.size()), data));
        // And back the other way, from memory the raw driver wrote.
        const Bytes other = pattern(static_cast<std::size_t>(n), ++seed);
        raw_write(address_of(b), other);
        CUCORE_ASSERT_OK(cucore_buffer_copy(a, b, s_));
        EXPECT_TRUE(same_bytes(read(a), other));
        cucore_buffer_release(a);
        cucore_buffer_release(b);
    }
    cucore_memory_resource_release(own);
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
    EXPECT_EQ(gpu::current_context(), nullptr);
}

TEST_F(MemoryTest, CopiesAcrossStreamsFollowWaits) {
    cucore_stream_t *s2 = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &s2));
    const std::uint64_t n = 8 * kMiB;
    const Bytes data = pattern(static_cast<std::size_t>(n), 77);
    cucore_buffer_t *a = alloc(pool_, n, s_);
    cucore_buffer_t *b = alloc(pool_, n, s_);
    ASSERT_TRUE(a != nullptr && b != nullptr);
    // Host memory is pinned: a copy to or from pageable memory may wait for
    // the stream (the driver stages it), which the gate must not see.
    PinnedHost src(dev_, n), dst(dev_, n);
    ASSERT_TRUE(src && dst);
    std::memcpy(src.data(), data.data(), data.size());
    std::memset(dst.data(), 0xEE, data.size());
    {
        Gate gate;
        CUCORE_ASSERT_OK(gpu::launch(s_, gate.waiter()));
        CUCORE_ASSERT_OK(cucore_buffer_copy_from_host(a, 0, src.data(), n, s_));
        CUCORE_ASSERT_OK(cucore_stream_wait_stream(s2, s_));
        CUCORE_ASSERT_OK(cucore_buffer_copy(b, a, s2));
        CUCORE_ASSERT_OK(cucore_buffer_copy_to_host(b, 0, dst.data(), n, s2));
        cucore_event_t *e = nullptr;
        CUCORE_ASSERT_OK(cucore_stream_record(s2, nullptr, &e));
        gpu::sleep_ms(20);
        if (!gate.is_open()) {
            EXPECT_EQ(event_done(e), 0) << "the copies on s2 ran before the work they wait for";
        }
        gate.open();
        CUCORE_EXPECT_OK(cucore_event_synchronize(e));
        cucore_event_release(e);
    }
    EXPECT_TRUE(same_bytes(dst.bytes(), data));
    cucore_buffer_release(a);
    cucore_buffer_release(b);
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s2));
    cucore_stream_release(s2);
}

TEST_F(MemoryTest, CopyArgumentErrors) {
    cucore_buffer_t *a = alloc(pool_, 4096, s_);
    cucore_buffer_t *b = alloc(pool_, 4095, s_);
    ASSERT_TRUE(a != nullptr && b != nullptr);
    const Bytes da = pattern(4096, 1), db = pattern(4095, 2);
    write(a, da);
    write(b, db);
    // Sizes differ, either way.
    CUCORE_EXPECT_STATUS(cucore_buffer_copy(a, b, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_buffer_copy(b, a, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    // Host ranges outside the buffer, NULL host memory.
    Bytes host(8192, 0);
    CUCORE_EXPECT_STATUS(cucore_buffer_copy_from_host(a, 0, host.data(), 4097, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_buffer_copy_from_host(a, 4090, host.data(), 7, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_buffer_copy_from_host(a, 4097, host.data(), 0, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_buffer_copy_from_host(a, ~std::uint64_t{0}, host.data(), 2, s_),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_buffer_copy_from_host(a, 2, host.data(), ~std::uint64_t{0}, s_),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_buffer_copy_from_host(a, 0, nullptr, 1, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_buffer_copy_to_host(a, 0, host.data(), 4097, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_buffer_copy_to_host(a, 4000, host.data(), 97, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_buffer_copy_to_host(a, ~std::uint64_t{0}, host.data(), 2, s_),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_buffer_copy_to_host(a, 0, nullptr, 1, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    // Nothing happened to either buffer or to the host memory.
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_TRUE(same_bytes(host, Bytes(8192, 0)));
    EXPECT_TRUE(same_bytes(read(a), da));
    EXPECT_TRUE(same_bytes(read(b), db));
    // Empty host ranges are fine anywhere inside, NULL included; the full range
    // up to the end is fine.
    CUCORE_EXPECT_OK(cucore_buffer_copy_from_host(a, 0, nullptr, 0, s_));
    CUCORE_EXPECT_OK(cucore_buffer_copy_from_host(a, 4096, host.data(), 0, s_));
    CUCORE_EXPECT_OK(cucore_buffer_copy_to_host(a, 4096, nullptr, 0, s_));
    CUCORE_EXPECT_OK(cucore_buffer_copy_to_host(a, 4000, host.data(), 96, s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_TRUE(same_bytes(Bytes(host.begin(), host.begin() + 96), Bytes(da.begin() + 4000, da.end())));
    // Handles: NULL, released, of another type.
    CUCORE_EXPECT_STATUS(cucore_buffer_copy(nullptr, a, s_), CUCORE_ERROR_INVALID_HANDLE);
    CUCORE_EXPECT_STATUS(cucore_buffer_copy(a, nullptr, s_), CUCORE_ERROR_INVALID_HANDLE);
    CUCORE_EXPECT_STATUS(cucore_buffer_copy(a, a, nullptr), CUCORE_ERROR_INVALID_HANDLE);
    CUCORE_EXPECT_STATUS(cucore_buffer_copy(a, reinterpret_cast<cucore_buffer_t *>(s_), s_),
                         CUCORE_ERROR_INVALID_HANDLE);
    CUCORE_EXPECT_STATUS(cucore_buffer_fill(reinterpret_cast<cucore_buffer_t *>(pool_), 0, 1, s_),
                         CUCORE_ERROR_INVALID_HANDLE);
    cucore_buffer_release(b);
    std::uint64_t n = 7;
    CUCORE_EXPECT_STATUS(cucore_buffer_size(b, &n), CUCORE_ERROR_INVALID_HANDLE);
    CUCORE_EXPECT_STATUS(cucore_buffer_copy(a, b, s_), CUCORE_ERROR_INVALID_HANDLE);
    CUCORE_EXPECT_STATUS(cucore_buffer_release(b), CUCORE_ERROR_INVALID_HANDLE);
    CUCORE_EXPECT_STATUS(cucore_buffer_size(a, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_buffer_address(a, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_buffer_device_id(a, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_buffer_memory_resource(a, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_buffer_release(a);
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
}

TEST_F(MemoryTest, AllocateArgumentErrors) {
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

TEST_F(MemoryTest, StreamOfAnotherDeviceIsRejected) {
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

// ---- Views ----------------------------------------------------------------------

TEST_F(MemoryTest, ViewsReadAndWriteAtOffsets) {
    const std::uint64_t n = 4096;
    cucore_buffer_t *b = alloc(pool_, n, s_);
    ASSERT_NE(b, nullptr);
    CUCORE_ASSERT_OK(cucore_buffer_fill(b, 0, 1, s_));
    Bytes expected(n, 0);
    const std::uint64_t base = address_of(b);

    // A view at an odd offset, written from the host.
    cucore_buffer_t *v1 = nullptr;
    CUCORE_ASSERT_OK(cucore_buffer_view(b, 101, 50, &v1));
    EXPECT_EQ(size_of(v1), 50u);
    EXPECT_EQ(address_of(v1), base + 101);
    EXPECT_EQ(device_id_of(v1), 0);
    cucore_memory_resource_t *vmr = nullptr;
    CUCORE_EXPECT_OK(cucore_buffer_memory_resource(v1, &vmr));
    ASSERT_NE(vmr, nullptr) << "a view of pool memory names no resource";
    EXPECT_EQ(kind_of(vmr), CUCORE_MEMORY_RESOURCE_DEVICE);
    cucore_memory_resource_release(vmr);
    const Bytes p1 = pattern(50, 3);
    write(v1, p1);
    std::copy(p1.begin(), p1.end(), expected.begin() + 101);

    // A view of a view: offsets add up.
    cucore_buffer_t *v2 = nullptr;
    CUCORE_ASSERT_OK(cucore_buffer_view(v1, 9, 20, &v2));
    EXPECT_EQ(address_of(v2), base + 110);
    EXPECT_TRUE(same_bytes(read(v2), Bytes(p1.begin() + 9, p1.begin() + 29)));
    const Bytes p2 = pattern(8, 4);
    write(v2, p2, 12); // parent offset 101 + 9 + 12 = 122
    std::copy(p2.begin(), p2.end(), expected.begin() + 122);

    // Aligned views filled with 2- and 4-byte patterns.
    cucore_buffer_t *v3 = nullptr, *v4 = nullptr;
    CUCORE_ASSERT_OK(cucore_buffer_view(b, 512, 64, &v3));
    CUCORE_ASSERT_OK(cucore_buffer_view(b, 1024, 256, &v4));
    CUCORE_EXPECT_OK(cucore_buffer_fill(v3, 0xABCD, 2, s_));
    CUCORE_EXPECT_OK(cucore_buffer_fill(v4, 0x01020304u, 4, s_));
    const Bytes f3 = repeated<std::uint16_t>(0xABCD, 64), f4 = repeated<std::uint32_t>(0x01020304u, 256);
    std::copy(f3.begin(), f3.end(), expected.begin() + 512);
    std::copy(f4.begin(), f4.end(), expected.begin() + 1024);

    // Copies between views of one buffer (disjoint ranges).
    cucore_buffer_t *src = nullptr, *dst = nullptr;
    CUCORE_ASSERT_OK(cucore_buffer_view(b, 1024, 100, &src));
    CUCORE_ASSERT_OK(cucore_buffer_view(b, 3000, 100, &dst));
    CUCORE_EXPECT_OK(cucore_buffer_copy(dst, src, s_));
    std::copy(f4.begin(), f4.begin() + 100, expected.begin() + 3000);

    // The parent sees all of it; so does the driver; writes through the parent
    // show in the views.
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_TRUE(same_bytes(read(b), expected));
    EXPECT_TRUE(same_bytes(raw_read(base, n), expected));
    const Bytes p3 = pattern(30, 5);
    write(b, p3, 3010);
    const Bytes dst_now = read(dst);
    EXPECT_TRUE(same_bytes(Bytes(dst_now.begin() + 10, dst_now.begin() + 40), p3));
    Bytes tail(40, 0xEE);
    CUCORE_EXPECT_OK(cucore_buffer_copy_to_host(dst, 60, tail.data(), 40, s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_TRUE(same_bytes(tail, Bytes(f4.begin() + 60, f4.begin() + 100)));

    // Views live as buffers; releasing them frees nothing.
    EXPECT_EQ(live_buffers(), baseline_[CUCORE_OBJECT_BUFFER] + 7);
    for (cucore_buffer_t *v : {v1, v2, v3, v4, src, dst}) CUCORE_EXPECT_OK(cucore_buffer_release(v));
    EXPECT_EQ(live_buffers(), baseline_[CUCORE_OBJECT_BUFFER] + 1);
    Bytes after = expected;
    std::copy(p3.begin(), p3.end(), after.begin() + 3010);
    EXPECT_TRUE(same_bytes(read(b), after));
    cucore_buffer_release(b);
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
}

TEST_F(MemoryTest, ViewsOutsideTheBufferAreRejected) {
    cucore_buffer_t *b = alloc(pool_, 4096, s_);
    ASSERT_NE(b, nullptr);
    struct Range {
        std::uint64_t offset, size;
    };
    const Range bad[] = {{0, 4097},
                         {4000, 97},
                         {4097, 0},
                         {1, 4096},
                         {~std::uint64_t{0}, 2},
                         {2, ~std::uint64_t{0}},
                         {~std::uint64_t{0}, ~std::uint64_t{0}}};
    for (const Range &r : bad) {
        SCOPED_TRACE("offset " + std::to_string(r.offset) + " size " + std::to_string(r.size));
        cucore_buffer_t *v = kJunkBuffer;
        CUCORE_EXPECT_STATUS(cucore_buffer_view(b, r.offset, r.size, &v), CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(v, nullptr);
    }
    CUCORE_EXPECT_STATUS(cucore_buffer_view(b, 0, 1, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    // The edges are inside.
    const Range good[] = {{0, 4096}, {4096, 0}, {0, 0}, {4095, 1}};
    for (const Range &r : good) {
        cucore_buffer_t *v = nullptr;
        CUCORE_EXPECT_OK(cucore_buffer_view(b, r.offset, r.size, &v));
        if (v != nullptr) {
            EXPECT_EQ(size_of(v), r.size);
        }
        cucore_buffer_release(v);
    }
    EXPECT_EQ(live_buffers(), baseline_[CUCORE_OBJECT_BUFFER] + 1);
    cucore_buffer_release(b);
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
}

TEST_F(MemoryTest, ViewsKeepTheMemoryAlive) {
    const Bytes data = pattern(kMiB, 6);
    // Parent released first: the view still reads and writes the memory.
    {
        cucore_buffer_t *b = alloc(pool_, kMiB, s_);
        ASSERT_NE(b, nullptr);
        write(b, data);
        cucore_buffer_t *v = nullptr;
        CUCORE_ASSERT_OK(cucore_buffer_view(b, 4096, 8192, &v));
        const std::uint64_t vaddr = address_of(v);
        CUCORE_EXPECT_OK(cucore_buffer_release(b));
        CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
        EXPECT_TRUE(same_bytes(read(v), Bytes(data.begin() + 4096, data.begin() + 4096 + 8192)));
        CUCORE_EXPECT_OK(cucore_buffer_fill(v, 0x42, 1, s_));
        CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
        EXPECT_TRUE(same_bytes(raw_read(vaddr, 8192), repeated<std::uint8_t>(0x42, 8192)));
        CUCORE_EXPECT_OK(cucore_buffer_release(v));
        EXPECT_EQ(live_buffers(), baseline_[CUCORE_OBJECT_BUFFER]);
    }
    // Parent closed: it reads as empty and refuses use, the view keeps working.
    {
        cucore_buffer_t *b = alloc(pool_, kMiB, s_);
        ASSERT_NE(b, nullptr);
        write(b, data);
        cucore_buffer_t *v = nullptr;
        CUCORE_ASSERT_OK(cucore_buffer_view(b, 100, 1000, &v));
        CUCORE_EXPECT_OK(cucore_buffer_close(b, nullptr));
        EXPECT_EQ(size_of(b), 0u);
        EXPECT_EQ(address_of(b), 0u);
        CUCORE_EXPECT_STATUS(cucore_buffer_fill(b, 0, 1, s_), CUCORE_ERROR_INVALID_STATE);
        EXPECT_TRUE(same_bytes(read(v), Bytes(data.begin() + 100, data.begin() + 1100)));
        const Bytes p = pattern(1000, 7);
        write(v, p);
        EXPECT_TRUE(same_bytes(read(v), p));
        // A view made of a closed buffer is refused.
        cucore_buffer_t *v2 = kJunkBuffer;
        CUCORE_EXPECT_STATUS(cucore_buffer_view(b, 0, 0, &v2), CUCORE_ERROR_INVALID_STATE);
        EXPECT_EQ(v2, nullptr);
        CUCORE_EXPECT_OK(cucore_buffer_release(b));
        EXPECT_TRUE(same_bytes(read(v), p));
        CUCORE_EXPECT_OK(cucore_buffer_release(v));
    }
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
}

// ---- Closing and zero sizes ---------------------------------------------------

TEST_F(MemoryTest, UseAfterCloseIsInvalidState) {
    cucore_stream_t *s2 = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &s2));
    for (const bool on_stream : {false, true}) {
        SCOPED_TRACE(on_stream ? "close(buffer, stream)" : "close(buffer, NULL)");
        cucore_buffer_t *b = alloc(pool_, 4096, s_);
        cucore_buffer_t *other = alloc(pool_, 4096, s_);
        ASSERT_TRUE(b != nullptr && other != nullptr);
        CUCORE_ASSERT_OK(cucore_buffer_fill(b, 1, 1, s_));
        CUCORE_ASSERT_OK(cucore_buffer_fill(other, 2, 1, s_));
        CUCORE_ASSERT_OK(cucore_stream_wait_stream(s2, s_));
        CUCORE_ASSERT_OK(cucore_buffer_close(b, on_stream ? s2 : nullptr));
        EXPECT_EQ(size_of(b), 0u);
        EXPECT_EQ(address_of(b), 0u);
        Bytes host(4096, 0x33);
        cucore_buffer_t *v = kJunkBuffer;
        CUCORE_EXPECT_STATUS(cucore_buffer_view(b, 0, 0, &v), CUCORE_ERROR_INVALID_STATE);
        EXPECT_EQ(v, nullptr);
        CUCORE_EXPECT_STATUS(cucore_buffer_copy(b, other, s_), CUCORE_ERROR_INVALID_STATE);
        CUCORE_EXPECT_STATUS(cucore_buffer_copy(other, b, s_), CUCORE_ERROR_INVALID_STATE);
        CUCORE_EXPECT_STATUS(cucore_buffer_copy_from_host(b, 0, host.data(), 0, s_), CUCORE_ERROR_INVALID_STATE);
        CUCORE_EXPECT_STATUS(cucore_buffer_copy_from_host(b, 0, host.data(), 16, s_), CUCORE_ERROR_INVALID_STATE);
        CUCORE_EXPECT_STATUS(cucore_buffer_copy_to_host(b, 0, host.data(), 16, s_), CUCORE_ERROR_INVALID_STATE);
        CUCORE_EXPECT_STATUS(cucore_buffer_fill(b, 0, 1, s_), CUCORE_ERROR_INVALID_STATE);
        CUCORE_EXPECT_STATUS(cucore_buffer_set_deallocation_stream(b, s2), CUCORE_ERROR_INVALID_STATE);
        EXPECT_NE(std::string(cucore_last_error_message()), "");
        // Closing again does nothing; the handle is still valid until released.
        CUCORE_EXPECT_OK(cucore_buffer_close(b, nullptr));
        CUCORE_EXPECT_OK(cucore_buffer_close(b, s_));
        CUCORE_EXPECT_OK(cucore_buffer_retain(b));
        CUCORE_EXPECT_OK(cucore_buffer_release(b));
        CUCORE_EXPECT_OK(cucore_buffer_release(b));
        CUCORE_EXPECT_STATUS(cucore_buffer_close(b, nullptr), CUCORE_ERROR_INVALID_HANDLE);
        // The other buffer and the host memory were untouched.
        EXPECT_TRUE(same_bytes(host, Bytes(4096, 0x33)));
        EXPECT_TRUE(same_bytes(read(other), repeated<std::uint8_t>(2, 4096)));
        cucore_buffer_release(other);
    }
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s2));
    cucore_stream_release(s2);
}

TEST_F(MemoryTest, ZeroSizeBuffers) {
    cucore_memory_resource_t *pinned = nullptr;
    CUCORE_ASSERT_OK(cucore_legacy_pinned_memory_resource_create(dev_, &pinned));
    cucore_memory_resource_t *own = new_pool();
    ASSERT_NE(own, nullptr);
    cucore_buffer_t *z[4] = {alloc(pool_, 0, s_), alloc(own, 0, s_), alloc(pinned, 0, nullptr),
                             alloc(pinned, 0, s_)};
    for (cucore_buffer_t *b : z) {
        ASSERT_NE(b, nullptr);
        EXPECT_EQ(size_of(b), 0u);
        EXPECT_EQ(address_of(b), 0u);
    }
    EXPECT_EQ(device_id_of(z[0]), 0);
    EXPECT_EQ(device_id_of(z[2]), -1);
    // Everything of size 0 works on them.
    CUCORE_EXPECT_OK(cucore_buffer_copy(z[0], z[1], s_));
    CUCORE_EXPECT_OK(cucore_buffer_copy(z[2], z[0], s_));
    CUCORE_EXPECT_OK(cucore_buffer_copy_from_host(z[0], 0, nullptr, 0, s_));
    CUCORE_EXPECT_OK(cucore_buffer_copy_to_host(z[1], 0, nullptr, 0, s_));
    for (const std::uint32_t width : {1u, 2u, 4u}) CUCORE_EXPECT_OK(cucore_buffer_fill(z[0], 7, width, s_));
    cucore_buffer_t *v = nullptr;
    CUCORE_EXPECT_OK(cucore_buffer_view(z[0], 0, 0, &v));
    EXPECT_EQ(size_of(v), 0u);
    cucore_buffer_release(v);
    // ... and nothing larger.
    v = kJunkBuffer;
    CUCORE_EXPECT_STATUS(cucore_buffer_view(z[0], 0, 1, &v), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(v, nullptr);
    CUCORE_EXPECT_STATUS(cucore_buffer_view(z[0], 1, 0, &v), CUCORE_ERROR_INVALID_ARGUMENT);
    std::uint8_t byte = 0;
    CUCORE_EXPECT_STATUS(cucore_buffer_copy_from_host(z[0], 0, &byte, 1, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_buffer_t *one = alloc(pool_, 1, s_);
    ASSERT_NE(one, nullptr);
    CUCORE_EXPECT_STATUS(cucore_buffer_copy(one, z[0], s_), CUCORE_ERROR_INVALID_ARGUMENT);
    // Closing and releasing them is fine.
    CUCORE_EXPECT_OK(cucore_buffer_close(z[0], nullptr));
    CUCORE_EXPECT_STATUS(cucore_buffer_fill(z[0], 0, 1, s_), CUCORE_ERROR_INVALID_STATE);
    CUCORE_EXPECT_OK(cucore_buffer_close(z[2], s_));
    for (cucore_buffer_t *b : z) CUCORE_EXPECT_OK(cucore_buffer_release(b));
    cucore_buffer_release(one);
    cucore_memory_resource_release(own);
    cucore_memory_resource_release(pinned);
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
}

// ---- Stream-ordered freeing ---------------------------------------------------

constexpr std::uint64_t kFreeOrderingSize = 4 * kMiB;

// How the buffer's memory is handed back in check_free_ordering().
enum class FreeBy {
    allocation_stream,       // last reference released; the user stream is the allocation stream
    deallocation_stream,     // set_deallocation_stream(user stream), then last reference released
    close_on_waiting_stream, // a third stream waits for the user stream, then close(buffer, it)
};

// The memory must not be handed to anyone else before the gated reader on the
// user stream has copied it out. A buffer from `mr` is written on one stream
// and read (behind a closed gate) on the user stream; it is then given up as
// `how` says, and an unrelated stream allocates the same size from the pool
// and overwrites it. Had the free been ordered on the wrong (idle) stream, the
// pool could give the memory to the unrelated stream at once, whose fill would
// then overwrite the bytes before the reader copies them.
void check_free_ordering(PinnedHost &out, cucore_device_t *dev, cucore_memory_resource_t *mr, FreeBy how,
                         CUcontext primary);

TEST_F(MemoryTest, LastReleaseFreesOnTheAllocationStream) {
    cucore_memory_resource_t *mr = new_pool();
    ASSERT_NE(mr, nullptr);
    PinnedHost out(dev_, kFreeOrderingSize);
    ASSERT_TRUE(out);
    check_free_ordering(out, dev_, mr, FreeBy::allocation_stream, primary_);
    cucore_memory_resource_release(mr);
}

TEST_F(MemoryTest, SetDeallocationStreamOrdersTheFree) {
    cucore_memory_resource_t *mr = new_pool();
    ASSERT_NE(mr, nullptr);
    PinnedHost out(dev_, kFreeOrderingSize);
    ASSERT_TRUE(out);
    check_free_ordering(out, dev_, mr, FreeBy::deallocation_stream, primary_);
    cucore_memory_resource_release(mr);
}

TEST_F(MemoryTest, CloseOnAStreamThatWaitedForTheUser) {
    cucore_memory_resource_t *mr = new_pool();
    ASSERT_NE(mr, nullptr);
    PinnedHost out(dev_, kFreeOrderingSize);
    ASSERT_TRUE(out);
    check_free_ordering(out, dev_, mr, FreeBy::close_on_waiting_stream, primary_);
    cucore_memory_resource_release(mr);
}

TEST_F(MemoryTest, DefaultPoolFreesInStreamOrderToo) {
    PinnedHost out(dev_, kFreeOrderingSize);
    ASSERT_TRUE(out);
    check_free_ordering(out, dev_, pool_, FreeBy::deallocation_stream, primary_);
}

void check_free_ordering(PinnedHost &out, cucore_device_t *dev, cucore_memory_resource_t *mr, FreeBy how,
                         CUcontext primary) {
    const std::uint64_t n = kFreeOrderingSize;
    cucore_stream_t *alloc_s = nullptr, *user_s = nullptr, *close_s = nullptr, *other_s = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_create(dev, nullptr, &alloc_s));
    CUCORE_ASSERT_OK(cucore_stream_create(dev, nullptr, &user_s));
    CUCORE_ASSERT_OK(cucore_stream_create(dev, nullptr, &close_s));
    CUCORE_ASSERT_OK(cucore_stream_create(dev, nullptr, &other_s));
    cucore_stream_t *writer = how == FreeBy::allocation_stream ? user_s : alloc_s;
    std::memset(out.data(), 0xEE, static_cast<std::size_t>(n));
    std::uint64_t first = 0, second = 0;
    cucore_buffer_t *buf = nullptr, *buf2 = nullptr;
    {
        Gate gate;
        CUCORE_ASSERT_OK(cucore_memory_resource_allocate(mr, n, writer, &buf));
        first = address_of(buf);
        CUCORE_ASSERT_OK(cucore_buffer_fill(buf, 0x5A, 1, writer));
        if (writer != user_s) CUCORE_ASSERT_OK(cucore_stream_wait_stream(user_s, writer));
        CUCORE_ASSERT_OK(gpu::launch(user_s, gate.waiter()));
        CUCORE_ASSERT_OK(cucore_buffer_copy_to_host(buf, 0, out.data(), n, user_s));
        // A safety net: should a call below wait for the gated work, the gate
        // opens after a while (and the checks that need it closed are skipped).
        gate.open_after(std::chrono::milliseconds(3000));
        switch (how) {
        case FreeBy::allocation_stream:
            CUCORE_EXPECT_OK(cucore_buffer_release(buf));
            break;
        case FreeBy::deallocation_stream:
            CUCORE_EXPECT_OK(cucore_buffer_set_deallocation_stream(buf, user_s));
            CUCORE_EXPECT_OK(cucore_buffer_release(buf));
            break;
        case FreeBy::close_on_waiting_stream:
            CUCORE_EXPECT_OK(cucore_stream_wait_stream(close_s, user_s));
            CUCORE_EXPECT_OK(cucore_buffer_close(buf, close_s));
            EXPECT_EQ(size_of(buf), 0u);
            CUCORE_EXPECT_OK(cucore_buffer_release(buf));
            break;
        }
        buf = nullptr;
        // The unrelated stream allocates as much and overwrites it.
        CUCORE_ASSERT_OK(cucore_memory_resource_allocate(mr, n, other_s, &buf2));
        second = address_of(buf2);
        CUCORE_ASSERT_OK(cucore_buffer_fill(buf2, 0xA5, 1, other_s));
        cucore_event_t *e = nullptr;
        CUCORE_ASSERT_OK(cucore_stream_record(other_s, nullptr, &e));
        gpu::sleep_ms(50);
        const int other_done = event_done(e);
        if (!gate.is_open()) {
            if (second == first) {
                EXPECT_EQ(other_done, 0) << "the memory went to another stream, which used it, before the "
                                            "gated reader had run";
            }
        } else {
            std::printf("[   INFO   ] a call waited for gated work; ordering checks skipped\n");
        }
        gate.open();
        CUCORE_EXPECT_OK(cucore_event_synchronize(e));
        cucore_event_release(e);
        CUCORE_EXPECT_OK(cucore_stream_synchronize(user_s));
    }
    EXPECT_TRUE(same_bytes(out.bytes(), repeated<std::uint8_t>(0x5A, static_cast<std::size_t>(n))))
        << "the reader saw the memory after it had been given to another stream";
    // The new buffer holds what its stream wrote (raw driver).
    Bytes check(static_cast<std::size_t>(n), 0xEE);
    {
        gpu::ScopedContext scope(primary);
        CU_EXPECT_OK(cu().MemcpyDtoH(check.data(), static_cast<CUdeviceptr>(second), check.size()));
    }
    EXPECT_TRUE(same_bytes(check, repeated<std::uint8_t>(0xA5, static_cast<std::size_t>(n))));
    std::printf("[   INFO   ] the second allocation %s the first's address\n",
                second == first ? "reused" : "did not reuse");
    cucore_buffer_release(buf2);
    for (cucore_stream_t *s : {alloc_s, user_s, close_s, other_s}) CUCORE_EXPECT_OK(cucore_stream_synchronize(s));
    for (cucore_stream_t *s : {alloc_s, user_s, close_s, other_s}) cucore_stream_release(s);
}

TEST_F(MemoryTest, BufferHoldsItsDeallocationStream) {
    cucore_stream_t *t = nullptr, *u = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &t));
    CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &u));
    cucore_buffer_t *a = alloc(pool_, kMiB, t);
    cucore_buffer_t *b = alloc(pool_, kMiB, s_);
    ASSERT_TRUE(a != nullptr && b != nullptr);
    CUCORE_ASSERT_OK(cucore_buffer_set_deallocation_stream(b, u));
    CUCORE_ASSERT_OK(cucore_buffer_fill(a, 0x11, 1, t));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(t));
    // Our references to the streams go first; the buffers keep theirs.
    CUCORE_EXPECT_OK(cucore_stream_release(t));
    CUCORE_EXPECT_OK(cucore_stream_release(u));
    EXPECT_EQ(gpu::live(CUCORE_OBJECT_STREAM), baseline_[CUCORE_OBJECT_STREAM] + 3)
        << "a buffer does not hold its deallocation stream";
    CUCORE_EXPECT_OK(cucore_buffer_copy(b, a, s_));
    EXPECT_TRUE(same_bytes(read(b), repeated<std::uint8_t>(0x11, kMiB)));
    // Their releases free on those streams and then let them go, without errors.
    CUCORE_EXPECT_OK(cucore_buffer_release(a));
    CUCORE_EXPECT_OK(cucore_buffer_release(b));
    EXPECT_EQ(gpu::live(CUCORE_OBJECT_STREAM), baseline_[CUCORE_OBJECT_STREAM] + 1);
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
}

// ---- Pools released before their buffers ------------------------------------

TEST_F(MemoryTest, PoolReleasedBeforeItsBuffers) {
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

// ---- Legacy pinned host memory --------------------------------------------------

TEST_F(MemoryTest, LegacyPinnedMemoryIsHostAccessible) {
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

// ---- Foreign memory -----------------------------------------------------------------

TEST_F(MemoryTest, ForeignDeviceMemoryIsWrappedWithoutOwnership) {
    const std::size_t n = 64 * 1024;
    CUdeviceptr raw = 0;
    {
        gpu::ScopedContext scope(primary_);
        CU_ASSERT_OK(cu().MemAlloc(&raw, n));
    }
    const Bytes data = pattern(n, 11);
    raw_write(raw, data);
    gpu::ReleaseCounter owner;
    cucore_buffer_t *b = nullptr;
    CUCORE_ASSERT_OK(cucore_buffer_from_handle(raw, n, dev_, &gpu::ReleaseCounter::callback, &owner, &b));
    EXPECT_EQ(size_of(b), n);
    EXPECT_EQ(address_of(b), static_cast<std::uint64_t>(raw));
    EXPECT_EQ(device_id_of(b), 0);
    cucore_memory_resource_t *mr = reinterpret_cast<cucore_memory_resource_t *>(std::uintptr_t{0x10});
    CUCORE_EXPECT_OK(cucore_buffer_memory_resource(b, &mr));
    EXPECT_EQ(mr, nullptr) << "foreign memory has no resource";
    // Read and written through the library.
    EXPECT_TRUE(same_bytes(read(b), data));
    CUCORE_EXPECT_OK(cucore_buffer_fill(b, 0xCAFEF00Du, 4, s_));
    cucore_buffer_t *v = nullptr;
    CUCORE_ASSERT_OK(cucore_buffer_view(b, 256, 256, &v));
    const Bytes p = pattern(256, 12);
    write(v, p);
    Bytes expected = repeated<std::uint32_t>(0xCAFEF00Du, n);
    std::copy(p.begin(), p.end(), expected.begin() + 256);
    EXPECT_TRUE(same_bytes(raw_read(raw, n), expected));
    // The owner hears once, when the last reference (the view's) goes.
    CUCORE_EXPECT_OK(cucore_buffer_release(b));
    EXPECT_EQ(owner.calls.load(), 0);
    CUCORE_EXPECT_OK(cucore_buffer_release(v));
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
    EXPECT_EQ(owner.calls.load(), 1);
    // The memory was not freed: it still holds the data and is ours to free.
    EXPECT_TRUE(same_bytes(raw_read(raw, n), expected));

    // Closing a foreign buffer frees nothing either; the owner hears once.
    gpu::ReleaseCounter owner2;
    CUCORE_ASSERT_OK(cucore_buffer_from_handle(raw, n, dev_, &gpu::ReleaseCounter::callback, &owner2, &b));
    CUCORE_EXPECT_OK(cucore_buffer_close(b, s_));
    EXPECT_EQ(size_of(b), 0u);
    CUCORE_EXPECT_STATUS(cucore_buffer_fill(b, 0, 1, s_), CUCORE_ERROR_INVALID_STATE);
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
    CUCORE_EXPECT_OK(cucore_buffer_release(b));
    EXPECT_EQ(owner2.calls.load(), 1);
    EXPECT_TRUE(same_bytes(raw_read(raw, n), expected));
    {
        gpu::ScopedContext scope(primary_);
        CU_EXPECT_OK(cu().MemFree(raw)); // would fail had the library freed it
    }
    EXPECT_EQ(owner.calls.load(), 1);
    EXPECT_EQ(owner2.calls.load(), 1);
}

TEST_F(MemoryTest, ForeignHostMemoryAndFromHandleErrors) {
    Bytes host = pattern(1000, 13);
    gpu::ReleaseCounter owner;
    cucore_buffer_t *b = nullptr;
    CUCORE_ASSERT_OK(cucore_buffer_from_handle(reinterpret_cast<std::uintptr_t>(host.data()), host.size(), nullptr,
                                               &gpu::ReleaseCounter::callback, &owner, &b));
    EXPECT_EQ(device_id_of(b), -1);
    EXPECT_EQ(address_of(b), reinterpret_cast<std::uintptr_t>(host.data()));
    EXPECT_EQ(size_of(b), host.size());
    cucore_buffer_t *retained = b;
    CUCORE_EXPECT_OK(cucore_buffer_retain(retained));
    CUCORE_EXPECT_OK(cucore_buffer_release(b));
    EXPECT_EQ(owner.calls.load(), 0);
    CUCORE_EXPECT_OK(cucore_buffer_release(retained));
    EXPECT_EQ(owner.calls.load(), 1);
    EXPECT_TRUE(same_bytes(host, pattern(1000, 13)));

    // Without a callback; zero size at address 0.
    CUCORE_ASSERT_OK(cucore_buffer_from_handle(0, 0, dev_, nullptr, nullptr, &b));
    EXPECT_EQ(size_of(b), 0u);
    CUCORE_EXPECT_OK(cucore_buffer_release(b));

    // Failures never call the owner and leave no object.
    gpu::ReleaseCounter never;
    b = kJunkBuffer;
    CUCORE_EXPECT_STATUS(cucore_buffer_from_handle(0, 16, dev_, &gpu::ReleaseCounter::callback, &never, &b),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(b, nullptr);
    CUCORE_EXPECT_STATUS(cucore_buffer_from_handle(0x1000, 16, dev_, &gpu::ReleaseCounter::callback, &never, nullptr),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    b = kJunkBuffer;
    CUCORE_EXPECT_STATUS(cucore_buffer_from_handle(0x1000, 16, reinterpret_cast<cucore_device_t *>(s_),
                                                   &gpu::ReleaseCounter::callback, &never, &b),
                         CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(b, nullptr);
    EXPECT_EQ(never.calls.load(), 0);
    EXPECT_EQ(live_buffers(), baseline_[CUCORE_OBJECT_BUFFER]);
}

// ---- Live counts and threads ----------------------------------------------------

TEST_F(MemoryTest, LiveCountsFollowTheObjects) {
    const std::size_t buffers = baseline_[CUCORE_OBJECT_BUFFER];
    const std::size_t resources = live_resources(); // the fixture holds the default resource
    cucore_memory_resource_t *own = new_pool();
    cucore_memory_resource_t *pinned = nullptr;
    CUCORE_ASSERT_OK(cucore_legacy_pinned_memory_resource_create(dev_, &pinned));
    EXPECT_EQ(live_resources(), resources + 2);
    cucore_buffer_t *a = alloc(own, 4096, s_);
    cucore_buffer_t *b = alloc(pinned, 4096, nullptr);
    cucore_buffer_t *c = alloc(pool_, 4096, s_);
    cucore_buffer_t *v = nullptr;
    CUCORE_ASSERT_OK(cucore_buffer_view(a, 0, 16, &v));
    EXPECT_EQ(live_buffers(), buffers + 4);
    CUCORE_EXPECT_OK(cucore_buffer_retain(v));
    EXPECT_EQ(live_buffers(), buffers + 4) << "a reference is not an object";
    CUCORE_EXPECT_OK(cucore_buffer_release(v));
    CUCORE_EXPECT_OK(cucore_memory_resource_release(own));
    CUCORE_EXPECT_OK(cucore_memory_resource_release(pinned));
    EXPECT_EQ(live_resources(), resources + 2); // held by their buffers
    CUCORE_EXPECT_OK(cucore_buffer_release(a));
    EXPECT_EQ(live_resources(), resources + 2); // the view holds the memory, and so the pool
    CUCORE_EXPECT_OK(cucore_buffer_release(v));
    EXPECT_EQ(live_buffers(), buffers + 2);
    EXPECT_EQ(live_resources(), resources + 1);
    CUCORE_EXPECT_OK(cucore_buffer_release(b));
    CUCORE_EXPECT_OK(cucore_buffer_release(c));
    EXPECT_EQ(live_buffers(), buffers);
    EXPECT_EQ(live_resources(), resources);
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
}

TEST_F(MemoryTest, ConcurrentAllocateCopyAndFree) {
    cucore_memory_resource_t *own = new_pool();
    ASSERT_NE(own, nullptr);
    constexpr int kThreads = 8, kRounds = 25;
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            cucore_stream_t *s = nullptr;
            if (cucore_stream_create(dev_, nullptr, &s) != CUCORE_SUCCESS) {
                failures.fetch_add(1);
                return;
            }
            for (int r = 0; r < kRounds; ++r) {
                const std::uint64_t n =
                    4096u * static_cast<std::uint64_t>(1 + (t * 7 + r) % 13) + static_cast<std::uint64_t>(r);
                const Bytes data = pattern(static_cast<std::size_t>(n), static_cast<std::uint32_t>(t * 1000 + r));
                cucore_buffer_t *a = nullptr, *b = nullptr;
                Bytes out(static_cast<std::size_t>(n), 0xEE);
                bool ok = cucore_memory_resource_allocate(r % 2 ? own : pool_, n, s, &a) == CUCORE_SUCCESS &&
                          cucore_memory_resource_allocate(own, n, s, &b) == CUCORE_SUCCESS &&
                          cucore_buffer_copy_from_host(a, 0, data.data(), n, s) == CUCORE_SUCCESS &&
                          cucore_buffer_copy(b, a, s) == CUCORE_SUCCESS &&
                          cucore_buffer_copy_to_host(b, 0, out.data(), n, s) == CUCORE_SUCCESS &&
                          cucore_stream_synchronize(s) == CUCORE_SUCCESS && out == data;
                if (!ok) failures.fetch_add(1);
                cucore_buffer_release(a);
                cucore_buffer_release(b);
            }
            if (cucore_stream_synchronize(s) != CUCORE_SUCCESS) failures.fetch_add(1);
            cucore_stream_release(s);
        });
    }
    for (auto &th : threads) th.join();
    EXPECT_EQ(failures.load(), 0) << "rounds that failed or read back wrong bytes";
    cucore_memory_resource_release(own);
}

// ---- The C++ façade -------------------------------------------------------------------

TEST_F(MemoryTest, FacadeResourcesDescribeThemselves) {
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

TEST_F(MemoryTest, FacadeFillsCopiesAndViews) {
    const cucore::Device d(0);
    const cucore::Stream s = d.create_stream();
    const cucore::Stream s2 = d.create_stream();
    cucore::Buffer b = d.allocate(4096, s);

    // Fill widths come from the type.
    b.fill(std::uint8_t{0x9C}, s);
    std::vector<std::uint8_t> host(4096);
    b.copy_to_host(host, s);
    s.synchronize();
    EXPECT_TRUE(same_bytes(host, repeated<std::uint8_t>(0x9C, 4096)));
    b.fill(std::uint16_t{0x1357}, s);
    b.copy_to_host(host, s);
    s.synchronize();
    EXPECT_TRUE(same_bytes(host, repeated<std::uint16_t>(0x1357, 4096)));
    b.fill(std::uint32_t{0x89ABCDEFu}, s);
    s.synchronize();
    EXPECT_TRUE(same_bytes(raw_read(b.address(), 4096), repeated<std::uint32_t>(0x89ABCDEFu, 4096)));

    // Containers in and out, at offsets.
    std::vector<std::uint32_t> words(1024);
    for (std::size_t i = 0; i < words.size(); ++i) words[i] = static_cast<std::uint32_t>(i * 2654435761u);
    b.copy_from_host(words, s);
    const std::array<std::uint16_t, 4> shorts = {0x0102, 0x0304, 0x0506, 0x0708};
    b.copy_from_host(100, shorts, s);
    const std::string text = "cucore";
    b.copy_from_host(200, text, s);
    std::vector<std::uint32_t> words_back(1024, 0);
    std::array<std::uint16_t, 4> shorts_back{};
    std::string text_back(6, '?');
    b.copy_to_host(words_back, s);
    b.copy_to_host(100, shorts_back, s);
    b.copy_to_host(200, text_back, s);
    s.synchronize();
    EXPECT_EQ(shorts_back, shorts);
    EXPECT_EQ(text_back, text);
    std::vector<std::uint32_t> expected_words = words;
    std::memcpy(reinterpret_cast<std::uint8_t *>(expected_words.data()) + 100, shorts.data(), sizeof shorts);
    std::memcpy(reinterpret_cast<std::uint8_t *>(expected_words.data()) + 200, text.data(), text.size());
    EXPECT_EQ(words_back, expected_words);

    // Buffer to buffer, both directions, and a copy into a new buffer.
    const cucore::Buffer other = cucore::MemoryResource::device_pool(d).allocate(4096, s);
    other.copy_from(b, s);
    const cucore::Buffer third = other.copy_to(s);
    EXPECT_EQ(third.size(), 4096u);
    EXPECT_NE(third.address(), other.address());
    std::vector<std::uint32_t> third_back(1024, 0);
    third.copy_to_host(third_back, s);
    s.synchronize();
    EXPECT_EQ(third_back, expected_words);
    b.fill(std::uint8_t{0}, s);
    third.copy_to(b, s);
    b.copy_to_host(words_back, s);
    s.synchronize();
    EXPECT_EQ(words_back, expected_words);

    // Views.
    const cucore::Buffer v = b.view(64, 128);
    EXPECT_EQ(v.address(), b.address() + 64);
    EXPECT_EQ(v.size(), 128u);
    v.fill(std::uint32_t{0x0BADF00Du}, s);
    std::vector<std::uint8_t> all(4096);
    b.copy_to_host(all, s);
    s.synchronize();
    Bytes expected_all(4096);
    std::memcpy(expected_all.data(), expected_words.data(), 4096);
    const Bytes f = repeated<std::uint32_t>(0x0BADF00Du, 128);
    std::copy(f.begin(), f.end(), expected_all.begin() + 64);
    EXPECT_TRUE(same_bytes(all, expected_all));

    // Deallocation stream, copies share one object, closing.
    b.set_deallocation_stream(s2);
    cucore::Buffer copy = b;
    EXPECT_EQ(copy, b);
    copy.close(s2);
    EXPECT_EQ(b.size(), 0u);
    EXPECT_EQ(b.address(), 0u);
    CUCORE_EXPECT_THROW_STATUS(b.fill(std::uint8_t{1}, s), CUCORE_ERROR_INVALID_STATE);
    CUCORE_EXPECT_THROW_STATUS(b.view(0, 0), CUCORE_ERROR_INVALID_STATE);
    CUCORE_EXPECT_THROW_STATUS(b.copy_to_host(host, s), CUCORE_ERROR_INVALID_STATE);
    b.close(); // again: nothing
    // The view kept the memory.
    std::vector<std::uint8_t> vback(128);
    v.copy_to_host(vback, s);
    s.synchronize();
    EXPECT_TRUE(same_bytes(vback, f));
    s2.synchronize();
}

TEST_F(MemoryTest, FacadeArgumentErrorsThrow) {
    const cucore::Device d(0);
    const cucore::Stream s = d.create_stream();
    const cucore::Buffer a = d.allocate(4096, s);
    const cucore::Buffer b = d.allocate(4000, s);
    const cucore::Buffer six = d.allocate(6, s);
    CUCORE_EXPECT_THROW_STATUS(a.copy_from(b, s), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_THROW_STATUS(a.copy_to(b, s), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_THROW_STATUS(six.fill(std::uint32_t{1}, s), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_THROW_STATUS(a.view(4000, 97), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_THROW_STATUS(a.view(~std::uint64_t{0}, 2), CUCORE_ERROR_INVALID_ARGUMENT);
    std::vector<std::uint8_t> big(5000);
    CUCORE_EXPECT_THROW_STATUS(a.copy_from_host(big, s), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_THROW_STATUS(a.copy_to_host(big, s), CUCORE_ERROR_INVALID_ARGUMENT);
    std::vector<std::uint8_t> small(100);
    CUCORE_EXPECT_THROW_STATUS(a.copy_to_host(4000, small, s), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_THROW_STATUS(cucore::Buffer().size(), CUCORE_ERROR_INVALID_HANDLE);
    CUCORE_EXPECT_THROW_STATUS(a.copy_from(cucore::Buffer(), s), CUCORE_ERROR_INVALID_HANDLE);
    CUCORE_EXPECT_THROW_STATUS(a.fill(std::uint8_t{0}, cucore::Stream()), CUCORE_ERROR_INVALID_HANDLE);
    CUCORE_EXPECT_THROW_STATUS(cucore::Buffer::from_handle(0, 16, d), CUCORE_ERROR_INVALID_ARGUMENT);
    // Foreign memory has no resource to allocate a copy from.
    const cucore::Buffer foreign = cucore::Buffer::from_handle(a.address(), a.size(), d);
    EXPECT_FALSE(static_cast<bool>(foreign.memory_resource()));
    CUCORE_EXPECT_THROW_STATUS(foreign.copy_to(s), CUCORE_ERROR_INVALID_ARGUMENT);
    s.synchronize();
}

TEST_F(MemoryTest, FacadePinnedAndForeignBuffers) {
    const cucore::Device d(0);
    const cucore::Stream s = d.create_stream();
    const cucore::MemoryResource pinned = cucore::MemoryResource::legacy_pinned(d);
    const cucore::Buffer h = pinned.allocate(4096);
    EXPECT_EQ(h.device_id(), -1);
    ASSERT_NE(h.data(), nullptr);
    const Bytes data = pattern(4096, 14);
    std::memcpy(h.data(), data.data(), data.size());
    const cucore::Buffer host_copy = h.copy_to(s); // from the pinned resource: host memory again
    EXPECT_EQ(host_copy.device_id(), -1);
    const cucore::Buffer on_device = d.allocate(4096, s);
    on_device.copy_from(h, s);
    s.synchronize();
    EXPECT_TRUE(same_bytes(Bytes(static_cast<std::uint8_t *>(host_copy.data()),
                                 static_cast<std::uint8_t *>(host_copy.data()) + 4096),
                           data));
    EXPECT_TRUE(same_bytes(raw_read(on_device.address(), 4096), data));

    // Foreign device memory through the façade: the owner hears once.
    CUdeviceptr raw = 0;
    {
        gpu::ScopedContext scope(primary_);
        CU_ASSERT_OK(cu().MemAlloc(&raw, 4096));
    }
    gpu::ReleaseCounter owner;
    {
        cucore::Buffer f = cucore::Buffer::from_handle(raw, 4096, d, &gpu::ReleaseCounter::callback, &owner);
        EXPECT_EQ(f.address(), static_cast<std::uint64_t>(raw));
        EXPECT_EQ(f.device_id(), 0);
        f.copy_from(on_device, s);
        const cucore::Buffer f2 = f; // retain
        f.reset();
        EXPECT_EQ(owner.calls.load(), 0);
        s.synchronize();
        EXPECT_EQ(f2.size(), 4096u);
    }
    EXPECT_EQ(owner.calls.load(), 1);
    EXPECT_TRUE(same_bytes(raw_read(raw, 4096), data));
    {
        gpu::ScopedContext scope(primary_);
        CU_EXPECT_OK(cu().MemFree(raw));
    }
    // Foreign host memory.
    std::vector<std::uint8_t> host(64, 1);
    gpu::ReleaseCounter host_owner;
    {
        const cucore::Buffer fh = cucore::Buffer::from_handle(reinterpret_cast<std::uintptr_t>(host.data()), 64,
                                                              &gpu::ReleaseCounter::callback, &host_owner);
        EXPECT_EQ(fh.device_id(), -1);
        EXPECT_EQ(fh.data(), static_cast<void *>(host.data()));
    }
    EXPECT_EQ(host_owner.calls.load(), 1);
    // Ownership to C and back.
    cucore_buffer_t *c = cucore::Buffer(d.allocate(16, s)).release();
    const cucore::Buffer back = cucore::Buffer::adopt(c);
    EXPECT_EQ(back.size(), 16u);
    s.synchronize();
}

} // namespace
