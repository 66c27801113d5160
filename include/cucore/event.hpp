// libcucore C++ façade: CUDA events (over cucore/event.h).
//
// Event::record(stream) is defined in stream.hpp (the headers include each
// other in one direction only; see device.hpp).
#ifndef CUCORE_EVENT_HPP
#define CUCORE_EVENT_HPP

#include "common.hpp"
#include "context.hpp"
#include "device.hpp"
#include "event.h"

namespace cucore {

class Stream;

// How to create an event (cuda.core: EventOptions). The defaults match
// cuda.core: no timing, and synchronize() spins rather than blocks.
struct EventOptions {
    bool timing_enabled = false; // record timestamps, so elapsed times work
    bool blocking_sync = false;  // synchronize() blocks the thread instead of spinning
    bool ipc_enabled = false;    // shareable with other processes (cucore/ipc.hpp); not with timing

    // The C options these stand for.
    cucore_event_options_t to_c() const noexcept {
        cucore_event_options_t o{};
        o.struct_size = static_cast<std::uint32_t>(sizeof o);
        o.flags = (timing_enabled ? static_cast<std::uint32_t>(CUCORE_EVENT_TIMING) : 0u) |
                  (blocking_sync ? static_cast<std::uint32_t>(CUCORE_EVENT_BLOCKING_SYNC) : 0u) |
                  (ipc_enabled ? static_cast<std::uint32_t>(CUCORE_EVENT_INTERPROCESS) : 0u);
        return o;
    }
};

// A CUDA event (cuda.core: Event). A default-constructed Event is empty.
class Event : public Handle<Event, cucore_event_t> {
public:
    Event() noexcept = default;

    // A new event in `device`'s primary context, or in `context`. Throws Error:
    // INVALID_HANDLE, INVALID_ARGUMENT, CUDA, OUT_OF_MEMORY.
    static Event create(const Device &device);
    static Event create(const Device &device, const EventOptions &options);
    static Event create(const Context &context);
    static Event create(const Context &context, const EventOptions &options);

    // Wraps a foreign CUevent (of the calling thread's current context) without
    // owning it; its flags read as 0. When the last reference goes,
    // `on_release(user_data)` runs if given. Throws Error: INVALID_ARGUMENT,
    // NO_DRIVER, INVALID_STATE (no current context), CUDA.
    static Event from_handle(void *cu_event, cucore_release_fn on_release = nullptr,
                             void *user_data = nullptr) {
        cucore_event_t *raw = nullptr;
        detail::check(cucore_event_from_handle(cu_event, on_release, user_data, &raw));
        return adopt(raw);
    }

    // Records the event on `stream` (captures the work queued so far). Throws
    // Error: INVALID_HANDLE, CUDA (e.g. stream and event in different contexts).
    void record(const Stream &stream) const;

    // Waits until the recorded work has completed (an event never recorded is
    // complete). Throws Error: INVALID_HANDLE, CUDA.
    void synchronize() const { detail::check(cucore_event_synchronize(handle_)); }

    // Whether the recorded work has completed. Throws Error: INVALID_HANDLE, CUDA.
    bool is_done() const {
        int done = 0;
        detail::check(cucore_event_query(handle_, &done));
        return done != 0;
    }

    // Milliseconds from `start` to `end`. Throws Error: INVALID_HANDLE,
    // INVALID_STATE (an event without timing, or never recorded), NOT_READY
    // (either has not completed yet), CUDA.
    static float elapsed_time(const Event &start, const Event &end) {
        float ms = 0.0f;
        detail::check(cucore_event_elapsed_time(start.handle_, end.handle_, &ms));
        return ms;
    }

    // `end - start`: milliseconds from `start` to `end` (as cuda.core's ev2 - ev1).
    // Throws as elapsed_time().
    friend float operator-(const Event &end, const Event &start) { return elapsed_time(start, end); }

    // The event's cucore_event_flag_t bits (0 for wrapped events). Throws Error:
    // INVALID_HANDLE.
    std::uint32_t flags() const {
        std::uint32_t f = 0;
        detail::check(cucore_event_flags(handle_, &f));
        return f;
    }
    bool is_timing_enabled() const { return (flags() & CUCORE_EVENT_TIMING) != 0; }
    bool is_blocking_sync() const { return (flags() & CUCORE_EVENT_BLOCKING_SYNC) != 0; }

    // The raw CUevent. Throws Error: INVALID_HANDLE.
    void *handle() const {
        void *h = nullptr;
        detail::check(cucore_event_handle(handle_, &h));
        return h;
    }

    // The event's device and context. Throw Error: INVALID_HANDLE.
    Device device() const;
    Context context() const;
};

static_assert(sizeof(Event) == sizeof(void *), "an Event is exactly one C handle");

inline Event Event::create(const Device &device) {
    cucore_event_t *raw = nullptr;
    detail::check(cucore_event_create(device.get(), nullptr, &raw));
    return adopt(raw);
}

inline Event Event::create(const Device &device, const EventOptions &options) {
    const cucore_event_options_t o = options.to_c();
    cucore_event_t *raw = nullptr;
    detail::check(cucore_event_create(device.get(), &o, &raw));
    return adopt(raw);
}

inline Event Event::create(const Context &context) {
    cucore_event_t *raw = nullptr;
    detail::check(cucore_event_create_in_context(context.get(), nullptr, &raw));
    return adopt(raw);
}

inline Event Event::create(const Context &context, const EventOptions &options) {
    const cucore_event_options_t o = options.to_c();
    cucore_event_t *raw = nullptr;
    detail::check(cucore_event_create_in_context(context.get(), &o, &raw));
    return adopt(raw);
}

inline Device Event::device() const {
    cucore_device_t *raw = nullptr;
    detail::check(cucore_event_device(handle_, &raw));
    return Device::adopt(raw);
}

inline Context Event::context() const {
    cucore_context_t *raw = nullptr;
    detail::check(cucore_event_context(handle_, &raw));
    return Context::adopt(raw);
}

// Device's and Context's members that make an Event (declared in device.hpp and context.hpp).
inline Event Device::create_event() const { return Event::create(*this); }
inline Event Device::create_event(const EventOptions &options) const { return Event::create(*this, options); }

inline Event Context::create_event() const { return Event::create(*this); }
inline Event Context::create_event(const EventOptions &options) const { return Event::create(*this, options); }

} // namespace cucore

#endif // CUCORE_EVENT_HPP
