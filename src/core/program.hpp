// Programs: code (CUDA C++, PTX or NVVM IR) plus options, compiled on demand
// by NVRTC, the linker or libNVVM into object code, optionally through a
// program cache. Creating a program never runs a compiler (it only makes sure
// the compiler loads), so a cache hit costs a hash and a lookup.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "core/handle.hpp"
#include "core/object_code.hpp"
#include "core/program_cache.hpp"
#include "core/program_options.hpp"
#include "core/sha256.hpp"
#include "cucore/program.h"

namespace cucore::core {

class Program final : public Object {
  public:
    // `code` of `code_type` (CXX, PTX or NVVM, not empty) with `options` (validated by the C ABI layer).
    static Ref<Program> create(std::string code, cucore_code_type_t code_type, ProgramOptions options);

    Program(std::string code, cucore_code_type_t code_type, ProgramOptions options, std::string arch,
            cucore_compiler_backend_t backend, int compiler_version) noexcept;

    // Compiles to `target` (through `cache` when given). Serialised per program.
    Ref<ObjectCode> compile(cucore_code_type_t target, const std::vector<std::string> &name_expressions,
                            ProgramCache *cache);
    // The cache key of such a compile (checks the target like compile).
    CacheKey cache_key(cucore_code_type_t target, const std::vector<std::string> &name_expressions) const;

    std::string log() const;
    // What became of the PCH of the last NVRTC compile (NONE before one).
    cucore_pch_status_t pch_status() const noexcept { return pch_status_.load(std::memory_order_acquire); }
    cucore_code_type_t code_type() const noexcept { return code_type_; }
    cucore_compiler_backend_t backend() const noexcept { return backend_; }
    const std::string &arch() const noexcept { return arch_; }
    const std::vector<std::string> &flags() const noexcept { return flags_; }
    // The flags one per line.
    std::string flags_text() const;

  private:
    void check_target(cucore_code_type_t target, const std::vector<std::string> &name_expressions) const;
    // `retry_pch`: whether a PCH heap too small may resize the heap and compile once more.
    CodeImage compile_nvrtc(cucore_code_type_t target, const std::vector<std::string> &name_expressions,
                            bool retry_pch = true);
    CodeImage compile_nvvm(cucore_code_type_t target);
    std::string link_ptx(const std::string &ptx);  // PTX -> cubin through the linker
    void set_log(std::string log);
    [[noreturn]] void compilation_failed(const std::string &what);

    const std::string code_;
    const cucore_code_type_t code_type_;
    const ProgramOptions options_;
    const std::string arch_;
    const std::vector<std::string> flags_;
    const cucore_compiler_backend_t backend_;
    const int compiler_version_;
    Sha256 key_prefix_;  // the key's fixed part, hashed once

    std::mutex compile_mutex_;
    std::atomic<cucore_pch_status_t> pch_status_{CUCORE_PCH_STATUS_NONE};
    mutable std::mutex log_mutex_;
    std::string log_;
};

// The version of a compiler (NVRTC, NVVM, NVJITLINK); NOT_SUPPORTED when missing.
int compiler_version(cucore_compiler_backend_t backend);

}  // namespace cucore::core
