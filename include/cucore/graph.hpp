// libcucore C++ façade: CUDA graphs built node by node, their nodes, and
// executable graphs (over cucore/graph.h).
//
//   cucore::GraphDefinition def = cucore::GraphDefinition::create(dev);
//   cucore::GraphNode zero = def.add_memset({}, data, std::uint32_t{0}, n);   // a root node
//   cucore::GraphNode step = def.add_kernel(zero, config, kernel, data, n);   // after zero
//   cucore::GraphNode out = def.add_memcpy(step, result, data, n * 4);        // after step
//   cucore::Graph graph = def.instantiate();
//   for (int i = 0; i < 1000; ++i) graph.launch(stream);                      // one driver call each
//   graph.set_kernel_node(step, config, kernel, other, n);                    // later launches use it
//
// Three nouns, as in cuda.core's cuda.core.graph: a GraphDefinition (a
// CUgraph) holds GraphNodes and the edges between them; a Graph (a
// CUgraphExec) is a definition instantiated, to be launched on streams,
// updated and uploaded. Definitions are also made by capturing a stream
// (GraphBuilder, graph_builder.hpp); graph memory is in graph_memory.hpp.
//
// Node-adding members take the nodes the new node depends on first
// (GraphDependencies: {} for a root node, one node, {a, b}, or a vector).
// Kernel nodes take typed arguments packed at compile time, as launch() does
// (launch.hpp), with no heap allocation; a GraphCondition is such an argument.
// Host callbacks take any callable: it is copied once and runs every time the
// node runs, and the copy is destroyed when no definition or graph needs it.
//
// Lifetimes: a definition keeps every library object its nodes use (kernels,
// buffers, events, callables) until the definition, its clones and the graphs
// made from it are gone, so release order never matters. Memory a kernel
// argument points at (a raw pointer) is the caller's to keep, as with launch().
#ifndef CUCORE_GRAPH_HPP
#define CUCORE_GRAPH_HPP

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "buffer.hpp"
#include "common.hpp"
#include "copy_3d.hpp"
#include "device.hpp"
#include "event.hpp"
#include "graph.h"
#include "graph_options.hpp"
#include "kernel.hpp"
#include "launch.hpp"
#include "stream.hpp"

namespace cucore {

class GraphBuilder;
class GraphDefinition;
class Graph;

// ---- Nodes --------------------------------------------------------------------

// A kernel node's launch configuration and kernel (GraphNode::kernel_config);
// the kernel is empty for a node of foreign code.
struct GraphKernelNodeConfig {
    LaunchConfig config;
    Kernel kernel;
};

// An allocation node's memory (GraphNode::alloc_info).
struct GraphAllocInfo {
    std::uint64_t address = 0; // the same in every launch
    std::uint64_t size = 0;
};

// One node of one definition (cuda.core: GraphNode). It holds its definition.
// Listings (GraphDefinition::nodes, dependencies(), ...) make new handles each
// time: == compares the nodes (their CUgraphNode), not the handles. After
// destroy() every handle of the node throws INVALID_STATE in node calls. A
// default-constructed GraphNode is empty.
class GraphNode : public Handle<GraphNode, cucore_graph_node_t> {
public:
    GraphNode() noexcept = default;

    // The raw CUgraphNode. Throws Error: INVALID_HANDLE, INVALID_STATE (destroyed).
    void *handle() const {
        void *h = nullptr;
        detail::check(cucore_graph_node_handle(handle_, &h));
        return h;
    }

    // The node's kind. Throws Error: INVALID_HANDLE, INVALID_STATE, CUDA.
    cucore_graph_node_type_t type() const {
        cucore_graph_node_type_t t = CUCORE_GRAPH_NODE_UNSET;
        detail::check(cucore_graph_node_type(handle_, &t));
        return t;
    }

    // The definition the node belongs to. Throws Error: INVALID_HANDLE.
    GraphDefinition definition() const;

    // The nodes this node depends on / that depend on it. Throw Error:
    // INVALID_HANDLE, INVALID_STATE, CUDA.
    std::vector<GraphNode> dependencies() const;
    std::vector<GraphNode> dependents() const;

    // Adds / removes the edge making `to` depend on this node (both of one
    // definition). Throw Error: INVALID_HANDLE, INVALID_ARGUMENT (nodes of
    // different definitions, a node on itself), INVALID_STATE, CUDA (an edge
    // that exists already; one that does not, when removing).
    void add_dependent(const GraphNode &to) const { detail::check(cucore_graph_node_add_dependent(handle_, to.handle_)); }
    void remove_dependent(const GraphNode &to) const {
        detail::check(cucore_graph_node_remove_dependent(handle_, to.handle_));
    }

    // The node made from this one in `clone` (a clone of this node's
    // definition). Throws Error: INVALID_HANDLE, INVALID_STATE, CUDA (not a clone).
    GraphNode find_in_clone(const GraphDefinition &clone) const;

    // Removes the node and its edges from its definition; every handle of it
    // is INVALID_STATE afterwards. Throws Error: INVALID_HANDLE, INVALID_STATE
    // (already destroyed), CUDA.
    void destroy() const { detail::check(cucore_graph_node_destroy(handle_)); }

    // ---- Kernel nodes ----

    // The launch configuration and kernel. Throws Error: INVALID_HANDLE,
    // INVALID_ARGUMENT (not a kernel node), INVALID_STATE, CUDA.
    GraphKernelNodeConfig kernel_config() const {
        cucore_launch_config_t c = CUCORE_LAUNCH_CONFIG_INIT;
        cucore_kernel_t *raw = nullptr;
        detail::check(cucore_graph_node_kernel_config(handle_, &c, &raw));
        return GraphKernelNodeConfig{LaunchConfig::from_c(c), Kernel::adopt(raw)};
    }

    // Replaces the kernel (an empty Kernel keeps the node's), configuration
    // and arguments, packed as launch() packs them. Throws Error: as
    // GraphDefinition::add_kernel, and INVALID_ARGUMENT (not a kernel node).
    template <typename... Args>
    void set_kernel(const LaunchConfig &config, const Kernel &kernel, const Args &...args) const {
        const cucore_launch_config_t c = config.to_c();
        cucore_graph_node_t *node = handle_;
        detail::with_packed_args(
            std::index_sequence_for<Args...>{},
            [&](const void *const *pointers, const std::size_t *sizes, std::size_t count) {
                detail::check(cucore_graph_node_set_kernel(node, &c, kernel.get(), pointers, sizes, count));
            },
            args...);
    }

    // ---- Copy, fill and host callback nodes ----

    // Replaces a memcpy node's copy, as GraphDefinition::add_memcpy describes
    // it. Throws as that call, and INVALID_ARGUMENT (not a memcpy node).
    void set_memcpy(const Buffer &dst, std::uint64_t dst_offset, const Buffer &src, std::uint64_t src_offset,
                    std::uint64_t size) const {
        detail::check(cucore_graph_node_set_memcpy(handle_, dst.get(), dst_offset, src.get(), src_offset, size));
    }

    // Replaces a memset node's fill, as GraphDefinition::add_memset describes
    // it (the width of an element is the type of `value`). Throws as that
    // call, and INVALID_ARGUMENT (not a memset node).
    void set_memset(const Buffer &buffer, std::uint8_t value, std::uint64_t width, std::uint64_t height = 1,
                    std::uint64_t pitch = 0, std::uint64_t offset = 0) const {
        set_memset_pattern(buffer, value, 1, width, height, pitch, offset);
    }
    void set_memset(const Buffer &buffer, std::uint16_t value, std::uint64_t width, std::uint64_t height = 1,
                    std::uint64_t pitch = 0, std::uint64_t offset = 0) const {
        set_memset_pattern(buffer, value, 2, width, height, pitch, offset);
    }
    void set_memset(const Buffer &buffer, std::uint32_t value, std::uint64_t width, std::uint64_t height = 1,
                    std::uint64_t pitch = 0, std::uint64_t offset = 0) const {
        set_memset_pattern(buffer, value, 4, width, height, pitch, offset);
    }
    // Any other type (int, char, uint64_t...) would pick a width by accident.
    template <typename T>
    void set_memset(const Buffer &buffer, T value, std::uint64_t width, std::uint64_t height = 1,
                    std::uint64_t pitch = 0, std::uint64_t offset = 0) const = delete;

    // Replaces a host callback node's callable with a copy of `f` (called as
    // f(), noexcept in effect: a throw terminates), or with the C function
    // `fn(user_data)` and its `release`. Throws Error: INVALID_HANDLE,
    // INVALID_ARGUMENT (not a host callback node), INVALID_STATE, CUDA; the
    // copy (or `release(user_data)`) is then destroyed at once.
    template <typename F, typename = std::enable_if_t<detail::is_host_callable_v<F>>>
    void set_host_callback(F &&f) const {
        const detail::HostCallback c = detail::make_host_callback(std::forward<F>(f));
        set_host_callback(c.fn, c.user_data, c.release);
    }
    void set_host_callback(cucore_host_fn fn, void *user_data, cucore_release_fn release = nullptr) const {
        detail::check(cucore_graph_node_set_host_callback(handle_, fn, user_data, release));
    }

    // ---- Event and child graph nodes: what they use replaced ----

    // Makes an event record (wait) node record (wait for) `event`; the
    // definition holds it. Throws Error: INVALID_HANDLE, INVALID_ARGUMENT
    // (neither an event record nor an event wait node), INVALID_STATE, CUDA.
    void set_event(const Event &event) const { detail::check(cucore_graph_node_set_event(handle_, event.get())); }
    // Replaces a child graph node's graph with a copy of `child`, a definition
    // of another hierarchy; the node's old graph goes (definitions of it from
    // bodies() and its nodes are INVALID_STATE afterwards). Throws Error: INVALID_HANDLE, INVALID_ARGUMENT (not a
    // child graph node, a child of the node's own hierarchy), INVALID_STATE,
    // NOT_SUPPORTED (driver before CUDA 12.2), CUDA.
    void set_child_graph(const GraphDefinition &child) const;

    // ---- Allocation, conditional and child graph nodes ----

    // An allocation node's address and size. Throws Error: INVALID_HANDLE,
    // INVALID_ARGUMENT (not an allocation node), INVALID_STATE, CUDA.
    GraphAllocInfo alloc_info() const {
        GraphAllocInfo info;
        detail::check(cucore_graph_node_alloc_info(handle_, &info.address, &info.size));
        return info;
    }

    // A conditional node's bodies (then, else; the while body; the switch
    // cases), or a child graph node's graph (one). Throws Error:
    // INVALID_HANDLE, INVALID_ARGUMENT (another kind of node), INVALID_STATE, CUDA.
    std::vector<GraphDefinition> bodies() const;

    // Two objects are equal when they name the same node (its CUgraphNode),
    // whichever handles they hold; destroyed nodes equal only themselves.
    // Never throws.
    friend bool operator==(const GraphNode &a, const GraphNode &b) noexcept {
        if (a.handle_ == b.handle_) return true;
        if (a.handle_ == nullptr || b.handle_ == nullptr) return false;
        void *na = nullptr, *nb = nullptr;
        return cucore_graph_node_handle(a.handle_, &na) == CUCORE_SUCCESS &&
               cucore_graph_node_handle(b.handle_, &nb) == CUCORE_SUCCESS && na == nb;
    }
    friend bool operator!=(const GraphNode &a, const GraphNode &b) noexcept { return !(a == b); }

private:
    void set_memset_pattern(const Buffer &buffer, std::uint32_t value, std::uint32_t element_size,
                            std::uint64_t width, std::uint64_t height, std::uint64_t pitch,
                            std::uint64_t offset) const {
        detail::check(cucore_graph_node_set_memset(handle_, buffer.get(), offset, value, element_size, width, height,
                                                   pitch));
    }
};

static_assert(sizeof(GraphNode) == sizeof(void *), "a GraphNode is exactly one C handle");

// The nodes a new node depends on: none ({}: a root node), one node, a braced
// list ({a, b}) or a vector of nodes, all of the same definition. It refers
// to the nodes without holding them, for the call it is passed to (a named
// node or a temporary of that full expression); up to 8 nodes take no heap
// allocation.
class GraphDependencies {
public:
    GraphDependencies() noexcept = default;
    // One node (implicit, so a node is passed as it is).
    GraphDependencies(const GraphNode &node) noexcept : size_(1) { inline_[0] = node.get(); }
    GraphDependencies(std::initializer_list<std::reference_wrapper<const GraphNode>> nodes) {
        for (const GraphNode &n : nodes) push(n.get());
    }
    GraphDependencies(const std::vector<GraphNode> &nodes) {
        for (const GraphNode &n : nodes) push(n.get());
    }

    // The C array of the nodes (nullptr when there are none).
    cucore_graph_node_t *const *data() const noexcept {
        if (size_ == 0) return nullptr;
        return size_ <= kInline ? inline_.data() : heap_.data();
    }
    std::size_t size() const noexcept { return size_; }

private:
    static constexpr std::size_t kInline = 8;
    void push(cucore_graph_node_t *node) {
        if (size_ < kInline) {
            inline_[size_++] = node;
            return;
        }
        if (size_ == kInline) heap_.assign(inline_.begin(), inline_.end());
        heap_.push_back(node);
        ++size_;
    }

    std::array<cucore_graph_node_t *, kInline> inline_{};
    std::vector<cucore_graph_node_t *> heap_;
    std::size_t size_ = 0;
};

// An edge of a definition: `to` depends on `from` (GraphDefinition::edges).
struct GraphEdge {
    GraphNode from;
    GraphNode to;
};

// An allocation node and the address its memory has in every launch
// (GraphDefinition::add_alloc).
struct GraphAllocation {
    GraphNode node;
    std::uint64_t address = 0;

    // The address as a pointer (a kernel argument). Never throws.
    void *data() const noexcept { return reinterpret_cast<void *>(static_cast<std::uintptr_t>(address)); }
};

// ---- Definitions ----------------------------------------------------------------

// A graph definition (cuda.core: GraphDefinition; a CUgraph): nodes and the
// edges between them, made node by node here or captured by a GraphBuilder.
// Copies share the one library object. A default-constructed GraphDefinition
// is empty.
class GraphDefinition : public Handle<GraphDefinition, cucore_graph_definition_t> {
public:
    GraphDefinition() noexcept = default;

    // An empty definition whose nodes run on `device` (its primary context).
    // Throws Error: INVALID_HANDLE, CUDA, OUT_OF_MEMORY.
    static GraphDefinition create(const Device &device) {
        cucore_graph_definition_t *raw = nullptr;
        detail::check(cucore_graph_definition_create(device.get(), &raw));
        return adopt(raw);
    }

    // The raw CUgraph (still owned by the definition). Throws Error: INVALID_HANDLE.
    void *handle() const {
        void *h = nullptr;
        detail::check(cucore_graph_definition_handle(handle_, &h));
        return h;
    }

    // The device whose primary context the nodes run in. Throws Error: INVALID_HANDLE.
    Device device() const {
        cucore_device_t *raw = nullptr;
        detail::check(cucore_graph_definition_device(handle_, &raw));
        return Device::adopt(raw);
    }

    // Whether the CUgraph is the definition's own (false: a conditional body or
    // a child graph, which belongs to a node of another definition). Throws
    // Error: INVALID_HANDLE.
    bool is_owned() const {
        int owned = 0;
        detail::check(cucore_graph_definition_is_owned(handle_, &owned));
        return owned != 0;
    }

    // A copy with the same nodes and edges, holding the same library objects.
    // Throws Error: INVALID_HANDLE, CUDA.
    GraphDefinition clone() const {
        cucore_graph_definition_t *raw = nullptr;
        detail::check(cucore_graph_definition_clone(handle_, &raw));
        return adopt(raw);
    }

    // Writes the definition as a Graphviz DOT file to `path`. Throws Error:
    // INVALID_HANDLE, INVALID_ARGUMENT (empty path), CUDA (the driver could
    // not write the file).
    void debug_dot_print(const std::string &path, const GraphDebugPrintOptions &options = {}) const {
        detail::check(cucore_graph_definition_debug_dot_print(handle_, path.c_str(), options.to_c()));
    }

    // Every node / every edge. Throw Error: INVALID_HANDLE, CUDA.
    std::vector<GraphNode> nodes() const;
    std::vector<GraphEdge> edges() const;

    // The executable graph (instantiation), with `options`. Throws Error:
    // INVALID_HANDLE, INVALID_ARGUMENT (an upload stream of another device),
    // CUDA (the driver's refusal).
    Graph instantiate() const;
    Graph instantiate(const GraphCompleteOptions &options) const;

    // A condition of this definition for its conditional nodes: set to
    // `default_value` at the start of every launch, or (without one) keeping
    // the last launch's value, initially 0. Throws Error: INVALID_HANDLE,
    // NOT_SUPPORTED (a driver before CUDA 12.3), CUDA.
    GraphCondition create_condition(std::optional<std::uint32_t> default_value = std::nullopt) const {
        std::uint64_t condition = 0;
        detail::check(cucore_graph_definition_create_condition(
            handle_, default_value.value_or(0),
            default_value ? static_cast<std::uint32_t>(CUCORE_GRAPH_CONDITION_SET_DEFAULT) : 0u, &condition));
        return GraphCondition(condition);
    }

    // ---- Adding nodes: each returns the new node, after `dependencies` ----
    // Each throws Error: INVALID_HANDLE, INVALID_ARGUMENT (also a dependency
    // of another definition), CUDA, and what each one names.

    // A node that does nothing (a join point).
    GraphNode add_empty(const GraphDependencies &dependencies) const {
        cucore_graph_node_t *raw = nullptr;
        detail::check(cucore_graph_definition_add_empty(handle_, dependencies.data(), dependencies.size(), &raw));
        return GraphNode::adopt(raw);
    }

    // A kernel node: `kernel` with `config` and `args`, packed and checked as
    // launch() packs and checks them (copied now). `config` gives the grid,
    // the block and the dynamic shared memory: a cluster, cooperative,
    // programmatic serialization or a priority are refused (INVALID_ARGUMENT;
    // they would be node attributes): capture a launch that has them instead.
    template <typename... Args>
    GraphNode add_kernel(const GraphDependencies &dependencies, const LaunchConfig &config, const Kernel &kernel,
                         const Args &...args) const {
        const cucore_launch_config_t c = config.to_c();
        cucore_graph_node_t *raw = nullptr;
        cucore_graph_definition_t *definition = handle_;
        detail::with_packed_args(
            std::index_sequence_for<Args...>{},
            [&](const void *const *pointers, const std::size_t *sizes, std::size_t count) {
                detail::check(cucore_graph_definition_add_kernel(definition, dependencies.data(),
                                                                 dependencies.size(), &c, kernel.get(), pointers,
                                                                 sizes, count, &raw));
            },
            args...);
        return GraphNode::adopt(raw);
    }

    // A copy of `size` bytes from `src` at `src_offset` to `dst` at
    // `dst_offset` (the first `size` bytes of each without offsets); the
    // buffers are held by the definition. Also INVALID_ARGUMENT (a range
    // outside a buffer), INVALID_STATE (a closed buffer).
    GraphNode add_memcpy(const GraphDependencies &dependencies, const Buffer &dst, std::uint64_t dst_offset,
                         const Buffer &src, std::uint64_t src_offset, std::uint64_t size) const {
        cucore_graph_node_t *raw = nullptr;
        detail::check(cucore_graph_definition_add_memcpy(handle_, dependencies.data(), dependencies.size(), dst.get(),
                                                         dst_offset, src.get(), src_offset, size, &raw));
        return GraphNode::adopt(raw);
    }
    GraphNode add_memcpy(const GraphDependencies &dependencies, const Buffer &dst, const Buffer &src,
                         std::uint64_t size) const {
        return add_memcpy(dependencies, dst, 0, src, 0, size);
    }

    // A strided 2D/3D copy described as for copy_3d (copy_3d.hpp); buffers are
    // held by the definition, host memory is the caller's to keep. Also as copy_3d.
    GraphNode add_memcpy_3d(const GraphDependencies &dependencies, const MemoryRegion &dst, const MemoryRegion &src,
                            const Extent3D &extent) const {
        const cucore_copy_3d_t c = to_c(dst, src, extent);
        cucore_graph_node_t *raw = nullptr;
        detail::check(
            cucore_graph_definition_add_memcpy_3d(handle_, dependencies.data(), dependencies.size(), &c, &raw));
        return GraphNode::adopt(raw);
    }

    // A fill: `height` rows of `width` elements set to `value`, whose type is
    // the element's width (write std::uint16_t{7}; a plain int does not
    // compile), rows `pitch` bytes apart (0: packed), from byte `offset` of
    // `buffer` (held by the definition). Also INVALID_ARGUMENT (pitch below a
    // row, a range outside the buffer).
    GraphNode add_memset(const GraphDependencies &dependencies, const Buffer &buffer, std::uint8_t value,
                         std::uint64_t width, std::uint64_t height = 1, std::uint64_t pitch = 0,
                         std::uint64_t offset = 0) const {
        return add_memset_pattern(dependencies, buffer, value, 1, width, height, pitch, offset);
    }
    GraphNode add_memset(const GraphDependencies &dependencies, const Buffer &buffer, std::uint16_t value,
                         std::uint64_t width, std::uint64_t height = 1, std::uint64_t pitch = 0,
                         std::uint64_t offset = 0) const {
        return add_memset_pattern(dependencies, buffer, value, 2, width, height, pitch, offset);
    }
    GraphNode add_memset(const GraphDependencies &dependencies, const Buffer &buffer, std::uint32_t value,
                         std::uint64_t width, std::uint64_t height = 1, std::uint64_t pitch = 0,
                         std::uint64_t offset = 0) const {
        return add_memset_pattern(dependencies, buffer, value, 4, width, height, pitch, offset);
    }
    template <typename T>
    GraphNode add_memset(const GraphDependencies &dependencies, const Buffer &buffer, T value, std::uint64_t width,
                         std::uint64_t height = 1, std::uint64_t pitch = 0, std::uint64_t offset = 0) const = delete;

    // A host callback node running a copy of `f` (called as f() on a driver
    // thread, every time the node runs; it must not call CUDA, and a throw
    // terminates), or the C function `fn(user_data)` with its `release`, run
    // once when nothing needs it any more (also when this call fails). Also
    // std::bad_alloc.
    template <typename F, typename = std::enable_if_t<detail::is_host_callable_v<F>>>
    GraphNode add_host_callback(const GraphDependencies &dependencies, F &&f) const {
        const detail::HostCallback c = detail::make_host_callback(std::forward<F>(f));
        return add_host_callback(dependencies, c.fn, c.user_data, c.release);
    }
    GraphNode add_host_callback(const GraphDependencies &dependencies, cucore_host_fn fn, void *user_data,
                                cucore_release_fn release = nullptr) const {
        cucore_graph_node_t *raw = nullptr;
        detail::check(cucore_graph_definition_add_host_callback(handle_, dependencies.data(), dependencies.size(), fn,
                                                                user_data, release, &raw));
        return GraphNode::adopt(raw);
    }

    // A node that records `event` / that waits for `event` (held by the definition).
    GraphNode add_event_record(const GraphDependencies &dependencies, const Event &event) const {
        cucore_graph_node_t *raw = nullptr;
        detail::check(cucore_graph_definition_add_event_record(handle_, dependencies.data(), dependencies.size(),
                                                               event.get(), &raw));
        return GraphNode::adopt(raw);
    }
    GraphNode add_event_wait(const GraphDependencies &dependencies, const Event &event) const {
        cucore_graph_node_t *raw = nullptr;
        detail::check(cucore_graph_definition_add_event_wait(handle_, dependencies.data(), dependencies.size(),
                                                             event.get(), &raw));
        return GraphNode::adopt(raw);
    }

    // A node running a copy of `child`, taken now. Also INVALID_ARGUMENT
    // (the definition itself), CUDA (e.g. a child with allocation nodes).
    GraphNode add_child_graph(const GraphDependencies &dependencies, const GraphDefinition &child) const {
        cucore_graph_node_t *raw = nullptr;
        detail::check(cucore_graph_definition_add_child_graph(handle_, dependencies.data(), dependencies.size(),
                                                              child.handle_, &raw));
        return GraphNode::adopt(raw);
    }

    // An allocation node of `size` bytes (> 0) and its address, the same in
    // every launch; the memory lives until a free node frees it (add_free,
    // here or in a later graph), or until the graph's next launch with
    // GraphCompleteOptions::auto_free_on_launch. Also INVALID_ARGUMENT
    // (size 0, more than 8 peers), OUT_OF_MEMORY.
    GraphAllocation add_alloc(const GraphDependencies &dependencies, std::uint64_t size,
                              const GraphAllocOptions &options = {}) const {
        const cucore_graph_alloc_options_t o = options.to_c();
        cucore_graph_node_t *raw = nullptr;
        GraphAllocation result;
        detail::check(cucore_graph_definition_add_alloc(handle_, dependencies.data(), dependencies.size(), size, &o,
                                                        &raw, &result.address));
        result.node = GraphNode::adopt(raw);
        return result;
    }

    // A node that frees graph memory at `address` (an allocation node's of
    // this or another graph). Also INVALID_ARGUMENT (address 0).
    GraphNode add_free(const GraphDependencies &dependencies, std::uint64_t address) const {
        cucore_graph_node_t *raw = nullptr;
        detail::check(
            cucore_graph_definition_add_free(handle_, dependencies.data(), dependencies.size(), address, &raw));
        return GraphNode::adopt(raw);
    }

    // A conditional node on `condition` (of this definition) with
    // `body_count` empty bodies to fill with these same members: IF 1 (then)
    // or 2 (then, else), WHILE 1, SWITCH >= 1 (body n runs when the condition
    // is n). add_if, add_if_else, add_while and add_switch name the kinds
    // (cuda.core: if_then, if_else, while_loop, switch). Also INVALID_ARGUMENT
    // (a count the kind does not take, an empty condition), NOT_SUPPORTED
    // (a driver without conditional nodes; else and switch need CUDA 12.8).
    struct Conditional;
    Conditional add_conditional(const GraphDependencies &dependencies, GraphCondition condition,
                                cucore_graph_conditional_type_t type, std::size_t body_count) const;
    Conditional add_if(const GraphDependencies &dependencies, GraphCondition condition) const;
    Conditional add_if_else(const GraphDependencies &dependencies, GraphCondition condition) const;
    Conditional add_while(const GraphDependencies &dependencies, GraphCondition condition) const;
    Conditional add_switch(const GraphDependencies &dependencies, GraphCondition condition,
                           std::size_t count) const;

private:
    GraphNode add_memset_pattern(const GraphDependencies &dependencies, const Buffer &buffer, std::uint32_t value,
                                 std::uint32_t element_size, std::uint64_t width, std::uint64_t height,
                                 std::uint64_t pitch, std::uint64_t offset) const {
        cucore_graph_node_t *raw = nullptr;
        detail::check(cucore_graph_definition_add_memset(handle_, dependencies.data(), dependencies.size(),
                                                         buffer.get(), offset, value, element_size, width, height,
                                                         pitch, &raw));
        return GraphNode::adopt(raw);
    }
};

static_assert(sizeof(GraphDefinition) == sizeof(void *), "a GraphDefinition is exactly one C handle");

// A conditional node and its bodies, in the order of the kind (then, else;
// the while body; the switch cases).
struct GraphDefinition::Conditional {
    GraphNode node;
    std::vector<GraphDefinition> bodies;
};

// ---- Executable graphs ------------------------------------------------------------

// An executable graph (cuda.core: Graph; a CUgraphExec): a definition
// instantiated. It holds what its definition holds, and launches in flight
// keep that until they finish; what an update or a per-node set_* brought in
// (another definition's objects, a new kernel or buffer) is held by the graph
// object only: synchronize launches made after such an update before the
// last copy goes. Per-node updates name nodes of the definition it was made
// from. Copies share the one library object. A default-constructed Graph is
// empty.
class Graph : public Handle<Graph, cucore_graph_t> {
public:
    Graph() noexcept = default;

    // The raw CUgraphExec. Throws Error: INVALID_HANDLE.
    void *handle() const {
        void *h = nullptr;
        detail::check(cucore_graph_handle(handle_, &h));
        return h;
    }

    // Launches the graph on `stream`: one driver call (cuGraphLaunch). Throws
    // Error: INVALID_HANDLE, INVALID_ARGUMENT (a stream of another device), CUDA.
    void launch(const Stream &stream) const { detail::check(cucore_graph_launch(handle_, stream.get())); }

    // Uploads the graph's device work on `stream` ahead of a launch. Throws as launch().
    void upload(const Stream &stream) const { detail::check(cucore_graph_upload(handle_, stream.get())); }

    // Updates the graph in place from `definition`, which must have its
    // topology (cuGraphExecUpdate); the graph then holds what `definition`
    // holds. update() throws Error (INVALID_STATE, the message naming the
    // driver's verdict and the failing node's kind) when the driver refuses;
    // try_update() returns the verdict instead (CUCORE_GRAPH_UPDATE_SUCCESS,
    // or e.g. TOPOLOGY_CHANGED) and throws only for other errors. Both throw
    // Error: INVALID_HANDLE, CUDA. The GraphBuilder overload takes what the
    // builder captured (defined in graph_builder.hpp).
    void update(const GraphDefinition &definition) const {
        detail::check(cucore_graph_update(handle_, definition.get(), nullptr));
    }
    void update(const GraphBuilder &builder) const;
    cucore_graph_update_result_t try_update(const GraphDefinition &definition) const {
        cucore_graph_update_result_t result = CUCORE_GRAPH_UPDATE_SUCCESS;
        const cucore_status_t status = cucore_graph_update(handle_, definition.get(), &result);
        if (status == CUCORE_ERROR_INVALID_STATE && result != CUCORE_GRAPH_UPDATE_SUCCESS) return result;
        detail::check(status);
        return result;
    }

    // ---- Per-node updates: `node` is a node of the definition the graph was
    // made from; the definition itself does not change. Each throws as the
    // matching GraphNode::set_* call, and INVALID_ARGUMENT (a node of another
    // definition), CUDA (the driver refused the change).

    // A kernel node's kernel (an empty Kernel keeps it), configuration and arguments.
    template <typename... Args>
    void set_kernel_node(const GraphNode &node, const LaunchConfig &config, const Kernel &kernel,
                         const Args &...args) const {
        const cucore_launch_config_t c = config.to_c();
        cucore_graph_t *graph = handle_;
        detail::with_packed_args(
            std::index_sequence_for<Args...>{},
            [&](const void *const *pointers, const std::size_t *sizes, std::size_t count) {
                detail::check(
                    cucore_graph_set_kernel_node(graph, node.get(), &c, kernel.get(), pointers, sizes, count));
            },
            args...);
    }

    // A memcpy node's copy.
    void set_memcpy_node(const GraphNode &node, const Buffer &dst, std::uint64_t dst_offset, const Buffer &src,
                         std::uint64_t src_offset, std::uint64_t size) const {
        detail::check(
            cucore_graph_set_memcpy_node(handle_, node.get(), dst.get(), dst_offset, src.get(), src_offset, size));
    }

    // A memset node's fill (the element's width is the type of `value`).
    void set_memset_node(const GraphNode &node, const Buffer &buffer, std::uint8_t value, std::uint64_t width,
                         std::uint64_t height = 1, std::uint64_t pitch = 0, std::uint64_t offset = 0) const {
        set_memset_pattern(node, buffer, value, 1, width, height, pitch, offset);
    }
    void set_memset_node(const GraphNode &node, const Buffer &buffer, std::uint16_t value, std::uint64_t width,
                         std::uint64_t height = 1, std::uint64_t pitch = 0, std::uint64_t offset = 0) const {
        set_memset_pattern(node, buffer, value, 2, width, height, pitch, offset);
    }
    void set_memset_node(const GraphNode &node, const Buffer &buffer, std::uint32_t value, std::uint64_t width,
                         std::uint64_t height = 1, std::uint64_t pitch = 0, std::uint64_t offset = 0) const {
        set_memset_pattern(node, buffer, value, 4, width, height, pitch, offset);
    }
    template <typename T>
    void set_memset_node(const GraphNode &node, const Buffer &buffer, T value, std::uint64_t width,
                         std::uint64_t height = 1, std::uint64_t pitch = 0, std::uint64_t offset = 0) const = delete;

    // A host callback node's callable (a copy of `f`, or `fn(user_data)` with `release`).
    template <typename F, typename = std::enable_if_t<detail::is_host_callable_v<F>>>
    void set_host_callback_node(const GraphNode &node, F &&f) const {
        const detail::HostCallback c = detail::make_host_callback(std::forward<F>(f));
        set_host_callback_node(node, c.fn, c.user_data, c.release);
    }
    void set_host_callback_node(const GraphNode &node, cucore_host_fn fn, void *user_data,
                                cucore_release_fn release = nullptr) const {
        detail::check(cucore_graph_set_host_callback_node(handle_, node.get(), fn, user_data, release));
    }

    // An event record (wait) node records (waits for) `event` in later
    // launches; the graph holds it. Throws Error: INVALID_HANDLE,
    // INVALID_ARGUMENT (neither an event record nor an event wait node),
    // INVALID_STATE, CUDA.
    void set_event_node(const GraphNode &node, const Event &event) const {
        detail::check(cucore_graph_set_event_node(handle_, node.get(), event.get()));
    }
    // A child graph node's nodes take the parameters of `child`'s (of the same
    // topology) in later launches; the graph holds what `child` holds. Throws
    // Error: INVALID_HANDLE, INVALID_ARGUMENT (not a child graph node),
    // INVALID_STATE, CUDA (the driver refused, e.g. another topology).
    void set_child_graph_node(const GraphNode &node, const GraphDefinition &child) const {
        detail::check(cucore_graph_set_child_graph_node(handle_, node.get(), child.get()));
    }

    // Enables or disables a kernel, memcpy or memset node in later launches /
    // whether it is enabled. Throw Error: INVALID_HANDLE, INVALID_ARGUMENT
    // (another kind of node), CUDA.
    void set_node_enabled(const GraphNode &node, bool enabled) const {
        detail::check(cucore_graph_set_node_enabled(handle_, node.get(), enabled ? 1 : 0));
    }
    bool node_enabled(const GraphNode &node) const {
        int enabled = 0;
        detail::check(cucore_graph_node_enabled(handle_, node.get(), &enabled));
        return enabled != 0;
    }

private:
    void set_memset_pattern(const GraphNode &node, const Buffer &buffer, std::uint32_t value,
                            std::uint32_t element_size, std::uint64_t width, std::uint64_t height,
                            std::uint64_t pitch, std::uint64_t offset) const {
        detail::check(cucore_graph_set_memset_node(handle_, node.get(), buffer.get(), offset, value, element_size,
                                                   width, height, pitch));
    }
};

static_assert(sizeof(Graph) == sizeof(void *), "a Graph is exactly one C handle");

// ---- Members that need the classes above -------------------------------------------

namespace detail {
// A C listing call (`query(handles, capacity, &count)`) as a vector of owning
// wrappers: asks for the count, then for that many (again if the list grew meanwhile).
template <typename Wrapper, typename Query>
std::vector<Wrapper> list_graph_handles(Query query) {
    using CHandle = typename Wrapper::c_type;
    std::size_t count = 0;
    check(query(static_cast<CHandle **>(nullptr), std::size_t{0}, &count));
    for (;;) {
        std::vector<Wrapper> result;
        result.reserve(count); // before the call: adopting below cannot throw
        std::vector<CHandle *> raw(count, nullptr);
        std::size_t total = 0;
        check(query(raw.data(), raw.size(), &total));
        const std::size_t got = total < raw.size() ? total : raw.size();
        for (std::size_t i = 0; i < got; ++i) result.push_back(Wrapper::adopt(raw[i]));
        if (total <= raw.size()) return result;
        count = total; // nodes were added meanwhile: `result` releases what it got
    }
}
} // namespace detail

inline GraphDefinition GraphNode::definition() const {
    cucore_graph_definition_t *raw = nullptr;
    detail::check(cucore_graph_node_definition(handle_, &raw));
    return GraphDefinition::adopt(raw);
}

inline std::vector<GraphNode> GraphNode::dependencies() const {
    cucore_graph_node_t *node = handle_;
    return detail::list_graph_handles<GraphNode>([node](cucore_graph_node_t **nodes, std::size_t capacity,
                                                         std::size_t *count) {
        return cucore_graph_node_dependencies(node, nodes, capacity, count);
    });
}

inline std::vector<GraphNode> GraphNode::dependents() const {
    cucore_graph_node_t *node = handle_;
    return detail::list_graph_handles<GraphNode>([node](cucore_graph_node_t **nodes, std::size_t capacity,
                                                         std::size_t *count) {
        return cucore_graph_node_dependents(node, nodes, capacity, count);
    });
}

inline GraphNode GraphNode::find_in_clone(const GraphDefinition &clone) const {
    cucore_graph_node_t *raw = nullptr;
    detail::check(cucore_graph_node_find_in_clone(handle_, clone.get(), &raw));
    return adopt(raw);
}

inline void GraphNode::set_child_graph(const GraphDefinition &child) const {
    detail::check(cucore_graph_node_set_child_graph(handle_, child.get()));
}

inline std::vector<GraphDefinition> GraphNode::bodies() const {
    cucore_graph_node_t *node = handle_;
    return detail::list_graph_handles<GraphDefinition>(
        [node](cucore_graph_definition_t **bodies, std::size_t capacity, std::size_t *count) {
            return cucore_graph_node_bodies(node, bodies, capacity, count);
        });
}

inline std::vector<GraphNode> GraphDefinition::nodes() const {
    cucore_graph_definition_t *definition = handle_;
    return detail::list_graph_handles<GraphNode>(
        [definition](cucore_graph_node_t **nodes, std::size_t capacity, std::size_t *count) {
            return cucore_graph_definition_nodes(definition, nodes, capacity, count);
        });
}

inline std::vector<GraphEdge> GraphDefinition::edges() const {
    std::size_t count = 0;
    detail::check(cucore_graph_definition_edges(handle_, nullptr, nullptr, 0, &count));
    for (;;) {
        std::vector<GraphEdge> result;
        result.reserve(count);
        std::vector<cucore_graph_node_t *> from(count, nullptr), to(count, nullptr);
        std::size_t total = 0;
        detail::check(cucore_graph_definition_edges(handle_, from.data(), to.data(), count, &total));
        const std::size_t got = total < count ? total : count;
        for (std::size_t i = 0; i < got; ++i)
            result.push_back(GraphEdge{GraphNode::adopt(from[i]), GraphNode::adopt(to[i])});
        if (total <= count) return result;
        count = total;
    }
}

inline Graph GraphDefinition::instantiate() const {
    cucore_graph_t *raw = nullptr;
    detail::check(cucore_graph_definition_instantiate(handle_, nullptr, &raw));
    return Graph::adopt(raw);
}

inline Graph GraphDefinition::instantiate(const GraphCompleteOptions &options) const {
    const cucore_graph_complete_options_t o = options.to_c();
    cucore_graph_t *raw = nullptr;
    detail::check(cucore_graph_definition_instantiate(handle_, &o, &raw));
    return Graph::adopt(raw);
}

inline GraphDefinition::Conditional GraphDefinition::add_conditional(const GraphDependencies &dependencies,
                                                                     GraphCondition condition,
                                                                     cucore_graph_conditional_type_t type,
                                                                     std::size_t body_count) const {
    Conditional result;
    result.bodies.reserve(body_count); // before the call: adopting below cannot throw
    std::vector<cucore_graph_definition_t *> raw(body_count, nullptr);
    cucore_graph_node_t *node = nullptr;
    detail::check(cucore_graph_definition_add_conditional(handle_, dependencies.data(), dependencies.size(),
                                                          condition.handle(), type, body_count, raw.data(), &node));
    result.node = GraphNode::adopt(node);
    for (cucore_graph_definition_t *body : raw) result.bodies.push_back(adopt(body));
    return result;
}

inline GraphDefinition::Conditional GraphDefinition::add_if(const GraphDependencies &dependencies,
                                                            GraphCondition condition) const {
    return add_conditional(dependencies, condition, CUCORE_GRAPH_CONDITIONAL_IF, 1);
}

inline GraphDefinition::Conditional GraphDefinition::add_if_else(const GraphDependencies &dependencies,
                                                                 GraphCondition condition) const {
    return add_conditional(dependencies, condition, CUCORE_GRAPH_CONDITIONAL_IF, 2);
}

inline GraphDefinition::Conditional GraphDefinition::add_while(const GraphDependencies &dependencies,
                                                               GraphCondition condition) const {
    return add_conditional(dependencies, condition, CUCORE_GRAPH_CONDITIONAL_WHILE, 1);
}

inline GraphDefinition::Conditional GraphDefinition::add_switch(const GraphDependencies &dependencies,
                                                                GraphCondition condition, std::size_t count) const {
    return add_conditional(dependencies, condition, CUCORE_GRAPH_CONDITIONAL_SWITCH, count);
}

} // namespace cucore

#endif // CUCORE_GRAPH_HPP
