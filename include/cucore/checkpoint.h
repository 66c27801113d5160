/* libcucore: checkpointing CUDA processes (cuda.core's cuda.core.checkpoint).
 *
 * A CUDA process, named by its process id, goes RUNNING -> (lock) LOCKED ->
 * (checkpoint) CHECKPOINTED -> (restore) LOCKED -> (unlock) RUNNING. Lock stops
 * its further CUDA calls (they block) and waits for its work; checkpoint moves
 * its device memory into host memory and releases its GPUs; restore brings them
 * back (onto other GPUs with a UUID map); unlock lets it run again. A CPU-side
 * tool (e.g. CRIU) saves the process between checkpoint and restore.
 *
 * These are the driver's cuCheckpointProcess* calls (driver 570 / CUDA 12.8 and
 * newer, Linux only; an older driver: NOT_SUPPORTED naming the entry point). A
 * step the driver refuses fails with its status and the driver's error name in
 * the message: NOT_SUPPORTED where the platform refuses (e.g. a container without
 * the needed privileges), INVALID_STATE for a step out of order
 * (CUDA_ERROR_ILLEGAL_STATE), NOT_READY when a lock's timeout passed (the process
 * is left RUNNING), INVALID_ARGUMENT for a process that is not a CUDA process.
 * No call waits without bound except a lock with a timeout of 0 (the driver's
 * "no timeout"): give one. A process must not lock itself.
 */
#ifndef CUCORE_CHECKPOINT_H
#define CUCORE_CHECKPOINT_H

#include "common.h"
#include "device.h"

/* Where a CUDA process is in the checkpoint cycle (CUprocessState). */
typedef enum cucore_process_state {
    CUCORE_PROCESS_STATE_UNSET = 0,
    CUCORE_PROCESS_STATE_RUNNING = 1,      /* running normally */
    CUCORE_PROCESS_STATE_LOCKED = 2,       /* its CUDA calls block */
    CUCORE_PROCESS_STATE_CHECKPOINTED = 3, /* its device memory is in host memory, its GPUs released */
    CUCORE_PROCESS_STATE_FAILED = 4,       /* an uncorrectable error during checkpoint or restore */
    CUCORE_PROCESS_STATE_FORCE_INT32 = 0x7fffffff
} cucore_process_state_t;

/* Options of cucore_process_lock. */
typedef struct cucore_process_lock_options {
    uint32_t struct_size; /* set by CUCORE_PROCESS_LOCK_OPTIONS_INIT */
    uint32_t timeout_ms;  /* give up after this many milliseconds (NOT_READY, process left RUNNING); 0: wait
                             until the process's work is done, without bound */
} cucore_process_lock_options_t;

#define CUCORE_PROCESS_LOCK_OPTIONS_INIT {(uint32_t)sizeof(cucore_process_lock_options_t), 0}

/* One GPU remapped by a restore: the process's GPU `old_uuid` comes back on `new_uuid`. */
typedef struct cucore_gpu_mapping {
    cucore_uuid_t old_uuid; /* a GPU the process used when it was checkpointed */
    cucore_uuid_t new_uuid; /* the GPU to restore it onto: the same chip, with enough memory */
} cucore_gpu_mapping_t;

CUCORE_EXTERN_C_BEGIN

/* The state of process `pid` in *state.
 * Errors: INVALID_ARGUMENT (NULL; pid not positive; not a CUDA process),
 * NOT_SUPPORTED (driver without checkpointing), NO_DRIVER, CUDA. */
CUCORE_API cucore_status_t cucore_process_get_state(int pid, cucore_process_state_t *state);

/* The thread id of process `pid`'s CUDA restore thread in *thread_id (what a
 * checkpointing tool waits on during a restore).
 * Errors: as cucore_process_get_state. */
CUCORE_API cucore_status_t cucore_process_restore_thread_id(int pid, int *thread_id);

/* Locks RUNNING process `pid` (LOCKED on success): its further CUDA calls block
 * and its submitted work completes. `options` may be NULL (no timeout).
 * Errors: INVALID_ARGUMENT (pid not positive; pid is this process, which would
 * wait for itself; bad options; not a CUDA process), INVALID_STATE (not RUNNING),
 * NOT_READY (the timeout passed; the process stays RUNNING), NOT_SUPPORTED, NO_DRIVER, CUDA. */
CUCORE_API cucore_status_t cucore_process_lock(int pid, const cucore_process_lock_options_t *options);

/* Checkpoints LOCKED process `pid` (CHECKPOINTED on success): its device memory
 * goes to host memory and its GPUs are released.
 * Errors: INVALID_ARGUMENT (pid not positive; not a CUDA process), INVALID_STATE
 * (not LOCKED), NOT_SUPPORTED (the platform refuses), NO_DRIVER, CUDA. */
CUCORE_API cucore_status_t cucore_process_checkpoint(int pid);

/* Restores CHECKPOINTED process `pid` (LOCKED on success), onto the same GPUs,
 * or with `count` mappings (which must name every GPU it was checkpointed on;
 * `mappings` is only read and may be NULL when count is 0).
 * Errors: INVALID_ARGUMENT (pid not positive; NULL mappings with a count; a
 * mapping the driver refuses), INVALID_STATE (not CHECKPOINTED), NOT_SUPPORTED,
 * NO_DRIVER, CUDA. */
CUCORE_API cucore_status_t cucore_process_restore(int pid, const cucore_gpu_mapping_t *mappings, size_t count);

/* Unlocks LOCKED process `pid` (RUNNING on success).
 * Errors: INVALID_ARGUMENT (pid not positive; not a CUDA process), INVALID_STATE
 * (not LOCKED), NOT_SUPPORTED, NO_DRIVER, CUDA. */
CUCORE_API cucore_status_t cucore_process_unlock(int pid);

CUCORE_EXTERN_C_END

#endif /* CUCORE_CHECKPOINT_H */
