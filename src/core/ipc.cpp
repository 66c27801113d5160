#include "core/ipc.hpp"

#include <fcntl.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <unistd.h>

#include "core/device.hpp"
#include "core/error.hpp"
#include "core/owned.hpp"
#include "core/release.hpp"
#include "driver/driver.hpp"

namespace cucore::core::ipc {

namespace {

#if defined(__linux__)
constexpr bool kSupported = true;
#else
constexpr bool kSupported = false;
#endif

void require_linux() {
    if (!kSupported)
        throw Error(CUCORE_ERROR_NOT_SUPPORTED, "IPC needs POSIX file descriptors (Linux)");
}

// A pool imported into this process, and the buffers imported from it that
// are still alive (the driver maps each exported pointer once per process).
struct ImportedPool {
    WeakRef<PoolResource> resource;
    std::mutex mutex;  // guards buffers
    std::map<ExportData, std::weak_ptr<Allocation>> buffers;
};

// Process-wide: PoolId -> the pool imported under it (entries whose resource
// died are replaced on the next import of that pool and swept meanwhile).
std::mutex g_mutex;
std::map<PoolId, std::shared_ptr<ImportedPool>> *g_pools = new std::map<PoolId, std::shared_ptr<ImportedPool>>();
// (Leaked on purpose: resources may be released from static destructors.)

PoolResource *as_pool(MemoryResource &resource) { return dynamic_cast<PoolResource *>(&resource); }

// Binds the resource's context for driver calls that name only a pool or a
// pointer (these are cold paths, so the binding is not worth skipping).
CUcontext context_of(const MemoryResource &resource) {
    return resource.context() ? resource.context()->cu() : nullptr;
}

// A descriptor's size is only its claim (its checksum is no key: anyone can forge a size and recompute it):
// the driver's range of the imported pointer decides. Throws INVALID_ARGUMENT when the descriptor claims more
// bytes than the driver mapped from `address` on.
void check_imported_size(CUdeviceptr address, uint64_t size, CUcontext context) {
    CUdeviceptr base = 0;
    size_t range = 0;
    {
        ScopedContext bind(context);
        CUCORE_CALL(cuMemGetAddressRange, &base, &range, address);
    }
    const uint64_t mapped = address >= base && address - base <= range ? base + range - address : 0;
    if (size > mapped)
        throw_invalid_argument("argument 'descriptor' gives the buffer's size as " + std::to_string(size) +
                               " bytes, but the driver's range of the imported pointer (cuMemGetAddressRange) has " +
                               std::to_string(mapped) +
                               " bytes: the descriptor is damaged or forged, and nothing was imported");
}

std::shared_ptr<ImportedPool> entry_of(PoolResource &pool) {
    const PoolId id = pool.pool_id();
    std::lock_guard<std::mutex> lock(g_mutex);
    auto found = g_pools->find(id);
    if (found == g_pools->end() || !found->second->resource.refers_to(&pool))
        throw Error(CUCORE_ERROR_INTERNAL, "the imported pool " + hex(id) + " is missing from the IPC registry");
    return found->second;
}

void sweep_pools() {
    for (auto it = g_pools->begin(); it != g_pools->end();) {
        if (it->second->resource.lock())
            ++it;
        else
            it = g_pools->erase(it);
    }
}

void sweep_buffers(ImportedPool &entry) {
    for (auto it = entry.buffers.begin(); it != entry.buffers.end();) {
        if (it->second.expired())
            it = entry.buffers.erase(it);
        else
            ++it;
    }
}

}  // namespace

cucore_ipc_pool_handle_t export_pool(MemoryResource &resource) {
    PoolResource *pool = as_pool(resource);
    if (!pool || !pool->ipc_enabled())
        throw Error(CUCORE_ERROR_NOT_SUPPORTED,
                    "argument 'resource' is not a memory pool created with ipc_enabled = 1, so it cannot be "
                    "shared with other processes");
    require_linux();
    cucore_ipc_pool_handle_t handle{};
    handle.fd = -1;
    handle.kind = static_cast<uint32_t>(pool->kind());
    const PoolId id = pool->pool_id();
    std::memcpy(handle.pool_id, id.data(), id.size());
    int fd = -1;
    {
        ScopedContext bind(context_of(*pool), pool->context() != nullptr);
        CUCORE_CALL(cuMemPoolExportToShareableHandle, &fd, pool->pool(), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    }
    handle.fd = fd;
    return handle;
}

Ref<PoolResource> import_pool(Device &device, const cucore_ipc_pool_handle_t &handle) {
    require_linux();
    const auto kind = static_cast<cucore_memory_resource_kind_t>(handle.kind);
    if (kind != CUCORE_MEMORY_RESOURCE_DEVICE && kind != CUCORE_MEMORY_RESOURCE_PINNED)
        throw_invalid_argument("argument 'handle->kind' is " + std::to_string(handle.kind) +
                               "; an exported pool is CUCORE_MEMORY_RESOURCE_DEVICE or CUCORE_MEMORY_RESOURCE_PINNED");
    if (handle.fd < 0 || ::fcntl(handle.fd, F_GETFD) == -1)
        throw_invalid_argument("argument 'handle->fd' (" + std::to_string(handle.fd) +
                               ") is not an open file descriptor");
    PoolId id;
    std::memcpy(id.data(), handle.pool_id, id.size());

    std::lock_guard<std::mutex> lock(g_mutex);
    sweep_pools();
    auto found = g_pools->find(id);
    if (found != g_pools->end()) {
        if (Ref<PoolResource> existing = found->second->resource.lock()) {
            const int on = existing->context()->device().ordinal();
            if (on != device.ordinal())
                throw_invalid_argument("pool " + hex(id) + " is already imported on device " + std::to_string(on) +
                                       "; use that resource (peer access grants other devices)");
            return existing;
        }
    }
    Ref<Context> context = device.primary_context();
    CUmemoryPool raw = nullptr;
    ScopedContext bind(context->cu());
    CUCORE_CALL(cuMemPoolImportFromShareableHandle, &raw,
                reinterpret_cast<void *>(static_cast<intptr_t>(handle.fd)), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                0);
    auto imported = own(raw, [](CUmemoryPool unmade) noexcept {
        destroy_pool(unmade, "destroying an imported pool that was not made");
    });
    MemoryTraits traits{device.ordinal(), true, false, false};
    if (kind == CUCORE_MEMORY_RESOURCE_PINNED) {
        // Host pools are reachable from no device until granted.
        CUmemAccessDesc access{};
        access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        access.location.id = device.cu();
        access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        CUCORE_CALL(cuMemPoolSetAccess, imported.get(), &access, 1);
        traits = MemoryTraits{-1, true, true, false};
    }
    Ref<PoolResource> pool =
        make<PoolResource>(CUCORE_MEMORY_RESOURCE_IMPORTED, std::move(context), traits, imported.get(), true, false);
    imported.release();  // the resource destroys it from here: a failure below destroys it with the Ref
    pool->set_pool_id(id);
    auto entry = std::make_shared<ImportedPool>();
    entry->resource = WeakRef<PoolResource>(pool.get());
    (*g_pools)[id] = std::move(entry);
    return pool;
}

PoolId pool_id(const MemoryResource &resource) {
    const auto *pool = dynamic_cast<const PoolResource *>(&resource);
    if (!pool)
        throw Error(CUCORE_ERROR_NOT_SUPPORTED, "argument 'resource' is not a memory pool, so it has no pool id");
    return pool->pool_id();
}

BufferDescriptor export_buffer(Buffer &buffer) {
    buffer.check_open("buffer");
    std::shared_ptr<Allocation> allocation = buffer.allocation();
    if (!allocation) throw Error(CUCORE_ERROR_INVALID_STATE, "argument 'buffer' is a closed buffer");
    if (!buffer.is_whole_allocation())
        throw_invalid_argument("argument 'buffer' is a view: only a whole buffer can be exported (export the "
                               "buffer it views and take the view in the importing process)");
    PoolResource *pool = allocation->resource() ? as_pool(*allocation->resource()) : nullptr;
    if (!pool || !pool->ipc_enabled())
        throw_invalid_argument("argument 'buffer' does not come from an IPC-enabled pool (a device or pinned "
                               "memory resource created with ipc_enabled = 1)");
    const uint64_t size = buffer.size();
    if (size == 0) throw_invalid_argument("argument 'buffer' is empty: a zero-size buffer has no memory to share");
    BufferExport exported;
    exported.kind = pool->kind();
    exported.pool_id = pool->pool_id();
    exported.size = size;
    CUmemPoolPtrExportData data{};
    {
        ScopedContext bind(context_of(*pool), pool->context() != nullptr);
        const driver::Table &api = driver::api();
        CUresult result = CUCORE_DRIVER(cuMemPoolExportPointer)(&data, allocation->address());
        if (result == CUDA_ERROR_INVALID_VALUE && api.cuMemPoolExportToShareableHandle) {
            // On an H100 (driver 580) pointers of a shareable pool that was never
            // exported were refused with INVALID_VALUE: export the pool once
            // (closing the descriptor at once) and try again.
            int fd = -1;
            if (api.cuMemPoolExportToShareableHandle(&fd, pool->pool(), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                                                     0) == CUDA_SUCCESS) {
                ::close(fd);
                result = api.cuMemPoolExportPointer(&data, allocation->address());
            }
        }
        if (result != CUDA_SUCCESS) throw_cuda(result, "cuMemPoolExportPointer");
    }
    std::memcpy(exported.data.data(), &data, sizeof data);
    return encode_buffer(exported);
}

Ref<Buffer> import_buffer(MemoryResource &resource, const uint8_t *descriptor, uint64_t size, Stream &stream) {
    PoolResource *pool = as_pool(resource);
    if (!pool || pool->kind() != CUCORE_MEMORY_RESOURCE_IMPORTED)
        throw_invalid_argument("argument 'resource' is not a pool imported from another process "
                               "(cucore_ipc_import_memory_resource)");
    const BufferExport exported = decode_buffer(descriptor, size);
    const PoolId id = pool->pool_id();
    if (exported.pool_id != id)
        throw_invalid_argument("argument 'descriptor' belongs to another pool (" + hex(exported.pool_id) +
                               "), not to the pool of 'resource' (" + hex(id) + ")");
    const bool host = exported.kind == CUCORE_MEMORY_RESOURCE_PINNED;
    if (host != (resource.device_id() < 0))
        throw_invalid_argument("argument 'descriptor' describes " + std::string(host ? "pinned host" : "device") +
                               " memory, but 'resource' was imported as " + (host ? "device" : "pinned host") +
                               " memory");
    if (!host && stream.device_ordinal() != resource.device_id())
        throw_invalid_argument("argument 'stream' belongs to device " + std::to_string(stream.device_ordinal()) +
                               ", the imported pool to device " + std::to_string(resource.device_id()));

    const CUcontext context = context_of(resource);
    std::shared_ptr<ImportedPool> entry = entry_of(*pool);
    std::lock_guard<std::mutex> lock(entry->mutex);
    auto found = entry->buffers.find(exported.data);
    if (found != entry->buffers.end()) {
        if (std::shared_ptr<Allocation> shared = found->second.lock()) {
            const CUdeviceptr address = shared->address();
            check_imported_size(address, exported.size, context);
            return make<Buffer>(std::move(shared), address, exported.size, resource.traits());
        }
    }
    CUdeviceptr address = 0;
    {
        CUmemPoolPtrExportData data;
        std::memcpy(&data, exported.data.data(), sizeof data);
        ScopedContext bind(context);
        CUCORE_CALL(cuMemPoolImportPointer, &address, pool->pool(), &data);
    }
    // The imported pointer is memory of no resource that allocates (the pool cannot): it goes back with
    // cuMemFreeAsync on the buffer's deallocation stream (the import's unless changed), by the allocation's
    // deleter; until the allocation holds it, by the box, on the import's stream.
    auto imported = own(address, [context, on = &stream](CUdeviceptr unmade) noexcept {
        run_reported("unmapping an imported buffer", [&] { free_async(unmade, on, context); });
    });
    check_imported_size(address, exported.size, context);  // a refused size unmaps the import (the box)
    std::shared_ptr<Allocation> allocation = std::allocate_shared<Allocation>(
        PooledAllocator<Allocation>(), address, exported.size, Ref<Stream>(&stream),
        Allocation::Deleter([address, context](Stream *deallocation) { free_async(address, deallocation, context); }),
        Ref<MemoryResource>(pool));  // the pool is the buffers' resource and lives while they do
    imported.release();  // a failure from here frees the import with the allocation
    Ref<Buffer> buffer = make<Buffer>(allocation, address, exported.size, resource.traits());
    sweep_buffers(*entry);
    entry->buffers[exported.data] = allocation;
    return buffer;
}

EventDescriptor export_event(Event &event) {
    // Wrapped foreign events have unknown flags: the driver decides for them.
    if (event.owned() && !(event.flags() & CUCORE_EVENT_INTERPROCESS))
        throw_invalid_argument("argument 'event' was created without CUCORE_EVENT_INTERPROCESS, so it cannot be "
                               "shared with other processes");
    CUipcEventHandle handle{};
    {
        ScopedContext bind(event.context().cu());
        CUCORE_CALL(cuIpcGetEventHandle, &handle, event.escape());
    }
    return encode_event(handle);
}

Ref<Event> import_event(Device &device, const uint8_t *descriptor, uint64_t size) {
    const CUipcEventHandle handle = decode_event(descriptor, size);
    Ref<Context> context = device.primary_context();
    CUevent raw = nullptr;
    {
        ScopedContext bind(context->cu());
        CUCORE_CALL(cuIpcOpenEventHandle, &raw, handle);
    }
    auto opened = own(raw, [](CUevent event) noexcept {
        destroy_event(event, "destroying an imported event after a failed import");
    });
    // An opened event behaves as one created with these flags (no timing).
    Ref<Event> event =
        make<Event>(std::move(context), opened.get(), static_cast<uint32_t>(CUCORE_EVENT_INTERPROCESS), true);
    opened.release();  // the Event destroys it from here
    return event;
}

}  // namespace cucore::core::ipc
