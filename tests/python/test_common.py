"""Errors, versions, status strings and diagnostics: no GPU needed."""
import pickle

import pytest

import cucore
from cucore import Status
from cucore.common import ERROR_CLASSES, error_from_status

EXPECTED = {
    Status.ERROR_INVALID_ARGUMENT: (cucore.InvalidArgumentError, ValueError),
    Status.ERROR_INVALID_HANDLE: (cucore.InvalidHandleError, ValueError),
    Status.ERROR_INVALID_STATE: (cucore.InvalidStateError, RuntimeError),
    Status.ERROR_NO_DRIVER: (cucore.NoDriverError, RuntimeError),
    Status.ERROR_NO_DEVICE: (cucore.NoDeviceError, RuntimeError),
    Status.ERROR_NOT_SUPPORTED: (cucore.NotSupportedError, NotImplementedError),
    Status.ERROR_OUT_OF_MEMORY: (cucore.OutOfMemoryError, MemoryError),
    Status.ERROR_CUDA: (cucore.DriverError, RuntimeError),
    Status.ERROR_NOT_READY: (cucore.NotReadyError, RuntimeError),
    Status.ERROR_INTERNAL: (cucore.InternalError, RuntimeError),
}


def test_package_version():
    assert cucore.__version__ == "0.1.0"


def test_version(lib):
    v = cucore.version()
    assert (v.major, v.minor) == (0, 1)
    assert cucore.version_string() == f"{v.major}.{v.minor}.{v.patch}"
    assert cucore.library_path()


@pytest.mark.parametrize("status", list(Status))
def test_status_strings(lib, status):
    name = "CUCORE_SUCCESS" if status == Status.SUCCESS else "CUCORE_" + status.name
    assert cucore.status_string(status) == name


def test_unknown_status_string(lib):
    assert cucore.status_string(12345) == "CUCORE_STATUS_UNKNOWN"


def test_every_status_has_an_error_class():
    assert set(ERROR_CLASSES) == set(Status) - {Status.SUCCESS}
    for status, (cls, builtin) in EXPECTED.items():
        assert ERROR_CLASSES[status] is cls


@pytest.mark.parametrize("status", sorted(EXPECTED))
def test_error_mapping(status):
    cls, builtin = EXPECTED[status]
    e = error_from_status(status, "what went wrong", 700)
    assert type(e) is cls
    assert isinstance(e, cucore.CUDAError) and isinstance(e, builtin)
    assert e.status == status and isinstance(e.status, Status)
    assert e.message == "what went wrong" and e.cuda_result == 700
    assert "what went wrong" in str(e) and status.name in str(e) and "700" in str(e)
    e2 = pickle.loads(pickle.dumps(e))
    assert type(e2) is cls and (e2.status, e2.message, e2.cuda_result) == (status, "what went wrong", 700)


def test_unknown_status_maps_to_the_base_class():
    e = error_from_status(99, "odd", 0)
    assert type(e) is cucore.CUDAError and e.status == 99


def test_library_not_found_error_is_an_oserror():
    e = cucore.LibraryNotFoundError("nope", searched=("a", "b"))
    assert isinstance(e, OSError) and isinstance(e, cucore.CUDAError)
    assert e.status is None and e.searched == ("a", "b") and str(e) == "nope"
    assert pickle.loads(pickle.dumps(e)).searched == ("a", "b")


def test_real_failure_carries_the_library_message(lib):
    with pytest.raises(cucore.InvalidArgumentError) as info:
        cucore.live_object_count(77)
    assert info.value.status == Status.ERROR_INVALID_ARGUMENT
    assert "cucore_live_object_count" in info.value.message
    assert cucore.last_error_status() == Status.ERROR_INVALID_ARGUMENT
    assert "cucore_live_object_count" in cucore.last_error_message()
    assert cucore.last_cuda_result() == 0
    cucore.clear_last_error()
    assert cucore.last_error_message() == "" and cucore.last_error_status() == Status.SUCCESS


def test_live_object_count(lib):
    total = cucore.live_object_count()
    assert total >= 0
    for t in cucore.ObjectType:
        assert cucore.live_object_count(t) >= 0
        assert cucore.live_object_count(t.name.lower()) == cucore.live_object_count(t)
    assert cucore.live_object_count(None) == total
    with pytest.raises(ValueError):
        cucore.live_object_count("gizmo")
    with pytest.raises(TypeError):
        cucore.live_object_count(True)


def test_object_type_names(lib):
    assert cucore.object_type_name(cucore.ObjectType.STREAM) == "stream"
    assert cucore.object_type_name("event") == "event"
    assert cucore.object_type_name(cucore.ObjectType.DEVICE) == "device"


def test_release_error_count(lib):
    assert cucore.release_error_count() >= 0


def test_release_error_handler_install_and_remove(lib):
    calls = []
    assert cucore.set_release_error_handler(lambda *a: calls.append(a)) is None
    try:
        previous = cucore.set_release_error_handler(lambda *a: None)
        assert previous is not None
    finally:
        cucore.set_release_error_handler(None)
    with pytest.raises(TypeError):
        cucore.set_release_error_handler(42)


def test_release_error_trampoline_reports_handler_exceptions(lib, monkeypatch):
    # Drive the trampoline directly (a real release failure cannot be provoked portably).
    from cucore import common
    seen, reported = [], []
    monkeypatch.setattr("sys.unraisablehook", lambda args: reported.append(args))

    def handler(status, cuda_result, message):
        seen.append((status, cuda_result, message))
        raise KeyError("boom")

    cucore.set_release_error_handler(handler)
    try:
        common._release_error_trampoline(8, 700, b"cuStreamDestroy failed", None)
    finally:
        cucore.set_release_error_handler(None)
    assert seen == [(Status.ERROR_CUDA, 700, "cuStreamDestroy failed")]
    assert len(reported) == 1 and reported[0].exc_type is KeyError and reported[0].object is handler


def test_stubs_are_replaced_by_the_ctypes_functions(lib):
    # The hot paths call module globals directly: after loading they must be the ctypes functions.
    import ctypes
    import importlib
    import pkgutil
    lib.load()
    modules = [importlib.import_module(f"cucore.{m.name}") for m in pkgutil.iter_modules(cucore.__path__)
               if m.name not in ("_abi", "_lib")]  # every module of the package binds what it calls
    bound = 0
    for module in modules:
        for name, value in vars(module).items():
            if name.startswith("_cucore_"):
                assert isinstance(value, ctypes._CFuncPtr), (module.__name__, name, value)
                bound += 1
    assert bound >= 94
    from cucore import _abi
    used = {n[1:] for m in modules for n in vars(m) if n.startswith("_cucore_")}
    used |= lib.LOADER_CALLS  # called by the loader itself, before anything is bound
    assert used == set(_abi.ABI), set(_abi.ABI) ^ used


def _header_enum(prefix, header):
    import re
    from conftest import REPO
    text = (REPO / "include" / "cucore" / header).read_text()
    return {m.group(1): int(m.group(2), 0) for m in re.finditer(rf"\b{prefix}(\w+)\s*=\s*(\w+)", text)
            if not m.group(1).endswith("FORCE_INT32")}


def test_python_enums_match_the_headers():
    from conftest import REPO
    if not (REPO / "include" / "cucore" / "common.h").is_file():
        pytest.skip("not running from a checkout")
    statuses = _header_enum("CUCORE_", "common.h")
    want = {k: v for k, v in statuses.items() if k == "SUCCESS" or k.startswith("ERROR_")}
    assert {s.name: int(s) for s in Status} == want
    objects = _header_enum("CUCORE_OBJECT_", "common.h")
    objects.pop("TYPE_COUNT")
    assert {t.name: int(t) for t in cucore.ObjectType} == objects
    from cucore import event, stream
    assert _header_enum("CUCORE_EVENT_", "event.h") == {"DEFAULT": 0, "TIMING": event.EVENT_TIMING,
                                                        "BLOCKING_SYNC": event.EVENT_BLOCKING_SYNC,
                                                        "INTERPROCESS": event.EVENT_INTERPROCESS}
    assert _header_enum("CUCORE_STREAM_", "stream.h") == {"DEFAULT": 0, "BLOCKING": stream.STREAM_BLOCKING}
    kinds = _header_enum("CUCORE_MEMORY_RESOURCE_", "memory_resource.h")
    assert kinds.pop("UNSET") == 0
    assert {k.name: int(k) for k in cucore.MemoryResourceKind} == kinds
    attributes = _header_enum("CUCORE_POOL_ATTRIBUTE_", "memory_pool.h")
    assert attributes.pop("UNSET") == 0
    assert {a.name: int(a) for a in cucore.PoolAttribute} == attributes
