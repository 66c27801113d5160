/* libcucore: system information through NVML (cuda.core's cuda.core.system).
 *
 * NVML (libnvidia-ml.so.1) is loaded at run time like the driver; where it is
 * absent, these calls fail with a clear error and the rest of the library works.
 */
#ifndef CUCORE_SYSTEM_H
#define CUCORE_SYSTEM_H

#include "common.h"

CUCORE_EXTERN_C_BEGIN

/* Adds a reference to a system device. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_system_device_retain(cucore_system_device_t *device);

/* Drops a reference (NULL is a no-op). Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_system_device_release(cucore_system_device_t *device);

CUCORE_EXTERN_C_END

#endif /* CUCORE_SYSTEM_H */
