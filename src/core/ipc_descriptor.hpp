// The byte formats of IPC descriptors (cucore/ipc.h): what one process writes
// and another reads, so they are versioned and checksummed, and every check
// here runs before anything reaches the driver.
//
// Buffer descriptor (CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE = 128 bytes, integers
// little-endian):
//    0  8  magic "CUCOREIB"
//    8  4  format version (1)
//   12  4  kind of the exporting pool (CUCORE_MEMORY_RESOURCE_DEVICE or _PINNED)
//   16 16  the pool's identifier (PoolId)
//   32  8  the buffer's size in bytes (> 0)
//   40 64  CUmemPoolPtrExportData (cuMemPoolExportPointer)
//  104 16  reserved, zero
//  120  8  FNV-1a 64 of bytes 0..119
// Event descriptor (CUCORE_IPC_EVENT_DESCRIPTOR_SIZE = 72 bytes):
//    0  3  magic "CUE"
//    3  1  format version (1)
//    4 64  CUipcEventHandle (cuIpcGetEventHandle)
//   68  4  FNV-1a 32 of bytes 0..67
// FNV-1a changes its result for any change of a single byte (each step is a
// bijection of the running hash), so the "each byte corrupted" test holds.
#pragma once

#include <cuda.h>

#include <array>
#include <cstdint>
#include <string>

#include "core/memory_pool.hpp"
#include "cucore/ipc.h"

namespace cucore::core::ipc {

using BufferDescriptor = std::array<uint8_t, CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE>;
using EventDescriptor = std::array<uint8_t, CUCORE_IPC_EVENT_DESCRIPTOR_SIZE>;
using ExportData = std::array<uint8_t, sizeof(CUmemPoolPtrExportData)>;

static_assert(sizeof(CUmemPoolPtrExportData) == 64, "the buffer descriptor layout assumes 64 bytes of export data");
static_assert(sizeof(CUipcEventHandle) == 64, "the event descriptor layout assumes a 64-byte CUipcEventHandle");

// What a buffer descriptor says.
struct BufferExport {
    cucore_memory_resource_kind_t kind = CUCORE_MEMORY_RESOURCE_UNSET;
    PoolId pool_id{};
    uint64_t size = 0;
    ExportData data{};
};

BufferDescriptor encode_buffer(const BufferExport &exported) noexcept;
// Checks `size` bytes at `bytes` (the argument 'descriptor'): INVALID_ARGUMENT
// for a wrong size, a bad magic, another version, a checksum mismatch or
// impossible contents, each with its own message.
BufferExport decode_buffer(const uint8_t *bytes, uint64_t size);

EventDescriptor encode_event(const CUipcEventHandle &handle) noexcept;
CUipcEventHandle decode_event(const uint8_t *bytes, uint64_t size);

// The pool identifier in hex, for messages.
std::string hex(const PoolId &id);

}  // namespace cucore::core::ipc
