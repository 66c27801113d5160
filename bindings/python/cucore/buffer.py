"""Buffers (include/cucore/buffer.h): ranges of memory from a memory resource (memory_resource.py and the
kinds' modules: memory_pool.py, managed_memory.py, virtual_memory.py, user_memory.py) or wrapped foreign memory.

    dev = cucore.Device(0)
    dev.set_current()
    s = dev.create_stream()
    buf = dev.allocate(1 << 20, stream=s)     # from the device's current memory pool, in stream order
    buf.fill(0xAB, stream=s)
    data = buf.to_bytes(stream=s)            # b"\\xab" * (1 << 20)
    buf.close(s)                             # freed on `s` (default: the allocation stream)

Every operation on a buffer is ordered on the stream it is given (copies and fills are asynchronous; a
copy to or from pageable host memory has consumed or filled the host memory when the call returns, as
the driver does; page-locked host memory must stay alive and untouched until the stream has run the copy).
Host memory of Python objects is reached through the buffer protocol (_HostMemory, also used by
copy_3d.py).

Buffer is the lowest memory layer (bindings/python/README.md, "Layers"): memory exists without a resource
(foreign memory, DLPack imports, graphics mappings), and the resources, above this module, make buffers.
Only Buffer.memory_resource names a resource: memory_resource.py hands MemoryResource down to this module.
"""
from __future__ import annotations

import ctypes
import operator
import sys
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple, Union

from . import _lib
from ._handle import HandleObject, wrap_foreign
from .common import _U64_MAX, _u64, closed_error, raise_error
from .device import Device, _device
from .stream import Stream, _open_stream_handle, _stream_of

(_cucore_buffer_from_handle, _cucore_buffer_retain, _cucore_buffer_release, _cucore_buffer_close,
 _cucore_buffer_set_deallocation_stream, _cucore_buffer_size, _cucore_buffer_address, _cucore_buffer_device_id,
 _cucore_buffer_memory_resource, _cucore_buffer_view, _cucore_buffer_copy, _cucore_buffer_copy_from_host,
 _cucore_buffer_copy_to_host, _cucore_buffer_fill, _cucore_buffer_accessibility, _cucore_buffer_deallocation_stream,
 _cucore_buffer_grow, _cucore_buffer_dispose) = _lib.bind(
    globals(), "cucore_buffer_from_handle", "cucore_buffer_retain", "cucore_buffer_release", "cucore_buffer_close",
    "cucore_buffer_set_deallocation_stream", "cucore_buffer_size", "cucore_buffer_address",
    "cucore_buffer_device_id", "cucore_buffer_memory_resource", "cucore_buffer_view", "cucore_buffer_copy",
    "cucore_buffer_copy_from_host", "cucore_buffer_copy_to_host", "cucore_buffer_fill",
    "cucore_buffer_accessibility", "cucore_buffer_deallocation_stream", "cucore_buffer_grow", "cucore_buffer_dispose")
(_fast_buffer_release, _fast_buffer_dispose, _fast_buffer_view, _fast_buffer_copy, _fast_buffer_copy_from_host,
 _fast_buffer_copy_to_host, _fast_buffer_fill) = _lib.bind_unchecked(
    globals(), "cucore_buffer_release", "cucore_buffer_dispose", "cucore_buffer_view", "cucore_buffer_copy",
    "cucore_buffer_copy_from_host", "cucore_buffer_copy_to_host", "cucore_buffer_fill")

_c_void_p = ctypes.c_void_p
_c_int = ctypes.c_int
_c_uint32 = ctypes.c_uint32
_c_uint64 = ctypes.c_uint64
_new = object.__new__
_handle_outs = _lib.outs(_c_void_p)
_new_out = _lib.new_out
_handle_arg = _lib.handle_arg
_Stream = Stream

# Handed down by the modules above when they are imported (_lib.hand_down).
if TYPE_CHECKING:  # for type checkers only: at run time the modules above hand these down (else:)
    from . import dlpack, ipc, memory_operations
    from .memory_resource import MemoryResource
else:
    MemoryResource = None  # memory_resource.py: Buffer.memory_resource
    ipc = None             # ipc.py: the work of the IPC methods
    dlpack = None          # dlpack.py: the work of the DLPack and CUDA Array Interface methods
    memory_operations = None  # memory_operations.py: copies with CopyOptions (copy_batch)

_UNKNOWN = object()  # Buffer._mr not asked yet (views, Device.allocate): ask libcucore on first use


# ---- argument conversion (cold paths; the hot paths inline the common case) ----------------------------


def _address(value):
    """An address given as an int, an object with __index__ or __int__ (e.g. cuda.bindings' CUdeviceptr)
    or a ctypes c_void_p."""
    if isinstance(value, (bool, float)):
        raise TypeError(f"an address must be an int, not {type(value).__name__}")
    if isinstance(value, ctypes.c_void_p):
        return value.value or 0
    try:
        value = operator.index(value)
    except TypeError:
        if not hasattr(type(value), "__int__"):
            raise TypeError(f"an address must be an int (or convertible with int()), not "
                            f"{type(value).__name__}") from None
        value = int(value)
    if not 0 <= value <= _U64_MAX:
        raise ValueError(f"address {value:#x} does not fit in 64 bits")
    return value


# ---- host memory of Python objects (the buffer protocol) ----------------------------------------------

class _PyBuffer(ctypes.Structure):
    """CPython's Py_buffer (stable layout since 3.3)."""
    _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.c_void_p), ("len", ctypes.c_ssize_t),
                ("itemsize", ctypes.c_ssize_t), ("readonly", ctypes.c_int), ("ndim", ctypes.c_int),
                ("format", ctypes.c_void_p), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("suboffsets", ctypes.c_void_p), ("internal", ctypes.c_void_p)]


_PyBUF_SIMPLE = 0     # a contiguous buffer, read-only is fine
_PyBUF_WRITABLE = 1   # a contiguous, writable buffer
try:
    if sys.implementation.name != "cpython":
        raise AttributeError
    _get_buffer: Any = ctypes.pythonapi.PyObject_GetBuffer
    _get_buffer.argtypes = [ctypes.py_object, ctypes.POINTER(_PyBuffer), ctypes.c_int]
    _get_buffer.restype = ctypes.c_int
    _release_buffer: Any = ctypes.pythonapi.PyBuffer_Release
    _release_buffer.argtypes = [ctypes.POINTER(_PyBuffer)]
    _release_buffer.restype = None
except AttributeError:  # pragma: no cover - not CPython
    _get_buffer = _release_buffer = None


class _HostMemory:
    """The contiguous memory of a buffer-protocol object (bytes, bytearray, memoryview, array.array, NumPy
    arrays, ...), exported for the duration of a `with` block: `.address` and `.nbytes`. The exporter
    cannot resize or free it meanwhile."""
    __slots__ = ("view", "address", "nbytes", "_keep")

    def __init__(self, obj, writable):
        self._keep = None
        if _get_buffer is not None:
            view = _PyBuffer()
            # raises TypeError (not a buffer), BufferError (not contiguous, or read-only when writable)
            try:
                _get_buffer(obj, view, _PyBUF_WRITABLE if writable else _PyBUF_SIMPLE)
            except ValueError as e:  # NumPy says "ndarray is not C-contiguous" with a ValueError
                raise BufferError(str(e)) from e
            self.view = view
            self.address = view.buf or 0
            self.nbytes = view.len
            return
        # Other interpreters: memoryview and ctypes (read-only memory is copied first).
        self.view = None
        mv = memoryview(obj)
        if not mv.c_contiguous:
            raise BufferError("host memory must be C-contiguous")
        mv = mv.cast("B")
        if mv.readonly:
            if writable:
                raise BufferError("the destination is read-only")
            mv = memoryview(bytearray(mv))
        self.nbytes = mv.nbytes
        if mv.nbytes:
            arr = (ctypes.c_char * mv.nbytes).from_buffer(mv)
            self._keep = (mv, arr)
            self.address = ctypes.addressof(arr)
        else:
            self.address = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        view = self.view
        if view is not None:
            self.view = None
            _release_buffer(view)
        self._keep = None


def _is_host_buffer(obj):
    try:
        memoryview(obj).release()
        return True
    except TypeError:
        return False


class _Deallocation:
    """What keeps the memory of Buffer.from_handle(ptr, size, mr) and gives it back: when libcucore lets go of
    the memory (the last buffer or view gone, or close()), mr.deallocate(ptr, size, stream=stream)."""

    __slots__ = ("mr", "ptr", "size", "stream")

    def __init__(self, mr: Any, ptr: int, size: int, stream: Any) -> None:
        self.mr, self.ptr, self.size, self.stream = mr, ptr, size, stream

    def _cucore_release(self) -> None:
        self.mr.deallocate(self.ptr, self.size, stream=self.stream)


# ---- buffers --------------------------------------------------------------------------------------------

class _MemoryAccess:
    """Who can reach memory, as cuda.core's Buffer and MemoryResource both answer it: the properties of a Buffer
    (its memory) and of a MemoryResource (the memory it gives). Each class reads the three answers with its
    `_accessibility()`: (device-accessible, host-accessible, managed)."""

    __slots__ = ()

    if TYPE_CHECKING:
        def _accessibility(self) -> Tuple[bool, bool, bool]: ...

    @property
    def is_device_accessible(self) -> bool:
        """Whether the memory can be accessed from the device (foreign host memory reads False)."""
        return self._accessibility()[0]

    @property
    def is_host_accessible(self) -> bool:
        """Whether the memory can be accessed from the host (CPU)."""
        return self._accessibility()[1]

    @property
    def is_managed(self) -> bool:
        """Whether the memory is managed (unified) memory: advice, prefetch and discard apply (ManagedBuffer)."""
        return self._accessibility()[2]


class Buffer(HandleObject, _MemoryAccess):
    """A range of memory: `size` bytes at `handle` (the address, an int), from `memory_resource` (None for
    foreign memory wrapped with Buffer.from_handle).

    The memory is freed when the buffer and all its views are gone (stream-ordered on its deallocation
    stream for pools), or earlier with close(). After close(), `size` and `handle` read 0 and every other
    use raises InvalidHandleError. Copies and fills are ordered on the stream they are given."""

    __slots__ = ("_size", "_mr", "_owner", "_hv")
    _size: int
    _hv: int  # the handle's value, for the structs of batched calls (ctypes.cast of _h costs ~1 us)
    _mr: Any
    _owner: Any
    _release = staticmethod(_fast_buffer_release)

    def __new__(cls, *args, **kwargs):
        raise TypeError("Buffer cannot be instantiated directly: use MemoryResource.allocate(), "
                        "Device.allocate() or Buffer.from_handle()")

    @classmethod
    def _wrap(cls, hv, size, mr):
        b = _new(cls)
        b._h = _handle_arg(hv)
        b._hv = hv
        b._raw = None
        b._size = size
        b._mr = mr
        return b

    @staticmethod
    def from_handle(ptr: Any, size: int, mr: Optional[MemoryResource] = None, owner: Any = None, *,
                    stream: Any = None, device_id: Union[Device, int, None] = None) -> Buffer:
        """Wrap `size` bytes at `ptr` (an int, or anything int() takes, e.g. a CUdeviceptr) that this library
        did not allocate, as cuda.core's Buffer.from_handle does.

        - `mr` (a MemoryResource): the memory is `mr`'s; when the buffer and all its views are gone (or it is
          closed) it goes back through `mr.deallocate(ptr, size, stream=...)`, on `stream` (or the stream
          given to close() or set_deallocation_stream(); by default the legacy default stream of `mr`'s
          device, or of the current device for host memory).
        - `owner`: kept alive until then instead, never told to free anything (`owner` and `mr` cannot be
          given together).
        - neither: the memory is only referenced, never freed.

        The memory is `mr`'s device's (or host memory for a host resource), else on device `device_id` (an
        ordinal or a Device; cucore's addition), else host memory."""
        address = _address(ptr)
        size = _u64(size, "size")
        if mr is not None and owner is not None:
            raise ValueError("Buffer.from_handle(): give mr or owner, not both")
        if mr is not None:
            if not isinstance(mr, MemoryResource):
                raise TypeError(f"mr must be a MemoryResource, not {type(mr).__name__}")
            if device_id is None and mr.device_id >= 0:
                device_id = mr.device_id
        dev = None if device_id is None else _device(device_id)
        keeper = owner
        if mr is not None:
            if stream is None:
                stream = (dev if dev is not None else Device()).default_stream
            keeper = _Deallocation(mr, address, size, stream)
        st, hv = wrap_foreign(_cucore_buffer_from_handle, keeper, address, size, None if dev is None else dev._h)
        if st:
            raise_error(st, dev)
        b = Buffer._wrap(hv, size, mr)
        b._owner = keeper
        return b

    # ---- lifetime ---------------------------------------------------------------------------------

    def close(self, stream: Any = None) -> None:
        """Free the memory now, ordered on `stream` (a Stream or any object with __cuda_stream__; None:
        the deallocation stream), and drop this object's reference. Views keep the memory until they go.
        Idempotent; later use raises InvalidHandleError (size and handle read 0)."""
        h = self._h
        if h is None:
            return
        if stream is None:  # the common case: no stream to check, no owner to tell
            self._h = None  # taken first: a concurrent close() sees it closed and does nothing
            st = _fast_buffer_dispose(h, None)  # close + release in one call
            if st:
                self._h = h  # still open: the caller may retry, or the finalizer frees it
                raise_error(st, self)
            self._mr = self._owner = None
            return
        if type(stream) is _Stream:
            keep = stream
            sh = stream._h
            if sh is None:
                raise closed_error(stream)
        else:
            keep, sh = _open_stream_handle(stream)
        h = self._h
        if h is None:
            return
        self._h = None
        if type(getattr(self, "_owner", None)) is _Deallocation:
            self._owner.stream = keep  # memory of Buffer.from_handle(ptr, size, mr): mr frees it on `stream`
        st = _fast_buffer_dispose(h, sh)  # close + release in one call
        if st:
            self._h = h
            raise_error(st, self, keep)
        self._mr = self._owner = None

    def set_deallocation_stream(self, stream: Any) -> None:
        """Free the memory on `stream` (a Stream or any object with __cuda_stream__; the buffer holds it)
        when it is released or closed without a stream."""
        s = _stream_of(stream)
        st = _cucore_buffer_set_deallocation_stream(self._h, s._h)
        if st:
            raise_error(st, self, s)
        if type(getattr(self, "_owner", None)) is _Deallocation:
            self._owner.stream = s

    # ---- properties -------------------------------------------------------------------------------

    @property
    def size(self) -> int:
        """The size in bytes (0 once closed)."""
        return self._size if self._h is not None else 0

    @property
    def handle(self) -> int:
        """The address as an int: a CUdeviceptr for device memory, a host pointer for host memory (0 for
        an empty buffer, and once closed)."""
        h = self._h
        if h is None:
            return 0
        raw = self._raw
        if raw is None:
            out = _c_uint64()
            st = _cucore_buffer_address(h, out)
            if st:
                raise_error(st, self)
            raw = self._raw = out.value
        return raw

    @property
    def device_id(self) -> Optional[int]:
        """The ordinal of the device whose memory this is, or -1 for host memory."""
        out = _c_int()
        st = _cucore_buffer_device_id(self._h, out)
        if st:
            raise_error(st, self)
        return out.value

    @property
    def memory_resource(self) -> Optional[MemoryResource]:
        """The MemoryResource the memory came from (for a view: its parent's), or None for foreign memory."""
        h = self._h
        if h is None:
            raise closed_error(self)
        mr = self._mr
        if mr is _UNKNOWN or (mr is not None and mr._h is None):  # a view's, or its wrapper was closed
            out = _c_void_p()
            st = _cucore_buffer_memory_resource(h, out)
            if st:
                raise_error(st, self)
            mr = self._mr = MemoryResource._from_owned_handle(out.value) if out.value else None
        return mr

    @property
    def owner(self) -> Any:
        """The `owner` given to Buffer.from_handle (None otherwise)."""
        if self._h is None:
            raise closed_error(self)
        owner = getattr(self, "_owner", None)
        return None if type(owner) is _Deallocation else owner

    @property
    def is_mapped(self) -> bool:
        """Whether this buffer is memory of another process, mapped through IPC (Buffer.from_ipc_descriptor)."""
        mr = self.memory_resource
        return mr is not None and mr.is_mapped

    def __buffer__(self, flags: int) -> memoryview:
        """The buffer protocol (Python 3.12+: `memoryview(buf)`), for host-accessible memory: a writable
        memoryview of its bytes, valid while the buffer is open. Device-only memory raises BufferError (read
        it with copy_to_host)."""
        if self._h is None:
            raise closed_error(self)
        if not self.is_host_accessible:
            raise BufferError("this Buffer's memory is not host-accessible: copy it to host memory first")
        view = memoryview((ctypes.c_char * self._size).from_address(self.handle) if self._size else bytearray())
        return view.cast("B")

    def _accessibility(self):
        """(device-accessible, host-accessible, managed) as libcucore knows them for this memory."""
        d, h, m = _c_int(), _c_int(), _c_int()
        st = _cucore_buffer_accessibility(self._h, d, h, m)
        if st:
            raise_error(st, self)
        return bool(d.value), bool(h.value), bool(m.value)

    @property
    def deallocation_stream(self) -> Optional[Stream]:
        """The Stream the memory will be freed on, or None for synchronous resources (legacy pinned,
        virtual), foreign memory and closed buffers. Assigning a stream is set_deallocation_stream()."""
        if self._h is None:
            return None
        out = _c_void_p()
        st = _cucore_buffer_deallocation_stream(self._h, out)
        if st:
            raise_error(st, self)
        return _Stream._wrap(out) if out.value else None

    @deallocation_stream.setter
    def deallocation_stream(self, stream: Any) -> None:
        self.set_deallocation_stream(stream)

    def grow(self, new_size: int) -> Buffer:
        """Grow a buffer of a VirtualMemoryResource to `new_size` bytes, keeping its contents (in place
        while its reservation allows, else remapped: `handle` may change). A size not above the current
        one changes nothing. Not while views of it exist. Returns self."""
        new_size = _u64(new_size, "new_size")
        st = _cucore_buffer_grow(self._h, new_size)
        if st:
            raise_error(st, self)
        size = _c_uint64()
        st = _cucore_buffer_size(self._h, size)
        if st:
            raise_error(st, self)
        self._size = size.value
        self._raw = None  # the address may have moved
        return self

    def __repr__(self):
        if self._h is None:
            return "<Buffer (closed)>"
        try:
            where = "host" if self.device_id < 0 else f"device {self.device_id}"
            return f"<Buffer of {self._size} bytes at 0x{self.handle:x} on {where}>"
        except Exception:
            return "<Buffer>"

    # ---- IPC (the work is in ipc.py) --------------------------------------------------------------

    @property
    def ipc_descriptor(self) -> Any:
        """The IPCBufferDescriptor of this whole buffer of an IPC-enabled pool, for another process (picklable;
        `bytes(d)` is its 128-byte payload)."""
        return ipc.export_buffer(self)

    @classmethod
    def from_ipc_descriptor(cls, mr: MemoryResource, ipc_descriptor: Any, *, stream: Any) -> Buffer:
        """The buffer of `ipc_descriptor` (an IPCBufferDescriptor, or its bytes) mapped into the imported pool
        `mr`, freed on `stream`."""
        return ipc.import_buffer(mr, ipc_descriptor, stream)

    def __reduce__(self):
        return ipc.reduce_buffer(self)  # buffers of IPC-enabled pools only

    # Identity: two Buffer objects never share a libcucore buffer.
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    # ---- DLPack and the CUDA Array Interface (dlpack.py) ---------------------------------------

    def __dlpack__(self, *, stream: Any = None, max_version: Optional[Tuple[int, int]] = None, dl_device: Optional[Tuple[int, int]] = None, copy: Optional[bool] = None) -> Any:
        """A DLPack capsule of this buffer's bytes (1-D uint8), zero-copy (see cucore.dlpack)."""
        return dlpack.export(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self) -> Tuple[int, int]:
        """(DLDeviceType, device id) of the memory."""
        return dlpack.device(self)

    @property
    def __cuda_array_interface__(self) -> Dict[str, Any]:
        """Version 3 of the CUDA Array Interface: the bytes as a 1-D "|u1" array (device-accessible memory only)."""
        return dlpack.cuda_array_interface(self)

    @classmethod
    def from_cuda_array_interface(cls, obj: Any, *, stream: Any = None, device_id: Union[Device, int, None] = None) -> Buffer:
        """A Buffer over the memory `obj` describes with __cuda_array_interface__ (see cucore.dlpack)."""
        return dlpack.from_cuda_array_interface(obj, stream=stream, device_id=device_id)

    # ---- views ------------------------------------------------------------------------------------

    def view(self, offset: int, size: int) -> Buffer:
        """A Buffer of `size` bytes at `offset` into this one, sharing its memory and keeping it alive
        (closing or releasing a view frees nothing)."""
        if type(offset) is not int or not 0 <= offset <= _U64_MAX:
            offset = _u64(offset, "offset")
        if type(size) is not int or not 0 <= size <= _U64_MAX:
            size = _u64(size, "size")
        try:
            out, ref = pair = _handle_outs.pop()
        except IndexError:
            out, ref = pair = _new_out(_c_void_p)
        st = _fast_buffer_view(self._h, _c_uint64(offset), _c_uint64(size), ref)
        h = out.value
        _handle_outs.append(pair)
        if st:
            raise_error(st, self)
        b = _new(type(self))  # a view of a ManagedBuffer is one too
        b._h = _handle_arg(h)
        b._hv = h
        b._raw = None
        b._size = size
        b._mr = _UNKNOWN
        return b

    # ---- copies and fills -------------------------------------------------------------------------

    def copy_to(self, dst: Any = None, *, stream: Any, options: Any = None) -> Any:
        """Copy all of this buffer into `dst` (a Buffer of the same size) on `stream` and return `dst`. With
        no `dst`, allocate one from this buffer's memory resource on `stream` first. A writable host object
        (bytearray, NumPy array, ...) as `dst` is copy_to_host(dst). `options` (a cucore.utils.CopyOptions:
        source access order, location hints, overlap) makes it a batched copy of one (cuMemcpyBatchAsync), as
        in cuda.core: not on the legacy default stream nor on a capturing stream."""
        s = stream if type(stream) is _Stream else _stream_of(stream)
        if dst is None:
            mr = self.memory_resource
            if mr is None:
                raise ValueError("copy_to() without a destination needs a memory resource to allocate from; "
                                 "this buffer wraps foreign memory")
            dst = mr.allocate(self._size, stream=s)
        elif not isinstance(dst, Buffer):
            if _is_host_buffer(dst):
                return self.copy_to_host(dst, stream=s)
            raise TypeError(f"copy_to() takes a Buffer, writable host memory or None, not {type(dst).__name__}")
        if options is not None:
            memory_operations.copy_batch(s, [self], [dst], options=options)
            return dst
        st = _fast_buffer_copy(dst._h, self._h, s._h)
        if st:
            raise_error(st, dst, self, s)
        return dst

    def copy_from(self, src: Any, *, stream: Any, options: Any = None) -> None:
        """Copy all of `src` into this buffer on `stream`: `src` is a Buffer of the same size, or host
        memory of the same size (any contiguous buffer-protocol object: bytes, bytearray, memoryview,
        array.array, NumPy arrays...; see copy_from_host). `options` (a cucore.utils.CopyOptions, with a Buffer
        source) makes it a batched copy of one, as copy_to does."""
        s = stream if type(stream) is _Stream else _stream_of(stream)
        if options is not None:
            if not isinstance(src, Buffer):
                raise TypeError("copy_from() with options takes a Buffer source (copy host memory without options)")
            memory_operations.copy_batch(s, [src], [self], options=options)
            return
        if isinstance(src, Buffer):
            st = _fast_buffer_copy(self._h, src._h, s._h)
            if st:
                raise_error(st, self, src, s)
            return
        with _HostMemory(src, False) as m:
            if m.nbytes != self._size and self._h is not None:
                raise ValueError(f"copy_from(): the source has {m.nbytes} bytes, the buffer {self._size} "
                                 f"(use copy_from_host(src, offset=...) to write part of it)")
            st = _fast_buffer_copy_from_host(self._h, _c_uint64(0), _c_void_p(m.address), _c_uint64(m.nbytes),
                                             s._h)
        if st:
            raise_error(st, self, s)

    def copy_from_host(self, src: Any, *, stream: Any, offset: int = 0) -> None:
        """Copy the bytes of host memory `src` (any contiguous buffer-protocol object) into this buffer at
        `offset`, on `stream`. Pageable memory (ordinary Python objects) has been read when the call
        returns; page-locked memory must stay unchanged until the stream has run the copy."""
        if type(offset) is not int or not 0 <= offset <= _U64_MAX:
            offset = _u64(offset, "offset")
        s = stream if type(stream) is _Stream else _stream_of(stream)
        with _HostMemory(src, False) as m:
            st = _fast_buffer_copy_from_host(self._h, _c_uint64(offset), _c_void_p(m.address),
                                             _c_uint64(m.nbytes), s._h)
        if st:
            raise_error(st, self, s)

    def copy_to_host(self, dst: Any, *, stream: Any, offset: int = 0) -> None:
        """Copy len(dst) bytes of this buffer from `offset` into writable host memory `dst` (a bytearray,
        a writable memoryview, NumPy array, ctypes array, ...) on `stream`, and return `dst`. Pageable
        memory is filled when the call returns; for page-locked memory synchronize the stream first."""
        if type(offset) is not int or not 0 <= offset <= _U64_MAX:
            offset = _u64(offset, "offset")
        s = stream if type(stream) is _Stream else _stream_of(stream)
        with _HostMemory(dst, True) as m:
            st = _fast_buffer_copy_to_host(self._h, _c_uint64(offset), _c_void_p(m.address), _c_uint64(m.nbytes),
                                           s._h)
        if st:
            raise_error(st, self, s)
        return dst

    def to_bytes(self, *, stream: Any) -> bytes:
        """The buffer's contents as bytes: copied on `stream`, which is then synchronized."""
        s = stream if type(stream) is _Stream else _stream_of(stream)
        out = bytearray(self._size if self._h is not None else 0)
        self.copy_to_host(out, stream=s)
        s.sync()
        return bytes(out)

    def fill(self, value: Union[int, bytes, bytearray, memoryview], *, stream: Any, width: Optional[int] = None) -> None:
        """Fill the buffer with a 1-, 2- or 4-byte pattern on `stream`: `value` is an int of `width` bytes
        (default 1), or a bytes-like pattern of 1, 2 or 4 bytes, laid out in memory as given. The size
        (and, for 2 and 4 bytes, the address) must be a multiple of the width."""
        if type(value) is int or (isinstance(value, int) and not isinstance(value, bool)):
            if width is None:
                width = 1
        elif isinstance(value, bool):
            raise TypeError("fill() takes an int or a bytes-like pattern, not bool")
        else:
            try:
                pattern = memoryview(value).cast("B").tobytes()
            except TypeError:
                raise TypeError(f"fill() takes an int or a bytes-like pattern, not {type(value).__name__}") from None
            if width is not None and width != len(pattern):
                raise ValueError(f"width {width} does not match the pattern's {len(pattern)} bytes")
            width = len(pattern)
            if width not in (1, 2, 4):
                raise ValueError(f"a fill pattern has 1, 2 or 4 bytes, not {width}")
            value = int.from_bytes(pattern, "little")  # device memory is little-endian
        if width not in (1, 2, 4):
            raise ValueError(f"width must be 1, 2 or 4, not {width!r}")
        if not 0 <= value < 1 << (8 * width):
            raise ValueError(f"fill value {value} does not fit in {width} byte{'s' if width > 1 else ''} "
                             f"(0 to {(1 << (8 * width)) - 1})")
        s = stream if type(stream) is _Stream else _stream_of(stream)
        st = _fast_buffer_fill(self._h, _c_uint32(value), _c_uint32(width), s._h)
        if st:
            raise_error(st, self, s)
