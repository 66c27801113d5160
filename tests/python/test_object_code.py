"""ObjectCode: factories from bytes and files (anywhere); loading, kernels and module globals through the
fake driver; globals on a real GPU."""
import struct

import pytest

import cucore
from test_launch import fake, fake_dll, fake_image, real_gpu  # noqa: F401 (fixtures)


def test_factories_keep_bytes_kind_and_name(lib, tmp_path):
    for kind in ("cubin", "ptx", "ltoir", "fatbin", "object", "library"):
        o = getattr(cucore.ObjectCode, f"from_{kind}")(b"some bytes", name=f"n-{kind}")
        assert o.code == b"some bytes" and o.code_type == kind and o.name == f"n-{kind}"
        assert o.symbol_mapping == {}
    p = tmp_path / "k.cubin"
    p.write_bytes(b"\x7fELF file")
    for arg in (p, str(p)):
        o = cucore.ObjectCode.from_cubin(arg)
        assert o.code == b"\x7fELF file" and o.code_type == "cubin"


def test_factories_reject(lib, tmp_path):
    with pytest.raises(TypeError):
        cucore.ObjectCode.from_cubin(123)
    with pytest.raises(cucore.InvalidArgumentError):
        cucore.ObjectCode.from_cubin(b"")
    with pytest.raises(cucore.InvalidArgumentError, match="missing"):
        cucore.ObjectCode.from_cubin(str(tmp_path / "missing.cubin"))
    with pytest.raises(TypeError):
        cucore.ObjectCode()
    with pytest.raises(TypeError):
        cucore.ObjectCode.from_cubin(b"x", name=5)


@pytest.mark.gpu
def test_load_kernels_and_unload(fake):
    dll = fake_dll()
    before = dll.fake_cuda_live_libraries()
    code = cucore.ObjectCode.from_cubin(fake_image("kernel a 8", "kernel b", "global table 16"))
    code.load()
    assert dll.fake_cuda_live_libraries() == before + 1
    assert code.kernel_count == 2 and code.handle != 0
    k = code.get_kernel("a")
    assert k.name == "a" and k.num_arguments == 1
    with pytest.raises(cucore.InvalidArgumentError, match="no kernel named 'zz'"):
        code.get_kernel("zz")
    code.close()
    assert dll.fake_cuda_live_libraries() == before + 1  # the kernel keeps it loaded
    k.close()
    assert dll.fake_cuda_live_libraries() == before


@pytest.mark.gpu
def test_bad_image_fails_to_load(fake):
    code = cucore.ObjectCode.from_cubin(b"\x7fELF not for the fake")
    with pytest.raises(cucore.DriverError):
        code.load()
    with pytest.raises(cucore.InvalidStateError):
        cucore.ObjectCode.from_ltoir(b"lto").load()


@pytest.mark.gpu
def test_globals_read_and_write(fake):
    code = cucore.ObjectCode.from_cubin(fake_image("kernel a", "global table 16"))
    addr, size = code.get_global("table")
    assert addr != 0 and size == 16
    assert code.read_global("table") == bytes(16)
    code.write_global("table", struct.pack("<4i", 1, 2, 3, 4))
    assert code.read_global("table") == struct.pack("<4i", 1, 2, 3, 4)
    np = pytest.importorskip("numpy")
    assert code.read_global("table", np.int32).tolist() == [1, 2, 3, 4]
    with pytest.raises(cucore.InvalidArgumentError):
        code.write_global("table", b"short")
    with pytest.raises(cucore.InvalidArgumentError, match="no global"):
        code.get_global("nope")


@pytest.mark.gpu
def test_module_globals_on_a_gpu(real_gpu):
    dev = real_gpu
    src = r"""
    __device__ int table[4];
    __constant__ float factor;
    extern "C" __global__ void use(int *out) { out[threadIdx.x] = table[threadIdx.x] * (int)factor; }
    """
    cc = dev.compute_capability
    # Namespace-scope variables keep their plain names (no name expressions needed).
    code = cucore.Program(src, "c++", cucore.ProgramOptions(arch=f"sm_{cc.major}{cc.minor}")).compile("cubin")
    code.write_global("table", struct.pack("<4i", 1, 2, 3, 4))
    code.write_global("factor", struct.pack("<f", 3.0))
    assert code.read_global("table") == struct.pack("<4i", 1, 2, 3, 4)
    s = dev.create_stream()
    out = dev.allocate(16, stream=s)
    cucore.launch(s, cucore.LaunchConfig(block=4), code.get_kernel("use"), out)
    assert struct.unpack("<4i", out.to_bytes(stream=s)) == (3, 6, 9, 12)
