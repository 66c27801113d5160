// libcucore C++ façade: the linker (over cucore/linker.h).
//
//   cucore::LinkerOptions options;
//   options.link_time_optimization = true;
//   cucore::ObjectCode cubin = cucore::Linker::create({a, b}, options).link(CUCORE_CODE_CUBIN);
#ifndef CUCORE_LINKER_HPP
#define CUCORE_LINKER_HPP

#include <cstdint>
#include <string>
#include <vector>

#include "common.hpp"
#include "linker.h"
#include "object_code.hpp"
#include "program.hpp"

namespace cucore {

namespace detail {

inline cucore_linker_options_t linker_options_init() noexcept {
    cucore_linker_options_t o = CUCORE_LINKER_OPTIONS_INIT;
    return o;
}
} // namespace detail

// Link options (cuda.core: LinkerOptions); scalar defaults from CUCORE_LINKER_OPTIONS_INIT.
struct LinkerOptions {
    std::string name;  // "" : "linker"
    std::string arch;  // "" : the current device's
    cucore_compiler_backend_t backend = detail::linker_options_init().backend;
    std::uint32_t max_register_count = detail::linker_options_init().max_register_count;
    int optimization_level = -1;  // -1: the default (3); else 0..3
    bool debug = detail::linker_options_init().debug != 0;
    bool lineinfo = detail::linker_options_init().lineinfo != 0;
    bool link_time_optimization = detail::linker_options_init().link_time_optimization != 0;
    cucore_toggle_t ftz = detail::linker_options_init().ftz;
    cucore_toggle_t prec_div = detail::linker_options_init().prec_div;
    cucore_toggle_t prec_sqrt = detail::linker_options_init().prec_sqrt;
    cucore_toggle_t fma = detail::linker_options_init().fma;
    bool verbose = detail::linker_options_init().verbose != 0;
    std::vector<std::string> ptxas_options, extra_options;
};

// Links object codes into one (cuda.core: Linker).
class Linker : public Handle<Linker, cucore_linker_t> {
public:
    Linker() noexcept = default;

    // Throws Error: INVALID_ARGUMENT, INVALID_HANDLE, NOT_SUPPORTED, COMPILATION, CUDA.
    static Linker create(const std::vector<ObjectCode> &inputs, const LinkerOptions &options = LinkerOptions()) {
        std::vector<cucore_object_code_t *> handles;
        handles.reserve(inputs.size());
        for (const ObjectCode &input : inputs) handles.push_back(input.get());
        const std::vector<const char *> ptxas = detail::c_strings(options.ptxas_options);
        const std::vector<const char *> extra = detail::c_strings(options.extra_options);
        cucore_linker_options_t c = detail::linker_options_init();
        c.name = options.name.empty() ? nullptr : options.name.c_str();
        c.arch = options.arch.empty() ? nullptr : options.arch.c_str();
        c.backend = options.backend;
        c.max_register_count = options.max_register_count;
        c.optimization_level = options.optimization_level < 0 ? 0u : CUCORE_OPTIMIZATION_LEVEL(options.optimization_level);
        c.debug = options.debug;
        c.lineinfo = options.lineinfo;
        c.link_time_optimization = options.link_time_optimization;
        c.ftz = options.ftz;
        c.prec_div = options.prec_div;
        c.prec_sqrt = options.prec_sqrt;
        c.fma = options.fma;
        c.verbose = options.verbose;
        c.ptxas_options = ptxas.empty() ? nullptr : ptxas.data();
        c.ptxas_option_count = ptxas.size();
        c.extra_options = extra.empty() ? nullptr : extra.data();
        c.extra_option_count = extra.size();
        cucore_linker_t *raw = nullptr;
        detail::check(cucore_linker_create(handles.empty() ? nullptr : handles.data(), handles.size(), &c, &raw));
        return adopt(raw);
    }

    // Links into `target` (CUBIN, or PTX with LTO); once. Throws Error:
    // INVALID_ARGUMENT, INVALID_STATE, COMPILATION, CUDA.
    ObjectCode link(cucore_code_type_t target = CUCORE_CODE_CUBIN) const {
        cucore_object_code_t *raw = nullptr;
        detail::check(cucore_linker_link(handle_, target, &raw));
        return ObjectCode::adopt(raw);
    }
    std::string error_log() const {
        return detail::read_text([this](char *b, std::size_t c, std::size_t *l) { return cucore_linker_error_log(handle_, b, c, l); });
    }
    std::string info_log() const {
        return detail::read_text([this](char *b, std::size_t c, std::size_t *l) { return cucore_linker_info_log(handle_, b, c, l); });
    }
    cucore_compiler_backend_t backend() const {
        cucore_compiler_backend_t backend = CUCORE_BACKEND_DEFAULT;
        detail::check(cucore_linker_backend(handle_, &backend));
        return backend;
    }
    // NVJITLINK where it loads, else DRIVER.
    static cucore_compiler_backend_t default_backend() {
        cucore_compiler_backend_t backend = CUCORE_BACKEND_DEFAULT;
        detail::check(cucore_linker_default_backend(&backend));
        return backend;
    }
};

} // namespace cucore

#endif // CUCORE_LINKER_HPP
