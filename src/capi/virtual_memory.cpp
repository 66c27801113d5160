// C ABI: virtual memory resources.
#include "capi/capi.hpp"
#include "core/virtual_memory.hpp"

using namespace cucore;

namespace {
constexpr cucore_virtual_memory_resource_options_t kVirtualDefaults = CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT;
}  // namespace

extern "C" {

cucore_status_t cucore_virtual_memory_resource_create(cucore_device_t *device,
                                                      const cucore_virtual_memory_resource_options_t *options,
                                                      cucore_memory_resource_t **resource) {
    return capi::guarded(__func__, [&] {
        cucore_memory_resource_t *&result = capi::out(resource, "resource");
        core::Device &object = capi::get(device, "device");
        cucore_virtual_memory_resource_options_t resolved = capi::read_options(options, kVirtualDefaults, "options");
        capi::require_zero(resolved.reserved0, "options.reserved0");
        capi::require_zero(resolved.reserved1, "options.reserved1");
        capi::check_switch(resolved.minimum_granularity, "options.minimum_granularity");
        capi::check_switch(resolved.posix_fd_shareable, "options.posix_fd_shareable");
        capi::check_switch(resolved.gpu_direct_rdma, "options.gpu_direct_rdma");
        capi::check_switch(resolved.fabric_shareable, "options.fabric_shareable");
        if (resolved.address_alignment & (resolved.address_alignment - 1))
            core::throw_invalid_argument("argument 'options.address_alignment' must be 0 or a power of two");
        capi::check_access(resolved.self_access, "options.self_access");  // NONE: the default, READ_WRITE
        switch (core::enum_value(resolved.location_type)) {
            case CUCORE_LOCATION_NONE:  // the default: the resource's device
            case CUCORE_LOCATION_DEVICE:
            case CUCORE_LOCATION_HOST: break;
            case CUCORE_LOCATION_HOST_NUMA:
                capi::check_location({resolved.location_type, resolved.location_id}, "options.location");
                break;
            default:
                core::throw_invalid_argument("argument 'options.location_type' must be NONE (the default: DEVICE), "
                                             "DEVICE, HOST or HOST_NUMA");
        }
        result = capi::give<cucore_memory_resource_t>(core::VirtualResource::create(object, resolved));
    });
}

}  // extern "C"
