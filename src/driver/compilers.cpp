#include "driver/compilers.hpp"

#include <atomic>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <vector>

#include "driver/error.hpp"
#include "driver/library.hpp"

namespace cucore::driver {
namespace {

// Sonames first (ldconfig, LD_LIBRARY_PATH), then the same names in the usual
// toolkit directories: GPU servers often have the toolkit without registering
// it with ldconfig.
std::vector<std::string> candidates(const std::vector<std::string> &names) {
    std::vector<std::string> dirs;
    for (const char *variable : {"CUDA_HOME", "CUDA_PATH"})
        if (const char *root = std::getenv(variable); root && *root) dirs.push_back(std::string(root) + "/lib64");
    dirs.push_back("/usr/local/cuda/lib64");
    dirs.push_back("/usr/local/cuda/nvvm/lib64");
    std::vector<std::string> result = names;
    for (const std::string &dir : dirs)
        for (const std::string &name : names) {
            std::string path = dir + "/" + name;
            bool seen = false;
            for (const std::string &r : result) seen = seen || r == path;
            if (!seen) result.push_back(path);
        }
    return result;
}

// One compiler's state: the real library (loaded once) and the active table,
// which is the fast path (one acquire load) once set.
template <class Table>
struct Slot {
    std::mutex mutex;
    bool tried = false;
    Compiler<Table> real;
    std::string failure;                          // why the real one is unusable
    std::atomic<const Compiler<Table> *> active{nullptr};
    std::deque<Compiler<Table>> substitutes;      // never freed: callers may hold pointers
    bool absent = false;                          // a test marked it not installed
    std::string absent_why;
};

Slot<NvrtcTable> g_nvrtc;
Slot<NvJitLinkTable> g_nvjitlink;
Slot<NvvmTable> g_nvvm;
NvrtcTable g_nvrtc_table;
NvJitLinkTable g_nvjitlink_table;
NvvmTable g_nvvm_table;

// Resolves `field` from the first of `names` present; records the first missing one.
template <class Fn>
void resolve(const LoadedLibrary &lib, Fn &field, std::initializer_list<const char *> names, std::string &missing,
             bool optional = false) {
    for (const char *name : names)
        if (void *symbol = find_symbol(lib, name)) {
            field = reinterpret_cast<Fn>(symbol);
            return;
        }
    if (!optional && missing.empty()) missing = *names.begin();
}

bool load_nvrtc(Compiler<NvrtcTable> &out, std::string &why) {
    LoadedLibrary lib = open_library("CUCORE_NVRTC_PATH", candidates({"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}));
    if (!lib.handle) {
        why = "NVRTC (libnvrtc.so) is not installed: " + lib.failure;
        return false;
    }
    NvrtcTable &t = g_nvrtc_table;
    std::string missing;
#define CUCORE_NVRTC(name) resolve(lib, t.name, {#name}, missing);
    CUCORE_NVRTC(nvrtcGetErrorString) CUCORE_NVRTC(nvrtcVersion) CUCORE_NVRTC(nvrtcCreateProgram)
    CUCORE_NVRTC(nvrtcDestroyProgram) CUCORE_NVRTC(nvrtcCompileProgram) CUCORE_NVRTC(nvrtcGetProgramLogSize)
    CUCORE_NVRTC(nvrtcGetProgramLog) CUCORE_NVRTC(nvrtcGetPTXSize) CUCORE_NVRTC(nvrtcGetPTX)
    CUCORE_NVRTC(nvrtcGetCUBINSize) CUCORE_NVRTC(nvrtcGetCUBIN) CUCORE_NVRTC(nvrtcGetLTOIRSize)
    CUCORE_NVRTC(nvrtcGetLTOIR) CUCORE_NVRTC(nvrtcAddNameExpression) CUCORE_NVRTC(nvrtcGetLoweredName)
#undef CUCORE_NVRTC
    resolve(lib, t.nvrtcGetPCHCreateStatus, {"nvrtcGetPCHCreateStatus"}, missing, true);
    resolve(lib, t.nvrtcGetPCHHeapSizeRequired, {"nvrtcGetPCHHeapSizeRequired"}, missing, true);
    resolve(lib, t.nvrtcSetPCHHeapSize, {"nvrtcSetPCHHeapSize"}, missing, true);
    if (!missing.empty()) {
        why = "NVRTC at " + lib.path + " lacks " + missing + " (CUDA 12.0 or newer is required)";
        return false;
    }
    int major = 0, minor = 0;
    if (t.nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) {
        why = "NVRTC at " + lib.path + " does not report its version";
        return false;
    }
    out.table = &t;
    out.version = major * 1000 + minor * 10;
    return true;
}

bool load_nvjitlink(Compiler<NvJitLinkTable> &out, std::string &why) {
    LoadedLibrary lib = open_library("CUCORE_NVJITLINK_PATH",
                                     candidates({"libnvJitLink.so.13", "libnvJitLink.so.12", "libnvJitLink.so"}));
    if (!lib.handle) {
        why = "nvJitLink (libnvJitLink.so) is not installed: " + lib.failure;
        return false;
    }
    NvJitLinkTable &t = g_nvjitlink_table;
    std::string missing;
    // The header maps each name to a versioned symbol (__nvJitLinkCreate_13_0);
    // the libraries also export the plain names, which are tried first.
#define CUCORE_NVJITLINK(name) resolve(lib, t.name, {#name, "__" #name "_13_0", "__" #name "_12_0"}, missing);
    CUCORE_NVJITLINK(nvJitLinkCreate) CUCORE_NVJITLINK(nvJitLinkDestroy) CUCORE_NVJITLINK(nvJitLinkAddData)
    CUCORE_NVJITLINK(nvJitLinkComplete) CUCORE_NVJITLINK(nvJitLinkGetLinkedCubinSize)
    CUCORE_NVJITLINK(nvJitLinkGetLinkedCubin) CUCORE_NVJITLINK(nvJitLinkGetLinkedPtxSize)
    CUCORE_NVJITLINK(nvJitLinkGetLinkedPtx) CUCORE_NVJITLINK(nvJitLinkGetErrorLogSize)
    CUCORE_NVJITLINK(nvJitLinkGetErrorLog) CUCORE_NVJITLINK(nvJitLinkGetInfoLogSize)
    CUCORE_NVJITLINK(nvJitLinkGetInfoLog)
#undef CUCORE_NVJITLINK
    resolve(lib, t.nvJitLinkVersion, {"nvJitLinkVersion"}, missing, true);
    if (!missing.empty()) {
        why = "nvJitLink at " + lib.path + " lacks " + missing;
        return false;
    }
    unsigned major = 0, minor = 0;
    if (t.nvJitLinkVersion && t.nvJitLinkVersion(&major, &minor) == NVJITLINK_SUCCESS)
        out.version = static_cast<int>(major * 1000 + minor * 10);
    else  // before 12.3 there is no version call: the soname's major is all we know
        out.version = lib.path.find(".so.12") != std::string::npos ? 12000 : 13000;
    out.table = &t;
    return true;
}

bool load_nvvm(Compiler<NvvmTable> &out, std::string &why) {
    LoadedLibrary lib = open_library("CUCORE_NVVM_PATH", candidates({"libnvvm.so.4", "libnvvm.so"}));
    if (!lib.handle) {
        why = "libNVVM (libnvvm.so) is not installed: " + lib.failure;
        return false;
    }
    NvvmTable &t = g_nvvm_table;
    std::string missing;
#define CUCORE_NVVM(name) resolve(lib, t.name, {#name}, missing);
    CUCORE_NVVM(nvvmGetErrorString) CUCORE_NVVM(nvvmVersion) CUCORE_NVVM(nvvmIRVersion)
    CUCORE_NVVM(nvvmCreateProgram) CUCORE_NVVM(nvvmDestroyProgram) CUCORE_NVVM(nvvmAddModuleToProgram)
    CUCORE_NVVM(nvvmCompileProgram) CUCORE_NVVM(nvvmGetCompiledResultSize) CUCORE_NVVM(nvvmGetCompiledResult)
    CUCORE_NVVM(nvvmGetProgramLogSize) CUCORE_NVVM(nvvmGetProgramLog)
#undef CUCORE_NVVM
    if (!missing.empty()) {
        why = "libNVVM at " + lib.path + " lacks " + missing;
        return false;
    }
    int major = 0, minor = 0, debug_major = 0, debug_minor = 0;
    if (t.nvvmIRVersion(&major, &minor, &debug_major, &debug_minor) != NVVM_SUCCESS) {
        why = "libNVVM at " + lib.path + " does not report its IR version";
        return false;
    }
    out.table = &t;
    out.version = major * 1000 + minor * 10;
    return true;
}

template <class Table, class Load>
const Compiler<Table> &get(Slot<Table> &slot, Load load) {
    if (const Compiler<Table> *c = slot.active.load(std::memory_order_acquire)) return *c;
    std::lock_guard<std::mutex> lock(slot.mutex);
    if (const Compiler<Table> *c = slot.active.load(std::memory_order_acquire)) return *c;
    if (slot.absent) throw Error(CUCORE_ERROR_NOT_SUPPORTED, slot.absent_why);
    if (!slot.tried) {
        slot.tried = true;
        if (!load(slot.real, slot.failure)) slot.real.table = nullptr;
    }
    if (!slot.real.table) throw Error(CUCORE_ERROR_NOT_SUPPORTED, slot.failure);
    slot.active.store(&slot.real, std::memory_order_release);
    return slot.real;
}

template <class Table, class Load>
const Table *real(Slot<Table> &slot, Load load) noexcept {
    std::lock_guard<std::mutex> lock(slot.mutex);
    if (!slot.tried) {
        slot.tried = true;
        try {
            if (!load(slot.real, slot.failure)) slot.real.table = nullptr;
        } catch (...) {
            slot.real.table = nullptr;
        }
    }
    return slot.real.table;
}

template <class Table>
void substitute(Slot<Table> &slot, const Table *table, int version) {
    std::lock_guard<std::mutex> lock(slot.mutex);
    slot.absent = false;
    if (!table) {
        slot.active.store(nullptr, std::memory_order_release);
        return;
    }
    slot.substitutes.push_back(Compiler<Table>{table, version});
    slot.active.store(&slot.substitutes.back(), std::memory_order_release);
}

template <class Table>
void absent(Slot<Table> &slot, const std::string &why, const char *fallback) {
    std::lock_guard<std::mutex> lock(slot.mutex);
    slot.absent = true;
    slot.absent_why = why.empty() ? fallback : why;
    slot.active.store(nullptr, std::memory_order_release);
}

}  // namespace

const Compiler<NvrtcTable> &nvrtc() { return get(g_nvrtc, load_nvrtc); }
const Compiler<NvJitLinkTable> &nvjitlink() { return get(g_nvjitlink, load_nvjitlink); }
const Compiler<NvvmTable> &nvvm() { return get(g_nvvm, load_nvvm); }

bool nvjitlink_available() noexcept {
    try {
        return nvjitlink().table != nullptr;
    } catch (...) {
        return false;
    }
}

void install_nvrtc_substitute(const NvrtcTable *table, int version) { substitute(g_nvrtc, table, version); }
void install_nvjitlink_substitute(const NvJitLinkTable *table, int version) { substitute(g_nvjitlink, table, version); }
void install_nvvm_substitute(const NvvmTable *table, int version) { substitute(g_nvvm, table, version); }
void mark_nvrtc_absent(const std::string &why) {
    absent(g_nvrtc, why, "NVRTC (libnvrtc.so) is not installed: marked absent");
}
void mark_nvjitlink_absent(const std::string &why) {
    absent(g_nvjitlink, why, "nvJitLink (libnvJitLink.so) is not installed: marked absent");
}

const NvrtcTable *real_nvrtc() noexcept { return real(g_nvrtc, load_nvrtc); }
const NvJitLinkTable *real_nvjitlink() noexcept { return real(g_nvjitlink, load_nvjitlink); }
const NvvmTable *real_nvvm() noexcept { return real(g_nvvm, load_nvvm); }

}  // namespace cucore::driver
