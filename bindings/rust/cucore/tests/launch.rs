//! Launches: configurations and argument packing (no GPU); saxpy against a host computation, a
//! struct by value, templates through name expressions, argument count and size checks, more
//! arguments than the stack holds, validation messages, a cooperative launch with a grid-wide
//! barrier (GPU). (Helpers and skip rules: common/mod.rs.)

#[macro_use]
mod common;
use common::*;

use cucore::sys;
use std::os::raw::c_void;

/// Laid out as the kernel's `struct Params { float scale; int offset; double bias; unsigned n; }`.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
struct Params {
    scale: f32,
    offset: i32,
    bias: f64,
    n: u32,
}
// SAFETY: repr(C) plain data with the kernel's layout (24 bytes, 8-aligned).
unsafe impl DeviceRepr for Params {}

const STRUCT_KERNEL: &str = r#"
struct Params { float scale; int offset; double bias; unsigned n; };
extern "C" __global__ void apply(Params p, float *out) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n) out[i] = p.scale * (float)i + (float)p.offset + (float)p.bias;
}
"#;

#[test]
fn config_to_the_c_struct() {
    let raw = LaunchConfig::default().to_raw();
    assert_eq!(raw, sys::cucore_launch_config_t::INIT, "the default is one thread, as the C INIT");
    let c = LaunchConfig::new((4, 2), (32, 4, 2)).shared_memory_bytes(1024);
    let raw = c.to_raw();
    assert_eq!(raw.grid, [4, 2, 1]);
    assert_eq!(raw.block, [32, 4, 2]);
    assert_eq!(raw.cluster, [0, 0, 0]);
    assert_eq!(raw.shared_memory_bytes, 1024);
    assert_eq!(raw.flags, 0);
    let c = c.cluster(2).cooperative(true).programmatic_stream_serialization(true).priority(-1).grid([8, 1, 1]);
    let raw = c.to_raw();
    assert_eq!(raw.cluster, [2, 1, 1]);
    assert_eq!(raw.grid, [8, 1, 1]);
    assert_eq!(
        raw.flags,
        (sys::CUCORE_LAUNCH_COOPERATIVE
            | sys::CUCORE_LAUNCH_PROGRAMMATIC_STREAM_SERIALIZATION
            | sys::CUCORE_LAUNCH_PRIORITY) as u32
    );
    assert_eq!(raw.priority, -1);
    assert_eq!(Dim3::from(7), Dim3 { x: 7, y: 1, z: 1 });
    assert_eq!(Dim3::from((7, 3)), Dim3 { x: 7, y: 3, z: 1 });
    assert_eq!(Dim3::from((7, 3, 2)).to_array(), [7, 3, 2]);
    assert_eq!(LaunchConfig::new(1, 1), LaunchConfig::default());
}

fn bytes_of(arg: &dyn KernelArg) -> Vec<u8> {
    let mut scratch = 0u64;
    let (p, n) = arg.kernel_arg(&mut scratch).unwrap();
    // SAFETY: KernelArg's contract: `n` readable bytes at `p` while `arg` and `scratch` live.
    unsafe { std::slice::from_raw_parts(p as *const u8, n) }.to_vec()
}

#[test]
fn arguments_are_their_bytes() {
    assert_eq!(bytes_of(&7u8), vec![7]);
    assert_eq!(bytes_of(&true), vec![1]);
    assert_eq!(bytes_of(&-2i16), (-2i16).to_ne_bytes().to_vec());
    assert_eq!(bytes_of(&0x0102_0304u32), 0x0102_0304u32.to_ne_bytes().to_vec());
    assert_eq!(bytes_of(&1.5f32), 1.5f32.to_ne_bytes().to_vec());
    assert_eq!(bytes_of(&2.5f64), 2.5f64.to_ne_bytes().to_vec());
    assert_eq!(bytes_of(&u64::MAX), vec![0xff; 8]);
    // Raw pointers travel only as DevicePointers (unsafe to make): their bytes are the address.
    // SAFETY: packed only, never launched.
    let (p1, p2) = unsafe { (DevicePointer::from_ptr(0x1000usize as *const f32), DevicePointer::from_address(0x2000)) };
    assert_eq!(bytes_of(&p1), 0x1000u64.to_ne_bytes().to_vec());
    assert_eq!(bytes_of(&p2), 0x2000u64.to_ne_bytes().to_vec());
    assert_eq!((p1.address(), p2.address()), (0x1000, 0x2000));
    assert_eq!(std::mem::size_of::<DevicePointer>(), std::mem::size_of::<*const c_void>());
    // SAFETY: as above.
    assert_eq!(bytes_of(&[unsafe { DevicePointer::from_address(7) }; 2]), [7u64.to_ne_bytes(), 7u64.to_ne_bytes()].concat());
    assert_eq!(bytes_of(&[1u16, 2, 3]).len(), 6);
    let p = Params { scale: 1.0, offset: 2, bias: 3.0, n: 4 };
    let b = bytes_of(&p);
    assert_eq!(b.len(), 24);
    assert_eq!(&b[0..4], &1.0f32.to_ne_bytes());
    assert_eq!(&b[4..8], &2i32.to_ne_bytes());
    assert_eq!(&b[8..16], &3.0f64.to_ne_bytes());
    assert_eq!(&b[16..20], &4u32.to_ne_bytes());
}

#[test]
fn launching_with_garbage_handles_is_invalid_handle() {
    let mut junk = [0x5a5a_5a5a_5a5a_5a5a_u64; 8];
    let s = unsafe { Stream::adopt(junk.as_mut_ptr() as *mut sys::cucore_stream_t) };
    let k = unsafe { Kernel::adopt(junk.as_mut_ptr() as *mut sys::cucore_kernel_t) };
    let e = launch(&s, &LaunchConfig::default(), &k, &[&1u32]).unwrap_err();
    assert_eq!(e.status, Status::InvalidHandle, "{}", e);
    let e = cucore::launch!(s, LaunchConfig::default(), k).unwrap_err();
    assert_eq!(e.status, Status::InvalidHandle, "{}", e);
    let e = unsafe { cucore::launch_raw(&s, &LaunchConfig::default(), &k, &[std::ptr::null()], &[]) }.unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "lengths differ: {}", e);
    drop((s, k));
}

#[test]
fn saxpy_matches_the_host() {
    let _serial = serial();
    let dev = require_gpu!("saxpy_matches_the_host");
    require_nvrtc!("saxpy_matches_the_host");
    let k = gpu_kernel(&dev, SAXPY, "saxpy");
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let n: u32 = 100_003;
    let xs: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
    let ys: Vec<f32> = (0..n).map(|i| 1.0 - (i % 7) as f32).collect();
    let x = dev.allocate(4 * n as u64, &s).unwrap();
    let y = dev.allocate(4 * n as u64, &s).unwrap();
    x.copy_from_host(0, &f32_bytes(&xs), &s).unwrap();
    y.copy_from_host(0, &f32_bytes(&ys), &s).unwrap();
    let a = 2.5f32;
    let config = LaunchConfig::new((n + 255) / 256, 256);
    config.validate(&k, &dev).unwrap();
    launch(&s, &config, &k, &[&a, &x, &y, &n]).unwrap();
    let mut host = vec![0u8; 4 * n as usize];
    y.copy_to_host(0, &mut host, &s).unwrap();
    let expected: Vec<f32> = xs.iter().zip(&ys).map(|(x, y)| a * x + y).collect();
    assert_eq!(f32s(&host), expected);

    // The same through the macro and raw device pointers (which take `unsafe` to pass).
    let (xp, yp) = (x.address().unwrap() as *const f32, y.address().unwrap() as *mut f32);
    // SAFETY: the addresses of `x` and `y`, live until after the synchronizing copy below.
    let (xp, yp) = unsafe { (DevicePointer::from_ptr(xp), DevicePointer::from_ptr(yp)) };
    cucore::launch!(s, config, k, -a, xp, yp, n).unwrap();
    y.copy_to_host(0, &mut host, &s).unwrap();
    assert_eq!(f32s(&host), ys, "a*x + y - a*x = y");
}

#[test]
fn struct_by_value() {
    let _serial = serial();
    let dev = require_gpu!("struct_by_value");
    require_nvrtc!("struct_by_value");
    let k = gpu_kernel(&dev, STRUCT_KERNEL, "apply");
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let p = Params { scale: 0.5, offset: -3, bias: 10.0, n: 1000 };
    let out = dev.allocate(4 * 1000, &s).unwrap();
    launch(&s, &LaunchConfig::new(4, 256), &k, &[&p, &out]).unwrap();
    let mut host = vec![0u8; 4 * 1000];
    out.copy_to_host(0, &mut host, &s).unwrap();
    let expected: Vec<f32> = (0..1000).map(|i| 0.5 * i as f32 + -3.0 + 10.0).collect();
    assert_eq!(f32s(&host), expected);
}

#[test]
fn templates_through_name_expressions() {
    let _serial = serial();
    let dev = require_gpu!("templates_through_name_expressions");
    require_nvrtc!("templates_through_name_expressions");
    let source = r#"
template <typename T>
__global__ void fill(T *out, T value, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value + (T)i;
}
"#;
    let code = compile(
        source,
        &ProgramOptions::default().arch(&sm_arch(&dev)),
        CodeType::Cubin,
        &["fill<int>", "fill<double>"],
    );
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let n = 300u32;
    let ints = dev.allocate(4 * n as u64, &s).unwrap();
    let doubles = dev.allocate(8 * n as u64, &s).unwrap();
    let config = LaunchConfig::new(2, 256);
    cucore::launch!(s, config, code.get_kernel("fill<int>").unwrap(), ints, -100i32, n).unwrap();
    cucore::launch!(s, config, code.get_kernel("fill<double>").unwrap(), doubles, 0.25f64, n).unwrap();
    let mut host = vec![0u8; 4 * n as usize];
    ints.copy_to_host(0, &mut host, &s).unwrap();
    let got: Vec<i32> = u32s(&host).into_iter().map(|v| v as i32).collect();
    assert_eq!(got, (0..n as i32).map(|i| i - 100).collect::<Vec<_>>());
    let mut host = vec![0u8; 8 * n as usize];
    doubles.copy_to_host(0, &mut host, &s).unwrap();
    let got: Vec<f64> = host.chunks_exact(8).map(|c| f64::from_ne_bytes(c.try_into().unwrap())).collect();
    assert_eq!(got, (0..n).map(|i| 0.25 + i as f64).collect::<Vec<_>>());
}

#[test]
fn argument_count_and_sizes_are_checked() {
    let _serial = serial();
    let dev = require_gpu!("argument_count_and_sizes_are_checked");
    require_nvrtc!("argument_count_and_sizes_are_checked");
    let k = gpu_kernel(&dev, SAXPY, "saxpy");
    if let Err(e) = k.param_count() {
        assert_eq!(e.status, Status::NotSupported, "{}", e);
        common::skip("argument_count_and_sizes_are_checked", &format!("the driver reports no parameter info ({})", e));
        return;
    }
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let x = dev.allocate(64, &s).unwrap();
    let n = 16u32;
    let config = LaunchConfig::new(1, 16);
    let e = launch(&s, &config, &k, &[&1.0f32, &x, &x]).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "too few: {}", e);
    let e = launch(&s, &config, &k, &[&1.0f64, &x, &x, &n]).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "an f64 for a float: {}", e);
    assert!(e.message.contains('0'), "the message names argument 0: {}", e);
    let e = launch(&s, &config, &k, &[&1.0f32, &x, &x, &(n as u64)]).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "a u64 for an unsigned: {}", e);
    launch(&s, &config, &k, &[&1.0f32, &x, &x, &n]).unwrap();
    s.synchronize().unwrap();
}

#[test]
fn more_arguments_than_the_stack_holds() {
    let _serial = serial();
    let dev = require_gpu!("more_arguments_than_the_stack_holds");
    require_nvrtc!("more_arguments_than_the_stack_holds");
    let count = cucore::MAX_STACK_ARGS + 4;
    let params: Vec<String> = (0..count).map(|i| format!("int a{}", i)).collect();
    let sum: Vec<String> = (0..count).map(|i| format!("a{} * {}", i, i + 1)).collect();
    let source =
        format!("extern \"C\" __global__ void many(int *out, {}) {{ *out = {}; }}", params.join(", "), sum.join(" + "));
    let k = gpu_kernel(&dev, &source, "many");
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let out = dev.allocate(4, &s).unwrap();
    let values: Vec<i32> = (0..count as i32).map(|i| 3 * i - 7).collect();
    let mut args: Vec<&dyn KernelArg> = vec![&out];
    args.extend(values.iter().map(|v| v as &dyn KernelArg));
    launch(&s, &LaunchConfig::default(), &k, &args).unwrap();
    let mut host = [0u8; 4];
    out.copy_to_host(0, &mut host, &s).unwrap();
    let expected: i32 = values.iter().enumerate().map(|(i, v)| v * (i as i32 + 1)).sum();
    assert_eq!(i32::from_ne_bytes(host), expected);
}

#[test]
fn invalid_configurations_are_refused_with_a_reason() {
    let _serial = serial();
    let dev = require_gpu!("invalid_configurations_are_refused_with_a_reason");
    require_nvrtc!("invalid_configurations_are_refused_with_a_reason");
    let k = gpu_kernel(&dev, SAXPY, "saxpy");
    let e = LaunchConfig::new(1, 4096).validate(&k, &dev).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(e.message.contains("block"), "{}", e);
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let x = dev.allocate(64, &s).unwrap();
    let e = launch(&s, &LaunchConfig::new(1, 4096), &k, &[&1.0f32, &x, &x, &16u32]).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    if dev.compute_capability().unwrap().major < 9 {
        let e = LaunchConfig::new(2, 32).cluster(2).validate(&k, &dev).unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument);
        assert!(e.message.contains("9.0"), "{}", e);
    }
}

#[test]
fn cooperative_launch_with_a_grid_wide_barrier() {
    let _serial = serial();
    let dev = require_gpu!("cooperative_launch_with_a_grid_wide_barrier");
    require_nvrtc!("cooperative_launch_with_a_grid_wide_barrier");
    if dev.attribute(DeviceAttribute::COOPERATIVE_LAUNCH).unwrap() == 0 {
        common::skip("cooperative_launch_with_a_grid_wide_barrier", "the device has no cooperative launch");
        return;
    }
    // Each block writes its slot, then waits at a hand-made grid barrier (an atomic counter):
    // that only terminates when every block is resident at once, which a cooperative launch
    // guarantees. After the barrier each block reads its neighbour's slot.
    let source = r#"
extern "C" __global__ void neighbours(unsigned *slots, unsigned *counter) {
    unsigned b = blockIdx.x;
    if (threadIdx.x == 0) {
        slots[b] = b * 3u + 1u;
        __threadfence();
        atomicAdd(counter, 1u);
        while (atomicAdd(counter, 0u) < gridDim.x) {}
        __threadfence();
        slots[gridDim.x + b] = ((volatile unsigned *)slots)[(b + 1u) % gridDim.x];
    }
}
"#;
    let k = gpu_kernel(&dev, source, "neighbours");
    let per_sm = k.max_active_blocks_per_multiprocessor(&dev, 128, 0).unwrap() as u32;
    let sms = dev.attribute(DeviceAttribute::MULTIPROCESSOR_COUNT).unwrap() as u32;
    let grid = per_sm * sms;
    let config = LaunchConfig::new(grid, 128).cooperative(true);
    config.validate(&k, &dev).unwrap();
    let e = LaunchConfig::new(grid + 1, 128).cooperative(true).validate(&k, &dev).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "a grid that cannot be resident at once: {}", e);

    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let slots = dev.allocate(8 * grid as u64, &s).unwrap();
    let counter = dev.allocate(4, &s).unwrap();
    counter.fill(0, 4, &s).unwrap();
    slots.fill(0, 4, &s).unwrap();
    launch(&s, &config, &k, &[&slots, &counter]).unwrap();
    let mut host = vec![0u8; 8 * grid as usize];
    slots.copy_to_host(0, &mut host, &s).unwrap();
    let got = u32s(&host);
    for b in 0..grid {
        assert_eq!(got[b as usize], b * 3 + 1);
        assert_eq!(got[(grid + b) as usize], ((b + 1) % grid) * 3 + 1, "block {} saw its neighbour", b);
    }
}
