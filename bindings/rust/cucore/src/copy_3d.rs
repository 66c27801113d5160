//! Strided 2D/3D copies (`cucore_copy_3d`, `cuMemcpy3DAsync`) between buffers and host slices.
//!
//! Each side is a [`MemoryRegion`] (of [`SrcMemory`] to read, of [`DstMemory`] to write):
//! memory (a [`Buffer`] or a host slice) laid out as rows of `pitch` bytes and slices of
//! `height` rows from byte `offset` on, and the point
//! (x bytes, y rows, z slices) where the copied box starts. The library checks buffer sides
//! against their buffers; host slices are checked here, before any call, against the slice's
//! length (the C ABI cannot check host memory), so a safe copy never touches bytes outside the
//! slices it borrows.
//!
//! As with [`Buffer::copy_from_host`], [`copy_3d`] waits for the stream before returning when a
//! side is a host slice (the borrow must cover the copy); [`copy_3d_async`] does not, and is
//! `unsafe` for that reason.

use std::os::raw::c_void;
use std::ptr;

use cucore_sys as sys;

use crate::buffer::Buffer;
use crate::common::{check, Error, Result, Status};
use crate::stream::Stream;

/// Where a region's copied box starts and how its memory is laid out (all in bytes or rows).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RegionLayout {
    /// Bytes from the start of the memory to row 0 of slice 0.
    pub offset: u64,
    /// Bytes per row; at least `x + width`.
    pub pitch: u64,
    /// Rows per slice; at least `y + rows` for 3D copies (depth > 1). Not needed for 2D copies.
    pub height: u64,
    /// The first byte copied in each row.
    pub x: u64,
    /// The first row copied in each slice.
    pub y: u64,
    /// The first slice copied.
    pub z: u64,
}

/// The memory a copy reads (the memory of a source [`MemoryRegion`]).
#[derive(Clone, Copy, Debug)]
pub enum SrcMemory<'a> {
    /// A buffer (checked by the library).
    Buffer(&'a Buffer),
    /// Host memory (checked by this binding).
    Host(&'a [u8]),
}

/// The memory a copy writes (the memory of a destination [`MemoryRegion`]).
#[derive(Debug)]
pub enum DstMemory<'a> {
    /// A buffer (checked by the library).
    Buffer(&'a Buffer),
    /// Host memory (checked by this binding).
    Host(&'a mut [u8]),
}

impl<'a> From<&'a Buffer> for SrcMemory<'a> {
    fn from(buffer: &'a Buffer) -> Self {
        SrcMemory::Buffer(buffer)
    }
}

impl<'a> From<&'a Buffer> for DstMemory<'a> {
    fn from(buffer: &'a Buffer) -> Self {
        DstMemory::Buffer(buffer)
    }
}

/// One side of a strided copy (`cucore_memory_region_t`; C++ and Python `MemoryRegion`): its
/// memory and how the memory is laid out. A source is a `MemoryRegion<SrcMemory>`, a destination
/// a `MemoryRegion<DstMemory>`, so a destination cannot be a shared slice:
/// `MemoryRegion::buffer(&buf, pitch).height(h).at(x, y, z)` (either side),
/// `MemoryRegion::host(&v, pitch)` (a source), `MemoryRegion::host_mut(&mut v, pitch)` (a
/// destination).
#[derive(Clone, Copy, Debug)]
pub struct MemoryRegion<M> {
    pub memory: M,
    pub layout: RegionLayout,
}

impl<M> MemoryRegion<M> {
    /// Sets the byte offset of row 0 of slice 0.
    pub fn offset(mut self, offset: u64) -> Self {
        self.layout.offset = offset;
        self
    }
    /// Sets the rows per slice (3D copies).
    pub fn height(mut self, height: u64) -> Self {
        self.layout.height = height;
        self
    }
    /// Sets where the copied box starts: byte `x` of row `y` of slice `z`.
    pub fn at(mut self, x: u64, y: u64, z: u64) -> Self {
        self.layout.x = x;
        self.layout.y = y;
        self.layout.z = z;
        self
    }
}

impl<'a, M: From<&'a Buffer>> MemoryRegion<M> {
    /// `buffer` with rows of `pitch` bytes, the box at (0, 0, 0); a source or a destination, as
    /// the argument it is passed as says.
    pub fn buffer(buffer: &'a Buffer, pitch: u64) -> Self {
        MemoryRegion { memory: M::from(buffer), layout: RegionLayout { pitch, ..RegionLayout::default() } }
    }
}

impl<'a> MemoryRegion<SrcMemory<'a>> {
    /// Host memory `host` to read, with rows of `pitch` bytes, the box at (0, 0, 0).
    pub fn host(host: &'a [u8], pitch: u64) -> Self {
        MemoryRegion { memory: SrcMemory::Host(host), layout: RegionLayout { pitch, ..RegionLayout::default() } }
    }
}

impl<'a> MemoryRegion<DstMemory<'a>> {
    /// Host memory `host` to write, with rows of `pitch` bytes, the box at (0, 0, 0).
    pub fn host_mut(host: &'a mut [u8], pitch: u64) -> Self {
        MemoryRegion { memory: DstMemory::Host(host), layout: RegionLayout { pitch, ..RegionLayout::default() } }
    }
}

/// The size of the copied box: `depth` slices of `rows` rows of `width` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Extent3D {
    /// Bytes per row.
    pub width: u64,
    /// Rows per slice (at least 1).
    pub rows: u64,
    /// Slices (at least 1; 1 for a 2D copy).
    pub depth: u64,
}

impl Extent3D {
    /// A 2D box: `rows` rows of `width` bytes.
    pub fn new_2d(width: u64, rows: u64) -> Extent3D {
        Extent3D { width, rows, depth: 1 }
    }
    /// A 3D box.
    pub fn new_3d(width: u64, rows: u64, depth: u64) -> Extent3D {
        Extent3D { width, rows, depth }
    }
}

fn region_error(side: &str, what: String) -> Error {
    Error::binding(Status::InvalidArgument, format!("copy_3d: the host region of '{}' {}", side, what))
}

/// Checks that every byte the copy touches in a host side of `len` bytes lies in it. The end is
/// computed as the driver will address the memory: `offset + ((z + depth - 1) * height + y +
/// rows - 1) * pitch + x + width`, where a 2D copy's slice height is at least `y + rows` (the
/// library raises it to that for the driver).
pub(crate) fn check_host_region(layout: &RegionLayout, extent: &Extent3D, len: usize, side: &str) -> Result<()> {
    let overflow = || region_error(side, "overflows 64 bits".to_string());
    if extent.rows == 0 || extent.depth == 0 {
        return Err(Error::binding(Status::InvalidArgument, "copy_3d: 'rows' and 'depth' must be at least 1".into()));
    }
    let x_end = layout.x.checked_add(extent.width).ok_or_else(overflow)?;
    if x_end > layout.pitch {
        return Err(region_error(side, format!("has x + width = {} above its pitch {}", x_end, layout.pitch)));
    }
    let y_end = layout.y.checked_add(extent.rows).ok_or_else(overflow)?;
    let height = if extent.depth == 1 { layout.height.max(y_end) } else { layout.height };
    if y_end > height {
        return Err(region_error(side, format!("has y + rows = {} above its height {}", y_end, height)));
    }
    let last_slice = layout.z.checked_add(extent.depth - 1).ok_or_else(overflow)?;
    let last_row = last_slice.checked_mul(height).and_then(|r| r.checked_add(y_end - 1)).ok_or_else(overflow)?;
    let end = last_row
        .checked_mul(layout.pitch)
        .and_then(|b| b.checked_add(x_end))
        .and_then(|b| b.checked_add(layout.offset))
        .ok_or_else(overflow)?;
    if end > len as u64 {
        return Err(region_error(side, format!("ends at byte {}, past the end of its slice ({} bytes)", end, len)));
    }
    Ok(())
}

fn raw_region(
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

/// Checks the host sides and makes the C struct; whether a side is host memory.
pub(crate) fn prepare(dst: &mut MemoryRegion<DstMemory<'_>>, src: &MemoryRegion<SrcMemory<'_>>, extent: Extent3D) -> Result<(sys::cucore_copy_3d_t, bool)> {
    let mut copy = sys::cucore_copy_3d_t::INIT;
    copy.width = extent.width;
    copy.rows = extent.rows;
    copy.depth = extent.depth;
    let mut host = false;
    copy.src = match src.memory {
        SrcMemory::Buffer(b) => raw_region(&src.layout, b.as_raw(), ptr::null_mut()),
        SrcMemory::Host(h) => {
            check_host_region(&src.layout, &extent, h.len(), "src")?;
            host = true;
            // The library only reads through this pointer (the C struct has one pointer type).
            raw_region(&src.layout, ptr::null_mut(), h.as_ptr() as *mut c_void)
        }
    };
    let dst_layout = dst.layout;
    copy.dst = match &mut dst.memory {
        DstMemory::Buffer(b) => raw_region(&dst_layout, b.as_raw(), ptr::null_mut()),
        DstMemory::Host(h) => {
            check_host_region(&dst_layout, &extent, h.len(), "dst")?;
            host = true;
            raw_region(&dst_layout, ptr::null_mut(), h.as_mut_ptr() as *mut c_void)
        }
    };
    Ok((copy, host))
}

/// Copies `extent` from `src` to `dst`, ordered on `stream` (`cucore_copy_3d`). Host slices are
/// bounds-checked here and the call waits for the stream when a side is a host slice, so `dst`
/// holds the data when this returns `Ok`; between buffers it returns at once. Invalid regions
/// fail with `Status::InvalidArgument` and queue nothing.
pub fn copy_3d(
    mut dst: MemoryRegion<DstMemory<'_>>,
    src: MemoryRegion<SrcMemory<'_>>,
    extent: Extent3D,
    stream: &Stream,
) -> Result<()> {
    let (copy, host) = prepare(&mut dst, &src, extent)?;
    // SAFETY: the host sides were checked to lie inside slices borrowed until the synchronize
    // below; buffer sides are checked by the library.
    check(unsafe { sys::cucore_copy_3d(&copy, stream.as_raw()) })?;
    if host {
        // As in Buffer::copy_from_host: a failed synchronize leaves no copy to run later.
        stream.synchronize()?;
    }
    Ok(())
}

/// [`copy_3d`] without waiting for the stream.
///
/// # Safety
/// Host slices must stay valid until the copy has run (until `stream`, or an event recorded
/// after this call, has been synchronized): a source slice unmodified, a destination slice
/// neither read nor written. If the call returns `Err`, nothing was queued.
pub unsafe fn copy_3d_async(
    mut dst: MemoryRegion<DstMemory<'_>>,
    src: MemoryRegion<SrcMemory<'_>>,
    extent: Extent3D,
    stream: &Stream,
) -> Result<()> {
    let (copy, _) = prepare(&mut dst, &src, extent)?;
    // SAFETY: host sides checked above; the caller keeps them valid until the copy has run.
    check(unsafe { sys::cucore_copy_3d(&copy, stream.as_raw()) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(offset: u64, pitch: u64, height: u64, x: u64, y: u64, z: u64) -> RegionLayout {
        RegionLayout { offset, pitch, height, x, y, z }
    }

    #[test]
    fn host_regions_that_fit_exactly_pass() {
        // 4 rows of 8 bytes in rows of 16: the last byte is row 3, byte 7 -> end 3*16 + 8 = 56.
        assert!(check_host_region(&layout(0, 16, 0, 0, 0, 0), &Extent3D::new_2d(8, 4), 56, "src").is_ok());
        // Offset and x, y shift it: 10 + (1 + 3) * 16 + 4 + 8 = 86.
        assert!(check_host_region(&layout(10, 16, 0, 4, 1, 0), &Extent3D::new_2d(8, 4), 86, "src").is_ok());
        // 3D: slices of 5 rows, z = 1, 2 slices: ((1 + 1) * 5 + 0 + 2 - 1) * 16 + 16 = 192.
        assert!(check_host_region(&layout(0, 16, 5, 0, 0, 1), &Extent3D::new_3d(16, 2, 2), 192, "dst").is_ok());
        // A 2D copy at slice z uses a slice height of at least y + rows: (2 * 3 + 2) * 4 + 4 = 36.
        assert!(check_host_region(&layout(0, 4, 0, 0, 0, 2), &Extent3D::new_2d(4, 3), 36, "dst").is_ok());
        // Zero width touches nothing past the start.
        assert!(check_host_region(&layout(0, 0, 0, 0, 0, 0), &Extent3D::new_2d(0, 1), 0, "src").is_ok());
    }

    #[test]
    fn host_regions_one_byte_too_long_fail() {
        for (l, e, len) in [
            (layout(0, 16, 0, 0, 0, 0), Extent3D::new_2d(8, 4), 55),
            (layout(10, 16, 0, 4, 1, 0), Extent3D::new_2d(8, 4), 85),
            (layout(0, 16, 5, 0, 0, 1), Extent3D::new_3d(16, 2, 2), 191),
            (layout(0, 4, 0, 0, 0, 2), Extent3D::new_2d(4, 3), 35),
        ] {
            let err = check_host_region(&l, &e, len, "src").unwrap_err();
            assert_eq!(err.status, Status::InvalidArgument, "{:?} {:?} {}", l, e, len);
            assert!(err.message.contains("past the end"), "{}", err.message);
            assert!(err.message.contains("'src'"), "{}", err.message);
        }
    }

    #[test]
    fn host_regions_with_bad_layouts_fail() {
        let cases = [
            (layout(0, 8, 0, 1, 0, 0), Extent3D::new_2d(8, 1), "above its pitch"),
            (layout(0, 8, 4, 0, 3, 0), Extent3D::new_3d(8, 2, 2), "above its height"),
            (layout(u64::MAX, 8, 0, 0, 0, 0), Extent3D::new_2d(8, 1), "overflows"),
            (layout(0, 8, u64::MAX, 0, 0, 2), Extent3D::new_3d(8, 1, 2), "overflows"),
            (layout(0, u64::MAX, 0, u64::MAX, 0, 0), Extent3D::new_2d(1, 1), "overflows"),
            (layout(0, 8, 0, 0, 0, 0), Extent3D::new_3d(8, 0, 1), "at least 1"),
            (layout(0, 8, 0, 0, 0, 0), Extent3D::new_3d(8, 1, 0), "at least 1"),
        ];
        for (l, e, want) in cases {
            let err = check_host_region(&l, &e, usize::MAX, "dst").unwrap_err();
            assert_eq!(err.status, Status::InvalidArgument, "{:?} {:?}", l, e);
            assert!(err.message.contains(want), "{:?} {:?}: {}", l, e, err.message);
        }
    }

    #[test]
    fn regions_build_their_layout() {
        let data = [0u8; 64];
        let r = MemoryRegion::host(&data, 16).offset(3).height(4).at(1, 2, 3);
        assert_eq!(r.layout, layout(3, 16, 4, 1, 2, 3));
        let mut out = [0u8; 8];
        let d = MemoryRegion::host_mut(&mut out, 8).at(0, 1, 0);
        assert_eq!(d.layout, layout(0, 8, 0, 0, 1, 0));
        assert_eq!(Extent3D::new_2d(5, 6), Extent3D { width: 5, rows: 6, depth: 1 });
    }
}
