// C ABI: graphics interop (GraphicsResource, mapped buffers and arrays, GL devices).
#include <vector>

#include "capi/capi.hpp"
#include "core/graphics.hpp"

using namespace cucore;

namespace {
constexpr uint32_t kRegisterFlags = CUCORE_GRAPHICS_REGISTER_READ_ONLY | CUCORE_GRAPHICS_REGISTER_WRITE_DISCARD |
                                    CUCORE_GRAPHICS_REGISTER_SURFACE_LOAD_STORE |
                                    CUCORE_GRAPHICS_REGISTER_TEXTURE_GATHER;

// Registration flags: known bits, and the combinations the driver takes (images may use all bits).
void check_register_flags(uint32_t flags, bool is_image) {
    capi::check_flags(flags, kRegisterFlags, "flags");
    if ((flags & CUCORE_GRAPHICS_REGISTER_READ_ONLY) && (flags & CUCORE_GRAPHICS_REGISTER_WRITE_DISCARD))
        core::throw_invalid_argument("argument 'flags' combines READ_ONLY with WRITE_DISCARD");
    if (!is_image &&
        (flags & (CUCORE_GRAPHICS_REGISTER_SURFACE_LOAD_STORE | CUCORE_GRAPHICS_REGISTER_TEXTURE_GATHER)))
        core::throw_invalid_argument("argument 'flags' has SURFACE_LOAD_STORE or TEXTURE_GATHER, which apply to GL "
                                     "images only, not to GL buffers");
}

// A map hint (cucore_graphics_map_hint_t).
void check_map_hint(uint32_t hint) {
    if (hint > CUCORE_GRAPHICS_MAP_HINT_WRITE_DISCARD)
        core::throw_invalid_argument("argument 'hint' is " + std::to_string(hint) +
                                     "; it must be a cucore_graphics_map_hint_t (NONE, READ_ONLY or WRITE_DISCARD)");
}
}  // namespace

extern "C" {

cucore_status_t cucore_graphics_resource_from_gl_buffer(cucore_device_t *device, uint32_t gl_name, uint32_t flags,
                                                        cucore_graphics_resource_t **resource) {
    return capi::guarded(__func__, [&] {
        cucore_graphics_resource_t *&result = capi::out(resource, "resource");
        core::Device &object = capi::get(device, "device");
        check_register_flags(flags, false);
        result = capi::give<cucore_graphics_resource_t>(core::GraphicsResource::from_gl_buffer(object, gl_name, flags));
    });
}

cucore_status_t cucore_graphics_resource_from_gl_image(cucore_device_t *device, uint32_t gl_name, uint32_t gl_target,
                                                       uint32_t flags, cucore_graphics_resource_t **resource) {
    return capi::guarded(__func__, [&] {
        cucore_graphics_resource_t *&result = capi::out(resource, "resource");
        core::Device &object = capi::get(device, "device");
        check_register_flags(flags, true);
        result = capi::give<cucore_graphics_resource_t>(
            core::GraphicsResource::from_gl_image(object, gl_name, gl_target, flags));
    });
}

cucore_status_t cucore_graphics_resource_map(cucore_graphics_resource_t *resource, cucore_stream_t *stream,
                                             uint32_t hint, cucore_buffer_t **buffer) {
    return capi::guarded(__func__, [&] {
        cucore_buffer_t *&result = capi::out(buffer, "buffer");
        core::GraphicsResource &object = capi::get(resource, "resource");
        core::Stream &on = capi::get(stream, "stream");
        check_map_hint(hint);
        result = capi::give<cucore_buffer_t>(object.map(on, hint));
    });
}

cucore_status_t cucore_graphics_resources_map(cucore_graphics_resource_t *const *resources, uint32_t count,
                                              cucore_stream_t *stream, cucore_buffer_t **buffers) {
    return capi::guarded(__func__, [&] {
        capi::require(buffers, "buffers");
        for (uint32_t i = 0; i < count; ++i) buffers[i] = nullptr;
        capi::require(resources, "resources");
        std::vector<core::GraphicsResource *> objects = capi::get_all(resources, count, "resources");
        std::vector<core::Ref<core::Buffer>> mapped =
            core::GraphicsResource::map_many(objects, capi::get(stream, "stream"));
        for (uint32_t i = 0; i < count; ++i) buffers[i] = capi::give<cucore_buffer_t>(std::move(mapped[i]));
    });
}

cucore_status_t cucore_graphics_resources_unmap(cucore_graphics_resource_t *const *resources, uint32_t count,
                                                cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        capi::require(resources, "resources");
        core::GraphicsResource::unmap_many(capi::get_all(resources, count, "resources"), capi::get_optional(stream, "stream"));
    });
}

cucore_status_t cucore_graphics_resource_map_array(cucore_graphics_resource_t *resource, cucore_stream_t *stream,
                                                   uint32_t hint, uint32_t array_index, uint32_t mip_level,
                                                   cucore_opaque_array_t **array) {
    return capi::guarded(__func__, [&] {
        cucore_opaque_array_t *&result = capi::out(array, "array");
        core::GraphicsResource &object = capi::get(resource, "resource");
        core::Stream &on = capi::get(stream, "stream");
        check_map_hint(hint);
        result = capi::give<cucore_opaque_array_t>(object.map_array(on, hint, array_index, mip_level));
    });
}

cucore_status_t cucore_graphics_resource_map_mipmapped_array(cucore_graphics_resource_t *resource,
                                                             cucore_stream_t *stream, uint32_t hint,
                                                             cucore_mipmapped_array_t **mipmapped_array) {
    return capi::guarded(__func__, [&] {
        cucore_mipmapped_array_t *&result = capi::out(mipmapped_array, "mipmapped_array");
        core::GraphicsResource &object = capi::get(resource, "resource");
        core::Stream &on = capi::get(stream, "stream");
        check_map_hint(hint);
        result = capi::give<cucore_mipmapped_array_t>(object.map_mipmapped_array(on, hint));
    });
}

cucore_status_t cucore_graphics_resource_unmap(cucore_graphics_resource_t *resource, cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        core::GraphicsResource &object = capi::get(resource, "resource");
        object.unmap(capi::get_optional(stream, "stream"));
    });
}

cucore_status_t cucore_graphics_resource_is_mapped(const cucore_graphics_resource_t *resource, int *is_mapped) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(is_mapped, "is_mapped");
        result = capi::get(resource, "resource").is_mapped() ? 1 : 0;
    });
}

cucore_status_t cucore_graphics_resource_close(cucore_graphics_resource_t *resource, cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        core::GraphicsResource &object = capi::get(resource, "resource");
        object.close(capi::get_optional(stream, "stream"));
    });
}

cucore_status_t cucore_graphics_resource_handle(const cucore_graphics_resource_t *resource,
                                                void **cu_graphics_resource) {
    return capi::guarded(__func__, [&] {
        void *&result = capi::out(cu_graphics_resource, "cu_graphics_resource");
        result = capi::get(resource, "resource").cu();
    });
}

cucore_status_t cucore_gl_get_devices(uint32_t device_list, int *ordinals, uint32_t capacity, uint32_t *count) {
    return capi::guarded(__func__, [&] {
        uint32_t &result = capi::out(count, "count");
        if (device_list < CUCORE_GL_DEVICES_ALL || device_list > CUCORE_GL_DEVICES_NEXT_FRAME)
            core::throw_invalid_argument("argument 'device_list' is " + std::to_string(device_list) +
                                         "; it must be a cucore_gl_device_list_t (ALL, CURRENT_FRAME or NEXT_FRAME)");
        capi::require_array(ordinals, capacity, "ordinals", "capacity");
        result = core::gl_devices(device_list, ordinals, capacity);
    });
}

}  // extern "C"
