// Executable graphs: instantiation (a deep copy of the graph, scheduled in a
// topological order), launches (the whole graph as one operation of the
// stream, each node doing what the matching stream operation does), upload,
// whole-graph update and the per-node setters of an executable.
#include <algorithm>
#include <cstring>
#include <queue>

#include "entry_points.hpp"
#include "graphs.hpp"

namespace fake::detail {
namespace {

// A while node's most iterations in one launch: past it, the launch stops there and counts a run error.
constexpr long kMaxWhileIterations = 1000000;

// Puts a topological order of `graph` (and of every graph nested in it) in `order`; the earliest
// created node goes first among those ready. False when there is a cycle.
bool schedule(Graph &graph) {
    std::map<const Node *, size_t> index, waiting;
    for (size_t i = 0; i < graph.nodes.size(); ++i) index[graph.nodes[i]] = i;
    std::vector<std::vector<Node *>> dependents(graph.nodes.size());
    std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
        Node *n = graph.nodes[i];
        waiting[n] = n->dependencies.size();
        for (Node *d : n->dependencies) dependents[index[d]].push_back(n);
        if (n->dependencies.empty()) ready.push(i);
    }
    graph.order.clear();
    while (!ready.empty()) {
        Node *n = graph.nodes[ready.top()];
        ready.pop();
        graph.order.push_back(n);
        for (Node *after : dependents[index[n]])
            if (--waiting[after] == 0) ready.push(index[after]);
    }
    if (graph.order.size() != graph.nodes.size()) return false;
    for (Node *n : graph.nodes) {
        if (n->child && !schedule(*n->child)) return false;
        for (Graph *body : n->bodies)
            if (!schedule(*body)) return false;
    }
    return true;
}

void conditions_of(const Graph &graph, std::vector<CUgraphConditionalHandle> &out) {
    for (const Node *n : graph.nodes) {
        if (n->params.type == CU_GRAPH_NODE_TYPE_CONDITIONAL &&
            std::find(out.begin(), out.end(), n->params.condition) == out.end())
            out.push_back(n->params.condition);
        if (n->child) conditions_of(*n->child, out);
        for (const Graph *body : n->bodies) conditions_of(*body, out);
    }
}

// The allocation of a graph allocation node.
Allocation *allocation_of(const Node &n) {
    auto it = state().allocations.find(n.params.alloc.dptr);
    return it == state().allocations.end() ? nullptr : &it->second;
}

// Whether every node of `graph` (nested graphs too) can run in a graph launched from the device:
// kernels, copies, fills, empty, child and conditional nodes only.
bool device_launchable(const Graph &graph) {
    for (const Node *n : graph.nodes) {
        const CUgraphNodeType t = n->params.type;
        if (t != CU_GRAPH_NODE_TYPE_KERNEL && t != CU_GRAPH_NODE_TYPE_MEMCPY && t != CU_GRAPH_NODE_TYPE_MEMSET &&
            t != CU_GRAPH_NODE_TYPE_EMPTY && t != CU_GRAPH_NODE_TYPE_GRAPH && t != CU_GRAPH_NODE_TYPE_CONDITIONAL)
            return false;
        if (n->child && !device_launchable(*n->child)) return false;
        for (const Graph *body : n->bodies)
            if (!device_launchable(*body)) return false;
    }
    return true;
}

// Event record and wait nodes outside conditional bodies (where they may be), for a launch.
void event_nodes(const Graph &graph, std::vector<const Node *> &out) {
    for (const Node *n : graph.nodes) {
        const CUgraphNodeType t = n->params.type;
        if (t == CU_GRAPH_NODE_TYPE_EVENT_RECORD || t == CU_GRAPH_NODE_TYPE_WAIT_EVENT) out.push_back(n);
        if (n->child) event_nodes(*n->child, out);
    }
}

// What one launch does when its stream gets to it.
struct Launch {
    Exec *exec;
    CUstream stream;
    std::map<const Node *, std::pair<std::shared_ptr<Timeline>, unsigned long long>> events;  // node -> generation
};

void run_graph(Lock &lock, const Graph &graph, const Launch &launch);

void run_node(Lock &lock, const Node &n, const Launch &launch) {
    if (!n.enabled) return;  // a disabled node is an empty one
    State &g = state();
    const NodeParams &p = n.params;
    switch (p.type) {
        case CU_GRAPH_NODE_TYPE_KERNEL: {
            LaunchRecord record;
            CUkernel kernel = nullptr;
            CUcontext context = nullptr;
            if (!function_info(p.kernel.func, kernel, context)) {
                ++graphs().run_errors;
                return;
            }
            record.config.gridDimX = p.kernel.gridDimX;
            record.config.gridDimY = p.kernel.gridDimY;
            record.config.gridDimZ = p.kernel.gridDimZ;
            record.config.blockDimX = p.kernel.blockDimX;
            record.config.blockDimY = p.kernel.blockDimY;
            record.config.blockDimZ = p.kernel.blockDimZ;
            record.config.sharedMemBytes = p.kernel.sharedMemBytes;
            record.config.hStream = launch.stream;
            record.config.numAttrs = static_cast<unsigned>(p.attributes.size());
            record.attributes = p.attributes;
            record.function = p.kernel.func;
            record.kernel = kernel;
            record.function_context = context;
            record.current = t_current;
            record.args = p.args;
            run_launch(std::move(record));
            break;
        }
        case CU_GRAPH_NODE_TYPE_MEMCPY:
            if (copy_3d(nullptr, &p.copy, nullptr, Copy3D::now) != CUDA_SUCCESS) ++graphs().run_errors;
            break;
        case CU_GRAPH_NODE_TYPE_MEMSET:
            if (fill_rows(p.memset, true) != CUDA_SUCCESS) ++graphs().run_errors;
            break;
        case CU_GRAPH_NODE_TYPE_HOST: {
            const CUDA_HOST_NODE_PARAMS host = p.host;
            lock.unlock();  // it may call the driver
            host.fn(host.userData);
            lock.lock();
            break;
        }
        case CU_GRAPH_NODE_TYPE_GRAPH: run_graph(lock, *n.child, launch); break;
        case CU_GRAPH_NODE_TYPE_EMPTY: break;
        case CU_GRAPH_NODE_TYPE_WAIT_EVENT: {
            auto it = launch.events.find(&n);
            if (it == launch.events.end()) break;
            const std::shared_ptr<Timeline> timeline = it->second.first;  // not a structured binding: C++17
            const unsigned long long generation = it->second.second;     // lambdas cannot capture those
            if (g.worker_streams) g.changed.wait(lock, [&] { return timeline->completed >= generation; });
            break;
        }
        case CU_GRAPH_NODE_TYPE_EVENT_RECORD: {
            auto it = launch.events.find(&n);
            if (it == launch.events.end()) break;
            const auto &[timeline, generation] = it->second;
            if (timeline->completed < generation) {
                timeline->completed = generation;
                timeline->completed_ms = now_ms();
            }
            g.changed.notify_all();
            break;
        }
        case CU_GRAPH_NODE_TYPE_MEM_ALLOC: {
            Allocation *a = allocation_of(n);
            if (!a || a->state == AllocationState::live) {
                ++graphs().run_errors;
                return;
            }
            a->state = AllocationState::live;
            if (launch.exec->graph_memory.emplace(&n, std::make_pair(a->device, a->size)).second)
                graph_memory_changed(a->device, a->size, true);
            break;
        }
        case CU_GRAPH_NODE_TYPE_MEM_FREE: {
            auto it = g.allocations.find(p.free_address);
            if (it == g.allocations.end() || it->second.state != AllocationState::live) {
                ++graphs().run_errors;  // a double free
                return;
            }
            free_allocation(p.free_address);
            break;
        }
        case CU_GRAPH_NODE_TYPE_CONDITIONAL: {
            Condition *c = condition(p.condition);
            if (!c) return;
            const int kind = value_of(p.conditional_type);
            if (kind == CU_GRAPH_COND_TYPE_IF) {
                if (c->value) run_graph(lock, *n.bodies[0], launch);
                else if (n.bodies.size() == 2) run_graph(lock, *n.bodies[1], launch);
            } else if (kind == CU_GRAPH_COND_TYPE_WHILE) {
                for (long i = 0; c->value; ++i) {
                    if (i == kMaxWhileIterations) {
                        ++graphs().run_errors;
                        break;
                    }
                    run_graph(lock, *n.bodies[0], launch);
                }
            } else if (c->value < n.bodies.size()) {
                run_graph(lock, *n.bodies[c->value], launch);
            }
            break;
        }
        default: break;
    }
}

void run_graph(Lock &lock, const Graph &graph, const Launch &launch) {
    for (const Node *n : graph.order) run_node(lock, *n, launch);
}

// Destroys an executable's copy once it is destroyed and no launch of it is left.
void retire(Exec &exec) {
    if (!exec.destroyed || exec.in_flight) return;
    destroy_graph(*exec.graph);
    for (auto &[node, memory] : exec.graph_memory) graph_memory_changed(memory.first, memory.second, false);
    exec.graph_memory.clear();
}

// The executable's copy of `node` (a node of the graph it was instantiated from), or null.
Node *exec_node(Exec &exec, CUgraphNode node) {
    Node *n = as_node(node);
    if (!n) return nullptr;
    auto it = exec.graph->copies.find(n);
    return it == exec.graph->copies.end() ? nullptr : it->second;
}

// Whether `have` (an executable's graph) can take `want`'s parameters: the same nodes, types and
// edges (nodes paired in creation order), and no change the driver refuses.
CUgraphExecUpdateResult compare(const Graph &have, const Graph &want, const Node *&error_node) {
    if (have.nodes.size() != want.nodes.size()) {
        error_node = want.nodes.empty() ? nullptr : want.nodes.back();
        return CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    }
    std::map<const Node *, size_t> have_index, want_index;
    for (size_t i = 0; i < have.nodes.size(); ++i) {
        have_index[have.nodes[i]] = i;
        want_index[want.nodes[i]] = i;
    }
    for (size_t i = 0; i < have.nodes.size(); ++i) {
        const Node &a = *have.nodes[i], &b = *want.nodes[i];
        error_node = &b;
        if (a.params.type != b.params.type) return CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
        std::vector<size_t> from_a, from_b;
        for (const Node *d : a.dependencies) from_a.push_back(have_index[d]);
        for (const Node *d : b.dependencies) from_b.push_back(want_index[d]);
        std::sort(from_a.begin(), from_a.end());
        std::sort(from_b.begin(), from_b.end());
        if (from_a != from_b) return CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
        const NodeParams &x = a.params, &y = b.params;
        switch (x.type) {
            case CU_GRAPH_NODE_TYPE_KERNEL:
                if (x.kernel.ctx != y.kernel.ctx) return CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE;
                break;
            case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
                if (x.alloc.dptr != y.alloc.dptr || x.alloc.bytesize != y.alloc.bytesize)
                    return CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED;  // memory nodes cannot change
                break;
            case CU_GRAPH_NODE_TYPE_MEM_FREE:
                if (x.free_address != y.free_address) return CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED;
                break;
            case CU_GRAPH_NODE_TYPE_CONDITIONAL:
                if (x.condition != y.condition || x.conditional_type != y.conditional_type ||
                    x.conditional_size != y.conditional_size)
                    return CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED;
                for (size_t k = 0; k < a.bodies.size(); ++k)
                    if (const auto r = compare(*a.bodies[k], *b.bodies[k], error_node); r != CU_GRAPH_EXEC_UPDATE_SUCCESS)
                        return r;
                break;
            case CU_GRAPH_NODE_TYPE_GRAPH:
                if (const auto r = compare(*a.child, *b.child, error_node); r != CU_GRAPH_EXEC_UPDATE_SUCCESS) return r;
                break;
            default: break;
        }
    }
    error_node = nullptr;
    return CU_GRAPH_EXEC_UPDATE_SUCCESS;
}

// Copies `want`'s parameters into `have` (compared equal in shape first).
void take_params(Graph &have, const Graph &want) {
    for (size_t i = 0; i < have.nodes.size(); ++i) {
        Node &a = *have.nodes[i];
        const Node &b = *want.nodes[i];
        a.params = b.params;
        if (a.child) take_params(*a.child, *b.child);
        for (size_t k = 0; k < a.bodies.size(); ++k) take_params(*a.bodies[k], *b.bodies[k]);
    }
}

}  // namespace

CUresult f_cuGraphInstantiateWithParams(CUgraphExec *out, CUgraph graph, CUDA_GRAPH_INSTANTIATE_PARAMS *params) {
    if (!out || !params) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    params->hErrNode_out = nullptr;
    params->result_out = CUDA_GRAPH_INSTANTIATE_ERROR;
    Graph *g = as_graph(graph);
    if (!g) return CUDA_ERROR_INVALID_VALUE;
    const cuuint64_t known = CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |
                             CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
    const cuuint64_t flags = params->flags;
    if ((flags & ~known) || ((flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH) &&
                             (flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH)))
        return CUDA_ERROR_INVALID_VALUE;
    Stream *upload = nullptr;
    if (flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) {
        CUresult error = CUDA_SUCCESS;
        upload = resolve_stream(params->hUploadStream, error);
        if (!upload) return error;
    }
    // A graph with conditional nodes: one executable at a time, and every condition of it used.
    std::vector<CUgraphConditionalHandle> used;
    conditions_of(*g, used);
    if (!used.empty() && g->instantiations) return CUDA_ERROR_INVALID_VALUE;
    for (auto &[handle, c] : graphs().conditions)
        if (c.graph == g && std::find(used.begin(), used.end(), handle) == used.end()) {
            params->result_out = CUDA_GRAPH_INSTANTIATE_CONDITIONAL_HANDLE_UNUSED;
            return CUDA_ERROR_INVALID_VALUE;
        }
    if ((flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH) && !device_launchable(*g)) {
        params->result_out = CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED;
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (upload && capture_of(*upload)) return refuse_in_capture(*upload);
    Graph *copy = copy_graph(*g);
    if (!schedule(*copy)) {
        destroy_graph(*copy);
        run_destructors(lock);
        params->result_out = CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE;
        return CUDA_ERROR_INVALID_VALUE;
    }
    GraphState &gs = graphs();
    gs.exec_storage.push_back(std::make_unique<Exec>());
    Exec *exec = gs.exec_storage.back().get();
    exec->graph = copy;
    exec->source = g;
    exec->flags = flags;
    exec->conditions = used;
    for (CUgraphConditionalHandle h : used) condition(h)->value = condition(h)->default_value;
    gs.execs.insert(exec);
    ++g->instantiations;
    params->result_out = CUDA_GRAPH_INSTANTIATE_SUCCESS;
    *out = reinterpret_cast<CUgraphExec>(exec);
    return CUDA_SUCCESS;
}
CUresult f_cuGraphExecDestroy(CUgraphExec exec) {
    Lock lock(state().mutex);
    Exec *e = as_exec(exec);
    if (!e) return CUDA_ERROR_INVALID_VALUE;
    e->destroyed = true;
    graphs().execs.erase(e);
    if (graphs().graphs.count(e->source)) --e->source->instantiations;
    retire(*e);  // its queued launches finish first, as on a device
    run_destructors(lock);
    return CUDA_SUCCESS;
}
CUresult f_cuGraphLaunch(CUgraphExec exec, CUstream stream) {
    Lock lock(state().mutex);
    Exec *e = as_exec(exec);
    if (!e) return CUDA_ERROR_INVALID_VALUE;
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (!s) return error;
    if (capture_of(*s)) {  // a launch in a capture embeds a copy of the executable's graph
        if (contains(*e->graph, CU_GRAPH_NODE_TYPE_CONDITIONAL)) return refuse_in_capture(*s);
        NodeParams params;
        params.type = CU_GRAPH_NODE_TYPE_GRAPH;
        return capture_node(*s, std::move(params), nullptr, e->graph);
    }
    // Allocations of an earlier launch not freed since: freed now with AUTO_FREE_ON_LAUNCH, else refused.
    for (const Node *n : e->graph->nodes)
        if (n->params.type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
            Allocation *a = allocation_of(*n);
            if (!a || a->state == AllocationState::freed) continue;
            if (!(e->flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH)) return CUDA_ERROR_INVALID_VALUE;
        }
    for (const Node *n : e->graph->nodes)
        if (n->params.type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
            if (Allocation *a = allocation_of(*n); a && a->state == AllocationState::live)
                free_allocation(n->params.alloc.dptr);
    // Events as the matching stream operations see them at the call: waits for the records made
    // before it, records that complete when their node runs.
    auto launch = std::make_shared<Launch>();
    launch->exec = e;
    launch->stream = stream;
    std::vector<const Node *> events;
    event_nodes(*e->graph, events);
    for (const Node *n : events)
        if (Event *event = as_event(n->params.event); event && n->params.type == CU_GRAPH_NODE_TYPE_WAIT_EVENT)
            launch->events[n] = {event->timeline, event->timeline->recorded};
    for (const Node *n : events)
        if (Event *event = as_event(n->params.event); event && n->params.type == CU_GRAPH_NODE_TYPE_EVENT_RECORD) {
            event->captured_in = nullptr;
            launch->events[n] = {event->timeline, ++event->timeline->recorded};
        }
    ++e->in_flight;
    Operation op;
    op.kind = Operation::steps;
    op.run_steps = [launch](Lock &held) {
        Exec &x = *launch->exec;
        for (CUgraphConditionalHandle h : x.conditions)
            if (Condition *c = condition(h); c && (c->flags & CU_GRAPH_COND_ASSIGN_DEFAULT)) c->value = c->default_value;
        run_graph(held, *x.graph, *launch);
        --x.in_flight;
        retire(x);
        run_destructors(held);
    };
    enqueue(lock, *s, std::move(op));
    return CUDA_SUCCESS;
}
// Nothing to copy to a fake device: checks its arguments.
CUresult f_cuGraphUpload(CUgraphExec exec, CUstream stream) {
    Lock lock(state().mutex);
    if (!as_exec(exec)) return CUDA_ERROR_INVALID_VALUE;
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (!s) return error;
    if (capture_of(*s)) return refuse_in_capture(*s);
    return CUDA_SUCCESS;
}
CUresult f_cuGraphExecUpdate(CUgraphExec exec, CUgraph graph, CUgraphExecUpdateResultInfo *info) {
    if (!info) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Exec *e = as_exec(exec);
    Graph *g = as_graph(graph);
    if (!e || !g) return CUDA_ERROR_INVALID_VALUE;
    const Node *error_node = nullptr;
    const CUgraphExecUpdateResult result = compare(*e->graph, *g, error_node);
    info->result = result;
    info->errorNode = error_node ? handle_of(const_cast<Node *>(error_node)) : nullptr;
    info->errorFromNode = nullptr;
    if (result != CU_GRAPH_EXEC_UPDATE_SUCCESS) return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    take_params(*e->graph, *g);
    return CUDA_SUCCESS;
}
CUresult f_cuGraphExecKernelNodeSetParams(CUgraphExec exec, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS_v2 *params) {
    if (!params) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Exec *e = as_exec(exec);
    Node *n = e ? exec_node(*e, node) : nullptr;
    if (!n || n->params.type != CU_GRAPH_NODE_TYPE_KERNEL) return CUDA_ERROR_INVALID_VALUE;
    NodeParams p = n->params;
    if (const CUresult error = kernel_params(*params, p); error != CUDA_SUCCESS) return error;
    if (p.kernel.ctx != n->params.kernel.ctx) return CUDA_ERROR_INVALID_VALUE;  // not into another context
    n->params = std::move(p);
    return CUDA_SUCCESS;
}
CUresult f_cuGraphExecMemcpyNodeSetParams(CUgraphExec exec, CUgraphNode node, const CUDA_MEMCPY3D *copy, CUcontext) {
    if (!copy) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Exec *e = as_exec(exec);
    Node *n = e ? exec_node(*e, node) : nullptr;
    if (!n || n->params.type != CU_GRAPH_NODE_TYPE_MEMCPY) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult error = copy_3d(nullptr, copy, nullptr, Copy3D::check); error != CUDA_SUCCESS) return error;
    n->params.copy = *copy;
    return CUDA_SUCCESS;
}
CUresult f_cuGraphExecMemsetNodeSetParams(CUgraphExec exec, CUgraphNode node, const CUDA_MEMSET_NODE_PARAMS *memset,
                                          CUcontext) {
    if (!memset) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Exec *e = as_exec(exec);
    Node *n = e ? exec_node(*e, node) : nullptr;
    if (!n || n->params.type != CU_GRAPH_NODE_TYPE_MEMSET) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult error = fill_rows(*memset, false); error != CUDA_SUCCESS) return error;
    n->params.memset = *memset;
    return CUDA_SUCCESS;
}
CUresult f_cuGraphExecHostNodeSetParams(CUgraphExec exec, CUgraphNode node, const CUDA_HOST_NODE_PARAMS *host) {
    if (!host || !host->fn) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Exec *e = as_exec(exec);
    Node *n = e ? exec_node(*e, node) : nullptr;
    if (!n || n->params.type != CU_GRAPH_NODE_TYPE_HOST) return CUDA_ERROR_INVALID_VALUE;
    n->params.host = *host;
    return CUDA_SUCCESS;
}

namespace {
// The executable's copy of a node that can be enabled or disabled (kernel, memcpy, memset), or null.
Node *switchable(CUgraphExec exec, CUgraphNode node) {
    Exec *e = as_exec(exec);
    Node *n = e ? exec_node(*e, node) : nullptr;
    if (!n) return nullptr;
    const CUgraphNodeType t = n->params.type;
    return t == CU_GRAPH_NODE_TYPE_KERNEL || t == CU_GRAPH_NODE_TYPE_MEMCPY || t == CU_GRAPH_NODE_TYPE_MEMSET ? n
                                                                                                              : nullptr;
}
}  // namespace

CUresult f_cuGraphNodeSetEnabled(CUgraphExec exec, CUgraphNode node, unsigned enabled) {
    Lock lock(state().mutex);
    Node *n = switchable(exec, node);
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    n->enabled = enabled != 0;
    return CUDA_SUCCESS;
}
CUresult f_cuGraphNodeGetEnabled(CUgraphExec exec, CUgraphNode node, unsigned *enabled) {
    if (!enabled) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Node *n = switchable(exec, node);
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    *enabled = n->enabled ? 1 : 0;
    return CUDA_SUCCESS;
}

}  // namespace fake::detail
