#include "core/option_fields.hpp"

#include "core/error.hpp"

namespace cucore::core::option_fields {

namespace {
[[noreturn]] void refuse(const char *field, const std::string &why) {
    throw_invalid_argument(std::string("argument 'options.") + field + why);
}
}  // namespace

std::vector<std::string> strings(const char *const *array, size_t count, const char *field) {
    if (count && !array) refuse(field, "' is NULL with a count of " + std::to_string(count));
    std::vector<std::string> result;
    result.reserve(count);
    for (size_t i = 0; i < count; ++i) {
        if (!array[i]) refuse(field, "[" + std::to_string(i) + "]' is NULL");
        result.emplace_back(array[i]);
    }
    return result;
}

std::vector<uint32_t> numbers(const uint32_t *array, size_t count, const char *field) {
    if (count && !array) refuse(field, "' is NULL with a count of " + std::to_string(count));
    return std::vector<uint32_t>(array, array + count);
}

uint32_t switch_value(uint32_t value, const char *field) {
    if (value > 1) refuse(field, "' must be 0 or 1");
    return value;
}

cucore_toggle_t toggle(cucore_toggle_t value, const char *field) {
    if (value != CUCORE_TOGGLE_DEFAULT && value != CUCORE_TOGGLE_ON && value != CUCORE_TOGGLE_OFF)
        refuse(field, "' must be CUCORE_TOGGLE_DEFAULT, CUCORE_TOGGLE_ON or CUCORE_TOGGLE_OFF");
    return value;
}

}  // namespace cucore::core::option_fields
