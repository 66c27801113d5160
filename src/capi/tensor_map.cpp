// C ABI: TensorMap (TMA) descriptors.
#include "capi/capi.hpp"
#include "core/tensor_map.hpp"

using namespace cucore;

namespace {

constexpr cucore_tensor_map_layout_t kLayoutDefaults = CUCORE_TENSOR_MAP_LAYOUT_INIT;
constexpr cucore_tensor_map_descriptor_options_t kOptionsDefaults = CUCORE_TENSOR_MAP_DESCRIPTOR_OPTIONS_INIT;

// The layout (required): its struct and its data type (the rules between fields are core's).
cucore_tensor_map_layout_t read_layout(const cucore_tensor_map_layout_t *layout) {
    capi::require(layout, "layout");
    cucore_tensor_map_layout_t resolved = capi::read_options(layout, kLayoutDefaults, "layout");
    resolved.data_type = capi::check_enum_range(
        resolved.data_type, CUCORE_TENSOR_MAP_DATA_TYPE_UINT8, CUCORE_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B,
        "layout.data_type", "must be a cucore_tensor_map_data_type_t (CUCORE_TENSOR_MAP_DATA_TYPE_UINT8 ... _16U6_ALIGN16B)");
    return resolved;
}

// The options: each enum's own values; element strides left 0 mean 1.
cucore_tensor_map_descriptor_options_t read_options(const cucore_tensor_map_descriptor_options_t *options) {
    cucore_tensor_map_descriptor_options_t resolved = capi::read_options(options, kOptionsDefaults, "options");
    for (uint32_t &stride : resolved.element_strides)
        if (stride == 0) stride = 1;
    resolved.interleave = capi::check_enum_range(resolved.interleave, CUCORE_TENSOR_MAP_INTERLEAVE_NONE,
                                                 CUCORE_TENSOR_MAP_INTERLEAVE_32B, "options.interleave",
                                                 "must be CUCORE_TENSOR_MAP_INTERLEAVE_NONE, _16B or _32B");
    resolved.swizzle = capi::check_enum_range(resolved.swizzle, CUCORE_TENSOR_MAP_SWIZZLE_NONE,
                                              CUCORE_TENSOR_MAP_SWIZZLE_128B_ATOM_64B, "options.swizzle",
                                              "must be a cucore_tensor_map_swizzle_t (CUCORE_TENSOR_MAP_SWIZZLE_NONE "
                                              "... _128B_ATOM_64B)");
    resolved.l2_promotion = capi::check_enum_range(
        resolved.l2_promotion, CUCORE_TENSOR_MAP_L2_PROMOTION_NONE, CUCORE_TENSOR_MAP_L2_PROMOTION_L2_256B,
        "options.l2_promotion", "must be CUCORE_TENSOR_MAP_L2_PROMOTION_NONE, _L2_64B, _L2_128B or _L2_256B");
    resolved.oob_fill = capi::check_enum_range(resolved.oob_fill, CUCORE_TENSOR_MAP_OOB_FILL_NONE,
                                               CUCORE_TENSOR_MAP_OOB_FILL_NAN_REQUEST_ZERO_FMA, "options.oob_fill",
                                               "must be CUCORE_TENSOR_MAP_OOB_FILL_NONE or _NAN_REQUEST_ZERO_FMA");
    resolved.im2col_wide_mode = capi::check_enum_range(
        resolved.im2col_wide_mode, CUCORE_TENSOR_MAP_IM2COL_WIDE_MODE_W, CUCORE_TENSOR_MAP_IM2COL_WIDE_MODE_W128,
        "options.im2col_wide_mode", "must be CUCORE_TENSOR_MAP_IM2COL_WIDE_MODE_W or _W128");
    return resolved;
}

// The request's fields every kind has.
core::TensorMapRequest read_request(cucore_tensor_map_kind_t kind, const cucore_tensor_map_layout_t *layout,
                                    const cucore_tensor_map_descriptor_options_t *options) {
    core::TensorMapRequest request;
    request.kind = kind;
    request.layout = read_layout(layout);
    request.options = read_options(options);
    return request;
}

cucore_tensor_map_descriptor_t *create(const core::TensorMapRequest &request, core::Buffer *buffer,
                                       uint64_t address) {
    return capi::give<cucore_tensor_map_descriptor_t>(core::TensorMapDescriptor::create(request, buffer, address));
}

}  // namespace

extern "C" {

cucore_status_t cucore_tensor_map_descriptor_create_tiled(cucore_buffer_t *buffer, uint64_t address,
                                                          const cucore_tensor_map_layout_t *layout,
                                                          const uint32_t *box_dim,
                                                          const cucore_tensor_map_descriptor_options_t *options,
                                                          cucore_tensor_map_descriptor_t **descriptor) {
    return capi::guarded(__func__, [&] {
        cucore_tensor_map_descriptor_t *&result = capi::out(descriptor, "descriptor");
        core::Buffer *memory = capi::get_optional(buffer, "buffer");
        core::TensorMapRequest request = read_request(CUCORE_TENSOR_MAP_KIND_TILED, layout, options);
        capi::require(box_dim, "box_dim");
        for (uint32_t i = 0; i < request.layout.rank && i < CUCORE_TENSOR_MAP_MAX_RANK; ++i)
            request.box_dim[i] = box_dim[i];
        result = create(request, memory, address);
    });
}

cucore_status_t cucore_tensor_map_descriptor_create_im2col(
    cucore_buffer_t *buffer, uint64_t address, const cucore_tensor_map_layout_t *layout,
    const int32_t *pixel_box_lower_corner, const int32_t *pixel_box_upper_corner, uint32_t channels_per_pixel,
    uint32_t pixels_per_column, const cucore_tensor_map_descriptor_options_t *options,
    cucore_tensor_map_descriptor_t **descriptor) {
    return capi::guarded(__func__, [&] {
        cucore_tensor_map_descriptor_t *&result = capi::out(descriptor, "descriptor");
        core::Buffer *memory = capi::get_optional(buffer, "buffer");
        core::TensorMapRequest request = read_request(CUCORE_TENSOR_MAP_KIND_IM2COL, layout, options);
        capi::require(pixel_box_lower_corner, "pixel_box_lower_corner");
        capi::require(pixel_box_upper_corner, "pixel_box_upper_corner");
        // rank - 2 offsets each (the rank is checked by the rules; read only what a valid rank names).
        const uint32_t rank = request.layout.rank;
        const uint32_t corners = rank >= 3 && rank <= CUCORE_TENSOR_MAP_MAX_RANK ? rank - 2 : 0;
        for (uint32_t j = 0; j < corners; ++j) {
            request.lower_corner[j] = pixel_box_lower_corner[j];
            request.upper_corner[j] = pixel_box_upper_corner[j];
        }
        request.channels_per_pixel = channels_per_pixel;
        request.pixels_per_column = pixels_per_column;
        result = create(request, memory, address);
    });
}

cucore_status_t cucore_tensor_map_descriptor_create_im2col_wide(
    cucore_buffer_t *buffer, uint64_t address, const cucore_tensor_map_layout_t *layout,
    int32_t pixel_box_lower_corner_width, int32_t pixel_box_upper_corner_width, uint32_t channels_per_pixel,
    uint32_t pixels_per_column, const cucore_tensor_map_descriptor_options_t *options,
    cucore_tensor_map_descriptor_t **descriptor) {
    return capi::guarded(__func__, [&] {
        cucore_tensor_map_descriptor_t *&result = capi::out(descriptor, "descriptor");
        core::Buffer *memory = capi::get_optional(buffer, "buffer");
        core::TensorMapRequest request = read_request(CUCORE_TENSOR_MAP_KIND_IM2COL_WIDE, layout, options);
        request.lower_corner[0] = pixel_box_lower_corner_width;
        request.upper_corner[0] = pixel_box_upper_corner_width;
        request.channels_per_pixel = channels_per_pixel;
        request.pixels_per_column = pixels_per_column;
        result = create(request, memory, address);
    });
}

cucore_status_t cucore_tensor_map_descriptor_replace_address(cucore_tensor_map_descriptor_t *descriptor,
                                                             cucore_buffer_t *buffer, uint64_t address) {
    return capi::guarded(__func__, [&] {
        core::TensorMapDescriptor &map = capi::get(descriptor, "descriptor");
        core::Buffer *memory = capi::get_optional(buffer, "buffer");
        map.replace_address(memory, address);
    });
}

cucore_status_t cucore_tensor_map_descriptor_data(const cucore_tensor_map_descriptor_t *descriptor,
                                                  const void **data) {
    return capi::guarded(__func__, [&] {
        const void *&result = capi::out(data, "data");
        result = capi::get(descriptor, "descriptor").data();
    });
}

cucore_status_t cucore_tensor_map_descriptor_copy(const cucore_tensor_map_descriptor_t *descriptor, void *bytes,
                                                  size_t size) {
    return capi::guarded(__func__, [&] {
        const core::TensorMapDescriptor &map = capi::get(descriptor, "descriptor");
        capi::require(bytes, "bytes");
        if (size < CUCORE_TENSOR_MAP_SIZE)
            core::throw_invalid_argument("argument 'size' is " + std::to_string(size) +
                                         "; a descriptor is 128 bytes (CUCORE_TENSOR_MAP_SIZE)");
        map.copy(bytes);
    });
}

cucore_status_t cucore_tensor_map_descriptor_address(const cucore_tensor_map_descriptor_t *descriptor,
                                                     uint64_t *address) {
    return capi::guarded(__func__, [&] {
        uint64_t &result = capi::out(address, "address");
        result = capi::get(descriptor, "descriptor").address();
    });
}

cucore_status_t cucore_tensor_map_descriptor_kind(const cucore_tensor_map_descriptor_t *descriptor,
                                                  cucore_tensor_map_kind_t *kind) {
    return capi::guarded(__func__, [&] {
        cucore_tensor_map_kind_t &result = capi::out(kind, "kind");
        result = capi::get(descriptor, "descriptor").kind();
    });
}

}  // extern "C"
