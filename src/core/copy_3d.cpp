// Strided 2D/3D copies between buffers and host memory (cuMemcpy3DAsync).
#include "core/copy_3d.hpp"

#include <string>

#include "core/buffer.hpp"
#include "core/context.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/stream.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

namespace {
uint64_t checked_add(uint64_t a, uint64_t b, const char *side) {
    if (a > UINT64_MAX - b) throw_invalid_argument(std::string("the region of '") + side + "' overflows 64 bits");
    return a + b;
}

uint64_t checked_mul(uint64_t a, uint64_t b, const char *side) {
    if (a != 0 && b > UINT64_MAX / a)
        throw_invalid_argument(std::string("the region of '") + side + "' overflows 64 bits");
    return a * b;
}

// The rows per slice the driver steps by: a 2D copy's height may be left 0, and
// the driver then needs at least the rows it copies.
uint64_t slice_height(const cucore_memory_region_t &region, uint64_t rows, uint64_t depth) {
    if (depth > 1 || region.height >= region.y + rows) return region.height;
    return region.y + rows;
}

}  // namespace

void check_copy_side(const CopySide &side, uint64_t width, uint64_t rows, uint64_t depth, const char *name) {
    const cucore_memory_region_t &region = side.region;
    if (region.pitch < width || region.x > region.pitch - width)
        throw_invalid_argument(std::string("'") + name + ".x' + width (" + std::to_string(region.x) + " + " +
                               std::to_string(width) + ") exceeds '" + name + ".pitch' (" +
                               std::to_string(region.pitch) + ")");
    if (depth > 1 && (region.height < rows || region.y > region.height - rows))
        throw_invalid_argument(std::string("'") + name + ".y' + rows (" + std::to_string(region.y) + " + " +
                               std::to_string(rows) + ") exceeds '" + name + ".height' (" +
                               std::to_string(region.height) + ")");
    if (!side.buffer) return;  // host memory: the caller vouches for it
    // The last byte copied: offset + ((z + depth - 1) * height + y + rows - 1) * pitch + x + width.
    const uint64_t slice_rows = slice_height(region, rows, depth);
    const uint64_t last_row = checked_add(checked_mul(checked_add(region.z, depth - 1, name), slice_rows, name),
                                          checked_add(region.y, rows - 1, name), name);
    const uint64_t end = checked_add(checked_add(region.offset, checked_mul(last_row, region.pitch, name), name),
                                     checked_add(region.x, width, name), name);
    if (end > side.buffer->size())
        throw_invalid_argument(std::string("the region of '") + name + "' ends at byte " + std::to_string(end) +
                               ", past the end of its buffer (" + std::to_string(side.buffer->size()) + " bytes)");
}

void describe_copy_side(const CopySide &side, uint64_t rows, uint64_t depth, bool source, CUDA_MEMCPY3D &params) {
    CUmemorytype type;
    CUdeviceptr device;
    const void *host;
    const cucore_memory_region_t &region = side.region;
    if (side.buffer && side.buffer->device_accessible()) {
        // Unified addressing: the driver tells device, pinned and managed memory apart.
        type = CU_MEMORYTYPE_UNIFIED;
        device = side.buffer->address() + region.offset;
        host = nullptr;
    } else if (side.buffer) {  // host-only memory (e.g. a pageable foreign buffer)
        type = CU_MEMORYTYPE_HOST;
        device = 0;
        host = reinterpret_cast<const char *>(side.buffer->address()) + region.offset;
    } else {
        type = CU_MEMORYTYPE_HOST;
        device = 0;
        host = static_cast<const char *>(region.host) + region.offset;
    }
    const size_t pitch = static_cast<size_t>(region.pitch);
    const size_t height = static_cast<size_t>(slice_height(region, rows, depth));
    if (source) {
        params.srcMemoryType = type;
        params.srcDevice = device;
        params.srcHost = host;
        params.srcPitch = pitch;
        params.srcHeight = height;
        params.srcXInBytes = static_cast<size_t>(region.x);
        params.srcY = static_cast<size_t>(region.y);
        params.srcZ = static_cast<size_t>(region.z);
    } else {
        params.dstMemoryType = type;
        params.dstDevice = device;
        params.dstHost = const_cast<void *>(host);
        params.dstPitch = pitch;
        params.dstHeight = height;
        params.dstXInBytes = static_cast<size_t>(region.x);
        params.dstY = static_cast<size_t>(region.y);
        params.dstZ = static_cast<size_t>(region.z);
    }
}
namespace {
// The peer form of `params`: the same copy, each side with its device's primary context.
CUDA_MEMCPY3D_PEER peer_params(const CUDA_MEMCPY3D &params, Buffer &source, Buffer &destination) {
    CUDA_MEMCPY3D_PEER peer{};
    peer.srcXInBytes = params.srcXInBytes;
    peer.srcY = params.srcY;
    peer.srcZ = params.srcZ;
    peer.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    peer.srcDevice = params.srcDevice;
    peer.srcContext = Device::get(source.device_id())->primary_context()->cu();
    peer.srcPitch = params.srcPitch;
    peer.srcHeight = params.srcHeight;
    peer.dstXInBytes = params.dstXInBytes;
    peer.dstY = params.dstY;
    peer.dstZ = params.dstZ;
    peer.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    peer.dstDevice = params.dstDevice;
    peer.dstContext = Device::get(destination.device_id())->primary_context()->cu();
    peer.dstPitch = params.dstPitch;
    peer.dstHeight = params.dstHeight;
    peer.WidthInBytes = params.WidthInBytes;
    peer.Height = params.Height;
    peer.Depth = params.Depth;
    return peer;  // the primary contexts stay retained: every device keeps its own while buffers of it live
}
}  // namespace

void copy_3d(const CopySide &source, const CopySide &destination, uint64_t width, uint64_t rows, uint64_t depth,
             Stream &stream) {
    if (source.buffer) source.buffer->check_open("copy.src.buffer");
    if (destination.buffer) destination.buffer->check_open("copy.dst.buffer");
    if (rows == 0 || depth == 0) throw_invalid_argument("'rows' and 'depth' must be at least 1");
    if (width == 0) {
        check_copy_side(source, width, rows, depth, "src");
        check_copy_side(destination, width, rows, depth, "dst");
        return;
    }
    const CUDA_MEMCPY3D params = copy_3d_params(source, destination, width, rows, depth);
    Buffer *src = source.buffer, *dst = destination.buffer;
    const bool host_src = !src || src->device_id() < 0, host_dst = !dst || dst->device_id() < 0;
    // Host memory on a side: the stream's context current, as Buffer::copy_from_host binds it.
    ScopedContext bind(stream.cu_context(), stream.is_builtin() || host_src || host_dst);
    if (src && dst && is_device_memory(*src) && is_device_memory(*dst) && src->device_id() != dst->device_id()) {
        // Memory of two devices: a peer copy, each side named with its device's context (as Buffer::copy_from).
        CUDA_MEMCPY3D_PEER peer = peer_params(params, *src, *dst);
        CUCORE_CALL(cuMemcpy3DPeerAsync, &peer, stream.cu());
    } else {
        // Host memory on one side (a host pointer or a host buffer): the device side's own stream.
        if (src && host_dst) check_stream_reaches(*src, stream, "copy.src.buffer");
        if (dst && host_src) check_stream_reaches(*dst, stream, "copy.dst.buffer");
        CUCORE_CALL(cuMemcpy3DAsync, &params, stream.cu());
    }
    if (source.buffer) hold_buffer_for_capture(stream, *source.buffer);
    if (destination.buffer) hold_buffer_for_capture(stream, *destination.buffer);
}

CUDA_MEMCPY3D copy_3d_params(const CopySide &source, const CopySide &destination, uint64_t width, uint64_t rows,
                             uint64_t depth) {
    check_copy_side(source, width, rows, depth, "src");
    check_copy_side(destination, width, rows, depth, "dst");
    CUDA_MEMCPY3D params{};
    describe_copy_side(source, rows, depth, true, params);
    describe_copy_side(destination, rows, depth, false, params);
    params.WidthInBytes = static_cast<size_t>(width);
    params.Height = static_cast<size_t>(rows);
    params.Depth = static_cast<size_t>(depth);
    return params;
}

}  // namespace cucore::core
