// Virtual memory management: each buffer is physical memory (cuMemCreate)
// mapped into an address range reserved for it, which it can grow into.
#pragma once

#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/memory.hpp"

namespace cucore::core {

class VirtualResource final : public MemoryResource, public Pooled<VirtualResource> {
  public:
    static Ref<VirtualResource> create(Device &device, const cucore_virtual_memory_resource_options_t &options);
    VirtualResource(Ref<Context> context, MemoryTraits traits, const CUmemAllocationProp &prop, size_t granularity,
                    uint64_t reserve_size, cucore_access_t self_access) noexcept;
    ~VirtualResource() override;

    void deallocate(CUdeviceptr address, uint64_t size, Stream *stream) override;
    void set_peer_access(Device &peer, cucore_access_t access) override;
    cucore_access_t peer_access(Device &peer) const override;

    // Grows the mapping at `address` to hold `new_size` bytes; returns its
    // (possibly new) address. INVALID_ARGUMENT if `address` is not one of ours.
    CUdeviceptr grow(CUdeviceptr address, uint64_t new_size);

  protected:
    CUdeviceptr allocate_raw(uint64_t size, Stream *stream) override;

  private:
    // Physical memory mapped at base + offset. Each chunk lies in one
    // reservation and is mapped, unmapped and given access on its own.
    struct Chunk {
        CUmemGenericAllocationHandle handle;
        size_t offset;
        size_t size;
    };
    struct Range {
        CUdeviceptr address;
        size_t size;
    };
    // Old address ranges a relocation could not give back at once; retried when the buffer goes.
    struct Retired {
        std::vector<Range> mapped;        // still mapped (their unmap failed)
        std::vector<Range> reservations;  // still reserved
    };
    struct Mapping {
        std::vector<Range> reservations;  // contiguous, in address order
        std::vector<Chunk> chunks;        // mapped back to back from the first reservation's start
        size_t mapped = 0;
        std::vector<Retired> retired;
        size_t reserved() const noexcept;
    };

    size_t round_up(uint64_t size) const;
    std::vector<CUmemAccessDesc> access_list() const;  // self + peers; call with mutex_ held
    void set_access(CUdeviceptr address, size_t size) const;
    // Creates a chunk of `size` bytes, maps it at base + offset and grants access;
    // undoes its own steps if one fails.
    Chunk map_new_chunk(CUdeviceptr base, size_t offset, size_t size);
    // Maps an existing chunk at base + its offset and grants access (relocation).
    void map_chunk(CUdeviceptr base, const Chunk &chunk);

    CUmemAllocationProp prop_;
    size_t granularity_;
    uint64_t reserve_size_;
    cucore_access_t self_access_;
    mutable std::mutex mutex_;
    std::unordered_map<CUdeviceptr, Mapping> mappings_;
    std::map<CUdevice, cucore_access_t> peers_;  // other devices -> granted access
};

}  // namespace cucore::core
