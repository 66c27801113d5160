// System information through NVML (driver/nvml.hpp): the system-wide versions
// and counts, and SystemDevice, one GPU as NVML sees it. A SystemDevice holds
// the NVML handle (valid for the process: NVML stays initialised) and what does
// not change (index, name, UUID, PCI bus id), read when it is made; the other
// queries ask NVML at the time of the call.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "core/handle.hpp"
#include "core/thread_cache.hpp"
#include "cucore/system.h"
#include "driver/nvml.hpp"

namespace cucore::core {

class Device;

class SystemDevice final : public Object, public Pooled<SystemDevice> {
  public:
    static std::string driver_version();
    static std::string nvml_version();
    static int cuda_driver_version();
    static unsigned count();

    // New handle objects, by NVML index, UUID text or PCI bus id.
    static Ref<SystemDevice> get(unsigned index);
    static Ref<SystemDevice> by_uuid(const std::string &uuid);
    static Ref<SystemDevice> by_pci_bus_id(const std::string &pci_bus_id);
    // The NVML view of a CUDA device (matched by UUID).
    static Ref<SystemDevice> for_device(const Device &device);
    // The CUDA device of the same GPU (throws INVALID_ARGUMENT when CUDA does not see it).
    Ref<Device> to_device() const;

    SystemDevice(driver::nvml::Device handle, unsigned index, std::string name, std::string uuid,
                 std::string pci_bus_id) noexcept;
    ~SystemDevice() override;

    void *handle() const noexcept { return handle_; }
    unsigned index() const noexcept { return index_; }
    const std::string &name() const noexcept { return name_; }
    const std::string &uuid() const noexcept { return uuid_; }
    const std::string &pci_bus_id() const noexcept { return pci_bus_id_; }

    cucore_system_pci_info_t pci_info() const;
    cucore_system_memory_info_t memory_info() const;
    void utilization(unsigned &gpu_percent, unsigned &memory_percent) const;
    unsigned temperature() const;
    unsigned power_usage() const;
    unsigned power_limit() const;
    unsigned clock(cucore_system_clock_t clock) const;
    unsigned max_clock(cucore_system_clock_t clock) const;
    cucore_compute_mode_t compute_mode() const;
    struct Process {
        uint32_t pid;
        uint64_t used_memory;  // CUCORE_SYSTEM_MEMORY_NOT_AVAILABLE where NVML cannot see it
        uint32_t gpu_instance_id;      // MIG only (0xFFFFFFFF otherwise)
        uint32_t compute_instance_id;  // MIG only
    };
    std::vector<Process> processes() const;

    // The generic readers of system.h (system_query.cpp): each query's values
    // in order, a text, a change, related devices, field values, pairs.
    std::vector<int64_t> query(cucore_system_query_t query, int64_t arg0, int64_t arg1) const;
    std::string text(cucore_system_text_t text, int64_t arg) const;
    void control(cucore_system_control_t control, int64_t arg0, int64_t arg1);
    std::vector<Ref<SystemDevice>> related(cucore_system_relation_t relation, int64_t arg) const;
    void field_values(cucore_system_field_value_t *values, size_t count) const;
    void clear_field_values(const cucore_system_field_value_t *values, size_t count);
    int p2p_status(const SystemDevice &peer, int caps_index) const;
    int common_ancestor(const SystemDevice &peer) const;
    static std::vector<Ref<SystemDevice>> with_cpu_affinity(unsigned cpu);
    static std::string driver_branch();
    static std::string process_name(unsigned pid);

    // This handle object's event set (system_events.cpp): made on first registration, freed with it.
    void register_events(uint64_t event_types);
    // The next event and its GPU (a new object).
    cucore_system_event_t wait_event(unsigned timeout_ms, Ref<SystemDevice> *event_device);

    // A handle object for an NVML device handle NVML gave out.
    static Ref<SystemDevice> from_handle(driver::nvml::Device handle);

  private:

    driver::nvml::Device handle_;
    std::mutex events_mutex_;
    driver::nvml::EventSet events_ = nullptr;  // guarded by events_mutex_
    unsigned index_;
    std::string name_;
    std::string uuid_;
    std::string pci_bus_id_;
};

// A system event set (nvmlSystemEventSet_t, system_events.cpp): made by
// register_events with the types it records, freed with the object.
class SystemEventSet final : public Object, public Pooled<SystemEventSet> {
  public:
    // A new set recording the event types of the mask (nvmlSystemEventSetCreate, nvmlSystemRegisterEvents).
    static Ref<SystemEventSet> register_events(uint64_t event_types);

    explicit SystemEventSet(driver::nvml::SystemEventSet set) noexcept
        : Object(CUCORE_OBJECT_SYSTEM_EVENT_SET), set_(set) {}
    ~SystemEventSet() override;

    // Up to `capacity` events (at least one) into the arrays; how many (nvmlSystemEventSetWait).
    size_t wait(unsigned timeout_ms, uint64_t *event_types, uint32_t *gpu_ids, size_t capacity);

  private:
    driver::nvml::SystemEventSet set_;
};

// A CUDA UUID as NVML writes it: "GPU-" and the 16 bytes in hex, grouped 4-2-2-2-6.
std::string nvml_uuid_text(const unsigned char (&bytes)[16]);

}  // namespace cucore::core
