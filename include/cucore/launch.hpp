// libcucore C++ façade: launch configurations and kernel launches (over cucore/launch.h).
//
//   cucore::LaunchConfig config;
//   config.grid = (n + 255) / 256;
//   config.block = 256;
//   cucore::launch(stream, config, kernel, 2.0f, x_buffer, y_buffer, n);
//
// launch() packs its typed arguments at compile time into two std::arrays on
// the stack (argument pointers and sizes) and makes one C call: arithmetic
// values, enums and pointers by value, a cucore::Buffer as its device address
// (a pointer-sized argument), a cucore::TextureObject or SurfaceObject as its
// 64-bit handle (the kernel's cudaTextureObject_t / cudaSurfaceObject_t), a
// cucore::TensorMapDescriptor as its 128 bytes (a __grid_constant__ CUtensorMap),
// and any other trivially copyable struct by value. Other types do not compile.
#ifndef CUCORE_LAUNCH_HPP
#define CUCORE_LAUNCH_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "common.hpp"
#include "launch.h"
#include "kernel.hpp"
#include "buffer.hpp"
#include "stream.hpp"
#include "texture.hpp"
#include "tensor_map.hpp"

namespace cucore {

// Up to three dimensions; an int converts to {x, 1, 1}, and {x, y} or {x, y, z}
// name more (cuda.core takes an int or a 1-3 tuple).
struct Dim3 {
    std::uint32_t x = 1, y = 1, z = 1;
    constexpr Dim3(std::uint32_t x_ = 1, std::uint32_t y_ = 1, std::uint32_t z_ = 1) noexcept
        : x(x_), y(y_), z(z_) {}
};

// How to launch (cuda.core: LaunchConfig). With a cluster, `grid` counts
// clusters: the launch has grid * cluster blocks in each dimension.
struct LaunchConfig {
    Dim3 grid = 1;                           // blocks (clusters with a cluster)
    Dim3 block = 1;                          // threads per block
    Dim3 cluster = {0, 0, 0};                // blocks per cluster; {0, 0, 0}: no cluster (compute capability 9.0)
    std::uint32_t shared_memory_bytes = 0;   // dynamic shared memory per block
    bool cooperative = false;                // grid-wide synchronisation; the whole grid must be resident
    bool programmatic_stream_serialization = false;
    std::optional<int> priority;             // the launch's priority (empty: the stream's)

    LaunchConfig() = default;
    LaunchConfig(Dim3 grid_, Dim3 block_, std::uint32_t shared_memory_bytes_ = 0) noexcept
        : grid(grid_), block(block_), shared_memory_bytes(shared_memory_bytes_) {}

    // The C configuration this stands for.
    cucore_launch_config_t to_c() const noexcept {
        cucore_launch_config_t c = CUCORE_LAUNCH_CONFIG_INIT;
        c.grid[0] = grid.x;
        c.grid[1] = grid.y;
        c.grid[2] = grid.z;
        c.block[0] = block.x;
        c.block[1] = block.y;
        c.block[2] = block.z;
        c.cluster[0] = cluster.x;
        c.cluster[1] = cluster.y;
        c.cluster[2] = cluster.z;
        c.shared_memory_bytes = shared_memory_bytes;
        c.flags = (cooperative ? static_cast<std::uint32_t>(CUCORE_LAUNCH_COOPERATIVE) : 0u) |
                  (programmatic_stream_serialization
                       ? static_cast<std::uint32_t>(CUCORE_LAUNCH_PROGRAMMATIC_STREAM_SERIALIZATION)
                       : 0u) |
                  (priority ? static_cast<std::uint32_t>(CUCORE_LAUNCH_PRIORITY) : 0u);
        c.priority = priority ? *priority : 0;
        return c;
    }

    // The configuration a C one stands for (e.g. what a graph kernel node
    // reports, GraphNode::kernel_config).
    static LaunchConfig from_c(const cucore_launch_config_t &c) noexcept {
        LaunchConfig config(Dim3(c.grid[0], c.grid[1], c.grid[2]), Dim3(c.block[0], c.block[1], c.block[2]),
                            c.shared_memory_bytes);
        config.cluster = Dim3(c.cluster[0], c.cluster[1], c.cluster[2]);
        config.cooperative = (c.flags & static_cast<std::uint32_t>(CUCORE_LAUNCH_COOPERATIVE)) != 0;
        config.programmatic_stream_serialization =
            (c.flags & static_cast<std::uint32_t>(CUCORE_LAUNCH_PROGRAMMATIC_STREAM_SERIALIZATION)) != 0;
        if ((c.flags & static_cast<std::uint32_t>(CUCORE_LAUNCH_PRIORITY)) != 0) config.priority = c.priority;
        return config;
    }

    // Checks this configuration for `kernel` on `device` without launching
    // (cucore_launch_config_validate). Throws Error (INVALID_ARGUMENT with the
    // reason) when a launch would fail the same checks.
    void validate(const Kernel &kernel, const Device &device) const {
        const cucore_launch_config_t c = to_c();
        detail::check(cucore_launch_config_validate(&c, kernel.get(), device.get()));
    }
};

namespace detail {

// How one launch argument of type T travels: `stored` is what the packer keeps
// on the stack for it, `pointer()` where the driver reads its bytes, and
// `size` how many. By default the argument's own bytes.
template <typename T, typename = void>
struct KernelArg {
    static_assert(!std::is_array_v<T>,
                  "cucore::launch: an array cannot be a kernel argument; pass a pointer to its first element "
                  "(or wrap it in a struct to pass it by value)");
    static_assert(std::is_trivially_copyable_v<T>,
                  "cucore::launch: a kernel argument must be an arithmetic value, an enum, a pointer, a "
                  "cucore::Buffer, a cucore::TextureObject or SurfaceObject, or a trivially copyable struct "
                  "(passed by value); this type is none of these");
    using stored = const T *;
    static constexpr std::size_t size = sizeof(T);
    static stored store(const T &value) noexcept { return &value; }
    static const void *pointer(const stored &s) noexcept { return s; }
};

// A Buffer travels as its device address, a pointer-sized argument.
template <>
struct KernelArg<Buffer> {
    using stored = void *;
    static constexpr std::size_t size = sizeof(void *);
    static stored store(const Buffer &buffer) {
        return reinterpret_cast<void *>(static_cast<std::uintptr_t>(buffer.address()));
    }
    static const void *pointer(const stored &s) noexcept { return &s; }
};

// A texture or surface object travels as its 64-bit handle (a kernel's
// cudaTextureObject_t / cudaSurfaceObject_t).
template <>
struct KernelArg<TextureObject> {
    using stored = std::uint64_t;
    static constexpr std::size_t size = sizeof(std::uint64_t);
    static stored store(const TextureObject &texture) { return texture.handle(); }
    static const void *pointer(const stored &s) noexcept { return &s; }
};

template <>
struct KernelArg<SurfaceObject> {
    using stored = std::uint64_t;
    static constexpr std::size_t size = sizeof(std::uint64_t);
    static stored store(const SurfaceObject &surface) { return surface.handle(); }
    static const void *pointer(const stored &s) noexcept { return &s; }
};

// A TensorMapDescriptor travels as its 128 bytes (a `const __grid_constant__
// CUtensorMap` parameter), read by the driver from the descriptor's own
// 64-byte aligned storage.
template <>
struct KernelArg<TensorMapDescriptor> {
    using stored = const void *;
    static constexpr std::size_t size = CUCORE_TENSOR_MAP_SIZE;
    static stored store(const TensorMapDescriptor &descriptor) { return descriptor.data(); }
    static const void *pointer(const stored &s) noexcept { return s; }
};

// nullptr travels as a null pointer.
template <>
struct KernelArg<std::nullptr_t> {
    using stored = const void *;
    static constexpr std::size_t size = sizeof(void *);
    static stored store(std::nullptr_t) noexcept { return nullptr; }
    static const void *pointer(const stored &s) noexcept { return &s; }
};

// Packs `args` on the stack and calls `call(pointers, sizes, count)` with the
// C ABI's argument arrays (NULL arrays when there are none), which are valid
// for the duration of the call. Every C function that takes kernel arguments
// (launches, graph kernel nodes and their updates) is reached through it.
template <typename Call, typename... Args, std::size_t... I>
inline void with_packed_args(std::index_sequence<I...>, Call &&call, const Args &...args) {
    constexpr std::size_t count = sizeof...(Args);
    // What each argument needs kept (a pointer to it, or a converted value)...
    const std::tuple<typename KernelArg<Args>::stored...> stored{KernelArg<Args>::store(args)...};
    // ... and where the driver reads it, with its size.
    const std::array<const void *, count> pointers{{KernelArg<Args>::pointer(std::get<I>(stored))...}};
    static constexpr std::array<std::size_t, count> sizes{{KernelArg<Args>::size...}};
    (void)stored;
    call(count ? pointers.data() : nullptr, count ? sizes.data() : nullptr, count);
}

template <typename... Args>
inline void launch_packed(cucore_stream_t *stream, const cucore_launch_config_t &config, cucore_kernel_t *kernel,
                          const Args &...args) {
    with_packed_args(
        std::index_sequence_for<Args...>{},
        [&](const void *const *pointers, const std::size_t *sizes, std::size_t count) {
            detail::check(cucore_launch(stream, &config, kernel, pointers, sizes, count));
        },
        args...);
}

} // namespace detail

// Launches `kernel` into `stream` with `config` and `args` (cuda.core: launch).
// The arguments are copied by the driver before this returns. Throws Error:
// INVALID_HANDLE, INVALID_ARGUMENT (count or size mismatch with the kernel's
// parameters, config violations, a wrapped CUfunction launched into another
// context's stream), CUDA.
template <typename... Args>
inline void launch(const Stream &stream, const LaunchConfig &config, const Kernel &kernel, const Args &...args) {
    const cucore_launch_config_t c = config.to_c();
    detail::launch_packed(stream.get(), c, kernel.get(), args...);
}

inline int Kernel::max_potential_cluster_size(const LaunchConfig &config, const Device &device) const {
    const cucore_launch_config_t c = config.to_c();
    int size = 0;
    detail::check(cucore_launch_max_potential_cluster_size(&c, handle_, device.get(), &size));
    return size;
}

inline int Kernel::max_active_clusters(const LaunchConfig &config, const Device &device) const {
    const cucore_launch_config_t c = config.to_c();
    int clusters = 0;
    detail::check(cucore_launch_max_active_clusters(&c, handle_, device.get(), &clusters));
    return clusters;
}

} // namespace cucore

#endif // CUCORE_LAUNCH_HPP
