//! TensorMap (TMA) descriptors (`cucore::tensor_map`) on a GPU of compute capability 9.0 or newer:
//! a kernel compiled with NVRTC takes the descriptor as a `const __grid_constant__` parameter,
//! loads a 32 x 8 box of a 100 x 50 float tensor with `cp.async.bulk.tensor` (an mbarrier counts
//! its bytes) and writes it out; each box is compared with the tensor computed here, inside, at
//! the edges (out-of-bounds elements read zero, or NaN with the NaN fill), after
//! `replace_address` (from the second buffer) and after the first buffer was dropped (the
//! descriptor holds its memory). Below 9.0, or without a driver, a device or NVRTC, each test
//! prints "skipped: <test>: <reason>" and passes (common/mod.rs).

#[macro_use]
mod common;
use common::*;

use cucore::{TensorMapDataType, TensorMapDescriptor, TensorMapDescriptorOptions, TensorMapOOBFill};

const KERNEL: &str = r#"
struct alignas(64) CUtensorMap_st { unsigned long long opaque[16]; };

__device__ __forceinline__ unsigned shared_address(const void *p) {
    unsigned long long a;
    asm volatile("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(p));
    return static_cast<unsigned>(a);
}

__device__ __forceinline__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// One 32 x 8 float box at (x, y) into shared memory with one bulk tensor copy, then out;
// status: 1 once the copy completed, 2 if not within 5 s.
extern "C" __global__ void load_tile(const __grid_constant__ CUtensorMap_st tmap, int x, int y, float *out,
                                     unsigned *status) {
    __shared__ alignas(128) float tile[8 * 32];
    __shared__ alignas(8) unsigned long long barrier;
    const unsigned bar = shared_address(&barrier);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(1u) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(8u * 32u * 4u)
                     : "memory");
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
            ::"r"(shared_address(tile)), "l"(reinterpret_cast<unsigned long long>(&tmap)), "r"(x), "r"(y), "r"(bar)
            : "memory");
    }
    unsigned done = 0;
    const unsigned long long start = now_ns();
    while (!done) {
        asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}" : "=r"(done) : "r"(bar), "r"(0u) : "memory");
        if (!done && now_ns() - start > 5000000000ull) break;
    }
    if (!done) {
        status[0] = 2;
        return;
    }
    for (unsigned i = threadIdx.x; i < 8 * 32; i += blockDim.x) out[i] = tile[i];
    if (threadIdx.x == 0) atomicCAS(status, 0u, 1u);
}
"#;

const W: i32 = 100;
const H: i32 = 50;

fn source(x: i32, y: i32, sign: f32) -> f32 {
    sign * (y * 1000 + x + 1) as f32
}

fn tensor(dev: &Device, stream: &Stream, sign: f32) -> Buffer {
    let values: Vec<f32> = (0..H).flat_map(|y| (0..W).map(move |x| source(x, y, sign))).collect();
    let buffer = dev.allocate((values.len() * 4) as u64, stream).unwrap();
    buffer.copy_from_host(0, &f32_bytes(&values), stream).unwrap();
    buffer
}

fn load(dev: &Device, stream: &Stream, kernel: &Kernel, d: &TensorMapDescriptor, x: i32, y: i32) -> Vec<f32> {
    let out = dev.allocate(256 * 4, stream).unwrap();
    let status = dev.allocate(4, stream).unwrap();
    status.fill(0, 4, stream).unwrap();
    launch(stream, &LaunchConfig::new(1, 128), kernel, &[d, &x, &y, &out, &status]).unwrap();
    assert_eq!(u32s(&status.to_vec(stream).unwrap())[0], 1, "the bulk tensor copy did not complete");
    f32s(&out.to_vec(stream).unwrap())
}

fn check(boxed: &[f32], x0: i32, y0: i32, sign: f32, nan_fill: bool) {
    for j in 0..8 {
        for i in 0..32 {
            let (x, y, got) = (x0 + i, y0 + j, boxed[(j * 32 + i) as usize]);
            if (0..W).contains(&x) && (0..H).contains(&y) {
                assert_eq!(got, source(x, y, sign), "element ({}, {})", x, y);
            } else if nan_fill {
                assert!(got.is_nan(), "out-of-bounds element ({}, {}) read {}", x, y, got);
            } else {
                assert_eq!(got, 0.0, "out-of-bounds element ({}, {})", x, y);
            }
        }
    }
}

fn descriptor(target: &Buffer, fill: TensorMapOOBFill) -> TensorMapDescriptor {
    TensorMapDescriptor::tiled(
        target,
        TensorMapDataType::Float32,
        &[W as u64, H as u64],
        &[W as u64 * 4],
        &[32, 8],
        &TensorMapDescriptorOptions::default().oob_fill(fill),
    )
    .unwrap()
}

#[test]
fn a_kernel_loads_boxes_with_the_bulk_tensor_copy() {
    let _serial = serial();
    let test = "a_kernel_loads_boxes_with_the_bulk_tensor_copy";
    let dev = require_gpu!(test);
    let cc = dev.compute_capability().unwrap();
    if cc.major < 9 {
        skip(test, &format!("TensorMap descriptors (TMA) need compute capability 9.0; device 0 is {}.{}", cc.major, cc.minor));
        return;
    }
    require_nvrtc!(test);
    let kernel = gpu_kernel(&dev, KERNEL, "load_tile");
    let stream = dev.create_stream(StreamOptions::default()).unwrap();
    let first = tensor(&dev, &stream, 1.0);
    let second = tensor(&dev, &stream, -1.0);
    let mut d = descriptor(&first, TensorMapOOBFill::None);
    check(&load(&dev, &stream, &kernel, &d, 4, 3), 4, 3, 1.0, false);
    check(&load(&dev, &stream, &kernel, &d, 80, 46), 80, 46, 1.0, false); // right and bottom edges
    check(&load(&dev, &stream, &kernel, &d, -8, -3), -8, -3, 1.0, false); // negative coordinates
    drop(first); // the descriptor holds the memory
    check(&load(&dev, &stream, &kernel, &d, 40, 20), 40, 20, 1.0, false);
    d.replace_address(&second).unwrap();
    assert_eq!(d.address().unwrap(), second.address().unwrap());
    check(&load(&dev, &stream, &kernel, &d, 88, 44), 88, 44, -1.0, false);
    let nan = descriptor(&second, TensorMapOOBFill::NanRequestZeroFma);
    check(&load(&dev, &stream, &kernel, &nan, 88, 45), 88, 45, -1.0, true);
    stream.synchronize().unwrap();
}
