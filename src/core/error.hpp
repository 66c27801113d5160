// The one error path: core code throws core::Error (the type of
// driver/error.hpp); the C ABI layer catches it and stores it as the thread's
// last error. Release paths, which cannot throw, report through
// report_release_error().
#pragma once

#include <cuda.h>

#include <string>

#include "cucore/common.h"
#include "driver/error.hpp"

namespace cucore::core {

// The error type is the bottom layer's (driver/error.hpp): the loaders throw it
// too, so there is one type for guarded() to catch.
using driver::Error;
using driver::cuda_error_name;

// The status a driver result maps to (OUT_OF_MEMORY, NO_DEVICE, NOT_READY,
// NOT_SUPPORTED, or CUDA for everything else).
cucore_status_t status_of(CUresult result) noexcept;

// Throws the error for a failed driver call: "<entry point> failed: <name>".
[[noreturn]] void throw_cuda(CUresult result, const char *entry_point);

inline void check(CUresult result, const char *entry_point) {
    if (__builtin_expect(result != CUDA_SUCCESS, 0)) throw_cuda(result, entry_point);
}

// Throws CUCORE_ERROR_INVALID_ARGUMENT with `message`.
[[noreturn]] void throw_invalid_argument(const std::string &message);

// Records a failure that happened where it cannot be returned (destructors,
// deleters, owner callbacks): counted, and passed to the user's handler.
void report_release_error(cucore_status_t status, int cuda_result, const std::string &message) noexcept;
// Same for a failed driver call in a release path.
void report_release_failure(CUresult result, const char *entry_point, const char *what) noexcept;

// Thread-local last error, exposed by the C ABI.
struct LastError {
    cucore_status_t status = CUCORE_SUCCESS;
    int cuda_result = 0;
    std::string message;
};
LastError &last_error() noexcept;
// Stores `function: message` as this thread's last error; returns status.
cucore_status_t set_last_error(const char *function, cucore_status_t status, const char *message,
                               int cuda_result) noexcept;

}  // namespace cucore::core

// Calls a driver entry point and throws core::Error if it fails.
#define CUCORE_CALL(name, ...) ::cucore::core::check(CUCORE_DRIVER(name)(__VA_ARGS__), #name)
