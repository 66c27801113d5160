// The linker: object codes in, one cubin (or PTX) out, through nvJitLink where
// it loads, else the driver's cuLink* (which needs a current context and
// cannot link LTO-IR). The backend starts at creation, with every input added,
// so option and input errors surface at once; link() completes it once.
#pragma once

#include <cuda.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/context.hpp"
#include "core/handle.hpp"
#include "core/object_code.hpp"
#include "cucore/linker.h"

struct nvJitLink;

namespace cucore::core {

// cucore_linker_options_t copied, its fields validated by the C ABI layer (capi/linker.cpp).
struct LinkerOptions {
    std::string name = "linker";
    std::string arch;  // normalised, "" for the default device's
    cucore_compiler_backend_t backend = CUCORE_BACKEND_DEFAULT;
    uint32_t max_register_count = 0;
    uint32_t optimization_level = 0;  // 0: default, else level + 1
    uint32_t debug = 0, lineinfo = 0, link_time_optimization = 0, verbose = 0;
    cucore_toggle_t ftz = CUCORE_TOGGLE_DEFAULT, prec_div = CUCORE_TOGGLE_DEFAULT,
                    prec_sqrt = CUCORE_TOGGLE_DEFAULT, fma = CUCORE_TOGGLE_DEFAULT;
    std::vector<std::string> ptxas_options, extra_options;
};

// nvJitLink's flags for `options` with `arch` resolved.
std::vector<std::string> nvjitlink_flags(const LinkerOptions &options, const std::string &arch);

// The first `lines` lines of `log` (for error messages).
std::string first_lines(const std::string &log, int lines = 10);

class Linker final : public Object {
  public:
    // `failure_log` (may be null) receives the error log when creation fails.
    // `inputs` is not empty (the C ABI checks it).
    static Ref<Linker> create(std::vector<Ref<ObjectCode>> inputs, LinkerOptions options,
                              std::string *failure_log = nullptr);
    // NVJITLINK where it loads, else DRIVER; never loads the CUDA driver.
    static cucore_compiler_backend_t default_backend() noexcept;

    Linker(std::vector<Ref<ObjectCode>> inputs, LinkerOptions options, cucore_compiler_backend_t backend) noexcept;
    ~Linker() override;

    // Links into `target` once; later calls with the same target return the same result.
    Ref<ObjectCode> link(cucore_code_type_t target);
    std::string error_log() const;
    std::string info_log() const;
    cucore_compiler_backend_t backend() const noexcept { return backend_; }

  private:
    void start();  // creates the backend's handle and adds every input
    void start_nvjitlink(bool emit_ptx = false);
    void start_driver();
    std::string link_nvjitlink(cucore_code_type_t target);
    std::string link_driver();
    void read_nvjitlink_logs();
    void read_driver_logs();
    void destroy_backend() noexcept;
    [[noreturn]] void fail(cucore_status_t status, const std::string &what);

    std::vector<Ref<ObjectCode>> inputs_;
    LinkerOptions options_;
    cucore_compiler_backend_t backend_;
    std::string arch_;

    mutable std::mutex mutex_;
    nvJitLink *jit_ = nullptr;        // nvJitLink backend
    CUlinkState link_state_ = nullptr;  // driver backend
    Ref<Context> context_;            // driver backend: the context it links in
    std::vector<char> error_buffer_, info_buffer_;  // driver backend's log buffers
    // The driver backend's options: cuLinkCreate keeps the values array and writes the logs' sizes back into it
    // (the *_LOG_BUFFER_SIZE_BYTES options are in/out) as late as cuLinkComplete, so it lives with the link state.
    std::vector<CUjit_option> driver_option_keys_;
    std::vector<void *> driver_option_values_;
    std::string error_log_, info_log_;
    Ref<ObjectCode> result_;
    cucore_code_type_t result_target_ = CUCORE_CODE_UNSET;
};

}  // namespace cucore::core
