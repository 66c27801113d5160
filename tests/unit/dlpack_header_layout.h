/* What one translation unit of dlpack_header_order.{c,cpp} sees of DLPack:
 * every size and offset of its structs, the enums' size, and the values that
 * libcucore relies on. dlpack_header_check.c compares them across include orders. */
#ifndef CUCORE_TEST_DLPACK_HEADER_LAYOUT_H
#define CUCORE_TEST_DLPACK_HEADER_LAYOUT_H

#include <stddef.h>

#define DLPACK_HEADER_LAYOUT_FIELDS 32

typedef struct {
    size_t value[DLPACK_HEADER_LAYOUT_FIELDS];
} dlpack_header_layout_t;

#define DLPACK_HEADER_LAYOUT_FILL(out)                                                  \
    do {                                                                                \
        size_t i_ = 0;                                                                  \
        size_t *v_ = (out)->value;                                                      \
        v_[i_++] = sizeof(DLPackVersion);                                               \
        v_[i_++] = offsetof(DLPackVersion, minor);                                      \
        v_[i_++] = sizeof(DLDeviceType);                                                \
        v_[i_++] = sizeof(DLDevice);                                                    \
        v_[i_++] = offsetof(DLDevice, device_id);                                       \
        v_[i_++] = sizeof(DLDataType);                                                  \
        v_[i_++] = offsetof(DLDataType, bits);                                          \
        v_[i_++] = offsetof(DLDataType, lanes);                                         \
        v_[i_++] = sizeof(DLTensor);                                                    \
        v_[i_++] = offsetof(DLTensor, device);                                          \
        v_[i_++] = offsetof(DLTensor, ndim);                                            \
        v_[i_++] = offsetof(DLTensor, dtype);                                           \
        v_[i_++] = offsetof(DLTensor, shape);                                           \
        v_[i_++] = offsetof(DLTensor, strides);                                         \
        v_[i_++] = offsetof(DLTensor, byte_offset);                                     \
        v_[i_++] = sizeof(DLManagedTensor);                                             \
        v_[i_++] = offsetof(DLManagedTensor, manager_ctx);                              \
        v_[i_++] = offsetof(DLManagedTensor, deleter);                                  \
        v_[i_++] = sizeof(struct DLManagedTensorVersioned);                                    \
        v_[i_++] = offsetof(struct DLManagedTensorVersioned, manager_ctx);                     \
        v_[i_++] = offsetof(struct DLManagedTensorVersioned, deleter);                         \
        v_[i_++] = offsetof(struct DLManagedTensorVersioned, flags);                           \
        v_[i_++] = offsetof(struct DLManagedTensorVersioned, dl_tensor);                       \
        v_[i_++] = (size_t)kDLCPU * 1000 + (size_t)kDLCUDA * 100 + (size_t)kDLCUDAHost; \
        v_[i_++] = (size_t)kDLCUDAManaged;                                              \
        v_[i_++] = (size_t)kDLInt * 100 + (size_t)kDLUInt * 10 + (size_t)kDLFloat;      \
        v_[i_++] = (size_t)kDLBfloat * 100 + (size_t)kDLComplex * 10 + (size_t)kDLBool; \
        v_[i_++] = (size_t)DLPACK_FLAG_BITMASK_READ_ONLY;                               \
        v_[i_++] = (size_t)DLPACK_FLAG_BITMASK_IS_COPIED;                               \
        v_[i_++] = (size_t)DLPACK_MAJOR_VERSION;                                        \
        v_[i_++] = sizeof(cucore_dlpack_layout_t);                                      \
        v_[i_++] = offsetof(cucore_dlpack_layout_t, byte_offset);                       \
    } while (0)

#endif
