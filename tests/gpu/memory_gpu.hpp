// Helpers of the GPU tests of memory (memory_resource, memory_pool,
// managed_memory, virtual_memory, user_memory, buffer and copy_3d): byte
// patterns and their comparison, page-locked host memory for gated copies, and
// fixtures that read and write buffers through libcucore and, independently,
// through the raw driver: MemoryGpuTest (a stream on device 0) and, over it,
// PoolKindsGpuTest (with makers of pinned and managed pools) and
// DefaultPoolGpuTest (with the current pool of device 0).
// check_free_on_waiting_stream is shared by the pool tests of
// memory_pool_test.cpp and managed_memory_test.cpp.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gpu_test.hpp"

namespace gpu {

using Bytes = std::vector<std::uint8_t>;

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// `n` pseudo-random bytes, different for each seed.
inline Bytes pattern(std::size_t n, std::uint32_t seed) {
    Bytes v(n);
    std::uint32_t x = seed * 2654435761u + 12345u;
    for (auto &b : v) {
        x = x * 1664525u + 1013904223u;
        b = static_cast<std::uint8_t>(x >> 24);
    }
    return v;
}

// `bytes` bytes holding `value` over and over (host byte order, as the device's).
template <typename T> inline Bytes repeated(T value, std::size_t bytes) {
    Bytes v(bytes);
    for (std::size_t i = 0; i + sizeof(T) <= bytes; i += sizeof(T)) std::memcpy(&v[i], &value, sizeof(T));
    return v;
}

// Equal byte by byte; on failure names the first differing byte and how many differ.
inline ::testing::AssertionResult same_bytes(const Bytes &got, const Bytes &want) {
    if (got.size() != want.size())
        return ::testing::AssertionFailure() << "sizes differ: got " << got.size() << ", expected " << want.size();
    std::size_t first = got.size(), count = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i] && count++ == 0) first = i;
    if (count == 0) return ::testing::AssertionSuccess();
    char detail[96];
    std::snprintf(detail, sizeof detail, "got 0x%02x, expected 0x%02x", got[first], want[first]);
    return ::testing::AssertionFailure() << count << " of " << got.size() << " bytes differ; the first at byte "
                                         << first << ": " << detail;
}

inline std::uint64_t address_of(const cucore_buffer_t *b) {
    std::uint64_t a = ~std::uint64_t{0};
    EXPECT_EQ(cucore_buffer_address(b, &a), CUCORE_SUCCESS) << cucore_last_error_message();
    return a;
}

inline std::uint64_t size_of(const cucore_buffer_t *b) {
    std::uint64_t n = ~std::uint64_t{0};
    EXPECT_EQ(cucore_buffer_size(b, &n), CUCORE_SUCCESS) << cucore_last_error_message();
    return n;
}

inline int event_done(cucore_event_t *e) {
    int done = -1;
    EXPECT_EQ(cucore_event_query(e, &done), CUCORE_SUCCESS) << cucore_last_error_message();
    return done;
}

inline int device_id_of(const cucore_buffer_t *b) {
    int id = -2;
    EXPECT_EQ(cucore_buffer_device_id(b, &id), CUCORE_SUCCESS) << cucore_last_error_message();
    return id;
}

inline cucore_memory_resource_kind_t kind_of(const cucore_memory_resource_t *mr) {
    cucore_memory_resource_kind_t k = CUCORE_MEMORY_RESOURCE_UNSET;
    EXPECT_EQ(cucore_memory_resource_kind(mr, &k), CUCORE_SUCCESS) << cucore_last_error_message();
    return k;
}

// A buffer pointer no library call ever returns, to see out-pointers cleared.
inline cucore_buffer_t *const kJunkBuffer = reinterpret_cast<cucore_buffer_t *>(std::uintptr_t{0x10});

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

// The fixture: device 0, a stream on it, and the release-error count and
// current context checked at the end.
class MemoryGpuTest : public GpuTest {
protected:
    void SetUp() override {
        GpuTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        CUCORE_ASSERT_OK(cucore_release_error_count(&release_errors_));
        CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &s_));
    }

    void TearDown() override {
        if (ready_) {
            if (s_ != nullptr) {
                EXPECT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS) << cucore_last_error_message();
                cucore_stream_release(s_);
                s_ = nullptr;
            }
            std::uint64_t errors = 0;
            EXPECT_EQ(cucore_release_error_count(&errors), CUCORE_SUCCESS);
            EXPECT_EQ(errors, release_errors_) << "failures inside release paths during the test";
            EXPECT_EQ(current_context(), nullptr) << "a library call left a context current";
        }
        GpuTest::TearDown();
    }

    cucore_buffer_t *alloc(cucore_memory_resource_t *mr, std::uint64_t size, cucore_stream_t *stream) {
        cucore_buffer_t *b = nullptr;
        EXPECT_EQ(cucore_memory_resource_allocate(mr, size, stream, &b), CUCORE_SUCCESS)
            << "allocate " << size << ": " << cucore_last_error_message();
        return b;
    }

    // `size` bytes of `b` at `offset` through the library (copy_to_host, synchronize).
    Bytes read(cucore_buffer_t *b, std::uint64_t offset = 0, std::uint64_t size = ~std::uint64_t{0}) {
        if (size == ~std::uint64_t{0}) size = size_of(b) - offset;
        Bytes out(static_cast<std::size_t>(size), 0xEE);
        EXPECT_EQ(cucore_buffer_copy_to_host(b, offset, out.data(), size, s_), CUCORE_SUCCESS)
            << cucore_last_error_message();
        EXPECT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS) << cucore_last_error_message();
        return out;
    }

    // All of `b` through the library on `stream` (copy_to_host, synchronize).
    Bytes read(cucore_buffer_t *b, cucore_stream_t *stream) {
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

    // `n` bytes at an address through the raw driver: cuMemcpyDtoH in the
    // primary context of the device the memory belongs to (device 0 for host and
    // managed memory; another device's pool memory is not mapped in device 0's
    // context). The caller synchronizes the library's work first.
    Bytes raw_read(std::uint64_t address, std::size_t n) {
        Bytes out(n, 0xEE);
        int ordinal = -1;
        unsigned memory_type = 0;
        const CUdeviceptr pointer = static_cast<CUdeviceptr>(address);
        CUcontext context = primary_;
        CUdevice owner = cu_dev_;
        if (cu().PointerGetAttribute(&memory_type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, pointer) == CUDA_SUCCESS &&
            memory_type == CU_MEMORYTYPE_DEVICE &&
            cu().PointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, pointer) == CUDA_SUCCESS &&
            ordinal > 0) {
            EXPECT_EQ(cu().DeviceGet(&owner, ordinal), CUDA_SUCCESS);
            EXPECT_EQ(cu().DevicePrimaryCtxRetain(&context, owner), CUDA_SUCCESS);
        }
        {
            ScopedContext scope(context);
            const CUresult r = cu().MemcpyDtoH(out.data(), pointer, n);
            EXPECT_EQ(r, CUDA_SUCCESS) << "cuMemcpyDtoH -> " << raw::error_name(r);
        }
        if (context != primary_) cu().DevicePrimaryCtxRelease(owner);
        return out;
    }

    // Writes through the raw driver and waits until the bytes have landed: a
    // synchronous cuMemcpyHtoD from pageable memory may return while its DMA is
    // still in flight, and the library's streams are non-blocking (they do not
    // wait for the legacy stream the copy ran on).
    void raw_write(std::uint64_t address, const Bytes &bytes) {
        ScopedContext scope(primary_);
        const CUresult r = cu().MemcpyHtoD(static_cast<CUdeviceptr>(address), bytes.data(), bytes.size());
        EXPECT_EQ(r, CUDA_SUCCESS) << "cuMemcpyHtoD -> " << raw::error_name(r);
        const CUresult synced = cu().CtxSynchronize();
        EXPECT_EQ(synced, CUDA_SUCCESS) << "cuCtxSynchronize -> " << raw::error_name(synced);
    }

    // A pointer attribute through the raw driver.
    template <typename T> T pointer_attribute(std::uint64_t address, CUpointer_attribute attribute) {
        T value{};
        ScopedContext scope(primary_);
        const CUresult r = cu().PointerGetAttribute(&value, attribute, static_cast<CUdeviceptr>(address));
        EXPECT_EQ(r, CUDA_SUCCESS) << "cuPointerGetAttribute(" << static_cast<int>(attribute)
                                   << ") -> " << raw::error_name(r);
        return value;
    }

    cucore_stream_t *s_ = nullptr;  // a stream on device 0
    std::uint64_t release_errors_ = 0;
};

// MemoryGpuTest with makers of the pools a driver may lack (host pools, managed
// pools), which leave their status in last_status_ for a skip.
class PoolKindsGpuTest : public MemoryGpuTest {
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
    cucore_status_t last_status_ = CUCORE_SUCCESS;
};

// MemoryGpuTest with device 0's current memory pool (a skip without pools):
// the fixture of a single device's buffers and pools (BufferTest,
// MemoryResourceTest, MemoryPoolTest, Copy3DGpuTest), with the raw driver's
// view of pools.
class DefaultPoolGpuTest : public MemoryGpuTest {
protected:
    void SetUp() override {
        MemoryGpuTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        const cucore_status_t st = cucore_device_memory_resource_get_default(dev_, &pool_);
        if (st == CUCORE_ERROR_NOT_SUPPORTED)
            GTEST_SKIP() << "device 0 has no stream-ordered memory pools: " << cucore_last_error_message();
        CUCORE_ASSERT_OK(st);
    }

    void TearDown() override {
        cucore_memory_resource_release(pool_);
        pool_ = nullptr;
        MemoryGpuTest::TearDown();
    }

    cucore_memory_resource_t *new_pool(const cucore_device_memory_resource_options_t *options = nullptr) {
        cucore_memory_resource_t *mr = nullptr;
        EXPECT_EQ(cucore_device_memory_resource_create(dev_, options, &mr), CUCORE_SUCCESS)
            << cucore_last_error_message();
        return mr;
    }

    // The driver's memory pool of an allocation (NULL if none).
    CUmemoryPool raw_pool_of(std::uint64_t address) {
        return pointer_attribute<CUmemoryPool>(address, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE);
    }

    std::uint64_t raw_pool_attribute(CUmemoryPool pool, CUmemPool_attribute attr) {
        cuuint64_t v = 0;
        ScopedContext scope(primary_);
        const CUresult r = cu().MemPoolGetAttribute(pool, attr, &v);
        EXPECT_EQ(r, CUDA_SUCCESS) << "cuMemPoolGetAttribute(" << static_cast<int>(attr)
                                   << ") -> " << raw::error_name(r);
        return static_cast<std::uint64_t>(v);
    }

    std::size_t live_buffers() { return live(CUCORE_OBJECT_BUFFER); }
    std::size_t live_resources() { return live(CUCORE_OBJECT_MEMORY_RESOURCE); }

    cucore_memory_resource_t *pool_ = nullptr; // device 0's current memory pool
};

// Skips the test, with the library's reason, when `status` is NOT_SUPPORTED.
#define CUCORE_SKIP_IF_NOT_SUPPORTED(status, what)                                                  \
    do {                                                                                            \
        if ((status) == CUCORE_ERROR_NOT_SUPPORTED)                                                 \
            GTEST_SKIP() << what << " is not supported here: " << cucore_last_error_message();      \
    } while (0)

// Stream A reads a buffer behind a closed gate; the buffer is freed on stream B,
// which waits for A, while its last user (A) has not run; an unrelated stream C
// then allocates as much from the pool and overwrites it. Freed on B after A,
// the memory cannot reach C before A's read, so A must read the original bytes.
inline void check_free_on_waiting_stream(cucore_device_t *dev, cucore_memory_resource_t *mr, std::uint64_t n) {
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

} // namespace gpu
