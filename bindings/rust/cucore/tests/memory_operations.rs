//! Host locations, batched memory operations and stream memory operations: the values and C
//! structs (no GPU needed), and on a real GPU a batch of host->device, device->device and
//! device->host copies read back, batched prefetches of managed buffers, and stream A waiting
//! (32- and 64-bit) on values stream B writes after a gated fill, then showing B's data; the same
//! through `batch_memory_ops`. What a driver lacks skips with the reason printed (the batched
//! operations need CUDA 13.0). (Helpers and skip rules: common/mod.rs.)

#[macro_use]
mod common;
use common::*;

use cucore::{
    copy_3d_batch, copy_batch, copy_batch_buffers, Extent3D, MemoryRegion, StridedCopy, discard_batch, discard_prefetch_batch, prefetch_batch, sys, BatchCopy, CopyOptions,
    CopySide, Host, Location, ManagedMemoryResourceOptions, MemcpyOverlapMode, MemcpySrcAccessOrder, MemoryBarrierScope,
    MemoryResource, Status, StreamMemoryOp, StreamOptions, WaitCondition,
};

// ---- Values (no GPU) ----------------------------------------------------------------------------

#[test]
fn host_is_a_location() {
    assert_eq!(Location::from(Host::any()), Location::Host);
    assert_eq!(Location::from(Host::numa(2)), Location::HostNuma(2));
    assert_eq!(Location::from(Host::numa_current()), Location::HostNumaCurrent);
    assert_ne!(Host::numa(1), Host::numa(2));
    assert!(Host::current_numa_id().unwrap() >= 0);
}

#[test]
fn copy_options_build_the_c_struct() {
    assert_eq!(CopyOptions::default().to_raw().src_access_order, sys::CUCORE_MEMCPY_SRC_ACCESS_ORDER_STREAM);
    let raw = CopyOptions {
        src_access_order: MemcpySrcAccessOrder::DuringApiCall,
        src_location_hint: None,
        dst_location_hint: Some(Host::any().into()),
        overlap_mode: MemcpyOverlapMode::PreferOverlapWithCompute,
    }
    .to_raw();
    assert_eq!(raw.struct_size as usize, std::mem::size_of::<sys::cucore_copy_options_t>());
    assert_eq!(raw.src_access_order, sys::CUCORE_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL);
    assert_eq!(raw.overlap_mode, sys::CUCORE_MEMCPY_OVERLAP_MODE_PREFER_OVERLAP_WITH_COMPUTE);
    assert_eq!(raw.src_location_hint.type_, sys::CUCORE_LOCATION_NONE);
    assert_eq!(raw.dst_location_hint.type_, sys::CUCORE_LOCATION_HOST);
}

// ---- On a GPU ---------------------------------------------------------------------------------------

#[test]
fn copy_batch_mixes_directions() {
    let _serial = serial();
    let name = "copy_batch_mixes_directions";
    let dev = require_gpu!(name);
    let pool = require_pool!(name, &dev);
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    const N: u64 = 4096;
    let pinned = MemoryResource::legacy_pinned(&dev).unwrap();
    let host_in = pinned.allocate(N, None).unwrap();
    let host_out = pinned.allocate(N, None).unwrap();
    let d: Vec<_> = (0..4).map(|_| pool.allocate(N, Some(&s)).unwrap()).collect();
    host_in.copy_from_host(0, &pattern(N as usize, 1), &s).unwrap();
    d[1].copy_from_host(0, &pattern(N as usize, 2), &s).unwrap();
    d[3].copy_from_host(0, &pattern(N as usize, 3), &s).unwrap();
    s.synchronize().unwrap();
    let copies = [
        BatchCopy::new(CopySide::buffer(&host_in, 0), CopySide::buffer(&d[0], 0), N), // host -> device
        BatchCopy { options_index: 1, ..BatchCopy::new(CopySide::buffer(&d[1], 0), CopySide::buffer(&d[2], 0), N) },
        BatchCopy::new(CopySide::buffer(&d[3], 0), CopySide::buffer(&host_out, 0), N), // device -> host
    ];
    let overlap = CopyOptions { overlap_mode: MemcpyOverlapMode::PreferOverlapWithCompute, ..CopyOptions::default() };
    if supported(name, "cuMemcpyBatchAsync", copy_batch(&s, &copies, &[CopyOptions::default(), overlap])).is_none() {
        return;
    }
    s.synchronize().unwrap();
    assert_eq!(d[0].to_vec(&s).unwrap(), pattern(N as usize, 1));
    assert_eq!(d[2].to_vec(&s).unwrap(), pattern(N as usize, 2));
    assert_eq!(host_out.to_vec(&s).unwrap(), pattern(N as usize, 3));
    // cuda.core's form: whole buffers, one set of options.
    copy_batch_buffers(&s, &[&d[0]], &[&d[1]], CopyOptions::default()).unwrap();
    assert_eq!(d[1].to_vec(&s).unwrap(), pattern(N as usize, 1));
    assert_eq!(
        copy_batch_buffers(&s, &[&d[0]], &[], CopyOptions::default()).unwrap_err().status,
        Status::InvalidArgument
    );
}

#[test]
fn copy_3d_batch_of_strided_regions() {
    let _serial = serial();
    let name = "copy_3d_batch_of_strided_regions";
    let dev = require_gpu!(name);
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let image = dev.allocate(64 * 8, &s).unwrap();
    let packed = dev.allocate(16 * 4, &s).unwrap();
    let pixels = pattern(64 * 8, 5);
    image.copy_from_host(0, &pixels, &s).unwrap();
    let mut host = vec![0u8; 8];
    let copies = vec![
        StridedCopy {
            dst: MemoryRegion::buffer(&packed, 16),
            src: MemoryRegion::buffer(&image, 64).at(4, 2, 0),
            extent: Extent3D::new_2d(16, 4),
        },
        StridedCopy {
            dst: MemoryRegion::host_mut(&mut host, 8),
            src: MemoryRegion::buffer(&image, 64).at(0, 7, 0),
            extent: Extent3D::new_2d(8, 1),
        },
    ];
    if supported(name, "cuMemcpy3DBatchAsync", copy_3d_batch(&s, copies, CopyOptions::default())).is_none() {
        return;
    }
    let got = packed.to_vec(&s).unwrap();
    for row in 0..4 {
        assert_eq!(got[row * 16..row * 16 + 16], pixels[(2 + row) * 64 + 4..(2 + row) * 64 + 20]);
    }
    assert_eq!(host[..], pixels[7 * 64..7 * 64 + 8]);
}

#[test]
fn prefetch_and_discard_batches() {
    let _serial = serial();
    let name = "prefetch_and_discard_batches";
    let dev = require_gpu!(name);
    let mr = match supported(name, "managed memory", MemoryResource::managed(&dev, ManagedMemoryResourceOptions::default())) {
        Some(mr) => mr,
        None => return,
    };
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let bufs: Vec<_> = (0..3).map(|_| mr.allocate(1 << 16, Some(&s)).unwrap()).collect();
    let refs: Vec<_> = bufs.iter().collect();
    if supported(name, "cuMemPrefetchBatchAsync", prefetch_batch(&s, &refs, &[Location::Device(0)])).is_none() {
        return;
    }
    s.synchronize().unwrap();
    for b in &bufs {
        assert_eq!(b.last_prefetch_location().unwrap(), Some(Location::Device(0)));
    }
    prefetch_batch(&s, &refs, &[Host::any().into(), Location::Device(0), Location::Host]).unwrap();
    s.synchronize().unwrap();
    assert_eq!(bufs[1].last_prefetch_location().unwrap(), Some(Location::Device(0)));
    let host = bufs[2].last_prefetch_location().unwrap();
    assert!(
        matches!(host, Some(Location::Host) | Some(Location::HostNuma(_)) | Some(Location::HostNumaCurrent)),
        "host memory (the driver may name its NUMA node): {:?}",
        host
    );
    // Discarded contents are unspecified; new data then reads back.
    discard_batch(&s, &refs[..2]).unwrap();
    bufs[0].copy_from_host(0, &pattern(1 << 16, 9), &s).unwrap();
    assert_eq!(bufs[0].to_vec(&s).unwrap(), pattern(1 << 16, 9));
    discard_prefetch_batch(&s, &refs[2..], &[Location::Device(0)]).unwrap();
    bufs[2].fill(0x44, 1, &s).unwrap();
    assert_eq!(bufs[2].to_vec(&s).unwrap(), vec![0x44; 1 << 16]);
    let plain = dev.allocate(64, &s).unwrap();
    assert_eq!(discard_batch(&s, &[&plain]).unwrap_err().status, Status::InvalidArgument);
}

/// Bytes of the data and output buffers of the two-stream scenarios.
const N: usize = 1 << 16;

/// The two-stream scenarios' world: stream A (the waiter), stream B (the writer), a 64-byte flag in pinned
/// host memory (the driver refuses stream memory operations on device-pool memory: CUDA_ERROR_INVALID_VALUE,
/// H200, driver 580), and N-byte data and output buffers of the device's pool.
struct Pair {
    a: Stream,
    b: Stream,
    flag: Buffer,
    data: Buffer,
    out: Buffer,
}

impl Pair {
    fn new(dev: &Device) -> Pair {
        let a = dev.create_stream(StreamOptions::default()).unwrap();
        let b = dev.create_stream(StreamOptions::default()).unwrap();
        let flag = MemoryResource::legacy_pinned(dev).unwrap().allocate(64, None).unwrap();
        let data = dev.allocate(N as u64, &a).unwrap();
        let out = dev.allocate(N as u64, &a).unwrap();
        Pair { a, b, flag, data, out }
    }
}

#[test]
fn a_stream_waits_for_the_values_another_writes() {
    let _serial = serial();
    let name = "a_stream_waits_for_the_values_another_writes";
    let dev = require_gpu!(name);
    let Pair { a, b, flag, data, out } = Pair::new(&dev);
    for x in [&flag, &data, &out] {
        x.fill(0, 4, &a).unwrap();
    }
    a.synchronize().unwrap();
    let big = (1u64 << 40) + 5;
    let gate = Gate::new();
    let held = gate.clone();
    // B first, so that whatever hardware queues the streams share, B's work is ahead of A's wait.
    b.launch_host_func(move || held.wait()).unwrap();
    data.fill(0xA5, 1, &b).unwrap();
    b.write_value_32(&flag, 0, 1, false).unwrap();
    b.write_value_64(&flag, 8, big, false).unwrap();
    a.wait_value_32(&flag, 0, 1, WaitCondition::Geq, false).unwrap();
    a.wait_value_64(&flag, 8, 1u64 << 40, WaitCondition::Geq, false).unwrap();
    out.copy_from(&data, &a).unwrap();
    let pending = !a.is_done().unwrap();
    gate.open();
    a.synchronize().unwrap();
    assert!(pending, "stream A ran past its wait before the value was written");
    assert_eq!(out.to_vec(&a).unwrap(), vec![0xA5; N]);
    let f = flag.to_vec(&a).unwrap();
    assert_eq!(u32::from_le_bytes(f[0..4].try_into().unwrap()), 1);
    assert_eq!(u64::from_le_bytes(f[8..16].try_into().unwrap()), big);
    b.synchronize().unwrap();
    // Refused before the driver: misaligned, too wide for the buffer.
    assert_eq!(a.write_value_32(&flag, 2, 1, false).unwrap_err().status, Status::InvalidArgument);
    assert_eq!(a.wait_value_64(&flag, 60, 1, WaitCondition::Eq, false).unwrap_err().status, Status::InvalidArgument);
}

#[test]
fn batch_memory_ops_on_both_sides() {
    let _serial = serial();
    let name = "batch_memory_ops_on_both_sides";
    let dev = require_gpu!(name);
    let Pair { a, b, flag, data, out } = Pair::new(&dev);
    flag.fill(0, 4, &a).unwrap();
    a.synchronize().unwrap();
    let word = 0x0123_4567_89AB_CDEFu64;
    let gate = Gate::new();
    let held = gate.clone();
    b.launch_host_func(move || held.wait()).unwrap();
    data.fill(0x3C, 1, &b).unwrap();
    b.batch_memory_ops(&[
        StreamMemoryOp::memory_barrier(MemoryBarrierScope::Device),
        StreamMemoryOp::write_value_64(&flag, 8, word, false),
        StreamMemoryOp::write_value_32(&flag, 0, 7, false),
    ])
    .unwrap();
    a.batch_memory_ops(&[
        StreamMemoryOp::wait_value_32(&flag, 0, 7, WaitCondition::Eq, false),
        StreamMemoryOp::wait_value_64(&flag, 8, word, WaitCondition::Eq, false),
        StreamMemoryOp::wait_value_32(&flag, 0, 4, WaitCondition::And, false),
    ])
    .unwrap();
    a.memory_barrier(MemoryBarrierScope::System).unwrap();
    out.copy_from(&data, &a).unwrap();
    let pending = !a.is_done().unwrap();
    gate.open();
    a.synchronize().unwrap();
    assert!(pending, "stream A ran past its waits before the values were written");
    assert_eq!(out.to_vec(&a).unwrap(), vec![0x3C; N]);
    let f = flag.to_vec(&a).unwrap();
    assert_eq!(u32::from_le_bytes(f[0..4].try_into().unwrap()), 7);
    assert_eq!(u64::from_le_bytes(f[8..16].try_into().unwrap()), word);
    match a.flush_remote_writes() {
        Ok(()) => {}
        Err(e) => assert_eq!(e.status, Status::NotSupported, "{}", e),
    }
    a.synchronize().unwrap();
    b.synchronize().unwrap();
}
