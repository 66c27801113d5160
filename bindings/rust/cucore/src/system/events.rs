//! System events (`cucore_system_register_events`; cuda.core's `system.register_events`): GPUs
//! bound to or unbound from the driver, recorded in a set from its registration on. Linux only.

use std::ptr::{self, NonNull};

use cucore_sys as sys;

use crate::common::{check, Result};

/// A GPU was unbound from the driver (`nvmlSystemEventTypeGpuDriverUnbind`).
pub const EVENT_GPU_DRIVER_UNBIND: u64 = sys::CUCORE_SYSTEM_EVENT_GPU_DRIVER_UNBIND;
/// A GPU was bound to the driver (`nvmlSystemEventTypeGpuDriverBind`).
pub const EVENT_GPU_DRIVER_BIND: u64 = sys::CUCORE_SYSTEM_EVENT_GPU_DRIVER_BIND;

/// One system event (cuda.core's `SystemEvent`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SystemEvent {
    /// Its type: [`EVENT_GPU_DRIVER_UNBIND`] or [`EVENT_GPU_DRIVER_BIND`].
    pub event_type: u64,
    /// The GPU's PCI location as NVML packs it: `domain << 16 | bus << 8 | device`.
    pub gpu_id: u32,
}

impl SystemEvent {
    /// The GPU's PCI bus id as NVML writes it (`"00000000:65:00.0"`), for
    /// [`SystemDevice::by_pci_bus_id`](crate::system::SystemDevice::by_pci_bus_id).
    pub fn pci_bus_id(&self) -> String {
        format!("{:08X}:{:02X}:{:02X}.0", self.gpu_id >> 16, (self.gpu_id >> 8) & 0xFF, self.gpu_id & 0xFF)
    }
}

/// A set recording system events (`cucore_system_event_set_t`; cuda.core's
/// `RegisteredSystemEvents`); NVML's set is freed with the last clone.
pub struct SystemEventSet {
    raw: NonNull<sys::cucore_system_event_set_t>,
}

handle_type!(SystemEventSet, sys::cucore_system_event_set_t);

impl SystemEventSet {
    /// A new set recording the events of bit mask `event_types` ([`EVENT_GPU_DRIVER_UNBIND`],
    /// [`EVENT_GPU_DRIVER_BIND`]); events before the call are not recorded. `Status::NotSupported`
    /// where NVML cannot record them (no NVML, an older NVML, a virtual machine).
    pub fn register(event_types: u64) -> Result<SystemEventSet> {
        let mut raw = ptr::null_mut();
        // SAFETY: a valid out-pointer; on success we own the reference.
        check(unsafe { sys::cucore_system_register_events(event_types, &mut raw) })?;
        SystemEventSet::from_out(raw)
    }

    /// Up to `capacity` (at least 1) recorded events, waiting up to `timeout_ms` milliseconds
    /// (0: no limit) for the first (`cucore_system_event_set_wait`); `Status::NotReady` with
    /// [`last_nvml_result`](crate::system::last_nvml_result) 10 (`NVML_ERROR_TIMEOUT`) when none
    /// came in time.
    pub fn wait(&self, timeout_ms: u32, capacity: usize) -> Result<Vec<SystemEvent>> {
        let mut types = vec![0u64; capacity];
        let mut gpus = vec![0u32; capacity];
        let mut count = 0usize;
        // SAFETY: a live handle and arrays of `capacity` elements.
        check(unsafe {
            sys::cucore_system_event_set_wait(
                self.as_raw(),
                timeout_ms,
                types.as_mut_ptr(),
                gpus.as_mut_ptr(),
                capacity,
                &mut count,
            )
        })?;
        Ok((0..count.min(capacity)).map(|i| SystemEvent { event_type: types[i], gpu_id: gpus[i] }).collect())
    }
}

impl std::fmt::Debug for SystemEventSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SystemEventSet({:p})", self.raw)
    }
}

/// A new set recording the events of bit mask `event_types` (cuda.core's
/// `system.register_events`); the same as [`SystemEventSet::register`].
pub fn register_events(event_types: u64) -> Result<SystemEventSet> {
    SystemEventSet::register(event_types)
}
