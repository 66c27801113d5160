"""StridedMemoryView and args_viewable_as_strided_memory (cucore/strided_memory_view.py, cucore.utils).

Without a GPU: views of host memory from every source kind made here (DLPack producers, versioned and legacy,
read-only or not; __array_interface__ objects; host Buffers), shapes, strides and dtypes, typed DLPack export
read back by a second view, lifetimes (the exporting object and the producer's tensor live exactly as long as
the view and its exports), and clean errors for bad input. With NumPy: round trips both ways. With a GPU (or
the fake driver): device Buffers, the CUDA Array Interface with its stream, copies and TMA descriptors. With
PyTorch or CuPy on a real GPU: zero-copy exchange both ways, checked by writing on one side and reading on the
other."""
import ctypes
import gc
import struct
import warnings
import weakref

import pytest

import cucore
import cucore._strided_copy  # noqa: F401  (the copy plan is tested directly)
from cucore import _lib
from cucore import dlpack as dlpack_module
from cucore.utils import StridedMemoryView, args_viewable_as_strided_memory

FLOAT = 2  # kDLFloat
INT = 0    # kDLInt


class Producer:
    """A DLPack producer made here, as an array library makes one: host memory holding `values` (float32 by
    default) laid out by `shape` and `strides` (elements). Its tensor's deleter counts its calls."""

    def __init__(self, values=tuple(float(i) for i in range(12)), shape=(3, 4), strides=None, code=FLOAT, bits=32,
                 lanes=1, versioned=True, readonly=False, device=(1, 0), offset=0):
        ctype = {(FLOAT, 32): ctypes.c_float, (INT, 16): ctypes.c_int16}.get((code, bits), ctypes.c_uint8)
        self.data = (ctype * max(len(values), 1))(*values)
        self.shape = (ctypes.c_int64 * len(shape))(*shape)
        self.strides = None if strides is None else (ctypes.c_int64 * len(strides))(*strides)
        self.deleted = 0
        self.versioned = versioned
        self.device = device
        self.calls = []
        T = dlpack_module.DLManagedTensorVersioned if versioned else dlpack_module.DLManagedTensor
        self.tensor = T()
        t = self.tensor.dl_tensor
        t.data = ctypes.addressof(self.data)
        t.byte_offset = offset
        t.device.device_type, t.device.device_id = device
        t.ndim = len(shape)
        t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, lanes
        t.shape = self.shape
        if self.strides is not None:
            t.strides = self.strides
        if versioned:
            self.tensor.version.major, self.tensor.version.minor = 1, 0
            self.tensor.flags = _lib.C["DLPACK_FLAG_BITMASK_READ_ONLY"] if readonly else 0
        self._cb = _lib.CALLBACKS["DLManagedTensorVersioned.deleter" if versioned else "DLManagedTensor.deleter"](
            self._delete)
        self.tensor.deleter = self._cb

    def _delete(self, address):
        self.deleted += 1

    @property
    def address(self):
        return ctypes.addressof(self.data)

    def __dlpack__(self, stream=None, max_version=None):
        self.calls.append({"stream": stream, "max_version": max_version})
        return dlpack_module._capsule(ctypes.addressof(self.tensor), self.versioned)

    def __dlpack_device__(self):
        return self.device


class LegacyProducer(Producer):
    """A producer older than DLPack 1.0: its __dlpack__ knows no max_version."""

    def __init__(self, **kw):
        super().__init__(versioned=False, **kw)

    def __dlpack__(self, stream=None):
        self.calls.append({"stream": stream})
        return dlpack_module._capsule(ctypes.addressof(self.tensor), False)


class HostArray:
    """An object with __array_interface__ over ctypes memory (what NumPy exposes)."""

    def __init__(self, values, typestr="<i4", shape=None, strides=None, readonly=False, version=3, **extra):
        ctype = {"<i4": ctypes.c_int32, "<f4": ctypes.c_float, "|u1": ctypes.c_uint8, "<f8": ctypes.c_double}[typestr]
        self.memory = (ctype * len(values))(*values)
        self.__array_interface__ = dict(shape=shape or (len(values),), typestr=typestr, strides=strides,
                                        data=(ctypes.addressof(self.memory), readonly), version=version, **extra)


def _quiet_view(obj, stream_ptr=-1):
    return StridedMemoryView.from_any_interface(obj, stream_ptr)


# ---- DLPack producers (host) -----------------------------------------------------------------------------

def test_dlpack_view_of_a_versioned_producer(lib):
    p = Producer()
    v = StridedMemoryView.from_dlpack(p, stream_ptr=-1)
    assert (v.ptr, v.shape, v.strides, v.size) == (p.address, (3, 4), None, 12)
    assert (v.device_id, v.is_device_accessible, v.readonly, v.exporting_obj) == (-1, False, False, p)
    assert v.dtype == "float32" and v.dtype.itemsize == 4
    assert p.calls == [{"stream": None, "max_version": dlpack_module.DLPACK_VERSION}], "CPU producers get no stream"
    assert v.__dlpack_device__() == (1, 0)


def test_dlpack_view_of_a_legacy_producer_with_strides_and_offset(lib):
    p = LegacyProducer(values=tuple(range(24)), shape=(2, 3), strides=(8, 2), code=INT, bits=16, offset=4)
    v = StridedMemoryView.from_dlpack(p, stream_ptr=-1)
    assert (v.ptr, v.shape, v.strides) == (p.address + 4, (2, 3), (8, 2))
    assert v.dtype == "int16" and not v.readonly
    assert p.calls == [{"stream": None}], "the max_version call failed with TypeError, then the legacy call"


def test_readonly_flag_is_read_from_a_versioned_tensor(lib):
    assert StridedMemoryView.from_dlpack(Producer(readonly=True), -1).readonly is True
    assert StridedMemoryView.from_dlpack(Producer(readonly=False), -1).readonly is False


def test_stream_none_is_ambiguous_for_cpu_and_cuda_memory(lib):
    with pytest.raises(BufferError, match="ambiguous"):
        StridedMemoryView.from_dlpack(Producer())
    p = Producer(device=(2, 0))
    with pytest.raises(BufferError, match="ambiguous"):
        StridedMemoryView.from_dlpack(p, None)
    assert p.calls == [], "refused before the producer exported anything"


def test_vector_and_unusual_dtypes_view_but_name_no_numpy_type(lib):
    v = StridedMemoryView.from_dlpack(Producer(values=tuple(range(8)), shape=(4,), bits=8, code=FLOAT, lanes=2), -1)
    assert v.shape == (4,) and v._layout.itemsize == 2
    with pytest.raises(NotImplementedError, match="lanes=2"):
        v.dtype
    assert "lanes" in repr(v) or "(2, 8, 2)" in repr(v), "repr names the type it cannot convert, never raises"


def test_lifetime_the_view_holds_the_producer_and_its_tensor(lib):
    p = Producer()
    ref = weakref.ref(p)
    v = StridedMemoryView.from_dlpack(p, -1)
    del p
    gc.collect()
    assert ref() is not None, "the view keeps the exporting object alive"
    assert ref().deleted == 0, "the tensor lives while the view does"
    values = struct.unpack("12f", ctypes.string_at(v.ptr, 48))
    assert values == tuple(float(i) for i in range(12))
    producer = ref()
    del v
    gc.collect()
    assert producer.deleted == 1, "the tensor's deleter ran exactly once when the view went"


def test_typed_export_is_read_back_by_another_view(lib):
    p = Producer(values=tuple(float(i) for i in range(24)), shape=(4, 6))
    v = StridedMemoryView.from_dlpack(p, -1)
    col = v.view(cucore.strided_memory_view._StridedLayout((4, 2), (6, 3), 4))
    again = StridedMemoryView.from_dlpack(col, -1)  # a view is a DLPack producer too
    assert (again.ptr, again.shape, again.strides, again.dtype) == (p.address, (4, 2), (6, 3), col.dtype)
    assert again.exporting_obj is col
    got = [struct.unpack("f", ctypes.string_at(again.ptr + 4 * (6 * i + 3 * j), 4))[0]
           for i in range(4) for j in range(2)]
    assert got == [float(6 * i + 3 * j) for i in range(4) for j in range(2)]
    del v, col, again
    gc.collect()
    assert p.deleted == 1, "the producer's tensor went once every view and export of it had"


def test_exported_capsule_holds_the_memory_after_the_view_is_gone(lib):
    p = Producer()
    v = StridedMemoryView.from_dlpack(p, -1)
    capsule = v.__dlpack__(max_version=(1, 0))
    legacy = v.__dlpack__()
    del v, legacy  # an unconsumed capsule frees its tensor when it goes
    gc.collect()
    assert p.deleted == 0, "the capsule still holds the producer's tensor"
    buf = cucore.from_dlpack(capsule)
    assert (buf.handle, buf.size) == (p.address, 48)
    del buf, capsule
    gc.collect()
    assert p.deleted == 1


def test_readonly_view_exports_the_readonly_flag(lib):
    v = StridedMemoryView.from_dlpack(Producer(readonly=True), -1)
    assert StridedMemoryView.from_dlpack(v, -1).readonly is True


def test_export_arguments(lib):
    v = StridedMemoryView.from_dlpack(Producer(), -1)
    with pytest.raises(BufferError, match="copy=True"):
        v.__dlpack__(copy=True)
    with pytest.raises(BufferError, match="max_version"):
        v.__dlpack__(max_version=[1, 0])
    with pytest.raises(BufferError):
        v.__dlpack__(dl_device=(2, 0))  # host memory is not on a GPU
    v.__dlpack__(dl_device=(1, 0))


def test_bad_producers_raise_never_crash(lib):
    class NoCapsule:
        def __dlpack__(self, stream=None, max_version=None):
            return 5

        def __dlpack_device__(self):
            return (1, 0)

    with pytest.raises(BufferError, match="capsule"):
        StridedMemoryView.from_dlpack(NoCapsule(), -1)

    class OddDevice(NoCapsule):
        def __dlpack_device__(self):
            return (9, 0)

    with pytest.raises(BufferError, match="device not supported"):
        StridedMemoryView.from_dlpack(OddDevice(), -1)
    with pytest.raises(BufferError, match="DLPack"):
        StridedMemoryView.from_dlpack(object(), -1)
    with pytest.raises(BufferError, match="any data exchange protocol"):
        StridedMemoryView.from_any_interface(3, -1)
    with pytest.raises(cucore.InvalidArgumentError):  # libcucore refuses bits that are not whole bytes
        StridedMemoryView.from_dlpack(Producer(values=tuple(range(12)), bits=4, code=INT), -1)


# ---- __array_interface__ -----------------------------------------------------------------------------------

def test_array_interface_view(lib):
    a = HostArray(list(range(12)), typestr="<i4", shape=(3, 4), strides=(16, 8), readonly=True)
    v = StridedMemoryView.from_array_interface(a)
    assert (v.ptr, v.shape, v.strides, v.dtype) == (ctypes.addressof(a.memory), (3, 4), (4, 2), "int32")
    assert (v.device_id, v.is_device_accessible, v.readonly, v.exporting_obj) == (-1, False, True, a)
    contiguous = StridedMemoryView.from_any_interface(HostArray([1.0, 2.0], typestr="<f8"), -1)
    assert (contiguous.shape, contiguous.strides, contiguous.dtype) == ((2,), None, "float64")


def test_array_interface_errors(lib):
    for bad, match in ((HostArray([1], version=2), "v3"), (HostArray([1], mask=object()), "mask"),
                       (HostArray([1, 2], strides=(3,)), "multiples")):
        with pytest.raises((BufferError, ValueError), match=match):
            StridedMemoryView.from_array_interface(bad)

    class NotADict:
        __array_interface__ = [1, 2]

    with pytest.raises(BufferError, match="dict"):
        StridedMemoryView.from_array_interface(NotADict())
    bad_type = HostArray([1])
    bad_type.__array_interface__["typestr"] = "<x9"
    with pytest.raises(BufferError, match="typestr"):
        StridedMemoryView.from_array_interface(bad_type)
    null = HostArray([1])
    null.__array_interface__["data"] = (0, False)
    with pytest.raises(BufferError, match="NULL"):
        StridedMemoryView.from_array_interface(null)


# ---- Buffers (host) ----------------------------------------------------------------------------------------

def _host_buffer(n=64):
    memory = ctypes.create_string_buffer(bytes(range(n)), n)
    return cucore.Buffer.from_handle(ctypes.addressof(memory), n, owner=memory), memory


def test_from_buffer_views_and_validates(lib):
    buf, memory = _host_buffer(64)
    v = StridedMemoryView.from_buffer(buf, (4, 4), dtype="int32")
    assert (v.ptr, v.shape, v.strides, v.dtype, v.exporting_obj) == (buf.handle, (4, 4), None, "int32", buf)
    assert (v.device_id, v.is_device_accessible, v.readonly) == (-1, False, False)
    t = StridedMemoryView.from_buffer(buf, (4, 4), (1, 4), itemsize=4, is_readonly=True)
    assert (t.strides, t.dtype, t.readonly) == ((1, 4), None, True)
    with pytest.raises(BufferError, match="without dtype"):
        t.__dlpack__()
    with pytest.raises(ValueError, match="Either itemsize or dtype"):
        StridedMemoryView.from_buffer(buf, (4,))
    with pytest.raises(ValueError, match="does not match"):
        StridedMemoryView.from_buffer(buf, (4,), itemsize=2, dtype="int32")
    with pytest.raises(ValueError, match="too small"):
        StridedMemoryView.from_buffer(buf, (5, 4), dtype="int32")
    with pytest.raises(ValueError, match="below"):
        StridedMemoryView.from_buffer(buf, (4,), (-1,), itemsize=4)
    with pytest.raises(ValueError, match="one entry per dimension"):
        StridedMemoryView.from_buffer(buf, (4, 4), (1,), itemsize=4)
    with pytest.raises(TypeError, match="Buffer"):
        StridedMemoryView.from_buffer(memory, (4,), itemsize=4)
    again = StridedMemoryView.from_dlpack(v, -1)
    assert (again.ptr, again.shape, again.dtype) == (buf.handle, (4, 4), "int32")
    assert struct.unpack("4i", ctypes.string_at(again.ptr, 16)) == struct.unpack("4i", bytes(range(16)))


def test_from_buffer_of_foreign_memory_of_unknown_size(lib):
    memory = ctypes.create_string_buffer(bytes(range(64)), 64)
    unknown = cucore.Buffer.from_handle(ctypes.addressof(memory), 0, owner=memory)  # cuda.core's idiom
    v = StridedMemoryView.from_buffer(unknown, (4, 4), dtype="int32")  # extent not checked: size unknown
    again = StridedMemoryView.from_dlpack(v.view(dtype="uint32"), -1)
    assert (again.ptr, again.shape, again.dtype) == (ctypes.addressof(memory), (4, 4), "uint32")
    assert struct.unpack("16I", ctypes.string_at(again.ptr, 64)) == struct.unpack("16I", bytes(range(64)))


def test_views_of_a_closed_buffer_refuse_to_export_or_copy(lib):
    buf, _ = _host_buffer(64)
    v = StridedMemoryView.from_buffer(buf, (16,), dtype="int32")
    other = StridedMemoryView.from_array_interface(HostArray([0] * 16))
    buf.close()
    with pytest.raises(cucore.InvalidHandleError):
        v.__dlpack__()
    with pytest.raises(cucore.InvalidHandleError):
        other.copy_from(v, None)


def test_view_changes_layout_and_dtype_within_the_memory(lib):
    buf, _ = _host_buffer(64)
    v = StridedMemoryView.from_buffer(buf, (16,), dtype="int32")
    assert v.view() is v
    m = v.view(cucore.strided_memory_view._StridedLayout((4, 4), None, 4))
    assert (m.shape, m.dtype, m.ptr) == ((4, 4), "int32", v.ptr)
    f = v.view(dtype="float32")
    assert (f.shape, f.dtype) == ((16,), "float32")
    with pytest.raises(ValueError, match="itemsize"):
        v.view(dtype="int16")
    with pytest.raises(ValueError, match="viewed memory"):
        v.view(cucore.strided_memory_view._StridedLayout((32,), None, 4))
    with pytest.raises(ValueError, match="Cannot infer layout"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            StridedMemoryView().shape


def test_constructor_warns_as_cuda_core_and_dispatches(lib):
    with pytest.warns(DeprecationWarning, match="from_any_interface"):
        v = StridedMemoryView(Producer(), -1)
    assert v.shape == (3, 4)
    with pytest.warns(DeprecationWarning, match="empty"):
        e = StridedMemoryView()
    assert (e.ptr, e.exporting_obj, e.dtype) == (0, None, None)


def test_decorator_gives_proxies_with_view(lib):
    @args_viewable_as_strided_memory((0, 2))
    def shapes(a, b, c, *, stream_ptr):
        assert b == "untouched"
        va, vc = a.view(stream_ptr), c.view(stream_ptr)
        assert isinstance(va, StridedMemoryView) and isinstance(vc, StridedMemoryView)
        return va.shape, vc.shape, a.has_dlpack, c.has_dlpack

    assert shapes(Producer(), "untouched", HostArray([1, 2, 3]), stream_ptr=-1) == ((3, 4), (3,), True, False)
    assert shapes.__name__ == "shapes"
    with pytest.raises(TypeError, match="tuple"):
        args_viewable_as_strided_memory([0])
    with pytest.raises(BufferError, match="any data exchange protocol"):
        shapes(object(), "untouched", HostArray([1]), stream_ptr=-1)


def test_host_copies_need_a_gpu_stream_but_check_first(lib):
    a = StridedMemoryView.from_array_interface(HostArray([1, 2, 3], readonly=True))
    b = StridedMemoryView.from_array_interface(HostArray([0, 0]))
    with pytest.raises(ValueError, match="read-only"):
        a.copy_from(b, None)
    with pytest.raises(ValueError, match="shapes differ"):
        b.copy_from(a, None)
    with pytest.raises(TypeError, match="StridedMemoryView"):
        b.copy_from(object(), None)
    with pytest.raises(ValueError, match="host memory"):
        a.as_tensor_map(box_dim=(2,))
    with pytest.raises(TypeError, match="not both"):
        a.as_tensor_map((2,), options=cucore.TensorMapDescriptorOptions(box_dim=(2,)))
    with pytest.raises(TypeError, match="box_dim is required"):
        a.as_tensor_map()


def test_copy_plan_merges_dimensions_and_loops_over_what_one_copy_cannot_do():
    plan = cucore._strided_copy._copy_plan
    assert plan((4, 6), (6, 1), (6, 1), 4) == (96, 1, 1, (96, 1), (96, 1), [])          # contiguous: one row
    assert plan((4, 6), (6, 1), (8, 1), 4) == (24, 4, 1, (24, 4), (32, 4), [])          # pitched rows
    assert plan((2, 3, 4), (12, 4, 1), (40, 8, 1), 2) == (8, 3, 2, (8, 3), (16, 5), [])  # 3D: slices of 5 rows
    # transposed: element by element, one 2D copy per row of the destination
    assert plan((4, 6), (6, 1), (1, 4), 4) == (4, 6, 1, (4, 6), (16, 6), [(4, 24, 4)])
    assert plan((2, 2, 2, 2), (8, 4, 2, 1), (64, 16, 4, 2), 4) == (4, 4, 2, (4, 4), (8, 8), [(2, 32, 256)])
    with pytest.raises(NotImplementedError, match="negative"):
        plan((4,), (1,), (-1,), 4)
    with pytest.raises(NotImplementedError, match="overlap"):
        plan((4, 2), (2, 1), (1, 1), 4)


# ---- NumPy (host) -------------------------------------------------------------------------------------------

@pytest.fixture
def np():
    return pytest.importorskip("numpy", reason="NumPy is not installed")


def test_numpy_round_trips_both_ways(lib, np):
    a = np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2]
    v = StridedMemoryView.from_dlpack(a, stream_ptr=-1)
    assert (v.ptr, v.shape, v.strides, v.dtype) == (a.ctypes.data, (4, 3), (6, 2), np.dtype(np.float32))
    back = np.from_dlpack(v)
    assert back.ctypes.data == a.ctypes.data and back.strides == a.strides and back.dtype == a.dtype
    back[1, 1] = -5
    assert a[1, 1] == -5, "zero-copy both ways"
    r = StridedMemoryView.from_dlpack(a[::-1], -1)
    assert r.strides == (-6, 2) and np.array_equal(np.from_dlpack(r), a[::-1])
    ai = StridedMemoryView.from_array_interface(a)
    assert (ai.ptr, ai.shape, ai.strides, ai.dtype) == (v.ptr, v.shape, v.strides, v.dtype)
    ro = a.copy()
    ro.flags.writeable = False
    assert StridedMemoryView.from_dlpack(ro, -1).readonly and StridedMemoryView.from_array_interface(ro).readonly
    assert not np.from_dlpack(StridedMemoryView.from_dlpack(ro, -1)).flags.writeable


def test_numpy_dtype_round_trip(lib, np):
    for dt in (np.bool_, np.int8, np.uint16, np.int32, np.uint64, np.float16, np.float64, np.complex64):
        a = np.zeros((2, 2), dtype=dt)
        v = StridedMemoryView.from_dlpack(a, -1)
        assert v.dtype == np.dtype(dt)
        assert np.from_dlpack(v).dtype == np.dtype(dt)
    buf, _ = _host_buffer(64)
    v = StridedMemoryView.from_buffer(buf, (2, 8), dtype=np.int32)
    assert np.from_dlpack(v).tolist() == np.frombuffer(bytes(range(64)), dtype=np.int32).reshape(2, 8).tolist()
    big_endian = StridedMemoryView.from_buffer(buf, (2, 8), dtype=np.dtype(">i4"))
    with pytest.raises(BufferError, match="byte order"):
        big_endian.__dlpack__()


# ---- GPU (a real one or the fake driver) --------------------------------------------------------------------

@pytest.fixture
def stream(gpu):
    s = gpu.create_stream()
    yield s
    s.sync()


class DeviceArray:
    """An object with __cuda_array_interface__ v3 over a device Buffer, as Numba or CuPy expose one."""

    def __init__(self, buf, shape, typestr, strides=None, stream=None, version=3, readonly=False):
        self.buf = buf
        self.__cuda_array_interface__ = dict(shape=shape, typestr=typestr, strides=strides, version=version,
                                             data=(buf.handle, readonly), stream=stream)


@pytest.mark.gpu
def test_device_buffer_view_exports_typed(gpu, stream):
    buf = gpu.allocate(96, stream=stream)
    buf.copy_from(struct.pack("24f", *range(24)), stream=stream)
    v = StridedMemoryView.from_buffer(buf, (4, 6), dtype="float32")
    assert (v.device_id, v.is_device_accessible, v.ptr) == (gpu.device_id, True, buf.handle)
    assert v.__dlpack_device__() == (2, gpu.device_id)
    col = v.view(cucore.strided_memory_view._StridedLayout((4,), (6,), 4, ), dtype="float32")
    imported = cucore.from_dlpack(StridedMemoryView.from_dlpack(col, stream.handle))
    assert (imported.handle, imported.size) == (buf.handle, 3 * 24 + 4), "the export spans first to last element"


@pytest.mark.gpu
def test_cuda_array_interface_view_waits_for_its_stream(gpu, stream):
    buf = gpu.allocate(64, stream=stream)
    producer = gpu.create_stream()
    arr = DeviceArray(buf, (4, 2), "<f8", strides=(16, 8), stream=producer.handle)
    v = StridedMemoryView.from_cuda_array_interface(arr, stream_ptr=stream.handle)
    assert (v.ptr, v.shape, v.strides, v.dtype) == (buf.handle, (4, 2), (2, 1), "float64")
    assert (v.device_id, v.is_device_accessible, v.readonly, v.exporting_obj) == (gpu.device_id, True, False, arr)
    assert StridedMemoryView.from_cuda_array_interface(arr, -1).shape == (4, 2), "-1: no ordering"
    with pytest.raises(BufferError, match="ambiguous"):
        StridedMemoryView.from_cuda_array_interface(arr)
    with pytest.raises(BufferError, match="v3"):
        StridedMemoryView.from_cuda_array_interface(DeviceArray(buf, (8,), "<f8", version=2), stream.handle)
    with pytest.raises(BufferError, match="not a stream"):
        StridedMemoryView.from_cuda_array_interface(DeviceArray(buf, (8,), "<f8", stream=0), stream.handle)
    producer.close()


@pytest.mark.gpu
def test_strided_copies_between_host_and_device(gpu, stream):
    host = HostArray(list(range(24)), typestr="<i4", shape=(4, 6))
    src = StridedMemoryView.from_array_interface(host)
    every_other = src.view(cucore.strided_memory_view._StridedLayout((4, 3), (6, 2), 4))
    buf = gpu.allocate(48, stream=stream)
    dst = StridedMemoryView.from_buffer(buf, (4, 3), dtype="int32")
    dst.copy_from(every_other, stream)
    stream.sync()
    assert struct.unpack("12i", buf.to_bytes(stream=stream)) == tuple(6 * i + 2 * j for i in range(4) for j in range(3))
    out = HostArray([0] * 12, typestr="<i4", shape=(3, 4))
    back = StridedMemoryView.from_array_interface(out)
    dst.view(cucore.strided_memory_view._StridedLayout((3, 4), (1, 3), 4)).copy_to(back, stream)  # blocking
    # element (r, c) of the transposed view is element (c, r) of dst, which holds 6 * c + 2 * r
    assert list(out.memory) == [6 * c + 2 * r for r in range(3) for c in range(4)], "a transposed read"
    dev2 = StridedMemoryView.from_buffer(gpu.allocate(48, stream=stream), (4, 3), dtype="int32")
    dev2.copy_from(dst, stream, blocking=True)
    assert dev2.exporting_obj.to_bytes(stream=stream) == buf.to_bytes(stream=stream)
    with pytest.raises(ValueError, match="dtypes differ"):
        dev2.copy_from(dst.view(dtype="float32"), stream)


@pytest.mark.gpu
def test_as_tensor_map_of_a_device_view(gpu, stream):
    if gpu.compute_capability.major < 9:
        pytest.skip("TMA needs compute capability 9.0")
    buf = gpu.allocate(64 * 64 * 4, stream=stream)
    v = StridedMemoryView.from_buffer(buf, (64, 64), dtype="float32")
    tmap = v.as_tensor_map(box_dim=(8, 32))
    assert isinstance(tmap, cucore.TensorMapDescriptor) and tmap.address == buf.handle
    tmap2 = v.as_tensor_map(options={"box_dim": (8, 32), "data_type": "float32"})
    assert tmap2.address == buf.handle


# ---- PyTorch and CuPy (a real GPU) ----------------------------------------------------------------------------



@pytest.mark.gpu
def test_torch_tensors_both_ways(gpu, torch):
    x = torch.arange(24, dtype=torch.float32, device=f"cuda:{gpu.device_id}").reshape(4, 6)
    s = torch.cuda.current_stream()
    v = StridedMemoryView.from_dlpack(x[:, 1::2], stream_ptr=s.cuda_stream)
    assert (v.ptr, v.shape, v.strides, str(v.dtype)) == (x.data_ptr() + 4, (4, 3), (6, 2), "float32")
    assert (v.device_id, v.is_device_accessible, v.readonly) == (gpu.device_id, True, False)
    t = torch.from_dlpack(v)
    assert (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype) == (v.ptr, (4, 3), (6, 2), torch.float32)
    assert torch.equal(t, x[:, 1::2])
    t[2, 1] = -1.0
    torch.cuda.synchronize()
    assert float(x[2, 3].item()) == -1.0, "zero-copy: written through the export, read through the original"
    buf = gpu.allocate(48, stream=gpu.default_stream)
    buf.copy_from(struct.pack("12i", *range(12)), stream=gpu.default_stream)
    gpu.default_stream.sync()
    y = torch.from_dlpack(StridedMemoryView.from_buffer(buf, (3, 4), dtype="int32"))
    assert y.dtype == torch.int32 and y.tolist() == [[4 * r + c for c in range(4)] for r in range(3)]


@pytest.mark.gpu
def test_cupy_arrays_both_ways(gpu, cupy):
    a = cupy.arange(12, dtype=cupy.float64).reshape(3, 4)
    s = cupy.cuda.get_current_stream()
    for v in (StridedMemoryView.from_dlpack(a.T, s.ptr), StridedMemoryView.from_cuda_array_interface(a.T, s.ptr)):
        assert (v.ptr, v.shape, v.strides, str(v.dtype)) == (a.data.ptr, (4, 3), (1, 4), "float64")
        assert v.device_id == gpu.device_id
    b = cupy.from_dlpack(StridedMemoryView.from_dlpack(a, s.ptr))
    assert b.data.ptr == a.data.ptr and bool((b == a).all())
    b[0, 0] = 42
    assert float(a[0, 0]) == 42.0
