//! Helpers shared by the GPU test binaries (one per capability: device, stream, event,
//! memory). Without a driver or a device each test prints "skipped: <test>: <reason>" on
//! stderr and passes; it never fails for that. Within a binary the tests run one at a time
//! (a process-wide lock), because the live-object counts they compare are process-wide.
#![allow(dead_code, unused_imports)]

pub use std::os::raw::c_void;
pub use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
pub use std::sync::{Arc, Mutex, MutexGuard};
pub use std::thread;
pub use std::time::{Duration, Instant};

pub use cucore::{
    live_object_count, release_error_count, set_release_error_handler, Accessibility, Buffer, Context, Device,
    DeviceAttribute, DevicePoolOptions, Event, EventOptions, MemoryResource, MemoryResourceKind, ObjectType,
    PoolAttribute, Status, Stream, StreamOptions,
};

pub static SERIAL: Mutex<()> = Mutex::new(());

pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Device 0, or None after printing why the test is skipped.
pub fn gpu(test: &str) -> Option<Device> {
    match Device::count() {
        Err(e) => {
            eprintln!("skipped: {}: no usable CUDA driver ({})", test, e);
            None
        }
        Ok(0) => {
            eprintln!("skipped: {}: no CUDA device visible", test);
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
            eprintln!("skipped: {}: the device has no memory pools ({})", test, e);
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

/// A recognisable byte pattern.
pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

pub const ALL_KINDS: [ObjectType; 7] = [
    ObjectType::Any,
    ObjectType::Device,
    ObjectType::Context,
    ObjectType::Stream,
    ObjectType::Event,
    ObjectType::MemoryResource,
    ObjectType::Buffer,
];

pub fn live_counts() -> Vec<usize> {
    ALL_KINDS.iter().map(|k| live_object_count(*k).unwrap()).collect()
}
