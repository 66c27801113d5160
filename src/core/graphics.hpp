// Graphics interop (OpenGL): registrations and their mappings.
//
// A GraphicsResource owns a registration. A mapping is a GraphicsMapping, which
// ends it (unmaps) once. A mapped pointer is a Buffer of no memory resource whose
// allocation's deleter holds the mapping and ends it on the buffer's deallocation
// stream (the mapping stream unless changed) when the buffer's last holder goes;
// the arrays of a mapped image (OpaqueArray, MipmappedArray and its levels, and
// the texture and surface objects over them) share the mapping through their
// ArrayStorage, and its destructor ends it on the mapping stream. A mapping holds a Ref to its resource, so
// unregistration always follows the unmap. The resource knows its live mapping
// only by pointer; an explicit unmap or close ends it early, and the mapping's
// own end then does nothing more.
#pragma once

#include <cuda.h>

#include <memory>
#include <mutex>
#include <vector>

#include "core/context.hpp"
#include "core/handle.hpp"
#include "core/buffer.hpp"
#include "core/opaque_array.hpp"
#include "core/owned.hpp"
#include "core/stream.hpp"
#include "core/thread_cache.hpp"
#include "cucore/graphics.h"

namespace cucore::core {

class Device;
class GraphicsResource;

// One mapping of a graphics resource (shared: std::shared_ptr), made once the
// driver mapped it. No object of the handle table: it is reached through the
// buffer or the arrays it backs (as their ArrayLender: the arrays exist while it is current).
class GraphicsMapping final : public ArrayLender {
  public:
    GraphicsMapping(Ref<GraphicsResource> resource, Ref<Stream> stream) noexcept;
    ~GraphicsMapping() override;  // ends the mapping on the mapping stream unless ended (failures reported)
    GraphicsMapping(const GraphicsMapping &) = delete;
    GraphicsMapping &operator=(const GraphicsMapping &) = delete;

    // Ends the mapping on `stream` (null: the mapping stream) unless an explicit
    // unmap or close ended it; throws the driver's failure (the mapping is over either way).
    void end(Stream *stream);

    GraphicsResource &graphics_resource() const noexcept { return *resource_; }
    Stream &stream() const noexcept { return *stream_; }
    bool is_current() const;
    bool lends() const override { return is_current(); }
    const char *ended_message() const noexcept override {
        return "the array's graphics resource was unmapped or closed; its array is gone";
    }

  private:
    Ref<GraphicsResource> resource_;
    Ref<Stream> stream_;
    bool ended_ = false;  // end() ran: the destructor takes no second lock
};

class GraphicsResource final : public Object, public Pooled<GraphicsResource> {
  public:
    static Ref<GraphicsResource> from_gl_buffer(Device &device, uint32_t gl_name, uint32_t flags);
    static Ref<GraphicsResource> from_gl_image(Device &device, uint32_t gl_name, uint32_t gl_target, uint32_t flags);
    GraphicsResource(Ref<Context> context, CUgraphicsResource resource, bool is_image) noexcept;
    ~GraphicsResource() override;  // unregisters unless closed (errors reported)

    Ref<Buffer> map(Stream &stream, uint32_t hint);
    // Maps every resource in one driver call; one buffer each.
    static std::vector<Ref<Buffer>> map_many(const std::vector<GraphicsResource *> &resources, Stream &stream);
    // Unmaps every resource in one driver call, on `override_stream` or their common mapping stream.
    static void unmap_many(const std::vector<GraphicsResource *> &resources, Stream *override_stream);
    Ref<OpaqueArray> map_array(Stream &stream, uint32_t hint, uint32_t array_index, uint32_t mip_level);
    Ref<MipmappedArray> map_mipmapped_array(Stream &stream, uint32_t hint);
    void unmap(Stream *override_stream);
    void close(Stream *stream);
    bool is_mapped() const;
    CUgraphicsResource cu() const;
    Context &context() const noexcept { return *context_; }

    // From GraphicsMapping: ends `mapping` on `stream` if it is still the live one.
    void end_mapping(GraphicsMapping *mapping, Stream &stream);
    bool is_current(const GraphicsMapping *mapping) const;

  private:
    // The deleter of a resource mapped on `stream` that no mapping object holds yet: unmaps it there.
    struct UnmapUnadopted {
        CUcontext context;
        CUstream stream;
        void operator()(CUgraphicsResource resource) const noexcept;
    };
    using Mapped = Owned<CUgraphicsResource, UnmapUnadopted>;

    void check_mappable(const char *how) const;  // under mutex_
    void set_map_hint(uint32_t hint);              // under mutex_, context bound
    // Hands `mapped` (boxed right after the driver mapped it) to a new mapping object, the live mapping from now
    // on (under mutex_).
    std::shared_ptr<GraphicsMapping> adopt_mapping(Mapped &mapped, Stream &stream);
    // One mapping (under mutex_): checks for `how` ("pointer" or "array"), maps on `stream`, runs
    // `get` (the driver's query of what was mapped) and begins the mapping; on failure nothing stays mapped.
    template <class Get>
    std::shared_ptr<GraphicsMapping> map_checked(Stream &stream, uint32_t hint, const char *how, Get get);
    // The Buffer of a mapped range (under mutex_): memory of no resource whose deleter ends `mapping`;
    // remembered as the mapped buffer.
    Ref<Buffer> give_buffer(std::shared_ptr<GraphicsMapping> mapping, CUdeviceptr address, size_t size,
                            Stream &stream);
    // Ends the live mapping (under mutex_, the context bound by the caller): unmaps on `stream`, returns the
    // buffer to close.
    Ref<Buffer> drop_mapping(Stream &stream, CUresult *result);
    // Forgets the live mapping without unmapping (under mutex_); returns the buffer to close.
    Ref<Buffer> detach_mapping();
    // Checks a batch (not empty, each resource once, one context) and locks it in address order.
    static std::vector<std::unique_lock<std::recursive_mutex>> lock_batch(
        const std::vector<GraphicsResource *> &resources);

    mutable std::recursive_mutex mutex_;
    Ref<Context> context_;
    CUgraphicsResource resource_;
    bool is_image_;
    bool closed_ = false;
    uint32_t map_hint_ = CUCORE_GRAPHICS_MAP_HINT_NONE;
    GraphicsMapping *mapping_ = nullptr;  // the live mapping (it holds this resource)
    WeakRef<Buffer> mapped_buffer_;
};

// The ordinals of the current GL context's devices (up to `capacity` written); returns the count.
uint32_t gl_devices(uint32_t device_list, int *ordinals, uint32_t capacity);

}  // namespace cucore::core
