// The release-path mechanism every object uses: destroying a driver object
// (in its context where it has one) with failures reported rather than lost.
#pragma once

#include <cuda.h>

#include "core/context.hpp"
#include "core/error.hpp"
#include "cucore/common.h"
#include "driver/driver.hpp"

namespace cucore::core {

// Runs `destroy(table)` (which returns the driver's CUresult), reporting any
// failure as a release error naming `entry_point` and `what`. Never throws.
template <class Destroy>
void release_reported(const char *entry_point, const char *what, Destroy destroy) noexcept {
    const driver::Table *api = driver::peek();
    CUresult result = api ? destroy(*api) : CUDA_ERROR_NOT_INITIALIZED;
    if (result != CUDA_SUCCESS) report_release_failure(result, entry_point, what);
}

// The same with `context` current for the call (deleters run in their owner's
// context), the caller's restored afterwards.
template <class Destroy>
void release_in_context(CUcontext context, const char *entry_point, const char *what, Destroy destroy) noexcept {
    ScopedContext bind(context, ScopedContext::NoThrow{});
    release_reported(entry_point, what, destroy);
}

}  // namespace cucore::core
