// Page-locked host memory from cuMemAllocHost (synchronous).
#pragma once

#include "core/memory.hpp"

namespace cucore::core {

class LegacyPinnedResource final : public MemoryResource, public Pooled<LegacyPinnedResource> {
  public:
    static Ref<LegacyPinnedResource> create(Device &device);
    explicit LegacyPinnedResource(Ref<Context> context) noexcept;

    void deallocate(CUdeviceptr address, uint64_t size, Stream *stream) override;

  protected:
    CUdeviceptr allocate_raw(uint64_t size, Stream *stream) override;
};

}  // namespace cucore::core
