#include "core/program.hpp"

#include <cstring>

#include "core/device.hpp"
#include "core/error.hpp"
#include "core/linker.hpp"
#include "core/owned.hpp"
#include "driver/compilers.hpp"

namespace cucore::core {
namespace {

constexpr uint64_t kKeyFormat = 1;  // bump when what the key covers changes

cucore_status_t nvrtc_status(nvrtcResult result) {
    switch (result) {
        case NVRTC_ERROR_OUT_OF_MEMORY: return CUCORE_ERROR_OUT_OF_MEMORY;
        case NVRTC_ERROR_INVALID_OPTION:
        case NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID: return CUCORE_ERROR_INVALID_ARGUMENT;
        default: return CUCORE_ERROR_COMPILATION;
    }
}

std::string nvrtc_error(const driver::NvrtcTable &t, nvrtcResult result) {
    const char *text = t.nvrtcGetErrorString ? t.nvrtcGetErrorString(result) : nullptr;
    return text ? text : "NVRTC error " + std::to_string(static_cast<int>(result));
}

std::string nvvm_error(const driver::NvvmTable &t, nvvmResult result) {
    const char *text = t.nvvmGetErrorString ? t.nvvmGetErrorString(result) : nullptr;
    return text ? text : "NVVM error " + std::to_string(static_cast<int>(result));
}

std::vector<const char *> pointers(const std::vector<std::string> &strings) {
    std::vector<const char *> result;
    result.reserve(strings.size());
    for (const std::string &s : strings) result.push_back(s.c_str());
    return result;
}

// Strips the NUL a compiler counts in a text result's size.
void trim_text(std::string &text) { text.resize(strnlen(text.data(), text.size())); }

cucore_compiler_backend_t backend_for(cucore_code_type_t type) {
    switch (type) {
        case CUCORE_CODE_CXX: return CUCORE_BACKEND_NVRTC;
        case CUCORE_CODE_NVVM: return CUCORE_BACKEND_NVVM;
        default: return Linker::default_backend();
    }
}

}  // namespace

int compiler_version(cucore_compiler_backend_t backend) {
    switch (backend) {
        case CUCORE_BACKEND_NVRTC: return driver::nvrtc().version;
        case CUCORE_BACKEND_NVVM: return driver::nvvm().version;
        case CUCORE_BACKEND_NVJITLINK: return driver::nvjitlink().version;
        case CUCORE_BACKEND_DRIVER: return Device::driver_version();
        default:  // the C ABI accepts only the ones above
            throw Error(CUCORE_ERROR_INTERNAL, "no compiler backend " + std::to_string(static_cast<int>(backend)));
    }
}

Ref<Program> Program::create(std::string code, cucore_code_type_t type, ProgramOptions options) {
    check_options_apply(options, type);  // before the compiler is loaded: a wrong option is the caller's error
    const cucore_compiler_backend_t backend = backend_for(type);
    // Loads the compiler (NOT_SUPPORTED when missing) without running it; its
    // version is part of every cache key.
    const int version = compiler_version(backend);
    std::string arch = resolve_arch(options.arch);
    return make<Program>(std::move(code), type, std::move(options), std::move(arch), backend, version);
}

Program::Program(std::string code, cucore_code_type_t code_type, ProgramOptions options, std::string arch,
                 cucore_compiler_backend_t backend, int compiler_version) noexcept
    : Object(CUCORE_OBJECT_PROGRAM),
      code_(std::move(code)),
      code_type_(code_type),
      options_(std::move(options)),
      arch_(std::move(arch)),
      flags_(program_flags(options_, code_type_, arch_)),
      backend_(backend),
      compiler_version_(compiler_version) {
    // Everything fixed at creation, each length-prefixed; a compile adds the
    // target and name expressions to a copy.
    key_prefix_.field("libcucore program cache");
    key_prefix_.number(kKeyFormat);
    key_prefix_.number(static_cast<uint64_t>(code_type_));
    key_prefix_.field(code_);
    key_prefix_.field(options_.name);
    key_prefix_.number(flags_.size());
    for (const std::string &flag : flags_) key_prefix_.field(flag);
    key_prefix_.number(options_.header_names.size());
    for (size_t i = 0; i < options_.header_names.size(); ++i) {
        key_prefix_.field(options_.header_names[i]);
        key_prefix_.field(options_.header_sources[i]);
    }
    key_prefix_.number(static_cast<uint64_t>(backend_));
    key_prefix_.number(static_cast<uint64_t>(compiler_version_));
    key_prefix_.field(arch_);
}

void Program::check_target(cucore_code_type_t target, const std::vector<std::string> &name_expressions) const {
    const bool ok = code_type_ == CUCORE_CODE_PTX
                        ? target == CUCORE_CODE_CUBIN
                        : target == CUCORE_CODE_PTX || target == CUCORE_CODE_CUBIN || target == CUCORE_CODE_LTOIR;
    if (!ok)
        throw_invalid_argument(std::string("argument 'target' (") + code_type_name(target) + ") cannot be produced from " +
                               code_type_name(code_type_) + (code_type_ == CUCORE_CODE_PTX
                                                                  ? " (PTX programs compile to CUBIN)"
                                                                  : " (targets: PTX, CUBIN, LTOIR)"));
    if (!name_expressions.empty() && code_type_ != CUCORE_CODE_CXX)
        throw_invalid_argument("argument 'name_expressions' applies to C++ programs only");
    if (target == CUCORE_CODE_CUBIN && arch_.rfind("sm_", 0) != 0)
        throw_invalid_argument("argument 'target' CUBIN needs a real architecture (sm_XY); the program's arch is " +
                               arch_);
}

CacheKey Program::cache_key(cucore_code_type_t target, const std::vector<std::string> &name_expressions) const {
    check_target(target, name_expressions);
    Sha256 hash = key_prefix_;
    hash.number(static_cast<uint64_t>(target));
    hash.number(name_expressions.size());
    for (const std::string &expression : name_expressions) hash.field(expression);
    return hash.finish();
}

Ref<ObjectCode> Program::compile(cucore_code_type_t target, const std::vector<std::string> &name_expressions,
                                 ProgramCache *cache) {
    check_target(target, name_expressions);
    std::lock_guard<std::mutex> lock(compile_mutex_);
    CacheKey key{};
    if (cache) {
        key = cache_key(target, name_expressions);
        if (std::shared_ptr<const CodeImage> hit = cache->find(key)) {
            set_log({});  // no compiler ran
            return ObjectCode::create(std::move(hit), options_.name);
        }
    }
    auto image = std::make_shared<CodeImage>();
    if (code_type_ == CUCORE_CODE_CXX) {
        *image = compile_nvrtc(target, name_expressions);
    } else if (code_type_ == CUCORE_CODE_NVVM) {
        *image = compile_nvvm(target);
    } else {
        image->bytes = link_ptx(code_);
        image->type = CUCORE_CODE_CUBIN;
    }
    if (cache) cache->store(key, image);
    return ObjectCode::create(std::move(image), options_.name);
}

void Program::set_log(std::string log) {
    std::lock_guard<std::mutex> lock(log_mutex_);
    log_ = std::move(log);
}

std::string Program::log() const {
    std::lock_guard<std::mutex> lock(log_mutex_);
    return log_;
}

std::string Program::flags_text() const {
    std::string text;
    for (const std::string &flag : flags_) text += flag + "\n";
    return text;
}

void Program::compilation_failed(const std::string &what) {
    throw Error(CUCORE_ERROR_COMPILATION, options_.name + ": " + what + ":\n" + first_lines(log()));
}

CodeImage Program::compile_nvrtc(cucore_code_type_t target, const std::vector<std::string> &name_expressions,
                                 bool retry_pch) {
    const driver::NvrtcTable &t = *driver::nvrtc().table;
    auto check = [&t](nvrtcResult result, const char *call) {
        if (result != NVRTC_SUCCESS) throw Error(nvrtc_status(result), std::string(call) + " failed: " + nvrtc_error(t, result));
    };
    const std::vector<const char *> header_sources = pointers(options_.header_sources);
    const std::vector<const char *> header_names = pointers(options_.header_names);
    nvrtcProgram raw = nullptr;
    check(t.nvrtcCreateProgram(&raw, code_.c_str(), options_.name.c_str(), static_cast<int>(header_names.size()),
                               header_sources.data(), header_names.data()),
          "nvrtcCreateProgram");
    // Destroyed when the compile ends, whatever happens.
    const auto created = own(raw, [&t](nvrtcProgram unused) noexcept {
        if (nvrtcResult r = t.nvrtcDestroyProgram(&unused); r != NVRTC_SUCCESS)
            report_release_error(CUCORE_ERROR_COMPILATION, 0, "nvrtcDestroyProgram failed: " + nvrtc_error(t, r));
    });
    const nvrtcProgram program = created.get();

    for (const std::string &expression : name_expressions)
        check(t.nvrtcAddNameExpression(program, expression.c_str()), "nvrtcAddNameExpression");
    std::vector<const char *> argv = pointers(flags_);
    const bool add_dlto = target == CUCORE_CODE_LTOIR && !options_.link_time_optimization;
    if (add_dlto) argv.push_back("-dlto");
    const nvrtcResult compiled = t.nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
    size_t log_size = 0;
    std::string log;
    if (t.nvrtcGetProgramLogSize(program, &log_size) == NVRTC_SUCCESS && log_size > 1) {
        log.assign(log_size, '\0');
        if (t.nvrtcGetProgramLog(program, log.data()) == NVRTC_SUCCESS)
            trim_text(log);
        else
            log.clear();
    }
    set_log(std::move(log));
    const bool wants_pch = options_.pch || !options_.create_pch.empty();
    pch_status_.store(CUCORE_PCH_STATUS_NONE, std::memory_order_release);
    if (wants_pch && t.nvrtcGetPCHCreateStatus) {
        const nvrtcResult pch = t.nvrtcGetPCHCreateStatus(program);
        size_t heap = 0;
        // NVRTC's way out of a heap too small: a heap of the size it asks for, and a new program compiled.
        if (pch == NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED && retry_pch && compiled == NVRTC_SUCCESS &&
            t.nvrtcGetPCHHeapSizeRequired && t.nvrtcSetPCHHeapSize &&
            t.nvrtcGetPCHHeapSizeRequired(program, &heap) == NVRTC_SUCCESS && heap > 0 &&
            t.nvrtcSetPCHHeapSize(heap) == NVRTC_SUCCESS)
            return compile_nvrtc(target, name_expressions, false);
        pch_status_.store(pch == NVRTC_SUCCESS                        ? CUCORE_PCH_STATUS_CREATED
                          : pch == NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED ? CUCORE_PCH_STATUS_NOT_ATTEMPTED
                                                                        : CUCORE_PCH_STATUS_FAILED,
                          std::memory_order_release);
    }
    if (compiled == NVRTC_ERROR_COMPILATION) compilation_failed("compilation failed");
    if (compiled != NVRTC_SUCCESS) {
        const std::string text = this->log();
        throw Error(nvrtc_status(compiled), options_.name + ": nvrtcCompileProgram failed: " + nvrtc_error(t, compiled) +
                                                (text.empty() ? "" : ":\n" + first_lines(text)));
    }

    CodeImage image;
    image.type = target;
    size_t size = 0;
    if (target == CUCORE_CODE_PTX) {
        check(t.nvrtcGetPTXSize(program, &size), "nvrtcGetPTXSize");
        image.bytes.assign(size, '\0');
        check(t.nvrtcGetPTX(program, image.bytes.data()), "nvrtcGetPTX");
        trim_text(image.bytes);
    } else if (target == CUCORE_CODE_CUBIN) {
        check(t.nvrtcGetCUBINSize(program, &size), "nvrtcGetCUBINSize");
        image.bytes.assign(size, '\0');
        check(t.nvrtcGetCUBIN(program, image.bytes.data()), "nvrtcGetCUBIN");
    } else {
        check(t.nvrtcGetLTOIRSize(program, &size), "nvrtcGetLTOIRSize");
        image.bytes.assign(size, '\0');
        check(t.nvrtcGetLTOIR(program, image.bytes.data()), "nvrtcGetLTOIR");
    }
    for (const std::string &expression : name_expressions) {
        const char *lowered = nullptr;
        check(t.nvrtcGetLoweredName(program, expression.c_str(), &lowered), "nvrtcGetLoweredName");
        image.names.emplace_back(expression, lowered ? lowered : "");
    }
    return image;
}

CodeImage Program::compile_nvvm(cucore_code_type_t target) {
    const driver::NvvmTable &t = *driver::nvvm().table;
    auto check = [&t](nvvmResult result, const char *call) {
        if (result != NVVM_SUCCESS)
            throw Error(result == NVVM_ERROR_OUT_OF_MEMORY ? CUCORE_ERROR_OUT_OF_MEMORY
                        : result == NVVM_ERROR_INVALID_OPTION ? CUCORE_ERROR_INVALID_ARGUMENT
                                                               : CUCORE_ERROR_COMPILATION,
                        std::string(call) + " failed: " + nvvm_error(t, result));
    };
    nvvmProgram raw = nullptr;
    check(t.nvvmCreateProgram(&raw), "nvvmCreateProgram");
    // Destroyed when the compile ends, whatever happens.
    const auto created = own(raw, [&t](nvvmProgram unused) noexcept {
        if (nvvmResult r = t.nvvmDestroyProgram(&unused); r != NVVM_SUCCESS)
            report_release_error(CUCORE_ERROR_COMPILATION, 0, "nvvmDestroyProgram failed: " + nvvm_error(t, r));
    });
    const nvvmProgram program = created.get();
    check(t.nvvmAddModuleToProgram(program, code_.data(), code_.size(), options_.name.c_str()), "nvvmAddModuleToProgram");
    std::vector<const char *> argv = pointers(flags_);
    if (target == CUCORE_CODE_LTOIR && !options_.link_time_optimization) argv.push_back("-gen-lto");
    const nvvmResult compiled = t.nvvmCompileProgram(program, static_cast<int>(argv.size()), argv.data());
    size_t log_size = 0;
    std::string log;
    if (t.nvvmGetProgramLogSize(program, &log_size) == NVVM_SUCCESS && log_size > 1) {
        log.assign(log_size, '\0');
        if (t.nvvmGetProgramLog(program, log.data()) == NVVM_SUCCESS)
            trim_text(log);
        else
            log.clear();
    }
    set_log(std::move(log));
    if (compiled != NVVM_SUCCESS) compilation_failed("compilation failed (" + nvvm_error(t, compiled) + ")");
    CodeImage image;
    size_t size = 0;
    check(t.nvvmGetCompiledResultSize(program, &size), "nvvmGetCompiledResultSize");
    image.bytes.assign(size, '\0');
    check(t.nvvmGetCompiledResult(program, image.bytes.data()), "nvvmGetCompiledResult");
    if (target == CUCORE_CODE_LTOIR) {
        image.type = CUCORE_CODE_LTOIR;
        return image;
    }
    trim_text(image.bytes);
    image.type = CUCORE_CODE_PTX;
    if (target == CUCORE_CODE_CUBIN) {  // libNVVM makes PTX; the linker assembles it
        image.bytes = link_ptx(image.bytes);
        image.type = CUCORE_CODE_CUBIN;
    }
    return image;
}

std::string Program::link_ptx(const std::string &ptx) {
    auto input = std::make_shared<CodeImage>();
    input->bytes = ptx;
    input->type = CUCORE_CODE_PTX;
    LinkerOptions options;
    options.name = options_.name;
    options.arch = arch_;
    if (code_type_ == CUCORE_CODE_PTX) {  // NVVM options went to libNVVM already
        options.debug = options_.debug;
        options.lineinfo = options_.lineinfo;
        options.max_register_count = options_.max_register_count;
        options.ftz = options_.ftz;
        options.prec_div = options_.prec_div;
        options.prec_sqrt = options_.prec_sqrt;
        options.fma = options_.fma;
        options.ptxas_options = options_.ptxas_options;
        options.extra_options = options_.extra_options;
    }
    std::string failure_log;
    Ref<Linker> linker;
    try {
        linker = Linker::create({ObjectCode::create(std::move(input), options_.name)}, std::move(options), &failure_log);
    } catch (const Error &) {
        if (code_type_ == CUCORE_CODE_PTX) set_log(failure_log);
        throw;
    }
    try {
        Ref<ObjectCode> cubin = linker->link(CUCORE_CODE_CUBIN);
        if (code_type_ == CUCORE_CODE_PTX) set_log(linker->info_log());
        return cubin->bytes();
    } catch (const Error &) {
        if (code_type_ == CUCORE_CODE_PTX) set_log(linker->error_log());
        throw;
    }
}

}  // namespace cucore::core
