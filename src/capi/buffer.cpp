// C ABI: buffers.
#include "capi/capi.hpp"
#include "core/buffer.hpp"

using namespace cucore;

extern "C" {

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

cucore_status_t cucore_buffer_dispose(cucore_buffer_t *buffer, cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        core::Buffer &object = capi::get(buffer, "buffer");
        object.close(capi::get_optional(stream, "stream"));
        capi::release(buffer);  // the caller's reference; this call's hold keeps the object until it returns
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

}  // extern "C"
