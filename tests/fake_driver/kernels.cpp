// Kernels, functions, launches and occupancy. Any CUkernel of a loaded fake
// library or from fake::make_kernel works; what it looks like (parameters,
// attributes, occupancy answers) is its KernelSpec. A CUfunction is one
// Function per (kernel, context), kept for the process.
#include <cstring>

#include "entry_points.hpp"
#include "graphs.hpp"
#include "state.hpp"

namespace fake::detail {
namespace {

// The spec of a known kernel, or null (an unknown CUkernel, or one of an unloaded library).
KernelSpec *spec_of(CUkernel kernel) {
    State &g = state();
    auto it = g.kernel_specs.find(kernel);
    if (const KernelRecord *record = find_kernel_record(kernel)) {
        if (it == g.kernel_specs.end()) {
            KernelSpec spec;
            spec.name = record->name;
            spec.param_sizes = record->param_sizes;
            it = g.kernel_specs.emplace(kernel, spec).first;
        }
        return &it->second;
    }
    return it != g.kernel_specs.end() && g.foreign_kernels.count(kernel) ? &it->second : nullptr;
}

Function *as_function(CUfunction f) {
    auto *function = reinterpret_cast<Function *>(f);
    return state().functions.count(function) ? function : nullptr;
}

// The function of `kernel` in `context`, whose kernel is known.
Function *function_of(CUkernel kernel, CUcontext context) {
    auto &slot = state().function_storage[{kernel, context}];
    if (!slot) slot = std::make_unique<Function>(Function{kernel, context});
    state().functions.insert(slot.get());
    return slot.get();
}

size_t param_offset(const KernelSpec &spec, size_t index) {
    size_t offset = 0;
    for (size_t i = 0; i <= index; ++i) {
        const size_t size = spec.param_sizes[i];
        const size_t align = size >= 8 ? 8 : size >= 4 ? 4 : size >= 2 ? 2 : 1;
        offset = (offset + align - 1) / align * align;
        if (i < index) offset += size;
    }
    return offset;
}

int attribute_of(CUkernel kernel, const KernelSpec &spec, int attribute, int device) {
    if (auto it = state().kernel_attributes.find({kernel, attribute, device}); it != state().kernel_attributes.end())
        return it->second;
    if (attribute == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) return spec.max_threads_per_block;
    if (attribute == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) return spec.max_dynamic_shared_bytes;
    return attribute * 100 + device;  // encodes what was asked
}

bool valid_attribute_value(int attribute, int value) {
    if (attribute == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
        return value >= 0 && value <= kMaxDynamicSharedBytes;
    return value >= -1;
}

CUresult param_info(CUkernel kernel, size_t index, size_t *offset, size_t *size) {
    KernelSpec *spec = spec_of(kernel);
    if (!spec) return CUDA_ERROR_INVALID_HANDLE;
    if (!spec->param_info_supported) return CUDA_ERROR_NOT_SUPPORTED;
    if (!offset || !size || index >= spec->param_sizes.size()) return CUDA_ERROR_INVALID_VALUE;
    *offset = param_offset(*spec, index);
    *size = spec->param_sizes[index];
    return CUDA_SUCCESS;
}

// Records the call (the cluster queries' config with its attributes).
void record_occupancy(const char *entry, CUfunction function) {
    OccupancyCall &call = state().last_occupancy;
    call = OccupancyCall{};
    call.entry = entry;
    call.function = function;
    call.current = t_current;
}

CUresult cluster_query(const char *entry, int *answer, CUfunction function, const CUlaunchConfig *config,
                       int KernelSpec::*value) {
    Lock lock(state().mutex);
    Function *f = as_function(function);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    if (!answer || !config) return CUDA_ERROR_INVALID_VALUE;
    record_occupancy(entry, function);
    OccupancyCall &call = state().last_occupancy;
    call.config = *config;
    call.attributes.assign(config->attrs, config->attrs + config->numAttrs);
    call.config.attrs = nullptr;
    *answer = spec_of(f->kernel)->*value;
    return CUDA_SUCCESS;
}

// What a launch of `record`'s kernel does when it runs (fake_driver.hpp, "Kernel behaviours"), or
// nothing: kernels are recorded, not run, except the behaviours chosen by name.
std::function<void()> behaviour_of(const LaunchRecord &record) {
    const KernelSpec *spec = spec_of(record.kernel);
    if (!spec) return {};
    auto sizes_are = [&](std::vector<size_t> sizes) { return spec->param_sizes == sizes && record.args.size() == sizes.size(); };
    if (spec->name == kSetConditionKernel && sizes_are({8, 4})) {
        CUgraphConditionalHandle handle;
        unsigned value;
        std::memcpy(&handle, record.args[0].data(), sizeof handle);
        std::memcpy(&value, record.args[1].data(), sizeof value);
        return [handle, value] {
            if (Condition *c = condition(handle)) c->value = value;
        };
    }
    if (spec->name == kCountConditionKernel && sizes_are({8, 8, 4})) {
        CUgraphConditionalHandle handle;
        CUdeviceptr counter;
        int limit;
        std::memcpy(&handle, record.args[0].data(), sizeof handle);
        std::memcpy(&counter, record.args[1].data(), sizeof counter);
        std::memcpy(&limit, record.args[2].data(), sizeof limit);
        return [handle, counter, limit] {
            if (classify(counter, sizeof(int)) != 1) return;  // a device would fault
            int count;
            std::memcpy(&count, reinterpret_cast<const void *>(counter), sizeof count);
            ++count;
            std::memcpy(reinterpret_cast<void *>(counter), &count, sizeof count);
            if (Condition *c = condition(handle)) c->value = count < limit ? 1 : 0;
        };
    }
    return {};
}

}  // namespace

CUfunction function_handle(CUkernel kernel, CUcontext context) {
    return reinterpret_cast<CUfunction>(function_of(kernel, context));
}

bool function_info(CUfunction function, CUkernel &kernel, CUcontext &context) {
    Function *f = as_function(function);
    if (!f || !spec_of(f->kernel)) return false;
    kernel = f->kernel;
    context = f->context;
    return true;
}

const std::vector<size_t> *param_sizes(CUfunction function) {
    Function *f = as_function(function);
    KernelSpec *spec = f ? spec_of(f->kernel) : nullptr;
    return spec ? &spec->param_sizes : nullptr;
}

const std::string *kernel_name(CUfunction function) {
    Function *f = as_function(function);
    KernelSpec *spec = f ? spec_of(f->kernel) : nullptr;
    return spec ? &spec->name : nullptr;
}

bool kernel_known(CUkernel kernel) { return spec_of(kernel) != nullptr; }

void run_launch(LaunchRecord record) {
    std::function<void()> behaviour = behaviour_of(record);
    state().launches.push_back(std::move(record));
    ++state().launch_count;
    if (behaviour) behaviour();
}

CUresult f_cuKernelGetFunction(CUfunction *function, CUkernel kernel) {
    if (!function) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    if (!spec_of(kernel)) return CUDA_ERROR_INVALID_HANDLE;
    if (!as_context(t_current)) return CUDA_ERROR_INVALID_CONTEXT;
    *function = reinterpret_cast<CUfunction>(function_of(kernel, t_current));
    return CUDA_SUCCESS;
}
CUresult f_cuKernelGetAttribute(int *value, CUfunction_attribute attribute_argument, CUkernel kernel, CUdevice device) {
    const int attribute = value_of(attribute_argument);
    Lock lock(state().mutex);
    KernelSpec *spec = spec_of(kernel);
    if (!spec) return CUDA_ERROR_INVALID_HANDLE;
    if (!value || attribute < 0 || attribute >= CU_FUNC_ATTRIBUTE_MAX || device < 0 || device >= state().devices)
        return CUDA_ERROR_INVALID_VALUE;
    *value = attribute_of(kernel, *spec, attribute, device);
    return CUDA_SUCCESS;
}
CUresult f_cuKernelSetAttribute(CUfunction_attribute attribute_argument, int value, CUkernel kernel, CUdevice device) {
    const int attribute = value_of(attribute_argument);
    Lock lock(state().mutex);
    if (!spec_of(kernel)) return CUDA_ERROR_INVALID_HANDLE;
    if (attribute < 0 || attribute >= CU_FUNC_ATTRIBUTE_MAX || device < 0 || device >= state().devices ||
        !valid_attribute_value(attribute, value))
        return CUDA_ERROR_INVALID_VALUE;
    state().kernel_attributes[{kernel, attribute, device}] = value;
    return CUDA_SUCCESS;
}
CUresult f_cuKernelGetName(const char **name, CUkernel kernel) {
    Lock lock(state().mutex);
    KernelSpec *spec = spec_of(kernel);
    if (!spec) return CUDA_ERROR_INVALID_HANDLE;
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    *name = spec->name.c_str();
    return CUDA_SUCCESS;
}
CUresult f_cuKernelGetParamInfo(CUkernel kernel, size_t index, size_t *offset, size_t *size) {
    Lock lock(state().mutex);
    return param_info(kernel, index, offset, size);
}
CUresult f_cuFuncGetAttribute(int *value, CUfunction_attribute attribute_argument, CUfunction function) {
    const int attribute = value_of(attribute_argument);
    Lock lock(state().mutex);
    Function *f = as_function(function);
    if (!f || !spec_of(f->kernel)) return CUDA_ERROR_INVALID_HANDLE;
    if (!value || attribute < 0 || attribute >= CU_FUNC_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
    *value = attribute_of(f->kernel, *spec_of(f->kernel), attribute, device_of(f->context));
    return CUDA_SUCCESS;
}
CUresult f_cuFuncSetAttribute(CUfunction function, CUfunction_attribute attribute_argument, int value) {
    const int attribute = value_of(attribute_argument);
    Lock lock(state().mutex);
    Function *f = as_function(function);
    if (!f || !spec_of(f->kernel)) return CUDA_ERROR_INVALID_HANDLE;
    if (attribute < 0 || attribute >= CU_FUNC_ATTRIBUTE_MAX || !valid_attribute_value(attribute, value))
        return CUDA_ERROR_INVALID_VALUE;
    state().kernel_attributes[{f->kernel, attribute, device_of(f->context)}] = value;
    return CUDA_SUCCESS;
}
CUresult f_cuFuncGetName(const char **name, CUfunction function) {
    Lock lock(state().mutex);
    Function *f = as_function(function);
    if (!f || !spec_of(f->kernel)) return CUDA_ERROR_INVALID_HANDLE;
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    *name = spec_of(f->kernel)->name.c_str();
    return CUDA_SUCCESS;
}
CUresult f_cuFuncGetParamInfo(CUfunction function, size_t index, size_t *offset, size_t *size) {
    Lock lock(state().mutex);
    Function *f = as_function(function);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    return param_info(f->kernel, index, offset, size);
}
CUresult f_cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction function, void **params, void **extra) {
    Lock lock(state().mutex);
    Function *f = as_function(function);
    if (!f || !spec_of(f->kernel)) return CUDA_ERROR_INVALID_HANDLE;
    if (!config || extra) return CUDA_ERROR_INVALID_VALUE;
    // The stream must belong to the function's context (a default stream: the current one).
    CUresult error = CUDA_SUCCESS;
    Stream *stream = resolve_stream(config->hStream, error);
    if (!stream) return error;
    if (stream->context != f->context) return CUDA_ERROR_INVALID_CONTEXT;
    const KernelSpec &spec = *spec_of(f->kernel);
    if (!spec.param_sizes.empty() && !params) return CUDA_ERROR_INVALID_VALUE;
    LaunchRecord record;
    record.config = *config;
    record.attributes.assign(config->attrs, config->attrs + config->numAttrs);
    record.config.attrs = nullptr;
    record.function = function;
    record.kernel = f->kernel;
    record.function_context = f->context;
    record.current = t_current;
    for (size_t i = 0; i < spec.param_sizes.size(); ++i) {
        const auto *bytes = static_cast<const unsigned char *>(params[i]);
        record.args.emplace_back(bytes, bytes + spec.param_sizes[i]);
    }
    if (capture_of(*stream)) {  // a kernel node with the launch's configuration and a copy of its arguments
        NodeParams node;
        node.type = CU_GRAPH_NODE_TYPE_KERNEL;
        node.kernel.func = function;
        node.kernel.ctx = f->context;
        node.kernel.gridDimX = config->gridDimX;
        node.kernel.gridDimY = config->gridDimY;
        node.kernel.gridDimZ = config->gridDimZ;
        node.kernel.blockDimX = config->blockDimX;
        node.kernel.blockDimY = config->blockDimY;
        node.kernel.blockDimZ = config->blockDimZ;
        node.kernel.sharedMemBytes = config->sharedMemBytes;
        node.args = std::move(record.args);
        node.attributes = std::move(record.attributes);
        return capture_node(*stream, std::move(node));
    }
    // Recorded at the call; a behaviour runs in stream order.
    if (std::function<void()> behaviour = behaviour_of(record)) enqueue_work(lock, *stream, std::move(behaviour));
    state().launches.push_back(std::move(record));
    ++state().launch_count;
    return CUDA_SUCCESS;
}
CUresult f_cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *blocks, CUfunction function, int block_size,
                                                               size_t shared, unsigned flags) {
    Lock lock(state().mutex);
    Function *f = as_function(function);
    if (!f || !spec_of(f->kernel)) return CUDA_ERROR_INVALID_HANDLE;
    if (!blocks || block_size <= 0) return CUDA_ERROR_INVALID_VALUE;
    record_occupancy("cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", function);
    OccupancyCall &call = state().last_occupancy;
    call.block_size = block_size;
    call.dynamic_shared_bytes = shared;
    call.flags = flags;
    *blocks = spec_of(f->kernel)->max_active_blocks_per_multiprocessor;
    return CUDA_SUCCESS;
}
CUresult f_cuOccupancyMaxPotentialBlockSize(int *min_grid, int *block, CUfunction function,
                                            CUoccupancyB2DSize to_shared, size_t shared, int limit) {
    Lock lock(state().mutex);
    Function *f = as_function(function);
    if (!f || !spec_of(f->kernel)) return CUDA_ERROR_INVALID_HANDLE;
    if (!min_grid || !block || to_shared) return CUDA_ERROR_INVALID_VALUE;
    record_occupancy("cuOccupancyMaxPotentialBlockSize", function);
    OccupancyCall &call = state().last_occupancy;
    call.dynamic_shared_bytes = shared;
    call.block_size_limit = limit;
    const KernelSpec &spec = *spec_of(f->kernel);
    *block = limit > 0 && limit < spec.max_threads_per_block ? limit : spec.max_threads_per_block;
    *min_grid = spec.max_active_blocks_per_multiprocessor * kOccupancyMultiprocessors;
    return CUDA_SUCCESS;
}
CUresult f_cuOccupancyAvailableDynamicSMemPerBlock(size_t *bytes, CUfunction function, int blocks, int block_size) {
    Lock lock(state().mutex);
    Function *f = as_function(function);
    if (!f || !spec_of(f->kernel)) return CUDA_ERROR_INVALID_HANDLE;
    if (!bytes || blocks <= 0 || block_size <= 0) return CUDA_ERROR_INVALID_VALUE;
    record_occupancy("cuOccupancyAvailableDynamicSMemPerBlock", function);
    OccupancyCall &call = state().last_occupancy;
    call.num_blocks = blocks;
    call.block_size = block_size;
    *bytes = kSharedBytesPerMultiprocessor / static_cast<size_t>(blocks);
    return CUDA_SUCCESS;
}
CUresult f_cuOccupancyMaxPotentialClusterSize(int *size, CUfunction function, const CUlaunchConfig *config) {
    return cluster_query("cuOccupancyMaxPotentialClusterSize", size, function, config,
                         &KernelSpec::max_potential_cluster_size);
}
CUresult f_cuOccupancyMaxActiveClusters(int *clusters, CUfunction function, const CUlaunchConfig *config) {
    return cluster_query("cuOccupancyMaxActiveClusters", clusters, function, config, &KernelSpec::max_active_clusters);
}

}  // namespace fake::detail

namespace fake {

using detail::Lock;
using detail::state;

CUkernel make_kernel(const KernelSpec &spec) {
    Lock lock(state().mutex);
    state().foreign_kernel_storage.push_back(std::make_unique<char>());
    auto kernel = reinterpret_cast<CUkernel>(state().foreign_kernel_storage.back().get());
    state().foreign_kernels.insert(kernel);
    state().kernel_specs[kernel] = spec;
    return kernel;
}

void set_kernel_spec(CUkernel kernel, const KernelSpec &spec) {
    Lock lock(state().mutex);
    state().kernel_specs[kernel] = spec;
}

CUfunction make_function(CUkernel kernel, CUcontext context) {
    Lock lock(state().mutex);
    return reinterpret_cast<CUfunction>(detail::function_of(kernel, context));
}

std::vector<LaunchRecord> launches() {
    Lock lock(state().mutex);
    return state().launches;
}

OccupancyCall last_occupancy() {
    Lock lock(state().mutex);
    return state().last_occupancy;
}

int kernel_attribute_set(CUkernel kernel, CUfunction_attribute attribute, int device) {
    Lock lock(state().mutex);
    auto it = state().kernel_attributes.find({kernel, attribute, device});
    return it == state().kernel_attributes.end() ? INT32_MIN : it->second;
}

}  // namespace fake
