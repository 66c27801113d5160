//! The types of `include/cucore/dlpack.h`: DLPack 1.x's ABI (`DLManagedTensorVersioned` and
//! the legacy `DLManagedTensor`, with `DLTensor`, `DLDevice`, `DLDataType`) and the layout an
//! export presents a buffer as. The functions are declared in `lib.rs`, where the binding check
//! reads them. Layouts are checked by the tests below against gcc's offsets on the 64-bit targets
//! the library supports.

#![allow(non_upper_case_globals)]

use std::os::raw::{c_int, c_void};
use std::ptr;

/// The DLPack version the header describes.
pub const DLPACK_MAJOR_VERSION: u32 = 1;
pub const DLPACK_MINOR_VERSION: u32 = 1;
/// `flags` bit of a read-only tensor (versioned tensors only).
pub const DLPACK_FLAG_BITMASK_READ_ONLY: u64 = 1 << 0;
/// `flags` bit of a tensor the producer copied.
pub const DLPACK_FLAG_BITMASK_IS_COPIED: u64 = 1 << 1;
/// The most dimensions libcucore exports or imports (`CUCORE_DLPACK_MAX_NDIM`).
pub const CUCORE_DLPACK_MAX_NDIM: i32 = 32;

/// `DLPackVersion`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DLPackVersion {
    pub major: u32,
    pub minor: u32,
}

/// `DLDeviceType` (a C enum: DLPack defines more values than these).
pub type DLDeviceType = c_int;
pub const kDLCPU: DLDeviceType = 1;
pub const kDLCUDA: DLDeviceType = 2;
pub const kDLCUDAHost: DLDeviceType = 3;
pub const kDLCUDAManaged: DLDeviceType = 13;

/// `DLDevice`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DLDevice {
    pub device_type: DLDeviceType,
    pub device_id: i32,
}

/// `DLDataTypeCode` values, as stored in `DLDataType::code` (a `uint8_t`).
pub const kDLInt: u8 = 0;
pub const kDLUInt: u8 = 1;
pub const kDLFloat: u8 = 2;
pub const kDLOpaqueHandle: u8 = 3;
pub const kDLBfloat: u8 = 4;
pub const kDLComplex: u8 = 5;
pub const kDLBool: u8 = 6;

/// `DLDataType`: `lanes` elements of `bits` bits of kind `code`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DLDataType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

/// `DLTensor`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DLTensor {
    pub data: *mut c_void,
    pub device: DLDevice,
    pub ndim: i32,
    pub dtype: DLDataType,
    pub shape: *mut i64,
    /// In elements; NULL: compact row-major.
    pub strides: *mut i64,
    pub byte_offset: u64,
}

/// `DLManagedTensor` (legacy, unversioned).
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensor {
    pub dl_tensor: DLTensor,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(this: *mut DLManagedTensor)>,
}

/// `DLManagedTensorVersioned` (DLPack 1.x).
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensorVersioned {
    pub version: DLPackVersion,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(this: *mut DLManagedTensorVersioned)>,
    pub flags: u64,
    pub dl_tensor: DLTensor,
}

/// `cucore_dlpack_layout_t`: how to present a buffer as a tensor (the header has no INIT
/// macro; `Default` sets `struct_size` and zeroes the rest, which a caller must then fill in:
/// a zero `dtype` is rejected).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct cucore_dlpack_layout_t {
    pub struct_size: u32,
    /// 1: set `DLPACK_FLAG_BITMASK_READ_ONLY` (versioned exports only).
    pub read_only: u32,
    /// `lanes >= 1`; `bits` a multiple of 8.
    pub dtype: DLDataType,
    /// 0 ..= `CUCORE_DLPACK_MAX_NDIM`.
    pub ndim: i32,
    /// `ndim` entries >= 0 (copied).
    pub shape: *const i64,
    /// `ndim` entries in elements (copied), or NULL: compact row-major.
    pub strides: *const i64,
    /// Into the buffer.
    pub byte_offset: u64,
}

impl Default for cucore_dlpack_layout_t {
    fn default() -> Self {
        cucore_dlpack_layout_t {
            struct_size: std::mem::size_of::<cucore_dlpack_layout_t>() as u32,
            read_only: 0,
            dtype: DLDataType::default(),
            ndim: 0,
            shape: ptr::null(),
            strides: ptr::null(),
            byte_offset: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, size_of};


    #[test]
    fn layout_small_structs() {
        assert_eq!((size_of::<DLPackVersion>(), align_of::<DLPackVersion>()), (8, 4));
        assert_eq!((size_of::<DLDevice>(), align_of::<DLDevice>()), (8, 4));
        assert_eq!((size_of::<DLDataType>(), align_of::<DLDataType>()), (4, 2));
        assert_eq!((offset!(DLDataType, bits), offset!(DLDataType, lanes)), (1, 2));
        assert_eq!(size_of::<DLDeviceType>(), 4);
    }

    #[test]
    fn layout_tensors() {
        assert_eq!((size_of::<DLTensor>(), align_of::<DLTensor>()), (48, 8));
        assert_eq!(offset!(DLTensor, device), 8);
        assert_eq!(offset!(DLTensor, ndim), 16);
        assert_eq!(offset!(DLTensor, dtype), 20);
        assert_eq!(offset!(DLTensor, shape), 24);
        assert_eq!(offset!(DLTensor, strides), 32);
        assert_eq!(offset!(DLTensor, byte_offset), 40);
        assert_eq!(size_of::<DLManagedTensor>(), 64);
        assert_eq!(offset!(DLManagedTensor, manager_ctx), 48);
        assert_eq!(offset!(DLManagedTensor, deleter), 56);
        assert_eq!(size_of::<DLManagedTensorVersioned>(), 80);
        assert_eq!(offset!(DLManagedTensorVersioned, manager_ctx), 8);
        assert_eq!(offset!(DLManagedTensorVersioned, deleter), 16);
        assert_eq!(offset!(DLManagedTensorVersioned, flags), 24);
        assert_eq!(offset!(DLManagedTensorVersioned, dl_tensor), 32);
    }

    #[test]
    fn layout_dlpack_layout() {
        type T = cucore_dlpack_layout_t;
        assert_eq!((size_of::<T>(), align_of::<T>()), (40, 8));
        assert_eq!(offset!(T, read_only), 4);
        assert_eq!(offset!(T, dtype), 8);
        assert_eq!(offset!(T, ndim), 12);
        assert_eq!(offset!(T, shape), 16);
        assert_eq!(offset!(T, strides), 24);
        assert_eq!(offset!(T, byte_offset), 32);
        let d = T::default();
        assert_eq!(d.struct_size, 40);
        assert!(d.shape.is_null() && d.strides.is_null());
    }

    #[test]
    fn values_match_the_header() {
        assert_eq!((kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged), (1, 2, 3, 13));
        assert_eq!((kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLComplex, kDLBool), (0, 1, 2, 4, 5, 6));
        assert_eq!(DLPACK_FLAG_BITMASK_READ_ONLY, 1);
        assert_eq!(CUCORE_DLPACK_MAX_NDIM, 32);
    }
}
