// Managed memory: the resource of cuMemAllocManaged (synchronous) and the
// public options' choice between it and a managed pool. Managed pools are
// PoolResources (memory_pool.cpp); this kind exists because drivers refuse
// advice on pool memory but not on cuMemAllocManaged's. A managed Buffer's
// advice, prefetch and discard (declared in buffer.hpp) are defined in
// managed_memory.cpp.
#pragma once

#include "core/memory_resource.hpp"
#include "cucore/managed_memory.h"

namespace cucore::core {

// Whether cuMemAdvise reads the location for `advice` (the others ignore it).
bool advice_takes_location(cucore_memory_advice_t advice) noexcept;

// A managed memory resource from its public options: cuMemAllocManaged, or a
// managed pool with `use_pool` (max size and release threshold apply to pools only).
Ref<MemoryResource> make_managed_resource(Device &device, const cucore_managed_memory_resource_options_t &options);

class ManagedResource final : public MemoryResource, public Pooled<ManagedResource> {
  public:
    // `preferred` (NONE: none) is advised for every allocation.
    static Ref<ManagedResource> create(Device &device, cucore_location_t preferred);
    ManagedResource(Ref<Context> context, MemoryTraits traits, cucore_location_t preferred) noexcept;

    void deallocate(CUdeviceptr address, uint64_t size, Stream *stream) override;

  protected:
    CUdeviceptr allocate_raw(uint64_t size, Stream *stream) override;

  private:
    cucore_location_t preferred_;
};

}  // namespace cucore::core
