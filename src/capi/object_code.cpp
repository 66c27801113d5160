// C ABI: object code.
#include "capi/capi.hpp"

using namespace cucore;

namespace {
// What the driver or the linker takes: CUBIN, PTX, LTOIR, FATBIN, OBJECT or LIBRARY.
cucore_code_type_t check_object_code_type(const cucore_code_type_t &type) {
    return capi::check_enum(
        type, [](int32_t raw) { return raw == CUCORE_CODE_PTX || (raw >= CUCORE_CODE_CUBIN && raw <= CUCORE_CODE_LIBRARY); },
        "code_type", "is not an object code kind (CUBIN, PTX, LTOIR, FATBIN, OBJECT or LIBRARY)");
}
}  // namespace

extern "C" {

cucore_status_t cucore_object_code_create(const void *data, size_t size, cucore_code_type_t code_type,
                                          const char *name, cucore_object_code_t **object_code) {
    return capi::guarded(__func__, [&] {
        cucore_object_code_t *&result = capi::out(object_code, "object_code");
        capi::require(data, "data");
        const cucore_code_type_t known = check_object_code_type(code_type);
        result = capi::give<cucore_object_code_t>(core::ObjectCode::from_bytes(data, size, known, name));
    });
}

cucore_status_t cucore_object_code_create_from_file(const char *path, cucore_code_type_t code_type, const char *name,
                                                    cucore_object_code_t **object_code) {
    return capi::guarded(__func__, [&] {
        cucore_object_code_t *&result = capi::out(object_code, "object_code");
        capi::require(path, "path");
        const cucore_code_type_t known = check_object_code_type(code_type);
        result = capi::give<cucore_object_code_t>(core::ObjectCode::from_file(path, known, name));
    });
}

cucore_status_t cucore_object_code_load(cucore_object_code_t *object_code) {
    return capi::guarded(__func__, [&] { capi::get(object_code, "object_code").library(); });
}

cucore_status_t cucore_object_code_code_type(const cucore_object_code_t *object_code, cucore_code_type_t *code_type) {
    return capi::guarded(__func__, [&] {
        cucore_code_type_t &result = capi::out(code_type, "code_type");
        result = capi::get(object_code, "object_code").code_type();
    });
}

cucore_status_t cucore_object_code_data(const cucore_object_code_t *object_code, const void **data, size_t *size) {
    return capi::guarded(__func__, [&] {
        const void *&bytes = capi::out(data, "data");
        size_t &count = capi::out(size, "size");
        const core::ObjectCode &object = capi::get(object_code, "object_code");
        bytes = object.bytes().data();
        count = object.bytes().size();
    });
}

cucore_status_t cucore_object_code_name(const cucore_object_code_t *object_code, const char **name) {
    return capi::guarded(__func__, [&] {
        const char *&result = capi::out(name, "name");
        result = capi::get(object_code, "object_code").name().c_str();
    });
}

cucore_status_t cucore_object_code_name_expression_count(const cucore_object_code_t *object_code, size_t *count) {
    return capi::guarded(__func__, [&] {
        size_t &result = capi::out(count, "count");
        result = capi::get(object_code, "object_code").names().size();
    });
}

cucore_status_t cucore_object_code_name_expression(const cucore_object_code_t *object_code, size_t index,
                                                   const char **expression, const char **lowered_name) {
    return capi::guarded(__func__, [&] {
        const char *&expr = capi::out(expression, "expression");
        const char *&lowered = capi::out(lowered_name, "lowered_name");
        const core::ObjectCode &object = capi::get(object_code, "object_code");
        if (index >= object.names().size())
            core::throw_invalid_argument("argument 'index' (" + std::to_string(index) + ") is out of range: the code has " +
                                         std::to_string(object.names().size()) + " name expressions");
        expr = object.names()[index].first.c_str();
        lowered = object.names()[index].second.c_str();
    });
}

cucore_status_t cucore_object_code_get_kernel(cucore_object_code_t *object_code, const char *name,
                                              cucore_kernel_t **kernel) {
    return capi::guarded(__func__, [&] {
        cucore_kernel_t *&result = capi::out(kernel, "kernel");
        core::ObjectCode &object = capi::get(object_code, "object_code");
        capi::require(name, "name");
        result = capi::give<cucore_kernel_t>(object.get_kernel(name));
    });
}

cucore_status_t cucore_object_code_kernel_count(cucore_object_code_t *object_code, size_t *count) {
    return capi::guarded(__func__, [&] {
        size_t &result = capi::out(count, "count");
        result = capi::get(object_code, "object_code").kernel_count();
    });
}

cucore_status_t cucore_object_code_get_global(cucore_object_code_t *object_code, cucore_device_t *device,
                                              const char *name, uint64_t *address, size_t *size) {
    return capi::guarded(__func__, [&] {
        uint64_t &where = capi::out(address, "address");
        size_t &bytes = capi::out(size, "size");
        core::ObjectCode &object = capi::get(object_code, "object_code");
        core::Device &on = capi::get(device, "device");
        capi::require(name, "name");
        CUdeviceptr pointer = 0;
        size_t global_size = 0;
        object.global(on, name, pointer, global_size);
        where = static_cast<uint64_t>(pointer);
        bytes = global_size;
    });
}

cucore_status_t cucore_object_code_read_global(cucore_object_code_t *object_code, cucore_device_t *device,
                                               const char *name, void *dst, size_t size) {
    return capi::guarded(__func__, [&] {
        core::ObjectCode &object = capi::get(object_code, "object_code");
        core::Device &on = capi::get(device, "device");
        capi::require(name, "name");
        capi::require(dst, "dst");
        object.read_global(on, name, dst, size);
    });
}

cucore_status_t cucore_object_code_write_global(cucore_object_code_t *object_code, cucore_device_t *device,
                                                const char *name, const void *src, size_t size) {
    return capi::guarded(__func__, [&] {
        core::ObjectCode &object = capi::get(object_code, "object_code");
        core::Device &on = capi::get(device, "device");
        capi::require(name, "name");
        capi::require(src, "src");
        object.write_global(on, name, src, size);
    });
}

cucore_status_t cucore_object_code_handle(cucore_object_code_t *object_code, void **cu_library) {
    return capi::guarded(__func__, [&] {
        void *&result = capi::out(cu_library, "cu_library");
        result = capi::get(object_code, "object_code").library();
    });
}

cucore_status_t cucore_object_code_module(cucore_object_code_t *object_code, void **cu_module) {
    return capi::guarded(__func__, [&] {
        void *&result = capi::out(cu_module, "cu_module");
        result = capi::get(object_code, "object_code").module();
    });
}

}  // extern "C"
