"""Shared fixtures for the Python binding's tests.

- The package is imported from bindings/python of this checkout (set CUCORE_TEST_INSTALLED=1 to test an
  installed copy instead); libcucore is found as the package finds it (CUCORE_LIBRARY, ...).
- Tests marked `gpu` (or using the `gpu` fixture) need a CUDA driver and a device. Without them they
  skip with the reason printed (-rs); they never fail for that. test_fake_driver.py reruns them against
  an in-memory driver (tests/fake_driver) on machines without a GPU; CUCORE_TEST_FAKE_DRIVER=1 marks that run.
"""
import ctypes
import importlib
import os
import pathlib
import sys

import pytest

TESTS_DIR = pathlib.Path(__file__).resolve().parent
REPO = TESTS_DIR.parent.parent
if os.environ.get("CUCORE_TEST_INSTALLED") != "1":
    sys.path.insert(0, str(REPO / "bindings" / "python"))

import cucore  # noqa: E402

FAKE_DRIVER = os.environ.get("CUCORE_TEST_FAKE_DRIVER") == "1"

_gpu_state = None


def gpu_state():
    """(device count, None) when a driver and a device are usable, else (0, reason)."""
    global _gpu_state
    if _gpu_state is None:
        try:
            n = cucore.Device.count()
            _gpu_state = (n, None) if n > 0 else (0, "a CUDA driver is installed but no device is visible")
        except cucore.LibraryNotFoundError as e:
            _gpu_state = (0, "libcucore could not be loaded: " + "; ".join(e.searched))
        except cucore.CUDAError as e:
            _gpu_state = (0, f"no usable CUDA driver: {e}")
    return _gpu_state


def library_state():
    """None when libcucore loads, else the reason."""
    try:
        cucore.library_path()
        return None
    except cucore.LibraryNotFoundError as e:
        return "libcucore could not be loaded: " + "; ".join(e.searched)


def pytest_sessionstart(session):
    # A library named explicitly (as CTest and the GPU suite do) must load: a
    # broken build would otherwise turn every test into a skip and pass.
    if os.environ.get("CUCORE_LIBRARY"):
        reason = library_state()
        if reason:
            pytest.exit(f"CUCORE_LIBRARY is set but {reason}", returncode=3)


def pytest_collection_modifyitems(config, items):
    count, reason = None, None
    for item in items:
        if "gpu" in item.keywords or "gpu" in getattr(item, "fixturenames", ()):
            if count is None:
                count, reason = gpu_state()
            if not count:
                item.add_marker(pytest.mark.skip(reason=f"needs a GPU: {reason}"))


def pytest_report_header(config):
    lib = library_state()
    count, reason = gpu_state()
    lines = [f"cucore binding {cucore.__version__} from {pathlib.Path(cucore.__file__).parent}",
             f"libcucore: {lib or cucore.library_path()}"]
    lines.append(f"GPU: {count} device(s){' (fake driver)' if FAKE_DRIVER else ''}" if count
                 else f"GPU: none ({reason})")
    return lines


def require_module(name, why):
    """Import a tool module (mypy, scikit_build_core...), or skip without it: the GPU server runs these tests
    with its own python3. Under CTest (CUCORE_TEST_REQUIRE_TOOLS=1, the project's venv of scripts/setup.sh)
    a missing tool is a failure, never a skip."""
    if os.environ.get("CUCORE_TEST_REQUIRE_TOOLS") == "1":
        try:
            return importlib.import_module(name)
        except ImportError as e:
            pytest.fail(f"{name} ({why}) is missing from {sys.executable}: run scripts/setup.sh ({e})")
    return pytest.importorskip(name, reason=f"{name} ({why}) is not installed in {sys.executable}")


@pytest.fixture
def lib():
    """The loaded library (skips when libcucore itself is missing)."""
    reason = library_state()
    if reason:
        pytest.skip(reason)
    return cucore._lib


@pytest.fixture
def gpu():
    """Device 0, current on this thread (skips with the reason when there is no GPU)."""
    count, reason = gpu_state()
    if not count:
        pytest.skip(f"needs a GPU: {reason}")
    dev = cucore.Device(0)
    dev.set_current()
    return dev


@pytest.fixture
def fake_driver():
    return FAKE_DRIVER


class RawDriver:
    """The CUDA driver called directly through ctypes (libcuda.so.1, or the fake driver of this run)."""

    def __init__(self):
        path = os.environ.get("CUCORE_CUDA_DRIVER_PATH") or "libcuda.so.1"
        self.path = path
        self.dll = ctypes.CDLL(path)
        d = self.dll
        V, I, U = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint
        self._sig("cuInit", [U])
        self._sig("cuDriverGetVersion", [ctypes.POINTER(I)])
        self._sig("cuDeviceGet", [ctypes.POINTER(I), I])
        self._sig("cuDeviceGetCount", [ctypes.POINTER(I)])
        self._sig("cuDeviceGetName", [ctypes.c_char_p, I, I])
        self._sig("cuDeviceGetAttribute", [ctypes.POINTER(I), I, I])
        self._sig("cuDeviceTotalMem_v2", [ctypes.POINTER(ctypes.c_size_t), I])
        self._sig("cuDevicePrimaryCtxRetain", [ctypes.POINTER(V), I])
        self._sig("cuDevicePrimaryCtxRelease_v2", [I])
        self._sig("cuCtxGetCurrent", [ctypes.POINTER(V)])
        self._sig("cuCtxSetCurrent", [V])
        self._sig("cuStreamCreate", [ctypes.POINTER(V), U])
        self._sig("cuStreamDestroy_v2", [V])
        self._sig("cuStreamSynchronize", [V])
        self._sig("cuStreamQuery", [V])
        self._sig("cuEventCreate", [ctypes.POINTER(V), U])
        self._sig("cuEventDestroy_v2", [V])
        self._sig("cuEventRecord", [V, V])
        self._sig("cuEventQuery", [V])
        self._sig("cuEventSynchronize", [V])
        U64, SZ = ctypes.c_uint64, ctypes.c_size_t
        try:  # memory helpers (a fake driver built before they existed lacks them: those tests skip)
            self._sig("cuMemAlloc_v2", [ctypes.POINTER(U64), SZ])
            self._sig("cuMemFree_v2", [U64])
            self._sig("cuMemcpyHtoD_v2", [U64, V, SZ])
            self._sig("cuMemcpyDtoH_v2", [V, U64, SZ])
            self._sig("cuCtxSynchronize", [])
            self.memory_error = None
        except AttributeError as e:
            self.memory_error = f"{path} lacks a memory entry point: {e}"
        assert d.cuInit(0) == 0

    def _sig(self, name, argtypes):
        fn = getattr(self.dll, name)
        fn.restype = ctypes.c_int
        fn.argtypes = argtypes
        setattr(self, name, fn)

    def check(self, result, what):
        assert result == 0, f"{what} failed with CUresult {result}"

    def device(self, ordinal):
        d = ctypes.c_int()
        self.check(self.cuDeviceGet(ctypes.byref(d), ordinal), "cuDeviceGet")
        return d.value

    def need_memory(self):
        if self.memory_error:
            pytest.skip(self.memory_error)

    def read(self, address, size):
        """`size` bytes of device memory at `address`, read with the synchronous cuMemcpyDtoH."""
        out = ctypes.create_string_buffer(max(size, 1))
        self.check(self.cuMemcpyDtoH_v2(out, address, size), "cuMemcpyDtoH")
        return out.raw[:size]

    def write(self, address, data):
        """Write bytes to device memory at `address` with the synchronous cuMemcpyHtoD, then synchronize
        the current context (from pageable memory the call may return before the DMA has landed, and
        non-blocking streams do not wait for the legacy stream it ran on)."""
        self.check(self.cuMemcpyHtoD_v2(address, data, len(data)), "cuMemcpyHtoD")
        self.check(self.cuCtxSynchronize(), "cuCtxSynchronize")

    def attribute(self, attr, ordinal):
        v = ctypes.c_int()
        r = self.cuDeviceGetAttribute(ctypes.byref(v), int(attr), self.device(ordinal))
        return (r, v.value)


@pytest.fixture
def raw(gpu):
    try:
        return RawDriver()
    except OSError as e:
        pytest.skip(f"cannot load the CUDA driver directly: {e}")


# ---- helpers of the memory tests (test_buffer, test_memory_resource, test_memory_pool, test_managed_memory,
# test_virtual_memory), which each test module imports under its old private name --------------------------

class MemoryHeaders:
    """The C headers of memory (one per memory capability: memory_resource.h, memory_pool.h, ...) read as one
    text. Offers the two methods of a pathlib.Path the memory tests use."""

    STEMS = ("memory_resource", "memory_pool", "managed_memory", "virtual_memory", "user_memory", "buffer", "copy_3d")

    def __init__(self, directory):
        self.directory = directory
        self.paths = [directory / f"{stem}.h" for stem in self.STEMS]

    def is_file(self):
        # Whether the headers are here at all (a checkout). In a checkout a missing or renamed header fails
        # read_text() rather than skipping the tests that read them.
        return self.directory.is_dir()

    def read_text(self):
        return "\n".join(p.read_text() for p in self.paths)


def memory_baseline(device=None):
    """(live buffers, live memory resources), after making the device's cached default resource."""
    import gc
    if device is not None:
        device.memory_resource
    gc.collect()
    return (cucore.live_object_count(cucore.ObjectType.BUFFER),
            cucore.live_object_count(cucore.ObjectType.MEMORY_RESOURCE))


def random_bytes(n, seed=1234):
    import random
    return random.Random(seed).randbytes(n)


def or_skip(make, what):
    """make(), or a skip naming what this driver or device lacks."""
    try:
        return make()
    except cucore.NotSupportedError as e:
        pytest.skip(f"{what} is not supported here: {e}")


def check_round_trip(buf, stream, gpu, seed):
    """Random bytes in, a fill, a device copy and back out: every step read back."""
    n = buf.size
    data = random_bytes(n, seed)
    buf.copy_from(data, stream=stream)
    assert buf.to_bytes(stream=stream) == data
    other = gpu.allocate(n, stream=stream)
    other.copy_from(buf, stream=stream)
    assert other.to_bytes(stream=stream) == data
    buf.fill(0x5A, stream=stream)
    assert buf.to_bytes(stream=stream) == b"\x5a" * n
    buf.copy_from(other, stream=stream)
    assert buf.to_bytes(stream=stream) == data
    other.close(stream)
    return data


# ---- cuda.core-style scenarios (test_cuda_core_style_*.py): one test body, run with `import cucore` and, where
# cuda.core is importable (the GPU server), with `import cuda.core`: code written for cuda.core must run on
# cucore unchanged, and the cuda.core run keeps the scenarios honest about what cuda.core itself does. --------

def _reference_package():
    """cuda.core, or the reason it cannot run here."""
    if FAKE_DRIVER:
        return None, "cuda.core would use the real driver, not this run's fake one"
    try:
        return importlib.import_module("cuda.core"), None
    except Exception as e:  # noqa: BLE001  (not installed, or its bindings cannot load)
        return None, f"cuda.core is not importable in {sys.executable}: {e}"


@pytest.fixture(params=["cucore", "cuda.core"])
def core(request):
    """The package under test, imported as a cuda.core user imports it (`import cuda.core as core`)."""
    if request.param == "cucore":
        return cucore
    package, reason = _reference_package()
    if package is None:
        pytest.skip(reason)
    return package


@pytest.fixture
def core_device(core):
    """`core.Device(0)`, made current, as cuda.core's documentation starts (skips without a GPU)."""
    count, reason = gpu_state()
    if not count:
        pytest.skip(f"needs a GPU: {reason}")
    dev = core.Device(0)
    dev.set_current()
    return dev


# ---- PyTorch and CuPy, on a real GPU (test_dlpack.py, test_strided_memory_view.py) --------------------------

@pytest.fixture
def torch(gpu):
    """PyTorch on a real GPU, or a skip saying what is missing."""
    from cuda_core_style import import_torch, needs_real_gpu
    needs_real_gpu("PyTorch")
    return import_torch()


@pytest.fixture
def cupy(gpu):
    """CuPy on a real GPU, or a skip saying what is missing."""
    from cuda_core_style import import_cupy, needs_real_gpu
    needs_real_gpu("CuPy")
    return import_cupy()
