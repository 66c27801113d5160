#include "core/memory_virtual.hpp"

#include <algorithm>
#include <functional>
#include <string>

#include "core/device.hpp"
#include "core/error.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

namespace {
CUmemAccess_flags to_cu_access(cucore_access_t access) {
    switch (access) {
        case CUCORE_ACCESS_NONE: return CU_MEM_ACCESS_FLAGS_PROT_NONE;
        case CUCORE_ACCESS_READ: return CU_MEM_ACCESS_FLAGS_PROT_READ;
        case CUCORE_ACCESS_READ_WRITE: return CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        default:
            throw_invalid_argument("access is unknown (" + std::to_string(static_cast<int>(access)) + ")");
    }
}

// Undoes driver work in reverse unless dismissed: creation paths leave nothing behind.
class Undo {
  public:
    template <class F>
    void push(F action) { actions_.emplace_back(std::move(action)); }
    void dismiss() noexcept { actions_.clear(); }
    ~Undo() {
        for (auto it = actions_.rbegin(); it != actions_.rend(); ++it) (*it)();
    }

  private:
    std::vector<std::function<void()>> actions_;
};
}  // namespace

Ref<VirtualResource> VirtualResource::create(Device &device, const cucore_virtual_memory_resource_options_t &options) {
    if (options.recommended_granularity > 1 || options.posix_fd_shareable > 1)
        throw_invalid_argument("the switches of 'options' must be 0 or 1");
    if (options.self_access != CUCORE_ACCESS_READ && options.self_access != CUCORE_ACCESS_READ_WRITE)
        throw_invalid_argument("argument 'options.self_access' must be READ or READ_WRITE");
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.requestedHandleTypes =
        options.posix_fd_shareable ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
    switch (options.location_type) {
        case CUCORE_LOCATION_DEVICE:
            prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
            prop.location.id = device.cu();
            break;
        case CUCORE_LOCATION_HOST:
            prop.location.type = CU_MEM_LOCATION_TYPE_HOST;
            break;
        case CUCORE_LOCATION_HOST_NUMA:
            prop.location = to_cu_location({options.location_type, options.location_id}, "options.location");
            break;
        default:
            throw_invalid_argument("argument 'options.location_type' must be DEVICE, HOST or HOST_NUMA");
    }
    if (!device.attribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED))
        throw Error(CUCORE_ERROR_NOT_SUPPORTED, "device " + std::to_string(device.ordinal()) +
                                                    " does not support virtual memory management");
    Ref<Context> context = device.primary_context();
    size_t granularity = 0;
    CUCORE_CALL(cuMemGetAllocationGranularity, &granularity, &prop,
                options.recommended_granularity ? CU_MEM_ALLOC_GRANULARITY_RECOMMENDED
                                                : CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    if (granularity == 0) granularity = 2u << 20;  // the driver never says 0; be safe
    // The memory is the device's whatever its physical location: only devices
    // are granted access (host mappings of VMM memory are not made).
    MemoryTraits traits{device.ordinal(), true, false, false};
    return make<VirtualResource>(std::move(context), traits, prop, granularity, options.reserve_size,
                                 options.self_access);
}

VirtualResource::VirtualResource(Ref<Context> context, MemoryTraits traits, const CUmemAllocationProp &prop,
                                 size_t granularity, uint64_t reserve_size, cucore_access_t self_access) noexcept
    : MemoryResource(CUCORE_MEMORY_RESOURCE_VIRTUAL, std::move(context), traits, false),
      prop_(prop),
      granularity_(granularity),
      reserve_size_(reserve_size),
      self_access_(self_access) {}

VirtualResource::~VirtualResource() = default;  // every buffer holds the resource: no mapping is left

size_t VirtualResource::Mapping::reserved() const noexcept {
    size_t total = 0;
    for (const Range &range : reservations) total += range.size;
    return total;
}

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

VirtualResource::Chunk VirtualResource::map_new_chunk(CUdeviceptr base, size_t offset, size_t size) {
    const driver::Table &api = driver::api();
    Undo undo;
    CUmemGenericAllocationHandle handle = 0;
    CUCORE_CALL(cuMemCreate, &handle, size, &prop_, 0);
    undo.push([&api, handle] { api.cuMemRelease(handle); });
    const Chunk chunk{handle, offset, size};
    map_chunk(base, chunk);
    undo.dismiss();
    return chunk;
}

void VirtualResource::map_chunk(CUdeviceptr base, const Chunk &chunk) {
    const driver::Table &api = driver::api();
    const CUdeviceptr at = base + chunk.offset;
    CUCORE_CALL(cuMemMap, at, chunk.size, 0, chunk.handle, 0);
    try {
        set_access(at, chunk.size);
    } catch (...) {
        api.cuMemUnmap(at, chunk.size);
        throw;
    }
}

CUdeviceptr VirtualResource::allocate_raw(uint64_t size, Stream *) {
    const size_t mapped = round_up(size);
    const size_t reserved = std::max(mapped, round_up(reserve_size_));
    const driver::Table &api = driver::api();
    ScopedContext bind(context()->cu());
    std::lock_guard<std::mutex> lock(mutex_);
    Undo undo;
    CUdeviceptr base = 0;
    CUCORE_CALL(cuMemAddressReserve, &base, reserved, 0, 0, 0);
    undo.push([&api, base, reserved] { api.cuMemAddressFree(base, reserved); });
    Mapping mapping;
    mapping.chunks.push_back(map_new_chunk(base, 0, mapped));
    mapping.reservations.push_back({base, reserved});
    mapping.mapped = mapped;
    mappings_.emplace(base, std::move(mapping));
    undo.dismiss();
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
    for (const Chunk &chunk : mapping.chunks) step(api.cuMemUnmap(address + chunk.offset, chunk.size), "cuMemUnmap");
    for (const Retired &old : mapping.retired)
        for (const Range &range : old.mapped) step(api.cuMemUnmap(range.address, range.size), "cuMemUnmap");
    for (const Chunk &chunk : mapping.chunks) step(api.cuMemRelease(chunk.handle), "cuMemRelease");
    for (const Range &range : mapping.reservations)
        step(api.cuMemAddressFree(range.address, range.size), "cuMemAddressFree");
    for (const Retired &old : mapping.retired)
        for (const Range &range : old.reservations)
            step(api.cuMemAddressFree(range.address, range.size), "cuMemAddressFree");
    if (first != CUDA_SUCCESS) throw_cuda(first, failed);
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

    // 1. Room left in the reservation, or 2. the reservation extends right after
    // itself: new chunks fill the rest of each reservation (a mapping never spans two).
    size_t reserved = mapping.reserved();
    Range extension{0, 0};
    if (target > reserved) {
        const size_t more = std::max(target, round_up(reserve_size_)) - reserved;
        const CUdeviceptr wanted = address + reserved;
        CUdeviceptr got = 0;
        if (api.cuMemAddressReserve(&got, more, 0, wanted, 0) == CUDA_SUCCESS) {
            if (got == wanted) {
                extension = {got, more};
            } else if (const CUresult result = api.cuMemAddressFree(got, more); result != CUDA_SUCCESS) {
                // Not ours to keep, but not given back either: retried when the buffer goes.
                report_release_error(CUCORE_ERROR_CUDA, result,
                                     "growing a buffer: cuMemAddressFree of an unused address range failed; "
                                     "retried when the buffer is freed");
                mapping.retired.push_back(Retired{{}, {Range{got, more}}});
            }
        }
    }
    if (target <= reserved || extension.size != 0) {
        Undo undo;
        if (extension.size) undo.push([&api, extension] { api.cuMemAddressFree(extension.address, extension.size); });
        std::vector<Chunk> added;
        auto undo_chunks = [&api, address, &added] {
            for (const Chunk &chunk : added) {
                api.cuMemUnmap(address + chunk.offset, chunk.size);
                api.cuMemRelease(chunk.handle);
            }
        };
        try {
            const size_t in_reservation = std::min(target, reserved);
            if (in_reservation > mapping.mapped)
                added.push_back(map_new_chunk(address, mapping.mapped, in_reservation - mapping.mapped));
            if (target > reserved) added.push_back(map_new_chunk(address, reserved, target - reserved));
        } catch (...) {
            undo_chunks();
            throw;
        }
        undo.dismiss();
        if (extension.size) mapping.reservations.push_back(extension);
        mapping.chunks.insert(mapping.chunks.end(), added.begin(), added.end());
        mapping.mapped = target;
        return address;
    }

    // 3. Move: map the same physical chunks (no copy) plus a new one into a new range.
    const size_t new_reserved = std::max(target, round_up(reserve_size_));
    Undo undo;
    CUdeviceptr base = 0;
    CUCORE_CALL(cuMemAddressReserve, &base, new_reserved, 0, 0, 0);
    undo.push([&api, base, new_reserved] { api.cuMemAddressFree(base, new_reserved); });
    for (const Chunk &chunk : mapping.chunks) {
        map_chunk(base, chunk);
        undo.push([&api, base, chunk] { api.cuMemUnmap(base + chunk.offset, chunk.size); });
    }
    const Chunk added = map_new_chunk(base, mapping.mapped, target - mapping.mapped);
    undo.dismiss();

    Mapping moved;
    moved.reservations.push_back({base, new_reserved});
    moved.chunks = mapping.chunks;
    moved.chunks.push_back(added);
    moved.mapped = target;
    moved.retired = std::move(mapping.retired);
    // The old range goes; its chunks live on in the new one. The buffer has
    // moved either way, so a failure here is reported and what is left is
    // retried when the buffer goes.
    Retired old;
    CUresult failure = CUDA_SUCCESS;
    const char *failed = nullptr;
    for (const Chunk &chunk : mapping.chunks) {
        const CUresult result = api.cuMemUnmap(address + chunk.offset, chunk.size);
        if (result == CUDA_SUCCESS) continue;
        old.mapped.push_back({address + chunk.offset, chunk.size});
        if (!failed) failure = result, failed = "cuMemUnmap";
    }
    for (const Range &range : mapping.reservations) {
        // A reservation with a chunk still mapped cannot be freed yet.
        bool busy = false;
        for (const Range &still : old.mapped)
            busy = busy || (still.address >= range.address && still.address < range.address + range.size);
        const CUresult result = busy ? CUDA_SUCCESS : api.cuMemAddressFree(range.address, range.size);
        if (busy || result != CUDA_SUCCESS) old.reservations.push_back(range);
        if (result != CUDA_SUCCESS && !failed) failure = result, failed = "cuMemAddressFree";
    }
    if (failed) {
        report_release_error(CUCORE_ERROR_CUDA, failure,
                             std::string("growing a buffer: ") + failed + " of its old address range failed; "
                                                                        "retried when the buffer is freed");
        moved.retired.push_back(std::move(old));
    }
    mappings_.erase(it);
    mappings_.emplace(base, std::move(moved));
    return base;
}

void VirtualResource::set_peer_access(Device &peer, cucore_access_t access) {
    to_cu_access(access);  // checks the value
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
    for (const auto &entry : mappings_)
        for (const Chunk &chunk : entry.second.chunks)
            CUCORE_CALL(cuMemSetAccess, entry.first + chunk.offset, chunk.size, &desc, 1);
    peers_[peer.cu()] = access;
}

cucore_access_t VirtualResource::peer_access(Device &peer) const {
    if (peer.ordinal() == context()->device().ordinal()) return self_access_;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = peers_.find(peer.cu());
    return it == peers_.end() ? CUCORE_ACCESS_NONE : it->second;
}

}  // namespace cucore::core
