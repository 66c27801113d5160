// A SystemDevice's event set (include/cucore/system.h: register_events,
// wait_event): made by the first registration, freed with the object, so each
// handle object records only what was registered through it.
#include "core/error.hpp"
#include "core/system.hpp"

namespace cucore::core {

SystemDevice::~SystemDevice() {
    if (!events_) return;
    // The set exists only where NVML loaded; a failure to free it is reported, never thrown.
    try {
        const driver::nvml::Return result = driver::nvml_api().nvmlEventSetFree
                                                ? driver::nvml_api().nvmlEventSetFree(events_)
                                                : driver::nvml::kErrorFunctionNotFound;
        if (result != driver::nvml::kSuccess)
            report_release_error(CUCORE_ERROR_CUDA, 0,
                                 "nvmlEventSetFree (freeing a system device's event set) failed: " +
                                     driver::nvml_error_name(result));
    } catch (const Error &error) {
        report_release_error(error.status(), 0, error.what());
    }
}

void SystemDevice::register_events(uint64_t event_types) {
    if (!event_types) throw_invalid_argument("argument 'event_types' names no event type");
    std::lock_guard<std::mutex> lock(events_mutex_);
    if (!events_) {
        driver::nvml::EventSet set = nullptr;
        CUCORE_NVML(nvmlEventSetCreate, &set);
        events_ = set;
    }
    CUCORE_NVML(nvmlDeviceRegisterEvents, handle_, static_cast<unsigned long long>(event_types), events_);
}

cucore_system_event_t SystemDevice::wait_event(unsigned timeout_ms, Ref<SystemDevice> *event_device) {
    driver::nvml::EventSet set = nullptr;
    {
        std::lock_guard<std::mutex> lock(events_mutex_);
        set = events_;
    }
    if (!set) throw_invalid_argument("no events are registered on this system device (register_events first)");
    // The call holds this object, so the set outlives the wait; it is not held under the mutex, so a
    // registration may add types meanwhile.
    driver::nvml::EventData data{};
    CUCORE_NVML(nvmlEventSetWait_v2, set, &data, timeout_ms);
    if (event_device) *event_device = data.device ? from_handle(data.device) : Ref<SystemDevice>();
    return cucore_system_event_t{data.eventType, data.eventData, data.gpuInstanceId, data.computeInstanceId};
}

}  // namespace cucore::core
