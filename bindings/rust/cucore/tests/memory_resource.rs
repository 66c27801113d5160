//! What every memory resource has (kind, device, accessibility, stream order, allocation), the
//! device's default resource and the legacy pinned resource, and the values the memory modules
//! share (locations, access, kinds). The value tests need no GPU; the others skip without one.
//! (Helpers and skip rules: common/mod.rs.)

#[macro_use]
mod common;
use common::*;

use cucore::{sys, Access, Location};

// ---- Values (no GPU) -------------------------------------------------------------------------------

#[test]
fn locations_access_and_kinds_convert() {
    for location in [Location::Device(3), Location::Host, Location::HostNuma(1), Location::HostNumaCurrent] {
        assert_eq!(Location::from_raw(location.to_raw()).unwrap(), Some(location));
    }
    let raw = |type_, id| sys::cucore_location_t { type_, id };
    assert_eq!(Location::Device(3).to_raw(), raw(sys::CUCORE_LOCATION_DEVICE, 3));
    assert_eq!(Location::Host.to_raw(), raw(sys::CUCORE_LOCATION_HOST, 0));
    assert_eq!(Location::HostNuma(1).to_raw(), raw(sys::CUCORE_LOCATION_HOST_NUMA, 1));
    assert_eq!(Location::HostNumaCurrent.to_raw(), raw(sys::CUCORE_LOCATION_HOST_NUMA_CURRENT, 0));
    assert_eq!(Location::from_raw(raw(sys::CUCORE_LOCATION_NONE, 0)).unwrap(), None);
    assert_eq!(Location::from_raw(raw(99, 1)).unwrap_err().status, Status::Internal);

    for access in [Access::None, Access::Read, Access::ReadWrite] {
        assert_eq!(Access::from_raw(access.raw()).unwrap(), access);
    }
    assert_eq!([Access::None.raw(), Access::Read.raw(), Access::ReadWrite.raw()], [0, 1, 3]);
    assert_eq!(Access::from_raw(2).unwrap_err().status, Status::Internal);

    let kinds = [
        (MemoryResourceKind::Pinned, 3, true),
        (MemoryResourceKind::Managed, 4, false), // only with a pool: MemoryResource::is_stream_ordered
        (MemoryResourceKind::Virtual, 5, false),
        (MemoryResourceKind::User, 6, false),
        (MemoryResourceKind::Imported, 7, true),
    ];
    for (kind, raw, ordered) in kinds {
        assert_eq!(kind.raw(), raw);
        assert_eq!(MemoryResourceKind::from_raw(raw), kind);
        assert_eq!(kind.is_stream_ordered(), ordered, "{:?}", kind);
    }
}

// ---- On a GPU ----------------------------------------------------------------------------------------

#[test]
fn memory_resources_describe_themselves() {
    let _serial = serial();
    let dev = require_gpu!("memory_resources_describe_themselves");
    let mr = require_pool!("memory_resources_describe_themselves", &dev);
    assert_eq!(mr.kind().unwrap(), MemoryResourceKind::Device);
    assert_eq!(mr.device_id().unwrap(), Some(0));
    assert_eq!(mr.accessibility().unwrap(), Accessibility { device: true, host: false });
    assert!(mr.is_device_accessible().unwrap() && !mr.is_host_accessible().unwrap());
    assert_eq!(format!("{:?}", mr), "MemoryResource(Device, device 0)");
    assert_eq!(dev.memory_resource().unwrap().kind().unwrap(), MemoryResourceKind::Device);

    let pool = MemoryResource::device_pool(&dev, DeviceMemoryResourceOptions::default()).unwrap();
    assert_eq!(pool.kind().unwrap(), MemoryResourceKind::Device);
    assert_eq!(pool.device_id().unwrap(), Some(0));
    assert_ne!(pool, mr, "a new pool is another resource");

    let pinned = MemoryResource::legacy_pinned(&dev).unwrap();
    assert_eq!(pinned.kind().unwrap(), MemoryResourceKind::LegacyPinned);
    assert_eq!(pinned.device_id().unwrap(), None, "host memory");
    assert_eq!(pinned.accessibility().unwrap(), Accessibility { device: true, host: true });
    assert_eq!(format!("{:?}", pinned), "MemoryResource(LegacyPinned, host)");

    // A stream-ordered pool needs a stream.
    let e = mr.allocate(256, None).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert!(e.message.contains("stream"), "{}", e.message);
    let e = pool.allocate(256, None).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);

    // Buffers say where they came from.
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let b = dev.allocate(1024, &s).unwrap();
    assert_eq!(b.size().unwrap(), 1024);
    assert_ne!(b.address().unwrap(), 0);
    assert_eq!(b.device_id().unwrap(), Some(0));
    let owner = b.memory_resource().unwrap().expect("a pool buffer has a resource");
    assert_eq!(owner.kind().unwrap(), MemoryResourceKind::Device);
    assert_eq!(owner, b.memory_resource().unwrap().unwrap(), "the same resource each time");
    let pb = pool.allocate(1024, Some(&s)).unwrap();
    assert_eq!(pb.memory_resource().unwrap().unwrap(), pool);
    assert!(format!("{:?}", pb).ends_with("1024 bytes, device 0)"), "{:?}", pb);
    s.synchronize().unwrap();
}

#[test]
fn legacy_pinned_buffers_are_host_accessible() {
    let _serial = serial();
    let dev = require_gpu!("legacy_pinned_buffers_are_host_accessible");
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let pinned_mr = MemoryResource::legacy_pinned(&dev).unwrap();
    const N: usize = 8192;
    let pinned = pinned_mr.allocate(N as u64, None).unwrap();
    assert_eq!(pinned.size().unwrap(), N as u64);
    assert_eq!(pinned.device_id().unwrap(), None);
    assert_eq!(pinned.memory_resource().unwrap().unwrap(), pinned_mr);
    let address = pinned.address().unwrap();
    assert_ne!(address, 0);
    assert!(format!("{:?}", pinned).ends_with("bytes, host)"), "{:?}", pinned);

    // The host writes it directly...
    let data = pattern(N, 11);
    {
        // SAFETY: no device work uses the buffer yet; the slice ends before any is queued.
        let host = unsafe { std::slice::from_raw_parts_mut(address as *mut u8, N) };
        host.copy_from_slice(&data);
    }
    // ...the device reads it (copy into device memory, and read back)...
    let device = match MemoryResource::device_default(&dev) {
        Ok(mr) => mr.allocate(N as u64, Some(&s)).unwrap(),
        Err(_) => pinned_mr.allocate(N as u64, Some(&s)).unwrap(),
    };
    device.copy_from(&pinned, &s).unwrap();
    assert_eq!(device.to_vec(&s).unwrap(), data);
    // ...and writes it, the host reading the result after a synchronize.
    pinned.fill(0xc3c3_c3c3, 4, &s).unwrap();
    pinned.view(0, 16).unwrap().copy_from(&device.view(0, 16).unwrap(), &s).unwrap();
    s.synchronize().unwrap();
    {
        // SAFETY: the stream is idle; nothing else uses the buffer.
        let host = unsafe { std::slice::from_raw_parts(address as *const u8, N) };
        assert_eq!(&host[..16], &data[..16]);
        assert!(host[16..].iter().all(|b| *b == 0xc3));
    }
    // Pinned memory as the host side of an asynchronous copy.
    {
        // SAFETY: the slice lives in `pinned`, which outlives the synchronize below, and the
        // host does not touch it meanwhile.
        let host = unsafe { std::slice::from_raw_parts(address as *const u8, N) };
        unsafe { device.copy_from_host_async(0, host, &s) }.unwrap();
        s.synchronize().unwrap();
    }
    let got = device.to_vec(&s).unwrap();
    assert_eq!(&got[..16], &data[..16]);
    assert!(got[16..].iter().all(|b| *b == 0xc3));

    // A stream given to a synchronous resource becomes the deallocation stream; freeing works
    // after every handle but the buffer's is gone.
    let with_stream = pinned_mr.allocate(64, Some(&s)).unwrap();
    with_stream.fill(0x01, 1, &s).unwrap();
    assert_eq!(with_stream.to_vec(&s).unwrap(), vec![1; 64]);
    drop(pinned_mr);
    drop(s);
    drop(with_stream);
    drop(pinned);
    drop(device);
}

#[test]
fn the_devices_default_resource_is_shared_and_resettable() {
    let _guard = serial();
    let dev = require_gpu!("the_devices_default_resource_is_shared_and_resettable");
    let current = require_pool!("the_devices_default_resource_is_shared_and_resettable", &dev);
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let mine = MemoryResource::device_pool(&dev, DeviceMemoryResourceOptions::default()).unwrap();
    dev.set_memory_resource(Some(&mine)).unwrap();
    assert_eq!(dev.memory_resource().unwrap().handle().unwrap(), mine.handle().unwrap());
    let b = dev.allocate(4096, &s).unwrap();
    assert_eq!(b.memory_resource().unwrap().unwrap().handle().unwrap(), mine.handle().unwrap());
    dev.set_memory_resource(None).unwrap();
    assert_eq!(dev.memory_resource().unwrap().handle().unwrap(), current.handle().unwrap());
    drop(b);
    s.synchronize().unwrap();
}

#[test]
fn memory_live_counts_back_to_baseline() {
    let _serial = serial();
    let dev = require_gpu!("memory_live_counts_back_to_baseline");
    dev.set_current().unwrap();
    let _ = require_pool!("memory_live_counts_back_to_baseline", &dev);

    let handler_calls = Arc::new(AtomicUsize::new(0));
    {
        let calls = handler_calls.clone();
        set_release_error_handler(Some(Box::new(move |e| {
            eprintln!("release error: {}", e);
            calls.fetch_add(1, Ordering::SeqCst);
        })));
    }
    let release_errors = release_error_count().unwrap();
    let baseline = live_counts();

    {
        let s = dev.create_stream(StreamOptions::default()).unwrap();
        let default_mr = MemoryResource::device_default(&dev).unwrap();
        let pool = MemoryResource::device_pool(&dev, DeviceMemoryResourceOptions::default()).unwrap();
        let pinned = MemoryResource::legacy_pinned(&dev).unwrap();
        let a = default_mr.allocate(1 << 16, Some(&s)).unwrap();
        let b = pool.allocate(1 << 16, Some(&s)).unwrap();
        let c = pinned.allocate(1 << 16, None).unwrap();
        let d = dev.allocate(100, &s).unwrap();
        let views: Vec<Buffer> = [&a, &b, &c].iter().map(|x| x.view(8, 64).unwrap()).collect();
        let clones = (a.clone(), b.clone(), c.clone());
        assert_eq!(live_object_count(ObjectType::Buffer).unwrap(), baseline[6] + 7, "clones are the same objects");
        a.fill(1, 1, &s).unwrap();
        b.copy_from(&a, &s).unwrap();
        c.copy_from(&b, &s).unwrap();
        assert_eq!(views[2].to_vec(&s).unwrap(), vec![1; 64]);
        let copy = b.copy_to_new(&s).unwrap();
        b.close(None).unwrap();
        d.close(Some(&s)).unwrap();

        // Buffers made on other threads and sent back, dropped on yet another.
        let made: Vec<Buffer> = (0..4)
            .map(|i| {
                let (pool, s) = (pool.clone(), s.clone());
                thread::spawn(move || {
                    let x = pool.allocate(256, Some(&s)).unwrap();
                    x.fill(i, 1, &s).unwrap();
                    x
                })
            })
            .map(|t| t.join().unwrap())
            .collect();
        for (i, x) in made.iter().enumerate() {
            assert_eq!(x.to_vec(&s).unwrap(), vec![i as u8; 256]);
        }
        thread::spawn(move || drop(made)).join().unwrap();

        // Parents first.
        drop(pool);
        drop(pinned);
        drop(default_mr);
        drop(s);
        drop(clones);
        drop(a);
        drop(b);
        drop(c);
        drop(d);
        drop(copy);
        drop(views);
    }
    dev.synchronize().unwrap();
    assert_eq!(live_counts(), baseline, "live objects (any, device, context, stream, event, resource, buffer)");
    assert_eq!(release_error_count().unwrap(), release_errors, "no failure in any release path");
    assert_eq!(handler_calls.load(Ordering::SeqCst), 0);
    set_release_error_handler(None);
}
