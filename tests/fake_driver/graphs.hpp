// The fake's CUDA graphs, shared by graphs.cpp (definitions: nodes, edges,
// clones, conditions, user objects, DOT, graph memory), graph_exec.cpp
// (executable graphs: instantiate, launch, update) and capture.cpp (stream
// capture, and the hooks the stream-ordered operations call). Internal to
// tests/fake_driver; every function here wants the state's lock held.
//
// A graph is nodes (a type and a copy of their parameters) and edges (each
// node's dependencies). Clones, child graphs and executables are deep copies
// that remember which node each of their nodes was copied from. Like every
// object of the fake, graphs, nodes and executables are never freed before
// the next install(): a destroyed one only leaves its registry.
#pragma once

#include <cuda.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "state.hpp"

namespace fake::detail {

struct Graph;

// What a node does: its type and a copy of its parameters (pointers the
// caller gave, such as kernel arguments and access descriptors, are copied).
struct NodeParams {
    CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
    // Kernel: func and ctx always set (a kern is resolved to its function in ctx).
    CUDA_KERNEL_NODE_PARAMS_v2 kernel{};
    std::vector<std::vector<unsigned char>> args;  // each argument's bytes (the kernel's parameter sizes)
    std::vector<CUlaunchAttribute> attributes;     // a captured launch's
    // Memcpy.
    CUDA_MEMCPY3D copy{};
    CUcontext context = nullptr;  // memcpy and memset
    // Memset.
    CUDA_MEMSET_NODE_PARAMS_v1 memset{};
    // Host.
    CUDA_HOST_NODE_PARAMS_v1 host{};
    // Event record and wait.
    CUevent event = nullptr;
    // Allocation (dptr: the address, fixed for the node's life) and free.
    CUDA_MEM_ALLOC_NODE_PARAMS alloc{};
    std::vector<CUmemAccessDesc> access;
    CUdeviceptr free_address = 0;
    // Conditional.
    CUgraphConditionalHandle condition = 0;
    CUgraphConditionalNodeType conditional_type = CU_GRAPH_COND_TYPE_IF;
    unsigned conditional_size = 0;  // its body graphs
};

struct Node {
    Graph *graph = nullptr;
    NodeParams params;
    std::vector<Node *> dependencies;    // incoming edges, in the order added
    std::vector<CUgraphEdgeData> edges;  // their data, one per dependency
    Graph *child = nullptr;              // a child graph node's graph (its own copy, or the moved graph)
    std::vector<Graph *> bodies;         // a conditional node's body graphs
    std::vector<CUgraph> body_handles;   // what CUDA_CONDITIONAL_NODE_PARAMS::phGraph_out points at
    Node *source = nullptr;              // in a copy: the node it was copied from
    bool enabled = true;                 // in an executable: cuGraphNodeSetEnabled
    bool destroyed = false;
    // What the Get*Params calls hand out pointers into.
    std::vector<void *> arg_pointers;
};

struct UserObject {
    void *pointer;
    CUhostFn destroy;
    unsigned references;
};

struct Capture;
struct Graph {
    std::vector<Node *> nodes;  // live ones, in creation order
    Node *owner = nullptr;      // a child graph's or a conditional body's node (not destroyable by itself)
    Graph *source = nullptr;    // a clone's or executable's original
    std::map<Node *, Node *> copies;             // a copy's: original node -> its copy (nested graphs too)
    std::map<UserObject *, unsigned> user_objects;  // references held
    std::vector<Node *> order;  // an executable's: a topological order (creation order breaks ties)
    int instantiations = 0;     // live executables made from it
    bool top_level = false;     // made by cuGraphCreate/Clone/EndCapture (counted in Counters::graphs)
    bool destroyed = false;
};

struct Exec {
    Graph *graph = nullptr;   // the executable's own copy
    Graph *source = nullptr;  // the graph it was instantiated from
    unsigned long long flags = 0;
    int in_flight = 0;      // launches queued and not finished
    bool destroyed = false;
    std::vector<CUgraphConditionalHandle> conditions;  // those its conditional nodes read
    // Graph memory its allocation nodes took (device, bytes), kept after an in-graph free for the
    // next launch, as the driver keeps it, until the executable goes.
    std::map<const Node *, std::pair<int, size_t>> graph_memory;
};

// A condition (cuGraphConditionalHandleCreate). Its value is one per handle:
// the driver allows one executable of a graph with conditional nodes at a time.
struct Condition {
    Graph *graph;
    CUcontext context;
    unsigned default_value;
    unsigned flags;
    unsigned value;
};

// A stream capture: its graph and every stream in it (the origin first).
struct Capture {
    unsigned long long id = 0;
    Graph *graph = nullptr;
    bool own_graph = false;  // cuStreamBeginCapture's (destroyed when the capture fails); else the caller's
    int mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
    pthread_t thread{};
    std::vector<Stream *> streams;
    bool invalidated = false;
    bool ended = false;
};

// Graph memory of one device (cuDeviceGetGraphMemAttribute).
struct GraphMemory {
    uint64_t used = 0, used_high = 0, reserved = 0, reserved_high = 0;
};

struct GraphState {
    std::vector<std::unique_ptr<Graph>> graph_storage;
    std::set<Graph *> graphs;  // live (top-level and nested)
    std::vector<std::unique_ptr<Node>> node_storage;
    std::set<Node *> nodes;  // live
    std::vector<std::unique_ptr<Exec>> exec_storage;
    std::set<Exec *> execs;
    std::vector<std::unique_ptr<UserObject>> user_object_storage;
    std::set<UserObject *> user_objects;
    std::map<CUgraphConditionalHandle, Condition> conditions;
    CUgraphConditionalHandle next_condition = 1;
    std::vector<std::unique_ptr<Capture>> capture_storage;
    unsigned long long next_capture_id = 1;
    std::map<int, GraphMemory> memory;  // by device
    std::vector<std::pair<CUhostFn, void *>> destructors;  // user objects' destructors to run, without the lock
    long run_errors = 0;  // nodes that could not run (memory gone): a device would fault
};
GraphState &graphs();

Graph *as_graph(CUgraph g);  // a live graph, or null
Node *as_node(CUgraphNode n);  // a live node, or null
Exec *as_exec(CUgraphExec e);
inline CUgraph handle_of(Graph *g) { return reinterpret_cast<CUgraph>(g); }
inline CUgraphNode handle_of(Node *n) { return reinterpret_cast<CUgraphNode>(n); }

Graph *new_graph();
// Adds a node of `params` to `graph` after `count` dependencies (edge data may be null). Checks
// the dependencies (in `graph`, no duplicates) and the parameters; the new node, or null with `error` set.
// A child graph node embeds a copy of `child` (or `child` itself when `move_child`).
Node *add_node(Graph &graph, NodeParams params, const CUgraphNode *dependencies, const CUgraphEdgeData *edges,
               size_t count, CUresult &error, Graph *child = nullptr, bool move_child = false);
// A deep copy of `from` (nested graphs too; the copy holds references to its user objects); `top`: the copy's
// `copies` gets every node of every level.
Graph *copy_graph(const Graph &from, Graph *top = nullptr);
// Destroys a graph (its nodes, nested graphs) and drops its user-object references.
void destroy_graph(Graph &graph);
void destroy_node(Node &node);
// Drops `count` references to `object`; its destructor is queued when none is left.
void release_user_object(UserObject &object, unsigned count);
// Runs the queued user-object destructors without the lock (they may call the driver).
void run_destructors(Lock &lock);
// Whether `graph` (or a graph nested in it) has a node of `type`.
bool contains(const Graph &graph, CUgraphNodeType type);
// Checks a node's parameters as the driver does at creation (kernel: its function; memcpy,
// memset: their shape). CUDA_SUCCESS or why not.
CUresult check_params(NodeParams &params);
// A kernel node's parameters from the driver's struct (arguments copied per the kernel's sizes).
CUresult kernel_params(const CUDA_KERNEL_NODE_PARAMS_v2 &in, NodeParams &out);
// Graph memory of `device`: an executable took `size` bytes (true) or gave them back.
void graph_memory_changed(int device, size_t size, bool allocated);

// ---- capture (capture.cpp) ----

// The capture `stream` is in (active or invalidated), or null.
inline Capture *capture_of(const Stream &stream) { return stream.capture; }
// Appends a node of `params` to `stream`'s capture after the stream's capture dependencies, which
// become that node (a child graph node: a copy of `child`). CUDA_ERROR_STREAM_CAPTURE_INVALIDATED once
// the capture was invalidated; a node the graph refuses invalidates it.
CUresult capture_node(Stream &stream, NodeParams params, Node **added = nullptr, Graph *child = nullptr);
// An operation the capture cannot take: the capture is invalidated (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED).
CUresult refuse_in_capture(Stream &stream);
// Whether an unsafe call (a synchronous copy, an allocation or free, a context synchronize) is
// prohibited on this thread now: a global capture anywhere or a thread-local one of this thread. Those
// captures are invalidated, as the driver invalidates them.
bool unsafe_call_prohibited();
// Invalidates the captures going on in `context`'s streams (a context synchronize would wait for them);
// whether there was one.
bool invalidate_captures_in(CUcontext context);
// cuEventRecord on a capturing stream: the event remembers the capture and the stream's dependencies.
CUresult capture_record(Stream &stream, Event &event);
// cuStreamWaitEvent on a captured event or from a capturing stream: a fork or a join.
CUresult capture_wait(Stream &stream, Event &event);
// Whether `event` was last recorded in a capture that is still going (querying it is an error).
bool captured_event(const Event &event);
// A query or synchronize of such an event: its capture is invalidated (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED).
CUresult refuse_captured_event(Event &event);

// ---- copies and fills (copy_3d.cpp, memory.cpp) ----

// How copy_3d treats a checked copy: queued in `stream`'s order (cuMemcpy3DAsync; a node when it
// captures), only checked (a memcpy node's parameters), or done now (a node running in stream order).
enum class Copy3D { queue, check, now };
CUresult copy_3d(Lock *lock, const CUDA_MEMCPY3D *copy, CUstream stream, Copy3D mode);  // lock: for `queue`
// A memcpy node's parameters for a linear copy of n bytes (either side may be host memory).
NodeParams linear_copy(CUdeviceptr dst, CUdeviceptr src, size_t n, CUcontext context);
// Fills `height` rows of `width` elements of `element_size` bytes, `pitch` apart (a memset node,
// checked as the driver checks cuGraphAddMemsetNode when `run` is false). CUDA_SUCCESS or why not.
CUresult fill_rows(const CUDA_MEMSET_NODE_PARAMS_v1 &memset, bool run);

// ---- kernels (kernels.cpp) ----

// The function of `kernel` in `context` (a known kernel), as cuKernelGetFunction would hand it out.
CUfunction function_handle(CUkernel kernel, CUcontext context);
// The kernel and context of a known function (false when unknown).
bool function_info(CUfunction function, CUkernel &kernel, CUcontext &context);
// The kernel name of a known function (null when unknown).
const std::string *kernel_name(CUfunction function);
// Whether `kernel` is known (a loaded library's or make_kernel's).
bool kernel_known(CUkernel kernel);
// The parameter sizes of a known function's kernel (null when unknown).
const std::vector<size_t> *param_sizes(CUfunction function);
// Records a launch (fake::launches()) and runs the kernel's behaviour (fake_driver.hpp) now.
void run_launch(LaunchRecord record);
// The condition value slot of a handle, or null.
Condition *condition(CUgraphConditionalHandle handle);

}  // namespace fake::detail
