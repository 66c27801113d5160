// C ABI: programs.
#include "capi/capi.hpp"
#include "capi/text_out.hpp"
#include "core/program_options.hpp"

using namespace cucore;

namespace {
constexpr cucore_program_options_t kProgramDefaults = CUCORE_PROGRAM_OPTIONS_INIT;

// A deep copy of `o`, every field's value checked: switches, toggles, arrays, the arch's spelling. (Which
// options the code type's compiler takes is core's knowledge: core::check_options_apply.)
core::ProgramOptions read_program_options(const cucore_program_options_t &o) {
    core::ProgramOptions p;
    if (o.name) p.name = o.name;
    if (o.arch) p.arch = capi::check_arch(o.arch, "options.arch");
    if (o.std) p.std = o.std;
    p.defines = capi::string_list(o.defines, o.define_count, "options.defines");
    p.undefines = capi::string_list(o.undefines, o.undefine_count, "options.undefines");
    p.include_paths = capi::string_list(o.include_paths, o.include_path_count, "options.include_paths");
    p.pre_includes = capi::string_list(o.pre_includes, o.pre_include_count, "options.pre_includes");
    p.header_names = capi::string_list(o.header_names, o.header_count, "options.header_names");
    p.header_sources = capi::string_list(o.header_sources, o.header_count, "options.header_sources");
    p.debug = capi::check_switch(o.debug, "options.debug");
    p.lineinfo = capi::check_switch(o.lineinfo, "options.lineinfo");
    p.device_code_optimize = capi::check_toggle(o.device_code_optimize, "options.device_code_optimize");
    p.use_fast_math = capi::check_switch(o.use_fast_math, "options.use_fast_math");
    p.ftz = capi::check_toggle(o.ftz, "options.ftz");
    p.prec_sqrt = capi::check_toggle(o.prec_sqrt, "options.prec_sqrt");
    p.prec_div = capi::check_toggle(o.prec_div, "options.prec_div");
    p.fma = capi::check_toggle(o.fma, "options.fma");
    p.extra_device_vectorization =
        capi::check_switch(o.extra_device_vectorization, "options.extra_device_vectorization");
    p.max_register_count = o.max_register_count;
    p.relocatable_device_code = capi::check_switch(o.relocatable_device_code, "options.relocatable_device_code");
    p.extensible_whole_program = capi::check_switch(o.extensible_whole_program, "options.extensible_whole_program");
    p.link_time_optimization = capi::check_switch(o.link_time_optimization, "options.link_time_optimization");
    p.device_as_default_execution_space =
        capi::check_switch(o.device_as_default_execution_space, "options.device_as_default_execution_space");
    p.disable_warnings = capi::check_switch(o.disable_warnings, "options.disable_warnings");
    p.brief_diagnostics = capi::check_switch(o.brief_diagnostics, "options.brief_diagnostics");
    p.no_display_error_number = capi::check_switch(o.no_display_error_number, "options.no_display_error_number");
    p.diag_error = capi::number_list(o.diag_error, o.diag_error_count, "options.diag_error");
    p.diag_suppress = capi::number_list(o.diag_suppress, o.diag_suppress_count, "options.diag_suppress");
    p.diag_warn = capi::number_list(o.diag_warn, o.diag_warn_count, "options.diag_warn");
    p.pch = capi::check_switch(o.pch, "options.pch");
    if (o.create_pch) p.create_pch = o.create_pch;
    if (o.use_pch) p.use_pch = o.use_pch;
    if (o.pch_dir) p.pch_dir = o.pch_dir;
    p.ptxas_options = capi::string_list(o.ptxas_options, o.ptxas_option_count, "options.ptxas_options");
    p.extra_options = capi::string_list(o.extra_options, o.extra_option_count, "options.extra_options");

    return p;
}

}  // namespace

extern "C" {

cucore_status_t cucore_program_create(const void *code, size_t code_size, cucore_code_type_t code_type,
                                      const cucore_program_options_t *options, cucore_program_t **program) {
    return capi::guarded(__func__, [&] {
        cucore_program_t *&result = capi::out(program, "program");
        capi::require(code, "code");
        const cucore_code_type_t known = capi::check_enum(
            code_type,
            [](int32_t raw) { return raw == CUCORE_CODE_CXX || raw == CUCORE_CODE_PTX || raw == CUCORE_CODE_NVVM; },
            "code_type", "must be CUCORE_CODE_CXX, CUCORE_CODE_PTX or CUCORE_CODE_NVVM");
        core::ProgramOptions parsed =
            read_program_options(capi::read_options(options, kProgramDefaults, "options"));
        std::string text = code_size ? std::string(static_cast<const char *>(code), code_size)
                                     : std::string(static_cast<const char *>(code));  // NUL-terminated
        if (text.empty()) core::throw_invalid_argument("argument 'code' is empty");
        result = capi::give<cucore_program_t>(core::Program::create(std::move(text), known, std::move(parsed)));
    });
}

cucore_status_t cucore_program_compile(cucore_program_t *program, cucore_code_type_t target,
                                       const char *const *name_expressions, size_t name_expression_count,
                                       cucore_program_cache_t *cache, cucore_object_code_t **object_code) {
    return capi::guarded(__func__, [&] {
        cucore_object_code_t *&result = capi::out(object_code, "object_code");
        core::Program &object = capi::get(program, "program");
        core::ProgramCache *store = capi::get_optional(cache, "cache");
        std::vector<std::string> names = capi::string_list(name_expressions, name_expression_count, "name_expressions");
        const cucore_code_type_t known = capi::check_compile_target(target, "target");
        result = capi::give<cucore_object_code_t>(object.compile(known, names, store));
    });
}

cucore_status_t cucore_program_log(const cucore_program_t *program, char *buffer, size_t capacity, size_t *length) {
    return capi::guarded(__func__, [&] {
        capi::check_text_out(buffer, capacity, length);
        const core::Program &object = capi::get(program, "program");
        capi::text_out(object.log(), buffer, capacity, length);
    });
}

cucore_status_t cucore_program_pch_status(const cucore_program_t *program, cucore_pch_status_t *status) {
    return capi::guarded(__func__, [&] {
        cucore_pch_status_t &result = capi::out(status, "status");
        result = capi::get(program, "program").pch_status();
    });
}

cucore_status_t cucore_program_code_type(const cucore_program_t *program, cucore_code_type_t *code_type) {
    return capi::guarded(__func__, [&] {
        cucore_code_type_t &result = capi::out(code_type, "code_type");
        result = capi::get(program, "program").code_type();
    });
}

cucore_status_t cucore_program_backend(const cucore_program_t *program, cucore_compiler_backend_t *backend) {
    return capi::guarded(__func__, [&] {
        cucore_compiler_backend_t &result = capi::out(backend, "backend");
        result = capi::get(program, "program").backend();
    });
}

cucore_status_t cucore_program_arch(const cucore_program_t *program, const char **arch) {
    return capi::guarded(__func__, [&] {
        const char *&result = capi::out(arch, "arch");
        result = capi::get(program, "program").arch().c_str();
    });
}

cucore_status_t cucore_program_flags(const cucore_program_t *program, char *buffer, size_t capacity, size_t *length) {
    return capi::guarded(__func__, [&] {
        capi::check_text_out(buffer, capacity, length);
        const core::Program &object = capi::get(program, "program");
        capi::text_out(object.flags_text(), buffer, capacity, length);
    });
}

cucore_status_t cucore_compiler_version(cucore_compiler_backend_t backend, int *version) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(version, "version");
        const cucore_compiler_backend_t known = capi::check_enum_range(
            backend, CUCORE_BACKEND_NVRTC, CUCORE_BACKEND_NVJITLINK, "backend",
            "must be CUCORE_BACKEND_NVRTC, CUCORE_BACKEND_NVVM or CUCORE_BACKEND_NVJITLINK");
        result = core::compiler_version(known);
    });
}

}  // extern "C"
