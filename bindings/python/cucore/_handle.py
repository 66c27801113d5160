"""The one lifetime mechanism of the binding's handle objects, and of the Python objects libcucore keeps alive.

HandleObject is the base of every class that wraps a libcucore handle (Context, Stream, Event, Buffer,
MemoryResource, Program, ObjectCode, Linker, ProgramCache, Kernel, GraphicsResource, OpaqueArray, MipmappedArray,
TextureObject, SurfaceObject). Each object
owns one reference to its libcucore handle in `_h` (None once closed); `close()` and the finalizer drop it
through the subclass's unchecked release function, exactly once. Equality is identity of the wrapped driver
object.

wrap_foreign() is the one way a `cucore_<noun>_from_handle` call keeps a Python owner of foreign memory or a
foreign driver object alive: as long as libcucore holds the wrapper (its views and every object that retained
it included), through the C release callback, not as long as the Python wrapper.
"""
from __future__ import annotations

import ctypes
import itertools
import sys
from typing import Any, Callable, Dict, Optional, TypeVar

from . import _lib
from .common import closed_error, raise_error

_c_void_p = ctypes.c_void_p

# ---- owners of wrapped foreign objects: kept alive until libcucore releases the wrapper --------------------

_owners: Dict[int, Any] = {}  # user_data key -> the owner
_next_key = itertools.count(1).__next__


def _release_owner(key):
    owner = _owners.pop(key, None)
    # An owner that frees what it owns when the library lets go (Buffer.from_handle with a memory resource).
    release = getattr(owner, "_cucore_release", None)
    if release is not None:
        release()


_RELEASE_CB = _lib.ReleaseFn(_release_owner)


def wrap_foreign(from_handle, owner, *args):
    """Call `from_handle(*args, on_release, user_data, out)` (a C `cucore_<noun>_from_handle`) and return
    (status, the new handle as an int or None). With an `owner` (not None), libcucore's release callback keeps
    it alive until the library lets go of the wrapper; a failed call never calls it, and drops it here."""
    out = _c_void_p()
    if owner is None:
        st = from_handle(*args, None, None, out)
    else:
        key = _next_key()
        _owners[key] = owner
        st = from_handle(*args, _RELEASE_CB, key, out)
        if st:
            _owners.pop(key, None)
    return st, out.value


_Self = TypeVar("_Self", bound="HandleObject")


class HandleObject:
    """The base of the wrappers of libcucore handles: one reference in `_h`, given back by close(), `with` or
    the finalizer; `handle`, the driver object's raw handle; equality by that driver object (by identity for
    the kinds without one: Program, Linker, ProgramCache)."""

    __slots__ = ("_h", "_raw", "__weakref__")
    _h: Any     # the handle argument (_lib.handle_arg), None once closed
    _raw: Optional[int]  # the raw driver handle, once asked for
    _release: Any = None  # each kind: staticmethod(the unchecked cucore_<noun>_release)
    _kind: Optional[type] = None  # the kind: the direct subclass of HandleObject (a user's subclass of Stream is a Stream)
    _handle_fn: Any = None  # each kind: staticmethod(the checked cucore_<noun>_handle); None: no raw handle

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if HandleObject in cls.__bases__:
            cls._kind = cls

    @property
    def handle(self) -> int:
        """The raw driver handle (CUcontext, CUstream, CUevent, CUkernel, ...) as an int address; for the legacy
        and per-thread default streams, 1 and 2. AttributeError for the kinds that keep theirs private
        (Program, Linker, ProgramCache)."""
        raw = self._raw
        if raw is None or self._h is None:
            if self._handle_fn is None:
                raise AttributeError(f"{type(self).__name__} has no raw handle in cucore")
            if self._h is None:
                raise closed_error(self)
            out = ctypes.c_void_p()
            st = self._handle_fn(self._h, out)
            if st:
                raise_error(st, self)
            raw = self._raw = out.value or 0
        return raw

    def close(self) -> None:
        """Release this object's reference (idempotent); later use raises InvalidHandleError. For a stream
        or event the library created, the last reference destroys it (a stream after its pending work)."""
        h = self._h
        if h is not None:
            self._h = None
            st = self._release(h)
            if st:
                raise_error(st)

    @property
    def is_closed(self) -> bool:
        """True once close() (or `with`) has given this object's reference back."""
        return self._h is None

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self, _finalizing=sys.is_finalizing):
        try:
            h = self._h
            if h is None or _finalizing():
                return
            self._h = None
            self._release(h)
        except BaseException:
            pass

    def __eq__(self, other: Any) -> bool:
        # Equal when they wrap the same driver object; a closed object, or one of a kind without a raw handle,
        # equals only itself.
        if getattr(other, "_kind", None) is not self._kind:
            return NotImplemented
        if self._h is None or other._h is None or self._handle_fn is None:
            return self is other
        return self.handle == other.handle

    def __hash__(self) -> int:
        if self._handle_fn is None or (self._raw is None and self._h is None):
            return id(self) >> 4
        return hash((self._kind, self.handle if self._h is not None else self._raw))
