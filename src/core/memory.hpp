// Memory resources and buffers.
//
// A buffer's memory is an Allocation shared by the buffer and its views: it is
// freed when the last of them lets go (closing a buffer lets go early), on the
// allocation's deallocation stream for stream-ordered resources.
#pragma once

#include <cuda.h>

#include <atomic>
#include <memory>
#include <mutex>

#include "core/context.hpp"
#include "core/handle.hpp"
#include "core/owner.hpp"
#include "core/stream.hpp"
#include "core/thread_cache.hpp"
#include "cucore/memory.h"

namespace cucore::core {

class Buffer;

class MemoryResource final : public Object, public Pooled<MemoryResource> {
  public:
    // The device's current pool (not owned).
    static Ref<MemoryResource> device_default(Device &device);
    // A new pool on the device (owned: destroyed with the last reference).
    static Ref<MemoryResource> device_pool(Device &device, uint64_t max_size, uint64_t release_threshold);
    // cuMemAllocHost in the device's primary context.
    static Ref<MemoryResource> legacy_pinned(Device &device);

    MemoryResource(cucore_memory_resource_kind_t kind, Ref<Context> context, CUmemoryPool pool,
                   bool owns_pool) noexcept;
    ~MemoryResource() override;

    // `stream` may be null only for synchronous resources.
    Ref<Buffer> allocate(uint64_t size, Stream *stream);
    // Returns `address` to the resource, ordered on `stream` where it is stream-ordered.
    void deallocate(CUdeviceptr address, Stream *stream);

    // Pool attributes and trimming; NOT_SUPPORTED for a resource without a pool.
    uint64_t pool_attribute(cucore_pool_attribute_t attribute) const;
    void set_pool_attribute(cucore_pool_attribute_t attribute, uint64_t value);
    void trim(uint64_t min_bytes_to_keep);

    cucore_memory_resource_kind_t kind() const noexcept { return kind_; }
    CUmemoryPool pool() const noexcept { return pool_; }
    int device_id() const noexcept;  // -1 for host memory
    bool device_accessible() const noexcept { return true; }
    bool host_accessible() const noexcept { return kind_ == CUCORE_MEMORY_RESOURCE_LEGACY_PINNED; }
    bool is_stream_ordered() const noexcept { return kind_ == CUCORE_MEMORY_RESOURCE_DEVICE; }

  private:
    void require_pool(const char *what) const;

    cucore_memory_resource_kind_t kind_;
    Ref<Context> context_;
    CUmemoryPool pool_;
    bool owns_pool_;
    int device_id_;  // cached: checked on every allocation
};

// Memory and how to give it back; shared by a buffer and its views.
class Allocation {
  public:
    Allocation(Ref<MemoryResource> resource, CUdeviceptr address, Ref<Stream> deallocation_stream) noexcept;
    explicit Allocation(CUdeviceptr address) noexcept;  // foreign: not freed, its owner told
    ~Allocation();  // frees (errors reported), or tells the foreign owner
    Allocation(const Allocation &) = delete;
    Allocation &operator=(const Allocation &) = delete;

    const Ref<MemoryResource> &resource() const noexcept { return resource_; }
    // Attached once the wrapping buffer exists, so a failed wrap never calls it.
    void set_owner(cucore_release_fn on_release, void *user_data) noexcept { owner_.set(on_release, user_data); }
    void set_deallocation_stream(Ref<Stream> stream);

  private:
    Ref<MemoryResource> resource_;  // null for foreign memory
    CUdeviceptr address_;
    std::mutex mutex_;
    Ref<Stream> deallocation_stream_;
    ForeignOwner owner_;
};

class Buffer final : public Object, public Pooled<Buffer> {
  public:
    // Foreign memory, not owned; `device_id` -1 for host memory.
    static Ref<Buffer> wrap(CUdeviceptr address, uint64_t size, int device_id, cucore_release_fn on_release,
                            void *user_data);

    Buffer(std::shared_ptr<Allocation> allocation, CUdeviceptr address, uint64_t size, int device_id,
           bool device_accessible, bool host_accessible) noexcept;
    ~Buffer() override;

    Ref<Buffer> view(uint64_t offset, uint64_t size);
    void close(Stream *stream);
    void set_deallocation_stream(Stream &stream);
    void copy_from(Buffer &source, Stream &stream);
    void copy_from_host(uint64_t offset, const void *source, uint64_t size, Stream &stream);
    void copy_to_host(uint64_t offset, void *destination, uint64_t size, Stream &stream);
    void fill(uint32_t value, uint32_t value_size, Stream &stream);

    uint64_t size() const noexcept { return closed_.load(std::memory_order_acquire) ? 0 : size_; }
    CUdeviceptr address() const noexcept { return closed_.load(std::memory_order_acquire) ? 0 : address_; }
    int device_id() const noexcept { return device_id_; }
    bool device_accessible() const noexcept { return device_accessible_; }
    bool host_accessible() const noexcept { return host_accessible_; }
    Ref<MemoryResource> resource() const;

  private:
    void check_open(const char *what) const;
    void check_range(uint64_t offset, uint64_t size, const char *what) const;

    mutable std::mutex mutex_;  // guards allocation_ against close (rare operations)
    std::shared_ptr<Allocation> allocation_;
    CUdeviceptr address_;
    uint64_t size_;
    int device_id_;
    bool device_accessible_;
    bool host_accessible_;
    std::atomic<bool> closed_{false};
};

}  // namespace cucore::core
