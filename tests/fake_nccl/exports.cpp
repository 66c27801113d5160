// The exported names of libcucore_fake_nccl.so: NCCL's entry points (each
// forwards to the fake's table) and the fake_nccl_* controls the Python and
// Rust tests call. The fake works through the CUDA driver already loaded in
// the process (CUCORE_CUDA_DRIVER_PATH, else libcuda.so.1, never loaded here:
// RTLD_NOLOAD), found on each call until found; without one it reads and
// writes memory directly and ignores streams. FAKE_NCCL_VERSION (read at
// load) sets what ncclGetVersion answers (22809).
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "fake_nccl.hpp"

namespace {
namespace n = cucore::driver::nccl;
using GetProcAddress = CUresult (*)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

std::atomic<bool> g_driver_found{false};

// The driver's entry points, through its cuGetProcAddress_v2 (false: no driver loaded yet).
bool find_driver() {
    void *lib = nullptr;
    if (const char *path = std::getenv("CUCORE_CUDA_DRIVER_PATH"); path && *path)
        lib = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    if (!lib) lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!lib) return false;
    auto get = reinterpret_cast<GetProcAddress>(dlsym(lib, "cuGetProcAddress_v2"));
    fake::nccl::Driver d;
    bool complete = get != nullptr;
    auto resolve = [&](auto &field, const char *name) {
        void *pfn = nullptr;
        if (get && get(name, &pfn, 12000, 0, nullptr) == CUDA_SUCCESS && pfn)
            field = reinterpret_cast<std::remove_reference_t<decltype(field)>>(pfn);
        else
            complete = false;
    };
    resolve(d.cuCtxGetCurrent, "cuCtxGetCurrent");
    resolve(d.cuCtxSetCurrent, "cuCtxSetCurrent");
    resolve(d.cuCtxGetDevice, "cuCtxGetDevice");
    resolve(d.cuDeviceGetCount, "cuDeviceGetCount");
    resolve(d.cuStreamIsCapturing, "cuStreamIsCapturing");
    resolve(d.cuMemcpyAsync, "cuMemcpyAsync");
    resolve(d.cuLaunchHostFunc, "cuLaunchHostFunc");
    dlclose(lib);  // RTLD_NOLOAD took a reference; the process still holds its own
    if (!complete) return false;
    fake::nccl::set_driver(d);
    return true;
}

const cucore::driver::NcclTable &fake_table() {
    static const cucore::driver::NcclTable &table = []() -> const cucore::driver::NcclTable & {
        const char *version = std::getenv("FAKE_NCCL_VERSION");
        return fake::nccl::table(fake::nccl::Driver{},
                                 version && *version ? std::atoi(version) : fake::nccl::kDefaultVersion);
    }();
    if (!g_driver_found.load(std::memory_order_acquire)) {
        static std::mutex mutex;
        std::lock_guard<std::mutex> lock(mutex);
        if (!g_driver_found.load(std::memory_order_relaxed) && find_driver())
            g_driver_found.store(true, std::memory_order_release);
    }
    return table;
}
}  // namespace

#define FAKE_NCCL_EXPORT extern "C" __attribute__((visibility("default")))

FAKE_NCCL_EXPORT const char *ncclGetErrorString(n::Result r) { return fake_table().ncclGetErrorString(r); }
FAKE_NCCL_EXPORT const char *ncclGetLastError(n::Comm c) { return fake_table().ncclGetLastError(c); }
namespace cucore::driver {  // the entry-point list names NCCL's types as nccl::...
#define FAKE_NCCL_FORWARD(name, params, args) \
    FAKE_NCCL_EXPORT nccl::Result name params { return ::fake_table().name args; }
CUCORE_NCCL_ENTRY_POINTS(FAKE_NCCL_FORWARD)
#undef FAKE_NCCL_FORWARD
}  // namespace cucore::driver

// Controls. Make every call of `name` fail with `result` (NULL or "" clears);
// fail the n-th counted call from now (0 disables).
FAKE_NCCL_EXPORT void fake_nccl_fail_entry(const char *name, int result) {
    fake_table();
    fake::nccl::fail_entry(name ? name : "", result);
}
FAKE_NCCL_EXPORT void fake_nccl_fail_call(long n, int result) {
    fake_table();
    fake::nccl::fail_call(n, result);
}
// Counted calls since the load or fake_nccl_reset_calls().
FAKE_NCCL_EXPORT long fake_nccl_calls(void) {
    fake_table();
    return fake::nccl::calls();
}
FAKE_NCCL_EXPORT void fake_nccl_reset_calls(void) {
    fake_table();
    fake::nccl::reset_calls();
}
// What ncclGetVersion answers from now on.
FAKE_NCCL_EXPORT void fake_nccl_set_version(int version) {
    fake_table();
    fake::nccl::set_version(version);
}
// Comms made and not destroyed.
FAKE_NCCL_EXPORT int fake_nccl_live_comms(void) {
    fake_table();
    return fake::nccl::live_comms();
}
// Operations posted (or grouped) and not yet matched.
FAKE_NCCL_EXPORT int fake_nccl_pending_operations(void) {
    fake_table();
    return fake::nccl::pending_operations();
}
// Operations computed since the load.
FAKE_NCCL_EXPORT long fake_nccl_completed_operations(void) {
    fake_table();
    return fake::nccl::completed_operations();
}
// Mismatched operations and failed copies since the load; the last one's text into out (cap bytes, NUL-terminated).
FAKE_NCCL_EXPORT long fake_nccl_faults(char *out, size_t cap) {
    fake_table();
    if (out && cap) {
        const std::string text = fake::nccl::last_fault();
        const size_t n = text.size() < cap - 1 ? text.size() : cap - 1;
        std::memcpy(out, text.data(), n);
        out[n] = '\0';
    }
    return fake::nccl::faults();
}
// What ncclCommGetAsyncError answers for `comm` (0: not a live comm).
FAKE_NCCL_EXPORT int fake_nccl_set_async_error(void *comm, int result) {
    fake_table();
    return fake::nccl::set_async_error(static_cast<n::Comm>(comm), result) ? 1 : 0;
}
