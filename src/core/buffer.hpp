// Buffers and the allocations they share.
//
// A buffer's memory is an Allocation shared by the buffer and its views: it is
// released when the last of them lets go (closing a buffer lets go early), on
// the allocation's deallocation stream: by its resource (memory_resource.hpp),
// or, for memory that no resource gives back (foreign memory, DLPack imports,
// GL mappings, pointers imported from another process), by the allocation's
// deleter. A Buffer's managed-memory operations are defined in
// managed_memory.cpp.
#pragma once

#include <cuda.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>

#include "core/handle.hpp"
#include "core/memory_resource.hpp"
#include "core/stream.hpp"
#include "core/thread_cache.hpp"
#include "cucore/buffer.h"
#include "cucore/managed_memory.h"  // cucore_memory_advice_t: a Buffer's managed operations

namespace cucore::core {

// Memory and how to give it back; shared by a buffer and its views, released
// once, by the last of them.
class Allocation {
  public:
    // How memory that no memory resource gives back is released: called once, by
    // the allocation's last holder, with the deallocation stream (null when there
    // is none); what it throws is reported as a release error. It captures what
    // it needs (a GL mapping to end, the context of an imported pointer, a
    // foreign owner's callback).
    using Deleter = std::function<void(Stream *deallocation_stream)>;

    // Memory of `resource`, given back with its deallocate on the deallocation stream.
    Allocation(Ref<MemoryResource> resource, CUdeviceptr address, uint64_t size,
               Ref<Stream> deallocation_stream) noexcept;
    // Memory released by `deleter` (none: nothing to do, or attached later with
    // set_deleter). `source` is the resource the memory is reported to come from
    // (the imported pool of an imported buffer; null for foreign memory and GL
    // mappings), held while the memory lives; it does not release it.
    Allocation(CUdeviceptr address, uint64_t size, Ref<Stream> deallocation_stream, Deleter deleter,
               Ref<MemoryResource> source = {}) noexcept;
    ~Allocation();  // releases the memory (failures reported)
    Allocation(const Allocation &) = delete;
    Allocation &operator=(const Allocation &) = delete;

    // Graph memory: allocated on a stream being captured (an allocation node).
    bool in_graph() const noexcept { return in_graph_; }
    void mark_in_graph() noexcept { in_graph_ = true; }

    // The resource the memory comes from (null for memory of no resource).
    const Ref<MemoryResource> &resource() const noexcept { return resource_; }
    CUdeviceptr address() const noexcept { return address_; }
    // A foreign owner's deleter is attached once the wrapping buffer exists, so a failed wrap never calls it.
    void set_deleter(Deleter deleter) noexcept { deleter_ = std::move(deleter); }
    void set_deallocation_stream(Ref<Stream> stream);
    Ref<Stream> deallocation_stream();
    // After the resource moved or grew the memory (virtual memory).
    void relocate(CUdeviceptr address, uint64_t size) noexcept;

  private:
    Ref<MemoryResource> resource_;  // releases the memory unless a deleter does
    CUdeviceptr address_;
    uint64_t size_;
    std::mutex mutex_;
    Ref<Stream> deallocation_stream_;
    Deleter deleter_;  // memory of no resource (or only reported as a resource's)
    bool in_graph_ = false;
};

class Buffer final : public Object, public Pooled<Buffer> {
  public:
    // Foreign memory, not owned; on_release(user_data) runs once the last buffer or view on it goes.
    static Ref<Buffer> wrap(CUdeviceptr address, uint64_t size, const MemoryTraits &traits,
                            cucore_release_fn on_release, void *user_data);

    Buffer(std::shared_ptr<Allocation> allocation, CUdeviceptr address, uint64_t size,
           const MemoryTraits &traits) noexcept;
    ~Buffer() override;

    Ref<Buffer> view(uint64_t offset, uint64_t size);
    void close(Stream *stream);
    void set_deallocation_stream(Stream &stream);
    Ref<Stream> deallocation_stream() const;
    void copy_from(Buffer &source, Stream &stream);
    void copy_from_host(uint64_t offset, const void *source, uint64_t size, Stream &stream);
    void copy_to_host(uint64_t offset, void *destination, uint64_t size, Stream &stream);
    void fill(uint32_t value, uint32_t value_size, Stream &stream);
    void grow(uint64_t new_size);  // virtual memory only

    // Managed memory (managed_memory.cpp).
    void advise(cucore_memory_advice_t advice, cucore_location_t location);
    void advice(int *read_mostly, cucore_location_t *preferred_location) const;
    bool is_accessed_by(cucore_location_t location) const;
    cucore_location_t last_prefetch_location() const;
    void prefetch(cucore_location_t location, Stream &stream);
    void discard(const cucore_location_t *prefetch_location, Stream &stream);

    uint64_t size() const noexcept {
        return closed_.load(std::memory_order_acquire) ? 0 : size_.load(std::memory_order_relaxed);
    }
    CUdeviceptr address() const noexcept {
        return closed_.load(std::memory_order_acquire) ? 0 : address_.load(std::memory_order_relaxed);
    }
    const MemoryTraits &traits() const noexcept { return traits_; }
    int device_id() const noexcept { return traits_.device_id; }
    bool device_accessible() const noexcept { return traits_.device_accessible; }
    bool host_accessible() const noexcept { return traits_.host_accessible; }
    bool is_managed() const noexcept { return traits_.managed; }
    Ref<MemoryResource> resource() const;
    // The allocation, or null when closed (IPC export needs its start and resource).
    std::shared_ptr<Allocation> allocation() const;
    // Whether this buffer covers its allocation from its start (not a view into it).
    bool is_whole_allocation() const;

    // Whether the memory is graph memory allocated during a capture (see Allocation::in_graph).
    bool in_graph() const;

    void check_open(const char *what) const;
    // `what` names the region in messages ("the buffer", "'src'").
    void check_range(uint64_t offset, uint64_t size, const char *what) const;

  private:
    void check_managed(const char *what) const;

    mutable std::mutex mutex_;  // guards allocation_ against close (rare operations)
    std::shared_ptr<Allocation> allocation_;
    // Atomic because grow() may move and resize the buffer while other threads read it.
    std::atomic<CUdeviceptr> address_;
    std::atomic<uint64_t> size_;
    MemoryTraits traits_;
    bool is_view_ = false;
    std::atomic<bool> closed_{false};
};

// The one check of a fill's element: 1, 2 or 4 bytes (`size_argument` names it), and a value that fits.
void check_fill_value(uint32_t value, uint32_t value_size, const char *size_argument);

// Keeps `buffer` alive for the graph `stream` is being captured into, if any
// (not graph memory of that capture, whose free belongs in the graph).
// Device memory that belongs to one device (not managed, not host memory).
inline bool is_device_memory(const Buffer &buffer) noexcept {
    return buffer.device_id() >= 0 && !buffer.is_managed();
}
// A copy between `buffer` and host memory must run on a stream of the buffer's own device: the driver
// segfaulted copying another device's memory to pageable host memory on an H200 pair. INVALID_ARGUMENT
// naming `name` otherwise (device memory only; managed and host memory are reachable from any stream).
void check_stream_reaches(const Buffer &buffer, const Stream &stream, const char *name);

void hold_buffer_for_capture(Stream &stream, Buffer &buffer);

}  // namespace cucore::core
