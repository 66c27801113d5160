//! System information and checkpointing against the tests' fakes: the fake driver
//! (CUCORE_TEST_FAKE_CUDA, tests/fake_driver) and the fake NVML beside it
//! (libcucore_fake_nvml.so, tests/fake_nvml), so the binding's paths run on machines without a GPU.
//! libcucore loads each once per process, from CUCORE_CUDA_DRIVER_PATH and CUCORE_NVML_PATH, which
//! this binary sets before its first call. Without them every test skips with the reason.
//! (Helpers and skip rules: common/mod.rs.)

#[macro_use]
mod common;


use common::*;
use cucore::checkpoint::{Process, ProcessState};
use cucore::system::{
    self, Clock, ComputeMode, Control, FieldValue, FieldValueKind, MemoryInfo, Query, Relation, SystemDevice,
    SystemEvent, SystemEventSet, Text, Utilization,
};
use cucore::Status;

fn fakes(test: &str) -> Option<Device> {
    use_fake_libraries(test, "libcucore_fake_nvml.so", "CUCORE_NVML_PATH", &[("FAKE_NVML_DEVICES", "2")])?;
    gpu(test)
}

#[test]
fn system_information_from_the_fake_nvml() {
    let _serial = serial();
    let Some(cuda0) = fakes("system_information_from_the_fake_nvml") else { return };
    assert_eq!(system::driver_version().unwrap(), "580.65.06");
    assert_eq!(system::kernel_mode_driver_version().unwrap(), vec![580, 65, 6]);
    assert_eq!(system::nvml_version().unwrap(), "13.580.65.06");
    assert_eq!(system::cuda_driver_version().unwrap(), 13000);
    assert_eq!(system::device_count().unwrap(), 2);

    let d = SystemDevice::get(1).unwrap();
    assert_eq!(d.index().unwrap(), 1);
    assert_eq!(d.handle().unwrap() as usize, 2, "the fake's nvmlDevice_t of GPU 1");
    assert_eq!(d.name().unwrap(), "Fake GPU 1");
    assert_eq!(d.uuid().unwrap(), "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f");
    let pci = d.pci_info().unwrap();
    assert_eq!((pci.bus_id.as_str(), pci.domain, pci.bus, pci.device), ("00000000:02:00.0", 0, 2, 0));
    assert_eq!(pci.pci_device_id, 0x233010de);
    let total = (80u64 << 30) + 1;
    assert_eq!(d.memory_info().unwrap(), MemoryInfo { total, used: 1 << 30, free: total - (1 << 30) });
    assert_eq!(d.utilization().unwrap(), Utilization { gpu: 11, memory: 21 });
    assert_eq!(d.temperature().unwrap(), 41);
    assert_eq!(d.power_usage().unwrap(), 100001);
    assert_eq!(d.power_limit().unwrap(), 700000);
    assert_eq!(d.clock(Clock::Sm).unwrap(), 1756);
    assert_eq!(d.max_clock(Clock::Video).unwrap(), 1710);
    assert_eq!(d.compute_mode().unwrap(), ComputeMode::Default);
    assert!(d.compute_running_processes().unwrap().is_empty());

    assert_eq!(SystemDevice::by_uuid(&d.uuid().unwrap()).unwrap(), d);
    assert_eq!(SystemDevice::by_pci_bus_id("0000:02:00.0").unwrap(), d);
    assert_eq!(d.to_cuda_device().unwrap().ordinal().unwrap(), 1);
    assert_eq!(cuda0.to_system_device().unwrap().index().unwrap(), 0);
    assert_eq!(d.clone(), d);

    let e = SystemDevice::get(7).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(e.message.contains("not below the number of GPUs NVML sees (2)"), "{}", e.message);
    let e = SystemDevice::by_uuid("GPU-ffffffff-0000-0000-0000-000000000000").unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(e.message.contains("NVML_ERROR_NOT_FOUND"), "{}", e.message);
    assert_eq!(SystemDevice::by_uuid("a\0b").unwrap_err().status, Status::InvalidArgument);
}

#[test]
fn the_generic_readers_against_the_fake_nvml() {
    let _serial = serial();
    let Some(_cuda0) = fakes("the_generic_readers_against_the_fake_nvml") else { return };
    let (d0, d1) = (SystemDevice::get(0).unwrap(), SystemDevice::get(1).unwrap());
    assert_eq!(system::driver_branch().unwrap(), "r580_00");
    assert_eq!(system::process_name(42).unwrap(), "fake-process-42");
    let e = system::process_name(0).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    assert_eq!(system::last_nvml_result(), 6, "NVML_ERROR_NOT_FOUND");
    assert_eq!(d0.query(Query::Architecture, 0, 0).unwrap(), vec![9]);
    assert_eq!(d0.query(Query::ComputeCapability, 0, 0).unwrap(), vec![9, 0]);
    assert_eq!(d1.query(Query::CpuAffinity, 0, 0).unwrap(), vec![4, 5, 6, 7]);
    assert_eq!(d0.query(Query::ClockOffsets, 1, 2).unwrap(), vec![12, -500, 1000]);
    assert_eq!(d0.query(Query::DynamicPstates, 0, 0).unwrap().len(), 33);
    assert_eq!(d0.query(Query::FanSpeed, -1, 0).unwrap_err().status, Status::InvalidArgument);
    assert_eq!(system::last_nvml_result(), 0, "refused before NVML");
    assert_eq!(d1.text_of(Text::Serial, 0).unwrap(), "1658220000001");
    assert_eq!(d0.text_of(Text::InforomVersion, 2).unwrap(), "1.0");
    d0.control(Control::FanSpeed, 0, 64).unwrap();
    assert_eq!(d0.query(Query::FanSpeed, 0, 0).unwrap(), vec![64]);
    d0.control(Control::FanDefaultSpeed, 0, 0).unwrap();
    assert_eq!(d0.query(Query::FanSpeed, 0, 0).unwrap(), vec![30]);
    assert_eq!(d0.related(Relation::NearestGpus, 40).unwrap(), vec![d1.clone()]);
    let e = d0.related(Relation::MigDevice, 0).unwrap_err();
    assert_eq!((e.status, system::last_nvml_result()), (Status::InvalidArgument, 6));
    assert_eq!(system::devices_with_cpu_affinity(1).unwrap(), vec![d0.clone()]);
    assert!(system::devices_with_cpu_affinity(99).unwrap().is_empty());
    let fields = d0.field_values(&[FieldValue::new(91), FieldValue::scoped(186, 0), FieldValue::new(5)]).unwrap();
    assert_eq!(fields[0].value, Ok(FieldValueKind::Unsigned(18)));
    assert_eq!(fields[1].value, Ok(FieldValueKind::Double(100.5)));
    assert_eq!(fields[2].value, Err(3), "NOT_SUPPORTED for that field alone");
    assert_eq!(fields[1].latency_usec, 7);
    d0.clear_field_values(&[FieldValue::new(91)]).unwrap();
    assert_eq!(d0.p2p_status(&d1, 0).unwrap(), 0);
    assert_eq!(d0.p2p_status(&d1, 3).unwrap(), 5);
    assert_eq!(d0.common_ancestor(&d1).unwrap(), 40);
    assert_eq!(d0.common_ancestor(&d0).unwrap(), 0);

    // Events: none waits as NVML's TIMEOUT; an XID is not posted here (the fake's control is a C
    // export of libcucore_fake_nvml.so, driven from Python), so the Rust side checks the paths.
    assert_eq!(d0.wait_event(0).unwrap_err().status, Status::InvalidArgument, "nothing registered");
    d0.register_events(0x8).unwrap();
    let e = d0.wait_event(5).unwrap_err();
    assert_eq!((e.status, system::last_nvml_result()), (Status::NotReady, 10));
    assert_eq!(d0.register_events(0x10).unwrap_err().status, Status::NotSupported);
}

#[test]
fn system_event_sets_against_the_fake_nvml() {
    let _serial = serial();
    let Some(_dev) = fakes("system_event_sets_against_the_fake_nvml") else { return };
    // Posting is a C export of libcucore_fake_nvml.so driven from Python (test_system.py); here the
    // paths: a set records from its registration on, so a wait finds none and times out.
    let before = cucore::live_object_count(cucore::ObjectType::SystemEventSet).unwrap();
    let set = system::register_events(system::EVENT_GPU_DRIVER_UNBIND | system::EVENT_GPU_DRIVER_BIND).unwrap();
    assert_eq!(cucore::live_object_count(cucore::ObjectType::SystemEventSet).unwrap(), before + 1);
    let e = set.wait(5, 4).unwrap_err();
    assert_eq!((e.status, system::last_nvml_result()), (Status::NotReady, 10), "{}", e.message);
    assert_eq!(set.wait(0, 0).unwrap_err().status, Status::InvalidArgument, "capacity 0");
    assert_eq!(system::last_nvml_result(), 0, "refused before NVML");
    let e = SystemEventSet::register(0x4).unwrap_err();
    assert_eq!((e.status, system::last_nvml_result()), (Status::NotSupported, 3), "{}", e.message);
    assert_eq!(SystemEventSet::register(0).unwrap_err().status, Status::InvalidArgument);
    let clone = set.clone();
    drop(set);
    assert_eq!(clone.wait(0, 1).unwrap_err().status, Status::NotReady, "the clone keeps the set");
    drop(clone);
    assert_eq!(cucore::live_object_count(cucore::ObjectType::SystemEventSet).unwrap(), before);
    let event = SystemEvent { event_type: system::EVENT_GPU_DRIVER_BIND, gpu_id: 0x0001_C100 };
    assert_eq!(event.pci_bus_id(), "00000001:C1:00.0");
    let gpu1 = SystemEvent { event_type: system::EVENT_GPU_DRIVER_UNBIND, gpu_id: 2 << 8 };
    assert_eq!(SystemDevice::by_pci_bus_id(&gpu1.pci_bus_id()).unwrap().index().unwrap(), 1, "the fake's GPU 1");
}

#[test]
fn the_checkpoint_cycle_against_the_fake_driver() {
    let _serial = serial();
    let Some(dev) = fakes("the_checkpoint_cycle_against_the_fake_driver") else { return };
    // The parent (cargo) is a live process that is not this one: the fake treats it as a CUDA process.
    let parent = std::os::unix::process::parent_id() as i32;
    let p = Process::new(parent);
    assert_eq!(p.pid(), parent);
    assert_eq!(p.state().unwrap(), ProcessState::Running);
    assert_eq!(p.restore_thread_id().unwrap(), parent + 1);
    p.lock(1000).unwrap();
    assert_eq!(p.state().unwrap(), ProcessState::Locked);
    assert_eq!(p.lock(1000).unwrap_err().status, Status::InvalidState);
    p.checkpoint().unwrap();
    assert_eq!(p.state().unwrap(), ProcessState::Checkpointed);
    let uuid = dev.uuid().unwrap();
    let e = p.restore(&[(cucore::Uuid([0xff; 16]), uuid)]).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e.message);
    p.restore(&[(uuid, Device::get(1).unwrap().uuid().unwrap())]).unwrap();
    assert_eq!(p.state().unwrap(), ProcessState::Locked);
    p.unlock().unwrap();
    assert_eq!(p.state().unwrap(), ProcessState::Running);

    let me = Process::new(std::process::id() as i32);
    let e = me.lock(1000).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(e.message.contains("is this process"), "{}", e.message);
    assert_eq!(Process::new(0).state().unwrap_err().status, Status::InvalidArgument);
}
