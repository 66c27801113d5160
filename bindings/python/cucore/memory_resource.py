"""Memory resources (include/cucore/memory_resource.h): where buffers come from, and what every resource has.

    dev = cucore.Device(0)
    mr = dev.memory_resource                  # the resource Device.allocate uses (the device's default)
    s = dev.create_stream()
    buf = mr.allocate(1 << 20, stream=s)      # a Buffer (buffer.py), freed in order on `s`
    (mr.kind, mr.device_id, mr.is_device_accessible, mr.is_host_accessible, mr.is_stream_ordered)

MemoryResource, the base of every kind: allocate, handle, kind, device_id, accessibility, is_stream_ordered,
is_managed, the registry of the kinds' classes (_KIND_CLASSES, filled as each kind's class is defined), the wrapper registry that keeps one Python
object per libcucore resource, the device's default resource (Device.allocate, Device.memory_resource), the
legacy pinned resource (LegacyPinnedMemoryResource), and the constructor helpers of every
kind. The other kinds live in the module of their capability, above this one: memory_pool.py
(DeviceMemoryResource, PinnedMemoryResource, pool attributes, trim, peer access), managed_memory.py,
virtual_memory.py, graph_memory.py (GraphMemoryResource), user_memory.py (user-defined resources); Buffer lives in buffer.py, below.
"""
from __future__ import annotations

import ctypes
import threading
import uuid as _uuid
import weakref
from typing import TYPE_CHECKING, Any, Dict, Optional, Union

from . import _lib
from ._handle import HandleObject
from .buffer import _UNKNOWN, Buffer, _MemoryAccess
from .common import _c_enum, _u64, closed_error, options_of, raise_error
from .device import Device, _device
from .stream import Stream, _open_stream_handle, _stream_of

(_cucore_legacy_pinned_memory_resource_create, _cucore_memory_resource_retain, _cucore_memory_resource_release,
 _cucore_memory_resource_allocate, _cucore_memory_resource_kind, _cucore_memory_resource_device_id,
 _cucore_memory_resource_accessibility, _cucore_memory_resource_is_managed,
 _cucore_memory_resource_is_stream_ordered, _cucore_memory_resource_handle, _cucore_device_allocate,
 _cucore_memory_resource_deallocate, _cucore_memory_resource_owns_pool) = _lib.bind(
    globals(), "cucore_legacy_pinned_memory_resource_create", "cucore_memory_resource_retain",
    "cucore_memory_resource_release", "cucore_memory_resource_allocate", "cucore_memory_resource_kind",
    "cucore_memory_resource_device_id", "cucore_memory_resource_accessibility", "cucore_memory_resource_is_managed",
    "cucore_memory_resource_is_stream_ordered", "cucore_memory_resource_handle", "cucore_device_allocate",
    "cucore_memory_resource_deallocate", "cucore_memory_resource_owns_pool")
(_fast_memory_resource_allocate, _fast_memory_resource_release) = _lib.bind_unchecked(
    globals(), "cucore_memory_resource_allocate", "cucore_memory_resource_release")

_c_void_p = ctypes.c_void_p
_c_int = ctypes.c_int
_c_uint64 = ctypes.c_uint64
_new = object.__new__
_handle_outs = _lib.outs(_c_void_p)
_new_out = _lib.new_out
_handle_arg = _lib.handle_arg
_Stream = Stream

# Handed down by the modules above when they are imported (_lib.hand_down): the work of some methods.
if TYPE_CHECKING:  # for type checkers only: at run time the modules above hand these down (else:)
    from . import ipc, memory_pool, user_memory
    from .ipc import IPCAllocationHandle
    from .memory_pool import PoolAttributes
else:
    memory_pool = None  # memory_pool.py: pool attributes and trim
    user_memory = None  # user_memory.py: making user-defined resources (subclasses of MemoryResource)
    ipc = None          # ipc.py: the IPC methods


MemoryResourceKind = _c_enum(
    "MemoryResourceKind", "cucore_memory_resource_kind_t", "CUCORE_MEMORY_RESOURCE_", module=__name__,
    skip=("CUCORE_MEMORY_RESOURCE_UNSET",), doc="""cucore_memory_resource_kind_t:

    DEVICE         a stream-ordered device memory pool
    LEGACY_PINNED  page-locked host memory (cuMemAllocHost), synchronous
    PINNED         a stream-ordered pool of page-locked host memory
    MANAGED        managed (unified) memory: cuMemAllocManaged (synchronous) or a stream-ordered pool
    VIRTUAL        virtual memory management (cuMemCreate + cuMemMap), synchronous, growable buffers
    USER           allocate/deallocate are the user's (a Python subclass of MemoryResource, ...)
    IMPORTED       a pool imported from another process (maps its buffers, cannot allocate)
    GRAPHICS       the mapping of a graphics resource (cucore.graphics): one range, cannot allocate
    GRAPH          allocations inside graphs (GraphMemoryResource): only on a capturing stream
    """)


# ---- argument conversion (cold paths; the hot paths inline the common case) ----------------------------

_sizes: Dict[int, Any] = {}  # allocation size -> its c_uint64 argument object (read-only, so shareable by threads)


def _size_arg(size):
    """The c_uint64 argument for an allocation size, validated; common sizes are kept for reuse."""
    size = _u64(size, "size")
    c = _sizes.get(size)
    if c is None:
        c = _c_uint64(size)
        if len(_sizes) < 4096:
            _sizes[size] = c
    return c


def _options_and_device(options, device, options_cls):
    """(options or None, Device) of a constructor taking (options=None, *, device=None), as cuda.core's
    PinnedMemoryResource and ManagedMemoryResource do; a Device or ordinal first (cucore's earlier
    `(device, options)` order) is still taken as the device."""
    if (isinstance(options, Device) or (isinstance(options, int) and not isinstance(options, bool))) and \
            device is None:
        options, device = None, options
    return (None if options is None else options_of(options, options_cls)), _device(device)


def _device_and_options(device, options, options_cls):
    """(Device, options) of a constructor taking (device=None, options=None); as in cuda.core, the options
    may come first (PinnedMemoryResource(PinnedMemoryResourceOptions(...)))."""
    if options is None and isinstance(device, (options_cls, dict)):
        device, options = None, device
    options = options_cls() if options is None else options_of(options, options_cls)
    return _device(device), options


def _create(cls, create, dev, struct, options, home):
    h = ctypes.c_void_p()
    st = create(dev._h, struct, h)
    if st:
        raise_error(st, dev)
    return cls._wrap(h.value, options, home)


# The class of each built-in kind (MemoryResourceKind -> class), for answers that name a resource made elsewhere
# (Buffer.memory_resource, Device.memory_resource): each class declares its `_resource_kind`, and
# MemoryResource.__init_subclass__ registers it when the kind's module defines it.
_KIND_CLASSES: Dict[int, Any] = {}

# Live Python wrappers by libcucore handle value. While a wrapper lives it holds a user reference, so the
# value stays its object's; a value whose user references were all released is never valid again
# (generations), so this is an identity map.
_wrappers: Any = weakref.WeakValueDictionary()

# The exception a user-defined resource's allocate raised on this thread, as (status it became, exception),
# until the Python caller of the failed allocation re-raises it (user_memory.py sets it).
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
    user_memory.py) becomes a libcucore resource after its __init__ has run, so that its device_id and
    accessibility may depend on what __init__ set; the built-in kinds are made by their __new__."""

    def __call__(cls, *args, **kwargs):
        if cls._user_defined:
            return user_memory.construct(cls, args, kwargs)
        return super().__call__(*args, **kwargs)


class MemoryResource(HandleObject, _MemoryAccess, metaclass=_ResourceType):
    """Where buffers come from: DeviceMemoryResource (a stream-ordered device memory pool),
    PinnedMemoryResource, ManagedMemoryResource, VirtualMemoryResource, LegacyPinnedMemoryResource, or a
    subclass of your own. `allocate(size, *, stream)` gives a Buffer, which keeps its resource alive;
    equality is identity of the libcucore object.

    A user-defined resource subclasses MemoryResource and defines `allocate(self, size, stream)` returning
    an address (an int, or an object with an int `handle`, kept alive until deallocated) and
    `deallocate(self, ptr, size, stream)`, plus `device_id` (an ordinal, -1 for host memory) and optionally
    `is_device_accessible`, `is_host_accessible`, `is_managed` (attributes or properties). Then
    `mr.allocate(size, stream=s)` returns a Buffer whose memory came from your allocate and goes back
    through your deallocate; every language allocating from the resource calls them (see user_memory.py)."""

    __slots__ = ("_hv", "_info", "_config", "_home")
    _hv: int
    _info: Any
    _config: Any
    _home: Any
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
            kind = cls.__dict__.get("_resource_kind")
            if kind is not None:  # a built-in kind's class: what answers naming a resource of that kind give
                _KIND_CLASSES[kind] = cls
            return
        # The nearest library class among the bases decides: below MemoryResource itself it is a
        # user-defined resource; below a built-in kind (DeviceMemoryResource, ...) an ordinary subclass.
        nearest = next(b for b in cls.__mro__[1:] if b.__dict__.get("_builtin"))
        if nearest is MemoryResource:
            user_memory.prepare_class(cls)

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

    # ---- pool attributes and trim (the work is in memory_pool.py) --------------------------------------

    def pool_attribute(self, attribute: Union[int, str]) -> int:
        """A pool attribute (a PoolAttribute or its value) as an int; NotSupportedError without a pool."""
        return memory_pool.pool_attribute(self, attribute)

    def set_pool_attribute(self, attribute: Union[int, str], value: int) -> None:
        """Sets a settable pool attribute (high-water marks: 0 only, which resets them)."""
        memory_pool.set_pool_attribute(self, attribute, value)

    @property
    def attributes(self) -> PoolAttributes:
        """The pool's attributes as properties (PoolAttributes)."""
        return memory_pool.PoolAttributes(self)

    def trim(self, min_bytes_to_keep: int = 0) -> None:
        """Return unused reserved memory to the system, keeping at least `min_bytes_to_keep` bytes."""
        memory_pool.trim(self, min_bytes_to_keep)

    @property
    def kind(self) -> int:
        """The MemoryResourceKind."""
        return self._get_info()[0]

    @property
    def device_id(self) -> int:
        """The ordinal of the device whose memory the resource gives, or -1 for host memory."""
        return self._get_info()[1]

    def _accessibility(self):
        """(device-accessible, host-accessible, managed): is_device_accessible, is_host_accessible and
        is_managed (_MemoryAccess, as Buffer has them)."""
        return self._get_info()[2:5]

    @property
    def is_stream_ordered(self) -> bool:
        """Whether allocation and release are ordered on a stream (pools: a stream is required)."""
        return self._get_info()[5]

    # ---- allocation ------------------------------------------------------------------------------

    def allocate(self, size: int, *, stream: Any = None) -> Buffer:
        """A new Buffer of `size` bytes (0 is valid: a buffer with address 0), allocated in order on
        `stream` (a Stream or any object with __cuda_stream__), which also becomes the buffer's
        deallocation stream. A device memory pool needs a stream; page-locked host memory is allocated
        synchronously and takes None."""
        # The common case inline (an int size seen before, a Stream): one Python call less.
        csize = _sizes.get(size) if type(size) is int else None
        if csize is not None and type(stream) is _Stream and stream._h is not None:
            keep, sh = stream, stream._h
        else:
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
        b._hv = h
        b._raw = None
        b._size = size
        b._mr = self
        return b

    # ---- IPC (the work is in ipc.py) --------------------------------------------------------------

    @property
    def allocation_handle(self) -> IPCAllocationHandle:
        """The IPCAllocationHandle of this IPC-enabled pool (cucore.ipc): made once, kept and closed by this
        resource (made again if you close it); send it to other processes (it pickles)."""
        return ipc.allocation_handle(self)

    @classmethod
    def from_allocation_handle(cls, device_id: Union[Device, int], alloc_handle: Union[IPCAllocationHandle, int]) -> MemoryResource:
        """The pool another process exported (the IPCAllocationHandle it sent; a bare file descriptor is refused:
        see cucore.ipc), imported on `device_id` (a Device or an ordinal): a mapped resource, which imports
        buffers and cannot allocate."""
        return ipc.import_memory_resource(device_id, alloc_handle)

    @property
    def uuid(self) -> Optional[_uuid.UUID]:
        """The pool's identifier, the same in every process that has it, for an IPC-enabled or mapped
        (imported) pool; None for other resources."""
        return ipc.uuid_of(self)

    def register(self, uuid: _uuid.UUID) -> MemoryResource:
        """Remember this mapped resource in this process under `uuid` (MemoryResource.from_registry finds it)
        and return the resource registered under it (an earlier one wins)."""
        return ipc.register(self, uuid)

    @staticmethod
    def from_registry(uuid: _uuid.UUID) -> MemoryResource:
        """The resource registered under `uuid` (register); RuntimeError when there is none."""
        return ipc.from_registry(uuid)

    @property
    def is_handle_owned(self) -> bool:
        """Whether closing this resource (and its last buffer) destroys its pool: False for a device's current
        pool (DeviceMemoryResource(dev) without options) and for resources without a pool."""
        out = _c_int()
        st = _cucore_memory_resource_owns_pool(self._h, out)
        if st:
            raise_error(st, self)
        return bool(out.value)

    def deallocate(self, ptr: Any, size: int, *, stream: Any = None) -> None:
        """Give `size` bytes at `ptr` (an int address) back to this resource, ordered on `stream` (a Stream or any
        object with __cuda_stream__; required for pools, ignored by synchronous resources): memory owned outside
        any Buffer, as Buffer.from_handle(ptr, size, mr) hands it back when closed. Never the memory of a live
        Buffer (it would be freed twice). A user-defined resource defines its own deallocate."""
        address = int(ptr)
        if stream is None:
            keep = sh = None
        else:
            s = _stream_of(stream)
            keep, sh = s, s._h
        st = _cucore_memory_resource_deallocate(self._h, _c_uint64(address), _c_uint64(_u64(size, "size")), sh)
        if st:
            raise_error(st, self, keep)

    @property
    def is_ipc_enabled(self) -> bool:
        """Whether other processes can import this pool (created with ipc_enabled=True)."""
        return ipc.is_ipc_enabled(self)

    @property
    def is_mapped(self) -> bool:
        """Whether this pool was imported from another process (it maps buffers, cannot allocate)."""
        return ipc.is_mapped(self)

    def __reduce__(self):
        return ipc.reduce_resource(self)  # IPC-enabled pools only


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
    b._hv = out.value
    b._h = _handle_arg(b._hv)
    b._raw = None
    b._size = size
    b._mr = _UNKNOWN  # asked from libcucore on first use (the wrapper registry keeps identity)
    return b


class LegacyPinnedMemoryResource(MemoryResource):
    """Page-locked host memory (cuMemAllocHost / cuMemFreeHost), made in `device_id`'s primary context
    (None: the current device). Allocation and release are synchronous, so `stream` is optional; the
    memory is accessible from the host (Buffer.handle is its address) and from the device."""

    __slots__ = ()
    _builtin = True
    _resource_kind = MemoryResourceKind.LEGACY_PINNED

    def __new__(cls, device_id: Union[Device, int, None] = None) -> LegacyPinnedMemoryResource:
        dev = _device(device_id)
        h = _c_void_p()
        st = _cucore_legacy_pinned_memory_resource_create(dev._h, h)
        if st:
            raise_error(st, dev)
        return cls._wrap(h.value)


# Device.memory_resource and Device.allocate, and Buffer.memory_resource, give resources; device.py and
# buffer.py are below this module.
_lib.hand_down(("device", "buffer"), MemoryResource=MemoryResource)
_lib.hand_down("device", _allocate_from_device=_allocate_from_device)
