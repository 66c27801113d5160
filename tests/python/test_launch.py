"""LaunchConfig and launch(): configuration checks anywhere; the argument packer byte for byte against the
fake driver (tests/fake_driver records every launch); real kernels on a GPU (saxpy, a reduction, structs by
value, CuPy/PyTorch arrays, cooperative and cluster launches)."""
import ctypes
import enum
import os
import struct

import pytest

import cucore
from conftest import FAKE_DRIVER

# ---- helpers shared with test_kernel.py / test_object_code.py ------------------------------------------------


class FakeLaunch(ctypes.Structure):
    """The fake driver's last launch (LastLaunch in tests/fake_driver/shared_library.cpp)."""
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3), ("shared_memory_bytes", ctypes.c_uint),
                ("stream", ctypes.c_void_p), ("kernel", ctypes.c_void_p), ("num_attrs", ctypes.c_uint),
                ("attr_ids", ctypes.c_int * 8), ("attr_values", (ctypes.c_int * 3) * 8),
                ("nparams", ctypes.c_size_t), ("sizes", ctypes.c_size_t * 32),
                ("args", (ctypes.c_ubyte * 256) * 32), ("count", ctypes.c_ulonglong)]


def fake_dll():
    dll = ctypes.CDLL(os.environ["CUCORE_CUDA_DRIVER_PATH"])
    dll.fake_cuda_last_launch.restype = ctypes.POINTER(FakeLaunch)
    dll.fake_cuda_live_libraries.restype = ctypes.c_int
    return dll


def last_launch():
    return fake_dll().fake_cuda_last_launch().contents


def last_args():
    L = last_launch()
    return [bytes(L.args[i])[:L.sizes[i]] for i in range(L.nparams)]


def fake_image(*lines):
    """A fake driver image (fake::image): NUL-terminated text listing kernels (parameter sizes) and globals."""
    return ("FAKECUBIN\n" + "\n".join(lines) + "\n").encode() + b"\0"


@pytest.fixture
def fake(gpu):
    """Device 0 of the fake driver (skips elsewhere: test_fake_driver.py runs these)."""
    if not FAKE_DRIVER:
        pytest.skip("runs against the fake driver (test_fake_driver.py reruns the gpu tests there)")
    return gpu


@pytest.fixture
def real_gpu(gpu):
    """Device 0 of a real GPU (the fake driver cannot run device code)."""
    if FAKE_DRIVER:
        pytest.skip("needs a real GPU to run device code (this is the fake driver)")
    return gpu


def toolkit_includes():
    """The CUDA toolkit's include directories for cooperative_groups.h and the CCCL headers it includes
    (NVRTC bundles neither), or skip."""
    roots = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH")] + ["/usr/local/cuda", "/usr/local/cuda-13.0"]
    for root in filter(None, roots):
        include = os.path.join(root, "include")
        if not os.path.exists(os.path.join(include, "cooperative_groups.h")):
            continue
        if os.path.exists(os.path.join(include, "cccl", "cuda", "std", "type_traits")):
            return [include, os.path.join(include, "cccl")]
        if os.path.exists(os.path.join(include, "cuda", "std", "type_traits")):
            return [include]
    pytest.skip("cooperative_groups.h and CCCL (the CUDA toolkit's headers) not found; set CUDA_HOME")


def real_kernel(source, name, name_expressions=(), options=None, dev=None, include_path=()):
    dev = dev or cucore.Device()
    opts = options or cucore.ProgramOptions(arch=f"sm_{dev.compute_capability.major}{dev.compute_capability.minor}",
                                            std="c++17", include_path=list(include_path))
    code = cucore.Program(source, "c++", opts).compile("cubin", name_expressions=name_expressions)
    return code.get_kernel(name)


# ---- LaunchConfig ----------------------------------------------------------------------------------------------

def test_launch_config_normalises_dimensions():
    c = cucore.LaunchConfig(grid=4, block=(32, 2))
    assert c.grid == (4, 1, 1) and c.block == (32, 2, 1) and c.cluster is None and c.shmem_size == 0
    assert c._struct.grid[:] == [4, 1, 1] and c._struct.block[:] == [32, 2, 1] and c._struct.flags == 0
    d = cucore.LaunchConfig(grid=(2, 3, 4), cluster=2, block=64, shmem_size=1024, cooperative_launch=True,
                            programmatic_stream_serialization=True, priority=-1)
    s = d._struct
    assert s.cluster[:] == [2, 1, 1] and s.shared_memory_bytes == 1024 and s.priority == -1
    assert s.flags == 1 | 2 | 4
    assert cucore.LaunchConfig().grid == (1, 1, 1)
    assert cucore.LaunchConfig(grid=2, block=3) == cucore.LaunchConfig(grid=(2,), block=(3, 1, 1))


@pytest.mark.parametrize("kwargs, exc", [
    ({"grid": 0}, ValueError), ({"grid": (1, 2, 3, 4)}, ValueError), ({"grid": ()}, ValueError),
    ({"block": -1}, ValueError), ({"block": 2**32}, ValueError), ({"grid": 1.5}, TypeError),
    ({"block": "32"}, TypeError), ({"grid": (1, True)}, TypeError), ({"shmem_size": -1}, ValueError),
    ({"cooperative_launch": 1}, TypeError), ({"priority": 2**31}, ValueError), ({"cluster": [2]}, TypeError),
])
def test_launch_config_rejects(kwargs, exc):
    with pytest.raises(exc):
        cucore.LaunchConfig(**kwargs)


def test_launch_config_changes_rebuild_the_struct():
    c = cucore.LaunchConfig(grid=1, block=1)
    c.block = 128
    assert c.block == (128, 1, 1) and c._struct.block[0] == 128
    with pytest.raises(ValueError):
        c.grid = 0
    with pytest.raises(AttributeError):
        c.nonsense = 1
    assert cucore.LaunchConfig(is_cooperative=True).cooperative_launch is True


def test_launch_rejects_wrong_operands(lib):
    with pytest.raises(TypeError, match="LaunchConfig"):
        cucore.launch(None, object(), None)
    with pytest.raises(TypeError, match="Kernel"):
        cucore.launch(None, cucore.LaunchConfig(), object())


# ---- the packer against the fake driver ---------------------------------------------------------------------

@pytest.fixture
def fake_kernels(fake):
    """A fake module: `sized` has int/float parameters of 1, 2, 4, 8 bytes; `any8` eight 8-byte ones."""
    code = cucore.ObjectCode.from_cubin(fake_image(
        "kernel empty", "kernel sized 1,2,4,8,4,8,2", "kernel one8 8", "kernel one4 4", "kernel s64 64",
        "kernel s24 24", "kernel p16 " + ",".join(["8"] * 16), "kernel c16 16", "kernel c8 8", "kernel b1 1"))
    s = fake.create_stream()
    return code, s


@pytest.mark.gpu
def test_launch_without_arguments_records_the_config(fake_kernels):
    code, s = fake_kernels
    k = code.get_kernel("empty")
    before = last_launch().count
    cucore.launch(s, cucore.LaunchConfig(grid=(3, 2), block=(64, 2), shmem_size=512), k)
    L = last_launch()
    assert L.count == before + 1
    assert L.grid[:] == [3, 2, 1] and L.block[:] == [64, 2, 1] and L.shared_memory_bytes == 512
    assert L.stream == s.handle and L.num_attrs == 0 and L.nparams == 0


@pytest.mark.gpu
def test_launch_attributes_reach_the_driver(fake_kernels):
    code, s = fake_kernels
    k = code.get_kernel("empty")
    cucore.launch(s, cucore.LaunchConfig(grid=2, cluster=(2, 1, 1), block=32, cooperative_launch=True,
                                         programmatic_stream_serialization=True, priority=-3), k)
    L = last_launch()
    assert L.grid[:] == [4, 1, 1]  # grid counts clusters
    attrs = {L.attr_ids[i]: list(L.attr_values[i]) for i in range(L.num_attrs)}
    assert attrs == {4: [2, 1, 1], 2: [1, 0, 0], 6: [1, 0, 0], 8: [-3, 0, 0]}


@pytest.mark.gpu
def test_python_numbers_take_the_parameter_size(fake_kernels):
    code, s = fake_kernels
    k = code.get_kernel("sized")
    assert [p.size for p in k.arguments_info] == [1, 2, 4, 8, 4, 8, 2]
    cfg = cucore.LaunchConfig()
    cucore.launch(s, cfg, k, -1, 300, -5, 2**40, 1.5, 2.25, 0.5)
    assert last_args() == [b"\xff", struct.pack("=h", 300), struct.pack("=i", -5), struct.pack("=q", 2**40),
                           struct.pack("=f", 1.5), struct.pack("=d", 2.25), struct.pack("=e", 0.5)]
    # unsigned values of the parameter's width are accepted (the same bits)
    cucore.launch(s, cfg, k, 255, 65535, 2**32 - 1, 2**64 - 1, 1.0, 1.0, 1.0)
    assert last_args()[:4] == [b"\xff", b"\xff\xff", b"\xff" * 4, b"\xff" * 8]
    # bools for wider parameters become ints of that size
    cucore.launch(s, cfg, k, True, False, True, True, 0.0, 0.0, 0.0)
    assert last_args()[:4] == [b"\x01", b"\x00\x00", struct.pack("=i", 1), struct.pack("=q", 1)]


@pytest.mark.parametrize("index, value", [(0, 256), (0, -129), (1, 65536), (2, 2**32), (2, -2**31 - 1),
                                          (3, 2**64), (3, -2**63 - 1), (4, 1e300), (6, 1e6)])
@pytest.mark.gpu
def test_python_numbers_that_do_not_fit_raise(fake_kernels, index, value):
    code, s = fake_kernels
    k = code.get_kernel("sized")
    args = [0, 0, 0, 0, 0.0, 0.0, 0.0]
    args[index] = value
    with pytest.raises(OverflowError, match=f"argument {index}"):
        cucore.launch(s, cucore.LaunchConfig(), k, *args)
    cucore.launch(s, cucore.LaunchConfig(), k, 1, 2, 3, 4, 5.0, 6.0, 7.0)  # the packer is still usable
    assert last_args()[2] == struct.pack("=i", 3)


@pytest.mark.gpu
def test_numpy_scalars_pack_their_own_bytes(fake_kernels):
    np = pytest.importorskip("numpy")
    code, s = fake_kernels
    cfg = cucore.LaunchConfig()
    one8, one4, c16, c8, b1 = (code.get_kernel(n) for n in ("one8", "one4", "c16", "c8", "b1"))
    cases = [(one8, np.int64(-2)), (one8, np.uint64(2**64 - 1)), (one8, np.float64(3.5)), (one4, np.int32(-7)),
             (one4, np.uint32(7)), (one4, np.float32(2.5)), (c16, np.complex128(1 + 2j)), (c8, np.complex64(3 - 4j)),
             (b1, np.bool_(True)), (b1, np.int8(-3)), (b1, np.uint8(200))]
    for kernel, value in cases:
        cucore.launch(s, cfg, kernel, value)
        assert last_args() == [value.tobytes()], (type(value), value)
    k = code.get_kernel("sized")
    cucore.launch(s, cfg, k, np.int8(1), np.int16(2), np.int32(3), np.int64(4), np.float32(5), np.float64(6),
                  np.float16(7))
    assert last_args() == [np.int8(1).tobytes(), np.int16(2).tobytes(), np.int32(3).tobytes(),
                           np.int64(4).tobytes(), np.float32(5).tobytes(), np.float64(6).tobytes(),
                           np.float16(7).tobytes()]


@pytest.mark.gpu
def test_ctypes_scalars_and_structures_by_value(fake_kernels):
    code, s = fake_kernels
    cfg = cucore.LaunchConfig()

    class S24(ctypes.Structure):
        _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_double), ("c", ctypes.c_float)]

    class S64(ctypes.Structure):
        _fields_ = [("v", ctypes.c_uint64 * 8)]

    cucore.launch(s, cfg, code.get_kernel("one4"), ctypes.c_int(-9))
    assert last_args() == [struct.pack("=i", -9)]
    cucore.launch(s, cfg, code.get_kernel("one8"), ctypes.c_double(0.125))
    assert last_args() == [struct.pack("=d", 0.125)]
    cucore.launch(s, cfg, code.get_kernel("one8"), ctypes.c_void_p(0x1234))
    assert last_args() == [struct.pack("=Q", 0x1234)]
    v = S24(1, 2.0, 3.0)
    cucore.launch(s, cfg, code.get_kernel("s24"), v)
    assert last_args() == [bytes(v)]
    big = S64((ctypes.c_uint64 * 8)(*range(8)))
    cucore.launch(s, cfg, code.get_kernel("s64"), big)
    assert last_args() == [bytes(big)]


@pytest.mark.gpu
def test_numpy_structured_scalar_by_value(fake_kernels):
    np = pytest.importorskip("numpy")
    code, s = fake_kernels
    dt = np.dtype([("a", np.int32), ("b", np.float64), ("c", np.float32)], align=True)
    value = np.zeros((), dtype=dt)[()]
    value["a"], value["b"], value["c"] = 5, 6.5, 7.5
    assert dt.itemsize == 24
    cucore.launch(s, cucore.LaunchConfig(), code.get_kernel("s24"), value)
    assert last_args() == [value.tobytes()]


@pytest.mark.gpu
def test_pointers_buffers_and_array_interfaces(fake_kernels, fake):
    code, s = fake_kernels
    k = code.get_kernel("one8")
    buf = fake.allocate(64, stream=s)
    cucore.launch(s, cucore.LaunchConfig(), k, buf)
    assert last_args() == [struct.pack("=Q", buf.handle)]

    class Cai:
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (0xABCD00, False), "version": 3}

    cucore.launch(s, cucore.LaunchConfig(), k, Cai())
    assert last_args() == [struct.pack("=Q", 0xABCD00)]

    class Ptr:
        def getPtr(self):
            return 0x5000

    cucore.launch(s, cucore.LaunchConfig(), k, Ptr())
    assert last_args() == [struct.pack("=Q", 0x5000)]

    class Flag(enum.IntEnum):
        ON = 7

    cucore.launch(s, cucore.LaunchConfig(), k, Flag.ON)
    assert last_args() == [struct.pack("=q", 7)]
    buf.close()
    with pytest.raises(cucore.InvalidHandleError, match="closed"):
        cucore.launch(s, cucore.LaunchConfig(), k, buf)


@pytest.mark.gpu
def test_complex_and_sixteen_arguments(fake_kernels):
    code, s = fake_kernels
    cucore.launch(s, cucore.LaunchConfig(), code.get_kernel("c16"), 1.5 - 2j)
    assert last_args() == [struct.pack("=dd", 1.5, -2.0)]
    cucore.launch(s, cucore.LaunchConfig(), code.get_kernel("c8"), 1.5 - 2j)
    assert last_args() == [struct.pack("=ff", 1.5, -2.0)]
    args = list(range(16))
    cucore.launch(s, cucore.LaunchConfig(), code.get_kernel("p16"), *args)
    assert last_args() == [struct.pack("=q", i) for i in args]


@pytest.mark.gpu
def test_unsupported_arguments_raise_type_error(fake_kernels):
    code, s = fake_kernels
    k = code.get_kernel("one8")
    for bad in ("text", b"bytes", [1], None, object()):
        with pytest.raises(TypeError, match=r"argument 0 of type"):
            cucore.launch(s, cucore.LaunchConfig(), k, bad)
    with pytest.raises(TypeError, match="argument 1 of type builtins.str"):
        cucore.launch(s, cucore.LaunchConfig(), code.get_kernel("sized"), 1, "x", 3, 4, 5.0, 6.0, 7.0)


@pytest.mark.gpu
def test_count_and_size_mismatches_come_from_libcucore(fake_kernels):
    code, s = fake_kernels
    with pytest.raises(cucore.InvalidArgumentError, match="arg_count"):
        cucore.launch(s, cucore.LaunchConfig(), code.get_kernel("one8"), 1, 2)
    with pytest.raises(cucore.InvalidArgumentError, match="arg_sizes"):
        cucore.launch(s, cucore.LaunchConfig(), code.get_kernel("s24"), 1)


@pytest.mark.gpu
def test_launch_into_foreign_stream_and_closed_objects(fake_kernels, fake):
    code, s = fake_kernels
    k = code.get_kernel("empty")

    class Foreign:
        def __cuda_stream__(self):
            return (0, s.handle)

    cucore.launch(Foreign(), cucore.LaunchConfig(), k)
    assert last_launch().stream == s.handle
    k.close()
    with pytest.raises(cucore.InvalidHandleError, match="Kernel is closed"):
        cucore.launch(s, cucore.LaunchConfig(), k)
    with pytest.raises(TypeError, match="stream"):
        cucore.launch(object(), cucore.LaunchConfig(), code.get_kernel("empty"))


@pytest.mark.gpu
def test_block_too_large_is_refused_before_the_driver(fake_kernels):
    code, s = fake_kernels
    k = code.get_kernel("empty")
    with pytest.raises(cucore.InvalidArgumentError, match="block"):
        cucore.launch(s, cucore.LaunchConfig(block=2048), k)
    with pytest.raises(cucore.InvalidArgumentError, match="block"):
        cucore.LaunchConfig(block=2048).validate(k)
    cucore.LaunchConfig(block=1024).validate(k)


@pytest.mark.gpu
def test_concurrent_launches_pack_their_own_arguments(fake_kernels):
    import threading
    code, s = fake_kernels
    k = code.get_kernel("one8")
    errors = []

    def work(value):
        try:
            for _ in range(200):
                cucore.launch(s, cucore.LaunchConfig(), k, value)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert 1 <= len(k._free) + sum(len(v) for v in k._packers.values()) <= 4


@pytest.mark.gpu
def test_launch_blocks_follow_the_stream_and_the_config(fake_kernels, fake):
    # Launches go through cucore_launch_block: blocks without arguments are kept per stream and config, packers
    # rewrite the stream and config when they change; every launch must reach the driver with its own.
    code, s = fake_kernels
    empty, one8 = code.get_kernel("empty"), code.get_kernel("one8")
    s2 = fake.create_stream()
    for stream in (s, s2, s):
        for grid in (1, 3):
            c = cucore.LaunchConfig(grid=grid, block=2)
            cucore.launch(stream, c, empty)
            L = last_launch()
            assert (L.stream, L.grid[0], L.block[0], L.nparams) == (stream.handle, grid, 2, 0)
            cucore.launch(stream, c, one8, grid * 10)
            L = last_launch()
            assert (L.stream, L.grid[0], L.block[0]) == (stream.handle, grid, 2)
            assert last_args() == [struct.pack("<q", grid * 10)]
    c = cucore.LaunchConfig(grid=2)
    cucore.launch(s, c, empty)
    c.grid = 5  # a new C struct: the block of the old one is not used
    cucore.launch(s, c, empty)
    assert last_launch().grid[0] == 5
    for i in range(70):  # configs made and dropped (their addresses come back); at most 64 blocks kept
        cucore.launch(s, cucore.LaunchConfig(grid=i + 1), empty)
        assert last_launch().grid[0] == i + 1
    assert len(empty._blocks0[s._hv]) <= 64
    del s2._hv  # a Stream made without its int handle: read once, then kept
    cucore.launch(s2, c, empty)
    assert last_launch().stream == s2.handle and s2._hv
    s2.close()
    with pytest.raises(cucore.InvalidHandleError, match="Stream is closed"):
        cucore.launch(s2, c, empty)
    with pytest.raises(cucore.InvalidHandleError, match="Stream is closed"):
        cucore.launch(s2, c, one8, 1)


@pytest.mark.gpu
def test_a_packer_refuses_other_argument_lists(fake_kernels, fake):
    # A kernel's last packer checks the argument types (and count) before packing: another list takes
    # another packer, and the errors are the library's or the converter's, never the packer's.
    code, s = fake_kernels
    k = code.get_kernel("one8")
    cucore.launch(s, cucore.LaunchConfig(), k, 1)
    with pytest.raises(cucore.InvalidArgumentError, match="arg_count"):
        cucore.launch(s, cucore.LaunchConfig(), k, 1, 2)
    with pytest.raises(cucore.InvalidArgumentError, match="arg_count"):
        cucore.launch(s, cucore.LaunchConfig(), k, 1, 2, 3)
    b = fake.allocate(64, stream=s)
    address = b.handle
    cucore.launch(s, cucore.LaunchConfig(), k, b)
    assert last_args() == [struct.pack("<Q", address)]
    b.close()
    with pytest.raises(cucore.InvalidHandleError, match="Buffer is closed"):
        cucore.launch(s, cucore.LaunchConfig(), k, b)
    cucore.launch(s, cucore.LaunchConfig(), k, 7)
    assert last_args() == [struct.pack("<q", 7)]
    cucore.launch(s, cucore.LaunchConfig(), k, 2.5)
    assert last_args() == [struct.pack("<d", 2.5)]


@pytest.mark.gpu
def test_alternating_argument_types_and_structured_dtypes(fake_kernels):
    np = pytest.importorskip("numpy")
    code, s = fake_kernels
    k = code.get_kernel("s24")
    d24 = np.dtype([("a", np.int32), ("b", np.float64), ("c", np.float32)], align=True)
    d8 = np.dtype([("a", np.int32), ("b", np.int32)])
    v24 = np.zeros((), dtype=d24)[()]
    v24["a"] = 3
    v8 = np.zeros((), dtype=d8)[()]
    cucore.launch(s, cucore.LaunchConfig(), k, v24)
    assert last_args() == [v24.tobytes()]
    with pytest.raises(cucore.InvalidArgumentError, match="arg_sizes"):  # 8 bytes, not the packer's 24
        cucore.launch(s, cucore.LaunchConfig(), k, v8)
    one8 = code.get_kernel("one8")
    for value in (1, 2.5, np.int64(3), 4, ctypes.c_int64(5)):
        cucore.launch(s, cucore.LaunchConfig(), one8, value)
        assert struct.unpack("=q" if not isinstance(value, float) else "=d", last_args()[0])[0] == \
            (value.value if isinstance(value, ctypes.c_int64) else value)


# ---- real kernels -------------------------------------------------------------------------------------------

SAXPY = r"""
extern "C" __global__ void saxpy(float a, const float *x, const float *y, float *out, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
struct Params { int n; float scale; double offset; };
extern "C" __global__ void by_value(Params p, double *out) {
    if (threadIdx.x == 0) { out[0] = p.n; out[1] = p.scale; out[2] = p.offset; }
}
extern "C" __global__ void reduce(const int *in, unsigned long long *sum, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(sum, (unsigned long long)in[i]);
}
"""


def _to_device(dev, s, array):
    buf = dev.allocate(max(array.nbytes, 1), stream=s)
    buf.copy_from_host(array, stream=s)
    return buf


@pytest.mark.gpu
def test_saxpy_matches_numpy(real_gpu):
    np = pytest.importorskip("numpy")
    dev = real_gpu
    s = dev.create_stream()
    k = real_kernel(SAXPY, "saxpy")
    n = 10000
    x = np.random.default_rng(1).random(n, dtype=np.float32)
    y = np.random.default_rng(2).random(n, dtype=np.float32)
    bx, by, bo = _to_device(dev, s, x), _to_device(dev, s, y), dev.allocate(n * 4, stream=s)
    cucore.launch(s, cucore.LaunchConfig(grid=(n + 255) // 256, block=256), k, 2.5, bx, by, bo, n)
    out = np.frombuffer(bo.to_bytes(stream=s), dtype=np.float32)
    np.testing.assert_allclose(out, np.float32(2.5) * x + y, rtol=1e-6)


@pytest.mark.gpu
def test_reduction(real_gpu):
    np = pytest.importorskip("numpy")
    dev = real_gpu
    s = dev.create_stream()
    k = real_kernel(SAXPY, "reduce")
    data = np.arange(100000, dtype=np.int32)
    bin_, bsum = _to_device(dev, s, data), dev.allocate(8, stream=s)
    bsum.fill(0, stream=s)
    cucore.launch(s, cucore.LaunchConfig(grid=(len(data) + 255) // 256, block=256), k, bin_, bsum, len(data))
    assert struct.unpack("<Q", bsum.to_bytes(stream=s))[0] == int(data.sum())


@pytest.mark.gpu
def test_struct_by_value_ctypes_and_numpy(real_gpu):
    np = pytest.importorskip("numpy")
    dev = real_gpu
    s = dev.create_stream()
    k = real_kernel(SAXPY, "by_value")

    class Params(ctypes.Structure):
        _fields_ = [("n", ctypes.c_int), ("scale", ctypes.c_float), ("offset", ctypes.c_double)]

    out = dev.allocate(24, stream=s)
    cucore.launch(s, cucore.LaunchConfig(block=32), k, Params(7, 1.5, -2.25), out)
    assert struct.unpack("<3d", out.to_bytes(stream=s)) == (7.0, 1.5, -2.25)
    dt = np.dtype([("n", np.int32), ("scale", np.float32), ("offset", np.float64)], align=True)
    v = np.zeros((), dtype=dt)[()]
    v["n"], v["scale"], v["offset"] = 9, 0.5, 4.0
    cucore.launch(s, cucore.LaunchConfig(block=32), k, v, out)
    assert struct.unpack("<3d", out.to_bytes(stream=s)) == (9.0, 0.5, 4.0)


@pytest.mark.gpu
def test_template_kernel_by_name_expression(real_gpu):
    dev = real_gpu
    s = dev.create_stream()
    src = r"""
    template <typename T> __global__ void fill(T *out, T value) { out[threadIdx.x] = value; }
    """
    k = real_kernel(src, "fill<int>", name_expressions=("fill<int>", "fill<double>"))
    out = dev.allocate(4 * 32, stream=s)
    cucore.launch(s, cucore.LaunchConfig(block=32), k, out, 41)
    assert struct.unpack("<32i", out.to_bytes(stream=s)) == (41,) * 32


@pytest.mark.gpu
@pytest.mark.parametrize("module", ["cupy", "torch"])
def test_foreign_arrays_as_arguments(real_gpu, module):
    lib = pytest.importorskip(module)
    dev = real_gpu
    s = dev.create_stream()
    k = real_kernel(SAXPY, "saxpy")
    n = 1000
    if module == "cupy":
        x = lib.arange(n, dtype=lib.float32)
        y = lib.ones(n, dtype=lib.float32)
        out = lib.zeros(n, dtype=lib.float32)
    else:
        x = lib.arange(n, dtype=lib.float32, device="cuda")
        y = lib.ones(n, dtype=lib.float32, device="cuda")
        out = lib.zeros(n, dtype=lib.float32, device="cuda")
        lib.cuda.synchronize()
    if module == "cupy":
        lib.cuda.Device().synchronize()
    cucore.launch(s, cucore.LaunchConfig(grid=(n + 127) // 128, block=128), k, 2.0, x, y, out, n)
    s.sync()
    expect = [2.0 * i + 1 for i in range(n)]
    got = out.get().tolist() if module == "cupy" else out.cpu().tolist()
    assert got == expect


@pytest.mark.gpu
def test_cooperative_launch_with_grid_sync(real_gpu):
    dev = real_gpu
    s = dev.create_stream()
    src = r"""
    #include <cooperative_groups.h>
    extern "C" __global__ void two_phase(int *data, int *out) {
        auto grid = cooperative_groups::this_grid();
        int i = grid.thread_rank();
        data[i] = i;
        grid.sync();
        int n = grid.size();
        out[i] = data[n - 1 - i];
    }
    """
    k = real_kernel(src, "two_phase", include_path=toolkit_includes())
    blocks = dev.properties.multiprocessor_count
    n = blocks * 64
    data, out = dev.allocate(4 * n, stream=s), dev.allocate(4 * n, stream=s)
    cucore.launch(s, cucore.LaunchConfig(grid=blocks, block=64, cooperative_launch=True), k, data, out)
    assert list(struct.unpack(f"<{n}i", out.to_bytes(stream=s))) == list(range(n - 1, -1, -1))
    with pytest.raises(cucore.InvalidArgumentError, match="cooperative"):
        cucore.launch(s, cucore.LaunchConfig(grid=blocks * 1000, block=1024, cooperative_launch=True), k, data, out)


@pytest.mark.gpu
def test_cluster_launch(real_gpu):
    dev = real_gpu
    if dev.compute_capability.major < 9:
        pytest.skip(f"cluster launches need compute capability 9.0 (device has {dev.compute_capability})")
    s = dev.create_stream()
    src = r"""
    #include <cooperative_groups.h>
    extern "C" __global__ void cluster_rank(unsigned *out) {
        auto cluster = cooperative_groups::this_cluster();
        if (threadIdx.x == 0) out[blockIdx.x] = cluster.block_rank() * 100 + cluster.num_blocks();
    }
    """
    k = real_kernel(src, "cluster_rank", include_path=toolkit_includes())
    out = dev.allocate(4 * 8, stream=s)
    cucore.launch(s, cucore.LaunchConfig(grid=4, cluster=2, block=32), k, out)
    assert struct.unpack("<8I", out.to_bytes(stream=s)) == tuple((b % 2) * 100 + 2 for b in range(8))
