// C ABI: device resources (SM and workqueue resources, SM splits).
#include "capi/capi.hpp"
#include "core/device_resources.hpp"

using namespace cucore;

namespace {
constexpr cucore_sm_resource_split_options_t kSplitDefaults = CUCORE_SM_RESOURCE_SPLIT_OPTIONS_INIT;
constexpr cucore_workqueue_resource_options_t kWorkqueueDefaults = CUCORE_WORKQUEUE_RESOURCE_OPTIONS_INIT;

cucore_sm_resource_split_options_t split_options(const cucore_sm_resource_split_options_t *options) {
    cucore_sm_resource_split_options_t resolved = capi::read_options(options, kSplitDefaults, "options");
    capi::check_flags(resolved.flags,
                      CUCORE_SM_SPLIT_IGNORE_SM_COSCHEDULING | CUCORE_SM_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE,
                      "options.flags");
    return resolved;
}

cucore_workqueue_resource_options_t workqueue_options(const cucore_workqueue_resource_options_t *options) {
    cucore_workqueue_resource_options_t resolved = capi::read_options(options, kWorkqueueDefaults, "options");
    resolved.sharing_scope = capi::check_enum_range(
        resolved.sharing_scope, CUCORE_WORKQUEUE_SHARING_SCOPE_UNSET, CUCORE_WORKQUEUE_SHARING_SCOPE_GREEN_CTX_BALANCED,
        "options.sharing_scope", "must be a cucore_workqueue_sharing_scope_t (UNSET, DEVICE_CTX, GREEN_CTX_BALANCED)");
    return resolved;
}
}  // namespace

extern "C" {

cucore_status_t cucore_sm_resource_of_device(cucore_device_t *device, cucore_sm_resource_t **resource) {
    return capi::guarded(__func__, [&] {
        cucore_sm_resource_t *&result = capi::out(resource, "resource");
        result = capi::give<cucore_sm_resource_t>(core::SmResource::of_device(capi::get(device, "device")));
    });
}

cucore_status_t cucore_sm_resource_of_context(cucore_context_t *context, cucore_sm_resource_t **resource) {
    return capi::guarded(__func__, [&] {
        cucore_sm_resource_t *&result = capi::out(resource, "resource");
        result = capi::give<cucore_sm_resource_t>(core::SmResource::of_context(capi::get(context, "context")));
    });
}

cucore_status_t cucore_sm_resource_of_stream(cucore_stream_t *stream, cucore_sm_resource_t **resource) {
    return capi::guarded(__func__, [&] {
        cucore_sm_resource_t *&result = capi::out(resource, "resource");
        result = capi::give<cucore_sm_resource_t>(
            core::SmResource::of_context(capi::get(stream, "stream").context()));
    });
}

cucore_status_t cucore_sm_resource_info(const cucore_sm_resource_t *resource, cucore_sm_resource_info_t *info) {
    return capi::guarded(__func__, [&] {
        capi::require(info, "info");
        core::SmResource &object = capi::get(resource, "resource");
        capi::write_versioned(info, object.info(), "info", "CUCORE_SM_RESOURCE_INFO_INIT");
    });
}

cucore_status_t cucore_sm_resource_split(const cucore_sm_resource_t *resource,
                                         const cucore_sm_resource_split_options_t *options,
                                         cucore_sm_resource_t **groups, uint32_t capacity, uint32_t *group_count,
                                         cucore_sm_resource_t **remainder) {
    return capi::guarded(__func__, [&] {
        uint32_t &count = capi::out(group_count, "group_count");
        cucore_sm_resource_t **rest = capi::optional_out(remainder);
        capi::require(groups, "groups");
        if (capacity == 0) core::throw_invalid_argument("argument 'capacity' is 0: there is no room for a group");
        for (uint32_t i = 0; i < capacity; ++i) groups[i] = nullptr;
        core::SmResource &object = capi::get(resource, "resource");
        const cucore_sm_resource_split_options_t resolved = split_options(options);
        if (resolved.group_count > capacity)
            core::throw_invalid_argument("options.group_count (" + std::to_string(resolved.group_count) +
                                         ") is more groups than argument 'capacity' (" + std::to_string(capacity) +
                                         ") has room for");
        std::vector<core::Ref<core::SmResource>> made;
        core::Ref<core::SmResource> left;
        object.split(resolved, capacity, true, &made, rest ? &left : nullptr);
        // Nothing can fail from here: the handles go out.
        for (size_t i = 0; i < made.size(); ++i) groups[i] = capi::give<cucore_sm_resource_t>(std::move(made[i]));
        count = static_cast<uint32_t>(made.size());
        if (rest) *rest = capi::give<cucore_sm_resource_t>(std::move(left));
    });
}

cucore_status_t cucore_sm_resource_split_dry_run(const cucore_sm_resource_t *resource,
                                                 const cucore_sm_resource_split_options_t *options,
                                                 cucore_sm_resource_split_info_t *info) {
    return capi::guarded(__func__, [&] {
        capi::require(info, "info");
        core::SmResource &object = capi::get(resource, "resource");
        const cucore_sm_resource_split_options_t resolved = split_options(options);
        capi::write_versioned(info, object.split(resolved, 0, false, nullptr, nullptr), "info",
                              "CUCORE_SM_RESOURCE_SPLIT_INFO_INIT");
    });
}

cucore_status_t cucore_workqueue_resource_of_device(cucore_device_t *device, cucore_workqueue_resource_t **resource) {
    return capi::guarded(__func__, [&] {
        cucore_workqueue_resource_t *&result = capi::out(resource, "resource");
        result = capi::give<cucore_workqueue_resource_t>(
            core::WorkqueueResource::of_device(capi::get(device, "device")));
    });
}

cucore_status_t cucore_workqueue_resource_of_context(cucore_context_t *context,
                                                     cucore_workqueue_resource_t **resource) {
    return capi::guarded(__func__, [&] {
        cucore_workqueue_resource_t *&result = capi::out(resource, "resource");
        result = capi::give<cucore_workqueue_resource_t>(
            core::WorkqueueResource::of_context(capi::get(context, "context")));
    });
}

cucore_status_t cucore_workqueue_resource_of_stream(cucore_stream_t *stream, cucore_workqueue_resource_t **resource) {
    return capi::guarded(__func__, [&] {
        cucore_workqueue_resource_t *&result = capi::out(resource, "resource");
        result = capi::give<cucore_workqueue_resource_t>(
            core::WorkqueueResource::of_context(capi::get(stream, "stream").context()));
    });
}

cucore_status_t cucore_workqueue_resource_info(const cucore_workqueue_resource_t *resource,
                                               cucore_workqueue_resource_info_t *info) {
    return capi::guarded(__func__, [&] {
        capi::require(info, "info");
        core::WorkqueueResource &object = capi::get(resource, "resource");
        capi::write_versioned(info, object.info(), "info", "CUCORE_WORKQUEUE_RESOURCE_INFO_INIT");
    });
}

cucore_status_t cucore_workqueue_resource_configure(cucore_workqueue_resource_t *resource,
                                                    const cucore_workqueue_resource_options_t *options) {
    return capi::guarded(__func__, [&] {
        core::WorkqueueResource &object = capi::get(resource, "resource");
        object.configure(workqueue_options(options));
    });
}

cucore_status_t cucore_workqueue_resource_device(const cucore_workqueue_resource_t *resource,
                                                 cucore_device_t **device) {
    return capi::guarded(__func__, [&] {
        cucore_device_t *&result = capi::out(device, "device");
        result = capi::give<cucore_device_t>(capi::get(resource, "resource").device_ref());
    });
}

}  // extern "C"
