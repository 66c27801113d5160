// Host locations, batched memory operations and stream memory operations: the
// calling thread's NUMA node, cuMemcpyBatchAsync, the batched prefetches and
// discards of managed buffers, and cuStreamWriteValue/WaitValue/BatchMemOp.
// The C ABI has checked every enum, flag and struct field it can judge alone;
// this layer judges values against objects (ranges, alignment, managed memory,
// device attributes) and calls the driver.
#pragma once

#include <cstdint>
#include <vector>

#include "core/buffer.hpp"
#include "core/copy_3d.hpp"
#include "core/stream.hpp"
#include "cucore/memory_operations.h"

namespace cucore::core {

// The host NUMA node of the CPU the calling thread runs on now (getcpu).
int host_numa_current();

// One side of a batched copy or the memory of a stream memory operation: a
// buffer at an offset, or (buffer null) an address the caller vouches for.
struct MemorySide {
    Buffer *buffer = nullptr;
    uint64_t address = 0;  // the pointer (no buffer)
    uint64_t offset = 0;
};

struct CopyItem {
    MemorySide src, dst;
    uint64_t size = 0;
    uint32_t options_index = 0;
};

// cuMemcpyBatchAsync of `items` on `stream`; `options` holds the resolved
// options the items' indices pick (checked < options.size() by the C ABI,
// which passes one default entry when the caller gave none).
void copy_batch(Stream &stream, const std::vector<CopyItem> &items, const std::vector<cucore_copy_options_t> &options);

// One strided copy of a 3D batch: the sides as core::copy_3d takes them.
struct Copy3DItem {
    CopySide src, dst;
    uint64_t width = 0, rows = 1, depth = 1;
};

// cuMemcpy3DBatchAsync of pointer-to-pointer copies, `options` for every copy.
void copy_3d_batch(Stream &stream, const std::vector<Copy3DItem> &copies, const cucore_copy_options_t &options);

// The batched prefetch / discard / discard-and-prefetch of managed buffers.
// `locations` has one entry (for all) or one per buffer (checked by the C ABI).
void prefetch_batch(Stream &stream, const std::vector<Buffer *> &buffers, const std::vector<cucore_location_t> &locations);
void discard_batch(Stream &stream, const std::vector<Buffer *> &buffers);
void discard_prefetch_batch(Stream &stream, const std::vector<Buffer *> &buffers,
                            const std::vector<cucore_location_t> &locations);

// One stream memory operation; type, flags and a 32-bit value's range are
// checked by the C ABI.
struct MemoryOp {
    cucore_stream_memory_op_type_t type = CUCORE_STREAM_MEMORY_OP_UNSET;
    uint32_t flags = 0;
    MemorySide memory;
    uint64_t value = 0;
};

// cuStreamWriteValue32/64 and cuStreamWaitValue32/64 (one operation), or
// cuStreamBatchMemOp (any number up to 255, as checked by the C ABI).
void stream_memory_op(Stream &stream, const MemoryOp &op);
void stream_batch_memory_ops(Stream &stream, const std::vector<MemoryOp> &ops);

}  // namespace cucore::core
