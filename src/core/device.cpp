#include "core/device.hpp"

#include <cstring>
#include <vector>

#include "core/context.hpp"
#include "core/error.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

// The public enum mirrors the driver's values (both generated from cuda.h).
#include "core/device_attributes_check.inc"

namespace {
std::mutex g_registry_mutex;
// Never destroyed: devices live for the process, and static destruction order
// must not release contexts after the driver is gone.
std::vector<Ref<Device>> &registry() {
    static auto *devices = new std::vector<Ref<Device>>();
    return *devices;
}
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

Ref<Device> Device::get(int ordinal) {
    if (ordinal < 0) throw_invalid_argument("argument 'ordinal' is negative (" + std::to_string(ordinal) + ")");
    int devices = count();
    if (ordinal >= devices)
        throw Error(CUCORE_ERROR_NO_DEVICE, "there is no CUDA device " + std::to_string(ordinal) + " (" +
                                                std::to_string(devices) + " device" +
                                                (devices == 1 ? "" : "s") + " visible)");
    std::lock_guard<std::mutex> lock(g_registry_mutex);
    auto &devices_by_ordinal = registry();
    if (static_cast<size_t>(ordinal) < devices_by_ordinal.size() && devices_by_ordinal[ordinal])
        return devices_by_ordinal[ordinal];
    CUdevice device = 0;
    CUCORE_CALL(cuDeviceGet, &device, ordinal);
    char name[256] = {};
    CUCORE_CALL(cuDeviceGetName, name, static_cast<int>(sizeof name), device);
    char bus_id[64] = {};
    CUCORE_CALL(cuDeviceGetPCIBusId, bus_id, static_cast<int>(sizeof bus_id), device);
    CUuuid uuid{};
    CUCORE_CALL(cuDeviceGetUuid, &uuid, device);
    Ref<Device> created = make<Device>(ordinal, device, name, bus_id, uuid);
    if (devices_by_ordinal.size() <= static_cast<size_t>(ordinal)) devices_by_ordinal.resize(ordinal + 1);
    devices_by_ordinal[ordinal] = created;
    return created;
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

Device::Device(int ordinal, CUdevice device, std::string name, std::string pci_bus_id, CUuuid uuid) noexcept
    : Object(CUCORE_OBJECT_DEVICE),
      ordinal_(ordinal),
      device_(device),
      name_(std::move(name)),
      pci_bus_id_(std::move(pci_bus_id)),
      uuid_(uuid) {}

Device::~Device() {
    if (Context *pinned = pinned_primary_.exchange(nullptr)) handles::release_held(pinned);
}

uint64_t Device::total_memory() const {
    size_t bytes = 0;
    CUCORE_CALL(cuDeviceTotalMem, &bytes, device_);
    return bytes;
}

int Device::attribute(CUdevice_attribute attribute) const {
    int value = 0;
    CUCORE_CALL(cuDeviceGetAttribute, &value, attribute, device_);
    return value;
}

void Device::properties(cucore_device_properties_t &out) const {
    out.ordinal = ordinal_;
    out.compute_capability_major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    out.compute_capability_minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
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
    if (peer.device_ == device_) return false;
    int can_access = 0;
    CUCORE_CALL(cuDeviceCanAccessPeer, &can_access, device_, peer.device_);
    return can_access != 0;
}

Ref<Context> Device::primary_context() {
    if (Context *pinned = pinned_primary_.load(std::memory_order_acquire)) return Ref<Context>(pinned);
    std::lock_guard<std::mutex> lock(primary_mutex_);
    if (Ref<Context> alive = primary_.lock()) return alive;
    CUcontext context = nullptr;
    CUCORE_CALL(cuDevicePrimaryCtxRetain, &context, device_);
    Ref<Context> created;
    try {
        created = make<Context>(Ref<Device>(this), context, true, nullptr, nullptr);
    } catch (...) {
        driver::api().cuDevicePrimaryCtxRelease(device_);  // undo the retain: no half-made object
        throw;
    }
    primary_ = WeakRef<Context>(created.get());
    return created;
}

Ref<Context> Device::primary_if_alive() {
    std::lock_guard<std::mutex> lock(primary_mutex_);
    return primary_.lock();
}

void Device::forget_primary(const Context *context) noexcept {
    // Compare identities only: taking a reference here could re-enter this
    // destructor path while the mutex is held.
    std::lock_guard<std::mutex> lock(primary_mutex_);
    if (primary_.refers_to(context)) primary_ = WeakRef<Context>();
}

void Device::set_current() {
    Ref<Context> context = primary_context();
    context->set_current();
    Context *expected = nullptr;
    if (pinned_primary_.compare_exchange_strong(expected, context.get())) context.detach();  // pinned for good
}

void Device::synchronize() {
    Ref<Context> context = primary_context();
    ScopedContext bind(context->cu());
    CUCORE_CALL(cuCtxSynchronize);
}

}  // namespace cucore::core
