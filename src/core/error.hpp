// The one error path: core code throws core::Error; the C ABI layer catches it
// and stores it as the thread's last error. Release paths, which cannot throw,
// report through report_release_error().
#pragma once

#include <cuda.h>

#include <exception>
#include <string>

#include "cucore/common.h"

namespace cucore::core {

class Error : public std::exception {
  public:
    Error(cucore_status_t status, std::string message, int cuda_result = 0)
        : status_(status), cuda_result_(cuda_result), message_(std::move(message)) {}
    cucore_status_t status() const noexcept { return status_; }
    int cuda_result() const noexcept { return cuda_result_; }
    const char *what() const noexcept override { return message_.c_str(); }

  private:
    cucore_status_t status_;
    int cuda_result_;
    std::string message_;
};

// "CUDA_ERROR_X (description)" through the driver when loaded, else the number.
std::string cuda_error_name(int result) noexcept;

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
