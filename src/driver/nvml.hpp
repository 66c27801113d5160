// Run-time loading of NVML (libnvidia-ml.so.1), the driver's management
// library, for the system information of include/cucore/system.h. Opened and
// initialised (nvmlInit_v2) on first use, once, thread-safely, through
// driver::open_library with the override CUCORE_NVML_PATH; libcucore never
// links it. Absent: CUCORE_ERROR_NOT_SUPPORTED ("libnvidia-ml.so.1 could not be
// loaded: ...") from the call that needs it; everything else still works.
//
// No NVML header is needed to build: the few types used are declared below,
// mirroring NVML's C ABI (nvml.h of CUDA 12/13, NVML API version 12+; these
// layouts have not changed since NVML 11). Like the driver table, the NVML
// table has a substitute seam so unit tests install a fake (fault injection).
#pragma once

#include <string>

namespace cucore::driver {

namespace nvml {
using Return = int;              // nvmlReturn_t
struct DeviceOpaque;             // struct nvmlDevice_st
using Device = DeviceOpaque *;   // nvmlDevice_t

// nvmlReturn_t values libcucore tells apart (the rest are named by nvml_error_name).
constexpr Return kSuccess = 0;
constexpr Return kErrorUninitialized = 1;
constexpr Return kErrorInvalidArgument = 2;
constexpr Return kErrorNotSupported = 3;
constexpr Return kErrorNoPermission = 4;
constexpr Return kErrorNotFound = 6;
constexpr Return kErrorInsufficientSize = 7;
constexpr Return kErrorDriverNotLoaded = 9;
constexpr Return kErrorLibraryNotFound = 12;
constexpr Return kErrorFunctionNotFound = 13;
constexpr Return kErrorMemory = 20;
constexpr Return kErrorNotReady = 27;
constexpr Return kErrorGpuNotFound = 28;
constexpr Return kErrorUnknown = 999;

// nvmlPciInfo_t (what nvmlDeviceGetPciInfo_v3 fills).
struct PciInfo {
    char busIdLegacy[16];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char busId[32];
};
// nvmlMemory_t (nvmlDeviceGetMemoryInfo, version 1).
struct Memory {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};
// nvmlUtilization_t.
struct Utilization {
    unsigned int gpu;
    unsigned int memory;
};
// nvmlProcessInfo_t (nvmlDeviceGetComputeRunningProcesses_v3).
struct ProcessInfo {
    unsigned int pid;
    unsigned long long usedGpuMemory;  // kNotAvailable where NVML cannot see it
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
};
constexpr unsigned long long kNotAvailable = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE
// Buffer sizes NVML documents (NVML_*_BUFFER_SIZE).
constexpr unsigned kSystemDriverVersionSize = 80;
constexpr unsigned kSystemNvmlVersionSize = 80;
constexpr unsigned kDeviceNameSize = 96;  // _V2
constexpr unsigned kDeviceUuidSize = 96;  // _V2
// nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU; nvmlClockType_t values are
// GRAPHICS 0, SM 1, MEM 2, VIDEO 3; nvmlComputeMode_t DEFAULT 0,
// EXCLUSIVE_THREAD 1, PROHIBITED 2, EXCLUSIVE_PROCESS 3.
constexpr int kTemperatureGpu = 0;
}  // namespace nvml

// The entry points libcucore uses, with NVML's prototypes.
struct NvmlTable {
    nvml::Return (*nvmlInit_v2)() = nullptr;
    nvml::Return (*nvmlShutdown)() = nullptr;
    const char *(*nvmlErrorString)(nvml::Return) = nullptr;
    nvml::Return (*nvmlSystemGetDriverVersion)(char *, unsigned) = nullptr;
    nvml::Return (*nvmlSystemGetNVMLVersion)(char *, unsigned) = nullptr;
    nvml::Return (*nvmlSystemGetCudaDriverVersion_v2)(int *) = nullptr;
    nvml::Return (*nvmlDeviceGetCount_v2)(unsigned *) = nullptr;
    nvml::Return (*nvmlDeviceGetHandleByIndex_v2)(unsigned, nvml::Device *) = nullptr;
    nvml::Return (*nvmlDeviceGetHandleByUUID)(const char *, nvml::Device *) = nullptr;
    nvml::Return (*nvmlDeviceGetHandleByPciBusId_v2)(const char *, nvml::Device *) = nullptr;
    nvml::Return (*nvmlDeviceGetIndex)(nvml::Device, unsigned *) = nullptr;
    nvml::Return (*nvmlDeviceGetName)(nvml::Device, char *, unsigned) = nullptr;
    nvml::Return (*nvmlDeviceGetUUID)(nvml::Device, char *, unsigned) = nullptr;
    nvml::Return (*nvmlDeviceGetPciInfo_v3)(nvml::Device, nvml::PciInfo *) = nullptr;
    nvml::Return (*nvmlDeviceGetMemoryInfo)(nvml::Device, nvml::Memory *) = nullptr;
    nvml::Return (*nvmlDeviceGetUtilizationRates)(nvml::Device, nvml::Utilization *) = nullptr;
    nvml::Return (*nvmlDeviceGetTemperature)(nvml::Device, int, unsigned *) = nullptr;
    nvml::Return (*nvmlDeviceGetPowerUsage)(nvml::Device, unsigned *) = nullptr;
    nvml::Return (*nvmlDeviceGetEnforcedPowerLimit)(nvml::Device, unsigned *) = nullptr;
    nvml::Return (*nvmlDeviceGetClockInfo)(nvml::Device, int, unsigned *) = nullptr;
    nvml::Return (*nvmlDeviceGetMaxClockInfo)(nvml::Device, int, unsigned *) = nullptr;
    nvml::Return (*nvmlDeviceGetComputeMode)(nvml::Device, int *) = nullptr;
    nvml::Return (*nvmlDeviceGetComputeRunningProcesses_v3)(nvml::Device, unsigned *, nvml::ProcessInfo *) = nullptr;
};

// The NVML table, loaded and initialised on first call; throws
// driver::Error(NOT_SUPPORTED) naming what was tried when the library (or one
// of its entry points) is missing, or the mapped status when nvmlInit_v2 fails.
const NvmlTable &nvml_api();

// Throws the error of a failed NVML call: "<function> failed: NVML_ERROR_X
// (<nvmlErrorString>)", with the status of nvml_status.
[[noreturn]] void throw_nvml(nvml::Return result, const char *function);
inline void check_nvml(nvml::Return result, const char *function) {
    if (__builtin_expect(result != nvml::kSuccess, 0)) throw_nvml(result, function);
}
// The status an NVML result maps to (see include/cucore/system.h).
int nvml_status(nvml::Return result) noexcept;
// "NVML_ERROR_NOT_FOUND" for a result ("NVML error <n>" for one it does not know).
std::string nvml_error_name(nvml::Return result);

// Substitute seam for tests: `table` replaces the real one until called again
// with nullptr (its nvmlInit_v2 is not called). The table must outlive its
// installation. Not for use while other threads call NVML.
void install_nvml_substitute(const NvmlTable *table);
// Makes NVML read as not installed ("" message: a default one) until a
// substitute or nullptr is installed (tests of the NOT_SUPPORTED paths).
void mark_nvml_absent(const std::string &why);

[[noreturn]] void throw_nvml_missing(const char *entry_point);

// Returns `fn`, or throws CUCORE_ERROR_NOT_SUPPORTED naming the entry point
// (an NVML too old for it: every entry point is optional, as the driver's are).
template <typename Fn>
inline Fn nvml_require(Fn fn, const char *entry_point) {
    if (__builtin_expect(fn == nullptr, 0)) throw_nvml_missing(entry_point);
    return fn;
}

}  // namespace cucore::driver

// Calls NVML entry point `name` through the active table; throws on failure.
#define CUCORE_NVML(name, ...) \
    ::cucore::driver::check_nvml(::cucore::driver::nvml_require(::cucore::driver::nvml_api().name, #name)(__VA_ARGS__), #name)
