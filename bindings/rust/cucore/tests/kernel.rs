//! Kernels: attributes, parameters, occupancy equal to the C ABI's answers, wrapping a raw
//! CUkernel (GPU); handle errors (no GPU). (Helpers and skip rules: common/mod.rs.)

#[macro_use]
mod common;
use common::*;

use cucore::sys;
use std::ptr;

#[test]
fn attributes_are_the_c_values() {
    assert_eq!(KernelAttribute::ALL.len(), (sys::CUCORE_KERNEL_ATTRIBUTE_COUNT - 1) as usize);
    for (i, a) in KernelAttribute::ALL.iter().enumerate() {
        assert_eq!(a.raw(), i as i32 + 1);
    }
    assert_eq!(
        KernelAttribute::MaxDynamicSharedSizeBytes.raw(),
        sys::CUCORE_KERNEL_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    );
    assert_eq!(
        KernelAttribute::ClusterSchedulingPolicyPreference.raw(),
        sys::CUCORE_KERNEL_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE
    );
}

#[test]
fn wrapping_null_is_invalid_argument() {
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let e = unsafe {
        Kernel::from_handle(
            ptr::null_mut(),
            Some(Box::new(move || {
                c.fetch_add(1, Ordering::SeqCst);
            })),
        )
    }
    .unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the owner of a failed wrap is never called");
    assert_eq!(Arc::strong_count(&calls), 1, "and it was dropped");
    let e = unsafe { Kernel::from_function(ptr::null_mut(), None) }.unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
}

#[test]
fn garbage_kernels_are_invalid_handle() {
    let mut junk = [0x5a5a_5a5a_5a5a_5a5a_u64; 8];
    let k = unsafe { Kernel::adopt(junk.as_mut_ptr() as *mut sys::cucore_kernel_t) };
    assert_eq!(k.name().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(k.param_count().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(k.handle().unwrap_err().status, Status::InvalidHandle);
    assert!(format!("{:?}", k).starts_with("Kernel("));
    drop(k);
}

#[test]
fn attributes_and_parameters() {
    let _serial = serial();
    let dev = require_gpu!("attributes_and_parameters");
    require_nvrtc!("attributes_and_parameters");
    let k = gpu_kernel(&dev, SAXPY, "saxpy");
    assert_eq!(k.name().unwrap(), "saxpy");
    let cc = dev.compute_capability().unwrap();
    let max_threads = k.attribute(&dev, KernelAttribute::MaxThreadsPerBlock).unwrap();
    assert!(max_threads > 0 && max_threads <= 1024, "{}", max_threads);
    assert!(k.attribute(&dev, KernelAttribute::NumRegs).unwrap() > 0);
    assert_eq!(k.attribute(&dev, KernelAttribute::BinaryVersion).unwrap(), cc.major * 10 + cc.minor);
    assert!(k.attribute(&dev, KernelAttribute::PtxVersion).unwrap() > 0);
    assert_eq!(k.attribute(&dev, KernelAttribute::SharedSizeBytes).unwrap(), 0);
    for a in KernelAttribute::ALL.iter() {
        k.attribute(&dev, *a).unwrap_or_else(|e| panic!("{:?}: {}", a, e));
    }
    k.set_attribute(&dev, KernelAttribute::MaxDynamicSharedSizeBytes, 64 * 1024).unwrap();
    assert_eq!(k.attribute(&dev, KernelAttribute::MaxDynamicSharedSizeBytes).unwrap(), 64 * 1024);
    let e = k.set_attribute(&dev, KernelAttribute::NumRegs, 3).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "read-only attribute: {}", e);

    match k.param_count() {
        Ok(n) => {
            assert_eq!(n, 4);
            let info = k.params_info().unwrap();
            assert_eq!(
                info,
                vec![
                    ParamInfo { offset: 0, size: 4 },
                    ParamInfo { offset: 8, size: 8 },
                    ParamInfo { offset: 16, size: 8 },
                    ParamInfo { offset: 24, size: 4 },
                ]
            );
            assert_eq!(k.param_info(4).unwrap_err().status, Status::InvalidArgument);
        }
        Err(e) if e.status == Status::NotSupported => eprintln!("note: no parameter info from this driver ({})", e),
        Err(e) => panic!("param_count: {}", e),
    }
    assert!(!k.handle().unwrap().is_null());
    assert!(!k.function(&dev).unwrap().is_null());
}

#[test]
fn occupancy_equals_the_c_abi() {
    let _serial = serial();
    let dev = require_gpu!("occupancy_equals_the_c_abi");
    require_nvrtc!("occupancy_equals_the_c_abi");
    let k = gpu_kernel(&dev, SAXPY, "saxpy");
    for (block, shared) in [(32u32, 0usize), (128, 0), (256, 1024), (1024, 0)] {
        let ours = k.max_active_blocks_per_multiprocessor(&dev, block, shared).unwrap();
        let mut raw: i32 = -1;
        let status = unsafe {
            sys::cucore_kernel_max_active_blocks_per_multiprocessor(k.as_raw(), dev.as_raw(), block, shared, &mut raw)
        };
        assert_eq!(status, sys::CUCORE_SUCCESS);
        assert_eq!(ours, raw, "block {} shared {}", block, shared);
        assert!(ours >= 1);
    }
    let p = k.max_potential_block_size(&dev, 0, 0).unwrap();
    let (mut grid, mut block) = (-1, -1);
    assert_eq!(
        unsafe { sys::cucore_kernel_max_potential_block_size(k.as_raw(), dev.as_raw(), 0, 0, &mut grid, &mut block) },
        sys::CUCORE_SUCCESS
    );
    assert_eq!((p.min_grid_size, p.block_size), (grid, block));
    assert!(p.block_size > 0 && p.block_size <= k.attribute(&dev, KernelAttribute::MaxThreadsPerBlock).unwrap());
    let limited = k.max_potential_block_size(&dev, 0, 64).unwrap();
    assert!(limited.block_size <= 64, "{:?}", limited);

    let ours = k.available_dynamic_shared_memory(&dev, 2, 128).unwrap();
    let mut raw: usize = 0;
    assert_eq!(
        unsafe { sys::cucore_kernel_available_dynamic_shared_memory(k.as_raw(), dev.as_raw(), 2, 128, &mut raw) },
        sys::CUCORE_SUCCESS
    );
    assert_eq!(ours, raw);
    assert!(ours > 0);
    assert_eq!(k.max_active_blocks_per_multiprocessor(&dev, 0, 0).unwrap_err().status, Status::InvalidArgument);

    if dev.compute_capability().unwrap().major >= 9 {
        let config = LaunchConfig::new(16, 128).cluster(2);
        let ours = k.max_potential_cluster_size(&config, &dev).unwrap();
        let raw_config = config.to_raw();
        let mut raw: i32 = 0;
        assert_eq!(
            unsafe { sys::cucore_launch_max_potential_cluster_size(&raw_config, k.as_raw(), dev.as_raw(), &mut raw) },
            sys::CUCORE_SUCCESS
        );
        assert_eq!(ours, raw);
        assert!(ours >= 1);
        let clusters = k.max_active_clusters(&config, &dev).unwrap();
        let mut raw: i32 = 0;
        assert_eq!(
            unsafe { sys::cucore_launch_max_active_clusters(&raw_config, k.as_raw(), dev.as_raw(), &mut raw) },
            sys::CUCORE_SUCCESS
        );
        assert_eq!(clusters, raw);
        assert!(clusters >= 1);
    } else {
        eprintln!("note: compute capability below 9.0: no cluster occupancy");
    }
}

#[test]
fn wrapped_raw_kernel_launches_and_calls_its_owner() {
    let _serial = serial();
    let dev = require_gpu!("wrapped_raw_kernel_launches_and_calls_its_owner");
    require_nvrtc!("wrapped_raw_kernel_launches_and_calls_its_owner");
    let k = gpu_kernel(&dev, SAXPY, "saxpy");
    let released = Arc::new(AtomicUsize::new(0));
    let r = released.clone();
    let keep = k.clone(); // the owner keeps the library loaded
    let wrapped = unsafe {
        Kernel::from_handle(
            k.handle().unwrap(),
            Some(Box::new(move || {
                drop(keep);
                r.fetch_add(1, Ordering::SeqCst);
            })),
        )
    }
    .unwrap();
    assert_ne!(wrapped, k, "a new library object");
    assert_eq!(wrapped.handle().unwrap(), k.handle().unwrap());
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let n = 32u32;
    let x = dev.allocate(4 * 32, &s).unwrap();
    let y = dev.allocate(4 * 32, &s).unwrap();
    x.copy_from_host(0, &f32_bytes(&[2.0; 32]), &s).unwrap();
    y.copy_from_host(0, &f32_bytes(&[1.0; 32]), &s).unwrap();
    cucore::launch!(s, LaunchConfig::new(1, 32), wrapped, 0.5f32, x, y, n).unwrap();
    let mut host = vec![0u8; 4 * 32];
    y.copy_to_host(0, &mut host, &s).unwrap();
    assert!(f32s(&host).iter().all(|v| *v == 2.0), "{:?}", f32s(&host));
    let clone = wrapped.clone();
    drop(wrapped);
    assert_eq!(released.load(Ordering::SeqCst), 0, "a clone still holds it");
    drop(clone);
    assert_eq!(released.load(Ordering::SeqCst), 1, "the owner ran once with the last reference");
}
