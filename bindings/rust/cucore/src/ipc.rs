//! What `include/cucore/ipc.h` holds: sharing memory pools, buffers and events between processes
//! (Linux; cuda.core's `IPCAllocationHandle`, `Buffer.get_ipc_descriptor` and
//! `Event.get_ipc_descriptor`).
//!
//! ```no_run
//! use cucore::{ipc, Device, DeviceMemoryResourceOptions, EventOptions, MemoryResource, StreamOptions};
//!
//! # fn main() -> cucore::Result<()> {
//! // The exporting process.
//! let dev = Device::get(0)?;
//! let s = dev.create_stream(StreamOptions::default())?;
//! let pool = MemoryResource::device_pool(&dev, DeviceMemoryResourceOptions::default().ipc_enabled(true))?;
//! let shared = ipc::export_memory_resource(&pool)?;   // owns a file descriptor: send it (SCM_RIGHTS)
//! let buf = pool.allocate(1 << 20, Some(&s))?;
//! let descriptor = ipc::export_buffer(&buf)?;          // 128 bytes, by any channel
//! let written = dev.create_event(EventOptions::ipc())?;
//! written.record(&s)?;                                 // after the writes the other side reads
//! let event_descriptor = ipc::export_event(&written)?;
//!
//! // The importing process, with the fd, kind and pool id received (here: the same values).
//! let mr = ipc::import_memory_resource(&dev, &shared)?;
//! let e = ipc::import_event(&dev, &event_descriptor)?;
//! s.wait_event(&e)?;
//! let same = ipc::import_buffer(&mr, &descriptor, &s)?;
//! # Ok(())
//! # }
//! ```
//!
//! The exporting process must keep a buffer alive until every importer dropped its import:
//! order the processes with interprocess events ([`EventOptions::ipc`](crate::EventOptions::ipc)).

use std::fmt;
use std::os::unix::io::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::ptr;

use cucore_sys as sys;

use crate::buffer::Buffer;
use crate::common::{check, Result};
use crate::device::Device;
use crate::event::Event;
use crate::memory_resource::{MemoryResource, MemoryResourceKind};
use crate::stream::Stream;

/// An exported pool's identifier (`CUCORE_IPC_POOL_ID_SIZE` bytes).
pub type PoolId = [u8; sys::CUCORE_IPC_POOL_ID_SIZE];
/// A buffer descriptor (`CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE` bytes).
pub type BufferDescriptor = [u8; sys::CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE];
/// An event descriptor (`CUCORE_IPC_EVENT_DESCRIPTOR_SIZE` bytes).
pub type EventDescriptor = [u8; sys::CUCORE_IPC_EVENT_DESCRIPTOR_SIZE];

/// An exported pool (`cucore_ipc_pool_handle_t`): a file descriptor this value owns (closed on
/// drop, like [`OwnedFd`]), the pool's kind and its identifier.
pub struct PoolHandle {
    fd: OwnedFd,
    kind: MemoryResourceKind,
    pool_id: PoolId,
}

impl PoolHandle {
    /// A handle owning `fd` (received from the exporting process) with the kind and identifier
    /// that came with it.
    pub fn new(fd: OwnedFd, kind: MemoryResourceKind, pool_id: PoolId) -> PoolHandle {
        PoolHandle { fd, kind, pool_id }
    }

    /// The exported pool's kind ([`MemoryResourceKind::Device`] or [`MemoryResourceKind::Pinned`]).
    pub fn kind(&self) -> MemoryResourceKind {
        self.kind
    }

    /// The exported pool's identifier.
    pub fn pool_id(&self) -> PoolId {
        self.pool_id
    }

    /// The C struct (its descriptor still owned by this value).
    pub fn to_raw(&self) -> sys::cucore_ipc_pool_handle_t {
        sys::cucore_ipc_pool_handle_t { fd: self.fd.as_raw_fd(), kind: self.kind.raw() as u32, pool_id: self.pool_id }
    }

    /// Gives up the descriptor as an [`OwnedFd`].
    pub fn into_owned_fd(self) -> OwnedFd {
        self.fd
    }
}

impl AsRawFd for PoolHandle {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

impl IntoRawFd for PoolHandle {
    fn into_raw_fd(self) -> RawFd {
        self.fd.into_raw_fd()
    }
}

impl fmt::Debug for PoolHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let id: String = self.pool_id.iter().map(|b| format!("{:02x}", b)).collect();
        write!(f, "PoolHandle(fd {}, {:?}, pool {})", self.fd.as_raw_fd(), self.kind, id)
    }
}

/// Exports an IPC-enabled pool (`cucore_ipc_export_memory_resource`): a new file descriptor.
/// `Status::NotSupported` for a pool created without `ipc_enabled`.
pub fn export_memory_resource(resource: &MemoryResource) -> Result<PoolHandle> {
    let mut raw = sys::cucore_ipc_pool_handle_t::default();
    // SAFETY: a live handle and a valid out-pointer.
    check(unsafe { sys::cucore_ipc_export_memory_resource(resource.as_raw(), &mut raw) })?;
    // SAFETY: on success the descriptor is new and ours.
    let fd = unsafe { OwnedFd::from_raw_fd(raw.fd) };
    Ok(PoolHandle { fd, kind: MemoryResourceKind::from_raw(raw.kind as i32), pool_id: raw.pool_id })
}

/// Imports a pool another process exported, on `device` (`cucore_ipc_import_memory_resource`);
/// the same resource while one lives. Its kind is [`MemoryResourceKind::Imported`]: it maps
/// buffers and cannot allocate. `handle` keeps its descriptor.
pub fn import_memory_resource(device: &Device, handle: &PoolHandle) -> Result<MemoryResource> {
    let raw_handle = handle.to_raw();
    let mut raw = ptr::null_mut();
    // SAFETY: a live handle, a valid struct and out-pointer; we own the reference it gives.
    check(unsafe { sys::cucore_ipc_import_memory_resource(device.as_raw(), &raw_handle, &mut raw) })?;
    // SAFETY: the call succeeded, so `raw` is a live resource whose reference we own.
    Ok(unsafe { MemoryResource::adopt(raw) })
}

/// The identifier of an IPC-enabled or imported pool (`Status::NotSupported` otherwise).
pub fn pool_id(resource: &MemoryResource) -> Result<PoolId> {
    let mut id = [0u8; sys::CUCORE_IPC_POOL_ID_SIZE];
    // SAFETY: a live handle and room for the identifier.
    check(unsafe { sys::cucore_ipc_memory_resource_pool_id(resource.as_raw(), id.as_mut_ptr()) })?;
    Ok(id)
}

/// The descriptor of a whole buffer of an IPC-enabled pool (`cucore_ipc_export_buffer`).
pub fn export_buffer(buffer: &Buffer) -> Result<BufferDescriptor> {
    let mut d = [0u8; sys::CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE];
    // SAFETY: a live handle and room for the descriptor.
    check(unsafe { sys::cucore_ipc_export_buffer(buffer.as_raw(), d.as_mut_ptr()) })?;
    Ok(d)
}

/// Maps the buffer of `descriptor` (as received: a wrong size, a corrupted descriptor or one of
/// another pool is `Status::InvalidArgument`) into the imported pool `resource`; it is freed on
/// `stream` when dropped. A second import of a live buffer shares the first mapping.
pub fn import_buffer(resource: &MemoryResource, descriptor: &[u8], stream: &Stream) -> Result<Buffer> {
    let mut raw = ptr::null_mut();
    // SAFETY: live handles, `descriptor.len()` readable bytes and a valid out-pointer.
    check(unsafe {
        sys::cucore_ipc_import_buffer(
            resource.as_raw(),
            descriptor.as_ptr(),
            descriptor.len() as u64,
            stream.as_raw(),
            &mut raw,
        )
    })?;
    // SAFETY: the call succeeded, so `raw` is a live buffer whose reference we own.
    Ok(unsafe { Buffer::adopt(raw) })
}

/// The descriptor of an event created with [`EventOptions::ipc`](crate::EventOptions::ipc)
/// (`cucore_ipc_export_event`).
pub fn export_event(event: &Event) -> Result<EventDescriptor> {
    let mut d = [0u8; sys::CUCORE_IPC_EVENT_DESCRIPTOR_SIZE];
    // SAFETY: a live handle and room for the descriptor.
    check(unsafe { sys::cucore_ipc_export_event(event.as_raw(), d.as_mut_ptr()) })?;
    Ok(d)
}

/// Opens an event another process exported, in `device`'s primary context
/// (`cucore_ipc_import_event`): record, wait on and synchronize it as any event (no timing).
pub fn import_event(device: &Device, descriptor: &[u8]) -> Result<Event> {
    let mut raw = ptr::null_mut();
    // SAFETY: a live handle, `descriptor.len()` readable bytes and a valid out-pointer.
    check(unsafe {
        sys::cucore_ipc_import_event(device.as_raw(), descriptor.as_ptr(), descriptor.len() as u64, &mut raw)
    })?;
    // SAFETY: the call succeeded, so `raw` is a live event whose reference we own.
    Ok(unsafe { Event::adopt(raw) })
}
