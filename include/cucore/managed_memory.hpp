// libcucore C++ façade: managed (unified) memory (over cucore/managed_memory.h).
//
//   cucore::MemoryResource mr = cucore::MemoryResource::managed(dev);
//   cucore::Buffer buf = mr.allocate(1 << 20);                 // synchronous
//   buf.set_read_mostly(true);
//   buf.prefetch(cucore::Location::device(dev), s);
//
// Managed memory resources [ManagedMemoryResource] with their options, and the
// members of Buffer (buffer.hpp) that managed buffers take [ManagedBuffer]:
// advice, prefetches and discards.
#ifndef CUCORE_MANAGED_MEMORY_HPP
#define CUCORE_MANAGED_MEMORY_HPP

#include <cstdint>

#include "buffer.hpp"
#include "common.hpp"
#include "device.hpp"
#include "managed_memory.h"
#include "memory_resource.hpp"
#include "stream.hpp"

namespace cucore {

namespace detail {
// The C defaults, so the options struct below defaults to exactly the *_INIT
// macro (one source of truth).
inline constexpr cucore_managed_memory_resource_options_t kManagedMemoryResourceDefaults =
    CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
} // namespace detail

// The options of a managed memory resource (MemoryResource::managed; cuda.core:
// ManagedMemoryResourceOptions). By default the memory comes from
// cuMemAllocManaged (synchronous: allocate with or without a stream), where
// every advice works; use_pool asks for a managed memory pool as cuda.core's
// ManagedMemoryResource is (stream-ordered, CUDA 13 drivers), on whose memory
// drivers may refuse advice (an H100 with driver 580 answers NOT_SUPPORTED).
struct ManagedMemoryResourceOptions {
    // A managed memory pool (true) or cuMemAllocManaged (false, the default).
    bool use_pool = detail::kManagedMemoryResourceDefaults.use_pool != 0;
    // The preferred location of the memory (the pool's, or advised for each
    // allocation): none, a device, the host or a NUMA node.
    Location preferred_location = Location::from_c(detail::kManagedMemoryResourceDefaults.preferred_location);
    // Pools only (INVALID_ARGUMENT without use_pool).
    std::uint64_t max_size = detail::kManagedMemoryResourceDefaults.max_size;                  // 0: no limit
    std::uint64_t release_threshold = detail::kManagedMemoryResourceDefaults.release_threshold; // 0: driver default

    cucore_managed_memory_resource_options_t to_c() const noexcept {
        cucore_managed_memory_resource_options_t o = detail::kManagedMemoryResourceDefaults;
        o.use_pool = use_pool ? 1u : 0u;
        o.preferred_location = preferred_location.to_c();
        o.max_size = max_size;
        o.release_threshold = release_threshold;
        return o;
    }
};

// Managed memory of `device`, whose buffers take advice, prefetches and
// discards: from cuMemAllocManaged (synchronous; the default) or, with
// options.use_pool, a new stream-ordered pool on `device`'s streams.
// Throws Error: INVALID_HANDLE, INVALID_ARGUMENT (max_size or
// release_threshold without use_pool), NOT_SUPPORTED (no managed memory;
// a pool with a driver before CUDA 13), CUDA.
// The resource of the driver's current managed memory pool (cuMemGetMemPool,
// CUDA 13; no preferred location), not owned, allocating in stream order on
// `device`'s streams. Throws Error: INVALID_HANDLE, NOT_SUPPORTED, CUDA.
inline MemoryResource MemoryResource::managed_default(const Device &device) {
    cucore_memory_resource_t *raw = nullptr;
    detail::check(cucore_managed_memory_resource_get_default(device.get(), &raw));
    return adopt(raw);
}

inline MemoryResource MemoryResource::managed(const Device &device, const ManagedMemoryResourceOptions &options) {
    const cucore_managed_memory_resource_options_t o = options.to_c();
    cucore_memory_resource_t *raw = nullptr;
    detail::check(cucore_managed_memory_resource_create(device.get(), &o, &raw));
    return adopt(raw);
}

inline MemoryResource MemoryResource::managed(const Device &device) {
    return managed(device, ManagedMemoryResourceOptions{});
}

// ---- Managed buffers (cuda.core: ManagedBuffer) ----
// Each throws Error: INVALID_HANDLE, INVALID_ARGUMENT (not managed memory,
// a bad location), INVALID_STATE (closed), CUDA.

// Gives the driver advice (cuMemAdvise); `location` is ignored by the
// read-mostly advice.
inline void Buffer::advise(cucore_memory_advice_t advice, const Location &location) const {
    detail::check(cucore_buffer_advise(handle_, advice, location.to_c()));
}

// Whether the read-mostly advice is set / sets or clears it.
inline bool Buffer::read_mostly() const {
    int on = 0;
    detail::check(cucore_buffer_advice(handle_, &on, nullptr));
    return on != 0;
}
inline void Buffer::set_read_mostly(bool on) const {
    advise(on ? CUCORE_ADVICE_SET_READ_MOSTLY : CUCORE_ADVICE_UNSET_READ_MOSTLY);
}

// The preferred location (Location::none() when there is none) / sets it;
// Location::none() unsets it.
inline Location Buffer::preferred_location() const {
    cucore_location_t where{CUCORE_LOCATION_NONE, 0};
    detail::check(cucore_buffer_advice(handle_, nullptr, &where));
    return Location::from_c(where);
}
inline void Buffer::set_preferred_location(const Location &location) const {
    if (location.is_none())
        advise(CUCORE_ADVICE_UNSET_PREFERRED_LOCATION);
    else
        advise(CUCORE_ADVICE_SET_PREFERRED_LOCATION, location);
}

// The accessed-by advice for `location` (a device): query, set, clear.
inline bool Buffer::is_accessed_by(const Location &location) const {
    int yes = 0;
    detail::check(cucore_buffer_is_accessed_by(handle_, location.to_c(), &yes));
    return yes != 0;
}
inline void Buffer::add_accessed_by(const Location &location) const { advise(CUCORE_ADVICE_SET_ACCESSED_BY, location); }
inline void Buffer::remove_accessed_by(const Location &location) const {
    advise(CUCORE_ADVICE_UNSET_ACCESSED_BY, location);
}

// Where the memory was last prefetched to (none if never, or not all in one place).
inline Location Buffer::last_prefetch_location() const {
    cucore_location_t where{CUCORE_LOCATION_NONE, 0};
    detail::check(cucore_buffer_last_prefetch_location(handle_, &where));
    return Location::from_c(where);
}

// Migrates the memory to `location`, ordered on `stream`.
inline void Buffer::prefetch(const Location &location, const Stream &stream) const {
    detail::check(cucore_buffer_prefetch(handle_, location.to_c(), stream.get()));
}

// Drops the contents (reading before writing gives unspecified values),
// ordered on `stream`; discard_prefetch then makes the pages resident at
// `location`. Also NOT_SUPPORTED (driver before CUDA 13).
inline void Buffer::discard(const Stream &stream) const {
    detail::check(cucore_buffer_discard(handle_, nullptr, stream.get()));
}

inline void Buffer::discard_prefetch(const Location &location, const Stream &stream) const {
    const cucore_location_t where = location.to_c();
    detail::check(cucore_buffer_discard(handle_, &where, stream.get()));
}

} // namespace cucore

#endif // CUCORE_MANAGED_MEMORY_HPP
