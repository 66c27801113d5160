"""Garbage, released and wrong-type handles through the raw ctypes functions: INVALID_HANDLE, never a crash.

Garbage handles need no GPU; released and wrong-type handles need real objects (gpu)."""
import ctypes

import pytest

import cucore
from cucore import Status, _abi, _abi_types
from cucore.common import error_from_status

GARBAGE = [0x1, 0x2, 0x10, 0x1000, 0xDEADBEEF, 0xDEADBEEF0, 2**63, 2**64 - 1, 2**64 - 16]

# One call per function taking a handle first: the handle, then harmless out-arguments.
HANDLE_FUNCTIONS = sorted(name for name, (_, args) in _abi.ABI.items()
                          if args and args[0].rstrip("*") in _abi_types.HANDLE_TYPES and args[0].count("*") == 1)


_kept = []  # out buffers stay alive for the session (a few KiB)


def _out_args(name):
    """Valid out-arguments for every parameter after the first."""
    from cucore import _lib
    out = []
    for spelling in _abi.ABI[name][1][1:]:
        t = _lib.ctype(spelling)
        if spelling.rstrip("*") in _abi_types.HANDLE_TYPES and spelling.count("*") == 1:
            out.append(None)  # a second handle argument: NULL
        elif spelling.endswith("*") and spelling not in ("void*",):
            # Room for the largest out the library writes: some are arrays (IPC
            # descriptors), which a one-element out would overflow.
            if hasattr(t, "_type_"):
                room = ctypes.create_string_buffer(256)
                _kept.append(room)
                out.append(ctypes.cast(room, t))
            else:
                out.append(None)
        elif spelling in _abi_types.CALLBACKS:
            out.append(None)
        elif spelling == "void*":
            out.append(None)
        elif spelling in _abi_types.STRUCTS:
            out.append(t())  # a struct passed by value (cucore_location_t): zeroed
        else:
            out.append(1)
    return out


def _call(name, handle, unchecked=False):
    from cucore import _lib
    fn = _lib.unchecked_function(name) if unchecked else _lib.function(name)
    return fn(handle, *_out_args(name))


@pytest.mark.parametrize("unchecked", [False, True], ids=["typed", "unchecked"])
@pytest.mark.parametrize("name", HANDLE_FUNCTIONS)
def test_garbage_handles_are_rejected(lib, name, unchecked):
    fn = lib.unchecked_function(name) if unchecked else lib.function(name)
    if name.endswith("_release"):
        # NULL is a no-op for release; garbage is INVALID_HANDLE.
        assert fn(None) == 0
    for value in GARBAGE:
        # both forms the binding passes handles in: a c_void_p and a c_void_p.from_param() argument
        for handle in (ctypes.c_void_p(value), ctypes.c_void_p.from_param(value)):
            st = _call(name, handle, unchecked)
            assert st == Status.ERROR_INVALID_HANDLE, (name, hex(value), st, cucore.last_error_message())
            assert isinstance(error_from_status(st), cucore.InvalidHandleError)
            assert name in cucore.last_error_message()


def test_pointer_to_python_memory_is_rejected(lib):
    buf = ctypes.create_string_buffer(256)
    st = lib.function("cucore_stream_synchronize")(ctypes.addressof(buf))
    assert st == Status.ERROR_INVALID_HANDLE


def test_null_handles_are_invalid_handle(lib):
    assert lib.function("cucore_stream_synchronize")(None) == Status.ERROR_INVALID_HANDLE
    assert lib.function("cucore_event_synchronize")(None) == Status.ERROR_INVALID_HANDLE


@pytest.mark.gpu
def test_released_and_wrong_type_handles(gpu, lib):
    s = gpu.create_stream()
    e = s.record()  # released by close() (create_event's events are kept renewed for the device: test_event_reuse)
    ctx = gpu.context
    sh, eh, ch = s._h, e._h, ctx._h  # the handles as the wrappers pass them
    f = lib.function
    # wrong type: each handle passed where another type is expected
    assert f("cucore_event_synchronize")(sh) == Status.ERROR_INVALID_HANDLE
    assert f("cucore_stream_synchronize")(eh) == Status.ERROR_INVALID_HANDLE
    assert f("cucore_stream_synchronize")(ch) == Status.ERROR_INVALID_HANDLE
    assert f("cucore_context_synchronize")(sh) == Status.ERROR_INVALID_HANDLE
    assert f("cucore_event_record")(sh, eh) == Status.ERROR_INVALID_HANDLE
    assert f("cucore_device_synchronize")(sh) == Status.ERROR_INVALID_HANDLE
    u = lib.unchecked_function
    assert u("cucore_event_synchronize")(sh) == Status.ERROR_INVALID_HANDLE
    assert u("cucore_stream_synchronize")(eh) == Status.ERROR_INVALID_HANDLE
    assert u("cucore_event_record")(sh, eh) == Status.ERROR_INVALID_HANDLE
    # the objects are still fine
    s.sync()
    e.sync()
    # released
    s.close()
    e.close()
    ctx.close()
    assert f("cucore_stream_synchronize")(sh) == Status.ERROR_INVALID_HANDLE
    assert f("cucore_event_synchronize")(eh) == Status.ERROR_INVALID_HANDLE
    assert f("cucore_stream_release")(sh) == Status.ERROR_INVALID_HANDLE
    assert f("cucore_event_release")(eh) == Status.ERROR_INVALID_HANDLE
    assert u("cucore_stream_synchronize")(sh) == Status.ERROR_INVALID_HANDLE
    assert u("cucore_event_release")(eh) == Status.ERROR_INVALID_HANDLE
    # ... and through the Python API after close()
    with pytest.raises(cucore.InvalidHandleError, match="Stream is closed"):
        s.sync()
    with pytest.raises(cucore.InvalidHandleError, match="Event is closed"):
        e.sync()
    with pytest.raises(cucore.InvalidHandleError, match="closed"):
        s.handle
    with pytest.raises(cucore.InvalidHandleError, match="closed"):
        s.launch_host_func(print)
    with pytest.raises(cucore.InvalidHandleError, match="Context is closed"):
        ctx.sync()
    s.close()  # idempotent
    e.close()
    ctx.close()
