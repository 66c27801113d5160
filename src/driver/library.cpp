#include "driver/library.hpp"

#include <dlfcn.h>

#include <cstdlib>

namespace cucore::driver {

LoadedLibrary open_library(const char *env_override, const std::vector<std::string> &sonames) {
    LoadedLibrary result;
    std::vector<std::string> candidates;
    const char *override_path = env_override ? std::getenv(env_override) : nullptr;
    if (override_path && *override_path) candidates.emplace_back(override_path);
    candidates.insert(candidates.end(), sonames.begin(), sonames.end());

    for (const std::string &candidate : candidates) {
        dlerror();
        void *handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle) {
            result.handle = handle;
            result.path = candidate;
            result.failure.clear();
            return result;
        }
        const char *why = dlerror();
        if (!result.failure.empty()) result.failure += "; ";
        result.failure += candidate + " (" + (why ? why : "unknown error") + ")";
    }
    result.failure = "tried " + result.failure;
    if (env_override) result.failure += std::string("; set ") + env_override + " to a full path to override";
    return result;
}

void *find_symbol(const LoadedLibrary &library, const char *name) {
    if (!library.handle) return nullptr;
    return dlsym(library.handle, name);
}

}  // namespace cucore::driver
