//! Raw FFI declarations of libcucore's C ABI (`include/cucore.h` and `include/cucore/*.h`).
//!
//! Everything here is `unsafe` and mirrors the headers one to one: every function, every enum
//! value (as a constant of an `i32` type alias, since C enums may carry values a Rust enum
//! could not hold), every options struct (`#[repr(C)]`, layout checked by the tests below).
//! The safe API is the `cucore` crate.
//!
//! Every `pub fn cucore_*` declaration of the C headers is declared once, in this file or in the
//! file of its capability (`memory.rs` for `memory.h`), and re-exported at the crate root:
//! `scripts/check_bindings.py` parses every file of `src/`.

#![allow(non_camel_case_types)]
#![allow(clippy::missing_safety_doc)]

use std::marker::{PhantomData, PhantomPinned};
use std::os::raw::{c_char, c_int, c_uchar, c_void};

/// Byte offset of a field, for the layout tests of every module (without `offset_of!`, Rust 1.77, so old
/// compilers build them). Defined before the modules so that each of them sees it.
#[cfg(test)]
macro_rules! offset {
    ($ty:ty, $field:ident) => {{
        let u = std::mem::MaybeUninit::<$ty>::uninit();
        let base = u.as_ptr();
        // SAFETY: only computes an address inside the allocation; nothing is read.
        let field = unsafe { std::ptr::addr_of!((*base).$field) };
        field as usize - base as usize
    }};
}

mod device_attributes;
pub use device_attributes::*;
mod memory;
pub use memory::*;
mod memory_user;
pub use memory_user::*;
mod dlpack;
pub use dlpack::*;
mod ipc;
pub use ipc::*;
mod program;
pub use program::*;
mod object_code;
pub use object_code::*;
mod linker;
pub use linker::*;
mod program_cache;
pub use program_cache::*;
mod kernel;
pub use kernel::*;
mod launch;
pub use launch::*;
mod graphics;
pub use graphics::*;

// ---- common.h ---------------------------------------------------------------------------------

pub const CUCORE_VERSION_MAJOR: u32 = 0;
pub const CUCORE_VERSION_MINOR: u32 = 1;
pub const CUCORE_VERSION_PATCH: u32 = 0;
/// `MAJOR * 10000 + MINOR * 100 + PATCH`, the encoding of `cucore_version()`.
pub const CUCORE_VERSION: u32 = CUCORE_VERSION_MAJOR * 10000 + CUCORE_VERSION_MINOR * 100 + CUCORE_VERSION_PATCH;

/// `cucore_status_t` (a 32-bit C enum).
pub type cucore_status_t = c_int;
pub const CUCORE_SUCCESS: cucore_status_t = 0;
pub const CUCORE_ERROR_INVALID_ARGUMENT: cucore_status_t = 1;
pub const CUCORE_ERROR_INVALID_HANDLE: cucore_status_t = 2;
pub const CUCORE_ERROR_INVALID_STATE: cucore_status_t = 3;
pub const CUCORE_ERROR_NO_DRIVER: cucore_status_t = 4;
pub const CUCORE_ERROR_NO_DEVICE: cucore_status_t = 5;
pub const CUCORE_ERROR_NOT_SUPPORTED: cucore_status_t = 6;
pub const CUCORE_ERROR_OUT_OF_MEMORY: cucore_status_t = 7;
pub const CUCORE_ERROR_CUDA: cucore_status_t = 8;
pub const CUCORE_ERROR_NOT_READY: cucore_status_t = 9;
pub const CUCORE_ERROR_INTERNAL: cucore_status_t = 10;
/// NVRTC, libNVVM or the linker rejected the input (the log stays on the program or linker).
pub const CUCORE_ERROR_COMPILATION: cucore_status_t = 11;
pub const CUCORE_STATUS_FORCE_INT32: cucore_status_t = 0x7fff_ffff;

/// `cucore_object_type_t` (a 32-bit C enum).
pub type cucore_object_type_t = c_int;
pub const CUCORE_OBJECT_ANY: cucore_object_type_t = 0;
pub const CUCORE_OBJECT_DEVICE: cucore_object_type_t = 1;
pub const CUCORE_OBJECT_CONTEXT: cucore_object_type_t = 2;
pub const CUCORE_OBJECT_STREAM: cucore_object_type_t = 3;
pub const CUCORE_OBJECT_EVENT: cucore_object_type_t = 4;
pub const CUCORE_OBJECT_MEMORY_RESOURCE: cucore_object_type_t = 5;
pub const CUCORE_OBJECT_BUFFER: cucore_object_type_t = 6;
pub const CUCORE_OBJECT_PROGRAM: cucore_object_type_t = 7;
pub const CUCORE_OBJECT_OBJECT_CODE: cucore_object_type_t = 8;
pub const CUCORE_OBJECT_LINKER: cucore_object_type_t = 9;
pub const CUCORE_OBJECT_KERNEL: cucore_object_type_t = 10;
pub const CUCORE_OBJECT_PROGRAM_CACHE: cucore_object_type_t = 11;
pub const CUCORE_OBJECT_GRAPHICS_RESOURCE: cucore_object_type_t = 12;
pub const CUCORE_OBJECT_GRAPHICS_ARRAY: cucore_object_type_t = 13;
pub const CUCORE_OBJECT_TYPE_COUNT: cucore_object_type_t = 14;
pub const CUCORE_OBJECT_TYPE_FORCE_INT32: cucore_object_type_t = 0x7fff_ffff;

macro_rules! opaque_handle {
    ($(#[$doc:meta])* $name:ident, $alias:ident) => {
        $(#[$doc])*
        #[repr(C)]
        pub struct $name {
            _data: [u8; 0],
            _marker: PhantomData<(*mut u8, PhantomPinned)>,
        }
        pub type $alias = $name;
    };
}

opaque_handle!(
    /// `struct cucore_device` (incomplete; used through pointers only).
    cucore_device,
    cucore_device_t
);
opaque_handle!(
    /// `struct cucore_context` (incomplete; used through pointers only).
    cucore_context,
    cucore_context_t
);
opaque_handle!(
    /// `struct cucore_stream` (incomplete; used through pointers only).
    cucore_stream,
    cucore_stream_t
);
opaque_handle!(
    /// `struct cucore_event` (incomplete; used through pointers only).
    cucore_event,
    cucore_event_t
);
opaque_handle!(
    /// `struct cucore_memory_resource` (incomplete; used through pointers only).
    cucore_memory_resource,
    cucore_memory_resource_t
);
opaque_handle!(
    /// `struct cucore_buffer` (incomplete; used through pointers only).
    cucore_buffer,
    cucore_buffer_t
);
opaque_handle!(
    /// `struct cucore_program` (incomplete; used through pointers only).
    cucore_program,
    cucore_program_t
);
opaque_handle!(
    /// `struct cucore_object_code` (incomplete; used through pointers only).
    cucore_object_code,
    cucore_object_code_t
);
opaque_handle!(
    /// `struct cucore_linker` (incomplete; used through pointers only).
    cucore_linker,
    cucore_linker_t
);
opaque_handle!(
    /// `struct cucore_kernel` (incomplete; used through pointers only).
    cucore_kernel,
    cucore_kernel_t
);
opaque_handle!(
    /// `struct cucore_program_cache` (incomplete; used through pointers only).
    cucore_program_cache,
    cucore_program_cache_t
);
opaque_handle!(
    /// `struct cucore_graphics_resource` (incomplete; used through pointers only).
    cucore_graphics_resource,
    cucore_graphics_resource_t
);
opaque_handle!(
    /// `struct cucore_graphics_array` (incomplete; used through pointers only).
    cucore_graphics_array,
    cucore_graphics_array_t
);

/// `cucore_toggle_t` (a 32-bit C enum): a switch whose default belongs to the tool (NVRTC, the
/// linker). 0 leaves it to the tool; ON and OFF set it either way.
pub type cucore_toggle_t = c_int;
pub const CUCORE_TOGGLE_DEFAULT: cucore_toggle_t = 0;
pub const CUCORE_TOGGLE_ON: cucore_toggle_t = 1;
pub const CUCORE_TOGGLE_OFF: cucore_toggle_t = 2;
pub const CUCORE_TOGGLE_FORCE_INT32: cucore_toggle_t = 0x7fff_ffff;

/// Called once when the last reference to a wrapped foreign object is released.
pub type cucore_release_fn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

/// Called for every failure inside a release path; `message` is valid only during the call.
pub type cucore_release_error_fn = Option<
    unsafe extern "C" fn(status: cucore_status_t, cuda_result: c_int, message: *const c_char, user_data: *mut c_void),
>;

// ---- device_attributes.h ------------------------------------------------------------------------

/// `cucore_device_attribute_t` (a 32-bit C enum; values equal the driver's `CUdevice_attribute`).
/// The `CUCORE_DEVICE_ATTRIBUTE_*` constants are generated into `device_attributes.rs`.
pub type cucore_device_attribute_t = c_int;

// ---- device.h -----------------------------------------------------------------------------------

/// `cucore_uuid_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct cucore_uuid_t {
    pub bytes: [c_uchar; 16],
}

/// `cucore_device_properties_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct cucore_device_properties_t {
    pub struct_size: u32,
    pub ordinal: c_int,
    pub compute_capability_major: c_int,
    pub compute_capability_minor: c_int,
    pub multiprocessor_count: c_int,
    pub max_threads_per_block: c_int,
    pub max_threads_per_multiprocessor: c_int,
    pub warp_size: c_int,
    pub max_shared_memory_per_block: c_int,
    pub max_shared_memory_per_multiprocessor: c_int,
    pub l2_cache_size: c_int,
    pub clock_rate_khz: c_int,
    pub memory_clock_rate_khz: c_int,
    pub memory_bus_width: c_int,
    pub pci_domain_id: c_int,
    pub pci_bus_id: c_int,
    pub pci_device_id: c_int,
    pub integrated: c_int,
    pub concurrent_managed_access: c_int,
    pub memory_pools_supported: c_int,
    pub cooperative_launch: c_int,
    pub unified_addressing: c_int,
    pub total_memory: u64,
}

impl cucore_device_properties_t {
    /// `CUCORE_DEVICE_PROPERTIES_INIT`.
    pub const INIT: cucore_device_properties_t = cucore_device_properties_t {
        struct_size: std::mem::size_of::<cucore_device_properties_t>() as u32,
        ordinal: 0,
        compute_capability_major: 0,
        compute_capability_minor: 0,
        multiprocessor_count: 0,
        max_threads_per_block: 0,
        max_threads_per_multiprocessor: 0,
        warp_size: 0,
        max_shared_memory_per_block: 0,
        max_shared_memory_per_multiprocessor: 0,
        l2_cache_size: 0,
        clock_rate_khz: 0,
        memory_clock_rate_khz: 0,
        memory_bus_width: 0,
        pci_domain_id: 0,
        pci_bus_id: 0,
        pci_device_id: 0,
        integrated: 0,
        concurrent_managed_access: 0,
        memory_pools_supported: 0,
        cooperative_launch: 0,
        unified_addressing: 0,
        total_memory: 0,
    };
}

// ---- event.h ------------------------------------------------------------------------------------

/// `cucore_event_flag_t` (a 32-bit C enum; bits of `cucore_event_options_t::flags`).
pub type cucore_event_flag_t = c_int;
pub const CUCORE_EVENT_DEFAULT: cucore_event_flag_t = 0;
pub const CUCORE_EVENT_TIMING: cucore_event_flag_t = 1;
pub const CUCORE_EVENT_BLOCKING_SYNC: cucore_event_flag_t = 2;
/// Shareable with other processes (`cucore_ipc_export_event`); not with TIMING.
pub const CUCORE_EVENT_INTERPROCESS: cucore_event_flag_t = 4;
pub const CUCORE_EVENT_FLAG_FORCE_INT32: cucore_event_flag_t = 0x7fff_ffff;

/// `cucore_event_options_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct cucore_event_options_t {
    pub struct_size: u32,
    pub flags: u32,
}

impl cucore_event_options_t {
    /// `CUCORE_EVENT_OPTIONS_INIT`.
    pub const INIT: cucore_event_options_t =
        cucore_event_options_t { struct_size: std::mem::size_of::<cucore_event_options_t>() as u32, flags: 0 };
}

impl Default for cucore_event_options_t {
    fn default() -> Self {
        Self::INIT
    }
}

// ---- stream.h -----------------------------------------------------------------------------------

/// `cucore_stream_flag_t` (a 32-bit C enum; bits of `cucore_stream_options_t::flags`).
pub type cucore_stream_flag_t = c_int;
pub const CUCORE_STREAM_DEFAULT: cucore_stream_flag_t = 0;
pub const CUCORE_STREAM_BLOCKING: cucore_stream_flag_t = 1;
pub const CUCORE_STREAM_FLAG_FORCE_INT32: cucore_stream_flag_t = 0x7fff_ffff;

/// `cucore_stream_options_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct cucore_stream_options_t {
    pub struct_size: u32,
    pub flags: u32,
    pub priority: i32,
}

impl cucore_stream_options_t {
    /// `CUCORE_STREAM_OPTIONS_INIT`.
    pub const INIT: cucore_stream_options_t = cucore_stream_options_t {
        struct_size: std::mem::size_of::<cucore_stream_options_t>() as u32,
        flags: 0,
        priority: 0,
    };
}

impl Default for cucore_stream_options_t {
    fn default() -> Self {
        Self::INIT
    }
}

/// A host function for `cucore_stream_launch_host_func()`. It must not call CUDA.
pub type cucore_host_fn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

// ---- Functions ----------------------------------------------------------------------------------

extern "C" {
    // common.h
    pub fn cucore_version() -> u32;
    pub fn cucore_version_string() -> *const c_char;
    pub fn cucore_status_string(status: cucore_status_t) -> *const c_char;
    pub fn cucore_last_error_message() -> *const c_char;
    pub fn cucore_last_cuda_result() -> c_int;
    pub fn cucore_last_error_status() -> cucore_status_t;
    pub fn cucore_clear_last_error();
    pub fn cucore_object_type_name(type_: cucore_object_type_t) -> *const c_char;
    pub fn cucore_live_object_count(type_: cucore_object_type_t, count: *mut usize) -> cucore_status_t;
    pub fn cucore_release_error_count(count: *mut u64) -> cucore_status_t;
    pub fn cucore_set_release_error_handler(handler: cucore_release_error_fn, user_data: *mut c_void);
    pub fn cucore_report_release_error(status: cucore_status_t, cuda_result: c_int, message: *const c_char);

    // device.h
    pub fn cucore_driver_version(version: *mut c_int) -> cucore_status_t;
    pub fn cucore_device_count(count: *mut c_int) -> cucore_status_t;
    pub fn cucore_device_get(ordinal: c_int, device: *mut *mut cucore_device_t) -> cucore_status_t;
    pub fn cucore_device_get_current(device: *mut *mut cucore_device_t) -> cucore_status_t;
    pub fn cucore_device_retain(device: *mut cucore_device_t) -> cucore_status_t;
    pub fn cucore_device_release(device: *mut cucore_device_t) -> cucore_status_t;
    pub fn cucore_device_ordinal(device: *const cucore_device_t, ordinal: *mut c_int) -> cucore_status_t;
    pub fn cucore_device_handle(device: *const cucore_device_t, cu_device: *mut c_int) -> cucore_status_t;
    pub fn cucore_device_name(device: *const cucore_device_t, name: *mut *const c_char) -> cucore_status_t;
    pub fn cucore_device_pci_bus_id(device: *const cucore_device_t, pci_bus_id: *mut *const c_char) -> cucore_status_t;
    pub fn cucore_device_uuid(device: *const cucore_device_t, uuid: *mut cucore_uuid_t) -> cucore_status_t;
    pub fn cucore_device_compute_capability(
        device: *const cucore_device_t,
        major: *mut c_int,
        minor: *mut c_int,
    ) -> cucore_status_t;
    pub fn cucore_device_total_memory(device: *const cucore_device_t, bytes: *mut u64) -> cucore_status_t;
    pub fn cucore_device_attribute(
        device: *const cucore_device_t,
        attribute: cucore_device_attribute_t,
        value: *mut c_int,
    ) -> cucore_status_t;
    pub fn cucore_device_properties(
        device: *const cucore_device_t,
        properties: *mut cucore_device_properties_t,
    ) -> cucore_status_t;
    pub fn cucore_device_set_current(device: *mut cucore_device_t) -> cucore_status_t;
    pub fn cucore_device_synchronize(device: *mut cucore_device_t) -> cucore_status_t;
    pub fn cucore_device_can_access_peer(
        device: *const cucore_device_t,
        peer: *const cucore_device_t,
        can_access: *mut c_int,
    ) -> cucore_status_t;

    // context.h
    pub fn cucore_context_get_primary(
        device: *mut cucore_device_t,
        context: *mut *mut cucore_context_t,
    ) -> cucore_status_t;
    pub fn cucore_context_from_handle(
        cu_context: *mut c_void,
        on_release: cucore_release_fn,
        user_data: *mut c_void,
        context: *mut *mut cucore_context_t,
    ) -> cucore_status_t;
    pub fn cucore_context_retain(context: *mut cucore_context_t) -> cucore_status_t;
    pub fn cucore_context_release(context: *mut cucore_context_t) -> cucore_status_t;
    pub fn cucore_context_handle(context: *const cucore_context_t, cu_context: *mut *mut c_void) -> cucore_status_t;
    pub fn cucore_context_device(
        context: *const cucore_context_t,
        device: *mut *mut cucore_device_t,
    ) -> cucore_status_t;
    pub fn cucore_context_is_primary(context: *const cucore_context_t, is_primary: *mut c_int) -> cucore_status_t;
    pub fn cucore_context_set_current(context: *mut cucore_context_t) -> cucore_status_t;
    pub fn cucore_context_synchronize(context: *mut cucore_context_t) -> cucore_status_t;

    // event.h
    pub fn cucore_event_create(
        device: *mut cucore_device_t,
        options: *const cucore_event_options_t,
        event: *mut *mut cucore_event_t,
    ) -> cucore_status_t;
    pub fn cucore_event_create_in_context(
        context: *mut cucore_context_t,
        options: *const cucore_event_options_t,
        event: *mut *mut cucore_event_t,
    ) -> cucore_status_t;
    pub fn cucore_event_from_handle(
        cu_event: *mut c_void,
        on_release: cucore_release_fn,
        user_data: *mut c_void,
        event: *mut *mut cucore_event_t,
    ) -> cucore_status_t;
    pub fn cucore_event_retain(event: *mut cucore_event_t) -> cucore_status_t;
    pub fn cucore_event_release(event: *mut cucore_event_t) -> cucore_status_t;
    pub fn cucore_event_record(event: *mut cucore_event_t, stream: *mut cucore_stream_t) -> cucore_status_t;
    pub fn cucore_event_synchronize(event: *mut cucore_event_t) -> cucore_status_t;
    pub fn cucore_event_query(event: *mut cucore_event_t, done: *mut c_int) -> cucore_status_t;
    pub fn cucore_event_elapsed_time(
        start: *mut cucore_event_t,
        end: *mut cucore_event_t,
        milliseconds: *mut f32,
    ) -> cucore_status_t;
    pub fn cucore_event_flags(event: *const cucore_event_t, flags: *mut u32) -> cucore_status_t;
    pub fn cucore_event_device(event: *const cucore_event_t, device: *mut *mut cucore_device_t) -> cucore_status_t;
    pub fn cucore_event_context(event: *const cucore_event_t, context: *mut *mut cucore_context_t) -> cucore_status_t;
    pub fn cucore_event_handle(event: *const cucore_event_t, cu_event: *mut *mut c_void) -> cucore_status_t;

    // stream.h
    pub fn cucore_stream_create(
        device: *mut cucore_device_t,
        options: *const cucore_stream_options_t,
        stream: *mut *mut cucore_stream_t,
    ) -> cucore_status_t;
    pub fn cucore_stream_create_in_context(
        context: *mut cucore_context_t,
        options: *const cucore_stream_options_t,
        stream: *mut *mut cucore_stream_t,
    ) -> cucore_status_t;
    pub fn cucore_stream_get_legacy_default(
        device: *mut cucore_device_t,
        stream: *mut *mut cucore_stream_t,
    ) -> cucore_status_t;
    pub fn cucore_stream_get_per_thread_default(
        device: *mut cucore_device_t,
        stream: *mut *mut cucore_stream_t,
    ) -> cucore_status_t;
    pub fn cucore_stream_from_handle(
        cu_stream: *mut c_void,
        on_release: cucore_release_fn,
        user_data: *mut c_void,
        stream: *mut *mut cucore_stream_t,
    ) -> cucore_status_t;
    pub fn cucore_stream_retain(stream: *mut cucore_stream_t) -> cucore_status_t;
    pub fn cucore_stream_release(stream: *mut cucore_stream_t) -> cucore_status_t;
    pub fn cucore_stream_synchronize(stream: *mut cucore_stream_t) -> cucore_status_t;
    pub fn cucore_stream_query(stream: *mut cucore_stream_t, done: *mut c_int) -> cucore_status_t;
    pub fn cucore_stream_wait_event(stream: *mut cucore_stream_t, event: *mut cucore_event_t) -> cucore_status_t;
    pub fn cucore_stream_wait_stream(stream: *mut cucore_stream_t, other: *mut cucore_stream_t) -> cucore_status_t;
    pub fn cucore_stream_record(
        stream: *mut cucore_stream_t,
        options: *const cucore_event_options_t,
        event: *mut *mut cucore_event_t,
    ) -> cucore_status_t;
    pub fn cucore_stream_launch_host_func(
        stream: *mut cucore_stream_t,
        fn_: cucore_host_fn,
        user_data: *mut c_void,
    ) -> cucore_status_t;
    pub fn cucore_stream_device(stream: *const cucore_stream_t, device: *mut *mut cucore_device_t) -> cucore_status_t;
    pub fn cucore_stream_context(
        stream: *const cucore_stream_t,
        context: *mut *mut cucore_context_t,
    ) -> cucore_status_t;
    pub fn cucore_stream_priority(stream: *const cucore_stream_t, priority: *mut c_int) -> cucore_status_t;
    pub fn cucore_stream_flags(stream: *const cucore_stream_t, flags: *mut u32) -> cucore_status_t;
    pub fn cucore_stream_is_owned(stream: *const cucore_stream_t, owned: *mut c_int) -> cucore_status_t;
    pub fn cucore_stream_handle(stream: *const cucore_stream_t, cu_stream: *mut *mut c_void) -> cucore_status_t;
    pub fn cucore_stream_priority_range(
        device: *mut cucore_device_t,
        least: *mut c_int,
        greatest: *mut c_int,
    ) -> cucore_status_t;

    // dlpack.h
    pub fn cucore_dlpack_export(
        buffer: *mut cucore_buffer_t,
        layout: *const cucore_dlpack_layout_t,
        tensor: *mut *mut DLManagedTensorVersioned,
    ) -> cucore_status_t;
    pub fn cucore_dlpack_export_legacy(
        buffer: *mut cucore_buffer_t,
        layout: *const cucore_dlpack_layout_t,
        tensor: *mut *mut DLManagedTensor,
    ) -> cucore_status_t;
    pub fn cucore_dlpack_import(tensor: *mut DLManagedTensorVersioned, buffer: *mut *mut cucore_buffer_t)
        -> cucore_status_t;
    pub fn cucore_dlpack_import_legacy(tensor: *mut DLManagedTensor, buffer: *mut *mut cucore_buffer_t)
        -> cucore_status_t;
    pub fn cucore_dlpack_device(
        buffer: *const cucore_buffer_t,
        device_type: *mut i32,
        device_id: *mut i32,
    ) -> cucore_status_t;

    // ipc.h (Linux)
    pub fn cucore_ipc_export_memory_resource(
        resource: *mut cucore_memory_resource_t,
        handle: *mut cucore_ipc_pool_handle_t,
    ) -> cucore_status_t;
    pub fn cucore_ipc_import_memory_resource(
        device: *mut cucore_device_t,
        handle: *const cucore_ipc_pool_handle_t,
        resource: *mut *mut cucore_memory_resource_t,
    ) -> cucore_status_t;
    pub fn cucore_ipc_memory_resource_pool_id(resource: *const cucore_memory_resource_t, pool_id: *mut u8)
        -> cucore_status_t;
    pub fn cucore_ipc_export_buffer(buffer: *mut cucore_buffer_t, descriptor: *mut u8) -> cucore_status_t;
    pub fn cucore_ipc_import_buffer(
        resource: *mut cucore_memory_resource_t,
        descriptor: *const u8,
        descriptor_size: u64,
        stream: *mut cucore_stream_t,
        buffer: *mut *mut cucore_buffer_t,
    ) -> cucore_status_t;
    pub fn cucore_ipc_export_event(event: *mut cucore_event_t, descriptor: *mut u8) -> cucore_status_t;
    pub fn cucore_ipc_import_event(
        device: *mut cucore_device_t,
        descriptor: *const u8,
        descriptor_size: u64,
        event: *mut *mut cucore_event_t,
    ) -> cucore_status_t;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;
    use std::mem::{align_of, size_of};
    use std::ptr;


    // Sizes, alignments and offsets as gcc lays out the C structs on the 64-bit targets the
    // library supports (checked with offsetof/sizeof against include/cucore/*.h).
    #[test]
    fn layout_uuid() {
        assert_eq!(size_of::<cucore_uuid_t>(), 16);
        assert_eq!(align_of::<cucore_uuid_t>(), 1);
    }

    #[test]
    fn layout_device_properties() {
        assert_eq!(size_of::<cucore_device_properties_t>(), 96);
        assert_eq!(align_of::<cucore_device_properties_t>(), 8);
        assert_eq!(offset!(cucore_device_properties_t, struct_size), 0);
        assert_eq!(offset!(cucore_device_properties_t, ordinal), 4);
        assert_eq!(offset!(cucore_device_properties_t, compute_capability_major), 8);
        assert_eq!(offset!(cucore_device_properties_t, warp_size), 28);
        assert_eq!(offset!(cucore_device_properties_t, pci_domain_id), 56);
        assert_eq!(offset!(cucore_device_properties_t, unified_addressing), 84);
        assert_eq!(offset!(cucore_device_properties_t, total_memory), 88);
        assert_eq!(cucore_device_properties_t::INIT.struct_size, 96);
    }

    #[test]
    fn layout_event_options() {
        assert_eq!(size_of::<cucore_event_options_t>(), 8);
        assert_eq!(align_of::<cucore_event_options_t>(), 4);
        assert_eq!(offset!(cucore_event_options_t, struct_size), 0);
        assert_eq!(offset!(cucore_event_options_t, flags), 4);
        assert_eq!(cucore_event_options_t::INIT.struct_size, 8);
        assert_eq!(cucore_event_options_t::INIT.flags, 0);
    }

    #[test]
    fn layout_stream_options() {
        assert_eq!(size_of::<cucore_stream_options_t>(), 12);
        assert_eq!(align_of::<cucore_stream_options_t>(), 4);
        assert_eq!(offset!(cucore_stream_options_t, struct_size), 0);
        assert_eq!(offset!(cucore_stream_options_t, flags), 4);
        assert_eq!(offset!(cucore_stream_options_t, priority), 8);
        assert_eq!(cucore_stream_options_t::INIT.struct_size, 12);
    }

    #[test]
    fn enums_and_callbacks_are_c_sized() {
        assert_eq!(size_of::<cucore_status_t>(), 4);
        assert_eq!(size_of::<cucore_object_type_t>(), 4);
        assert_eq!(size_of::<cucore_toggle_t>(), 4);
        assert_eq!(size_of::<cucore_device_attribute_t>(), 4);
        assert_eq!(size_of::<cucore_release_fn>(), size_of::<*mut c_void>());
        assert_eq!(size_of::<cucore_release_error_fn>(), size_of::<*mut c_void>());
        assert_eq!(size_of::<cucore_host_fn>(), size_of::<*mut c_void>());
    }

    fn cstr(p: *const c_char) -> String {
        assert!(!p.is_null());
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    #[test]
    fn version_matches_header() {
        unsafe {
            assert_eq!(cucore_version(), CUCORE_VERSION);
            assert_eq!(
                cstr(cucore_version_string()),
                format!("{}.{}.{}", CUCORE_VERSION_MAJOR, CUCORE_VERSION_MINOR, CUCORE_VERSION_PATCH)
            );
        }
    }

    #[test]
    fn status_strings() {
        unsafe {
            assert_eq!(cstr(cucore_status_string(CUCORE_SUCCESS)), "CUCORE_SUCCESS");
            assert_eq!(cstr(cucore_status_string(CUCORE_ERROR_INVALID_HANDLE)), "CUCORE_ERROR_INVALID_HANDLE");
            assert_eq!(cstr(cucore_status_string(CUCORE_ERROR_INTERNAL)), "CUCORE_ERROR_INTERNAL");
            assert_eq!(cstr(cucore_status_string(CUCORE_ERROR_COMPILATION)), "CUCORE_ERROR_COMPILATION");
            assert_eq!(cstr(cucore_status_string(12345)), "CUCORE_STATUS_UNKNOWN");
        }
    }

    /// A pointer that is no handle at all: the address of a local filled with junk.
    fn garbage<T>(junk: &mut [u64; 8]) -> *mut T {
        junk.as_mut_ptr() as *mut T
    }

    #[test]
    fn null_handles_are_invalid_handle() {
        unsafe {
            let mut i: c_int = 7;
            assert_eq!(cucore_device_ordinal(ptr::null(), &mut i), CUCORE_ERROR_INVALID_HANDLE);
            assert_eq!(i, 0, "out-pointers are zeroed on failure");
            assert_eq!(cucore_last_error_status(), CUCORE_ERROR_INVALID_HANDLE);
            assert!(!cstr(cucore_last_error_message()).is_empty());
            assert_eq!(cucore_stream_synchronize(ptr::null_mut()), CUCORE_ERROR_INVALID_HANDLE);
            assert_eq!(cucore_event_synchronize(ptr::null_mut()), CUCORE_ERROR_INVALID_HANDLE);
            assert_eq!(cucore_context_synchronize(ptr::null_mut()), CUCORE_ERROR_INVALID_HANDLE);
            assert_eq!(cucore_stream_retain(ptr::null_mut()), CUCORE_ERROR_INVALID_HANDLE);
            // Releasing NULL is a no-op.
            assert_eq!(cucore_stream_release(ptr::null_mut()), CUCORE_SUCCESS);
            assert_eq!(cucore_event_release(ptr::null_mut()), CUCORE_SUCCESS);
            assert_eq!(cucore_context_release(ptr::null_mut()), CUCORE_SUCCESS);
            assert_eq!(cucore_device_release(ptr::null_mut()), CUCORE_SUCCESS);
            assert_eq!(cucore_memory_resource_release(ptr::null_mut()), CUCORE_SUCCESS);
            assert_eq!(cucore_buffer_release(ptr::null_mut()), CUCORE_SUCCESS);
            assert_eq!(cucore_memory_resource_retain(ptr::null_mut()), CUCORE_ERROR_INVALID_HANDLE);
            assert_eq!(cucore_buffer_retain(ptr::null_mut()), CUCORE_ERROR_INVALID_HANDLE);
            let mut size: u64 = 7;
            assert_eq!(cucore_buffer_size(ptr::null(), &mut size), CUCORE_ERROR_INVALID_HANDLE);
            assert_eq!(size, 0, "out-pointers are zeroed on failure");
            let mut kind: cucore_memory_resource_kind_t = 7;
            assert_eq!(cucore_memory_resource_kind(ptr::null(), &mut kind), CUCORE_ERROR_INVALID_HANDLE);
            assert_eq!(kind, CUCORE_MEMORY_RESOURCE_UNSET);
            let mut mr: *mut cucore_memory_resource_t = 1 as *mut _;
            assert_eq!(
                cucore_device_memory_resource_get_default(ptr::null_mut(), &mut mr),
                CUCORE_ERROR_INVALID_HANDLE
            );
            assert!(mr.is_null());
            let mut buf: *mut cucore_buffer_t = 1 as *mut _;
            assert_eq!(
                cucore_memory_resource_allocate(ptr::null_mut(), 16, ptr::null_mut(), &mut buf),
                CUCORE_ERROR_INVALID_HANDLE
            );
            assert!(buf.is_null());
            assert_eq!(cucore_buffer_fill(ptr::null_mut(), 0, 1, ptr::null_mut()), CUCORE_ERROR_INVALID_HANDLE);
        }
    }

    #[test]
    fn garbage_handles_are_invalid_handle() {
        let mut junk = [0xdead_beef_dead_beef_u64; 8];
        unsafe {
            let mut done: c_int = 7;
            assert_eq!(cucore_stream_query(garbage(&mut junk), &mut done), CUCORE_ERROR_INVALID_HANDLE);
            assert_eq!(cucore_event_query(garbage(&mut junk), &mut done), CUCORE_ERROR_INVALID_HANDLE);
            assert_eq!(cucore_device_retain(garbage(&mut junk)), CUCORE_ERROR_INVALID_HANDLE);
            assert_eq!(cucore_context_release(garbage(&mut junk)), CUCORE_ERROR_INVALID_HANDLE);
            assert_eq!(cucore_stream_release(garbage(&mut junk)), CUCORE_ERROR_INVALID_HANDLE);
            assert_eq!(cucore_event_release(garbage(&mut junk)), CUCORE_ERROR_INVALID_HANDLE);
            let mut p: *mut c_void = 1 as *mut c_void;
            assert_eq!(cucore_stream_handle(garbage(&mut junk), &mut p), CUCORE_ERROR_INVALID_HANDLE);
            assert!(p.is_null(), "out-pointers are NULL on failure");
            assert!(!cstr(cucore_last_error_message()).is_empty());
        }
    }

    #[test]
    fn null_out_pointers_are_invalid_argument() {
        unsafe {
            assert_eq!(cucore_live_object_count(CUCORE_OBJECT_ANY, ptr::null_mut()), CUCORE_ERROR_INVALID_ARGUMENT);
            assert_eq!(cucore_release_error_count(ptr::null_mut()), CUCORE_ERROR_INVALID_ARGUMENT);
            assert_eq!(cucore_driver_version(ptr::null_mut()), CUCORE_ERROR_INVALID_ARGUMENT);
            let mut n: usize = 99;
            assert_eq!(cucore_live_object_count(CUCORE_OBJECT_TYPE_COUNT, &mut n), CUCORE_ERROR_INVALID_ARGUMENT);
            assert_eq!(cucore_live_object_count(CUCORE_OBJECT_ANY, &mut n), CUCORE_SUCCESS);
        }
    }

    #[test]
    fn object_type_names() {
        unsafe {
            assert_eq!(cstr(cucore_object_type_name(CUCORE_OBJECT_STREAM)), "stream");
            assert_eq!(cstr(cucore_object_type_name(CUCORE_OBJECT_EVENT)), "event");
            assert!(!cstr(cucore_object_type_name(CUCORE_OBJECT_MEMORY_RESOURCE)).is_empty());
            assert!(!cstr(cucore_object_type_name(CUCORE_OBJECT_BUFFER)).is_empty());
        }
    }

    /// What the handler of `report_release_error_reaches_the_handler` saw.
    static REPORTED: std::sync::Mutex<Vec<(cucore_status_t, c_int, String)>> = std::sync::Mutex::new(Vec::new());

    unsafe extern "C" fn record_release_error(
        status: cucore_status_t,
        cuda_result: c_int,
        message: *const c_char,
        _user_data: *mut c_void,
    ) {
        let message = if message.is_null() { String::from("<NULL>") } else { cstr(message) };
        REPORTED.lock().unwrap_or_else(|p| p.into_inner()).push((status, cuda_result, message));
    }

    #[test]
    fn report_release_error_reaches_the_handler() {
        // No other test of this binary installs a handler or meets a release failure, so the
        // counts and the records below are this test's own.
        unsafe {
            let mut before: u64 = 0;
            assert_eq!(cucore_release_error_count(&mut before), CUCORE_SUCCESS);
            cucore_set_release_error_handler(Some(record_release_error), ptr::null_mut());
            cucore_report_release_error(
                CUCORE_ERROR_CUDA,
                999,
                b"cucore-sys test: a batch unmap failed\0".as_ptr() as _,
            );
            // A NULL message is allowed (the handler gets an empty one).
            cucore_report_release_error(CUCORE_ERROR_INVALID_STATE, 0, ptr::null());
            cucore_set_release_error_handler(None, ptr::null_mut());
            let mut after: u64 = 0;
            assert_eq!(cucore_release_error_count(&mut after), CUCORE_SUCCESS);
            assert_eq!(after, before + 2, "each report is counted");
            // Reporting touches no thread error state a caller could mistake for its own failure.
            assert_eq!(cucore_stream_synchronize(ptr::null_mut()), CUCORE_ERROR_INVALID_HANDLE);
            cucore_report_release_error(CUCORE_ERROR_CUDA, 1, ptr::null());
            assert_eq!(cucore_last_error_status(), CUCORE_ERROR_INVALID_HANDLE);
        }
        let seen = REPORTED.lock().unwrap().clone();
        assert_eq!(
            seen,
            vec![
                (CUCORE_ERROR_CUDA, 999, String::from("cucore-sys test: a batch unmap failed")),
                (CUCORE_ERROR_INVALID_STATE, 0, String::new()),
            ],
            "the handler gets the status, the driver result and the message as given"
        );
    }

    #[test]
    fn clear_last_error() {
        unsafe {
            assert_eq!(cucore_stream_synchronize(ptr::null_mut()), CUCORE_ERROR_INVALID_HANDLE);
            cucore_clear_last_error();
            assert_eq!(cucore_last_error_status(), CUCORE_SUCCESS);
            assert_eq!(cucore_last_cuda_result(), 0);
            assert_eq!(cstr(cucore_last_error_message()), "");
        }
    }
}
