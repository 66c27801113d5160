// C ABI: version, status strings, last error, diagnostics.
#include "capi/capi.hpp"
#include "core/graph_attachments.hpp"

using namespace cucore;

extern "C" {

uint32_t cucore_version(void) { return CUCORE_VERSION; }

const char *cucore_version_string(void) {
#define CUCORE_STR2(x) #x
#define CUCORE_STR(x) CUCORE_STR2(x)
    return CUCORE_STR(CUCORE_VERSION_MAJOR) "." CUCORE_STR(CUCORE_VERSION_MINOR) "." CUCORE_STR(CUCORE_VERSION_PATCH);
}

const char *cucore_status_string(cucore_status_t status) {
    switch (core::enum_value(status)) {
        case CUCORE_SUCCESS: return "CUCORE_SUCCESS";
        case CUCORE_ERROR_INVALID_ARGUMENT: return "CUCORE_ERROR_INVALID_ARGUMENT";
        case CUCORE_ERROR_INVALID_HANDLE: return "CUCORE_ERROR_INVALID_HANDLE";
        case CUCORE_ERROR_INVALID_STATE: return "CUCORE_ERROR_INVALID_STATE";
        case CUCORE_ERROR_NO_DRIVER: return "CUCORE_ERROR_NO_DRIVER";
        case CUCORE_ERROR_NO_DEVICE: return "CUCORE_ERROR_NO_DEVICE";
        case CUCORE_ERROR_NOT_SUPPORTED: return "CUCORE_ERROR_NOT_SUPPORTED";
        case CUCORE_ERROR_OUT_OF_MEMORY: return "CUCORE_ERROR_OUT_OF_MEMORY";
        case CUCORE_ERROR_CUDA: return "CUCORE_ERROR_CUDA";
        case CUCORE_ERROR_NOT_READY: return "CUCORE_ERROR_NOT_READY";
        case CUCORE_ERROR_INTERNAL: return "CUCORE_ERROR_INTERNAL";
        case CUCORE_ERROR_COMPILATION: return "CUCORE_ERROR_COMPILATION";
        default: return "CUCORE_STATUS_UNKNOWN";
    }
}

const char *cucore_last_error_message(void) { return core::last_error().message.c_str(); }

int cucore_last_cuda_result(void) { return core::last_error().cuda_result; }

cucore_status_t cucore_last_error_status(void) { return core::last_error().status; }

void cucore_clear_last_error(void) {
    core::LastError &error = core::last_error();
    error.status = CUCORE_SUCCESS;
    error.cuda_result = 0;
    error.message.clear();
}

const char *cucore_object_type_name(cucore_object_type_t type) { return core::object_type_name(type); }

cucore_status_t cucore_live_object_count(cucore_object_type_t type, size_t *count) {
    return capi::guarded(__func__, [&] {
        size_t &result = capi::out(count, "count");
        const cucore_object_type_t known = capi::check_enum_range(type, CUCORE_OBJECT_ANY, CUCORE_OBJECT_TYPE_COUNT - 1,
                                                                  "type", "is not a cucore_object_type_t");
        core::drain_graph_releases();  // what graphs the driver let go of is released first
        result = core::live_object_count(known);
    });
}

cucore_status_t cucore_release_error_count(uint64_t *count) {
    return capi::guarded(__func__, [&] { capi::out(count, "count") = core::release_error_count(); });
}

void cucore_set_release_error_handler(cucore_release_error_fn handler, void *user_data) {
    core::set_release_error_handler(handler, user_data);
}

void cucore_report_release_error(cucore_status_t status, int cuda_result, const char *message) {
    // A value that names no status is reported as INTERNAL (read as an int first: any int may come from C).
    const int32_t raw = core::enum_value(status);
    const cucore_status_t known = raw >= CUCORE_SUCCESS && raw <= CUCORE_ERROR_COMPILATION
                                      ? static_cast<cucore_status_t>(raw)
                                      : CUCORE_ERROR_INTERNAL;
    try {
        core::report_release_error(known, cuda_result, message ? message : "");
    } catch (...) {  // the message could not be copied: count the failure without it
        core::report_release_error(known, cuda_result, std::string());
    }
}

}  // extern "C"
