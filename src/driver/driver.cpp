#include "driver/driver.hpp"

#include <deque>
#include <mutex>
#include <string>

#include "driver/error.hpp"
#include "driver/library.hpp"

namespace cucore::driver {
namespace detail {
std::atomic<const State *> active{nullptr};
}

namespace {

constexpr cuuint64_t kLookupFlags = CU_GET_PROC_ADDRESS_LEGACY_STREAM;

std::mutex g_mutex;
// States are never freed: a thread may still hold a pointer to an old one.
std::deque<State> g_states;
Table g_real_table;
bool g_real_loaded = false;
std::string g_loaded_from;

// Resolves every entry point of the real driver. Returns false with `why` set
// when the driver is unusable. Caller holds g_mutex.
bool load_real(std::string &why) {
    if (g_real_loaded) return true;
    LoadedLibrary lib = open_library("CUCORE_CUDA_DRIVER_PATH", {"libcuda.so.1", "libcuda.so"});
    if (!lib.handle) {
        why = "the CUDA driver (libcuda.so.1) could not be loaded: " + lib.failure;
        return false;
    }
    auto get_proc = reinterpret_cast<PFN_cuGetProcAddress_v12000>(find_symbol(lib, "cuGetProcAddress_v2"));
    if (!get_proc) {
        why = "the CUDA driver at " + lib.path +
              " is too old: it lacks cuGetProcAddress_v2 (a CUDA 12.0 or newer driver is required)";
        return false;
    }
    Table table;
#define CUCORE_DRIVER_RESOLVE(name, version)                                                   \
    {                                                                                          \
        void *fn = nullptr;                                                                    \
        CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;           \
        if (get_proc(#name, &fn, version, kLookupFlags, &found) == CUDA_SUCCESS &&             \
            found == CU_GET_PROC_ADDRESS_SUCCESS)                                              \
            table.name = reinterpret_cast<PFN_##name##_v##version>(fn);                        \
    }
    CUCORE_DRIVER_ENTRY_POINTS(CUCORE_DRIVER_RESOLVE)
#undef CUCORE_DRIVER_RESOLVE
    g_real_table = table;
    g_real_loaded = true;
    g_loaded_from = lib.path;
    return true;
}

const State *publish(const Table *table) {
    State state;
    state.table = table;
    state.init_result = table->cuInit ? table->cuInit(0) : CUDA_ERROR_NOT_INITIALIZED;
    g_states.push_back(state);
    const State *published = &g_states.back();
    detail::active.store(published, std::memory_order_release);
    return published;
}

}  // namespace

const State *detail::load_or_throw() {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (const State *s = active.load(std::memory_order_acquire)) return s;
    std::string why;
    if (!load_real(why)) throw Error(CUCORE_ERROR_NO_DRIVER, why);
    if (!g_real_table.cuInit)
        throw Error(CUCORE_ERROR_NO_DRIVER, "the CUDA driver at " + g_loaded_from + " lacks cuInit");
    // cuInit failures other than "no device" mean the driver is unusable; keep
    // trying on later calls (nothing is published) so the message stays exact.
    CUresult init = g_real_table.cuInit(0);
    if (init != CUDA_SUCCESS && init != CUDA_ERROR_NO_DEVICE) {
        throw Error(CUCORE_ERROR_NO_DRIVER,
                          "cuInit failed for the CUDA driver at " + g_loaded_from + ": " +
                              cuda_error_name(init),
                          init);
    }
    State state;
    state.table = &g_real_table;
    state.init_result = init;
    g_states.push_back(state);
    const State *published = &g_states.back();
    active.store(published, std::memory_order_release);
    return published;
}

void detail::throw_missing(const char *entry_point) {
    throw Error(CUCORE_ERROR_NOT_SUPPORTED,
                      std::string("the CUDA driver lacks the entry point ") + entry_point +
                          " (it may be older than this feature)");
}

void install_substitute(const Table *table) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (table) {
        publish(table);
    } else {
        detail::active.store(nullptr, std::memory_order_release);
    }
}

const Table *real_table() noexcept {
    std::lock_guard<std::mutex> lock(g_mutex);
    std::string why;
    return load_real(why) ? &g_real_table : nullptr;
}

const char *loaded_from() noexcept {
    const State *s = detail::active.load(std::memory_order_acquire);
    return (s && s->table == &g_real_table) ? g_loaded_from.c_str() : "";
}

const Table *peek() noexcept {
    const State *s = detail::active.load(std::memory_order_acquire);
    return s ? s->table : nullptr;
}

}  // namespace cucore::driver
