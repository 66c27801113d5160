//! Communicators against the tests' fakes: the fake driver (CUCORE_TEST_FAKE_CUDA, two devices)
//! and the fake NCCL beside it (libcucore_fake_nccl.so, tests/fake_nccl), which computes
//! collectives on the host, so that the binding's paths run through the real libcucore on every
//! machine. libcucore loads each once per process, from CUCORE_CUDA_DRIVER_PATH and
//! CUCORE_NCCL_PATH, which this binary sets before its first call; without them every test skips
//! with the reason. The scenarios of communicator/scenarios.rs, and what only a fake can do:
//! NCCL failing on purpose (FAKE_NCCL_FAIL). (Helpers and skip rules: common/mod.rs.)

#[macro_use]
mod common;
#[macro_use]
#[path = "communicator/scenarios.rs"]
mod scenarios;


use common::*;
use cucore::{group, Communicator, DataType, Group, ReduceOp};

/// Devices 0 and 1 of the fake driver, with the fake NCCL, or None after printing why the test
/// is skipped.
fn fakes(test: &str) -> Option<Vec<Device>> {
    use_fake_libraries(test, "libcucore_fake_nccl.so", "CUCORE_NCCL_PATH", &[])?;
    gpu(test)?;
    Some(vec![Device::get(0).unwrap(), Device::get(1).unwrap()])
}

communicator_tests!(fakes);

/// Makes the fake NCCL fail every call of `entry` (read on each call) until dropped.
struct FailEntry;

impl FailEntry {
    fn new(entry: &str) -> FailEntry {
        std::env::set_var("FAKE_NCCL_FAIL", entry);
        FailEntry
    }
}

impl Drop for FailEntry {
    fn drop(&mut self) {
        std::env::remove_var("FAKE_NCCL_FAIL");
    }
}

#[test]
fn nccl_failures_are_errors_naming_nccl() {
    let _serial = serial();
    let Some(devices) = fakes("nccl_failures_are_errors_naming_nccl") else { return };
    let ranks = scenarios::Ranks::new(&devices);
    let buf = ranks.buffer::<f32>(0, &[1.0, 2.0]);
    {
        let _fail = FailEntry::new("ncclAllReduce");
        let e = ranks.comms[0].all_reduce(&buf, &buf, 0, DataType::Float32, ReduceOp::Sum, &ranks.streams[0]).unwrap_err();
        assert_eq!(e.status, Status::Cuda, "{}", e);
        assert!(e.message.contains("ncclAllReduce"), "{}", e);
    }
    {
        let _fail = FailEntry::new("ncclGetUniqueId");
        let e = cucore::CommunicatorId::create().unwrap_err();
        assert_eq!(e.status, Status::Cuda, "{}", e);
    }
    {
        let _fail = FailEntry::new("ncclCommInitAll");
        let before = live_object_count(ObjectType::Any).unwrap();
        assert_eq!(Communicator::create_all(&devices).unwrap_err().status, Status::Cuda);
        assert_eq!(live_object_count(ObjectType::Any).unwrap(), before, "all or nothing");
    }
    // Nothing failed for good: the communicators still reduce.
    let other = ranks.buffer::<f32>(1, &[10.0, 20.0]);
    group(|| {
        ranks.comms[0].all_reduce(&buf, &buf, 0, DataType::Float32, ReduceOp::Sum, &ranks.streams[0])?;
        ranks.comms[1].all_reduce(&other, &other, 0, DataType::Float32, ReduceOp::Sum, &ranks.streams[1])
    })
    .unwrap();
    assert_eq!(ranks.values::<f32>(0, &buf), vec![11.0, 22.0]);
    ranks.comms[0].check().unwrap();
}

#[test]
fn a_failing_group_end_is_an_error_or_a_release_error() {
    let _serial = serial();
    let Some(_devices) = fakes("a_failing_group_end_is_an_error_or_a_release_error") else { return };
    let _fail = FailEntry::new("ncclGroupEnd");
    let e = Group::start().unwrap().end().unwrap_err();
    assert_eq!(e.status, Status::Cuda, "{}", e);
    assert!(e.message.contains("ncclGroupEnd"), "{}", e);
    assert_eq!(Group::depth(), 0, "a failed end still closes the group");
    let e = group(|| Ok(())).unwrap_err();
    assert_eq!(e.status, Status::Cuda, "{}", e);

    let before = release_error_count().unwrap();
    drop(Group::start().unwrap());
    assert_eq!(release_error_count().unwrap(), before + 1, "the guard's quiet end is reported");
    assert_eq!(Group::depth(), 0);
}
