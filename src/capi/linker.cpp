// C ABI: the linker.
#include "capi/capi.hpp"
#include "capi/text_out.hpp"

using namespace cucore;

namespace {
constexpr cucore_linker_options_t kLinkerDefaults = CUCORE_LINKER_OPTIONS_INIT;
}  // namespace

extern "C" {

cucore_status_t cucore_linker_create(cucore_object_code_t *const *inputs, size_t input_count,
                                     const cucore_linker_options_t *options, cucore_linker_t **linker) {
    return capi::guarded(__func__, [&] {
        cucore_linker_t *&result = capi::out(linker, "linker");
        capi::require(inputs, "inputs");
        if (input_count == 0) core::throw_invalid_argument("argument 'input_count' is 0: a linker needs at least one input");
        std::vector<core::Ref<core::ObjectCode>> codes;
        for (core::ObjectCode *code : capi::get_all(inputs, input_count, "inputs")) codes.emplace_back(code);
        core::LinkerOptions parsed = core::read_linker_options(capi::read_options(options, kLinkerDefaults, "options"));
        result = capi::give<cucore_linker_t>(core::Linker::create(std::move(codes), std::move(parsed)));
    });
}



cucore_status_t cucore_linker_link(cucore_linker_t *linker, cucore_code_type_t target,
                                   cucore_object_code_t **object_code) {
    return capi::guarded(__func__, [&] {
        cucore_object_code_t *&result = capi::out(object_code, "object_code");
        result = capi::give<cucore_object_code_t>(capi::get(linker, "linker").link(target));
    });
}

cucore_status_t cucore_linker_error_log(const cucore_linker_t *linker, char *buffer, size_t capacity, size_t *length) {
    return capi::guarded(__func__, [&] {
        capi::check_text_out(buffer, capacity, length);
        capi::text_out(capi::get(linker, "linker").error_log(), buffer, capacity, length);
    });
}

cucore_status_t cucore_linker_info_log(const cucore_linker_t *linker, char *buffer, size_t capacity, size_t *length) {
    return capi::guarded(__func__, [&] {
        capi::check_text_out(buffer, capacity, length);
        capi::text_out(capi::get(linker, "linker").info_log(), buffer, capacity, length);
    });
}

cucore_status_t cucore_linker_backend(const cucore_linker_t *linker, cucore_compiler_backend_t *backend) {
    return capi::guarded(__func__, [&] {
        cucore_compiler_backend_t &result = capi::out(backend, "backend");
        result = capi::get(linker, "linker").backend();
    });
}

cucore_status_t cucore_linker_default_backend(cucore_compiler_backend_t *backend) {
    return capi::guarded(__func__, [&] {
        cucore_compiler_backend_t &result = capi::out(backend, "backend");
        result = core::Linker::default_backend();
    });
}

}  // extern "C"
