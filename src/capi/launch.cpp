// C ABI: launch configurations and kernel launches.
#include "capi/capi.hpp"
#include "capi/launch_args.hpp"
#include "core/launch.hpp"

using namespace cucore;

namespace {
// cucore_launch and cucore_launch_block: one set of checks and messages.
void launch_checked(cucore_stream_t *stream, const cucore_launch_config_t *config, cucore_kernel_t *kernel,
                    const void *const *args, const size_t *arg_sizes, size_t arg_count) {
    core::Stream &target = capi::get(stream, "stream");
    core::Kernel &object = capi::get(kernel, "kernel");
    const cucore_launch_config_t resolved = capi::read_config(config);
    capi::check_args(args, arg_sizes, arg_count);
    core::launch(target, resolved, object, args, arg_sizes, arg_count);
}
}  // namespace

extern "C" {

cucore_status_t cucore_launch_config_validate(const cucore_launch_config_t *config, cucore_kernel_t *kernel,
                                              cucore_device_t *device) {
    return capi::guarded(__func__, [&] {
        const cucore_launch_config_t resolved = capi::read_config(&capi::required_config(config));
        core::Kernel &object = capi::get(kernel, "kernel");
        core::validate_launch_config(resolved, object, capi::get(device, "device"));
    });
}

cucore_status_t cucore_launch(cucore_stream_t *stream, const cucore_launch_config_t *config, cucore_kernel_t *kernel,
                              const void *const *args, const size_t *arg_sizes, size_t arg_count) {
    return capi::guarded(__func__, [&] { launch_checked(stream, config, kernel, args, arg_sizes, arg_count); });
}

cucore_status_t cucore_launch_block(const cucore_launch_block_t *block) {
    return capi::guarded(__func__, [&] {
        const cucore_launch_block_t b = capi::read_block(block);
        launch_checked(b.stream, b.config, b.kernel, b.args, b.arg_sizes, b.arg_count);
    });
}

cucore_status_t cucore_launch_max_potential_cluster_size(const cucore_launch_config_t *config,
                                                         cucore_kernel_t *kernel, cucore_device_t *device,
                                                         int *cluster_size) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(cluster_size, "cluster_size");
        const cucore_launch_config_t resolved = capi::read_config(&capi::required_config(config));
        core::Kernel &object = capi::get(kernel, "kernel");
        result = core::max_potential_cluster_size(resolved, object, capi::get(device, "device"));
    });
}

cucore_status_t cucore_launch_max_active_clusters(const cucore_launch_config_t *config, cucore_kernel_t *kernel,
                                                  cucore_device_t *device, int *clusters) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(clusters, "clusters");
        const cucore_launch_config_t resolved = capi::read_config(&capi::required_config(config));
        core::Kernel &object = capi::get(kernel, "kernel");
        result = core::max_active_clusters(resolved, object, capi::get(device, "device"));
    });
}

}  // extern "C"
