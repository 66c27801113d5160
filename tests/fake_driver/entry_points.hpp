// The fake's implementation of every entry point of src/driver/entry_points.hpp,
// declared from the driver's own PFN typedefs, so a signature that drifts from
// the ABI libcucore asks for does not link.
#pragma once

#include <type_traits>

#include "driver/driver.hpp"

namespace fake::detail {

#define FAKE_DECLARE_ENTRY_POINT(name, version) std::remove_pointer_t<PFN_##name##_v##version> f_##name;
CUCORE_DRIVER_ENTRY_POINTS(FAKE_DECLARE_ENTRY_POINT)
#undef FAKE_DECLARE_ENTRY_POINT

// Entry points libcucore never asks for, which the tests' raw-driver helpers
// call by their exported names (shared_library.cpp).
CUresult f_cuMemAlloc(CUdeviceptr *address, size_t size);

}  // namespace fake::detail
