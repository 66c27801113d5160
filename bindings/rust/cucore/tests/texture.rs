//! Texture and surface objects (`cucore::texture`) on a GPU, read and written by kernels compiled
//! with NVRTC, every result compared with values computed here: point filtering, bilinear
//! filtering at weights the texture unit represents exactly, each address mode out of range,
//! normalized coordinates, element-type and normalized-float reads of 8- and 16-bit integers,
//! linear and pitched-2D textures over buffers, explicit level-of-detail reads of a mipmapped
//! array, layered and cubemap fetches, a surface written by a kernel and read back (and read by a
//! kernel); the refusals (a surface over an array without surface load/store, integer linear
//! filtering, seamless filtering of a non-cubemap, anisotropy, sRGB, alignments); lifetimes (an
//! object keeps its array or buffer, close, release order) and no leaks. Without a driver, a
//! device or NVRTC each test prints "skipped: <test>: <reason>" and passes (common/mod.rs).
//!
//! The kernels read textures with inline PTX (`tex`, `tex.level`, `suld`, `sust`) on the 64-bit
//! handles, so they need no CUDA headers.

#[macro_use]
mod common;
use common::*;

use cucore::{
    launch, AddressMode, ArrayFlags, ArrayFormat, ArrayKind, FilterMode, OpaqueArray, OpaqueArrayOptions, ReadMode,
    ResourceDescriptor, SurfaceObject, TextureObject, TextureObjectOptions,
};

const KERNELS: &str = r#"
typedef unsigned long long u64;

// out[4 i ..] = the texel at (xs[i], ys[i]) as four floats.
extern "C" __global__ void sample_2d(u64 tex, const float *xs, const float *ys, float *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float r, g, b, a;
    asm volatile("tex.2d.v4.f32.f32 {%0, %1, %2, %3}, [%4, {%5, %6}];"
                 : "=f"(r), "=f"(g), "=f"(b), "=f"(a) : "l"(tex), "f"(xs[i]), "f"(ys[i]));
    out[4 * i] = r; out[4 * i + 1] = g; out[4 * i + 2] = b; out[4 * i + 3] = a;
}

// The same, elements read as unsigned and signed integers.
extern "C" __global__ void sample_2d_u32(u64 tex, const float *xs, const float *ys, unsigned *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned r, g, b, a;
    asm volatile("tex.2d.v4.u32.f32 {%0, %1, %2, %3}, [%4, {%5, %6}];"
                 : "=r"(r), "=r"(g), "=r"(b), "=r"(a) : "l"(tex), "f"(xs[i]), "f"(ys[i]));
    out[4 * i] = r; out[4 * i + 1] = g; out[4 * i + 2] = b; out[4 * i + 3] = a;
}
extern "C" __global__ void sample_2d_s32(u64 tex, const float *xs, const float *ys, int *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int r, g, b, a;
    asm volatile("tex.2d.v4.s32.f32 {%0, %1, %2, %3}, [%4, {%5, %6}];"
                 : "=r"(r), "=r"(g), "=r"(b), "=r"(a) : "l"(tex), "f"(xs[i]), "f"(ys[i]));
    out[4 * i] = r; out[4 * i + 1] = g; out[4 * i + 2] = b; out[4 * i + 3] = a;
}

// out[i] = element i of a linear texture (tex1Dfetch), first channel.
extern "C" __global__ void fetch_1d(u64 tex, float *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float r, g, b, a;
    asm volatile("tex.1d.v4.f32.s32 {%0, %1, %2, %3}, [%4, {%5}];"
                 : "=f"(r), "=f"(g), "=f"(b), "=f"(a) : "l"(tex), "r"((int)i));
    out[i] = r;
}

// out[i] = the first channel at (u, v) at level of detail lods[i].
extern "C" __global__ void sample_lod(u64 tex, float u, float v, const float *lods, float *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float r, g, b, a;
    asm volatile("tex.level.2d.v4.f32.f32 {%0, %1, %2, %3}, [%4, {%5, %6}], %7;"
                 : "=f"(r), "=f"(g), "=f"(b), "=f"(a) : "l"(tex), "f"(u), "f"(v), "f"(lods[i]));
    out[i] = r;
}

// out[i] = the first channel of layer layers[i] at (xs[i], ys[i]).
extern "C" __global__ void sample_layered(u64 tex, const int *layers, const float *xs, const float *ys, float *out,
                                          unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float r, g, b, a;
    asm volatile("tex.a2d.v4.f32.f32 {%0, %1, %2, %3}, [%4, {%5, %6, %7, %7}];"
                 : "=f"(r), "=f"(g), "=f"(b), "=f"(a) : "l"(tex), "r"(layers[i]), "f"(xs[i]), "f"(ys[i]));
    out[i] = r;
}

// out[i] = the first channel of a cubemap in the direction dirs[3 i ..].
extern "C" __global__ void sample_cube(u64 tex, const float *dirs, float *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float r, g, b, a;
    asm volatile("tex.cube.v4.f32.f32 {%0, %1, %2, %3}, [%4, {%5, %6, %7, %7}];"
                 : "=f"(r), "=f"(g), "=f"(b), "=f"(a)
                 : "l"(tex), "f"(dirs[3 * i]), "f"(dirs[3 * i + 1]), "f"(dirs[3 * i + 2]));
    out[i] = r;
}

// Element (x, y) of a 32-bit surface = x * 1000 + y + base.
extern "C" __global__ void surface_write(u64 surf, unsigned width, unsigned height, unsigned base) {
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    unsigned v = x * 1000u + y + base;
    asm volatile("sust.b.2d.b32.trap [%0, {%1, %2}], {%3};" :: "l"(surf), "r"(x * 4u), "r"(y), "r"(v) : "memory");
}

// out[y * width + x] = element (x, y) of a 32-bit surface.
extern "C" __global__ void surface_read(u64 surf, unsigned *out, unsigned width, unsigned height) {
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    unsigned v;
    asm volatile("suld.b.2d.b32.trap {%0}, [%1, {%2, %3}];" : "=r"(v) : "l"(surf), "r"(x * 4u), "r"(y) : "memory");
    out[y * width + x] = v;
}
"#;

/// The kernels, compiled for the device.
struct Kernels {
    code: ObjectCode,
}

impl Kernels {
    fn get(&self, name: &str) -> Kernel {
        self.code.get_kernel(name).unwrap_or_else(|e| panic!("get_kernel({}): {}", name, e))
    }
}

/// Device 0, a stream and the kernels, or None after printing why the test is skipped.
fn setup(test: &str) -> Option<(Device, Stream, Kernels)> {
    let dev = common::gpu(test)?;
    if !common::nvrtc(test) {
        return None;
    }
    let code = compile(KERNELS, &ProgramOptions::default().arch(&sm_arch(&dev)), CodeType::Cubin, &[]);
    let stream = dev.create_stream(StreamOptions::default()).expect("create_stream");
    Some((dev, stream, Kernels { code }))
}

macro_rules! require_setup {
    ($name:expr) => {
        match setup($name) {
            Some(x) => x,
            None => return,
        }
    };
}

fn options(format: ArrayFormat, channels: u32, width: u64, height: u64) -> OpaqueArrayOptions {
    OpaqueArrayOptions::default().format(format).num_channels(channels).width(width).height(height)
}

fn upload<T: cucore::PlainData>(dev: &Device, stream: &Stream, values: &[T]) -> Buffer {
    let bytes = std::mem::size_of_val(values) as u64;
    let buffer = dev.allocate(bytes.max(4), stream).unwrap();
    // SAFETY: T is plain data without padding, so its bytes may be read.
    let raw = unsafe { std::slice::from_raw_parts(values.as_ptr() as *const u8, bytes as usize) };
    buffer.copy_from_host(0, raw, stream).unwrap();
    buffer
}

fn blocks(n: usize) -> LaunchConfig {
    LaunchConfig::new(((n + 63) / 64) as u32, 64)
}

/// Samples `texture` at the points `(xs[i], ys[i])` with `sample_2d`: four floats per point.
fn sample(dev: &Device, stream: &Stream, k: &Kernels, texture: &TextureObject, points: &[(f32, f32)]) -> Vec<[f32; 4]> {
    let n = points.len();
    let xs: Vec<f32> = points.iter().map(|p| p.0).collect();
    let ys: Vec<f32> = points.iter().map(|p| p.1).collect();
    let (xs, ys) = (upload(dev, stream, &xs), upload(dev, stream, &ys));
    let out = dev.allocate(16 * n as u64, stream).unwrap();
    launch(stream, &blocks(n), &k.get("sample_2d"), &[texture, &xs, &ys, &out, &(n as u32)]).unwrap();
    let v = f32s(&out.to_vec(stream).unwrap());
    v.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]).collect()
}

/// The first channel of `sample`.
fn sample_r(dev: &Device, stream: &Stream, k: &Kernels, texture: &TextureObject, points: &[(f32, f32)]) -> Vec<f32> {
    sample(dev, stream, k, texture, points).iter().map(|t| t[0]).collect()
}

/// A W x H float array whose element (x, y) is `f(x, y)`.
fn float_array(dev: &Device, stream: &Stream, w: u64, h: u64, f: impl Fn(u64, u64) -> f32) -> OpaqueArray {
    let a = dev.create_opaque_array(options(ArrayFormat::Float32, 1, w, h)).unwrap();
    let values: Vec<f32> = (0..h).flat_map(|y| (0..w).map(move |x| (x, y))).map(|(x, y)| f(x, y)).collect();
    a.copy_from_host(&values, stream).unwrap();
    a
}

fn live_counts_of_textures() -> [usize; 5] {
    [
        live_object_count(ObjectType::OpaqueArray).unwrap(),
        live_object_count(ObjectType::MipmappedArray).unwrap(),
        live_object_count(ObjectType::TextureObject).unwrap(),
        live_object_count(ObjectType::SurfaceObject).unwrap(),
        live_object_count(ObjectType::Buffer).unwrap(),
    ]
}

/// The kernels compile (NVRTC and ptxas take their inline PTX) for an H100 without a GPU, and every
/// kernel the tests launch is in the cubin with the parameters the tests pass.
#[test]
fn kernels_compile_without_a_gpu() {
    let _serial = serial();
    require_nvrtc!("kernels_compile_without_a_gpu");
    let code = compile(KERNELS, &ProgramOptions::default().arch(ARCH), CodeType::Cubin, &[]);
    assert!(!code.code().unwrap().is_empty());
    for name in [
        "sample_2d",
        "sample_2d_u32",
        "sample_2d_s32",
        "fetch_1d",
        "sample_lod",
        "sample_layered",
        "sample_cube",
        "surface_write",
        "surface_read",
    ] {
        assert!(String::from_utf8_lossy(code.code().unwrap()).contains(name), "{} is in the cubin", name);
    }
}

// ---- Filtering and addressing ----------------------------------------------------------------------

#[test]
fn point_filtering_reads_the_nearest_texel() {
    let _serial = serial();
    let (dev, stream, k) = require_setup!("point_filtering_reads_the_nearest_texel");
    let before = live_counts_of_textures();
    {
        let value = |x: u64, y: u64| (x + 10 * y) as f32;
        let a = float_array(&dev, &stream, 8, 4, value);
        let t = dev.create_texture_object(&a, TextureObjectOptions::default()).unwrap();
        assert_ne!(t.handle().unwrap(), 0);
        // Unnormalized coordinates: texel (x, y) covers [x, x + 1) x [y, y + 1).
        let mut points = Vec::new();
        let mut want = Vec::new();
        for y in 0..4u64 {
            for x in 0..8u64 {
                for (dx, dy) in [(0.5f32, 0.5f32), (0.01, 0.99), (0.99, 0.01)] {
                    points.push((x as f32 + dx, y as f32 + dy));
                    want.push(value(x, y));
                }
            }
        }
        assert_eq!(sample_r(&dev, &stream, &k, &t, &points), want);
        // Through launch! too: the kernel's parameter is 8 bytes, as the handle a TextureObject passes.
        let (xs, ys) = (upload(&dev, &stream, &[2.5f32]), upload(&dev, &stream, &[1.5f32]));
        let out = dev.allocate(16, &stream).unwrap();
        cucore::launch!(stream, blocks(1), k.get("sample_2d"), t, xs, ys, out, 1u32).unwrap();
        assert_eq!(f32s(&out.to_vec(&stream).unwrap())[0], 12.0);
    }
    assert_eq!(live_counts_of_textures(), before);
}

/// Bilinear filtering of texels at weights the texture unit holds exactly (its weights have 8
/// fractional bits; 0, 1/4, 1/2, 3/4 are exact) over texels that are multiples of 16, so every
/// product and sum is exact in a float: the expected values are computed here, exactly.
#[test]
fn linear_filtering_interpolates_exactly() {
    let _serial = serial();
    let (dev, stream, k) = require_setup!("linear_filtering_interpolates_exactly");
    const W: u64 = 8;
    const H: u64 = 4;
    let value = |x: u64, y: u64| (16 * ((x * 7 + y * 13) % 11)) as f32;
    let a = float_array(&dev, &stream, W, H, value);
    let t = dev.create_texture_object(&a, TextureObjectOptions::default().filter_mode(FilterMode::Linear)).unwrap();
    // Clamp addressing: a texel index outside the array reads the edge texel.
    let texel = |x: i64, y: i64| value(x.clamp(0, W as i64 - 1) as u64, y.clamp(0, H as i64 - 1) as u64);
    let bilinear = |u: f32, v: f32| {
        let (xb, yb) = (u - 0.5, v - 0.5);
        let (x0, y0) = (xb.floor() as i64, yb.floor() as i64);
        let (a, b) = (xb - xb.floor(), yb - yb.floor());
        (1.0 - a) * (1.0 - b) * texel(x0, y0)
            + a * (1.0 - b) * texel(x0 + 1, y0)
            + (1.0 - a) * b * texel(x0, y0 + 1)
            + a * b * texel(x0 + 1, y0 + 1)
    };
    let mut points = Vec::new();
    for yi in 0..(H * 4) {
        for xi in 0..(W * 4) {
            // Every quarter position from the first texel's centre to the last's, and the edges.
            points.push((xi as f32 * 0.25 + 0.25, yi as f32 * 0.25 + 0.25));
        }
    }
    let want: Vec<f32> = points.iter().map(|&(u, v)| bilinear(u, v)).collect();
    let got = sample_r(&dev, &stream, &k, &t, &points);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "at {:?}", points[i]);
    }
    // A case by hand: a quarter of the way from texel (2, 1) to (3, 1), halfway to row 2.
    let (u, v) = (2.75f32, 2.0f32);
    let by_hand =
        0.75 * 0.5 * value(2, 1) + 0.25 * 0.5 * value(3, 1) + 0.75 * 0.5 * value(2, 2) + 0.25 * 0.5 * value(3, 2);
    assert_eq!(bilinear(u, v), by_hand);
    assert_eq!(sample_r(&dev, &stream, &k, &t, &[(u, v)]), vec![by_hand]);
}

#[test]
fn address_modes_out_of_range() {
    let _serial = serial();
    let (dev, stream, k) = require_setup!("address_modes_out_of_range");
    const W: u64 = 8;
    const H: u64 = 4;
    let value = |x: u64, y: u64| (1 + x + 100 * y) as f32;
    let a = float_array(&dev, &stream, W, H, value);

    // Clamp (the default), unnormalized: past either end reads the edge.
    let clamp = dev.create_texture_object(&a, TextureObjectOptions::default()).unwrap();
    let got = sample_r(&dev, &stream, &k, &clamp, &[(-3.0, 1.5), (11.5, 1.5), (2.5, -7.0), (2.5, 40.0), (-1.0, 99.0)]);
    assert_eq!(got, vec![value(0, 1), value(7, 1), value(2, 0), value(2, 3), value(0, 3)]);

    // Border: out of range reads the border color, in range the texel.
    let border = dev
        .create_texture_object(
            &a,
            TextureObjectOptions::default().address_mode([AddressMode::Border; 3]).border_color([42.0, 0.0, 0.0, 0.0]),
        )
        .unwrap();
    let got = sample_r(&dev, &stream, &k, &border, &[(-3.0, 1.5), (11.5, 1.5), (2.5, -7.0), (2.5, 1.5)]);
    assert_eq!(got, vec![42.0, 42.0, 42.0, value(2, 1)]);

    // Wrap and mirror need normalized coordinates: u = (x + 0.5) / W shifted by whole periods.
    let normalized = |mode| {
        dev.create_texture_object(
            &a,
            TextureObjectOptions::default().normalized_coords(true).address_mode([
                mode,
                AddressMode::Clamp,
                AddressMode::Clamp,
            ]),
        )
        .unwrap()
    };
    let wrap = normalized(AddressMode::Wrap);
    let mirror = normalized(AddressMode::Mirror);
    let v = 2.5 / H as f32; // row 2
    let mut points = Vec::new();
    let (mut want_wrap, mut want_mirror) = (Vec::new(), Vec::new());
    for x in 0..W {
        let u = (x as f32 + 0.5) / W as f32;
        for shift in [-1.0f32, 1.0, 2.0] {
            points.push((u + shift, v));
            want_wrap.push(value(x, 2));
            // An odd number of periods away is mirrored; an even number is not.
            want_mirror.push(if shift == 2.0 { value(x, 2) } else { value(W - 1 - x, 2) });
        }
    }
    assert_eq!(sample_r(&dev, &stream, &k, &wrap, &points), want_wrap, "wrap");
    assert_eq!(sample_r(&dev, &stream, &k, &mirror, &points), want_mirror, "mirror");
    // Normalized clamp: in range, u = (x + 0.5) / W is texel x.
    let norm_clamp = normalized(AddressMode::Clamp);
    let inside: Vec<(f32, f32)> = (0..W).map(|x| ((x as f32 + 0.5) / W as f32, v)).collect();
    assert_eq!(sample_r(&dev, &stream, &k, &norm_clamp, &inside), (0..W).map(|x| value(x, 2)).collect::<Vec<f32>>());
    assert_eq!(sample_r(&dev, &stream, &k, &norm_clamp, &[(1.5, v), (-0.5, v)]), vec![value(W - 1, 2), value(0, 2)]);
}

#[test]
fn integers_read_as_elements_and_as_normalized_floats() {
    let _serial = serial();
    let (dev, stream, k) = require_setup!("integers_read_as_elements_and_as_normalized_floats");
    let point = |x: u64, y: u64| (x as f32 + 0.5, y as f32 + 0.5);
    let run_u32 = |t: &TextureObject, points: &[(f32, f32)]| -> Vec<u32> {
        let n = points.len();
        let xs: Vec<f32> = points.iter().map(|p| p.0).collect();
        let ys: Vec<f32> = points.iter().map(|p| p.1).collect();
        let (xs, ys) = (upload(&dev, &stream, &xs), upload(&dev, &stream, &ys));
        let out = dev.allocate(16 * n as u64, &stream).unwrap();
        launch(&stream, &blocks(n), &k.get("sample_2d_u32"), &[t, &xs, &ys, &out, &(n as u32)]).unwrap();
        u32s(&out.to_vec(&stream).unwrap())
    };

    // uint16 x 2 read as elements: exact integers, the unused channels (0, 1).
    let a = dev.create_opaque_array(options(ArrayFormat::Uint16, 2, 4, 2)).unwrap();
    let words: Vec<u16> = (0..16).map(|i| 65535 - i * 4097).collect();
    a.copy_from_host(&words, &stream).unwrap();
    let t = dev.create_texture_object(&a, TextureObjectOptions::default()).unwrap();
    let points: Vec<(f32, f32)> = (0..2).flat_map(|y| (0..4).map(move |x| point(x, y))).collect();
    let got = run_u32(&t, &points);
    for (i, texel) in got.chunks_exact(4).enumerate() {
        assert_eq!(texel[..2], [u32::from(words[2 * i]), u32::from(words[2 * i + 1])], "texel {}", i);
    }

    // int8 x 1 read as elements through the signed kernel: sign-extended.
    let s = dev.create_opaque_array(options(ArrayFormat::Int8, 1, 4, 1)).unwrap();
    s.copy_from_host(&[-128i8, -1, 0, 127], &stream).unwrap();
    let ts = dev.create_texture_object(&s, TextureObjectOptions::default()).unwrap();
    let xs = upload(&dev, &stream, &[0.5f32, 1.5, 2.5, 3.5]);
    let ys = upload(&dev, &stream, &[0.5f32; 4]);
    let out = dev.allocate(64, &stream).unwrap();
    launch(&stream, &blocks(4), &k.get("sample_2d_s32"), &[&ts, &xs, &ys, &out, &4u32]).unwrap();
    let got: Vec<i32> =
        out.to_vec(&stream).unwrap().chunks_exact(4).map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect();
    assert_eq!(got.chunks_exact(4).map(|c| c[0]).collect::<Vec<i32>>(), vec![-128, -1, 0, 127]);

    // Normalized floats: uint8 0 and 255 are 0 and 1 exactly, uint16 65535 is 1, int8 127 is 1
    // and -127 is -1; with linear filtering, halfway between the first two texels is their mean
    // (within 1/255: the texture unit may filter 8-bit texels at 8-bit precision).
    let cases: [(ArrayFormat, Vec<u8>, Vec<f32>); 3] = [
        (ArrayFormat::Uint8, vec![0, 255, 255, 0], vec![0.0, 1.0, 1.0, 0.0]),
        (
            ArrayFormat::Uint16,
            [0u16, 65535, 0, 65535].iter().flat_map(|w| w.to_ne_bytes()).collect(),
            vec![0.0, 1.0, 0.0, 1.0],
        ),
        (ArrayFormat::Int8, [-127i8, 127, 0, -127].iter().map(|&b| b as u8).collect(), vec![-1.0, 1.0, 0.0, -1.0]),
    ];
    for (format, bytes, want) in cases {
        let a = dev.create_opaque_array(options(format, 1, 4, 1)).unwrap();
        a.copy_from_host(&bytes, &stream).unwrap();
        let t = dev
            .create_texture_object(&a, TextureObjectOptions::default().read_mode(ReadMode::NormalizedFloat))
            .unwrap();
        let got = sample_r(&dev, &stream, &k, &t, &[(0.5, 0.5), (1.5, 0.5), (2.5, 0.5), (3.5, 0.5)]);
        assert_eq!(got, want, "{} read as normalized floats", format);
        let linear = dev
            .create_texture_object(
                &a,
                TextureObjectOptions::default().read_mode(ReadMode::NormalizedFloat).filter_mode(FilterMode::Linear),
            )
            .unwrap();
        let halfway = sample_r(&dev, &stream, &k, &linear, &[(1.0, 0.5)])[0];
        let mean = (want[0] + want[1]) / 2.0;
        assert!((halfway - mean).abs() <= 1.0 / 255.0, "{}: halfway is {}, the mean {}", format, halfway, mean);
    }
    // A format normalized by itself (4 channels of unsigned normalized bytes).
    let n = dev.create_opaque_array(options(ArrayFormat::UnormInt8x4, 0, 2, 1)).unwrap();
    n.copy_from_host(&[0u8, 255, 0, 255, 255, 255, 0, 0], &stream).unwrap();
    let t =
        dev.create_texture_object(&n, TextureObjectOptions::default().read_mode(ReadMode::NormalizedFloat)).unwrap();
    assert_eq!(
        sample(&dev, &stream, &k, &t, &[(0.5, 0.5), (1.5, 0.5)]),
        vec![[0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 0.0, 0.0]]
    );
}

// ---- Resources: buffers, mipmapped, layered and cubemap arrays ----------------------------------------

#[test]
fn linear_and_pitched_textures_over_buffers() {
    let _serial = serial();
    let (dev, stream, k) = require_setup!("linear_and_pitched_textures_over_buffers");
    let before = live_counts_of_textures();
    {
        let alignment = dev.attribute(DeviceAttribute::TEXTURE_ALIGNMENT).unwrap() as u64;
        let pitch_alignment = dev.attribute(DeviceAttribute::TEXTURE_PITCH_ALIGNMENT).unwrap() as u64;
        // Views at aligned addresses of a larger allocation, whatever the pool gives.
        let backing = dev.allocate(64 * 1024, &stream).unwrap();
        let skip = (alignment - backing.address().unwrap() % alignment) % alignment;
        let memory = backing.view(skip, 16 * 1024).unwrap();
        let second = (skip + 16 * 1024 + alignment - 1) / alignment * alignment;
        let rows_memory = backing.view(second, 16 * 1024).unwrap();
        assert_eq!(memory.address().unwrap() % alignment, 0);
        assert_eq!(rows_memory.address().unwrap() % alignment, 0);

        // LINEAR: 100 floats, fetched by index.
        let values: Vec<f32> = (0..100).map(|i| i as f32 * 1.25 - 20.0).collect();
        memory.copy_from_host(0, &f32_bytes(&values), &stream).unwrap();
        let linear = ResourceDescriptor::from_linear(&memory, ArrayFormat::Float32, 1, 400);
        let t = dev.create_texture_object(linear, TextureObjectOptions::default()).unwrap();
        let out = dev.allocate(400, &stream).unwrap();
        launch(&stream, &blocks(100), &k.get("fetch_1d"), &[&t, &out, &100u32]).unwrap();
        assert_eq!(f32s(&out.to_vec(&stream).unwrap()), values);

        // PITCH_2D: 10 floats a row, 6 rows, rows at the pitch alignment (at least 40 bytes).
        let pitch = (40 + pitch_alignment - 1) / pitch_alignment * pitch_alignment;
        let value = |x: u64, y: u64| (x * 3 + y * 50) as f32;
        let mut rows = vec![0u8; (pitch * 6) as usize];
        for y in 0..6u64 {
            for x in 0..10u64 {
                let at = (y * pitch + x * 4) as usize;
                rows[at..at + 4].copy_from_slice(&value(x, y).to_ne_bytes());
            }
        }
        rows_memory.copy_from_host(0, &rows, &stream).unwrap();
        let pitched = ResourceDescriptor::Pitch2D {
            buffer: &rows_memory,
            format: ArrayFormat::Float32,
            num_channels: 1,
            width: 10,
            height: 6,
            pitch_bytes: pitch,
        };
        let t2 = dev.create_texture_object(pitched, TextureObjectOptions::default()).unwrap();
        let points: Vec<(f32, f32)> =
            (0..6).flat_map(|y| (0..10).map(move |x| (x as f32 + 0.5, y as f32 + 0.5))).collect();
        let want: Vec<f32> = (0..6).flat_map(|y| (0..10).map(move |x| value(x, y))).collect();
        assert_eq!(sample_r(&dev, &stream, &k, &t2, &points), want);

        // The texture objects hold the buffer's memory: close the buffer and its views, read again.
        memory.close(None).unwrap();
        rows_memory.close(None).unwrap();
        backing.close(None).unwrap();
        drop((memory, rows_memory, backing));
        let out = dev.allocate(400, &stream).unwrap();
        launch(&stream, &blocks(100), &k.get("fetch_1d"), &[&t, &out, &100u32]).unwrap();
        assert_eq!(f32s(&out.to_vec(&stream).unwrap()), values, "read after the buffer was closed");
        assert_eq!(sample_r(&dev, &stream, &k, &t2, &points), want);

        // Refused before the driver: a size that is not a multiple of the element, a size past
        // the buffer, a misaligned address, a pitch off the alignment, a pitch below the row.
        let fresh = dev.allocate(64 * 1024, &stream).unwrap();
        let skip = (alignment - fresh.address().unwrap() % alignment) % alignment;
        let aligned = fresh.view(skip, 4096).unwrap();
        let misaligned = fresh.view(skip + 4, 4096).unwrap();
        let refused: Vec<(&str, ResourceDescriptor)> = vec![
            ("a size of 6 bytes of floats", ResourceDescriptor::from_linear(&aligned, ArrayFormat::Float32, 1, 6)),
            ("a size past the buffer", ResourceDescriptor::from_linear(&aligned, ArrayFormat::Float32, 1, 8192)),
            ("a misaligned address", ResourceDescriptor::from_linear(&misaligned, ArrayFormat::Float32, 1, 64)),
            (
                "a pitch off the alignment",
                ResourceDescriptor::from_pitch2d(&aligned, ArrayFormat::Float32, 1, 4, 4, pitch_alignment + 4),
            ),
            (
                "a pitch below the row",
                ResourceDescriptor::from_pitch2d(&aligned, ArrayFormat::Float32, 1, 64, 4, pitch_alignment),
            ),
            (
                "rows past the buffer",
                ResourceDescriptor::from_pitch2d(&aligned, ArrayFormat::Float32, 1, 4, 4096, pitch_alignment),
            ),
            ("a BC format", ResourceDescriptor::from_linear(&aligned, ArrayFormat::Bc1Unorm, 0, 64)),
        ];
        for (what, r) in refused {
            let e = dev.create_texture_object(r, TextureObjectOptions::default()).expect_err(what);
            assert_eq!(e.status, Status::InvalidArgument, "{}: {}", what, e);
            assert!(!e.message.is_empty());
        }
        // A closed buffer is InvalidState.
        aligned.close(None).unwrap();
        let e = dev
            .create_texture_object(
                ResourceDescriptor::from_linear(&aligned, ArrayFormat::Float32, 1, 0),
                TextureObjectOptions::default(),
            )
            .unwrap_err();
        assert_eq!(e.status, Status::InvalidState, "{}", e);
    }
    stream.synchronize().unwrap();
    assert_eq!(live_counts_of_textures(), before, "every object went, and the buffers with the textures");
}

#[test]
fn mipmapped_levels_by_explicit_level_of_detail() {
    let _serial = serial();
    let (dev, stream, k) = require_setup!("mipmapped_levels_by_explicit_level_of_detail");
    // 16 x 16, 5 levels; level l holds 10 * (l + 1) everywhere.
    let m = dev.create_mipmapped_array(options(ArrayFormat::Float32, 1, 16, 16), 5).unwrap();
    for l in 0..5u32 {
        let level = m.level(l).unwrap();
        let i = level.info().unwrap();
        level.copy_from_host(&vec![10.0 * (l + 1) as f32; (i.width * i.height) as usize], &stream).unwrap();
    }
    let t = dev
        .create_texture_object(&m, TextureObjectOptions::default().normalized_coords(true).max_mipmap_level_clamp(4.0))
        .unwrap();
    // Whole levels of detail (point mipmap filtering reads one level); past the last, the last.
    let lods = [0.0f32, 1.0, 2.0, 3.0, 4.0, 7.0];
    let want = [10.0f32, 20.0, 30.0, 40.0, 50.0, 50.0];
    let lod_buffer = upload(&dev, &stream, &lods);
    let out = dev.allocate(4 * lods.len() as u64, &stream).unwrap();
    let n = lods.len() as u32;
    cucore::launch!(stream, blocks(lods.len()), k.get("sample_lod"), &t, 0.5f32, 0.5f32, &lod_buffer, &out, n).unwrap();
    assert_eq!(f32s(&out.to_vec(&stream).unwrap()), want);
    // A clamp at level 2 stops there; the mipmapped array can go first (the texture holds it).
    let clamped = dev
        .create_texture_object(&m, TextureObjectOptions::default().normalized_coords(true).max_mipmap_level_clamp(2.0))
        .unwrap();
    m.close().unwrap();
    drop(m);
    cucore::launch!(stream, blocks(lods.len()), k.get("sample_lod"), &clamped, 0.5f32, 0.5f32, &lod_buffer, &out, n)
        .unwrap();
    assert_eq!(f32s(&out.to_vec(&stream).unwrap()), [10.0f32, 20.0, 30.0, 30.0, 30.0, 30.0]);
}

#[test]
fn layered_and_cubemap_fetches() {
    let _serial = serial();
    let (dev, stream, k) = require_setup!("layered_and_cubemap_fetches");
    // Three layers of 4 x 4; element (x, y) of layer l = 100 l + 10 y + x.
    let layered =
        dev.create_opaque_array(options(ArrayFormat::Float32, 1, 4, 4).kind(ArrayKind::Layered).layers(3)).unwrap();
    let values: Vec<f32> = (0..3).flat_map(|l| (0..16).map(move |i| (100 * l + 10 * (i / 4) + i % 4) as f32)).collect();
    layered.copy_from_host(&values, &stream).unwrap();
    let t = dev.create_texture_object(&layered, TextureObjectOptions::default()).unwrap();
    let cases = [(0i32, 0.5f32, 0.5f32), (1, 3.5, 0.5), (2, 1.5, 2.5), (2, 3.5, 3.5), (1, 0.5, 3.5)];
    let layers = upload(&dev, &stream, &cases.map(|c| c.0));
    let xs = upload(&dev, &stream, &cases.map(|c| c.1));
    let ys = upload(&dev, &stream, &cases.map(|c| c.2));
    let out = dev.allocate(4 * cases.len() as u64, &stream).unwrap();
    launch(
        &stream,
        &blocks(cases.len()),
        &k.get("sample_layered"),
        &[&t, &layers, &xs, &ys, &out, &(cases.len() as u32)],
    )
    .unwrap();
    let want: Vec<f32> = cases.iter().map(|&(l, x, y)| (100 * l + 10 * y as i32 + x as i32) as f32).collect();
    assert_eq!(f32s(&out.to_vec(&stream).unwrap()), want);

    // A cubemap of 8 x 8 faces, face f filled with f + 1: each axis direction reads its face
    // (+X, -X, +Y, -Y, +Z, -Z).
    let cube = dev.create_opaque_array(options(ArrayFormat::Float32, 1, 8, 8).kind(ArrayKind::Cubemap)).unwrap();
    let faces: Vec<f32> = (0..6).flat_map(|f| std::iter::repeat((f + 1) as f32).take(64)).collect();
    cube.copy_from_host(&faces, &stream).unwrap();
    let tc = dev
        .create_texture_object(&cube, TextureObjectOptions::default().normalized_coords(true).seamless_cubemap(true))
        .unwrap();
    let dirs: [f32; 18] = [1.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, -1.0];
    let dir_buffer = upload(&dev, &stream, &dirs);
    let out = dev.allocate(24, &stream).unwrap();
    launch(&stream, &blocks(6), &k.get("sample_cube"), &[&tc, &dir_buffer, &out, &6u32]).unwrap();
    assert_eq!(f32s(&out.to_vec(&stream).unwrap()), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
}

// ---- Surfaces ----------------------------------------------------------------------------------------

#[test]
fn surface_written_by_a_kernel_reads_back() {
    let _serial = serial();
    let (dev, stream, k) = require_setup!("surface_written_by_a_kernel_reads_back");
    let before = live_counts_of_textures();
    {
        const W: u32 = 37;
        const H: u32 = 19;
        let a = dev
            .create_opaque_array(
                options(ArrayFormat::Uint32, 1, W.into(), H.into()).flags(ArrayFlags::SURFACE_LOAD_STORE),
            )
            .unwrap();
        assert!(a.info().unwrap().is_surface_load_store());
        let s = dev.create_surface_object(&a).unwrap();
        assert_ne!(s.handle().unwrap(), 0);
        let config = LaunchConfig::new(((W + 7) / 8, (H + 7) / 8), (8, 8));
        cucore::launch!(stream, config, k.get("surface_write"), &s, W, H, 5u32).unwrap();
        let got = u32s(&a.to_vec(&stream).unwrap());
        let want: Vec<u32> = (0..H).flat_map(|y| (0..W).map(move |x| x * 1000 + y + 5)).collect();
        assert_eq!(got, want, "the kernel's writes, copied out of the array");

        // The other way: the host writes, a kernel loads through the surface.
        let host: Vec<u32> = (0..W * H).map(|i| i.wrapping_mul(2_654_435_761)).collect();
        a.copy_from_host(&host, &stream).unwrap();
        let out = dev.allocate(u64::from(W * H) * 4, &stream).unwrap();
        launch(&stream, &config, &k.get("surface_read"), &[&s, &out, &W, &H]).unwrap();
        assert_eq!(u32s(&out.to_vec(&stream).unwrap()), host);

        // The surface holds the array: release the array, write and read through the surface.
        drop(a);
        cucore::launch!(stream, config, k.get("surface_write"), &s, W, H, 7u32).unwrap();
        launch(&stream, &config, &k.get("surface_read"), &[&s, &out, &W, &H]).unwrap();
        let want: Vec<u32> = (0..H).flat_map(|y| (0..W).map(move |x| x * 1000 + y + 7)).collect();
        assert_eq!(u32s(&out.to_vec(&stream).unwrap()), want);

        // Closed: the handle is InvalidState, and so is a launch that passes it (nothing runs).
        s.close().unwrap();
        s.close().unwrap();
        assert_eq!(s.handle().unwrap_err().status, Status::InvalidState);
        let e = launch(&stream, &config, &k.get("surface_read"), &[&s, &out, &W, &H]).unwrap_err();
        assert_eq!(e.status, Status::InvalidState, "{}", e);
        assert!(format!("{:?}", s).starts_with("SurfaceObject(<closed"), "{:?}", s);
    }
    stream.synchronize().unwrap();
    assert_eq!(live_counts_of_textures(), before);
}

// ---- Refusals -----------------------------------------------------------------------------------------

#[test]
fn objects_the_library_refuses() {
    let _serial = serial();
    let dev = require_gpu!("objects_the_library_refuses");
    let before = live_counts_of_textures();
    {
        let stream = dev.create_stream(StreamOptions::default()).unwrap();
        let plain = dev.create_opaque_array(options(ArrayFormat::Float32, 1, 8, 8)).unwrap();
        // A surface over an array without surface load/store: the driver would take it; we do not.
        let e = dev.create_surface_object(&plain).unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument, "{}", e);
        assert!(e.message.contains("SURFACE_LOAD_STORE"), "names the flag: {}", e);
        // Surfaces take arrays only.
        let m = dev.create_mipmapped_array(options(ArrayFormat::Float32, 1, 8, 8), 2).unwrap();
        assert_eq!(dev.create_surface_object(&m).unwrap_err().status, Status::InvalidArgument);
        let buffer = dev.allocate(4096, &stream).unwrap();
        let e = dev
            .create_surface_object(ResourceDescriptor::from_linear(&buffer, ArrayFormat::Float32, 1, 0))
            .unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument, "{}", e);

        // Integers cannot be interpolated: linear filtering of elements read as integers.
        let ints = dev.create_opaque_array(options(ArrayFormat::Uint8, 4, 8, 8)).unwrap();
        let e = dev
            .create_texture_object(&ints, TextureObjectOptions::default().filter_mode(FilterMode::Linear))
            .unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument, "{}", e);
        // ... but read as normalized floats they can.
        dev.create_texture_object(
            &ints,
            TextureObjectOptions::default().filter_mode(FilterMode::Linear).read_mode(ReadMode::NormalizedFloat),
        )
        .unwrap();
        // Seamless filtering needs a cubemap; anisotropy stops at 16; the mipmap fields are finite.
        for (what, o) in [
            ("seamless_cubemap on a 2D array", TextureObjectOptions::default().seamless_cubemap(true)),
            ("anisotropy 17", TextureObjectOptions::default().max_anisotropy(17)),
            ("a NaN level bias", TextureObjectOptions::default().mipmap_level_bias(f32::NAN)),
            ("an infinite clamp", TextureObjectOptions::default().max_mipmap_level_clamp(f32::INFINITY)),
        ] {
            let e = dev.create_texture_object(&plain, o).expect_err(what);
            assert_eq!(e.status, Status::InvalidArgument, "{}: {}", what, e);
        }
        dev.create_texture_object(&plain, TextureObjectOptions::default().max_anisotropy(16)).unwrap();
        // An sRGB format needs srgb.
        let srgb = dev.create_opaque_array(options(ArrayFormat::Bc1UnormSrgb, 0, 8, 8)).unwrap();
        let e = dev.create_texture_object(&srgb, TextureObjectOptions::default()).unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument, "{}", e);
        dev.create_texture_object(
            &srgb,
            TextureObjectOptions::default().srgb(true).read_mode(ReadMode::NormalizedFloat),
        )
        .unwrap();
        // Closed arrays.
        plain.close().unwrap();
        assert_eq!(
            dev.create_texture_object(&plain, TextureObjectOptions::default()).unwrap_err().status,
            Status::InvalidState
        );
        m.close().unwrap();
        assert_eq!(
            dev.create_texture_object(&m, TextureObjectOptions::default()).unwrap_err().status,
            Status::InvalidState
        );
        // The C ABI's checks of the descriptor (the safe types cannot make these).
        let mut raw = cucore::sys::cucore_resource_descriptor_t::INIT;
        let mut out: *mut cucore::sys::cucore_texture_object_t = std::ptr::null_mut();
        // SAFETY: valid pointers; an unset kind and then fields of another kind are refused.
        unsafe {
            assert_eq!(
                cucore::sys::cucore_texture_object_create(dev.as_raw(), &raw, std::ptr::null(), &mut out),
                cucore::sys::CUCORE_ERROR_INVALID_ARGUMENT
            );
            raw.kind = cucore::sys::CUCORE_RESOURCE_KIND_OPAQUE_ARRAY;
            raw.array = ints.as_raw();
            raw.buffer = buffer.as_raw();
            assert_eq!(
                cucore::sys::cucore_texture_object_create(dev.as_raw(), &raw, std::ptr::null(), &mut out),
                cucore::sys::CUCORE_ERROR_INVALID_ARGUMENT
            );
        }
        assert!(out.is_null());
    }
    assert_eq!(live_counts_of_textures(), before, "refused objects leave nothing behind");
}

// ---- Lifetimes -----------------------------------------------------------------------------------------

#[test]
fn textures_keep_their_arrays_whatever_the_release_order() {
    let _serial = serial();
    let (dev, stream, k) = require_setup!("textures_keep_their_arrays_whatever_the_release_order");
    let before = live_counts_of_textures();
    let value = |x: u64, y: u64| (x * 2 + y * 64) as f32;
    let points: Vec<(f32, f32)> = (0..4).map(|i| (i as f32 + 0.5, 1.5)).collect();
    let want: Vec<f32> = (0..4).map(|x| value(x, 1)).collect();
    for order in 0..4 {
        let a = float_array(&dev, &stream, 4, 4, value);
        let t = dev.create_texture_object(&a, TextureObjectOptions::default()).unwrap();
        let twin = t.clone();
        assert_eq!(t, twin);
        match order {
            0 => drop(a),            // the array's last reference first
            1 => a.close().unwrap(), // closed, but still referenced
            2 => {
                a.close().unwrap(); // closed and released
                drop(a);
            }
            _ => drop(twin.clone()), // a clone comes and goes
        }
        assert_eq!(sample_r(&dev, &stream, &k, &t, &points), want, "order {}", order);
        drop(t);
        assert_eq!(sample_r(&dev, &stream, &k, &twin, &points), want, "order {}, through the clone", order);
        twin.close().unwrap();
        assert_eq!(twin.handle().unwrap_err().status, Status::InvalidState);
        let xs = upload(&dev, &stream, &[0.5f32]);
        let out = dev.allocate(16, &stream).unwrap();
        let e = launch(&stream, &blocks(1), &k.get("sample_2d"), &[&twin, &xs, &xs, &out, &1u32]).unwrap_err();
        assert_eq!(e.status, Status::InvalidState, "a closed texture is no kernel argument: {}", e);
    }
    // Many textures over one array, released in the reverse order.
    let a = float_array(&dev, &stream, 4, 4, value);
    let many: Vec<TextureObject> =
        (0..16).map(|_| TextureObject::create(None, &a, TextureObjectOptions::default()).unwrap()).collect();
    drop(a);
    for t in many.iter().rev() {
        assert_eq!(sample_r(&dev, &stream, &k, t, &points[..1]), want[..1].to_vec());
    }
    drop(many);
    // Objects cross threads: made here, used and dropped on another thread.
    let a = float_array(&dev, &stream, 4, 4, value);
    let t = TextureObject::create(Some(&dev), &a, TextureObjectOptions::default()).unwrap();
    let s_array =
        dev.create_opaque_array(options(ArrayFormat::Uint32, 1, 4, 4).flags(ArrayFlags::SURFACE_LOAD_STORE)).unwrap();
    let s = SurfaceObject::create(Some(&dev), &s_array).unwrap();
    let handles = thread::spawn(move || (t.handle().unwrap(), s.handle().unwrap())).join().unwrap();
    assert!(handles.0 != 0 && handles.1 != 0);
    drop((a, s_array));
    stream.synchronize().unwrap();
    assert_eq!(live_counts_of_textures(), before);
}
