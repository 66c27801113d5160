#include "driver/nccl.hpp"

#include <atomic>
#include <mutex>

#include "driver/error.hpp"
#include "driver/library.hpp"

namespace cucore::driver {
namespace {

struct Slot {
    std::mutex mutex;
    bool tried = false;
    NcclTable real_table;
    Nccl real;
    std::string failure;  // why the real one is unusable
    Nccl substitute;
    std::atomic<const Nccl *> active{nullptr};
    bool absent = false;  // a test marked it not installed
    std::string absent_why;
};
Slot g_slot;

template <class Fn>
void resolve(const LoadedLibrary &lib, Fn &field, const char *name) {
    field = reinterpret_cast<Fn>(find_symbol(lib, name));
}

// Loads the real NCCL into g_slot (under its mutex).
void load() {
    LoadedLibrary lib = open_library("CUCORE_NCCL_PATH", {"libnccl.so.2", "libnccl.so"});
    if (!lib.handle) {
        g_slot.failure = "libnccl.so.2 could not be loaded (set CUCORE_NCCL_PATH to its path): " + lib.failure;
        return;
    }
    NcclTable &t = g_slot.real_table;
    resolve(lib, t.ncclGetErrorString, "ncclGetErrorString");
    resolve(lib, t.ncclGetLastError, "ncclGetLastError");
    std::string missing;
#define CUCORE_NCCL_RESOLVE(name, params, args) \
    resolve(lib, t.name, #name);                \
    if (!t.name) missing += (missing.empty() ? "" : ", ") + std::string(#name);
    CUCORE_NCCL_ENTRY_POINTS(CUCORE_NCCL_RESOLVE)
#undef CUCORE_NCCL_RESOLVE
    if (!t.ncclGetErrorString) missing += (missing.empty() ? "" : ", ") + std::string("ncclGetErrorString");
    if (!missing.empty()) {
        g_slot.failure = "NCCL at " + lib.path + " lacks " + missing + " (libcucore needs NCCL 2.7 or later)";
        return;
    }
    int version = 0;
    if (const nccl::Result r = t.ncclGetVersion(&version); r != nccl::kSuccess) {
        g_slot.failure = "ncclGetVersion (NCCL at " + lib.path + ") failed: " + nccl_error_name(r);
        return;
    }
    g_slot.real.table = &t;
    g_slot.real.version = version;
}

const char *known_name(nccl::Result result) noexcept {
    switch (result) {
        case nccl::kSuccess: return "ncclSuccess";
        case nccl::kUnhandledCudaError: return "ncclUnhandledCudaError";
        case nccl::kSystemError: return "ncclSystemError";
        case nccl::kInternalError: return "ncclInternalError";
        case nccl::kInvalidArgument: return "ncclInvalidArgument";
        case nccl::kInvalidUsage: return "ncclInvalidUsage";
        case nccl::kRemoteError: return "ncclRemoteError";
        case nccl::kInProgress: return "ncclInProgress";
        default: return nullptr;
    }
}

}  // namespace

const Nccl &nccl_api() {
    if (const Nccl *n = g_slot.active.load(std::memory_order_acquire)) return *n;
    std::lock_guard<std::mutex> lock(g_slot.mutex);
    if (const Nccl *n = g_slot.active.load(std::memory_order_acquire)) return *n;
    if (g_slot.absent) throw Error(CUCORE_ERROR_NOT_SUPPORTED, g_slot.absent_why);
    if (!g_slot.tried) {
        g_slot.tried = true;
        load();
    }
    if (!g_slot.real.table) throw Error(CUCORE_ERROR_NOT_SUPPORTED, g_slot.failure);
    g_slot.active.store(&g_slot.real, std::memory_order_release);
    return g_slot.real;
}

cucore_status_t nccl_status(nccl::Result result) noexcept {
    switch (result) {
        case nccl::kSuccess: return CUCORE_SUCCESS;
        case nccl::kInvalidArgument: return CUCORE_ERROR_INVALID_ARGUMENT;
        case nccl::kInvalidUsage: return CUCORE_ERROR_INVALID_STATE;
        default: return CUCORE_ERROR_CUDA;
    }
}

std::string nccl_error_name(nccl::Result result) {
    const char *name = known_name(result);
    return name ? name : "NCCL error " + std::to_string(result);
}

void throw_nccl(nccl::Result result, const char *function, nccl::Comm comm) {
    std::string message = std::string(function) + " failed: " + nccl_error_name(result);
    if (const Nccl *n = g_slot.active.load(std::memory_order_acquire); n && n->table) {
        if (n->table->ncclGetErrorString)
            if (const char *text = n->table->ncclGetErrorString(result)) message += std::string(" (") + text + ")";
        // NCCL keeps its last error text per thread (comm may be null); empty when it has none.
        if (n->table->ncclGetLastError)
            if (const char *last = n->table->ncclGetLastError(comm); last && *last) message += std::string(": ") + last;
    }
    throw Error(nccl_status(result), message);
}

void install_nccl_substitute(const NcclTable *table, int version) {
    std::lock_guard<std::mutex> lock(g_slot.mutex);
    g_slot.absent = false;
    if (!table) {
        g_slot.active.store(nullptr, std::memory_order_release);  // the real one on next use
        return;
    }
    g_slot.substitute.table = table;
    g_slot.substitute.version = version;
    g_slot.active.store(&g_slot.substitute, std::memory_order_release);
}

void mark_nccl_absent(const std::string &why) {
    std::lock_guard<std::mutex> lock(g_slot.mutex);
    g_slot.absent = true;
    g_slot.absent_why = why.empty() ? "libnccl.so.2 could not be loaded: marked absent" : why;
    g_slot.active.store(nullptr, std::memory_order_release);
}

}  // namespace cucore::driver
