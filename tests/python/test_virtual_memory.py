"""Virtual memory resources (include/cucore/virtual_memory.h; bindings/python/cucore/virtual_memory.py).

Without a GPU: the options dataclass and its C struct. With a GPU (or the fake driver of test_fake_driver.py):
virtual buffers allocate, fill, copy and free with the bytes read back, and grow keeping their contents.
Features a driver lacks skip with the reason."""
import ctypes
import gc

import pytest

import cucore
from conftest import (
    check_round_trip as _check_round_trip, memory_baseline as _baseline, or_skip as _or_skip,
    random_bytes as _random_bytes,
)


@pytest.fixture
def stream(gpu):
    s = gpu.create_stream()
    yield s
    s.sync()


# ============================================================================================================
# No GPU: options, structs
# ============================================================================================================


def test_virtual_options_struct():
    from cucore.virtual_memory import _virtual_struct
    c = _virtual_struct(cucore.VirtualMemoryResourceOptions())
    assert c.struct_size == ctypes.sizeof(c) == 64
    assert (c.location_type, c.location_id, c.minimum_granularity, c.posix_fd_shareable, c.reserve_size,
            c.self_access, c.reserved0, c.reserved1) == (1, 0, 0, 1, 0, 3, 0, 0)  # DEVICE, POSIX fd, READ_WRITE
    assert (c.gpu_direct_rdma, c.fabric_shareable, c.address_hint, c.address_alignment) == (0, 0, 0, 0)
    c = _virtual_struct(cucore.VirtualMemoryResourceOptions(handle_type="fabric", gpu_direct_rdma=True,
                                                            addr_hint=1 << 40, addr_align=1 << 30))
    assert (c.posix_fd_shareable, c.fabric_shareable, c.gpu_direct_rdma, c.address_hint, c.address_alignment) == \
        (0, 1, 1, 1 << 40, 1 << 30)
    for refused in ({"allocation_type": "managed"}, {"handle_type": "win32_kmt"}):
        with pytest.raises(cucore.NotSupportedError, match=next(iter(refused))):
            _virtual_struct(cucore.VirtualMemoryResourceOptions(**refused))
    c = _virtual_struct(cucore.VirtualMemoryResourceOptions(
        location_type="host_numa", location_id=2, granularity="minimum", handle_type="posix_fd",
        reserve_size=1 << 30, self_access="r"))
    assert (c.location_type, c.location_id, c.minimum_granularity, c.posix_fd_shareable, c.reserve_size,
            c.self_access) == (3, 2, 1, 1, 1 << 30, 1)


def test_virtual_options():
    o = cucore.VirtualMemoryResourceOptions()
    assert (o.location_type, o.location_id, o.granularity, o.handle_type, o.reserve_size, o.self_access) == \
        ("device", 0, "recommended", "posix_fd", 0, "rw")  # cuda.core's defaults
    assert (o.allocation_type, o.gpu_direct_rdma, o.addr_hint, o.addr_align, o.peers, o.peer_access) == \
        ("pinned", False, 0, None, (), "rw")
    for bad, words in (({"location_type": "gpu"}, "location_type"), ({"granularity": "huge"}, "granularity"),
                       ({"handle_type": "ipc"}, "handle_type"), ({"self_access": "w"}, "self_access"),
                       ({"allocation_type": "paged"}, "allocation_type"), ({"peer_access": "x"}, "peer_access"),
                       ({"addr_align": 3 << 20}, "addr_align"), ({"addr_hint": -1}, "addr_hint"),
                       ({"self_access": None}, "self_access"), ({"reserve_size": -1}, "reserve_size"),
                       ({"location_id": -1}, "location_id")):
        with pytest.raises(ValueError, match=words):
            cucore.VirtualMemoryResourceOptions(**bad)
    with pytest.raises(TypeError, match="location_id"):
        cucore.VirtualMemoryResourceOptions(location_id="0")
    with pytest.raises(TypeError, match="reserve_size"):
        cucore.VirtualMemoryResourceOptions(reserve_size=1.0)


# ============================================================================================================
# GPU (or the fake driver)
# ============================================================================================================


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
