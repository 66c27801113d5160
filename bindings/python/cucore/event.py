"""CUDA events (include/cucore/event.h)."""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Union

from . import _lib
from ._handle import HandleObject
from .common import check_options, options_of, raise_error
from .context import Context
from .device import _device_from_owned_handle

(_cucore_event_create, _cucore_event_create_in_context, _cucore_event_from_handle, _cucore_event_retain,
 _cucore_event_release, _cucore_event_record, _cucore_event_synchronize, _cucore_event_query,
 _cucore_event_elapsed_time, _cucore_event_flags, _cucore_event_device, _cucore_event_context,
 _cucore_event_handle, _cucore_event_reset) = _lib.bind(
    globals(), "cucore_event_create", "cucore_event_create_in_context", "cucore_event_from_handle",
    "cucore_event_retain", "cucore_event_release", "cucore_event_record", "cucore_event_synchronize",
    "cucore_event_query", "cucore_event_elapsed_time", "cucore_event_flags", "cucore_event_device",
    "cucore_event_context", "cucore_event_handle", "cucore_event_reset")
(_fast_event_create_in_context, _fast_event_release, _fast_event_record, _fast_event_synchronize,
 _fast_event_query, _fast_event_elapsed_time, _fast_event_reset) = _lib.bind_unchecked(
    globals(), "cucore_event_create_in_context", "cucore_event_release", "cucore_event_record",
    "cucore_event_synchronize", "cucore_event_query", "cucore_event_elapsed_time", "cucore_event_reset")
# Renewed events a device keeps per kind for create_event (Event.close): bounded like the library's own
# spare driver events (core/event_cache.hpp).
_SPARES_PER_KIND = 32

_c_void_p = ctypes.c_void_p
_c_int = ctypes.c_int
_c_float = ctypes.c_float
_byref = ctypes.byref
_int_outs = _lib.outs(_c_int)
_float_outs = _lib.outs(_c_float)
_new_out = _lib.new_out
_handle_arg = _lib.handle_arg

# Handed down by the modules above when they are imported (_lib.hand_down).
if TYPE_CHECKING:  # for type checkers only: at run time the modules above hand these down (else:)
    from . import ipc
    from .device import Device
    from .stream import Stream
else:
    Stream = None  # stream.py: Event.record takes Streams
    ipc = None     # ipc.py: the work of the IPC methods

EVENT_TIMING = _lib.C["CUCORE_EVENT_TIMING"]
EVENT_BLOCKING_SYNC = _lib.C["CUCORE_EVENT_BLOCKING_SYNC"]
EVENT_INTERPROCESS = _lib.C["CUCORE_EVENT_INTERPROCESS"]


@dataclass
class EventOptions:
    """Options for new events (cucore_event_options_t).

    timing_enabled: record timestamps so that `end - start` gives the elapsed milliseconds.
    blocking_sync: Event.sync() blocks the thread instead of spinning.
    ipc_enabled: shareable with other processes (Event.ipc_descriptor(); see cucore.ipc); not with timing.
    """
    timing_enabled: bool = False
    blocking_sync: bool = False
    ipc_enabled: bool = False

    def __post_init__(self) -> None:
        check_options(self, flags=("timing_enabled", "blocking_sync", "ipc_enabled"))

    @property
    def _flags(self):
        return (EVENT_TIMING if self.timing_enabled else 0) | (EVENT_BLOCKING_SYNC if self.blocking_sync else 0) | \
            (EVENT_INTERPROCESS if self.ipc_enabled else 0)


_options_cache: Dict[int, Any] = {}  # flags -> (cucore_event_options_t, byref of it): only read by C, shareable


def _options_flags(options):
    if type(options) is not EventOptions:
        options = options_of(options, EventOptions)
    return options._flags


def _cached_options(flags):
    c = _options_cache.get(flags)
    if c is None:
        struct = _lib.EventOptionsC(ctypes.sizeof(_lib.EventOptionsC), flags)
        c = _options_cache[flags] = (struct, _byref(struct))
    return c


def _flags_ref(flags):
    """What unchecked calls take for event flags: None (NULL, the C defaults) for 0, else a byref() of the
    struct for them."""
    if not flags:
        return None
    c = _options_cache.get(flags)
    return (c if c is not None else _cached_options(flags))[1]


def _options_struct(options):
    """The C struct for `options` (EventOptions, a dict of its fields, or None -> None)."""
    if options is None:
        return None
    return _cached_options(_options_flags(options))[0]


def _options_ref(options):
    """What unchecked calls take for `options` (not None): a byref() of its struct, or None (NULL, the
    C defaults) when every option is the default."""
    if type(options) is EventOptions:  # inlined _options_flags: timing events are created often
        flags = (EVENT_TIMING if options.timing_enabled else 0) | \
            (EVENT_BLOCKING_SYNC if options.blocking_sync else 0) | (EVENT_INTERPROCESS if options.ipc_enabled else 0)
    else:
        flags = _options_flags(options)
    if not flags:
        return None
    c = _options_cache.get(flags)
    return (c if c is not None else _cached_options(flags))[1]


class Event(HandleObject):
    """A CUDA event. Create with Device.create_event() or Stream.record(); wrap a foreign CUevent with
    Event.from_handle(). `end - start` is the elapsed time in milliseconds between two timing events."""

    __slots__ = ("_flags", "_spares")
    _flags: Any
    # Where close() gives the event back renewed for Device.create_event (the device's list for its kind),
    # or None: released as any handle.
    _spares: Optional[List[Any]]
    _release = staticmethod(_fast_event_release)
    _handle_fn = staticmethod(_cucore_event_handle)

    def __new__(cls, *args, **kwargs):
        raise TypeError("Event cannot be instantiated directly: use Device.create_event(), Stream.record() "
                        "or Event.from_handle()")

    @classmethod
    def _wrap(cls, h, flags=None):
        """A new wrapper owning the +1 reference in `h` (a c_void_p out-parameter)."""
        obj = object.__new__(cls)
        obj._h = _handle_arg(h.value)
        obj._raw = None
        obj._flags = flags
        obj._spares = None
        return obj

    @classmethod
    def _create_in_context(cls, context, options=None):
        h = _c_void_p()
        st = _fast_event_create_in_context(context._h, None if options is None else _options_ref(options),
                                           _byref(h))
        if st:
            raise_error(st, context)
        return cls._wrap(h)

    @classmethod
    def from_handle(cls, handle: int) -> Event:
        """Wrap a raw CUevent (an int address) without taking ownership, in the calling thread's current
        context. Its flags are unknown (read as no timing, no blocking sync). The handle is trusted: a
        garbage address can crash the driver."""
        if isinstance(handle, bool) or not isinstance(handle, int):
            handle = getattr(handle, "value", handle)
            if not isinstance(handle, int):
                raise TypeError("Event.from_handle() takes a CUevent address as an int")
        h = _c_void_p()
        st = _cucore_event_from_handle(handle, None, None, h)
        if st:
            raise_error(st)
        return cls._wrap(h)

    def close(self) -> None:
        """Release this object's reference (idempotent); later use raises InvalidHandleError. An event of
        Device.create_event that nothing else holds is renewed (cucore_event_reset: never recorded, a driver
        event no one else uses) and kept for the device's next create_event; otherwise the last reference
        destroys it (the library may keep its driver event for reuse)."""
        h = self._h
        if h is None:
            return
        self._h = None
        spares = self._spares
        if spares is not None and len(spares) < _SPARES_PER_KIND and not _fast_event_reset(h):
            spares.append(h)
            return
        st = _fast_event_release(h)
        if st:
            raise_error(st)

    # ---- operations -------------------------------------------------------------------------

    def record(self, stream: Any) -> None:
        """Record the event on `stream` (a Stream, or anything with __cuda_stream__)."""
        if not isinstance(stream, Stream):
            stream = Stream.from_handle(stream)
        st = _fast_event_record(self._h, stream._h)
        if st:
            raise_error(st, self, stream)

    def sync(self) -> None:
        """Wait until the recorded work has completed (an event never recorded is complete)."""
        st = _fast_event_synchronize(self._h)
        if st:
            raise_error(st, self)

    @property
    def is_done(self) -> bool:
        """Whether the recorded work has completed."""
        try:
            out, ref = pair = _int_outs.pop()
        except IndexError:
            out, ref = pair = _new_out(_c_int)
        st = _fast_event_query(self._h, ref)
        value = out.value
        _int_outs.append(pair)
        if st:
            raise_error(st, self)
        return value != 0

    def __sub__(self, other: Event) -> float:
        """`end - start`: milliseconds between two recorded, completed timing events."""
        if not isinstance(other, Event):
            return NotImplemented
        try:
            out, ref = pair = _float_outs.pop()
        except IndexError:
            out, ref = pair = _new_out(_c_float)
        st = _fast_event_elapsed_time(other._h, self._h, ref)
        value = out.value
        _float_outs.append(pair)
        if st:
            raise_error(st, other, self)
        return value

    def elapsed_time(self, end: Event) -> float:
        """Milliseconds from this event to `end` (the same as `end - self`)."""
        return end - self

    # ---- properties -------------------------------------------------------------------------

    def _get_flags(self):
        f = self._flags
        if f is None:
            out = ctypes.c_uint32()
            st = _cucore_event_flags(self._h, out)
            if st:
                raise_error(st, self)
            f = self._flags = out.value
        return f

    @property
    def is_timing_enabled(self) -> bool:
        """Whether the event records timestamps (EventOptions(timing_enabled=True)): `end - start` works."""
        return bool(self._get_flags() & EVENT_TIMING)

    @property
    def is_blocking_sync(self) -> bool:
        """Whether sync() blocks the thread instead of spinning (EventOptions(blocking_sync=True))."""
        return bool(self._get_flags() & EVENT_BLOCKING_SYNC)

    # ---- IPC (the work is in ipc.py) --------------------------------------------------------------

    @property
    def is_ipc_enabled(self) -> bool:
        """Whether other processes can open the event (EventOptions(ipc_enabled=True))."""
        return bool(self._get_flags() & EVENT_INTERPROCESS)

    @property
    def ipc_descriptor(self) -> Any:
        """The event's IPCEventDescriptor, for Event.from_ipc_descriptor in another process (picklable;
        `bytes(d)` is its 72-byte payload)."""
        return ipc.export_event(self)

    @classmethod
    def from_ipc_descriptor(cls, ipc_descriptor: Any, device: Union[Device, int, None] = None) -> Event:
        """The event another process exported (an IPCEventDescriptor: opened on the exporting event's device
        ordinal; or its bytes: on `device`, by default the current one), for record, wait and sync (no timing)."""
        return ipc.import_event(device, ipc_descriptor)

    def __reduce__(self):
        return ipc.reduce_event(self)  # interprocess events only

    @property
    def device(self) -> Device:
        """The Device of the event's context."""
        out = _c_void_p()
        st = _cucore_event_device(self._h, out)
        if st:
            raise_error(st, self)
        return _device_from_owned_handle(out)

    @property
    def context(self) -> Context:
        """The Context the event was created in."""
        out = _c_void_p()
        st = _cucore_event_context(self._h, out)
        if st:
            raise_error(st, self)
        return Context._wrap(out)

    def __repr__(self):
        if self._h is None:
            return "<Event (closed)>"
        try:
            return f"<Event 0x{self.handle:x}{' timing' if self.is_timing_enabled else ''}>"
        except Exception:
            return "<Event>"


# Device.create_event and Context.create_event make Events; device.py and context.py are below this module.
_lib.hand_down(("device", "context"), Event=Event)
_lib.hand_down("device", _event_flags_ref=_flags_ref, _event_options_flags=_options_flags)
