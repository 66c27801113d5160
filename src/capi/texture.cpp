// C ABI: texture and surface objects.
#include <cmath>

#include "capi/capi.hpp"
#include "core/texture.hpp"

using namespace cucore;

namespace {

constexpr cucore_resource_descriptor_t kResourceDefaults = CUCORE_RESOURCE_DESCRIPTOR_INIT;
constexpr cucore_texture_object_options_t kTextureDefaults = CUCORE_TEXTURE_OBJECT_OPTIONS_INIT;

const char *kind_name(cucore_resource_kind_t kind) {
    switch (kind) {
        case CUCORE_RESOURCE_KIND_OPAQUE_ARRAY: return "OPAQUE_ARRAY";
        case CUCORE_RESOURCE_KIND_MIPMAPPED_ARRAY: return "MIPMAPPED_ARRAY";
        case CUCORE_RESOURCE_KIND_LINEAR: return "LINEAR";
        default: return "PITCH_2D";
    }
}

// A field another kind uses must be left zero.
template <class Value>
void unused(const Value &value, const char *field, cucore_resource_kind_t kind) {
    if (value != Value{})
        core::throw_invalid_argument(std::string("resource.") + field + " is set, but a " + kind_name(kind) +
                                     " resource does not use it (leave it 0/NULL)");
}

// A resource descriptor: the fields of its kind set, the others zero; the handles it names resolved.
core::ResourceRequest read_resource(const cucore_resource_descriptor_t *descriptor) {
    capi::require(descriptor, "resource");
    const cucore_resource_descriptor_t resource = capi::read_options(descriptor, kResourceDefaults, "resource");
    core::ResourceRequest request;
    request.kind = capi::check_enum_range(resource.kind, CUCORE_RESOURCE_KIND_OPAQUE_ARRAY,
                                          CUCORE_RESOURCE_KIND_PITCH_2D, "resource.kind",
                                          "must be a cucore_resource_kind_t (OPAQUE_ARRAY, MIPMAPPED_ARRAY, LINEAR "
                                          "or PITCH_2D)");
    const cucore_resource_kind_t kind = request.kind;
    const bool array = kind == CUCORE_RESOURCE_KIND_OPAQUE_ARRAY, mipmapped = kind == CUCORE_RESOURCE_KIND_MIPMAPPED_ARRAY;
    if (array) {
        request.array = &capi::get(resource.array, "resource.array");
    } else {
        unused(resource.array, "array", kind);
    }
    if (mipmapped) {
        request.mipmapped_array = &capi::get(resource.mipmapped_array, "resource.mipmapped_array");
    } else {
        unused(resource.mipmapped_array, "mipmapped_array", kind);
    }
    if (array || mipmapped) {
        unused(resource.buffer, "buffer", kind);
        unused(static_cast<int32_t>(core::enum_value(resource.format)), "format", kind);
        unused(resource.num_channels, "num_channels", kind);
        unused(resource.size_bytes, "size_bytes", kind);
        unused(resource.width, "width", kind);
        unused(resource.height, "height", kind);
        unused(resource.pitch_bytes, "pitch_bytes", kind);
        return request;
    }
    request.buffer = &capi::get(resource.buffer, "resource.buffer");
    request.format = capi::check_array_format(resource.format, "resource.format", true);
    request.num_channels = resource.num_channels;
    if (kind == CUCORE_RESOURCE_KIND_LINEAR) {
        request.size_bytes = resource.size_bytes;
        unused(resource.width, "width", kind);
        unused(resource.height, "height", kind);
        unused(resource.pitch_bytes, "pitch_bytes", kind);
    } else {
        unused(resource.size_bytes, "size_bytes", kind);
        request.width = resource.width;
        request.height = resource.height;
        request.pitch_bytes = resource.pitch_bytes;
    }
    return request;
}

void check_finite(float value, const char *field) {
    if (!std::isfinite(value))
        core::throw_invalid_argument(std::string("argument '") + field + "' is not a finite number");
}

cucore_filter_mode_t check_filter(const cucore_filter_mode_t &mode, const char *field) {
    return capi::check_enum_range(mode, CUCORE_FILTER_MODE_POINT, CUCORE_FILTER_MODE_LINEAR, field,
                                  "must be CUCORE_FILTER_MODE_POINT or CUCORE_FILTER_MODE_LINEAR");
}

// Texture options: every field's own values (what needs the resource is core's).
cucore_texture_object_options_t read_texture_options(const cucore_texture_object_options_t *options) {
    cucore_texture_object_options_t resolved = capi::read_options(options, kTextureDefaults, "options");
    static const char *const address_fields[3] = {"options.address_mode[0]", "options.address_mode[1]",
                                                  "options.address_mode[2]"};
    for (int i = 0; i < 3; ++i)
        resolved.address_mode[i] = capi::check_enum_range(
            resolved.address_mode[i], CUCORE_ADDRESS_MODE_CLAMP, CUCORE_ADDRESS_MODE_BORDER, address_fields[i],
            "must be CUCORE_ADDRESS_MODE_CLAMP, _WRAP, _MIRROR or _BORDER");
    resolved.filter_mode = check_filter(resolved.filter_mode, "options.filter_mode");
    resolved.mipmap_filter_mode = check_filter(resolved.mipmap_filter_mode, "options.mipmap_filter_mode");
    resolved.read_mode = capi::check_enum_range(resolved.read_mode, CUCORE_READ_MODE_ELEMENT_TYPE,
                                                CUCORE_READ_MODE_NORMALIZED_FLOAT, "options.read_mode",
                                                "must be CUCORE_READ_MODE_ELEMENT_TYPE or _NORMALIZED_FLOAT");
    capi::check_switch(resolved.normalized_coords, "options.normalized_coords");
    capi::check_switch(resolved.srgb, "options.srgb");
    capi::check_switch(resolved.disable_trilinear_optimization, "options.disable_trilinear_optimization");
    capi::check_switch(resolved.seamless_cubemap, "options.seamless_cubemap");
    if (resolved.max_anisotropy > 16)
        core::throw_invalid_argument("argument 'options.max_anisotropy' is " +
                                     std::to_string(resolved.max_anisotropy) + "; it must be 0 to 16");
    check_finite(resolved.mipmap_level_bias, "options.mipmap_level_bias");
    check_finite(resolved.min_mipmap_level_clamp, "options.min_mipmap_level_clamp");
    check_finite(resolved.max_mipmap_level_clamp, "options.max_mipmap_level_clamp");
    static const char *const border_fields[4] = {"options.border_color[0]", "options.border_color[1]",
                                                 "options.border_color[2]", "options.border_color[3]"};
    for (int i = 0; i < 4; ++i) check_finite(resolved.border_color[i], border_fields[i]);
    return resolved;
}

}  // namespace

extern "C" {

cucore_status_t cucore_texture_object_create(cucore_device_t *device, const cucore_resource_descriptor_t *resource,
                                             const cucore_texture_object_options_t *options,
                                             cucore_texture_object_t **texture) {
    return capi::guarded(__func__, [&] {
        cucore_texture_object_t *&result = capi::out(texture, "texture");
        const core::Device *owner = capi::get_optional(device, "device");
        const core::ResourceRequest request = read_resource(resource);
        const cucore_texture_object_options_t resolved = read_texture_options(options);
        result = capi::give<cucore_texture_object_t>(
            core::TextureObject::create(core::TextureResource::resolve(request, owner), resolved));
    });
}

cucore_status_t cucore_texture_object_close(cucore_texture_object_t *texture) {
    return capi::guarded(__func__, [&] { capi::get(texture, "texture").close(); });
}

cucore_status_t cucore_texture_object_handle(const cucore_texture_object_t *texture, uint64_t *handle) {
    return capi::guarded(__func__, [&] {
        uint64_t &result = capi::out(handle, "handle");
        result = capi::get(texture, "texture").handle();
    });
}

cucore_status_t cucore_surface_object_create(cucore_device_t *device, const cucore_resource_descriptor_t *resource,
                                             cucore_surface_object_t **surface) {
    return capi::guarded(__func__, [&] {
        cucore_surface_object_t *&result = capi::out(surface, "surface");
        const core::Device *owner = capi::get_optional(device, "device");
        const core::ResourceRequest request = read_resource(resource);
        if (request.kind != CUCORE_RESOURCE_KIND_OPAQUE_ARRAY)
            core::throw_invalid_argument(std::string("resource.kind is ") + kind_name(request.kind) +
                                         "; a surface object needs an OPAQUE_ARRAY resource (array-backed)");
        result = capi::give<cucore_surface_object_t>(
            core::SurfaceObject::create(core::TextureResource::resolve(request, owner)));
    });
}

cucore_status_t cucore_surface_object_close(cucore_surface_object_t *surface) {
    return capi::guarded(__func__, [&] { capi::get(surface, "surface").close(); });
}

cucore_status_t cucore_surface_object_handle(const cucore_surface_object_t *surface, uint64_t *handle) {
    return capi::guarded(__func__, [&] {
        uint64_t &result = capi::out(handle, "handle");
        result = capi::get(surface, "surface").handle();
    });
}

}  // extern "C"
