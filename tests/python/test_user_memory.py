"""User-defined memory resources: Python subclasses of MemoryResource behind cucore_user_memory_resource_create
(bindings/python/cucore/user_memory.py).

Without a GPU: resources handing out host memory of their own (ctypes buffers), so libcucore's callbacks,
the exception round trip, the lifetime rules and foreign threads are all exercised with no driver. With a GPU
(or the fake driver): a resource over a device pool, used through Device.allocate and copies."""
import ctypes
import gc
import threading
import weakref

import pytest

import cucore
from cucore import user_memory as memory_user


def _live_resources():
    gc.collect()
    return cucore.live_object_count(cucore.ObjectType.MEMORY_RESOURCE)


class HostArena(cucore.MemoryResource):
    """Host memory from ctypes buffers, counted; `fail` makes allocate raise it."""

    device_id = -1

    def __init__(self, log=None):
        self.blocks = {}
        self.allocations = 0
        self.deallocations = []
        self.streams = []
        self.fail = None
        self.log = log if log is not None else []

    def allocate(self, size, stream):
        if self.fail is not None:
            raise self.fail
        block = ctypes.create_string_buffer(size)
        self.blocks[ctypes.addressof(block)] = block
        self.allocations += 1
        self.streams.append(stream)
        return ctypes.addressof(block)

    def deallocate(self, ptr, size, stream):
        del self.blocks[ptr]
        self.deallocations.append((ptr, size))
        self.log.append(("deallocate", ptr, size))


def test_a_subclass_is_a_libcucore_resource(lib):
    base = _live_resources()
    mr = HostArena()
    assert isinstance(mr, cucore.MemoryResource) and mr.kind == cucore.MemoryResourceKind.USER
    assert (mr.device_id, mr.is_device_accessible, mr.is_host_accessible, mr.is_managed) == (-1, False, True, False)
    assert not mr.is_stream_ordered, "a user resource is not a pool"
    assert _live_resources() == base + 1
    b = mr.allocate(64)
    assert isinstance(b, cucore.Buffer) and b.size == 64 and b.handle in mr.blocks
    assert b.memory_resource is mr and mr.allocations == 1 and mr.streams == [None]
    assert (b.device_id, b.is_host_accessible, b.is_device_accessible, b.is_managed) == (-1, True, False, False)
    ctypes.memmove(b.handle, b"user memory", 11)
    assert ctypes.string_at(b.view(5, 6).handle, 6) == b"memory"
    assert mr.allocate(0).handle == 0 and mr.allocations == 1  # an empty buffer never calls allocate
    address = b.handle
    b.close()
    assert mr.deallocations == [(address, 64)] and not mr.blocks
    del b, mr
    assert _live_resources() == base


def test_every_allocation_is_deallocated_once(lib):
    mr = HostArena()
    bufs = [mr.allocate(n) for n in (1, 10, 100, 1000)]
    views = [b.view(0, 1) for b in bufs]
    assert mr.allocations == 4 and len(mr.blocks) == 4
    del bufs
    gc.collect()
    assert mr.deallocations == []  # the views hold the memory
    del views
    gc.collect()
    assert sorted(size for _, size in mr.deallocations) == [1, 10, 100, 1000] and not mr.blocks


def test_exceptions_in_allocate_reach_the_caller(lib):
    mr = HostArena()
    for exc, status in ((MemoryError("arena full"), cucore.Status.ERROR_OUT_OF_MEMORY),
                        (KeyError("boom"), cucore.Status.ERROR_INVALID_STATE),
                        (ValueError("bad size"), cucore.Status.ERROR_INVALID_ARGUMENT)):
        mr.fail = exc
        with pytest.raises(type(exc)) as info:
            mr.allocate(128)
        assert info.value is exc  # the very exception, not a copy
        # C callers see the status it became
        out = ctypes.c_void_p()
        st = lib.function("cucore_memory_resource_allocate")(mr._h, 128, None, ctypes.byref(out))
        assert st == status and out.value is None
        assert "allocate callback failed" in cucore.last_error_message()
        memory_user._user_errors.pending = None  # that raw call's exception is nobody's to re-raise
    mr.fail = None
    b = mr.allocate(8)  # and the resource still works
    assert b.size == 8 and mr.allocations == 1


def test_a_stale_exception_is_never_raised_for_another_failure(lib):
    mr = HostArena()
    mr.fail = RuntimeError("first")
    out = ctypes.c_void_p()
    assert lib.function("cucore_memory_resource_allocate")(mr._h, 8, None, ctypes.byref(out)) != 0
    # a later failure with another status on this thread is that failure, not the stored exception
    closed = HostArena()
    closed.close()
    with pytest.raises(cucore.InvalidHandleError):
        closed.allocate(8)
    assert getattr(memory_user._user_errors, "pending", None) is None


@pytest.mark.parametrize("result, exc, words", [
    ("0x1000", TypeError, "address"), (None, TypeError, "address"), (True, TypeError, "bool"),
    (0, ValueError, "address 0x0"), (-5, ValueError, "address"), (2**64, ValueError, "address"),
])
def test_bad_addresses_from_allocate(lib, result, exc, words):
    class Bad(cucore.MemoryResource):
        device_id = -1

        def allocate(self, size, stream):
            return result

        def deallocate(self, ptr, size, stream):
            raise AssertionError("never allocated")

    with pytest.raises(exc, match=words):
        Bad().allocate(16)


def test_objects_with_a_handle_live_until_deallocated(lib):
    host = HostArena()
    released = []

    class Block:
        def __init__(self, buf):
            self.buf = buf
            self.handle = buf.handle

        def __del__(self):
            released.append(self.handle)

    class Upstream(cucore.MemoryResource):
        device_id = -1

        def allocate(self, size, stream):
            return Block(host.allocate(size))  # only its handle goes to libcucore

        def deallocate(self, ptr, size, stream):
            pass

    mr = Upstream()
    b = mr.allocate(32)
    gc.collect()
    assert released == [] and b.handle in host.blocks  # kept alive by the binding
    ctypes.memmove(b.handle, b"x" * 32, 32)
    address = b.handle
    b.close()
    gc.collect()
    assert released == [address] and host.deallocations == [(address, 32)]


def test_the_resource_goes_when_dropped(lib):
    base = _live_resources()
    mr = HostArena()
    key = mr._user_key
    ref = weakref.ref(mr)
    assert key in memory_user._states
    del mr
    gc.collect()
    assert ref() is None and key not in memory_user._states  # destroy ran
    assert _live_resources() == base


def test_the_object_lives_while_its_buffers_do(lib):
    base = _live_resources()
    log = []
    mr = HostArena(log)
    ref = weakref.ref(mr)
    b = mr.allocate(48)
    address = b.handle
    del mr
    gc.collect()
    assert ref() is not None  # libcucore may still call its deallocate
    v = b.view(8, 8)
    b.close()
    gc.collect()
    assert ref() is not None and log == []  # the view holds the memory
    del v
    gc.collect()
    assert log == [("deallocate", address, 48)]
    assert ref() is None and _live_resources() == base


def test_device_accessible_traits_and_managed_buffers(lib):
    class Traits(cucore.MemoryResource):
        def __init__(self, ordinal, managed):
            self.ordinal = ordinal
            self.managed = managed
            self.arena = HostArena()

        @property
        def device_id(self):
            return self.ordinal

        @property
        def is_managed(self):
            return self.managed

        is_host_accessible = True

        def allocate(self, size, stream):
            return self.arena.allocate(size).handle  # (the arena's buffers stay in its dict)

        def deallocate(self, ptr, size, stream):
            pass

    mr = Traits(0, True)
    assert (mr.device_id, mr.is_device_accessible, mr.is_host_accessible, mr.is_managed) == (0, True, True, True)
    b = mr.allocate(16)
    assert isinstance(b, cucore.ManagedBuffer) and (b.is_managed, b.device_id, b.is_host_accessible) == (True, 0, True)
    plain = Traits(-1, False).allocate(16)
    assert type(plain) is cucore.Buffer and not plain.is_managed


def test_class_errors(lib):
    class NoDeallocate(cucore.MemoryResource):
        device_id = -1

        def allocate(self, size, stream):
            return 1

    with pytest.raises(TypeError, match="deallocate"):
        NoDeallocate()

    class NoDevice(cucore.MemoryResource):
        def allocate(self, size, stream):
            return 1

        def deallocate(self, ptr, size, stream):
            pass

    with pytest.raises(TypeError, match="must define device_id"):
        NoDevice()

    class BadDevice(NoDevice):
        device_id = -2

    with pytest.raises(ValueError, match="device ordinal or -1"):
        BadDevice()

    class TextDevice(NoDevice):
        device_id = "0"

    with pytest.raises(TypeError, match="device_id must be an int"):
        TextDevice()

    class BadFlag(NoDevice):
        device_id = -1
        is_host_accessible = "yes"

    with pytest.raises(TypeError, match="is_host_accessible must be a bool"):
        BadFlag()

    with pytest.raises(TypeError, match="cannot be instantiated directly"):
        cucore.MemoryResource()
    with pytest.raises(TypeError):
        HostArena(1, 2, 3)  # __init__'s own errors


def test_subclasses_of_built_in_kinds_stay_built_in(lib):
    class LoggingPool(cucore.DeviceMemoryResource):
        def allocate(self, size, *, stream=None):
            return super().allocate(size, stream=stream)

    assert not LoggingPool._user_defined and cucore.DeviceMemoryResource.allocate is cucore.MemoryResource.allocate
    assert HostArena._user_defined and HostArena.allocate is not cucore.MemoryResource.allocate

    class Derived(HostArena):  # a subclass of a user-defined resource is one too, with its callbacks
        pass

    d = Derived()
    assert d.kind == cucore.MemoryResourceKind.USER and d.allocate(4).size == 4 and d.allocations == 1


def test_allocations_from_many_threads(lib):
    mr = HostArena()
    errors = []

    def worker():
        try:
            for _ in range(200):
                b = mr.allocate(64)
                ctypes.memset(b.handle, 7, 64)
                b.close()
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and mr.allocations == 800 and len(mr.deallocations) == 800 and not mr.blocks


def test_exceptions_in_deallocate_are_reported(lib, monkeypatch):
    reported = []
    monkeypatch.setattr("sys.unraisablehook", lambda args: reported.append(args))

    class Leaky(HostArena):
        def deallocate(self, ptr, size, stream):
            raise RuntimeError("cannot free")

    mr = Leaky()
    mr.allocate(8).close()
    assert len(reported) == 1 and isinstance(reported[0].exc_value, RuntimeError)
    assert "deallocate" in reported[0].err_msg


@pytest.mark.parametrize("error, status", [
    (RuntimeError("cannot free"), cucore.Status.ERROR_INVALID_STATE),
    (MemoryError(), cucore.Status.ERROR_OUT_OF_MEMORY),
    (cucore.CUDAError(cucore.Status.ERROR_CUDA, "the driver refused"), cucore.Status.ERROR_CUDA),
])
def test_exceptions_in_deallocate_are_release_errors(lib, monkeypatch, error, status):
    # The exception becomes the callback's status: libcucore counts it and tells the release error handler,
    # naming the callback; the traceback still goes to sys.unraisablehook. The callback is never retried.
    reported, handled = [], []
    monkeypatch.setattr("sys.unraisablehook", lambda args: reported.append(args))
    previous = cucore.set_release_error_handler(lambda *args: handled.append(args))
    try:
        class Failing(HostArena):
            def deallocate(self, ptr, size, stream):
                HostArena.deallocate(self, ptr, size, stream)
                raise error

        mr = Failing()
        before = cucore.release_error_count()
        b = mr.allocate(24)
        address = b.handle
        b.close()
        assert cucore.release_error_count() == before + 1
        assert len(handled) == 1 and handled[0][0] == status and handled[0][1] == 0
        assert "deallocate callback" in handled[0][2] and f"24 bytes at {address:#x}" in handled[0][2]
        assert len(reported) == 1 and reported[0].exc_value is error
        assert mr.deallocations == [(address, 24)]
        b.close()  # closed already: nothing more
        del b
        gc.collect()
        assert cucore.release_error_count() == before + 1 and len(mr.deallocations) == 1
        mr.allocate(8)  # freed at once (the Buffer is dropped): reported the same way
        gc.collect()
        assert cucore.release_error_count() == before + 2 and len(handled) == 2 and len(reported) == 2
        assert "8 bytes" in handled[1][2]
    finally:
        cucore.set_release_error_handler(previous)


def test_a_deallocate_that_succeeds_reports_nothing(lib):
    handled = []
    previous = cucore.set_release_error_handler(lambda *args: handled.append(args))
    try:
        mr = HostArena()
        before = cucore.release_error_count()
        for size in (8, 16):
            mr.allocate(size).close()
        assert len(mr.deallocations) == 2 and cucore.release_error_count() == before and not handled
    finally:
        cucore.set_release_error_handler(previous)


# ============================================================================================================
# GPU (or the fake driver)
# ============================================================================================================

class CountingPool(cucore.MemoryResource):
    """Device memory from an upstream pool, counted."""

    def __init__(self, upstream):
        self.upstream = upstream
        self.live = 0
        self.total = 0
        self.streams = []

    @property
    def device_id(self):
        return self.upstream.device_id

    def allocate(self, size, stream):
        self.live += 1
        self.total += 1
        self.streams.append(stream)
        return self.upstream.allocate(size, stream=stream)  # a Buffer: kept until deallocated

    def deallocate(self, ptr, size, stream):
        self.live -= 1


@pytest.mark.gpu
def test_a_resource_over_a_device_pool(gpu):
    s = gpu.create_stream()
    mr = CountingPool(cucore.DeviceMemoryResource(gpu, {}))
    assert (mr.device_id, mr.is_device_accessible, mr.is_host_accessible) == (gpu.device_id, True, False)
    b = mr.allocate(4096, stream=s)
    assert mr.streams == [s] and b.deallocation_stream == s
    b.fill(0x66, stream=s)
    assert b.to_bytes(stream=s) == b"\x66" * 4096
    c = b.copy_to(stream=s)  # allocated from the same (user) resource
    assert c.memory_resource is mr and mr.total == 2 and c.to_bytes(stream=s) == b"\x66" * 4096
    b.close(s)
    c.close(s)
    s.sync()
    assert mr.live == 0


@pytest.mark.gpu
def test_a_user_resource_as_the_device_default(gpu):
    s = gpu.create_stream()
    mr = CountingPool(cucore.DeviceMemoryResource(gpu, {}))
    ref = weakref.ref(mr)
    gpu.memory_resource = mr
    try:
        assert gpu.memory_resource is mr
        b = gpu.allocate(256, stream=s)
        assert mr.total == 1 and b.memory_resource is mr
        b.fill(1, stream=s)
        assert b.to_bytes(stream=s) == b"\x01" * 256
        mr.upstream = None  # allocate now raises AttributeError
        with pytest.raises(AttributeError):
            gpu.allocate(256, stream=s)
        mr.upstream = cucore.DeviceMemoryResource(gpu, {})
        del mr
        gc.collect()
        assert ref() is not None  # the device holds it where Python cannot see: kept
        assert gpu.allocate(64, stream=s).size == 64
    finally:
        gpu.memory_resource = None
    s.sync()


@pytest.mark.gpu
def test_callbacks_on_a_thread_python_did_not_start(gpu, monkeypatch):
    # Host functions run on the driver's threads; the resource there makes no CUDA call (host memory).
    reported = []
    monkeypatch.setattr("sys.unraisablehook", lambda args: reported.append(args))
    s = gpu.create_stream()
    mr = HostArena()
    results = []

    def on_driver_thread():
        b = mr.allocate(32)  # through libcucore, from this foreign thread
        ctypes.memmove(b.handle, b"from a driver thread", 20)
        results.append((threading.current_thread() is threading.main_thread(), ctypes.string_at(b.handle, 20)))
        b.close()
        mr.fail = MemoryError("no more")
        try:
            mr.allocate(32)
        except MemoryError as e:
            results.append(e)

    s.launch_host_func(on_driver_thread)
    s.sync()
    assert results[0] == (False, b"from a driver thread")
    assert isinstance(results[1], MemoryError) and mr.allocations == 1 and len(mr.deallocations) == 1
    assert not reported  # re-raised to the host function, not reported as lost
