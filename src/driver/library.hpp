// Run-time loading of a shared library (the CUDA driver now; NVRTC and
// nvJitLink later) from an environment override or a list of sonames.
#pragma once

#include <string>
#include <vector>

namespace cucore::driver {

struct LoadedLibrary {
    void *handle = nullptr;   // dlopen handle; never closed (entry points stay valid)
    std::string path;         // what was opened
    std::string failure;      // when handle is null: what was tried and why each failed
};

// Opens the path in environment variable `env_override` if it is set and
// non-empty (and nothing else), otherwise the first of `sonames` that loads.
// Never throws.
LoadedLibrary open_library(const char *env_override, const std::vector<std::string> &sonames);

// dlsym on a loaded library; nullptr when absent.
void *find_symbol(const LoadedLibrary &library, const char *name);

}  // namespace cucore::driver
