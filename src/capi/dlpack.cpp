// C ABI: DLPack export and import of buffers.
#include "capi/capi.hpp"
#include "core/dlpack.hpp"

using namespace cucore;

namespace {
// Defaults for fields a caller built against an older header does not have.
constexpr cucore_dlpack_layout_t kLayoutDefaults = {sizeof(cucore_dlpack_layout_t), 0, {0, 0, 0}, 0, nullptr,
                                                    nullptr, 0};

// NULL stays NULL (the whole buffer as bytes); otherwise the versioned struct read.
const cucore_dlpack_layout_t *resolve(const cucore_dlpack_layout_t *layout, cucore_dlpack_layout_t &storage) {
    if (!layout) return nullptr;
    storage = capi::read_options(layout, kLayoutDefaults, "layout");
    return &storage;
}
}  // namespace

extern "C" {

cucore_status_t cucore_dlpack_export(cucore_buffer_t *buffer, const cucore_dlpack_layout_t *layout,
                                     DLManagedTensorVersioned **tensor) {
    return capi::guarded(__func__, [&] {
        DLManagedTensorVersioned *&result = capi::out(tensor, "tensor");
        core::Buffer &object = capi::get(buffer, "buffer");
        cucore_dlpack_layout_t storage;
        result = core::dlpack::export_versioned(object, resolve(layout, storage));
    });
}

cucore_status_t cucore_dlpack_export_legacy(cucore_buffer_t *buffer, const cucore_dlpack_layout_t *layout,
                                            DLManagedTensor **tensor) {
    return capi::guarded(__func__, [&] {
        DLManagedTensor *&result = capi::out(tensor, "tensor");
        core::Buffer &object = capi::get(buffer, "buffer");
        cucore_dlpack_layout_t storage;
        result = core::dlpack::export_legacy(object, resolve(layout, storage));
    });
}

cucore_status_t cucore_dlpack_import(DLManagedTensorVersioned *tensor, cucore_buffer_t **buffer) {
    return capi::guarded(__func__, [&] {
        cucore_buffer_t *&result = capi::out(buffer, "buffer");
        result = capi::give<cucore_buffer_t>(core::dlpack::import_versioned(tensor));
    });
}

cucore_status_t cucore_dlpack_import_legacy(DLManagedTensor *tensor, cucore_buffer_t **buffer) {
    return capi::guarded(__func__, [&] {
        cucore_buffer_t *&result = capi::out(buffer, "buffer");
        result = capi::give<cucore_buffer_t>(core::dlpack::import_legacy(tensor));
    });
}

cucore_status_t cucore_dlpack_device(const cucore_buffer_t *buffer, int32_t *device_type, int32_t *device_id) {
    return capi::guarded(__func__, [&] {
        int32_t &type_out = capi::out(device_type, "device_type");
        int32_t &id_out = capi::out(device_id, "device_id");
        const DLDevice device = core::dlpack::device_of(capi::get(buffer, "buffer"));
        type_out = static_cast<int32_t>(device.device_type);
        id_out = device.device_id;
    });
}

}  // extern "C"
