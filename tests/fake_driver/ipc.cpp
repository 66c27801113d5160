// IPC, in one process: an exported pool's file descriptor is a memfd known by
// its inode; an imported pointer is "mapped" at the exporter's address (copies
// through either side see the same bytes), so cuMemFreeAsync of an imported
// address unmaps it instead of freeing; an opened event shares the exporter's
// timeline, so waiting on it waits for the exporter's record.
#include <cstring>

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "entry_points.hpp"
#include "state.hpp"

namespace fake::detail {
namespace {

constexpr uint64_t kExportMagic = 0xFA4E1BC0DE5EA1EDull;

std::pair<dev_t, ino_t> fd_identity(int fd) {
    struct stat st {};
    if (fstat(fd, &st) != 0) return {0, 0};
    return {st.st_dev, st.st_ino};
}

}  // namespace

CUresult f_cuMemPoolExportToShareableHandle(void *handle, CUmemoryPool pool, CUmemAllocationHandleType type_argument,
                                            unsigned long long flags) {
    const int type = value_of(type_argument);
    Lock lock(state().mutex);
    State &g = state();
    auto *p = reinterpret_cast<Pool *>(pool);
    if (!handle || flags != 0 || !g.pools.count(p) || p->imported_from) return CUDA_ERROR_INVALID_VALUE;
    if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || !(p->props.handleTypes & type))
        return CUDA_ERROR_INVALID_VALUE;  // the pool was not created shareable this way
    const int fd = memfd_create("cucore-fake-pool", MFD_CLOEXEC);
    if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    g.exported_pools[fd_identity(fd)] = p;
    *static_cast<int *>(handle) = fd;
    return CUDA_SUCCESS;
}
CUresult f_cuMemPoolImportFromShareableHandle(CUmemoryPool *pool, void *handle,
                                              CUmemAllocationHandleType type_argument, unsigned long long flags) {
    const int type = value_of(type_argument);
    if (!pool || flags != 0 || type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_INVALID_VALUE;
    const int fd = static_cast<int>(reinterpret_cast<intptr_t>(handle));
    Lock lock(state().mutex);
    State &g = state();
    auto found = g.exported_pools.find(fd_identity(fd));
    if (found == g.exported_pools.end() || !g.pools.count(found->second)) return CUDA_ERROR_INVALID_VALUE;
    g.pool_storage.push_back(std::make_unique<Pool>());
    Pool *imported = g.pool_storage.back().get();
    imported->device = found->second->device;
    imported->props = found->second->props;
    imported->imported_from = found->second;
    g.pools.insert(imported);
    g.all_pools.insert(imported);
    *pool = reinterpret_cast<CUmemoryPool>(imported);
    return CUDA_SUCCESS;
}
CUresult f_cuMemPoolExportPointer(CUmemPoolPtrExportData *data, CUdeviceptr address) {
    if (!data) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    auto it = state().allocations.find(address);
    if (it == state().allocations.end() || it->second.state != AllocationState::live || !it->second.pool ||
        !(it->second.pool->props.handleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
        return CUDA_ERROR_INVALID_VALUE;
    std::memset(data, 0, sizeof *data);
    const uint64_t words[3] = {kExportMagic, static_cast<uint64_t>(address),
                               static_cast<uint64_t>(reinterpret_cast<uintptr_t>(it->second.pool))};
    std::memcpy(data->reserved, words, sizeof words);
    return CUDA_SUCCESS;
}
CUresult f_cuMemPoolImportPointer(CUdeviceptr *address, CUmemoryPool pool, CUmemPoolPtrExportData *data) {
    if (!address || !data) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    State &g = state();
    auto *p = reinterpret_cast<Pool *>(pool);
    if (!g.pools.count(p) || !p->imported_from) return CUDA_ERROR_INVALID_VALUE;
    uint64_t words[3];
    std::memcpy(words, data->reserved, sizeof words);
    const auto exported = static_cast<CUdeviceptr>(words[1]);
    auto owner = g.allocations.find(exported);
    if (words[0] != kExportMagic || reinterpret_cast<uintptr_t>(p->imported_from) != words[2] ||
        owner == g.allocations.end() || owner->second.state != AllocationState::live ||
        owner->second.pool != p->imported_from)
        return CUDA_ERROR_INVALID_VALUE;
    for (auto [it, end] = g.imported_pointers.equal_range(exported); it != end; ++it)
        if (it->second == p) return CUDA_ERROR_ALREADY_MAPPED;  // the driver maps each pointer once
    g.imported_pointers.emplace(exported, p);
    *address = exported;
    return CUDA_SUCCESS;
}
CUresult f_cuIpcGetEventHandle(CUipcEventHandle *handle, CUevent event) {
    Lock lock(state().mutex);
    Event *e = as_event(event);
    if (!handle || !e) return CUDA_ERROR_INVALID_HANDLE;
    if (!(e->flags & CU_EVENT_INTERPROCESS) || !(e->flags & CU_EVENT_DISABLE_TIMING)) return CUDA_ERROR_INVALID_VALUE;
    std::memset(handle, 0, sizeof *handle);
    std::memcpy(handle->reserved, &kExportMagic, sizeof kExportMagic);
    std::memcpy(handle->reserved + sizeof kExportMagic, &e, sizeof e);
    return CUDA_SUCCESS;
}
CUresult f_cuIpcOpenEventHandle(CUevent *event, CUipcEventHandle handle) {
    if (!event) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    State &g = state();
    if (!as_context(t_current)) return CUDA_ERROR_INVALID_CONTEXT;
    uint64_t magic = 0;
    Event *source = nullptr;
    std::memcpy(&magic, handle.reserved, sizeof magic);
    std::memcpy(&source, handle.reserved + sizeof magic, sizeof source);
    if (magic != kExportMagic || !g.events.count(source)) return CUDA_ERROR_INVALID_VALUE;
    g.event_storage.push_back(std::make_unique<Event>());
    g.event_storage.back()->context = t_current;
    g.event_storage.back()->flags = source->flags;
    g.event_storage.back()->timeline = source->timeline;
    g.events.insert(g.event_storage.back().get());
    *event = reinterpret_cast<CUevent>(g.event_storage.back().get());
    return CUDA_SUCCESS;
}

}  // namespace fake::detail
