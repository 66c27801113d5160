// The handle table itself, for the code that must validate handles inline on
// every call (src/capi through handles::acquire) and for handle.cpp, which owns
// it. See handle.hpp for the design. Internal: never included by public headers.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/handle.hpp"

namespace cucore::core::table {

constexpr uint64_t kMagic = 0xCCull << 56;
constexpr uint64_t kMagicMask = 0xFFull << 56;
constexpr uint32_t kIndexBits = 24;  // the slot index travels in the handle's low 24 bits
constexpr uint32_t kChunkBits = 12;
constexpr uint32_t kChunkSize = 1u << kChunkBits;                   // slots per chunk
constexpr uint32_t kMaxChunks = 1u << (kIndexBits - kChunkBits);    // 16M live objects at most
constexpr uint32_t kNoSlot = UINT32_MAX;
// A handle word whose generation is 0 belongs to a slot that spent its
// generations: it never validates and the slot is retired when its object goes.
constexpr uint32_t kSpent = 0;

struct Slot {
    std::atomic<uint64_t> handle{uint64_t{1} << 32};  // generation 1, no user reference
    std::atomic<uint64_t> life{0};                     // incarnation 0, no library reference
    std::atomic<Object *> object{nullptr};
    std::atomic<uint32_t> type{0};
    std::atomic<uint32_t> next_free{kNoSlot};
};

extern std::atomic<Slot *> g_chunks[kMaxChunks];
extern std::atomic<uint32_t> g_slots_published;  // slots whose chunk exists
extern std::atomic<uint32_t> g_next_unused;
extern std::atomic<uint64_t> g_free_head;  // (ABA tag << 32) | slot
inline uint32_t high_of(uint64_t word) { return static_cast<uint32_t>(word >> 32); }
inline uint32_t count_of(uint64_t word) { return static_cast<uint32_t>(word); }

inline uint32_t index_of(uint64_t value) { return static_cast<uint32_t>(value) & ((1u << kIndexBits) - 1); }
inline uint32_t generation_in(uint64_t value) { return static_cast<uint32_t>(value >> kIndexBits); }
inline uint64_t encode(uint32_t index, uint32_t generation) {
    return kMagic | (uint64_t{generation} << kIndexBits) | index;
}

inline Slot &slot_at(uint32_t index) {
    return g_chunks[index >> kChunkBits].load(std::memory_order_acquire)[index & (kChunkSize - 1)];
}

// Builds and throws the message for a handle that failed validation (cold).
[[noreturn]] void throw_bad_handle(const void *handle, cucore_object_type_t type, const char *argument);

// Decodes a handle and checks its magic, slot and type; on failure throws
// naming the argument. The caller checks the generation and count atomically.
inline Slot &checked_slot(const void *handle, cucore_object_type_t type, const char *argument, uint32_t &generation) {
    const uint64_t value = reinterpret_cast<uintptr_t>(handle);
    const uint32_t index = index_of(value);
    generation = generation_in(value);
    // One bound suffices: slots below g_slots_published have their chunk, and a
    // slot never handed out has no user reference.
    if (__builtin_expect((value & kMagicMask) != kMagic || index >= g_slots_published.load(std::memory_order_acquire),
                         0))
        throw_bad_handle(handle, type, argument);
    Slot &slot = slot_at(index);
    if (__builtin_expect(type != CUCORE_OBJECT_ANY &&
                             slot.type.load(std::memory_order_relaxed) != static_cast<uint32_t>(type),
                         0))
        throw_bad_handle(handle, type, argument);
    return slot;
}

}  // namespace cucore::core::table

namespace cucore::core::handles {

// Validates a C handle of `type` and takes a user reference to its object for
// the duration of a call, in one compare-and-swap, so a release on another
// thread cannot free the object under the call; the caller gives it back with
// drop_user(). Throws INVALID_HANDLE with a message naming `argument`. Inline:
// it runs on every call of the C ABI.
inline Object *acquire(const void *handle, cucore_object_type_t type, const char *argument) {
    uint32_t generation;
    table::Slot &slot = table::checked_slot(handle, type, argument, generation);
    uint64_t word = slot.handle.load(std::memory_order_acquire);
    do {
        // The type was read before the count was taken; a slot reused since
        // has a new generation, so a match here means the type read was this
        // object's.
        if (__builtin_expect(table::high_of(word) != generation || table::count_of(word) == 0, 0))
            table::throw_bad_handle(handle, type, argument);
    } while (!slot.handle.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel));
    return slot.object.load(std::memory_order_acquire);
}

}  // namespace cucore::core::handles
