// libcucore C++ façade: checkpointing CUDA processes (over cucore/checkpoint.h;
// cuda.core: cuda.core.checkpoint.Process). Each step throws Error with the
// driver's reason where it refuses: NOT_SUPPORTED (platform), INVALID_STATE
// (out of order), NOT_READY (a lock's timeout passed).
#ifndef CUCORE_CHECKPOINT_HPP
#define CUCORE_CHECKPOINT_HPP

#include <vector>

#include "checkpoint.h"
#include "common.hpp"
#include "device.hpp"

namespace cucore {

using GpuMapping = cucore_gpu_mapping_t;

// A CUDA process by process id. Holds nothing but the pid: the driver keeps the state.
class Process {
public:
    explicit Process(int pid) noexcept : pid_(pid) {}

    int pid() const noexcept { return pid_; }

    cucore_process_state_t state() const {
        cucore_process_state_t v = CUCORE_PROCESS_STATE_UNSET;
        detail::check(cucore_process_get_state(pid_, &v));
        return v;
    }
    int restore_thread_id() const {
        int v = 0;
        detail::check(cucore_process_restore_thread_id(pid_, &v));
        return v;
    }
    // RUNNING -> LOCKED; waits at most `timeout_ms` (0: without bound) for its work.
    void lock(unsigned timeout_ms = 0) const {
        cucore_process_lock_options_t o = CUCORE_PROCESS_LOCK_OPTIONS_INIT;
        o.timeout_ms = timeout_ms;
        detail::check(cucore_process_lock(pid_, &o));
    }
    // LOCKED -> CHECKPOINTED.
    void checkpoint() const { detail::check(cucore_process_checkpoint(pid_)); }
    // CHECKPOINTED -> LOCKED, onto the same GPUs or remapped (every checkpointed GPU named).
    void restore(const std::vector<GpuMapping> &mappings = {}) const {
        detail::check(cucore_process_restore(pid_, mappings.empty() ? nullptr : mappings.data(), mappings.size()));
    }
    // LOCKED -> RUNNING.
    void unlock() const { detail::check(cucore_process_unlock(pid_)); }

private:
    int pid_;
};

// One remapping of a restore: the process's GPU `old_device` comes back on `new_device`.
inline GpuMapping gpu_mapping(const Uuid &old_device, const Uuid &new_device) noexcept {
    GpuMapping m{};
    m.old_uuid = old_device.value;
    m.new_uuid = new_device.value;
    return m;
}

} // namespace cucore

#endif // CUCORE_CHECKPOINT_HPP
