// String-out parameters of the compile capability (logs, flags): the text is
// copied into (buffer, capacity) truncated and NUL-terminated, and its whole
// length is reported, so a caller can size a second call.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "capi/capi.hpp"

namespace cucore::capi {

// Checks the pair (a NULL buffer needs capacity 0) and clears `length`; call
// before any work so a failed call leaves them cleared.
inline void check_text_out(char *buffer, size_t capacity, size_t *length) {
    optional_out(length);
    if (!buffer && capacity)
        core::throw_invalid_argument("argument 'buffer' is NULL with a capacity of " + std::to_string(capacity));
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

// The strings of a (pointer, count) argument; a NULL array with a count or a
// NULL string in it is INVALID_ARGUMENT naming `argument`.
inline std::vector<std::string> string_list(const char *const *array, size_t count, const char *argument) {
    if (count && !array)
        core::throw_invalid_argument(std::string("argument '") + argument + "' is NULL with a count of " +
                                     std::to_string(count));
    std::vector<std::string> result;
    result.reserve(count);
    for (size_t i = 0; i < count; ++i) {
        if (!array[i])
            core::throw_invalid_argument(std::string("argument '") + argument + "[" + std::to_string(i) + "]' is NULL");
        result.emplace_back(array[i]);
    }
    return result;
}

}  // namespace cucore::capi
