//! Calls into libcucore through the raw declarations: what the library answers for bad handles and
//! arguments, and header values the safe crate relies on. (Layouts are tested by the generated
//! src/layout_tests.rs.) Needs no GPU: every call here fails before reaching the driver, or needs none.

use cucore_sys::*;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int};
use std::ptr;

fn cstr(p: *const c_char) -> String {
    assert!(!p.is_null());
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

#[test]
fn values_match_the_header() {
    assert_eq!((kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged), (1, 2, 3, 13));
    assert_eq!((kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLComplex, kDLBool), (0, 1, 2, 4, 5, 6));
    assert_eq!(DLPACK_FLAG_BITMASK_READ_ONLY, 1);
    assert_eq!(CUCORE_DLPACK_MAX_NDIM, 32);
}

/// `CUCORE_DLPACK_LAYOUT_INIT` (not all zeros): a 0-d tensor of one byte, compact, nothing borrowed.
#[test]
fn dlpack_layout_init_is_a_compact_scalar_of_bytes() {
    let init = cucore_dlpack_layout_t::INIT;
    assert_eq!(init.struct_size as usize, std::mem::size_of::<cucore_dlpack_layout_t>());
    assert_eq!((init.read_only, init.ndim, init.byte_offset), (0, 0, 0));
    assert_eq!((init.dtype.code as u32, init.dtype.bits, init.dtype.lanes), (kDLUInt as u32, 8, 1));
    assert!(init.shape.is_null() && init.strides.is_null());
    assert_eq!(cucore_dlpack_layout_t::default(), init);
}

#[test]
fn graphics_and_array_object_types_match_the_header() {
    assert_eq!(CUCORE_OBJECT_GRAPHICS_RESOURCE, 12);
    assert_eq!((CUCORE_OBJECT_OPAQUE_ARRAY, CUCORE_OBJECT_MIPMAPPED_ARRAY), (13, 14));
    assert_eq!((CUCORE_OBJECT_TEXTURE_OBJECT, CUCORE_OBJECT_SURFACE_OBJECT), (15, 16));
    assert_eq!((CUCORE_OBJECT_GRAPH_DEFINITION, CUCORE_OBJECT_GRAPH_NODE), (17, 18));
    assert_eq!((CUCORE_OBJECT_GRAPH, CUCORE_OBJECT_GRAPH_BUILDER), (19, 20));
    assert_eq!(CUCORE_OBJECT_COMMUNICATOR, 26);
    assert_eq!(CUCORE_OBJECT_TYPE_COUNT, 27);
}

#[test]
fn null_graphics_handles() {
    unsafe {
        assert_eq!(cucore_graphics_resource_release(ptr::null_mut()), CUCORE_SUCCESS);
        assert_eq!(cucore_graphics_resource_retain(ptr::null_mut()), CUCORE_ERROR_INVALID_HANDLE);
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

#[test]
fn kernel_attributes_are_the_driver_values_plus_one() {
    assert_eq!(std::mem::size_of::<cucore_kernel_attribute_t>(), 4);
    // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8, CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 15.
    assert_eq!(CUCORE_KERNEL_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 8 + 1);
    assert_eq!(CUCORE_KERNEL_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, 15 + 1);
    assert_eq!(CUCORE_KERNEL_ATTRIBUTE_COUNT, 17);
}

#[test]
fn null_array_and_texture_handles() {
    unsafe {
        assert_eq!(cucore_opaque_array_release(ptr::null_mut()), CUCORE_SUCCESS);
        assert_eq!(cucore_mipmapped_array_release(ptr::null_mut()), CUCORE_SUCCESS);
        assert_eq!(cucore_texture_object_release(ptr::null_mut()), CUCORE_SUCCESS);
        assert_eq!(cucore_surface_object_release(ptr::null_mut()), CUCORE_SUCCESS);
        assert_eq!(cucore_opaque_array_retain(ptr::null_mut()), CUCORE_ERROR_INVALID_HANDLE);
        assert_eq!(cucore_mipmapped_array_retain(ptr::null_mut()), CUCORE_ERROR_INVALID_HANDLE);
        assert_eq!(cucore_texture_object_retain(ptr::null_mut()), CUCORE_ERROR_INVALID_HANDLE);
        assert_eq!(cucore_surface_object_retain(ptr::null_mut()), CUCORE_ERROR_INVALID_HANDLE);
        let mut info = cucore_opaque_array_info_t::INIT;
        assert_eq!(cucore_opaque_array_info(ptr::null(), &mut info), CUCORE_ERROR_INVALID_HANDLE);
        let mut handle: u64 = 7;
        assert_eq!(cucore_texture_object_handle(ptr::null(), &mut handle), CUCORE_ERROR_INVALID_HANDLE);
        assert_eq!(cucore_surface_object_handle(ptr::null(), &mut handle), CUCORE_ERROR_INVALID_HANDLE);
        // One fault each: a NULL device; a NULL resource (the device may be NULL, as options).
        let mut options = cucore_opaque_array_options_t::INIT;
        options.format = CUCORE_ARRAY_FORMAT_FLOAT32;
        options.width = 16;
        let mut array: *mut cucore_opaque_array_t = 1 as *mut _;
        assert_eq!(cucore_opaque_array_create(ptr::null_mut(), &options, &mut array), CUCORE_ERROR_INVALID_HANDLE);
        assert!(array.is_null(), "out-pointers are NULL on failure");
        let mut texture: *mut cucore_texture_object_t = 1 as *mut _;
        assert_eq!(
            cucore_texture_object_create(ptr::null_mut(), ptr::null(), ptr::null(), &mut texture),
            CUCORE_ERROR_INVALID_ARGUMENT
        );
        assert!(texture.is_null(), "out-pointers are NULL on failure");
    }
}

#[test]
fn array_and_texture_inits_are_the_defaults() {
    let o = cucore_opaque_array_options_t::INIT;
    assert_eq!(o.struct_size as usize, std::mem::size_of::<cucore_opaque_array_options_t>());
    assert_eq!((o.format, o.num_channels, o.kind, o.flags), (CUCORE_ARRAY_FORMAT_UNSET, 0, CUCORE_ARRAY_KIND_PLAIN, 0));
    let c = cucore_opaque_array_copy_t::INIT;
    assert_eq!((c.width, c.height, c.depth), (0, 1, 1));
    assert!(c.src_array.array.is_null() && c.dst_array.array.is_null());
    let t = cucore_texture_object_options_t::INIT;
    assert_eq!(t.address_mode, [CUCORE_ADDRESS_MODE_CLAMP; 3]);
    assert_eq!((t.filter_mode, t.read_mode), (CUCORE_FILTER_MODE_POINT, CUCORE_READ_MODE_ELEMENT_TYPE));
    let r = cucore_resource_descriptor_t::INIT;
    assert_eq!(r.kind, CUCORE_RESOURCE_KIND_UNSET);
}
