// C ABI: programs.
#include "capi/capi.hpp"
#include "capi/text_out.hpp"

using namespace cucore;

namespace {
constexpr cucore_program_options_t kProgramDefaults = CUCORE_PROGRAM_OPTIONS_INIT;
}  // namespace

extern "C" {

cucore_status_t cucore_program_create(const void *code, size_t code_size, cucore_code_type_t code_type,
                                      const cucore_program_options_t *options, cucore_program_t **program) {
    return capi::guarded(__func__, [&] {
        cucore_program_t *&result = capi::out(program, "program");
        capi::require(code, "code");
        cucore_program_options_t resolved = capi::read_options(options, kProgramDefaults, "options");
        result = capi::give<cucore_program_t>(core::Program::create(code, code_size, code_type, resolved));
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
        result = capi::give<cucore_object_code_t>(object.compile(target, names, store));
    });
}

cucore_status_t cucore_program_log(const cucore_program_t *program, char *buffer, size_t capacity, size_t *length) {
    return capi::guarded(__func__, [&] {
        capi::check_text_out(buffer, capacity, length);
        const core::Program &object = capi::get(program, "program");
        capi::text_out(object.log(), buffer, capacity, length);
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
        if (backend != CUCORE_BACKEND_NVRTC && backend != CUCORE_BACKEND_NVVM && backend != CUCORE_BACKEND_NVJITLINK)
            core::throw_invalid_argument("argument 'backend' must be CUCORE_BACKEND_NVRTC, CUCORE_BACKEND_NVVM or "
                                         "CUCORE_BACKEND_NVJITLINK");
        result = core::compiler_version(backend);
    });
}

}  // extern "C"
