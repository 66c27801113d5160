/* libcucore: CUDA devices and the driver.
 *
 * A device handle names one GPU by ordinal. Each call that returns a device
 * gives a new small handle object (compare devices by ordinal); what the driver
 * says about the device is read once per ordinal and shared. Getting a device
 * does not create a CUDA context.
 */
#ifndef CUCORE_DEVICE_H
#define CUCORE_DEVICE_H

#include "common.h"
#include "device_attributes.h"

/* A device's universally unique identifier, as the driver reports it. */
typedef struct cucore_uuid {
    unsigned char bytes[16];
} cucore_uuid_t;

/* The properties most programs want, read in one call. */
typedef struct cucore_device_properties {
    uint32_t struct_size; /* set by CUCORE_DEVICE_PROPERTIES_INIT */
    int ordinal;
    int compute_capability_major;
    int compute_capability_minor;
    int multiprocessor_count;
    int max_threads_per_block;
    int max_threads_per_multiprocessor;
    int warp_size;
    int max_shared_memory_per_block;          /* bytes */
    int max_shared_memory_per_multiprocessor; /* bytes */
    int l2_cache_size;                        /* bytes */
    int clock_rate_khz;
    int memory_clock_rate_khz;
    int memory_bus_width;                     /* bits */
    int pci_domain_id;
    int pci_bus_id;
    int pci_device_id;
    int integrated;                           /* 1 for an integrated GPU */
    int concurrent_managed_access;
    int memory_pools_supported;
    int cooperative_launch;
    int unified_addressing;
    uint64_t total_memory;                    /* bytes */
} cucore_device_properties_t;

/* Every field listed so that -Wextra users get no missing-initializer warning. */
#define CUCORE_DEVICE_PROPERTIES_INIT \
    {(uint32_t)sizeof(cucore_device_properties_t), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}

CUCORE_EXTERN_C_BEGIN

/* The CUDA driver's version (e.g. 13000 for 13.0) in *version.
 * Errors: INVALID_ARGUMENT (NULL), NO_DRIVER. */
CUCORE_API cucore_status_t cucore_driver_version(int *version);

/* The number of CUDA devices in *count; 0 with CUCORE_SUCCESS when a driver is
 * installed but no device is visible.
 * Errors: INVALID_ARGUMENT (NULL), NO_DRIVER, CUDA. */
CUCORE_API cucore_status_t cucore_device_count(int *count);

/* The device with `ordinal` in *device (+1 reference).
 * Errors: INVALID_ARGUMENT (NULL out, negative ordinal), NO_DRIVER, NO_DEVICE
 * (no device with that ordinal), CUDA. */
CUCORE_API cucore_status_t cucore_device_get(int ordinal, cucore_device_t **device);

/* The device of the calling thread's current context, or device 0 when no
 * context is current, in *device (+1 reference).
 * Errors: INVALID_ARGUMENT (NULL), NO_DRIVER, NO_DEVICE, CUDA. */
CUCORE_API cucore_status_t cucore_device_get_current(cucore_device_t **device);

/* Adds a reference. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_device_retain(cucore_device_t *device);

/* Drops a reference; NULL is a no-op. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_device_release(cucore_device_t *device);

/* The device's ordinal. Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_device_ordinal(const cucore_device_t *device, int *ordinal);

/* The raw CUdevice. Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_device_handle(const cucore_device_t *device, int *cu_device);

/* The device's name (NUL-terminated, owned by the device object and valid for
 * the life of the process). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), CUDA. */
CUCORE_API cucore_status_t cucore_device_name(const cucore_device_t *device, const char **name);

/* The device's PCI bus id, "dddd:bb:dd.f" (storage as for the name).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), CUDA. */
CUCORE_API cucore_status_t cucore_device_pci_bus_id(const cucore_device_t *device,
                                                    const char **pci_bus_id);

/* The device's UUID. Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), CUDA. */
CUCORE_API cucore_status_t cucore_device_uuid(const cucore_device_t *device, cucore_uuid_t *uuid);

/* The compute capability. Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), CUDA. */
CUCORE_API cucore_status_t cucore_device_compute_capability(const cucore_device_t *device,
                                                            int *major, int *minor);

/* Total device memory in bytes. Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), CUDA. */
CUCORE_API cucore_status_t cucore_device_total_memory(const cucore_device_t *device,
                                                      uint64_t *bytes);

/* Any device attribute (the driver's CUdevice_attribute values).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL value, attribute <= 0 or
 * beyond the last one cucore_device_attribute_t names), CUDA (the driver does
 * not know the attribute: CUDA_ERROR_INVALID_VALUE). */
CUCORE_API cucore_status_t cucore_device_attribute(const cucore_device_t *device,
                                                   cucore_device_attribute_t attribute,
                                                   int *value);

/* Fills `properties` (whose struct_size the caller sets; fields beyond it are
 * not written). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, struct_size too
 * small to hold `ordinal`), CUDA. */
CUCORE_API cucore_status_t cucore_device_properties(const cucore_device_t *device,
                                                    cucore_device_properties_t *properties);

/* Retains the device's primary context and makes it current on the calling
 * thread. The device keeps that context retained for the life of the process
 * (as the CUDA runtime and cuda.core do), so code on this thread may keep
 * using it through the raw driver. Errors: INVALID_HANDLE, CUDA. */
CUCORE_API cucore_status_t cucore_device_set_current(cucore_device_t *device);

/* Waits until all work in the device's primary context has completed.
 * Errors: INVALID_HANDLE, CUDA (an earlier asynchronous error). */
CUCORE_API cucore_status_t cucore_device_synchronize(cucore_device_t *device);

/* Whether `device` can access `peer`'s memory directly (1) or not (0).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL), CUDA. */
CUCORE_API cucore_status_t cucore_device_can_access_peer(const cucore_device_t *device,
                                                         const cucore_device_t *peer,
                                                         int *can_access);

/* Lets kernels and copies in `device`'s primary context reach memory of
 * `peer`'s primary context directly (cuCtxEnablePeerAccess): memory made by
 * cuMemAlloc there and foreign pointers. (Pool and virtual memory are granted
 * per resource: cucore_memory_resource_set_peer_access.) Lasts until disabled
 * or the process ends; enabling twice is no error. Copies between devices need
 * none of this: without it they go through the host.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, `peer` is `device`),
 * NOT_SUPPORTED (cucore_device_can_access_peer says 0), CUDA. */
CUCORE_API cucore_status_t cucore_device_enable_peer_access(cucore_device_t *device, cucore_device_t *peer);

/* Withdraws what cucore_device_enable_peer_access granted (cuCtxDisablePeerAccess).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, `peer` is `device`),
 * INVALID_STATE (not enabled), CUDA. */
CUCORE_API cucore_status_t cucore_device_disable_peer_access(cucore_device_t *device, cucore_device_t *peer);

CUCORE_EXTERN_C_END

#endif /* CUCORE_DEVICE_H */
