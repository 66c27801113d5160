// libcucore C++ façade: system information through NVML (over cucore/system.h;
// cuda.core: cuda.core.system). Where NVML is absent every call throws Error
// with NOT_SUPPORTED; nothing else in the library depends on it.
#ifndef CUCORE_SYSTEM_HPP
#define CUCORE_SYSTEM_HPP

#include <cstdint>
#include <string>
#include <vector>

#include "common.hpp"
#include "device.hpp"
#include "system.h"

namespace cucore {

namespace detail {
// Copies a (buffer, capacity, length) text of NVML.
template <typename Fn>
std::string read_system_text(Fn fn) {
    std::size_t length = 0;
    check(fn(nullptr, 0, &length));
    std::string text(length + 1, '\0');
    check(fn(&text[0], text.size(), &length));
    text.resize(length < text.size() - 1 ? length : text.size() - 1);
    return text;
}
} // namespace detail

namespace system {

// The kernel-mode driver's version, e.g. "580.65.06". Throws Error: NOT_SUPPORTED (no NVML), NVML.
inline std::string driver_version() { return detail::read_system_text(cucore_system_driver_version); }

// NVML's version, e.g. "13.580.65.06". Throws as driver_version().
inline std::string nvml_version() { return detail::read_system_text(cucore_system_nvml_version); }

// The newest CUDA version the driver supports (e.g. 13000), as NVML reports it. Throws as driver_version().
inline int cuda_driver_version() {
    int v = 0;
    detail::check(cucore_system_cuda_driver_version(&v));
    return v;
}

// The number of GPUs NVML sees (all of the machine's). Throws as driver_version().
inline unsigned device_count() {
    unsigned n = 0;
    detail::check(cucore_system_device_count(&n));
    return n;
}

// The driver's branch, e.g. "r580_00". Throws as driver_version().
inline std::string driver_branch() { return detail::read_system_text(cucore_system_driver_branch); }

// The name of process `pid`. Throws as driver_version() (INVALID_ARGUMENT: NVML's NOT_FOUND).
inline std::string process_name(unsigned pid) {
    return detail::read_system_text(
        [pid](char *b, std::size_t c, std::size_t *l) { return cucore_system_process_name(pid, b, c, l); });
}

// NVML's nvmlReturn_t of the last system call of this thread that failed in NVML (0: none);
// read it in the handler of the Error that call threw.
inline int last_nvml_result() noexcept { return cucore_system_last_nvml_result(); }

} // namespace system

using SystemPciInfo = cucore_system_pci_info_t;
using SystemMemoryInfo = cucore_system_memory_info_t;

// The share of the last sample period a kernel ran and memory was accessed, in percent.
struct SystemUtilization {
    unsigned gpu_percent = 0;
    unsigned memory_percent = 0;
};

// A process with a compute context on a GPU and the device memory it uses
// (CUCORE_SYSTEM_MEMORY_NOT_AVAILABLE where NVML cannot see it).
struct SystemProcess {
    uint32_t pid = 0;
    uint64_t used_memory = 0;
};

// One GPU as NVML sees it (cuda.core: system.Device), by NVML index, UUID or PCI
// bus id. Name, UUID and PCI bus id are read once; the other members read the
// GPU's state now. Throws Error with NVML's status and text.
class SystemDevice : public Handle<SystemDevice, cucore_system_device_t> {
public:
    SystemDevice() noexcept = default;

    // The GPU of NVML index `index`. Throws Error: INVALID_ARGUMENT (no such GPU), NOT_SUPPORTED (no NVML), NVML.
    explicit SystemDevice(unsigned index) : SystemDevice(from_index(index)) {}
    // The same as SystemDevice(index).
    static SystemDevice from_index(unsigned index) {
        cucore_system_device_t *raw = nullptr;
        detail::check(cucore_system_device_get(index, &raw));
        return adopt(raw);
    }
    // The GPU whose UUID is `uuid` ("GPU-..."). Throws as SystemDevice(unsigned).
    static SystemDevice by_uuid(const std::string &uuid) {
        cucore_system_device_t *raw = nullptr;
        detail::check(cucore_system_device_get_by_uuid(uuid.c_str(), &raw));
        return adopt(raw);
    }
    // The GPU at PCI bus id `pci_bus_id`. Throws as SystemDevice(unsigned).
    static SystemDevice by_pci_bus_id(const std::string &pci_bus_id) {
        cucore_system_device_t *raw = nullptr;
        detail::check(cucore_system_device_get_by_pci_bus_id(pci_bus_id.c_str(), &raw));
        return adopt(raw);
    }
    // The NVML view of CUDA device `device` (matched by UUID). Throws as SystemDevice(unsigned).
    static SystemDevice of(const Device &device) {
        cucore_system_device_t *raw = nullptr;
        detail::check(cucore_system_device_get_for_device(device.get(), &raw));
        return adopt(raw);
    }

    // The CUDA device of this GPU (cuda.core: to_cuda_device). Throws Error:
    // INVALID_ARGUMENT (CUDA does not see it), NO_DRIVER, CUDA.
    Device to_device() const {
        cucore_device_t *raw = nullptr;
        detail::check(cucore_system_device_to_device(get(), &raw));
        return Device::adopt(raw);
    }

    // The NVML handle (nvmlDevice_t), for NVML calls this library does not wrap.
    void *handle() const {
        void *v = nullptr;
        detail::check(cucore_system_device_handle(get(), &v));
        return v;
    }
    unsigned index() const {
        unsigned v = 0;
        detail::check(cucore_system_device_index(get(), &v));
        return v;
    }
    std::string name() const { return text(cucore_system_device_name); }
    std::string uuid() const { return text(cucore_system_device_uuid); }
    std::string pci_bus_id() const { return text(cucore_system_device_pci_bus_id); }

    SystemPciInfo pci_info() const {
        SystemPciInfo v = CUCORE_SYSTEM_PCI_INFO_INIT;
        detail::check(cucore_system_device_pci_info(get(), &v));
        return v;
    }
    SystemMemoryInfo memory_info() const {
        SystemMemoryInfo v = CUCORE_SYSTEM_MEMORY_INFO_INIT;
        detail::check(cucore_system_device_memory_info(get(), &v));
        return v;
    }
    SystemUtilization utilization() const {
        SystemUtilization v;
        detail::check(cucore_system_device_utilization(get(), &v.gpu_percent, &v.memory_percent));
        return v;
    }
    // Degrees Celsius.
    unsigned temperature() const { return reading(cucore_system_device_temperature); }
    // Milliwatts drawn now.
    unsigned power_usage() const { return reading(cucore_system_device_power_usage); }
    // The enforced power limit in milliwatts.
    unsigned power_limit() const { return reading(cucore_system_device_power_limit); }
    // MHz now, and at most.
    unsigned clock(cucore_system_clock_t which) const {
        unsigned v = 0;
        detail::check(cucore_system_device_clock(get(), which, &v));
        return v;
    }
    unsigned max_clock(cucore_system_clock_t which) const {
        unsigned v = 0;
        detail::check(cucore_system_device_max_clock(get(), which, &v));
        return v;
    }
    cucore_compute_mode_t compute_mode() const {
        cucore_compute_mode_t v = CUCORE_COMPUTE_MODE_UNSET;
        detail::check(cucore_system_device_compute_mode(get(), &v));
        return v;
    }
    // The processes with a compute context on this GPU now.
    std::vector<SystemProcess> processes() const {
        for (;;) {  // the list may grow between the sizing call and the reading one
            std::size_t count = 0;
            detail::check(cucore_system_device_processes(get(), nullptr, nullptr, 0, &count));
            std::vector<uint32_t> pids(count + 4);
            std::vector<uint64_t> used(count + 4);
            detail::check(cucore_system_device_processes(get(), pids.data(), used.data(), pids.size(), &count));
            if (count > pids.size()) continue;
            std::vector<SystemProcess> out(count);
            for (std::size_t i = 0; i < count; ++i) out[i] = SystemProcess{pids[i], used[i]};
            return out;
        }
    }

    // The values of numeric property `query` (include/cucore/system.h lists each one's NVML
    // call, arguments and values). Throws Error with NVML's status (NOT_SUPPORTED where the GPU lacks it).
    std::vector<int64_t> query(cucore_system_query_t query, int64_t arg0 = 0, int64_t arg1 = 0) const {
        for (;;) {  // a variable-length list may grow between the sizing call and the reading one
            std::size_t count = 0;
            detail::check(cucore_system_device_query(get(), query, arg0, arg1, nullptr, 0, &count));
            std::vector<int64_t> values(count + 8);
            detail::check(cucore_system_device_query(get(), query, arg0, arg1, values.data(), values.size(), &count));
            if (count > values.size()) continue;
            values.resize(count);
            return values;
        }
    }
    // Text property `which` (serial, board part number, InfoROM versions).
    std::string text(cucore_system_text_t which, int64_t arg = 0) const {
        return detail::read_system_text([this, which, arg](char *b, std::size_t c, std::size_t *l) {
            return cucore_system_device_text(get(), which, arg, b, c, l);
        });
    }
    // Makes change `which` (most need root).
    void control(cucore_system_control_t which, int64_t arg0 = 0, int64_t arg1 = 0) const {
        detail::check(cucore_system_device_control(get(), which, arg0, arg1));
    }
    // The devices of `relation` to this one.
    std::vector<SystemDevice> related(cucore_system_relation_t relation, int64_t arg = 0) const {
        return collect([&](cucore_system_device_t **d, std::size_t c, std::size_t *n) {
            return cucore_system_device_related(get(), relation, arg, d, c, n);
        });
    }
    // The GPUs with an affinity to CPU `cpu`.
    static std::vector<SystemDevice> with_cpu_affinity(unsigned cpu) {
        return collect([cpu](cucore_system_device_t **d, std::size_t c, std::size_t *n) {
            return cucore_system_devices_with_cpu_affinity(cpu, d, c, n);
        });
    }
    // Reads fields (set field_id and scope_id of each; the call fills the rest, with a result per field).
    void field_values(std::vector<cucore_system_field_value_t> &fields) const {
        detail::check(cucore_system_device_field_values(get(), fields.data(), fields.size()));
    }
    // Resets fields (counters) to zero.
    void clear_field_values(const std::vector<cucore_system_field_value_t> &fields) const {
        detail::check(cucore_system_device_clear_field_values(get(), fields.data(), fields.size()));
    }
    // NVML's P2P status (0 = OK) of capability `caps_index` between this GPU and `peer`.
    int p2p_status(const SystemDevice &peer, int caps_index) const {
        int v = 0;
        detail::check(cucore_system_device_p2p_status(get(), peer.get(), caps_index, &v));
        return v;
    }
    // NVML's topology level of the nearest common ancestor of this GPU and `peer`.
    int common_ancestor(const SystemDevice &peer) const {
        int v = 0;
        detail::check(cucore_system_device_common_ancestor(get(), peer.get(), &v));
        return v;
    }

    // Starts recording events of `event_types` (NVML's nvmlEventType bits) in this handle's set.
    void register_events(uint64_t event_types) const {
        detail::check(cucore_system_device_register_events(get(), event_types));
    }
    // The next recorded event, waiting up to `timeout_ms` (0: no limit); Error NOT_READY on timeout.
    cucore_system_event_t wait_event(unsigned timeout_ms, SystemDevice *event_device = nullptr) const {
        cucore_system_event_t event{};
        cucore_system_device_t *raw = nullptr;
        detail::check(cucore_system_device_wait_event(get(), timeout_ms, &event, event_device ? &raw : nullptr));
        if (event_device) *event_device = adopt(raw);
        return event;
    }

private:
    template <typename Fn>
    static std::vector<SystemDevice> collect(Fn fn) {
        for (;;) {
            std::size_t count = 0;
            detail::check(fn(nullptr, 0, &count));
            std::vector<cucore_system_device_t *> raw(count + 4, nullptr);
            detail::check(fn(raw.data(), raw.size(), &count));
            std::vector<SystemDevice> out;
            for (std::size_t i = 0; i < count && i < raw.size(); ++i) out.push_back(adopt(raw[i]));
            if (count <= raw.size()) return out;
        }
    }
    template <typename Fn>
    std::string text(Fn fn) const {
        const char *v = nullptr;
        detail::check(fn(get(), &v));
        return v;
    }
    template <typename Fn>
    unsigned reading(Fn fn) const {
        unsigned v = 0;
        detail::check(fn(get(), &v));
        return v;
    }
};

// One system event (cuda.core: system's SystemEvent): its type
// (CUCORE_SYSTEM_EVENT_* bit) and its GPU's PCI location as NVML packs it
// (domain << 16 | bus << 8 | device).
struct SystemEvent {
    uint64_t event_type = 0;
    uint32_t gpu_id = 0;
};

// A set recording system events (GPUs bound to or unbound from the driver;
// cuda.core: system.register_events and RegisteredSystemEvents). Linux only.
class SystemEventSet : public Handle<SystemEventSet, cucore_system_event_set_t> {
public:
    SystemEventSet() noexcept = default;

    // A new set recording the events of the mask `event_types` (CUCORE_SYSTEM_EVENT_*).
    // Throws Error: INVALID_ARGUMENT (no type), NOT_SUPPORTED (no NVML, or NVML cannot record them here), NVML.
    static SystemEventSet register_events(uint64_t event_types) {
        cucore_system_event_set_t *raw = nullptr;
        detail::check(cucore_system_register_events(event_types, &raw));
        return adopt(raw);
    }

    // Up to `capacity` (at least 1) recorded events, waiting up to `timeout_ms` (0: no limit) for the first.
    // Throws Error: NOT_READY when none came in time (last_nvml_result() is NVML's TIMEOUT), NVML.
    std::vector<SystemEvent> wait(unsigned timeout_ms, std::size_t capacity = 1) const {
        // Never empty, so that a capacity of 0 is refused as such (INVALID_ARGUMENT naming 'capacity').
        std::vector<uint64_t> types(capacity ? capacity : 1);
        std::vector<uint32_t> gpus(capacity ? capacity : 1);
        std::size_t count = 0;
        detail::check(cucore_system_event_set_wait(get(), timeout_ms, types.data(), gpus.data(), capacity, &count));
        std::vector<SystemEvent> out(count);
        for (std::size_t i = 0; i < count; ++i) out[i] = SystemEvent{types[i], gpus[i]};
        return out;
    }
};

inline SystemDevice Device::to_system_device() const { return SystemDevice::of(*this); }

} // namespace cucore

#endif // CUCORE_SYSTEM_HPP
