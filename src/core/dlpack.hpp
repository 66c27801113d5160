// DLPack interchange of buffers (include/cucore/dlpack.h).
//
// Export: one heap block holds the DLManagedTensor(Versioned), copies of its
// shape and strides, and a reference to the buffer's Allocation (not to the
// buffer object), so the consumer keeps the memory alive after the buffer is
// closed or released; the tensor's deleter destroys the block and with it that
// reference. Import: the tensor's memory becomes a foreign buffer whose owner
// callback is the tensor's deleter, so it runs once, after the buffer and all
// its views are gone.
#pragma once

#include <cstdint>

#include "core/buffer.hpp"
#include "cucore/dlpack.h"

namespace cucore::core::dlpack {

// The bytes a tensor's elements reach, relative to its first element: [low,
// high). low <= 0 (negative strides reach below the first element). `empty`:
// the tensor has no elements and reaches no byte.
struct Extent {
    int64_t low = 0;
    int64_t high = 0;
    bool empty = false;
};

// The size of one element in bytes, checked (bits a positive multiple of 8,
// lanes >= 1); `what` names the tensor or layout in messages.
uint64_t element_size(const DLDataType &dtype, const char *what);

// Checks ndim, shape and strides (NULL: compact row-major) and computes the
// extent, overflow-checked. Writes the strides used (given or compact) to
// `strides_out` (ndim entries) when it is not null.
Extent extent_of(uint64_t element_size, int32_t ndim, const int64_t *shape, const int64_t *strides,
                 int64_t *strides_out, const char *what);

// The DLPack device of a buffer's memory (what an export gives).
DLDevice device_of(const Buffer &buffer) noexcept;

// `layout` null: a 1-D uint8 tensor of the buffer's bytes. The tensor is the
// caller's: its deleter frees everything.
DLManagedTensorVersioned *export_versioned(Buffer &buffer, const cucore_dlpack_layout_t *layout);
DLManagedTensor *export_legacy(Buffer &buffer, const cucore_dlpack_layout_t *layout);

// A buffer over the tensor's elements that calls the tensor's deleter when its
// memory is released. On failure nothing is called and the caller keeps the tensor.
Ref<Buffer> import_versioned(DLManagedTensorVersioned *tensor);
Ref<Buffer> import_legacy(DLManagedTensor *tensor);

}  // namespace cucore::core::dlpack
