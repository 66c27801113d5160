// C ABI: kernels.
#include "capi/capi.hpp"

using namespace cucore;

namespace {
cucore_kernel_attribute_t check_kernel_attribute(const cucore_kernel_attribute_t &attribute) {
    return capi::check_enum_range(attribute, CUCORE_KERNEL_ATTRIBUTE_UNSET + 1, CUCORE_KERNEL_ATTRIBUTE_COUNT - 1,
                                  "attribute", "is not a known kernel attribute");
}
}  // namespace

extern "C" {

cucore_status_t cucore_kernel_from_handle(void *cu_kernel, cucore_release_fn on_release, void *user_data,
                                          cucore_kernel_t **kernel) {
    return capi::guarded(__func__, [&] {
        cucore_kernel_t *&result = capi::out(kernel, "kernel");
        capi::require(cu_kernel, "cu_kernel");
        result = capi::give<cucore_kernel_t>(
            core::Kernel::wrap_kernel(static_cast<CUkernel>(cu_kernel), on_release, user_data));
    });
}

cucore_status_t cucore_kernel_from_function(void *cu_function, cucore_release_fn on_release, void *user_data,
                                            cucore_kernel_t **kernel) {
    return capi::guarded(__func__, [&] {
        cucore_kernel_t *&result = capi::out(kernel, "kernel");
        capi::require(cu_function, "cu_function");
        result = capi::give<cucore_kernel_t>(
            core::Kernel::wrap_function(static_cast<CUfunction>(cu_function), on_release, user_data));
    });
}

cucore_status_t cucore_kernel_name(const cucore_kernel_t *kernel, const char **name) {
    return capi::guarded(__func__, [&] {
        const char *&result = capi::out(name, "name");
        result = capi::get(kernel, "kernel").name();
    });
}

cucore_status_t cucore_kernel_attribute(cucore_kernel_t *kernel, cucore_device_t *device,
                                        cucore_kernel_attribute_t attribute, int *value) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(value, "value");
        core::Kernel &object = capi::get(kernel, "kernel");
        core::Device &on = capi::get(device, "device");
        result = object.attribute(on, check_kernel_attribute(attribute));
    });
}

cucore_status_t cucore_kernel_set_attribute(cucore_kernel_t *kernel, cucore_device_t *device,
                                            cucore_kernel_attribute_t attribute, int value) {
    return capi::guarded(__func__, [&] {
        core::Kernel &object = capi::get(kernel, "kernel");
        core::Device &on = capi::get(device, "device");
        object.set_attribute(on, check_kernel_attribute(attribute), value);
    });
}

cucore_status_t cucore_kernel_param_count(cucore_kernel_t *kernel, size_t *count) {
    return capi::guarded(__func__, [&] {
        size_t &result = capi::out(count, "count");
        result = capi::get(kernel, "kernel").param_count();
    });
}

cucore_status_t cucore_kernel_param_info(cucore_kernel_t *kernel, size_t index, size_t *offset, size_t *size) {
    return capi::guarded(__func__, [&] {
        size_t &offset_out = capi::out(offset, "offset");
        size_t &size_out = capi::out(size, "size");
        const core::Kernel::ParamInfo info = capi::get(kernel, "kernel").param(index);
        offset_out = info.offset;
        size_out = info.size;
    });
}

cucore_status_t cucore_kernel_max_active_blocks_per_multiprocessor(cucore_kernel_t *kernel, cucore_device_t *device,
                                                                   uint32_t block_size, size_t dynamic_shared_bytes,
                                                                   int *blocks) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(blocks, "blocks");
        core::Kernel &object = capi::get(kernel, "kernel");
        result = object.max_active_blocks_per_multiprocessor(capi::get(device, "device"), block_size,
                                                             dynamic_shared_bytes);
    });
}

cucore_status_t cucore_kernel_max_potential_block_size(cucore_kernel_t *kernel, cucore_device_t *device,
                                                       size_t dynamic_shared_bytes, uint32_t block_size_limit,
                                                       int *min_grid_size, int *block_size) {
    return capi::guarded(__func__, [&] {
        int &grid_out = capi::out(min_grid_size, "min_grid_size");
        int &block_out = capi::out(block_size, "block_size");
        core::Kernel &object = capi::get(kernel, "kernel");
        int grid = 0, block = 0;
        object.max_potential_block_size(capi::get(device, "device"), dynamic_shared_bytes, block_size_limit, grid,
                                        block);
        grid_out = grid;
        block_out = block;
    });
}

cucore_status_t cucore_kernel_available_dynamic_shared_memory(cucore_kernel_t *kernel, cucore_device_t *device,
                                                              uint32_t num_blocks, uint32_t block_size,
                                                              size_t *bytes) {
    return capi::guarded(__func__, [&] {
        size_t &result = capi::out(bytes, "bytes");
        core::Kernel &object = capi::get(kernel, "kernel");
        result = object.available_dynamic_shared_memory(capi::get(device, "device"), num_blocks, block_size);
    });
}

cucore_status_t cucore_kernel_handle(const cucore_kernel_t *kernel, void **cu_kernel) {
    return capi::guarded(__func__, [&] {
        void *&result = capi::out(cu_kernel, "cu_kernel");
        result = capi::get(kernel, "kernel").cu_kernel();
    });
}

cucore_status_t cucore_kernel_function(cucore_kernel_t *kernel, cucore_device_t *device, void **cu_function) {
    return capi::guarded(__func__, [&] {
        void *&result = capi::out(cu_function, "cu_function");
        core::Kernel &object = capi::get(kernel, "kernel");
        core::Ref<core::Context> context;
        result = object.function_for(capi::get(device, "device"), context);
    });
}

}  // extern "C"
