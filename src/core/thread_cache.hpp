// A small per-thread cache of free items (slot indices, object blocks) in front
// of a shared pool, so steady create/destroy cycles touch no shared cache line
// and no allocator. The cache is plain data (no guard on the hot path); what it
// still holds when its thread exits is handed back to the shared pool.
//
// It stays in the default (global-dynamic) TLS model: initial-exec would save
// the __tls_get_addr call, but a library loaded with dlopen (Python's ctypes)
// then fails to load in processes whose static TLS block is already full
// ("cannot allocate memory in static TLS block", seen with torch loaded).
#pragma once

#include <cstddef>

namespace cucore::core {

// `Item` is trivially copyable; `Spill(item)` returns one item to the shared pool.
template <class Item, int Capacity, void (*Spill)(Item)>
class ThreadCache {
  public:
    bool pop(Item &item) noexcept {
        Cache &cache = cache_;
        if (cache.size == 0) return false;
        item = cache.items[--cache.size];
        return true;
    }
    void push(Item item) noexcept {
        Cache &cache = cache_;
        if (cache.size == Capacity) {
            Spill(item);
            return;
        }
        if (!cache.flush_registered) register_flush();
        cache.items[cache.size++] = item;
    }

  private:
    struct Cache {  // trivially destructible: zero-initialised TLS, no guard
        Item items[Capacity];
        int size;
        bool flush_registered;
    };
    struct Flush {
        ~Flush() {
            Cache &cache = cache_;
            while (cache.size > 0) Spill(cache.items[--cache.size]);
        }
    };
    __attribute__((noinline)) static void register_flush() noexcept {
        static thread_local Flush flush;  // constructed once per thread; runs at thread exit
        (void)flush;
        cache_.flush_registered = true;
    }
    static thread_local Cache cache_;
};

template <class Item, int Capacity, void (*Spill)(Item)>
thread_local typename ThreadCache<Item, Capacity, Spill>::Cache ThreadCache<Item, Capacity, Spill>::cache_;

// Per-thread recycling of the memory of one object type (class-specific
// operator new/delete): `class Event : public Object, public Pooled<Event>`.
template <class T>
class Pooled {
  public:
    static void *operator new(size_t size) {
        void *block;
        if (size == sizeof(T) && cache_.pop(block)) return block;
        return ::operator new(size);
    }
    static void operator delete(void *block, size_t size) noexcept {
        if (size == sizeof(T))
            cache_.push(block);
        else
            ::operator delete(block);
    }

  private:
    static void spill(void *block) { ::operator delete(block); }
    static ThreadCache<void *, 64, &Pooled::spill> cache_;
};

template <class T>
ThreadCache<void *, 64, &Pooled<T>::spill> Pooled<T>::cache_;

// The same per-thread recycling as a standard allocator, for the control block
// and object of std::allocate_shared (shared internal objects such as a
// buffer's Allocation).
template <class T>
class PooledAllocator {
  public:
    using value_type = T;
    PooledAllocator() noexcept = default;
    template <class U>
    PooledAllocator(const PooledAllocator<U> &) noexcept {}

    T *allocate(size_t count) {
        void *block;
        if (count == 1 && cache_.pop(block)) return static_cast<T *>(block);
        return static_cast<T *>(::operator new(count * sizeof(T)));
    }
    void deallocate(T *block, size_t count) noexcept {
        if (count == 1)
            cache_.push(block);
        else
            ::operator delete(block);
    }
    template <class U>
    bool operator==(const PooledAllocator<U> &) const noexcept { return true; }
    template <class U>
    bool operator!=(const PooledAllocator<U> &) const noexcept { return false; }

  private:
    static void spill(void *block) { ::operator delete(block); }
    static ThreadCache<void *, 64, &PooledAllocator::spill> cache_;
};

template <class T>
ThreadCache<void *, 64, &PooledAllocator<T>::spill> PooledAllocator<T>::cache_;

}  // namespace cucore::core
