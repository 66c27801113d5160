/* libcucore: kernels (attributes, parameters, occupancy).
 *
 * A kernel comes from an object code (cucore_object_code_get_kernel) or wraps
 * a foreign CUkernel or CUfunction. A kernel from an object code is
 * context-independent: per-device queries take the device whose primary
 * context is meant. A wrapped CUfunction belongs to one context, and the device
 * argument of the queries must be that context's device.
 */
#ifndef CUCORE_KERNEL_H
#define CUCORE_KERNEL_H

#include "common.h"

/* Kernel attributes: the driver's CU_FUNC_ATTRIBUTE_* value plus one (0 is
 * unset). Read with cucore_kernel_attribute; the ones marked settable with
 * cucore_kernel_set_attribute. */
typedef enum cucore_kernel_attribute {
    CUCORE_KERNEL_ATTRIBUTE_UNSET = 0,
    CUCORE_KERNEL_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1, /* most threads a block of this kernel can have */
    CUCORE_KERNEL_ATTRIBUTE_SHARED_SIZE_BYTES = 2,     /* static shared memory per block */
    CUCORE_KERNEL_ATTRIBUTE_CONST_SIZE_BYTES = 3,      /* constant memory */
    CUCORE_KERNEL_ATTRIBUTE_LOCAL_SIZE_BYTES = 4,      /* local memory per thread */
    CUCORE_KERNEL_ATTRIBUTE_NUM_REGS = 5,              /* registers per thread */
    CUCORE_KERNEL_ATTRIBUTE_PTX_VERSION = 6,           /* major * 10 + minor */
    CUCORE_KERNEL_ATTRIBUTE_BINARY_VERSION = 7,        /* major * 10 + minor */
    CUCORE_KERNEL_ATTRIBUTE_CACHE_MODE_CA = 8,         /* compiled with -Xptxas --dlcm=ca */
    CUCORE_KERNEL_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 9,     /* settable */
    CUCORE_KERNEL_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 10, /* settable: percent of L1, or -1 */
    CUCORE_KERNEL_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET = 11,
    CUCORE_KERNEL_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH = 12,           /* settable */
    CUCORE_KERNEL_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT = 13,          /* settable */
    CUCORE_KERNEL_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH = 14,           /* settable */
    CUCORE_KERNEL_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 15, /* settable */
    CUCORE_KERNEL_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 16, /* settable */
    CUCORE_KERNEL_ATTRIBUTE_COUNT = 17, /* one past the last */
    CUCORE_KERNEL_ATTRIBUTE_FORCE_INT32 = 0x7fffffff
} cucore_kernel_attribute_t;

CUCORE_EXTERN_C_BEGIN

/* Wraps a foreign CUkernel (+1 reference) without owning its library. When
 * the last reference goes, `on_release(user_data)` runs if given (never when
 * this call fails). Errors: INVALID_ARGUMENT (NULL), NO_DRIVER. */
CUCORE_API cucore_status_t cucore_kernel_from_handle(void *cu_kernel, cucore_release_fn on_release,
                                                     void *user_data, cucore_kernel_t **kernel);

/* Wraps a foreign CUfunction (+1 reference) of the calling thread's current
 * context (retained), like cucore_kernel_from_handle. It launches only into
 * streams of that context. Errors: INVALID_ARGUMENT (NULL), INVALID_STATE (no
 * current context), NO_DRIVER, CUDA. */
CUCORE_API cucore_status_t cucore_kernel_from_function(void *cu_function, cucore_release_fn on_release,
                                                       void *user_data, cucore_kernel_t **kernel);

/* Adds a reference. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_kernel_retain(cucore_kernel_t *kernel);

/* Drops a reference (the last one releases the kernel's hold on its object
 * code). NULL is a no-op. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_kernel_release(cucore_kernel_t *kernel);

/* The kernel's symbol name (lowered for C++). Valid while the kernel lives.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), NOT_SUPPORTED (driver
 * without cuKernelGetName), CUDA. */
CUCORE_API cucore_status_t cucore_kernel_name(const cucore_kernel_t *kernel, const char **name);

/* Reads `attribute` of the kernel on `device`.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, unknown attribute, a device
 * other than a wrapped CUfunction's), CUDA. */
CUCORE_API cucore_status_t cucore_kernel_attribute(cucore_kernel_t *kernel, cucore_device_t *device,
                                                   cucore_kernel_attribute_t attribute, int *value);

/* Sets a settable `attribute` of the kernel on `device` (e.g. allowing more
 * than 48 KiB of dynamic shared memory).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, unknown or read-only
 * attribute; a value the driver refuses is CUDA with its name), CUDA. */
CUCORE_API cucore_status_t cucore_kernel_set_attribute(cucore_kernel_t *kernel, cucore_device_t *device,
                                                       cucore_kernel_attribute_t attribute, int value);

/* The number of the kernel's parameters (cuKernelGetParamInfo).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), NOT_SUPPORTED (driver older
 * than 12.4), CUDA. */
CUCORE_API cucore_status_t cucore_kernel_param_count(cucore_kernel_t *kernel, size_t *count);

/* The offset and size in bytes of parameter `index` in the parameter buffer.
 * Errors: as cucore_kernel_param_count, INVALID_ARGUMENT (index out of range). */
CUCORE_API cucore_status_t cucore_kernel_param_info(cucore_kernel_t *kernel, size_t index,
                                                    size_t *offset, size_t *size);

/* Occupancy: how many blocks of `block_size` threads with `dynamic_shared_bytes`
 * of dynamic shared memory can be resident on one multiprocessor of `device`.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, block_size 0), CUDA. */
CUCORE_API cucore_status_t cucore_kernel_max_active_blocks_per_multiprocessor(
    cucore_kernel_t *kernel, cucore_device_t *device, uint32_t block_size, size_t dynamic_shared_bytes,
    int *blocks);

/* Occupancy: the block size that reaches the highest occupancy on `device`,
 * and the least grid size that fills the device with it, for
 * `dynamic_shared_bytes` per block; `block_size_limit` 0: no limit.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), CUDA. */
CUCORE_API cucore_status_t cucore_kernel_max_potential_block_size(cucore_kernel_t *kernel,
                                                                  cucore_device_t *device,
                                                                  size_t dynamic_shared_bytes,
                                                                  uint32_t block_size_limit,
                                                                  int *min_grid_size, int *block_size);

/* Occupancy: the most dynamic shared memory per block available when
 * `num_blocks` blocks of `block_size` threads are resident on one
 * multiprocessor of `device`.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, zero sizes), CUDA. */
CUCORE_API cucore_status_t cucore_kernel_available_dynamic_shared_memory(cucore_kernel_t *kernel,
                                                                         cucore_device_t *device,
                                                                         uint32_t num_blocks,
                                                                         uint32_t block_size,
                                                                         size_t *bytes);

/* The raw CUkernel (NULL for a wrapped CUfunction).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_kernel_handle(const cucore_kernel_t *kernel, void **cu_kernel);

/* The raw CUfunction of the kernel in `device`'s primary context (a wrapped
 * CUfunction: itself, `device` must be its context's device).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, wrong device), CUDA. */
CUCORE_API cucore_status_t cucore_kernel_function(cucore_kernel_t *kernel, cucore_device_t *device,
                                                  void **cu_function);

CUCORE_EXTERN_C_END

#endif /* CUCORE_KERNEL_H */
