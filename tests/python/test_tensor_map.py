"""TensorMap (TMA) descriptors: names and enums as cuda.core's, options, row-major shapes turned into the driver's
order, every rule refused before the driver with the rule named, replace_address, holding the buffer, the 128
bytes launch() packs (the fake driver records what it receives: the encode's arguments in the descriptor's bytes,
tests/fake_driver/tensor_maps.hpp); on a GPU of compute capability 9.0, a kernel loads boxes with the bulk tensor
copy, including out-of-bounds fill at an edge and after replace_address."""
import ctypes
import gc
import math
import struct

import pytest

import cucore
from cucore import (TensorMapDataType, TensorMapDescriptor, TensorMapDescriptorOptions, TensorMapIm2ColWideMode,
                    TensorMapInterleave, TensorMapL2Promotion, TensorMapOOBFill, TensorMapSwizzle)
from conftest import FAKE_DRIVER
from test_launch import fake, fake_image, last_args, real_gpu, real_kernel  # noqa: F401 (fixtures)

MAGIC = 0x7E4503A900000000


def record(data: bytes) -> dict:
    """Decodes the fake driver's record of an encode (the layout of tests/fake_driver/tensor_maps.hpp)."""
    w = struct.unpack("<16Q", data)
    assert w[0] & ~0xFF == MAGIC, "not a descriptor the fake driver encoded"
    kind = w[0] & 0xFF
    r = {"kind": kind, "address": w[1], "data_type": w[2] & 0xFF, "rank": (w[2] >> 8) & 0xFF,
         "interleave": (w[2] >> 16) & 0xFF, "swizzle": (w[2] >> 24) & 0xFF, "l2_promotion": (w[2] >> 32) & 0xFF,
         "oob_fill": (w[2] >> 40) & 0xFF, "wide_mode": (w[2] >> 48) & 0xFF, "global_dim": list(w[3:8]),
         "global_strides": list(w[8:12]), "element_strides": [(w[13] >> (8 * i)) & 0xFF for i in range(5)]}
    if kind == 1:
        r["box_dim"] = [(w[12] >> (12 * i)) & 0xFFF for i in range(5)]
    else:
        def signed16(v):
            return v - 0x10000 if v & 0x8000 else v
        r["lower"] = [signed16((w[12] >> (16 * j)) & 0xFFFF) for j in range(3)]
        r["upper"] = [signed16((w[15] >> (16 * j)) & 0xFFFF) for j in range(3)]
        r["channels"], r["pixels"] = w[14] & 0xFFFFFFFF, w[14] >> 32
    return r


# ---- anywhere --------------------------------------------------------------------------------------------------

def test_names_and_values_are_cuda_cores():
    assert TensorMapDataType.UINT8 == 0 and TensorMapDataType.FLOAT32 == 7 and TensorMapDataType.TFLOAT32_FTZ == 12
    assert TensorMapDataType.UINT6X16_ALIGN16B == 15
    assert TensorMapInterleave.INTERLEAVE_32B == 2 and TensorMapSwizzle.SWIZZLE_128B == 3
    assert TensorMapSwizzle.SWIZZLE_128B_ATOM_64B == 6
    assert TensorMapL2Promotion.L2_256B == 3 and TensorMapOOBFill.NAN_REQUEST_ZERO_FMA == 1
    assert TensorMapIm2ColWideMode.W128 == 1
    for name in ("TensorMapDescriptor", "TensorMapDescriptorOptions", "TensorMapDataType", "TensorMapSwizzle"):
        assert name in cucore.__all__
    with pytest.raises(RuntimeError, match="cannot be instantiated directly"):
        TensorMapDescriptor()


def test_options_defaults_and_overrides():
    o = TensorMapDescriptorOptions(box_dim=(8, 32), data_type="float32")
    assert o.interleave == TensorMapInterleave.NONE and o.swizzle == TensorMapSwizzle.NONE
    assert o.l2_promotion == TensorMapL2Promotion.NONE and o.oob_fill == TensorMapOOBFill.NONE
    c = o._struct(2)
    assert c.struct_size == ctypes.sizeof(cucore.tensor_map.OptionsC)
    assert list(c.element_strides) == [0] * 5  # 0: the C default, 1
    o2 = o._with({"swizzle": "swizzle_64b", "element_strides": (2, 1)})
    c2 = o2._struct(2)
    assert c2.swizzle == 2 and list(c2.element_strides)[:2] == [1, 2], "row-major element strides, reversed"
    with pytest.raises(TypeError, match="unknown TensorMapDescriptorOptions field"):
        o._with({"boxdim": (1,)})
    with pytest.raises(cucore.InvalidArgumentError, match="swizzle"):
        TensorMapDescriptorOptions(swizzle=9)._struct(1)


@pytest.mark.parametrize("name,value", [("float32", TensorMapDataType.FLOAT32), ("bfloat16", TensorMapDataType.BFLOAT16),
                                        ("UINT4X16_ALIGN8B", TensorMapDataType.UINT4X16_ALIGN8B),
                                        (TensorMapDataType.INT64, TensorMapDataType.INT64), (3, TensorMapDataType.INT32)])
def test_data_types_by_name_member_or_value(name, value):
    from cucore.tensor_map import _data_type
    assert _data_type(name) == value


def test_the_kernel_argument_is_128_bytes():
    from cucore.launch import _describe
    a = _describe(TensorMapDescriptor, None, 128)
    assert a.size == 128 and a.code == "128s"


# ---- the fake driver: what reaches it --------------------------------------------------------------------------

@pytest.mark.gpu
def test_a_tiled_descriptor_reaches_the_driver_in_its_order(fake):
    s = fake.create_stream()
    buf = fake.allocate(4 * 32 * 64 * 4, stream=s)
    d = TensorMapDescriptor.from_tiled(buf, (4, 32, 64), box_dim=(2, 16, 32), data_type="float32",
                                       element_strides=(1, 2, 1), swizzle=TensorMapSwizzle.SWIZZLE_128B,
                                       l2_promotion="l2_256b", oob_fill=TensorMapOOBFill.NAN_REQUEST_ZERO_FMA)
    assert d.kind == "tiled" and d.tensor is buf and d.address == buf.handle and d.device == fake
    r = record(bytes(d))
    assert r["kind"] == 1 and r["address"] == buf.handle and r["rank"] == 3
    assert r["data_type"] == TensorMapDataType.FLOAT32
    assert r["global_dim"][:3] == [64, 32, 4], "innermost first"
    assert r["global_strides"][:2] == [256, 8192], "C-contiguous by default"
    assert r["box_dim"][:3] == [32, 16, 2]
    assert r["element_strides"][:3] == [1, 2, 1]
    assert (r["swizzle"], r["l2_promotion"], r["oob_fill"]) == (3, 3, 1)
    assert d._kernel_arg() == bytes(d)
    # Explicit (padded) strides, row-major, the innermost the element size.
    e = TensorMapDescriptor.from_tiled(buf, (4, 32, 60), strides=(8192, 256, 4), box_dim=(1, 8, 8),
                                       data_type="float32")
    assert record(bytes(e))["global_strides"][:2] == [256, 8192]
    raw = TensorMapDescriptor.from_tiled(buf.handle + 256, (8, 16), box_dim=(8, 8), data_type=TensorMapDataType.UINT16)
    assert raw.tensor is None and raw.device is None and record(bytes(raw))["address"] == buf.handle + 256
    for x in (d, e, raw):
        x.close()
    buf.close(s)


@pytest.mark.gpu
def test_each_rule_is_refused_naming_it(fake):
    s = fake.create_stream()
    buf = fake.allocate(1 << 16, stream=s)
    f32 = {"data_type": "float32"}
    cases = [
        (dict(shape=(32, 64), box_dim=(8, 300), **f32), r"boxDim\[i\] must be in 1..256"),
        (dict(shape=(32, 64), box_dim=(8, 6), **f32), "boxDim\\[0\\]\\*elementSize must be a multiple of 16 bytes"),
        (dict(shape=(32, 64), strides=(264, 4), box_dim=(8, 8), **f32), "globalStrides\\[i\\] must be a multiple of 16"),
        (dict(shape=(32, 64), box_dim=(8, 16), swizzle="swizzle_32b", **f32),
         "the inner box dimension must be <= the swizzle span"),
        (dict(shape=(32, 64), box_dim=(8, 8), element_strides=(9, 1), **f32), "elementStrides in 1..8"),
        (dict(shape=(32, 64), box_dim=(8, 8), data_type="int32", oob_fill="nan_request_zero_fma"),
         "OOB NaN fill only for float types"),
        (dict(shape=(32, 64), box_dim=(8, 8), interleave="interleave_16b", **f32),
         "the rank must be at least 3 when interleave is not NONE"),
        (dict(shape=(1,) * 6, box_dim=(1,) * 6, **f32), "the rank must be in 1..5"),
        (dict(shape=(8, 8, 16), box_dim=(8, 8, 16), data_type="float16", interleave="interleave_32b",
              swizzle="swizzle_64b"), "interleave 32B requires swizzle 32B"),
    ]
    for kw, rule in cases:
        with pytest.raises(cucore.InvalidArgumentError, match=rule):
            TensorMapDescriptor.from_tiled(buf, **kw)
    with pytest.raises(cucore.InvalidArgumentError, match="global address must be 16-byte aligned"):
        TensorMapDescriptor.from_tiled(buf.handle + 8, (8, 8), box_dim=(8, 8), **f32)
    with pytest.raises(cucore.InvalidArgumentError, match="the tensor must lie within the buffer"):
        TensorMapDescriptor.from_tiled(buf, (512, 64), box_dim=(8, 8), **f32)
    with pytest.raises(cucore.InvalidArgumentError, match="data_type is required"):
        TensorMapDescriptor.from_tiled(buf, (8, 8), box_dim=(8, 8))
    with pytest.raises(cucore.InvalidArgumentError, match="box_dim must have 2 elements"):
        TensorMapDescriptor.from_tiled(buf, (8, 8), box_dim=(8,), **f32)
    with pytest.raises(cucore.InvalidArgumentError, match="innermost dimension must be contiguous"):
        TensorMapDescriptor.from_tiled(buf, (8, 8), strides=(64, 8), box_dim=(8, 8), **f32)
    with pytest.raises(TypeError, match="Buffer or an int device address"):
        TensorMapDescriptor.from_tiled("memory", (8, 8), box_dim=(8, 8), **f32)
    buf.close(s)


@pytest.mark.gpu
def test_im2col_and_im2col_wide(fake):
    s = fake.create_stream()
    buf = fake.allocate(1 << 16, stream=s)
    nhwc = (2, 16, 16, 64)  # N, H, W, C of halves
    d = TensorMapDescriptor.from_im2col(buf, nhwc, pixel_box_lower_corner=(-1, -1), pixel_box_upper_corner=(-1, 1),
                                        channels_per_pixel=64, pixels_per_column=128, data_type="float16",
                                        swizzle="swizzle_128b")
    r = record(bytes(d))
    assert d.kind == "im2col" and r["kind"] == 2 and r["rank"] == 4 and r["global_dim"][:4] == [64, 16, 16, 2]
    assert r["lower"][:2] == [-1, -1] and r["upper"][:2] == [-1, 1]
    assert (r["channels"], r["pixels"]) == (64, 128)
    with pytest.raises(cucore.InvalidArgumentError, match=r"pixel box corner offsets must be in \[-128, 127\]"):
        TensorMapDescriptor.from_im2col(buf, nhwc, pixel_box_lower_corner=(-200, 0), pixel_box_upper_corner=(0, 0),
                                        channels_per_pixel=64, pixels_per_column=16, data_type="float16")
    with pytest.raises(cucore.InvalidArgumentError, match="pixelsPerColumn must be in 1..1024"):
        TensorMapDescriptor.from_im2col(buf, nhwc, pixel_box_lower_corner=(0, 0), pixel_box_upper_corner=(0, 0),
                                        channels_per_pixel=64, pixels_per_column=2048, data_type="float16")
    with pytest.raises(cucore.InvalidArgumentError, match="rank - 2"):
        TensorMapDescriptor.from_im2col(buf, nhwc, pixel_box_lower_corner=(0,), pixel_box_upper_corner=(0, 0),
                                        channels_per_pixel=64, pixels_per_column=16, data_type="float16")
    w = TensorMapDescriptor.from_im2col_wide(buf, nhwc, pixel_box_lower_corner_width=-2, pixel_box_upper_corner_width=1,
                                             channels_per_pixel=64, pixels_per_column=0,
                                             mode=TensorMapIm2ColWideMode.W128, data_type="float16",
                                             swizzle="swizzle_128b")
    rw = record(bytes(w))
    assert w.kind == "im2col_wide" and rw["kind"] == 3 and rw["wide_mode"] == 1
    assert rw["lower"][0] == -2 and rw["upper"][0] == 1
    with pytest.raises(cucore.InvalidArgumentError, match="an im2col-wide descriptor's swizzle must be"):
        TensorMapDescriptor.from_im2col_wide(buf, nhwc, pixel_box_lower_corner_width=0, pixel_box_upper_corner_width=0,
                                             channels_per_pixel=64, pixels_per_column=16, data_type="float16")
    d.close()
    w.close()
    buf.close(s)


@pytest.mark.gpu
def test_replace_address_and_the_buffer_held(fake):
    s = fake.create_stream()
    first, second = fake.allocate(4096, stream=s), fake.allocate(4096, stream=s)
    d = TensorMapDescriptor.from_tiled(first, (16, 64), box_dim=(8, 8), data_type="float32")
    second_address = second.handle
    d.replace_address(second)
    assert d.address == second_address and record(bytes(d))["address"] == second_address and d.tensor is second
    with pytest.raises(cucore.InvalidArgumentError, match="global address must be 16-byte aligned"):
        d.replace_address(second_address + 8)
    assert d.address == second_address
    # The descriptor holds the memory: closing the Buffer leaves it (the fake checks every address it reads).
    base = cucore.live_object_count(cucore.ObjectType.TENSOR_MAP_DESCRIPTOR)
    first.close(s)
    second.close(s)
    s.sync()
    assert record(d._kernel_arg())["address"] == second_address
    d.close()
    with pytest.raises(cucore.InvalidHandleError):
        d._kernel_arg()
    with pytest.raises(cucore.InvalidHandleError):
        d.replace_address(0)
    gc.collect()
    assert cucore.live_object_count(cucore.ObjectType.TENSOR_MAP_DESCRIPTOR) == base - 1


@pytest.mark.gpu
def test_launch_packs_the_descriptor_by_value(fake):
    code = cucore.ObjectCode.from_cubin(fake_image("kernel tma 128,4,8"))
    k = code.get_kernel("tma")
    s = fake.create_stream()
    buf = fake.allocate(4096, stream=s)
    d = TensorMapDescriptor.from_tiled(buf, (16, 64), box_dim=(8, 8), data_type="float32")
    cucore.launch(s, cucore.LaunchConfig(), k, d, 7, buf)
    args = last_args()
    assert args[0] == bytes(d) and len(args[0]) == 128
    assert args[1] == struct.pack("<i", 7) and args[2] == struct.pack("<Q", buf.handle)
    d.replace_address(buf.handle + 1024)
    cucore.launch(s, cucore.LaunchConfig(), k, d, 8, buf)
    assert record(last_args()[0])["address"] == buf.handle + 1024, "the bytes of now, not of the first launch"
    d.close()
    with pytest.raises(cucore.InvalidHandleError):
        cucore.launch(s, cucore.LaunchConfig(), k, d, 7, buf)
    buf.close(s)


# ---- a real GPU: the bulk tensor copy ------------------------------------------------------------------------

TMA_KERNEL = r"""
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

// One 32 x 8 float box at (x, y) into shared memory with one bulk tensor copy (an mbarrier counts its bytes),
// then out; status: 1 once the copy completed, 2 if not within 5 s.
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
"""

H, W = 50, 100  # the tensor: 50 rows of 100 floats


@pytest.fixture
def tma(real_gpu):
    cc = real_gpu.compute_capability
    if cc.major < 9:
        pytest.skip(f"TensorMap descriptors (TMA) need compute capability 9.0; device 0 is {cc.major}.{cc.minor}")
    return real_gpu


def _source(sign):
    return [sign * float(y * 1000 + x + 1) for y in range(H) for x in range(W)]


def _upload(dev, s, values):
    buf = dev.allocate(len(values) * 4, stream=s)
    buf.copy_from_host(struct.pack(f"<{len(values)}f", *values), stream=s)
    return buf


def _load(dev, s, k, d, x, y):
    out = dev.allocate(256 * 4, stream=s)
    status = dev.allocate(4, stream=s)
    status.fill(0, stream=s)
    cucore.launch(s, cucore.LaunchConfig(grid=1, block=128), k, d, x, y, out, status)
    assert struct.unpack("<I", status.to_bytes(stream=s))[0] == 1, "the bulk tensor copy did not complete"
    return struct.unpack("<256f", out.to_bytes(stream=s))


def _check(box, x0, y0, sign, nan_fill=False):
    for j in range(8):
        for i in range(32):
            x, y, got = x0 + i, y0 + j, box[j * 32 + i]
            if 0 <= x < W and 0 <= y < H:
                assert got == sign * float(y * 1000 + x + 1), (x, y, got)
            elif nan_fill:
                assert math.isnan(got), (x, y, got)
            else:
                assert got == 0.0, (x, y, got)


@pytest.mark.gpu
def test_a_kernel_loads_boxes_with_the_bulk_tensor_copy(tma):
    dev = tma
    s = dev.create_stream()
    k = real_kernel(TMA_KERNEL, "load_tile")
    first, second = _upload(dev, s, _source(1.0)), _upload(dev, s, _source(-1.0))
    d = TensorMapDescriptor.from_tiled(first, (H, W), box_dim=(8, 32), data_type="float32")
    _check(_load(dev, s, k, d, 4, 3), 4, 3, 1.0)
    _check(_load(dev, s, k, d, 80, 46), 80, 46, 1.0)   # right and bottom edges: zero outside
    _check(_load(dev, s, k, d, -8, -3), -8, -3, 1.0)   # negative coordinates
    first.close(s)                                      # the descriptor holds the memory
    _check(_load(dev, s, k, d, 40, 20), 40, 20, 1.0)
    d.replace_address(second)
    _check(_load(dev, s, k, d, 88, 44), 88, 44, -1.0)
    nan = TensorMapDescriptor.from_tiled(second, (H, W), box_dim=(8, 32), data_type="float32",
                                         oob_fill=TensorMapOOBFill.NAN_REQUEST_ZERO_FMA)
    _check(_load(dev, s, k, nan, 88, 45), 88, 45, -1.0, nan_fill=True)
    s.sync()
    d.close()
    nan.close()
