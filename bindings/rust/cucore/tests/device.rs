//! Devices and contexts on a real GPU. (Helpers and skip rules: common/mod.rs.)

#[macro_use]
mod common;
use common::*;

#[test]
fn device_properties_are_plausible_and_consistent() {
    let _serial = serial();
    let _dev = require_gpu!("device_properties_are_plausible_and_consistent");

    let version = cucore::driver_version().unwrap();
    assert!(version >= 10000, "driver version {}", version);

    let count = Device::count().unwrap();
    let all = Device::all().unwrap();
    assert_eq!(all.len(), count);
    let mut uuids = Vec::new();
    for (i, d) in all.iter().enumerate() {
        let i = i as i32;
        assert_eq!(d.ordinal().unwrap(), i);
        assert_eq!(*d, Device::get(i).unwrap(), "devices compare by ordinal");
        assert!(d.handle().unwrap() >= 0);

        let name = d.name().unwrap();
        assert!(!name.trim().is_empty());
        let uuid = d.uuid().unwrap();
        assert_ne!(uuid.bytes(), &[0u8; 16]);
        assert_eq!(uuid.to_string().len(), 36);
        uuids.push(uuid);

        let cc = d.compute_capability().unwrap();
        assert!((3..100).contains(&cc.major) && (0..10).contains(&cc.minor), "{}", cc);
        assert_eq!(d.arch().unwrap(), format!("{}{}", cc.major, cc.minor));
        assert_eq!(cc.major, d.attribute(DeviceAttribute::COMPUTE_CAPABILITY_MAJOR).unwrap());
        assert_eq!(cc.minor, d.attribute(DeviceAttribute::COMPUTE_CAPABILITY_MINOR).unwrap());

        let total = d.total_memory().unwrap();
        assert!(total >= 256 << 20, "total memory {}", total);

        let p = d.properties().unwrap();
        assert_eq!(p.ordinal, i);
        assert_eq!(p.compute_capability, cc);
        assert_eq!(p.total_memory, total);
        let b = |v: bool| v as i32;
        let pairs = [
            (p.multiprocessor_count, DeviceAttribute::MULTIPROCESSOR_COUNT),
            (p.max_threads_per_block, DeviceAttribute::MAX_THREADS_PER_BLOCK),
            (p.max_threads_per_multiprocessor, DeviceAttribute::MAX_THREADS_PER_MULTIPROCESSOR),
            (p.warp_size, DeviceAttribute::WARP_SIZE),
            (p.max_shared_memory_per_block, DeviceAttribute::MAX_SHARED_MEMORY_PER_BLOCK),
            (p.max_shared_memory_per_multiprocessor, DeviceAttribute::MAX_SHARED_MEMORY_PER_MULTIPROCESSOR),
            (p.l2_cache_size, DeviceAttribute::L2_CACHE_SIZE),
            (p.memory_bus_width, DeviceAttribute::GLOBAL_MEMORY_BUS_WIDTH),
            (p.pci_domain_id, DeviceAttribute::PCI_DOMAIN_ID),
            (p.pci_bus_id, DeviceAttribute::PCI_BUS_ID),
            (p.pci_device_id, DeviceAttribute::PCI_DEVICE_ID),
            (b(p.integrated), DeviceAttribute::INTEGRATED),
            (b(p.concurrent_managed_access), DeviceAttribute::CONCURRENT_MANAGED_ACCESS),
            (b(p.memory_pools_supported), DeviceAttribute::MEMORY_POOLS_SUPPORTED),
            (b(p.cooperative_launch), DeviceAttribute::COOPERATIVE_LAUNCH),
            (b(p.unified_addressing), DeviceAttribute::UNIFIED_ADDRESSING),
        ];
        for (value, attr) in pairs.iter() {
            assert_eq!(*value, d.attribute(*attr).unwrap(), "properties() vs attribute({:?})", attr);
        }
        // Clock rates: newer drivers may no longer report them; then properties() holds 0.
        for (value, attr) in [
            (p.clock_rate_khz, DeviceAttribute::CLOCK_RATE),
            (p.memory_clock_rate_khz, DeviceAttribute::MEMORY_CLOCK_RATE),
        ] {
            match d.attribute(attr) {
                Ok(v) => assert_eq!(value, v, "properties() vs attribute({:?})", attr),
                Err(e) => eprintln!("note: attribute({:?}) failed ({}); properties() says {}", attr, e, value),
            }
        }
        assert_eq!(p.warp_size, 32);
        assert!(p.multiprocessor_count >= 1);
        assert!((256..=4096).contains(&p.max_threads_per_block));
        assert!(p.max_threads_per_multiprocessor >= p.max_threads_per_block);
        assert!(p.max_shared_memory_per_block >= 16 << 10);
        assert!(p.max_shared_memory_per_multiprocessor >= p.max_shared_memory_per_block);
        assert!(p.l2_cache_size > 0);
        assert!(p.memory_bus_width > 0);
        assert!(p.unified_addressing, "64-bit Linux has unified addressing");

        // The PCI bus id string agrees with the numeric ids: "dddd:bb:dd.f", hex.
        let bus_id = d.pci_bus_id().unwrap();
        let fields: Vec<&str> = bus_id.split([':', '.']).collect();
        assert_eq!(fields.len(), 4, "pci bus id {:?}", bus_id);
        assert_eq!(hex(fields[0]), p.pci_domain_id, "{}", bus_id);
        assert_eq!(hex(fields[1]), p.pci_bus_id, "{}", bus_id);
        assert_eq!(hex(fields[2]), p.pci_device_id, "{}", bus_id);

        for peer in all.iter() {
            if peer != d {
                d.can_access_peer(peer).unwrap();
            }
        }
        eprintln!(
            "device {}: {} ({}), cc {}, {} SMs, {} MiB, {}",
            i,
            name,
            bus_id,
            cc,
            p.multiprocessor_count,
            total >> 20,
            uuid
        );
    }
    uuids.sort_by(|a, b| a.bytes().cmp(b.bytes()));
    uuids.dedup();
    assert_eq!(uuids.len(), count, "UUIDs are distinct");

    // Errors carry status, driver result and message.
    let e = Device::get(count as i32).unwrap_err();
    assert_eq!(e.status, Status::NoDevice, "{}", e);
    assert!(!e.message.is_empty());
    let e = all[0].attribute(DeviceAttribute::UNSET).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    // Past the toolkit's last attribute: refused by the library (the driver never sees it), naming the value.
    let e = all[0].attribute(DeviceAttribute(1_000_000)).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert_eq!(e.cuda_result, 0, "not a driver failure: {}", e);
    assert!(e.message.contains("'attribute'") && e.message.contains("1000000"), "{}", e);
}

#[test]
fn current_device_and_primary_context() {
    let _serial = serial();
    let dev = require_gpu!("current_device_and_primary_context");

    // A thread with no current context sees device 0.
    let d0 = thread::spawn(|| Device::current().unwrap()).join().unwrap();
    assert_eq!(d0.ordinal().unwrap(), 0);

    dev.set_current().unwrap();
    assert_eq!(Device::current().unwrap(), dev);

    let ctx = dev.primary_context().unwrap();
    assert!(ctx.is_primary().unwrap());
    assert_eq!(ctx.device().unwrap(), dev);
    assert!(!ctx.handle().unwrap().is_null());
    let again = Context::primary(&dev).unwrap();
    assert_eq!(again.handle().unwrap(), ctx.handle().unwrap());
    ctx.set_current().unwrap();
    ctx.synchronize().unwrap();
    dev.synchronize().unwrap();

    let s = ctx.create_stream(StreamOptions::default()).unwrap();
    assert_eq!(s.context().unwrap().handle().unwrap(), ctx.handle().unwrap());
    assert_eq!(s.device().unwrap(), dev);
    let e = ctx.create_event(EventOptions::default()).unwrap();
    assert_eq!(e.context().unwrap().handle().unwrap(), ctx.handle().unwrap());
    assert_eq!(e.device().unwrap(), dev);
    e.record(&s).unwrap();
    e.synchronize().unwrap();

    // A foreign CUcontext (here the primary one's raw handle), wrapped with an owner callback.
    let released = Arc::new(AtomicBool::new(false));
    let flag = released.clone();
    let wrapped = unsafe {
        Context::from_handle(ctx.handle().unwrap(), Some(Box::new(move || flag.store(true, Ordering::SeqCst))))
    }
    .unwrap();
    assert_eq!(wrapped.handle().unwrap(), ctx.handle().unwrap());
    assert_eq!(wrapped.device().unwrap(), dev);
    let ws = wrapped.create_stream(StreamOptions::default()).unwrap();
    let ran = Arc::new(AtomicBool::new(false));
    let r = ran.clone();
    ws.launch_host_func(move || r.store(true, Ordering::SeqCst)).unwrap();
    ws.synchronize().unwrap();
    assert!(ran.load(Ordering::SeqCst));
    drop(wrapped);
    assert!(!released.load(Ordering::SeqCst), "the stream still holds the wrapped context");
    drop(ws);
    assert!(released.load(Ordering::SeqCst), "owner called when the last reference went");
}
