#include "core/handle.hpp"
#include "core/handle_table.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <mutex>
#include <new>
#include <string>

#include "core/diagnostics.hpp"
#include "core/error.hpp"
#include "core/thread_cache.hpp"

namespace cucore::core {
namespace table {
std::atomic<Slot *> g_chunks[kMaxChunks];
std::atomic<uint32_t> g_slots_published{0};  // slots whose chunk exists
std::atomic<uint32_t> g_next_unused{0};
std::atomic<uint64_t> g_free_head{kNoSlot};  // (ABA tag << 32) | slot
}  // namespace table

using namespace table;

namespace {

std::mutex g_chunk_mutex;

Slot *ensure_chunk(uint32_t chunk) {
    Slot *slots = g_chunks[chunk].load(std::memory_order_acquire);
    if (slots) return slots;
    std::lock_guard<std::mutex> lock(g_chunk_mutex);
    slots = g_chunks[chunk].load(std::memory_order_relaxed);
    if (!slots) {
        slots = new Slot[kChunkSize];  // never freed: handles may be checked at any time
        g_chunks[chunk].store(slots, std::memory_order_release);
        uint32_t end = (chunk + 1) * kChunkSize;
        uint32_t published = g_slots_published.load(std::memory_order_relaxed);
        while (published < end && !g_slots_published.compare_exchange_weak(published, end)) {
        }
    }
    return slots;
}

uint32_t pop_free() {
    uint64_t head = g_free_head.load(std::memory_order_acquire);
    for (;;) {
        uint32_t index = static_cast<uint32_t>(head);
        if (index == kNoSlot) return kNoSlot;
        uint32_t next = slot_at(index).next_free.load(std::memory_order_relaxed);
        uint64_t tag = (head >> 32) + 1;
        if (g_free_head.compare_exchange_weak(head, (tag << 32) | next, std::memory_order_acq_rel))
            return index;
    }
}

void push_free(uint32_t index) {
    uint64_t head = g_free_head.load(std::memory_order_relaxed);
    for (;;) {
        slot_at(index).next_free.store(static_cast<uint32_t>(head), std::memory_order_relaxed);
        uint64_t tag = (head >> 32) + 1;
        if (g_free_head.compare_exchange_weak(head, (tag << 32) | index, std::memory_order_acq_rel)) return;
    }
}

// Each thread keeps a few free slots so that steady create/destroy cycles touch
// no shared cache line; the rest go back to the global list (also at thread exit).
ThreadCache<uint32_t, 32, &push_free> g_slot_cache;

void release_slot(uint32_t index) { g_slot_cache.push(index); }

uint32_t allocate_slot() {
    uint32_t index;
    if (g_slot_cache.pop(index)) return index;
    index = pop_free();
    if (index != kNoSlot) return index;
    index = g_next_unused.fetch_add(1, std::memory_order_relaxed);
    if (index >= kChunkSize * kMaxChunks) {
        g_next_unused.fetch_sub(1, std::memory_order_relaxed);
        throw Error(CUCORE_ERROR_OUT_OF_MEMORY, "the handle table is full (16777216 live objects)");
    }
    ensure_chunk(index >> kChunkBits);
    return index;
}

// Last reference gone: retire the generation, destroy, recycle the slot.
void destroy(Slot &slot, uint32_t index, uint64_t last_word) noexcept {
    uint32_t next_generation = (generation_of(last_word) + 1) & kGenerationMask;
    if (next_generation == 0) next_generation = 1;
    // Only the thread that dropped the count to zero gets here, so plain loads
    // and stores suffice; the generation bump makes every copy of the handle stale.
    Object *object = slot.object.load(std::memory_order_acquire);
    slot.word.store(uint64_t{next_generation} << 32, std::memory_order_release);
    delete object;  // destructors never throw; they report through report_release_error
    release_slot(index);
}

const char *type_name(uint32_t type) {
    return object_type_name(static_cast<cucore_object_type_t>(type));
}

}  // namespace

// Builds and throws the message for a handle that failed validation: NULL,
// not a handle at all, released, or of another type. Cold: never on success.
[[noreturn]] __attribute__((cold, noinline)) void table::throw_bad_handle(const void *handle,
                                                                          cucore_object_type_t type,
                                                                          const char *argument) {
    const uint64_t value = reinterpret_cast<uintptr_t>(handle);
    const char *expected = type_name(type);
    if (value == 0)
        throw Error(CUCORE_ERROR_INVALID_HANDLE,
                    std::string("argument '") + argument + "' is NULL, not a " + expected + " handle");
    const uint32_t index = static_cast<uint32_t>(value);
    const uint32_t generation = static_cast<uint32_t>(value >> 32) & kGenerationMask;
    if ((value & (0xFFull << 56)) != kMagic || generation == 0 ||
        index >= g_slots_published.load(std::memory_order_acquire) ||
        index >= g_next_unused.load(std::memory_order_acquire)) {
        char text[64];
        std::snprintf(text, sizeof text, "%p", handle);
        throw Error(CUCORE_ERROR_INVALID_HANDLE, std::string("argument '") + argument + "' (" + text +
                                                     ") is not a libcucore handle");
    }
    Slot &slot = slot_at(index);
    uint64_t word = slot.word.load(std::memory_order_acquire);
    if (generation_of(word) != generation || count_of(word) == 0)
        throw Error(CUCORE_ERROR_INVALID_HANDLE, std::string("argument '") + argument + "' is a released " +
                                                     "handle (its object no longer exists)");
    throw Error(CUCORE_ERROR_INVALID_HANDLE, std::string("argument '") + argument + "' is a " +
                                                 type_name(slot.type.load(std::memory_order_relaxed)) +
                                                 " handle, not a " + expected);
}

Object::~Object() = default;

namespace handles {

void register_object(Object *object) {
    uint32_t index = allocate_slot();
    Slot &slot = slot_at(index);
    uint64_t word = slot.word.load(std::memory_order_relaxed);
    object->slot_ = index;
    object->generation_ = generation_of(word);
    slot.type.store(static_cast<uint32_t>(object->type()), std::memory_order_relaxed);
    slot.object.store(object, std::memory_order_relaxed);
    slot.word.store(word | 1u, std::memory_order_release);  // count 1: published
}

void *encode(const Object *object) noexcept {
    uint64_t value = kMagic | (uint64_t{object->generation()} << 32) | object->slot();
    return reinterpret_cast<void *>(static_cast<uintptr_t>(value));
}

void retain(const void *handle, cucore_object_type_t type, const char *argument) {
    uint32_t index, generation;
    Slot &slot = checked_slot(handle, type, argument, index, generation);
    uint64_t word = slot.word.load(std::memory_order_acquire);
    for (;;) {
        if (generation_of(word) != generation || count_of(word) == 0)
            throw Error(CUCORE_ERROR_INVALID_HANDLE,
                        std::string("argument '") + argument + "' was released by another thread");
        if (count_of(word) == UINT32_MAX)
            throw Error(CUCORE_ERROR_INVALID_STATE,
                        std::string("argument '") + argument + "' has too many references");
        if (slot.word.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel)) return;
    }
}

void release(const void *handle, cucore_object_type_t type, const char *argument) {
    uint32_t index, generation;
    Slot &slot = checked_slot(handle, type, argument, index, generation);
    uint64_t word = slot.word.load(std::memory_order_acquire);
    for (;;) {
        if (generation_of(word) != generation || count_of(word) == 0)
            throw Error(CUCORE_ERROR_INVALID_HANDLE,
                        std::string("argument '") + argument + "' was released by another thread");
        if (slot.word.compare_exchange_weak(word, word - 1, std::memory_order_acq_rel)) break;
    }
    if (count_of(word) == 1) destroy(slot, index, word - 1);
}

void retain_held(const Object *object) noexcept {
    if (object->immortal()) return;
    slot_at(object->slot()).word.fetch_add(1, std::memory_order_relaxed);
}

void retain_counted(const Object *object) noexcept {
    slot_at(object->slot()).word.fetch_add(1, std::memory_order_relaxed);
}

void release_held(const Object *object) noexcept {
    if (object->immortal()) return;
    uint32_t index = object->slot();
    Slot &slot = slot_at(index);
    uint64_t previous = slot.word.fetch_sub(1, std::memory_order_acq_rel);
    if (count_of(previous) == 1) destroy(slot, index, previous - 1);
}

Object *try_retain(uint32_t index, uint32_t generation) noexcept {
    if (index >= g_slots_published.load(std::memory_order_acquire) ||
        index >= g_next_unused.load(std::memory_order_acquire))
        return nullptr;
    Slot &slot = slot_at(index);
    uint64_t word = slot.word.load(std::memory_order_acquire);
    for (;;) {
        if (generation_of(word) != generation || count_of(word) == 0) return nullptr;
        if (slot.word.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel))
            return slot.object.load(std::memory_order_acquire);
    }
}

}  // namespace handles

size_t live_object_count(cucore_object_type_t type) noexcept {
    // A scan rather than counters kept on every create and destroy: this is a
    // diagnostic, and the hot paths stay free of shared atomics.
    const uint32_t end = std::min(g_next_unused.load(std::memory_order_acquire),
                                  g_slots_published.load(std::memory_order_acquire));
    size_t total = 0;
    for (uint32_t index = 0; index < end; ++index) {
        Slot &slot = slot_at(index);
        if (count_of(slot.word.load(std::memory_order_acquire)) == 0) continue;
        if (type == CUCORE_OBJECT_ANY || slot.type.load(std::memory_order_relaxed) == static_cast<uint32_t>(type))
            ++total;
    }
    return total;
}

const char *object_type_name(cucore_object_type_t type) noexcept {
    switch (type) {
        case CUCORE_OBJECT_ANY: return "object";
#define CUCORE_OBJECT_TYPE(value, name) \
        case value: return name;
#include "core/object_types.inc"  // generated from the handle types of cucore/common.h
#undef CUCORE_OBJECT_TYPE
        default: return "unknown object type";
    }
}

}  // namespace cucore::core
