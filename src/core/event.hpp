// Events.
#pragma once

#include <cuda.h>

#include <atomic>

#include "core/context.hpp"
#include "core/handle.hpp"
#include "core/thread_cache.hpp"
#include "core/owner.hpp"
#include "cucore/event.h"

namespace cucore::core {

class Stream;

class Event final : public Object, public Pooled<Event> {
  public:
    // Creates an event with cucore_event_flag_t `flags` (checked by the C ABI) in `context`.
    static Ref<Event> create(Ref<Context> context, uint32_t flags);
    // Wraps a foreign event in the current context, not owned.
    static Ref<Event> wrap(CUevent event, cucore_release_fn on_release, void *user_data);
    // Milliseconds between two events, with specific errors (see event.h).
    static float elapsed_ms(Event &start, Event &end);

    Event(Ref<Context> context, CUevent event, uint32_t flags, bool owned) noexcept;
    ~Event() override;

    void record(Stream &stream);
    // The event entered a graph (a record node when `records`, else a wait node) or a capture. A graph's
    // record is not seen by record(), so from here the driver, which sees the graph's launches, says
    // whether it was recorded; and its driver event is never reused, since a graph launched before this
    // event goes may still use it after.
    void note_graph_use(bool records) noexcept {
        if (records) recorded_.store(true, std::memory_order_relaxed);
        reusable_.store(false, std::memory_order_relaxed);
    }
    void synchronize();
    bool query();
    // Makes this event answer as a new one (cucore_event_reset): never recorded, with a driver event no one
    // else uses. Only for a caller holding it alone (one user reference, besides the running call's holds,
    // and nothing else holding it): INVALID_STATE otherwise, and for a foreign event; or the driver's error
    // making a new driver event. The event is unchanged when it throws.
    void reset();

    CUevent cu() const noexcept { return event_; }
    // The driver handle for a caller outside the library (cucore_event_handle, IPC): the driver event is
    // then never reused (core/event_cache.hpp).
    CUevent escape() noexcept {
        reusable_.store(false, std::memory_order_relaxed);
        return event_;
    }
    uint32_t flags() const noexcept { return flags_; }
    bool owned() const noexcept { return owned_; }
    Context &context() const noexcept { return *context_; }
    const Ref<Context> &context_ref() const noexcept { return context_; }

  private:
    Ref<Context> context_;
    CUcontext cu_context_;  // cached: no pointer chase on hot paths
    CUevent event_;
    uint32_t flags_;
    bool owned_;
    std::atomic<bool> recorded_{false};
    // Whether the context may keep the driver event for a new Event when this one goes: owned, not
    // interprocess, its handle never given out, never in a graph or capture (then also only once its last
    // record has completed: see ~Event).
    std::atomic<bool> reusable_;
    ForeignOwner owner_;  // wrapped events only

    // Whether its driver event may serve a new event now: reusable_, and never recorded or untimed with its
    // last record done (then it answers as a new one would).
    bool reusable_now() const noexcept;
};

// The driver's CU_EVENT_* flags for cucore_event_flag_t bits.
unsigned driver_event_flags(uint32_t flags) noexcept;

// Destroys a driver event, reporting a failure as a release error.
void destroy_event(CUevent event, const char *what) noexcept;

}  // namespace cucore::core
