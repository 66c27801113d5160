// Managed memory: cuMemAllocManaged (host memory, usable at once from the host
// and every device), advice, prefetch and discard (in stream order) and range
// attributes. The fake keeps the advice and the last prefetch's location per
// allocation; a discard fills the memory with kDiscardedByte.
#include <cstring>

#include "entry_points.hpp"
#include "graphs.hpp"
#include "state.hpp"

namespace fake::detail {
namespace {

// The managed allocation holding all of [address, address + size), or null.
Allocation *managed_range(CUdeviceptr address, size_t size) {
    Allocation *a = nullptr;
    if (size == 0 || classify(address, size, &a) != 1 || !a || a->kind != MemoryKind::managed) return nullptr;
    return a;
}

bool valid_location(const CUmemLocation &l) {
    return valid_device_location(l) || l.type == CU_MEM_LOCATION_TYPE_HOST ||
           l.type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT || (l.type == CU_MEM_LOCATION_TYPE_HOST_NUMA && l.id >= 0);
}

// The driver's int for a location in the legacy attributes: an ordinal, -1 (CPU) or -2 (none).
int legacy_location(const CUmemLocation &l) {
    if (l.type == CU_MEM_LOCATION_TYPE_DEVICE) return l.id;
    return l.type == CU_MEM_LOCATION_TYPE_INVALID ? -2 : -1;
}

// Queues a discard (with a prefetch to `where` unless null) of each range.
CUresult discard(Lock &lock, CUdeviceptr *addresses, size_t *sizes, size_t count, const CUmemLocation *where,
                 const size_t *location_of, CUstream stream) {
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (!s) return error;
    if (capture_of(*s)) return refuse_in_capture(*s);  // no graph node does this
    for (size_t i = 0; i < count; ++i)
        if (!managed_range(addresses[i], sizes[i])) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; ++i) {
        const CUdeviceptr address = addresses[i];
        const size_t size = sizes[i];
        const bool prefetch = where != nullptr;
        const CUmemLocation to = prefetch ? where[location_of[i]] : CUmemLocation{};
        enqueue_work(lock, *s, [address, size, prefetch, to] {
            Allocation *a = managed_range(address, size);
            if (!a) return;  // freed meanwhile
            std::memset(reinterpret_cast<void *>(address), kDiscardedByte, size);
            if (prefetch) a->advice.last_prefetch = to;
        });
    }
    return CUDA_SUCCESS;
}

}  // namespace

CUresult f_cuMemAllocManaged(CUdeviceptr *address, size_t size, unsigned flags) {
    if (!address || size == 0 || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
        return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Context *context = as_context(t_current);
    if (!context) return CUDA_ERROR_INVALID_CONTEXT;
    *address = new_allocation(size, MemoryKind::managed, context->device, nullptr);
    if (!*address) return CUDA_ERROR_OUT_OF_MEMORY;
    state().allocations[*address].attach_flags = flags;
    return CUDA_SUCCESS;
}
CUresult f_cuMemAdvise(CUdeviceptr address, size_t size, CUmem_advise advice_argument, CUmemLocation location) {
    const int advice = value_of(advice_argument);
    Lock lock(state().mutex);
    Allocation *a = managed_range(address, size);
    if (!a) return CUDA_ERROR_INVALID_VALUE;
    if (a->pool) return CUDA_ERROR_NOT_SUPPORTED;  // managed-pool memory, as driver 580 on an H100 answers
    Advice &m = a->advice;
    switch (advice) {
        case CU_MEM_ADVISE_SET_READ_MOSTLY: m.read_mostly = 1; break;
        case CU_MEM_ADVISE_UNSET_READ_MOSTLY: m.read_mostly = 0; break;
        case CU_MEM_ADVISE_SET_PREFERRED_LOCATION:
            if (!valid_location(location)) return CUDA_ERROR_INVALID_DEVICE;
            m.preferred = location;
            break;
        case CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION: m.preferred = {CU_MEM_LOCATION_TYPE_INVALID, 0}; break;
        case CU_MEM_ADVISE_SET_ACCESSED_BY:
        case CU_MEM_ADVISE_UNSET_ACCESSED_BY: {
            if (!valid_device_location(location) && location.type != CU_MEM_LOCATION_TYPE_HOST)
                return CUDA_ERROR_INVALID_DEVICE;
            const int who = location.type == CU_MEM_LOCATION_TYPE_HOST ? -1 : location.id;
            if (advice == CU_MEM_ADVISE_SET_ACCESSED_BY) m.accessed_by.insert(who);
            else m.accessed_by.erase(who);
            break;
        }
        default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}
CUresult f_cuMemPrefetchAsync(CUdeviceptr address, size_t size, CUmemLocation location, unsigned flags,
                              CUstream stream) {
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (!s) return error;
    if (capture_of(*s)) return refuse_in_capture(*s);  // no graph node does this
    if (!managed_range(address, size)) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_location(location)) return CUDA_ERROR_INVALID_DEVICE;
    enqueue_work(lock, *s, [address, size, location] {
        if (Allocation *a = managed_range(address, size)) a->advice.last_prefetch = location;
    });
    return CUDA_SUCCESS;
}
CUresult f_cuMemDiscardBatchAsync(CUdeviceptr *addresses, size_t *sizes, size_t count, unsigned long long flags,
                                  CUstream stream) {
    if (!addresses || !sizes || count == 0 || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    return discard(lock, addresses, sizes, count, nullptr, nullptr, stream);
}
// Location k applies from operation location_indices[k] on.
CUresult f_cuMemDiscardAndPrefetchBatchAsync(CUdeviceptr *addresses, size_t *sizes, size_t count,
                                             CUmemLocation *locations, size_t *location_indices, size_t locations_count,
                                             unsigned long long flags, CUstream stream) {
    if (!addresses || !sizes || count == 0 || flags != 0 || !locations || !location_indices || locations_count == 0 ||
        location_indices[0] != 0)
        return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    for (size_t k = 0; k < locations_count; ++k)
        if (!valid_location(locations[k]) || location_indices[k] >= count) return CUDA_ERROR_INVALID_VALUE;
    std::vector<size_t> location_of(count);
    for (size_t i = 0, k = 0; i < count; ++i) {
        while (k + 1 < locations_count && location_indices[k + 1] <= i) ++k;
        location_of[i] = k;
    }
    return discard(lock, addresses, sizes, count, locations, location_of.data(), stream);
}
CUresult f_cuMemRangeGetAttribute(void *data, size_t data_size, CUmem_range_attribute attribute_argument,
                                  CUdeviceptr address, size_t size) {
    const int attribute = value_of(attribute_argument);
    if (!data) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Allocation *a = managed_range(address, size);
    if (!a) return CUDA_ERROR_INVALID_VALUE;
    const Advice &m = a->advice;
    auto *out = static_cast<int *>(data);
    if (attribute == CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY) {
        if (data_size == 0 || data_size % 4 != 0) return CUDA_ERROR_INVALID_VALUE;
        const size_t capacity = data_size / 4;
        size_t n = 0;
        for (int device : m.accessed_by)  // the devices, then the host (-1)
            if (device >= 0 && n < capacity) out[n++] = device;
        if (m.accessed_by.count(-1) && n < capacity) out[n++] = -1;
        for (; n < capacity; ++n) out[n] = -2;  // CU_DEVICE_INVALID ends the list
        return CUDA_SUCCESS;
    }
    if (data_size != 4) return CUDA_ERROR_INVALID_VALUE;
    switch (attribute) {
        case CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY: *out = m.read_mostly; break;
        case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION: *out = legacy_location(m.preferred); break;
        case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION: *out = legacy_location(m.last_prefetch); break;
        case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE: *out = m.preferred.type; break;
        case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID: *out = m.preferred.id; break;
        case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE: *out = m.last_prefetch.type; break;
        case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID: *out = m.last_prefetch.id; break;
        default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

}  // namespace fake::detail

namespace fake {

unsigned managed_attach_flags(CUdeviceptr address) {
    detail::Lock lock(detail::state().mutex);
    auto it = detail::state().allocations.find(address);
    return it == detail::state().allocations.end() ? 0u : it->second.attach_flags;
}

}  // namespace fake
