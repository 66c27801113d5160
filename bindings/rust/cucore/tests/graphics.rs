//! Graphics interop (`cucore::graphics`) without a GL context: the flags, hints and device lists
//! against the header, and, with a GPU, every refusal that needs no GL: image-only and unknown
//! registration flags, registering a buffer or an image with no GL context current (a clear
//! `Status::Cuda` error naming the entry point and the GL object), listing the GL context's
//! devices with none current, and mapping nothing. Registering, mapping and copying with a real
//! (headless EGL) GL context are tested by tests/gl/ and tests/python/. (Helpers and skip
//! rules: common/mod.rs.)

#[macro_use]
mod common;
use common::*;

use cucore::sys;
use cucore::{gl_get_devices, GlDeviceList, GraphicsMapHint, GraphicsRegisterFlags, GraphicsResource};

/// `GL_TEXTURE_2D`.
const GL_TEXTURE_2D: u32 = 0x0de1;

#[test]
fn register_flags_are_the_header_bits() {
    assert_eq!(GraphicsRegisterFlags::NONE.bits(), sys::CUCORE_GRAPHICS_REGISTER_NONE as u32);
    assert_eq!(GraphicsRegisterFlags::READ_ONLY.bits(), 1);
    assert_eq!(GraphicsRegisterFlags::WRITE_DISCARD.bits(), 2);
    assert_eq!(GraphicsRegisterFlags::SURFACE_LOAD_STORE.bits(), 4);
    assert_eq!(GraphicsRegisterFlags::TEXTURE_GATHER.bits(), 8);
    assert_eq!(GraphicsRegisterFlags::default(), GraphicsRegisterFlags::NONE);

    let both = GraphicsRegisterFlags::SURFACE_LOAD_STORE | GraphicsRegisterFlags::TEXTURE_GATHER;
    assert_eq!(both.bits(), 12);
    assert!(both.contains(GraphicsRegisterFlags::TEXTURE_GATHER));
    assert!(!both.contains(GraphicsRegisterFlags::READ_ONLY));
    assert!(both.contains(GraphicsRegisterFlags::NONE));
    let mut f = GraphicsRegisterFlags::READ_ONLY;
    f |= GraphicsRegisterFlags::TEXTURE_GATHER;
    assert_eq!(f.bits(), 9);

    let all = GraphicsRegisterFlags::READ_ONLY
        | GraphicsRegisterFlags::WRITE_DISCARD
        | GraphicsRegisterFlags::SURFACE_LOAD_STORE
        | GraphicsRegisterFlags::TEXTURE_GATHER;
    assert_eq!(GraphicsRegisterFlags::from_bits(15), Some(all));
    assert_eq!(GraphicsRegisterFlags::from_bits(0), Some(GraphicsRegisterFlags::NONE));
    assert_eq!(GraphicsRegisterFlags::from_bits(16), None);
    assert_eq!(GraphicsRegisterFlags::from_bits(0x8000_0001), None);
}

#[test]
fn register_flags_from_cuda_core_names() {
    assert_eq!(GraphicsRegisterFlags::from_names::<&str>(&[]).unwrap(), GraphicsRegisterFlags::NONE);
    assert_eq!(GraphicsRegisterFlags::from_names(&["none"]).unwrap(), GraphicsRegisterFlags::NONE);
    assert_eq!(
        GraphicsRegisterFlags::from_names(&["read_only", "texture_gather"]).unwrap(),
        GraphicsRegisterFlags::READ_ONLY | GraphicsRegisterFlags::TEXTURE_GATHER
    );
    assert_eq!(
        GraphicsRegisterFlags::from_names(&[String::from("write_discard"), String::from("surface_load_store")]).unwrap(),
        GraphicsRegisterFlags::WRITE_DISCARD | GraphicsRegisterFlags::SURFACE_LOAD_STORE
    );
    let e = GraphicsRegisterFlags::from_names(&["read_only", "readonly"]).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    assert_eq!(e.cuda_result, 0);
    assert!(e.message.contains("\"readonly\""), "{}", e);
    assert!(e.message.contains("read_only"), "the message lists the known names: {}", e);
}

#[test]
fn hints_and_device_lists_are_the_header_values() {
    assert_eq!(GraphicsMapHint::default(), GraphicsMapHint::None);
    assert_eq!(GraphicsMapHint::None.raw(), sys::CUCORE_GRAPHICS_MAP_HINT_NONE as u32);
    assert_eq!(GraphicsMapHint::ReadOnly.raw(), sys::CUCORE_GRAPHICS_MAP_HINT_READ_ONLY as u32);
    assert_eq!(GraphicsMapHint::WriteDiscard.raw(), sys::CUCORE_GRAPHICS_MAP_HINT_WRITE_DISCARD as u32);
    assert_eq!(GlDeviceList::default(), GlDeviceList::All);
    assert_eq!(GlDeviceList::All.raw(), 1);
    assert_eq!(GlDeviceList::CurrentFrame.raw(), 2);
    assert_eq!(GlDeviceList::NextFrame.raw(), 3);
}

#[test]
fn object_types_of_the_header() {
    assert_eq!(ObjectType::GraphicsResource.raw(), sys::CUCORE_OBJECT_GRAPHICS_RESOURCE);
    assert_eq!(ObjectType::GraphicsResource.name(), "graphics resource");
    // A mapped GL image is an opaque array (or a mipmapped array): there is no graphics array.
    assert_eq!(ObjectType::OpaqueArray.raw(), sys::CUCORE_OBJECT_OPAQUE_ARRAY);
    assert_eq!(ObjectType::MipmappedArray.raw(), sys::CUCORE_OBJECT_MIPMAPPED_ARRAY);
    live_object_count(ObjectType::GraphicsResource).expect("live_object_count");
    live_object_count(ObjectType::OpaqueArray).expect("live_object_count");
    assert_eq!(MemoryResourceKind::from_raw(sys::CUCORE_MEMORY_RESOURCE_GRAPHICS), MemoryResourceKind::Graphics);
    assert_eq!(MemoryResourceKind::Graphics.raw(), 8);
    assert!(!MemoryResourceKind::Graphics.is_stream_ordered());
}

/// Live graphics resources and arrays (a mapped image is an opaque or mipmapped array).
fn live_graphics() -> (usize, usize, usize) {
    (
        live_object_count(ObjectType::GraphicsResource).unwrap(),
        live_object_count(ObjectType::OpaqueArray).unwrap(),
        live_object_count(ObjectType::MipmappedArray).unwrap(),
    )
}

#[test]
fn gl_devices_without_a_gl_context_fail_clearly() {
    let _serial = serial();
    let e = gl_get_devices(GlDeviceList::All).expect_err("no GL context is current on a test thread");
    match e.status {
        Status::NoDriver | Status::NoDevice => {
            common::skip("gl_devices_without_a_gl_context_fail_clearly", &format!("no CUDA driver or device ({})", e));
        }
        _ => {
            assert_eq!(e.status, Status::Cuda, "{}", e);
            assert_ne!(e.cuda_result, 0, "{}", e);
            assert!(e.message.contains("GL context"), "{}", e);
            assert!(e.message.contains("cuGLGetDevices"), "{}", e);
        }
    }
    // Unknown lists and a NULL array with room are refused before the driver is asked.
    let mut count: u32 = 7;
    // SAFETY: valid out-pointers; NULL ordinals with capacity 0.
    unsafe {
        assert_eq!(
            sys::cucore_gl_get_devices(0, std::ptr::null_mut(), 0, &mut count),
            sys::CUCORE_ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            sys::cucore_gl_get_devices(4, std::ptr::null_mut(), 0, &mut count),
            sys::CUCORE_ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            sys::cucore_gl_get_devices(1, std::ptr::null_mut(), 2, &mut count),
            sys::CUCORE_ERROR_INVALID_ARGUMENT
        );
    }
}

#[test]
fn registering_without_a_gl_context_fails_clearly() {
    let _serial = serial();
    let dev = require_gpu!("registering_without_a_gl_context_fails_clearly");
    // Device objects and pinned primary contexts live for the process by design (the first registration
    // attempt of a process creates them): compare the kinds a registration could leave behind.
    let transient = || (live_counts()[3..].to_vec(), live_graphics());
    let before = transient();

    let e = GraphicsResource::from_gl_buffer(&dev, 1, GraphicsRegisterFlags::NONE).expect_err("no GL context is current");
    assert_eq!(e.status, Status::Cuda, "{}", e);
    assert_ne!(e.cuda_result, 0, "{}", e);
    assert!(e.message.contains("cuGraphicsGLRegisterBuffer"), "names the entry point: {}", e);
    assert!(e.message.contains("GL buffer 1") || e.message.contains("GL context"), "says what failed: {}", e);

    let e = GraphicsResource::from_gl_image(&dev, 1, GL_TEXTURE_2D, GraphicsRegisterFlags::SURFACE_LOAD_STORE)
        .expect_err("no GL context is current");
    assert_eq!(e.status, Status::Cuda, "{}", e);
    assert_ne!(e.cuda_result, 0, "{}", e);
    assert!(e.message.contains("cuGraphicsGLRegisterImage"), "names the entry point: {}", e);
    assert!(e.message.contains("0xde1") || e.message.contains("GL context"), "says what failed: {}", e);

    assert_eq!(transient(), before, "a failed registration leaves nothing behind");
}

#[test]
fn flags_are_validated_before_the_driver() {
    let _serial = serial();
    let dev = require_gpu!("flags_are_validated_before_the_driver");
    // Image-only flags on a buffer: refused whatever GL is current.
    for flags in [GraphicsRegisterFlags::SURFACE_LOAD_STORE, GraphicsRegisterFlags::TEXTURE_GATHER] {
        let e = GraphicsResource::from_gl_buffer(&dev, 1, flags).expect_err("image-only flag on a buffer");
        assert_eq!(e.status, Status::InvalidArgument, "{}", e);
        assert_eq!(e.cuda_result, 0, "{}", e);
        assert!(!e.message.is_empty());
    }
    // Unknown bits (the safe API cannot make them; the C ABI refuses them).
    let mut raw: *mut sys::cucore_graphics_resource_t = std::ptr::null_mut();
    // SAFETY: a live device handle and a valid out-pointer.
    unsafe {
        assert_eq!(
            sys::cucore_graphics_resource_from_gl_buffer(dev.as_raw(), 1, 0x10, &mut raw),
            sys::CUCORE_ERROR_INVALID_ARGUMENT
        );
        assert!(raw.is_null());
        assert_eq!(
            sys::cucore_graphics_resource_from_gl_image(dev.as_raw(), 1, GL_TEXTURE_2D, 0x100, &mut raw),
            sys::CUCORE_ERROR_INVALID_ARGUMENT
        );
        assert!(raw.is_null());
    }
}

#[test]
fn mapping_nothing_is_refused() {
    let _serial = serial();
    let dev = require_gpu!("mapping_nothing_is_refused");
    let stream = dev.create_stream(StreamOptions::default()).unwrap();
    let e = GraphicsResource::map_all(&[], &stream).expect_err("nothing to map");
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    // The C ABI refuses a count of 0 and NULL arrays too.
    let mut out: *mut sys::cucore_buffer_t = std::ptr::null_mut();
    // SAFETY: a live stream; the arrays are not read for a count of 0.
    unsafe {
        assert_eq!(
            sys::cucore_graphics_resources_map(std::ptr::null(), 0, stream.as_raw(), &mut out),
            sys::CUCORE_ERROR_INVALID_ARGUMENT
        );
    }
}
