/* libcucore: system information through NVML (cuda.core's cuda.core.system).
 *
 * NVML (libnvidia-ml.so.1, or the path in CUCORE_NVML_PATH) is loaded at run
 * time like the driver, and initialised once on first use; where it is absent,
 * these calls fail with CUCORE_ERROR_NOT_SUPPORTED ("libnvidia-ml.so.1 could not
 * be loaded: ...") and the rest of the library works. An NVML failure names the
 * NVML function and nvmlErrorString's text in the message; its status is
 * NOT_SUPPORTED (the device or platform lacks the feature, or no permission),
 * INVALID_ARGUMENT (no such device), NO_DRIVER (the kernel driver is not
 * loaded), OUT_OF_MEMORY, NOT_READY, or CUDA for the others.
 *
 * A system device names one GPU as NVML sees it, by NVML index (which need not
 * be the CUDA ordinal: CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER change the
 * latter). Its name, UUID and PCI bus id are read once when the handle is made;
 * the other queries read the device's state at the time of the call.
 */
#ifndef CUCORE_SYSTEM_H
#define CUCORE_SYSTEM_H

#include "common.h"

/* A clock of a device (NVML's clock types). */
typedef enum cucore_system_clock {
    CUCORE_SYSTEM_CLOCK_UNSET = 0,
    CUCORE_SYSTEM_CLOCK_GRAPHICS = 1, /* the graphics clock */
    CUCORE_SYSTEM_CLOCK_SM = 2,       /* the streaming multiprocessors' clock */
    CUCORE_SYSTEM_CLOCK_MEMORY = 3,   /* the memory clock */
    CUCORE_SYSTEM_CLOCK_VIDEO = 4,    /* the video encoder/decoder clock */
    CUCORE_SYSTEM_CLOCK_FORCE_INT32 = 0x7fffffff
} cucore_system_clock_t;

/* Which processes may make contexts on a device (NVML's compute modes). */
typedef enum cucore_compute_mode {
    CUCORE_COMPUTE_MODE_UNSET = 0,
    CUCORE_COMPUTE_MODE_DEFAULT = 1,           /* any number of processes and contexts */
    CUCORE_COMPUTE_MODE_EXCLUSIVE_THREAD = 2,  /* one context, one thread (deprecated by NVIDIA) */
    CUCORE_COMPUTE_MODE_PROHIBITED = 3,        /* no contexts */
    CUCORE_COMPUTE_MODE_EXCLUSIVE_PROCESS = 4, /* one process */
    CUCORE_COMPUTE_MODE_FORCE_INT32 = 0x7fffffff
} cucore_compute_mode_t;

/* A device's PCI location and identifiers, as NVML reports them. */
typedef struct cucore_system_pci_info {
    uint32_t struct_size;      /* set by CUCORE_SYSTEM_PCI_INFO_INIT */
    uint32_t domain;           /* PCI domain */
    uint32_t bus;              /* PCI bus */
    uint32_t device;           /* PCI device (slot) */
    uint32_t pci_device_id;    /* the combined 16-bit device id and 16-bit vendor id */
    uint32_t pci_subsystem_id; /* the 32-bit subsystem id */
} cucore_system_pci_info_t;

/* Every field listed so that -Wextra users get no missing-initializer warning. */
#define CUCORE_SYSTEM_PCI_INFO_INIT {(uint32_t)sizeof(cucore_system_pci_info_t), 0, 0, 0, 0, 0}

/* A device's memory in bytes, as NVML reports it. */
typedef struct cucore_system_memory_info {
    uint32_t struct_size; /* set by CUCORE_SYSTEM_MEMORY_INFO_INIT */
    uint32_t reserved;    /* 0 */
    uint64_t total;       /* installed memory */
    uint64_t used;        /* allocated (includes what the driver reserves) */
    uint64_t free;        /* total - used */
} cucore_system_memory_info_t;

#define CUCORE_SYSTEM_MEMORY_INFO_INIT {(uint32_t)sizeof(cucore_system_memory_info_t), 0, 0, 0, 0}

/* What `used_memory` reads for a process whose memory NVML cannot see (e.g. in
 * a container without the host's process namespace). */
#define CUCORE_SYSTEM_MEMORY_NOT_AVAILABLE 0xffffffffffffffffULL

CUCORE_EXTERN_C_BEGIN

/* The kernel-mode driver's version text (e.g. "580.65.06"), copied into
 * (buffer, capacity) truncated and NUL-terminated; *length (if not NULL) gets
 * the whole length without the NUL, so a caller can size a second call.
 * Errors: INVALID_ARGUMENT (NULL buffer with a capacity), NOT_SUPPORTED (no NVML),
 * the NVML statuses above. */
CUCORE_API cucore_status_t cucore_system_driver_version(char *buffer, size_t capacity, size_t *length);

/* NVML's version text (e.g. "13.580.65.06"), like cucore_system_driver_version.
 * Errors: as cucore_system_driver_version. */
CUCORE_API cucore_status_t cucore_system_nvml_version(char *buffer, size_t capacity, size_t *length);

/* The newest CUDA version the installed driver supports, as NVML reports it
 * (e.g. 13000 for 13.0; the same number as cucore_driver_version, read without
 * loading libcuda). Errors: INVALID_ARGUMENT (NULL), NOT_SUPPORTED (no NVML), NVML. */
CUCORE_API cucore_status_t cucore_system_cuda_driver_version(int *version);

/* The number of GPUs NVML sees in *count (every GPU of the machine, whatever
 * CUDA_VISIBLE_DEVICES says). Errors: INVALID_ARGUMENT (NULL), NOT_SUPPORTED (no NVML), NVML. */
CUCORE_API cucore_status_t cucore_system_device_count(unsigned int *count);

/* The GPU of NVML index `index` in *device (new handle, caller owns it).
 * Errors: INVALID_ARGUMENT (NULL out; `index` not below the count),
 * NOT_SUPPORTED (no NVML), NVML. */
CUCORE_API cucore_status_t cucore_system_device_get(unsigned int index, cucore_system_device_t **device);

/* The GPU whose UUID is `uuid` ("GPU-8e9c3a6b-...", as cucore_system_device_uuid
 * gives it) in *device (new handle, caller owns it).
 * Errors: INVALID_ARGUMENT (NULL; empty; no such GPU), NOT_SUPPORTED (no NVML), NVML. */
CUCORE_API cucore_status_t cucore_system_device_get_by_uuid(const char *uuid, cucore_system_device_t **device);

/* The GPU at PCI bus id `pci_bus_id` ("0000:65:00.0"; "65:00.0" is taken too)
 * in *device (new handle, caller owns it).
 * Errors: INVALID_ARGUMENT (NULL; empty; no such GPU), NOT_SUPPORTED (no NVML), NVML. */
CUCORE_API cucore_status_t cucore_system_device_get_by_pci_bus_id(const char *pci_bus_id,
                                                                  cucore_system_device_t **device);

/* The NVML view of a CUDA device (matched by UUID) in *system_device (new
 * handle, caller owns it; `device` is only read).
 * Errors: INVALID_ARGUMENT (NULL out), INVALID_HANDLE, NOT_SUPPORTED (no NVML),
 * INVALID_ARGUMENT (NVML does not see that GPU), NVML. */
CUCORE_API cucore_status_t cucore_system_device_get_for_device(const cucore_device_t *device,
                                                               cucore_system_device_t **system_device);

/* Adds a reference to a system device. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_system_device_retain(cucore_system_device_t *device);

/* Drops a reference (NULL is a no-op). Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_system_device_release(cucore_system_device_t *device);

/* The CUDA device of the same GPU (matched by UUID) in *cuda_device (new handle,
 * caller owns it). Errors: INVALID_ARGUMENT (NULL), INVALID_HANDLE, NO_DRIVER,
 * INVALID_ARGUMENT (the GPU is not visible to CUDA, e.g. hidden by
 * CUDA_VISIBLE_DEVICES), CUDA. */
CUCORE_API cucore_status_t cucore_system_device_to_device(const cucore_system_device_t *device,
                                                          cucore_device_t **cuda_device);

/* The device's NVML handle (nvmlDevice_t) in *nvml_device, for calls of NVML
 * this library does not wrap; valid for the life of the process (libcucore keeps
 * NVML initialised). Errors: INVALID_ARGUMENT (NULL), INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_system_device_handle(const cucore_system_device_t *device, void **nvml_device);

/* The device's NVML index in *index. Errors: INVALID_ARGUMENT (NULL), INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_system_device_index(const cucore_system_device_t *device, unsigned int *index);

/* The device's name (e.g. "NVIDIA H100 80GB HBM3") in *name: owned by the
 * handle, valid while it lives. Errors: INVALID_ARGUMENT (NULL), INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_system_device_name(const cucore_system_device_t *device, const char **name);

/* The device's UUID text ("GPU-" and 32 hex digits in groups) in *uuid: owned
 * by the handle, valid while it lives. Errors: INVALID_ARGUMENT (NULL), INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_system_device_uuid(const cucore_system_device_t *device, const char **uuid);

/* The device's PCI bus id ("00000000:65:00.0": NVML writes an 8-digit domain)
 * in *pci_bus_id: owned by the handle, valid while it lives.
 * Errors: INVALID_ARGUMENT (NULL), INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_system_device_pci_bus_id(const cucore_system_device_t *device,
                                                           const char **pci_bus_id);

/* The device's PCI location and identifiers into *info (its struct_size set
 * by CUCORE_SYSTEM_PCI_INFO_INIT; an older, smaller struct gets the fields it has).
 * Errors: INVALID_ARGUMENT (NULL; struct_size unset), INVALID_HANDLE, NVML. */
CUCORE_API cucore_status_t cucore_system_device_pci_info(const cucore_system_device_t *device,
                                                         cucore_system_pci_info_t *info);

/* The device's memory now into *info (struct_size set by CUCORE_SYSTEM_MEMORY_INFO_INIT).
 * Errors: INVALID_ARGUMENT (NULL; struct_size unset), INVALID_HANDLE, NVML. */
CUCORE_API cucore_status_t cucore_system_device_memory_info(const cucore_system_device_t *device,
                                                            cucore_system_memory_info_t *info);

/* The percentage of the last sample period (1/6 s to 1 s, by product) in which
 * a kernel ran (*gpu_percent) and device memory was read or written
 * (*memory_percent). Errors: INVALID_ARGUMENT (NULL), INVALID_HANDLE, NVML. */
CUCORE_API cucore_status_t cucore_system_device_utilization(const cucore_system_device_t *device,
                                                            unsigned int *gpu_percent, unsigned int *memory_percent);

/* The GPU die's temperature in degrees Celsius in *celsius.
 * Errors: INVALID_ARGUMENT (NULL), INVALID_HANDLE, NVML. */
CUCORE_API cucore_status_t cucore_system_device_temperature(const cucore_system_device_t *device,
                                                            unsigned int *celsius);

/* The board's power draw now in milliwatts in *milliwatts.
 * Errors: INVALID_ARGUMENT (NULL), INVALID_HANDLE, NOT_SUPPORTED (no power
 * readings on this product), NVML. */
CUCORE_API cucore_status_t cucore_system_device_power_usage(const cucore_system_device_t *device,
                                                            unsigned int *milliwatts);

/* The power limit the driver enforces now, in milliwatts, in *milliwatts.
 * Errors: as cucore_system_device_power_usage. */
CUCORE_API cucore_status_t cucore_system_device_power_limit(const cucore_system_device_t *device,
                                                            unsigned int *milliwatts);

/* The current frequency of clock `clock` in MHz in *mhz.
 * Errors: INVALID_ARGUMENT (NULL; `clock` not a cucore_system_clock_t), INVALID_HANDLE, NVML. */
CUCORE_API cucore_status_t cucore_system_device_clock(const cucore_system_device_t *device,
                                                      cucore_system_clock_t clock, unsigned int *mhz);

/* The highest frequency of clock `clock` in MHz in *mhz.
 * Errors: as cucore_system_device_clock. */
CUCORE_API cucore_status_t cucore_system_device_max_clock(const cucore_system_device_t *device,
                                                          cucore_system_clock_t clock, unsigned int *mhz);

/* The device's compute mode in *mode. Errors: INVALID_ARGUMENT (NULL), INVALID_HANDLE, NVML. */
CUCORE_API cucore_status_t cucore_system_device_compute_mode(const cucore_system_device_t *device,
                                                             cucore_compute_mode_t *mode);

/* The processes with a compute context on the device now: *count (required)
 * gets how many there are; the first min(count, capacity) go into pids[] and
 * used_memory[] (bytes each uses on the device, or
 * CUCORE_SYSTEM_MEMORY_NOT_AVAILABLE), which may be NULL when capacity is 0,
 * so a caller can size a second call (the list may change in between).
 * Errors: INVALID_ARGUMENT (NULL count; NULL array with a capacity), INVALID_HANDLE, NVML. */
CUCORE_API cucore_status_t cucore_system_device_processes(const cucore_system_device_t *device, uint32_t *pids,
                                                          uint64_t *used_memory, size_t capacity, size_t *count);

CUCORE_EXTERN_C_END

#endif /* CUCORE_SYSTEM_H */
