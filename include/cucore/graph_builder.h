/* libcucore: graph builders, graphs made by capturing the work of a stream
 * (cuda.core's GraphBuilder).
 *
 * A builder owns a stream (its own, or the one it was made from). Between
 * cucore_graph_builder_begin_building and cucore_graph_builder_end_building
 * everything the library enqueues on that stream (kernel launches, buffer
 * copies and fills, 3D and array copies, host functions, event records and
 * waits, allocations and frees of stream-ordered memory resources) becomes a
 * node of the builder's graph instead of running, and the library objects that
 * work uses are held by the graph (see graph.h). Calls that cannot be captured
 * fail with INVALID_STATE naming the call: those the library knows
 * (cucore_stream_synchronize on the capturing stream, synchronous copies to or
 * from the host on it) leave the capture going; those only the driver detects
 * invalidate the capture, and the next cucore_graph_builder_end_building fails
 * with INVALID_STATE and leaves the stream usable again.
 *
 * Forks and joins: cucore_graph_builder_split makes builders on new streams
 * that continue from the builder's current point; cucore_graph_builder_join
 * makes a builder wait for others, which are then done. Conditional bodies
 * (cucore_graph_builder_add_conditional) are builders capturing into the
 * body graphs of a conditional node; end each one before ending its parent.
 * Allocations inside captured graphs: graph_memory.h.
 */
#ifndef CUCORE_GRAPH_BUILDER_H
#define CUCORE_GRAPH_BUILDER_H

#include "graph.h"

/* How strictly other threads' unsafe calls are refused during capture (the
 * driver's CUstreamCaptureMode). */
typedef enum cucore_capture_mode {
    CUCORE_CAPTURE_MODE_DEFAULT = 0, /* relaxed, as cuda.core's default */
    CUCORE_CAPTURE_MODE_GLOBAL = 1,
    CUCORE_CAPTURE_MODE_THREAD_LOCAL = 2,
    CUCORE_CAPTURE_MODE_RELAXED = 3,
    CUCORE_CAPTURE_MODE_FORCE_INT32 = 0x7fffffff
} cucore_capture_mode_t;

CUCORE_EXTERN_C_BEGIN

/* A builder capturing on `stream` (held by the builder) (+1 reference). The
 * stream must be one this library made or wrapped, not the legacy default.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out, the legacy default
 * stream, which cannot capture), OUT_OF_MEMORY. */
CUCORE_API cucore_status_t cucore_graph_builder_create(cucore_stream_t *stream,
                                                       cucore_graph_builder_t **builder);

/* A builder on a new non-blocking stream of `device`'s primary context (+1).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out), CUDA, OUT_OF_MEMORY. */
CUCORE_API cucore_status_t cucore_graph_builder_create_on_device(cucore_device_t *device,
                                                                 cucore_graph_builder_t **builder);

/* Adds a reference. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_graph_builder_retain(cucore_graph_builder_t *builder);

/* Drops a reference; NULL is a no-op. A builder released while building ends
 * its capture and discards it. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_graph_builder_release(cucore_graph_builder_t *builder);

/* The builder's stream (+1 reference): enqueue work on it to capture it.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_graph_builder_stream(const cucore_graph_builder_t *builder,
                                                       cucore_stream_t **stream);

/* Starts capturing the builder's stream in `mode`.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (unknown mode), INVALID_STATE
 * (already building, already built, or the stream is being captured by
 * someone else), CUDA. */
CUCORE_API cucore_status_t cucore_graph_builder_begin_building(cucore_graph_builder_t *builder,
                                                               cucore_capture_mode_t mode);

/* Ends the capture; the builder then holds the captured definition.
 * Errors: INVALID_HANDLE, INVALID_STATE (not building; forked builders not
 * joined; conditional bodies still building; the capture was invalidated by a
 * call that cannot be captured: the stream is usable again and the builder is
 * not built), CUDA. */
CUCORE_API cucore_status_t cucore_graph_builder_end_building(cucore_graph_builder_t *builder);

/* Whether the builder is capturing (1) or not (0).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_graph_builder_is_building(const cucore_graph_builder_t *builder,
                                                            int *building);

/* The definition the builder captured (+1 reference); it can be changed,
 * instantiated and cloned like any other. Errors: INVALID_HANDLE,
 * INVALID_ARGUMENT (NULL), INVALID_STATE (not built yet). */
CUCORE_API cucore_status_t cucore_graph_builder_definition(cucore_graph_builder_t *builder,
                                                           cucore_graph_definition_t **definition);

/* Instantiates the captured definition (+1), as
 * cucore_graph_definition_instantiate. Errors: as that call, plus
 * INVALID_STATE (not built yet). */
CUCORE_API cucore_status_t cucore_graph_builder_complete(cucore_graph_builder_t *builder,
                                                         const cucore_graph_complete_options_t *options,
                                                         cucore_graph_t **graph);

/* Writes the captured definition as a DOT file, as
 * cucore_graph_definition_debug_dot_print. Errors: as that call, plus
 * INVALID_STATE (not built yet). */
CUCORE_API cucore_status_t cucore_graph_builder_debug_dot_print(cucore_graph_builder_t *builder,
                                                                const char *path, uint32_t flags);

/* Forks the capture into `count` (>= 1) builders (+1 each): builders[0] is
 * this builder, the others capture on new streams of the same context and
 * start from this builder's current point. Join them back before ending.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out, count 0), INVALID_STATE
 * (not building), CUDA, OUT_OF_MEMORY. */
CUCORE_API cucore_status_t cucore_graph_builder_split(cucore_graph_builder_t *builder, size_t count,
                                                      cucore_graph_builder_t **builders);

/* Makes `builder` wait for the work captured so far on each of `others`
 * (builders of the same capture), whose captures are then finished: they are
 * no longer building and cannot be used again.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL with a non-zero count,
 * builder among others), INVALID_STATE (a builder not building, or of another
 * capture), CUDA. */
CUCORE_API cucore_status_t cucore_graph_builder_join(cucore_graph_builder_t *builder,
                                                     cucore_graph_builder_t *const *others, size_t count);

/* A condition of the graph being captured, as
 * cucore_graph_definition_create_condition.
 * Errors: as that call, plus INVALID_STATE (not building). */
CUCORE_API cucore_status_t cucore_graph_builder_create_condition(cucore_graph_builder_t *builder,
                                                                 uint32_t default_value, uint32_t flags,
                                                                 uint64_t *condition);

/* Adds a conditional node on `condition` after the work captured so far, as
 * cucore_graph_definition_add_conditional describes the types and counts, and
 * gives one builder per body (+1 each in `bodies`), already building into that
 * body on a new stream: capture the body's work on it, then end it. Work
 * captured on `builder` afterwards runs after the conditional node.
 * Errors: as cucore_graph_definition_add_conditional, plus INVALID_STATE (not building). */
CUCORE_API cucore_status_t cucore_graph_builder_add_conditional(cucore_graph_builder_t *builder,
                                                                uint64_t condition,
                                                                cucore_graph_conditional_type_t type,
                                                                size_t body_count,
                                                                cucore_graph_builder_t **bodies);

/* Adds a child graph node running a copy of what `child` (a built builder)
 * captured, after the work captured so far on `builder`.
 * Errors: INVALID_HANDLE, INVALID_STATE (builder not building, child not
 * built), CUDA. */
CUCORE_API cucore_status_t cucore_graph_builder_embed(cucore_graph_builder_t *builder,
                                                      cucore_graph_builder_t *child);

/* Adds a host callback node after the work captured so far: `fn(user_data)`
 * and `release` as in cucore_graph_definition_add_host_callback (the capture
 * of cucore_stream_launch_host_func, with a release function).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL fn), INVALID_STATE (not building), CUDA. */
CUCORE_API cucore_status_t cucore_graph_builder_callback(cucore_graph_builder_t *builder, cucore_host_fn fn,
                                                         void *user_data, cucore_release_fn release);

CUCORE_EXTERN_C_END

#endif /* CUCORE_GRAPH_BUILDER_H */
