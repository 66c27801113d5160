#include "core/dlpack.hpp"

#include "core/enum_value.hpp"

#include <algorithm>
#include <memory>
#include <new>
#include <string>

#include "core/device.hpp"
#include "core/error.hpp"

namespace cucore::core::dlpack {

namespace {

std::string str(int64_t value) { return std::to_string(value); }

[[noreturn]] void overflow(const std::string &what) {
    throw_invalid_argument("the bytes reached by " + what + " overflow 64 bits");
}

int64_t mul(int64_t a, int64_t b, const std::string &what) {
    int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) overflow(what);
    return r;
}

int64_t add(int64_t a, int64_t b, const std::string &what) {
    int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) overflow(what);
    return r;
}

// Bytes reached below the first element (negative strides), as a positive count.
uint64_t below_first(const Extent &extent) noexcept {
    return extent.low < 0 ? uint64_t{0} - static_cast<uint64_t>(extent.low) : 0;
}

// Every byte `extent` reaches from `byte_offset` lies in [0, size).
void check_fits(const Extent &extent, uint64_t byte_offset, uint64_t size) {
    if (byte_offset > size)
        throw_invalid_argument("layout.byte_offset (" + std::to_string(byte_offset) +
                               ") is past the end of the buffer of " + std::to_string(size) + " bytes");
    if (extent.empty) return;
    const uint64_t below = below_first(extent);
    if (below > byte_offset)
        throw_invalid_argument("the layout's negative strides reach " + std::to_string(below) +
                               " bytes below its first element, but layout.byte_offset is " +
                               std::to_string(byte_offset) + ": elements outside the buffer");
    if (static_cast<uint64_t>(extent.high) > size - byte_offset)
        throw_invalid_argument("the layout's elements reach " + std::to_string(extent.high) +
                               " bytes from layout.byte_offset " + std::to_string(byte_offset) +
                               ": outside the buffer of " + std::to_string(size) + " bytes");
}

// ---- export ----------------------------------------------------------------------------

// The one heap block of an exported tensor; its shape and strides (ndim each)
// follow it in the same allocation. manager_ctx points to the block.
template <class Tensor>
struct Block {
    Tensor tensor{};
    std::shared_ptr<Allocation> memory;  // the buffer's memory, not the buffer object
};

template <class Tensor>
int64_t *dims_of(Block<Tensor> *block) noexcept {
    return reinterpret_cast<int64_t *>(reinterpret_cast<unsigned char *>(block) + sizeof(Block<Tensor>));
}

// The deleter: called by the consumer exactly once, from any thread. Dropping
// the allocation may free the memory (errors are reported as release errors).
template <class Tensor>
void destroy(Tensor *self) noexcept {
    if (!self) return;
    auto *block = static_cast<Block<Tensor> *>(self->manager_ctx);
    block->~Block<Tensor>();
    ::operator delete(block);
}

template <class Tensor>
Tensor *export_tensor(Buffer &buffer, const cucore_dlpack_layout_t *given) {
    buffer.check_open("buffer");
    std::shared_ptr<Allocation> memory = buffer.allocation();
    const CUdeviceptr address = buffer.address();
    const uint64_t size = buffer.size();
    buffer.check_open("buffer");  // closed meanwhile: address and size read 0
    if (!memory) throw Error(CUCORE_ERROR_INVALID_STATE, "argument 'buffer' is a closed buffer");

    cucore_dlpack_layout_t layout{};
    int64_t bytes = 0;
    if (given) {
        layout = *given;
    } else {  // the buffer's bytes as a 1-D uint8 tensor
        if (size > static_cast<uint64_t>(INT64_MAX))
            throw_invalid_argument("the buffer's size does not fit a DLPack shape (int64)");
        bytes = static_cast<int64_t>(size);
        layout.dtype = DLDataType{static_cast<uint8_t>(kDLUInt), 8, 1};
        layout.ndim = 1;
        layout.shape = &bytes;
    }
    if (layout.read_only > 1)
        throw_invalid_argument("layout.read_only is " + std::to_string(layout.read_only) + "; it must be 0 or 1");
    int64_t strides[CUCORE_DLPACK_MAX_NDIM];
    const uint64_t item = element_size(layout.dtype, "layout");
    const Extent extent = extent_of(item, layout.ndim, layout.shape, layout.strides, strides, "layout");
    check_fits(extent, layout.byte_offset, size);

    // Nothing below throws once the block exists.
    const size_t dims = static_cast<size_t>(layout.ndim);
    void *raw = ::operator new(sizeof(Block<Tensor>) + 2 * dims * sizeof(int64_t));
    auto *block = new (raw) Block<Tensor>();
    block->memory = std::move(memory);
    int64_t *shape = dims_of(block);
    std::copy(layout.shape, layout.shape + dims, shape);
    std::copy(strides, strides + dims, shape + dims);

    Tensor &tensor = block->tensor;
    DLTensor &dl = tensor.dl_tensor;
    // The offset is folded into `data` (byte_offset 0), as PyTorch and NumPy
    // export, so consumers that ignore byte_offset read the right bytes too.
    dl.data = reinterpret_cast<void *>(static_cast<uintptr_t>(address + layout.byte_offset));
    dl.device = device_of(buffer);
    dl.ndim = layout.ndim;
    dl.dtype = layout.dtype;
    dl.shape = shape;
    dl.strides = shape + dims;  // always given: some consumers mishandle NULL strides
    dl.byte_offset = 0;
    tensor.manager_ctx = block;
    tensor.deleter = &destroy<Tensor>;
    return &tensor;
}

// ---- import ----------------------------------------------------------------------------

// What a tensor's device says about its memory.
MemoryTraits traits_of(const DLDevice &device) {
    MemoryTraits traits;
    const int32_t type = enum_value(device.device_type);  // a producer may use device types this header lacks
    switch (type) {
        case kDLCPU:
            traits.host_accessible = true;
            return traits;
        case kDLCUDAHost:  // page-locked host memory: device_id is not a device
            traits.host_accessible = true;
            traits.device_accessible = true;
            return traits;
        case kDLCUDA:
        case kDLCUDAManaged: {
            const int count = Device::count();
            if (device.device_id < 0 || device.device_id >= count)
                throw_invalid_argument("tensor->dl_tensor.device.device_id is " + str(device.device_id) +
                                       ", not a device ordinal (the driver sees " + str(count) + " devices)");
            traits.device_id = device.device_id;
            traits.device_accessible = true;
            traits.managed = traits.host_accessible = type == kDLCUDAManaged;
            return traits;
        }
        default:
            throw Error(CUCORE_ERROR_NOT_SUPPORTED,
                        "tensor->dl_tensor.device.device_type is " + str(type) +
                            "; libcucore imports kDLCPU (1), kDLCUDA (2), kDLCUDAHost (3) and kDLCUDAManaged (13)");
    }
}

// The owner callback of an imported buffer: the tensor's deleter, once.
template <class Tensor>
void call_deleter(void *user_data) noexcept {
    auto *tensor = static_cast<Tensor *>(user_data);
    if (tensor->deleter) tensor->deleter(tensor);
}

template <class Tensor>
Ref<Buffer> import_tensor(Tensor *tensor) {
    if (!tensor) throw_invalid_argument("argument 'tensor' is NULL");
    const DLTensor &dl = tensor->dl_tensor;
    const char *what = "tensor->dl_tensor";
    const uint64_t item = element_size(dl.dtype, what);
    const Extent extent = extent_of(item, dl.ndim, dl.shape, dl.strides, nullptr, what);
    const uint64_t data = reinterpret_cast<uintptr_t>(dl.data);
    uint64_t first = 0;  // the first element's address
    if (__builtin_add_overflow(data, dl.byte_offset, &first)) overflow(what);
    CUdeviceptr address = data ? first : 0;
    uint64_t size = 0;
    if (!extent.empty) {
        if (!data) throw_invalid_argument("tensor->dl_tensor.data is NULL but the tensor has elements");
        const uint64_t below = below_first(extent);
        if (below > first) throw_invalid_argument("the tensor's negative strides reach below address 0");
        address = first - below;
        size = static_cast<uint64_t>(extent.high) + below;
        if (size > UINT64_MAX - address) overflow(what);
    }
    const MemoryTraits traits = traits_of(dl.device);  // last: may ask the driver
    return Buffer::wrap(address, size, traits, tensor->deleter ? &call_deleter<Tensor> : nullptr, tensor);
}

}  // namespace

uint64_t element_size(const DLDataType &dtype, const char *what) {
    if (dtype.bits == 0 || dtype.bits % 8 != 0)
        throw_invalid_argument(std::string(what) + ".dtype.bits is " + std::to_string(dtype.bits) +
                               "; it must be a positive multiple of 8 (sub-byte types are not supported)");
    if (dtype.lanes == 0) throw_invalid_argument(std::string(what) + ".dtype.lanes is 0; it must be at least 1");
    return uint64_t{dtype.bits} / 8 * dtype.lanes;
}

Extent extent_of(uint64_t element_size, int32_t ndim, const int64_t *shape, const int64_t *strides,
                 int64_t *strides_out, const char *what) {
    const std::string name(what);
    if (ndim < 0 || ndim > CUCORE_DLPACK_MAX_NDIM)
        throw_invalid_argument(name + ".ndim is " + str(ndim) + "; it must be 0 to " + str(CUCORE_DLPACK_MAX_NDIM));
    if (ndim > 0 && !shape) throw_invalid_argument(name + ".shape is NULL but ndim is " + str(ndim));
    Extent extent;
    for (int32_t d = 0; d < ndim; ++d) {
        if (shape[d] < 0)
            throw_invalid_argument(name + ".shape[" + str(d) + "] is " + str(shape[d]) + "; it must be >= 0");
        if (shape[d] == 0) extent.empty = true;
    }
    // Compact row-major strides where none are given (empty dimensions count
    // as 1, as NumPy and PyTorch lay them out).
    int64_t used[CUCORE_DLPACK_MAX_NDIM];
    int64_t compact = 1;
    for (int32_t d = ndim - 1; d >= 0; --d) {
        used[d] = strides ? strides[d] : compact;
        if (!strides) compact = mul(compact, std::max<int64_t>(shape[d], 1), name);
    }
    if (strides_out) std::copy(used, used + ndim, strides_out);
    if (extent.empty) return extent;
    const auto item = static_cast<int64_t>(element_size);
    extent.high = item;
    for (int32_t d = 0; d < ndim; ++d) {
        const int64_t reach = mul(mul(shape[d] - 1, used[d], name), item, name);
        if (reach < 0)
            extent.low = add(extent.low, reach, name);
        else
            extent.high = add(extent.high, reach, name);
    }
    return extent;
}

DLDevice device_of(const Buffer &buffer) noexcept {
    const MemoryTraits &traits = buffer.traits();
    DLDevice device{kDLCPU, 0};
    if (traits.managed) {
        device.device_type = kDLCUDAManaged;
        device.device_id = std::max(traits.device_id, 0);
    } else if (traits.device_accessible && traits.device_id >= 0) {
        device.device_type = kDLCUDA;
        device.device_id = traits.device_id;
    } else if (traits.device_accessible && traits.host_accessible) {
        device.device_type = kDLCUDAHost;  // page-locked host memory
    }
    return device;
}

DLManagedTensorVersioned *export_versioned(Buffer &buffer, const cucore_dlpack_layout_t *layout) {
    DLManagedTensorVersioned *tensor = export_tensor<DLManagedTensorVersioned>(buffer, layout);
    tensor->version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    tensor->flags = layout && layout->read_only ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
    return tensor;
}

DLManagedTensor *export_legacy(Buffer &buffer, const cucore_dlpack_layout_t *layout) {
    return export_tensor<DLManagedTensor>(buffer, layout);
}

Ref<Buffer> import_versioned(DLManagedTensorVersioned *tensor) {
    if (tensor && tensor->version.major != DLPACK_MAJOR_VERSION)
        throw_invalid_argument("tensor->version is " + std::to_string(tensor->version.major) + "." +
                               std::to_string(tensor->version.minor) + "; libcucore reads DLPack " +
                               std::to_string(DLPACK_MAJOR_VERSION) + ".x");
    return import_tensor(tensor);
}

Ref<Buffer> import_legacy(DLManagedTensor *tensor) { return import_tensor(tensor); }

}  // namespace cucore::core::dlpack
