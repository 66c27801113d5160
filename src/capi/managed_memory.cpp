// C ABI: managed memory: its resource, and managed buffers' advice, prefetch and discard.
#include "capi/capi.hpp"
#include "core/buffer.hpp"
#include "core/managed_memory.hpp"
#include "core/memory_pool.hpp"

using namespace cucore;

namespace {
constexpr cucore_managed_memory_resource_options_t kManagedDefaults = CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
}  // namespace

extern "C" {

cucore_status_t cucore_managed_memory_resource_get_default(cucore_device_t *device,
                                                          cucore_memory_resource_t **resource) {
    return capi::guarded(__func__, [&] {
        cucore_memory_resource_t *&result = capi::out(resource, "resource");
        core::Device &object = capi::get(device, "device");
        result = capi::give<cucore_memory_resource_t>(core::PoolResource::managed_current(object));
    });
}

cucore_status_t cucore_managed_memory_resource_create(cucore_device_t *device,
                                                      const cucore_managed_memory_resource_options_t *options,
                                                      cucore_memory_resource_t **resource) {
    return capi::guarded(__func__, [&] {
        cucore_memory_resource_t *&result = capi::out(resource, "resource");
        core::Device &object = capi::get(device, "device");
        cucore_managed_memory_resource_options_t resolved = capi::read_options(options, kManagedDefaults, "options");
        capi::check_switch(resolved.use_pool, "options.use_pool");
        if (!resolved.use_pool && (resolved.max_size || resolved.release_threshold))
            core::throw_invalid_argument("options 'max_size' and 'release_threshold' apply to managed pools only "
                                         "(options.use_pool = 1)");
        const int32_t preferred_type = core::enum_value(resolved.preferred_location.type);
        if (preferred_type != CUCORE_LOCATION_NONE) {  // NONE: no preferred location
            if (preferred_type == CUCORE_LOCATION_HOST_NUMA_CURRENT)
                core::throw_invalid_argument("argument 'options.preferred_location' cannot be the current NUMA node");
            capi::check_location(resolved.preferred_location, "options.preferred_location");
        }
        result = capi::give<cucore_memory_resource_t>(core::make_managed_resource(object, resolved));
    });
}

cucore_status_t cucore_buffer_advise(cucore_buffer_t *buffer, cucore_memory_advice_t advice,
                                     cucore_location_t location) {
    return capi::guarded(__func__, [&] {
        core::Buffer &object = capi::get(buffer, "buffer");
        const cucore_memory_advice_t known = capi::check_enum_range(
            advice, CUCORE_ADVICE_SET_READ_MOSTLY, CUCORE_ADVICE_UNSET_ACCESSED_BY, "advice", "is unknown");
        if (core::advice_takes_location(known)) capi::check_location(location, "location");
        object.advise(known, location);
    });
}

cucore_status_t cucore_buffer_advice(const cucore_buffer_t *buffer, int *read_mostly,
                                     cucore_location_t *preferred_location) {
    return capi::guarded(__func__, [&] {
        int *read_mostly_out = capi::optional_out(read_mostly);  // cleared before the handle is checked
        cucore_location_t *location_out = capi::optional_out(preferred_location);
        capi::get(buffer, "buffer").advice(read_mostly_out, location_out);
    });
}

cucore_status_t cucore_buffer_is_accessed_by(const cucore_buffer_t *buffer, cucore_location_t location,
                                             int *accessed_by) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(accessed_by, "accessed_by");
        const core::Buffer &object = capi::get(buffer, "buffer");
        const int32_t type = core::enum_value(location.type);
        if (type != CUCORE_LOCATION_DEVICE && type != CUCORE_LOCATION_HOST)
            core::throw_invalid_argument(
                "argument 'location' must be a device or the host: accessed-by is kept per processor");
        capi::check_location(location, "location");
        result = object.is_accessed_by(location) ? 1 : 0;
    });
}

cucore_status_t cucore_buffer_last_prefetch_location(const cucore_buffer_t *buffer, cucore_location_t *location) {
    return capi::guarded(__func__, [&] {
        cucore_location_t &result = capi::out(location, "location");
        result = capi::get(buffer, "buffer").last_prefetch_location();
    });
}

cucore_status_t cucore_buffer_prefetch(cucore_buffer_t *buffer, cucore_location_t location, cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        core::Buffer &object = capi::get(buffer, "buffer");
        core::Stream &on = capi::get(stream, "stream");
        capi::check_location(location, "location");
        object.prefetch(location, on);
    });
}

cucore_status_t cucore_buffer_discard(cucore_buffer_t *buffer, const cucore_location_t *prefetch_location,
                                      cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        core::Buffer &object = capi::get(buffer, "buffer");
        core::Stream &on = capi::get(stream, "stream");
        if (prefetch_location) capi::check_location(*prefetch_location, "prefetch_location");
        object.discard(prefetch_location, on);
    });
}

}  // extern "C"
