"""Memory pools: device and pinned pools, their options, pool attributes, trim and peer access
(include/cucore/memory_pool.h; bindings/python/cucore/memory_pool.py).

Without a GPU: the options dataclasses, their C structs against the header, argument errors. With a GPU (or
the fake driver of test_fake_driver.py): every pool allocates, fills, copies and frees with the bytes read
back (host-accessible memory also straight through its address), attributes and trim, peer access round
trips. Features a driver lacks skip with the reason."""
import ctypes
import re

import pytest

import cucore
from cucore import Status, _abi, _abi_types
from conftest import (
    REPO, MemoryHeaders, check_round_trip as _check_round_trip, memory_baseline as _baseline, or_skip as _or_skip,
)

MEMORY_H = MemoryHeaders(REPO / "include" / "cucore")  # the memory headers, read as one text


@pytest.fixture
def stream(gpu):
    s = gpu.create_stream()
    yield s
    s.sync()


# ============================================================================================================
# No GPU: options, structs, argument errors
# ============================================================================================================

def test_pinned_options():
    o = cucore.PinnedMemoryResourceOptions()
    assert (o.ipc_enabled, o.max_size, o.release_threshold, o.numa_id) == (False, 0, 0, None)
    assert cucore.PinnedMemoryResourceOptions(numa_id=1, max_size=1 << 30).numa_id == 1
    for bad, exc, words in (({"numa_id": -1}, ValueError, "numa_id"), ({"numa_id": "0"}, TypeError, "numa_id"),
                            ({"numa_id": True}, TypeError, "numa_id"), ({"ipc_enabled": 1}, TypeError, "bool"),
                            ({"max_size": -1}, ValueError, "max_size"), ({"release_threshold": 1.5}, TypeError, "int")):
        with pytest.raises(exc, match=words):
            cucore.PinnedMemoryResourceOptions(**bad)


def test_pinned_options_struct():
    # All zeros but struct_size is the default (any host memory); a NUMA node, 0 included, sets use_numa_id.
    from cucore.memory_pool import _pinned_struct
    c = _pinned_struct(cucore.PinnedMemoryResourceOptions())
    assert c.struct_size == ctypes.sizeof(c) == 32
    assert (c.ipc_enabled, c.max_size, c.release_threshold, c.numa_id, c.use_numa_id) == (0, 0, 0, 0, 0)
    c = _pinned_struct(cucore.PinnedMemoryResourceOptions(numa_id=0))
    assert (c.numa_id, c.use_numa_id) == (0, 1)
    c = _pinned_struct(cucore.PinnedMemoryResourceOptions(ipc_enabled=True, max_size=5, release_threshold=6,
                                                          numa_id=3))
    assert (c.ipc_enabled, c.max_size, c.release_threshold, c.numa_id, c.use_numa_id) == (1, 5, 6, 3, 1)


def test_peer_access_values():
    from cucore.memory_pool import access_value, ordinal_of
    assert [access_value(a) for a in ("rw", "r", None, "none")] == [3, 1, 0, 0]
    for bad in ("w", "RW", 3, True):
        with pytest.raises(ValueError, match="'rw', 'r' or None"):
            access_value(bad)
    assert ordinal_of(3) == 3
    for bad in ("1", 1.0, True, None):
        with pytest.raises(TypeError, match="device"):
            ordinal_of(bad)


def test_options_struct_matches_the_header():
    from cucore import _lib
    text = MEMORY_H.read_text()
    body = re.search(r"typedef struct cucore_device_memory_resource_options \{(.*?)\}", text, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", " ", body, flags=re.S)
    fields = re.findall(r"(\w+)\s+(\w+);", body)
    assert tuple((name, ctype) for ctype, name in fields) == _abi_types.STRUCTS["cucore_device_memory_resource_options_t"]
    C = _lib.DeviceMemoryResourceOptionsC
    assert ctypes.sizeof(C) == 32
    assert (C.max_size.offset, C.release_threshold.offset, C.ipc_enabled.offset) == (8, 16, 24)
    init = re.search(r"#define CUCORE_DEVICE_MEMORY_RESOURCE_OPTIONS_INIT\s*\\\s*\{(.*?)\}", text, re.S).group(1)
    assert init.count(",") == len(fields) - 1  # the INIT macro lists every field


def test_options_validation():
    from cucore.memory_pool import _pool_options_struct
    o = cucore.DeviceMemoryResourceOptions()
    assert (o.max_size, o.release_threshold, o.ipc_enabled) == (0, 0, False)
    c = _pool_options_struct(cucore.DeviceMemoryResourceOptions(max_size=1 << 30, release_threshold=2**64 - 1))
    assert (c.struct_size, c.reserved0, c.max_size, c.release_threshold, c.ipc_enabled, c.reserved1) == \
        (32, 0, 1 << 30, 2**64 - 1, 0, 0)
    c = _pool_options_struct({"release_threshold": 5, "ipc_enabled": True})
    assert (c.max_size, c.release_threshold, c.ipc_enabled) == (0, 5, 1)
    for bad, exc in (({"max_size": -1}, ValueError), ({"max_size": 2**64}, ValueError),
                     ({"max_size": 1.0}, TypeError), ({"release_threshold": True}, TypeError),
                     ({"release_threshold": "1"}, TypeError), ({"ipc_enabled": 1}, TypeError)):
        with pytest.raises(exc):
            cucore.DeviceMemoryResourceOptions(**bad)
    with pytest.raises(TypeError):
        _pool_options_struct(cucore.StreamOptions())
    with pytest.raises(TypeError):
        _pool_options_struct({"bogus": 1})


# ============================================================================================================
# GPU (or the fake driver)
# ============================================================================================================

@pytest.mark.gpu
def test_pinned_pool(gpu, stream):
    base = _baseline()
    mr = _or_skip(lambda: cucore.PinnedMemoryResource({}, device=gpu), "a pinned (host) memory pool")
    assert isinstance(mr, cucore.PinnedMemoryResource) and mr.kind == cucore.MemoryResourceKind.PINNED
    assert (mr.device_id, mr.is_device_accessible, mr.is_host_accessible, mr.is_managed, mr.is_ipc_enabled) == \
        (-1, True, True, False, False)
    assert mr.handle != 0 and mr.numa_id is None and "PinnedMemoryResource of host" in repr(mr)
    bufs = [mr.allocate(n, stream=stream) for n in (1, 4096, 1 << 20)]
    for i, b in enumerate(bufs):
        assert (b.device_id, b.is_host_accessible, b.is_device_accessible, b.is_managed) == (-1, True, True, False)
        assert b.memory_resource is mr and b.deallocation_stream == stream
        data = _check_round_trip(b, stream, gpu, seed=i)
        stream.sync()
        assert ctypes.string_at(b.handle, b.size) == data  # page-locked host memory: readable at its address
    ctypes.memmove(bufs[1].handle, b"written by the host", 19)
    assert bufs[1].to_bytes(stream=stream)[:19] == b"written by the host"
    for b in bufs:
        b.close()
    # the options as cuda.core takes them too: PinnedMemoryResource(options)
    capped = cucore.PinnedMemoryResource(cucore.PinnedMemoryResourceOptions(max_size=64 << 20))
    assert capped.kind == cucore.MemoryResourceKind.PINNED and capped._home == cucore.Device().device_id
    capped.allocate(128, stream=stream).close()
    del bufs, b, capped
    mr.close()
    stream.sync()
    assert _baseline() == base


@pytest.mark.gpu
def test_pinned_pool_on_a_numa_node(gpu, stream):
    mr = _or_skip(lambda: cucore.PinnedMemoryResource({"numa_id": 0}, device=gpu), "a pinned pool on NUMA node 0")
    assert mr.numa_id == 0
    b = mr.allocate(8192, stream=stream)
    _check_round_trip(b, stream, gpu, seed=7)


@pytest.mark.gpu
def test_device_pool_ipc_option(gpu, stream):
    mr = _or_skip(lambda: cucore.DeviceMemoryResource(gpu, cucore.DeviceMemoryResourceOptions(ipc_enabled=True)),
                  "an IPC-enabled device pool")
    assert mr.is_ipc_enabled is True
    assert cucore.DeviceMemoryResource(gpu, {}).is_ipc_enabled is False
    b = mr.allocate(4096, stream=stream)
    _check_round_trip(b, stream, gpu, seed=5)


def _peer_resources(gpu):
    out = [cucore.DeviceMemoryResource(gpu, cucore.DeviceMemoryResourceOptions())]
    for make in (lambda: cucore.PinnedMemoryResource({}, device=gpu), lambda: cucore.VirtualMemoryResource(gpu)):
        try:
            out.append(make())
        except cucore.NotSupportedError:
            pass
    return out


@pytest.mark.gpu
def test_peer_access_sets(gpu, stream):
    count = cucore.Device.count()
    for mr in _peer_resources(gpu):
        peers = mr.peer_accessible_by
        assert isinstance(peers, cucore.PeerAccessSet) and set(peers) == set() and len(peers) == 0
        assert gpu.device_id not in peers and mr.peer_access(gpu) in ("rw", "r")
        peers.add(gpu)  # its own device: already there, never listed
        peers.discard(gpu.device_id)  # ... and never revoked
        assert mr.peer_access(gpu) == "rw" and set(peers) == set()
        assert "not a device" not in peers
        if count < 2:
            with pytest.raises(cucore.CUDAError):
                peers.add(gpu.device_id + 1)  # no such device
            continue
        other = 1 if gpu.device_id == 0 else 0
        if not cucore.Device(other).can_access_peer(gpu):
            with pytest.raises(cucore.NotSupportedError):
                peers.add(other)
            continue
        peers.add(other)
        assert other in peers and cucore.Device(other) in peers and set(peers) == {other}
        assert mr.peer_access(other) == "rw" and "PeerAccessSet([" in repr(peers)
        peers.discard(other)
        assert other not in peers and mr.peer_access(other) is None
        peers.update([other])
        assert set(peers) == {other}
        peers.clear()
        assert set(peers) == set()
        mr.peer_accessible_by = [other]
        assert set(mr.peer_accessible_by) == {other}
        mr.peer_accessible_by = []
        assert set(mr.peer_accessible_by) == set()
        with pytest.raises(ValueError, match="'rw', 'r' or None"):
            mr.set_peer_access(other, "write")


@pytest.mark.gpu
def test_peer_access_grants_work_across_devices(gpu, stream):
    if cucore.Device.count() < 2:
        pytest.skip("needs two devices")
    other = cucore.Device(1)
    if not other.can_access_peer(gpu):
        pytest.skip("device 1 cannot access device 0's memory")
    mr = cucore.DeviceMemoryResource(gpu, cucore.DeviceMemoryResourceOptions())
    mr.peer_accessible_by.add(1)
    src = mr.allocate(4096, stream=stream)
    src.fill(0x42, stream=stream)
    stream.sync()
    other_stream = other.create_stream()
    dst = other.allocate(4096, stream=other_stream)
    dst.copy_from(src, stream=other_stream)  # between devices: cuMemcpyPeerAsync
    assert dst.to_bytes(stream=other_stream) == b"\x42" * 4096
    gpu.set_current()


@pytest.mark.gpu
def test_peer_access_needs_a_pool_or_virtual_memory(gpu, lib):
    legacy = cucore.LegacyPinnedMemoryResource(gpu)
    assert not hasattr(legacy, "peer_accessible_by")  # only the kinds that have it offer it
    access = ctypes.c_int(7)
    assert lib.function("cucore_memory_resource_peer_access")(legacy._h, gpu._h, ctypes.byref(access)) == \
        cucore.Status.ERROR_NOT_SUPPORTED
    assert lib.function("cucore_memory_resource_set_peer_access")(legacy._h, gpu._h, 3) == \
        cucore.Status.ERROR_NOT_SUPPORTED
    pool = cucore.DeviceMemoryResource(gpu, {})
    with pytest.raises(cucore.InvalidArgumentError, match="read-write access or none"):
        pool.set_peer_access(gpu, "r")  # pools: read-write or nothing


@pytest.mark.gpu
def test_new_pool(gpu, stream):
    base = _baseline(gpu)
    pool = cucore.DeviceMemoryResource(gpu.device_id, cucore.DeviceMemoryResourceOptions(release_threshold=1 << 20))
    assert pool.kind == cucore.MemoryResourceKind.DEVICE and pool.device_id == gpu.device_id
    assert pool != gpu.memory_resource and pool == pool
    bufs = [pool.allocate(n, stream=stream) for n in (1, 100, 4096, 1 << 20)]
    for i, b in enumerate(bufs):
        b.fill(i + 1, stream=stream)
    for i, b in enumerate(bufs):
        assert b.to_bytes(stream=stream) == bytes([i + 1]) * b.size
        assert b.memory_resource is pool
    pool2 = cucore.DeviceMemoryResource(gpu.device_id, {"max_size": 0})
    pool2.allocate(64, stream=stream).close()
    # the pool lives while buffers from it do
    b = bufs.pop()
    del bufs
    pool.close()
    assert b.to_bytes(stream=stream)[:4] == b"\x04" * 4
    with pytest.raises(cucore.InvalidHandleError, match="closed"):
        pool.allocate(8, stream=stream)
    with pytest.raises(cucore.InvalidHandleError, match="closed"):
        pool.kind
    assert b.memory_resource.kind == cucore.MemoryResourceKind.DEVICE  # the buffer's own reference
    del b, pool2
    assert _baseline() == base


@pytest.mark.gpu
def test_pool_max_size(gpu, stream, fake_driver):
    pool = cucore.DeviceMemoryResource(gpu.device_id, cucore.DeviceMemoryResourceOptions(max_size=32 << 20))
    small = pool.allocate(1 << 20, stream=stream)
    # the fake driver says OUT_OF_MEMORY; the documentation does not name the real driver's error
    with pytest.raises(cucore.OutOfMemoryError if fake_driver else (cucore.OutOfMemoryError, cucore.DriverError)):
        pool.allocate(256 << 20, stream=stream)
    small.fill(3, stream=stream)
    assert small.to_bytes(stream=stream) == b"\x03" * (1 << 20)


@pytest.mark.gpu
def test_bad_pool_options_through_the_raw_function(gpu, lib):
    f = lib.function("cucore_device_memory_resource_create")
    out = ctypes.c_void_p(0x1234)
    opts = lib.DeviceMemoryResourceOptionsC(ctypes.sizeof(lib.DeviceMemoryResourceOptionsC), 1, 0, 0)
    assert f(gpu._h, opts, ctypes.byref(out)) == Status.ERROR_INVALID_ARGUMENT
    assert out.value is None and "reserved0" in cucore.last_error_message()
    opts = lib.DeviceMemoryResourceOptionsC(0, 0, 0, 0)
    assert f(gpu._h, opts, ctypes.byref(out)) == Status.ERROR_INVALID_ARGUMENT
    assert "struct_size" in cucore.last_error_message()
    # an older caller's smaller struct reads only the fields it has
    opts = lib.DeviceMemoryResourceOptionsC(16, 0, 1 << 30, 12345)
    assert f(gpu._h, opts, ctypes.byref(out)) == 0 and out.value
    assert lib.function("cucore_memory_resource_release")(out) == 0
    assert f(gpu._h, None, ctypes.byref(out)) == 0 and out.value  # NULL options: all defaults
    assert lib.function("cucore_memory_resource_release")(out) == 0


def test_pool_attributes_and_trim(gpu, stream):
    base = _baseline(gpu)
    mr = cucore.DeviceMemoryResource(gpu.device_id, cucore.DeviceMemoryResourceOptions())
    attrs = mr.attributes
    assert attrs.used_mem_current == 0
    buf = mr.allocate(1 << 20, stream=stream)
    assert attrs.used_mem_current >= 1 << 20
    assert attrs.reserved_mem_current >= attrs.used_mem_current
    assert attrs.used_mem_high >= 1 << 20
    buf.close(stream=stream)
    stream.sync()
    assert attrs.used_mem_current == 0
    attrs.used_mem_high = 0
    assert attrs.used_mem_high == 0
    attrs.release_threshold = 1 << 21
    assert attrs.release_threshold == 1 << 21
    attrs.reuse_allow_opportunistic = False
    assert attrs.reuse_allow_opportunistic is False
    mr.trim(0)
    with pytest.raises(cucore.InvalidArgumentError):
        mr.set_pool_attribute(cucore.PoolAttribute.USED_MEM_CURRENT, 0)  # read-only
    with pytest.raises(cucore.InvalidArgumentError):
        attrs.used_mem_high = 5  # reset to 0 only
    pinned = cucore.LegacyPinnedMemoryResource(gpu.device_id)
    with pytest.raises(cucore.NotSupportedError):
        pinned.attributes.used_mem_current
    with pytest.raises(cucore.NotSupportedError):
        pinned.trim()
    pinned.close()
    mr.close()
    assert _baseline(gpu) == base
