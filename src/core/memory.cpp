#include "core/memory.hpp"

#include <string>

#include "core/device.hpp"
#include "core/error.hpp"
#include "core/release.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

// ---- MemoryResource --------------------------------------------------------------

Ref<MemoryResource> MemoryResource::device_default(Device &device) {
    if (!device.attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED))
        throw Error(CUCORE_ERROR_NOT_SUPPORTED, "device " + std::to_string(device.ordinal()) +
                                                    " does not support memory pools");
    Ref<Context> context = device.primary_context();
    CUmemoryPool pool = nullptr;
    CUCORE_CALL(cuDeviceGetMemPool, &pool, device.cu());
    return make<MemoryResource>(CUCORE_MEMORY_RESOURCE_DEVICE, std::move(context), pool, false);
}

Ref<MemoryResource> MemoryResource::device_pool(Device &device, uint64_t max_size, uint64_t release_threshold) {
    if (!device.attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED))
        throw Error(CUCORE_ERROR_NOT_SUPPORTED, "device " + std::to_string(device.ordinal()) +
                                                    " does not support memory pools");
    Ref<Context> context = device.primary_context();
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = device.cu();
    props.maxSize = static_cast<size_t>(max_size);
    CUmemoryPool pool = nullptr;
    CUCORE_CALL(cuMemPoolCreate, &pool, &props);
    try {
        if (release_threshold != 0) {
            cuuint64_t threshold = release_threshold;
            CUCORE_CALL(cuMemPoolSetAttribute, pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold);
        }
        return make<MemoryResource>(CUCORE_MEMORY_RESOURCE_DEVICE, std::move(context), pool, true);
    } catch (...) {
        driver::api().cuMemPoolDestroy(pool);  // no half-made object
        throw;
    }
}

Ref<MemoryResource> MemoryResource::legacy_pinned(Device &device) {
    return make<MemoryResource>(CUCORE_MEMORY_RESOURCE_LEGACY_PINNED, device.primary_context(), nullptr, false);
}

MemoryResource::MemoryResource(cucore_memory_resource_kind_t kind, Ref<Context> context, CUmemoryPool pool,
                               bool owns_pool) noexcept
    : Object(CUCORE_OBJECT_MEMORY_RESOURCE),
      kind_(kind),
      context_(std::move(context)),
      pool_(pool),
      owns_pool_(owns_pool),
      device_id_(kind == CUCORE_MEMORY_RESOURCE_LEGACY_PINNED ? -1 : context_->device().ordinal()) {}

MemoryResource::~MemoryResource() {
    if (!owns_pool_) return;
    CUmemoryPool pool = pool_;
    release_reported("cuMemPoolDestroy", "destroying a memory pool", [pool](const driver::Table &api) {
        return api.cuMemPoolDestroy ? api.cuMemPoolDestroy(pool) : CUDA_ERROR_NOT_INITIALIZED;
    });
}

int MemoryResource::device_id() const noexcept { return device_id_; }

Ref<Buffer> MemoryResource::allocate(uint64_t size, Stream *stream) {
    if (is_stream_ordered()) {
        if (!stream) throw_invalid_argument("argument 'stream' is NULL: a device memory pool allocates in stream order");
        if (stream->device_ordinal() != device_id())
            throw_invalid_argument("argument 'stream' belongs to device " + std::to_string(stream->device_ordinal()) +
                                   ", the resource to device " + std::to_string(device_id()));
    }
    Ref<MemoryResource> self(this);
    Ref<Stream> deallocation = stream ? Ref<Stream>(stream) : Ref<Stream>();
    CUdeviceptr address = 0;
    if (size != 0) {
        if (is_stream_ordered()) {
            ScopedContext bind(stream->cu_context(), stream->is_builtin());
            CUCORE_CALL(cuMemAllocFromPoolAsync, &address, static_cast<size_t>(size), pool_, stream->cu());
        } else {
            void *host = nullptr;
            ScopedContext bind(context_->cu());
            CUCORE_CALL(cuMemAllocHost, &host, static_cast<size_t>(size));
            address = reinterpret_cast<CUdeviceptr>(host);
        }
    }
    std::shared_ptr<Allocation> allocation;
    try {
        allocation = std::allocate_shared<Allocation>(PooledAllocator<Allocation>(), self, address, deallocation);
    } catch (...) {
        if (address) deallocate(address, stream);  // no half-made object
        throw;
    }
    return make<Buffer>(std::move(allocation), address, size, device_id(), device_accessible(), host_accessible());
}

void MemoryResource::deallocate(CUdeviceptr address, Stream *stream) {
    if (is_stream_ordered()) {
        ScopedContext bind(stream ? stream->cu_context() : context_->cu(), !stream || stream->is_builtin());
        CUCORE_CALL(cuMemFreeAsync, address, stream ? stream->cu() : CU_STREAM_LEGACY);
    } else {
        ScopedContext bind(context_->cu());
        CUCORE_CALL(cuMemFreeHost, reinterpret_cast<void *>(address));
    }
}

// Pool attributes: the public values are the driver's (checked here).
static_assert(static_cast<int>(CUCORE_POOL_ATTRIBUTE_REUSE_FOLLOW_EVENT_DEPENDENCIES) ==
              static_cast<int>(CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES));
static_assert(static_cast<int>(CUCORE_POOL_ATTRIBUTE_USED_MEM_HIGH) == static_cast<int>(CU_MEMPOOL_ATTR_USED_MEM_HIGH));
static_assert(static_cast<int>(CUCORE_POOL_ATTRIBUTE_RELEASE_THRESHOLD) ==
              static_cast<int>(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD));

namespace {
bool is_flag(cucore_pool_attribute_t attribute) {
    return attribute >= CUCORE_POOL_ATTRIBUTE_REUSE_FOLLOW_EVENT_DEPENDENCIES &&
           attribute <= CUCORE_POOL_ATTRIBUTE_REUSE_ALLOW_INTERNAL_DEPENDENCIES;
}
void check_attribute(cucore_pool_attribute_t attribute) {
    if (attribute < CUCORE_POOL_ATTRIBUTE_REUSE_FOLLOW_EVENT_DEPENDENCIES ||
        attribute > CUCORE_POOL_ATTRIBUTE_USED_MEM_HIGH)
        throw_invalid_argument("argument 'attribute' is not a pool attribute (" +
                               std::to_string(static_cast<int>(attribute)) + ")");
}
}  // namespace

void MemoryResource::require_pool(const char *what) const {
    if (!pool_)
        throw Error(CUCORE_ERROR_NOT_SUPPORTED, std::string(what) + ": this memory resource has no memory pool");
}

uint64_t MemoryResource::pool_attribute(cucore_pool_attribute_t attribute) const {
    check_attribute(attribute);
    require_pool("pool attributes");
    const auto driver_attribute = static_cast<CUmemPool_attribute>(attribute);
    if (is_flag(attribute)) {
        int flag = 0;
        CUCORE_CALL(cuMemPoolGetAttribute, pool_, driver_attribute, &flag);
        return flag ? 1 : 0;
    }
    cuuint64_t bytes = 0;
    CUCORE_CALL(cuMemPoolGetAttribute, pool_, driver_attribute, &bytes);
    return bytes;
}

void MemoryResource::set_pool_attribute(cucore_pool_attribute_t attribute, uint64_t value) {
    check_attribute(attribute);
    const bool resettable = attribute == CUCORE_POOL_ATTRIBUTE_RESERVED_MEM_HIGH ||
                            attribute == CUCORE_POOL_ATTRIBUTE_USED_MEM_HIGH;
    if (attribute == CUCORE_POOL_ATTRIBUTE_RESERVED_MEM_CURRENT || attribute == CUCORE_POOL_ATTRIBUTE_USED_MEM_CURRENT)
        throw_invalid_argument("argument 'attribute' is read-only (" + std::to_string(static_cast<int>(attribute)) +
                               ")");
    if (resettable && value != 0)
        throw_invalid_argument("a high-water mark can only be reset to 0, not set to " + std::to_string(value));
    if (is_flag(attribute) && value > 1)
        throw_invalid_argument("argument 'value' must be 0 or 1 for a reuse flag, not " + std::to_string(value));
    require_pool("pool attributes");
    const auto driver_attribute = static_cast<CUmemPool_attribute>(attribute);
    if (is_flag(attribute)) {
        int flag = static_cast<int>(value);
        CUCORE_CALL(cuMemPoolSetAttribute, pool_, driver_attribute, &flag);
    } else {
        cuuint64_t bytes = value;
        CUCORE_CALL(cuMemPoolSetAttribute, pool_, driver_attribute, &bytes);
    }
}

void MemoryResource::trim(uint64_t min_bytes_to_keep) {
    require_pool("trim");
    CUCORE_CALL(cuMemPoolTrimTo, pool_, static_cast<size_t>(min_bytes_to_keep));
}

// ---- Allocation ----------------------------------------------------------------------

Allocation::Allocation(Ref<MemoryResource> resource, CUdeviceptr address, Ref<Stream> deallocation_stream) noexcept
    : resource_(std::move(resource)), address_(address), deallocation_stream_(std::move(deallocation_stream)) {}

Allocation::Allocation(CUdeviceptr address) noexcept : address_(address) {}

Allocation::~Allocation() {
    if (!resource_) {
        owner_.notify();
        return;
    }
    if (address_ == 0) return;  // zero-size buffers own nothing
    try {
        resource_->deallocate(address_, deallocation_stream_.get());
    } catch (const Error &error) {
        report_release_error(error.status(), error.cuda_result(), std::string("freeing a buffer: ") + error.what());
    } catch (...) {
        report_release_error(CUCORE_ERROR_INTERNAL, 0, "freeing a buffer: unexpected exception");
    }
}

void Allocation::set_deallocation_stream(Ref<Stream> stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    deallocation_stream_ = std::move(stream);
}

// ---- Buffer -------------------------------------------------------------------------

Ref<Buffer> Buffer::wrap(CUdeviceptr address, uint64_t size, int device_id, cucore_release_fn on_release,
                         void *user_data) {
    if (address == 0 && size != 0) throw_invalid_argument("argument 'address' is 0 but 'size' is not");
    auto allocation = std::allocate_shared<Allocation>(PooledAllocator<Allocation>(), address);
    Ref<Buffer> buffer = make<Buffer>(allocation, address, size, device_id, device_id >= 0, device_id < 0);
    allocation->set_owner(on_release, user_data);
    return buffer;
}

Buffer::Buffer(std::shared_ptr<Allocation> allocation, CUdeviceptr address, uint64_t size, int device_id,
               bool device_accessible, bool host_accessible) noexcept
    : Object(CUCORE_OBJECT_BUFFER),
      allocation_(std::move(allocation)),
      address_(address),
      size_(size),
      device_id_(device_id),
      device_accessible_(device_accessible),
      host_accessible_(host_accessible) {}

Buffer::~Buffer() = default;  // the allocation frees itself with its last holder

Ref<MemoryResource> Buffer::resource() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return allocation_ ? allocation_->resource() : Ref<MemoryResource>();
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
    return make<Buffer>(std::move(allocation), address_ + offset, size, device_id_, device_accessible_,
                        host_accessible_);
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

void Buffer::copy_from(Buffer &source, Stream &stream) {
    check_open("dst");
    source.check_open("src");
    if (source.size_ != size_)
        throw_invalid_argument("buffer sizes differ: 'dst' has " + std::to_string(size_) + " bytes, 'src' " +
                               std::to_string(source.size_));
    if (size_ == 0) return;
    ScopedContext bind(stream.cu_context(), stream.is_builtin());
    CUCORE_CALL(cuMemcpyAsync, address_, source.address_, static_cast<size_t>(size_), stream.cu());
}

void Buffer::copy_from_host(uint64_t offset, const void *source, uint64_t size, Stream &stream) {
    check_open("buffer");
    check_range(offset, size, "the buffer");
    if (size == 0) return;
    if (!source) throw_invalid_argument("argument 'src' is NULL");
    ScopedContext bind(stream.cu_context(), stream.is_builtin());
    CUCORE_CALL(cuMemcpyAsync, address_ + offset, reinterpret_cast<CUdeviceptr>(source), static_cast<size_t>(size),
                stream.cu());
}

void Buffer::copy_to_host(uint64_t offset, void *destination, uint64_t size, Stream &stream) {
    check_open("buffer");
    check_range(offset, size, "the buffer");
    if (size == 0) return;
    if (!destination) throw_invalid_argument("argument 'dst' is NULL");
    ScopedContext bind(stream.cu_context(), stream.is_builtin());
    CUCORE_CALL(cuMemcpyAsync, reinterpret_cast<CUdeviceptr>(destination), address_ + offset,
                static_cast<size_t>(size), stream.cu());
}

void Buffer::fill(uint32_t value, uint32_t value_size, Stream &stream) {
    check_open("buffer");
    if (value_size != 1 && value_size != 2 && value_size != 4)
        throw_invalid_argument("argument 'value_size' is " + std::to_string(value_size) + "; it must be 1, 2 or 4");
    if (value_size < 4 && (value >> (8 * value_size)) != 0)
        throw_invalid_argument("argument 'value' (" + std::to_string(value) + ") does not fit in " +
                               std::to_string(value_size) + " byte" + (value_size == 1 ? "" : "s"));
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
}

}  // namespace cucore::core
