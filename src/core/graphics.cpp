#include "core/graphics.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "core/device.hpp"
#include "core/error.hpp"
#include "core/owned.hpp"
#include "core/release.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

namespace {

unsigned driver_register_flags(uint32_t flags) noexcept {
    unsigned result = CU_GRAPHICS_REGISTER_FLAGS_NONE;
    if (flags & CUCORE_GRAPHICS_REGISTER_READ_ONLY) result |= CU_GRAPHICS_REGISTER_FLAGS_READ_ONLY;
    if (flags & CUCORE_GRAPHICS_REGISTER_WRITE_DISCARD) result |= CU_GRAPHICS_REGISTER_FLAGS_WRITE_DISCARD;
    if (flags & CUCORE_GRAPHICS_REGISTER_SURFACE_LOAD_STORE) result |= CU_GRAPHICS_REGISTER_FLAGS_SURFACE_LDST;
    if (flags & CUCORE_GRAPHICS_REGISTER_TEXTURE_GATHER) result |= CU_GRAPHICS_REGISTER_FLAGS_TEXTURE_GATHER;
    return result;
}

unsigned driver_map_flags(uint32_t hint) noexcept {
    switch (hint) {
        case CUCORE_GRAPHICS_MAP_HINT_READ_ONLY: return CU_GRAPHICS_MAP_RESOURCE_FLAGS_READ_ONLY;
        case CUCORE_GRAPHICS_MAP_HINT_WRITE_DISCARD: return CU_GRAPHICS_MAP_RESOURCE_FLAGS_WRITE_DISCARD;
        default: return CU_GRAPHICS_MAP_RESOURCE_FLAGS_NONE;
    }
}

// A registration failure, said in GL terms.
[[noreturn]] void throw_register_failure(CUresult result, const char *entry_point, const std::string &object) {
    std::string why;
    switch (result) {
        case CUDA_ERROR_INVALID_HANDLE:
        case CUDA_ERROR_INVALID_VALUE:
            why = object + " is not a name of the GL context current on this thread (or no GL context is current)";
            break;
        case CUDA_ERROR_INVALID_DEVICE: why = "the current GL context is on another GPU than the CUDA device"; break;
        case CUDA_ERROR_OPERATING_SYSTEM:
        case CUDA_ERROR_UNKNOWN:
            why = "the current GL context is not an NVIDIA one, or none is current on this thread";
            break;
        case CUDA_ERROR_INVALID_CONTEXT: why = "no CUDA context could be bound"; break;
        case CUDA_ERROR_NOT_SUPPORTED: why = object + " has a format or target CUDA cannot register"; break;
        default:
            why = "registering " + object + " failed; check that an NVIDIA GL context of this GPU is current on "
                                            "this thread and that the object exists in it";
            break;
    }
    throw Error(status_of(result), why + " (" + entry_point + ": " + cuda_error_name(result) + ")",
                static_cast<int>(result));
}

[[noreturn]] void throw_closed() {
    throw Error(CUCORE_ERROR_INVALID_STATE, "the graphics resource is closed");
}

// Unregisters a registration in its context, reporting failures as release errors.
void unregister(CUgraphicsResource resource, CUcontext context, const char *what) noexcept {
    ScopedContext bind(context, ScopedContext::ReleasePath{what});
    release_reported("cuGraphicsUnregisterResource", what, [resource](const driver::Table &api) {
        return api.cuGraphicsUnregisterResource ? api.cuGraphicsUnregisterResource(resource)
                                                : CUDA_ERROR_NOT_INITIALIZED;
    });
}

// The box of a registration no GraphicsResource owns yet.
auto registered(CUgraphicsResource resource, CUcontext context) noexcept {
    return own(resource, [context](CUgraphicsResource unmade) noexcept {
        unregister(unmade, context, "unregistering a graphics resource that was not made");
    });
}

}  // namespace

void GraphicsResource::UnmapUnadopted::operator()(CUgraphicsResource resource) const noexcept {
    const char *what = "unmapping a graphics resource whose mapping was not made";
    ScopedContext bind(context, ScopedContext::ReleasePath{what});
    release_reported("cuGraphicsUnmapResources", what,
                     [this, &resource](const driver::Table &api) {
                         return api.cuGraphicsUnmapResources ? api.cuGraphicsUnmapResources(1u, &resource, stream)
                                                             : CUDA_ERROR_NOT_INITIALIZED;
                     });
}

// ---- GraphicsMapping ------------------------------------------------------------------

GraphicsMapping::GraphicsMapping(Ref<GraphicsResource> resource, Ref<Stream> stream) noexcept
    : resource_(std::move(resource)), stream_(std::move(stream)) {}

GraphicsMapping::~GraphicsMapping() {
    if (ended_) return;  // resource_ goes now; the unmap came first
    run_reported("unmapping a graphics resource", [this] { resource_->end_mapping(this, *stream_); });
    // resource_ goes after the unmap: unregistration, if this was the last reference, follows it.
}

void GraphicsMapping::end(Stream *stream) {
    ended_ = true;  // set first: a failure below is reported once, by the caller
    resource_->end_mapping(this, stream ? *stream : *stream_);
}

bool GraphicsMapping::is_current() const { return resource_->is_current(this); }

// ---- GraphicsResource -------------------------------------------------------------------

Ref<GraphicsResource> GraphicsResource::from_gl_buffer(Device &device, uint32_t gl_name, uint32_t flags) {
    Ref<Context> context = device.primary_context();
    CUgraphicsResource resource = nullptr;
    {
        ScopedContext bind(context->cu());
        CUresult result = CUCORE_DRIVER(cuGraphicsGLRegisterBuffer)(&resource, gl_name, driver_register_flags(flags));
        if (result != CUDA_SUCCESS)
            throw_register_failure(result, "cuGraphicsGLRegisterBuffer", "GL buffer " + std::to_string(gl_name));
    }
    auto registration = registered(resource, context->cu());
    Ref<GraphicsResource> object = make<GraphicsResource>(std::move(context), registration.get(), false);
    registration.release();  // the GraphicsResource unregisters it from here
    return object;
}

Ref<GraphicsResource> GraphicsResource::from_gl_image(Device &device, uint32_t gl_name, uint32_t gl_target,
                                                      uint32_t flags) {
    Ref<Context> context = device.primary_context();
    CUgraphicsResource resource = nullptr;
    {
        ScopedContext bind(context->cu());
        CUresult result =
            CUCORE_DRIVER(cuGraphicsGLRegisterImage)(&resource, gl_name, gl_target, driver_register_flags(flags));
        if (result != CUDA_SUCCESS) {
            char target[16];
            std::snprintf(target, sizeof target, "0x%x", gl_target);
            throw_register_failure(result, "cuGraphicsGLRegisterImage",
                                   "GL image " + std::to_string(gl_name) + " (target " + target + ")");
        }
    }
    auto registration = registered(resource, context->cu());
    Ref<GraphicsResource> object = make<GraphicsResource>(std::move(context), registration.get(), true);
    registration.release();  // the GraphicsResource unregisters it from here
    return object;
}

GraphicsResource::GraphicsResource(Ref<Context> context, CUgraphicsResource resource, bool is_image) noexcept
    : Object(CUCORE_OBJECT_GRAPHICS_RESOURCE), context_(std::move(context)), resource_(resource), is_image_(is_image) {}

GraphicsResource::~GraphicsResource() {
    // No mapping is live: each holds a reference to this resource.
    if (!closed_) unregister(resource_, context_->cu(), "unregistering a graphics resource");
}

void GraphicsResource::check_mappable(const char *how) const {
    if (closed_) throw_closed();
    if (mapping_)
        throw Error(CUCORE_ERROR_INVALID_STATE,
                    "the graphics resource is already mapped; release its mapped buffer or array, or call "
                    "cucore_graphics_resource_unmap, before mapping it again");
    const bool wants_image = how[0] == 'a';
    if (is_image_ && !wants_image)
        throw Error(CUCORE_ERROR_INVALID_STATE,
                    "the graphics resource is a GL image, which maps as arrays: use cucore_graphics_resource_map_array "
                    "or cucore_graphics_resource_map_mipmapped_array");
    if (!is_image_ && wants_image)
        throw Error(CUCORE_ERROR_INVALID_STATE,
                    "the graphics resource is a GL buffer, which maps as a pointer: use cucore_graphics_resource_map");
}

void GraphicsResource::set_map_hint(uint32_t hint) {
    if (hint == map_hint_) return;
    CUCORE_CALL(cuGraphicsResourceSetMapFlags, resource_, driver_map_flags(hint));
    map_hint_ = hint;
}

std::shared_ptr<GraphicsMapping> GraphicsResource::adopt_mapping(Mapped &mapped, Stream &stream) {
    std::shared_ptr<GraphicsMapping> mapping = std::allocate_shared<GraphicsMapping>(
        PooledAllocator<GraphicsMapping>(), Ref<GraphicsResource>(this), Ref<Stream>(&stream));
    mapping_ = mapping.get();
    mapped.release();  // the mapping unmaps from here
    return mapping;
}

template <class Get>
std::shared_ptr<GraphicsMapping> GraphicsResource::map_checked(Stream &stream, uint32_t hint, const char *how,
                                                               Get get) {
    check_mappable(how);
    ScopedContext bind(context_->cu());
    set_map_hint(hint);
    CUCORE_CALL(cuGraphicsMapResources, 1u, &resource_, stream.cu());
    Mapped mapped(resource_, UnmapUnadopted{context_->cu(), stream.cu()});  // nothing stays mapped on a failure
    get();
    return adopt_mapping(mapped, stream);
}

Ref<Buffer> GraphicsResource::map(Stream &stream, uint32_t hint) {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    CUdeviceptr address = 0;
    size_t size = 0;
    std::shared_ptr<GraphicsMapping> mapping = map_checked(stream, hint, "pointer", [&] {
        CUCORE_CALL(cuGraphicsResourceGetMappedPointer, &address, &size, resource_);
    });
    return give_buffer(std::move(mapping), address, size, stream);
}

Ref<Buffer> GraphicsResource::give_buffer(std::shared_ptr<GraphicsMapping> mapping, CUdeviceptr address,
                                          size_t size, Stream &stream) {
    // From here a failure releases the mapping, which unmaps. The buffer's memory is of no resource: its
    // allocation's deleter ends the mapping on the buffer's deallocation stream (the mapping stream unless changed).
    const MemoryTraits traits{context_->device().ordinal(), true, false, false};
    auto allocation = std::allocate_shared<Allocation>(
        PooledAllocator<Allocation>(), address, size, Ref<Stream>(&stream),
        Allocation::Deleter([mapping = std::move(mapping)](Stream *deallocation) { mapping->end(deallocation); }));
    Ref<Buffer> buffer = make<Buffer>(std::move(allocation), address, size, traits);
    mapped_buffer_ = WeakRef<Buffer>(buffer.get());
    return buffer;
}

std::vector<std::unique_lock<std::recursive_mutex>> GraphicsResource::lock_batch(
    const std::vector<GraphicsResource *> &resources) {
    if (resources.empty()) throw_invalid_argument("argument 'count' is 0");
    std::vector<GraphicsResource *> sorted(resources);
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
        throw_invalid_argument("argument 'resources' names one resource twice");
    for (GraphicsResource *resource : resources)
        if (resource->context_->cu() != resources[0]->context_->cu())
            throw_invalid_argument("argument 'resources' mixes resources of two contexts; map and unmap each "
                                   "context's resources in their own call");
    // Locked in address order, so two batch calls cannot deadlock.
    std::vector<std::unique_lock<std::recursive_mutex>> locks;
    locks.reserve(sorted.size());
    for (GraphicsResource *resource : sorted) locks.emplace_back(resource->mutex_);
    return locks;
}

std::vector<Ref<Buffer>> GraphicsResource::map_many(const std::vector<GraphicsResource *> &resources, Stream &stream) {
    const auto locks = lock_batch(resources);
    for (GraphicsResource *resource : resources) resource->check_mappable("pointer");
    ScopedContext bind(resources[0]->context_->cu());
    std::vector<CUgraphicsResource> handles;
    handles.reserve(resources.size());
    for (GraphicsResource *resource : resources) {
        resource->set_map_hint(CUCORE_GRAPHICS_MAP_HINT_NONE);
        handles.push_back(resource->resource_);
    }
    const unsigned count = static_cast<unsigned>(handles.size());
    std::vector<Mapped> mapped;  // reserved first: after the map call, nothing may fail before each has its box
    mapped.reserve(count);
    std::vector<CUdeviceptr> addresses(count);
    std::vector<size_t> sizes(count);
    std::vector<std::shared_ptr<GraphicsMapping>> mappings;
    mappings.reserve(count);
    CUCORE_CALL(cuGraphicsMapResources, count, handles.data(), stream.cu());
    // Each resource is unmapped by its box until its mapping object adopts it, then by the mapping.
    for (CUgraphicsResource handle : handles)
        mapped.emplace_back(handle, UnmapUnadopted{resources[0]->context_->cu(), stream.cu()});
    for (unsigned i = 0; i < count; ++i)
        CUCORE_CALL(cuGraphicsResourceGetMappedPointer, &addresses[i], &sizes[i], handles[i]);
    for (unsigned i = 0; i < count; ++i) mappings.push_back(resources[i]->adopt_mapping(mapped[i], stream));
    std::vector<Ref<Buffer>> buffers;
    buffers.reserve(count);
    for (unsigned i = 0; i < count; ++i)
        buffers.push_back(resources[i]->give_buffer(std::move(mappings[i]), addresses[i], sizes[i], stream));
    return buffers;
}

Ref<OpaqueArray> GraphicsResource::map_array(Stream &stream, uint32_t hint, uint32_t array_index,
                                             uint32_t mip_level) {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    CUarray array = nullptr;
    std::shared_ptr<GraphicsMapping> mapping = map_checked(stream, hint, "array", [&] {
        CUCORE_CALL(cuGraphicsSubResourceGetMappedArray, &array, resource_, array_index, mip_level);
    });
    // The array's storage holds the mapping: if reading its shape fails, the mapping ends with it.
    auto storage = std::make_shared<ArrayStorage>(context_, array, nullptr, ArrayStorage::Origin::lent);
    storage->set_lender(std::move(mapping));
    return OpaqueArray::over(std::move(storage));
}

Ref<MipmappedArray> GraphicsResource::map_mipmapped_array(Stream &stream, uint32_t hint) {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    CUmipmappedArray mipmapped = nullptr;
    std::shared_ptr<GraphicsMapping> mapping = map_checked(stream, hint, "array", [&] {
        CUCORE_CALL(cuGraphicsResourceGetMappedMipmappedArray, &mipmapped, resource_);
    });
    auto storage = std::make_shared<ArrayStorage>(context_, nullptr, mipmapped, ArrayStorage::Origin::lent);
    storage->set_lender(std::move(mapping));
    return MipmappedArray::over(std::move(storage));
}

Ref<Buffer> GraphicsResource::detach_mapping() {
    mapping_ = nullptr;
    Ref<Buffer> buffer = mapped_buffer_.lock();
    mapped_buffer_ = WeakRef<Buffer>();
    return buffer;
}

Ref<Buffer> GraphicsResource::drop_mapping(Stream &stream, CUresult *result) {
    Ref<Buffer> buffer = detach_mapping();
    *result = CUCORE_DRIVER(cuGraphicsUnmapResources)(1u, &resource_, stream.cu());
    return buffer;
}

void GraphicsResource::unmap_many(const std::vector<GraphicsResource *> &resources, Stream *override_stream) {
    std::vector<Ref<Buffer>> buffers;
    CUresult result = CUDA_SUCCESS;
    {
        const auto locks = lock_batch(resources);
        for (size_t i = 0; i < resources.size(); ++i) {
            const GraphicsResource &resource = *resources[i];
            if (resource.closed_ || !resource.mapping_)
                throw Error(CUCORE_ERROR_INVALID_STATE, "resources[" + std::to_string(i) + "] is " +
                                                            (resource.closed_ ? "closed" : "not mapped") +
                                                            "; nothing was unmapped");
        }
        Stream *stream = override_stream;
        if (!stream) {
            stream = &resources[0]->mapping_->stream();
            for (size_t i = 1; i < resources.size(); ++i)
                if (&resources[i]->mapping_->stream() != stream)
                    throw_invalid_argument("argument 'stream' is NULL but resources[0] and resources[" +
                                           std::to_string(i) +
                                           "] were mapped on different streams; give the stream to unmap on");
        }
        std::vector<CUgraphicsResource> handles;
        handles.reserve(resources.size());
        for (GraphicsResource *resource : resources) handles.push_back(resource->resource_);
        ScopedContext bind(resources[0]->context_->cu());
        buffers.reserve(resources.size());
        for (GraphicsResource *resource : resources) buffers.push_back(resource->detach_mapping());
        result = CUCORE_DRIVER(cuGraphicsUnmapResources)(static_cast<unsigned>(handles.size()), handles.data(),
                                                         stream->cu());
    }
    // Closed outside the locks: each buffer's allocation release finds its mapping ended.
    for (Ref<Buffer> &buffer : buffers)
        if (buffer) buffer->close(nullptr);
    if (result != CUDA_SUCCESS) throw_cuda(result, "cuGraphicsUnmapResources");
}

void GraphicsResource::end_mapping(GraphicsMapping *mapping, Stream &stream) {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    if (mapping_ != mapping) return;  // already unmapped (unmap, close)
    // The mapping ends here whatever fails (its object is going): a failed bind is reported as a release error
    // and the unmap still runs, so the mapping never outlives its object and the unregistration follows it.
    ScopedContext bind(context_->cu(), ScopedContext::ReleasePath{"unmapping a graphics resource"});
    CUresult result = CUDA_SUCCESS;
    Ref<Buffer> buffer = drop_mapping(stream, &result);  // the buffer is the one being released: nothing to close
    if (result != CUDA_SUCCESS)
        throw Error(status_of(result),
                    "unmapping a graphics resource: cuGraphicsUnmapResources failed: " + cuda_error_name(result),
                    static_cast<int>(result));
}

bool GraphicsResource::is_current(const GraphicsMapping *mapping) const {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    return mapping_ == mapping;
}

void GraphicsResource::unmap(Stream *override_stream) {
    Ref<Buffer> buffer;
    CUresult result = CUDA_SUCCESS;
    {
        std::lock_guard<std::recursive_mutex> lock(mutex_);
        if (closed_) throw_closed();
        if (!mapping_)
            throw Error(CUCORE_ERROR_INVALID_STATE,
                        "the graphics resource is not mapped; map it before unmapping it");
        Stream &stream = override_stream ? *override_stream : mapping_->stream();
        ScopedContext bind(context_->cu());  // a failure here changes nothing
        buffer = drop_mapping(stream, &result);
    }
    if (buffer) buffer->close(nullptr);  // its allocation's release finds the mapping ended
    if (result != CUDA_SUCCESS) throw_cuda(result, "cuGraphicsUnmapResources");
}

void GraphicsResource::close(Stream *stream) {
    Ref<Buffer> buffer;
    CUresult unmapped = CUDA_SUCCESS;
    CUresult unregistered = CUDA_SUCCESS;
    {
        std::lock_guard<std::recursive_mutex> lock(mutex_);
        if (closed_) return;  // idempotent
        // Bound before anything changes: if the context cannot be made current, the error is returned and the
        // resource stays open (and mapped), so a second close or the destructor still unregisters it.
        ScopedContext bind(context_->cu());
        if (mapping_) buffer = drop_mapping(stream ? *stream : mapping_->stream(), &unmapped);
        unregistered = CUCORE_DRIVER(cuGraphicsUnregisterResource)(resource_);
        closed_ = true;  // the driver was asked: closed whatever it answered
        resource_ = nullptr;
    }
    if (buffer) buffer->close(nullptr);
    if (unmapped != CUDA_SUCCESS) throw_cuda(unmapped, "cuGraphicsUnmapResources");
    if (unregistered != CUDA_SUCCESS) throw_cuda(unregistered, "cuGraphicsUnregisterResource");
}

bool GraphicsResource::is_mapped() const {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    return mapping_ != nullptr;
}

CUgraphicsResource GraphicsResource::cu() const {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    return resource_;
}

// ---- GL devices -----------------------------------------------------------------------

uint32_t gl_devices(uint32_t device_list, int *ordinals, uint32_t capacity) {
    // cuGLGetDevices wants room for at least one device; ask with the driver's device count.
    int device_count = 0;
    CUCORE_CALL(cuDeviceGetCount, &device_count);
    std::vector<CUdevice> devices(static_cast<size_t>(std::max(device_count, 1)));
    unsigned count = 0;
    CUresult result = CUCORE_DRIVER(cuGLGetDevices)(&count, devices.data(), static_cast<unsigned>(devices.size()),
                                                    static_cast<int>(device_list));
    if (result != CUDA_SUCCESS)
        throw Error(status_of(result),
                    "no NVIDIA GL context is current on this thread (cuGLGetDevices: " + cuda_error_name(result) + ")",
                    static_cast<int>(result));
    const uint32_t written = std::min<uint32_t>(capacity, std::min<uint32_t>(count, devices.size()));
    for (uint32_t i = 0; i < written; ++i) ordinals[i] = Device::ordinal_of(devices[i]);
    return count;
}

}  // namespace cucore::core
