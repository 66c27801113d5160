// Graph definitions: graphs, nodes (a type and a copy of their parameters),
// edges, clones, conditions, user objects, the DOT output and graph memory.
// Executables are graph_exec.cpp; stream capture is capture.cpp.
#include "graphs.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "entry_points.hpp"

namespace fake::detail {

GraphState &graphs() {
    static GraphState *const g = new GraphState;  // never destroyed, like the state
    return *g;
}

Graph *as_graph(CUgraph g) {
    auto *graph = reinterpret_cast<Graph *>(g);
    return graphs().graphs.count(graph) ? graph : nullptr;
}
Node *as_node(CUgraphNode n) {
    auto *node = reinterpret_cast<Node *>(n);
    return graphs().nodes.count(node) ? node : nullptr;
}
Exec *as_exec(CUgraphExec e) {
    auto *exec = reinterpret_cast<Exec *>(e);
    return graphs().execs.count(exec) ? exec : nullptr;
}
Condition *condition(CUgraphConditionalHandle handle) {
    auto it = graphs().conditions.find(handle);
    return it == graphs().conditions.end() ? nullptr : &it->second;
}

Graph *new_graph() {
    GraphState &g = graphs();
    g.graph_storage.push_back(std::make_unique<Graph>());
    g.graphs.insert(g.graph_storage.back().get());
    return g.graph_storage.back().get();
}

void forget_graphs() {
    GraphState &g = graphs();
    g.graph_storage.clear();
    g.graphs.clear();
    g.node_storage.clear();
    g.nodes.clear();
    g.exec_storage.clear();
    g.execs.clear();
    g.user_object_storage.clear();
    g.user_objects.clear();
    g.conditions.clear();
    g.capture_storage.clear();
    g.memory.clear();
    g.destructors.clear();
    g.run_errors = 0;
}

namespace {

Node *new_node(Graph &graph) {
    GraphState &g = graphs();
    g.node_storage.push_back(std::make_unique<Node>());
    Node *node = g.node_storage.back().get();
    node->graph = &graph;
    g.nodes.insert(node);
    graph.nodes.push_back(node);
    return node;
}

// Whether `graph` is a conditional node's body or nested in one (the driver takes
// kernel, empty, child graph, memset, memcpy, conditional and host nodes there only).
bool in_conditional_body(const Graph &graph) {
    for (const Graph *g = &graph; g->owner; g = g->owner->graph)
        if (g->owner->params.type == CU_GRAPH_NODE_TYPE_CONDITIONAL) return true;
    return false;
}

// Whether `handle` was created on `graph` or on a graph it is nested in.
// Whether a conditional node of `graph` (or of its bodies and children) already uses `handle`: the driver
// ties a condition to one conditional node (the H100 server's refused a second with CUDA_ERROR_INVALID_VALUE).
bool condition_used(const Graph &graph, CUgraphConditionalHandle handle) {
    for (const Node *n : graph.nodes) {
        if (n->params.type == CU_GRAPH_NODE_TYPE_CONDITIONAL && n->params.condition == handle) return true;
        for (const Graph *body : n->bodies)
            if (condition_used(*body, handle)) return true;
        if (n->child && condition_used(*n->child, handle)) return true;
    }
    return false;
}

bool condition_reaches(const Condition &c, const Graph &graph) {
    for (const Graph *g = &graph; g; g = g->owner ? g->owner->graph : nullptr)
        if (c.graph == g) return true;
    return false;
}

bool valid_edge(const Node &from, const CUgraphEdgeData &e) {
    for (unsigned char r : e.reserved)
        if (r) return false;
    if (e.to_port != 0) return false;  // no node type defines input ports
    const bool kernel = from.params.type == CU_GRAPH_NODE_TYPE_KERNEL;
    if (e.from_port != CU_GRAPH_DEPENDENCY_TYPE_DEFAULT && !kernel) return false;
    if (e.from_port > CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER) return false;
    return e.type == CU_GRAPH_DEPENDENCY_TYPE_DEFAULT || (kernel && e.type == CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC);
}

bool default_edge(const CUgraphEdgeData &e) { return e.from_port == 0 && e.to_port == 0 && e.type == 0; }

// A graph allocation: its address is reserved now and lives from the node's run to its free.
CUresult reserve_graph_memory(NodeParams &p) {
    const CUmemPoolProps &props = p.alloc.poolProps;
    if (p.alloc.bytesize == 0 || props.allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
        props.location.type != CU_MEM_LOCATION_TYPE_DEVICE || props.location.id < 0 ||
        props.location.id >= state().devices)
        return CUDA_ERROR_INVALID_VALUE;
    if (p.access.size() > static_cast<size_t>(state().devices)) return CUDA_ERROR_INVALID_VALUE;
    for (const CUmemAccessDesc &d : p.access)
        if (!valid_device_location(d.location)) return CUDA_ERROR_INVALID_VALUE;
    const CUdeviceptr base = new_allocation(p.alloc.bytesize, MemoryKind::device, props.location.id, nullptr);
    if (!base) return CUDA_ERROR_OUT_OF_MEMORY;
    Allocation &a = state().allocations[base];
    a.graph = true;
    a.state = AllocationState::freed;  // not usable before the node runs
    p.alloc.dptr = base;
    return CUDA_SUCCESS;
}

}  // namespace

CUresult kernel_params(const CUDA_KERNEL_NODE_PARAMS_v2 &in, NodeParams &out) {
    CUfunction function = in.func;
    if (!function) {  // a kernel, in ctx (null: the current context)
        if (!in.kern || !kernel_known(in.kern)) return CUDA_ERROR_INVALID_VALUE;
        const CUcontext context = in.ctx ? in.ctx : t_current;
        if (!as_context(context)) return CUDA_ERROR_INVALID_CONTEXT;
        function = function_handle(in.kern, context);
    }
    CUkernel kernel = nullptr;
    CUcontext context = nullptr;
    if (!function_info(function, kernel, context)) return CUDA_ERROR_INVALID_VALUE;
    if (in.extra || !in.gridDimX || !in.gridDimY || !in.gridDimZ || !in.blockDimX || !in.blockDimY || !in.blockDimZ)
        return CUDA_ERROR_INVALID_VALUE;  // the fake takes kernelParams only
    const std::vector<size_t> &sizes = *param_sizes(function);
    if (!sizes.empty() && !in.kernelParams) return CUDA_ERROR_INVALID_VALUE;
    out.type = CU_GRAPH_NODE_TYPE_KERNEL;
    out.kernel = in;
    out.kernel.func = function;
    out.kernel.ctx = context;
    out.kernel.kernelParams = nullptr;
    out.args.clear();
    for (size_t i = 0; i < sizes.size(); ++i) {
        const auto *bytes = static_cast<const unsigned char *>(in.kernelParams[i]);
        out.args.emplace_back(bytes, bytes + sizes[i]);
    }
    return CUDA_SUCCESS;
}

CUresult check_params(NodeParams &p) {
    switch (p.type) {
        case CU_GRAPH_NODE_TYPE_KERNEL: {
            CUkernel kernel;
            CUcontext context;
            return function_info(p.kernel.func, kernel, context) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
        }
        case CU_GRAPH_NODE_TYPE_MEMCPY:
            if (!as_context(p.context)) p.context = t_current;
            return copy_3d(nullptr, &p.copy, nullptr, Copy3D::check);
        case CU_GRAPH_NODE_TYPE_MEMSET:
            if (!as_context(p.context)) p.context = t_current;
            return fill_rows(p.memset, false);
        case CU_GRAPH_NODE_TYPE_HOST: return p.host.fn ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
        case CU_GRAPH_NODE_TYPE_EMPTY:
        case CU_GRAPH_NODE_TYPE_GRAPH:
        case CU_GRAPH_NODE_TYPE_CONDITIONAL: return CUDA_SUCCESS;  // add_node checks these
        case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
        case CU_GRAPH_NODE_TYPE_EVENT_RECORD: return as_event(p.event) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
        case CU_GRAPH_NODE_TYPE_MEM_ALLOC: return CUDA_SUCCESS;  // reserved once the rest is checked
        case CU_GRAPH_NODE_TYPE_MEM_FREE: {
            auto it = state().allocations.find(p.free_address);
            return it != state().allocations.end() && it->second.graph ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
        }
        default: return CUDA_ERROR_NOT_SUPPORTED;  // external semaphores, batch memory operations
    }
}

Node *add_node(Graph &graph, NodeParams params, const CUgraphNode *dependencies, const CUgraphEdgeData *edges,
               size_t count, CUresult &error, Graph *child, bool move_child) {
    error = CUDA_ERROR_INVALID_VALUE;
    if (count && !dependencies) return nullptr;
    std::vector<Node *> from;
    for (size_t i = 0; i < count; ++i) {
        Node *d = as_node(dependencies[i]);
        if (!d || d->graph != &graph || std::count(from.begin(), from.end(), d)) return nullptr;
        if (edges && !valid_edge(*d, edges[i])) return nullptr;
        from.push_back(d);
    }
    const CUgraphNodeType type = params.type;
    if (in_conditional_body(graph)) {
        // Host nodes too: the H100 server's driver (CUDA 13) takes them in a body.
        const bool allowed = type == CU_GRAPH_NODE_TYPE_KERNEL || type == CU_GRAPH_NODE_TYPE_EMPTY ||
                             type == CU_GRAPH_NODE_TYPE_GRAPH || type == CU_GRAPH_NODE_TYPE_MEMSET ||
                             type == CU_GRAPH_NODE_TYPE_MEMCPY || type == CU_GRAPH_NODE_TYPE_CONDITIONAL ||
                             type == CU_GRAPH_NODE_TYPE_HOST;
        if (!allowed) {
            error = CUDA_ERROR_NOT_SUPPORTED;
            return nullptr;
        }
    }
    if (type == CU_GRAPH_NODE_TYPE_GRAPH) {
        if (!child || contains(*child, CU_GRAPH_NODE_TYPE_CONDITIONAL)) return nullptr;  // the driver's restriction
        // A copied child may hold no memory nodes (a moved one may).
        if (!move_child && (contains(*child, CU_GRAPH_NODE_TYPE_MEM_ALLOC) ||
                            contains(*child, CU_GRAPH_NODE_TYPE_MEM_FREE)))
            return nullptr;
        for (const Graph *g = &graph; g; g = g->owner ? g->owner->graph : nullptr)
            if (g == child) return nullptr;  // into itself
        if (move_child && (child->owner || !child->top_level || child->instantiations)) return nullptr;
    }
    if (type == CU_GRAPH_NODE_TYPE_CONDITIONAL) {
        const Condition *c = condition(params.condition);
        const int kind = value_of(params.conditional_type);
        const unsigned size = params.conditional_size;
        if (!c || !condition_reaches(*c, graph) || condition_used(*c->graph, params.condition)) return nullptr;
        if (kind == CU_GRAPH_COND_TYPE_IF ? (size < 1 || size > 2)
            : kind == CU_GRAPH_COND_TYPE_WHILE ? size != 1
            : kind == CU_GRAPH_COND_TYPE_SWITCH ? size < 1
                                                 : true)
            return nullptr;
    }
    error = check_params(params);
    if (error != CUDA_SUCCESS) return nullptr;
    if (type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
        error = reserve_graph_memory(params);
        if (error != CUDA_SUCCESS) return nullptr;
    }
    Node *node = new_node(graph);
    node->params = std::move(params);
    node->dependencies = from;
    for (size_t i = 0; i < count; ++i) node->edges.push_back(edges ? edges[i] : CUgraphEdgeData{});
    if (type == CU_GRAPH_NODE_TYPE_GRAPH) {
        node->child = move_child ? child : copy_graph(*child);
        node->child->owner = node;
        node->child->top_level = false;
    }
    for (unsigned i = 0; type == CU_GRAPH_NODE_TYPE_CONDITIONAL && i < node->params.conditional_size; ++i) {
        Graph *body = new_graph();
        body->owner = node;
        node->bodies.push_back(body);
        node->body_handles.push_back(handle_of(body));
    }
    error = CUDA_SUCCESS;
    return node;
}

Graph *copy_graph(const Graph &from, Graph *top) {
    Graph *to = new_graph();
    to->source = const_cast<Graph *>(&from);
    if (!top) top = to;
    to->user_objects = from.user_objects;
    for (auto &[object, count] : to->user_objects) object->references += count;
    std::map<const Node *, Node *> copy_of;
    for (const Node *original : from.nodes) {
        Node *n = new_node(*to);
        n->params = original->params;
        n->edges = original->edges;
        n->enabled = original->enabled;
        n->source = const_cast<Node *>(original);
        if (original->child) {
            n->child = copy_graph(*original->child, top);
            n->child->owner = n;
        }
        for (const Graph *body : original->bodies) {
            Graph *b = copy_graph(*body, top);
            b->owner = n;
            n->bodies.push_back(b);
            n->body_handles.push_back(handle_of(b));
        }
        copy_of[original] = n;
        top->copies[const_cast<Node *>(original)] = n;
    }
    for (const Node *original : from.nodes)
        for (const Node *d : original->dependencies) copy_of[original]->dependencies.push_back(copy_of[d]);
    return to;
}

namespace {
void drop_node(Node &node) {
    node.destroyed = true;
    graphs().nodes.erase(&node);
    if (node.child) destroy_graph(*node.child);
    for (Graph *body : node.bodies) destroy_graph(*body);
}
}  // namespace

void destroy_graph(Graph &graph) {
    if (graph.destroyed) return;
    graph.destroyed = true;
    graphs().graphs.erase(&graph);
    for (Node *node : graph.nodes) drop_node(*node);
    for (auto &[object, count] : graph.user_objects) release_user_object(*object, count);
    graph.user_objects.clear();
}

void destroy_node(Node &node) {
    Graph &graph = *node.graph;
    graph.nodes.erase(std::find(graph.nodes.begin(), graph.nodes.end(), &node));
    for (Node *other : graph.nodes)
        for (size_t i = other->dependencies.size(); i-- > 0;)
            if (other->dependencies[i] == &node) {
                other->dependencies.erase(other->dependencies.begin() + static_cast<long>(i));
                other->edges.erase(other->edges.begin() + static_cast<long>(i));
            }
    drop_node(node);
}

void release_user_object(UserObject &object, unsigned count) {
    object.references -= std::min(count, object.references);
    if (object.references == 0 && graphs().user_objects.erase(&object))
        graphs().destructors.emplace_back(object.destroy, object.pointer);
}

void run_destructors(Lock &lock) {
    while (!graphs().destructors.empty()) {
        std::vector<std::pair<CUhostFn, void *>> due;
        due.swap(graphs().destructors);
        lock.unlock();
        for (auto &[destroy, pointer] : due) destroy(pointer);
        lock.lock();
    }
}

bool contains(const Graph &graph, CUgraphNodeType type) {
    for (const Node *node : graph.nodes) {
        if (node->params.type == type) return true;
        if (node->child && contains(*node->child, type)) return true;
        for (const Graph *body : node->bodies)
            if (contains(*body, type)) return true;
    }
    return false;
}

void graph_memory_changed(int device, size_t size, bool allocated) {
    GraphMemory &m = graphs().memory[device];
    if (!allocated) {
        m.used -= std::min<uint64_t>(size, m.used);
        return;
    }
    m.used += size;
    m.used_high = std::max(m.used_high, m.used);
    m.reserved = std::max(m.reserved, m.used);  // kept until trimmed
    m.reserved_high = std::max(m.reserved_high, m.reserved);
}

namespace {

// Fills a caller's array of `capacity` entries (null: count only) from `items`, the rest with
// nulls, and sets the count the driver reports (the number there is).
template <class T, class Out>
void fill_out(const std::vector<T> &items, Out *out, size_t *count) {
    if (out)
        for (size_t i = 0; i < *count; ++i) out[i] = i < items.size() ? items[i] : Out{};
    *count = items.size();
}

std::vector<CUgraphNode> handles(const std::vector<Node *> &nodes) {
    std::vector<CUgraphNode> out;
    for (Node *n : nodes) out.push_back(handle_of(n));
    return out;
}

// A node's dependents (nodes of its graph with an edge from it), with each edge's data.
void dependents_of(const Node &node, std::vector<Node *> &to, std::vector<CUgraphEdgeData> &data) {
    for (Node *other : node.graph->nodes)
        for (size_t i = 0; i < other->dependencies.size(); ++i)
            if (other->dependencies[i] == &node) {
                to.push_back(other);
                data.push_back(other->edges[i]);
            }
}

// Nodes and their edge data out of cuGraphNodeGetDependencies/DependentNodes.
CUresult node_list(const std::vector<Node *> &nodes, const std::vector<CUgraphEdgeData> &data, CUgraphNode *out,
                   CUgraphEdgeData *edge_out, size_t *count) {
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    const size_t capacity = *count;
    fill_out(handles(nodes), out, count);
    if (out && edge_out)
        for (size_t i = 0; i < capacity; ++i) edge_out[i] = i < data.size() ? data[i] : CUgraphEdgeData{};
    if (out && !edge_out && !std::all_of(data.begin(), data.end(), default_edge)) return CUDA_ERROR_LOSSY_QUERY;
    return CUDA_SUCCESS;
}

CUresult add_typed(CUgraphNode *out, CUgraph graph, const CUgraphNode *dependencies, size_t count, NodeParams params,
                   Node **added = nullptr) {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    Graph *g = as_graph(graph);
    if (!g) return CUDA_ERROR_INVALID_VALUE;
    CUresult error = CUDA_SUCCESS;
    Node *node = add_node(*g, std::move(params), dependencies, nullptr, count, error);
    if (!node) return error;
    *out = handle_of(node);
    if (added) *added = node;
    return CUDA_SUCCESS;
}

// A node of `type`, or null.
Node *typed(CUgraphNode n, CUgraphNodeType type) {
    Node *node = as_node(n);
    return node && node->params.type == type ? node : nullptr;
}

}  // namespace

CUresult f_cuGraphCreate(CUgraph *graph, unsigned flags) {
    if (!graph || flags) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Graph *g = new_graph();
    g->top_level = true;
    *graph = handle_of(g);
    return CUDA_SUCCESS;
}
CUresult f_cuGraphDestroy(CUgraph graph) {
    Lock lock(state().mutex);
    Graph *g = as_graph(graph);
    if (!g || g->owner) return CUDA_ERROR_INVALID_VALUE;  // a child graph or a body goes with its node
    destroy_graph(*g);
    run_destructors(lock);
    return CUDA_SUCCESS;
}
CUresult f_cuGraphClone(CUgraph *clone, CUgraph original) {
    if (!clone) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Graph *g = as_graph(original);
    if (!g) return CUDA_ERROR_INVALID_VALUE;
    if (contains(*g, CU_GRAPH_NODE_TYPE_CONDITIONAL)) return CUDA_ERROR_NOT_SUPPORTED;  // "cannot be cloned"
    Graph *copy = copy_graph(*g);
    copy->top_level = true;
    *clone = handle_of(copy);
    return CUDA_SUCCESS;
}
CUresult f_cuGraphNodeFindInClone(CUgraphNode *node, CUgraphNode original, CUgraph clone) {
    if (!node) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Graph *g = as_graph(clone);
    Node *n = as_node(original);
    if (!g || !n) return CUDA_ERROR_INVALID_VALUE;
    auto it = g->copies.find(n);
    if (it == g->copies.end() || it->second->destroyed) return CUDA_ERROR_INVALID_VALUE;
    *node = handle_of(it->second);
    return CUDA_SUCCESS;
}

CUresult f_cuGraphAddNode(CUgraphNode *out, CUgraph graph, const CUgraphNode *dependencies,
                          const CUgraphEdgeData *edges, size_t count, CUgraphNodeParams *in) {
    if (!out || !in) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Graph *g = as_graph(graph);
    if (!g) return CUDA_ERROR_INVALID_VALUE;
    NodeParams p;
    Graph *child = nullptr;
    bool move_child = false;
    const int type = value_of(in->type);
    switch (type) {
        case CU_GRAPH_NODE_TYPE_KERNEL: {
            const CUDA_KERNEL_NODE_PARAMS_v3 &k = in->kernel;
            const CUDA_KERNEL_NODE_PARAMS_v2 v2{k.func,      k.gridDimX,  k.gridDimY,      k.gridDimZ,
                                                k.blockDimX, k.blockDimY, k.blockDimZ,     k.sharedMemBytes,
                                                k.kernelParams, k.extra,  k.kern,          k.ctx};
            if (const CUresult error = kernel_params(v2, p); error != CUDA_SUCCESS) return error;
            break;
        }
        case CU_GRAPH_NODE_TYPE_MEMCPY:
            p.copy = in->memcpy.copyParams;
            p.context = in->memcpy.copyCtx;
            break;
        case CU_GRAPH_NODE_TYPE_MEMSET: {
            const CUDA_MEMSET_NODE_PARAMS_v2 &m = in->memset;
            p.memset = {m.dst, m.pitch, m.value, m.elementSize, m.width, m.height};
            p.context = m.ctx;
            break;
        }
        case CU_GRAPH_NODE_TYPE_HOST: p.host = {in->host.fn, in->host.userData}; break;
        case CU_GRAPH_NODE_TYPE_GRAPH:
            child = as_graph(in->graph.graph);
            move_child = value_of(in->graph.ownership) == CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE;
            if (!child || (!move_child && value_of(in->graph.ownership) != CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE))
                return CUDA_ERROR_INVALID_VALUE;
            break;
        case CU_GRAPH_NODE_TYPE_EMPTY: break;
        case CU_GRAPH_NODE_TYPE_WAIT_EVENT: p.event = in->eventWait.event; break;
        case CU_GRAPH_NODE_TYPE_EVENT_RECORD: p.event = in->eventRecord.event; break;
        case CU_GRAPH_NODE_TYPE_MEM_ALLOC: {
            const CUDA_MEM_ALLOC_NODE_PARAMS_v2 &a = in->alloc;
            if (a.accessDescCount && !a.accessDescs) return CUDA_ERROR_INVALID_VALUE;
            p.alloc = {a.poolProps, nullptr, 0, a.bytesize, 0};
            p.access.assign(a.accessDescs, a.accessDescs + a.accessDescCount);
            break;
        }
        case CU_GRAPH_NODE_TYPE_MEM_FREE: p.free_address = in->free.dptr; break;
        case CU_GRAPH_NODE_TYPE_CONDITIONAL:
            p.condition = in->conditional.handle;
            // Copied as an int: checked by add_node before it is read as the enum.
            std::memcpy(&p.conditional_type, &in->conditional.type, sizeof(int));
            p.conditional_size = in->conditional.size;
            break;
        default: return CUDA_ERROR_NOT_SUPPORTED;  // external semaphores, batch memory operations: not modelled
    }
    p.type = static_cast<CUgraphNodeType>(type);
    CUresult error = CUDA_SUCCESS;
    Node *node = add_node(*g, std::move(p), dependencies, edges, count, error, child, move_child);
    if (!node) return error;
    if (node->params.type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) in->alloc.dptr = node->params.alloc.dptr;
    if (node->params.type == CU_GRAPH_NODE_TYPE_CONDITIONAL) in->conditional.phGraph_out = node->body_handles.data();
    *out = handle_of(node);
    return CUDA_SUCCESS;
}
CUresult f_cuGraphAddKernelNode(CUgraphNode *out, CUgraph graph, const CUgraphNode *dependencies, size_t count,
                                const CUDA_KERNEL_NODE_PARAMS_v2 *params) {
    if (!params) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    NodeParams p;
    if (const CUresult error = kernel_params(*params, p); error != CUDA_SUCCESS) return error;
    return add_typed(out, graph, dependencies, count, std::move(p));
}
CUresult f_cuGraphAddMemcpyNode(CUgraphNode *out, CUgraph graph, const CUgraphNode *dependencies, size_t count,
                                const CUDA_MEMCPY3D *copy, CUcontext context) {
    if (!copy) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    NodeParams p;
    p.type = CU_GRAPH_NODE_TYPE_MEMCPY;
    p.copy = *copy;
    p.context = context;
    return add_typed(out, graph, dependencies, count, std::move(p));
}
CUresult f_cuGraphAddMemsetNode(CUgraphNode *out, CUgraph graph, const CUgraphNode *dependencies, size_t count,
                                const CUDA_MEMSET_NODE_PARAMS *memset, CUcontext context) {
    if (!memset) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    NodeParams p;
    p.type = CU_GRAPH_NODE_TYPE_MEMSET;
    p.memset = *memset;
    p.context = context;
    return add_typed(out, graph, dependencies, count, std::move(p));
}
CUresult f_cuGraphAddHostNode(CUgraphNode *out, CUgraph graph, const CUgraphNode *dependencies, size_t count,
                              const CUDA_HOST_NODE_PARAMS *host) {
    if (!host) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    NodeParams p;
    p.type = CU_GRAPH_NODE_TYPE_HOST;
    p.host = *host;
    return add_typed(out, graph, dependencies, count, std::move(p));
}
CUresult f_cuGraphAddChildGraphNode(CUgraphNode *out, CUgraph graph, const CUgraphNode *dependencies, size_t count,
                                    CUgraph child) {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Graph *g = as_graph(graph), *c = as_graph(child);
    if (!g || !c) return CUDA_ERROR_INVALID_VALUE;
    NodeParams p;
    p.type = CU_GRAPH_NODE_TYPE_GRAPH;
    CUresult error = CUDA_SUCCESS;
    Node *node = add_node(*g, std::move(p), dependencies, nullptr, count, error, c, false);
    if (!node) return error;
    *out = handle_of(node);
    return CUDA_SUCCESS;
}
CUresult f_cuGraphAddEmptyNode(CUgraphNode *out, CUgraph graph, const CUgraphNode *dependencies, size_t count) {
    Lock lock(state().mutex);
    return add_typed(out, graph, dependencies, count, NodeParams{});
}
CUresult f_cuGraphAddEventRecordNode(CUgraphNode *out, CUgraph graph, const CUgraphNode *dependencies, size_t count,
                                     CUevent event) {
    Lock lock(state().mutex);
    NodeParams p;
    p.type = CU_GRAPH_NODE_TYPE_EVENT_RECORD;
    p.event = event;
    return add_typed(out, graph, dependencies, count, std::move(p));
}
CUresult f_cuGraphAddEventWaitNode(CUgraphNode *out, CUgraph graph, const CUgraphNode *dependencies, size_t count,
                                   CUevent event) {
    Lock lock(state().mutex);
    NodeParams p;
    p.type = CU_GRAPH_NODE_TYPE_WAIT_EVENT;
    p.event = event;
    return add_typed(out, graph, dependencies, count, std::move(p));
}
CUresult f_cuGraphAddMemAllocNode(CUgraphNode *out, CUgraph graph, const CUgraphNode *dependencies, size_t count,
                                  CUDA_MEM_ALLOC_NODE_PARAMS *params) {
    if (!params || (params->accessDescCount && !params->accessDescs)) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    NodeParams p;
    p.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
    p.alloc = {params->poolProps, nullptr, 0, params->bytesize, 0};
    p.access.assign(params->accessDescs, params->accessDescs + params->accessDescCount);
    Node *node = nullptr;
    const CUresult result = add_typed(out, graph, dependencies, count, std::move(p), &node);
    if (result == CUDA_SUCCESS) params->dptr = node->params.alloc.dptr;
    return result;
}
CUresult f_cuGraphAddMemFreeNode(CUgraphNode *out, CUgraph graph, const CUgraphNode *dependencies, size_t count,
                                 CUdeviceptr address) {
    Lock lock(state().mutex);
    NodeParams p;
    p.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
    p.free_address = address;
    return add_typed(out, graph, dependencies, count, std::move(p));
}
CUresult f_cuGraphConditionalHandleCreate(CUgraphConditionalHandle *handle, CUgraph graph, CUcontext context,
                                          unsigned default_value, unsigned flags) {
    if (!handle || (flags & ~CU_GRAPH_COND_ASSIGN_DEFAULT)) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Graph *g = as_graph(graph);
    if (!g) return CUDA_ERROR_INVALID_VALUE;
    if (!context) context = t_current;
    if (!as_context(context)) return CUDA_ERROR_INVALID_CONTEXT;
    const CUgraphConditionalHandle h = graphs().next_condition++;
    graphs().conditions[h] = Condition{g, context, default_value, flags, default_value};
    *handle = h;
    return CUDA_SUCCESS;
}

CUresult f_cuGraphNodeGetType(CUgraphNode node, CUgraphNodeType *type) {
    if (!type) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Node *n = as_node(node);
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    *type = n->params.type;
    return CUDA_SUCCESS;
}
CUresult f_cuGraphGetNodes(CUgraph graph, CUgraphNode *nodes, size_t *count) {
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Graph *g = as_graph(graph);
    if (!g) return CUDA_ERROR_INVALID_VALUE;
    fill_out(handles(g->nodes), nodes, count);
    return CUDA_SUCCESS;
}
CUresult f_cuGraphGetEdges(CUgraph graph, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *data, size_t *count) {
    if (!count || (!from != !to)) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Graph *g = as_graph(graph);
    if (!g) return CUDA_ERROR_INVALID_VALUE;
    std::vector<CUgraphNode> froms, tos;
    std::vector<CUgraphEdgeData> edges;
    for (Node *n : g->nodes)
        for (size_t i = 0; i < n->dependencies.size(); ++i) {
            froms.push_back(handle_of(n->dependencies[i]));
            tos.push_back(handle_of(n));
            edges.push_back(n->edges[i]);
        }
    const size_t capacity = *count;
    size_t ignored = capacity;
    fill_out(froms, from, &ignored);
    fill_out(tos, to, count);
    if (from && data)
        for (size_t i = 0; i < capacity; ++i) data[i] = i < edges.size() ? edges[i] : CUgraphEdgeData{};
    if (from && !data && !std::all_of(edges.begin(), edges.end(), default_edge)) return CUDA_ERROR_LOSSY_QUERY;
    return CUDA_SUCCESS;
}
CUresult f_cuGraphNodeGetDependencies(CUgraphNode node, CUgraphNode *dependencies, CUgraphEdgeData *edges,
                                      size_t *count) {
    Lock lock(state().mutex);
    Node *n = as_node(node);
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    return node_list(n->dependencies, n->edges, dependencies, edges, count);
}
CUresult f_cuGraphNodeGetDependentNodes(CUgraphNode node, CUgraphNode *dependents, CUgraphEdgeData *edges,
                                        size_t *count) {
    Lock lock(state().mutex);
    Node *n = as_node(node);
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    std::vector<Node *> to;
    std::vector<CUgraphEdgeData> data;
    dependents_of(*n, to, data);
    return node_list(to, data, dependents, edges, count);
}
CUresult f_cuGraphAddDependencies(CUgraph graph, const CUgraphNode *from, const CUgraphNode *to,
                                  const CUgraphEdgeData *edges, size_t count) {
    if (count && (!from || !to)) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Graph *g = as_graph(graph);
    if (!g) return CUDA_ERROR_INVALID_VALUE;
    // All checked first: nothing is added when one is refused.
    std::vector<std::pair<Node *, Node *>> adding;
    for (size_t i = 0; i < count; ++i) {
        Node *a = as_node(from[i]), *b = as_node(to[i]);
        if (!a || !b || a == b || a->graph != g || b->graph != g) return CUDA_ERROR_INVALID_VALUE;
        if (std::count(b->dependencies.begin(), b->dependencies.end(), a) ||
            std::count(adding.begin(), adding.end(), std::make_pair(a, b)))
            return CUDA_ERROR_INVALID_VALUE;  // the edge exists
        if (edges && !valid_edge(*a, edges[i])) return CUDA_ERROR_INVALID_VALUE;
        adding.emplace_back(a, b);
    }
    for (size_t i = 0; i < count; ++i) {
        adding[i].second->dependencies.push_back(adding[i].first);
        adding[i].second->edges.push_back(edges ? edges[i] : CUgraphEdgeData{});
    }
    return CUDA_SUCCESS;
}
CUresult f_cuGraphRemoveDependencies(CUgraph graph, const CUgraphNode *from, const CUgraphNode *to,
                                     const CUgraphEdgeData *edges, size_t count) {
    if (count && (!from || !to)) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Graph *g = as_graph(graph);
    if (!g) return CUDA_ERROR_INVALID_VALUE;
    auto find = [&](size_t i) -> long {
        Node *a = as_node(from[i]), *b = as_node(to[i]);
        if (!a || !b || a->graph != g || b->graph != g) return -1;
        for (size_t k = 0; k < b->dependencies.size(); ++k)
            if (b->dependencies[k] == a &&
                (!edges || std::memcmp(&b->edges[k], &edges[i], sizeof(CUgraphEdgeData)) == 0))
                return static_cast<long>(k);
        return -1;
    };
    for (size_t i = 0; i < count; ++i)
        if (find(i) < 0) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; ++i) {
        const long k = find(i);
        if (k < 0) continue;  // the same edge named twice
        Node *b = as_node(to[i]);
        b->dependencies.erase(b->dependencies.begin() + k);
        b->edges.erase(b->edges.begin() + k);
    }
    return CUDA_SUCCESS;
}
CUresult f_cuGraphDestroyNode(CUgraphNode node) {
    Lock lock(state().mutex);
    Node *n = as_node(node);
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    destroy_node(*n);
    return CUDA_SUCCESS;
}

namespace {

const char *type_name(CUgraphNodeType type) {
    switch (type) {
        case CU_GRAPH_NODE_TYPE_KERNEL: return "kernel";
        case CU_GRAPH_NODE_TYPE_MEMCPY: return "memcpy";
        case CU_GRAPH_NODE_TYPE_MEMSET: return "memset";
        case CU_GRAPH_NODE_TYPE_HOST: return "host";
        case CU_GRAPH_NODE_TYPE_GRAPH: return "graph";
        case CU_GRAPH_NODE_TYPE_EMPTY: return "empty";
        case CU_GRAPH_NODE_TYPE_WAIT_EVENT: return "event_wait";
        case CU_GRAPH_NODE_TYPE_EVENT_RECORD: return "event_record";
        case CU_GRAPH_NODE_TYPE_MEM_ALLOC: return "mem_alloc";
        case CU_GRAPH_NODE_TYPE_MEM_FREE: return "mem_free";
        case CU_GRAPH_NODE_TYPE_CONDITIONAL: return "conditional";
        default: return "unknown";
    }
}

// One graph as a DOT cluster (nested graphs as nested clusters, numbered in order of appearance).
void print_graph(std::string &out, const Graph &graph, const std::string &label, unsigned flags, int &next_id) {
    const int id = next_id++;
    const std::string prefix = "graph_" + std::to_string(id) + "_node_";
    out += "subgraph cluster_" + std::to_string(id) + " {\nlabel=\"" + label + "\" graph[style=\"dashed\"];\n";
    std::map<const Node *, size_t> index;
    for (size_t i = 0; i < graph.nodes.size(); ++i) index[graph.nodes[i]] = i;
    char buffer[256];
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
        const Node &n = *graph.nodes[i];
        const NodeParams &p = n.params;
        std::string text = std::to_string(i) + "\\n" + type_name(p.type);
        const bool verbose = flags & CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE;
        if (p.type == CU_GRAPH_NODE_TYPE_KERNEL) {
            const std::string *name = kernel_name(p.kernel.func);
            std::snprintf(buffer, sizeof buffer, "\\n%s\\n<<<(%u,%u,%u),(%u,%u,%u),%u>>>", name ? name->c_str() : "?",
                          p.kernel.gridDimX, p.kernel.gridDimY, p.kernel.gridDimZ, p.kernel.blockDimX,
                          p.kernel.blockDimY, p.kernel.blockDimZ, p.kernel.sharedMemBytes);
            text += buffer;
        } else if (p.type == CU_GRAPH_NODE_TYPE_CONDITIONAL) {
            const int kind = value_of(p.conditional_type);
            text += kind == CU_GRAPH_COND_TYPE_IF ? "\\nif" : kind == CU_GRAPH_COND_TYPE_WHILE ? "\\nwhile" : "\\nswitch";
            text += "\\nhandle " + std::to_string(p.condition);
        } else if (verbose && p.type == CU_GRAPH_NODE_TYPE_MEMCPY) {
            std::snprintf(buffer, sizeof buffer, "\\n%zu x %zu x %zu bytes", p.copy.WidthInBytes, p.copy.Height,
                          p.copy.Depth);
            text += buffer;
        } else if (verbose && p.type == CU_GRAPH_NODE_TYPE_MEMSET) {
            std::snprintf(buffer, sizeof buffer, "\\nvalue %u, %u-byte elements, %zu x %zu", p.memset.value,
                          p.memset.elementSize, p.memset.width, p.memset.height);
            text += buffer;
        } else if (verbose && p.type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
            std::snprintf(buffer, sizeof buffer, "\\n%zu bytes at 0x%llx", p.alloc.bytesize,
                          static_cast<unsigned long long>(p.alloc.dptr));
            text += buffer;
        } else if (verbose && p.type == CU_GRAPH_NODE_TYPE_MEM_FREE) {
            std::snprintf(buffer, sizeof buffer, "\\n0x%llx", static_cast<unsigned long long>(p.free_address));
            text += buffer;
        }
        out += "\"" + prefix + std::to_string(i) + "\"[style=\"solid\" shape=\"rectangle\" label=\"" + text + "\"];\n";
    }
    for (size_t i = 0; i < graph.nodes.size(); ++i)
        for (const Node *d : graph.nodes[i]->dependencies)
            out += "\"" + prefix + std::to_string(index[d]) + "\" -> \"" + prefix + std::to_string(i) + "\";\n";
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
        const Node &n = *graph.nodes[i];
        if (n.child) print_graph(out, *n.child, "child graph of node " + std::to_string(i), flags, next_id);
        for (size_t b = 0; b < n.bodies.size(); ++b)
            print_graph(out, *n.bodies[b], "body " + std::to_string(b) + " of node " + std::to_string(i), flags,
                        next_id);
    }
    out += "}\n";
}

}  // namespace

// Node labels name the node's type in lower case ("kernel", "memcpy", "host", ...; see type_name),
// kernels with their name and launch shape, conditionals with their kind; VERBOSE adds sizes.
CUresult f_cuGraphDebugDotPrint(CUgraph graph, const char *path, unsigned flags) {
    if (!path) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Graph *g = as_graph(graph);
    if (!g) return CUDA_ERROR_INVALID_VALUE;
    std::string out = "digraph dot {\n";
    int next_id = 1;
    print_graph(out, *g, "graph_1", flags, next_id);
    out += "}\n";
    std::FILE *file = std::fopen(path, "w");
    if (!file) return CUDA_ERROR_OPERATING_SYSTEM;
    const bool written = std::fwrite(out.data(), 1, out.size(), file) == out.size();
    return std::fclose(file) == 0 && written ? CUDA_SUCCESS : CUDA_ERROR_OPERATING_SYSTEM;
}

CUresult f_cuGraphKernelNodeGetParams(CUgraphNode node, CUDA_KERNEL_NODE_PARAMS_v2 *params) {
    if (!params) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Node *n = typed(node, CU_GRAPH_NODE_TYPE_KERNEL);
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    n->arg_pointers.clear();
    for (auto &arg : n->params.args) n->arg_pointers.push_back(arg.data());
    *params = n->params.kernel;
    params->kernelParams = n->arg_pointers.empty() ? nullptr : n->arg_pointers.data();
    return CUDA_SUCCESS;
}
CUresult f_cuGraphKernelNodeSetParams(CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS_v2 *params) {
    if (!params) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Node *n = typed(node, CU_GRAPH_NODE_TYPE_KERNEL);
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    NodeParams p = n->params;
    if (const CUresult error = kernel_params(*params, p); error != CUDA_SUCCESS) return error;
    n->params = std::move(p);
    return CUDA_SUCCESS;
}
CUresult f_cuGraphMemcpyNodeSetParams(CUgraphNode node, const CUDA_MEMCPY3D *copy) {
    if (!copy) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Node *n = typed(node, CU_GRAPH_NODE_TYPE_MEMCPY);
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult error = copy_3d(nullptr, copy, nullptr, Copy3D::check); error != CUDA_SUCCESS) return error;
    n->params.copy = *copy;
    return CUDA_SUCCESS;
}
CUresult f_cuGraphMemsetNodeSetParams(CUgraphNode node, const CUDA_MEMSET_NODE_PARAMS *memset) {
    if (!memset) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Node *n = typed(node, CU_GRAPH_NODE_TYPE_MEMSET);
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult error = fill_rows(*memset, false); error != CUDA_SUCCESS) return error;
    n->params.memset = *memset;
    return CUDA_SUCCESS;
}
CUresult f_cuGraphHostNodeSetParams(CUgraphNode node, const CUDA_HOST_NODE_PARAMS *host) {
    if (!host || !host->fn) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Node *n = typed(node, CU_GRAPH_NODE_TYPE_HOST);
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    n->params.host = *host;
    return CUDA_SUCCESS;
}
CUresult f_cuGraphMemAllocNodeGetParams(CUgraphNode node, CUDA_MEM_ALLOC_NODE_PARAMS *params) {
    if (!params) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Node *n = typed(node, CU_GRAPH_NODE_TYPE_MEM_ALLOC);
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    *params = n->params.alloc;
    params->accessDescs = n->params.access.empty() ? nullptr : n->params.access.data();
    params->accessDescCount = n->params.access.size();
    return CUDA_SUCCESS;
}
CUresult f_cuGraphChildGraphNodeGetGraph(CUgraphNode node, CUgraph *graph) {
    if (!graph) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Node *n = typed(node, CU_GRAPH_NODE_TYPE_GRAPH);
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    *graph = handle_of(n->child);
    return CUDA_SUCCESS;
}

CUresult f_cuUserObjectCreate(CUuserObject *object, void *pointer, CUhostFn destroy, unsigned initial, unsigned flags) {
    if (!object || !destroy || initial == 0 || flags != CU_USER_OBJECT_NO_DESTRUCTOR_SYNC)
        return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    GraphState &g = graphs();
    g.user_object_storage.push_back(std::make_unique<UserObject>(UserObject{pointer, destroy, initial}));
    g.user_objects.insert(g.user_object_storage.back().get());
    *object = reinterpret_cast<CUuserObject>(g.user_object_storage.back().get());
    return CUDA_SUCCESS;
}
CUresult f_cuUserObjectRelease(CUuserObject object, unsigned count) {
    Lock lock(state().mutex);
    auto *o = reinterpret_cast<UserObject *>(object);
    if (!graphs().user_objects.count(o) || count == 0 || count > o->references) return CUDA_ERROR_INVALID_VALUE;
    release_user_object(*o, count);
    run_destructors(lock);
    return CUDA_SUCCESS;
}
// Without CU_GRAPH_USER_OBJECT_MOVE the graph takes new references; with it, the caller's.
CUresult f_cuGraphRetainUserObject(CUgraph graph, CUuserObject object, unsigned count, unsigned flags) {
    if (count == 0 || (flags & ~CU_GRAPH_USER_OBJECT_MOVE)) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Graph *g = as_graph(graph);
    auto *o = reinterpret_cast<UserObject *>(object);
    if (!g || !graphs().user_objects.count(o)) return CUDA_ERROR_INVALID_VALUE;
    if (!(flags & CU_GRAPH_USER_OBJECT_MOVE)) o->references += count;
    g->user_objects[o] += count;
    return CUDA_SUCCESS;
}

CUresult f_cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attribute, void *value) {
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    if (device < 0 || device >= state().devices) return CUDA_ERROR_INVALID_DEVICE;
    const GraphMemory &m = graphs().memory[device];
    cuuint64_t answer = 0;
    switch (value_of(attribute)) {
        case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT: answer = m.used; break;
        case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH: answer = m.used_high; break;
        case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT: answer = m.reserved; break;
        case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH: answer = m.reserved_high; break;
        default: return CUDA_ERROR_INVALID_VALUE;
    }
    *static_cast<cuuint64_t *>(value) = answer;
    return CUDA_SUCCESS;
}
// Only the high watermarks can be set, and only to zero (a reset).
CUresult f_cuDeviceSetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attribute, void *value) {
    if (!value || *static_cast<cuuint64_t *>(value) != 0) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    if (device < 0 || device >= state().devices) return CUDA_ERROR_INVALID_DEVICE;
    GraphMemory &m = graphs().memory[device];
    switch (value_of(attribute)) {
        case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH: m.used_high = 0; break;
        case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH: m.reserved_high = 0; break;
        default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}
// Gives back the reserved memory no graph allocation uses now.
CUresult f_cuDeviceGraphMemTrim(CUdevice device) {
    Lock lock(state().mutex);
    if (device < 0 || device >= state().devices) return CUDA_ERROR_INVALID_DEVICE;
    GraphMemory &m = graphs().memory[device];
    m.reserved = m.used;
    return CUDA_SUCCESS;
}

}  // namespace fake::detail

namespace fake {

bool set_condition(CUgraphConditionalHandle handle, unsigned value) {
    detail::Lock lock(detail::state().mutex);
    detail::Condition *c = detail::condition(handle);
    if (c) c->value = value;
    return c != nullptr;
}

long long condition_value(CUgraphConditionalHandle handle) {
    detail::Lock lock(detail::state().mutex);
    const detail::Condition *c = detail::condition(handle);
    return c ? c->value : -1;
}

long graph_run_errors() {
    detail::Lock lock(detail::state().mutex);
    return detail::graphs().run_errors;
}

}  // namespace fake
