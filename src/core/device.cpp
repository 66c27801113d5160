#include "core/device.hpp"

#include <cstring>
#include <memory>
#include <vector>

#include "core/buffer.hpp"
#include "core/context.hpp"
#include "core/error.hpp"
#include "core/memory_pool.hpp"
#include "core/owned.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

// The public enum mirrors the driver's values (both generated from cuda.h).
#include "core/device_attributes_check.inc"

namespace {
std::mutex g_registry_mutex;
// Never destroyed: the records live for the process, and static destruction
// must not release contexts after the driver is gone.
std::vector<Device::Shared *> &registry() {
    static auto *records = new std::vector<Device::Shared *>();
    return *records;
}
// The driver table the records were read from: records (and the primary
// contexts they know) belong to one driver, so another table (tests install
// substitutes) starts a new registry. Old records stay allocated: objects made
// under the old table may still point to them.
const driver::Table *g_registry_table = nullptr;
}  // namespace

int Device::count() {
    const driver::State &state = driver::state();
    if (state.init_result == CUDA_ERROR_NO_DEVICE) return 0;
    int count = 0;
    CUCORE_CALL(cuDeviceGetCount, &count);
    return count;
}

int Device::driver_version() {
    int version = 0;
    CUCORE_CALL(cuDriverGetVersion, &version);
    return version;
}

Ref<Device> Device::get(int ordinal, bool caches_primary) {
    if (ordinal < 0) throw_invalid_argument("argument 'ordinal' is negative (" + std::to_string(ordinal) + ")");
    int devices = count();
    if (ordinal >= devices)
        throw Error(CUCORE_ERROR_NO_DEVICE, "there is no CUDA device " + std::to_string(ordinal) + " (" +
                                                std::to_string(devices) + " device" +
                                                (devices == 1 ? "" : "s") + " visible)");
    Shared *record = nullptr;
    {
        std::lock_guard<std::mutex> lock(g_registry_mutex);
        auto &records = registry();
        const driver::Table *table = &driver::api();
        if (table != g_registry_table) {
            records.clear();
            g_registry_table = table;
        }
        if (static_cast<size_t>(ordinal) < records.size()) record = records[ordinal];
        if (!record) {
            auto fresh = std::make_unique<Shared>();
            fresh->ordinal = ordinal;
            CUCORE_CALL(cuDeviceGet, &fresh->device, ordinal);
            char name[256] = {};
            CUCORE_CALL(cuDeviceGetName, name, static_cast<int>(sizeof name), fresh->device);
            char bus_id[64] = {};
            CUCORE_CALL(cuDeviceGetPCIBusId, bus_id, static_cast<int>(sizeof bus_id), fresh->device);
            CUCORE_CALL(cuDeviceGetUuid, &fresh->uuid, fresh->device);
            fresh->name = name;
            fresh->pci_bus_id = bus_id;
            if (records.size() <= static_cast<size_t>(ordinal)) records.resize(ordinal + 1, nullptr);
            record = records[ordinal] = fresh.release();
        }
    }
    return make<Device>(*record, caches_primary);
}

Ref<Device> Device::current() {
    CUcontext context = nullptr;
    CUCORE_CALL(cuCtxGetCurrent, &context);
    if (!context) return get(0);
    CUdevice device = 0;
    CUCORE_CALL(cuCtxGetDevice, &device);
    return get(ordinal_of(device));
}

int Device::ordinal_of(CUdevice device) {
    int devices = count();
    for (int ordinal = 0; ordinal < devices; ++ordinal) {
        CUdevice candidate = 0;
        CUCORE_CALL(cuDeviceGet, &candidate, ordinal);
        if (candidate == device) return ordinal;
    }
    throw Error(CUCORE_ERROR_NO_DEVICE, "the driver reported CUdevice " + std::to_string(device) +
                                            ", which matches no device ordinal");
}

Device::Device(Shared &shared, bool caches_primary) noexcept
    : Object(CUCORE_OBJECT_DEVICE), shared_(shared), caches_primary_(caches_primary) {}

Device::~Device() {
    if (Context *cached = cached_primary_.load(std::memory_order_acquire)) handles::release_held(cached);
}

int Device::ordinal() const noexcept { return shared_.ordinal; }
CUdevice Device::cu() const noexcept { return shared_.device; }
const std::string &Device::name() const noexcept { return shared_.name; }
const std::string &Device::pci_bus_id() const noexcept { return shared_.pci_bus_id; }
const CUuuid &Device::uuid() const noexcept { return shared_.uuid; }

uint64_t Device::total_memory() const {
    size_t bytes = 0;
    CUCORE_CALL(cuDeviceTotalMem, &bytes, shared_.device);
    return bytes;
}

int Device::attribute(CUdevice_attribute attribute) const {
    int value = 0;
    CUCORE_CALL(cuDeviceGetAttribute, &value, attribute, shared_.device);
    return value;
}

void Device::properties(cucore_device_properties_t &out) const {
    out.ordinal = shared_.ordinal;
    compute_capability(out.compute_capability_major, out.compute_capability_minor);
    out.multiprocessor_count = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    out.max_threads_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    out.max_threads_per_multiprocessor = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    out.warp_size = attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    out.max_shared_memory_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    out.max_shared_memory_per_multiprocessor = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    out.l2_cache_size = attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    out.clock_rate_khz = attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    out.memory_clock_rate_khz = attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    out.memory_bus_width = attribute(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    out.pci_domain_id = attribute(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
    out.pci_bus_id = attribute(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
    out.pci_device_id = attribute(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
    out.integrated = attribute(CU_DEVICE_ATTRIBUTE_INTEGRATED);
    out.concurrent_managed_access = attribute(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS);
    out.memory_pools_supported = attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED);
    out.cooperative_launch = attribute(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH);
    out.unified_addressing = attribute(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING);
    out.total_memory = total_memory();
}

bool Device::can_access_peer(const Device &peer) const {
    if (peer.shared_.device == shared_.device) return false;
    int can_access = 0;
    CUCORE_CALL(cuDeviceCanAccessPeer, &can_access, shared_.device, peer.shared_.device);
    return can_access != 0;
}

Ref<Context> Device::primary_context() {
    if (Context *pinned = shared_.pinned_primary.load(std::memory_order_acquire)) return Ref<Context>(pinned);
    if (Context *cached = cached_primary_.load(std::memory_order_acquire)) return Ref<Context>(cached);
    std::lock_guard<std::mutex> lock(shared_.primary_mutex);
    Ref<Context> primary = shared_.primary.lock();
    if (!primary) {
        CUcontext context = nullptr;
        CUCORE_CALL(cuDevicePrimaryCtxRetain, &context, shared_.device);
        auto retained = own(context, [device = shared_.device](CUcontext) noexcept {
            release_primary_context(device, "releasing a primary context that was not made");
        });
        // The context holds a device handle of its own that does not cache
        // (a cached context would then hold itself alive).
        primary = make<Context>(make<Device>(shared_, false), retained.get(), true);
        retained.release();  // the Context releases it from here
        shared_.primary = WeakRef<Context>(primary.get());
    }
    Context *expected = nullptr;
    if (caches_primary_ && cached_primary_.compare_exchange_strong(expected, primary.get()))
        handles::retain_held(primary.get());  // the cache's own reference
    return primary;
}

Ref<Context> Device::primary_if_alive() {
    std::lock_guard<std::mutex> lock(shared_.primary_mutex);
    return shared_.primary.lock();
}

void Device::forget_primary(const Context *context) noexcept {
    // Compare identities only: taking a reference here could re-enter this
    // destructor path while the mutex is held.
    std::lock_guard<std::mutex> lock(shared_.primary_mutex);
    if (shared_.primary.refers_to(context)) shared_.primary = WeakRef<Context>();
}

void Device::set_current() { pin_primary()->set_current(); }

Ref<Context> Device::pin_primary() {
    Ref<Context> context = primary_context();
    Context *expected = nullptr;
    if (shared_.pinned_primary.compare_exchange_strong(expected, context.get())) {
        Context *pinned = Ref<Context>(context).detach();  // this reference is never dropped
        pinned->make_immortal();
    }
    return context;
}

void Device::enable_peer_access(Device &peer) {
    if (peer.shared_.device == shared_.device)
        throw_invalid_argument("argument 'peer' is the device itself; it always reaches its own memory");
    if (!can_access_peer(peer))
        throw Error(CUCORE_ERROR_NOT_SUPPORTED, "device " + std::to_string(ordinal()) + " cannot reach device " +
                                                    std::to_string(peer.ordinal()) +
                                                    "'s memory directly (cuDeviceCanAccessPeer says 0)");
    // Both primary contexts are kept for the process, so what is granted is not lost when the last object
    // using one of them goes (the driver would forget it with the context).
    Ref<Context> context = pin_primary();
    Ref<Context> other = peer.pin_primary();
    ScopedContext bind(context->cu());
    const CUresult result = CUCORE_DRIVER(cuCtxEnablePeerAccess)(other->cu(), 0);
    if (result != CUDA_SUCCESS && result != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
        throw_cuda(result, "cuCtxEnablePeerAccess");
}

void Device::disable_peer_access(Device &peer) {
    if (peer.shared_.device == shared_.device)
        throw_invalid_argument("argument 'peer' is the device itself; it always reaches its own memory");
    Ref<Context> context = primary_context();
    Ref<Context> other = peer.primary_context();
    ScopedContext bind(context->cu());
    const CUresult result = CUCORE_DRIVER(cuCtxDisablePeerAccess)(other->cu());
    if (result == CUDA_ERROR_PEER_ACCESS_NOT_ENABLED)
        throw Error(CUCORE_ERROR_INVALID_STATE, "device " + std::to_string(ordinal()) + " has no peer access to device " +
                                                    std::to_string(peer.ordinal()) + " to disable",
                    result);
    check(result, "cuCtxDisablePeerAccess");
}

Ref<MemoryResource> Device::memory_resource() {
    {
        std::lock_guard<std::mutex> lock(shared_.memory_resource_mutex);
        if (shared_.memory_resource) return shared_.memory_resource;
    }
    return PoolResource::device_current(*this);
}

Ref<Buffer> Device::allocate(uint64_t size, Stream *stream) { return memory_resource()->allocate(size, stream); }

void Device::compute_capability(int &major, int &minor) const {
    major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
}

void Device::set_memory_resource(Ref<MemoryResource> resource) {
    Ref<MemoryResource> previous;
    {
        std::lock_guard<std::mutex> lock(shared_.memory_resource_mutex);
        previous = std::move(shared_.memory_resource);
        shared_.memory_resource = std::move(resource);
    }
    // `previous` is released here, outside the lock (its release may destroy a pool).
}

void Device::synchronize() {
    Ref<Context> context = primary_context();
    ScopedContext bind(context->cu());
    CUCORE_CALL(cuCtxSynchronize);
}

}  // namespace cucore::core
