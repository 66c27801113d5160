// Stream-ordered memory pools (cuMemPoolCreate / cuMemAllocFromPoolAsync /
// cuMemFreeAsync): device pools, pinned host pools and managed pools.
#include "core/memory_pool.hpp"

#include <random>
#include <string>

#include "core/device.hpp"
#include "core/error.hpp"
#include "core/owned.hpp"
#include "core/release.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

namespace {
void require_pools(Device &device) {
    if (!device.attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED))
        throw Error(CUCORE_ERROR_NOT_SUPPORTED,
                    "device " + std::to_string(device.ordinal()) + " does not support memory pools");
}

MemoryTraits device_memory(Device &device) { return MemoryTraits{device.ordinal(), true, false, false}; }

PoolId random_pool_id() {
    std::random_device source;
    PoolId id{};
    for (size_t i = 0; i < id.size(); i += 4) {
        const uint32_t word = source();
        for (size_t j = 0; j < 4; ++j) id[i + j] = static_cast<uint8_t>(word >> (8 * j));
    }
    return id;
}

CUmemAllocationHandleType ipc_handle_type(bool ipc_enabled) {
    return ipc_enabled ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
}

// Grants `device` read-write access to a pool unless it already has it (host
// pools are reachable only from the CPU until told otherwise).
void grant_access(CUmemoryPool pool, Device &device) {
    CUmemLocation location{};
    location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    location.id = device.cu();
    CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    CUCORE_CALL(cuMemPoolGetAccess, &flags, pool, &location);
    if (flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE) return;
    CUmemAccessDesc access{};
    access.location = location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CUCORE_CALL(cuMemPoolSetAccess, pool, &access, 1);
}

// The deleter of a pool made here and not yet handed to its resource.
struct DestroyUnmadePool {
    void operator()(CUmemoryPool pool) const noexcept { destroy_pool(pool, "destroying a pool that was not made"); }
};

// A new pool with the release threshold applied, owned by the box until its
// resource exists.
Owned<CUmemoryPool, DestroyUnmadePool> create_pool(const CUmemPoolProps &props,
                                                   const PoolResource::Options &options) {
    CUmemoryPool raw = nullptr;
    CUCORE_CALL(cuMemPoolCreate, &raw, &props);
    Owned<CUmemoryPool, DestroyUnmadePool> pool(raw, DestroyUnmadePool{});
    if (options.release_threshold != 0) {
        cuuint64_t threshold = options.release_threshold;
        CUCORE_CALL(cuMemPoolSetAttribute, pool.get(), CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold);
    }
    return pool;
}
}  // namespace

void destroy_pool(CUmemoryPool pool, const char *what) noexcept {
    release_reported("cuMemPoolDestroy", what, [pool](const driver::Table &api) {
        return api.cuMemPoolDestroy ? api.cuMemPoolDestroy(pool) : CUDA_ERROR_NOT_INITIALIZED;
    });
}

Ref<PoolResource> PoolResource::device_current(Device &device) {
    require_pools(device);
    Ref<Context> context = device.primary_context();
    CUmemoryPool pool = nullptr;
    CUCORE_CALL(cuDeviceGetMemPool, &pool, device.cu());
    return make<PoolResource>(CUCORE_MEMORY_RESOURCE_DEVICE, std::move(context), device_memory(device), pool, false,
                              false);
}

namespace {
// The driver's current pool of `type` memory at `location` (CUDA 13's cuMemGetMemPool).
CUmemoryPool current_pool(Device &device, CUmemLocationType location_type, CUmemAllocationType type, const char *what) {
    require_pools(device);
    if (Device::driver_version() < 13000)
        throw Error(CUCORE_ERROR_NOT_SUPPORTED, std::string("the current ") + what + " pool needs a CUDA 13 driver");
    CUmemLocation location{};
    location.type = location_type;
    location.id = 0;
    CUmemoryPool pool = nullptr;
    CUCORE_CALL(cuMemGetMemPool, &pool, &location, type);
    return pool;
}
}  // namespace

Ref<PoolResource> PoolResource::host_current(Device &device) {
    Ref<Context> context = device.primary_context();
    const CUmemoryPool pool = current_pool(device, CU_MEM_LOCATION_TYPE_HOST, CU_MEM_ALLOCATION_TYPE_PINNED, "host");
    {
        ScopedContext bind(context->cu());
        grant_access(pool, device);
    }
    return make<PoolResource>(CUCORE_MEMORY_RESOURCE_PINNED, std::move(context), MemoryTraits{-1, true, true, false},
                              pool, false, false);
}

Ref<PoolResource> PoolResource::managed_current(Device &device) {
    if (!device.attribute(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY))
        throw Error(CUCORE_ERROR_NOT_SUPPORTED,
                    "device " + std::to_string(device.ordinal()) + " does not support managed memory");
    Ref<Context> context = device.primary_context();
    const CUmemoryPool pool =
        current_pool(device, CU_MEM_LOCATION_TYPE_NONE, CU_MEM_ALLOCATION_TYPE_MANAGED, "managed memory");
    return make<PoolResource>(CUCORE_MEMORY_RESOURCE_MANAGED, std::move(context),
                              MemoryTraits{device.ordinal(), true, true, true}, pool, false, false);
}

Ref<PoolResource> PoolResource::device_pool(Device &device, const Options &options) {
    require_pools(device);
    Ref<Context> context = device.primary_context();
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.handleTypes = ipc_handle_type(options.ipc_enabled);
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = device.cu();
    props.maxSize = static_cast<size_t>(options.max_size);
    auto pool = create_pool(props, options);
    const PoolId id = options.ipc_enabled ? random_pool_id() : PoolId{};
    Ref<PoolResource> resource = make<PoolResource>(CUCORE_MEMORY_RESOURCE_DEVICE, std::move(context),
                                                    device_memory(device), pool.get(), true, options.ipc_enabled);
    pool.release();  // the resource destroys it from here
    if (options.ipc_enabled) resource->set_pool_id(id);
    return resource;
}

Ref<PoolResource> PoolResource::pinned_pool(Device &device, const Options &options, std::optional<int> numa_id) {
    require_pools(device);
    Ref<Context> context = device.primary_context();
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.handleTypes = ipc_handle_type(options.ipc_enabled);
    // Plain host pools cannot be shared, so a shareable one takes NUMA node 0
    // when none was named.
    const bool numa = numa_id.has_value() || options.ipc_enabled;
    props.location.type = numa ? CU_MEM_LOCATION_TYPE_HOST_NUMA : CU_MEM_LOCATION_TYPE_HOST;
    props.location.id = numa_id.value_or(0);
    props.maxSize = static_cast<size_t>(options.max_size);
    auto pool = create_pool(props, options);
    {
        ScopedContext bind(context->cu());
        grant_access(pool.get(), device);
    }
    const PoolId id = options.ipc_enabled ? random_pool_id() : PoolId{};
    Ref<PoolResource> resource = make<PoolResource>(CUCORE_MEMORY_RESOURCE_PINNED, std::move(context),
                                                    MemoryTraits{-1, true, true, false}, pool.get(), true,
                                                    options.ipc_enabled);
    pool.release();  // the resource destroys it from here
    if (options.ipc_enabled) resource->set_pool_id(id);
    return resource;
}

Ref<PoolResource> PoolResource::managed_pool(Device &device, const Options &options, cucore_location_t preferred) {
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
    props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
    if (preferred.type == CUCORE_LOCATION_NONE) {
        props.location.type = CU_MEM_LOCATION_TYPE_NONE;
    } else {
        props.location = to_cu_location(preferred);
    }
    props.maxSize = static_cast<size_t>(options.max_size);
    if (!device.attribute(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY))
        throw Error(CUCORE_ERROR_NOT_SUPPORTED,
                    "device " + std::to_string(device.ordinal()) + " does not support managed memory");
    require_pools(device);
    if (Device::driver_version() < 13000)
        throw Error(CUCORE_ERROR_NOT_SUPPORTED, "managed memory pools need a CUDA 13 driver");
    Ref<Context> context = device.primary_context();
    auto pool = create_pool(props, options);
    Ref<PoolResource> resource = make<PoolResource>(CUCORE_MEMORY_RESOURCE_MANAGED, std::move(context),
                                                    MemoryTraits{device.ordinal(), true, true, true}, pool.get(),
                                                    true, false);
    pool.release();  // the resource destroys it from here
    return resource;
}

PoolResource::PoolResource(cucore_memory_resource_kind_t kind, Ref<Context> context, MemoryTraits traits,
                           CUmemoryPool pool, bool owns_pool, bool ipc_enabled) noexcept
    : MemoryResource(kind, std::move(context), traits, true),
      pool_(pool),
      owns_pool_(owns_pool),
      ipc_enabled_(ipc_enabled) {}

PoolResource::~PoolResource() {
    if (owns_pool_) destroy_pool(pool_, "destroying a memory pool");
}

CUdeviceptr PoolResource::allocate_raw(uint64_t size, Stream *stream) {
    CUdeviceptr address = 0;
    ScopedContext bind(stream->cu_context(), stream->is_builtin());
    CUCORE_CALL(cuMemAllocFromPoolAsync, &address, static_cast<size_t>(size), pool_, stream->cu());
    return address;
}

namespace {
// Forced inline: a pool buffer's free is the hot half of every allocate + free.
[[gnu::always_inline]] inline void free_on(CUdeviceptr address, Stream *stream, CUcontext context) {
    ScopedContext bind(stream ? stream->cu_context() : context, !stream || stream->is_builtin());
    CUCORE_CALL(cuMemFreeAsync, address, stream ? stream->cu() : CU_STREAM_LEGACY);
}
}  // namespace

void PoolResource::deallocate(CUdeviceptr address, uint64_t, Stream *stream) {
    free_on(address, stream, context()->cu());
}

void free_async(CUdeviceptr address, Stream *stream, CUcontext context) {
    free_on(address, stream, context);
}

// Pool attributes: the public values are the driver's (checked here).
static_assert(static_cast<int>(CUCORE_POOL_ATTRIBUTE_REUSE_FOLLOW_EVENT_DEPENDENCIES) ==
              static_cast<int>(CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES));
static_assert(static_cast<int>(CUCORE_POOL_ATTRIBUTE_USED_MEM_HIGH) == static_cast<int>(CU_MEMPOOL_ATTR_USED_MEM_HIGH));
static_assert(static_cast<int>(CUCORE_POOL_ATTRIBUTE_RELEASE_THRESHOLD) ==
              static_cast<int>(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD));

bool is_pool_flag(cucore_pool_attribute_t attribute) noexcept {
    return attribute >= CUCORE_POOL_ATTRIBUTE_REUSE_FOLLOW_EVENT_DEPENDENCIES &&
           attribute <= CUCORE_POOL_ATTRIBUTE_REUSE_ALLOW_INTERNAL_DEPENDENCIES;
}

uint64_t PoolResource::pool_attribute(cucore_pool_attribute_t attribute) const {
    const auto driver_attribute = static_cast<CUmemPool_attribute>(attribute);
    if (is_pool_flag(attribute)) {
        int flag = 0;
        CUCORE_CALL(cuMemPoolGetAttribute, pool_, driver_attribute, &flag);
        return flag ? 1 : 0;
    }
    cuuint64_t bytes = 0;
    CUCORE_CALL(cuMemPoolGetAttribute, pool_, driver_attribute, &bytes);
    return bytes;
}

void PoolResource::set_pool_attribute(cucore_pool_attribute_t attribute, uint64_t value) {
    const auto driver_attribute = static_cast<CUmemPool_attribute>(attribute);
    if (is_pool_flag(attribute)) {
        int flag = static_cast<int>(value);
        CUCORE_CALL(cuMemPoolSetAttribute, pool_, driver_attribute, &flag);
    } else {
        cuuint64_t bytes = value;
        CUCORE_CALL(cuMemPoolSetAttribute, pool_, driver_attribute, &bytes);
    }
}

void PoolResource::trim(uint64_t min_bytes_to_keep) {
    CUCORE_CALL(cuMemPoolTrimTo, pool_, static_cast<size_t>(min_bytes_to_keep));
}

void PoolResource::set_peer_access(Device &peer, cucore_access_t access) {
    if (is_managed()) not_supported("peer access: managed memory is reachable from every device already");
    if (access == CUCORE_ACCESS_READ)  // (unknown values are refused by the C ABI)
        throw_invalid_argument("memory pools grant read-write access or none, not read-only");
    const int owner = context()->device().ordinal();
    if (peer.ordinal() == owner) {
        if (access == CUCORE_ACCESS_NONE)
            throw_invalid_argument("a pool's own device (" + std::to_string(owner) + ") cannot lose access to it");
        return;  // it has it already (host pools were granted it at creation)
    }
    if (device_id() >= 0 && peer.ordinal() != owner) {
        int can_access = 0;
        CUCORE_CALL(cuDeviceCanAccessPeer, &can_access, peer.cu(), context()->device().cu());
        if (!can_access)
            throw Error(CUCORE_ERROR_NOT_SUPPORTED, "device " + std::to_string(peer.ordinal()) +
                                                        " cannot access the memory of device " +
                                                        std::to_string(owner));
    }
    CUmemAccessDesc desc{};
    desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    desc.location.id = peer.cu();
    desc.flags = access == CUCORE_ACCESS_NONE ? CU_MEM_ACCESS_FLAGS_PROT_NONE : CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CUCORE_CALL(cuMemPoolSetAccess, pool_, &desc, 1);
}

cucore_access_t PoolResource::peer_access(Device &peer) const {
    if (is_managed()) not_supported("peer access: managed memory is reachable from every device already");
    CUmemLocation location{};
    location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    location.id = peer.cu();
    CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    CUCORE_CALL(cuMemPoolGetAccess, &flags, pool_, &location);
    switch (flags) {
        case CU_MEM_ACCESS_FLAGS_PROT_READ: return CUCORE_ACCESS_READ;
        case CU_MEM_ACCESS_FLAGS_PROT_READWRITE: return CUCORE_ACCESS_READ_WRITE;
        default: return CUCORE_ACCESS_NONE;
    }
}

PoolId PoolResource::pool_id() const {
    std::lock_guard<std::mutex> lock(id_mutex_);
    if (!has_id_)
        throw Error(CUCORE_ERROR_NOT_SUPPORTED, "this memory pool is not shareable (created without ipc_enabled)");
    return id_;
}

void PoolResource::set_pool_id(const PoolId &id) noexcept {
    std::lock_guard<std::mutex> lock(id_mutex_);
    id_ = id;
    has_id_ = true;
}

}  // namespace cucore::core
