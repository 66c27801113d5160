// The memory resource base: argument checks and the buffer an allocation
// becomes, shared by every kind of resource; and the legacy pinned kind.
#include "core/memory_resource.hpp"

#include <string>

#include "core/buffer.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/owned.hpp"
#include "core/release.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

CUmemLocation to_cu_location(cucore_location_t location) noexcept {
    CUmemLocation result{};
    switch (location.type) {
        case CUCORE_LOCATION_DEVICE: result.type = CU_MEM_LOCATION_TYPE_DEVICE; break;
        case CUCORE_LOCATION_HOST: result.type = CU_MEM_LOCATION_TYPE_HOST; break;
        case CUCORE_LOCATION_HOST_NUMA: result.type = CU_MEM_LOCATION_TYPE_HOST_NUMA; break;
        case CUCORE_LOCATION_HOST_NUMA_CURRENT: result.type = CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT; break;
        default: result.type = CU_MEM_LOCATION_TYPE_INVALID; break;  // refused by the C ABI (capi::check_location)
    }
    result.id = result.type == CU_MEM_LOCATION_TYPE_HOST || result.type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT
                    ? 0
                    : location.id;
    return result;
}

cucore_location_t from_cu_location(CUmemLocationType type, int id) noexcept {
    switch (type) {
        case CU_MEM_LOCATION_TYPE_DEVICE: return {CUCORE_LOCATION_DEVICE, id};
        case CU_MEM_LOCATION_TYPE_HOST: return {CUCORE_LOCATION_HOST, 0};
        case CU_MEM_LOCATION_TYPE_HOST_NUMA: return {CUCORE_LOCATION_HOST_NUMA, id};
        case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT: return {CUCORE_LOCATION_HOST_NUMA_CURRENT, 0};
        default: return {CUCORE_LOCATION_NONE, 0};
    }
}

MemoryResource::MemoryResource(cucore_memory_resource_kind_t kind, Ref<Context> context, MemoryTraits traits,
                               bool stream_ordered) noexcept
    : Object(CUCORE_OBJECT_MEMORY_RESOURCE),
      kind_(kind),
      context_(std::move(context)),
      traits_(traits),
      stream_ordered_(stream_ordered),
      stream_ordinal_(context_ ? context_->device().ordinal() : -1) {}

MemoryResource::~MemoryResource() = default;

void MemoryResource::not_supported(const char *message) const {
    throw Error(CUCORE_ERROR_NOT_SUPPORTED, message);
}

uint64_t MemoryResource::pool_attribute(cucore_pool_attribute_t) const {
    not_supported("pool attributes: this memory resource has no memory pool");
}
void MemoryResource::set_pool_attribute(cucore_pool_attribute_t, uint64_t) {
    not_supported("pool attributes: this memory resource has no memory pool");
}
void MemoryResource::trim(uint64_t) { not_supported("trim: this memory resource has no memory pool"); }
void MemoryResource::set_peer_access(Device &, cucore_access_t) {
    not_supported("peer access: only pool and virtual memory resources grant it");
}
cucore_access_t MemoryResource::peer_access(Device &) const {
    not_supported("peer access: only pool and virtual memory resources grant it");
}

void MemoryResource::refuse_stream(Stream *stream, const char *what) const {
    if (!stream)
        throw_invalid_argument(std::string("argument 'stream' is NULL: this memory resource ") + what + " in stream order");
    // Device-bound pools work on their own device's streams; host pools (device_id -1) on any device's.
    throw_invalid_argument("argument 'stream' belongs to device " + std::to_string(stream->device_ordinal()) +
                           ", the resource to device " + std::to_string(stream_ordinal_));
}

void MemoryResource::deallocate_checked(CUdeviceptr address, uint64_t size, Stream *stream) {
    check_stream(stream, "frees");
    if (address != 0) deallocate(address, size, stream);
}

Ref<Buffer> MemoryResource::allocate(uint64_t size, Stream *stream) {
    if (kind_ == CUCORE_MEMORY_RESOURCE_IMPORTED)
        throw Error(CUCORE_ERROR_INVALID_STATE,
                    "a pool imported from another process cannot allocate; import buffers into it instead");
    check_stream(stream, "allocates");
    Ref<MemoryResource> self(this);
    // Stream-ordered and user resources free on a stream; the others ignore it.
    const bool keeps_stream = stream_ordered_ || kind_ == CUCORE_MEMORY_RESOURCE_USER;
    Ref<Stream> deallocation = stream && keeps_stream ? Ref<Stream>(stream) : Ref<Stream>();
    const CUdeviceptr address = size != 0 ? allocate_raw(size, stream) : 0;
    // No half-made object: until the allocation holds it, the memory goes back if anything fails. A failure to
    // give it back is reported, and the original error is the one that propagates.
    auto allocated = own(address, [this, size, stream](CUdeviceptr unused) noexcept {
        if (unused)
            run_reported("freeing an allocation whose buffer could not be made",
                         [&] { deallocate(unused, size, stream); });
    });
    std::shared_ptr<Allocation> allocation =
        std::allocate_shared<Allocation>(PooledAllocator<Allocation>(), std::move(self), address, size,
                                         std::move(deallocation));  // moved: no extra reference counting
    allocated.release();  // the allocation frees it from here
    if (stream && stream_ordered_ && stream->capture_sink()) {
        // An allocation node of the graph being captured: the graph holds the resource, not the buffer.
        allocation->mark_in_graph();
        hold_for_capture(*stream, *this);
    }
    return make<Buffer>(std::move(allocation), address, size, traits_);
}

// ---- Legacy pinned: page-locked host memory from cuMemAllocHost -------------------

Ref<LegacyPinnedResource> LegacyPinnedResource::create(Device &device) {
    return make<LegacyPinnedResource>(device.primary_context());
}

LegacyPinnedResource::LegacyPinnedResource(Ref<Context> context) noexcept
    : MemoryResource(CUCORE_MEMORY_RESOURCE_LEGACY_PINNED, std::move(context), MemoryTraits{-1, true, true, false},
                     false) {}

CUdeviceptr LegacyPinnedResource::allocate_raw(uint64_t size, Stream *) {
    void *host = nullptr;
    ScopedContext bind(context()->cu());
    CUCORE_CALL(cuMemAllocHost, &host, static_cast<size_t>(size));
    return reinterpret_cast<CUdeviceptr>(host);
}

void LegacyPinnedResource::deallocate(CUdeviceptr address, uint64_t, Stream *) {
    ScopedContext bind(context()->cu());
    CUCORE_CALL(cuMemFreeHost, reinterpret_cast<void *>(address));
}

}  // namespace cucore::core
