// Checkpointing CUDA processes by process id (the driver's cuCheckpointProcess*
// calls). No object: the process is the state, and the driver keeps it; these
// functions translate the driver's refusals into statuses with its reason.
#pragma once

#include <vector>

#include "cucore/checkpoint.h"

namespace cucore::core::checkpoint {

cucore_process_state_t state(int pid);
int restore_thread_id(int pid);
// Throws INVALID_ARGUMENT for this process's own pid (it would wait for itself).
void lock(int pid, unsigned timeout_ms);
void checkpoint(int pid);
void restore(int pid, const std::vector<cucore_gpu_mapping_t> &mappings);
void unlock(int pid);

}  // namespace cucore::core::checkpoint
