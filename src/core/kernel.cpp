#include "core/kernel.hpp"

#include "core/device.hpp"
#include "core/error.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

// The public enum is the driver's CU_FUNC_ATTRIBUTE_* plus one (0 is unset).
static_assert(CUCORE_KERNEL_ATTRIBUTE_MAX_THREADS_PER_BLOCK == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK + 1);
static_assert(CUCORE_KERNEL_ATTRIBUTE_SHARED_SIZE_BYTES == CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES + 1);
static_assert(CUCORE_KERNEL_ATTRIBUTE_CONST_SIZE_BYTES == CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES + 1);
static_assert(CUCORE_KERNEL_ATTRIBUTE_LOCAL_SIZE_BYTES == CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES + 1);
static_assert(CUCORE_KERNEL_ATTRIBUTE_NUM_REGS == CU_FUNC_ATTRIBUTE_NUM_REGS + 1);
static_assert(CUCORE_KERNEL_ATTRIBUTE_PTX_VERSION == CU_FUNC_ATTRIBUTE_PTX_VERSION + 1);
static_assert(CUCORE_KERNEL_ATTRIBUTE_BINARY_VERSION == CU_FUNC_ATTRIBUTE_BINARY_VERSION + 1);
static_assert(CUCORE_KERNEL_ATTRIBUTE_CACHE_MODE_CA == CU_FUNC_ATTRIBUTE_CACHE_MODE_CA + 1);
static_assert(CUCORE_KERNEL_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ==
              CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES + 1);
static_assert(CUCORE_KERNEL_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT ==
              CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT + 1);
static_assert(CUCORE_KERNEL_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET == CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET + 1);
static_assert(CUCORE_KERNEL_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH == CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH + 1);
static_assert(CUCORE_KERNEL_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT == CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT + 1);
static_assert(CUCORE_KERNEL_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH == CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH + 1);
static_assert(CUCORE_KERNEL_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED ==
              CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED + 1);
static_assert(CUCORE_KERNEL_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE ==
              CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE + 1);
static_assert(CUCORE_KERNEL_ATTRIBUTE_COUNT == CU_FUNC_ATTRIBUTE_MAX + 1);

namespace {

bool settable(cucore_kernel_attribute_t attribute) {
    switch (attribute) {
        case CUCORE_KERNEL_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        case CUCORE_KERNEL_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
        case CUCORE_KERNEL_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
        case CUCORE_KERNEL_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
        case CUCORE_KERNEL_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
        case CUCORE_KERNEL_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
        case CUCORE_KERNEL_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: return true;
        default: return false;
    }
}

// Parameter indices beyond this are not asked for: a kernel's parameters fit
// in 32764 bytes, so no kernel has more.
constexpr size_t kMaxParams = 32764;

// The driver's occupancy calls take int sizes.
int as_int(uint32_t value, const char *argument) {
    if (value > static_cast<uint32_t>(INT32_MAX))
        throw_invalid_argument(std::string("argument '") + argument + "' is " + std::to_string(value) +
                               ", more than the driver accepts (" + std::to_string(INT32_MAX) + ")");
    return static_cast<int>(value);
}

}  // namespace

CUfunction_attribute driver_kernel_attribute(cucore_kernel_attribute_t attribute, bool set, const char *argument) {
    // (Unknown attributes are refused by the C ABI.)
    if (set && !settable(attribute))
        throw_invalid_argument(std::string("argument '") + argument + "' (" +
                               std::to_string(static_cast<int>(attribute)) +
                               ") is read-only; settable are MAX_DYNAMIC_SHARED_SIZE_BYTES, "
                               "PREFERRED_SHARED_MEMORY_CARVEOUT, REQUIRED_CLUSTER_WIDTH/HEIGHT/DEPTH, "
                               "NON_PORTABLE_CLUSTER_SIZE_ALLOWED and CLUSTER_SCHEDULING_POLICY_PREFERENCE");
    return static_cast<CUfunction_attribute>(attribute - 1);
}

Ref<Kernel> make_library_kernel(Ref<Object> library_owner, CUkernel kernel, const char *name) {
    return make<Kernel>(std::move(library_owner), kernel, nullptr, Ref<Context>(), name ? name : "");
}

Ref<Kernel> Kernel::wrap_kernel(CUkernel kernel, cucore_release_fn on_release, void *user_data) {
    driver::state();  // NO_DRIVER before anything is made
    Ref<Kernel> wrapped = make<Kernel>(Ref<Object>(), kernel, nullptr, Ref<Context>(), std::string());
    wrapped->owner_.set(on_release, user_data);
    return wrapped;
}

Ref<Kernel> Kernel::wrap_function(CUfunction function, cucore_release_fn on_release, void *user_data) {
    Ref<Context> context = Context::current();
    Ref<Kernel> wrapped = make<Kernel>(Ref<Object>(), nullptr, function, std::move(context), std::string());
    wrapped->owner_.set(on_release, user_data);
    return wrapped;
}

Kernel::Kernel(Ref<Object> library_owner, CUkernel kernel, CUfunction function, Ref<Context> function_context,
               std::string name) noexcept
    : Object(CUCORE_OBJECT_KERNEL),
      library_owner_(std::move(library_owner)),
      kernel_(kernel),
      function_(function),
      function_context_(std::move(function_context)),
      name_(std::move(name)) {
    // A library kernel knows the name it was looked up by; wrapped ones ask the driver.
    if (library_owner_) name_known_.store(true, std::memory_order_relaxed);
}

Kernel::~Kernel() {
    const int filled = filled_.load(std::memory_order_acquire);
    for (int i = 0; i < filled; ++i) handles::release_held(entries_[i].context);
    for (ContextEntry &entry : overflow_) handles::release_held(entry.context);
    if (!library_owner_) owner_.notify();
}

const char *Kernel::name() {
    if (name_known_.load(std::memory_order_acquire)) return name_.c_str();
    std::lock_guard<std::mutex> lock(mutex_);
    if (!name_known_.load(std::memory_order_relaxed)) {
        const char *driver_name = nullptr;
        if (kernel_)
            CUCORE_CALL(cuKernelGetName, &driver_name, kernel_);
        else
            CUCORE_CALL(cuFuncGetName, &driver_name, function_);
        name_ = driver_name ? driver_name : "";
        name_known_.store(true, std::memory_order_release);
    }
    return name_.c_str();
}

void Kernel::check_device(const Device &device, const char *argument) const {
    if (!function_context_) return;
    const int own = function_context_->device().ordinal();
    if (device.ordinal() != own)
        throw_invalid_argument(std::string("argument '") + argument + "' is device " +
                               std::to_string(device.ordinal()) + ", but the wrapped CUfunction belongs to a context "
                               "of device " + std::to_string(own));
}

int Kernel::attribute(Device &device, cucore_kernel_attribute_t attribute) {
    const CUfunction_attribute which = driver_kernel_attribute(attribute, false, "attribute");
    check_device(device, "device");
    int value = 0;
    if (kernel_)
        CUCORE_CALL(cuKernelGetAttribute, &value, which, kernel_, device.cu());
    else
        CUCORE_CALL(cuFuncGetAttribute, &value, which, function_);
    return value;
}

void Kernel::set_attribute(Device &device, cucore_kernel_attribute_t attribute, int value) {
    const CUfunction_attribute which = driver_kernel_attribute(attribute, true, "attribute");
    check_device(device, "device");
    if (kernel_)
        CUCORE_CALL(cuKernelSetAttribute, which, value, kernel_, device.cu());
    else
        CUCORE_CALL(cuFuncSetAttribute, function_, which, value);
    if (attribute != CUCORE_KERNEL_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) return;
    // The launch checks read the allowance from the per-context entries: the
    // ones on this device take the new value (a kernel attribute applies to
    // every context of the device).
    std::lock_guard<std::mutex> lock(mutex_);
    const int filled = filled_.load(std::memory_order_acquire);
    auto update = [&](ContextEntry &entry) {
        if (entry.context->device().ordinal() == device.ordinal())
            entry.max_dynamic_shared_bytes.store(value, std::memory_order_relaxed);
    };
    for (int i = 0; i < filled; ++i) update(entries_[i]);
    for (ContextEntry &entry : overflow_) update(entry);
}

void Kernel::load_params(Context *context) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (param_state_.load(std::memory_order_relaxed) != kParamsNotLoaded) return;
    const driver::Table &api = driver::api();
    const bool supported = kernel_ ? api.cuKernelGetParamInfo != nullptr : api.cuFuncGetParamInfo != nullptr;
    if (!supported) {
        param_state_.store(kParamsUnknown, std::memory_order_release);
        return;
    }
    // The driver answers CUDA_ERROR_INVALID_CONTEXT without a current context
    // (seen on the H100 server): it loads the kernel into one to read its layout.
    Ref<Context> fallback;
    if (!context) context = function_context();
    if (!context) {
        fallback = Device::current()->primary_context();
        context = fallback.get();
    }
    ScopedContext bind(context->cu());
    std::vector<ParamInfo> params;
    for (size_t index = 0; index < kMaxParams; ++index) {
        size_t offset = 0, size = 0;
        const CUresult result = kernel_ ? api.cuKernelGetParamInfo(kernel_, index, &offset, &size)
                                        : api.cuFuncGetParamInfo(function_, index, &offset, &size);
        if (result == CUDA_SUCCESS) {
            params.push_back({offset, size});
            continue;
        }
        // The driver answers INVALID_VALUE for the first index past the last parameter.
        if (result == CUDA_ERROR_INVALID_VALUE) break;
        if (result == CUDA_ERROR_NOT_SUPPORTED) {
            param_state_.store(kParamsUnknown, std::memory_order_release);
            return;
        }
        throw_cuda(result, kernel_ ? "cuKernelGetParamInfo" : "cuFuncGetParamInfo");
    }
    params_ = std::move(params);
    param_state_.store(kParamsKnown, std::memory_order_release);
}

const std::vector<Kernel::ParamInfo> *Kernel::params(Context *context) {
    int state = param_state_.load(std::memory_order_acquire);
    if (__builtin_expect(state == kParamsNotLoaded, 0)) {
        load_params(context);
        state = param_state_.load(std::memory_order_acquire);
    }
    return state == kParamsKnown ? &params_ : nullptr;
}

size_t Kernel::param_count() {
    const std::vector<ParamInfo> *known = params();
    if (!known)
        throw Error(CUCORE_ERROR_NOT_SUPPORTED, std::string("the driver does not report parameter info (") +
                                                    (kernel_ ? "cuKernelGetParamInfo" : "cuFuncGetParamInfo") +
                                                    " needs CUDA 12.4)");
    return known->size();
}

Kernel::ParamInfo Kernel::param(size_t index) {
    const size_t count = param_count();
    if (index >= count)
        throw_invalid_argument("argument 'index' is " + std::to_string(index) + ", but the kernel has " +
                               std::to_string(count) + " parameter" + (count == 1 ? "" : "s"));
    return params_[index];
}

void Kernel::fill_entry(ContextEntry &entry, Context &context) {
    CUfunction function = function_;
    int max_threads = 0, max_dynamic_shared = 0;
    {
        ScopedContext bind(context.cu());
        if (kernel_) CUCORE_CALL(cuKernelGetFunction, &function, kernel_);
        CUCORE_CALL(cuFuncGetAttribute, &max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function);
        CUCORE_CALL(cuFuncGetAttribute, &max_dynamic_shared, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    function);
    }
    entry.compute_capability_major = context.device().attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    entry.cu_context = context.cu();
    entry.function = function;
    entry.max_threads_per_block = max_threads;
    entry.max_dynamic_shared_bytes.store(max_dynamic_shared, std::memory_order_relaxed);
    handles::retain_held(&context);  // nothing can fail after this
    entry.context = &context;
}

const Kernel::ContextEntry &Kernel::fill(Context &context) {
    if (function_context_ && function_context_->cu() != context.cu())
        throw_invalid_argument("the wrapped CUfunction belongs to another context than the stream's; a CUfunction "
                               "launches only in its own context");
    std::lock_guard<std::mutex> lock(mutex_);
    const int filled = filled_.load(std::memory_order_relaxed);
    for (int i = 0; i < filled; ++i)
        if (entries_[i].cu_context == context.cu()) return entries_[i];
    for (ContextEntry &entry : overflow_)
        if (entry.cu_context == context.cu()) return entry;
    if (filled < kEntries) {
        fill_entry(entries_[filled], context);  // on failure the slot stays unpublished
        filled_.store(filled + 1, std::memory_order_release);
        return entries_[filled];
    }
    ContextEntry &entry = overflow_.emplace_back();
    try {
        fill_entry(entry, context);
    } catch (...) {
        overflow_.pop_back();
        throw;
    }
    return entry;
}

int Kernel::refresh_dynamic_shared_allowance(const ContextEntry &entry) {
    int value = 0;
    CUCORE_CALL(cuFuncGetAttribute, &value, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, entry.function);
    const_cast<ContextEntry &>(entry).max_dynamic_shared_bytes.store(value, std::memory_order_relaxed);
    return value;
}

CUfunction Kernel::function_for(Device &device, Ref<Context> &primary) {
    check_device(device, "device");
    if (function_context_) {
        primary = function_context_;
        return function_;
    }
    primary = device.primary_context();
    return entry(*primary).function;
}

int Kernel::max_active_blocks_per_multiprocessor(Device &device, uint32_t block_size, size_t dynamic_shared_bytes) {
    if (block_size == 0) throw_invalid_argument("argument 'block_size' is 0");
    const int block = as_int(block_size, "block_size");
    Ref<Context> context;
    CUfunction function = function_for(device, context);
    int blocks = 0;
    ScopedContext bind(context->cu());
    CUCORE_CALL(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, &blocks, function, block, dynamic_shared_bytes,
                CU_OCCUPANCY_DEFAULT);
    return blocks;
}

void Kernel::max_potential_block_size(Device &device, size_t dynamic_shared_bytes, uint32_t block_size_limit,
                                      int &min_grid_size, int &block_size) {
    const int limit = as_int(block_size_limit, "block_size_limit");
    Ref<Context> context;
    CUfunction function = function_for(device, context);
    ScopedContext bind(context->cu());
    CUCORE_CALL(cuOccupancyMaxPotentialBlockSize, &min_grid_size, &block_size, function, nullptr,
                dynamic_shared_bytes, limit);
}

size_t Kernel::available_dynamic_shared_memory(Device &device, uint32_t num_blocks, uint32_t block_size) {
    if (num_blocks == 0) throw_invalid_argument("argument 'num_blocks' is 0");
    if (block_size == 0) throw_invalid_argument("argument 'block_size' is 0");
    const int blocks = as_int(num_blocks, "num_blocks"), block = as_int(block_size, "block_size");
    Ref<Context> context;
    CUfunction function = function_for(device, context);
    size_t bytes = 0;
    ScopedContext bind(context->cu());
    CUCORE_CALL(cuOccupancyAvailableDynamicSMemPerBlock, &bytes, function, blocks, block);
    return bytes;
}

}  // namespace cucore::core
