//! What `include/cucore/system.h` holds: system information through NVML (cuda.core's
//! `cuda.core.system`). NVML (`libnvidia-ml.so.1`, or `CUCORE_NVML_PATH`) is loaded by libcucore on
//! first use; without it every call fails with `Status::NotSupported` ("libnvidia-ml.so.1 could
//! not be loaded: ...") and the rest of the crate works.

use std::os::raw::{c_char, c_int, c_uint};
use std::ptr::{self, NonNull};

use cucore_sys as sys;

use crate::common::{c_string, check, owned_str, read_text, Result};
use crate::device::Device;

mod events;
mod kinds;
pub use events::{register_events, SystemEvent, SystemEventSet, EVENT_GPU_DRIVER_BIND, EVENT_GPU_DRIVER_UNBIND};
pub use kinds::{Control, Query, Relation, Text};

/// NVML's `nvmlReturn_t` of the last `cucore_system_*` call on this thread that failed in NVML
/// (`cucore_system_last_nvml_result`): 0 where that call failed before or outside NVML (or
/// succeeded), 12 (`NVML_ERROR_LIBRARY_NOT_FOUND`) without NVML, 13 (`FUNCTION_NOT_FOUND`) where
/// the installed NVML lacks the entry point, else NVML's answer (3 `NOT_SUPPORTED`, ...). Read it
/// right after the failing call, on the same thread, as the error's message is.
pub fn last_nvml_result() -> i32 {
    // SAFETY: reads this thread's slot only.
    unsafe { sys::cucore_system_last_nvml_result() }
}

/// The driver's branch, e.g. `"r580_00"` (cuda.core's `get_driver_branch`).
pub fn driver_branch() -> Result<String> {
    // SAFETY: the closure passes the buffer triple through unchanged.
    read_text(|b, c, l| unsafe { sys::cucore_system_driver_branch(b, c, l) })
}

/// The name of process `pid` (cuda.core's `get_process_name`); NVML's `NOT_FOUND` (status
/// `InvalidArgument`) where there is none.
pub fn process_name(pid: u32) -> Result<String> {
    // SAFETY: as in `driver_branch`.
    read_text(|b, c, l| unsafe { sys::cucore_system_process_name(pid, b, c, l) })
}

/// The GPUs with an affinity to CPU `cpu` (cuda.core's `Device.get_all_devices_with_cpu_affinity`).
pub fn devices_with_cpu_affinity(cpu: u32) -> Result<Vec<SystemDevice>> {
    // SAFETY: the closure passes the array triple through unchanged.
    devices(|d, c, n| unsafe { sys::cucore_system_devices_with_cpu_affinity(cpu, d, c, n) })
}

/// Reads a list of new device handles from a (devices, capacity, count) call, sized then read
/// (again if it grew in between).
fn devices<F>(mut call: F) -> Result<Vec<SystemDevice>>
where
    F: FnMut(*mut *mut sys::cucore_system_device_t, usize, *mut usize) -> sys::cucore_status_t,
{
    let mut count: usize = 0;
    check(call(ptr::null_mut(), 0, &mut count))?;
    loop {
        let capacity = count + 4;
        let mut raw = vec![ptr::null_mut(); capacity];
        check(call(raw.as_mut_ptr(), capacity, &mut count))?;
        // Every handle written is ours, kept or dropped (released) here.
        let got: Vec<SystemDevice> =
            raw.into_iter().take(count.min(capacity)).map(SystemDevice::from_out).collect::<Result<_>>()?;
        if count <= capacity {
            return Ok(got);
        }
    }
}

/// One event of a GPU ([`SystemDevice::wait_event`]; `cucore_system_event_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Event {
    /// NVML's `nvmlEventType` bit, e.g. 0x8 for an XID critical error.
    pub event_type: u64,
    /// The event's data (for an XID error, the XID).
    pub event_data: u64,
    /// The MIG GPU instance (`0xFFFFFFFF` where not MIG).
    pub gpu_instance_id: u32,
    /// The MIG compute instance.
    pub compute_instance_id: u32,
}

/// One field of [`SystemDevice::field_values`]: NVML's `NVML_FI_*` id and scope in; its sample,
/// value and NVML result out (`cucore_system_field_value_t`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FieldValue {
    /// The field's `NVML_FI_*` number.
    pub field_id: u32,
    /// Its scope (a link, an instance, ... as the field defines; 0 for most).
    pub scope_id: u32,
    /// When NVML sampled it, in microseconds since 1970.
    pub timestamp: i64,
    /// How long NVML took to update it, in microseconds.
    pub latency_usec: i64,
    /// The value, or `Err(nvmlReturn_t)` where NVML could not read this field.
    pub value: std::result::Result<FieldValueKind, i32>,
}

/// A field's value, of the type NVML gave it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FieldValueKind {
    /// A floating-point value.
    Double(f64),
    /// An unsigned value (NVML's unsigned int, long, long long or short).
    Unsigned(u64),
    /// A signed value (NVML's signed int or long long).
    Signed(i64),
}

impl FieldValue {
    /// Field `field_id` of scope 0, to be read.
    pub fn new(field_id: u32) -> FieldValue {
        FieldValue::scoped(field_id, 0)
    }

    /// Field `field_id` of scope `scope_id`, to be read.
    pub fn scoped(field_id: u32, scope_id: u32) -> FieldValue {
        FieldValue { field_id, scope_id, timestamp: 0, latency_usec: 0, value: Err(0) }
    }

    fn from_raw(c: &sys::cucore_system_field_value_t) -> FieldValue {
        let value = if c.result != 0 {
            Err(c.result)
        } else {
            Ok(match c.value_type {
                0 => FieldValueKind::Double(f64::from_bits(c.value)),
                4 => FieldValueKind::Signed(c.value as i64),
                5 => FieldValueKind::Signed(c.value as u32 as i32 as i64),
                _ => FieldValueKind::Unsigned(c.value),
            })
        };
        FieldValue {
            field_id: c.field_id,
            scope_id: c.scope_id,
            timestamp: c.timestamp,
            latency_usec: c.latency_usec,
            value,
        }
    }
}

fn raw_fields(fields: &[FieldValue]) -> Vec<sys::cucore_system_field_value_t> {
    fields
        .iter()
        .map(|f| sys::cucore_system_field_value_t {
            field_id: f.field_id,
            scope_id: f.scope_id,
            timestamp: 0,
            latency_usec: 0,
            value_type: 0,
            result: 0,
            value: 0,
        })
        .collect()
}

/// What [`ProcessInfo::used_gpu_memory`] reads where NVML cannot see a process's memory.
pub const MEMORY_NOT_AVAILABLE: u64 = u64::MAX;

/// The kernel-mode driver's version text, e.g. `"580.65.06"` (`cucore_system_driver_version`).
pub fn driver_version() -> Result<String> {
    // SAFETY: the closure passes the buffer triple through unchanged.
    read_text(|b, c, l| unsafe { sys::cucore_system_driver_version(b, c, l) })
}

/// The kernel-mode driver's version as numbers, e.g. `[580, 65, 6]` (cuda.core's
/// `get_kernel_mode_driver_version`).
pub fn kernel_mode_driver_version() -> Result<Vec<u32>> {
    Ok(numbers(&driver_version()?))
}

/// NVML's version text, e.g. `"13.580.65.06"` (`cucore_system_nvml_version`).
pub fn nvml_version() -> Result<String> {
    // SAFETY: as in `driver_version`.
    read_text(|b, c, l| unsafe { sys::cucore_system_nvml_version(b, c, l) })
}

/// The newest CUDA version the driver supports as NVML reports it, e.g. 13000.
pub fn cuda_driver_version() -> Result<i32> {
    let mut v: c_int = 0;
    // SAFETY: a valid out-pointer.
    check(unsafe { sys::cucore_system_cuda_driver_version(&mut v) })?;
    Ok(v)
}

/// The number of GPUs NVML sees (every GPU of the machine) (cuda.core's `get_num_devices`).
pub fn device_count() -> Result<u32> {
    let mut v: c_uint = 0;
    // SAFETY: a valid out-pointer.
    check(unsafe { sys::cucore_system_device_count(&mut v) })?;
    Ok(v)
}

fn numbers(text: &str) -> Vec<u32> {
    text.split('.').filter_map(|p| p.parse().ok()).collect()
}

/// A clock of a GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Clock {
    Graphics,
    Sm,
    Memory,
    Video,
}

impl Clock {
    fn raw(self) -> sys::cucore_system_clock_t {
        match self {
            Clock::Graphics => sys::CUCORE_SYSTEM_CLOCK_GRAPHICS,
            Clock::Sm => sys::CUCORE_SYSTEM_CLOCK_SM,
            Clock::Memory => sys::CUCORE_SYSTEM_CLOCK_MEMORY,
            Clock::Video => sys::CUCORE_SYSTEM_CLOCK_VIDEO,
        }
    }
}

/// Which processes may make contexts on a GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ComputeMode {
    Default,
    ExclusiveThread,
    Prohibited,
    ExclusiveProcess,
}

/// A GPU's PCI location and identifiers.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PciInfo {
    pub bus_id: String,
    pub domain: u32,
    pub bus: u32,
    pub device: u32,
    /// The device id (high 16 bits) and vendor id (low 16 bits).
    pub pci_device_id: u32,
    pub pci_subsystem_id: u32,
}

/// A GPU's memory now, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemoryInfo {
    pub total: u64,
    pub used: u64,
    pub free: u64,
}

/// The percentage of the last sample period a kernel ran (`gpu`) and memory was accessed (`memory`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Utilization {
    pub gpu: u32,
    pub memory: u32,
}

/// A process with a compute context on a GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProcessInfo {
    pub pid: u32,
    /// Bytes of device memory it uses, or [`MEMORY_NOT_AVAILABLE`].
    pub used_gpu_memory: u64,
}

/// One GPU as NVML sees it (`cucore_system_device_t`; cuda.core's `system.Device`), by NVML index,
/// UUID or PCI bus id. Name, UUID and PCI bus id are read once; the rest reads the GPU's state now.
pub struct SystemDevice {
    raw: NonNull<sys::cucore_system_device_t>,
}

handle_type!(SystemDevice, sys::cucore_system_device_t);

impl PartialEq for SystemDevice {
    /// The same GPU: equal UUIDs.
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw || matches!((self.uuid(), other.uuid()), (Ok(a), Ok(b)) if a == b)
    }
}
impl Eq for SystemDevice {}

impl std::fmt::Debug for SystemDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SystemDevice({:?})", self.uuid().unwrap_or_default())
    }
}

impl SystemDevice {
    /// The GPU of NVML index `index` (`cucore_system_device_get`).
    pub fn get(index: u32) -> Result<SystemDevice> {
        let mut raw = ptr::null_mut();
        // SAFETY: a valid out-pointer; on success we own the reference.
        check(unsafe { sys::cucore_system_device_get(index, &mut raw) })?;
        SystemDevice::from_out(raw)
    }

    /// The GPU whose UUID is `uuid` (`"GPU-..."`).
    pub fn by_uuid(uuid: &str) -> Result<SystemDevice> {
        let text = c_string(uuid, "uuid")?;
        let mut raw = ptr::null_mut();
        // SAFETY: a NUL-terminated string and a valid out-pointer.
        check(unsafe { sys::cucore_system_device_get_by_uuid(text.as_ptr(), &mut raw) })?;
        SystemDevice::from_out(raw)
    }

    /// The GPU at PCI bus id `pci_bus_id` (`"0000:65:00.0"`).
    pub fn by_pci_bus_id(pci_bus_id: &str) -> Result<SystemDevice> {
        let text = c_string(pci_bus_id, "pci_bus_id")?;
        let mut raw = ptr::null_mut();
        // SAFETY: as in `by_uuid`.
        check(unsafe { sys::cucore_system_device_get_by_pci_bus_id(text.as_ptr(), &mut raw) })?;
        SystemDevice::from_out(raw)
    }

    /// The NVML view of CUDA device `device` (matched by UUID).
    pub fn of(device: &Device) -> Result<SystemDevice> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_system_device_get_for_device(device.as_raw(), &mut raw) })?;
        SystemDevice::from_out(raw)
    }

    /// The CUDA device of this GPU (cuda.core's `to_cuda_device`); `Status::InvalidArgument`
    /// where CUDA does not see it (`CUDA_VISIBLE_DEVICES`).
    pub fn to_cuda_device(&self) -> Result<Device> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_system_device_to_device(self.as_raw(), &mut raw) })?;
        // SAFETY: the call succeeded, so `raw` is a device handle we own.
        Ok(unsafe { Device::adopt(raw) })
    }

    /// The NVML handle (`nvmlDevice_t`), for NVML calls this crate does not wrap.
    pub fn handle(&self) -> Result<*mut std::os::raw::c_void> {
        let mut v = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_system_device_handle(self.as_raw(), &mut v) })?;
        Ok(v)
    }

    /// The NVML index.
    pub fn index(&self) -> Result<u32> {
        self.reading(sys::cucore_system_device_index)
    }

    /// The product name.
    pub fn name(&self) -> Result<String> {
        self.text(sys::cucore_system_device_name)
    }

    /// The UUID as NVML writes it: `"GPU-"` and 32 hex digits in groups.
    pub fn uuid(&self) -> Result<String> {
        self.text(sys::cucore_system_device_uuid)
    }

    /// The PCI bus id as NVML writes it, `"00000000:65:00.0"`.
    pub fn pci_bus_id(&self) -> Result<String> {
        self.text(sys::cucore_system_device_pci_bus_id)
    }

    /// The PCI location and identifiers.
    pub fn pci_info(&self) -> Result<PciInfo> {
        let mut c = sys::cucore_system_pci_info_t::INIT;
        // SAFETY: a live handle and an initialised struct.
        check(unsafe { sys::cucore_system_device_pci_info(self.as_raw(), &mut c) })?;
        Ok(PciInfo {
            bus_id: self.pci_bus_id()?,
            domain: c.domain,
            bus: c.bus,
            device: c.device,
            pci_device_id: c.pci_device_id,
            pci_subsystem_id: c.pci_subsystem_id,
        })
    }

    /// Total, used and free device memory now.
    pub fn memory_info(&self) -> Result<MemoryInfo> {
        let mut c = sys::cucore_system_memory_info_t::INIT;
        // SAFETY: a live handle and an initialised struct.
        check(unsafe { sys::cucore_system_device_memory_info(self.as_raw(), &mut c) })?;
        Ok(MemoryInfo { total: c.total, used: c.used, free: c.free })
    }

    /// GPU and memory utilization over the last sample period.
    pub fn utilization(&self) -> Result<Utilization> {
        let (mut gpu, mut memory): (c_uint, c_uint) = (0, 0);
        // SAFETY: a live handle and valid out-pointers.
        check(unsafe { sys::cucore_system_device_utilization(self.as_raw(), &mut gpu, &mut memory) })?;
        Ok(Utilization { gpu, memory })
    }

    /// The GPU die's temperature in degrees Celsius.
    pub fn temperature(&self) -> Result<u32> {
        self.reading(sys::cucore_system_device_temperature)
    }

    /// The board's power draw now, in milliwatts.
    pub fn power_usage(&self) -> Result<u32> {
        self.reading(sys::cucore_system_device_power_usage)
    }

    /// The enforced power limit, in milliwatts.
    pub fn power_limit(&self) -> Result<u32> {
        self.reading(sys::cucore_system_device_power_limit)
    }

    /// The current frequency of `clock` in MHz.
    pub fn clock(&self, clock: Clock) -> Result<u32> {
        let mut v: c_uint = 0;
        // SAFETY: a live handle, a valid enum value and out-pointer.
        check(unsafe { sys::cucore_system_device_clock(self.as_raw(), clock.raw(), &mut v) })?;
        Ok(v)
    }

    /// The highest frequency of `clock` in MHz.
    pub fn max_clock(&self, clock: Clock) -> Result<u32> {
        let mut v: c_uint = 0;
        // SAFETY: as in `clock`.
        check(unsafe { sys::cucore_system_device_max_clock(self.as_raw(), clock.raw(), &mut v) })?;
        Ok(v)
    }

    /// The compute mode.
    pub fn compute_mode(&self) -> Result<ComputeMode> {
        let mut v: sys::cucore_compute_mode_t = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_system_device_compute_mode(self.as_raw(), &mut v) })?;
        Ok(match v {
            sys::CUCORE_COMPUTE_MODE_EXCLUSIVE_THREAD => ComputeMode::ExclusiveThread,
            sys::CUCORE_COMPUTE_MODE_PROHIBITED => ComputeMode::Prohibited,
            sys::CUCORE_COMPUTE_MODE_EXCLUSIVE_PROCESS => ComputeMode::ExclusiveProcess,
            _ => ComputeMode::Default,
        })
    }

    /// The processes with a compute context on this GPU now.
    pub fn compute_running_processes(&self) -> Result<Vec<ProcessInfo>> {
        loop {
            // The list may grow between the sizing call and the reading one.
            let mut count: usize = 0;
            // SAFETY: a live handle; no arrays with a capacity of 0.
            check(unsafe {
                sys::cucore_system_device_processes(self.as_raw(), ptr::null_mut(), ptr::null_mut(), 0, &mut count)
            })?;
            let capacity = count + 4;
            let (mut pids, mut used) = (vec![0u32; capacity], vec![0u64; capacity]);
            // SAFETY: arrays of `capacity` elements.
            check(unsafe {
                sys::cucore_system_device_processes(
                    self.as_raw(),
                    pids.as_mut_ptr(),
                    used.as_mut_ptr(),
                    capacity,
                    &mut count,
                )
            })?;
            if count <= capacity {
                return Ok((0..count).map(|i| ProcessInfo { pid: pids[i], used_gpu_memory: used[i] }).collect());
            }
        }
    }

    /// The values of numeric property `query` with its arguments (`cucore_system_device_query`;
    /// include/cucore/system.h documents each query's NVML call, arguments and values; NVML's enums
    /// and bit masks are its own numbers).
    pub fn query(&self, query: Query, arg0: i64, arg1: i64) -> Result<Vec<i64>> {
        let mut count: usize = 0;
        // SAFETY: a live handle; no array with a capacity of 0.
        check(unsafe {
            sys::cucore_system_device_query(self.as_raw(), query.raw(), arg0, arg1, ptr::null_mut(), 0, &mut count)
        })?;
        loop {
            let capacity = count + 8;
            let mut values = vec![0i64; capacity];
            // SAFETY: an array of `capacity` elements.
            check(unsafe {
                sys::cucore_system_device_query(
                    self.as_raw(),
                    query.raw(),
                    arg0,
                    arg1,
                    values.as_mut_ptr(),
                    capacity,
                    &mut count,
                )
            })?;
            if count <= capacity {
                values.truncate(count);
                return Ok(values);
            }
        }
    }

    /// Text property `text` with its argument (`cucore_system_device_text`), e.g. the serial number.
    pub fn text_of(&self, text: Text, arg: i64) -> Result<String> {
        // SAFETY: a live handle; the closure passes the buffer triple through unchanged.
        read_text(|b, c, l| unsafe { sys::cucore_system_device_text(self.as_raw(), text.raw(), arg, b, c, l) })
    }

    /// Makes change `control` with its arguments (`cucore_system_device_control`; most need root).
    pub fn control(&self, control: Control, arg0: i64, arg1: i64) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::cucore_system_device_control(self.as_raw(), control.raw(), arg0, arg1) })
    }

    /// The devices of `relation` to this one (`cucore_system_device_related`): the GPUs nearest at a
    /// topology level, a MIG device by index, or a MIG device's parent.
    pub fn related(&self, relation: Relation, arg: i64) -> Result<Vec<SystemDevice>> {
        // SAFETY: a live handle; the closure passes the array triple through unchanged.
        devices(|d, c, n| unsafe { sys::cucore_system_device_related(self.as_raw(), relation.raw(), arg, d, c, n) })
    }

    /// Reads several fields at once (`cucore_system_device_field_values`); each comes back with
    /// its value or NVML's error for it alone.
    pub fn field_values(&self, fields: &[FieldValue]) -> Result<Vec<FieldValue>> {
        let mut raw = raw_fields(fields);
        // SAFETY: a live handle and an array of `raw.len()` fields.
        check(unsafe { sys::cucore_system_device_field_values(self.as_raw(), raw.as_mut_ptr(), raw.len()) })?;
        Ok(raw.iter().map(FieldValue::from_raw).collect())
    }

    /// Resets fields (counters) to zero (`cucore_system_device_clear_field_values`).
    pub fn clear_field_values(&self, fields: &[FieldValue]) -> Result<()> {
        let raw = raw_fields(fields);
        // SAFETY: a live handle and an array of `raw.len()` fields.
        check(unsafe { sys::cucore_system_device_clear_field_values(self.as_raw(), raw.as_ptr(), raw.len()) })
    }

    /// The P2P status (NVML's `nvmlGpuP2PStatus_t`, 0 = OK) of capability `caps_index`
    /// (`nvmlGpuP2PCapsIndex_t`) between this GPU and `peer` (cuda.core's `get_p2p_status`).
    pub fn p2p_status(&self, peer: &SystemDevice, caps_index: i32) -> Result<i32> {
        let mut v: c_int = 0;
        // SAFETY: live handles and a valid out-pointer.
        check(unsafe { sys::cucore_system_device_p2p_status(self.as_raw(), peer.as_raw(), caps_index, &mut v) })?;
        Ok(v)
    }

    /// The nearest common ancestor of this GPU and `peer` in the PCI topology (NVML's
    /// `nvmlGpuTopologyLevel_t`: 0 internal .. 50 system; cuda.core's `get_topology_common_ancestor`).
    pub fn common_ancestor(&self, peer: &SystemDevice) -> Result<i32> {
        let mut v: c_int = 0;
        // SAFETY: live handles and a valid out-pointer.
        check(unsafe { sys::cucore_system_device_common_ancestor(self.as_raw(), peer.as_raw(), &mut v) })?;
        Ok(v)
    }

    /// Starts recording the events of bit mask `event_types` (NVML's `nvmlEventType` bits) in this
    /// handle's own event set (`cucore_system_device_register_events`; cuda.core's
    /// `Device.register_events`); a clone shares the set, another handle of the GPU has its own.
    pub fn register_events(&self, event_types: u64) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::cucore_system_device_register_events(self.as_raw(), event_types) })
    }

    /// Waits up to `timeout_ms` milliseconds (0: no limit) for the next recorded event
    /// (`cucore_system_device_wait_event`); `Status::NotReady` with [`last_nvml_result`] 10
    /// (`NVML_ERROR_TIMEOUT`) when none came in time.
    pub fn wait_event(&self, timeout_ms: u32) -> Result<(Event, Option<SystemDevice>)> {
        let mut event =
            sys::cucore_system_event_t { event_type: 0, event_data: 0, gpu_instance_id: 0, compute_instance_id: 0 };
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and valid out-pointers.
        check(unsafe { sys::cucore_system_device_wait_event(self.as_raw(), timeout_ms, &mut event, &mut raw) })?;
        let device = if raw.is_null() { None } else { Some(SystemDevice::from_out(raw)?) };
        Ok((
            Event {
                event_type: event.event_type,
                event_data: event.event_data,
                gpu_instance_id: event.gpu_instance_id,
                compute_instance_id: event.compute_instance_id,
            },
            device,
        ))
    }

    fn text(
        &self,
        f: unsafe extern "C" fn(*const sys::cucore_system_device_t, *mut *const c_char) -> sys::cucore_status_t,
    ) -> Result<String> {
        let mut p: *const c_char = ptr::null();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { f(self.as_raw(), &mut p) })?;
        // SAFETY: NUL-terminated, owned by the handle (which `self` keeps alive during the copy).
        Ok(unsafe { owned_str(p) })
    }

    fn reading(
        &self,
        f: unsafe extern "C" fn(*const sys::cucore_system_device_t, *mut c_uint) -> sys::cucore_status_t,
    ) -> Result<u32> {
        let mut v: c_uint = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { f(self.as_raw(), &mut v) })?;
        Ok(v)
    }
}

impl Device {
    /// This GPU as NVML sees it (cuda.core's `Device.to_system_device`), matched by UUID.
    pub fn to_system_device(&self) -> Result<SystemDevice> {
        SystemDevice::of(self)
    }
}
