// Stream-ordered memory pools: a device's pools, pinned host pools, managed
// pools and pools imported from another process (ipc.cpp).
#pragma once

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "core/memory_resource.hpp"
#include "cucore/memory_pool.h"
#include "cucore/ipc.h"

namespace cucore::core {

using PoolId = std::array<uint8_t, CUCORE_IPC_POOL_ID_SIZE>;

class PoolResource final : public MemoryResource, public Pooled<PoolResource> {
  public:
    struct Options {
        uint64_t max_size = 0;
        uint64_t release_threshold = 0;
        bool ipc_enabled = false;
    };

    // The device's current pool (not owned).
    static Ref<PoolResource> device_current(Device &device);
    // The driver's current pool of pinned host memory, and of managed memory without a preferred location
    // (cuMemGetMemPool; CUDA 13; not owned), allocating on `device`'s streams (granted access to the host one).
    static Ref<PoolResource> host_current(Device &device);
    static Ref<PoolResource> managed_current(Device &device);
    // New pools (owned: destroyed with the last reference).
    static Ref<PoolResource> device_pool(Device &device, const Options &options);
    // numa_id: the host NUMA node (>= 0); none: any host memory (an IPC-enabled pool then takes node 0).
    static Ref<PoolResource> pinned_pool(Device &device, const Options &options, std::optional<int> numa_id);
    static Ref<PoolResource> managed_pool(Device &device, const Options &options, cucore_location_t preferred);

    PoolResource(cucore_memory_resource_kind_t kind, Ref<Context> context, MemoryTraits traits, CUmemoryPool pool,
                 bool owns_pool, bool ipc_enabled) noexcept;
    ~PoolResource() override;

    void deallocate(CUdeviceptr address, uint64_t size, Stream *stream) override;
    CUmemoryPool pool() const noexcept override { return pool_; }
    bool owns_pool() const noexcept override { return owns_pool_; }
    uint64_t pool_attribute(cucore_pool_attribute_t attribute) const override;
    void set_pool_attribute(cucore_pool_attribute_t attribute, uint64_t value) override;
    void trim(uint64_t min_bytes_to_keep) override;
    void set_peer_access(Device &peer, cucore_access_t access) override;
    cucore_access_t peer_access(Device &peer) const override;

    bool ipc_enabled() const noexcept { return ipc_enabled_; }

    // The identifier other processes know the pool by (made at creation for
    // IPC-enabled pools, set by ipc.cpp for imported ones); NOT_SUPPORTED unless
    // IPC-enabled or imported. Import and export themselves live in ipc.cpp.
    PoolId pool_id() const;
    void set_pool_id(const PoolId &id) noexcept;

  protected:
    CUdeviceptr allocate_raw(uint64_t size, Stream *stream) override;

  private:
    CUmemoryPool pool_;
    bool owns_pool_;
    bool ipc_enabled_;
    mutable std::mutex id_mutex_;
    bool has_id_ = false;
    PoolId id_{};
};

// Frees pool memory (or unmaps an imported pointer) in stream order: cuMemFreeAsync on `stream` in its
// context, or on the legacy default stream in `context` when there is no stream.
void free_async(CUdeviceptr address, Stream *stream, CUcontext context);

// Whether a pool attribute is one of the reuse flags (0/1; the others are byte counts).
bool is_pool_flag(cucore_pool_attribute_t attribute) noexcept;

// Destroys a driver pool (cuMemPoolDestroy), reporting a failure as a release error.
void destroy_pool(CUmemoryPool pool, const char *what) noexcept;

}  // namespace cucore::core
