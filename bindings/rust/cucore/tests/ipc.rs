//! IPC (`cucore::ipc`): the owned descriptor of an exported pool without a GPU; with one, what a
//! single process can check: export, the pool's identity, descriptors, and every refusal (a pool
//! or buffer that cannot be shared, a closed descriptor, corrupted, truncated and foreign
//! descriptors), each with its message. The round trip between two processes is in
//! tests/gpu/ipc_test.cpp and tests/python/test_ipc.py. (Helpers and skip rules: common/mod.rs.)

#[macro_use]
mod common;
use common::*;

use std::fs::File;
use std::os::unix::io::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd};

use cucore::ipc;

fn fd_is_open(fd: i32) -> bool {
    std::fs::metadata(format!("/proc/self/fd/{}", fd)).is_ok()
}

/// A file's identity: (device, inode), the same through every descriptor and path that reaches it.
type FileId = (u64, u64);

/// A new, empty file that nothing else in the process (or any other) opens; removed on drop. Its
/// identity tells its descriptors apart from any other, whatever number they get.
struct UniqueFile {
    path: std::path::PathBuf,
}

impl UniqueFile {
    fn create(what: &str) -> (UniqueFile, File) {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "cucore-ipc-test-{}-{}-{}",
            std::process::id(),
            what,
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let file = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path).unwrap();
        (UniqueFile { path }, file)
    }
}

impl Drop for UniqueFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn id_of(file: &File) -> FileId {
    use std::os::unix::fs::MetadataExt;
    let m = file.metadata().unwrap();
    (m.dev(), m.ino())
}

/// The descriptors of this process that refer to the file `id` now. Another thread may open and
/// close files meanwhile and reuse any descriptor number, but none of them reaches this file, so
/// the answer does not depend on what runs beside the test (checking whether a number is open did:
/// a parallel test could take the number the moment it was closed).
fn descriptors_of(id: FileId) -> Vec<i32> {
    use std::os::unix::fs::MetadataExt;
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        let fd: i32 = match entry.file_name().to_str().and_then(|n| n.parse().ok()) {
            Some(fd) => fd,
            None => continue,
        };
        // Follows the link to what the descriptor refers to; it may have been closed meanwhile.
        if let Ok(m) = std::fs::metadata(entry.path()) {
            if (m.dev(), m.ino()) == id {
                found.push(fd);
            }
        }
    }
    found
}

#[test]
fn a_pool_handle_owns_its_descriptor() {
    let (_file, opened) = UniqueFile::create("owned");
    let id = id_of(&opened);
    let fd = opened.into_raw_fd();
    assert_eq!(descriptors_of(id), vec![fd]);
    // SAFETY: a descriptor we own.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let handle = ipc::PoolHandle::new(owned, MemoryResourceKind::Pinned, [7; 16]);
    assert_eq!(handle.as_raw_fd(), fd);
    assert_eq!(handle.kind(), MemoryResourceKind::Pinned);
    assert_eq!(handle.pool_id(), [7; 16]);
    let raw = handle.to_raw();
    assert_eq!((raw.fd, raw.kind, raw.pool_id), (fd, cucore::sys::CUCORE_MEMORY_RESOURCE_PINNED as u32, [7; 16]));
    assert!(format!("{:?}", handle).contains("0707"));
    drop(handle);
    assert_eq!(descriptors_of(id), Vec::<i32>::new(), "dropping the handle closes its descriptor");

    let (_file, opened) = UniqueFile::create("given-up");
    let id = id_of(&opened);
    let fd = opened.into_raw_fd();
    // SAFETY: a descriptor we own.
    let handle = ipc::PoolHandle::new(unsafe { OwnedFd::from_raw_fd(fd) }, MemoryResourceKind::Device, [0; 16]);
    let kept = handle.into_raw_fd();
    assert_eq!(kept, fd);
    assert_eq!(descriptors_of(id), vec![kept], "into_raw_fd gives the descriptor up, still open");
    // SAFETY: ours again, closed here.
    drop(unsafe { OwnedFd::from_raw_fd(kept) });
    assert_eq!(descriptors_of(id), Vec::<i32>::new());
}

#[test]
fn sizes_match_the_header() {
    assert_eq!(std::mem::size_of::<ipc::PoolId>(), 16);
    assert_eq!(std::mem::size_of::<ipc::BufferDescriptor>(), 128);
    assert_eq!(std::mem::size_of::<ipc::EventDescriptor>(), 72);
    let o = EventOptions::ipc().to_raw();
    assert_eq!(o.flags, cucore::sys::CUCORE_EVENT_INTERPROCESS as u32);
}

#[test]
fn export_and_refusals_in_one_process() {
    let _serial = serial();
    let dev = require_gpu!("export_and_refusals_in_one_process");
    let _default = require_pool!("export_and_refusals_in_one_process", &dev);
    let before = live_counts();
    {
        let s = dev.create_stream(StreamOptions::default()).unwrap();
        let pool = match MemoryResource::device_pool(&dev, DeviceMemoryResourceOptions::default().ipc_enabled(true)) {
            Ok(p) => p,
            Err(e) if e.status == Status::NotSupported => {
                common::skip("export_and_refusals_in_one_process", &format!("no IPC-enabled pools ({})", e));
                return;
            }
            Err(e) => panic!("an IPC-enabled device_pool: {}", e),
        };
        let shared = ipc::export_memory_resource(&pool).unwrap();
        assert!(fd_is_open(shared.as_raw_fd()));
        assert_eq!(shared.kind(), MemoryResourceKind::Device);
        assert_eq!(shared.pool_id(), ipc::pool_id(&pool).unwrap());
        let buf = pool.allocate(4096, Some(&s)).unwrap();
        let d = ipc::export_buffer(&buf).unwrap();
        assert_eq!(&d[..8], b"CUCOREIB");
        assert_eq!(ipc::export_buffer(&buf).unwrap(), d, "exporting is deterministic");

        // What cannot be shared.
        let plain = MemoryResource::device_pool(&dev, DeviceMemoryResourceOptions::default()).unwrap();
        let e = ipc::export_memory_resource(&plain).unwrap_err();
        assert_eq!(e.status, Status::NotSupported, "{}", e);
        assert!(e.message.contains("ipc_enabled"), "{}", e.message);
        assert_eq!(ipc::pool_id(&plain).unwrap_err().status, Status::NotSupported);
        let pbuf = plain.allocate(64, Some(&s)).unwrap();
        let e = ipc::export_buffer(&pbuf).unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument, "{}", e);
        let view = buf.view(0, 64).unwrap();
        assert!(ipc::export_buffer(&view).unwrap_err().message.contains("is a view"));
        // Only imported pools import, and a closed descriptor is refused before the driver.
        let e = ipc::import_buffer(&pool, &d, &s).unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument, "{}", e);
        assert!(e.message.contains("not a pool imported"), "{}", e.message);
        let closed = ipc::export_memory_resource(&pool).unwrap();
        let number = closed.as_raw_fd();
        let stale = closed.to_raw();
        drop(closed);
        // SAFETY: a struct whose fd number is closed; the library only looks at it.
        let mut out = std::ptr::null_mut();
        let status = unsafe { cucore::sys::cucore_ipc_import_memory_resource(dev.as_raw(), &stale, &mut out) };
        assert_eq!(status, cucore::sys::CUCORE_ERROR_INVALID_ARGUMENT);
        assert!(out.is_null());
        let _ = number;

        // Events: the interprocess flag, and descriptors checked before the driver.
        assert_eq!(
            dev.create_event(EventOptions { ipc_enabled: true, timing_enabled: true, blocking_sync: false })
                .unwrap_err()
                .status,
            Status::InvalidArgument
        );
        let plain_event = dev.create_event(EventOptions::default()).unwrap();
        let e = ipc::export_event(&plain_event).unwrap_err();
        assert!(e.message.contains("CUCORE_EVENT_INTERPROCESS"), "{}", e.message);
        let shared_event = dev.create_event(EventOptions::ipc()).unwrap();
        assert!(shared_event.is_ipc_enabled().unwrap() && !shared_event.is_timing_enabled().unwrap());
        let ed = ipc::export_event(&shared_event).unwrap();
        assert_eq!(&ed[..3], b"CUE");
        let mut bad = ed;
        bad[30] ^= 0x20;
        let e = ipc::import_event(&dev, &bad).unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument);
        assert!(e.message.contains("checksum mismatch"), "{}", e.message);
        let e = ipc::import_event(&dev, &ed[..40]).unwrap_err();
        assert!(e.message.contains("truncated: 40 bytes"), "{}", e.message);
        s.synchronize().unwrap();
    }
    assert_eq!(live_counts(), before, "everything released");
}
