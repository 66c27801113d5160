/* <cucore.h> and DLPack's own dlpack.h in one translation unit, in the order
 * DLPACK_ORDER_CUCORE_FIRST says (1: cucore.h first; 0: dlpack.h first; absent:
 * cucore.h alone, whose own DLPack declarations are then the reference). Built as
 * C99 with -Wall -Wextra -Werror -pedantic: compiling is the first half of the
 * check; DLPACK_LAYOUT_FUNCTION reports the layouts this translation unit sees, and
 * dlpack_header_check.c compares them across orders (tests/unit/CMakeLists.txt). */
#if defined(DLPACK_ORDER_CUCORE_FIRST) && DLPACK_ORDER_CUCORE_FIRST
#include <cucore.h>
#include <dlpack/dlpack.h>
#elif defined(DLPACK_ORDER_CUCORE_FIRST)
#include <dlpack/dlpack.h>
#include <cucore.h>
#else
#include <cucore.h>
#endif

#include "dlpack_header_layout.h"

#if DLPACK_MAJOR_VERSION != 1
#error "DLPACK_MAJOR_VERSION is not 1"
#endif

void DLPACK_LAYOUT_FUNCTION(dlpack_header_layout_t *out) {
    /* The declarations meet libcucore's functions as the header declares them. */
    cucore_status_t (*export_fn)(cucore_buffer_t *, const cucore_dlpack_layout_t *, struct DLManagedTensorVersioned **) =
        cucore_dlpack_export;
    cucore_status_t (*import_fn)(DLManagedTensor *, cucore_buffer_t **) = cucore_dlpack_import_legacy;
    cucore_dlpack_layout_t layout = CUCORE_DLPACK_LAYOUT_INIT;
    DLDevice device = {kDLCUDAManaged, 0};
    (void)export_fn;
    (void)import_fn;
    (void)layout;
    (void)device;
    DLPACK_HEADER_LAYOUT_FILL(out);
}
