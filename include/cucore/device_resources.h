/* libcucore: the partitionable resources of a device and green contexts
 * (cuda.core's DeviceResources, SMResource, WorkqueueResource).
 *
 * A device, context or stream reports its SM and workqueue resources; SM
 * resources split into groups, and a context made from a set of resources (a
 * green context, context.h) runs its work only on them.
 */
#ifndef CUCORE_DEVICE_RESOURCES_H
#define CUCORE_DEVICE_RESOURCES_H

#include "common.h"

CUCORE_EXTERN_C_BEGIN

/* Adds a reference to an SM resource. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_sm_resource_retain(cucore_sm_resource_t *resource);

/* Drops a reference (NULL is a no-op). Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_sm_resource_release(cucore_sm_resource_t *resource);

/* Adds a reference to a workqueue resource. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_workqueue_resource_retain(cucore_workqueue_resource_t *resource);

/* Drops a reference (NULL is a no-op). Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_workqueue_resource_release(cucore_workqueue_resource_t *resource);

CUCORE_EXTERN_C_END

#endif /* CUCORE_DEVICE_RESOURCES_H */
