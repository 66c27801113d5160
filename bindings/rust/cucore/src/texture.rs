//! Texture and surface objects (`include/cucore/texture.h`; cuda.core's `TextureObject`,
//! `SurfaceObject`, `ResourceDescriptor` and `TextureObjectOptions`).
//!
//! A [`TextureObject`] reads a resource through the texture units: an
//! [`OpaqueArray`], a [`MipmappedArray`], linear
//! memory (a [`Buffer`] read as typed elements) or pitched 2D memory (a `Buffer` read as rows),
//! with the sampling [`TextureObjectOptions`] describe. A [`SurfaceObject`] loads and stores the
//! elements of an array created with
//! [`ArrayFlags::SURFACE_LOAD_STORE`](crate::ArrayFlags::SURFACE_LOAD_STORE). Both are kernel
//! arguments by their 64-bit handle (`cudaTextureObject_t`, `cudaSurfaceObject_t`): pass
//! `&texture` to [`launch`](crate::launch()) as you pass a buffer. Both keep their resource
//! alive: an array or buffer closed or dropped lives on until the last object over it is gone.
//!
//! ```no_run
//! use cucore::{launch, AddressMode, ArrayFormat, Buffer, Device, FilterMode, Kernel, LaunchConfig,
//!              OpaqueArrayOptions, ReadMode, ResourceDescriptor, Stream, TextureObjectOptions};
//!
//! # fn run(dev: &Device, stream: &Stream, kernel: &Kernel, out: &Buffer) -> cucore::Result<()> {
//! let image = dev.create_opaque_array(
//!     OpaqueArrayOptions::default().format(ArrayFormat::Uint8).num_channels(4).width(640).height(480),
//! )?;
//! let texels = vec![0u8; 640 * 480 * 4];
//! image.copy_from_host(&texels, stream)?;
//! let options = TextureObjectOptions::default()
//!     .filter_mode(FilterMode::Linear)
//!     .read_mode(ReadMode::NormalizedFloat)             // uchar4 texels read as float4 in [0, 1]
//!     .normalized_coords(true)
//!     .address_mode([AddressMode::Wrap; 3]);
//! let texture = dev.create_texture_object(ResourceDescriptor::from_opaque_array(&image), options)?;
//! launch(stream, &LaunchConfig::new((80, 60), (8, 8)), kernel, &[&texture, out])?; // a cudaTextureObject_t
//! # Ok(())
//! # }
//! ```
//!
//! Destroying a texture or surface object is not ordered on any stream: its last reference (or
//! `close`) destroys it at once, so synchronize the kernels that use it first, as for any
//! object a running kernel reads.

use std::fmt;
use std::os::raw::c_void;
use std::ptr::{self, NonNull};

use cucore_sys as sys;

use crate::buffer::Buffer;
use crate::common::{check, Result};
use crate::device::Device;
use crate::launch::KernelArg;
use crate::opaque_array::{ArrayFormat, MipmappedArray, OpaqueArray};

// ---- Resource descriptors ---------------------------------------------------------------------------

/// The memory a texture or surface object reads (`cucore_resource_descriptor_t`; cuda.core's
/// `ResourceDescriptor`). It borrows its array or buffer for the create call; the object made
/// holds the resource from then on. Made by the constructors named as cuda.core's
/// (`from_opaque_array`, `from_mipmapped_array`, `from_linear`, `from_pitch2d`) or as a variant;
/// `&array` and `&mipmapped_array` convert with `.into()`.
#[derive(Clone, Copy, Debug)]
pub enum ResourceDescriptor<'a> {
    /// All of an array.
    OpaqueArray(&'a OpaqueArray),
    /// All levels of a mipmapped array.
    MipmappedArray(&'a MipmappedArray),
    /// `size_bytes` of `buffer` from its start (0: the whole buffer) as 1D elements of `format`
    /// x `num_channels` (0: as for arrays), read in kernels with `tex1Dfetch`: no filtering, no
    /// normalized coordinates. Creation checks a size within the buffer and a multiple of the
    /// element size, and the buffer's address against the device's texture alignment.
    Linear {
        /// The memory.
        buffer: &'a Buffer,
        /// The element format (not BC).
        format: ArrayFormat,
        /// Channels per element; 0: as for arrays.
        num_channels: u32,
        /// Bytes read; 0: the whole buffer.
        size_bytes: u64,
    },
    /// `height` rows of `width` elements of `format` x `num_channels`, `pitch_bytes` apart, from
    /// the start of `buffer`. Creation checks `pitch_bytes >= width x element size`, the pitch
    /// against the device's texture pitch alignment, the rows within the buffer and the
    /// address against the texture alignment.
    Pitch2D {
        /// The memory.
        buffer: &'a Buffer,
        /// The element format (not BC).
        format: ArrayFormat,
        /// Channels per element; 0: as for arrays.
        num_channels: u32,
        /// Elements per row.
        width: u64,
        /// Rows.
        height: u64,
        /// Bytes from a row to the next.
        pitch_bytes: u64,
    },
}

impl<'a> ResourceDescriptor<'a> {
    /// All of `array`.
    pub fn from_opaque_array(array: &'a OpaqueArray) -> ResourceDescriptor<'a> {
        ResourceDescriptor::OpaqueArray(array)
    }

    /// All levels of `mipmapped_array`.
    pub fn from_mipmapped_array(mipmapped_array: &'a MipmappedArray) -> ResourceDescriptor<'a> {
        ResourceDescriptor::MipmappedArray(mipmapped_array)
    }

    /// [`ResourceDescriptor::Linear`]: `size_bytes` (0: all) of `buffer` as 1D elements.
    pub fn from_linear(
        buffer: &'a Buffer,
        format: ArrayFormat,
        num_channels: u32,
        size_bytes: u64,
    ) -> ResourceDescriptor<'a> {
        ResourceDescriptor::Linear { buffer, format, num_channels, size_bytes }
    }

    /// [`ResourceDescriptor::Pitch2D`]: `height` rows of `width` elements, `pitch_bytes` apart.
    pub fn from_pitch2d(
        buffer: &'a Buffer,
        format: ArrayFormat,
        num_channels: u32,
        width: u64,
        height: u64,
        pitch_bytes: u64,
    ) -> ResourceDescriptor<'a> {
        ResourceDescriptor::Pitch2D { buffer, format, num_channels, width, height, pitch_bytes }
    }

    /// The C struct; its handles are borrowed from the resource, valid while it lives.
    pub fn to_raw(&self) -> sys::cucore_resource_descriptor_t {
        let mut r = sys::cucore_resource_descriptor_t::INIT;
        match *self {
            ResourceDescriptor::OpaqueArray(array) => {
                r.kind = sys::CUCORE_RESOURCE_KIND_OPAQUE_ARRAY;
                r.array = array.as_raw();
            }
            ResourceDescriptor::MipmappedArray(mipmapped_array) => {
                r.kind = sys::CUCORE_RESOURCE_KIND_MIPMAPPED_ARRAY;
                r.mipmapped_array = mipmapped_array.as_raw();
            }
            ResourceDescriptor::Linear { buffer, format, num_channels, size_bytes } => {
                r.kind = sys::CUCORE_RESOURCE_KIND_LINEAR;
                r.buffer = buffer.as_raw();
                r.format = format.raw();
                r.num_channels = num_channels;
                r.size_bytes = size_bytes;
            }
            ResourceDescriptor::Pitch2D { buffer, format, num_channels, width, height, pitch_bytes } => {
                r.kind = sys::CUCORE_RESOURCE_KIND_PITCH_2D;
                r.buffer = buffer.as_raw();
                r.format = format.raw();
                r.num_channels = num_channels;
                r.width = width;
                r.height = height;
                r.pitch_bytes = pitch_bytes;
            }
        }
        r
    }
}

impl<'a> From<&'a OpaqueArray> for ResourceDescriptor<'a> {
    fn from(array: &'a OpaqueArray) -> Self {
        ResourceDescriptor::OpaqueArray(array)
    }
}

impl<'a> From<&'a MipmappedArray> for ResourceDescriptor<'a> {
    fn from(mipmapped_array: &'a MipmappedArray) -> Self {
        ResourceDescriptor::MipmappedArray(mipmapped_array)
    }
}

// ---- Sampling ---------------------------------------------------------------------------------------

/// What a coordinate outside `[0, extent)` reads (`cucore_address_mode_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum AddressMode {
    /// The edge element: the default.
    #[default]
    Clamp,
    /// Repeats (normalized coordinates only).
    Wrap,
    /// Repeats mirrored (normalized coordinates only).
    Mirror,
    /// The border color ([`TextureObjectOptions::border_color`]).
    Border,
}

impl AddressMode {
    /// The raw `cucore_address_mode_t`.
    pub fn raw(self) -> sys::cucore_address_mode_t {
        match self {
            AddressMode::Clamp => sys::CUCORE_ADDRESS_MODE_CLAMP,
            AddressMode::Wrap => sys::CUCORE_ADDRESS_MODE_WRAP,
            AddressMode::Mirror => sys::CUCORE_ADDRESS_MODE_MIRROR,
            AddressMode::Border => sys::CUCORE_ADDRESS_MODE_BORDER,
        }
    }
}

/// How elements are combined at a coordinate, and between mipmap levels
/// (`cucore_filter_mode_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FilterMode {
    /// The nearest element: the default.
    #[default]
    Point,
    /// Linear interpolation (float results only: integer elements must be read as
    /// [`ReadMode::NormalizedFloat`]).
    Linear,
}

impl FilterMode {
    /// The raw `cucore_filter_mode_t`.
    pub fn raw(self) -> sys::cucore_filter_mode_t {
        match self {
            FilterMode::Point => sys::CUCORE_FILTER_MODE_POINT,
            FilterMode::Linear => sys::CUCORE_FILTER_MODE_LINEAR,
        }
    }
}

/// What a read of integer elements returns (`cucore_read_mode_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ReadMode {
    /// The element as stored: the default.
    #[default]
    ElementType,
    /// 8- and 16-bit integers as floats in `[0, 1]` (unsigned) or `[-1, 1]` (signed).
    NormalizedFloat,
}

impl ReadMode {
    /// The raw `cucore_read_mode_t`.
    pub fn raw(self) -> sys::cucore_read_mode_t {
        match self {
            ReadMode::ElementType => sys::CUCORE_READ_MODE_ELEMENT_TYPE,
            ReadMode::NormalizedFloat => sys::CUCORE_READ_MODE_NORMALIZED_FLOAT,
        }
    }
}

/// How a texture object samples (`cucore_texture_object_options_t`, the driver's
/// `CUDA_TEXTURE_DESC`; cuda.core's `TextureObjectOptions`). The default is the C struct's:
/// clamp, point filtering, elements as stored, unnormalized coordinates.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TextureObjectOptions {
    /// What a coordinate out of range reads, per dimension (x, y, z); `[mode; 3]` for all.
    pub address_mode: [AddressMode; 3],
    /// How elements are combined at a coordinate.
    pub filter_mode: FilterMode,
    /// What a read of integer elements returns.
    pub read_mode: ReadMode,
    /// Coordinates in `[0, 1)` rather than in elements.
    pub normalized_coords: bool,
    /// sRGB to linear on read (required by the `*Srgb` formats).
    pub srgb: bool,
    /// Turns off the trilinear optimization.
    pub disable_trilinear_optimization: bool,
    /// Filtering across cubemap faces (cubemap resources only).
    pub seamless_cubemap: bool,
    /// 0 to 16.
    pub max_anisotropy: u32,
    /// How levels of a mipmapped array are combined.
    pub mipmap_filter_mode: FilterMode,
    /// Added to the level of detail.
    pub mipmap_level_bias: f32,
    /// The lowest level of detail sampled.
    pub min_mipmap_level_clamp: f32,
    /// The highest level of detail sampled (0 keeps every read at level 0).
    pub max_mipmap_level_clamp: f32,
    /// What [`AddressMode::Border`] reads, per channel.
    pub border_color: [f32; 4],
}

impl TextureObjectOptions {
    setters! {
        /// Sets `address_mode` (x, y, z).
        address_mode: [AddressMode; 3] => |modes: [AddressMode; 3]| modes;
        /// Sets `filter_mode`.
        filter_mode: FilterMode => |mode: FilterMode| mode;
        /// Sets `read_mode`.
        read_mode: ReadMode => |mode: ReadMode| mode;
        /// Sets `normalized_coords`.
        normalized_coords: bool => |on: bool| on;
        /// Sets `srgb`.
        srgb: bool => |on: bool| on;
        /// Sets `disable_trilinear_optimization`.
        disable_trilinear_optimization: bool => |on: bool| on;
        /// Sets `seamless_cubemap`.
        seamless_cubemap: bool => |on: bool| on;
        /// Sets `max_anisotropy`.
        max_anisotropy: u32 => |n: u32| n;
        /// Sets `mipmap_filter_mode`.
        mipmap_filter_mode: FilterMode => |mode: FilterMode| mode;
        /// Sets `mipmap_level_bias`.
        mipmap_level_bias: f32 => |bias: f32| bias;
        /// Sets `min_mipmap_level_clamp`.
        min_mipmap_level_clamp: f32 => |level: f32| level;
        /// Sets `max_mipmap_level_clamp`.
        max_mipmap_level_clamp: f32 => |level: f32| level;
        /// Sets `border_color`.
        border_color: [f32; 4] => |color: [f32; 4]| color;
    }

    /// The C struct.
    pub fn to_raw(&self) -> sys::cucore_texture_object_options_t {
        let mut o = sys::cucore_texture_object_options_t::INIT;
        for (raw, mode) in o.address_mode.iter_mut().zip(self.address_mode.iter()) {
            *raw = mode.raw();
        }
        o.filter_mode = self.filter_mode.raw();
        o.read_mode = self.read_mode.raw();
        o.normalized_coords = self.normalized_coords as u32;
        o.srgb = self.srgb as u32;
        o.disable_trilinear_optimization = self.disable_trilinear_optimization as u32;
        o.seamless_cubemap = self.seamless_cubemap as u32;
        o.max_anisotropy = self.max_anisotropy;
        o.mipmap_filter_mode = self.mipmap_filter_mode.raw();
        o.mipmap_level_bias = self.mipmap_level_bias;
        o.min_mipmap_level_clamp = self.min_mipmap_level_clamp;
        o.max_mipmap_level_clamp = self.max_mipmap_level_clamp;
        o.border_color = self.border_color;
        o
    }
}

fn device_ptr(device: Option<&Device>) -> *mut sys::cucore_device_t {
    device.map_or(ptr::null_mut(), |d| d.as_raw())
}

// ---- TextureObject ----------------------------------------------------------------------------------

/// A texture object (`cucore_texture_object_t`; cuda.core's `TextureObject`): a kernel argument
/// by its 64-bit handle ([`TextureObject::handle`]; pass `&texture` to
/// [`launch`](crate::launch())). It holds its resource until it is gone. `Clone` adds a
/// reference; the last `Drop` destroys it (at once, not stream-ordered).
pub struct TextureObject {
    raw: NonNull<sys::cucore_texture_object_t>,
}

handle_type!(TextureObject, sys::cucore_texture_object_t);
identity_eq!(TextureObject);

impl TextureObject {
    /// A texture object over `resource` sampled as `options` say
    /// (`cucore_texture_object_create`), in the resource's device's primary context; `device`,
    /// when given, must be the resource's. Checked before the driver (`Status::InvalidArgument`
    /// with a message naming the problem): the descriptor's fields for its kind, linear and
    /// pitched regions within their buffer, alignments, linear filtering of integer elements
    /// read as [`ReadMode::ElementType`], an sRGB format without `srgb`, `seamless_cubemap` over
    /// a resource that is not a cubemap, anisotropy above 16, mipmap fields that are not finite.
    /// A closed array or buffer is `Status::InvalidState`.
    pub fn create<'a>(
        device: Option<&Device>,
        resource: impl Into<ResourceDescriptor<'a>>,
        options: TextureObjectOptions,
    ) -> Result<TextureObject> {
        let r = resource.into().to_raw();
        let o = options.to_raw();
        let mut raw = ptr::null_mut();
        // SAFETY: live handles (the descriptor borrows them for this call), valid structs and
        // out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_texture_object_create(device_ptr(device), &r, &o, &mut raw) })?;
        TextureObject::from_out(raw)
    }

    /// The `CUtexObject`: the kernel argument (`cudaTextureObject_t`) (`cucore_texture_object_handle`;
    /// cuda.core's `handle`). `Status::InvalidState` once closed.
    pub fn handle(&self) -> Result<u64> {
        let mut h: u64 = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_texture_object_handle(self.as_raw(), &mut h) })?;
        Ok(h)
    }

    /// Destroys the texture object now and lets go of its resource
    /// (`cucore_texture_object_close`; cuda.core's `close()`). Idempotent; the value (and its
    /// clones) stays valid and [`TextureObject::handle`] then fails with `Status::InvalidState`.
    /// A `Status::Cuda` failure still leaves the object destroyed.
    pub fn close(&self) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::cucore_texture_object_close(self.as_raw()) })
    }
}

impl fmt::Debug for TextureObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.handle() {
            Ok(h) => write!(f, "TextureObject({:#x})", h),
            Err(_) => write!(f, "TextureObject(<closed or invalid, library handle {:p}>)", self.as_raw()),
        }
    }
}

// ---- SurfaceObject ----------------------------------------------------------------------------------

/// A surface object (`cucore_surface_object_t`; cuda.core's `SurfaceObject`) over an array
/// created with [`ArrayFlags::SURFACE_LOAD_STORE`](crate::ArrayFlags::SURFACE_LOAD_STORE): a
/// kernel argument by its 64-bit handle ([`SurfaceObject::handle`]; pass `&surface` to
/// [`launch`](crate::launch())). It holds the array until it is gone. `Clone` adds a reference;
/// the last `Drop` destroys it (at once, not stream-ordered).
pub struct SurfaceObject {
    raw: NonNull<sys::cucore_surface_object_t>,
}

handle_type!(SurfaceObject, sys::cucore_surface_object_t);
identity_eq!(SurfaceObject);

impl SurfaceObject {
    /// A surface object over `resource`, an [`OpaqueArray`](ResourceDescriptor::OpaqueArray)
    /// descriptor (`cucore_surface_object_create`), in the array's device's primary context;
    /// `device`, when given, must be the array's. Another resource kind, or an array without
    /// surface load/store (the message names the flag), is `Status::InvalidArgument`; a closed
    /// array `Status::InvalidState`.
    pub fn create<'a>(device: Option<&Device>, resource: impl Into<ResourceDescriptor<'a>>) -> Result<SurfaceObject> {
        let r = resource.into().to_raw();
        let mut raw = ptr::null_mut();
        // SAFETY: live handles (borrowed for this call), a valid struct and out-pointer; we own
        // the reference it gives.
        check(unsafe { sys::cucore_surface_object_create(device_ptr(device), &r, &mut raw) })?;
        SurfaceObject::from_out(raw)
    }

    /// The `CUsurfObject`: the kernel argument (`cudaSurfaceObject_t`)
    /// (`cucore_surface_object_handle`). `Status::InvalidState` once closed.
    pub fn handle(&self) -> Result<u64> {
        let mut h: u64 = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_surface_object_handle(self.as_raw(), &mut h) })?;
        Ok(h)
    }

    /// As [`TextureObject::close`] (`cucore_surface_object_close`).
    pub fn close(&self) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::cucore_surface_object_close(self.as_raw()) })
    }
}

impl fmt::Debug for SurfaceObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.handle() {
            Ok(h) => write!(f, "SurfaceObject({:#x})", h),
            Err(_) => write!(f, "SurfaceObject(<closed or invalid, library handle {:p}>)", self.as_raw()),
        }
    }
}

// ---- Kernel arguments -------------------------------------------------------------------------------

/// Writes a 64-bit handle into the launch's scratch slot and names it as the argument.
fn handle_arg(handle: u64, scratch: &mut u64) -> (*const c_void, usize) {
    *scratch = handle;
    (scratch as *const u64 as *const c_void, std::mem::size_of::<u64>())
}

// SAFETY: the bytes are the 64-bit handle of a texture object the caller holds (borrowed for
// the launch), written into the launch's scratch slot; it names no host memory, and a closed
// object fails here (InvalidState) instead of passing a stale handle.
unsafe impl KernelArg for TextureObject {
    #[inline]
    fn kernel_arg(&self, scratch: &mut u64) -> Result<(*const c_void, usize)> {
        Ok(handle_arg(self.handle()?, scratch))
    }
}

// SAFETY: as for TextureObject.
unsafe impl KernelArg for &TextureObject {
    #[inline]
    fn kernel_arg(&self, scratch: &mut u64) -> Result<(*const c_void, usize)> {
        (**self).kernel_arg(scratch)
    }
}

// SAFETY: as for TextureObject: the handle of a surface object the caller holds.
unsafe impl KernelArg for SurfaceObject {
    #[inline]
    fn kernel_arg(&self, scratch: &mut u64) -> Result<(*const c_void, usize)> {
        Ok(handle_arg(self.handle()?, scratch))
    }
}

// SAFETY: as for SurfaceObject.
unsafe impl KernelArg for &SurfaceObject {
    #[inline]
    fn kernel_arg(&self, scratch: &mut u64) -> Result<(*const c_void, usize)> {
        (**self).kernel_arg(scratch)
    }
}

// ---- Device conveniences ----------------------------------------------------------------------------

impl Device {
    /// A texture object over `resource` of this device ([`TextureObject::create`]; cuda.core's
    /// `Device.create_texture_object`).
    pub fn create_texture_object<'a>(
        &self,
        resource: impl Into<ResourceDescriptor<'a>>,
        options: TextureObjectOptions,
    ) -> Result<TextureObject> {
        TextureObject::create(Some(self), resource, options)
    }

    /// A surface object over `resource` of this device ([`SurfaceObject::create`]; cuda.core's
    /// `Device.create_surface_object`).
    pub fn create_surface_object<'a>(&self, resource: impl Into<ResourceDescriptor<'a>>) -> Result<SurfaceObject> {
        SurfaceObject::create(Some(self), resource)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_translate_field_by_field() {
        assert_eq!(TextureObjectOptions::default().to_raw(), sys::cucore_texture_object_options_t::INIT);
        let o = TextureObjectOptions::default()
            .address_mode([AddressMode::Wrap, AddressMode::Mirror, AddressMode::Border])
            .filter_mode(FilterMode::Linear)
            .read_mode(ReadMode::NormalizedFloat)
            .normalized_coords(true)
            .srgb(true)
            .disable_trilinear_optimization(true)
            .seamless_cubemap(true)
            .max_anisotropy(8)
            .mipmap_filter_mode(FilterMode::Linear)
            .mipmap_level_bias(0.5)
            .min_mipmap_level_clamp(1.0)
            .max_mipmap_level_clamp(3.0)
            .border_color([0.25, 0.5, 0.75, 1.0])
            .to_raw();
        assert_eq!(o.struct_size as usize, std::mem::size_of::<sys::cucore_texture_object_options_t>());
        assert_eq!(o.address_mode, [1, 2, 3]);
        assert_eq!((o.filter_mode, o.read_mode), (1, 1));
        assert_eq!((o.normalized_coords, o.srgb, o.disable_trilinear_optimization, o.seamless_cubemap), (1, 1, 1, 1));
        assert_eq!(o.max_anisotropy, 8);
        assert_eq!(o.mipmap_filter_mode, 1);
        assert_eq!((o.mipmap_level_bias, o.min_mipmap_level_clamp, o.max_mipmap_level_clamp), (0.5, 1.0, 3.0));
        assert_eq!(o.border_color, [0.25, 0.5, 0.75, 1.0]);
    }
}
