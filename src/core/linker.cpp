#include "core/linker.hpp"

#include <cstring>

#include "core/device.hpp"
#include "core/error.hpp"
#include "core/program_options.hpp"
#include "core/release.hpp"
#include "driver/compilers.hpp"
#include "driver/driver.hpp"

namespace cucore::core {
namespace {

constexpr size_t kDriverLogBytes = size_t{1} << 16;

const char *nvjitlink_error_name(nvJitLinkResult result) {
    switch (result) {
        case NVJITLINK_SUCCESS: return "NVJITLINK_SUCCESS";
        case NVJITLINK_ERROR_UNRECOGNIZED_OPTION: return "NVJITLINK_ERROR_UNRECOGNIZED_OPTION";
        case NVJITLINK_ERROR_MISSING_ARCH: return "NVJITLINK_ERROR_MISSING_ARCH";
        case NVJITLINK_ERROR_INVALID_INPUT: return "NVJITLINK_ERROR_INVALID_INPUT";
        case NVJITLINK_ERROR_PTX_COMPILE: return "NVJITLINK_ERROR_PTX_COMPILE";
        case NVJITLINK_ERROR_NVVM_COMPILE: return "NVJITLINK_ERROR_NVVM_COMPILE";
        case NVJITLINK_ERROR_INTERNAL: return "NVJITLINK_ERROR_INTERNAL";
        case NVJITLINK_ERROR_THREADPOOL: return "NVJITLINK_ERROR_THREADPOOL";
        case NVJITLINK_ERROR_UNRECOGNIZED_INPUT: return "NVJITLINK_ERROR_UNRECOGNIZED_INPUT";
        case NVJITLINK_ERROR_FINALIZE: return "NVJITLINK_ERROR_FINALIZE";
        case NVJITLINK_ERROR_NULL_INPUT: return "NVJITLINK_ERROR_NULL_INPUT";
        case NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS: return "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS";
        case NVJITLINK_ERROR_INCORRECT_INPUT_TYPE: return "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE";
        case NVJITLINK_ERROR_ARCH_MISMATCH: return "NVJITLINK_ERROR_ARCH_MISMATCH";
        case NVJITLINK_ERROR_OUTDATED_LIBRARY: return "NVJITLINK_ERROR_OUTDATED_LIBRARY";
        case NVJITLINK_ERROR_MISSING_FATBIN: return "NVJITLINK_ERROR_MISSING_FATBIN";
        case NVJITLINK_ERROR_UNRECOGNIZED_ARCH: return "NVJITLINK_ERROR_UNRECOGNIZED_ARCH";
        case NVJITLINK_ERROR_UNSUPPORTED_ARCH: return "NVJITLINK_ERROR_UNSUPPORTED_ARCH";
        case NVJITLINK_ERROR_LTO_NOT_ENABLED: return "NVJITLINK_ERROR_LTO_NOT_ENABLED";
        default: return "NVJITLINK_ERROR_(unknown)";
    }
}

const char *on_off(cucore_toggle_t t) { return t == CUCORE_TOGGLE_ON ? "true" : "false"; }

nvJitLinkInputType nvjitlink_input(cucore_code_type_t type) {
    switch (type) {
        case CUCORE_CODE_CUBIN: return NVJITLINK_INPUT_CUBIN;
        case CUCORE_CODE_PTX: return NVJITLINK_INPUT_PTX;
        case CUCORE_CODE_LTOIR: return NVJITLINK_INPUT_LTOIR;
        case CUCORE_CODE_FATBIN: return NVJITLINK_INPUT_FATBIN;
        case CUCORE_CODE_OBJECT: return NVJITLINK_INPUT_OBJECT;
        default: return NVJITLINK_INPUT_LIBRARY;
    }
}

CUjitInputType driver_input(cucore_code_type_t type) {
    switch (type) {
        case CUCORE_CODE_CUBIN: return CU_JIT_INPUT_CUBIN;
        case CUCORE_CODE_PTX: return CU_JIT_INPUT_PTX;
        case CUCORE_CODE_FATBIN: return CU_JIT_INPUT_FATBINARY;
        case CUCORE_CODE_OBJECT: return CU_JIT_INPUT_OBJECT;
        default: return CU_JIT_INPUT_LIBRARY;
    }
}

}  // namespace

std::string first_lines(const std::string &log, int lines) {
    size_t end = 0;
    for (int i = 0; i < lines && end != std::string::npos; ++i) {
        end = log.find('\n', end);
        if (end != std::string::npos) ++end;
    }
    std::string head = end == std::string::npos ? log : log.substr(0, end);
    while (!head.empty() && (head.back() == '\n' || head.back() == '\0')) head.pop_back();
    if (end != std::string::npos && end < log.size()) head += "\n...";
    return head;
}

std::vector<std::string> nvjitlink_flags(const LinkerOptions &o, const std::string &arch) {
    std::vector<std::string> f{"-arch=" + arch};
    if (o.max_register_count) f.push_back("-maxrregcount=" + std::to_string(o.max_register_count));
    if (o.optimization_level) {
        // nvJitLink 13 refuses -O1 and -O2 ("Only 0 and 3 are supported"): say so
        // naming our field rather than passing its message through.
        const uint32_t level = o.optimization_level - 1;
        if (level != 0 && level != 3)
            throw_invalid_argument("argument 'options.optimization_level' asks for -O" + std::to_string(level) +
                                   ", but nvJitLink accepts only -O0 and -O3 (the driver backend accepts 0..3)");
        f.push_back("-O" + std::to_string(level));
    }
    if (o.debug) f.push_back("-g");
    if (o.lineinfo) f.push_back("-lineinfo");
    if (o.link_time_optimization) f.push_back("-lto");
    if (o.ftz) f.push_back(std::string("-ftz=") + on_off(o.ftz));
    if (o.prec_div) f.push_back(std::string("-prec-div=") + on_off(o.prec_div));
    if (o.prec_sqrt) f.push_back(std::string("-prec-sqrt=") + on_off(o.prec_sqrt));
    if (o.fma) f.push_back(std::string("-fma=") + on_off(o.fma));
    if (o.verbose) f.push_back("-verbose");
    for (const std::string &p : o.ptxas_options) f.push_back("-Xptxas=" + p);
    f.insert(f.end(), o.extra_options.begin(), o.extra_options.end());
    return f;
}

cucore_compiler_backend_t Linker::default_backend() noexcept {
    return driver::nvjitlink_available() ? CUCORE_BACKEND_NVJITLINK : CUCORE_BACKEND_DRIVER;
}

Ref<Linker> Linker::create(std::vector<Ref<ObjectCode>> inputs, LinkerOptions options, std::string *failure_log) {
    cucore_compiler_backend_t backend = options.backend;
    if (backend == CUCORE_BACKEND_DEFAULT) backend = default_backend();
    if (backend == CUCORE_BACKEND_NVJITLINK) driver::nvjitlink();  // NOT_SUPPORTED when asked for and missing
    if (backend == CUCORE_BACKEND_DRIVER) {
        const char *only_nvjitlink = options.link_time_optimization ? "link_time_optimization"
                                     : options.ftz                  ? "ftz"
                                     : options.prec_div             ? "prec_div"
                                     : options.prec_sqrt            ? "prec_sqrt"
                                     : options.fma                  ? "fma"
                                     : !options.ptxas_options.empty() ? "ptxas_options"
                                     : !options.extra_options.empty() ? "extra_options"
                                                                      : nullptr;
        if (only_nvjitlink)
            throw_invalid_argument(std::string("argument 'options.") + only_nvjitlink +
                                   "' needs nvJitLink; the driver's linker (cuLink*) cannot honour it");
        for (size_t i = 0; i < inputs.size(); ++i)
            if (inputs[i]->code_type() == CUCORE_CODE_LTOIR)
                throw_invalid_argument("argument 'inputs[" + std::to_string(i) + "]' ('" + inputs[i]->name() +
                                       "') is LTO-IR, which only nvJitLink links; the driver's linker cannot");
    }
    Ref<Linker> linker = make<Linker>(std::move(inputs), std::move(options), backend);
    try {
        linker->start();
    } catch (...) {
        if (failure_log) *failure_log = linker->error_log();
        throw;  // releasing the linker destroys what start made
    }
    return linker;
}

Linker::Linker(std::vector<Ref<ObjectCode>> inputs, LinkerOptions options, cucore_compiler_backend_t backend) noexcept
    : Object(CUCORE_OBJECT_LINKER), inputs_(std::move(inputs)), options_(std::move(options)), backend_(backend) {}

Linker::~Linker() { destroy_backend(); }

void Linker::destroy_backend() noexcept {
    if (jit_) {
        nvJitLink *handle = jit_;
        jit_ = nullptr;
        try {
            const nvJitLinkResult result = driver::nvjitlink().table->nvJitLinkDestroy(&handle);
            if (result != NVJITLINK_SUCCESS)
                report_release_error(CUCORE_ERROR_COMPILATION, 0,
                                     std::string("nvJitLinkDestroy failed: ") + nvjitlink_error_name(result));
        } catch (const Error &error) {
            report_release_error(error.status(), 0, error.what());
        }
    }
    if (link_state_) {
        CUlinkState state = link_state_;
        link_state_ = nullptr;
        release_reported("cuLinkDestroy", "destroying a linker", [state](const driver::Table &api) {
            return api.cuLinkDestroy ? api.cuLinkDestroy(state) : CUDA_ERROR_NOT_INITIALIZED;
        });
    }
}

void Linker::fail(cucore_status_t status, const std::string &what) {
    std::string message = options_.name + ": " + what;
    if (!error_log_.empty()) message += ":\n" + first_lines(error_log_);
    throw Error(status, message);
}

void Linker::start() {
    std::lock_guard<std::mutex> lock(mutex_);
    arch_ = resolve_arch(options_.arch);
    if (backend_ == CUCORE_BACKEND_NVJITLINK)
        start_nvjitlink();
    else
        start_driver();
}

void Linker::read_nvjitlink_logs() {
    const driver::NvJitLinkTable &t = *driver::nvjitlink().table;
    size_t size = 0;
    if (t.nvJitLinkGetErrorLogSize(jit_, &size) == NVJITLINK_SUCCESS) {
        std::string text(size, '\0');
        if (size && t.nvJitLinkGetErrorLog(jit_, text.data()) == NVJITLINK_SUCCESS) error_log_ = text.c_str();
    }
    size = 0;
    if (t.nvJitLinkGetInfoLogSize(jit_, &size) == NVJITLINK_SUCCESS) {
        std::string text(size, '\0');
        if (size && t.nvJitLinkGetInfoLog(jit_, text.data()) == NVJITLINK_SUCCESS) info_log_ = text.c_str();
    }
}

void Linker::start_nvjitlink(bool emit_ptx) {
    const driver::NvJitLinkTable &t = *driver::nvjitlink().table;
    std::vector<std::string> flags = nvjitlink_flags(options_, arch_);
    if (emit_ptx) flags.push_back("-ptx");
    std::vector<const char *> argv;
    for (const std::string &f : flags) argv.push_back(f.c_str());
    nvJitLink *handle = nullptr;
    const nvJitLinkResult created = t.nvJitLinkCreate(&handle, static_cast<uint32_t>(argv.size()), argv.data());
    jit_ = handle;  // may be set even on failure; destroyed with the linker
    if (created != NVJITLINK_SUCCESS) {
        if (jit_) read_nvjitlink_logs();
        const bool option_error = created == NVJITLINK_ERROR_UNRECOGNIZED_OPTION ||
                                  created == NVJITLINK_ERROR_MISSING_ARCH ||
                                  created == NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS ||
                                  created == NVJITLINK_ERROR_UNRECOGNIZED_ARCH ||
                                  created == NVJITLINK_ERROR_UNSUPPORTED_ARCH;
        fail(option_error ? CUCORE_ERROR_INVALID_ARGUMENT : CUCORE_ERROR_COMPILATION,
             std::string("nvJitLinkCreate failed: ") + nvjitlink_error_name(created));
    }
    for (size_t i = 0; i < inputs_.size(); ++i) {
        const ObjectCode &input = *inputs_[i];
        const std::string name = input.name().empty() ? "input " + std::to_string(i) : input.name();
        const nvJitLinkResult added = t.nvJitLinkAddData(jit_, nvjitlink_input(input.code_type()), input.bytes().data(),
                                                         input.bytes().size(), name.c_str());
        if (added != NVJITLINK_SUCCESS) {
            read_nvjitlink_logs();
            fail(CUCORE_ERROR_COMPILATION, "input '" + name + "' (" + code_type_name(input.code_type()) +
                                               ") was refused: " + nvjitlink_error_name(added));
        }
    }
}

void Linker::read_driver_logs() {
    error_log_ = std::string(error_buffer_.data(), strnlen(error_buffer_.data(), error_buffer_.size()));
    info_log_ = std::string(info_buffer_.data(), strnlen(info_buffer_.data(), info_buffer_.size()));
}

void Linker::start_driver() {
    // cuLink* links for the current context's device: bind the primary
    // context of the device the arch defaults to (the current one, else 0).
    context_ = Device::current()->primary_context();
    ScopedContext bind(context_->cu());
    error_buffer_.assign(kDriverLogBytes, '\0');
    info_buffer_.assign(kDriverLogBytes, '\0');
    std::vector<CUjit_option> &keys = driver_option_keys_;
    std::vector<void *> &values = driver_option_values_;
    keys.clear();
    values.clear();
    auto option = [&](CUjit_option key, uintptr_t value) {
        keys.push_back(key);
        values.push_back(reinterpret_cast<void *>(value));
    };
    option(CU_JIT_ERROR_LOG_BUFFER, reinterpret_cast<uintptr_t>(error_buffer_.data()));
    option(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, kDriverLogBytes);
    option(CU_JIT_INFO_LOG_BUFFER, reinterpret_cast<uintptr_t>(info_buffer_.data()));
    option(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, kDriverLogBytes);
    if (!options_.arch.empty()) {
        // CU_TARGET_COMPUTE_XY is XY (e.g. 90).
        const std::string digits = arch_.substr(arch_.find('_') + 1);
        option(CU_JIT_TARGET, static_cast<uintptr_t>(std::stoi(digits)));
    }
    if (options_.max_register_count) option(CU_JIT_MAX_REGISTERS, options_.max_register_count);
    if (options_.optimization_level) option(CU_JIT_OPTIMIZATION_LEVEL, options_.optimization_level - 1);
    if (options_.debug) option(CU_JIT_GENERATE_DEBUG_INFO, 1);
    if (options_.lineinfo) option(CU_JIT_GENERATE_LINE_INFO, 1);
    if (options_.verbose) option(CU_JIT_LOG_VERBOSE, 1);
    CUlinkState state = nullptr;
    CUCORE_CALL(cuLinkCreate, static_cast<unsigned>(keys.size()), keys.data(), values.data(), &state);
    link_state_ = state;
    for (size_t i = 0; i < inputs_.size(); ++i) {
        const ObjectCode &input = *inputs_[i];
        const std::string name = input.name().empty() ? "input " + std::to_string(i) : input.name();
        const CUresult added = CUCORE_DRIVER(cuLinkAddData)(
            link_state_, driver_input(input.code_type()), const_cast<char *>(input.bytes().data()),
            input.bytes().size(), name.c_str(), 0, nullptr, nullptr);
        if (added != CUDA_SUCCESS) {
            read_driver_logs();
            if (error_log_.empty()) check(added, "cuLinkAddData");
            fail(CUCORE_ERROR_COMPILATION, "input '" + name + "' (" + code_type_name(input.code_type()) +
                                               ") was refused: cuLinkAddData failed: " + cuda_error_name(added));
        }
    }
}

std::string Linker::link_nvjitlink(cucore_code_type_t target) {
    const driver::NvJitLinkTable &t = *driver::nvjitlink().table;
    if (target == CUCORE_CODE_PTX) {
        // nvJitLink emits PTX only when created with -ptx; the handle made at
        // creation (which checked the options and inputs) is replaced by one
        // that has it.
        destroy_backend();
        start_nvjitlink(true);
    }
    const nvJitLinkResult completed = t.nvJitLinkComplete(jit_);
    read_nvjitlink_logs();
    if (completed != NVJITLINK_SUCCESS)
        fail(CUCORE_ERROR_COMPILATION, std::string("link failed: ") + nvjitlink_error_name(completed));
    size_t size = 0;
    const bool ptx = target == CUCORE_CODE_PTX;
    nvJitLinkResult got = ptx ? t.nvJitLinkGetLinkedPtxSize(jit_, &size) : t.nvJitLinkGetLinkedCubinSize(jit_, &size);
    std::string bytes(size, '\0');
    if (got == NVJITLINK_SUCCESS)
        got = ptx ? t.nvJitLinkGetLinkedPtx(jit_, bytes.data()) : t.nvJitLinkGetLinkedCubin(jit_, bytes.data());
    if (got != NVJITLINK_SUCCESS)
        fail(CUCORE_ERROR_COMPILATION, std::string("reading the linked code failed: ") + nvjitlink_error_name(got));
    if (ptx) bytes.resize(strnlen(bytes.data(), bytes.size()));  // PTX text: drop the terminating NUL
    return bytes;
}

std::string Linker::link_driver() {
    ScopedContext bind(context_->cu());
    void *cubin = nullptr;
    size_t size = 0;
    const CUresult completed = CUCORE_DRIVER(cuLinkComplete)(link_state_, &cubin, &size);
    read_driver_logs();
    if (completed != CUDA_SUCCESS) {
        if (error_log_.empty()) check(completed, "cuLinkComplete");
        fail(CUCORE_ERROR_COMPILATION, "link failed: cuLinkComplete failed: " + cuda_error_name(completed));
    }
    // The cubin belongs to the link state: copy it before the state goes.
    return std::string(static_cast<const char *>(cubin), size);
}

Ref<ObjectCode> Linker::link(cucore_code_type_t target) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (result_) {
        if (result_target_ != target)
            throw Error(CUCORE_ERROR_INVALID_STATE, "linker '" + options_.name + "' already linked to " +
                                                        code_type_name(result_target_) + "; a linker links once");
        return result_;
    }
    if (target == CUCORE_CODE_PTX && (backend_ != CUCORE_BACKEND_NVJITLINK || !options_.link_time_optimization))
        throw_invalid_argument("argument 'target' PTX needs nvJitLink with link_time_optimization on");
    if (!jit_ && !link_state_)
        throw Error(CUCORE_ERROR_INVALID_STATE, "linker '" + options_.name + "' failed before; create a new one");
    std::string bytes;
    try {
        bytes = backend_ == CUCORE_BACKEND_NVJITLINK ? link_nvjitlink(target) : link_driver();
    } catch (...) {
        destroy_backend();  // a failed completion cannot be retried
        throw;
    }
    destroy_backend();
    auto image = std::make_shared<CodeImage>();
    image->bytes = std::move(bytes);
    image->type = target;
    // Name expressions of the inputs still name their kernels in the result.
    for (const Ref<ObjectCode> &input : inputs_)
        image->names.insert(image->names.end(), input->names().begin(), input->names().end());
    result_ = ObjectCode::create(std::move(image), options_.name);
    result_target_ = target;
    return result_;
}

std::string Linker::error_log() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return error_log_;
}

std::string Linker::info_log() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return info_log_;
}

}  // namespace cucore::core
