#include "core/event_cache.hpp"

#include <algorithm>
#include <mutex>
#include <thread>
#include <vector>

#include "core/event.hpp"

namespace cucore::core {

namespace {

// Every cache, for total() and forget_all(): contexts come and go rarely, so a locked list costs the hot
// paths nothing. Never destroyed, so a context that goes during the process's exit still finds it.
std::mutex &registry_mutex() {
    static std::mutex *mutex = new std::mutex;
    return *mutex;
}
std::vector<EventCache *> &registry() {
    static std::vector<EventCache *> *caches = new std::vector<EventCache *>;
    return *caches;
}

}  // namespace

EventCache::EventCache() noexcept {
    try {
        std::lock_guard<std::mutex> lock(registry_mutex());
        registry().push_back(this);
    } catch (...) {  // out of memory: total() and forget_all() miss this cache, which tests alone use
    }
}

EventCache::~EventCache() {
    drain();
    std::lock_guard<std::mutex> lock(registry_mutex());
    auto &caches = registry();
    if (auto it = std::find(caches.begin(), caches.end(), this); it != caches.end()) caches.erase(it);
}

void EventCache::wait_for_lock() const noexcept {
    do {
        while (locked_.load(std::memory_order_relaxed)) std::this_thread::yield();
    } while (locked_.exchange(true, std::memory_order_acquire));
}

void EventCache::drain() noexcept {
    for (;;) {
        CUevent event = nullptr;
        lock();
        for (Kind &kind : kinds_)
            if (!event && kind.count > 0) event = kind.events[--kind.count];
        unlock();
        if (!event) return;
        destroy_event(event, "destroying a spare event of a context that is going");
    }
}

int EventCache::size() const noexcept {
    lock();
    int total = 0;
    for (const Kind &kind : kinds_) total += kind.count;
    unlock();
    return total;
}

int EventCache::total() noexcept {
    std::lock_guard<std::mutex> lock(registry_mutex());
    int sum = 0;
    for (const EventCache *cache : registry()) sum += cache->size();
    return sum;
}

void EventCache::forget_all() noexcept {
    std::lock_guard<std::mutex> lock(registry_mutex());
    for (EventCache *cache : registry()) {
        cache->lock();
        for (Kind &kind : cache->kinds_) kind.count = 0;
        cache->unlock();
    }
}

}  // namespace cucore::core
