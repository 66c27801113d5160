"""CUDA streams (include/cucore/stream.h)."""
from __future__ import annotations

import ctypes
import functools
import itertools
import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Set, Tuple, Union

from . import _lib
from ._handle import HandleObject, wrap_foreign
from .common import check_options, closed_error, options_of, raise_error, report_unraisable
from .context import Context
from .device import _device, _device_from_owned_handle
from .event import Event, _options_ref as _event_options_ref

if TYPE_CHECKING:  # for type checkers only: at run time graph_builder.py hands GraphBuilder down (else:)
    from .device import Device
    from .event import EventOptions
    from . import memory_operations
    from .graph_builder import GraphBuilder
    from .device_resources import DeviceResources
else:
    GraphBuilder = None  # graph_builder.py: Stream.create_graph_builder, a GraphBuilder where a stream is taken
    memory_operations = None  # memory_operations.py: the work of the stream memory operations
    DeviceResources = None  # device_resources.py: Stream.resources

(_cucore_stream_create, _cucore_stream_create_in_context, _cucore_stream_get_legacy_default,
 _cucore_stream_get_per_thread_default, _cucore_stream_from_handle, _cucore_stream_retain,
 _cucore_stream_release, _cucore_stream_synchronize, _cucore_stream_query, _cucore_stream_wait_event,
 _cucore_stream_wait_stream, _cucore_stream_record, _cucore_stream_launch_host_func, _cucore_stream_device,
 _cucore_stream_context, _cucore_stream_priority, _cucore_stream_flags, _cucore_stream_is_owned,
 _cucore_stream_handle, _cucore_stream_capture_status, _cucore_event_record) = _lib.bind(
    globals(), "cucore_stream_create", "cucore_stream_create_in_context",
    "cucore_stream_get_legacy_default", "cucore_stream_get_per_thread_default", "cucore_stream_from_handle",
    "cucore_stream_retain", "cucore_stream_release", "cucore_stream_synchronize", "cucore_stream_query",
    "cucore_stream_wait_event", "cucore_stream_wait_stream", "cucore_stream_record",
    "cucore_stream_launch_host_func", "cucore_stream_device", "cucore_stream_context",
    "cucore_stream_priority", "cucore_stream_flags", "cucore_stream_is_owned", "cucore_stream_handle",
    "cucore_stream_capture_status", "cucore_event_record")
(_fast_stream_create_in_context, _fast_stream_release, _fast_stream_synchronize, _fast_stream_query,
 _fast_stream_wait_event, _fast_stream_wait_stream, _fast_stream_record, _fast_stream_launch_host_func,
 _fast_event_record) = _lib.bind_unchecked(
    globals(), "cucore_stream_create_in_context", "cucore_stream_release", "cucore_stream_synchronize",
    "cucore_stream_query", "cucore_stream_wait_event", "cucore_stream_wait_stream", "cucore_stream_record",
    "cucore_stream_launch_host_func", "cucore_event_record")

_c_void_p = ctypes.c_void_p
_c_int = ctypes.c_int
_byref = ctypes.byref
_new = object.__new__
_int_outs = _lib.outs(_c_int)
_handle_outs = _lib.outs(_c_void_p)
_new_out = _lib.new_out
_handle_arg = _lib.handle_arg

STREAM_BLOCKING = _lib.C["CUCORE_STREAM_BLOCKING"]
# cucore_capture_status_t -> Stream.capture_status's names
_CAPTURE_STATUS_NAMES = {v: k for k, v in _lib.c_names("cucore_capture_status_t", "CUCORE_CAPTURE_STATUS_").items()}
CU_STREAM_LEGACY = 1
CU_STREAM_PER_THREAD = 2


@dataclass
class StreamOptions:
    """Options for new streams (cucore_stream_options_t).

    nonblocking: True (the default, as in cuda.core) for a stream that does not synchronize with the
        legacy default stream; False for a blocking one.
    priority: None for the default; lower numbers are higher priority, down to
        Device.stream_priority_range.greatest (values outside the range are clamped by the driver).
    """
    nonblocking: bool = True
    priority: Optional[int] = None

    def __post_init__(self) -> None:
        check_options(self, flags=("nonblocking",))
        if self.priority is not None and (isinstance(self.priority, bool) or not isinstance(self.priority, int)):
            raise TypeError(f"StreamOptions.priority must be an int or None, not {type(self.priority).__name__}")
        if self.priority is not None and not -2**31 <= self.priority < 2**31:
            raise ValueError(f"StreamOptions.priority {self.priority} does not fit in 32 bits")


_options_cache: Dict[Any, Any] = {}  # (flags, priority) -> (cucore_stream_options_t, byref of it): only read by C, shareable


def _options_key(options):
    if type(options) is not StreamOptions:
        options = options_of(options, StreamOptions)
    return (0 if options.nonblocking else STREAM_BLOCKING, options.priority or 0)


def _cached_options(key):
    c = _options_cache.get(key)
    if c is None:
        struct = _lib.StreamOptionsC(ctypes.sizeof(_lib.StreamOptionsC), key[0], key[1])
        c = (struct, _byref(struct))
        if len(_options_cache) < 256:
            _options_cache[key] = c
    return c


def _options_struct(options):
    """The C struct for `options` (StreamOptions, a dict of its fields, or None -> None)."""
    if options is None:
        return None
    return _cached_options(_options_key(options))[0]


def _options_ref(options):
    """What unchecked calls take for `options` (not None): a byref() of its struct, or None (NULL, the
    C defaults) when every option is the default."""
    key = _options_key(options)
    return _cached_options(key)[1] if key != (0, 0) else None


# ---- host functions: one C trampoline; the Python callables wait in _pending until they run --------

_pending: Dict[Any, Any] = {}
_next_key = itertools.count(1).__next__

# ctypes runs each callback from a thread Python does not know under a brand-new thread state, created and
# destroyed around every call (PyGILState_Ensure/Release): several microseconds per host function, as much
# as the driver's own round trip. The driver runs host functions on a few long-lived threads, so on the
# first call in such a thread one extra PyGILState_Ensure (never released) keeps its thread state alive
# and later calls only take the GIL. CUCORE_PIN_HOST_THREADS=0 turns this off. (Host functions still
# pending when the interpreter exits are unsafe either way: synchronize streams before exiting.)
_pinned_threads: Set[int] = set()
_get_ident = threading.get_ident
_gil_ensure: Any
try:
    _gil_ensure = ctypes.pythonapi.PyGILState_Ensure
    _gil_ensure.restype = ctypes.c_int
    _gil_ensure.argtypes = []
except (AttributeError, OSError):  # not CPython
    _gil_ensure = None
if os.environ.get("CUCORE_PIN_HOST_THREADS", "1") == "0":
    _gil_ensure = None


def _pin_thread_state(tid):
    if _gil_ensure is not None and tid not in _pinned_threads and not _is_python_thread(tid):
        _gil_ensure()
    _pinned_threads.add(tid)


def _is_python_thread(tid):
    # A thread started by Python already keeps its thread state; only foreign (driver) threads need pinning.
    return tid in threading._active  # noqa: SLF001 (read-only look-up)


def _host_trampoline(key):
    if _get_ident() not in _pinned_threads:
        _pin_thread_state(_get_ident())
    item = _pending.pop(key, None)
    if item is None:
        return
    fn, args = item
    try:
        fn(*args)
    except BaseException as e:  # never let an exception cross into the driver's thread
        report_unraisable(e, "Exception ignored in a host function launched on a cucore Stream", fn)


_HOST_CB = _lib.HostFn(_host_trampoline)

class Stream(HandleObject):
    """A CUDA stream. Create with Device.create_stream(); wrap a foreign stream with
    Stream.from_handle(). Speaks the __cuda_stream__ protocol."""

    __slots__ = ("_hv",)
    _hv: int  # the libcucore handle as an int (launch blocks hold it); valid while _h is not None
    _release = staticmethod(_fast_stream_release)
    _handle_fn = staticmethod(_cucore_stream_handle)

    def __new__(cls, *args, **kwargs):
        raise TypeError("Stream cannot be instantiated directly: use Device.create_stream() or "
                        "Stream.from_handle()")

    @classmethod
    def _wrap(cls, h):
        """A new wrapper owning the +1 reference in `h` (a c_void_p out-parameter)."""
        obj = object.__new__(cls)
        obj._h = _handle_arg(h.value)
        obj._hv = h.value
        obj._raw = None
        return obj

    @classmethod
    def _create_in_context(cls, context, options=None):
        h = _c_void_p()
        st = _fast_stream_create_in_context(context._h, None if options is None else _options_ref(options),
                                            _byref(h))
        if st:
            raise_error(st, context)
        return cls._wrap(h)

    @classmethod
    def _legacy_default(cls, device):
        h = _c_void_p()
        st = _cucore_stream_get_legacy_default(device._h, h)
        if st:
            raise_error(st, device)
        return cls._wrap(h)

    @classmethod
    def _per_thread_default(cls, device):
        h = _c_void_p()
        st = _cucore_stream_get_per_thread_default(device._h, h)
        if st:
            raise_error(st, device)
        return cls._wrap(h)

    @classmethod
    def from_handle(cls, handle: Any) -> Stream:
        """Wrap a foreign stream without owning it: `handle` is a raw CUstream address (an int; 1 and 2
        are the legacy and per-thread default streams) or any object with `__cuda_stream__` (kept
        alive for as long as the wrapper lives). The handle is trusted: the driver dereferences it, so
        a garbage address can crash the process. A GraphBuilder gives a new reference to its own stream
        (so that work enqueued through it is captured as the builder's)."""
        owner = None
        obj = handle
        if isinstance(obj, GraphBuilder):
            return obj._new_stream_reference()
        if isinstance(obj, int) and not isinstance(obj, bool):
            raw = obj
        else:
            raw = _cuda_stream_handle(obj)
            if raw is None:
                raise TypeError(f"Stream.from_handle() takes a CUstream address (int) or an object with "
                                f"__cuda_stream__, not {type(obj).__name__}")
            owner = obj
        st, hv = wrap_foreign(_cucore_stream_from_handle, owner, raw)
        if st:
            raise_error(st)
        obj = object.__new__(cls)
        obj._h = _handle_arg(hv)
        obj._hv = hv
        obj._raw = None
        return obj

    # ---- protocol and identity --------------------------------------------------------------

    def __cuda_stream__(self) -> Tuple[int, int]:
        """The stream protocol: (version 0, raw CUstream address)."""
        return (0, self.handle)

    def __repr__(self):
        if self._h is None:
            return "<Stream (closed)>"
        try:
            return f"<Stream 0x{self.handle:x} on device {self.device.device_id}>"
        except Exception:
            return "<Stream>"

    # ---- properties -------------------------------------------------------------------------

    @property
    def is_nonblocking(self) -> bool:
        """Whether the stream does not synchronize with the legacy default stream."""
        out = ctypes.c_uint32()
        st = _cucore_stream_flags(self._h, out)
        if st:
            raise_error(st, self)
        return not (out.value & STREAM_BLOCKING)

    @property
    def priority(self) -> int:
        """The stream's priority (lower numbers are higher priority; see Device.stream_priority_range)."""
        out = ctypes.c_int()
        st = _cucore_stream_priority(self._h, out)
        if st:
            raise_error(st, self)
        return out.value

    @property
    def is_owned(self) -> bool:
        """Whether the library created the stream (True) or wraps a foreign one (False)."""
        out = ctypes.c_int()
        st = _cucore_stream_is_owned(self._h, out)
        if st:
            raise_error(st, self)
        return bool(out.value)

    @property
    def device(self) -> Device:
        """The Device of the stream's context."""
        out = _c_void_p()
        st = _cucore_stream_device(self._h, out)
        if st:
            raise_error(st, self)
        return _device_from_owned_handle(out)

    @property
    def context(self) -> Context:
        """The Context the stream belongs to (retained by the stream)."""
        out = _c_void_p()
        st = _cucore_stream_context(self._h, out)
        if st:
            raise_error(st, self)
        return Context._wrap(out)

    @property
    def resources(self) -> DeviceResources:
        """The SM and workqueue resources of the stream's context (a green context's own)."""
        return DeviceResources(self)

    # ---- operations -------------------------------------------------------------------------

    def sync(self) -> None:
        """Wait until all work queued on the stream has completed."""
        st = _fast_stream_synchronize(self._h)
        if st:
            raise_error(st, self)

    @property
    def is_done(self) -> bool:
        """Whether all queued work has completed."""
        try:
            out, ref = pair = _int_outs.pop()
        except IndexError:
            out, ref = pair = _new_out(_c_int)
        st = _fast_stream_query(self._h, ref)
        value = out.value
        _int_outs.append(pair)
        if st:
            raise_error(st, self)
        return value != 0

    def record(self, event: Optional[Event] = None, options: Union[EventOptions, Dict[str, Any], None] = None) -> Event:
        """Record `event` on the stream and return it; with no event, create one (with `options`,
        EventOptions or None) in the stream's context, record it, and return it."""
        if event is None:
            try:
                out, ref = pair = _handle_outs.pop()
            except IndexError:
                out, ref = pair = _new_out(_c_void_p)
            st = _fast_stream_record(self._h, None if options is None else _event_options_ref(options), ref)
            h = out.value
            _handle_outs.append(pair)
            if st:
                raise_error(st, self)
            e = _new(Event)
            e._h = _handle_arg(h)
            e._raw = None
            e._flags = 0 if options is None else None
            e._spares = None
            return e
        if not isinstance(event, Event):
            raise TypeError(f"record() takes an Event or None, not {type(event).__name__}")
        if options is not None:
            raise ValueError("options apply only when record() creates the event")
        st = _fast_event_record(event._h, self._h)
        if st:
            raise_error(st, event, self)
        return event

    def wait(self, event_or_stream: Any) -> None:
        """Make future work on this stream wait for an Event's last recorded work, or for all work
        queued so far on another stream (a Stream, or anything with __cuda_stream__)."""
        if isinstance(event_or_stream, Event):
            st = _fast_stream_wait_event(self._h, event_or_stream._h)
        else:
            other = event_or_stream
            if not isinstance(other, Stream):
                if not hasattr(other, "__cuda_stream__"):
                    raise TypeError(f"wait() takes an Event, a Stream or an object with __cuda_stream__, "
                                    f"not {type(other).__name__}")
                other = Stream.from_handle(other)
            st = _fast_stream_wait_stream(self._h, other._h)
        if st:
            raise_error(st, self, event_or_stream)

    def launch_host_func(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> None:
        """Queue `fn(*args, **kwargs)` on the stream: it runs on a driver thread after all earlier work and
        blocks later work until it returns. It must not call CUDA (nor cucore). Exceptions it raises go to
        sys.unraisablehook. `fn` and its arguments are kept alive until it has run."""
        if not callable(fn):
            raise TypeError(f"launch_host_func() needs a callable, not {type(fn).__name__}")
        if kwargs:
            fn = functools.partial(fn, **kwargs)
        key = _next_key()
        _pending[key] = (fn, args)
        st = _fast_stream_launch_host_func(self._h, _HOST_CB, _handle_arg(key))
        if st:
            _pending.pop(key, None)
            raise_error(st, self)

    def create_event(self, options: Union[EventOptions, Dict[str, Any], None] = None) -> Event:
        """A new (unrecorded) Event in this stream's context."""
        return self.context.create_event(options)

    def create_graph_builder(self) -> GraphBuilder:
        """A new GraphBuilder capturing the work enqueued on this stream (between its begin_building and
        end_building); the builder holds the stream. The legacy default stream cannot capture."""
        return GraphBuilder._create(self)

    @property
    def capture_status(self) -> str:
        """Whether the stream is being captured into a graph (by a GraphBuilder or foreign code), from the
        driver: "none", "active", or "invalidated" (a call that cannot be captured ended the capture: end it)."""
        out = ctypes.c_int()
        st = _cucore_stream_capture_status(self._h, out)
        if st:
            raise_error(st, self)
        return _CAPTURE_STATUS_NAMES.get(out.value, str(out.value))

    # ---- stream memory operations (the work is in memory_operations.py) ---------------------------------

    def write_value(self, target: Any, value: int, *, offset: int = 0, width: int = 32,
                    no_memory_barrier: bool = False) -> None:
        """Write `value` (`width` 32 or 64 bits) at byte `offset` of `target` (a Buffer, or an int device
        address; not managed memory; 4-/8-byte aligned) after this stream's earlier work (cuStreamWriteValue32/64).
        The write is fenced after the stream's earlier writes unless `no_memory_barrier`."""
        memory_operations.write_value(self, target, value, offset=offset, width=width,
                                      no_memory_barrier=no_memory_barrier)

    def wait_value(self, target: Any, value: int, *, offset: int = 0, width: int = 32, condition: str = "geq",
                   flush: bool = False) -> None:
        """Make this stream's later work wait until the value at byte `offset` of `target` meets `condition`
        against `value`: "geq" (a cyclic >=, the default), "eq", "and" or "nor" (cuStreamWaitValue32/64); then
        flush remote writes if `flush`. What writes the value must not itself wait behind this stream."""
        memory_operations.wait_value(self, target, value, offset=offset, width=width, condition=condition,
                                     flush=flush)

    def flush_remote_writes(self) -> None:
        """Flush outstanding remote writes before this stream's later work (NotSupportedError where the
        device cannot)."""
        memory_operations.flush_remote_writes(self)

    def memory_barrier(self, scope: str = "system") -> None:
        """A memory barrier in this stream's order, of `scope` "system" (the default) or "device"."""
        memory_operations.memory_barrier(self, scope)

    def batch_memory_ops(self, ops: Any) -> None:
        """Enqueue memory_operations.StreamMemoryOp operations in one cuStreamBatchMemOp, in order."""
        memory_operations.batch_memory_ops(self, ops)

# ---- the default streams ------------------------------------------------------------------------------

def legacy_default_stream(device: Union[Device, int, None] = None) -> Stream:
    """The legacy default stream (CU_STREAM_LEGACY) bound to `device` (default: the current device)."""
    return _device(device).default_stream


def per_thread_default_stream(device: Union[Device, int, None] = None) -> Stream:
    """The per-thread default stream (CU_STREAM_PER_THREAD) bound to `device` (default: current)."""
    return _device(device).per_thread_default_stream


# ---- stream arguments ------------------------------------------------------------------------------------

def _cuda_stream_handle(obj):
    """The raw CUstream address `obj` gives through the __cuda_stream__ protocol (version 0), or None when `obj`
    does not speak it; TypeError or ValueError for a malformed answer."""
    proto = getattr(obj, "__cuda_stream__", None)
    if proto is None:
        return None
    info = proto() if callable(proto) else proto
    if not (isinstance(info, tuple) and len(info) == 2):
        raise TypeError(f"{type(obj).__name__}.__cuda_stream__ must return (version, handle), not {info!r}")
    version, raw = info
    if version != 0:
        raise ValueError(f"unsupported __cuda_stream__ protocol version {version} (supported: 0)")
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise TypeError(f"{type(obj).__name__}.__cuda_stream__ gave a handle of type {type(raw).__name__}, not int")
    return raw


def _stream_of(stream):
    """`stream` as a Stream: a Stream, a GraphBuilder (its stream), or any object with __cuda_stream__ (wrapped;
    the caller keeps the wrapper alive for the duration of its call)."""
    if isinstance(stream, Stream):
        return stream
    if isinstance(stream, GraphBuilder):
        return stream.stream
    if stream is None:
        raise TypeError("a stream is required (a Stream or an object with __cuda_stream__)")
    if not hasattr(stream, "__cuda_stream__"):
        raise TypeError(f"stream must be a Stream or an object with __cuda_stream__, not {type(stream).__name__}")
    return Stream.from_handle(stream)


def _open_stream_handle(stream):
    """(Stream, its handle) for a stream argument where NULL would mean something else (allocate, close):
    a closed Stream is an error here, not NULL."""
    s = _stream_of(stream)
    h = s._h
    if h is None:
        raise closed_error(s)
    return s, h


# Device, Context and Event make or take Streams; device.py, context.py and event.py are below this module.
_lib.hand_down(("device", "context", "event"), Stream=Stream)
_lib.hand_down("device", _stream_options_ref=_options_ref)
