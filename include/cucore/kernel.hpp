// libcucore C++ façade: kernels (over cucore/kernel.h).
//
//   cucore::Kernel k = object_code.get_kernel("saxpy");
//   int regs = k.attributes(dev).num_regs();
//   auto best = k.max_potential_block_size(dev);       // {min_grid_size, block_size}
//   k.set_attribute(dev, CUCORE_KERNEL_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 96 << 10);
//
// The cluster queries, which take a LaunchConfig, are defined in launch.hpp
// (the headers include each other in one direction only; see device.hpp).
#ifndef CUCORE_KERNEL_HPP
#define CUCORE_KERNEL_HPP

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common.hpp"
#include "device.hpp"
#include "kernel.h"

namespace cucore {

struct LaunchConfig;

// Where parameter i lives in the kernel's parameter buffer (cuda.core: ParamInfo).
struct ParamInfo {
    std::size_t offset = 0;
    std::size_t size = 0;
};

// The answer of Kernel::max_potential_block_size (cuda.core: MaxPotentialBlockSizeOccupancyResult).
struct PotentialBlockSize {
    int min_grid_size = 0; // the least grid that fills the device with this block size
    int block_size = 0;    // the block size that reaches the highest occupancy
};

// A view of a kernel's attributes on one device (cuda.core: KernelAttributes).
// It borrows the kernel and device handles: use it while both live. Each read
// throws Error: INVALID_HANDLE, INVALID_ARGUMENT (a wrapped CUfunction asked on
// another device), CUDA.
class KernelAttributes {
public:
    KernelAttributes(cucore_kernel_t *kernel, cucore_device_t *device) noexcept : kernel_(kernel), device_(device) {}

    int get(cucore_kernel_attribute_t attribute) const {
        int value = 0;
        detail::check(cucore_kernel_attribute(kernel_, device_, attribute, &value));
        return value;
    }
    int max_threads_per_block() const { return get(CUCORE_KERNEL_ATTRIBUTE_MAX_THREADS_PER_BLOCK); }
    int shared_size_bytes() const { return get(CUCORE_KERNEL_ATTRIBUTE_SHARED_SIZE_BYTES); }
    int const_size_bytes() const { return get(CUCORE_KERNEL_ATTRIBUTE_CONST_SIZE_BYTES); }
    int local_size_bytes() const { return get(CUCORE_KERNEL_ATTRIBUTE_LOCAL_SIZE_BYTES); }
    int num_regs() const { return get(CUCORE_KERNEL_ATTRIBUTE_NUM_REGS); }
    int ptx_version() const { return get(CUCORE_KERNEL_ATTRIBUTE_PTX_VERSION); }
    int binary_version() const { return get(CUCORE_KERNEL_ATTRIBUTE_BINARY_VERSION); }
    bool cache_mode_ca() const { return get(CUCORE_KERNEL_ATTRIBUTE_CACHE_MODE_CA) != 0; }
    int max_dynamic_shared_size_bytes() const { return get(CUCORE_KERNEL_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES); }
    int preferred_shared_memory_carveout() const {
        return get(CUCORE_KERNEL_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT);
    }
    bool cluster_size_must_be_set() const { return get(CUCORE_KERNEL_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET) != 0; }
    int required_cluster_width() const { return get(CUCORE_KERNEL_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH); }
    int required_cluster_height() const { return get(CUCORE_KERNEL_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT); }
    int required_cluster_depth() const { return get(CUCORE_KERNEL_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH); }
    bool non_portable_cluster_size_allowed() const {
        return get(CUCORE_KERNEL_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED) != 0;
    }
    int cluster_scheduling_policy_preference() const {
        return get(CUCORE_KERNEL_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE);
    }

private:
    cucore_kernel_t *kernel_;
    cucore_device_t *device_;
};

// A kernel (cuda.core: Kernel): from ObjectCode::get_kernel, or a wrapped
// foreign CUkernel or CUfunction. A default-constructed Kernel is empty.
class Kernel : public Handle<Kernel, cucore_kernel_t> {
public:
    Kernel() noexcept = default;

    // Wraps a foreign CUkernel without owning its library; `on_release(user_data)`
    // runs when the last reference goes. Throws Error: INVALID_ARGUMENT, NO_DRIVER.
    static Kernel from_handle(void *cu_kernel, cucore_release_fn on_release = nullptr, void *user_data = nullptr) {
        cucore_kernel_t *raw = nullptr;
        detail::check(cucore_kernel_from_handle(cu_kernel, on_release, user_data, &raw));
        return adopt(raw);
    }

    // Wraps a foreign CUfunction of the calling thread's current context; it
    // launches only into streams of that context. Throws Error:
    // INVALID_ARGUMENT, INVALID_STATE (no current context), NO_DRIVER, CUDA.
    static Kernel from_function(void *cu_function, cucore_release_fn on_release = nullptr,
                                void *user_data = nullptr) {
        cucore_kernel_t *raw = nullptr;
        detail::check(cucore_kernel_from_function(cu_function, on_release, user_data, &raw));
        return adopt(raw);
    }

    // The symbol name (lowered for C++), valid while the kernel lives. Throws
    // Error: INVALID_HANDLE, NOT_SUPPORTED, CUDA.
    const char *name() const {
        const char *n = nullptr;
        detail::check(cucore_kernel_name(handle_, &n));
        return n;
    }

    // The attributes on `device` (see KernelAttributes).
    KernelAttributes attributes(const Device &device) const;

    // Sets a settable attribute on `device`. Throws Error: INVALID_HANDLE,
    // INVALID_ARGUMENT (read-only or unknown attribute), CUDA.
    void set_attribute(const Device &device, cucore_kernel_attribute_t attribute, int value) const;

    // The number of parameters, and where each lives. Throw Error:
    // INVALID_HANDLE, NOT_SUPPORTED (driver older than 12.4), CUDA;
    // param_info(index) also INVALID_ARGUMENT (index out of range).
    std::size_t param_count() const {
        std::size_t count = 0;
        detail::check(cucore_kernel_param_count(handle_, &count));
        return count;
    }
    ParamInfo param_info(std::size_t index) const {
        ParamInfo info;
        detail::check(cucore_kernel_param_info(handle_, index, &info.offset, &info.size));
        return info;
    }
    std::vector<ParamInfo> param_info() const {
        std::vector<ParamInfo> all(param_count());
        for (std::size_t i = 0; i < all.size(); ++i) all[i] = param_info(i);
        return all;
    }

    // Occupancy on `device` (cuda.core: KernelOccupancy). Throw Error:
    // INVALID_HANDLE, INVALID_ARGUMENT, CUDA; the cluster queries also
    // NOT_SUPPORTED (compute capability below 9.0).
    int max_active_blocks_per_multiprocessor(const Device &device, std::uint32_t block_size,
                                             std::size_t dynamic_shared_bytes = 0) const;
    PotentialBlockSize max_potential_block_size(const Device &device, std::size_t dynamic_shared_bytes = 0,
                                                std::uint32_t block_size_limit = 0) const;
    std::size_t available_dynamic_shared_memory(const Device &device, std::uint32_t num_blocks,
                                                std::uint32_t block_size) const;
    int max_potential_cluster_size(const LaunchConfig &config, const Device &device) const;
    int max_active_clusters(const LaunchConfig &config, const Device &device) const;

    // The raw CUkernel (nullptr for a wrapped CUfunction). Throws Error: INVALID_HANDLE.
    void *handle() const {
        void *h = nullptr;
        detail::check(cucore_kernel_handle(handle_, &h));
        return h;
    }

    // The raw CUfunction in `device`'s primary context. Throws Error:
    // INVALID_HANDLE, INVALID_ARGUMENT, CUDA.
    void *function(const Device &device) const;
};

static_assert(sizeof(Kernel) == sizeof(void *), "a Kernel is exactly one C handle");

inline KernelAttributes Kernel::attributes(const Device &device) const { return {handle_, device.get()}; }

inline void Kernel::set_attribute(const Device &device, cucore_kernel_attribute_t attribute, int value) const {
    detail::check(cucore_kernel_set_attribute(handle_, device.get(), attribute, value));
}

inline int Kernel::max_active_blocks_per_multiprocessor(const Device &device, std::uint32_t block_size,
                                                        std::size_t dynamic_shared_bytes) const {
    int blocks = 0;
    detail::check(cucore_kernel_max_active_blocks_per_multiprocessor(handle_, device.get(), block_size,
                                                                     dynamic_shared_bytes, &blocks));
    return blocks;
}

inline PotentialBlockSize Kernel::max_potential_block_size(const Device &device, std::size_t dynamic_shared_bytes,
                                                           std::uint32_t block_size_limit) const {
    PotentialBlockSize result;
    detail::check(cucore_kernel_max_potential_block_size(handle_, device.get(), dynamic_shared_bytes,
                                                         block_size_limit, &result.min_grid_size,
                                                         &result.block_size));
    return result;
}

inline std::size_t Kernel::available_dynamic_shared_memory(const Device &device, std::uint32_t num_blocks,
                                                           std::uint32_t block_size) const {
    std::size_t bytes = 0;
    detail::check(
        cucore_kernel_available_dynamic_shared_memory(handle_, device.get(), num_blocks, block_size, &bytes));
    return bytes;
}

inline void *Kernel::function(const Device &device) const {
    void *f = nullptr;
    detail::check(cucore_kernel_function(handle_, device.get(), &f));
    return f;
}

} // namespace cucore

#endif // CUCORE_KERNEL_HPP
