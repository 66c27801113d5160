#include "fake_driver.hpp"

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>

namespace fake {
namespace {

struct FakeContext {
    int device;
    bool primary;
};
struct FakeStream {
    CUcontext context;
    unsigned flags;
    int priority;
};
struct FakeEvent {
    CUcontext context;
    unsigned flags;
    bool recorded = false;
};

std::recursive_mutex g_mutex;
int g_devices = 2;
cucore::driver::Table g_table;
std::atomic<long> g_calls{0};
std::atomic<long> g_fail_at{0};
CUresult g_fail_result = CUDA_ERROR_UNKNOWN;
std::string g_fail_entry;
CUresult g_fail_entry_result = CUDA_ERROR_UNKNOWN;
std::vector<std::string> g_log;
std::vector<std::unique_ptr<FakeContext>> g_primary;  // one per device
std::vector<int> g_primary_refs;
std::vector<std::unique_ptr<FakeContext>> g_foreign;  // kept for the process: wrappers may outlive a test
std::set<FakeContext *> g_contexts;  // every live context (primary and foreign)
std::set<FakeStream *> g_streams;
std::set<FakeEvent *> g_events;
// Memory: fake device memory is host memory, so copies and fills really happen.
struct FakePool {
    int device;
    bool is_default;
    uint64_t release_threshold = 0;
    int reuse[3] = {1, 1, 1};
    uint64_t used = 0, used_high = 0;
};
std::vector<std::unique_ptr<FakePool>> g_default_pools;  // one per device, never destroyed
std::vector<std::unique_ptr<FakePool>> g_pool_storage;    // created pools, kept for the process
std::set<FakePool *> g_pools;                             // created pools alive
std::set<FakePool *> g_all_pools;                         // every pool the fake knows
std::map<CUdeviceptr, size_t> g_allocations;             // live allocations (pool and pinned)
std::map<CUdeviceptr, FakePool *> g_allocation_pool;     // the pool of each pool allocation
thread_local CUcontext t_current = nullptr;
thread_local int t_uncounted = 0;

// Every fake entry point starts here: counts the call and injects failures.
CUresult enter(const char *name) {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    if (t_uncounted) return CUDA_SUCCESS;
    long n = ++g_calls;
    g_log.emplace_back(name);
    if (g_fail_at != 0 && n == g_fail_at) return g_fail_result;
    if (!g_fail_entry.empty() && g_fail_entry == name) return g_fail_entry_result;
    return CUDA_SUCCESS;
}
#define ENTER(name)                                  \
    if (CUresult injected = enter(name); injected) \
        return injected;                             \
    std::lock_guard<std::recursive_mutex> lock(g_mutex)

FakeContext *as_context(CUcontext c) {
    auto *context = reinterpret_cast<FakeContext *>(c);
    return g_contexts.count(context) ? context : nullptr;
}
FakeStream *as_stream(CUstream s) {
    auto *stream = reinterpret_cast<FakeStream *>(s);
    return g_streams.count(stream) ? stream : nullptr;
}
FakeEvent *as_event(CUevent e) {
    auto *event = reinterpret_cast<FakeEvent *>(e);
    return g_events.count(event) ? event : nullptr;
}
bool is_builtin(CUstream s) { return s == nullptr || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD; }

CUresult f_cuGetErrorName(CUresult error, const char **name) {
    switch (error) {
        case CUDA_ERROR_OUT_OF_MEMORY: *name = "CUDA_ERROR_OUT_OF_MEMORY"; return CUDA_SUCCESS;
        case CUDA_ERROR_UNKNOWN: *name = "CUDA_ERROR_UNKNOWN"; return CUDA_SUCCESS;
        case CUDA_ERROR_INVALID_VALUE: *name = "CUDA_ERROR_INVALID_VALUE"; return CUDA_SUCCESS;
        case CUDA_ERROR_INVALID_CONTEXT: *name = "CUDA_ERROR_INVALID_CONTEXT"; return CUDA_SUCCESS;
        case CUDA_ERROR_INVALID_HANDLE: *name = "CUDA_ERROR_INVALID_HANDLE"; return CUDA_SUCCESS;
        case CUDA_ERROR_NOT_READY: *name = "CUDA_ERROR_NOT_READY"; return CUDA_SUCCESS;
        default: return CUDA_ERROR_INVALID_VALUE;
    }
}
CUresult f_cuGetErrorString(CUresult, const char **text) {
    *text = "fake driver error";
    return CUDA_SUCCESS;
}
CUresult f_cuInit(unsigned) { return CUDA_SUCCESS; }
CUresult f_cuDriverGetVersion(int *version) { ENTER("cuDriverGetVersion"); *version = 13000; return CUDA_SUCCESS; }
CUresult f_cuDeviceGet(CUdevice *device, int ordinal) {
    ENTER("cuDeviceGet");
    if (ordinal < 0 || ordinal >= g_devices) return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}
CUresult f_cuDeviceGetCount(int *count) { ENTER("cuDeviceGetCount"); *count = g_devices; return CUDA_SUCCESS; }
CUresult f_cuDeviceGetName(char *name, int length, CUdevice device) {
    ENTER("cuDeviceGetName");
    std::snprintf(name, length, "Fake GPU %d", device);
    return CUDA_SUCCESS;
}
CUresult f_cuDeviceGetUuid(CUuuid *uuid, CUdevice device) {
    ENTER("cuDeviceGetUuid");
    for (int i = 0; i < 16; ++i) uuid->bytes[i] = static_cast<char>(device * 16 + i);
    return CUDA_SUCCESS;
}
CUresult f_cuDeviceGetPCIBusId(char *bus, int length, CUdevice device) {
    ENTER("cuDeviceGetPCIBusId");
    std::snprintf(bus, length, "0000:%02x:00.0", device + 1);
    return CUDA_SUCCESS;
}
CUresult f_cuDeviceTotalMem(size_t *bytes, CUdevice device) {
    ENTER("cuDeviceTotalMem");
    *bytes = (size_t{80} << 30) + static_cast<size_t>(device);
    return CUDA_SUCCESS;
}
CUresult f_cuDeviceGetAttribute(int *value, CUdevice_attribute attribute, CUdevice device) {
    ENTER("cuDeviceGetAttribute");
    if (attribute <= 0 || attribute >= CU_DEVICE_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
    // A value that encodes both inputs, so tests can check what was asked.
    *value = static_cast<int>(attribute) * 10 + device;
    return CUDA_SUCCESS;
}
CUresult f_cuDeviceCanAccessPeer(int *can, CUdevice device, CUdevice peer) {
    ENTER("cuDeviceCanAccessPeer");
    *can = device != peer;
    return CUDA_SUCCESS;
}
CUresult f_cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
    ENTER("cuDevicePrimaryCtxRetain");
    ++g_primary_refs.at(device);
    *context = reinterpret_cast<CUcontext>(g_primary.at(device).get());
    return CUDA_SUCCESS;
}
CUresult f_cuDevicePrimaryCtxRelease(CUdevice device) {
    ENTER("cuDevicePrimaryCtxRelease");
    if (g_primary_refs.at(device) <= 0) return CUDA_ERROR_INVALID_CONTEXT;
    --g_primary_refs.at(device);
    return CUDA_SUCCESS;
}
CUresult f_cuCtxGetCurrent(CUcontext *context) { ENTER("cuCtxGetCurrent"); *context = t_current; return CUDA_SUCCESS; }
CUresult f_cuCtxSetCurrent(CUcontext context) {
    ENTER("cuCtxSetCurrent");
    if (context && !as_context(context)) return CUDA_ERROR_INVALID_CONTEXT;
    t_current = context;
    return CUDA_SUCCESS;
}
CUresult f_cuCtxGetDevice(CUdevice *device) {
    ENTER("cuCtxGetDevice");
    FakeContext *context = as_context(t_current);
    if (!context) return CUDA_ERROR_INVALID_CONTEXT;
    *device = context->device;
    return CUDA_SUCCESS;
}
CUresult f_cuCtxSynchronize() { ENTER("cuCtxSynchronize"); return t_current ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT; }
CUresult f_cuCtxGetStreamPriorityRange(int *least, int *greatest) {
    ENTER("cuCtxGetStreamPriorityRange");
    *least = 0;
    *greatest = -5;
    return CUDA_SUCCESS;
}
CUresult f_cuStreamCreateWithPriority(CUstream *stream, unsigned flags, int priority) {
    ENTER("cuStreamCreateWithPriority");
    if (!as_context(t_current)) return CUDA_ERROR_INVALID_CONTEXT;
    auto *s = new FakeStream{t_current, flags, priority < -5 ? -5 : (priority > 0 ? 0 : priority)};
    g_streams.insert(s);
    *stream = reinterpret_cast<CUstream>(s);
    return CUDA_SUCCESS;
}
CUresult f_cuStreamDestroy(CUstream stream) {
    ENTER("cuStreamDestroy");
    FakeStream *s = as_stream(stream);
    if (!s) return CUDA_ERROR_INVALID_HANDLE;
    g_streams.erase(s);
    delete s;
    return CUDA_SUCCESS;
}
CUresult f_cuStreamSynchronize(CUstream stream) {
    ENTER("cuStreamSynchronize");
    return (is_builtin(stream) || as_stream(stream)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
CUresult f_cuStreamQuery(CUstream stream) {
    ENTER("cuStreamQuery");
    return (is_builtin(stream) || as_stream(stream)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
CUresult f_cuStreamWaitEvent(CUstream stream, CUevent event, unsigned) {
    ENTER("cuStreamWaitEvent");
    if (!(is_builtin(stream) || as_stream(stream)) || !as_event(event)) return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_SUCCESS;
}
CUresult f_cuStreamGetCtx(CUstream stream, CUcontext *context) {
    ENTER("cuStreamGetCtx");
    if (is_builtin(stream)) { *context = t_current; return t_current ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT; }
    FakeStream *s = as_stream(stream);
    if (!s) return CUDA_ERROR_INVALID_HANDLE;
    *context = s->context;
    return CUDA_SUCCESS;
}
CUresult f_cuStreamGetPriority(CUstream stream, int *priority) {
    ENTER("cuStreamGetPriority");
    FakeStream *s = as_stream(stream);
    *priority = s ? s->priority : 0;
    return (s || is_builtin(stream)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
CUresult f_cuStreamGetFlags(CUstream stream, unsigned *flags) {
    ENTER("cuStreamGetFlags");
    FakeStream *s = as_stream(stream);
    *flags = s ? s->flags : static_cast<unsigned>(CU_STREAM_DEFAULT);
    return (s || is_builtin(stream)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
CUresult f_cuLaunchHostFunc(CUstream stream, CUhostFn fn, void *data) {
    {
        ENTER("cuLaunchHostFunc");
        if (!(is_builtin(stream) || as_stream(stream))) return CUDA_ERROR_INVALID_HANDLE;
    }
    fn(data);  // the fake runs host work at once, outside the lock
    return CUDA_SUCCESS;
}
CUresult f_cuEventCreate(CUevent *event, unsigned flags) {
    ENTER("cuEventCreate");
    if (!as_context(t_current)) return CUDA_ERROR_INVALID_CONTEXT;
    auto *e = new FakeEvent{t_current, flags};
    g_events.insert(e);
    *event = reinterpret_cast<CUevent>(e);
    return CUDA_SUCCESS;
}
CUresult f_cuEventDestroy(CUevent event) {
    ENTER("cuEventDestroy");
    FakeEvent *e = as_event(event);
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    g_events.erase(e);
    delete e;
    return CUDA_SUCCESS;
}
CUresult f_cuEventRecord(CUevent event, CUstream stream) {
    ENTER("cuEventRecord");
    FakeEvent *e = as_event(event);
    if (!e || !(is_builtin(stream) || as_stream(stream))) return CUDA_ERROR_INVALID_HANDLE;
    e->recorded = true;
    return CUDA_SUCCESS;
}
CUresult f_cuEventSynchronize(CUevent event) { ENTER("cuEventSynchronize"); return as_event(event) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
CUresult f_cuEventQuery(CUevent event) { ENTER("cuEventQuery"); return as_event(event) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
CUresult f_cuEventElapsedTime(float *ms, CUevent start, CUevent end) {
    ENTER("cuEventElapsedTime");
    FakeEvent *a = as_event(start);
    FakeEvent *b = as_event(end);
    if (!a || !b) return CUDA_ERROR_INVALID_HANDLE;
    if ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING) return CUDA_ERROR_INVALID_HANDLE;
    if (!a->recorded || !b->recorded) return CUDA_ERROR_INVALID_HANDLE;
    *ms = 1.5f;
    return CUDA_SUCCESS;
}

CUresult f_cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice device) {
    ENTER("cuDeviceGetMemPool");
    if (device < 0 || device >= static_cast<int>(g_default_pools.size())) return CUDA_ERROR_INVALID_DEVICE;
    *pool = reinterpret_cast<CUmemoryPool>(g_default_pools[device].get());
    return CUDA_SUCCESS;
}
CUresult f_cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props) {
    ENTER("cuMemPoolCreate");
    if (!props || props->location.type != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
    g_pool_storage.push_back(std::make_unique<FakePool>());
    g_pool_storage.back()->device = props->location.id;
    FakePool *created = g_pool_storage.back().get();
    g_pools.insert(created);
    g_all_pools.insert(created);
    *pool = reinterpret_cast<CUmemoryPool>(created);
    return CUDA_SUCCESS;
}
CUresult f_cuMemPoolDestroy(CUmemoryPool pool) {
    ENTER("cuMemPoolDestroy");
    auto *fake_pool = reinterpret_cast<FakePool *>(pool);
    if (!g_pools.erase(fake_pool)) return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;  // the record stays in g_all_pools: late frees may still name it
}
CUresult f_cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attribute, void *value) {
    ENTER("cuMemPoolSetAttribute");
    auto *p = reinterpret_cast<FakePool *>(pool);
    if (!g_all_pools.count(p) || !value) return CUDA_ERROR_INVALID_VALUE;
    switch (attribute) {
        case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: p->reuse[attribute - 1] = *static_cast<int *>(value); break;
        case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: p->release_threshold = *static_cast<cuuint64_t *>(value); break;
        case CU_MEMPOOL_ATTR_USED_MEM_HIGH: p->used_high = 0; break;
        case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: break;
        default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}
CUresult f_cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attribute, void *value) {
    ENTER("cuMemPoolGetAttribute");
    auto *p = reinterpret_cast<FakePool *>(pool);
    if (!g_all_pools.count(p) || !value) return CUDA_ERROR_INVALID_VALUE;
    switch (attribute) {
        case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: *static_cast<int *>(value) = p->reuse[attribute - 1]; break;
        case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: *static_cast<cuuint64_t *>(value) = p->release_threshold; break;
        case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
        case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: *static_cast<cuuint64_t *>(value) = p->used; break;
        case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
        case CU_MEMPOOL_ATTR_USED_MEM_HIGH: *static_cast<cuuint64_t *>(value) = p->used_high; break;
        default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}
CUresult f_cuMemPoolTrimTo(CUmemoryPool pool, size_t) {
    ENTER("cuMemPoolTrimTo");
    return g_all_pools.count(reinterpret_cast<FakePool *>(pool)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult f_cuMemAllocFromPoolAsync(CUdeviceptr *address, size_t size, CUmemoryPool pool, CUstream stream) {
    ENTER("cuMemAllocFromPoolAsync");
    if (!g_all_pools.count(reinterpret_cast<FakePool *>(pool))) return CUDA_ERROR_INVALID_VALUE;
    if (!(is_builtin(stream) || as_stream(stream))) return CUDA_ERROR_INVALID_HANDLE;
    void *memory = std::malloc(size);
    if (!memory) return CUDA_ERROR_OUT_OF_MEMORY;
    *address = reinterpret_cast<CUdeviceptr>(memory);
    g_allocations[*address] = size;
    auto *p = reinterpret_cast<FakePool *>(pool);
    g_allocation_pool[*address] = p;
    p->used += size;
    if (p->used > p->used_high) p->used_high = p->used;
    return CUDA_SUCCESS;
}
CUresult f_cuMemFreeAsync(CUdeviceptr address, CUstream stream) {
    ENTER("cuMemFreeAsync");
    if (!(is_builtin(stream) || as_stream(stream))) return CUDA_ERROR_INVALID_HANDLE;
    auto found = g_allocations.find(address);
    if (found == g_allocations.end()) return CUDA_ERROR_INVALID_VALUE;
    if (auto pool = g_allocation_pool.find(address); pool != g_allocation_pool.end()) {
        pool->second->used -= found->second;
        g_allocation_pool.erase(pool);
    }
    g_allocations.erase(found);
    std::free(reinterpret_cast<void *>(address));
    return CUDA_SUCCESS;
}
CUresult f_cuMemAllocHost(void **pointer, size_t size) {
    ENTER("cuMemAllocHost");
    if (!as_context(t_current)) return CUDA_ERROR_INVALID_CONTEXT;
    *pointer = std::malloc(size);
    if (!*pointer) return CUDA_ERROR_OUT_OF_MEMORY;
    g_allocations[reinterpret_cast<CUdeviceptr>(*pointer)] = size;
    return CUDA_SUCCESS;
}
CUresult f_cuMemFreeHost(void *pointer) {
    ENTER("cuMemFreeHost");
    if (!g_allocations.erase(reinterpret_cast<CUdeviceptr>(pointer))) return CUDA_ERROR_INVALID_VALUE;
    std::free(pointer);
    return CUDA_SUCCESS;
}
CUresult f_cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t size, CUstream stream) {
    ENTER("cuMemcpyAsync");
    if (!(is_builtin(stream) || as_stream(stream))) return CUDA_ERROR_INVALID_HANDLE;
    std::memmove(reinterpret_cast<void *>(dst), reinterpret_cast<const void *>(src), size);
    return CUDA_SUCCESS;
}
template <class T>
CUresult fake_memset(CUdeviceptr address, T value, size_t count, CUstream stream) {
    if (!(is_builtin(stream) || as_stream(stream))) return CUDA_ERROR_INVALID_HANDLE;
    T *data = reinterpret_cast<T *>(address);
    for (size_t i = 0; i < count; ++i) data[i] = value;
    return CUDA_SUCCESS;
}
CUresult f_cuMemsetD8Async(CUdeviceptr a, unsigned char v, size_t n, CUstream s) {
    ENTER("cuMemsetD8Async");
    return fake_memset(a, v, n, s);
}
CUresult f_cuMemsetD16Async(CUdeviceptr a, unsigned short v, size_t n, CUstream s) {
    ENTER("cuMemsetD16Async");
    return fake_memset(a, v, n, s);
}
CUresult f_cuMemsetD32Async(CUdeviceptr a, unsigned int v, size_t n, CUstream s) {
    ENTER("cuMemsetD32Async");
    return fake_memset(a, v, n, s);
}

void build_table() {
    g_table = cucore::driver::Table{};
#define CUCORE_FAKE_ENTRY(name, version) g_table.name = &f_##name;
    CUCORE_DRIVER_ENTRY_POINTS(CUCORE_FAKE_ENTRY)
#undef CUCORE_FAKE_ENTRY
}

}  // namespace

void install(int devices) {
    {
        std::lock_guard<std::recursive_mutex> lock(g_mutex);
        g_devices = devices;
        g_calls = 0;
        g_fail_at = 0;
        g_fail_entry.clear();
        g_log.clear();
        // Contexts are kept across installs: library objects from an earlier
        // test (devices pin their primary context) may still refer to them.
        while (static_cast<int>(g_primary.size()) < devices) {
            g_primary.push_back(std::make_unique<FakeContext>(FakeContext{static_cast<int>(g_primary.size()), true}));
            g_contexts.insert(g_primary.back().get());
            g_primary_refs.push_back(0);
        }
        while (static_cast<int>(g_default_pools.size()) < devices) {
            g_default_pools.push_back(std::make_unique<FakePool>());
            g_default_pools.back()->device = static_cast<int>(g_default_pools.size()) - 1;
            g_default_pools.back()->is_default = true;
            g_all_pools.insert(g_default_pools.back().get());
        }
        for (auto &[address, size] : g_allocations) std::free(reinterpret_cast<void *>(address));
        g_allocations.clear();
        g_allocation_pool.clear();
        for (auto &pool : g_default_pools) pool->used = pool->used_high = 0;
        for (FakeStream *stream : g_streams) delete stream;
        g_streams.clear();
        for (FakeEvent *event : g_events) delete event;
        g_events.clear();
        t_current = nullptr;
        build_table();
    }
    cucore::driver::install_substitute(&g_table);
}

void uninstall() { cucore::driver::install_substitute(nullptr); }

void fail_call(long n, CUresult result) {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    g_fail_at = n == 0 ? 0 : g_calls + n;
    g_fail_result = result;
}

void fail_entry(const std::string &name, CUresult result) {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    g_fail_entry = name;
    g_fail_entry_result = result;
}

Uncounted::Uncounted() { ++t_uncounted; }
Uncounted::~Uncounted() { --t_uncounted; }

long calls() { return g_calls; }
void reset_calls() {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    g_calls = 0;
    g_log.clear();
}
std::vector<std::string> call_log() {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    return g_log;
}

void forget_allocations() {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    for (auto &[address, size] : g_allocations) std::free(reinterpret_cast<void *>(address));
    g_allocations.clear();
    g_allocation_pool.clear();
}

Counters counters() {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    Counters c;
    for (int refs : g_primary_refs) c.primary_retained += refs;
    c.streams = static_cast<int>(g_streams.size());
    c.events = static_cast<int>(g_events.size());
    c.pools = static_cast<int>(g_pools.size());
    c.allocations = static_cast<int>(g_allocations.size());
    return c;
}

cucore::driver::Table &table() { return g_table; }
void reinstall() { cucore::driver::install_substitute(&g_table); }

CUcontext make_foreign_context(int device) {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    g_foreign.push_back(std::make_unique<FakeContext>(FakeContext{device, false}));
    g_contexts.insert(g_foreign.back().get());
    return reinterpret_cast<CUcontext>(g_foreign.back().get());
}

CUcontext current_context() { return t_current; }
void set_current_context(CUcontext context) { t_current = context; }

}  // namespace fake
