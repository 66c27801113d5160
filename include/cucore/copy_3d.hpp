// libcucore C++ façade: strided 2D/3D copies (over cucore/copy_3d.h).
//
//   // A 16 x 8 tile at column 4, row 2 of a 64-byte-pitch image on the
//   // device, into a packed host array of 16-byte rows:
//   std::vector<std::uint8_t> tile(16 * 8);
//   cucore::copy_2d(cucore::MemoryRegion::host(tile.data(), 16),
//                   cucore::MemoryRegion(image, 64).at(4, 2), 16, 8, stream);
//   stream.synchronize();
//
// Each side is a Buffer (the region is checked against its size) or host
// memory (the caller vouches for it), laid out as rows of `pitch` bytes and
// slices of `height` rows from byte `offset`; the copy starts at byte x, row y,
// slice z of that layout (at()). Like every copy it is ordered on the stream:
// pageable host memory behaves as in Buffer::copy_from_host.
#ifndef CUCORE_COPY_3D_HPP
#define CUCORE_COPY_3D_HPP

#include <cstdint>

#include "buffer.hpp"
#include "common.hpp"
#include "copy_3d.h"
#include "stream.hpp"

namespace cucore {

// One side of a strided copy. It refers to the Buffer it was made from
// without holding it: keep the buffer alive until the copy is queued.
class MemoryRegion {
public:
    // `buffer`, as rows of `pitch` bytes (and, for 3D copies, slices of
    // `height` rows) from byte `offset`.
    MemoryRegion(const Buffer &buffer, std::uint64_t pitch, std::uint64_t height = 0,
                 std::uint64_t offset = 0) noexcept {
        region_.buffer = buffer.get();
        region_.offset = offset;
        region_.pitch = pitch;
        region_.height = height;
    }
    // A temporary buffer would be gone before the copy: name a variable.
    MemoryRegion(Buffer &&, std::uint64_t, std::uint64_t = 0, std::uint64_t = 0) = delete;

    // Host memory at `data` with the same layout. A const source is never
    // written (the C struct has one pointer type for both sides).
    static MemoryRegion host(void *data, std::uint64_t pitch, std::uint64_t height = 0,
                             std::uint64_t offset = 0) noexcept {
        MemoryRegion r;
        r.region_.host = data;
        r.region_.offset = offset;
        r.region_.pitch = pitch;
        r.region_.height = height;
        return r;
    }
    static MemoryRegion host(const void *data, std::uint64_t pitch, std::uint64_t height = 0,
                             std::uint64_t offset = 0) noexcept {
        return host(const_cast<void *>(data), pitch, height, offset);
    }

    // Where in the layout the copy starts: byte `x` of row `y` of slice `z`.
    MemoryRegion &at(std::uint64_t x, std::uint64_t y = 0, std::uint64_t z = 0) noexcept {
        region_.x = x;
        region_.y = y;
        region_.z = z;
        return *this;
    }

    const cucore_memory_region_t &to_c() const noexcept { return region_; }

private:
    MemoryRegion() noexcept = default;
    cucore_memory_region_t region_{};
};

// What a strided copy moves: `depth` slices of `rows` rows of `width` bytes.
struct Extent3D {
    std::uint64_t width = 0;
    std::uint64_t rows = 1;
    std::uint64_t depth = 1;
};

// The C descriptor of a copy (CUCORE_COPY_3D_INIT, then the fields).
inline cucore_copy_3d_t to_c(const MemoryRegion &dst, const MemoryRegion &src, const Extent3D &extent) noexcept {
    cucore_copy_3d_t c = CUCORE_COPY_3D_INIT;
    c.src = src.to_c();
    c.dst = dst.to_c();
    c.width = extent.width;
    c.rows = extent.rows;
    c.depth = extent.depth;
    return c;
}

// Copies `extent` from `src` to `dst`, ordered on `stream` (cuMemcpy3DAsync).
// Throws Error: INVALID_HANDLE, INVALID_ARGUMENT (x + width above a pitch,
// y + rows above a height for depth > 1, a region outside its buffer,
// overflow), INVALID_STATE (a closed buffer), CUDA.
inline void copy_3d(const MemoryRegion &dst, const MemoryRegion &src, const Extent3D &extent,
                    const Stream &stream) {
    const cucore_copy_3d_t c = to_c(dst, src, extent);
    detail::check(cucore_copy_3d(&c, stream.get()));
}

// A 2D copy: `rows` rows of `width` bytes (heights are not used). Throws as copy_3d.
inline void copy_2d(const MemoryRegion &dst, const MemoryRegion &src, std::uint64_t width, std::uint64_t rows,
                    const Stream &stream) {
    copy_3d(dst, src, Extent3D{width, rows, 1}, stream);
}

} // namespace cucore

#endif // CUCORE_COPY_3D_HPP
