// The one way a create path owns what the driver made before the object that
// will own it exists ("no half-made object").
#pragma once

#include <type_traits>
#include <utility>

namespace cucore::core {

// A driver object (or mapping, or range of memory) owned from the moment the
// driver made it. The box is made right after the driver call, with a deleter
// that captures what destroying the object needs (the context to bind, the
// stream to free or unmap on, the device whose primary context was retained).
// If anything later in the create path fails, the box destroys the object when
// it goes, exactly once; on success, release() hands the object to its owner,
// called once that owner exists so that nothing can fail after it. Deleters
// never throw: they report their failures as release errors.
//
// Modelled on cuda.core's handle boxes and on unique_resource; made on the
// stack without allocating, so making the box itself cannot fail.
template <class Handle, class Deleter>
class Owned {
    static_assert(std::is_nothrow_move_constructible_v<Deleter>, "moving a box cannot fail");
    static_assert(std::is_nothrow_invocable_v<Deleter &, Handle>, "a deleter reports its failures, never throws");

  public:
    Owned(Handle handle, Deleter deleter) noexcept : handle_(handle), deleter_(std::move(deleter)) {}
    Owned(Owned &&other) noexcept
        : handle_(other.handle_), deleter_(std::move(other.deleter_)), owns_(std::exchange(other.owns_, false)) {}
    Owned(const Owned &) = delete;
    Owned &operator=(const Owned &) = delete;
    Owned &operator=(Owned &&) = delete;
    ~Owned() {
        if (owns_) deleter_(handle_);
    }

    Handle get() const noexcept { return handle_; }
    // Hands the object to its owner: the box no longer destroys it.
    Handle release() noexcept {
        owns_ = false;
        return handle_;
    }

  private:
    Handle handle_;
    Deleter deleter_;
    bool owns_ = true;
};

// own(handle, [captures](Handle h) noexcept { ...destroy h... }) right after the driver call.
template <class Handle, class Deleter>
Owned<Handle, Deleter> own(Handle handle, Deleter deleter) noexcept {
    return Owned<Handle, Deleter>(handle, std::move(deleter));
}

}  // namespace cucore::core
