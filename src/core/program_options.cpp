#include "core/program_options.hpp"

#include "core/device.hpp"
#include "core/error.hpp"
#include "core/object_code.hpp"

namespace cucore::core {
namespace {

std::string on_off(cucore_toggle_t t, const char *yes, const char *no) { return t == CUCORE_TOGGLE_ON ? yes : no; }

// Which options each compiler takes besides name, arch and extra_options.
bool applies(const char *field, cucore_code_type_t type) {
    if (type == CUCORE_CODE_CXX) return true;
    const std::string f = field;
    if (f == "debug" || f == "lineinfo" || f == "ftz" || f == "prec_sqrt" || f == "prec_div" || f == "fma")
        return true;
    if (type == CUCORE_CODE_PTX) return f == "max_register_count" || f == "ptxas_options";
    return f == "device_code_optimize" || f == "link_time_optimization";  // NVVM
}

void check_applies(bool set, const char *field, cucore_code_type_t type) {
    if (set && !applies(field, type))
        throw_invalid_argument(std::string("argument 'options.") + field + "' does not apply to " +
                               code_type_name(type) + " programs");
}
}  // namespace

void check_options_apply(const ProgramOptions &o, cucore_code_type_t type) {
    check_applies(!o.std.empty(), "std", type);
    check_applies(!o.defines.empty(), "defines", type);
    check_applies(!o.undefines.empty(), "undefines", type);
    check_applies(!o.include_paths.empty(), "include_paths", type);
    check_applies(!o.pre_includes.empty(), "pre_includes", type);
    check_applies(!o.header_names.empty(), "header_names", type);
    check_applies(o.debug, "debug", type);
    check_applies(o.lineinfo, "lineinfo", type);
    check_applies(o.device_code_optimize, "device_code_optimize", type);
    check_applies(o.use_fast_math, "use_fast_math", type);
    check_applies(o.ftz, "ftz", type);
    check_applies(o.prec_sqrt, "prec_sqrt", type);
    check_applies(o.prec_div, "prec_div", type);
    check_applies(o.fma, "fma", type);
    check_applies(o.extra_device_vectorization, "extra_device_vectorization", type);
    check_applies(o.max_register_count, "max_register_count", type);
    check_applies(o.relocatable_device_code, "relocatable_device_code", type);
    check_applies(o.extensible_whole_program, "extensible_whole_program", type);
    check_applies(o.link_time_optimization, "link_time_optimization", type);
    check_applies(o.device_as_default_execution_space, "device_as_default_execution_space", type);
    check_applies(o.disable_warnings, "disable_warnings", type);
    check_applies(o.brief_diagnostics, "brief_diagnostics", type);
    check_applies(o.no_display_error_number, "no_display_error_number", type);
    check_applies(!o.diag_error.empty(), "diag_error", type);
    check_applies(!o.diag_suppress.empty(), "diag_suppress", type);
    check_applies(!o.diag_warn.empty(), "diag_warn", type);
    check_applies(o.pch, "pch", type);
    check_applies(!o.create_pch.empty(), "create_pch", type);
    check_applies(!o.use_pch.empty(), "use_pch", type);
    check_applies(!o.pch_dir.empty(), "pch_dir", type);
    check_applies(!o.ptxas_options.empty(), "ptxas_options", type);
}

std::string resolve_arch(const std::string &arch) {
    if (!arch.empty()) return arch;
    Ref<Device> device = Device::current();
    int major = 0, minor = 0;
    device->compute_capability(major, minor);
    return "sm_" + std::to_string(major) + std::to_string(minor);
}

std::vector<std::string> program_flags(const ProgramOptions &p, cucore_code_type_t type, const std::string &arch) {
    std::vector<std::string> f;
    if (type == CUCORE_CODE_NVVM) {
        // libNVVM names virtual architectures only.
        f.push_back("-arch=compute_" + arch.substr(arch.find('_') + 1));
        if (p.debug) f.push_back("-g");
        if (p.lineinfo) f.push_back("-generate-line-info");
        if (p.device_code_optimize) f.push_back(on_off(p.device_code_optimize, "-opt=3", "-opt=0"));
        if (p.ftz) f.push_back(on_off(p.ftz, "-ftz=1", "-ftz=0"));
        if (p.prec_sqrt) f.push_back(on_off(p.prec_sqrt, "-prec-sqrt=1", "-prec-sqrt=0"));
        if (p.prec_div) f.push_back(on_off(p.prec_div, "-prec-div=1", "-prec-div=0"));
        if (p.fma) f.push_back(on_off(p.fma, "-fma=1", "-fma=0"));
        if (p.link_time_optimization) f.push_back("-gen-lto");
    } else if (type == CUCORE_CODE_PTX) {
        // nvJitLink's spelling; the driver backend maps the same options to CUjit_option.
        f.push_back("-arch=" + arch);
        if (p.debug) f.push_back("-g");
        if (p.lineinfo) f.push_back("-lineinfo");
        if (p.max_register_count) f.push_back("-maxrregcount=" + std::to_string(p.max_register_count));
        if (p.ftz) f.push_back(on_off(p.ftz, "-ftz=true", "-ftz=false"));
        if (p.prec_sqrt) f.push_back(on_off(p.prec_sqrt, "-prec-sqrt=true", "-prec-sqrt=false"));
        if (p.prec_div) f.push_back(on_off(p.prec_div, "-prec-div=true", "-prec-div=false"));
        if (p.fma) f.push_back(on_off(p.fma, "-fma=true", "-fma=false"));
        for (const std::string &o : p.ptxas_options) f.push_back("-Xptxas=" + o);
    } else {
        f.push_back("-arch=" + arch);
        if (!p.std.empty()) f.push_back("-std=" + p.std);
        for (const std::string &d : p.defines) f.push_back("-D" + d);
        for (const std::string &u : p.undefines) f.push_back("-U" + u);
        for (const std::string &i : p.include_paths) f.push_back("-I" + i);
        for (const std::string &h : p.pre_includes) f.push_back("--pre-include=" + h);
        if (p.debug) f.push_back("-G");
        if (p.lineinfo) f.push_back("-lineinfo");
        if (p.device_code_optimize) f.push_back(on_off(p.device_code_optimize, "-dopt=on", "-dopt=off"));
        if (p.use_fast_math) f.push_back("--use_fast_math");
        if (p.ftz) f.push_back(on_off(p.ftz, "--ftz=true", "--ftz=false"));
        if (p.prec_sqrt) f.push_back(on_off(p.prec_sqrt, "--prec-sqrt=true", "--prec-sqrt=false"));
        if (p.prec_div) f.push_back(on_off(p.prec_div, "--prec-div=true", "--prec-div=false"));
        if (p.fma) f.push_back(on_off(p.fma, "--fmad=true", "--fmad=false"));
        if (p.extra_device_vectorization) f.push_back("--extra-device-vectorization");
        if (p.max_register_count) f.push_back("--maxrregcount=" + std::to_string(p.max_register_count));
        if (p.relocatable_device_code) f.push_back("-rdc=true");
        if (p.extensible_whole_program) f.push_back("-ewp");
        if (p.link_time_optimization) f.push_back("-dlto");
        if (p.device_as_default_execution_space) f.push_back("-default-device");
        if (p.disable_warnings) f.push_back("-w");
        if (p.brief_diagnostics) f.push_back("--brief-diagnostics");
        if (p.no_display_error_number) f.push_back("--no-display-error-number");
        for (uint32_t n : p.diag_error) f.push_back("--diag-error=" + std::to_string(n));
        for (uint32_t n : p.diag_suppress) f.push_back("--diag-suppress=" + std::to_string(n));
        for (uint32_t n : p.diag_warn) f.push_back("--diag-warn=" + std::to_string(n));
        if (p.pch) f.push_back("-pch");
        if (!p.create_pch.empty()) f.push_back("--create-pch=" + p.create_pch);
        if (!p.use_pch.empty()) f.push_back("--use-pch=" + p.use_pch);
        if (!p.pch_dir.empty()) f.push_back("--pch-dir=" + p.pch_dir);
        for (const std::string &o : p.ptxas_options) f.push_back("-Xptxas=" + o);
    }
    f.insert(f.end(), p.extra_options.begin(), p.extra_options.end());
    return f;
}

}  // namespace cucore::core
