// Virtual memory management. Physical memory is a memfd; reservations come
// from one inaccessible host address range (the arena, never returned, so no
// other allocation reuses its addresses), placed deterministically: each new
// one leaves a gap of its own size after it, so a reservation can be extended
// in place (hint = its end) unless a test blocks the gap. cuMemMap maps the
// memfd there, so two mappings of the same memory show the same bytes and a
// grown buffer keeps its contents, as on a device.
#include <cstring>

#include <sys/mman.h>
#include <unistd.h>

#include "entry_points.hpp"
#include "state.hpp"

namespace fake::detail {
namespace {

// Address space only. 1 TiB where the process can have it; under ThreadSanitizer, whose shadow memory takes
// most of the address space, a mapping that large fails depending on the layout, so smaller ones are tried
// (halving down to 16 GiB, still far more than any test reserves).
constexpr size_t kArenaSizeWanted = size_t{1} << 40;
constexpr size_t kArenaSizeLeast = size_t{1} << 34;
constexpr size_t kArenaAlignment = size_t{2} << 20;

bool valid_vmm_prop(const CUmemAllocationProp *prop) {
    if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED) return false;
    if (prop->requestedHandleTypes != CU_MEM_HANDLE_TYPE_NONE &&
        prop->requestedHandleTypes != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return false;
    switch (prop->location.type) {
        case CU_MEM_LOCATION_TYPE_DEVICE: return prop->location.id >= 0 && prop->location.id < state().devices;
        case CU_MEM_LOCATION_TYPE_HOST:
        case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT: return true;
        case CU_MEM_LOCATION_TYPE_HOST_NUMA: return prop->location.id >= 0;
        default: return false;
    }
}

// Physical memory goes when it is released and no longer mapped (as in the driver).
void drop_physical_if_unused(CUmemGenericAllocationHandle handle) {
    auto it = state().physical.find(handle);
    if (it != state().physical.end() && it->second.released && it->second.maps == 0) {
        close(it->second.fd);
        state().physical.erase(it);
    }
}

// Whether no reservation overlaps [address, address + size) and it lies in the arena.
bool is_free_range(uintptr_t address, size_t size) {
    const State &g = state();
    if (address < g.arena || address + size > g.arena + g.arena_size || address + size < address) return false;
    auto next = g.reservations.lower_bound(address);
    if (next != g.reservations.end() && next->first < address + size) return false;
    return next == g.reservations.begin() || std::prev(next)->first + std::prev(next)->second <= address;
}

// The first free range of `size` at or after `start`, aligned; 0 when the arena is full.
uintptr_t first_fit(uintptr_t start, size_t size, size_t alignment) {
    const State &g = state();
    start = (start + alignment - 1) / alignment * alignment;
    for (auto it = g.reservations.upper_bound(start); !is_free_range(start, size);) {
        if (it != g.reservations.begin() && std::prev(it)->first + std::prev(it)->second > start) --it;
        if (it == g.reservations.end() || start + size > g.arena + g.arena_size) return 0;
        start = (it->first + it->second + alignment - 1) / alignment * alignment;
        it = g.reservations.upper_bound(start);
    }
    return start;
}

void make_inaccessible(CUdeviceptr address, size_t size) {
    mmap(reinterpret_cast<void *>(address), size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED,
         -1, 0);
}

}  // namespace

bool is_reserved(CUdeviceptr address, size_t size) {
    const auto &reservations = state().reservations;
    for (CUdeviceptr at = address, end = address + size; at < end;) {
        auto it = reservations.upper_bound(at);
        if (it == reservations.begin()) return false;
        --it;
        if (at >= it->first + it->second) return false;
        at = it->first + it->second;  // adjacent reservations count as one
    }
    return true;
}

void forget_virtual_memory() {
    State &g = state();
    for (auto &[address, mapping] : g.mappings) make_inaccessible(address, mapping.size);
    g.reservations.clear();
    g.mappings.clear();
    for (auto &[handle, physical] : g.physical) close(physical.fd);
    g.physical.clear();
    if (!g.arena) {  // once per process; never unmapped (only address space)
        for (size_t size = kArenaSizeWanted; !g.arena && size >= kArenaSizeLeast; size /= 2) {
            void *arena = mmap(nullptr, size + kArenaAlignment, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                               -1, 0);
            if (arena == MAP_FAILED) continue;
            g.arena = (reinterpret_cast<uintptr_t>(arena) + kArenaAlignment - 1) & ~(kArenaAlignment - 1);
            g.arena_size = size;
        }
    }
    g.arena_next = g.arena;
}

CUresult f_cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                         CUmemAllocationGranularity_flags option_argument) {
    const int option = value_of(option_argument);
    Lock lock(state().mutex);
    if (!granularity || !valid_vmm_prop(prop)) return CUDA_ERROR_INVALID_VALUE;
    if (option == CU_MEM_ALLOC_GRANULARITY_MINIMUM) *granularity = kVmmMinimumGranularity;
    else if (option == CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) *granularity = kVmmRecommendedGranularity;
    else return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}
CUresult f_cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                       unsigned long long flags) {
    Lock lock(state().mutex);
    if (!handle || !valid_vmm_prop(prop) || flags != 0 || size == 0 || size % kVmmMinimumGranularity != 0)
        return CUDA_ERROR_INVALID_VALUE;
    const int fd = memfd_create("cucore-fake-vmm", MFD_CLOEXEC);
    if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    void *fill = MAP_FAILED;
    if (ftruncate(fd, static_cast<off_t>(size)) == 0)
        fill = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (fill == MAP_FAILED) {
        close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    std::memset(fill, kFreshByte, size);
    munmap(fill, size);
    *handle = state().next_physical++;
    state().physical[*handle] = Physical{fd, size, *prop};
    return CUDA_SUCCESS;
}
CUresult f_cuMemRelease(CUmemGenericAllocationHandle handle) {
    Lock lock(state().mutex);
    auto it = state().physical.find(handle);
    if (it == state().physical.end() || it->second.released) return CUDA_ERROR_INVALID_VALUE;
    it->second.released = true;
    drop_physical_if_unused(handle);
    return CUDA_SUCCESS;
}
CUresult f_cuMemAddressReserve(CUdeviceptr *address, size_t size, size_t alignment, CUdeviceptr hint,
                               unsigned long long flags) {
    if (!address || size == 0 || size % kVmmMinimumGranularity != 0 || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if ((alignment & (alignment - 1)) != 0 || hint % kVmmMinimumGranularity != 0) return CUDA_ERROR_INVALID_VALUE;
    if (alignment == 0) alignment = kVmmMinimumGranularity;
    if (alignment % kVmmMinimumGranularity != 0) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    State &g = state();
    uintptr_t start = 0;
    if (hint != 0 && hint % alignment == 0 && is_free_range(hint, size)) {
        start = hint;  // a hint is honoured when that range is free
    } else {
        start = first_fit(g.arena_next, size, alignment);
        if (!start) start = first_fit(g.arena, size, alignment);  // wrapped: reuse freed ranges
        if (!start) return CUDA_ERROR_OUT_OF_MEMORY;
        g.arena_next = start + 2 * size;
    }
    *address = static_cast<CUdeviceptr>(start);
    g.reservations[*address] = size;
    return CUDA_SUCCESS;
}
CUresult f_cuMemAddressFree(CUdeviceptr address, size_t size) {
    Lock lock(state().mutex);
    State &g = state();
    auto it = g.reservations.find(address);
    if (it == g.reservations.end() || it->second != size) return CUDA_ERROR_INVALID_VALUE;
    // A range with memory still mapped in it is refused (unmap first), so leaks show.
    auto mapped = g.mappings.lower_bound(address);
    if (mapped != g.mappings.end() && mapped->first < address + size) return CUDA_ERROR_INVALID_VALUE;
    g.reservations.erase(it);  // the arena's pages are inaccessible again since the unmap
    return CUDA_SUCCESS;
}
CUresult f_cuMemMap(CUdeviceptr address, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                    unsigned long long flags) {
    Lock lock(state().mutex);
    State &g = state();
    auto physical = g.physical.find(handle);
    if (physical == g.physical.end() || physical->second.released || flags != 0 || size == 0 ||
        size % kVmmMinimumGranularity != 0 || offset % kVmmMinimumGranularity != 0 ||
        address % kVmmMinimumGranularity != 0 || offset + size > physical->second.size || !is_reserved(address, size))
        return CUDA_ERROR_INVALID_VALUE;
    auto next = g.mappings.lower_bound(address);
    if (next != g.mappings.end() && next->first < address + size) return CUDA_ERROR_INVALID_VALUE;  // overlap
    if (next != g.mappings.begin() && std::prev(next)->first + std::prev(next)->second.size > address)
        return CUDA_ERROR_INVALID_VALUE;
    void *at = mmap(reinterpret_cast<void *>(address), size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                    physical->second.fd, static_cast<off_t>(offset));
    if (at == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    ++physical->second.maps;
    g.mappings[address] = Mapping{size, handle, {}};  // no device may access it until cuMemSetAccess
    return CUDA_SUCCESS;
}
CUresult f_cuMemUnmap(CUdeviceptr address, size_t size) {
    Lock lock(state().mutex);
    State &g = state();
    // Every mapping in the range goes; a mapping cut by the range's ends is an error.
    auto first = g.mappings.lower_bound(address);
    if (first != g.mappings.begin() && std::prev(first)->first + std::prev(first)->second.size > address)
        return CUDA_ERROR_INVALID_VALUE;
    auto last = first;
    while (last != g.mappings.end() && last->first < address + size) {
        if (last->first + last->second.size > address + size) return CUDA_ERROR_INVALID_VALUE;
        ++last;
    }
    if (first == last) return CUDA_ERROR_INVALID_VALUE;  // nothing mapped there
    wait_all_streams(lock);  // queued work may still touch it
    first = g.mappings.lower_bound(address);
    while (first != g.mappings.end() && first->first < address + size) {
        make_inaccessible(first->first, first->second.size);
        const CUmemGenericAllocationHandle handle = first->second.handle;
        --g.physical[handle].maps;
        first = g.mappings.erase(first);
        drop_physical_if_unused(handle);
    }
    return CUDA_SUCCESS;
}
CUresult f_cuMemSetAccess(CUdeviceptr address, size_t size, const CUmemAccessDesc *desc, size_t count) {
    if (!desc || count == 0 || size == 0) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    State &g = state();
    for (size_t i = 0; i < count; ++i) {
        if (!valid_device_location(desc[i].location)) return CUDA_ERROR_INVALID_DEVICE;
        if (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE && desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
            desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            return CUDA_ERROR_INVALID_VALUE;
    }
    // Every byte of the range must be mapped.
    std::vector<Mapping *> covered;
    for (CUdeviceptr at = address; at < address + size;) {
        auto it = g.mappings.upper_bound(at);
        if (it == g.mappings.begin()) return CUDA_ERROR_INVALID_VALUE;
        --it;
        if (at >= it->first + it->second.size) return CUDA_ERROR_INVALID_VALUE;
        covered.push_back(&it->second);
        at = it->first + it->second.size;
    }
    for (Mapping *mapping : covered)
        for (size_t i = 0; i < count; ++i) mapping->access[desc[i].location.id] = desc[i].flags;
    return CUDA_SUCCESS;
}

}  // namespace fake::detail

namespace fake {

using detail::Lock;
using detail::state;

int vmm_access(CUdeviceptr address, int device) {
    Lock lock(state().mutex);
    auto it = state().mappings.upper_bound(address);
    if (it == state().mappings.begin()) return -1;
    --it;
    if (address >= it->first + it->second.size) return -1;
    auto access = it->second.access.find(device);
    return access == it->second.access.end() ? CU_MEM_ACCESS_FLAGS_PROT_NONE : access->second;
}

CUmemAllocationProp vmm_prop(CUdeviceptr address) {
    Lock lock(state().mutex);
    auto it = state().mappings.upper_bound(address);
    if (it == state().mappings.begin()) return CUmemAllocationProp{};
    --it;
    if (address >= it->first + it->second.size) return CUmemAllocationProp{};
    return state().physical[it->second.handle].prop;
}

}  // namespace fake
