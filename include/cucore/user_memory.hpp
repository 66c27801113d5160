// libcucore C++ façade: memory resources whose memory comes from the user
// (over cucore/user_memory.h).
//
//   struct Arena : cucore::UserMemoryResource {
//       std::uint64_t allocate(std::uint64_t size, const cucore::Stream &) override { ... }
//       void deallocate(std::uint64_t address, std::uint64_t size, const cucore::Stream &) override { ... }
//   };
//   auto arena = std::make_shared<Arena>();
//   cucore::MemoryResource mr = cucore::MemoryResource::user(arena, {/*device_id=*/0, true, false, false});
//   cucore::Buffer b = mr.allocate(4096, stream);  // arena->allocate(4096, stream)
//
// The object is kept alive (one shared_ptr reference) until the library
// destroys the resource, which happens after the resource and every buffer
// from it were released; a factory that throws drops that reference at once.
// The factories are members of MemoryResource (memory_resource.hpp), defined
// here.
#ifndef CUCORE_USER_MEMORY_HPP
#define CUCORE_USER_MEMORY_HPP

#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <utility>

#include "common.hpp"
#include "memory_resource.hpp"
#include "stream.hpp"
#include "user_memory.h"

namespace cucore {

// What a user resource's memory is (cuda.core: MemoryResource.device_id,
// is_device_accessible, is_host_accessible, is_managed).
struct UserMemoryTraits {
    int device_id = -1; // -1: host memory
    bool device_accessible = false;
    bool host_accessible = false;
    bool managed = false;
};

// A user-defined allocator (cuda.core: a MemoryResource subclass). The library
// may call it from any thread, so it must be thread-safe.
class UserMemoryResource {
public:
    virtual ~UserMemoryResource() = default;

    // Returns the address of `size` (> 0) new bytes, ordered on `stream` (empty
    // when the caller allocated without one; the Stream is valid for the call
    // only). A thrown cucore::Error's status becomes the allocating call's
    // (e.g. OUT_OF_MEMORY); std::bad_alloc is OUT_OF_MEMORY; anything else
    // INTERNAL.
    virtual std::uint64_t allocate(std::uint64_t size, const Stream &stream) = 0;

    // Frees what allocate() gave. A failure is reported by throwing: the
    // exception becomes the C callback's error status (as for allocate), which
    // the library counts and passes to the release error handler (see
    // release_error_count() and cucore_set_release_error_handler()); the
    // exception's own message does not cross the C ABI. It is never retried.
    virtual void deallocate(std::uint64_t address, std::uint64_t size, const Stream &stream) = 0;
};

namespace detail {

// The C callbacks' user_data: one reference to the user's object.
struct UserResourceBox {
    std::shared_ptr<UserMemoryResource> impl;
};

// The borrowed C stream as a Stream for the duration of a callback (empty for
// NULL). The retain cannot fail on a live handle, which the library promises.
inline Stream borrowed_stream(cucore_stream_t *stream) {
    return stream != nullptr ? Stream::borrow(stream) : Stream();
}

// The status an exception from a user callback becomes (none may cross into C):
// cucore::Error's own, bad_alloc OUT_OF_MEMORY, anything else INTERNAL. Call
// inside a catch block.
inline cucore_status_t status_of_current_exception() noexcept {
    try {
        throw;
    } catch (const Error &e) {
        return e.status() != CUCORE_SUCCESS ? e.status() : CUCORE_ERROR_INTERNAL;
    } catch (const std::bad_alloc &) {
        return CUCORE_ERROR_OUT_OF_MEMORY;
    } catch (...) {
        return CUCORE_ERROR_INTERNAL;
    }
}

inline cucore_status_t user_allocate(void *user_data, std::uint64_t size, cucore_stream_t *stream,
                                     std::uint64_t *address) noexcept {
    try {
        const Stream s = borrowed_stream(stream);
        *address = static_cast<UserResourceBox *>(user_data)->impl->allocate(size, s);
        return CUCORE_SUCCESS;
    } catch (...) {
        return status_of_current_exception();
    }
}

inline cucore_status_t user_deallocate(void *user_data, std::uint64_t address, std::uint64_t size,
                                       cucore_stream_t *stream) noexcept {
    try {
        const Stream s = borrowed_stream(stream);
        static_cast<UserResourceBox *>(user_data)->impl->deallocate(address, size, s);
        return CUCORE_SUCCESS;
    } catch (...) {
        return status_of_current_exception();  // the library reports it as a release error
    }
}

inline void user_destroy(void *user_data) noexcept { delete static_cast<UserResourceBox *>(user_data); }

// A UserMemoryResource made of two callables.
class FunctionMemoryResource final : public UserMemoryResource {
public:
    FunctionMemoryResource(std::function<std::uint64_t(std::uint64_t, const Stream &)> allocate,
                           std::function<void(std::uint64_t, std::uint64_t, const Stream &)> deallocate)
        : allocate_(std::move(allocate)), deallocate_(std::move(deallocate)) {}
    std::uint64_t allocate(std::uint64_t size, const Stream &stream) override { return allocate_(size, stream); }
    void deallocate(std::uint64_t address, std::uint64_t size, const Stream &stream) override {
        deallocate_(address, size, stream);
    }

private:
    std::function<std::uint64_t(std::uint64_t, const Stream &)> allocate_;
    std::function<void(std::uint64_t, std::uint64_t, const Stream &)> deallocate_;
};

} // namespace detail

// A resource whose memory comes from `impl`, kept alive until the resource and
// every buffer from it are gone. Throws Error: INVALID_ARGUMENT (empty `impl`,
// device_id below -1), std::bad_alloc.
inline MemoryResource MemoryResource::user(std::shared_ptr<UserMemoryResource> impl, const UserMemoryTraits &traits) {
    if (!impl) throw Error(CUCORE_ERROR_INVALID_ARGUMENT, 0, "cucore::MemoryResource::user: 'impl' is empty");
    std::unique_ptr<detail::UserResourceBox> box(new detail::UserResourceBox{std::move(impl)});
    cucore_memory_resource_callbacks_t c{};
    c.struct_size = static_cast<std::uint32_t>(sizeof c);
    c.allocate = &detail::user_allocate;
    c.deallocate = &detail::user_deallocate;
    c.destroy = &detail::user_destroy;
    c.user_data = box.get();
    c.device_id = traits.device_id;
    c.device_accessible = traits.device_accessible ? 1u : 0u;
    c.host_accessible = traits.host_accessible ? 1u : 0u;
    c.managed = traits.managed ? 1u : 0u;
    cucore_memory_resource_t *raw = nullptr;
    detail::check(cucore_user_memory_resource_create(&c, &raw)); // on failure the box is ours to free
    (void)box.release();                                          // the library's destroy frees it now
    return adopt(raw);
}

// The same from two callables: allocate(size, stream) -> address and
// deallocate(address, size, stream); see UserMemoryResource for their rules.
inline MemoryResource MemoryResource::user(std::function<std::uint64_t(std::uint64_t, const Stream &)> allocate,
                                           std::function<void(std::uint64_t, std::uint64_t, const Stream &)> deallocate,
                                           const UserMemoryTraits &traits) {
    if (!allocate || !deallocate)
        throw Error(CUCORE_ERROR_INVALID_ARGUMENT, 0,
                    "cucore::MemoryResource::user: 'allocate' and 'deallocate' must both be callable");
    return user(std::make_shared<detail::FunctionMemoryResource>(std::move(allocate), std::move(deallocate)), traits);
}

// A resource over the C callbacks as they are (copied; `destroy` runs when
// the last reference goes, never if this throws). Throws Error:
// INVALID_ARGUMENT (missing allocate/deallocate, bad struct).
inline MemoryResource MemoryResource::user(const cucore_memory_resource_callbacks_t &callbacks) {
    cucore_memory_resource_t *raw = nullptr;
    detail::check(cucore_user_memory_resource_create(&callbacks, &raw));
    return adopt(raw);
}

} // namespace cucore

#endif // CUCORE_USER_MEMORY_HPP
