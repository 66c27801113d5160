//! System information (NVML) and this process's checkpoint state on a real GPU: NVML agrees with
//! the CUDA driver. Skips with the reason without a GPU or without NVML. (Helpers and skip rules:
//! common/mod.rs.)

#[macro_use]
mod common;

use common::*;
use cucore::checkpoint::{Process, ProcessState};
use cucore::system::{self, Clock, SystemDevice};
use cucore::Status;

#[test]
fn nvml_agrees_with_the_cuda_driver() {
    let _serial = serial();
    let dev = require_gpu!("nvml_agrees_with_the_cuda_driver");
    let count = match system::device_count() {
        Ok(n) => n,
        Err(e) if e.status == Status::NotSupported => {
            skip("nvml_agrees_with_the_cuda_driver", &format!("NVML is not available here ({})", e.message));
            return;
        }
        Err(e) => panic!("{}", e),
    };
    assert!(count as usize >= Device::count().unwrap());
    let d = dev.to_system_device().unwrap();
    assert_eq!(d.uuid().unwrap(), format!("GPU-{}", dev.uuid().unwrap()));
    assert_eq!(d.name().unwrap(), dev.name().unwrap());
    assert_eq!(d.to_cuda_device().unwrap(), dev);
    assert_eq!(SystemDevice::get(d.index().unwrap()).unwrap(), d);
    assert_eq!(SystemDevice::by_pci_bus_id(&dev.pci_bus_id().unwrap()).unwrap(), d);
    let total = dev.total_memory().unwrap();
    let memory = d.memory_info().unwrap();
    // NVML's total counts what the driver reserves for itself, which CUDA's leaves out.
    assert!(total <= memory.total && memory.total as f64 <= total as f64 * 1.05, "{} {}", total, memory.total);
    assert_eq!(memory.used + memory.free, memory.total);
    assert_eq!(system::cuda_driver_version().unwrap(), cucore::driver_version().unwrap());
    assert!(system::kernel_mode_driver_version().unwrap()[0] >= 500);
    assert!(d.power_limit().unwrap() > 0);
    let t = d.temperature().unwrap();
    assert!(t > 0 && t < 120, "{} C", t);
    assert!(d.max_clock(Clock::Sm).unwrap() >= d.clock(Clock::Sm).unwrap());
    assert!(d.clock(Clock::Sm).unwrap() > 0);
    assert_eq!(d.pci_info().unwrap().pci_device_id & 0xffff, 0x10de);
}

#[test]
fn this_process_is_running_with_a_restore_thread() {
    let _serial = serial();
    let _dev = require_gpu!("this_process_is_running_with_a_restore_thread");
    let me = Process::new(std::process::id() as i32);
    let state = match me.state() {
        Ok(s) => s,
        Err(e) if e.status == Status::NotSupported => {
            skip("this_process_is_running_with_a_restore_thread", &format!("no checkpointing ({})", e.message));
            return;
        }
        Err(e) => panic!("{}", e),
    };
    assert_eq!(state, ProcessState::Running);
    let tid = me.restore_thread_id().unwrap();
    assert!(std::path::Path::new(&format!("/proc/self/task/{}", tid)).exists(), "restore thread {}", tid);
    assert_eq!(me.lock(1000).unwrap_err().status, Status::InvalidArgument);
}

#[test]
fn system_events_register_or_are_not_supported() {
    let _serial = serial();
    let _dev = require_gpu!("system_events_register_or_are_not_supported");
    // The real NVML records driver bind/unbind where the platform allows it (not on many VMs).
    match system::register_events(system::EVENT_GPU_DRIVER_UNBIND | system::EVENT_GPU_DRIVER_BIND) {
        Ok(set) => {
            // Nobody binds or unbinds a GPU during the test: a short wait times out (or, woken
            // early, gives what little there is, each of a known type).
            match set.wait(10, 4) {
                Ok(events) => assert!(events.iter().all(|e| e.event_type == 1 || e.event_type == 2), "{:?}", events),
                Err(e) => assert_eq!((e.status, system::last_nvml_result()), (Status::NotReady, 10), "{}", e.message),
            }
        }
        Err(e) => assert_eq!(e.status, Status::NotSupported, "{}", e.message),
    }
}
