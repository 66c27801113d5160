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
constexpr Return kErrorArgumentVersionMismatch = 25;
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

// NVML's versioned structs carry NVML_STRUCT_VERSION(name, v): sizeof | v << 24.
template <class T>
constexpr unsigned struct_version(unsigned version) {
    return static_cast<unsigned>(sizeof(T)) | (version << 24);
}
// nvmlMemory_v2_t (nvmlDeviceGetMemoryInfo_v2).
struct MemoryV2 {
    unsigned version;
    unsigned long long total, reserved, free, used;
};
// nvmlBAR1Memory_t.
struct Bar1Memory {
    unsigned long long bar1Total, bar1Free, bar1Used;
};
// nvmlPciInfoExt_v1_t.
struct PciInfoExt {
    unsigned version, domain, bus, device, pciDeviceId, pciSubSystemId, baseClass, subClass;
    char busId[32];
};
// nvmlDeviceAttributes_t.
struct DeviceAttributes {
    unsigned multiprocessorCount, sharedCopyEngineCount, sharedDecoderCount, sharedEncoderCount, sharedJpegCount,
        sharedOfaCount, gpuInstanceSliceCount, computeInstanceSliceCount;
    unsigned long long memorySizeMB;
};
// nvmlDeviceAddressingMode_v1_t, nvmlRepairStatus_v1_t, nvmlMarginTemperature_v1_t,
// nvmlFanSpeedInfo_v1_t, nvmlCoolerInfo_v1_t, nvmlClockOffset_v1_t, nvmlC2cModeInfo_v1_t.
struct AddressingMode {
    unsigned version, value;
};
struct RepairStatus {
    unsigned version, bChannelRepairPending, bTpcRepairPending;
};
struct MarginTemperature {
    unsigned version;
    int marginTemperature;
};
struct FanSpeedInfo {
    unsigned version, fan, speed;
};
struct CoolerInfo {
    unsigned version, index;
    int signalType;
    int target;
};
struct ClockOffset {
    unsigned version;
    int type, pstate, clockOffsetMHz, minClockOffsetMHz, maxClockOffsetMHz;
};
struct C2cModeInfo {
    unsigned isC2cEnabled;
};
// nvmlGpuDynamicPstatesInfo_t (NVML_MAX_GPU_UTILIZATIONS = 8 domains).
struct DynamicPstatesInfo {
    unsigned flags;
    struct {
        unsigned bIsPresent, percentage, incThreshold, decThreshold;
    } utilization[8];
};
// nvmlGpuThermalSettings_t (NVML_MAX_THERMAL_SENSORS_PER_GPU = 3).
struct ThermalSettings {
    unsigned count;
    struct {
        int controller, defaultMinTemp, defaultMaxTemp, currentTemp, target;
    } sensor[3];
};
// nvmlFieldValue_t; the value is a union of NVML's nvmlValueType_t kinds.
struct FieldValue {
    unsigned fieldId, scopeId;
    long long timestamp, latencyUsec;
    int valueType;
    Return nvmlReturn;
    union {
        double dVal;
        unsigned uiVal;
        unsigned long ulVal;
        unsigned long long ullVal;
        long long sllVal;
        int siVal;
        unsigned short usVal;
    } value;
};
// nvmlSystemDriverBranchInfo_v1_t.
struct DriverBranchInfo {
    unsigned version;
    char branch[80];
};
// nvmlEventSet_t and nvmlEventData_t (nvmlEventSetWait_v2).
struct EventSetOpaque;
using EventSet = EventSetOpaque *;
struct EventData {
    Device device;
    unsigned long long eventType, eventData;
    unsigned gpuInstanceId, computeInstanceId;
};
// nvmlSystemEventSet_t and the versioned requests of the system event calls
// (nvmlSystemEventSetCreate, nvmlSystemRegisterEvents, nvmlSystemEventSetWait,
// nvmlSystemEventSetFree; each *_v1_t, version NVML_STRUCT_VERSION(..., 1)).
struct SystemEventSetOpaque;
using SystemEventSet = SystemEventSetOpaque *;
struct SystemEventData {  // nvmlSystemEventData_v1_t
    unsigned long long eventType;
    unsigned gpuId;
};
struct SystemEventSetCreateRequest {  // nvmlSystemEventSetCreateRequest_v1_t
    unsigned version;
    SystemEventSet set;
};
struct SystemEventSetFreeRequest {  // nvmlSystemEventSetFreeRequest_v1_t
    unsigned version;
    SystemEventSet set;
};
struct SystemRegisterEventRequest {  // nvmlSystemRegisterEventRequest_v1_t
    unsigned version;
    unsigned long long eventTypes;
    SystemEventSet set;
};
struct SystemEventSetWaitRequest {  // nvmlSystemEventSetWaitRequest_v1_t
    unsigned version;
    unsigned timeoutms;
    SystemEventSet set;
    SystemEventData *data;
    unsigned dataSize;
    unsigned numEvent;
};
static_assert(sizeof(SystemEventData) == 16 && sizeof(SystemEventSetCreateRequest) == 16 &&
                  sizeof(SystemRegisterEventRequest) == 24 && sizeof(SystemEventSetWaitRequest) == 32,
              "NVML's system event structs on LP64");
constexpr Return kErrorTimeout = 10;
constexpr unsigned kFieldNvlinkLinkCount = 91;  // NVML_FI_DEV_NVLINK_LINK_COUNT
constexpr int kPstateUnknown = 32;              // NVML_PSTATE_UNKNOWN
}  // namespace nvml

// Every NVML entry point libcucore uses: X(name, parameters, arguments), with
// NVML's prototypes (all return nvmlReturn_t). One list makes the table, its
// loader and the fake library's exports.
#define CUCORE_NVML_ENTRY_POINTS(X) \
    X(nvmlInit_v2, (), ()) \
    X(nvmlShutdown, (), ()) \
    X(nvmlSystemGetDriverVersion, (char *v, unsigned l), (v, l)) \
    X(nvmlSystemGetNVMLVersion, (char *v, unsigned l), (v, l)) \
    X(nvmlSystemGetCudaDriverVersion_v2, (int *v), (v)) \
    X(nvmlSystemGetDriverBranch, (nvml::DriverBranchInfo * b, unsigned l), (b, l)) \
    X(nvmlSystemGetProcessName, (unsigned p, char *v, unsigned l), (p, v, l)) \
    X(nvmlSystemGetTopologyGpuSet, (unsigned cpu, unsigned *c, nvml::Device *d), (cpu, c, d)) \
    X(nvmlDeviceGetCount_v2, (unsigned *c), (c)) \
    X(nvmlDeviceGetHandleByIndex_v2, (unsigned i, nvml::Device *d), (i, d)) \
    X(nvmlDeviceGetHandleByUUID, (const char *u, nvml::Device *d), (u, d)) \
    X(nvmlDeviceGetHandleByPciBusId_v2, (const char *b, nvml::Device *d), (b, d)) \
    X(nvmlDeviceGetIndex, (nvml::Device d, unsigned *i), (d, i)) \
    X(nvmlDeviceGetName, (nvml::Device d, char *v, unsigned l), (d, v, l)) \
    X(nvmlDeviceGetUUID, (nvml::Device d, char *v, unsigned l), (d, v, l)) \
    X(nvmlDeviceGetSerial, (nvml::Device d, char *v, unsigned l), (d, v, l)) \
    X(nvmlDeviceGetBoardPartNumber, (nvml::Device d, char *v, unsigned l), (d, v, l)) \
    X(nvmlDeviceGetInforomImageVersion, (nvml::Device d, char *v, unsigned l), (d, v, l)) \
    X(nvmlDeviceGetInforomVersion, (nvml::Device d, int o, char *v, unsigned l), (d, o, v, l)) \
    X(nvmlDeviceGetInforomConfigurationChecksum, (nvml::Device d, unsigned *c), (d, c)) \
    X(nvmlDeviceValidateInforom, (nvml::Device d), (d)) \
    X(nvmlDeviceGetLastBBXFlushTime, (nvml::Device d, unsigned long long *ts, unsigned long *u), (d, ts, u)) \
    X(nvmlDeviceGetPciInfo_v3, (nvml::Device d, nvml::PciInfo *p), (d, p)) \
    X(nvmlDeviceGetPciInfoExt, (nvml::Device d, nvml::PciInfoExt *p), (d, p)) \
    X(nvmlDeviceGetMaxPcieLinkGeneration, (nvml::Device d, unsigned *v), (d, v)) \
    X(nvmlDeviceGetGpuMaxPcieLinkGeneration, (nvml::Device d, unsigned *v), (d, v)) \
    X(nvmlDeviceGetMaxPcieLinkWidth, (nvml::Device d, unsigned *v), (d, v)) \
    X(nvmlDeviceGetCurrPcieLinkGeneration, (nvml::Device d, unsigned *v), (d, v)) \
    X(nvmlDeviceGetCurrPcieLinkWidth, (nvml::Device d, unsigned *v), (d, v)) \
    X(nvmlDeviceGetPcieThroughput, (nvml::Device d, int c, unsigned *v), (d, c, v)) \
    X(nvmlDeviceGetPcieReplayCounter, (nvml::Device d, unsigned *v), (d, v)) \
    X(nvmlDeviceGetMemoryInfo, (nvml::Device d, nvml::Memory *m), (d, m)) \
    X(nvmlDeviceGetMemoryInfo_v2, (nvml::Device d, nvml::MemoryV2 *m), (d, m)) \
    X(nvmlDeviceGetBAR1MemoryInfo, (nvml::Device d, nvml::Bar1Memory *m), (d, m)) \
    X(nvmlDeviceGetUtilizationRates, (nvml::Device d, nvml::Utilization *u), (d, u)) \
    X(nvmlDeviceGetTemperature, (nvml::Device d, int s, unsigned *c), (d, s, c)) \
    X(nvmlDeviceGetTemperatureThreshold, (nvml::Device d, int ty, unsigned *c), (d, ty, c)) \
    X(nvmlDeviceGetMarginTemperature, (nvml::Device d, nvml::MarginTemperature *m), (d, m)) \
    X(nvmlDeviceGetThermalSettings, (nvml::Device d, unsigned s, nvml::ThermalSettings *ts), (d, s, ts)) \
    X(nvmlDeviceGetPowerUsage, (nvml::Device d, unsigned *p), (d, p)) \
    X(nvmlDeviceGetEnforcedPowerLimit, (nvml::Device d, unsigned *p), (d, p)) \
    X(nvmlDeviceGetClockInfo, (nvml::Device d, int k, unsigned *m), (d, k, m)) \
    X(nvmlDeviceGetMaxClockInfo, (nvml::Device d, int k, unsigned *m), (d, k, m)) \
    X(nvmlDeviceGetClock, (nvml::Device d, int k, int i, unsigned *m), (d, k, i, m)) \
    X(nvmlDeviceGetMaxCustomerBoostClock, (nvml::Device d, int k, unsigned *m), (d, k, m)) \
    X(nvmlDeviceGetMinMaxClockOfPState, (nvml::Device d, int k, int p, unsigned *lo, unsigned *hi), (d, k, p, lo, hi)) \
    X(nvmlDeviceGetClockOffsets, (nvml::Device d, nvml::ClockOffset *o), (d, o)) \
    X(nvmlDeviceGetAutoBoostedClocksEnabled, (nvml::Device d, int *e, int *de), (d, e, de)) \
    X(nvmlDeviceGetCurrentClocksEventReasons, (nvml::Device d, unsigned long long *r), (d, r)) \
    X(nvmlDeviceGetSupportedClocksEventReasons, (nvml::Device d, unsigned long long *r), (d, r)) \
    X(nvmlDeviceGetComputeMode, (nvml::Device d, int *m), (d, m)) \
    X(nvmlDeviceGetComputeRunningProcesses_v3, (nvml::Device d, unsigned *c, nvml::ProcessInfo *p), (d, c, p)) \
    X(nvmlDeviceGetArchitecture, (nvml::Device d, unsigned *a), (d, a)) \
    X(nvmlDeviceGetBrand, (nvml::Device d, int *b), (d, b)) \
    X(nvmlDeviceGetMinorNumber, (nvml::Device d, unsigned *v), (d, v)) \
    X(nvmlDeviceGetModuleId, (nvml::Device d, unsigned *v), (d, v)) \
    X(nvmlDeviceGetNumaNodeId, (nvml::Device d, unsigned *v), (d, v)) \
    X(nvmlDeviceGetC2cModeInfoV, (nvml::Device d, nvml::C2cModeInfo *c), (d, c)) \
    X(nvmlDeviceGetPersistenceMode, (nvml::Device d, int *m), (d, m)) \
    X(nvmlDeviceSetPersistenceMode, (nvml::Device d, int m), (d, m)) \
    X(nvmlDeviceGetDisplayMode, (nvml::Device d, int *m), (d, m)) \
    X(nvmlDeviceGetDisplayActive, (nvml::Device d, int *m), (d, m)) \
    X(nvmlDeviceGetCudaComputeCapability, (nvml::Device d, int *major, int *minor), (d, major, minor)) \
    X(nvmlDeviceGetAddressingMode, (nvml::Device d, nvml::AddressingMode *m), (d, m)) \
    X(nvmlDeviceGetPerformanceState, (nvml::Device d, int *p), (d, p)) \
    X(nvmlDeviceGetSupportedPerformanceStates, (nvml::Device d, int *p, unsigned s), (d, p, s)) \
    X(nvmlDeviceGetDynamicPstatesInfo, (nvml::Device d, nvml::DynamicPstatesInfo *p), (d, p)) \
    X(nvmlDeviceGetSupportedEventTypes, (nvml::Device d, unsigned long long *ts), (d, ts)) \
    X(nvmlDeviceGetNumFans, (nvml::Device d, unsigned *n), (d, n)) \
    X(nvmlDeviceGetFanSpeed_v2, (nvml::Device d, unsigned f, unsigned *s), (d, f, s)) \
    X(nvmlDeviceGetFanSpeedRPM, (nvml::Device d, nvml::FanSpeedInfo *s), (d, s)) \
    X(nvmlDeviceGetTargetFanSpeed, (nvml::Device d, unsigned f, unsigned *s), (d, f, s)) \
    X(nvmlDeviceGetMinMaxFanSpeed, (nvml::Device d, unsigned *lo, unsigned *hi), (d, lo, hi)) \
    X(nvmlDeviceGetFanControlPolicy_v2, (nvml::Device d, unsigned f, unsigned *p), (d, f, p)) \
    X(nvmlDeviceSetFanSpeed_v2, (nvml::Device d, unsigned f, unsigned s), (d, f, s)) \
    X(nvmlDeviceSetDefaultFanSpeed_v2, (nvml::Device d, unsigned f), (d, f)) \
    X(nvmlDeviceGetCoolerInfo, (nvml::Device d, nvml::CoolerInfo *c), (d, c)) \
    X(nvmlDeviceGetAttributes_v2, (nvml::Device d, nvml::DeviceAttributes *a), (d, a)) \
    X(nvmlDeviceGetRepairStatus, (nvml::Device d, nvml::RepairStatus *r), (d, r)) \
    X(nvmlDeviceGetNvLinkVersion, (nvml::Device d, unsigned l, unsigned *v), (d, l, v)) \
    X(nvmlDeviceGetNvLinkState, (nvml::Device d, unsigned l, int *s), (d, l, s)) \
    X(nvmlDeviceGetMigMode, (nvml::Device d, unsigned *c, unsigned *p), (d, c, p)) \
    X(nvmlDeviceSetMigMode, (nvml::Device d, unsigned m, nvml::Return *a), (d, m, a)) \
    X(nvmlDeviceIsMigDeviceHandle, (nvml::Device d, unsigned *m), (d, m)) \
    X(nvmlDeviceGetMaxMigDeviceCount, (nvml::Device d, unsigned *c), (d, c)) \
    X(nvmlDeviceGetMigDeviceHandleByIndex, (nvml::Device d, unsigned i, nvml::Device *m), (d, i, m)) \
    X(nvmlDeviceGetDeviceHandleFromMigDeviceHandle, (nvml::Device m, nvml::Device *d), (m, d)) \
    X(nvmlDeviceGetCpuAffinityWithinScope, (nvml::Device d, unsigned n, unsigned long *s, int sc), (d, n, s, sc)) \
    X(nvmlDeviceGetMemoryAffinity, (nvml::Device d, unsigned n, unsigned long *s, int sc), (d, n, s, sc)) \
    X(nvmlDeviceSetCpuAffinity, (nvml::Device d), (d)) \
    X(nvmlDeviceClearCpuAffinity, (nvml::Device d), (d)) \
    X(nvmlDeviceGetTopologyNearestGpus, (nvml::Device d, int lv, unsigned *c, nvml::Device *a), (d, lv, c, a)) \
    X(nvmlDeviceGetTopologyCommonAncestor, (nvml::Device a, nvml::Device b, int *lv), (a, b, lv)) \
    X(nvmlDeviceGetP2PStatus, (nvml::Device a, nvml::Device b, int i, int *s), (a, b, i, s)) \
    X(nvmlDeviceGetFieldValues, (nvml::Device d, int n, nvml::FieldValue *v), (d, n, v)) \
    X(nvmlDeviceClearFieldValues, (nvml::Device d, int n, nvml::FieldValue *v), (d, n, v)) \
    X(nvmlEventSetCreate, (nvml::EventSet * s), (s)) \
    X(nvmlDeviceRegisterEvents, (nvml::Device d, unsigned long long ty, nvml::EventSet s), (d, ty, s)) \
    X(nvmlEventSetWait_v2, (nvml::EventSet s, nvml::EventData *e, unsigned ms), (s, e, ms)) \
    X(nvmlEventSetFree, (nvml::EventSet s), (s)) \
    X(nvmlSystemEventSetCreate, (nvml::SystemEventSetCreateRequest * r), (r)) \
    X(nvmlSystemRegisterEvents, (nvml::SystemRegisterEventRequest * r), (r)) \
    X(nvmlSystemEventSetWait, (nvml::SystemEventSetWaitRequest * r), (r)) \
    X(nvmlSystemEventSetFree, (nvml::SystemEventSetFreeRequest * r), (r))

// The entry points libcucore uses, with NVML's prototypes.
struct NvmlTable {
    const char *(*nvmlErrorString)(nvml::Return) = nullptr;
#define CUCORE_NVML_MEMBER(name, params, args) nvml::Return(*name) params = nullptr;
    CUCORE_NVML_ENTRY_POINTS(CUCORE_NVML_MEMBER)
#undef CUCORE_NVML_MEMBER
};

// The NVML table, loaded and initialised on first call; throws
// driver::Error(NOT_SUPPORTED) naming what was tried when the library (or one
// of its entry points) is missing, or the mapped status when nvmlInit_v2 fails.
const NvmlTable &nvml_api();

// Throws the error of a failed NVML call: "<function> failed: NVML_ERROR_X
// (<nvmlErrorString>)", with the status of nvml_status.
[[noreturn]] void throw_nvml(nvml::Return result, const char *function);
// The same with `detail` ahead: "<detail> (<function> failed: NVML_ERROR_X (...))".
[[noreturn]] void throw_nvml(nvml::Return result, const char *function, const std::string &detail);
inline void check_nvml(nvml::Return result, const char *function) {
    if (__builtin_expect(result != nvml::kSuccess, 0)) throw_nvml(result, function);
}
// The nvmlReturn_t of the last NVML failure thrown on this thread (0: none
// since reset_last_nvml_result). A missing NVML reads as
// NVML_ERROR_LIBRARY_NOT_FOUND, a missing entry point as
// NVML_ERROR_FUNCTION_NOT_FOUND. The C ABI resets it as each system call starts.
int last_nvml_result() noexcept;
void reset_last_nvml_result() noexcept;
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
