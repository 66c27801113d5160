//! What `include/cucore/graphics.h` holds: OpenGL interop (cuda.core's `GraphicsResource`).
//!
//! A [`GraphicsResource`] is the registration of a GL buffer, texture or renderbuffer with CUDA;
//! its last reference (or [`GraphicsResource::close`]) unregisters. Mapping gives a guard that
//! holds the mapping: [`MappedBuffer`] for a GL buffer (it dereferences to the [`Buffer`] of the
//! mapped memory) and an [`OpaqueArray`] (or [`MipmappedArray`]) for a GL image, the same array
//! type the library creates, usable everywhere an array is.
//! The last reference to a mapping unmaps on the stream it was mapped on, and the mapping holds
//! the resource, so unregistration always follows the unmap, whatever order things are dropped
//! in. A clone of the mapped `Buffer` (or a view of it) keeps the mapping alive too, as in
//! cuda.core, where the `Buffer`'s lifetime controls the unmapping;
//! [`GraphicsResource::unmap`] unmaps now regardless.
//!
//! The library never links GL: GL objects are passed by name and target (`GLuint`, `GLenum`).
//! A GL context must be current on the calling thread to register, map, unmap and unregister,
//! and it must be an NVIDIA GL context on the device's GPU; otherwise registering fails with
//! `Status::Cuda` and a message that says which.
//!
//! ```no_run
//! use cucore::{Device, GraphicsResource, GraphicsRegisterFlags, StreamOptions};
//!
//! # fn main() -> cucore::Result<()> {
//! # let gl_buffer: u32 = 1; // a GL buffer object of the GL context current on this thread
//! let dev = Device::get(0)?;
//! let stream = dev.create_stream(StreamOptions::default())?;
//! let resource = GraphicsResource::from_gl_buffer(&dev, gl_buffer, GraphicsRegisterFlags::WRITE_DISCARD)?;
//! {
//!     let mapped = resource.map(&stream)?;       // a guard that dereferences to a Buffer
//!     mapped.fill(0, 1, &stream)?;
//! }                                              // unmapped here, on `stream`
//! resource.close(None)?;
//! # Ok(())
//! # }
//! ```

use std::fmt;
use std::ops::{BitOr, BitOrAssign, Deref};
use std::os::raw::{c_int, c_void};
use std::ptr;

use cucore_sys as sys;

use crate::buffer::Buffer;
use crate::common::{c_bool, check, Error, Result, Status};
use crate::device::Device;
use crate::opaque_array::{MipmappedArray, OpaqueArray};
use crate::stream::Stream;

// ---- Flags and hints --------------------------------------------------------------------------------

/// Registration flags (`cucore_graphics_register_flag_t` bits; cuda.core's `flags` strings).
/// Combine them with `|`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct GraphicsRegisterFlags(u32);

impl GraphicsRegisterFlags {
    /// No flag: CUDA reads and writes the resource.
    pub const NONE: GraphicsRegisterFlags = GraphicsRegisterFlags(sys::CUCORE_GRAPHICS_REGISTER_NONE as u32);
    /// CUDA only reads the resource.
    pub const READ_ONLY: GraphicsRegisterFlags = GraphicsRegisterFlags(sys::CUCORE_GRAPHICS_REGISTER_READ_ONLY as u32);
    /// CUDA overwrites every byte it maps; the previous contents are undefined.
    pub const WRITE_DISCARD: GraphicsRegisterFlags = GraphicsRegisterFlags(sys::CUCORE_GRAPHICS_REGISTER_WRITE_DISCARD as u32);
    /// Images only: the mapped arrays may be bound as surfaces.
    pub const SURFACE_LOAD_STORE: GraphicsRegisterFlags =
        GraphicsRegisterFlags(sys::CUCORE_GRAPHICS_REGISTER_SURFACE_LOAD_STORE as u32);
    /// Images only: texture gather on the mapped arrays.
    pub const TEXTURE_GATHER: GraphicsRegisterFlags = GraphicsRegisterFlags(sys::CUCORE_GRAPHICS_REGISTER_TEXTURE_GATHER as u32);

    const ALL: u32 = 1 | 2 | 4 | 8;
    const NAMES: [(&'static str, GraphicsRegisterFlags); 5] = [
        ("none", GraphicsRegisterFlags::NONE),
        ("read_only", GraphicsRegisterFlags::READ_ONLY),
        ("write_discard", GraphicsRegisterFlags::WRITE_DISCARD),
        ("surface_load_store", GraphicsRegisterFlags::SURFACE_LOAD_STORE),
        ("texture_gather", GraphicsRegisterFlags::TEXTURE_GATHER),
    ];

    /// The flags of raw bits; None when a bit is unknown.
    pub fn from_bits(bits: u32) -> Option<GraphicsRegisterFlags> {
        if bits & !Self::ALL == 0 {
            Some(GraphicsRegisterFlags(bits))
        } else {
            None
        }
    }

    /// The raw bits, as the C ABI takes them.
    pub fn bits(self) -> u32 {
        self.0
    }

    /// Whether every bit of `other` is set here.
    pub fn contains(self, other: GraphicsRegisterFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// The flags named by cuda.core's strings (`"none"`, `"read_only"`, `"write_discard"`,
    /// `"surface_load_store"`, `"texture_gather"`), combined. An unknown name is
    /// `Status::InvalidArgument`.
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> Result<GraphicsRegisterFlags> {
        let mut flags = GraphicsRegisterFlags::NONE;
        for name in names {
            let name = name.as_ref();
            match Self::NAMES.iter().find(|(n, _)| *n == name) {
                Some((_, f)) => flags |= *f,
                None => {
                    return Err(Error::binding(
                        Status::InvalidArgument,
                        format!(
                            "unknown graphics registration flag {:?} (known: none, read_only, write_discard, \
                             surface_load_store, texture_gather)",
                            name
                        ),
                    ))
                }
            }
        }
        Ok(flags)
    }
}

impl BitOr for GraphicsRegisterFlags {
    type Output = GraphicsRegisterFlags;
    fn bitor(self, rhs: GraphicsRegisterFlags) -> GraphicsRegisterFlags {
        GraphicsRegisterFlags(self.0 | rhs.0)
    }
}

impl BitOrAssign for GraphicsRegisterFlags {
    fn bitor_assign(&mut self, rhs: GraphicsRegisterFlags) {
        self.0 |= rhs.0
    }
}

/// How CUDA will use one mapping (`cucore_graphics_map_hint_t`; `cuGraphicsResourceSetMapFlags`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GraphicsMapHint {
    /// CUDA reads and writes (the default).
    #[default]
    None,
    /// CUDA only reads the mapping.
    ReadOnly,
    /// CUDA overwrites every byte of the mapping.
    WriteDiscard,
}

impl GraphicsMapHint {
    /// The raw `cucore_graphics_map_hint_t`.
    pub fn raw(self) -> u32 {
        (match self {
            GraphicsMapHint::None => sys::CUCORE_GRAPHICS_MAP_HINT_NONE,
            GraphicsMapHint::ReadOnly => sys::CUCORE_GRAPHICS_MAP_HINT_READ_ONLY,
            GraphicsMapHint::WriteDiscard => sys::CUCORE_GRAPHICS_MAP_HINT_WRITE_DISCARD,
        }) as u32
    }
}

/// Which devices [`gl_get_devices`] lists (`cucore_gl_device_list_t`; `CUGLDeviceList`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GlDeviceList {
    /// Every device of the current GL context.
    #[default]
    All,
    /// The devices rendering the current frame (SLI).
    CurrentFrame,
    /// The devices rendering the next frame (SLI).
    NextFrame,
}

impl GlDeviceList {
    /// The raw `cucore_gl_device_list_t`.
    pub fn raw(self) -> u32 {
        (match self {
            GlDeviceList::All => sys::CUCORE_GL_DEVICES_ALL,
            GlDeviceList::CurrentFrame => sys::CUCORE_GL_DEVICES_CURRENT_FRAME,
            GlDeviceList::NextFrame => sys::CUCORE_GL_DEVICES_NEXT_FRAME,
        }) as u32
    }
}

/// The CUDA device ordinals of the GL context current on this thread (`cucore_gl_get_devices`;
/// `cuGLGetDevices`). Without a current GL context, or with one that is not NVIDIA's, this fails
/// with `Status::Cuda` and a message that says so.
pub fn gl_get_devices(list: GlDeviceList) -> Result<Vec<i32>> {
    let mut count: u32 = 0;
    // SAFETY: capacity 0 with a NULL array; a valid out-pointer.
    check(unsafe { sys::cucore_gl_get_devices(list.raw(), ptr::null_mut(), 0, &mut count) })?;
    loop {
        let mut ordinals: Vec<c_int> = vec![0; count as usize];
        let mut now: u32 = 0;
        // SAFETY: `ordinals` has room for `count` values; a valid out-pointer.
        check(unsafe {
            sys::cucore_gl_get_devices(
                list.raw(),
                if count == 0 { ptr::null_mut() } else { ordinals.as_mut_ptr() },
                count,
                &mut now,
            )
        })?;
        if now <= count {
            ordinals.truncate(now as usize);
            return Ok(ordinals);
        }
        count = now;
    }
}

// ---- GraphicsResource -------------------------------------------------------------------------------

/// A GL buffer, texture or renderbuffer registered with CUDA (`cucore_graphics_resource_t`;
/// cuda.core's `GraphicsResource`). `Clone` adds a reference; the last one unregisters (errors
/// go to the release-error handler). See the [module documentation](self).
pub struct GraphicsResource {
    raw: std::ptr::NonNull<sys::cucore_graphics_resource_t>,
}

handle_type!(GraphicsResource, sys::cucore_graphics_resource_t);
identity_eq!(GraphicsResource);

impl GraphicsResource {
    /// Registers the GL buffer object `gl_name` of the GL context current on this thread in
    /// `device`'s primary context (`cucore_graphics_resource_from_gl_buffer`;
    /// `cuGraphicsGLRegisterBuffer`). `SURFACE_LOAD_STORE` and `TEXTURE_GATHER` are for images
    /// and refused (`Status::InvalidArgument`); with no GL context current, a GL context of
    /// another GPU, or one that is not NVIDIA's, this is `Status::Cuda` with a message saying
    /// which.
    pub fn from_gl_buffer(device: &Device, gl_name: u32, flags: GraphicsRegisterFlags) -> Result<GraphicsResource> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live device handle and a valid out-pointer; we own the reference it gives.
        check(unsafe {
            sys::cucore_graphics_resource_from_gl_buffer(device.as_raw(), gl_name, flags.bits(), &mut raw)
        })?;
        GraphicsResource::from_out(raw)
    }

    /// Registers the GL texture or renderbuffer `gl_name` of target `gl_target` (`GL_TEXTURE_2D`,
    /// `GL_TEXTURE_RECTANGLE`, `GL_TEXTURE_CUBE_MAP`, `GL_TEXTURE_3D`, `GL_TEXTURE_2D_ARRAY`,
    /// `GL_RENDERBUFFER`) as [`GraphicsResource::from_gl_buffer`] does
    /// (`cucore_graphics_resource_from_gl_image`; `cuGraphicsGLRegisterImage`). Its mappings are
    /// arrays ([`GraphicsResource::map_array`]). An unsupported format or target is
    /// `Status::Cuda` with the driver's code.
    pub fn from_gl_image(
        device: &Device,
        gl_name: u32,
        gl_target: u32,
        flags: GraphicsRegisterFlags,
    ) -> Result<GraphicsResource> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live device handle and a valid out-pointer; we own the reference it gives.
        check(unsafe {
            sys::cucore_graphics_resource_from_gl_image(device.as_raw(), gl_name, gl_target, flags.bits(), &mut raw)
        })?;
        GraphicsResource::from_out(raw)
    }

    /// Maps a registered GL buffer on `stream` (cuda.core's `map(stream=...)`): the guard
    /// dereferences to the mapped memory's [`Buffer`] and unmaps on `stream` when the last
    /// reference to the mapping goes. One mapping at a time: mapping again while mapped is
    /// `Status::InvalidState`, as is mapping an image (use [`GraphicsResource::map_array`]).
    pub fn map(&self, stream: &Stream) -> Result<MappedBuffer> {
        self.map_with_hint(stream, GraphicsMapHint::None)
    }

    /// [`GraphicsResource::map`] with a hint of how CUDA will use the mapping
    /// (`cucore_graphics_resource_map`).
    pub fn map_with_hint(&self, stream: &Stream, hint: GraphicsMapHint) -> Result<MappedBuffer> {
        let mut raw = ptr::null_mut();
        // SAFETY: live handles and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_graphics_resource_map(self.as_raw(), stream.as_raw(), hint.raw(), &mut raw) })?;
        Ok(MappedBuffer { buffer: Buffer::from_out(raw)?, resource: self.clone() })
    }

    /// Maps several registered GL buffers in one driver call on `stream`
    /// (`cucore_graphics_resources_map`). The batch's `i`th [`MappedBuffer`] is `resources[i]`'s
    /// mapping. Dropping the batch (or [`MappedBuffers::unmap`]) unmaps, again in one driver call,
    /// those the batch still maps; [`MappedBuffers::into_buffers`] gives that up, so that each
    /// mapping unmaps on its own. The resources must belong to one context and appear once; on
    /// failure nothing stays mapped.
    pub fn map_all(resources: &[&GraphicsResource], stream: &Stream) -> Result<MappedBuffers> {
        if resources.is_empty() {
            return Err(Error::binding(
                Status::InvalidArgument,
                "GraphicsResource::map_all: no resources to map".to_string(),
            ));
        }
        let (raws, count) = raw_resources("map_all", resources)?;
        let mut buffers: Vec<*mut sys::cucore_buffer_t> = vec![ptr::null_mut(); resources.len()];
        // SAFETY: `count` live handles, room for `count` out-pointers; we own the references given.
        check(unsafe {
            sys::cucore_graphics_resources_map(raws.as_ptr(), count, stream.as_raw(), buffers.as_mut_ptr())
        })?;
        // Adopt every reference first, so that none leaks if one were NULL.
        let adopted: Vec<Option<Buffer>> = buffers
            .iter()
            // SAFETY: each non-NULL entry is a live buffer whose reference the call gave us.
            .map(|&b| std::ptr::NonNull::new(b).map(|b| unsafe { Buffer::adopt(b.as_ptr()) }))
            .collect();
        if adopted.iter().any(Option::is_none) {
            // Dropping the adopted buffers unmaps their resources one by one.
            return Err(Error::binding(Status::Internal, "the library returned a NULL Buffer on success".to_string()));
        }
        let buffers = adopted
            .into_iter()
            .zip(resources.iter())
            .filter_map(|(buffer, resource)| {
                buffer.map(|buffer| MappedBuffer { buffer, resource: (*resource).clone() })
            })
            .collect();
        Ok(MappedBuffers { buffers })
    }

    /// Unmaps several mapped resources (buffers or images) in one driver call
    /// (`cucore_graphics_resources_unmap`), on `stream` when given, else on the stream they were
    /// all mapped on (resources mapped on different streams need `stream`:
    /// `Status::InvalidArgument` otherwise). Their mapped buffers read as closed (size 0)
    /// afterwards, as after [`GraphicsResource::unmap`]. A resource that is not mapped, or
    /// closed, is `Status::InvalidState` naming `resources[i]`, and then nothing is unmapped;
    /// after a `Status::Cuda` failure they count as unmapped.
    pub fn unmap_all(resources: &[&GraphicsResource], stream: Option<&Stream>) -> Result<()> {
        let (raws, count) = raw_resources("unmap_all", resources)?;
        let stream = stream.map_or(ptr::null_mut(), |s| s.as_raw());
        // SAFETY: `count` live handles (the library refuses a count of 0 before reading any);
        // a live or NULL stream.
        check(unsafe { sys::cucore_graphics_resources_unmap(raws.as_ptr(), count, stream) })
    }

    /// Maps a registered GL image on `stream` and gives the CUDA array of one sub-resource
    /// (`array_index`: the cube face or layer; `mip_level`) (`cucore_graphics_resource_map_array`)
    /// as an [`OpaqueArray`], usable everywhere an array is (copies, texture and surface
    /// objects). It is not owned and holds the mapping: the last reference to it (and to the
    /// texture or surface objects over it) unmaps on `stream`. After an explicit
    /// [`GraphicsResource::unmap`] or [`GraphicsResource::close`] every call on it fails with
    /// `Status::InvalidState`. Mapping a buffer this way is `Status::InvalidState`; a
    /// sub-resource that does not exist is `Status::Cuda`.
    pub fn map_array(
        &self,
        stream: &Stream,
        hint: GraphicsMapHint,
        array_index: u32,
        mip_level: u32,
    ) -> Result<OpaqueArray> {
        let mut raw = ptr::null_mut();
        // SAFETY: live handles and a valid out-pointer; we own the reference it gives.
        check(unsafe {
            sys::cucore_graphics_resource_map_array(
                self.as_raw(),
                stream.as_raw(),
                hint.raw(),
                array_index,
                mip_level,
                &mut raw,
            )
        })?;
        OpaqueArray::from_out(raw)
    }

    /// Maps a registered GL image on `stream` as one [`MipmappedArray`]
    /// (`cucore_graphics_resource_map_mipmapped_array`), which holds the mapping, as its levels
    /// ([`MipmappedArray::level`]) do; the last of them unmaps on `stream`.
    pub fn map_mipmapped_array(&self, stream: &Stream, hint: GraphicsMapHint) -> Result<MipmappedArray> {
        let mut raw = ptr::null_mut();
        // SAFETY: live handles and a valid out-pointer; we own the reference it gives.
        check(unsafe {
            sys::cucore_graphics_resource_map_mipmapped_array(self.as_raw(), stream.as_raw(), hint.raw(), &mut raw)
        })?;
        MipmappedArray::from_out(raw)
    }

    /// Unmaps now, on `stream` when given, else on the mapping's stream
    /// (`cucore_graphics_resource_unmap`; cuda.core's `unmap(stream=None)`). The mapped buffer
    /// is closed (size 0), its views must not be used afterwards, and every call on its mapped
    /// arrays fails with `Status::InvalidState`. Not mapped
    /// is `Status::InvalidState`; after a `Status::Cuda` failure the resource counts as unmapped.
    pub fn unmap(&self, stream: Option<&Stream>) -> Result<()> {
        let stream = stream.map_or(ptr::null_mut(), |s| s.as_raw());
        // SAFETY: a live handle and a live or NULL stream.
        check(unsafe { sys::cucore_graphics_resource_unmap(self.as_raw(), stream) })
    }

    /// Whether the resource is mapped now (false after close)
    /// (`cucore_graphics_resource_is_mapped`).
    pub fn is_mapped(&self) -> Result<bool> {
        let mut mapped: c_int = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_graphics_resource_is_mapped(self.as_raw(), &mut mapped) })?;
        Ok(c_bool(mapped))
    }

    /// Unmaps if mapped (on `stream`, or the mapping's stream when None), then unregisters now
    /// (`cucore_graphics_resource_close`; cuda.core's `close(stream=None)`). Idempotent; every
    /// other call on the resource then fails with `Status::InvalidState`.
    pub fn close(&self, stream: Option<&Stream>) -> Result<()> {
        let stream = stream.map_or(ptr::null_mut(), |s| s.as_raw());
        // SAFETY: a live handle and a live or NULL stream.
        check(unsafe { sys::cucore_graphics_resource_close(self.as_raw(), stream) })
    }

    /// The raw `CUgraphicsResource` (borrowed; NULL after close) (cuda.core's `handle`).
    pub fn handle(&self) -> Result<*mut c_void> {
        let mut h = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_graphics_resource_handle(self.as_raw(), &mut h) })?;
        Ok(h)
    }
}

impl fmt::Debug for GraphicsResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.handle() {
            Ok(h) => write!(f, "GraphicsResource({:p})", h),
            Err(_) => write!(f, "GraphicsResource(<library handle {:p}>)", self.as_raw()),
        }
    }
}

/// The library handles of `resources` and their count as the C ABI takes it.
fn raw_resources(
    what: &str,
    resources: &[&GraphicsResource],
) -> Result<(Vec<*mut sys::cucore_graphics_resource_t>, u32)> {
    let count = u32::try_from(resources.len()).map_err(|_| {
        Error::binding(Status::InvalidArgument, format!("GraphicsResource::{}: too many resources", what))
    })?;
    Ok((resources.iter().map(|r| r.as_raw()).collect(), count))
}

// ---- MappedBuffer -----------------------------------------------------------------------------------

/// A mapped GL buffer ([`GraphicsResource::map`]): dereferences to the [`Buffer`] of the mapped
/// memory. Dropping the guard gives back its reference to the mapping, which unmaps on the
/// mapping stream once no clone or view of the buffer is left.
pub struct MappedBuffer {
    buffer: Buffer,
    resource: GraphicsResource,
}

impl MappedBuffer {
    /// The mapped memory's buffer.
    pub fn buffer(&self) -> &Buffer {
        &self.buffer
    }

    /// The resource this mapping belongs to.
    pub fn resource(&self) -> &GraphicsResource {
        &self.resource
    }

    /// Gives up the guard for the buffer, which then holds the mapping alone (it unmaps when
    /// its last reference goes).
    pub fn into_buffer(self) -> Buffer {
        self.buffer
    }

    /// Unmaps now, on `stream` when given, else on the mapping's stream
    /// ([`GraphicsResource::unmap`]).
    pub fn unmap(self, stream: Option<&Stream>) -> Result<()> {
        self.resource.unmap(stream)
    }
}

impl Deref for MappedBuffer {
    type Target = Buffer;
    fn deref(&self) -> &Buffer {
        &self.buffer
    }
}

impl AsRef<Buffer> for MappedBuffer {
    fn as_ref(&self) -> &Buffer {
        &self.buffer
    }
}

impl fmt::Debug for MappedBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MappedBuffer")
            .field("resource", &self.resource)
            .field("address", &self.buffer.address().ok())
            .finish()
    }
}

// ---- MappedBuffers ------------------------------------------------------------------------------------

/// The mappings of one [`GraphicsResource::map_all`], in the resources' order: it dereferences
/// to `[MappedBuffer]`. Dropping it unmaps, in one driver call on the mapping stream, every
/// resource the batch still maps (those whose mapped [`Buffer`] is not closed: one unmapped
/// meanwhile, by [`GraphicsResource::unmap`] or [`MappedBuffer::unmap`], is left alone); a failure
/// there cannot be returned and goes to the release-error path
/// ([`release_error_count`](crate::release_error_count),
/// [`set_release_error_handler`](crate::set_release_error_handler)). [`MappedBuffers::unmap`] does
/// the same now and returns the error. Clones of its buffers taken out of it read as closed
/// (size 0) after that.
pub struct MappedBuffers {
    buffers: Vec<MappedBuffer>,
}

impl MappedBuffers {
    /// Unmaps, in one driver call on `stream` when given (else on the mapping stream), the
    /// resources this batch still maps (`cucore_graphics_resources_unmap`); `Ok` when none is
    /// left. After a `Status::Cuda` failure they count as unmapped.
    pub fn unmap(mut self, stream: Option<&Stream>) -> Result<()> {
        let buffers = std::mem::take(&mut self.buffers);
        let stream = stream.map_or(ptr::null_mut(), |s| s.as_raw());
        check(unmap_still_mapped(&buffers, stream))
    }

    /// Gives up the one-call unmap: each mapping then unmaps on its own, when the last reference
    /// to its buffer goes (one driver call each).
    pub fn into_buffers(mut self) -> Vec<MappedBuffer> {
        std::mem::take(&mut self.buffers)
    }
}

/// Unmaps in one call the resources whose batch buffer is still open (`stream`: NULL for the
/// mapping stream); the status of the call (success when none is left).
fn unmap_still_mapped(buffers: &[MappedBuffer], stream: *mut sys::cucore_stream_t) -> sys::cucore_status_t {
    // A closed buffer (size 0) means its mapping has ended already; a size that cannot be read
    // is treated the same, as there is nothing this batch can still unmap then.
    let still_mapped: Vec<*mut sys::cucore_graphics_resource_t> = buffers
        .iter()
        .filter(|m| m.buffer.size().map_or(false, |size| size != 0))
        .map(|m| m.resource.as_raw())
        .collect();
    if still_mapped.is_empty() {
        return sys::CUCORE_SUCCESS;
    }
    // SAFETY: live handles, held by `buffers`; a live or NULL stream. Fewer than 2^32 of them:
    // map_all took them in one call.
    unsafe { sys::cucore_graphics_resources_unmap(still_mapped.as_ptr(), still_mapped.len() as u32, stream) }
}

impl Drop for MappedBuffers {
    fn drop(&mut self) {
        let buffers = std::mem::take(&mut self.buffers);
        if buffers.is_empty() {
            return;
        }
        if unmap_still_mapped(&buffers, ptr::null_mut()) != sys::CUCORE_SUCCESS {
            // SAFETY: reads this thread's error slot right after the failed call and hands it
            // on; the message stays valid until the next call on this thread.
            unsafe {
                sys::cucore_report_release_error(
                    sys::cucore_last_error_status(),
                    sys::cucore_last_cuda_result(),
                    sys::cucore_last_error_message(),
                );
            }
        }
        // `buffers` drops here: their mappings have ended, so their releases unmap nothing more.
    }
}

impl Deref for MappedBuffers {
    type Target = [MappedBuffer];
    fn deref(&self) -> &[MappedBuffer] {
        &self.buffers
    }
}

impl AsRef<[MappedBuffer]> for MappedBuffers {
    fn as_ref(&self) -> &[MappedBuffer] {
        &self.buffers
    }
}

impl fmt::Debug for MappedBuffers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("MappedBuffers").field(&self.buffers).finish()
    }
}
