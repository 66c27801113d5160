// C ABI: the one reading of a cucore_memory_region_t (strided copies and graph copy nodes).
#pragma once

#include "capi/capi.hpp"
#include "core/copy_3d.hpp"

namespace cucore::capi {

// One side of a strided copy: exactly one of buffer and host.
inline core::CopySide copy_side(const cucore_memory_region_t &region, const char *buffer_argument, const char *side) {
    if ((region.buffer == nullptr) == (region.host == nullptr))
        core::throw_invalid_argument(std::string("argument 'copy.") + side +
                                     "' must name exactly one of 'buffer' and 'host'");
    return core::CopySide{get_optional(region.buffer, buffer_argument), region};
}

// A whole cucore_copy_3d_t: the struct read, reserved0 zero.
inline cucore_copy_3d_t read_copy_3d(const cucore_copy_3d_t *copy) {
    static constexpr cucore_copy_3d_t kCopyDefaults = CUCORE_COPY_3D_INIT;
    require(copy, "copy");
    cucore_copy_3d_t resolved = read_options(copy, kCopyDefaults, "copy");
    require_zero(resolved.reserved0, "copy.reserved0");
    return resolved;
}

}  // namespace cucore::capi
