#include "core/launch.hpp"

#include <cuda.h>

#include <cstdint>
#include <string>

#include "core/device.hpp"
#include "core/error.hpp"
#include "core/graph_attachments.hpp"
#include "core/kernel.hpp"
#include "core/stream.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

namespace {

// A configuration with defaults applied: zero dimensions count as 1, and with
// a cluster the grid counts clusters (grid here is in blocks).
struct Dims {
    unsigned grid[3];
    unsigned block[3];
    unsigned cluster[3];
    bool has_cluster;
    uint64_t threads_per_block;
    uint64_t blocks;
};

inline unsigned or_one(uint32_t value) { return value ? value : 1u; }

std::string dims_text(const unsigned (&d)[3]) {
    return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

std::string config_dims_text(const uint32_t (&d)[3]) {
    return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

// "kernel 'name'", or "the kernel" when the driver cannot name it (messages only).
std::string label(Kernel &kernel) noexcept {
    try {
        const char *name = kernel.name();
        if (name && *name) return std::string("kernel '") + name + "'";
    } catch (...) {
    }
    return "the kernel";
}

[[noreturn, gnu::cold, gnu::noinline]] void throw_grid_overflow(const cucore_launch_config_t &config) {
    throw_invalid_argument("argument 'config': grid " + config_dims_text(config.grid) + " clusters of " +
                           config_dims_text(config.cluster) + " blocks exceeds 2^32-1 blocks in a dimension");
}

inline void resolve(const cucore_launch_config_t &config, Dims &dims) {
    dims.has_cluster = (config.cluster[0] | config.cluster[1] | config.cluster[2]) != 0;
    for (int i = 0; i < 3; ++i) {
        dims.block[i] = or_one(config.block[i]);
        dims.cluster[i] = dims.has_cluster ? or_one(config.cluster[i]) : 1u;
        const uint64_t grid = uint64_t{or_one(config.grid[i])} * dims.cluster[i];
        if (__builtin_expect(grid > UINT32_MAX, 0)) throw_grid_overflow(config);
        dims.grid[i] = static_cast<unsigned>(grid);
    }
    dims.threads_per_block = uint64_t{dims.block[0]} * dims.block[1] * dims.block[2];
    dims.blocks = uint64_t{dims.grid[0]} * dims.grid[1] * dims.grid[2];
}

[[noreturn, gnu::cold, gnu::noinline]] void throw_count_mismatch(Kernel &kernel, size_t given, size_t expected) {
    throw_invalid_argument("argument 'arg_count' is " + std::to_string(given) + ", but " + label(kernel) + " has " +
                           std::to_string(expected) + " parameter" + (expected == 1 ? "" : "s"));
}

[[noreturn, gnu::cold, gnu::noinline]] void throw_size_mismatch(Kernel &kernel, size_t index, size_t given,
                                                                 size_t expected) {
    const std::string i = std::to_string(index);
    throw_invalid_argument("argument 'arg_sizes[" + i + "]' is " + std::to_string(given) + " bytes, but parameter " +
                           i + " of " + label(kernel) + " is " + std::to_string(expected) + " bytes");
}

[[noreturn, gnu::cold, gnu::noinline]] void throw_foreign_context(Kernel &kernel) {
    throw_invalid_argument("argument 'stream' belongs to another context than the wrapped CUfunction of " +
                           label(kernel) + "; a CUfunction launches only into streams of its own context");
}

[[noreturn, gnu::cold, gnu::noinline]] void throw_block_too_large(Kernel &kernel, const Dims &dims, int limit,
                                                                   int device) {
    throw_invalid_argument("argument 'config': block " + dims_text(dims.block) + " has " +
                           std::to_string(dims.threads_per_block) + " threads, more than the " +
                           std::to_string(limit) + " threads per block " + label(kernel) + " allows on device " +
                           std::to_string(device));
}

[[noreturn, gnu::cold, gnu::noinline]] void throw_shared_too_large(Kernel &kernel, uint32_t bytes, int allowance,
                                                                    int device) {
    throw_invalid_argument("argument 'config': shared_memory_bytes " + std::to_string(bytes) + " is above the " +
                           std::to_string(allowance) + " bytes of dynamic shared memory " + label(kernel) +
                           " allows on device " + std::to_string(device) +
                           " (raise it with CUCORE_KERNEL_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)");
}

[[noreturn, gnu::cold, gnu::noinline]] void throw_cluster_unsupported(Device &device, int major) {
    int minor = 0;
    try {
        minor = device.attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    } catch (...) {
    }
    throw_invalid_argument("argument 'config' asks for a cluster, which needs compute capability 9.0; device " +
                           std::to_string(device.ordinal()) + " has " + std::to_string(major) + "." +
                           std::to_string(minor));
}

// The checks a launch and cucore_launch_config_validate share. Only the
// cooperative check asks the driver (an occupancy query).
void check_against_kernel(const cucore_launch_config_t &config, const Dims &dims, Kernel &kernel,
                          const Kernel::ContextEntry &entry) {
    if (__builtin_expect(dims.threads_per_block > static_cast<uint64_t>(entry.max_threads_per_block), 0))
        throw_block_too_large(kernel, dims, entry.max_threads_per_block, entry.context->device().ordinal());
    if (__builtin_expect(config.shared_memory_bytes >
                             static_cast<uint32_t>(entry.max_dynamic_shared_bytes.load(std::memory_order_relaxed)),
                         0)) {
        // The allowance may have been raised since it was cached (by foreign code).
        const int allowance = kernel.refresh_dynamic_shared_allowance(entry);
        if (config.shared_memory_bytes > static_cast<uint32_t>(allowance))
            throw_shared_too_large(kernel, config.shared_memory_bytes, allowance, entry.context->device().ordinal());
    }
    if (dims.has_cluster && entry.compute_capability_major < 9)
        throw_cluster_unsupported(entry.context->device(), entry.compute_capability_major);
    if (config.flags & CUCORE_LAUNCH_COOPERATIVE) {
        Device &device = entry.context->device();
        int per_multiprocessor = 0;
        {
            ScopedContext bind(entry.cu_context);
            CUCORE_CALL(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, &per_multiprocessor, entry.function,
                        static_cast<int>(dims.threads_per_block), config.shared_memory_bytes, CU_OCCUPANCY_DEFAULT);
        }
        const int multiprocessors = device.attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
        const uint64_t resident = uint64_t(per_multiprocessor > 0 ? per_multiprocessor : 0) *
                                  uint64_t(multiprocessors > 0 ? multiprocessors : 0);
        if (dims.blocks > resident)
            throw_invalid_argument("argument 'config': a cooperative grid of " + std::to_string(dims.blocks) +
                                   " blocks (" + dims_text(dims.grid) + ") is larger than the " +
                                   std::to_string(resident) + " blocks that can be resident at once on device " +
                                   std::to_string(device.ordinal()) + " (" + std::to_string(per_multiprocessor) +
                                   " per multiprocessor x " + std::to_string(multiprocessors) +
                                   " multiprocessors for " + label(kernel) + ")");
    }
}

// Fills `launch` and its attributes (`attributes` has room for 4).
inline void build(const cucore_launch_config_t &config, const Dims &dims, CUstream stream, CUlaunchConfig &launch,
                  CUlaunchAttribute *attributes) {
    launch.gridDimX = dims.grid[0];
    launch.gridDimY = dims.grid[1];
    launch.gridDimZ = dims.grid[2];
    launch.blockDimX = dims.block[0];
    launch.blockDimY = dims.block[1];
    launch.blockDimZ = dims.block[2];
    launch.sharedMemBytes = config.shared_memory_bytes;
    launch.hStream = stream;
    launch.attrs = attributes;
    unsigned count = 0;
    if (__builtin_expect(dims.has_cluster | (config.flags != 0), 0)) {
        if (dims.has_cluster) {
            CUlaunchAttribute &a = attributes[count++] = CUlaunchAttribute{};
            a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
            a.value.clusterDim.x = dims.cluster[0];
            a.value.clusterDim.y = dims.cluster[1];
            a.value.clusterDim.z = dims.cluster[2];
        }
        if (config.flags & CUCORE_LAUNCH_COOPERATIVE) {
            CUlaunchAttribute &a = attributes[count++] = CUlaunchAttribute{};
            a.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
            a.value.cooperative = 1;
        }
        if (config.flags & CUCORE_LAUNCH_PROGRAMMATIC_STREAM_SERIALIZATION) {
            CUlaunchAttribute &a = attributes[count++] = CUlaunchAttribute{};
            a.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
            a.value.programmaticStreamSerializationAllowed = 1;
        }
        if (config.flags & CUCORE_LAUNCH_PRIORITY) {
            CUlaunchAttribute &a = attributes[count++] = CUlaunchAttribute{};
            a.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
            a.value.priority = config.priority;
        }
    }
    launch.numAttrs = count;
}

// The context whose CUfunction serves queries on `device`: a wrapped
// CUfunction's own (after checking the device), else the primary context.
Ref<Context> query_context(Kernel &kernel, Device &device) {
    kernel.check_device(device, "device");
    if (Context *own = kernel.function_context()) return Ref<Context>(own);
    return device.primary_context();
}

void require_compute_capability_9(Device &device, const char *what) {
    int major = 0, minor = 0;
    device.compute_capability(major, minor);
    if (major < 9)
        throw Error(CUCORE_ERROR_NOT_SUPPORTED, std::string(what) + " needs compute capability 9.0; device " +
                                                    std::to_string(device.ordinal()) + " has " +
                                                    std::to_string(major) + "." + std::to_string(minor));
}

}  // namespace

void launch(Stream &stream, const cucore_launch_config_t &config, Kernel &kernel, const void *const *args,
            const size_t *arg_sizes, size_t arg_count) {
    Dims dims;
    resolve(config, dims);
    if (Context *own = kernel.function_context(); __builtin_expect(own && own->cu() != stream.cu_context(), 0))
        throw_foreign_context(kernel);
    const Kernel::ContextEntry &entry = kernel.entry(stream.cu_context(), stream.context());
    if (const std::vector<Kernel::ParamInfo> *params = kernel.params(&stream.context())) {
        if (__builtin_expect(params->size() != arg_count, 0)) throw_count_mismatch(kernel, arg_count, params->size());
        const Kernel::ParamInfo *info = params->data();
        for (size_t i = 0; i < arg_count; ++i)
            if (__builtin_expect(arg_sizes[i] != info[i].size, 0))
                throw_size_mismatch(kernel, i, arg_sizes[i], info[i].size);
    }
    check_against_kernel(config, dims, kernel, entry);
    CUlaunchConfig launch;
    CUlaunchAttribute attributes[4];
    build(config, dims, stream.cu(), launch, attributes);
    // A created stream names its context; the default streams mean "of the current one".
    ScopedContext bind(stream.cu_context(), stream.is_builtin());
    CUCORE_CALL(cuLaunchKernelEx, &launch, entry.function, const_cast<void **>(args), nullptr);
    hold_kernel_for_capture(stream, kernel);
}

CUDA_KERNEL_NODE_PARAMS kernel_node_params(const cucore_launch_config_t &config, Kernel &kernel, Context &context,
                                           const void *const *args, const size_t *arg_sizes, size_t arg_count) {
    if (config.flags != 0 || (config.cluster[0] | config.cluster[1] | config.cluster[2]) != 0)
        throw_invalid_argument("argument 'config': a kernel node takes grid, block and shared memory only; "
                               "cluster, cooperative, programmatic-serialization and priority configurations are "
                               "not supported for explicit kernel nodes (capture a launch with them instead)");
    Dims dims;
    resolve(config, dims);
    if (Context *own = kernel.function_context(); own && own->cu() != context.cu())
        throw_invalid_argument("the graph's context is not the context of the wrapped CUfunction of " + label(kernel) +
                               "; a CUfunction runs only in its own context");
    const Kernel::ContextEntry &entry = kernel.entry(context);
    if (const std::vector<Kernel::ParamInfo> *params = kernel.params(&context)) {
        if (params->size() != arg_count) throw_count_mismatch(kernel, arg_count, params->size());
        for (size_t i = 0; i < arg_count; ++i)
            if (arg_sizes[i] != (*params)[i].size) throw_size_mismatch(kernel, i, arg_sizes[i], (*params)[i].size);
    }
    check_against_kernel(config, dims, kernel, entry);
    CUDA_KERNEL_NODE_PARAMS params{};
    params.func = entry.function;
    params.gridDimX = dims.grid[0];
    params.gridDimY = dims.grid[1];
    params.gridDimZ = dims.grid[2];
    params.blockDimX = dims.block[0];
    params.blockDimY = dims.block[1];
    params.blockDimZ = dims.block[2];
    params.sharedMemBytes = config.shared_memory_bytes;
    params.kernelParams = const_cast<void **>(args);
    params.ctx = context.cu();
    return params;
}

void validate_launch_config(const cucore_launch_config_t &config, Kernel &kernel, Device &device) {
    Dims dims;
    resolve(config, dims);
    Ref<Context> context = query_context(kernel, device);
    const Kernel::ContextEntry &entry = kernel.entry(*context);
    static constexpr CUdevice_attribute kBlockLimits[3] = {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
                                                           CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
                                                           CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z};
    static constexpr CUdevice_attribute kGridLimits[3] = {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
                                                          CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
                                                          CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z};
    static constexpr const char kAxis[3] = {'x', 'y', 'z'};
    for (int i = 0; i < 3; ++i) {
        const int limit = device.attribute(kBlockLimits[i]);
        if (dims.block[i] > static_cast<unsigned>(limit))
            throw_invalid_argument(std::string("argument 'config': block.") + kAxis[i] + " is " +
                                   std::to_string(dims.block[i]) + ", above device " +
                                   std::to_string(device.ordinal()) + "'s limit of " + std::to_string(limit));
    }
    for (int i = 0; i < 3; ++i) {
        const int limit = device.attribute(kGridLimits[i]);
        if (dims.grid[i] > static_cast<unsigned>(limit))
            throw_invalid_argument(std::string("argument 'config': the grid has ") + std::to_string(dims.grid[i]) +
                                   " blocks in " + kAxis[i] + ", above device " + std::to_string(device.ordinal()) +
                                   "'s limit of " + std::to_string(limit));
    }
    check_against_kernel(config, dims, kernel, entry);
    if (dims.has_cluster) {
        // The largest cluster the kernel can use with this block and shared memory.
        CUlaunchConfig query;
        CUlaunchAttribute attributes[4];
        cucore_launch_config_t plain = config;
        plain.flags = 0;
        build(plain, dims, nullptr, query, attributes);
        int largest = 0;
        {
            ScopedContext bind(context->cu());
            CUCORE_CALL(cuOccupancyMaxPotentialClusterSize, &largest, entry.function, &query);
        }
        const uint64_t size = uint64_t{dims.cluster[0]} * dims.cluster[1] * dims.cluster[2];
        if (size > static_cast<uint64_t>(largest > 0 ? largest : 0))
            throw_invalid_argument("argument 'config': a cluster of " + dims_text(dims.cluster) + " = " +
                                   std::to_string(size) + " blocks is larger than the " + std::to_string(largest) +
                                   " blocks per cluster " + label(kernel) + " can use on device " +
                                   std::to_string(device.ordinal()));
    }
}

namespace {
// A cluster occupancy query (`query`: the driver's entry point) of `plain` (flags already cleared) for
// `kernel` in `device`'s context.
template <class Query>
int cluster_occupancy(const cucore_launch_config_t &plain, Kernel &kernel, Device &device, Query query) {
    Ref<Context> context = query_context(kernel, device);
    require_compute_capability_9(device, "cluster occupancy");
    Dims dims;
    resolve(plain, dims);
    const Kernel::ContextEntry &entry = kernel.entry(*context);
    CUlaunchConfig launch_config;
    CUlaunchAttribute attributes[4];
    build(plain, dims, nullptr, launch_config, attributes);
    int result = 0;
    ScopedContext bind(context->cu());
    query(&result, entry.function, &launch_config);
    return result;
}
}  // namespace

int max_potential_cluster_size(const cucore_launch_config_t &config, Kernel &kernel, Device &device) {
    // The config's cluster is ignored: the grid counts blocks.
    cucore_launch_config_t plain = config;
    plain.cluster[0] = plain.cluster[1] = plain.cluster[2] = 0;
    plain.flags = 0;
    return cluster_occupancy(plain, kernel, device, [](int *size, CUfunction function, CUlaunchConfig *query) {
        CUCORE_CALL(cuOccupancyMaxPotentialClusterSize, size, function, query);
    });
}

int max_active_clusters(const cucore_launch_config_t &config, Kernel &kernel, Device &device) {
    if (!(config.cluster[0] | config.cluster[1] | config.cluster[2]))
        throw_invalid_argument("argument 'config' has no cluster (cluster dimensions all 0)");
    cucore_launch_config_t plain = config;
    plain.flags = 0;
    return cluster_occupancy(plain, kernel, device, [](int *clusters, CUfunction function, CUlaunchConfig *query) {
        CUCORE_CALL(cuOccupancyMaxActiveClusters, clusters, function, query);
    });
}

}  // namespace cucore::core
