// Batched copies, batched prefetches and stream memory operations (what they
// check and record: memory_operations.hpp). The batched discards are in
// managed.cpp with the single ones.
#include "memory_operations.hpp"

#include <cstring>
#include <memory>

#include "entry_points.hpp"
#include "graphs.hpp"
#include "state.hpp"

namespace fake::detail {
namespace {

// Guarded by the state's mutex.
CopyBatchRecord g_copy_batch;
PrefetchBatchRecord g_prefetch_batch;
std::vector<CUstreamBatchMemOpParams> g_memory_ops;
int g_unmet_waits = 0;

bool is_legacy(CUstream stream) { return stream == nullptr || stream == CU_STREAM_LEGACY; }

// A location hint: none (INVALID, what a zeroed location reads) or a real location.
bool valid_hint(const CUmemLocation &l) {
    return l.type == CU_MEM_LOCATION_TYPE_INVALID || valid_device_location(l) || l.type == CU_MEM_LOCATION_TYPE_HOST ||
           l.type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT || (l.type == CU_MEM_LOCATION_TYPE_HOST_NUMA && l.id >= 0);
}
bool valid_prefetch_location(const CUmemLocation &l) {
    return l.type != CU_MEM_LOCATION_TYPE_INVALID && valid_hint(l);
}

// Index k of a (locations, starts) list applies from operation starts[k] on: first 0, increasing, below count.
bool valid_starts(const size_t *starts, size_t n, size_t count) {
    if (!starts || n == 0 || n > count || starts[0] != 0) return false;
    for (size_t k = 1; k < n; ++k)
        if (starts[k] <= starts[k - 1] || starts[k] >= count) return false;
    return true;
}

Allocation *managed_range(CUdeviceptr address, size_t size) {
    Allocation *a = nullptr;
    if (size == 0 || classify(address, size, &a) != 1 || !a || a->kind != MemoryKind::managed) return nullptr;
    return a;
}

// ---- stream memory operations ----

bool is_wait(int op) { return op == CU_STREAM_MEM_OP_WAIT_VALUE_32 || op == CU_STREAM_MEM_OP_WAIT_VALUE_64; }
bool is_write(int op) { return op == CU_STREAM_MEM_OP_WRITE_VALUE_32 || op == CU_STREAM_MEM_OP_WRITE_VALUE_64; }
bool is_64(int op) { return op == CU_STREAM_MEM_OP_WAIT_VALUE_64 || op == CU_STREAM_MEM_OP_WRITE_VALUE_64; }

// What a wait or write names must be memory the driver knows (not pageable), not managed, aligned.
CUresult check_value_memory(CUdeviceptr address, size_t width) {
    Allocation *a = nullptr;
    if (!address || address % width != 0 || classify(address, width, &a) != 1) return CUDA_ERROR_INVALID_VALUE;
    if (a && a->kind == MemoryKind::managed) return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

// One operation as the driver checks it (the device attributes of `device` included).
CUresult check_op(const CUstreamBatchMemOpParams &p, int device) {
    const int op = value_of(p.operation);
    if (is_wait(op)) {
        const unsigned flags = p.waitValue.flags;
        if ((flags & ~(0x3u | CU_STREAM_WAIT_VALUE_FLUSH)) != 0) return CUDA_ERROR_INVALID_VALUE;
        if (is_64(op) && !attribute_value(CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, device))
            return CUDA_ERROR_NOT_SUPPORTED;
        if ((flags & 0x3u) == CU_STREAM_WAIT_VALUE_NOR &&
            !attribute_value(CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, device))
            return CUDA_ERROR_NOT_SUPPORTED;
        if ((flags & CU_STREAM_WAIT_VALUE_FLUSH) && !attribute_value(CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES, device))
            return CUDA_ERROR_NOT_SUPPORTED;
        return check_value_memory(p.waitValue.address, is_64(op) ? 8 : 4);
    }
    if (is_write(op)) {
        if (p.writeValue.flags > CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER) return CUDA_ERROR_INVALID_VALUE;
        if (is_64(op) && !attribute_value(CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, device))
            return CUDA_ERROR_NOT_SUPPORTED;
        return check_value_memory(p.writeValue.address, is_64(op) ? 8 : 4);
    }
    if (op == CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES) {
        if (p.flushRemoteWrites.flags != 0) return CUDA_ERROR_INVALID_VALUE;
        return attribute_value(CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES, device) ? CUDA_SUCCESS
                                                                                      : CUDA_ERROR_NOT_SUPPORTED;
    }
    if (op == CU_STREAM_MEM_OP_BARRIER)
        return p.memoryBarrier.flags <= CU_STREAM_MEMORY_BARRIER_TYPE_GPU ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    return CUDA_ERROR_INVALID_VALUE;
}

// Whether a wait's condition holds now.
template <class T>
bool condition_holds(CUdeviceptr address, T value, unsigned flags) {
    T now;
    std::memcpy(&now, reinterpret_cast<const void *>(address), sizeof now);
    using Signed = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
    switch (flags & 0x3u) {
        case CU_STREAM_WAIT_VALUE_GEQ: return static_cast<Signed>(now - value) >= 0;  // cyclic
        case CU_STREAM_WAIT_VALUE_EQ: return now == value;
        case CU_STREAM_WAIT_VALUE_AND: return (now & value) != 0;
        default: return static_cast<T>(~(now | value)) != 0;  // NOR
    }
}

// Queues one checked operation in the stream's order.
void enqueue_op(Lock &lock, Stream &stream, const CUstreamBatchMemOpParams &p) {
    const int op = value_of(p.operation);
    if (is_write(op)) {
        const CUdeviceptr address = p.writeValue.address;
        const bool wide = is_64(op);
        const cuuint64_t value = wide ? p.writeValue.value64 : p.writeValue.value;
        enqueue_work(lock, stream, [address, wide, value] {
            if (classify(address, wide ? 8 : 4) != 1) return;  // freed meanwhile
            if (wide) std::memcpy(reinterpret_cast<void *>(address), &value, 8);
            else {
                const cuuint32_t narrow = static_cast<cuuint32_t>(value);
                std::memcpy(reinterpret_cast<void *>(address), &narrow, 4);
            }
        });
        return;
    }
    if (!is_wait(op)) return;  // a flush or barrier: nothing to do on host memory
    const CUdeviceptr address = p.waitValue.address;
    const bool wide = is_64(op);
    const cuuint64_t value = wide ? p.waitValue.value64 : p.waitValue.value;
    const unsigned flags = p.waitValue.flags;
    auto holds = [address, wide, value, flags] {
        if (classify(address, wide ? 8 : 4) != 1) return true;  // freed meanwhile: nothing left to wait on
        return wide ? condition_holds<cuuint64_t>(address, value, flags)
                    : condition_holds<cuuint32_t>(address, static_cast<cuuint32_t>(value), flags);
    };
    Operation wait;
    wait.kind = Operation::steps;
    wait.run_steps = [holds](Lock &held) {
        if (state().worker_streams) state().changed.wait(held, holds);  // other streams' work notifies
        else if (!holds()) ++g_unmet_waits;
    };
    enqueue(lock, stream, std::move(wait));
}

// Checks and queues `count` operations on `stream` (nothing is queued unless all are valid).
CUresult memory_ops(CUstream stream, const CUstreamBatchMemOpParams *ops, unsigned count) {
    Lock lock(state().mutex);
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (!s) return error;
    if (capture_of(*s)) return refuse_in_capture(*s);  // no batch-mem-op node in the fake's graphs
    const int device = device_of(s->context);
    for (unsigned i = 0; i < count; ++i)
        if (CUresult r = check_op(ops[i], device); r != CUDA_SUCCESS) return r;
    for (unsigned i = 0; i < count; ++i) enqueue_op(lock, *s, ops[i]);
    g_memory_ops.assign(ops, ops + count);
    return CUDA_SUCCESS;
}

template <class T>
CUresult one_op(CUstream stream, CUstreamBatchMemOpType type, CUdeviceptr address, T value, unsigned flags) {
    CUstreamBatchMemOpParams p;
    std::memset(&p, 0, sizeof p);
    if (is_wait(type)) {
        p.waitValue.operation = type;
        p.waitValue.address = address;
        if (sizeof(T) == 8) p.waitValue.value64 = value;
        else p.waitValue.value = static_cast<cuuint32_t>(value);
        p.waitValue.flags = flags;
    } else {
        p.writeValue.operation = type;
        p.writeValue.address = address;
        if (sizeof(T) == 8) p.writeValue.value64 = value;
        else p.writeValue.value = static_cast<cuuint32_t>(value);
        p.writeValue.flags = flags;
    }
    return memory_ops(stream, &p, 1);
}

}  // namespace

CUresult f_cuMemcpyBatchAsync(CUdeviceptr_v2 *dsts, CUdeviceptr_v2 *srcs, size_t *sizes, size_t count,
                              CUmemcpyAttributes_v1 *attrs, size_t *attr_starts, size_t attr_count,
                              CUstream stream) {
    if (!dsts || !srcs || !sizes || count == 0 || !attrs || !valid_starts(attr_starts, attr_count, count))
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t k = 0; k < attr_count; ++k) {
        const int order = value_of(attrs[k].srcAccessOrder);
        if (order < CU_MEMCPY_SRC_ACCESS_ORDER_STREAM || order > CU_MEMCPY_SRC_ACCESS_ORDER_ANY ||
            attrs[k].flags > CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE || !valid_hint(attrs[k].srcLocHint) ||
            !valid_hint(attrs[k].dstLocHint))
            return CUDA_ERROR_INVALID_VALUE;
    }
    if (is_legacy(stream)) return CUDA_ERROR_INVALID_VALUE;  // "must not be legacy NULL stream"
    Lock lock(state().mutex);
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (!s) return error;
    if (capture_of(*s)) return refuse_in_capture(*s);  // no graph node for batched copies
    for (size_t i = 0; i < count; ++i)
        if (sizes[i] == 0 || !dsts[i] || !srcs[i] || classify(dsts[i], sizes[i]) < 0 || classify(srcs[i], sizes[i]) < 0)
            return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0, k = 0; i < count; ++i) {
        while (k + 1 < attr_count && attr_starts[k + 1] <= i) ++k;
        if (value_of(attrs[k].srcAccessOrder) == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL) {
            // Read now, written in stream order.
            auto staged = std::make_shared<std::vector<unsigned char>>(
                reinterpret_cast<const unsigned char *>(srcs[i]), reinterpret_cast<const unsigned char *>(srcs[i]) + sizes[i]);
            auto *out = reinterpret_cast<unsigned char *>(dsts[i]);
            enqueue_work(lock, *s, [out, staged] { std::memcpy(out, staged->data(), staged->size()); });
            continue;
        }
        if (CUresult r = copy_in_order(lock, *s, dsts[i], srcs[i], sizes[i]); r != CUDA_SUCCESS) return r;
    }
    g_copy_batch.count = count;
    g_copy_batch.attributes.assign(attrs, attrs + attr_count);
    g_copy_batch.attribute_starts.assign(attr_starts, attr_starts + attr_count);
    g_copy_batch.stream = stream;
    return CUDA_SUCCESS;
}

// Pointer operands only: an array operand is CUDA_ERROR_NOT_SUPPORTED (libcucore batches no arrays).
CUresult f_cuMemcpy3DBatchAsync(size_t count, CUDA_MEMCPY3D_BATCH_OP_v1 *ops, unsigned long long flags,
                                CUstream stream) {
    if (count == 0 || !ops || flags != 0 || is_legacy(stream)) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; ++i) {
        const CUDA_MEMCPY3D_BATCH_OP &op = ops[i];
        const int order = value_of(op.srcAccessOrder);
        if (order < CU_MEMCPY_SRC_ACCESS_ORDER_STREAM || order > CU_MEMCPY_SRC_ACCESS_ORDER_ANY ||
            op.flags > CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE || !op.extent.width || !op.extent.height ||
            !op.extent.depth)
            return CUDA_ERROR_INVALID_VALUE;
        for (const CUmemcpy3DOperand *side : {&op.src, &op.dst}) {
            const int type = value_of(side->type);
            if (type == CU_MEMCPY_OPERAND_TYPE_ARRAY) return CUDA_ERROR_NOT_SUPPORTED;
            if (type != CU_MEMCPY_OPERAND_TYPE_POINTER || !side->op.ptr.ptr || !valid_hint(side->op.ptr.locHint))
                return CUDA_ERROR_INVALID_VALUE;
            if ((side->op.ptr.rowLength && side->op.ptr.rowLength < op.extent.width) ||
                (side->op.ptr.layerHeight && side->op.ptr.layerHeight < op.extent.height))
                return CUDA_ERROR_INVALID_VALUE;
        }
    }
    Lock lock(state().mutex);
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (!s) return error;
    if (capture_of(*s)) return refuse_in_capture(*s);  // no graph node for batched copies
    // Row r of slice z of a side starts at ptr + (z * layerHeight + r) * rowLength (0: packed by the extent).
    auto row_at = [](const CUmemcpy3DOperand &side, const CUextent3D &e, size_t z, size_t r) {
        const size_t row = side.op.ptr.rowLength ? side.op.ptr.rowLength : e.width;
        const size_t layer = side.op.ptr.layerHeight ? side.op.ptr.layerHeight : e.height;
        return side.op.ptr.ptr + (z * layer + r) * row;
    };
    for (size_t i = 0; i < count; ++i) {
        const CUDA_MEMCPY3D_BATCH_OP &op = ops[i];
        for (size_t z = 0; z < op.extent.depth; ++z)
            for (size_t r = 0; r < op.extent.height; ++r)
                if (classify(row_at(op.src, op.extent, z, r), op.extent.width) < 0 ||
                    classify(row_at(op.dst, op.extent, z, r), op.extent.width) < 0)
                    return CUDA_ERROR_INVALID_VALUE;
    }
    for (size_t i = 0; i < count; ++i) {
        const CUDA_MEMCPY3D_BATCH_OP &op = ops[i];
        for (size_t z = 0; z < op.extent.depth; ++z)
            for (size_t r = 0; r < op.extent.height; ++r)
                if (CUresult c = copy_in_order(lock, *s, row_at(op.dst, op.extent, z, r), row_at(op.src, op.extent, z, r),
                                               op.extent.width);
                    c != CUDA_SUCCESS)
                    return c;
    }
    return CUDA_SUCCESS;
}

CUresult f_cuMemPrefetchBatchAsync(CUdeviceptr_v2 *addresses, size_t *sizes, size_t count, CUmemLocation_v1 *locations,
                                   size_t *location_starts, size_t location_count, unsigned long long flags,
                                   CUstream stream) {
    if (!addresses || !sizes || count == 0 || flags != 0 || !locations ||
        !valid_starts(location_starts, location_count, count) || is_legacy(stream))
        return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    for (size_t k = 0; k < location_count; ++k)
        if (!valid_prefetch_location(locations[k])) return CUDA_ERROR_INVALID_DEVICE;
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (!s) return error;
    if (capture_of(*s)) return refuse_in_capture(*s);
    for (size_t i = 0; i < count; ++i)
        if (!managed_range(addresses[i], sizes[i])) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0, k = 0; i < count; ++i) {
        while (k + 1 < location_count && location_starts[k + 1] <= i) ++k;
        const CUdeviceptr address = addresses[i];
        const size_t size = sizes[i];
        const CUmemLocation to = locations[k];
        enqueue_work(lock, *s, [address, size, to] {
            if (Allocation *a = managed_range(address, size)) a->advice.last_prefetch = to;
        });
    }
    g_prefetch_batch.count = count;
    g_prefetch_batch.locations.assign(locations, locations + location_count);
    g_prefetch_batch.location_starts.assign(location_starts, location_starts + location_count);
    return CUDA_SUCCESS;
}

CUresult f_cuStreamWriteValue32(CUstream stream, CUdeviceptr_v2 address, cuuint32_t value, unsigned int flags) {
    return one_op(stream, CU_STREAM_MEM_OP_WRITE_VALUE_32, address, value, flags);
}
CUresult f_cuStreamWriteValue64(CUstream stream, CUdeviceptr_v2 address, cuuint64_t value, unsigned int flags) {
    return one_op(stream, CU_STREAM_MEM_OP_WRITE_VALUE_64, address, value, flags);
}
CUresult f_cuStreamWaitValue32(CUstream stream, CUdeviceptr_v2 address, cuuint32_t value, unsigned int flags) {
    return one_op(stream, CU_STREAM_MEM_OP_WAIT_VALUE_32, address, value, flags);
}
CUresult f_cuStreamWaitValue64(CUstream stream, CUdeviceptr_v2 address, cuuint64_t value, unsigned int flags) {
    return one_op(stream, CU_STREAM_MEM_OP_WAIT_VALUE_64, address, value, flags);
}
CUresult f_cuStreamBatchMemOp(CUstream stream, unsigned int count, CUstreamBatchMemOpParams *ops, unsigned int flags) {
    if (!ops || count == 0 || count >= 256 || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    return memory_ops(stream, ops, count);
}

}  // namespace fake::detail

namespace fake {

CopyBatchRecord last_copy_batch() {
    detail::Lock lock(detail::state().mutex);
    return detail::g_copy_batch;
}

PrefetchBatchRecord last_prefetch_batch() {
    detail::Lock lock(detail::state().mutex);
    return detail::g_prefetch_batch;
}

std::vector<CUstreamBatchMemOpParams> last_batch_memory_ops() {
    detail::Lock lock(detail::state().mutex);
    return detail::g_memory_ops;
}

int unmet_waits() {
    detail::Lock lock(detail::state().mutex);
    return detail::g_unmet_waits;
}

}  // namespace fake
