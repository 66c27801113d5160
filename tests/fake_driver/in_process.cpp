// The in-process installation: the fake's table handed to libcucore through
// its substitute seam (the unit tests).
#include "state.hpp"

namespace fake {

void install(int devices, Streams streams) {
    detail::reset(devices, streams == Streams::worker_threads);
    {
        detail::Lock lock(detail::state().mutex);
        detail::state().recording = true;
    }
    cucore::driver::install_substitute(&table());  // calls cuInit
}

void uninstall() { cucore::driver::install_substitute(nullptr); }

void reinstall() { cucore::driver::install_substitute(&table()); }

}  // namespace fake
