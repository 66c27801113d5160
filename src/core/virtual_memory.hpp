// Virtual memory management: each buffer is physical memory (cuMemCreate)
// mapped into an address range reserved for it, which it can grow into.
#pragma once

#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/memory_resource.hpp"
#include "cucore/virtual_memory.h"

namespace cucore::core {

class VirtualResource final : public MemoryResource, public Pooled<VirtualResource> {
  public:
    static Ref<VirtualResource> create(Device &device, const cucore_virtual_memory_resource_options_t &options);
    // Where and how each buffer's address range is reserved (cuMemAddressReserve's hint and alignment).
    struct Placement {
        uint64_t hint = 0;
        uint64_t alignment = 0;
    };
    VirtualResource(Ref<Context> context, MemoryTraits traits, const CUmemAllocationProp &prop, size_t granularity,
                    uint64_t reserve_size, cucore_access_t self_access, Placement placement) noexcept;
    ~VirtualResource() override;

    void deallocate(CUdeviceptr address, uint64_t size, Stream *stream) override;
    void set_peer_access(Device &peer, cucore_access_t access) override;
    cucore_access_t peer_access(Device &peer) const override;

    // Grows the mapping at `address` to hold `new_size` bytes, copying its
    // contents; returns its address (the same while the reservation has room).
    // INVALID_ARGUMENT if `address` is not one of ours.
    CUdeviceptr grow(CUdeviceptr address, uint64_t new_size);

  protected:
    CUdeviceptr allocate_raw(uint64_t size, Stream *stream) override;

  private:
    struct Range {
        CUdeviceptr address;
        size_t size;
    };
    // One physical allocation per buffer, mapped at the start of its reservation:
    // asynchronous copies over a buffer grown by mapping more allocations behind
    // it failed on an H100 (driver 580), so a grow makes one allocation of the
    // whole size and copies into it.
    struct Mapping {
        Range reservation;
        CUmemGenericAllocationHandle handle;
        size_t mapped;  // the allocation's size
        // What a grow could not give back at once; retried when the buffer goes.
        std::vector<Range> leftover_mappings;
        std::vector<Range> leftover_reservations;
        std::vector<CUmemGenericAllocationHandle> leftover_handles;
    };

    size_t round_up(uint64_t size) const;
    std::vector<CUmemAccessDesc> access_list() const;  // self + peers; call with mutex_ held
    void set_access(CUdeviceptr address, size_t size) const;
    // Unmaps and frees what a grow left behind, reporting failures and keeping
    // what could not be given back for the buffer's release.
    static void give_back(Mapping &mapping, std::vector<Range> mappings, std::vector<Range> reservations,
                          CUmemGenericAllocationHandle handle) noexcept;

    CUmemAllocationProp prop_;
    size_t granularity_;
    uint64_t reserve_size_;
    cucore_access_t self_access_;
    Placement placement_;
    mutable std::mutex mutex_;
    std::unordered_map<CUdeviceptr, Mapping> mappings_;
    std::map<CUdevice, cucore_access_t> peers_;  // other devices -> granted access
};

}  // namespace cucore::core
