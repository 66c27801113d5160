// Stream capture: while a stream captures, its stream-ordered operations
// become nodes of the capture's graph, after the stream's capture
// dependencies, instead of running (the operations call capture_node). An
// event recorded in a capture marks a point of it; a stream waiting on such an
// event joins the capture (a fork) or takes the event's nodes as dependencies
// (a join). Synchronizing or querying a capturing stream, or querying a
// captured event, invalidates the capture: its end reports it, and the
// streams leave the capture usable.
#include <algorithm>

#include "entry_points.hpp"
#include "graphs.hpp"

namespace fake::detail {
namespace {

// What cuStreamGetCaptureInfo hands out pointers into (valid until this thread's next call).
thread_local std::vector<CUgraphNode> t_dependencies;
thread_local std::vector<CUgraphEdgeData> t_edges;

void invalidate(Capture &capture) { capture.invalidated = true; }

// Ends a capture: every stream in it leaves it.
void finish(Capture &capture) {
    for (Stream *s : capture.streams)
        if (s->capture == &capture) {
            s->capture = nullptr;
            s->capture_dependencies.clear();
            s->capture_edges.clear();
        }
    capture.ended = true;
}

// Whether `node` is one of `ends` or comes before one of them.
bool reaches(const Node *node, const std::vector<Node *> &ends) {
    std::vector<const Node *> pending(ends.begin(), ends.end());
    std::set<const Node *> seen;
    while (!pending.empty()) {
        const Node *n = pending.back();
        pending.pop_back();
        if (n == node) return true;
        if (!seen.insert(n).second) continue;
        pending.insert(pending.end(), n->dependencies.begin(), n->dependencies.end());
    }
    return false;
}

CUresult begin(CUstream stream, Graph *graph, bool own_graph, const CUgraphNode *dependencies,
               const CUgraphEdgeData *edges, size_t count, int mode) {
    if (mode < CU_STREAM_CAPTURE_MODE_GLOBAL || mode > CU_STREAM_CAPTURE_MODE_RELAXED) return CUDA_ERROR_INVALID_VALUE;
    if (stream == nullptr || stream == CU_STREAM_LEGACY) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (!s) return error;
    if (s->capture) return CUDA_ERROR_ILLEGAL_STATE;
    if (count && !dependencies) return CUDA_ERROR_INVALID_VALUE;
    std::vector<Node *> from;
    for (size_t i = 0; i < count; ++i) {
        Node *n = as_node(dependencies[i]);
        if (!n || n->graph != graph) return CUDA_ERROR_INVALID_VALUE;
        from.push_back(n);
    }
    if (own_graph) {
        graph = new_graph();
        graph->top_level = true;
    }
    GraphState &g = graphs();
    g.capture_storage.push_back(std::make_unique<Capture>());
    Capture *c = g.capture_storage.back().get();
    c->id = g.next_capture_id++;
    c->graph = graph;
    c->own_graph = own_graph;
    c->mode = mode;
    c->thread = pthread_self();
    c->streams = {s};
    s->capture = c;
    s->capture_dependencies = from;
    s->capture_edges.assign(count, CUgraphEdgeData{});
    if (edges) s->capture_edges.assign(edges, edges + count);
    return CUDA_SUCCESS;
}

}  // namespace

CUresult capture_node(Stream &stream, NodeParams params, Node **added, Graph *child) {
    Capture &c = *stream.capture;
    if (c.invalidated) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    std::vector<CUgraphNode> dependencies;
    for (Node *n : stream.capture_dependencies) dependencies.push_back(handle_of(n));
    CUresult error = CUDA_SUCCESS;
    Node *node = add_node(*c.graph, std::move(params), dependencies.data(), stream.capture_edges.data(),
                          dependencies.size(), error, child, false);
    if (!node) {
        invalidate(c);  // a failed call in a capture spoils it
        return error;
    }
    stream.capture_dependencies = {node};
    stream.capture_edges = {CUgraphEdgeData{}};
    if (added) *added = node;
    return CUDA_SUCCESS;
}

CUresult refuse_in_capture(Stream &stream) {
    invalidate(*stream.capture);
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

bool unsafe_call_prohibited() {
    bool prohibited = false;
    for (auto &c : graphs().capture_storage) {
        if (c->ended) continue;
        if (c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL ||
            (c->mode == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL && pthread_equal(c->thread, pthread_self()))) {
            invalidate(*c);
            prohibited = true;
        }
    }
    return prohibited;
}

bool invalidate_captures_in(CUcontext context) {
    bool found = false;
    for (auto &c : graphs().capture_storage)
        if (!c->ended && c->streams.front()->context == context) {
            invalidate(*c);
            found = true;
        }
    return found;
}

CUresult capture_record(Stream &stream, Event &event) {
    if (stream.capture->invalidated) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    event.captured_in = stream.capture;
    event.captured_dependencies = stream.capture_dependencies;
    return CUDA_SUCCESS;
}

bool captured_event(const Event &event) { return event.captured_in && !event.captured_in->ended; }

CUresult refuse_captured_event(Event &event) {
    invalidate(*event.captured_in);
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

CUresult capture_wait(Stream &stream, Event &event) {
    Capture *mine = stream.capture;
    Capture *theirs = captured_event(event) ? event.captured_in : nullptr;
    if (mine && mine->invalidated) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    if (!theirs) {
        if (event.timeline->recorded == 0) return CUDA_SUCCESS;  // never recorded: nothing to wait for
        invalidate(*mine);
        return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;  // on work outside the capture
    }
    if (!mine) {  // a fork: the stream joins the capture after the event's nodes
        if (theirs->invalidated) return CUDA_ERROR_INVALID_VALUE;
        stream.capture = theirs;
        stream.capture_dependencies = event.captured_dependencies;
        stream.capture_edges.assign(event.captured_dependencies.size(), CUgraphEdgeData{});
        if (std::find(theirs->streams.begin(), theirs->streams.end(), &stream) == theirs->streams.end())
            theirs->streams.push_back(&stream);
        return CUDA_SUCCESS;
    }
    if (mine != theirs) {
        invalidate(*mine);
        invalidate(*theirs);
        return CUDA_ERROR_STREAM_CAPTURE_MERGE;
    }
    for (Node *n : event.captured_dependencies)  // a join
        if (std::find(stream.capture_dependencies.begin(), stream.capture_dependencies.end(), n) ==
            stream.capture_dependencies.end()) {
            stream.capture_dependencies.push_back(n);
            stream.capture_edges.push_back(CUgraphEdgeData{});
        }
    return CUDA_SUCCESS;
}

CUresult f_cuStreamBeginCapture(CUstream stream, CUstreamCaptureMode mode) {
    Lock lock(state().mutex);
    return begin(stream, nullptr, true, nullptr, nullptr, 0, value_of(mode));
}
CUresult f_cuStreamBeginCaptureToGraph(CUstream stream, CUgraph graph, const CUgraphNode *dependencies,
                                       const CUgraphEdgeData *edges, size_t count, CUstreamCaptureMode mode) {
    Lock lock(state().mutex);
    Graph *g = as_graph(graph);
    if (!g) return CUDA_ERROR_INVALID_VALUE;
    return begin(stream, g, false, dependencies, edges, count, value_of(mode));
}
CUresult f_cuStreamEndCapture(CUstream stream, CUgraph *graph) {
    if (!graph) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (!s) return error;
    Capture *c = s->capture;
    if (!c) return CUDA_ERROR_ILLEGAL_STATE;
    if (c->streams.front() != s) {  // only where it began
        invalidate(*c);
        return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
    }
    CUresult result = c->invalidated ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : CUDA_SUCCESS;
    // Every forked stream's work must come before the origin's last nodes.
    for (Stream *other : c->streams)
        if (result == CUDA_SUCCESS && other != s && other->capture == c)
            for (Node *n : other->capture_dependencies)
                if (!reaches(n, s->capture_dependencies)) result = CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
    finish(*c);
    if (result != CUDA_SUCCESS) {
        if (c->own_graph) destroy_graph(*c->graph);
        run_destructors(lock);
        *graph = nullptr;
        return result;
    }
    *graph = handle_of(c->graph);
    return CUDA_SUCCESS;
}
// The calling thread's capture interaction mode (kept, not enforced: the fake prohibits no call during a capture).
CUresult f_cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode) {
    static thread_local CUstreamCaptureMode t_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
    if (!mode) return CUDA_ERROR_INVALID_VALUE;
    const CUstreamCaptureMode previous = t_mode;
    t_mode = *mode;
    *mode = previous;
    return CUDA_SUCCESS;
}

CUresult f_cuStreamIsCapturing(CUstream stream, CUstreamCaptureStatus *status) {
    if (!status) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (!s) return error;
    const Capture *c = s->capture;
    *status = !c ? CU_STREAM_CAPTURE_STATUS_NONE
                 : c->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    return CUDA_SUCCESS;
}
// The dependency and edge arrays stay valid until this thread's next call.
CUresult f_cuStreamGetCaptureInfo(CUstream stream, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
                                  const CUgraphNode **dependencies, const CUgraphEdgeData **edges, size_t *count) {
    if (!status) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (!s) return error;
    const Capture *c = s->capture;
    *status = !c ? CU_STREAM_CAPTURE_STATUS_NONE
                 : c->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    if (!c) return CUDA_SUCCESS;
    if (id) *id = c->id;
    if (graph) *graph = handle_of(c->graph);
    t_dependencies.clear();
    for (Node *n : s->capture_dependencies) t_dependencies.push_back(handle_of(n));
    t_edges = s->capture_edges;
    if (dependencies) *dependencies = t_dependencies.empty() ? nullptr : t_dependencies.data();
    if (edges) *edges = t_edges.empty() ? nullptr : t_edges.data();
    if (count) *count = t_dependencies.size();
    return CUDA_SUCCESS;
}
CUresult f_cuStreamUpdateCaptureDependencies(CUstream stream, CUgraphNode *dependencies, const CUgraphEdgeData *edges,
                                             size_t count, unsigned flags) {
    if (flags > CU_STREAM_SET_CAPTURE_DEPENDENCIES || (count && !dependencies)) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (!s) return error;
    Capture *c = s->capture;
    if (!c) return CUDA_ERROR_ILLEGAL_STATE;
    if (c->invalidated) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    std::vector<Node *> nodes;
    for (size_t i = 0; i < count; ++i) {
        Node *n = as_node(dependencies[i]);
        if (!n || n->graph != c->graph) return CUDA_ERROR_INVALID_VALUE;
        nodes.push_back(n);
    }
    if (flags == CU_STREAM_SET_CAPTURE_DEPENDENCIES) {
        s->capture_dependencies.clear();
        s->capture_edges.clear();
    }
    for (size_t i = 0; i < count; ++i) {
        if (std::count(s->capture_dependencies.begin(), s->capture_dependencies.end(), nodes[i])) continue;
        s->capture_dependencies.push_back(nodes[i]);
        s->capture_edges.push_back(edges ? edges[i] : CUgraphEdgeData{});
    }
    return CUDA_SUCCESS;
}

}  // namespace fake::detail
