// The fake NVML's shared state and helpers (fake_nvml.cpp: the original calls
// and the table; fake_nvml_queries.cpp: the queries of issue 17 and events).
// Internal to the fake: one State per process, behind state().
#pragma once

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "fake_nvml.hpp"

namespace fake::nvml::detail {

using cucore::driver::NvmlTable;
namespace n = cucore::driver::nvml;

constexpr unsigned long long kDeviceMemory = 80ULL << 30;  // the fake driver's (state.hpp)

struct State {
    std::mutex mutex;
    unsigned devices = 2;
    long calls = 0;
    long fail_at = 0;
    int fail_result = n::kErrorUnknown;
    std::string fail_name;
    int fail_name_result = n::kErrorUnknown;
    std::vector<std::string> log;
    std::vector<std::pair<uint32_t, unsigned long long>> processes;
    int compute_mode = 0;
    int persistence = 1;
    unsigned fan_speed = 30;
    unsigned mig_pending = 0;
    std::vector<unsigned> cleared_fields;
    struct EventSet {
        bool live = true;
        std::vector<std::pair<int, unsigned long long>> registered;  // (device, types)
        std::vector<n::EventData> queue;
    };
    std::vector<EventSet> event_sets;  // handle k + 1
    struct SystemEventSet {
        bool live = true;
        unsigned long long types = 0;
        std::vector<n::SystemEventData> queue;
    };
    std::vector<SystemEventSet> system_event_sets;  // handle k + 1
};
inline State &state() {
    static State s;
    return s;
}

// Counts and logs a call; its injected failure, or success.
inline n::Return enter(const char *name) {
    State &s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    ++s.calls;
    s.log.push_back(name);
    if (s.fail_at && s.calls == s.fail_at) return s.fail_result;
    if (!s.fail_name.empty() && s.fail_name == name) return s.fail_name_result;
    return n::kSuccess;
}

// The ordinal of a fake device handle, or -1.
inline int ordinal(n::Device device) {
    const uintptr_t value = reinterpret_cast<uintptr_t>(device);
    return value >= 1 && value <= state().devices ? static_cast<int>(value - 1) : -1;
}
inline n::Device handle_of(unsigned ordinal) { return reinterpret_cast<n::Device>(static_cast<uintptr_t>(ordinal) + 1); }

inline std::string uuid_of(int d) {
    char text[48];
    unsigned char b[16];
    for (int i = 0; i < 16; ++i) b[i] = static_cast<unsigned char>(d * 16 + i);
    std::snprintf(text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                  b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                  b[15]);
    return text;
}
inline std::string bus_id_of(int d) {
    char text[32];
    std::snprintf(text, sizeof text, "00000000:%02X:00.0", static_cast<unsigned>(d + 1) & 0xFFu);
    return text;
}

inline n::Return copy_text(const std::string &text, char *out, unsigned length) {
    if (!out) return n::kErrorInvalidArgument;
    if (length < text.size() + 1) return n::kErrorInsufficientSize;
    std::memcpy(out, text.c_str(), text.size() + 1);
    return n::kSuccess;
}

#define FAKE_NVML_ENTER(name)                          \
    if (const n::Return injected = enter(#name)) return injected
#define FAKE_NVML_DEVICE(device)                       \
    const int d = ordinal(device);                     \
    if (d < 0) return n::kErrorInvalidArgument

inline n::Return clock_of(int type, bool max, int d, unsigned *mhz) {
    static const unsigned current[4] = {1755, 1755, 2619, 1545}, maximum[4] = {1980, 1980, 2619, 1710};
    if (!mhz || type < 0 || type > 3) return n::kErrorInvalidArgument;
    *mhz = max ? maximum[type] : current[type] + (type < 2 ? static_cast<unsigned>(d) : 0u);
    return n::kSuccess;
}

// Fills the table's entries of fake_nvml_queries.cpp.
void add_query_entries(NvmlTable &t);

}  // namespace fake::nvml::detail
