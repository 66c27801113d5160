// Shared by the libFuzzer targets of tests/fuzz: the substitute driver
// installed in-process (as the unit tests do), oracles that abort with a
// message (libFuzzer then saves the input), and the balance check every
// target runs after each input: no library object and no driver object
// outlives the input that made it.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/event_cache.hpp"
#include "cucore.h"
#include "fake_driver.hpp"

namespace fuzz {

[[noreturn]] inline void fail(const char *file, int line, const char *format, ...) {
    std::fprintf(stderr, "\n%s:%d: fuzz oracle failed: ", file, line);
    va_list args;
    va_start(args, format);
    std::vfprintf(stderr, format, args);
    va_end(args);
    std::fprintf(stderr, "\n  last cucore status %s, message: %s\n",
                 cucore_status_string(cucore_last_error_status()), cucore_last_error_message());
    std::abort();
}

}  // namespace fuzz

// An oracle: a property every input must keep. On failure, prints the
// message and aborts (libFuzzer saves the input as crash-*).
#define FUZZ_CHECK(cond, ...)                                 \
    do {                                                      \
        if (!(cond)) ::fuzz::fail(__FILE__, __LINE__, __VA_ARGS__); \
    } while (0)

// A call that must succeed (set-up, clean-up).
#define FUZZ_OK(call)                                                                             \
    do {                                                                                          \
        const cucore_status_t fuzz_status_ = (call);                                              \
        FUZZ_CHECK(fuzz_status_ == CUCORE_SUCCESS, "%s returned %s", #call,                      \
                   cucore_status_string(fuzz_status_));                                           \
    } while (0)

namespace fuzz {

// What must be the same before and after each input.
struct Balance {
    size_t live[CUCORE_OBJECT_TYPE_COUNT] = {};
    fake::Counters driver;
    uint64_t release_errors = 0;

    static Balance now() {
        Balance b;
        for (int t = 0; t < CUCORE_OBJECT_TYPE_COUNT; ++t)
            FUZZ_OK(cucore_live_object_count(static_cast<cucore_object_type_t>(t), &b.live[t]));
        b.driver = fake::counters();
        // The spare driver events contexts keep for reuse live without an Event (core/event_cache.hpp).
        b.driver.events -= cucore::core::EventCache::total();
        FUZZ_OK(cucore_release_error_count(&b.release_errors));
        return b;
    }

    // Aborts naming the first difference from `before`.
    void expect_equal(const Balance &before) const {
        // Each type first (the message names it), then all (CUCORE_OBJECT_ANY).
        for (int t = CUCORE_OBJECT_TYPE_COUNT - 1; t >= 0; --t)
            FUZZ_CHECK(live[t] == before.live[t], "live %s objects: %zu before the input, %zu after",
                       cucore_object_type_name(static_cast<cucore_object_type_t>(t)), before.live[t], live[t]);
#define FUZZ_COUNTER(name) \
    FUZZ_CHECK(driver.name == before.driver.name, "driver counter " #name ": %d before, %d after", before.driver.name, driver.name)
        FUZZ_COUNTER(primary_retained);
        FUZZ_COUNTER(streams);
        FUZZ_COUNTER(events);
        FUZZ_COUNTER(pools);
        FUZZ_COUNTER(allocations);
        FUZZ_COUNTER(vmm_handles);
        FUZZ_COUNTER(reservations);
        FUZZ_COUNTER(mappings);
        FUZZ_COUNTER(imported_pointers);
        FUZZ_COUNTER(libraries);
        FUZZ_COUNTER(link_states);
        FUZZ_COUNTER(graphics_resources);
        FUZZ_COUNTER(graphics_mapped);
        FUZZ_COUNTER(arrays);
        FUZZ_COUNTER(mipmapped_arrays);
        FUZZ_COUNTER(texture_objects);
        FUZZ_COUNTER(surface_objects);
        FUZZ_COUNTER(graphs);
        FUZZ_COUNTER(graph_execs);
        FUZZ_COUNTER(user_objects);
#undef FUZZ_COUNTER
        FUZZ_CHECK(release_errors == before.release_errors, "release errors: %llu before, %llu after",
                   static_cast<unsigned long long>(before.release_errors),
                   static_cast<unsigned long long>(release_errors));
    }
};

// FNV-1a, 64 and 32 bits, as the IPC descriptors and cache entries use
// (written here from the format's description, not taken from the library).
inline uint64_t fnv1a64(const uint8_t *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}
inline uint32_t fnv1a32(const uint8_t *p, size_t n) {
    uint32_t h = 0x811c9dc5u;
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x01000193u;
    return h;
}
inline void put_le(uint8_t *at, uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) at[i] = static_cast<uint8_t>(value >> (8 * i));
}
inline uint64_t get_le(const uint8_t *at, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= uint64_t{at[i]} << (8 * i);
    return v;
}

// Whether an environment variable is set to something other than "" or "0".
inline bool env_flag(const char *name) {
    const char *v = std::getenv(name);
    return v && *v && std::strcmp(v, "0") != 0;
}

}  // namespace fuzz
