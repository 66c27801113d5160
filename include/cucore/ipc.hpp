// libcucore C++ façade: sharing memory and events between processes (over
// cucore/ipc.h; Linux).
//
//   // The exporting process:
//   cucore::DeviceMemoryResourceOptions options;
//   options.ipc_enabled = true;
//   cucore::MemoryResource pool = cucore::MemoryResource::device_pool(dev, options);
//   cucore::ipc::PoolHandle shared = cucore::ipc::export_memory_resource(pool);
//   // ... send shared.fd() (SCM_RIGHTS, or inheritance) and shared.pool_id() ...
//   cucore::Buffer buf = pool.allocate(1 << 20, s);
//   cucore::ipc::BufferDescriptor d = cucore::ipc::export_buffer(buf);  // 128 bytes to send
//
//   // The importing process (having received the fd, kind and pool id):
//   cucore::MemoryResource mr = cucore::ipc::import_memory_resource(dev, received);
//   cucore::Buffer same = cucore::ipc::import_buffer(mr, d, s);  // the same memory
//
// Ordering between the processes is the user's: record an event created with
// EventOptions::ipc_enabled after writing, export it (export_event), and make
// the other process's stream wait on the imported event before reading. The
// exporting process must not free a buffer before every importer released it.
#ifndef CUCORE_IPC_HPP
#define CUCORE_IPC_HPP

#include <array>
#include <cstdint>
#include <cstring>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

#include "common.hpp"
#include "ipc.h"
#include "device.hpp"
#include "event.hpp"
#include "buffer.hpp"
#include "memory_pool.hpp"
#include "memory_resource.hpp"
#include "stream.hpp"

namespace cucore {
namespace ipc {

// A pool's identifier, a buffer descriptor and an event descriptor: plain
// bytes, to be sent to the other process by any means.
using PoolId = std::array<std::uint8_t, CUCORE_IPC_POOL_ID_SIZE>;
using BufferDescriptor = std::array<std::uint8_t, CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE>;
using EventDescriptor = std::array<std::uint8_t, CUCORE_IPC_EVENT_DESCRIPTOR_SIZE>;

// An exported pool: a POSIX file descriptor this object owns (closed by the
// destructor), the pool's kind and its identifier. Move-only; empty (fd -1)
// when default-constructed or moved from.
class PoolHandle {
public:
    PoolHandle() noexcept { c_.fd = -1; }

    // Takes ownership of `handle.fd`.
    explicit PoolHandle(const cucore_ipc_pool_handle_t &handle) noexcept : c_(handle) {}

    // Takes ownership of `fd` (e.g. received from the exporting process) with
    // the kind and identifier that came with it.
    PoolHandle(int fd, cucore_memory_resource_kind_t kind, const PoolId &pool_id) noexcept {
        c_.fd = fd;
        c_.kind = static_cast<std::uint32_t>(kind);
        std::memcpy(c_.pool_id, pool_id.data(), pool_id.size());
    }

    PoolHandle(PoolHandle &&other) noexcept : c_(other.c_) { other.c_.fd = -1; }
    PoolHandle &operator=(PoolHandle &&other) noexcept {
        if (this != &other) {
            reset();
            c_ = other.c_;
            other.c_.fd = -1;
        }
        return *this;
    }
    PoolHandle(const PoolHandle &) = delete;
    PoolHandle &operator=(const PoolHandle &) = delete;
    ~PoolHandle() { reset(); }

    // The file descriptor (still owned by this object), or -1.
    int fd() const noexcept { return c_.fd; }
    cucore_memory_resource_kind_t kind() const noexcept {
        return static_cast<cucore_memory_resource_kind_t>(c_.kind);
    }
    PoolId pool_id() const noexcept {
        PoolId id{};
        std::memcpy(id.data(), c_.pool_id, id.size());
        return id;
    }
    // The C struct (its fd still owned by this object).
    const cucore_ipc_pool_handle_t &to_c() const noexcept { return c_; }

    // Gives up ownership of the file descriptor and returns it (the caller closes it).
    int release() noexcept {
        int fd = c_.fd;
        c_.fd = -1;
        return fd;
    }
    // Closes the file descriptor now (idempotent). Never throws.
    void reset() noexcept {
#if defined(__unix__) || defined(__APPLE__)
        if (c_.fd >= 0) (void)::close(c_.fd);
#endif
        c_.fd = -1;
    }
    explicit operator bool() const noexcept { return c_.fd >= 0; }

private:
    cucore_ipc_pool_handle_t c_{};
};

// Exports an IPC-enabled pool (cuMemPoolExportToShareableHandle). Throws
// Error: INVALID_HANDLE, NOT_SUPPORTED (not created with ipc_enabled, not
// Linux), CUDA.
inline PoolHandle export_memory_resource(const MemoryResource &resource) {
    cucore_ipc_pool_handle_t handle{};
    detail::check(cucore_ipc_export_memory_resource(resource.get(), &handle));
    return PoolHandle(handle);
}

// Imports a pool another process exported, on `device` (the same resource
// while one lives; kind CUCORE_MEMORY_RESOURCE_IMPORTED, it cannot allocate).
// The fd stays owned by `handle`. Throws Error: INVALID_HANDLE,
// INVALID_ARGUMENT (fd not open, bad kind), NOT_SUPPORTED, CUDA.
inline MemoryResource import_memory_resource(const Device &device, const PoolHandle &handle) {
    cucore_memory_resource_t *raw = nullptr;
    detail::check(cucore_ipc_import_memory_resource(device.get(), &handle.to_c(), &raw));
    return MemoryResource::adopt(raw);
}

// The identifier of an IPC-enabled or imported pool. Throws Error:
// INVALID_HANDLE, NOT_SUPPORTED.
inline PoolId pool_id(const MemoryResource &resource) {
    PoolId id{};
    detail::check(cucore_ipc_memory_resource_pool_id(resource.get(), id.data()));
    return id;
}

// The descriptor of a whole buffer of an IPC-enabled pool. Throws Error:
// INVALID_HANDLE, INVALID_ARGUMENT (a view, empty, not from an IPC-enabled
// pool), INVALID_STATE (closed), CUDA.
inline BufferDescriptor export_buffer(const Buffer &buffer) {
    BufferDescriptor d{};
    detail::check(cucore_ipc_export_buffer(buffer.get(), d.data()));
    return d;
}

// Maps the buffer of `descriptor` (`size` bytes at `bytes`, as received) into
// the imported pool `resource`; freed on `stream` when the last reference
// goes. A second import of a live buffer shares the first. Throws Error:
// INVALID_HANDLE, INVALID_ARGUMENT (wrong size, corrupted, another pool's, not
// an imported pool), CUDA.
inline Buffer import_buffer(const MemoryResource &resource, const std::uint8_t *bytes, std::uint64_t size,
                            const Stream &stream) {
    cucore_buffer_t *raw = nullptr;
    detail::check(cucore_ipc_import_buffer(resource.get(), bytes, size, stream.get(), &raw));
    return Buffer::adopt(raw);
}
inline Buffer import_buffer(const MemoryResource &resource, const BufferDescriptor &descriptor,
                            const Stream &stream) {
    return import_buffer(resource, descriptor.data(), descriptor.size(), stream);
}

// The descriptor of an event created with EventOptions::ipc_enabled. Throws
// Error: INVALID_HANDLE, INVALID_ARGUMENT (no interprocess flag), CUDA.
inline EventDescriptor export_event(const Event &event) {
    EventDescriptor d{};
    detail::check(cucore_ipc_export_event(event.get(), d.data()));
    return d;
}

// Opens an event another process exported, in `device`'s primary context
// (record, wait and synchronize as usual; no timing). Throws Error:
// INVALID_HANDLE, INVALID_ARGUMENT (wrong size, corrupted), CUDA.
inline Event import_event(const Device &device, const std::uint8_t *bytes, std::uint64_t size) {
    cucore_event_t *raw = nullptr;
    detail::check(cucore_ipc_import_event(device.get(), bytes, size, &raw));
    return Event::adopt(raw);
}
inline Event import_event(const Device &device, const EventDescriptor &descriptor) {
    return import_event(device, descriptor.data(), descriptor.size());
}

} // namespace ipc
} // namespace cucore

#endif // CUCORE_IPC_HPP
