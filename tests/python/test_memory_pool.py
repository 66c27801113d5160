"""Pinned, managed and virtual memory resources, peer access, buffer accessibility and deallocation streams
(include/cucore/memory.h; bindings/python/cucore/memory_resources.py, memory_peer.py).

Without a GPU: the options dataclasses, their C structs against the header, argument errors. With a GPU (or
the fake driver of test_fake_driver.py): every kind allocates, fills, copies and frees with the bytes read
back (host-accessible memory also straight through its address), peer access round trips, virtual buffers grow
keeping their contents. Features a driver lacks (managed pools before CUDA 13, ...) skip with the reason."""
import ctypes
import gc
import random
import re

import pytest

import cucore
from cucore import _abi, _lib
from conftest import REPO

MEMORY_H = REPO / "include" / "cucore" / "memory.h"


@pytest.fixture
def stream(gpu):
    s = gpu.create_stream()
    yield s
    s.sync()


def _baseline():
    gc.collect()
    return (cucore.live_object_count(cucore.ObjectType.BUFFER),
            cucore.live_object_count(cucore.ObjectType.MEMORY_RESOURCE))


def _random_bytes(n, seed):
    return random.Random(seed).randbytes(n)


def _or_skip(make, what):
    """make(), or a skip naming what this driver or device lacks."""
    try:
        return make()
    except cucore.NotSupportedError as e:
        pytest.skip(f"{what} is not supported here: {e}")


# ============================================================================================================
# No GPU: options, structs, argument errors
# ============================================================================================================

def _header_struct_fields(name):
    text = re.sub(r"/\*.*?\*/", " ", MEMORY_H.read_text(), flags=re.S)
    body = re.search(rf"typedef struct {name[:-2]} \{{(.*?)\}} {name};", text, re.S).group(1)
    return [" ".join(d.split()).split()[-1] for d in body.split(";") if d.strip()]


@pytest.mark.parametrize("name, size", [("cucore_pinned_memory_resource_options_t", 32),
                                        ("cucore_managed_memory_resource_options_t", 32),
                                        ("cucore_virtual_memory_resource_options_t", 40),
                                        ("cucore_location_t", 8)])
def test_option_structs_match_the_header(name, size):
    if not MEMORY_H.is_file():
        pytest.skip("not running from a checkout")
    assert [f for f, _ in _abi.STRUCTS[name]] == _header_struct_fields(name)
    assert ctypes.sizeof(_lib.STRUCTS[name]) == size
    text = MEMORY_H.read_text()
    macro = name[:-2].upper() + "_INIT"
    if macro in text:  # the INIT macro lists every field
        init = re.search(rf"#define {macro}\s*\\\s*\{{(.*?)\}}\s*\n", text, re.S).group(1)
        assert init.count(",") - init.count("{") == len(_abi.STRUCTS[name]) - 1, init


def test_every_resource_name_is_exported():
    for name in ("PinnedMemoryResource", "PinnedMemoryResourceOptions", "ManagedMemoryResource",
                 "ManagedMemoryResourceOptions", "ManagedBuffer", "VirtualMemoryResource",
                 "VirtualMemoryResourceOptions", "PeerAccessSet", "MemoryRegion", "copy_3d"):
        assert name in cucore.__all__ and hasattr(cucore, name), name
    kinds = {k.name: int(k) for k in cucore.MemoryResourceKind}
    assert kinds == {"DEVICE": 1, "LEGACY_PINNED": 2, "PINNED": 3, "MANAGED": 4, "VIRTUAL": 5, "USER": 6,
                     "IMPORTED": 7, "GRAPHICS": 8}


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
    from cucore.virtual_memory import _pinned_struct
    c = _pinned_struct(cucore.PinnedMemoryResourceOptions())
    assert c.struct_size == ctypes.sizeof(c) == 32
    assert (c.ipc_enabled, c.max_size, c.release_threshold, c.numa_id, c.use_numa_id) == (0, 0, 0, 0, 0)
    c = _pinned_struct(cucore.PinnedMemoryResourceOptions(numa_id=0))
    assert (c.numa_id, c.use_numa_id) == (0, 1)
    c = _pinned_struct(cucore.PinnedMemoryResourceOptions(ipc_enabled=True, max_size=5, release_threshold=6,
                                                          numa_id=3))
    assert (c.ipc_enabled, c.max_size, c.release_threshold, c.numa_id, c.use_numa_id) == (1, 5, 6, 3, 1)


def test_virtual_options_struct():
    from cucore.virtual_memory import _virtual_struct
    c = _virtual_struct(cucore.VirtualMemoryResourceOptions())
    assert c.struct_size == ctypes.sizeof(c) == 40
    assert (c.location_type, c.location_id, c.minimum_granularity, c.posix_fd_shareable, c.reserve_size,
            c.self_access, c.reserved0, c.reserved1) == (1, 0, 0, 0, 0, 3, 0, 0)  # DEVICE, READ_WRITE
    c = _virtual_struct(cucore.VirtualMemoryResourceOptions(
        location_type="host_numa", location_id=2, granularity="minimum", handle_type="posix_fd",
        reserve_size=1 << 30, self_access="r"))
    assert (c.location_type, c.location_id, c.minimum_granularity, c.posix_fd_shareable, c.reserve_size,
            c.self_access) == (3, 2, 1, 1, 1 << 30, 1)


def test_managed_options():
    assert cucore.ManagedMemoryResourceOptions().preferred_location is None
    assert cucore.ManagedMemoryResourceOptions().use_pool is False  # cuMemAllocManaged (see test_managed.py)
    for good in ("host", 0, ("host_numa", 1), -1):
        assert cucore.ManagedMemoryResourceOptions(preferred_location=good).preferred_location == good
    for bad, exc in (("gpu", ValueError), (("host_numa", -1), ValueError), (("host_numa", "1"), TypeError),
                     (1.0, TypeError), (True, TypeError), (-2, ValueError), (("numa", 1), ValueError)):
        with pytest.raises(exc, match="preferred_location"):
            cucore.ManagedMemoryResourceOptions(preferred_location=bad)


def test_virtual_options():
    o = cucore.VirtualMemoryResourceOptions()
    assert (o.location_type, o.location_id, o.granularity, o.handle_type, o.reserve_size, o.self_access) == \
        ("device", 0, "recommended", None, 0, "rw")
    for bad, words in (({"location_type": "gpu"}, "location_type"), ({"granularity": "huge"}, "granularity"),
                       ({"handle_type": "fabric"}, "handle_type"), ({"self_access": "w"}, "self_access"),
                       ({"self_access": None}, "self_access"), ({"reserve_size": -1}, "reserve_size"),
                       ({"location_id": -1}, "location_id")):
        with pytest.raises(ValueError, match=words):
            cucore.VirtualMemoryResourceOptions(**bad)
    with pytest.raises(TypeError, match="location_id"):
        cucore.VirtualMemoryResourceOptions(location_id="0")
    with pytest.raises(TypeError, match="reserve_size"):
        cucore.VirtualMemoryResourceOptions(reserve_size=1.0)


def test_constructor_argument_errors(lib):
    with pytest.raises(TypeError, match="options must be PinnedMemoryResourceOptions"):
        cucore.PinnedMemoryResource(0, cucore.VirtualMemoryResourceOptions())
    with pytest.raises(TypeError, match="bogus"):
        cucore.PinnedMemoryResource(0, {"bogus": 1})
    with pytest.raises(TypeError, match="needs a device"):
        cucore.VirtualMemoryResource(None)
    with pytest.raises(TypeError, match="needs a device"):
        cucore.VirtualMemoryResource(cucore.VirtualMemoryResourceOptions())
    with pytest.raises(TypeError, match="device must be a Device, a device ordinal or None, not str"):
        cucore.ManagedMemoryResource("0")


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


def test_raw_create_functions_check_their_arguments(lib):
    f = lib.function
    out = ctypes.c_void_p(0x1234)
    for name in ("cucore_pinned_memory_resource_create", "cucore_managed_memory_resource_create",
                 "cucore_virtual_memory_resource_create"):
        st = f(name)(None, None, ctypes.byref(out))
        assert st in (cucore.Status.ERROR_INVALID_HANDLE, cucore.Status.ERROR_INVALID_ARGUMENT), name
        assert out.value is None and name in cucore.last_error_message()
    assert f("cucore_user_memory_resource_create")(None, ctypes.byref(out)) == cucore.Status.ERROR_INVALID_ARGUMENT
    c = _lib.STRUCTS["cucore_memory_resource_callbacks_t"]()
    c.struct_size = ctypes.sizeof(c)
    assert f("cucore_user_memory_resource_create")(c, ctypes.byref(out)) == cucore.Status.ERROR_INVALID_ARGUMENT
    assert "allocate" in cucore.last_error_message() and out.value is None


def test_accessibility_and_deallocation_stream_of_foreign_memory(lib):
    host = ctypes.create_string_buffer(32)
    b = cucore.Buffer.from_handle(ctypes.addressof(host), 32)
    assert (b.is_device_accessible, b.is_host_accessible, b.is_managed) == (False, True, False)
    assert b.deallocation_stream is None
    with pytest.raises(cucore.InvalidArgumentError):
        b.grow(64)  # not virtual memory
    b.close()
    assert b.deallocation_stream is None
    with pytest.raises(cucore.InvalidHandleError, match="closed"):
        b.is_host_accessible


# ============================================================================================================
# GPU (or the fake driver)
# ============================================================================================================

def _check_round_trip(buf, stream, gpu, seed):
    """Random bytes in, a fill, a device copy and back out: every step read back."""
    n = buf.size
    data = _random_bytes(n, seed)
    buf.copy_from(data, stream=stream)
    assert buf.to_bytes(stream=stream) == data
    other = gpu.allocate(n, stream=stream)
    other.copy_from(buf, stream=stream)
    assert other.to_bytes(stream=stream) == data
    buf.fill(0x5A, stream=stream)
    assert buf.to_bytes(stream=stream) == b"\x5a" * n
    buf.copy_from(other, stream=stream)
    assert buf.to_bytes(stream=stream) == data
    other.close(stream)
    return data


@pytest.mark.gpu
def test_pinned_pool(gpu, stream):
    base = _baseline()
    mr = _or_skip(lambda: cucore.PinnedMemoryResource(gpu), "a pinned (host) memory pool")
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
    mr = _or_skip(lambda: cucore.PinnedMemoryResource(gpu, {"numa_id": 0}), "a pinned pool on NUMA node 0")
    assert mr.numa_id == 0
    b = mr.allocate(8192, stream=stream)
    _check_round_trip(b, stream, gpu, seed=7)


@pytest.mark.gpu
@pytest.mark.parametrize("use_pool", [False, True], ids=["cuMemAllocManaged", "pool"])
def test_managed_memory(gpu, stream, use_pool):
    base = _baseline()
    what = "a managed memory pool (CUDA 13 driver)" if use_pool else "managed memory"
    mr = _or_skip(lambda: cucore.ManagedMemoryResource(gpu, {"use_pool": use_pool}), what)
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
        gpu, cucore.ManagedMemoryResourceOptions(preferred_location="host", use_pool=use_pool))
    assert prefer_host.preferred_location == "host"
    prefer_dev = cucore.ManagedMemoryResource(gpu, {"preferred_location": gpu, "use_pool": use_pool})
    assert prefer_dev.preferred_location is gpu
    prefer_host.allocate(4096, stream=stream).close()
    del b, v, copy, prefer_host, prefer_dev
    mr.close()
    stream.sync()
    assert _baseline() == base


@pytest.mark.gpu
def test_virtual_memory_resource(gpu, stream):
    base = _baseline()
    mr = _or_skip(lambda: cucore.VirtualMemoryResource(gpu), "virtual memory management")
    assert (mr.kind, mr.device_id, mr.is_device_accessible, mr.is_managed) == \
        (cucore.MemoryResourceKind.VIRTUAL, gpu.device_id, True, False)
    b = mr.allocate(100_000)  # synchronous: no stream; the size is kept, the mapping rounded up
    assert b.size == 100_000 and b.handle != 0 and b.memory_resource is mr
    assert b.deallocation_stream is None and not b.is_managed
    _check_round_trip(b, stream, gpu, seed=3)
    with_stream = mr.allocate(4096, stream=stream)  # a stream is accepted and unused
    assert with_stream.size == 4096
    with_stream.close()
    b.close()
    mr.close()
    assert _baseline() == base


@pytest.mark.gpu
@pytest.mark.parametrize("reserve", [0, 64 << 20], ids=["remap", "in-place"])
def test_virtual_buffers_grow_keeping_their_contents(gpu, stream, reserve):
    mr = _or_skip(lambda: cucore.VirtualMemoryResource(gpu, cucore.VirtualMemoryResourceOptions(
        reserve_size=reserve, granularity="minimum")), "virtual memory management")
    n = 3 << 20
    b = mr.allocate(n)
    data = _random_bytes(n, seed=21)
    b.copy_from(data, stream=stream)
    stream.sync()
    address = b.handle
    assert mr.modify_allocation(b, 2 * n) is b
    assert b.size == 2 * n
    if reserve:
        assert b.handle == address, "the reservation had room: the buffer grows in place"
    assert b.to_bytes(stream=stream)[:n] == data
    b.fill(0x11, stream=stream)  # the new part is usable memory too
    tail = b.view(n, n)
    assert tail.to_bytes(stream=stream) == b"\x11" * n
    with pytest.raises(cucore.InvalidStateError):
        b.grow(4 * n)  # not while views exist
    del tail
    gc.collect()
    assert b.grow(n).size == 2 * n  # not above the size: nothing changes
    b.grow(5 * n)
    assert b.size == 5 * n and b.to_bytes(stream=stream)[:2 * n] == b"\x11" * (2 * n)
    other = gpu.allocate(16, stream=stream)
    with pytest.raises(ValueError, match="not allocated from this VirtualMemoryResource"):
        mr.modify_allocation(other, 32)
    with pytest.raises(cucore.InvalidArgumentError):
        other.grow(32)  # a pool buffer cannot grow
    with pytest.raises(TypeError):
        mr.modify_allocation(b"not a buffer", 32)
    with pytest.raises(ValueError):
        b.grow(-1)
    b.close()
    with pytest.raises(cucore.InvalidHandleError):
        b.grow(10 * n)


@pytest.mark.gpu
def test_virtual_memory_read_only_self_access(gpu, stream):
    mr = _or_skip(lambda: cucore.VirtualMemoryResource(gpu, {"self_access": "r"}), "virtual memory management")
    assert mr.peer_access(gpu) == "r"
    b = mr.allocate(4096)
    assert b.size == 4096
    b.close()


@pytest.mark.gpu
def test_device_pool_ipc_option(gpu, stream):
    mr = _or_skip(lambda: cucore.DeviceMemoryResource(gpu, cucore.DeviceMemoryResourceOptions(ipc_enabled=True)),
                  "an IPC-enabled device pool")
    assert mr.is_ipc_enabled is True
    assert cucore.DeviceMemoryResource(gpu, {}).is_ipc_enabled is False
    b = mr.allocate(4096, stream=stream)
    _check_round_trip(b, stream, gpu, seed=5)


@pytest.mark.gpu
def test_deallocation_stream(gpu, stream):
    b = gpu.allocate(64, stream=stream)
    assert b.deallocation_stream == stream and b.deallocation_stream is not stream  # its own reference
    other = gpu.create_stream()
    b.deallocation_stream = other
    assert b.deallocation_stream == other
    b.close()
    assert b.deallocation_stream is None
    pinned = cucore.LegacyPinnedMemoryResource(gpu).allocate(64)
    assert pinned.deallocation_stream is None  # synchronous memory


@pytest.mark.gpu
def test_resources_keep_identity_through_buffers(gpu, stream):
    for make in (lambda: cucore.PinnedMemoryResource(gpu), lambda: cucore.VirtualMemoryResource(gpu)):
        mr = _or_skip(make, "this kind of resource")
        b = mr.allocate(256, stream=stream)
        v = b.view(0, 16)
        assert v.memory_resource is mr and type(v.memory_resource) is type(mr)
        b.close()


def _peer_resources(gpu):
    out = [cucore.DeviceMemoryResource(gpu, cucore.DeviceMemoryResourceOptions())]
    for make in (lambda: cucore.PinnedMemoryResource(gpu), lambda: cucore.VirtualMemoryResource(gpu)):
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
