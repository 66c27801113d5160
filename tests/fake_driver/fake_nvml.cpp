// The substitute NVML (fake_nvml.hpp). Devices are handles 1..n cast to
// nvmlDevice_t; anything else is NVML_ERROR_INVALID_ARGUMENT, as NVML answers.
// The queries of issue 17 and the event sets are in fake_nvml_queries.cpp.
#include "fake_nvml_state.hpp"

namespace fake::nvml {
namespace {

using namespace detail;

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
    add_query_entries(t);
    return t;
}

}  // namespace

using detail::State;
using detail::state;

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
    s.system_event_sets.clear();
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

