//! The declarations of `include/cucore/program.h`: programs (run-time compilation with NVRTC,
//! libNVVM or the linker), their options, code types and compiler backends. The layout of the
//! options struct is checked by the tests below against gcc's offsets.

use std::os::raw::{c_char, c_int, c_void};
use std::ptr;

use crate::{cucore_object_code_t, cucore_program_cache_t, cucore_program_t, cucore_status_t, cucore_toggle_t};

/// `cucore_code_type_t` (a 32-bit C enum): what code is.
pub type cucore_code_type_t = c_int;
pub const CUCORE_CODE_UNSET: cucore_code_type_t = 0;
/// CUDA C++ source (program input; NVRTC).
pub const CUCORE_CODE_CXX: cucore_code_type_t = 1;
/// PTX text (program input through the linker; target; object code).
pub const CUCORE_CODE_PTX: cucore_code_type_t = 2;
/// NVVM IR, text or bitcode (program input; libNVVM).
pub const CUCORE_CODE_NVVM: cucore_code_type_t = 3;
/// Device binary (target; object code).
pub const CUCORE_CODE_CUBIN: cucore_code_type_t = 4;
/// Link-time-optimisation IR (target; object code, linker input).
pub const CUCORE_CODE_LTOIR: cucore_code_type_t = 5;
/// Fat binary (object code, linker input).
pub const CUCORE_CODE_FATBIN: cucore_code_type_t = 6;
/// Relocatable host object with device code (linker input only).
pub const CUCORE_CODE_OBJECT: cucore_code_type_t = 7;
/// Archive of such objects (linker input only).
pub const CUCORE_CODE_LIBRARY: cucore_code_type_t = 8;
pub const CUCORE_CODE_TYPE_FORCE_INT32: cucore_code_type_t = 0x7fff_ffff;

/// `cucore_compiler_backend_t` (a 32-bit C enum): which tool compiles or links.
pub type cucore_compiler_backend_t = c_int;
pub const CUCORE_BACKEND_DEFAULT: cucore_compiler_backend_t = 0;
pub const CUCORE_BACKEND_NVRTC: cucore_compiler_backend_t = 1;
pub const CUCORE_BACKEND_NVVM: cucore_compiler_backend_t = 2;
pub const CUCORE_BACKEND_NVJITLINK: cucore_compiler_backend_t = 3;
pub const CUCORE_BACKEND_DRIVER: cucore_compiler_backend_t = 4;
pub const CUCORE_BACKEND_FORCE_INT32: cucore_compiler_backend_t = 0x7fff_ffff;

/// `cucore_program_options_t`. String arrays are (pointer, count) pairs; every string is
/// copied by `cucore_program_create`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cucore_program_options_t {
    pub struct_size: u32,
    pub name: *const c_char,
    pub arch: *const c_char,
    pub std: *const c_char,
    pub defines: *const *const c_char,
    pub define_count: usize,
    pub undefines: *const *const c_char,
    pub undefine_count: usize,
    pub include_paths: *const *const c_char,
    pub include_path_count: usize,
    pub pre_includes: *const *const c_char,
    pub pre_include_count: usize,
    pub header_names: *const *const c_char,
    pub header_sources: *const *const c_char,
    pub header_count: usize,
    pub debug: u32,
    pub lineinfo: u32,
    pub device_code_optimize: cucore_toggle_t,
    pub use_fast_math: u32,
    pub ftz: cucore_toggle_t,
    pub prec_sqrt: cucore_toggle_t,
    pub prec_div: cucore_toggle_t,
    pub fma: cucore_toggle_t,
    pub extra_device_vectorization: u32,
    pub max_register_count: u32,
    pub relocatable_device_code: u32,
    pub extensible_whole_program: u32,
    pub link_time_optimization: u32,
    pub device_as_default_execution_space: u32,
    pub disable_warnings: u32,
    pub brief_diagnostics: u32,
    pub no_display_error_number: u32,
    pub diag_error: *const u32,
    pub diag_error_count: usize,
    pub diag_suppress: *const u32,
    pub diag_suppress_count: usize,
    pub diag_warn: *const u32,
    pub diag_warn_count: usize,
    pub pch: u32,
    pub create_pch: *const c_char,
    pub use_pch: *const c_char,
    pub pch_dir: *const c_char,
    pub ptxas_options: *const *const c_char,
    pub ptxas_option_count: usize,
    pub extra_options: *const *const c_char,
    pub extra_option_count: usize,
}

impl cucore_program_options_t {
    /// `CUCORE_PROGRAM_OPTIONS_INIT`.
    pub const INIT: cucore_program_options_t = cucore_program_options_t {
        struct_size: std::mem::size_of::<cucore_program_options_t>() as u32,
        name: ptr::null(),
        arch: ptr::null(),
        std: ptr::null(),
        defines: ptr::null(),
        define_count: 0,
        undefines: ptr::null(),
        undefine_count: 0,
        include_paths: ptr::null(),
        include_path_count: 0,
        pre_includes: ptr::null(),
        pre_include_count: 0,
        header_names: ptr::null(),
        header_sources: ptr::null(),
        header_count: 0,
        debug: 0,
        lineinfo: 0,
        device_code_optimize: crate::CUCORE_TOGGLE_DEFAULT,
        use_fast_math: 0,
        ftz: crate::CUCORE_TOGGLE_DEFAULT,
        prec_sqrt: crate::CUCORE_TOGGLE_DEFAULT,
        prec_div: crate::CUCORE_TOGGLE_DEFAULT,
        fma: crate::CUCORE_TOGGLE_DEFAULT,
        extra_device_vectorization: 0,
        max_register_count: 0,
        relocatable_device_code: 0,
        extensible_whole_program: 0,
        link_time_optimization: 0,
        device_as_default_execution_space: 0,
        disable_warnings: 0,
        brief_diagnostics: 0,
        no_display_error_number: 0,
        diag_error: ptr::null(),
        diag_error_count: 0,
        diag_suppress: ptr::null(),
        diag_suppress_count: 0,
        diag_warn: ptr::null(),
        diag_warn_count: 0,
        pch: 0,
        create_pch: ptr::null(),
        use_pch: ptr::null(),
        pch_dir: ptr::null(),
        ptxas_options: ptr::null(),
        ptxas_option_count: 0,
        extra_options: ptr::null(),
        extra_option_count: 0,
    };
}

impl Default for cucore_program_options_t {
    fn default() -> Self {
        Self::INIT
    }
}

extern "C" {
    pub fn cucore_program_create(
        code: *const c_void,
        code_size: usize,
        code_type: cucore_code_type_t,
        options: *const cucore_program_options_t,
        program: *mut *mut cucore_program_t,
    ) -> cucore_status_t;
    pub fn cucore_program_retain(program: *mut cucore_program_t) -> cucore_status_t;
    pub fn cucore_program_release(program: *mut cucore_program_t) -> cucore_status_t;
    pub fn cucore_program_compile(
        program: *mut cucore_program_t,
        target: cucore_code_type_t,
        name_expressions: *const *const c_char,
        name_expression_count: usize,
        cache: *mut cucore_program_cache_t,
        object_code: *mut *mut cucore_object_code_t,
    ) -> cucore_status_t;
    pub fn cucore_program_log(
        program: *const cucore_program_t,
        buffer: *mut c_char,
        capacity: usize,
        length: *mut usize,
    ) -> cucore_status_t;
    pub fn cucore_program_code_type(
        program: *const cucore_program_t,
        code_type: *mut cucore_code_type_t,
    ) -> cucore_status_t;
    pub fn cucore_program_backend(
        program: *const cucore_program_t,
        backend: *mut cucore_compiler_backend_t,
    ) -> cucore_status_t;
    pub fn cucore_program_arch(program: *const cucore_program_t, arch: *mut *const c_char) -> cucore_status_t;
    pub fn cucore_program_flags(
        program: *const cucore_program_t,
        buffer: *mut c_char,
        capacity: usize,
        length: *mut usize,
    ) -> cucore_status_t;
    pub fn cucore_compiler_version(backend: cucore_compiler_backend_t, version: *mut c_int) -> cucore_status_t;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, size_of};



    // Offsets as gcc lays out include/cucore/program.h on 64-bit targets.
    #[test]
    fn layout_program_options() {
        assert_eq!(size_of::<cucore_program_options_t>(), 304);
        assert_eq!(align_of::<cucore_program_options_t>(), 8);
        assert_eq!(offset!(cucore_program_options_t, name), 8);
        assert_eq!(offset!(cucore_program_options_t, arch), 16);
        assert_eq!(offset!(cucore_program_options_t, std), 24);
        assert_eq!(offset!(cucore_program_options_t, defines), 32);
        assert_eq!(offset!(cucore_program_options_t, define_count), 40);
        assert_eq!(offset!(cucore_program_options_t, header_names), 96);
        assert_eq!(offset!(cucore_program_options_t, header_sources), 104);
        assert_eq!(offset!(cucore_program_options_t, header_count), 112);
        assert_eq!(offset!(cucore_program_options_t, debug), 120);
        assert_eq!(offset!(cucore_program_options_t, lineinfo), 124);
        assert_eq!(offset!(cucore_program_options_t, device_code_optimize), 128);
        assert_eq!(offset!(cucore_program_options_t, no_display_error_number), 184);
        assert_eq!(offset!(cucore_program_options_t, diag_error), 192);
        assert_eq!(offset!(cucore_program_options_t, diag_warn_count), 232);
        assert_eq!(offset!(cucore_program_options_t, pch), 240);
        assert_eq!(offset!(cucore_program_options_t, create_pch), 248);
        assert_eq!(offset!(cucore_program_options_t, pch_dir), 264);
        assert_eq!(offset!(cucore_program_options_t, ptxas_options), 272);
        assert_eq!(offset!(cucore_program_options_t, extra_options), 288);
        assert_eq!(offset!(cucore_program_options_t, extra_option_count), 296);
        assert_eq!(cucore_program_options_t::INIT.struct_size, 304);
        assert_eq!(size_of::<cucore_code_type_t>(), 4);
        assert_eq!(size_of::<cucore_compiler_backend_t>(), 4);
    }
}
