// The one handle mechanism of libcucore.
//
// Every object the C ABI hands out derives from core::Object and lives in a
// slot of a process-wide table. The C handle is not a pointer to the object but
// an encoded (magic, generation, slot index) value, so a released, garbage or
// wrong-type handle is recognised without dereferencing anything:
//   bits 63..56: 0xCC   bits 55..24: slot generation   bits 23..0: slot index
//
// A slot keeps two counts, each in a 64-bit word changed only atomically:
// - the handle word: generation (high half) and the user's references (low
//   half): C create/retain/release, and the reference a running call holds.
//   A handle is valid exactly while its generation matches and this count is
//   above zero. The user's last release bumps the generation, so every copy of
//   the handle is stale at once, even while children keep the object alive.
// - the life word: incarnation (high half) and the library's references (low
//   half): core::Ref<T>, which children hold on their parents, plus one for all
//   user references together while there are any. The last one destroys the
//   object. WeakRef<T> names an object by (slot, incarnation).
// A slot whose generation or incarnation would wrap is retired, never reused,
// so no stale handle or weak reference ever validates again.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

#include "cucore/common.h"

namespace cucore::core {

class Object;

namespace handles {

// Registers a new object with one library reference (the Ref that make<>
// returns) and no user reference. Throws OUT_OF_MEMORY when the table is full.
void register_object(Object *object);

// Turns one library reference the caller owns into a user reference and
// returns the C handle for it (the caller's reference is consumed either way).
// Throws INVALID_STATE if the object's slot has spent its 2^32 generations.
void *hand_out(Object *object);
// hand_out for an object make<> has just made, which no other thread can reach yet: its first user reference
// is a plain store instead of a compare-and-swap (no handle names it: stale handles of the slot's earlier
// objects carry another generation and never write to it). Hot create paths (events, buffers, streams).
void *hand_out_new(Object *object);

// acquire(handle, type, argument): validates a handle and takes a user
// reference for the duration of a call. In handle_table.hpp (inline, hot path).

// Gives back one user reference; the last one makes every copy of the handle
// stale and gives up the users' library reference.
void drop_user(Object *object) noexcept;

// C ABI retain/release: validate, then adjust the user count atomically. Throw
// INVALID_HANDLE (naming `argument`) for a bad handle.
void retain(const void *handle, cucore_object_type_t type, const char *argument);
void release(const void *handle, cucore_object_type_t type, const char *argument);

// Whether a caller holding `user_references` user references (a handle's owner: 1; inside a call that holds
// the handle: 2) holds `object` alone: no other user reference and no library reference but the users' one.
bool held_only_by(const Object *object, uint32_t user_references) noexcept;

// Library references. The caller of retain_held already holds one.
void retain_held(const Object *object) noexcept;
void release_held(const Object *object) noexcept;

// Takes a library reference only if the object identified by (slot,
// incarnation) is still alive; returns it, or nullptr.
Object *try_retain(uint32_t slot, uint32_t incarnation) noexcept;

}  // namespace handles

class Object {
  public:
    explicit Object(cucore_object_type_t type) noexcept : type_(type) {}
    virtual ~Object();
    Object(const Object &) = delete;
    Object &operator=(const Object &) = delete;

    cucore_object_type_t type() const noexcept { return type_; }
    uint32_t slot() const noexcept { return slot_; }
    uint32_t incarnation() const noexcept { return incarnation_; }

    // An object the library keeps for the life of the process (a pinned primary
    // context) no longer counts library references: Ref<> copies of it cost no
    // atomic operation. Call only while holding a reference that is never
    // dropped. User references are counted as for any other object.
    void make_immortal() noexcept { immortal_.store(true, std::memory_order_release); }
    bool immortal() const noexcept { return immortal_.load(std::memory_order_relaxed); }

  private:
    friend void handles::register_object(Object *);
    std::atomic<bool> immortal_{false};
    cucore_object_type_t type_;
    uint32_t slot_ = UINT32_MAX;
    uint32_t incarnation_ = 0;
};

// A strong (library) reference to a registered object.
template <class T>
class Ref {
  public:
    Ref() noexcept = default;
    Ref(std::nullptr_t) noexcept {}
    // Takes a new reference to `object` (which the caller keeps alive).
    explicit Ref(T *object) noexcept : object_(object) {
        if (object_) handles::retain_held(object_);
    }
    // Adopts a reference the caller already owns.
    static Ref adopt(T *object) noexcept {
        Ref ref;
        ref.object_ = object;
        return ref;
    }
    Ref(const Ref &other) noexcept : Ref(other.object_) {}
    template <class U>
    Ref(const Ref<U> &other) noexcept : Ref(static_cast<T *>(other.get())) {}
    Ref(Ref &&other) noexcept : object_(std::exchange(other.object_, nullptr)) {}
    Ref &operator=(Ref other) noexcept {
        std::swap(object_, other.object_);
        return *this;
    }
    ~Ref() {
        if (object_) handles::release_held(object_);
    }

    T *get() const noexcept { return object_; }
    T *operator->() const noexcept { return object_; }
    T &operator*() const noexcept { return *object_; }
    explicit operator bool() const noexcept { return object_ != nullptr; }
    // Gives up ownership of the reference (e.g. to hand it to a C caller).
    T *detach() noexcept { return std::exchange(object_, nullptr); }

  private:
    T *object_ = nullptr;
};

// A non-owning reference that can be upgraded while the object lives.
template <class T>
class WeakRef {
  public:
    WeakRef() noexcept = default;
    explicit WeakRef(const T *object) noexcept
        : slot_(object ? object->slot() : UINT32_MAX), incarnation_(object ? object->incarnation() : 0) {}
    Ref<T> lock() const noexcept {
        if (slot_ == UINT32_MAX) return {};
        return Ref<T>::adopt(static_cast<T *>(handles::try_retain(slot_, incarnation_)));
    }

    bool refers_to(const T *object) const noexcept {
        return object && object->slot() == slot_ && object->incarnation() == incarnation_;
    }

  private:
    uint32_t slot_ = UINT32_MAX;
    uint32_t incarnation_ = 0;
};

// A user reference lent to a callback for its duration: the C handle of an
// object the library holds, valid while the Lent lives even if the user has
// released all of theirs.
class Lent {
  public:
    explicit Lent(Object *object) : object_(object) {
        if (!object_) return;
        handles::retain_held(object_);
        handle_ = handles::hand_out(object_);  // consumes the reference just taken
    }
    ~Lent() {
        if (handle_) handles::drop_user(object_);
    }
    Lent(const Lent &) = delete;
    Lent &operator=(const Lent &) = delete;
    void *handle() const noexcept { return handle_; }

  private:
    Object *object_;
    void *handle_ = nullptr;
};

// Creates and registers a T. If registration fails, the object is destroyed.
template <class T, class... Args>
Ref<T> make(Args &&...args) {
    T *object = new T(std::forward<Args>(args)...);
    try {
        handles::register_object(object);
    } catch (...) {
        delete object;
        throw;
    }
    return Ref<T>::adopt(object);
}

}  // namespace cucore::core
