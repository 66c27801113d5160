// The fake NVML's answers to the queries of issue 17 (system.h's generic
// readers) and its event sets (fake_nvml.hpp lists the values).
#include <algorithm>
#include <cstddef>

#include "fake_nvml_state.hpp"

namespace fake::nvml::detail {
namespace {

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

// System event sets are handles 1..n; requests must carry version 1 of their struct.
State::SystemEventSet *system_event_set(n::SystemEventSet set) {
    const uintptr_t k = reinterpret_cast<uintptr_t>(set);
    auto &sets = state().system_event_sets;
    return k >= 1 && k <= sets.size() && sets[k - 1].live ? &sets[k - 1] : nullptr;
}
template <class Request>
bool versioned(const Request *request) {
    return request->version == n::struct_version<Request>(1);
}
n::Return f_system_event_set_create(n::SystemEventSetCreateRequest *request) {
    FAKE_NVML_ENTER(nvmlSystemEventSetCreate);
    FAKE_NVML_OUT(request);
    if (!versioned(request)) return n::kErrorArgumentVersionMismatch;
    std::lock_guard<std::mutex> lock(state().mutex);
    state().system_event_sets.emplace_back();
    request->set = reinterpret_cast<n::SystemEventSet>(static_cast<uintptr_t>(state().system_event_sets.size()));
    return n::kSuccess;
}
n::Return f_system_register_events(n::SystemRegisterEventRequest *request) {
    FAKE_NVML_ENTER(nvmlSystemRegisterEvents);
    FAKE_NVML_OUT(request);
    if (!versioned(request)) return n::kErrorArgumentVersionMismatch;
    std::lock_guard<std::mutex> lock(state().mutex);
    State::SystemEventSet *s = system_event_set(request->set);
    if (!s) return n::kErrorInvalidArgument;
    if (request->eventTypes & ~0x3ULL) return n::kErrorNotSupported;
    s->types |= request->eventTypes;
    return n::kSuccess;
}
n::Return f_system_event_wait(n::SystemEventSetWaitRequest *request) {
    FAKE_NVML_ENTER(nvmlSystemEventSetWait);
    FAKE_NVML_OUT(request);
    if (!versioned(request)) return n::kErrorArgumentVersionMismatch;
    if (!request->data || !request->dataSize) return n::kErrorInvalidArgument;
    std::lock_guard<std::mutex> lock(state().mutex);
    State::SystemEventSet *s = system_event_set(request->set);
    if (!s) return n::kErrorInvalidArgument;
    request->numEvent = 0;
    if (s->queue.empty()) return n::kErrorTimeout;
    const size_t given = std::min<size_t>(request->dataSize, s->queue.size());
    for (size_t i = 0; i < given; ++i) request->data[i] = s->queue[i];
    s->queue.erase(s->queue.begin(), s->queue.begin() + static_cast<std::ptrdiff_t>(given));
    request->numEvent = static_cast<unsigned>(given);
    return n::kSuccess;
}
n::Return f_system_event_set_free(n::SystemEventSetFreeRequest *request) {
    FAKE_NVML_ENTER(nvmlSystemEventSetFree);
    FAKE_NVML_OUT(request);
    if (!versioned(request)) return n::kErrorArgumentVersionMismatch;
    std::lock_guard<std::mutex> lock(state().mutex);
    State::SystemEventSet *s = system_event_set(request->set);
    if (!s) return n::kErrorInvalidArgument;
    s->live = false;
    return n::kSuccess;
}

}  // namespace

void add_query_entries(NvmlTable &t) {
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
    t.nvmlSystemEventSetCreate = f_system_event_set_create;
    t.nvmlSystemRegisterEvents = f_system_register_events;
    t.nvmlSystemEventSetWait = f_system_event_wait;
    t.nvmlSystemEventSetFree = f_system_event_set_free;
}

}  // namespace fake::nvml::detail

namespace fake::nvml {
using namespace detail;
std::vector<unsigned> cleared_fields() {
    std::lock_guard<std::mutex> lock(state().mutex);
    return state().cleared_fields;
}

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

void post_system_event(unsigned long long type, unsigned gpu_id) {
    std::lock_guard<std::mutex> lock(state().mutex);
    for (State::SystemEventSet &set : state().system_event_sets)
        if (set.live && (set.types & type)) set.queue.push_back(n::SystemEventData{type, gpu_id});
}
size_t live_system_event_sets() {
    std::lock_guard<std::mutex> lock(state().mutex);
    size_t live = 0;
    for (const State::SystemEventSet &set : state().system_event_sets) live += set.live ? 1 : 0;
    return live;
}
}  // namespace fake::nvml
