// C ABI: system information through NVML.
#include "capi/capi.hpp"
#include "capi/text_out.hpp"
#include "core/system.hpp"
#include "driver/nvml.hpp"

#include <climits>
#include <utility>
#include <vector>

using namespace cucore;

namespace {

cucore_system_clock_t check_clock(const cucore_system_clock_t &clock) {
    return capi::check_enum_range(clock, CUCORE_SYSTEM_CLOCK_GRAPHICS, CUCORE_SYSTEM_CLOCK_VIDEO, "clock",
                                  "must be CUCORE_SYSTEM_CLOCK_GRAPHICS, _SM, _MEMORY or _VIDEO");
}

// A device's identifying text (UUID, PCI bus id): not NULL, not empty.
const char *check_text(const char *text, const char *argument) {
    capi::require(text, argument);
    if (!*text) core::throw_invalid_argument(std::string("argument '") + argument + "' is empty");
    return text;
}

// Clears a versioned out struct whose struct_size is set, so that it reads zeros if the call fails; one
// whose struct_size is not is refused by write_versioned after the handle (a bad handle is named first).
template <class Struct>
void clear_versioned(Struct *out, const Struct &init) {
    if (out && out->struct_size >= sizeof(uint32_t)) capi::write_versioned(out, init, "info", "");
}

// Every system call starts with no NVML result, so cucore_system_last_nvml_result
// names the failure of this call alone.
template <class Fn>
cucore_status_t nvml_guarded(const char *function, Fn &&fn) {
    driver::reset_last_nvml_result();
    return capi::guarded(function, std::forward<Fn>(fn));
}

// A query's argument: NVML takes each as an unsigned or int index, type or flag.
int64_t check_query_argument(int64_t value, const char *argument) {
    if (value < 0 || value > INT32_MAX)
        core::throw_invalid_argument(std::string("argument '") + argument + "' (" + std::to_string(value) +
                                     ") is not in 0..INT32_MAX");
    return value;
}

void check_fields(const cucore_system_field_value_t *values, size_t count) {
    capi::require_array(values, count, "values");
    if (count > static_cast<size_t>(INT32_MAX))
        core::throw_invalid_argument("argument 'count' (" + std::to_string(count) + ") is above INT_MAX");
}

}  // namespace

extern "C" {

cucore_status_t cucore_system_driver_version(char *buffer, size_t capacity, size_t *length) {
    return nvml_guarded(__func__, [&] {
        capi::check_text_out(buffer, capacity, length);
        capi::text_out(core::SystemDevice::driver_version(), buffer, capacity, length);
    });
}

cucore_status_t cucore_system_nvml_version(char *buffer, size_t capacity, size_t *length) {
    return nvml_guarded(__func__, [&] {
        capi::check_text_out(buffer, capacity, length);
        capi::text_out(core::SystemDevice::nvml_version(), buffer, capacity, length);
    });
}

cucore_status_t cucore_system_cuda_driver_version(int *version) {
    return nvml_guarded(__func__, [&] {
        int &result = capi::out(version, "version");
        result = core::SystemDevice::cuda_driver_version();
    });
}

cucore_status_t cucore_system_device_count(unsigned *count) {
    return nvml_guarded(__func__, [&] {
        unsigned &result = capi::out(count, "count");
        result = core::SystemDevice::count();
    });
}

cucore_status_t cucore_system_device_get(unsigned index, cucore_system_device_t **device) {
    return nvml_guarded(__func__, [&] {
        cucore_system_device_t *&result = capi::out(device, "device");
        result = capi::give<cucore_system_device_t>(core::SystemDevice::get(index));
    });
}

cucore_status_t cucore_system_device_get_by_uuid(const char *uuid, cucore_system_device_t **device) {
    return nvml_guarded(__func__, [&] {
        cucore_system_device_t *&result = capi::out(device, "device");
        result = capi::give<cucore_system_device_t>(core::SystemDevice::by_uuid(check_text(uuid, "uuid")));
    });
}

cucore_status_t cucore_system_device_get_by_pci_bus_id(const char *pci_bus_id, cucore_system_device_t **device) {
    return nvml_guarded(__func__, [&] {
        cucore_system_device_t *&result = capi::out(device, "device");
        result = capi::give<cucore_system_device_t>(
            core::SystemDevice::by_pci_bus_id(check_text(pci_bus_id, "pci_bus_id")));
    });
}

cucore_status_t cucore_system_device_get_for_device(const cucore_device_t *device,
                                                    cucore_system_device_t **system_device) {
    return nvml_guarded(__func__, [&] {
        cucore_system_device_t *&result = capi::out(system_device, "system_device");
        result = capi::give<cucore_system_device_t>(core::SystemDevice::for_device(capi::get(device, "device")));
    });
}

cucore_status_t cucore_system_device_to_device(const cucore_system_device_t *device, cucore_device_t **cuda_device) {
    return nvml_guarded(__func__, [&] {
        cucore_device_t *&result = capi::out(cuda_device, "cuda_device");
        result = capi::give<cucore_device_t>(capi::get(device, "device").to_device());
    });
}

cucore_status_t cucore_system_device_handle(const cucore_system_device_t *device, void **nvml_device) {
    return nvml_guarded(__func__, [&] {
        void *&result = capi::out(nvml_device, "nvml_device");
        result = capi::get(device, "device").handle();
    });
}

cucore_status_t cucore_system_device_index(const cucore_system_device_t *device, unsigned *index) {
    return nvml_guarded(__func__, [&] {
        unsigned &result = capi::out(index, "index");
        result = capi::get(device, "device").index();
    });
}

cucore_status_t cucore_system_device_name(const cucore_system_device_t *device, const char **name) {
    return nvml_guarded(__func__, [&] {
        const char *&result = capi::out(name, "name");
        result = capi::get(device, "device").name().c_str();
    });
}

cucore_status_t cucore_system_device_uuid(const cucore_system_device_t *device, const char **uuid) {
    return nvml_guarded(__func__, [&] {
        const char *&result = capi::out(uuid, "uuid");
        result = capi::get(device, "device").uuid().c_str();
    });
}

cucore_status_t cucore_system_device_pci_bus_id(const cucore_system_device_t *device, const char **pci_bus_id) {
    return nvml_guarded(__func__, [&] {
        const char *&result = capi::out(pci_bus_id, "pci_bus_id");
        result = capi::get(device, "device").pci_bus_id().c_str();
    });
}

cucore_status_t cucore_system_device_pci_info(const cucore_system_device_t *device, cucore_system_pci_info_t *info) {
    return nvml_guarded(__func__, [&] {
        clear_versioned(info, cucore_system_pci_info_t(CUCORE_SYSTEM_PCI_INFO_INIT));
        core::SystemDevice &object = capi::get(device, "device");
        capi::write_versioned(info, cucore_system_pci_info_t(CUCORE_SYSTEM_PCI_INFO_INIT), "info", "CUCORE_SYSTEM_PCI_INFO_INIT");  // checked before NVML is asked
        capi::write_versioned(info, object.pci_info(), "info", "CUCORE_SYSTEM_PCI_INFO_INIT");
    });
}

cucore_status_t cucore_system_device_memory_info(const cucore_system_device_t *device,
                                                 cucore_system_memory_info_t *info) {
    return nvml_guarded(__func__, [&] {
        clear_versioned(info, cucore_system_memory_info_t(CUCORE_SYSTEM_MEMORY_INFO_INIT));
        core::SystemDevice &object = capi::get(device, "device");
        capi::write_versioned(info, cucore_system_memory_info_t(CUCORE_SYSTEM_MEMORY_INFO_INIT), "info", "CUCORE_SYSTEM_MEMORY_INFO_INIT");  // checked before NVML is asked
        capi::write_versioned(info, object.memory_info(), "info", "CUCORE_SYSTEM_MEMORY_INFO_INIT");
    });
}

cucore_status_t cucore_system_device_utilization(const cucore_system_device_t *device, unsigned *gpu_percent,
                                                 unsigned *memory_percent) {
    return nvml_guarded(__func__, [&] {
        unsigned &gpu = capi::out(gpu_percent, "gpu_percent");
        unsigned &memory = capi::out(memory_percent, "memory_percent");
        capi::get(device, "device").utilization(gpu, memory);
    });
}

cucore_status_t cucore_system_device_temperature(const cucore_system_device_t *device, unsigned *celsius) {
    return nvml_guarded(__func__, [&] {
        unsigned &result = capi::out(celsius, "celsius");
        result = capi::get(device, "device").temperature();
    });
}

cucore_status_t cucore_system_device_power_usage(const cucore_system_device_t *device, unsigned *milliwatts) {
    return nvml_guarded(__func__, [&] {
        unsigned &result = capi::out(milliwatts, "milliwatts");
        result = capi::get(device, "device").power_usage();
    });
}

cucore_status_t cucore_system_device_power_limit(const cucore_system_device_t *device, unsigned *milliwatts) {
    return nvml_guarded(__func__, [&] {
        unsigned &result = capi::out(milliwatts, "milliwatts");
        result = capi::get(device, "device").power_limit();
    });
}

cucore_status_t cucore_system_device_clock(const cucore_system_device_t *device, cucore_system_clock_t clock,
                                           unsigned *mhz) {
    return nvml_guarded(__func__, [&] {
        unsigned &result = capi::out(mhz, "mhz");
        const cucore_system_clock_t which = check_clock(clock);
        result = capi::get(device, "device").clock(which);
    });
}

cucore_status_t cucore_system_device_max_clock(const cucore_system_device_t *device, cucore_system_clock_t clock,
                                               unsigned *mhz) {
    return nvml_guarded(__func__, [&] {
        unsigned &result = capi::out(mhz, "mhz");
        const cucore_system_clock_t which = check_clock(clock);
        result = capi::get(device, "device").max_clock(which);
    });
}

cucore_status_t cucore_system_device_compute_mode(const cucore_system_device_t *device, cucore_compute_mode_t *mode) {
    return nvml_guarded(__func__, [&] {
        cucore_compute_mode_t &result = capi::out(mode, "mode");
        result = capi::get(device, "device").compute_mode();
    });
}

cucore_status_t cucore_system_device_processes(const cucore_system_device_t *device, uint32_t *pids,
                                               uint64_t *used_memory, size_t capacity, size_t *count) {
    return nvml_guarded(__func__, [&] {
        size_t &result = capi::out(count, "count");
        capi::require_array(pids, capacity, "pids", "capacity");
        capi::require_array(used_memory, capacity, "used_memory", "capacity");
        const std::vector<core::SystemDevice::Process> processes = capi::get(device, "device").processes();
        for (size_t i = 0; i < processes.size() && i < capacity; ++i) {
            pids[i] = processes[i].pid;
            used_memory[i] = processes[i].used_memory;
        }
        result = processes.size();
    });
}

int cucore_system_last_nvml_result(void) { return driver::last_nvml_result(); }

cucore_status_t cucore_system_driver_branch(char *buffer, size_t capacity, size_t *length) {
    return nvml_guarded(__func__, [&] {
        capi::check_text_out(buffer, capacity, length);
        capi::text_out(core::SystemDevice::driver_branch(), buffer, capacity, length);
    });
}

cucore_status_t cucore_system_process_name(unsigned pid, char *buffer, size_t capacity, size_t *length) {
    return nvml_guarded(__func__, [&] {
        capi::check_text_out(buffer, capacity, length);
        capi::text_out(core::SystemDevice::process_name(pid), buffer, capacity, length);
    });
}

cucore_status_t cucore_system_devices_with_cpu_affinity(unsigned cpu, cucore_system_device_t **devices,
                                                        size_t capacity, size_t *count) {
    return nvml_guarded(__func__, [&] {
        size_t &result = capi::out(count, "count");
        capi::give_list(core::SystemDevice::with_cpu_affinity(cpu), devices, capacity, result, "devices");
    });
}

cucore_status_t cucore_system_device_query(const cucore_system_device_t *device, cucore_system_query_t query,
                                           int64_t arg0, int64_t arg1, int64_t *values, size_t capacity,
                                           size_t *count) {
    return nvml_guarded(__func__, [&] {
        size_t &result = capi::out(count, "count");
        capi::require_array(values, capacity, "values", "capacity");
        core::SystemDevice &object = capi::get(device, "device");
        const cucore_system_query_t which =
            capi::check_enum_range(query, CUCORE_SYSTEM_QUERY_ARCHITECTURE, CUCORE_SYSTEM_QUERY_MEMORY_AFFINITY,
                                   "query", "is not a cucore_system_query_t");
        const std::vector<int64_t> found =
            object.query(which, check_query_argument(arg0, "arg0"), check_query_argument(arg1, "arg1"));
        for (size_t i = 0; i < found.size() && i < capacity; ++i) values[i] = found[i];
        result = found.size();
    });
}

cucore_status_t cucore_system_device_text(const cucore_system_device_t *device, cucore_system_text_t text,
                                          int64_t arg, char *buffer, size_t capacity, size_t *length) {
    return nvml_guarded(__func__, [&] {
        capi::check_text_out(buffer, capacity, length);
        core::SystemDevice &object = capi::get(device, "device");
        const cucore_system_text_t which = capi::check_enum_range(
            text, CUCORE_SYSTEM_TEXT_SERIAL, CUCORE_SYSTEM_TEXT_INFOROM_VERSION, "text", "is not a cucore_system_text_t");
        capi::text_out(object.text(which, check_query_argument(arg, "arg")), buffer, capacity, length);
    });
}

cucore_status_t cucore_system_device_control(cucore_system_device_t *device, cucore_system_control_t control,
                                             int64_t arg0, int64_t arg1) {
    return nvml_guarded(__func__, [&] {
        core::SystemDevice &object = capi::get(device, "device");
        const cucore_system_control_t which =
            capi::check_enum_range(control, CUCORE_SYSTEM_CONTROL_PERSISTENCE_MODE,
                                   CUCORE_SYSTEM_CONTROL_VALIDATE_INFOROM, "control", "is not a cucore_system_control_t");
        object.control(which, check_query_argument(arg0, "arg0"), check_query_argument(arg1, "arg1"));
    });
}

cucore_status_t cucore_system_device_related(const cucore_system_device_t *device, cucore_system_relation_t relation,
                                             int64_t arg, cucore_system_device_t **devices, size_t capacity,
                                             size_t *count) {
    return nvml_guarded(__func__, [&] {
        size_t &result = capi::out(count, "count");
        capi::require_array(devices, capacity, "devices", "capacity");
        for (size_t i = 0; i < capacity; ++i) devices[i] = nullptr;  // cleared before the handle is checked
        core::SystemDevice &object = capi::get(device, "device");
        const cucore_system_relation_t which =
            capi::check_enum_range(relation, CUCORE_SYSTEM_RELATION_NEAREST_GPUS, CUCORE_SYSTEM_RELATION_MIG_PARENT,
                                   "relation", "is not a cucore_system_relation_t");
        capi::give_list(object.related(which, check_query_argument(arg, "arg")), devices, capacity, result, "devices");
    });
}

cucore_status_t cucore_system_device_field_values(const cucore_system_device_t *device,
                                                  cucore_system_field_value_t *values, size_t count) {
    return nvml_guarded(__func__, [&] {
        check_fields(values, count);
        core::SystemDevice &object = capi::get(device, "device");
        if (count) object.field_values(values, count);
    });
}

cucore_status_t cucore_system_device_clear_field_values(cucore_system_device_t *device,
                                                        const cucore_system_field_value_t *values, size_t count) {
    return nvml_guarded(__func__, [&] {
        check_fields(values, count);
        core::SystemDevice &object = capi::get(device, "device");
        if (count) object.clear_field_values(values, count);
    });
}

cucore_status_t cucore_system_device_p2p_status(const cucore_system_device_t *device,
                                                const cucore_system_device_t *peer, int caps_index, int *status) {
    return nvml_guarded(__func__, [&] {
        int &result = capi::out(status, "status");
        core::SystemDevice &a = capi::get(device, "device");
        core::SystemDevice &b = capi::get(peer, "peer");
        if (caps_index < 0) core::throw_invalid_argument("argument 'caps_index' is negative");
        result = a.p2p_status(b, caps_index);
    });
}

cucore_status_t cucore_system_device_common_ancestor(const cucore_system_device_t *device,
                                                     const cucore_system_device_t *peer, int *level) {
    return nvml_guarded(__func__, [&] {
        int &result = capi::out(level, "level");
        core::SystemDevice &a = capi::get(device, "device");
        core::SystemDevice &b = capi::get(peer, "peer");
        result = a.common_ancestor(b);
    });
}

cucore_status_t cucore_system_device_register_events(cucore_system_device_t *device, uint64_t event_types) {
    return nvml_guarded(__func__, [&] { capi::get(device, "device").register_events(event_types); });
}

cucore_status_t cucore_system_device_wait_event(cucore_system_device_t *device, unsigned timeout_ms,
                                                cucore_system_event_t *event, cucore_system_device_t **event_device) {
    return nvml_guarded(__func__, [&] {
        capi::require(event, "event");
        *event = cucore_system_event_t{};
        capi::optional_out(event_device);
        core::Ref<core::SystemDevice> found;
        const cucore_system_event_t got =
            capi::get(device, "device").wait_event(timeout_ms, event_device ? &found : nullptr);
        if (event_device && found) *event_device = capi::give<cucore_system_device_t>(found);
        *event = got;
    });
}

cucore_status_t cucore_system_register_events(uint64_t event_types, cucore_system_event_set_t **event_set) {
    return nvml_guarded(__func__, [&] {
        cucore_system_event_set_t *&result = capi::out(event_set, "event_set");
        result = capi::give<cucore_system_event_set_t>(core::SystemEventSet::register_events(event_types));
    });
}

cucore_status_t cucore_system_event_set_wait(cucore_system_event_set_t *event_set, unsigned timeout_ms,
                                             uint64_t *event_types, uint32_t *gpu_ids, size_t capacity,
                                             size_t *count) {
    return nvml_guarded(__func__, [&] {
        size_t &given = capi::out(count, "count");
        core::SystemEventSet &set = capi::get(event_set, "event_set");
        capi::require(event_types, "event_types");
        capi::require(gpu_ids, "gpu_ids");
        if (capacity == 0 || capacity > UINT32_MAX)
            core::throw_invalid_argument("argument 'capacity' (" + std::to_string(capacity) +
                                         ") is not in 1..UINT32_MAX");
        given = set.wait(timeout_ms, event_types, gpu_ids, capacity);
    });
}

}  // extern "C"
