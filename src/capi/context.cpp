// C ABI: contexts.
#include "capi/capi.hpp"
#include "core/device_resources.hpp"

using namespace cucore;

namespace {
constexpr cucore_context_options_t kContextDefaults = CUCORE_CONTEXT_OPTIONS_INIT;
}  // namespace

extern "C" {

cucore_status_t cucore_context_get_primary(cucore_device_t *device, cucore_context_t **context) {
    return capi::guarded(__func__, [&] {
        cucore_context_t *&result = capi::out(context, "context");
        core::Device &object = capi::get(device, "device");
        result = capi::give<cucore_context_t>(object.primary_context());
    });
}

cucore_status_t cucore_context_create(cucore_device_t *device, const cucore_context_options_t *options,
                                      cucore_context_t **context) {
    return capi::guarded(__func__, [&] {
        cucore_context_t *&result = capi::out(context, "context");
        core::Device &object = capi::get(device, "device");
        capi::require(options, "options");  // a green context needs resources: no defaults
        const cucore_context_options_t resolved = capi::read_options(options, kContextDefaults, "options");
        capi::require_zero(resolved.reserved, "options.reserved");
        const std::vector<core::SmResource *> sm =
            capi::get_all(resolved.sm_resources, resolved.sm_resource_count, "options.sm_resources");
        const std::vector<core::WorkqueueResource *> workqueues = capi::get_all(
            resolved.workqueue_resources, resolved.workqueue_resource_count, "options.workqueue_resources");
        result = capi::give<cucore_context_t>(core::Context::create_green(object, sm, workqueues));
    });
}

cucore_status_t cucore_context_is_green(const cucore_context_t *context, int *is_green) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(is_green, "is_green");
        result = capi::get(context, "context").is_green() ? 1 : 0;
    });
}

cucore_status_t cucore_context_green_handle(const cucore_context_t *context, void **cu_green_context) {
    return capi::guarded(__func__, [&] {
        void *&result = capi::out(cu_green_context, "cu_green_context");
        result = capi::get(context, "context").green();
    });
}

cucore_status_t cucore_context_get_current(cucore_context_t **context) {
    return capi::guarded(__func__, [&] {
        cucore_context_t *&result = capi::out(context, "context");
        if (core::Ref<core::Context> current = core::Context::current_if_any())
            result = capi::give<cucore_context_t>(std::move(current));
    });
}

cucore_status_t cucore_context_from_handle(void *cu_context, cucore_release_fn on_release, void *user_data,
                                           cucore_context_t **context) {
    return capi::guarded(__func__, [&] {
        cucore_context_t *&result = capi::out(context, "context");
        capi::require(cu_context, "cu_context");
        result = capi::give<cucore_context_t>(
            core::Context::wrap(static_cast<CUcontext>(cu_context), on_release, user_data));
    });
}

cucore_status_t cucore_context_handle(const cucore_context_t *context, void **cu_context) {
    return capi::guarded(__func__, [&] {
        void *&result = capi::out(cu_context, "cu_context");
        result = capi::get(context, "context").cu();
    });
}

cucore_status_t cucore_context_device(const cucore_context_t *context, cucore_device_t **device) {
    return capi::guarded(__func__, [&] {
        cucore_device_t *&result = capi::out(device, "device");
        result = capi::give<cucore_device_t>(capi::get(context, "context").device_ref());
    });
}

cucore_status_t cucore_context_is_primary(const cucore_context_t *context, int *is_primary) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(is_primary, "is_primary");
        result = capi::get(context, "context").is_primary() ? 1 : 0;
    });
}

cucore_status_t cucore_context_set_current(cucore_context_t *context) {
    return capi::guarded(__func__, [&] { capi::get(context, "context").set_current(); });
}

cucore_status_t cucore_context_synchronize(cucore_context_t *context) {
    return capi::guarded(__func__, [&] { capi::get(context, "context").synchronize(); });
}

}  // extern "C"
