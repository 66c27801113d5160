// Process checkpointing. Stubs until the checkpoint work fills them in.
#include "entry_points.hpp"

namespace fake::detail {

CUresult f_cuCheckpointProcessLock(int, CUcheckpointLockArgs *) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuCheckpointProcessCheckpoint(int, CUcheckpointCheckpointArgs *) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuCheckpointProcessRestore(int, CUcheckpointRestoreArgs *) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuCheckpointProcessUnlock(int, CUcheckpointUnlockArgs *) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuCheckpointProcessGetState(int, CUprocessState *) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuCheckpointProcessGetRestoreThreadId(int, int *) { return CUDA_ERROR_NOT_SUPPORTED; }

}  // namespace fake::detail
