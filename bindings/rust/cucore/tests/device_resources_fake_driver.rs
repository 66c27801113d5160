//! The green-context scenarios (device_resources/scenarios.rs) against the tests' fake driver
//! (the shared library cucore_fake_cuda, named by CUCORE_TEST_FAKE_CUDA; without it every test
//! skips with that reason). libcucore loads its driver once per process, from
//! CUCORE_CUDA_DRIVER_PATH, which this binary sets before its first call. (Helpers and skip
//! rules: common/mod.rs.)

#[macro_use]
mod common;
#[macro_use]
#[path = "device_resources/scenarios.rs"]
mod scenarios;

use std::sync::Once;

use common::*;

/// Device 0 of the fake driver (two devices), or None after printing why the test is skipped.
fn fake_device(test: &str) -> Option<(Device, scenarios::Env)> {
    static LOAD: Once = Once::new();
    let path = match std::env::var_os("CUCORE_TEST_FAKE_CUDA") {
        Some(p) if std::path::Path::new(&p).is_file() => p,
        _ => {
            skip(test, "CUCORE_TEST_FAKE_CUDA names no fake driver library (CTest's `rust` test sets it)");
            return None;
        }
    };
    // Before any library call of this process, under the tests' lock.
    LOAD.call_once(|| {
        std::env::set_var("CUCORE_CUDA_DRIVER_PATH", &path);
        std::env::set_var("FAKE_CUDA_DEVICES", "2");
    });
    let dev = gpu(test)?;
    Some((dev, scenarios::Env { fake: true }))
}

green_tests!(fake_device);
