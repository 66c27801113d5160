// Sharing memory pools, buffers and events with other processes (cucore/ipc.h).
//
// Pools: an IPC-enabled PoolResource is exported as a POSIX file descriptor
// plus its PoolId; the importing process gets a PoolResource of kind IMPORTED
// (owned: cuMemPoolDestroy with its last reference; it cannot allocate). A
// process-wide registry maps PoolId -> weak reference, so importing one pool
// twice gives the same resource.
// Buffers: a whole buffer of an IPC-enabled pool is exported as a checksummed
// descriptor (ipc_descriptor.hpp); importing it maps the memory
// (cuMemPoolImportPointer) into an Allocation whose deleter unmaps it with
// cuMemFreeAsync on its deallocation stream; the allocation reports and holds
// the imported pool as its resource (which cannot allocate and frees nothing). The driver maps each pointer once
// per process, so a per-pool cache (export data -> weak Allocation) makes a
// second import of a live buffer share the first.
// Events: an event created with CUCORE_EVENT_INTERPROCESS is exported as a
// descriptor and opened (cuIpcOpenEventHandle) in the importing device's
// primary context as an owned Event (cuEventDestroy on release).
#pragma once

#include "core/buffer.hpp"
#include "core/event.hpp"
#include "core/ipc_descriptor.hpp"
#include "core/memory_pool.hpp"

namespace cucore::core {

class Device;

namespace ipc {

// A new file descriptor (the caller's to close) and the pool's identity.
// NOT_SUPPORTED unless `resource` is a pool created with ipc_enabled.
cucore_ipc_pool_handle_t export_pool(MemoryResource &resource);
// The imported pool of `handle` on `device` (the same resource while one lives).
Ref<PoolResource> import_pool(Device &device, const cucore_ipc_pool_handle_t &handle);
// The identifier of an IPC-enabled or imported pool (NOT_SUPPORTED otherwise).
PoolId pool_id(const MemoryResource &resource);

BufferDescriptor export_buffer(Buffer &buffer);
// `stream` becomes the deallocation stream of a new import (not of a shared one).
Ref<Buffer> import_buffer(MemoryResource &resource, const uint8_t *descriptor, uint64_t size, Stream &stream);

EventDescriptor export_event(Event &event);
Ref<Event> import_event(Device &device, const uint8_t *descriptor, uint64_t size);

}  // namespace ipc
}  // namespace cucore::core
