#include "core/graph.hpp"

#include <string>
#include <unordered_set>

#include "core/buffer.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/event.hpp"
#include "core/kernel.hpp"
#include "core/launch.hpp"
#include "core/owned.hpp"
#include "core/release.hpp"
#include "core/stream.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

// The public node types, DOT flags and update results are the driver's (+1 for node types).
static_assert(static_cast<int>(CUCORE_GRAPH_NODE_CONDITIONAL) == CU_GRAPH_NODE_TYPE_CONDITIONAL + 1);
static_assert(static_cast<int>(CUCORE_GRAPH_NODE_KERNEL) == CU_GRAPH_NODE_TYPE_KERNEL + 1);
static_assert(static_cast<int>(CUCORE_GRAPH_DOT_CONDITIONAL_NODE_PARAMS) ==
              static_cast<int>(CU_GRAPH_DEBUG_DOT_FLAGS_CONDITIONAL_NODE_PARAMS));
static_assert(static_cast<int>(CUCORE_GRAPH_DOT_VERBOSE) == static_cast<int>(CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE));
static_assert(static_cast<int>(CUCORE_GRAPH_DOT_HANDLES) == static_cast<int>(CU_GRAPH_DEBUG_DOT_FLAGS_HANDLES));
static_assert(static_cast<int>(CUCORE_GRAPH_UPDATE_ATTRIBUTES_CHANGED) ==
              static_cast<int>(CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED));

namespace {

// The nodes users destroyed (and the graphs and nodes a child graph update
// destroyed): handle -> epoch. A handle made at another epoch, or of a node
// (graph) destroyed since, is stale. The driver may reuse a destroyed node's
// address for a new node, which then starts a new epoch.
template <class Handle>
class Registry {
  public:
    uint32_t epoch_of_new(Handle node) {
        std::lock_guard<std::mutex> lock(mutex_);
        dead_.erase(node);
        auto it = epochs_.find(node);
        return it == epochs_.end() ? 0 : it->second;
    }
    bool alive(Handle node, uint32_t epoch) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (dead_.count(node)) return false;
        auto it = epochs_.find(node);
        return (it == epochs_.end() ? 0 : it->second) == epoch;
    }
    void destroyed(Handle node) {
        std::lock_guard<std::mutex> lock(mutex_);
        ++epochs_[node];
        dead_.insert(node);
    }

  private:
    std::mutex mutex_;
    std::unordered_map<Handle, uint32_t> epochs_;
    std::unordered_set<Handle> dead_;
};

Registry<CUgraphNode> &node_registry() {
    static auto *registry = new Registry<CUgraphNode>;  // nodes may be released during exit
    return *registry;
}

// Borrowed graphs (child graphs, bodies) only: a child graph replaced by an update is dead.
Registry<CUgraph> &graph_registry() {
    static auto *registry = new Registry<CUgraph>;
    return *registry;
}

void destroy_graph(CUgraph graph, const char *what) noexcept {
    release_reported("cuGraphDestroy", what,
                     [graph](const driver::Table &api) { return api.cuGraphDestroy(graph); });
}

[[noreturn]] void throw_dead_node() {
    throw Error(CUCORE_ERROR_INVALID_STATE, "the graph node was destroyed (cucore_graph_node_destroy)");
}

void check_buffer_range(Buffer &buffer, uint64_t offset, uint64_t size, const char *what) {
    buffer.check_open(what);
    buffer.check_range(offset, size, what);
}

std::string node_label(CUgraphNodeType type) { return std::string("a ") + node_type_name(type) + " node"; }

// Lists of nodes the driver fills after a count query.
template <class Query>
std::vector<CUgraphNode> node_list(Query query) {
    size_t count = 0;
    query(nullptr, &count);
    std::vector<CUgraphNode> nodes(count);
    if (count) query(nodes.data(), &count);
    nodes.resize(count);
    return nodes;
}

CUgraphConditionalNodeType driver_conditional_type(cucore_graph_conditional_type_t type) noexcept {
    switch (type) {
        case CUCORE_GRAPH_CONDITIONAL_WHILE: return CU_GRAPH_COND_TYPE_WHILE;
        case CUCORE_GRAPH_CONDITIONAL_SWITCH: return CU_GRAPH_COND_TYPE_SWITCH;
        default: return CU_GRAPH_COND_TYPE_IF;
    }
}

void check_conditional(cucore_graph_conditional_type_t type, size_t body_count) {
    const bool fits = type == CUCORE_GRAPH_CONDITIONAL_IF       ? (body_count == 1 || body_count == 2)
                      : type == CUCORE_GRAPH_CONDITIONAL_WHILE ? body_count == 1
                                                                : body_count >= 1;
    if (!fits)
        throw_invalid_argument("argument 'body_count' is " + std::to_string(body_count) +
                               (type == CUCORE_GRAPH_CONDITIONAL_IF      ? "; an IF node has 1 body (then) or 2 (then, else)"
                                : type == CUCORE_GRAPH_CONDITIONAL_WHILE ? "; a WHILE node has 1 body"
                                                                         : "; a SWITCH node has at least 1 body"));
    const bool newer = (type == CUCORE_GRAPH_CONDITIONAL_IF && body_count == 2) ||
                       type == CUCORE_GRAPH_CONDITIONAL_SWITCH;
    if (newer) {
        const int version = Device::driver_version();
        if (version < 12080)
            throw Error(CUCORE_ERROR_NOT_SUPPORTED,
                        std::string(type == CUCORE_GRAPH_CONDITIONAL_SWITCH ? "SWITCH nodes" : "IF nodes with an else body") +
                            " need a driver of CUDA 12.8 or newer; this one is " + std::to_string(version / 1000) +
                            "." + std::to_string(version % 1000 / 10));
    }
}

}  // namespace

const char *node_type_name(CUgraphNodeType type) noexcept {
    switch (type) {
        case CU_GRAPH_NODE_TYPE_KERNEL: return "kernel";
        case CU_GRAPH_NODE_TYPE_MEMCPY: return "memcpy";
        case CU_GRAPH_NODE_TYPE_MEMSET: return "memset";
        case CU_GRAPH_NODE_TYPE_HOST: return "host callback";
        case CU_GRAPH_NODE_TYPE_GRAPH: return "child graph";
        case CU_GRAPH_NODE_TYPE_EMPTY: return "empty";
        case CU_GRAPH_NODE_TYPE_WAIT_EVENT: return "event wait";
        case CU_GRAPH_NODE_TYPE_EVENT_RECORD: return "event record";
        case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL: return "external semaphore signal";
        case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT: return "external semaphore wait";
        case CU_GRAPH_NODE_TYPE_MEM_ALLOC: return "allocation";
        case CU_GRAPH_NODE_TYPE_MEM_FREE: return "free";
        case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP: return "batch memory operation";
        case CU_GRAPH_NODE_TYPE_CONDITIONAL: return "conditional";
        default: return "unknown";
    }
}

// ---- requests -------------------------------------------------------------------

CUDA_MEMCPY3D memcpy_params(const MemcpyRequest &request) {
    check_buffer_range(*request.src, request.src_offset, request.size, "'src'");
    check_buffer_range(*request.dst, request.dst_offset, request.size, "'dst'");
    if (request.size == 0) throw_invalid_argument("argument 'size' is 0; a memcpy node copies at least one byte");
    CUDA_MEMCPY3D params{};
    params.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
    params.srcDevice = request.src->address() + request.src_offset;
    params.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
    params.dstDevice = request.dst->address() + request.dst_offset;
    params.WidthInBytes = static_cast<size_t>(request.size);
    params.Height = 1;
    params.Depth = 1;
    // One row: its pitch is its width (drivers check pitch >= width even for one row).
    params.srcPitch = params.dstPitch = params.WidthInBytes;
    params.srcHeight = params.dstHeight = 1;
    return params;
}

CUDA_MEMSET_NODE_PARAMS memset_params(const MemsetRequest &request) {
    const uint32_t element = request.element_size;
    check_fill_value(request.value, element, "element_size");
    if (request.width == 0 || request.height == 0)
        throw_invalid_argument("a memset node sets at least one element (width " + std::to_string(request.width) +
                               ", height " + std::to_string(request.height) + ")");
    const uint64_t row = request.width * element;
    if (row / element != request.width) throw_invalid_argument("argument 'width' overflows 64 bits in bytes");
    const uint64_t pitch = request.pitch ? request.pitch : row;
    if (pitch < row)
        throw_invalid_argument("argument 'pitch' (" + std::to_string(pitch) + ") is below the row of " +
                               std::to_string(row) + " bytes");
    if (request.height > 1 && (pitch % element) != 0)
        throw_invalid_argument("argument 'pitch' is not a multiple of the element size");
    const uint64_t rows_before = request.height - 1;
    if (rows_before && pitch > (UINT64_MAX - row) / rows_before)
        throw_invalid_argument("the fill's extent overflows 64 bits");
    const uint64_t extent = rows_before * pitch + row;
    check_buffer_range(*request.buffer, request.offset, extent, "the buffer");
    const CUdeviceptr address = request.buffer->address() + request.offset;
    if (address % element != 0)
        throw_invalid_argument("the fill's start (buffer address + offset) is not aligned to " +
                               std::to_string(element) + " bytes");
    CUDA_MEMSET_NODE_PARAMS params{};
    params.dst = address;
    params.pitch = static_cast<size_t>(request.height > 1 ? pitch : 0);
    params.value = request.value;
    params.elementSize = element;
    params.width = static_cast<size_t>(request.width);
    params.height = static_cast<size_t>(request.height);
    return params;
}

CUDA_KERNEL_NODE_PARAMS kernel_params(const KernelRequest &request, Kernel &kernel, Context &context) {
    const cucore_launch_config_t config = request.config ? *request.config : cucore_launch_config_t CUCORE_LAUNCH_CONFIG_INIT;
    return kernel_node_params(config, kernel, context, request.args, request.arg_sizes, request.arg_count);
}

// ---- definitions ------------------------------------------------------------------

Ref<GraphDefinition> GraphDefinition::create(Ref<Context> context) {
    CUgraph raw = nullptr;
    {
        ScopedContext bind(context->cu());
        CUCORE_CALL(cuGraphCreate, &raw, 0);
    }
    return adopt(std::move(context), raw, std::make_shared<GraphAttachments>(), std::make_shared<GraphHierarchy>());
}

Ref<GraphDefinition> GraphDefinition::adopt(Ref<Context> context, CUgraph graph,
                                            std::shared_ptr<GraphAttachments> attachments,
                                            std::shared_ptr<GraphHierarchy> hierarchy) {
    auto made = own(graph, [](CUgraph unmade) noexcept { destroy_graph(unmade, "destroying a graph that was not made"); });
    Ref<GraphDefinition> definition =
        make<GraphDefinition>(std::move(context), graph, Ref<GraphDefinition>(), std::move(attachments), std::move(hierarchy));
    made.release();  // the definition destroys it from here
    return definition;
}

Ref<GraphDefinition> GraphDefinition::borrow(const GraphDefinition &owner, CUgraph graph) {
    const GraphDefinition &root = owner.owner_ ? *owner.owner_ : owner;
    Ref<GraphDefinition> made = make<GraphDefinition>(
        root.context_, graph, Ref<GraphDefinition>(const_cast<GraphDefinition *>(&root)), root.attachments_,
        root.hierarchy_);
    made->epoch_ = graph_registry().epoch_of_new(graph);
    return made;
}

void GraphDefinition::check_live(const char *argument) const {
    if (owner_ && !graph_registry().alive(graph_, epoch_))
        throw Error(CUCORE_ERROR_INVALID_STATE,
                    std::string("argument '") + argument +
                        "' is the graph of a child graph node that was given another graph since "
                        "(cucore_graph_node_set_child_graph)");
}

GraphDefinition::GraphDefinition(Ref<Context> context, CUgraph graph, Ref<GraphDefinition> owner,
                                 std::shared_ptr<GraphAttachments> attachments,
                                 std::shared_ptr<GraphHierarchy> hierarchy) noexcept
    : Object(CUCORE_OBJECT_GRAPH_DEFINITION),
      context_(std::move(context)),
      graph_(graph),
      owner_(std::move(owner)),
      attachments_(std::move(attachments)),
      hierarchy_(std::move(hierarchy)) {}

GraphDefinition::~GraphDefinition() {
    // A borrowed graph belongs to its node. The attachments go with the last of
    // this definition, its clones, copies and executables (graph_attachments.hpp).
    if (!owner_) destroy_graph(graph_, "destroying a graph definition");
}

std::vector<CUgraphNode> GraphDefinition::dependency_handles(const std::vector<GraphNode *> &dependencies) const {
    check_live();  // every adder comes here first
    std::vector<CUgraphNode> handles;
    handles.reserve(dependencies.size());
    for (size_t i = 0; i < dependencies.size(); ++i) {
        GraphNode &node = *dependencies[i];
        if (node.definition().cu() != graph_)
            throw_invalid_argument("argument 'dependencies[" + std::to_string(i) +
                                   "]' is a node of another graph definition");
        handles.push_back(node.cu());
    }
    return handles;
}

Ref<GraphNode> GraphDefinition::node(CUgraphNode node) {
    return make<GraphNode>(Ref<GraphDefinition>(this), node, node_registry().epoch_of_new(node));
}

Ref<GraphDefinition> GraphDefinition::clone() {
    check_live();
    CUgraph raw = nullptr;
    {
        ScopedContext bind(context_->cu());
        CUCORE_CALL(cuGraphClone, &raw, graph_);
    }
    auto made = own(raw, [](CUgraph unmade) noexcept { destroy_graph(unmade, "destroying a clone that was not made"); });
    // The clone holds its source's attachments, and a set of its own for what is added to it.
    auto hierarchy = std::make_shared<GraphHierarchy>();
    auto attachments = std::make_shared<GraphAttachments>();
    attachments->keep_attachments(attachments_);
    for (auto &[original, kernel] : attachments_->kernel_nodes()) {
        CUgraphNode copy = nullptr;
        if (CUCORE_DRIVER(cuGraphNodeFindInClone)(&copy, original, raw) == CUDA_SUCCESS)
            attachments->keep_kernel_node(copy, std::move(kernel));
    }
    return adopt(context_, made.release(), std::move(attachments), std::move(hierarchy));  // adopt owns it now
}

void GraphDefinition::debug_dot_print(const char *path, uint32_t flags) {
    check_live();
    CUCORE_CALL(cuGraphDebugDotPrint, graph_, path, flags);
}

std::vector<Ref<GraphNode>> GraphDefinition::nodes() {
    check_live();
    std::vector<CUgraphNode> raw =
        node_list([this](CUgraphNode *nodes, size_t *count) { CUCORE_CALL(cuGraphGetNodes, graph_, nodes, count); });
    std::vector<Ref<GraphNode>> result;
    result.reserve(raw.size());
    for (CUgraphNode n : raw) result.push_back(node(n));
    return result;
}

void GraphDefinition::edges(std::vector<Ref<GraphNode>> &from, std::vector<Ref<GraphNode>> &to) {
    check_live();
    size_t count = 0;
    CUCORE_CALL(cuGraphGetEdges, graph_, nullptr, nullptr, nullptr, &count);
    std::vector<CUgraphNode> raw_from(count), raw_to(count);
    if (count) CUCORE_CALL(cuGraphGetEdges, graph_, raw_from.data(), raw_to.data(), nullptr, &count);
    raw_from.resize(count);
    raw_to.resize(count);
    from.clear();
    to.clear();
    for (size_t i = 0; i < count; ++i) {
        from.push_back(node(raw_from[i]));
        to.push_back(node(raw_to[i]));
    }
}

uint64_t make_condition(CUgraph graph, CUcontext context, uint32_t default_value, uint32_t flags) {
    CUgraphConditionalHandle handle = 0;
    ScopedContext bind(context);
    CUCORE_CALL(cuGraphConditionalHandleCreate, &handle, graph, context, default_value,
                (flags & CUCORE_GRAPH_CONDITION_SET_DEFAULT) ? CU_GRAPH_COND_ASSIGN_DEFAULT : 0u);
    return handle;
}

CUgraphNode add_conditional_node(CUgraph graph, CUcontext context, const CUgraphNode *dependencies,
                                 const CUgraphEdgeData *edges, size_t count, uint64_t condition,
                                 cucore_graph_conditional_type_t type, size_t body_count, std::vector<CUgraph> &bodies) {
    if (condition == 0) throw_invalid_argument("argument 'condition' is 0; make one with create_condition");
    check_conditional(type, body_count);
    CUgraphNodeParams params{};
    params.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    params.conditional.handle = condition;
    params.conditional.type = driver_conditional_type(type);
    params.conditional.size = static_cast<unsigned>(body_count);
    params.conditional.ctx = context;
    CUgraphNode added = nullptr;
    {
        ScopedContext bind(context);
        CUCORE_CALL(cuGraphAddNode, &added, graph, dependencies, edges, count, &params);
    }
    bodies.assign(params.conditional.phGraph_out, params.conditional.phGraph_out + body_count);
    return added;
}

uint64_t GraphDefinition::create_condition(uint32_t default_value, uint32_t flags) {
    check_live();
    return make_condition(graph_, context_->cu(), default_value, flags);
}

// Every adder: dependencies checked, the context bound, the driver's adder called, the node handed out.
#define CUCORE_ADD_NODE(entry, ...)                                                          \
    const std::vector<CUgraphNode> deps = dependency_handles(dependencies);                 \
    CUgraphNode added = nullptr;                                                             \
    {                                                                                        \
        ScopedContext bind(context_->cu());                                                  \
        CUCORE_CALL(entry, &added, graph_, deps.data(), deps.size(), __VA_ARGS__);           \
    }

Ref<GraphNode> GraphDefinition::add_empty(const std::vector<GraphNode *> &dependencies) {
    const std::vector<CUgraphNode> deps = dependency_handles(dependencies);
    CUgraphNode added = nullptr;
    {
        ScopedContext bind(context_->cu());
        CUCORE_CALL(cuGraphAddEmptyNode, &added, graph_, deps.data(), deps.size());
    }
    return node(added);
}

Ref<GraphNode> GraphDefinition::add_kernel(const std::vector<GraphNode *> &dependencies, const KernelRequest &request) {
    Kernel &kernel = *request.kernel;
    const CUDA_KERNEL_NODE_PARAMS params = kernel_params(request, kernel, *context_);
    CUCORE_ADD_NODE(cuGraphAddKernelNode, &params);
    attachments_->keep(Ref<Object>(&kernel));
    attachments_->keep_kernel_node(added, Ref<Object>(&kernel));
    return node(added);
}

Ref<GraphNode> GraphDefinition::add_memcpy(const std::vector<GraphNode *> &dependencies, const MemcpyRequest &request) {
    const CUDA_MEMCPY3D params = memcpy_params(request);
    CUCORE_ADD_NODE(cuGraphAddMemcpyNode, &params, context_->cu());
    attachments_->keep_buffer(*request.dst);
    attachments_->keep_buffer(*request.src);
    return node(added);
}

Ref<GraphNode> GraphDefinition::add_memcpy_3d(const std::vector<GraphNode *> &dependencies, const CopySide &source,
                                              const CopySide &destination, uint64_t width, uint64_t rows,
                                              uint64_t depth) {
    if (width == 0) throw_invalid_argument("argument 'copy.width' is 0; a memcpy node copies at least one byte");
    const CUDA_MEMCPY3D params = copy_3d_params(source, destination, width, rows, depth);
    CUCORE_ADD_NODE(cuGraphAddMemcpyNode, &params, context_->cu());
    if (source.buffer) attachments_->keep_buffer(*source.buffer);
    if (destination.buffer) attachments_->keep_buffer(*destination.buffer);
    return node(added);
}

Ref<GraphNode> GraphDefinition::add_memset(const std::vector<GraphNode *> &dependencies, const MemsetRequest &request) {
    const CUDA_MEMSET_NODE_PARAMS params = memset_params(request);
    CUCORE_ADD_NODE(cuGraphAddMemsetNode, &params, context_->cu());
    attachments_->keep_buffer(*request.buffer);
    return node(added);
}

Ref<GraphNode> GraphDefinition::add_host_callback(const std::vector<GraphNode *> &dependencies,
                                                  const HostClosure &closure) {
    auto pending = own(closure, [](HostClosure unused) noexcept { release_closure(unused); });
    CUDA_HOST_NODE_PARAMS params{};
    params.fn = closure.fn;
    params.userData = closure.user_data;
    CUCORE_ADD_NODE(cuGraphAddHostNode, &params);
    try {
        attachments_->keep_closure(closure);
    } catch (...) {
        // The node must not outlive the data it calls with: take it out again.
        release_reported("cuGraphDestroyNode", "removing a host node whose data could not be held",
                         [added](const driver::Table &api) { return api.cuGraphDestroyNode(added); });
        throw;
    }
    pending.release();  // the graph releases it from here
    return node(added);
}

Ref<GraphNode> GraphDefinition::add_event_record(const std::vector<GraphNode *> &dependencies, Event &event) {
    CUCORE_ADD_NODE(cuGraphAddEventRecordNode, event.cu());
    attachments_->keep(Ref<Object>(&event));
    event.note_graph_use(true);
    return node(added);
}

Ref<GraphNode> GraphDefinition::add_event_wait(const std::vector<GraphNode *> &dependencies, Event &event) {
    CUCORE_ADD_NODE(cuGraphAddEventWaitNode, event.cu());
    attachments_->keep(Ref<Object>(&event));
    event.note_graph_use(false);
    return node(added);
}

Ref<GraphNode> GraphDefinition::add_child_graph(const std::vector<GraphNode *> &dependencies, GraphDefinition &child) {
    child.check_live("child");
    if (child.graph_ == graph_) throw_invalid_argument("argument 'child' is the definition itself");
    CUCORE_ADD_NODE(cuGraphAddChildGraphNode, child.graph_);
    attachments_->keep_attachments(child.attachments_);
    return node(added);
}

Ref<GraphNode> GraphDefinition::add_alloc(const std::vector<GraphNode *> &dependencies, uint64_t size,
                                          const cucore_graph_alloc_options_t &options, uint64_t &address) {
    if (size == 0) throw_invalid_argument("argument 'size' is 0; an allocation node allocates at least one byte");
    if (options.peer_access_count > 8)
        throw_invalid_argument("argument 'options.peer_access_count' is " + std::to_string(options.peer_access_count) +
                               "; at most 8 peers");
    CUDA_MEM_ALLOC_NODE_PARAMS params{};
    params.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    params.poolProps.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
    if (options.memory_type == CUCORE_GRAPH_MEMORY_HOST) {
        params.poolProps.location.type = CU_MEM_LOCATION_TYPE_HOST;
        params.poolProps.location.id = 0;
    } else {
        params.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        params.poolProps.location.id = context_->device().ordinal();
    }
    CUmemAccessDesc access[8]{};
    const int devices = Device::count();
    for (uint32_t i = 0; i < options.peer_access_count; ++i) {
        const int peer = options.peer_access[i];
        if (peer < 0 || peer >= devices)
            throw_invalid_argument("argument 'options.peer_access[" + std::to_string(i) + "]' is " +
                                   std::to_string(peer) + "; the devices are 0 to " + std::to_string(devices - 1));
        access[i].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        access[i].location.id = peer;
        access[i].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    }
    params.accessDescs = options.peer_access_count ? access : nullptr;
    params.accessDescCount = options.peer_access_count;
    params.bytesize = static_cast<size_t>(size);
    CUCORE_ADD_NODE(cuGraphAddMemAllocNode, &params);
    address = params.dptr;
    return node(added);
}

Ref<GraphNode> GraphDefinition::add_free(const std::vector<GraphNode *> &dependencies, uint64_t address) {
    if (address == 0) throw_invalid_argument("argument 'address' is 0");
    CUCORE_ADD_NODE(cuGraphAddMemFreeNode, static_cast<CUdeviceptr>(address));
    return node(added);
}

Ref<GraphNode> GraphDefinition::add_conditional(const std::vector<GraphNode *> &dependencies, uint64_t condition,
                                                cucore_graph_conditional_type_t type, size_t body_count,
                                                std::vector<Ref<GraphDefinition>> &bodies) {
    const std::vector<CUgraphNode> deps = dependency_handles(dependencies);
    std::vector<CUgraph> graphs;
    const CUgraphNode added = add_conditional_node(graph_, context_->cu(), deps.data(), nullptr, deps.size(),
                                                   condition, type, body_count, graphs);
    {
        std::lock_guard<std::mutex> lock(hierarchy_->mutex);
        hierarchy_->bodies[added] = graphs;
    }
    bodies.clear();
    for (CUgraph body : graphs) bodies.push_back(borrow(*this, body));
    return node(added);
}

#undef CUCORE_ADD_NODE

// ---- nodes --------------------------------------------------------------------------

GraphNode::GraphNode(Ref<GraphDefinition> definition, CUgraphNode node, uint32_t epoch) noexcept
    : Object(CUCORE_OBJECT_GRAPH_NODE), definition_(std::move(definition)), node_(node), epoch_(epoch) {}

GraphNode::~GraphNode() = default;

CUgraphNode GraphNode::cu() const {
    if (!node_registry().alive(node_, epoch_)) throw_dead_node();
    return node_;
}

CUgraphNodeType GraphNode::driver_type() const {
    CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
    CUCORE_CALL(cuGraphNodeGetType, cu(), &type);
    return type;
}

void GraphNode::require_type(CUgraphNodeType type, const char *what) const {
    const CUgraphNodeType actual = driver_type();
    if (actual != type)
        throw_invalid_argument(std::string("argument 'node' is ") + node_label(actual) + "; " + what + " needs " +
                               node_label(type));
}

void GraphNode::destroy() {
    const CUgraphNode node = cu();
    CUCORE_CALL(cuGraphDestroyNode, node);
    node_registry().destroyed(node);
    definition_->attachments().forget_node(node);
    GraphHierarchy &hierarchy = definition_->hierarchy();
    std::lock_guard<std::mutex> lock(hierarchy.mutex);
    hierarchy.bodies.erase(node);
}

std::vector<Ref<GraphNode>> GraphNode::dependencies() {
    const CUgraphNode self = cu();
    std::vector<CUgraphNode> raw = node_list([self](CUgraphNode *nodes, size_t *count) {
        CUCORE_CALL(cuGraphNodeGetDependencies, self, nodes, nullptr, count);
    });
    std::vector<Ref<GraphNode>> result;
    for (CUgraphNode n : raw) result.push_back(definition_->node(n));
    return result;
}

std::vector<Ref<GraphNode>> GraphNode::dependents() {
    const CUgraphNode self = cu();
    std::vector<CUgraphNode> raw = node_list([self](CUgraphNode *nodes, size_t *count) {
        CUCORE_CALL(cuGraphNodeGetDependentNodes, self, nodes, nullptr, count);
    });
    std::vector<Ref<GraphNode>> result;
    for (CUgraphNode n : raw) result.push_back(definition_->node(n));
    return result;
}

void GraphNode::add_dependent(GraphNode &to) {
    if (to.definition().cu() != definition_->cu())
        throw_invalid_argument("arguments 'from' and 'to' are nodes of different graph definitions");
    const CUgraphNode from_node = cu(), to_node = to.cu();
    if (from_node == to_node) throw_invalid_argument("a node cannot depend on itself");
    CUCORE_CALL(cuGraphAddDependencies, definition_->cu(), &from_node, &to_node, nullptr, 1);
}

void GraphNode::remove_dependent(GraphNode &to) {
    if (to.definition().cu() != definition_->cu())
        throw_invalid_argument("arguments 'from' and 'to' are nodes of different graph definitions");
    const CUgraphNode from_node = cu(), to_node = to.cu();
    CUCORE_CALL(cuGraphRemoveDependencies, definition_->cu(), &from_node, &to_node, nullptr, 1);
}

Ref<GraphNode> GraphNode::find_in_clone(GraphDefinition &clone) {
    clone.check_live("clone");
    CUgraphNode found = nullptr;
    CUCORE_CALL(cuGraphNodeFindInClone, &found, cu(), clone.cu());
    return clone.node(found);
}

cucore_launch_config_t GraphNode::kernel_config(Ref<Kernel> &kernel) {
    require_type(CU_GRAPH_NODE_TYPE_KERNEL, "reading a kernel configuration");
    CUDA_KERNEL_NODE_PARAMS params{};
    CUCORE_CALL(cuGraphKernelNodeGetParams, cu(), &params);
    cucore_launch_config_t config = CUCORE_LAUNCH_CONFIG_INIT;
    config.grid[0] = params.gridDimX;
    config.grid[1] = params.gridDimY;
    config.grid[2] = params.gridDimZ;
    config.block[0] = params.blockDimX;
    config.block[1] = params.blockDimY;
    config.block[2] = params.blockDimZ;
    config.shared_memory_bytes = params.sharedMemBytes;
    Ref<Object> known = definition_->attachments().kernel_of(node_);
    kernel = Ref<Kernel>(static_cast<Kernel *>(known.get()));
    return config;
}

namespace {
// The kernel a kernel-node update uses: the request's, else the one the library recorded for the node.
Ref<Kernel> kernel_for_update(const KernelRequest &request, GraphAttachments &attachments, CUgraphNode node) {
    if (request.kernel) return Ref<Kernel>(request.kernel);
    Ref<Object> known = attachments.kernel_of(node);
    if (!known)
        throw_invalid_argument("argument 'kernel' is NULL, but the node's kernel was not set by this library; "
                               "pass the kernel");
    return Ref<Kernel>(static_cast<Kernel *>(known.get()));
}
}  // namespace

void GraphNode::set_kernel(const KernelRequest &request) {
    require_type(CU_GRAPH_NODE_TYPE_KERNEL, "setting a kernel");
    Ref<Kernel> kernel = kernel_for_update(request, definition_->attachments(), node_);
    const CUDA_KERNEL_NODE_PARAMS params = kernel_params(request, *kernel, definition_->context());
    {
        ScopedContext bind(definition_->context().cu());
        CUCORE_CALL(cuGraphKernelNodeSetParams, cu(), &params);
    }
    definition_->attachments().keep(Ref<Object>(kernel.get()));
    definition_->attachments().keep_kernel_node(node_, Ref<Object>(kernel.get()));
}

void GraphNode::set_memcpy(const MemcpyRequest &request) {
    require_type(CU_GRAPH_NODE_TYPE_MEMCPY, "setting a copy");
    const CUDA_MEMCPY3D params = memcpy_params(request);
    {
        ScopedContext bind(definition_->context().cu());
        CUCORE_CALL(cuGraphMemcpyNodeSetParams, cu(), &params);
    }
    definition_->attachments().keep_buffer(*request.dst);
    definition_->attachments().keep_buffer(*request.src);
}

void GraphNode::set_memset(const MemsetRequest &request) {
    require_type(CU_GRAPH_NODE_TYPE_MEMSET, "setting a fill");
    const CUDA_MEMSET_NODE_PARAMS params = memset_params(request);
    {
        ScopedContext bind(definition_->context().cu());
        CUCORE_CALL(cuGraphMemsetNodeSetParams, cu(), &params);
    }
    definition_->attachments().keep_buffer(*request.buffer);
}

void GraphNode::set_host_callback(const HostClosure &closure) {
    auto pending = own(closure, [](HostClosure unused) noexcept { release_closure(unused); });
    require_type(CU_GRAPH_NODE_TYPE_HOST, "setting a host callback");
    CUDA_HOST_NODE_PARAMS params{};
    params.fn = closure.fn;
    params.userData = closure.user_data;
    CUCORE_CALL(cuGraphHostNodeSetParams, cu(), &params);
    definition_->attachments().keep_closure(closure);
    pending.release();
}

CUgraphNodeType GraphNode::require_event_node(const char *what) const {
    const CUgraphNodeType actual = driver_type();
    if (actual != CU_GRAPH_NODE_TYPE_EVENT_RECORD && actual != CU_GRAPH_NODE_TYPE_WAIT_EVENT)
        throw_invalid_argument(std::string("argument 'node' is ") + node_label(actual) + "; " + what +
                               " needs an event record or an event wait node");
    return actual;
}

void GraphNode::set_event(Event &event) {
    const CUgraphNodeType type = require_event_node("setting an event");
    {
        ScopedContext bind(definition_->context().cu());
        if (type == CU_GRAPH_NODE_TYPE_EVENT_RECORD)
            CUCORE_CALL(cuGraphEventRecordNodeSetEvent, cu(), event.cu());
        else
            CUCORE_CALL(cuGraphEventWaitNodeSetEvent, cu(), event.cu());
    }
    // The replaced event stays held: graphs instantiated before this still use it.
    definition_->attachments().keep(Ref<Object>(&event));
    event.note_graph_use(type == CU_GRAPH_NODE_TYPE_EVENT_RECORD);
}

namespace {
// `graph` and the graphs of its child graph nodes, with their nodes (a child graph has no conditional nodes).
void collect_graph(CUgraph graph, std::vector<CUgraph> &graphs, std::vector<CUgraphNode> &nodes) {
    graphs.push_back(graph);
    const std::vector<CUgraphNode> own =
        node_list([graph](CUgraphNode *out, size_t *count) { CUCORE_CALL(cuGraphGetNodes, graph, out, count); });
    for (CUgraphNode n : own) {
        nodes.push_back(n);
        CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
        CUCORE_CALL(cuGraphNodeGetType, n, &type);
        if (type != CU_GRAPH_NODE_TYPE_GRAPH) continue;
        CUgraph nested = nullptr;
        CUCORE_CALL(cuGraphChildGraphNodeGetGraph, n, &nested);
        collect_graph(nested, graphs, nodes);
    }
}
}  // namespace

void GraphNode::set_child_graph(GraphDefinition &child) {
    require_type(CU_GRAPH_NODE_TYPE_GRAPH, "setting a child graph");
    child.check_live("child");
    // The driver destroys the node's graph: a child in this hierarchy (that graph, a body, an
    // ancestor) would be cloned from, or into, what goes.
    if (&child.hierarchy() == &definition_->hierarchy())
        throw_invalid_argument("argument 'child' belongs to the node's own graph hierarchy; pass an independent "
                               "definition (a clone of it, for instance)");
    CUgraphNodeParams params{};
    params.type = CU_GRAPH_NODE_TYPE_GRAPH;
    params.graph.graph = child.cu();  // ownership 0: the driver clones it
    // The driver destroys the node's graph: its handles (definitions, nodes) must answer INVALID_STATE after.
    CUgraph old = nullptr;
    CUCORE_CALL(cuGraphChildGraphNodeGetGraph, cu(), &old);
    std::vector<CUgraph> old_graphs;
    std::vector<CUgraphNode> old_nodes;
    collect_graph(old, old_graphs, old_nodes);
    {
        ScopedContext bind(definition_->context().cu());
        CUCORE_CALL(cuGraphNodeSetParams, cu(), &params);
    }
    for (CUgraph g : old_graphs) graph_registry().destroyed(g);
    for (CUgraphNode n : old_nodes) node_registry().destroyed(n);
    definition_->attachments().keep_attachments(child.attachments_ref());
}

void GraphNode::alloc_info(uint64_t &address, uint64_t &size) {
    require_type(CU_GRAPH_NODE_TYPE_MEM_ALLOC, "reading an allocation");
    CUDA_MEM_ALLOC_NODE_PARAMS params{};
    CUCORE_CALL(cuGraphMemAllocNodeGetParams, cu(), &params);
    address = params.dptr;
    size = params.bytesize;
}

std::vector<Ref<GraphDefinition>> GraphNode::bodies() {
    const CUgraphNodeType type = driver_type();
    std::vector<Ref<GraphDefinition>> result;
    if (type == CU_GRAPH_NODE_TYPE_GRAPH) {
        CUgraph child = nullptr;
        CUCORE_CALL(cuGraphChildGraphNodeGetGraph, cu(), &child);
        result.push_back(GraphDefinition::borrow(*definition_, child));
        return result;
    }
    if (type != CU_GRAPH_NODE_TYPE_CONDITIONAL)
        throw_invalid_argument("argument 'node' is " + node_label(type) +
                               "; only conditional and child graph nodes have bodies");
    std::vector<CUgraph> graphs;
    {
        GraphHierarchy &hierarchy = definition_->hierarchy();
        std::lock_guard<std::mutex> lock(hierarchy.mutex);
        auto it = hierarchy.bodies.find(node_);
        if (it == hierarchy.bodies.end())
            throw Error(CUCORE_ERROR_NOT_SUPPORTED,
                        "the bodies of a conditional node are known only for nodes this library added to this "
                        "definition (not for clones' or foreign nodes)");
        graphs = it->second;
    }
    for (CUgraph body : graphs) result.push_back(GraphDefinition::borrow(*definition_, body));
    return result;
}

}  // namespace cucore::core
