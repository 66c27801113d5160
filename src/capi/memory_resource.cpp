// C ABI: memory resources: what every kind answers, the device's default resource, the legacy pinned kind.
#include "capi/capi.hpp"
#include "core/buffer.hpp"
#include "core/memory_resource.hpp"

using namespace cucore;

extern "C" {

cucore_status_t cucore_legacy_pinned_memory_resource_create(cucore_device_t *device,
                                                            cucore_memory_resource_t **resource) {
    return capi::guarded(__func__, [&] {
        cucore_memory_resource_t *&result = capi::out(resource, "resource");
        core::Device &object = capi::get(device, "device");
        result = capi::give<cucore_memory_resource_t>(core::LegacyPinnedResource::create(object));
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
        result = capi::give_new<cucore_buffer_t>(object.allocate(size, capi::get_optional(stream, "stream")));
    });
}

cucore_status_t cucore_memory_resource_allocate(cucore_memory_resource_t *resource, uint64_t size,
                                                cucore_stream_t *stream, cucore_buffer_t **buffer) {
    return capi::guarded(__func__, [&] {
        cucore_buffer_t *&result = capi::out(buffer, "buffer");
        core::MemoryResource &object = capi::get(resource, "resource");
        result = capi::give_new<cucore_buffer_t>(object.allocate(size, capi::get_optional(stream, "stream")));
    });
}

cucore_status_t cucore_memory_resource_deallocate(cucore_memory_resource_t *resource, uint64_t address,
                                                  uint64_t size, cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        core::MemoryResource &object = capi::get(resource, "resource");
        object.deallocate_checked(address, size, capi::get_optional(stream, "stream"));
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

}  // extern "C"
