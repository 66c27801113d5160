"""Behaviour without a CUDA driver: every driver call raises NoDriverError naming libcuda.so.1.

The subprocess test forces "no driver" (CUCORE_CUDA_DRIVER_PATH names a file that does not exist), so it
runs on GPU machines too; the in-process test runs only where no driver is installed."""
import os
import subprocess
import sys
import textwrap

import pytest

import cucore
from conftest import REPO, FAKE_DRIVER, gpu_state

# The raw handles below (0x1234) are garbage: safe only because no driver is loaded (the calls fail with
# NoDriverError before any handle reaches a driver). Never pass garbage raw CUstream/CUevent/CUcontext
# handles where a real driver is loaded: it dereferences them (see bindings/python/README.md).
CODE = textwrap.dedent("""
    import cucore
    calls = {
        "Device()": lambda: cucore.Device(),
        "Device(0)": lambda: cucore.Device(0),
        "Device.count": cucore.Device.count,
        "driver_version": cucore.driver_version,
        "get_all_devices": cucore.Device.get_all_devices,
        "Context.from_handle": lambda: cucore.Context.from_handle(0x1234),
        "Stream.from_handle": lambda: cucore.Stream.from_handle(0x1234),
        "Event.from_handle": lambda: cucore.Event.from_handle(0x1234),
        "LEGACY_DEFAULT_STREAM": lambda: cucore.LEGACY_DEFAULT_STREAM,
    }
    for name, call in calls.items():
        try:
            call()
        except cucore.NoDriverError as e:
            assert e.status == cucore.Status.ERROR_NO_DRIVER, e.status
            assert isinstance(e, RuntimeError)
            assert "libcuda.so.1" in e.message, e.message
            print(name, "->", e)
        else:
            raise SystemExit(name + ": no error")
    print("live objects", cucore.live_object_count())
""")


def test_no_driver_forced():
    env = dict(os.environ, PYTHONPATH=str(REPO / "bindings" / "python"),
               CUCORE_CUDA_DRIVER_PATH="/nonexistent/cucore-test/libcuda.so.1")
    r = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True, timeout=120)
    if "LibraryNotFoundError" in r.stderr:
        pytest.skip("libcucore could not be loaded")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "live objects 0" in r.stdout


def test_no_driver_here(lib):
    count, reason = gpu_state()
    if count or FAKE_DRIVER:
        pytest.skip("a CUDA driver is installed here")
    if "no device" in (reason or ""):
        pytest.skip(reason)
    with pytest.raises(cucore.NoDriverError) as info:
        cucore.Device()
    assert "libcuda.so.1" in str(info.value)
    with pytest.raises(cucore.NoDriverError):
        cucore.Device(0)
    with pytest.raises(cucore.NoDriverError):
        cucore.driver_version()
