// Graph definitions (CUgraph), their nodes (CUgraphNode) and executable
// graphs (CUgraphExec).
//
// Ownership: a root definition owns its CUgraph. Body graphs of conditional
// nodes and the graphs of child graph nodes belong to their node; a
// definition object over one of those borrows it and holds the root, so it
// stays valid while any handle to it lives. The root and its borrowed graphs
// share one GraphHierarchy (what the library knows of its nodes that the
// driver cannot tell: the kernel object of a kernel node, the bodies of a
// conditional node) and one GraphAttachments (what the nodes use; see
// graph_attachments.hpp).
//
// Nodes: a GraphNode names a CUgraphNode and holds its definition. A node the
// user destroys is recorded (node_registry in graph.cpp), so every other handle
// of it answers INVALID_STATE instead of passing a dead CUgraphNode to the
// driver.
#pragma once

#include <cuda.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/context.hpp"
#include "core/copy_3d.hpp"
#include "core/graph_attachments.hpp"
#include "core/handle.hpp"
#include "core/kernel.hpp"  // GraphHierarchy holds Ref<Kernel>
#include "core/thread_cache.hpp"
#include "cucore/graph.h"

namespace cucore::core {

class Buffer;
class Event;
class Graph;
class GraphNode;
class Kernel;
class Stream;

// What the library knows about the nodes of one graph hierarchy that the
// driver cannot tell (kernel nodes' kernels are in GraphAttachments).
struct GraphHierarchy {
    std::mutex mutex;
    std::unordered_map<CUgraphNode, std::vector<CUgraph>> bodies;  // conditional nodes' bodies
};

// A fill: `height` rows of `width` elements of `element_size` bytes, `pitch` bytes apart.
struct MemsetRequest {
    Buffer *buffer = nullptr;
    uint64_t offset = 0;
    uint32_t value = 0;
    uint32_t element_size = 0;
    uint64_t width = 0;
    uint64_t height = 0;
    uint64_t pitch = 0;
};

// A 1D copy between buffers.
struct MemcpyRequest {
    Buffer *dst = nullptr;
    uint64_t dst_offset = 0;
    Buffer *src = nullptr;
    uint64_t src_offset = 0;
    uint64_t size = 0;
};

// A kernel node's kernel, configuration and arguments (copied by the driver).
struct KernelRequest {
    const cucore_launch_config_t *config = nullptr;
    Kernel *kernel = nullptr;  // may be null when updating: keep the node's
    const void *const *args = nullptr;
    const size_t *arg_sizes = nullptr;
    size_t arg_count = 0;
};

// The checked driver forms of the requests (graph.cpp); they also name what the graph must hold.
CUDA_MEMCPY3D memcpy_params(const MemcpyRequest &request);
CUDA_MEMSET_NODE_PARAMS memset_params(const MemsetRequest &request);
CUDA_KERNEL_NODE_PARAMS kernel_params(const KernelRequest &request, Kernel &kernel, Context &context);
// The one making of conditions and conditional nodes, for definitions and captures alike.
// A condition of `graph` in `context` (flags: cucore_graph_condition_flag_t).
uint64_t make_condition(CUgraph graph, CUcontext context, uint32_t default_value, uint32_t flags);
// A conditional node of `graph` after `dependencies` (`edges` may be null), its type and body count checked
// first; `bodies` gets the body graphs the node owns.
CUgraphNode add_conditional_node(CUgraph graph, CUcontext context, const CUgraphNode *dependencies,
                                 const CUgraphEdgeData *edges, size_t count, uint64_t condition,
                                 cucore_graph_conditional_type_t type, size_t body_count, std::vector<CUgraph> &bodies);

class GraphDefinition final : public Object, public Pooled<GraphDefinition> {
  public:
    static Ref<GraphDefinition> create(Ref<Context> context);
    // Takes over `graph` (captured or cloned), attaching `attachments` to it.
    static Ref<GraphDefinition> adopt(Ref<Context> context, CUgraph graph,
                                      std::shared_ptr<GraphAttachments> attachments,
                                      std::shared_ptr<GraphHierarchy> hierarchy);
    // A body or child graph of a node of `owner`'s hierarchy.
    static Ref<GraphDefinition> borrow(const GraphDefinition &owner, CUgraph graph);

    GraphDefinition(Ref<Context> context, CUgraph graph, Ref<GraphDefinition> owner,
                    std::shared_ptr<GraphAttachments> attachments,
                    std::shared_ptr<GraphHierarchy> hierarchy) noexcept;
    ~GraphDefinition() override;

    CUgraph cu() const noexcept { return graph_; }
    Context &context() const noexcept { return *context_; }
    const Ref<Context> &context_ref() const noexcept { return context_; }
    bool owned() const noexcept { return !owner_; }
    GraphAttachments &attachments() const noexcept { return *attachments_; }
    const std::shared_ptr<GraphAttachments> &attachments_ref() const noexcept { return attachments_; }
    GraphHierarchy &hierarchy() const noexcept { return *hierarchy_; }

    Ref<GraphDefinition> clone();
    void debug_dot_print(const char *path, uint32_t flags);
    std::vector<Ref<GraphNode>> nodes();
    void edges(std::vector<Ref<GraphNode>> &from, std::vector<Ref<GraphNode>> &to);
    Ref<Graph> instantiate(uint32_t flags, Stream *upload_stream);
    uint64_t create_condition(uint32_t default_value, uint32_t flags);

    // Node adders; `dependencies` must be nodes of this definition.
    Ref<GraphNode> add_empty(const std::vector<GraphNode *> &dependencies);
    Ref<GraphNode> add_kernel(const std::vector<GraphNode *> &dependencies, const KernelRequest &request);
    Ref<GraphNode> add_memcpy(const std::vector<GraphNode *> &dependencies, const MemcpyRequest &request);
    Ref<GraphNode> add_memcpy_3d(const std::vector<GraphNode *> &dependencies, const CopySide &source,
                                 const CopySide &destination, uint64_t width, uint64_t rows, uint64_t depth);
    Ref<GraphNode> add_memset(const std::vector<GraphNode *> &dependencies, const MemsetRequest &request);
    // The closure's release runs when the graph no longer needs it, or now if this fails.
    Ref<GraphNode> add_host_callback(const std::vector<GraphNode *> &dependencies, const HostClosure &closure);
    Ref<GraphNode> add_event_record(const std::vector<GraphNode *> &dependencies, Event &event);
    Ref<GraphNode> add_event_wait(const std::vector<GraphNode *> &dependencies, Event &event);
    Ref<GraphNode> add_child_graph(const std::vector<GraphNode *> &dependencies, GraphDefinition &child);
    Ref<GraphNode> add_alloc(const std::vector<GraphNode *> &dependencies, uint64_t size,
                             const cucore_graph_alloc_options_t &options, uint64_t &address);
    Ref<GraphNode> add_free(const std::vector<GraphNode *> &dependencies, uint64_t address);
    Ref<GraphNode> add_conditional(const std::vector<GraphNode *> &dependencies, uint64_t condition,
                                   cucore_graph_conditional_type_t type, size_t body_count,
                                   std::vector<Ref<GraphDefinition>> &bodies);

    // A handle for a node of this definition.
    Ref<GraphNode> node(CUgraphNode node);
    // Throws INVALID_STATE for a borrowed child graph a child graph update destroyed (`argument` names it).
    void check_live(const char *argument = "definition") const;

  private:
    std::vector<CUgraphNode> dependency_handles(const std::vector<GraphNode *> &dependencies) const;

    Ref<Context> context_;
    CUgraph graph_;
    Ref<GraphDefinition> owner_;  // set for borrowed graphs
    std::shared_ptr<GraphAttachments> attachments_;
    std::shared_ptr<GraphHierarchy> hierarchy_;
    uint32_t epoch_ = 0;  // borrowed graphs: their epoch in the graph registry (graph.cpp)
};

class GraphNode final : public Object, public Pooled<GraphNode> {
  public:
    GraphNode(Ref<GraphDefinition> definition, CUgraphNode node, uint32_t epoch) noexcept;
    ~GraphNode() override;

    // The CUgraphNode; throws INVALID_STATE once the node was destroyed.
    CUgraphNode cu() const;
    GraphDefinition &definition() const noexcept { return *definition_; }
    const Ref<GraphDefinition> &definition_ref() const noexcept { return definition_; }
    CUgraphNodeType driver_type() const;
    cucore_graph_node_type_t type() const { return static_cast<cucore_graph_node_type_t>(driver_type() + 1); }

    void destroy();
    std::vector<Ref<GraphNode>> dependencies();
    std::vector<Ref<GraphNode>> dependents();
    void add_dependent(GraphNode &to);
    void remove_dependent(GraphNode &to);
    Ref<GraphNode> find_in_clone(GraphDefinition &clone);

    // Kernel nodes: the configuration, and the kernel object where the library added the node (else null).
    cucore_launch_config_t kernel_config(Ref<Kernel> &kernel);
    void set_kernel(const KernelRequest &request);
    void set_memcpy(const MemcpyRequest &request);
    void set_memset(const MemsetRequest &request);
    void set_host_callback(const HostClosure &closure);
    // Event record and wait nodes: the event (held by the definition from here).
    void set_event(Event &event);
    // Child graph nodes: a copy of `child` (of another hierarchy) replaces the node's graph.
    void set_child_graph(GraphDefinition &child);
    void alloc_info(uint64_t &address, uint64_t &size);
    std::vector<Ref<GraphDefinition>> bodies();

    // Throws INVALID_ARGUMENT unless the node is of `type` (`call` names what needs it).
    void require_type(CUgraphNodeType type, const char *what) const;
    // Throws INVALID_ARGUMENT unless it is an event record or wait node; the kind it is.
    CUgraphNodeType require_event_node(const char *what) const;

  private:
    Ref<GraphDefinition> definition_;
    CUgraphNode node_;
    uint32_t epoch_;
};

class Graph final : public Object, public Pooled<Graph> {
  public:
    Graph(Ref<Context> context, CUgraphExec exec, std::shared_ptr<GraphAttachments> attachments);
    ~Graph() override;

    CUgraphExec cu() const noexcept { return exec_; }
    void launch(Stream &stream);
    void upload(Stream &stream);
    // Sets `result` to the driver's verdict; throws INVALID_STATE when it refused.
    void update(GraphDefinition &definition, cucore_graph_update_result_t &result);
    void set_kernel_node(GraphNode &node, const KernelRequest &request);
    void set_memcpy_node(GraphNode &node, const MemcpyRequest &request);
    void set_memset_node(GraphNode &node, const MemsetRequest &request);
    void set_host_callback_node(GraphNode &node, const HostClosure &closure);
    void set_event_node(GraphNode &node, Event &event);
    void set_child_graph_node(GraphNode &node, GraphDefinition &child);
    void set_node_enabled(GraphNode &node, bool enabled);
    bool node_enabled(GraphNode &node);

  private:
    void check_stream(const Stream &stream) const;
    void check_node(const GraphNode &node) const;
    void note_launch_stream(Stream &stream);

    Ref<Context> context_;
    CUgraphExec exec_;
    int device_ordinal_;
    std::mutex mutex_;
    // The attachments of the definitions it was made and updated from, and
    // what per-node updates brought in (kept until the graph goes).
    std::vector<std::shared_ptr<GraphAttachments>> attachments_;
    std::shared_ptr<GraphAttachments> updates_;
    // The streams it was launched on (held), so what it holds is released after
    // their work (release_after); the last one is checked lock-free per launch.
    std::atomic<const Stream *> last_stream_{nullptr};
    std::vector<Ref<Stream>> launched_on_;
};

// The driver's name of a node type, for messages ("kernel", "memcpy", ...).
const char *node_type_name(CUgraphNodeType type) noexcept;

}  // namespace cucore::core
