//! Buffers on a real GPU: fills, copies between host and device and between buffers, views,
//! closing, zero sizes, deallocation streams and foreign memory. (Helpers and skip rules:
//! common/mod.rs.)

#[macro_use]
mod common;
use common::*;

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

    let pool = MemoryResource::device_pool(&dev, DeviceMemoryResourceOptions::default()).unwrap();
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
