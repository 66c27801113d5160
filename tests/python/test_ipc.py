"""Sharing memory and events between processes (include/cucore/ipc.h, cucore.ipc).

Without a GPU: the ABI table, and IPCAllocationHandle's ownership of its file descriptor (also through
pickling). With a GPU or the fake driver: export and its refusals; under the fake driver (whose memory
lives in one process) a same-process round trip through every descriptor, and every way a descriptor can
be wrong. With a real GPU: buffers and events crossing to a spawned process and back, in both directions,
for a device pool (objects passed as Process arguments) and a pinned pool (passed through a Queue), each
direction ordered only by an IPC event behind a delayed write; every wait has a deadline and a hung child
is killed.
"""
import gc
import multiprocessing
import os
import pickle
import queue
import re
import tempfile
import time
import traceback
import uuid

import pytest

import cucore
from cucore import MemoryResourceKind, _abi, _abi_types, ipc
from conftest import FAKE_DRIVER, REPO

IPC_H = REPO / "include" / "cucore" / "ipc.h"
SIZE = 1 << 16
DEADLINE = 90  # seconds a child may take before it is killed


def pattern(n, seed):
    return bytes((i * 31 + seed * 7 + (i >> 8)) & 0xFF for i in range(n))


def live(kind):
    gc.collect()
    return cucore.live_object_count(kind)


# ---- no GPU ---------------------------------------------------------------------------------------------------

def test_every_ipc_function_is_in_the_abi_table():
    text = re.sub(r"/\*.*?\*/", " ", IPC_H.read_text(), flags=re.S)
    names = re.findall(r"CUCORE_API\s+[\w\s\*]+?\b(cucore_\w+)\s*\(", text)
    assert len(names) == 7
    for name in names:
        assert name in _abi.ABI, name
    assert _abi_types.STRUCTS["cucore_ipc_pool_handle_t"][0] == ("fd", "int32_t")


def test_an_allocation_handle_owns_its_descriptor():
    r, w = os.pipe()
    os.close(w)
    h = cucore.IPCAllocationHandle(r, MemoryResourceKind.DEVICE, bytes(range(16)))
    assert int(h) == h.fd == r and h.kind is MemoryResourceKind.DEVICE and h.pool_id == bytes(range(16))
    assert "IPCAllocationHandle" in repr(h)
    h.close()
    with pytest.raises(OSError):
        os.fstat(r)
    h.close()  # idempotent
    assert h.fd == -1
    r, w = os.pipe()
    os.close(w)
    with cucore.IPCAllocationHandle(r, MemoryResourceKind.PINNED, bytes(16)) as h2:
        assert h2.detach() == r
    os.fstat(r)  # detached: still open, now the caller's
    os.close(r)
    with pytest.raises(ValueError):
        cucore.IPCAllocationHandle(0, MemoryResourceKind.DEVICE, b"short")
    with pytest.raises(TypeError):
        cucore.IPCAllocationHandle("3", MemoryResourceKind.DEVICE, bytes(16))


def test_an_allocation_handle_pickles_with_a_duplicate_of_its_descriptor():
    with tempfile.TemporaryFile() as f:
        h = cucore.IPCAllocationHandle(os.dup(f.fileno()), MemoryResourceKind.PINNED, b"\x07" * 16)
        copy = pickle.loads(pickle.dumps(h))
        try:
            assert copy.fd != h.fd
            assert os.fstat(copy.fd).st_ino == os.fstat(f.fileno()).st_ino, "the same open file"
            assert copy.kind is MemoryResourceKind.PINNED and copy.pool_id == b"\x07" * 16
        finally:
            copy.close()
            h.close()
    with pytest.raises(ValueError):
        pickle.dumps(h)  # closed


# ---- GPU or fake driver: export and its refusals ----------------------------------------------------------------

@pytest.fixture
def stream(gpu):
    s = gpu.create_stream()
    yield s
    s.sync()


def ipc_pool(dev, pinned=False):
    try:
        if pinned:
            return cucore.PinnedMemoryResource(cucore.PinnedMemoryResourceOptions(ipc_enabled=True), device=dev)
        return cucore.DeviceMemoryResource(dev, cucore.DeviceMemoryResourceOptions(ipc_enabled=True))
    except cucore.NotSupportedError as e:
        pytest.skip(f"no IPC-enabled {'pinned' if pinned else 'device'} pool here: {e}")


@pytest.mark.gpu
def test_interprocess_events(gpu, stream):
    ev = gpu.create_event(cucore.EventOptions(ipc_enabled=True))
    assert ev.is_ipc_enabled and not ev.is_timing_enabled
    ev.record(stream)
    edesc = ev.ipc_descriptor
    assert isinstance(edesc, cucore.ipc.IPCEventDescriptor) and pickle.loads(pickle.dumps(edesc)) == edesc
    desc = bytes(edesc)
    assert len(desc) == ipc.EVENT_DESCRIPTOR_SIZE and desc[:3] == b"CUE"
    with pytest.raises(cucore.InvalidArgumentError, match="CUCORE_EVENT_INTERPROCESS.*CUCORE_EVENT_TIMING"):
        gpu.create_event(cucore.EventOptions(ipc_enabled=True, timing_enabled=True))
    plain = gpu.create_event()
    assert not plain.is_ipc_enabled
    with pytest.raises(cucore.InvalidArgumentError, match="without CUCORE_EVENT_INTERPROCESS"):
        plain.ipc_descriptor
    with pytest.raises(TypeError, match="ipc_enabled"):
        pickle.dumps(plain)
    with pytest.raises(TypeError):
        cucore.EventOptions(ipc_enabled=1)
    for bad, message in ((desc[:-1], "truncated"), (b"X" + desc[1:], "bad magic"),
                         (desc[:40] + bytes([desc[40] ^ 1]) + desc[41:], "checksum mismatch")):
        with pytest.raises(cucore.InvalidArgumentError, match=message):
            cucore.Event.from_ipc_descriptor(bad, gpu)
    ev.close()
    plain.close()


@pytest.mark.gpu
def test_only_ipc_enabled_pools_and_their_whole_buffers_export(gpu, stream):
    mr = ipc_pool(gpu)
    assert mr.is_ipc_enabled and not mr.is_mapped
    h = mr.allocation_handle
    assert h is mr.allocation_handle, "made once and kept by the resource"
    assert h.fd >= 0 and h.handle == h.fd and not h.is_closed and h.kind is MemoryResourceKind.DEVICE
    assert len(h.pool_id) == 16 and ipc.pool_id(mr) == h.pool_id
    assert h.uuid == mr.uuid == uuid.UUID(bytes=h.pool_id)
    h.close()
    assert h.is_closed and h.fd == -1
    h2 = mr.allocation_handle
    assert h2 is not h and not h2.is_closed and h2.pool_id == h.pool_id, "made again once its user closed it"
    buf = mr.allocate(256, stream=stream)
    bdesc = buf.ipc_descriptor
    assert bdesc.size == 256 and pickle.loads(pickle.dumps(bdesc)) == bdesc
    desc = bytes(bdesc)
    assert len(desc) == ipc.BUFFER_DESCRIPTOR_SIZE and desc[:8] == b"CUCOREIB"
    with pytest.raises(cucore.InvalidArgumentError, match="is a view"):
        buf.view(0, 128).ipc_descriptor
    plain = cucore.DeviceMemoryResource(gpu, cucore.DeviceMemoryResourceOptions())
    assert not plain.is_ipc_enabled
    with pytest.raises(cucore.NotSupportedError, match="ipc_enabled"):
        plain.allocation_handle
    assert plain.uuid is None and plain.is_handle_owned
    pbuf = plain.allocate(64, stream=stream)
    with pytest.raises(cucore.InvalidArgumentError, match="IPC-enabled pool"):
        pbuf.ipc_descriptor
    with pytest.raises(TypeError, match="ipc_enabled"):
        pickle.dumps(plain)
    with pytest.raises(TypeError, match="ipc_enabled"):
        pickle.dumps(pbuf)
    # A closed descriptor is refused before the driver sees it.
    closed = ipc.export_memory_resource(mr)  # a new export, the caller's to close
    stale = cucore.IPCAllocationHandle(closed.fd, closed.kind, closed.pool_id)
    closed.close()
    with pytest.raises(cucore.InvalidArgumentError, match="not an open file descriptor"):
        cucore.DeviceMemoryResource.from_allocation_handle(gpu, stale)
    stale.detach()
    for bad in (3, "3"):  # a bare descriptor lacks the pool identifier buffers are checked against
        with pytest.raises(TypeError, match="IPCAllocationHandle"):
            cucore.DeviceMemoryResource.from_allocation_handle(gpu, bad)
    for b in (pbuf, buf):
        b.close()
    stream.sync()


# ---- fake driver: one process plays both sides ------------------------------------------------------------------

same_process = pytest.mark.skipif(
    not FAKE_DRIVER, reason="one process importing what it exported is up to the real driver; the multiprocessing "
                            "tests below cover a real GPU")


@pytest.mark.gpu
@same_process
@pytest.mark.parametrize("pinned", [False, True])
def test_same_process_round_trip(gpu, stream, pinned):
    mr = ipc_pool(gpu, pinned)
    handle = mr.allocation_handle
    imported = (cucore.PinnedMemoryResource.from_allocation_handle(handle, gpu) if pinned else
                cucore.DeviceMemoryResource.from_allocation_handle(gpu, handle))
    assert isinstance(imported, cucore.ImportedMemoryResource) and imported.is_mapped
    assert imported.kind is MemoryResourceKind.IMPORTED and not imported.is_ipc_enabled
    assert imported.device_id == (-1 if pinned else gpu.device_id)
    assert imported.is_device_accessible and imported.is_host_accessible == pinned
    assert cucore.MemoryResource.from_allocation_handle(gpu, handle) is imported, "imported once"
    with pytest.raises(cucore.InvalidStateError, match="cannot allocate"):
        imported.allocate(64, stream=stream)

    buf = mr.allocate(SIZE, stream=stream)
    buf.copy_from(pattern(SIZE, 3), stream=stream)
    bdesc = buf.ipc_descriptor
    desc = bytes(bdesc)
    mapped = cucore.Buffer.from_ipc_descriptor(imported, bdesc, stream=stream)
    assert mapped.size == SIZE and mapped.memory_resource is imported and mapped.is_mapped and not buf.is_mapped
    assert imported.uuid == mr.uuid
    assert imported.register(mr.uuid) is imported and cucore.DeviceMemoryResource.from_registry(mr.uuid) is imported
    with pytest.raises(RuntimeError, match="no memory resource"):
        cucore.DeviceMemoryResource.from_registry(uuid.uuid4())
    assert mapped.to_bytes(stream=stream) == pattern(SIZE, 3)
    mapped.copy_from(pattern(SIZE, 4), stream=stream)
    assert buf.to_bytes(stream=stream) == pattern(SIZE, 4), "writes through the import land in the export"
    again = cucore.Buffer.from_ipc_descriptor(imported, bytearray(desc), stream=stream)
    assert again.handle == mapped.handle, "a second import shares the first mapping"

    # Every way a descriptor can be wrong, each with its message.
    other = ipc_pool(gpu, pinned)
    foreign = bytes(other.allocate(64, stream=stream).ipc_descriptor)
    for bad, message in ((desc[:-1], "truncated: 127 bytes"), (desc + b"\0", "has 129 bytes"),
                         (b"" , "truncated: 0 bytes"), (b"x" + desc[1:], "bad magic"),
                         (desc[:8] + b"\x09" + desc[9:], "format version 9"),
                         (desc[:60] + bytes([desc[60] ^ 0x10]) + desc[61:], "checksum mismatch"),
                         (foreign, "belongs to another pool")):
        with pytest.raises(cucore.InvalidArgumentError, match=message):
            cucore.Buffer.from_ipc_descriptor(imported, bad, stream=stream)
    with pytest.raises(cucore.InvalidArgumentError, match="not a pool imported"):
        cucore.Buffer.from_ipc_descriptor(mr, desc, stream=stream)
    with pytest.raises(TypeError):
        cucore.Buffer.from_ipc_descriptor(imported, 42, stream=stream)

    # Events: one process records, the other waits.
    ev = gpu.create_event(cucore.EventOptions(ipc_enabled=True))
    opened = cucore.Event.from_ipc_descriptor(ev.ipc_descriptor)
    assert opened.is_ipc_enabled and not opened.is_timing_enabled
    ev.record(stream)
    stream.wait(opened)
    opened.sync()

    for obj in (again, mapped, buf, opened, ev):
        obj.close()
    stream.sync()
    handle.close()


@pytest.mark.gpu
@same_process
def test_pickling_in_one_process(gpu, stream):
    mr = ipc_pool(gpu)
    buf = mr.allocate(4096, stream=stream)
    buf.copy_from(pattern(4096, 8), stream=stream)
    ev = gpu.create_event(cucore.EventOptions(ipc_enabled=True))
    mr2, buf2, ev2 = pickle.loads(pickle.dumps((mr, buf, ev)))
    assert mr2.is_mapped and buf2.memory_resource is mr2 and ev2.is_ipc_enabled
    assert buf2.to_bytes(stream=stream) == pattern(4096, 8)
    for obj in (buf2, ev2, buf, ev):
        obj.close()
    stream.sync()


# ---- a real GPU: spawned processes --------------------------------------------------------------------------------

real_gpu_only = pytest.mark.skipif(FAKE_DRIVER, reason="the fake driver's memory and events live in one process")


def _child(results, mr, a, b, e1, e2, size, seed_a, seed_b, bad_descriptors):
    """The spawned process: everything arrived pickled (imported on arrival)."""
    try:
        dev = cucore.Device(0)
        s = dev.create_stream()
        refusals = []
        for desc in bad_descriptors:
            try:
                cucore.Buffer.from_ipc_descriptor(mr, desc, stream=s)
                refusals.append("accepted")
            except cucore.InvalidArgumentError as e:
                refusals.append(str(e))
        try:
            mr.allocate(64, stream=s)
            refusals.append("allocated")
        except cucore.InvalidStateError as e:
            refusals.append(str(e))
        s.wait(e1)  # the parent's write lands behind a delay: only the event orders this read
        got_a = a.to_bytes(stream=s)
        data = pattern(size, seed_b)
        s.launch_host_func(time.sleep, 0.2)
        b.copy_from(data, stream=s)
        e2.record(s)
        results.put(("recorded", None))
        s.sync()
        facts = {"a_ok": got_a == pattern(size, seed_a), "mapped": mr.is_mapped, "a_size": a.size,
                 "refusals": refusals}
        for obj in (a, b):
            obj.close()
        dev.default_stream.sync()  # unpickled buffers are freed on the legacy default stream
        for obj in (e1, e2, s, mr):
            obj.close()
        del a, b, e1, e2, s, mr
        facts["live"] = {k.name: live(k) for k in (cucore.ObjectType.BUFFER, cucore.ObjectType.MEMORY_RESOURCE,
                                                   cucore.ObjectType.EVENT, cucore.ObjectType.STREAM)}
        facts["live"]["STREAM"] -= 1  # the device's default stream object, which the binding caches
        results.put(("done", facts))
    except BaseException:
        results.put(("error", traceback.format_exc()))


def _next(results, proc):
    try:
        return results.get(timeout=DEADLINE)
    except queue.Empty:
        proc.kill()
        proc.join(10)
        pytest.fail(f"the child process hung for {DEADLINE} s and was killed")


def _round_trip(gpu, stream, pinned, through_queue):
    ctx = multiprocessing.get_context("spawn")
    mr = ipc_pool(gpu, pinned)
    other = ipc_pool(gpu)
    a = mr.allocate(SIZE, stream=stream)
    b = mr.allocate(SIZE, stream=stream)
    b.fill(0, stream=stream)
    foreign = other.allocate(256, stream=stream)
    e1 = gpu.create_event(cucore.EventOptions(ipc_enabled=True))
    e2 = gpu.create_event(cucore.EventOptions(ipc_enabled=True))
    stream.sync()
    desc = bytes(a.ipc_descriptor)
    bad = [desc[:50] + bytes([desc[50] ^ 1]) + desc[51:], desc[:100], bytes(foreign.ipc_descriptor)]
    # Parent -> child: the write lands 200 ms from now; event 1 follows it.
    stream.launch_host_func(time.sleep, 0.2)
    a.copy_from(pattern(SIZE, 21), stream=stream)
    e1.record(stream)

    results = ctx.Queue()
    payload = (mr, a, b, e1, e2, SIZE, 21, 22, bad)
    if through_queue:
        inbox = ctx.Queue()
        proc = ctx.Process(target=_queue_child, args=(results, inbox))
        proc.start()
        inbox.put(payload)
    else:
        proc = ctx.Process(target=_child, args=(results,) + payload)
        proc.start()
    try:
        kind, value = _next(results, proc)
        assert kind == "recorded", value
        # Child -> parent: only event 2 orders this read after the child's delayed write.
        stream.wait(e2)
        assert b.to_bytes(stream=stream) == pattern(SIZE, 22)
        kind, facts = _next(results, proc)
        assert kind == "done", facts
        assert facts["a_ok"] and facts["mapped"] and facts["a_size"] == SIZE
        checksum, truncated, other_pool, allocate = facts["refusals"]
        assert "checksum mismatch" in checksum
        assert "truncated: 100 bytes" in truncated
        assert "belongs to another pool" in other_pool
        assert "cannot allocate" in allocate
        assert facts["live"] == {"BUFFER": 0, "MEMORY_RESOURCE": 0, "EVENT": 0, "STREAM": 0}, facts["live"]
        proc.join(DEADLINE)
        assert proc.exitcode == 0
    finally:
        if proc.is_alive():
            proc.kill()
            proc.join(10)
        results.close()
    # The child has released its imports: the exporter may free now.
    for obj in (a, b, foreign, e1, e2):
        obj.close()
    stream.sync()


def _queue_child(results, inbox):
    try:
        payload = inbox.get(timeout=DEADLINE)
    except BaseException:
        results.put(("error", traceback.format_exc()))
        return
    _child(results, *payload)


@pytest.mark.gpu
@real_gpu_only
def test_device_pool_crosses_to_a_spawned_process_and_back(gpu, stream):
    _round_trip(gpu, stream, pinned=False, through_queue=False)


@pytest.mark.gpu
@real_gpu_only
def test_pinned_pool_crosses_through_a_queue_and_back(gpu, stream):
    _round_trip(gpu, stream, pinned=True, through_queue=True)
