//! User-defined memory resources. Most tests need no GPU: the resource serves host memory from a
//! Vec<u8> (`Arena`, in common/arena.rs) and run everywhere; a user resource over a device pool
//! skips without a GPU. (Helpers: common/mod.rs.)

#[macro_use]
mod common;
use common::*;

use std::collections::HashMap;

use cucore::{Error, Location, Result, StreamRef, UserMemoryResource};

// ---- A user resource over a Vec<u8> (no GPU needed) ----------------------------------------------

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

// ---- On a GPU ----------------------------------------------------------------------------------------

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
