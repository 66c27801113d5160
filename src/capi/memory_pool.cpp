// C ABI: stream-ordered memory pools: device and pinned pools, pool attributes, trim, peer access.
#include "capi/capi.hpp"
#include "core/memory_pool.hpp"

#include <optional>

using namespace cucore;

namespace {
constexpr cucore_device_memory_resource_options_t kPoolDefaults = CUCORE_DEVICE_MEMORY_RESOURCE_OPTIONS_INIT;
constexpr cucore_pinned_memory_resource_options_t kPinnedDefaults = CUCORE_PINNED_MEMORY_RESOURCE_OPTIONS_INIT;

// A pool attribute, and for a set the value it may take: the current usage is read-only, a high-water
// mark is reset with 0, a reuse flag is 0 or 1.
cucore_pool_attribute_t check_pool_attribute(const cucore_pool_attribute_t &argument, const uint64_t *set_to) {
    const cucore_pool_attribute_t attribute =
        capi::check_enum_range(argument, CUCORE_POOL_ATTRIBUTE_REUSE_FOLLOW_EVENT_DEPENDENCIES,
                               CUCORE_POOL_ATTRIBUTE_USED_MEM_HIGH, "attribute", "is not a pool attribute");
    if (!set_to) return attribute;
    const uint64_t value = *set_to;
    if (attribute == CUCORE_POOL_ATTRIBUTE_RESERVED_MEM_CURRENT || attribute == CUCORE_POOL_ATTRIBUTE_USED_MEM_CURRENT)
        core::throw_invalid_argument("argument 'attribute' is read-only (" +
                                     std::to_string(static_cast<int>(attribute)) + ")");
    const bool resettable =
        attribute == CUCORE_POOL_ATTRIBUTE_RESERVED_MEM_HIGH || attribute == CUCORE_POOL_ATTRIBUTE_USED_MEM_HIGH;
    if (resettable && value != 0)
        core::throw_invalid_argument("a high-water mark can only be reset to 0, not set to " + std::to_string(value));
    if (core::is_pool_flag(attribute) && value > 1)
        core::throw_invalid_argument("argument 'value' must be 0 or 1 for a reuse flag, not " + std::to_string(value));
    return attribute;
}

}  // namespace

extern "C" {

cucore_status_t cucore_device_memory_resource_get_default(cucore_device_t *device,
                                                          cucore_memory_resource_t **resource) {
    return capi::guarded(__func__, [&] {
        cucore_memory_resource_t *&result = capi::out(resource, "resource");
        core::Device &object = capi::get(device, "device");
        result = capi::give<cucore_memory_resource_t>(core::PoolResource::device_current(object));
    });
}

cucore_status_t cucore_device_memory_resource_create(cucore_device_t *device,
                                                     const cucore_device_memory_resource_options_t *options,
                                                     cucore_memory_resource_t **resource) {
    return capi::guarded(__func__, [&] {
        cucore_memory_resource_t *&result = capi::out(resource, "resource");
        core::Device &object = capi::get(device, "device");
        cucore_device_memory_resource_options_t resolved = capi::read_options(options, kPoolDefaults, "options");
        capi::require_zero(resolved.reserved0, "options.reserved0");
        capi::require_zero(resolved.reserved1, "options.reserved1");
        capi::check_switch(resolved.ipc_enabled, "options.ipc_enabled");
        result = capi::give<cucore_memory_resource_t>(core::PoolResource::device_pool(
            object, {resolved.max_size, resolved.release_threshold, resolved.ipc_enabled != 0}));
    });
}

cucore_status_t cucore_pinned_memory_resource_get_default(cucore_device_t *device,
                                                          cucore_memory_resource_t **resource) {
    return capi::guarded(__func__, [&] {
        cucore_memory_resource_t *&result = capi::out(resource, "resource");
        core::Device &object = capi::get(device, "device");
        result = capi::give<cucore_memory_resource_t>(core::PoolResource::host_current(object));
    });
}

cucore_status_t cucore_pinned_memory_resource_create(cucore_device_t *device,
                                                     const cucore_pinned_memory_resource_options_t *options,
                                                     cucore_memory_resource_t **resource) {
    return capi::guarded(__func__, [&] {
        cucore_memory_resource_t *&result = capi::out(resource, "resource");
        core::Device &object = capi::get(device, "device");
        cucore_pinned_memory_resource_options_t resolved = capi::read_options(options, kPinnedDefaults, "options");
        capi::check_switch(resolved.ipc_enabled, "options.ipc_enabled");
        capi::check_switch(resolved.use_numa_id, "options.use_numa_id");
        if (resolved.use_numa_id && resolved.numa_id < 0)
            core::throw_invalid_argument("argument 'options.numa_id' is " + std::to_string(resolved.numa_id) +
                                         "; with use_numa_id it must be a NUMA node (>= 0)");
        const std::optional<int> numa_id =
            resolved.use_numa_id ? std::optional<int>(resolved.numa_id) : std::nullopt;  // numa_id unread without it
        result = capi::give<cucore_memory_resource_t>(core::PoolResource::pinned_pool(
            object, {resolved.max_size, resolved.release_threshold, resolved.ipc_enabled != 0}, numa_id));
    });
}

cucore_status_t cucore_memory_resource_pool_attribute(const cucore_memory_resource_t *resource,
                                                      cucore_pool_attribute_t attribute, uint64_t *value) {
    return capi::guarded(__func__, [&] {
        uint64_t &result = capi::out(value, "value");
        const core::MemoryResource &object = capi::get(resource, "resource");
        result = object.pool_attribute(check_pool_attribute(attribute, nullptr));
    });
}

cucore_status_t cucore_memory_resource_set_pool_attribute(cucore_memory_resource_t *resource,
                                                          cucore_pool_attribute_t attribute, uint64_t value) {
    return capi::guarded(__func__, [&] {
        core::MemoryResource &object = capi::get(resource, "resource");
        object.set_pool_attribute(check_pool_attribute(attribute, &value), value);
    });
}

cucore_status_t cucore_memory_resource_trim(cucore_memory_resource_t *resource, uint64_t min_bytes_to_keep) {
    return capi::guarded(__func__, [&] { capi::get(resource, "resource").trim(min_bytes_to_keep); });
}

cucore_status_t cucore_memory_resource_owns_pool(const cucore_memory_resource_t *resource, int *owns_pool) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(owns_pool, "owns_pool");
        result = capi::get(resource, "resource").owns_pool() ? 1 : 0;
    });
}

cucore_status_t cucore_memory_resource_set_peer_access(cucore_memory_resource_t *resource, cucore_device_t *peer,
                                                       cucore_access_t access) {
    return capi::guarded(__func__, [&] {
        core::MemoryResource &object = capi::get(resource, "resource");
        core::Device &device = capi::get(peer, "peer");
        object.set_peer_access(device, capi::check_access(access, "access"));
    });
}

cucore_status_t cucore_memory_resource_peer_access(const cucore_memory_resource_t *resource, cucore_device_t *peer,
                                                   cucore_access_t *access) {
    return capi::guarded(__func__, [&] {
        cucore_access_t &result = capi::out(access, "access");
        core::MemoryResource &object = capi::get(resource, "resource");
        result = object.peer_access(capi::get(peer, "peer"));
    });
}

}  // extern "C"
