// The exported names of libcucore_fake_nvml.so: NVML's entry points (each
// forwards to the fake's table) and the fake_nvml_* controls the Python tests
// call through ctypes. FAKE_NVML_DEVICES (read at load) sets the GPU count (2).
#include <cstdlib>
#include <utility>
#include <vector>

#include "fake_nvml.hpp"

namespace {
namespace n = cucore::driver::nvml;
const cucore::driver::NvmlTable &t() {
    static const cucore::driver::NvmlTable &table = [] () -> const cucore::driver::NvmlTable & {
        const char *devices = std::getenv("FAKE_NVML_DEVICES");
        return fake::nvml::table(devices && *devices ? static_cast<unsigned>(std::atoi(devices)) : 2u);
    }();
    return table;
}
}  // namespace

#define FAKE_NVML_EXPORT extern "C" __attribute__((visibility("default")))

FAKE_NVML_EXPORT n::Return nvmlInit_v2() { return t().nvmlInit_v2(); }
FAKE_NVML_EXPORT n::Return nvmlShutdown() { return t().nvmlShutdown(); }
FAKE_NVML_EXPORT const char *nvmlErrorString(n::Return r) { return t().nvmlErrorString(r); }
FAKE_NVML_EXPORT n::Return nvmlSystemGetDriverVersion(char *v, unsigned l) { return t().nvmlSystemGetDriverVersion(v, l); }
FAKE_NVML_EXPORT n::Return nvmlSystemGetNVMLVersion(char *v, unsigned l) { return t().nvmlSystemGetNVMLVersion(v, l); }
FAKE_NVML_EXPORT n::Return nvmlSystemGetCudaDriverVersion_v2(int *v) { return t().nvmlSystemGetCudaDriverVersion_v2(v); }
FAKE_NVML_EXPORT n::Return nvmlDeviceGetCount_v2(unsigned *c) { return t().nvmlDeviceGetCount_v2(c); }
FAKE_NVML_EXPORT n::Return nvmlDeviceGetHandleByIndex_v2(unsigned i, n::Device *d) { return t().nvmlDeviceGetHandleByIndex_v2(i, d); }
FAKE_NVML_EXPORT n::Return nvmlDeviceGetHandleByUUID(const char *u, n::Device *d) { return t().nvmlDeviceGetHandleByUUID(u, d); }
FAKE_NVML_EXPORT n::Return nvmlDeviceGetHandleByPciBusId_v2(const char *b, n::Device *d) { return t().nvmlDeviceGetHandleByPciBusId_v2(b, d); }
FAKE_NVML_EXPORT n::Return nvmlDeviceGetIndex(n::Device d, unsigned *i) { return t().nvmlDeviceGetIndex(d, i); }
FAKE_NVML_EXPORT n::Return nvmlDeviceGetName(n::Device d, char *v, unsigned l) { return t().nvmlDeviceGetName(d, v, l); }
FAKE_NVML_EXPORT n::Return nvmlDeviceGetUUID(n::Device d, char *v, unsigned l) { return t().nvmlDeviceGetUUID(d, v, l); }
FAKE_NVML_EXPORT n::Return nvmlDeviceGetPciInfo_v3(n::Device d, n::PciInfo *p) { return t().nvmlDeviceGetPciInfo_v3(d, p); }
FAKE_NVML_EXPORT n::Return nvmlDeviceGetMemoryInfo(n::Device d, n::Memory *m) { return t().nvmlDeviceGetMemoryInfo(d, m); }
FAKE_NVML_EXPORT n::Return nvmlDeviceGetUtilizationRates(n::Device d, n::Utilization *u) { return t().nvmlDeviceGetUtilizationRates(d, u); }
FAKE_NVML_EXPORT n::Return nvmlDeviceGetTemperature(n::Device d, int s, unsigned *c) { return t().nvmlDeviceGetTemperature(d, s, c); }
FAKE_NVML_EXPORT n::Return nvmlDeviceGetPowerUsage(n::Device d, unsigned *p) { return t().nvmlDeviceGetPowerUsage(d, p); }
FAKE_NVML_EXPORT n::Return nvmlDeviceGetEnforcedPowerLimit(n::Device d, unsigned *p) { return t().nvmlDeviceGetEnforcedPowerLimit(d, p); }
FAKE_NVML_EXPORT n::Return nvmlDeviceGetClockInfo(n::Device d, int k, unsigned *m) { return t().nvmlDeviceGetClockInfo(d, k, m); }
FAKE_NVML_EXPORT n::Return nvmlDeviceGetMaxClockInfo(n::Device d, int k, unsigned *m) { return t().nvmlDeviceGetMaxClockInfo(d, k, m); }
FAKE_NVML_EXPORT n::Return nvmlDeviceGetComputeMode(n::Device d, int *m) { return t().nvmlDeviceGetComputeMode(d, m); }
FAKE_NVML_EXPORT n::Return nvmlDeviceGetComputeRunningProcesses_v3(n::Device d, unsigned *c, n::ProcessInfo *p) {
    return t().nvmlDeviceGetComputeRunningProcesses_v3(d, c, p);
}

// Controls: make every call of `name` fail with `result` (NULL or "" clears);
// list `count` processes (pids[i], used[i]); answer compute mode `mode`.
FAKE_NVML_EXPORT void fake_nvml_fail_entry(const char *name, int result) {
    t();
    fake::nvml::fail_entry(name ? name : "", result);
}
FAKE_NVML_EXPORT void fake_nvml_set_processes(const unsigned *pids, const unsigned long long *used, unsigned count) {
    t();
    std::vector<std::pair<uint32_t, unsigned long long>> processes;
    for (unsigned i = 0; i < count; ++i) processes.emplace_back(pids[i], used[i]);
    fake::nvml::set_processes(processes);
}
FAKE_NVML_EXPORT void fake_nvml_set_compute_mode(int mode) {
    t();
    fake::nvml::set_compute_mode(mode);
}
