// The one handle mechanism of libcucore.
//
// Every object the C ABI hands out derives from core::Object and lives in a
// slot of a process-wide table. The C handle is not a pointer to the object but
// an encoded (magic, generation, slot index) value, so a released, garbage or
// wrong-type handle is recognised without dereferencing anything:
//   bits 63..56: 0xCC   bits 55..32: slot generation   bits 31..0: slot index
// A slot's 64-bit state word holds its generation (high half) and reference
// count (low half); retain/release are compare-and-swap on that word, and the
// last release bumps the generation before the object is destroyed, which makes
// every outstanding copy of the handle stale at once.
//
// Inside the library, objects refer to each other through Ref<T> (a strong
// reference that counts in the same slot), so the C user's references and the
// library's own dependencies are one count.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

#include "cucore/common.h"

namespace cucore::core {

class Object;

namespace handles {

// Registers a new object (reference count 1). Throws OUT_OF_MEMORY when the
// table is full. The object must not be registered yet.
void register_object(Object *object);

// The encoded C handle of a registered object.
void *encode(const Object *object) noexcept;

// resolve(handle, type, argument): in handle_table.hpp (inline, hot path).

// C ABI retain/release: validate, then adjust the count atomically. Throw
// INVALID_HANDLE (naming `argument`) for a bad handle.
void retain(const void *handle, cucore_object_type_t type, const char *argument);
void release(const void *handle, cucore_object_type_t type, const char *argument);

// Internal: the caller already holds a reference.
void retain_held(const Object *object) noexcept;
// A counted reference even for an immortal object (C handles are always counted).
void retain_counted(const Object *object) noexcept;
void release_held(const Object *object) noexcept;

// Takes a reference only if the object identified by (slot, generation) is
// still alive; returns it, or nullptr.
Object *try_retain(uint32_t slot, uint32_t generation) noexcept;

}  // namespace handles

class Object {
  public:
    explicit Object(cucore_object_type_t type) noexcept : type_(type) {}
    virtual ~Object();
    Object(const Object &) = delete;
    Object &operator=(const Object &) = delete;

    cucore_object_type_t type() const noexcept { return type_; }
    uint32_t slot() const noexcept { return slot_; }
    uint32_t generation() const noexcept { return generation_; }

    // An object the library keeps for the life of the process (a pinned primary
    // context) no longer counts internal references: Ref<> copies of it cost no
    // atomic operation. Call only while holding a reference that is never dropped.
    void make_immortal() noexcept { immortal_.store(true, std::memory_order_release); }
    bool immortal() const noexcept { return immortal_.load(std::memory_order_relaxed); }

  private:
    friend void handles::register_object(Object *);
    std::atomic<bool> immortal_{false};
    cucore_object_type_t type_;
    uint32_t slot_ = UINT32_MAX;
    uint32_t generation_ = 0;
};

// A strong reference to a registered object.
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
        : slot_(object ? object->slot() : UINT32_MAX), generation_(object ? object->generation() : 0) {}
    Ref<T> lock() const noexcept {
        if (slot_ == UINT32_MAX) return {};
        return Ref<T>::adopt(static_cast<T *>(handles::try_retain(slot_, generation_)));
    }

    bool refers_to(const T *object) const noexcept {
        return object && object->slot() == slot_ && object->generation() == generation_;
    }

  private:
    uint32_t slot_ = UINT32_MAX;
    uint32_t generation_ = 0;
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
