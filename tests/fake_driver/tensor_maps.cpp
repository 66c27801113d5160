// TensorMap (TMA) descriptor encoding: each encode checks the rules the driver
// documents (CUDA 13.0 cuda.h), independently of libcucore's checks, answering
// CUDA_ERROR_INVALID_VALUE as the driver does, and records its arguments in the
// 128 bytes (tensor_maps.hpp), so a test sees what libcucore passed.
#include "tensor_maps.hpp"

#include <cstring>

#include "entry_points.hpp"

namespace fake {
namespace {

constexpr uint32_t kBits[] = {8, 16, 32, 32, 64, 64, 16, 32, 64, 16, 32, 32, 32, 4, 8, 8};

bool packed16(int type) {
    return type == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B || type == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
}

bool floating(int type) {
    return type == CU_TENSOR_MAP_DATA_TYPE_FLOAT16 || type == CU_TENSOR_MAP_DATA_TYPE_FLOAT32 ||
           type == CU_TENSOR_MAP_DATA_TYPE_FLOAT64 || type == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 ||
           type == CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ || type == CU_TENSOR_MAP_DATA_TYPE_TFLOAT32 ||
           type == CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ;
}

struct Common {
    CUtensorMap *map;
    int type;
    cuuint32_t rank;
    void *address;
    const cuuint64_t *dims;
    const cuuint64_t *strides;
    const cuuint32_t *element_strides;
    int interleave, swizzle, l2, fill;
};

// The rules every kind shares; `min_rank` is 1 (tiled) or 3 (im2col).
bool valid(const Common &c, cuuint32_t min_rank) {
    if (!c.map || reinterpret_cast<uintptr_t>(c.map) % 64 != 0) return false;
    if (c.type < 0 || c.type > CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B) return false;
    if (c.interleave < 0 || c.interleave > CU_TENSOR_MAP_INTERLEAVE_32B) return false;
    if (c.swizzle < 0 || c.swizzle > CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B) return false;
    if (c.l2 < 0 || c.l2 > CU_TENSOR_MAP_L2_PROMOTION_L2_256B) return false;
    if (c.fill < 0 || c.fill > CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA) return false;
    if (c.rank < min_rank || c.rank > 5) return false;
    if (c.interleave != CU_TENSOR_MAP_INTERLEAVE_NONE && c.rank < 3) return false;
    const bool by32 = c.interleave == CU_TENSOR_MAP_INTERLEAVE_32B || packed16(c.type);
    if (!c.address || reinterpret_cast<uintptr_t>(c.address) % (by32 ? 32 : 16) != 0) return false;
    if (!c.dims || !c.element_strides || (c.rank > 1 && !c.strides)) return false;
    for (cuuint32_t i = 0; i < c.rank; ++i) {
        if (c.dims[i] == 0 || c.dims[i] > (uint64_t{1} << 32)) return false;
        if (c.element_strides[i] == 0 || c.element_strides[i] > 8) return false;
    }
    for (cuuint32_t i = 0; i + 1 < c.rank; ++i)
        if (c.strides[i] % (by32 ? 32 : 16) != 0 || c.strides[i] >= (uint64_t{1} << 40)) return false;
    if (packed16(c.type) && c.dims[0] % 128 != 0) return false;
    if (c.type == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B && c.dims[0] % 2 != 0) return false;
    if (c.interleave == CU_TENSOR_MAP_INTERLEAVE_32B && c.swizzle != CU_TENSOR_MAP_SWIZZLE_32B) return false;
    if (c.type == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B && c.interleave != CU_TENSOR_MAP_INTERLEAVE_NONE) return false;
    if (c.fill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA && !floating(c.type)) return false;
    return true;
}

// Whether `inner_bytes` fits the swizzle span (interleave NONE only).
bool fits_swizzle(const Common &c, uint64_t inner_bytes) {
    if (c.interleave != CU_TENSOR_MAP_INTERLEAVE_NONE || c.swizzle == CU_TENSOR_MAP_SWIZZLE_NONE) return true;
    const uint64_t span = c.swizzle == CU_TENSOR_MAP_SWIZZLE_32B ? 32 : c.swizzle == CU_TENSOR_MAP_SWIZZLE_64B ? 64 : 128;
    return inner_bytes <= span;
}

bool packed_swizzle_ok(const Common &c) {
    if (!packed16(c.type)) return true;
    const int s = c.swizzle;
    return s == CU_TENSOR_MAP_SWIZZLE_NONE || s == CU_TENSOR_MAP_SWIZZLE_128B || s == CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B ||
           (c.type == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B && s == CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B);
}

uint64_t *words(CUtensorMap *map) { return reinterpret_cast<uint64_t *>(map); }

void record(const Common &c, int kind, int wide_mode) {
    uint64_t *w = words(c.map);
    std::memset(w, 0, 128);
    w[0] = kTensorMapMagic + static_cast<uint64_t>(kind);
    w[1] = reinterpret_cast<uintptr_t>(c.address);
    w[2] = static_cast<uint64_t>(c.type) | uint64_t(c.rank) << 8 | uint64_t(c.interleave) << 16 |
           uint64_t(c.swizzle) << 24 | uint64_t(c.l2) << 32 | uint64_t(c.fill) << 40 | uint64_t(wide_mode) << 48;
    for (cuuint32_t i = 0; i < c.rank; ++i) {
        w[3 + i] = c.dims[i];
        w[13] |= uint64_t(c.element_strides[i]) << (8 * i);
    }
    for (cuuint32_t i = 0; i + 1 < c.rank; ++i) w[8 + i] = c.strides[i];
}

uint64_t corners(const int *values, int count) {
    uint64_t packed = 0;
    for (int j = 0; j < count; ++j) packed |= uint64_t(static_cast<uint16_t>(values[j])) << (16 * j);
    return packed;
}

}  // namespace

TensorMapRecord tensor_map_record(const void *bytes) {
    uint64_t w[16];
    std::memcpy(w, bytes, sizeof w);
    TensorMapRecord r;
    if ((w[0] & ~uint64_t{0xFF}) != kTensorMapMagic) return r;
    r.valid = true;
    r.kind = static_cast<int>(w[0] & 0xFF);
    r.address = w[1];
    r.data_type = static_cast<int>(w[2] & 0xFF);
    r.rank = static_cast<int>((w[2] >> 8) & 0xFF);
    r.interleave = static_cast<int>((w[2] >> 16) & 0xFF);
    r.swizzle = static_cast<int>((w[2] >> 24) & 0xFF);
    r.l2_promotion = static_cast<int>((w[2] >> 32) & 0xFF);
    r.oob_fill = static_cast<int>((w[2] >> 40) & 0xFF);
    r.wide_mode = static_cast<int>((w[2] >> 48) & 0xFF);
    for (int i = 0; i < 5; ++i) {
        r.global_dim[i] = w[3 + i];
        r.element_strides[i] = static_cast<uint32_t>((w[13] >> (8 * i)) & 0xFF);
        if (r.kind == 1) r.box_dim[i] = static_cast<uint32_t>((w[12] >> (12 * i)) & 0xFFF);
    }
    for (int i = 0; i < 4; ++i) r.global_strides[i] = w[8 + i];
    if (r.kind != 1) {
        for (int j = 0; j < 3; ++j) {
            r.lower_corner[j] = static_cast<int16_t>((w[12] >> (16 * j)) & 0xFFFF);
            r.upper_corner[j] = static_cast<int16_t>((w[15] >> (16 * j)) & 0xFFFF);
        }
        r.channels_per_pixel = static_cast<uint32_t>(w[14]);
        r.pixels_per_column = static_cast<uint32_t>(w[14] >> 32);
    }
    return r;
}

namespace detail {

CUresult f_cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *address,
                                  const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
                                  const cuuint32_t *element_strides, CUtensorMapInterleave interleave,
                                  CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill fill) {
    const Common c{map, type, rank, address, dims, strides, element_strides, interleave, swizzle, l2, fill};
    if (!valid(c, 1) || !box || !packed_swizzle_ok(c)) return CUDA_ERROR_INVALID_VALUE;
    for (cuuint32_t i = 0; i < rank; ++i)
        if (box[i] == 0 || box[i] > 256) return CUDA_ERROR_INVALID_VALUE;
    const uint64_t inner_bits = uint64_t{box[0]} * kBits[type];
    if (interleave == CU_TENSOR_MAP_INTERLEAVE_NONE && inner_bits % 128 != 0) return CUDA_ERROR_INVALID_VALUE;
    if (packed16(type) && box[0] != 128) return CUDA_ERROR_INVALID_VALUE;
    if (!fits_swizzle(c, (inner_bits + 7) / 8)) return CUDA_ERROR_INVALID_VALUE;
    record(c, 1, 0);
    for (cuuint32_t i = 0; i < rank; ++i) words(map)[12] |= uint64_t(box[i]) << (12 * i);
    return CUDA_SUCCESS;
}

CUresult f_cuTensorMapEncodeIm2col(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *address,
                                   const cuuint64_t *dims, const cuuint64_t *strides, const int *lower,
                                   const int *upper, cuuint32_t channels, cuuint32_t pixels,
                                   const cuuint32_t *element_strides, CUtensorMapInterleave interleave,
                                   CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill fill) {
    const Common c{map, type, rank, address, dims, strides, element_strides, interleave, swizzle, l2, fill};
    if (!valid(c, 3) || !lower || !upper || !packed_swizzle_ok(c)) return CUDA_ERROR_INVALID_VALUE;
    const int limit = rank == 3 ? 32768 : rank == 4 ? 128 : 16;
    for (cuuint32_t j = 0; j + 2 < rank; ++j) {
        if (lower[j] < -limit || lower[j] >= limit || upper[j] < -limit || upper[j] >= limit)
            return CUDA_ERROR_INVALID_VALUE;
        if (static_cast<int64_t>(dims[rank - 2 - j]) + upper[j] - lower[j] < 1) return CUDA_ERROR_INVALID_VALUE;
    }
    if (channels == 0 || channels > 256 || (packed16(type) && channels != 128)) return CUDA_ERROR_INVALID_VALUE;
    if (pixels == 0 || pixels > 1024) return CUDA_ERROR_INVALID_VALUE;
    if (!fits_swizzle(c, (uint64_t{channels} * kBits[type] + 7) / 8)) return CUDA_ERROR_INVALID_VALUE;
    record(c, 2, 0);
    words(map)[12] = corners(lower, static_cast<int>(rank) - 2);
    words(map)[15] = corners(upper, static_cast<int>(rank) - 2);
    words(map)[14] = uint64_t{channels} | uint64_t{pixels} << 32;
    return CUDA_SUCCESS;
}

CUresult f_cuTensorMapEncodeIm2colWide(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *address,
                                       const cuuint64_t *dims, const cuuint64_t *strides, int lower, int upper,
                                       cuuint32_t channels, cuuint32_t pixels, const cuuint32_t *element_strides,
                                       CUtensorMapInterleave interleave, CUtensorMapIm2ColWideMode mode,
                                       CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
                                       CUtensorMapFloatOOBfill fill) {
    const Common c{map, type, rank, address, dims, strides, element_strides, interleave, swizzle, l2, fill};
    if (!valid(c, 3) || !packed_swizzle_ok(c)) return CUDA_ERROR_INVALID_VALUE;
    if (mode != CU_TENSOR_MAP_IM2COL_WIDE_MODE_W && mode != CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128)
        return CUDA_ERROR_INVALID_VALUE;
    if (swizzle != CU_TENSOR_MAP_SWIZZLE_64B && swizzle != CU_TENSOR_MAP_SWIZZLE_128B &&
        swizzle != CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B)
        return CUDA_ERROR_INVALID_VALUE;
    if (lower < -32768 || lower > 32767 || upper < -32768 || upper > 32767) return CUDA_ERROR_INVALID_VALUE;
    if (static_cast<int64_t>(dims[1]) + upper - lower < 1) return CUDA_ERROR_INVALID_VALUE;
    if (channels == 0 || channels > 256 || (packed16(type) && channels != 128)) return CUDA_ERROR_INVALID_VALUE;
    if (mode == CU_TENSOR_MAP_IM2COL_WIDE_MODE_W && (pixels == 0 || pixels > 1024)) return CUDA_ERROR_INVALID_VALUE;
    if (!fits_swizzle(c, (uint64_t{channels} * kBits[type] + 7) / 8)) return CUDA_ERROR_INVALID_VALUE;
    record(c, 3, mode);
    words(map)[12] = uint64_t(static_cast<uint16_t>(lower));
    words(map)[15] = uint64_t(static_cast<uint16_t>(upper));
    words(map)[14] = uint64_t{channels} | uint64_t{pixels} << 32;
    return CUDA_SUCCESS;
}

// The driver rewrites the address only; the alignment rule is the encode's (16, or 32 for interleave 32B and
// the ALIGN16B types).
CUresult f_cuTensorMapReplaceAddress(CUtensorMap *map, void *address) {
    if (!map || reinterpret_cast<uintptr_t>(map) % 64 != 0) return CUDA_ERROR_INVALID_VALUE;
    const TensorMapRecord r = tensor_map_record(map);
    if (!r.valid) return CUDA_ERROR_INVALID_VALUE;
    const bool by32 = r.interleave == CU_TENSOR_MAP_INTERLEAVE_32B || packed16(r.data_type);
    if (!address || reinterpret_cast<uintptr_t>(address) % (by32 ? 32 : 16) != 0) return CUDA_ERROR_INVALID_VALUE;
    words(map)[1] = reinterpret_cast<uintptr_t>(address);
    return CUDA_SUCCESS;
}

}  // namespace detail
}  // namespace fake
