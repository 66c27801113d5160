#include "fake_driver.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <tuple>

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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
    CUmemPoolProps props{};                // what cuMemPoolCreate was given (device pools: DEVICE location)
    std::map<int, CUmemAccess_flags> access;  // cuMemPoolSetAccess grants, by device
    FakePool *imported_from = nullptr;        // IPC: the exporting pool of an imported one
};
std::vector<std::unique_ptr<FakePool>> g_default_pools;  // one per device, never destroyed
std::vector<std::unique_ptr<FakePool>> g_pool_storage;    // created pools, kept for the process
std::set<FakePool *> g_pools;                             // created pools alive
std::set<FakePool *> g_all_pools;                         // every pool the fake knows
std::map<CUdeviceptr, size_t> g_allocations;             // live allocations (pool and pinned)
std::map<CUdeviceptr, FakePool *> g_allocation_pool;     // the pool of each pool allocation
// IPC. An exported pool's fd is a memfd, known by its inode; an imported
// pointer is "mapped" at the exporter's address (one process: the same bytes),
// so cuMemFreeAsync of an imported address unmaps it instead of freeing.
std::map<std::pair<dev_t, ino_t>, FakePool *> g_exported_pools;
std::multimap<CUdeviceptr, FakePool *> g_imported_pointers;  // address -> the imported pool it was mapped into
// Managed allocations (from managed pools) and the advice the driver keeps for them.
struct FakeManaged {
    size_t size = 0;
    int read_mostly = 0;
    CUmemLocation preferred{CU_MEM_LOCATION_TYPE_INVALID, 0};
    std::set<int> accessed_by;
    CUmemLocation last_prefetch{CU_MEM_LOCATION_TYPE_INVALID, 0};
};
std::map<CUdeviceptr, FakeManaged> g_managed;
// cuMemAllocManaged allocations (also in g_allocations and g_managed) and the
// attach flags each was made with; only cuMemFree frees them.
std::map<CUdeviceptr, unsigned> g_managed_flags;
// Virtual memory: physical memory is a memfd, reservations are PROT_NONE host
// ranges, mappings put the memfd's pages there.
struct FakePhysical {
    int fd;
    size_t size;
    CUmemAllocationProp prop;
    int maps = 0;
    bool released = false;
};
struct FakeMapping {
    size_t size;
    CUmemGenericAllocationHandle handle;
    std::map<int, CUmemAccess_flags> access;  // by device
};
std::map<CUmemGenericAllocationHandle, FakePhysical> g_physical;
CUmemGenericAllocationHandle g_next_physical = 0x1000;
std::map<CUdeviceptr, size_t> g_reservations;  // start -> size
// Reservations come from one PROT_NONE arena, placed deterministically: each
// new one leaves a gap of its own size after it, so a reservation can be
// extended in place (hint = its end) unless a test blocks the gap.
constexpr size_t kArenaSize = size_t{16} << 30;
uintptr_t g_arena = 0;
uintptr_t g_arena_next = 0;
std::map<CUdeviceptr, FakeMapping> g_mappings;  // start -> mapping
thread_local CUcontext t_current = nullptr;
thread_local int t_uncounted = 0;
std::map<std::pair<int, int>, int> g_attributes;  // (attribute, device) -> value overrides
int g_driver_version = 13000;

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
CUresult f_cuDriverGetVersion(int *version) { ENTER("cuDriverGetVersion"); *version = g_driver_version; return CUDA_SUCCESS; }
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
    if (auto it = g_attributes.find({attribute, device}); it != g_attributes.end()) {
        *value = it->second;
        return CUDA_SUCCESS;
    }
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
    if (!props) return CUDA_ERROR_INVALID_VALUE;
    // Device pools, host pools (HOST, HOST_NUMA) of pinned memory, and managed pools.
    const CUmemLocationType where = props->location.type;
    const bool device_location = where == CU_MEM_LOCATION_TYPE_DEVICE;
    const bool host_location = where == CU_MEM_LOCATION_TYPE_HOST || where == CU_MEM_LOCATION_TYPE_HOST_NUMA;
    if (props->allocType == CU_MEM_ALLOCATION_TYPE_PINNED) {
        if (!device_location && !host_location) return CUDA_ERROR_INVALID_VALUE;
    } else if (props->allocType == CU_MEM_ALLOCATION_TYPE_MANAGED) {
        if (!device_location && !host_location && where != CU_MEM_LOCATION_TYPE_NONE) return CUDA_ERROR_INVALID_VALUE;
    } else {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (device_location && (props->location.id < 0 || props->location.id >= g_devices)) return CUDA_ERROR_INVALID_DEVICE;
    if (where == CU_MEM_LOCATION_TYPE_HOST_NUMA && props->location.id < 0) return CUDA_ERROR_INVALID_VALUE;
    g_pool_storage.push_back(std::make_unique<FakePool>());
    g_pool_storage.back()->device = device_location ? props->location.id : -1;
    g_pool_storage.back()->props = *props;
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
    if (p->props.allocType == CU_MEM_ALLOCATION_TYPE_MANAGED) {
        FakeManaged range;
        range.size = size;
        g_managed.emplace(*address, range);
    }
    p->used += size;
    if (p->used > p->used_high) p->used_high = p->used;
    return CUDA_SUCCESS;
}
CUresult f_cuMemFreeAsync(CUdeviceptr address, CUstream stream) {
    ENTER("cuMemFreeAsync");
    if (!(is_builtin(stream) || as_stream(stream))) return CUDA_ERROR_INVALID_HANDLE;
    if (auto imported = g_imported_pointers.find(address); imported != g_imported_pointers.end()) {
        g_imported_pointers.erase(imported);  // an import is unmapped, never freed
        return CUDA_SUCCESS;
    }
    auto found = g_allocations.find(address);
    if (found == g_allocations.end() || g_managed_flags.count(address)) return CUDA_ERROR_INVALID_VALUE;
    if (auto pool = g_allocation_pool.find(address); pool != g_allocation_pool.end()) {
        pool->second->used -= found->second;
        g_allocation_pool.erase(pool);
    }
    g_allocations.erase(found);
    g_managed.erase(address);
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
    if (g_managed_flags.count(reinterpret_cast<CUdeviceptr>(pointer))) return CUDA_ERROR_INVALID_VALUE;
    if (!g_allocations.erase(reinterpret_cast<CUdeviceptr>(pointer))) return CUDA_ERROR_INVALID_VALUE;
    std::free(pointer);
    return CUDA_SUCCESS;
}
// Managed memory outside pools: host memory, so copies, fills and host access
// work; it takes advice like managed-pool memory.
CUresult f_cuMemAllocManaged(CUdeviceptr *address, size_t size, unsigned flags) {
    ENTER("cuMemAllocManaged");
    if (!as_context(t_current)) return CUDA_ERROR_INVALID_CONTEXT;
    if (!address || size == 0 || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
        return CUDA_ERROR_INVALID_VALUE;
    void *memory = std::malloc(size);
    if (!memory) return CUDA_ERROR_OUT_OF_MEMORY;
    *address = reinterpret_cast<CUdeviceptr>(memory);
    g_allocations[*address] = size;
    g_managed_flags[*address] = flags;
    FakeManaged range;
    range.size = size;
    g_managed.emplace(*address, range);
    return CUDA_SUCCESS;
}
// Frees cuMemAllocManaged memory only (the fake has no cuMemAlloc), so a
// resource freeing the wrong way fails.
CUresult f_cuMemFree(CUdeviceptr address) {
    ENTER("cuMemFree");
    if (!as_context(t_current)) return CUDA_ERROR_INVALID_CONTEXT;
    if (!g_managed_flags.erase(address)) return CUDA_ERROR_INVALID_VALUE;
    g_allocations.erase(address);
    g_managed.erase(address);
    std::free(reinterpret_cast<void *>(address));
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

// ---- Peer and strided copies, pool access, managed memory, virtual memory ----

CUresult f_cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_context, CUdeviceptr src, CUcontext src_context,
                             size_t size, CUstream stream) {
    ENTER("cuMemcpyPeerAsync");
    if (!as_context(dst_context) || !as_context(src_context)) return CUDA_ERROR_INVALID_CONTEXT;
    if (!(is_builtin(stream) || as_stream(stream))) return CUDA_ERROR_INVALID_HANDLE;
    std::memmove(reinterpret_cast<void *>(dst), reinterpret_cast<const void *>(src), size);
    return CUDA_SUCCESS;
}
bool is_reserved(CUdeviceptr address, size_t size);
// A real strided copy on host memory, checking the layout as the driver does.
// Graphics interop (see fake_driver.hpp).
struct FakeGraphics;
struct FakeArray {
    FakeGraphics *owner;
    CUDA_ARRAY3D_DESCRIPTOR descriptor;
    std::vector<unsigned char> data;
};
struct FakeGraphics {
    CUcontext context;
    unsigned gl_name;
    bool image;
    unsigned flags;
    unsigned map_flags = 0;
    bool mapped = false;
    std::vector<unsigned char> memory;              // a buffer's bytes
    std::vector<std::unique_ptr<FakeArray>> levels;  // an image's levels
};
std::set<FakeGraphics *> g_graphics;
std::vector<fake::GraphicsCall> g_graphics_calls;
int g_graphics_violations = 0;
int g_gl_device = 0;
FakeGraphics *as_graphics(CUgraphicsResource r) {
    auto *graphics = reinterpret_cast<FakeGraphics *>(r);
    return g_graphics.count(graphics) ? graphics : nullptr;
}
FakeArray *as_array(CUarray a) {
    for (FakeGraphics *graphics : g_graphics)
        for (auto &level : graphics->levels)
            if (level.get() == reinterpret_cast<FakeArray *>(a)) return level.get();
    return nullptr;
}
// A copy side in a fake array becomes host memory of the array's packed layout.
bool array_as_host(CUmemorytype &type, const void *&host, CUarray array, size_t &pitch, size_t &height) {
    if (type != CU_MEMORYTYPE_ARRAY) return true;
    FakeArray *fake_array = as_array(array);
    if (!fake_array || !fake_array->owner->mapped) return false;
    type = CU_MEMORYTYPE_HOST;
    host = fake_array->data.data();
    pitch = fake_array->descriptor.Width * 4;
    height = fake_array->descriptor.Height;
    return true;
}

CUresult f_cuMemcpy3DAsync(const CUDA_MEMCPY3D *original, CUstream stream) {
    ENTER("cuMemcpy3DAsync");
    if (!original) return CUDA_ERROR_INVALID_VALUE;
    CUDA_MEMCPY3D converted = *original;
    const void *dst_host = converted.dstHost;
    if (!array_as_host(converted.srcMemoryType, converted.srcHost, converted.srcArray, converted.srcPitch,
                       converted.srcHeight) ||
        !array_as_host(converted.dstMemoryType, dst_host, converted.dstArray, converted.dstPitch,
                       converted.dstHeight))
        return CUDA_ERROR_INVALID_VALUE;
    converted.dstHost = const_cast<void *>(dst_host);
    const CUDA_MEMCPY3D *c = &converted;
    if (!(is_builtin(stream) || as_stream(stream))) return CUDA_ERROR_INVALID_HANDLE;
    auto base = [](CUmemorytype type, const void *host, CUdeviceptr device) -> const unsigned char * {
        if (type == CU_MEMORYTYPE_HOST) return static_cast<const unsigned char *>(host);
        if (type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED)
            return reinterpret_cast<const unsigned char *>(device);
        return nullptr;  // arrays were turned into host memory above
    };
    const unsigned char *src = base(c->srcMemoryType, c->srcHost, c->srcDevice);
    auto *dst = const_cast<unsigned char *>(base(c->dstMemoryType, c->dstHost, c->dstDevice));
    if (!src || !dst || c->srcLOD != 0 || c->dstLOD != 0) return CUDA_ERROR_INVALID_VALUE;
    if (c->srcXInBytes + c->WidthInBytes > c->srcPitch || c->dstXInBytes + c->WidthInBytes > c->dstPitch)
        return CUDA_ERROR_INVALID_VALUE;
    if (c->Depth > 1 && (c->srcY + c->Height > c->srcHeight || c->dstY + c->Height > c->dstHeight))
        return CUDA_ERROR_INVALID_VALUE;
    if (c->Height == 0 || c->Depth == 0) return CUDA_SUCCESS;
    // A side in memory the fake handed out must stay inside it (a real GPU would
    // fault or corrupt memory; the fake must not crash the test).
    auto inside = [](CUmemorytype type, CUdeviceptr base, size_t x, size_t y, size_t z, size_t pitch, size_t height,
                     size_t width, size_t rows, size_t depth) {
        if (type == CU_MEMORYTYPE_HOST) return true;
        // 64-bit factors: (z + depth) * height fits 128 bits; times pitch may not, so cap it first.
        using U = unsigned __int128;
        const U cap = U{1} << 64;
        U last_row = (U{z} + depth - 1) * height + y + rows - 1;
        if (last_row >= cap) return false;
        U first = (U{z} * height + y) * pitch + x;
        U end = last_row * pitch + x + width;
        auto allocation = g_allocations.upper_bound(base);
        if (allocation != g_allocations.begin() && base < std::prev(allocation)->first + std::prev(allocation)->second) {
            --allocation;
            return base + end <= allocation->first + allocation->second && first <= end;
        }
        auto mapping = g_mappings.upper_bound(base);
        if (mapping != g_mappings.begin() && base < std::prev(mapping)->first + std::prev(mapping)->second.size)
            return end < cap && is_reserved(base, static_cast<size_t>(end));
        return true;  // memory the fake does not know (the user's): trusted
    };
    if (!inside(c->srcMemoryType, c->srcDevice, c->srcXInBytes, c->srcY, c->srcZ, c->srcPitch, c->srcHeight,
                c->WidthInBytes, c->Height, c->Depth) ||
        !inside(c->dstMemoryType, c->dstDevice, c->dstXInBytes, c->dstY, c->dstZ, c->dstPitch, c->dstHeight,
                c->WidthInBytes, c->Height, c->Depth))
        return CUDA_ERROR_ILLEGAL_ADDRESS;
    for (size_t z = 0; z < c->Depth; ++z)
        for (size_t y = 0; y < c->Height; ++y) {
            const size_t from = ((c->srcZ + z) * c->srcHeight + c->srcY + y) * c->srcPitch + c->srcXInBytes;
            const size_t to = ((c->dstZ + z) * c->dstHeight + c->dstY + y) * c->dstPitch + c->dstXInBytes;
            std::memmove(dst + to, src + from, c->WidthInBytes);
        }
    return CUDA_SUCCESS;
}
bool valid_device_location(const CUmemLocation &l) {
    return l.type == CU_MEM_LOCATION_TYPE_DEVICE && l.id >= 0 && l.id < g_devices;
}
CUresult f_cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count) {
    ENTER("cuMemPoolSetAccess");
    auto *p = reinterpret_cast<FakePool *>(pool);
    if (!g_all_pools.count(p) || !map || count == 0) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; ++i) {
        if (!valid_device_location(map[i].location)) return CUDA_ERROR_INVALID_DEVICE;
        if (map[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE && map[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            return CUDA_ERROR_INVALID_VALUE;  // pools grant read-write or nothing
        if (p->device == map[i].location.id && map[i].flags == CU_MEM_ACCESS_FLAGS_PROT_NONE)
            return CUDA_ERROR_INVALID_DEVICE;  // the owner keeps its access
    }
    for (size_t i = 0; i < count; ++i) p->access[map[i].location.id] = map[i].flags;
    return CUDA_SUCCESS;
}
CUmemAccess_flags fake_pool_access(const FakePool *p, int device) {
    if (p->device == device || p->props.allocType == CU_MEM_ALLOCATION_TYPE_MANAGED)
        return CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    auto it = p->access.find(device);
    return it == p->access.end() ? CU_MEM_ACCESS_FLAGS_PROT_NONE : it->second;
}
CUresult f_cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool pool, CUmemLocation *location) {
    ENTER("cuMemPoolGetAccess");
    auto *p = reinterpret_cast<FakePool *>(pool);
    if (!g_all_pools.count(p) || !flags || !location) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device_location(*location)) return CUDA_ERROR_INVALID_DEVICE;
    *flags = fake_pool_access(p, location->id);
    return CUDA_SUCCESS;
}
// The managed allocation holding [address, address + size), or null.
FakeManaged *managed_range(CUdeviceptr address, size_t size) {
    auto it = g_managed.upper_bound(address);
    if (it == g_managed.begin()) return nullptr;
    --it;
    if (address + size > it->first + it->second.size) return nullptr;
    return &it->second;
}
bool valid_prefetch_location(const CUmemLocation &l) {
    return valid_device_location(l) || l.type == CU_MEM_LOCATION_TYPE_HOST ||
           l.type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT || (l.type == CU_MEM_LOCATION_TYPE_HOST_NUMA && l.id >= 0);
}
CUresult f_cuMemAdvise(CUdeviceptr address, size_t size, CUmem_advise advice, CUmemLocation location) {
    ENTER("cuMemAdvise");
    FakeManaged *m = managed_range(address, size);
    if (!m || size == 0) return CUDA_ERROR_INVALID_VALUE;
    switch (advice) {
        case CU_MEM_ADVISE_SET_READ_MOSTLY: m->read_mostly = 1; break;
        case CU_MEM_ADVISE_UNSET_READ_MOSTLY: m->read_mostly = 0; break;
        case CU_MEM_ADVISE_SET_PREFERRED_LOCATION:
            if (!valid_prefetch_location(location)) return CUDA_ERROR_INVALID_DEVICE;
            m->preferred = location;
            break;
        case CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION: m->preferred = {CU_MEM_LOCATION_TYPE_INVALID, 0}; break;
        case CU_MEM_ADVISE_SET_ACCESSED_BY:
            if (!valid_device_location(location)) return CUDA_ERROR_INVALID_DEVICE;
            m->accessed_by.insert(location.id);
            break;
        case CU_MEM_ADVISE_UNSET_ACCESSED_BY:
            if (!valid_device_location(location)) return CUDA_ERROR_INVALID_DEVICE;
            m->accessed_by.erase(location.id);
            break;
        default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}
CUresult f_cuMemPrefetchAsync(CUdeviceptr address, size_t size, CUmemLocation location, unsigned flags,
                              CUstream stream) {
    ENTER("cuMemPrefetchAsync");
    if (!(is_builtin(stream) || as_stream(stream))) return CUDA_ERROR_INVALID_HANDLE;
    FakeManaged *m = managed_range(address, size);
    if (!m || size == 0 || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_prefetch_location(location)) return CUDA_ERROR_INVALID_DEVICE;
    m->last_prefetch = location;
    return CUDA_SUCCESS;
}
// Discarded contents are unspecified: the fake makes them recognisable.
CUresult fake_discard(CUdeviceptr *addresses, size_t *sizes, size_t count) {
    for (size_t i = 0; i < count; ++i)
        if (!managed_range(addresses[i], sizes[i]) || sizes[i] == 0) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; ++i) std::memset(reinterpret_cast<void *>(addresses[i]), kDiscardedByte, sizes[i]);
    return CUDA_SUCCESS;
}
CUresult f_cuMemDiscardBatchAsync(CUdeviceptr *addresses, size_t *sizes, size_t count, unsigned long long flags,
                                  CUstream stream) {
    ENTER("cuMemDiscardBatchAsync");
    if (!(is_builtin(stream) || as_stream(stream))) return CUDA_ERROR_INVALID_HANDLE;
    if (!addresses || !sizes || count == 0 || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    return fake_discard(addresses, sizes, count);
}
CUresult f_cuMemDiscardAndPrefetchBatchAsync(CUdeviceptr *addresses, size_t *sizes, size_t count,
                                             CUmemLocation *locations, size_t *location_indices, size_t locations_count,
                                             unsigned long long flags, CUstream stream) {
    ENTER("cuMemDiscardAndPrefetchBatchAsync");
    if (!(is_builtin(stream) || as_stream(stream))) return CUDA_ERROR_INVALID_HANDLE;
    if (!addresses || !sizes || count == 0 || flags != 0 || !locations || !location_indices || locations_count == 0 ||
        location_indices[0] != 0)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t k = 0; k < locations_count; ++k)
        if (!valid_prefetch_location(locations[k]) || location_indices[k] >= count) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = fake_discard(addresses, sizes, count)) return r;
    // Location k applies from operation location_indices[k] on.
    size_t k = 0;
    for (size_t i = 0; i < count; ++i) {
        while (k + 1 < locations_count && location_indices[k + 1] <= i) ++k;
        managed_range(addresses[i], sizes[i])->last_prefetch = locations[k];
    }
    return CUDA_SUCCESS;
}
// The driver's int for a location in the legacy attributes: an ordinal, -1 (CPU) or -2 (none).
int legacy_location(const CUmemLocation &l) {
    if (l.type == CU_MEM_LOCATION_TYPE_DEVICE) return l.id;
    return l.type == CU_MEM_LOCATION_TYPE_INVALID ? -2 : -1;
}
CUresult f_cuMemRangeGetAttribute(void *data, size_t data_size, CUmem_range_attribute attribute, CUdeviceptr address,
                                  size_t size) {
    ENTER("cuMemRangeGetAttribute");
    FakeManaged *m = managed_range(address, size);
    if (!m || size == 0 || !data) return CUDA_ERROR_INVALID_VALUE;
    auto *out = static_cast<int *>(data);
    if (attribute == CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY) {
        if (data_size == 0 || data_size % 4 != 0) return CUDA_ERROR_INVALID_VALUE;
        size_t n = 0;
        for (int device : m->accessed_by)
            if (n < data_size / 4) out[n++] = device;
        for (; n < data_size / 4; ++n) out[n] = -2;  // CU_DEVICE_INVALID ends the list
        return CUDA_SUCCESS;
    }
    if (data_size != 4) return CUDA_ERROR_INVALID_VALUE;
    switch (attribute) {
        case CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY: *out = m->read_mostly; break;
        case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION: *out = legacy_location(m->preferred); break;
        case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION: *out = legacy_location(m->last_prefetch); break;
        case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE: *out = m->preferred.type; break;
        case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID: *out = m->preferred.id; break;
        case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE: *out = m->last_prefetch.type; break;
        case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID: *out = m->last_prefetch.id; break;
        default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

bool valid_vmm_prop(const CUmemAllocationProp *prop) {
    if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED) return false;
    switch (prop->location.type) {
        case CU_MEM_LOCATION_TYPE_DEVICE: return prop->location.id >= 0 && prop->location.id < g_devices;
        case CU_MEM_LOCATION_TYPE_HOST:
        case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT: return true;
        case CU_MEM_LOCATION_TYPE_HOST_NUMA: return prop->location.id >= 0;
        default: return false;
    }
}
CUresult f_cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                         CUmemAllocationGranularity_flags option) {
    ENTER("cuMemGetAllocationGranularity");
    if (!granularity || !valid_vmm_prop(prop)) return CUDA_ERROR_INVALID_VALUE;
    if (option == CU_MEM_ALLOC_GRANULARITY_MINIMUM) *granularity = kVmmMinimumGranularity;
    else if (option == CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) *granularity = kVmmRecommendedGranularity;
    else return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}
CUresult f_cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                       unsigned long long flags) {
    ENTER("cuMemCreate");
    if (!handle || !valid_vmm_prop(prop) || flags != 0 || size == 0 || size % kVmmMinimumGranularity != 0)
        return CUDA_ERROR_INVALID_VALUE;
    const int fd = memfd_create("cucore-fake-vmm", MFD_CLOEXEC);
    if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
        close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *handle = g_next_physical++;
    g_physical[*handle] = FakePhysical{fd, size, *prop};
    return CUDA_SUCCESS;
}
// Physical memory goes when it is released and no longer mapped (as in the driver).
void drop_physical_if_unused(CUmemGenericAllocationHandle handle) {
    auto it = g_physical.find(handle);
    if (it != g_physical.end() && it->second.released && it->second.maps == 0) {
        close(it->second.fd);
        g_physical.erase(it);
    }
}
CUresult f_cuMemRelease(CUmemGenericAllocationHandle handle) {
    ENTER("cuMemRelease");
    auto it = g_physical.find(handle);
    if (it == g_physical.end() || it->second.released) return CUDA_ERROR_INVALID_VALUE;
    it->second.released = true;
    drop_physical_if_unused(handle);
    return CUDA_SUCCESS;
}
// Whether no reservation overlaps [address, address + size) and it lies in the arena.
bool is_free_range(uintptr_t address, size_t size) {
    if (address < g_arena || address + size > g_arena + kArenaSize || address + size < address) return false;
    auto next = g_reservations.lower_bound(address);
    if (next != g_reservations.end() && next->first < address + size) return false;
    return next == g_reservations.begin() || std::prev(next)->first + std::prev(next)->second <= address;
}
CUresult f_cuMemAddressReserve(CUdeviceptr *address, size_t size, size_t alignment, CUdeviceptr hint,
                               unsigned long long flags) {
    ENTER("cuMemAddressReserve");
    if (!address || size == 0 || size % kVmmMinimumGranularity != 0 || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (alignment == 0) alignment = kVmmMinimumGranularity;
    if (alignment % kVmmMinimumGranularity != 0) return CUDA_ERROR_INVALID_VALUE;
    uintptr_t start = 0;
    if (hint != 0 && hint % alignment == 0 && is_free_range(hint, size)) {
        start = hint;  // a hint is honoured when that range is free
    } else {
        start = (g_arena_next + alignment - 1) / alignment * alignment;
        // Past whatever is reserved there already (a test's blocker).
        for (auto it = g_reservations.upper_bound(start); !is_free_range(start, size);) {
            if (it != g_reservations.begin() && std::prev(it)->first + std::prev(it)->second > start) --it;
            if (it == g_reservations.end() || start + size <= g_arena || start >= g_arena + kArenaSize)
                return CUDA_ERROR_OUT_OF_MEMORY;
            start = (it->first + it->second + alignment - 1) / alignment * alignment;
            it = g_reservations.upper_bound(start);
        }
        g_arena_next = start + 2 * size;
    }
    *address = static_cast<CUdeviceptr>(start);
    g_reservations[*address] = size;
    return CUDA_SUCCESS;
}
CUresult f_cuMemAddressFree(CUdeviceptr address, size_t size) {
    ENTER("cuMemAddressFree");
    auto it = g_reservations.find(address);
    if (it == g_reservations.end() || it->second != size) return CUDA_ERROR_INVALID_VALUE;
    // A range with memory still mapped in it is refused (unmap first), so leaks show.
    auto mapped = g_mappings.lower_bound(address);
    if (mapped != g_mappings.end() && mapped->first < address + size) return CUDA_ERROR_INVALID_VALUE;
    g_reservations.erase(it);  // the arena's pages are PROT_NONE again since the unmap
    return CUDA_SUCCESS;
}
// Whether [address, address + size) lies in reserved ranges (adjacent reservations count as one).
bool is_reserved(CUdeviceptr address, size_t size) {
    CUdeviceptr at = address;
    const CUdeviceptr end = address + size;
    while (at < end) {
        auto it = g_reservations.upper_bound(at);
        if (it == g_reservations.begin()) return false;
        --it;
        if (at >= it->first + it->second) return false;
        at = it->first + it->second;
    }
    return true;
}
CUresult f_cuMemMap(CUdeviceptr address, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                    unsigned long long flags) {
    ENTER("cuMemMap");
    auto physical = g_physical.find(handle);
    if (physical == g_physical.end() || physical->second.released || flags != 0 || offset != 0 || size == 0 ||
        size > physical->second.size || size % kVmmMinimumGranularity != 0 || !is_reserved(address, size))
        return CUDA_ERROR_INVALID_VALUE;
    auto next = g_mappings.lower_bound(address);
    if (next != g_mappings.end() && next->first < address + size) return CUDA_ERROR_INVALID_VALUE;  // overlap
    if (next != g_mappings.begin() && std::prev(next)->first + std::prev(next)->second.size > address)
        return CUDA_ERROR_INVALID_VALUE;
    void *at = mmap(reinterpret_cast<void *>(address), size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                    physical->second.fd, 0);
    if (at == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    ++physical->second.maps;
    g_mappings[address] = FakeMapping{size, handle, {}};
    return CUDA_SUCCESS;
}
CUresult f_cuMemUnmap(CUdeviceptr address, size_t size) {
    ENTER("cuMemUnmap");
    // Every mapping in the range goes; a mapping cut by the range's ends is an error.
    auto first = g_mappings.lower_bound(address);
    if (first != g_mappings.begin() && std::prev(first)->first + std::prev(first)->second.size > address)
        return CUDA_ERROR_INVALID_VALUE;
    auto last = first;
    while (last != g_mappings.end() && last->first < address + size) {
        if (last->first + last->second.size > address + size) return CUDA_ERROR_INVALID_VALUE;
        ++last;
    }
    if (first == last) return CUDA_ERROR_INVALID_VALUE;  // nothing mapped there
    for (auto it = first; it != last;) {
        mmap(reinterpret_cast<void *>(it->first), it->second.size, PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        const CUmemGenericAllocationHandle handle = it->second.handle;
        --g_physical[handle].maps;
        it = g_mappings.erase(it);
        drop_physical_if_unused(handle);
    }
    return CUDA_SUCCESS;
}
CUresult f_cuMemSetAccess(CUdeviceptr address, size_t size, const CUmemAccessDesc *desc, size_t count) {
    ENTER("cuMemSetAccess");
    if (!desc || count == 0 || size == 0) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; ++i)
        if (!valid_device_location(desc[i].location) || desc[i].flags > CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            return CUDA_ERROR_INVALID_VALUE;
    // Every byte of the range must be mapped.
    std::vector<FakeMapping *> covered;
    CUdeviceptr at = address;
    while (at < address + size) {
        auto it = g_mappings.upper_bound(at);
        if (it == g_mappings.begin()) return CUDA_ERROR_INVALID_VALUE;
        --it;
        if (at >= it->first + it->second.size) return CUDA_ERROR_INVALID_VALUE;
        covered.push_back(&it->second);
        at = it->first + it->second.size;
    }
    for (FakeMapping *mapping : covered)
        for (size_t i = 0; i < count; ++i) mapping->access[desc[i].location.id] = desc[i].flags;
    return CUDA_SUCCESS;
}

// Unmaps and frees every VMM object (install() starts from nothing).
void forget_virtual_memory() {
    for (auto &[address, mapping] : g_mappings)
        mmap(reinterpret_cast<void *>(address), mapping.size, PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    g_reservations.clear();
    g_mappings.clear();
    for (auto &[handle, physical] : g_physical) close(physical.fd);
    g_physical.clear();
    if (!g_arena) {  // once per process; never unmapped (only address space)
        void *arena = mmap(nullptr, kArenaSize + (size_t{2} << 20), PROT_NONE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (arena != MAP_FAILED) g_arena = (reinterpret_cast<uintptr_t>(arena) + (size_t{2} << 20) - 1) & ~((size_t{2} << 20) - 1);
    }
    g_arena_next = g_arena;
}

// ---- IPC ----
constexpr uint64_t kExportMagic = 0xFA4E1BC0DE5EA1EDull;
std::pair<dev_t, ino_t> fd_identity(int fd) {
    struct stat st {};
    if (fstat(fd, &st) != 0) return {0, 0};
    return {st.st_dev, st.st_ino};
}
CUresult f_cuMemPoolExportToShareableHandle(void *handle, CUmemoryPool pool, CUmemAllocationHandleType type,
                                            unsigned long long flags) {
    ENTER("cuMemPoolExportToShareableHandle");
    auto *p = reinterpret_cast<FakePool *>(pool);
    if (!handle || flags != 0 || !g_pools.count(p) || p->imported_from) return CUDA_ERROR_INVALID_VALUE;
    if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || !(p->props.handleTypes & type))
        return CUDA_ERROR_INVALID_VALUE;  // the pool was not created shareable this way
    const int fd = memfd_create("fake-cuda-pool", MFD_CLOEXEC);
    if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    g_exported_pools[fd_identity(fd)] = p;
    *static_cast<int *>(handle) = fd;
    return CUDA_SUCCESS;
}
CUresult f_cuMemPoolImportFromShareableHandle(CUmemoryPool *pool, void *handle, CUmemAllocationHandleType type,
                                              unsigned long long flags) {
    ENTER("cuMemPoolImportFromShareableHandle");
    if (!pool || flags != 0 || type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_INVALID_VALUE;
    const int fd = static_cast<int>(reinterpret_cast<intptr_t>(handle));
    auto found = g_exported_pools.find(fd_identity(fd));
    if (found == g_exported_pools.end() || !g_pools.count(found->second)) return CUDA_ERROR_INVALID_VALUE;
    g_pool_storage.push_back(std::make_unique<FakePool>());
    FakePool *imported = g_pool_storage.back().get();
    imported->device = found->second->device;
    imported->props = found->second->props;
    imported->imported_from = found->second;
    g_pools.insert(imported);
    g_all_pools.insert(imported);
    *pool = reinterpret_cast<CUmemoryPool>(imported);
    return CUDA_SUCCESS;
}
CUresult f_cuMemPoolExportPointer(CUmemPoolPtrExportData *data, CUdeviceptr address) {
    ENTER("cuMemPoolExportPointer");
    auto owner = g_allocation_pool.find(address);
    if (!data || owner == g_allocation_pool.end()) return CUDA_ERROR_INVALID_VALUE;
    std::memset(data, 0, sizeof *data);
    const uint64_t words[3] = {kExportMagic, static_cast<uint64_t>(address),
                               static_cast<uint64_t>(reinterpret_cast<uintptr_t>(owner->second))};
    std::memcpy(data->reserved, words, sizeof words);
    return CUDA_SUCCESS;
}
CUresult f_cuMemPoolImportPointer(CUdeviceptr *address, CUmemoryPool pool, CUmemPoolPtrExportData *data) {
    ENTER("cuMemPoolImportPointer");
    auto *p = reinterpret_cast<FakePool *>(pool);
    if (!address || !data || !g_pools.count(p) || !p->imported_from) return CUDA_ERROR_INVALID_VALUE;
    uint64_t words[3];
    std::memcpy(words, data->reserved, sizeof words);
    const auto exported = static_cast<CUdeviceptr>(words[1]);
    auto owner = g_allocation_pool.find(exported);
    if (words[0] != kExportMagic || reinterpret_cast<uintptr_t>(p->imported_from) != words[2] ||
        owner == g_allocation_pool.end() || owner->second != p->imported_from)
        return CUDA_ERROR_INVALID_VALUE;
    for (auto [it, end] = g_imported_pointers.equal_range(exported); it != end; ++it)
        if (it->second == p) return CUDA_ERROR_ALREADY_MAPPED;  // the driver maps each pointer once
    g_imported_pointers.emplace(exported, p);
    *address = exported;
    return CUDA_SUCCESS;
}
CUresult f_cuIpcGetEventHandle(CUipcEventHandle *handle, CUevent event) {
    ENTER("cuIpcGetEventHandle");
    FakeEvent *e = as_event(event);
    if (!handle || !e) return CUDA_ERROR_INVALID_HANDLE;
    if (!(e->flags & CU_EVENT_INTERPROCESS) || !(e->flags & CU_EVENT_DISABLE_TIMING)) return CUDA_ERROR_INVALID_VALUE;
    std::memset(handle, 0, sizeof *handle);
    std::memcpy(handle->reserved, &kExportMagic, sizeof kExportMagic);
    std::memcpy(handle->reserved + sizeof kExportMagic, &e, sizeof e);
    return CUDA_SUCCESS;
}
CUresult f_cuIpcOpenEventHandle(CUevent *event, CUipcEventHandle handle) {
    ENTER("cuIpcOpenEventHandle");
    if (!event) return CUDA_ERROR_INVALID_VALUE;
    if (!as_context(t_current)) return CUDA_ERROR_INVALID_CONTEXT;
    uint64_t magic = 0;
    FakeEvent *source = nullptr;
    std::memcpy(&magic, handle.reserved, sizeof magic);
    std::memcpy(&source, handle.reserved + sizeof magic, sizeof source);
    if (magic != kExportMagic || !g_events.count(source)) return CUDA_ERROR_INVALID_VALUE;
    auto *opened = new FakeEvent{t_current, source->flags};
    g_events.insert(opened);
    *event = reinterpret_cast<CUevent>(opened);
    return CUDA_SUCCESS;
}

// Libraries and the driver's linker. A fake image is text: "FAKECUBIN\n"
// then "kernel NAME\n" and "global NAME SIZE\n" lines (fake::image builds
// one). Globals are host memory, one block per global of a loaded library, so
// reads and writes through cuMemcpyDtoH/HtoD really happen.
struct FakeLibrary {
    std::vector<std::unique_ptr<KernelRecord>> kernels;
    std::map<std::string, std::vector<unsigned char>> globals;
};
std::set<FakeLibrary *> g_libraries;
struct FakeLink {
    std::string merged;        // kernel and global lines of every input
    char *error_log = nullptr;  // CU_JIT_ERROR_LOG_BUFFER given to cuLinkCreate
    size_t error_log_size = 0;
    std::string cubin;         // cuLinkComplete's result, owned by the state
};
std::set<FakeLink *> g_links;
std::vector<std::pair<int, uintptr_t>> g_link_options;  // of the last cuLinkCreate

bool parse_image(const std::string &text, std::string &lines) {
    static const std::string kMagic = "FAKECUBIN\n";
    if (text.compare(0, kMagic.size(), kMagic) != 0) return false;
    lines = text.substr(kMagic.size());
    return true;
}
CUresult load_library(CUlibrary *library, const std::string &text) {
    std::string lines;
    if (!library) return CUDA_ERROR_INVALID_VALUE;
    if (!parse_image(text, lines)) return CUDA_ERROR_INVALID_IMAGE;
    auto made = std::make_unique<FakeLibrary>();
    size_t at = 0;
    while (at < lines.size()) {
        size_t end = lines.find('\n', at);
        if (end == std::string::npos) end = lines.size();
        const std::string line = lines.substr(at, end - at);
        at = end + 1;
        char name[256];
        size_t size = 0;
        if (std::sscanf(line.c_str(), "kernel %255s", name) == 1)
            made->kernels.push_back(std::make_unique<KernelRecord>(KernelRecord{name, made.get()}));
        else if (std::sscanf(line.c_str(), "global %255s %zu", name, &size) == 2)
            made->globals[name].assign(size, 0);
    }
    *library = reinterpret_cast<CUlibrary>(made.get());
    g_libraries.insert(made.release());
    return CUDA_SUCCESS;
}
FakeLibrary *as_library(CUlibrary l) {
    auto *library = reinterpret_cast<FakeLibrary *>(l);
    return g_libraries.count(library) ? library : nullptr;
}
CUresult f_cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *, void **, unsigned int,
                             CUlibraryOption *, void **, unsigned int) {
    ENTER("cuLibraryLoadData");
    if (!code) return CUDA_ERROR_INVALID_VALUE;
    return load_library(library, static_cast<const char *>(code));
}
CUresult f_cuLibraryLoadFromFile(CUlibrary *library, const char *file, CUjit_option *, void **, unsigned int,
                                 CUlibraryOption *, void **, unsigned int) {
    ENTER("cuLibraryLoadFromFile");
    if (!file) return CUDA_ERROR_INVALID_VALUE;
    FILE *f = std::fopen(file, "rb");
    if (!f) return CUDA_ERROR_FILE_NOT_FOUND;
    std::string text;
    char chunk[4096];
    for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, f)) > 0;) text.append(chunk, n);
    std::fclose(f);
    return load_library(library, text);
}
CUresult f_cuLibraryUnload(CUlibrary library) {
    ENTER("cuLibraryUnload");
    FakeLibrary *l = as_library(library);
    if (!l) return CUDA_ERROR_INVALID_HANDLE;
    g_libraries.erase(l);
    delete l;
    return CUDA_SUCCESS;
}
CUresult f_cuLibraryGetKernel(CUkernel *kernel, CUlibrary library, const char *name) {
    ENTER("cuLibraryGetKernel");
    FakeLibrary *l = as_library(library);
    if (!kernel || !name) return CUDA_ERROR_INVALID_VALUE;
    if (!l) return CUDA_ERROR_INVALID_HANDLE;
    for (auto &k : l->kernels)
        if (k->name == name) {
            *kernel = reinterpret_cast<CUkernel>(k.get());
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}
CUresult f_cuLibraryGetKernelCount(unsigned int *count, CUlibrary library) {
    ENTER("cuLibraryGetKernelCount");
    FakeLibrary *l = as_library(library);
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    if (!l) return CUDA_ERROR_INVALID_HANDLE;
    *count = static_cast<unsigned>(l->kernels.size());
    return CUDA_SUCCESS;
}
CUresult f_cuLibraryGetGlobal(CUdeviceptr *address, size_t *bytes, CUlibrary library, const char *name) {
    ENTER("cuLibraryGetGlobal");
    FakeLibrary *l = as_library(library);
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    if (!l) return CUDA_ERROR_INVALID_HANDLE;
    if (!as_context(t_current)) return CUDA_ERROR_INVALID_CONTEXT;  // globals are per context
    auto it = l->globals.find(name);
    if (it == l->globals.end()) return CUDA_ERROR_NOT_FOUND;
    if (address) *address = reinterpret_cast<CUdeviceptr>(it->second.data());
    if (bytes) *bytes = it->second.size();
    return CUDA_SUCCESS;
}
CUresult f_cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t size) {
    ENTER("cuMemcpyDtoH");
    if (!as_context(t_current)) return CUDA_ERROR_INVALID_CONTEXT;
    if (!dst || !src) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(dst, reinterpret_cast<const void *>(src), size);
    return CUDA_SUCCESS;
}
CUresult f_cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t size) {
    ENTER("cuMemcpyHtoD");
    if (!as_context(t_current)) return CUDA_ERROR_INVALID_CONTEXT;
    if (!dst || !src) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(reinterpret_cast<void *>(dst), src, size);
    return CUDA_SUCCESS;
}
void link_error(FakeLink *link, const std::string &text) {
    if (!link->error_log || link->error_log_size == 0) return;
    std::snprintf(link->error_log, link->error_log_size, "%s", text.c_str());
}
CUresult f_cuLinkCreate(unsigned int count, CUjit_option *options, void **values, CUlinkState *state) {
    ENTER("cuLinkCreate");
    if (!state || (count && (!options || !values))) return CUDA_ERROR_INVALID_VALUE;
    if (!as_context(t_current)) return CUDA_ERROR_INVALID_CONTEXT;
    auto *link = new FakeLink;
    g_link_options.clear();
    for (unsigned i = 0; i < count; ++i) {
        g_link_options.emplace_back(options[i], reinterpret_cast<uintptr_t>(values[i]));
        if (options[i] == CU_JIT_ERROR_LOG_BUFFER) link->error_log = static_cast<char *>(values[i]);
        if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
            link->error_log_size = static_cast<size_t>(reinterpret_cast<uintptr_t>(values[i]));
    }
    g_links.insert(link);
    *state = reinterpret_cast<CUlinkState>(link);
    return CUDA_SUCCESS;
}
CUresult f_cuLinkAddData(CUlinkState state, CUjitInputType type, void *data, size_t size, const char *name,
                         unsigned int, CUjit_option *, void **) {
    ENTER("cuLinkAddData");
    auto *link = reinterpret_cast<FakeLink *>(state);
    if (!g_links.count(link)) return CUDA_ERROR_INVALID_HANDLE;
    if (!data || size == 0 || type == CU_JIT_INPUT_NVVM) return CUDA_ERROR_INVALID_VALUE;
    const std::string text(static_cast<const char *>(data), strnlen(static_cast<const char *>(data), size));
    std::string lines;
    if (!parse_image(text, lines)) {
        link_error(link, std::string("error: ") + (name ? name : "input") + " is not a fake image\nsecond line\n");
        return CUDA_ERROR_INVALID_PTX;
    }
    link->merged += lines;
    return CUDA_SUCCESS;
}
CUresult f_cuLinkComplete(CUlinkState state, void **cubin, size_t *size) {
    ENTER("cuLinkComplete");
    auto *link = reinterpret_cast<FakeLink *>(state);
    if (!g_links.count(link)) return CUDA_ERROR_INVALID_HANDLE;
    if (!cubin || !size) return CUDA_ERROR_INVALID_VALUE;
    link->cubin = "FAKECUBIN\n" + link->merged;
    *cubin = link->cubin.data();
    *size = link->cubin.size() + 1;  // a cubin's size; the fake's text is NUL-terminated
    return CUDA_SUCCESS;
}
CUresult f_cuLinkDestroy(CUlinkState state) {
    ENTER("cuLinkDestroy");
    auto *link = reinterpret_cast<FakeLink *>(state);
    if (!g_links.count(link)) return CUDA_ERROR_INVALID_HANDLE;
    g_links.erase(link);
    delete link;
    return CUDA_SUCCESS;
}

// Kernels and launches (cuKernel*, cuFunc*, cuLaunchKernelEx, cuOccupancy*).
// Any CUkernel of a fake library or from fake::make_kernel works; what it
// looks like (parameters, attributes, occupancy answers) is its KernelSpec.
// A CUfunction is one FakeFunction per (kernel, context), kept for the process.
struct FakeFunction {
    CUkernel kernel;
    CUcontext context;
};
std::map<CUkernel, KernelSpec> g_kernel_specs;  // foreign kernels and overrides for library ones
std::vector<std::unique_ptr<char>> g_foreign_kernels;  // storage behind make_kernel's handles
std::map<std::pair<CUkernel, CUcontext>, std::unique_ptr<FakeFunction>> g_function_storage;
std::set<FakeFunction *> g_functions;  // handed out since install()
std::map<std::tuple<CUkernel, int, int>, int> g_kernel_attributes;  // (kernel, attribute, device) set values
std::vector<LaunchRecord> g_launches;
OccupancyCall g_last_occupancy;

// The spec of a known kernel, or nullptr (an unknown CUkernel).
KernelSpec *spec_of(CUkernel kernel) {
    if (auto it = g_kernel_specs.find(kernel); it != g_kernel_specs.end()) return &it->second;
    if (const KernelRecord *record = kernel_record(kernel)) {
        KernelSpec spec;
        spec.name = record->name;
        return &g_kernel_specs.emplace(kernel, spec).first->second;
    }
    return nullptr;
}
FakeFunction *as_function(CUfunction f) {
    auto *function = reinterpret_cast<FakeFunction *>(f);
    return g_functions.count(function) ? function : nullptr;
}
FakeFunction *function_of(CUkernel kernel, CUcontext context) {
    auto &slot = g_function_storage[{kernel, context}];
    if (!slot) slot = std::make_unique<FakeFunction>(FakeFunction{kernel, context});
    g_functions.insert(slot.get());
    return slot.get();
}
size_t param_offset(const KernelSpec &spec, size_t index) {
    size_t offset = 0;
    for (size_t i = 0; i <= index; ++i) {
        const size_t size = spec.param_sizes[i];
        const size_t align = size >= 8 ? 8 : size >= 4 ? 4 : size >= 2 ? 2 : 1;
        offset = (offset + align - 1) / align * align;
        if (i < index) offset += size;
    }
    return offset;
}
int kernel_attribute(CUkernel kernel, const KernelSpec &spec, CUfunction_attribute attribute, int device) {
    if (auto it = g_kernel_attributes.find({kernel, attribute, device}); it != g_kernel_attributes.end())
        return it->second;
    if (attribute == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) return spec.max_threads_per_block;
    if (attribute == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) return spec.max_dynamic_shared_bytes;
    return static_cast<int>(attribute) * 100 + device;  // encodes what was asked
}
int device_of(CUcontext context) {
    FakeContext *c = as_context(context);
    return c ? c->device : -1;
}

CUresult f_cuKernelGetFunction(CUfunction *function, CUkernel kernel) {
    ENTER("cuKernelGetFunction");
    if (!function) return CUDA_ERROR_INVALID_VALUE;
    if (!spec_of(kernel)) return CUDA_ERROR_INVALID_HANDLE;
    if (!as_context(t_current)) return CUDA_ERROR_INVALID_CONTEXT;
    *function = reinterpret_cast<CUfunction>(function_of(kernel, t_current));
    return CUDA_SUCCESS;
}
CUresult f_cuKernelGetAttribute(int *value, CUfunction_attribute attribute, CUkernel kernel, CUdevice device) {
    ENTER("cuKernelGetAttribute");
    KernelSpec *spec = spec_of(kernel);
    if (!spec) return CUDA_ERROR_INVALID_HANDLE;
    if (!value || attribute < 0 || attribute >= CU_FUNC_ATTRIBUTE_MAX || device < 0 || device >= g_devices)
        return CUDA_ERROR_INVALID_VALUE;
    *value = kernel_attribute(kernel, *spec, attribute, device);
    return CUDA_SUCCESS;
}
CUresult f_cuKernelSetAttribute(CUfunction_attribute attribute, int value, CUkernel kernel, CUdevice device) {
    ENTER("cuKernelSetAttribute");
    if (!spec_of(kernel)) return CUDA_ERROR_INVALID_HANDLE;
    if (attribute < 0 || attribute >= CU_FUNC_ATTRIBUTE_MAX || device < 0 || device >= g_devices || value < -1)
        return CUDA_ERROR_INVALID_VALUE;
    g_kernel_attributes[{kernel, attribute, device}] = value;
    return CUDA_SUCCESS;
}
CUresult f_cuKernelGetName(const char **name, CUkernel kernel) {
    ENTER("cuKernelGetName");
    KernelSpec *spec = spec_of(kernel);
    if (!spec) return CUDA_ERROR_INVALID_HANDLE;
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    *name = spec->name.c_str();
    return CUDA_SUCCESS;
}
CUresult param_info(CUkernel kernel, size_t index, size_t *offset, size_t *size) {
    KernelSpec *spec = spec_of(kernel);
    if (!spec) return CUDA_ERROR_INVALID_HANDLE;
    if (!spec->param_info_supported) return CUDA_ERROR_NOT_SUPPORTED;
    if (!offset || !size || index >= spec->param_sizes.size()) return CUDA_ERROR_INVALID_VALUE;
    *offset = param_offset(*spec, index);
    *size = spec->param_sizes[index];
    return CUDA_SUCCESS;
}
CUresult f_cuKernelGetParamInfo(CUkernel kernel, size_t index, size_t *offset, size_t *size) {
    ENTER("cuKernelGetParamInfo");
    return param_info(kernel, index, offset, size);
}
CUresult f_cuFuncGetAttribute(int *value, CUfunction_attribute attribute, CUfunction function) {
    ENTER("cuFuncGetAttribute");
    FakeFunction *f = as_function(function);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    if (!value || attribute < 0 || attribute >= CU_FUNC_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
    *value = kernel_attribute(f->kernel, *spec_of(f->kernel), attribute, device_of(f->context));
    return CUDA_SUCCESS;
}
CUresult f_cuFuncSetAttribute(CUfunction function, CUfunction_attribute attribute, int value) {
    ENTER("cuFuncSetAttribute");
    FakeFunction *f = as_function(function);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    if (attribute < 0 || attribute >= CU_FUNC_ATTRIBUTE_MAX || value < -1) return CUDA_ERROR_INVALID_VALUE;
    g_kernel_attributes[{f->kernel, attribute, device_of(f->context)}] = value;
    return CUDA_SUCCESS;
}
CUresult f_cuFuncGetName(const char **name, CUfunction function) {
    ENTER("cuFuncGetName");
    FakeFunction *f = as_function(function);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    *name = spec_of(f->kernel)->name.c_str();
    return CUDA_SUCCESS;
}
CUresult f_cuFuncGetParamInfo(CUfunction function, size_t index, size_t *offset, size_t *size) {
    ENTER("cuFuncGetParamInfo");
    FakeFunction *f = as_function(function);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    return param_info(f->kernel, index, offset, size);
}
CUresult f_cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction function, void **params, void **extra) {
    ENTER("cuLaunchKernelEx");
    FakeFunction *f = as_function(function);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    if (!config || extra) return CUDA_ERROR_INVALID_VALUE;
    // The stream must belong to the function's context (a default stream: the current one).
    CUcontext stream_context = t_current;
    if (!is_builtin(config->hStream)) {
        FakeStream *stream = as_stream(config->hStream);
        if (!stream) return CUDA_ERROR_INVALID_HANDLE;
        stream_context = stream->context;
    }
    if (stream_context != f->context) return CUDA_ERROR_INVALID_CONTEXT;
    const KernelSpec &spec = *spec_of(f->kernel);
    if (!spec.param_sizes.empty() && !params) return CUDA_ERROR_INVALID_VALUE;
    LaunchRecord record;
    record.config = *config;
    record.attributes.assign(config->attrs, config->attrs + config->numAttrs);
    record.config.attrs = nullptr;
    record.function = function;
    record.kernel = f->kernel;
    record.function_context = f->context;
    record.current = t_current;
    for (size_t i = 0; i < spec.param_sizes.size(); ++i) {
        const auto *bytes = static_cast<const unsigned char *>(params[i]);
        record.args.emplace_back(bytes, bytes + spec.param_sizes[i]);
    }
    g_launches.push_back(std::move(record));
    return CUDA_SUCCESS;
}
CUresult f_cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *blocks, CUfunction function, int block_size,
                                                               size_t shared, unsigned flags) {
    ENTER("cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags");
    FakeFunction *f = as_function(function);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    if (!blocks || block_size <= 0) return CUDA_ERROR_INVALID_VALUE;
    g_last_occupancy = OccupancyCall{};
    g_last_occupancy.entry = "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags";
    g_last_occupancy.function = function;
    g_last_occupancy.block_size = block_size;
    g_last_occupancy.dynamic_shared_bytes = shared;
    g_last_occupancy.flags = flags;
    g_last_occupancy.current = t_current;
    *blocks = spec_of(f->kernel)->max_active_blocks_per_multiprocessor;
    return CUDA_SUCCESS;
}
CUresult f_cuOccupancyMaxPotentialBlockSize(int *min_grid, int *block, CUfunction function,
                                            CUoccupancyB2DSize to_shared, size_t shared, int limit) {
    ENTER("cuOccupancyMaxPotentialBlockSize");
    FakeFunction *f = as_function(function);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    if (!min_grid || !block || to_shared) return CUDA_ERROR_INVALID_VALUE;
    g_last_occupancy = OccupancyCall{};
    g_last_occupancy.entry = "cuOccupancyMaxPotentialBlockSize";
    g_last_occupancy.function = function;
    g_last_occupancy.dynamic_shared_bytes = shared;
    g_last_occupancy.block_size_limit = limit;
    g_last_occupancy.current = t_current;
    const KernelSpec &spec = *spec_of(f->kernel);
    *block = limit > 0 && limit < spec.max_threads_per_block ? limit : spec.max_threads_per_block;
    *min_grid = spec.max_active_blocks_per_multiprocessor * 132;
    return CUDA_SUCCESS;
}
CUresult f_cuOccupancyAvailableDynamicSMemPerBlock(size_t *bytes, CUfunction function, int blocks, int block_size) {
    ENTER("cuOccupancyAvailableDynamicSMemPerBlock");
    FakeFunction *f = as_function(function);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    if (!bytes || blocks <= 0 || block_size <= 0) return CUDA_ERROR_INVALID_VALUE;
    g_last_occupancy = OccupancyCall{};
    g_last_occupancy.entry = "cuOccupancyAvailableDynamicSMemPerBlock";
    g_last_occupancy.function = function;
    g_last_occupancy.num_blocks = blocks;
    g_last_occupancy.block_size = block_size;
    g_last_occupancy.current = t_current;
    *bytes = (size_t{228} << 10) / static_cast<size_t>(blocks);
    return CUDA_SUCCESS;
}
CUresult cluster_query(const char *entry, int *answer, CUfunction function, const CUlaunchConfig *config,
                       int KernelSpec::*value) {
    FakeFunction *f = as_function(function);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    if (!answer || !config) return CUDA_ERROR_INVALID_VALUE;
    g_last_occupancy = OccupancyCall{};
    g_last_occupancy.entry = entry;
    g_last_occupancy.function = function;
    g_last_occupancy.config = *config;
    g_last_occupancy.attributes.assign(config->attrs, config->attrs + config->numAttrs);
    g_last_occupancy.config.attrs = nullptr;
    g_last_occupancy.current = t_current;
    *answer = spec_of(f->kernel)->*value;
    return CUDA_SUCCESS;
}
CUresult f_cuOccupancyMaxPotentialClusterSize(int *size, CUfunction function, const CUlaunchConfig *config) {
    ENTER("cuOccupancyMaxPotentialClusterSize");
    return cluster_query("cuOccupancyMaxPotentialClusterSize", size, function, config,
                         &KernelSpec::max_potential_cluster_size);
}
CUresult f_cuOccupancyMaxActiveClusters(int *clusters, CUfunction function, const CUlaunchConfig *config) {
    ENTER("cuOccupancyMaxActiveClusters");
    return cluster_query("cuOccupancyMaxActiveClusters", clusters, function, config,
                         &KernelSpec::max_active_clusters);
}
void forget_kernels() {
    g_kernel_specs.clear();
    g_functions.clear();
    g_kernel_attributes.clear();
    g_launches.clear();
    g_last_occupancy = OccupancyCall{};
}

}  // namespace

CUkernel make_kernel(const KernelSpec &spec) {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    g_foreign_kernels.push_back(std::make_unique<char>());
    auto kernel = reinterpret_cast<CUkernel>(g_foreign_kernels.back().get());
    g_kernel_specs[kernel] = spec;
    return kernel;
}

void set_kernel_spec(CUkernel kernel, const KernelSpec &spec) {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    g_kernel_specs[kernel] = spec;
}

CUfunction make_function(CUkernel kernel, CUcontext context) {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    return reinterpret_cast<CUfunction>(function_of(kernel, context));
}

std::vector<LaunchRecord> launches() {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    return g_launches;
}

OccupancyCall last_occupancy() {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    return g_last_occupancy;
}

int kernel_attribute_set(CUkernel kernel, CUfunction_attribute attribute, int device) {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    auto it = g_kernel_attributes.find({kernel, attribute, device});
    return it == g_kernel_attributes.end() ? INT32_MIN : it->second;
}

namespace {

CUresult f_cuGraphicsGLRegister(const char *name, CUgraphicsResource *resource, unsigned gl_name, bool image,
                                unsigned flags) {
    if (!resource) return CUDA_ERROR_INVALID_VALUE;
    FakeContext *context = as_context(t_current);
    if (!context) return CUDA_ERROR_INVALID_CONTEXT;
    if (g_gl_device < 0) return CUDA_ERROR_OPERATING_SYSTEM;
    if (context->device != g_gl_device) return CUDA_ERROR_INVALID_DEVICE;
    if (gl_name == 0) return CUDA_ERROR_INVALID_HANDLE;
    if (flags & ~0xFu) return CUDA_ERROR_INVALID_VALUE;
    (void)name;
    auto *graphics = new FakeGraphics();
    graphics->context = t_current;
    graphics->gl_name = gl_name;
    graphics->image = image;
    graphics->flags = flags;
    if (image) {
        for (unsigned level = 0; level < 2; ++level) {
            auto array = std::make_unique<FakeArray>();
            array->owner = graphics;
            array->descriptor.Width = kGlImageWidth >> level;
            array->descriptor.Height = kGlImageHeight >> level;
            array->descriptor.Depth = 0;
            array->descriptor.Format = CU_AD_FORMAT_UNSIGNED_INT8;
            array->descriptor.NumChannels = 4;
            array->descriptor.Flags = (flags & CU_GRAPHICS_REGISTER_FLAGS_SURFACE_LDST) ? CUDA_ARRAY3D_SURFACE_LDST : 0;
            array->data.assign(array->descriptor.Width * array->descriptor.Height * 4, 0);
            graphics->levels.push_back(std::move(array));
        }
    } else {
        graphics->memory.assign(kGlBufferSize, 0);
    }
    g_graphics.insert(graphics);
    *resource = reinterpret_cast<CUgraphicsResource>(graphics);
    return CUDA_SUCCESS;
}

}  // namespace

CUresult f_cuGraphicsGLRegisterBuffer(CUgraphicsResource *resource, unsigned gl_name, unsigned flags) {
    ENTER("cuGraphicsGLRegisterBuffer");
    return f_cuGraphicsGLRegister("cuGraphicsGLRegisterBuffer", resource, gl_name, false, flags);
}
CUresult f_cuGraphicsGLRegisterImage(CUgraphicsResource *resource, unsigned gl_name, unsigned target, unsigned flags) {
    ENTER("cuGraphicsGLRegisterImage");
    if (target == 0) return CUDA_ERROR_INVALID_VALUE;
    return f_cuGraphicsGLRegister("cuGraphicsGLRegisterImage", resource, gl_name, true, flags);
}
CUresult f_cuGraphicsUnregisterResource(CUgraphicsResource resource) {
    ENTER("cuGraphicsUnregisterResource");
    FakeGraphics *graphics = as_graphics(resource);
    if (!graphics) return CUDA_ERROR_INVALID_HANDLE;
    g_graphics_calls.push_back({"cuGraphicsUnregisterResource", resource, nullptr});
    if (graphics->mapped) {
        ++g_graphics_violations;
        return CUDA_ERROR_ALREADY_MAPPED;
    }
    g_graphics.erase(graphics);
    delete graphics;
    return CUDA_SUCCESS;
}
CUresult f_cuGraphicsMapResources(unsigned count, CUgraphicsResource *resources, CUstream stream) {
    ENTER("cuGraphicsMapResources");
    if (count == 0 || !resources) return CUDA_ERROR_INVALID_VALUE;
    if (!(is_builtin(stream) || as_stream(stream))) return CUDA_ERROR_INVALID_HANDLE;
    for (unsigned i = 0; i < count; ++i) {
        FakeGraphics *graphics = as_graphics(resources[i]);
        if (!graphics) return CUDA_ERROR_INVALID_HANDLE;
        if (graphics->context != t_current) return CUDA_ERROR_INVALID_CONTEXT;
        if (graphics->mapped) return CUDA_ERROR_ALREADY_MAPPED;
    }
    for (unsigned i = 0; i < count; ++i) {
        as_graphics(resources[i])->mapped = true;
        g_graphics_calls.push_back({"cuGraphicsMapResources", resources[i], stream});
    }
    return CUDA_SUCCESS;
}
CUresult f_cuGraphicsUnmapResources(unsigned count, CUgraphicsResource *resources, CUstream stream) {
    ENTER("cuGraphicsUnmapResources");
    if (count == 0 || !resources) return CUDA_ERROR_INVALID_VALUE;
    if (!(is_builtin(stream) || as_stream(stream))) return CUDA_ERROR_INVALID_HANDLE;
    for (unsigned i = 0; i < count; ++i) {
        FakeGraphics *graphics = as_graphics(resources[i]);
        if (!graphics) return CUDA_ERROR_INVALID_HANDLE;
        if (!graphics->mapped) return CUDA_ERROR_NOT_MAPPED;
    }
    for (unsigned i = 0; i < count; ++i) {
        as_graphics(resources[i])->mapped = false;
        g_graphics_calls.push_back({"cuGraphicsUnmapResources", resources[i], stream});
    }
    return CUDA_SUCCESS;
}
CUresult f_cuGraphicsResourceGetMappedPointer(CUdeviceptr *address, size_t *size, CUgraphicsResource resource) {
    ENTER("cuGraphicsResourceGetMappedPointer");
    FakeGraphics *graphics = as_graphics(resource);
    if (!graphics || !address || !size) return CUDA_ERROR_INVALID_VALUE;
    if (!graphics->mapped) return CUDA_ERROR_NOT_MAPPED;
    if (graphics->image) return CUDA_ERROR_NOT_MAPPED_AS_POINTER;
    *address = reinterpret_cast<CUdeviceptr>(graphics->memory.data());
    *size = graphics->memory.size();
    return CUDA_SUCCESS;
}
CUresult f_cuGraphicsSubResourceGetMappedArray(CUarray *array, CUgraphicsResource resource, unsigned index,
                                               unsigned level) {
    ENTER("cuGraphicsSubResourceGetMappedArray");
    FakeGraphics *graphics = as_graphics(resource);
    if (!graphics || !array) return CUDA_ERROR_INVALID_VALUE;
    if (!graphics->mapped) return CUDA_ERROR_NOT_MAPPED;
    if (!graphics->image) return CUDA_ERROR_NOT_MAPPED_AS_ARRAY;
    if (index != 0 || level >= graphics->levels.size()) return CUDA_ERROR_INVALID_VALUE;
    *array = reinterpret_cast<CUarray>(graphics->levels[level].get());
    return CUDA_SUCCESS;
}
CUresult f_cuGraphicsResourceGetMappedMipmappedArray(CUmipmappedArray *mipmapped, CUgraphicsResource resource) {
    ENTER("cuGraphicsResourceGetMappedMipmappedArray");
    FakeGraphics *graphics = as_graphics(resource);
    if (!graphics || !mipmapped) return CUDA_ERROR_INVALID_VALUE;
    if (!graphics->mapped) return CUDA_ERROR_NOT_MAPPED;
    if (!graphics->image) return CUDA_ERROR_NOT_MAPPED_AS_ARRAY;
    *mipmapped = reinterpret_cast<CUmipmappedArray>(graphics);  // the resource stands for its mipmapped array
    return CUDA_SUCCESS;
}
CUresult f_cuMipmappedArrayGetLevel(CUarray *array, CUmipmappedArray mipmapped, unsigned level) {
    ENTER("cuMipmappedArrayGetLevel");
    FakeGraphics *graphics = as_graphics(reinterpret_cast<CUgraphicsResource>(mipmapped));
    if (!graphics || !graphics->image || !array) return CUDA_ERROR_INVALID_HANDLE;
    if (level >= graphics->levels.size()) return CUDA_ERROR_INVALID_VALUE;
    *array = reinterpret_cast<CUarray>(graphics->levels[level].get());
    return CUDA_SUCCESS;
}
CUresult f_cuArray3DGetDescriptor(CUDA_ARRAY3D_DESCRIPTOR *descriptor, CUarray array) {
    ENTER("cuArray3DGetDescriptor");
    FakeArray *fake_array = as_array(array);
    if (!fake_array || !descriptor) return CUDA_ERROR_INVALID_HANDLE;
    *descriptor = fake_array->descriptor;
    return CUDA_SUCCESS;
}
CUresult f_cuGraphicsResourceSetMapFlags(CUgraphicsResource resource, unsigned flags) {
    ENTER("cuGraphicsResourceSetMapFlags");
    FakeGraphics *graphics = as_graphics(resource);
    if (!graphics) return CUDA_ERROR_INVALID_HANDLE;
    if (graphics->mapped) return CUDA_ERROR_ALREADY_MAPPED;
    if (flags > CU_GRAPHICS_MAP_RESOURCE_FLAGS_WRITE_DISCARD) return CUDA_ERROR_INVALID_VALUE;
    graphics->map_flags = flags;
    return CUDA_SUCCESS;
}
CUresult f_cuGLGetDevices(unsigned *count, CUdevice *devices, unsigned capacity, int list) {
    ENTER("cuGLGetDevices");
    if (!count || !devices || capacity == 0 || list < 1 || list > 3) return CUDA_ERROR_INVALID_VALUE;
    if (g_gl_device < 0) return CUDA_ERROR_NO_DEVICE;
    *count = 1;
    devices[0] = g_gl_device;
    return CUDA_SUCCESS;
}

namespace {

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
            g_default_pools.back()->props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
            g_default_pools.back()->props.location = {CU_MEM_LOCATION_TYPE_DEVICE, g_default_pools.back()->device};
            g_all_pools.insert(g_default_pools.back().get());
        }
        for (auto &[address, size] : g_allocations) std::free(reinterpret_cast<void *>(address));
        g_allocations.clear();
        g_allocation_pool.clear();
        g_managed.clear();
        g_managed_flags.clear();
        g_exported_pools.clear();
        g_imported_pointers.clear();
        forget_virtual_memory();
        forget_kernels();
        g_attributes.clear();
        g_driver_version = 13000;
        for (FakeGraphics *graphics : g_graphics) delete graphics;
        g_graphics.clear();
        g_graphics_calls.clear();
        g_graphics_violations = 0;
        g_gl_device = 0;
        for (auto &pool : g_default_pools) pool->used = pool->used_high = 0;
        for (FakeStream *stream : g_streams) delete stream;
        g_streams.clear();
        for (FakeEvent *event : g_events) delete event;
        g_events.clear();
        for (FakeLibrary *library : g_libraries) delete library;
        g_libraries.clear();
        for (FakeLink *link : g_links) delete link;
        g_links.clear();
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
    g_managed.clear();
    g_managed_flags.clear();
}

Counters counters() {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    Counters c;
    for (int refs : g_primary_refs) c.primary_retained += refs;
    c.streams = static_cast<int>(g_streams.size());
    c.events = static_cast<int>(g_events.size());
    c.pools = static_cast<int>(g_pools.size());
    c.allocations = static_cast<int>(g_allocations.size());
    for (auto &[handle, physical] : g_physical) c.vmm_handles += physical.released ? 0 : 1;
    c.reservations = static_cast<int>(g_reservations.size());
    c.mappings = static_cast<int>(g_mappings.size());
    c.imported_pointers = static_cast<int>(g_imported_pointers.size());
    c.libraries = static_cast<int>(g_libraries.size());
    c.link_states = static_cast<int>(g_links.size());
    c.graphics_resources = static_cast<int>(g_graphics.size());
    for (FakeGraphics *graphics : g_graphics) c.graphics_mapped += graphics->mapped ? 1 : 0;
    return c;
}

int vmm_access(CUdeviceptr address, int device) {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    auto it = g_mappings.upper_bound(address);
    if (it == g_mappings.begin()) return -1;
    --it;
    if (address >= it->first + it->second.size) return -1;
    auto access = it->second.access.find(device);
    return access == it->second.access.end() ? CU_MEM_ACCESS_FLAGS_PROT_NONE : access->second;
}

CUmemAllocationProp vmm_prop(CUdeviceptr address) {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    auto it = g_mappings.upper_bound(address);
    if (it == g_mappings.begin()) return CUmemAllocationProp{};
    --it;
    if (address >= it->first + it->second.size) return CUmemAllocationProp{};
    return g_physical[it->second.handle].prop;
}

CUmemAccess_flags pool_access(CUmemoryPool pool, int device) {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    return fake_pool_access(reinterpret_cast<FakePool *>(pool), device);
}

unsigned managed_attach_flags(CUdeviceptr address) {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    auto it = g_managed_flags.find(address);
    return it == g_managed_flags.end() ? 0u : it->second;
}

CUmemPoolProps pool_props(CUmemoryPool pool) {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    return reinterpret_cast<FakePool *>(pool)->props;
}

void set_attribute(CUdevice_attribute attribute, int device, int value) {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    g_attributes[{attribute, device}] = value;
}

void set_driver_version(int version) {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    g_driver_version = version;
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

std::string image(const std::vector<std::string> &kernels, const std::vector<std::pair<std::string, size_t>> &globals) {
    std::string text = "FAKECUBIN\n";
    for (const std::string &k : kernels) text += "kernel " + k + "\n";
    for (const auto &[name, size] : globals) text += "global " + name + " " + std::to_string(size) + "\n";
    return text;
}

const KernelRecord *kernel_record(CUkernel kernel) {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    auto *record = reinterpret_cast<KernelRecord *>(kernel);
    for (FakeLibrary *library : g_libraries)
        for (auto &k : library->kernels)
            if (k.get() == record) return record;
    return nullptr;
}

std::vector<std::pair<int, uintptr_t>> last_link_options() {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    return g_link_options;
}
void set_current_context(CUcontext context) { t_current = context; }

}  // namespace fake

namespace fake {

void set_gl_device(int device) {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    g_gl_device = device;
}
std::vector<GraphicsCall> graphics_calls() {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    return g_graphics_calls;
}
int graphics_order_violations() {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    return g_graphics_violations;
}
int graphics_register_flags(CUgraphicsResource resource) {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    FakeGraphics *graphics = as_graphics(resource);
    return graphics ? static_cast<int>(graphics->flags) : -1;
}
int graphics_map_flags(CUgraphicsResource resource) {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    FakeGraphics *graphics = as_graphics(resource);
    return graphics ? static_cast<int>(graphics->map_flags) : -1;
}
std::vector<unsigned char> *graphics_bytes(CUgraphicsResource resource, unsigned level) {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    FakeGraphics *graphics = as_graphics(resource);
    if (!graphics) return nullptr;
    if (!graphics->image) return &graphics->memory;
    return level < graphics->levels.size() ? &graphics->levels[level]->data : nullptr;
}

}  // namespace fake
