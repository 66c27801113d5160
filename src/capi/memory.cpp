// C ABI: memory resources and buffers.
#include "capi/capi.hpp"
#include "core/copy_3d.hpp"
#include "core/memory_legacy_pinned.hpp"
#include "core/memory_managed.hpp"
#include "core/memory_pool.hpp"
#include "core/memory_user.hpp"
#include "core/memory_virtual.hpp"

#include <optional>

using namespace cucore;

namespace {
constexpr cucore_device_memory_resource_options_t kPoolDefaults = CUCORE_DEVICE_MEMORY_RESOURCE_OPTIONS_INIT;
constexpr cucore_pinned_memory_resource_options_t kPinnedDefaults = CUCORE_PINNED_MEMORY_RESOURCE_OPTIONS_INIT;
constexpr cucore_managed_memory_resource_options_t kManagedDefaults = CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
constexpr cucore_virtual_memory_resource_options_t kVirtualDefaults = CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT;
constexpr cucore_memory_resource_callbacks_t kCallbackDefaults = {
    static_cast<uint32_t>(sizeof(cucore_memory_resource_callbacks_t)), 0, nullptr, nullptr, nullptr, nullptr, -1, 0,
    0, 0};
constexpr cucore_copy_3d_t kCopyDefaults = CUCORE_COPY_3D_INIT;

// A pool attribute, and for a set the value it may take: the current usage is read-only, a high-water
// mark is reset with 0, a reuse flag is 0 or 1.
void check_pool_attribute(cucore_pool_attribute_t attribute, const uint64_t *set_to) {
    if (attribute < CUCORE_POOL_ATTRIBUTE_REUSE_FOLLOW_EVENT_DEPENDENCIES ||
        attribute > CUCORE_POOL_ATTRIBUTE_USED_MEM_HIGH)
        core::throw_invalid_argument("argument 'attribute' is not a pool attribute (" +
                                     std::to_string(static_cast<int>(attribute)) + ")");
    if (!set_to) return;
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
}

// One side of a strided copy: exactly one of buffer and host.
core::CopySide copy_side(const cucore_memory_region_t &region, const char *buffer_argument, const char *side) {
    if ((region.buffer == nullptr) == (region.host == nullptr))
        core::throw_invalid_argument(std::string("argument 'copy.") + side +
                                     "' must name exactly one of 'buffer' and 'host'");
    return core::CopySide{capi::get_optional(region.buffer, buffer_argument), region};
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

cucore_status_t cucore_legacy_pinned_memory_resource_create(cucore_device_t *device,
                                                            cucore_memory_resource_t **resource) {
    return capi::guarded(__func__, [&] {
        cucore_memory_resource_t *&result = capi::out(resource, "resource");
        core::Device &object = capi::get(device, "device");
        result = capi::give<cucore_memory_resource_t>(core::LegacyPinnedResource::create(object));
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
        if (resolved.preferred_location.type != CUCORE_LOCATION_NONE) {  // NONE: no preferred location
            if (resolved.preferred_location.type == CUCORE_LOCATION_HOST_NUMA_CURRENT)
                core::throw_invalid_argument("argument 'options.preferred_location' cannot be the current NUMA node");
            capi::check_location(resolved.preferred_location, "options.preferred_location");
        }
        result = capi::give<cucore_memory_resource_t>(core::make_managed_resource(object, resolved));
    });
}

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
        if (resolved.self_access != CUCORE_ACCESS_NONE && resolved.self_access != CUCORE_ACCESS_READ &&
            resolved.self_access != CUCORE_ACCESS_READ_WRITE)
            core::throw_invalid_argument("argument 'options.self_access' must be NONE (the default: READ_WRITE), "
                                         "READ or READ_WRITE");
        switch (resolved.location_type) {
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

cucore_status_t cucore_device_get_memory_resource(cucore_device_t *device, cucore_memory_resource_t **resource) {
    return capi::guarded(__func__, [&] {
        cucore_memory_resource_t *&result = capi::out(resource, "resource");
        result = capi::give<cucore_memory_resource_t>(capi::get(device, "device").memory_resource());
    });
}

cucore_status_t cucore_device_set_memory_resource(cucore_device_t *device, cucore_memory_resource_t *resource) {
    return capi::guarded(__func__, [&] {
        core::Device &object = capi::get(device, "device");
        core::Ref<core::MemoryResource> chosen;
        if (resource) chosen = core::Ref<core::MemoryResource>(&capi::get(resource, "resource"));
        object.set_memory_resource(std::move(chosen));
    });
}

cucore_status_t cucore_device_allocate(cucore_device_t *device, uint64_t size, cucore_stream_t *stream,
                                       cucore_buffer_t **buffer) {
    return capi::guarded(__func__, [&] {
        cucore_buffer_t *&result = capi::out(buffer, "buffer");
        core::Device &object = capi::get(device, "device");
        result = capi::give<cucore_buffer_t>(object.allocate(size, capi::get_optional(stream, "stream")));
    });
}



cucore_status_t cucore_memory_resource_allocate(cucore_memory_resource_t *resource, uint64_t size,
                                                cucore_stream_t *stream, cucore_buffer_t **buffer) {
    return capi::guarded(__func__, [&] {
        cucore_buffer_t *&result = capi::out(buffer, "buffer");
        core::MemoryResource &object = capi::get(resource, "resource");
        result = capi::give<cucore_buffer_t>(object.allocate(size, capi::get_optional(stream, "stream")));
    });
}

cucore_status_t cucore_memory_resource_handle(const cucore_memory_resource_t *resource, void **cu_memory_pool) {
    return capi::guarded(__func__, [&] {
        void *&result = capi::out(cu_memory_pool, "cu_memory_pool");
        result = capi::get(resource, "resource").pool();
    });
}

cucore_status_t cucore_memory_resource_kind(const cucore_memory_resource_t *resource,
                                            cucore_memory_resource_kind_t *kind) {
    return capi::guarded(__func__, [&] {
        cucore_memory_resource_kind_t &result = capi::out(kind, "kind");
        result = capi::get(resource, "resource").kind();
    });
}

cucore_status_t cucore_memory_resource_device_id(const cucore_memory_resource_t *resource, int *device_id) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(device_id, "device_id");
        result = capi::get(resource, "resource").device_id();
    });
}

cucore_status_t cucore_memory_resource_accessibility(const cucore_memory_resource_t *resource,
                                                     int *device_accessible, int *host_accessible) {
    return capi::guarded(__func__, [&] {
        int &device_out = capi::out(device_accessible, "device_accessible");
        int &host_out = capi::out(host_accessible, "host_accessible");
        core::MemoryResource &object = capi::get(resource, "resource");
        device_out = object.device_accessible() ? 1 : 0;
        host_out = object.host_accessible() ? 1 : 0;
    });
}

cucore_status_t cucore_memory_resource_is_stream_ordered(const cucore_memory_resource_t *resource,
                                                         int *stream_ordered) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(stream_ordered, "stream_ordered");
        result = capi::get(resource, "resource").is_stream_ordered() ? 1 : 0;
    });
}

cucore_status_t cucore_memory_resource_is_managed(const cucore_memory_resource_t *resource, int *managed) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(managed, "managed");
        result = capi::get(resource, "resource").is_managed() ? 1 : 0;
    });
}

cucore_status_t cucore_memory_resource_pool_attribute(const cucore_memory_resource_t *resource,
                                                      cucore_pool_attribute_t attribute, uint64_t *value) {
    return capi::guarded(__func__, [&] {
        uint64_t &result = capi::out(value, "value");
        const core::MemoryResource &object = capi::get(resource, "resource");
        check_pool_attribute(attribute, nullptr);
        result = object.pool_attribute(attribute);
    });
}

cucore_status_t cucore_memory_resource_set_pool_attribute(cucore_memory_resource_t *resource,
                                                          cucore_pool_attribute_t attribute, uint64_t value) {
    return capi::guarded(__func__, [&] {
        core::MemoryResource &object = capi::get(resource, "resource");
        check_pool_attribute(attribute, &value);
        object.set_pool_attribute(attribute, value);
    });
}

cucore_status_t cucore_memory_resource_trim(cucore_memory_resource_t *resource, uint64_t min_bytes_to_keep) {
    return capi::guarded(__func__, [&] { capi::get(resource, "resource").trim(min_bytes_to_keep); });
}

cucore_status_t cucore_memory_resource_set_peer_access(cucore_memory_resource_t *resource, cucore_device_t *peer,
                                                       cucore_access_t access) {
    return capi::guarded(__func__, [&] {
        core::MemoryResource &object = capi::get(resource, "resource");
        core::Device &device = capi::get(peer, "peer");
        capi::check_access(access, "access");
        object.set_peer_access(device, access);
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

cucore_status_t cucore_buffer_from_handle(uint64_t address, uint64_t size, cucore_device_t *device,
                                          cucore_release_fn on_release, void *user_data, cucore_buffer_t **buffer) {
    return capi::guarded(__func__, [&] {
        cucore_buffer_t *&result = capi::out(buffer, "buffer");
        const int device_id = device ? capi::get(device, "device").ordinal() : -1;
        const core::MemoryTraits traits{device_id, device_id >= 0, device_id < 0, false};
        result = capi::give<cucore_buffer_t>(core::Buffer::wrap(address, size, traits, on_release, user_data));
    });
}



cucore_status_t cucore_buffer_close(cucore_buffer_t *buffer, cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        core::Buffer &object = capi::get(buffer, "buffer");
        object.close(capi::get_optional(stream, "stream"));
    });
}

cucore_status_t cucore_buffer_set_deallocation_stream(cucore_buffer_t *buffer, cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        core::Buffer &object = capi::get(buffer, "buffer");
        object.set_deallocation_stream(capi::get(stream, "stream"));
    });
}

cucore_status_t cucore_buffer_size(const cucore_buffer_t *buffer, uint64_t *size) {
    return capi::guarded(__func__, [&] {
        uint64_t &result = capi::out(size, "size");
        result = capi::get(buffer, "buffer").size();
    });
}

cucore_status_t cucore_buffer_address(const cucore_buffer_t *buffer, uint64_t *address) {
    return capi::guarded(__func__, [&] {
        uint64_t &result = capi::out(address, "address");
        result = capi::get(buffer, "buffer").address();
    });
}

cucore_status_t cucore_buffer_device_id(const cucore_buffer_t *buffer, int *device_id) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(device_id, "device_id");
        result = capi::get(buffer, "buffer").device_id();
    });
}

cucore_status_t cucore_buffer_memory_resource(const cucore_buffer_t *buffer, cucore_memory_resource_t **resource) {
    return capi::guarded(__func__, [&] {
        cucore_memory_resource_t *&result = capi::out(resource, "resource");
        core::Ref<core::MemoryResource> owner = capi::get(buffer, "buffer").resource();
        result = owner ? capi::give<cucore_memory_resource_t>(std::move(owner)) : nullptr;
    });
}

cucore_status_t cucore_buffer_accessibility(const cucore_buffer_t *buffer, int *device_accessible,
                                            int *host_accessible, int *managed) {
    return capi::guarded(__func__, [&] {
        capi::optional_out(device_accessible);
        capi::optional_out(host_accessible);
        capi::optional_out(managed);
        const core::MemoryTraits &traits = capi::get(buffer, "buffer").traits();
        if (device_accessible) *device_accessible = traits.device_accessible ? 1 : 0;
        if (host_accessible) *host_accessible = traits.host_accessible ? 1 : 0;
        if (managed) *managed = traits.managed ? 1 : 0;
    });
}

cucore_status_t cucore_buffer_deallocation_stream(const cucore_buffer_t *buffer, cucore_stream_t **stream) {
    return capi::guarded(__func__, [&] {
        cucore_stream_t *&result = capi::out(stream, "stream");
        core::Ref<core::Stream> deallocation = capi::get(buffer, "buffer").deallocation_stream();
        result = deallocation ? capi::give<cucore_stream_t>(std::move(deallocation)) : nullptr;
    });
}

cucore_status_t cucore_buffer_grow(cucore_buffer_t *buffer, uint64_t new_size) {
    return capi::guarded(__func__, [&] { capi::get(buffer, "buffer").grow(new_size); });
}

cucore_status_t cucore_buffer_view(cucore_buffer_t *buffer, uint64_t offset, uint64_t size, cucore_buffer_t **view) {
    return capi::guarded(__func__, [&] {
        cucore_buffer_t *&result = capi::out(view, "view");
        result = capi::give<cucore_buffer_t>(capi::get(buffer, "buffer").view(offset, size));
    });
}

cucore_status_t cucore_buffer_copy(cucore_buffer_t *dst, cucore_buffer_t *src, cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        core::Buffer &destination = capi::get(dst, "dst");
        core::Buffer &source = capi::get(src, "src");
        destination.copy_from(source, capi::get(stream, "stream"));
    });
}

cucore_status_t cucore_buffer_copy_from_host(cucore_buffer_t *buffer, uint64_t offset, const void *src, uint64_t size,
                                             cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        core::Buffer &object = capi::get(buffer, "buffer");
        core::Stream &on = capi::get(stream, "stream");
        if (size) capi::require(src, "src");
        object.copy_from_host(offset, src, size, on);
    });
}

cucore_status_t cucore_buffer_copy_to_host(cucore_buffer_t *buffer, uint64_t offset, void *dst, uint64_t size,
                                           cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        core::Buffer &object = capi::get(buffer, "buffer");
        core::Stream &on = capi::get(stream, "stream");
        if (size) capi::require(dst, "dst");
        object.copy_to_host(offset, dst, size, on);
    });
}

cucore_status_t cucore_buffer_fill(cucore_buffer_t *buffer, uint32_t value, uint32_t value_size,
                                   cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        core::Buffer &object = capi::get(buffer, "buffer");
        object.fill(value, value_size, capi::get(stream, "stream"));
    });
}

cucore_status_t cucore_copy_3d(const cucore_copy_3d_t *copy, cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        capi::require(copy, "copy");
        cucore_copy_3d_t resolved = capi::read_options(copy, kCopyDefaults, "copy");
        capi::require_zero(resolved.reserved0, "copy.reserved0");
        const core::CopySide source = copy_side(resolved.src, "copy.src.buffer", "src");
        const core::CopySide destination = copy_side(resolved.dst, "copy.dst.buffer", "dst");
        core::copy_3d(source, destination, resolved.width, resolved.rows, resolved.depth,
                      capi::get(stream, "stream"));
    });
}

cucore_status_t cucore_buffer_advise(cucore_buffer_t *buffer, cucore_memory_advice_t advice,
                                     cucore_location_t location) {
    return capi::guarded(__func__, [&] {
        core::Buffer &object = capi::get(buffer, "buffer");
        if (advice < CUCORE_ADVICE_SET_READ_MOSTLY || advice > CUCORE_ADVICE_UNSET_ACCESSED_BY)
            core::throw_invalid_argument("argument 'advice' is unknown (" + std::to_string(static_cast<int>(advice)) +
                                         ")");
        if (core::advice_takes_location(advice)) capi::check_location(location, "location");
        object.advise(advice, location);
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
        if (location.type != CUCORE_LOCATION_DEVICE && location.type != CUCORE_LOCATION_HOST)
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
