#include "core/memory_managed.hpp"

#include <string>

#include "core/device.hpp"
#include "core/error.hpp"
#include "core/memory_pool.hpp"
#include "core/owned.hpp"
#include "core/release.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

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

}  // namespace cucore::core
