// C ABI: opaque arrays, mipmapped arrays and their copies.
#include "capi/capi.hpp"
#include "core/device.hpp"
#include "core/opaque_array.hpp"

using namespace cucore;

namespace {

constexpr cucore_opaque_array_copy_t kCopyDefaults = CUCORE_OPAQUE_ARRAY_COPY_INIT;
constexpr uint32_t kArrayFlags = CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE | CUCORE_ARRAY_FLAG_TEXTURE_GATHER |
                                 CUCORE_ARRAY_FLAG_DEPTH_TEXTURE | CUCORE_ARRAY_FLAG_SPARSE;

// The options of an array to create: the fields' own values (core checks the geometry they make up).
core::ArrayShape read_shape(const cucore_opaque_array_options_t *options) {
    capi::require(options, "options");
    const cucore_opaque_array_options_t defaults = CUCORE_OPAQUE_ARRAY_OPTIONS_INIT;
    cucore_opaque_array_options_t resolved = capi::read_options(options, defaults, "options");
    resolved.format = capi::check_array_format(resolved.format, "options.format", true);
    resolved.kind = capi::check_enum_range(resolved.kind, CUCORE_ARRAY_KIND_PLAIN, CUCORE_ARRAY_KIND_LAYERED_CUBEMAP,
                                           "options.kind", "must be a cucore_array_kind_t (PLAIN, LAYERED, CUBEMAP or "
                                                           "LAYERED_CUBEMAP)");
    capi::check_flags(resolved.flags, kArrayFlags, "options.flags");
    capi::require_zero(resolved.reserved0, "options.reserved0");
    return core::ArrayShape::from_options(resolved);
}

// One side of a region copy: an array region, or linear memory naming exactly one of buffer and host.
core::ArrayCopySide copy_side(const cucore_array_region_t &array, const cucore_memory_region_t &memory,
                              const char *array_argument, const char *buffer_argument, const char *side) {
    core::ArrayCopySide result;
    result.array = capi::get_optional(array.array, array_argument);
    const bool has_memory = memory.buffer != nullptr || memory.host != nullptr;
    if (result.array) {
        if (has_memory)
            core::throw_invalid_argument(std::string("argument 'copy.") + side + "_array' and 'copy." + side +
                                         "_memory' are both set; a side is an array or memory, not both");
        result.x = array.x;
        result.y = array.y;
        result.z = array.z;
        return result;
    }
    if ((memory.buffer == nullptr) == (memory.host == nullptr))
        core::throw_invalid_argument(std::string("argument 'copy.") + side +
                                     "_memory' must name exactly one of 'buffer' and 'host' (or set 'copy." + side +
                                     "_array.array')");
    result.memory = core::CopySide{capi::get_optional(memory.buffer, buffer_argument), memory};
    return result;
}

}  // namespace

extern "C" {

cucore_status_t cucore_opaque_array_create(cucore_device_t *device, const cucore_opaque_array_options_t *options,
                                           cucore_opaque_array_t **array) {
    return capi::guarded(__func__, [&] {
        cucore_opaque_array_t *&result = capi::out(array, "array");
        core::Device &owner = capi::get(device, "device");
        const core::ArrayShape shape = read_shape(options);
        result = capi::give<cucore_opaque_array_t>(core::OpaqueArray::create(owner, shape));
    });
}

cucore_status_t cucore_opaque_array_from_handle(cucore_device_t *device, void *cu_array, cucore_release_fn on_release,
                                                void *user_data, cucore_opaque_array_t **array) {
    return capi::guarded(__func__, [&] {
        cucore_opaque_array_t *&result = capi::out(array, "array");
        core::Device &owner = capi::get(device, "device");
        capi::require(cu_array, "cu_array");
        result = capi::give<cucore_opaque_array_t>(
            core::OpaqueArray::wrap(owner, static_cast<CUarray>(cu_array), on_release, user_data));
    });
}

cucore_status_t cucore_opaque_array_close(cucore_opaque_array_t *array) {
    return capi::guarded(__func__, [&] { capi::get(array, "array").close(); });
}

cucore_status_t cucore_opaque_array_info(const cucore_opaque_array_t *array, cucore_opaque_array_info_t *info) {
    return capi::guarded(__func__, [&] {
        capi::require(info, "info");
        core::OpaqueArray &object = capi::get(array, "array");
        capi::write_versioned(info, object.info(), "info", "CUCORE_OPAQUE_ARRAY_INFO_INIT");
    });
}

cucore_status_t cucore_opaque_array_handle(const cucore_opaque_array_t *array, void **cu_array) {
    return capi::guarded(__func__, [&] {
        void *&result = capi::out(cu_array, "cu_array");
        result = capi::get(array, "array").cu();
    });
}

cucore_status_t cucore_opaque_array_copy_from_host(cucore_opaque_array_t *array, const void *src, uint64_t size,
                                                   cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        core::OpaqueArray &object = capi::get(array, "array");
        capi::require(src, "src");
        object.copy_from_host(src, size, capi::get(stream, "stream"));
    });
}

cucore_status_t cucore_opaque_array_copy_to_host(cucore_opaque_array_t *array, void *dst, uint64_t size,
                                                 cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        core::OpaqueArray &object = capi::get(array, "array");
        capi::require(dst, "dst");
        object.copy_to_host(dst, size, capi::get(stream, "stream"));
    });
}

cucore_status_t cucore_opaque_array_copy_from_buffer(cucore_opaque_array_t *array, cucore_buffer_t *buffer,
                                                     cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        core::OpaqueArray &object = capi::get(array, "array");
        object.copy_from_buffer(capi::get(buffer, "buffer"), capi::get(stream, "stream"));
    });
}

cucore_status_t cucore_opaque_array_copy_to_buffer(cucore_opaque_array_t *array, cucore_buffer_t *buffer,
                                                   cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        core::OpaqueArray &object = capi::get(array, "array");
        object.copy_to_buffer(capi::get(buffer, "buffer"), capi::get(stream, "stream"));
    });
}

cucore_status_t cucore_opaque_array_copy_from_array(cucore_opaque_array_t *array, cucore_opaque_array_t *src,
                                                    cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        core::OpaqueArray &object = capi::get(array, "array");
        object.copy_from_array(capi::get(src, "src"), capi::get(stream, "stream"));
    });
}

cucore_status_t cucore_opaque_array_copy(const cucore_opaque_array_copy_t *copy, cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        capi::require(copy, "copy");
        const cucore_opaque_array_copy_t resolved = capi::read_options(copy, kCopyDefaults, "copy");
        capi::require_zero(resolved.reserved0, "copy.reserved0");
        const core::ArrayCopySide source = copy_side(resolved.src_array, resolved.src_memory,
                                                     "copy.src_array.array", "copy.src_memory.buffer", "src");
        const core::ArrayCopySide destination = copy_side(resolved.dst_array, resolved.dst_memory,
                                                          "copy.dst_array.array", "copy.dst_memory.buffer", "dst");
        core::copy_array_region(source, destination, resolved.width, resolved.height, resolved.depth,
                                capi::get(stream, "stream"));
    });
}

cucore_status_t cucore_mipmapped_array_create(cucore_device_t *device, const cucore_opaque_array_options_t *options,
                                              uint32_t num_levels, cucore_mipmapped_array_t **mipmapped_array) {
    return capi::guarded(__func__, [&] {
        cucore_mipmapped_array_t *&result = capi::out(mipmapped_array, "mipmapped_array");
        core::Device &owner = capi::get(device, "device");
        const core::ArrayShape shape = read_shape(options);
        result = capi::give<cucore_mipmapped_array_t>(core::MipmappedArray::create(owner, shape, num_levels));
    });
}

cucore_status_t cucore_mipmapped_array_from_handle(cucore_device_t *device, void *cu_mipmapped_array,
                                                   cucore_release_fn on_release, void *user_data,
                                                   cucore_mipmapped_array_t **mipmapped_array) {
    return capi::guarded(__func__, [&] {
        cucore_mipmapped_array_t *&result = capi::out(mipmapped_array, "mipmapped_array");
        core::Device &owner = capi::get(device, "device");
        capi::require(cu_mipmapped_array, "cu_mipmapped_array");
        result = capi::give<cucore_mipmapped_array_t>(core::MipmappedArray::wrap(
            owner, static_cast<CUmipmappedArray>(cu_mipmapped_array), on_release, user_data));
    });
}

cucore_status_t cucore_mipmapped_array_close(cucore_mipmapped_array_t *mipmapped_array) {
    return capi::guarded(__func__, [&] { capi::get(mipmapped_array, "mipmapped_array").close(); });
}

cucore_status_t cucore_mipmapped_array_info(const cucore_mipmapped_array_t *mipmapped_array,
                                            cucore_opaque_array_info_t *info) {
    return capi::guarded(__func__, [&] {
        capi::require(info, "info");
        core::MipmappedArray &object = capi::get(mipmapped_array, "mipmapped_array");
        capi::write_versioned(info, object.info(), "info", "CUCORE_OPAQUE_ARRAY_INFO_INIT");
    });
}

cucore_status_t cucore_mipmapped_array_handle(const cucore_mipmapped_array_t *mipmapped_array,
                                              void **cu_mipmapped_array) {
    return capi::guarded(__func__, [&] {
        void *&result = capi::out(cu_mipmapped_array, "cu_mipmapped_array");
        result = capi::get(mipmapped_array, "mipmapped_array").cu();
    });
}

cucore_status_t cucore_mipmapped_array_level(cucore_mipmapped_array_t *mipmapped_array, uint32_t level,
                                             cucore_opaque_array_t **array) {
    return capi::guarded(__func__, [&] {
        cucore_opaque_array_t *&result = capi::out(array, "array");
        result = capi::give<cucore_opaque_array_t>(capi::get(mipmapped_array, "mipmapped_array").level(level));
    });
}

}  // extern "C"
