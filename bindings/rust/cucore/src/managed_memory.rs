//! Managed (unified) memory (`include/cucore/managed_memory.h`): the managed memory resource
//! and its options (cuda.core's `ManagedMemoryResource` and `ManagedMemoryResourceOptions`),
//! and what managed buffers take (cuda.core's `ManagedBuffer`): advice to the driver
//! (`cuMemAdvise`, [`MemoryAdvice`]), what advice is in effect ([`ManagedAdvice`]), prefetches
//! and discards. Every buffer call fails with `Status::InvalidArgument` on a buffer that is not
//! managed memory ([`Buffer::is_managed`]).

use std::os::raw::c_int;
use std::ptr;

use cucore_sys as sys;

use crate::buffer::Buffer;
use crate::common::{c_bool, check, Result};
use crate::device::Device;
use crate::memory_resource::{location_to_raw, Location, MemoryResource};
use crate::stream::Stream;

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
    setters! {
        /// Sets `use_pool`.
        use_pool: bool => |use_pool: bool| use_pool;
        /// Sets `preferred_location`.
        preferred_location: Location => |location: Location| Some(location);
        /// Sets `max_size`.
        max_size: u64 => |bytes: u64| bytes;
        /// Sets `release_threshold`.
        release_threshold: u64 => |bytes: u64| bytes;
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

impl MemoryResource {
    /// The resource of the driver's current managed memory pool, without a preferred location
    /// (`cuMemGetMemPool`; `cucore_managed_memory_resource_get_default`; cuda.core's
    /// `ManagedMemoryResource()`), allocating in stream order on `device`'s streams. Not owned:
    /// dropping the resource never destroys the pool. `Status::NotSupported` before CUDA 13 or
    /// without managed memory.
    pub fn managed_default(device: &Device) -> Result<MemoryResource> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_managed_memory_resource_get_default(device.as_raw(), &mut raw) })?;
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
        // SAFETY: a live handle, valid options and out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_managed_memory_resource_create(device.as_raw(), &o, &mut raw) })?;
        MemoryResource::from_out(raw)
    }
}

/// MemoryAdvice about managed memory (`cucore_memory_advice_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryAdvice {
    /// Mostly read: the driver may keep read-only copies where it is read (location ignored).
    SetReadMostly,
    /// Undoes `SetReadMostly` (location ignored).
    UnsetReadMostly,
    /// Prefer to keep the memory at the location.
    SetPreferredLocation,
    /// No preferred location any more (location ignored).
    UnsetPreferredLocation,
    /// Keep the memory mapped for the location (a device), wherever it lives.
    SetAccessedBy,
    /// Undoes `SetAccessedBy` for the location.
    UnsetAccessedBy,
}

impl MemoryAdvice {
    /// The raw `cucore_memory_advice_t`.
    pub fn raw(self) -> sys::cucore_memory_advice_t {
        match self {
            MemoryAdvice::SetReadMostly => sys::CUCORE_ADVICE_SET_READ_MOSTLY,
            MemoryAdvice::UnsetReadMostly => sys::CUCORE_ADVICE_UNSET_READ_MOSTLY,
            MemoryAdvice::SetPreferredLocation => sys::CUCORE_ADVICE_SET_PREFERRED_LOCATION,
            MemoryAdvice::UnsetPreferredLocation => sys::CUCORE_ADVICE_UNSET_PREFERRED_LOCATION,
            MemoryAdvice::SetAccessedBy => sys::CUCORE_ADVICE_SET_ACCESSED_BY,
            MemoryAdvice::UnsetAccessedBy => sys::CUCORE_ADVICE_UNSET_ACCESSED_BY,
        }
    }
}

/// The advice in effect on a managed buffer ([`Buffer::advice`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ManagedAdvice {
    /// Whether read-mostly is set.
    pub read_mostly: bool,
    /// The preferred location, if any.
    pub preferred_location: Option<Location>,
}

impl Buffer {
    /// Gives the driver `advice` about this managed buffer's memory (`cucore_buffer_advise`).
    /// `location` is required for `SetPreferredLocation` (a device, the host or a host NUMA
    /// node) and the accessed-by advice (a device); the others ignore it.
    pub fn advise(&self, advice: MemoryAdvice, location: Option<Location>) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::cucore_buffer_advise(self.as_raw(), advice.raw(), location_to_raw(location)) })
    }

    /// The advice in effect: read-mostly and the preferred location (`cucore_buffer_advice`).
    pub fn advice(&self) -> Result<ManagedAdvice> {
        let mut read_mostly: c_int = 0;
        let mut preferred = location_to_raw(None);
        // SAFETY: a live handle and valid out-pointers.
        check(unsafe { sys::cucore_buffer_advice(self.as_raw(), &mut read_mostly, &mut preferred) })?;
        Ok(ManagedAdvice { read_mostly: c_bool(read_mostly), preferred_location: Location::from_raw(preferred)? })
    }

    /// Sets or unsets the read-mostly advice (cuda.core's `ManagedBuffer.read_mostly`).
    pub fn set_read_mostly(&self, read_mostly: bool) -> Result<()> {
        let advice = if read_mostly { MemoryAdvice::SetReadMostly } else { MemoryAdvice::UnsetReadMostly };
        self.advise(advice, None)
    }

    /// Whether the read-mostly advice is set.
    pub fn read_mostly(&self) -> Result<bool> {
        let mut read_mostly: c_int = 0;
        // SAFETY: a live handle and a valid out-pointer (NULL for the other).
        check(unsafe { sys::cucore_buffer_advice(self.as_raw(), &mut read_mostly, ptr::null_mut()) })?;
        Ok(c_bool(read_mostly))
    }

    /// Sets the preferred location, or unsets it with None (cuda.core's
    /// `ManagedBuffer.preferred_location`).
    pub fn set_preferred_location(&self, location: Option<Location>) -> Result<()> {
        match location {
            Some(location) => self.advise(MemoryAdvice::SetPreferredLocation, Some(location)),
            None => self.advise(MemoryAdvice::UnsetPreferredLocation, None),
        }
    }

    /// The preferred location, if any.
    pub fn preferred_location(&self) -> Result<Option<Location>> {
        let mut preferred = location_to_raw(None);
        // SAFETY: a live handle and a valid out-pointer (NULL for the other).
        check(unsafe { sys::cucore_buffer_advice(self.as_raw(), ptr::null_mut(), &mut preferred) })?;
        Location::from_raw(preferred)
    }

    /// Sets the accessed-by advice for `location`, a device (cuda.core's
    /// `ManagedBuffer.accessed_by.add`).
    pub fn add_accessed_by(&self, location: Location) -> Result<()> {
        self.advise(MemoryAdvice::SetAccessedBy, Some(location))
    }

    /// Unsets the accessed-by advice for `location`, a device (cuda.core's
    /// `ManagedBuffer.accessed_by.discard`).
    pub fn remove_accessed_by(&self, location: Location) -> Result<()> {
        self.advise(MemoryAdvice::UnsetAccessedBy, Some(location))
    }

    /// Whether the accessed-by advice is set for `location`, a device
    /// (`cucore_buffer_is_accessed_by`; another kind of location is `Status::InvalidArgument`).
    pub fn is_accessed_by(&self, location: Location) -> Result<bool> {
        let mut accessed_by: c_int = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_buffer_is_accessed_by(self.as_raw(), location.to_raw(), &mut accessed_by) })?;
        Ok(c_bool(accessed_by))
    }

    /// Where the buffer was last prefetched to; None if never, or not all of it to one place
    /// (`cucore_buffer_last_prefetch_location`).
    pub fn last_prefetch_location(&self) -> Result<Option<Location>> {
        let mut location = location_to_raw(None);
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_buffer_last_prefetch_location(self.as_raw(), &mut location) })?;
        Location::from_raw(location)
    }

    /// Migrates the memory to `location`, ordered on `stream` (`cucore_buffer_prefetch`,
    /// `cuMemPrefetchAsync`; cuda.core's `ManagedBuffer.prefetch`).
    pub fn prefetch(&self, location: Location, stream: &Stream) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe { sys::cucore_buffer_prefetch(self.as_raw(), location.to_raw(), stream.as_raw()) })
    }

    /// Tells the driver the contents are no longer needed, ordered on `stream`
    /// (`cucore_buffer_discard`; cuda.core's `ManagedBuffer.discard`). Reading before writing
    /// afterwards gives unspecified bytes. `Status::NotSupported` before CUDA 13.
    pub fn discard(&self, stream: &Stream) -> Result<()> {
        // SAFETY: live handles; no location.
        check(unsafe { sys::cucore_buffer_discard(self.as_raw(), ptr::null(), stream.as_raw()) })
    }

    /// Discards the contents as [`Buffer::discard`], then makes the pages resident at
    /// `location` (`cuMemDiscardAndPrefetchBatchAsync`; cuda.core's `discard_prefetch`).
    pub fn discard_prefetch(&self, location: Location, stream: &Stream) -> Result<()> {
        let raw = location.to_raw();
        // SAFETY: live handles; `raw` outlives the call.
        check(unsafe { sys::cucore_buffer_discard(self.as_raw(), &raw, stream.as_raw()) })
    }
}
