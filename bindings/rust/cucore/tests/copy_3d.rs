//! Strided 2D/3D copies between host slices and buffers on a real GPU: every copy is compared
//! byte for byte with the same copy done on the CPU. (Helpers and skip rules: common/mod.rs.)

#[macro_use]
mod common;
use common::*;

use cucore::{copy_3d, copy_3d_async, Extent3D, MemoryRegion};

/// The box of `e` copied on the CPU: from `src` (pitch, height, x, y, z) into `dst` (same).
#[allow(clippy::too_many_arguments)]
fn cpu_copy(
    dst: &mut [u8],
    dp: usize,
    dh: usize,
    d_at: (usize, usize, usize),
    src: &[u8],
    sp: usize,
    sh: usize,
    s_at: (usize, usize, usize),
    e: (usize, usize, usize),
) {
    for z in 0..e.2 {
        for r in 0..e.1 {
            for c in 0..e.0 {
                let d = ((d_at.2 + z) * dh + d_at.1 + r) * dp + d_at.0 + c;
                let s = ((s_at.2 + z) * sh + s_at.1 + r) * sp + s_at.0 + c;
                dst[d] = src[s];
            }
        }
    }
}

#[test]
fn two_d_copies_between_host_and_buffers() {
    let _serial = serial();
    let dev = require_gpu!("two_d_copies_between_host_and_buffers");
    let mr = require_pool!("two_d_copies_between_host_and_buffers", &dev);
    let s = dev.create_stream(StreamOptions::default()).unwrap();

    // Host 16 rows of pitch 64 -> device rows of pitch 32: 10 rows of 20 bytes.
    let src = pattern(16 * 64, 3);
    let d = mr.allocate(12 * 32, Some(&s)).unwrap();
    d.fill(0xee, 1, &s).unwrap();
    copy_3d(MemoryRegion::buffer(&d, 32).at(4, 2, 0), MemoryRegion::host(&src, 64).at(5, 3, 0), Extent3D::new_2d(20, 10), &s)
        .unwrap();
    let mut want = vec![0xee; 12 * 32];
    cpu_copy(&mut want, 32, 0, (4, 2, 0), &src, 64, 0, (5, 3, 0), (20, 10, 1));
    assert_eq!(d.to_vec(&s).unwrap(), want, "host -> device, 2D");

    // Device -> host, into a slice with its own pitch; the bytes around the box stay as they were.
    let mut out = vec![0x11u8; 10 * 24];
    copy_3d(
        MemoryRegion::host_mut(&mut out, 24).at(2, 0, 0),
        MemoryRegion::buffer(&d, 32).at(4, 2, 0),
        Extent3D::new_2d(20, 10),
        &s,
    )
    .unwrap();
    let mut want_out = vec![0x11u8; 10 * 24];
    cpu_copy(&mut want_out, 24, 0, (2, 0, 0), &want, 32, 0, (4, 2, 0), (20, 10, 1));
    assert_eq!(out, want_out, "device -> host, 2D (the call waited for the stream)");

    // Buffer -> buffer, packed, at an offset into the destination.
    let packed = mr.allocate(7 + 20 * 10, Some(&s)).unwrap();
    packed.fill(0, 1, &s).unwrap();
    copy_3d(
        MemoryRegion::buffer(&packed, 20).offset(7),
        MemoryRegion::buffer(&d, 32).at(4, 2, 0),
        Extent3D::new_2d(20, 10),
        &s,
    )
    .unwrap();
    let got = packed.to_vec(&s).unwrap();
    assert_eq!(&got[..7], &[0; 7]);
    let mut want_packed = vec![0u8; 200];
    cpu_copy(&mut want_packed, 20, 0, (0, 0, 0), &src, 64, 0, (5, 3, 0), (20, 10, 1));
    assert_eq!(&got[7..], &want_packed[..], "buffer -> buffer, 2D");

    // Page-locked host memory as a buffer side (unified addressing).
    let pinned = MemoryResource::legacy_pinned(&dev).unwrap().allocate(200, None).unwrap();
    copy_3d(MemoryRegion::buffer(&pinned, 20), MemoryRegion::buffer(&packed, 20).offset(7), Extent3D::new_2d(20, 10), &s)
        .unwrap();
    s.synchronize().unwrap();
    let host = unsafe { std::slice::from_raw_parts(pinned.address().unwrap() as *const u8, 200) };
    assert_eq!(host, &want_packed[..], "device -> pinned host buffer");

    // The asynchronous form: the slice stays borrowed until the synchronize.
    let more = pattern(64 * 4, 200);
    unsafe {
        copy_3d_async(MemoryRegion::buffer(&d, 32), MemoryRegion::host(&more, 64), Extent3D::new_2d(32, 4), &s).unwrap();
    }
    s.synchronize().unwrap();
    let got = d.to_vec(&s).unwrap();
    for r in 0..4 {
        assert_eq!(&got[r * 32..r * 32 + 32], &more[r * 64..r * 64 + 32], "row {}", r);
    }
    assert_eq!(&got[128..], &want[128..], "rows below the box unchanged");
}

#[test]
fn three_d_copies_round_trip() {
    let _serial = serial();
    let dev = require_gpu!("three_d_copies_round_trip");
    let mr = require_pool!("three_d_copies_round_trip", &dev);
    let s = dev.create_stream(StreamOptions::default()).unwrap();

    // Host: 4 slices of 6 rows of pitch 16. Device: 3 slices of 8 rows of pitch 24.
    let src = pattern(4 * 6 * 16, 41);
    let vol = mr.allocate(3 * 8 * 24, Some(&s)).unwrap();
    vol.fill(0, 1, &s).unwrap();
    let e = Extent3D::new_3d(10, 4, 2);
    copy_3d(MemoryRegion::buffer(&vol, 24).height(8).at(3, 2, 1), MemoryRegion::host(&src, 16).height(6).at(2, 1, 1), e, &s)
        .unwrap();
    let mut want = vec![0u8; 3 * 8 * 24];
    cpu_copy(&mut want, 24, 8, (3, 2, 1), &src, 16, 6, (2, 1, 1), (10, 4, 2));
    assert_eq!(vol.to_vec(&s).unwrap(), want, "host -> device, 3D");

    // And back into a fresh host volume laid out like the source.
    let mut back = vec![0xffu8; 4 * 6 * 16];
    copy_3d(
        MemoryRegion::host_mut(&mut back, 16).height(6).at(2, 1, 1),
        MemoryRegion::buffer(&vol, 24).height(8).at(3, 2, 1),
        e,
        &s,
    )
    .unwrap();
    let mut want_back = vec![0xffu8; 4 * 6 * 16];
    cpu_copy(&mut want_back, 16, 6, (2, 1, 1), &src, 16, 6, (2, 1, 1), (10, 4, 2));
    assert_eq!(back, want_back, "device -> host, 3D: the box came back, the rest untouched");

    // One slice of a volume as a 2D copy (z > 0, depth 1).
    let mut slice = vec![0u8; 8 * 24];
    copy_3d(
        MemoryRegion::host_mut(&mut slice, 24),
        MemoryRegion::buffer(&vol, 24).height(8).at(0, 0, 2),
        Extent3D::new_2d(24, 8),
        &s,
    )
    .unwrap();
    assert_eq!(&slice[..], &want[2 * 8 * 24..], "slice 2");
}

#[test]
fn invalid_regions_fail_and_queue_nothing() {
    let _serial = serial();
    let dev = require_gpu!("invalid_regions_fail_and_queue_nothing");
    let mr = require_pool!("invalid_regions_fail_and_queue_nothing", &dev);
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let d = mr.allocate(64, Some(&s)).unwrap();
    d.fill(0xee, 1, &s).unwrap();
    let e2 = Extent3D::new_2d(16, 4);

    // Host slices too short, checked by the binding.
    let short = vec![1u8; 63];
    let e = copy_3d(MemoryRegion::buffer(&d, 16), MemoryRegion::host(&short, 16), e2, &s).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert!(e.message.contains("past the end of its slice"), "{}", e.message);
    let mut out = vec![7u8; 63];
    let e = copy_3d(MemoryRegion::host_mut(&mut out, 16), MemoryRegion::buffer(&d, 16), e2, &s).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert_eq!(out, vec![7u8; 63], "nothing written");
    let long = vec![1u8; 64];
    let e = copy_3d(MemoryRegion::buffer(&d, 16), MemoryRegion::host(&long, 16).at(1, 0, 0), e2, &s).unwrap_err();
    assert!(e.message.contains("pitch"), "x + width above the pitch: {}", e.message);

    // Buffer sides, checked by the library.
    let e = copy_3d(MemoryRegion::buffer(&d, 16).at(0, 1, 0), MemoryRegion::host(&[0u8; 128], 16), e2, &s).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert!(e.message.contains("past the end of its buffer"), "{}", e.message);
    let e = copy_3d(MemoryRegion::buffer(&d, 8), MemoryRegion::host(&long, 16), e2, &s).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "x + width above the buffer's pitch: {}", e);
    let e = copy_3d(MemoryRegion::buffer(&d, 16), MemoryRegion::buffer(&d, 16), Extent3D::new_3d(16, 0, 1), &s).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "rows 0: {}", e);
    let e = copy_3d(MemoryRegion::buffer(&d, 16), MemoryRegion::buffer(&d, 16), Extent3D::new_3d(16, 2, 2), &s).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "3D without a slice height: {}", e);
    // A 2D copy at slice z > 0 addresses z * max(height, y + rows) rows further on: here bytes
    // 64..96 of a 64-byte buffer.
    let mut sink = vec![0u8; 32];
    let e = copy_3d(
        MemoryRegion::host_mut(&mut sink, 16),
        MemoryRegion::buffer(&d, 16).height(4).at(0, 0, 1),
        Extent3D::new_2d(16, 2),
        &s,
    )
    .unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "slice 1 lies past the buffer: {}", e);

    assert_eq!(d.to_vec(&s).unwrap(), vec![0xee; 64], "the failed copies queued nothing");
    d.close(None).unwrap();
    let e = copy_3d(MemoryRegion::host_mut(&mut sink, 16), MemoryRegion::buffer(&d, 16), Extent3D::new_2d(16, 1), &s).unwrap_err();
    assert_eq!(e.status, Status::InvalidState, "closed: {}", e);
    s.synchronize().unwrap();
}
