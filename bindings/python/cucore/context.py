"""CUDA contexts (include/cucore/context.h)."""
from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any, Dict, Union

from . import _lib
from ._handle import HandleObject
from .common import raise_error
from .device import _device_from_owned_handle

(_cucore_context_get_primary, _cucore_context_from_handle, _cucore_context_retain, _cucore_context_release,
 _cucore_context_handle, _cucore_context_device, _cucore_context_is_primary, _cucore_context_set_current,
 _cucore_context_synchronize, _cucore_context_is_green, _cucore_context_green_handle,
 _cucore_context_get_current) = _lib.bind(
    globals(), "cucore_context_get_primary", "cucore_context_from_handle", "cucore_context_retain",
    "cucore_context_release", "cucore_context_handle", "cucore_context_device", "cucore_context_is_primary",
    "cucore_context_set_current", "cucore_context_synchronize", "cucore_context_is_green",
    "cucore_context_green_handle", "cucore_context_get_current")
(_fast_context_release, _fast_context_set_current, _fast_context_synchronize) = _lib.bind_unchecked(
    globals(), "cucore_context_release", "cucore_context_set_current", "cucore_context_synchronize")

_c_void_p = ctypes.c_void_p
_handle_arg = _lib.handle_arg

# Handed down by the modules above when they are imported (_lib.hand_down): what Context's methods make.
if TYPE_CHECKING:  # for type checkers only: at run time the modules above hand these down (else:)
    from .device import Device
    from .event import Event, EventOptions
    from .stream import Stream, StreamOptions
    from .device_resources import DeviceResources
else:
    Event = None   # event.py: Context.create_event
    Stream = None  # stream.py: Context.create_stream
    DeviceResources = None  # device_resources.py: Context.resources


class Context(HandleObject):
    """A CUDA context: a device's primary context (Device.context), a green context made of device resources
    (Device.create_context) or a foreign CUcontext wrapped without ownership (Context.from_handle). Holding a
    Context keeps the context retained; close() (or garbage collection) drops that reference (a green context
    is destroyed when it and every stream, event and buffer made on it are gone)."""

    __slots__ = ()
    _release = staticmethod(_fast_context_release)
    _handle_fn = staticmethod(_cucore_context_handle)

    def __new__(cls, *args, **kwargs):
        raise TypeError("Context cannot be instantiated directly: use Device.context or Context.from_handle()")

    @classmethod
    def _wrap(cls, h):
        """A new wrapper owning the +1 reference in `h` (a c_void_p out-parameter)."""
        obj = object.__new__(cls)
        obj._h = _handle_arg(h.value)
        obj._raw = None
        return obj

    @classmethod
    def _primary(cls, device):
        h = _c_void_p()
        st = _cucore_context_get_primary(device._h, h)
        if st:
            raise_error(st, device)
        return cls._wrap(h)

    @classmethod
    def _current(cls):
        """The context current on this thread, or None."""
        h = _c_void_p()
        st = _cucore_context_get_current(h)
        if st:
            raise_error(st)
        return cls._wrap(h) if h.value else None

    @classmethod
    def from_handle(cls, handle: int) -> Context:
        """Wrap a raw CUcontext (an int address) without taking ownership. The handle is trusted: a
        garbage address can crash the driver."""
        if isinstance(handle, bool) or not isinstance(handle, int):
            handle = getattr(handle, "value", handle)  # a ctypes c_void_p
            if not isinstance(handle, int):
                raise TypeError("Context.from_handle() takes a CUcontext address as an int")
        h = _c_void_p()
        st = _cucore_context_from_handle(handle, None, None, h)
        if st:
            raise_error(st)
        return cls._wrap(h)

    @property
    def device(self) -> Device:
        """The context's Device."""
        out = _c_void_p()
        st = _cucore_context_device(self._h, out)
        if st:
            raise_error(st, self)
        return _device_from_owned_handle(out)

    @property
    def is_primary(self) -> bool:
        """Whether this is its device's primary context."""
        out = ctypes.c_int()
        st = _cucore_context_is_primary(self._h, out)
        if st:
            raise_error(st, self)
        return bool(out.value)

    @property
    def is_green(self) -> bool:
        """Whether this is a green context (made by Device.create_context)."""
        out = ctypes.c_int()
        st = _cucore_context_is_green(self._h, out)
        if st:
            raise_error(st, self)
        return bool(out.value)

    @property
    def green_handle(self) -> int:
        """The raw CUgreenCtx of a green context as an int address (0 for other contexts)."""
        out = _c_void_p()
        st = _cucore_context_green_handle(self._h, out)
        if st:
            raise_error(st, self)
        return out.value or 0

    @property
    def resources(self) -> DeviceResources:
        """The context's SM and workqueue resources (a green context's own)."""
        return DeviceResources(self)

    def set_current(self) -> None:
        """Make the context current on the calling thread (cuCtxSetCurrent)."""
        st = _fast_context_set_current(self._h)
        if st:
            raise_error(st, self)

    def sync(self) -> None:
        """Wait for all work in the context."""
        st = _fast_context_synchronize(self._h)
        if st:
            raise_error(st, self)

    def create_stream(self, options: Union[StreamOptions, Dict[str, Any], None] = None) -> Stream:
        """A new Stream in this context (StreamOptions or None for the defaults)."""
        return Stream._create_in_context(self, options)

    def create_event(self, options: Union[EventOptions, Dict[str, Any], None] = None) -> Event:
        """A new Event in this context (EventOptions or None for the defaults)."""
        return Event._create_in_context(self, options)

    def __repr__(self):
        if self._h is None:
            return "<Context (closed)>"
        try:
            kind = " (primary)" if self.is_primary else " (green)" if self.is_green else ""
            return f"<Context 0x{self.handle:x} of device {self.device.device_id}{kind}>"
        except Exception:
            return "<Context>"


# Device.context makes Contexts; device.py is below this module.
_lib.hand_down("device", Context=Context)
