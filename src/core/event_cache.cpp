#include "core/event_cache.hpp"

#include <algorithm>
#include <mutex>
#include <thread>
#include <vector>

#include "core/event.hpp"
#include "cucore/event.h"
#include "driver/driver.hpp"

namespace cucore::core {

namespace {

// Every cache, for total(): contexts come and go rarely, so a locked list costs the hot paths nothing.
std::mutex &registry_mutex() {
    static std::mutex mutex;
    return mutex;
}
std::vector<const EventCache *> &registry() {
    static std::vector<const EventCache *> caches;
    return caches;
}

const void *current_installation() noexcept { return driver::detail::active.load(std::memory_order_acquire); }

}  // namespace

EventCache::EventCache() noexcept {
    try {
        std::lock_guard<std::mutex> lock(registry_mutex());
        registry().push_back(this);
    } catch (...) {  // out of memory: total() misses this cache, which tests alone read
    }
}

EventCache::~EventCache() {
    drain();
    std::lock_guard<std::mutex> lock(registry_mutex());
    auto &caches = registry();
    if (auto it = std::find(caches.begin(), caches.end(), this); it != caches.end()) caches.erase(it);
}

int EventCache::total() noexcept {
    std::lock_guard<std::mutex> lock(registry_mutex());
    int sum = 0;
    for (const EventCache *cache : registry()) sum += cache->size();
    return sum;
}

void EventCache::forget_if_reinstalled() noexcept {
    const void *now = current_installation();
    if (installation_ == now) return;
    for (int &count : counts_) count = 0;
    installation_ = now;
}

int EventCache::kind_of(uint32_t flags) noexcept {
    if (flags & CUCORE_EVENT_INTERPROCESS) return -1;  // shared with other processes: never reused
    return ((flags & CUCORE_EVENT_TIMING) ? 1 : 0) | ((flags & CUCORE_EVENT_BLOCKING_SYNC) ? 2 : 0);
}

void EventCache::lock() const noexcept {
    while (locked_.exchange(true, std::memory_order_acquire))
        while (locked_.load(std::memory_order_relaxed)) std::this_thread::yield();
}

CUevent EventCache::take(uint32_t flags) noexcept {
    const int kind = kind_of(flags);
    if (kind < 0) return nullptr;
    lock();
    forget_if_reinstalled();
    CUevent event = counts_[kind] > 0 ? events_[kind][--counts_[kind]] : nullptr;
    unlock();
    return event;
}

bool EventCache::give(uint32_t flags, CUevent event) noexcept {
    const int kind = kind_of(flags);
    if (kind < 0) return false;
    lock();
    forget_if_reinstalled();
    const bool kept = counts_[kind] < kCapacity;
    if (kept) events_[kind][counts_[kind]++] = event;
    unlock();
    return kept;
}

void EventCache::drain() noexcept {
    for (;;) {
        CUevent event = nullptr;
        lock();
        forget_if_reinstalled();
        for (int kind = 0; kind < kKinds && !event; ++kind)
            if (counts_[kind] > 0) event = events_[kind][--counts_[kind]];
        unlock();
        if (!event) return;
        destroy_event(event, "destroying a spare event of a context that is going");
    }
}

int EventCache::size() const noexcept {
    lock();
    int total = 0;
    if (installation_ == current_installation())
        for (int count : counts_) total += count;
    unlock();
    return total;
}

}  // namespace cucore::core
