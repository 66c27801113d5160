// Initialisation, error names, devices and contexts.
#include <cstdio>

#include "entry_points.hpp"
#include "state.hpp"

namespace fake::detail {

Context *as_context(CUcontext c) {
    auto *context = reinterpret_cast<Context *>(c);
    return state().contexts.count(context) ? context : nullptr;
}

int device_of(CUcontext context) {
    Context *c = as_context(context);
    return c ? c->device : -1;
}

namespace {

bool valid_device(CUdevice device) { return device >= 0 && device < state().devices; }

// The texture and surface attributes: an H100's (driver 580). Arrays, texture
// and surface objects are checked against them, by libcucore before the
// driver and by the fake's cuArray3DCreate and cuTexObjectCreate as the
// driver does, so they must be real limits: an encoded answer (attribute * 10
// + ordinal) would make 3D arrays wider than 240 texels "too large" and
// alignments meaningless.
bool texture_attribute(int attribute, int &value) {
    switch (attribute) {
        case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: value = static_cast<int>(kTextureAlignment); return true;
        case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT: value = static_cast<int>(kTexturePitchAlignment); return true;
        case CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT: value = 512; return true;
        case CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED: value = 1; return true;
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH: value = 131072; return true;
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT: value = 65536; return true;
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH: value = 16384; return true;
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE: value = 8192; return true;
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH: value = 32768; return true;
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS: value = 2048; return true;
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS: value = 2046; return true;
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH: value = 1 << 28; return true;
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT: value = 65000; return true;
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH: value = 2097120; return true;
        default: return false;
    }
}

// What the fake answers where the encoding (attribute * 10 + ordinal) would
// contradict another answer or refuse ordinary launches.
bool fixed_attribute(int attribute, CUdevice device, int &value) {
    switch (attribute) {
        case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: value = 0; return true;  // as cuDeviceGetPCIBusId says
        case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: value = device + 1; return true;
        case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: value = 0; return true;
        case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: value = 1024; return true;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: value = 1024; return true;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: value = 64; return true;
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: value = 0x7fffffff; return true;
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: value = 65535; return true;
        default: return texture_attribute(attribute, value);
    }
}

const char *error_name(CUresult error) {
    switch (error) {
        case CUDA_SUCCESS: return "CUDA_SUCCESS";
        case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
        case CUDA_ERROR_OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
        case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
        case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
        case CUDA_ERROR_INVALID_DEVICE: return "CUDA_ERROR_INVALID_DEVICE";
        case CUDA_ERROR_INVALID_IMAGE: return "CUDA_ERROR_INVALID_IMAGE";
        case CUDA_ERROR_INVALID_CONTEXT: return "CUDA_ERROR_INVALID_CONTEXT";
        case CUDA_ERROR_ALREADY_MAPPED: return "CUDA_ERROR_ALREADY_MAPPED";
        case CUDA_ERROR_NOT_MAPPED: return "CUDA_ERROR_NOT_MAPPED";
        case CUDA_ERROR_NOT_MAPPED_AS_ARRAY: return "CUDA_ERROR_NOT_MAPPED_AS_ARRAY";
        case CUDA_ERROR_NOT_MAPPED_AS_POINTER: return "CUDA_ERROR_NOT_MAPPED_AS_POINTER";
        case CUDA_ERROR_INVALID_PTX: return "CUDA_ERROR_INVALID_PTX";
        case CUDA_ERROR_FILE_NOT_FOUND: return "CUDA_ERROR_FILE_NOT_FOUND";
        case CUDA_ERROR_OPERATING_SYSTEM: return "CUDA_ERROR_OPERATING_SYSTEM";
        case CUDA_ERROR_INVALID_HANDLE: return "CUDA_ERROR_INVALID_HANDLE";
        case CUDA_ERROR_NOT_FOUND: return "CUDA_ERROR_NOT_FOUND";
        case CUDA_ERROR_NOT_READY: return "CUDA_ERROR_NOT_READY";
        case CUDA_ERROR_ILLEGAL_ADDRESS: return "CUDA_ERROR_ILLEGAL_ADDRESS";
        case CUDA_ERROR_NOT_SUPPORTED: return "CUDA_ERROR_NOT_SUPPORTED";
        case CUDA_ERROR_UNKNOWN: return "CUDA_ERROR_UNKNOWN";
        default: return nullptr;
    }
}

}  // namespace

int attribute_value(int attribute, int device) {
    if (auto it = state().attributes.find({attribute, device}); it != state().attributes.end()) return it->second;
    int value = 0;
    return fixed_attribute(attribute, device, value) ? value : attribute * 10 + device;
}

CUresult f_cuGetErrorName(CUresult error, const char **name) {
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    *name = error_name(error);
    return *name ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult f_cuGetErrorString(CUresult error, const char **text) {
    if (!text) return CUDA_ERROR_INVALID_VALUE;
    *text = error_name(error) ? "fake driver error" : nullptr;
    return *text ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult f_cuInit(unsigned) {
    Lock lock(state().mutex);
    state().initialized = true;
    return CUDA_SUCCESS;
}
CUresult f_cuDriverGetVersion(int *version) {
    if (!version) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    *version = state().driver_version;
    return CUDA_SUCCESS;
}
CUresult f_cuDeviceGetCount(int *count) {
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    *count = state().devices;
    return CUDA_SUCCESS;
}
CUresult f_cuDeviceGet(CUdevice *device, int ordinal) {
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    if (!valid_device(ordinal)) return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}
CUresult f_cuDeviceGetName(char *name, int length, CUdevice device) {
    if (!name || length <= 0) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    if (!valid_device(device)) return CUDA_ERROR_INVALID_DEVICE;
    std::snprintf(name, static_cast<size_t>(length), "Fake GPU %d", device);
    return CUDA_SUCCESS;
}
CUresult f_cuDeviceGetUuid(CUuuid *uuid, CUdevice device) {
    if (!uuid) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    if (!valid_device(device)) return CUDA_ERROR_INVALID_DEVICE;
    for (int i = 0; i < 16; ++i) uuid->bytes[i] = static_cast<char>(device * 16 + i);
    return CUDA_SUCCESS;
}
CUresult f_cuDeviceGetPCIBusId(char *bus, int length, CUdevice device) {
    if (!bus || length <= 0) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    if (!valid_device(device)) return CUDA_ERROR_INVALID_DEVICE;
    std::snprintf(bus, static_cast<size_t>(length), "0000:%02x:00.0", device + 1);
    return CUDA_SUCCESS;
}
CUresult f_cuDeviceTotalMem(size_t *bytes, CUdevice device) {
    if (!bytes) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    if (!valid_device(device)) return CUDA_ERROR_INVALID_DEVICE;
    *bytes = kDeviceMemory + static_cast<size_t>(device);
    return CUDA_SUCCESS;
}
CUresult f_cuDeviceGetAttribute(int *value, CUdevice_attribute attribute_argument, CUdevice device) {
    const int attribute = value_of(attribute_argument);
    if (!value || attribute <= 0 || attribute >= CU_DEVICE_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    if (!valid_device(device)) return CUDA_ERROR_INVALID_DEVICE;
    *value = attribute_value(attribute, device);
    return CUDA_SUCCESS;
}
CUresult f_cuDeviceCanAccessPeer(int *can, CUdevice device, CUdevice peer) {
    if (!can) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    if (!valid_device(device) || !valid_device(peer)) return CUDA_ERROR_INVALID_DEVICE;
    *can = device != peer;
    return CUDA_SUCCESS;
}
CUresult f_cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
    if (!context) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    if (!valid_device(device)) return CUDA_ERROR_INVALID_DEVICE;
    ++state().primary_refs.at(device);
    *context = reinterpret_cast<CUcontext>(state().primary.at(device).get());
    return CUDA_SUCCESS;
}
CUresult f_cuDevicePrimaryCtxRelease(CUdevice device) {
    Lock lock(state().mutex);
    if (!valid_device(device)) return CUDA_ERROR_INVALID_DEVICE;
    if (state().primary_refs.at(device) <= 0) return CUDA_ERROR_INVALID_CONTEXT;
    --state().primary_refs.at(device);
    return CUDA_SUCCESS;
}
CUresult f_cuCtxGetCurrent(CUcontext *context) {
    if (!context) return CUDA_ERROR_INVALID_VALUE;
    *context = t_current;
    return CUDA_SUCCESS;
}
CUresult f_cuCtxSetCurrent(CUcontext context) {
    Lock lock(state().mutex);
    if (context && !as_context(context)) return CUDA_ERROR_INVALID_CONTEXT;
    t_current = context;
    return CUDA_SUCCESS;
}
CUresult f_cuCtxEnablePeerAccess(CUcontext peer, unsigned flags) {
    Lock lock(state().mutex);
    Context *context = as_context(t_current);
    if (!context) return CUDA_ERROR_INVALID_CONTEXT;
    Context *other = as_context(peer);
    if (!other || flags) return CUDA_ERROR_INVALID_VALUE;
    if (other->device == context->device) return CUDA_ERROR_INVALID_DEVICE;
    return context->peers.insert(peer).second ? CUDA_SUCCESS : CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
}
CUresult f_cuCtxDisablePeerAccess(CUcontext peer) {
    Lock lock(state().mutex);
    Context *context = as_context(t_current);
    if (!context) return CUDA_ERROR_INVALID_CONTEXT;
    if (!as_context(peer)) return CUDA_ERROR_INVALID_VALUE;
    return context->peers.erase(peer) ? CUDA_SUCCESS : CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
}
CUresult f_cuCtxGetDevice(CUdevice *device) {
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Context *context = as_context(t_current);
    if (!context) return CUDA_ERROR_INVALID_CONTEXT;
    *device = context->device;
    return CUDA_SUCCESS;
}
CUresult f_cuCtxGetStreamPriorityRange(int *least, int *greatest) {
    if (least) *least = 0;
    if (greatest) *greatest = -5;
    return CUDA_SUCCESS;
}

}  // namespace fake::detail

namespace fake {

using detail::Lock;
using detail::state;

void set_attribute(CUdevice_attribute attribute, int device, int value) {
    Lock lock(state().mutex);
    state().attributes[{attribute, device}] = value;
}

void set_driver_version(int version) {
    Lock lock(state().mutex);
    state().driver_version = version;
}

CUcontext make_foreign_context(int device) {
    Lock lock(state().mutex);
    auto &foreign = state().foreign;
    foreign.push_back(std::make_unique<detail::Context>(detail::Context{device, false, nullptr, {}}));
    state().contexts.insert(foreign.back().get());
    return reinterpret_cast<CUcontext>(foreign.back().get());
}

CUcontext current_context() { return detail::t_current; }
void set_current_context(CUcontext context) { detail::t_current = context; }

}  // namespace fake
