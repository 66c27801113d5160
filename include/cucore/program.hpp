// libcucore C++ façade: programs (over cucore/program.h).
//
//   cucore::ProgramOptions options;
//   options.std = "c++17";
//   cucore::Program program = cucore::Program::create(source, CUCORE_CODE_CXX, options);
//   cucore::ObjectCode code = program.compile(CUCORE_CODE_CUBIN, {"saxpy<float>"});
#ifndef CUCORE_PROGRAM_HPP
#define CUCORE_PROGRAM_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "object_code.hpp"
#include "program.h"
#include "program_cache.h"
#include "program_cache.hpp"

namespace cucore {

namespace detail {

inline cucore_program_options_t program_options_init() noexcept {
    cucore_program_options_t o = CUCORE_PROGRAM_OPTIONS_INIT;
    return o;
}

// Copies a log-like string out of a (buffer, capacity, length) C function.
template <typename Fn>
std::string read_text(Fn fn) {
    std::size_t length = 0;
    check(fn(nullptr, 0, &length));
    std::string text(length + 1, '\0');
    check(fn(&text[0], text.size(), &length));
    text.resize(length < text.size() - 1 ? length : text.size() - 1);
    return text;
}
} // namespace detail

// Compile options (cuda.core: ProgramOptions). Defaults (empty strings and
// lists, false, CUCORE_TOGGLE_DEFAULT, 0) leave NVRTC's/libNVVM's defaults;
// scalar defaults come from CUCORE_PROGRAM_OPTIONS_INIT.
struct ProgramOptions {
    std::string name;  // "" : "default_program"
    std::string arch;  // "" : the current device's; "sm_90", "compute_90", "90"
    std::string std;   // language dialect, e.g. "c++17"
    std::vector<std::string> defines, undefines, include_paths, pre_includes;
    std::vector<std::pair<std::string, std::string>> headers;  // in-memory (name, source)
    bool debug = detail::program_options_init().debug != 0;
    bool lineinfo = detail::program_options_init().lineinfo != 0;
    cucore_toggle_t device_code_optimize = detail::program_options_init().device_code_optimize;
    bool use_fast_math = detail::program_options_init().use_fast_math != 0;
    cucore_toggle_t ftz = detail::program_options_init().ftz;
    cucore_toggle_t prec_sqrt = detail::program_options_init().prec_sqrt;
    cucore_toggle_t prec_div = detail::program_options_init().prec_div;
    cucore_toggle_t fma = detail::program_options_init().fma;
    bool extra_device_vectorization = detail::program_options_init().extra_device_vectorization != 0;
    std::uint32_t max_register_count = detail::program_options_init().max_register_count;
    bool relocatable_device_code = detail::program_options_init().relocatable_device_code != 0;
    bool extensible_whole_program = detail::program_options_init().extensible_whole_program != 0;
    bool link_time_optimization = detail::program_options_init().link_time_optimization != 0;
    bool device_as_default_execution_space = detail::program_options_init().device_as_default_execution_space != 0;
    bool disable_warnings = detail::program_options_init().disable_warnings != 0;
    bool brief_diagnostics = detail::program_options_init().brief_diagnostics != 0;
    bool no_display_error_number = detail::program_options_init().no_display_error_number != 0;
    std::vector<std::uint32_t> diag_error, diag_suppress, diag_warn;
    bool pch = detail::program_options_init().pch != 0;
    std::string create_pch, use_pch, pch_dir;
    std::vector<std::string> ptxas_options, extra_options;
};

namespace detail {
// The C view of ProgramOptions; it points into `options`, which must outlive it.
class CProgramOptions {
public:
    explicit CProgramOptions(const ProgramOptions &o) : c_(program_options_init()) {
        c_.name = text(o.name);
        c_.arch = text(o.arch);
        c_.std = text(o.std);
        list(o.defines, defines_, c_.defines, c_.define_count);
        list(o.undefines, undefines_, c_.undefines, c_.undefine_count);
        list(o.include_paths, include_paths_, c_.include_paths, c_.include_path_count);
        list(o.pre_includes, pre_includes_, c_.pre_includes, c_.pre_include_count);
        for (const auto &header : o.headers) {
            header_names_.push_back(header.first.c_str());
            header_sources_.push_back(header.second.c_str());
        }
        c_.header_names = header_names_.empty() ? nullptr : header_names_.data();
        c_.header_sources = header_sources_.empty() ? nullptr : header_sources_.data();
        c_.header_count = header_names_.size();
        c_.debug = o.debug;
        c_.lineinfo = o.lineinfo;
        c_.device_code_optimize = o.device_code_optimize;
        c_.use_fast_math = o.use_fast_math;
        c_.ftz = o.ftz;
        c_.prec_sqrt = o.prec_sqrt;
        c_.prec_div = o.prec_div;
        c_.fma = o.fma;
        c_.extra_device_vectorization = o.extra_device_vectorization;
        c_.max_register_count = o.max_register_count;
        c_.relocatable_device_code = o.relocatable_device_code;
        c_.extensible_whole_program = o.extensible_whole_program;
        c_.link_time_optimization = o.link_time_optimization;
        c_.device_as_default_execution_space = o.device_as_default_execution_space;
        c_.disable_warnings = o.disable_warnings;
        c_.brief_diagnostics = o.brief_diagnostics;
        c_.no_display_error_number = o.no_display_error_number;
        c_.diag_error = o.diag_error.empty() ? nullptr : o.diag_error.data();
        c_.diag_error_count = o.diag_error.size();
        c_.diag_suppress = o.diag_suppress.empty() ? nullptr : o.diag_suppress.data();
        c_.diag_suppress_count = o.diag_suppress.size();
        c_.diag_warn = o.diag_warn.empty() ? nullptr : o.diag_warn.data();
        c_.diag_warn_count = o.diag_warn.size();
        c_.pch = o.pch;
        c_.create_pch = text(o.create_pch);
        c_.use_pch = text(o.use_pch);
        c_.pch_dir = text(o.pch_dir);
        list(o.ptxas_options, ptxas_options_, c_.ptxas_options, c_.ptxas_option_count);
        list(o.extra_options, extra_options_, c_.extra_options, c_.extra_option_count);
    }
    CProgramOptions(const CProgramOptions &) = delete;
    CProgramOptions &operator=(const CProgramOptions &) = delete;
    const cucore_program_options_t *get() const noexcept { return &c_; }

private:
    static const char *text(const std::string &s) noexcept { return s.empty() ? nullptr : s.c_str(); }
    static void list(const std::vector<std::string> &in, std::vector<const char *> &storage,
                     const char *const *&array, std::size_t &count) {
        for (const std::string &s : in) storage.push_back(s.c_str());
        array = storage.empty() ? nullptr : storage.data();
        count = storage.size();
    }
    cucore_program_options_t c_;
    std::vector<const char *> defines_, undefines_, include_paths_, pre_includes_, header_names_, header_sources_,
        ptxas_options_, extra_options_;
};

inline std::vector<const char *> c_strings(const std::vector<std::string> &strings) {
    std::vector<const char *> result;
    result.reserve(strings.size());
    for (const std::string &s : strings) result.push_back(s.c_str());
    return result;
}
} // namespace detail

// Source code and options (cuda.core: Program). compile() runs NVRTC, the
// linker or libNVVM unless a cache has the result.
class Program : public Handle<Program, cucore_program_t> {
public:
    Program() noexcept = default;

    // `code` of kind CXX, PTX or NVVM. Throws Error: INVALID_ARGUMENT,
    // NOT_SUPPORTED (compiler missing), NO_DRIVER/NO_DEVICE (no arch to default to).
    static Program create(const std::string &code, cucore_code_type_t code_type,
                          const ProgramOptions &options = ProgramOptions()) {
        detail::CProgramOptions c(options);
        cucore_program_t *raw = nullptr;
        detail::check(cucore_program_create(code.data(), code.size(), code_type, c.get(), &raw));
        return adopt(raw);
    }

    // Compiles to `target` (PTX, CUBIN or LTOIR). Throws Error: INVALID_ARGUMENT,
    // COMPILATION (the message has the first lines of log()), NOT_SUPPORTED.
    ObjectCode compile(cucore_code_type_t target, const std::vector<std::string> &name_expressions = {},
                       const ProgramCache &cache = ProgramCache()) const {
        const std::vector<const char *> names = detail::c_strings(name_expressions);
        cucore_object_code_t *raw = nullptr;
        detail::check(cucore_program_compile(handle_, target, names.empty() ? nullptr : names.data(), names.size(),
                                             cache.get(), &raw));
        return ObjectCode::adopt(raw);
    }

    // The log of the last compile that ran ("" after a cache hit).
    std::string log() const {
        return detail::read_text([this](char *b, std::size_t c, std::size_t *l) { return cucore_program_log(handle_, b, c, l); });
    }
    // What became of the precompiled header of the last NVRTC compile
    // (CUCORE_PCH_STATUS_NONE when none was asked for or nothing compiled).
    cucore_pch_status_t pch_status() const {
        cucore_pch_status_t status = CUCORE_PCH_STATUS_NONE;
        detail::check(cucore_program_pch_status(handle_, &status));
        return status;
    }
    // The compiler flags, one per line.
    std::string flags() const {
        return detail::read_text([this](char *b, std::size_t c, std::size_t *l) { return cucore_program_flags(handle_, b, c, l); });
    }
    cucore_code_type_t code_type() const {
        cucore_code_type_t type = CUCORE_CODE_UNSET;
        detail::check(cucore_program_code_type(handle_, &type));
        return type;
    }
    cucore_compiler_backend_t backend() const {
        cucore_compiler_backend_t backend = CUCORE_BACKEND_DEFAULT;
        detail::check(cucore_program_backend(handle_, &backend));
        return backend;
    }
    std::string arch() const {
        const char *text = nullptr;
        detail::check(cucore_program_arch(handle_, &text));
        return text;
    }
};

// ProgramCache's member that takes a Program (declared in program_cache.hpp).
inline ObjectCode ProgramCache::find(const std::array<std::uint8_t, 32> &key) const {
    cucore_object_code_t *raw = nullptr;
    detail::check(cucore_program_cache_get(handle_, key.data(), &raw));
    return ObjectCode::adopt(raw);
}

inline void ProgramCache::store(const std::array<std::uint8_t, 32> &key, const ObjectCode &code) const {
    detail::check(cucore_program_cache_put(handle_, key.data(), code.get()));
}

inline bool ProgramCache::remove(const std::array<std::uint8_t, 32> &key) const {
    int removed = 0;
    detail::check(cucore_program_cache_remove(handle_, key.data(), &removed));
    return removed != 0;
}

inline std::array<std::uint8_t, 32> ProgramCache::key(const Program &program, cucore_code_type_t target,
                                                      const std::vector<std::string> &name_expressions) {
    const std::vector<const char *> names = detail::c_strings(name_expressions);
    std::array<std::uint8_t, 32> key{};
    detail::check(cucore_program_cache_key(program.get(), target, names.empty() ? nullptr : names.data(),
                                           names.size(), key.data()));
    return key;
}

// The installed compiler's version (major * 1000 + minor * 10). Throws Error:
// NOT_SUPPORTED (not installed), INVALID_ARGUMENT.
inline int compiler_version(cucore_compiler_backend_t backend) {
    int version = 0;
    detail::check(cucore_compiler_version(backend, &version));
    return version;
}

} // namespace cucore

#endif // CUCORE_PROGRAM_HPP
