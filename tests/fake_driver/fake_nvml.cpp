// The substitute NVML (fake_nvml.hpp). Devices are handles 1..n cast to
// nvmlDevice_t; anything else is NVML_ERROR_INVALID_ARGUMENT, as NVML answers.
#include "fake_nvml.hpp"

#include <cstdio>
#include <cstring>
#include <mutex>

namespace fake::nvml {
namespace {

using cucore::driver::NvmlTable;
namespace n = cucore::driver::nvml;

constexpr unsigned long long kDeviceMemory = 80ULL << 30;  // the fake driver's (state.hpp)

struct State {
    std::mutex mutex;
    unsigned devices = 2;
    long calls = 0;
    long fail_at = 0;
    int fail_result = n::kErrorUnknown;
    std::string fail_name;
    int fail_name_result = n::kErrorUnknown;
    std::vector<std::string> log;
    std::vector<std::pair<uint32_t, unsigned long long>> processes;
    int compute_mode = 0;
    int persistence = 1;
    unsigned fan_speed = 30;
    unsigned mig_pending = 0;
    std::vector<unsigned> cleared_fields;
    struct EventSet {
        bool live = true;
        std::vector<std::pair<int, unsigned long long>> registered;  // (device, types)
        std::vector<n::EventData> queue;
    };
    std::vector<EventSet> event_sets;  // handle k + 1
};
State &state() {
    static State s;
    return s;
}

// Counts and logs a call; its injected failure, or success.
n::Return enter(const char *name) {
    State &s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    ++s.calls;
    s.log.push_back(name);
    if (s.fail_at && s.calls == s.fail_at) return s.fail_result;
    if (!s.fail_name.empty() && s.fail_name == name) return s.fail_name_result;
    return n::kSuccess;
}

// The ordinal of a fake device handle, or -1.
int ordinal(n::Device device) {
    const uintptr_t value = reinterpret_cast<uintptr_t>(device);
    return value >= 1 && value <= state().devices ? static_cast<int>(value - 1) : -1;
}
n::Device handle_of(unsigned ordinal) { return reinterpret_cast<n::Device>(static_cast<uintptr_t>(ordinal) + 1); }

std::string uuid_of(int d) {
    char text[48];
    unsigned char b[16];
    for (int i = 0; i < 16; ++i) b[i] = static_cast<unsigned char>(d * 16 + i);
    std::snprintf(text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                  b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                  b[15]);
    return text;
}
std::string bus_id_of(int d) {
    char text[32];
    std::snprintf(text, sizeof text, "00000000:%02X:00.0", static_cast<unsigned>(d + 1) & 0xFFu);
    return text;
}

n::Return copy_text(const std::string &text, char *out, unsigned length) {
    if (!out) return n::kErrorInvalidArgument;
    if (length < text.size() + 1) return n::kErrorInsufficientSize;
    std::memcpy(out, text.c_str(), text.size() + 1);
    return n::kSuccess;
}

#define FAKE_NVML_ENTER(name)                          \
    if (const n::Return injected = enter(#name)) return injected
#define FAKE_NVML_DEVICE(device)                       \
    const int d = ordinal(device);                     \
    if (d < 0) return n::kErrorInvalidArgument

n::Return f_init() { return enter("nvmlInit_v2"); }
n::Return f_shutdown() { return enter("nvmlShutdown"); }
const char *f_error_string(n::Return result) {
    switch (result) {
        case n::kSuccess: return "Success";
        case n::kErrorInvalidArgument: return "Invalid Argument";
        case n::kErrorNotSupported: return "Not Supported";
        case n::kErrorNoPermission: return "Insufficient Permissions";
        case n::kErrorNotFound: return "Not Found";
        case n::kErrorInsufficientSize: return "Insufficient Size";
        case n::kErrorMemory: return "Insufficient Memory";
        default: return "Unknown Error";
    }
}
n::Return f_driver_version(char *out, unsigned length) {
    FAKE_NVML_ENTER(nvmlSystemGetDriverVersion);
    return copy_text("580.65.06", out, length);
}
n::Return f_nvml_version(char *out, unsigned length) {
    FAKE_NVML_ENTER(nvmlSystemGetNVMLVersion);
    return copy_text("13.580.65.06", out, length);
}
n::Return f_cuda_version(int *version) {
    FAKE_NVML_ENTER(nvmlSystemGetCudaDriverVersion_v2);
    if (!version) return n::kErrorInvalidArgument;
    *version = 13000;
    return n::kSuccess;
}
n::Return f_count(unsigned *count) {
    FAKE_NVML_ENTER(nvmlDeviceGetCount_v2);
    if (!count) return n::kErrorInvalidArgument;
    *count = state().devices;
    return n::kSuccess;
}
n::Return f_by_index(unsigned index, n::Device *device) {
    FAKE_NVML_ENTER(nvmlDeviceGetHandleByIndex_v2);
    if (!device || index >= state().devices) return n::kErrorInvalidArgument;
    *device = handle_of(index);
    return n::kSuccess;
}
n::Return f_by_uuid(const char *uuid, n::Device *device) {
    FAKE_NVML_ENTER(nvmlDeviceGetHandleByUUID);
    if (!uuid || !device) return n::kErrorInvalidArgument;
    for (unsigned d = 0; d < state().devices; ++d)
        if (uuid_of(static_cast<int>(d)) == uuid) {
            *device = handle_of(d);
            return n::kSuccess;
        }
    return n::kErrorNotFound;
}
n::Return f_by_pci_bus_id(const char *bus_id, n::Device *device) {
    FAKE_NVML_ENTER(nvmlDeviceGetHandleByPciBusId_v2);
    if (!bus_id || !device) return n::kErrorInvalidArgument;
    // NVML takes "domain:bus:device.function" with a 4- or 8-digit domain, or none.
    unsigned domain = 0, bus = 0, slot = 0, function = 0;
    if (std::sscanf(bus_id, "%x:%x:%x.%x", &domain, &bus, &slot, &function) != 4) {
        domain = 0;
        if (std::sscanf(bus_id, "%x:%x.%x", &bus, &slot, &function) != 3) return n::kErrorInvalidArgument;
    }
    if (domain == 0 && slot == 0 && function == 0 && bus >= 1 && bus <= state().devices) {
        *device = handle_of(bus - 1);
        return n::kSuccess;
    }
    return n::kErrorNotFound;
}
n::Return f_index(n::Device device, unsigned *index) {
    FAKE_NVML_ENTER(nvmlDeviceGetIndex);
    FAKE_NVML_DEVICE(device);
    if (!index) return n::kErrorInvalidArgument;
    *index = static_cast<unsigned>(d);
    return n::kSuccess;
}
n::Return f_name(n::Device device, char *out, unsigned length) {
    FAKE_NVML_ENTER(nvmlDeviceGetName);
    FAKE_NVML_DEVICE(device);
    return copy_text("Fake GPU " + std::to_string(d), out, length);
}
n::Return f_uuid(n::Device device, char *out, unsigned length) {
    FAKE_NVML_ENTER(nvmlDeviceGetUUID);
    FAKE_NVML_DEVICE(device);
    return copy_text(uuid_of(d), out, length);
}
n::Return f_pci_info(n::Device device, n::PciInfo *pci) {
    FAKE_NVML_ENTER(nvmlDeviceGetPciInfo_v3);
    FAKE_NVML_DEVICE(device);
    if (!pci) return n::kErrorInvalidArgument;
    std::memset(pci, 0, sizeof *pci);
    std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02X:00.0", static_cast<unsigned>(d + 1) & 0xFFu);
    std::snprintf(pci->busId, sizeof pci->busId, "%s", bus_id_of(d).c_str());
    pci->bus = static_cast<unsigned>(d + 1);
    pci->pciDeviceId = 0x233010de;  // an H100 SXM's device and vendor ids
    pci->pciSubSystemId = 0x16c110de;
    return n::kSuccess;
}
n::Return f_memory(n::Device device, n::Memory *memory) {
    FAKE_NVML_ENTER(nvmlDeviceGetMemoryInfo);
    FAKE_NVML_DEVICE(device);
    if (!memory) return n::kErrorInvalidArgument;
    memory->total = kDeviceMemory + static_cast<unsigned long long>(d);
    memory->used = 1ULL << 30;
    memory->free = memory->total - memory->used;
    return n::kSuccess;
}
n::Return f_utilization(n::Device device, n::Utilization *rates) {
    FAKE_NVML_ENTER(nvmlDeviceGetUtilizationRates);
    FAKE_NVML_DEVICE(device);
    if (!rates) return n::kErrorInvalidArgument;
    rates->gpu = 10u + static_cast<unsigned>(d);
    rates->memory = 20u + static_cast<unsigned>(d);
    return n::kSuccess;
}
n::Return f_temperature(n::Device device, int sensor, unsigned *celsius) {
    FAKE_NVML_ENTER(nvmlDeviceGetTemperature);
    FAKE_NVML_DEVICE(device);
    if (!celsius || sensor != n::kTemperatureGpu) return n::kErrorInvalidArgument;
    *celsius = 40u + static_cast<unsigned>(d);
    return n::kSuccess;
}
n::Return f_power_usage(n::Device device, unsigned *milliwatts) {
    FAKE_NVML_ENTER(nvmlDeviceGetPowerUsage);
    FAKE_NVML_DEVICE(device);
    if (!milliwatts) return n::kErrorInvalidArgument;
    *milliwatts = 100000u + static_cast<unsigned>(d);
    return n::kSuccess;
}
n::Return f_power_limit(n::Device device, unsigned *milliwatts) {
    FAKE_NVML_ENTER(nvmlDeviceGetEnforcedPowerLimit);
    FAKE_NVML_DEVICE(device);
    if (!milliwatts) return n::kErrorInvalidArgument;
    *milliwatts = 700000u;
    return n::kSuccess;
}
n::Return clock_of(int type, bool max, int d, unsigned *mhz) {
    static const unsigned current[4] = {1755, 1755, 2619, 1545}, maximum[4] = {1980, 1980, 2619, 1710};
    if (!mhz || type < 0 || type > 3) return n::kErrorInvalidArgument;
    *mhz = max ? maximum[type] : current[type] + (type < 2 ? static_cast<unsigned>(d) : 0u);
    return n::kSuccess;
}
n::Return f_clock(n::Device device, int type, unsigned *mhz) {
    FAKE_NVML_ENTER(nvmlDeviceGetClockInfo);
    FAKE_NVML_DEVICE(device);
    return clock_of(type, false, d, mhz);
}
n::Return f_max_clock(n::Device device, int type, unsigned *mhz) {
    FAKE_NVML_ENTER(nvmlDeviceGetMaxClockInfo);
    FAKE_NVML_DEVICE(device);
    return clock_of(type, true, d, mhz);
}
n::Return f_compute_mode(n::Device device, int *mode) {
    FAKE_NVML_ENTER(nvmlDeviceGetComputeMode);
    FAKE_NVML_DEVICE(device);
    if (!mode) return n::kErrorInvalidArgument;
    std::lock_guard<std::mutex> lock(state().mutex);
    *mode = state().compute_mode;
    return n::kSuccess;
}
// As NVML: a count too small is INSUFFICIENT_SIZE with the count needed.
n::Return f_processes(n::Device device, unsigned *count, n::ProcessInfo *infos) {
    FAKE_NVML_ENTER(nvmlDeviceGetComputeRunningProcesses_v3);
    FAKE_NVML_DEVICE(device);
    (void)d;
    if (!count) return n::kErrorInvalidArgument;
    std::lock_guard<std::mutex> lock(state().mutex);
    const auto &processes = state().processes;
    if (*count < processes.size()) {
        *count = static_cast<unsigned>(processes.size());
        return n::kErrorInsufficientSize;
    }
    if (!processes.empty() && !infos) return n::kErrorInvalidArgument;
    for (size_t i = 0; i < processes.size(); ++i)
        infos[i] = n::ProcessInfo{processes[i].first, processes[i].second, 0xFFFFFFFFu, 0xFFFFFFFFu};
    *count = static_cast<unsigned>(processes.size());
    return n::kSuccess;
}

// ---- The queries of system.h's cucore_system_device_query and the rest (fake_nvml.hpp lists the values) ----
#define FAKE_NVML_OUT(pointer) \
    if (!(pointer)) return n::kErrorInvalidArgument
#define FAKE_NVML_UINT(fname, entry, expr)                                 \
    n::Return fname(n::Device device, unsigned *out) {                      \
        FAKE_NVML_ENTER(entry);                                             \
        FAKE_NVML_DEVICE(device);                                           \
        FAKE_NVML_OUT(out);                                                 \
        *out = static_cast<unsigned>(expr);                                 \
        return n::kSuccess;                                                 \
    }
#define FAKE_NVML_INT(fname, entry, expr)                                  \
    n::Return fname(n::Device device, int *out) {                           \
        FAKE_NVML_ENTER(entry);                                             \
        FAKE_NVML_DEVICE(device);                                           \
        FAKE_NVML_OUT(out);                                                 \
        *out = (expr);                                                      \
        return n::kSuccess;                                                 \
    }
#define FAKE_NVML_ULL(fname, entry, expr)                                  \
    n::Return fname(n::Device device, unsigned long long *out) {            \
        FAKE_NVML_ENTER(entry);                                             \
        FAKE_NVML_DEVICE(device);                                           \
        (void)d;                                                            \
        FAKE_NVML_OUT(out);                                                 \
        *out = (expr);                                                      \
        return n::kSuccess;                                                 \
    }
// A versioned struct whose version field must be NVML_STRUCT_VERSION(T, v).
#define FAKE_NVML_VERSION(p, T, v) \
    if ((p)->version != n::struct_version<T>(v)) return n::kErrorArgumentVersionMismatch

int persistence_mode() {
    std::lock_guard<std::mutex> lock(state().mutex);
    return state().persistence;
}

FAKE_NVML_UINT(f_architecture, nvmlDeviceGetArchitecture, 9)  // NVML_DEVICE_ARCH_HOPPER
FAKE_NVML_INT(f_brand, nvmlDeviceGetBrand, 14)                // NVML_BRAND_NVIDIA
FAKE_NVML_UINT(f_minor, nvmlDeviceGetMinorNumber, d)
FAKE_NVML_UINT(f_module, nvmlDeviceGetModuleId, d + 1)
FAKE_NVML_UINT(f_numa, nvmlDeviceGetNumaNodeId, d)
FAKE_NVML_INT(f_persistence, nvmlDeviceGetPersistenceMode, (void(d), persistence_mode()))
FAKE_NVML_INT(f_display_mode, nvmlDeviceGetDisplayMode, (void(d), 0))
FAKE_NVML_INT(f_display_active, nvmlDeviceGetDisplayActive, (void(d), 0))
FAKE_NVML_INT(f_pstate, nvmlDeviceGetPerformanceState, d == 0 ? 0 : 32)  // device 1: unknown
FAKE_NVML_ULL(f_event_reasons, nvmlDeviceGetCurrentClocksEventReasons, 0x1ULL)      // GPU idle
FAKE_NVML_ULL(f_supported_reasons, nvmlDeviceGetSupportedClocksEventReasons, 0x1FFULL)
FAKE_NVML_ULL(f_event_types, nvmlDeviceGetSupportedEventTypes, 0x1ULL | 0x2ULL | 0x8ULL)  // ECC, XID
FAKE_NVML_UINT(f_num_fans, nvmlDeviceGetNumFans, (void(d), 1))
FAKE_NVML_UINT(f_max_pcie_gen, nvmlDeviceGetMaxPcieLinkGeneration, (void(d), 5))
FAKE_NVML_UINT(f_gpu_max_pcie_gen, nvmlDeviceGetGpuMaxPcieLinkGeneration, (void(d), 5))
FAKE_NVML_UINT(f_max_pcie_width, nvmlDeviceGetMaxPcieLinkWidth, (void(d), 16))
FAKE_NVML_UINT(f_pcie_gen, nvmlDeviceGetCurrPcieLinkGeneration, (void(d), 4))
FAKE_NVML_UINT(f_pcie_width, nvmlDeviceGetCurrPcieLinkWidth, (void(d), 8))
FAKE_NVML_UINT(f_replay, nvmlDeviceGetPcieReplayCounter, d + 3)
FAKE_NVML_UINT(f_inforom_checksum, nvmlDeviceGetInforomConfigurationChecksum, 0x1234u + d)
FAKE_NVML_UINT(f_is_mig, nvmlDeviceIsMigDeviceHandle, (void(d), 0))
FAKE_NVML_UINT(f_max_mig, nvmlDeviceGetMaxMigDeviceCount, (void(d), 0))

n::Return f_c2c(n::Device device, n::C2cModeInfo *info) {
    FAKE_NVML_ENTER(nvmlDeviceGetC2cModeInfoV);
    FAKE_NVML_DEVICE(device);
    FAKE_NVML_OUT(info);
    info->isC2cEnabled = d == 1 ? 1u : 0u;
    return n::kSuccess;
}
n::Return f_cc(n::Device device, int *major, int *minor) {
    FAKE_NVML_ENTER(nvmlDeviceGetCudaComputeCapability);
    FAKE_NVML_DEVICE(device);
    (void)d;
    if (!major || !minor) return n::kErrorInvalidArgument;
    *major = 9;
    *minor = 0;
    return n::kSuccess;
}
n::Return f_addressing(n::Device device, n::AddressingMode *mode) {
    FAKE_NVML_ENTER(nvmlDeviceGetAddressingMode);
    FAKE_NVML_DEVICE(device);
    FAKE_NVML_OUT(mode);
    FAKE_NVML_VERSION(mode, n::AddressingMode, 1);
    mode->value = d == 0 ? 1u : 0u;  // HMM; device 1: none
    return n::kSuccess;
}
// `size` in bytes, as NVML documents it.
n::Return f_supported_pstates(n::Device device, int *states, unsigned size) {
    FAKE_NVML_ENTER(nvmlDeviceGetSupportedPerformanceStates);
    FAKE_NVML_DEVICE(device);
    (void)d;
    if (!states || size < 16 * sizeof(int)) return n::kErrorInsufficientSize;
    const int supported[3] = {0, 5, 8};
    for (unsigned k = 0; k < 16; ++k) states[k] = k < 3 ? supported[k] : n::kPstateUnknown;
    return n::kSuccess;
}
n::Return f_auto_boost(n::Device device, int *enabled, int *default_enabled) {
    FAKE_NVML_ENTER(nvmlDeviceGetAutoBoostedClocksEnabled);
    FAKE_NVML_DEVICE(device);
    (void)d;
    if (!enabled || !default_enabled) return n::kErrorInvalidArgument;
    *enabled = 1;
    *default_enabled = 0;
    return n::kSuccess;
}
// NVML_CLOCK_ID_CURRENT 0 reads the current clock, CUSTOMER_BOOST_MAX 3 the maximum; others are unsupported.
n::Return f_get_clock(n::Device device, int type, int id, unsigned *mhz) {
    FAKE_NVML_ENTER(nvmlDeviceGetClock);
    FAKE_NVML_DEVICE(device);
    if (id != 0 && id != 3) return n::kErrorNotSupported;
    return clock_of(type, id == 3, d, mhz);
}
n::Return f_customer_boost(n::Device device, int type, unsigned *mhz) {
    FAKE_NVML_ENTER(nvmlDeviceGetMaxCustomerBoostClock);
    FAKE_NVML_DEVICE(device);
    return clock_of(type, true, d, mhz);
}
n::Return f_pstate_range(n::Device device, int type, int pstate, unsigned *lo, unsigned *hi) {
    FAKE_NVML_ENTER(nvmlDeviceGetMinMaxClockOfPState);
    FAKE_NVML_DEVICE(device);
    if (!lo || pstate < 0 || pstate > 15) return n::kErrorInvalidArgument;
    *lo = 210u + static_cast<unsigned>(pstate);
    return clock_of(type, true, d, hi);
}
n::Return f_clock_offsets(n::Device device, n::ClockOffset *offset) {
    FAKE_NVML_ENTER(nvmlDeviceGetClockOffsets);
    FAKE_NVML_DEVICE(device);
    (void)d;
    FAKE_NVML_OUT(offset);
    FAKE_NVML_VERSION(offset, n::ClockOffset, 1);
    offset->clockOffsetMHz = offset->type * 10 + offset->pstate;
    offset->minClockOffsetMHz = -500;
    offset->maxClockOffsetMHz = 1000;
    return n::kSuccess;
}
// One fan (index 0): 30 % (or what was set), 1500 RPM, target 35 %, range 20..100 %, policy continuous.
n::Return f_fan_speed(n::Device device, unsigned fan, unsigned *speed) {
    FAKE_NVML_ENTER(nvmlDeviceGetFanSpeed_v2);
    FAKE_NVML_DEVICE(device);
    (void)d;
    if (!speed || fan != 0) return n::kErrorInvalidArgument;
    std::lock_guard<std::mutex> lock(state().mutex);
    *speed = state().fan_speed;
    return n::kSuccess;
}
n::Return f_fan_rpm(n::Device device, n::FanSpeedInfo *info) {
    FAKE_NVML_ENTER(nvmlDeviceGetFanSpeedRPM);
    FAKE_NVML_DEVICE(device);
    (void)d;
    FAKE_NVML_OUT(info);
    FAKE_NVML_VERSION(info, n::FanSpeedInfo, 1);
    if (info->fan != 0) return n::kErrorInvalidArgument;
    info->speed = 1500;
    return n::kSuccess;
}
n::Return f_fan_target(n::Device device, unsigned fan, unsigned *speed) {
    FAKE_NVML_ENTER(nvmlDeviceGetTargetFanSpeed);
    FAKE_NVML_DEVICE(device);
    (void)d;
    if (!speed || fan != 0) return n::kErrorInvalidArgument;
    *speed = 35;
    return n::kSuccess;
}
n::Return f_fan_range(n::Device device, unsigned *lo, unsigned *hi) {
    FAKE_NVML_ENTER(nvmlDeviceGetMinMaxFanSpeed);
    FAKE_NVML_DEVICE(device);
    (void)d;
    if (!lo || !hi) return n::kErrorInvalidArgument;
    *lo = 20;
    *hi = 100;
    return n::kSuccess;
}
n::Return f_fan_policy(n::Device device, unsigned fan, unsigned *policy) {
    FAKE_NVML_ENTER(nvmlDeviceGetFanControlPolicy_v2);
    FAKE_NVML_DEVICE(device);
    (void)d;
    if (!policy || fan != 0) return n::kErrorInvalidArgument;
    *policy = 0;
    return n::kSuccess;
}
n::Return f_set_fan_speed(n::Device device, unsigned fan, unsigned speed) {
    FAKE_NVML_ENTER(nvmlDeviceSetFanSpeed_v2);
    FAKE_NVML_DEVICE(device);
    (void)d;
    if (fan != 0 || speed > 100) return n::kErrorInvalidArgument;
    std::lock_guard<std::mutex> lock(state().mutex);
    state().fan_speed = speed;
    return n::kSuccess;
}
n::Return f_default_fan_speed(n::Device device, unsigned fan) {
    FAKE_NVML_ENTER(nvmlDeviceSetDefaultFanSpeed_v2);
    FAKE_NVML_DEVICE(device);
    (void)d;
    if (fan != 0) return n::kErrorInvalidArgument;
    std::lock_guard<std::mutex> lock(state().mutex);
    state().fan_speed = 30;
    return n::kSuccess;
}
n::Return f_cooler(n::Device device, n::CoolerInfo *info) {
    FAKE_NVML_ENTER(nvmlDeviceGetCoolerInfo);
    FAKE_NVML_DEVICE(device);
    (void)d;
    FAKE_NVML_OUT(info);
    FAKE_NVML_VERSION(info, n::CoolerInfo, 1);
    info->signalType = 2;  // variable
    info->target = 2 | 4;  // GPU and memory
    return n::kSuccess;
}
n::Return f_attributes(n::Device device, n::DeviceAttributes *a) {
    FAKE_NVML_ENTER(nvmlDeviceGetAttributes_v2);
    FAKE_NVML_DEVICE(device);
    FAKE_NVML_OUT(a);
    *a = n::DeviceAttributes{132u + static_cast<unsigned>(d), 7, 7, 0, 7, 1, 7, 7, 81559};
    return n::kSuccess;
}
n::Return f_bar1(n::Device device, n::Bar1Memory *m) {
    FAKE_NVML_ENTER(nvmlDeviceGetBAR1MemoryInfo);
    FAKE_NVML_DEVICE(device);
    FAKE_NVML_OUT(m);
    m->bar1Total = 128ULL << 30;
    m->bar1Used = (32ULL << 20) + static_cast<unsigned long long>(d);
    m->bar1Free = m->bar1Total - m->bar1Used;
    return n::kSuccess;
}
n::Return f_memory_v2(n::Device device, n::MemoryV2 *m) {
    FAKE_NVML_ENTER(nvmlDeviceGetMemoryInfo_v2);
    FAKE_NVML_DEVICE(device);
    FAKE_NVML_OUT(m);
    FAKE_NVML_VERSION(m, n::MemoryV2, 2);
    m->total = kDeviceMemory + static_cast<unsigned long long>(d);
    m->reserved = 512ULL << 20;
    m->used = 1ULL << 30;
    m->free = m->total - m->used - m->reserved;
    return n::kSuccess;
}
n::Return f_pci_ext(n::Device device, n::PciInfoExt *p) {
    FAKE_NVML_ENTER(nvmlDeviceGetPciInfoExt);
    FAKE_NVML_DEVICE(device);
    FAKE_NVML_OUT(p);
    FAKE_NVML_VERSION(p, n::PciInfoExt, 1);
    p->domain = 0;
    p->bus = static_cast<unsigned>(d + 1);
    p->device = 0;
    p->pciDeviceId = 0x233010de;
    p->pciSubSystemId = 0x16c110de;
    p->baseClass = 3;  // display controller
    p->subClass = 2;   // 3D controller
    std::snprintf(p->busId, sizeof p->busId, "%s", bus_id_of(d).c_str());
    return n::kSuccess;
}
n::Return f_pcie_throughput(n::Device device, int counter, unsigned *kbps) {
    FAKE_NVML_ENTER(nvmlDeviceGetPcieThroughput);
    FAKE_NVML_DEVICE(device);
    (void)d;
    if (!kbps || counter < 0 || counter > 1) return n::kErrorInvalidArgument;
    *kbps = counter == 0 ? 1000u : 2000u;  // TX, RX
    return n::kSuccess;
}
n::Return f_dynamic_pstates(n::Device device, n::DynamicPstatesInfo *info) {
    FAKE_NVML_ENTER(nvmlDeviceGetDynamicPstatesInfo);
    FAKE_NVML_DEVICE(device);
    FAKE_NVML_OUT(info);
    std::memset(info, 0, sizeof *info);
    info->utilization[0] = {1, 10u + static_cast<unsigned>(d), 30, 20};  // the graphics domain only
    return n::kSuccess;
}
n::Return f_repair(n::Device device, n::RepairStatus *status) {
    FAKE_NVML_ENTER(nvmlDeviceGetRepairStatus);
    FAKE_NVML_DEVICE(device);
    FAKE_NVML_OUT(status);
    FAKE_NVML_VERSION(status, n::RepairStatus, 1);
    status->bChannelRepairPending = 0;
    status->bTpcRepairPending = d == 1 ? 1u : 0u;
    return n::kSuccess;
}
// Thresholds SHUTDOWN 92, SLOWDOWN 89, MEM_MAX 95, GPU_MAX 87; the acoustic ones unsupported.
n::Return f_threshold(n::Device device, int type, unsigned *celsius) {
    FAKE_NVML_ENTER(nvmlDeviceGetTemperatureThreshold);
    FAKE_NVML_DEVICE(device);
    (void)d;
    static const unsigned thresholds[4] = {92, 89, 95, 87};
    if (!celsius || type < 0 || type > 7) return n::kErrorInvalidArgument;
    if (type > 3) return n::kErrorNotSupported;
    *celsius = thresholds[type];
    return n::kSuccess;
}
n::Return f_margin(n::Device device, n::MarginTemperature *margin) {
    FAKE_NVML_ENTER(nvmlDeviceGetMarginTemperature);
    FAKE_NVML_DEVICE(device);
    FAKE_NVML_OUT(margin);
    FAKE_NVML_VERSION(margin, n::MarginTemperature, 1);
    margin->marginTemperature = 45 - d;
    return n::kSuccess;
}
// Sensor index GPU (1) or ALL (15): one sensor, the GPU's; others none.
n::Return f_thermal(n::Device device, unsigned sensor, n::ThermalSettings *settings) {
    FAKE_NVML_ENTER(nvmlDeviceGetThermalSettings);
    FAKE_NVML_DEVICE(device);
    FAKE_NVML_OUT(settings);
    std::memset(settings, 0, sizeof *settings);
    if (sensor == 1 || sensor == 15) {
        settings->count = 1;
        settings->sensor[0] = {1, 0, 92, 40 + d, 1};
    }
    return n::kSuccess;
}
n::Return f_bbx(n::Device device, unsigned long long *timestamp, unsigned long *duration) {
    FAKE_NVML_ENTER(nvmlDeviceGetLastBBXFlushTime);
    FAKE_NVML_DEVICE(device);
    (void)d;
    if (!timestamp || !duration) return n::kErrorInvalidArgument;
    *timestamp = 1700000000ULL;
    *duration = 1500;
    return n::kSuccess;
}
n::Return f_serial(n::Device device, char *out, unsigned length) {
    FAKE_NVML_ENTER(nvmlDeviceGetSerial);
    FAKE_NVML_DEVICE(device);
    return copy_text("165822000000" + std::to_string(d), out, length);
}
n::Return f_part_number(n::Device device, char *out, unsigned length) {
    FAKE_NVML_ENTER(nvmlDeviceGetBoardPartNumber);
    FAKE_NVML_DEVICE(device);
    (void)d;
    return copy_text("692-2G520-0200-000", out, length);
}
n::Return f_inforom_image(n::Device device, char *out, unsigned length) {
    FAKE_NVML_ENTER(nvmlDeviceGetInforomImageVersion);
    FAKE_NVML_DEVICE(device);
    (void)d;
    return copy_text("G520.0200.00.05", out, length);
}
// Objects OEM 0, ECC 1, POWER 2, DEN 3.
n::Return f_inforom_version(n::Device device, int object, char *out, unsigned length) {
    FAKE_NVML_ENTER(nvmlDeviceGetInforomVersion);
    FAKE_NVML_DEVICE(device);
    (void)d;
    static const char *versions[4] = {"2.1", "7.0", "1.0", "1.1"};
    if (object < 0 || object > 3) return n::kErrorInvalidArgument;
    return copy_text(versions[object], out, length);
}
n::Return f_validate_inforom(n::Device device) {
    FAKE_NVML_ENTER(nvmlDeviceValidateInforom);
    FAKE_NVML_DEVICE(device);
    (void)d;
    return n::kSuccess;
}
// 18 links (an H100 SXM's), each NVLink 4.0 (NVML_NVLINK_VERSION_4_0 = 6) and active.
n::Return f_nvlink_version(n::Device device, unsigned link, unsigned *version) {
    FAKE_NVML_ENTER(nvmlDeviceGetNvLinkVersion);
    FAKE_NVML_DEVICE(device);
    (void)d;
    if (!version || link >= 18) return n::kErrorInvalidArgument;
    *version = 6;
    return n::kSuccess;
}
n::Return f_nvlink_state(n::Device device, unsigned link, int *active) {
    FAKE_NVML_ENTER(nvmlDeviceGetNvLinkState);
    FAKE_NVML_DEVICE(device);
    (void)d;
    if (!active || link >= 18) return n::kErrorInvalidArgument;
    *active = link < 16 ? 1 : 0;
    return n::kSuccess;
}
n::Return f_mig_mode(n::Device device, unsigned *current, unsigned *pending) {
    FAKE_NVML_ENTER(nvmlDeviceGetMigMode);
    FAKE_NVML_DEVICE(device);
    (void)d;
    if (!current || !pending) return n::kErrorInvalidArgument;
    std::lock_guard<std::mutex> lock(state().mutex);
    *current = 0;
    *pending = state().mig_pending;
    return n::kSuccess;
}
n::Return f_set_mig_mode(n::Device device, unsigned mode, n::Return *activation) {
    FAKE_NVML_ENTER(nvmlDeviceSetMigMode);
    FAKE_NVML_DEVICE(device);
    (void)d;
    if (!activation || mode > 1) return n::kErrorInvalidArgument;
    std::lock_guard<std::mutex> lock(state().mutex);
    state().mig_pending = mode;
    *activation = n::kSuccess;
    return n::kSuccess;
}
// No MIG devices: an index is NOT_FOUND, and a GPU is not a MIG device's parent.
n::Return f_mig_by_index(n::Device device, unsigned, n::Device *mig) {
    FAKE_NVML_ENTER(nvmlDeviceGetMigDeviceHandleByIndex);
    FAKE_NVML_DEVICE(device);
    (void)d;
    FAKE_NVML_OUT(mig);
    return n::kErrorNotFound;
}
n::Return f_mig_parent(n::Device device, n::Device *parent) {
    FAKE_NVML_ENTER(nvmlDeviceGetDeviceHandleFromMigDeviceHandle);
    FAKE_NVML_DEVICE(device);
    (void)d;
    FAKE_NVML_OUT(parent);
    return n::kErrorInvalidArgument;
}
// Device d: CPUs 4d..4d+3 and NUMA node d.
n::Return f_cpu_affinity(n::Device device, unsigned words, unsigned long *set, int scope) {
    FAKE_NVML_ENTER(nvmlDeviceGetCpuAffinityWithinScope);
    FAKE_NVML_DEVICE(device);
    if (!set || words == 0 || scope < 0 || scope > 1) return n::kErrorInvalidArgument;
    std::memset(set, 0, words * sizeof *set);
    set[0] = 0xFUL << (4 * d);
    return n::kSuccess;
}
n::Return f_memory_affinity(n::Device device, unsigned words, unsigned long *set, int scope) {
    FAKE_NVML_ENTER(nvmlDeviceGetMemoryAffinity);
    FAKE_NVML_DEVICE(device);
    if (!set || words == 0 || scope < 0 || scope > 1) return n::kErrorInvalidArgument;
    std::memset(set, 0, words * sizeof *set);
    set[0] = 1UL << d;
    return n::kSuccess;
}
n::Return f_set_cpu_affinity(n::Device device) {
    FAKE_NVML_ENTER(nvmlDeviceSetCpuAffinity);
    FAKE_NVML_DEVICE(device);
    (void)d;
    return n::kSuccess;
}
n::Return f_clear_cpu_affinity(n::Device device) {
    FAKE_NVML_ENTER(nvmlDeviceClearCpuAffinity);
    FAKE_NVML_DEVICE(device);
    (void)d;
    return n::kSuccess;
}
n::Return f_set_persistence(n::Device device, int mode) {
    FAKE_NVML_ENTER(nvmlDeviceSetPersistenceMode);
    FAKE_NVML_DEVICE(device);
    (void)d;
    if (mode < 0 || mode > 1) return n::kErrorInvalidArgument;
    std::lock_guard<std::mutex> lock(state().mutex);
    state().persistence = mode;
    return n::kSuccess;
}
// Every other GPU is nearest at every level; as NVML, a count too small is INSUFFICIENT_SIZE.
n::Return f_nearest(n::Device device, int level, unsigned *count, n::Device *devices) {
    FAKE_NVML_ENTER(nvmlDeviceGetTopologyNearestGpus);
    FAKE_NVML_DEVICE(device);
    if (!count || level < 0) return n::kErrorInvalidArgument;
    const unsigned others = state().devices - 1;
    if (*count < others || (others && !devices)) {
        *count = others;
        return n::kErrorInsufficientSize;
    }
    unsigned k = 0;
    for (unsigned o = 0; o < state().devices; ++o)
        if (static_cast<int>(o) != d) devices[k++] = handle_of(o);
    *count = k;
    return n::kSuccess;
}
// Same GPU: INTERNAL (0); two GPUs: NUMA node (40).
n::Return f_common_ancestor(n::Device a, n::Device b, int *level) {
    FAKE_NVML_ENTER(nvmlDeviceGetTopologyCommonAncestor);
    if (ordinal(a) < 0 || ordinal(b) < 0 || !level) return n::kErrorInvalidArgument;
    *level = a == b ? 0 : 40;
    return n::kSuccess;
}
// OK for every capability but ATOMICS (3), which is NOT_SUPPORTED (5).
n::Return f_p2p(n::Device a, n::Device b, int index, int *status) {
    FAKE_NVML_ENTER(nvmlDeviceGetP2PStatus);
    if (ordinal(a) < 0 || ordinal(b) < 0 || !status || index < 0 || index > 5) return n::kErrorInvalidArgument;
    *status = index == 3 ? 5 : 0;
    return n::kSuccess;
}
// GPUs near CPU c: those whose affinity (CPUs 4d..4d+3) holds it.
n::Return f_gpu_set(unsigned cpu, unsigned *count, n::Device *devices) {
    FAKE_NVML_ENTER(nvmlSystemGetTopologyGpuSet);
    if (!count) return n::kErrorInvalidArgument;
    const unsigned d = cpu / 4;
    const unsigned found = d < state().devices ? 1u : 0u;
    if (*count < found || (found && !devices)) {
        *count = found;
        return n::kErrorInsufficientSize;
    }
    if (found) devices[0] = handle_of(d);
    *count = found;
    return n::kSuccess;
}
n::Return f_driver_branch(n::DriverBranchInfo *info, unsigned length) {
    FAKE_NVML_ENTER(nvmlSystemGetDriverBranch);
    if (!info || length < 8) return n::kErrorInvalidArgument;
    FAKE_NVML_VERSION(info, n::DriverBranchInfo, 1);
    std::snprintf(info->branch, length, "%s", "r580_00");
    return n::kSuccess;
}
// Process p > 0 is "fake-process-<p>"; 0 is NOT_FOUND.
n::Return f_process_name(unsigned pid, char *out, unsigned length) {
    FAKE_NVML_ENTER(nvmlSystemGetProcessName);
    if (pid == 0) return n::kErrorNotFound;
    return copy_text("fake-process-" + std::to_string(pid), out, length);
}
// Fields: NVLINK_LINK_COUNT (91) 18 as unsigned int, ECC_CURRENT (1) 1 as unsigned int,
// DEV_POWER_INSTANT (186) 100.5 as double (scope 0 only); every other NOT_SUPPORTED.
n::Return f_field_values(n::Device device, int count, n::FieldValue *values) {
    FAKE_NVML_ENTER(nvmlDeviceGetFieldValues);
    FAKE_NVML_DEVICE(device);
    (void)d;
    if (count < 0 || (count && !values)) return n::kErrorInvalidArgument;
    for (int k = 0; k < count; ++k) {
        n::FieldValue &f = values[k];
        f.timestamp = 1700000000000000LL + k;
        f.latencyUsec = 7;
        f.nvmlReturn = n::kSuccess;
        if (f.fieldId == 91 || f.fieldId == 1) {
            f.valueType = 1;
            f.value.ullVal = 0;
            f.value.uiVal = f.fieldId == 91 ? 18u : 1u;
        } else if (f.fieldId == 186 && f.scopeId == 0) {
            f.valueType = 0;
            f.value.dVal = 100.5;
        } else {
            f.valueType = 1;
            f.value.ullVal = 0;
            f.nvmlReturn = n::kErrorNotSupported;
        }
    }
    return n::kSuccess;
}
n::Return f_clear_field_values(n::Device device, int count, n::FieldValue *values) {
    FAKE_NVML_ENTER(nvmlDeviceClearFieldValues);
    FAKE_NVML_DEVICE(device);
    (void)d;
    if (count < 0 || (count && !values)) return n::kErrorInvalidArgument;
    std::lock_guard<std::mutex> lock(state().mutex);
    for (int k = 0; k < count; ++k) state().cleared_fields.push_back(values[k].fieldId);
    return n::kSuccess;
}

// Event sets are handles 1..n; events come from post_event(), a wait with none
// queued answers TIMEOUT at once (whatever the timeout).
State::EventSet *event_set(n::EventSet set) {
    const uintptr_t k = reinterpret_cast<uintptr_t>(set);
    auto &sets = state().event_sets;
    return k >= 1 && k <= sets.size() && sets[k - 1].live ? &sets[k - 1] : nullptr;
}
n::Return f_event_set_create(n::EventSet *set) {
    FAKE_NVML_ENTER(nvmlEventSetCreate);
    FAKE_NVML_OUT(set);
    std::lock_guard<std::mutex> lock(state().mutex);
    state().event_sets.emplace_back();
    *set = reinterpret_cast<n::EventSet>(static_cast<uintptr_t>(state().event_sets.size()));
    return n::kSuccess;
}
// Types beyond the supported ones (ECC, XID: 0xB) are NOT_SUPPORTED, as NVML answers.
n::Return f_register_events(n::Device device, unsigned long long types, n::EventSet set) {
    FAKE_NVML_ENTER(nvmlDeviceRegisterEvents);
    FAKE_NVML_DEVICE(device);
    std::lock_guard<std::mutex> lock(state().mutex);
    State::EventSet *s = event_set(set);
    if (!s) return n::kErrorInvalidArgument;
    if (types & ~0xBULL) return n::kErrorNotSupported;
    s->registered.emplace_back(d, types);
    return n::kSuccess;
}
n::Return f_event_wait(n::EventSet set, n::EventData *data, unsigned) {
    FAKE_NVML_ENTER(nvmlEventSetWait_v2);
    FAKE_NVML_OUT(data);
    std::lock_guard<std::mutex> lock(state().mutex);
    State::EventSet *s = event_set(set);
    if (!s) return n::kErrorInvalidArgument;
    if (s->queue.empty()) return n::kErrorTimeout;
    *data = s->queue.front();
    s->queue.erase(s->queue.begin());
    return n::kSuccess;
}
n::Return f_event_set_free(n::EventSet set) {
    FAKE_NVML_ENTER(nvmlEventSetFree);
    std::lock_guard<std::mutex> lock(state().mutex);
    State::EventSet *s = event_set(set);
    if (!s) return n::kErrorInvalidArgument;
    s->live = false;
    return n::kSuccess;
}

NvmlTable make_table() {
    NvmlTable t;
    t.nvmlInit_v2 = f_init;
    t.nvmlShutdown = f_shutdown;
    t.nvmlErrorString = f_error_string;
    t.nvmlSystemGetDriverVersion = f_driver_version;
    t.nvmlSystemGetNVMLVersion = f_nvml_version;
    t.nvmlSystemGetCudaDriverVersion_v2 = f_cuda_version;
    t.nvmlDeviceGetCount_v2 = f_count;
    t.nvmlDeviceGetHandleByIndex_v2 = f_by_index;
    t.nvmlDeviceGetHandleByUUID = f_by_uuid;
    t.nvmlDeviceGetHandleByPciBusId_v2 = f_by_pci_bus_id;
    t.nvmlDeviceGetIndex = f_index;
    t.nvmlDeviceGetName = f_name;
    t.nvmlDeviceGetUUID = f_uuid;
    t.nvmlDeviceGetPciInfo_v3 = f_pci_info;
    t.nvmlDeviceGetMemoryInfo = f_memory;
    t.nvmlDeviceGetUtilizationRates = f_utilization;
    t.nvmlDeviceGetTemperature = f_temperature;
    t.nvmlDeviceGetPowerUsage = f_power_usage;
    t.nvmlDeviceGetEnforcedPowerLimit = f_power_limit;
    t.nvmlDeviceGetClockInfo = f_clock;
    t.nvmlDeviceGetMaxClockInfo = f_max_clock;
    t.nvmlDeviceGetComputeMode = f_compute_mode;
    t.nvmlDeviceGetComputeRunningProcesses_v3 = f_processes;
    t.nvmlSystemGetDriverBranch = f_driver_branch;
    t.nvmlSystemGetProcessName = f_process_name;
    t.nvmlSystemGetTopologyGpuSet = f_gpu_set;
    t.nvmlDeviceGetSerial = f_serial;
    t.nvmlDeviceGetBoardPartNumber = f_part_number;
    t.nvmlDeviceGetInforomImageVersion = f_inforom_image;
    t.nvmlDeviceGetInforomVersion = f_inforom_version;
    t.nvmlDeviceGetInforomConfigurationChecksum = f_inforom_checksum;
    t.nvmlDeviceValidateInforom = f_validate_inforom;
    t.nvmlDeviceGetLastBBXFlushTime = f_bbx;
    t.nvmlDeviceGetPciInfoExt = f_pci_ext;
    t.nvmlDeviceGetMaxPcieLinkGeneration = f_max_pcie_gen;
    t.nvmlDeviceGetGpuMaxPcieLinkGeneration = f_gpu_max_pcie_gen;
    t.nvmlDeviceGetMaxPcieLinkWidth = f_max_pcie_width;
    t.nvmlDeviceGetCurrPcieLinkGeneration = f_pcie_gen;
    t.nvmlDeviceGetCurrPcieLinkWidth = f_pcie_width;
    t.nvmlDeviceGetPcieThroughput = f_pcie_throughput;
    t.nvmlDeviceGetPcieReplayCounter = f_replay;
    t.nvmlDeviceGetMemoryInfo_v2 = f_memory_v2;
    t.nvmlDeviceGetBAR1MemoryInfo = f_bar1;
    t.nvmlDeviceGetTemperatureThreshold = f_threshold;
    t.nvmlDeviceGetMarginTemperature = f_margin;
    t.nvmlDeviceGetThermalSettings = f_thermal;
    t.nvmlDeviceGetClock = f_get_clock;
    t.nvmlDeviceGetMaxCustomerBoostClock = f_customer_boost;
    t.nvmlDeviceGetMinMaxClockOfPState = f_pstate_range;
    t.nvmlDeviceGetClockOffsets = f_clock_offsets;
    t.nvmlDeviceGetAutoBoostedClocksEnabled = f_auto_boost;
    t.nvmlDeviceGetCurrentClocksEventReasons = f_event_reasons;
    t.nvmlDeviceGetSupportedClocksEventReasons = f_supported_reasons;
    t.nvmlDeviceGetArchitecture = f_architecture;
    t.nvmlDeviceGetBrand = f_brand;
    t.nvmlDeviceGetMinorNumber = f_minor;
    t.nvmlDeviceGetModuleId = f_module;
    t.nvmlDeviceGetNumaNodeId = f_numa;
    t.nvmlDeviceGetC2cModeInfoV = f_c2c;
    t.nvmlDeviceGetPersistenceMode = f_persistence;
    t.nvmlDeviceSetPersistenceMode = f_set_persistence;
    t.nvmlDeviceGetDisplayMode = f_display_mode;
    t.nvmlDeviceGetDisplayActive = f_display_active;
    t.nvmlDeviceGetCudaComputeCapability = f_cc;
    t.nvmlDeviceGetAddressingMode = f_addressing;
    t.nvmlDeviceGetPerformanceState = f_pstate;
    t.nvmlDeviceGetSupportedPerformanceStates = f_supported_pstates;
    t.nvmlDeviceGetDynamicPstatesInfo = f_dynamic_pstates;
    t.nvmlDeviceGetSupportedEventTypes = f_event_types;
    t.nvmlDeviceGetNumFans = f_num_fans;
    t.nvmlDeviceGetFanSpeed_v2 = f_fan_speed;
    t.nvmlDeviceGetFanSpeedRPM = f_fan_rpm;
    t.nvmlDeviceGetTargetFanSpeed = f_fan_target;
    t.nvmlDeviceGetMinMaxFanSpeed = f_fan_range;
    t.nvmlDeviceGetFanControlPolicy_v2 = f_fan_policy;
    t.nvmlDeviceSetFanSpeed_v2 = f_set_fan_speed;
    t.nvmlDeviceSetDefaultFanSpeed_v2 = f_default_fan_speed;
    t.nvmlDeviceGetCoolerInfo = f_cooler;
    t.nvmlDeviceGetAttributes_v2 = f_attributes;
    t.nvmlDeviceGetRepairStatus = f_repair;
    t.nvmlDeviceGetNvLinkVersion = f_nvlink_version;
    t.nvmlDeviceGetNvLinkState = f_nvlink_state;
    t.nvmlDeviceGetMigMode = f_mig_mode;
    t.nvmlDeviceSetMigMode = f_set_mig_mode;
    t.nvmlDeviceIsMigDeviceHandle = f_is_mig;
    t.nvmlDeviceGetMaxMigDeviceCount = f_max_mig;
    t.nvmlDeviceGetMigDeviceHandleByIndex = f_mig_by_index;
    t.nvmlDeviceGetDeviceHandleFromMigDeviceHandle = f_mig_parent;
    t.nvmlDeviceGetCpuAffinityWithinScope = f_cpu_affinity;
    t.nvmlDeviceGetMemoryAffinity = f_memory_affinity;
    t.nvmlDeviceSetCpuAffinity = f_set_cpu_affinity;
    t.nvmlDeviceClearCpuAffinity = f_clear_cpu_affinity;
    t.nvmlDeviceGetTopologyNearestGpus = f_nearest;
    t.nvmlDeviceGetTopologyCommonAncestor = f_common_ancestor;
    t.nvmlDeviceGetP2PStatus = f_p2p;
    t.nvmlDeviceGetFieldValues = f_field_values;
    t.nvmlDeviceClearFieldValues = f_clear_field_values;
    t.nvmlEventSetCreate = f_event_set_create;
    t.nvmlDeviceRegisterEvents = f_register_events;
    t.nvmlEventSetWait_v2 = f_event_wait;
    t.nvmlEventSetFree = f_event_set_free;
    return t;
}

}  // namespace

const NvmlTable &current_table() {
    static const NvmlTable t = make_table();
    return t;
}

const NvmlTable &table(unsigned devices) {
    const NvmlTable &t = current_table();
    State &s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.devices = devices;
    s.calls = 0;
    s.fail_at = 0;
    s.fail_name.clear();
    s.log.clear();
    s.processes.clear();
    s.compute_mode = 0;
    s.persistence = 1;
    s.fan_speed = 30;
    s.mig_pending = 0;
    s.cleared_fields.clear();
    s.event_sets.clear();
    return t;
}

void fail_call(long n, int result) {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().fail_at = n ? state().calls + n : 0;
    state().fail_result = result;
}
void fail_entry(const std::string &name, int result) {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().fail_name = name;
    state().fail_name_result = result;
}
long calls() {
    std::lock_guard<std::mutex> lock(state().mutex);
    return state().calls;
}
void reset_calls() {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().calls = 0;
    state().fail_at = 0;
    state().log.clear();
}
std::vector<std::string> call_log() {
    std::lock_guard<std::mutex> lock(state().mutex);
    return state().log;
}
void set_processes(const std::vector<std::pair<uint32_t, unsigned long long>> &processes) {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().processes = processes;
}
void set_compute_mode(int mode) {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().compute_mode = mode;
}

}  // namespace fake::nvml

namespace fake::nvml {
std::vector<unsigned> cleared_fields() {
    std::lock_guard<std::mutex> lock(state().mutex);
    return state().cleared_fields;
}
}  // namespace fake::nvml

namespace fake::nvml {
void post_event(unsigned device, unsigned long long type, unsigned long long data) {
    std::lock_guard<std::mutex> lock(state().mutex);
    for (State::EventSet &set : state().event_sets)
        for (const auto &[d, types] : set.registered)
            if (set.live && d == static_cast<int>(device) && (types & type)) {
                set.queue.push_back(n::EventData{handle_of(device), type, data, 0xFFFFFFFFu, 0xFFFFFFFFu});
                break;
            }
}
size_t live_event_sets() {
    std::lock_guard<std::mutex> lock(state().mutex);
    size_t live = 0;
    for (const State::EventSet &set : state().event_sets) live += set.live ? 1 : 0;
    return live;
}
}  // namespace fake::nvml
