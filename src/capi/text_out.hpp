// String-out parameters of the compile capability (logs, flags): the text is
// copied into (buffer, capacity) truncated and NUL-terminated, and its whole
// length is reported, so a caller can size a second call.
#pragma once

#include <cstring>
#include <string>

#include "capi/capi.hpp"

namespace cucore::capi {

// Checks the pair (a NULL buffer needs capacity 0) and clears `length`; call
// before any work so a failed call leaves them cleared.
inline void check_text_out(char *buffer, size_t capacity, size_t *length) {
    optional_out(length);
    require_array(buffer, capacity, "buffer", "capacity");
    if (buffer) buffer[0] = '\0';
}

inline void text_out(const std::string &text, char *buffer, size_t capacity, size_t *length) {
    if (buffer && capacity) {
        const size_t n = text.size() < capacity - 1 ? text.size() : capacity - 1;
        std::memcpy(buffer, text.data(), n);
        buffer[n] = '\0';
    }
    if (length) *length = text.size();
}

}  // namespace cucore::capi
