// Program options: a deep copy of cucore_program_options_t (its field values checked by the C
// ABI layer, capi/program.cpp), which of them each compiler takes, and the compiler flags they become. The flag list is built once, when a program is
// created; it is what the compiler gets and what the cache key hashes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cucore/program.h"

namespace cucore::core {

struct ProgramOptions {
    std::string name = "default_program";
    std::string arch;  // normalised ("sm_90", "compute_90") or "" for the default
    std::string std;
    std::vector<std::string> defines, undefines, include_paths, pre_includes;
    std::vector<std::string> header_names, header_sources;
    uint32_t debug = 0, lineinfo = 0;
    cucore_toggle_t device_code_optimize = CUCORE_TOGGLE_DEFAULT;
    uint32_t use_fast_math = 0;
    cucore_toggle_t ftz = CUCORE_TOGGLE_DEFAULT, prec_sqrt = CUCORE_TOGGLE_DEFAULT,
                    prec_div = CUCORE_TOGGLE_DEFAULT, fma = CUCORE_TOGGLE_DEFAULT;
    uint32_t extra_device_vectorization = 0, max_register_count = 0, relocatable_device_code = 0,
             extensible_whole_program = 0, link_time_optimization = 0, device_as_default_execution_space = 0,
             disable_warnings = 0, brief_diagnostics = 0, no_display_error_number = 0;
    std::vector<uint32_t> diag_error, diag_suppress, diag_warn;
    uint32_t pch = 0;
    std::string create_pch, use_pch, pch_dir;
    std::vector<std::string> ptxas_options, extra_options;
};

// Refuses (INVALID_ARGUMENT, naming 'options.<field>') an option the compiler of `code_type` does not take:
// NVRTC (CXX) takes them all; libNVVM and the PTX linker a few (debug, lineinfo, ftz, prec_*, fma; PTX also
// max_register_count and ptxas_options; NVVM device_code_optimize and link_time_optimization).
void check_options_apply(const ProgramOptions &options, cucore_code_type_t code_type);

// `arch` if set, else "sm_XY" of the device of the calling thread's current
// context, else of device 0 (NO_DRIVER / NO_DEVICE when there is none).
std::string resolve_arch(const std::string &arch);

// The flags for the program's compiler, with `arch` resolved: NVRTC flags for
// CXX, libNVVM flags for NVVM, nvJitLink flags for PTX (what its linker gets).
std::vector<std::string> program_flags(const ProgramOptions &options, cucore_code_type_t code_type,
                                       const std::string &arch);

}  // namespace cucore::core
