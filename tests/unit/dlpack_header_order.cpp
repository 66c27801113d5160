// The C++ twin of dlpack_header_order.c: <cucore.hpp> (the façade, which includes
// <cucore.h>) and DLPack's own dlpack.h in the order DLPACK_ORDER_CUCORE_FIRST says,
// as C++17 with -Wall -Wextra -Werror -pedantic.
#if defined(DLPACK_ORDER_CUCORE_FIRST) && DLPACK_ORDER_CUCORE_FIRST
#include <cucore.hpp>
#include <dlpack/dlpack.h>
#else
#include <dlpack/dlpack.h>
#include <cucore.hpp>
#endif

#include <type_traits>

#include "dlpack_header_layout.h"

static_assert(DLPACK_MAJOR_VERSION == 1, "DLPack 1.x");
static_assert(std::is_same<decltype(&cucore_dlpack_export),
                           cucore_status_t (*)(cucore_buffer_t *, const cucore_dlpack_layout_t *,
                                               DLManagedTensorVersioned **)>::value,
              "cucore_dlpack_export takes DLPack's DLManagedTensorVersioned");
static_assert(sizeof(DLDeviceType) == sizeof(std::int32_t), "DLDeviceType is 4 bytes");

extern "C" void DLPACK_LAYOUT_FUNCTION(dlpack_header_layout_t *out) {
    cucore::DLPackLayout layout = cucore::DLPackLayout::of<float>({4, 2});
    (void)layout;
    DLPACK_HEADER_LAYOUT_FILL(out);
}
