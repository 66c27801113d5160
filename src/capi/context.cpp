// C ABI: contexts.
#include "capi/capi.hpp"

using namespace cucore;

extern "C" {

cucore_status_t cucore_context_get_primary(cucore_device_t *device, cucore_context_t **context) {
    return capi::guarded(__func__, [&] {
        cucore_context_t *&result = capi::out(context, "context");
        core::Device &object = capi::get(device, "device");
        result = capi::give<cucore_context_t>(object.primary_context());
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
