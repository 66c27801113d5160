//! Streams on a real GPU: ordering, host functions, sharing, lifetimes, wrapping, priorities. (Helpers and skip rules: common/mod.rs.)

#[macro_use]
mod common;
use common::*;

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
    let (mut least, mut greatest) = (7, 7);
    // SAFETY: a live handle and valid out-pointers.
    assert_eq!(unsafe { cucore::sys::cucore_stream_priority_range(dev.as_raw(), &mut least, &mut greatest) }, 0);
    assert_eq!(range, cucore::StreamPriorityRange { least, greatest }, "as the C call answers");
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
