// The in-process installation: the fake's table handed to libcucore through
// its substitute seam (the unit tests).
#include "core/event_cache.hpp"
#include "state.hpp"

namespace fake {

void install(int devices, Streams streams) {
    detail::reset(devices, streams == Streams::worker_threads);
    {
        detail::Lock lock(detail::state().mutex);
        detail::state().recording = true;
    }
    // Contexts that outlive the previous installation (a pinned primary context) keep spare events the new
    // fake does not know: forgotten, not destroyed.
    cucore::core::EventCache::forget_all();
    cucore::driver::install_substitute(&table());  // calls cuInit
}

void uninstall() { cucore::driver::install_substitute(nullptr); }

void reinstall() { cucore::driver::install_substitute(&table()); }

}  // namespace fake
