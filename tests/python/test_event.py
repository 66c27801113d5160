"""Events: timing, completion, errors. Needs a GPU (or the fake driver)."""
import ctypes
import threading
import time

import pytest

import cucore

pytestmark = pytest.mark.gpu

TIMING = cucore.EventOptions(timing_enabled=True)


def test_create_and_properties(gpu):
    e = gpu.create_event()
    assert not e.is_timing_enabled and not e.is_blocking_sync
    assert e.device is gpu and e.context == gpu.context
    assert e.handle != 0
    assert e.is_done  # never recorded: complete
    e.sync()
    e2 = gpu.create_event(cucore.EventOptions(timing_enabled=True, blocking_sync=True))
    assert e2.is_timing_enabled and e2.is_blocking_sync
    assert e != e2 and e == e
    assert "Event" in repr(e2)
    e.close()
    e.close()
    with pytest.raises(cucore.InvalidHandleError, match="Event is closed"):
        e.sync()
    with pytest.raises(TypeError):
        gpu.create_event(options=cucore.StreamOptions())


def test_elapsed_time_is_plausible(gpu):
    s = gpu.create_stream()
    start = s.record(options=TIMING)
    s.launch_host_func(time.sleep, 0.02)
    end = s.record(options=TIMING)
    end.sync()
    ms = end - start
    assert isinstance(ms, float)
    assert 19.0 <= ms < 2000.0, ms
    assert start.elapsed_time(end) == ms


def test_record_reuses_the_event(gpu):
    s = gpu.create_stream()
    start, end = gpu.create_event(TIMING), gpu.create_event(TIMING)
    for _ in range(3):
        start.record(s)
        s.launch_host_func(time.sleep, 0.005)
        s.record(end)
        end.sync()
        assert end - start >= 4.0


def test_record_accepts_cuda_stream_objects(gpu):
    s = gpu.create_stream()

    class Foreign:
        def __cuda_stream__(self):
            return (0, s.handle)

    e = gpu.create_event()
    e.record(Foreign())
    e.sync()
    assert e.is_done


def test_elapsed_time_without_timing(gpu):
    s = gpu.create_stream()
    a, b = s.record(), s.record()
    b.sync()
    with pytest.raises(cucore.InvalidStateError) as info:
        b - a
    assert isinstance(info.value, RuntimeError)
    assert "TIMING" in info.value.message or "timing" in info.value.message


def test_elapsed_time_not_recorded(gpu):
    s = gpu.create_stream()
    a = s.record(options=TIMING)
    b = gpu.create_event(TIMING)
    a.sync()
    with pytest.raises(cucore.InvalidStateError) as info:
        b - a
    assert "recorded" in info.value.message


def test_elapsed_time_not_ready(gpu):
    s = gpu.create_stream()
    gate = threading.Event()
    a = s.record(options=TIMING)
    s.launch_host_func(gate.wait, 10)
    b = s.record(options=TIMING)
    try:
        assert not b.is_done
        with pytest.raises(cucore.NotReadyError):
            b - a
    finally:
        gate.set()
    b.sync()
    assert b - a >= 0.0


def test_sub_with_other_types(gpu):
    e = gpu.create_event(TIMING)
    with pytest.raises(TypeError):
        e - 1


def test_event_from_raw_handle(gpu, raw):
    h = ctypes.c_void_p()
    raw.check(raw.cuEventCreate(ctypes.byref(h), 0), "cuEventCreate")
    try:
        e = cucore.Event.from_handle(h.value)
        assert e.handle == h.value
        assert not e.is_timing_enabled  # unknown flags read as 0
        s = gpu.create_stream()
        s.launch_host_func(time.sleep, 0.01)
        s.record(e)
        e.sync()
        assert e.is_done
        raw.check(raw.cuEventQuery(h), "cuEventQuery")
        e.close()
        raw.check(raw.cuEventSynchronize(h), "cuEventSynchronize after the wrapper closed")
    finally:
        raw.check(raw.cuEventDestroy_v2(h), "cuEventDestroy")


def test_stream_waits_on_event_across_threads(gpu):
    a, b = gpu.create_stream(), gpu.create_stream()
    ev = gpu.create_event()
    seen = []
    a.launch_host_func(time.sleep, 0.05)
    a.launch_host_func(seen.append, "a")
    a.record(ev)

    def other_thread():
        b.wait(ev)
        b.launch_host_func(seen.append, "b")
        b.sync()

    t = threading.Thread(target=other_thread)
    t.start()
    t.join(30)
    assert seen == ["a", "b"]
