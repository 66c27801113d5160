//! What `include/cucore/checkpoint.h` holds: checkpointing CUDA processes (cuda.core's
//! `cuda.core.checkpoint.Process`). A step the driver or the platform refuses fails with its
//! reason: `Status::NotSupported` (platform), `Status::InvalidState` (out of order),
//! `Status::NotReady` (a lock's timeout passed).

use std::os::raw::c_int;

use cucore_sys as sys;

use crate::common::{check, Result};
use crate::device::Uuid;

/// Where a CUDA process is in the checkpoint cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProcessState {
    Running,
    Locked,
    Checkpointed,
    Failed,
}

/// A CUDA process by process id. Holds only the pid: the driver keeps the state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Process {
    pid: i32,
}

impl Process {
    /// The process `pid` (checked by each call: it must be positive).
    pub fn new(pid: i32) -> Process {
        Process { pid }
    }

    /// The process id.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// The state the driver reports now (`cucore_process_get_state`).
    pub fn state(&self) -> Result<ProcessState> {
        let mut v: sys::cucore_process_state_t = 0;
        // SAFETY: a valid out-pointer.
        check(unsafe { sys::cucore_process_get_state(self.pid, &mut v) })?;
        Ok(match v {
            sys::CUCORE_PROCESS_STATE_LOCKED => ProcessState::Locked,
            sys::CUCORE_PROCESS_STATE_CHECKPOINTED => ProcessState::Checkpointed,
            sys::CUCORE_PROCESS_STATE_FAILED => ProcessState::Failed,
            _ => ProcessState::Running,
        })
    }

    /// The thread id of the process's CUDA restore thread.
    pub fn restore_thread_id(&self) -> Result<i32> {
        let mut v: c_int = 0;
        // SAFETY: a valid out-pointer.
        check(unsafe { sys::cucore_process_restore_thread_id(self.pid, &mut v) })?;
        Ok(v)
    }

    /// Running -> locked; waits at most `timeout_ms` (0: without bound) for the process's work.
    pub fn lock(&self, timeout_ms: u32) -> Result<()> {
        let mut o = sys::cucore_process_lock_options_t::INIT;
        o.timeout_ms = timeout_ms;
        // SAFETY: an initialised options struct.
        check(unsafe { sys::cucore_process_lock(self.pid, &o) })
    }

    /// Locked -> checkpointed.
    pub fn checkpoint(&self) -> Result<()> {
        // SAFETY: no pointers.
        check(unsafe { sys::cucore_process_checkpoint(self.pid) })
    }

    /// Checkpointed -> locked, onto the same GPUs, or remapped by `(old, new)` UUID pairs (which
    /// must name every GPU the process was checkpointed on).
    pub fn restore(&self, gpu_mapping: &[(Uuid, Uuid)]) -> Result<()> {
        let pairs: Vec<sys::cucore_gpu_mapping_t> = gpu_mapping
            .iter()
            .map(|(old, new)| sys::cucore_gpu_mapping_t {
                old_uuid: sys::cucore_uuid_t { bytes: old.0 },
                new_uuid: sys::cucore_uuid_t { bytes: new.0 },
            })
            .collect();
        let p = if pairs.is_empty() { std::ptr::null() } else { pairs.as_ptr() };
        // SAFETY: `pairs.len()` mappings at `p` (or NULL with 0).
        check(unsafe { sys::cucore_process_restore(self.pid, p, pairs.len()) })
    }

    /// Locked -> running.
    pub fn unlock(&self) -> Result<()> {
        // SAFETY: no pointers.
        check(unsafe { sys::cucore_process_unlock(self.pid) })
    }
}
