// libcucore C++ façade: host locations, batched memory operations and stream
// memory operations (over cucore/memory_operations.h).
//
//   buf.prefetch(cucore::Host(), stream);                 // any Location taker takes a Host
//   int node = cucore::Host::current_numa_id();           // the calling thread's NUMA node now
//
//   std::vector<cucore::BatchCopy> copies;
//   for (size_t i = 0; i < n; ++i) copies.push_back({cucore::CopySide(src[i]), cucore::CopySide(dst[i]), 256});
//   cucore::copy_batch(stream, copies);                   // one cuMemcpyBatchAsync
//   cucore::prefetch_batch(stream, managed_buffers, cucore::Location::device(dev));
//
//   cucore::write_value_32(producer, flag, 0, 1);         // after the producer's earlier work
//   cucore::wait_value_32(consumer, flag, 0, 1);          // consumer's later work waits for it
//
// Names follow cuda.core (utils.copy_batch, CopyOptions, MemcpySrcAccessOrder,
// MemcpyOverlapMode, prefetch_batch, discard_batch, discard_prefetch_batch,
// Host). The stream memory operations are free functions on a Stream with the
// nouns of the C functions. A BatchCopy and a StreamMemoryOp refer to buffers
// without holding them: keep the buffers alive until the work is queued (and,
// as for every copy, until it is done).
#ifndef CUCORE_MEMORY_OPERATIONS_HPP
#define CUCORE_MEMORY_OPERATIONS_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "buffer.hpp"
#include "common.hpp"
#include "copy_3d.hpp"
#include "memory_operations.h"
#include "memory_resource.hpp"
#include "stream.hpp"

namespace cucore {

// Host memory as a location (cuda.core: Host): any host memory (Host()), a
// NUMA node (Host(node)) or the calling thread's NUMA node
// (Host::numa_current()). It converts to a Location, so every function taking
// a Location takes a Host.
struct Host {
    std::optional<int> numa_id;   // the node, if one was named
    bool is_numa_current = false; // the calling thread's node, whichever it is when the driver asks

    Host() noexcept = default;
    explicit Host(int numa) noexcept : numa_id(numa) {}
    static Host numa_current() noexcept {
        Host h;
        h.is_numa_current = true;
        return h;
    }

    // The NUMA node the calling thread runs on now (getcpu; 0 without NUMA).
    // Throws Error: NOT_SUPPORTED (the system refuses the query).
    static int current_numa_id() {
        int node = 0;
        detail::check(cucore_host_numa_current(&node));
        return node;
    }

    Location location() const noexcept {
        if (is_numa_current) return Location::host_numa_current();
        return numa_id ? Location::host_numa(*numa_id) : Location::host();
    }
    operator Location() const noexcept { return location(); }  // NOLINT: a Host is a location

    friend bool operator==(const Host &a, const Host &b) noexcept { return a.location() == b.location(); }
    friend bool operator!=(const Host &a, const Host &b) noexcept { return !(a == b); }
};

// ---- Batched copies ----------------------------------------------------------------------------

// How a batched copy may read its source (cucore_memcpy_src_access_order_t).
enum class MemcpySrcAccessOrder : int {
    stream = CUCORE_MEMCPY_SRC_ACCESS_ORDER_STREAM,
    during_api_call = CUCORE_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL,
    any = CUCORE_MEMCPY_SRC_ACCESS_ORDER_ANY,
};

// Whether a batched copy should overlap with compute (cucore_memcpy_overlap_mode_t; a hint).
enum class MemcpyOverlapMode : int {
    default_mode = CUCORE_MEMCPY_OVERLAP_MODE_DEFAULT,
    prefer_overlap_with_compute = CUCORE_MEMCPY_OVERLAP_MODE_PREFER_OVERLAP_WITH_COMPUTE,
};

// The options of copies in a batch (cucore_copy_options_t).
struct CopyOptions {
    MemcpySrcAccessOrder src_access_order = MemcpySrcAccessOrder::stream;
    Location src_location_hint;  // none: no hint
    Location dst_location_hint;
    MemcpyOverlapMode overlap_mode = MemcpyOverlapMode::default_mode;

    cucore_copy_options_t to_c() const noexcept {
        cucore_copy_options_t o = CUCORE_COPY_OPTIONS_INIT;
        o.src_access_order = static_cast<cucore_memcpy_src_access_order_t>(src_access_order);
        o.overlap_mode = static_cast<cucore_memcpy_overlap_mode_t>(overlap_mode);
        o.src_location_hint = src_location_hint.to_c();
        o.dst_location_hint = dst_location_hint.to_c();
        return o;
    }
};

// One side of a batched copy: a Buffer from byte `offset` (checked against its
// size), or memory at a pointer (host memory, or a device address the caller
// vouches for). It refers to the buffer without holding it.
class CopySide {
public:
    CopySide(const Buffer &buffer, std::uint64_t offset = 0) noexcept  // NOLINT: a Buffer is a side
        : buffer_(buffer.get()), offset_(offset) {}
    CopySide(Buffer &&, std::uint64_t = 0) = delete;  // a temporary would be gone before the copy
    static CopySide pointer(const void *memory) noexcept {
        CopySide side;
        side.pointer_ = memory;
        return side;
    }

    cucore_buffer_t *buffer() const noexcept { return buffer_; }
    const void *address() const noexcept { return pointer_; }
    std::uint64_t offset() const noexcept { return offset_; }

private:
    CopySide() noexcept = default;
    cucore_buffer_t *buffer_ = nullptr;
    const void *pointer_ = nullptr;
    std::uint64_t offset_ = 0;
};

// One copy of a batch: `size` bytes from `src` to `dst`, with the options at
// `options_index` of those given to copy_batch.
struct BatchCopy {
    CopySide src;
    CopySide dst;
    std::uint64_t size = 0;
    std::uint32_t options_index = 0;

    cucore_copy_batch_item_t to_c() const noexcept {
        cucore_copy_batch_item_t item{};
        item.src = src.buffer();
        item.src_pointer = src.address();
        item.src_offset = src.offset();
        item.dst = dst.buffer();
        item.dst_pointer = const_cast<void *>(dst.address());  // the one pointer type of CopySide
        item.dst_offset = dst.offset();
        item.size = size;
        item.options_index = options_index;
        return item;
    }
};

// Copies a batch in one cuMemcpyBatchAsync ordered on `stream` (copies in no
// particular order among themselves; see cucore_copy_batch). `options` (empty:
// the defaults for all) are picked by each copy's options_index. Throws Error:
// INVALID_HANDLE, INVALID_ARGUMENT, INVALID_STATE (closed buffer, capturing
// stream), NOT_SUPPORTED (driver before CUDA 13.0), CUDA.
inline void copy_batch(const Stream &stream, const std::vector<BatchCopy> &copies,
                       const std::vector<CopyOptions> &options = {}) {
    std::vector<cucore_copy_batch_item_t> items;
    items.reserve(copies.size());
    for (const BatchCopy &copy : copies) items.push_back(copy.to_c());
    std::vector<cucore_copy_options_t> resolved;
    std::vector<const cucore_copy_options_t *> pointers;
    resolved.reserve(options.size());
    for (const CopyOptions &o : options) resolved.push_back(o.to_c());
    for (const cucore_copy_options_t &o : resolved) pointers.push_back(&o);
    detail::check(cucore_copy_batch(stream.get(), items.data(), items.size(), pointers.data(), pointers.size()));
}

// cuda.core's form: srcs[i] to dsts[i], whole buffers of equal sizes, with one
// set of options for all.
inline void copy_batch(const Stream &stream, const std::vector<Buffer> &srcs, const std::vector<Buffer> &dsts,
                       const CopyOptions &options = {}) {
    if (srcs.size() != dsts.size())
        throw Error(CUCORE_ERROR_INVALID_ARGUMENT, 0, "copy_batch: srcs and dsts differ in length");
    std::vector<BatchCopy> copies;
    copies.reserve(srcs.size());
    for (std::size_t i = 0; i < srcs.size(); ++i) {
        if (srcs[i].size() != dsts[i].size())
            throw Error(CUCORE_ERROR_INVALID_ARGUMENT, 0,
                        ("copy_batch: srcs[" + std::to_string(i) + "] and dsts[" + std::to_string(i) +
                         "] differ in size")
                            .c_str());
        copies.push_back({CopySide(srcs[i]), CopySide(dsts[i]), srcs[i].size(), 0});
    }
    copy_batch(stream, copies, {options});
}

// Strided copies in one cuMemcpy3DBatchAsync ordered on `stream` (cucore_copy_3d_batch): each a
// cucore_copy_3d_t as cucore::to_c(dst, src, extent) makes it (copy_3d.hpp), with `options` for all.
// Throws Error: as copy_batch.
inline void copy_3d_batch(const Stream &stream, const std::vector<cucore_copy_3d_t> &copies,
                          const CopyOptions &options = {}) {
    std::vector<const cucore_copy_3d_t *> pointers;
    pointers.reserve(copies.size());
    for (const cucore_copy_3d_t &c : copies) pointers.push_back(&c);
    const cucore_copy_options_t o = options.to_c();
    detail::check(cucore_copy_3d_batch(stream.get(), pointers.data(), pointers.size(), &o));
}

// ---- Batched prefetches and discards -----------------------------------------------------------

namespace detail {
inline std::vector<cucore_buffer_t *> raw_buffers(const std::vector<Buffer> &buffers) {
    std::vector<cucore_buffer_t *> raw;
    raw.reserve(buffers.size());
    for (const Buffer &b : buffers) raw.push_back(b.get());
    return raw;
}
inline std::vector<cucore_location_t> raw_locations(const std::vector<Location> &locations) {
    std::vector<cucore_location_t> raw;
    raw.reserve(locations.size());
    for (const Location &l : locations) raw.push_back(l.to_c());
    return raw;
}
}  // namespace detail

// Prefetches managed buffers to one location, or each to its own (one per
// buffer), in one cuMemPrefetchBatchAsync on `stream`. Throws Error:
// INVALID_HANDLE, INVALID_ARGUMENT (not managed, bad location or count),
// INVALID_STATE, NOT_SUPPORTED (driver before CUDA 13.0), CUDA.
inline void prefetch_batch(const Stream &stream, const std::vector<Buffer> &buffers,
                           const std::vector<Location> &locations) {
    const auto raw = detail::raw_buffers(buffers);
    const auto where = detail::raw_locations(locations);
    detail::check(cucore_prefetch_batch(stream.get(), raw.data(), raw.size(), where.data(), where.size()));
}
inline void prefetch_batch(const Stream &stream, const std::vector<Buffer> &buffers, const Location &location) {
    prefetch_batch(stream, buffers, std::vector<Location>{location});
}

// Discards the contents of managed buffers (cuMemDiscardBatchAsync). Throws as prefetch_batch.
inline void discard_batch(const Stream &stream, const std::vector<Buffer> &buffers) {
    const auto raw = detail::raw_buffers(buffers);
    detail::check(cucore_discard_batch(stream.get(), raw.data(), raw.size()));
}

// Discards and then makes resident at the locations (cuMemDiscardAndPrefetchBatchAsync).
inline void discard_prefetch_batch(const Stream &stream, const std::vector<Buffer> &buffers,
                                   const std::vector<Location> &locations) {
    const auto raw = detail::raw_buffers(buffers);
    const auto where = detail::raw_locations(locations);
    detail::check(cucore_discard_prefetch_batch(stream.get(), raw.data(), raw.size(), where.data(), where.size()));
}
inline void discard_prefetch_batch(const Stream &stream, const std::vector<Buffer> &buffers,
                                   const Location &location) {
    discard_prefetch_batch(stream, buffers, std::vector<Location>{location});
}

// ---- Stream memory operations ------------------------------------------------------------------

// What a wait waits for (the condition of cucore_stream_wait_value_*'s flags).
enum class WaitCondition : std::uint32_t {
    geq = CUCORE_STREAM_WAIT_VALUE_GEQ,  // a cyclic >=
    eq = CUCORE_STREAM_WAIT_VALUE_EQ,
    and_ = CUCORE_STREAM_WAIT_VALUE_AND,  // (*address & value) != 0
    nor = CUCORE_STREAM_WAIT_VALUE_NOR,   // ~(*address | value) != 0
};

// The scope of a memory barrier.
enum class MemoryBarrierScope : int {
    system = CUCORE_MEMORY_BARRIER_SCOPE_SYSTEM,
    device = CUCORE_MEMORY_BARRIER_SCOPE_DEVICE,
};

// Writes `value` at byte `offset` of `buffer` after `stream`'s earlier work
// (cuStreamWriteValue32/64; 4/8-byte aligned, not managed memory);
// `no_memory_barrier` lets it pass earlier writes (drivers may refuse it).
// Throws Error: INVALID_HANDLE, INVALID_ARGUMENT, INVALID_STATE,
// NOT_SUPPORTED (64-bit: CAN_USE_64_BIT_STREAM_MEM_OPS), CUDA.
inline void write_value_32(const Stream &stream, const Buffer &buffer, std::uint64_t offset, std::uint32_t value,
                           bool no_memory_barrier = false) {
    detail::check(cucore_stream_write_value_32(stream.get(), buffer.get(), offset, value,
                                               no_memory_barrier ? CUCORE_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER : 0u));
}
inline void write_value_64(const Stream &stream, const Buffer &buffer, std::uint64_t offset, std::uint64_t value,
                           bool no_memory_barrier = false) {
    detail::check(cucore_stream_write_value_64(stream.get(), buffer.get(), offset, value,
                                               no_memory_barrier ? CUCORE_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER : 0u));
}

// Makes `stream`'s later work wait until the value at byte `offset` of
// `buffer` meets `condition` against `value` (cuStreamWaitValue32/64), then
// flushes remote writes if `flush`. The order it makes is invisible to CUDA:
// what writes the value must not wait behind this stream. Throws Error: as
// write_value_32, NOT_SUPPORTED (nor, flush, 64-bit without the device's support).
inline void wait_value_32(const Stream &stream, const Buffer &buffer, std::uint64_t offset, std::uint32_t value,
                          WaitCondition condition = WaitCondition::geq, bool flush = false) {
    detail::check(cucore_stream_wait_value_32(stream.get(), buffer.get(), offset, value,
                                              static_cast<std::uint32_t>(condition) |
                                                  (flush ? CUCORE_STREAM_WAIT_VALUE_FLUSH : 0u)));
}
inline void wait_value_64(const Stream &stream, const Buffer &buffer, std::uint64_t offset, std::uint64_t value,
                          WaitCondition condition = WaitCondition::geq, bool flush = false) {
    detail::check(cucore_stream_wait_value_64(stream.get(), buffer.get(), offset, value,
                                              static_cast<std::uint32_t>(condition) |
                                                  (flush ? CUCORE_STREAM_WAIT_VALUE_FLUSH : 0u)));
}

// Flushes outstanding remote writes (NOT_SUPPORTED without CAN_FLUSH_REMOTE_WRITES).
inline void flush_remote_writes(const Stream &stream) {
    detail::check(cucore_stream_flush_remote_writes(stream.get()));
}

// A memory barrier of `scope` in `stream`'s order.
inline void memory_barrier(const Stream &stream, MemoryBarrierScope scope = MemoryBarrierScope::system) {
    detail::check(cucore_stream_memory_barrier(stream.get(), static_cast<cucore_memory_barrier_scope_t>(scope)));
}

// One operation of batch_memory_ops (cucore_stream_memory_op_t); it refers to
// its buffer without holding it.
struct StreamMemoryOp {
    cucore_stream_memory_op_t op{};

    static StreamMemoryOp write_value_32(const Buffer &buffer, std::uint64_t offset, std::uint32_t value,
                                         bool no_memory_barrier = false) noexcept {
        return make(CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_32, buffer, offset, value,
                    no_memory_barrier ? CUCORE_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER : 0u);
    }
    static StreamMemoryOp write_value_64(const Buffer &buffer, std::uint64_t offset, std::uint64_t value,
                                         bool no_memory_barrier = false) noexcept {
        return make(CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_64, buffer, offset, value,
                    no_memory_barrier ? CUCORE_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER : 0u);
    }
    static StreamMemoryOp wait_value_32(const Buffer &buffer, std::uint64_t offset, std::uint32_t value,
                                        WaitCondition condition = WaitCondition::geq, bool flush = false) noexcept {
        return make(CUCORE_STREAM_MEMORY_OP_WAIT_VALUE_32, buffer, offset, value,
                    static_cast<std::uint32_t>(condition) | (flush ? CUCORE_STREAM_WAIT_VALUE_FLUSH : 0u));
    }
    static StreamMemoryOp wait_value_64(const Buffer &buffer, std::uint64_t offset, std::uint64_t value,
                                        WaitCondition condition = WaitCondition::geq, bool flush = false) noexcept {
        return make(CUCORE_STREAM_MEMORY_OP_WAIT_VALUE_64, buffer, offset, value,
                    static_cast<std::uint32_t>(condition) | (flush ? CUCORE_STREAM_WAIT_VALUE_FLUSH : 0u));
    }
    static StreamMemoryOp flush_remote_writes() noexcept {
        StreamMemoryOp m;
        m.op.type = CUCORE_STREAM_MEMORY_OP_FLUSH_REMOTE_WRITES;
        return m;
    }
    static StreamMemoryOp memory_barrier(MemoryBarrierScope scope = MemoryBarrierScope::system) noexcept {
        StreamMemoryOp m;
        m.op.type = CUCORE_STREAM_MEMORY_OP_BARRIER;
        m.op.flags = static_cast<std::uint32_t>(scope);
        return m;
    }

private:
    static StreamMemoryOp make(cucore_stream_memory_op_type_t type, const Buffer &buffer, std::uint64_t offset,
                               std::uint64_t value, std::uint32_t flags) noexcept {
        StreamMemoryOp m;
        m.op.type = type;
        m.op.flags = flags;
        m.op.buffer = buffer.get();
        m.op.offset = offset;
        m.op.value = value;
        return m;
    }
};

// Enqueues the operations in one cuStreamBatchMemOp, in order (at most 255).
// Throws Error: as the single operations.
inline void batch_memory_ops(const Stream &stream, const std::vector<StreamMemoryOp> &ops) {
    static_assert(sizeof(StreamMemoryOp) == sizeof(cucore_stream_memory_op_t), "an array of C ops");
    detail::check(cucore_stream_batch_memory_ops(stream.get(), ops.empty() ? nullptr : &ops.front().op, ops.size()));
}

}  // namespace cucore

#endif  // CUCORE_MEMORY_OPERATIONS_HPP
