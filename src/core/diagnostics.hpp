// Process-wide diagnostics: live objects per type and release-path failures.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cucore/common.h"

namespace cucore::core {

size_t live_object_count(cucore_object_type_t type) noexcept;  // CUCORE_OBJECT_ANY: all
uint64_t release_error_count() noexcept;
void set_release_error_handler(cucore_release_error_fn handler, void *user_data) noexcept;
const char *object_type_name(cucore_object_type_t type) noexcept;

}  // namespace cucore::core
