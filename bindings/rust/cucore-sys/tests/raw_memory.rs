//! Calls into libcucore through the raw declarations: what the library answers for bad handles and
//! arguments, and header values the safe crate relies on. (Layouts are tested by the generated
//! src/layout_tests.rs.) Needs no GPU: every call here fails before reaching the driver, or needs none.

use cucore_sys::*;
use std::ffi::CStr;
use std::mem::{size_of, MaybeUninit};
use std::os::raw::{c_char, c_int, c_void};
use std::ptr;

fn cstr(p: *const c_char) -> String {
    assert!(!p.is_null());
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// A pointer that is no handle at all: the address of a local filled with junk.
fn garbage<T>(junk: &mut [u64; 8]) -> *mut T {
    junk.as_mut_ptr() as *mut T
}

/// A `T` of zero bytes but its leading `struct_size` (the "zero means default" struct).
fn zeroed_but_size<T: Copy>() -> T {
    // SAFETY: every options struct is plain integers, for which all-zero bytes are valid; the
    // first field is the u32 struct_size.
    unsafe {
        let mut value = MaybeUninit::<T>::zeroed().assume_init();
        *(&mut value as *mut T as *mut u32) = size_of::<T>() as u32;
        value
    }
}

#[test]
fn memory_enum_values_match_header() {
    assert_eq!([CUCORE_LOCATION_NONE, CUCORE_LOCATION_DEVICE, CUCORE_LOCATION_HOST], [0, 1, 2]);
    assert_eq!([CUCORE_LOCATION_HOST_NUMA, CUCORE_LOCATION_HOST_NUMA_CURRENT], [3, 4]);
    assert_eq!([CUCORE_ACCESS_NONE, CUCORE_ACCESS_READ, CUCORE_ACCESS_READ_WRITE], [0, 1, 3]);
    assert_eq!(
        [
            CUCORE_ADVICE_UNSET,
            CUCORE_ADVICE_SET_READ_MOSTLY,
            CUCORE_ADVICE_UNSET_READ_MOSTLY,
            CUCORE_ADVICE_SET_PREFERRED_LOCATION,
            CUCORE_ADVICE_UNSET_PREFERRED_LOCATION,
            CUCORE_ADVICE_SET_ACCESSED_BY,
            CUCORE_ADVICE_UNSET_ACCESSED_BY,
        ],
        [0, 1, 2, 3, 4, 5, 6]
    );
    assert_eq!(
        [
            CUCORE_MEMORY_RESOURCE_PINNED,
            CUCORE_MEMORY_RESOURCE_MANAGED,
            CUCORE_MEMORY_RESOURCE_VIRTUAL,
            CUCORE_MEMORY_RESOURCE_USER,
            CUCORE_MEMORY_RESOURCE_IMPORTED,
            CUCORE_MEMORY_RESOURCE_GRAPHICS,
        ],
        [3, 4, 5, 6, 7, 8]
    );
}

#[test]
fn new_functions_reject_bad_handles_and_arguments() {
    let mut junk = [0xdead_beef_dead_beef_u64; 8];
    let garbage = junk.as_mut_ptr() as *mut c_void;
    unsafe {
        // A user resource without callbacks, or with a device_id below -1.
        let mut mr: *mut cucore_memory_resource_t = 1 as *mut _;
        let callbacks = cucore_memory_resource_callbacks_t::INIT;
        assert_eq!(cucore_user_memory_resource_create(&callbacks, &mut mr), CUCORE_ERROR_INVALID_ARGUMENT);
        assert!(mr.is_null(), "out-pointers are NULL on failure");
        assert_eq!(cucore_user_memory_resource_create(ptr::null(), &mut mr), CUCORE_ERROR_INVALID_ARGUMENT);
        let mut o = cucore_pinned_memory_resource_options_t::INIT;
        o.use_numa_id = 1;
        assert_eq!(cucore_pinned_memory_resource_create(ptr::null_mut(), &o, &mut mr), CUCORE_ERROR_INVALID_HANDLE);
        assert_eq!(
            cucore_managed_memory_resource_create(garbage as *mut _, ptr::null(), &mut mr),
            CUCORE_ERROR_INVALID_HANDLE
        );
        assert_eq!(
            cucore_virtual_memory_resource_create(garbage as *mut _, ptr::null(), &mut mr),
            CUCORE_ERROR_INVALID_HANDLE
        );
        assert!(mr.is_null());
        let mut access: cucore_access_t = 7;
        assert_eq!(
            cucore_memory_resource_peer_access(garbage as *mut _, garbage as *mut _, &mut access),
            CUCORE_ERROR_INVALID_HANDLE
        );
        assert_eq!(access, CUCORE_ACCESS_NONE);
        assert_eq!(
            cucore_memory_resource_set_peer_access(garbage as *mut _, garbage as *mut _, CUCORE_ACCESS_NONE),
            CUCORE_ERROR_INVALID_HANDLE
        );

        let b = garbage as *mut cucore_buffer_t;
        let (mut d, mut h, mut m): (c_int, c_int, c_int) = (7, 7, 7);
        assert_eq!(cucore_buffer_accessibility(b, &mut d, &mut h, &mut m), CUCORE_ERROR_INVALID_HANDLE);
        let mut s: *mut cucore_stream_t = 1 as *mut _;
        assert_eq!(cucore_buffer_deallocation_stream(b, &mut s), CUCORE_ERROR_INVALID_HANDLE);
        assert!(s.is_null());
        assert_eq!(cucore_buffer_grow(b, 4096), CUCORE_ERROR_INVALID_HANDLE);
        let here = cucore_location_t { type_: CUCORE_LOCATION_HOST, id: 0 };
        assert_eq!(cucore_buffer_advise(b, CUCORE_ADVICE_SET_READ_MOSTLY, here), CUCORE_ERROR_INVALID_HANDLE);
        let mut loc = cucore_location_t { type_: 9, id: 9 };
        assert_eq!(cucore_buffer_advice(b, &mut m, &mut loc), CUCORE_ERROR_INVALID_HANDLE);
        assert_eq!(cucore_buffer_is_accessed_by(b, here, &mut m), CUCORE_ERROR_INVALID_HANDLE);
        assert_eq!(cucore_buffer_last_prefetch_location(b, &mut loc), CUCORE_ERROR_INVALID_HANDLE);
        assert_eq!(cucore_buffer_prefetch(b, here, ptr::null_mut()), CUCORE_ERROR_INVALID_HANDLE);
        assert_eq!(cucore_buffer_discard(b, &here, ptr::null_mut()), CUCORE_ERROR_INVALID_HANDLE);
        assert_eq!(cucore_copy_3d(ptr::null(), ptr::null_mut()), CUCORE_ERROR_INVALID_ARGUMENT);
        let mut copy = cucore_copy_3d_t::INIT;
        copy.src.buffer = b;
        copy.dst.buffer = b;
        copy.width = 1;
        copy.src.pitch = 1;
        copy.dst.pitch = 1;
        assert_eq!(cucore_copy_3d(&copy, ptr::null_mut()), CUCORE_ERROR_INVALID_HANDLE);
    }
}

#[test]
fn memory_resource_enum_values_match_header() {
    assert_eq!(CUCORE_MEMORY_RESOURCE_UNSET, 0);
    assert_eq!(CUCORE_MEMORY_RESOURCE_DEVICE, 1);
    assert_eq!(CUCORE_MEMORY_RESOURCE_LEGACY_PINNED, 2);
    assert_eq!(CUCORE_OBJECT_MEMORY_RESOURCE, 5);
    assert_eq!(CUCORE_OBJECT_BUFFER, 6);
    assert_eq!(CUCORE_OBJECT_PROGRAM_CACHE, 11);
    assert_eq!(CUCORE_MEMORY_RESOURCE_GRAPH, 9);
    assert_eq!(CUCORE_OBJECT_TYPE_COUNT, 27);
    assert_eq!(size_of::<cucore_memory_resource_kind_t>(), 4);
}

#[test]
fn buffer_from_handle_validates_arguments() {
    unsafe {
        // NULL out-pointer.
        assert_eq!(
            cucore_buffer_from_handle(0x1000, 16, ptr::null_mut(), None, ptr::null_mut(), ptr::null_mut()),
            CUCORE_ERROR_INVALID_ARGUMENT
        );
        // Address 0 with a non-zero size.
        let mut buf: *mut cucore_buffer_t = 1 as *mut _;
        assert_eq!(
            cucore_buffer_from_handle(0, 16, ptr::null_mut(), None, ptr::null_mut(), &mut buf),
            CUCORE_ERROR_INVALID_ARGUMENT
        );
        assert!(buf.is_null());
        assert!(!cstr(cucore_last_error_message()).is_empty());
    }
}

#[test]
fn garbage_handles_are_invalid_handle() {
    let mut junk = [0xdead_beef_dead_beef_u64; 8];
    unsafe {
        assert_eq!(cucore_memory_resource_retain(garbage(&mut junk)), CUCORE_ERROR_INVALID_HANDLE);
        assert_eq!(cucore_memory_resource_release(garbage(&mut junk)), CUCORE_ERROR_INVALID_HANDLE);
        assert_eq!(cucore_buffer_retain(garbage(&mut junk)), CUCORE_ERROR_INVALID_HANDLE);
        assert_eq!(cucore_buffer_release(garbage(&mut junk)), CUCORE_ERROR_INVALID_HANDLE);
        let (mut dev_ok, mut host_ok): (c_int, c_int) = (7, 7);
        assert_eq!(
            cucore_memory_resource_accessibility(garbage(&mut junk), &mut dev_ok, &mut host_ok),
            CUCORE_ERROR_INVALID_HANDLE
        );
        assert_eq!((dev_ok, host_ok), (0, 0));
        let mut id: c_int = 7;
        assert_eq!(cucore_memory_resource_device_id(garbage(&mut junk), &mut id), CUCORE_ERROR_INVALID_HANDLE);
        assert_eq!(cucore_buffer_device_id(garbage(&mut junk), &mut id), CUCORE_ERROR_INVALID_HANDLE);
        let mut addr: u64 = 7;
        assert_eq!(cucore_buffer_address(garbage(&mut junk), &mut addr), CUCORE_ERROR_INVALID_HANDLE);
        assert_eq!(addr, 0);
        let mut mr: *mut cucore_memory_resource_t = 1 as *mut _;
        assert_eq!(cucore_buffer_memory_resource(garbage(&mut junk), &mut mr), CUCORE_ERROR_INVALID_HANDLE);
        assert!(mr.is_null());
        let mut view: *mut cucore_buffer_t = 1 as *mut _;
        assert_eq!(cucore_buffer_view(garbage(&mut junk), 0, 0, &mut view), CUCORE_ERROR_INVALID_HANDLE);
        assert!(view.is_null());
        assert_eq!(cucore_buffer_close(garbage(&mut junk), ptr::null_mut()), CUCORE_ERROR_INVALID_HANDLE);
        let bytes = [0u8; 4];
        assert_eq!(
            cucore_buffer_copy_from_host(
                garbage(&mut junk),
                0,
                bytes.as_ptr() as *const c_void,
                4,
                garbage(&mut junk)
            ),
            CUCORE_ERROR_INVALID_HANDLE
        );
        assert!(!cstr(cucore_last_error_message()).is_empty());
    }
}

/// The design's rule for options structs: zero in every field but `struct_size` is the default,
/// exactly as the `_INIT` macro (which `Default` gives).
#[test]
fn options_structs_zero_is_default() {
    macro_rules! zero_is_default {
        ($($t:ty),* $(,)?) => {$(
            assert_eq!(<$t>::INIT, zeroed_but_size::<$t>(), "{}: INIT is zero but struct_size", stringify!($t));
            assert_eq!(<$t>::default(), <$t>::INIT, "{}: Default is INIT", stringify!($t));
        )*};
    }
    zero_is_default!(
        cucore_stream_options_t,
        cucore_event_options_t,
        cucore_device_memory_resource_options_t,
        cucore_pinned_memory_resource_options_t,
        cucore_managed_memory_resource_options_t,
        cucore_virtual_memory_resource_options_t,
        cucore_program_options_t,
        cucore_linker_options_t,
        cucore_program_cache_stats_t,
        cucore_opaque_array_options_t,
        cucore_opaque_array_info_t,
        cucore_resource_descriptor_t,
        cucore_texture_object_options_t,
        cucore_device_properties_t,
    );
}

/// The structs whose `_INIT` is not all zeros: a copy of one row of one slice (`CUCORE_COPY_3D_INIT`),
/// with both regions `CUCORE_MEMORY_REGION_INIT` (nothing named, every number 0).
#[test]
fn copy_3d_init_is_one_row_of_one_slice() {
    let init = cucore_copy_3d_t::INIT;
    assert_eq!(init.struct_size as usize, size_of::<cucore_copy_3d_t>());
    assert_eq!((init.reserved0, init.width, init.rows, init.depth), (0, 0, 1, 1));
    assert_eq!((init.src, init.dst), (cucore_memory_region_t::INIT, cucore_memory_region_t::INIT));
    let region = cucore_memory_region_t::INIT;
    assert!(region.buffer.is_null() && region.host.is_null());
    assert_eq!([region.offset, region.pitch, region.height, region.x, region.y, region.z], [0; 6]);
    assert_eq!(cucore_copy_3d_t::default(), init);
    assert_eq!(cucore_memory_region_t::default(), region);
}
