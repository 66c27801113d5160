/* libcucore: CUDA streams.
 *
 * A stream holds its context (and through it its device), so it stays usable
 * whatever else the caller releases.
 */
#ifndef CUCORE_STREAM_H
#define CUCORE_STREAM_H

#include "common.h"
#include "event.h"

/* Flags for cucore_stream_options_t.flags. */
typedef enum cucore_stream_flag {
    /* Default (0): a non-blocking stream (CU_STREAM_NON_BLOCKING), as in
     * cuda.core, which does not synchronize with the legacy default stream. */
    CUCORE_STREAM_DEFAULT = 0,
    /* A blocking stream (CU_STREAM_DEFAULT): work on it synchronizes with the
     * legacy default stream. */
    CUCORE_STREAM_BLOCKING = 1,
    CUCORE_STREAM_FLAG_FORCE_INT32 = 0x7fffffff
} cucore_stream_flag_t;

typedef struct cucore_stream_options {
    uint32_t struct_size;
    uint32_t flags;   /* cucore_stream_flag_t bits; 0: non-blocking */
    /* Priority: 0 is the default (lowest); lower numbers are higher priority,
     * down to the `greatest` of cucore_stream_priority_range(). Values outside
     * the range are clamped by the driver. */
    int32_t priority;
} cucore_stream_options_t;

#define CUCORE_STREAM_OPTIONS_INIT {(uint32_t)sizeof(cucore_stream_options_t), 0, 0}

/* Whether a stream is being captured into a graph (the driver's CUstreamCaptureStatus). */
typedef enum cucore_capture_status {
    CUCORE_CAPTURE_STATUS_NONE = 0,
    CUCORE_CAPTURE_STATUS_ACTIVE = 1,
    /* Capturing, but a call that cannot be captured ended it: end the capture. */
    CUCORE_CAPTURE_STATUS_INVALIDATED = 2,
    CUCORE_CAPTURE_STATUS_FORCE_INT32 = 0x7fffffff
} cucore_capture_status_t;

/* A host function for cucore_stream_launch_host_func(). It must not call CUDA. */
typedef void (*cucore_host_fn)(void *user_data);

CUCORE_EXTERN_C_BEGIN

/* Creates a stream in `device`'s primary context (+1 reference).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out, bad struct_size or
 * unknown flags), CUDA, OUT_OF_MEMORY. */
CUCORE_API cucore_status_t cucore_stream_create(cucore_device_t *device,
                                                const cucore_stream_options_t *options,
                                                cucore_stream_t **stream);

/* Creates a stream in `context` (+1 reference). Errors: as cucore_stream_create. */
CUCORE_API cucore_status_t cucore_stream_create_in_context(cucore_context_t *context,
                                                           const cucore_stream_options_t *options,
                                                           cucore_stream_t **stream);

/* The legacy default stream (CU_STREAM_LEGACY) bound to `device`'s primary
 * context (+1 reference; releasing it destroys nothing).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), CUDA. */
CUCORE_API cucore_status_t cucore_stream_get_legacy_default(cucore_device_t *device,
                                                            cucore_stream_t **stream);

/* The per-thread default stream (CU_STREAM_PER_THREAD) bound to `device`'s
 * primary context (+1 reference). Errors: as above. */
CUCORE_API cucore_status_t cucore_stream_get_per_thread_default(cucore_device_t *device,
                                                                cucore_stream_t **stream);

/* Wraps a foreign CUstream without owning it (+1 reference); its context is
 * asked from the driver and retained. When the last reference goes,
 * `on_release(user_data)` is called if given (never when this call fails). CU_STREAM_LEGACY (1) and
 * CU_STREAM_PER_THREAD (2) are accepted and bound to the current context.
 * Errors: INVALID_ARGUMENT (NULL out), NO_DRIVER, CUDA (not a stream). */
CUCORE_API cucore_status_t cucore_stream_from_handle(void *cu_stream, cucore_release_fn on_release,
                                                     void *user_data, cucore_stream_t **stream);

/* Adds a reference. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_stream_retain(cucore_stream_t *stream);

/* Drops a reference; the last one destroys a stream the library created
 * (after its pending work, as cuStreamDestroy does). NULL is a no-op.
 * Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_stream_release(cucore_stream_t *stream);

/* Waits until all work queued on the stream has completed.
 * Errors: INVALID_HANDLE, CUDA (an asynchronous error from that work). */
CUCORE_API cucore_status_t cucore_stream_synchronize(cucore_stream_t *stream);

/* Whether all queued work has completed (1) or not (0).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), CUDA. */
CUCORE_API cucore_status_t cucore_stream_query(cucore_stream_t *stream, int *done);

/* Makes future work on `stream` wait for `event`'s last recorded work.
 * Errors: INVALID_HANDLE, CUDA. */
CUCORE_API cucore_status_t cucore_stream_wait_event(cucore_stream_t *stream, cucore_event_t *event);

/* Makes future work on `stream` wait for all work queued on `other` so far
 * (records a temporary event on `other`). Works across devices.
 * Errors: INVALID_HANDLE, CUDA. */
CUCORE_API cucore_status_t cucore_stream_wait_stream(cucore_stream_t *stream, cucore_stream_t *other);

/* Creates an event with `options` (NULL: defaults) in the stream's context,
 * records it on the stream and returns it in *event (+1 reference).
 * To record an existing event use cucore_event_record().
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT, CUDA. */
CUCORE_API cucore_status_t cucore_stream_record(cucore_stream_t *stream,
                                                const cucore_event_options_t *options,
                                                cucore_event_t **event);

/* Queues `fn(user_data)` on the stream (cuLaunchHostFunc): it runs on a driver
 * thread after all earlier work and blocks later work until it returns.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL fn), CUDA. */
CUCORE_API cucore_status_t cucore_stream_launch_host_func(cucore_stream_t *stream, cucore_host_fn fn,
                                                          void *user_data);

/* The stream's device (+1 reference). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_stream_device(const cucore_stream_t *stream,
                                                cucore_device_t **device);

/* The stream's context (+1 reference). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_stream_context(const cucore_stream_t *stream,
                                                 cucore_context_t **context);

/* The stream's priority. Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), CUDA. */
CUCORE_API cucore_status_t cucore_stream_priority(const cucore_stream_t *stream, int *priority);

/* The stream's cucore_stream_flag_t bits (CUCORE_STREAM_BLOCKING when it
 * synchronizes with the legacy default stream).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), CUDA. */
CUCORE_API cucore_status_t cucore_stream_flags(const cucore_stream_t *stream, uint32_t *flags);

/* Whether the stream was created by the library (1) or wrapped (0).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_stream_is_owned(const cucore_stream_t *stream, int *owned);

/* Whether `stream` is being captured into a graph (by a graph builder or by
 * foreign code), from the driver. Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), CUDA. */
CUCORE_API cucore_status_t cucore_stream_capture_status(cucore_stream_t *stream, cucore_capture_status_t *status);

/* The raw CUstream (CU_STREAM_LEGACY is (void*)1, CU_STREAM_PER_THREAD (void*)2).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_stream_handle(const cucore_stream_t *stream, void **cu_stream);

/* The range of stream priorities of `device`: `least` (the default, 0) and
 * `greatest` (the highest priority, a negative number).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), CUDA. */
CUCORE_API cucore_status_t cucore_stream_priority_range(cucore_device_t *device, int *least,
                                                        int *greatest);

CUCORE_EXTERN_C_END

#endif /* CUCORE_STREAM_H */
