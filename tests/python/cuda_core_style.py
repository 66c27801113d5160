"""What the cuda.core-style scenarios (test_cuda_core_style_*.py) share: only cuda.core's public API, through
the package they are given (`core`: cucore, or cuda.core where it is importable), to compile kernels as
cuda.core's documentation does, move bytes through page-locked host memory, and skip device code under the
fake driver."""
import ctypes

import pytest

from conftest import FAKE_DRIVER


def needs_real_gpu(what="runs device code"):
    """Skip under the fake driver of test_fake_driver.py, which runs no NVRTC-compiled code."""
    if FAKE_DRIVER:
        pytest.skip(f"{what}: needs a real GPU (this is the fake driver)")


def compile_cubin(core, dev, source, name_expressions=()):
    """`source` (CUDA C++) compiled for `dev` into an ObjectCode, as cuda.core's documentation does it."""
    needs_real_gpu()
    options = core.ProgramOptions(arch=f"sm_{dev.arch}")
    return core.Program(source, "c++", options=options).compile("cubin", name_expressions=name_expressions)


def to_device(core, dev, stream, data):
    """Device memory holding `data` (bytes), copied there from page-locked host memory."""
    host = core.LegacyPinnedMemoryResource().allocate(len(data))
    ctypes.memmove(int(host.handle), data, len(data))
    buf = dev.allocate(len(data), stream=stream)
    buf.copy_from(host, stream=stream)
    stream.sync()
    host.close()
    return buf


def read_bytes(core, buf, stream, size=None):
    """The first `size` bytes (default: all) of device buffer `buf`, through page-locked host memory."""
    size = buf.size if size is None else size
    host = core.LegacyPinnedMemoryResource().allocate(buf.size)
    host.copy_from(buf, stream=stream)
    stream.sync()
    data = ctypes.string_at(int(host.handle), size)
    host.close()
    return data


def import_cupy():
    """CuPy with a usable CUDA device, or a skip saying what is missing."""
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            pytest.skip("CuPy sees no CUDA device")
    except Exception as e:  # noqa: BLE001 - CuPy without a usable CUDA runtime
        pytest.skip(f"CuPy cannot use CUDA: {e}")
    return cupy


def import_torch():
    """PyTorch with a usable CUDA device, or a skip saying what is missing."""
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    return torch
