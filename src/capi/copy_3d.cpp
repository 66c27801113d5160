// C ABI: strided 2D/3D copies.
#include "capi/capi.hpp"
#include "capi/copy_side.hpp"
#include "core/copy_3d.hpp"

using namespace cucore;

extern "C" {

cucore_status_t cucore_copy_3d(const cucore_copy_3d_t *copy, cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        const cucore_copy_3d_t resolved = capi::read_copy_3d(copy);
        const core::CopySide source = capi::copy_side(resolved.src, "copy.src.buffer", "src");
        const core::CopySide destination = capi::copy_side(resolved.dst, "copy.dst.buffer", "dst");
        core::copy_3d(source, destination, resolved.width, resolved.rows, resolved.depth,
                      capi::get(stream, "stream"));
    });
}

}  // extern "C"
