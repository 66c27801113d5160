#include "driver/nvml.hpp"

#include <atomic>
#include <mutex>

#include "driver/error.hpp"
#include "driver/library.hpp"

namespace cucore::driver {
namespace {

struct Slot {
    std::mutex mutex;
    bool tried = false;
    NvmlTable real;
    bool real_ok = false;
    cucore_status_t failure_status = CUCORE_ERROR_NOT_SUPPORTED;
    std::string failure;                        // why the real one is unusable
    nvml::Return init_result = nvml::kErrorLibraryNotFound;  // what a caller is told NVML answered
    std::atomic<const NvmlTable *> active{nullptr};
    bool absent = false;                        // a test marked it not installed
    std::string absent_why;
};
Slot g_slot;
thread_local int t_last_nvml_result = 0;

template <class Fn>
void resolve(const LoadedLibrary &lib, Fn &field, const char *name) {
    field = reinterpret_cast<Fn>(find_symbol(lib, name));
}

// Loads and initialises the real NVML into g_slot (under its mutex).
void load() {
    LoadedLibrary lib = open_library("CUCORE_NVML_PATH", {"libnvidia-ml.so.1", "libnvidia-ml.so"});
    if (!lib.handle) {
        g_slot.failure = "libnvidia-ml.so.1 could not be loaded: " + lib.failure;
        return;
    }
    NvmlTable &t = g_slot.real;
    resolve(lib, t.nvmlErrorString, "nvmlErrorString");
#define CUCORE_NVML_RESOLVE(name, params, args) resolve(lib, t.name, #name);
    CUCORE_NVML_ENTRY_POINTS(CUCORE_NVML_RESOLVE)
#undef CUCORE_NVML_RESOLVE
    if (!t.nvmlInit_v2) {
        g_slot.failure = "NVML at " + lib.path + " lacks nvmlInit_v2";
        g_slot.init_result = nvml::kErrorFunctionNotFound;
        return;
    }
    // NVML counts initialisations; libcucore's one lasts for the process (NVML
    // handles it gave out stay valid), so there is no matching nvmlShutdown.
    const nvml::Return init = t.nvmlInit_v2();
    if (init != nvml::kSuccess) {
        g_slot.failure_status = static_cast<cucore_status_t>(nvml_status(init));
        g_slot.init_result = init;
        g_slot.failure = "nvmlInit_v2 (NVML at " + lib.path + ") failed: " + nvml_error_name(init) +
                         (t.nvmlErrorString ? std::string(" (") + t.nvmlErrorString(init) + ")" : std::string());
        return;
    }
    g_slot.real_ok = true;
}

const char *known_name(nvml::Return result) noexcept {
    switch (result) {
        case 0: return "NVML_SUCCESS";
        case 1: return "NVML_ERROR_UNINITIALIZED";
        case 2: return "NVML_ERROR_INVALID_ARGUMENT";
        case 3: return "NVML_ERROR_NOT_SUPPORTED";
        case 4: return "NVML_ERROR_NO_PERMISSION";
        case 5: return "NVML_ERROR_ALREADY_INITIALIZED";
        case 6: return "NVML_ERROR_NOT_FOUND";
        case 7: return "NVML_ERROR_INSUFFICIENT_SIZE";
        case 8: return "NVML_ERROR_INSUFFICIENT_POWER";
        case 9: return "NVML_ERROR_DRIVER_NOT_LOADED";
        case 10: return "NVML_ERROR_TIMEOUT";
        case 11: return "NVML_ERROR_IRQ_ISSUE";
        case 12: return "NVML_ERROR_LIBRARY_NOT_FOUND";
        case 13: return "NVML_ERROR_FUNCTION_NOT_FOUND";
        case 14: return "NVML_ERROR_CORRUPTED_INFOROM";
        case 15: return "NVML_ERROR_GPU_IS_LOST";
        case 16: return "NVML_ERROR_RESET_REQUIRED";
        case 17: return "NVML_ERROR_OPERATING_SYSTEM";
        case 18: return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
        case 19: return "NVML_ERROR_IN_USE";
        case 20: return "NVML_ERROR_MEMORY";
        case 21: return "NVML_ERROR_NO_DATA";
        case 22: return "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED";
        case 23: return "NVML_ERROR_INSUFFICIENT_RESOURCES";
        case 24: return "NVML_ERROR_FREQ_NOT_SUPPORTED";
        case 25: return "NVML_ERROR_ARGUMENT_VERSION_MISMATCH";
        case 26: return "NVML_ERROR_DEPRECATED";
        case 27: return "NVML_ERROR_NOT_READY";
        case 28: return "NVML_ERROR_GPU_NOT_FOUND";
        case 29: return "NVML_ERROR_INVALID_STATE";
        case 30: return "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED";
        case 999: return "NVML_ERROR_UNKNOWN";
        default: return nullptr;
    }
}

}  // namespace

const NvmlTable &nvml_api() {
    if (const NvmlTable *t = g_slot.active.load(std::memory_order_acquire)) return *t;
    std::lock_guard<std::mutex> lock(g_slot.mutex);
    if (const NvmlTable *t = g_slot.active.load(std::memory_order_acquire)) return *t;
    if (g_slot.absent) {
        t_last_nvml_result = nvml::kErrorLibraryNotFound;
        throw Error(CUCORE_ERROR_NOT_SUPPORTED, g_slot.absent_why);
    }
    if (!g_slot.tried) {
        g_slot.tried = true;
        load();
    }
    if (!g_slot.real_ok) {
        t_last_nvml_result = g_slot.init_result;
        throw Error(g_slot.failure_status, g_slot.failure);
    }
    g_slot.active.store(&g_slot.real, std::memory_order_release);
    return g_slot.real;
}

int nvml_status(nvml::Return result) noexcept {
    switch (result) {
        case nvml::kSuccess: return CUCORE_SUCCESS;
        case nvml::kErrorInvalidArgument:
        case nvml::kErrorNotFound:
        case nvml::kErrorGpuNotFound: return CUCORE_ERROR_INVALID_ARGUMENT;
        case nvml::kErrorNotSupported:
        case nvml::kErrorNoPermission:
        case nvml::kErrorLibraryNotFound:
        case nvml::kErrorFunctionNotFound: return CUCORE_ERROR_NOT_SUPPORTED;
        case nvml::kErrorDriverNotLoaded: return CUCORE_ERROR_NO_DRIVER;
        case nvml::kErrorMemory: return CUCORE_ERROR_OUT_OF_MEMORY;
        case nvml::kErrorNotReady:
        case nvml::kErrorTimeout: return CUCORE_ERROR_NOT_READY;
        default: return CUCORE_ERROR_CUDA;
    }
}

std::string nvml_error_name(nvml::Return result) {
    const char *name = known_name(result);
    return name ? name : "NVML error " + std::to_string(result);
}

int last_nvml_result() noexcept { return t_last_nvml_result; }
void reset_last_nvml_result() noexcept { t_last_nvml_result = 0; }

void throw_nvml(nvml::Return result, const char *function) { throw_nvml(result, function, std::string()); }

void throw_nvml(nvml::Return result, const char *function, const std::string &detail) {
    t_last_nvml_result = result;
    std::string message = std::string(function) + " failed: " + nvml_error_name(result);
    const NvmlTable *t = g_slot.active.load(std::memory_order_acquire);
    if (t && t->nvmlErrorString)
        if (const char *text = t->nvmlErrorString(result)) message += std::string(" (") + text + ")";
    if (!detail.empty()) message = detail + " (" + message + ")";
    throw Error(static_cast<cucore_status_t>(nvml_status(result)), message);
}

void throw_nvml_missing(const char *entry_point) {
    t_last_nvml_result = nvml::kErrorFunctionNotFound;
    throw Error(CUCORE_ERROR_NOT_SUPPORTED,
                std::string("the installed NVML (libnvidia-ml.so.1) lacks ") + entry_point + " (a newer driver has it)");
}

void install_nvml_substitute(const NvmlTable *table) {
    std::lock_guard<std::mutex> lock(g_slot.mutex);
    g_slot.absent = false;
    g_slot.active.store(table, std::memory_order_release);  // nullptr: the real one on next use
}

void mark_nvml_absent(const std::string &why) {
    std::lock_guard<std::mutex> lock(g_slot.mutex);
    g_slot.absent = true;
    g_slot.absent_why = why.empty() ? "libnvidia-ml.so.1 could not be loaded: marked absent" : why;
    g_slot.active.store(nullptr, std::memory_order_release);
}

}  // namespace cucore::driver
