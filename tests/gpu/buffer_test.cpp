// Buffers on a real GPU: copies, fills, views, closing and zero sizes,
// stream-ordered freeing, foreign memory, live counts and threads, and the C++
// façade. Every result is read back and compared byte by byte, through
// libcucore and, where it adds something, through the raw driver (cuMemcpyDtoH
// of a buffer's address, pointer attributes).
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
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
using gpu::device_id_of;
using gpu::event_done;
using gpu::kind_of;
using gpu::kJunkBuffer;
using gpu::PinnedHost;
using gpu::repeated;
using gpu::size_of;

class BufferTest : public gpu::DefaultPoolGpuTest {};

TEST_F(BufferTest, FillWritesOneTwoAndFourBytePatterns) {
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

TEST_F(BufferTest, FillRejectsBadWidthsValuesAndSizes) {
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

TEST_F(BufferTest, HostToDeviceToDeviceToHostRoundTrip) {
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

TEST_F(BufferTest, CopiesAcrossStreamsFollowWaits) {
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

TEST_F(BufferTest, CopyArgumentErrors) {
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

TEST_F(BufferTest, ViewsReadAndWriteAtOffsets) {
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

TEST_F(BufferTest, ViewsOutsideTheBufferAreRejected) {
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

TEST_F(BufferTest, ViewsKeepTheMemoryAlive) {
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

TEST_F(BufferTest, UseAfterCloseIsInvalidState) {
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

TEST_F(BufferTest, ZeroSizeBuffers) {
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

TEST_F(BufferTest, LastReleaseFreesOnTheAllocationStream) {
    cucore_memory_resource_t *mr = new_pool();
    ASSERT_NE(mr, nullptr);
    PinnedHost out(dev_, kFreeOrderingSize);
    ASSERT_TRUE(out);
    check_free_ordering(out, dev_, mr, FreeBy::allocation_stream, primary_);
    cucore_memory_resource_release(mr);
}

TEST_F(BufferTest, SetDeallocationStreamOrdersTheFree) {
    cucore_memory_resource_t *mr = new_pool();
    ASSERT_NE(mr, nullptr);
    PinnedHost out(dev_, kFreeOrderingSize);
    ASSERT_TRUE(out);
    check_free_ordering(out, dev_, mr, FreeBy::deallocation_stream, primary_);
    cucore_memory_resource_release(mr);
}

TEST_F(BufferTest, CloseOnAStreamThatWaitedForTheUser) {
    cucore_memory_resource_t *mr = new_pool();
    ASSERT_NE(mr, nullptr);
    PinnedHost out(dev_, kFreeOrderingSize);
    ASSERT_TRUE(out);
    check_free_ordering(out, dev_, mr, FreeBy::close_on_waiting_stream, primary_);
    cucore_memory_resource_release(mr);
}

TEST_F(BufferTest, DefaultPoolFreesInStreamOrderToo) {
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

TEST_F(BufferTest, BufferHoldsItsDeallocationStream) {
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

// ---- Foreign memory -----------------------------------------------------------------

TEST_F(BufferTest, ForeignDeviceMemoryIsWrappedWithoutOwnership) {
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

TEST_F(BufferTest, ForeignHostMemoryAndFromHandleErrors) {
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

TEST_F(BufferTest, LiveCountsFollowTheObjects) {
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

TEST_F(BufferTest, ConcurrentAllocateCopyAndFree) {
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

TEST_F(BufferTest, FacadeFillsCopiesAndViews) {
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

TEST_F(BufferTest, FacadeArgumentErrorsThrow) {
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

TEST_F(BufferTest, FacadePinnedAndForeignBuffers) {
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

}  // namespace
