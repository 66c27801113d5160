// Driver events kept for reuse by one context (DESIGN.md, "Caches inside the library").
//
// Creating and destroying a CUevent costs the driver ~150 ns; handing a spare one over costs a few. A context
// keeps, for each kind of event (timing or not, blocking sync or not), up to kCapacity driver events that a
// released Event gave back in the state of a new one, and destroys them when the context goes. Which events
// may come back is decided by Event (core/event.cpp): never one whose driver handle escaped or that entered
// a graph or a capture, and only never recorded or (untimed) once its last record has completed.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>

#include "cucore/event.h"

namespace cucore::core {

class EventCache {
  public:
    static constexpr int kCapacity = 32;  // per kind: bounds what an idle context holds (4 x 32 events)

    EventCache() noexcept;
    ~EventCache();
    EventCache(const EventCache &) = delete;
    EventCache &operator=(const EventCache &) = delete;

    // A spare driver event made with cucore_event_flag_t `flags`, or nullptr when there is none (and for
    // interprocess events, which are never kept).
    CUevent take(uint32_t flags) noexcept {
        if (flags & CUCORE_EVENT_INTERPROCESS) return nullptr;
        Kind &kind = kinds_[flags & kKindBits];
        lock();
        CUevent event = kind.count > 0 ? kind.events[--kind.count] : nullptr;
        unlock();
        return event;
    }
    // Keeps `event` (made with `flags`, in the state of a new event) for a later take(); false when this
    // kind is full or not kept: the caller destroys it.
    bool give(uint32_t flags, CUevent event) noexcept {
        if (flags & CUCORE_EVENT_INTERPROCESS) return false;
        Kind &kind = kinds_[flags & kKindBits];
        lock();
        const bool kept = kind.count < kCapacity;
        if (kept) kind.events[kind.count++] = event;
        unlock();
        return kept;
    }
    // Destroys every kept event (the context is going).
    void drain() noexcept;
    // How many events are kept now, over all kinds (tests).
    int size() const noexcept;

    // How many events every context keeps now: the driver events that live without an Event (tests, which
    // count the driver's events, subtract these).
    static int total() noexcept;
    // Drops every kept event without destroying it: for tests that replace the driver (a new substitute)
    // while contexts live on (a pinned primary context), whose old events the new driver does not know.
    static void forget_all() noexcept;

  private:
    // A kind is the TIMING and BLOCKING_SYNC bits: the index into kinds_.
    static_assert(CUCORE_EVENT_TIMING == 1 && CUCORE_EVENT_BLOCKING_SYNC == 2, "kinds are indexed by these bits");
    static constexpr uint32_t kKindBits = CUCORE_EVENT_TIMING | CUCORE_EVENT_BLOCKING_SYNC;
    struct Kind {
        int count = 0;
        CUevent events[kCapacity] = {};
    };

    // A tiny spinlock: each hold is a few loads and stores, never a driver call.
    void lock() const noexcept {
        if (__builtin_expect(locked_.exchange(true, std::memory_order_acquire), 0)) wait_for_lock();
    }
    void unlock() const noexcept { locked_.store(false, std::memory_order_release); }
    void wait_for_lock() const noexcept;

    mutable std::atomic<bool> locked_{false};
    Kind kinds_[kKindBits + 1];
};

}  // namespace cucore::core
