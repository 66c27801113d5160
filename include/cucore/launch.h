/* libcucore: launch configurations and kernel launches.
 *
 * Grid, block and cluster dimensions follow cuda.core's LaunchConfig: a zero
 * dimension counts as 1, and when a cluster is given the grid counts clusters
 * (the launch has grid * cluster blocks in each dimension).
 */
#ifndef CUCORE_LAUNCH_H
#define CUCORE_LAUNCH_H

#include "common.h"

/* Flags of cucore_launch_config_t.flags. */
typedef enum cucore_launch_flag {
    CUCORE_LAUNCH_DEFAULT = 0,
    /* A cooperative launch (grid-wide synchronisation); the whole grid must be
     * resident at once, which is checked before the launch. */
    CUCORE_LAUNCH_COOPERATIVE = 1,
    /* Programmatic stream serialisation (programmatic dependent launch). */
    CUCORE_LAUNCH_PROGRAMMATIC_STREAM_SERIALIZATION = 2,
    /* The launch's priority is `priority`, not the stream's. */
    CUCORE_LAUNCH_PRIORITY = 4,
    CUCORE_LAUNCH_FLAG_FORCE_INT32 = 0x7fffffff
} cucore_launch_flag_t;

typedef struct cucore_launch_config {
    uint32_t struct_size;
    uint32_t grid[3];              /* blocks (clusters when cluster is set); 0 counts as 1 */
    uint32_t block[3];             /* threads per block; 0 counts as 1 */
    uint32_t cluster[3];           /* blocks per cluster; all 0: no cluster (needs compute capability 9.0) */
    uint32_t shared_memory_bytes;  /* dynamic shared memory per block */
    uint32_t flags;                /* cucore_launch_flag_t bits */
    int32_t priority;              /* with CUCORE_LAUNCH_PRIORITY */
} cucore_launch_config_t;

#define CUCORE_LAUNCH_CONFIG_INIT \
    {(uint32_t)sizeof(cucore_launch_config_t), {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, 0, 0, 0}

CUCORE_EXTERN_C_BEGIN

/* Checks `config` for `kernel` on `device` without launching, with the
 * specific message a launch would fail with: a block larger than the kernel's
 * max threads per block or the device's limits, a grid beyond the device's
 * limits, dynamic shared memory above the kernel's allowance, a cluster on a
 * device below compute capability 9.0 or larger than the kernel allows, a
 * cooperative grid larger than can be resident at once.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL config, bad struct_size,
 * unknown flags, and each violation above), CUDA. */
CUCORE_API cucore_status_t cucore_launch_config_validate(const cucore_launch_config_t *config,
                                                         cucore_kernel_t *kernel, cucore_device_t *device);

/* Launches `kernel` into `stream` with `config` (NULL: one thread) and
 * `arg_count` arguments: `args[i]` points at the bytes of argument i (a
 * pointer argument: at the pointer; a struct passed by value: at the struct)
 * and `arg_sizes[i]` is its size in bytes. Where the driver reports parameter
 * info, the count and each size must match the kernel's parameters. The
 * arguments are copied by the driver before this returns. The configuration is
 * validated as cucore_launch_config_validate does (checks that need a driver
 * query run only for cooperative and cluster launches and use cached kernel
 * attributes otherwise).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL args or sizes with a non-zero
 * count, a NULL argument pointer, count or size mismatch naming the argument,
 * config violations, a wrapped CUfunction launched into another context's
 * stream), CUDA (the driver refused the launch). */
CUCORE_API cucore_status_t cucore_launch(cucore_stream_t *stream, const cucore_launch_config_t *config,
                                         cucore_kernel_t *kernel, const void *const *args,
                                         const size_t *arg_sizes, size_t arg_count);

/* Everything one launch needs, in one block of memory (cucore_launch_block):
 * a binding that cannot pass many arguments cheaply (Python's ctypes pays per
 * argument) keeps one block per kernel and argument layout, with the argument
 * bytes right after it, writes the stream, configuration, kernel and argument
 * values into it and passes one pointer. The fields mean what the parameters
 * of cucore_launch of the same names mean. struct_size first, as in options
 * structs (CUCORE_LAUNCH_BLOCK_INIT). */
typedef struct cucore_launch_block {
    uint32_t struct_size;
    uint32_t arg_count;                   /* number of kernel arguments */
    const void *const *args;              /* arg_count pointers to the argument bytes */
    const size_t *arg_sizes;              /* arg_count sizes in bytes */
    cucore_stream_t *stream;              /* borrowed: the stream to launch into */
    const cucore_launch_config_t *config; /* NULL: one thread */
    cucore_kernel_t *kernel;              /* borrowed: the kernel */
} cucore_launch_block_t;

#define CUCORE_LAUNCH_BLOCK_INIT {(uint32_t)sizeof(cucore_launch_block_t), 0, NULL, NULL, NULL, NULL, NULL}

/* Launches as cucore_launch(block->stream, block->config, block->kernel,
 * block->args, block->arg_sizes, block->arg_count) does, with the same checks
 * and the same error messages (naming the fields as cucore_launch names its
 * parameters); the block is only read, during the call, and the handles in it
 * are borrowed.
 * Errors: INVALID_ARGUMENT (NULL block, bad struct_size, and as
 * cucore_launch), INVALID_HANDLE, NOT_SUPPORTED (a struct_size larger than
 * this library's with the unknown tail not zero), CUDA. */
CUCORE_API cucore_status_t cucore_launch_block(const cucore_launch_block_t *block);

/* Occupancy for clusters: the largest cluster size `config` (its grid, block,
 * shared memory; its cluster is ignored) can use for `kernel` on `device`.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), NOT_SUPPORTED (compute
 * capability below 9.0), CUDA. */
CUCORE_API cucore_status_t cucore_launch_max_potential_cluster_size(const cucore_launch_config_t *config,
                                                                    cucore_kernel_t *kernel,
                                                                    cucore_device_t *device,
                                                                    int *cluster_size);

/* Occupancy for clusters: how many clusters of `config`'s cluster dimensions
 * can be resident at once on `device`.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, no cluster in config),
 * NOT_SUPPORTED (compute capability below 9.0), CUDA. */
CUCORE_API cucore_status_t cucore_launch_max_active_clusters(const cucore_launch_config_t *config,
                                                             cucore_kernel_t *kernel,
                                                             cucore_device_t *device, int *clusters);

CUCORE_EXTERN_C_END

#endif /* CUCORE_LAUNCH_H */
