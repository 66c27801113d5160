/* libcucore: TensorMap (TMA) descriptors (cuda.core's TensorMapDescriptor).
 *
 * A descriptor tells the tensor memory accelerator of an sm_90 or newer GPU how
 * a tensor in global memory is laid out and which box of it one bulk copy
 * moves; kernels take it as a 128-byte, 64-byte aligned __grid_constant__
 * parameter. The descriptor holds the buffer it describes.
 */
#ifndef CUCORE_TENSOR_MAP_H
#define CUCORE_TENSOR_MAP_H

#include "common.h"

CUCORE_EXTERN_C_BEGIN

/* Adds a reference to a descriptor. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_tensor_map_descriptor_retain(cucore_tensor_map_descriptor_t *descriptor);

/* Drops a reference (NULL is a no-op). Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_tensor_map_descriptor_release(cucore_tensor_map_descriptor_t *descriptor);

CUCORE_EXTERN_C_END

#endif /* CUCORE_TENSOR_MAP_H */
