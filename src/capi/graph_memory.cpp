// C ABI: the graph memory resource.
#include "capi/capi.hpp"
#include "core/graph_memory.hpp"

using namespace cucore;

namespace {
core::GraphMemoryResource &graph_resource(const cucore_memory_resource_t *resource) {
    core::MemoryResource &object = capi::get(resource, "resource");
    auto *graph = dynamic_cast<core::GraphMemoryResource *>(&object);
    if (!graph) core::throw_invalid_argument("argument 'resource' is not a graph memory resource");
    return *graph;
}

cucore_graph_memory_attribute_t check_attribute(cucore_graph_memory_attribute_t attribute) {
    return capi::check_enum_range(attribute, CUCORE_GRAPH_MEMORY_USED_CURRENT, CUCORE_GRAPH_MEMORY_RESERVED_HIGH,
                                  "attribute", "must be a cucore_graph_memory_attribute_t");
}
}  // namespace

extern "C" {

cucore_status_t cucore_graph_memory_resource_create(cucore_device_t *device, cucore_memory_resource_t **resource) {
    return capi::guarded(__func__, [&] {
        cucore_memory_resource_t *&result = capi::out(resource, "resource");
        result = capi::give<cucore_memory_resource_t>(core::GraphMemoryResource::create(capi::get(device, "device")));
    });
}

cucore_status_t cucore_graph_memory_resource_attribute(const cucore_memory_resource_t *resource,
                                                       cucore_graph_memory_attribute_t attribute, uint64_t *value) {
    return capi::guarded(__func__, [&] {
        uint64_t &result = capi::out(value, "value");
        core::GraphMemoryResource &object = graph_resource(resource);
        result = object.attribute(check_attribute(attribute));
    });
}

cucore_status_t cucore_graph_memory_resource_reset_attribute(cucore_memory_resource_t *resource,
                                                             cucore_graph_memory_attribute_t attribute) {
    return capi::guarded(__func__, [&] { graph_resource(resource).reset_attribute(check_attribute(attribute)); });
}

}  // extern "C"
