// Helpers of the GPU tests of the newer memory resources (memory_resources_test,
// copy_3d_test, managed_test, virtual_memory_test): byte patterns and their
// comparison, and a fixture with a stream on device 0 that reads and writes
// buffers through libcucore and, independently, through the raw driver.
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

    void write(cucore_buffer_t *b, const Bytes &bytes, std::uint64_t offset = 0) {
        EXPECT_EQ(cucore_buffer_copy_from_host(b, offset, bytes.data(), bytes.size(), s_), CUCORE_SUCCESS)
            << cucore_last_error_message();
        EXPECT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS) << cucore_last_error_message();
    }

    // `n` bytes at an address through the raw driver (cuMemcpyDtoH in the
    // primary context of device 0; unified addressing reaches every device's
    // and managed memory). The caller synchronizes the library's work first.
    Bytes raw_read(std::uint64_t address, std::size_t n) {
        Bytes out(n, 0xEE);
        ScopedContext scope(primary_);
        const CUresult r = cu().MemcpyDtoH(out.data(), static_cast<CUdeviceptr>(address), n);
        EXPECT_EQ(r, CUDA_SUCCESS) << "cuMemcpyDtoH -> " << raw::error_name(r);
        return out;
    }

    // Writes through the raw driver and waits until the bytes have landed.
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

// Skips the test, with the library's reason, when `status` is NOT_SUPPORTED.
#define CUCORE_SKIP_IF_NOT_SUPPORTED(status, what)                                                  \
    do {                                                                                            \
        if ((status) == CUCORE_ERROR_NOT_SUPPORTED)                                                 \
            GTEST_SKIP() << what << " is not supported here: " << cucore_last_error_message();      \
    } while (0)

} // namespace gpu
