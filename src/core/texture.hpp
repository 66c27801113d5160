// Texture objects (CUtexObject) and surface objects (CUsurfObject).
//
// Each holds what it reads for its whole life: the ArrayStorage of its array
// or mipmapped array, or the Allocation of its buffer, so closing or releasing
// the array or buffer cannot free memory a kernel may still sample. Resource
// descriptors are checked here against the objects they name and the device.
#pragma once

#include <cuda.h>

#include <memory>
#include <mutex>

#include "core/buffer.hpp"
#include "core/context.hpp"
#include "core/handle.hpp"
#include "core/opaque_array.hpp"
#include "core/thread_cache.hpp"
#include "cucore/texture.h"

namespace cucore::core {

class Device;

// What a resource descriptor names, resolved to the objects it names (capi checked the fields of its kind).
struct ResourceRequest {
    cucore_resource_kind_t kind = CUCORE_RESOURCE_KIND_UNSET;
    OpaqueArray *array = nullptr;
    MipmappedArray *mipmapped_array = nullptr;
    Buffer *buffer = nullptr;
    cucore_array_format_t format = CUCORE_ARRAY_FORMAT_UNSET;
    uint32_t num_channels = 0;
    uint64_t size_bytes = 0;
    uint64_t width = 0, height = 0, pitch_bytes = 0;
};

// A resource checked and held: what the driver is told and what stays alive.
struct TextureResource {
    CUDA_RESOURCE_DESC descriptor{};
    Ref<Context> context;                     // where the objects are made
    std::shared_ptr<ArrayStorage> storage;    // arrays
    std::shared_ptr<Allocation> allocation;   // buffers
    ArrayShape shape;                         // arrays: the array's (level 0's); buffers: format and channels
    bool is_array = false;

    // Checks `request` against its objects and the device (sizes, alignments, limits); throws
    // INVALID_ARGUMENT or INVALID_STATE (closed objects) naming the field. `device` (may be null) must be the
    // resource's.
    static TextureResource resolve(const ResourceRequest &request, const Device *device);
};

class TextureObject final : public Object, public Pooled<TextureObject> {
  public:
    // `options` were checked by capi field by field; what needs the resource is checked here.
    static Ref<TextureObject> create(TextureResource resource, const cucore_texture_object_options_t &options);
    TextureObject(TextureResource resource, CUtexObject texture) noexcept;
    ~TextureObject() override;  // destroys unless closed (failures reported)

    uint64_t handle() const;
    void close();

  private:
    mutable std::mutex mutex_;
    TextureResource resource_;  // emptied by close
    CUtexObject texture_;
    bool closed_ = false;
};

class SurfaceObject final : public Object, public Pooled<SurfaceObject> {
  public:
    static Ref<SurfaceObject> create(TextureResource resource);
    SurfaceObject(TextureResource resource, CUsurfObject surface) noexcept;
    ~SurfaceObject() override;

    uint64_t handle() const;
    void close();

  private:
    mutable std::mutex mutex_;
    TextureResource resource_;
    CUsurfObject surface_;
    bool closed_ = false;
};

// The driver's texture description for `options` (checked) over `resource`; throws INVALID_ARGUMENT for what
// the resource does not allow.
CUDA_TEXTURE_DESC texture_descriptor(const TextureResource &resource, const cucore_texture_object_options_t &options);

}  // namespace cucore::core
