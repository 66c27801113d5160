//! The declarations of `include/cucore/linker.h`: linking device code with nvJitLink or the
//! driver's cuLink*. The layout of the options struct is checked by the tests below against
//! gcc's offsets.

use std::os::raw::c_char;
use std::ptr;

use crate::{
    cucore_code_type_t, cucore_compiler_backend_t, cucore_linker_t, cucore_object_code_t, cucore_status_t,
    cucore_toggle_t,
};

/// `CUCORE_OPTIMIZATION_LEVEL(n)`: the value of `optimization_level` that asks for `-On`
/// (n in 0..3; 0 in the field keeps the default, 3).
#[allow(non_snake_case)]
pub const fn CUCORE_OPTIMIZATION_LEVEL(n: u32) -> u32 {
    n + 1
}

/// `cucore_linker_options_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cucore_linker_options_t {
    pub struct_size: u32,
    pub name: *const c_char,
    pub arch: *const c_char,
    pub backend: cucore_compiler_backend_t,
    pub max_register_count: u32,
    pub optimization_level: u32,
    pub debug: u32,
    pub lineinfo: u32,
    pub link_time_optimization: u32,
    pub ftz: cucore_toggle_t,
    pub prec_div: cucore_toggle_t,
    pub prec_sqrt: cucore_toggle_t,
    pub fma: cucore_toggle_t,
    pub verbose: u32,
    pub ptxas_options: *const *const c_char,
    pub ptxas_option_count: usize,
    pub extra_options: *const *const c_char,
    pub extra_option_count: usize,
}

impl cucore_linker_options_t {
    /// `CUCORE_LINKER_OPTIONS_INIT`.
    pub const INIT: cucore_linker_options_t = cucore_linker_options_t {
        struct_size: std::mem::size_of::<cucore_linker_options_t>() as u32,
        name: ptr::null(),
        arch: ptr::null(),
        backend: crate::CUCORE_BACKEND_DEFAULT,
        max_register_count: 0,
        optimization_level: 0,
        debug: 0,
        lineinfo: 0,
        link_time_optimization: 0,
        ftz: crate::CUCORE_TOGGLE_DEFAULT,
        prec_div: crate::CUCORE_TOGGLE_DEFAULT,
        prec_sqrt: crate::CUCORE_TOGGLE_DEFAULT,
        fma: crate::CUCORE_TOGGLE_DEFAULT,
        verbose: 0,
        ptxas_options: ptr::null(),
        ptxas_option_count: 0,
        extra_options: ptr::null(),
        extra_option_count: 0,
    };
}

impl Default for cucore_linker_options_t {
    fn default() -> Self {
        Self::INIT
    }
}

extern "C" {
    pub fn cucore_linker_create(
        inputs: *const *mut cucore_object_code_t,
        input_count: usize,
        options: *const cucore_linker_options_t,
        linker: *mut *mut cucore_linker_t,
    ) -> cucore_status_t;
    pub fn cucore_linker_retain(linker: *mut cucore_linker_t) -> cucore_status_t;
    pub fn cucore_linker_release(linker: *mut cucore_linker_t) -> cucore_status_t;
    pub fn cucore_linker_link(
        linker: *mut cucore_linker_t,
        target: cucore_code_type_t,
        object_code: *mut *mut cucore_object_code_t,
    ) -> cucore_status_t;
    pub fn cucore_linker_error_log(
        linker: *const cucore_linker_t,
        buffer: *mut c_char,
        capacity: usize,
        length: *mut usize,
    ) -> cucore_status_t;
    pub fn cucore_linker_info_log(
        linker: *const cucore_linker_t,
        buffer: *mut c_char,
        capacity: usize,
        length: *mut usize,
    ) -> cucore_status_t;
    pub fn cucore_linker_backend(
        linker: *const cucore_linker_t,
        backend: *mut cucore_compiler_backend_t,
    ) -> cucore_status_t;
    pub fn cucore_linker_default_backend(backend: *mut cucore_compiler_backend_t) -> cucore_status_t;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, size_of};



    // Offsets as gcc lays out include/cucore/linker.h on 64-bit targets.
    #[test]
    fn layout_linker_options() {
        assert_eq!(size_of::<cucore_linker_options_t>(), 104);
        assert_eq!(align_of::<cucore_linker_options_t>(), 8);
        assert_eq!(offset!(cucore_linker_options_t, name), 8);
        assert_eq!(offset!(cucore_linker_options_t, arch), 16);
        assert_eq!(offset!(cucore_linker_options_t, backend), 24);
        assert_eq!(offset!(cucore_linker_options_t, max_register_count), 28);
        assert_eq!(offset!(cucore_linker_options_t, fma), 60);
        assert_eq!(offset!(cucore_linker_options_t, verbose), 64);
        assert_eq!(offset!(cucore_linker_options_t, ptxas_options), 72);
        assert_eq!(offset!(cucore_linker_options_t, ptxas_option_count), 80);
        assert_eq!(offset!(cucore_linker_options_t, extra_options), 88);
        assert_eq!(offset!(cucore_linker_options_t, extra_option_count), 96);
        assert_eq!(cucore_linker_options_t::INIT.struct_size, 104);
        assert_eq!(CUCORE_OPTIMIZATION_LEVEL(0), 1);
        assert_eq!(CUCORE_OPTIMIZATION_LEVEL(3), 4);
    }
}
