//! What `include/cucore/launch.h` holds: launch configurations and kernel launches (cuda.core's
//! `LaunchConfig` and `launch`).
//!
//! ```no_run
//! use cucore::{launch, Buffer, DeviceRepr, Kernel, KernelArg, LaunchConfig, Stream};
//!
//! #[derive(Clone, Copy)]
//! #[repr(C)]
//! struct Params { a: f32, n: u32 }
//! // SAFETY: repr(C), plain data, laid out as the kernel's `struct Params { float a; unsigned n; }`.
//! unsafe impl DeviceRepr for Params {}
//!
//! # fn run(s: &Stream, k: &Kernel, x: &Buffer, y: &Buffer) -> cucore::Result<()> {
//! let n = 1u32 << 20;
//! let config = LaunchConfig::new((n + 255) / 256, 256);
//! launch(s, &config, k, &[&2.0f32, x, y, &n])?;           // float a, float *x, float *y, unsigned n
//! cucore::launch!(s, config, k, Params { a: 2.0, n }, x)?; // the same with the macro
//! # Ok(())
//! # }
//! ```
//!
//! Arguments are passed as their bytes: a [`Buffer`] as its device address, every other
//! argument through [`KernelArg`], which every [`DeviceRepr`] type has (integers, floats,
//! `bool`, arrays of them, [`DevicePointer`]s, and `#[repr(C)]` structs that declare it). Where
//! the driver reports the kernel's parameters (12.4 and newer), the library checks the count and
//! every size and names the argument that does not match (`Status::InvalidArgument`): a Rust
//! `f64` passed for a `float` parameter is caught there, not silently converted. Up to
//! [`MAX_STACK_ARGS`] arguments are packed on the stack, without heap allocation.
//!
//! # What the safe launch accepts
//!
//! [`launch`] and [`launch!`](crate::launch!) are safe, so they take only arguments whose bytes
//! the binding can vouch for: plain values (integers, floats, `bool`, arrays of them and
//! `#[repr(C)]` structs that implement the `unsafe` trait [`DeviceRepr`]) and buffers
//! (`&Buffer`, passed as the address of memory the library allocated and keeps alive). A raw
//! pointer is an address the binding cannot know to be valid (dangling, freed, host memory,
//! another device's), and a kernel writing through it could corrupt memory, so raw pointers are
//! not kernel arguments:
//!
//! ```compile_fail
//! # use cucore::{launch, Kernel, LaunchConfig, Stream};
//! # fn run(s: &Stream, k: &Kernel, x: *mut f32) -> cucore::Result<()> {
//! launch(s, &LaunchConfig::new(1, 32), k, &[&x])?; // error: `*mut f32` is not a `KernelArg`
//! # Ok(())
//! # }
//! ```
//!
//! Passing one takes `unsafe`: wrap it in a [`DevicePointer`] (whose constructors are `unsafe`:
//! the caller promises the address is valid for what the kernel does with it until the kernel
//! has run), or pack the arguments yourself for [`launch_raw`]:
//!
//! ```no_run
//! # use cucore::{launch, DevicePointer, Kernel, LaunchConfig, Stream};
//! # fn run(s: &Stream, k: &Kernel, x: *mut f32) -> cucore::Result<()> {
//! // SAFETY: `x` is device memory of at least 32 floats that outlives the kernel's run.
//! let x = unsafe { DevicePointer::from_ptr(x) };
//! launch(s, &LaunchConfig::new(1, 32), k, &[&x])?;
//! # Ok(())
//! # }
//! ```
//!
//! The same holds for what a `DeviceRepr` struct contains: implementing the trait for a struct
//! with pointer fields is the caller's promise about those addresses. What a kernel does with a
//! plain integer (an address it computes, an index it does not check) is the kernel's contract,
//! which no binding can check.

use std::os::raw::{c_int, c_void};
use std::ptr;

use cucore_sys as sys;

use crate::buffer::Buffer;
use crate::common::{check, Error, Result, Status};
use crate::device::Device;
use crate::kernel::Kernel;
use crate::stream::Stream;

/// Grid, block or cluster dimensions. A zero dimension counts as 1. Made from a `u32` (x), a
/// `(u32, u32)`, a `(u32, u32, u32)` or a `[u32; 3]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl Dim3 {
    /// The dimensions as the C struct holds them.
    pub fn to_array(self) -> [u32; 3] {
        [self.x, self.y, self.z]
    }
}

impl From<u32> for Dim3 {
    fn from(x: u32) -> Dim3 {
        Dim3 { x, y: 1, z: 1 }
    }
}
impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Dim3 {
        Dim3 { x, y, z: 1 }
    }
}
impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Dim3 {
        Dim3 { x, y, z }
    }
}
impl From<[u32; 3]> for Dim3 {
    fn from([x, y, z]: [u32; 3]) -> Dim3 {
        Dim3 { x, y, z }
    }
}

/// How to launch a kernel (`cucore_launch_config_t`; cuda.core's `LaunchConfig`). The default is
/// one thread. Build it with `LaunchConfig::new(grid, block)` and the methods named like the
/// fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// Blocks in the grid (clusters, when `cluster` is set).
    pub grid: Dim3,
    /// Threads per block.
    pub block: Dim3,
    /// Blocks per cluster (compute capability 9.0 and newer); None: no cluster.
    pub cluster: Option<Dim3>,
    /// Dynamic shared memory per block, in bytes.
    pub shared_memory_bytes: u32,
    /// A cooperative launch (grid-wide synchronisation); the whole grid must be resident at
    /// once, which is checked before the launch.
    pub cooperative: bool,
    /// Programmatic stream serialisation (programmatic dependent launch).
    pub programmatic_stream_serialization: bool,
    /// The launch's priority instead of the stream's; None: the stream's.
    pub priority: Option<i32>,
}

impl Default for LaunchConfig {
    fn default() -> Self {
        LaunchConfig {
            grid: Dim3::from(1),
            block: Dim3::from(1),
            cluster: None,
            shared_memory_bytes: 0,
            cooperative: false,
            programmatic_stream_serialization: false,
            priority: None,
        }
    }
}

impl LaunchConfig {
    /// `grid` blocks of `block` threads.
    pub fn new(grid: impl Into<Dim3>, block: impl Into<Dim3>) -> LaunchConfig {
        LaunchConfig { grid: grid.into(), block: block.into(), ..LaunchConfig::default() }
    }
    /// Sets `grid`.
    pub fn grid(mut self, grid: impl Into<Dim3>) -> Self {
        self.grid = grid.into();
        self
    }
    /// Sets `block`.
    pub fn block(mut self, block: impl Into<Dim3>) -> Self {
        self.block = block.into();
        self
    }
    /// Sets `cluster` (then `grid` counts clusters).
    pub fn cluster(mut self, cluster: impl Into<Dim3>) -> Self {
        self.cluster = Some(cluster.into());
        self
    }
    /// Sets `shared_memory_bytes` (dynamic shared memory per block, in bytes).
    pub fn shared_memory_bytes(mut self, bytes: u32) -> Self {
        self.shared_memory_bytes = bytes;
        self
    }
    /// Sets `cooperative`.
    pub fn cooperative(mut self, on: bool) -> Self {
        self.cooperative = on;
        self
    }
    /// Sets `programmatic_stream_serialization`.
    pub fn programmatic_stream_serialization(mut self, on: bool) -> Self {
        self.programmatic_stream_serialization = on;
        self
    }
    /// Sets `priority`.
    pub fn priority(mut self, priority: i32) -> Self {
        self.priority = Some(priority);
        self
    }

    /// The C struct.
    pub fn to_raw(&self) -> sys::cucore_launch_config_t {
        let mut flags = 0u32;
        if self.cooperative {
            flags |= sys::CUCORE_LAUNCH_COOPERATIVE as u32;
        }
        if self.programmatic_stream_serialization {
            flags |= sys::CUCORE_LAUNCH_PROGRAMMATIC_STREAM_SERIALIZATION as u32;
        }
        if self.priority.is_some() {
            flags |= sys::CUCORE_LAUNCH_PRIORITY as u32;
        }
        sys::cucore_launch_config_t {
            struct_size: std::mem::size_of::<sys::cucore_launch_config_t>() as u32,
            grid: self.grid.to_array(),
            block: self.block.to_array(),
            cluster: self.cluster.map_or([0, 0, 0], Dim3::to_array),
            shared_memory_bytes: self.shared_memory_bytes,
            flags,
            priority: self.priority.unwrap_or(0),
        }
    }

    /// The configuration a C struct describes (as a graph's kernel node reports it): a cluster
    /// of all zeros is none, and the priority counts only with `CUCORE_LAUNCH_PRIORITY`.
    pub fn from_raw(raw: &sys::cucore_launch_config_t) -> LaunchConfig {
        let flag = |f: sys::cucore_launch_flag_t| raw.flags & f as u32 != 0;
        LaunchConfig {
            grid: Dim3::from(raw.grid),
            block: Dim3::from(raw.block),
            cluster: if raw.cluster == [0, 0, 0] { None } else { Some(Dim3::from(raw.cluster)) },
            shared_memory_bytes: raw.shared_memory_bytes,
            cooperative: flag(sys::CUCORE_LAUNCH_COOPERATIVE),
            programmatic_stream_serialization: flag(sys::CUCORE_LAUNCH_PROGRAMMATIC_STREAM_SERIALIZATION),
            priority: if flag(sys::CUCORE_LAUNCH_PRIORITY) { Some(raw.priority) } else { None },
        }
    }

    /// Checks the configuration for `kernel` on `device` without launching, with the message a
    /// launch would fail with (`cucore_launch_config_validate`): a block larger than the
    /// kernel or device allows, a grid beyond the device's limits, too much dynamic shared
    /// memory, a cluster on a device below compute capability 9.0, a cooperative grid larger
    /// than can be resident at once.
    pub fn validate(&self, kernel: &Kernel, device: &Device) -> Result<()> {
        let raw = self.to_raw();
        // SAFETY: a valid struct and live handles.
        check(unsafe { sys::cucore_launch_config_validate(&raw, kernel.as_raw(), device.as_raw()) })
    }
}

/// Plain data a kernel can take by value: its bytes are the argument (cuda.core cannot pass
/// structs by value; this can). Implemented for the integer and float primitives, `bool`,
/// [`DevicePointer`] and arrays of such; declare it for your own types with
/// `unsafe impl DeviceRepr for MyStruct {}`. Raw pointers do not implement it: see
/// [the module's rule](mod@crate::launch#what-the-safe-launch-accepts).
///
/// # Safety
/// The type is `#[repr(C)]` (or `#[repr(transparent)]`, or a primitive) and has exactly the
/// size, alignment and field layout of the kernel's parameter type, and holds nothing whose
/// meaning is lost when its bytes are copied to the device (no host references, no `Drop`: it
/// is `Copy`). Any address it holds (a pointer field) is valid for what the kernel does with
/// it until the kernel has run.
pub unsafe trait DeviceRepr: Copy {}

macro_rules! device_repr {
    ($($t:ty),*) => { $(
        // SAFETY: a primitive whose layout equals the C type of the same size.
        unsafe impl DeviceRepr for $t {}
    )* };
}
device_repr!(i8, i16, i32, i64, u8, u16, u32, u64, isize, usize, f32, f64, bool);
// SAFETY: an array is its elements back to back, as a C array inside a struct is.
unsafe impl<T: DeviceRepr, const N: usize> DeviceRepr for [T; N] {}

/// A device address passed to a kernel's pointer parameter (`T *`): 8 bytes, the address. The
/// safe [`launch`] refuses raw pointers, whose validity it cannot know; making a
/// `DevicePointer` is where the caller vouches for one, hence `unsafe`.
///
/// A [`Buffer`] needs no `DevicePointer`: pass `&buffer` (its address is the library's own).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct DevicePointer(u64);

impl DevicePointer {
    /// The address `address` (a `CUdeviceptr`, or a host address the device can reach).
    ///
    /// # Safety
    /// Until every kernel launched with it has run, `address` points at memory the launch's
    /// device may access as the kernel does (read or write, as many bytes as it touches):
    /// allocated, not freed, and not used by anything else in a way that races with the kernel.
    pub const unsafe fn from_address(address: u64) -> DevicePointer {
        DevicePointer(address)
    }

    /// The address of `ptr` (a device pointer, or host memory the device can reach).
    ///
    /// # Safety
    /// As [`DevicePointer::from_address`].
    pub unsafe fn from_ptr<T>(ptr: *const T) -> DevicePointer {
        DevicePointer(ptr as usize as u64)
    }

    /// The address.
    pub const fn address(self) -> u64 {
        self.0
    }
}

// SAFETY: repr(transparent) over a u64, the size and layout of a device pointer parameter; its
// constructors are unsafe, so the address was vouched for by whoever made it.
unsafe impl DeviceRepr for DevicePointer {}

/// A kernel argument: where its bytes are and how many (the argument pointer and size that
/// `cucore_launch` takes).
///
/// # Safety
/// `kernel_arg` returns a pointer to `size` readable bytes that stay valid and unchanged until
/// the launch that asked returns: inside `self`, or inside `scratch` (8 bytes, aligned to 8,
/// owned by that launch), which is for arguments whose bytes must be computed (a buffer's
/// address). Any address among those bytes is valid for what the kernel does with it (the
/// rule of [`DevicePointer`]), since the safe [`launch`] takes every `KernelArg`.
pub unsafe trait KernelArg {
    /// The argument's bytes as `(pointer, size)`; `scratch` is storage that lives for the launch.
    fn kernel_arg(&self, scratch: &mut u64) -> Result<(*const c_void, usize)>;
}

// SAFETY: the bytes are the value itself, borrowed for the launch.
unsafe impl<T: DeviceRepr> KernelArg for T {
    #[inline]
    fn kernel_arg(&self, _scratch: &mut u64) -> Result<(*const c_void, usize)> {
        Ok((self as *const T as *const c_void, std::mem::size_of::<T>()))
    }
}

// SAFETY: the bytes are the buffer's device address, written into the launch's scratch slot.
unsafe impl KernelArg for Buffer {
    #[inline]
    fn kernel_arg(&self, scratch: &mut u64) -> Result<(*const c_void, usize)> {
        *scratch = self.address()?;
        Ok((scratch as *const u64 as *const c_void, std::mem::size_of::<u64>()))
    }
}

// SAFETY: as for Buffer.
unsafe impl KernelArg for &Buffer {
    #[inline]
    fn kernel_arg(&self, scratch: &mut u64) -> Result<(*const c_void, usize)> {
        (**self).kernel_arg(scratch)
    }
}

/// How many arguments [`launch`] packs on the stack; more are packed on the heap.
pub const MAX_STACK_ARGS: usize = 16;

fn pack(
    args: &[&dyn KernelArg],
    scratch: &mut [u64],
    pointers: &mut [*const c_void],
    sizes: &mut [usize],
) -> Result<()> {
    for (((arg, slot), pointer), size) in
        args.iter().zip(scratch.iter_mut()).zip(pointers.iter_mut()).zip(sizes.iter_mut())
    {
        let (p, n) = arg.kernel_arg(slot)?;
        *pointer = p;
        *size = n;
    }
    Ok(())
}

/// Packs `args` (on the stack up to [`MAX_STACK_ARGS`], on the heap beyond) and calls `f` with
/// the argument pointers and sizes, which stay valid for that call: the launch and the graph
/// calls that take kernel arguments share it.
#[inline]
pub(crate) fn with_packed_args<R>(
    args: &[&dyn KernelArg],
    f: impl FnOnce(&[*const c_void], &[usize]) -> Result<R>,
) -> Result<R> {
    let n = args.len();
    if n <= MAX_STACK_ARGS {
        let mut scratch = [0u64; MAX_STACK_ARGS];
        let mut pointers = [ptr::null::<c_void>(); MAX_STACK_ARGS];
        let mut sizes = [0usize; MAX_STACK_ARGS];
        pack(args, &mut scratch[..n], &mut pointers[..n], &mut sizes[..n])?;
        f(&pointers[..n], &sizes[..n])
    } else {
        let mut scratch = vec![0u64; n];
        let mut pointers = vec![ptr::null::<c_void>(); n];
        let mut sizes = vec![0usize; n];
        pack(args, &mut scratch, &mut pointers, &mut sizes)?;
        f(&pointers, &sizes)
    }
}

/// The argument arrays as the C ABI takes them: NULL for both when there are no arguments.
#[inline]
pub(crate) fn arg_arrays(args: &[*const c_void], sizes: &[usize]) -> (*const *const c_void, *const usize) {
    debug_assert_eq!(args.len(), sizes.len());
    if args.is_empty() {
        (ptr::null(), ptr::null())
    } else {
        (args.as_ptr(), sizes.as_ptr())
    }
}

/// Launches `kernel` into `stream` with `config` and `args` (`cucore_launch`; cuda.core's
/// `launch`). The arguments are copied by the driver before this returns, so they may be
/// temporaries. A count or size that does not match the kernel's parameters (where the driver
/// reports them) and a configuration the kernel or device cannot run are
/// `Status::InvalidArgument` with a message naming the problem. Raw pointers are refused at
/// compile time ([`DevicePointer`] takes them, `unsafe`; see
/// [the module's rule](mod@crate::launch#what-the-safe-launch-accepts)). On the stream of a
/// [`GraphBuilder`](crate::GraphBuilder) that is building, the launch becomes a kernel node of
/// the graph instead of running.
pub fn launch(stream: &Stream, config: &LaunchConfig, kernel: &Kernel, args: &[&dyn KernelArg]) -> Result<()> {
    let raw = config.to_raw();
    // SAFETY: every pointer names `sizes[i]` bytes inside an argument borrowed for this call or
    // inside the packing's scratch storage, which lives until the call returns.
    with_packed_args(args, |pointers, sizes| unsafe { launch_raw_unchecked(stream, &raw, kernel, pointers, sizes) })
}

/// Launches with argument pointers and sizes as `cucore_launch` takes them, for callers that
/// pack arguments themselves. `Status::InvalidArgument` when the slices' lengths differ.
///
/// # Safety
/// `args[i]` points at `sizes[i]` readable bytes, the bytes of argument `i`, and every address
/// among those bytes is valid for what the kernel does with it until the kernel has run (as for
/// [`DevicePointer`]).
pub unsafe fn launch_raw(
    stream: &Stream,
    config: &LaunchConfig,
    kernel: &Kernel,
    args: &[*const c_void],
    sizes: &[usize],
) -> Result<()> {
    if args.len() != sizes.len() {
        return Err(Error::binding(
            Status::InvalidArgument,
            format!("launch_raw: {} argument pointers but {} sizes", args.len(), sizes.len()),
        ));
    }
    let raw = config.to_raw();
    // SAFETY: the caller's contract; the lengths agree.
    unsafe { launch_raw_unchecked(stream, &raw, kernel, args, sizes) }
}

/// # Safety
/// As [`launch_raw`], and `args.len() == sizes.len()`.
#[inline]
unsafe fn launch_raw_unchecked(
    stream: &Stream,
    config: &sys::cucore_launch_config_t,
    kernel: &Kernel,
    args: &[*const c_void],
    sizes: &[usize],
) -> Result<()> {
    // With no arguments the library takes NULL arrays.
    let (a, s) = arg_arrays(args, sizes);
    // SAFETY: live handles, a valid config; the caller vouches for the argument bytes.
    check(unsafe { sys::cucore_launch(stream.as_raw(), config, kernel.as_raw(), a, s, args.len()) })
}

/// Launches a kernel with arguments written as values: `launch!(stream, config, kernel, a, b,
/// c)` is `launch(&stream, &config, &kernel, &[&a, &b, &c])` (the arguments are borrowed, not
/// moved). Returns the `cucore::Result<()>` of [`launch`](crate::launch()).
#[macro_export]
macro_rules! launch {
    ($stream:expr, $config:expr, $kernel:expr $(, $arg:expr)* $(,)?) => {
        $crate::launch(&$stream, &$config, &$kernel, &[$(&$arg as &dyn $crate::KernelArg),*])
    };
}

impl Kernel {
    /// The largest cluster size `config` (its grid, block and shared memory; its cluster is
    /// ignored) can use for this kernel on `device` (`cucore_launch_max_potential_cluster_size`;
    /// `Status::NotSupported` below compute capability 9.0).
    pub fn max_potential_cluster_size(&self, config: &LaunchConfig, device: &Device) -> Result<i32> {
        let raw = config.to_raw();
        let mut v: c_int = 0;
        // SAFETY: a valid struct, live handles, a valid out-pointer.
        check(unsafe { sys::cucore_launch_max_potential_cluster_size(&raw, self.as_raw(), device.as_raw(), &mut v) })?;
        Ok(v)
    }

    /// How many clusters of `config`'s cluster dimensions can be resident at once on `device`
    /// (`cucore_launch_max_active_clusters`).
    pub fn max_active_clusters(&self, config: &LaunchConfig, device: &Device) -> Result<i32> {
        let raw = config.to_raw();
        let mut v: c_int = 0;
        // SAFETY: as in `max_potential_cluster_size`.
        check(unsafe { sys::cucore_launch_max_active_clusters(&raw, self.as_raw(), device.as_raw(), &mut v) })?;
        Ok(v)
    }
}
