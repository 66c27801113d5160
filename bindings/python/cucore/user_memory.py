"""User-defined memory resources: a Python subclass of MemoryResource behind cucore_user_memory_resource_create.

    class Counting(cucore.MemoryResource):
        def __init__(self, upstream):
            self.upstream, self.live = upstream, 0
        device_id = property(lambda self: self.upstream.device_id)
        def allocate(self, size, stream):             # an address (int), or an object with an int handle
            self.live += 1
            return self.upstream.allocate(size, stream=stream)
        def deallocate(self, ptr, size, stream):
            self.live -= 1

    mr = Counting(dev.memory_resource)
    buf = mr.allocate(4096, stream=s)                  # a Buffer; Counting.allocate gave its memory

The class's allocate becomes the callback, and `mr.allocate` libcucore's allocation (which returns a Buffer, as
for every resource); the class's own function stays reachable as `type(mr)._py_allocate`.

libcucore calls the class's allocate/deallocate through ctypes callbacks, from whichever thread allocates or
frees (ctypes takes the GIL; threads Python did not start work too), and every language allocating from the
resource reaches them. What allocate returns, if not a plain int, is kept alive until its deallocate. An
exception in allocate becomes an error status for libcucore, and the Python caller of the allocation gets the
original exception back (it waits in a thread-local slot). An exception in deallocate cannot reach the
release that freed the buffer: it becomes an error status, which libcucore counts and passes to the release
error handler (cucore.release_error_count, cucore.set_release_error_handler), and the exception itself goes to
sys.unraisablehook with its traceback. deallocate is never retried.

Lifetime: libcucore holds the Python object (so the callbacks can run) only while it needs it: while buffers
from it are outstanding, and for good once it is made a device's default resource. Otherwise the Python
object owns the libcucore resource as any wrapper does, so dropping it frees the resource (and runs the
destroy callback, which forgets the object).
"""
import ctypes
import itertools
import operator
import sys
from typing import Any, Dict
import threading
import weakref

from . import _lib
from .common import _U64_MAX, CUDAError, Status, raise_error, report_unraisable
from .managed_memory import ManagedBuffer
from .memory_resource import MemoryResource, _user_errors, _wrappers
from .stream import Stream

(_cucore_user_memory_resource_create, _cucore_stream_retain) = _lib.bind(
    globals(), "cucore_user_memory_resource_create", "cucore_stream_retain")

CallbacksC = _lib.STRUCTS["cucore_memory_resource_callbacks_t"]
_AllocateFn = _lib.CALLBACKS["cucore_memory_resource_callbacks_t.allocate"]
_DeallocateFn = _lib.CALLBACKS["cucore_memory_resource_callbacks_t.deallocate"]
_DestroyFn = _lib.CALLBACKS["cucore_memory_resource_callbacks_t.destroy"]

_states: Dict[int, Any] = {}  # user_data key -> _State, from creation until libcucore's destroy callback
_next_key = itertools.count(1).__next__


class _State:
    """What the callbacks of one resource need: its Python object (weakly, and strongly while libcucore
    may call it without Python holding it) and the objects allocate returned, by address."""

    __slots__ = ("ref", "strong", "outstanding", "pinned", "kept", "lock", "__weakref__")

    def __init__(self, obj):
        self.ref = weakref.ref(obj)
        self.strong = None
        self.outstanding = 0
        self.pinned = False
        self.kept = {}  # address -> [objects allocate returned at that address]
        self.lock = threading.RLock()  # a collection inside a locked section may free a buffer: re-entry

    def obj(self):
        return self.strong if self.strong is not None else self.ref()


def prepare_class(cls):
    """Called for each class deriving from MemoryResource directly (not from a built-in kind): its
    allocate becomes the callback, and `cls.allocate` the call through libcucore that returns a Buffer."""
    fn = cls.__dict__.get("allocate")
    if fn is not None:
        if not callable(fn):
            raise TypeError(f"{cls.__name__}.allocate must be a method")
        cls._py_allocate = fn
        cls.allocate = _allocate_buffer
    cls._user_defined = True


def _allocate_buffer(self, size, stream=None):
    """A new Buffer of `size` bytes whose memory comes from this resource's allocate, made through
    libcucore (cucore_memory_resource_allocate), allocated in order on `stream` (None: no stream)."""
    b = MemoryResource.allocate(self, size, stream=stream)
    if self._managed:
        b.__class__ = ManagedBuffer
    return b


def _trait(obj, name, default):
    """obj.<name> when its class defines it, else `default` (MemoryResource's own properties ask libcucore,
    which has no answer yet while the resource is being made)."""
    if getattr(type(obj), name, None) is getattr(MemoryResource, name):
        return default
    return getattr(obj, name)


def _flag(obj, name, default):
    value = _trait(obj, name, default)
    if not isinstance(value, (bool, int)):
        raise TypeError(f"{type(obj).__name__}.{name} must be a bool, not {type(value).__name__}")
    return bool(value)


def construct(cls, args, kwargs):
    """`cls(*args, **kwargs)` for a user-defined resource: the object, its __init__, then the libcucore
    resource with the callbacks below."""
    for name in ("_py_allocate", "deallocate"):
        # (MemoryResource.deallocate is the built-in resources' own: a user's resource defines its own.)
        if not callable(getattr(cls, name, None)) or getattr(cls, name) is getattr(MemoryResource, name, None):
            raise TypeError(f"{cls.__name__} must define allocate(self, size, stream) and "
                            f"deallocate(self, ptr, size, stream) to be a memory resource")
    obj = object.__new__(cls)
    obj._h = None  # not a libcucore resource until __init__ has run
    obj._raw = None
    obj._hv = 0
    obj._info = None
    obj._config = None
    obj._home = None
    obj._managed = False
    obj._user_key = 0
    obj.__init__(*args, **kwargs)

    if getattr(cls, "device_id", None) is MemoryResource.device_id:
        raise TypeError(f"{cls.__name__} must define device_id (the ordinal of the device whose memory it "
                        f"gives, or -1 for host memory), as an attribute or a property")
    device_id = obj.device_id
    if isinstance(device_id, bool):
        raise TypeError(f"{cls.__name__}.device_id must be an int, not bool")
    try:
        device_id = operator.index(device_id)
    except TypeError:
        raise TypeError(f"{cls.__name__}.device_id must be an int, not {type(device_id).__name__}") from None
    if not -1 <= device_id < 2**31:
        raise ValueError(f"{cls.__name__}.device_id must be a device ordinal or -1 (host memory), not {device_id}")
    c = CallbacksC()
    c.struct_size = ctypes.sizeof(c)
    c.allocate = _ALLOCATE_CB
    c.deallocate = _DEALLOCATE_CB
    c.destroy = _DESTROY_CB
    c.device_id = device_id
    c.device_accessible = _flag(obj, "is_device_accessible", device_id >= 0)
    c.host_accessible = _flag(obj, "is_host_accessible", device_id < 0)
    c.managed = obj._managed = _flag(obj, "is_managed", False)

    key = obj._user_key = _next_key()
    c.user_data = key
    _states[key] = _State(obj)
    out = ctypes.c_void_p()
    st = _cucore_user_memory_resource_create(c, out)
    if st:
        del _states[key]  # destroy is never called when creation fails
        raise_error(st)
    obj._hv = out.value
    obj._h = _lib.handle_arg(out.value)
    _wrappers[out.value] = obj
    return obj


def pin(mr):
    """Keep a user-defined resource's Python object for the life of the process: libcucore holds the
    resource where Python cannot see it (a device's default resource)."""
    state = _states.get(getattr(mr, "_user_key", 0))
    if state is not None:
        with state.lock:
            state.pinned = True
            state.strong = mr


# ---- the callbacks ---------------------------------------------------------------------------------------

def _status_of(exc):
    """The cucore_status_t an exception from allocate or deallocate becomes for libcucore (and other
    languages)."""
    if isinstance(exc, CUDAError) and isinstance(exc.status, int) and exc.status:
        return int(exc.status)
    if isinstance(exc, MemoryError):
        return Status.ERROR_OUT_OF_MEMORY
    if isinstance(exc, (ValueError, TypeError, OverflowError)):
        return Status.ERROR_INVALID_ARGUMENT
    return Status.ERROR_INVALID_STATE


def _borrowed_stream(h):
    """A Stream of its own reference for a stream libcucore lends for the duration of a callback."""
    if not h:
        return None
    st = _cucore_stream_retain(h)
    if st:
        raise_error(st)
    return Stream._wrap(ctypes.c_void_p(h))


def _address_of(result):
    if isinstance(result, bool):
        raise TypeError("allocate must return an address (an int) or an object with an int handle, not bool")
    if isinstance(result, int):
        address = result
    else:
        handle = getattr(result, "handle", None)
        if isinstance(handle, bool) or not isinstance(handle, int):
            raise TypeError(f"allocate must return an address (an int) or an object with an int handle, not "
                            f"{type(result).__name__}")
        address = handle
    if not 0 < address <= _U64_MAX:
        raise ValueError(f"allocate returned the address {address:#x}: not a valid address for a non-empty "
                         f"allocation")
    return address


def _allocate_trampoline(key, size, stream_h, address_out):
    state = None
    _user_errors.pending = None  # one left by a failure no Python caller saw (a C caller's) is stale now
    try:
        state = _states.get(key)
        obj = state.obj() if state is not None else None
        if obj is None:
            raise RuntimeError("the Python object of this user-defined memory resource is gone (it was dropped "
                               "while libcucore still held the resource)")
        result = obj._py_allocate(size, stream=_borrowed_stream(stream_h))
        address = _address_of(result)
        with state.lock:
            if type(result) is not int:
                state.kept.setdefault(address, []).append(result)
            state.outstanding += 1
            state.strong = obj  # libcucore may call deallocate after Python lets go of the object
        address_out[0] = address
        return 0
    except BaseException as e:  # never let an exception cross into libcucore
        # The Python caller of the failed allocation on this thread re-raises it; a C caller gets the status
        # (and libcucore's message), as from any allocator.
        status = _status_of(e)
        _user_errors.pending = (int(status), e)
        return int(status)


def _deallocate_trampoline(key, address, size, stream_h):
    state = _states.get(key)
    obj = state.obj() if state is not None else None
    drop = None
    status = 0
    try:
        if obj is None:
            raise RuntimeError(f"the Python object of a user-defined memory resource is gone: {size} bytes at "
                               f"{address:#x} are not returned")
        obj.deallocate(address, size, stream=_borrowed_stream(stream_h))
    except BaseException as e:  # never let an exception cross into libcucore
        # The status makes libcucore report a release error (counted, passed to the handler); the exception's
        # traceback goes to sys.unraisablehook, since no caller can receive it.
        status = int(_status_of(e))
        report_unraisable(e, "Exception in the deallocate of a cucore user-defined memory resource (reported "
                             "to libcucore as a release error)", obj)
    finally:
        if state is not None:
            with state.lock:
                kept = state.kept.get(address)
                if kept:
                    drop = kept.pop()
                    if not kept:
                        del state.kept[address]
                state.outstanding -= 1
                if state.outstanding <= 0 and not state.pinned:
                    state.outstanding = 0
                    obj, state.strong = state.strong, None  # may free the object, after the lock
    del drop, obj
    return status


def _destroy_trampoline(key):
    _states.pop(key, None)


# Module-level, so they live as long as the process (libcucore may call them until it unloads).
_ALLOCATE_CB = _AllocateFn(_allocate_trampoline)
_DEALLOCATE_CB = _DeallocateFn(_deallocate_trampoline)
_DESTROY_CB = _DestroyFn(_destroy_trampoline)

# MemoryResource's metaclass and __init_subclass__ make user-defined resources with this module's construct
# and prepare_class, and Device.memory_resource's setter pins them; memory_resource.py and device.py are below
# this module.
_lib.hand_down(("memory_resource", "device"), user_memory=sys.modules[__name__])
