//! Helpers shared by the test binaries (one per capability: device, stream, event, memory
//! (memory_resource, memory_pool, managed_memory, virtual_memory, user_memory, buffer, copy_3d),
//! program, object code, linker, program cache, kernel, launch, ...). Without a driver or a device
//! (or NVRTC, for compiles) each test prints "skipped: <test>: <reason>" on stderr and passes; it
//! never fails for that. Within a binary the tests run one at a time
//! (a process-wide lock), because the live-object counts they compare are process-wide.
#![allow(dead_code, unused_imports)]

pub use std::os::raw::c_void;
pub use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
pub use std::sync::{Arc, Mutex, MutexGuard};
pub use std::thread;
pub use std::time::{Duration, Instant};

pub use cucore::{
    live_object_count, release_error_count, set_release_error_handler, Accessibility, Buffer, Context, Device,
    DeviceAttribute, DeviceMemoryResourceOptions, Event, EventOptions, MemoryResource, MemoryResourceKind, ObjectType,
    PoolAttribute, Status, Stream, StreamOptions,
};

mod arena;
pub use arena::{peek, poke, Arena, Log};
mod skips;
pub use skips::skip;

/// Points this process, once and before any library call, at the fake driver (`CUCORE_TEST_FAKE_CUDA`, 2
/// devices) and at the fake library `companion` built beside it (`libcucore_fake_nccl.so`, named to the
/// library through the environment variable `variable`), with the extra variables `extra`. None after
/// printing why `test` is skipped.
pub fn use_fake_libraries(test: &str, companion: &str, variable: &str, extra: &[(&str, &str)]) -> Option<()> {
    static LOAD: std::sync::Once = std::sync::Once::new();
    let cuda = match std::env::var_os("CUCORE_TEST_FAKE_CUDA") {
        Some(p) if std::path::Path::new(&p).is_file() => std::path::PathBuf::from(p),
        _ => {
            skip(test, "CUCORE_TEST_FAKE_CUDA names no fake driver library (CTest's `rust` test sets it)");
            return None;
        }
    };
    let library = cuda.with_file_name(companion);
    if !library.is_file() {
        skip(test, &format!("no {} at {} (the tests' CMake builds it beside the fake driver)", companion, library.display()));
        return None;
    }
    // Under the tests' lock, before the library reads these.
    LOAD.call_once(|| {
        std::env::set_var("CUCORE_CUDA_DRIVER_PATH", &cuda);
        std::env::set_var(variable, &library);
        std::env::set_var("FAKE_CUDA_DEVICES", "2");
        for (name, value) in extra {
            std::env::set_var(name, value);
        }
    });
    Some(())
}

pub static SERIAL: Mutex<()> = Mutex::new(());

pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Device 0, or None after printing why the test is skipped.
pub fn gpu(test: &str) -> Option<Device> {
    match Device::count() {
        Err(e) => {
            skip(test, &format!("no usable CUDA driver ({})", e));
            None
        }
        Ok(0) => {
            skip(test, "no CUDA device visible");
            None
        }
        Ok(_) => Some(Device::get(0).expect("Device::get(0)")),
    }
}

#[macro_export]
macro_rules! require_gpu {
    ($name:expr) => {
        match $crate::common::gpu($name) {
            Some(d) => d,
            None => return,
        }
    };
}

/// Waits (polling) until `flag` is set, at most `limit`; whether it was set.
pub fn wait_for(flag: &AtomicBool, limit: Duration) -> bool {
    let start = Instant::now();
    while !flag.load(Ordering::SeqCst) {
        if start.elapsed() > limit {
            return false;
        }
        thread::sleep(Duration::from_millis(1));
    }
    true
}

/// A gate a host function can wait on (at most 10 s, so a failing test never hangs).
#[derive(Clone)]
pub struct Gate(pub Arc<AtomicBool>);

impl Gate {
    pub fn new() -> Gate {
        Gate(Arc::new(AtomicBool::new(false)))
    }
    pub fn open(&self) {
        self.0.store(true, Ordering::SeqCst)
    }
    pub fn wait(&self) {
        wait_for(&self.0, Duration::from_secs(10));
    }
}

pub fn hex(s: &str) -> i32 {
    i32::from_str_radix(s, 16).unwrap_or_else(|_| panic!("not hex: {:?}", s))
}

/// The device's default memory resource, or None after printing why the test is skipped (a
/// device without memory pools).
pub fn default_pool(test: &str, dev: &Device) -> Option<MemoryResource> {
    match MemoryResource::device_default(dev) {
        Ok(mr) => Some(mr),
        Err(e) if e.status == Status::NotSupported => {
            skip(test, &format!("the device has no memory pools ({})", e));
            None
        }
        Err(e) => panic!("MemoryResource::device_default: {}", e),
    }
}

#[macro_export]
macro_rules! require_pool {
    ($name:expr, $dev:expr) => {
        match $crate::common::default_pool($name, $dev) {
            Some(mr) => mr,
            None => return,
        }
    };
}

/// The value, or None after printing why the test is skipped (the feature is not supported).
pub fn supported<T>(test: &str, what: &str, result: cucore::Result<T>) -> Option<T> {
    match result {
        Ok(v) => Some(v),
        Err(e) if e.status == Status::NotSupported => {
            skip(test, &format!("{} not supported here ({})", what, e));
            None
        }
        Err(e) => panic!("{}: {}", what, e),
    }
}

/// A recognisable byte pattern.
pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

pub const ALL_KINDS: [ObjectType; 12] = [
    ObjectType::Any,
    ObjectType::Device,
    ObjectType::Context,
    ObjectType::Stream,
    ObjectType::Event,
    ObjectType::MemoryResource,
    ObjectType::Buffer,
    ObjectType::Program,
    ObjectType::ObjectCode,
    ObjectType::Linker,
    ObjectType::Kernel,
    ObjectType::ProgramCache,
];

pub fn live_counts() -> Vec<usize> {
    ALL_KINDS.iter().map(|k| live_object_count(*k).unwrap()).collect()
}

// ---- Compile and launch (program, object_code, linker, program_cache, kernel, launch) ----------

pub use cucore::{
    compiler_version, launch, CodeType, CompilerBackend, DevicePointer, DeviceRepr, Dim3, GlobalInfo, Kernel, KernelArg,
    KernelAttribute, LaunchConfig, Linker, LinkerOptions, ObjectCode, ParamInfo, Program, ProgramCache,
    ProgramCacheStats, ProgramOptions,
};

/// Whether NVRTC loads; prints why the test is skipped when it does not.
pub fn nvrtc(test: &str) -> bool {
    match compiler_version(CompilerBackend::Nvrtc) {
        Ok(_) => true,
        Err(e) if e.status == Status::NotSupported => {
            skip(test, &format!("NVRTC is not installed ({})", e));
            false
        }
        Err(e) => panic!("compiler_version(NVRTC): {}", e),
    }
}

#[macro_export]
macro_rules! require_nvrtc {
    ($name:expr) => {
        if !$crate::common::nvrtc($name) {
            return;
        }
    };
}

/// Whether nvJitLink loads; prints why the test is skipped when it does not.
pub fn nvjitlink(test: &str) -> bool {
    match compiler_version(CompilerBackend::NvJitLink) {
        Ok(_) => true,
        Err(e) if e.status == Status::NotSupported => {
            skip(test, &format!("nvJitLink is not installed ({})", e));
            false
        }
        Err(e) => panic!("compiler_version(NVJITLINK): {}", e),
    }
}

/// The architecture compiles without a GPU use.
pub const ARCH: &str = "sm_90";

/// `"sm_XY"` of the device.
pub fn sm_arch(dev: &Device) -> String {
    format!("sm_{}", dev.arch().unwrap())
}

/// `y = a * x + y` over `n` floats (parameters: float, float*, float*, unsigned).
pub const SAXPY: &str = r#"
extern "C" __global__ void saxpy(float a, const float *x, float *y, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"#;

/// Compiles C++ `source` with `options` to `target` (panics on failure: callers checked NVRTC).
pub fn compile(source: &str, options: &ProgramOptions, target: CodeType, names: &[&str]) -> ObjectCode {
    let program = Program::create(source, CodeType::Cxx, options).expect("Program::create");
    match program.compile(target, names, None) {
        Ok(code) => code,
        Err(e) => panic!("compile to {}: {}\nlog:\n{}", target, e, program.log().unwrap_or_default()),
    }
}

/// Compiles `source` for the device to a cubin and takes `kernel` from it.
pub fn gpu_kernel(dev: &Device, source: &str, kernel: &str) -> Kernel {
    let code = compile(source, &ProgramOptions::default().arch(&sm_arch(dev)), CodeType::Cubin, &[]);
    code.get_kernel(kernel).expect("get_kernel")
}

pub fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

pub fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect()
}

pub fn u32s(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks_exact(4).map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// A fresh directory under the system's temporary directory (removed by `TempDir`'s drop).
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        let path = std::env::temp_dir().join(format!(
            "cucore-rust-{}-{}-{}-{}",
            tag,
            std::process::id(),
            nanos,
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }
    pub fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The live counts of the compile-and-launch objects.
pub fn compile_counts() -> [usize; 5] {
    [
        live_object_count(ObjectType::Program).unwrap(),
        live_object_count(ObjectType::ObjectCode).unwrap(),
        live_object_count(ObjectType::Linker).unwrap(),
        live_object_count(ObjectType::Kernel).unwrap(),
        live_object_count(ObjectType::ProgramCache).unwrap(),
    ]
}
