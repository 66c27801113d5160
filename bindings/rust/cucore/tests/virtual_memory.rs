//! Virtual memory resources: their options (no GPU needed) and, on a real GPU, buffers that grow
//! and keep their contents, reservations, and the access granted to the resource's device.
//! (Helpers and skip rules: common/mod.rs.)

#[macro_use]
mod common;
use common::*;

use cucore::{sys, Access, Granularity, Location, VirtualMemoryResourceOptions};

// ---- Options (no GPU) ------------------------------------------------------------------------------

#[test]
fn virtual_options_build_the_c_struct() {
    assert_eq!(VirtualMemoryResourceOptions::default().to_raw(), sys::cucore_virtual_memory_resource_options_t::INIT);
    let raw = VirtualMemoryResourceOptions::default()
        .location(Location::HostNuma(1))
        .granularity(Granularity::Minimum)
        .posix_fd_shareable(true)
        .reserve_size(1 << 24)
        .self_access(Access::Read)
        .to_raw();
    assert_eq!((raw.location_type, raw.location_id), (sys::CUCORE_LOCATION_HOST_NUMA, 1));
    assert_eq!((raw.minimum_granularity, raw.posix_fd_shareable, raw.reserve_size), (1, 1, 1 << 24));
    assert_eq!(raw.self_access, sys::CUCORE_ACCESS_READ);
    let raw =
        VirtualMemoryResourceOptions::default().location(Location::Device(0)).granularity(Granularity::Recommended).to_raw();
    assert_eq!((raw.location_type, raw.minimum_granularity), (sys::CUCORE_LOCATION_DEVICE, 0));
}

// ---- On a GPU ----------------------------------------------------------------------------------------

#[test]
fn virtual_memory_buffers_grow_and_keep_their_contents() {
    let _serial = serial();
    let name = "virtual_memory_buffers_grow_and_keep_their_contents";
    let dev = require_gpu!(name);
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let vm = match supported(
        name,
        "virtual memory",
        MemoryResource::virtual_memory(&dev, VirtualMemoryResourceOptions::default()),
    ) {
        Some(vm) => vm,
        None => return,
    };
    assert_eq!(vm.kind().unwrap(), MemoryResourceKind::Virtual);
    assert_eq!(vm.device_id().unwrap(), Some(0));
    assert_eq!(vm.peer_access(&dev).unwrap(), Access::ReadWrite);
    let e = vm.set_peer_access(&dev, Access::None).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);

    let b = vm.allocate(1000, None).unwrap();
    assert_eq!(b.size().unwrap(), 1000);
    assert!(b.is_device_accessible().unwrap());
    assert_eq!(b.deallocation_stream().unwrap(), None, "synchronous");
    let head = pattern(1000, 5);
    b.copy_from_host(0, &head, &s).unwrap();
    s.synchronize().unwrap();

    // Past the 2 MiB granularity: moves or extends, the contents stay.
    const BIG: u64 = (5 << 20) + 12;
    b.grow(BIG).unwrap();
    assert_eq!(b.size().unwrap(), BIG);
    let got = b.to_vec(&s).unwrap();
    assert_eq!(&got[..1000], &head[..], "the old bytes survive the growth");
    b.view(BIG - 12, 12).unwrap().fill(0x99, 1, &s).unwrap();
    let mut tail = [0u8; 14];
    b.copy_to_host(BIG - 14, &mut tail, &s).unwrap();
    assert_eq!(&tail[2..], &[0x99; 12]);
    b.grow(64).unwrap();
    assert_eq!(b.size().unwrap(), BIG, "not above the size: nothing happens");
    {
        let _view = b.view(0, 16).unwrap();
        let e = b.grow(BIG * 2).unwrap_err();
        assert_eq!(e.status, Status::InvalidState, "not while a view exists: {}", e);
    }

    // With room reserved, the buffer grows in place.
    let roomy = MemoryResource::virtual_memory(&dev, VirtualMemoryResourceOptions::default().reserve_size(64 << 20)).unwrap();
    let r = roomy.allocate(4096, Some(&s)).unwrap();
    r.fill(0x0102_0304, 4, &s).unwrap();
    s.synchronize().unwrap();
    let address = r.address().unwrap();
    r.grow(16 << 20).unwrap();
    assert_eq!(r.address().unwrap(), address, "in place, inside the reservation");
    let got = r.view(0, 4096).unwrap().to_vec(&s).unwrap();
    assert!(got.chunks(4).all(|c| c == [4, 3, 2, 1]), "{:x?}", &got[..8]);

    // A read-only resource grants its device what it was told.
    let read_only = MemoryResource::virtual_memory(&dev, VirtualMemoryResourceOptions::default().self_access(Access::Read));
    assert_eq!(read_only.unwrap().peer_access(&dev).unwrap(), Access::Read);

    // Other buffers do not grow.
    let legacy = MemoryResource::legacy_pinned(&dev).unwrap().allocate(64, None).unwrap();
    assert_eq!(legacy.grow(128).unwrap_err().status, Status::InvalidArgument);
    drop((b, r));
    dev.synchronize().unwrap();
}
