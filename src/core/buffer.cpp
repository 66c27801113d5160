// Buffers and the allocations they share: lifetime, views, copies and fills.
#include "core/buffer.hpp"

#include <string>

#include "core/device.hpp"
#include "core/error.hpp"
#include "core/graph_attachments.hpp"
#include "core/virtual_memory.hpp"
#include "core/release.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

// ---- Allocation ----------------------------------------------------------------------

Allocation::Allocation(Ref<MemoryResource> resource, CUdeviceptr address, uint64_t size,
                       Ref<Stream> deallocation_stream) noexcept
    : resource_(std::move(resource)),
      address_(address),
      size_(size),
      deallocation_stream_(std::move(deallocation_stream)) {}

Allocation::Allocation(CUdeviceptr address, uint64_t size, Ref<Stream> deallocation_stream, Deleter deleter,
                       Ref<MemoryResource> source) noexcept
    : resource_(std::move(source)),
      address_(address),
      size_(size),
      deallocation_stream_(std::move(deallocation_stream)),
      deleter_(std::move(deleter)) {}

Allocation::~Allocation() {
    if (deleter_) {
        run_reported("freeing a buffer", [this] { deleter_(deallocation_stream_.get()); });
        return;
    }
    if (!resource_ || address_ == 0) return;  // zero-size buffers own nothing
    // The resource's deallocate directly in this frame: the hot path of every buffer's release.
    run_reported("freeing a buffer", [this] { resource_->deallocate(address_, size_, deallocation_stream_.get()); });
}

void Allocation::set_deallocation_stream(Ref<Stream> stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    deallocation_stream_ = std::move(stream);
}

Ref<Stream> Allocation::deallocation_stream() {
    std::lock_guard<std::mutex> lock(mutex_);
    return deallocation_stream_;
}

void Allocation::relocate(CUdeviceptr address, uint64_t size) noexcept {
    address_ = address;
    size_ = size;
}

// ---- Buffer -------------------------------------------------------------------------

Ref<Buffer> Buffer::wrap(CUdeviceptr address, uint64_t size, const MemoryTraits &traits, cucore_release_fn on_release,
                         void *user_data) {
    if (address == 0 && size != 0) throw_invalid_argument("argument 'address' is 0 but 'size' is not");
    auto allocation = std::allocate_shared<Allocation>(PooledAllocator<Allocation>(), address, size, Ref<Stream>(),
                                                       Allocation::Deleter());
    Ref<Buffer> buffer = make<Buffer>(allocation, address, size, traits);
    if (on_release) allocation->set_deleter([on_release, user_data](Stream *) { on_release(user_data); });
    return buffer;
}

Buffer::Buffer(std::shared_ptr<Allocation> allocation, CUdeviceptr address, uint64_t size,
               const MemoryTraits &traits) noexcept
    : Object(CUCORE_OBJECT_BUFFER),
      allocation_(std::move(allocation)),
      address_(address),
      size_(size),
      traits_(traits) {}

Buffer::~Buffer() = default;  // the allocation frees itself with its last holder

Ref<MemoryResource> Buffer::resource() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return allocation_ ? allocation_->resource() : Ref<MemoryResource>();
}

std::shared_ptr<Allocation> Buffer::allocation() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return allocation_;
}

bool Buffer::is_whole_allocation() const { return !is_view_; }

Ref<Stream> Buffer::deallocation_stream() const {
    std::shared_ptr<Allocation> allocation = this->allocation();
    return allocation ? allocation->deallocation_stream() : Ref<Stream>();
}

void Buffer::check_open(const char *what) const {
    if (closed_.load(std::memory_order_acquire))
        throw Error(CUCORE_ERROR_INVALID_STATE, std::string("argument '") + what + "' is a closed buffer");
}

void Buffer::check_range(uint64_t offset, uint64_t size, const char *what) const {
    if (offset > size_ || size > size_ - offset)
        throw_invalid_argument(std::string("the range [") + std::to_string(offset) + ", " + std::to_string(offset) +
                               " + " + std::to_string(size) + ") is outside " + what + " of " +
                               std::to_string(size_) + " bytes");
}

Ref<Buffer> Buffer::view(uint64_t offset, uint64_t size) {
    check_open("buffer");
    check_range(offset, size, "the buffer");
    std::shared_ptr<Allocation> allocation;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        allocation = allocation_;
    }
    Ref<Buffer> view = make<Buffer>(std::move(allocation), address_ + offset, size, traits_);
    view->is_view_ = true;
    return view;
}

void Buffer::close(Stream *stream) {
    std::shared_ptr<Allocation> allocation;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (closed_.load(std::memory_order_relaxed)) return;  // idempotent
        if (stream && allocation_) allocation_->set_deallocation_stream(Ref<Stream>(stream));
        allocation = std::move(allocation_);
        closed_.store(true, std::memory_order_release);
    }
    // Freed here unless views still hold it. A failure to free is reported,
    // since the buffer is closed either way.
    allocation.reset();
}

void Buffer::set_deallocation_stream(Stream &stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!allocation_) throw Error(CUCORE_ERROR_INVALID_STATE, "argument 'buffer' is a closed buffer");
    allocation_->set_deallocation_stream(Ref<Stream>(&stream));
}

bool Buffer::in_graph() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return allocation_ && allocation_->in_graph();
}

void hold_buffer_for_capture(Stream &stream, Buffer &buffer) {
    if (GraphAttachments *sink = stream.capture_sink(); __builtin_expect(sink != nullptr, 0)) sink->keep_buffer(buffer);
}

void check_stream_reaches(const Buffer &buffer, const Stream &stream, const char *name) {
    if (is_device_memory(buffer) && buffer.device_id() != stream.device_ordinal())
        throw_invalid_argument(std::string("'") + name + "' is memory of device " + std::to_string(buffer.device_id()) +
                               " and 'stream' a stream of device " + std::to_string(stream.device_ordinal()) +
                               "; copy it on a stream of its own device (copies between two devices' memory may "
                               "use either)");
}

void Buffer::copy_from(Buffer &source, Stream &stream) {
    check_open("dst");
    source.check_open("src");
    if (source.size_ != size_)
        throw_invalid_argument("buffer sizes differ: 'dst' has " + std::to_string(size_) + " bytes, 'src' " +
                               std::to_string(source.size_));
    if (size_ == 0) return;
    // A copy that touches host memory runs with the stream's context current: the driver refused pageable host
    // copies into device 1's memory (INVALID_VALUE) while device 0's context was current (H200 pair).
    ScopedContext bind(stream.cu_context(), stream.is_builtin() || source.device_id() < 0 || device_id() < 0);
    const bool device_to_device = traits_.device_id >= 0 && source.traits_.device_id >= 0 && !traits_.managed &&
                                  !source.traits_.managed;
    if (device_to_device && traits_.device_id != source.traits_.device_id) {
        // Memory of two devices: a peer copy, which works without peer access.
        Ref<Context> destination = Device::get(traits_.device_id)->primary_context();
        Ref<Context> origin = Device::get(source.traits_.device_id)->primary_context();
        CUCORE_CALL(cuMemcpyPeerAsync, address_, destination->cu(), source.address_, origin->cu(),
                    static_cast<size_t>(size_), stream.cu());
    } else {
        // Host memory on one side: the device side's own stream (two buffers of one device may use another
        // device's stream where that device was granted access).
        if (source.device_id() < 0) check_stream_reaches(*this, stream, "dst");
        if (device_id() < 0) check_stream_reaches(source, stream, "src");
        CUCORE_CALL(cuMemcpyAsync, address_, source.address_, static_cast<size_t>(size_), stream.cu());
    }
    hold_buffer_for_capture(stream, *this);
    hold_buffer_for_capture(stream, source);
}

void Buffer::copy_from_host(uint64_t offset, const void *source, uint64_t size, Stream &stream) {
    stream.refuse_during_capture("a copy from host memory (the graph would keep a host pointer it cannot own; copy "
                                 "from a pinned buffer with cucore_buffer_copy)");
    check_open("buffer");
    check_range(offset, size, "the buffer");
    check_stream_reaches(*this, stream, "buffer");
    if (size == 0) return;
    ScopedContext bind(stream.cu_context());  // host memory: the stream's context current (see copy_from)
    CUCORE_CALL(cuMemcpyAsync, address_ + offset, reinterpret_cast<CUdeviceptr>(source), static_cast<size_t>(size),
                stream.cu());
    hold_buffer_for_capture(stream, *this);
}

void Buffer::copy_to_host(uint64_t offset, void *destination, uint64_t size, Stream &stream) {
    stream.refuse_during_capture("a copy to host memory (the graph would keep a host pointer it cannot own; copy "
                                 "to a pinned buffer with cucore_buffer_copy)");
    check_open("buffer");
    check_range(offset, size, "the buffer");
    check_stream_reaches(*this, stream, "buffer");
    if (size == 0) return;
    ScopedContext bind(stream.cu_context());  // host memory: the stream's context current (see copy_from)
    CUCORE_CALL(cuMemcpyAsync, reinterpret_cast<CUdeviceptr>(destination), address_ + offset,
                static_cast<size_t>(size), stream.cu());
    hold_buffer_for_capture(stream, *this);
}

void check_fill_value(uint32_t value, uint32_t value_size, const char *size_argument) {
    if (value_size != 1 && value_size != 2 && value_size != 4)
        throw_invalid_argument(std::string("argument '") + size_argument + "' is " + std::to_string(value_size) +
                               "; it must be 1, 2 or 4");
    if (value_size < 4 && (value >> (8 * value_size)) != 0)
        throw_invalid_argument("argument 'value' (" + std::to_string(value) + ") does not fit in " +
                               std::to_string(value_size) + " byte" + (value_size == 1 ? "" : "s"));
}

void Buffer::fill(uint32_t value, uint32_t value_size, Stream &stream) {
    check_open("buffer");
    check_fill_value(value, value_size, "value_size");
    if (size_ % value_size != 0)
        throw_invalid_argument("the buffer's size (" + std::to_string(size_) + ") is not a multiple of " +
                               std::to_string(value_size));
    if (address_ % value_size != 0)
        throw_invalid_argument("the buffer's address is not aligned to " + std::to_string(value_size) + " bytes");
    if (size_ == 0) return;
    const size_t count = static_cast<size_t>(size_ / value_size);
    ScopedContext bind(stream.cu_context(), stream.is_builtin());
    switch (value_size) {
        case 1: CUCORE_CALL(cuMemsetD8Async, address_, static_cast<unsigned char>(value), count, stream.cu()); break;
        case 2: CUCORE_CALL(cuMemsetD16Async, address_, static_cast<unsigned short>(value), count, stream.cu()); break;
        default: CUCORE_CALL(cuMemsetD32Async, address_, value, count, stream.cu()); break;
    }
    hold_buffer_for_capture(stream, *this);
}

void Buffer::grow(uint64_t new_size) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!allocation_) throw Error(CUCORE_ERROR_INVALID_STATE, "argument 'buffer' is a closed buffer");
    auto *resource = dynamic_cast<VirtualResource *>(allocation_->resource().get());
    if (!resource || is_view_)
        throw_invalid_argument("argument 'buffer' is not a buffer of a virtual memory resource (only those grow)");
    if (new_size <= size_) return;
    if (allocation_.use_count() > 1)
        throw Error(CUCORE_ERROR_INVALID_STATE, "the buffer has views (or exports) that would be left at its old "
                                                "address; release them before growing it");
    const CUdeviceptr address = resource->grow(address_, new_size);
    allocation_->relocate(address, new_size);
    address_ = address;
    size_ = new_size;
}

}  // namespace cucore::core
