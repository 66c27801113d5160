//! Calls into libcucore through the raw declarations: what the library answers for bad handles and
//! arguments, and header values the safe crate relies on. (Layouts are tested by the generated
//! src/layout_tests.rs.) Needs no GPU: every call here fails before reaching the driver, or needs none.

use cucore_sys::*;
use std::ffi::CStr;
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
