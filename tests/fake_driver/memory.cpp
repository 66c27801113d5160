// Device memory: the registry every operation checks its pointers against,
// pools, allocations and frees, copies and fills. Fake device memory is host
// memory, so copies and fills really happen and can be read back.
#include <cstdlib>
#include <cstring>

#include "entry_points.hpp"
#include "graphs.hpp"
#include "state.hpp"

namespace fake::detail {
namespace {

bool accessible(const Mapping &mapping) {
    for (auto &[device, flags] : mapping.access)
        if (flags != CU_MEM_ACCESS_FLAGS_PROT_NONE) return true;
    return false;
}

// The mapping holding `address`, or end().
std::map<CUdeviceptr, Mapping>::iterator mapping_at(CUdeviceptr address) {
    auto &mappings = state().mappings;
    auto it = mappings.upper_bound(address);
    if (it == mappings.begin()) return mappings.end();
    --it;
    return address < it->first + it->second.size ? it : mappings.end();
}

int classify_mappings(CUdeviceptr p, CUdeviceptr end) {
    for (CUdeviceptr at = p; at < end;) {
        auto it = mapping_at(at);
        if (it == state().mappings.end() || !accessible(it->second)) return -1;
        at = it->first + it->second.size;
    }
    return 1;
}

}  // namespace

int classify(CUdeviceptr p, size_t n, Allocation **found) {
    State &g = state();
    const CUdeviceptr end = p + (n ? n : 1);
    if (end < p) return -1;
    auto next = g.allocations.upper_bound(p);
    if (next != g.allocations.begin()) {
        auto &[base, allocation] = *std::prev(next);
        if (p < base + allocation.size) {
            if (allocation.state != AllocationState::live || end > base + allocation.size) return -1;
            if (found) *found = &allocation;
            return 1;
        }
    }
    if (next != g.allocations.end() && next->first < end) return -1;  // runs into an allocation
    if (mapping_at(p) != g.mappings.end()) return classify_mappings(p, end);
    if (is_reserved(p, 1)) return -1;  // reserved, nothing mapped there
    auto mapping = g.mappings.lower_bound(p);
    if (mapping != g.mappings.end() && mapping->first < end) return -1;
    return 0;
}

CUdeviceptr new_allocation(size_t size, MemoryKind kind, int device, Pool *pool) {
    // Aligned as the driver aligns allocations, to at least the texture
    // alignment (kTextureAlignment), so texture objects can read any of them.
    void *memory = nullptr;
    if (size > kDeviceMemory || posix_memalign(&memory, kTextureAlignment, size) != 0) return 0;
    std::memset(memory, kFreshByte, size);
    const auto base = reinterpret_cast<CUdeviceptr>(memory);
    Allocation &a = state().allocations[base];
    a.size = size;
    a.kind = kind;
    a.device = device;
    a.pool = pool;
    a.owns_storage = true;
    return base;
}

void register_storage(void *storage, size_t size, MemoryKind kind, int device) {
    Allocation &a = state().allocations[reinterpret_cast<CUdeviceptr>(storage)];
    a.size = size;
    a.kind = kind;
    a.device = device;
}

void free_allocation(CUdeviceptr base, bool checked) {
    auto it = state().allocations.find(base);
    if (it == state().allocations.end() || it->second.state == AllocationState::freed) return;
    if (checked) note_memory_gone(base, it->second.size);
    it->second.state = AllocationState::freed;
    if (it->second.pool) it->second.pool->used -= it->second.size;
    // A graph allocation's memory stays with its executable (graph_exec.cpp).
}

NodeParams linear_copy(CUdeviceptr dst, CUdeviceptr src, size_t n, CUcontext context) {
    NodeParams params;
    params.type = CU_GRAPH_NODE_TYPE_MEMCPY;
    params.context = context;
    CUDA_MEMCPY3D &c = params.copy;
    c.srcMemoryType = c.dstMemoryType = CU_MEMORYTYPE_UNIFIED;  // device or host, as the address says
    c.srcDevice = src;
    c.dstDevice = dst;
    c.srcPitch = c.dstPitch = c.WidthInBytes = n;
    c.srcHeight = c.dstHeight = c.Height = c.Depth = 1;
    return params;
}

CUresult fill_rows(const CUDA_MEMSET_NODE_PARAMS_v1 &m, bool run) {
    const size_t size = m.elementSize;
    if (size != 1 && size != 2 && size != 4) return CUDA_ERROR_INVALID_VALUE;
    if (!m.dst || m.width == 0 || m.height == 0 || m.dst % size != 0) return CUDA_ERROR_INVALID_VALUE;
    if (m.width > SIZE_MAX / size || (m.height > 1 && (m.pitch < m.width * size || m.pitch % size != 0)))
        return CUDA_ERROR_INVALID_VALUE;
    if (!run) return CUDA_SUCCESS;
    for (size_t row = 0; row < m.height; ++row)
        if (classify(m.dst + row * m.pitch, m.width * size) != 1) return CUDA_ERROR_INVALID_VALUE;
    for (size_t row = 0; row < m.height; ++row) {
        auto *at = reinterpret_cast<unsigned char *>(m.dst + row * m.pitch);
        for (size_t i = 0; i < m.width; ++i) std::memcpy(at + i * size, &m.value, size);  // little-endian: the low bytes
    }
    return CUDA_SUCCESS;
}

CUresult copy_in_order(Lock &lock, Stream &stream, CUdeviceptr dst, CUdeviceptr src, size_t n) {
    const int to = classify(dst, n), from = classify(src, n);
    if (to < 0 || from < 0 || (n && (!dst || !src))) return CUDA_ERROR_INVALID_VALUE;
    if (n == 0) return CUDA_SUCCESS;
    auto *out = reinterpret_cast<unsigned char *>(dst);
    if (to == 0) {  // pageable destination
        state().changed.wait(lock, [&] { return stream.queue.empty(); });
        std::memmove(out, reinterpret_cast<const void *>(src), n);
        return CUDA_SUCCESS;
    }
    if (from == 0) {  // pageable source: staged now
        auto staged = std::make_shared<std::vector<unsigned char>>(reinterpret_cast<const unsigned char *>(src),
                                                                   reinterpret_cast<const unsigned char *>(src) + n);
        enqueue_work(lock, stream, [out, staged] { std::memcpy(out, staged->data(), staged->size()); });
        return CUDA_SUCCESS;
    }
    enqueue_work(lock, stream, [out, src, n] { std::memmove(out, reinterpret_cast<const void *>(src), n); });
    return CUDA_SUCCESS;
}

bool valid_device_location(const CUmemLocation &l) {
    return l.type == CU_MEM_LOCATION_TYPE_DEVICE && l.id >= 0 && l.id < state().devices;
}

namespace {

Pool *as_pool(CUmemoryPool pool) {
    auto *p = reinterpret_cast<Pool *>(pool);
    return state().all_pools.count(p) ? p : nullptr;
}

CUmemAccess_flags pool_access_of(const Pool &p, int device) {
    if (p.device == device || p.props.allocType == CU_MEM_ALLOCATION_TYPE_MANAGED)
        return CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    auto it = p.access.find(device);
    return it == p.access.end() ? CU_MEM_ACCESS_FLAGS_PROT_NONE : it->second;
}

template <class T>
CUresult fill(CUdeviceptr address, T value, size_t count, CUstream stream) {
    if (address % sizeof(T) != 0) return CUDA_ERROR_INVALID_VALUE;  // the driver wants 2- and 4-byte alignment
    if (count > SIZE_MAX / sizeof(T)) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (!s) return error;
    if (count == 0) return CUDA_SUCCESS;
    if (capture_of(*s)) {
        NodeParams params;
        params.type = CU_GRAPH_NODE_TYPE_MEMSET;
        params.memset = {address, 0, static_cast<unsigned>(value), sizeof(T), count, 1};
        params.context = s->context;
        return capture_node(*s, std::move(params));
    }
    const int where = classify(address, count * sizeof(T));
    if (where < 0 || !address) return CUDA_ERROR_INVALID_VALUE;
    auto set = [address, value, count] {
        T *data = reinterpret_cast<T *>(address);
        for (size_t i = 0; i < count; ++i) data[i] = value;
    };
    if (where == 0) {  // pageable host memory (as with HMM): after the stream's earlier work, before returning
        state().changed.wait(lock, [&] { return s->queue.empty(); });
        set();
        return CUDA_SUCCESS;
    }
    enqueue_work(lock, *s, set);
    return CUDA_SUCCESS;
}

}  // namespace

CUresult f_cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice device) {
    if (!pool) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    if (device < 0 || device >= state().devices) return CUDA_ERROR_INVALID_DEVICE;
    *pool = reinterpret_cast<CUmemoryPool>(state().default_pools[device].get());
    return CUDA_SUCCESS;
}
// The current pool of a location: a device's default, or the host's pinned or the managed default pool.
CUresult f_cuMemGetMemPool(CUmemoryPool *pool, CUmemLocation *location, CUmemAllocationType type) {
    if (!pool || !location) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    State &g = state();
    auto make_default = [&g](std::unique_ptr<Pool> &slot, CUmemAllocationType alloc, CUmemLocationType where) {
        if (!slot) {
            slot = std::make_unique<Pool>();
            slot->is_default = true;
            slot->props.allocType = alloc;
            slot->props.location = {where, 0};
            g.all_pools.insert(slot.get());
        }
        return slot.get();
    };
    if (type == CU_MEM_ALLOCATION_TYPE_PINNED && location->type == CU_MEM_LOCATION_TYPE_DEVICE) {
        if (location->id < 0 || location->id >= g.devices) return CUDA_ERROR_INVALID_DEVICE;
        *pool = reinterpret_cast<CUmemoryPool>(g.default_pools[location->id].get());
    } else if (type == CU_MEM_ALLOCATION_TYPE_PINNED && location->type == CU_MEM_LOCATION_TYPE_HOST) {
        *pool = reinterpret_cast<CUmemoryPool>(make_default(g.host_default_pool, type, CU_MEM_LOCATION_TYPE_HOST));
    } else if (type == CU_MEM_ALLOCATION_TYPE_MANAGED && location->type == CU_MEM_LOCATION_TYPE_NONE) {
        *pool = reinterpret_cast<CUmemoryPool>(make_default(g.managed_default_pool, type, CU_MEM_LOCATION_TYPE_NONE));
    } else {
        return CUDA_ERROR_NOT_SUPPORTED;  // the fake keeps no other current pools
    }
    return CUDA_SUCCESS;
}
CUresult f_cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props) {
    if (!pool || !props) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    State &g = state();
    // Device pools, host pools (HOST, HOST_NUMA) of pinned memory, shareable
    // through POSIX file descriptors or not; managed pools, not shareable.
    const CUmemLocationType where = props->location.type;
    const bool device_location = where == CU_MEM_LOCATION_TYPE_DEVICE;
    const bool host_location = where == CU_MEM_LOCATION_TYPE_HOST || where == CU_MEM_LOCATION_TYPE_HOST_NUMA;
    if (props->handleTypes != CU_MEM_HANDLE_TYPE_NONE && props->handleTypes != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return CUDA_ERROR_INVALID_VALUE;
    if (props->allocType == CU_MEM_ALLOCATION_TYPE_PINNED) {
        if (!device_location && !host_location) return CUDA_ERROR_INVALID_VALUE;
    } else if (props->allocType == CU_MEM_ALLOCATION_TYPE_MANAGED) {
        if (!device_location && !host_location && where != CU_MEM_LOCATION_TYPE_NONE) return CUDA_ERROR_INVALID_VALUE;
        if (props->handleTypes != CU_MEM_HANDLE_TYPE_NONE) return CUDA_ERROR_INVALID_VALUE;
    } else {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (device_location && (props->location.id < 0 || props->location.id >= g.devices))
        return CUDA_ERROR_INVALID_DEVICE;
    if (where == CU_MEM_LOCATION_TYPE_HOST_NUMA && props->location.id < 0) return CUDA_ERROR_INVALID_VALUE;
    g.pool_storage.push_back(std::make_unique<Pool>());
    Pool *created = g.pool_storage.back().get();
    created->device = device_location ? props->location.id : -1;
    created->props = *props;
    g.pools.insert(created);
    g.all_pools.insert(created);
    *pool = reinterpret_cast<CUmemoryPool>(created);
    return CUDA_SUCCESS;
}
CUresult f_cuMemPoolDestroy(CUmemoryPool pool) {
    Lock lock(state().mutex);
    // The record stays known: late frees may still name it.
    return state().pools.erase(reinterpret_cast<Pool *>(pool)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult f_cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attribute_argument, void *value) {
    const int attribute = value_of(attribute_argument);
    Lock lock(state().mutex);
    Pool *p = as_pool(pool);
    if (!p || !value) return CUDA_ERROR_INVALID_VALUE;
    switch (attribute) {
        case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
            p->reuse[attribute - 1] = *static_cast<int *>(value);
            break;
        case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: p->release_threshold = *static_cast<cuuint64_t *>(value); break;
        case CU_MEMPOOL_ATTR_USED_MEM_HIGH: p->used_high = 0; break;
        case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: break;
        default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}
CUresult f_cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attribute_argument, void *value) {
    const int attribute = value_of(attribute_argument);
    Lock lock(state().mutex);
    Pool *p = as_pool(pool);
    if (!p || !value) return CUDA_ERROR_INVALID_VALUE;
    switch (attribute) {
        case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
            *static_cast<int *>(value) = p->reuse[attribute - 1];
            break;
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
    Lock lock(state().mutex);
    return as_pool(pool) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult f_cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count) {
    Lock lock(state().mutex);
    Pool *p = as_pool(pool);
    if (!p || !map || count == 0) return CUDA_ERROR_INVALID_VALUE;
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
CUresult f_cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool pool, CUmemLocation *location) {
    Lock lock(state().mutex);
    Pool *p = as_pool(pool);
    if (!p || !flags || !location) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device_location(*location)) return CUDA_ERROR_INVALID_DEVICE;
    *flags = pool_access_of(*p, location->id);
    return CUDA_SUCCESS;
}
namespace {
// A stream-ordered allocation from `p`; on a capturing stream, an allocation node with the pool's properties.
CUresult allocate_from(CUdeviceptr *address, size_t size, Pool *p, Stream &stream) {
    if (capture_of(stream)) {
        if (p->props.location.type != CU_MEM_LOCATION_TYPE_DEVICE || p->props.allocType != CU_MEM_ALLOCATION_TYPE_PINNED)
            return refuse_in_capture(stream);  // graphs allocate device memory only
        NodeParams params;
        params.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
        params.alloc.poolProps = p->props;
        params.alloc.bytesize = size;
        for (auto &[device, flags] : p->access)
            if (device != p->device && flags != CU_MEM_ACCESS_FLAGS_PROT_NONE)
                params.access.push_back({{CU_MEM_LOCATION_TYPE_DEVICE, device}, flags});
        Node *node = nullptr;
        const CUresult result = capture_node(stream, std::move(params), &node);
        if (result == CUDA_SUCCESS) *address = node->params.alloc.dptr;
        return result;
    }
    const size_t max = p->props.maxSize;
    if (max && (size > max || p->used > max - size)) return CUDA_ERROR_OUT_OF_MEMORY;
    const bool managed = p->props.allocType == CU_MEM_ALLOCATION_TYPE_MANAGED;
    const MemoryKind kind = managed ? MemoryKind::managed
                            : p->props.location.type == CU_MEM_LOCATION_TYPE_DEVICE ? MemoryKind::device
                                                                                   : MemoryKind::pinned;
    // Usable at once by the stream's later work (and, in the fake, by any).
    *address = new_allocation(size, kind, p->device, p);
    if (!*address) return CUDA_ERROR_OUT_OF_MEMORY;
    p->used += size;
    if (p->used > p->used_high) p->used_high = p->used;
    return CUDA_SUCCESS;
}
}  // namespace

CUresult f_cuMemAllocFromPoolAsync(CUdeviceptr *address, size_t size, CUmemoryPool pool, CUstream stream) {
    if (!address || size == 0) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Pool *p = as_pool(pool);
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    return s ? allocate_from(address, size, p, *s) : error;
}
// From the default pool of the stream's device (the fake has no cuDeviceSetMemPool).
CUresult f_cuMemAllocAsync(CUdeviceptr *address, size_t size, CUstream stream) {
    if (!address || size == 0) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (!s) return error;
    return allocate_from(address, size, state().default_pools[static_cast<size_t>(device_of(s->context))].get(), *s);
}
CUresult f_cuMemFreeAsync(CUdeviceptr address, CUstream stream) {
    Lock lock(state().mutex);
    State &g = state();
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (!s) return error;
    if (auto imported = g.imported_pointers.find(address); imported != g.imported_pointers.end()) {
        g.imported_pointers.erase(imported);  // an import is unmapped, never freed
        return CUDA_SUCCESS;
    }
    Allocation *a = nullptr;
    auto it = g.allocations.find(address);
    if (it != g.allocations.end()) a = &it->second;
    if (capture_of(*s)) {  // a free node; of graph memory only (a graph's own or one live now)
        if (!a || !a->graph) return refuse_in_capture(*s);
        NodeParams params;
        params.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
        params.free_address = address;
        return capture_node(*s, std::move(params));
    }
    if (!a || a->state != AllocationState::live || (!a->pool && !a->graph))
        return CUDA_ERROR_INVALID_VALUE;  // a double or bad free
    a->state = AllocationState::free_pending;
    enqueue_work(lock, *s, [address] { free_allocation(address); });
    return CUDA_SUCCESS;
}
CUresult f_cuMemGetAddressRange(CUdeviceptr *base, size_t *size, CUdeviceptr address) {
    Lock lock(state().mutex);
    State &g = state();
    if (!as_context(t_current)) return CUDA_ERROR_INVALID_CONTEXT;
    // The live allocation holding `address` (an imported pointer is at its exporter's address).
    auto next = g.allocations.upper_bound(address);
    if (next == g.allocations.begin()) return CUDA_ERROR_NOT_FOUND;
    const auto &[start, allocation] = *std::prev(next);
    if (address >= start + allocation.size || allocation.state != AllocationState::live) return CUDA_ERROR_NOT_FOUND;
    if (base) *base = start;
    if (size) *size = allocation.size;
    return CUDA_SUCCESS;
}
CUresult f_cuMemAllocHost(void **pointer, size_t size) {
    if (!pointer || size == 0) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Context *context = as_context(t_current);
    if (!context) return CUDA_ERROR_INVALID_CONTEXT;
    const CUdeviceptr base = new_allocation(size, MemoryKind::pinned, context->device, nullptr);
    if (!base) return CUDA_ERROR_OUT_OF_MEMORY;
    *pointer = reinterpret_cast<void *>(base);
    return CUDA_SUCCESS;
}
CUresult f_cuMemFreeHost(void *pointer) {
    Lock lock(state().mutex);
    auto it = state().allocations.find(reinterpret_cast<CUdeviceptr>(pointer));
    if (it == state().allocations.end() || it->second.state != AllocationState::live ||
        it->second.kind != MemoryKind::pinned || it->second.pool)
        return CUDA_ERROR_INVALID_VALUE;
    free_allocation(it->first);
    return CUDA_SUCCESS;
}
CUresult f_cuMemAlloc(CUdeviceptr *address, size_t size) {
    if (!address || size == 0) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Context *context = as_context(t_current);
    if (!context) return CUDA_ERROR_INVALID_CONTEXT;
    if (unsafe_call_prohibited()) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    *address = new_allocation(size, MemoryKind::device, context->device, nullptr);
    return *address ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
// cuMemAlloc's and cuMemAllocManaged's memory only (not a pool's), as the
// driver frees, so a resource freeing the wrong way fails.
CUresult f_cuMemFree(CUdeviceptr address) {
    Lock lock(state().mutex);
    if (!as_context(t_current)) return CUDA_ERROR_INVALID_CONTEXT;
    if (unsafe_call_prohibited()) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    auto it = state().allocations.find(address);
    if (it == state().allocations.end()) return CUDA_ERROR_INVALID_VALUE;
    const Allocation &a = it->second;
    const bool from_alloc = a.kind == MemoryKind::device || (a.kind == MemoryKind::managed && a.attach_flags);
    const bool freeable = !a.pool && from_alloc;
    if (a.state != AllocationState::live || !freeable) return CUDA_ERROR_INVALID_VALUE;
    free_allocation(address);
    return CUDA_SUCCESS;
}
CUresult f_cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t size, CUstream stream) {
    Lock lock(state().mutex);
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (s && capture_of(*s)) return capture_node(*s, linear_copy(dst, src, size, s->context));
    return s ? copy_in_order(lock, *s, dst, src, size) : error;
}
CUresult f_cuMemsetD8Async(CUdeviceptr a, unsigned char v, size_t n, CUstream s) { return fill(a, v, n, s); }
CUresult f_cuMemsetD16Async(CUdeviceptr a, unsigned short v, size_t n, CUstream s) { return fill(a, v, n, s); }
CUresult f_cuMemsetD32Async(CUdeviceptr a, unsigned int v, size_t n, CUstream s) { return fill(a, v, n, s); }
// Between two contexts' memory: device memory must belong to its context's device.
CUresult f_cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_context, CUdeviceptr src, CUcontext src_context,
                             size_t size, CUstream stream) {
    Lock lock(state().mutex);
    Context *to = as_context(dst_context), *from = as_context(src_context);
    if (!to || !from) return CUDA_ERROR_INVALID_CONTEXT;
    Allocation *dst_allocation = nullptr, *src_allocation = nullptr;
    if (classify(dst, size, &dst_allocation) == 1 && dst_allocation && dst_allocation->kind == MemoryKind::device &&
        dst_allocation->device != to->device)
        return CUDA_ERROR_INVALID_VALUE;
    if (classify(src, size, &src_allocation) == 1 && src_allocation && src_allocation->kind == MemoryKind::device &&
        src_allocation->device != from->device)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (s && capture_of(*s)) return capture_node(*s, linear_copy(dst, src, size, s->context));
    return s ? copy_in_order(lock, *s, dst, src, size) : error;
}
// Synchronous copies: after every stream's queued work (the real ones order
// after the legacy stream only; the tests synchronize their streams first).
namespace {
CUresult copy_now(CUdeviceptr dst, CUdeviceptr src, size_t size) {
    Lock lock(state().mutex);
    if (!as_context(t_current)) return CUDA_ERROR_INVALID_CONTEXT;
    if (!dst || !src) return CUDA_ERROR_INVALID_VALUE;
    if (unsafe_call_prohibited()) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    wait_all_streams(lock);
    if (classify(dst, size) < 0 || classify(src, size) < 0) return CUDA_ERROR_INVALID_VALUE;
    std::memmove(reinterpret_cast<void *>(dst), reinterpret_cast<const void *>(src), size);
    return CUDA_SUCCESS;
}
}  // namespace
CUresult f_cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t size) {
    return copy_now(reinterpret_cast<CUdeviceptr>(dst), src, size);
}
CUresult f_cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t size) {
    return copy_now(dst, reinterpret_cast<CUdeviceptr>(src), size);
}

}  // namespace fake::detail

namespace fake {

using detail::Lock;
using detail::state;

void forget_allocations() {
    Lock lock(state().mutex);
    for (auto &[base, allocation] : state().allocations) detail::free_allocation(base, /*checked=*/false);
}

CUmemAccess_flags pool_access(CUmemoryPool pool, int device) {
    Lock lock(state().mutex);
    return detail::pool_access_of(*reinterpret_cast<detail::Pool *>(pool), device);
}

CUmemPoolProps pool_props(CUmemoryPool pool) {
    Lock lock(state().mutex);
    return reinterpret_cast<detail::Pool *>(pool)->props;
}

}  // namespace fake
