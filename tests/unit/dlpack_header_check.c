/* Compares what each include order of <cucore.h> / <cucore.hpp> and DLPack's own
 * dlpack.h (tests/unit/dlpack_standin, DLPack 1.0 and 1.1) sees of DLPack with what
 * <cucore.h> alone declares: the same sizes, offsets and values, so a tensor passes
 * between a program built either way and libcucore unchanged. */
#include <stdio.h>
#include <string.h>

#include "dlpack_header_layout.h"

#define ORDERS(X)                  \
    X(c_cucore_first_dlpack11)     \
    X(c_dlpack11_first)            \
    X(c_cucore_first_dlpack10)     \
    X(c_dlpack10_first)            \
    X(cxx_cucore_first_dlpack11)   \
    X(cxx_dlpack11_first)          \
    X(cxx_cucore_first_dlpack10)   \
    X(cxx_dlpack10_first)

#define DECLARE(name) void dlpack_layout_##name(dlpack_header_layout_t *out);
ORDERS(DECLARE)
void dlpack_layout_c_cucore_alone(dlpack_header_layout_t *out);

int main(void) {
    dlpack_header_layout_t reference, seen;
    int failures = 0, checked = 0;
    memset(&reference, 0, sizeof reference);
    dlpack_layout_c_cucore_alone(&reference);
#define COMPARE(name)                                                                               \
    do {                                                                                            \
        int i;                                                                                      \
        memset(&seen, 0, sizeof seen);                                                              \
        dlpack_layout_##name(&seen);                                                                \
        ++checked;                                                                                  \
        for (i = 0; i < DLPACK_HEADER_LAYOUT_FIELDS; ++i) {                                         \
            if (seen.value[i] != reference.value[i]) {                                              \
                printf("FAIL %s: entry %d is %zu, cucore.h alone has %zu\n", #name, i, seen.value[i], \
                       reference.value[i]);                                                         \
                ++failures;                                                                         \
            }                                                                                       \
        }                                                                                           \
    } while (0);
    ORDERS(COMPARE)
    printf("%d include orders compiled and agree with <cucore.h> alone: %s\n", checked,
           failures ? "NO" : "yes");
    return failures ? 1 : 0;
}
