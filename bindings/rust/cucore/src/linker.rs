//! What `include/cucore/linker.h` holds: linking device code with nvJitLink, or the driver's
//! `cuLink*` where nvJitLink is absent (cuda.core's `Linker` and `LinkerOptions`).
//!
//! ```no_run
//! use cucore::{CodeType, Linker, LinkerOptions, Program, ProgramOptions};
//!
//! # fn main() -> cucore::Result<()> {
//! let options = ProgramOptions::default().arch("sm_90").relocatable_device_code(true);
//! let a = Program::create("extern __device__ int twice(int); \
//!                       extern \"C\" __global__ void k(int *x) { *x = twice(*x); }", CodeType::Cxx, &options)?
//!     .compile(CodeType::LtoIr, &[], None)?;
//! let b = Program::create("__device__ int twice(int v) { return 2 * v; }", CodeType::Cxx, &options)?
//!     .compile(CodeType::LtoIr, &[], None)?;
//! let linker = Linker::create(&[&a, &b], &LinkerOptions::default().arch("sm_90").link_time_optimization(true))?;
//! let cubin = linker.link(CodeType::Cubin)?;
//! # Ok(())
//! # }
//! ```

use std::fmt;
use std::ptr::{self, NonNull};

use cucore_sys as sys;

use crate::common::{c_string, check, read_text, CStringArray, Error, Result, Status};
use crate::object_code::ObjectCode;
use crate::program::{toggle, CodeType, CompilerBackend};

/// How to link (`cucore_linker_options_t`; cuda.core's `LinkerOptions`). Every field's zero
/// value (None, false, empty) is the linker's default. Build it with the methods of the same
/// names: `LinkerOptions::default().arch("sm_90").link_time_optimization(true)`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LinkerOptions {
    /// For messages; None: `"linker"`.
    pub name: Option<String>,
    /// `"sm_90"`; None: the current context's device, else device 0.
    pub arch: Option<String>,
    /// `NvJitLink` or `Driver`; None: nvJitLink where installed, else the driver.
    pub backend: Option<CompilerBackend>,
    /// None: no limit.
    pub max_register_count: Option<u32>,
    /// `-O0` .. `-O3`; None: the default (3).
    pub optimization_level: Option<u32>,
    /// `-g`.
    pub debug: bool,
    /// `-lineinfo`.
    pub lineinfo: bool,
    /// `-lto` (nvJitLink only).
    pub link_time_optimization: bool,
    /// `-ftz` (nvJitLink only).
    pub ftz: Option<bool>,
    /// `-prec-div` (nvJitLink only).
    pub prec_div: Option<bool>,
    /// `-prec-sqrt` (nvJitLink only).
    pub prec_sqrt: Option<bool>,
    /// `-fma` (nvJitLink only).
    pub fma: Option<bool>,
    /// `-verbose` (more in the info log).
    pub verbose: bool,
    /// Each as `-Xptxas=OPT` (nvJitLink only).
    pub ptxas_options: Vec<String>,
    /// Further nvJitLink flags, as written.
    pub extra_options: Vec<String>,
}

impl LinkerOptions {
    setters! {
        /// Sets `name`.
        name: &str => |name: &str| Some(name.to_string());
        /// Sets `arch`, e.g. `"sm_90"`.
        arch: &str => |arch: &str| Some(arch.to_string());
        /// Sets `backend`.
        backend: CompilerBackend => |backend: CompilerBackend| Some(backend);
        /// Sets `max_register_count`.
        max_register_count: u32 => |count: u32| Some(count);
        /// Sets `optimization_level` (0..=3).
        optimization_level: u32 => |level: u32| Some(level);
        /// Sets `debug`.
        debug: bool => |on: bool| on;
        /// Sets `lineinfo`.
        lineinfo: bool => |on: bool| on;
        /// Sets `link_time_optimization`.
        link_time_optimization: bool => |on: bool| on;
        /// Sets `ftz`.
        ftz: bool => |on: bool| Some(on);
        /// Sets `prec_div`.
        prec_div: bool => |on: bool| Some(on);
        /// Sets `prec_sqrt`.
        prec_sqrt: bool => |on: bool| Some(on);
        /// Sets `fma`.
        fma: bool => |on: bool| Some(on);
        /// Sets `verbose`.
        verbose: bool => |on: bool| on;
    }
    /// Adds `-Xptxas=option`.
    pub fn ptxas_option(mut self, option: &str) -> Self {
        self.ptxas_options.push(option.to_string());
        self
    }
    /// Adds an nvJitLink flag, as written.
    pub fn extra_option(mut self, option: &str) -> Self {
        self.extra_options.push(option.to_string());
        self
    }
}

/// A linker over a set of object codes (`cucore_linker_t`; cuda.core's `Linker`). It holds its
/// inputs until it is dropped.
pub struct Linker {
    raw: NonNull<sys::cucore_linker_t>,
}

handle_type!(Linker, sys::cucore_linker_t);
identity_eq!(Linker);

impl Linker {
    /// A linker over `inputs` (at least one) with `options` (`cucore_linker_create`). The
    /// backend starts at once, so option errors surface here; an input the backend refuses is
    /// `Status::Compilation` (the message carries the first lines of the error log).
    pub fn create(inputs: &[&ObjectCode], options: &LinkerOptions) -> Result<Linker> {
        if let Some(level) = options.optimization_level {
            if level > 3 {
                return Err(Error::binding(
                    Status::InvalidArgument,
                    format!("LinkerOptions::optimization_level is {} (0..=3)", level),
                ));
            }
        }
        let name = options.name.as_deref().map(|s| c_string(s, "LinkerOptions::name")).transpose()?;
        let arch = options.arch.as_deref().map(|s| c_string(s, "LinkerOptions::arch")).transpose()?;
        let ptxas = CStringArray::new(&options.ptxas_options, "a ptxas option")?;
        let extra = CStringArray::new(&options.extra_options, "an extra option")?;
        let mut o = sys::cucore_linker_options_t::INIT;
        o.name = name.as_ref().map_or(ptr::null(), |s| s.as_ptr());
        o.arch = arch.as_ref().map_or(ptr::null(), |s| s.as_ptr());
        o.backend = options.backend.map_or(sys::CUCORE_BACKEND_DEFAULT, CompilerBackend::raw);
        o.max_register_count = options.max_register_count.unwrap_or(0);
        // CUCORE_OPTIMIZATION_LEVEL(n) of the C header: n + 1 (0 keeps the default).
        o.optimization_level = options.optimization_level.map_or(0, |n| n + 1);
        o.debug = options.debug as u32;
        o.lineinfo = options.lineinfo as u32;
        o.link_time_optimization = options.link_time_optimization as u32;
        o.ftz = toggle(options.ftz);
        o.prec_div = toggle(options.prec_div);
        o.prec_sqrt = toggle(options.prec_sqrt);
        o.fma = toggle(options.fma);
        o.verbose = options.verbose as u32;
        o.ptxas_options = ptxas.as_ptr();
        o.ptxas_option_count = ptxas.len();
        o.extra_options = extra.as_ptr();
        o.extra_option_count = extra.len();

        let handles: Vec<*mut sys::cucore_object_code_t> = inputs.iter().map(|c| c.as_raw()).collect();
        let mut raw = ptr::null_mut();
        // SAFETY: `handles.len()` live handles (retained by the linker), options whose strings
        // live until the call returns, a valid out-pointer; we own the reference it gives.
        check(unsafe {
            sys::cucore_linker_create(
                if handles.is_empty() { ptr::null() } else { handles.as_ptr() },
                handles.len(),
                &o,
                &mut raw,
            )
        })?;
        Linker::from_out(raw)
    }

    /// Links the inputs into `target` (`Cubin`, or `Ptx` with link-time optimisation on
    /// nvJitLink) (`cucore_linker_link`). A linker links once; later calls return the same
    /// object code for the same target.
    pub fn link(&self, target: CodeType) -> Result<ObjectCode> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_linker_link(self.as_raw(), target.raw(), &mut raw) })?;
        ObjectCode::from_out(raw)
    }

    /// The linker's error log (cuda.core's `get_error_log`).
    pub fn error_log(&self) -> Result<String> {
        // SAFETY: a live handle; read_text passes a buffer of `capacity` bytes (or NULL with 0).
        read_text(|buffer, capacity, length| unsafe {
            sys::cucore_linker_error_log(self.as_raw(), buffer, capacity, length)
        })
    }

    /// The linker's info log (cuda.core's `get_info_log`).
    pub fn info_log(&self) -> Result<String> {
        // SAFETY: as in `error_log`.
        read_text(|buffer, capacity, length| unsafe {
            sys::cucore_linker_info_log(self.as_raw(), buffer, capacity, length)
        })
    }

    /// The backend this linker uses (`NvJitLink` or `Driver`).
    pub fn backend(&self) -> Result<CompilerBackend> {
        let mut v: sys::cucore_compiler_backend_t = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_linker_backend(self.as_raw(), &mut v) })?;
        Ok(CompilerBackend::from_raw(v))
    }

    /// The backend a linker with default options would use now: nvJitLink where it loads, else
    /// the driver (`cucore_linker_default_backend`; cuda.core's `Linker.which_backend`).
    pub fn default_backend() -> Result<CompilerBackend> {
        let mut v: sys::cucore_compiler_backend_t = 0;
        // SAFETY: a valid out-pointer.
        check(unsafe { sys::cucore_linker_default_backend(&mut v) })?;
        Ok(CompilerBackend::from_raw(v))
    }
}

impl fmt::Debug for Linker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.backend() {
            Ok(b) => write!(f, "Linker({:?})", b),
            Err(_) => write!(f, "Linker(<library handle {:p}>)", self.as_raw()),
        }
    }
}
