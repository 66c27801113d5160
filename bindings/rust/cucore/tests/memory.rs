//! Memory resources and buffers on a real GPU. (Helpers and skip rules: common/mod.rs.)

#[macro_use]
mod common;
use common::*;

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
fn pools_go_after_their_last_buffer() {
    let _serial = serial();
    let dev = require_gpu!("pools_go_after_their_last_buffer");
    let _mr = require_pool!("pools_go_after_their_last_buffer", &dev);
    let release_errors = release_error_count().unwrap();
    let resources = live_object_count(ObjectType::MemoryResource).unwrap();
    let buffers = live_object_count(ObjectType::Buffer).unwrap();

    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let options = DeviceMemoryResourceOptions::default().release_threshold(1 << 20);
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
    let small = MemoryResource::device_pool(&dev, DeviceMemoryResourceOptions::default().max_size(2 << 20));
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

#[test]
fn pool_attributes_follow_allocations_and_trim() {
    let _guard = serial();
    let dev = require_gpu!("pool_attributes_follow_allocations_and_trim");
    let _default = require_pool!("pool_attributes_follow_allocations_and_trim", &dev);
    let mr = MemoryResource::device_pool(&dev, DeviceMemoryResourceOptions::default()).unwrap();
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
