//! Safe Rust bindings of libcucore, the CUDA driver API made safe and pleasant (a C ABI modelled
//! on NVIDIA's Python `cuda.core`).
//!
//! Every handle type ([`Device`], [`Context`], [`Stream`], [`Event`], [`MemoryResource`],
//! [`Buffer`], [`Program`], [`ObjectCode`], [`Linker`], [`Kernel`], [`ProgramCache`],
//! [`GraphicsResource`], [`OpaqueArray`], [`MipmappedArray`], [`TextureObject`],
//! [`SurfaceObject`], [`GraphDefinition`], [`GraphNode`], [`Graph`], [`GraphBuilder`],
//! [`Communicator`]) owns one
//! reference to a library object: `Clone` adds one
//! (`cucore_*_retain`), `Drop` gives it back (`cucore_*_release`). Objects hold references to
//! what they depend on (a stream holds its context, which holds its device; a buffer holds its
//! memory resource and its deallocation stream; a texture object its array or buffer), so drop
//! order never matters. The C ABI is thread safe, so every handle is `Send + Sync`. Every
//! fallible call returns [`Result`], whose [`Error`] carries the library's status, the
//! driver's `CUresult` and the message of
//! `cucore_last_error_message()`.
//!
//! ```no_run
//! use cucore::{Device, EventOptions, StreamOptions};
//!
//! # fn main() -> cucore::Result<()> {
//! let dev = Device::get(0)?;
//! dev.set_current()?;
//! let stream = dev.create_stream(StreamOptions::default())?;
//! let start = stream.record(EventOptions::timing())?;
//! stream.launch_host_func(|| println!("runs on a driver thread, in stream order"))?;
//! let end = stream.record(EventOptions::timing())?;
//! end.synchronize()?;
//! println!("{} on {}: {} ms", dev.name()?, dev.pci_bus_id()?, end.elapsed_since(&start)?);
//!
//! let buf = dev.allocate(1 << 20, &stream)?;                  // stream-ordered, device 0's pool
//! buf.fill(0xab, 1, &stream)?;
//! let mut host = vec![0u8; 16];
//! buf.copy_to_host(0, &mut host, &stream)?;                  // waits for the stream
//! assert_eq!(host, [0xab; 16]);
//! # Ok(())
//! # }
//! ```
//!
//! Modules are named after the C headers (`include/cucore/<name>.h`); everything is re-exported
//! at the crate root. The raw declarations are the `cucore-sys` crate, re-exported as [`sys`].

#![deny(unsafe_op_in_unsafe_fn)]

pub use cucore_sys as sys;

/// Implements the handle plumbing shared by every wrapper type: `Clone` = retain,
/// `Drop` = release, `Send + Sync`, and adopt/into_raw/as_raw. Retain and release come from the C
/// handle type's `sys::Handle` implementation, which cucore-sys generates from the header.
macro_rules! handle_type {
    ($ty:ident, $raw:ty) => {
        // SAFETY: the C ABI is thread safe: every function may be called from any thread, and
        // reference counts are atomic.
        unsafe impl Send for $ty {}
        // SAFETY: as above; `&self` methods only make library calls on the handle.
        unsafe impl Sync for $ty {}

        impl Clone for $ty {
            fn clone(&self) -> Self {
                // SAFETY: self.raw is a live handle we hold a reference to.
                let status = unsafe { <$raw as $crate::sys::Handle>::retain(self.raw.as_ptr()) };
                if let Err(e) = $crate::common::check(status) {
                    panic!("cucore: cucore_{}_retain failed: {}", <$raw as $crate::sys::Handle>::NOUN, e);
                }
                $ty { raw: self.raw }
            }
        }

        impl Drop for $ty {
            fn drop(&mut self) {
                // SAFETY: gives back the reference this value owns. A failure inside the
                // release path is counted and reported by the library
                // (release_error_count / set_release_error_handler); nothing to do here.
                unsafe {
                    <$raw as $crate::sys::Handle>::release(self.raw.as_ptr());
                }
            }
        }

        impl $ty {
            /// Takes over one reference to `raw` (as a C function's out-parameter hands it out).
            ///
            /// # Safety
            /// `raw` is a live handle of this type, and the caller owns the reference it gives.
            /// # Panics
            /// If `raw` is NULL.
            pub unsafe fn adopt(raw: *mut $raw) -> Self {
                $ty { raw: std::ptr::NonNull::new(raw).expect(concat!(stringify!($ty), "::adopt: NULL handle")) }
            }

            /// Gives up this value's reference as a raw handle (the caller must release it).
            pub fn into_raw(self) -> *mut $raw {
                let raw = self.raw.as_ptr();
                std::mem::forget(self);
                raw
            }

            /// The library handle, borrowed (no reference is added).
            pub fn as_raw(&self) -> *mut $raw {
                self.raw.as_ptr()
            }

            /// Wraps an out-parameter of a successful call.
            #[allow(dead_code)]
            pub(crate) fn from_out(raw: *mut $raw) -> $crate::common::Result<Self> {
                match std::ptr::NonNull::new(raw) {
                    Some(raw) => Ok($ty { raw }),
                    None => Err($crate::common::Error::binding(
                        $crate::common::Status::Internal,
                        concat!("the library returned a NULL ", stringify!($ty), " on success").to_string(),
                    )),
                }
            }
        }
    };
}

/// Builder methods of an options struct: each `field: Type => |value| expression;` becomes
/// `pub fn field(mut self, value: Type) -> Self`, storing the expression in `self.field`.
macro_rules! setters {
    ($( $(#[$doc:meta])* $field:ident: $ty:ty => $value:expr; )*) => {
        $(
            $(#[$doc])*
            #[allow(clippy::redundant_closure_call)]
            pub fn $field(mut self, value: $ty) -> Self {
                self.$field = ($value)(value);
                self
            }
        )*
    };
}

/// Equality and hashing by identity: two values are equal when they hold the same library
/// object (clones of one another, or references the library handed out to one object).
macro_rules! identity_eq {
    ($ty:ident) => {
        impl PartialEq for $ty {
            /// The same library object (compare `handle()` for the same driver object).
            fn eq(&self, other: &Self) -> bool {
                self.raw == other.raw
            }
        }
        impl Eq for $ty {}

        impl std::hash::Hash for $ty {
            fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
                self.raw.hash(state)
            }
        }
    };
}

pub mod common;
pub mod context;
pub mod device;
pub mod device_resources;
mod device_attributes;
mod object_type; // generated: ObjectType
pub mod dlpack;
pub mod event;
#[cfg(unix)]
pub mod ipc;
pub mod stream;
// Memory, split as in every layer: resources by kind, buffers, copies.
pub mod buffer;
pub mod copy_3d;
pub mod managed_memory;
pub mod memory_operations;
pub mod memory_pool;
pub mod memory_resource;
pub mod user_memory;
pub mod virtual_memory;
// Compile and launch.
pub mod kernel;
pub mod launch;
pub mod linker;
pub mod object_code;
pub mod program;
pub mod program_cache;
// Arrays, textures and surfaces.
pub mod opaque_array;
pub mod texture;
// TensorMap (TMA) descriptors.
pub mod tensor_map;
// Graphs: definitions, nodes and executable graphs; capture; graph memory.
pub mod graph;
pub mod graph_builder;
pub mod graph_memory;
// Graphics interop.
pub mod graphics;

pub mod checkpoint;
pub mod system;
// Collectives between GPUs through NCCL.
pub mod communicator;

pub use common::{
    live_object_count, release_error_count, set_release_error_handler, version, version_string, Error, ObjectType,
    OwnerCallback, ReleaseErrorHandler, Result, Status, BINDING_VERSION,
};
pub use context::Context;
pub use device::{driver_version, ComputeCapability, Device, DeviceAttribute, DeviceProperties, Uuid};
pub use dlpack::{
    DLDevice, DLDeviceType, DLPackElement, DLPackLayout, DLPackTensor, LegacyDLPackTensor,
};
pub use device_resources::{
    ContextOptions, DeviceResources, SmResource, SmResourceInfo, SmResourceOptions, SmSplitInfo, WorkqueueResource,
    WorkqueueResourceOptions, WorkqueueSharingScope,
};
pub use event::{Event, EventOptions};
pub use buffer::Buffer;
pub use copy_3d::{copy_3d, copy_3d_async, DstMemory, Extent3D, MemoryRegion, RegionLayout, SrcMemory};
pub use managed_memory::{ManagedAdvice, ManagedMemoryResourceOptions, MemoryAdvice};
pub use memory_operations::{
    copy_3d_batch, copy_batch, copy_batch_buffers, discard_batch, discard_prefetch_batch, prefetch_batch, BatchCopy, CopyOptions,
    CopySide, Host, MemcpyOverlapMode, MemcpySrcAccessOrder, MemoryBarrierScope, StreamMemoryOp, StridedCopy,
    WaitCondition,
};
pub use memory_pool::{DeviceMemoryResourceOptions, PinnedMemoryResourceOptions, PoolAttribute};
pub use memory_resource::{Access, Accessibility, Location, MemoryResource, MemoryResourceKind};
pub use user_memory::{StreamRef, UserMemoryResource};
pub use virtual_memory::{Granularity, VirtualMemoryResourceOptions};
pub use stream::{CaptureStatus, Stream, StreamOptions, StreamPriorityRange};

pub use kernel::{Kernel, KernelAttribute, ParamInfo, PotentialBlockSize};
pub use launch::{launch, launch_raw, DevicePointer, DeviceRepr, Dim3, KernelArg, LaunchConfig, MAX_STACK_ARGS};
pub use linker::{Linker, LinkerOptions};
pub use object_code::{GlobalInfo, ObjectCode};
pub use program::{compiler_version, CodeType, CompilerBackend, PchStatus, Program, ProgramOptions};
pub use program_cache::{ProgramCache, ProgramCacheStats};

pub use opaque_array::{
    ArrayCopyDst, ArrayCopySrc, ArrayFlags, ArrayFormat, ArrayKind, ArrayRegion, MipmappedArray, OpaqueArray,
    OpaqueArrayInfo, OpaqueArrayOptions, PlainData,
};
pub use texture::{
    AddressMode, FilterMode, ReadMode, ResourceDescriptor, SurfaceObject, TextureObject, TextureObjectOptions,
};

pub use tensor_map::{
    TensorMapDataType, TensorMapDescriptor, TensorMapDescriptorOptions, TensorMapIm2ColWideMode, TensorMapInterleave,
    TensorMapKind, TensorMapL2Promotion, TensorMapOOBFill, TensorMapSwizzle, TensorMapTarget, TENSOR_MAP_SIZE,
};

pub use graph::{
    Graph, GraphAllocInfo, GraphAllocOptions, GraphCompleteOptions, GraphCondition, GraphConditionalType,
    GraphDebugPrintOptions, GraphDefinition, GraphMemoryType, GraphNode, GraphNodeType, GraphUpdateError,
    GraphUpdateResult, MemcpyParams, MemsetParams, MAX_GRAPH_ALLOC_PEERS,
};
pub use graph_builder::{CaptureMode, GraphBuilder};
pub use graph_memory::{GraphMemoryAttribute, GraphMemoryResource};

pub use checkpoint::{Process, ProcessState};
pub use system::{SystemDevice, SystemEventSet};
pub use communicator::{group, CollectiveElement, Communicator, CommunicatorId, DataType, Group, ReduceOp};
pub use graphics::{
    gl_get_devices, GlDeviceList, GraphicsMapHint, GraphicsRegisterFlags, GraphicsResource, MappedBuffer,
    MappedBuffers,
};

#[cfg(test)]
mod tests;
