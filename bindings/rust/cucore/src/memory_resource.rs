//! What every memory resource is and has (`include/cucore/memory_resource.h`): the
//! [`MemoryResource`] handle (cuda.core's `MemoryResource`) with `allocate`, `handle`, `kind`,
//! `device_id`, `accessibility`, `is_stream_ordered` and `is_managed`; the device's default
//! resource ([`Device::memory_resource`], [`Device::set_memory_resource`], [`Device::allocate`]);
//! the legacy pinned resource (cuda.core's `LegacyPinnedMemoryResource`); and the values the
//! other memory modules share: [`MemoryResourceKind`], [`Accessibility`], [`Location`] and
//! [`Access`].
//!
//! The other kinds of resources, one module each: `memory_pool` (device and pinned pools, pool
//! attributes, peer access), `managed_memory`, `virtual_memory`, `user_memory` (resources
//! written in Rust) and `graph_memory` (allocations inside graphs). What a resource allocates is a [`Buffer`] (`buffer`); strided copies are in
//! `copy_3d`.
//!
//! A [`MemoryResource`] allocates [`Buffer`]s. A buffer holds its resource, its deallocation
//! stream and (for a view) its parent, so drop order never matters: dropping a pool's
//! `MemoryResource` before its buffers is fine, the pool goes with the last of them.

use std::fmt;
use std::os::raw::{c_int, c_void};
use std::ptr::{self, NonNull};

use cucore_sys as sys;

use crate::buffer::Buffer;
use crate::common::{c_bool, check, Error, Result, Status};
use crate::device::Device;
use crate::stream::Stream;
use crate::user_memory;

/// What kind of memory a resource gives (`cucore_memory_resource_kind_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryResourceKind {
    /// A stream-ordered device memory pool (`cuMemAllocFromPoolAsync` / `cuMemFreeAsync`).
    Device,
    /// Page-locked host memory from `cuMemAllocHost` / `cuMemFreeHost` (synchronous).
    LegacyPinned,
    /// A stream-ordered pool of page-locked host memory
    /// ([`MemoryResource::pinned_pool`]).
    Pinned,
    /// Managed memory ([`MemoryResource::managed`]): `cuMemAllocManaged` (synchronous) or a
    /// stream-ordered pool.
    Managed,
    /// Virtual memory management, synchronous; its buffers can grow
    /// ([`MemoryResource::virtual_memory`]).
    Virtual,
    /// Memory from the user's callbacks ([`MemoryResource::user`]).
    User,
    /// A pool imported from another process: it maps that process's buffers and cannot allocate.
    Imported,
    /// The mapping of a GL buffer ([`GraphicsResource::map`](crate::GraphicsResource::map)): it
    /// owns the one mapped range, whose release unmaps it, and cannot allocate.
    Graphics,
    /// Graph memory ([`GraphMemoryResource`](crate::GraphMemoryResource)): it allocates only on a
    /// stream being captured into a graph.
    Graph,
    /// A value this binding does not know (a newer library), or `CUCORE_MEMORY_RESOURCE_UNSET`.
    Unknown(i32),
}

impl MemoryResourceKind {
    /// The kind of a raw `cucore_memory_resource_kind_t`.
    pub fn from_raw(raw: sys::cucore_memory_resource_kind_t) -> MemoryResourceKind {
        match raw {
            sys::CUCORE_MEMORY_RESOURCE_DEVICE => MemoryResourceKind::Device,
            sys::CUCORE_MEMORY_RESOURCE_LEGACY_PINNED => MemoryResourceKind::LegacyPinned,
            sys::CUCORE_MEMORY_RESOURCE_PINNED => MemoryResourceKind::Pinned,
            sys::CUCORE_MEMORY_RESOURCE_MANAGED => MemoryResourceKind::Managed,
            sys::CUCORE_MEMORY_RESOURCE_VIRTUAL => MemoryResourceKind::Virtual,
            sys::CUCORE_MEMORY_RESOURCE_USER => MemoryResourceKind::User,
            sys::CUCORE_MEMORY_RESOURCE_IMPORTED => MemoryResourceKind::Imported,
            sys::CUCORE_MEMORY_RESOURCE_GRAPHICS => MemoryResourceKind::Graphics,
            sys::CUCORE_MEMORY_RESOURCE_GRAPH => MemoryResourceKind::Graph,
            other => MemoryResourceKind::Unknown(other),
        }
    }

    /// The raw `cucore_memory_resource_kind_t`.
    pub fn raw(self) -> sys::cucore_memory_resource_kind_t {
        match self {
            MemoryResourceKind::Device => sys::CUCORE_MEMORY_RESOURCE_DEVICE,
            MemoryResourceKind::LegacyPinned => sys::CUCORE_MEMORY_RESOURCE_LEGACY_PINNED,
            MemoryResourceKind::Pinned => sys::CUCORE_MEMORY_RESOURCE_PINNED,
            MemoryResourceKind::Managed => sys::CUCORE_MEMORY_RESOURCE_MANAGED,
            MemoryResourceKind::Virtual => sys::CUCORE_MEMORY_RESOURCE_VIRTUAL,
            MemoryResourceKind::User => sys::CUCORE_MEMORY_RESOURCE_USER,
            MemoryResourceKind::Imported => sys::CUCORE_MEMORY_RESOURCE_IMPORTED,
            MemoryResourceKind::Graphics => sys::CUCORE_MEMORY_RESOURCE_GRAPHICS,
            MemoryResourceKind::Graph => sys::CUCORE_MEMORY_RESOURCE_GRAPH,
            MemoryResourceKind::Unknown(raw) => raw,
        }
    }

    /// Whether every resource of this kind allocates and frees in stream order (a stream is
    /// then required to allocate): the device, pinned and imported pools, and graph memory (on
    /// a capturing stream). `Managed` is not
    /// among them: a managed resource is stream-ordered only with a pool
    /// ([`MemoryResource::is_stream_ordered`] tells for a resource).
    pub fn is_stream_ordered(self) -> bool {
        matches!(
            self,
            MemoryResourceKind::Device
                | MemoryResourceKind::Pinned
                | MemoryResourceKind::Imported
                | MemoryResourceKind::Graph
        )
    }
}

/// Where a resource's memory can be used from (cuda.core's `is_device_accessible` and
/// `is_host_accessible`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Accessibility {
    /// Device code and device copies can use the memory.
    pub device: bool,
    /// The host can read and write the memory directly.
    pub host: bool,
}

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

/// A device ordinal as the C ABI gives it: -1 means host memory.
pub(crate) fn device_ordinal(id: c_int) -> Option<i32> {
    if id < 0 {
        None
    } else {
        Some(id)
    }
}

/// The raw handle of an optional stream (NULL for None).
pub(crate) fn stream_ptr(stream: Option<&Stream>) -> *mut sys::cucore_stream_t {
    stream.map_or(ptr::null_mut(), |s| s.as_raw())
}

// ---- MemoryResource ----------------------------------------------------------------------------

/// A memory resource (`cucore_memory_resource_t`) of any [kind](MemoryResourceKind): a device or
/// pinned pool, the legacy pinned host allocator, managed, virtual or user-defined memory (each
/// made by its module). `Clone` adds a reference, `Drop` gives it back; a pool this library
/// created is destroyed when the last `MemoryResource` and the last [`Buffer`] from it have gone.
pub struct MemoryResource {
    raw: NonNull<sys::cucore_memory_resource_t>,
}

handle_type!(MemoryResource, sys::cucore_memory_resource_t);
identity_eq!(MemoryResource);

impl MemoryResource {
    /// A resource of page-locked host memory (`cuMemAllocHost`) made in `device`'s primary
    /// context (`cucore_legacy_pinned_memory_resource_create`; cuda.core's
    /// `LegacyPinnedMemoryResource()`). Allocation and release are synchronous, so
    /// [`MemoryResource::allocate`] takes no stream (one given is ignored for ordering but becomes
    /// the buffer's deallocation stream).
    pub fn legacy_pinned(device: &Device) -> Result<MemoryResource> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_legacy_pinned_memory_resource_create(device.as_raw(), &mut raw) })?;
        MemoryResource::from_out(raw)
    }

    /// Allocates `size` bytes (0 is valid: a buffer with address 0), ordered on `stream`, which
    /// becomes the buffer's deallocation stream (`cucore_memory_resource_allocate`). A
    /// stream-ordered resource (a pool) needs a stream (`None` fails with
    /// `Status::InvalidArgument`), and it must belong to the resource's device. The memory is
    /// usable on `stream` right away, and on other streams once they wait for it. A failure of a
    /// Rust [`UserMemoryResource`](crate::UserMemoryResource) carries its message too.
    pub fn allocate(&self, size: u64, stream: Option<&Stream>) -> Result<Buffer> {
        let mut raw = ptr::null_mut();
        user_memory::forget_callback_error();
        // SAFETY: live handles (or NULL for the stream) and a valid out-pointer; we own the
        // reference it gives.
        check(unsafe { sys::cucore_memory_resource_allocate(self.as_raw(), size, stream_ptr(stream), &mut raw) })
            .map_err(user_memory::explain)?;
        Buffer::from_out(raw)
    }

    /// Returns `size` bytes at `address` to the resource, ordered on `stream` as
    /// [`allocate`](Self::allocate) orders (`cucore_memory_resource_deallocate`; cuda.core's
    /// `MemoryResource.deallocate`). Address 0 is a no-op.
    ///
    /// # Safety
    /// `address` is memory this resource allocated that the caller owns outside any [`Buffer`]
    /// (never a live buffer's: it would be freed twice), and nothing uses it afterwards.
    pub unsafe fn deallocate(&self, address: u64, size: u64, stream: Option<&Stream>) -> Result<()> {
        user_memory::forget_callback_error();
        // SAFETY: live handles (or NULL for the stream); the caller vouches for the address.
        check(unsafe { sys::cucore_memory_resource_deallocate(self.as_raw(), address, size, stream_ptr(stream)) })
            .map_err(user_memory::explain)
    }

    /// The raw `CUmemoryPool` of a pool resource, or null for a resource without a pool
    /// (legacy pinned, managed without a pool, virtual, user). Still owned by the resource.
    pub fn handle(&self) -> Result<*mut c_void> {
        let mut pool: *mut c_void = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_memory_resource_handle(self.as_raw(), &mut pool) })?;
        Ok(pool)
    }

    /// Whether this resource allocates and frees in stream order (a stream is then required to
    /// allocate): its kind's [`MemoryResourceKind::is_stream_ordered`], and managed resources
    /// with a pool ([`ManagedMemoryResourceOptions::use_pool`](crate::ManagedMemoryResourceOptions::use_pool)).
    pub fn is_stream_ordered(&self) -> Result<bool> {
        let mut ordered: c_int = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_memory_resource_is_stream_ordered(self.as_raw(), &mut ordered) })?;
        Ok(c_bool(ordered))
    }

    /// What kind of memory the resource gives.
    pub fn kind(&self) -> Result<MemoryResourceKind> {
        let mut k: sys::cucore_memory_resource_kind_t = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_memory_resource_kind(self.as_raw(), &mut k) })?;
        Ok(MemoryResourceKind::from_raw(k))
    }

    /// The ordinal of the device whose memory the resource gives, or None for host memory
    /// (cuda.core's `device_id`, which says -1 there).
    pub fn device_id(&self) -> Result<Option<i32>> {
        let mut id: c_int = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_memory_resource_device_id(self.as_raw(), &mut id) })?;
        Ok(device_ordinal(id))
    }

    /// Where the resource's memory can be used from.
    pub fn accessibility(&self) -> Result<Accessibility> {
        let (mut device, mut host): (c_int, c_int) = (0, 0);
        // SAFETY: a live handle and valid out-pointers.
        check(unsafe { sys::cucore_memory_resource_accessibility(self.as_raw(), &mut device, &mut host) })?;
        Ok(Accessibility { device: c_bool(device), host: c_bool(host) })
    }

    /// Whether the resource gives managed (unified) memory (cuda.core's `is_managed`).
    pub fn is_managed(&self) -> Result<bool> {
        let mut managed: c_int = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_memory_resource_is_managed(self.as_raw(), &mut managed) })?;
        Ok(c_bool(managed))
    }

    /// Whether device code can use the memory (cuda.core's `is_device_accessible`).
    pub fn is_device_accessible(&self) -> Result<bool> {
        Ok(self.accessibility()?.device)
    }

    /// Whether the host can use the memory directly (cuda.core's `is_host_accessible`).
    pub fn is_host_accessible(&self) -> Result<bool> {
        Ok(self.accessibility()?.host)
    }
}

impl fmt::Debug for MemoryResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.kind(), self.device_id()) {
            (Ok(kind), Ok(Some(id))) => write!(f, "MemoryResource({:?}, device {})", kind, id),
            (Ok(kind), Ok(None)) => write!(f, "MemoryResource({:?}, host)", kind),
            _ => write!(f, "MemoryResource(<library handle {:p}>)", self.as_raw()),
        }
    }
}

impl Device {
    /// The device's default memory resource (cuda.core's `Device.memory_resource`): the one set
    /// with [`Device::set_memory_resource`] (by any language), else one on the current pool.
    pub fn memory_resource(&self) -> Result<MemoryResource> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_device_get_memory_resource(self.as_raw(), &mut raw) })?;
        MemoryResource::from_out(raw)
    }

    /// Makes `resource` the device's default (process-wide), or `None` to return to the
    /// device's current pool.
    pub fn set_memory_resource(&self, resource: Option<&MemoryResource>) -> Result<()> {
        let raw = resource.map_or(ptr::null_mut(), |r| r.as_raw());
        // SAFETY: live handles (or NULL); the device takes its own reference.
        check(unsafe { sys::cucore_device_set_memory_resource(self.as_raw(), raw) })
    }

    /// Allocates `size` bytes from the device's default memory resource, ordered on `stream`
    /// (cuda.core's `Device.allocate(size, stream=...)`).
    pub fn allocate(&self, size: u64, stream: &Stream) -> Result<Buffer> {
        let mut raw = ptr::null_mut();
        user_memory::forget_callback_error();
        // SAFETY: live handles and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_device_allocate(self.as_raw(), size, stream.as_raw(), &mut raw) })
            .map_err(user_memory::explain)?;
        Buffer::from_out(raw)
    }
}
