/* libcucore: CUDA events. */
#ifndef CUCORE_EVENT_H
#define CUCORE_EVENT_H

#include "common.h"

/* Flags for cucore_event_options_t.flags. Default (0): no timing, and a
 * synchronize spins rather than blocks (as in cuda.core). */
typedef enum cucore_event_flag {
    CUCORE_EVENT_DEFAULT = 0,
    /* Record timestamps so cucore_event_elapsed_time() works. */
    CUCORE_EVENT_TIMING = 1,
    /* cucore_event_synchronize() blocks the thread instead of spinning. */
    CUCORE_EVENT_BLOCKING_SYNC = 2,
    /* Shareable with other processes (cucore_ipc_export_event); not with TIMING. */
    CUCORE_EVENT_INTERPROCESS = 4,
    CUCORE_EVENT_FLAG_FORCE_INT32 = 0x7fffffff
} cucore_event_flag_t;

typedef struct cucore_event_options {
    uint32_t struct_size;
    uint32_t flags; /* cucore_event_flag_t bits */
} cucore_event_options_t;

#define CUCORE_EVENT_OPTIONS_INIT {(uint32_t)sizeof(cucore_event_options_t), 0}

CUCORE_EXTERN_C_BEGIN

/* Creates an event in `device`'s primary context (+1 reference).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out, bad struct_size, unknown
 * flags), CUDA, OUT_OF_MEMORY. */
CUCORE_API cucore_status_t cucore_event_create(cucore_device_t *device,
                                               const cucore_event_options_t *options,
                                               cucore_event_t **event);

/* Creates an event in `context` (+1 reference). Errors: as cucore_event_create. */
CUCORE_API cucore_status_t cucore_event_create_in_context(cucore_context_t *context,
                                                          const cucore_event_options_t *options,
                                                          cucore_event_t **event);

/* Wraps a foreign CUevent without owning it (+1 reference), in the calling
 * thread's current context (which is retained). Its flags are unknown to the
 * library and read as 0; elapsed-time errors then come from the driver. When
 * the last reference goes, `on_release(user_data)` is called if given (never when this call fails).
 * Errors: INVALID_ARGUMENT (NULL), NO_DRIVER, INVALID_STATE (no current
 * context), CUDA. */
CUCORE_API cucore_status_t cucore_event_from_handle(void *cu_event, cucore_release_fn on_release,
                                                    void *user_data, cucore_event_t **event);

/* Adds a reference. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_event_retain(cucore_event_t *event);

/* Drops a reference; the last one destroys an event the library created.
 * NULL is a no-op. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_event_release(cucore_event_t *event);

/* Records the event on `stream` (captures the work queued so far).
 * Errors: INVALID_HANDLE, CUDA (e.g. stream and event in different contexts). */
CUCORE_API cucore_status_t cucore_event_record(cucore_event_t *event, cucore_stream_t *stream);

/* Waits until the recorded work has completed (an event never recorded is
 * complete). Errors: INVALID_HANDLE, CUDA. */
CUCORE_API cucore_status_t cucore_event_synchronize(cucore_event_t *event);

/* Whether the recorded work has completed (1) or not (0).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), CUDA. */
CUCORE_API cucore_status_t cucore_event_query(cucore_event_t *event, int *done);

/* Milliseconds between `start` and `end` (both recorded and complete).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), INVALID_STATE (either event
 * was created without CUCORE_EVENT_TIMING, or was never recorded), NOT_READY
 * (either has not completed yet), CUDA. */
CUCORE_API cucore_status_t cucore_event_elapsed_time(cucore_event_t *start, cucore_event_t *end,
                                                     float *milliseconds);

/* The event's cucore_event_flag_t bits (0 for wrapped events).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_event_flags(const cucore_event_t *event, uint32_t *flags);

/* The event's device (+1 reference). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_event_device(const cucore_event_t *event,
                                               cucore_device_t **device);

/* The event's context (+1 reference). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_event_context(const cucore_event_t *event,
                                                cucore_context_t **context);

/* The raw CUevent. From then on its driver event is never reused by the library (cucore_event_reset
 * replaces it). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_event_handle(const cucore_event_t *event, void **cu_event);

/* Makes `event` answer as a newly created event of the same flags, context and device: never recorded, with
 * a driver event no one else uses (its own when the library's rules of reuse allow it, else a spare or a new
 * one, the old one destroyed or kept for reuse). For bindings that keep the events their users release and
 * hand them out again instead of creating new ones (one call in place of a release and a create).
 * The caller keeps its reference, which must be the only one: the library's (a graph, a capture) and every
 * other user reference make it INVALID_STATE, and the event is unchanged (release it instead).
 * Errors: INVALID_HANDLE, INVALID_STATE (another holder; a foreign event from cucore_event_from_handle),
 * OUT_OF_MEMORY or CUDA (making a new driver event; the event is then unchanged). */
CUCORE_API cucore_status_t cucore_event_reset(cucore_event_t *event);

CUCORE_EXTERN_C_END

#endif /* CUCORE_EVENT_H */
