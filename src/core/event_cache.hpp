// Driver events kept for reuse by one context (DESIGN.md, "Caches inside the library").
//
// Creating and destroying a CUevent costs the driver ~160 ns; handing a spare one over costs a few. A context
// keeps, for each kind of event (timing or not, blocking sync or not), up to kCapacity driver events that a
// released Event gave back in the state of a new one, and destroys them when the context goes. Which events
// may come back is decided by Event (core/event.cpp): never one whose driver handle escaped or that entered
// a graph or a capture, and only never recorded or (untimed) once its last record has completed.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>

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
    CUevent take(uint32_t flags) noexcept;
    // Keeps `event` (made with `flags`, in the state of a new event) for a later take(); false when this
    // kind is full or not kept: the caller destroys it.
    bool give(uint32_t flags, CUevent event) noexcept;
    // Destroys every kept event (the context is going).
    void drain() noexcept;
    // How many events are kept now, over all kinds (tests).
    int size() const noexcept;
    // How many events every context keeps now: the driver events that live without an Event (tests, which
    // count the driver's events, subtract these).
    static int total() noexcept;

  private:
    static constexpr int kKinds = 4;  // CUCORE_EVENT_TIMING x CUCORE_EVENT_BLOCKING_SYNC
    static int kind_of(uint32_t flags) noexcept;  // -1: not kept

    // A tiny spinlock: each hold is a few loads and stores, never a driver call.
    void lock() const noexcept;
    void unlock() const noexcept { locked_.store(false, std::memory_order_release); }

    // Drops (without destroying) events kept under another driver installation: tests install a new
    // substitute driver while a pinned primary context lives on. Called with the lock held.
    void forget_if_reinstalled() noexcept;

    mutable std::atomic<bool> locked_{false};
    const void *installation_ = nullptr;  // the driver installation the kept events belong to
    int counts_[kKinds] = {};
    CUevent events_[kKinds][kCapacity] = {};
};

}  // namespace cucore::core
