//! What `include/cucore/device.h` holds: the driver and its devices.

use std::fmt;
use std::os::raw::{c_char, c_int};
use std::ptr::{self, NonNull};

use cucore_sys as sys;

use crate::common::{c_bool, check, owned_str, Result};
use crate::context::Context;
use crate::event::{Event, EventOptions};
use crate::stream::{Stream, StreamOptions, StreamPriorityRange};

/// The CUDA driver's version, e.g. 13000 for 13.0 (`cucore_driver_version`).
pub fn driver_version() -> Result<i32> {
    let mut v: c_int = 0;
    // SAFETY: a valid out-pointer.
    check(unsafe { sys::cucore_driver_version(&mut v) })?;
    Ok(v)
}

/// One GPU, by ordinal (`cucore_device_t`). There is one library object per ordinal for the life
/// of the process; getting one creates no CUDA context.
pub struct Device {
    raw: NonNull<sys::cucore_device_t>,
}

handle_type!(Device, sys::cucore_device_t);

impl PartialEq for Device {
    /// The same GPU: equal ordinals (as cuda.core compares devices). Each `Device::get` may
    /// hand out a distinct library object for the same ordinal.
    fn eq(&self, other: &Self) -> bool {
        if self.raw == other.raw {
            return true;
        }
        match (self.ordinal(), other.ordinal()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
    }
}
impl Eq for Device {}

impl std::hash::Hash for Device {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // Consistent with eq: devices with equal ordinals hash alike (a broken handle hashes
        // as ordinal -1).
        self.ordinal().unwrap_or(-1).hash(state)
    }
}

/// A compute capability, e.g. 9.0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ComputeCapability {
    pub major: i32,
    pub minor: i32,
}

impl ComputeCapability {
    /// The architecture as cuda.core's `Device.arch` names it, e.g. `"90"`.
    pub fn arch(&self) -> String {
        format!("{}{}", self.major, self.minor)
    }
}

impl fmt::Display for ComputeCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// A device's UUID. `Display` writes the usual 8-4-4-4-12 hex form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Uuid(pub [u8; 16]);

impl Uuid {
    /// The 16 bytes, as the driver reports them.
    pub fn bytes(&self) -> &[u8; 16] {
        &self.0
    }
}

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, b) in self.0.iter().enumerate() {
            if i == 4 || i == 6 || i == 8 || i == 10 {
                f.write_str("-")?;
            }
            write!(f, "{:02x}", b)?;
        }
        Ok(())
    }
}

/// A device attribute identifier (`cucore_device_attribute_t`): the driver's
/// `CUdevice_attribute` value. Every value of `include/cucore/device_attributes.h` is an
/// associated constant (`DeviceAttribute::MULTIPROCESSOR_COUNT`, ...); any other driver value
/// can be used as `DeviceAttribute(n)`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DeviceAttribute(pub i32);

impl DeviceAttribute {
    /// The header's name of the attribute without the `CUCORE_DEVICE_ATTRIBUTE_` prefix
    /// (the first name, where deprecated aliases share the value), or None.
    pub fn name(self) -> Option<&'static str> {
        crate::device_attributes::ALL.iter().find(|(_, a)| *a == self).map(|(n, _)| *n)
    }

    /// The attribute of a header name (without the prefix), e.g. `"WARP_SIZE"`.
    pub fn from_name(name: &str) -> Option<DeviceAttribute> {
        crate::device_attributes::ALL.iter().find(|(n, _)| *n == name).map(|(_, a)| *a)
    }

    /// Every name the header defines with its value, in header order (aliases included,
    /// `UNSET` first).
    pub fn all() -> &'static [(&'static str, DeviceAttribute)] {
        crate::device_attributes::ALL
    }

    /// The raw value.
    pub fn raw(self) -> i32 {
        self.0
    }
}

impl fmt::Debug for DeviceAttribute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "DeviceAttribute::{}", n),
            None => write!(f, "DeviceAttribute({})", self.0),
        }
    }
}

impl From<i32> for DeviceAttribute {
    fn from(v: i32) -> Self {
        DeviceAttribute(v)
    }
}

/// The properties most programs want, read in one call (`cucore_device_properties_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct DeviceProperties {
    pub ordinal: i32,
    pub compute_capability: ComputeCapability,
    pub multiprocessor_count: i32,
    pub max_threads_per_block: i32,
    pub max_threads_per_multiprocessor: i32,
    pub warp_size: i32,
    /// Bytes.
    pub max_shared_memory_per_block: i32,
    /// Bytes.
    pub max_shared_memory_per_multiprocessor: i32,
    /// Bytes.
    pub l2_cache_size: i32,
    pub clock_rate_khz: i32,
    pub memory_clock_rate_khz: i32,
    /// Bits.
    pub memory_bus_width: i32,
    pub pci_domain_id: i32,
    pub pci_bus_id: i32,
    pub pci_device_id: i32,
    /// An integrated GPU (shares memory with the host).
    pub integrated: bool,
    pub concurrent_managed_access: bool,
    pub memory_pools_supported: bool,
    pub cooperative_launch: bool,
    pub unified_addressing: bool,
    /// Bytes.
    pub total_memory: u64,
}

impl From<&sys::cucore_device_properties_t> for DeviceProperties {
    fn from(p: &sys::cucore_device_properties_t) -> Self {
        DeviceProperties {
            ordinal: p.ordinal,
            compute_capability: ComputeCapability {
                major: p.compute_capability_major,
                minor: p.compute_capability_minor,
            },
            multiprocessor_count: p.multiprocessor_count,
            max_threads_per_block: p.max_threads_per_block,
            max_threads_per_multiprocessor: p.max_threads_per_multiprocessor,
            warp_size: p.warp_size,
            max_shared_memory_per_block: p.max_shared_memory_per_block,
            max_shared_memory_per_multiprocessor: p.max_shared_memory_per_multiprocessor,
            l2_cache_size: p.l2_cache_size,
            clock_rate_khz: p.clock_rate_khz,
            memory_clock_rate_khz: p.memory_clock_rate_khz,
            memory_bus_width: p.memory_bus_width,
            pci_domain_id: p.pci_domain_id,
            pci_bus_id: p.pci_bus_id,
            pci_device_id: p.pci_device_id,
            integrated: c_bool(p.integrated),
            concurrent_managed_access: c_bool(p.concurrent_managed_access),
            memory_pools_supported: c_bool(p.memory_pools_supported),
            cooperative_launch: c_bool(p.cooperative_launch),
            unified_addressing: c_bool(p.unified_addressing),
            total_memory: p.total_memory,
        }
    }
}

impl Device {
    /// The number of CUDA devices; 0 when a driver is installed but no device is visible
    /// (`cucore_device_count`). Fails with `Status::NoDriver` without a driver.
    pub fn count() -> Result<usize> {
        let mut n: c_int = 0;
        // SAFETY: a valid out-pointer.
        check(unsafe { sys::cucore_device_count(&mut n) })?;
        Ok(n.max(0) as usize)
    }

    /// The device with `ordinal` (`cucore_device_get`).
    pub fn get(ordinal: i32) -> Result<Device> {
        let mut raw = ptr::null_mut();
        // SAFETY: a valid out-pointer; on success we own the reference it gives.
        check(unsafe { sys::cucore_device_get(ordinal, &mut raw) })?;
        Device::from_out(raw)
    }

    /// The device of the calling thread's current context, or device 0 when none is current
    /// (`cucore_device_get_current`; cuda.core's `Device()`).
    pub fn current() -> Result<Device> {
        let mut raw = ptr::null_mut();
        // SAFETY: as in `get`.
        check(unsafe { sys::cucore_device_get_current(&mut raw) })?;
        Device::from_out(raw)
    }

    /// Every device, by ordinal (cuda.core's `Device.get_all_devices()`).
    pub fn all() -> Result<Vec<Device>> {
        (0..Device::count()? as i32).map(Device::get).collect()
    }

    /// The device's ordinal (cuda.core's `device_id`).
    pub fn ordinal(&self) -> Result<i32> {
        let mut v: c_int = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_device_ordinal(self.as_raw(), &mut v) })?;
        Ok(v)
    }

    /// The raw `CUdevice`.
    pub fn handle(&self) -> Result<i32> {
        let mut v: c_int = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_device_handle(self.as_raw(), &mut v) })?;
        Ok(v)
    }

    /// The device's name, e.g. "NVIDIA H100 80GB HBM3".
    pub fn name(&self) -> Result<String> {
        let mut p: *const c_char = ptr::null();
        // SAFETY: a live handle and a valid out-pointer; the string lives as long as the process.
        check(unsafe { sys::cucore_device_name(self.as_raw(), &mut p) })?;
        // SAFETY: NUL-terminated, owned by the device object.
        Ok(unsafe { owned_str(p) })
    }

    /// The PCI bus id, `"dddd:bb:dd.f"` (hex).
    pub fn pci_bus_id(&self) -> Result<String> {
        let mut p: *const c_char = ptr::null();
        // SAFETY: as in `name`.
        check(unsafe { sys::cucore_device_pci_bus_id(self.as_raw(), &mut p) })?;
        // SAFETY: as in `name`.
        Ok(unsafe { owned_str(p) })
    }

    /// The device's UUID.
    pub fn uuid(&self) -> Result<Uuid> {
        let mut u = sys::cucore_uuid_t::default();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_device_uuid(self.as_raw(), &mut u) })?;
        Ok(Uuid(u.bytes))
    }

    /// The compute capability.
    pub fn compute_capability(&self) -> Result<ComputeCapability> {
        let (mut major, mut minor): (c_int, c_int) = (0, 0);
        // SAFETY: a live handle and valid out-pointers.
        check(unsafe { sys::cucore_device_compute_capability(self.as_raw(), &mut major, &mut minor) })?;
        Ok(ComputeCapability { major, minor })
    }

    /// The architecture, e.g. `"90"` (cuda.core's `Device.arch`).
    pub fn arch(&self) -> Result<String> {
        Ok(self.compute_capability()?.arch())
    }

    /// Total device memory in bytes.
    pub fn total_memory(&self) -> Result<u64> {
        let mut v: u64 = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_device_total_memory(self.as_raw(), &mut v) })?;
        Ok(v)
    }

    /// Any device attribute (`cucore_device_attribute`). An attribute the driver does not know
    /// fails with `Status::Cuda` (CUDA_ERROR_INVALID_VALUE); `DeviceAttribute::UNSET` (0) and
    /// negative values with `Status::InvalidArgument`.
    pub fn attribute(&self, attribute: DeviceAttribute) -> Result<i32> {
        let mut v: c_int = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_device_attribute(self.as_raw(), attribute.0, &mut v) })?;
        Ok(v)
    }

    /// The common properties, read in one call (`cucore_device_properties`).
    pub fn properties(&self) -> Result<DeviceProperties> {
        let mut p = sys::cucore_device_properties_t::INIT;
        // SAFETY: a live handle and a valid, correctly sized out-struct.
        check(unsafe { sys::cucore_device_properties(self.as_raw(), &mut p) })?;
        Ok(DeviceProperties::from(&p))
    }

    /// Retains the primary context and makes it current on the calling thread; the device keeps
    /// it retained for the life of the process, as cuda.core does (`cucore_device_set_current`).
    pub fn set_current(&self) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::cucore_device_set_current(self.as_raw()) })
    }

    /// Waits for all work in the device's primary context (cuda.core's `Device.sync()`).
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::cucore_device_synchronize(self.as_raw()) })
    }

    /// Whether this device can access `peer`'s memory directly.
    pub fn can_access_peer(&self, peer: &Device) -> Result<bool> {
        let mut v: c_int = 0;
        // SAFETY: live handles and a valid out-pointer.
        check(unsafe { sys::cucore_device_can_access_peer(self.as_raw(), peer.as_raw(), &mut v) })?;
        Ok(c_bool(v))
    }

    /// Lets kernels and copies in this device's primary context reach memory of `peer`'s
    /// primary context directly (`cucore_device_enable_peer_access`; `cuCtxEnablePeerAccess`):
    /// memory made by `cuMemAlloc` there and foreign pointers (pool and virtual memory are
    /// granted per resource: [`MemoryResource::set_peer_access`](crate::MemoryResource::set_peer_access)). Lasts
    /// until disabled or the process ends; enabling twice is no error. `Status::InvalidArgument`
    /// for `peer` == `self`, `Status::NotSupported` where [`can_access_peer`](Self::can_access_peer)
    /// says no. Copies between devices need none of this.
    pub fn enable_peer_access(&self, peer: &Device) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe { sys::cucore_device_enable_peer_access(self.as_raw(), peer.as_raw()) })
    }

    /// Withdraws what [`enable_peer_access`](Self::enable_peer_access) granted
    /// (`cuCtxDisablePeerAccess`); `Status::InvalidState` where it was not enabled.
    pub fn disable_peer_access(&self, peer: &Device) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe { sys::cucore_device_disable_peer_access(self.as_raw(), peer.as_raw()) })
    }

    /// The device's primary context, retained while the returned value (or anything made in
    /// it) lives (cuda.core's `Device.context`).
    pub fn primary_context(&self) -> Result<Context> {
        Context::primary(self)
    }

    /// A new stream in the primary context.
    pub fn create_stream(&self, options: StreamOptions) -> Result<Stream> {
        Stream::create(self, options)
    }

    /// A new event in the primary context.
    pub fn create_event(&self, options: EventOptions) -> Result<Event> {
        Event::create(self, options)
    }

    /// The legacy default stream bound to the primary context (cuda.core's
    /// `Device.default_stream` and `LEGACY_DEFAULT_STREAM`).
    pub fn default_stream(&self) -> Result<Stream> {
        Stream::legacy_default(self)
    }

    /// The range of stream priorities of this device (`cucore_stream_priority_range`).
    pub fn stream_priority_range(&self) -> Result<StreamPriorityRange> {
        let (mut least, mut greatest): (c_int, c_int) = (0, 0);
        // SAFETY: a live handle and valid out-pointers.
        check(unsafe { sys::cucore_stream_priority_range(self.as_raw(), &mut least, &mut greatest) })?;
        Ok(StreamPriorityRange { least, greatest })
    }
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.ordinal() {
            Ok(o) => write!(f, "Device({})", o),
            Err(_) => write!(f, "Device({:p})", self.as_raw()),
        }
    }
}
