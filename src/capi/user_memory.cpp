// C ABI: user-defined memory resources.
#include "capi/capi.hpp"
#include "core/user_memory.hpp"

using namespace cucore;

namespace {
constexpr cucore_memory_resource_callbacks_t kCallbackDefaults = CUCORE_MEMORY_RESOURCE_CALLBACKS_INIT;
}  // namespace

extern "C" {

cucore_status_t cucore_user_memory_resource_create(const cucore_memory_resource_callbacks_t *callbacks,
                                                   cucore_memory_resource_t **resource) {
    return capi::guarded(__func__, [&] {
        cucore_memory_resource_t *&result = capi::out(resource, "resource");
        capi::require(callbacks, "callbacks");
        cucore_memory_resource_callbacks_t resolved = capi::read_options(callbacks, kCallbackDefaults, "callbacks");
        capi::require_zero(resolved.reserved0, "callbacks.reserved0");
        capi::require(resolved.allocate, "callbacks.allocate");
        capi::require(resolved.deallocate, "callbacks.deallocate");
        if (resolved.device_id < -1)
            core::throw_invalid_argument("argument 'callbacks.device_id' is " + std::to_string(resolved.device_id) +
                                         "; it must be a device ordinal or -1 (host memory)");
        capi::check_switch(resolved.device_accessible, "callbacks.device_accessible");
        capi::check_switch(resolved.host_accessible, "callbacks.host_accessible");
        capi::check_switch(resolved.managed, "callbacks.managed");
        result = capi::give<cucore_memory_resource_t>(core::UserResource::create(resolved));
    });
}

}  // extern "C"
