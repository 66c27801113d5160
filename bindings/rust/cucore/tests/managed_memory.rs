//! Managed memory: the managed resource's options, advice values, the managed calls' argument
//! checks (no GPU needed: a user resource that claims managed memory), and on a real GPU the
//! default resource (`cuMemAllocManaged`, where advice works) and managed pools (a CUDA 13
//! driver; advice on their memory may be refused, as an H100 with driver 580 does, which is
//! reported, not failed), with advice, prefetch and discard on their buffers. What a driver lacks
//! skips with the reason printed. (Helpers and skip rules: common/mod.rs.)

#[macro_use]
mod common;
use common::*;

use cucore::{
    sys, Error, Location, ManagedAdvice, ManagedMemoryResourceOptions, MemoryAdvice, Result, StreamRef,
    UserMemoryResource,
};

// ---- Values, options and argument checks (no GPU) ----------------------------------------------------

#[test]
fn advice_converts() {
    assert_eq!(
        [MemoryAdvice::SetReadMostly, MemoryAdvice::UnsetReadMostly, MemoryAdvice::SetPreferredLocation].map(MemoryAdvice::raw),
        [1, 2, 3]
    );
    assert_eq!(
        [MemoryAdvice::UnsetPreferredLocation, MemoryAdvice::SetAccessedBy, MemoryAdvice::UnsetAccessedBy].map(MemoryAdvice::raw),
        [4, 5, 6]
    );
}

#[test]
fn managed_options_build_the_c_struct() {
    assert_eq!(ManagedMemoryResourceOptions::default().to_raw(), sys::cucore_managed_memory_resource_options_t::INIT);
    assert!(!ManagedMemoryResourceOptions::default().use_pool, "the default: cuMemAllocManaged");
    let raw = ManagedMemoryResourceOptions::default()
        .use_pool(true)
        .preferred_location(Location::HostNuma(2))
        .max_size(7)
        .release_threshold(8)
        .to_raw();
    assert_eq!(raw.use_pool, 1);
    assert_eq!(raw.preferred_location, Location::HostNuma(2).to_raw());
    assert_eq!((raw.max_size, raw.release_threshold), (7, 8));
    assert_eq!(ManagedMemoryResourceOptions::default().use_pool(false).to_raw().use_pool, 0);
}

/// Claims managed memory but only ever hands out empty buffers: the managed calls' argument checks
/// run before the driver, and a zero-size buffer makes no driver call.
struct ManagedClaim;

impl UserMemoryResource for ManagedClaim {
    fn allocate(&self, _: u64, _: Option<&StreamRef>) -> Result<u64> {
        Err(Error::new(Status::OutOfMemory, "only zero-size buffers here"))
    }
    fn deallocate(&self, _: u64, _: u64, _: Option<&StreamRef>) -> Result<()> {
        Ok(())
    }
    fn accessibility(&self) -> Accessibility {
        Accessibility { device: true, host: true }
    }
    fn is_managed(&self) -> bool {
        true
    }
}

#[test]
fn managed_calls_check_locations_before_the_driver() {
    let _serial = serial();
    let mr = MemoryResource::user(ManagedClaim).unwrap();
    assert_eq!(mr.accessibility().unwrap(), Accessibility { device: true, host: true });
    let b = mr.allocate(0, None).unwrap();
    assert!(b.is_managed().unwrap());
    assert_eq!(b.accessibility().unwrap(), Accessibility { device: true, host: true });
    // Valid advice on an empty range does nothing, and reads back as no advice.
    b.set_read_mostly(true).unwrap();
    b.set_preferred_location(Some(Location::Device(0))).unwrap();
    b.set_preferred_location(None).unwrap();
    b.add_accessed_by(Location::Device(0)).unwrap();
    assert_eq!(b.advice().unwrap(), cucore::ManagedAdvice { read_mostly: false, preferred_location: None });
    assert!(!b.read_mostly().unwrap());
    assert_eq!(b.preferred_location().unwrap(), None);
    assert_eq!(b.last_prefetch_location().unwrap(), None);
    assert!(!b.is_accessed_by(Location::Device(0)).unwrap());
    // Locations the library refuses.
    for (advice, location) in [
        (MemoryAdvice::SetPreferredLocation, None),
        (MemoryAdvice::SetPreferredLocation, Some(Location::Device(-1))),
        (MemoryAdvice::SetPreferredLocation, Some(Location::HostNuma(-3))),
        (MemoryAdvice::SetAccessedBy, None),
    ] {
        let e = b.advise(advice, location).unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument, "{:?} {:?}: {}", advice, location, e);
        assert!(e.message.contains("location"), "{}", e.message);
    }
    // Accessed-by is kept per processor (devices and the host), not per NUMA node.
    let e = b.is_accessed_by(Location::HostNuma(0)).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "accessed-by is per processor: {}", e);
}

// ---- On a GPU ----------------------------------------------------------------------------------------

/// A managed memory resource on `dev`, or None after printing why the test is skipped.
fn managed(test: &str, dev: &Device, options: ManagedMemoryResourceOptions) -> Option<MemoryResource> {
    match MemoryResource::managed(dev, options) {
        Ok(mr) => Some(mr),
        Err(e) if e.status == Status::NotSupported => {
            let what = if options.use_pool { "managed memory pools" } else { "managed memory" };
            common::skip(test, &format!("no {} here ({})", what, e));
            None
        }
        Err(e) => panic!("MemoryResource::managed: {}", e),
    }
}

#[test]
fn managed_memory_with_and_without_a_pool() {
    let _serial = serial();
    let name = "managed_memory_with_and_without_a_pool";
    let dev = require_gpu!(name);
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    for use_pool in [false, true] {
        let what = if use_pool { "a managed memory pool" } else { "managed memory" };
        let options = ManagedMemoryResourceOptions::default().use_pool(use_pool);
        let mr = match supported(name, what, MemoryResource::managed(&dev, options)) {
            Some(mr) => mr,
            None => continue,
        };
        assert_eq!(mr.kind().unwrap(), MemoryResourceKind::Managed);
        assert!(mr.is_managed().unwrap());
        assert_eq!(mr.device_id().unwrap(), Some(0));
        assert_eq!(mr.is_stream_ordered().unwrap(), use_pool, "{}", what);
        assert_eq!(!mr.handle().unwrap().is_null(), use_pool, "a CUmemoryPool only with a pool");
        const N: usize = 3 << 16;
        let b = mr.allocate(N as u64, Some(&s)).unwrap();
        assert_eq!(b.accessibility().unwrap(), Accessibility { device: true, host: true });
        assert!(b.is_managed().unwrap());
        let expected_dealloc = if use_pool { Some(s.clone()) } else { None };
        assert_eq!(b.deallocation_stream().unwrap(), expected_dealloc, "{}", what);
        let data = pattern(N, 23);
        b.copy_from_host(0, &data, &s).unwrap();
        assert_eq!(b.to_vec(&s).unwrap(), data);
        b.view(16, 16).unwrap().fill(0x6d, 1, &s).unwrap();
        s.synchronize().unwrap();
        let host = peek(b.address().unwrap(), 48); // managed memory: the host reads it in place
        assert_eq!(&host[..16], &data[..16]);
        assert_eq!(&host[16..32], &[0x6d; 16]);
        assert_eq!(&host[32..], &data[32..48]);
        let copy = b.copy_to_new(&s).unwrap();
        assert_eq!(copy.memory_resource().unwrap().unwrap(), mr);
        assert_eq!(copy.to_vec(&s).unwrap(), b.to_vec(&s).unwrap());
    }
    s.synchronize().unwrap();
}

#[test]
fn managed_buffers_take_advice_and_prefetches() {
    let _serial = serial();
    let name = "managed_buffers_take_advice_and_prefetches";
    let dev = require_gpu!(name);
    let mp = match managed(name, &dev, ManagedMemoryResourceOptions::default()) {
        Some(mp) => mp,
        None => return,
    };
    assert_eq!(mp.kind().unwrap(), MemoryResourceKind::Managed);
    assert!(!mp.is_stream_ordered().unwrap(), "cuMemAllocManaged: synchronous");
    assert!(mp.handle().unwrap().is_null(), "no pool");
    assert_eq!(mp.pool_attribute(PoolAttribute::ReleaseThreshold).unwrap_err().status, Status::NotSupported);
    assert_eq!(mp.accessibility().unwrap(), Accessibility { device: true, host: true });
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    const N: usize = 1 << 20;
    let unordered = mp.allocate(4096, None).unwrap();
    assert_eq!(unordered.deallocation_stream().unwrap(), None, "freed with cuMemFree");
    // SAFETY: 4096 bytes of managed memory this buffer owns, which the host may write.
    unsafe { std::ptr::write_bytes(unordered.address().unwrap() as *mut u8, 7, 4096) };
    assert_eq!(unordered.to_vec(&s).unwrap(), vec![7; 4096], "usable at once, from the host");
    drop(unordered);
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
    b.advise(MemoryAdvice::UnsetReadMostly, None).unwrap();
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
    b.add_accessed_by(Location::Device(0)).unwrap();
    assert!(b.is_accessed_by(Location::Device(0)).unwrap());
    b.remove_accessed_by(Location::Device(0)).unwrap();
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
    assert!(!b.is_accessed_by(Location::Host).unwrap(), "the host is a processor too, not advised here");
    assert_eq!(b.is_accessed_by(Location::HostNuma(0)).unwrap_err().status, Status::InvalidArgument);
    s.synchronize().unwrap();
}

#[test]
fn managed_resources_with_a_preferred_location() {
    let _serial = serial();
    let name = "managed_resources_with_a_preferred_location";
    let dev = require_gpu!(name);
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    // Without a pool the location is advised on each allocation (the buffer reports it).
    for location in [Location::Device(0), Location::Host] {
        let mr = match managed(name, &dev, ManagedMemoryResourceOptions::default().preferred_location(location)) {
            Some(mr) => mr,
            None => return,
        };
        for seed in [61, 62] {
            let b = mr.allocate(8192, None).unwrap();
            assert_eq!(b.preferred_location().unwrap(), Some(location));
            let data = pattern(8192, seed);
            b.copy_from_host(0, &data, &s).unwrap();
            assert_eq!(b.to_vec(&s).unwrap(), data, "{:?}", location);
        }
    }
    // A pool takes it as the pool's, with the pool-only options.
    for location in [Location::Device(0), Location::Host] {
        let options =
            ManagedMemoryResourceOptions::default().use_pool(true).preferred_location(location).release_threshold(1 << 20);
        let mp = match managed(name, &dev, options) {
            Some(mp) => mp,
            None => return,
        };
        assert_eq!(mp.pool_attribute(PoolAttribute::ReleaseThreshold).unwrap(), 1 << 20);
        let b = mp.allocate(8192, Some(&s)).unwrap();
        let data = pattern(8192, 63);
        b.copy_from_host(0, &data, &s).unwrap();
        assert_eq!(b.to_vec(&s).unwrap(), data, "{:?}", location);
        drop(b);
        s.synchronize().unwrap();
    }
    // Refused before the driver: a preferred location of a bad kind, pool options without a pool.
    for use_pool in [false, true] {
        let bad = ManagedMemoryResourceOptions::default().use_pool(use_pool).preferred_location(Location::Device(-5));
        assert_eq!(MemoryResource::managed(&dev, bad).unwrap_err().status, Status::InvalidArgument);
    }
    let e = MemoryResource::managed(&dev, ManagedMemoryResourceOptions::default().max_size(1 << 20)).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(e.message.contains("use_pool"), "{}", e.message);
}

#[test]
fn managed_pools_prefetch_and_may_refuse_advice() {
    let _serial = serial();
    let name = "managed_pools_prefetch_and_may_refuse_advice";
    let dev = require_gpu!(name);
    let mp = match managed(name, &dev, ManagedMemoryResourceOptions::default().use_pool(true)) {
        Some(mp) => mp,
        None => return,
    };
    assert_eq!(mp.kind().unwrap(), MemoryResourceKind::Managed);
    assert!(mp.is_stream_ordered().unwrap());
    assert!(!mp.handle().unwrap().is_null(), "a pool");
    assert_eq!(mp.allocate(64, None).unwrap_err().status, Status::InvalidArgument, "a pool needs a stream");
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    const N: usize = 1 << 20;
    let b = mp.allocate(N as u64, Some(&s)).unwrap();
    assert!(b.is_managed().unwrap());
    assert_eq!(b.deallocation_stream().unwrap(), Some(s.clone()));
    let data = pattern(N, 64);
    b.copy_from_host(0, &data, &s).unwrap();
    b.prefetch(Location::Device(0), &s).unwrap();
    assert_eq!(b.to_vec(&s).unwrap(), data);
    b.prefetch(Location::Host, &s).unwrap();
    s.synchronize().unwrap();
    // SAFETY: the buffer's N bytes, host-readable once the stream is done.
    let host = unsafe { std::slice::from_raw_parts(b.address().unwrap() as *const u8, N) };
    assert_eq!(host, &data[..], "on the host now: read in place");
    match b.set_read_mostly(true) {
        Ok(()) => {
            assert!(b.read_mostly().unwrap());
            b.set_read_mostly(false).unwrap();
        }
        Err(e) if e.status == Status::NotSupported => {
            eprintln!("note: {}: advice on managed-pool memory is not supported by this driver: {}", name, e)
        }
        Err(e) => panic!("advice on managed-pool memory: {}", e),
    }
    assert_eq!(b.to_vec(&s).unwrap(), data);
    drop(b);
    s.synchronize().unwrap();
}
