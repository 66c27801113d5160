/* libcucore: collective communication between GPUs through NCCL.
 *
 * A communicator is one rank of a group of GPUs that reduce, gather and
 * exchange buffers together (NCCL's ncclComm_t). NCCL is loaded at run time on
 * first use, as the driver is: the path in CUCORE_NCCL_PATH if set, otherwise
 * libnccl.so.2 through the system loader. Where it is missing, every call here
 * returns NOT_SUPPORTED naming what was tried; the rest of the library works.
 *
 * Two ways to make communicators:
 *  - one process driving several local GPUs: cucore_communicator_create_all;
 *  - one process per GPU: one process makes a cucore_communicator_id_t, passes
 *    its bytes to the others (a pipe, a file, multiprocessing), and each calls
 *    cucore_communicator_create with its rank.
 *
 * Operations are enqueued on a stream of the communicator's device and run in
 * that stream's order. Each keeps the communicator, its buffers and its stream
 * alive until the stream has passed it, so handles may be released right after
 * the call. Inside a group (cucore_communicator_group_start/end, which NCCL
 * needs when one thread drives several ranks) operations are handed to NCCL at
 * the outermost group end, and what they use is held from the call until then
 * and then until their streams pass them. A stream captured by a cucore graph
 * builder records the operation into its graph, which holds what it uses.
 *
 * Counts are in elements of the data type. A count of 0 means "all of it": the
 * count follows from the buffers, whose sizes must then match exactly (for
 * example, all-reduce: send and receive buffers of one size, a multiple of the
 * element size). An explicit count only needs buffers at least that large.
 * Buffers must be device memory (or managed memory) of the communicator's
 * device; the same buffer may be both send and receive (in place).
 *
 * NVLink multicast (NVLS) is never requested by libcucore.
 */
#ifndef CUCORE_COMMUNICATOR_H
#define CUCORE_COMMUNICATOR_H

#include "common.h"

/* The bytes that name one communicator clique across processes (NCCL's
 * ncclUniqueId): plain data, copied between processes as is. */
#define CUCORE_COMMUNICATOR_ID_BYTES 128
typedef struct cucore_communicator_id {
    char internal[CUCORE_COMMUNICATOR_ID_BYTES];
} cucore_communicator_id_t;

/* Element types of collective operations (NCCL's ncclDataType_t; 0 names none). */
typedef enum cucore_data_type {
    CUCORE_DATA_TYPE_UNSET = 0,
    CUCORE_DATA_TYPE_INT8 = 1,
    CUCORE_DATA_TYPE_UINT8 = 2,
    CUCORE_DATA_TYPE_INT32 = 3,
    CUCORE_DATA_TYPE_UINT32 = 4,
    CUCORE_DATA_TYPE_INT64 = 5,
    CUCORE_DATA_TYPE_UINT64 = 6,
    CUCORE_DATA_TYPE_FLOAT16 = 7,
    CUCORE_DATA_TYPE_FLOAT32 = 8,
    CUCORE_DATA_TYPE_FLOAT64 = 9,
    CUCORE_DATA_TYPE_BFLOAT16 = 10,
    /* 8-bit floats need NCCL 2.24 or later (NOT_SUPPORTED before). */
    CUCORE_DATA_TYPE_FLOAT8_E4M3 = 11,
    CUCORE_DATA_TYPE_FLOAT8_E5M2 = 12,
    CUCORE_DATA_TYPE_FORCE_INT32 = 0x7fffffff
} cucore_data_type_t;

/* Reductions (NCCL's ncclRedOp_t). The default (0) is a sum. AVG divides the
 * sum by the number of ranks (integer types: truncated). */
typedef enum cucore_reduce_op {
    CUCORE_REDUCE_SUM = 0,
    CUCORE_REDUCE_PROD = 1,
    CUCORE_REDUCE_MAX = 2,
    CUCORE_REDUCE_MIN = 3,
    CUCORE_REDUCE_AVG = 4,
    CUCORE_REDUCE_OP_FORCE_INT32 = 0x7fffffff
} cucore_reduce_op_t;

CUCORE_EXTERN_C_BEGIN

/* The version of the NCCL that libcucore loaded (NCCL_VERSION_CODE: major *
 * 10000 + minor * 100 + patch, e.g. 22809 for 2.28.9); loads it if needed.
 * Errors: INVALID_ARGUMENT (NULL), NOT_SUPPORTED (NCCL missing). */
CUCORE_API cucore_status_t cucore_communicator_library_version(int *version);

/* Size in bytes of one element of `type` (1, 2, 4 or 8); needs no NCCL.
 * Errors: INVALID_ARGUMENT (NULL, unknown or unset type). */
CUCORE_API cucore_status_t cucore_data_type_size(cucore_data_type_t type, uint32_t *size);

/* Makes a new id (ncclGetUniqueId) for one clique of ranks; pass its bytes to
 * every process that joins. It opens a listening socket for the ranks to meet.
 * Errors: INVALID_ARGUMENT (NULL), NOT_SUPPORTED (NCCL missing), CUDA (an NCCL
 * failure; the message names NCCL's error). */
CUCORE_API cucore_status_t cucore_communicator_id_create(cucore_communicator_id_t *id);

/* Joins the clique `id` as rank `rank` of `rank_count` on `device`
 * (ncclCommInitRank in the device's primary context) and returns the
 * communicator (+1 reference; it holds the device's primary context). Blocks
 * until all ranks have joined: call it from every rank's process (or thread,
 * or inside a group when one thread creates several).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, rank_count < 1, rank outside
 * [0, rank_count)), NOT_SUPPORTED (NCCL missing), OUT_OF_MEMORY, CUDA (NCCL
 * failed: the message names NCCL's error and its last error text). */
CUCORE_API cucore_status_t cucore_communicator_create(cucore_device_t *device, const cucore_communicator_id_t *id,
                                                      int rank_count, int rank,
                                                      cucore_communicator_t **communicator);

/* One process driving several GPUs: makes `count` communicators of one clique,
 * rank i on devices[i] (ncclCommInitAll), into communicators[0..count) (+1
 * reference each). All or nothing: on failure every element is NULL.
 * Errors: INVALID_HANDLE (a device), INVALID_ARGUMENT (NULL arrays, count 0,
 * a device named twice), NOT_SUPPORTED, OUT_OF_MEMORY, CUDA. */
CUCORE_API cucore_status_t cucore_communicator_create_all(cucore_device_t *const *devices, size_t count,
                                                          cucore_communicator_t **communicators);

/* Adds a reference. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_communicator_retain(cucore_communicator_t *communicator);

/* Drops a reference. The last one, once no enqueued operation holds the
 * communicator any more, destroys it (ncclCommDestroy, which finishes its
 * pending work). NULL is a no-op. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_communicator_release(cucore_communicator_t *communicator);

/* This communicator's rank (ncclCommUserRank). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_communicator_rank(const cucore_communicator_t *communicator, int *rank);

/* The number of ranks in its clique (ncclCommCount). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_communicator_rank_count(const cucore_communicator_t *communicator, int *count);

/* The device the communicator runs on (+1 reference). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_communicator_device(const cucore_communicator_t *communicator,
                                                      cucore_device_t **device);

/* The ncclComm_t, for calling NCCL directly (the communicator still owns it).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_communicator_handle(const cucore_communicator_t *communicator, void **nccl_comm);

/* Whether NCCL reported an asynchronous failure on the communicator
 * (ncclCommGetAsyncError): SUCCESS if none, CUDA naming NCCL's error if so.
 * Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_communicator_check(cucore_communicator_t *communicator);

/* Sums (or otherwise reduces) `count` elements of every rank's `send` into
 * every rank's `recv` (ncclAllReduce). `send` == `recv` works in place.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (unset type or op; with count 0,
 * buffers of different sizes or a size not a multiple of the element size;
 * otherwise a buffer smaller than count elements; a buffer or stream of
 * another device), INVALID_STATE (the stream is captured outside a cucore
 * graph builder), NOT_SUPPORTED, CUDA. (The same for every operation below.) */
CUCORE_API cucore_status_t cucore_communicator_all_reduce(cucore_communicator_t *communicator,
                                                          cucore_buffer_t *send, cucore_buffer_t *recv,
                                                          uint64_t count, cucore_data_type_t type,
                                                          cucore_reduce_op_t op, cucore_stream_t *stream);

/* Concatenates every rank's `send_count` elements into every rank's `recv`, in
 * rank order (ncclAllGather); `recv` holds rank_count * send_count elements.
 * Count 0: send_count is `send`'s size, and `recv` must be rank_count times it. */
CUCORE_API cucore_status_t cucore_communicator_all_gather(cucore_communicator_t *communicator,
                                                          cucore_buffer_t *send, cucore_buffer_t *recv,
                                                          uint64_t send_count, cucore_data_type_t type,
                                                          cucore_stream_t *stream);

/* Reduces every rank's `send` (rank_count * recv_count elements) and leaves
 * block r of the result in rank r's `recv` (ncclReduceScatter). Count 0:
 * recv_count is `recv`'s size, and `send` must be rank_count times it. */
CUCORE_API cucore_status_t cucore_communicator_reduce_scatter(cucore_communicator_t *communicator,
                                                              cucore_buffer_t *send, cucore_buffer_t *recv,
                                                              uint64_t recv_count, cucore_data_type_t type,
                                                              cucore_reduce_op_t op, cucore_stream_t *stream);

/* Copies rank `root`'s `send` into every rank's `recv` (ncclBroadcast). Only
 * the root reads `send`; other ranks may pass NULL. Count 0: `recv`'s size
 * (and on the root, `send`'s, which must match). Also INVALID_ARGUMENT: root
 * outside [0, rank_count). */
CUCORE_API cucore_status_t cucore_communicator_broadcast(cucore_communicator_t *communicator,
                                                         cucore_buffer_t *send, cucore_buffer_t *recv,
                                                         uint64_t count, cucore_data_type_t type, int root,
                                                         cucore_stream_t *stream);

/* Reduces every rank's `send` into rank `root`'s `recv` (ncclReduce). Only the
 * root writes `recv`; other ranks may pass NULL. Count 0: `send`'s size (and
 * on the root, `recv`'s, which must match). */
CUCORE_API cucore_status_t cucore_communicator_reduce(cucore_communicator_t *communicator,
                                                      cucore_buffer_t *send, cucore_buffer_t *recv,
                                                      uint64_t count, cucore_data_type_t type,
                                                      cucore_reduce_op_t op, int root, cucore_stream_t *stream);

/* Sends `count` elements of `buffer` to rank `peer`, which receives them with
 * cucore_communicator_recv (ncclSend). Count 0: the whole buffer. A send and
 * its matching receive on one thread need a group around them.
 * Also INVALID_ARGUMENT: peer outside [0, rank_count). */
CUCORE_API cucore_status_t cucore_communicator_send(cucore_communicator_t *communicator, cucore_buffer_t *buffer,
                                                    uint64_t count, cucore_data_type_t type, int peer,
                                                    cucore_stream_t *stream);

/* Receives `count` elements from rank `peer` into `buffer` (ncclRecv). */
CUCORE_API cucore_status_t cucore_communicator_recv(cucore_communicator_t *communicator, cucore_buffer_t *buffer,
                                                    uint64_t count, cucore_data_type_t type, int peer,
                                                    cucore_stream_t *stream);

/* Opens a group on the calling thread (ncclGroupStart; groups nest): the
 * operations and creations that follow are handed to NCCL together at the
 * outermost cucore_communicator_group_end. One thread driving several ranks
 * must group their operations, or NCCL may wait forever.
 * Errors: NOT_SUPPORTED (NCCL missing), CUDA. */
CUCORE_API cucore_status_t cucore_communicator_group_start(void);

/* Closes the innermost group on the calling thread (ncclGroupEnd). At the
 * outermost end the grouped operations start, and what they use is held until
 * their streams pass them, also when NCCL fails (the message names its error).
 * Errors: INVALID_STATE (no group open on this thread), CUDA. */
CUCORE_API cucore_status_t cucore_communicator_group_end(void);

/* How many groups are open on the calling thread (0: none). Never fails. */
CUCORE_API int cucore_communicator_group_depth(void);

CUCORE_EXTERN_C_END

#endif /* CUCORE_COMMUNICATOR_H */
