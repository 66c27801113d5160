// The fake driver's process checkpointing (checkpoint.cpp): every live process
// (one with a /proc/<pid> entry) is a CUDA process the fake can checkpoint; it
// starts RUNNING and moves through the driver's states (lock: RUNNING ->
// LOCKED; checkpoint: LOCKED -> CHECKPOINTED; restore: CHECKPOINTED -> LOCKED;
// unlock: LOCKED -> RUNNING), a step from another state is
// CUDA_ERROR_ILLEGAL_STATE, a pid that is not positive or not a live process
// CUDA_ERROR_INVALID_VALUE, as are non-zero reserved fields. A checkpointed
// process used fake device 0; a restore's GPU pairs, when given, must map
// exactly that UUID onto a fake device's. The restore thread of process p is
// thread p + 1. Unit tests reach the controls below; the Python tests see the
// same behaviour through the shared library.
#pragma once

#include <cuda.h>

#include <vector>

namespace fake {

// Forgets every process's state (all RUNNING again).
void reset_checkpoints();
// The GPU pairs the last successful restore was given.
std::vector<CUcheckpointGpuPair> last_restore_pairs();
// What the last lock was asked to wait (timeoutMs).
unsigned last_lock_timeout();

}  // namespace fake
