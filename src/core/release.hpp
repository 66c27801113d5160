// The release-path mechanism every object uses: destroying a driver object
// with failures reported rather than lost.
#pragma once

#include <cuda.h>

#include <string>

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

// Runs `release()` (which may throw core::Error) in a release path, reporting
// what it throws as a release error: "<what>: <message>". Never throws.
template <class Release>
void run_reported(const char *what, Release release) noexcept {
    try {
        release();
    } catch (const Error &error) {
        report_release_error(error.status(), error.cuda_result(), std::string(what) + ": " + error.what());
    } catch (...) {
        report_release_error(CUCORE_ERROR_INTERNAL, 0, std::string(what) + ": unexpected exception");
    }
}

}  // namespace cucore::core
