//! Memory pools (`include/cucore/memory_pool.h`): the device's current pool and new device pools
//! (cuda.core's `DeviceMemoryResource` and `DeviceMemoryResourceOptions`), pinned (page-locked
//! host) pools (cuda.core's `PinnedMemoryResource` and `PinnedMemoryResourceOptions`), their
//! [`PoolAttribute`]s and trimming, and peer access to a resource's memory (pools and virtual
//! memory resources). Every pool is a [`MemoryResource`] that allocates in stream order.

use std::os::raw::c_int;
use std::ptr;

use cucore_sys as sys;

use crate::common::{check, Result};
use crate::device::Device;
use crate::memory_resource::{Access, MemoryResource};

/// The attributes of a memory pool (`cucore_pool_attribute_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum PoolAttribute {
    /// 0/1, settable.
    ReuseFollowEventDependencies = sys::CUCORE_POOL_ATTRIBUTE_REUSE_FOLLOW_EVENT_DEPENDENCIES,
    /// 0/1, settable.
    ReuseAllowOpportunistic = sys::CUCORE_POOL_ATTRIBUTE_REUSE_ALLOW_OPPORTUNISTIC,
    /// 0/1, settable.
    ReuseAllowInternalDependencies = sys::CUCORE_POOL_ATTRIBUTE_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
    /// Bytes kept reserved after a synchronization; settable.
    ReleaseThreshold = sys::CUCORE_POOL_ATTRIBUTE_RELEASE_THRESHOLD,
    /// Bytes reserved from the system now.
    ReservedMemCurrent = sys::CUCORE_POOL_ATTRIBUTE_RESERVED_MEM_CURRENT,
    /// High-water mark of the above; reset by setting 0.
    ReservedMemHigh = sys::CUCORE_POOL_ATTRIBUTE_RESERVED_MEM_HIGH,
    /// Bytes allocated and not yet freed.
    UsedMemCurrent = sys::CUCORE_POOL_ATTRIBUTE_USED_MEM_CURRENT,
    /// High-water mark of the above; reset by setting 0.
    UsedMemHigh = sys::CUCORE_POOL_ATTRIBUTE_USED_MEM_HIGH,
}

/// Options of a new device memory pool (`cucore_device_memory_resource_options_t`; cuda.core's
/// `DeviceMemoryResourceOptions`). Zero means "default" for every field. Build with
/// `DeviceMemoryResourceOptions::default().max_size(..).ipc_enabled(true)`, or set the fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DeviceMemoryResourceOptions {
    /// The most the pool may reserve, in bytes; 0: no limit (the driver's default).
    pub max_size: u64,
    /// Bytes the pool keeps reserved after a synchronization instead of returning them to the
    /// system; 0: the driver's default (return everything).
    pub release_threshold: u64,
    /// Shareable with other processes (Linux; see [`ipc`](crate::ipc)).
    pub ipc_enabled: bool,
}

impl DeviceMemoryResourceOptions {
    setters! {
        /// Sets `max_size`.
        max_size: u64 => |bytes: u64| bytes;
        /// Sets `release_threshold`.
        release_threshold: u64 => |bytes: u64| bytes;
        /// Sets `ipc_enabled`.
        ipc_enabled: bool => |ipc_enabled: bool| ipc_enabled;
    }

    /// The C struct.
    pub fn to_raw(&self) -> sys::cucore_device_memory_resource_options_t {
        let mut o = sys::cucore_device_memory_resource_options_t::INIT;
        o.max_size = self.max_size;
        o.release_threshold = self.release_threshold;
        o.ipc_enabled = self.ipc_enabled as u32;
        o
    }
}

/// Options of a pinned (page-locked host) memory pool
/// (`cucore_pinned_memory_resource_options_t`; cuda.core's `PinnedMemoryResourceOptions`).
/// Build with `PinnedMemoryResourceOptions::default().max_size(..).numa_id(..)`, or set the fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PinnedMemoryResourceOptions {
    /// Shareable with other processes (then on a NUMA node: node 0 unless `numa_id` says).
    pub ipc_enabled: bool,
    /// The most the pool may reserve, in bytes; 0: no limit.
    pub max_size: u64,
    /// Bytes kept reserved after a synchronization; 0: the driver's default.
    pub release_threshold: u64,
    /// The host NUMA node the memory comes from (>= 0); None (the default): any host memory.
    pub numa_id: Option<i32>,
}

impl PinnedMemoryResourceOptions {
    setters! {
        /// Sets `ipc_enabled`.
        ipc_enabled: bool => |ipc_enabled: bool| ipc_enabled;
        /// Sets `max_size`.
        max_size: u64 => |bytes: u64| bytes;
        /// Sets `release_threshold`.
        release_threshold: u64 => |bytes: u64| bytes;
        /// Sets `numa_id`.
        numa_id: i32 => |node: i32| Some(node);
    }

    /// The C struct.
    pub fn to_raw(&self) -> sys::cucore_pinned_memory_resource_options_t {
        let mut o = sys::cucore_pinned_memory_resource_options_t::INIT;
        o.ipc_enabled = self.ipc_enabled as u32;
        o.max_size = self.max_size;
        o.release_threshold = self.release_threshold;
        if let Some(node) = self.numa_id {
            o.use_numa_id = 1;
            o.numa_id = node;
        }
        o
    }
}

impl MemoryResource {
    /// The resource of `device`'s current memory pool (`cuDeviceGetMemPool`;
    /// `cucore_device_memory_resource_get_default`; cuda.core's `DeviceMemoryResource(dev)`).
    /// The pool is not owned: dropping the resource never destroys it. Fails with
    /// `Status::NotSupported` where the device has no memory pools.
    pub fn device_default(device: &Device) -> Result<MemoryResource> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_device_memory_resource_get_default(device.as_raw(), &mut raw) })?;
        MemoryResource::from_out(raw)
    }

    /// A new device memory pool on `device` (`cuMemPoolCreate`;
    /// `cucore_device_memory_resource_create`; cuda.core's
    /// `DeviceMemoryResource(dev, DeviceMemoryResourceOptions(...))`), destroyed when the
    /// resource and every buffer from it are dropped.
    pub fn device_pool(device: &Device, options: DeviceMemoryResourceOptions) -> Result<MemoryResource> {
        let o = options.to_raw();
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle, valid options and out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_device_memory_resource_create(device.as_raw(), &o, &mut raw) })?;
        MemoryResource::from_out(raw)
    }

    /// The resource of the driver's current pool of page-locked host memory (`cuMemGetMemPool`;
    /// `cucore_pinned_memory_resource_get_default`; cuda.core's `PinnedMemoryResource()`),
    /// allocating in stream order on `device`'s streams (granted access). Not owned: dropping the
    /// resource never destroys the pool. `Status::NotSupported` before CUDA 13.
    pub fn pinned_default(device: &Device) -> Result<MemoryResource> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_pinned_memory_resource_get_default(device.as_raw(), &mut raw) })?;
        MemoryResource::from_out(raw)
    }

    /// A new pool of page-locked host memory (`cucore_pinned_memory_resource_create`; cuda.core's
    /// `PinnedMemoryResource`), allocating in stream order on streams of `device`, which gets
    /// read-write access (other devices: [`MemoryResource::set_peer_access`]). Its buffers are
    /// host memory (`device_id()` None) reachable from the host and the device. Fails with
    /// `Status::NotSupported` where the driver has no host memory pools.
    pub fn pinned_pool(device: &Device, options: PinnedMemoryResourceOptions) -> Result<MemoryResource> {
        let o = options.to_raw();
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle, valid options and out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_pinned_memory_resource_create(device.as_raw(), &o, &mut raw) })?;
        MemoryResource::from_out(raw)
    }

    /// A pool attribute (the reuse flags read 0 or 1); `Status::NotSupported` without a pool.
    pub fn pool_attribute(&self, attribute: PoolAttribute) -> Result<u64> {
        let mut value: u64 = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_memory_resource_pool_attribute(self.as_raw(), attribute as sys::cucore_pool_attribute_t, &mut value) })?;
        Ok(value)
    }

    /// Sets a settable pool attribute (the high-water marks take only 0, which resets them).
    pub fn set_pool_attribute(&self, attribute: PoolAttribute, value: u64) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe {
            sys::cucore_memory_resource_set_pool_attribute(self.as_raw(), attribute as sys::cucore_pool_attribute_t, value)
        })
    }

    /// Whether the last reference destroys the resource's pool (`cucore_memory_resource_owns_pool`;
    /// cuda.core's `is_handle_owned`): false for a device's current pool and without a pool.
    pub fn owns_pool(&self) -> Result<bool> {
        let mut owns: c_int = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_memory_resource_owns_pool(self.as_raw(), &mut owns) })?;
        Ok(owns != 0)
    }

    /// Returns unused reserved memory to the system, keeping at least `min_bytes_to_keep`.
    pub fn trim(&self, min_bytes_to_keep: u64) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::cucore_memory_resource_trim(self.as_raw(), min_bytes_to_keep) })
    }

    /// Grants `peer` access to the memory of this pool (device or pinned) or virtual memory
    /// resource, for the buffers that exist and those to come
    /// (`cucore_memory_resource_set_peer_access`; cuda.core's `peer_accessible_by`).
    /// `Access::None` revokes; `Access::Read` is for virtual memory resources only. The
    /// resource's own device cannot be revoked (`Status::InvalidArgument`); other kinds of
    /// resources, and devices that cannot reach each other's memory, are `Status::NotSupported`.
    pub fn set_peer_access(&self, peer: &Device, access: Access) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe { sys::cucore_memory_resource_set_peer_access(self.as_raw(), peer.as_raw(), access.raw()) })
    }

    /// The access `peer` has to this resource's memory (`cucore_memory_resource_peer_access`).
    pub fn peer_access(&self, peer: &Device) -> Result<Access> {
        let mut raw: sys::cucore_access_t = sys::CUCORE_ACCESS_NONE;
        // SAFETY: live handles and a valid out-pointer.
        check(unsafe { sys::cucore_memory_resource_peer_access(self.as_raw(), peer.as_raw(), &mut raw) })?;
        Access::from_raw(raw)
    }
}
