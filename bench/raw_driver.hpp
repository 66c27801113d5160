// libcucore benchmarks: the raw CUDA driver, loaded at run time.
//
// The "raw" column of every benchmark calls the driver through this table, the way a C program
// that uses the driver API directly would (minus the link-time dependency). The benchmark binary
// links no CUDA library: it opens libcuda.so.1 itself and resolves every entry point through
// cuGetProcAddress with the CUDA version of the toolkit headers it was built against (CUDA_VERSION
// from cuda.h), as libcucore does, so both columns reach the same versions of the same entry
// points. A plain dlsym("cuStreamDestroy") would return the old v1 symbol instead.
#ifndef CUCORE_BENCH_RAW_DRIVER_HPP
#define CUCORE_BENCH_RAW_DRIVER_HPP

#include <cuda.h>
#include <dlfcn.h>

#include <string>

namespace cucore_bench {

// The entry points the benchmarks use. Each member has the type of the toolkit's declaration
// (decltype of the function cuda.h declares; unevaluated, so nothing is linked).
#define CUCORE_BENCH_DRIVER_FUNCTIONS(X) \
    X(cuInit)                            \
    X(cuDriverGetVersion)                \
    X(cuGetErrorName)                    \
    X(cuDeviceGetCount)                  \
    X(cuDeviceGet)                       \
    X(cuDeviceGetName)                   \
    X(cuDeviceGetAttribute)              \
    X(cuDevicePrimaryCtxRetain)          \
    X(cuDevicePrimaryCtxRelease)         \
    X(cuCtxSetCurrent)                   \
    X(cuCtxGetCurrent)                   \
    X(cuStreamCreateWithPriority)        \
    X(cuStreamDestroy)                   \
    X(cuStreamSynchronize)               \
    X(cuLaunchHostFunc)                  \
    X(cuEventCreate)                     \
    X(cuEventDestroy)                    \
    X(cuEventRecord)                     \
    X(cuEventSynchronize)                \
    X(cuDeviceGetMemPool)                \
    X(cuMemAllocFromPoolAsync)           \
    X(cuMemFreeAsync)                    \
    X(cuMemAllocHost)                    \
    X(cuMemFreeHost)                     \
    X(cuMemcpyAsync)                     \
    X(cuMemcpyPeerAsync)                 \
    X(cuCtxEnablePeerAccess)             \
    X(cuMemPoolCreate)                   \
    X(cuMemPoolDestroy)                  \
    X(cuMemPoolSetAccess)                \
    X(cuMemsetD32Async)                  \
    X(cuLibraryLoadData)                 \
    X(cuLibraryUnload)                   \
    X(cuLibraryGetKernel)                \
    X(cuKernelGetFunction)               \
    X(cuLaunchKernel)                    \
    X(cuArray3DCreate)                   \
    X(cuArrayDestroy)                    \
    X(cuTexObjectCreate)                 \
    X(cuTexObjectDestroy)                \
    X(cuMemcpy3DAsync)                   \
    X(cuGraphCreate)                     \
    X(cuGraphDestroy)                    \
    X(cuGraphAddKernelNode)              \
    X(cuGraphInstantiateWithParams)      \
    X(cuGraphExecDestroy)                \
    X(cuGraphLaunch)                     \
    X(cuGraphExecUpdate)

struct RawDriver {
    // `#name` is not macro-expanded, so the table holds the base names ("cuStreamDestroy") that
    // cuGetProcAddress expects, while decltype(&name) sees cuda.h's versioned declaration
    // (cuStreamDestroy_v2), whose signature is the one the requested CUDA version returns.
#define CUCORE_BENCH_DECLARE(name) decltype(&name) name##_fn = nullptr;
    CUCORE_BENCH_DRIVER_FUNCTIONS(CUCORE_BENCH_DECLARE)
#undef CUCORE_BENCH_DECLARE

    void *library = nullptr;

    // Opens libcuda.so.1 and resolves every entry point. False, with the reason in *why, when the
    // library or an entry point is missing. Does not call cuInit.
    bool load(std::string *why) {
        library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (library == nullptr) {
            const char *err = dlerror();
            *why = std::string("no CUDA driver (dlopen libcuda.so.1: ") +
                   (err != nullptr ? err : "unknown error") + ")";
            return false;
        }
        // cuGetProcAddress_v2 (CUDA 12.0+) reports why a symbol was not found; the v1 entry point
        // (CUDA 11.3+) has no status argument.
        using GetProcV2 = CUresult (*)(const char *, void **, int, cuuint64_t,
                                       CUdriverProcAddressQueryResult *);
        using GetProcV1 = CUresult (*)(const char *, void **, int, cuuint64_t);
        auto v2 = reinterpret_cast<GetProcV2>(dlsym(library, "cuGetProcAddress_v2"));
        auto v1 = reinterpret_cast<GetProcV1>(dlsym(library, "cuGetProcAddress"));
        if (v2 == nullptr && v1 == nullptr) {
            *why = "the CUDA driver is too old (libcuda.so.1 has no cuGetProcAddress)";
            return false;
        }
        // The legacy default stream semantics, as libcucore asks for (and as a program that does
        // not define CUDA_API_PER_THREAD_DEFAULT_STREAM gets from the linked driver API).
        const cuuint64_t kFlags = CU_GET_PROC_ADDRESS_LEGACY_STREAM;
        auto resolve = [&](const char *symbol, void **out) -> bool {
            *out = nullptr;
            CUresult r;
            if (v2 != nullptr) {
                CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
                r = v2(symbol, out, CUDA_VERSION, kFlags, &status);
                if (status != CU_GET_PROC_ADDRESS_SUCCESS) r = CUDA_ERROR_NOT_FOUND;
            } else {
                r = v1(symbol, out, CUDA_VERSION, kFlags);
            }
            if (r != CUDA_SUCCESS || *out == nullptr) {
                *why = std::string("the CUDA driver lacks ") + symbol + " (asked for CUDA " +
                       std::to_string(CUDA_VERSION) + ")";
                return false;
            }
            return true;
        };
#define CUCORE_BENCH_RESOLVE(name) \
    if (!resolve(#name, reinterpret_cast<void **>(&name##_fn))) return false;
        CUCORE_BENCH_DRIVER_FUNCTIONS(CUCORE_BENCH_RESOLVE)
#undef CUCORE_BENCH_RESOLVE
        return true;
    }

    // "CUDA_ERROR_NO_DEVICE (100)", or the number alone when the name is unknown.
    std::string error_name(CUresult r) const {
        const char *name = nullptr;
        if (cuGetErrorName_fn != nullptr) cuGetErrorName_fn(r, &name);
        std::string out = name != nullptr ? name : "CUresult";
        return out + " (" + std::to_string(static_cast<int>(r)) + ")";
    }
};

}  // namespace cucore_bench

#endif  // CUCORE_BENCH_RAW_DRIVER_HPP
