//! What `include/cucore/object_code.h` holds: compiled device code (cuda.core's `ObjectCode`).
//!
//! Loadable kinds (cubin, PTX, fatbin) are loaded into the driver through its library API on
//! first use (or [`ObjectCode::load`]), once for every device, and unloaded when the last
//! reference goes; kernels taken from the code hold one, so the code stays loaded while any of
//! them lives. LTO-IR, objects and libraries are inputs of the [`Linker`](crate::Linker).

use std::collections::HashMap;
use std::fmt;
use std::os::raw::{c_char, c_void};
use std::path::Path;
use std::ptr::{self, NonNull};

use cucore_sys as sys;

use crate::common::{c_string, check, owned_str, path_c_string, Result};
use crate::device::Device;
use crate::kernel::Kernel;
use crate::launch::DeviceRepr;
use crate::program::CodeType;

/// Where a module global (a `__device__` or `__constant__` variable) lives on one device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GlobalInfo {
    /// Its device address.
    pub address: u64,
    /// Its size in bytes.
    pub size: usize,
}

/// Compiled device code (`cucore_object_code_t`): the result of
/// [`Program::compile`](crate::Program::compile) or [`Linker::link`](crate::Linker::link), or
/// bytes or a file of a known kind.
pub struct ObjectCode {
    raw: NonNull<sys::cucore_object_code_t>,
}

handle_type!(ObjectCode, sys::cucore_object_code_t);
identity_eq!(ObjectCode);

fn optional_name(name: Option<&str>) -> Result<Option<std::ffi::CString>> {
    name.map(|n| c_string(n, "the object code's name")).transpose()
}

impl ObjectCode {
    /// Object code of kind `code_type` (`Cubin`, `Ptx`, `LtoIr`, `Fatbin`, `Object` or `Library`)
    /// from a copy of `data` (`cucore_object_code_create`; cuda.core's `ObjectCode.from_cubin`
    /// and siblings). `name` names it in messages and linker logs. Nothing is loaded yet.
    pub fn create(data: &[u8], code_type: CodeType, name: Option<&str>) -> Result<ObjectCode> {
        let name = optional_name(name)?;
        let mut raw = ptr::null_mut();
        // SAFETY: `data.len()` readable bytes (copied by the call), a NUL-terminated name or
        // NULL, a valid out-pointer; we own the reference it gives.
        check(unsafe {
            sys::cucore_object_code_create(
                data.as_ptr() as *const c_void,
                data.len(),
                code_type.raw(),
                name.as_ref().map_or(ptr::null(), |n| n.as_ptr()),
                &mut raw,
            )
        })?;
        ObjectCode::from_out(raw)
    }

    /// Object code of kind `code_type` read from the file at `path`
    /// (`cucore_object_code_create_from_file`); `name` None: the path. The file is read at once.
    pub fn from_file(path: impl AsRef<Path>, code_type: CodeType, name: Option<&str>) -> Result<ObjectCode> {
        let path = path_c_string(path.as_ref(), "the object code's path")?;
        let name = optional_name(name)?;
        let mut raw = ptr::null_mut();
        // SAFETY: NUL-terminated strings (or NULL name) and a valid out-pointer.
        check(unsafe {
            sys::cucore_object_code_create_from_file(
                path.as_ptr(),
                code_type.raw(),
                name.as_ref().map_or(ptr::null(), |n| n.as_ptr()),
                &mut raw,
            )
        })?;
        ObjectCode::from_out(raw)
    }

    /// Loads the code into the driver now, so load errors surface here (otherwise the first
    /// kernel or global lookup loads it). Loading twice does nothing. `Status::InvalidState` for
    /// LTO-IR, objects and libraries (link them first).
    pub fn load(&self) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::cucore_object_code_load(self.as_raw()) })
    }

    /// The kind of code.
    pub fn code_type(&self) -> Result<CodeType> {
        let mut v: sys::cucore_code_type_t = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_object_code_code_type(self.as_raw(), &mut v) })?;
        Ok(CodeType::from_raw(v))
    }

    /// The code's bytes (cuda.core's `ObjectCode.code`), borrowed: they never change while the
    /// object code lives.
    pub fn code(&self) -> Result<&[u8]> {
        let mut data: *const c_void = ptr::null();
        let mut size: usize = 0;
        // SAFETY: a live handle and valid out-pointers.
        check(unsafe { sys::cucore_object_code_data(self.as_raw(), &mut data, &mut size) })?;
        if size == 0 || data.is_null() {
            return Ok(&[]);
        }
        // SAFETY: the library keeps `size` immutable bytes at `data` while the object code lives,
        // which `&self` guarantees for the borrow.
        Ok(unsafe { std::slice::from_raw_parts(data as *const u8, size) })
    }

    /// The code's name (`""` when none).
    pub fn name(&self) -> Result<String> {
        let mut p: *const c_char = ptr::null();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_object_code_name(self.as_raw(), &mut p) })?;
        // SAFETY: NUL-terminated, valid while `self` lives.
        Ok(unsafe { owned_str(p) })
    }

    /// The name expressions given to the compile that produced the code, each with its lowered
    /// (mangled) name, in the order they were given.
    pub fn name_expressions(&self) -> Result<Vec<(String, String)>> {
        let mut count: usize = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_object_code_name_expression_count(self.as_raw(), &mut count) })?;
        let mut out = Vec::with_capacity(count);
        for index in 0..count {
            let (mut expression, mut lowered): (*const c_char, *const c_char) = (ptr::null(), ptr::null());
            // SAFETY: a live handle, an index below the count, valid out-pointers.
            check(unsafe {
                sys::cucore_object_code_name_expression(self.as_raw(), index, &mut expression, &mut lowered)
            })?;
            // SAFETY: NUL-terminated strings valid while `self` lives.
            out.push(unsafe { (owned_str(expression), owned_str(lowered)) });
        }
        Ok(out)
    }

    /// Name expression -> lowered name (cuda.core's `ObjectCode.symbol_mapping`).
    pub fn symbol_mapping(&self) -> Result<HashMap<String, String>> {
        Ok(self.name_expressions()?.into_iter().collect())
    }

    /// The kernel named `name`: a name expression given to the compile (e.g. `"saxpy<float>"`)
    /// or the symbol name itself (`cucore_object_code_get_kernel`). Loads the code if needed.
    pub fn get_kernel(&self, name: &str) -> Result<Kernel> {
        let name = c_string(name, "the kernel name")?;
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle, a NUL-terminated name, a valid out-pointer; we own the
        // reference it gives.
        check(unsafe { sys::cucore_object_code_get_kernel(self.as_raw(), name.as_ptr(), &mut raw) })?;
        Kernel::from_out(raw)
    }

    /// The number of kernels in the code (loads it first).
    pub fn kernel_count(&self) -> Result<usize> {
        let mut n: usize = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_object_code_kernel_count(self.as_raw(), &mut n) })?;
        Ok(n)
    }

    /// The address and size of the module global `name` (a name expression or the symbol name)
    /// on `device` (`cucore_object_code_get_global`). Loads the code if needed.
    pub fn get_global(&self, device: &Device, name: &str) -> Result<GlobalInfo> {
        let name = c_string(name, "the global's name")?;
        let (mut address, mut size): (u64, usize) = (0, 0);
        // SAFETY: live handles, a NUL-terminated name, valid out-pointers.
        check(unsafe {
            sys::cucore_object_code_get_global(self.as_raw(), device.as_raw(), name.as_ptr(), &mut address, &mut size)
        })?;
        Ok(GlobalInfo { address, size })
    }

    /// Copies the global `name` on `device` into `dst`, whose length must be the global's size
    /// (`cucore_object_code_read_global`; synchronous).
    pub fn read_global(&self, device: &Device, name: &str, dst: &mut [u8]) -> Result<()> {
        let name = c_string(name, "the global's name")?;
        // SAFETY: live handles, a NUL-terminated name, `dst.len()` writable bytes.
        check(unsafe {
            sys::cucore_object_code_read_global(
                self.as_raw(),
                device.as_raw(),
                name.as_ptr(),
                dst.as_mut_ptr() as *mut c_void,
                dst.len(),
            )
        })
    }

    /// The bytes of the global `name` on `device` (its size asked first).
    pub fn read_global_bytes(&self, device: &Device, name: &str) -> Result<Vec<u8>> {
        let size = self.get_global(device, name)?.size;
        let mut bytes = vec![0u8; size];
        self.read_global(device, name, &mut bytes)?;
        Ok(bytes)
    }

    /// Copies `src`, whose length must be the global's size, into the global `name` on `device`
    /// (`cucore_object_code_write_global`; synchronous, after all work of the device's primary
    /// context).
    pub fn write_global(&self, device: &Device, name: &str, src: &[u8]) -> Result<()> {
        let name = c_string(name, "the global's name")?;
        // SAFETY: live handles, a NUL-terminated name, `src.len()` readable bytes.
        check(unsafe {
            sys::cucore_object_code_write_global(
                self.as_raw(),
                device.as_raw(),
                name.as_ptr(),
                src.as_ptr() as *const c_void,
                src.len(),
            )
        })
    }

    /// Writes `value` (a plain value the device can read: see [`DeviceRepr`]) into the global
    /// `name` on `device`; `size_of::<T>()` must be the global's size.
    pub fn write_global_value<T: DeviceRepr>(&self, device: &Device, name: &str, value: &T) -> Result<()> {
        let name = c_string(name, "the global's name")?;
        // SAFETY: live handles, a NUL-terminated name, `size_of::<T>()` readable bytes at `value`
        // (copied by the library as bytes, as a launch argument is).
        check(unsafe {
            sys::cucore_object_code_write_global(
                self.as_raw(),
                device.as_raw(),
                name.as_ptr(),
                value as *const T as *const c_void,
                std::mem::size_of::<T>(),
            )
        })
    }

    /// The raw `CUlibrary` (cuda.core's `ObjectCode.handle`); loads the code if needed.
    pub fn handle(&self) -> Result<*mut c_void> {
        let mut h = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_object_code_handle(self.as_raw(), &mut h) })?;
        Ok(h)
    }

    /// The raw `CUmodule` of the code in the current context (`cuLibraryGetModule`; cuda.core's
    /// `ObjectCode.get_module`), for driver APIs that take a module. It lives as long as the code.
    pub fn module(&self) -> Result<*mut c_void> {
        let mut m = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_object_code_module(self.as_raw(), &mut m) })?;
        Ok(m)
    }
}

impl fmt::Debug for ObjectCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.code_type(), self.name()) {
            (Ok(t), Ok(n)) => write!(f, "ObjectCode({}, {:?})", t, n),
            _ => write!(f, "ObjectCode(<library handle {:p}>)", self.as_raw()),
        }
    }
}
