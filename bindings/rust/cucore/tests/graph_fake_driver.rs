//! The graph scenarios (graph/scenarios.rs) against the tests' fake driver (tests/fake_driver,
//! the shared library cucore_fake_cuda), so that the binding's graph paths run through the real
//! libcucore on machines without a GPU. CTest's `rust` test names the library in
//! CUCORE_TEST_FAKE_CUDA; without it every test skips with that reason. libcucore loads its
//! driver once per process, from CUCORE_CUDA_DRIVER_PATH, which this binary sets before its first
//! call (every test goes through `fake_device`). (Helpers and skip rules: common/mod.rs.)

#[macro_use]
mod common;
#[macro_use]
#[path = "graph/scenarios.rs"]
mod scenarios;

use std::sync::Once;

use common::*;

/// Device 0 of the fake driver (two devices), or None after printing why the test is skipped.
fn fake_device(test: &str) -> Option<(Device, scenarios::Env)> {
    static LOAD: Once = Once::new();
    let path = match std::env::var_os("CUCORE_TEST_FAKE_CUDA") {
        Some(p) if std::path::Path::new(&p).is_file() => p,
        _ => {
            skip(
                test,
                "CUCORE_TEST_FAKE_CUDA names no fake driver library (CTest's `rust` test sets it to \
                 cucore_fake_cuda's)",
            );
            return None;
        }
    };
    // Before any library call of this process, under the tests' lock: nothing reads the
    // environment concurrently.
    LOAD.call_once(|| {
        std::env::set_var("CUCORE_CUDA_DRIVER_PATH", &path);
        std::env::set_var("FAKE_CUDA_DEVICES", "2");
    });
    let dev = gpu(test)?;
    Some((dev, scenarios::Env { fake: true }))
}

graph_tests!(fake_device);
