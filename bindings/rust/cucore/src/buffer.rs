//! Buffers (`include/cucore/buffer.h`; cuda.core's `Buffer`): a range of memory that a
//! [`MemoryResource`] allocated or that was wrapped ([`Buffer::from_handle`]), its size, address
//! and device, who can reach it, its deallocation stream, views, closing, copies and fills, and
//! growing a virtual-memory buffer. Managed buffers' advice, prefetches and discards are in
//! `managed_memory`; strided copies in `copy_3d`.
//!
//! A buffer holds its resource, its deallocation stream and (for a view) its parent, so drop
//! order never matters.
//!
//! # Host memory and stream order
//!
//! Copies between a buffer and host memory are queued on a stream and run later. A Rust borrow
//! cannot outlive the call that takes it, so the safe [`Buffer::copy_from_host`] and
//! [`Buffer::copy_to_host`] wait for the stream before they return: when they return `Ok`, the
//! copy has run and the slice is free again. Their `unsafe` twins
//! [`Buffer::copy_from_host_async`] and [`Buffer::copy_to_host_async`] return at once, and the
//! caller promises to keep the slice alive (and, for `copy_to_host_async`, untouched) until the
//! stream has been synchronized: use them with page-locked memory (a legacy pinned buffer) when
//! the overlap matters.
//!
//! Device memory is never exposed as a Rust slice: its bytes are reached through copies only.
//! The memory of a legacy pinned buffer is host memory, readable at [`Buffer::address`], but
//! making a slice of it is `unsafe` and up to the caller (device work may write it at any time).

use std::fmt;
use std::os::raw::{c_int, c_void};
use std::ptr::{self, NonNull};

use cucore_sys as sys;

use crate::common::{c_bool, check, owner_handoff, Error, OwnerCallback, Result, Status};
use crate::device::Device;
use crate::memory_resource::{device_ordinal, stream_ptr, Accessibility, MemoryResource};
use crate::stream::Stream;

/// A length that must fit the C ABI's `uint64_t`.
pub(crate) fn len64(len: usize) -> u64 {
    // usize is at most 64 bits on every target the library supports.
    len as u64
}

/// A range of memory (`cucore_buffer_t`; cuda.core's `Buffer`): a size, an address and the
/// resource it came from. `Clone` adds a reference to the same buffer (it copies no memory);
/// the last `Drop` frees the memory, ordered on the deallocation stream for pools, unless the
/// buffer was [closed](Buffer::close) earlier. A buffer keeps its resource, its deallocation
/// stream and (for a [view](Buffer::view)) its parent alive.
///
/// Freeing is stream-ordered, not deferred: work on another stream that still uses the buffer
/// must be ordered before its deallocation stream (e.g. with [`Stream::wait_stream`]) before the
/// last reference goes, exactly as with `cuMemFreeAsync`.
pub struct Buffer {
    raw: NonNull<sys::cucore_buffer_t>,
}

handle_type!(Buffer, sys::cucore_buffer_t);
identity_eq!(Buffer);

impl Buffer {
    /// Wraps foreign memory at `address` of `size` bytes without owning it
    /// (`cucore_buffer_from_handle`; cuda.core's `Buffer.from_handle`). `device` names the
    /// device whose memory it is, or None for host memory. When the last reference goes,
    /// `owner` is called (on the releasing thread), so that it can free the memory; if the call
    /// fails, `owner` is never called afterwards (see [`OwnerCallback`]). The buffer has no
    /// memory resource.
    ///
    /// # Safety
    /// `address .. address + size` is memory of `device` (or, with None, host memory) that stays
    /// valid until `owner` is called (or, without an owner, until the last clone of the returned
    /// value and of every view of it is dropped). Safe methods of the buffer let device work and
    /// copies read and write that memory, so while any such work may run, no Rust reference to
    /// it may be used.
    pub unsafe fn from_handle(
        address: u64,
        size: u64,
        device: Option<&Device>,
        owner: Option<OwnerCallback>,
    ) -> Result<Buffer> {
        let handoff = owner_handoff(owner);
        let device = device.map_or(ptr::null_mut(), |d| d.as_raw());
        let mut raw = ptr::null_mut();
        // SAFETY: the caller vouches for the memory; the handoff's user_data fits its on_release.
        let status = unsafe {
            sys::cucore_buffer_from_handle(address, size, device, handoff.on_release, handoff.user_data, &mut raw)
        };
        let result = check(status);
        handoff.finish(result.is_ok());
        result?;
        Buffer::from_out(raw)
    }

    /// The size in bytes (0 once closed).
    pub fn size(&self) -> Result<u64> {
        let mut v: u64 = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_buffer_size(self.as_raw(), &mut v) })?;
        Ok(v)
    }

    /// The address: a `CUdeviceptr`, or a host pointer as an integer (0 once closed, and for
    /// a zero-size allocation). cuda.core's `Buffer.handle`.
    pub fn address(&self) -> Result<u64> {
        let mut v: u64 = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_buffer_address(self.as_raw(), &mut v) })?;
        Ok(v)
    }

    /// The ordinal of the device whose memory this is, or None for host memory (cuda.core's
    /// `device_id`, which says -1 there).
    pub fn device_id(&self) -> Result<Option<i32>> {
        let mut id: c_int = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_buffer_device_id(self.as_raw(), &mut id) })?;
        Ok(device_ordinal(id))
    }

    /// The resource the buffer came from, or None for foreign memory
    /// ([`Buffer::from_handle`]). A view answers its parent's resource.
    pub fn memory_resource(&self) -> Result<Option<MemoryResource>> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives, if any.
        check(unsafe { sys::cucore_buffer_memory_resource(self.as_raw(), &mut raw) })?;
        // SAFETY: a live resource handle whose reference the call gave us.
        Ok(NonNull::new(raw).map(|raw| unsafe { MemoryResource::adopt(raw.as_ptr()) }))
    }

    /// Frees the memory now, ordered on `stream` (None: the deallocation stream)
    /// (`cucore_buffer_close`; cuda.core's `Buffer.close(stream)`). The value (and its clones)
    /// stays valid but is closed: its size and address read 0 and every other use fails with
    /// `Status::InvalidState`. Closing twice does nothing. Views of the buffer keep its memory
    /// until they go.
    pub fn close(&self, stream: Option<&Stream>) -> Result<()> {
        // SAFETY: live handles (or NULL for the stream).
        check(unsafe { sys::cucore_buffer_close(self.as_raw(), stream_ptr(stream)) })
    }

    /// Makes `stream` the stream the memory is freed on (the buffer holds it)
    /// (`cucore_buffer_set_deallocation_stream`; cuda.core's `set_deallocation_stream`).
    pub fn set_deallocation_stream(&self, stream: &Stream) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe { sys::cucore_buffer_set_deallocation_stream(self.as_raw(), stream.as_raw()) })
    }

    /// A buffer of `size` bytes at `offset` into this one, sharing its memory and keeping it
    /// alive (`cucore_buffer_view`). Dropping or closing a view frees nothing. A range outside
    /// the buffer fails with `Status::InvalidArgument`.
    pub fn view(&self, offset: u64, size: u64) -> Result<Buffer> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_buffer_view(self.as_raw(), offset, size, &mut raw) })?;
        Buffer::from_out(raw)
    }

    /// Copies all of `src` into this buffer (equal sizes), ordered on `stream`
    /// (`cucore_buffer_copy`, `cuMemcpyAsync`; cuda.core's `copy_from(src, stream=...)`).
    pub fn copy_from(&self, src: &Buffer, stream: &Stream) -> Result<()> {
        // SAFETY: live handles. Both ranges are buffer memory, never Rust memory.
        check(unsafe { sys::cucore_buffer_copy(self.as_raw(), src.as_raw(), stream.as_raw()) })
    }

    /// Copies all of this buffer into `dst` (equal sizes), ordered on `stream` (cuda.core's
    /// `copy_to(dst, stream=...)`).
    pub fn copy_to(&self, dst: &Buffer, stream: &Stream) -> Result<()> {
        dst.copy_from(self, stream)
    }

    /// A new buffer from the same resource with a copy of this one, ordered on `stream`
    /// (cuda.core's `copy_to(None, stream=...)`). Fails with `Status::InvalidArgument` for a
    /// buffer without a resource.
    pub fn copy_to_new(&self, stream: &Stream) -> Result<Buffer> {
        let mr = self.memory_resource()?.ok_or_else(|| {
            Error::binding(
                Status::InvalidArgument,
                "Buffer::copy_to_new: the buffer has no memory resource (foreign memory)".to_string(),
            )
        })?;
        let dst = mr.allocate(self.size()?, Some(stream))?;
        dst.copy_from(self, stream)?;
        Ok(dst)
    }

    /// Copies `src` to this buffer at `offset` and waits until the copy has run
    /// (`cucore_buffer_copy_from_host`, then [`Stream::synchronize`]). The copy is queued on
    /// `stream`, after the work already there, and the call returns once the stream has caught
    /// up, so the borrow of `src` covers the whole copy. For an asynchronous copy see
    /// [`Buffer::copy_from_host_async`].
    pub fn copy_from_host(&self, offset: u64, src: &[u8], stream: &Stream) -> Result<()> {
        // SAFETY: `src` stays borrowed until the stream is synchronized below.
        unsafe { self.copy_from_host_async(offset, src, stream) }?;
        // If the synchronize fails, the copy will not run later either: the failure is a sticky
        // fault that stops all of the context's work, or the stream was being captured, where
        // synchronizing invalidates the capture so that no graph holding the copy is made.
        stream.synchronize()
    }

    /// Copies this buffer's bytes at `offset` into `dst` (`dst.len()` bytes) and waits until the
    /// copy has run (`cucore_buffer_copy_to_host`, then [`Stream::synchronize`]); `dst` holds the
    /// data when this returns `Ok`. For an asynchronous copy see [`Buffer::copy_to_host_async`].
    pub fn copy_to_host(&self, offset: u64, dst: &mut [u8], stream: &Stream) -> Result<()> {
        // SAFETY: `dst` stays mutably borrowed until the stream is synchronized below.
        unsafe { self.copy_to_host_async(offset, dst, stream) }?;
        // As in `copy_from_host`: a failed synchronize leaves no copy to run later.
        stream.synchronize()
    }

    /// Reads the whole buffer into a new `Vec` (waits for `stream`, as [`Buffer::copy_to_host`]).
    pub fn to_vec(&self, stream: &Stream) -> Result<Vec<u8>> {
        let size = self.size()?;
        let len = usize::try_from(size).map_err(|_| {
            Error::binding(Status::InvalidArgument, format!("Buffer::to_vec: {} bytes do not fit in memory", size))
        })?;
        let mut v = vec![0u8; len];
        self.copy_to_host(0, &mut v, stream)?;
        Ok(v)
    }

    /// Queues a copy of `src` to this buffer at `offset` on `stream` and returns at once
    /// (`cucore_buffer_copy_from_host`). The copy reads `src` when the stream reaches it.
    ///
    /// # Safety
    /// `src` must stay valid and unmodified until the copy has run: until `stream` (or an event
    /// recorded after this call) has been synchronized. Moving, dropping or writing the memory
    /// earlier is a data race with the copy engine. If the call returns `Err`, nothing was
    /// queued.
    pub unsafe fn copy_from_host_async(&self, offset: u64, src: &[u8], stream: &Stream) -> Result<()> {
        // SAFETY: live handles; the caller keeps `src` valid until the copy has run.
        check(unsafe {
            sys::cucore_buffer_copy_from_host(
                self.as_raw(),
                offset,
                src.as_ptr() as *const c_void,
                len64(src.len()),
                stream.as_raw(),
            )
        })
    }

    /// Queues a copy of this buffer's bytes at `offset` into `dst` on `stream` and returns at
    /// once (`cucore_buffer_copy_to_host`). `dst` receives the data when the stream reaches it.
    ///
    /// # Safety
    /// `dst` must stay valid, and must be neither read nor written, until the copy has run:
    /// until `stream` (or an event recorded after this call) has been synchronized. If the call
    /// returns `Err`, nothing was queued.
    pub unsafe fn copy_to_host_async(&self, offset: u64, dst: &mut [u8], stream: &Stream) -> Result<()> {
        // SAFETY: live handles; the caller keeps `dst` valid and untouched until the copy has run.
        check(unsafe {
            sys::cucore_buffer_copy_to_host(
                self.as_raw(),
                offset,
                dst.as_mut_ptr() as *mut c_void,
                len64(dst.len()),
                stream.as_raw(),
            )
        })
    }

    /// Fills the buffer with the `width`-byte pattern `value` (`width` 1, 2 or 4; the size must
    /// be a multiple of it), ordered on `stream` (`cucore_buffer_fill`; cuda.core's
    /// `fill(value, stream=...)`). The pattern is stored in the host's byte order (little
    /// endian): `fill(0x0403_0201, 4, s)` gives the bytes 01 02 03 04 01 02 ...
    pub fn fill(&self, value: u32, width: u32, stream: &Stream) -> Result<()> {
        // SAFETY: a live handle; the memory is buffer memory.
        check(unsafe { sys::cucore_buffer_fill(self.as_raw(), value, width, stream.as_raw()) })
    }

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

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.address(), self.size(), self.device_id()) {
            (Ok(address), Ok(size), Ok(Some(id))) => {
                write!(f, "Buffer({:#x}, {} bytes, device {})", address, size, id)
            }
            (Ok(address), Ok(size), Ok(None)) => write!(f, "Buffer({:#x}, {} bytes, host)", address, size),
            _ => write!(f, "Buffer(<library handle {:p}>)", self.as_raw()),
        }
    }
}
