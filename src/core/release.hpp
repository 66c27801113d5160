// The release-path mechanism every object uses: destroying a driver object
// with failures reported rather than lost.
#pragma once

#include <cuda.h>

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

}  // namespace cucore::core
