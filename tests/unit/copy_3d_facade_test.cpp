// The C++ façade of strided copies against the fake driver.
#include <cstdint>
#include <vector>

#include "memory_facade_support.hpp"

namespace {

class Copy3DFacadeTest : public MemoryFacadeFixture {};

TEST_F(Copy3DFacadeTest, StridedCopies) {
    const cucore::Buffer image = cucore::MemoryResource::device_default(dev_).allocate(64 * 8, s_);
    const Bytes pixels = pattern(64 * 8, 12);
    image.copy_from_host(pixels, s_);
    // A 16 x 5 tile at byte 4 of row 2 into packed host rows.
    std::vector<std::uint8_t> tile(16 * 5, 0);
    cucore::copy_2d(cucore::MemoryRegion::host(tile.data(), 16), cucore::MemoryRegion(image, 64).at(4, 2), 16, 5, s_);
    s_.synchronize();
    for (std::size_t row = 0; row < 5; ++row)
        for (std::size_t x = 0; x < 16; ++x)
            ASSERT_EQ(tile[row * 16 + x], pixels[(2 + row) * 64 + 4 + x]) << "row " << row << " byte " << x;
    // 3D: 2 slices of 3 rows of 4 bytes from a host volume into the image's slices.
    const Bytes volume = pattern(2 * 3 * 4, 13);
    cucore::copy_3d(cucore::MemoryRegion(image, 64, 4, 8).at(1, 1, 0), cucore::MemoryRegion::host(volume.data(), 4, 3),
                    cucore::Extent3D{4, 3, 2}, s_);
    Bytes expected = pixels;
    for (std::size_t z = 0; z < 2; ++z)
        for (std::size_t y = 0; y < 3; ++y)
            for (std::size_t x = 0; x < 4; ++x) expected[8 + (z * 4 + 1 + y) * 64 + 1 + x] = volume[(z * 3 + y) * 4 + x];
    EXPECT_EQ(read(image), expected);
    // Errors are thrown with the C status.
    EXPECT_THROWS_STATUS(cucore::copy_2d(cucore::MemoryRegion::host(tile.data(), 16),
                                         cucore::MemoryRegion(image, 64).at(60, 0), 16, 1, s_),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(cucore::copy_2d(cucore::MemoryRegion::host(tile.data(), 16),
                                         cucore::MemoryRegion(image, 64).at(0, 8), 16, 1, s_),
                         CUCORE_ERROR_INVALID_ARGUMENT);
}

}  // namespace
