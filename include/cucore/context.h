/* libcucore: CUDA contexts.
 *
 * By default every object of a device lives in the device's primary context,
 * which the library retains while any such object lives. A foreign CUcontext
 * (created by other code) can be wrapped without taking ownership, and streams
 * and events can be created in it. A green context (cucore_context_create) runs
 * its work only on the resources it was made from (device_resources.h).
 */
#ifndef CUCORE_CONTEXT_H
#define CUCORE_CONTEXT_H

#include "common.h"

/* What a green context is made from (cuda.core's ContextOptions): SM resources
 * (groups and remainder of one split, or one resource as it came) and
 * workqueue resources, all of the one device. */
typedef struct cucore_context_options {
    uint32_t struct_size;
    uint32_t sm_resource_count;
    cucore_sm_resource_t *const *sm_resources; /* sm_resource_count handles */
    uint32_t workqueue_resource_count;
    uint32_t reserved; /* 0 */
    cucore_workqueue_resource_t *const *workqueue_resources; /* workqueue_resource_count handles */
} cucore_context_options_t;

#define CUCORE_CONTEXT_OPTIONS_INIT {(uint32_t)sizeof(cucore_context_options_t), 0, NULL, 0, 0, NULL}

CUCORE_EXTERN_C_BEGIN

/* Creates a green context on `device` from the resources of `options`
 * (cuDevResourceGenerateDesc, cuGreenCtxCreate with CU_GREEN_CTX_DEFAULT_STREAM,
 * cuCtxFromGreenCtx; +1 reference). The context holds its resources and device;
 * streams, events, buffers and kernels made on it hold the context, and the
 * green context is destroyed when the last of them goes. Its streams are made
 * with cuGreenCtxStreamCreate and are always non-blocking. The resources are
 * the caller's still (the context keeps its own references).
 * Errors: INVALID_HANDLE (device, a resource), INVALID_ARGUMENT (NULL, bad
 * options: no resource, more than one workqueue resource, resources of another
 * device, SM resources of different splits, an SM resource of no SMs; the rule
 * named), NOT_SUPPORTED (a driver without green contexts), CUDA, OUT_OF_MEMORY. */
CUCORE_API cucore_status_t cucore_context_create(cucore_device_t *device, const cucore_context_options_t *options,
                                                 cucore_context_t **context);

/* Whether this is a green context (1) or not (0).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_context_is_green(const cucore_context_t *context, int *is_green);

/* The raw CUgreenCtx of a green context (NULL for another context).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_context_green_handle(const cucore_context_t *context, void **cu_green_context);

/* The primary context of `device`, retained (cuDevicePrimaryCtxRetain) for as
 * long as the returned handle or any object made in it lives (+1 reference).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), CUDA. */
CUCORE_API cucore_status_t cucore_context_get_primary(cucore_device_t *device,
                                                      cucore_context_t **context);

/* The context current on the calling thread (cuCtxGetCurrent; +1 reference), or
 * NULL when none is (not an error). A device's primary context comes back as
 * the object cucore_context_get_primary gives while that one lives; another
 * context is wrapped without being owned, as cucore_context_from_handle does.
 * Errors: INVALID_ARGUMENT (NULL), NO_DRIVER, CUDA. */
CUCORE_API cucore_status_t cucore_context_get_current(cucore_context_t **context);

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

/* Whether this is the device's primary context (1) or another one (0).
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
