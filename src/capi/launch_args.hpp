// C ABI: the one reading of a launch configuration and of kernel argument arrays
// (launches and graph kernel nodes).
#pragma once

#include "capi/capi.hpp"
#include "core/launch.hpp"

namespace cucore::capi {
inline constexpr cucore_launch_config_t kLaunchDefaults = CUCORE_LAUNCH_CONFIG_INIT;

inline cucore_launch_config_t read_config(const cucore_launch_config_t *config) {
    cucore_launch_config_t resolved = read_options(config, kLaunchDefaults, "config");
    check_flags(resolved.flags, core::kKnownLaunchFlags, "config.flags");
    return resolved;
}

inline const cucore_launch_config_t &required_config(const cucore_launch_config_t *config) {
    require(config, "config");
    return *config;
}

// A cucore_launch_block_t: required, struct_size checked as an options struct's.
inline cucore_launch_block_t read_block(const cucore_launch_block_t *block) {
    static constexpr cucore_launch_block_t kDefaults = CUCORE_LAUNCH_BLOCK_INIT;
    require(block, "block");
    return read_options(block, kDefaults, "block");
}

[[noreturn, gnu::cold, gnu::noinline]] inline void throw_null_arrays(const void *const *args) {
    core::throw_invalid_argument(std::string("argument '") + (args ? "arg_sizes" : "args") +
                                 "' is NULL with a non-zero arg_count");
}

[[noreturn, gnu::cold, gnu::noinline]] inline void throw_null_arg(size_t index) {
    core::throw_invalid_argument("argument 'args[" + std::to_string(index) + "]' is NULL");
}

// The argument arrays of a launch: both given with a count, no argument pointer NULL.
inline void check_args(const void *const *args, const size_t *arg_sizes, size_t arg_count) {
    if (arg_count == 0) return;
    if (__builtin_expect(!args || !arg_sizes, 0)) throw_null_arrays(args);
    for (size_t i = 0; i < arg_count; ++i)
        if (__builtin_expect(args[i] == nullptr, 0)) throw_null_arg(i);
}

}  // namespace cucore::capi
