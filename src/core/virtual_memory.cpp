#include "core/virtual_memory.hpp"

#include <algorithm>
#include <string>

#include "core/device.hpp"
#include "core/error.hpp"
#include "core/owned.hpp"
#include "core/release.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

namespace {
// An access the C ABI has checked (capi::check_access).
CUmemAccess_flags to_cu_access(cucore_access_t access) noexcept {
    switch (access) {
        case CUCORE_ACCESS_READ: return CU_MEM_ACCESS_FLAGS_PROT_READ;
        case CUCORE_ACCESS_READ_WRITE: return CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        default: return CU_MEM_ACCESS_FLAGS_PROT_NONE;
    }
}

// The boxes of what a creation path has made so far (creation and growth leave nothing behind on a
// failure): a reserved range, physical memory, and a mapping. The caller keeps the resource's context
// bound while they live; they go in reverse order, and a failure to undo a step is reported.
auto reserved_range(CUdeviceptr address, size_t size) noexcept {
    return own(address, [size](CUdeviceptr unused) noexcept {
        release_reported("cuMemAddressFree", "freeing the address range of a failed allocation",
                         [unused, size](const driver::Table &api) { return api.cuMemAddressFree(unused, size); });
    });
}
auto physical_memory(CUmemGenericAllocationHandle handle) noexcept {
    return own(handle, [](CUmemGenericAllocationHandle unused) noexcept {
        release_reported("cuMemRelease", "releasing the memory of a failed allocation",
                         [unused](const driver::Table &api) { return api.cuMemRelease(unused); });
    });
}
auto mapped_range(CUdeviceptr address, size_t size) noexcept {
    return own(address, [size](CUdeviceptr unused) noexcept {
        release_reported("cuMemUnmap", "unmapping the memory of a failed allocation",
                         [unused, size](const driver::Table &api) { return api.cuMemUnmap(unused, size); });
    });
}
}  // namespace

Ref<VirtualResource> VirtualResource::create(Device &device, const cucore_virtual_memory_resource_options_t &options) {
    // Zero means the default: a resource's own device cannot be left without access,
    // so NONE stands for the default READ_WRITE.
    const cucore_access_t self_access =
        options.self_access == CUCORE_ACCESS_NONE ? CUCORE_ACCESS_READ_WRITE : options.self_access;
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(
        (options.posix_fd_shareable ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : 0) |
        (options.fabric_shareable ? CU_MEM_HANDLE_TYPE_FABRIC : 0));
    prop.allocFlags.gpuDirectRDMACapable = options.gpu_direct_rdma ? 1 : 0;
    switch (options.location_type) {
        case CUCORE_LOCATION_NONE:  // the default: the resource's device
        case CUCORE_LOCATION_DEVICE:
            prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
            prop.location.id = device.cu();
            break;
        case CUCORE_LOCATION_HOST:
            prop.location.type = CU_MEM_LOCATION_TYPE_HOST;
            break;
        default:  // HOST_NUMA (the C ABI refuses the other types)
            prop.location = to_cu_location({options.location_type, options.location_id});
            break;
    }
    if (!device.attribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED))
        throw Error(CUCORE_ERROR_NOT_SUPPORTED, "device " + std::to_string(device.ordinal()) +
                                                    " does not support virtual memory management");
    Ref<Context> context = device.primary_context();
    size_t granularity = 0;
    CUCORE_CALL(cuMemGetAllocationGranularity, &granularity, &prop,
                options.minimum_granularity ? CU_MEM_ALLOC_GRANULARITY_MINIMUM
                                            : CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
    if (granularity == 0) granularity = 2u << 20;  // the driver never says 0; be safe
    // The memory is the device's whatever its physical location: only devices
    // are granted access (host mappings of VMM memory are not made).
    MemoryTraits traits{device.ordinal(), true, false, false};
    return make<VirtualResource>(std::move(context), traits, prop, granularity, options.reserve_size, self_access,
                                 Placement{options.address_hint, options.address_alignment});
}

VirtualResource::VirtualResource(Ref<Context> context, MemoryTraits traits, const CUmemAllocationProp &prop,
                                 size_t granularity, uint64_t reserve_size, cucore_access_t self_access,
                                 Placement placement) noexcept
    : MemoryResource(CUCORE_MEMORY_RESOURCE_VIRTUAL, std::move(context), traits, false),
      prop_(prop),
      granularity_(granularity),
      reserve_size_(reserve_size),
      self_access_(self_access),
      placement_(placement) {}

VirtualResource::~VirtualResource() = default;  // every buffer holds the resource: no mapping is left

size_t VirtualResource::round_up(uint64_t size) const {
    const uint64_t limit = static_cast<uint64_t>(SIZE_MAX) - granularity_;
    if (size > limit) throw Error(CUCORE_ERROR_OUT_OF_MEMORY, "size " + std::to_string(size) + " is too large");
    return static_cast<size_t>((size + granularity_ - 1) / granularity_ * granularity_);
}

std::vector<CUmemAccessDesc> VirtualResource::access_list() const {
    std::vector<CUmemAccessDesc> list;
    CUmemAccessDesc self{};
    self.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    self.location.id = context()->device().cu();
    self.flags = to_cu_access(self_access_);
    list.push_back(self);
    for (const auto &peer : peers_) {
        if (peer.second == CUCORE_ACCESS_NONE) continue;
        CUmemAccessDesc desc{};
        desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        desc.location.id = peer.first;
        desc.flags = to_cu_access(peer.second);
        list.push_back(desc);
    }
    return list;
}

void VirtualResource::set_access(CUdeviceptr address, size_t size) const {
    const std::vector<CUmemAccessDesc> list = access_list();
    CUCORE_CALL(cuMemSetAccess, address, size, list.data(), list.size());
}

CUdeviceptr VirtualResource::allocate_raw(uint64_t size, Stream *) {
    const size_t mapped = round_up(size);
    const size_t reserved = std::max(mapped, round_up(reserve_size_));
    ScopedContext bind(context()->cu());
    std::lock_guard<std::mutex> lock(mutex_);
    CUdeviceptr base = 0;
    CUCORE_CALL(cuMemAddressReserve, &base, reserved, static_cast<size_t>(placement_.alignment),
                static_cast<CUdeviceptr>(placement_.hint), 0);
    auto reservation = reserved_range(base, reserved);
    CUmemGenericAllocationHandle handle = 0;
    CUCORE_CALL(cuMemCreate, &handle, mapped, &prop_, 0);
    auto physical = physical_memory(handle);
    CUCORE_CALL(cuMemMap, base, mapped, 0, handle, 0);
    auto mapping = mapped_range(base, mapped);
    set_access(base, mapped);
    mappings_.emplace(base, Mapping{{base, reserved}, handle, mapped, {}, {}, {}});
    // The buffer's deallocate gives all three back from here.
    mapping.release();
    physical.release();
    reservation.release();
    return base;
}

void VirtualResource::deallocate(CUdeviceptr address, uint64_t, Stream *) {
    Mapping mapping;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = mappings_.find(address);
        if (it == mappings_.end()) return;
        mapping = std::move(it->second);
        mappings_.erase(it);
    }
    ScopedContext bind(context()->cu());
    // Each step is attempted whatever the others did; the first failure is reported.
    CUresult first = CUDA_SUCCESS;
    const char *failed = nullptr;
    const driver::Table &api = driver::api();
    auto step = [&](CUresult result, const char *name) {
        if (result != CUDA_SUCCESS && first == CUDA_SUCCESS) {
            first = result;
            failed = name;
        }
    };
    step(api.cuMemUnmap(address, mapping.mapped), "cuMemUnmap");
    for (const Range &range : mapping.leftover_mappings) step(api.cuMemUnmap(range.address, range.size), "cuMemUnmap");
    step(api.cuMemRelease(mapping.handle), "cuMemRelease");
    for (CUmemGenericAllocationHandle handle : mapping.leftover_handles) step(api.cuMemRelease(handle), "cuMemRelease");
    step(api.cuMemAddressFree(mapping.reservation.address, mapping.reservation.size), "cuMemAddressFree");
    for (const Range &range : mapping.leftover_reservations)
        step(api.cuMemAddressFree(range.address, range.size), "cuMemAddressFree");
    if (first != CUDA_SUCCESS) throw_cuda(first, failed);
}

void VirtualResource::give_back(Mapping &mapping, std::vector<Range> mappings, std::vector<Range> reservations,
                                CUmemGenericAllocationHandle handle) noexcept {
    const driver::Table &api = driver::api();
    auto report = [](CUresult result, const char *name) {
        report_release_error(CUCORE_ERROR_CUDA, result,
                             std::string("growing a buffer: ") + name +
                                 " of the memory it left failed; retried when the buffer is freed");
    };
    for (const Range &range : mappings) {
        const CUresult result = api.cuMemUnmap(range.address, range.size);
        if (result != CUDA_SUCCESS) {
            report(result, "cuMemUnmap");
            mapping.leftover_mappings.push_back(range);
        }
    }
    if (handle) {
        const CUresult result = api.cuMemRelease(handle);
        if (result != CUDA_SUCCESS) {
            report(result, "cuMemRelease");
            mapping.leftover_handles.push_back(handle);
        }
    }
    for (const Range &range : reservations) {
        bool busy = false;  // a range still mapped cannot be freed yet
        for (const Range &still : mapping.leftover_mappings)
            busy = busy || (still.address >= range.address && still.address < range.address + range.size);
        const CUresult result = busy ? CUDA_ERROR_INVALID_VALUE : api.cuMemAddressFree(range.address, range.size);
        if (result != CUDA_SUCCESS) {
            if (!busy) report(result, "cuMemAddressFree");
            mapping.leftover_reservations.push_back(range);
        }
    }
}

CUdeviceptr VirtualResource::grow(CUdeviceptr address, uint64_t new_size) {
    const size_t target = round_up(new_size);
    const driver::Table &api = driver::api();
    ScopedContext bind(context()->cu());
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = mappings_.find(address);
    if (it == mappings_.end()) throw_invalid_argument("the buffer is not memory of this virtual memory resource");
    Mapping &mapping = it->second;
    if (target <= mapping.mapped) return address;  // the granularity's slack already holds it

    // The new memory, filled through a staging range: a temporary one when the
    // reservation has room (the new memory then takes the old one's place), else
    // the buffer's new home.
    const bool in_place = target <= mapping.reservation.size;
    const size_t staging_size = in_place ? target : std::max(target, round_up(reserve_size_));
    CUmemGenericAllocationHandle handle = 0;
    CUCORE_CALL(cuMemCreate, &handle, target, &prop_, 0);
    auto physical = physical_memory(handle);
    CUdeviceptr staging = 0;
    CUCORE_CALL(cuMemAddressReserve, &staging, staging_size, static_cast<size_t>(placement_.alignment), 0, 0);
    auto staging_range = reserved_range(staging, staging_size);
    CUCORE_CALL(cuMemMap, staging, target, 0, handle, 0);
    auto staging_mapping = mapped_range(staging, target);
    // The mapping record owns the new memory and ranges from here.
    auto keep = [&] {
        staging_mapping.release();
        staging_range.release();
        physical.release();
    };
    set_access(staging, target);
    // The caller has no work pending on the buffer (grow's contract); the copy is
    // finished before the old memory goes.
    CUCORE_CALL(cuMemcpyAsync, staging, address, mapping.mapped, CU_STREAM_LEGACY);
    CUCORE_CALL(cuStreamSynchronize, CU_STREAM_LEGACY);

    if (!in_place) {
        keep();
        Mapping moved{{staging, staging_size}, handle, target, std::move(mapping.leftover_mappings),
                      std::move(mapping.leftover_reservations), std::move(mapping.leftover_handles)};
        give_back(moved, {{address, mapping.mapped}}, {mapping.reservation}, mapping.handle);
        mappings_.erase(it);
        mappings_.emplace(staging, std::move(moved));
        return staging;
    }

    // In place: the new memory replaces the old at the same address. Until it is in place, a failure maps the
    // old memory back (as far as the driver lets it: the grow's own error is the one returned).
    CUCORE_CALL(cuMemUnmap, address, mapping.mapped);
    const CUmemGenericAllocationHandle old_handle = mapping.handle;
    const size_t old_size = mapping.mapped;
    auto old_memory = own(address, [&api, this, old_handle, old_size](CUdeviceptr unmapped) noexcept {
        // The grow's own error is the one the caller gets; a failure to put the old memory back is reported.
        const char *what = "restoring a buffer's memory after a failed grow";
        const CUresult remapped = api.cuMemMap(unmapped, old_size, 0, old_handle, 0);
        if (remapped != CUDA_SUCCESS) return report_release_failure(remapped, "cuMemMap", what);
        run_reported(what, [&] { set_access(unmapped, old_size); });
    });
    CUCORE_CALL(cuMemMap, address, target, 0, handle, 0);
    auto new_memory = mapped_range(address, target);
    set_access(address, target);
    new_memory.release();
    old_memory.release();
    keep();
    mapping.handle = handle;
    mapping.mapped = target;
    give_back(mapping, {{staging, target}}, {{staging, staging_size}}, old_handle);
    return address;
}

void VirtualResource::set_peer_access(Device &peer, cucore_access_t access) {
    const Device &owner = context()->device();
    if (peer.ordinal() == owner.ordinal()) {
        if (access == CUCORE_ACCESS_NONE)
            throw_invalid_argument("a resource's own device (" + std::to_string(owner.ordinal()) +
                                   ") cannot lose access to it");
        throw_invalid_argument("the access of the resource's own device is set by options.self_access");
    }
    int can_access = 0;
    CUCORE_CALL(cuDeviceCanAccessPeer, &can_access, peer.cu(), owner.cu());
    if (!can_access)
        throw Error(CUCORE_ERROR_NOT_SUPPORTED, "device " + std::to_string(peer.ordinal()) +
                                                    " cannot access the memory of device " +
                                                    std::to_string(owner.ordinal()));
    ScopedContext bind(context()->cu());
    std::lock_guard<std::mutex> lock(mutex_);
    CUmemAccessDesc desc{};
    desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    desc.location.id = peer.cu();
    desc.flags = to_cu_access(access);
    for (const auto &entry : mappings_) CUCORE_CALL(cuMemSetAccess, entry.first, entry.second.mapped, &desc, 1);
    peers_[peer.cu()] = access;
}

cucore_access_t VirtualResource::peer_access(Device &peer) const {
    if (peer.ordinal() == context()->device().ordinal()) return self_access_;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = peers_.find(peer.cu());
    return it == peers_.end() ? CUCORE_ACCESS_NONE : it->second;
}

}  // namespace cucore::core
