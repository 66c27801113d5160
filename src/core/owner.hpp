// The owner of a wrapped foreign object (context, stream, event), told once.
#pragma once

#include "cucore/common.h"

namespace cucore::core {

// The owner of a wrapped foreign object, told once when the wrapper goes.
class ForeignOwner {
  public:
    // Attached only once the wrapper is registered, so a failed wrap never calls it.
    void set(cucore_release_fn on_release, void *user_data) noexcept {
        on_release_ = on_release;
        user_data_ = user_data;
    }
    void notify() noexcept {
        if (on_release_) on_release_(user_data_);
    }

  private:
    cucore_release_fn on_release_ = nullptr;
    void *user_data_ = nullptr;
};

}  // namespace cucore::core
