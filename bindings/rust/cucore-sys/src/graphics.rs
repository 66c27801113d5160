//! The declarations of `include/cucore/graphics.h`: OpenGL interop (registering GL buffers,
//! textures and renderbuffers with CUDA, mapping them as buffers or CUDA arrays). The library
//! never links GL: GL objects are passed by name and target as unsigned integers.

use std::os::raw::{c_int, c_void};

use crate::{
    cucore_buffer_t, cucore_device_t, cucore_graphics_array_t, cucore_graphics_resource_t, cucore_status_t,
    cucore_stream_t,
};

/// `cucore_graphics_register_flag_t` (a 32-bit C enum; bits of the registration flags).
pub type cucore_graphics_register_flag_t = c_int;
pub const CUCORE_GRAPHICS_REGISTER_NONE: cucore_graphics_register_flag_t = 0;
/// CUDA only reads the resource.
pub const CUCORE_GRAPHICS_REGISTER_READ_ONLY: cucore_graphics_register_flag_t = 1;
/// CUDA overwrites every byte it maps; previous contents are undefined.
pub const CUCORE_GRAPHICS_REGISTER_WRITE_DISCARD: cucore_graphics_register_flag_t = 2;
/// Images only: the arrays may be bound as surfaces.
pub const CUCORE_GRAPHICS_REGISTER_SURFACE_LOAD_STORE: cucore_graphics_register_flag_t = 4;
/// Images only: texture gather on the mapped arrays.
pub const CUCORE_GRAPHICS_REGISTER_TEXTURE_GATHER: cucore_graphics_register_flag_t = 8;
pub const CUCORE_GRAPHICS_REGISTER_FLAG_FORCE_INT32: cucore_graphics_register_flag_t = 0x7fff_ffff;

/// `cucore_graphics_map_hint_t` (a 32-bit C enum): how CUDA will use one mapping.
pub type cucore_graphics_map_hint_t = c_int;
pub const CUCORE_GRAPHICS_MAP_HINT_NONE: cucore_graphics_map_hint_t = 0;
pub const CUCORE_GRAPHICS_MAP_HINT_READ_ONLY: cucore_graphics_map_hint_t = 1;
pub const CUCORE_GRAPHICS_MAP_HINT_WRITE_DISCARD: cucore_graphics_map_hint_t = 2;
pub const CUCORE_GRAPHICS_MAP_HINT_FORCE_INT32: cucore_graphics_map_hint_t = 0x7fff_ffff;

/// `cucore_gl_device_list_t` (a 32-bit C enum; `CUGLDeviceList`).
pub type cucore_gl_device_list_t = c_int;
/// Every device of the current GL context.
pub const CUCORE_GL_DEVICES_ALL: cucore_gl_device_list_t = 1;
/// The devices rendering the current frame (SLI).
pub const CUCORE_GL_DEVICES_CURRENT_FRAME: cucore_gl_device_list_t = 2;
/// The devices rendering the next frame (SLI).
pub const CUCORE_GL_DEVICES_NEXT_FRAME: cucore_gl_device_list_t = 3;
pub const CUCORE_GL_DEVICE_LIST_FORCE_INT32: cucore_gl_device_list_t = 0x7fff_ffff;

/// `cucore_graphics_array_info_t`: a mapped CUDA array's format and extent.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct cucore_graphics_array_info_t {
    pub struct_size: u32,
    /// The driver's `CUarray_format` value.
    pub format: u32,
    /// 1, 2 or 4.
    pub channels: u32,
    /// Bytes per element (channels x channel size).
    pub element_size: u32,
    /// In elements.
    pub width: u64,
    /// 0 for a 1D array.
    pub height: u64,
    /// 0 for a 1D or 2D array.
    pub depth: u64,
    /// 1: a mipmapped array (use `cucore_graphics_array_level`).
    pub is_mipmapped: u32,
    pub reserved: u32,
}

impl cucore_graphics_array_info_t {
    /// `CUCORE_GRAPHICS_ARRAY_INFO_INIT`.
    pub const INIT: cucore_graphics_array_info_t = cucore_graphics_array_info_t {
        struct_size: std::mem::size_of::<cucore_graphics_array_info_t>() as u32,
        format: 0,
        channels: 0,
        element_size: 0,
        width: 0,
        height: 0,
        depth: 0,
        is_mipmapped: 0,
        reserved: 0,
    };
}

impl Default for cucore_graphics_array_info_t {
    fn default() -> Self {
        Self::INIT
    }
}

extern "C" {
    // Registration.
    pub fn cucore_graphics_resource_from_gl_buffer(
        device: *mut cucore_device_t,
        gl_name: u32,
        flags: u32,
        resource: *mut *mut cucore_graphics_resource_t,
    ) -> cucore_status_t;
    pub fn cucore_graphics_resource_from_gl_image(
        device: *mut cucore_device_t,
        gl_name: u32,
        gl_target: u32,
        flags: u32,
        resource: *mut *mut cucore_graphics_resource_t,
    ) -> cucore_status_t;
    pub fn cucore_graphics_resource_retain(resource: *mut cucore_graphics_resource_t) -> cucore_status_t;
    pub fn cucore_graphics_resource_release(resource: *mut cucore_graphics_resource_t) -> cucore_status_t;

    // Mapping.
    pub fn cucore_graphics_resource_map(
        resource: *mut cucore_graphics_resource_t,
        stream: *mut cucore_stream_t,
        hint: u32,
        buffer: *mut *mut cucore_buffer_t,
    ) -> cucore_status_t;
    pub fn cucore_graphics_resources_map(
        resources: *const *mut cucore_graphics_resource_t,
        count: u32,
        stream: *mut cucore_stream_t,
        buffers: *mut *mut cucore_buffer_t,
    ) -> cucore_status_t;
    pub fn cucore_graphics_resources_unmap(
        resources: *const *mut cucore_graphics_resource_t,
        count: u32,
        stream: *mut cucore_stream_t,
    ) -> cucore_status_t;
    pub fn cucore_graphics_resource_map_array(
        resource: *mut cucore_graphics_resource_t,
        stream: *mut cucore_stream_t,
        hint: u32,
        array_index: u32,
        mip_level: u32,
        array: *mut *mut cucore_graphics_array_t,
    ) -> cucore_status_t;
    pub fn cucore_graphics_resource_map_mipmapped_array(
        resource: *mut cucore_graphics_resource_t,
        stream: *mut cucore_stream_t,
        hint: u32,
        array: *mut *mut cucore_graphics_array_t,
    ) -> cucore_status_t;
    pub fn cucore_graphics_resource_unmap(
        resource: *mut cucore_graphics_resource_t,
        stream: *mut cucore_stream_t,
    ) -> cucore_status_t;
    pub fn cucore_graphics_resource_is_mapped(
        resource: *const cucore_graphics_resource_t,
        is_mapped: *mut c_int,
    ) -> cucore_status_t;
    pub fn cucore_graphics_resource_close(
        resource: *mut cucore_graphics_resource_t,
        stream: *mut cucore_stream_t,
    ) -> cucore_status_t;
    pub fn cucore_graphics_resource_handle(
        resource: *const cucore_graphics_resource_t,
        cu_graphics_resource: *mut *mut c_void,
    ) -> cucore_status_t;

    // Mapped arrays.
    pub fn cucore_graphics_array_retain(array: *mut cucore_graphics_array_t) -> cucore_status_t;
    pub fn cucore_graphics_array_release(array: *mut cucore_graphics_array_t) -> cucore_status_t;
    pub fn cucore_graphics_array_handle(
        array: *const cucore_graphics_array_t,
        cu_array: *mut *mut c_void,
    ) -> cucore_status_t;
    pub fn cucore_graphics_array_level(
        array: *mut cucore_graphics_array_t,
        level: u32,
        level_array: *mut *mut cucore_graphics_array_t,
    ) -> cucore_status_t;
    pub fn cucore_graphics_array_info(
        array: *const cucore_graphics_array_t,
        info: *mut cucore_graphics_array_info_t,
    ) -> cucore_status_t;
    pub fn cucore_graphics_array_copy_from_host(
        array: *mut cucore_graphics_array_t,
        src: *const c_void,
        size: u64,
        stream: *mut cucore_stream_t,
    ) -> cucore_status_t;
    pub fn cucore_graphics_array_copy_to_host(
        array: *mut cucore_graphics_array_t,
        dst: *mut c_void,
        size: u64,
        stream: *mut cucore_stream_t,
    ) -> cucore_status_t;
    pub fn cucore_graphics_array_copy_from_buffer(
        array: *mut cucore_graphics_array_t,
        buffer: *mut cucore_buffer_t,
        stream: *mut cucore_stream_t,
    ) -> cucore_status_t;
    pub fn cucore_graphics_array_copy_to_buffer(
        array: *mut cucore_graphics_array_t,
        buffer: *mut cucore_buffer_t,
        stream: *mut cucore_stream_t,
    ) -> cucore_status_t;

    // GL devices.
    pub fn cucore_gl_get_devices(
        device_list: u32,
        ordinals: *mut c_int,
        capacity: u32,
        count: *mut u32,
    ) -> cucore_status_t;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::*;
    use std::ffi::CStr;
    use std::mem::{align_of, size_of, MaybeUninit};
    use std::ptr;

    fn cstr(p: *const std::os::raw::c_char) -> String {
        assert!(!p.is_null());
        // SAFETY: the library's strings are NUL-terminated and live during the call.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    #[test]
    fn layout_graphics_array_info() {
        assert_eq!(size_of::<cucore_graphics_array_info_t>(), 48);
        assert_eq!(align_of::<cucore_graphics_array_info_t>(), 8);
        let u = MaybeUninit::<cucore_graphics_array_info_t>::uninit();
        let base = u.as_ptr();
        // SAFETY: addresses inside the allocation only; nothing is read.
        let offsets = unsafe {
            [
                ptr::addr_of!((*base).format) as usize,
                ptr::addr_of!((*base).channels) as usize,
                ptr::addr_of!((*base).element_size) as usize,
                ptr::addr_of!((*base).width) as usize,
                ptr::addr_of!((*base).height) as usize,
                ptr::addr_of!((*base).depth) as usize,
                ptr::addr_of!((*base).is_mipmapped) as usize,
                ptr::addr_of!((*base).reserved) as usize,
            ]
        };
        let offsets: Vec<usize> = offsets.iter().map(|a| a - base as usize).collect();
        assert_eq!(offsets, [4, 8, 12, 16, 24, 32, 40, 44]);
        assert_eq!(cucore_graphics_array_info_t::INIT.struct_size, 48);
    }

    #[test]
    fn graphics_enums_are_c_sized() {
        assert_eq!(size_of::<cucore_graphics_register_flag_t>(), 4);
        assert_eq!(size_of::<cucore_graphics_map_hint_t>(), 4);
        assert_eq!(size_of::<cucore_gl_device_list_t>(), 4);
        assert_eq!(CUCORE_OBJECT_GRAPHICS_RESOURCE, 12);
        assert_eq!(CUCORE_OBJECT_GRAPHICS_ARRAY, 13);
        assert_eq!(CUCORE_OBJECT_TYPE_COUNT, 14);
    }

    #[test]
    fn null_graphics_handles() {
        unsafe {
            assert_eq!(cucore_graphics_resource_release(ptr::null_mut()), CUCORE_SUCCESS);
            assert_eq!(cucore_graphics_array_release(ptr::null_mut()), CUCORE_SUCCESS);
            assert_eq!(cucore_graphics_resource_retain(ptr::null_mut()), CUCORE_ERROR_INVALID_HANDLE);
            assert_eq!(cucore_graphics_array_retain(ptr::null_mut()), CUCORE_ERROR_INVALID_HANDLE);
            let mut mapped: c_int = 7;
            assert_eq!(cucore_graphics_resource_is_mapped(ptr::null(), &mut mapped), CUCORE_ERROR_INVALID_HANDLE);
            let mut res: *mut cucore_graphics_resource_t = 1 as *mut _;
            assert_eq!(
                cucore_graphics_resource_from_gl_buffer(ptr::null_mut(), 1, 0, &mut res),
                CUCORE_ERROR_INVALID_HANDLE
            );
            assert!(res.is_null(), "out-pointers are NULL on failure");
            // The batch unmap checks its array before anything else: NULL, a count of 0, and
            // NULL or garbage elements (named by index).
            assert_eq!(cucore_graphics_resources_unmap(ptr::null(), 1, ptr::null_mut()), CUCORE_ERROR_INVALID_ARGUMENT);
            assert!(cstr(cucore_last_error_message()).contains("resources"));
            assert_eq!(cucore_graphics_resources_unmap(ptr::null(), 0, ptr::null_mut()), CUCORE_ERROR_INVALID_ARGUMENT);
            let none: [*mut cucore_graphics_resource_t; 2] = [ptr::null_mut(), ptr::null_mut()];
            assert_eq!(
                cucore_graphics_resources_unmap(none.as_ptr(), 0, ptr::null_mut()),
                CUCORE_ERROR_INVALID_ARGUMENT,
                "a count of 0"
            );
            assert_eq!(cucore_graphics_resources_unmap(none.as_ptr(), 2, ptr::null_mut()), CUCORE_ERROR_INVALID_HANDLE);
            assert!(cstr(cucore_last_error_message()).contains("resources[0]"), "names the element");
            let mut junk = [0xdead_beef_dead_beef_u64; 8];
            let garbage: [*mut cucore_graphics_resource_t; 1] = [junk.as_mut_ptr() as *mut _];
            assert_eq!(
                cucore_graphics_resources_unmap(garbage.as_ptr(), 1, ptr::null_mut()),
                CUCORE_ERROR_INVALID_HANDLE
            );
            assert!(cstr(cucore_last_error_message()).contains("resources[0]"), "names the element");
            let mut count: u32 = 0;
            assert_eq!(
                cucore_gl_get_devices(CUCORE_GL_DEVICES_ALL as u32, ptr::null_mut(), 1, &mut count),
                CUCORE_ERROR_INVALID_ARGUMENT
            );
            assert_eq!(
                cucore_gl_get_devices(CUCORE_GL_DEVICES_ALL as u32, ptr::null_mut(), 0, ptr::null_mut()),
                CUCORE_ERROR_INVALID_ARGUMENT
            );
        }
    }
}
