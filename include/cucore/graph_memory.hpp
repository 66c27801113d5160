// libcucore C++ façade: the memory of graph allocation nodes (over cucore/graph_memory.h).
//
//   cucore::GraphMemoryResource graph_memory = cucore::GraphMemoryResource::create(dev);
//   builder.begin_building();
//   {
//       cucore::Buffer scratch = graph_memory.allocate(n * 4, builder.stream());  // an allocation node
//       cucore::launch(builder, config, kernel, scratch, n);
//       scratch.close(builder.stream());                                          // a free node
//   }
//   builder.end_building();
//   std::uint64_t high = graph_memory.used_mem_high();
//
// Graph allocations come from a reserve the driver keeps per device for
// graphs (cuda.core: GraphMemoryResource). A GraphMemoryResource is a
// MemoryResource (memory_resource.hpp) of kind CUCORE_MEMORY_RESOURCE_GRAPH,
// usable wherever one is, that allocates only on a stream being captured
// (graph_builder.hpp): each allocation becomes an allocation node, and the
// buffer's release or close on a capturing stream a free node. It also
// reports the device's graph memory and gives unused memory back (trim()).
// Allocation nodes of explicit definitions: GraphDefinition::add_alloc.
#ifndef CUCORE_GRAPH_MEMORY_HPP
#define CUCORE_GRAPH_MEMORY_HPP

#include <cstdint>

#include "common.hpp"
#include "device.hpp"
#include "graph_memory.h"
#include "memory_pool.hpp"      // MemoryResource::trim
#include "memory_resource.hpp"

namespace cucore {

// A memory resource for allocations inside graphs on one device (cuda.core:
// GraphMemoryResource). Exactly one C handle, like every MemoryResource it
// derives from; copies share the one library object. A default-constructed
// GraphMemoryResource is empty.
class GraphMemoryResource : public MemoryResource {
public:
    GraphMemoryResource() noexcept = default;

    // The graph memory of `device`. Allocations on a stream that is not being
    // captured throw INVALID_STATE. Throws Error: INVALID_HANDLE, OUT_OF_MEMORY.
    static GraphMemoryResource create(const Device &device) {
        cucore_memory_resource_t *raw = nullptr;
        detail::check(cucore_graph_memory_resource_create(device.get(), &raw));
        return adopt(raw);
    }

    // As MemoryResource's, for this type: takes ownership of one reference /
    // adds one to a handle the caller keeps (of a graph memory resource).
    static GraphMemoryResource adopt(cucore_memory_resource_t *raw) noexcept {
        GraphMemoryResource result;
        result.handle_ = raw;
        return result;
    }
    static GraphMemoryResource borrow(cucore_memory_resource_t *raw) {
        if (raw != nullptr) detail::check(cucore_memory_resource_retain(raw));
        return adopt(raw);
    }

    // An attribute of the device's graph memory, in bytes (cuda.core:
    // GraphMemoryResourceAttributes). Throws Error: INVALID_HANDLE,
    // INVALID_ARGUMENT (unknown attribute), CUDA.
    std::uint64_t attribute(cucore_graph_memory_attribute_t attribute) const {
        std::uint64_t value = 0;
        detail::check(cucore_graph_memory_resource_attribute(handle_, attribute, &value));
        return value;
    }
    // Memory graphs use now, and the most since the last reset.
    std::uint64_t used_mem_current() const { return attribute(CUCORE_GRAPH_MEMORY_USED_CURRENT); }
    std::uint64_t used_mem_high() const { return attribute(CUCORE_GRAPH_MEMORY_USED_HIGH); }
    // Memory reserved for graphs now, and the most since the last reset.
    std::uint64_t reserved_mem_current() const { return attribute(CUCORE_GRAPH_MEMORY_RESERVED_CURRENT); }
    std::uint64_t reserved_mem_high() const { return attribute(CUCORE_GRAPH_MEMORY_RESERVED_HIGH); }

    // Resets a high-water mark (USED_HIGH or RESERVED_HIGH) to the current
    // value. Throws Error: INVALID_HANDLE, INVALID_ARGUMENT (another
    // attribute), CUDA.
    void reset_attribute(cucore_graph_memory_attribute_t attribute) const {
        detail::check(cucore_graph_memory_resource_reset_attribute(handle_, attribute));
    }
    void reset_used_mem_high() const { reset_attribute(CUCORE_GRAPH_MEMORY_USED_HIGH); }
    void reset_reserved_mem_high() const { reset_attribute(CUCORE_GRAPH_MEMORY_RESERVED_HIGH); }
};

static_assert(sizeof(GraphMemoryResource) == sizeof(void *), "a GraphMemoryResource is exactly one C handle");

} // namespace cucore

#endif // CUCORE_GRAPH_MEMORY_HPP
