/* libcucore: CUDA graphs built explicitly, their nodes, and executable graphs.
 *
 * Three nouns, as in cuda.core's `cuda.core.graph`:
 * - a graph definition (cucore_graph_definition_t, a CUgraph): nodes and the
 *   dependencies between them, built here node by node or captured from a
 *   stream by a graph builder (graph_builder.h);
 * - a graph node (cucore_graph_node_t, a CUgraphNode of a definition);
 * - a graph (cucore_graph_t, a CUgraphExec): a definition instantiated, to be
 *   launched on streams, updated and uploaded.
 *
 * Lifetimes: a definition keeps every library object its nodes use (kernels and
 * their code, buffers, memory resources, events, the user data of host
 * callbacks through their release functions) until the definition, every clone
 * and child copy of it, every graph instantiated from it and every launch of
 * those graphs are done (a graph released with launches in flight lets go of
 * them when the streams it was launched on get past those launches). Release
 * order never matters. Kernel arguments are bytes: memory a kernel argument
 * points at is the caller's to keep alive, as with cucore_launch. Raw handles
 * (cucore_graph_definition_handle, cucore_graph_handle) used by foreign code
 * extend nothing: keep the library objects while foreign code uses them.
 *
 * Nodes: a node handle names one node of one definition and holds that
 * definition. Node-adding functions take the nodes the new node depends on
 * (`dependencies`, `dependency_count`; none: a root node), all of the same
 * definition. Listing functions make new handles each time: compare nodes with
 * cucore_graph_node_handle. After cucore_graph_node_destroy every handle of
 * that node is INVALID_STATE in node calls.
 */
#ifndef CUCORE_GRAPH_H
#define CUCORE_GRAPH_H

#include "copy_3d.h"
#include "launch.h"
#include "memory_resource.h"
#include "stream.h"

/* A node's kind (the driver's CUgraphNodeType + 1). */
typedef enum cucore_graph_node_type {
    CUCORE_GRAPH_NODE_UNSET = 0,
    CUCORE_GRAPH_NODE_KERNEL = 1,
    CUCORE_GRAPH_NODE_MEMCPY = 2,
    CUCORE_GRAPH_NODE_MEMSET = 3,
    CUCORE_GRAPH_NODE_HOST_CALLBACK = 4,
    CUCORE_GRAPH_NODE_CHILD_GRAPH = 5,
    CUCORE_GRAPH_NODE_EMPTY = 6,
    CUCORE_GRAPH_NODE_EVENT_WAIT = 7,
    CUCORE_GRAPH_NODE_EVENT_RECORD = 8,
    CUCORE_GRAPH_NODE_EXTERNAL_SEMAPHORE_SIGNAL = 9,
    CUCORE_GRAPH_NODE_EXTERNAL_SEMAPHORE_WAIT = 10,
    CUCORE_GRAPH_NODE_ALLOC = 11,
    CUCORE_GRAPH_NODE_FREE = 12,
    CUCORE_GRAPH_NODE_BATCH_MEM_OP = 13,
    CUCORE_GRAPH_NODE_CONDITIONAL = 14,
    CUCORE_GRAPH_NODE_TYPE_FORCE_INT32 = 0x7fffffff
} cucore_graph_node_type_t;

/* The kind of a conditional node (cuda.core's if_then, if_else, while_loop, switch). */
typedef enum cucore_graph_conditional_type {
    CUCORE_GRAPH_CONDITIONAL_UNSET = 0,
    /* One body, run when the condition is non-zero; or two bodies: the second
     * (else) runs when it is zero (drivers from CUDA 12.8). */
    CUCORE_GRAPH_CONDITIONAL_IF = 1,
    /* One body, run again and again while the condition is non-zero (checked
     * before each run). */
    CUCORE_GRAPH_CONDITIONAL_WHILE = 2,
    /* `body_count` bodies; body n runs when the condition is n, none when it
     * is out of range (drivers from CUDA 12.8). */
    CUCORE_GRAPH_CONDITIONAL_SWITCH = 3,
    CUCORE_GRAPH_CONDITIONAL_TYPE_FORCE_INT32 = 0x7fffffff
} cucore_graph_conditional_type_t;

/* Flags of cucore_graph_definition_create_condition. */
typedef enum cucore_graph_condition_flag {
    CUCORE_GRAPH_CONDITION_DEFAULT = 0,
    /* The condition is set to `default_value` at the start of every launch
     * (without it, it keeps the value of the last launch; initially 0). */
    CUCORE_GRAPH_CONDITION_SET_DEFAULT = 1,
    CUCORE_GRAPH_CONDITION_FLAG_FORCE_INT32 = 0x7fffffff
} cucore_graph_condition_flag_t;

/* Where an allocation node's memory lives. */
typedef enum cucore_graph_memory_type {
    CUCORE_GRAPH_MEMORY_DEFAULT = 0, /* device memory */
    CUCORE_GRAPH_MEMORY_DEVICE = 1,
    CUCORE_GRAPH_MEMORY_HOST = 2,    /* page-locked host memory (the driver decides whether it can) */
    CUCORE_GRAPH_MEMORY_TYPE_FORCE_INT32 = 0x7fffffff
} cucore_graph_memory_type_t;

/* An allocation node (cuda.core's GraphAllocOptions). */
typedef struct cucore_graph_alloc_options {
    uint32_t struct_size;
    cucore_graph_memory_type_t memory_type;
    /* Other devices given read-write access to the memory (ordinals), up to 8. */
    uint32_t peer_access_count;
    int32_t peer_access[8];
} cucore_graph_alloc_options_t;

#define CUCORE_GRAPH_ALLOC_OPTIONS_INIT \
    {(uint32_t)sizeof(cucore_graph_alloc_options_t), CUCORE_GRAPH_MEMORY_DEFAULT, 0, {0, 0, 0, 0, 0, 0, 0, 0}}

/* Flags of cucore_graph_complete_options_t (cuda.core's GraphCompleteOptions). */
typedef enum cucore_graph_complete_flag {
    CUCORE_GRAPH_COMPLETE_DEFAULT = 0,
    /* Memory allocated by the graph and not freed in it is freed before the
     * graph's next launch. */
    CUCORE_GRAPH_COMPLETE_AUTO_FREE_ON_LAUNCH = 1,
    /* The graph can be launched from the device. */
    CUCORE_GRAPH_COMPLETE_DEVICE_LAUNCH = 2,
    /* Kernel nodes run with their own priority attribute. */
    CUCORE_GRAPH_COMPLETE_USE_NODE_PRIORITY = 4,
    CUCORE_GRAPH_COMPLETE_FLAG_FORCE_INT32 = 0x7fffffff
} cucore_graph_complete_flag_t;

typedef struct cucore_graph_complete_options {
    uint32_t struct_size;
    uint32_t flags; /* cucore_graph_complete_flag_t bits */
    /* Not NULL: the graph is uploaded on this stream as part of instantiation
     * (the caller keeps the reference). */
    cucore_stream_t *upload_stream;
} cucore_graph_complete_options_t;

#define CUCORE_GRAPH_COMPLETE_OPTIONS_INIT {(uint32_t)sizeof(cucore_graph_complete_options_t), 0, NULL}

/* Flags of the DOT output (the driver's CU_GRAPH_DEBUG_DOT_FLAGS_* bits;
 * cuda.core's GraphDebugPrintOptions); 0 prints the default description. */
typedef enum cucore_graph_dot_flag {
    CUCORE_GRAPH_DOT_DEFAULT = 0,
    CUCORE_GRAPH_DOT_VERBOSE = 1 << 0,
    CUCORE_GRAPH_DOT_RUNTIME_TYPES = 1 << 1,
    CUCORE_GRAPH_DOT_KERNEL_NODE_PARAMS = 1 << 2,
    CUCORE_GRAPH_DOT_MEMCPY_NODE_PARAMS = 1 << 3,
    CUCORE_GRAPH_DOT_MEMSET_NODE_PARAMS = 1 << 4,
    CUCORE_GRAPH_DOT_HOST_NODE_PARAMS = 1 << 5,
    CUCORE_GRAPH_DOT_EVENT_NODE_PARAMS = 1 << 6,
    CUCORE_GRAPH_DOT_EXT_SEMAS_SIGNAL_NODE_PARAMS = 1 << 7,
    CUCORE_GRAPH_DOT_EXT_SEMAS_WAIT_NODE_PARAMS = 1 << 8,
    CUCORE_GRAPH_DOT_KERNEL_NODE_ATTRIBUTES = 1 << 9,
    CUCORE_GRAPH_DOT_HANDLES = 1 << 10,
    CUCORE_GRAPH_DOT_MEM_ALLOC_NODE_PARAMS = 1 << 11,
    CUCORE_GRAPH_DOT_MEM_FREE_NODE_PARAMS = 1 << 12,
    CUCORE_GRAPH_DOT_BATCH_MEM_OP_NODE_PARAMS = 1 << 13,
    CUCORE_GRAPH_DOT_EXTRA_TOPO_INFO = 1 << 14,
    CUCORE_GRAPH_DOT_CONDITIONAL_NODE_PARAMS = 1 << 15,
    CUCORE_GRAPH_DOT_FLAG_FORCE_INT32 = 0x7fffffff
} cucore_graph_dot_flag_t;

/* The outcome of cucore_graph_update (the driver's CUgraphExecUpdateResult). */
typedef enum cucore_graph_update_result {
    CUCORE_GRAPH_UPDATE_SUCCESS = 0,
    CUCORE_GRAPH_UPDATE_ERROR = 1,
    CUCORE_GRAPH_UPDATE_TOPOLOGY_CHANGED = 2,
    CUCORE_GRAPH_UPDATE_NODE_TYPE_CHANGED = 3,
    CUCORE_GRAPH_UPDATE_FUNCTION_CHANGED = 4,
    CUCORE_GRAPH_UPDATE_PARAMETERS_CHANGED = 5,
    CUCORE_GRAPH_UPDATE_NOT_SUPPORTED = 6,
    CUCORE_GRAPH_UPDATE_UNSUPPORTED_FUNCTION_CHANGE = 7,
    CUCORE_GRAPH_UPDATE_ATTRIBUTES_CHANGED = 8,
    CUCORE_GRAPH_UPDATE_RESULT_FORCE_INT32 = 0x7fffffff
} cucore_graph_update_result_t;

CUCORE_EXTERN_C_BEGIN

/* ---- definitions ---------------------------------------------------------- */

/* Creates an empty graph definition whose nodes run on `device` (its primary
 * context) (+1 reference).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out), CUDA, OUT_OF_MEMORY. */
CUCORE_API cucore_status_t cucore_graph_definition_create(cucore_device_t *device,
                                                          cucore_graph_definition_t **definition);

/* Adds a reference. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_graph_definition_retain(cucore_graph_definition_t *definition);

/* Drops a reference; NULL is a no-op. The CUgraph is destroyed with the last
 * reference (nodes, bodies and builders hold one); a body or child graph
 * belongs to its node and goes with the definition that holds the node.
 * Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_graph_definition_release(cucore_graph_definition_t *definition);

/* The raw CUgraph (still owned by the definition).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_graph_definition_handle(const cucore_graph_definition_t *definition,
                                                          void **cu_graph);

/* The device whose primary context the definition's nodes run in (+1 reference).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_graph_definition_device(const cucore_graph_definition_t *definition,
                                                          cucore_device_t **device);

/* Whether the definition's CUgraph is its own (1) or a body or child graph
 * that belongs to a node of another definition (0).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_graph_definition_is_owned(const cucore_graph_definition_t *definition,
                                                            int *owned);

/* A copy of the definition with the same nodes and dependencies (cuGraphClone)
 * (+1 reference); it holds the same library objects.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out), CUDA. */
CUCORE_API cucore_status_t cucore_graph_definition_clone(cucore_graph_definition_t *definition,
                                                         cucore_graph_definition_t **clone);

/* Writes the definition as a Graphviz DOT file to `path` with
 * cucore_graph_dot_flag_t `flags`.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL or empty path, unknown
 * flags), CUDA (the driver could not write the file). */
CUCORE_API cucore_status_t cucore_graph_definition_debug_dot_print(cucore_graph_definition_t *definition,
                                                                   const char *path, uint32_t flags);

/* The definition's nodes: up to `capacity` new node handles (+1 each) in
 * `nodes` (may be NULL when capacity is 0) and their total in `count`.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL count, NULL nodes with a
 * non-zero capacity), CUDA. */
CUCORE_API cucore_status_t cucore_graph_definition_nodes(cucore_graph_definition_t *definition,
                                                         cucore_graph_node_t **nodes, size_t capacity,
                                                         size_t *count);

/* The definition's edges: up to `capacity` pairs (+1 each) with `from[i]`
 * before `to[i]`, and their total in `count`.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL count, NULL arrays with a
 * non-zero capacity), CUDA. */
CUCORE_API cucore_status_t cucore_graph_definition_edges(cucore_graph_definition_t *definition,
                                                         cucore_graph_node_t **from, cucore_graph_node_t **to,
                                                         size_t capacity, size_t *count);

/* Instantiates the definition as an executable graph (+1 reference) with
 * `options` (NULL: defaults). The graph holds what the definition holds.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out, bad struct_size,
 * unknown flags, an upload stream of another device), CUDA (the driver's
 * refusal, e.g. a definition the device cannot launch). */
CUCORE_API cucore_status_t cucore_graph_definition_instantiate(cucore_graph_definition_t *definition,
                                                               const cucore_graph_complete_options_t *options,
                                                               cucore_graph_t **graph);

/* A condition of this definition for conditional nodes (a
 * CUgraphConditionalHandle), to be passed to kernels as an 8-byte argument and
 * set there with cudaGraphSetConditional. `flags`: cucore_graph_condition_flag_t.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out, unknown flags),
 * NOT_SUPPORTED (driver before CUDA 12.3), CUDA. */
CUCORE_API cucore_status_t cucore_graph_definition_create_condition(cucore_graph_definition_t *definition,
                                                                    uint32_t default_value, uint32_t flags,
                                                                    uint64_t *condition);

/* ---- adding nodes (each gives a new node handle, +1) ----------------------- */

/* A node that does nothing (a join point). */
CUCORE_API cucore_status_t cucore_graph_definition_add_empty(cucore_graph_definition_t *definition,
                                                             cucore_graph_node_t *const *dependencies,
                                                             size_t dependency_count,
                                                             cucore_graph_node_t **node);

/* A kernel node: `kernel` with `config` (NULL: one thread) and arguments as in
 * cucore_launch (copied now; the count and sizes are checked the same way).
 * `config` gives grid, block and dynamic shared memory; cluster, cooperative,
 * programmatic-serialization and priority configurations are refused here
 * (they would be node attributes): capture a launch that has them instead.
 * Errors: as cucore_launch, plus INVALID_ARGUMENT (a dependency of another
 * definition, a cluster or flags in config), CUDA. */
CUCORE_API cucore_status_t cucore_graph_definition_add_kernel(cucore_graph_definition_t *definition,
                                                              cucore_graph_node_t *const *dependencies,
                                                              size_t dependency_count,
                                                              const cucore_launch_config_t *config,
                                                              cucore_kernel_t *kernel, const void *const *args,
                                                              const size_t *arg_sizes, size_t arg_count,
                                                              cucore_graph_node_t **node);

/* A copy node of `size` bytes from `src` at `src_offset` to `dst` at
 * `dst_offset` (both held by the definition).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (a range outside a buffer,
 * overflow), INVALID_STATE (a closed buffer), CUDA. */
CUCORE_API cucore_status_t cucore_graph_definition_add_memcpy(cucore_graph_definition_t *definition,
                                                              cucore_graph_node_t *const *dependencies,
                                                              size_t dependency_count, cucore_buffer_t *dst,
                                                              uint64_t dst_offset, cucore_buffer_t *src,
                                                              uint64_t src_offset, uint64_t size,
                                                              cucore_graph_node_t **node);

/* A strided 2D/3D copy node described as for cucore_copy_3d (its buffers are
 * held by the definition; host memory is the caller's to keep).
 * Errors: as cucore_copy_3d, plus CUDA. */
CUCORE_API cucore_status_t cucore_graph_definition_add_memcpy_3d(cucore_graph_definition_t *definition,
                                                                 cucore_graph_node_t *const *dependencies,
                                                                 size_t dependency_count,
                                                                 const cucore_copy_3d_t *copy,
                                                                 cucore_graph_node_t **node);

/* A fill node: `height` rows of `width` elements of `element_size` bytes (1, 2
 * or 4) set to `value`, rows `pitch` bytes apart (0: width * element_size),
 * starting at byte `offset` of `buffer` (held by the definition).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (element size, value wider than the
 * element, pitch below the row, a range outside the buffer), CUDA. */
CUCORE_API cucore_status_t cucore_graph_definition_add_memset(cucore_graph_definition_t *definition,
                                                              cucore_graph_node_t *const *dependencies,
                                                              size_t dependency_count, cucore_buffer_t *buffer,
                                                              uint64_t offset, uint32_t value,
                                                              uint32_t element_size, uint64_t width,
                                                              uint64_t height, uint64_t pitch,
                                                              cucore_graph_node_t **node);

/* A host callback node: `fn(user_data)` runs on a driver thread each time the
 * node runs (it must not call CUDA). `release(user_data)`, when not NULL, runs
 * once when the definition, its copies and graphs no longer need it (also
 * when this call fails).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL fn), CUDA. */
CUCORE_API cucore_status_t cucore_graph_definition_add_host_callback(cucore_graph_definition_t *definition,
                                                                     cucore_graph_node_t *const *dependencies,
                                                                     size_t dependency_count, cucore_host_fn fn,
                                                                     void *user_data, cucore_release_fn release,
                                                                     cucore_graph_node_t **node);

/* A node that records `event` (held by the definition). */
CUCORE_API cucore_status_t cucore_graph_definition_add_event_record(cucore_graph_definition_t *definition,
                                                                    cucore_graph_node_t *const *dependencies,
                                                                    size_t dependency_count,
                                                                    cucore_event_t *event,
                                                                    cucore_graph_node_t **node);

/* A node that waits for `event` (held by the definition). */
CUCORE_API cucore_status_t cucore_graph_definition_add_event_wait(cucore_graph_definition_t *definition,
                                                                  cucore_graph_node_t *const *dependencies,
                                                                  size_t dependency_count,
                                                                  cucore_event_t *event,
                                                                  cucore_graph_node_t **node);

/* A node that runs a copy of `child` (taken now; later changes to `child` do
 * not reach it). The copy holds what `child` holds.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (child is the definition itself),
 * CUDA (e.g. a child with allocation nodes). */
CUCORE_API cucore_status_t cucore_graph_definition_add_child_graph(cucore_graph_definition_t *definition,
                                                                   cucore_graph_node_t *const *dependencies,
                                                                   size_t dependency_count,
                                                                   cucore_graph_definition_t *child,
                                                                   cucore_graph_node_t **node);

/* An allocation node of `size` bytes (> 0) with `options` (NULL: device
 * memory of the definition's device); `address` gets the address the memory
 * has in every launch. The memory lives from this node until a free node
 * frees it (in this graph or a later one), or the graph's next launch when it
 * was instantiated with CUCORE_GRAPH_COMPLETE_AUTO_FREE_ON_LAUNCH.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out, size 0, bad options,
 * more than 8 peers, a peer that names no device), CUDA, OUT_OF_MEMORY. */
CUCORE_API cucore_status_t cucore_graph_definition_add_alloc(cucore_graph_definition_t *definition,
                                                             cucore_graph_node_t *const *dependencies,
                                                             size_t dependency_count, uint64_t size,
                                                             const cucore_graph_alloc_options_t *options,
                                                             cucore_graph_node_t **node, uint64_t *address);

/* A node that frees `address`, memory of an allocation node of this
 * definition (or graph memory allocated elsewhere).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out, address 0), CUDA. */
CUCORE_API cucore_status_t cucore_graph_definition_add_free(cucore_graph_definition_t *definition,
                                                            cucore_graph_node_t *const *dependencies,
                                                            size_t dependency_count, uint64_t address,
                                                            cucore_graph_node_t **node);

/* A conditional node of `type` on `condition` (from
 * cucore_graph_definition_create_condition of this definition) with
 * `body_count` bodies: IF 1 or 2 (then, else), WHILE 1, SWITCH >= 1. Each body
 * is an empty definition (+1 each in `bodies`) that belongs to the node: add
 * its nodes with these same functions.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out, a count the type does
 * not allow, condition 0), NOT_SUPPORTED (the driver lacks conditional nodes,
 * or IF with else or SWITCH: drivers before CUDA 12.8), CUDA. */
CUCORE_API cucore_status_t cucore_graph_definition_add_conditional(cucore_graph_definition_t *definition,
                                                                   cucore_graph_node_t *const *dependencies,
                                                                   size_t dependency_count, uint64_t condition,
                                                                   cucore_graph_conditional_type_t type,
                                                                   size_t body_count,
                                                                   cucore_graph_definition_t **bodies,
                                                                   cucore_graph_node_t **node);

/* ---- nodes ------------------------------------------------------------------ */

/* Adds a reference. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_graph_node_retain(cucore_graph_node_t *node);

/* Drops a reference; NULL is a no-op. The node stays in its definition.
 * Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_graph_node_release(cucore_graph_node_t *node);

/* Removes the node and its edges from its definition (cuGraphDestroyNode);
 * every handle of it is INVALID_STATE afterwards (release them as usual).
 * Errors: INVALID_HANDLE, INVALID_STATE (already destroyed), CUDA. */
CUCORE_API cucore_status_t cucore_graph_node_destroy(cucore_graph_node_t *node);

/* The raw CUgraphNode. Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), INVALID_STATE. */
CUCORE_API cucore_status_t cucore_graph_node_handle(const cucore_graph_node_t *node, void **cu_graph_node);

/* The node's kind. Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), INVALID_STATE, CUDA. */
CUCORE_API cucore_status_t cucore_graph_node_type(const cucore_graph_node_t *node,
                                                  cucore_graph_node_type_t *type);

/* The definition the node belongs to (+1 reference).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_graph_node_definition(const cucore_graph_node_t *node,
                                                        cucore_graph_definition_t **definition);

/* The nodes this node depends on (`dependencies`) or that depend on it
 * (`dependents`): up to `capacity` new handles (+1 each) and the total in
 * `count`. Errors: INVALID_HANDLE, INVALID_ARGUMENT, INVALID_STATE, CUDA. */
CUCORE_API cucore_status_t cucore_graph_node_dependencies(cucore_graph_node_t *node, cucore_graph_node_t **nodes,
                                                          size_t capacity, size_t *count);
CUCORE_API cucore_status_t cucore_graph_node_dependents(cucore_graph_node_t *node, cucore_graph_node_t **nodes,
                                                        size_t capacity, size_t *count);

/* Adds (removes) the edge making `to` depend on `from`; both of one definition.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (nodes of different definitions, a
 * node on itself), INVALID_STATE, CUDA (e.g. an edge that exists already, or
 * one that does not when removing). */
CUCORE_API cucore_status_t cucore_graph_node_add_dependent(cucore_graph_node_t *from, cucore_graph_node_t *to);
CUCORE_API cucore_status_t cucore_graph_node_remove_dependent(cucore_graph_node_t *from,
                                                              cucore_graph_node_t *to);

/* The node in `clone` (a clone of this node's definition) made from this node
 * (+1 reference). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out),
 * INVALID_STATE, CUDA (clone is not a clone of the node's definition). */
CUCORE_API cucore_status_t cucore_graph_node_find_in_clone(cucore_graph_node_t *node,
                                                           cucore_graph_definition_t *clone,
                                                           cucore_graph_node_t **clone_node);

/* A kernel node's launch configuration (grid, block, shared memory; the
 * cluster where the driver reports it) and kernel (+1 reference, may be NULL
 * for nodes of foreign code).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, not a kernel node), INVALID_STATE, CUDA. */
CUCORE_API cucore_status_t cucore_graph_node_kernel_config(cucore_graph_node_t *node,
                                                           cucore_launch_config_t *config,
                                                           cucore_kernel_t **kernel);

/* Replaces a kernel node's kernel (NULL: keep it), configuration and arguments.
 * Errors: as cucore_graph_definition_add_kernel, plus INVALID_ARGUMENT (not a kernel node). */
CUCORE_API cucore_status_t cucore_graph_node_set_kernel(cucore_graph_node_t *node,
                                                        const cucore_launch_config_t *config,
                                                        cucore_kernel_t *kernel, const void *const *args,
                                                        const size_t *arg_sizes, size_t arg_count);

/* Replaces a memcpy node's copy, as cucore_graph_definition_add_memcpy describes it.
 * Errors: as that call, plus INVALID_ARGUMENT (not a memcpy node). */
CUCORE_API cucore_status_t cucore_graph_node_set_memcpy(cucore_graph_node_t *node, cucore_buffer_t *dst,
                                                        uint64_t dst_offset, cucore_buffer_t *src,
                                                        uint64_t src_offset, uint64_t size);

/* Replaces a memset node's fill, as cucore_graph_definition_add_memset describes it.
 * Errors: as that call, plus INVALID_ARGUMENT (not a memset node). */
CUCORE_API cucore_status_t cucore_graph_node_set_memset(cucore_graph_node_t *node, cucore_buffer_t *buffer,
                                                        uint64_t offset, uint32_t value, uint32_t element_size,
                                                        uint64_t width, uint64_t height, uint64_t pitch);

/* Replaces a host callback node's function and data; `release` as in
 * cucore_graph_definition_add_host_callback.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL fn, not a host callback node), INVALID_STATE, CUDA. */
CUCORE_API cucore_status_t cucore_graph_node_set_host_callback(cucore_graph_node_t *node, cucore_host_fn fn,
                                                               void *user_data, cucore_release_fn release);

/* Makes an event record or event wait node record (wait for) `event`
 * instead of its event (cuGraphEventRecordNodeSetEvent,
 * cuGraphEventWaitNodeSetEvent). The definition holds `event` from here (the
 * caller keeps its reference); the event it replaces stays held until the
 * definition goes, since graphs instantiated before still use it.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (neither an event record nor an
 * event wait node), INVALID_STATE (a destroyed node), CUDA. */
CUCORE_API cucore_status_t cucore_graph_node_set_event(cucore_graph_node_t *node, cucore_event_t *event);

/* Replaces a child graph node's graph with a copy of `child` (taken now, as
 * cucore_graph_definition_add_child_graph takes it; cuGraphNodeSetParams,
 * drivers from CUDA 12.2). The definition holds what `child` holds from here
 * (the caller keeps its reference). The node's old graph is destroyed:
 * definitions of it got before (cucore_graph_node_bodies) and handles of its
 * nodes are INVALID_STATE afterwards (release them as usual).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (not a child graph node, `child`
 * of the node's own graph hierarchy: pass an independent definition, e.g. a
 * clone), INVALID_STATE (a destroyed node), NOT_SUPPORTED (a driver before
 * CUDA 12.2), CUDA (e.g. a child with allocation or conditional nodes). */
CUCORE_API cucore_status_t cucore_graph_node_set_child_graph(cucore_graph_node_t *node,
                                                             cucore_graph_definition_t *child);

/* An allocation node's address and size.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, not an allocation node), INVALID_STATE, CUDA. */
CUCORE_API cucore_status_t cucore_graph_node_alloc_info(cucore_graph_node_t *node, uint64_t *address,
                                                        uint64_t *size);

/* A conditional node's bodies: up to `capacity` definitions (+1 each) in
 * `bodies` and their number in `count`; a child graph node's graph likewise
 * (one body). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL count, neither a
 * conditional nor a child graph node), INVALID_STATE, CUDA. */
CUCORE_API cucore_status_t cucore_graph_node_bodies(cucore_graph_node_t *node, cucore_graph_definition_t **bodies,
                                                    size_t capacity, size_t *count);

/* ---- executable graphs ----------------------------------------------------- */

/* Adds a reference. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_graph_retain(cucore_graph_t *graph);

/* Drops a reference; NULL is a no-op. The CUgraphExec is destroyed with the
 * last one; launches in flight finish, and what the graph holds (its
 * definition's objects and what updates brought in) is released once every
 * stream it was launched on has run past them. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_graph_release(cucore_graph_t *graph);

/* The raw CUgraphExec. Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_graph_handle(const cucore_graph_t *graph, void **cu_graph_exec);

/* Launches the graph on `stream`. One driver call (cuGraphLaunch).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (a stream of another device), CUDA. */
CUCORE_API cucore_status_t cucore_graph_launch(cucore_graph_t *graph, cucore_stream_t *stream);

/* Uploads the graph's device work on `stream` ahead of a launch.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (a stream of another device), CUDA. */
CUCORE_API cucore_status_t cucore_graph_upload(cucore_graph_t *graph, cucore_stream_t *stream);

/* Updates the graph in place from `definition`, which must have the graph's
 * topology (cuGraphExecUpdate). `result` (may be NULL) gets the driver's
 * verdict; the message of a failure names it and the failing node's kind.
 * On success the graph holds what `definition` holds.
 * Errors: INVALID_HANDLE, INVALID_STATE (the update was refused: `result`
 * says why), CUDA. */
CUCORE_API cucore_status_t cucore_graph_update(cucore_graph_t *graph, cucore_graph_definition_t *definition,
                                               cucore_graph_update_result_t *result);

/* Per-node updates of the executable graph: `node` is a node of the
 * definition the graph was instantiated from (or its update source); the
 * definition itself is not changed. Arguments as for the matching
 * cucore_graph_node_set_* call.
 * Errors: as those calls, plus INVALID_ARGUMENT (a node of another
 * definition), CUDA (the driver refused the change). */
CUCORE_API cucore_status_t cucore_graph_set_kernel_node(cucore_graph_t *graph, cucore_graph_node_t *node,
                                                        const cucore_launch_config_t *config,
                                                        cucore_kernel_t *kernel, const void *const *args,
                                                        const size_t *arg_sizes, size_t arg_count);
CUCORE_API cucore_status_t cucore_graph_set_memcpy_node(cucore_graph_t *graph, cucore_graph_node_t *node,
                                                        cucore_buffer_t *dst, uint64_t dst_offset,
                                                        cucore_buffer_t *src, uint64_t src_offset,
                                                        uint64_t size);
CUCORE_API cucore_status_t cucore_graph_set_memset_node(cucore_graph_t *graph, cucore_graph_node_t *node,
                                                        cucore_buffer_t *buffer, uint64_t offset,
                                                        uint32_t value, uint32_t element_size, uint64_t width,
                                                        uint64_t height, uint64_t pitch);
CUCORE_API cucore_status_t cucore_graph_set_host_callback_node(cucore_graph_t *graph, cucore_graph_node_t *node,
                                                               cucore_host_fn fn, void *user_data,
                                                               cucore_release_fn release);

/* Makes an event record or event wait node of the graph record (wait for)
 * `event` in its future launches (cuGraphExecEventRecordNodeSetEvent,
 * cuGraphExecEventWaitNodeSetEvent); the definition is not changed. The graph
 * holds `event` from here (the caller keeps its reference).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (a node of another definition,
 * neither an event record nor an event wait node), INVALID_STATE (a destroyed
 * node), CUDA. */
CUCORE_API cucore_status_t cucore_graph_set_event_node(cucore_graph_t *graph, cucore_graph_node_t *node,
                                                       cucore_event_t *event);

/* Gives the nodes of a child graph node of the graph the parameters of
 * `child`'s nodes for its future launches (cuGraphExecChildGraphNodeSetParams);
 * `child` must have the topology of the node's graph, with its nodes added in
 * the same order. The definition is not changed. The graph holds what `child`
 * holds from here (the caller keeps its reference).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (a node of another definition, not
 * a child graph node), INVALID_STATE (a destroyed node), CUDA (the driver
 * refused the change, e.g. another topology). */
CUCORE_API cucore_status_t cucore_graph_set_child_graph_node(cucore_graph_t *graph, cucore_graph_node_t *node,
                                                             cucore_graph_definition_t *child);

/* Enables (1) or disables (0) a kernel, memcpy or memset node in the graph.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (another kind of node), CUDA. */
CUCORE_API cucore_status_t cucore_graph_set_node_enabled(cucore_graph_t *graph, cucore_graph_node_t *node,
                                                         int enabled);
CUCORE_API cucore_status_t cucore_graph_node_enabled(cucore_graph_t *graph, cucore_graph_node_t *node,
                                                     int *enabled);

CUCORE_EXTERN_C_END

#endif /* CUCORE_GRAPH_H */
