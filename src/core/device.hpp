// Devices: one object per ordinal for the life of the process.
#pragma once

#include <cuda.h>

#include <atomic>
#include <mutex>
#include <string>

#include "core/handle.hpp"
#include "cucore/device.h"

namespace cucore::core {

class Context;

class Device final : public Object {
  public:
    static int count();                 // 0 when the driver sees no device
    static Ref<Device> get(int ordinal);  // throws NO_DEVICE for a bad ordinal
    static Ref<Device> current();         // device of the current context, else 0
    static int ordinal_of(CUdevice device);
    static int driver_version();

    Device(int ordinal, CUdevice device, std::string name, std::string pci_bus_id, CUuuid uuid) noexcept;
    ~Device() override;

    int ordinal() const noexcept { return ordinal_; }
    CUdevice cu() const noexcept { return device_; }
    const std::string &name() const noexcept { return name_; }
    const std::string &pci_bus_id() const noexcept { return pci_bus_id_; }
    const CUuuid &uuid() const noexcept { return uuid_; }
    uint64_t total_memory() const;
    int attribute(CUdevice_attribute attribute) const;
    void properties(cucore_device_properties_t &out) const;
    bool can_access_peer(const Device &peer) const;

    // The primary context, retained while any returned reference lives.
    Ref<Context> primary_context();
    // The primary context if some object holds it now, else empty.
    Ref<Context> primary_if_alive();
    void set_current();
    void synchronize();

  private:
    friend class Context;
    void forget_primary(const Context *context) noexcept;

    int ordinal_;
    CUdevice device_;
    std::string name_;
    std::string pci_bus_id_;
    CUuuid uuid_;
    std::mutex primary_mutex_;
    WeakRef<Context> primary_;
    // Set by set_current(): keeps the primary context for the process's life,
    // and is the lock-free fast path of primary_context().
    std::atomic<Context *> pinned_primary_{nullptr};
};

}  // namespace cucore::core
