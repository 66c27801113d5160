// C ABI: host locations, batched copies, batched prefetches and discards, stream memory operations.
#include "capi/capi.hpp"
#include "capi/copy_side.hpp"
#include "core/memory_operations.hpp"

using namespace cucore;

namespace {

constexpr cucore_copy_options_t kCopyDefaults = CUCORE_COPY_OPTIONS_INIT;
constexpr size_t kMaxBatchMemoryOps = 255;  // cuStreamBatchMemOp: count must be below 256

// A location hint: NONE (no hint) or a location check_location takes.
void check_hint(const cucore_location_t &hint, const char *argument) {
    if (core::enum_value(hint.type) != CUCORE_LOCATION_NONE) capi::check_location(hint, argument);
}

cucore_copy_options_t read_copy_options(const cucore_copy_options_t *options, const std::string &argument) {
    cucore_copy_options_t resolved = capi::read_options(options, kCopyDefaults, argument.c_str());
    capi::check_enum_range(resolved.src_access_order, CUCORE_MEMCPY_SRC_ACCESS_ORDER_DEFAULT,
                           CUCORE_MEMCPY_SRC_ACCESS_ORDER_ANY, (argument + ".src_access_order").c_str(),
                           "is unknown");
    capi::check_enum_range(resolved.overlap_mode, CUCORE_MEMCPY_OVERLAP_MODE_DEFAULT,
                           CUCORE_MEMCPY_OVERLAP_MODE_PREFER_OVERLAP_WITH_COMPUTE,
                           (argument + ".overlap_mode").c_str(), "is unknown");
    check_hint(resolved.src_location_hint, (argument + ".src_location_hint").c_str());
    check_hint(resolved.dst_location_hint, (argument + ".dst_location_hint").c_str());
    return resolved;
}

// One side of a copy item: a buffer or a pointer, exactly one ("items[i].src" is built on the error path only:
// a batch of many copies is a hot path).
core::MemorySide copy_side(cucore_buffer_t *buffer, const void *pointer, uint64_t offset, size_t i,
                           const char *side) {
    auto name = [&] { return "items[" + std::to_string(i) + "]." + side; };
    if ((buffer == nullptr) == (pointer == nullptr))
        core::throw_invalid_argument("argument '" + name() + "' must name a buffer or a pointer (exactly one)");
    core::MemorySide result;
    if (buffer) {
        try {
            result.buffer = &capi::get(buffer, side);
        } catch (const core::Error &) {
            result.buffer = &capi::get(buffer, name().c_str());  // throws again, naming the item
        }
    } else {
        result.address = reinterpret_cast<uint64_t>(pointer);
    }
    result.offset = offset;
    return result;
}

// The locations of a batched prefetch: one for all the buffers, or one each.
std::vector<cucore_location_t> location_list(const cucore_location_t *locations, size_t location_count,
                                             size_t count) {
    if (location_count != 1 && location_count != count)
        core::throw_invalid_argument("argument 'location_count' is " + std::to_string(location_count) +
                                     "; it must be 1 (one location for every buffer) or count (" +
                                     std::to_string(count) + ")");
    capi::require(locations, "locations");
    std::vector<cucore_location_t> result(locations, locations + location_count);
    for (size_t i = 0; i < location_count; ++i)
        capi::check_location(result[i], ("locations[" + std::to_string(i) + "]").c_str());
    return result;
}

// The wait flags: one condition, and FLUSH.
void check_wait_flags(uint32_t flags, const char *argument) {
    capi::check_flags(flags, 0x3u | CUCORE_STREAM_WAIT_VALUE_FLUSH, argument);
}

// The memory of a wait or write: `buffer` at `offset`, or the address `offset`.
core::MemorySide value_side(cucore_buffer_t *buffer, uint64_t offset, const char *argument) {
    core::MemorySide side;
    if (buffer) side.buffer = &capi::get(buffer, argument);
    else side.address = offset;
    side.offset = buffer ? offset : 0;
    return side;
}

// One operation of a batch, checked field by field ("ops[i].flags").
core::MemoryOp memory_op(const cucore_stream_memory_op_t &op, size_t i) {
    const std::string name = "ops[" + std::to_string(i) + "]";
    core::MemoryOp result;
    result.type = capi::check_enum_range(op.type, CUCORE_STREAM_MEMORY_OP_WAIT_VALUE_32,
                                         CUCORE_STREAM_MEMORY_OP_BARRIER, (name + ".type").c_str(), "is unknown");
    result.flags = op.flags;
    result.value = op.value;
    const std::string flags = name + ".flags";
    switch (result.type) {
        case CUCORE_STREAM_MEMORY_OP_WAIT_VALUE_32:
        case CUCORE_STREAM_MEMORY_OP_WAIT_VALUE_64: check_wait_flags(op.flags, flags.c_str()); break;
        case CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_32:
        case CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_64:
            capi::check_flags(op.flags, CUCORE_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER, flags.c_str());
            break;
        case CUCORE_STREAM_MEMORY_OP_FLUSH_REMOTE_WRITES: capi::require_zero(op.flags, flags.c_str()); break;
        default:
            if (op.flags > CUCORE_MEMORY_BARRIER_SCOPE_DEVICE)
                core::throw_invalid_argument("argument '" + flags + "' (" + std::to_string(op.flags) +
                                             ") is not a cucore_memory_barrier_scope_t");
            break;
    }
    const bool on_memory = result.type != CUCORE_STREAM_MEMORY_OP_FLUSH_REMOTE_WRITES &&
                           result.type != CUCORE_STREAM_MEMORY_OP_BARRIER;
    if (on_memory) {
        result.memory = value_side(op.buffer, op.offset, (name + ".buffer").c_str());
        const bool narrow = result.type == CUCORE_STREAM_MEMORY_OP_WAIT_VALUE_32 ||
                            result.type == CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_32;
        if (narrow && op.value > UINT32_MAX)
            core::throw_invalid_argument("argument '" + name + ".value' (" + std::to_string(op.value) +
                                         ") does not fit in the 32 bits of its operation");
    } else if (op.buffer || op.offset || op.value) {
        core::throw_invalid_argument("argument '" + name +
                                     "': a flush or barrier names no memory (buffer, offset and value must be 0)");
    }
    return result;
}

void single_op(cucore_stream_t *stream, cucore_stream_memory_op_type_t type, cucore_buffer_t *buffer,
               uint64_t offset, uint64_t value, uint32_t flags, bool wait) {
    core::Stream &on = capi::get(stream, "stream");
    core::MemoryOp op;
    op.type = type;
    op.memory = value_side(buffer, offset, "buffer");
    op.value = value;
    op.flags = flags;
    if (wait) check_wait_flags(flags, "flags");
    else capi::check_flags(flags, CUCORE_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER, "flags");
    core::stream_memory_op(on, op);
}

}  // namespace

extern "C" {

cucore_status_t cucore_host_numa_current(int *numa_id) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(numa_id, "numa_id");
        result = core::host_numa_current();
    });
}

cucore_status_t cucore_copy_batch(cucore_stream_t *stream, const cucore_copy_batch_item_t *items, size_t count,
                                  const cucore_copy_options_t *const *options, size_t options_count) {
    return capi::guarded(__func__, [&] {
        core::Stream &on = capi::get(stream, "stream");
        capi::require_array(items, count, "items");
        capi::require_array(options, options_count, "options", "options_count");
        std::vector<cucore_copy_options_t> resolved;
        resolved.reserve(options_count ? options_count : 1);
        for (size_t k = 0; k < options_count; ++k)
            resolved.push_back(read_copy_options(options[k], "options[" + std::to_string(k) + "]"));
        if (resolved.empty()) resolved.push_back(kCopyDefaults);
        std::vector<core::CopyItem> copies(count);
        for (size_t i = 0; i < count; ++i) {
            const cucore_copy_batch_item_t &item = items[i];
            if (item.reserved)
                capi::require_zero(item.reserved, ("items[" + std::to_string(i) + "].reserved").c_str());
            if (item.options_index >= resolved.size())
                core::throw_invalid_argument("argument 'items[" + std::to_string(i) + "].options_index' (" +
                                             std::to_string(item.options_index) + ") is not below options_count (" +
                                             std::to_string(options_count) + ")");
            copies[i].src = copy_side(item.src, item.src_pointer, item.src_offset, i, "src");
            copies[i].dst = copy_side(item.dst, item.dst_pointer, item.dst_offset, i, "dst");
            copies[i].size = item.size;
            copies[i].options_index = item.options_index;
        }
        core::copy_batch(on, copies, resolved);
    });
}

cucore_status_t cucore_copy_3d_batch(cucore_stream_t *stream, const cucore_copy_3d_t *const *copies, size_t count,
                                     const cucore_copy_options_t *options) {
    return capi::guarded(__func__, [&] {
        core::Stream &on = capi::get(stream, "stream");
        capi::require_array(copies, count, "copies");
        const cucore_copy_options_t resolved_options = read_copy_options(options, "options");
        std::vector<core::Copy3DItem> items(count);
        for (size_t i = 0; i < count; ++i) {
            try {  // the checks of cucore_copy_3d, their messages prefixed with the element
                const cucore_copy_3d_t copy = capi::read_copy_3d(copies[i]);
                items[i].src = capi::copy_side(copy.src, "copy.src.buffer", "src");
                items[i].dst = capi::copy_side(copy.dst, "copy.dst.buffer", "dst");
                items[i].width = copy.width;
                items[i].rows = copy.rows;
                items[i].depth = copy.depth;
            } catch (const core::Error &error) {
                throw core::Error(error.status(), "copies[" + std::to_string(i) + "]: " + error.what());
            }
        }
        core::copy_3d_batch(on, items, resolved_options);
    });
}

cucore_status_t cucore_prefetch_batch(cucore_stream_t *stream, cucore_buffer_t *const *buffers, size_t count,
                                      const cucore_location_t *locations, size_t location_count) {
    return capi::guarded(__func__, [&] {
        core::Stream &on = capi::get(stream, "stream");
        std::vector<core::Buffer *> objects = capi::get_all(buffers, count, "buffers");
        if (count == 0) return;
        core::prefetch_batch(on, objects, location_list(locations, location_count, count));
    });
}

cucore_status_t cucore_discard_batch(cucore_stream_t *stream, cucore_buffer_t *const *buffers, size_t count) {
    return capi::guarded(__func__, [&] {
        core::Stream &on = capi::get(stream, "stream");
        std::vector<core::Buffer *> objects = capi::get_all(buffers, count, "buffers");
        if (count == 0) return;
        core::discard_batch(on, objects);
    });
}

cucore_status_t cucore_discard_prefetch_batch(cucore_stream_t *stream, cucore_buffer_t *const *buffers,
                                              size_t count, const cucore_location_t *locations,
                                              size_t location_count) {
    return capi::guarded(__func__, [&] {
        core::Stream &on = capi::get(stream, "stream");
        std::vector<core::Buffer *> objects = capi::get_all(buffers, count, "buffers");
        if (count == 0) return;
        core::discard_prefetch_batch(on, objects, location_list(locations, location_count, count));
    });
}

cucore_status_t cucore_stream_write_value_32(cucore_stream_t *stream, cucore_buffer_t *buffer, uint64_t offset,
                                             uint32_t value, uint32_t flags) {
    return capi::guarded(__func__, [&] {
        single_op(stream, CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_32, buffer, offset, value, flags, false);
    });
}

cucore_status_t cucore_stream_write_value_64(cucore_stream_t *stream, cucore_buffer_t *buffer, uint64_t offset,
                                             uint64_t value, uint32_t flags) {
    return capi::guarded(__func__, [&] {
        single_op(stream, CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_64, buffer, offset, value, flags, false);
    });
}

cucore_status_t cucore_stream_wait_value_32(cucore_stream_t *stream, cucore_buffer_t *buffer, uint64_t offset,
                                            uint32_t value, uint32_t flags) {
    return capi::guarded(__func__, [&] {
        single_op(stream, CUCORE_STREAM_MEMORY_OP_WAIT_VALUE_32, buffer, offset, value, flags, true);
    });
}

cucore_status_t cucore_stream_wait_value_64(cucore_stream_t *stream, cucore_buffer_t *buffer, uint64_t offset,
                                            uint64_t value, uint32_t flags) {
    return capi::guarded(__func__, [&] {
        single_op(stream, CUCORE_STREAM_MEMORY_OP_WAIT_VALUE_64, buffer, offset, value, flags, true);
    });
}

cucore_status_t cucore_stream_flush_remote_writes(cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        core::MemoryOp op;
        op.type = CUCORE_STREAM_MEMORY_OP_FLUSH_REMOTE_WRITES;
        core::stream_memory_op(capi::get(stream, "stream"), op);
    });
}

cucore_status_t cucore_stream_memory_barrier(cucore_stream_t *stream, cucore_memory_barrier_scope_t scope) {
    return capi::guarded(__func__, [&] {
        core::Stream &on = capi::get(stream, "stream");
        core::MemoryOp op;
        op.type = CUCORE_STREAM_MEMORY_OP_BARRIER;
        op.flags = static_cast<uint32_t>(capi::check_enum_range(scope, CUCORE_MEMORY_BARRIER_SCOPE_SYSTEM,
                                                                CUCORE_MEMORY_BARRIER_SCOPE_DEVICE, "scope",
                                                                "is unknown"));
        core::stream_memory_op(on, op);
    });
}

cucore_status_t cucore_stream_batch_memory_ops(cucore_stream_t *stream, const cucore_stream_memory_op_t *ops,
                                               size_t count) {
    return capi::guarded(__func__, [&] {
        core::Stream &on = capi::get(stream, "stream");
        capi::require_array(ops, count, "ops");
        if (count > kMaxBatchMemoryOps)
            core::throw_invalid_argument("argument 'count' (" + std::to_string(count) +
                                         ") is above 255, the most cuStreamBatchMemOp takes");
        std::vector<core::MemoryOp> list;
        list.reserve(count);
        for (size_t i = 0; i < count; ++i) list.push_back(memory_op(ops[i], i));
        core::stream_batch_memory_ops(on, list);
    });
}

}  // extern "C"
