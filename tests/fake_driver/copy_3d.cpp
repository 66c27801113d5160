// Strided copies (cuMemcpy3DAsync): checked as the driver does, then copied
// row by row in stream order; an array side is its packed bytes in host
// memory (arrays.cpp), region by region.
#include <cstring>

#include "entry_points.hpp"
#include "graphs.hpp"
#include "state.hpp"

namespace fake::detail {
namespace {

// The address of a side's first byte, or 0 for a memory type the fake does not take.
CUdeviceptr base_of(CUmemorytype type, const void *host, CUdeviceptr device) {
    if (type == CU_MEMORYTYPE_HOST) return reinterpret_cast<CUdeviceptr>(host);
    if (type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED) return device;
    return 0;
}

// Whether the last byte a side touches has an address (no 64-bit overflow).
bool addressable(CUdeviceptr base, size_t x, size_t y, size_t z, size_t pitch, size_t height, size_t width,
                 size_t rows, size_t depth) {
    using U = unsigned __int128;
    const U last_row = (U{z} + depth - 1) * height + y + rows - 1;
    return U{base} + last_row * pitch + x + width <= (U{1} << 64);
}

}  // namespace

CUresult copy_3d(Lock *lock, const CUDA_MEMCPY3D *original, CUstream stream, Copy3D mode) {
    if (!original) return CUDA_ERROR_INVALID_VALUE;
    CUDA_MEMCPY3D c = *original;
    const void *dst_host = c.dstHost;
    // An array side becomes its packed bytes (checked against its extent: x in
    // bytes, y rows, z slices, BC in rows of blocks); the rest is the same.
    if (const CUresult error = array_as_host(c.srcMemoryType, c.srcHost, c.srcArray, c.srcXInBytes, c.srcY, c.srcZ,
                                             c.WidthInBytes, c.Height, c.Depth, c.srcPitch, c.srcHeight);
        error != CUDA_SUCCESS)
        return error;
    if (const CUresult error = array_as_host(c.dstMemoryType, dst_host, c.dstArray, c.dstXInBytes, c.dstY, c.dstZ,
                                             c.WidthInBytes, c.Height, c.Depth, c.dstPitch, c.dstHeight);
        error != CUDA_SUCCESS)
        return error;
    const CUdeviceptr src = base_of(c.srcMemoryType, c.srcHost, c.srcDevice);
    const CUdeviceptr dst = base_of(c.dstMemoryType, dst_host, c.dstDevice);
    if (!src || !dst || c.srcLOD != 0 || c.dstLOD != 0 || c.reserved0 || c.reserved1) return CUDA_ERROR_INVALID_VALUE;
    // A single row needs no pitch (the driver takes 0 there, as XLA's 1D memcpy nodes pass it).
    const bool one_row = c.Height == 1 && c.Depth == 1;
    if (!one_row && (c.srcXInBytes + c.WidthInBytes > c.srcPitch || c.dstXInBytes + c.WidthInBytes > c.dstPitch))
        return CUDA_ERROR_INVALID_VALUE;
    if (c.Depth > 1 && (c.srcY + c.Height > c.srcHeight || c.dstY + c.Height > c.dstHeight))
        return CUDA_ERROR_INVALID_VALUE;
    if (mode == Copy3D::check) return CUDA_SUCCESS;  // a graph node's memory is checked when it runs
    if (c.WidthInBytes == 0 || c.Height == 0 || c.Depth == 0) return CUDA_SUCCESS;
    if (!addressable(src, c.srcXInBytes, c.srcY, c.srcZ, c.srcPitch, c.srcHeight, c.WidthInBytes, c.Height, c.Depth) ||
        !addressable(dst, c.dstXInBytes, c.dstY, c.dstZ, c.dstPitch, c.dstHeight, c.WidthInBytes, c.Height, c.Depth))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult error = CUDA_SUCCESS;
    Stream *s = mode == Copy3D::now ? nullptr : resolve_stream(stream, error);
    if (mode == Copy3D::queue && !s) return error;
    if (s && capture_of(*s)) {  // the copy as the caller described it (arrays included) becomes a node
        NodeParams params;
        params.type = CU_GRAPH_NODE_TYPE_MEMCPY;
        params.copy = *original;
        params.context = s->context;
        return capture_node(*s, std::move(params));
    }
    auto dst_row = [&](size_t y, size_t z) {
        return dst + ((c.dstZ + z) * c.dstHeight + c.dstY + y) * c.dstPitch + c.dstXInBytes;
    };
    auto src_row = [&](size_t y, size_t z) {
        return src + ((c.srcZ + z) * c.srcHeight + c.srcY + y) * c.srcPitch + c.srcXInBytes;
    };
    // Every row is checked first: nothing is copied when one is outside its
    // memory; device memory must be the fake's, host memory may be pageable.
    for (size_t z = 0; z < c.Depth; ++z)
        for (size_t y = 0; y < c.Height; ++y) {
            const int to = classify(dst_row(y, z), c.WidthInBytes);
            const int from = classify(src_row(y, z), c.WidthInBytes);
            if (to < 0 || from < 0 || (c.dstMemoryType == CU_MEMORYTYPE_DEVICE && to != 1) ||
                (c.srcMemoryType == CU_MEMORYTYPE_DEVICE && from != 1))
                return CUDA_ERROR_INVALID_VALUE;
        }
    for (size_t z = 0; z < c.Depth; ++z)
        for (size_t y = 0; y < c.Height; ++y) {
            if (s) copy_in_order(*lock, *s, dst_row(y, z), src_row(y, z), c.WidthInBytes);
            else std::memmove(reinterpret_cast<void *>(dst_row(y, z)), reinterpret_cast<const void *>(src_row(y, z)),
                              c.WidthInBytes);
        }
    return CUDA_SUCCESS;
}

CUresult f_cuMemcpy3DAsync(const CUDA_MEMCPY3D *original, CUstream stream) {
    Lock lock(state().mutex);
    return copy_3d(&lock, original, stream, Copy3D::queue);
}

CUresult f_cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER *peer, CUstream stream) {
    if (!peer) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    if (!as_context(peer->srcContext) || !as_context(peer->dstContext)) return CUDA_ERROR_INVALID_CONTEXT;
    // One address space here: the same copy as cuMemcpy3DAsync's, the contexts checked above.
    CUDA_MEMCPY3D params{};
    params.srcXInBytes = peer->srcXInBytes;
    params.srcY = peer->srcY;
    params.srcZ = peer->srcZ;
    params.srcMemoryType = peer->srcMemoryType;
    params.srcHost = peer->srcHost;
    params.srcDevice = peer->srcDevice;
    params.srcArray = peer->srcArray;
    params.srcPitch = peer->srcPitch;
    params.srcHeight = peer->srcHeight;
    params.dstXInBytes = peer->dstXInBytes;
    params.dstY = peer->dstY;
    params.dstZ = peer->dstZ;
    params.dstMemoryType = peer->dstMemoryType;
    params.dstHost = peer->dstHost;
    params.dstDevice = peer->dstDevice;
    params.dstArray = peer->dstArray;
    params.dstPitch = peer->dstPitch;
    params.dstHeight = peer->dstHeight;
    params.WidthInBytes = peer->WidthInBytes;
    params.Height = peer->Height;
    params.Depth = peer->Depth;
    return copy_3d(&lock, &params, stream, Copy3D::queue);
}

}  // namespace fake::detail
