"""Managed memory: ManagedMemoryResource and ManagedBuffer advice, accessed-by, prefetch and discard
(bindings/python/cucore/managed_memory.py).

Without a GPU: location parsing. With a GPU (or the fake driver): every piece of advice is set and read back on
the default ManagedMemoryResource (cuMemAllocManaged), whose preferred location is advised on each allocation;
prefetches report where the pages went, data survives them (read through the binding and through the host
address). A managed pool (use_pool=True, a CUDA 13 driver) allocates in stream order and prefetches; advice on
its memory may be refused (NotSupportedError, as on an H100 with driver 580), which is reported, not failed.
Discard needs a CUDA 13 driver: without one it skips with the reason."""
import ctypes
import os

import pytest

import cucore
from conftest import check_round_trip as _check_round_trip, memory_baseline as _baseline, or_skip as _or_skip
from cucore.managed_memory import (
    LOCATION_DEVICE, LOCATION_HOST, LOCATION_HOST_NUMA, LOCATION_HOST_NUMA_CURRENT, from_location, to_location,
)


def test_locations():
    cases = {0: (LOCATION_DEVICE, 0), 3: (LOCATION_DEVICE, 3), -1: (LOCATION_HOST, 0), "host": (LOCATION_HOST, 0),
             ("host_numa", 2): (LOCATION_HOST_NUMA, 2), "host_numa_current": (LOCATION_HOST_NUMA_CURRENT, 0),
             ("device", 1): (LOCATION_DEVICE, 1)}
    for value, (type_, id_) in cases.items():
        c = to_location(value)
        assert (c.type, c.id) == (type_, id_), value
    assert from_location(to_location("host")) == "host"
    assert from_location(to_location(("host_numa", 2))) == ("host_numa", 2)
    assert from_location(to_location("host_numa_current")) == "host_numa_current"
    assert from_location(cucore.managed_memory.LocationC(0, 0)) is None
    for bad, exc in (("cpu", ValueError), (-2, ValueError), (2**31, ValueError), (("host_numa",), ValueError),
                     (("host_numa", -1), ValueError), (("host_numa", 1.0), TypeError), (None, TypeError),
                     (1.5, TypeError), (False, TypeError), ([0], TypeError)):
        with pytest.raises(exc, match="location"):
            to_location(bad)


@pytest.fixture
def stream(gpu):
    s = gpu.create_stream()
    yield s
    s.sync()


@pytest.fixture
def managed(gpu):
    """(a ManagedMemoryResource of cuMemAllocManaged memory, which takes every advice; a stream), or a skip naming
    what is lacking."""
    try:
        mr = cucore.ManagedMemoryResource(cucore.ManagedMemoryResourceOptions(use_pool=False), device=gpu)
    except cucore.NotSupportedError as e:
        pytest.skip(f"managed memory is not supported here: {e}")
    s = gpu.create_stream()
    yield mr, s
    s.sync()


def test_managed_options():
    assert cucore.ManagedMemoryResourceOptions().preferred_location is None
    assert cucore.ManagedMemoryResourceOptions().use_pool is True  # a new managed pool, as cuda.core's
    for good in ("host", 0, ("host_numa", 1)):
        assert cucore.ManagedMemoryResourceOptions(preferred_location=good).preferred_location == good
    assert cucore.ManagedMemoryResourceOptions(preferred_location=-1).preferred_location == "host"  # cuda.core's -1
    # cuda.core's preferred_location_type reads preferred_location as it says.
    for kind, value, read in (("device", 1, 1), ("host", None, "host"), ("host_numa", 2, ("host_numa", 2))):
        o = cucore.ManagedMemoryResourceOptions(preferred_location=value, preferred_location_type=kind)
        assert o.preferred_location == read
    for kind, value in (("device", -1), ("device", None), ("host", 0), ("host_numa", -3), ("gpu", 0)):
        with pytest.raises(ValueError, match="preferred_location_type"):
            cucore.ManagedMemoryResourceOptions(preferred_location=value, preferred_location_type=kind)
    for bad, exc in (("gpu", ValueError), (("host_numa", -1), ValueError), (("host_numa", "1"), TypeError),
                     (1.0, TypeError), (True, TypeError), (-2, ValueError), (("numa", 1), ValueError)):
        with pytest.raises(exc, match="preferred_location"):
            cucore.ManagedMemoryResourceOptions(preferred_location=bad)


def test_managed_options_use_pool():
    o = cucore.ManagedMemoryResourceOptions()
    assert (o.use_pool, o.preferred_location, o.max_size, o.release_threshold) == (True, None, 0, 0)
    assert cucore.ManagedMemoryResourceOptions(max_size=1 << 20, release_threshold=7).use_pool
    for pool_only in ({"max_size": 1 << 20}, {"release_threshold": 1}):  # refused without a pool, not ignored
        with pytest.raises(ValueError, match="use_pool"):
            cucore.ManagedMemoryResourceOptions(use_pool=False, **pool_only)
    with pytest.raises(TypeError, match="use_pool"):
        cucore.ManagedMemoryResourceOptions(use_pool=1)
    from cucore.managed_memory import _managed_struct
    c = _managed_struct(cucore.ManagedMemoryResourceOptions(use_pool=False))
    assert (c.struct_size, c.use_pool, c.preferred_location.type, c.max_size, c.release_threshold) == (32, 0, 0, 0, 0)
    c = _managed_struct(cucore.ManagedMemoryResourceOptions(use_pool=True, preferred_location="host", max_size=5,
                                                           release_threshold=6))
    assert (c.use_pool, c.preferred_location.type, c.max_size, c.release_threshold) == (1, LOCATION_HOST, 5, 6)


def test_raw_create_refuses_pool_options_without_a_pool(lib, gpu):
    from cucore.managed_memory import ManagedOptionsC
    c = ManagedOptionsC()
    c.struct_size = ctypes.sizeof(c)
    out = ctypes.c_void_p(0x1234)
    for field, value in (("max_size", 1 << 20), ("release_threshold", 1), ("use_pool", 2)):
        c.use_pool, c.max_size, c.release_threshold = 0, 0, 0
        setattr(c, field, value)
        st = lib.function("cucore_managed_memory_resource_create")(gpu._h, ctypes.byref(c), ctypes.byref(out))
        assert st == cucore.Status.ERROR_INVALID_ARGUMENT, field
        assert out.value is None and field in cucore.last_error_message()


@pytest.mark.gpu
@pytest.mark.parametrize("use_pool", [False, True], ids=["cuMemAllocManaged", "pool"])
def test_managed_memory(gpu, stream, use_pool):
    base = _baseline()
    what = "a managed memory pool (CUDA 13 driver)" if use_pool else "managed memory"
    mr = _or_skip(lambda: cucore.ManagedMemoryResource({"use_pool": use_pool}, device=gpu), what)
    assert mr.kind == cucore.MemoryResourceKind.MANAGED and mr.device_id == gpu.device_id
    assert (mr.is_device_accessible, mr.is_host_accessible, mr.is_managed, mr.preferred_location) == \
        (True, True, True, None)
    assert mr.use_pool is use_pool and (mr.handle != 0) is use_pool
    b = mr.allocate(1 << 16, stream=stream)
    assert isinstance(b, cucore.ManagedBuffer) and b.is_managed and b.memory_resource is mr
    data = _check_round_trip(b, stream, gpu, seed=11)
    stream.sync()
    assert ctypes.string_at(b.handle, b.size) == data  # managed memory: the host reads it in place
    ctypes.memmove(b.handle, b"host write", 10)
    assert b.to_bytes(stream=stream)[:10] == b"host write"
    v = b.view(16, 32)
    assert isinstance(v, cucore.ManagedBuffer) and v.to_bytes(stream=stream) == data[16:48]
    copy = b.copy_to(stream=stream)  # allocated from the same resource
    assert isinstance(copy, cucore.ManagedBuffer) and copy.to_bytes(stream=stream)[10:] == data[10:]
    assert b.deallocation_stream == (stream if use_pool else None)  # a pool frees in stream order
    prefer_host = cucore.ManagedMemoryResource(
        cucore.ManagedMemoryResourceOptions(preferred_location="host", use_pool=use_pool), device=gpu)
    assert prefer_host.preferred_location == ("host", None)  # cuda.core's (type, id)
    prefer_dev = cucore.ManagedMemoryResource({"preferred_location": gpu, "use_pool": use_pool}, device=gpu)
    assert prefer_dev.preferred_location == ("device", gpu.device_id)
    prefer_host.allocate(4096, stream=stream).close()
    del b, v, copy, prefer_host, prefer_dev
    mr.close()
    stream.sync()
    assert _baseline() == base


@pytest.mark.gpu
def test_default_resource_is_the_drivers_managed_pool(gpu):
    mr = _or_skip(lambda: cucore.ManagedMemoryResource(device=gpu), "the current managed memory pool (CUDA 13)")
    assert mr.use_pool and mr.handle != 0 and not mr.is_handle_owned, "the driver's pool, not owned"
    assert cucore.ManagedMemoryResource(device=gpu).handle == mr.handle, "the one current pool"
    assert mr.preferred_location is None and mr.is_managed
    s = gpu.create_stream()
    with pytest.raises(cucore.InvalidArgumentError, match="stream"):
        mr.allocate(4096)  # stream-ordered: a stream is needed
    b = mr.allocate(4096, stream=s)
    b.fill(0x42, stream=s)
    s.sync()
    assert ctypes.string_at(b.handle, 4096) == b"\x42" * 4096
    b.close()
    mr.close()  # never destroys the driver's pool
    again = cucore.ManagedMemoryResource(device=gpu).allocate(64, stream=s)
    again.close()
    s.sync()


@pytest.mark.gpu
def test_use_pool_false_is_cuMemAllocManaged(gpu, managed):
    mr, s = managed
    assert mr.use_pool is False and mr.handle == 0  # no CUmemoryPool
    b = mr.allocate(4096)  # synchronous: no stream needed
    assert isinstance(b, cucore.ManagedBuffer) and b.deallocation_stream is None
    data = bytes(range(256)) * 16
    ctypes.memmove(b.handle, data, len(data))  # usable at once, from the host
    assert b.to_bytes(stream=s) == data
    on_stream = mr.allocate(4096, stream=s)  # a stream is accepted and not kept
    assert on_stream.deallocation_stream is None
    on_stream.fill(0x5A, stream=s)
    assert on_stream.to_bytes(stream=s) == b"\x5a" * 4096
    with pytest.raises(cucore.NotSupportedError, match="pool"):
        mr.pool_attribute(cucore.PoolAttribute.RELEASE_THRESHOLD)
    with pytest.raises(cucore.NotSupportedError, match="pool"):
        mr.attributes.release_threshold
    b.close()
    on_stream.close()


@pytest.mark.gpu
def test_preferred_location_is_advised_on_each_allocation(gpu):
    for where in (gpu, "host"):
        mr = cucore.ManagedMemoryResource({"preferred_location": where, "use_pool": False}, device=gpu)
        for _ in range(2):
            b = mr.allocate(1 << 16)
            assert b.preferred_location == where if where == "host" else b.preferred_location is gpu
            b.preferred_location = None  # still the buffer's to change
            assert b.preferred_location is None
            b.close()


@pytest.mark.gpu
def test_a_refused_advice_frees_the_allocation(gpu, fake_driver, monkeypatch):
    if not fake_driver:
        pytest.skip("needs the fake driver, which fails calls on demand (FAKE_CUDA_FAIL)")
    live = ctypes.CDLL(os.environ["CUCORE_CUDA_DRIVER_PATH"]).fake_cuda_live_allocations
    mr = cucore.ManagedMemoryResource({"preferred_location": "host", "use_pool": False}, device=gpu)
    before = live()
    monkeypatch.setenv("FAKE_CUDA_FAIL", "cuMemAdvise")
    with pytest.raises(cucore.CUDAError, match="cuMemAdvise"):
        mr.allocate(4096)
    assert live() == before, "the allocation was given back"
    monkeypatch.setenv("FAKE_CUDA_FAIL", "cuMemAllocManaged")
    with pytest.raises(cucore.CUDAError, match="cuMemAllocManaged"):
        mr.allocate(4096)
    assert live() == before
    monkeypatch.delenv("FAKE_CUDA_FAIL")
    b = mr.allocate(4096)
    assert live() == before + 1
    b.close()
    assert live() == before, "freed with cuMemFree"


@pytest.mark.gpu
def test_managed_pool_prefetches_and_may_refuse_advice(gpu):
    try:
        mr = cucore.ManagedMemoryResource(cucore.ManagedMemoryResourceOptions(use_pool=True), device=gpu)
    except cucore.NotSupportedError as e:
        pytest.skip(f"managed memory pools are not supported here (CUDA 13 driver): {e}")
    s = gpu.create_stream()
    assert mr.use_pool is True and mr.handle != 0
    with pytest.raises(cucore.InvalidArgumentError, match="stream"):
        mr.allocate(4096)  # stream-ordered: a stream is needed
    n = 1 << 20
    b = mr.allocate(n, stream=s)
    assert b.deallocation_stream == s
    data = bytes(range(256)) * (n // 256)
    b.copy_from(data, stream=s)
    b.prefetch(gpu, stream=s)
    s.sync()
    assert b.to_bytes(stream=s) == data
    b.prefetch("host", stream=s)
    s.sync()
    assert ctypes.string_at(b.handle, n) == data  # on the host now: read in place
    try:
        b.read_mostly = True
    except cucore.NotSupportedError as e:
        print(f"advice on managed-pool memory is not supported by this driver: {e}")
    else:
        assert b.read_mostly is True
        b.read_mostly = False
    assert b.to_bytes(stream=s) == data
    b.close()
    s.sync()


@pytest.mark.gpu
def test_read_mostly(gpu, managed):
    mr, s = managed
    b = mr.allocate(1 << 16, stream=s)
    assert b.read_mostly is False
    b.read_mostly = True
    assert b.read_mostly is True
    b.read_mostly = False
    assert b.read_mostly is False
    with pytest.raises(TypeError, match="bool"):
        b.read_mostly = 1


@pytest.mark.gpu
def test_preferred_location(gpu, managed):
    mr, s = managed
    b = mr.allocate(1 << 16, stream=s)
    assert b.preferred_location is None
    b.preferred_location = gpu
    assert b.preferred_location is gpu
    b.preferred_location = "host"
    assert b.preferred_location == "host"
    b.preferred_location = gpu.device_id  # an ordinal is a device
    assert b.preferred_location is gpu
    b.preferred_location = None
    assert b.preferred_location is None
    with pytest.raises(ValueError, match="preferred_location"):
        b.preferred_location = "gpu"


@pytest.mark.gpu
def test_accessed_by(gpu, managed):
    mr, s = managed
    b = mr.allocate(1 << 16, stream=s)
    acc = b.accessed_by
    assert set(acc) == set() and len(acc) == 0 and gpu not in acc
    acc.add(gpu)
    assert gpu in acc and gpu.device_id in acc and set(acc) == {gpu} and len(b.accessed_by) == 1
    assert "nonsense" not in acc and 10**6 not in acc
    acc.discard(gpu)
    assert gpu not in acc
    acc.update([gpu.device_id])
    assert set(acc) == {gpu}
    acc.clear()
    assert set(acc) == set()
    b.accessed_by = [gpu]
    assert set(b.accessed_by) == {gpu}
    b.accessed_by = []
    assert set(b.accessed_by) == set()
    acc.add("host")  # the host can be advised (but is not listed: libcucore asks per device)
    with pytest.raises(ValueError, match="accessed_by"):
        acc.add("everywhere")


@pytest.mark.gpu
def test_prefetch_round_trips_keep_the_data(gpu, managed):
    mr, s = managed
    n = 1 << 20
    b = mr.allocate(n, stream=s)
    assert b.last_prefetch_location is None
    data = bytes(range(256)) * (n // 256)
    b.copy_from(data, stream=s)
    b.prefetch(gpu, stream=s)
    s.sync()
    assert b.last_prefetch_location is gpu
    assert b.to_bytes(stream=s) == data
    b.fill(0x77, stream=s)  # written on the device side
    b.prefetch("host", stream=s)
    s.sync()
    assert b.last_prefetch_location == "host"
    assert ctypes.string_at(b.handle, n) == b"\x77" * n  # on the host now: read in place
    ctypes.memmove(b.handle, data, n)  # written by the host
    b.prefetch(gpu.device_id, stream=s)
    assert b.to_bytes(stream=s) == data
    with pytest.raises(ValueError, match="location"):
        b.prefetch("nowhere", stream=s)
    with pytest.raises(TypeError, match="stream"):
        b.prefetch(gpu, stream=None)


@pytest.mark.gpu
def test_discard(gpu, managed, fake_driver):
    mr, s = managed
    n = 1 << 16
    b = mr.allocate(n, stream=s)
    b.fill(0x12, stream=s)
    try:
        b.discard(stream=s)
    except cucore.NotSupportedError as e:
        pytest.skip(f"discard needs a CUDA 13 driver: {e}")
    s.sync()
    if fake_driver:
        assert b.to_bytes(stream=s) == b"\xdd" * n  # the fake marks discarded pages
    b.fill(0x34, stream=s)  # written again: defined again
    assert b.to_bytes(stream=s) == b"\x34" * n
    b.discard_prefetch(gpu, stream=s)
    s.sync()
    assert b.last_prefetch_location is gpu
    b.fill(0x56, stream=s)
    assert b.to_bytes(stream=s) == b"\x56" * n
    b.discard_prefetch("host", stream=s)
    s.sync()
    assert b.last_prefetch_location == "host"


@pytest.mark.gpu
def test_views_and_empty_buffers(gpu, managed):
    mr, s = managed
    b = mr.allocate(1 << 16, stream=s)
    v = b.view(4096, 4096)
    assert isinstance(v, cucore.ManagedBuffer)
    v.prefetch(gpu, stream=s)
    v.read_mostly = True
    empty = mr.allocate(0, stream=s)
    assert isinstance(empty, cucore.ManagedBuffer) and empty.read_mostly is False
    assert empty.preferred_location is None and empty.last_prefetch_location is None
    empty.prefetch(gpu, stream=s)  # nothing to move


@pytest.mark.gpu
def test_managed_calls_on_other_memory_are_refused(gpu, managed):
    mr, s = managed
    b = mr.allocate(4096, stream=s)
    plain = gpu.allocate(4096, stream=s)
    not_managed = cucore.ManagedBuffer.prefetch  # the methods check the memory, not the Python type
    with pytest.raises(cucore.InvalidArgumentError, match="not managed"):
        not_managed(plain, gpu, stream=s)
    b.close()
    with pytest.raises(cucore.InvalidHandleError, match="closed"):
        b.read_mostly = True
    with pytest.raises(cucore.InvalidHandleError, match="closed"):
        b.prefetch(gpu, stream=s)
