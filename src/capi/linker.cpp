// C ABI: the linker.
#include "capi/capi.hpp"
#include "capi/text_out.hpp"

using namespace cucore;

namespace {
constexpr cucore_linker_options_t kLinkerDefaults = CUCORE_LINKER_OPTIONS_INIT;

// A deep copy of `o`, every field checked (switches, toggles, optimisation level, backend, arrays, arch).
core::LinkerOptions read_linker_options(const cucore_linker_options_t &o) {
    core::LinkerOptions l;
    if (o.name) l.name = o.name;
    if (o.arch) l.arch = capi::check_arch(o.arch, "options.arch");
    l.backend = capi::check_enum(
        o.backend,
        [](int32_t raw) {
            return raw == CUCORE_BACKEND_DEFAULT || raw == CUCORE_BACKEND_NVJITLINK || raw == CUCORE_BACKEND_DRIVER;
        },
        "options.backend", "must be CUCORE_BACKEND_DEFAULT, CUCORE_BACKEND_NVJITLINK or CUCORE_BACKEND_DRIVER");
    l.max_register_count = o.max_register_count;
    if (o.optimization_level > CUCORE_OPTIMIZATION_LEVEL(3))
        core::throw_invalid_argument(
            "argument 'options.optimization_level' must be 0 or CUCORE_OPTIMIZATION_LEVEL(0..3)");
    l.optimization_level = o.optimization_level;
    l.debug = capi::check_switch(o.debug, "options.debug");
    l.lineinfo = capi::check_switch(o.lineinfo, "options.lineinfo");
    l.link_time_optimization = capi::check_switch(o.link_time_optimization, "options.link_time_optimization");
    l.verbose = capi::check_switch(o.verbose, "options.verbose");
    l.ftz = capi::check_toggle(o.ftz, "options.ftz");
    l.prec_div = capi::check_toggle(o.prec_div, "options.prec_div");
    l.prec_sqrt = capi::check_toggle(o.prec_sqrt, "options.prec_sqrt");
    l.fma = capi::check_toggle(o.fma, "options.fma");
    l.ptxas_options = capi::string_list(o.ptxas_options, o.ptxas_option_count, "options.ptxas_options");
    l.extra_options = capi::string_list(o.extra_options, o.extra_option_count, "options.extra_options");
    return l;
}

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
        core::LinkerOptions parsed = read_linker_options(capi::read_options(options, kLinkerDefaults, "options"));
        result = capi::give<cucore_linker_t>(core::Linker::create(std::move(codes), std::move(parsed)));
    });
}

cucore_status_t cucore_linker_link(cucore_linker_t *linker, cucore_code_type_t target,
                                   cucore_object_code_t **object_code) {
    return capi::guarded(__func__, [&] {
        cucore_object_code_t *&result = capi::out(object_code, "object_code");
        core::Linker &object = capi::get(linker, "linker");
        const cucore_code_type_t known = capi::check_enum(
            target, [](int32_t raw) { return raw == CUCORE_CODE_CUBIN || raw == CUCORE_CODE_PTX; }, "target",
            "must be CUCORE_CODE_CUBIN or CUCORE_CODE_PTX");
        result = capi::give<cucore_object_code_t>(object.link(known));
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
