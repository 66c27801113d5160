//! The memory resources of `include/cucore/memory.h` beyond device pools and legacy pinned
//! memory: pinned (page-locked host) pools, managed memory and virtual memory (cuda.core's
//! `PinnedMemoryResource`, `ManagedMemoryResource` and `VirtualMemoryResource`), with the
//! [`Location`] and [`Access`] they are described by, and peer access to a resource's memory.
//! User-defined resources are in `memory_user.rs`.

use std::ptr;

use cucore_sys as sys;

use crate::common::{check, Error, Result, Status};
use crate::device::Device;
use crate::memory::MemoryResource;

/// Where memory lives or is wanted (`cucore_location_t`, the driver's `CUmemLocation`).
/// "No location" (e.g. no preferred location) is `Option::None` wherever it can occur.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Location {
    /// The memory of the device with this ordinal.
    Device(i32),
    /// Host memory (any NUMA node).
    Host,
    /// Host memory of this NUMA node.
    HostNuma(i32),
    /// Host memory of the calling thread's NUMA node.
    HostNumaCurrent,
}

impl Location {
    /// The C struct.
    pub fn to_raw(self) -> sys::cucore_location_t {
        let (type_, id) = match self {
            Location::Device(ordinal) => (sys::CUCORE_LOCATION_DEVICE, ordinal),
            Location::Host => (sys::CUCORE_LOCATION_HOST, 0),
            Location::HostNuma(node) => (sys::CUCORE_LOCATION_HOST_NUMA, node),
            Location::HostNumaCurrent => (sys::CUCORE_LOCATION_HOST_NUMA_CURRENT, 0),
        };
        sys::cucore_location_t { type_, id }
    }

    /// The location of a C struct: `Ok(None)` for `CUCORE_LOCATION_NONE`, an error
    /// (`Status::Internal`) for a type this binding does not know (a newer library).
    pub fn from_raw(raw: sys::cucore_location_t) -> Result<Option<Location>> {
        Ok(Some(match raw.type_ {
            sys::CUCORE_LOCATION_NONE => return Ok(None),
            sys::CUCORE_LOCATION_DEVICE => Location::Device(raw.id),
            sys::CUCORE_LOCATION_HOST => Location::Host,
            sys::CUCORE_LOCATION_HOST_NUMA => Location::HostNuma(raw.id),
            sys::CUCORE_LOCATION_HOST_NUMA_CURRENT => Location::HostNumaCurrent,
            other => {
                return Err(Error::binding(
                    Status::Internal,
                    format!("the library returned a location of unknown type {} (id {})", other, raw.id),
                ))
            }
        }))
    }
}

/// The C struct of an optional location (`CUCORE_LOCATION_NONE` for None).
pub(crate) fn location_to_raw(location: Option<Location>) -> sys::cucore_location_t {
    location.map_or(sys::cucore_location_t { type_: sys::CUCORE_LOCATION_NONE, id: 0 }, Location::to_raw)
}

/// Access a device (or the host) is granted to memory (`cucore_access_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// No access (revokes).
    None,
    /// Read only (virtual memory resources only).
    Read,
    /// Read and write.
    ReadWrite,
}

impl Access {
    /// The raw `cucore_access_t`.
    pub fn raw(self) -> sys::cucore_access_t {
        match self {
            Access::None => sys::CUCORE_ACCESS_NONE,
            Access::Read => sys::CUCORE_ACCESS_READ,
            Access::ReadWrite => sys::CUCORE_ACCESS_READ_WRITE,
        }
    }

    /// The access of a raw `cucore_access_t`; an error (`Status::Internal`) for a value this
    /// binding does not know.
    pub fn from_raw(raw: sys::cucore_access_t) -> Result<Access> {
        match raw {
            sys::CUCORE_ACCESS_NONE => Ok(Access::None),
            sys::CUCORE_ACCESS_READ => Ok(Access::Read),
            sys::CUCORE_ACCESS_READ_WRITE => Ok(Access::ReadWrite),
            other => Err(Error::binding(Status::Internal, format!("the library returned an unknown access {}", other))),
        }
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
    /// Sets `ipc_enabled`.
    pub fn ipc_enabled(mut self, ipc_enabled: bool) -> Self {
        self.ipc_enabled = ipc_enabled;
        self
    }
    /// Sets `max_size`.
    pub fn max_size(mut self, bytes: u64) -> Self {
        self.max_size = bytes;
        self
    }
    /// Sets `release_threshold`.
    pub fn release_threshold(mut self, bytes: u64) -> Self {
        self.release_threshold = bytes;
        self
    }
    /// Sets `numa_id`.
    pub fn numa_id(mut self, node: i32) -> Self {
        self.numa_id = Some(node);
        self
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

/// Options of a managed memory resource (`cucore_managed_memory_resource_options_t`; cuda.core's
/// `ManagedMemoryResourceOptions`). The default (`use_pool` false) is memory from
/// `cuMemAllocManaged`: synchronous, no pool, and every advice works. `use_pool(true)` asks for
/// a managed memory pool, which is what cuda.core's `ManagedMemoryResource` always is:
/// stream-ordered (CUDA 13 drivers), but drivers may refuse advice on its memory (an H100 with
/// driver 580 answers `cuMemAdvise` with `Status::NotSupported` there; prefetch works).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ManagedMemoryResourceOptions {
    /// A managed memory pool (true) or `cuMemAllocManaged` (false, the default).
    pub use_pool: bool,
    /// The preferred location (the pool's, or advised on each allocation): a device, the host
    /// or a host NUMA node; None: none.
    pub preferred_location: Option<Location>,
    /// The most the pool may reserve, in bytes; 0: no limit. Pools only
    /// (`Status::InvalidArgument` without `use_pool`).
    pub max_size: u64,
    /// Bytes kept reserved after a synchronization; 0: the driver's default. Pools only.
    pub release_threshold: u64,
}

impl ManagedMemoryResourceOptions {
    /// Sets `use_pool`.
    pub fn use_pool(mut self, use_pool: bool) -> Self {
        self.use_pool = use_pool;
        self
    }
    /// Sets `preferred_location`.
    pub fn preferred_location(mut self, location: Location) -> Self {
        self.preferred_location = Some(location);
        self
    }
    /// Sets `max_size`.
    pub fn max_size(mut self, bytes: u64) -> Self {
        self.max_size = bytes;
        self
    }
    /// Sets `release_threshold`.
    pub fn release_threshold(mut self, bytes: u64) -> Self {
        self.release_threshold = bytes;
        self
    }

    /// The C struct.
    pub fn to_raw(&self) -> sys::cucore_managed_memory_resource_options_t {
        let mut o = sys::cucore_managed_memory_resource_options_t::INIT;
        o.use_pool = self.use_pool as u32;
        o.preferred_location = location_to_raw(self.preferred_location);
        o.max_size = self.max_size;
        o.release_threshold = self.release_threshold;
        o
    }
}

/// How a virtual memory resource rounds sizes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Granularity {
    /// The driver's recommended granularity (the default; faster).
    #[default]
    Recommended,
    /// The driver's minimum granularity (less memory wasted).
    Minimum,
}

/// Options of a virtual memory resource (`cucore_virtual_memory_resource_options_t`; cuda.core's
/// `VirtualMemoryResourceOptions`). The default is the C struct's all-zero default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct VirtualMemoryResourceOptions {
    /// Where the physical memory lives: None (the default) or `Location::Device(_)` for the
    /// resource's own device (the ordinal is not used), `Location::Host` or
    /// `Location::HostNuma(node)` for host memory.
    pub location: Option<Location>,
    /// How sizes are rounded.
    pub granularity: Granularity,
    /// The physical memory can be exported as a POSIX file descriptor.
    pub posix_fd_shareable: bool,
    /// Address space reserved per buffer, in bytes (rounded up to the granularity): a buffer
    /// grows in place up to it. 0: just the buffer's size.
    pub reserve_size: u64,
    /// Access granted to the resource's own device: None (the default) for `Access::ReadWrite`,
    /// or `Access::Read` (`Access::None` stands for the default too: the own device cannot be
    /// left without access). Other devices get none until [`MemoryResource::set_peer_access`]
    /// grants it.
    pub self_access: Option<Access>,
}

impl VirtualMemoryResourceOptions {
    /// Sets `location`.
    pub fn location(mut self, location: Location) -> Self {
        self.location = Some(location);
        self
    }
    /// Sets `granularity`.
    pub fn granularity(mut self, granularity: Granularity) -> Self {
        self.granularity = granularity;
        self
    }
    /// Sets `posix_fd_shareable`.
    pub fn posix_fd_shareable(mut self, shareable: bool) -> Self {
        self.posix_fd_shareable = shareable;
        self
    }
    /// Sets `reserve_size`.
    pub fn reserve_size(mut self, bytes: u64) -> Self {
        self.reserve_size = bytes;
        self
    }
    /// Sets `self_access`.
    pub fn self_access(mut self, access: Access) -> Self {
        self.self_access = Some(access);
        self
    }

    /// The C struct.
    pub fn to_raw(&self) -> sys::cucore_virtual_memory_resource_options_t {
        let mut o = sys::cucore_virtual_memory_resource_options_t::INIT;
        if let Some(location) = self.location {
            let raw = location.to_raw();
            o.location_type = raw.type_;
            o.location_id = raw.id;
        }
        o.minimum_granularity = (self.granularity == Granularity::Minimum) as u32;
        o.posix_fd_shareable = self.posix_fd_shareable as u32;
        o.reserve_size = self.reserve_size;
        o.self_access = self.self_access.map_or(sys::CUCORE_ACCESS_NONE, Access::raw);
        o
    }
}

impl MemoryResource {
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

    /// Managed (unified) memory of `device` (`cucore_managed_memory_resource_create`; cuda.core's
    /// `ManagedMemoryResource`): from `cuMemAllocManaged` (the default: synchronous, a stream is
    /// not needed) or, with [`ManagedMemoryResourceOptions::use_pool`], a new pool allocating in stream
    /// order on `device`'s streams. Its buffers are reachable from the host and every device and
    /// take advice, prefetches and discards ([`Buffer::advise`](crate::Buffer::advise), ...).
    /// Fails with `Status::NotSupported` without managed memory, or for a pool with a driver
    /// before CUDA 13; `Status::InvalidArgument` for `max_size` or `release_threshold` without
    /// `use_pool`.
    pub fn managed(device: &Device, options: ManagedMemoryResourceOptions) -> Result<MemoryResource> {
        let o = options.to_raw();
        let mut raw = ptr::null_mut();
        // SAFETY: as in `pinned_pool`.
        check(unsafe { sys::cucore_managed_memory_resource_create(device.as_raw(), &o, &mut raw) })?;
        MemoryResource::from_out(raw)
    }

    /// A virtual memory resource on `device` (`cucore_virtual_memory_resource_create`; cuda.core's
    /// `VirtualMemoryResource`): each buffer is physical memory mapped into an address range
    /// reserved for it, which it can [grow](crate::Buffer::grow) into. Allocation and release
    /// are synchronous (no stream needed). Sizes round up to the allocation granularity.
    pub fn virtual_memory(device: &Device, options: VirtualMemoryResourceOptions) -> Result<MemoryResource> {
        let o = options.to_raw();
        let mut raw = ptr::null_mut();
        // SAFETY: as in `pinned_pool`.
        check(unsafe { sys::cucore_virtual_memory_resource_create(device.as_raw(), &o, &mut raw) })?;
        MemoryResource::from_out(raw)
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
