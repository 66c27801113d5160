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

namespace nvml = cucore::driver::nvml;
FAKE_NVML_EXPORT const char *nvmlErrorString(n::Return r) { return t().nvmlErrorString(r); }
#define FAKE_NVML_FORWARD(name, params, args) \
    FAKE_NVML_EXPORT n::Return name params { return t().name args; }
CUCORE_NVML_ENTRY_POINTS(FAKE_NVML_FORWARD)
#undef FAKE_NVML_FORWARD

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
FAKE_NVML_EXPORT void fake_nvml_post_event(unsigned device, unsigned long long type, unsigned long long data) {
    t();
    fake::nvml::post_event(device, type, data);
}
FAKE_NVML_EXPORT unsigned long fake_nvml_live_event_sets() {
    t();
    return static_cast<unsigned long>(fake::nvml::live_event_sets());
}
FAKE_NVML_EXPORT void fake_nvml_post_system_event(unsigned long long type, unsigned gpu_id) {
    t();
    fake::nvml::post_system_event(type, gpu_id);
}
FAKE_NVML_EXPORT unsigned long fake_nvml_live_system_event_sets() {
    t();
    return static_cast<unsigned long>(fake::nvml::live_system_event_sets());
}
