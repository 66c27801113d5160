/* libcucore: CUDA contexts.
 *
 * By default every object of a device lives in the device's primary context,
 * which the library retains while any such object lives. A foreign CUcontext
 * (created by other code) can be wrapped without taking ownership, and streams
 * and events can be created in it.
 */
#ifndef CUCORE_CONTEXT_H
#define CUCORE_CONTEXT_H

#include "common.h"

CUCORE_EXTERN_C_BEGIN

/* The primary context of `device`, retained (cuDevicePrimaryCtxRetain) for as
 * long as the returned handle or any object made in it lives (+1 reference).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), CUDA. */
CUCORE_API cucore_status_t cucore_context_get_primary(cucore_device_t *device,
                                                      cucore_context_t **context);

/* Wraps a foreign CUcontext without owning it (+1 reference). When the last
 * reference goes, `on_release(user_data)` is called if given (never when this call fails), and nothing else
 * is done to the context. Errors: INVALID_ARGUMENT (NULL), NO_DRIVER, CUDA
 * (the driver rejects the context). */
CUCORE_API cucore_status_t cucore_context_from_handle(void *cu_context, cucore_release_fn on_release,
                                                      void *user_data,
                                                      cucore_context_t **context);

/* Adds a reference. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_context_retain(cucore_context_t *context);

/* Drops a reference; NULL is a no-op. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_context_release(cucore_context_t *context);

/* The raw CUcontext. Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_context_handle(const cucore_context_t *context,
                                                 void **cu_context);

/* The context's device (+1 reference). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_context_device(const cucore_context_t *context,
                                                 cucore_device_t **device);

/* Whether this is the device's primary context (1) or a foreign one (0).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_context_is_primary(const cucore_context_t *context,
                                                     int *is_primary);

/* Makes the context current on the calling thread (cuCtxSetCurrent). The
 * caller manages what is current afterwards. Errors: INVALID_HANDLE, CUDA. */
CUCORE_API cucore_status_t cucore_context_set_current(cucore_context_t *context);

/* Waits for all work in the context. Errors: INVALID_HANDLE, CUDA. */
CUCORE_API cucore_status_t cucore_context_synchronize(cucore_context_t *context);

CUCORE_EXTERN_C_END

#endif /* CUCORE_CONTEXT_H */
