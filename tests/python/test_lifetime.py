"""Releases in close() and __del__: never raising, safe at interpreter shutdown. Needs a GPU (or the fake
driver)."""
import os
import subprocess
import sys
import textwrap

import pytest

import cucore
from conftest import REPO

pytestmark = pytest.mark.gpu

SHUTDOWN = textwrap.dedent("""
    import gc, sys, cucore
    dev = cucore.Device(0)
    dev.set_current()
    s = dev.create_stream()
    keep = [s.record(options=cucore.EventOptions(timing_enabled=True)) for _ in range(3)]
    ctx = dev.context
    class Cycle:
        pass
    c = Cycle()
    c.self = c
    c.stream = dev.create_stream()
    c.event = c.stream.record()
    wrapped = cucore.Stream.from_handle(s)
    s.launch_host_func(print, "host function ran", flush=True)
    s.sync()
    legacy = cucore.LEGACY_DEFAULT_STREAM
    del c
    print("live", cucore.live_object_count(), flush=True)
    # exit with everything still alive: __del__ and module teardown must stay silent
""")


def test_objects_alive_at_interpreter_exit():
    env = dict(os.environ, PYTHONPATH=str(REPO / "bindings" / "python"))
    r = subprocess.run([sys.executable, "-c", SHUTDOWN], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "host function ran" in r.stdout and "live" in r.stdout
    assert "Exception ignored" not in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_del_releases(gpu):
    import gc
    gc.collect()
    base = cucore.live_object_count(cucore.ObjectType.STREAM)
    s = gpu.create_stream()
    assert cucore.live_object_count(cucore.ObjectType.STREAM) == base + 1
    del s
    assert cucore.live_object_count(cucore.ObjectType.STREAM) == base


def test_del_after_close_and_failed_construction_is_silent(gpu, fake_driver, monkeypatch):
    reported = []
    monkeypatch.setattr("sys.unraisablehook", lambda args: reported.append(args))
    s = gpu.create_stream()
    s.close()
    del s
    e = gpu.create_event()
    e.close()
    del e
    # Failed constructions that cannot crash: a closed context (libcucore validates its own handles) ...
    ctx = gpu.context
    ctx.close()
    with pytest.raises(cucore.InvalidHandleError, match="closed"):
        ctx.create_stream()
    with pytest.raises(cucore.InvalidHandleError, match="closed"):
        ctx.create_event()

    # ... and __cuda_stream__ objects that fail before any driver call.
    class Raises:
        def __cuda_stream__(self):
            raise RuntimeError("no stream here")

    class WrongVersion:
        def __cuda_stream__(self):
            return (7, 0x1000)

    with pytest.raises(RuntimeError, match="no stream here"):
        cucore.Stream.from_handle(Raises())
    with pytest.raises(ValueError, match="version"):
        cucore.Stream.from_handle(WrongVersion())
    if fake_driver:
        # A garbage raw CUstream is rejected only by the fake driver: the real one dereferences it
        # (from_handle trusts raw handles; see bindings/python/README.md), so never pass one there.
        with pytest.raises(cucore.CUDAError):
            cucore.Stream.from_handle(0xDEADBEEF0)
    import gc
    gc.collect()
    assert reported == []


def test_subclasses(gpu):
    class MyStream(cucore.Stream):
        pass

    s = MyStream.from_handle(gpu.create_stream())
    assert isinstance(s, MyStream) and s.handle
    s.extra = 1  # subclasses may add attributes
    s.sync()
    s.close()


def test_release_errors_reach_the_handler(gpu, fake_driver, monkeypatch):
    if not fake_driver:
        pytest.skip("provoking a failing cuStreamDestroy needs the fake driver")
    calls = []
    before = cucore.release_error_count()
    cucore.set_release_error_handler(lambda *args: calls.append(args))
    try:
        s = gpu.create_stream()
        monkeypatch.setenv("FAKE_CUDA_FAIL", "cuStreamDestroy")
        s.close()  # the release cannot raise: it is counted and reported
        monkeypatch.delenv("FAKE_CUDA_FAIL")
    finally:
        cucore.set_release_error_handler(None)
    assert cucore.release_error_count() == before + 1
    assert len(calls) == 1
    status, cuda_result, message = calls[0]
    assert status == cucore.Status.ERROR_CUDA and cuda_result == 999
    assert "cuStreamDestroy" in message
