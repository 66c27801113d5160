#include "core/memory_legacy_pinned.hpp"

#include "core/device.hpp"
#include "core/error.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

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
