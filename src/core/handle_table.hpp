// The handle table itself, for the code that must validate handles inline on
// every call (src/capi through handles::resolve) and for handle.cpp, which owns
// it. See handle.hpp for the design. Internal: never included by public headers.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/handle.hpp"

namespace cucore::core::table {

constexpr uint64_t kMagic = 0xCCull << 56;
constexpr uint32_t kGenerationMask = 0xFFFFFFu;  // 24 bits travel in the handle
constexpr uint32_t kChunkBits = 12;
constexpr uint32_t kChunkSize = 1u << kChunkBits;  // slots per chunk
constexpr uint32_t kMaxChunks = 4096;               // 16M live objects at most
constexpr uint32_t kNoSlot = UINT32_MAX;

struct Slot {
    std::atomic<uint64_t> word{uint64_t{1} << 32};  // generation 1, count 0
    std::atomic<Object *> object{nullptr};
    std::atomic<uint32_t> type{0};
    std::atomic<uint32_t> next_free{kNoSlot};
};

extern std::atomic<Slot *> g_chunks[kMaxChunks];
extern std::atomic<uint32_t> g_slots_published;  // slots whose chunk exists
extern std::atomic<uint32_t> g_next_unused;
extern std::atomic<uint64_t> g_free_head;  // (ABA tag << 32) | slot
inline uint32_t generation_of(uint64_t word) { return static_cast<uint32_t>(word >> 32); }
inline uint32_t count_of(uint64_t word) { return static_cast<uint32_t>(word); }

inline Slot &slot_at(uint32_t index) {
    return g_chunks[index >> kChunkBits].load(std::memory_order_acquire)[index & (kChunkSize - 1)];
}

// Builds and throws the message for a handle that failed validation (cold).
[[noreturn]] void throw_bad_handle(const void *handle, cucore_object_type_t type, const char *argument);

// Decodes and validates a handle; on failure throws naming the argument.
inline Slot &checked_slot(const void *handle, cucore_object_type_t type, const char *argument, uint32_t &index,
                          uint32_t &generation) {
    const uint64_t value = reinterpret_cast<uintptr_t>(handle);
    index = static_cast<uint32_t>(value);
    generation = static_cast<uint32_t>(value >> 32) & kGenerationMask;
    // One bound suffices: slots below g_slots_published have their chunk, and a
    // slot never handed out still has count 0.
    if (__builtin_expect((value & (0xFFull << 56)) != kMagic ||
                             index >= g_slots_published.load(std::memory_order_acquire),
                         0))
        throw_bad_handle(handle, type, argument);
    Slot &slot = slot_at(index);
    const uint64_t word = slot.word.load(std::memory_order_acquire);
    if (__builtin_expect(generation_of(word) != generation || count_of(word) == 0 ||
                             (type != CUCORE_OBJECT_ANY &&
                              slot.type.load(std::memory_order_relaxed) != static_cast<uint32_t>(type)),
                         0))
        throw_bad_handle(handle, type, argument);
    return slot;
}

}  // namespace cucore::core::table

namespace cucore::core::handles {

// Resolves a C handle of `type` to its object without taking a reference, or
// throws INVALID_HANDLE with a message naming `argument`. Inline: it runs on
// every call of the C ABI.
inline Object *resolve(const void *handle, cucore_object_type_t type, const char *argument) {
    uint32_t index, generation;
    return table::checked_slot(handle, type, argument, index, generation).object.load(std::memory_order_acquire);
}

}  // namespace cucore::core::handles
