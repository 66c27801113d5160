// Strided 2D/3D copies between buffers and host memory.
#pragma once

#include "core/buffer.hpp"
#include "cucore/copy_3d.h"

namespace cucore::core {

// One side of a copy: a buffer (region.buffer/host ignored) or host memory at region.host.
struct CopySide {
    Buffer *buffer;
    cucore_memory_region_t region;
};

// Checks one side's layout for `depth` slices of `rows` rows of `width` bytes and, for a buffer, that every byte
// copied lies in it (`name` is "src" or "dst" in messages).
void check_copy_side(const CopySide &side, uint64_t width, uint64_t rows, uint64_t depth, const char *name);

// Writes one side into the source (`source`) or destination fields of `params`.
void describe_copy_side(const CopySide &side, uint64_t rows, uint64_t depth, bool source, CUDA_MEMCPY3D &params);

// The checked driver description of a copy (both sides checked as above).
CUDA_MEMCPY3D copy_3d_params(const CopySide &source, const CopySide &destination, uint64_t width, uint64_t rows,
                             uint64_t depth);

// Copies `depth` slices of `rows` rows of `width` bytes, ordered on `stream`.
void copy_3d(const CopySide &source, const CopySide &destination, uint64_t width, uint64_t rows, uint64_t depth,
             Stream &stream);

}  // namespace cucore::core
