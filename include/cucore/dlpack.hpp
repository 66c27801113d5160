// libcucore C++ façade: DLPack interchange of buffers (over cucore/dlpack.h).
//
//   cucore::Buffer buf = dev.allocate(64 * 32 * sizeof(float), s);
//   cucore::DLPackTensor t = cucore::dlpack::export_tensor(buf, cucore::DLPackLayout::of<float>({64, 32}));
//   consumer_takes(t.release());          // the consumer calls the deleter once
//
//   cucore::Buffer imported = cucore::dlpack::from_dlpack(producer_gives());  // the buffer owns it
//
// An exported tensor keeps the buffer's memory (not the Buffer object) alive until its
// deleter runs: closing or releasing the buffer meanwhile frees nothing. A DLPackTensor (or
// LegacyDLPackTensor) owns the DLManagedTensor until release() hands it to a consumer; if
// nobody takes it, its destructor calls the deleter. An imported tensor belongs to the
// Buffer, which calls the tensor's deleter once its memory is released (views keep it).
#ifndef CUCORE_DLPACK_HPP
#define CUCORE_DLPACK_HPP

#include <complex>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "common.hpp"
#include "dlpack.h"
#include "buffer.hpp"

namespace cucore {
namespace dlpack {

// The DLPack data type of a C++ element type: dtype<float>() is {kDLFloat, 32, 1}.
template <typename T> constexpr DLDataType dtype() noexcept {
    static_assert(std::is_arithmetic_v<T> || std::is_same_v<T, std::complex<float>> ||
                      std::is_same_v<T, std::complex<double>>,
                  "cucore::dlpack::dtype<T>: T must be an arithmetic type or std::complex<float/double>");
    std::uint8_t code = kDLFloat;
    if constexpr (std::is_same_v<T, bool>)
        code = kDLBool;
    else if constexpr (std::is_integral_v<T>)
        code = std::is_signed_v<T> ? kDLInt : kDLUInt;
    else if constexpr (!std::is_floating_point_v<T>)
        code = kDLComplex;
    return DLDataType{code, static_cast<std::uint8_t>(8 * sizeof(T)), 1};
}

} // namespace dlpack

// How a buffer is presented as a tensor: element type, shape, strides (in
// elements; none: compact row-major), byte offset into the buffer, and (for
// versioned exports) read-only (cucore_dlpack_layout_t). The dimensions are
// copied into the DLPackLayout, up to CUCORE_DLPACK_MAX_NDIM of them.
class DLPackLayout {
public:
    // A 1-D layout of `count` elements of `dtype`.
    DLPackLayout(DLDataType dtype, std::int64_t count) noexcept : dtype_(dtype), ndim_(1) { shape_[0] = count; }

    // The given shape (0 dimensions: a scalar). More than CUCORE_DLPACK_MAX_NDIM
    // dimensions throw Error (INVALID_ARGUMENT).
    DLPackLayout(DLDataType dtype, std::initializer_list<std::int64_t> shape)
        : DLPackLayout(dtype, shape.begin(), shape.size()) {}
    DLPackLayout(DLDataType dtype, const std::int64_t *shape, std::size_t ndim) : dtype_(dtype) {
        ndim_ = dims(ndim, "cucore::DLPackLayout: more dimensions than CUCORE_DLPACK_MAX_NDIM");
        for (std::size_t i = 0; i < ndim; ++i) shape_[i] = shape[i];
    }

    // A layout of elements of type T: DLPackLayout::of<float>({64, 32}).
    template <typename T> static DLPackLayout of(std::initializer_list<std::int64_t> shape) {
        return DLPackLayout(dlpack::dtype<T>(), shape);
    }

    // Strides in elements, one per dimension (negative ones allowed where every
    // element stays in the buffer).
    DLPackLayout &strides(std::initializer_list<std::int64_t> strides) {
        return set_strides(strides.begin(), strides.size());
    }
    DLPackLayout &strides(const std::int64_t *strides, std::size_t ndim) { return set_strides(strides, ndim); }
    DLPackLayout &byte_offset(std::uint64_t offset) noexcept {
        byte_offset_ = offset;
        return *this;
    }
    DLPackLayout &read_only(bool value = true) noexcept {
        read_only_ = value;
        return *this;
    }

    // The C layout, pointing into this object (valid while it lives unchanged).
    cucore_dlpack_layout_t to_c() const noexcept {
        cucore_dlpack_layout_t c{};
        c.struct_size = static_cast<std::uint32_t>(sizeof c);
        c.read_only = read_only_ ? 1u : 0u;
        c.dtype = dtype_;
        c.ndim = ndim_;
        c.shape = shape_;
        c.strides = has_strides_ ? strides_ : nullptr;
        c.byte_offset = byte_offset_;
        return c;
    }

private:
    // `ndim` as an int32_t, or Error (INVALID_ARGUMENT) with `message` when too many.
    static std::int32_t dims(std::size_t ndim, const char *message) {
        if (ndim > CUCORE_DLPACK_MAX_NDIM) throw Error(CUCORE_ERROR_INVALID_ARGUMENT, 0, message);
        return static_cast<std::int32_t>(ndim);
    }
    DLPackLayout &set_strides(const std::int64_t *strides, std::size_t ndim) {
        if (dims(ndim, "cucore::DLPackLayout::strides: more strides than CUCORE_DLPACK_MAX_NDIM") != ndim_)
            throw Error(CUCORE_ERROR_INVALID_ARGUMENT, 0,
                        "cucore::DLPackLayout::strides: one stride per dimension is needed");
        for (std::size_t i = 0; i < ndim; ++i) strides_[i] = strides[i];
        has_strides_ = true;
        return *this;
    }

    DLDataType dtype_;
    std::int32_t ndim_ = 0;
    bool has_strides_ = false;
    bool read_only_ = false;
    std::uint64_t byte_offset_ = 0;
    std::int64_t shape_[CUCORE_DLPACK_MAX_NDIM] = {};
    std::int64_t strides_[CUCORE_DLPACK_MAX_NDIM] = {};
};

// Owns one DLManagedTensorVersioned (DLPackTensor) or DLManagedTensor
// (LegacyDLPackTensor): move-only; the destructor calls the tensor's deleter
// unless release() handed it on. Never throws.
template <typename Managed> class BasicDLPackTensor {
public:
    BasicDLPackTensor() noexcept = default;
    // Takes over `raw` (its deleter will be called once).
    explicit BasicDLPackTensor(Managed *raw) noexcept : raw_(raw) {}
    BasicDLPackTensor(BasicDLPackTensor &&other) noexcept : raw_(other.release()) {}
    BasicDLPackTensor &operator=(BasicDLPackTensor &&other) noexcept {
        if (this != &other) {
            reset();
            raw_ = other.release();
        }
        return *this;
    }
    BasicDLPackTensor(const BasicDLPackTensor &) = delete;
    BasicDLPackTensor &operator=(const BasicDLPackTensor &) = delete;
    ~BasicDLPackTensor() { reset(); }

    Managed *get() const noexcept { return raw_; }
    Managed *operator->() const noexcept { return raw_; }
    // The tensor description (data, device, dtype, shape, strides).
    const DLTensor &tensor() const noexcept { return raw_->dl_tensor; }
    explicit operator bool() const noexcept { return raw_ != nullptr; }

    // Hands the tensor to a consumer, which must call its deleter once.
    Managed *release() noexcept {
        Managed *raw = raw_;
        raw_ = nullptr;
        return raw;
    }
    // Calls the deleter now (if any) and leaves this object empty.
    void reset() noexcept {
        Managed *raw = release();
        if (raw != nullptr && raw->deleter != nullptr) raw->deleter(raw);
    }

private:
    Managed *raw_ = nullptr;
};

using DLPackTensor = BasicDLPackTensor<DLManagedTensorVersioned>;
using LegacyDLPackTensor = BasicDLPackTensor<DLManagedTensor>;

namespace dlpack {

// Exports `buffer` as a versioned tensor: its bytes as a 1-D uint8 tensor, or as
// `layout` says. Throws Error: INVALID_HANDLE, INVALID_ARGUMENT (a layout
// reaching outside the buffer, bad dtype or shape), INVALID_STATE (closed),
// OUT_OF_MEMORY.
inline DLPackTensor export_tensor(const Buffer &buffer) {
    DLManagedTensorVersioned *raw = nullptr;
    detail::check(cucore_dlpack_export(buffer.get(), nullptr, &raw));
    return DLPackTensor(raw);
}
inline DLPackTensor export_tensor(const Buffer &buffer, const DLPackLayout &layout) {
    const cucore_dlpack_layout_t c = layout.to_c();
    DLManagedTensorVersioned *raw = nullptr;
    detail::check(cucore_dlpack_export(buffer.get(), &c, &raw));
    return DLPackTensor(raw);
}

// As export_tensor, as a legacy (unversioned) DLManagedTensor; read_only is ignored.
inline LegacyDLPackTensor export_legacy(const Buffer &buffer) {
    DLManagedTensor *raw = nullptr;
    detail::check(cucore_dlpack_export_legacy(buffer.get(), nullptr, &raw));
    return LegacyDLPackTensor(raw);
}
inline LegacyDLPackTensor export_legacy(const Buffer &buffer, const DLPackLayout &layout) {
    const cucore_dlpack_layout_t c = layout.to_c();
    DLManagedTensor *raw = nullptr;
    detail::check(cucore_dlpack_export_legacy(buffer.get(), &c, &raw));
    return LegacyDLPackTensor(raw);
}

// Imports a tensor as a Buffer over the bytes its elements span. On success the
// Buffer owns the tensor (`tensor` is left empty); on failure `tensor` keeps it.
// Throws Error: INVALID_ARGUMENT (version, shape, strides, NULL data), NOT_SUPPORTED
// (a device type other than CPU, CUDA, CUDA host, CUDA managed).
inline Buffer from_dlpack(DLPackTensor &&tensor) {
    cucore_buffer_t *raw = nullptr;
    detail::check(cucore_dlpack_import(tensor.get(), &raw));
    (void)tensor.release();
    return Buffer::adopt(raw);
}
inline Buffer from_dlpack(LegacyDLPackTensor &&tensor) {
    cucore_buffer_t *raw = nullptr;
    detail::check(cucore_dlpack_import_legacy(tensor.get(), &raw));
    (void)tensor.release();
    return Buffer::adopt(raw);
}

// Imports a raw tensor from a producer: on success the Buffer owns it; on
// failure (throws as above) the caller still does.
inline Buffer from_dlpack(DLManagedTensorVersioned *raw_tensor) {
    cucore_buffer_t *raw = nullptr;
    detail::check(cucore_dlpack_import(raw_tensor, &raw));
    return Buffer::adopt(raw);
}
inline Buffer from_dlpack(DLManagedTensor *raw_tensor) {
    cucore_buffer_t *raw = nullptr;
    detail::check(cucore_dlpack_import_legacy(raw_tensor, &raw));
    return Buffer::adopt(raw);
}

// The DLPack device of a buffer's memory (as an export gives it). Throws Error:
// INVALID_HANDLE.
inline DLDevice device(const Buffer &buffer) {
    std::int32_t type = 0, id = 0;
    detail::check(cucore_dlpack_device(buffer.get(), &type, &id));
    DLDevice d;
    d.device_type = static_cast<DLDeviceType>(type);
    d.device_id = id;
    return d;
}

} // namespace dlpack
} // namespace cucore

#endif // CUCORE_DLPACK_HPP
