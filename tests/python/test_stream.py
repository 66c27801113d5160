"""Streams: ordering proven with host functions and events, wrapping, lifetimes. Needs a GPU (or the fake
driver)."""
import ctypes
import gc
import threading
import time
import weakref

import pytest

import cucore

pytestmark = pytest.mark.gpu


def test_create_and_properties(gpu):
    s = gpu.create_stream()
    assert s.is_nonblocking and s.is_owned and s.priority == 0
    assert s.device is gpu and s.context == gpu.context
    assert s.handle not in (0, 1, 2)
    assert s.__cuda_stream__() == (0, s.handle)
    assert s == cucore.Stream.from_handle(s.handle)
    assert s.is_done
    s.sync()
    assert "Stream" in repr(s)
    s.close()
    assert "closed" in repr(s)


def test_options(gpu):
    least, greatest = gpu.stream_priority_range
    s = gpu.create_stream(options=cucore.StreamOptions(nonblocking=False, priority=greatest))
    assert not s.is_nonblocking
    assert s.priority == greatest
    s2 = gpu.create_stream(options={"priority": least})
    assert s2.is_nonblocking and s2.priority == least
    with pytest.raises(TypeError):
        gpu.create_stream(options=cucore.EventOptions())


def test_host_func_runs_in_order_with_arguments(gpu):
    s = gpu.create_stream()
    seen = []
    for i in range(20):
        s.launch_host_func(seen.append, i)
    s.sync()
    assert seen == list(range(20))
    assert s.is_done


def test_ordering_across_streams_with_an_event(gpu):
    a, b = gpu.create_stream(), gpu.create_stream()
    state = {"value": 0}
    seen = []

    def slow_set():
        time.sleep(0.1)
        state["value"] = 42

    a.launch_host_func(slow_set)
    ev = a.record()
    b.wait(ev)
    b.launch_host_func(lambda: seen.append(state["value"]))
    b.sync()
    assert seen == [42]
    assert ev.is_done


def test_ordering_across_streams_with_wait_stream(gpu):
    a, b = gpu.create_stream(), gpu.create_stream()
    state = []
    a.launch_host_func(lambda: (time.sleep(0.1), state.append("a")))
    b.wait(a)
    b.launch_host_func(lambda: state.append("b"))
    b.sync()
    assert state == ["a", "b"]


def test_wait_accepts_cuda_stream_objects(gpu):
    a, b = gpu.create_stream(), gpu.create_stream()

    class Foreign:
        def __cuda_stream__(self):
            return (0, a.handle)

    state = []
    a.launch_host_func(lambda: (time.sleep(0.05), state.append("a")))
    b.wait(Foreign())
    b.launch_host_func(lambda: state.append("b"))
    b.sync()
    assert state == ["a", "b"]
    with pytest.raises(TypeError):
        b.wait(42)


def test_is_done_while_blocked(gpu):
    s = gpu.create_stream()
    gate = threading.Event()
    s.launch_host_func(gate.wait, 10)
    try:
        assert not s.is_done
    finally:
        gate.set()
    s.sync()
    assert s.is_done


def test_host_func_keyword_arguments_and_driver_threads(gpu):
    from cucore import stream as stream_module
    s = gpu.create_stream()
    seen = {}
    s.launch_host_func(seen.update, a=1, fn=2)  # `fn` is free for the callable's own use
    s.launch_host_func(lambda **kw: seen.update(kw), b=3)
    s.sync()
    assert seen == {"a": 1, "fn": 2, "b": 3}
    assert stream_module._pinned_threads  # the driver's callback thread keeps its Python thread state


def test_host_func_keeps_the_callable_alive(gpu):
    s = gpu.create_stream()
    gate = threading.Event()
    s.launch_host_func(gate.wait, 10)
    seen = []

    class Callback:
        def __call__(self, x):
            seen.append(x)

    cb = Callback()
    ref = weakref.ref(cb)
    s.launch_host_func(cb, "ran")
    del cb
    gc.collect()
    assert ref() is not None  # held until it has run
    gate.set()
    s.sync()
    assert seen == ["ran"]
    gc.collect()
    assert ref() is None  # and released afterwards


def test_host_func_exception_goes_to_unraisablehook(gpu, monkeypatch):
    reported = []
    monkeypatch.setattr("sys.unraisablehook", lambda args: reported.append(args))
    s = gpu.create_stream()

    def bad():
        raise ZeroDivisionError("in a host function")

    seen = []
    s.launch_host_func(bad)
    s.launch_host_func(seen.append, "still running")
    s.sync()
    assert seen == ["still running"]
    assert len(reported) == 1
    assert reported[0].exc_type is ZeroDivisionError and reported[0].object is bad
    assert "host function" in reported[0].err_msg


def test_host_func_argument_checks(gpu):
    s = gpu.create_stream()
    with pytest.raises(TypeError):
        s.launch_host_func(42)


def test_record_existing_and_new_events(gpu):
    s = gpu.create_stream()
    e = gpu.create_event()
    assert s.record(e) is e
    e2 = s.record(options=cucore.EventOptions(timing_enabled=True))
    assert isinstance(e2, cucore.Event) and e2.is_timing_enabled
    e3 = s.record()
    assert not e3.is_timing_enabled
    s.sync()
    assert e.is_done and e2.is_done and e3.is_done
    with pytest.raises(ValueError):
        s.record(e, options=cucore.EventOptions())
    with pytest.raises(TypeError):
        s.record("event")


def test_context_manager_and_close(gpu):
    with gpu.create_stream() as s:
        s.sync()
    with pytest.raises(cucore.InvalidHandleError, match="closed"):
        s.sync()
    with pytest.raises(cucore.InvalidHandleError, match="closed"):
        s.record()
    s.close()


def test_from_handle_of_a_raw_driver_stream(gpu, raw):
    h = ctypes.c_void_p()
    raw.check(raw.cuStreamCreate(ctypes.byref(h), 1), "cuStreamCreate")
    try:
        s = cucore.Stream.from_handle(h.value)
        assert s.handle == h.value and not s.is_owned
        assert s.device is gpu and s.is_nonblocking
        seen = []
        s.launch_host_func(seen.append, 1)
        s.sync()
        assert seen == [1]
        s.close()
        # closing the wrapper does not destroy the foreign stream
        raw.check(raw.cuStreamSynchronize(h), "cuStreamSynchronize after the wrapper closed")
        raw.check(raw.cuStreamQuery(h), "cuStreamQuery")
    finally:
        raw.check(raw.cuStreamDestroy_v2(h), "cuStreamDestroy")


def test_from_handle_keeps_the_owner_alive(gpu):
    inner = gpu.create_stream()

    class Owner:
        def __cuda_stream__(self):
            return (0, inner.handle)

    owner = Owner()
    ref = weakref.ref(owner)
    s = cucore.Stream.from_handle(owner)
    del owner
    gc.collect()
    assert ref() is not None
    assert s.handle == inner.handle and not s.is_owned
    s.close()
    gc.collect()
    assert ref() is None  # released through the library's release callback


def test_device_create_stream_wraps_objects(gpu):
    inner = gpu.create_stream()
    s = gpu.create_stream(inner)
    assert s.handle == inner.handle and not s.is_owned
    with pytest.raises(ValueError):
        gpu.create_stream(inner, options=cucore.StreamOptions())


@pytest.mark.parametrize("bad", [
    object(), "stream", 1.5,
])
def test_from_handle_rejects_non_streams(gpu, bad):
    with pytest.raises(TypeError):
        cucore.Stream.from_handle(bad)


def test_from_handle_protocol_checks(gpu):
    class V1:
        def __cuda_stream__(self):
            return (1, 0)

    class Bad:
        def __cuda_stream__(self):
            return "nope"

    with pytest.raises(ValueError, match="version"):
        cucore.Stream.from_handle(V1())
    with pytest.raises(TypeError):
        cucore.Stream.from_handle(Bad())


def test_default_streams(gpu):
    legacy = cucore.LEGACY_DEFAULT_STREAM
    per_thread = cucore.PER_THREAD_DEFAULT_STREAM
    assert legacy.handle == 1 and per_thread.handle == 2
    assert legacy.device is gpu and per_thread.device is gpu
    assert cucore.legacy_default_stream() is gpu.default_stream
    assert cucore.per_thread_default_stream(0) is gpu.per_thread_default_stream
    seen = []
    for s in (legacy, per_thread):
        s.launch_host_func(seen.append, s.handle)
        e = s.record()
        e.sync()
        s.sync()
    assert seen == [1, 2]


def test_live_object_count_returns_to_baseline(gpu):
    gpu.context  # make sure the primary context exists before taking the baseline
    gc.collect()
    def events_in_use():  # live events less those the device keeps renewed for create_event (test_event_reuse)
        return cucore.live_object_count("event") - sum(map(len, gpu._event_spares))

    base_streams = cucore.live_object_count(cucore.ObjectType.STREAM)
    base_events = events_in_use()
    base_all = cucore.live_object_count() - sum(map(len, gpu._event_spares))
    streams = [gpu.create_stream() for _ in range(10)]
    events = [s.record() for s in streams] + [gpu.create_event() for _ in range(5)]
    assert cucore.live_object_count(cucore.ObjectType.STREAM) == base_streams + 10
    assert events_in_use() == base_events + 15
    for s in streams[:5]:
        s.close()
    del streams, events
    gc.collect()
    assert cucore.live_object_count(cucore.ObjectType.STREAM) == base_streams
    assert events_in_use() == base_events
    assert cucore.live_object_count() - sum(map(len, gpu._event_spares)) == base_all


def test_children_keep_their_parents(gpu):
    s = gpu.create_stream()
    ctx = s.context
    ctx.close()  # the stream holds its own reference to the context
    e = s.record()
    e.sync()
    assert s.context.is_primary


def test_many_threads(gpu):
    errors = []
    results = []

    def work(i):
        try:
            cucore.Device(0).set_current()
            for _ in range(20):
                s = gpu.create_stream()
                out = []
                s.launch_host_func(out.append, i)
                e = s.record(options=cucore.EventOptions(timing_enabled=True))
                other = gpu.create_stream()
                other.wait(e)
                other.launch_host_func(out.append, -i)
                other.sync()
                assert out == [i, -i]
                s.close()
                other.close()
            results.append(i)
        except BaseException as ex:  # pragma: no cover - reported below
            errors.append(ex)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert sorted(results) == list(range(8))


def test_objects_shared_between_threads(gpu):
    s = gpu.create_stream()
    seen = []
    lock = threading.Lock()

    def add(i):
        with lock:
            seen.append(i)

    threads = [threading.Thread(target=lambda i=i: [s.launch_host_func(add, i) for _ in range(50)])
               for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    s.sync()
    assert sorted(seen) == sorted(i for i in range(4) for _ in range(50))


def test_equality_and_hash_survive_close(gpu):
    s = gpu.create_stream()
    t = cucore.Stream.from_handle(s.handle)
    assert s == t and hash(s) == hash(t)
    h = hash(s)
    table = {s: 1}
    s.close()
    assert hash(s) == h and table[s] == 1
    assert s == s and s != t and t != s
    u = gpu.create_stream()
    u.close()
    assert u == u and u != s
    hash(u)
