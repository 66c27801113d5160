//! Pinned, virtual and user-defined memory resources, peer access and the buffer queries that
//! came with them. The user-resource tests need no GPU (the resource serves host memory from a
//! Vec<u8>) and run everywhere; the others skip without a GPU. (Helpers: common/mod.rs.)

#[macro_use]
mod common;
use common::*;

use std::collections::HashMap;

use cucore::{
    sys, Access, MemoryAdvice, Error, Granularity, Location, ManagedMemoryResourceOptions, PinnedMemoryResourceOptions, Result, StreamRef,
    UserMemoryResource, VirtualMemoryResourceOptions,
};

// ---- A user resource over a Vec<u8> (no GPU needed) ----------------------------------------------

/// What the arena's callbacks saw.
#[derive(Default)]
struct Log {
    /// (size, stream given) per allocate call.
    allocated: Mutex<Vec<(u64, bool)>>,
    /// (address, size, stream given) per deallocate call.
    deallocated: Mutex<Vec<(u64, u64, bool)>>,
    /// How many times the arena was dropped.
    drops: AtomicUsize,
}

/// Host memory from one Vec<u8>, handed out first-fit in 64-byte aligned pieces.
struct Arena {
    storage: Vec<u8>,
    base: u64,
    live: Mutex<Vec<(u64, u64)>>, // (offset, size), sorted by offset
    log: Arc<Log>,
}

impl Arena {
    fn new(bytes: usize, log: Arc<Log>) -> Arena {
        let mut storage = vec![0u8; bytes + 64];
        // Align the base so that every piece is 64-byte aligned.
        let start = storage.as_mut_ptr() as u64;
        let base = (start + 63) & !63;
        Arena { storage, base, live: Mutex::new(Vec::new()), log }
    }

    fn capacity(&self) -> u64 {
        (self.storage.len() - 64) as u64
    }
}

impl UserMemoryResource for Arena {
    fn allocate(&self, size: u64, stream: Option<&StreamRef>) -> Result<u64> {
        self.log.allocated.lock().unwrap().push((size, stream.is_some()));
        let rounded = (size + 63) & !63;
        let mut live = self.live.lock().unwrap();
        let mut at = 0u64;
        let mut index = 0;
        for (i, (offset, len)) in live.iter().enumerate() {
            if at + rounded <= *offset {
                break;
            }
            at = offset + ((len + 63) & !63);
            index = i + 1;
        }
        if at + rounded > self.capacity() {
            return Err(Error::new(Status::OutOfMemory, format!("arena full: {} bytes wanted", size)));
        }
        live.insert(index, (at, size));
        Ok(self.base + at)
    }

    fn deallocate(&self, address: u64, size: u64, stream: Option<&StreamRef>) -> Result<()> {
        self.log.deallocated.lock().unwrap().push((address, size, stream.is_some()));
        let mut live = self.live.lock().unwrap();
        let offset = address - self.base;
        let i = live.iter().position(|p| *p == (offset, size)).expect("deallocate of something never allocated");
        live.remove(i);
        Ok(())
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        assert!(self.live.lock().unwrap().is_empty(), "the arena goes after its last buffer");
        self.log.drops.fetch_add(1, Ordering::SeqCst);
    }
}

/// Writes `bytes` into host memory at `address` (memory of the arena).
fn poke(address: u64, bytes: &[u8]) {
    // SAFETY: the tests only poke inside buffers of an arena that is alive.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), address as *mut u8, bytes.len()) }
}

fn peek(address: u64, len: usize) -> Vec<u8> {
    // SAFETY: as in poke.
    unsafe { std::slice::from_raw_parts(address as *const u8, len) }.to_vec()
}

#[test]
fn user_resource_serves_host_memory_without_a_gpu() {
    let _serial = serial();
    let resources = live_object_count(ObjectType::MemoryResource).unwrap();
    let buffers = live_object_count(ObjectType::Buffer).unwrap();
    let log = Arc::new(Log::default());
    let mr = MemoryResource::user(Arena::new(4096, log.clone())).unwrap();
    assert!(!mr.is_stream_ordered().unwrap(), "a user resource is not a pool");
    assert_eq!(mr.kind().unwrap(), MemoryResourceKind::User);
    assert!(!mr.kind().unwrap().is_stream_ordered());
    assert_eq!(mr.device_id().unwrap(), None, "host memory");
    assert_eq!(mr.accessibility().unwrap(), Accessibility { device: false, host: true });
    assert_eq!(format!("{:?}", mr), "MemoryResource(User, host)");

    let a = mr.allocate(100, None).unwrap();
    assert_eq!(*log.allocated.lock().unwrap(), vec![(100, false)]);
    let base = a.address().unwrap();
    assert_ne!(base, 0);
    assert_eq!(base % 64, 0);
    assert_eq!(a.size().unwrap(), 100);
    assert_eq!(a.device_id().unwrap(), None);
    assert_eq!(a.accessibility().unwrap(), Accessibility { device: false, host: true });
    assert!(a.is_host_accessible().unwrap() && !a.is_device_accessible().unwrap());
    assert!(!a.is_managed().unwrap());
    assert!(a.deallocation_stream().unwrap().is_none(), "allocated without a stream");
    assert_eq!(a.memory_resource().unwrap().unwrap(), mr);

    // The buffer is the arena's memory: what is written at its address reads back through a view.
    poke(base, &pattern(100, 9));
    let v = a.view(10, 20).unwrap();
    assert_eq!(v.address().unwrap(), base + 10);
    assert_eq!(peek(v.address().unwrap(), 20), pattern(100, 9)[10..30].to_vec());

    let b = mr.allocate(200, None).unwrap();
    let b_addr = b.address().unwrap();
    assert_eq!(b_addr, base + 128, "first fit, after the first piece rounded to 64 bytes");
    assert_eq!(live_object_count(ObjectType::MemoryResource).unwrap(), resources + 1);
    assert_eq!(live_object_count(ObjectType::Buffer).unwrap(), buffers + 3);

    // The buffers hold the resource; the view holds a's memory.
    drop(mr);
    drop(a);
    assert!(log.deallocated.lock().unwrap().is_empty(), "the view keeps a's memory");
    assert_eq!(peek(v.address().unwrap(), 20), pattern(100, 9)[10..30].to_vec());
    drop(v);
    assert_eq!(*log.deallocated.lock().unwrap(), vec![(base, 100, false)]);
    // The freed piece is handed out again.
    let again = b.memory_resource().unwrap().unwrap().allocate(64, None).unwrap();
    assert_eq!(again.address().unwrap(), base);
    drop(again);
    assert_eq!(log.drops.load(Ordering::SeqCst), 0);
    drop(b);
    assert_eq!(*log.deallocated.lock().unwrap(), vec![(base, 100, false), (base, 64, false), (b_addr, 200, false)]);
    assert_eq!(log.drops.load(Ordering::SeqCst), 1, "the arena is dropped with the last buffer");
    assert_eq!(live_object_count(ObjectType::MemoryResource).unwrap(), resources);
    assert_eq!(live_object_count(ObjectType::Buffer).unwrap(), buffers);
    assert_eq!(Arc::strong_count(&log), 1, "the library freed the boxed arena");
}

#[test]
fn user_buffers_close_and_zero_sizes() {
    let _serial = serial();
    let log = Arc::new(Log::default());
    let mr = MemoryResource::user(Arena::new(1024, log.clone())).unwrap();
    let a = mr.allocate(256, None).unwrap();
    let address = a.address().unwrap();
    let clone = a.clone();
    a.close(None).unwrap();
    assert_eq!(*log.deallocated.lock().unwrap(), vec![(address, 256, false)], "close frees at once");
    assert_eq!((clone.size().unwrap(), clone.address().unwrap()), (0, 0), "closed: size and address read 0");
    clone.close(None).unwrap(); // a no-op
    assert_eq!(clone.view(0, 0).unwrap_err().status, Status::InvalidState);
    drop((a, clone));
    assert_eq!(log.deallocated.lock().unwrap().len(), 1, "freed once");

    // Size 0 never reaches the callbacks.
    let empty = mr.allocate(0, None).unwrap();
    assert_eq!((empty.size().unwrap(), empty.address().unwrap()), (0, 0));
    drop(empty);
    assert_eq!(log.allocated.lock().unwrap().len(), 1);
    assert_eq!(log.deallocated.lock().unwrap().len(), 1);
    drop(mr);
    assert_eq!(log.drops.load(Ordering::SeqCst), 1);
}

#[test]
fn shared_and_boxed_user_resources() {
    let _serial = serial();
    let log = Arc::new(Log::default());
    let shared = Arc::new(Arena::new(1024, log.clone()));
    let mr = MemoryResource::user(shared.clone()).unwrap();
    let b = mr.allocate(100, None).unwrap();
    assert_eq!(shared.live.lock().unwrap().len(), 1, "the caller sees the resource's state");
    assert_eq!(Arc::strong_count(&shared), 2);
    drop((mr, b));
    assert!(shared.live.lock().unwrap().is_empty());
    assert_eq!(Arc::strong_count(&shared), 1, "the library dropped its Arc");
    drop(shared);
    assert_eq!(log.drops.load(Ordering::SeqCst), 1);

    let boxed: Box<dyn UserMemoryResource> = Box::new(Arena::new(1024, log.clone()));
    let mr = MemoryResource::user(boxed).unwrap();
    assert_eq!(mr.allocate(64, None).unwrap().size().unwrap(), 64);
    drop(mr);
    assert_eq!(log.drops.load(Ordering::SeqCst), 2);
    assert_eq!(log.deallocated.lock().unwrap().len(), 2);
}

/// A resource whose allocate and deallocate do what they are told, for the error paths.
struct Scripted {
    outcome: fn(u64) -> Result<u64>,
    free_outcome: fn() -> Result<()>,
    drops: Arc<AtomicUsize>,
}

/// Scripted deallocate outcomes.
fn frees() -> Result<()> {
    Ok(())
}
fn free_panics() -> Result<()> {
    panic!("deallocate panics on purpose (this message is expected)")
}

impl UserMemoryResource for Scripted {
    fn allocate(&self, size: u64, _stream: Option<&StreamRef>) -> Result<u64> {
        (self.outcome)(size)
    }
    fn deallocate(&self, _address: u64, _size: u64, _stream: Option<&StreamRef>) -> Result<()> {
        (self.free_outcome)()
    }
    fn device_id(&self) -> Option<i32> {
        Some(0) // device memory, never touched by these tests
    }
}

impl Drop for Scripted {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

fn scripted(outcome: fn(u64) -> Result<u64>, free_outcome: fn() -> Result<()>) -> (MemoryResource, Arc<AtomicUsize>) {
    let drops = Arc::new(AtomicUsize::new(0));
    let r = Scripted { outcome, free_outcome, drops: drops.clone() };
    (MemoryResource::user(r).unwrap(), drops)
}

/// Collects what the release error handler is told while it lives (tests hold `serial()`).
struct ReleaseErrors {
    seen: Arc<Mutex<Vec<Error>>>,
}

impl ReleaseErrors {
    fn install() -> ReleaseErrors {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        set_release_error_handler(Some(Box::new(move |e: &Error| sink.lock().unwrap().push(e.clone()))));
        ReleaseErrors { seen }
    }
    fn take(&self) -> Vec<Error> {
        std::mem::take(&mut *self.seen.lock().unwrap())
    }
}

impl Drop for ReleaseErrors {
    fn drop(&mut self) {
        set_release_error_handler(None);
    }
}

#[test]
fn user_resource_errors_carry_the_callbacks_status_and_message() {
    let _serial = serial();
    let log = Arc::new(Log::default());
    let mr = MemoryResource::user(Arena::new(256, log.clone())).unwrap();
    let e = mr.allocate(1000, None).unwrap_err();
    assert_eq!(e.status, Status::OutOfMemory, "{}", e);
    assert!(e.message.contains("arena full: 1000 bytes wanted"), "the callback's message: {}", e.message);
    assert!(e.message.contains("allocate"), "the library's message: {}", e.message);
    // The message is not carried over to a later failure of another kind.
    let (odd, _) = scripted(|size| Err(Error::new(Status::InvalidArgument, format!("odd size {}", size))), frees);
    let e = odd.allocate(7, None).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert!(e.message.contains("odd size 7") && !e.message.contains("arena"), "{}", e.message);

    // Success with address 0 is refused by the library; an error with status Success is a bug.
    let (zero, _) = scripted(|_| Ok(0), frees);
    let e = zero.allocate(16, None).unwrap_err();
    assert_eq!(e.status, Status::OutOfMemory, "{}", e);
    assert!(e.message.contains("address 0"), "{}", e.message);
    let (confused, _) = scripted(|_| Err(Error::new(Status::Success, "not really")), frees);
    let e = confused.allocate(16, None).unwrap_err();
    assert_eq!(e.status, Status::Internal, "{}", e);
    assert!(e.message.contains("not really"), "{}", e.message);

    // Device memory as the resource describes it (addresses never dereferenced here).
    let (device, drops) = scripted(|size| Ok(0x7000_0000 + size), frees);
    assert_eq!(device.device_id().unwrap(), Some(0));
    assert_eq!(device.accessibility().unwrap(), Accessibility { device: true, host: false });
    let b = device.allocate(32, None).unwrap();
    assert_eq!((b.address().unwrap(), b.device_id().unwrap()), (0x7000_0020, Some(0)));
    assert_eq!(b.accessibility().unwrap(), Accessibility { device: true, host: false });
    drop((device, b));
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    drop(mr);
    assert_eq!(log.drops.load(Ordering::SeqCst), 1);
}

#[test]
fn user_resource_panics_do_not_unwind_into_c() {
    let _serial = serial();
    let handler = ReleaseErrors::install();
    let release_errors = release_error_count().unwrap();
    let (mr, drops) = scripted(
        |size| if size == 13 { panic!("allocate panics on 13 (expected)") } else { Ok(size << 8) },
        free_panics,
    );
    let e = mr.allocate(13, None).unwrap_err();
    assert_eq!(e.status, Status::Internal, "{}", e);
    assert!(e.message.contains("panicked") && e.message.contains("allocate panics on 13"), "{}", e.message);
    // The resource still works, and a panicking deallocate is contained: an Internal release error.
    let b = mr.allocate(16, None).unwrap();
    assert_eq!(b.address().unwrap(), 16 << 8);
    drop(b);
    drop(mr);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(release_error_count().unwrap(), release_errors + 1, "the panic is reported as a release error");
    let seen = handler.take();
    assert_eq!(seen.len(), 1, "{:?}", seen);
    assert_eq!(seen[0].status, Status::Internal);
    assert!(seen[0].message.contains("deallocate callback"), "{}", seen[0].message);
}

#[test]
fn user_resource_deallocate_errors_are_release_errors() {
    let _serial = serial();
    let handler = ReleaseErrors::install();
    let release_errors = release_error_count().unwrap();
    let (mr, drops) = scripted(|size| Ok(0x5000_0000 + size), || Err(Error::new(Status::InvalidState, "busy")));
    // Dropping the last handle frees the memory: the Err becomes a release error naming the callback,
    // with the buffer's size and address.
    let b = mr.allocate(48, None).unwrap();
    drop(b);
    assert_eq!(release_error_count().unwrap(), release_errors + 1);
    let seen = handler.take();
    assert_eq!(seen.len(), 1, "{:?}", seen);
    assert_eq!((seen[0].status, seen[0].cuda_result), (Status::InvalidState, 0));
    assert!(seen[0].message.contains("deallocate callback"), "{}", seen[0].message);
    assert!(seen[0].message.contains(&format!("48 bytes at {:#x}", 0x5000_0000u64 + 48)), "{}", seen[0].message);
    // close() reports it the same way and succeeds itself: the buffer is closed either way.
    let c = mr.allocate(8, None).unwrap();
    c.close(None).unwrap();
    assert_eq!(c.size().unwrap(), 0, "closed");
    assert_eq!(release_error_count().unwrap(), release_errors + 2);
    assert_eq!(handler.take().len(), 1);
    drop(c);
    assert_eq!(release_error_count().unwrap(), release_errors + 2, "freed once");
    // An error with status Success is a bug of the resource: Internal.
    let (confused, _) = scripted(|size| Ok(0x6000_0000 + size), || Err(Error::new(Status::Success, "fine?")));
    drop(confused.allocate(8, None).unwrap());
    assert_eq!(handler.take().iter().map(|e| e.status).collect::<Vec<_>>(), vec![Status::Internal]);
    drop((mr, confused));
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn user_resource_argument_errors() {
    let _serial = serial();
    struct BadDevice(Arc<AtomicUsize>);
    impl UserMemoryResource for BadDevice {
        fn allocate(&self, _: u64, _: Option<&StreamRef>) -> Result<u64> {
            unreachable!()
        }
        fn deallocate(&self, _: u64, _: u64, _: Option<&StreamRef>) -> Result<()> {
            Ok(())
        }
        fn device_id(&self) -> Option<i32> {
            Some(-2)
        }
    }
    impl Drop for BadDevice {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let e = MemoryResource::user(BadDevice(drops.clone())).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert!(e.message.contains("device_id"), "{}", e.message);
    assert_eq!(drops.load(Ordering::SeqCst), 1, "dropped once by the failed call");

    // Buffers that are neither managed nor virtual memory refuse advice and growing, before the driver.
    let log = Arc::new(Log::default());
    let mr = MemoryResource::user(Arena::new(1024, log)).unwrap();
    let b = mr.allocate(64, None).unwrap();
    let e = b.grow(128).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert!(e.message.contains("virtual"), "{}", e.message);
    assert_eq!(b.size().unwrap(), 64);
    for e in [
        b.set_read_mostly(true).unwrap_err(),
        b.advice().unwrap_err(),
        b.last_prefetch_location().unwrap_err(),
        b.is_accessed_by(Location::Device(0)).unwrap_err(),
    ] {
        assert_eq!(e.status, Status::InvalidArgument, "{}", e);
        assert!(e.message.contains("managed"), "{}", e.message);
    }
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

// ---- Values and options (no GPU) ------------------------------------------------------------------

#[test]
fn locations_access_kinds_and_advice_convert() {
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
fn options_build_the_c_structs() {
    assert_eq!(PinnedMemoryResourceOptions::default().to_raw(), sys::cucore_pinned_memory_resource_options_t::INIT);
    let o = PinnedMemoryResourceOptions::default().ipc_enabled(true).max_size(1 << 30).release_threshold(1 << 20).numa_id(1);
    let raw = o.to_raw();
    assert_eq!((raw.ipc_enabled, raw.max_size, raw.release_threshold), (1, 1 << 30, 1 << 20));
    assert_eq!((raw.numa_id, raw.use_numa_id), (1, 1));
    let raw = PinnedMemoryResourceOptions::default().numa_id(0).to_raw();
    assert_eq!((raw.numa_id, raw.use_numa_id), (0, 1), "node 0 is a node, not 'any'");
    let raw = PinnedMemoryResourceOptions::default().to_raw();
    assert_eq!((raw.numa_id, raw.use_numa_id), (0, 0), "None: any host memory");
    assert_eq!(raw.struct_size as usize, std::mem::size_of::<sys::cucore_pinned_memory_resource_options_t>());

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

    assert_eq!(VirtualMemoryResourceOptions::default().to_raw(), sys::cucore_virtual_memory_resource_options_t::INIT);
    let raw = VirtualMemoryResourceOptions::default()
        .location(Location::HostNuma(1))
        .granularity(Granularity::Minimum)
        .posix_fd_shareable(true)
        .reserve_size(1 << 24)
        .self_access(Access::Read)
        .to_raw();
    assert_eq!((raw.location_type, raw.location_id), (sys::CUCORE_LOCATION_HOST_NUMA, 1));
    assert_eq!((raw.minimum_granularity, raw.posix_fd_shareable, raw.reserve_size), (1, 1, 1 << 24));
    assert_eq!(raw.self_access, sys::CUCORE_ACCESS_READ);
    let raw =
        VirtualMemoryResourceOptions::default().location(Location::Device(0)).granularity(Granularity::Recommended).to_raw();
    assert_eq!((raw.location_type, raw.minimum_granularity), (sys::CUCORE_LOCATION_DEVICE, 0));
}

// ---- On a GPU ----------------------------------------------------------------------------------------

/// The value, or None after printing why the test is skipped (the feature is not supported).
fn supported<T>(test: &str, what: &str, result: Result<T>) -> Option<T> {
    match result {
        Ok(v) => Some(v),
        Err(e) if e.status == Status::NotSupported => {
            eprintln!("skipped: {}: {} not supported here ({})", test, what, e);
            None
        }
        Err(e) => panic!("{}: {}", what, e),
    }
}

#[test]
fn pinned_pools_give_host_memory_in_stream_order() {
    let _serial = serial();
    let name = "pinned_pools_give_host_memory_in_stream_order";
    let dev = require_gpu!(name);
    let options = PinnedMemoryResourceOptions::default().release_threshold(1 << 20);
    let pool = match supported(name, "a pinned memory pool", MemoryResource::pinned_pool(&dev, options)) {
        Some(p) => p,
        None => return,
    };
    assert_eq!(pool.kind().unwrap(), MemoryResourceKind::Pinned);
    assert_eq!(pool.device_id().unwrap(), None, "host memory");
    assert_eq!(pool.accessibility().unwrap(), Accessibility { device: true, host: true });
    assert_eq!(pool.pool_attribute(PoolAttribute::ReleaseThreshold).unwrap(), 1 << 20);
    assert_eq!(pool.peer_access(&dev).unwrap(), Access::ReadWrite, "its device reads and writes it");
    pool.set_peer_access(&dev, Access::ReadWrite).unwrap();
    let e = pool.set_peer_access(&dev, Access::Read).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "pools grant read-write or nothing: {}", e);
    assert_eq!(pool.peer_access(&dev).unwrap(), Access::ReadWrite);

    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let s2 = dev.create_stream(StreamOptions::default()).unwrap();
    assert_eq!(pool.allocate(64, None).unwrap_err().status, Status::InvalidArgument, "a pool needs a stream");
    const N: usize = 3 << 16;
    let b = pool.allocate(N as u64, Some(&s)).unwrap();
    assert_eq!(b.accessibility().unwrap(), Accessibility { device: true, host: true });
    assert!(!b.is_managed().unwrap());
    assert_eq!(b.device_id().unwrap(), None);
    assert_eq!(b.deallocation_stream().unwrap(), Some(s.clone()));
    let data = pattern(N, 17);
    b.copy_from_host(0, &data, &s).unwrap();
    assert_eq!(b.to_vec(&s).unwrap(), data);
    b.view(8, 8).unwrap().fill(0x3c, 1, &s).unwrap();
    s.synchronize().unwrap();
    // Host memory: readable at its address once the stream is done.
    let host = peek(b.address().unwrap(), 24);
    assert_eq!(&host[..8], &data[..8]);
    assert_eq!(&host[8..16], &[0x3c; 8]);
    assert_eq!(&host[16..], &data[16..24]);

    let copy = b.copy_to_new(&s).unwrap();
    assert_eq!(copy.memory_resource().unwrap().unwrap(), pool);
    assert_eq!(copy.to_vec(&s).unwrap(), b.to_vec(&s).unwrap());

    s2.wait_stream(&s).unwrap();
    b.set_deallocation_stream(&s2).unwrap();
    assert_eq!(b.deallocation_stream().unwrap(), Some(s2.clone()));
    b.close(None).unwrap();
    assert_eq!(b.deallocation_stream().unwrap(), None, "closed");
    let legacy = MemoryResource::legacy_pinned(&dev).unwrap().allocate(16, Some(&s)).unwrap();
    assert_eq!(legacy.deallocation_stream().unwrap(), None, "synchronous memory has none");
    dev.synchronize().unwrap();
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
fn virtual_memory_buffers_grow_and_keep_their_contents() {
    let _serial = serial();
    let name = "virtual_memory_buffers_grow_and_keep_their_contents";
    let dev = require_gpu!(name);
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let vm = match supported(
        name,
        "virtual memory",
        MemoryResource::virtual_memory(&dev, VirtualMemoryResourceOptions::default()),
    ) {
        Some(vm) => vm,
        None => return,
    };
    assert_eq!(vm.kind().unwrap(), MemoryResourceKind::Virtual);
    assert_eq!(vm.device_id().unwrap(), Some(0));
    assert_eq!(vm.peer_access(&dev).unwrap(), Access::ReadWrite);
    let e = vm.set_peer_access(&dev, Access::None).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);

    let b = vm.allocate(1000, None).unwrap();
    assert_eq!(b.size().unwrap(), 1000);
    assert!(b.is_device_accessible().unwrap());
    assert_eq!(b.deallocation_stream().unwrap(), None, "synchronous");
    let head = pattern(1000, 5);
    b.copy_from_host(0, &head, &s).unwrap();
    s.synchronize().unwrap();

    // Past the 2 MiB granularity: moves or extends, the contents stay.
    const BIG: u64 = (5 << 20) + 12;
    b.grow(BIG).unwrap();
    assert_eq!(b.size().unwrap(), BIG);
    let got = b.to_vec(&s).unwrap();
    assert_eq!(&got[..1000], &head[..], "the old bytes survive the growth");
    b.view(BIG - 12, 12).unwrap().fill(0x99, 1, &s).unwrap();
    let mut tail = [0u8; 14];
    b.copy_to_host(BIG - 14, &mut tail, &s).unwrap();
    assert_eq!(&tail[2..], &[0x99; 12]);
    b.grow(64).unwrap();
    assert_eq!(b.size().unwrap(), BIG, "not above the size: nothing happens");
    {
        let _view = b.view(0, 16).unwrap();
        let e = b.grow(BIG * 2).unwrap_err();
        assert_eq!(e.status, Status::InvalidState, "not while a view exists: {}", e);
    }

    // With room reserved, the buffer grows in place.
    let roomy = MemoryResource::virtual_memory(&dev, VirtualMemoryResourceOptions::default().reserve_size(64 << 20)).unwrap();
    let r = roomy.allocate(4096, Some(&s)).unwrap();
    r.fill(0x0102_0304, 4, &s).unwrap();
    s.synchronize().unwrap();
    let address = r.address().unwrap();
    r.grow(16 << 20).unwrap();
    assert_eq!(r.address().unwrap(), address, "in place, inside the reservation");
    let got = r.view(0, 4096).unwrap().to_vec(&s).unwrap();
    assert!(got.chunks(4).all(|c| c == [4, 3, 2, 1]), "{:x?}", &got[..8]);

    // A read-only resource grants its device what it was told.
    let read_only = MemoryResource::virtual_memory(&dev, VirtualMemoryResourceOptions::default().self_access(Access::Read));
    assert_eq!(read_only.unwrap().peer_access(&dev).unwrap(), Access::Read);

    // Other buffers do not grow.
    let legacy = MemoryResource::legacy_pinned(&dev).unwrap().allocate(64, None).unwrap();
    assert_eq!(legacy.grow(128).unwrap_err().status, Status::InvalidArgument);
    drop((b, r));
    dev.synchronize().unwrap();
}

#[test]
fn peer_access_between_devices() {
    let _serial = serial();
    let name = "peer_access_between_devices";
    let dev = require_gpu!(name);
    let pool = MemoryResource::device_pool(&dev, DeviceMemoryResourceOptions::default()).unwrap();
    assert_eq!(pool.peer_access(&dev).unwrap(), Access::ReadWrite);
    let e = pool.set_peer_access(&dev, Access::None).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "the owning device cannot be revoked: {}", e);
    pool.set_peer_access(&dev, Access::ReadWrite).unwrap();
    assert_eq!(pool.peer_access(&dev).unwrap(), Access::ReadWrite);
    let log = Arc::new(Log::default());
    let user = MemoryResource::user(Arena::new(64, log)).unwrap();
    assert_eq!(user.peer_access(&dev).unwrap_err().status, Status::NotSupported);
    assert_eq!(user.set_peer_access(&dev, Access::ReadWrite).unwrap_err().status, Status::NotSupported);

    let peer = match Device::count().unwrap() {
        n if n >= 2 => Device::get(1).unwrap(),
        _ => {
            eprintln!("skipped: {}: the second-device part needs two GPUs", name);
            return;
        }
    };
    if !peer.can_access_peer(&dev).unwrap() {
        let e = pool.set_peer_access(&peer, Access::ReadWrite).unwrap_err();
        assert_eq!(e.status, Status::NotSupported, "{}", e);
        eprintln!("skipped: {}: device 1 cannot reach device 0's memory", name);
        return;
    }
    assert_eq!(pool.peer_access(&peer).unwrap(), Access::None);
    pool.set_peer_access(&peer, Access::ReadWrite).unwrap();
    assert_eq!(pool.peer_access(&peer).unwrap(), Access::ReadWrite);
    // The peer's stream copies device 0's memory into its own.
    let s0 = dev.create_stream(StreamOptions::default()).unwrap();
    let s1 = peer.create_stream(StreamOptions::default()).unwrap();
    let src = pool.allocate(4096, Some(&s0)).unwrap();
    src.fill(0x6d, 1, &s0).unwrap();
    s0.synchronize().unwrap();
    let dst = peer.allocate(4096, &s1).unwrap();
    dst.copy_from(&src, &s1).unwrap();
    assert_eq!(dst.to_vec(&s1).unwrap(), vec![0x6d; 4096]);
    pool.set_peer_access(&peer, Access::None).unwrap();
    assert_eq!(pool.peer_access(&peer).unwrap(), Access::None);
    dev.synchronize().unwrap();
    peer.synchronize().unwrap();
}

/// Device memory from a device pool, served through the user-resource callbacks.
struct PoolBacked {
    pool: MemoryResource,
    live: Mutex<HashMap<u64, Buffer>>,
    /// The raw stream handles the callbacks were given, 0 for None (integers: Send).
    streams: Arc<Mutex<Vec<usize>>>,
    /// Owned references to the allocation streams, kept past the callbacks.
    kept: Arc<Mutex<Vec<Stream>>>,
}

fn raw_stream(stream: Option<&StreamRef>) -> usize {
    stream.map_or(0, |s| s.as_raw() as usize)
}

impl UserMemoryResource for PoolBacked {
    fn allocate(&self, size: u64, stream: Option<&StreamRef>) -> Result<u64> {
        self.streams.lock().unwrap().push(raw_stream(stream));
        if let Some(stream) = stream {
            self.kept.lock().unwrap().push(stream.to_stream());
        }
        // A library call from inside the callback: a pool needs a stream, so None fails here.
        let buffer = self.pool.allocate(size, stream.map(|s| &**s))?;
        let address = buffer.address()?;
        self.live.lock().unwrap().insert(address, buffer);
        Ok(address)
    }
    fn deallocate(&self, address: u64, _size: u64, stream: Option<&StreamRef>) -> Result<()> {
        self.streams.lock().unwrap().push(raw_stream(stream));
        match self.live.lock().unwrap().remove(&address) {
            Some(buffer) => buffer.close(stream.map(|s| &**s)),
            None => {
                Err(Error::new(Status::InvalidArgument, format!("{:#x} is not a buffer of this resource", address)))
            }
        }
    }
    fn device_id(&self) -> Option<i32> {
        Some(0)
    }
}

#[test]
fn user_resource_over_a_device_pool() {
    let _serial = serial();
    let name = "user_resource_over_a_device_pool";
    let dev = require_gpu!(name);
    let pool = require_pool!(name, &dev);
    let release_errors = release_error_count().unwrap();
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let s2 = dev.create_stream(StreamOptions::default()).unwrap();
    let streams = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::new(Mutex::new(Vec::new()));
    let backed = PoolBacked { pool, live: Mutex::new(HashMap::new()), streams: streams.clone(), kept: kept.clone() };
    let mr = MemoryResource::user(backed).unwrap();
    assert_eq!(mr.accessibility().unwrap(), Accessibility { device: true, host: false });
    let b = mr.allocate(10_000, Some(&s)).unwrap();
    assert_eq!(b.device_id().unwrap(), Some(0));
    assert_eq!(b.deallocation_stream().unwrap(), Some(s.clone()), "user resources keep the allocation stream");
    let data = pattern(10_000, 77);
    b.copy_from_host(0, &data, &s).unwrap();
    assert_eq!(b.to_vec(&s).unwrap(), data, "the pool's memory, through the user resource");
    let c = b.copy_to_new(&s).unwrap();
    assert_eq!(c.memory_resource().unwrap().unwrap(), mr);
    assert_eq!(c.to_vec(&s).unwrap(), data);
    s2.wait_stream(&s).unwrap();
    b.set_deallocation_stream(&s2).unwrap();
    drop(b);
    drop(c);

    // The inner failure comes back with its status and message.
    let e = mr.allocate(64, None).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert!(e.message.contains("stream order"), "the pool's message is kept: {}", e.message);
    let (s_raw, s2_raw) = (s.as_raw() as usize, s2.as_raw() as usize);
    assert_eq!(
        *streams.lock().unwrap(),
        vec![s_raw, s_raw, s2_raw, s_raw, 0],
        "allocate got the allocation stream, deallocate the deallocation stream, None without one"
    );
    drop(mr);
    dev.synchronize().unwrap();
    assert_eq!(release_error_count().unwrap(), release_errors);
    // The streams kept from inside the callbacks are owned references to `s`, valid after them.
    let kept = std::mem::take(&mut *kept.lock().unwrap());
    assert_eq!(kept, vec![s.clone(), s.clone()]);
    drop(s);
    for k in &kept {
        k.synchronize().unwrap();
    }
}
