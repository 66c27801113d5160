//! Device and pinned memory pools: pool lifetimes, pool attributes and trimming, pinned pools'
//! options and memory, and peer access. The options test needs no GPU; the others skip without
//! one. (Helpers and skip rules: common/mod.rs.)

#[macro_use]
mod common;
use common::*;

use cucore::{sys, Access, PinnedMemoryResourceOptions};

// ---- Options (no GPU) ------------------------------------------------------------------------------

#[test]
fn pinned_options_build_the_c_struct() {
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
}

// ---- On a GPU ----------------------------------------------------------------------------------------

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
            common::skip(name, "the second-device part needs two GPUs");
            return;
        }
    };
    if !peer.can_access_peer(&dev).unwrap() {
        let e = pool.set_peer_access(&peer, Access::ReadWrite).unwrap_err();
        assert_eq!(e.status, Status::NotSupported, "{}", e);
        common::skip(name, "device 1 cannot reach device 0's memory");
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
