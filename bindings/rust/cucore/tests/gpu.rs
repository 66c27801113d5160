//! Tests that need a CUDA GPU. Without a driver or a device each one prints
//! "skipped: <test>: <reason>" on stderr and passes; it never fails for that.
//!
//! They run one at a time (a process-wide lock), because the live-object counts they compare
//! are process-wide.

use std::os::raw::c_void;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use cucore::{
    live_object_count, release_error_count, set_release_error_handler, Accessibility, Buffer, Context, Device,
    DeviceAttribute, DevicePoolOptions, Event, EventOptions, MemoryResource, MemoryResourceKind, ObjectType, Status,
    Stream, StreamOptions,
    PoolAttribute,
};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Device 0, or None after printing why the test is skipped.
fn gpu(test: &str) -> Option<Device> {
    match Device::count() {
        Err(e) => {
            eprintln!("skipped: {}: no usable CUDA driver ({})", test, e);
            None
        }
        Ok(0) => {
            eprintln!("skipped: {}: no CUDA device visible", test);
            None
        }
        Ok(_) => Some(Device::get(0).expect("Device::get(0)")),
    }
}

macro_rules! require_gpu {
    ($name:expr) => {
        match gpu($name) {
            Some(d) => d,
            None => return,
        }
    };
}

/// Waits (polling) until `flag` is set, at most `limit`; whether it was set.
fn wait_for(flag: &AtomicBool, limit: Duration) -> bool {
    let start = Instant::now();
    while !flag.load(Ordering::SeqCst) {
        if start.elapsed() > limit {
            return false;
        }
        thread::sleep(Duration::from_millis(1));
    }
    true
}

/// A gate a host function can wait on (at most 10 s, so a failing test never hangs).
#[derive(Clone)]
struct Gate(Arc<AtomicBool>);

impl Gate {
    fn new() -> Gate {
        Gate(Arc::new(AtomicBool::new(false)))
    }
    fn open(&self) {
        self.0.store(true, Ordering::SeqCst)
    }
    fn wait(&self) {
        wait_for(&self.0, Duration::from_secs(10));
    }
}

fn hex(s: &str) -> i32 {
    i32::from_str_radix(s, 16).unwrap_or_else(|_| panic!("not hex: {:?}", s))
}

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
    let e = all[0].attribute(DeviceAttribute(1_000_000)).unwrap_err();
    assert_eq!(e.status, Status::Cuda, "{}", e);
    assert_eq!(e.cuda_result, 1, "CUDA_ERROR_INVALID_VALUE: {}", e);
    assert!(!e.message.is_empty());
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

#[test]
fn stream_order_through_events_and_waits() {
    let _serial = serial();
    let dev = require_gpu!("stream_order_through_events_and_waits");
    let a = dev.create_stream(StreamOptions::default()).unwrap();
    let b = dev.create_stream(StreamOptions::default()).unwrap();
    let c = dev.create_stream(StreamOptions::default()).unwrap();

    let gate = Gate::new();
    let flag = Arc::new(AtomicUsize::new(0));
    let seen_by_b = Arc::new(AtomicUsize::new(usize::MAX));
    let seen_by_c = Arc::new(AtomicUsize::new(usize::MAX));

    {
        let (gate, flag) = (gate.clone(), flag.clone());
        a.launch_host_func(move || {
            gate.wait();
            thread::sleep(Duration::from_millis(20));
            flag.store(1, Ordering::SeqCst);
        })
        .unwrap();
    }
    let ev = a.record(EventOptions::default()).unwrap();
    b.wait_event(&ev).unwrap();
    c.wait_stream(&a).unwrap();
    {
        let (flag, seen) = (flag.clone(), seen_by_b.clone());
        b.launch_host_func(move || seen.store(flag.load(Ordering::SeqCst), Ordering::SeqCst)).unwrap();
    }
    {
        let (flag, seen) = (flag.clone(), seen_by_c.clone());
        c.launch_host_func(move || seen.store(flag.load(Ordering::SeqCst), Ordering::SeqCst)).unwrap();
    }

    thread::sleep(Duration::from_millis(50));
    assert!(!a.is_done().unwrap(), "A is held by its gated host function");
    assert!(!ev.is_done().unwrap());
    assert!(!b.is_done().unwrap(), "B waits for A's event");
    assert!(!c.is_done().unwrap(), "C waits for A");
    assert_eq!(seen_by_b.load(Ordering::SeqCst), usize::MAX, "B's host function must not have run");
    assert_eq!(seen_by_c.load(Ordering::SeqCst), usize::MAX, "C's host function must not have run");

    gate.open();
    b.synchronize().unwrap();
    c.synchronize().unwrap();
    assert_eq!(seen_by_b.load(Ordering::SeqCst), 1, "B ran after A's host function");
    assert_eq!(seen_by_c.load(Ordering::SeqCst), 1, "C ran after A's host function");
    assert!(ev.is_done().unwrap());
    assert!(a.is_done().unwrap());
    assert!(b.is_done().unwrap());
    ev.synchronize().unwrap();
    a.synchronize().unwrap();
}

#[test]
fn host_functions_run_in_order_and_are_freed() {
    let _serial = serial();
    let dev = require_gpu!("host_functions_run_in_order_and_are_freed");
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    for i in 0..100 {
        let log = log.clone();
        s.launch_host_func(move || log.lock().unwrap().push(i)).unwrap();
    }
    s.synchronize().unwrap();
    assert_eq!(*log.lock().unwrap(), (0..100).collect::<Vec<_>>());
    assert_eq!(Arc::strong_count(&log), 1, "every closure was freed after it ran");
}

#[test]
fn event_timing() {
    let _serial = serial();
    let dev = require_gpu!("event_timing");
    let s = dev.create_stream(StreamOptions::default()).unwrap();

    let start = s.record(EventOptions::timing()).unwrap();
    s.launch_host_func(|| thread::sleep(Duration::from_millis(20))).unwrap();
    let end = s.record(EventOptions::timing()).unwrap();
    end.synchronize().unwrap();
    assert!(start.is_done().unwrap() && end.is_done().unwrap());
    let ms = end.elapsed_since(&start).unwrap();
    assert!((19.0..5000.0).contains(&ms), "elapsed {} ms around a 20 ms host function", ms);
    assert_eq!(Event::elapsed_time(&start, &end).unwrap(), ms);
    assert_eq!((&end - &start).unwrap(), ms);
    assert!(start.is_timing_enabled().unwrap());
    assert!(!start.is_blocking_sync().unwrap());

    // Existing events recorded again, with blocking synchronization.
    let opts = EventOptions { timing_enabled: true, blocking_sync: true };
    let e1 = dev.create_event(opts).unwrap();
    let e2 = dev.create_event(opts).unwrap();
    assert_eq!(e1.flags().unwrap(), 3);
    assert!(e1.is_blocking_sync().unwrap());
    e1.record(&s).unwrap();
    s.launch_host_func(|| thread::sleep(Duration::from_millis(5))).unwrap();
    s.record_event(&e2).unwrap();
    e2.synchronize().unwrap();
    let ms2 = e2.elapsed_since(&e1).unwrap();
    assert!((4.0..5000.0).contains(&ms2), "{} ms", ms2);

    // Timing errors: no timing flag, never recorded, not complete yet.
    let plain = s.record(EventOptions::default()).unwrap();
    plain.synchronize().unwrap();
    assert!(!plain.is_timing_enabled().unwrap());
    let e = end.elapsed_since(&plain).unwrap_err();
    assert_eq!(e.status, Status::InvalidState, "{}", e);
    assert!(!e.message.is_empty());
    let fresh = dev.create_event(EventOptions::timing()).unwrap();
    assert!(fresh.is_done().unwrap(), "an event never recorded is complete");
    let e = Event::elapsed_time(&fresh, &end).unwrap_err();
    assert_eq!(e.status, Status::InvalidState, "{}", e);

    let gate = Gate::new();
    let t0 = s.record(EventOptions::timing()).unwrap();
    {
        let gate = gate.clone();
        s.launch_host_func(move || gate.wait()).unwrap();
    }
    let t1 = s.record(EventOptions::timing()).unwrap();
    t0.synchronize().unwrap();
    let e = t1.elapsed_since(&t0).unwrap_err();
    assert_eq!(e.status, Status::NotReady, "{}", e);
    gate.open();
    t1.synchronize().unwrap();
    assert!(t1.elapsed_since(&t0).unwrap() >= 0.0);
}

#[test]
fn objects_are_shared_across_threads() {
    let _serial = serial();
    let dev = require_gpu!("objects_are_shared_across_threads");
    let s = Arc::new(dev.create_stream(StreamOptions::default()).unwrap());
    let counter = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let (dev, s, counter) = (dev.clone(), s.clone(), counter.clone());
            thread::spawn(move || {
                // Shared by reference (Sync)...
                for _ in 0..50 {
                    let counter = counter.clone();
                    s.launch_host_func(move || {
                        counter.fetch_add(1, Ordering::SeqCst);
                    })
                    .unwrap();
                }
                // ...cloned and dropped concurrently...
                for _ in 0..200 {
                    let c = (*s).clone();
                    let d = dev.clone();
                    drop(d);
                    drop(c);
                }
                // ...and made here, sent back (Send).
                let own = dev.create_stream(StreamOptions::default()).unwrap();
                own.launch_host_func(|| thread::sleep(Duration::from_millis(2))).unwrap();
                let ev = own.record(EventOptions::default()).unwrap();
                (own, ev)
            })
        })
        .collect();
    let made: Vec<(Stream, Event)> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    for (own, ev) in made.iter() {
        s.wait_event(ev).unwrap();
        ev.synchronize().unwrap();
        assert!(own.is_done().unwrap());
    }
    s.synchronize().unwrap();
    assert_eq!(counter.load(Ordering::SeqCst), 8 * 50);
    // Dropped on another thread than the one that made them.
    thread::spawn(move || drop(made)).join().unwrap();
}

#[test]
fn clones_drops_and_live_counts() {
    let _serial = serial();
    let dev = require_gpu!("clones_drops_and_live_counts");
    dev.set_current().unwrap();
    drop(dev.primary_context().unwrap()); // warm up whatever the device keeps for life

    let handler_calls = Arc::new(AtomicUsize::new(0));
    {
        let calls = handler_calls.clone();
        set_release_error_handler(Some(Box::new(move |e| {
            eprintln!("release error: {}", e);
            calls.fetch_add(1, Ordering::SeqCst);
        })));
    }
    let release_errors = release_error_count().unwrap();
    let kinds = [ObjectType::Any, ObjectType::Device, ObjectType::Context, ObjectType::Stream, ObjectType::Event];
    let baseline: Vec<usize> = kinds.iter().map(|k| live_object_count(*k).unwrap()).collect();

    {
        let ctx = dev.primary_context().unwrap();
        let s = ctx.create_stream(StreamOptions::default()).unwrap();
        let e = s.record(EventOptions::timing()).unwrap();
        let (s2, e2, ctx2, dev2) = (s.clone(), e.clone(), ctx.clone(), dev.clone());
        assert_eq!(s2, s);
        assert_eq!(e2, e);
        assert_eq!(live_object_count(ObjectType::Stream).unwrap(), baseline[3] + 1, "a clone is the same object");
        assert_eq!(live_object_count(ObjectType::Event).unwrap(), baseline[4] + 1);

        // Parents first: children keep what they need.
        drop(dev2);
        drop(ctx);
        drop(ctx2);
        let ran = Arc::new(AtomicBool::new(false));
        let r = ran.clone();
        s.launch_host_func(move || r.store(true, Ordering::SeqCst)).unwrap();
        e.record(&s).unwrap();
        drop(s);
        e.synchronize().unwrap();
        assert!(ran.load(Ordering::SeqCst));
        s2.synchronize().unwrap();
        assert_eq!(s2.device().unwrap(), dev);
        drop(e);
        e2.synchronize().unwrap();
        drop(s2);
        assert_eq!(live_object_count(ObjectType::Stream).unwrap(), baseline[3]);
        drop(e2);
    }
    {
        // Children first (reverse order of creation).
        let ctx = dev.primary_context().unwrap();
        let s = Stream::create_in_context(&ctx, StreamOptions::default()).unwrap();
        let e = Event::create_in_context(&ctx, EventOptions::default()).unwrap();
        let s_dev = s.device().unwrap();
        let s_ctx = s.context().unwrap();
        let e_ctx = e.context().unwrap();
        e.record(&s).unwrap();
        s.synchronize().unwrap();
        drop(e_ctx);
        drop(s_ctx);
        drop(s_dev);
        drop(e);
        drop(s);
        drop(ctx);
    }
    {
        // Foreign wrappers go away with their owners' callbacks.
        let s = dev.create_stream(StreamOptions::default()).unwrap();
        let calls = Arc::new(AtomicUsize::new(0));
        let c = calls.clone();
        let w = unsafe {
            Stream::from_handle(
                s.handle().unwrap(),
                Some(Box::new(move || {
                    c.fetch_add(1, Ordering::SeqCst);
                })),
            )
        }
        .unwrap();
        let w2 = w.clone();
        drop(w);
        assert_eq!(calls.load(Ordering::SeqCst), 0);
        drop(w2);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(Arc::strong_count(&calls), 1, "owner callback freed");
    }

    let after: Vec<usize> = kinds.iter().map(|k| live_object_count(*k).unwrap()).collect();
    assert_eq!(after, baseline, "live objects (any, device, context, stream, event) back to the baseline");
    assert_eq!(release_error_count().unwrap(), release_errors, "no failure in any release path");
    assert_eq!(handler_calls.load(Ordering::SeqCst), 0);
    set_release_error_handler(None);
}

#[test]
fn wrapped_streams_and_events() {
    let _serial = serial();
    let dev = require_gpu!("wrapped_streams_and_events");
    dev.set_current().unwrap();
    let s = dev.create_stream(StreamOptions { nonblocking: false, priority: None }).unwrap();
    assert!(s.is_owned().unwrap());
    let raw = s.handle().unwrap();
    assert!(!raw.is_null());

    let released = Arc::new(AtomicBool::new(false));
    let flag = released.clone();
    let w = unsafe { Stream::from_handle(raw, Some(Box::new(move || flag.store(true, Ordering::SeqCst)))) }.unwrap();
    assert!(!w.is_owned().unwrap());
    assert_eq!(w.handle().unwrap(), raw);
    assert_eq!(w.device().unwrap(), dev);
    assert_eq!(w.context().unwrap().handle().unwrap(), s.context().unwrap().handle().unwrap());
    assert!(!w.is_nonblocking().unwrap(), "flags come from the driver");
    assert_eq!(w.priority().unwrap(), s.priority().unwrap());
    let ran = Arc::new(AtomicBool::new(false));
    let r = ran.clone();
    w.launch_host_func(move || r.store(true, Ordering::SeqCst)).unwrap();
    s.synchronize().unwrap();
    assert!(ran.load(Ordering::SeqCst), "work queued through the wrapper ran on the same stream");
    drop(w);
    assert!(released.load(Ordering::SeqCst));
    s.synchronize().unwrap(); // the wrapper did not destroy the stream

    // A foreign event, in the current context.
    let ev = dev.create_event(EventOptions::default()).unwrap();
    let released = Arc::new(AtomicBool::new(false));
    let flag = released.clone();
    let we =
        unsafe { Event::from_handle(ev.handle().unwrap(), Some(Box::new(move || flag.store(true, Ordering::SeqCst)))) }
            .unwrap();
    assert_eq!(we.flags().unwrap(), 0, "wrapped events' flags read as 0");
    assert_eq!(we.handle().unwrap(), ev.handle().unwrap());
    we.record(&s).unwrap();
    we.synchronize().unwrap();
    assert!(we.is_done().unwrap());
    drop(we);
    assert!(released.load(Ordering::SeqCst));

    // Without a current context, wrapping an event fails with InvalidState; the owner is not called.
    let raw_ev = ev.handle().unwrap() as usize;
    let (status, called) = thread::spawn(move || {
        let called = Arc::new(AtomicBool::new(false));
        let flag = called.clone();
        let r = unsafe {
            Event::from_handle(raw_ev as *mut c_void, Some(Box::new(move || flag.store(true, Ordering::SeqCst))))
        };
        (r.map(|_| ()).map_err(|e| e.status), called.load(Ordering::SeqCst))
    })
    .join()
    .unwrap();
    assert_eq!(status, Err(Status::InvalidState));
    assert!(!called);

    // The default streams.
    let legacy = Stream::legacy_default(&dev).unwrap();
    assert_eq!(legacy.handle().unwrap() as usize, 1);
    assert_eq!(dev.default_stream().unwrap().handle().unwrap() as usize, 1);
    let per_thread = Stream::per_thread_default(&dev).unwrap();
    assert_eq!(per_thread.handle().unwrap() as usize, 2);
    for st in [&legacy, &per_thread] {
        let ran = Arc::new(AtomicBool::new(false));
        let r = ran.clone();
        st.launch_host_func(move || r.store(true, Ordering::SeqCst)).unwrap();
        st.synchronize().unwrap();
        assert!(ran.load(Ordering::SeqCst));
        assert_eq!(st.device().unwrap(), dev);
    }
    let wl = unsafe { Stream::from_handle(1 as *mut c_void, None) }.unwrap();
    assert_eq!(wl.handle().unwrap() as usize, 1);
    wl.synchronize().unwrap();
}

#[test]
fn stream_priorities_and_flags() {
    let _serial = serial();
    let dev = require_gpu!("stream_priorities_and_flags");
    let range = dev.stream_priority_range().unwrap();
    assert_eq!(range, Stream::priority_range(&dev).unwrap());
    assert_eq!(range.least, 0);
    assert!(range.greatest <= range.least, "{:?}", range);

    let plain = dev.create_stream(StreamOptions::default()).unwrap();
    assert!(plain.is_nonblocking().unwrap());
    assert_eq!(plain.priority().unwrap(), range.least);
    let high = dev.create_stream(StreamOptions { priority: Some(range.greatest), ..Default::default() }).unwrap();
    assert_eq!(high.priority().unwrap(), range.greatest);
    let blocking = dev.create_stream(StreamOptions { nonblocking: false, priority: None }).unwrap();
    assert!(!blocking.is_nonblocking().unwrap());
    assert_eq!(blocking.flags().unwrap(), 1);
    for s in [&plain, &high, &blocking] {
        s.synchronize().unwrap();
        assert!(s.is_done().unwrap());
    }
}

// ---- memory -------------------------------------------------------------------------------------

/// The device's default memory resource, or None after printing why the test is skipped (a
/// device without memory pools).
fn default_pool(test: &str, dev: &Device) -> Option<MemoryResource> {
    match MemoryResource::device_default(dev) {
        Ok(mr) => Some(mr),
        Err(e) if e.status == Status::NotSupported => {
            eprintln!("skipped: {}: the device has no memory pools ({})", test, e);
            None
        }
        Err(e) => panic!("MemoryResource::device_default: {}", e),
    }
}

macro_rules! require_pool {
    ($name:expr, $dev:expr) => {
        match default_pool($name, $dev) {
            Some(mr) => mr,
            None => return,
        }
    };
}

/// A recognisable byte pattern.
fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

const ALL_KINDS: [ObjectType; 7] = [
    ObjectType::Any,
    ObjectType::Device,
    ObjectType::Context,
    ObjectType::Stream,
    ObjectType::Event,
    ObjectType::MemoryResource,
    ObjectType::Buffer,
];

fn live_counts() -> Vec<usize> {
    ALL_KINDS.iter().map(|k| live_object_count(*k).unwrap()).collect()
}

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

    let pool = MemoryResource::device_pool(&dev, DevicePoolOptions::default()).unwrap();
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
fn fill_patterns_read_back() {
    let _serial = serial();
    let dev = require_gpu!("fill_patterns_read_back");
    let _mr = require_pool!("fill_patterns_read_back", &dev);
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    const N: usize = 4096 + 64;
    let buf = dev.allocate(N as u64, &s).unwrap();

    buf.fill(0xab, 1, &s).unwrap();
    assert_eq!(buf.to_vec(&s).unwrap(), vec![0xab; N]);

    buf.fill(0xbeef, 2, &s).unwrap();
    let got = buf.to_vec(&s).unwrap();
    assert!(got.chunks(2).all(|c| c == [0xef, 0xbe]), "16-bit pattern, little endian: {:x?}", &got[..8]);

    buf.fill(0x0403_0201, 4, &s).unwrap();
    let got = buf.to_vec(&s).unwrap();
    assert!(got.chunks(4).all(|c| c == [1, 2, 3, 4]), "32-bit pattern: {:x?}", &got[..8]);

    // A fill through a view changes only its range.
    buf.view(64, 128).unwrap().fill(0x5a5a_5a5a, 4, &s).unwrap();
    let got = buf.to_vec(&s).unwrap();
    for (i, b) in got.iter().enumerate() {
        let want = if (64..192).contains(&i) { 0x5a } else { [1, 2, 3, 4][i % 4] };
        assert_eq!(*b, want, "byte {}", i);
    }
    buf.fill(0, 4, &s).unwrap();
    buf.fill(0xffff_ffff, 4, &s).unwrap(); // the widest value fits
    assert_eq!(buf.to_vec(&s).unwrap(), vec![0xff; N]);

    // Bad widths and values, sizes and addresses that are no multiple of the width.
    for (value, width) in [(0u32, 0u32), (0, 3), (0, 8), (0x100, 1), (0x1_0000, 2)] {
        let e = buf.fill(value, width, &s).unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument, "fill({:#x}, {}): {}", value, width, e);
        assert!(!e.message.is_empty());
    }
    let e = buf.view(0, 6).unwrap().fill(0, 4, &s).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "size 6 with width 4: {}", e);
    let e = buf.view(2, 8).unwrap().fill(0, 4, &s).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "address not aligned to 4: {}", e);
    buf.view(1, 7).unwrap().fill(0x11, 1, &s).unwrap();
    buf.view(2, 8).unwrap().fill(0x2222, 2, &s).unwrap();
    let got = buf.to_vec(&s).unwrap();
    assert_eq!(&got[..12], &[0xff, 0x11, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0xff, 0xff]);
    assert!(got[10..].iter().all(|b| *b == 0xff), "the failed calls queued nothing");
}

#[test]
fn host_device_host_round_trip() {
    let _serial = serial();
    let dev = require_gpu!("host_device_host_round_trip");
    let _mr = require_pool!("host_device_host_round_trip", &dev);
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    const N: usize = (1 << 20) + 3;
    let data = pattern(N, 7);
    let buf = dev.allocate(N as u64, &s).unwrap();
    buf.copy_from_host(0, &data, &s).unwrap();
    let mut back = vec![0u8; N];
    buf.copy_to_host(0, &mut back, &s).unwrap();
    assert!(back == data, "1 MiB + 3 bytes came back unchanged");

    // At offsets, partial ranges.
    let patch = pattern(100, 200);
    buf.copy_from_host(1000, &patch, &s).unwrap();
    let mut window = vec![0u8; 300];
    buf.copy_to_host(900, &mut window, &s).unwrap();
    assert_eq!(&window[..100], &data[900..1000]);
    assert_eq!(&window[100..200], &patch[..]);
    assert_eq!(&window[200..], &data[1100..1200]);
    let mut tail = [0u8; 3];
    buf.copy_to_host(N as u64 - 3, &mut tail, &s).unwrap();
    assert_eq!(&tail[..], &data[N - 3..]);

    // Ranges outside the buffer fail, queue nothing, and leave the host slice alone.
    let mut untouched = [0xcc_u8; 8];
    let e = buf.copy_to_host(N as u64 - 4, &mut untouched, &s).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert_eq!(untouched, [0xcc; 8]);
    let e = buf.copy_from_host(N as u64 + 1, &[], &s).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    let e = buf.copy_from_host(u64::MAX, &[1, 2], &s).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    // Empty copies are fine anywhere inside, the end included.
    buf.copy_from_host(N as u64, &[], &s).unwrap();
    buf.copy_to_host(0, &mut [], &s).unwrap();

    // The asynchronous forms: the slices stay alive and untouched until the synchronize.
    let second = pattern(4096, 99);
    let mut out = vec![0u8; 4096];
    unsafe {
        buf.copy_from_host_async(4096, &second, &s).unwrap();
        buf.copy_to_host_async(4096, &mut out, &s).unwrap();
    }
    s.synchronize().unwrap();
    assert_eq!(out, second);

    // The legacy default stream works as well.
    let legacy = dev.default_stream().unwrap();
    buf.copy_from_host(0, &patch, &legacy).unwrap();
    let mut check = vec![0u8; 100];
    buf.copy_to_host(0, &mut check, &legacy).unwrap();
    assert_eq!(check, patch);
    s.synchronize().unwrap();
}

#[test]
fn device_to_device_copies() {
    let _serial = serial();
    let dev = require_gpu!("device_to_device_copies");
    let mr = require_pool!("device_to_device_copies", &dev);
    let s1 = dev.create_stream(StreamOptions::default()).unwrap();
    let s2 = dev.create_stream(StreamOptions::default()).unwrap();
    const N: usize = 65536 + 8;
    let data = pattern(N, 42);
    let a = mr.allocate(N as u64, Some(&s1)).unwrap();
    a.copy_from_host(0, &data, &s1).unwrap();

    let pool = MemoryResource::device_pool(&dev, DevicePoolOptions::default()).unwrap();
    let b = pool.allocate(N as u64, Some(&s1)).unwrap();
    b.copy_from(&a, &s1).unwrap();
    assert_eq!(b.to_vec(&s1).unwrap(), data, "copy_from, across pools");

    // On another stream, ordered after s1's work.
    let c = mr.allocate(N as u64, Some(&s1)).unwrap();
    c.fill(0, 1, &s1).unwrap();
    s2.wait_stream(&s1).unwrap();
    b.copy_to(&c, &s2).unwrap();
    assert_eq!(c.to_vec(&s2).unwrap(), data, "copy_to, on a second stream");

    // A new buffer from the same resource.
    let d = a.copy_to_new(&s1).unwrap();
    assert_ne!(d.address().unwrap(), a.address().unwrap());
    assert_eq!(d.size().unwrap(), N as u64);
    assert_eq!(d.memory_resource().unwrap().unwrap(), a.memory_resource().unwrap().unwrap());
    assert_eq!(d.to_vec(&s1).unwrap(), data);

    // Views copy sub-ranges: the first half of `a` into the second half of `c`.
    let half = (N / 2) as u64;
    c.view(half, half).unwrap().copy_from(&a.view(0, half).unwrap(), &s1).unwrap();
    let got = c.to_vec(&s1).unwrap();
    assert_eq!(&got[..N / 2], &data[..N / 2]);
    assert_eq!(&got[N / 2..], &data[..N / 2]);

    // Different sizes fail.
    let small = mr.allocate(16, Some(&s1)).unwrap();
    let e = small.copy_from(&a, &s1).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert!(!e.message.is_empty());
    assert_eq!(a.copy_to(&small, &s1).unwrap_err().status, Status::InvalidArgument);

    // Pinned host memory <-> device memory through the same call.
    let pinned = MemoryResource::legacy_pinned(&dev).unwrap().allocate(N as u64, None).unwrap();
    pinned.copy_from(&a, &s1).unwrap();
    s1.synchronize().unwrap();
    let host = unsafe { std::slice::from_raw_parts(pinned.address().unwrap() as *const u8, N) };
    assert!(host == &data[..], "device -> pinned host");
    s1.synchronize().unwrap();
    s2.synchronize().unwrap();
}

#[test]
fn views_share_their_parents_memory() {
    let _serial = serial();
    let dev = require_gpu!("views_share_their_parents_memory");
    let mr = require_pool!("views_share_their_parents_memory", &dev);
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let parent = mr.allocate(1024, Some(&s)).unwrap();
    parent.fill(0, 1, &s).unwrap();
    let base = parent.address().unwrap();

    let v = parent.view(256, 512).unwrap();
    assert_eq!(v.address().unwrap(), base + 256);
    assert_eq!(v.size().unwrap(), 512);
    assert_eq!(v.device_id().unwrap(), Some(0));
    assert_eq!(v.memory_resource().unwrap().unwrap(), mr, "a view answers its parent's resource");
    let data = pattern(512, 3);
    v.copy_from_host(0, &data, &s).unwrap();
    let got = parent.to_vec(&s).unwrap();
    assert!(got[..256].iter().all(|b| *b == 0));
    assert_eq!(&got[256..768], &data[..]);
    assert!(got[768..].iter().all(|b| *b == 0));

    // A view of a view; writes through the parent show in the views.
    let vv = v.view(128, 64).unwrap();
    assert_eq!(vv.address().unwrap(), base + 384);
    parent.copy_from_host(384, &[0xee; 64], &s).unwrap();
    assert_eq!(vv.to_vec(&s).unwrap(), vec![0xee; 64]);
    assert_eq!(v.view(0, 513).unwrap_err().status, Status::InvalidArgument, "outside the view");

    // The view keeps the memory when the parent goes, and dropping views frees nothing else.
    drop(parent);
    drop(v);
    let mut out = vec![0u8; 64];
    vv.copy_to_host(0, &mut out, &s).unwrap();
    assert_eq!(out, vec![0xee; 64]);
    vv.fill(0x77, 1, &s).unwrap();
    assert_eq!(vv.to_vec(&s).unwrap(), vec![0x77; 64]);
    drop(vv);
    s.synchronize().unwrap();
}

#[test]
fn closed_buffers_fail_with_invalid_state() {
    let _serial = serial();
    let dev = require_gpu!("closed_buffers_fail_with_invalid_state");
    let mr = require_pool!("closed_buffers_fail_with_invalid_state", &dev);
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let other = dev.create_stream(StreamOptions::default()).unwrap();
    let buf = mr.allocate(4096, Some(&s)).unwrap();
    let peer = mr.allocate(4096, Some(&s)).unwrap();
    buf.fill(0x31, 1, &s).unwrap();
    let early_view = buf.view(0, 16).unwrap();
    let clone = buf.clone();

    other.wait_stream(&s).unwrap();
    buf.close(Some(&other)).unwrap(); // freed on `other`, after the fill
    assert_eq!(buf.size().unwrap(), 0);
    assert_eq!(buf.address().unwrap(), 0);
    assert_eq!(clone.size().unwrap(), 0, "a clone is the same, closed, buffer");
    assert_eq!(buf.device_id().unwrap(), Some(0), "still describes itself");
    buf.close(None).unwrap(); // twice: a no-op
    clone.close(Some(&s)).unwrap();

    let mut host = [0x99u8; 16];
    let failures = [
        ("fill", buf.fill(0, 1, &s).unwrap_err()),
        ("copy_from_host", buf.copy_from_host(0, &[1, 2, 3], &s).unwrap_err()),
        ("copy_to_host", buf.copy_to_host(0, &mut host, &s).unwrap_err()),
        ("view", buf.view(0, 0).unwrap_err()),
        ("copy_from (dst closed)", buf.copy_from(&peer, &s).unwrap_err()),
        ("copy_to (src closed)", buf.copy_to(&peer, &s).unwrap_err()),
        ("set_deallocation_stream", buf.set_deallocation_stream(&s).unwrap_err()),
    ];
    for (what, e) in failures.iter() {
        assert_eq!(e.status, Status::InvalidState, "{}: {}", what, e);
        assert!(!e.message.is_empty(), "{}", what);
    }
    assert_eq!(host, [0x99; 16]);

    // The view made before the close still holds the memory.
    assert_eq!(early_view.to_vec(&s).unwrap(), vec![0x31; 16]);
    early_view.close(None).unwrap();
    assert_eq!(early_view.fill(0, 1, &s).unwrap_err().status, Status::InvalidState);
    s.synchronize().unwrap();
    other.synchronize().unwrap();
}

#[test]
fn zero_size_buffers() {
    let _serial = serial();
    let dev = require_gpu!("zero_size_buffers");
    let mr = require_pool!("zero_size_buffers", &dev);
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let pinned_mr = MemoryResource::legacy_pinned(&dev).unwrap();
    let pool_buf = mr.allocate(0, Some(&s)).unwrap();
    let pinned_buf = pinned_mr.allocate(0, None).unwrap();
    let dev_buf = dev.allocate(0, &s).unwrap();
    for b in [&pool_buf, &pinned_buf, &dev_buf] {
        assert_eq!(b.size().unwrap(), 0);
        assert_eq!(b.address().unwrap(), 0, "a zero-size buffer has address 0");
        b.fill(0xab, 1, &s).unwrap();
        b.fill(0xabcd, 2, &s).unwrap();
        b.copy_from_host(0, &[], &s).unwrap();
        b.copy_to_host(0, &mut [], &s).unwrap();
        assert!(b.to_vec(&s).unwrap().is_empty());
        assert_eq!(b.view(0, 0).unwrap().size().unwrap(), 0);
        assert_eq!(b.view(0, 1).unwrap_err().status, Status::InvalidArgument);
        assert_eq!(b.copy_from_host(0, &[1], &s).unwrap_err().status, Status::InvalidArgument);
    }
    pool_buf.copy_from(&pinned_buf, &s).unwrap();
    assert_eq!(pool_buf.copy_to_new(&s).unwrap().size().unwrap(), 0);
    assert_eq!(pinned_buf.device_id().unwrap(), None);
    pool_buf.close(None).unwrap();
    pinned_buf.close(Some(&s)).unwrap();
    s.synchronize().unwrap();
}

#[test]
fn pools_go_after_their_last_buffer() {
    let _serial = serial();
    let dev = require_gpu!("pools_go_after_their_last_buffer");
    let _mr = require_pool!("pools_go_after_their_last_buffer", &dev);
    let release_errors = release_error_count().unwrap();
    let resources = live_object_count(ObjectType::MemoryResource).unwrap();
    let buffers = live_object_count(ObjectType::Buffer).unwrap();

    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let options = DevicePoolOptions { max_size: 0, release_threshold: 1 << 20 };
    let pool = MemoryResource::device_pool(&dev, options).unwrap();
    let bufs: Vec<Buffer> = (0..4).map(|i| pool.allocate(4096 * (i + 1), Some(&s)).unwrap()).collect();
    for (i, b) in bufs.iter().enumerate() {
        b.fill(i as u32 + 1, 1, &s).unwrap();
    }
    let view = bufs[3].view(100, 100).unwrap();
    assert_eq!(live_object_count(ObjectType::MemoryResource).unwrap(), resources + 1);
    assert_eq!(live_object_count(ObjectType::Buffer).unwrap(), buffers + 5);

    let filled = s.record(EventOptions::default()).unwrap();

    // The resource and the stream first: the buffers hold both.
    drop(pool);
    drop(s);
    assert_eq!(live_object_count(ObjectType::MemoryResource).unwrap(), resources + 1, "the buffers hold the pool");
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    s.wait_event(&filled).unwrap();
    for (i, b) in bufs.iter().enumerate() {
        assert_eq!(b.to_vec(&s).unwrap(), vec![i as u8 + 1; 4096 * (i + 1)], "buffer {} after the pool's drop", i);
        let mr = b.memory_resource().unwrap().unwrap();
        assert_eq!(mr.kind().unwrap(), MemoryResourceKind::Device);
    }
    // Allocate from the pool again through a buffer's resource.
    let again = bufs[0].memory_resource().unwrap().unwrap().allocate(64, Some(&s)).unwrap();
    again.fill(0x42, 1, &s).unwrap();
    assert_eq!(again.to_vec(&s).unwrap(), vec![0x42; 64]);
    drop(again);

    // Frees happen in stream order on the buffers' deallocation streams (their allocation
    // stream, dropped above and kept alive by them); the pool goes with the last holder.
    drop(bufs);
    assert_eq!(live_object_count(ObjectType::MemoryResource).unwrap(), resources + 1, "the view holds the pool");
    assert_eq!(view.to_vec(&s).unwrap(), vec![4; 100]);
    drop(view);
    dev.synchronize().unwrap();
    assert_eq!(live_object_count(ObjectType::MemoryResource).unwrap(), resources);
    assert_eq!(live_object_count(ObjectType::Buffer).unwrap(), buffers);
    assert_eq!(release_error_count().unwrap(), release_errors, "no failure while freeing or destroying the pool");

    // A pool with a size limit refuses what does not fit (drivers that know the limit).
    let small = MemoryResource::device_pool(&dev, DevicePoolOptions { max_size: 2 << 20, release_threshold: 0 });
    match small {
        Ok(small) => match small.allocate(64 << 20, Some(&s)) {
            Err(e) => assert_eq!(e.status, Status::OutOfMemory, "{}", e),
            Ok(b) => {
                eprintln!("note: a 64 MiB allocation from a 2 MiB pool succeeded ({:?}); the driver ignores maxSize", b)
            }
        },
        Err(e) => eprintln!("note: a pool with max_size failed to be created: {}", e),
    }
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
fn deallocation_streams_and_foreign_buffers() {
    let _serial = serial();
    let dev = require_gpu!("deallocation_streams_and_foreign_buffers");
    let mr = require_pool!("deallocation_streams_and_foreign_buffers", &dev);
    let release_errors = release_error_count().unwrap();
    let s1 = dev.create_stream(StreamOptions::default()).unwrap();
    let s2 = dev.create_stream(StreamOptions::default()).unwrap();
    let buf = mr.allocate(4096, Some(&s1)).unwrap();
    buf.fill(0x12, 1, &s1).unwrap();
    s2.wait_stream(&s1).unwrap();
    buf.set_deallocation_stream(&s2).unwrap();

    // A foreign view of the same device memory, with an owner told when it goes.
    let told = Arc::new(AtomicUsize::new(0));
    let t = told.clone();
    let foreign = unsafe {
        Buffer::from_handle(
            buf.address().unwrap(),
            4096,
            Some(&dev),
            Some(Box::new(move || {
                t.fetch_add(1, Ordering::SeqCst);
            })),
        )
    }
    .unwrap();
    assert_eq!(foreign.device_id().unwrap(), Some(0));
    assert!(foreign.memory_resource().unwrap().is_none());
    assert_eq!(foreign.to_vec(&s2).unwrap(), vec![0x12; 4096]);
    foreign.view(0, 8).unwrap().fill(0x34, 1, &s2).unwrap();
    let mut head = [0u8; 10];
    buf.copy_to_host(0, &mut head, &s2).unwrap();
    assert_eq!(head, [0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x12, 0x12]);
    let e = foreign.copy_to_new(&s2).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    let f2 = foreign.clone();
    drop(foreign);
    assert_eq!(told.load(Ordering::SeqCst), 0);
    drop(f2);
    assert_eq!(told.load(Ordering::SeqCst), 1, "owner told once, with the last reference");
    assert_eq!(Arc::strong_count(&told), 1, "owner callback freed");

    // Freed on s2 after the streams' handles are gone.
    drop(s1);
    drop(s2);
    drop(buf);
    dev.synchronize().unwrap();
    assert_eq!(release_error_count().unwrap(), release_errors);
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
        let pool = MemoryResource::device_pool(&dev, DevicePoolOptions::default()).unwrap();
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

#[test]
fn pool_attributes_follow_allocations_and_trim() {
    let _guard = serial();
    let dev = require_gpu!("pool_attributes_follow_allocations_and_trim");
    let _default = require_pool!("pool_attributes_follow_allocations_and_trim", &dev);
    let mr = MemoryResource::device_pool(&dev, DevicePoolOptions::default()).unwrap();
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    assert_eq!(mr.pool_attribute(PoolAttribute::UsedMemCurrent).unwrap(), 0);
    let b = mr.allocate(1 << 20, Some(&s)).unwrap();
    assert!(mr.pool_attribute(PoolAttribute::UsedMemCurrent).unwrap() >= 1 << 20);
    assert!(mr.pool_attribute(PoolAttribute::UsedMemHigh).unwrap() >= 1 << 20);
    drop(b);
    s.synchronize().unwrap();
    assert_eq!(mr.pool_attribute(PoolAttribute::UsedMemCurrent).unwrap(), 0);
    mr.set_pool_attribute(PoolAttribute::UsedMemHigh, 0).unwrap();
    assert_eq!(mr.pool_attribute(PoolAttribute::UsedMemHigh).unwrap(), 0);
    mr.set_pool_attribute(PoolAttribute::ReleaseThreshold, 1 << 21).unwrap();
    assert_eq!(mr.pool_attribute(PoolAttribute::ReleaseThreshold).unwrap(), 1 << 21);
    mr.trim(0).unwrap();
    let err = mr.set_pool_attribute(PoolAttribute::UsedMemCurrent, 0).unwrap_err();
    assert_eq!(err.status, Status::InvalidArgument);
    let pinned = MemoryResource::legacy_pinned(&dev).unwrap();
    assert_eq!(pinned.trim(0).unwrap_err().status, Status::NotSupported);
    assert_eq!(pinned.pool_attribute(PoolAttribute::UsedMemCurrent).unwrap_err().status, Status::NotSupported);
}

#[test]
fn the_devices_default_resource_is_shared_and_resettable() {
    let _guard = serial();
    let dev = require_gpu!("the_devices_default_resource_is_shared_and_resettable");
    let current = require_pool!("the_devices_default_resource_is_shared_and_resettable", &dev);
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let mine = MemoryResource::device_pool(&dev, DevicePoolOptions::default()).unwrap();
    dev.set_memory_resource(Some(&mine)).unwrap();
    assert_eq!(dev.memory_resource().unwrap().handle().unwrap(), mine.handle().unwrap());
    let b = dev.allocate(4096, &s).unwrap();
    assert_eq!(b.memory_resource().unwrap().unwrap().handle().unwrap(), mine.handle().unwrap());
    dev.set_memory_resource(None).unwrap();
    assert_eq!(dev.memory_resource().unwrap().handle().unwrap(), current.handle().unwrap());
    drop(b);
    s.synchronize().unwrap();
}
