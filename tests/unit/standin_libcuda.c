/* Stand-in CUDA drivers for the loader tests (never a real driver):
 * built once without cuGetProcAddress_v2 ("too old") and once with it but
 * offering only three entry points ("partial"). */
#include <string.h>

typedef int CUresult;

#ifdef CUCORE_STANDIN_PARTIAL
static CUresult standin_init(unsigned flags) { (void)flags; return 0; }
static CUresult standin_version(int *version) { *version = 12000; return 0; }
static CUresult standin_count(int *count) { *count = 1; return 0; }

__attribute__((visibility("default")))
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, unsigned long long flags, int *status) {
    (void)version;
    (void)flags;
    *pfn = 0;
    if (strcmp(symbol, "cuInit") == 0) *pfn = (void *)standin_init;
    if (strcmp(symbol, "cuDriverGetVersion") == 0) *pfn = (void *)standin_version;
    if (strcmp(symbol, "cuDeviceGetCount") == 0) *pfn = (void *)standin_count;
    *status = *pfn ? 0 : 1; /* CU_GET_PROC_ADDRESS_SUCCESS / SYMBOL_NOT_FOUND */
    return *pfn ? 0 : 500;  /* CUDA_ERROR_NOT_FOUND */
}
#else
__attribute__((visibility("default"))) CUresult cuInit(unsigned flags) { (void)flags; return 0; }
#endif
