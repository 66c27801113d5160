// cucore_copy_3d against the fake driver, whose cuMemcpy3DAsync really copies
// strided host memory: results are compared byte by byte with a copy computed
// here from the layout the header describes, and every error case of the
// header is refused before any driver call.
#include <cstring>
#include <string>

#include "memory_support.hpp"

namespace {

struct Layout {
    uint64_t offset, pitch, height, x, y, z;
};

// The header's layout: byte x of row y of slice z is at
// offset + (z * height + y) * pitch + x.
void reference_copy(Bytes &dst, const Layout &d, const Bytes &src, const Layout &s, uint64_t width, uint64_t rows,
                    uint64_t depth) {
    for (uint64_t k = 0; k < depth; ++k)
        for (uint64_t j = 0; j < rows; ++j)
            for (uint64_t i = 0; i < width; ++i)
                dst.at(d.offset + ((d.z + k) * d.height + d.y + j) * d.pitch + d.x + i) =
                    src.at(s.offset + ((s.z + k) * s.height + s.y + j) * s.pitch + s.x + i);
}

cucore_memory_region_t region(const Layout &l) {
    cucore_memory_region_t r{};
    r.offset = l.offset;
    r.pitch = l.pitch;
    r.height = l.height;
    r.x = l.x;
    r.y = l.y;
    r.z = l.z;
    return r;
}

class Copy3DTest : public MemoryFixture {
  protected:
    void SetUp() override {
        MemoryFixture::SetUp();
        ASSERT_EQ(cucore_device_memory_resource_get_default(d0_, &pool_), CUCORE_SUCCESS);
        buffer_ = alloc(pool_, kBufferSize, s0_);
        ASSERT_EQ(cucore_buffer_fill(buffer_, 0x5A, 1, s0_), CUCORE_SUCCESS);
    }
    void TearDown() override {
        cucore_buffer_release(buffer_);
        cucore_memory_resource_release(pool_);
        MemoryFixture::TearDown();
    }
    // A copy from host memory into buffer_, valid unless a test breaks it.
    cucore_copy_3d_t host_to_buffer() {
        cucore_copy_3d_t c = CUCORE_COPY_3D_INIT;
        c.src = region({0, 16, 4, 0, 0, 0});
        c.src.host = host_.data();
        c.dst = region({0, 32, 4, 0, 0, 0});
        c.dst.buffer = buffer_;
        c.width = 16;
        c.rows = 4;
        c.depth = 2;
        return c;
    }
    // Expects `copy` refused with `status` (message naming `what`) before any
    // driver call, and buffer_ untouched.
    void expect_refused(const cucore_copy_3d_t &copy, const char *what,
                        cucore_status_t status = CUCORE_ERROR_INVALID_ARGUMENT) {
        SCOPED_TRACE(what);
        fake::reset_calls();
        EXPECT_EQ(cucore_copy_3d(&copy, s0_), status) << message();
        EXPECT_EQ(message().rfind("cucore_copy_3d:", 0), 0u) << message();
        EXPECT_NE(message().find(what), std::string::npos) << message();
        EXPECT_EQ(fake::calls(), 0) << "checked before the driver";
        EXPECT_EQ(read_all(buffer_), Bytes(kBufferSize, 0x5A)) << "nothing written";
    }

    static constexpr uint64_t kBufferSize = 1024;
    cucore_memory_resource_t *pool_ = nullptr;
    cucore_buffer_t *buffer_ = nullptr;
    Bytes host_ = pattern(4096, 9);
};

TEST_F(Copy3DTest, HostToBufferToHostMatchesTheLayoutByteByByte) {
    // 2 slices of 3 rows of 7 bytes: from slice 1, row 1, byte 2 of a host array
    // (pitch 16, 5 rows a slice, 3 bytes in) to byte 4 of the first row of a
    // buffer (pitch 12, 4 rows a slice, 5 bytes in).
    const Layout src{3, 16, 5, 2, 1, 1}, dst{5, 12, 4, 4, 0, 0};
    const Bytes host = pattern(3 + 3 * 5 * 16, 17);
    cucore_copy_3d_t c = CUCORE_COPY_3D_INIT;
    c.src = region(src);
    c.src.host = const_cast<uint8_t *>(host.data());
    c.dst = region(dst);
    c.dst.buffer = buffer_;
    c.width = 7;
    c.rows = 3;
    c.depth = 2;
    fake::reset_calls();
    ASSERT_EQ(cucore_copy_3d(&c, s0_), CUCORE_SUCCESS) << message();
    EXPECT_TRUE(called("cuMemcpy3DAsync"));
    EXPECT_EQ(fake::current_context(), nullptr);
    Bytes expected(kBufferSize, 0x5A);
    reference_copy(expected, dst, host, src, 7, 3, 2);
    EXPECT_NE(expected, Bytes(kBufferSize, 0x5A)) << "the copy moves something";
    EXPECT_EQ(read_all(buffer_), expected);

    // And back out into another layout of host memory.
    const Layout back{1, 10, 6, 3, 2, 0};
    Bytes out(1 + 2 * 6 * 10, 0xC3);
    cucore_copy_3d_t r = CUCORE_COPY_3D_INIT;
    r.src = region(dst);
    r.src.buffer = buffer_;
    r.dst = region(back);
    r.dst.host = out.data();
    r.width = 7;
    r.rows = 3;
    r.depth = 2;
    ASSERT_EQ(cucore_copy_3d(&r, s0_), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_synchronize(s0_), CUCORE_SUCCESS);
    Bytes want(out.size(), 0xC3);
    reference_copy(want, back, expected, dst, 7, 3, 2);
    EXPECT_EQ(out, want);
}

TEST_F(Copy3DTest, BufferToBuffer2DCopiesIgnoreHeightsButNotSlices) {
    cucore_buffer_t *src = alloc(pool_, kBufferSize, s0_);
    const Bytes data = pattern(kBufferSize, 23);
    write(src, 0, data);
    // A 2D copy: heights 0 (unused), 5 rows of 9 bytes.
    const Layout from{7, 20, 0, 3, 2, 0}, to{0, 16, 0, 5, 1, 0};
    cucore_copy_3d_t c = CUCORE_COPY_3D_INIT;
    c.src = region(from);
    c.src.buffer = src;
    c.dst = region(to);
    c.dst.buffer = buffer_;
    c.width = 9;
    c.rows = 5;
    ASSERT_EQ(cucore_copy_3d(&c, s0_), CUCORE_SUCCESS) << message();
    Bytes expected(kBufferSize, 0x5A);
    reference_copy(expected, to, data, from, 9, 5, 1);
    EXPECT_EQ(read_all(buffer_), expected);
    // A 2D copy in slice 2 of a layout with 6-row slices: rows 12.. of the buffer.
    const Layout slice{0, 16, 6, 0, 1, 2};
    c.dst = region(slice);
    c.dst.buffer = buffer_;
    ASSERT_EQ(cucore_copy_3d(&c, s0_), CUCORE_SUCCESS) << message();
    reference_copy(expected, slice, data, from, 9, 5, 1);
    EXPECT_EQ(read_all(buffer_), expected);
    // A copy of zero width moves nothing and asks nothing of the driver.
    c.width = 0;
    fake::reset_calls();
    ASSERT_EQ(cucore_copy_3d(&c, s0_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::calls(), 0);
    EXPECT_EQ(read_all(buffer_), expected);
    cucore_buffer_release(src);
}

TEST_F(Copy3DTest, TheLastByteOfTheBufferIsInsideAndOneMoreIsOutside) {
    // 2 slices of 4 rows of 16 bytes at offset 0 in 32-byte rows: the last byte
    // written is (1 * 4 + 3) * 32 + 16 = 240 bytes in; put it at the very end.
    cucore_copy_3d_t c = host_to_buffer();
    c.dst.offset = kBufferSize - 240;
    ASSERT_EQ(cucore_copy_3d(&c, s0_), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_buffer_fill(buffer_, 0x5A, 1, s0_), CUCORE_SUCCESS);
    c.dst.offset += 1;
    expect_refused(c, "dst");
}

TEST_F(Copy3DTest, EveryDocumentedErrorIsRefusedBeforeTheDriver) {
    EXPECT_EQ(cucore_copy_3d(nullptr, s0_), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_copy_3d_t c = host_to_buffer();
    EXPECT_EQ(cucore_copy_3d(&c, nullptr), CUCORE_ERROR_INVALID_HANDLE) << "a stream is required";

    c = host_to_buffer();
    c.src.buffer = buffer_;  // and host
    expect_refused(c, "src");
    c = host_to_buffer();
    c.dst.buffer = nullptr;  // neither
    expect_refused(c, "dst");

    c = host_to_buffer();
    c.src.x = 1;  // 1 + 16 > 16
    expect_refused(c, "src.x");
    c = host_to_buffer();
    c.dst.pitch = 15;
    expect_refused(c, "dst");
    c = host_to_buffer();
    c.src.y = 1;  // 1 + 4 rows > 4 (a 3D copy)
    expect_refused(c, "src.y");
    c = host_to_buffer();
    c.dst.height = 3;
    expect_refused(c, "dst");

    c = host_to_buffer();
    c.dst.z = 3;  // slices 3 and 4 of 1024 / (4 * 32) = 8: in; 7 and 8: out
    ASSERT_EQ(cucore_copy_3d(&c, s0_), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_buffer_fill(buffer_, 0x5A, 1, s0_), CUCORE_SUCCESS);
    c.dst.z = 7;
    expect_refused(c, "dst");
    c = host_to_buffer();
    c.rows = 0;
    expect_refused(c, "rows");
    c = host_to_buffer();
    c.depth = 0;
    expect_refused(c, "depth");

    // A buffer as the source is checked too.
    c = host_to_buffer();
    c.src = c.dst;
    c.dst = region({0, 16, 4, 0, 0, 0});
    c.dst.host = host_.data();
    c.src.offset = kBufferSize;
    expect_refused(c, "src");

    // Struct checks.
    c = host_to_buffer();
    c.reserved0 = 1;
    expect_refused(c, "copy.reserved0");
    c = host_to_buffer();
    c.struct_size = 0;
    expect_refused(c, "struct_size");
    struct Newer {
        cucore_copy_3d_t known;
        uint64_t future_field;
    } newer{};
    newer.known = host_to_buffer();
    newer.known.struct_size = sizeof newer;
    newer.future_field = 1;
    expect_refused(newer.known, "does not know", CUCORE_ERROR_NOT_SUPPORTED);
}

TEST_F(Copy3DTest, ArithmeticOverflowIsRefusedNotWrapped) {
    cucore_copy_3d_t c = host_to_buffer();
    c.dst.offset = UINT64_MAX - 8;
    expect_refused(c, "dst");
    c = host_to_buffer();
    c.dst.pitch = UINT64_MAX / 2;  // (slices * height + rows) * pitch overflows
    expect_refused(c, "dst");
    c = host_to_buffer();
    c.dst.z = UINT64_MAX / 4;
    expect_refused(c, "dst");
    c = host_to_buffer();
    c.dst.x = UINT64_MAX - 4;  // x + width wraps past the pitch
    expect_refused(c, "dst");
    // A 2D copy (heights unused) whose row or slice index is absurd: it would
    // address memory before or far after the buffer.
    c = host_to_buffer();
    c.depth = 1;
    c.dst.y = UINT64_MAX;
    expect_refused(c, "dst");
    c = host_to_buffer();
    c.depth = 1;
    c.dst.y = UINT64_MAX - 2;  // y + rows - 1 wraps to 0
    expect_refused(c, "dst");
    c = host_to_buffer();
    c.depth = 1;
    c.dst.z = 1000;  // slice 1000 of 4-row slices: far past the buffer
    expect_refused(c, "dst");
}

TEST_F(Copy3DTest, AClosedBufferIsInvalidState) {
    cucore_buffer_t *b = alloc(pool_, 64, s0_);
    ASSERT_EQ(cucore_buffer_close(b, nullptr), CUCORE_SUCCESS);
    cucore_copy_3d_t c = CUCORE_COPY_3D_INIT;
    c.src = region({0, 8, 0, 0, 0, 0});
    c.src.buffer = b;
    c.dst = region({0, 8, 0, 0, 0, 0});
    c.dst.buffer = buffer_;
    c.width = 8;
    expect_refused(c, "closed", CUCORE_ERROR_INVALID_STATE);
    std::swap(c.src, c.dst);
    fake::reset_calls();
    EXPECT_EQ(cucore_copy_3d(&c, s0_), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(fake::calls(), 0);
    cucore_buffer_release(b);
}

}  // namespace

namespace {

// Between two devices' memory the copy is a peer copy on either device's stream (the driver's plain 3D copy
// does not reach another device's memory); host memory and a device's memory are copied on its own streams.
TEST_F(Copy3DTest, BetweenTwoDevicesIsAPeerCopyAndHostSidesUseTheirDevicesStream) {
    cucore_memory_resource_t *pool1 = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_get_default(d1_, &pool1), CUCORE_SUCCESS);
    cucore_buffer_t *other = alloc(pool1, kBufferSize, s1_);
    ASSERT_EQ(cucore_buffer_fill(other, 0x11, 1, s1_), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_stream_synchronize(s1_), CUCORE_SUCCESS);
    const Layout from{0, 32, 4, 0, 0, 0}, to{8, 32, 4, 0, 1, 0};
    cucore_copy_3d_t c = CUCORE_COPY_3D_INIT;
    c.src = region(from);
    c.src.buffer = buffer_;
    c.dst = region(to);
    c.dst.buffer = other;
    c.width = 16;
    c.rows = 2;
    c.depth = 2;
    fake::reset_calls();
    ASSERT_EQ(cucore_copy_3d(&c, s0_), CUCORE_SUCCESS) << message();
    EXPECT_TRUE(called("cuMemcpy3DPeerAsync"));
    EXPECT_FALSE(called("cuMemcpy3DAsync"));
    ASSERT_EQ(cucore_stream_synchronize(s0_), CUCORE_SUCCESS);
    Bytes expected(kBufferSize, 0x11);
    reference_copy(expected, to, Bytes(kBufferSize, 0x5A), from, 16, 2, 2);
    EXPECT_EQ(read_all(other), expected);
    // Host memory into device 1's memory on device 0's stream: refused before the driver.
    cucore_copy_3d_t h = host_to_buffer();
    h.dst.buffer = other;
    fake::reset_calls();
    EXPECT_EQ(cucore_copy_3d(&h, s0_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("'copy.dst.buffer' is memory of device 1"), std::string::npos) << message();
    EXPECT_FALSE(called("cuMemcpy3DAsync"));
    EXPECT_EQ(cucore_copy_3d(&h, s1_), CUCORE_SUCCESS) << message();
    cucore_buffer_release(other);
    ASSERT_EQ(cucore_stream_synchronize(s1_), CUCORE_SUCCESS);
    cucore_memory_resource_release(pool1);
}

}  // namespace
