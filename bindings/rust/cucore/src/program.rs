//! What `include/cucore/program.h` holds: programs, compiled at run time by NVRTC (CUDA C++),
//! libNVVM (NVVM IR) or the linker (PTX) (cuda.core's `Program` and `ProgramOptions`).
//!
//! ```no_run
//! use cucore::{CodeType, Program, ProgramCache, ProgramOptions};
//!
//! # fn main() -> cucore::Result<()> {
//! let source = r#"
//!     template <typename T>
//!     __global__ void scale(T *x, T a, unsigned n) {
//!         unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
//!         if (i < n) x[i] *= a;
//!     }"#;
//! let options = ProgramOptions::default().arch("sm_90").std("c++17").define_value("N", "4");
//! let program = Program::create(source, CodeType::Cxx, &options)?;
//! let cache = ProgramCache::in_memory(0)?;
//! let code = program.compile(CodeType::Cubin, &["scale<float>"], Some(&cache))?;
//! let kernel = code.get_kernel("scale<float>")?;    // by name expression
//! # Ok(())
//! # }
//! ```
//!
//! NVRTC, libNVVM and nvJitLink are loaded at run time: where one is missing, the calls that
//! need it fail with `Status::NotSupported`. A compile the compiler rejects fails with
//! `Status::Compilation`, whose message carries the first lines of the log; [`Program::log`]
//! gives all of it.

use std::fmt;
use std::os::raw::{c_char, c_int, c_void};
use std::ptr::{self, NonNull};

use cucore_sys as sys;

use crate::common::{c_string, check, owned_str, read_text, CStringArray, Result};
use crate::object_code::ObjectCode;
use crate::program_cache::ProgramCache;

/// What code is: a program's input, the target of a compile or link, or an object code's
/// contents (`cucore_code_type_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CodeType {
    /// CUDA C++ source (a program's input; NVRTC). cuda.core's `"c++"`.
    Cxx,
    /// PTX text (a program's input through the linker; a target; an object code).
    Ptx,
    /// NVVM IR, text or bitcode (a program's input; libNVVM).
    Nvvm,
    /// A device binary (a target; an object code).
    Cubin,
    /// Link-time-optimisation IR (a target; an object code the linker takes).
    LtoIr,
    /// A fat binary (an object code; linker input).
    Fatbin,
    /// A relocatable host object with device code (linker input only).
    Object,
    /// An archive of such objects (linker input only).
    Library,
    /// A value this binding does not know (a newer library), or `CUCORE_CODE_UNSET`.
    Unknown(i32),
}

impl CodeType {
    /// The raw `cucore_code_type_t`.
    pub fn raw(self) -> sys::cucore_code_type_t {
        match self {
            CodeType::Cxx => sys::CUCORE_CODE_CXX,
            CodeType::Ptx => sys::CUCORE_CODE_PTX,
            CodeType::Nvvm => sys::CUCORE_CODE_NVVM,
            CodeType::Cubin => sys::CUCORE_CODE_CUBIN,
            CodeType::LtoIr => sys::CUCORE_CODE_LTOIR,
            CodeType::Fatbin => sys::CUCORE_CODE_FATBIN,
            CodeType::Object => sys::CUCORE_CODE_OBJECT,
            CodeType::Library => sys::CUCORE_CODE_LIBRARY,
            CodeType::Unknown(raw) => raw,
        }
    }

    /// The code type of a raw `cucore_code_type_t`.
    pub fn from_raw(raw: sys::cucore_code_type_t) -> CodeType {
        match raw {
            sys::CUCORE_CODE_CXX => CodeType::Cxx,
            sys::CUCORE_CODE_PTX => CodeType::Ptx,
            sys::CUCORE_CODE_NVVM => CodeType::Nvvm,
            sys::CUCORE_CODE_CUBIN => CodeType::Cubin,
            sys::CUCORE_CODE_LTOIR => CodeType::LtoIr,
            sys::CUCORE_CODE_FATBIN => CodeType::Fatbin,
            sys::CUCORE_CODE_OBJECT => CodeType::Object,
            sys::CUCORE_CODE_LIBRARY => CodeType::Library,
            other => CodeType::Unknown(other),
        }
    }

    /// cuda.core's name of the code type: `"c++"`, `"ptx"`, `"nvvm"`, `"cubin"`, `"ltoir"`,
    /// `"fatbin"`, `"object"`, `"library"` (`"unknown"` otherwise).
    pub fn name(self) -> &'static str {
        match self {
            CodeType::Cxx => "c++",
            CodeType::Ptx => "ptx",
            CodeType::Nvvm => "nvvm",
            CodeType::Cubin => "cubin",
            CodeType::LtoIr => "ltoir",
            CodeType::Fatbin => "fatbin",
            CodeType::Object => "object",
            CodeType::Library => "library",
            CodeType::Unknown(_) => "unknown",
        }
    }

    /// The code type of one of cuda.core's names (case-insensitive; `"cxx"` and `"cu"` are
    /// accepted for C++), or None.
    pub fn from_name(name: &str) -> Option<CodeType> {
        let all = [
            CodeType::Cxx,
            CodeType::Ptx,
            CodeType::Nvvm,
            CodeType::Cubin,
            CodeType::LtoIr,
            CodeType::Fatbin,
            CodeType::Object,
            CodeType::Library,
        ];
        let lower = name.to_ascii_lowercase();
        if lower == "cxx" || lower == "cu" {
            return Some(CodeType::Cxx);
        }
        all.iter().copied().find(|t| t.name() == lower)
    }
}

impl fmt::Display for CodeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What became of a precompiled header (`cucore_pch_status_t`; cuda.core's `PCHStatusType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PchStatus {
    /// The PCH was written.
    Created,
    /// NVRTC chose not to create one.
    NotAttempted,
    /// An error prevented it.
    Failed,
}

/// The tool that compiles or links (`cucore_compiler_backend_t`; cuda.core's
/// `CompilerBackendType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompilerBackend {
    /// NVRTC (CUDA C++).
    Nvrtc,
    /// libNVVM (NVVM IR).
    Nvvm,
    /// The nvJitLink library.
    NvJitLink,
    /// The driver's `cuLink*` (where nvJitLink is absent; it cannot link LTO-IR).
    Driver,
    /// A value this binding does not know, or `CUCORE_BACKEND_DEFAULT`.
    Unknown(i32),
}

impl CompilerBackend {
    /// The raw `cucore_compiler_backend_t`.
    pub fn raw(self) -> sys::cucore_compiler_backend_t {
        match self {
            CompilerBackend::Nvrtc => sys::CUCORE_BACKEND_NVRTC,
            CompilerBackend::Nvvm => sys::CUCORE_BACKEND_NVVM,
            CompilerBackend::NvJitLink => sys::CUCORE_BACKEND_NVJITLINK,
            CompilerBackend::Driver => sys::CUCORE_BACKEND_DRIVER,
            CompilerBackend::Unknown(raw) => raw,
        }
    }

    /// The backend of a raw `cucore_compiler_backend_t`.
    pub fn from_raw(raw: sys::cucore_compiler_backend_t) -> CompilerBackend {
        match raw {
            sys::CUCORE_BACKEND_NVRTC => CompilerBackend::Nvrtc,
            sys::CUCORE_BACKEND_NVVM => CompilerBackend::Nvvm,
            sys::CUCORE_BACKEND_NVJITLINK => CompilerBackend::NvJitLink,
            sys::CUCORE_BACKEND_DRIVER => CompilerBackend::Driver,
            other => CompilerBackend::Unknown(other),
        }
    }
}

/// The version of the installed compiler for `backend` (NVRTC, NVVM or NVJITLINK) as
/// `major * 1000 + minor * 10`, like `CUDA_VERSION` (`cucore_compiler_version`; libNVVM: its IR
/// version). `Status::NotSupported` when it is not installed.
pub fn compiler_version(backend: CompilerBackend) -> Result<i32> {
    let mut v: c_int = 0;
    // SAFETY: a valid out-pointer.
    check(unsafe { sys::cucore_compiler_version(backend.raw(), &mut v) })?;
    Ok(v)
}

/// A tri-state switch as the C ABI takes it: None leaves the tool's default.
pub(crate) fn toggle(v: Option<bool>) -> sys::cucore_toggle_t {
    match v {
        None => sys::CUCORE_TOGGLE_DEFAULT,
        Some(true) => sys::CUCORE_TOGGLE_ON,
        Some(false) => sys::CUCORE_TOGGLE_OFF,
    }
}

/// How to compile a program (`cucore_program_options_t`; cuda.core's `ProgramOptions`). Every
/// field's zero value (None, false, empty) leaves NVRTC's or libNVVM's default. Build it with
/// the methods of the same names: `ProgramOptions::default().arch("sm_90").debug(true)`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ProgramOptions {
    /// The program's name in logs; None: `"default_program"`.
    pub name: Option<String>,
    /// `"sm_90"`, `"compute_90"` or `"90"`; None: the device of the calling thread's current
    /// context, else device 0.
    pub arch: Option<String>,
    /// The language dialect, e.g. `"c++17"`.
    pub std: Option<String>,
    /// `-D`: `"NAME"` or `"NAME=VALUE"`.
    pub defines: Vec<String>,
    /// `-U`.
    pub undefines: Vec<String>,
    /// `-I`.
    pub include_paths: Vec<String>,
    /// `--pre-include`.
    pub pre_includes: Vec<String>,
    /// In-memory headers: (the name as `#include` spells it, its contents).
    pub headers: Vec<(String, String)>,
    /// `-G`.
    pub debug: bool,
    /// `-lineinfo`.
    pub lineinfo: bool,
    /// `-dopt on/off`.
    pub device_code_optimize: Option<bool>,
    /// `--use_fast_math`.
    pub use_fast_math: bool,
    /// `--ftz`.
    pub ftz: Option<bool>,
    /// `--prec-sqrt`.
    pub prec_sqrt: Option<bool>,
    /// `--prec-div`.
    pub prec_div: Option<bool>,
    /// `--fmad`.
    pub fma: Option<bool>,
    /// `--extra-device-vectorization`.
    pub extra_device_vectorization: bool,
    /// `--maxrregcount`; None: no limit.
    pub max_register_count: Option<u32>,
    /// `-rdc=true`.
    pub relocatable_device_code: bool,
    /// `-ewp`.
    pub extensible_whole_program: bool,
    /// `-dlto` (implied by an LTO-IR target).
    pub link_time_optimization: bool,
    /// `-default-device`.
    pub device_as_default_execution_space: bool,
    /// `-w`.
    pub disable_warnings: bool,
    /// `--brief-diagnostics`.
    pub brief_diagnostics: bool,
    /// `--no-display-error-number`.
    pub no_display_error_number: bool,
    /// `--diag-error=N`.
    pub diag_error: Vec<u32>,
    /// `--diag-suppress=N`.
    pub diag_suppress: Vec<u32>,
    /// `--diag-warn=N`.
    pub diag_warn: Vec<u32>,
    /// `-pch` (automatic precompiled headers).
    pub pch: bool,
    /// `--create-pch=FILE`.
    pub create_pch: Option<String>,
    /// `--use-pch=FILE`.
    pub use_pch: Option<String>,
    /// `--pch-dir=DIR`.
    pub pch_dir: Option<String>,
    /// Each as `-Xptxas=OPT`.
    pub ptxas_options: Vec<String>,
    /// Further flags passed as written, after the ones above.
    pub extra_options: Vec<String>,
}

impl ProgramOptions {
    setters! {
        /// Sets `name`.
        name: &str => |v: &str| Some(v.to_string());
        /// Sets `arch`, e.g. `"sm_90"`.
        arch: &str => |v: &str| Some(v.to_string());
        /// Sets `std`, e.g. `"c++17"`.
        std: &str => |v: &str| Some(v.to_string());
        /// Sets `debug`.
        debug: bool => |v| v;
        /// Sets `lineinfo`.
        lineinfo: bool => |v| v;
        /// Sets `device_code_optimize` (on or off; the default is NVRTC's).
        device_code_optimize: bool => Some;
        /// Sets `use_fast_math`.
        use_fast_math: bool => |v| v;
        /// Sets `ftz`.
        ftz: bool => Some;
        /// Sets `prec_sqrt`.
        prec_sqrt: bool => Some;
        /// Sets `prec_div`.
        prec_div: bool => Some;
        /// Sets `fma`.
        fma: bool => Some;
        /// Sets `extra_device_vectorization`.
        extra_device_vectorization: bool => |v| v;
        /// Sets `max_register_count`.
        max_register_count: u32 => Some;
        /// Sets `relocatable_device_code`.
        relocatable_device_code: bool => |v| v;
        /// Sets `extensible_whole_program`.
        extensible_whole_program: bool => |v| v;
        /// Sets `link_time_optimization`.
        link_time_optimization: bool => |v| v;
        /// Sets `device_as_default_execution_space`.
        device_as_default_execution_space: bool => |v| v;
        /// Sets `disable_warnings`.
        disable_warnings: bool => |v| v;
        /// Sets `brief_diagnostics`.
        brief_diagnostics: bool => |v| v;
        /// Sets `no_display_error_number`.
        no_display_error_number: bool => |v| v;
        /// Sets `pch`.
        pch: bool => |v| v;
        /// Sets `create_pch`.
        create_pch: &str => |v: &str| Some(v.to_string());
        /// Sets `use_pch`.
        use_pch: &str => |v: &str| Some(v.to_string());
        /// Sets `pch_dir`.
        pch_dir: &str => |v: &str| Some(v.to_string());
    }

    /// Adds `-D name`.
    pub fn define(mut self, name: &str) -> Self {
        self.defines.push(name.to_string());
        self
    }
    /// Adds `-D name=value`.
    pub fn define_value(mut self, name: &str, value: &str) -> Self {
        self.defines.push(format!("{}={}", name, value));
        self
    }
    /// Adds `-U name`.
    pub fn undefine(mut self, name: &str) -> Self {
        self.undefines.push(name.to_string());
        self
    }
    /// Adds `-I path`.
    pub fn include_path(mut self, path: &str) -> Self {
        self.include_paths.push(path.to_string());
        self
    }
    /// Adds `--pre-include=header`.
    pub fn pre_include(mut self, header: &str) -> Self {
        self.pre_includes.push(header.to_string());
        self
    }
    /// Adds an in-memory header `name` (as `#include` spells it) with `source`.
    pub fn header(mut self, name: &str, source: &str) -> Self {
        self.headers.push((name.to_string(), source.to_string()));
        self
    }
    /// Adds `--diag-error=n`.
    pub fn diag_error(mut self, n: u32) -> Self {
        self.diag_error.push(n);
        self
    }
    /// Adds `--diag-suppress=n`.
    pub fn diag_suppress(mut self, n: u32) -> Self {
        self.diag_suppress.push(n);
        self
    }
    /// Adds `--diag-warn=n`.
    pub fn diag_warn(mut self, n: u32) -> Self {
        self.diag_warn.push(n);
        self
    }
    /// Adds `-Xptxas=option`.
    pub fn ptxas_option(mut self, option: &str) -> Self {
        self.ptxas_options.push(option.to_string());
        self
    }
    /// Adds a flag passed as written.
    pub fn extra_option(mut self, option: &str) -> Self {
        self.extra_options.push(option.to_string());
        self
    }

    /// The C struct, with the C strings it points at (kept alive by the returned value).
    pub(crate) fn lower(&self) -> Result<LoweredProgramOptions> {
        LoweredProgramOptions::new(self)
    }
}

/// A `cucore_program_options_t` and the C strings and arrays it points into. The pointers are
/// into heap storage owned here, so they stay valid when this value moves.
pub(crate) struct LoweredProgramOptions {
    _strings: Vec<std::ffi::CString>,
    _arrays: Vec<CStringArray>,
    raw: sys::cucore_program_options_t,
}

impl LoweredProgramOptions {
    fn new(o: &ProgramOptions) -> Result<LoweredProgramOptions> {
        let mut strings = Vec::new();
        let mut arrays = Vec::new();
        let mut raw = sys::cucore_program_options_t::INIT;

        let mut one = |s: &Option<String>, what: &str| -> Result<*const c_char> {
            match s {
                None => Ok(ptr::null()),
                Some(s) => {
                    let c = c_string(s, what)?;
                    let p = c.as_ptr();
                    strings.push(c);
                    Ok(p)
                }
            }
        };
        raw.name = one(&o.name, "ProgramOptions::name")?;
        raw.arch = one(&o.arch, "ProgramOptions::arch")?;
        raw.std = one(&o.std, "ProgramOptions::std")?;
        raw.create_pch = one(&o.create_pch, "ProgramOptions::create_pch")?;
        raw.use_pch = one(&o.use_pch, "ProgramOptions::use_pch")?;
        raw.pch_dir = one(&o.pch_dir, "ProgramOptions::pch_dir")?;

        let mut many = |items: &[String], what: &str| -> Result<(*const *const c_char, usize)> {
            let a = CStringArray::new(items, what)?;
            let r = (a.as_ptr(), a.len());
            arrays.push(a);
            Ok(r)
        };
        (raw.defines, raw.define_count) = many(&o.defines, "a define")?;
        (raw.undefines, raw.undefine_count) = many(&o.undefines, "an undefine")?;
        (raw.include_paths, raw.include_path_count) = many(&o.include_paths, "an include path")?;
        (raw.pre_includes, raw.pre_include_count) = many(&o.pre_includes, "a pre-include")?;
        (raw.ptxas_options, raw.ptxas_option_count) = many(&o.ptxas_options, "a ptxas option")?;
        (raw.extra_options, raw.extra_option_count) = many(&o.extra_options, "an extra option")?;
        let names: Vec<&str> = o.headers.iter().map(|(n, _)| n.as_str()).collect();
        let sources: Vec<&str> = o.headers.iter().map(|(_, s)| s.as_str()).collect();
        let names = CStringArray::new(&names, "a header name")?;
        let sources = CStringArray::new(&sources, "a header's source")?;
        raw.header_names = names.as_ptr();
        raw.header_sources = sources.as_ptr();
        raw.header_count = names.len();
        arrays.push(names);
        arrays.push(sources);

        let numbers = |v: &Vec<u32>| if v.is_empty() { ptr::null() } else { v.as_ptr() };
        raw.diag_error = numbers(&o.diag_error);
        raw.diag_error_count = o.diag_error.len();
        raw.diag_suppress = numbers(&o.diag_suppress);
        raw.diag_suppress_count = o.diag_suppress.len();
        raw.diag_warn = numbers(&o.diag_warn);
        raw.diag_warn_count = o.diag_warn.len();

        raw.debug = o.debug as u32;
        raw.lineinfo = o.lineinfo as u32;
        raw.device_code_optimize = toggle(o.device_code_optimize);
        raw.use_fast_math = o.use_fast_math as u32;
        raw.ftz = toggle(o.ftz);
        raw.prec_sqrt = toggle(o.prec_sqrt);
        raw.prec_div = toggle(o.prec_div);
        raw.fma = toggle(o.fma);
        raw.extra_device_vectorization = o.extra_device_vectorization as u32;
        raw.max_register_count = o.max_register_count.unwrap_or(0);
        raw.relocatable_device_code = o.relocatable_device_code as u32;
        raw.extensible_whole_program = o.extensible_whole_program as u32;
        raw.link_time_optimization = o.link_time_optimization as u32;
        raw.device_as_default_execution_space = o.device_as_default_execution_space as u32;
        raw.disable_warnings = o.disable_warnings as u32;
        raw.brief_diagnostics = o.brief_diagnostics as u32;
        raw.no_display_error_number = o.no_display_error_number as u32;
        raw.pch = o.pch as u32;
        Ok(LoweredProgramOptions { _strings: strings, _arrays: arrays, raw })
    }

    /// The struct (valid while `self` lives). The `diag_*` arrays point into the
    /// [`ProgramOptions`] this was lowered from, which must outlive the call too.
    pub(crate) fn raw(&self) -> &sys::cucore_program_options_t {
        &self.raw
    }
}

/// A program: source code and the options to compile it (`cucore_program_t`; cuda.core's
/// `Program`). The code and options are copied at creation; the compiler first runs in a
/// [`compile`](Program::compile) that misses the cache.
pub struct Program {
    raw: NonNull<sys::cucore_program_t>,
}

handle_type!(Program, sys::cucore_program_t);
identity_eq!(Program);

impl Program {
    /// A program of `code` (C++ or PTX text, NVVM IR text or bitcode) of type `code_type`
    /// (`Cxx`, `Ptx` or `Nvvm`) with `options` (`cucore_program_create`). Fails with
    /// `Status::NotSupported` when the compiler for `code_type` is not installed, and with
    /// `Status::InvalidArgument` for an option that does not apply to the code type.
    pub fn create(code: impl AsRef<[u8]>, code_type: CodeType, options: &ProgramOptions) -> Result<Program> {
        let code = code.as_ref();
        let lowered = options.lower()?;
        // Size 0 would mean "NUL-terminated": empty code is passed as the empty C string.
        let (data, size) = if code.is_empty() { (b"\0".as_ptr(), 0) } else { (code.as_ptr(), code.len()) };
        let mut raw = ptr::null_mut();
        // SAFETY: `size` bytes at `data` (or a NUL-terminated empty string), valid options whose
        // strings live in `lowered` and `options` for the call, a valid out-pointer.
        check(unsafe {
            sys::cucore_program_create(data as *const c_void, size, code_type.raw(), lowered.raw(), &mut raw)
        })?;
        Program::from_out(raw)
    }

    /// Compiles to `target` (`Ptx`, `Cubin` or `LtoIr` for C++; `Ptx` or `LtoIr` for NVVM;
    /// `Cubin` for PTX) (`cucore_program_compile`). `name_expressions` are C++ names such as
    /// `"saxpy<float>"` whose lowered names the object code keeps, so that
    /// [`ObjectCode::get_kernel`] finds them by the expression. With a `cache`, a hit returns the
    /// stored code without running a compiler and a miss stores the result. Fails with
    /// `Status::Compilation` when the compiler rejects the code (the message carries the first
    /// lines of the log; [`Program::log`] has it all).
    pub fn compile(
        &self,
        target: CodeType,
        name_expressions: &[&str],
        cache: Option<&ProgramCache>,
    ) -> Result<ObjectCode> {
        let names = CStringArray::new(name_expressions, "a name expression")?;
        let cache = cache.map_or(ptr::null_mut(), |c| c.as_raw());
        let mut raw = ptr::null_mut();
        // SAFETY: live handles (or NULL cache), `names` holds valid C strings for the call, a
        // valid out-pointer; we own the reference it gives.
        check(unsafe {
            sys::cucore_program_compile(self.as_raw(), target.raw(), names.as_ptr(), names.len(), cache, &mut raw)
        })?;
        ObjectCode::from_out(raw)
    }

    /// The log of the last compile that ran (`""` before one, or after a cache hit)
    /// (`cucore_program_log`).
    pub fn log(&self) -> Result<String> {
        // SAFETY: a live handle; read_text passes a buffer of `capacity` bytes (or NULL with 0).
        read_text(|buffer, capacity, length| unsafe {
            sys::cucore_program_log(self.as_raw(), buffer, capacity, length)
        })
    }

    /// What became of the precompiled header of the last NVRTC compile
    /// (`cucore_program_pch_status`; cuda.core's `Program.pch_status`): `None` when no PCH was
    /// asked for, nothing was compiled yet, or the backend is not NVRTC.
    pub fn pch_status(&self) -> Result<Option<PchStatus>> {
        let mut raw: sys::cucore_pch_status_t = sys::CUCORE_PCH_STATUS_NONE;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_program_pch_status(self.as_raw(), &mut raw) })?;
        Ok(match raw {
            sys::CUCORE_PCH_STATUS_CREATED => Some(PchStatus::Created),
            sys::CUCORE_PCH_STATUS_NOT_ATTEMPTED => Some(PchStatus::NotAttempted),
            sys::CUCORE_PCH_STATUS_FAILED => Some(PchStatus::Failed),
            _ => None,
        })
    }

    /// The NVRTC (or libNVVM) flags the options translate to, one per element
    /// (`cucore_program_flags`).
    pub fn flags(&self) -> Result<Vec<String>> {
        // SAFETY: as in `log`.
        let text = read_text(|buffer, capacity, length| unsafe {
            sys::cucore_program_flags(self.as_raw(), buffer, capacity, length)
        })?;
        Ok(text.lines().filter(|l| !l.is_empty()).map(str::to_string).collect())
    }

    /// The program's code type.
    pub fn code_type(&self) -> Result<CodeType> {
        let mut v: sys::cucore_code_type_t = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_program_code_type(self.as_raw(), &mut v) })?;
        Ok(CodeType::from_raw(v))
    }

    /// The tool that compiles this program: NVRTC, NVVM, nvJitLink or the driver.
    pub fn backend(&self) -> Result<CompilerBackend> {
        let mut v: sys::cucore_compiler_backend_t = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_program_backend(self.as_raw(), &mut v) })?;
        Ok(CompilerBackend::from_raw(v))
    }

    /// The architecture the program compiles for, e.g. `"sm_90"`.
    pub fn arch(&self) -> Result<String> {
        let mut p: *const c_char = ptr::null();
        // SAFETY: a live handle and a valid out-pointer; the string lives with the program.
        check(unsafe { sys::cucore_program_arch(self.as_raw(), &mut p) })?;
        // SAFETY: NUL-terminated, valid while `self` lives.
        Ok(unsafe { owned_str(p) })
    }
}

impl fmt::Debug for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.code_type(), self.arch()) {
            (Ok(t), Ok(a)) => write!(f, "Program({}, {})", t, a),
            _ => write!(f, "Program(<library handle {:p}>)", self.as_raw()),
        }
    }
}
