// libcucore C++ façade: graphics interop with OpenGL (over cucore/graphics.h).
//
//   auto res = cucore::GraphicsResource::from_gl_buffer(device, vbo);
//   {
//       auto buf = res.map(stream);   // a Buffer; unmaps on `stream` at scope end
//       ... launch kernels on buf.address() in `stream` ...
//   }
//   res.close();                      // or let the last reference unregister
//
// A GL image maps as an OpaqueArray (map_array) or a MipmappedArray
// (map_mipmapped_array) of opaque_array.hpp: the same types the library
// creates, usable everywhere an array is (copies, texture and surface objects),
// not owned (the driver frees them with the mapping), and holding the mapping:
// the last of them, and of the texture and surface objects over them, unmaps.
// After an explicit unmap() or close() of the resource every call on them
// throws INVALID_STATE.
#ifndef CUCORE_GRAPHICS_HPP
#define CUCORE_GRAPHICS_HPP

#include <cstdint>
#include <new>
#include <vector>

#include "common.hpp"
#include "device.hpp"
#include "graphics.h"
#include "buffer.hpp"
#include "opaque_array.hpp"
#include "stream.hpp"

namespace cucore {

// Registration flags (bits; combine with |).
enum class GraphicsRegisterFlags : std::uint32_t {
    none = CUCORE_GRAPHICS_REGISTER_NONE,
    read_only = CUCORE_GRAPHICS_REGISTER_READ_ONLY,
    write_discard = CUCORE_GRAPHICS_REGISTER_WRITE_DISCARD,
    surface_load_store = CUCORE_GRAPHICS_REGISTER_SURFACE_LOAD_STORE,
    texture_gather = CUCORE_GRAPHICS_REGISTER_TEXTURE_GATHER,
};
constexpr GraphicsRegisterFlags operator|(GraphicsRegisterFlags a, GraphicsRegisterFlags b) noexcept {
    return static_cast<GraphicsRegisterFlags>(static_cast<std::uint32_t>(a) | static_cast<std::uint32_t>(b));
}

// How CUDA will use one mapping.
enum class GraphicsMapHint : std::uint32_t {
    none = CUCORE_GRAPHICS_MAP_HINT_NONE,
    read_only = CUCORE_GRAPHICS_MAP_HINT_READ_ONLY,
    write_discard = CUCORE_GRAPHICS_MAP_HINT_WRITE_DISCARD,
};

// A registration of a GL buffer or image (cuda.core: GraphicsResource). Its last
// reference unregisters; a mapping (Buffer, OpaqueArray or MipmappedArray) holds a reference,
// so the registration outlives every mapping.
class MappedBuffers;

class GraphicsResource : public Handle<GraphicsResource, cucore_graphics_resource_t> {
public:
    GraphicsResource() noexcept = default;

    // Registers GL buffer `gl_name` in `device`'s primary context (a GL context
    // must be current). Throws Error: INVALID_ARGUMENT (flags), CUDA (the message
    // says why: bad name, no or foreign GL context).
    static GraphicsResource from_gl_buffer(const Device &device, std::uint32_t gl_name,
                                           GraphicsRegisterFlags flags = GraphicsRegisterFlags::none) {
        cucore_graphics_resource_t *raw = nullptr;
        detail::check(cucore_graphics_resource_from_gl_buffer(device.get(), gl_name,
                                                              static_cast<std::uint32_t>(flags), &raw));
        return adopt(raw);
    }

    // Registers GL texture or renderbuffer `gl_name` of `gl_target`. Throws as from_gl_buffer.
    static GraphicsResource from_gl_image(const Device &device, std::uint32_t gl_name, std::uint32_t gl_target,
                                          GraphicsRegisterFlags flags = GraphicsRegisterFlags::none) {
        cucore_graphics_resource_t *raw = nullptr;
        detail::check(cucore_graphics_resource_from_gl_image(device.get(), gl_name, gl_target,
                                                             static_cast<std::uint32_t>(flags), &raw));
        return adopt(raw);
    }

    // Maps a GL buffer on `stream`: `auto buf = res.map(stream);` unmaps on
    // `stream` when the last reference to `buf` (and its views) goes. Throws
    // Error: INVALID_STATE (already mapped, closed, an image), CUDA.
    Buffer map(const Stream &stream, GraphicsMapHint hint = GraphicsMapHint::none) const {
        cucore_buffer_t *raw = nullptr;
        detail::check(cucore_graphics_resource_map(handle_, stream.get(), static_cast<std::uint32_t>(hint), &raw));
        return Buffer::adopt(raw);
    }

    // Maps several GL buffers in one driver call on `stream`: one Buffer each, in
    // order, held by a MappedBuffers whose scope end unmaps them all in one call.
    // Throws Error: INVALID_ARGUMENT (empty, a resource twice, two contexts),
    // INVALID_STATE (as map), CUDA; nothing stays mapped then.
    static MappedBuffers map_all(const std::vector<GraphicsResource> &resources, const Stream &stream);

    // Unmaps several mapped resources in one driver call, on `stream` or on the
    // stream they were all mapped on. Their mapped Buffers read as closed.
    // Throws Error: INVALID_ARGUMENT (empty, a resource twice, two contexts, no
    // stream for resources mapped on different streams), INVALID_STATE (one not
    // mapped or closed: nothing is unmapped), CUDA.
    static void unmap_all(const std::vector<GraphicsResource> &resources) { unmap_all(resources, nullptr); }
    static void unmap_all(const std::vector<GraphicsResource> &resources, const Stream &stream) {
        unmap_all(resources, stream.get());
    }

    // Maps a GL image on `stream` and returns the array of one sub-resource
    // (`array_index`: the cube face or layer; `mip_level`), not owned, holding
    // the mapping: its last holder (the array, its texture and surface objects)
    // unmaps on `stream`. Throws Error: INVALID_ARGUMENT (unknown hint),
    // INVALID_STATE (already mapped, closed, a buffer: use map), CUDA (no such
    // sub-resource), NOT_SUPPORTED (a format this library does not offer).
    OpaqueArray map_array(const Stream &stream, std::uint32_t array_index = 0, std::uint32_t mip_level = 0,
                          GraphicsMapHint hint = GraphicsMapHint::none) const {
        cucore_opaque_array_t *raw = nullptr;
        detail::check(cucore_graphics_resource_map_array(handle_, stream.get(), static_cast<std::uint32_t>(hint),
                                                         array_index, mip_level, &raw));
        return OpaqueArray::adopt(raw);
    }

    // Maps a GL image on `stream` as a mipmapped array holding the mapping (its
    // levels, MipmappedArray::level, hold it too). Throws as map_array.
    MipmappedArray map_mipmapped_array(const Stream &stream, GraphicsMapHint hint = GraphicsMapHint::none) const {
        cucore_mipmapped_array_t *raw = nullptr;
        detail::check(cucore_graphics_resource_map_mipmapped_array(handle_, stream.get(),
                                                                   static_cast<std::uint32_t>(hint), &raw));
        return MipmappedArray::adopt(raw);
    }

    // Unmaps now (on the mapping's stream, or `stream`). Throws Error:
    // INVALID_STATE (not mapped, closed), CUDA.
    void unmap() const { detail::check(cucore_graphics_resource_unmap(handle_, nullptr)); }
    void unmap(const Stream &stream) const { detail::check(cucore_graphics_resource_unmap(handle_, stream.get())); }

    bool is_mapped() const {
        int mapped = 0;
        detail::check(cucore_graphics_resource_is_mapped(handle_, &mapped));
        return mapped != 0;
    }

    // Unmaps if mapped, then unregisters; idempotent. Afterwards other calls
    // throw INVALID_STATE. Throws Error: CUDA.
    void close() const { detail::check(cucore_graphics_resource_close(handle_, nullptr)); }
    void close(const Stream &stream) const { detail::check(cucore_graphics_resource_close(handle_, stream.get())); }

    // The raw CUgraphicsResource (nullptr after close).
    void *handle() const {
        void *raw = nullptr;
        detail::check(cucore_graphics_resource_handle(handle_, &raw));
        return raw;
    }

private:
    static std::vector<cucore_graphics_resource_t *> raw_handles(const std::vector<GraphicsResource> &resources) {
        std::vector<cucore_graphics_resource_t *> raw;
        raw.reserve(resources.size());
        for (const GraphicsResource &resource : resources) raw.push_back(resource.get());
        return raw;
    }
    static void unmap_all(const std::vector<GraphicsResource> &resources, cucore_stream_t *stream) {
        const std::vector<cucore_graphics_resource_t *> raw = raw_handles(resources);
        detail::check(cucore_graphics_resources_unmap(raw.data(), static_cast<std::uint32_t>(raw.size()), stream));
    }

    friend class MappedBuffers;
};

// The Buffers of one batch map (GraphicsResource::map_all), in the resources'
// order. Its scope end unmaps, in one driver call on the mapping stream, every
// resource of the batch still mapped by it (a failure there goes to the
// release-error path, cucore_release_error_count); unmap() does it now and
// throws. Buffers copied out of it read as closed after that. Move-only.
class MappedBuffers {
public:
    MappedBuffers() noexcept = default;
    MappedBuffers(MappedBuffers &&other) noexcept = default;
    MappedBuffers &operator=(MappedBuffers &&other) noexcept {
        if (this != &other) {
            end_batch();
            resources_ = std::move(other.resources_);
            buffers_ = std::move(other.buffers_);
        }
        return *this;
    }
    MappedBuffers(const MappedBuffers &) = delete;
    MappedBuffers &operator=(const MappedBuffers &) = delete;
    ~MappedBuffers() { end_batch(); }

    std::size_t size() const noexcept { return buffers_.size(); }
    bool empty() const noexcept { return buffers_.empty(); }
    const Buffer &operator[](std::size_t i) const noexcept { return buffers_[i]; }
    std::vector<Buffer>::const_iterator begin() const noexcept { return buffers_.begin(); }
    std::vector<Buffer>::const_iterator end() const noexcept { return buffers_.end(); }

    // Unmaps the resources this batch still maps, in one call (on `stream` when
    // given), and empties it. Throws Error: INVALID_ARGUMENT (no stream for
    // mappings on different streams), CUDA (they count as unmapped anyway).
    void unmap() { unmap(nullptr); }
    void unmap(const Stream &stream) { unmap(stream.get()); }

private:
    friend class GraphicsResource;
    MappedBuffers(std::vector<GraphicsResource> resources, std::vector<Buffer> buffers) noexcept
        : resources_(std::move(resources)), buffers_(std::move(buffers)) {}

    // The resources whose mapping by this batch is live (their Buffer is not closed).
    std::vector<cucore_graphics_resource_t *> still_mapped() const noexcept {
        std::vector<cucore_graphics_resource_t *> raw;
        for (std::size_t i = 0; i < buffers_.size(); ++i) {
            std::uint64_t size = 0;
            if (buffers_[i].get() && cucore_buffer_size(buffers_[i].get(), &size) == CUCORE_SUCCESS && size != 0)
                raw.push_back(resources_[i].get());
        }
        return raw;
    }
    cucore_status_t unmap_status(cucore_stream_t *stream) noexcept {
        cucore_status_t status = CUCORE_SUCCESS;
        try {
            const std::vector<cucore_graphics_resource_t *> raw = still_mapped();
            if (!raw.empty())
                status = cucore_graphics_resources_unmap(raw.data(), static_cast<std::uint32_t>(raw.size()), stream);
        } catch (const std::bad_alloc &) {
            status = CUCORE_ERROR_OUT_OF_MEMORY;
        }
        buffers_.clear();
        resources_.clear();
        return status;
    }
    void unmap(cucore_stream_t *stream) { detail::check(unmap_status(stream)); }
    void end_batch() noexcept {
        if (unmap_status(nullptr) != CUCORE_SUCCESS)
            cucore_report_release_error(cucore_last_error_status(), cucore_last_cuda_result(),
                                        cucore_last_error_message());
    }

    std::vector<GraphicsResource> resources_;
    std::vector<Buffer> buffers_;
};

inline MappedBuffers GraphicsResource::map_all(const std::vector<GraphicsResource> &resources, const Stream &stream) {
    const std::vector<cucore_graphics_resource_t *> raw = raw_handles(resources);
    std::vector<cucore_buffer_t *> mapped(resources.size(), nullptr);
    std::vector<Buffer> buffers;
    buffers.reserve(mapped.size());  // before the map: adopting cannot fail afterwards
    std::vector<GraphicsResource> held(resources);
    detail::check(
        cucore_graphics_resources_map(raw.data(), static_cast<std::uint32_t>(raw.size()), stream.get(), mapped.data()));
    for (cucore_buffer_t *buffer : mapped) buffers.push_back(Buffer::adopt(buffer));
    return MappedBuffers(std::move(held), std::move(buffers));
}

// The CUDA device ordinals of the GL context current on this thread. Throws
// Error: CUDA (no NVIDIA GL context current).
inline std::vector<int> gl_get_devices(cucore_gl_device_list_t list = CUCORE_GL_DEVICES_ALL) {
    std::uint32_t count = 0;
    detail::check(cucore_gl_get_devices(static_cast<std::uint32_t>(list), nullptr, 0, &count));
    std::vector<int> ordinals(count);
    if (count > 0) detail::check(cucore_gl_get_devices(static_cast<std::uint32_t>(list), ordinals.data(), count, &count));
    ordinals.resize(count);
    return ordinals;
}

} // namespace cucore

#endif // CUCORE_GRAPHICS_HPP
