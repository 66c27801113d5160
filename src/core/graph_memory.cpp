#include "core/graph_memory.hpp"

#include "core/device.hpp"
#include "core/error.hpp"
#include "core/memory_pool.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

namespace {

CUgraphMem_attribute driver_attribute(cucore_graph_memory_attribute_t attribute) noexcept {
    switch (attribute) {
        case CUCORE_GRAPH_MEMORY_USED_HIGH: return CU_GRAPH_MEM_ATTR_USED_MEM_HIGH;
        case CUCORE_GRAPH_MEMORY_RESERVED_CURRENT: return CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT;
        case CUCORE_GRAPH_MEMORY_RESERVED_HIGH: return CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH;
        default: return CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT;
    }
}

}  // namespace

Ref<GraphMemoryResource> GraphMemoryResource::create(Device &device) {
    MemoryTraits traits;
    traits.device_id = device.ordinal();
    traits.device_accessible = true;
    return make<GraphMemoryResource>(device.primary_context(), traits);
}

GraphMemoryResource::GraphMemoryResource(Ref<Context> context, MemoryTraits traits) noexcept
    : MemoryResource(CUCORE_MEMORY_RESOURCE_GRAPH, std::move(context), traits, true) {}

CUdeviceptr GraphMemoryResource::allocate_raw(uint64_t size, Stream *stream) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    ScopedContext bind(stream->cu_context(), stream->is_builtin());
    CUCORE_CALL(cuStreamIsCapturing, stream->cu(), &status);
    if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE)
        throw Error(CUCORE_ERROR_INVALID_STATE,
                    "a graph memory resource allocates only on a stream being captured into a graph (begin "
                    "building a graph builder and allocate on its stream)");
    CUdeviceptr address = 0;
    CUCORE_CALL(cuMemAllocAsync, &address, static_cast<size_t>(size), stream->cu());
    return address;
}

void GraphMemoryResource::deallocate(CUdeviceptr address, uint64_t, Stream *stream) {
    free_async(address, stream, context()->cu());
}

void GraphMemoryResource::trim(uint64_t) {
    ScopedContext bind(context()->cu());
    CUCORE_CALL(cuDeviceGraphMemTrim, context()->device().cu());
}

uint64_t GraphMemoryResource::attribute(cucore_graph_memory_attribute_t attribute) const {
    cuuint64_t value = 0;
    ScopedContext bind(context()->cu());
    CUCORE_CALL(cuDeviceGetGraphMemAttribute, context()->device().cu(), driver_attribute(attribute), &value);
    return value;
}

void GraphMemoryResource::reset_attribute(cucore_graph_memory_attribute_t attribute) {
    if (attribute != CUCORE_GRAPH_MEMORY_USED_HIGH && attribute != CUCORE_GRAPH_MEMORY_RESERVED_HIGH)
        throw_invalid_argument("argument 'attribute': only the high-water marks (USED_HIGH, RESERVED_HIGH) reset");
    cuuint64_t zero = 0;
    ScopedContext bind(context()->cu());
    CUCORE_CALL(cuDeviceSetGraphMemAttribute, context()->device().cu(), driver_attribute(attribute), &zero);
}

}  // namespace cucore::core
