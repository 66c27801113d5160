"""Buffers (include/cucore/buffer.h; bindings/python/cucore/buffer.py).

Without a GPU: argument errors through the raw C functions, and the Python layer over foreign host memory
(Buffer.from_handle needs no driver). With a GPU (or the fake driver): every
allocation, copy and fill is checked by reading the bytes back, through the binding and through the raw
driver (cuMemcpyDtoH)."""
import array
import ctypes
import gc
import os
import subprocess
import sys
import textwrap
import threading
import weakref

import pytest

import cucore
from cucore import Status, _abi
from cucore import buffer as buffer_module
from conftest import REPO, memory_baseline as _baseline, random_bytes as _random_bytes


@pytest.fixture
def raw_memory(raw):
    """The raw driver, with its memory entry points."""
    raw.need_memory()
    return raw


@pytest.fixture
def stream(gpu):
    s = gpu.create_stream()
    yield s
    s.sync()


class ForeignStream:
    """A stream owned by another library, seen only through __cuda_stream__."""

    def __init__(self, stream):
        self.stream = stream

    def __cuda_stream__(self):
        return (0, self.stream.handle)


# ============================================================================================================
# No GPU: the raw functions' argument checks, foreign host memory
# ============================================================================================================

def test_raw_out_pointers_and_arguments(lib):
    f = lib.function
    out = ctypes.c_void_p(0x1234)
    # address 0 with a non-zero size; the out-pointer is cleared
    assert f("cucore_buffer_from_handle")(0, 16, None, None, None, ctypes.byref(out)) == Status.ERROR_INVALID_ARGUMENT
    assert out.value is None
    msg = cucore.last_error_message()
    assert "cucore_buffer_from_handle" in msg and "address" in msg
    # NULL out-pointers
    assert f("cucore_buffer_from_handle")(0x1000, 16, None, None, None, None) == Status.ERROR_INVALID_ARGUMENT
    assert "cucore_buffer_from_handle" in cucore.last_error_message()
    for name in ("cucore_device_memory_resource_get_default", "cucore_legacy_pinned_memory_resource_create"):
        st = f(name)(None, None)
        assert st in (Status.ERROR_INVALID_ARGUMENT, Status.ERROR_INVALID_HANDLE), name
        assert name in cucore.last_error_message()


def test_raw_buffer_getters_and_range_checks(lib):
    f = lib.function
    host = ctypes.create_string_buffer(64)
    h = ctypes.c_void_p()
    assert f("cucore_buffer_from_handle")(ctypes.addressof(host), 64, None, None, None, ctypes.byref(h)) == 0
    try:
        size, addr, dev = ctypes.c_uint64(), ctypes.c_uint64(), ctypes.c_int()
        assert f("cucore_buffer_size")(h, size) == 0 and size.value == 64
        assert f("cucore_buffer_address")(h, addr) == 0 and addr.value == ctypes.addressof(host)
        assert f("cucore_buffer_device_id")(h, dev) == 0 and dev.value == -1
        mr = ctypes.c_void_p(0x1234)
        assert f("cucore_buffer_memory_resource")(h, ctypes.byref(mr)) == 0 and mr.value is None
        for name in ("cucore_buffer_size", "cucore_buffer_address", "cucore_buffer_device_id",
                     "cucore_buffer_memory_resource"):
            assert f(name)(h, None) == Status.ERROR_INVALID_ARGUMENT, name
        v = ctypes.c_void_p(0x1234)
        assert f("cucore_buffer_view")(h, 60, 8, ctypes.byref(v)) == Status.ERROR_INVALID_ARGUMENT
        assert v.value is None and "outside" in cucore.last_error_message()
        assert f("cucore_buffer_view")(h, 2**64 - 1, 2, ctypes.byref(v)) == Status.ERROR_INVALID_ARGUMENT
        assert f("cucore_buffer_view")(h, 8, 8, None) == Status.ERROR_INVALID_ARGUMENT
        # a NULL stream is no stream for operations that need one
        assert f("cucore_buffer_fill")(h, 0, 1, None) == Status.ERROR_INVALID_HANDLE
        assert f("cucore_buffer_copy")(h, h, None) == Status.ERROR_INVALID_HANDLE
        assert f("cucore_buffer_set_deallocation_stream")(h, None) == Status.ERROR_INVALID_HANDLE
        # closing foreign memory frees nothing; afterwards size and address read 0, uses are INVALID_STATE
        assert f("cucore_buffer_close")(h, None) == 0
        assert f("cucore_buffer_close")(h, None) == 0  # idempotent
        assert f("cucore_buffer_size")(h, size) == 0 and size.value == 0
        assert f("cucore_buffer_address")(h, addr) == 0 and addr.value == 0
        assert f("cucore_buffer_view")(h, 0, 0, ctypes.byref(v)) == Status.ERROR_INVALID_STATE
    finally:
        assert f("cucore_buffer_release")(h) == 0
    assert f("cucore_buffer_release")(h) == Status.ERROR_INVALID_HANDLE  # released


def test_foreign_host_buffer_without_a_driver(lib):
    base = _baseline()
    host = ctypes.create_string_buffer(b"0123456789abcdef", 16)
    b = cucore.Buffer.from_handle(ctypes.addressof(host), 16)
    assert (b.size, b.handle, b.device_id, b.memory_resource, b.owner) == (16, ctypes.addressof(host), -1, None, None)
    assert (b.is_device_accessible, b.is_host_accessible) == (False, True)
    assert ctypes.string_at(b.handle, b.size) == b"0123456789abcdef"
    v = b.view(4, 8)
    assert (v.size, v.handle, v.device_id, v.memory_resource) == (8, b.handle + 4, -1, None)
    vv = v.view(2, 0)
    assert (vv.size, vv.handle) == (0, b.handle + 6)
    with pytest.raises(cucore.InvalidArgumentError, match="outside"):
        v.view(4, 8)
    assert "Buffer of 16 bytes" in repr(b) and "host" in repr(b)
    assert b == b and b != v and len({b, v, b}) == 2
    # addresses in several spellings
    for spelling in (ctypes.c_void_p(ctypes.addressof(host)), ctypes.addressof(host)):
        w = cucore.Buffer.from_handle(spelling, 16)
        assert w.handle == ctypes.addressof(host)
        w.close()
    assert _baseline()[0] == base[0] + 3
    with b:
        pass
    assert (b.size, b.handle) == (0, 0) and "closed" in repr(b)
    b.close()  # idempotent
    assert (v.size, ctypes.string_at(v.handle, 8)) == (8, b"456789ab")  # a view outlives its parent
    del v, vv
    assert _baseline() == base


def test_from_handle_arguments(lib):
    with pytest.raises(cucore.InvalidArgumentError, match="address"):
        cucore.Buffer.from_handle(0, 16)
    empty = cucore.Buffer.from_handle(0, 0)  # an empty buffer may have address 0
    assert (empty.size, empty.handle) == (0, 0)
    for bad in (1.5, "0x1000", None, True):
        with pytest.raises(TypeError):
            cucore.Buffer.from_handle(bad, 16)
    with pytest.raises(ValueError):
        cucore.Buffer.from_handle(-1, 16)
    with pytest.raises(ValueError):
        cucore.Buffer.from_handle(2**64, 16)
    with pytest.raises(ValueError):
        cucore.Buffer.from_handle(0x1000, -1)
    with pytest.raises(TypeError):
        cucore.Buffer.from_handle(0x1000, 16.0)

    class CUdeviceptrLike:  # cuda.bindings' CUdeviceptr converts with int()
        def __int__(self):
            return 0x1000

    b = cucore.Buffer.from_handle(CUdeviceptrLike(), 0)
    assert b.handle == 0x1000


def test_owner_lives_until_the_last_view_goes(lib):
    released = []

    class Owner:
        def __init__(self):
            self.memory = ctypes.create_string_buffer(b"owned memory....", 16)

        def __del__(self):
            released.append(True)

    owner = Owner()
    ref = weakref.ref(owner)
    b = cucore.Buffer.from_handle(ctypes.addressof(owner.memory), 16, owner=owner)
    assert b.owner is owner
    del owner
    gc.collect()
    v = b.view(6, 6)
    b.close()
    gc.collect()
    assert ref() is not None and not released  # the view still holds the memory
    assert ctypes.string_at(v.handle, 6) == b"memory"
    del v
    gc.collect()
    assert ref() is None and released == [True]


def test_failed_from_handle_drops_the_owner(lib):
    owner = object()
    ref_count = sys.getrefcount(owner)
    with pytest.raises(cucore.InvalidArgumentError):
        cucore.Buffer.from_handle(0, 8, owner=owner)
    assert sys.getrefcount(owner) == ref_count
    assert owner not in cucore._handle._owners.values()


def test_accessibility_and_deallocation_stream_of_foreign_memory(lib):
    host = ctypes.create_string_buffer(32)
    b = cucore.Buffer.from_handle(ctypes.addressof(host), 32)
    assert (b.is_device_accessible, b.is_host_accessible, b.is_managed) == (False, True, False)
    assert b.deallocation_stream is None
    with pytest.raises(cucore.InvalidArgumentError):
        b.grow(64)  # not virtual memory
    b.close()
    assert b.deallocation_stream is None
    with pytest.raises(cucore.InvalidHandleError, match="closed"):
        b.is_host_accessible


@pytest.mark.parametrize("fallback", [False, True], ids=["pythonapi", "memoryview"])
def test_host_memory_of_python_objects(monkeypatch, fallback):
    from cucore.buffer import _HostMemory
    if fallback:
        monkeypatch.setattr(buffer_module, "_get_buffer", None)
    data = bytearray(b"abcdefgh")
    with _HostMemory(data, True) as m:
        assert m.nbytes == 8 and ctypes.string_at(m.address, 8) == b"abcdefgh"
        ctypes.memmove(m.address, b"XY", 2)
    assert data == bytearray(b"XYcdefgh")
    with _HostMemory(b"read-only", False) as m:
        assert m.nbytes == 9 and ctypes.string_at(m.address, 9) == b"read-only"
    with _HostMemory(memoryview(b"0123456789")[2:6], False) as m:
        assert ctypes.string_at(m.address, m.nbytes) == b"2345"
    a = array.array("I", [1, 2, 3])
    with _HostMemory(a, True) as m:
        assert m.nbytes == 12
    with _HostMemory(b"", False) as m:
        assert m.nbytes == 0
    with pytest.raises(BufferError):
        _HostMemory(b"immutable", True)
    with pytest.raises(BufferError):
        _HostMemory(memoryview(bytearray(8))[::2], False)  # not contiguous
    with pytest.raises(TypeError):
        _HostMemory(42, False)
    # the exporter is pinned while exported: a bytearray cannot be resized
    if not fallback:
        grow = bytearray(4)
        with _HostMemory(grow, True):
            with pytest.raises(BufferError):
                grow.extend(b"more")
        grow.extend(b"more")


def test_fill_argument_validation_before_any_call(lib):
    host = ctypes.create_string_buffer(8)
    b = cucore.Buffer.from_handle(ctypes.addressof(host), 8)
    for value, width, exc in ((256, None, ValueError), (-1, 1, ValueError), (0x10000, 2, ValueError),
                              (2**32, 4, ValueError), (1, 3, ValueError), (1, 8, ValueError),
                              (True, None, TypeError), (1.0, None, TypeError), ("a", None, TypeError),
                              (b"abc", None, ValueError), (b"", None, ValueError), (b"ab", 4, ValueError)):
        with pytest.raises(exc):
            b.fill(value, width=width, stream=None)
    # valid values get as far as the stream
    with pytest.raises(TypeError, match="stream"):
        b.fill(0xFFFF, width=2, stream=None)
    with pytest.raises(TypeError, match="stream"):
        b.fill(b"\x01\x02\x03\x04", stream=object())


def test_unchecked_call_sites_pass_sized_integers():
    # 64-bit parameters of unchecked calls must be passed as c_uint64 (a Python int would go as a C int)
    import ast
    u64_params = {name: [i for i, t in enumerate(args) if t in ("uint64_t", "uint32_t")]
                  for name, (_, args) in _abi.ABI.items()}
    checked = 0
    for module in ("memory_resource.py", "buffer.py"):
        tree = ast.parse((REPO / "bindings" / "python" / "cucore" / module).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id.startswith("_fast_"):
                c_name = "cucore_" + node.func.id[len("_fast_"):]
                for i in u64_params[c_name]:
                    arg = node.args[i]
                    ok = (isinstance(arg, ast.Call) and arg.func.id in ("_c_uint64", "_c_uint32")) or \
                        (isinstance(arg, ast.Name) and arg.id == "csize")  # from _sizes / _size_arg()
                    assert ok, f"{module} line {node.lineno}: argument {i} of {node.func.id}"
                    checked += 1
    assert checked >= 10


# ============================================================================================================
# GPU (or the fake driver)
# ============================================================================================================


@pytest.mark.gpu
@pytest.mark.parametrize("size", [4, 12, 4096, 1 << 20])
def test_fill_patterns(gpu, stream, size):
    b = gpu.allocate(size, stream=stream)
    b.fill(0xAB, stream=stream)
    assert b.to_bytes(stream=stream) == b"\xab" * size
    b.fill(0xBEEF, width=2, stream=stream)
    assert b.to_bytes(stream=stream) == (0xBEEF).to_bytes(2, "little") * (size // 2)
    b.fill(0x12345678, width=4, stream=stream)
    assert b.to_bytes(stream=stream) == bytes([0x78, 0x56, 0x34, 0x12]) * (size // 4)
    b.fill(b"\x01\x02\x03\x04", stream=stream)  # a bytes pattern lands in memory as given
    assert b.to_bytes(stream=stream) == b"\x01\x02\x03\x04" * (size // 4)
    b.fill(bytearray(b"\xfe\xca"), stream=stream)
    assert b.to_bytes(stream=stream) == b"\xfe\xca" * (size // 2)
    b.fill(b"\x7f", stream=stream)
    assert b.to_bytes(stream=stream) == b"\x7f" * size
    b.fill(0, width=4, stream=stream)
    assert b.to_bytes(stream=stream) == bytes(size)
    b.fill(0xFFFFFFFF, width=4, stream=stream)
    assert b.to_bytes(stream=stream) == b"\xff" * size


@pytest.mark.gpu
def test_fill_checked_against_the_raw_driver(gpu, stream, raw_memory):
    b = gpu.allocate(256, stream=stream)
    b.fill(0xC0FFEE00, width=4, stream=stream)
    stream.sync()
    assert raw_memory.read(b.handle, 256) == (0xC0FFEE00).to_bytes(4, "little") * 64
    data = _random_bytes(256, seed=7)
    raw_memory.write(b.handle, data)
    assert b.to_bytes(stream=stream) == data


@pytest.mark.gpu
def test_fill_errors(gpu, stream):
    b = gpu.allocate(6, stream=stream)
    with pytest.raises(cucore.InvalidArgumentError, match="multiple"):
        b.fill(1, width=4, stream=stream)  # 6 is not a multiple of 4
    b.fill(0x0102, width=2, stream=stream)
    odd = gpu.allocate(8, stream=stream).view(1, 4)
    with pytest.raises(cucore.InvalidArgumentError, match="align"):
        odd.fill(7, width=2, stream=stream)
    odd.fill(7, stream=stream)  # bytes need no alignment
    assert odd.to_bytes(stream=stream) == b"\x07" * 4


@pytest.mark.gpu
def test_round_trip_host_device_device_host(gpu, stream):
    for n in (1, 3, 1000, 1 << 20, 3 * (1 << 20) + 17):
        data = _random_bytes(n, seed=n)
        d1 = gpu.allocate(n, stream=stream)
        d1.copy_from(data, stream=stream)
        d2 = d1.copy_to(stream=stream)  # allocated from the same resource
        assert d2 is not d1 and d2.size == n and d2.memory_resource is d1.memory_resource
        d3 = gpu.allocate(n, stream=stream)
        assert d2.copy_to(d3, stream=stream) is d3
        d4 = gpu.allocate(n, stream=stream)
        d4.copy_from(d3, stream=stream)
        out = bytearray(n)
        assert d4.copy_to_host(out, stream=stream) is out
        stream.sync()
        assert out == data
        assert d4.to_bytes(stream=stream) == data


@pytest.mark.gpu
def test_host_objects_of_every_kind(gpu, stream):
    b = gpu.allocate(16, stream=stream)
    b.copy_from(bytearray(range(16)), stream=stream)
    assert b.to_bytes(stream=stream) == bytes(range(16))
    b.copy_from(memoryview(bytes(range(100, 132)))[8:24], stream=stream)
    assert b.to_bytes(stream=stream) == bytes(range(108, 124))
    b.copy_from(array.array("I", [1, 2, 3, 4]), stream=stream)
    assert b.to_bytes(stream=stream) == array.array("I", [1, 2, 3, 4]).tobytes()
    c_arr = (ctypes.c_uint16 * 8)(*range(8))
    b.copy_from(c_arr, stream=stream)
    back = (ctypes.c_uint16 * 8)()
    b.copy_to(back, stream=stream)  # copy_to takes writable host memory too
    stream.sync()
    assert list(back) == list(range(8))
    mv = memoryview(bytearray(32))
    b.copy_to_host(mv[8:24], stream=stream)
    stream.sync()
    assert bytes(mv[8:24]) == bytes(c_arr) and bytes(mv[:8]) == bytes(8)
    # partial copies at an offset
    b.fill(0, stream=stream)
    b.copy_from_host(b"\xaa\xbb", offset=14, stream=stream)
    part = bytearray(4)
    b.copy_to_host(part, offset=12, stream=stream)
    stream.sync()
    assert part == b"\x00\x00\xaa\xbb"
    with pytest.raises(cucore.InvalidArgumentError, match="outside"):
        b.copy_from_host(b"abc", offset=14, stream=stream)
    with pytest.raises(cucore.InvalidArgumentError, match="outside"):
        b.copy_to_host(bytearray(17), stream=stream)
    with pytest.raises(ValueError, match="16"):
        b.copy_from(b"too short", stream=stream)
    with pytest.raises(BufferError):
        b.copy_to_host(b"read-only bytes!", stream=stream)
    with pytest.raises(TypeError):
        b.copy_from(12345, stream=stream)
    with pytest.raises(TypeError):
        b.copy_to("not a buffer", stream=stream)


@pytest.mark.gpu
def test_numpy_arrays(gpu, stream):
    np = pytest.importorskip("numpy")
    a = np.arange(1000, dtype=np.float32)
    b = gpu.allocate(a.nbytes, stream=stream)
    b.copy_from(a, stream=stream)
    out = np.zeros_like(a)
    b.copy_to_host(out, stream=stream)
    stream.sync()
    assert np.array_equal(a, out)
    b.fill(np.uint16(0x3C00), stream=stream)  # a NumPy scalar is a 2-byte pattern
    assert np.all(np.frombuffer(b.to_bytes(stream=stream), dtype=np.float16) == 1.0)
    with pytest.raises(BufferError):
        b.copy_from(np.arange(2000, dtype=np.float32)[::2], stream=stream)  # not contiguous


@pytest.mark.gpu
def test_copy_errors(gpu, stream):
    a, b = gpu.allocate(16, stream=stream), gpu.allocate(32, stream=stream)
    with pytest.raises(cucore.InvalidArgumentError, match="sizes differ"):
        a.copy_to(b, stream=stream)
    with pytest.raises(cucore.InvalidArgumentError, match="sizes differ"):
        a.copy_from(b, stream=stream)
    with pytest.raises(TypeError, match="stream"):
        a.copy_to(stream=None)
    with pytest.raises(TypeError):
        a.copy_to()  # stream is required
    with pytest.raises(TypeError, match="stream"):
        a.copy_from(b, stream=42)
    # a view of the same size copies fine
    a.fill(9, stream=stream)
    a.copy_to(b.view(16, 16), stream=stream)
    b.view(0, 16).fill(1, stream=stream)
    assert b.to_bytes(stream=stream) == b"\x01" * 16 + b"\x09" * 16


@pytest.mark.gpu
def test_views_share_the_parent_memory(gpu, stream, raw_memory):
    parent = gpu.allocate(256, stream=stream)
    parent.fill(0, stream=stream)
    v = parent.view(64, 32)
    assert (v.size, v.handle, v.device_id) == (32, parent.handle + 64, parent.device_id)
    assert v.memory_resource == parent.memory_resource  # the same libcucore resource
    assert v.is_device_accessible and not v.is_host_accessible
    v.copy_from(bytes(range(32)), stream=stream)
    expect = bytes(64) + bytes(range(32)) + bytes(160)
    assert parent.to_bytes(stream=stream) == expect
    assert raw_memory.read(parent.handle, 256) == expect
    # the parent's writes show through the view, at the view's offset
    parent.fill(b"\x10\x20\x30\x40", stream=stream)
    assert v.to_bytes(stream=stream) == b"\x10\x20\x30\x40" * 8
    vv = v.view(4, 8)
    assert vv.handle == parent.handle + 68
    vv.fill(0xEE, stream=stream)
    got = parent.to_bytes(stream=stream)
    assert got[68:76] == b"\xee" * 8 and got[64:68] == b"\x10\x20\x30\x40" and got[76:80] == b"\x10\x20\x30\x40"
    with pytest.raises(cucore.InvalidArgumentError):
        parent.view(250, 7)
    with pytest.raises(ValueError):
        parent.view(-1, 4)
    # a view keeps the memory after the parent is closed
    parent.close(stream)
    assert vv.to_bytes(stream=stream) == b"\xee" * 8
    assert v.to_bytes(stream=stream)[:4] == b"\x10\x20\x30\x40"
    with pytest.raises(cucore.InvalidHandleError, match="Buffer is closed"):
        parent.view(0, 4)


@pytest.mark.gpu
def test_close_then_use_raises(gpu, stream):
    base = _baseline(gpu)
    b = gpu.allocate(64, stream=stream)
    address = b.handle
    assert address
    b.close(stream)
    assert (b.size, b.handle) == (0, 0)
    assert "closed" in repr(b)
    for use in (lambda: b.fill(1, stream=stream), lambda: b.copy_to(stream=stream),
                lambda: b.copy_from(b"x" * 64, stream=stream), lambda: b.to_bytes(stream=stream),
                lambda: b.view(0, 8), lambda: b.set_deallocation_stream(stream), lambda: b.memory_resource,
                lambda: b.device_id, lambda: b.is_device_accessible, lambda: b.owner):
        with pytest.raises(cucore.InvalidHandleError, match="Buffer is closed"):
            use()
    other = gpu.allocate(64, stream=stream)
    with pytest.raises(cucore.InvalidHandleError, match="closed"):
        other.copy_from(b, stream=stream)
    b.close()  # idempotent
    b.close(stream)
    with gpu.allocate(32, stream=stream) as c:
        c.fill(1, stream=stream)
    assert c.size == 0
    b = c = other = None
    assert _baseline() == base


@pytest.mark.gpu
def test_close_returns_the_memory(gpu, stream, fake_driver):
    if not fake_driver:
        pytest.skip("only the fake driver tells freed memory apart (using it on a real device is undefined)")
    b = gpu.allocate(64, stream=stream)
    ghost = cucore.Buffer.from_handle(b.handle, 64, device_id=gpu)
    ghost.fill(1, stream=stream)  # live memory: fine
    b.close(stream)
    stream.sync()
    with pytest.raises(cucore.DriverError, match="INVALID_VALUE"):
        ghost.fill(1, stream=stream)  # freed by close()
    # a view keeps the memory past close() until it goes
    b = gpu.allocate(64, stream=stream)
    v = b.view(8, 8)
    ghost = cucore.Buffer.from_handle(b.handle, 64, device_id=gpu)
    b.close(stream)
    ghost.fill(2, stream=stream)
    del v
    gc.collect()
    stream.sync()
    with pytest.raises(cucore.DriverError):
        ghost.fill(2, stream=stream)
    # page-locked memory is freed at once
    pinned = cucore.LegacyPinnedMemoryResource(gpu).allocate(32)
    ghost = cucore.Buffer.from_handle(pinned.handle, 32, device_id=gpu)
    ghost.fill(3, stream=stream)
    pinned.close()
    with pytest.raises(cucore.DriverError):
        ghost.fill(3, stream=stream)


@pytest.mark.gpu
def test_close_arguments(gpu, stream):
    b = gpu.allocate(64, stream=stream)
    s2 = gpu.create_stream()
    s2.close()
    with pytest.raises(cucore.InvalidHandleError, match="Stream is closed"):
        b.close(s2)
    with pytest.raises(TypeError):
        b.close("stream")
    assert b.size == 64  # still open after a failed close
    b.close(ForeignStream(stream))
    assert b.size == 0


@pytest.mark.gpu
def test_zero_size_buffers(gpu, stream):
    for mr in (gpu.memory_resource, cucore.LegacyPinnedMemoryResource(gpu)):
        b = mr.allocate(0, stream=stream)
        assert (b.size, b.handle) == (0, 0)
        b.fill(0xAB, stream=stream)
        b.fill(0xABCD, width=2, stream=stream)
        assert b.to_bytes(stream=stream) == b""
        c = b.copy_to(stream=stream)
        assert c.size == 0
        b.copy_from(b"", stream=stream)
        b.copy_from(c, stream=stream)
        v = b.view(0, 0)
        assert v.size == 0
        with pytest.raises(cucore.InvalidArgumentError):
            b.view(0, 1)
        b.close(stream)
        c.close()


@pytest.mark.gpu
def test_deallocation_on_another_stream(gpu, stream):
    base = _baseline(gpu)
    errors = cucore.release_error_count()
    s2 = gpu.create_stream()
    b = gpu.allocate(1 << 16, stream=stream)
    b.fill(0x42, stream=stream)
    s2.wait(stream)  # the free on s2 must come after the work on `stream`
    b.set_deallocation_stream(s2)
    s2.close()  # the buffer holds the stream
    del b  # freed on s2
    gc.collect()
    stream.sync()
    # close(stream) overrides the deallocation stream; a foreign __cuda_stream__ object works too
    s3 = gpu.create_stream()
    c = gpu.allocate(1024, stream=stream)
    c.fill(1, stream=stream)
    s3.wait(stream)
    c.set_deallocation_stream(ForeignStream(s3))
    d = gpu.allocate(1024, stream=s3)
    stream.wait(s3)  # a free on another stream must be ordered after the allocation
    d.close(ForeignStream(stream))
    c.close()
    s3.sync()
    with pytest.raises(TypeError):
        gpu.allocate(8, stream=stream).set_deallocation_stream(None)
    gpu.sync()
    del c, d, s3
    assert cucore.release_error_count() == errors
    assert _baseline() == base


@pytest.mark.gpu
def test_free_waits_for_a_blocked_deallocation_stream(gpu, stream):
    gate = threading.Event()
    s2 = gpu.create_stream()
    s2.launch_host_func(gate.wait, 30)
    b = gpu.allocate(4096, stream=s2)  # allocated and freed behind the blocked host function
    b.close()  # queued: returns at once
    assert not s2.is_done
    gate.set()
    s2.sync()
    assert s2.is_done


@pytest.mark.gpu
def test_stream_arguments(gpu, stream):
    b = gpu.allocate(64, stream=ForeignStream(stream))  # any __cuda_stream__ object
    b.fill(5, stream=ForeignStream(stream))
    assert b.to_bytes(stream=ForeignStream(stream)) == b"\x05" * 64
    with pytest.raises(TypeError):
        gpu.allocate(64)  # the stream is required
    with pytest.raises(cucore.InvalidArgumentError, match="stream"):
        gpu.memory_resource.allocate(64)  # a pool allocates in stream order
    with pytest.raises(TypeError):
        gpu.allocate(64, stream=1)
    with pytest.raises(TypeError):
        gpu.allocate(1.5, stream=stream)
    with pytest.raises(ValueError):
        gpu.allocate(-1, stream=stream)
    with pytest.raises(ValueError):
        gpu.allocate(2**64, stream=stream)
    closed = gpu.create_stream()
    closed.close()
    with pytest.raises(cucore.InvalidHandleError, match="Stream is closed"):
        gpu.allocate(64, stream=closed)
    with pytest.raises(cucore.InvalidHandleError, match="Stream is closed"):
        b.fill(1, stream=closed)
    with pytest.raises(cucore.InvalidHandleError, match="Stream is closed"):
        b.copy_to(stream=closed)
    with pytest.raises((cucore.OutOfMemoryError, cucore.DriverError)):
        gpu.allocate(1 << 62, stream=stream)


@pytest.mark.gpu
def test_stream_of_another_device(gpu, stream):
    if cucore.Device.count() < 2:
        pytest.skip("needs two devices")
    other = cucore.Device(1).create_stream()
    with pytest.raises(cucore.InvalidArgumentError, match="device"):
        gpu.allocate(64, stream=other)
    gpu.set_current()


@pytest.mark.gpu
def test_deallocation_stream(gpu, stream):
    b = gpu.allocate(64, stream=stream)
    assert b.deallocation_stream == stream and b.deallocation_stream is not stream  # its own reference
    other = gpu.create_stream()
    b.deallocation_stream = other
    assert b.deallocation_stream == other
    b.close()
    assert b.deallocation_stream is None
    pinned = cucore.LegacyPinnedMemoryResource(gpu).allocate(64)
    assert pinned.deallocation_stream is None  # synchronous memory


@pytest.mark.gpu
def test_from_handle_of_another_buffers_memory(gpu, stream):
    base = _baseline(gpu)
    errors = cucore.release_error_count()
    a = gpu.allocate(1024, stream=stream)
    a.fill(0x11, stream=stream)
    ref = weakref.ref(a)
    w = cucore.Buffer.from_handle(a.handle, 1024, device_id=gpu.device_id, owner=a)
    assert (w.size, w.handle, w.device_id, w.memory_resource, w.owner) == (1024, a.handle, gpu.device_id, None, a)
    assert w.is_device_accessible and not w.is_host_accessible
    del a
    gc.collect()
    assert ref() is not None  # kept alive by the wrapper
    assert w.to_bytes(stream=stream) == b"\x11" * 1024
    w.fill(0x22, stream=stream)
    part = w.view(512, 512)
    w.close()  # frees nothing: the memory is a's
    gc.collect()
    assert ref() is not None  # the view still uses it
    assert part.to_bytes(stream=stream) == b"\x22" * 512
    del part  # libcucore lets go of the wrapper, then the owner goes and frees its memory (once)
    gc.collect()
    assert ref() is None
    stream.sync()
    gpu.sync()
    assert cucore.release_error_count() == errors
    assert _baseline() == base


@pytest.mark.gpu
def test_from_handle_of_raw_driver_memory(gpu, stream, raw_memory):
    freed = []

    class RawAllocation:
        def __init__(self, size):
            ptr = ctypes.c_uint64()
            raw_memory.check(raw_memory.cuMemAlloc_v2(ctypes.byref(ptr), size), "cuMemAlloc")
            self.ptr = ptr.value

        def __del__(self):
            freed.append(raw_memory.cuMemFree_v2(self.ptr))

    alloc = RawAllocation(4096)
    b = cucore.Buffer.from_handle(alloc.ptr, 4096, owner=alloc, device_id=gpu)
    raw_memory.write(alloc.ptr, b"\x99" * 4096)
    assert b.to_bytes(stream=stream) == b"\x99" * 4096
    b.fill(b"\xa1\xb2", stream=stream)
    stream.sync()
    assert raw_memory.read(alloc.ptr, 8) == b"\xa1\xb2" * 4
    copy = b.copy_to(gpu.allocate(4096, stream=stream), stream=stream)
    assert copy.to_bytes(stream=stream) == b"\xa1\xb2" * 2048
    with pytest.raises(ValueError, match="foreign"):
        b.copy_to(stream=stream)  # nothing to allocate from
    del alloc
    stream.sync()
    b.close()
    gc.collect()
    assert freed == [0]  # freed once, by its owner, after libcucore let go


@pytest.mark.gpu
def test_released_and_wrong_type_handles(gpu, stream, lib):
    f = lib.function
    b = gpu.allocate(64, stream=stream)
    mr = gpu.memory_resource
    bh, mh, sh = b._h, mr._h, stream._h
    size = ctypes.c_uint64()
    kind = ctypes.c_int()
    assert f("cucore_buffer_size")(mh, size) == Status.ERROR_INVALID_HANDLE
    assert f("cucore_buffer_size")(sh, size) == Status.ERROR_INVALID_HANDLE
    assert f("cucore_memory_resource_kind")(bh, kind) == Status.ERROR_INVALID_HANDLE
    assert f("cucore_buffer_copy")(bh, bh, mh) == Status.ERROR_INVALID_HANDLE
    assert f("cucore_buffer_fill")(bh, 0, 1, bh) == Status.ERROR_INVALID_HANDLE
    assert f("cucore_stream_synchronize")(bh) == Status.ERROR_INVALID_HANDLE
    assert lib.unchecked_function("cucore_buffer_release")(mh) == Status.ERROR_INVALID_HANDLE
    assert f("cucore_memory_resource_allocate")(mh, 8, bh, ctypes.byref(ctypes.c_void_p())) == \
        Status.ERROR_INVALID_HANDLE
    assert f("cucore_buffer_size")(bh, size) == 0 and size.value == 64  # still fine
    b.close()
    assert f("cucore_buffer_size")(bh, size) == Status.ERROR_INVALID_HANDLE
    assert f("cucore_buffer_release")(bh) == Status.ERROR_INVALID_HANDLE
    p = cucore.LegacyPinnedMemoryResource(gpu)
    ph = p._h
    p.close()
    assert f("cucore_memory_resource_kind")(ph, kind) == Status.ERROR_INVALID_HANDLE
    assert f("cucore_memory_resource_release")(ph) == Status.ERROR_INVALID_HANDLE
    with pytest.raises(cucore.InvalidHandleError, match="LegacyPinnedMemoryResource is closed"):
        p.allocate(8)
    p.close()  # idempotent


@pytest.mark.gpu
def test_concurrent_allocations(gpu):
    errors = []
    base = _baseline(gpu)
    start = threading.Barrier(4)

    def worker(seed):
        try:
            s = gpu.create_stream()
            start.wait()
            for i in range(50):
                n = 64 * (1 + (seed + i) % 7)
                b = gpu.allocate(n, stream=s)
                b.fill((seed * 50 + i) % 256, stream=s)
                v = b.view(n // 2, n // 2)
                got = v.to_bytes(stream=s)
                if got != bytes([(seed * 50 + i) % 256]) * (n // 2):
                    errors.append((seed, i))
                b.close(s)
            s.sync()
            s.close()
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[:5]
    assert _baseline() == base


@pytest.mark.gpu
def test_live_object_count_back_to_baseline(gpu):
    base = _baseline(gpu)
    s = gpu.create_stream()
    pool = cucore.DeviceMemoryResource(gpu, cucore.DeviceMemoryResourceOptions())
    pinned = cucore.LegacyPinnedMemoryResource(gpu)
    bufs = [pool.allocate(128, stream=s), pinned.allocate(128), gpu.allocate(128, stream=s)]
    views = [b.view(0, 64) for b in bufs]
    copies = [b.copy_to(stream=s) for b in bufs]
    assert cucore.live_object_count(cucore.ObjectType.BUFFER) == base[0] + 9
    assert cucore.live_object_count(cucore.ObjectType.MEMORY_RESOURCE) >= base[1] + 2
    bufs[0].close(s)
    del bufs, views, copies, pool, pinned
    s.sync()
    assert _baseline() == base


SHUTDOWN = textwrap.dedent("""
    import cucore
    dev = cucore.Device(0)
    dev.set_current()
    s = dev.create_stream()
    keep = [dev.allocate(1 << 16, stream=s) for _ in range(3)]
    pool = cucore.DeviceMemoryResource(0, cucore.DeviceMemoryResourceOptions())
    pooled = pool.allocate(4096, stream=s)
    pinned = cucore.LegacyPinnedMemoryResource().allocate(256)
    view = keep[0].view(0, 16)
    wrapped = cucore.Buffer.from_handle(keep[1].handle, 16, owner=keep[1], device_id=0)
    keep[2].fill(3, stream=s)
    print("bytes", keep[2].to_bytes(stream=s)[:2].hex(), flush=True)
    # exit with everything alive: finalizers and module teardown must stay silent
""")


@pytest.mark.gpu
def test_buffers_alive_at_interpreter_exit():
    env = dict(os.environ, PYTHONPATH=str(REPO / "bindings" / "python"))
    r = subprocess.run([sys.executable, "-c", SHUTDOWN], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "bytes 0303" in r.stdout
    assert "Exception ignored" not in r.stderr and "Traceback" not in r.stderr, r.stderr


