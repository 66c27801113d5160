"""Errors, versions and diagnostics (include/cucore/common.h)."""
from __future__ import annotations

import collections
import ctypes
import enum
import operator
import sys
import threading
import traceback
from typing import Any, Callable, Iterable, NamedTuple, NoReturn, Optional, Type, TypeVar, Union

from . import _abi_constants, _lib

(_cucore_version, _cucore_version_string, _cucore_status_string, _cucore_last_error_message,
 _cucore_last_cuda_result, _cucore_last_error_status, _cucore_clear_last_error, _cucore_object_type_name,
 _cucore_live_object_count, _cucore_release_error_count, _cucore_set_release_error_handler) = _lib.bind(
    globals(), "cucore_version", "cucore_version_string", "cucore_status_string",
    "cucore_last_error_message", "cucore_last_cuda_result", "cucore_last_error_status",
    "cucore_clear_last_error", "cucore_object_type_name", "cucore_live_object_count",
    "cucore_release_error_count", "cucore_set_release_error_handler")


def _c_enum(name, c_enum, prefix, doc, skip=(), module=__name__):
    """An IntEnum with the members of the C enum `c_enum` (from the generated _abi_constants.py), named without
    `prefix`; FORCE_INT32 and the names in `skip` are left out. Built from the header, so it cannot drift.
    `module` is the module that defines it (for pickling and repr)."""
    members = [(member[len(prefix):], value) for member, value in _abi_constants.ENUMS[c_enum]
               if not member.endswith("FORCE_INT32") and member not in skip]
    cls = enum.IntEnum(name, members, module=module)
    cls.__doc__ = doc
    return cls


Status = _c_enum("Status", "cucore_status_t", "CUCORE_", "cucore_status_t: SUCCESS, ERROR_INVALID_ARGUMENT, ...")
ObjectType = _c_enum("ObjectType", "cucore_object_type_t", "CUCORE_OBJECT_",
                     "cucore_object_type_t (for live_object_count): ANY, DEVICE, CONTEXT, STREAM, ...",
                     skip=("CUCORE_OBJECT_TYPE_COUNT",))


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------

class CUDAError(Exception):
    """A failed libcucore call.

    Attributes: `status` (Status, or None for errors raised before any C call), `cuda_result` (the
    driver's CUresult when the driver caused it, else 0) and `message` (libcucore's detail: the function,
    the offending argument or object, and the driver's error name).
    """

    status: Optional[int]
    message: str
    cuda_result: int

    def __init__(self, status: Optional[int], message: str = "", cuda_result: int = 0) -> None:
        if status is not None:
            try:
                status = Status(status)
            except ValueError:
                pass
        self.status = status
        self.message = message
        self.cuda_result = cuda_result
        super().__init__(message)

    def __str__(self):
        name = self.status.name if isinstance(self.status, Status) else self.status
        text = self.message or "(no message)"
        if name is None:
            return text
        extra = f", CUresult {self.cuda_result}" if self.cuda_result else ""
        return f"[{name}{extra}] {text}"

    def __reduce__(self):
        return (type(self), (self.status, self.message, self.cuda_result))


class InvalidArgumentError(CUDAError, ValueError):
    """CUCORE_ERROR_INVALID_ARGUMENT: an argument is out of range, NULL or inconsistent."""


class InvalidHandleError(CUDAError, ValueError):
    """CUCORE_ERROR_INVALID_HANDLE: the object was closed/released, is of another type, or is garbage."""


class InvalidStateError(CUDAError, RuntimeError):
    """CUCORE_ERROR_INVALID_STATE: the object's state does not allow the call."""


class NoDriverError(CUDAError, RuntimeError):
    """CUCORE_ERROR_NO_DRIVER: libcuda.so.1 could not be loaded or initialised."""


class NoDeviceError(CUDAError, RuntimeError):
    """CUCORE_ERROR_NO_DEVICE: no CUDA device, or the ordinal names none."""


class NotSupportedError(CUDAError, NotImplementedError):
    """CUCORE_ERROR_NOT_SUPPORTED: the driver (or the library) lacks the entry point or feature."""


class OutOfMemoryError(CUDAError, MemoryError):
    """CUCORE_ERROR_OUT_OF_MEMORY: host or device memory ran out."""


class DriverError(CUDAError, RuntimeError):
    """CUCORE_ERROR_CUDA: any other driver failure; `cuda_result` holds the CUresult."""


class NotReadyError(CUDAError, RuntimeError):
    """CUCORE_ERROR_NOT_READY: the work asked about has not completed yet."""


class InternalError(CUDAError, RuntimeError):
    """CUCORE_ERROR_INTERNAL: a bug inside libcucore (please report it)."""


class CompilationError(CUDAError, RuntimeError):
    """CUCORE_ERROR_COMPILATION: NVRTC, libNVVM or the linker rejected the input. The message carries the
    first lines of the log; `log` holds the whole log (the program's or the linker's) when the binding
    could read it, else ""."""

    log = ""


class NVRTCError(CompilationError):
    """A CompilationError of NVRTC (a C++ Program), under cuda.core's name for it; `log` has the whole log."""


class LibraryNotFoundError(CUDAError, OSError):
    """libcucore itself could not be loaded; `searched` lists every place tried and why it failed."""

    def __init__(self, message: str, searched: Iterable[str] = ()) -> None:
        super().__init__(None, message, 0)
        self.searched = tuple(searched)

    def __reduce__(self):
        return (type(self), (self.message, self.searched))


ERROR_CLASSES = {
    Status.ERROR_INVALID_ARGUMENT: InvalidArgumentError,
    Status.ERROR_INVALID_HANDLE: InvalidHandleError,
    Status.ERROR_INVALID_STATE: InvalidStateError,
    Status.ERROR_NO_DRIVER: NoDriverError,
    Status.ERROR_NO_DEVICE: NoDeviceError,
    Status.ERROR_NOT_SUPPORTED: NotSupportedError,
    Status.ERROR_OUT_OF_MEMORY: OutOfMemoryError,
    Status.ERROR_CUDA: DriverError,
    Status.ERROR_NOT_READY: NotReadyError,
    Status.ERROR_INTERNAL: InternalError,
    Status.ERROR_COMPILATION: CompilationError,
}


def error_from_status(status: int, message: Optional[str] = None, cuda_result: Optional[int] = None) -> CUDAError:
    """The exception for `status`, with the calling thread's last error detail unless given."""
    if message is None:
        message = _cucore_last_error_message().decode("utf-8", "replace")
    if cuda_result is None:
        cuda_result = _cucore_last_cuda_result()
    return ERROR_CLASSES.get(status, CUDAError)(status, message, cuda_result)


def raise_error(status: int, *objects: object) -> NoReturn:
    """Raise the error for a failed call. `objects` are the wrappers the call used: when the status is
    INVALID_HANDLE and one of them was closed, the message says so first."""
    message = _cucore_last_error_message().decode("utf-8", "replace")
    if status == Status.ERROR_INVALID_HANDLE:
        for obj in objects:
            if getattr(obj, "_h", 0) is None:
                message = f"{type(obj).__name__} is closed ({message})" if message else \
                    f"{type(obj).__name__} is closed"
                break
    raise error_from_status(status, message, _cucore_last_cuda_result())


def closed_error(obj: object) -> InvalidHandleError:
    """The InvalidHandleError for a use of `obj` after close() (raised before any C call)."""
    return InvalidHandleError(Status.ERROR_INVALID_HANDLE, f"{type(obj).__name__} is closed", 0)


# ---------------------------------------------------------------------------------------------
# Arguments and options: the checks every module shares (cold paths; hot paths inline the common case)
# ---------------------------------------------------------------------------------------------

_U64_MAX = (1 << 64) - 1


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


def check_options(options, sizes=(), flags=()):
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


def options_state(options):
    """`__getstate__` of the options dataclasses that cache their C struct in `_c` (ProgramOptions,
    LinkerOptions): their fields without the cache, which holds ctypes pointers that cannot be copied or
    pickled and is rebuilt on use, so copy.copy, copy.deepcopy and pickle give an equal, independent object."""
    state = dict(options.__dict__)
    state["_c"] = None
    return state


_T = TypeVar("_T")


def options_of(options: Any, cls: Type[_T]) -> _T:
    """`options` (an instance of the options dataclass `cls`, or a dict of its fields) as a `cls`; TypeError
    for anything else. Every `options=` argument of the package goes through it (None is the caller's)."""
    if isinstance(options, dict):
        return cls(**options)
    if not isinstance(options, cls):
        raise TypeError(f"options must be {cls.__name__}, a dict or None, not {type(options).__name__}")
    return options


# ---------------------------------------------------------------------------------------------
# Versions and the last error
# ---------------------------------------------------------------------------------------------

class CachedStruct:
    """Options whose C struct is made from their fields once and kept until one of those fields changes, so a
    call that takes the same options again passes the same struct (the arrays' and textures' options).
    `_make_struct()` builds (and checks) the struct; `_struct()` gives it and `_struct_ref()` it with a byref;
    `_cached_fields` names the fields it is made from (None: every public attribute). Copies and pickles
    carry the fields only."""

    _cached_fields: Optional[Iterable[str]] = None

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        fields = self._cached_fields
        if (name in fields) if fields is not None else not name.startswith("_"):
            object.__setattr__(self, "_c", None)  # made again from the changed fields

    def __getstate__(self) -> Any:
        state = dict(self.__dict__)
        state.pop("_c", None)
        return state

    def __setstate__(self, state: Any) -> None:
        self.__dict__.update(state)
        object.__setattr__(self, "_c", None)

    def _make_struct(self) -> Any:
        raise NotImplementedError

    def _struct(self) -> Any:
        return self._struct_ref()[0]

    def _struct_ref(self) -> Any:
        pair = self.__dict__.get("_c")
        if pair is None:
            c = self._make_struct()
            pair = (c, ctypes.byref(c))
            object.__setattr__(self, "_c", pair)
        return pair


class LibraryVersion(NamedTuple):
    """A libcucore version: (major, minor, patch)."""
    major: int
    minor: int
    patch: int


def version() -> LibraryVersion:
    """The loaded libcucore's version as (major, minor, patch)."""
    v = _cucore_version()
    return LibraryVersion(v // 10000, v // 100 % 100, v % 100)


def version_string() -> str:
    """The loaded libcucore's version, "MAJOR.MINOR.PATCH"."""
    return _cucore_version_string().decode()


def library_path() -> str:
    """Where libcucore was loaded from (loads it if needed)."""
    return _lib.load()


def status_string(status: int) -> str:
    """The C name of a status, e.g. "CUCORE_ERROR_INVALID_HANDLE"."""
    return _cucore_status_string(int(status)).decode()


def last_error_message() -> str:
    """libcucore's message for the last failed call on this thread ("" if none)."""
    return _cucore_last_error_message().decode("utf-8", "replace")


def last_cuda_result() -> int:
    """The CUresult of the last failed call on this thread, if the driver caused it, else 0."""
    return _cucore_last_cuda_result()


def last_error_status() -> int:
    """The status of the last failed call on this thread (Status.SUCCESS if none)."""
    return Status(_cucore_last_error_status())


def clear_last_error() -> None:
    """Forget the last error of this thread."""
    _cucore_clear_last_error()


# ---------------------------------------------------------------------------------------------
# Diagnostics
# ---------------------------------------------------------------------------------------------

def _object_type(type):
    if type is None:
        return ObjectType.ANY
    if isinstance(type, str):
        try:
            return ObjectType[type.upper()]
        except KeyError:
            raise ValueError(f"unknown object type {type!r}; one of {[t.name.lower() for t in ObjectType]}") \
                from None
    if isinstance(type, bool):
        raise TypeError("object type must be an ObjectType, its name or None")
    return int(type)


def object_type_name(type: Union[int, str, None]) -> str:
    """libcucore's name of an object type, e.g. "stream"."""
    return _cucore_object_type_name(_object_type(type)).decode()


def live_object_count(type: Union[int, str, None] = None) -> int:
    """The number of live libcucore objects of `type` (an ObjectType, its name, or None for all) in
    the process, for leak tests. Devices live until the process ends."""
    out = ctypes.c_size_t()
    st = _cucore_live_object_count(_object_type(type), out)
    if st:
        raise_error(st)
    return out.value


def release_error_count() -> int:
    """How many failures happened inside release paths since the process started."""
    out = ctypes.c_uint64()
    st = _cucore_release_error_count(out)
    if st:
        raise_error(st)
    return out.value


# set_release_error_handler's callable: fn(status, cuda_result, message).
ReleaseErrorHandler = Callable[[int, int, str], Any]

_handler_lock = threading.Lock()
_handler_cb: Any = None  # the ctypes callback installed in the library: kept alive here
_handler_fn: Optional[ReleaseErrorHandler] = None


def _release_error_trampoline(status, cuda_result, message, user_data):
    fn = _handler_fn
    if fn is None:
        return
    try:
        try:
            status = Status(status)
        except ValueError:
            pass
        fn(status, cuda_result, (message or b"").decode("utf-8", "replace"))
    except BaseException as e:  # never let an exception cross the C boundary
        report_unraisable(e, "Exception ignored in the cucore release error handler", fn)


def set_release_error_handler(fn: Optional[ReleaseErrorHandler]) -> Optional[ReleaseErrorHandler]:
    """Call `fn(status, cuda_result, message)` for each failure inside a release path (which cannot
    raise). Process-wide; replaces the previous handler; None removes it. Returns the previous handler.
    `fn` runs on the releasing thread; exceptions it raises go to sys.unraisablehook."""
    global _handler_cb, _handler_fn
    if fn is not None and not callable(fn):
        raise TypeError("the release error handler must be callable or None")
    with _handler_lock:
        previous = _handler_fn
        if fn is None:
            _cucore_set_release_error_handler(None, None)
            _handler_fn = None
            _handler_cb = None
        else:
            cb = _handler_cb or _lib.ReleaseErrorFn(_release_error_trampoline)
            _handler_fn = fn
            _cucore_set_release_error_handler(cb, None)
            _handler_cb = cb
        return previous


# ---------------------------------------------------------------------------------------------
# Reporting exceptions that cannot be raised (callbacks from C, __del__)
# ---------------------------------------------------------------------------------------------

class _UnraisableArgs:
    __slots__ = ("exc_type", "exc_value", "exc_traceback", "err_msg", "object")

    def __init__(self, exc, err_msg, obj):
        self.exc_type = type(exc)
        self.exc_value = exc
        self.exc_traceback = exc.__traceback__
        self.err_msg = err_msg
        self.object = obj


def report_unraisable(exc, err_msg, obj):
    """Hand an exception that cannot propagate to sys.unraisablehook (as Python does for exceptions in
    __del__); the default hook's output is reproduced when no custom hook is installed."""
    try:
        hook = getattr(sys, "unraisablehook", None)
        if hook is not None and hook is not getattr(sys, "__unraisablehook__", None):
            hook(_UnraisableArgs(exc, err_msg, obj))
            return
        stream = sys.stderr
        if stream is None:
            return
        stream.write(f"{err_msg}: {obj!r}\n")
        stream.write("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
        stream.flush()
    except BaseException:
        pass


# _lib.py, below this module, raises these when the library cannot be loaded or lacks a function.
_lib.hand_down("_lib", LibraryNotFoundError=LibraryNotFoundError, NotSupportedError=NotSupportedError, Status=Status)
