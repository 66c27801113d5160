#include "driver/library.hpp"

#include <dlfcn.h>

#include <cstdlib>

namespace cucore::driver {

LoadedLibrary open_library(const char *env_override, const std::vector<std::string> &sonames) {
    LoadedLibrary result;
    // An explicit override is the only candidate: a user who names a library
    // wants that one, and silently loading another would hide their mistake.
    std::vector<std::string> candidates;
    const char *override_path = env_override ? std::getenv(env_override) : nullptr;
    const bool overridden = override_path && *override_path;
    if (overridden)
        candidates.emplace_back(override_path);
    else
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
    if (overridden)
        result.failure = std::string("tried ") + env_override + "=" + result.failure + "; unset " + env_override +
                         " to search the usual names";
    else
        result.failure = "tried " + result.failure +
                         (env_override ? std::string("; set ") + env_override + " to a full path to override" : "");
    return result;
}

void *find_symbol(const LoadedLibrary &library, const char *name) {
    if (!library.handle) return nullptr;
    return dlsym(library.handle, name);
}

}  // namespace cucore::driver
