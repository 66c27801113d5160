// C ABI: launch configurations and kernel launches.
#include "capi/capi.hpp"
#include "core/launch.hpp"

using namespace cucore;

namespace {
constexpr cucore_launch_config_t kLaunchDefaults = CUCORE_LAUNCH_CONFIG_INIT;

cucore_launch_config_t read_config(const cucore_launch_config_t *config) {
    cucore_launch_config_t resolved = capi::read_options(config, kLaunchDefaults, "config");
    capi::check_flags(resolved.flags, core::kKnownLaunchFlags, "config.flags");
    return resolved;
}

const cucore_launch_config_t &required_config(const cucore_launch_config_t *config) {
    capi::require(config, "config");
    return *config;
}

[[noreturn, gnu::cold, gnu::noinline]] void throw_null_arrays(const void *const *args) {
    core::throw_invalid_argument(std::string("argument '") + (args ? "arg_sizes" : "args") +
                                 "' is NULL with a non-zero arg_count");
}

[[noreturn, gnu::cold, gnu::noinline]] void throw_null_arg(size_t index) {
    core::throw_invalid_argument("argument 'args[" + std::to_string(index) + "]' is NULL");
}

// The argument arrays of a launch: both given with a count, no argument pointer NULL.
inline void check_args(const void *const *args, const size_t *arg_sizes, size_t arg_count) {
    if (arg_count == 0) return;
    if (__builtin_expect(!args || !arg_sizes, 0)) throw_null_arrays(args);
    for (size_t i = 0; i < arg_count; ++i)
        if (__builtin_expect(args[i] == nullptr, 0)) throw_null_arg(i);
}
}  // namespace

extern "C" {

cucore_status_t cucore_launch_config_validate(const cucore_launch_config_t *config, cucore_kernel_t *kernel,
                                              cucore_device_t *device) {
    return capi::guarded(__func__, [&] {
        const cucore_launch_config_t resolved = read_config(&required_config(config));
        core::Kernel &object = capi::get(kernel, "kernel");
        core::validate_launch_config(resolved, object, capi::get(device, "device"));
    });
}

cucore_status_t cucore_launch(cucore_stream_t *stream, const cucore_launch_config_t *config, cucore_kernel_t *kernel,
                              const void *const *args, const size_t *arg_sizes, size_t arg_count) {
    return capi::guarded(__func__, [&] {
        core::Stream &target = capi::get(stream, "stream");
        core::Kernel &object = capi::get(kernel, "kernel");
        const cucore_launch_config_t resolved = read_config(config);
        check_args(args, arg_sizes, arg_count);
        core::launch(target, resolved, object, args, arg_sizes, arg_count);
    });
}

cucore_status_t cucore_launch_max_potential_cluster_size(const cucore_launch_config_t *config,
                                                         cucore_kernel_t *kernel, cucore_device_t *device,
                                                         int *cluster_size) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(cluster_size, "cluster_size");
        const cucore_launch_config_t resolved = read_config(&required_config(config));
        core::Kernel &object = capi::get(kernel, "kernel");
        result = core::max_potential_cluster_size(resolved, object, capi::get(device, "device"));
    });
}

cucore_status_t cucore_launch_max_active_clusters(const cucore_launch_config_t *config, cucore_kernel_t *kernel,
                                                  cucore_device_t *device, int *clusters) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(clusters, "clusters");
        const cucore_launch_config_t resolved = read_config(&required_config(config));
        core::Kernel &object = capi::get(kernel, "kernel");
        result = core::max_active_clusters(resolved, object, capi::get(device, "device"));
    });
}

}  // extern "C"
