// C ABI: memory resources and buffers.
#include "capi/capi.hpp"

using namespace cucore;

namespace {
constexpr cucore_device_memory_resource_options_t kPoolDefaults = CUCORE_DEVICE_MEMORY_RESOURCE_OPTIONS_INIT;

// An optional stream argument: NULL stays NULL.
core::Stream *optional_stream(cucore_stream_t *stream) {
    return stream ? &capi::get(stream, "stream") : nullptr;
}
}  // namespace

extern "C" {

cucore_status_t cucore_device_memory_resource_get_default(cucore_device_t *device,
                                                          cucore_memory_resource_t **resource) {
    return capi::guarded(__func__, [&] {
        cucore_memory_resource_t *&result = capi::out(resource, "resource");
        core::Device &object = capi::get(device, "device");
        result = capi::give<cucore_memory_resource_t>(core::MemoryResource::device_default(object));
    });
}

cucore_status_t cucore_device_memory_resource_create(cucore_device_t *device,
                                                     const cucore_device_memory_resource_options_t *options,
                                                     cucore_memory_resource_t **resource) {
    return capi::guarded(__func__, [&] {
        cucore_memory_resource_t *&result = capi::out(resource, "resource");
        core::Device &object = capi::get(device, "device");
        cucore_device_memory_resource_options_t resolved = capi::read_options(options, kPoolDefaults, "options");
        if (resolved.reserved0 != 0) core::throw_invalid_argument("argument 'options.reserved0' must be 0");
        result = capi::give<cucore_memory_resource_t>(
            core::MemoryResource::device_pool(object, resolved.max_size, resolved.release_threshold));
    });
}

cucore_status_t cucore_legacy_pinned_memory_resource_create(cucore_device_t *device,
                                                            cucore_memory_resource_t **resource) {
    return capi::guarded(__func__, [&] {
        cucore_memory_resource_t *&result = capi::out(resource, "resource");
        core::Device &object = capi::get(device, "device");
        result = capi::give<cucore_memory_resource_t>(core::MemoryResource::legacy_pinned(object));
    });
}

cucore_status_t cucore_device_memory_resource(cucore_device_t *device, cucore_memory_resource_t **resource) {
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
        result = capi::give<cucore_buffer_t>(object.allocate(size, optional_stream(stream)));
    });
}

cucore_status_t cucore_memory_resource_retain(cucore_memory_resource_t *resource) {
    return capi::guarded(__func__, [&] { capi::retain(resource); });
}

cucore_status_t cucore_memory_resource_release(cucore_memory_resource_t *resource) {
    return capi::guarded(__func__, [&] { capi::release(resource); });
}

cucore_status_t cucore_memory_resource_allocate(cucore_memory_resource_t *resource, uint64_t size,
                                                cucore_stream_t *stream, cucore_buffer_t **buffer) {
    return capi::guarded(__func__, [&] {
        cucore_buffer_t *&result = capi::out(buffer, "buffer");
        core::MemoryResource &object = capi::get(resource, "resource");
        result = capi::give<cucore_buffer_t>(object.allocate(size, optional_stream(stream)));
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

cucore_status_t cucore_memory_resource_pool_attribute(const cucore_memory_resource_t *resource,
                                                      cucore_pool_attribute_t attribute, uint64_t *value) {
    return capi::guarded(__func__, [&] {
        uint64_t &result = capi::out(value, "value");
        result = capi::get(resource, "resource").pool_attribute(attribute);
    });
}

cucore_status_t cucore_memory_resource_set_pool_attribute(cucore_memory_resource_t *resource,
                                                          cucore_pool_attribute_t attribute, uint64_t value) {
    return capi::guarded(__func__,
                         [&] { capi::get(resource, "resource").set_pool_attribute(attribute, value); });
}

cucore_status_t cucore_memory_resource_trim(cucore_memory_resource_t *resource, uint64_t min_bytes_to_keep) {
    return capi::guarded(__func__, [&] { capi::get(resource, "resource").trim(min_bytes_to_keep); });
}

cucore_status_t cucore_buffer_from_handle(uint64_t address, uint64_t size, cucore_device_t *device,
                                          cucore_release_fn on_release, void *user_data, cucore_buffer_t **buffer) {
    return capi::guarded(__func__, [&] {
        cucore_buffer_t *&result = capi::out(buffer, "buffer");
        int device_id = device ? capi::get(device, "device").ordinal() : -1;
        result = capi::give<cucore_buffer_t>(core::Buffer::wrap(address, size, device_id, on_release, user_data));
    });
}

cucore_status_t cucore_buffer_retain(cucore_buffer_t *buffer) {
    return capi::guarded(__func__, [&] { capi::retain(buffer); });
}

cucore_status_t cucore_buffer_release(cucore_buffer_t *buffer) {
    return capi::guarded(__func__, [&] { capi::release(buffer); });
}

cucore_status_t cucore_buffer_close(cucore_buffer_t *buffer, cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        core::Buffer &object = capi::get(buffer, "buffer");
        object.close(optional_stream(stream));
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
        object.copy_from_host(offset, src, size, capi::get(stream, "stream"));
    });
}

cucore_status_t cucore_buffer_copy_to_host(cucore_buffer_t *buffer, uint64_t offset, void *dst, uint64_t size,
                                           cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        core::Buffer &object = capi::get(buffer, "buffer");
        object.copy_to_host(offset, dst, size, capi::get(stream, "stream"));
    });
}

cucore_status_t cucore_buffer_fill(cucore_buffer_t *buffer, uint32_t value, uint32_t value_size,
                                   cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        core::Buffer &object = capi::get(buffer, "buffer");
        object.fill(value, value_size, capi::get(stream, "stream"));
    });
}

}  // extern "C"
