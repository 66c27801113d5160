// Graph memory: the memory resource of allocations made while a stream is
// captured (each becomes an allocation node; a free on a capturing stream, a
// free node), and the device's graph memory reserve it reports and trims.
#pragma once

#include "core/memory_resource.hpp"
#include "cucore/graph_memory.h"

namespace cucore::core {

class GraphMemoryResource final : public MemoryResource, public Pooled<GraphMemoryResource> {
  public:
    static Ref<GraphMemoryResource> create(Device &device);
    explicit GraphMemoryResource(Ref<Context> context, MemoryTraits traits) noexcept;

    void deallocate(CUdeviceptr address, uint64_t size, Stream *stream) override;
    // Gives the device's unused graph memory back (`min_bytes_to_keep` is not the driver's to honour).
    void trim(uint64_t min_bytes_to_keep) override;

    uint64_t attribute(cucore_graph_memory_attribute_t attribute) const;
    void reset_attribute(cucore_graph_memory_attribute_t attribute);

  protected:
    CUdeviceptr allocate_raw(uint64_t size, Stream *stream) override;
};

}  // namespace cucore::core
