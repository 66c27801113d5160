// Host locations, batched copies, batched prefetches and discards, and stream
// memory operations.
#include "core/memory_operations.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/device.hpp"
#include "core/error.hpp"
#include "core/memory_resource.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

// ---- Host locations ----------------------------------------------------------------------

int host_numa_current() {
    // getcpu(2) through syscall: no libnuma, and glibc's wrapper is newer (2.29) than the oldest glibc the
    // library supports. On a machine without NUMA the kernel answers node 0.
    unsigned cpu = 0, node = 0;
    if (syscall(SYS_getcpu, &cpu, &node, nullptr) != 0)
        throw Error(CUCORE_ERROR_NOT_SUPPORTED,
                    std::string("the system refuses getcpu, which tells the calling thread's NUMA node: ") +
                        std::strerror(errno));
    return static_cast<int>(node);
}

namespace {

// A batched entry point of CUDA 13.0: NOT_SUPPORTED naming the version a driver without it lacks (the
// driver layer's own message names the entry point only).
template <class Fn>
void require_cuda_13(Fn fn, const char *entry_point, const char *what) {
    if (__builtin_expect(fn != nullptr, 1)) return;
    throw Error(CUCORE_ERROR_NOT_SUPPORTED, std::string(what) + " need a CUDA 13.0 driver (entry point " +
                                                entry_point + "); this driver reports CUDA " +
                                                std::to_string(Device::driver_version()));
}

// The address of one side, checked against its buffer (`name` is built on the error path only).
template <class Name>
CUdeviceptr side_address(const MemorySide &side, uint64_t size, Name name) {
    if (side.buffer) {
        try {
            side.buffer->check_open("");
            side.buffer->check_range(side.offset, size, "the buffer");
        } catch (const Error &error) {
            const std::string argument = name();
            if (error.status() == CUCORE_ERROR_INVALID_STATE)
                throw Error(CUCORE_ERROR_INVALID_STATE, "argument '" + argument + "' is a closed buffer");
            throw Error(error.status(), "argument '" + argument + "': " + error.what());
        }
        return side.buffer->address() + side.offset;
    }
    if (side.address == 0 || side.offset > UINT64_MAX - side.address)
        throw_invalid_argument("argument '" + name() + "' names address " + std::to_string(side.address) +
                               " + offset " + std::to_string(side.offset) + ", not memory");
    return side.address + side.offset;
}

CUmemLocation hint_location(const cucore_location_t &hint) noexcept {
    return hint.type == CUCORE_LOCATION_NONE ? CUmemLocation{} : to_cu_location(hint);
}

CUmemcpyAttributes to_attributes(const cucore_copy_options_t &options) noexcept {
    CUmemcpyAttributes attributes{};
    attributes.srcAccessOrder = options.src_access_order == CUCORE_MEMCPY_SRC_ACCESS_ORDER_DEFAULT
                                    ? CU_MEMCPY_SRC_ACCESS_ORDER_STREAM
                                    : static_cast<CUmemcpySrcAccessOrder>(options.src_access_order);
    attributes.srcLocHint = hint_location(options.src_location_hint);
    attributes.dstLocHint = hint_location(options.dst_location_hint);
    attributes.flags = options.overlap_mode == CUCORE_MEMCPY_OVERLAP_MODE_PREFER_OVERLAP_WITH_COMPUTE
                           ? CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE
                           : CU_MEMCPY_FLAG_DEFAULT;
    return attributes;
}

// The batched entry points refuse the legacy default stream (CU_STREAM_LEGACY, or 0 meaning it).
void refuse_legacy_stream(const Stream &stream, const char *entry_point) {
    if (stream.cu() == nullptr || stream.cu() == CU_STREAM_LEGACY)
        throw_invalid_argument(std::string("argument 'stream' is the legacy default stream, which ") + entry_point +
                               " refuses; use a created stream or the per-thread default stream");
}

bool same_location(const CUmemLocation &a, const CUmemLocation &b) noexcept { return a.type == b.type && a.id == b.id; }

// The ranges of managed buffers a batched prefetch or discard names, with their
// locations as the driver takes them (one entry per run of equal locations).
struct ManagedRanges {
    std::vector<CUdeviceptr> addresses;
    std::vector<size_t> sizes;
    std::vector<CUmemLocation> locations;
    std::vector<size_t> location_starts;
};

ManagedRanges managed_ranges(const std::vector<Buffer *> &buffers, const std::vector<cucore_location_t> *locations,
                             const char *what) {
    ManagedRanges ranges;
    ranges.addresses.reserve(buffers.size());
    ranges.sizes.reserve(buffers.size());
    for (size_t i = 0; i < buffers.size(); ++i) {
        Buffer &buffer = *buffers[i];
        try {
            buffer.check_open("");
        } catch (const Error &) {
            throw Error(CUCORE_ERROR_INVALID_STATE, "argument 'buffers[" + std::to_string(i) + "]' is a closed buffer");
        }
        if (!buffer.is_managed())
            throw_invalid_argument(std::string(what) + " needs managed memory; argument 'buffers[" +
                                   std::to_string(i) + "]' is not managed");
        if (buffer.size() == 0) continue;  // nothing to move or drop
        if (locations) {
            const CUmemLocation where = to_cu_location((*locations)[locations->size() == 1 ? 0 : i]);
            if (ranges.locations.empty() || !same_location(ranges.locations.back(), where)) {
                ranges.locations.push_back(where);
                ranges.location_starts.push_back(ranges.addresses.size());
            }
        }
        ranges.addresses.push_back(buffer.address());
        ranges.sizes.push_back(static_cast<size_t>(buffer.size()));
    }
    return ranges;
}

// Where the driver captures the operations into a graph, the graph keeps the buffers (as copies do).
void hold_all_for_capture(Stream &stream, const std::vector<Buffer *> &buffers) {
    if (__builtin_expect(stream.capture_sink() == nullptr, 1)) return;
    for (Buffer *buffer : buffers) hold_buffer_for_capture(stream, *buffer);
}

}  // namespace

// ---- Batched copies -----------------------------------------------------------------------

void copy_batch(Stream &stream, const std::vector<CopyItem> &items,
                const std::vector<cucore_copy_options_t> &options) {
    stream.refuse_during_capture("a batched copy (the driver has no graph node for cuMemcpyBatchAsync; capture "
                                 "single copies instead)");
    refuse_legacy_stream(stream, "cuMemcpyBatchAsync");
    require_cuda_13(driver::api().cuMemcpyBatchAsync, "cuMemcpyBatchAsync", "batched copies");
    std::vector<CUdeviceptr> dsts, srcs;
    std::vector<size_t> sizes;
    std::vector<CUmemcpyAttributes> attributes;
    std::vector<size_t> attribute_starts;
    dsts.reserve(items.size());
    srcs.reserve(items.size());
    sizes.reserve(items.size());
    uint32_t run_index = 0;
    for (size_t i = 0; i < items.size(); ++i) {
        const CopyItem &item = items[i];
        const CUdeviceptr src = side_address(item.src, item.size, [i] { return "items[" + std::to_string(i) + "].src"; });
        const CUdeviceptr dst = side_address(item.dst, item.size, [i] { return "items[" + std::to_string(i) + "].dst"; });
        if (item.size == 0) continue;
        if (attributes.empty() || item.options_index != run_index) {  // a new run of one set of options
            run_index = item.options_index;
            attributes.push_back(to_attributes(options[run_index]));
            attribute_starts.push_back(sizes.size());
        }
        srcs.push_back(src);
        dsts.push_back(dst);
        sizes.push_back(static_cast<size_t>(item.size));
    }
    if (sizes.empty()) return;
    // The batch entry points need the stream's context current, even for a created stream: without one,
    // cuMemcpyBatchAsync answered CUDA_ERROR_INVALID_VALUE (H200, driver 580).
    ScopedContext bind(stream.cu_context());
    CUCORE_CALL(cuMemcpyBatchAsync, dsts.data(), srcs.data(), sizes.data(), sizes.size(), attributes.data(),
                attribute_starts.data(), attributes.size(), stream.cu());
}

// ---- Batched strided copies ------------------------------------------------------------------

namespace {
// A strided side as the driver's pointer operand: the address of byte x of row y of slice z, the row length
// (the pitch: the element of a pointer copy is a byte) and, for 3D copies, the rows per slice.
CUmemcpy3DOperand pointer_operand(const CopySide &side, uint64_t rows, uint64_t depth, const cucore_location_t &hint) {
    const cucore_memory_region_t &r = side.region;
    const uint64_t base = side.buffer ? side.buffer->address() : reinterpret_cast<uint64_t>(r.host);
    // A 2D copy may leave height 0; its slice stride is then never used.
    const uint64_t slice_rows = depth > 1 ? r.height : r.y + rows;
    CUmemcpy3DOperand operand{};
    operand.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    operand.op.ptr.ptr = base + r.offset + (r.z * slice_rows + r.y) * r.pitch + r.x;
    operand.op.ptr.rowLength = static_cast<size_t>(r.pitch);
    operand.op.ptr.layerHeight = depth > 1 ? static_cast<size_t>(r.height) : 0;  // 0: packed (one slice)
    operand.op.ptr.locHint = hint_location(hint);
    return operand;
}
}  // namespace

void copy_3d_batch(Stream &stream, const std::vector<Copy3DItem> &copies, const cucore_copy_options_t &options) {
    stream.refuse_during_capture("a batched strided copy (the driver has no graph node for cuMemcpy3DBatchAsync; "
                                 "capture single copies instead)");
    refuse_legacy_stream(stream, "cuMemcpy3DBatchAsync");
    require_cuda_13(driver::api().cuMemcpy3DBatchAsync, "cuMemcpy3DBatchAsync", "batched strided copies");
    const CUmemcpyAttributes attributes = to_attributes(options);
    std::vector<CUDA_MEMCPY3D_BATCH_OP> ops;
    ops.reserve(copies.size());
    for (size_t i = 0; i < copies.size(); ++i) {
        const Copy3DItem &c = copies[i];
        try {
            if (c.src.buffer) c.src.buffer->check_open("src.buffer");
            if (c.dst.buffer) c.dst.buffer->check_open("dst.buffer");
            if (c.rows == 0 || c.depth == 0) throw_invalid_argument("'rows' and 'depth' must be at least 1");
            check_copy_side(c.src, c.width, c.rows, c.depth, "src");
            check_copy_side(c.dst, c.width, c.rows, c.depth, "dst");
        } catch (const Error &error) {
            throw Error(error.status(), "copies[" + std::to_string(i) + "]: " + error.what());
        }
        if (c.width == 0) continue;
        CUDA_MEMCPY3D_BATCH_OP op{};
        op.src = pointer_operand(c.src, c.rows, c.depth, options.src_location_hint);
        op.dst = pointer_operand(c.dst, c.rows, c.depth, options.dst_location_hint);
        op.extent = {static_cast<size_t>(c.width), static_cast<size_t>(c.rows), static_cast<size_t>(c.depth)};
        op.srcAccessOrder = attributes.srcAccessOrder;
        op.flags = attributes.flags;
        ops.push_back(op);
    }
    if (ops.empty()) return;
    ScopedContext bind(stream.cu_context());
    CUCORE_CALL(cuMemcpy3DBatchAsync, ops.size(), ops.data(), 0, stream.cu());
}

// ---- Batched prefetches and discards --------------------------------------------------------

void prefetch_batch(Stream &stream, const std::vector<Buffer *> &buffers,
                    const std::vector<cucore_location_t> &locations) {
    refuse_legacy_stream(stream, "cuMemPrefetchBatchAsync");
    require_cuda_13(driver::api().cuMemPrefetchBatchAsync, "cuMemPrefetchBatchAsync", "batched prefetches");
    ManagedRanges r = managed_ranges(buffers, &locations, "prefetch");
    if (r.addresses.empty()) return;
    ScopedContext bind(stream.cu_context());
    CUCORE_CALL(cuMemPrefetchBatchAsync, r.addresses.data(), r.sizes.data(), r.addresses.size(), r.locations.data(),
                r.location_starts.data(), r.locations.size(), 0, stream.cu());
    hold_all_for_capture(stream, buffers);
}

void discard_batch(Stream &stream, const std::vector<Buffer *> &buffers) {
    refuse_legacy_stream(stream, "cuMemDiscardBatchAsync");
    require_cuda_13(driver::api().cuMemDiscardBatchAsync, "cuMemDiscardBatchAsync", "batched discards");
    ManagedRanges r = managed_ranges(buffers, nullptr, "discard");
    if (r.addresses.empty()) return;
    ScopedContext bind(stream.cu_context());
    CUCORE_CALL(cuMemDiscardBatchAsync, r.addresses.data(), r.sizes.data(), r.addresses.size(), 0, stream.cu());
    hold_all_for_capture(stream, buffers);
}

void discard_prefetch_batch(Stream &stream, const std::vector<Buffer *> &buffers,
                            const std::vector<cucore_location_t> &locations) {
    refuse_legacy_stream(stream, "cuMemDiscardAndPrefetchBatchAsync");
    require_cuda_13(driver::api().cuMemDiscardAndPrefetchBatchAsync, "cuMemDiscardAndPrefetchBatchAsync",
                    "batched discards with prefetches");
    ManagedRanges r = managed_ranges(buffers, &locations, "discard");
    if (r.addresses.empty()) return;
    ScopedContext bind(stream.cu_context());
    CUCORE_CALL(cuMemDiscardAndPrefetchBatchAsync, r.addresses.data(), r.sizes.data(), r.addresses.size(),
                r.locations.data(), r.location_starts.data(), r.locations.size(), 0, stream.cu());
    hold_all_for_capture(stream, buffers);
}

// ---- Stream memory operations ------------------------------------------------------------------

namespace {

bool is_64_bit(cucore_stream_memory_op_type_t type) noexcept {
    return type == CUCORE_STREAM_MEMORY_OP_WAIT_VALUE_64 || type == CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_64;
}
bool is_wait(cucore_stream_memory_op_type_t type) noexcept {
    return type == CUCORE_STREAM_MEMORY_OP_WAIT_VALUE_32 || type == CUCORE_STREAM_MEMORY_OP_WAIT_VALUE_64;
}
bool is_write(cucore_stream_memory_op_type_t type) noexcept {
    return type == CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_32 || type == CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_64;
}

// What the operations need of the device, asked once per call.
struct Needs {
    bool sixty_four = false, nor = false, flush = false;
};

Needs needs_of(const MemoryOp &op) noexcept {
    Needs needs;
    needs.sixty_four = is_64_bit(op.type);
    needs.nor = is_wait(op.type) && (op.flags & 0x3u) == CUCORE_STREAM_WAIT_VALUE_NOR;
    needs.flush = op.type == CUCORE_STREAM_MEMORY_OP_FLUSH_REMOTE_WRITES ||
                  (is_wait(op.type) && (op.flags & CUCORE_STREAM_WAIT_VALUE_FLUSH) != 0);
    return needs;
}

void require_attribute(Stream &stream, CUdevice_attribute attribute, const char *name, const char *what) {
    Ref<Device> device = Device::get(stream.device_ordinal());
    if (!device->attribute(attribute))
        throw Error(CUCORE_ERROR_NOT_SUPPORTED, std::string(what) + " is not supported on device " +
                                                    std::to_string(stream.device_ordinal()) +
                                                    " (device attribute " + name + " is 0)");
}

void check_needs(Stream &stream, const Needs &needs) {
    if (needs.sixty_four)
        require_attribute(stream, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, "CAN_USE_64_BIT_STREAM_MEM_OPS",
                          "a 64-bit stream memory operation");
    if (needs.nor)
        require_attribute(stream, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, "CAN_USE_STREAM_WAIT_VALUE_NOR",
                          "a wait with the NOR condition");
    if (needs.flush)
        require_attribute(stream, CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES, "CAN_FLUSH_REMOTE_WRITES",
                          "flushing remote writes");
}

// The driver refuses stream memory operations on stream-ordered pool memory with a bare
// CUDA_ERROR_INVALID_VALUE (measured on an H200, driver 580: cuMemAlloc and pinned host memory work, the
// device's default pool does not); say so rather than leave the user guessing. Throws the explained error, or
// returns to let the caller rethrow the original.
void explain_pool_refusal(const Error &error, const MemoryOp &op) {
    if (error.cuda_result() != CUDA_ERROR_INVALID_VALUE || !op.memory.buffer) return;
    const Ref<MemoryResource> resource = op.memory.buffer->resource();
    if (!resource || resource->kind() != CUCORE_MEMORY_RESOURCE_DEVICE) return;
    throw Error(error.status(),
                std::string(error.what()) +
                    ": the buffer is memory of a device memory pool, which the driver's stream memory operations "
                    "refuse; use pinned host memory (a legacy pinned resource) or cuMemAlloc memory wrapped with "
                    "cucore_buffer_from_handle",
                error.cuda_result());
}

// The checked address of a wait or write (`name` built on the error path only).
template <class Name>
CUdeviceptr value_address(const MemoryOp &op, Name name) {
    const uint64_t width = is_64_bit(op.type) ? 8 : 4;
    const CUdeviceptr address = side_address(op.memory, width, name);
    if (op.memory.buffer && op.memory.buffer->is_managed())
        throw_invalid_argument("argument '" + name() +
                               "' is managed memory, which the driver's stream memory operations refuse");
    if (address % width != 0)
        throw_invalid_argument("argument '" + name() + "' is not aligned to " + std::to_string(width) +
                               " bytes, as a " + std::to_string(width * 8) + "-bit stream memory operation needs");
    return address;
}

CUstreamBatchMemOpParams to_params(const MemoryOp &op, CUdeviceptr address) noexcept {
    CUstreamBatchMemOpParams p;
    std::memset(&p, 0, sizeof p);
    const auto type = static_cast<CUstreamBatchMemOpType>(op.type);
    if (is_wait(op.type)) {
        p.waitValue.operation = type;
        p.waitValue.address = address;
        if (is_64_bit(op.type)) p.waitValue.value64 = op.value;
        else p.waitValue.value = static_cast<cuuint32_t>(op.value);
        p.waitValue.flags = op.flags;
    } else if (is_write(op.type)) {
        p.writeValue.operation = type;
        p.writeValue.address = address;
        if (is_64_bit(op.type)) p.writeValue.value64 = op.value;
        else p.writeValue.value = static_cast<cuuint32_t>(op.value);
        p.writeValue.flags = op.flags;
    } else if (op.type == CUCORE_STREAM_MEMORY_OP_FLUSH_REMOTE_WRITES) {
        p.flushRemoteWrites.operation = type;
        p.flushRemoteWrites.flags = 0;
    } else {
        p.memoryBarrier.operation = type;
        p.memoryBarrier.flags = op.flags;
    }
    return p;
}

}  // namespace

void stream_memory_op(Stream &stream, const MemoryOp &op) {
    if (!is_wait(op.type) && !is_write(op.type)) {  // flush, barrier: only as a batch of one
        stream_batch_memory_ops(stream, {op});
        return;
    }
    const CUdeviceptr address = value_address(op, [] { return std::string("buffer"); });  // arguments first
    check_needs(stream, needs_of(op));
    ScopedContext bind(stream.cu_context(), stream.is_builtin());
    try {
        switch (op.type) {
            case CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_32:
                CUCORE_CALL(cuStreamWriteValue32, stream.cu(), address, static_cast<cuuint32_t>(op.value), op.flags);
                break;
            case CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_64:
                CUCORE_CALL(cuStreamWriteValue64, stream.cu(), address, op.value, op.flags);
                break;
            case CUCORE_STREAM_MEMORY_OP_WAIT_VALUE_32:
                CUCORE_CALL(cuStreamWaitValue32, stream.cu(), address, static_cast<cuuint32_t>(op.value), op.flags);
                break;
            default: CUCORE_CALL(cuStreamWaitValue64, stream.cu(), address, op.value, op.flags); break;
        }
    } catch (const Error &error) {
        explain_pool_refusal(error, op);
        throw;
    }
    if (op.memory.buffer) hold_buffer_for_capture(stream, *op.memory.buffer);
}

void stream_batch_memory_ops(Stream &stream, const std::vector<MemoryOp> &ops) {
    Needs needs;
    for (const MemoryOp &op : ops) {
        const Needs one = needs_of(op);
        needs.sixty_four |= one.sixty_four;
        needs.nor |= one.nor;
        needs.flush |= one.flush;
    }
    std::vector<CUstreamBatchMemOpParams> params;
    params.reserve(ops.size());
    for (size_t i = 0; i < ops.size(); ++i) {
        const MemoryOp &op = ops[i];
        CUdeviceptr address = 0;
        if (is_wait(op.type) || is_write(op.type))
            address = value_address(op, [i] { return "ops[" + std::to_string(i) + "]"; });
        params.push_back(to_params(op, address));
    }
    check_needs(stream, needs);  // after the arguments: it asks the driver
    if (params.empty()) return;
    ScopedContext bind(stream.cu_context(), stream.is_builtin());
    try {
        CUCORE_CALL(cuStreamBatchMemOp, stream.cu(), static_cast<unsigned>(params.size()), params.data(), 0);
    } catch (const Error &error) {
        for (const MemoryOp &op : ops) explain_pool_refusal(error, op);
        throw;
    }
    for (const MemoryOp &op : ops)
        if (op.memory.buffer) hold_buffer_for_capture(stream, *op.memory.buffer);
}

}  // namespace cucore::core
