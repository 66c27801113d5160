// Node updates that replace what a node uses rather than its numbers: the
// event of event record and wait nodes, and the graph of child graph nodes,
// in definitions (cuGraphEventRecordNodeSetEvent, cuGraphEventWaitNodeSetEvent,
// cuGraphNodeSetParams for child graphs) and in executables
// (cuGraphExec*NodeSetEvent, cuGraphExecChildGraphNodeSetParams). The other
// node setters are in graphs.cpp and graph_exec.cpp.
#include <algorithm>

#include "entry_points.hpp"
#include "fake_driver.hpp"
#include "graphs.hpp"

namespace fake::detail {
namespace {

// A live node of `type`, or null.
Node *of_type(CUgraphNode n, CUgraphNodeType type) {
    Node *node = as_node(n);
    return node && node->params.type == type ? node : nullptr;
}

// The executable's copy of `node` (a node of the graph it was made from) if it is of `type`, or null.
Node *exec_copy(CUgraphExec exec, CUgraphNode node, CUgraphNodeType type) {
    Exec *e = as_exec(exec);
    Node *n = as_node(node);
    if (!e || !n) return nullptr;
    auto it = e->graph->copies.find(n);
    return it != e->graph->copies.end() && it->second->params.type == type ? it->second : nullptr;
}

CUresult set_event(Node *node, CUevent event) {
    if (!node || !as_event(event)) return CUDA_ERROR_INVALID_VALUE;
    node->params.event = event;
    return CUDA_SUCCESS;
}

// Whether `have` and `want` have the same nodes (types, in creation order) and edges, nested graphs too.
bool same_topology(const Graph &have, const Graph &want) {
    if (have.nodes.size() != want.nodes.size()) return false;
    for (size_t i = 0; i < have.nodes.size(); ++i) {
        const Node &a = *have.nodes[i], &b = *want.nodes[i];
        if (a.params.type != b.params.type || a.dependencies.size() != b.dependencies.size()) return false;
        for (size_t k = 0; k < a.dependencies.size(); ++k) {
            const auto ia = std::find(have.nodes.begin(), have.nodes.end(), a.dependencies[k]) - have.nodes.begin();
            const auto ib = std::find(want.nodes.begin(), want.nodes.end(), b.dependencies[k]) - want.nodes.begin();
            if (ia != ib) return false;
        }
        if ((a.child == nullptr) != (b.child == nullptr)) return false;
        if (a.child && !same_topology(*a.child, *b.child)) return false;
        if (!a.bodies.empty() || !b.bodies.empty()) return false;  // conditional nodes are not taken here
    }
    return true;
}

// Copies `want`'s node parameters into `have` (same topology).
void copy_params(Graph &have, const Graph &want) {
    for (size_t i = 0; i < have.nodes.size(); ++i) {
        have.nodes[i]->params = want.nodes[i]->params;
        if (have.nodes[i]->child) copy_params(*have.nodes[i]->child, *want.nodes[i]->child);
    }
}

}  // namespace

CUresult f_cuGraphEventRecordNodeSetEvent(CUgraphNode node, CUevent event) {
    Lock lock(state().mutex);
    return set_event(of_type(node, CU_GRAPH_NODE_TYPE_EVENT_RECORD), event);
}
CUresult f_cuGraphEventWaitNodeSetEvent(CUgraphNode node, CUevent event) {
    Lock lock(state().mutex);
    return set_event(of_type(node, CU_GRAPH_NODE_TYPE_WAIT_EVENT), event);
}

// Child graph nodes only (what libcucore asks it for): the node's graph is destroyed and a copy of the new
// one takes its place, with the driver's restrictions of cuGraphAddChildGraphNode.
CUresult f_cuGraphNodeSetParams(CUgraphNode node, CUgraphNodeParams *params) {
    if (!params) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Node *n = as_node(node);
    if (!n || n->params.type != params->type) return CUDA_ERROR_INVALID_VALUE;
    if (params->type != CU_GRAPH_NODE_TYPE_GRAPH) return CUDA_ERROR_NOT_SUPPORTED;
    Graph *child = as_graph(params->graph.graph);
    if (!child || contains(*child, CU_GRAPH_NODE_TYPE_CONDITIONAL) || contains(*child, CU_GRAPH_NODE_TYPE_MEM_ALLOC) ||
        contains(*child, CU_GRAPH_NODE_TYPE_MEM_FREE))
        return CUDA_ERROR_INVALID_VALUE;
    for (const Graph *g = n->graph; g; g = g->owner ? g->owner->graph : nullptr)
        if (g == child) return CUDA_ERROR_INVALID_VALUE;  // into itself
    for (const Graph *g = child; g; g = g->owner ? g->owner->graph : nullptr)
        if (g == n->child) return CUDA_ERROR_INVALID_VALUE;  // the graph it replaces, or one in it
    Graph *copy = copy_graph(*child);
    destroy_graph(*n->child);
    n->child = copy;
    copy->owner = n;
    copy->top_level = false;
    run_destructors(lock);
    return CUDA_SUCCESS;
}

CUresult f_cuGraphExecEventRecordNodeSetEvent(CUgraphExec exec, CUgraphNode node, CUevent event) {
    Lock lock(state().mutex);
    return set_event(exec_copy(exec, node, CU_GRAPH_NODE_TYPE_EVENT_RECORD), event);
}
CUresult f_cuGraphExecEventWaitNodeSetEvent(CUgraphExec exec, CUgraphNode node, CUevent event) {
    Lock lock(state().mutex);
    return set_event(exec_copy(exec, node, CU_GRAPH_NODE_TYPE_WAIT_EVENT), event);
}
CUresult f_cuGraphExecChildGraphNodeSetParams(CUgraphExec exec, CUgraphNode node, CUgraph child) {
    Lock lock(state().mutex);
    Node *n = exec_copy(exec, node, CU_GRAPH_NODE_TYPE_GRAPH);
    Graph *c = as_graph(child);
    if (!n || !c || !same_topology(*n->child, *c)) return CUDA_ERROR_INVALID_VALUE;
    copy_params(*n->child, *c);
    return CUDA_SUCCESS;
}

}  // namespace fake::detail

namespace fake {

CUevent graph_node_event(CUgraphNode node) {
    detail::Lock lock(detail::state().mutex);
    const detail::Node *n = detail::as_node(node);
    return n ? n->params.event : nullptr;
}

CUevent graph_exec_node_event(CUgraphExec exec, CUgraphNode node) {
    detail::Lock lock(detail::state().mutex);
    detail::Exec *e = detail::as_exec(exec);
    const detail::Node *n = detail::as_node(node);
    if (!e || !n) return nullptr;
    auto it = e->graph->copies.find(const_cast<detail::Node *>(n));
    return it == e->graph->copies.end() ? nullptr : it->second->params.event;
}

}  // namespace fake
