// Checks of the fields of options structs that the compilers take (program and
// linker options): each failure is INVALID_ARGUMENT naming "options.<field>".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cucore/common.h"

namespace cucore::core::option_fields {

// `count` C strings (none NULL; the array only NULL with a count of 0) as strings.
std::vector<std::string> strings(const char *const *array, size_t count, const char *field);
// `count` numbers (the array only NULL with a count of 0).
std::vector<uint32_t> numbers(const uint32_t *array, size_t count, const char *field);
// A 0-or-1 switch.
uint32_t switch_value(uint32_t value, const char *field);
// A cucore_toggle_t (DEFAULT, ON or OFF).
cucore_toggle_t toggle(cucore_toggle_t value, const char *field);

}  // namespace cucore::core::option_fields
