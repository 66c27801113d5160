#include "core/tensor_map.hpp"

#include <cstring>
#include <string>

#include "core/device.hpp"
#include "core/error.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

namespace {

std::string hex(uint64_t value) {
    char text[24];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
    return text;
}

// The driver's enum value of each of ours (only the data type is shifted: 0 means unset here).
CUtensorMapDataType driver_type(cucore_tensor_map_data_type_t type) {
    return static_cast<CUtensorMapDataType>(static_cast<int>(type) - 1);
}

// One encode, by kind, into `map` (its rules checked).
CUresult encode(const TensorMapRequest &r, uint64_t address, CUtensorMap *map) {
    const auto &o = r.options;
    void *global = reinterpret_cast<void *>(static_cast<std::uintptr_t>(address));
    const auto interleave = static_cast<CUtensorMapInterleave>(o.interleave);
    const auto swizzle = static_cast<CUtensorMapSwizzle>(o.swizzle);
    const auto l2 = static_cast<CUtensorMapL2promotion>(o.l2_promotion);
    const auto fill = static_cast<CUtensorMapFloatOOBfill>(o.oob_fill);
    const cuuint64_t *dims = r.layout.global_dim;
    const cuuint64_t *strides = r.layout.global_strides;
    switch (r.kind) {
        case CUCORE_TENSOR_MAP_KIND_TILED:
            return CUCORE_DRIVER(cuTensorMapEncodeTiled)(map, driver_type(r.layout.data_type), r.layout.rank, global,
                                                         dims, strides, r.box_dim, o.element_strides, interleave,
                                                         swizzle, l2, fill);
        case CUCORE_TENSOR_MAP_KIND_IM2COL:
            return CUCORE_DRIVER(cuTensorMapEncodeIm2col)(
                map, driver_type(r.layout.data_type), r.layout.rank, global, dims, strides, r.lower_corner,
                r.upper_corner, r.channels_per_pixel, r.pixels_per_column, o.element_strides, interleave, swizzle, l2,
                fill);
        default:
            return CUCORE_DRIVER(cuTensorMapEncodeIm2colWide)(
                map, driver_type(r.layout.data_type), r.layout.rank, global, dims, strides, r.lower_corner[0],
                r.upper_corner[0], r.channels_per_pixel, r.pixels_per_column, o.element_strides, interleave,
                static_cast<CUtensorMapIm2ColWideMode>(o.im2col_wide_mode), swizzle, l2, fill);
    }
}

const char *encode_name(cucore_tensor_map_kind_t kind) {
    switch (kind) {
        case CUCORE_TENSOR_MAP_KIND_TILED: return "cuTensorMapEncodeTiled";
        case CUCORE_TENSOR_MAP_KIND_IM2COL: return "cuTensorMapEncodeIm2col";
        default: return "cuTensorMapEncodeIm2colWide";
    }
}

void check_alignment(uint64_t address, const TensorMapRequest &request) {
    const uint64_t alignment = tensor_map_address_alignment(request);
    if (address % alignment != 0)
        throw_invalid_argument("address " + hex(address) + " is not " + std::to_string(alignment) +
                               "-byte aligned; global address must be 16-byte aligned (32 with interleave 32B or "
                               "the 16U4_ALIGN16B/16U6_ALIGN16B types)");
}

[[noreturn]] void throw_refused(CUresult result, const char *entry_point) {
    throw Error(status_of(result),
                std::string("the driver refused the tensor map (") + entry_point + ": " + cuda_error_name(result) + ")",
                static_cast<int>(result));
}

}  // namespace

// ---- TensorMapTarget -------------------------------------------------------------------

TensorMapTarget TensorMapTarget::resolve(Buffer *buffer, uint64_t address, const TensorMapRequest &request) {
    TensorMapTarget target;
    if (buffer) {
        buffer->check_open("buffer");
        if (!buffer->device_accessible() || buffer->device_id() < 0)
            throw_invalid_argument("buffer is not device memory; a tensor map describes memory a device reads");
        const uint64_t start = buffer->address(), size = buffer->size();
        if (address == 0) address = start;
        if (address < start || address - start >= size)
            throw_invalid_argument("address " + hex(address) + " is outside the buffer [" + hex(start) + ", " +
                                   hex(start + size) + ")");
        check_alignment(address, request);  // the driver's rule first
        const uint64_t extent = tensor_map_extent(request);
        if (extent > size - (address - start))
            throw_invalid_argument("the tensor spans " + std::to_string(extent) + " bytes from address " +
                                   hex(address) + ", past the buffer's end (" + std::to_string(size - (address - start)) +
                                   " bytes left); the tensor must lie within the buffer");
        target.allocation = buffer->allocation();
        if (!target.allocation) throw Error(CUCORE_ERROR_INVALID_STATE, "buffer is closed");
        target.context = Device::get(buffer->device_id())->primary_context();
    } else if (address == 0) {
        throw_invalid_argument("address is 0 and no buffer is given; name a buffer or a device address");
    }
    check_alignment(address, request);
    target.address = address;
    return target;
}

// ---- TensorMapDescriptor ---------------------------------------------------------------

Ref<TensorMapDescriptor> TensorMapDescriptor::create(const TensorMapRequest &request, Buffer *buffer,
                                                     uint64_t address) {
    check_tensor_map_rules(request);
    TensorMapTarget target = TensorMapTarget::resolve(buffer, address, request);
    CUtensorMap map;  // its type asks 128-byte alignment (cuda.h); the driver needs 64
    std::memset(&map, 0, sizeof map);
    {
        // Encoding needs no device memory, but the driver may ask for a context: the buffer's, or the caller's.
        ScopedContext bind(target.context ? target.context->cu() : nullptr, static_cast<bool>(target.context));
        const CUresult result = encode(request, target.address, &map);
        if (result != CUDA_SUCCESS) throw_refused(result, encode_name(request.kind));
    }
    // Nothing to destroy: a CUtensorMap is plain bytes.
    return make<TensorMapDescriptor>(request, std::move(target), map);
}

TensorMapDescriptor::TensorMapDescriptor(const TensorMapRequest &request, TensorMapTarget target,
                                         const CUtensorMap &map) noexcept
    : Object(CUCORE_OBJECT_TENSOR_MAP_DESCRIPTOR), request_(request), target_(std::move(target)) {
    std::memcpy(this->map(), &map, sizeof map);
}

void TensorMapDescriptor::replace_address(Buffer *buffer, uint64_t address) {
    TensorMapTarget target = TensorMapTarget::resolve(buffer, address, request_);
    TensorMapTarget released;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        // The driver rewrites a copy, so a refusal leaves the descriptor as it was.
        CUtensorMap map;
        std::memcpy(&map, this->map(), sizeof map);
        {
            ScopedContext bind(target.context ? target.context->cu() : nullptr, static_cast<bool>(target.context));
            const CUresult result = CUCORE_DRIVER(cuTensorMapReplaceAddress)(
                &map, reinterpret_cast<void *>(static_cast<std::uintptr_t>(target.address)));
            if (result != CUDA_SUCCESS) throw_refused(result, "cuTensorMapReplaceAddress");
        }
        std::memcpy(this->map(), &map, sizeof map);
        released = std::move(target_);
        target_ = std::move(target);
    }
    // The old buffer's memory goes outside the lock (its deleter may call the driver).
}

void TensorMapDescriptor::copy(void *bytes) const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::memcpy(bytes, map(), CUCORE_TENSOR_MAP_SIZE);
}

uint64_t TensorMapDescriptor::address() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return target_.address;
}

}  // namespace cucore::core
