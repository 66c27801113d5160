"""The unchecked (argtypes-less) ctypes functions of the hot paths: ctypes checks nothing there, so this
checks statically that every call site passes as many arguments as the C function takes (_abi.ABI), and at
run time that the functions are bound as _lib documents and that the shared out-parameter free lists
never mix up concurrent calls."""
import ast
import ctypes
import threading

import pytest

import cucore
from cucore import _abi, _lib
from conftest import REPO

PACKAGE = REPO / "bindings" / "python" / "cucore"
MODULES = sorted(p for p in PACKAGE.glob("*.py") if p.name not in ("_abi.py", "_lib.py"))


def _bound_unchecked(tree):
    """{global name: C name} bound by `... = _lib.bind_unchecked(globals(), "cucore_x", ...)`."""
    bound = {}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "bind_unchecked"):
            for arg in node.args[1:]:
                assert isinstance(arg, ast.Constant), "bind_unchecked takes literal C names"
                bound[_lib.unchecked_name(arg.value)] = arg.value
    return bound


def _fast_calls(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id.startswith("_fast_"):
            yield node


def _release_bindings(tree):
    """Unchecked functions handed to HandleObject as `_release = staticmethod(_fast_x)`; _handle.py calls
    each as `self._release(h)`, with one argument."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "staticmethod"
                and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id.startswith("_fast_")):
            yield node.args[0].id


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_release_functions_take_one_handle(path):
    tree = ast.parse(path.read_text())
    bound = _bound_unchecked(tree)
    for name in _release_bindings(tree):
        assert name in bound, f"{path.name}: {name} is not bound with bind_unchecked here"
        c_name = bound[name]
        assert c_name.endswith("_release") and len(_abi.ABI[c_name][1]) == 1, c_name


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_unchecked_call_sites_match_the_abi(path):
    tree = ast.parse(path.read_text())
    bound = _bound_unchecked(tree)
    for name, c_name in bound.items():
        assert c_name in _abi.ABI
    for call in _fast_calls(tree):
        where = f"{path.name}:{call.lineno}"
        assert call.func.id in bound, f"{where}: {call.func.id} is not bound with bind_unchecked here"
        assert not call.keywords and not any(isinstance(a, ast.Starred) for a in call.args), where
        c_name = bound[call.func.id]
        expected = len(_abi.ABI[c_name][1])
        assert len(call.args) == expected, \
            f"{where}: {call.func.id} called with {len(call.args)} arguments, {c_name} takes {expected}"
        for arg in call.args:
            # Python ints are passed as C int (32 bits): never pass a raw address or a handle that way
            assert not (isinstance(arg, ast.Constant) and isinstance(arg.value, int) and abs(arg.value) > 2**31), where


def test_every_module_uses_what_it_binds():
    for path in MODULES:
        tree = ast.parse(path.read_text())
        used = {c.func.id for c in _fast_calls(tree)} | set(_release_bindings(tree))
        unused = set(_bound_unchecked(tree)) - used
        assert not unused, f"{path.name} binds but never calls {sorted(unused)}"


def test_unchecked_functions_mirror_the_typed_ones(lib):
    for name in _abi.ABI:
        typed, fast = lib.function(name), lib.unchecked_function(name)
        if not isinstance(typed, ctypes._CFuncPtr):  # noqa: SLF001 - a symbol the library lacks
            continue
        assert fast is not typed and fast.argtypes is None
        assert fast.restype is typed.restype, name
        assert ctypes.cast(fast, ctypes.c_void_p).value == ctypes.cast(typed, ctypes.c_void_p).value


def test_module_globals_are_the_loaded_functions(lib):
    from cucore import device, event, stream
    lib.load()
    assert device._fast_device_attribute is lib.unchecked_function("cucore_device_attribute")
    assert stream._fast_stream_synchronize is lib.unchecked_function("cucore_stream_synchronize")
    assert event._cucore_event_record is lib.function("cucore_event_record")


def test_handle_arg_round_trips(lib):
    for value in (1, 2, 0x1000, 2**63, 2**64 - 1):
        a = lib.handle_arg(value)
        # what unchecked calls receive is the full 64-bit address (cucore_stream_synchronize rejects it)
        assert lib.unchecked_function("cucore_stream_synchronize")(a) == cucore.Status.ERROR_INVALID_HANDLE


@pytest.mark.gpu
def test_out_parameter_free_lists_under_threads(gpu):
    attrs = [cucore.DeviceAttribute.MULTIPROCESSOR_COUNT, cucore.DeviceAttribute.WARP_SIZE,
             cucore.DeviceAttribute.MAX_THREADS_PER_BLOCK, cucore.DeviceAttribute.COMPUTE_CAPABILITY_MAJOR]
    expected = {a: gpu.attribute(a) for a in attrs}
    errors = []
    start = threading.Barrier(len(attrs))

    def worker(attr):
        try:
            start.wait()
            s = gpu.create_stream()
            for _ in range(3000):
                v = gpu.attribute(attr)
                if v != expected[attr]:
                    errors.append((attr, v))
                    return
                if not s.is_done:
                    errors.append("stream busy")
            s.close()
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(a,)) for a in attrs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors[:5]


@pytest.mark.gpu
def test_default_options_pass_null_and_others_their_struct(gpu):
    from cucore.event import _options_ref as event_ref
    from cucore.stream import _options_ref as stream_ref
    assert event_ref(cucore.EventOptions()) is None and stream_ref(cucore.StreamOptions()) is None
    assert event_ref({"timing_enabled": True}) is event_ref(cucore.EventOptions(timing_enabled=True))
    e = gpu.create_event(cucore.EventOptions(timing_enabled=True))
    assert e.is_timing_enabled
    s = gpu.create_stream(options=cucore.StreamOptions(nonblocking=False))
    assert not s.is_nonblocking
    with pytest.raises(TypeError):
        gpu.create_event(cucore.StreamOptions())
