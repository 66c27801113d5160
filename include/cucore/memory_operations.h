/* libcucore: host locations, batched memory operations and stream memory operations.
 *
 * - The calling thread's host NUMA node (the `Host.numa_current()` of cuda.core names the location
 *   CUCORE_LOCATION_HOST_NUMA_CURRENT; cucore_host_numa_current tells which node that is now).
 * - Batched copies (cuMemcpyBatchAsync): many copies between buffers and host or device memory in one
 *   call, each with copy options (source access order, overlap with compute, location hints).
 * - Batched strided copies (cuMemcpy3DBatchAsync) of cucore_copy_3d_t descriptions (copy_3d.h): between
 *   buffers and host memory; CUDA arrays are not offered in batches yet.
 * - Batched prefetches and discards of managed buffers (cuMemPrefetchBatchAsync,
 *   cuMemDiscardBatchAsync, cuMemDiscardAndPrefetchBatchAsync).
 * - Stream memory operations: write and wait on 32- and 64-bit values in memory, flush remote writes,
 *   memory barriers, and a batch of them in one call (cuStreamWriteValue32/64, cuStreamWaitValue32/64,
 *   cuStreamBatchMemOp).
 *
 * The batched copies, prefetches and discards need a CUDA 13.0 driver (the entry points of that
 * version): an older one answers CUCORE_ERROR_NOT_SUPPORTED naming the entry point.
 */
#ifndef CUCORE_MEMORY_OPERATIONS_H
#define CUCORE_MEMORY_OPERATIONS_H

#include "buffer.h"
#include "copy_3d.h"
#include "memory_resource.h"
#include "stream.h"

/* ---- Batched copies ------------------------------------------------------------------------ */

/* How a batched copy may read its source (the driver's CUmemcpySrcAccessOrder). The destination is
 * always written in stream order. */
typedef enum cucore_memcpy_src_access_order {
    CUCORE_MEMCPY_SRC_ACCESS_ORDER_DEFAULT = 0, /* STREAM */
    /* In stream order, after the stream's earlier work. */
    CUCORE_MEMCPY_SRC_ACCESS_ORDER_STREAM = 1,
    /* Out of stream order, every read done before the call returns (a source that dies with the
     * caller's scope; no earlier work on the stream may be using it). */
    CUCORE_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL = 2,
    /* Out of stream order, possibly after the call returns: the caller keeps the source unchanged
     * until the copy is done in stream order, and no earlier work on the stream may be using it. */
    CUCORE_MEMCPY_SRC_ACCESS_ORDER_ANY = 3,
    CUCORE_MEMCPY_SRC_ACCESS_ORDER_FORCE_INT32 = 0x7fffffff
} cucore_memcpy_src_access_order_t;

/* Whether a batched copy should overlap with compute work (the driver's CUmemcpyFlags; a hint the
 * driver may ignore). */
typedef enum cucore_memcpy_overlap_mode {
    CUCORE_MEMCPY_OVERLAP_MODE_DEFAULT = 0,
    CUCORE_MEMCPY_OVERLAP_MODE_PREFER_OVERLAP_WITH_COMPUTE = 1,
    CUCORE_MEMCPY_OVERLAP_MODE_FORCE_INT32 = 0x7fffffff
} cucore_memcpy_overlap_mode_t;

/* The options of copies in a batch (the driver's CUmemcpyAttributes). */
typedef struct cucore_copy_options {
    uint32_t struct_size;
    cucore_memcpy_src_access_order_t src_access_order; /* 0: STREAM */
    cucore_memcpy_overlap_mode_t overlap_mode;         /* 0: DEFAULT */
    /* Where the source and destination are expected to be (NONE: no hint). The driver reads them for
     * managed memory on devices with concurrent managed access and for pageable memory on devices
     * that access it; it ignores them elsewhere. They neither prefetch nor advise. */
    cucore_location_t src_location_hint;
    cucore_location_t dst_location_hint;
} cucore_copy_options_t;

#define CUCORE_COPY_OPTIONS_INIT \
    {(uint32_t)sizeof(cucore_copy_options_t), CUCORE_MEMCPY_SRC_ACCESS_ORDER_DEFAULT, \
     CUCORE_MEMCPY_OVERLAP_MODE_DEFAULT, {CUCORE_LOCATION_NONE, 0}, {CUCORE_LOCATION_NONE, 0}}

/* One copy of a batch: `size` bytes from the source to the destination. Each side is a buffer (then
 * its pointer must be NULL) at byte `offset`, checked against the buffer's size, or memory at
 * `pointer` (then its buffer must be NULL; the offset is added): host memory (pinned or pageable) or
 * a device address the caller keeps alive and vouches for. `options_index` picks the options of the
 * copy among those given to cucore_copy_batch (0 with none given). The struct has a fixed layout. */
typedef struct cucore_copy_batch_item {
    cucore_buffer_t *src;
    const void *src_pointer;
    uint64_t src_offset;
    cucore_buffer_t *dst;
    void *dst_pointer;
    uint64_t dst_offset;
    uint64_t size;
    uint32_t options_index;
    uint32_t reserved; /* must be 0 */
} cucore_copy_batch_item_t;

/* ---- Stream memory operations -------------------------------------------------------------- */

/* What a wait on a value waits for (`flags` of the waits: one condition, optionally | FLUSH). */
#define CUCORE_STREAM_WAIT_VALUE_GEQ 0x0u /* (int32_t/int64_t)(*address - value) >= 0: a cyclic >= */
#define CUCORE_STREAM_WAIT_VALUE_EQ 0x1u  /* *address == value */
#define CUCORE_STREAM_WAIT_VALUE_AND 0x2u /* (*address & value) != 0 */
#define CUCORE_STREAM_WAIT_VALUE_NOR 0x3u /* ~(*address | value) != 0 (device attribute
                                             CAN_USE_STREAM_WAIT_VALUE_NOR) */
/* Then flush outstanding remote writes (device attribute CAN_FLUSH_REMOTE_WRITES). */
#define CUCORE_STREAM_WAIT_VALUE_FLUSH 0x40000000u

/* `flags` of the writes. */
#define CUCORE_STREAM_WRITE_VALUE_DEFAULT 0x0u /* a memory fence before the write (stream-scoped) */
/* The write may be reordered with earlier writes. The driver's v2 memory-operation API (the one of
 * CUDA 11.7 and later, which this library calls) may refuse it (CUDA INVALID_VALUE). */
#define CUCORE_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER 0x1u

/* The scope of a memory barrier (the driver's CUstreamMemoryBarrier_flags). */
typedef enum cucore_memory_barrier_scope {
    CUCORE_MEMORY_BARRIER_SCOPE_SYSTEM = 0, /* system-wide (default) */
    CUCORE_MEMORY_BARRIER_SCOPE_DEVICE = 1, /* limited to the GPU */
    CUCORE_MEMORY_BARRIER_SCOPE_FORCE_INT32 = 0x7fffffff
} cucore_memory_barrier_scope_t;

/* The operations of cucore_stream_batch_memory_ops (values as the driver's CUstreamBatchMemOpType). */
typedef enum cucore_stream_memory_op_type {
    CUCORE_STREAM_MEMORY_OP_UNSET = 0,
    CUCORE_STREAM_MEMORY_OP_WAIT_VALUE_32 = 1,
    CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_32 = 2,
    CUCORE_STREAM_MEMORY_OP_FLUSH_REMOTE_WRITES = 3,
    CUCORE_STREAM_MEMORY_OP_WAIT_VALUE_64 = 4,
    CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_64 = 5,
    CUCORE_STREAM_MEMORY_OP_BARRIER = 6,
    CUCORE_STREAM_MEMORY_OP_TYPE_FORCE_INT32 = 0x7fffffff
} cucore_stream_memory_op_type_t;

/* One operation of a batch. Waits and writes name their memory as `buffer` at byte `offset` (checked
 * against the buffer) or, with `buffer` NULL, the device address `offset` (memory the caller keeps
 * alive: device memory, or mapped pinned host memory's device address). `flags`: the waits'
 * CUCORE_STREAM_WAIT_VALUE_* condition (| FLUSH), the writes' CUCORE_STREAM_WRITE_VALUE_*, a
 * barrier's cucore_memory_barrier_scope_t, 0 for a flush. `value` must fit in 32 bits for the 32-bit
 * operations. The struct has a fixed layout. */
typedef struct cucore_stream_memory_op {
    cucore_stream_memory_op_type_t type;
    uint32_t flags;
    cucore_buffer_t *buffer;
    uint64_t offset;
    uint64_t value;
} cucore_stream_memory_op_t;

CUCORE_EXTERN_C_BEGIN

/* The host NUMA node of the CPU the calling thread runs on now (Linux getcpu; no libnuma): the node
 * CUCORE_LOCATION_HOST_NUMA_CURRENT names at this moment (the thread may move unless pinned). A
 * machine without NUMA answers 0.
 * Errors: INVALID_ARGUMENT (NULL), NOT_SUPPORTED (the system refuses getcpu; the message says why). */
CUCORE_API cucore_status_t cucore_host_numa_current(int *numa_id);

/* Copies `count` items in one cuMemcpyBatchAsync ordered on `stream`: the batch as a whole runs in
 * stream order, its copies in no particular order (no copy may depend on another, and destinations
 * must not overlap). `options` is an array of `options_count` pointers to options (an element NULL:
 * the defaults); each item's options_index picks one (with options_count 0 every copy has the
 * defaults). Copies of size 0 are skipped. Nothing is retained: like every copy, the caller keeps
 * the buffers (and memory) alive until the copies are done. The copies cannot be captured into a
 * graph (the driver has no node for them). The legacy default stream is refused, as by the driver.
 * Errors: INVALID_HANDLE (stream, items[i].src/dst), INVALID_ARGUMENT (NULL stream, items NULL with
 * count > 0, a side with both or neither of buffer and pointer, reserved not 0, an options_index
 * out of range, bad options (struct_size, unknown order or overlap mode, bad location hint), a range
 * outside its buffer, the legacy default stream), INVALID_STATE (a closed buffer, a capturing
 * stream), NOT_SUPPORTED (driver before CUDA 13.0), CUDA. */
CUCORE_API cucore_status_t cucore_copy_batch(cucore_stream_t *stream, const cucore_copy_batch_item_t *items,
                                             size_t count, const cucore_copy_options_t *const *options,
                                             size_t options_count);

/* Copies `count` strided copies in one cuMemcpy3DBatchAsync ordered on `stream`, each described as for
 * cucore_copy_3d (copies[i]: a versioned cucore_copy_3d_t; its sides checked the same way); the batch runs
 * in stream order, its copies in no particular order. `options` (NULL: the defaults) applies to every copy
 * (source access order, overlap mode, location hints). Copies with a zero width are skipped. As
 * cucore_copy_batch: nothing retained, no capture, not the legacy default stream, CUDA 13.0.
 * Errors: INVALID_HANDLE (stream, copies[i] buffers), INVALID_ARGUMENT (copies NULL with count > 0, a NULL
 * element, bad struct_size or reserved fields, a side as cucore_copy_3d refuses it, bad options, the legacy
 * default stream), INVALID_STATE (closed buffer, capturing stream), NOT_SUPPORTED (before CUDA 13.0), CUDA. */
CUCORE_API cucore_status_t cucore_copy_3d_batch(cucore_stream_t *stream, const cucore_copy_3d_t *const *copies,
                                                size_t count, const cucore_copy_options_t *options);

/* Prefetches `count` managed buffers (cuMemPrefetchBatchAsync) ordered on `stream`: to
 * `locations[0]` when location_count is 1, else buffer i to locations[i] (location_count == count).
 * Zero-size buffers are skipped. The driver wants every device to have concurrent managed access
 * and refuses the legacy default stream (so does this function, for all three batched calls).
 * Errors: INVALID_HANDLE (stream, buffers[i]), INVALID_ARGUMENT (NULL arrays with count > 0, a
 * buffer not managed, location_count neither 1 nor count, a bad location, the legacy default
 * stream), INVALID_STATE (closed),
 * NOT_SUPPORTED (driver before CUDA 13.0), CUDA. */
CUCORE_API cucore_status_t cucore_prefetch_batch(cucore_stream_t *stream, cucore_buffer_t *const *buffers,
                                                 size_t count, const cucore_location_t *locations,
                                                 size_t location_count);

/* Discards the contents of `count` managed buffers (cuMemDiscardBatchAsync) ordered on `stream`:
 * reading them before writing gives unspecified values. Zero-size buffers are skipped.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL array with count > 0, not managed, the legacy default stream), INVALID_STATE,
 * NOT_SUPPORTED (driver before CUDA 13.0), CUDA. */
CUCORE_API cucore_status_t cucore_discard_batch(cucore_stream_t *stream, cucore_buffer_t *const *buffers,
                                                size_t count);

/* Discards the contents of `count` managed buffers and makes their pages resident at the locations
 * (cuMemDiscardAndPrefetchBatchAsync), ordered on `stream`; locations as cucore_prefetch_batch.
 * Errors: as cucore_prefetch_batch. */
CUCORE_API cucore_status_t cucore_discard_prefetch_batch(cucore_stream_t *stream, cucore_buffer_t *const *buffers,
                                                         size_t count, const cucore_location_t *locations,
                                                         size_t location_count);

/* Writes the 32-bit `value` at byte `offset` of `buffer` (or, with `buffer` NULL, at the device
 * address `offset`) in `stream`'s order (cuStreamWriteValue32); the address must be 4-byte aligned.
 * `flags`: CUCORE_STREAM_WRITE_VALUE_*. The memory must not be managed (the driver refuses it), nor
 * come from a device memory pool (driver 580 refuses it with CUDA_ERROR_INVALID_VALUE, which the message
 * then explains): use pinned host memory or cuMemAlloc memory.
 * While the stream is captured, the graph keeps the buffer.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (unknown flags, a range outside the buffer, misaligned or
 * 0 address, managed memory), INVALID_STATE (closed), CUDA (pool memory, among others). */
CUCORE_API cucore_status_t cucore_stream_write_value_32(cucore_stream_t *stream, cucore_buffer_t *buffer,
                                                        uint64_t offset, uint32_t value, uint32_t flags);

/* As cucore_stream_write_value_32 with a 64-bit value, 8-byte aligned (cuStreamWriteValue64).
 * Errors: as cucore_stream_write_value_32, and NOT_SUPPORTED (device attribute
 * CAN_USE_64_BIT_STREAM_MEM_OPS is 0). */
CUCORE_API cucore_status_t cucore_stream_write_value_64(cucore_stream_t *stream, cucore_buffer_t *buffer,
                                                        uint64_t offset, uint64_t value, uint32_t flags);

/* Makes `stream`'s later work wait until the 32-bit value at byte `offset` of `buffer` (or at the
 * device address `offset`) meets the condition of `flags` against `value`
 * (CUCORE_STREAM_WAIT_VALUE_GEQ, EQ, AND or NOR, optionally | FLUSH) (cuStreamWaitValue32). The
 * ordering it makes is invisible to CUDA: whatever writes the value must not itself wait behind
 * this stream, or both hang. Alignment and memory as cucore_stream_write_value_32.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (unknown condition or flag bits, range, alignment,
 * managed memory), INVALID_STATE (closed), NOT_SUPPORTED (NOR without the device attribute
 * CAN_USE_STREAM_WAIT_VALUE_NOR, FLUSH without CAN_FLUSH_REMOTE_WRITES), CUDA. */
CUCORE_API cucore_status_t cucore_stream_wait_value_32(cucore_stream_t *stream, cucore_buffer_t *buffer,
                                                       uint64_t offset, uint32_t value, uint32_t flags);

/* As cucore_stream_wait_value_32 on a 64-bit value, 8-byte aligned (cuStreamWaitValue64).
 * Errors: as cucore_stream_wait_value_32, and NOT_SUPPORTED (CAN_USE_64_BIT_STREAM_MEM_OPS is 0). */
CUCORE_API cucore_status_t cucore_stream_wait_value_64(cucore_stream_t *stream, cucore_buffer_t *buffer,
                                                       uint64_t offset, uint64_t value, uint32_t flags);

/* Flushes outstanding remote (e.g. GPUDirect RDMA) writes before `stream`'s later work
 * (CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES).
 * Errors: INVALID_HANDLE, NOT_SUPPORTED (device attribute CAN_FLUSH_REMOTE_WRITES is 0), CUDA. */
CUCORE_API cucore_status_t cucore_stream_flush_remote_writes(cucore_stream_t *stream);

/* A memory barrier of `scope` in `stream`'s order (CU_STREAM_MEM_OP_BARRIER).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (unknown scope), CUDA. */
CUCORE_API cucore_status_t cucore_stream_memory_barrier(cucore_stream_t *stream,
                                                        cucore_memory_barrier_scope_t scope);

/* Enqueues `count` (at most 255, the driver's limit) memory operations in one call, in array order
 * (cuStreamBatchMemOp); each as its own function describes. count 0 does nothing.
 * Errors: INVALID_HANDLE (stream, ops[i].buffer), INVALID_ARGUMENT (ops NULL with count > 0, count
 * above 255, an unknown type, flags or scope, a 32-bit value that does not fit, range, alignment,
 * managed memory; the message names ops[i]), INVALID_STATE (closed), NOT_SUPPORTED (as the single
 * operations), CUDA. */
CUCORE_API cucore_status_t cucore_stream_batch_memory_ops(cucore_stream_t *stream,
                                                          const cucore_stream_memory_op_t *ops, size_t count);

CUCORE_EXTERN_C_END

#endif /* CUCORE_MEMORY_OPERATIONS_H */
