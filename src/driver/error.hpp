// The one error type of libcucore. It lives in the bottom layer so that the
// loaders (driver and compilers) can throw it without depending on anything
// above them; core throws the same type (core::Error names it) and the C ABI's
// guarded() catches it at the boundary. One type, one path.
#pragma once

#include <exception>
#include <string>

#include "cucore/common.h"

namespace cucore::driver {

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

// "CUDA_ERROR_X (description)" through the loaded driver's cuGetErrorName and
// cuGetErrorString, else "CUDA error <number>" (no driver loaded yet).
std::string cuda_error_name(int result) noexcept;

}  // namespace cucore::driver
