//! What `include/cucore/dlpack.h` holds: buffers exchanged with other libraries as DLPack
//! tensors (PyTorch, CuPy, JAX, NumPy... through their C or Rust DLPack interfaces), zero-copy.
//!
//! ```no_run
//! use cucore::{Buffer, DLPackLayout, DLPackTensor, Device, StreamOptions};
//!
//! # fn main() -> cucore::Result<()> {
//! let dev = Device::get(0)?;
//! let s = dev.create_stream(StreamOptions::default())?;
//! let buf = dev.allocate(64 * 32 * 4, &s)?;
//! let tensor = DLPackTensor::export(&buf, Some(&DLPackLayout::of::<f32>(&[64, 32])))?;
//! let raw = tensor.into_raw(); // a consumer takes it and calls its deleter once
//! # let consumer_takes = |_| ();
//! consumer_takes(raw);
//! # Ok(())
//! # }
//! ```
//!
//! Ownership: an exported tensor holds the buffer's memory (not the `Buffer`), so dropping or
//! closing the buffer while a consumer holds the tensor frees nothing; the tensor's deleter does.
//! A [`DLPackTensor`] calls the deleter when dropped unless [`DLPackTensor::into_raw`] handed it
//! on. An imported tensor belongs to the [`Buffer`], which calls its deleter once the buffer and
//! all its views are gone.

use std::fmt;
use std::os::raw::c_void;
use std::ptr::{self, NonNull};
use std::slice;

use cucore_sys as sys;

pub use sys::{DLDataType, DLManagedTensor, DLManagedTensorVersioned, DLTensor};

use crate::buffer::Buffer;
use crate::common::{check, Error, Result, Status};

/// Where a tensor's memory is (`DLDeviceType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DLDeviceType {
    /// `kDLCPU`: host memory.
    Cpu,
    /// `kDLCUDA`: device memory.
    Cuda,
    /// `kDLCUDAHost`: page-locked host memory.
    CudaHost,
    /// `kDLCUDAManaged`: managed (unified) memory.
    CudaManaged,
    /// Another DLPack device type (libcucore neither exports nor imports it).
    Other(i32),
}

impl DLDeviceType {
    pub fn from_raw(raw: sys::DLDeviceType) -> DLDeviceType {
        match raw {
            sys::kDLCPU => DLDeviceType::Cpu,
            sys::kDLCUDA => DLDeviceType::Cuda,
            sys::kDLCUDAHost => DLDeviceType::CudaHost,
            sys::kDLCUDAManaged => DLDeviceType::CudaManaged,
            other => DLDeviceType::Other(other),
        }
    }

    pub fn raw(self) -> sys::DLDeviceType {
        match self {
            DLDeviceType::Cpu => sys::kDLCPU,
            DLDeviceType::Cuda => sys::kDLCUDA,
            DLDeviceType::CudaHost => sys::kDLCUDAHost,
            DLDeviceType::CudaManaged => sys::kDLCUDAManaged,
            DLDeviceType::Other(raw) => raw,
        }
    }
}

/// A DLPack device: its type and id (0 for host memory).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DLDevice {
    pub device_type: DLDeviceType,
    pub device_id: i32,
}

/// Element types with a DLPack data type: `f32::DTYPE` is `{kDLFloat, 32, 1}`.
pub trait DLPackElement {
    const DTYPE: DLDataType;
}

macro_rules! element {
    ($($ty:ty => $code:expr),* $(,)?) => {
        $(impl DLPackElement for $ty {
            const DTYPE: DLDataType = DLDataType { code: $code as u8, bits: (8 * std::mem::size_of::<$ty>()) as u8, lanes: 1 };
        })*
    };
}
element!(i8 => sys::kDLInt, i16 => sys::kDLInt, i32 => sys::kDLInt, i64 => sys::kDLInt,
         u8 => sys::kDLUInt, u16 => sys::kDLUInt, u32 => sys::kDLUInt, u64 => sys::kDLUInt,
         f32 => sys::kDLFloat, f64 => sys::kDLFloat, bool => sys::kDLBool);

/// How a buffer is presented as a tensor (`cucore_dlpack_layout_t`): element type, shape,
/// strides in elements (None: compact row-major), byte offset into the buffer and, for versioned
/// tensors, read-only. Every element the layout reaches must lie in the buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DLPackLayout {
    pub dtype: DLDataType,
    pub shape: Vec<i64>,
    pub strides: Option<Vec<i64>>,
    pub byte_offset: u64,
    pub read_only: bool,
}

impl DLPackLayout {
    /// `shape` elements of `dtype` (an empty shape: a scalar).
    pub fn new(dtype: DLDataType, shape: &[i64]) -> DLPackLayout {
        DLPackLayout { dtype, shape: shape.to_vec(), strides: None, byte_offset: 0, read_only: false }
    }

    /// `shape` elements of type `T`: `DLPackLayout::of::<f32>(&[64, 32])`.
    pub fn of<T: DLPackElement>(shape: &[i64]) -> DLPackLayout {
        DLPackLayout::new(T::DTYPE, shape)
    }

    /// Strides in elements, one per dimension (negative ones are fine while every element stays
    /// in the buffer).
    pub fn strides(mut self, strides: &[i64]) -> DLPackLayout {
        self.strides = Some(strides.to_vec());
        self
    }

    pub fn byte_offset(mut self, offset: u64) -> DLPackLayout {
        self.byte_offset = offset;
        self
    }

    pub fn read_only(mut self, read_only: bool) -> DLPackLayout {
        self.read_only = read_only;
        self
    }

    /// The C layout, pointing into `self`. Fails where the Rust values cannot be expressed
    /// (more dimensions than `CUCORE_DLPACK_MAX_NDIM`, strides of another length).
    fn to_raw(&self) -> Result<sys::cucore_dlpack_layout_t> {
        if self.shape.len() > sys::CUCORE_DLPACK_MAX_NDIM as usize {
            return Err(Error::binding(
                Status::InvalidArgument,
                format!("DLPackLayout: {} dimensions, more than CUCORE_DLPACK_MAX_NDIM", self.shape.len()),
            ));
        }
        if let Some(strides) = &self.strides {
            if strides.len() != self.shape.len() {
                return Err(Error::binding(
                    Status::InvalidArgument,
                    format!("DLPackLayout: {} strides for {} dimensions", strides.len(), self.shape.len()),
                ));
            }
        }
        Ok(sys::cucore_dlpack_layout_t {
            read_only: u32::from(self.read_only),
            dtype: self.dtype,
            ndim: self.shape.len() as i32,
            shape: if self.shape.is_empty() { ptr::null() } else { self.shape.as_ptr() },
            strides: self.strides.as_ref().map_or(ptr::null(), |s| s.as_ptr()),
            byte_offset: self.byte_offset,
            ..sys::cucore_dlpack_layout_t::default()
        })
    }
}

/// A NULL layout pointer, or the C layout of `layout` (which must outlive the call).
fn layout_arg(layout: Option<&DLPackLayout>, storage: &mut sys::cucore_dlpack_layout_t) -> Result<bool> {
    match layout {
        Some(l) => {
            *storage = l.to_raw()?;
            Ok(true)
        }
        None => Ok(false),
    }
}

/// The parts both tensor types share.
macro_rules! managed_tensor {
    ($(#[$doc:meta])* $name:ident, $raw:ty, $export:path) => {
        $(#[$doc])*
        pub struct $name {
            raw: NonNull<$raw>,
        }

        // SAFETY: the tensors this crate exports may be deleted from any thread; `from_raw`
        // makes the caller vouch for the same of a foreign one.
        unsafe impl Send for $name {}

        impl $name {
            /// Exports `buffer`: its bytes as a 1-D uint8 tensor (`layout` None) or as `layout`
            /// says. Fails with `Status::InvalidArgument` for a layout reaching outside the
            /// buffer, `Status::InvalidState` for a closed buffer.
            pub fn export(buffer: &Buffer, layout: Option<&DLPackLayout>) -> Result<$name> {
                let mut storage = sys::cucore_dlpack_layout_t::default();
                let given = layout_arg(layout, &mut storage)?;
                let mut raw = ptr::null_mut();
                // SAFETY: a live handle, a layout (or NULL) valid for the call, a valid out-pointer;
                // we own the tensor it gives.
                check(unsafe {
                    $export(buffer.as_raw(), if given { &storage as *const _ } else { ptr::null() }, &mut raw)
                })?;
                NonNull::new(raw).map(|raw| $name { raw }).ok_or_else(|| {
                    Error::binding(Status::Internal, "the library returned a NULL tensor on success".to_string())
                })
            }

            /// Takes over a tensor from a producer (its deleter will be called once).
            ///
            /// # Safety
            /// `raw` points to a valid tensor the caller owns, whose deleter may be called from
            /// any thread, and whose memory stays valid until then.
            pub unsafe fn from_raw(raw: *mut $raw) -> Option<$name> {
                NonNull::new(raw).map(|raw| $name { raw })
            }

            /// Hands the tensor to a consumer, which must call its deleter exactly once.
            pub fn into_raw(self) -> *mut $raw {
                let raw = self.raw.as_ptr();
                std::mem::forget(self);
                raw
            }

            /// The tensor, still owned by `self`.
            pub fn as_raw(&self) -> *mut $raw {
                self.raw.as_ptr()
            }

            /// The tensor's description.
            pub fn tensor(&self) -> &DLTensor {
                // SAFETY: `raw` is a valid tensor while `self` owns it.
                unsafe { &self.raw.as_ref().dl_tensor }
            }

            /// The address of the first element (data + byte_offset).
            pub fn data(&self) -> *mut c_void {
                let t = self.tensor();
                (t.data as usize).wrapping_add(t.byte_offset as usize) as *mut c_void
            }

            pub fn device(&self) -> DLDevice {
                let d = self.tensor().device;
                DLDevice { device_type: DLDeviceType::from_raw(d.device_type), device_id: d.device_id }
            }

            pub fn dtype(&self) -> DLDataType {
                self.tensor().dtype
            }

            pub fn shape(&self) -> &[i64] {
                let t = self.tensor();
                if t.ndim <= 0 || t.shape.is_null() {
                    return &[];
                }
                // SAFETY: a valid tensor has `ndim` shape entries, alive as long as it is.
                unsafe { slice::from_raw_parts(t.shape, t.ndim as usize) }
            }

            /// The strides in elements, or None for a compact row-major tensor.
            pub fn strides(&self) -> Option<&[i64]> {
                let t = self.tensor();
                if t.strides.is_null() {
                    return None;
                }
                // SAFETY: as for `shape`.
                Some(unsafe { slice::from_raw_parts(t.strides, t.ndim.max(0) as usize) })
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                // SAFETY: we own the tensor; its deleter frees it (once: `self` goes).
                unsafe {
                    let raw = self.raw.as_ptr();
                    if let Some(deleter) = (*raw).deleter {
                        deleter(raw);
                    }
                }
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("data", &self.data())
                    .field("device", &self.device())
                    .field("dtype", &self.dtype())
                    .field("shape", &self.shape())
                    .field("strides", &self.strides())
                    .finish()
            }
        }
    };
}

managed_tensor!(
    /// An owned DLPack 1.x tensor (`DLManagedTensorVersioned`): `Drop` calls its deleter unless
    /// [`DLPackTensor::into_raw`] handed it to a consumer.
    DLPackTensor,
    DLManagedTensorVersioned,
    sys::cucore_dlpack_export
);
managed_tensor!(
    /// An owned legacy DLPack tensor (`DLManagedTensor`; `read_only` is not expressible):
    /// `Drop` calls its deleter unless [`LegacyDLPackTensor::into_raw`] handed it on.
    LegacyDLPackTensor,
    DLManagedTensor,
    sys::cucore_dlpack_export_legacy
);

impl DLPackTensor {
    /// Whether the producer marked the tensor read-only.
    pub fn is_read_only(&self) -> bool {
        // SAFETY: a valid tensor while `self` owns it.
        unsafe { self.raw.as_ref().flags & sys::DLPACK_FLAG_BITMASK_READ_ONLY != 0 }
    }

    /// The DLPack version the producer wrote.
    pub fn version(&self) -> (u32, u32) {
        // SAFETY: as above.
        let v = unsafe { self.raw.as_ref().version };
        (v.major, v.minor)
    }
}

impl Buffer {
    /// A buffer over the bytes `tensor`'s elements span, zero-copy (`cucore_dlpack_import`). The
    /// buffer owns the tensor and calls its deleter once it and all its views are gone. If the
    /// import fails (`Status::InvalidArgument`: bad version, shape or strides; `Status::NotSupported`:
    /// a device type other than CPU, CUDA, CUDA host or managed), the tensor is dropped, which
    /// calls its deleter.
    pub fn from_dlpack(tensor: DLPackTensor) -> Result<Buffer> {
        // SAFETY: a valid tensor we own; on success the buffer owns it.
        let buffer = unsafe { Buffer::from_dlpack_raw(tensor.as_raw()) }?;
        std::mem::forget(tensor);
        Ok(buffer)
    }

    /// As [`Buffer::from_dlpack`], for a legacy tensor (`cucore_dlpack_import_legacy`).
    pub fn from_dlpack_legacy(tensor: LegacyDLPackTensor) -> Result<Buffer> {
        // SAFETY: as above.
        let buffer = unsafe { Buffer::from_dlpack_legacy_raw(tensor.as_raw()) }?;
        std::mem::forget(tensor);
        Ok(buffer)
    }

    /// Imports a producer's tensor (`cucore_dlpack_import`): on success the buffer owns it, on
    /// failure the caller still does.
    ///
    /// # Safety
    /// `tensor` points to a valid tensor the caller owns, whose deleter may be called from any
    /// thread, and whose memory stays valid until then. The buffer's safe methods let device work
    /// and copies read and write that memory.
    pub unsafe fn from_dlpack_raw(tensor: *mut DLManagedTensorVersioned) -> Result<Buffer> {
        let mut raw = ptr::null_mut();
        // SAFETY: the caller vouches for the tensor; a valid out-pointer.
        check(unsafe { sys::cucore_dlpack_import(tensor, &mut raw) })?;
        Buffer::from_out(raw)
    }

    /// As [`Buffer::from_dlpack_raw`], for a legacy tensor.
    ///
    /// # Safety
    /// As for [`Buffer::from_dlpack_raw`].
    pub unsafe fn from_dlpack_legacy_raw(tensor: *mut DLManagedTensor) -> Result<Buffer> {
        let mut raw = ptr::null_mut();
        // SAFETY: as above.
        check(unsafe { sys::cucore_dlpack_import_legacy(tensor, &mut raw) })?;
        Buffer::from_out(raw)
    }

    /// The DLPack device of the buffer's memory, as an export gives it (`cucore_dlpack_device`).
    pub fn dlpack_device(&self) -> Result<DLDevice> {
        let (mut device_type, mut device_id) = (0i32, 0i32);
        // SAFETY: a live handle and valid out-pointers.
        check(unsafe { sys::cucore_dlpack_device(self.as_raw(), &mut device_type, &mut device_id) })?;
        Ok(DLDevice { device_type: DLDeviceType::from_raw(device_type), device_id })
    }
}
