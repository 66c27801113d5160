//! Green contexts and device resources on the driver this process finds (a real GPU; without one
//! every test skips): splits and their rules, green contexts with streams, events and
//! allocations, release in any order, workqueues per driver version, and where blocks run
//! (%smid). The scenarios are device_resources/scenarios.rs, which
//! device_resources_fake_driver.rs runs against the tests' fake driver too. (Helpers and skip
//! rules: common/mod.rs.)

#[macro_use]
mod common;
#[macro_use]
#[path = "device_resources/scenarios.rs"]
mod scenarios;

use common::*;

/// Device 0 of the driver found, or None after printing why the test is skipped.
fn device(test: &str) -> Option<(Device, scenarios::Env)> {
    let fake = std::env::var("CUCORE_TEST_FAKE_DRIVER").map_or(false, |v| v == "1");
    gpu(test).map(|dev| (dev, scenarios::Env { fake }))
}

green_tests!(device);
