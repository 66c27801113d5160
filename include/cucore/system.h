/* libcucore: system information through NVML (cuda.core's cuda.core.system).
 *
 * NVML (libnvidia-ml.so.1, or the path in CUCORE_NVML_PATH) is loaded at run
 * time like the driver, and initialised once on first use; where it is absent,
 * these calls fail with CUCORE_ERROR_NOT_SUPPORTED ("libnvidia-ml.so.1 could not
 * be loaded: ...") and the rest of the library works. An NVML failure names the
 * NVML function and nvmlErrorString's text in the message; its status is
 * NOT_SUPPORTED (the device or platform lacks the feature, or no permission),
 * INVALID_ARGUMENT (no such device), NO_DRIVER (the kernel driver is not
 * loaded), OUT_OF_MEMORY, NOT_READY, or CUDA for the others; NVML's own
 * nvmlReturn_t is cucore_system_last_nvml_result().
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

/* A numeric property of a device, read by cucore_system_device_query. Each
 * names the NVML call it makes, its arguments (arg0, arg1; 0 where unused) and
 * the values it gives, in order. Enumerations and bit masks are NVML's own
 * numbers (nvml.h); "bool" values are 0 or 1. */
typedef enum cucore_system_query {
    CUCORE_SYSTEM_QUERY_UNSET = 0,
    CUCORE_SYSTEM_QUERY_ARCHITECTURE = 1,       /* nvmlDeviceGetArchitecture: nvmlDeviceArchitecture_t */
    CUCORE_SYSTEM_QUERY_BRAND = 2,              /* nvmlDeviceGetBrand: nvmlBrandType_t */
    CUCORE_SYSTEM_QUERY_MINOR_NUMBER = 3,       /* nvmlDeviceGetMinorNumber: N of /dev/nvidiaN */
    CUCORE_SYSTEM_QUERY_MODULE_ID = 4,          /* nvmlDeviceGetModuleId */
    CUCORE_SYSTEM_QUERY_NUMA_NODE_ID = 5,       /* nvmlDeviceGetNumaNodeId */
    CUCORE_SYSTEM_QUERY_C2C_ENABLED = 6,        /* nvmlDeviceGetC2cModeInfoV: bool */
    CUCORE_SYSTEM_QUERY_PERSISTENCE_MODE = 7,   /* nvmlDeviceGetPersistenceMode: bool */
    CUCORE_SYSTEM_QUERY_DISPLAY_CONNECTED = 8,  /* nvmlDeviceGetDisplayMode: bool */
    CUCORE_SYSTEM_QUERY_DISPLAY_ACTIVE = 9,     /* nvmlDeviceGetDisplayActive: bool */
    CUCORE_SYSTEM_QUERY_COMPUTE_CAPABILITY = 10, /* nvmlDeviceGetCudaComputeCapability: major, minor */
    CUCORE_SYSTEM_QUERY_ADDRESSING_MODE = 11,   /* nvmlDeviceGetAddressingMode: nvmlDeviceAddressingModeType_t */
    CUCORE_SYSTEM_QUERY_PERFORMANCE_STATE = 12, /* nvmlDeviceGetPerformanceState: 0..15, 32 unknown */
    CUCORE_SYSTEM_QUERY_SUPPORTED_PSTATES = 13, /* nvmlDeviceGetSupportedPerformanceStates: each supported P-state */
    CUCORE_SYSTEM_QUERY_CLOCK_EVENT_REASONS = 14, /* nvmlDeviceGetCurrentClocksEventReasons: bit mask */
    CUCORE_SYSTEM_QUERY_SUPPORTED_CLOCK_EVENT_REASONS = 15, /* nvmlDeviceGetSupportedClocksEventReasons: bit mask */
    CUCORE_SYSTEM_QUERY_SUPPORTED_EVENT_TYPES = 16, /* nvmlDeviceGetSupportedEventTypes: nvmlEventType bit mask */
    CUCORE_SYSTEM_QUERY_AUTO_BOOSTED_CLOCKS = 17, /* nvmlDeviceGetAutoBoostedClocksEnabled: enabled, default (bools) */
    CUCORE_SYSTEM_QUERY_CLOCK = 18,             /* nvmlDeviceGetClock(arg0 nvmlClockType_t, arg1 nvmlClockId_t): MHz */
    CUCORE_SYSTEM_QUERY_MAX_CLOCK = 19,         /* nvmlDeviceGetMaxClockInfo(arg0 clock type): MHz */
    CUCORE_SYSTEM_QUERY_MAX_CUSTOMER_BOOST_CLOCK = 20, /* nvmlDeviceGetMaxCustomerBoostClock(arg0 clock type): MHz */
    CUCORE_SYSTEM_QUERY_PSTATE_CLOCK_RANGE = 21, /* nvmlDeviceGetMinMaxClockOfPState(arg0 type, arg1 P-state): min, max MHz */
    CUCORE_SYSTEM_QUERY_CLOCK_OFFSETS = 22,     /* nvmlDeviceGetClockOffsets(arg0 type, arg1 P-state): offset, min, max MHz */
    CUCORE_SYSTEM_QUERY_FAN_COUNT = 23,         /* nvmlDeviceGetNumFans */
    CUCORE_SYSTEM_QUERY_FAN_SPEED = 24,         /* nvmlDeviceGetFanSpeed_v2(arg0 fan): percent */
    CUCORE_SYSTEM_QUERY_FAN_SPEED_RPM = 25,     /* nvmlDeviceGetFanSpeedRPM(arg0 fan): RPM */
    CUCORE_SYSTEM_QUERY_FAN_TARGET_SPEED = 26,  /* nvmlDeviceGetTargetFanSpeed(arg0 fan): percent */
    CUCORE_SYSTEM_QUERY_FAN_SPEED_RANGE = 27,   /* nvmlDeviceGetMinMaxFanSpeed: min, max percent */
    CUCORE_SYSTEM_QUERY_FAN_CONTROL_POLICY = 28, /* nvmlDeviceGetFanControlPolicy_v2(arg0 fan): nvmlFanControlPolicy_t */
    CUCORE_SYSTEM_QUERY_COOLER = 29,            /* nvmlDeviceGetCoolerInfo(arg0 cooler): signal type, target bit mask */
    CUCORE_SYSTEM_QUERY_ATTRIBUTES = 30,        /* nvmlDeviceGetAttributes_v2: multiprocessors, shared copy engines,
                                                 * decoders, encoders, JPEG, OFA, GPU instance slices, compute
                                                 * instance slices, memory MiB */
    CUCORE_SYSTEM_QUERY_BAR1_MEMORY = 31,       /* nvmlDeviceGetBAR1MemoryInfo: total, free, used bytes */
    CUCORE_SYSTEM_QUERY_MEMORY = 32,            /* nvmlDeviceGetMemoryInfo_v2: total, reserved, free, used bytes */
    CUCORE_SYSTEM_QUERY_PCI_INFO = 33,          /* nvmlDeviceGetPciInfoExt: domain, bus, device, device id << 16 |
                                                 * vendor id, subsystem id, base class, sub class */
    CUCORE_SYSTEM_QUERY_PCIE_MAX_LINK_GENERATION = 34,     /* nvmlDeviceGetMaxPcieLinkGeneration (device and system) */
    CUCORE_SYSTEM_QUERY_PCIE_GPU_MAX_LINK_GENERATION = 35, /* nvmlDeviceGetGpuMaxPcieLinkGeneration */
    CUCORE_SYSTEM_QUERY_PCIE_MAX_LINK_WIDTH = 36,          /* nvmlDeviceGetMaxPcieLinkWidth */
    CUCORE_SYSTEM_QUERY_PCIE_LINK_GENERATION = 37,         /* nvmlDeviceGetCurrPcieLinkGeneration */
    CUCORE_SYSTEM_QUERY_PCIE_LINK_WIDTH = 38,              /* nvmlDeviceGetCurrPcieLinkWidth */
    CUCORE_SYSTEM_QUERY_PCIE_THROUGHPUT = 39,   /* nvmlDeviceGetPcieThroughput(arg0 0 TX, 1 RX): KB/s */
    CUCORE_SYSTEM_QUERY_PCIE_REPLAY_COUNTER = 40, /* nvmlDeviceGetPcieReplayCounter */
    CUCORE_SYSTEM_QUERY_DYNAMIC_PSTATES = 41,   /* nvmlDeviceGetDynamicPstatesInfo: flags, then for each of 8
                                                 * domains: present (bool), percent, inc threshold, dec threshold */
    CUCORE_SYSTEM_QUERY_PROCESSES = 42,         /* nvmlDeviceGetComputeRunningProcesses_v3: for each process: pid,
                                                 * used bytes (CUCORE_SYSTEM_MEMORY_NOT_AVAILABLE as -1), GPU
                                                 * instance id, compute instance id */
    CUCORE_SYSTEM_QUERY_REPAIR_STATUS = 43,     /* nvmlDeviceGetRepairStatus: channel, TPC repair pending (bools) */
    CUCORE_SYSTEM_QUERY_TEMPERATURE_THRESHOLD = 44, /* nvmlDeviceGetTemperatureThreshold(arg0 threshold type): Celsius */
    CUCORE_SYSTEM_QUERY_TEMPERATURE_MARGIN = 45, /* nvmlDeviceGetMarginTemperature: Celsius */
    CUCORE_SYSTEM_QUERY_THERMAL_SETTINGS = 46,  /* nvmlDeviceGetThermalSettings(arg0 nvmlThermalTarget_t): for each
                                                 * sensor: controller, default min, default max, current (Celsius),
                                                 * target */
    CUCORE_SYSTEM_QUERY_INFOROM_CHECKSUM = 47,  /* nvmlDeviceGetInforomConfigurationChecksum */
    CUCORE_SYSTEM_QUERY_BBX_FLUSH_TIME = 48,    /* nvmlDeviceGetLastBBXFlushTime: timestamp, duration in us */
    CUCORE_SYSTEM_QUERY_NVLINK_COUNT = 49,      /* field NVML_FI_DEV_NVLINK_LINK_COUNT: links */
    CUCORE_SYSTEM_QUERY_NVLINK_VERSION = 50,    /* nvmlDeviceGetNvLinkVersion(arg0 link): nvmlNvlinkVersion_t */
    CUCORE_SYSTEM_QUERY_NVLINK_STATE = 51,      /* nvmlDeviceGetNvLinkState(arg0 link): active (bool) */
    CUCORE_SYSTEM_QUERY_MIG_MODE = 52,          /* nvmlDeviceGetMigMode: current, pending (bools) */
    CUCORE_SYSTEM_QUERY_IS_MIG_DEVICE = 53,     /* nvmlDeviceIsMigDeviceHandle: bool */
    CUCORE_SYSTEM_QUERY_MAX_MIG_DEVICES = 54,   /* nvmlDeviceGetMaxMigDeviceCount */
    CUCORE_SYSTEM_QUERY_CPU_AFFINITY = 55,      /* nvmlDeviceGetCpuAffinityWithinScope(arg0 nvmlAffinityScope_t):
                                                 * each CPU index of the ideal affinity */
    CUCORE_SYSTEM_QUERY_MEMORY_AFFINITY = 56,   /* nvmlDeviceGetMemoryAffinity(arg0 scope): each NUMA node or socket */
    CUCORE_SYSTEM_QUERY_FORCE_INT32 = 0x7fffffff
} cucore_system_query_t;

/* A text property of a device, read by cucore_system_device_text. */
typedef enum cucore_system_text {
    CUCORE_SYSTEM_TEXT_UNSET = 0,
    CUCORE_SYSTEM_TEXT_SERIAL = 1,                /* nvmlDeviceGetSerial: the board's serial number */
    CUCORE_SYSTEM_TEXT_BOARD_PART_NUMBER = 2,     /* nvmlDeviceGetBoardPartNumber */
    CUCORE_SYSTEM_TEXT_INFOROM_IMAGE_VERSION = 3, /* nvmlDeviceGetInforomImageVersion */
    CUCORE_SYSTEM_TEXT_INFOROM_VERSION = 4,       /* nvmlDeviceGetInforomVersion(arg nvmlInforomObject_t) */
    CUCORE_SYSTEM_TEXT_FORCE_INT32 = 0x7fffffff
} cucore_system_text_t;

/* A change to a device (or to the calling thread's affinity), made by
 * cucore_system_device_control; most need root. */
typedef enum cucore_system_control {
    CUCORE_SYSTEM_CONTROL_UNSET = 0,
    CUCORE_SYSTEM_CONTROL_PERSISTENCE_MODE = 1,  /* nvmlDeviceSetPersistenceMode(arg0 bool) */
    CUCORE_SYSTEM_CONTROL_SET_CPU_AFFINITY = 2,  /* nvmlDeviceSetCpuAffinity: binds the calling thread */
    CUCORE_SYSTEM_CONTROL_CLEAR_CPU_AFFINITY = 3, /* nvmlDeviceClearCpuAffinity */
    CUCORE_SYSTEM_CONTROL_FAN_SPEED = 4,         /* nvmlDeviceSetFanSpeed_v2(arg0 fan, arg1 percent) */
    CUCORE_SYSTEM_CONTROL_FAN_DEFAULT_SPEED = 5, /* nvmlDeviceSetDefaultFanSpeed_v2(arg0 fan) */
    CUCORE_SYSTEM_CONTROL_MIG_MODE = 6,          /* nvmlDeviceSetMigMode(arg0 bool); its activation status too */
    CUCORE_SYSTEM_CONTROL_VALIDATE_INFOROM = 7,  /* nvmlDeviceValidateInforom (fails CORRUPTED_INFOROM) */
    CUCORE_SYSTEM_CONTROL_FORCE_INT32 = 0x7fffffff
} cucore_system_control_t;

/* Devices related to a device, listed by cucore_system_device_related. */
typedef enum cucore_system_relation {
    CUCORE_SYSTEM_RELATION_UNSET = 0,
    CUCORE_SYSTEM_RELATION_NEAREST_GPUS = 1, /* nvmlDeviceGetTopologyNearestGpus(arg nvmlGpuTopologyLevel_t) */
    CUCORE_SYSTEM_RELATION_MIG_DEVICE = 2,   /* nvmlDeviceGetMigDeviceHandleByIndex(arg index): one device */
    CUCORE_SYSTEM_RELATION_MIG_PARENT = 3,   /* nvmlDeviceGetDeviceHandleFromMigDeviceHandle: one device */
    CUCORE_SYSTEM_RELATION_FORCE_INT32 = 0x7fffffff
} cucore_system_relation_t;

/* One field of nvmlDeviceGetFieldValues: the caller sets field_id (NVML's
 * NVML_FI_* number) and scope_id; the call sets the rest. `value` holds the
 * bits of the value of type `value_type` (NVML's nvmlValueType_t: 0 double,
 * 1 unsigned int, 2 unsigned long, 3 unsigned long long, 4 signed long long,
 * 5 signed int, 6 unsigned short), zero-extended; `result` is NVML's
 * nvmlReturn_t for this field alone. */
typedef struct cucore_system_field_value {
    uint32_t field_id;
    uint32_t scope_id;
    int64_t timestamp;    /* CPU time of the sample, microseconds since 1970 */
    int64_t latency_usec; /* how long NVML took to update it */
    int32_t value_type;
    int32_t result;
    uint64_t value;
} cucore_system_field_value_t;

/* One event of a device (nvmlEventData_t), from cucore_system_device_wait_event. */
typedef struct cucore_system_event {
    uint64_t event_type;          /* NVML's nvmlEventType bit (e.g. 0x8 XID critical error) */
    uint64_t event_data;          /* its data (for XID errors, the XID) */
    uint32_t gpu_instance_id;     /* the MIG GPU instance (0xFFFFFFFF: not MIG) */
    uint32_t compute_instance_id; /* the MIG compute instance */
} cucore_system_event_t;

/* System event types (NVML's nvmlSystemEventType bits), for
 * cucore_system_register_events: a GPU unbound from or bound to the driver. */
#define CUCORE_SYSTEM_EVENT_GPU_DRIVER_UNBIND 0x1ULL
#define CUCORE_SYSTEM_EVENT_GPU_DRIVER_BIND 0x2ULL

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

/* The nvmlReturn_t of the last cucore_system_* call on this thread that
 * failed in NVML (0 when that call failed before or outside NVML, or
 * succeeded): NVML_ERROR_LIBRARY_NOT_FOUND (12) where NVML is absent,
 * NVML_ERROR_FUNCTION_NOT_FOUND (13) where the installed NVML lacks an entry
 * point, else NVML's answer. Bindings read it to name NVML's error exactly.
 * Never fails. */
CUCORE_API int cucore_system_last_nvml_result(void);

/* The driver's branch (e.g. "r580_00"), like cucore_system_driver_version
 * (nvmlSystemGetDriverBranch). Errors: as cucore_system_driver_version. */
CUCORE_API cucore_status_t cucore_system_driver_branch(char *buffer, size_t capacity, size_t *length);

/* The name of process `pid` (nvmlSystemGetProcessName), like
 * cucore_system_driver_version. Errors: as cucore_system_driver_version
 * (NVML_ERROR_NOT_FOUND: no such process). */
CUCORE_API cucore_status_t cucore_system_process_name(unsigned int pid, char *buffer, size_t capacity,
                                                      size_t *length);

/* The GPUs with an affinity to CPU `cpu` (nvmlSystemGetTopologyGpuSet): *count
 * (required) gets how many there are; the first min(count, capacity) go into
 * devices[] as new handles the caller owns (devices may be NULL when capacity
 * is 0). Errors: INVALID_ARGUMENT (NULL count; NULL devices with a capacity),
 * NOT_SUPPORTED (no NVML), NVML. */
CUCORE_API cucore_status_t cucore_system_devices_with_cpu_affinity(unsigned int cpu, cucore_system_device_t **devices,
                                                                   size_t capacity, size_t *count);

/* Reads numeric property `query` of the device (see cucore_system_query_t for
 * the NVML call, arguments and values of each): *count (required) gets how
 * many values it has; the first min(count, capacity) go into values[] (NULL
 * when capacity is 0), so a caller can size a second call for the queries
 * whose length varies. Errors: INVALID_ARGUMENT (NULL count; NULL values with
 * a capacity; `query` unknown; an argument out of range), INVALID_HANDLE,
 * NOT_SUPPORTED (no NVML), NVML (NOT_SUPPORTED where the GPU lacks it). */
CUCORE_API cucore_status_t cucore_system_device_query(const cucore_system_device_t *device,
                                                      cucore_system_query_t query, int64_t arg0, int64_t arg1,
                                                      int64_t *values, size_t capacity, size_t *count);

/* Reads text property `text` of the device (cucore_system_text_t; `arg` its
 * argument, 0 where unused) into (buffer, capacity) as
 * cucore_system_driver_version does. Errors: INVALID_ARGUMENT (NULL buffer with
 * a capacity; `text` unknown), INVALID_HANDLE, NOT_SUPPORTED (no NVML), NVML. */
CUCORE_API cucore_status_t cucore_system_device_text(const cucore_system_device_t *device,
                                                     cucore_system_text_t text, int64_t arg, char *buffer,
                                                     size_t capacity, size_t *length);

/* Makes change `control` (cucore_system_control_t, with its arguments).
 * Errors: INVALID_ARGUMENT (`control` unknown; an argument out of range),
 * INVALID_HANDLE, NOT_SUPPORTED (no NVML; no permission: NVML's
 * NO_PERMISSION), NVML. */
CUCORE_API cucore_status_t cucore_system_device_control(cucore_system_device_t *device,
                                                        cucore_system_control_t control, int64_t arg0, int64_t arg1);

/* The devices of relation `relation` to the device (cucore_system_relation_t;
 * `arg` its argument): *count (required) gets how many; the first
 * min(count, capacity) go into devices[] as new handles the caller owns.
 * Errors: INVALID_ARGUMENT (NULL count; NULL devices with a capacity;
 * `relation` unknown), INVALID_HANDLE, NOT_SUPPORTED (no NVML), NVML. */
CUCORE_API cucore_status_t cucore_system_device_related(const cucore_system_device_t *device,
                                                        cucore_system_relation_t relation, int64_t arg,
                                                        cucore_system_device_t **devices, size_t capacity,
                                                        size_t *count);

/* Reads `count` fields at once (nvmlDeviceGetFieldValues): the caller sets
 * each field_id and scope_id of values[]; the call fills the rest of each,
 * with a result per field (a field NVML cannot read is not a failure of the
 * call). Errors: INVALID_ARGUMENT (NULL values with a count; count above
 * INT_MAX), INVALID_HANDLE, NOT_SUPPORTED (no NVML), NVML. */
CUCORE_API cucore_status_t cucore_system_device_field_values(const cucore_system_device_t *device,
                                                             cucore_system_field_value_t *values, size_t count);

/* Resets the fields values[i].field_id / scope_id to zero
 * (nvmlDeviceClearFieldValues; counters such as NVLink throughput); the other
 * members are ignored. Errors: as cucore_system_device_field_values. */
CUCORE_API cucore_status_t cucore_system_device_clear_field_values(cucore_system_device_t *device,
                                                                   const cucore_system_field_value_t *values,
                                                                   size_t count);

/* The P2P status of capability `caps_index` (NVML's nvmlGpuP2PCapsIndex_t)
 * between two devices in *status (nvmlGpuP2PStatus_t; 0 = OK)
 * (nvmlDeviceGetP2PStatus). Errors: INVALID_ARGUMENT (NULL), INVALID_HANDLE,
 * NOT_SUPPORTED (no NVML), NVML. */
CUCORE_API cucore_status_t cucore_system_device_p2p_status(const cucore_system_device_t *device,
                                                           const cucore_system_device_t *peer, int caps_index,
                                                           int *status);

/* The closest common ancestor of two devices in the PCI topology in *level
 * (NVML's nvmlGpuTopologyLevel_t: 0 internal, 10 single switch, 20 multiple,
 * 30 host bridge, 40 NUMA node, 50 system) (nvmlDeviceGetTopologyCommonAncestor).
 * Errors: as cucore_system_device_p2p_status. */
CUCORE_API cucore_status_t cucore_system_device_common_ancestor(const cucore_system_device_t *device,
                                                                const cucore_system_device_t *peer, int *level);

/* Starts recording the events of the bit mask `event_types` (NVML's
 * nvmlEventType bits; cucore_system_device_query(SUPPORTED_EVENT_TYPES) lists a
 * GPU's) in this handle's event set: each system device handle object has its
 * own (made by its first call, freed with the handle), so two handles of the
 * same GPU record separately and another call adds types to the same set.
 * Events before the call are not recorded. Linux only.
 * Errors: INVALID_ARGUMENT (no type), INVALID_HANDLE, NOT_SUPPORTED (no NVML; a
 * type the GPU lacks: NVML's NOT_SUPPORTED), NVML. */
CUCORE_API cucore_status_t cucore_system_device_register_events(cucore_system_device_t *device, uint64_t event_types);

/* Waits up to `timeout_ms` milliseconds (0: no limit) for the next event
 * recorded in this handle's set (nvmlEventSetWait_v2) and gives it in *event and
 * its GPU in *event_device (new handle, caller owns it; may be NULL when not
 * wanted). Errors: INVALID_ARGUMENT (NULL event; no events registered on this
 * handle), INVALID_HANDLE, NOT_READY (the timeout passed: NVML's TIMEOUT),
 * NOT_SUPPORTED (no NVML), NVML (GPU_IS_LOST, ...). */
CUCORE_API cucore_status_t cucore_system_device_wait_event(cucore_system_device_t *device, unsigned int timeout_ms,
                                                           cucore_system_event_t *event,
                                                           cucore_system_device_t **event_device);

/* Starts recording the system events of the bit mask `event_types`
 * (CUCORE_SYSTEM_EVENT_*: NVML's nvmlSystemEventType bits) in a new system
 * event set (nvmlSystemEventSetCreate, then nvmlSystemRegisterEvents) in
 * *event_set (new handle, caller owns it; the set is freed with
 * nvmlSystemEventSetFree when its last reference goes). Events before the call
 * are not recorded. Linux only.
 * Errors: INVALID_ARGUMENT (NULL out; no type), NOT_SUPPORTED (no NVML; an
 * NVML without system events: cucore_system_last_nvml_result() is
 * NVML_ERROR_FUNCTION_NOT_FOUND; none of the types can be recorded here, e.g.
 * on a virtual machine: NVML's NOT_SUPPORTED), NVML. */
CUCORE_API cucore_status_t cucore_system_register_events(uint64_t event_types,
                                                         cucore_system_event_set_t **event_set);

/* Adds a reference to a system event set. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_system_event_set_retain(cucore_system_event_set_t *event_set);

/* Drops a reference (NULL is a no-op); the last one frees the set. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_system_event_set_release(cucore_system_event_set_t *event_set);

/* Waits up to `timeout_ms` milliseconds (0: no limit) for events recorded in
 * the set (nvmlSystemEventSetWait; returns at once where some are ready) and
 * gives up to `capacity` of them in order: event_types[i] (a
 * CUCORE_SYSTEM_EVENT_* bit) and gpu_ids[i] (the GPU's PCI location as NVML
 * packs it: domain << 16 | bus << 8 | device); *count gets how many were
 * given (at most capacity; 0 where NVML returned early, e.g. on an interrupt).
 * Errors: INVALID_ARGUMENT (NULL count or arrays; capacity 0 or above
 * UINT32_MAX), INVALID_HANDLE, NOT_READY (the timeout passed with no event:
 * cucore_system_last_nvml_result() is NVML_ERROR_TIMEOUT, 10), NOT_SUPPORTED
 * (no NVML; an NVML without system events), NVML (GPU_IS_LOST, ...). */
CUCORE_API cucore_status_t cucore_system_event_set_wait(cucore_system_event_set_t *event_set, unsigned int timeout_ms,
                                                        uint64_t *event_types, uint32_t *gpu_ids, size_t capacity,
                                                        size_t *count);

CUCORE_EXTERN_C_END

#endif /* CUCORE_SYSTEM_H */
