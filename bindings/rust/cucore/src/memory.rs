//! What `include/cucore/memory.h` holds: memory resources and buffers (cuda.core's
//! `DeviceMemoryResource`, `LegacyPinnedMemoryResource` and `Buffer`). The rest of the header,
//! one concern per module: `memory_resources` (pinned, managed and virtual resources, locations,
//! peer access), `memory_user` (resources written in Rust), `buffer` (accessibility, deallocation
//! stream, growing), `managed` (advice, prefetch, discard) and `copy_3d` (strided copies).
//!
//! A [`MemoryResource`] allocates [`Buffer`]s. A buffer holds its resource, its deallocation
//! stream and (for a view) its parent, so drop order never matters: dropping a pool's
//! `MemoryResource` before its buffers is fine, the pool goes with the last of them.
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

/// The attributes of a memory pool (`cucore_pool_attribute_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum PoolAttribute {
    /// 0/1, settable.
    ReuseFollowEventDependencies = 1,
    /// 0/1, settable.
    ReuseAllowOpportunistic = 2,
    /// 0/1, settable.
    ReuseAllowInternalDependencies = 3,
    /// Bytes kept reserved after a synchronization; settable.
    ReleaseThreshold = 4,
    /// Bytes reserved from the system now.
    ReservedMemCurrent = 5,
    /// High-water mark of the above; reset by setting 0.
    ReservedMemHigh = 6,
    /// Bytes allocated and not yet freed.
    UsedMemCurrent = 7,
    /// High-water mark of the above; reset by setting 0.
    UsedMemHigh = 8,
}

use crate::common::{c_bool, check, owner_handoff, Error, OwnerCallback, Result, Status};
use crate::device::Device;
use crate::memory_user;
use crate::stream::Stream;

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
            MemoryResourceKind::Unknown(raw) => raw,
        }
    }

    /// Whether every resource of this kind allocates and frees in stream order (a stream is
    /// then required to allocate): the device, pinned and imported pools. `Managed` is not
    /// among them: a managed resource is stream-ordered only with a pool
    /// ([`MemoryResource::is_stream_ordered`] tells for a resource).
    pub fn is_stream_ordered(self) -> bool {
        matches!(self, MemoryResourceKind::Device | MemoryResourceKind::Pinned | MemoryResourceKind::Imported)
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
    /// Sets `ipc_enabled`.
    pub fn ipc_enabled(mut self, ipc_enabled: bool) -> Self {
        self.ipc_enabled = ipc_enabled;
        self
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

/// A length that must fit the C ABI's `uint64_t`.
pub(crate) fn len64(len: usize) -> u64 {
    // usize is at most 64 bits on every target the library supports.
    len as u64
}

// ---- MemoryResource ----------------------------------------------------------------------------

/// A memory resource (`cucore_memory_resource_t`): a device memory pool or the legacy pinned
/// host allocator. `Clone` adds a reference, `Drop` gives it back; a pool this library created
/// is destroyed when the last `MemoryResource` and the last [`Buffer`] from it have gone.
pub struct MemoryResource {
    raw: NonNull<sys::cucore_memory_resource_t>,
}

handle_type!(MemoryResource, sys::cucore_memory_resource_t);
identity_eq!(MemoryResource);

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
        memory_user::forget_callback_error();
        // SAFETY: live handles (or NULL for the stream) and a valid out-pointer; we own the
        // reference it gives.
        check(unsafe { sys::cucore_memory_resource_allocate(self.as_raw(), size, stream_ptr(stream), &mut raw) })
            .map_err(memory_user::explain)?;
        Buffer::from_out(raw)
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

    /// Returns unused reserved memory to the system, keeping at least `min_bytes_to_keep`.
    pub fn trim(&self, min_bytes_to_keep: u64) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::cucore_memory_resource_trim(self.as_raw(), min_bytes_to_keep) })
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

// ---- Buffer ------------------------------------------------------------------------------------

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
        Ok(NonNull::new(raw).map(|raw| MemoryResource { raw }))
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
        memory_user::forget_callback_error();
        // SAFETY: live handles and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_device_allocate(self.as_raw(), size, stream.as_raw(), &mut raw) })
            .map_err(memory_user::explain)?;
        Buffer::from_out(raw)
    }
}
