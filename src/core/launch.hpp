// Kernel launches: a cucore_launch_config_t checked against the kernel and the
// device, turned into a CUlaunchConfig on the stack, and cuLaunchKernelEx.
//
// The hot path (no cluster, not cooperative, caches warm) reads the kernel's
// per-context entry and parameter info without a lock, allocates nothing,
// builds no string and makes one driver call: cuLaunchKernelEx (plus the
// context binding a legacy or per-thread default stream needs).
#pragma once

#include <cuda.h>

#include <cstddef>

#include "cucore/launch.h"

namespace cucore::core {

class Context;
class Device;
class Kernel;
class Stream;

// The known cucore_launch_flag_t bits.
constexpr uint32_t kKnownLaunchFlags =
    CUCORE_LAUNCH_COOPERATIVE | CUCORE_LAUNCH_PROGRAMMATIC_STREAM_SERIALIZATION | CUCORE_LAUNCH_PRIORITY;

// Launches `kernel` into `stream` (config already read: struct_size and flags
// checked; argument arrays checked) with `arg_count` arguments; see cucore_launch.
void launch(Stream &stream, const cucore_launch_config_t &config, Kernel &kernel, const void *const *args,
            const size_t *arg_sizes, size_t arg_count);

// The driver's description of a kernel node of `kernel` in `context` with
// `config` (flags, cluster: none; checked as a launch checks them) and the
// arguments (referenced, not copied: the driver copies them when the node is
// added or set). Cluster, cooperative and priority configurations are refused
// (a kernel node would need them as node attributes; capture a launch instead).
CUDA_KERNEL_NODE_PARAMS kernel_node_params(const cucore_launch_config_t &config, Kernel &kernel, Context &context,
                                           const void *const *args, const size_t *arg_sizes, size_t arg_count);

// Runs the checks of a launch on `device` (its primary context), plus the
// device's grid and block limits and the cluster size, without launching.
void validate_launch_config(const cucore_launch_config_t &config, Kernel &kernel, Device &device);

// Cluster occupancy (cucore_launch_max_potential_cluster_size / _max_active_clusters).
int max_potential_cluster_size(const cucore_launch_config_t &config, Kernel &kernel, Device &device);
int max_active_clusters(const cucore_launch_config_t &config, Kernel &kernel, Device &device);

}  // namespace cucore::core
