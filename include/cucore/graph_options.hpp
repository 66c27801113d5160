// libcucore C++ façade: what graphs take besides nodes (over cucore/graph.h):
// GraphCondition (a kernel argument by its 64-bit handle), the options of
// instantiation, allocation nodes and DOT output, and the boxing of host
// callbacks that graph.hpp and graph_builder.hpp share.
#ifndef CUCORE_GRAPH_OPTIONS_HPP
#define CUCORE_GRAPH_OPTIONS_HPP

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "common.hpp"
#include "graph.h"
#include "launch.hpp"
#include "stream.hpp"

namespace cucore {

namespace detail {
// The C defaults, so the options structs below default to exactly the *_INIT macros.
inline constexpr cucore_graph_alloc_options_t kGraphAllocDefaults = CUCORE_GRAPH_ALLOC_OPTIONS_INIT;
inline constexpr cucore_graph_complete_options_t kGraphCompleteDefaults = CUCORE_GRAPH_COMPLETE_OPTIONS_INIT;

// A host callback of a graph runs each time its node runs, so its callable is
// kept, not consumed: a small trivial callable travels inside the void* (no
// allocation, nothing to release, the same trampoline as Stream's), any other
// is boxed on the heap and deleted by the release function when the last
// definition or graph that uses it is gone.
template <typename F> void invoke_graph_host_fn(void *user_data) noexcept { (*static_cast<F *>(user_data))(); }
template <typename F> void release_graph_host_fn(void *user_data) noexcept { delete static_cast<F *>(user_data); }

// The C ABI's (fn, user_data, release) of a callable. Whoever receives it owns
// the box: every C function that takes it runs `release` itself when it fails.
struct HostCallback {
    cucore_host_fn fn = nullptr;
    void *user_data = nullptr;
    cucore_release_fn release = nullptr;
};

template <typename F> HostCallback make_host_callback(F &&f) {
    using Fn = std::decay_t<F>;
    HostCallback c;
    if constexpr (fits_in_pointer_v<Fn>) {
        const Fn copy(std::forward<F>(f));
        std::memcpy(&c.user_data, static_cast<const void *>(&copy), sizeof(Fn));
        c.fn = &invoke_inline_host_fn<Fn>;
    } else {
        c.user_data = new Fn(std::forward<F>(f)); // std::bad_alloc: nothing to undo
        c.fn = &invoke_graph_host_fn<Fn>;
        c.release = &release_graph_host_fn<Fn>;
    }
    return c;
}

template <typename F>
constexpr bool is_host_callable_v = std::is_invocable_v<std::decay_t<F> &>;
} // namespace detail

// ---- Conditions and options ---------------------------------------------------

// A condition of a graph's conditional nodes (cuda.core: GraphCondition): the
// driver's CUgraphConditionalHandle, made by GraphDefinition::create_condition
// or GraphBuilder::create_condition. Kernels set it with
// cudaGraphSetConditional; it is a kernel argument by its 8-byte value (the
// kernel's cudaGraphConditionalHandle), in launch() and in kernel nodes. A
// value type: it owns nothing (the condition lives as long as its graph).
class GraphCondition {
public:
    // An empty condition (0): conditional nodes refuse it.
    constexpr GraphCondition() noexcept = default;
    constexpr explicit GraphCondition(std::uint64_t handle) noexcept : handle_(handle) {}

    // The CUgraphConditionalHandle.
    constexpr std::uint64_t handle() const noexcept { return handle_; }
    constexpr explicit operator bool() const noexcept { return handle_ != 0; }

    friend constexpr bool operator==(GraphCondition a, GraphCondition b) noexcept { return a.handle_ == b.handle_; }
    friend constexpr bool operator!=(GraphCondition a, GraphCondition b) noexcept { return a.handle_ != b.handle_; }

private:
    std::uint64_t handle_ = 0;
};

static_assert(sizeof(GraphCondition) == sizeof(std::uint64_t) && std::is_trivially_copyable_v<GraphCondition>,
              "a GraphCondition is exactly a CUgraphConditionalHandle");

namespace detail {
// A condition travels to kernels as its 64-bit handle (cudaGraphConditionalHandle).
template <>
struct KernelArg<GraphCondition> {
    using stored = std::uint64_t;
    static constexpr std::size_t size = sizeof(std::uint64_t);
    static stored store(const GraphCondition &condition) noexcept { return condition.handle(); }
    static const void *pointer(const stored &s) noexcept { return &s; }
};
} // namespace detail

// How to instantiate a definition (cuda.core: GraphCompleteOptions).
struct GraphCompleteOptions {
    // Memory the graph allocated and did not free is freed before its next launch.
    bool auto_free_on_launch = (detail::kGraphCompleteDefaults.flags & CUCORE_GRAPH_COMPLETE_AUTO_FREE_ON_LAUNCH) != 0;
    // The graph can be launched from the device.
    bool device_launch = (detail::kGraphCompleteDefaults.flags & CUCORE_GRAPH_COMPLETE_DEVICE_LAUNCH) != 0;
    // Kernel nodes run with their own priority attribute.
    bool use_node_priority = (detail::kGraphCompleteDefaults.flags & CUCORE_GRAPH_COMPLETE_USE_NODE_PRIORITY) != 0;
    // Not empty: the graph is uploaded on this stream as part of instantiation.
    Stream upload_stream;

    // The C options these stand for; the stream is this object's (valid while it lives).
    cucore_graph_complete_options_t to_c() const noexcept {
        cucore_graph_complete_options_t o = detail::kGraphCompleteDefaults;
        o.flags = (auto_free_on_launch ? static_cast<std::uint32_t>(CUCORE_GRAPH_COMPLETE_AUTO_FREE_ON_LAUNCH) : 0u) |
                  (device_launch ? static_cast<std::uint32_t>(CUCORE_GRAPH_COMPLETE_DEVICE_LAUNCH) : 0u) |
                  (use_node_priority ? static_cast<std::uint32_t>(CUCORE_GRAPH_COMPLETE_USE_NODE_PRIORITY) : 0u);
        o.upload_stream = upload_stream.get();
        return o;
    }
};

// An allocation node's memory (cuda.core: GraphAllocOptions).
struct GraphAllocOptions {
    // DEFAULT or DEVICE: device memory of the definition's device; HOST:
    // page-locked host memory.
    cucore_graph_memory_type_t memory_type = detail::kGraphAllocDefaults.memory_type;
    // Other devices (ordinals) given read-write access, up to 8 (more: the
    // node is refused with INVALID_ARGUMENT).
    std::vector<int> peer_access;

    cucore_graph_alloc_options_t to_c() const noexcept {
        cucore_graph_alloc_options_t o = detail::kGraphAllocDefaults;
        o.memory_type = memory_type;
        // The count says how many were asked for, so that more than the C
        // struct holds is refused by the library, not silently cut.
        o.peer_access_count = static_cast<std::uint32_t>(peer_access.size());
        for (std::size_t i = 0; i < peer_access.size() && i < 8; ++i) o.peer_access[i] = peer_access[i];
        return o;
    }
};

// What debug_dot_print writes beside the default description (cuda.core:
// GraphDebugPrintOptions; the driver's CU_GRAPH_DEBUG_DOT_FLAGS_*).
struct GraphDebugPrintOptions {
    bool verbose = false;
    bool runtime_types = false;
    bool kernel_node_params = false;
    bool memcpy_node_params = false;
    bool memset_node_params = false;
    bool host_node_params = false;
    bool event_node_params = false;
    bool ext_semas_signal_node_params = false;
    bool ext_semas_wait_node_params = false;
    bool kernel_node_attributes = false;
    bool handles = false;
    bool mem_alloc_node_params = false;
    bool mem_free_node_params = false;
    bool batch_mem_op_node_params = false;
    bool extra_topo_info = false;
    bool conditional_node_params = false;

    // The cucore_graph_dot_flag_t bits these stand for.
    std::uint32_t to_c() const noexcept {
        const std::pair<bool, cucore_graph_dot_flag_t> bits[] = {
            {verbose, CUCORE_GRAPH_DOT_VERBOSE},
            {runtime_types, CUCORE_GRAPH_DOT_RUNTIME_TYPES},
            {kernel_node_params, CUCORE_GRAPH_DOT_KERNEL_NODE_PARAMS},
            {memcpy_node_params, CUCORE_GRAPH_DOT_MEMCPY_NODE_PARAMS},
            {memset_node_params, CUCORE_GRAPH_DOT_MEMSET_NODE_PARAMS},
            {host_node_params, CUCORE_GRAPH_DOT_HOST_NODE_PARAMS},
            {event_node_params, CUCORE_GRAPH_DOT_EVENT_NODE_PARAMS},
            {ext_semas_signal_node_params, CUCORE_GRAPH_DOT_EXT_SEMAS_SIGNAL_NODE_PARAMS},
            {ext_semas_wait_node_params, CUCORE_GRAPH_DOT_EXT_SEMAS_WAIT_NODE_PARAMS},
            {kernel_node_attributes, CUCORE_GRAPH_DOT_KERNEL_NODE_ATTRIBUTES},
            {handles, CUCORE_GRAPH_DOT_HANDLES},
            {mem_alloc_node_params, CUCORE_GRAPH_DOT_MEM_ALLOC_NODE_PARAMS},
            {mem_free_node_params, CUCORE_GRAPH_DOT_MEM_FREE_NODE_PARAMS},
            {batch_mem_op_node_params, CUCORE_GRAPH_DOT_BATCH_MEM_OP_NODE_PARAMS},
            {extra_topo_info, CUCORE_GRAPH_DOT_EXTRA_TOPO_INFO},
            {conditional_node_params, CUCORE_GRAPH_DOT_CONDITIONAL_NODE_PARAMS},
        };
        std::uint32_t flags = 0;
        for (const auto &b : bits)
            if (b.first) flags |= static_cast<std::uint32_t>(b.second);
        return flags;
    }
};

} // namespace cucore

#endif // CUCORE_GRAPH_OPTIONS_HPP
