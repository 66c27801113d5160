//! Unit tests that need no GPU and no driver (they also pass where both are present).

use std::os::raw::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::common::owner_handoff;
use crate::*;

// The integration tests' skip reporting (a summary on stdout at exit, which cargo shows).
#[path = "../tests/common/skips.rs"]
mod skips;
use skips::skip;

fn assert_send_sync<T: Send + Sync>() {}

// Compile-time: every handle type (and the error) may cross threads.
const _: fn() = || {
    assert_send_sync::<Device>();
    assert_send_sync::<Context>();
    assert_send_sync::<Stream>();
    assert_send_sync::<Event>();
    assert_send_sync::<MemoryResource>();
    assert_send_sync::<Buffer>();
    assert_send_sync::<OpaqueArray>();
    assert_send_sync::<MipmappedArray>();
    assert_send_sync::<TextureObject>();
    assert_send_sync::<SurfaceObject>();
    assert_send_sync::<GraphDefinition>();
    assert_send_sync::<GraphNode>();
    assert_send_sync::<Graph>();
    assert_send_sync::<GraphBuilder>();
    assert_send_sync::<GraphMemoryResource>();
    assert_send_sync::<GraphUpdateError>();
    assert_send_sync::<Error>();
};

/// What a test binary prints at exit when tests skipped: the count scripts/gpu_suite.sh reads,
/// then one line per reason with its tests.
#[test]
fn skip_summary_counts_and_groups_by_reason() {
    let skips: Vec<(String, String)> = [("a", "no driver"), ("b", "no NVRTC"), ("c", "no driver")]
        .iter()
        .map(|(t, r)| (t.to_string(), r.to_string()))
        .collect();
    assert_eq!(
        skips::summary(&skips),
        "\nskipped: 3 of the tests above (libtest counts them as passed):\n    2: no driver: a, c\n    1: no NVRTC: b\n"
    );
}

#[test]
fn handles_are_send_and_sync() {
    assert_send_sync::<Device>();
    assert_send_sync::<Context>();
    assert_send_sync::<Stream>();
    assert_send_sync::<Event>();
    assert_send_sync::<MemoryResource>();
    assert_send_sync::<Buffer>();
    assert_send_sync::<Error>();
    // A handle is one pointer: the wrappers add no state.
    assert_eq!(std::mem::size_of::<Stream>(), std::mem::size_of::<*mut c_void>());
    assert_eq!(std::mem::size_of::<Option<Stream>>(), std::mem::size_of::<*mut c_void>());
    assert_eq!(std::mem::size_of::<Buffer>(), std::mem::size_of::<*mut c_void>());
    assert_eq!(std::mem::size_of::<Option<MemoryResource>>(), std::mem::size_of::<*mut c_void>());
}

#[test]
fn version_matches_the_headers() {
    assert_eq!(version(), BINDING_VERSION);
    assert_eq!(
        version_string(),
        format!("{}.{}.{}", sys::CUCORE_VERSION_MAJOR, sys::CUCORE_VERSION_MINOR, sys::CUCORE_VERSION_PATCH)
    );
}

#[test]
fn status_names_and_round_trip() {
    let expected = [
        (Status::Success, "CUCORE_SUCCESS"),
        (Status::InvalidArgument, "CUCORE_ERROR_INVALID_ARGUMENT"),
        (Status::InvalidHandle, "CUCORE_ERROR_INVALID_HANDLE"),
        (Status::InvalidState, "CUCORE_ERROR_INVALID_STATE"),
        (Status::NoDriver, "CUCORE_ERROR_NO_DRIVER"),
        (Status::NoDevice, "CUCORE_ERROR_NO_DEVICE"),
        (Status::NotSupported, "CUCORE_ERROR_NOT_SUPPORTED"),
        (Status::OutOfMemory, "CUCORE_ERROR_OUT_OF_MEMORY"),
        (Status::Cuda, "CUCORE_ERROR_CUDA"),
        (Status::NotReady, "CUCORE_ERROR_NOT_READY"),
        (Status::Internal, "CUCORE_ERROR_INTERNAL"),
        (Status::Compilation, "CUCORE_ERROR_COMPILATION"),
    ];
    for (i, (status, name)) in expected.iter().enumerate() {
        assert_eq!(status.raw(), i as i32);
        assert_eq!(Status::from_raw(i as i32), *status);
        assert_eq!(status.name(), *name);
        assert_eq!(status.to_string(), *name);
    }
    assert_eq!(Status::from_raw(4242), Status::Unknown(4242));
    assert_eq!(Status::Unknown(4242).raw(), 4242);
    assert_eq!(Status::Unknown(4242).name(), "CUCORE_STATUS_UNKNOWN");
}

#[test]
fn object_types() {
    assert_eq!(ObjectType::Device.name(), "device");
    assert_eq!(ObjectType::Context.name(), "context");
    assert_eq!(ObjectType::Stream.name(), "stream");
    assert_eq!(ObjectType::Event.name(), "event");
    assert_eq!(ObjectType::MemoryResource.name(), "memory resource");
    assert_eq!(ObjectType::Buffer.name(), "buffer");
    assert_eq!(ObjectType::MemoryResource.raw(), 5);
    assert_eq!(ObjectType::Buffer.raw(), 6);
    assert_eq!(ObjectType::Program.name(), "program");
    assert_eq!(ObjectType::ObjectCode.name(), "object code");
    assert_eq!(ObjectType::Linker.name(), "linker");
    assert_eq!(ObjectType::Kernel.name(), "kernel");
    assert_eq!(ObjectType::ProgramCache.name(), "program cache");
    assert_eq!(ObjectType::ProgramCache.raw(), 11);
    assert_eq!(ObjectType::GraphicsResource.raw(), 12);
    assert_eq!(ObjectType::OpaqueArray.raw(), 13);
    assert_eq!(ObjectType::MipmappedArray.raw(), 14);
    assert_eq!(ObjectType::TextureObject.raw(), 15);
    assert_eq!(ObjectType::SurfaceObject.raw(), 16);
    assert_eq!(ObjectType::GraphDefinition.raw(), 17);
    assert_eq!(ObjectType::GraphNode.raw(), 18);
    assert_eq!(ObjectType::Graph.raw(), 19);
    assert_eq!(ObjectType::GraphBuilder.raw(), 20);
    assert_eq!(ObjectType::SmResource.raw(), 21);
    assert_eq!(ObjectType::WorkqueueResource.raw(), 22);
    assert_eq!(ObjectType::TensorMapDescriptor.raw(), 23);
    assert_eq!(ObjectType::SystemDevice.raw(), 24);
    assert_eq!(ObjectType::SystemEventSet.raw(), 25);
    assert_eq!(ObjectType::SystemEventSet.name(), "system event set");
    assert_eq!(ObjectType::Communicator.raw(), sys::CUCORE_OBJECT_TYPE_COUNT - 1);
    assert_eq!(ObjectType::Communicator.name(), "communicator");
    assert_eq!(ObjectType::SmResource.name(), "sm resource");
    assert_eq!(ObjectType::TensorMapDescriptor.name(), "tensor map descriptor");
    assert_eq!(ObjectType::GraphDefinition.name(), "graph definition");
    assert_eq!(ObjectType::GraphNode.name(), "graph node");
    assert_eq!(ObjectType::Graph.name(), "graph");
    assert_eq!(ObjectType::GraphBuilder.name(), "graph builder");
    assert_eq!(ObjectType::OpaqueArray.name(), "opaque array");
    assert_eq!(ObjectType::MipmappedArray.name(), "mipmapped array");
    assert_eq!(ObjectType::TextureObject.name(), "texture object");
    assert_eq!(ObjectType::SurfaceObject.name(), "surface object");
    for t in [
        ObjectType::Any,
        ObjectType::Device,
        ObjectType::Context,
        ObjectType::Stream,
        ObjectType::Event,
        ObjectType::MemoryResource,
        ObjectType::Buffer,
        ObjectType::Program,
        ObjectType::ObjectCode,
        ObjectType::Linker,
        ObjectType::Kernel,
        ObjectType::ProgramCache,
        ObjectType::GraphicsResource,
        ObjectType::OpaqueArray,
        ObjectType::MipmappedArray,
        ObjectType::TextureObject,
        ObjectType::SurfaceObject,
        ObjectType::GraphDefinition,
        ObjectType::GraphNode,
        ObjectType::Graph,
        ObjectType::GraphBuilder,
    ] {
        live_object_count(t).expect("live_object_count");
    }
    release_error_count().expect("release_error_count");
}

#[test]
fn release_error_handler_installs_and_uninstalls() {
    // Replacing or removing a handler frees the previous one (no closure leaks).
    let first = std::sync::Arc::new(());
    let held = first.clone();
    set_release_error_handler(Some(Box::new(move |e: &Error| {
        let _ = &held;
        eprintln!("release error: {}", e)
    })));
    assert_eq!(std::sync::Arc::strong_count(&first), 2, "the installed handler holds its capture");
    let second = std::sync::Arc::new(());
    let held2 = second.clone();
    set_release_error_handler(Some(Box::new(move |_: &Error| {
        let _ = &held2;
    })));
    assert_eq!(std::sync::Arc::strong_count(&first), 1, "replacing frees the previous handler");
    assert_eq!(std::sync::Arc::strong_count(&second), 2);
    set_release_error_handler(None);
    assert_eq!(std::sync::Arc::strong_count(&second), 1, "removing frees the handler");
}

#[test]
fn error_display() {
    let e = Error { status: Status::Cuda, cuda_result: 700, message: "cucore_stream_synchronize: boom".into() };
    assert_eq!(e.to_string(), "CUCORE_ERROR_CUDA (CUresult 700): cucore_stream_synchronize: boom");
    let e = Error { status: Status::InvalidHandle, cuda_result: 0, message: String::new() };
    assert_eq!(e.to_string(), "CUCORE_ERROR_INVALID_HANDLE");
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(e);
    assert!(boxed.to_string().contains("INVALID_HANDLE"));
}

/// Without a driver (as on the build machine) every call that needs one fails with NoDriver,
/// and the message says what was missing. Skipped where a driver is installed.
#[test]
fn no_driver_errors_carry_status_and_message() {
    let e = match Device::count() {
        Ok(n) => {
            skip(
                "no_driver_errors_carry_status_and_message",
                &format!("a CUDA driver is installed ({} device(s)); the no-driver path is not testable here", n),
            );
            return;
        }
        Err(e) => e,
    };
    if e.status != Status::NoDriver {
        skip(
            "no_driver_errors_carry_status_and_message",
            &format!("a CUDA driver is installed but failed ({}); the no-driver path is not testable here", e),
        );
        return;
    }
    assert!(e.message.contains("libcuda"), "message should name libcuda: {:?}", e.message);
    assert_eq!(e.cuda_result, 0);
    assert!(e.to_string().starts_with("CUCORE_ERROR_NO_DRIVER: "), "{}", e);

    let e = Device::get(0).unwrap_err();
    assert_eq!(e.status, Status::NoDriver);
    assert!(e.message.contains("libcuda"), "{:?}", e.message);
    let e = Device::current().unwrap_err();
    assert_eq!(e.status, Status::NoDriver);
    let e = driver_version().unwrap_err();
    assert_eq!(e.status, Status::NoDriver);
    assert!(e.message.contains("libcuda"), "{:?}", e.message);
    assert_eq!(Device::all().unwrap_err().status, Status::NoDriver);
    // Wrapping foreign driver objects needs the driver too.
    let e = unsafe { Stream::from_handle(0x1000 as *mut c_void, None) }.unwrap_err();
    assert_eq!(e.status, Status::NoDriver);
}

#[test]
fn negative_ordinal_is_invalid_argument() {
    let e = Device::get(-1).unwrap_err();
    // Arguments are validated before the driver is needed.
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert!(!e.message.is_empty());
}

/// A pointer that is no handle at all.
fn garbage<T>(junk: &mut [u64; 8]) -> *mut T {
    junk.as_mut_ptr() as *mut T
}

/// Garbage handles, adopted against the rules, give InvalidHandle with a message and never
/// crash, not even when dropped.
#[test]
fn garbage_handles_fail_cleanly() {
    let mut junk = [0x5a5a_5a5a_5a5a_5a5a_u64; 8];
    let stream = unsafe { Stream::adopt(garbage(&mut junk)) };
    let e = stream.synchronize().unwrap_err();
    assert_eq!(e.status, Status::InvalidHandle);
    assert!(!e.message.is_empty());
    assert_eq!(stream.is_done().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(stream.priority().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(stream.record(EventOptions::default()).unwrap_err().status, Status::InvalidHandle);
    drop(stream); // release answers INVALID_HANDLE; Drop ignores it

    let event = unsafe { Event::adopt(garbage(&mut junk)) };
    assert_eq!(event.is_done().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(Event::elapsed_time(&event, &event).unwrap_err().status, Status::InvalidHandle);
    assert_eq!((&event - &event).unwrap_err().status, Status::InvalidHandle);
    drop(event);

    let device = unsafe { Device::adopt(garbage(&mut junk)) };
    assert_eq!(device.name().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(device.attribute(DeviceAttribute::WARP_SIZE).unwrap_err().status, Status::InvalidHandle);
    assert_eq!(device.properties().unwrap_err().status, Status::InvalidHandle);
    assert!(format!("{:?}", device).starts_with("Device("));
    drop(device);

    let context = unsafe { Context::adopt(garbage(&mut junk)) };
    assert_eq!(context.is_primary().unwrap_err().status, Status::InvalidHandle);
    drop(context);
}

#[test]
#[should_panic(expected = "cucore_stream_retain failed")]
fn clone_of_a_garbage_handle_panics() {
    let mut junk = [0x77_u64; 8];
    let stream = unsafe { Stream::adopt(garbage(&mut junk)) };
    let _ = stream.clone();
}

#[test]
fn into_raw_and_adopt_round_trip() {
    let mut junk = [1_u64; 8];
    let p: *mut sys::cucore_stream_t = garbage(&mut junk);
    let s = unsafe { Stream::adopt(p) };
    assert_eq!(s.as_raw(), p);
    let back = s.into_raw(); // no release happens
    assert_eq!(back, p);
}

/// Counts how many of its clones are alive, to prove closures are freed.
fn tracker() -> Arc<AtomicUsize> {
    Arc::new(AtomicUsize::new(0))
}

#[test]
fn failed_host_func_launch_frees_the_closure_without_running_it() {
    let mut junk = [3_u64; 8];
    let stream = unsafe { Stream::adopt(garbage(&mut junk)) };
    let ran = tracker();
    let captured = ran.clone();
    let e = stream.launch_host_func(move || {
        captured.fetch_add(1, Ordering::SeqCst);
    });
    assert_eq!(e.unwrap_err().status, Status::InvalidHandle);
    assert_eq!(ran.load(Ordering::SeqCst), 0, "must not run");
    assert_eq!(Arc::strong_count(&ran), 1, "closure must be freed");
    let _ = stream.into_raw();
}

#[test]
fn host_fn_trampoline_runs_once_and_frees() {
    let ran = tracker();
    let captured = ran.clone();
    let f = move || {
        captured.fetch_add(1, Ordering::SeqCst);
    };
    fn raw_of<F: FnOnce() + Send + 'static>(f: F) -> (*mut c_void, unsafe extern "C" fn(*mut c_void)) {
        (Box::into_raw(Box::new(f)) as *mut c_void, crate::stream::host_fn_trampoline::<F>)
    }
    let (user_data, trampoline) = raw_of(f);
    unsafe { trampoline(user_data) };
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    assert_eq!(Arc::strong_count(&ran), 1);

    // A zero-sized closure works too.
    let (user_data, trampoline) = raw_of(|| {});
    unsafe { trampoline(user_data) };
}

fn counting_owner(count: &Arc<AtomicUsize>) -> Option<OwnerCallback> {
    let captured = count.clone();
    Some(Box::new(move || {
        captured.fetch_add(1, Ordering::SeqCst);
    }))
}

#[test]
fn owner_callback_runs_once_on_last_release() {
    let ran = tracker();
    let handoff = owner_handoff(counting_owner(&ran));
    let (on_release, user_data) = (handoff.on_release.expect("a callback"), handoff.user_data);
    handoff.finish(true); // the call succeeded: the library keeps its reference
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    unsafe { on_release(user_data) }; // the last release
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    assert_eq!(Arc::strong_count(&ran), 1, "callback freed");
}

#[test]
fn owner_callback_of_a_failed_call_is_dropped_uncalled() {
    let ran = tracker();
    let handoff = owner_handoff(counting_owner(&ran));
    handoff.finish(false);
    assert_eq!(ran.load(Ordering::SeqCst), 0, "dropped, not called");
    assert_eq!(Arc::strong_count(&ran), 1, "callback freed");
}

#[test]
fn owner_callback_called_inside_a_failed_call_runs_once_and_is_freed_once() {
    let ran = tracker();
    let handoff = owner_handoff(counting_owner(&ran));
    // The library gave up the half-made object inside the failing call and released it.
    unsafe { (handoff.on_release.unwrap())(handoff.user_data) };
    handoff.finish(false);
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    assert_eq!(Arc::strong_count(&ran), 1, "callback freed");
}

#[test]
fn no_owner_passes_null() {
    let handoff = owner_handoff(None);
    assert!(handoff.on_release.is_none() && handoff.user_data.is_null());
    handoff.finish(false);
}

/// Through the real library: a failed wrap (no driver here, or a NULL handle) never calls the
/// owner and frees it.
#[test]
fn failed_from_handle_frees_the_owner_uncalled() {
    let ran = tracker();
    assert!(unsafe { Stream::from_handle(std::ptr::null_mut(), counting_owner(&ran)) }.is_err());
    assert!(unsafe { Event::from_handle(std::ptr::null_mut(), counting_owner(&ran)) }.is_err());
    assert!(unsafe { Context::from_handle(std::ptr::null_mut(), counting_owner(&ran)) }.is_err());
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert_eq!(Arc::strong_count(&ran), 1);
}

#[test]
fn options_to_raw() {
    let d = StreamOptions::default();
    assert!(d.nonblocking);
    assert_eq!(d.priority, None);
    assert_eq!(d.to_raw(), sys::cucore_stream_options_t::INIT);
    let o = StreamOptions { nonblocking: false, priority: Some(-3) }.to_raw();
    assert_eq!(o.struct_size as usize, std::mem::size_of::<sys::cucore_stream_options_t>());
    assert_eq!(o.flags, sys::CUCORE_STREAM_BLOCKING as u32);
    assert_eq!(o.priority, -3);

    assert_eq!(EventOptions::default().to_raw(), sys::cucore_event_options_t::INIT);
    assert_eq!(EventOptions::timing().to_raw().flags, sys::CUCORE_EVENT_TIMING as u32);
    let o = EventOptions { timing_enabled: true, blocking_sync: true, ipc_enabled: false }.to_raw();
    assert_eq!(o.flags, (sys::CUCORE_EVENT_TIMING | sys::CUCORE_EVENT_BLOCKING_SYNC) as u32);
    assert_eq!(o.struct_size, 8);
}

/// The generated table (gen_device_attributes.py) must list exactly the header's values.
#[test]
fn device_attribute_table_matches_header() {
    let header = include_str!("../../../../include/cucore/device_attributes.h");
    let mut from_header: Vec<(String, i32)> = Vec::new();
    for line in header.lines() {
        let line = line.trim();
        let rest = match line.strip_prefix("CUCORE_DEVICE_ATTRIBUTE_") {
            Some(r) => r,
            None => continue,
        };
        let mut parts = rest.splitn(2, '=');
        let name = parts.next().unwrap().trim().to_string();
        let value_text = match parts.next() {
            Some(v) => v.split(',').next().unwrap().trim().to_string(),
            None => continue,
        };
        if name == "FORCE_INT32" {
            continue;
        }
        let value = if let Some(alias) = value_text.strip_prefix("CUCORE_DEVICE_ATTRIBUTE_") {
            from_header.iter().find(|(n, _)| n == alias).expect("alias of an earlier name").1
        } else {
            value_text.parse::<i32>().expect("a decimal value")
        };
        from_header.push((name, value));
    }
    let table: Vec<(String, i32)> = DeviceAttribute::all().iter().map(|(n, a)| (n.to_string(), a.0)).collect();
    assert_eq!(
        table, from_header,
        "bindings/rust/cucore/src/device_attributes.rs is stale: run python3 bindings/rust/gen_device_attributes.py"
    );
    assert!(table.len() > 100);
}

#[test]
fn device_attribute_names() {
    assert_eq!(DeviceAttribute::WARP_SIZE, DeviceAttribute(10));
    assert_eq!(DeviceAttribute::WARP_SIZE.name(), Some("WARP_SIZE"));
    assert_eq!(DeviceAttribute::from_name("MULTIPROCESSOR_COUNT"), Some(DeviceAttribute(16)));
    // An alias resolves to the first (current) name.
    assert_eq!(DeviceAttribute::SHARED_MEMORY_PER_BLOCK.name(), Some("MAX_SHARED_MEMORY_PER_BLOCK"));
    assert_eq!(DeviceAttribute(999_999).name(), None);
    assert_eq!(format!("{:?}", DeviceAttribute(16)), "DeviceAttribute::MULTIPROCESSOR_COUNT");
    assert_eq!(format!("{:?}", DeviceAttribute(999_999)), "DeviceAttribute(999999)");
    assert_eq!(sys::CUCORE_DEVICE_ATTRIBUTE_WARP_SIZE, DeviceAttribute::WARP_SIZE.raw());
    assert_eq!(sys::CUCORE_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, DeviceAttribute::UNIFIED_ADDRESSING.0);
}

#[test]
fn value_types() {
    let u = Uuid([0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0, 1, 2, 3, 4, 5, 6, 0xff]);
    assert_eq!(u.to_string(), "12345678-9abc-def0-0001-0203040506ff");
    let cc = ComputeCapability { major: 9, minor: 0 };
    assert_eq!(cc.arch(), "90");
    assert_eq!(cc.to_string(), "9.0");
    assert!(ComputeCapability { major: 8, minor: 9 } < cc);
}

/// The thread-local error detail belongs to the failing thread.
#[test]
fn errors_are_per_thread() {
    let mut junk = [9_u64; 8];
    let stream = unsafe { Stream::adopt(garbage(&mut junk)) };
    assert_eq!(stream.synchronize().unwrap_err().status, Status::InvalidHandle);
    let _ = stream.into_raw();
    std::thread::spawn(|| unsafe {
        sys::cucore_clear_last_error();
        assert_eq!(sys::cucore_last_error_status(), sys::CUCORE_SUCCESS);
    })
    .join()
    .unwrap();
    assert_eq!(unsafe { sys::cucore_last_error_status() }, sys::CUCORE_ERROR_INVALID_HANDLE);
}

// ---- memory -------------------------------------------------------------------------------------

#[test]
fn memory_value_types() {
    assert_eq!(DeviceMemoryResourceOptions::default().to_raw(), sys::cucore_device_memory_resource_options_t::INIT);
    let o = DeviceMemoryResourceOptions { max_size: 1 << 30, release_threshold: 1 << 20, ipc_enabled: false }.to_raw();
    assert_eq!(o.struct_size as usize, std::mem::size_of::<sys::cucore_device_memory_resource_options_t>());
    assert_eq!((o.reserved0, o.max_size, o.release_threshold, o.ipc_enabled), (0, 1 << 30, 1 << 20, 0));
    let o = DeviceMemoryResourceOptions::default().max_size(5).release_threshold(6).ipc_enabled(true).to_raw();
    assert_eq!((o.max_size, o.release_threshold, o.ipc_enabled), (5, 6, 1));

    for k in [MemoryResourceKind::Device, MemoryResourceKind::LegacyPinned, MemoryResourceKind::Unknown(77)] {
        assert_eq!(MemoryResourceKind::from_raw(k.raw()), k);
    }
    assert_eq!(MemoryResourceKind::Device.raw(), sys::CUCORE_MEMORY_RESOURCE_DEVICE);
    assert_eq!(MemoryResourceKind::LegacyPinned.raw(), sys::CUCORE_MEMORY_RESOURCE_LEGACY_PINNED);
    assert_eq!(MemoryResourceKind::from_raw(0), MemoryResourceKind::Unknown(0));
    assert!(MemoryResourceKind::Device.is_stream_ordered());
    assert!(!MemoryResourceKind::LegacyPinned.is_stream_ordered());
    assert_eq!(Accessibility::default(), Accessibility { device: false, host: false });
}

/// Garbage memory handles give InvalidHandle with a message, never a crash, not even when
/// dropped; nothing is queued and no host slice is touched.
#[test]
fn garbage_memory_handles_fail_cleanly() {
    let mut junk = [0x6b6b_6b6b_6b6b_6b6b_u64; 8];
    let mut junk_stream = [0x3c3c_3c3c_3c3c_3c3c_u64; 8];
    let mr = unsafe { MemoryResource::adopt(garbage(&mut junk)) };
    let stream = unsafe { Stream::adopt(garbage(&mut junk_stream)) };
    let e = mr.kind().unwrap_err();
    assert_eq!(e.status, Status::InvalidHandle);
    assert!(!e.message.is_empty());
    assert_eq!(mr.device_id().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(mr.accessibility().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(mr.is_host_accessible().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(mr.allocate(16, None).unwrap_err().status, Status::InvalidHandle);
    assert_eq!(mr.allocate(16, Some(&stream)).unwrap_err().status, Status::InvalidHandle);
    assert!(format!("{:?}", mr).starts_with("MemoryResource("));
    drop(mr);

    let buf = unsafe { Buffer::adopt(garbage(&mut junk)) };
    assert_eq!(buf.size().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(buf.address().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(buf.device_id().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(buf.memory_resource().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(buf.view(0, 0).unwrap_err().status, Status::InvalidHandle);
    assert_eq!(buf.close(None).unwrap_err().status, Status::InvalidHandle);
    assert_eq!(buf.set_deallocation_stream(&stream).unwrap_err().status, Status::InvalidHandle);
    assert_eq!(buf.fill(0, 1, &stream).unwrap_err().status, Status::InvalidHandle);
    assert_eq!(buf.copy_from(&buf, &stream).unwrap_err().status, Status::InvalidHandle);
    assert_eq!(buf.copy_to(&buf, &stream).unwrap_err().status, Status::InvalidHandle);
    assert_eq!(buf.copy_to_new(&stream).unwrap_err().status, Status::InvalidHandle);
    assert_eq!(buf.to_vec(&stream).unwrap_err().status, Status::InvalidHandle);
    let src = [1u8, 2, 3, 4];
    let mut dst = [9u8; 4];
    assert_eq!(buf.copy_from_host(0, &src, &stream).unwrap_err().status, Status::InvalidHandle);
    assert_eq!(buf.copy_to_host(0, &mut dst, &stream).unwrap_err().status, Status::InvalidHandle);
    assert_eq!(dst, [9u8; 4], "a failed copy writes nothing");
    assert!(format!("{:?}", buf).starts_with("Buffer("));
    drop(buf);
    let _ = stream.into_raw();
}

#[test]
#[should_panic(expected = "cucore_buffer_retain failed")]
fn clone_of_a_garbage_buffer_panics() {
    let mut junk = [0x55_u64; 8];
    let buf = unsafe { Buffer::adopt(garbage(&mut junk)) };
    let _ = buf.clone();
}

#[test]
fn buffer_from_handle_rejects_bad_arguments_and_frees_the_owner_uncalled() {
    let ran = tracker();
    // Address 0 with a non-zero size.
    let e = unsafe { Buffer::from_handle(0, 64, None, counting_owner(&ran)) }.unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert!(!e.message.is_empty());
    // A garbage device.
    let mut junk = [0x21_u64; 8];
    let dev = unsafe { Device::adopt(garbage(&mut junk)) };
    let mut host = [0u8; 64];
    let e = unsafe { Buffer::from_handle(host.as_mut_ptr() as u64, 64, Some(&dev), counting_owner(&ran)) }.unwrap_err();
    assert_eq!(e.status, Status::InvalidHandle, "{}", e);
    let _ = dev.into_raw();
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert_eq!(Arc::strong_count(&ran), 1, "owner callbacks freed");
}

/// Wrapping host memory needs no driver: the whole life of a foreign host buffer (properties,
/// views, clones, close, the owner's callback) is testable here. Buffers are counted, so these
/// checks use their own values, not the process-wide live counts (tests run in parallel).
#[test]
fn foreign_host_buffer_life_without_a_gpu() {
    let mut host = vec![0u8; 256];
    let address = host.as_mut_ptr() as u64;
    let ran = tracker();
    // SAFETY: `host` outlives the buffer and its views (all dropped below), and no work is queued.
    let buf = unsafe { Buffer::from_handle(address, 256, None, counting_owner(&ran)) }.expect("from_handle");
    assert_eq!(buf.size().unwrap(), 256);
    assert_eq!(buf.address().unwrap(), address);
    assert_eq!(buf.device_id().unwrap(), None, "host memory");
    assert!(buf.memory_resource().unwrap().is_none(), "foreign memory has no resource");
    assert_eq!(format!("{:?}", buf), format!("Buffer({:#x}, 256 bytes, host)", address));

    // Views: in range, the whole buffer, empty at the end; out of range fails.
    let v = buf.view(16, 32).unwrap();
    assert_eq!((v.address().unwrap(), v.size().unwrap()), (address + 16, 32));
    assert_eq!(v.device_id().unwrap(), None);
    assert_eq!(buf.view(0, 256).unwrap().size().unwrap(), 256);
    assert_eq!(buf.view(256, 0).unwrap().size().unwrap(), 0);
    for (offset, size) in [(0u64, 257u64), (255, 2), (257, 0), (u64::MAX, 2), (1, u64::MAX)] {
        let e = buf.view(offset, size).unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument, "view({}, {}): {}", offset, size, e);
        assert!(!e.message.is_empty());
    }
    let vv = v.view(8, 8).unwrap();
    assert_eq!(vv.address().unwrap(), address + 24);
    assert_ne!(vv, v, "a view is another object");

    // No resource to allocate a copy from.
    let mut junk = [0x44_u64; 8];
    let stream = unsafe { Stream::adopt(garbage(&mut junk)) };
    // (copy_to_new asks for the resource first: no stream is touched.)
    let e = buf.copy_to_new(&stream).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    let _ = stream.into_raw();

    // A clone is the same object; closing it closes both. The views keep the memory, so the
    // owner is told only when the last of them goes.
    let c = buf.clone();
    assert_eq!(c, buf);
    c.close(None).unwrap();
    assert_eq!((buf.size().unwrap(), buf.address().unwrap()), (0, 0), "closed: size and address read 0");
    c.close(None).unwrap(); // closing twice is a no-op
    let e = buf.view(0, 0).unwrap_err();
    assert_eq!(e.status, Status::InvalidState, "{}", e);
    assert!(!e.message.is_empty());
    assert_eq!(v.size().unwrap(), 32, "views stay open");
    assert_eq!(vv.view(0, 8).unwrap().address().unwrap(), address + 24);
    drop(buf);
    drop(c);
    drop(v);
    assert_eq!(ran.load(Ordering::SeqCst), 0, "vv still holds the memory");
    drop(vv);
    assert_eq!(ran.load(Ordering::SeqCst), 1, "owner called once, with the last holder");
    assert_eq!(Arc::strong_count(&ran), 1, "owner callback freed");
    drop(host);

    // Zero size at address 0 is a valid empty buffer.
    let empty = unsafe { Buffer::from_handle(0, 0, None, None) }.unwrap();
    assert_eq!((empty.size().unwrap(), empty.address().unwrap()), (0, 0));
    assert_eq!(empty.view(0, 0).unwrap().size().unwrap(), 0);
    assert_eq!(empty.view(0, 1).unwrap_err().status, Status::InvalidArgument);
}

/// Without a driver no device can be had, so no memory resource can be made; wrapping and
/// closing host memory still works (it calls no driver function). Skipped where a driver is
/// installed.
#[test]
fn no_driver_memory_errors() {
    match Device::count() {
        Err(e) if e.status == Status::NoDriver => {}
        other => {
            skip(
                "no_driver_memory_errors",
                &format!("a CUDA driver is installed ({:?}); the no-driver path is not testable here", other),
            );
            return;
        }
    }
    let e = Device::get(0).unwrap_err();
    assert_eq!(e.status, Status::NoDriver);
    // Closing a foreign host buffer calls no driver function.
    let ran = tracker();
    let mut host = [7u8; 8];
    let buf = unsafe { Buffer::from_handle(host.as_mut_ptr() as u64, 8, None, counting_owner(&ran)) }.unwrap();
    buf.close(None).unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 1, "closing the last holder tells the owner");
    drop(buf);
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    assert_eq!(host, [7u8; 8]);
}

// ---- Arrays, textures and surfaces (no driver needed) ----------------------------------------------

#[test]
fn array_options_to_raw() {
    assert_eq!(OpaqueArrayOptions::default().to_raw(), sys::cucore_opaque_array_options_t::INIT);
    let o = OpaqueArrayOptions::default()
        .format(ArrayFormat::Float16)
        .num_channels(4)
        .kind(ArrayKind::LayeredCubemap)
        .flags(ArrayFlags::SURFACE_LOAD_STORE | ArrayFlags::TEXTURE_GATHER)
        .width(32)
        .height(32)
        .depth(0)
        .layers(3)
        .to_raw();
    assert_eq!(o.struct_size as usize, std::mem::size_of::<sys::cucore_opaque_array_options_t>());
    assert_eq!(o.format, sys::CUCORE_ARRAY_FORMAT_FLOAT16);
    assert_eq!(o.num_channels, 4);
    assert_eq!(o.kind, sys::CUCORE_ARRAY_KIND_LAYERED_CUBEMAP);
    assert_eq!(o.flags, 3);
    assert_eq!((o.width, o.height, o.depth, o.layers), (32, 32, 0, 3));
    assert_eq!(o.reserved0, 0);
    // Values the binding does not know go through as given (the library refuses them).
    let o = OpaqueArrayOptions::default().format(ArrayFormat::Unknown(0x77)).kind(ArrayKind::Unknown(9)).to_raw();
    assert_eq!((o.format, o.kind), (0x77, 9));
}

#[test]
fn array_enums_are_the_header_values() {
    assert_eq!(ArrayFormat::Uint8.raw(), 0x01);
    assert_eq!(ArrayFormat::Int32.raw(), 0x0a);
    assert_eq!(ArrayFormat::Float32.raw(), 0x20);
    assert_eq!(ArrayFormat::UnormInt101010_2.raw(), 0x50);
    assert_eq!(ArrayFormat::Bc6hUf16.raw(), 0x9b);
    assert_eq!(ArrayFormat::SnormInt16x4.raw(), 0xcb);
    assert_eq!(ArrayFormat::all().len(), 8 + 1 + 14 + 12);
    assert_eq!(ArrayKind::default(), ArrayKind::Plain);
    assert_eq!(ArrayKind::from_raw(3), ArrayKind::LayeredCubemap);
    assert_eq!(ArrayKind::from_raw(7), ArrayKind::Unknown(7));
    for k in [ArrayKind::Plain, ArrayKind::Layered, ArrayKind::Cubemap, ArrayKind::LayeredCubemap] {
        assert_eq!(ArrayKind::from_raw(k.raw()), k);
    }
    assert_eq!(ArrayFlags::default(), ArrayFlags::NONE);
    assert_eq!(
        [ArrayFlags::SURFACE_LOAD_STORE, ArrayFlags::TEXTURE_GATHER, ArrayFlags::DEPTH_TEXTURE, ArrayFlags::SPARSE]
            .map(ArrayFlags::bits),
        [1, 2, 4, 8]
    );
    let all = ArrayFlags::SURFACE_LOAD_STORE
        | ArrayFlags::TEXTURE_GATHER
        | ArrayFlags::DEPTH_TEXTURE
        | ArrayFlags::SPARSE;
    assert_eq!(ArrayFlags::from_bits(15), Some(all));
    assert_eq!(ArrayFlags::from_bits(0), Some(ArrayFlags::NONE));
    assert_eq!(ArrayFlags::from_bits(16), None);
    let mut f = ArrayFlags::SPARSE;
    f |= ArrayFlags::DEPTH_TEXTURE;
    assert!(f.contains(ArrayFlags::SPARSE) && f.contains(ArrayFlags::DEPTH_TEXTURE));
    assert!(!f.contains(ArrayFlags::SURFACE_LOAD_STORE));
    assert_eq!([AddressMode::Clamp, AddressMode::Wrap, AddressMode::Mirror, AddressMode::Border].map(AddressMode::raw), [0, 1, 2, 3]);
    assert_eq!((FilterMode::Point.raw(), FilterMode::Linear.raw()), (0, 1));
    assert_eq!((ReadMode::ElementType.raw(), ReadMode::NormalizedFloat.raw()), (0, 1));
    assert_eq!(
        (AddressMode::default(), FilterMode::default(), ReadMode::default()),
        (AddressMode::Clamp, FilterMode::Point, ReadMode::ElementType)
    );
}

#[test]
fn array_info_from_raw() {
    let mut raw = sys::cucore_opaque_array_info_t::INIT;
    raw.format = sys::CUCORE_ARRAY_FORMAT_BC1_UNORM;
    raw.num_channels = 4;
    raw.element_size = 8;
    raw.kind = sys::CUCORE_ARRAY_KIND_LAYERED;
    raw.flags = sys::CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE as u32;
    raw.width = 10;
    raw.height = 6;
    raw.layers = 2;
    raw.row_bytes = 24;
    raw.row_count = 2;
    raw.slice_count = 2;
    raw.size_bytes = 96;
    raw.device_ordinal = 3;
    raw.is_owned = 1;
    raw.num_levels = 1;
    let i = OpaqueArrayInfo::from_raw(&raw);
    assert_eq!(i.format, ArrayFormat::Bc1Unorm);
    assert_eq!((i.num_channels, i.element_size), (4, 8));
    assert_eq!(i.kind, ArrayKind::Layered);
    assert!(i.is_surface_load_store());
    assert_eq!((i.width, i.height, i.depth, i.layers), (10, 6, 0, 2));
    assert_eq!((i.row_bytes, i.row_count, i.slice_count, i.size_bytes), (24, 2, 2, 96));
    assert_eq!((i.device_ordinal, i.is_owned, i.num_levels), (3, true, 1));
}

/// Garbage array and texture handles give InvalidHandle, never a crash (also when dropped);
/// no host slice is touched and nothing is queued.
#[test]
fn garbage_array_and_texture_handles_fail_cleanly() {
    let mut junk = [0x4d4d_4d4d_4d4d_4d4d_u64; 8];
    let mut junk_stream = [0x3c3c_3c3c_3c3c_3c3c_u64; 8];
    let stream = unsafe { Stream::adopt(garbage(&mut junk_stream)) };
    let array = unsafe { OpaqueArray::adopt(garbage(&mut junk)) };
    let invalid = |r: Result<()>| assert_eq!(r.unwrap_err().status, Status::InvalidHandle);
    assert_eq!(array.info().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(array.handle().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(array.to_vec(&stream).unwrap_err().status, Status::InvalidHandle);
    invalid(array.close());
    let src = [1.0f32, 2.0, 3.0, 4.0];
    let mut dst = [7u16; 4];
    invalid(array.copy_from_host(&src, &stream));
    invalid(array.copy_to_host(&mut dst, &stream));
    assert_eq!(dst, [7u16; 4], "a failed copy writes nothing");
    invalid(array.copy_from_array(&array, &stream));
    invalid(array.copy_to_array(&array, &stream));
    // A region copy reads the array's layout first (to check the host side): InvalidHandle.
    let mut host = [0u8; 64];
    invalid(OpaqueArray::copy(MemoryRegion::host_mut(&mut host, 16), &array, Extent3D::new_2d(4, 4), &stream));
    invalid(OpaqueArray::copy(&array, MemoryRegion::host(&[0u8; 64], 16), Extent3D::new_2d(4, 4), &stream));
    invalid(OpaqueArray::copy(&array, ArrayRegion::new(&array).at(1, 2, 3), Extent3D::new_3d(1, 1, 1), &stream));
    assert_eq!(host, [0u8; 64]);
    assert!(format!("{:?}", array).starts_with("OpaqueArray("));

    let mipmapped = unsafe { MipmappedArray::adopt(garbage(&mut junk)) };
    assert_eq!(mipmapped.info().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(mipmapped.num_levels().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(mipmapped.handle().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(mipmapped.level(0).unwrap_err().status, Status::InvalidHandle);
    invalid(mipmapped.close());
    assert!(format!("{:?}", mipmapped).starts_with("MipmappedArray("));

    let e = TextureObject::create(None, &array, TextureObjectOptions::default()).unwrap_err();
    assert_eq!(e.status, Status::InvalidHandle, "{}", e);
    assert_eq!(SurfaceObject::create(None, &array).unwrap_err().status, Status::InvalidHandle);
    assert_eq!(TextureObject::create(None, &mipmapped, TextureObjectOptions::default()).unwrap_err().status, Status::InvalidHandle);

    let texture = unsafe { TextureObject::adopt(garbage(&mut junk)) };
    assert_eq!(texture.handle().unwrap_err().status, Status::InvalidHandle);
    invalid(texture.close());
    let mut scratch = 0u64;
    assert_eq!(texture.kernel_arg(&mut scratch).unwrap_err().status, Status::InvalidHandle);
    let surface = unsafe { SurfaceObject::adopt(garbage(&mut junk)) };
    assert_eq!(surface.handle().unwrap_err().status, Status::InvalidHandle);
    invalid(surface.close());
    assert_eq!((&surface).kernel_arg(&mut scratch).unwrap_err().status, Status::InvalidHandle);
    assert!(format!("{:?}", texture).starts_with("TextureObject("));
    assert!(format!("{:?}", surface).starts_with("SurfaceObject("));
    drop((array, mipmapped, texture, surface));
    let _ = stream.into_raw();
}

#[test]
#[should_panic(expected = "cucore_opaque_array_retain failed")]
fn clone_of_a_garbage_array_panics() {
    let mut junk = [0x56_u64; 8];
    let array = unsafe { OpaqueArray::adopt(garbage(&mut junk)) };
    let _ = array.clone();
}

/// A region copy between two memory sides is refused before any call (there is no array to
/// copy to or from), and nothing is written.
#[test]
fn region_copy_without_an_array_side_is_refused() {
    let mut junk_stream = [0x3d_u64; 8];
    let stream = unsafe { Stream::adopt(garbage(&mut junk_stream)) };
    let src = [5u8; 32];
    let mut dst = [0u8; 32];
    let e = OpaqueArray::copy(MemoryRegion::host_mut(&mut dst, 8), MemoryRegion::host(&src, 8), Extent3D::new_2d(8, 4), &stream)
        .unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert!(e.message.contains("neither side is an array"), "{}", e);
    assert_eq!(dst, [0u8; 32]);
    let _ = stream.into_raw();
}

#[test]
fn array_from_handle_rejects_bad_arguments_and_frees_the_owner_uncalled() {
    let ran = tracker();
    let mut junk = [0x22_u64; 8];
    let dev = unsafe { Device::adopt(garbage(&mut junk)) };
    let e = unsafe { OpaqueArray::from_handle(&dev, 0x1000 as *mut c_void, counting_owner(&ran)) }.unwrap_err();
    assert_eq!(e.status, Status::InvalidHandle, "{}", e);
    let e = unsafe { MipmappedArray::from_handle(&dev, 0x1000 as *mut c_void, counting_owner(&ran)) }.unwrap_err();
    assert_eq!(e.status, Status::InvalidHandle, "{}", e);
    let _ = dev.into_raw();
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert_eq!(Arc::strong_count(&ran), 1, "owner callbacks freed");
}

// Graphs: tests/graph.rs.
mod graph;
