// Process checkpointing: the driver's state machine per process (checkpoint.hpp).
#include "checkpoint.hpp"

#include <sys/stat.h>

#include <map>
#include <mutex>
#include <string>

#include "entry_points.hpp"

namespace fake {
namespace {

struct Checkpoints {
    std::mutex mutex;
    std::map<int, CUprocessState> states;  // absent: RUNNING
    std::vector<CUcheckpointGpuPair> last_pairs;
    unsigned last_timeout = 0;
};
Checkpoints &checkpoints() {
    static Checkpoints c;
    return c;
}

bool live_process(int pid) {
    struct stat info;
    return pid > 0 && stat(("/proc/" + std::to_string(pid)).c_str(), &info) == 0;
}

template <class T>
bool zeroed(const T &value) {
    const unsigned char *bytes = reinterpret_cast<const unsigned char *>(&value);
    for (size_t i = 0; i < sizeof value; ++i)
        if (bytes[i]) return false;
    return true;
}

// The fake device 0's UUID (devices.cpp: byte i of device d is d * 16 + i).
bool is_device_uuid(const CUuuid &uuid, int device) {
    for (int i = 0; i < 16; ++i)
        if (static_cast<unsigned char>(uuid.bytes[i]) != static_cast<unsigned char>(device * 16 + i)) return false;
    return true;
}

// Moves `pid` from `from` to `to`, or says why not.
CUresult step(int pid, CUprocessState from, CUprocessState to) {
    if (!live_process(pid)) return CUDA_ERROR_INVALID_VALUE;
    Checkpoints &c = checkpoints();
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.states.find(pid);
    const CUprocessState now = it == c.states.end() ? CU_PROCESS_STATE_RUNNING : it->second;
    if (now != from) return CUDA_ERROR_ILLEGAL_STATE;
    c.states[pid] = to;
    return CUDA_SUCCESS;
}

}  // namespace

void reset_checkpoints() {
    std::lock_guard<std::mutex> lock(checkpoints().mutex);
    checkpoints().states.clear();
    checkpoints().last_pairs.clear();
    checkpoints().last_timeout = 0;
}

std::vector<CUcheckpointGpuPair> last_restore_pairs() {
    std::lock_guard<std::mutex> lock(checkpoints().mutex);
    return checkpoints().last_pairs;
}

unsigned last_lock_timeout() {
    std::lock_guard<std::mutex> lock(checkpoints().mutex);
    return checkpoints().last_timeout;
}

namespace detail {

CUresult f_cuCheckpointProcessLock(int pid, CUcheckpointLockArgs *args) {
    if (args && (args->reserved0 || !zeroed(args->reserved1))) return CUDA_ERROR_INVALID_VALUE;
    const CUresult result = step(pid, CU_PROCESS_STATE_RUNNING, CU_PROCESS_STATE_LOCKED);
    if (result == CUDA_SUCCESS) {
        std::lock_guard<std::mutex> lock(checkpoints().mutex);
        checkpoints().last_timeout = args ? args->timeoutMs : 0;
    }
    return result;
}

CUresult f_cuCheckpointProcessCheckpoint(int pid, CUcheckpointCheckpointArgs *args) {
    if (args && !zeroed(*args)) return CUDA_ERROR_INVALID_VALUE;
    return step(pid, CU_PROCESS_STATE_LOCKED, CU_PROCESS_STATE_CHECKPOINTED);
}

CUresult f_cuCheckpointProcessRestore(int pid, CUcheckpointRestoreArgs *args) {
    std::vector<CUcheckpointGpuPair> pairs;
    if (args) {
        if (!zeroed(args->reserved) || args->reserved1) return CUDA_ERROR_INVALID_VALUE;
        if (args->gpuPairsCount && !args->gpuPairs) return CUDA_ERROR_INVALID_VALUE;
        pairs.assign(args->gpuPairs, args->gpuPairs + args->gpuPairsCount);
        // A map must name every checkpointed GPU (device 0) once, onto a fake device.
        if (!pairs.empty()) {
            if (pairs.size() != 1 || !is_device_uuid(pairs[0].oldUuid, 0)) return CUDA_ERROR_INVALID_VALUE;
            if (!is_device_uuid(pairs[0].newUuid, 0) && !is_device_uuid(pairs[0].newUuid, 1))
                return CUDA_ERROR_INVALID_VALUE;
        }
    }
    const CUresult result = step(pid, CU_PROCESS_STATE_CHECKPOINTED, CU_PROCESS_STATE_LOCKED);
    if (result == CUDA_SUCCESS) {
        std::lock_guard<std::mutex> lock(checkpoints().mutex);
        checkpoints().last_pairs = pairs;
    }
    return result;
}

CUresult f_cuCheckpointProcessUnlock(int pid, CUcheckpointUnlockArgs *args) {
    if (args && !zeroed(*args)) return CUDA_ERROR_INVALID_VALUE;
    return step(pid, CU_PROCESS_STATE_LOCKED, CU_PROCESS_STATE_RUNNING);
}

CUresult f_cuCheckpointProcessGetState(int pid, CUprocessState *state) {
    if (!state || !live_process(pid)) return CUDA_ERROR_INVALID_VALUE;
    Checkpoints &c = checkpoints();
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.states.find(pid);
    *state = it == c.states.end() ? CU_PROCESS_STATE_RUNNING : it->second;
    return CUDA_SUCCESS;
}

CUresult f_cuCheckpointProcessGetRestoreThreadId(int pid, int *tid) {
    if (!tid || !live_process(pid)) return CUDA_ERROR_INVALID_VALUE;
    *tid = pid + 1;
    return CUDA_SUCCESS;
}

}  // namespace detail
}  // namespace fake
