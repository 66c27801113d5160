//! What a [`Buffer`] says about its memory beyond size and address (`include/cucore/memory.h`):
//! who can reach it, its deallocation stream, and growing a virtual-memory buffer.

use std::os::raw::c_int;
use std::ptr::{self, NonNull};

use cucore_sys as sys;

use crate::common::{c_bool, check, Result};
use crate::memory::{Accessibility, Buffer};
use crate::stream::Stream;

impl Buffer {
    /// Whether device code and the host can use the memory (`cucore_buffer_accessibility`;
    /// cuda.core's `is_device_accessible` / `is_host_accessible`).
    pub fn accessibility(&self) -> Result<Accessibility> {
        let (mut device, mut host): (c_int, c_int) = (0, 0);
        // SAFETY: a live handle and valid out-pointers (NULL for the one not asked).
        check(unsafe { sys::cucore_buffer_accessibility(self.as_raw(), &mut device, &mut host, ptr::null_mut()) })?;
        Ok(Accessibility { device: c_bool(device), host: c_bool(host) })
    }

    /// Whether device code can use the memory.
    pub fn is_device_accessible(&self) -> Result<bool> {
        Ok(self.accessibility()?.device)
    }

    /// Whether the host can read and write the memory directly.
    pub fn is_host_accessible(&self) -> Result<bool> {
        Ok(self.accessibility()?.host)
    }

    /// Whether this is managed (unified) memory, which takes advice, prefetches and discards
    /// (cuda.core's `is_managed`).
    pub fn is_managed(&self) -> Result<bool> {
        let mut managed: c_int = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe {
            sys::cucore_buffer_accessibility(self.as_raw(), ptr::null_mut(), ptr::null_mut(), &mut managed)
        })?;
        Ok(c_bool(managed))
    }

    /// The stream the memory will be freed on (`cucore_buffer_deallocation_stream`): the
    /// allocation stream unless [`Buffer::set_deallocation_stream`] changed it; None for
    /// synchronous and foreign memory, allocations made without a stream, and closed buffers.
    pub fn deallocation_stream(&self) -> Result<Option<Stream>> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives, if any.
        check(unsafe { sys::cucore_buffer_deallocation_stream(self.as_raw(), &mut raw) })?;
        // SAFETY: a live stream handle whose reference the call gave us.
        Ok(NonNull::new(raw).map(|raw| unsafe { Stream::adopt(raw.as_ptr()) }))
    }

    /// Grows a buffer of a virtual memory resource to `new_size` bytes, keeping its contents
    /// (`cucore_buffer_grow`; cuda.core's `VirtualMemoryResource.modify_allocation`): new
    /// memory of the whole size is filled with a copy of the old and takes its place at the same
    /// address while the reservation allows; past it the buffer moves, so [`Buffer::address`]
    /// may change. A `new_size` not above the size does nothing. Fails with
    /// `Status::InvalidArgument` for other buffers and `Status::InvalidState` while views or
    /// DLPack exports of the buffer exist.
    ///
    /// The old memory is released when the call returns: synchronize work that may still use
    /// the buffer before growing it (as before closing it), or that work reads freed memory.
    /// Threads reading the buffer's address or size meanwhile see the old or the new value.
    pub fn grow(&self, new_size: u64) -> Result<()> {
        // SAFETY: a live handle; the library reads and writes the buffer's address and size atomically.
        check(unsafe { sys::cucore_buffer_grow(self.as_raw(), new_size) })
    }
}
