// Managed memory: the cuMemAllocManaged resource, and managed buffers' advice,
// range attributes, prefetch and discard.
#include "core/managed_memory.hpp"

#include <string>

#include "core/buffer.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/memory_pool.hpp"
#include "core/owned.hpp"
#include "core/release.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

// ---- The resource ----------------------------------------------------------------------

Ref<MemoryResource> make_managed_resource(Device &device, const cucore_managed_memory_resource_options_t &options) {
    if (options.use_pool)
        return PoolResource::managed_pool(device, {options.max_size, options.release_threshold, false},
                                          options.preferred_location);
    return ManagedResource::create(device, options.preferred_location);
}

Ref<ManagedResource> ManagedResource::create(Device &device, cucore_location_t preferred) {
    if (!device.attribute(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY))
        throw Error(CUCORE_ERROR_NOT_SUPPORTED,
                    "device " + std::to_string(device.ordinal()) + " does not support managed memory");
    return make<ManagedResource>(device.primary_context(), MemoryTraits{device.ordinal(), true, true, true},
                                 preferred);
}

ManagedResource::ManagedResource(Ref<Context> context, MemoryTraits traits, cucore_location_t preferred) noexcept
    : MemoryResource(CUCORE_MEMORY_RESOURCE_MANAGED, std::move(context), traits, false), preferred_(preferred) {}

CUdeviceptr ManagedResource::allocate_raw(uint64_t size, Stream *) {
    ScopedContext bind(context()->cu());
    CUdeviceptr address = 0;
    CUCORE_CALL(cuMemAllocManaged, &address, static_cast<size_t>(size), CU_MEM_ATTACH_GLOBAL);
    if (preferred_.type == CUCORE_LOCATION_NONE) return address;
    // No half-made allocation: a failed advice frees the memory (the context is still bound); a failed free is
    // reported, the advice's error returned.
    auto allocated = own(address, [](CUdeviceptr unadvised) noexcept {
        release_reported("cuMemFree", "freeing managed memory whose preferred-location advice failed",
                         [unadvised](const driver::Table &api) {
                             return api.cuMemFree ? api.cuMemFree(unadvised) : CUDA_ERROR_NOT_INITIALIZED;
                         });
    });
    CUCORE_CALL(cuMemAdvise, address, static_cast<size_t>(size), CU_MEM_ADVISE_SET_PREFERRED_LOCATION,
                to_cu_location(preferred_));
    return allocated.release();
}

void ManagedResource::deallocate(CUdeviceptr address, uint64_t, Stream *) {
    ScopedContext bind(context()->cu());
    CUCORE_CALL(cuMemFree, address);
}

// ---- Managed buffers ---------------------------------------------------------------------

bool advice_takes_location(cucore_memory_advice_t advice) noexcept {
    return advice == CUCORE_ADVICE_SET_PREFERRED_LOCATION || advice == CUCORE_ADVICE_SET_ACCESSED_BY ||
           advice == CUCORE_ADVICE_UNSET_ACCESSED_BY;
}

namespace {
// An advice the C ABI has checked (known values only).
CUmem_advise to_cu_advice(cucore_memory_advice_t advice) noexcept {
    switch (advice) {
        case CUCORE_ADVICE_SET_READ_MOSTLY: return CU_MEM_ADVISE_SET_READ_MOSTLY;
        case CUCORE_ADVICE_UNSET_READ_MOSTLY: return CU_MEM_ADVISE_UNSET_READ_MOSTLY;
        case CUCORE_ADVICE_SET_PREFERRED_LOCATION: return CU_MEM_ADVISE_SET_PREFERRED_LOCATION;
        case CUCORE_ADVICE_UNSET_PREFERRED_LOCATION: return CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION;
        case CUCORE_ADVICE_SET_ACCESSED_BY: return CU_MEM_ADVISE_SET_ACCESSED_BY;
        default: return CU_MEM_ADVISE_UNSET_ACCESSED_BY;
    }
}

int range_attribute(CUdeviceptr address, uint64_t size, CUmem_range_attribute attribute) {
    int value = 0;
    CUCORE_CALL(cuMemRangeGetAttribute, &value, sizeof value, attribute, address, static_cast<size_t>(size));
    return value;
}

cucore_location_t range_location(CUdeviceptr address, uint64_t size, CUmem_range_attribute type_attribute,
                                 CUmem_range_attribute id_attribute) {
    const int type = range_attribute(address, size, type_attribute);
    const int id = range_attribute(address, size, id_attribute);
    return from_cu_location(static_cast<CUmemLocationType>(type), id);
}
// cuMemAdvise and cuMemRangeGetAttribute work in the current context: bind the
// primary context of the memory's device (host-homed managed memory: device 0's).
class ManagedScope {
  public:
    explicit ManagedScope(int device_id)
        : context_(Device::get(device_id >= 0 ? device_id : 0)->primary_context()), bind_(context_->cu()) {}

  private:
    Ref<Context> context_;
    ScopedContext bind_;
};
}  // namespace

void Buffer::check_managed(const char *what) const {
    check_open("buffer");
    if (!traits_.managed)
        throw_invalid_argument(std::string(what) + " needs managed memory; argument 'buffer' is not managed");
}

void Buffer::advise(cucore_memory_advice_t advice, cucore_location_t location) {
    check_managed("advice");
    const CUmem_advise cu_advice = to_cu_advice(advice);
    CUmemLocation cu_location{};
    if (advice_takes_location(advice)) {
        cu_location = to_cu_location(location);
    } else {
        cu_location.type = CU_MEM_LOCATION_TYPE_DEVICE;  // ignored by the driver
        cu_location.id = traits_.device_id >= 0 ? traits_.device_id : 0;
    }
    if (size_ == 0) return;
    ManagedScope scope(traits_.device_id);
    CUCORE_CALL(cuMemAdvise, address_, static_cast<size_t>(size_), cu_advice, cu_location);
}

void Buffer::advice(int *read_mostly, cucore_location_t *preferred_location) const {
    check_managed("advice");
    if (size_ == 0) {
        if (read_mostly) *read_mostly = 0;
        if (preferred_location) *preferred_location = {CUCORE_LOCATION_NONE, 0};
        return;
    }
    ManagedScope scope(traits_.device_id);
    if (read_mostly) *read_mostly = range_attribute(address_, size_, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY) ? 1 : 0;
    if (preferred_location)
        *preferred_location = range_location(address_, size_, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE,
                                             CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID);
}

bool Buffer::is_accessed_by(cucore_location_t location) const {
    check_managed("accessed-by");
    const int wanted = location.type == CUCORE_LOCATION_HOST ? CU_DEVICE_CPU : location.id;
    if (size_ == 0) return false;
    // The driver lists the processors (device ordinals, CU_DEVICE_CPU for the
    // host; CU_DEVICE_INVALID marks the end) with the advice set.
    ManagedScope scope(traits_.device_id);
    int devices[64];
    for (int &device : devices) device = CU_DEVICE_INVALID;
    CUCORE_CALL(cuMemRangeGetAttribute, devices, sizeof devices, CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, address_,
                static_cast<size_t>(size_));
    for (int device : devices) {
        if (device == CU_DEVICE_INVALID) break;
        if (device == wanted) return true;
    }
    return false;
}

cucore_location_t Buffer::last_prefetch_location() const {
    check_managed("the last prefetch location");
    if (size_ == 0) return {CUCORE_LOCATION_NONE, 0};
    ManagedScope scope(traits_.device_id);
    return range_location(address_, size_, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
                          CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID);
}

void Buffer::prefetch(cucore_location_t location, Stream &stream) {
    check_managed("prefetch");
    const CUmemLocation cu_location = to_cu_location(location);
    if (size_ == 0) return;
    ScopedContext bind(stream.cu_context(), stream.is_builtin());
    CUCORE_CALL(cuMemPrefetchAsync, address_, static_cast<size_t>(size_), cu_location, 0, stream.cu());
}

void Buffer::discard(const cucore_location_t *prefetch_location, Stream &stream) {
    check_managed("discard");
    CUmemLocation cu_location{};
    if (prefetch_location) cu_location = to_cu_location(*prefetch_location);
    if (size_ == 0) return;
    CUdeviceptr address = address_;
    size_t size = static_cast<size_t>(size_);
    ScopedContext bind(stream.cu_context(), stream.is_builtin());
    if (prefetch_location) {
        size_t location_index = 0;
        CUCORE_CALL(cuMemDiscardAndPrefetchBatchAsync, &address, &size, 1, &cu_location, &location_index, 1, 0,
                    stream.cu());
    } else {
        CUCORE_CALL(cuMemDiscardBatchAsync, &address, &size, 1, 0, stream.cu());
    }
}

}  // namespace cucore::core
