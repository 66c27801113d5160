#include "core/error.hpp"

#include <atomic>
#include <mutex>

#include "core/diagnostics.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

cucore_status_t status_of(CUresult result) noexcept {
    switch (result) {
        case CUDA_SUCCESS: return CUCORE_SUCCESS;
        case CUDA_ERROR_OUT_OF_MEMORY: return CUCORE_ERROR_OUT_OF_MEMORY;
        case CUDA_ERROR_NO_DEVICE:
        case CUDA_ERROR_INVALID_DEVICE: return CUCORE_ERROR_NO_DEVICE;
        case CUDA_ERROR_NOT_READY: return CUCORE_ERROR_NOT_READY;
        case CUDA_ERROR_NOT_SUPPORTED: return CUCORE_ERROR_NOT_SUPPORTED;
        case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
        case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
        case CUDA_ERROR_STREAM_CAPTURE_MERGE:
        case CUDA_ERROR_STREAM_CAPTURE_UNMATCHED:
        case CUDA_ERROR_STREAM_CAPTURE_UNJOINED:
        case CUDA_ERROR_STREAM_CAPTURE_ISOLATION:
        case CUDA_ERROR_STREAM_CAPTURE_IMPLICIT:
        case CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD:
        case CUDA_ERROR_CAPTURED_EVENT: return CUCORE_ERROR_INVALID_STATE;
        default: return CUCORE_ERROR_CUDA;
    }
}

namespace {
// Why a call failed during a stream capture, in words (empty for other results).
const char *capture_hint(CUresult result) noexcept {
    switch (result) {
        case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
        case CUDA_ERROR_STREAM_CAPTURE_IMPLICIT:
            return " (the call is not allowed while a stream is being captured into a graph; the capture is "
                   "invalidated: end it to use the stream again)";
        case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
            return " (an earlier call that cannot be captured invalidated the capture; it has ended and the "
                   "stream is usable again)";
        case CUDA_ERROR_STREAM_CAPTURE_UNJOINED:
            return " (streams forked from the capture were not joined back before it ended)";
        case CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD:
            return " (a capture in thread-local mode must be ended by the thread that began it)";
        default: return "";
    }
}
}  // namespace

void throw_cuda(CUresult result, const char *entry_point) {
    throw Error(status_of(result),
                std::string(entry_point) + " failed: " + cuda_error_name(result) + capture_hint(result),
                static_cast<int>(result));
}

void throw_invalid_argument(const std::string &message) {
    throw Error(CUCORE_ERROR_INVALID_ARGUMENT, message);
}

void report_release_failure(CUresult result, const char *entry_point, const char *what) noexcept {
    try {
        report_release_error(status_of(result), static_cast<int>(result),
                             std::string(what) + ": " + entry_point + " failed: " + cuda_error_name(result));
    } catch (...) {
        report_release_error(CUCORE_ERROR_CUDA, static_cast<int>(result), "release failed");
    }
}

namespace {
std::atomic<uint64_t> g_release_errors{0};
std::mutex g_handler_mutex;
cucore_release_error_fn g_handler = nullptr;
void *g_handler_data = nullptr;
}  // namespace

void report_release_error(cucore_status_t status, int cuda_result, const std::string &message) noexcept {
    g_release_errors.fetch_add(1, std::memory_order_relaxed);
    cucore_release_error_fn handler;
    void *data;
    {
        std::lock_guard<std::mutex> lock(g_handler_mutex);
        handler = g_handler;
        data = g_handler_data;
    }
    if (handler) handler(status, cuda_result, message.c_str(), data);
}

uint64_t release_error_count() noexcept { return g_release_errors.load(std::memory_order_relaxed); }

void set_release_error_handler(cucore_release_error_fn handler, void *user_data) noexcept {
    std::lock_guard<std::mutex> lock(g_handler_mutex);
    g_handler = handler;
    g_handler_data = user_data;
}

LastError &last_error() noexcept {
    thread_local LastError error;
    return error;
}

cucore_status_t set_last_error(const char *function, cucore_status_t status, const char *message,
                               int cuda_result) noexcept {
    LastError &error = last_error();
    error.status = status;
    error.cuda_result = cuda_result;
    try {
        error.message.assign(function);
        error.message += ": ";
        error.message += message;
    } catch (...) {
        error.message.clear();  // out of memory while reporting: keep the status
    }
    return status;
}

}  // namespace cucore::core
