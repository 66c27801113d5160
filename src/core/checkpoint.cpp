#include "core/checkpoint.hpp"

#include <cuda.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "core/error.hpp"
#include "driver/driver.hpp"

namespace cucore::core::checkpoint {
namespace {

// The status of a refused step, and what the driver's result means for a
// checkpoint call (the driver's own descriptions are generic).
[[noreturn]] void refuse(CUresult result, const char *entry_point, int pid) {
    cucore_status_t status = status_of(result);
    std::string hint;
    switch (result) {
        case CUDA_ERROR_ILLEGAL_STATE:
            status = CUCORE_ERROR_INVALID_STATE;
            hint = " (process " + std::to_string(pid) + " is not in the state this step needs: lock needs RUNNING, "
                   "checkpoint LOCKED, restore CHECKPOINTED, unlock LOCKED)";
            break;
        case CUDA_ERROR_INVALID_VALUE:
        case CUDA_ERROR_NOT_INITIALIZED:
            status = CUCORE_ERROR_INVALID_ARGUMENT;
            hint = " (process " + std::to_string(pid) + " is not a CUDA process this driver can checkpoint, or an "
                   "argument was refused)";
            break;
        case CUDA_ERROR_NOT_READY:
            hint = " (the lock's timeout passed before process " + std::to_string(pid) +
                   "'s work completed; it is still RUNNING)";
            break;
        case CUDA_ERROR_NOT_SUPPORTED:
            hint = " (the driver or platform does not support checkpointing here)";
            break;
        default: break;
    }
    throw Error(status, std::string(entry_point) + " failed for process " + std::to_string(pid) + ": " +
                            cuda_error_name(result) + hint,
                static_cast<int>(result));
}

#define CUCORE_CHECKPOINT_CALL(pid, name, ...)                                  \
    do {                                                                        \
        const CUresult result_ = CUCORE_DRIVER(name)(pid, __VA_ARGS__);         \
        if (result_ != CUDA_SUCCESS) refuse(result_, #name, pid);               \
    } while (0)

}  // namespace

cucore_process_state_t state(int pid) {
    CUprocessState state = CU_PROCESS_STATE_RUNNING;
    CUCORE_CHECKPOINT_CALL(pid, cuCheckpointProcessGetState, &state);
    switch (state) {
        case CU_PROCESS_STATE_RUNNING: return CUCORE_PROCESS_STATE_RUNNING;
        case CU_PROCESS_STATE_LOCKED: return CUCORE_PROCESS_STATE_LOCKED;
        case CU_PROCESS_STATE_CHECKPOINTED: return CUCORE_PROCESS_STATE_CHECKPOINTED;
        case CU_PROCESS_STATE_FAILED: return CUCORE_PROCESS_STATE_FAILED;
        default:
            throw Error(CUCORE_ERROR_CUDA, "cuCheckpointProcessGetState answered a state this library does not "
                                           "know (" + std::to_string(static_cast<int>(state)) + ")");
    }
}

int restore_thread_id(int pid) {
    int thread_id = 0;
    CUCORE_CHECKPOINT_CALL(pid, cuCheckpointProcessGetRestoreThreadId, &thread_id);
    return thread_id;
}

void lock(int pid, unsigned timeout_ms) {
    // The lock waits for the process's work and blocks its CUDA calls: this
    // thread's own would never come back.
    if (pid == static_cast<int>(getpid()))
        throw_invalid_argument("argument 'pid' (" + std::to_string(pid) + ") is this process: a process cannot "
                               "lock itself (its own CUDA calls would block); lock it from another process");
    CUcheckpointLockArgs args;
    std::memset(&args, 0, sizeof args);
    args.timeoutMs = timeout_ms;
    CUCORE_CHECKPOINT_CALL(pid, cuCheckpointProcessLock, &args);
}

void checkpoint(int pid) {
    CUcheckpointCheckpointArgs args;
    std::memset(&args, 0, sizeof args);
    CUCORE_CHECKPOINT_CALL(pid, cuCheckpointProcessCheckpoint, &args);
}

void restore(int pid, const std::vector<cucore_gpu_mapping_t> &mappings) {
    std::vector<CUcheckpointGpuPair> pairs(mappings.size());
    for (size_t i = 0; i < mappings.size(); ++i) {
        static_assert(sizeof pairs[i].oldUuid.bytes == sizeof mappings[i].old_uuid.bytes, "UUID sizes agree");
        std::memcpy(pairs[i].oldUuid.bytes, mappings[i].old_uuid.bytes, sizeof pairs[i].oldUuid.bytes);
        std::memcpy(pairs[i].newUuid.bytes, mappings[i].new_uuid.bytes, sizeof pairs[i].newUuid.bytes);
    }
    CUcheckpointRestoreArgs args;
    std::memset(&args, 0, sizeof args);
    args.gpuPairs = pairs.empty() ? nullptr : pairs.data();
    args.gpuPairsCount = static_cast<unsigned>(pairs.size());
    CUCORE_CHECKPOINT_CALL(pid, cuCheckpointProcessRestore, &args);
}

void unlock(int pid) {
    CUcheckpointUnlockArgs args;
    std::memset(&args, 0, sizeof args);
    CUCORE_CHECKPOINT_CALL(pid, cuCheckpointProcessUnlock, &args);
}

}  // namespace cucore::core::checkpoint
