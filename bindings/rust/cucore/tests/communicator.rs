//! Communicators on two real GPUs with the NCCL the process finds (libnccl.so.2, or
//! CUCORE_NCCL_PATH): the scenarios of communicator/scenarios.rs, each reading its results back.
//! They skip, saying why, without a driver, below 2 GPUs or without NCCL. NVLink multicast (NVLS)
//! stays off: this binary sets NCCL_NVLS_ENABLE=0 before NCCL is loaded. The same scenarios run on
//! the tests' fakes in communicator_fake.rs. (Helpers and skip rules: common/mod.rs.)

#[macro_use]
mod common;
#[macro_use]
#[path = "communicator/scenarios.rs"]
mod scenarios;

use std::sync::Once;

use common::*;

/// Devices 0 and 1, or None after printing why the test is skipped.
fn two_gpus(test: &str) -> Option<Vec<Device>> {
    static NVLS_OFF: Once = Once::new();
    // Before NCCL is loaded, under the tests' lock: nothing reads the environment concurrently.
    NVLS_OFF.call_once(|| std::env::set_var("NCCL_NVLS_ENABLE", "0"));
    gpu(test)?;
    let count = Device::count().unwrap();
    if count < 2 {
        skip(test, &format!("needs 2 GPUs, {} visible", count));
        return None;
    }
    if let Err(e) = cucore::communicator::library_version() {
        skip(test, &format!("no NCCL ({})", e));
        return None;
    }
    Some(vec![Device::get(0).unwrap(), Device::get(1).unwrap()])
}

communicator_tests!(two_gpus);
