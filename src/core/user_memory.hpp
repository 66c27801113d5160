// A memory resource whose allocate/deallocate are the user's C callbacks.
#pragma once

#include "core/memory_resource.hpp"
#include "cucore/user_memory.h"

namespace cucore::core {

class UserResource final : public MemoryResource, public Pooled<UserResource> {
  public:
    // Validates the callbacks (INVALID_ARGUMENT); `destroy` runs with the last reference only.
    static Ref<UserResource> create(const cucore_memory_resource_callbacks_t &callbacks);
    UserResource(const cucore_memory_resource_callbacks_t &callbacks, MemoryTraits traits) noexcept;
    ~UserResource() override;

    // A status other than CUCORE_SUCCESS from the callback throws Error with that status.
    void deallocate(CUdeviceptr address, uint64_t size, Stream *stream) override;

  protected:
    CUdeviceptr allocate_raw(uint64_t size, Stream *stream) override;

  private:
    cucore_memory_resource_callbacks_t callbacks_;
};

}  // namespace cucore::core
