//! Graphs on the driver this process finds (a real GPU; without one every test skips): explicit
//! definitions, capture, host callbacks, copies and fills, updates, graph memory, DOT output,
//! kernels and conditional nodes. The scenarios are graph/scenarios.rs, which
//! graph_fake_driver.rs runs against the tests' fake driver too. (Helpers and skip rules:
//! common/mod.rs.)

#[macro_use]
mod common;
#[macro_use]
#[path = "graph/scenarios.rs"]
mod scenarios;

use common::*;

/// Device 0 of the driver found, or None after printing why the test is skipped. A run that
/// loads the fake driver itself (CUCORE_TEST_FAKE_DRIVER=1, as the Python tests mark it) says so.
fn device(test: &str) -> Option<(Device, scenarios::Env)> {
    let fake = std::env::var("CUCORE_TEST_FAKE_DRIVER").map_or(false, |v| v == "1");
    gpu(test).map(|dev| (dev, scenarios::Env { fake }))
}

graph_tests!(device);
