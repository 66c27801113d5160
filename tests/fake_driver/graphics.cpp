// Graphics interop (OpenGL) without GL: see fake_driver.hpp. Every
// registration, map-flag change, map, unmap and unregister is logged, so
// tests can check the order of calls and their streams.
#include <cstdio>

#include "entry_points.hpp"
#include "state.hpp"

namespace fake::detail {
namespace {

GraphicsResource *as_graphics(CUgraphicsResource r) {
    auto *graphics = reinterpret_cast<GraphicsResource *>(r);
    return state().graphics.count(graphics) ? graphics : nullptr;
}

void log(GraphicsLogEntry entry) { state().graphics_log.push_back(std::move(entry)); }

CUresult gl_register(const char *entry, CUgraphicsResource *resource, unsigned gl_name, bool image, unsigned flags) {
    if (!resource) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    State &g = state();
    Context *context = as_context(t_current);
    if (!context) return CUDA_ERROR_INVALID_CONTEXT;
    if (g.gl_device < 0) return CUDA_ERROR_OPERATING_SYSTEM;
    if (context->device != g.gl_device) return CUDA_ERROR_INVALID_DEVICE;
    if (gl_name == 0) return CUDA_ERROR_INVALID_HANDLE;  // as the driver says for a name that is no GL object
    if (flags & ~0xFu) return CUDA_ERROR_INVALID_VALUE;
    auto graphics = std::make_unique<GraphicsResource>();
    graphics->id = g.next_graphics_id++;
    graphics->context = t_current;
    graphics->gl_name = gl_name;
    graphics->image = image;
    graphics->flags = flags;
    if (image) {
        // A mipmapped array of two levels, usable while mapped (arrays.cpp).
        CUDA_ARRAY3D_DESCRIPTOR level0{};
        level0.Width = kGlImageWidth;
        level0.Height = kGlImageHeight;
        level0.Format = CU_AD_FORMAT_UNSIGNED_INT8;
        level0.NumChannels = 4;
        if (flags & CU_GRAPHICS_REGISTER_FLAGS_SURFACE_LDST) level0.Flags |= CUDA_ARRAY3D_SURFACE_LDST;
        if (flags & CU_GRAPHICS_REGISTER_FLAGS_TEXTURE_GATHER) level0.Flags |= CUDA_ARRAY3D_TEXTURE_GATHER;
        graphics->arrays = new_mipmapped(level0, 2, context->device);
        graphics->arrays->graphics = graphics.get();
        for (Array *level : graphics->arrays->levels) level->data.assign(layout_of(level->descriptor).size(), 0);
    } else {
        // Lives from registration to unregistration, so data survives unmap and map again.
        graphics->memory.assign(kGlBufferSize, kFreshByte);
        register_storage(graphics->memory.data(), kGlBufferSize, MemoryKind::gl_buffer, context->device);
    }
    *resource = reinterpret_cast<CUgraphicsResource>(graphics.get());
    log({entry, {*resource}, nullptr, flags});
    g.graphics.insert(graphics.get());
    g.graphics_storage.push_back(std::move(graphics));
    return CUDA_SUCCESS;
}

// Maps or unmaps all of them, or none.
CUresult gl_map(const char *entry, unsigned count, CUgraphicsResource *resources, CUstream stream, bool map) {
    if (count == 0 || !resources) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    if (!valid_stream_handle(stream)) return CUDA_ERROR_INVALID_HANDLE;
    for (unsigned i = 0; i < count; ++i) {
        GraphicsResource *graphics = as_graphics(resources[i]);
        if (!graphics) return CUDA_ERROR_INVALID_HANDLE;
        if (map && graphics->context != t_current) return CUDA_ERROR_INVALID_CONTEXT;
        if (map && graphics->mapped) return CUDA_ERROR_ALREADY_MAPPED;
        if (!map && !graphics->mapped) return CUDA_ERROR_NOT_MAPPED;
    }
    for (unsigned i = 0; i < count; ++i) {
        GraphicsResource *graphics = as_graphics(resources[i]);
        // An unmap ends the arrays of the mapping: a texture or surface object must not read them any more.
        if (!map && graphics->arrays) note_mipmapped_gone(*graphics->arrays);
        graphics->mapped = map;
    }
    log({entry, {resources, resources + count}, stream});
    return CUDA_SUCCESS;
}

}  // namespace

CUresult f_cuGraphicsGLRegisterBuffer(CUgraphicsResource *resource, unsigned gl_name, unsigned flags) {
    return gl_register("cuGraphicsGLRegisterBuffer", resource, gl_name, false, flags);
}
CUresult f_cuGraphicsGLRegisterImage(CUgraphicsResource *resource, unsigned gl_name, unsigned target, unsigned flags) {
    if (target == 0) return CUDA_ERROR_INVALID_VALUE;
    return gl_register("cuGraphicsGLRegisterImage", resource, gl_name, true, flags);
}
CUresult f_cuGraphicsUnregisterResource(CUgraphicsResource resource) {
    Lock lock(state().mutex);
    State &g = state();
    GraphicsResource *graphics = as_graphics(resource);
    if (!graphics) return CUDA_ERROR_INVALID_HANDLE;
    GraphicsLogEntry entry{"cuGraphicsUnregisterResource", {resource}, nullptr};
    entry.while_mapped = graphics->mapped;
    log(entry);
    if (graphics->mapped) {
        ++g.graphics_violations;
        return CUDA_ERROR_ALREADY_MAPPED;
    }
    g.graphics.erase(graphics);  // kept until install(): its memory is never handed out again
    if (!graphics->image) free_allocation(reinterpret_cast<CUdeviceptr>(graphics->memory.data()));
    if (graphics->arrays) graphics->arrays->destroyed = true;
    return CUDA_SUCCESS;
}
CUresult f_cuGraphicsMapResources(unsigned count, CUgraphicsResource *resources, CUstream stream) {
    return gl_map("cuGraphicsMapResources", count, resources, stream, true);
}
CUresult f_cuGraphicsUnmapResources(unsigned count, CUgraphicsResource *resources, CUstream stream) {
    return gl_map("cuGraphicsUnmapResources", count, resources, stream, false);
}
CUresult f_cuGraphicsResourceGetMappedPointer(CUdeviceptr *address, size_t *size, CUgraphicsResource resource) {
    Lock lock(state().mutex);
    GraphicsResource *graphics = as_graphics(resource);
    if (!graphics || !address || !size) return CUDA_ERROR_INVALID_VALUE;
    if (!graphics->mapped) return CUDA_ERROR_NOT_MAPPED;
    if (graphics->image) return CUDA_ERROR_NOT_MAPPED_AS_POINTER;
    *address = reinterpret_cast<CUdeviceptr>(graphics->memory.data());
    *size = graphics->memory.size();
    return CUDA_SUCCESS;
}
CUresult f_cuGraphicsSubResourceGetMappedArray(CUarray *array, CUgraphicsResource resource, unsigned index,
                                               unsigned level) {
    Lock lock(state().mutex);
    GraphicsResource *graphics = as_graphics(resource);
    if (!graphics || !array) return CUDA_ERROR_INVALID_VALUE;
    if (!graphics->mapped) return CUDA_ERROR_NOT_MAPPED;
    if (!graphics->image) return CUDA_ERROR_NOT_MAPPED_AS_ARRAY;
    if (index != 0 || level >= graphics->arrays->levels.size()) return CUDA_ERROR_INVALID_VALUE;
    *array = reinterpret_cast<CUarray>(graphics->arrays->levels[level]);
    return CUDA_SUCCESS;
}
CUresult f_cuGraphicsResourceGetMappedMipmappedArray(CUmipmappedArray *mipmapped, CUgraphicsResource resource) {
    Lock lock(state().mutex);
    GraphicsResource *graphics = as_graphics(resource);
    if (!graphics || !mipmapped) return CUDA_ERROR_INVALID_VALUE;
    if (!graphics->mapped) return CUDA_ERROR_NOT_MAPPED;
    if (!graphics->image) return CUDA_ERROR_NOT_MAPPED_AS_ARRAY;
    *mipmapped = reinterpret_cast<CUmipmappedArray>(graphics->arrays);
    return CUDA_SUCCESS;
}
CUresult f_cuGraphicsResourceSetMapFlags(CUgraphicsResource resource, unsigned flags) {
    Lock lock(state().mutex);
    GraphicsResource *graphics = as_graphics(resource);
    if (!graphics) return CUDA_ERROR_INVALID_HANDLE;
    if (graphics->mapped) return CUDA_ERROR_ALREADY_MAPPED;
    if (flags > CU_GRAPHICS_MAP_RESOURCE_FLAGS_WRITE_DISCARD) return CUDA_ERROR_INVALID_VALUE;
    graphics->map_flags = flags;
    log({"cuGraphicsResourceSetMapFlags", {resource}, nullptr, flags});
    return CUDA_SUCCESS;
}
CUresult f_cuGLGetDevices(unsigned *count, CUdevice *devices, unsigned capacity, int list) {
    if (!count || !devices || capacity == 0 || list < 1 || list > 3) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    if (state().gl_device < 0) return CUDA_ERROR_NO_DEVICE;
    *count = 1;
    devices[0] = state().gl_device;
    return CUDA_SUCCESS;
}

// The log as text, one line per call: "register ID buffer|image NAME flags F",
// "mapflags ID F", "map ID... stream 0x..", "unmap ID... stream 0x..",
// "unregister ID[ while-mapped]".
std::string graphics_log_text() {
    State &g = state();
    std::map<CUgraphicsResource, unsigned> ids;
    for (auto &graphics : g.graphics_storage) ids[reinterpret_cast<CUgraphicsResource>(graphics.get())] = graphics->id;
    std::string text;
    char line[64];
    for (const GraphicsLogEntry &e : g.graphics_log) {
        const unsigned first = ids[e.resources.at(0)];
        if (e.entry == "cuGraphicsGLRegisterBuffer" || e.entry == "cuGraphicsGLRegisterImage") {
            const GraphicsResource *graphics = reinterpret_cast<GraphicsResource *>(e.resources[0]);
            std::snprintf(line, sizeof line, "register %u %s %u flags %u\n", first,
                          graphics->image ? "image" : "buffer", graphics->gl_name, e.flags);
            text += line;
        } else if (e.entry == "cuGraphicsResourceSetMapFlags") {
            std::snprintf(line, sizeof line, "mapflags %u %u\n", first, e.flags);
            text += line;
        } else if (e.entry == "cuGraphicsUnregisterResource") {
            text += "unregister " + std::to_string(first) + (e.while_mapped ? " while-mapped\n" : "\n");
        } else {
            text += e.entry == "cuGraphicsMapResources" ? "map" : "unmap";
            for (CUgraphicsResource r : e.resources) text += " " + std::to_string(ids[r]);
            const auto stream = static_cast<unsigned long>(reinterpret_cast<uintptr_t>(e.stream));
            std::snprintf(line, sizeof line, " stream %#lx\n", stream);
            text += line;
        }
    }
    return text;
}

}  // namespace fake::detail

namespace fake {

using detail::Lock;
using detail::state;

void set_gl_device(int device) {
    Lock lock(state().mutex);
    state().gl_device = device;
}

std::vector<GraphicsCall> graphics_calls() {
    Lock lock(state().mutex);
    std::vector<GraphicsCall> calls;
    for (const detail::GraphicsLogEntry &e : state().graphics_log) {
        if (e.entry != "cuGraphicsMapResources" && e.entry != "cuGraphicsUnmapResources" &&
            e.entry != "cuGraphicsUnregisterResource")
            continue;
        for (CUgraphicsResource r : e.resources) calls.push_back({e.entry, r, e.stream});
    }
    return calls;
}

int graphics_order_violations() {
    Lock lock(state().mutex);
    return state().graphics_violations;
}

int graphics_register_flags(CUgraphicsResource resource) {
    Lock lock(state().mutex);
    detail::GraphicsResource *graphics = detail::as_graphics(resource);
    return graphics ? static_cast<int>(graphics->flags) : -1;
}

int graphics_map_flags(CUgraphicsResource resource) {
    Lock lock(state().mutex);
    detail::GraphicsResource *graphics = detail::as_graphics(resource);
    return graphics ? static_cast<int>(graphics->map_flags) : -1;
}

std::vector<unsigned char> *graphics_bytes(CUgraphicsResource resource, unsigned level) {
    Lock lock(state().mutex);
    detail::GraphicsResource *graphics = detail::as_graphics(resource);
    if (!graphics) return nullptr;
    if (!graphics->image) return &graphics->memory;
    return level < graphics->arrays->levels.size() ? &graphics->arrays->levels[level]->data : nullptr;
}

}  // namespace fake
