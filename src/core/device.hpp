// Devices. What the driver says about a device, and its primary context, live
// in one immortal record per ordinal; each cucore_device_get() returns a new
// small handle object onto it, so releasing a device handle is checked like any
// other handle (a released one is rejected).
#pragma once

#include <cuda.h>

#include <atomic>
#include <mutex>
#include <string>

#include "core/handle.hpp"
#include "core/thread_cache.hpp"
#include "cucore/device.h"

namespace cucore::core {

class Context;
class MemoryResource;
class Buffer;
class Stream;

class Device final : public Object, public Pooled<Device> {
  public:
    static int count();                 // 0 when the driver sees no device
    // A new handle object for `ordinal` (throws NO_DEVICE for a bad one). A
    // handle that `caches_primary` keeps the primary context it first needs
    // until the handle goes, so create/destroy cycles do not retain and release
    // the driver's primary context each time; handles held by contexts don't
    // (that would be a reference cycle).
    static Ref<Device> get(int ordinal, bool caches_primary = true);
    static Ref<Device> current();         // device of the current context, else 0
    static int ordinal_of(CUdevice device);
    static int driver_version();

    struct Shared;  // the per-ordinal record
    Device(Shared &shared, bool caches_primary) noexcept;
    ~Device() override;

    int ordinal() const noexcept;
    CUdevice cu() const noexcept;
    const std::string &name() const noexcept;
    const std::string &pci_bus_id() const noexcept;
    const CUuuid &uuid() const noexcept;
    uint64_t total_memory() const;
    int attribute(CUdevice_attribute attribute) const;
    void compute_capability(int &major, int &minor) const;
    void properties(cucore_device_properties_t &out) const;
    bool can_access_peer(const Device &peer) const;
    // cuCtxEnablePeerAccess / cuCtxDisablePeerAccess between the primary contexts (enabling pins both for
    // the process; enabling twice is no error, disabling what is not enabled is INVALID_STATE).
    void enable_peer_access(Device &peer);
    void disable_peer_access(Device &peer);

    // The primary context, retained while any returned reference lives.
    Ref<Context> primary_context();
    // The primary context if some object holds it now, else empty.
    Ref<Context> primary_if_alive();
    void set_current();
    void synchronize();

    // The default memory resource: the one set, else one on the current pool.
    Ref<MemoryResource> memory_resource();
    // Sets it (null: back to the current pool); process-wide, per ordinal.
    void set_memory_resource(Ref<MemoryResource> resource);
    // Allocates from the default memory resource, ordered on `stream`.
    Ref<Buffer> allocate(uint64_t size, Stream *stream);

  private:
    friend class Context;
    void forget_primary(const Context *context) noexcept;
    // The primary context, kept for the life of the process from the first call (set_current, peer access).
    Ref<Context> pin_primary();

    Shared &shared_;
    const bool caches_primary_;
    std::atomic<Context *> cached_primary_{nullptr};  // holds one reference when set
};

struct Device::Shared {
    int ordinal = 0;
    CUdevice device = 0;
    std::string name;
    std::string pci_bus_id;
    CUuuid uuid{};
    std::mutex primary_mutex;
    WeakRef<Context> primary;
    // Set by set_current(): keeps the primary context for the process's life,
    // and is the lock-free fast path of primary_context().
    std::atomic<Context *> pinned_primary{nullptr};
    std::mutex memory_resource_mutex;
    Ref<MemoryResource> memory_resource;  // set by the user; never released (immortal record)
};

}  // namespace cucore::core
