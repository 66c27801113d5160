"""DLPack and the CUDA Array Interface (include/cucore/dlpack.h, cucore/dlpack.py).

Without a GPU: the ABI table and struct layouts, capsule lifetimes (the tensor's deleter runs exactly once,
whether the capsule is consumed or not, and never under the consumer), imports of tensors made here, and
NumPy exchanging host memory with a Buffer (when NumPy is installed). With a GPU (or the fake driver):
device buffers, stream hand-off, the CUDA Array Interface. With PyTorch or CuPy on a GPU: zero-copy
exchange both ways, checked by writing on one side and reading on the other."""
import ctypes
import gc
import re
import threading
import time
import weakref

import pytest

import cucore
from cucore import _abi, _abi_constants, _lib
from cucore import dlpack as dlpack_module
from conftest import REPO

DLPACK_H = REPO / "include" / "cucore" / "dlpack.h"


def _header_functions():
    text = re.sub(r"/\*.*?\*/", " ", DLPACK_H.read_text(), flags=re.S)
    return re.findall(r"CUCORE_API\s+[\w\s\*]+?\b(cucore_\w+)\s*\(", text)


class Owner:
    """The owner of some host memory; counts how often it is let go."""
    released = 0

    def __init__(self, data):
        self.memory = ctypes.create_string_buffer(data, len(data))

    @property
    def address(self):
        return ctypes.addressof(self.memory)

    def __del__(self):
        Owner.released += 1


def _host_buffer(data=bytes(range(64))):
    owner = Owner(data)
    return cucore.Buffer.from_handle(owner.address, len(data), owner=owner), weakref.ref(owner)


class CountingTensor:
    """A DLPack tensor made here, as a producer library would make one; its deleter counts its calls."""

    def __init__(self, versioned=True, values=(1.5, -2.0, 3.25, 4.0, 5.5, 6.0), shape=(2, 3), bits=32,
                 device=(1, 0)):
        self.data = (ctypes.c_float * len(values))(*values)
        self.shape = (ctypes.c_int64 * len(shape))(*shape)
        self.deleted = 0
        self.versioned = versioned
        T = dlpack_module.DLManagedTensorVersioned if versioned else dlpack_module.DLManagedTensor
        self.tensor = T()
        t = self.tensor.dl_tensor
        t.data = ctypes.addressof(self.data)
        t.device.device_type, t.device.device_id = device
        t.ndim = len(shape)
        t.dtype.code, t.dtype.bits, t.dtype.lanes = 2, bits, 1  # kDLFloat
        t.shape = self.shape
        if versioned:
            self.tensor.version.major, self.tensor.version.minor = 1, 0
        self._cb = _lib.CALLBACKS["DLManagedTensorVersioned.deleter" if versioned else "DLManagedTensor.deleter"](
            self._delete)
        self.tensor.deleter = self._cb

    def _delete(self, address):
        assert address == ctypes.addressof(self.tensor)
        self.deleted += 1

    @property
    def address(self):
        return ctypes.addressof(self.tensor)

    def capsule(self):
        return dlpack_module._capsule(self.address, self.versioned)


# ============================================================================================================
# No GPU
# ============================================================================================================

def test_abi_table_has_every_dlpack_function():
    if not DLPACK_H.is_file():
        pytest.skip("not running from a checkout")
    names = _header_functions()
    assert len(names) == 5, names
    assert all(n in _abi.ABI for n in names)
    bound = {n[1:] for n in vars(dlpack_module) if n.startswith("_cucore_")}
    assert set(names) <= bound, set(names) - bound
    assert "DLDeviceType" in _abi_constants.ENUM_TYPES


def test_struct_layouts_match_the_c_abi():
    S = _lib.STRUCTS
    assert ctypes.sizeof(S["DLDataType"]) == 4
    assert ctypes.sizeof(S["DLDevice"]) == 8
    assert (ctypes.sizeof(S["DLTensor"]), S["DLTensor"].shape.offset, S["DLTensor"].byte_offset.offset) == (48, 24, 40)
    assert (ctypes.sizeof(S["DLManagedTensor"]), S["DLManagedTensor"].deleter.offset) == (64, 56)
    V = S["DLManagedTensorVersioned"]
    assert (ctypes.sizeof(V), V.deleter.offset, V.flags.offset, V.dl_tensor.offset) == (80, 16, 24, 32)
    L = S["cucore_dlpack_layout_t"]
    assert (ctypes.sizeof(L), L.dtype.offset, L.ndim.offset, L.shape.offset, L.byte_offset.offset) == (40, 8, 12, 16, 32)
    assert [int(d) for d in cucore.DLDeviceType] == [1, 2, 3, 13]
    assert "from_dlpack" in cucore.__all__ and cucore.from_dlpack is dlpack_module.from_dlpack


def test_raw_export_and_import_of_host_memory(lib):
    host = (ctypes.c_float * 8)(*range(8))
    f = lib.function
    b = ctypes.c_void_p()
    assert f("cucore_buffer_from_handle")(ctypes.addressof(host), 32, None, None, None, ctypes.byref(b)) == 0
    try:
        layout = _lib.STRUCTS["cucore_dlpack_layout_t"]()
        layout.struct_size = ctypes.sizeof(layout)
        layout.dtype.code, layout.dtype.bits, layout.dtype.lanes = 2, 32, 1
        shape = (ctypes.c_int64 * 2)(2, 3)
        layout.ndim, layout.shape, layout.byte_offset = 2, shape, 8
        out = ctypes.POINTER(dlpack_module.DLManagedTensorVersioned)()
        assert f("cucore_dlpack_export")(b, ctypes.byref(layout), ctypes.byref(out)) == 0, cucore.last_error_message()
        t = out.contents
        assert t.dl_tensor.data == ctypes.addressof(host) + 8
        assert (t.dl_tensor.shape[0], t.dl_tensor.shape[1], t.dl_tensor.strides[0], t.dl_tensor.strides[1]) == (2, 3, 3, 1)
        assert (t.dl_tensor.device.device_type, t.version.major) == (1, 1)
        imported = ctypes.c_void_p()
        assert f("cucore_dlpack_import")(out, ctypes.byref(imported)) == 0
        size, address = ctypes.c_uint64(), ctypes.c_uint64()
        f("cucore_buffer_size")(imported, ctypes.byref(size))
        f("cucore_buffer_address")(imported, ctypes.byref(address))
        assert (address.value, size.value) == (ctypes.addressof(host) + 8, 24)
        assert f("cucore_buffer_release")(imported) == 0  # calls the export's deleter
        # A layout reaching past the buffer: INVALID_ARGUMENT naming it, the out-pointer cleared.
        shape[0] = 3
        out = ctypes.POINTER(dlpack_module.DLManagedTensorVersioned)()
        assert f("cucore_dlpack_export")(b, ctypes.byref(layout), ctypes.byref(out)) == cucore.Status.ERROR_INVALID_ARGUMENT
        assert not out and "outside the buffer" in cucore.last_error_message()
        dt, di = ctypes.c_int32(7), ctypes.c_int32(7)
        assert f("cucore_dlpack_device")(b, ctypes.byref(dt), ctypes.byref(di)) == 0 and (dt.value, di.value) == (1, 0)
        assert f("cucore_dlpack_device")(b, None, ctypes.byref(di)) == cucore.Status.ERROR_INVALID_ARGUMENT
        assert f("cucore_dlpack_import")(None, ctypes.byref(imported)) == cucore.Status.ERROR_INVALID_ARGUMENT
    finally:
        f("cucore_buffer_release")(b)


def test_unconsumed_capsule_frees_the_tensor_once(lib):
    before = Owner.released
    b, owner = _host_buffer()
    versioned = b.__dlpack__(max_version=(1, 0))
    legacy = b.__dlpack__()
    assert (dlpack_module._capsule_name(versioned), dlpack_module._capsule_name(legacy)) == \
        ("dltensor_versioned", "dltensor")
    b.close()
    gc.collect()
    assert owner() is not None, "the capsules hold the memory after the buffer is closed"
    del versioned
    gc.collect()
    assert owner() is not None, "the other capsule still holds it"
    del legacy
    gc.collect()
    assert owner() is None and Owner.released == before + 1


def test_capsule_destructor_calls_the_deleter_exactly_once(lib):
    for versioned in (True, False):
        t = CountingTensor(versioned=versioned)
        c = t.capsule()
        assert t.deleted == 0
        del c
        gc.collect()
        assert t.deleted == 1, "an unconsumed capsule frees its tensor"
        # Consumed: the buffer owns the tensor; the capsule (renamed) must not free it.
        c = t.capsule()
        b = cucore.from_dlpack(c)
        assert dlpack_module._capsule_name(c) == ("used_dltensor_versioned" if versioned else "used_dltensor")
        assert (b.handle, b.size, b.device_id) == (ctypes.addressof(t.data), 24, -1)
        assert ctypes.string_at(b.handle, 8) == bytes(t.data)[:8]
        v = b.view(4, 8)
        del c
        gc.collect()
        assert t.deleted == 1
        with pytest.raises(BufferError, match="consumed"):
            cucore.from_dlpack(_renamed_capsule(t))
        b.close()
        assert t.deleted == 1, "the view keeps the tensor"
        del v
        gc.collect()
        assert t.deleted == 2, "freed once, when the last view goes"


def _renamed_capsule(t):
    """A capsule of `t`'s tensor already consumed by someone (renamed), which nobody may import again."""
    c = t.capsule()
    name = dlpack_module._NAME_USED_VERSIONED if t.versioned else dlpack_module._NAME_USED_LEGACY
    assert dlpack_module._capsule_set_name(id(c), name) == 0
    return c


def test_failed_import_leaves_the_tensor_with_the_capsule(lib):
    t = CountingTensor(bits=4)  # sub-byte elements are refused
    c = t.capsule()
    with pytest.raises(cucore.InvalidArgumentError, match="bits is 4"):
        cucore.from_dlpack(c)
    assert dlpack_module._capsule_name(c) == "dltensor_versioned" and t.deleted == 0
    del c
    gc.collect()
    assert t.deleted == 1
    t = CountingTensor(device=(4, 0))  # kDLOpenCL
    c = t.capsule()
    with pytest.raises(cucore.NotSupportedError, match="device_type is 4"):
        cucore.from_dlpack(c)
    t.tensor.dl_tensor.device.device_type = 1
    b = cucore.from_dlpack(c)  # the capsule is still importable
    del c
    b.close()
    assert t.deleted == 1
    with pytest.raises(TypeError, match="__dlpack__"):
        cucore.from_dlpack(object())


def test_export_arguments(lib):
    b, _ = _host_buffer()
    with pytest.raises(BufferError, match="copy=True"):
        b.__dlpack__(copy=True)
    with pytest.raises(BufferError, match="not on"):
        b.__dlpack__(dl_device=(cucore.DLDeviceType.CUDA, 0))
    c = b.__dlpack__(dl_device=(1, 0), copy=False, stream=None, max_version=(1, 2))
    assert dlpack_module._capsule_name(c) == "dltensor_versioned"
    c = b.__dlpack__(max_version=(0, 8))
    assert dlpack_module._capsule_name(c) == "dltensor"
    with pytest.raises(TypeError, match="max_version"):
        b.__dlpack__(max_version=1)
    assert b.__dlpack_device__() == (cucore.DLDeviceType.CPU, 0)
    assert not hasattr(b, "__cuda_array_interface__"), "host memory the device cannot reach"
    b.close()
    with pytest.raises(cucore.InvalidHandleError, match="closed"):
        b.__dlpack__()
    with pytest.raises(cucore.InvalidHandleError):
        b.__dlpack_device__()


def test_from_cuda_array_interface_validates_the_dict(lib):
    base = {"shape": (4,), "typestr": "<f4", "data": (0x1000, False), "version": 3}
    for bad, match in ((dict(base, version=1), "version"), (dict(base, mask=object()), "mask"),
                       (dict(base, typestr="f4"), "typestr"), (dict(base, typestr="<f0"), "typestr"),
                       (dict(base, strides=(4, 4)), "strides"), (dict(base, shape=(-1,)), "negative"),
                       (dict(base, data=(0, False)), "NULL"), (dict(base, stream=0), "stream"),
                       ({"version": 3}, "malformed")):
        with pytest.raises(ValueError, match=match):
            cucore.Buffer.from_cuda_array_interface(bad)
    with pytest.raises(TypeError):
        cucore.Buffer.from_cuda_array_interface(object())
    assert dlpack_module._cai_span((2, 3), None, 4) == (0, 24)
    assert dlpack_module._cai_span((2, 3), (4, 8), 4) == (0, 24)  # column-major
    assert dlpack_module._cai_span((3, 2), (-8, 4), 4) == (-16, 24)  # rows reversed
    assert dlpack_module._cai_span((0, 5), None, 4) == (0, 0)


def test_numpy_exchanges_host_memory(lib):
    np = pytest.importorskip("numpy", reason="NumPy is not installed")
    if not hasattr(np, "from_dlpack"):
        pytest.skip("this NumPy has no from_dlpack")
    before = Owner.released
    b, owner = _host_buffer(bytes(range(100, 164)))
    a = np.from_dlpack(b)
    assert (a.dtype, a.shape, a.ctypes.data) == (np.uint8, (64,), b.handle), "zero-copy"
    assert a.tolist() == list(range(100, 164))
    a[3] = 7  # written through NumPy, seen through the buffer's memory
    assert ctypes.string_at(b.handle + 3, 1) == b"\x07"
    ctypes.memmove(b.handle, b"\xff", 1)
    assert a[0] == 255
    b.close()
    gc.collect()
    assert owner() is not None and a[1] == 101, "NumPy's array holds the memory"
    del a
    gc.collect()
    assert owner() is None and Owner.released == before + 1

    # NumPy arrays into Buffers.
    src = np.arange(12, dtype=np.float32).reshape(3, 4)
    ref = weakref.ref(src)
    buf = cucore.from_dlpack(src)
    assert (buf.handle, buf.size, buf.device_id) == (src.ctypes.data, 48, -1)
    assert buf.owner is src
    col = src[:, 1]  # strided: the span from the first to the last element
    cbuf = cucore.from_dlpack(col)
    assert (cbuf.handle, cbuf.size) == (src.ctypes.data + 4, 2 * 16 + 4)
    del src, col
    gc.collect()
    assert ref() is not None, "the buffers hold the array"
    assert np.frombuffer(ctypes.string_at(buf.handle, 48), dtype=np.float32).tolist() == list(range(12))
    buf.close()
    cbuf.close()
    gc.collect()
    assert ref() is None
    # And back: a NumPy view of a Buffer of NumPy memory.
    arr = np.arange(16, dtype=np.uint8)
    assert np.from_dlpack(cucore.from_dlpack(arr)).tolist() == list(range(16))


# ============================================================================================================
# GPU (or the fake driver)
# ============================================================================================================

@pytest.fixture
def stream(gpu):
    s = gpu.create_stream()
    yield s
    s.sync()


@pytest.mark.gpu
def test_device_buffer_exports_and_imports(gpu, stream):
    b = gpu.allocate(256, stream=stream)
    b.fill(0x5A, stream=stream)
    assert b.__dlpack_device__() == (cucore.DLDeviceType.CUDA, gpu.device_id)
    c = b.__dlpack__(stream=-1, max_version=(1, 0))
    back = cucore.from_dlpack(c)
    assert (back.handle, back.size, back.device_id) == (b.handle, 256, gpu.device_id)
    assert back.to_bytes(stream=stream) == b"\x5a" * 256
    back.copy_from(bytes(range(256)), stream=stream)
    assert b.to_bytes(stream=stream) == bytes(range(256)), "the same device memory"
    # Imported straight from the Buffer (the consumer's stream given): the same.
    again = cucore.from_dlpack(b, stream=stream)
    assert again.handle == b.handle
    b.close()
    assert again.to_bytes(stream=stream) == bytes(range(256)), "the export keeps the memory"
    del c


@pytest.mark.gpu
def test_stream_hand_off_orders_the_consumer(gpu, stream):
    b = gpu.allocate(64, stream=stream)  # its deallocation stream is `stream`
    consumer = gpu.create_stream()
    gate = threading.Event()
    order = []
    stream.launch_host_func(lambda: (gate.wait(10), order.append("producer")))
    c = b.__dlpack__(stream=consumer.handle)  # the consumer waits for `stream`
    consumer.launch_host_func(order.append, "consumer")
    gate.set()
    consumer.sync()
    assert order == ["producer", "consumer"]
    # -1: no ordering: the consumer's work completes while the producer is still
    # blocked. (Checked with an event, not a host function: the driver may run
    # every stream's host functions on one thread, which the blocked one holds.)
    gate.clear()
    stream.launch_host_func(lambda: gate.wait(10))
    c2 = b.__dlpack__(stream=-1)
    done = consumer.record()
    deadline = time.monotonic() + 10
    while not done.is_done and time.monotonic() < deadline:
        time.sleep(0.001)
    assert done.is_done, "the consumer was made to wait"
    assert not stream.is_done, "the producer was still blocked"
    gate.set()
    stream.sync()
    for s in (None, 1, 2, consumer, consumer.handle):  # every spelling of a consumer stream
        del c
        c = b.__dlpack__(stream=s)
    with pytest.raises(BufferError, match="stream 0"):
        b.__dlpack__(stream=0)
    with pytest.raises(BufferError):
        b.__dlpack__(stream=-5)
    with pytest.raises(TypeError):
        b.__dlpack__(stream="1")
    del c, c2
    consumer.sync()


@pytest.mark.gpu
def test_cuda_array_interface(gpu, stream):
    b = gpu.allocate(128, stream=stream)
    cai = b.__cuda_array_interface__
    assert cai["version"] == 3 and cai["shape"] == (128,) and cai["typestr"] == "|u1"
    assert cai["data"] == (b.handle, False) and cai["strides"] is None
    assert cai["stream"] == stream.handle, "the consumer waits for the deallocation stream"
    b.copy_from(bytes(range(128)), stream=stream)
    w = cucore.Buffer.from_cuda_array_interface(b, device_id=gpu.device_id)
    assert (w.handle, w.size, w.device_id, w.owner) == (b.handle, 128, gpu.device_id, b)
    assert w.to_bytes(stream=stream) == bytes(range(128))
    # A strided 2-D description: rows 1..3 of 16-byte rows, 4 bytes each, as int32.
    sub = {"shape": (3, 1), "typestr": "<i4", "data": (b.handle + 16, False), "strides": (16, 4), "version": 2}
    s = cucore.Buffer.from_cuda_array_interface(sub, stream=stream)
    assert (s.handle, s.size) == (b.handle + 16, 2 * 16 + 4)
    assert s.to_bytes(stream=stream) == bytes(range(16, 52))
    # The producer's stream is synchronized (or waited for by the given stream).
    other = gpu.create_stream()
    gate = threading.Event()
    other.launch_host_func(gate.wait, 10)
    threading.Timer(0.2, gate.set).start()
    cucore.Buffer.from_cuda_array_interface(dict(sub, version=3, stream=other.handle))
    assert gate.is_set(), "synchronized with the producer's stream"
    pinned = cucore.LegacyPinnedMemoryResource(gpu).allocate(32)
    assert pinned.__dlpack_device__() == (cucore.DLDeviceType.CUDA_HOST, 0)
    assert pinned.__cuda_array_interface__["stream"] is None and pinned.__cuda_array_interface__["data"][0] != 0


# ---- PyTorch and CuPy (on a real GPU) -------------------------------------------------------------------------



@pytest.mark.gpu
def test_torch_from_dlpack_of_a_buffer_is_zero_copy(gpu, stream, torch):
    b = gpu.allocate(1024, stream=stream)
    b.fill(0x11, stream=stream)
    t = torch.from_dlpack(b)  # torch passes its current stream: ordered after the fill
    assert t.device.type == "cuda" and t.device.index == gpu.device_id
    assert (t.dtype, tuple(t.shape), t.data_ptr()) == (torch.uint8, (1024,), b.handle)
    assert int(t.sum().item()) == 0x11 * 1024
    t[:16] = 7
    torch.cuda.synchronize()
    assert b.to_bytes(stream=stream)[:17] == b"\x07" * 16 + b"\x11"
    b.close()
    assert int(t[16].item()) == 0x11, "the tensor keeps the memory after close()"


@pytest.mark.gpu
def test_cucore_from_dlpack_of_a_torch_tensor(gpu, stream, torch):
    x = torch.arange(24, dtype=torch.float32, device=f"cuda:{gpu.device_id}").reshape(4, 6)
    buf = cucore.from_dlpack(x)
    torch.cuda.synchronize()
    assert (buf.handle, buf.size, buf.device_id) == (x.data_ptr(), 96, gpu.device_id)
    assert buf.to_bytes(stream=stream) == x.cpu().numpy().tobytes()
    buf.fill(0, stream=stream)
    stream.sync()
    assert int(x.abs().sum().item()) == 0, "written through the buffer, read through torch"
    col = cucore.from_dlpack(x[:, 2])  # strided: spans first to last element
    assert (col.handle, col.size) == (x.data_ptr() + 8, 3 * 24 + 4)
    w = cucore.Buffer.from_cuda_array_interface(x, device_id=gpu.device_id)
    assert (w.handle, w.size, w.owner) == (x.data_ptr(), 96, x)


@pytest.mark.gpu
def test_cupy_exchanges_device_memory(gpu, stream, cupy):
    b = gpu.allocate(256, stream=stream)
    b.copy_from(bytes(range(256)), stream=stream)
    a = cupy.from_dlpack(b)
    assert (a.data.ptr, a.dtype, a.shape) == (b.handle, cupy.uint8, (256,))
    assert cupy.asnumpy(a).tobytes() == bytes(range(256))
    v = cupy.asarray(b)  # through __cuda_array_interface__
    assert v.data.ptr == b.handle and int(v[255]) == 255
    v[:4] = 9
    cupy.cuda.runtime.deviceSynchronize()
    assert b.to_bytes(stream=stream)[:5] == b"\x09\x09\x09\x09\x04"
    y = cupy.arange(10, dtype=cupy.int64)
    yb = cucore.from_dlpack(y, stream=stream)  # CuPy orders `stream` after its own work
    assert (yb.handle, yb.size) == (y.data.ptr, 80)
    yb.copy_from(bytes(80), stream=stream)
    stream.sync()
    assert int(y.sum()) == 0
