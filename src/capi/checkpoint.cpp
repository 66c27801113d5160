// C ABI: checkpointing CUDA processes.
#include "capi/capi.hpp"
#include "core/checkpoint.hpp"

using namespace cucore;

namespace {

int check_pid(int pid) {
    if (pid <= 0) core::throw_invalid_argument("argument 'pid' (" + std::to_string(pid) + ") must be positive");
    return pid;
}

}  // namespace

extern "C" {

cucore_status_t cucore_process_get_state(int pid, cucore_process_state_t *state) {
    return capi::guarded(__func__, [&] {
        cucore_process_state_t &result = capi::out(state, "state");
        result = core::checkpoint::state(check_pid(pid));
    });
}

cucore_status_t cucore_process_restore_thread_id(int pid, int *thread_id) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(thread_id, "thread_id");
        result = core::checkpoint::restore_thread_id(check_pid(pid));
    });
}

cucore_status_t cucore_process_lock(int pid, const cucore_process_lock_options_t *options) {
    return capi::guarded(__func__, [&] {
        check_pid(pid);
        const cucore_process_lock_options_t o =
            capi::read_options(options, cucore_process_lock_options_t(CUCORE_PROCESS_LOCK_OPTIONS_INIT), "options");
        core::checkpoint::lock(pid, o.timeout_ms);
    });
}

cucore_status_t cucore_process_checkpoint(int pid) {
    return capi::guarded(__func__, [&] { core::checkpoint::checkpoint(check_pid(pid)); });
}

cucore_status_t cucore_process_restore(int pid, const cucore_gpu_mapping_t *mappings, size_t count) {
    return capi::guarded(__func__, [&] {
        check_pid(pid);
        capi::require_array(mappings, count, "mappings");
        if (count > UINT32_MAX) core::throw_invalid_argument("argument 'count' is too large");
        core::checkpoint::restore(pid, std::vector<cucore_gpu_mapping_t>(mappings, mappings + count));
    });
}

cucore_status_t cucore_process_unlock(int pid) {
    return capi::guarded(__func__, [&] { core::checkpoint::unlock(check_pid(pid)); });
}

}  // extern "C"
