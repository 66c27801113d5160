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
    live_object_count, release_error_count, set_release_error_handler, Context, Device, DeviceAttribute, Event,
    EventOptions, ObjectType, Status, Stream, StreamOptions,
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
