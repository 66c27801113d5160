// C ABI: sharing memory and events between processes.
#include "capi/capi.hpp"
#include "core/ipc.hpp"

using namespace cucore;

extern "C" {

cucore_status_t cucore_ipc_export_memory_resource(cucore_memory_resource_t *resource,
                                                  cucore_ipc_pool_handle_t *handle) {
    return capi::guarded(__func__, [&] {
        cucore_ipc_pool_handle_t &result = capi::out(handle, "handle");
        result.fd = -1;  // never a valid descriptor on failure (0 is stdin)
        core::MemoryResource &object = capi::get(resource, "resource");
        result = core::ipc::export_pool(object);
    });
}

cucore_status_t cucore_ipc_import_memory_resource(cucore_device_t *device, const cucore_ipc_pool_handle_t *handle,
                                                  cucore_memory_resource_t **resource) {
    return capi::guarded(__func__, [&] {
        cucore_memory_resource_t *&result = capi::out(resource, "resource");
        core::Device &object = capi::get(device, "device");
        capi::require(handle, "handle");
        result = capi::give<cucore_memory_resource_t>(core::ipc::import_pool(object, *handle));
    });
}

cucore_status_t cucore_ipc_memory_resource_pool_id(const cucore_memory_resource_t *resource,
                                                   uint8_t pool_id[CUCORE_IPC_POOL_ID_SIZE]) {
    return capi::guarded(__func__, [&] {
        uint8_t *result = capi::out_bytes(pool_id, CUCORE_IPC_POOL_ID_SIZE, "pool_id");
        const core::PoolId id = core::ipc::pool_id(capi::get(resource, "resource"));
        std::memcpy(result, id.data(), id.size());
    });
}

cucore_status_t cucore_ipc_export_buffer(cucore_buffer_t *buffer,
                                         uint8_t descriptor[CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE]) {
    return capi::guarded(__func__, [&] {
        uint8_t *result = capi::out_bytes(descriptor, CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE, "descriptor");
        const core::ipc::BufferDescriptor exported = core::ipc::export_buffer(capi::get(buffer, "buffer"));
        std::memcpy(result, exported.data(), exported.size());
    });
}

cucore_status_t cucore_ipc_import_buffer(cucore_memory_resource_t *resource, const uint8_t *descriptor,
                                         uint64_t descriptor_size, cucore_stream_t *stream,
                                         cucore_buffer_t **buffer) {
    return capi::guarded(__func__, [&] {
        cucore_buffer_t *&result = capi::out(buffer, "buffer");
        core::MemoryResource &object = capi::get(resource, "resource");
        core::Stream &on = capi::get(stream, "stream");
        capi::require(descriptor, "descriptor");
        result = capi::give<cucore_buffer_t>(core::ipc::import_buffer(object, descriptor, descriptor_size, on));
    });
}

cucore_status_t cucore_ipc_export_event(cucore_event_t *event, uint8_t descriptor[CUCORE_IPC_EVENT_DESCRIPTOR_SIZE]) {
    return capi::guarded(__func__, [&] {
        uint8_t *result = capi::out_bytes(descriptor, CUCORE_IPC_EVENT_DESCRIPTOR_SIZE, "descriptor");
        const core::ipc::EventDescriptor exported = core::ipc::export_event(capi::get(event, "event"));
        std::memcpy(result, exported.data(), exported.size());
    });
}

cucore_status_t cucore_ipc_import_event(cucore_device_t *device, const uint8_t *descriptor, uint64_t descriptor_size,
                                        cucore_event_t **event) {
    return capi::guarded(__func__, [&] {
        cucore_event_t *&result = capi::out(event, "event");
        core::Device &object = capi::get(device, "device");
        capi::require(descriptor, "descriptor");
        result = capi::give<cucore_event_t>(core::ipc::import_event(object, descriptor, descriptor_size));
    });
}

}  // extern "C"
