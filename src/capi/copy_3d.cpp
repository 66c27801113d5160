// C ABI: strided 2D/3D copies.
#include "capi/capi.hpp"
#include "core/copy_3d.hpp"

using namespace cucore;

namespace {
constexpr cucore_copy_3d_t kCopyDefaults = CUCORE_COPY_3D_INIT;

// One side of a strided copy: exactly one of buffer and host.
core::CopySide copy_side(const cucore_memory_region_t &region, const char *buffer_argument, const char *side) {
    if ((region.buffer == nullptr) == (region.host == nullptr))
        core::throw_invalid_argument(std::string("argument 'copy.") + side +
                                     "' must name exactly one of 'buffer' and 'host'");
    return core::CopySide{capi::get_optional(region.buffer, buffer_argument), region};
}

}  // namespace

extern "C" {

cucore_status_t cucore_copy_3d(const cucore_copy_3d_t *copy, cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        capi::require(copy, "copy");
        cucore_copy_3d_t resolved = capi::read_options(copy, kCopyDefaults, "copy");
        capi::require_zero(resolved.reserved0, "copy.reserved0");
        const core::CopySide source = copy_side(resolved.src, "copy.src.buffer", "src");
        const core::CopySide destination = copy_side(resolved.dst, "copy.dst.buffer", "dst");
        core::copy_3d(source, destination, resolved.width, resolved.rows, resolved.depth,
                      capi::get(stream, "stream"));
    });
}

}  // extern "C"
