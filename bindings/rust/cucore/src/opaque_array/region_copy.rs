//! Region copies between arrays and linear memory (`cucore_opaque_array_copy`): the array side
//! ([`ArrayRegion`]), the two sides a copy takes, and their translation into the C struct. Part
//! of [`opaque_array`](super), which exports every name and runs the copies
//! ([`OpaqueArray::copy`](super::OpaqueArray::copy)).

use std::os::raw::c_void;
use std::ptr;

use cucore_sys as sys;

use super::{OpaqueArray, OpaqueArrayInfo};
use crate::common::{Error, Result, Status};
use crate::copy_3d::{check_host_region, DstMemory, Extent3D, MemoryRegion, RegionLayout, SrcMemory};

// ---- Region copies -------------------------------------------------------------------------------------

/// One array side of a region copy (`cucore_array_region_t`): `array` from element `x` of row
/// `y` of slice `z` (BC: texels, multiples of 4). `z` is the slice of a 3D array, the layer of
/// a layered one, the face of a cubemap (+X, -X, +Y, -Y, +Z, -Z), `6 x cubemap + face` of a
/// layered cubemap.
#[derive(Clone, Copy, Debug)]
pub struct ArrayRegion<'a> {
    /// The array.
    pub array: &'a OpaqueArray,
    /// The first element of each row copied.
    pub x: u64,
    /// The first row of each slice copied.
    pub y: u64,
    /// The first slice, layer or face copied.
    pub z: u64,
}

impl<'a> ArrayRegion<'a> {
    /// `array` from its start, (0, 0, 0).
    pub fn new(array: &'a OpaqueArray) -> ArrayRegion<'a> {
        ArrayRegion { array, x: 0, y: 0, z: 0 }
    }

    /// Sets where the copy starts: element `x` of row `y` of slice `z`.
    pub fn at(mut self, x: u64, y: u64, z: u64) -> ArrayRegion<'a> {
        self.x = x;
        self.y = y;
        self.z = z;
        self
    }

    fn to_raw(self) -> sys::cucore_array_region_t {
        sys::cucore_array_region_t { array: self.array.as_raw(), x: self.x, y: self.y, z: self.z }
    }
}

/// The source of a region copy ([`OpaqueArray::copy`]): an array region, or memory (a buffer or
/// a host slice to read). Made with `.into()` from either.
#[derive(Clone, Copy, Debug)]
pub enum ArrayCopySrc<'a> {
    /// An array region.
    Array(ArrayRegion<'a>),
    /// A buffer or host memory.
    Memory(MemoryRegion<SrcMemory<'a>>),
}

/// The destination of a region copy ([`OpaqueArray::copy`]): an array region, or memory (a
/// buffer or a host slice to write). Made with `.into()` from either.
#[derive(Debug)]
pub enum ArrayCopyDst<'a> {
    /// An array region.
    Array(ArrayRegion<'a>),
    /// A buffer or host memory.
    Memory(MemoryRegion<DstMemory<'a>>),
}

impl<'a> From<ArrayRegion<'a>> for ArrayCopySrc<'a> {
    fn from(region: ArrayRegion<'a>) -> Self {
        ArrayCopySrc::Array(region)
    }
}

impl<'a> From<&'a OpaqueArray> for ArrayCopySrc<'a> {
    fn from(array: &'a OpaqueArray) -> Self {
        ArrayCopySrc::Array(ArrayRegion::new(array))
    }
}

impl<'a> From<MemoryRegion<SrcMemory<'a>>> for ArrayCopySrc<'a> {
    fn from(region: MemoryRegion<SrcMemory<'a>>) -> Self {
        ArrayCopySrc::Memory(region)
    }
}

impl<'a> From<ArrayRegion<'a>> for ArrayCopyDst<'a> {
    fn from(region: ArrayRegion<'a>) -> Self {
        ArrayCopyDst::Array(region)
    }
}

impl<'a> From<&'a OpaqueArray> for ArrayCopyDst<'a> {
    fn from(array: &'a OpaqueArray) -> Self {
        ArrayCopyDst::Array(ArrayRegion::new(array))
    }
}

impl<'a> From<MemoryRegion<DstMemory<'a>>> for ArrayCopyDst<'a> {
    fn from(region: MemoryRegion<DstMemory<'a>>) -> Self {
        ArrayCopyDst::Memory(region)
    }
}

fn raw_memory(
    layout: &RegionLayout,
    buffer: *mut sys::cucore_buffer_t,
    host: *mut c_void,
) -> sys::cucore_memory_region_t {
    sys::cucore_memory_region_t {
        buffer,
        host,
        offset: layout.offset,
        pitch: layout.pitch,
        height: layout.height,
        x: layout.x,
        y: layout.y,
        z: layout.z,
    }
}

/// How many bytes per row and rows per slice a region copy of `extent` elements moves on a
/// memory side, for an array of `info`'s format and element size (BC: rows of 4x4 blocks).
/// None on overflow.
pub(crate) fn memory_rows(info: &OpaqueArrayInfo, extent: &Extent3D) -> Option<(u64, u64)> {
    let element = u64::from(info.element_size);
    if info.format.is_block_compressed() {
        let blocks = extent.width.checked_add(3)? / 4;
        Some((blocks.checked_mul(element)?, extent.rows.checked_add(3)? / 4))
    } else {
        Some((extent.width.checked_mul(element)?, extent.rows))
    }
}

/// Checks a host memory side of `len` bytes against the bytes the copy touches there, as the
/// library lays it out: a pitch of 0 is `x` plus the row copied, a height of 0 `y` plus the rows
/// copied (src/core/opaque_array.cpp, `copy_array_region`).
pub(crate) fn check_host_side(
    layout: &RegionLayout,
    array: &OpaqueArray,
    extent: &Extent3D,
    len: usize,
    side: &str,
) -> Result<()> {
    if extent.width == 0 || extent.rows == 0 || extent.depth == 0 {
        return Err(Error::binding(
            Status::InvalidArgument,
            format!("OpaqueArray::copy: a zero extent ({} x {} x {})", extent.width, extent.rows, extent.depth),
        ));
    }
    let info = array.info()?;
    check_host_bytes(layout, &info, extent, len, side)
}

/// [`check_host_side`] for an array described by `info`.
pub(crate) fn check_host_bytes(
    layout: &RegionLayout,
    info: &OpaqueArrayInfo,
    extent: &Extent3D,
    len: usize,
    side: &str,
) -> Result<()> {
    let overflow =
        || Error::binding(Status::InvalidArgument, "OpaqueArray::copy: the host side overflows 64 bits".to_string());
    let (row_bytes, rows) = memory_rows(info, extent).ok_or_else(overflow)?;
    // As the library reads a zero pitch and height: the row (from x) and the rows (from y) copied.
    let mut effective = *layout;
    if effective.pitch == 0 {
        effective.pitch = effective.x.checked_add(row_bytes).ok_or_else(overflow)?;
    }
    if effective.height == 0 {
        effective.height = effective.y.checked_add(rows).ok_or_else(overflow)?;
    }
    check_host_region(&effective, &Extent3D { width: row_bytes, rows, depth: extent.depth }, len, side)
}

/// Checks the host sides and makes the C struct; whether a side is host memory.
pub(super) fn prepare(
    dst: &mut ArrayCopyDst<'_>,
    src: &ArrayCopySrc<'_>,
    extent: Extent3D,
) -> Result<(sys::cucore_opaque_array_copy_t, bool)> {
    // The array side whose element size lays out a memory side (the other side, when that is
    // memory; the library refuses a copy without an array side).
    let dst_array = match dst {
        ArrayCopyDst::Array(region) => Some(region.array),
        ArrayCopyDst::Memory(_) => None,
    };
    let src_array = match src {
        ArrayCopySrc::Array(region) => Some(region.array),
        ArrayCopySrc::Memory(_) => None,
    };
    let mut copy = sys::cucore_opaque_array_copy_t::INIT;
    copy.width = extent.width;
    copy.height = extent.rows;
    copy.depth = extent.depth;
    let mut host = false;
    match src {
        ArrayCopySrc::Array(region) => copy.src_array = region.to_raw(),
        ArrayCopySrc::Memory(region) => {
            copy.src_memory = match region.memory {
                SrcMemory::Buffer(b) => raw_memory(&region.layout, b.as_raw(), ptr::null_mut()),
                SrcMemory::Host(h) => {
                    if let Some(array) = dst_array {
                        check_host_side(&region.layout, array, &extent, h.len(), "src")?;
                    }
                    // Without an array side the library refuses the copy before reading.
                    host = true;
                    // The library only reads through this pointer (the C struct has one type).
                    raw_memory(&region.layout, ptr::null_mut(), h.as_ptr() as *mut c_void)
                }
            }
        }
    }
    match dst {
        ArrayCopyDst::Array(region) => copy.dst_array = region.to_raw(),
        ArrayCopyDst::Memory(region) => {
            let layout = region.layout;
            copy.dst_memory = match &mut region.memory {
                DstMemory::Buffer(b) => raw_memory(&layout, b.as_raw(), ptr::null_mut()),
                DstMemory::Host(h) => {
                    if let Some(array) = src_array {
                        check_host_side(&layout, array, &extent, h.len(), "dst")?;
                    }
                    host = true;
                    raw_memory(&layout, ptr::null_mut(), h.as_mut_ptr() as *mut c_void)
                }
            }
        }
    }
    if dst_array.is_none() && src_array.is_none() {
        return Err(Error::binding(
            Status::InvalidArgument,
            "OpaqueArray::copy: neither side is an array (copy between memory with copy_3d)".to_string(),
        ));
    }
    Ok((copy, host))
}
