// The raw CUDA driver, for the GPU tests to compare libcucore against.
//
// The test binary must start (and skip) on a machine without a driver, so it
// does not link libcuda: this helper dlopens libcuda.so.1 itself and resolves
// each entry point through cuGetProcAddress with the CUDA version whose
// signature is declared here (12.0: stable for every function used), so the
// versioned symbols (_v2...) are the ones cuda.h of that version would call.
// cuda.h is used for its types only.
#pragma once

#include <cuda.h>
#include <dlfcn.h>

#include <string>
#include <type_traits>

namespace raw {

// The entry points the tests use. Names are the driver's without the "cu"
// prefix, so that cuda.h's renaming macros (cuCtxDestroy -> cuCtxDestroy_v2...)
// never touch them.
struct Driver {
    bool available = false; // library loaded, every entry point found, cuInit ok, >= 1 device
    std::string reason;     // why not, for the skip message
    int device_count = 0;

    CUresult (*Init)(unsigned int) = nullptr;
    CUresult (*GetErrorName)(CUresult, const char **) = nullptr;
    CUresult (*DriverGetVersion)(int *) = nullptr;
    CUresult (*DeviceGetCount)(int *) = nullptr;
    CUresult (*DeviceGet)(CUdevice *, int) = nullptr;
    CUresult (*DeviceGetName)(char *, int, CUdevice) = nullptr;
    CUresult (*DeviceGetUuid)(CUuuid *, CUdevice) = nullptr;
    CUresult (*DeviceGetPCIBusId)(char *, int, CUdevice) = nullptr;
    CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice) = nullptr;
    CUresult (*DeviceTotalMem)(size_t *, CUdevice) = nullptr;
    CUresult (*DeviceCanAccessPeer)(int *, CUdevice, CUdevice) = nullptr;
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice) = nullptr;
    CUresult (*DevicePrimaryCtxRelease)(CUdevice) = nullptr;
    CUresult (*CtxCreate)(CUcontext *, unsigned int, CUdevice) = nullptr;
    CUresult (*CtxDestroy)(CUcontext) = nullptr;
    CUresult (*CtxGetCurrent)(CUcontext *) = nullptr;
    CUresult (*CtxSetCurrent)(CUcontext) = nullptr;
    CUresult (*CtxPushCurrent)(CUcontext) = nullptr;
    CUresult (*CtxPopCurrent)(CUcontext *) = nullptr;
    CUresult (*CtxGetDevice)(CUdevice *) = nullptr;
    CUresult (*CtxSynchronize)(void) = nullptr;
    CUresult (*CtxGetStreamPriorityRange)(int *, int *) = nullptr;
    CUresult (*StreamCreate)(CUstream *, unsigned int) = nullptr;
    CUresult (*StreamCreateWithPriority)(CUstream *, unsigned int, int) = nullptr;
    CUresult (*StreamDestroy)(CUstream) = nullptr;
    CUresult (*StreamQuery)(CUstream) = nullptr;
    CUresult (*StreamSynchronize)(CUstream) = nullptr;
    CUresult (*StreamGetPriority)(CUstream, int *) = nullptr;
    CUresult (*StreamGetFlags)(CUstream, unsigned int *) = nullptr;
    CUresult (*StreamGetCtx)(CUstream, CUcontext *) = nullptr;
    CUresult (*StreamWaitEvent)(CUstream, CUevent, unsigned int) = nullptr;
    CUresult (*LaunchHostFunc)(CUstream, CUhostFn, void *) = nullptr;
    CUresult (*EventCreate)(CUevent *, unsigned int) = nullptr;
    CUresult (*EventDestroy)(CUevent) = nullptr;
    CUresult (*EventRecord)(CUevent, CUstream) = nullptr;
    CUresult (*EventQuery)(CUevent) = nullptr;
    CUresult (*EventSynchronize)(CUevent) = nullptr;
    CUresult (*EventElapsedTime)(float *, CUevent, CUevent) = nullptr;
};

namespace detail {

using GetProcV2 = CUresult (*)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
using GetProcV1 = CUresult (*)(const char *, void **, int, cuuint64_t);

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
    std::string missing;
    auto resolve = [&](const char *name, int version, auto &fn) {
        void *p = nullptr;
        CUresult r;
        if (v2 != nullptr) {
            CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
            r = v2(name, &p, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status);
            if (status != CU_GET_PROC_ADDRESS_SUCCESS) p = nullptr;
        } else {
            r = v1(name, &p, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM);
        }
        if (r != CUDA_SUCCESS || p == nullptr) {
            missing += missing.empty() ? name : std::string(", ") + name;
            return;
        }
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    };
    constexpr int kVersion = 12000;
    resolve("cuInit", kVersion, d.Init);
    resolve("cuGetErrorName", kVersion, d.GetErrorName);
    resolve("cuDriverGetVersion", kVersion, d.DriverGetVersion);
    resolve("cuDeviceGetCount", kVersion, d.DeviceGetCount);
    resolve("cuDeviceGet", kVersion, d.DeviceGet);
    resolve("cuDeviceGetName", kVersion, d.DeviceGetName);
    resolve("cuDeviceGetUuid", kVersion, d.DeviceGetUuid);
    resolve("cuDeviceGetPCIBusId", kVersion, d.DeviceGetPCIBusId);
    resolve("cuDeviceGetAttribute", kVersion, d.DeviceGetAttribute);
    resolve("cuDeviceTotalMem", kVersion, d.DeviceTotalMem);
    resolve("cuDeviceCanAccessPeer", kVersion, d.DeviceCanAccessPeer);
    resolve("cuDevicePrimaryCtxRetain", kVersion, d.DevicePrimaryCtxRetain);
    resolve("cuDevicePrimaryCtxRelease", kVersion, d.DevicePrimaryCtxRelease);
    resolve("cuCtxCreate", kVersion, d.CtxCreate);
    resolve("cuCtxDestroy", kVersion, d.CtxDestroy);
    resolve("cuCtxGetCurrent", kVersion, d.CtxGetCurrent);
    resolve("cuCtxSetCurrent", kVersion, d.CtxSetCurrent);
    resolve("cuCtxPushCurrent", kVersion, d.CtxPushCurrent);
    resolve("cuCtxPopCurrent", kVersion, d.CtxPopCurrent);
    resolve("cuCtxGetDevice", kVersion, d.CtxGetDevice);
    resolve("cuCtxSynchronize", kVersion, d.CtxSynchronize);
    resolve("cuCtxGetStreamPriorityRange", kVersion, d.CtxGetStreamPriorityRange);
    resolve("cuStreamCreate", kVersion, d.StreamCreate);
    resolve("cuStreamCreateWithPriority", kVersion, d.StreamCreateWithPriority);
    resolve("cuStreamDestroy", kVersion, d.StreamDestroy);
    resolve("cuStreamQuery", kVersion, d.StreamQuery);
    resolve("cuStreamSynchronize", kVersion, d.StreamSynchronize);
    resolve("cuStreamGetPriority", kVersion, d.StreamGetPriority);
    resolve("cuStreamGetFlags", kVersion, d.StreamGetFlags);
    resolve("cuStreamGetCtx", kVersion, d.StreamGetCtx);
    resolve("cuStreamWaitEvent", kVersion, d.StreamWaitEvent);
    resolve("cuLaunchHostFunc", kVersion, d.LaunchHostFunc);
    resolve("cuEventCreate", kVersion, d.EventCreate);
    resolve("cuEventDestroy", kVersion, d.EventDestroy);
    resolve("cuEventRecord", kVersion, d.EventRecord);
    resolve("cuEventQuery", kVersion, d.EventQuery);
    resolve("cuEventSynchronize", kVersion, d.EventSynchronize);
    resolve("cuEventElapsedTime", kVersion, d.EventElapsedTime);
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
