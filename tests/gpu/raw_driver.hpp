// The raw CUDA driver, for the GPU tests to compare libcucore against.
//
// The test binary must start (and skip) on a machine without a driver, so it
// does not link libcuda: this helper dlopens libcuda.so.1 itself and resolves
// each entry point through cuGetProcAddress.
//
// Each entry point is declared with the PFN_<name>_v<version> typedef of
// cudaTypedefs.h and asked for at exactly that <version>, as libcucore's
// src/driver/entry_points.hpp does. One CUDA version for all of them would be
// wrong: cuGetProcAddress answers with the newest ABI of the name at the asked
// version, and that is not the signature a caller of the old ABI uses (asked at
// 12000, "cuCtxCreate" is cuCtxCreate_v3, the 11.4 ABI with exec-affinity
// parameters, and called as (ctx*, flags, dev) it fails with
// CUDA_ERROR_INVALID_DEVICE). The typedef and the version come from one macro
// argument, so they cannot disagree. cuda.h and cudaTypedefs.h are used for
// their types only.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <string>
#include <type_traits>

// X(Name, version): the entry point cu<Name> with the ABI of PFN_cu<Name>_v<version>.
// Names are the driver's without the "cu" prefix, so that cuda.h's renaming
// macros (cuCtxDestroy -> cuCtxDestroy_v2...) never touch them; the versions
// are those of src/driver/entry_points.hpp where libcucore uses the same call.
#define RAW_DRIVER_ENTRY_POINTS(X)      \
    X(Init, 2000)                       \
    X(GetErrorName, 6000)               \
    X(DriverGetVersion, 2020)           \
    X(DeviceGetCount, 2000)             \
    X(DeviceGet, 2000)                  \
    X(DeviceGetName, 2000)              \
    X(DeviceGetUuid, 11040)             \
    X(DeviceGetPCIBusId, 4010)          \
    X(DeviceGetAttribute, 2000)         \
    X(DeviceTotalMem, 3020)             \
    X(DeviceCanAccessPeer, 4000)        \
    X(DevicePrimaryCtxRetain, 7000)     \
    X(DevicePrimaryCtxRelease, 11000)   \
    X(CtxCreate, 3020)                  \
    X(CtxDestroy, 4000)                 \
    X(CtxGetCurrent, 4000)              \
    X(CtxSetCurrent, 4000)              \
    X(CtxPushCurrent, 4000)             \
    X(CtxPopCurrent, 4000)              \
    X(CtxGetDevice, 2000)               \
    X(CtxSynchronize, 2000)             \
    X(CtxGetStreamPriorityRange, 5050)  \
    X(StreamCreate, 2000)               \
    X(StreamCreateWithPriority, 5050)   \
    X(StreamDestroy, 4000)              \
    X(StreamQuery, 2000)                \
    X(StreamSynchronize, 2000)          \
    X(StreamGetPriority, 5050)          \
    X(StreamGetFlags, 5050)             \
    X(StreamGetCtx, 9020)               \
    X(StreamWaitEvent, 3020)            \
    X(LaunchHostFunc, 10000)            \
    X(EventCreate, 2000)                \
    X(EventDestroy, 4000)               \
    X(EventRecord, 2000)                \
    X(EventQuery, 2000)                 \
    X(EventSynchronize, 2000)           \
    X(EventElapsedTime, 12080)          \
    X(MemAlloc, 3020)                   \
    X(MemFree, 3020)                    \
    X(MemcpyHtoD, 3020)                 \
    X(MemcpyDtoH, 3020)                 \
    X(PointerGetAttribute, 4000)        \
    X(DeviceGetMemPool, 11020)          \
    X(MemPoolGetAttribute, 11020)       \
    X(MemPoolGetAccess, 11020)          \
    X(MemRangeGetAttribute, 8000)       \
    X(MemGetAccess, 10020)              \
    X(MemGetAllocationGranularity, 10020) \
    X(MemAddressReserve, 10020)         \
    X(MemAddressFree, 10020)            \
    X(LibraryLoadData, 12000)           \
    X(LibraryUnload, 12000)             \
    X(LibraryGetKernel, 12000)          \
    X(LibraryGetGlobal, 12000)          \
    X(KernelGetFunction, 12000)         \
    X(KernelGetAttribute, 12000)        \
    X(FuncGetAttribute, 2020)           \
    X(LaunchKernel, 4000)               \
    X(OccupancyMaxActiveBlocksPerMultiprocessor, 6050) \
    X(OccupancyMaxPotentialBlockSize, 6050)            \
    X(OccupancyAvailableDynamicSMemPerBlock, 10020)    \
    X(OccupancyMaxPotentialClusterSize, 11070)         \
    X(OccupancyMaxActiveClusters, 11070)               \
    X(Array3DCreate, 3020)              \
    X(Array3DGetDescriptor, 3020)       \
    X(ArrayDestroy, 2000)               \
    X(MipmappedArrayCreate, 5000)       \
    X(MipmappedArrayGetLevel, 5000)     \
    X(MipmappedArrayDestroy, 5000)      \
    X(TexObjectGetResourceDesc, 5000)

namespace raw {

struct Driver {
    bool available = false; // library loaded, every entry point found, cuInit ok, >= 1 device
    std::string reason;     // why not, for the skip message
    int device_count = 0;

#define RAW_DRIVER_FIELD(name, version) PFN_cu##name##_v##version name = nullptr;
    RAW_DRIVER_ENTRY_POINTS(RAW_DRIVER_FIELD)
#undef RAW_DRIVER_FIELD
};

namespace detail {

using GetProcV2 = CUresult (*)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
using GetProcV1 = CUresult (*)(const char *, void **, int, cuuint64_t);

// cuEventElapsedTime_v2 (12.8) has the signature of the original, which any
// older driver still has: libcucore asks for 12080 and the tests compare with
// the same entry point, falling back to the original on an older driver.
static_assert(std::is_same_v<PFN_cuEventElapsedTime_v12080, PFN_cuEventElapsedTime_v2000>);

inline Driver load() {
    Driver d;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        const char *why = dlerror();
        d.reason = std::string("libcuda.so.1 not found (") + (why != nullptr ? why : "?") + ")";
        return d;
    }
    auto v2 = reinterpret_cast<GetProcV2>(dlsym(lib, "cuGetProcAddress_v2"));
    auto v1 = reinterpret_cast<GetProcV1>(dlsym(lib, "cuGetProcAddress"));
    if (v2 == nullptr && v1 == nullptr) {
        d.reason = "libcuda.so.1 has no cuGetProcAddress (driver older than CUDA 11.3)";
        return d;
    }
    // The entry point `name` with the ABI of CUDA `version`, or nullptr.
    auto lookup = [&](const char *name, int version) -> void * {
        void *p = nullptr;
        CUresult r;
        if (v2 != nullptr) {
            CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
            r = v2(name, &p, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status);
            if (status != CU_GET_PROC_ADDRESS_SUCCESS) p = nullptr;
        } else {
            r = v1(name, &p, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM);
        }
        return r == CUDA_SUCCESS ? p : nullptr;
    };
    std::string missing;
#define RAW_DRIVER_RESOLVE(name, version)                                                  \
    d.name = reinterpret_cast<PFN_cu##name##_v##version>(lookup("cu" #name, version));    \
    if (d.name == nullptr && std::string("cu" #name) == "cuEventElapsedTime")             \
        d.name = reinterpret_cast<PFN_cu##name##_v##version>(lookup("cu" #name, 2000));  \
    if (d.name == nullptr)                                                                 \
        missing += (missing.empty() ? "" : ", ") + std::string("cu" #name " (v" #version ")");
    RAW_DRIVER_ENTRY_POINTS(RAW_DRIVER_RESOLVE)
#undef RAW_DRIVER_RESOLVE
    if (!missing.empty()) {
        d.reason = "libcuda.so.1 lacks " + missing;
        return d;
    }
    const CUresult r = d.Init(0);
    if (r != CUDA_SUCCESS) {
        const char *name = nullptr;
        d.GetErrorName(r, &name);
        d.reason = std::string("cuInit failed: ") + (name != nullptr ? name : "?") + " (" +
                   std::to_string(static_cast<int>(r)) + ")";
        return d;
    }
    if (d.DeviceGetCount(&d.device_count) != CUDA_SUCCESS || d.device_count == 0) {
        d.reason = "the driver sees no CUDA device";
        return d;
    }
    d.available = true;
    return d;
}

} // namespace detail

// The process's raw driver, loaded on first use.
inline const Driver &driver() {
    static const Driver d = detail::load();
    return d;
}

// "CUDA_ERROR_XXX (n)" for a CUresult.
inline std::string error_name(CUresult r) {
    const char *name = nullptr;
    if (driver().GetErrorName != nullptr) driver().GetErrorName(r, &name);
    return std::string(name != nullptr ? name : "CUDA_ERROR_?") + " (" + std::to_string(static_cast<int>(r)) + ")";
}

} // namespace raw
