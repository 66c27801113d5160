// The one function table through which libcucore calls the CUDA driver.
//
// The real table is filled on first use: libcuda.so.1 is opened, cuInit(0) is
// called, and every entry point of entry_points.hpp is resolved through
// cuGetProcAddress for its ABI version. A missing entry point stays null and is
// reported as CUCORE_ERROR_NOT_SUPPORTED when used. Tests may install a
// substitute table (fault injection, a driver-less fake); that is the only seam.
#pragma once

#include <cuda.h>
#include <atomic>
#include <cudaTypedefs.h>

#include "driver/entry_points.hpp"

namespace cucore::driver {

// Function pointers, one per entry point, of the exact ABI requested.
struct Table {
#define CUCORE_DRIVER_FIELD(name, version) PFN_##name##_v##version name = nullptr;
    CUCORE_DRIVER_ENTRY_POINTS(CUCORE_DRIVER_FIELD)
#undef CUCORE_DRIVER_FIELD
};

struct State {
    const Table *table = nullptr;
    CUresult init_result = CUDA_SUCCESS;  // what cuInit(0) answered
};

namespace detail {
extern std::atomic<const State *> active;  // null until loaded or substituted
const State *load_or_throw();              // slow path: loads, or throws NO_DRIVER
[[noreturn]] void throw_missing(const char *entry_point);
}  // namespace detail

// The active driver state; throws driver::Error(CUCORE_ERROR_NO_DRIVER) when the
// driver cannot be loaded or initialised.
inline const State &state() {
    const State *s = detail::active.load(std::memory_order_acquire);
    return __builtin_expect(s != nullptr, 1) ? *s : *detail::load_or_throw();
}

inline const Table &api() { return *state().table; }

// Returns `fn`, or throws CUCORE_ERROR_NOT_SUPPORTED naming the entry point.
template <typename Fn>
inline Fn require(Fn fn, const char *entry_point) {
    if (__builtin_expect(fn == nullptr, 0)) detail::throw_missing(entry_point);
    return fn;
}

// Installs a substitute table (nullptr restores the real driver on next use).
// cuInit of the substitute is called at once (if present). The table must
// outlive its installation. Not for use while other threads call the library.
void install_substitute(const Table *table);

// The table of the real driver without installing it, or nullptr if it cannot
// be loaded (tests build substitutes that forward to it). Never throws.
const Table *real_table() noexcept;

// Where the driver was loaded from ("" for a substitute), for messages.
const char *loaded_from() noexcept;

// The active table if one is already loaded, else nullptr; never loads and
// never throws (used by release paths and error-name lookups).
const Table *peek() noexcept;

}  // namespace cucore::driver

// Calls driver entry point `name` through the active table.
#define CUCORE_DRIVER(name) (::cucore::driver::require(::cucore::driver::api().name, #name))
