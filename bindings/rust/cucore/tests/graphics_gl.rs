//! Graphics interop (`cucore::graphics`) on a real NVIDIA GL context: GL buffers written by CUDA
//! and read by GL and the other way round, an RGBA8 texture through mapped arrays both ways, a
//! batch mapped and unmapped in one call each (`MappedBuffers`, `GraphicsResource::unmap_all`),
//! unmapping on another stream, the state errors (double map, unmap when not mapped, every call
//! after close), registering and mapping on a second thread with its own GL context, and 10,000
//! map/unmap cycles that leak nothing; a mapped texture sampled by a kernel through a texture
//! object. The Rust twin of tests/gl/graphics_test.cpp.
//!
//! The GL context is headless EGL on CUDA device 0 (egl_context/mod.rs). GL is per thread, so
//! each test makes its own context current on its thread. Without a CUDA device or an NVIDIA
//! GL context each test prints "skipped: <test>: <reason>" and passes, as the other GPU tests do
//! (common/mod.rs); with CUCORE_GL_REQUIRED=1 (scripts/gpu_suite.sh on a GPU server) a missing
//! GL context fails the test instead. The tests run one at a time (common::serial), because the
//! live-object and release-error counts they compare are process-wide.

#[macro_use]
mod common;
mod egl_context;

use common::*;
use egl_context::{EglContext, GL_TEXTURE_2D};

use cucore::{
    gl_get_devices, ArrayFlags, ArrayFormat, ArrayKind, GlDeviceList, GraphicsMapHint, GraphicsRegisterFlags,
    GraphicsResource, TextureObjectOptions,
};

/// Whether a missing GL context fails the tests (CUCORE_GL_REQUIRED=1) rather than skips them.
fn gl_required() -> bool {
    std::env::var("CUCORE_GL_REQUIRED").map_or(false, |v| v == "1")
}

/// Device 0 and a GL context on it, current on this thread; or None after printing why the test
/// is skipped.
fn gl_setup(test: &str) -> Option<(Device, EglContext)> {
    let dev = common::gpu(test)?;
    match EglContext::create(0) {
        Ok(gl) => Some((dev, gl)),
        Err(reason) if gl_required() => {
            panic!("{}: CUCORE_GL_REQUIRED=1 but there is no NVIDIA GL context on CUDA device 0: {}", test, reason)
        }
        Err(reason) => {
            common::skip(test, &format!("no NVIDIA GL context on CUDA device 0: {}", reason));
            None
        }
    }
}

/// `let (dev, gl) = require_gl!("test")`: returns from the test when it is skipped. Declare it
/// first, so that the GL context is dropped last (after the registrations, which need it).
macro_rules! require_gl {
    ($name:expr) => {
        match gl_setup($name) {
            Some(x) => x,
            None => return,
        }
    };
}

/// `n` recognisable words.
fn words(n: usize, seed: u32) -> Vec<u32> {
    (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761).wrapping_add(seed)).collect()
}

fn bytes_of(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_ne_bytes()).collect()
}

/// Asserts equal contents, naming the first difference (not printing megabytes).
fn assert_same<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{}: lengths differ", what);
    if let Some(i) = got.iter().zip(want).position(|(g, w)| g != w) {
        panic!("{}: element {} is {:?}, expected {:?}", what, i, got[i], want[i]);
    }
}

fn new_stream(dev: &Device) -> Stream {
    dev.create_stream(StreamOptions::default()).expect("create_stream")
}

fn register_buffer(dev: &Device, name: u32) -> GraphicsResource {
    GraphicsResource::from_gl_buffer(dev, name, GraphicsRegisterFlags::NONE)
        .unwrap_or_else(|e| panic!("registering GL buffer {}: {}", name, e))
}

// ---- The GL helper ------------------------------------------------------------------------------

/// The helper itself, with or without a GPU: an impossible CUDA ordinal gives a reason (which
/// names the ordinal where EGL can enumerate devices), and device 0 gives a current NVIDIA
/// context or the reason why not (Mesa only here, say).
#[test]
fn egl_helper_gives_a_reason_when_unavailable() {
    let _serial = serial();
    let far = EglContext::create(1 << 20).err().expect("no EGL device is CUDA device 1048576");
    assert!(!far.is_empty());
    match EglContext::create(0) {
        Ok(gl) => {
            assert!(gl.is_current(), "create() makes the context current on this thread");
            assert!(gl.gl_string(egl_context::GL_VENDOR).contains("NVIDIA"));
            assert!(!gl.gl_string(egl_context::GL_VERSION).is_empty());
            assert!(far.contains("1048576"), "names the ordinal: {}", far);
            gl.release_current();
            assert!(!gl.is_current());
            gl.make_current().expect("make_current again");
            assert!(gl.is_current());
        }
        Err(reason) if gl_required() => panic!("CUCORE_GL_REQUIRED=1 but no NVIDIA GL context: {}", reason),
        Err(reason) => {
            assert!(!reason.is_empty());
            common::skip("egl_helper_gives_a_reason_when_unavailable", &format!("no NVIDIA GL context: {}", reason));
            eprintln!("(an impossible CUDA ordinal: {})", far);
        }
    }
}

// ---- 1. Buffers -------------------------------------------------------------------------------------

#[test]
fn gl_buffer_round_trips_both_ways() {
    let _serial = serial();
    let (dev, mut gl) = require_gl!("gl_buffer_round_trips_both_ways");
    let devices = gl_get_devices(GlDeviceList::All).expect("gl_get_devices with a GL context current");
    assert!(devices.contains(&0), "the GL context is on CUDA device 0: {:?}", devices);
    let stream = new_stream(&dev);
    const N: usize = 1 << 16;
    let vbo = gl.make_buffer(&vec![0u32; N]);
    let res = register_buffer(&dev, vbo);
    assert!(!res.handle().unwrap().is_null());

    // CUDA fills, the guard's drop unmaps, GL reads the words.
    {
        let mapped = res.map_with_hint(&stream, GraphicsMapHint::WriteDiscard).unwrap();
        assert!(res.is_mapped().unwrap());
        assert_eq!(mapped.size().unwrap(), (N * 4) as u64);
        assert_ne!(mapped.address().unwrap(), 0);
        mapped.fill(0xA5A5_F00D, 4, &stream).unwrap();
    }
    assert!(!res.is_mapped().unwrap());
    stream.synchronize().unwrap();
    assert_same(&gl.read_buffer(vbo, N), &vec![0xA5A5_F00Du32; N], "GL reads CUDA's fill");

    // CUDA copies host words in, an explicit unmap, GL reads them.
    let pattern = words(N, 12345);
    let mapped = res.map(&stream).unwrap();
    mapped.copy_from_host(0, &bytes_of(&pattern), &stream).unwrap();
    mapped.unmap(None).unwrap();
    assert!(!res.is_mapped().unwrap());
    stream.synchronize().unwrap();
    assert_same(&gl.read_buffer(vbo, N), &pattern, "GL reads CUDA's copy");

    // GL uploads, CUDA maps and copies to the host.
    let upload = words(N, 777);
    gl.write_buffer(vbo, &upload);
    {
        let mapped = res.map_with_hint(&stream, GraphicsMapHint::ReadOnly).unwrap();
        let got = mapped.to_vec(&stream).unwrap();
        assert_same(&u32s(&got), &upload, "CUDA reads GL's upload");
    }
    assert!(!res.is_mapped().unwrap());
    res.close(None).unwrap();
}

// ---- 2. Textures ------------------------------------------------------------------------------------

#[test]
fn rgba8_texture_round_trips_through_mapped_arrays() {
    let _serial = serial();
    let (dev, mut gl) = require_gl!("rgba8_texture_round_trips_through_mapped_arrays");
    let stream = new_stream(&dev);
    const W: i32 = 256;
    const H: i32 = 128;
    let bytes = (W * H * 4) as usize;
    let tex = gl.make_texture(W, H, None);
    let res = GraphicsResource::from_gl_image(&dev, tex, GL_TEXTURE_2D, GraphicsRegisterFlags::SURFACE_LOAD_STORE)
        .unwrap_or_else(|e| panic!("registering texture {}: {}", tex, e));

    // CUDA copies texels into the mapped array; after the unmap GL reads them back.
    let texels: Vec<u8> = (0..bytes).map(|i| (i * 7 + (i >> 10)) as u8).collect();
    {
        let array = res.map_array(&stream, GraphicsMapHint::WriteDiscard, 0, 0).unwrap();
        assert!(res.is_mapped().unwrap());
        let info = array.info().unwrap();
        assert_eq!(info.format, ArrayFormat::Uint8);
        assert_eq!((info.num_channels, info.element_size), (4, 4));
        assert_eq!((info.width, info.height, info.depth, info.layers), (W as u64, H as u64, 0, 0));
        assert_eq!(info.kind, ArrayKind::Plain);
        assert!(info.flags.contains(ArrayFlags::SURFACE_LOAD_STORE), "registered for surface load/store: {:?}", info);
        assert!(!info.is_owned, "a mapped image belongs to GL");
        assert_eq!(info.num_levels, 1);
        assert_eq!((info.row_bytes, info.row_count, info.slice_count), (W as u64 * 4, H as u64, 1));
        assert_eq!(info.size_bytes, bytes as u64);
        assert_eq!(info.device_ordinal, 0);
        assert!(!array.handle().unwrap().is_null());
        let e = array.copy_from_host(&texels[..bytes - 4], &stream).expect_err("a slice shorter than the array");
        assert_eq!(e.status, Status::InvalidArgument, "{}", e);
        array.copy_from_host(&texels, &stream).unwrap();
    } // the array's drop unmaps
    assert!(!res.is_mapped().unwrap());
    stream.synchronize().unwrap();
    assert_same(&gl.read_texture(tex, bytes), &texels, "GL reads the texels CUDA wrote");

    // GL uploads other texels; CUDA maps and copies them to the host.
    let upload: Vec<u8> = (0..bytes).map(|i| (255 - (i * 13) % 251) as u8).collect();
    gl.write_texture(tex, W, H, &upload);
    {
        let array = res.map_array(&stream, GraphicsMapHint::ReadOnly, 0, 0).unwrap();
        let mut out = vec![0u8; bytes];
        array.copy_to_host(&mut out, &stream).unwrap();
        assert_same(&out, &upload, "CUDA reads the texels GL uploaded");
        assert_same(&array.to_vec(&stream).unwrap(), &upload, "OpaqueArray::to_vec");
        // Through a buffer too: the mapped image is an array like any other.
        let staging = dev.allocate(bytes as u64, &stream).unwrap();
        array.copy_to_buffer(&staging, &stream).unwrap();
        assert_same(&staging.to_vec(&stream).unwrap(), &upload, "OpaqueArray::copy_to_buffer");
    }
    assert!(!res.is_mapped().unwrap());

    // An explicit unmap ends the mapping under a live array: every call on it is InvalidState.
    let array = res.map_array(&stream, GraphicsMapHint::None, 0, 0).unwrap();
    res.unmap(None).unwrap();
    assert!(!res.is_mapped().unwrap());
    assert_eq!(array.info().unwrap_err().status, Status::InvalidState);
    assert_eq!(array.handle().unwrap_err().status, Status::InvalidState);
    assert_eq!(array.to_vec(&stream).unwrap_err().status, Status::InvalidState);
    drop(array); // its release unmaps nothing more
    // A texture maps as an array, never as a pointer.
    let e = res.map(&stream).expect_err("a texture has no pointer mapping");
    assert_eq!(e.status, Status::InvalidState, "{}", e);
    assert!(!res.is_mapped().unwrap());
}

/// Reads texel (xs[i], ys[i]) of a texture whose elements are read as integers: 4 words a texel.
const SAMPLE_U32: &str = r#"
extern "C" __global__ void sample_u32(unsigned long long tex, const float *xs, const float *ys, unsigned *out,
                                      unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned r, g, b, a;
    asm volatile("tex.2d.v4.u32.f32 {%0, %1, %2, %3}, [%4, {%5, %6}];"
                 : "=r"(r), "=r"(g), "=r"(b), "=r"(a) : "l"(tex), "f"(xs[i]), "f"(ys[i]));
    out[4 * i] = r; out[4 * i + 1] = g; out[4 * i + 2] = b; out[4 * i + 3] = a;
}
"#;

/// A GL texture mapped as an array is an array like any other: a texture object over it is
/// sampled by a kernel, which reads GL's texels; the texture object holds the mapping, so the
/// resource unmaps only when the array and the texture object are both gone.
#[test]
fn mapped_gl_texture_sampled_through_a_texture_object() {
    let _serial = serial();
    let (dev, mut gl) = require_gl!("mapped_gl_texture_sampled_through_a_texture_object");
    if !common::nvrtc("mapped_gl_texture_sampled_through_a_texture_object") {
        return;
    }
    let kernel = gpu_kernel(&dev, SAMPLE_U32, "sample_u32");
    let stream = new_stream(&dev);
    const W: i32 = 64;
    const H: i32 = 32;
    let texels: Vec<u8> = (0..(W * H * 4) as usize).map(|i| (i * 11 + (i >> 8)) as u8).collect();
    let tex = gl.make_texture(W, H, Some(&texels));
    let res = GraphicsResource::from_gl_image(&dev, tex, GL_TEXTURE_2D, GraphicsRegisterFlags::READ_ONLY)
        .unwrap_or_else(|e| panic!("registering texture {}: {}", tex, e));
    let array = res.map_array(&stream, GraphicsMapHint::ReadOnly, 0, 0).unwrap();
    let texture = dev.create_texture_object(&array, TextureObjectOptions::default()).unwrap();
    drop(array); // the texture object holds the mapping now
    assert!(res.is_mapped().unwrap());

    // Every texel's centre, and two out of range (clamped to the edge).
    let mut points: Vec<(f32, f32)> =
        (0..H).flat_map(|y| (0..W).map(move |x| (x as f32 + 0.5, y as f32 + 0.5))).collect();
    points.push((-5.0, 0.5));
    points.push((W as f32 + 5.0, H as f32 - 0.5));
    let n = points.len();
    let xs: Vec<f32> = points.iter().map(|p| p.0).collect();
    let ys: Vec<f32> = points.iter().map(|p| p.1).collect();
    let xs_buffer = dev.allocate(4 * n as u64, &stream).unwrap();
    xs_buffer.copy_from_host(0, &f32_bytes(&xs), &stream).unwrap();
    let ys_buffer = dev.allocate(4 * n as u64, &stream).unwrap();
    ys_buffer.copy_from_host(0, &f32_bytes(&ys), &stream).unwrap();
    let out = dev.allocate(16 * n as u64, &stream).unwrap();
    let config = LaunchConfig::new(((n + 127) / 128) as u32, 128);
    launch(&stream, &config, &kernel, &[&texture, &xs_buffer, &ys_buffer, &out, &(n as u32)]).unwrap();
    let got: Vec<u8> = u32s(&out.to_vec(&stream).unwrap()).iter().map(|&w| w as u8).collect();
    let mut want = texels.clone();
    want.extend_from_slice(&texels[..4]); // (0, 0)
    let last = ((H * W - 1) * 4) as usize;
    want.extend_from_slice(&texels[last..last + 4]); // (W - 1, H - 1)
    assert_same(&got, &want, "the kernel reads GL's texels through the texture object");

    drop(texture);
    assert!(!res.is_mapped().unwrap(), "the last holder of the mapping unmapped");
    res.close(None).unwrap();
}

// ---- 3. Batches ---------------------------------------------------------------------------------------

#[test]
fn batch_map_fill_and_one_call_unmap() {
    let _serial = serial();
    let (dev, mut gl) = require_gl!("batch_map_fill_and_one_call_unmap");
    let stream = new_stream(&dev);
    let other = new_stream(&dev);
    const COUNT: usize = 4;
    const N: usize = 4096;
    let names: Vec<u32> = (0..COUNT).map(|i| gl.make_buffer(&words(N, 7 * i as u32))).collect();
    let resources: Vec<GraphicsResource> = names.iter().map(|&name| register_buffer(&dev, name)).collect();
    let refs: Vec<&GraphicsResource> = resources.iter().collect();
    let mapped_now = || resources.iter().map(|r| r.is_mapped().unwrap()).collect::<Vec<bool>>();
    let read_all = |gl: &EglContext| names.iter().map(|&name| gl.read_buffer(name, N)).collect::<Vec<_>>();
    let errors_before = release_error_count().unwrap();

    // map_all, fill each, drop the batch: one call unmaps all four, GL reads each fill.
    let kept: Buffer;
    {
        let batch = GraphicsResource::map_all(&refs, &stream).unwrap();
        assert_eq!(batch.len(), COUNT);
        for (i, mapped) in batch.iter().enumerate() {
            assert_eq!(mapped.resource(), &resources[i], "the batch is in the resources' order");
            assert_eq!(mapped.size().unwrap(), (N * 4) as u64);
            assert_same(&u32s(&mapped.to_vec(&stream).unwrap()), &words(N, 7 * i as u32), "GL's words, mapped");
            mapped.fill(0xC0DE_0000 + i as u32, 4, &stream).unwrap();
        }
        assert_eq!(mapped_now(), [true; COUNT]);
        // Mapping one of them again, or the whole batch, is refused and changes nothing.
        assert_eq!(resources[2].map(&stream).unwrap_err().status, Status::InvalidState);
        assert_eq!(GraphicsResource::map_all(&refs, &stream).unwrap_err().status, Status::InvalidState);
        assert_eq!(mapped_now(), [true; COUNT]);
        kept = batch[0].buffer().clone();
    }
    assert_eq!(mapped_now(), [false; COUNT], "dropping the batch unmaps every resource");
    assert_eq!(kept.size().unwrap(), 0, "a buffer of the batch reads as closed after the batch unmap");
    drop(kept); // its release unmaps nothing more
    assert_eq!(release_error_count().unwrap(), errors_before, "the batch unmap succeeded");
    stream.synchronize().unwrap();
    for (i, got) in read_all(&gl).iter().enumerate() {
        assert_same(got, &vec![0xC0DE_0000 + i as u32; N], &format!("GL reads buffer {}", i));
    }

    // unmap_all of resources that are not mapped: InvalidState naming resources[0]; a resource
    // twice and an empty list are refused before that.
    let e = GraphicsResource::unmap_all(&refs, None).expect_err("nothing is mapped");
    assert_eq!(e.status, Status::InvalidState, "{}", e);
    assert!(e.message.contains("resources[0]"), "names the resource: {}", e);
    let e = GraphicsResource::unmap_all(&[&resources[0], &resources[0]], None).expect_err("a resource twice");
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    let e = GraphicsResource::unmap_all(&[], None).expect_err("no resources");
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);

    // MappedBuffers::unmap on another stream.
    let batch = GraphicsResource::map_all(&refs, &stream).unwrap();
    for mapped in batch.iter() {
        mapped.fill(0x1111_1111, 4, &stream).unwrap();
    }
    stream.synchronize().unwrap(); // the fills ran before the unmap on `other`
    batch.unmap(Some(&other)).unwrap();
    assert_eq!(mapped_now(), [false; COUNT]);
    other.synchronize().unwrap();
    for got in read_all(&gl) {
        assert_same(&got, &vec![0x1111_1111; N], "GL reads the fill unmapped on another stream");
    }

    // into_buffers gives up the batch unmap (nothing is unmapped by it); unmap_all unmaps them
    // in one call, and their buffers read as closed.
    let buffers = GraphicsResource::map_all(&refs, &stream).unwrap().into_buffers();
    assert_eq!(mapped_now(), [true; COUNT], "into_buffers keeps the mappings");
    for (i, mapped) in buffers.iter().enumerate() {
        mapped.fill(0x2222_0000 + i as u32, 4, &stream).unwrap();
    }
    GraphicsResource::unmap_all(&refs, None).unwrap();
    assert_eq!(mapped_now(), [false; COUNT]);
    for mapped in &buffers {
        assert_eq!(mapped.size().unwrap(), 0, "unmap_all closes the mapped buffers");
    }
    drop(buffers);
    assert_eq!(mapped_now(), [false; COUNT]);
    stream.synchronize().unwrap();
    for (i, got) in read_all(&gl).iter().enumerate() {
        assert_same(got, &vec![0x2222_0000 + i as u32; N], &format!("GL reads buffer {} after unmap_all", i));
    }

    // Buffers given up by the batch unmap one by one.
    let mut buffers = GraphicsResource::map_all(&refs, &stream).unwrap().into_buffers();
    let last = buffers.pop().unwrap();
    drop(buffers);
    assert_eq!(mapped_now(), [false, false, false, true]);
    drop(last);
    assert_eq!(mapped_now(), [false; COUNT]);

    // A batch unmaps only what it still maps: one member unmapped on its own is left alone.
    let batch = GraphicsResource::map_all(&refs, &stream).unwrap();
    batch[1].resource().unmap(None).unwrap();
    assert_eq!(mapped_now(), [true, false, true, true]);
    drop(batch);
    assert_eq!(mapped_now(), [false; COUNT]);
    assert_eq!(release_error_count().unwrap(), errors_before, "no batch unmap failed");
    stream.synchronize().unwrap();
}

// ---- 4. Streams and states -----------------------------------------------------------------------

#[test]
fn unmap_on_another_stream_and_state_errors() {
    let _serial = serial();
    let (dev, mut gl) = require_gl!("unmap_on_another_stream_and_state_errors");
    let stream = new_stream(&dev);
    let other = new_stream(&dev);
    const N: usize = 8192;
    let vbo = gl.make_buffer(&vec![0u32; N]);
    let res = register_buffer(&dev, vbo);

    // MappedBuffer::unmap on another stream: the buffer is closed, GL sees the data.
    let mapped = res.map(&stream).unwrap();
    let kept = mapped.buffer().clone();
    mapped.fill(0x0102_0304, 4, &stream).unwrap();
    stream.synchronize().unwrap();
    let e = res.map(&stream).expect_err("mapped twice");
    assert_eq!(e.status, Status::InvalidState, "{}", e);
    assert!(e.message.contains("already mapped"), "{}", e);
    assert!(res.is_mapped().unwrap(), "the failed map changed nothing");
    mapped.unmap(Some(&other)).unwrap();
    assert!(!res.is_mapped().unwrap());
    assert_eq!(kept.size().unwrap(), 0, "the unmap closes the mapped buffer");
    drop(kept); // its release unmaps nothing more
    other.synchronize().unwrap();
    assert_same(&gl.read_buffer(vbo, N), &vec![0x0102_0304; N], "GL reads the fill");

    // GraphicsResource::unmap on another stream.
    let mapped = res.map(&stream).unwrap();
    mapped.fill(0x0A0B_0C0D, 4, &stream).unwrap();
    stream.synchronize().unwrap();
    res.unmap(Some(&other)).unwrap();
    assert_eq!(mapped.size().unwrap(), 0);
    drop(mapped);
    other.synchronize().unwrap();
    assert_same(&gl.read_buffer(vbo, N), &vec![0x0A0B_0C0D; N], "GL reads the second fill");

    // Unmapping what is not mapped.
    for stream_arg in [None, Some(&other)] {
        let e = res.unmap(stream_arg).expect_err("not mapped");
        assert_eq!(e.status, Status::InvalidState, "{}", e);
        assert!(e.message.contains("not mapped"), "{}", e);
    }

    // close while mapped unmaps (the buffer reads as closed); close again is a no-op.
    let mapped = res.map(&stream).unwrap();
    res.close(None).unwrap();
    assert!(!res.is_mapped().unwrap());
    assert_eq!(mapped.size().unwrap(), 0);
    drop(mapped);
    res.close(None).unwrap();
    res.close(Some(&other)).unwrap();

    // After close every other call is InvalidState (is_mapped reads false, the handle NULL).
    let states = [
        res.map(&stream).map(|_| ()),
        res.map_with_hint(&stream, GraphicsMapHint::ReadOnly).map(|_| ()),
        res.map_array(&stream, GraphicsMapHint::None, 0, 0).map(|_| ()),
        res.map_mipmapped_array(&stream, GraphicsMapHint::None).map(|_| ()),
        res.unmap(None),
        res.unmap(Some(&other)),
        GraphicsResource::map_all(&[&res], &stream).map(|_| ()),
        GraphicsResource::unmap_all(&[&res], None),
    ];
    for (i, result) in states.iter().enumerate() {
        let e = result.as_ref().expect_err("a closed resource");
        assert_eq!(e.status, Status::InvalidState, "call {}: {}", i, e);
        assert!(!e.message.is_empty());
    }
    assert!(!res.is_mapped().unwrap());
    assert!(res.handle().unwrap().is_null());
    stream.synchronize().unwrap();
    other.synchronize().unwrap();
}

// ---- 5. A second thread ------------------------------------------------------------------------

#[test]
fn register_map_and_unmap_on_a_second_thread() {
    let _serial = serial();
    // This thread's context only proves GL works here; the worker makes its own.
    let (dev, _gl) = require_gl!("register_map_and_unmap_on_a_second_thread");
    const N: usize = 16384;
    let worker = {
        let dev = dev.clone();
        thread::spawn(move || -> std::result::Result<(), String> {
            let mut gl = EglContext::create(0).map_err(|why| format!("no GL context on the worker: {}", why))?;
            let stream = new_stream(&dev);
            let vbo = gl.make_buffer(&words(N, 99));
            let res = register_buffer(&dev, vbo);
            {
                let mapped = res.map(&stream).map_err(|e| format!("map: {}", e))?;
                let got = mapped.to_vec(&stream).map_err(|e| format!("copy: {}", e))?;
                if u32s(&got) != words(N, 99) {
                    return Err("CUDA on the worker did not read GL's words".to_string());
                }
                mapped.fill(0x00C0_FFEE, 4, &stream).map_err(|e| format!("fill: {}", e))?;
                mapped.unmap(None).map_err(|e| format!("unmap: {}", e))?;
            }
            if res.is_mapped().map_err(|e| e.to_string())? {
                return Err("still mapped after unmap".to_string());
            }
            stream.synchronize().map_err(|e| format!("synchronize: {}", e))?;
            let seen = gl.read_buffer(vbo, N);
            if let Some(i) = seen.iter().position(|&w| w != 0x00C0_FFEE) {
                return Err(format!("GL on the worker reads word {} as {:#x}", i, seen[i]));
            }
            res.close(None).map_err(|e| format!("close: {}", e))?;
            Ok(()) // `res` drops before `gl`, whose drop deletes the buffer and the context
        })
    };
    match worker.join() {
        Ok(Ok(())) => {}
        Ok(Err(failure)) => panic!("second thread: {}", failure),
        Err(_) => panic!("second thread panicked (its message is above)"),
    }
}

// ---- 6. No leak -------------------------------------------------------------------------------------

#[test]
fn ten_thousand_map_unmap_cycles_leak_nothing() {
    let _serial = serial();
    let (dev, mut gl) = require_gl!("ten_thousand_map_unmap_cycles_leak_nothing");
    let stream = new_stream(&dev);
    let vbo = gl.make_buffer(&[0u32; 256]);
    let res = register_buffer(&dev, vbo);
    // One cycle of each kind first: it creates what lives for the process (the library's
    // per-device caches); the 10,000 cycles after it must add nothing.
    drop(res.map(&stream).unwrap());
    GraphicsResource::map_all(&[&res], &stream).unwrap().unmap(None).unwrap();
    stream.synchronize().unwrap();
    let counts = || {
        [ObjectType::Buffer, ObjectType::GraphicsResource, ObjectType::MemoryResource]
            .iter()
            .map(|&kind| live_object_count(kind).unwrap())
            .collect::<Vec<usize>>()
    };
    let before = counts();
    let errors_before = release_error_count().unwrap();
    const CYCLES: usize = 10_000;
    for i in 0..CYCLES {
        match i % 4 {
            0 => drop(res.map(&stream).unwrap()), // the guard's drop unmaps
            1 => res.map(&stream).unwrap().unmap(None).unwrap(),
            2 => drop(GraphicsResource::map_all(&[&res], &stream).unwrap()), // the batch's drop unmaps
            _ => {
                let mapped = res.map(&stream).unwrap();
                res.unmap(None).unwrap();
                drop(mapped); // released after an explicit unmap
            }
        }
    }
    stream.synchronize().unwrap();
    assert!(!res.is_mapped().unwrap());
    assert_eq!(counts(), before, "live buffers, graphics resources and memory resources after {} cycles", CYCLES);
    assert_eq!(release_error_count().unwrap(), errors_before, "no unmap failed");
    res.close(None).unwrap();
}
