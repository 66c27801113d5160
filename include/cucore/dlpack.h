/* libcucore: DLPack interchange of buffers.
 *
 * DLPack (https://dmlc.github.io/dlpack/) is the tensor-exchange ABI of the
 * array libraries (PyTorch, CuPy, JAX, NumPy). A buffer is exported as a
 * DLManagedTensorVersioned (or the legacy DLManagedTensor) that keeps the
 * buffer's memory alive until the consumer calls its deleter; a tensor is
 * imported as a buffer that calls the tensor's deleter when its memory is
 * released.
 *
 * The DLPack declarations below are DLPack 1.1's (dlpack.h, Apache-2.0), under
 * dlpack.h's own include guard (DLPACK_DLPACK_H_): whichever of the two headers
 * a translation unit includes first defines them and the other steps aside, so
 * <cucore.h> and <dlpack/dlpack.h> (or a framework's copy of it, such as
 * PyTorch's <ATen/dlpack.h>) may be included in either order. A DLPack header
 * newer than 1.1 that comes first keeps its additions; one that comes second
 * is skipped, so include it first where its additions are needed. A dlpack.h
 * older than 1.0 (no DLManagedTensorVersioned) is refused with an #error.
 * Upstream declares DLManagedTensorVersioned without a typedef (the typedef
 * here is this header's convenience), so the functions below name it
 * `struct DLManagedTensorVersioned`, which compiles whichever header came first.
 */
#ifndef CUCORE_DLPACK_H
#define CUCORE_DLPACK_H

#include "buffer.h"

#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_

#ifndef DLPACK_EXTERN_C
#ifdef __cplusplus
#define DLPACK_EXTERN_C extern "C"
#else
#define DLPACK_EXTERN_C
#endif
#endif

#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 1

#ifndef DLPACK_DLL
#ifdef _WIN32
#ifdef DLPACK_EXPORTS
#define DLPACK_DLL __declspec(dllexport)
#else
#define DLPACK_DLL __declspec(dllimport)
#endif
#else
#define DLPACK_DLL
#endif
#endif

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The DLPack version of a tensor: a major version other than 1 means another layout. */
typedef struct {
    uint32_t major;
    uint32_t minor;
} DLPackVersion;

#ifdef __cplusplus
/* Device types (libcucore exports and imports kDLCPU, kDLCUDA, kDLCUDAHost and kDLCUDAManaged). */
typedef enum : int32_t {
#else
/* Device types (libcucore exports and imports kDLCPU, kDLCUDA, kDLCUDAHost and kDLCUDAManaged). */
typedef enum {
#endif
    kDLCPU = 1,
    kDLCUDA = 2,
    kDLCUDAHost = 3,
    kDLOpenCL = 4,
    kDLVulkan = 7,
    kDLMetal = 8,
    kDLVPI = 9,
    kDLROCM = 10,
    kDLROCMHost = 11,
    kDLExtDev = 12,
    kDLCUDAManaged = 13,
    kDLOneAPI = 14,
    kDLWebGPU = 15,
    kDLHexagon = 16,
    kDLMAIA = 17,
    kDLTrn = 18
} DLDeviceType;

typedef struct {
    DLDeviceType device_type;
    int32_t device_id;
} DLDevice;

/* Type codes of DLDataType.code. */
typedef enum {
    kDLInt = 0U,
    kDLUInt = 1U,
    kDLFloat = 2U,
    kDLOpaqueHandle = 3U,
    kDLBfloat = 4U,
    kDLComplex = 5U,
    kDLBool = 6U,
    kDLFloat8_e3m4 = 7U,
    kDLFloat8_e4m3 = 8U,
    kDLFloat8_e4m3b11fnuz = 9U,
    kDLFloat8_e4m3fn = 10U,
    kDLFloat8_e4m3fnuz = 11U,
    kDLFloat8_e5m2 = 12U,
    kDLFloat8_e5m2fnuz = 13U,
    kDLFloat8_e8m0fnu = 14U,
    kDLFloat6_e2m3fn = 15U,
    kDLFloat6_e3m2fn = 16U,
    kDLFloat4_e2m1fn = 17U
} DLDataTypeCode;

typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} DLDataType;

typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides; /* in elements; NULL: compact row-major */
    uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL)

typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;

#ifdef __cplusplus
} /* extern "C" */
#endif
#endif /* DLPACK_DLPACK_H_ */

#if !defined(DLPACK_MAJOR_VERSION) || DLPACK_MAJOR_VERSION < 1
#error "libcucore needs DLPack 1.x (DLManagedTensorVersioned): an older dlpack.h was included before <cucore.h>"
#endif

/* The most dimensions libcucore exports or imports. */
#define CUCORE_DLPACK_MAX_NDIM 32

/* How to present a buffer as a tensor. */
typedef struct cucore_dlpack_layout {
    uint32_t struct_size;
    uint32_t read_only;     /* 1: set DLPACK_FLAG_BITMASK_READ_ONLY (versioned only) */
    DLDataType dtype;       /* lanes >= 1; bits a multiple of 8 */
    int32_t ndim;           /* 0 .. CUCORE_DLPACK_MAX_NDIM */
    const int64_t *shape;   /* ndim entries >= 0 (copied) */
    const int64_t *strides; /* ndim entries in elements (copied), or NULL: compact row-major */
    uint64_t byte_offset;   /* into the buffer */
} cucore_dlpack_layout_t;

/* A 1-D uint8 layout; set ndim/shape (and dtype, strides) before use. */
#define CUCORE_DLPACK_LAYOUT_INIT \
    {(uint32_t)sizeof(cucore_dlpack_layout_t), 0, {kDLUInt, 8, 1}, 0, NULL, NULL, 0}

CUCORE_EXTERN_C_BEGIN

/* Exports `buffer` as a versioned DLPack tensor (*tensor is the consumer's:
 * it calls (*tensor)->deleter exactly once, which releases the buffer's memory
 * reference; the tensor's device is kDLCUDA, kDLCUDAHost (page-locked host),
 * kDLCUDAManaged or kDLCPU (foreign host memory)). `layout` NULL: a 1-D uint8
 * tensor of the buffer's size. Every element the layout can reach must lie in
 * the buffer. Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out, bad layout,
 * elements outside the buffer), INVALID_STATE (closed), OUT_OF_MEMORY. */
CUCORE_API cucore_status_t cucore_dlpack_export(cucore_buffer_t *buffer, const cucore_dlpack_layout_t *layout,
                                                struct DLManagedTensorVersioned **tensor);

/* As cucore_dlpack_export, as a legacy (unversioned) DLManagedTensor (read_only ignored). */
CUCORE_API cucore_status_t cucore_dlpack_export_legacy(cucore_buffer_t *buffer,
                                                       const cucore_dlpack_layout_t *layout,
                                                       DLManagedTensor **tensor);

/* Imports a versioned DLPack tensor as a buffer (+1 reference) covering the
 * bytes its elements span, starting at data + byte_offset. On success the
 * buffer owns the tensor and calls its deleter (if any) when the buffer's memory
 * is released (views keep it); on failure the caller still owns it.
 * DLPack's read-only flag is accepted but not enforced (buffers have no
 * read-only mode). Errors: INVALID_ARGUMENT (NULL, major version not 1, bad
 * dtype (bits not a multiple of 8, lanes 0), bad shape or strides, NULL data
 * with elements, a CUDA device_id that is not a device), NOT_SUPPORTED (a
 * device type other than CPU, CUDA, CUDA host, CUDA managed). */
CUCORE_API cucore_status_t cucore_dlpack_import(struct DLManagedTensorVersioned *tensor, cucore_buffer_t **buffer);

/* As cucore_dlpack_import, for a legacy DLManagedTensor. */
CUCORE_API cucore_status_t cucore_dlpack_import_legacy(DLManagedTensor *tensor, cucore_buffer_t **buffer);

/* The DLPack device of a buffer's memory (device type and id, as an export
 * would give). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_dlpack_device(const cucore_buffer_t *buffer, int32_t *device_type,
                                                int32_t *device_id);

CUCORE_EXTERN_C_END

#endif /* CUCORE_DLPACK_H */
