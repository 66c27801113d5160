#include "core/handle.hpp"
#include "core/handle_table.hpp"
#include "core/call_frame.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <mutex>
#include <new>
#include <string>

#include "core/diagnostics.hpp"
#include "core/enum_value.hpp"
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

// The next generation after a user's last release; kSpent once all 2^32 are used.
uint32_t next_generation(uint32_t generation) { return generation == UINT32_MAX ? kSpent : generation + 1; }

// Last library reference gone: retire the incarnation, destroy, recycle the slot
// unless its generations or incarnations are spent (then it is never reused).
void destroy(Slot &slot, uint32_t index, uint64_t last_life) noexcept {
    // Only the thread that dropped the count to zero gets here, and nothing can
    // take a library reference from zero, so plain loads and stores suffice.
    const uint32_t incarnation = high_of(last_life) + 1;
    Object *object = slot.object.load(std::memory_order_acquire);
    slot.life.store(uint64_t{incarnation} << 32, std::memory_order_release);
    const bool spent = incarnation == 0 || high_of(slot.handle.load(std::memory_order_acquire)) == kSpent;
    delete object;  // destructors never throw; they report through report_release_error
    if (!spent) release_slot(index);
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
    const uint32_t index = index_of(value);
    const uint32_t generation = generation_in(value);
    if ((value & kMagicMask) != kMagic || generation == kSpent ||
        index >= g_slots_published.load(std::memory_order_acquire) ||
        index >= g_next_unused.load(std::memory_order_acquire)) {
        char text[64];
        std::snprintf(text, sizeof text, "%p", handle);
        throw Error(CUCORE_ERROR_INVALID_HANDLE, std::string("argument '") + argument + "' (" + text +
                                                     ") is not a libcucore handle");
    }
    Slot &slot = slot_at(index);
    uint64_t word = slot.handle.load(std::memory_order_acquire);
    if (high_of(word) != generation || count_of(word) == 0)
        throw Error(CUCORE_ERROR_INVALID_HANDLE, std::string("argument '") + argument + "' is a released " +
                                                     "handle (its user references were all released)");
    throw Error(CUCORE_ERROR_INVALID_HANDLE, std::string("argument '") + argument + "' is a " +
                                                 type_name(slot.type.load(std::memory_order_relaxed)) +
                                                 " handle, not a " + expected);
}

Object::~Object() = default;

thread_local CallFrame *CallFrame::current_ = nullptr;

namespace handles {

void register_object(Object *object) {
    uint32_t index = allocate_slot();
    Slot &slot = slot_at(index);
    const uint64_t life = slot.life.load(std::memory_order_relaxed);
    object->slot_ = index;
    object->incarnation_ = high_of(life);
    slot.type.store(static_cast<uint32_t>(object->type()), std::memory_order_relaxed);
    slot.object.store(object, std::memory_order_relaxed);
    // The handle word keeps the slot's next unused generation and no user
    // reference: nothing validates until hand_out.
    slot.life.store(life | 1u, std::memory_order_release);
}

void *hand_out(Object *object) {
    const uint32_t index = object->slot();
    Slot &slot = slot_at(index);
    uint64_t word = slot.handle.load(std::memory_order_acquire);
    for (;;) {
        if (high_of(word) == kSpent) {
            release_held(object);
            throw Error(CUCORE_ERROR_INVALID_STATE,
                        std::string("this ") + type_name(static_cast<uint32_t>(object->type())) +
                            " has been handed out and released 2^32 times; no new handle to it can be made");
        }
        if (slot.handle.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel)) break;
    }
    // The first user reference keeps the caller's library reference for all
    // users together; further ones do not need it.
    if (count_of(word) != 0) release_held(object);
    return reinterpret_cast<void *>(static_cast<uintptr_t>(encode(index, high_of(word))));
}

void *hand_out_new(Object *object) {
    const uint32_t index = object->slot();
    Slot &slot = slot_at(index);
    const uint64_t word = slot.handle.load(std::memory_order_relaxed);
    if (__builtin_expect(high_of(word) == kSpent || count_of(word) != 0, 0)) return hand_out(object);
    slot.handle.store(word + 1, std::memory_order_release);  // consumes the caller's library reference
    return reinterpret_cast<void *>(static_cast<uintptr_t>(encode(index, high_of(word))));
}

namespace {
// The handle word with one user reference fewer: the last one bumps the generation.
uint64_t dropped(uint64_t word) {
    return count_of(word) == 1 ? uint64_t{next_generation(high_of(word))} << 32 : word - 1;
}
}  // namespace

void drop_user(Object *object) noexcept {
    // The caller holds a user reference, so the generation cannot change under it.
    Slot &slot = slot_at(object->slot());
    uint64_t word = slot.handle.load(std::memory_order_acquire);
    while (!slot.handle.compare_exchange_weak(word, dropped(word), std::memory_order_acq_rel)) {
    }
    if (count_of(word) == 1) release_held(object);  // the users' library reference
}

void retain(const void *handle, cucore_object_type_t type, const char *argument) {
    Object *object = acquire(handle, type, argument);
    // The reference acquire took becomes the caller's, unless the count is implausible.
    if (count_of(slot_at(object->slot()).handle.load(std::memory_order_relaxed)) > UINT32_MAX / 2) {
        drop_user(object);
        throw Error(CUCORE_ERROR_INVALID_STATE, std::string("argument '") + argument + "' has too many references");
    }
}

void release(const void *handle, cucore_object_type_t type, const char *argument) {
    // Validation and the decrement are one compare-and-swap: of two releases of
    // the last reference, exactly one succeeds.
    uint32_t generation;
    Slot &slot = checked_slot(handle, type, argument, generation);
    uint64_t word = slot.handle.load(std::memory_order_acquire);
    do {
        if (high_of(word) != generation || count_of(word) == 0) throw_bad_handle(handle, type, argument);
    } while (!slot.handle.compare_exchange_weak(word, dropped(word), std::memory_order_acq_rel));
    if (count_of(word) == 1) release_held(slot.object.load(std::memory_order_acquire));  // the users' reference
}

bool held_only_by(const Object *object, uint32_t user_references) noexcept {
    if (object->immortal()) return false;
    Slot &slot = slot_at(object->slot());
    return count_of(slot.handle.load(std::memory_order_acquire)) == user_references &&
           count_of(slot.life.load(std::memory_order_acquire)) == 1;
}

void retain_held(const Object *object) noexcept {
    if (object->immortal()) return;
    slot_at(object->slot()).life.fetch_add(1, std::memory_order_relaxed);
}

void release_held(const Object *object) noexcept {
    if (object->immortal()) return;
    const uint32_t index = object->slot();
    Slot &slot = slot_at(index);
    const uint64_t previous = slot.life.fetch_sub(1, std::memory_order_acq_rel);
    if (count_of(previous) == 1) destroy(slot, index, previous - 1);
}

Object *try_retain(uint32_t index, uint32_t incarnation) noexcept {
    if (index >= g_slots_published.load(std::memory_order_acquire) ||
        index >= g_next_unused.load(std::memory_order_acquire))
        return nullptr;
    Slot &slot = slot_at(index);
    uint64_t life = slot.life.load(std::memory_order_acquire);
    for (;;) {
        if (high_of(life) != incarnation || count_of(life) == 0) return nullptr;
        if (slot.life.compare_exchange_weak(life, life + 1, std::memory_order_acq_rel))
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
        if (count_of(slot.life.load(std::memory_order_acquire)) == 0) continue;
        if (type == CUCORE_OBJECT_ANY || slot.type.load(std::memory_order_relaxed) == static_cast<uint32_t>(type))
            ++total;
    }
    return total;
}

const char *object_type_name(cucore_object_type_t type) noexcept {
    switch (enum_value(type)) {  // any int may come from C: read as one, so an unknown value is only unknown
        case CUCORE_OBJECT_ANY: return "object";
#define CUCORE_OBJECT_TYPE(value, name) \
        case value: return name;
#include "core/object_types.inc"  // generated from the handle types of cucore/common.h
#undef CUCORE_OBJECT_TYPE
        default: return "unknown object type";
    }
}

}  // namespace cucore::core
