// What the fake's cuTensorMapEncode* write into the 128-byte CUtensorMap: not
// the hardware's format, but a record of the arguments, so tests (C++ here,
// Python by the same layout) can check what libcucore passed. Little-endian
// 64-bit words:
//   [0]  kMagic + kind (1 tiled, 2 im2col, 3 im2col-wide)
//   [1]  global address
//   [2]  data type | rank << 8 | interleave << 16 | swizzle << 24 | l2 promotion << 32 | oob fill << 40 |
//        im2col-wide mode << 48 (the driver's enum values)
//   [3..7]   globalDim[0..4] (0 past the rank)
//   [8..11]  globalStrides[0..3]
//   [12] tiled: boxDim[i] << (12 * i); im2col: (uint16_t)lower corner[j] << (16 * j); wide: (uint16_t)lower W
//   [13] elementStrides[i] << (8 * i)
//   [14] channelsPerPixel | pixelsPerColumn << 32 (im2col kinds)
//   [15] im2col: (uint16_t)upper corner[j] << (16 * j); wide: (uint16_t)upper W
#pragma once

#include <cuda.h>

#include <cstdint>

namespace fake {

constexpr uint64_t kTensorMapMagic = 0x7E4503A900000000ull;

struct TensorMapRecord {
    bool valid = false;  // the magic was there
    int kind = 0;
    uint64_t address = 0;
    int data_type = 0, rank = 0, interleave = 0, swizzle = 0, l2_promotion = 0, oob_fill = 0, wide_mode = 0;
    uint64_t global_dim[5] = {};
    uint64_t global_strides[4] = {};
    uint32_t box_dim[5] = {};
    uint32_t element_strides[5] = {};
    int lower_corner[3] = {}, upper_corner[3] = {};
    uint32_t channels_per_pixel = 0, pixels_per_column = 0;
};

// Decodes what the fake wrote into `bytes` (128 bytes, a CUtensorMap).
TensorMapRecord tensor_map_record(const void *bytes);

}  // namespace fake
