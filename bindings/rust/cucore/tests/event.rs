//! Events on a real GPU: timing and its errors. (Helpers and skip rules: common/mod.rs.)

#[macro_use]
mod common;
use common::*;

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
    let opts = EventOptions { timing_enabled: true, blocking_sync: true, ipc_enabled: false };
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
