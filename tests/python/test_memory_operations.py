"""Host locations, batched memory operations (cucore.utils) and stream memory operations
(bindings/python/cucore/host.py, memory_operations.py, utils.py; the Stream methods in stream.py).

Without a GPU: Host, CopyOptions and the argument checks that need no device. With a GPU (or the fake driver,
whose streams run on worker threads): a batch of host->device, device->device and device->host copies read back;
batched prefetches move each managed buffer's last prefetch location and discarded buffers take new data;
stream A waits (32- and 64-bit, cyclic >=) on values stream B writes after a gated fill, stays pending while the
gate is closed, and then shows B's data; the same through batch_memory_ops. The batched operations need a
CUDA 13.0 driver: without one they skip with the reason."""
import threading

import pytest

import cucore
from cucore import Host, StreamMemoryOp, utils
from cucore.managed_memory import LOCATION_HOST, LOCATION_HOST_NUMA, LOCATION_HOST_NUMA_CURRENT, to_location
from conftest import or_skip as _or_skip

GATE_TIMEOUT_S = 60


def test_host_is_a_location(lib):
    assert Host() == Host() and Host(1) != Host(2) and Host.numa_current() != Host()
    assert Host(3).numa_id == 3 and Host().numa_id is None and Host.numa_current().is_numa_current
    assert repr(Host(2)) == "Host(2)" and repr(Host.numa_current()) == "Host.numa_current()"
    assert len({Host(1), Host(1), Host()}) == 2
    for value, (type_, id_) in ((Host(), (LOCATION_HOST, 0)), (Host(4), (LOCATION_HOST_NUMA, 4)),
                                (Host.numa_current(), (LOCATION_HOST_NUMA_CURRENT, 0))):
        c = to_location(value)
        assert (c.type, c.id) == (type_, id_)
    with pytest.raises(ValueError):
        Host(-1)
    with pytest.raises(TypeError):
        Host(True)
    with pytest.raises(AttributeError):
        Host(1).numa_id = 2  # frozen
    assert Host.current_numa_id() >= 0
    # Wherever a location is taken: pinned pool options (a node), managed options (any location).
    assert cucore.PinnedMemoryResourceOptions(numa_id=Host(0)).numa_id == 0
    assert cucore.PinnedMemoryResourceOptions(numa_id=Host()).numa_id is None
    assert cucore.PinnedMemoryResourceOptions(numa_id=Host.numa_current()).numa_id == Host.current_numa_id()
    cucore.ManagedMemoryResourceOptions(preferred_location=Host(0))


def test_copy_options():
    o = utils.CopyOptions(src_access_order="during_api_call", dst_location_hint=Host(),
                          overlap_mode="prefer_overlap_with_compute")
    assert o.src_access_order is utils.MemcpySrcAccessOrder.DURING_API_CALL
    assert o.overlap_mode is utils.MemcpyOverlapMode.PREFER_OVERLAP_WITH_COMPUTE
    assert utils.CopyOptions() == utils.CopyOptions(src_access_order=utils.MemcpySrcAccessOrder.STREAM)
    with pytest.raises(ValueError, match="src_access_order"):
        utils.CopyOptions(src_access_order="sometimes")
    with pytest.raises(ValueError, match="overlap_mode"):
        utils.CopyOptions(overlap_mode="always")
    with pytest.raises(TypeError, match="src_location_hint"):
        utils.CopyOptions(src_location_hint="host")  # a Device or a Host, as cuda.core
    c = o._to_c()
    assert (c.dst_location_hint.type, c.src_location_hint.type) == (LOCATION_HOST, 0)


@pytest.fixture
def streams(gpu):
    a, b = gpu.create_stream(), gpu.create_stream()
    yield a, b
    b.sync()
    a.sync()


def test_copy_batch(gpu, streams):
    s, _ = streams
    n = 4096
    pinned = cucore.LegacyPinnedMemoryResource(gpu)
    host_in = [pinned.allocate(n) for _ in range(3)]
    host_out = [pinned.allocate(n) for _ in range(3)]
    dev = [gpu.allocate(n, stream=s) for _ in range(9)]
    data = [bytes([(i * 37 + k) % 251 for k in range(n)]) for i in range(9)]
    for i in range(3):
        host_in[i].copy_from(data[i], stream=s)
    for i in range(3, 9):
        dev[i].copy_from(data[i], stream=s)
    s.sync()
    srcs = host_in + dev[3:6] + dev[6:9]
    dsts = dev[0:3] + [gpu.allocate(n, stream=s) for _ in range(3)] + host_out
    options = [utils.CopyOptions()] * 3 + [utils.CopyOptions(overlap_mode="prefer_overlap_with_compute")] * 3 + \
              [utils.CopyOptions()] * 3
    _or_skip(lambda: utils.copy_batch(s, srcs, dsts, options=options), "cuMemcpyBatchAsync")
    s.sync()
    for i in range(3):
        assert dev[i].to_bytes(stream=s) == data[i]            # host -> device
        assert dsts[3 + i].to_bytes(stream=s) == data[3 + i]   # device -> device
        assert host_out[i].to_bytes(stream=s) == data[6 + i]   # device -> host
    # One CopyOptions for all; nothing is captured when there is nothing to copy.
    utils.copy_batch(s, dev[3:6], dev[0:3], options=utils.CopyOptions(src_access_order="any"))
    utils.copy_batch(s, [], [])
    s.sync()
    assert [d.to_bytes(stream=s) for d in dev[0:3]] == data[3:6]


def test_copy_3d_batch(gpu, streams):
    s, _ = streams
    pixels = bytes((i * 7 + 3) % 256 for i in range(64 * 8))
    image, packed = gpu.allocate(64 * 8, stream=s), gpu.allocate(16 * 4, stream=s)
    image.copy_from(pixels, stream=s)
    host = bytearray(8)
    _or_skip(lambda: utils.copy_3d_batch(s, [
        (packed, cucore.MemoryRegion(image, pitch=64, x=4, y=2), (16, 4)),   # 2D tile into packed rows
        (host, cucore.MemoryRegion(image, pitch=64, y=7), (8, 1)),            # one row into host memory
        (packed, image, (0, 1)),                                             # nothing to copy
    ]), "cuMemcpy3DBatchAsync")
    got = packed.to_bytes(stream=s)
    assert all(got[r * 16:(r + 1) * 16] == pixels[(2 + r) * 64 + 4:(2 + r) * 64 + 20] for r in range(4))
    assert bytes(host) == pixels[7 * 64:7 * 64 + 8]  # host memory: waited for
    with pytest.raises(ValueError, match="x"):
        utils.copy_3d_batch(s, [(packed, cucore.MemoryRegion(image, pitch=64, x=60), (16, 1))])
    with pytest.raises(TypeError, match=r"copies\[0\]"):
        utils.copy_3d_batch(s, [(packed, image)])


def test_copy_batch_errors(gpu, streams):
    s, _ = streams
    a, b, c = gpu.allocate(64, stream=s), gpu.allocate(64, stream=s), gpu.allocate(32, stream=s)
    with pytest.raises(TypeError, match="single Buffer"):
        utils.copy_batch(s, a, b)
    with pytest.raises(ValueError, match="length"):
        utils.copy_batch(s, [a], [b, c])
    with pytest.raises(ValueError, match="sizes must match"):
        utils.copy_batch(s, [a], [c])
    with pytest.raises(ValueError, match="one per copy"):
        utils.copy_batch(s, [a], [b], options=[utils.CopyOptions()] * 2)
    with pytest.raises(TypeError, match=r"srcs\[0\]"):
        utils.copy_batch(s, [b"x" * 64], [b])
    try:
        utils.copy_batch(cucore.legacy_default_stream(gpu), [a], [b])
    except cucore.NotSupportedError as e:
        pytest.skip(f"cuMemcpyBatchAsync is not supported here: {e}")
    except cucore.InvalidArgumentError as e:
        assert "legacy default stream" in str(e)
    else:
        raise AssertionError("the legacy default stream was taken")


@pytest.fixture
def managed(gpu):
    try:
        mr = cucore.ManagedMemoryResource(gpu)
    except cucore.NotSupportedError as e:
        pytest.skip(f"managed memory is not supported here: {e}")
    return mr


def test_prefetch_and_discard_batches(gpu, streams, managed):
    s, _ = streams
    bufs = [managed.allocate(1 << 16, stream=s) for _ in range(3)]
    _or_skip(lambda: utils.prefetch_batch(s, bufs, gpu), "cuMemPrefetchBatchAsync")
    s.sync()
    assert [b.last_prefetch_location for b in bufs] == [gpu] * 3
    utils.prefetch_batch(s, bufs, [Host(), gpu, "host"])
    s.sync()
    where = [b.last_prefetch_location for b in bufs]
    assert where[1] == gpu
    for w in (where[0], where[2]):  # host memory: the driver may name its NUMA node
        assert w in ("host", "host_numa_current") or (isinstance(w, tuple) and w[0] == "host_numa"), where
    # Discarded contents are unspecified; new data then reads back.
    bufs[0].copy_from(b"\x11" * (1 << 16), stream=s)
    utils.discard_batch(s, bufs[:2])
    bufs[0].copy_from(b"\x22" * (1 << 16), stream=s)
    assert bufs[0].to_bytes(stream=s) == b"\x22" * (1 << 16)
    utils.discard_prefetch_batch(s, bufs[2:], gpu)
    bufs[2].copy_from(b"\x33" * (1 << 16), stream=s)
    assert bufs[2].to_bytes(stream=s) == b"\x33" * (1 << 16)
    plain = gpu.allocate(64, stream=s)
    with pytest.raises(cucore.InvalidArgumentError, match="not managed"):
        utils.discard_batch(s, [bufs[0], plain])
    with pytest.raises(ValueError, match="one per buffer"):
        utils.prefetch_batch(s, bufs, [gpu, gpu])


def _gated(stream):
    """An event that holds `stream` (a host function blocks on it) until set, or GATE_TIMEOUT_S."""
    gate = threading.Event()
    stream.launch_host_func(gate.wait, GATE_TIMEOUT_S)
    return gate


def _flag(gpu):
    """64 bytes of pinned host memory for stream memory operations: the driver refuses them on device-pool
    memory (CUDA_ERROR_INVALID_VALUE, H200, driver 580)."""
    return cucore.LegacyPinnedMemoryResource(gpu).allocate(64)


def test_a_stream_waits_for_the_values_another_writes(gpu, streams):
    a, b = streams
    n = 1 << 16
    flag, data, out = _flag(gpu), gpu.allocate(n, stream=a), gpu.allocate(n, stream=a)
    for x in (flag, data, out):
        x.fill(0, stream=a)
    a.sync()
    big = (1 << 40) + 5
    # B first: whatever hardware queues the streams share, B's work is ahead of A's wait.
    gate = _gated(b)
    try:
        data.fill(0xA5, stream=b)
        b.write_value(flag, 1)
        b.write_value(flag, big, offset=8, width=64)
        a.wait_value(flag, 1)                                   # 32-bit, cyclic >=
        a.wait_value(flag, 1 << 40, offset=8, width=64, condition="geq")
        out.copy_from(data, stream=a)
        assert not a.is_done, "stream A ran past its wait before the value was written"
    finally:
        gate.set()
    a.sync()
    assert out.to_bytes(stream=a) == b"\xa5" * n
    raw = flag.to_bytes(stream=a)
    assert int.from_bytes(raw[0:4], "little") == 1 and int.from_bytes(raw[8:16], "little") == big


def test_batch_memory_ops(gpu, streams):
    a, b = streams
    n = 1 << 16
    flag, data, out = _flag(gpu), gpu.allocate(n, stream=a), gpu.allocate(n, stream=a)
    flag.fill(0, stream=a)
    a.sync()
    word = 0x0123456789ABCDEF
    gate = _gated(b)
    try:
        data.fill(0x3C, stream=b)
        b.batch_memory_ops([StreamMemoryOp.memory_barrier("device"),
                            StreamMemoryOp.write_value(flag, word, offset=8, width=64),
                            StreamMemoryOp.write_value(flag, 7)])
        a.batch_memory_ops([StreamMemoryOp.wait_value(flag, 7, condition="eq"),
                            StreamMemoryOp.wait_value(flag, word, offset=8, width=64, condition="eq"),
                            StreamMemoryOp.wait_value(flag, 4, condition="and")])
        a.memory_barrier()
        out.copy_from(data, stream=a)
        assert not a.is_done, "stream A ran past its waits before the values were written"
    finally:
        gate.set()
    a.sync()
    assert out.to_bytes(stream=a) == b"\x3c" * n
    raw = flag.to_bytes(stream=a)
    assert int.from_bytes(raw[0:4], "little") == 7 and int.from_bytes(raw[8:16], "little") == word
    # The address form: the buffer's device address.
    a.write_value(flag.handle, 9, offset=4)
    assert int.from_bytes(flag.to_bytes(stream=a)[4:8], "little") == 9


def test_stream_memory_op_errors(gpu, streams, managed):
    a, _ = streams
    flag = gpu.allocate(64, stream=a)
    with pytest.raises(cucore.InvalidArgumentError, match="aligned"):
        a.write_value(flag, 1, offset=2)
    with pytest.raises(cucore.InvalidArgumentError, match="aligned"):
        a.wait_value(flag, 1, offset=4, width=64)
    with pytest.raises(ValueError, match="width"):
        a.write_value(flag, 1, width=16)
    with pytest.raises(ValueError, match="32 unsigned bits"):
        a.write_value(flag, 1 << 32)
    with pytest.raises(ValueError, match="condition"):
        a.wait_value(flag, 1, condition="gt")
    with pytest.raises(ValueError, match="scope"):
        a.memory_barrier("planet")
    with pytest.raises(TypeError, match="Buffer or an int"):
        a.write_value("flag", 1)
    with pytest.raises(cucore.InvalidArgumentError, match="managed"):
        a.write_value(managed.allocate(64, stream=a), 1)
    with pytest.raises(TypeError, match=r"ops\[0\]"):
        a.batch_memory_ops([("write", flag, 1)])
    try:
        a.flush_remote_writes()
    except cucore.NotSupportedError as e:
        assert "CAN_FLUSH_REMOTE_WRITES" in str(e)
    a.sync()
