// Memory resources: the abstract MemoryResource every kind derives from, and
// the legacy pinned kind.
//
// A resource hands out addresses (allocate_raw) and takes them back
// (deallocate); allocate() turns an address into a Buffer (buffer.hpp) that
// holds the resource. Each other kind lives in its own file (memory_pool.hpp,
// managed_memory.hpp, virtual_memory.hpp, user_memory.hpp); page-locked host
// memory from cuMemAllocHost is here, since it is nothing but the base.
#pragma once

#include <cuda.h>

#include "core/context.hpp"
#include "core/handle.hpp"
#include "core/stream.hpp"
#include "core/thread_cache.hpp"
#include "cucore/memory_pool.h"      // cucore_pool_attribute_t: pool operations are virtual here
#include "cucore/memory_resource.h"

namespace cucore::core {

class Buffer;
class Device;

// What a range of memory is and who can reach it.
struct MemoryTraits {
    int device_id = -1;  // -1: host memory
    bool device_accessible = false;
    bool host_accessible = false;
    bool managed = false;
};

// The driver's CUmemLocation of a public location (checked by the C ABI: capi::check_location).
CUmemLocation to_cu_location(cucore_location_t location) noexcept;
cucore_location_t from_cu_location(CUmemLocationType type, int id) noexcept;

class MemoryResource : public Object {
  public:
    ~MemoryResource() override;

    // `stream` may be null only for synchronous resources.
    Ref<Buffer> allocate(uint64_t size, Stream *stream);
    // Returns memory to the resource, ordered on `stream` where it is stream-ordered.
    virtual void deallocate(CUdeviceptr address, uint64_t size, Stream *stream) = 0;
    // deallocate() for a caller outside the library: the stream checked as allocate() checks it; address 0
    // (an empty allocation) is a no-op.
    void deallocate_checked(CUdeviceptr address, uint64_t size, Stream *stream);

    // Pools only (NOT_SUPPORTED elsewhere).
    virtual CUmemoryPool pool() const noexcept { return nullptr; }
    // Whether the last reference destroys the pool (false without one).
    virtual bool owns_pool() const noexcept { return false; }
    virtual uint64_t pool_attribute(cucore_pool_attribute_t attribute) const;
    virtual void set_pool_attribute(cucore_pool_attribute_t attribute, uint64_t value);
    virtual void trim(uint64_t min_bytes_to_keep);
    // Pools and virtual resources only.
    virtual void set_peer_access(Device &peer, cucore_access_t access);
    virtual cucore_access_t peer_access(Device &peer) const;

    cucore_memory_resource_kind_t kind() const noexcept { return kind_; }
    const MemoryTraits &traits() const noexcept { return traits_; }
    int device_id() const noexcept { return traits_.device_id; }
    bool device_accessible() const noexcept { return traits_.device_accessible; }
    bool host_accessible() const noexcept { return traits_.host_accessible; }
    bool is_managed() const noexcept { return traits_.managed; }
    bool is_stream_ordered() const noexcept { return stream_ordered_; }
    // The context the resource works in (null for user resources).
    Context *context() const noexcept { return context_.get(); }

  protected:
    MemoryResource(cucore_memory_resource_kind_t kind, Ref<Context> context, MemoryTraits traits,
                   bool stream_ordered) noexcept;
    // `size` > 0; for stream-ordered resources `stream` is non-null and on the resource's device.
    virtual CUdeviceptr allocate_raw(uint64_t size, Stream *stream) = 0;
    [[noreturn]] void not_supported(const char *message) const;
    // A stream-ordered resource needs a stream of its device (host pools: of any device) to `what` on.
    void check_stream(Stream *stream, const char *what) const {
        if (!stream_ordered_) return;
        if (__builtin_expect(stream && (stream_ordinal_ < 0 || stream->device_ordinal() == stream_ordinal_), 1))
            return;
        refuse_stream(stream, what);
    }

  private:
    [[noreturn]] void refuse_stream(Stream *stream, const char *what) const;

    cucore_memory_resource_kind_t kind_;
    Ref<Context> context_;
    MemoryTraits traits_;
    bool stream_ordered_;
    int stream_ordinal_;  // the device whose streams it takes (its context's, cached: no chase per call); -1: any
};

// Page-locked host memory from cuMemAllocHost (synchronous).
class LegacyPinnedResource final : public MemoryResource, public Pooled<LegacyPinnedResource> {
  public:
    static Ref<LegacyPinnedResource> create(Device &device);
    explicit LegacyPinnedResource(Ref<Context> context) noexcept;

    void deallocate(CUdeviceptr address, uint64_t size, Stream *stream) override;

  protected:
    CUdeviceptr allocate_raw(uint64_t size, Stream *stream) override;
};

}  // namespace cucore::core
