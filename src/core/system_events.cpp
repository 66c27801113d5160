// A SystemDevice's event set (include/cucore/system.h: register_events,
// wait_event): made by the first registration, freed with the object, so each
// handle object records only what was registered through it. And the system
// event sets (cucore_system_register_events, cucore_system_event_set_wait):
// one NVML set per object, over NVML's versioned request structs.
#include <vector>

#include "core/error.hpp"
#include "core/owned.hpp"
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

namespace {

namespace nv = driver::nvml;

// Frees a system event set; reports a failure (never throws: it runs in destructors and deleters).
struct FreeSystemEventSet {
    void operator()(nv::SystemEventSet set) const noexcept {
        try {
            nv::SystemEventSetFreeRequest request{};
            request.version = nv::struct_version<nv::SystemEventSetFreeRequest>(1);
            request.set = set;
            const auto free_set = driver::nvml_api().nvmlSystemEventSetFree;
            const nv::Return result = free_set ? free_set(&request) : nv::kErrorFunctionNotFound;
            if (result != nv::kSuccess)
                report_release_error(CUCORE_ERROR_CUDA, 0,
                                     "nvmlSystemEventSetFree (freeing a system event set) failed: " +
                                         driver::nvml_error_name(result));
        } catch (const Error &error) {
            report_release_error(error.status(), 0, error.what());
        }
    }
};

}  // namespace

Ref<SystemEventSet> SystemEventSet::register_events(uint64_t event_types) {
    if (!event_types) throw_invalid_argument("argument 'event_types' names no event type");
    nv::SystemEventSetCreateRequest create{};
    create.version = nv::struct_version<nv::SystemEventSetCreateRequest>(1);
    CUCORE_NVML(nvmlSystemEventSetCreate, &create);
    // Owned from here: a failed registration (or allocation) frees the set.
    Owned<nv::SystemEventSet, FreeSystemEventSet> box(create.set, FreeSystemEventSet{});
    nv::SystemRegisterEventRequest request{};
    request.version = nv::struct_version<nv::SystemRegisterEventRequest>(1);
    request.eventTypes = static_cast<unsigned long long>(event_types);
    request.set = box.get();
    CUCORE_NVML(nvmlSystemRegisterEvents, &request);
    Ref<SystemEventSet> made = make<SystemEventSet>(box.get());
    box.release();
    return made;
}

SystemEventSet::~SystemEventSet() { FreeSystemEventSet{}(set_); }

size_t SystemEventSet::wait(unsigned timeout_ms, uint64_t *event_types, uint32_t *gpu_ids, size_t capacity) {
    std::vector<nv::SystemEventData> data(capacity);
    nv::SystemEventSetWaitRequest request{};
    request.version = nv::struct_version<nv::SystemEventSetWaitRequest>(1);
    request.timeoutms = timeout_ms;
    request.set = set_;
    request.data = data.data();
    request.dataSize = static_cast<unsigned>(capacity);
    CUCORE_NVML(nvmlSystemEventSetWait, &request);
    // NVML counts what it recorded; never more than the buffer holds is given.
    const size_t count = request.numEvent < capacity ? request.numEvent : capacity;
    for (size_t i = 0; i < count; ++i) {
        event_types[i] = data[i].eventType;
        gpu_ids[i] = data[i].gpuId;
    }
    return count;
}

}  // namespace cucore::core
