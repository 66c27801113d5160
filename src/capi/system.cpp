// C ABI: system information through NVML.
#include "capi/capi.hpp"
#include "capi/text_out.hpp"
#include "core/system.hpp"

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

}  // namespace

extern "C" {

cucore_status_t cucore_system_driver_version(char *buffer, size_t capacity, size_t *length) {
    return capi::guarded(__func__, [&] {
        capi::check_text_out(buffer, capacity, length);
        capi::text_out(core::SystemDevice::driver_version(), buffer, capacity, length);
    });
}

cucore_status_t cucore_system_nvml_version(char *buffer, size_t capacity, size_t *length) {
    return capi::guarded(__func__, [&] {
        capi::check_text_out(buffer, capacity, length);
        capi::text_out(core::SystemDevice::nvml_version(), buffer, capacity, length);
    });
}

cucore_status_t cucore_system_cuda_driver_version(int *version) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(version, "version");
        result = core::SystemDevice::cuda_driver_version();
    });
}

cucore_status_t cucore_system_device_count(unsigned *count) {
    return capi::guarded(__func__, [&] {
        unsigned &result = capi::out(count, "count");
        result = core::SystemDevice::count();
    });
}

cucore_status_t cucore_system_device_get(unsigned index, cucore_system_device_t **device) {
    return capi::guarded(__func__, [&] {
        cucore_system_device_t *&result = capi::out(device, "device");
        result = capi::give<cucore_system_device_t>(core::SystemDevice::get(index));
    });
}

cucore_status_t cucore_system_device_get_by_uuid(const char *uuid, cucore_system_device_t **device) {
    return capi::guarded(__func__, [&] {
        cucore_system_device_t *&result = capi::out(device, "device");
        result = capi::give<cucore_system_device_t>(core::SystemDevice::by_uuid(check_text(uuid, "uuid")));
    });
}

cucore_status_t cucore_system_device_get_by_pci_bus_id(const char *pci_bus_id, cucore_system_device_t **device) {
    return capi::guarded(__func__, [&] {
        cucore_system_device_t *&result = capi::out(device, "device");
        result = capi::give<cucore_system_device_t>(
            core::SystemDevice::by_pci_bus_id(check_text(pci_bus_id, "pci_bus_id")));
    });
}

cucore_status_t cucore_system_device_get_for_device(const cucore_device_t *device,
                                                    cucore_system_device_t **system_device) {
    return capi::guarded(__func__, [&] {
        cucore_system_device_t *&result = capi::out(system_device, "system_device");
        result = capi::give<cucore_system_device_t>(core::SystemDevice::for_device(capi::get(device, "device")));
    });
}

cucore_status_t cucore_system_device_to_device(const cucore_system_device_t *device, cucore_device_t **cuda_device) {
    return capi::guarded(__func__, [&] {
        cucore_device_t *&result = capi::out(cuda_device, "cuda_device");
        result = capi::give<cucore_device_t>(capi::get(device, "device").to_device());
    });
}

cucore_status_t cucore_system_device_handle(const cucore_system_device_t *device, void **nvml_device) {
    return capi::guarded(__func__, [&] {
        void *&result = capi::out(nvml_device, "nvml_device");
        result = capi::get(device, "device").handle();
    });
}

cucore_status_t cucore_system_device_index(const cucore_system_device_t *device, unsigned *index) {
    return capi::guarded(__func__, [&] {
        unsigned &result = capi::out(index, "index");
        result = capi::get(device, "device").index();
    });
}

cucore_status_t cucore_system_device_name(const cucore_system_device_t *device, const char **name) {
    return capi::guarded(__func__, [&] {
        const char *&result = capi::out(name, "name");
        result = capi::get(device, "device").name().c_str();
    });
}

cucore_status_t cucore_system_device_uuid(const cucore_system_device_t *device, const char **uuid) {
    return capi::guarded(__func__, [&] {
        const char *&result = capi::out(uuid, "uuid");
        result = capi::get(device, "device").uuid().c_str();
    });
}

cucore_status_t cucore_system_device_pci_bus_id(const cucore_system_device_t *device, const char **pci_bus_id) {
    return capi::guarded(__func__, [&] {
        const char *&result = capi::out(pci_bus_id, "pci_bus_id");
        result = capi::get(device, "device").pci_bus_id().c_str();
    });
}

cucore_status_t cucore_system_device_pci_info(const cucore_system_device_t *device, cucore_system_pci_info_t *info) {
    return capi::guarded(__func__, [&] {
        clear_versioned(info, cucore_system_pci_info_t(CUCORE_SYSTEM_PCI_INFO_INIT));
        core::SystemDevice &object = capi::get(device, "device");
        capi::write_versioned(info, cucore_system_pci_info_t(CUCORE_SYSTEM_PCI_INFO_INIT), "info", "CUCORE_SYSTEM_PCI_INFO_INIT");  // checked before NVML is asked
        capi::write_versioned(info, object.pci_info(), "info", "CUCORE_SYSTEM_PCI_INFO_INIT");
    });
}

cucore_status_t cucore_system_device_memory_info(const cucore_system_device_t *device,
                                                 cucore_system_memory_info_t *info) {
    return capi::guarded(__func__, [&] {
        clear_versioned(info, cucore_system_memory_info_t(CUCORE_SYSTEM_MEMORY_INFO_INIT));
        core::SystemDevice &object = capi::get(device, "device");
        capi::write_versioned(info, cucore_system_memory_info_t(CUCORE_SYSTEM_MEMORY_INFO_INIT), "info", "CUCORE_SYSTEM_MEMORY_INFO_INIT");  // checked before NVML is asked
        capi::write_versioned(info, object.memory_info(), "info", "CUCORE_SYSTEM_MEMORY_INFO_INIT");
    });
}

cucore_status_t cucore_system_device_utilization(const cucore_system_device_t *device, unsigned *gpu_percent,
                                                 unsigned *memory_percent) {
    return capi::guarded(__func__, [&] {
        unsigned &gpu = capi::out(gpu_percent, "gpu_percent");
        unsigned &memory = capi::out(memory_percent, "memory_percent");
        capi::get(device, "device").utilization(gpu, memory);
    });
}

cucore_status_t cucore_system_device_temperature(const cucore_system_device_t *device, unsigned *celsius) {
    return capi::guarded(__func__, [&] {
        unsigned &result = capi::out(celsius, "celsius");
        result = capi::get(device, "device").temperature();
    });
}

cucore_status_t cucore_system_device_power_usage(const cucore_system_device_t *device, unsigned *milliwatts) {
    return capi::guarded(__func__, [&] {
        unsigned &result = capi::out(milliwatts, "milliwatts");
        result = capi::get(device, "device").power_usage();
    });
}

cucore_status_t cucore_system_device_power_limit(const cucore_system_device_t *device, unsigned *milliwatts) {
    return capi::guarded(__func__, [&] {
        unsigned &result = capi::out(milliwatts, "milliwatts");
        result = capi::get(device, "device").power_limit();
    });
}

cucore_status_t cucore_system_device_clock(const cucore_system_device_t *device, cucore_system_clock_t clock,
                                           unsigned *mhz) {
    return capi::guarded(__func__, [&] {
        unsigned &result = capi::out(mhz, "mhz");
        const cucore_system_clock_t which = check_clock(clock);
        result = capi::get(device, "device").clock(which);
    });
}

cucore_status_t cucore_system_device_max_clock(const cucore_system_device_t *device, cucore_system_clock_t clock,
                                               unsigned *mhz) {
    return capi::guarded(__func__, [&] {
        unsigned &result = capi::out(mhz, "mhz");
        const cucore_system_clock_t which = check_clock(clock);
        result = capi::get(device, "device").max_clock(which);
    });
}

cucore_status_t cucore_system_device_compute_mode(const cucore_system_device_t *device, cucore_compute_mode_t *mode) {
    return capi::guarded(__func__, [&] {
        cucore_compute_mode_t &result = capi::out(mode, "mode");
        result = capi::get(device, "device").compute_mode();
    });
}

cucore_status_t cucore_system_device_processes(const cucore_system_device_t *device, uint32_t *pids,
                                               uint64_t *used_memory, size_t capacity, size_t *count) {
    return capi::guarded(__func__, [&] {
        size_t &result = capi::out(count, "count");
        if (capacity && !pids)
            core::throw_invalid_argument("argument 'pids' is NULL with a capacity of " + std::to_string(capacity));
        if (capacity && !used_memory)
            core::throw_invalid_argument("argument 'used_memory' is NULL with a capacity of " +
                                         std::to_string(capacity));
        const std::vector<core::SystemDevice::Process> processes = capi::get(device, "device").processes();
        for (size_t i = 0; i < processes.size() && i < capacity; ++i) {
            pids[i] = processes[i].pid;
            used_memory[i] = processes[i].used_memory;
        }
        result = processes.size();
    });
}

}  // extern "C"
