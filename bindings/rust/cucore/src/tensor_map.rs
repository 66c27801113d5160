//! TensorMap (TMA) descriptors (`include/cucore/tensor_map.h`; cuda.core's `TensorMapDescriptor`,
//! `TensorMapDescriptorOptions` and the `TensorMap*` enums).
//!
//! A [`TensorMapDescriptor`] tells the tensor memory accelerator of an sm_90 or newer GPU how a
//! tensor in global memory is laid out and which box of it one bulk copy moves. Kernels take it as
//! a `const __grid_constant__ CUtensorMap` parameter: pass `&descriptor` to
//! [`launch`](crate::launch()) and its 128 bytes are passed by value. Dimensions, strides and boxes
//! are given innermost first, as the driver (and the C ABI) takes them. Made over a [`Buffer`] it
//! holds the buffer's memory, so the buffer may be dropped or closed first.
//!
//! ```no_run
//! use cucore::{launch, Buffer, Kernel, LaunchConfig, Stream, TensorMapDataType, TensorMapDescriptor,
//!              TensorMapDescriptorOptions, TensorMapSwizzle};
//!
//! # fn run(stream: &Stream, kernel: &Kernel, tensor: &Buffer, out: &Buffer) -> cucore::Result<()> {
//! // 100 x 50 floats, rows of 400 bytes; boxes of 32 x 8.
//! let tmap = TensorMapDescriptor::tiled(
//!     tensor,
//!     TensorMapDataType::Float32,
//!     &[100, 50],
//!     &[400],
//!     &[32, 8],
//!     &TensorMapDescriptorOptions::default().swizzle(TensorMapSwizzle::Swizzle128B),
//! )?;
//! launch(stream, &LaunchConfig::new(1, 128), kernel, &[&tmap, &0i32, &0i32, out])?;
//! # Ok(())
//! # }
//! ```
//!
//! Every rule the driver documents is checked before the driver is asked; a refusal is
//! `Status::InvalidArgument` whose message names the rule ("boxDim\[i\] must be in 1..256", ...).

use std::fmt;
use std::os::raw::c_void;
use std::ptr::{self, NonNull};

use cucore_sys as sys;

use crate::buffer::Buffer;
use crate::common::{check, Error, Result, Status};
use crate::launch::KernelArg;

/// The size of a descriptor in bytes (a `CUtensorMap`).
pub const TENSOR_MAP_SIZE: usize = sys::CUCORE_TENSOR_MAP_SIZE as usize;
const MAX_RANK: usize = sys::CUCORE_TENSOR_MAP_MAX_RANK as usize;

/// Element types (`cucore_tensor_map_data_type_t`; cuda.core's `TensorMapDataType`). The packed
/// types hold 16 values of 4 or 6 bits in 8 or 16 bytes; their dimensions count values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum TensorMapDataType {
    Uint8,
    Uint16,
    Uint32,
    Int32,
    Uint64,
    Int64,
    Float16,
    Float32,
    Float64,
    Bfloat16,
    Float32Ftz,
    Tfloat32,
    Tfloat32Ftz,
    /// `16U4_ALIGN8B`: 16 x 4 bits in 8 bytes.
    Uint4x16Align8B,
    /// `16U4_ALIGN16B`: 16 x 4 bits in 16 bytes.
    Uint4x16Align16B,
    /// `16U6_ALIGN16B`: 16 x 6 bits in 16 bytes.
    Uint6x16Align16B,
}

impl TensorMapDataType {
    /// Every data type, in the driver's order.
    pub const ALL: [TensorMapDataType; 16] = [
        Self::Uint8, Self::Uint16, Self::Uint32, Self::Int32, Self::Uint64, Self::Int64, Self::Float16,
        Self::Float32, Self::Float64, Self::Bfloat16, Self::Float32Ftz, Self::Tfloat32, Self::Tfloat32Ftz,
        Self::Uint4x16Align8B, Self::Uint4x16Align16B, Self::Uint6x16Align16B,
    ];

    /// The raw `cucore_tensor_map_data_type_t` (the driver's value + 1).
    pub fn raw(self) -> sys::cucore_tensor_map_data_type_t {
        Self::ALL.iter().position(|t| *t == self).map(|i| i as i32 + 1).unwrap_or(0)
    }
}

/// Interleaved layouts (`cucore_tensor_map_interleave_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TensorMapInterleave {
    /// No interleave: the default.
    #[default]
    None,
    /// NC/8HWC8 (16 bytes).
    Interleave16B,
    /// NC/16HWC16 (32 bytes; needs swizzle 32B).
    Interleave32B,
}

/// Shared-memory bank swizzling (`cucore_tensor_map_swizzle_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TensorMapSwizzle {
    /// No swizzle: the default.
    #[default]
    None,
    /// 16-byte chunks within 32 bytes.
    Swizzle32B,
    /// 16-byte chunks within 64 bytes.
    Swizzle64B,
    /// 16-byte chunks within 128 bytes.
    Swizzle128B,
    /// 32-byte chunks within 128 bytes.
    Swizzle128BAtom32B,
    /// As `Swizzle128BAtom32B`, 8-byte halves swapped every other row.
    Swizzle128BAtom32BFlip8B,
    /// 64-byte chunks within 128 bytes.
    Swizzle128BAtom64B,
}

/// L2 fill granularity (`cucore_tensor_map_l2_promotion_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[allow(non_camel_case_types)]
pub enum TensorMapL2Promotion {
    /// None: the default.
    #[default]
    None,
    /// 64 bytes.
    L2_64B,
    /// 128 bytes.
    L2_128B,
    /// 256 bytes.
    L2_256B,
}

/// What elements outside the tensor read (`cucore_tensor_map_oob_fill_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TensorMapOOBFill {
    /// Zero: the default.
    #[default]
    None,
    /// A NaN that FMA treats as zero (floating-point types only).
    NanRequestZeroFma,
}

/// How an im2col-wide descriptor loads along W (`cucore_tensor_map_im2col_wide_mode_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TensorMapIm2ColWideMode {
    /// `pixels_per_column` elements: the default.
    #[default]
    W,
    /// 128 elements.
    W128,
}

/// Which encode made a descriptor (`cucore_tensor_map_kind_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TensorMapKind {
    /// `cuTensorMapEncodeTiled`.
    Tiled,
    /// `cuTensorMapEncodeIm2col`.
    Im2col,
    /// `cuTensorMapEncodeIm2colWide`.
    Im2colWide,
}

/// How a descriptor traverses and lays out what it copies (`cucore_tensor_map_descriptor_options_t`;
/// cuda.core's `TensorMapDescriptorOptions` without the box and type, which the constructors take).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TensorMapDescriptorOptions {
    /// Traversal step per dimension, innermost first, 1..8; 0: 1.
    pub element_strides: [u32; MAX_RANK],
    /// The interleaved layout.
    pub interleave: TensorMapInterleave,
    /// The shared-memory swizzle.
    pub swizzle: TensorMapSwizzle,
    /// The L2 promotion.
    pub l2_promotion: TensorMapL2Promotion,
    /// The out-of-bounds fill.
    pub oob_fill: TensorMapOOBFill,
    /// im2col-wide descriptors only.
    pub im2col_wide_mode: TensorMapIm2ColWideMode,
}

impl TensorMapDescriptorOptions {
    setters! {
        /// Sets `element_strides` (innermost first; 0: 1).
        element_strides: [u32; MAX_RANK] => |s: [u32; MAX_RANK]| s;
        /// Sets `interleave`.
        interleave: TensorMapInterleave => |v: TensorMapInterleave| v;
        /// Sets `swizzle`.
        swizzle: TensorMapSwizzle => |v: TensorMapSwizzle| v;
        /// Sets `l2_promotion`.
        l2_promotion: TensorMapL2Promotion => |v: TensorMapL2Promotion| v;
        /// Sets `oob_fill`.
        oob_fill: TensorMapOOBFill => |v: TensorMapOOBFill| v;
        /// Sets `im2col_wide_mode`.
        im2col_wide_mode: TensorMapIm2ColWideMode => |v: TensorMapIm2ColWideMode| v;
    }

    /// The raw options struct.
    pub fn to_raw(&self) -> sys::cucore_tensor_map_descriptor_options_t {
        let mut o = sys::cucore_tensor_map_descriptor_options_t::INIT;
        o.element_strides = self.element_strides;
        o.interleave = self.interleave as i32;
        o.swizzle = self.swizzle as i32;
        o.l2_promotion = self.l2_promotion as i32;
        o.oob_fill = self.oob_fill as i32;
        o.im2col_wide_mode = self.im2col_wide_mode as i32;
        o
    }
}

/// Where a descriptor points: all of a [`Buffer`] (`&buffer`), an address within one (held too),
/// or a raw device address the caller keeps valid (`u64`).
#[derive(Clone, Copy, Debug)]
pub enum TensorMapTarget<'a> {
    /// The buffer's start.
    Buffer(&'a Buffer),
    /// An address within the buffer.
    BufferAt(&'a Buffer, u64),
    /// A raw device address.
    Address(u64),
}

impl<'a> From<&'a Buffer> for TensorMapTarget<'a> {
    fn from(buffer: &'a Buffer) -> Self {
        TensorMapTarget::Buffer(buffer)
    }
}

impl From<u64> for TensorMapTarget<'_> {
    fn from(address: u64) -> Self {
        TensorMapTarget::Address(address)
    }
}

impl TensorMapTarget<'_> {
    fn raw(self) -> (*mut sys::cucore_buffer_t, u64) {
        match self {
            TensorMapTarget::Buffer(b) => (b.as_raw(), 0),
            TensorMapTarget::BufferAt(b, address) => (b.as_raw(), address),
            TensorMapTarget::Address(address) => (ptr::null_mut(), address),
        }
    }
}

/// The raw layout of a type, dimensions and strides (innermost first). More than 5 dimensions keep
/// their count as the rank, which the library refuses naming the rule.
fn layout(data_type: TensorMapDataType, global_dim: &[u64], global_strides: &[u64]) -> Result<sys::cucore_tensor_map_layout_t> {
    let mut l = sys::cucore_tensor_map_layout_t::INIT;
    l.data_type = data_type.raw();
    l.rank = global_dim.len() as u32;
    if global_strides.len() + 1 != global_dim.len().max(1) {
        return Err(Error::binding(
            Status::InvalidArgument,
            format!("global_strides has {} entries; a rank-{} tensor has rank - 1", global_strides.len(), global_dim.len()),
        ));
    }
    for (i, d) in global_dim.iter().take(MAX_RANK).enumerate() {
        l.global_dim[i] = *d;
    }
    for (i, s) in global_strides.iter().take(MAX_RANK - 1).enumerate() {
        l.global_strides[i] = *s;
    }
    Ok(l)
}

/// A TMA descriptor (`cucore_tensor_map_descriptor_t`; cuda.core's `TensorMapDescriptor`), a
/// kernel argument by its 128 bytes (pass `&descriptor` to [`launch`](crate::launch())). It holds
/// the buffer it describes. `Clone` adds a reference to the same descriptor.
pub struct TensorMapDescriptor {
    raw: NonNull<sys::cucore_tensor_map_descriptor_t>,
}

handle_type!(TensorMapDescriptor, sys::cucore_tensor_map_descriptor_t);
identity_eq!(TensorMapDescriptor);

impl TensorMapDescriptor {
    /// A tiled descriptor (`cucore_tensor_map_descriptor_create_tiled`, `cuTensorMapEncodeTiled`)
    /// of the tensor of `global_dim` elements (innermost first, 1-5 dimensions) and
    /// `global_strides` bytes (dimensions 1.., rank - 1 of them) at `target`, moving boxes of
    /// `box_dim` elements.
    pub fn tiled<'a>(
        target: impl Into<TensorMapTarget<'a>>,
        data_type: TensorMapDataType,
        global_dim: &[u64],
        global_strides: &[u64],
        box_dim: &[u32],
        options: &TensorMapDescriptorOptions,
    ) -> Result<TensorMapDescriptor> {
        let l = layout(data_type, global_dim, global_strides)?;
        if box_dim.len() != global_dim.len() {
            return Err(Error::binding(
                Status::InvalidArgument,
                format!("box_dim has {} entries; the rank is {}", box_dim.len(), global_dim.len()),
            ));
        }
        let mut boxes = [0u32; MAX_RANK];
        for (i, b) in box_dim.iter().take(MAX_RANK).enumerate() {
            boxes[i] = *b;
        }
        let o = options.to_raw();
        let (buffer, address) = target.into().raw();
        let mut raw = ptr::null_mut();
        // SAFETY: a live buffer handle (or NULL), valid structs and arrays of 5, a valid out-pointer;
        // we own the reference it gives.
        check(unsafe {
            sys::cucore_tensor_map_descriptor_create_tiled(buffer, address, &l, boxes.as_ptr(), &o, &mut raw)
        })?;
        TensorMapDescriptor::from_out(raw)
    }

    /// An im2col descriptor (`cuTensorMapEncodeIm2col`) of an NWC, NHWC or NDHWC tensor (rank 3-5,
    /// dimension 0 is C); the corners are rank - 2 offsets each, in {D, H, W} order.
    #[allow(clippy::too_many_arguments)]
    pub fn im2col<'a>(
        target: impl Into<TensorMapTarget<'a>>,
        data_type: TensorMapDataType,
        global_dim: &[u64],
        global_strides: &[u64],
        pixel_box_lower_corner: &[i32],
        pixel_box_upper_corner: &[i32],
        channels_per_pixel: u32,
        pixels_per_column: u32,
        options: &TensorMapDescriptorOptions,
    ) -> Result<TensorMapDescriptor> {
        let l = layout(data_type, global_dim, global_strides)?;
        let corners = global_dim.len().saturating_sub(2);
        if pixel_box_lower_corner.len() != corners || pixel_box_upper_corner.len() != corners {
            return Err(Error::binding(
                Status::InvalidArgument,
                format!("the pixel box corners need {} offsets each (rank - 2)", corners),
            ));
        }
        let (mut lower, mut upper) = ([0i32; 3], [0i32; 3]);
        for j in 0..corners.min(3) {
            lower[j] = pixel_box_lower_corner[j];
            upper[j] = pixel_box_upper_corner[j];
        }
        let o = options.to_raw();
        let (buffer, address) = target.into().raw();
        let mut raw = ptr::null_mut();
        // SAFETY: as in `tiled`; the corners are arrays of 3.
        check(unsafe {
            sys::cucore_tensor_map_descriptor_create_im2col(
                buffer, address, &l, lower.as_ptr(), upper.as_ptr(), channels_per_pixel, pixels_per_column, &o,
                &mut raw,
            )
        })?;
        TensorMapDescriptor::from_out(raw)
    }

    /// An im2col-wide descriptor (`cuTensorMapEncodeIm2colWide`; compute capability 10.0): as
    /// [`im2col`](Self::im2col) with the box bounded along W only and `options.im2col_wide_mode`.
    /// `Status::NotSupported` on drivers without it.
    #[allow(clippy::too_many_arguments)]
    pub fn im2col_wide<'a>(
        target: impl Into<TensorMapTarget<'a>>,
        data_type: TensorMapDataType,
        global_dim: &[u64],
        global_strides: &[u64],
        pixel_box_lower_corner_width: i32,
        pixel_box_upper_corner_width: i32,
        channels_per_pixel: u32,
        pixels_per_column: u32,
        options: &TensorMapDescriptorOptions,
    ) -> Result<TensorMapDescriptor> {
        let l = layout(data_type, global_dim, global_strides)?;
        let o = options.to_raw();
        let (buffer, address) = target.into().raw();
        let mut raw = ptr::null_mut();
        // SAFETY: as in `tiled`.
        check(unsafe {
            sys::cucore_tensor_map_descriptor_create_im2col_wide(
                buffer, address, &l, pixel_box_lower_corner_width, pixel_box_upper_corner_width, channels_per_pixel,
                pixels_per_column, &o, &mut raw,
            )
        })?;
        TensorMapDescriptor::from_out(raw)
    }

    /// Points the descriptor at `target` (`cucore_tensor_map_descriptor_replace_address`), under
    /// the same alignment rule and, for a buffer, the same fit; it then holds that buffer. Takes
    /// `&mut self` since a launch reads the bytes it rewrites (clones share them: do not replace
    /// while a clone is being launched on another thread).
    pub fn replace_address<'a>(&mut self, target: impl Into<TensorMapTarget<'a>>) -> Result<()> {
        let (buffer, address) = target.into().raw();
        // SAFETY: live handles.
        check(unsafe { sys::cucore_tensor_map_descriptor_replace_address(self.as_raw(), buffer, address) })
    }

    /// A copy of the 128 bytes (`cucore_tensor_map_descriptor_copy`).
    pub fn bytes(&self) -> Result<[u8; TENSOR_MAP_SIZE]> {
        let mut out = [0u8; TENSOR_MAP_SIZE];
        // SAFETY: a live handle and 128 writable bytes.
        check(unsafe {
            sys::cucore_tensor_map_descriptor_copy(self.as_raw(), out.as_mut_ptr() as *mut c_void, out.len())
        })?;
        Ok(out)
    }

    /// The 64-byte aligned storage of the 128 bytes, valid while this descriptor lives
    /// (`cucore_tensor_map_descriptor_data`).
    pub fn data(&self) -> Result<*const c_void> {
        let mut data = ptr::null();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_tensor_map_descriptor_data(self.as_raw(), &mut data) })?;
        Ok(data)
    }

    /// The global address it points at now (`cucore_tensor_map_descriptor_address`).
    pub fn address(&self) -> Result<u64> {
        let mut a = 0u64;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_tensor_map_descriptor_address(self.as_raw(), &mut a) })?;
        Ok(a)
    }

    /// Which encode made it (`cucore_tensor_map_descriptor_kind`).
    pub fn kind(&self) -> Result<TensorMapKind> {
        let mut k: sys::cucore_tensor_map_kind_t = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_tensor_map_descriptor_kind(self.as_raw(), &mut k) })?;
        Ok(match k {
            sys::CUCORE_TENSOR_MAP_KIND_IM2COL => TensorMapKind::Im2col,
            sys::CUCORE_TENSOR_MAP_KIND_IM2COL_WIDE => TensorMapKind::Im2colWide,
            _ => TensorMapKind::Tiled,
        })
    }
}

impl fmt::Debug for TensorMapDescriptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.kind(), self.address()) {
            (Ok(k), Ok(a)) => write!(f, "TensorMapDescriptor({:?} at {:#x})", k, a),
            _ => write!(f, "TensorMapDescriptor(<invalid, library handle {:p}>)", self.as_raw()),
        }
    }
}

// SAFETY: the bytes are the descriptor's own 128-byte storage inside the library, valid while the
// descriptor (borrowed for the launch) lives; replace_address, their only writer, takes `&mut`.
// They name the memory of a buffer the descriptor holds, or an address its maker gave, as a u64
// argument would.
unsafe impl KernelArg for TensorMapDescriptor {
    #[inline]
    fn kernel_arg(&self, _scratch: &mut u64) -> Result<(*const c_void, usize)> {
        Ok((self.data()?, TENSOR_MAP_SIZE))
    }
}

// SAFETY: as for TensorMapDescriptor.
unsafe impl KernelArg for &TensorMapDescriptor {
    #[inline]
    fn kernel_arg(&self, scratch: &mut u64) -> Result<(*const c_void, usize)> {
        (**self).kernel_arg(scratch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_translate_field_by_field() {
        assert_eq!(TensorMapDescriptorOptions::default().to_raw(), sys::cucore_tensor_map_descriptor_options_t::INIT);
        let o = TensorMapDescriptorOptions::default()
            .element_strides([1, 2, 0, 0, 0])
            .interleave(TensorMapInterleave::Interleave32B)
            .swizzle(TensorMapSwizzle::Swizzle128BAtom64B)
            .l2_promotion(TensorMapL2Promotion::L2_256B)
            .oob_fill(TensorMapOOBFill::NanRequestZeroFma)
            .im2col_wide_mode(TensorMapIm2ColWideMode::W128)
            .to_raw();
        assert_eq!(o.element_strides, [1, 2, 0, 0, 0]);
        assert_eq!((o.interleave, o.swizzle, o.l2_promotion, o.oob_fill, o.im2col_wide_mode), (2, 6, 3, 1, 1));
    }

    #[test]
    fn data_types_are_the_drivers_plus_one() {
        assert_eq!(TensorMapDataType::Uint8.raw(), sys::CUCORE_TENSOR_MAP_DATA_TYPE_UINT8);
        assert_eq!(TensorMapDataType::Float32.raw(), sys::CUCORE_TENSOR_MAP_DATA_TYPE_FLOAT32);
        assert_eq!(TensorMapDataType::Uint6x16Align16B.raw(), sys::CUCORE_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B);
        assert_eq!(TensorMapDataType::ALL.len(), 16);
    }

    #[test]
    fn mismatched_lengths_are_refused_before_the_library() {
        let e = layout(TensorMapDataType::Float32, &[4, 4], &[]).unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument);
    }
}
