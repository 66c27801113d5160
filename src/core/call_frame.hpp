// What a C ABI call holds: every handle argument a call resolves gets a user
// reference for the call's duration, given back when the call returns, so a
// release on another thread cannot free an object under a running call.
// src/capi's guarded() opens one frame per call; its get() resolves through it.
// Frames nest (a user callback that calls libcucore opens its own).
#pragma once

#include <cstdint>
#include <vector>

#include "core/handle_table.hpp"

namespace cucore::core {

class CallFrame {
  public:
    CallFrame() noexcept : outer_(current_) { current_ = this; }
    ~CallFrame() {
        for (auto it = overflow_.rbegin(); it != overflow_.rend(); ++it) handles::drop_user(*it);
        for (uint32_t i = count_; i-- > 0;) handles::drop_user(held_[i]);
        current_ = outer_;
    }
    CallFrame(const CallFrame &) = delete;
    CallFrame &operator=(const CallFrame &) = delete;

    // Validates `handle` (INVALID_HANDLE naming `argument` otherwise) and holds
    // its object in the current call's frame; returns the object.
    static Object *hold(const void *handle, cucore_object_type_t type, const char *argument) {
        CallFrame *frame = current_;
        if (__builtin_expect(frame->count_ == kInline, 0)) frame->overflow_.reserve(frame->overflow_.size() + 1);
        Object *object = handles::acquire(handle, type, argument);
        if (frame->count_ < kInline)
            frame->held_[frame->count_++] = object;
        else
            frame->overflow_.push_back(object);  // reserved above: cannot throw
        return object;
    }

    // How many holds the running call has on `object` (0 outside a call).
    static uint32_t holds(const Object *object) noexcept {
        const CallFrame *frame = current_;
        if (!frame) return 0;
        uint32_t n = 0;
        for (uint32_t i = 0; i < frame->count_ && i < kInline; ++i) n += frame->held_[i] == object;
        for (const Object *held : frame->overflow_) n += held == object;
        return n;
    }

  private:
    static constexpr uint32_t kInline = 6;
    static thread_local CallFrame *current_;
    CallFrame *outer_;
    uint32_t count_ = 0;
    Object *held_[kInline];
    std::vector<Object *> overflow_;
};

}  // namespace cucore::core
