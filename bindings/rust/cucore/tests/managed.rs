//! Managed memory pools and the advice, prefetch and discard calls on their buffers, on a real
//! GPU (managed pools need a CUDA 13 driver: older ones skip with the reason printed).
//! (Helpers and skip rules: common/mod.rs.)

#[macro_use]
mod common;
use common::*;

use cucore::{Advice, Location, ManagedAdvice, ManagedPoolOptions};

/// A managed pool on `dev`, or None after printing why the test is skipped.
fn managed_pool(test: &str, dev: &Device, options: ManagedPoolOptions) -> Option<MemoryResource> {
    match MemoryResource::managed_pool(dev, options) {
        Ok(mr) => Some(mr),
        Err(e) if e.status == Status::NotSupported => {
            eprintln!("skipped: {}: no managed memory pools here ({})", test, e);
            None
        }
        Err(e) => panic!("MemoryResource::managed_pool: {}", e),
    }
}

#[test]
fn managed_buffers_take_advice_and_prefetches() {
    let _serial = serial();
    let name = "managed_buffers_take_advice_and_prefetches";
    let dev = require_gpu!(name);
    let mp = match managed_pool(name, &dev, ManagedPoolOptions::default()) {
        Some(mp) => mp,
        None => return,
    };
    assert_eq!(mp.kind().unwrap(), MemoryResourceKind::Managed);
    assert!(mp.kind().unwrap().is_stream_ordered());
    assert_eq!(mp.accessibility().unwrap(), Accessibility { device: true, host: true });
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    const N: usize = 1 << 20;
    let b = mp.allocate(N as u64, Some(&s)).unwrap();
    assert!(b.is_managed().unwrap());
    assert_eq!(b.accessibility().unwrap(), Accessibility { device: true, host: true });
    assert_eq!(b.memory_resource().unwrap().unwrap(), mp);
    b.fill(0x5a, 1, &s).unwrap();
    assert_eq!(b.to_vec(&s).unwrap(), vec![0x5a; N]);
    dev.synchronize().unwrap();
    // Managed memory is host memory too once the device is idle.
    let head = unsafe { std::slice::from_raw_parts(b.address().unwrap() as *const u8, 16) };
    assert_eq!(head, &[0x5a; 16]);

    // Read-mostly.
    assert_eq!(b.advice().unwrap(), ManagedAdvice { read_mostly: false, preferred_location: None });
    b.set_read_mostly(true).unwrap();
    assert!(b.read_mostly().unwrap());
    assert!(b.advice().unwrap().read_mostly);
    b.advise(Advice::UnsetReadMostly, None).unwrap();
    assert!(!b.read_mostly().unwrap());

    // Preferred location: a device, the host, none.
    b.set_preferred_location(Some(Location::Device(0))).unwrap();
    assert_eq!(b.preferred_location().unwrap(), Some(Location::Device(0)));
    b.set_preferred_location(Some(Location::Host)).unwrap();
    assert_eq!(b.advice().unwrap().preferred_location, Some(Location::Host));
    b.set_preferred_location(None).unwrap();
    assert_eq!(b.preferred_location().unwrap(), None);

    // Accessed-by, per device.
    assert!(!b.is_accessed_by(Location::Device(0)).unwrap());
    b.set_accessed_by(Location::Device(0), true).unwrap();
    assert!(b.is_accessed_by(Location::Device(0)).unwrap());
    b.set_accessed_by(Location::Device(0), false).unwrap();
    assert!(!b.is_accessed_by(Location::Device(0)).unwrap());

    // Prefetches move the pages and are remembered; the contents follow.
    b.prefetch(Location::Device(0), &s).unwrap();
    s.synchronize().unwrap();
    assert_eq!(b.last_prefetch_location().unwrap(), Some(Location::Device(0)));
    b.prefetch(Location::Host, &s).unwrap();
    s.synchronize().unwrap();
    assert_eq!(b.last_prefetch_location().unwrap(), Some(Location::Host));
    assert_eq!(b.to_vec(&s).unwrap(), vec![0x5a; N]);

    // A view is managed memory too, and takes advice on its range.
    let v = b.view(4096, 4096).unwrap();
    assert!(v.is_managed().unwrap());
    v.set_read_mostly(true).unwrap();
    assert!(v.read_mostly().unwrap());
    v.set_read_mostly(false).unwrap();
    assert!(!v.read_mostly().unwrap());

    // Discards: the contents are gone (unspecified), and writes after them read back.
    match b.discard(&s) {
        Ok(()) => {
            b.fill(0x11, 1, &s).unwrap();
            assert_eq!(b.to_vec(&s).unwrap(), vec![0x11; N]);
            b.discard_prefetch(Location::Device(0), &s).unwrap();
            b.fill(0x22, 1, &s).unwrap();
            assert_eq!(b.to_vec(&s).unwrap(), vec![0x22; N]);
        }
        Err(e) if e.status == Status::NotSupported => eprintln!("note: {}: discard not supported: {}", name, e),
        Err(e) => panic!("discard: {}", e),
    }

    // Buffers that are not managed refuse all of it.
    let plain = dev.allocate(64, &s).unwrap();
    assert!(!plain.is_managed().unwrap());
    for e in [
        plain.set_read_mostly(true).unwrap_err(),
        plain.prefetch(Location::Device(0), &s).unwrap_err(),
        plain.discard(&s).unwrap_err(),
        plain.last_prefetch_location().unwrap_err(),
    ] {
        assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    }
    // Bad locations.
    assert_eq!(b.prefetch(Location::Device(-1), &s).unwrap_err().status, Status::InvalidArgument);
    assert_eq!(b.is_accessed_by(Location::Host).unwrap_err().status, Status::InvalidArgument);
    s.synchronize().unwrap();
}

#[test]
fn managed_pools_with_a_preferred_location() {
    let _serial = serial();
    let name = "managed_pools_with_a_preferred_location";
    let dev = require_gpu!(name);
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    for location in [Location::Device(0), Location::Host] {
        let options = ManagedPoolOptions::default().preferred_location(location).release_threshold(1 << 20);
        let mp = match managed_pool(name, &dev, options) {
            Some(mp) => mp,
            None => return,
        };
        assert_eq!(mp.pool_attribute(PoolAttribute::ReleaseThreshold).unwrap(), 1 << 20);
        let b = mp.allocate(8192, Some(&s)).unwrap();
        let data = pattern(8192, 61);
        b.copy_from_host(0, &data, &s).unwrap();
        assert_eq!(b.to_vec(&s).unwrap(), data, "{:?}", location);
        drop(b);
        s.synchronize().unwrap();
    }
    // A preferred location of a bad kind is refused before the driver.
    let bad = ManagedPoolOptions::default().preferred_location(Location::Device(-5));
    assert_eq!(MemoryResource::managed_pool(&dev, bad).unwrap_err().status, Status::InvalidArgument);
}
