//! The declarations of `include/cucore/object_code.h`: compiled device code (cubin, PTX, LTO-IR,
//! fatbin, objects, libraries), loaded through the driver's library API on first use.

use std::os::raw::{c_char, c_void};

use crate::{cucore_code_type_t, cucore_device_t, cucore_kernel_t, cucore_object_code_t, cucore_status_t};

extern "C" {
    pub fn cucore_object_code_create(
        data: *const c_void,
        size: usize,
        code_type: cucore_code_type_t,
        name: *const c_char,
        object_code: *mut *mut cucore_object_code_t,
    ) -> cucore_status_t;
    pub fn cucore_object_code_create_from_file(
        path: *const c_char,
        code_type: cucore_code_type_t,
        name: *const c_char,
        object_code: *mut *mut cucore_object_code_t,
    ) -> cucore_status_t;
    pub fn cucore_object_code_retain(object_code: *mut cucore_object_code_t) -> cucore_status_t;
    pub fn cucore_object_code_release(object_code: *mut cucore_object_code_t) -> cucore_status_t;
    pub fn cucore_object_code_load(object_code: *mut cucore_object_code_t) -> cucore_status_t;
    pub fn cucore_object_code_code_type(
        object_code: *const cucore_object_code_t,
        code_type: *mut cucore_code_type_t,
    ) -> cucore_status_t;
    pub fn cucore_object_code_data(
        object_code: *const cucore_object_code_t,
        data: *mut *const c_void,
        size: *mut usize,
    ) -> cucore_status_t;
    pub fn cucore_object_code_name(
        object_code: *const cucore_object_code_t,
        name: *mut *const c_char,
    ) -> cucore_status_t;
    pub fn cucore_object_code_name_expression_count(
        object_code: *const cucore_object_code_t,
        count: *mut usize,
    ) -> cucore_status_t;
    pub fn cucore_object_code_name_expression(
        object_code: *const cucore_object_code_t,
        index: usize,
        expression: *mut *const c_char,
        lowered_name: *mut *const c_char,
    ) -> cucore_status_t;
    pub fn cucore_object_code_get_kernel(
        object_code: *mut cucore_object_code_t,
        name: *const c_char,
        kernel: *mut *mut cucore_kernel_t,
    ) -> cucore_status_t;
    pub fn cucore_object_code_kernel_count(
        object_code: *mut cucore_object_code_t,
        count: *mut usize,
    ) -> cucore_status_t;
    pub fn cucore_object_code_get_global(
        object_code: *mut cucore_object_code_t,
        device: *mut cucore_device_t,
        name: *const c_char,
        address: *mut u64,
        size: *mut usize,
    ) -> cucore_status_t;
    pub fn cucore_object_code_read_global(
        object_code: *mut cucore_object_code_t,
        device: *mut cucore_device_t,
        name: *const c_char,
        dst: *mut c_void,
        size: usize,
    ) -> cucore_status_t;
    pub fn cucore_object_code_write_global(
        object_code: *mut cucore_object_code_t,
        device: *mut cucore_device_t,
        name: *const c_char,
        src: *const c_void,
        size: usize,
    ) -> cucore_status_t;
    pub fn cucore_object_code_handle(
        object_code: *mut cucore_object_code_t,
        cu_library: *mut *mut c_void,
    ) -> cucore_status_t;
}
