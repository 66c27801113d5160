"""Memory resources and buffers (include/cucore/memory.h).

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
"""
import ctypes
import enum
import operator
import sys
import threading
import weakref
from dataclasses import dataclass

from . import _lib
from ._handle import HandleObject
from .common import closed_error, raise_error
from .device import Device
from .memory_peer import PeerAccessible
from .stream import Stream, _RELEASE_CB, _next_key, _owners

(_cucore_device_memory_resource_get_default, _cucore_device_memory_resource_create,
 _cucore_legacy_pinned_memory_resource_create, _cucore_memory_resource_retain, _cucore_memory_resource_release,
 _cucore_memory_resource_allocate, _cucore_memory_resource_kind, _cucore_memory_resource_device_id,
 _cucore_memory_resource_accessibility, _cucore_memory_resource_is_managed,
 _cucore_memory_resource_is_stream_ordered, _cucore_buffer_from_handle, _cucore_buffer_retain, _cucore_buffer_release,
 _cucore_buffer_close, _cucore_buffer_set_deallocation_stream, _cucore_buffer_size, _cucore_buffer_address,
 _cucore_buffer_device_id, _cucore_buffer_memory_resource, _cucore_buffer_view, _cucore_buffer_copy,
 _cucore_buffer_copy_from_host, _cucore_buffer_copy_to_host, _cucore_buffer_fill,
 _cucore_memory_resource_handle, _cucore_memory_resource_pool_attribute,
 _cucore_memory_resource_set_pool_attribute, _cucore_memory_resource_trim, _cucore_device_allocate) = _lib.bind(
    globals(), "cucore_device_memory_resource_get_default", "cucore_device_memory_resource_create",
    "cucore_legacy_pinned_memory_resource_create", "cucore_memory_resource_retain",
    "cucore_memory_resource_release", "cucore_memory_resource_allocate", "cucore_memory_resource_kind",
    "cucore_memory_resource_device_id", "cucore_memory_resource_accessibility", "cucore_memory_resource_is_managed",
    "cucore_memory_resource_is_stream_ordered",
    "cucore_buffer_from_handle",
    "cucore_buffer_retain", "cucore_buffer_release", "cucore_buffer_close", "cucore_buffer_set_deallocation_stream",
    "cucore_buffer_size", "cucore_buffer_address", "cucore_buffer_device_id", "cucore_buffer_memory_resource",
    "cucore_buffer_view", "cucore_buffer_copy", "cucore_buffer_copy_from_host", "cucore_buffer_copy_to_host",
    "cucore_buffer_fill", "cucore_memory_resource_handle", "cucore_memory_resource_pool_attribute",
    "cucore_memory_resource_set_pool_attribute", "cucore_memory_resource_trim", "cucore_device_allocate")
(_cucore_buffer_accessibility, _cucore_buffer_deallocation_stream, _cucore_buffer_grow) = _lib.bind(
    globals(), "cucore_buffer_accessibility", "cucore_buffer_deallocation_stream", "cucore_buffer_grow")
(_fast_memory_resource_allocate, _fast_memory_resource_release, _fast_buffer_release, _fast_buffer_close,
 _fast_buffer_view, _fast_buffer_copy, _fast_buffer_copy_from_host, _fast_buffer_copy_to_host,
 _fast_buffer_fill) = _lib.bind_unchecked(
    globals(), "cucore_memory_resource_allocate", "cucore_memory_resource_release", "cucore_buffer_release",
    "cucore_buffer_close", "cucore_buffer_view", "cucore_buffer_copy", "cucore_buffer_copy_from_host",
    "cucore_buffer_copy_to_host", "cucore_buffer_fill")

_c_void_p = ctypes.c_void_p
_c_int = ctypes.c_int
_c_uint32 = ctypes.c_uint32
_c_uint64 = ctypes.c_uint64
_new = object.__new__
_handle_outs = _lib.outs(_c_void_p)
_new_out = _lib.new_out
_handle_arg = _lib.handle_arg
_U64_MAX = (1 << 64) - 1
_Stream = Stream


class PoolAttribute(enum.IntEnum):
    """cucore_pool_attribute_t (the driver's CUmemPool_attribute values)."""
    REUSE_FOLLOW_EVENT_DEPENDENCIES = 1   # 0/1, settable
    REUSE_ALLOW_OPPORTUNISTIC = 2         # 0/1, settable
    REUSE_ALLOW_INTERNAL_DEPENDENCIES = 3  # 0/1, settable
    RELEASE_THRESHOLD = 4                 # bytes, settable
    RESERVED_MEM_CURRENT = 5              # bytes
    RESERVED_MEM_HIGH = 6                 # bytes; reset by setting 0
    USED_MEM_CURRENT = 7                  # bytes
    USED_MEM_HIGH = 8                     # bytes; reset by setting 0


class PoolAttributes:
    """A pool resource's attributes as properties (cuda.core's `mr.attributes`): the reuse flags are bools,
    the rest byte counts; `release_threshold` and the reuse flags are settable, and setting a `*_high`
    to 0 resets it."""
    __slots__ = ("_mr",)

    def __init__(self, mr):
        self._mr = mr

    def _get(self, attribute):
        return self._mr.pool_attribute(attribute)

    def _set(self, attribute, value):
        self._mr.set_pool_attribute(attribute, value)

    reuse_follow_event_dependencies = property(
        lambda self: bool(self._get(PoolAttribute.REUSE_FOLLOW_EVENT_DEPENDENCIES)),
        lambda self, v: self._set(PoolAttribute.REUSE_FOLLOW_EVENT_DEPENDENCIES, int(bool(v))))
    reuse_allow_opportunistic = property(
        lambda self: bool(self._get(PoolAttribute.REUSE_ALLOW_OPPORTUNISTIC)),
        lambda self, v: self._set(PoolAttribute.REUSE_ALLOW_OPPORTUNISTIC, int(bool(v))))
    reuse_allow_internal_dependencies = property(
        lambda self: bool(self._get(PoolAttribute.REUSE_ALLOW_INTERNAL_DEPENDENCIES)),
        lambda self, v: self._set(PoolAttribute.REUSE_ALLOW_INTERNAL_DEPENDENCIES, int(bool(v))))
    release_threshold = property(lambda self: self._get(PoolAttribute.RELEASE_THRESHOLD),
                                 lambda self, v: self._set(PoolAttribute.RELEASE_THRESHOLD, v))
    reserved_mem_current = property(lambda self: self._get(PoolAttribute.RESERVED_MEM_CURRENT))
    reserved_mem_high = property(lambda self: self._get(PoolAttribute.RESERVED_MEM_HIGH),
                                 lambda self, v: self._set(PoolAttribute.RESERVED_MEM_HIGH, v))
    used_mem_current = property(lambda self: self._get(PoolAttribute.USED_MEM_CURRENT))
    used_mem_high = property(lambda self: self._get(PoolAttribute.USED_MEM_HIGH),
                             lambda self, v: self._set(PoolAttribute.USED_MEM_HIGH, v))


class MemoryResourceKind(enum.IntEnum):
    """cucore_memory_resource_kind_t."""
    DEVICE = 1          # a stream-ordered device memory pool
    LEGACY_PINNED = 2   # page-locked host memory (cuMemAllocHost), synchronous
    PINNED = 3          # a stream-ordered pool of page-locked host memory
    MANAGED = 4         # managed (unified) memory: cuMemAllocManaged (synchronous) or a stream-ordered pool
    VIRTUAL = 5         # virtual memory management (cuMemCreate + cuMemMap), synchronous, growable buffers
    USER = 6            # allocate/deallocate are the user's (a Python subclass of MemoryResource, ...)
    IMPORTED = 7        # a pool imported from another process (maps its buffers, cannot allocate)


# ---- argument conversion (cold paths; the hot paths inline the common case) ----------------------------

def _u64(value, what):
    """`value` as an int in [0, 2**64) (ctypes would silently wrap or truncate anything else)."""
    if isinstance(value, bool):
        raise TypeError(f"{what} must be an int, not bool")
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an int, not {type(value).__name__}") from None
    if not 0 <= value <= _U64_MAX:
        raise ValueError(f"{what} must be in [0, 2**64), not {value}")
    return value


_sizes = {}  # allocation size -> its c_uint64 argument object (read-only, so shareable by threads)


def _size_arg(size):
    """The c_uint64 argument for an allocation size, validated; common sizes are kept for reuse."""
    size = _u64(size, "size")
    c = _sizes.get(size)
    if c is None:
        c = _c_uint64(size)
        if len(_sizes) < 4096:
            _sizes[size] = c
    return c


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


def _device(device_id):
    if isinstance(device_id, Device):
        return device_id
    if device_id is not None and (isinstance(device_id, bool) or not hasattr(type(device_id), "__index__")):
        raise TypeError(f"device must be a Device, a device ordinal or None, not {type(device_id).__name__}")
    return Device(device_id)


def _stream_of(stream):
    """`stream` as a Stream: a Stream, or any object with __cuda_stream__ (wrapped; the caller keeps the
    wrapper alive for the duration of its call)."""
    if isinstance(stream, _Stream):
        return stream
    if stream is None:
        raise TypeError("a stream is required (a Stream or an object with __cuda_stream__)")
    if not hasattr(stream, "__cuda_stream__"):
        raise TypeError(f"stream must be a Stream or an object with __cuda_stream__, not {type(stream).__name__}")
    return _Stream.from_handle(stream)


def _open_stream_handle(stream):
    """(Stream, its handle) for a stream argument where NULL would mean something else (allocate, close):
    a closed Stream is an error here, not NULL."""
    s = _stream_of(stream)
    h = s._h
    if h is None:
        raise closed_error(s)
    return s, h


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
    _get_buffer = ctypes.pythonapi.PyObject_GetBuffer
    _get_buffer.argtypes = [ctypes.py_object, ctypes.POINTER(_PyBuffer), ctypes.c_int]
    _get_buffer.restype = ctypes.c_int
    _release_buffer = ctypes.pythonapi.PyBuffer_Release
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


# ---- memory resources ------------------------------------------------------------------------------------

@dataclass
class DeviceMemoryResourceOptions:
    """Options of a new device memory pool (cucore_device_memory_resource_options_t).

    max_size: the most bytes the pool may reserve; 0 for no limit (the driver's default).
    release_threshold: bytes the pool keeps reserved after a synchronization instead of returning them to
        the system; 0 for the driver's default (return everything).
    ipc_enabled: True for a pool other processes can import (a POSIX file descriptor; Linux only).
    """
    max_size: int = 0
    release_threshold: int = 0
    ipc_enabled: bool = False

    def __post_init__(self):
        check_options(self, ("max_size", "release_threshold"), ("ipc_enabled",))


def check_options(options, sizes, flags=()):
    """Type and range checks of an options dataclass: `sizes` are ints in [0, 2**64), `flags` bools."""
    cls = type(options).__name__
    for name in sizes:
        value = getattr(options, name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{cls}.{name} must be an int, not {type(value).__name__}")
        if not 0 <= value <= _U64_MAX:
            raise ValueError(f"{cls}.{name} must be in [0, 2**64), not {value}")
    for name in flags:
        value = getattr(options, name)
        if not isinstance(value, bool):
            raise TypeError(f"{cls}.{name} must be a bool, not {type(value).__name__}")


def options_of(options, cls):
    """`options` (an instance of the dataclass `cls`, or a dict of its fields) as a `cls`."""
    if isinstance(options, dict):
        return cls(**options)
    if not isinstance(options, cls):
        raise TypeError(f"options must be {cls.__name__}, a dict or None, not {type(options).__name__}")
    return options


def _pool_options_struct(options):
    options = options_of(options, DeviceMemoryResourceOptions)
    c = _lib.DeviceMemoryResourceOptionsC()
    c.struct_size = ctypes.sizeof(c)
    c.max_size = options.max_size
    c.release_threshold = options.release_threshold
    c.ipc_enabled = options.ipc_enabled
    return c


# Live Python wrappers by libcucore handle value. A handle value names one object for its whole life
# (a released object's value is never reused: generations), so this is an identity map.
_wrappers = weakref.WeakValueDictionary()

# The exception a user-defined resource's allocate raised on this thread, as (status it became, exception),
# until the Python caller of the failed allocation re-raises it (memory_user.py sets it).
_user_errors = threading.local()


def _take_user_error(status):
    """The exception behind a failed allocation with `status` on this thread, if a Python allocate raised it."""
    pending = getattr(_user_errors, "pending", None)
    if pending is None:
        return None
    _user_errors.pending = None
    return pending[1] if pending[0] == status else None


class _ResourceType(type):
    """MemoryResource's metaclass. A user's subclass (one defining allocate and deallocate, see
    memory_user.py) becomes a libcucore resource after its __init__ has run, so that its device_id and
    accessibility may depend on what __init__ set; the built-in kinds are made by their __new__."""

    def __call__(cls, *args, **kwargs):
        if cls._user_defined:
            from .memory_user import construct
            return construct(cls, args, kwargs)
        return super().__call__(*args, **kwargs)


class MemoryResource(HandleObject, metaclass=_ResourceType):
    """Where buffers come from: DeviceMemoryResource (a stream-ordered device memory pool),
    PinnedMemoryResource, ManagedMemoryResource, VirtualMemoryResource, LegacyPinnedMemoryResource, or a
    subclass of your own. `allocate(size, *, stream)` gives a Buffer, which keeps its resource alive;
    equality is identity of the libcucore object.

    A user-defined resource subclasses MemoryResource and defines `allocate(self, size, stream)` returning
    an address (an int, or an object with an int `handle`, kept alive until deallocated) and
    `deallocate(self, ptr, size, stream)`, plus `device_id` (an ordinal, -1 for host memory) and optionally
    `is_device_accessible`, `is_host_accessible`, `is_managed` (attributes or properties). Then
    `mr.allocate(size, stream=s)` returns a Buffer whose memory came from your allocate and goes back
    through your deallocate; every language allocating from the resource calls them (see memory_user.py)."""

    __slots__ = ("_hv", "_info", "_config", "_home")
    _release = staticmethod(_fast_memory_resource_release)
    _handle_fn = staticmethod(_cucore_memory_resource_handle)  # `handle`: the CUmemoryPool (0 without a pool)
    _builtin = True          # the library's own classes; a user's direct subclass is a user-defined resource
    _user_defined = False

    def __new__(cls, *args, **kwargs):
        raise TypeError("MemoryResource cannot be instantiated directly: use DeviceMemoryResource(device_id), "
                        "PinnedMemoryResource(), ManagedMemoryResource(), VirtualMemoryResource(device), "
                        "LegacyPinnedMemoryResource(), Device.memory_resource, or subclass it with allocate() "
                        "and deallocate()")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("_builtin"):
            return
        # The nearest library class among the bases decides: below MemoryResource itself it is a
        # user-defined resource; below a built-in kind (DeviceMemoryResource, ...) an ordinary subclass.
        nearest = next(b for b in cls.__mro__[1:] if b.__dict__.get("_builtin"))
        if nearest is MemoryResource:
            from .memory_user import prepare_class
            prepare_class(cls)

    @classmethod
    def _wrap(cls, hv, config=None, home=None):
        """A new wrapper owning the +1 reference to the libcucore resource `hv` (an int); registered so
        that every later answer naming the same libcucore object gives this wrapper back. `config` is
        what it was made with (options), `home` the ordinal of the device it was made for."""
        obj = _new(cls)
        obj._h = _handle_arg(hv)
        obj._raw = None
        obj._hv = hv
        obj._info = None
        obj._config = config
        obj._home = home
        _wrappers[hv] = obj
        return obj

    @staticmethod
    def _from_owned_handle(hv):
        """The wrapper for a +1 resource handle (an int) a C call returned: the live wrapper of that
        libcucore object if there is one (the extra reference is dropped), else a new one of the right
        class. So `buf.memory_resource is mr` and `dev.memory_resource is mr` hold however the answer
        came (any language may have set the device's default)."""
        existing = _wrappers.get(hv)
        if existing is not None and existing._h is not None:
            _fast_memory_resource_release(_handle_arg(hv))
            return existing
        out = _c_int()
        h = _handle_arg(hv)
        st = _cucore_memory_resource_kind(h, out)
        if st:
            _cucore_memory_resource_release(h)
            raise_error(st)
        return _KIND_CLASSES.get(out.value, MemoryResource)._wrap(hv)

    def __eq__(self, other):
        if not isinstance(other, MemoryResource):
            return NotImplemented
        if self._h is None or other._h is None:
            return self is other
        return self._hv == other._hv

    def __hash__(self):
        return hash((MemoryResource, self._hv))

    def __repr__(self):
        if self._h is None:
            return f"<{type(self).__name__} (closed)>"
        try:
            where = "host" if self.device_id < 0 else f"device {self.device_id}"
            return f"<{type(self).__name__} of {where}>"
        except Exception:
            return f"<{type(self).__name__}>"

    # ---- properties (fixed for a resource: read once) ---------------------------------------------

    def _get_info(self):
        h = self._h
        if h is None:
            raise closed_error(self)
        info = self._info
        if info is None:
            kind, device_id, dacc, hacc, managed, ordered = _c_int(), _c_int(), _c_int(), _c_int(), _c_int(), _c_int()
            st = _cucore_memory_resource_kind(h, kind) or _cucore_memory_resource_device_id(h, device_id) or \
                _cucore_memory_resource_accessibility(h, dacc, hacc) or \
                _cucore_memory_resource_is_managed(h, managed) or _cucore_memory_resource_is_stream_ordered(h, ordered)
            if st:
                raise_error(st, self)
            try:
                k = MemoryResourceKind(kind.value)
            except ValueError:  # a kind newer than this binding
                k = kind.value
            info = self._info = (k, device_id.value, bool(dacc.value), bool(hacc.value), bool(managed.value),
                                 bool(ordered.value))
        return info

    def pool_attribute(self, attribute):
        """A pool attribute (a PoolAttribute or its value) as an int; NotSupportedError without a pool."""
        out = ctypes.c_uint64()
        st = _cucore_memory_resource_pool_attribute(self._h, int(attribute), out)
        if st:
            raise_error(st, self)
        return out.value

    def set_pool_attribute(self, attribute, value):
        """Sets a settable pool attribute (high-water marks: 0 only, which resets them)."""
        st = _cucore_memory_resource_set_pool_attribute(self._h, int(attribute), _u64(value, "value"))
        if st:
            raise_error(st, self)

    @property
    def attributes(self):
        """The pool's attributes as properties (PoolAttributes)."""
        return PoolAttributes(self)

    def trim(self, min_bytes_to_keep=0):
        """Return unused reserved memory to the system, keeping at least `min_bytes_to_keep` bytes."""
        st = _cucore_memory_resource_trim(self._h, _u64(min_bytes_to_keep, "min_bytes_to_keep"))
        if st:
            raise_error(st, self)

    @property
    def kind(self):
        """The MemoryResourceKind."""
        return self._get_info()[0]

    @property
    def device_id(self):
        """The ordinal of the device whose memory the resource gives, or -1 for host memory."""
        return self._get_info()[1]

    @property
    def is_device_accessible(self):
        """Whether the memory can be accessed from the device."""
        return self._get_info()[2]

    @property
    def is_host_accessible(self):
        """Whether the memory can be accessed from the host (CPU)."""
        return self._get_info()[3]

    @property
    def is_managed(self):
        """Whether the memory is managed (unified) memory: advice, prefetch and discard apply."""
        return self._get_info()[4]

    @property
    def is_stream_ordered(self):
        """Whether allocation and release are ordered on a stream (pools: a stream is required)."""
        return self._get_info()[5]

    # ---- allocation ------------------------------------------------------------------------------

    def allocate(self, size, *, stream=None):
        """A new Buffer of `size` bytes (0 is valid: a buffer with address 0), allocated in order on
        `stream` (a Stream or any object with __cuda_stream__), which also becomes the buffer's
        deallocation stream. A device memory pool needs a stream; page-locked host memory is allocated
        synchronously and takes None."""
        size, csize, keep, sh = _allocation_args(size, stream)
        try:
            out, ref = pair = _handle_outs.pop()
        except IndexError:
            out, ref = pair = _new_out(_c_void_p)
        st = _fast_memory_resource_allocate(self._h, csize, sh, ref)
        h = out.value
        _handle_outs.append(pair)
        if st:
            exc = _take_user_error(st)  # a user-defined allocate raised: that exception, not the status
            if exc is not None:
                raise exc
            raise_error(st, self, keep)
        b = _new(Buffer)
        b._h = _handle_arg(h)
        b._raw = None
        b._size = size
        b._mr = self
        return b

    # ---- IPC (the work is in ipc.py) --------------------------------------------------------------

    def allocation_handle(self):
        """A new cucore.ipc.IPCAllocationHandle of this IPC-enabled pool (its fd is yours to close)."""
        return _ipc().export_pool(self)

    export_pool = allocation_handle

    @staticmethod
    def from_allocation_handle(device, handle):
        """The pool another process exported (an IPCAllocationHandle), imported on `device`."""
        return _ipc().import_pool(device, handle)

    @property
    def is_ipc_enabled(self):
        """Whether other processes can import this pool (created with ipc_enabled=True)."""
        return _ipc().is_ipc_enabled(self)

    @property
    def is_mapped(self):
        """Whether this pool was imported from another process (it maps buffers, cannot allocate)."""
        return _ipc().is_mapped(self)

    def __reduce__(self):
        return _ipc().reduce_resource(self)  # IPC-enabled pools only


def _ipc():
    from . import ipc
    return ipc


def _allocation_args(size, stream):
    """(size, its ctypes value, the stream object to keep, its handle or None) for an allocation."""
    csize = _sizes.get(size) if type(size) is int else None
    if csize is None:
        csize = _size_arg(size)
        size = csize.value
    if stream is None:
        return size, csize, None, None
    if type(stream) is _Stream:
        if stream._h is None:
            raise closed_error(stream)
        return size, csize, stream, stream._h
    keep, sh = _open_stream_handle(stream)
    return size, csize, keep, sh


def _allocate_from_device(device, size, stream):
    """Device.allocate: one C call (cucore_device_allocate) on the device's default resource."""
    size, csize, keep, sh = _allocation_args(size, stream)
    out = _c_void_p()
    st = _cucore_device_allocate(device._h, csize, sh, out)
    if st:
        exc = _take_user_error(st)  # the device's default resource is user-defined and its allocate raised
        if exc is not None:
            raise exc
        raise_error(st, device, keep)
    b = _new(Buffer)
    b._h = _handle_arg(out.value)
    b._raw = None
    b._size = size
    b._mr = _UNKNOWN  # asked from libcucore on first use (the wrapper registry keeps identity)
    return b


class DeviceMemoryResource(MemoryResource, PeerAccessible):
    """Device memory from a stream-ordered memory pool (cuMemAllocFromPoolAsync / cuMemFreeAsync).

    `DeviceMemoryResource(device_id)` uses the device's current memory pool (not owned: closing the
    resource never destroys that pool); `DeviceMemoryResource(device_id, DeviceMemoryResourceOptions(...))`
    creates a new pool, destroyed once the resource and every buffer from it are gone. `device_id` is an
    ordinal or a Device. `allocate(size, stream=s)` needs a stream of this device (allocation is stream-
    ordered; the stream is also where the buffer is freed unless changed). `peer_accessible_by` is the
    live set of other devices' ordinals allowed to access the pool's memory."""

    __slots__ = ()
    _builtin = True

    def __new__(cls, device_id, options=None):
        dev = _device(device_id)
        h = _c_void_p()
        if options is None:
            st = _cucore_device_memory_resource_get_default(dev._h, h)
        else:
            options = options_of(options, DeviceMemoryResourceOptions)
            st = _cucore_device_memory_resource_create(dev._h, _pool_options_struct(options), h)
        if st:
            raise_error(st, dev)
        return cls._wrap(h.value, options, dev.device_id)

class LegacyPinnedMemoryResource(MemoryResource):
    """Page-locked host memory (cuMemAllocHost / cuMemFreeHost), made in `device_id`'s primary context
    (None: the current device). Allocation and release are synchronous, so `stream` is optional; the
    memory is accessible from the host (Buffer.handle is its address) and from the device."""

    __slots__ = ()
    _builtin = True

    def __new__(cls, device_id=None):
        dev = _device(device_id)
        h = _c_void_p()
        st = _cucore_legacy_pinned_memory_resource_create(dev._h, h)
        if st:
            raise_error(st, dev)
        return cls._wrap(h.value)


_KIND_CLASSES = {MemoryResourceKind.DEVICE: DeviceMemoryResource,
                 MemoryResourceKind.LEGACY_PINNED: LegacyPinnedMemoryResource}

_UNKNOWN = object()  # Buffer._mr not asked yet (views): ask libcucore on first use


# ---- buffers --------------------------------------------------------------------------------------------

class Buffer(HandleObject):
    """A range of memory: `size` bytes at `handle` (the address, an int), from `memory_resource` (None for
    foreign memory wrapped with Buffer.from_handle).

    The memory is freed when the buffer and all its views are gone (stream-ordered on its deallocation
    stream for pools), or earlier with close(). After close(), `size` and `handle` read 0 and every other
    use raises InvalidHandleError. Copies and fills are ordered on the stream they are given."""

    __slots__ = ("_size", "_mr", "_owner")
    _release = staticmethod(_fast_buffer_release)

    def __new__(cls, *args, **kwargs):
        raise TypeError("Buffer cannot be instantiated directly: use MemoryResource.allocate(), "
                        "Device.allocate() or Buffer.from_handle()")

    @classmethod
    def _wrap(cls, hv, size, mr):
        b = _new(cls)
        b._h = _handle_arg(hv)
        b._raw = None
        b._size = size
        b._mr = mr
        return b

    @classmethod
    def from_handle(cls, address, size, device_id=None, owner=None):
        """Wrap memory this library did not allocate, without owning it: `size` bytes at `address` (an int,
        or anything int() takes, e.g. a CUdeviceptr), on device `device_id` (an ordinal or a Device), or
        host memory for None. `owner`, if given, is kept alive until libcucore lets go of the memory (the
        buffer and all its views are gone), so it can be the object that frees it."""
        address = _address(address)
        size = _u64(size, "size")
        dev = None if device_id is None else _device(device_id)
        h = _c_void_p()
        if owner is None:
            st = _cucore_buffer_from_handle(address, size, None if dev is None else dev._h, None, None, h)
        else:
            key = _next_key()
            _owners[key] = owner
            st = _cucore_buffer_from_handle(address, size, None if dev is None else dev._h, _RELEASE_CB, key, h)
            if st:
                _owners.pop(key, None)  # the library never calls the callback of a failed wrap
        if st:
            raise_error(st, dev)
        b = cls._wrap(h.value, size, None)
        b._owner = owner
        return b

    # ---- lifetime ---------------------------------------------------------------------------------

    def close(self, stream=None):
        """Free the memory now, ordered on `stream` (a Stream or any object with __cuda_stream__; None:
        the deallocation stream), and drop this object's reference. Views keep the memory until they go.
        Idempotent; later use raises InvalidHandleError (size and handle read 0)."""
        if self._h is None:
            return
        if stream is None:
            keep = sh = None
        elif type(stream) is _Stream:
            keep = stream
            sh = stream._h
            if sh is None:
                raise closed_error(stream)
        else:
            keep, sh = _open_stream_handle(stream)
        h = self._h
        if h is None:
            return
        self._h = None  # taken first: a concurrent close() sees it closed and does nothing
        st = _fast_buffer_close(h, sh)
        if st:
            self._h = h  # still open: the caller may retry, or the finalizer frees it
            raise_error(st, self, keep)
        self._mr = None
        self._owner = None
        st = _fast_buffer_release(h)
        if st:
            raise_error(st)

    def set_deallocation_stream(self, stream):
        """Free the memory on `stream` (a Stream or any object with __cuda_stream__; the buffer holds it)
        when it is released or closed without a stream."""
        s = _stream_of(stream)
        st = _cucore_buffer_set_deallocation_stream(self._h, s._h)
        if st:
            raise_error(st, self, s)

    # ---- properties -------------------------------------------------------------------------------

    @property
    def size(self):
        """The size in bytes (0 once closed)."""
        return self._size if self._h is not None else 0

    @property
    def handle(self):
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
    def device_id(self):
        """The ordinal of the device whose memory this is, or -1 for host memory."""
        out = _c_int()
        st = _cucore_buffer_device_id(self._h, out)
        if st:
            raise_error(st, self)
        return out.value

    @property
    def memory_resource(self):
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
    def owner(self):
        """The `owner` given to Buffer.from_handle (None otherwise)."""
        if self._h is None:
            raise closed_error(self)
        return getattr(self, "_owner", None)

    def _accessibility(self):
        """(device-accessible, host-accessible, managed) as libcucore knows them for this memory."""
        d, h, m = _c_int(), _c_int(), _c_int()
        st = _cucore_buffer_accessibility(self._h, d, h, m)
        if st:
            raise_error(st, self)
        return bool(d.value), bool(h.value), bool(m.value)

    @property
    def is_device_accessible(self):
        """Whether the memory can be accessed from the device (foreign host memory reads False)."""
        return self._accessibility()[0]

    @property
    def is_host_accessible(self):
        """Whether the memory can be accessed from the host (CPU)."""
        return self._accessibility()[1]

    @property
    def is_managed(self):
        """Whether the memory is managed (unified) memory: advice, prefetch and discard apply (ManagedBuffer)."""
        return self._accessibility()[2]

    @property
    def deallocation_stream(self):
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
    def deallocation_stream(self, stream):
        self.set_deallocation_stream(stream)

    def grow(self, new_size):
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

    def ipc_descriptor(self):
        """The 128-byte descriptor of this whole buffer of an IPC-enabled pool, for another process."""
        return _ipc().buffer_descriptor(self)

    @staticmethod
    def from_ipc_descriptor(mr, descriptor, *, stream):
        """The buffer of `descriptor` mapped into the imported pool `mr`, freed on `stream`."""
        return _ipc().import_buffer(mr, descriptor, stream)

    def __reduce__(self):
        return _ipc().reduce_buffer(self)  # buffers of IPC-enabled pools only

    # Identity: two Buffer objects never share a libcucore buffer.
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    # ---- DLPack and the CUDA Array Interface (dlpack.py) ---------------------------------------

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of this buffer's bytes (1-D uint8), zero-copy (see cucore.dlpack)."""
        from . import dlpack
        return dlpack.export(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        """(DLDeviceType, device id) of the memory."""
        from . import dlpack
        return dlpack.device(self)

    @property
    def __cuda_array_interface__(self):
        """Version 3 of the CUDA Array Interface: the bytes as a 1-D "|u1" array (device-accessible memory only)."""
        from . import dlpack
        return dlpack.cuda_array_interface(self)

    @classmethod
    def from_cuda_array_interface(cls, obj, *, stream=None, device_id=None):
        """A Buffer over the memory `obj` describes with __cuda_array_interface__ (see cucore.dlpack)."""
        from . import dlpack
        return dlpack.from_cuda_array_interface(obj, stream=stream, device_id=device_id)

    # ---- views ------------------------------------------------------------------------------------

    def view(self, offset, size):
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
        b._raw = None
        b._size = size
        b._mr = _UNKNOWN
        return b

    # ---- copies and fills -------------------------------------------------------------------------

    def copy_to(self, dst=None, *, stream):
        """Copy all of this buffer into `dst` (a Buffer of the same size) on `stream` and return `dst`. With
        no `dst`, allocate one from this buffer's memory resource on `stream` first. A writable host object
        (bytearray, NumPy array, ...) as `dst` is copy_to_host(dst)."""
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
        st = _fast_buffer_copy(dst._h, self._h, s._h)
        if st:
            raise_error(st, dst, self, s)
        return dst

    def copy_from(self, src, *, stream):
        """Copy all of `src` into this buffer on `stream`: `src` is a Buffer of the same size, or host
        memory of the same size (any contiguous buffer-protocol object: bytes, bytearray, memoryview,
        array.array, NumPy arrays...; see copy_from_host)."""
        s = stream if type(stream) is _Stream else _stream_of(stream)
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

    def copy_from_host(self, src, *, stream, offset=0):
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

    def copy_to_host(self, dst, *, stream, offset=0):
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

    def to_bytes(self, *, stream):
        """The buffer's contents as bytes: copied on `stream`, which is then synchronized."""
        s = stream if type(stream) is _Stream else _stream_of(stream)
        out = bytearray(self._size if self._h is not None else 0)
        self.copy_to_host(out, stream=s)
        s.sync()
        return bytes(out)

    def fill(self, value, *, stream, width=None):
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
