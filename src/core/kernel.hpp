// Kernels: a CUkernel of a loaded library (or a wrapped foreign CUkernel or
// CUfunction), with per-context CUfunction and attribute caches for launches.
//
// A CUkernel is context-independent; a launch needs the CUfunction of the
// kernel in the stream's context (cuKernelGetFunction). That lookup, and the
// two kernel attributes every launch checks (max threads per block, the dynamic
// shared memory allowance), are cached per context in a small array published
// with atomics, so a warm launch reads them without a lock or a driver call.
// Each cached entry holds a reference to its context: the CUfunction stays
// valid as long as the kernel lives (a primary context released to zero and
// retained again would otherwise hand back the same CUcontext with the old
// CUfunction gone).
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "core/context.hpp"
#include "core/handle.hpp"
#include "core/owner.hpp"
#include "core/thread_cache.hpp"
#include "cucore/kernel.h"

namespace cucore::core {

class Device;

class Kernel;

// Creates the kernel object for `kernel`, a CUkernel of the library that
// `library_owner` (the ObjectCode) keeps loaded; the kernel holds a reference
// to the owner. `name` is the symbol name it was looked up by.
Ref<Kernel> make_library_kernel(Ref<Object> library_owner, CUkernel kernel, const char *name);

class Kernel final : public Object, public Pooled<Kernel> {
  public:
    // What one context knows about the kernel (filled once, then read lock-free).
    struct ContextEntry {
        CUcontext cu_context = nullptr;
        Context *context = nullptr;  // holds one reference (see the file comment)
        CUfunction function = nullptr;
        int max_threads_per_block = 0;
        int compute_capability_major = 0;  // of the context's device (cluster launches)
        // The kernel's dynamic shared memory allowance; raised when the user (or
        // foreign code) raises it, on the first launch that needs more.
        std::atomic<int> max_dynamic_shared_bytes{0};
    };
    struct ParamInfo {
        size_t offset;
        size_t size;
    };

    // A foreign CUkernel, not owned; on_release(user_data) runs at the last release.
    static Ref<Kernel> wrap_kernel(CUkernel kernel, cucore_release_fn on_release, void *user_data);
    // A foreign CUfunction of the current context, not owned.
    static Ref<Kernel> wrap_function(CUfunction function, cucore_release_fn on_release, void *user_data);

    // Use make_library_kernel / wrap_kernel / wrap_function.
    Kernel(Ref<Object> library_owner, CUkernel kernel, CUfunction function, Ref<Context> function_context,
           std::string name) noexcept;
    ~Kernel() override;

    // The raw CUkernel (nullptr for a wrapped CUfunction).
    CUkernel cu_kernel() const noexcept { return kernel_; }
    // The wrapped CUfunction and its context (nullptr for CUkernels).
    CUfunction wrapped_function() const noexcept { return function_; }
    Context *function_context() const noexcept { return function_context_.get(); }

    // The symbol name (asked from the driver once for wrapped kernels).
    const char *name();

    // Attributes on `device` (the kernel's context's device for a wrapped
    // CUfunction). set_attribute accepts only the settable ones.
    int attribute(Device &device, cucore_kernel_attribute_t attribute);
    void set_attribute(Device &device, cucore_kernel_attribute_t attribute, int value);

    // Parameter info, fetched once. Known: the driver reports it; unknown
    // (driver without the entry point, or NOT_SUPPORTED): the queries throw
    // NOT_SUPPORTED and launches skip the count/size check.
    // nullptr when unknown. The first call asks the driver with `context` (a
    // launch's) current, else the wrapped function's, else the current device's primary one.
    const std::vector<ParamInfo> *params(Context *context = nullptr);
    size_t param_count();
    ParamInfo param(size_t index);

    // The CUfunction of the kernel in `device`'s primary context (a wrapped
    // CUfunction: itself, after checking the device). `primary` receives the
    // context that keeps the function alive for the caller.
    CUfunction function_for(Device &device, Ref<Context> &primary);

    // The entry of `context` (filling it on the first use): the launch path.
    // `cu_context` is context.cu(), which streams keep at hand.
    const ContextEntry &entry(CUcontext cu_context, Context &context) {
        const int filled = filled_.load(std::memory_order_acquire);
        for (int i = 0; i < filled; ++i)
            if (entries_[i].cu_context == cu_context) return entries_[i];
        return fill(context);
    }
    const ContextEntry &entry(Context &context) { return entry(context.cu(), context); }

    // Re-reads the dynamic shared memory allowance of `entry` (a launch asks
    // for more than the cached value: it may have been raised since).
    int refresh_dynamic_shared_allowance(const ContextEntry &entry);

    // Occupancy (cucore_kernel_max_active_blocks_per_multiprocessor and friends).
    int max_active_blocks_per_multiprocessor(Device &device, uint32_t block_size, size_t dynamic_shared_bytes);
    void max_potential_block_size(Device &device, size_t dynamic_shared_bytes, uint32_t block_size_limit,
                                  int &min_grid_size, int &block_size);
    size_t available_dynamic_shared_memory(Device &device, uint32_t num_blocks, uint32_t block_size);

    // INVALID_ARGUMENT unless `device` is the device of a wrapped CUfunction's
    // context (always fine for CUkernels).
    void check_device(const Device &device, const char *argument) const;

  private:
    static constexpr int kEntries = 8;  // contexts served lock-free; more go to a locked list
    const ContextEntry &fill(Context &context);
    void fill_entry(ContextEntry &entry, Context &context);
    void load_params(Context *context);

    Ref<Object> library_owner_;     // library kernels: keeps the library loaded
    CUkernel kernel_;               // library and wrapped kernels
    CUfunction function_;           // wrapped CUfunctions
    Ref<Context> function_context_;  // ... and their context
    ForeignOwner owner_;            // wrapped kernels and functions

    std::mutex mutex_;  // fills, name, parameter info
    std::atomic<int> filled_{0};
    ContextEntry entries_[kEntries];
    std::deque<ContextEntry> overflow_;  // under mutex_

    std::atomic<bool> name_known_{false};
    std::string name_;

    enum ParamState : int { kParamsNotLoaded = 0, kParamsKnown = 1, kParamsUnknown = 2 };
    std::atomic<int> param_state_{kParamsNotLoaded};
    std::vector<ParamInfo> params_;
};

// The driver's CU_FUNC_ATTRIBUTE_* for a public attribute (a known one: the C ABI
// checks); INVALID_ARGUMENT (naming `argument`) for a read-only one when `settable`.
CUfunction_attribute driver_kernel_attribute(cucore_kernel_attribute_t attribute, bool settable,
                                             const char *argument);

}  // namespace cucore::core
