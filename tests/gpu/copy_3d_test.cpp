// Strided 2D and 3D copies (cucore_copy_3d and the façade's copy_2d/copy_3d)
// between host and device memory and between device buffers, with offsets and
// starting coordinates, on a real GPU. Every result is compared byte by byte
// with the copy computed on the host from the layout the header describes,
// and device results are read back through the raw driver as well.
#include <cstdint>
#include <vector>

#include "memory_gpu.hpp"

namespace {

using gpu::Bytes;
using gpu::kMiB;
using gpu::pattern;
using gpu::same_bytes;

struct Layout {
    std::uint64_t offset, pitch, height, x, y, z;
};

// Byte x of row y of slice z is at offset + (z * height + y) * pitch + x.
void reference_copy(Bytes &dst, const Layout &d, const Bytes &src, const Layout &s, std::uint64_t width,
                    std::uint64_t rows, std::uint64_t depth) {
    for (std::uint64_t k = 0; k < depth; ++k)
        for (std::uint64_t j = 0; j < rows; ++j)
            for (std::uint64_t i = 0; i < width; ++i)
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

class Copy3DGpuTest : public gpu::DefaultPoolGpuTest {
protected:
    // A device buffer of `n` bytes holding `fill`.
    cucore_buffer_t *device_buffer(std::uint64_t n, const Bytes &fill) {
        cucore_buffer_t *b = alloc(pool_, n, s_);
        if (b != nullptr) write(b, fill);
        return b;
    }
    cucore_status_t copy(const Layout &dst, cucore_buffer_t *dst_buffer, void *dst_host, const Layout &src,
                         cucore_buffer_t *src_buffer, const void *src_host, std::uint64_t width, std::uint64_t rows,
                         std::uint64_t depth, cucore_stream_t *stream = nullptr) {
        cucore_copy_3d_t c = CUCORE_COPY_3D_INIT;
        c.dst = region(dst);
        c.dst.buffer = dst_buffer;
        c.dst.host = dst_host;
        c.src = region(src);
        c.src.buffer = src_buffer;
        c.src.host = const_cast<void *>(src_host);
        c.width = width;
        c.rows = rows;
        c.depth = depth;
        return cucore_copy_3d(&c, stream != nullptr ? stream : s_);
    }
};

TEST_F(Copy3DGpuTest, HostToDeviceAndBack3D) {
    // 3 slices of 40 rows of 1000 bytes, from slice 1, row 5, byte 24 of a host
    // volume (pitch 1100, 50 rows a slice, 7 bytes in) to byte 16 of row 3 of
    // slice 2 of a device volume (pitch 1024, 48 rows a slice, 64 bytes in).
    const Layout host_layout{7, 1100, 50, 24, 5, 1}, dev_layout{64, 1024, 48, 16, 3, 2};
    const std::uint64_t width = 1000, rows = 40, depth = 3;
    const Bytes host = pattern(7 + 4 * 50 * 1100, 31);
    const std::uint64_t dev_size = 64 + 5 * 48 * 1024;
    const Bytes before = pattern(static_cast<std::size_t>(dev_size), 32);
    cucore_buffer_t *d = device_buffer(dev_size, before);
    ASSERT_NE(d, nullptr);
    CUCORE_ASSERT_OK(copy(dev_layout, d, nullptr, host_layout, nullptr, host.data(), width, rows, depth));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    Bytes expected = before;
    reference_copy(expected, dev_layout, host, host_layout, width, rows, depth);
    EXPECT_TRUE(same_bytes(raw_read(gpu::address_of(d), expected.size()), expected));
    // Back into a differently laid-out host volume.
    const Layout out_layout{3, 1001, 41, 1, 1, 0};
    Bytes out(3 + 3 * 41 * 1001, 0xC3);
    CUCORE_ASSERT_OK(copy(out_layout, nullptr, out.data(), dev_layout, d, nullptr, width, rows, depth));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    Bytes want(out.size(), 0xC3);
    reference_copy(want, out_layout, expected, dev_layout, width, rows, depth);
    EXPECT_TRUE(same_bytes(out, want));
    CUCORE_EXPECT_OK(cucore_buffer_release(d));
}

TEST_F(Copy3DGpuTest, HostToDeviceAndBack2D) {
    // 2D: heights unused (0); 77 rows of 333 bytes.
    const Layout host_layout{5, 400, 0, 11, 2, 0}, dev_layout{128, 512, 0, 100, 9, 0};
    const Bytes host = pattern(5 + 80 * 400, 33);
    const std::uint64_t dev_size = 128 + 90 * 512;
    const Bytes before = pattern(static_cast<std::size_t>(dev_size), 34);
    cucore_buffer_t *d = device_buffer(dev_size, before);
    ASSERT_NE(d, nullptr);
    CUCORE_ASSERT_OK(copy(dev_layout, d, nullptr, host_layout, nullptr, host.data(), 333, 77, 1));
    Bytes expected = before;
    reference_copy(expected, dev_layout, host, host_layout, 333, 77, 1);
    EXPECT_TRUE(same_bytes(read(d), expected));
    const Layout out_layout{0, 333, 0, 0, 0, 0};  // packed rows
    Bytes out(333 * 77, 0);
    CUCORE_ASSERT_OK(copy(out_layout, nullptr, out.data(), dev_layout, d, nullptr, 333, 77, 1));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    Bytes want(out.size(), 0);
    reference_copy(want, out_layout, expected, dev_layout, 333, 77, 1);
    EXPECT_TRUE(same_bytes(out, want));
    CUCORE_EXPECT_OK(cucore_buffer_release(d));
}

TEST_F(Copy3DGpuTest, DeviceToDevice2DAnd3DWithOffsets) {
    const std::uint64_t size = 2 * kMiB;
    const Bytes src_bytes = pattern(static_cast<std::size_t>(size), 35);
    const Bytes dst_bytes = pattern(static_cast<std::size_t>(size), 36);
    cucore_buffer_t *src = device_buffer(size, src_bytes);
    cucore_buffer_t *dst = device_buffer(size, dst_bytes);
    ASSERT_TRUE(src != nullptr && dst != nullptr);
    Bytes expected = dst_bytes;
    // 3D between two buffers.
    const Layout from{1000, 2048, 64, 48, 7, 1}, to{333, 4096, 80, 1024, 16, 2};
    CUCORE_ASSERT_OK(copy(to, dst, nullptr, from, src, nullptr, 1500, 50, 4));
    reference_copy(expected, to, src_bytes, from, 1500, 50, 4);
    // 2D within views (offsets into the buffers come from the views).
    cucore_buffer_t *src_view = nullptr, *dst_view = nullptr;
    CUCORE_ASSERT_OK(cucore_buffer_view(src, 4096, 65536, &src_view));
    CUCORE_ASSERT_OK(cucore_buffer_view(dst, 1536 * 1024, 65536, &dst_view));
    const Layout vfrom{8, 256, 0, 3, 1, 0}, vto{0, 200, 0, 0, 4, 0};
    CUCORE_ASSERT_OK(copy(vto, dst_view, nullptr, vfrom, src_view, nullptr, 190, 100, 1));
    Layout abs_from = vfrom, abs_to = vto;
    abs_from.offset += 4096;
    abs_to.offset += 1536 * 1024;
    reference_copy(expected, abs_to, src_bytes, abs_from, 190, 100, 1);
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_TRUE(same_bytes(raw_read(gpu::address_of(dst), expected.size()), expected));
    EXPECT_TRUE(same_bytes(read(src), src_bytes)) << "the source is untouched";
    cucore_buffer_release(src_view);
    cucore_buffer_release(dst_view);
    cucore_buffer_release(src);
    cucore_buffer_release(dst);
}

TEST_F(Copy3DGpuTest, RegionsOutsideTheirBufferAreRefused) {
    cucore_buffer_t *d = device_buffer(4096, Bytes(4096, 0x11));
    ASSERT_NE(d, nullptr);
    Bytes host(8192, 0x22);
    // 16 rows of 256 bytes: exactly the buffer; one more byte of offset is out.
    CUCORE_EXPECT_OK(copy({0, 256, 0, 0, 0, 0}, d, nullptr, {0, 256, 0, 0, 0, 0}, nullptr, host.data(), 256, 16, 1));
    CUCORE_EXPECT_STATUS(copy({1, 256, 0, 0, 0, 0}, d, nullptr, {0, 256, 0, 0, 0, 0}, nullptr, host.data(), 256, 16, 1),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(copy({0, 256, 0, 1, 0, 0}, d, nullptr, {0, 256, 0, 0, 0, 0}, nullptr, host.data(), 256, 1, 1),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    // A 2D copy into slice 2 of 8-row slices: rows 16..23 of a 16-row buffer.
    CUCORE_EXPECT_STATUS(copy({0, 256, 8, 0, 0, 2}, d, nullptr, {0, 256, 8, 0, 0, 0}, nullptr, host.data(), 16, 8, 1),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_TRUE(same_bytes(read(d), Bytes(4096, 0x22))) << "only the valid copy wrote";
    cucore_buffer_release(d);
}

TEST_F(Copy3DGpuTest, FacadeCopies) {
    cucore::Device dev = cucore::Device::get(0);
    cucore::Stream s = dev.create_stream();
    const cucore::Buffer image = cucore::MemoryResource::device_default(dev).allocate(640 * 480, s);
    const Bytes pixels = pattern(640 * 480, 37);
    image.copy_from_host(pixels, s);
    // A 100 x 50 tile at (20, 30).
    std::vector<std::uint8_t> tile(100 * 50);
    cucore::copy_2d(cucore::MemoryRegion::host(tile.data(), 100), cucore::MemoryRegion(image, 640).at(20, 30), 100, 50,
                    s);
    s.synchronize();
    Bytes want(tile.size());
    reference_copy(want, {0, 100, 0, 0, 0, 0}, pixels, {0, 640, 0, 20, 30, 0}, 100, 50, 1);
    EXPECT_TRUE(same_bytes(tile, want));
    // A 3D block into a second buffer laid out as 4 slices of 120 rows of 640 bytes.
    const cucore::Buffer volume = cucore::MemoryResource::device_default(dev).allocate(640 * 480, s);
    volume.fill(std::uint8_t{0}, s);
    cucore::copy_3d(cucore::MemoryRegion(volume, 640, 120).at(5, 6, 1), cucore::MemoryRegion(image, 640, 120).at(7, 8, 0),
                    cucore::Extent3D{300, 100, 3}, s);
    Bytes got(640 * 480);
    volume.copy_to_host(got, s);
    s.synchronize();
    Bytes expected(640 * 480, 0);
    reference_copy(expected, {0, 640, 120, 5, 6, 1}, pixels, {0, 640, 120, 7, 8, 0}, 300, 100, 3);
    EXPECT_TRUE(same_bytes(got, expected));
    try {
        cucore::copy_2d(cucore::MemoryRegion::host(tile.data(), 100), cucore::MemoryRegion(image, 640).at(600, 0),
                        100, 1, s);
        ADD_FAILURE() << "x + width above the pitch was accepted";
    } catch (const cucore::Error &e) {
        EXPECT_EQ(e.status(), CUCORE_ERROR_INVALID_ARGUMENT) << e.what();
    }
}

TEST_F(Copy3DGpuTest, BetweenBuffersOfTwoDevices) {
    if (device_count_ < 2) GTEST_SKIP() << "needs 2 devices, this machine has " << device_count_;
    cucore_device_t *dev1 = nullptr;
    CUCORE_ASSERT_OK(cucore_device_get(1, &dev1));
    cucore_memory_resource_t *pool1 = nullptr;
    CUCORE_ASSERT_OK(cucore_device_memory_resource_get_default(dev1, &pool1));
    cucore_stream_t *s1 = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_create(dev1, nullptr, &s1));
    const std::uint64_t size = kMiB;
    const Bytes src_bytes = pattern(static_cast<std::size_t>(size), 38);
    cucore_buffer_t *src = device_buffer(size, src_bytes);
    cucore_buffer_t *dst = alloc(pool1, size, s1);
    ASSERT_TRUE(src != nullptr && dst != nullptr);
    CUCORE_ASSERT_OK(cucore_buffer_fill(dst, 0x44, 1, s1));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s1));
    const Layout from{16, 1024, 64, 8, 2, 1}, to{0, 2048, 32, 100, 1, 3};
    CUCORE_ASSERT_OK(copy(to, dst, nullptr, from, src, nullptr, 900, 30, 2, s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    Bytes expected(static_cast<std::size_t>(size), 0x44);
    reference_copy(expected, to, src_bytes, from, 900, 30, 2);
    EXPECT_TRUE(same_bytes(raw_read(gpu::address_of(dst), expected.size()), expected));
    cucore_buffer_release(src);
    cucore_buffer_release(dst);
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s1));
    cucore_stream_release(s1);
    cucore_memory_resource_release(pool1);
    cucore_device_release(dev1);
}

} // namespace
