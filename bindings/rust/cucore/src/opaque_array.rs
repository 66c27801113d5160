//! CUDA arrays and mipmapped arrays (`include/cucore/opaque_array.h`; cuda.core's `OpaqueArray`
//! and `MipmappedArray`), and the copies in and out of them.
//!
//! An [`OpaqueArray`] is memory laid out for the texture units (a `CUarray`). Kernels reach it
//! only through [texture and surface objects](crate::texture), and data moves in and out by
//! copies: whole-array copies with host slices ([`OpaqueArray::copy_from_host`]), buffers
//! ([`OpaqueArray::copy_from_buffer`]) and other arrays ([`OpaqueArray::copy_from_array`]), and
//! region copies ([`OpaqueArray::copy`]). A [`MipmappedArray`] holds a chain of levels, each an
//! `OpaqueArray` ([`MipmappedArray::level`]) that keeps it alive.
//!
//! Shapes are in elements: a 1D array has height 0, a 2D array depth 0 (see [`ArrayKind`] for
//! layered arrays and cubemaps). Whole-array copies read and write the packed layout that
//! [`OpaqueArrayInfo`] describes: `slice_count` slices of `row_count` rows of `row_bytes` bytes.
//! A block-compressed (BC) element is a texel whose data moves in 4x4 blocks.
//!
//! An array made by [`OpaqueArray::create`] is owned: it is destroyed when its last reference
//! and every texture or surface object over it are gone ([`OpaqueArray::close`] lets go of it
//! sooner). A level of a mipmapped array, a wrapped foreign `CUarray`
//! ([`OpaqueArray::from_handle`]) and a mapped GL image
//! ([`GraphicsResource::map_array`](crate::GraphicsResource::map_array)) are the same type, not
//! owned.
//!
//! ```no_run
//! use cucore::{ArrayFormat, ArrayRegion, Device, Extent3D, MemoryRegion, OpaqueArray, OpaqueArrayOptions,
//!              StreamOptions};
//!
//! # fn main() -> cucore::Result<()> {
//! let dev = Device::get(0)?;
//! let stream = dev.create_stream(StreamOptions::default())?;
//! let options = OpaqueArrayOptions::default().format(ArrayFormat::Float32).width(640).height(480);
//! let image = dev.create_opaque_array(options)?;
//! let pixels = vec![1.0f32; 640 * 480];
//! image.copy_from_host(&pixels, &stream)?;            // the whole array, packed; waits for the stream
//! // A 16 x 8 tile at (32, 64) into a packed host tile of 16 floats a row:
//! let mut tile = vec![0u8; 16 * 8 * 4];
//! OpaqueArray::copy(MemoryRegion::host_mut(&mut tile, 16 * 4), ArrayRegion::new(&image).at(32, 64, 0),
//!                   Extent3D::new_2d(16, 8), &stream)?;
//! # Ok(())
//! # }
//! ```
//!
//! # Host memory and stream order
//!
//! As with [`Buffer::copy_from_host`](crate::Buffer::copy_from_host), the safe copies that read
//! or write a host slice wait for the stream before they return, so the borrow covers the copy;
//! their `unsafe` twins (`*_async`) return at once and the caller keeps the slice alive. Host
//! slices are of [`PlainData`] elements (bytes, integers, floats and arrays of them): a slice of
//! `bool`, say, cannot receive an array's bytes, since not every byte is a `bool`:
//!
//! ```compile_fail,E0277
//! # use cucore::{OpaqueArray, Stream};
//! # fn run(array: &OpaqueArray, stream: &Stream) -> cucore::Result<()> {
//! let mut flags = vec![false; 64];
//! array.copy_to_host(&mut flags, stream)?; // error: `bool` is not `PlainData`
//! # Ok(())
//! # }
//! ```

use std::fmt;
use std::os::raw::c_void;
use std::ptr::{self, NonNull};

use cucore_sys as sys;

use crate::buffer::{len64, Buffer};
use crate::common::{check, owner_handoff, Error, OwnerCallback, Result, Status};
use crate::copy_3d::Extent3D;
use crate::device::Device;
use crate::stream::Stream;

mod format;
mod region_copy;

pub use format::{ArrayFlags, ArrayFormat, ArrayKind, OpaqueArrayInfo, OpaqueArrayOptions};
pub use region_copy::{ArrayCopyDst, ArrayCopySrc, ArrayRegion};
use region_copy::prepare;

// ---- Host slices ---------------------------------------------------------------------------------------

/// Host element types whose slices copies may read and write as bytes: every bit pattern is a
/// valid value and there are no padding bytes. Implemented for the integer and float
/// primitives and arrays of them; declare it for a `#[repr(C)]` texel type with
/// `unsafe impl PlainData for Rgba8 {}`. `bool`, `char`, references, raw pointers and
/// [`DevicePointer`](crate::DevicePointer) are not plain data (not every byte pattern is one of
/// their values, or a valid address).
///
/// # Safety
/// The type has no padding bytes, every bit pattern of its size is a valid value, and it has
/// no `Drop` (it is `Copy`).
pub unsafe trait PlainData: Copy {}

macro_rules! plain_data {
    ($($t:ty),*) => { $(
        // SAFETY: a primitive without padding whose every bit pattern is a value.
        unsafe impl PlainData for $t {}
    )* };
}
plain_data!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64);
// SAFETY: an array of plain data is its elements back to back, without padding.
unsafe impl<T: PlainData, const N: usize> PlainData for [T; N] {}

fn byte_len<T>(slice: &[T]) -> u64 {
    len64(std::mem::size_of_val(slice))
}

// ---- OpaqueArray -----------------------------------------------------------------------------------------

/// A CUDA array (`cucore_opaque_array_t`; cuda.core's `OpaqueArray`). `Clone` adds a reference
/// to the same array. See the [module documentation](self).
pub struct OpaqueArray {
    raw: NonNull<sys::cucore_opaque_array_t>,
}

handle_type!(OpaqueArray, sys::cucore_opaque_array_t);
identity_eq!(OpaqueArray);

impl OpaqueArray {
    /// A new array on `device`, in its primary context (`cucore_opaque_array_create`). The shape
    /// is checked against the kind, the format and the device's limits first (the message names
    /// the limit a shape exceeds). `Status::InvalidArgument` for an unset or unknown format, a
    /// channel count or shape the format or kind does not take, a limit exceeded, a BC format
    /// in 1D or with surface load/store; `Status::NotSupported` for a sparse array on a device
    /// without them; `Status::Cuda` when the driver refuses the description.
    pub fn create(device: &Device, options: OpaqueArrayOptions) -> Result<OpaqueArray> {
        let o = options.to_raw();
        let mut raw = ptr::null_mut();
        // SAFETY: a live device, valid options and out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_opaque_array_create(device.as_raw(), &o, &mut raw) })?;
        OpaqueArray::from_out(raw)
    }

    /// Wraps the foreign `CUarray` `cu_array` of `device` without owning it
    /// (`cucore_opaque_array_from_handle`); its description is read from the driver. When the
    /// last reference and every texture or surface object over it are gone, `owner` is called
    /// (see [`OwnerCallback`]).
    ///
    /// # Safety
    /// `cu_array` is a `CUarray` of `device` that stays alive until `owner` is called (or,
    /// without an owner, until the last reference to the wrapper and every object over it are
    /// gone).
    pub unsafe fn from_handle(
        device: &Device,
        cu_array: *mut c_void,
        owner: Option<OwnerCallback>,
    ) -> Result<OpaqueArray> {
        let handoff = owner_handoff(owner);
        let mut raw = ptr::null_mut();
        // SAFETY: the caller vouches for the array; the handoff's user_data fits its on_release.
        let status = unsafe {
            sys::cucore_opaque_array_from_handle(
                device.as_raw(),
                cu_array,
                handoff.on_release,
                handoff.user_data,
                &mut raw,
            )
        };
        let result = check(status);
        handoff.finish(result.is_ok());
        result?;
        OpaqueArray::from_out(raw)
    }

    /// What the array is (`cucore_opaque_array_info`). `Status::InvalidState` once closed (or,
    /// for a mapped GL image, unmapped).
    pub fn info(&self) -> Result<OpaqueArrayInfo> {
        let mut info = sys::cucore_opaque_array_info_t::INIT;
        // SAFETY: a live handle and an initialised struct of the size it states.
        check(unsafe { sys::cucore_opaque_array_info(self.as_raw(), &mut info) })?;
        Ok(OpaqueArrayInfo::from_raw(&info))
    }

    /// The device the array lives on.
    pub fn device(&self) -> Result<Device> {
        Device::get(self.info()?.device_ordinal)
    }

    /// The raw `CUarray` (borrowed: valid while the array is open) (`cucore_opaque_array_handle`;
    /// cuda.core's `handle`).
    pub fn handle(&self) -> Result<*mut c_void> {
        let mut h = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_opaque_array_handle(self.as_raw(), &mut h) })?;
        Ok(h)
    }

    /// Lets go of the array now (`cucore_opaque_array_close`; cuda.core's `close()`): it is
    /// destroyed at once unless texture or surface objects still use it (then with the last of
    /// them). Idempotent; the value (and its clones) stays valid, and every other call on it
    /// fails with `Status::InvalidState`.
    pub fn close(&self) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::cucore_opaque_array_close(self.as_raw()) })
    }

    // ---- Whole-array copies ----

    /// Copies the whole array from `src`, the packed layout ([`OpaqueArrayInfo::size_bytes`]
    /// bytes, at least: a shorter slice is `Status::InvalidArgument` naming both sizes), and
    /// waits until the copy has run (`cucore_opaque_array_copy_from_host`, then
    /// [`Stream::synchronize`]).
    pub fn copy_from_host<T: PlainData>(&self, src: &[T], stream: &Stream) -> Result<()> {
        // SAFETY: `src` stays borrowed until the stream is synchronized below.
        unsafe { self.copy_from_host_async(src, stream) }?;
        // As in Buffer::copy_from_host: a failed synchronize leaves no copy to run later.
        stream.synchronize()
    }

    /// Copies the whole array into `dst` (at least [`OpaqueArrayInfo::size_bytes`] bytes; the
    /// rest is left alone) and waits until the copy has run (`cucore_opaque_array_copy_to_host`,
    /// then [`Stream::synchronize`]): `dst` holds the data when this returns `Ok`.
    pub fn copy_to_host<T: PlainData>(&self, dst: &mut [T], stream: &Stream) -> Result<()> {
        // SAFETY: `dst` stays mutably borrowed until the stream is synchronized below.
        unsafe { self.copy_to_host_async(dst, stream) }?;
        stream.synchronize()
    }

    /// Reads the whole array, packed, into a new `Vec` (waits for `stream`, as
    /// [`OpaqueArray::copy_to_host`]).
    pub fn to_vec(&self, stream: &Stream) -> Result<Vec<u8>> {
        let size = self.info()?.size_bytes;
        let len = usize::try_from(size).map_err(|_| {
            Error::binding(Status::InvalidArgument, format!("OpaqueArray::to_vec: {} bytes do not fit in memory", size))
        })?;
        let mut v = vec![0u8; len];
        self.copy_to_host(&mut v, stream)?;
        Ok(v)
    }

    /// Queues the copy of [`OpaqueArray::copy_from_host`] on `stream` and returns at once.
    ///
    /// # Safety
    /// `src` must stay valid and unmodified until the copy has run: until `stream` (or an event
    /// recorded after this call) has been synchronized. If the call returns `Err`, nothing was
    /// queued.
    pub unsafe fn copy_from_host_async<T: PlainData>(&self, src: &[T], stream: &Stream) -> Result<()> {
        // SAFETY: live handles; the library reads at most `size` bytes of `src` (it refuses a
        // smaller size than the array's); the caller keeps `src` valid until the copy has run.
        check(unsafe {
            sys::cucore_opaque_array_copy_from_host(
                self.as_raw(),
                src.as_ptr() as *const c_void,
                byte_len(src),
                stream.as_raw(),
            )
        })
    }

    /// Queues the copy of [`OpaqueArray::copy_to_host`] on `stream` and returns at once.
    ///
    /// # Safety
    /// `dst` must stay valid, and be neither read nor written, until the copy has run: until
    /// `stream` (or an event recorded after this call) has been synchronized. If the call
    /// returns `Err`, nothing was queued.
    pub unsafe fn copy_to_host_async<T: PlainData>(&self, dst: &mut [T], stream: &Stream) -> Result<()> {
        // SAFETY: live handles; the library writes at most `size` bytes (every pattern is a
        // value of T: PlainData); the caller keeps `dst` valid and untouched until the copy has
        // run.
        check(unsafe {
            sys::cucore_opaque_array_copy_to_host(
                self.as_raw(),
                dst.as_mut_ptr() as *mut c_void,
                byte_len(dst),
                stream.as_raw(),
            )
        })
    }

    /// Copies the whole array from the start of `buffer` (which must hold at least
    /// [`OpaqueArrayInfo::size_bytes`]: `Status::InvalidArgument` naming both sizes otherwise),
    /// ordered on `stream` (`cucore_opaque_array_copy_from_buffer`; cuda.core's
    /// `copy_from(buffer, stream=...)`).
    pub fn copy_from_buffer(&self, buffer: &Buffer, stream: &Stream) -> Result<()> {
        // SAFETY: live handles; both memories belong to the library.
        check(unsafe { sys::cucore_opaque_array_copy_from_buffer(self.as_raw(), buffer.as_raw(), stream.as_raw()) })
    }

    /// Copies the whole array to the start of `buffer` (at least
    /// [`OpaqueArrayInfo::size_bytes`]), ordered on `stream`
    /// (`cucore_opaque_array_copy_to_buffer`; cuda.core's `copy_to(buffer, stream=...)`).
    pub fn copy_to_buffer(&self, buffer: &Buffer, stream: &Stream) -> Result<()> {
        // SAFETY: live handles; both memories belong to the library.
        check(unsafe { sys::cucore_opaque_array_copy_to_buffer(self.as_raw(), buffer.as_raw(), stream.as_raw()) })
    }

    /// Copies all of `src` into this array, ordered on `stream`
    /// (`cucore_opaque_array_copy_from_array`). Both must have the same packed layout (extents,
    /// slices, element size): `Status::InvalidArgument` naming both otherwise.
    pub fn copy_from_array(&self, src: &OpaqueArray, stream: &Stream) -> Result<()> {
        // SAFETY: live handles; both memories belong to the library.
        check(unsafe { sys::cucore_opaque_array_copy_from_array(self.as_raw(), src.as_raw(), stream.as_raw()) })
    }

    /// Copies all of this array into `dst` (`dst.copy_from_array(self, stream)`).
    pub fn copy_to_array(&self, dst: &OpaqueArray, stream: &Stream) -> Result<()> {
        dst.copy_from_array(self, stream)
    }

    // ---- Region copies ----

    /// Copies `extent` elements (`width` per row, `rows` rows, `depth` slices, layers or faces;
    /// BC: texels) from `src` to `dst`, ordered on `stream` (`cucore_opaque_array_copy`,
    /// `cuMemcpy3DAsync`): array to array, memory to array or array to memory, where memory is a
    /// [`MemoryRegion`](crate::copy_3d::MemoryRegion) of a [`Buffer`] or a host slice (its `x`
    /// and `pitch` in bytes, its `y` and `height` in rows: rows of 4x4 blocks for BC; a pitch of
    /// 0 is `x` plus the row copied,
    /// a height of 0 `y` plus the rows copied, so 0 and 0 at (0, 0) is the box packed; `z` is the
    /// slice). The library checks array
    /// and buffer sides; host slices are checked here, against their length, before any call.
    /// When a side is a host slice, the call waits for the stream (so `dst` holds the data when
    /// it returns `Ok`); between arrays and buffers it returns at once. `Status::InvalidArgument`
    /// for no array side, a region outside its array, buffer or slice, BC offsets or extents off
    /// the 4x4 grid, element sizes that differ, more than one row of a 1D array, a zero extent;
    /// `Status::InvalidState` for a closed array or buffer.
    pub fn copy<'a>(
        dst: impl Into<ArrayCopyDst<'a>>,
        src: impl Into<ArrayCopySrc<'a>>,
        extent: Extent3D,
        stream: &Stream,
    ) -> Result<()> {
        let mut dst = dst.into();
        let src = src.into();
        let (copy, host) = prepare(&mut dst, &src, extent)?;
        // SAFETY: host sides were checked to lie inside slices borrowed until the synchronize
        // below; array and buffer sides are checked by the library.
        check(unsafe { sys::cucore_opaque_array_copy(&copy, stream.as_raw()) })?;
        if host {
            stream.synchronize()?;
        }
        Ok(())
    }

    /// [`OpaqueArray::copy`] without waiting for the stream.
    ///
    /// # Safety
    /// Host slices must stay valid until the copy has run (until `stream`, or an event recorded
    /// after this call, has been synchronized): a source slice unmodified, a destination slice
    /// neither read nor written. If the call returns `Err`, nothing was queued.
    pub unsafe fn copy_async<'a>(
        dst: impl Into<ArrayCopyDst<'a>>,
        src: impl Into<ArrayCopySrc<'a>>,
        extent: Extent3D,
        stream: &Stream,
    ) -> Result<()> {
        let mut dst = dst.into();
        let src = src.into();
        let (copy, _) = prepare(&mut dst, &src, extent)?;
        // SAFETY: host sides checked above; the caller keeps them valid until the copy has run.
        check(unsafe { sys::cucore_opaque_array_copy(&copy, stream.as_raw()) })
    }
}

impl fmt::Debug for OpaqueArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.info() {
            Ok(i) => write!(
                f,
                "OpaqueArray({} x{}, {:?} {}x{}x{} layers {}, device {})",
                i.format, i.num_channels, i.kind, i.width, i.height, i.depth, i.layers, i.device_ordinal
            ),
            Err(_) => write!(f, "OpaqueArray(<closed or invalid, library handle {:p}>)", self.as_raw()),
        }
    }
}

// ---- MipmappedArray --------------------------------------------------------------------------------------

/// A mipmapped array (`cucore_mipmapped_array_t`; cuda.core's `MipmappedArray`): a chain of
/// levels, each an [`OpaqueArray`] ([`MipmappedArray::level`]) that keeps it alive. `Clone`
/// adds a reference to the same mipmapped array.
pub struct MipmappedArray {
    raw: NonNull<sys::cucore_mipmapped_array_t>,
}

handle_type!(MipmappedArray, sys::cucore_mipmapped_array_t);
identity_eq!(MipmappedArray);

impl MipmappedArray {
    /// A new mipmapped array of `num_levels` levels on `device`, `options` describing level 0
    /// (`cucore_mipmapped_array_create`). `num_levels` is 1 to `1 + floor(log2(largest extent))`
    /// (`Status::InvalidArgument` beyond, naming the maximum); otherwise as
    /// [`OpaqueArray::create`].
    pub fn create(device: &Device, options: OpaqueArrayOptions, num_levels: u32) -> Result<MipmappedArray> {
        let o = options.to_raw();
        let mut raw = ptr::null_mut();
        // SAFETY: a live device, valid options and out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_mipmapped_array_create(device.as_raw(), &o, num_levels, &mut raw) })?;
        MipmappedArray::from_out(raw)
    }

    /// Wraps the foreign `CUmipmappedArray` `cu_mipmapped_array` of `device` without owning it
    /// (`cucore_mipmapped_array_from_handle`), as [`OpaqueArray::from_handle`] does.
    ///
    /// # Safety
    /// `cu_mipmapped_array` is a `CUmipmappedArray` of `device` that stays alive until `owner`
    /// is called (or, without an owner, until the last reference to the wrapper, its levels and
    /// every object over it are gone).
    pub unsafe fn from_handle(
        device: &Device,
        cu_mipmapped_array: *mut c_void,
        owner: Option<OwnerCallback>,
    ) -> Result<MipmappedArray> {
        let handoff = owner_handoff(owner);
        let mut raw = ptr::null_mut();
        // SAFETY: the caller vouches for the array; the handoff's user_data fits its on_release.
        let status = unsafe {
            sys::cucore_mipmapped_array_from_handle(
                device.as_raw(),
                cu_mipmapped_array,
                handoff.on_release,
                handoff.user_data,
                &mut raw,
            )
        };
        let result = check(status);
        handoff.finish(result.is_ok());
        result?;
        MipmappedArray::from_out(raw)
    }

    /// Level 0's description, with `num_levels` set (`cucore_mipmapped_array_info`).
    pub fn info(&self) -> Result<OpaqueArrayInfo> {
        let mut info = sys::cucore_opaque_array_info_t::INIT;
        // SAFETY: a live handle and an initialised struct of the size it states.
        check(unsafe { sys::cucore_mipmapped_array_info(self.as_raw(), &mut info) })?;
        Ok(OpaqueArrayInfo::from_raw(&info))
    }

    /// The number of levels (cuda.core's `num_levels`).
    pub fn num_levels(&self) -> Result<u32> {
        Ok(self.info()?.num_levels)
    }

    /// The raw `CUmipmappedArray` (borrowed: valid while the mipmapped array is open)
    /// (`cucore_mipmapped_array_handle`).
    pub fn handle(&self) -> Result<*mut c_void> {
        let mut h = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_mipmapped_array_handle(self.as_raw(), &mut h) })?;
        Ok(h)
    }

    /// Level `level` as an array that is not owned and keeps this mipmapped array alive
    /// (`cucore_mipmapped_array_level`; cuda.core's `get_level`). A level past the last is
    /// `Status::InvalidArgument` naming the count.
    pub fn level(&self, level: u32) -> Result<OpaqueArray> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_mipmapped_array_level(self.as_raw(), level, &mut raw) })?;
        OpaqueArray::from_out(raw)
    }

    /// Lets go of the mipmapped array now (`cucore_mipmapped_array_close`): destroyed at once
    /// unless levels or texture objects still use it. Idempotent; every other call then fails
    /// with `Status::InvalidState`.
    pub fn close(&self) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::cucore_mipmapped_array_close(self.as_raw()) })
    }
}

impl fmt::Debug for MipmappedArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.info() {
            Ok(i) => write!(
                f,
                "MipmappedArray({} x{}, {:?} {}x{}x{}, {} levels, device {})",
                i.format, i.num_channels, i.kind, i.width, i.height, i.depth, i.num_levels, i.device_ordinal
            ),
            Err(_) => write!(f, "MipmappedArray(<closed or invalid, library handle {:p}>)", self.as_raw()),
        }
    }
}

// ---- Device conveniences ---------------------------------------------------------------------------------

impl Device {
    /// A new array on this device ([`OpaqueArray::create`]; cuda.core's
    /// `Device.create_opaque_array`).
    pub fn create_opaque_array(&self, options: OpaqueArrayOptions) -> Result<OpaqueArray> {
        OpaqueArray::create(self, options)
    }

    /// A new mipmapped array on this device ([`MipmappedArray::create`]; cuda.core's
    /// `Device.create_mipmapped_array`).
    pub fn create_mipmapped_array(&self, options: OpaqueArrayOptions, num_levels: u32) -> Result<MipmappedArray> {
        MipmappedArray::create(self, options, num_levels)
    }
}

#[cfg(test)]
mod tests {
    use super::region_copy::{check_host_bytes, memory_rows};
    use crate::copy_3d::RegionLayout;
    use super::*;

    fn info(format: ArrayFormat, element_size: u32) -> OpaqueArrayInfo {
        OpaqueArrayInfo {
            format,
            num_channels: 1,
            element_size,
            kind: ArrayKind::Plain,
            flags: ArrayFlags::NONE,
            width: 64,
            height: 64,
            depth: 0,
            layers: 0,
            row_bytes: 0,
            row_count: 0,
            slice_count: 1,
            size_bytes: 0,
            device_ordinal: 0,
            is_owned: true,
            num_levels: 1,
        }
    }

    #[test]
    fn memory_rows_count_elements_or_blocks() {
        let e = Extent3D::new_3d(10, 3, 2);
        assert_eq!(memory_rows(&info(ArrayFormat::Float32, 16), &e), Some((160, 3)));
        // BC1: 8-byte blocks; 10 texels are 3 blocks, 3 rows one row of blocks.
        assert_eq!(memory_rows(&info(ArrayFormat::Bc1Unorm, 8), &e), Some((24, 1)));
        assert_eq!(memory_rows(&info(ArrayFormat::Bc7Unorm, 16), &Extent3D::new_2d(8, 8)), Some((32, 2)));
        assert_eq!(memory_rows(&info(ArrayFormat::Uint8, 4), &Extent3D::new_2d(u64::MAX, 1)), None);
        assert_eq!(memory_rows(&info(ArrayFormat::Bc1Unorm, 8), &Extent3D::new_2d(u64::MAX, 1)), None);
    }

    fn at(pitch: u64, height: u64, x: u64, y: u64, z: u64) -> RegionLayout {
        RegionLayout { offset: 0, pitch, height, x, y, z }
    }

    #[test]
    fn host_sides_are_checked_as_the_library_lays_them_out() {
        let f = info(ArrayFormat::Float32, 4);
        // 8 x 3 floats packed: 96 bytes exactly; one byte less is refused.
        let e = Extent3D::new_2d(8, 3);
        assert!(check_host_bytes(&at(0, 0, 0, 0, 0), &f, &e, 96, "dst").is_ok());
        assert!(check_host_bytes(&at(0, 0, 0, 0, 0), &f, &e, 95, "dst").is_err());
        // A zero pitch with x is x plus the row: (3 - 1) * (4 + 32) + 4 + 32 = 108.
        assert!(check_host_bytes(&at(0, 0, 4, 0, 0), &f, &e, 108, "dst").is_ok());
        assert!(check_host_bytes(&at(0, 0, 4, 0, 0), &f, &e, 107, "dst").is_err());
        // A zero height with y is y plus the rows: slices of 2 + 3 rows, 2 slices from slice 1:
        // ((1 + 2 - 1) * 5 + 2 + 3 - 1) * 32 + 32 = 480.
        let e3 = Extent3D::new_3d(8, 3, 2);
        assert!(check_host_bytes(&at(0, 0, 0, 2, 1), &f, &e3, 480, "src").is_ok());
        let err = check_host_bytes(&at(0, 0, 0, 2, 1), &f, &e3, 479, "src").unwrap_err();
        assert_eq!(err.status, Status::InvalidArgument);
        assert!(err.message.contains("past the end") && err.message.contains("'src'"), "{}", err.message);
        // BC1: 10 x 6 texels are 3 x 2 blocks of 8 bytes: 48 bytes packed.
        let bc = info(ArrayFormat::Bc1Unorm, 8);
        assert!(check_host_bytes(&at(0, 0, 0, 0, 0), &bc, &Extent3D::new_2d(10, 6), 48, "src").is_ok());
        assert!(check_host_bytes(&at(0, 0, 0, 0, 0), &bc, &Extent3D::new_2d(10, 6), 47, "src").is_err());
        // Overflow is refused, never wrapped.
        assert!(check_host_bytes(&at(0, 0, u64::MAX, 0, 0), &f, &e, usize::MAX, "src").is_err());
        assert!(check_host_bytes(&at(0, 0, 0, u64::MAX, 0), &f, &e3, usize::MAX, "src").is_err());
    }

    #[test]
    fn formats_round_trip_through_raw() {
        for &f in ArrayFormat::all() {
            assert_eq!(ArrayFormat::from_raw(f.raw()), f);
            assert!(f.name().is_some());
        }
        assert_eq!(ArrayFormat::from_raw(0), ArrayFormat::Unknown(0));
        assert_eq!(ArrayFormat::Unknown(0x77).raw(), 0x77);
        assert_eq!(ArrayFormat::Unknown(0x77).name(), None);
        assert!(ArrayFormat::Bc1Unorm.is_block_compressed());
        assert!(ArrayFormat::Bc7UnormSrgb.is_block_compressed());
        assert!(!ArrayFormat::UnormInt101010_2.is_block_compressed());
        assert!(!ArrayFormat::UnormInt8x1.is_block_compressed());
        assert_eq!(ArrayFormat::Float32.to_string(), "float32");
        assert_eq!(ArrayFormat::Unknown(0x77).to_string(), "unknown format 0x77");
    }
}
