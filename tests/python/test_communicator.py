"""Collectives between GPUs through NCCL (include/cucore/communicator.h; bindings/python/cucore/communicator.py),
and device peer access (Device.enable_peer_access / disable_peer_access).

Without a GPU: DataType and ReduceOp against the header, the dtype and op spellings, CommunicatorId (bytes,
pickling), where NCCL is found (a pip package's, CUCORE_NCCL_PATH kept) and a missing NCCL (NotSupportedError, the
rest working), in child processes since libcucore loads NCCL once per process. With two GPUs (or the fake driver
of test_fake_driver.py with the fake NCCL, tests/fake_nccl): one process driving both ranks (create_all + group),
every collective for every element type and reduction with the values read back, in place and not, the errors
(mismatched sizes, a buffer or stream of the other device, bad roots and peers), groups, and what an operation
holds once its objects are dropped right after the call. With two real GPUs: one process per GPU (spawned, the
id pickled, NCCL_NVLS_ENABLE=0 in the children), and a kernel on device 1 using device 0's memory after peer access
is granted (through a pool's peer_accessible_by and through Device.enable_peer_access). Fewer than two GPUs or no
NCCL: skipped with the reason (a failure where CUCORE_TEST_REQUIRE_NCCL=1, as gpu_suite.sh sets it with two GPUs and
an NCCL, except under the fake driver)."""
import ctypes
import gc
import math
import multiprocessing
import os
import pickle
import queue
import re
import struct
import subprocess
import sys
import textwrap
import threading
import time
import traceback

import pytest

import cucore
from cucore import communicator
from cucore.communicator import Communicator, CommunicatorId, DataType, ReduceOp
from conftest import FAKE_DRIVER, REPO, RawDriver

COMMUNICATOR_H = REPO / "include" / "cucore" / "communicator.h"
DEADLINE = 120  # seconds a spawned rank may take before it is killed


@pytest.fixture(autouse=True)
def _no_nvlink_multicast(monkeypatch):
    # NVLink multicast (NVLS) stays off: NCCL reads this when it makes a communicator (here or in a child).
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "0")


# ---- element codecs: bytes of a list of values, without NumPy (the build machine has none) --------------------

FORMATS = {"int8": "b", "uint8": "B", "int32": "i", "uint32": "I", "int64": "q", "uint64": "Q", "float16": "e",
           "float32": "f", "float64": "d"}
FLOAT8 = {"float8_e4m3": (4, 3, 7), "float8_e5m2": (5, 2, 15)}  # exponent bits, mantissa bits, bias
INTEGER = {"int8", "uint8", "int32", "uint32", "int64", "uint64"}


def _f8_encode(value, mbits, bias):
    """A small positive integer (exactly representable) as an 8-bit float."""
    assert value > 0 and value == int(value)
    e = int(math.floor(math.log2(value)))
    mantissa = round((value / 2 ** e - 1) * (1 << mbits))
    assert mantissa < (1 << mbits) and (1 + mantissa / (1 << mbits)) * 2 ** e == value, value
    return ((e + bias) << mbits) | mantissa


def _f8_decode(byte, mbits, bias):
    e = (byte >> mbits) & ((1 << (7 - mbits)) - 1)
    mantissa = byte & ((1 << mbits) - 1)
    if e == 0:
        return mantissa / (1 << mbits) * 2 ** (1 - bias)
    return (1 + mantissa / (1 << mbits)) * 2 ** (e - bias)


def encode(dtype, values):
    if dtype in FORMATS:
        return struct.pack(f"<{len(values)}{FORMATS[dtype]}", *values)
    if dtype == "bfloat16":  # the upper half of a float32
        return b"".join(struct.pack("<f", v)[2:] for v in values)
    _, mbits, bias = FLOAT8[dtype]
    return bytes(_f8_encode(v, mbits, bias) for v in values)


def decode(dtype, data):
    if dtype in FORMATS:
        return list(struct.unpack(f"<{len(data) // struct.calcsize(FORMATS[dtype])}{FORMATS[dtype]}", data))
    if dtype == "bfloat16":
        return [struct.unpack("<f", b"\0\0" + data[i:i + 2])[0] for i in range(0, len(data), 2)]
    _, mbits, bias = FLOAT8[dtype]
    return [_f8_decode(b, mbits, bias) for b in data]


def itemsize(dtype):
    return {"bfloat16": 2}.get(dtype) or (1 if dtype in FLOAT8 else struct.calcsize(FORMATS[dtype]))


def rank_values(rank, n):
    """Rank r's elements: 1..3 + r, small enough that every sum, product, max, min and average of two ranks is
    exact in every element type (8-bit floats included)."""
    return [(i % 3) + 1 + rank for i in range(n)]


def reduced(op, dtype, columns):
    out = []
    for xs in zip(*columns):
        if op == "sum":
            out.append(sum(xs))
        elif op == "prod":
            out.append(math.prod(xs))
        elif op == "max":
            out.append(max(xs))
        elif op == "min":
            out.append(min(xs))
        else:  # avg: truncated for integers
            out.append(sum(xs) // len(xs) if dtype in INTEGER else sum(xs) / len(xs))
    return out


# ============================================================================================================
# No GPU
# ============================================================================================================

def _header_enum(prefix):
    text = COMMUNICATOR_H.read_text()
    return {m.group(1): int(m.group(2), 0) for m in re.finditer(rf"\b{prefix}(\w+)\s*=\s*(\w+)", text)
            if not m.group(1).endswith("FORCE_INT32") and m.group(1) != "UNSET"}


def test_enums_are_the_headers():
    assert {m.name: int(m) for m in DataType} == _header_enum("CUCORE_DATA_TYPE_")
    assert {m.name: int(m) for m in ReduceOp} == _header_enum("CUCORE_REDUCE_")
    assert cucore.DataType is DataType and cucore.ReduceOp is ReduceOp and cucore.Communicator is Communicator
    assert cucore.CommunicatorId is CommunicatorId and communicator.ID_BYTES == 128


def test_dtype_spellings():
    dt = communicator.data_type
    assert dt("float32") is dt("FLOAT32") is dt(DataType.FLOAT32) is dt(int(DataType.FLOAT32)) is DataType.FLOAT32
    assert dt("bfloat16") is DataType.BFLOAT16 and dt("float8_e4m3fn") is DataType.FLOAT8_E4M3
    assert dt("half") is DataType.FLOAT16 and dt("double") is DataType.FLOAT64 and dt("uint64") is DataType.UINT64

    class TorchLike:  # what torch.float16 looks like to the binding: module torch, str "torch.float16"
        __module__ = "torch"

        def __str__(self):
            return "torch.float16"
    assert dt(TorchLike()) is DataType.FLOAT16 and dt("torch.bfloat16") is DataType.BFLOAT16

    class DtypeLike:  # a NumPy dtype's .name
        name = "int64"
    assert dt(DtypeLike()) is DataType.INT64
    with pytest.raises(TypeError, match="dtype is required"):
        dt(None)
    for bad in ("complex64", "float128", "float", 0, 99):
        with pytest.raises(cucore.InvalidArgumentError):
            dt(bad)
    for bad in (1.5, True, object()):
        with pytest.raises(TypeError):
            dt(bad)


def test_dtype_from_numpy():
    np = pytest.importorskip("numpy", reason="NumPy is not installed")
    dt = communicator.data_type
    assert dt(np.float32) is dt(np.dtype("float32")) is dt("f4") is DataType.FLOAT32
    assert dt(np.dtype("<i8")) is DataType.INT64 and dt(np.uint8) is DataType.UINT8 and dt("e") is DataType.FLOAT16
    with pytest.raises(cucore.InvalidArgumentError):
        dt(np.complex64)


def test_op_spellings():
    op = communicator.reduce_op
    assert [op(n) for n in ("sum", "prod", "max", "min", "avg")] == list(ReduceOp)
    assert op("SUM") is op(0) is op(ReduceOp.SUM) is ReduceOp.SUM
    with pytest.raises(cucore.InvalidArgumentError, match="not a reduction"):
        op("mean")
    with pytest.raises(cucore.InvalidArgumentError):
        op(7)
    with pytest.raises(TypeError):
        op(None)


def test_data_type_sizes_come_from_libcucore(lib):
    sizes = {m: m.itemsize for m in DataType}
    assert sizes == {m: itemsize(m.name.lower()) for m in DataType}


def test_communicator_id_is_bytes_and_pickles():
    raw = bytes(range(128))
    cid = CommunicatorId.from_bytes(raw)
    assert isinstance(cid, bytes) and bytes(cid) == raw and type(bytes(cid)) is bytes and cid == raw
    assert CommunicatorId(bytearray(raw)) == cid and CommunicatorId(memoryview(raw)) == cid
    again = pickle.loads(pickle.dumps(cid))
    assert type(again) is CommunicatorId and again == cid
    assert repr(cid) == "CommunicatorId(0001020304050607...)"
    assert bytes(cid._c()) == raw
    for bad in (b"", raw[:127], raw + b"\0"):
        with pytest.raises(cucore.InvalidArgumentError, match="128 bytes"):
            CommunicatorId(bad)


def test_a_communicator_does_not_pickle():
    comm = object.__new__(Communicator)
    comm._h = None
    with pytest.raises(TypeError, match="CommunicatorId"):
        pickle.dumps(comm)
    assert repr(comm) == "<Communicator (closed)>"
    with pytest.raises(cucore.InvalidHandleError, match="Communicator is closed"):
        comm.check()


def test_group_end_without_a_group(lib):
    assert communicator.group_depth() == 0
    with pytest.raises(cucore.InvalidStateError, match="no group is open"):
        communicator.group_end()


def _child(script, **env):
    """`script` in a child Python (libcucore loads NCCL once per process), with `env` set (None: unset)."""
    from cucore import _lib
    full = dict(os.environ, PYTHONPATH=str(REPO / "bindings" / "python"), CUCORE_LIBRARY=_lib.path())
    for key, value in env.items():
        if value is None:
            full.pop(key, None)
        else:
            full[key] = value
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], env=full, capture_output=True, text=True,
                       timeout=120, cwd=str(REPO))
    assert r.returncode == 0, f"child failed:\n{r.stdout}\n{r.stderr}"
    return r.stdout


def test_a_pip_installed_nccl_is_found(lib, tmp_path):
    # nvidia-nccl-cu13's layout: nvidia/nccl/lib/libnccl.so.2 in site-packages (here an empty file, which
    # libcucore then fails to load: NotSupportedError naming it).
    # Regular packages (with __init__.py), so that they win over a real nvidia package later on sys.path.
    nccl = tmp_path / "nvidia" / "nccl" / "lib" / "libnccl.so.2"
    nccl.parent.mkdir(parents=True)
    nccl.write_bytes(b"")
    for package in (tmp_path / "nvidia", tmp_path / "nvidia" / "nccl"):
        (package / "__init__.py").write_text("")
    script = f"""
        import os, sys
        sys.path.insert(0, {str(tmp_path)!r})
        import cucore
        from cucore import communicator
        assert "CUCORE_NCCL_PATH" not in os.environ
        try:
            communicator.library_version()
            raise SystemExit("an empty libnccl.so.2 loaded")
        except cucore.NotSupportedError as e:
            assert {str(nccl)!r} in str(e), str(e)
        print(os.environ["CUCORE_NCCL_PATH"])
        """
    assert _child(script, CUCORE_NCCL_PATH=None).strip() == str(nccl)
    # Set, it is kept.
    out = _child(script.replace('assert "CUCORE_NCCL_PATH" not in os.environ', "")
                 .replace(f"assert {str(nccl)!r} in str(e), str(e)", "assert '/nowhere/libnccl.so.2' in str(e)"),
                 CUCORE_NCCL_PATH="/nowhere/libnccl.so.2")
    assert out.strip() == "/nowhere/libnccl.so.2"
    # The CUDA 13 wheels' layout: nvidia/cu13/lib.
    other = tmp_path / "cu13"
    cu13 = other / "nvidia" / "cu13" / "lib" / "libnccl.so.2"
    cu13.parent.mkdir(parents=True)
    cu13.write_bytes(b"")
    (other / "nvidia" / "__init__.py").write_text("")
    out = _child(script.replace(repr(str(tmp_path)), repr(str(other))).replace(repr(str(nccl)), repr(str(cu13))),
                 CUCORE_NCCL_PATH=None)
    assert out.strip() == str(cu13)


def test_without_nccl_each_call_says_so_and_the_rest_works(lib):
    out = _child("""
        import cucore
        from cucore import communicator
        for call in (communicator.library_version, cucore.CommunicatorId.create, communicator.group_start,
                     lambda: cucore.Communicator.create_all([0])):
            try:
                call()
                raise SystemExit(f"{call} worked without NCCL")
            except cucore.NotSupportedError as e:
                assert "/nowhere/libnccl.so.2" in str(e), str(e)
            except cucore.NoDriverError:
                pass  # create_all needs the driver first, where there is none
        assert communicator.group_depth() == 0
        assert cucore.DataType.BFLOAT16.itemsize == 2 and cucore.version() >= (0, 1, 0)
        print("ok")
        """, CUCORE_NCCL_PATH="/nowhere/libnccl.so.2")
    assert out.strip() == "ok"


# ============================================================================================================
# Two GPUs (real, or the fake driver with the fake NCCL): one process driving both ranks
# ============================================================================================================

def _nccl_or_skip():
    """NCCL's version, or a skip: under the fake driver only the fake NCCL (test_fake_driver.py names it in
    CUCORE_NCCL_PATH; a real NCCL would drive the real driver)."""
    if FAKE_DRIVER and not os.environ.get("CUCORE_NCCL_PATH"):
        pytest.skip("no fake NCCL named in CUCORE_NCCL_PATH (libcucore_fake_nccl.so was not built)")
    try:
        return communicator.library_version()
    except cucore.NotSupportedError as e:
        if os.environ.get("CUCORE_TEST_REQUIRE_NCCL") == "1" and not FAKE_DRIVER:
            pytest.fail(f"CUCORE_TEST_REQUIRE_NCCL=1 (gpu_suite.sh: two GPUs and an NCCL) but NCCL is missing: {e}")
        pytest.skip(f"NCCL is missing: {e}")


def _two_devices():
    if cucore.Device.count() < 2:  # (gpu_suite.sh sets CUCORE_TEST_REQUIRE_NCCL only with two GPUs)
        pytest.skip(f"needs two GPUs; {cucore.Device.count()} visible")
    return cucore.Device(0), cucore.Device(1)


@pytest.fixture
def nccl_version(gpu):
    _two_devices()
    return _nccl_or_skip()


@pytest.fixture
def ranks(nccl_version):
    """Two communicators of one clique (create_all on devices 0 and 1) and a stream on each device."""
    devs = _two_devices()
    comms = Communicator.create_all(devs)
    streams = [d.create_stream() for d in devs]
    yield list(zip(comms, devs, streams))
    for s in streams:
        s.sync()
    for c in comms:
        c.close()
    devs[0].set_current()


def _buffer(dev, stream, data):
    buf = dev.allocate(len(data), stream=stream)
    buf.copy_from(data, stream=stream)
    return buf


def _read(buf, stream, dtype):
    return decode(dtype, buf.to_bytes(stream=stream))


ALL_DTYPES = [m.name.lower() for m in DataType]


def _dtypes(version):
    return [d for d in ALL_DTYPES if d not in FLOAT8 or version >= 22400]


@pytest.mark.gpu
def test_what_a_communicator_says(ranks):
    (c0, d0, _), (c1, d1, _) = ranks
    assert (c0.rank, c0.rank_count, c0.device) == (0, 2, d0)
    assert (c1.rank, c1.rank_count, c1.device) == (1, 2, d1)
    assert c0.handle and c1.handle and c0.handle != c1.handle
    assert c0 == c0 and c0 != c1 and len({c0, c1}) == 2
    c0.check()
    c1.check()
    assert repr(c1) == "<Communicator rank 1 of 2 on device 1>"
    with pytest.raises(TypeError, match="CommunicatorId"):
        pickle.dumps(c0)
    version = communicator.library_version()
    assert version >= 20000, version
    extra = Communicator.create_all([d1])  # a clique of one
    assert (extra[0].rank, extra[0].rank_count, extra[0].device) == (0, 1, d1)
    extra[0].close()
    extra[0].close()  # idempotent
    with pytest.raises(cucore.InvalidHandleError, match="Communicator is closed"):
        extra[0].rank
    with pytest.raises(cucore.InvalidArgumentError, match="both device 0"):
        Communicator.create_all([d0, 0])
    with pytest.raises(cucore.InvalidArgumentError, match="at least one device"):
        Communicator.create_all([])


@pytest.mark.gpu
def test_all_reduce_every_type_and_reduction(ranks, nccl_version):
    for dtype in _dtypes(nccl_version):
        for op in ("sum", "prod", "max", "min", "avg"):
            _check_all_reduce(ranks, dtype, op, in_place=(op in ("sum", "max")))
    _check_all_reduce(ranks, "float32", ReduceOp.SUM, in_place=False, count=5)  # a count below the sizes
    _check_all_reduce(ranks, DataType.INT32, "max", in_place=True, count=7)


def _dtype_name(dtype):
    return dtype.name.lower() if isinstance(dtype, DataType) else dtype


def _check_all_reduce(ranks, dtype, op, in_place, count=None, n=12):
    """All-reduce of every rank's rank_values (in place or into a buffer of ones), read back: the first `count`
    elements reduced, the rest untouched."""
    name = _dtype_name(dtype)
    bufs, outs, expect_n = [], [], n if count is None else count
    for c, d, s in ranks:
        bufs.append(_buffer(d, s, encode(name, rank_values(c.rank, n))))
        outs.append(None if in_place else _buffer(d, s, encode(name, [1] * n)))
    with communicator.group():
        for (c, _, s), b, o in zip(ranks, bufs, outs):
            c.all_reduce(b, o, count=count, dtype=dtype, op=op, stream=s)
    want = reduced(communicator.reduce_op(op).name.lower(), name, [rank_values(r, n) for r in range(2)])
    for (c, _, s), b, o in zip(ranks, bufs, outs):
        got = _read(b if in_place else o, s, name)
        assert got[:expect_n] == want[:expect_n], (name, op, c.rank)
        tail = rank_values(c.rank, n) if in_place else [1] * n
        assert got[expect_n:] == tail[expect_n:], (name, op, "past count")


@pytest.mark.gpu
def test_all_gather_and_reduce_scatter_every_type(ranks, nccl_version):
    n = 6
    for dtype in _dtypes(nccl_version):
        sends = [_buffer(d, s, encode(dtype, rank_values(c.rank, n))) for c, d, s in ranks]
        recvs = [d.allocate(2 * n * itemsize(dtype), stream=s) for _, d, s in ranks]
        with communicator.group():
            for (c, _, s), a, b in zip(ranks, sends, recvs):
                c.all_gather(a, b, dtype=dtype, stream=s)
        for (c, _, s), b in zip(ranks, recvs):
            assert _read(b, s, dtype) == rank_values(0, n) + rank_values(1, n), (dtype, c.rank)
        # reduce_scatter: each rank sends 2n elements; rank r keeps block r of the sum.
        sends = [_buffer(d, s, encode(dtype, rank_values(c.rank, 2 * n))) for c, d, s in ranks]
        recvs = [d.allocate(n * itemsize(dtype), stream=s) for _, d, s in ranks]
        with communicator.group():
            for (c, _, s), a, b in zip(ranks, sends, recvs):
                c.reduce_scatter(a, b, dtype=dtype, op="max", stream=s)
        total = reduced("max", dtype, [rank_values(r, 2 * n) for r in range(2)])
        for (c, _, s), b in zip(ranks, recvs):
            assert _read(b, s, dtype) == total[c.rank * n:(c.rank + 1) * n], (dtype, c.rank)
    # An explicit count below the sizes: the first `count` elements of each rank, in rank order.
    sends = [_buffer(d, s, encode("int64", rank_values(c.rank, n))) for c, d, s in ranks]
    recvs = [_buffer(d, s, encode("int64", [0] * 2 * n)) for _, d, s in ranks]
    with communicator.group():
        for (c, _, s), a, b in zip(ranks, sends, recvs):
            c.all_gather(a, b, count=2, dtype="int64", stream=s)
    for (c, _, s), b in zip(ranks, recvs):
        assert _read(b, s, "int64") == rank_values(0, 2) + rank_values(1, 2) + [0] * (2 * n - 4)


@pytest.mark.gpu
def test_broadcast_and_reduce_every_type(ranks, nccl_version):
    n = 5
    for dtype in _dtypes(nccl_version):
        for root in (0, 1):
            # Out of place, the other rank passing no send buffer.
            sends = [_buffer(d, s, encode(dtype, rank_values(c.rank, n))) if c.rank == root else None
                     for c, d, s in ranks]
            recvs = [_buffer(d, s, encode(dtype, [1] * n)) for _, d, s in ranks]
            with communicator.group():
                for (c, _, s), a, b in zip(ranks, sends, recvs):
                    c.broadcast(a, b, root=root, dtype=dtype, stream=s)
            for (c, _, s), b in zip(ranks, recvs):
                assert _read(b, s, dtype) == rank_values(root, n), (dtype, root, c.rank)
            # In place: every rank's buffer becomes the root's.
            bufs = [_buffer(d, s, encode(dtype, rank_values(c.rank, n))) for c, d, s in ranks]
            with communicator.group():
                for (c, _, s), b in zip(ranks, bufs):
                    c.broadcast(b, root=root, dtype=dtype, stream=s)
            for (c, _, s), b in zip(ranks, bufs):
                assert _read(b, s, dtype) == rank_values(root, n), (dtype, root, c.rank, "in place")
            # reduce: only the root's recv is written; the other rank passes none.
            sends = [_buffer(d, s, encode(dtype, rank_values(c.rank, n))) for c, d, s in ranks]
            recvs = [_buffer(d, s, encode(dtype, [1] * n)) if c.rank == root else None for c, d, s in ranks]
            with communicator.group():
                for (c, _, s), a, b in zip(ranks, sends, recvs):
                    if b is None:
                        c.reduce(a, root=root, dtype=dtype, op="sum", stream=s)  # in place: untouched off the root
                    else:
                        c.reduce(a, b, root=root, dtype=dtype, op="sum", stream=s)
            want = reduced("sum", dtype, [rank_values(r, n) for r in range(2)])
            for (c, _, s), a, b in zip(ranks, sends, recvs):
                if c.rank == root:
                    assert _read(b, s, dtype) == want, (dtype, root)
                assert _read(a, s, dtype) == rank_values(c.rank, n), (dtype, root, "send untouched")


@pytest.mark.gpu
def test_send_and_recv_both_ways(ranks, nccl_version):
    n = 9
    for dtype in _dtypes(nccl_version):
        sends = [_buffer(d, s, encode(dtype, rank_values(c.rank, n))) for c, d, s in ranks]
        recvs = [_buffer(d, s, encode(dtype, [1] * n)) for _, d, s in ranks]
        with communicator.group():
            for (c, _, s), a, b in zip(ranks, sends, recvs):
                peer = 1 - c.rank
                c.send(a, peer, dtype=dtype, stream=s)
                c.recv(b, peer, dtype=dtype, stream=s)
        for (c, _, s), b in zip(ranks, recvs):
            assert _read(b, s, dtype) == rank_values(1 - c.rank, n), (dtype, c.rank)
    # A count: 4 of 9 elements, one way.
    (c0, d0, s0), (c1, d1, s1) = ranks
    a = _buffer(d0, s0, encode("uint32", list(range(10, 19))))
    b = _buffer(d1, s1, encode("uint32", [0] * n))
    with communicator.group():
        c0.send(a, 1, count=4, dtype="uint32", stream=s0)
        c1.recv(b, peer=0, count=4, dtype="uint32", stream=s1)
    assert _read(b, s1, "uint32") == [10, 11, 12, 13] + [0] * 5


@pytest.mark.gpu
def test_errors_name_what_is_wrong(ranks):
    (c0, d0, s0), (c1, d1, s1) = ranks
    a = _buffer(d0, s0, encode("float32", [1.0] * 8))
    short = _buffer(d0, s0, encode("float32", [1.0] * 6))
    other = _buffer(d1, s1, encode("float32", [1.0] * 8))
    odd = d0.allocate(10, stream=s0)
    cases = [
        (lambda: c0.all_reduce(a, short, dtype="float32", stream=s0), cucore.InvalidArgumentError, "mismatched sizes"),
        (lambda: c0.all_reduce(a, short, count=7, dtype="float32", stream=s0), cucore.InvalidArgumentError,
         "'recv' holds 24 bytes"),
        (lambda: c0.all_reduce(odd, dtype="float32", stream=s0), cucore.InvalidArgumentError, "whole number"),
        (lambda: c0.all_reduce(other, dtype="float32", stream=s0), cucore.InvalidArgumentError, "memory of device 1"),
        (lambda: c0.all_reduce(a, dtype="float32", stream=s1), cucore.InvalidArgumentError, "stream of device 1"),
        (lambda: c0.all_gather(a, a, dtype="float32", stream=s0), cucore.InvalidArgumentError, "mismatched sizes"),
        (lambda: c0.reduce_scatter(a, a, dtype="float32", stream=s0), cucore.InvalidArgumentError, "mismatched"),
        (lambda: c0.broadcast(a, root=2, dtype="float32", stream=s0), cucore.InvalidArgumentError, "ranks are 0..1"),
        (lambda: c0.broadcast(None, a, root=0, dtype="float32", stream=s0), cucore.InvalidArgumentError,
         "on the root rank"),
        (lambda: c0.reduce(a, root=-1, dtype="float32", stream=s0), cucore.InvalidArgumentError, "ranks are 0..1"),
        (lambda: c0.send(a, 5, dtype="float32", stream=s0), cucore.InvalidArgumentError, "'peer' is 5"),
        (lambda: c0.recv(a, -1, dtype="float32", stream=s0), cucore.InvalidArgumentError, "'peer' is -1"),
        (lambda: c0.all_reduce(a, stream=s0), TypeError, "dtype is required"),
        (lambda: c0.all_reduce(a, dtype="float32", op="mean", stream=s0), cucore.InvalidArgumentError, "reduction"),
        (lambda: c0.all_reduce(a, dtype="float32", count=-1, stream=s0), ValueError, "count"),
        (lambda: c0.all_reduce(b"host bytes", dtype="float32", stream=s0), TypeError, "cucore Buffer"),
        (lambda: c0.all_reduce(a, dtype="float32", stream=None), TypeError, "stream"),
        (lambda: c0.all_gather(a, None, dtype="float32", stream=s0), TypeError, "recv buffer"),
        (lambda: c0.broadcast(None, root=0, dtype="float32", stream=s0), TypeError, "needs a buffer"),
        (lambda: c0.send(a, 2 ** 40, dtype="float32", stream=s0), cucore.InvalidArgumentError, "outside a C int"),
    ]
    for call, exc, words in cases:
        with pytest.raises(exc, match=words):
            call()
    pinned = cucore.LegacyPinnedMemoryResource().allocate(32)
    with pytest.raises(cucore.InvalidArgumentError, match="host memory"):
        c0.all_reduce(pinned, dtype="float32", stream=s0)
    closed = _buffer(d0, s0, encode("float32", [1.0] * 8))
    closed.close(s0)
    with pytest.raises(cucore.InvalidHandleError, match="Buffer is closed"):
        c0.all_reduce(closed, dtype="float32", stream=s0)
    s = d0.create_stream()
    s.close()
    with pytest.raises(cucore.InvalidHandleError, match="Stream is closed"):
        c0.all_reduce(a, dtype="float32", stream=s)
    # Nothing was enqueued by the failures: a real operation still works and gives the sum.
    with communicator.group():
        c0.all_reduce(a, dtype="float32", stream=s0)
        c1.all_reduce(other, dtype="float32", stream=s1)
    assert _read(a, s0, "float32") == [2.0] * 8 and _read(other, s1, "float32") == [2.0] * 8


@pytest.mark.gpu
def test_groups_nest_and_close_on_errors(ranks):
    (c0, d0, s0), (c1, d1, s1) = ranks
    bufs = [_buffer(d, s, encode("int32", [c.rank + 1] * 4)) for c, d, s in ranks]
    assert communicator.group_depth() == 0
    with communicator.group():
        assert communicator.group_depth() == 1
        with communicator.group():
            assert communicator.group_depth() == 2
            c0.all_reduce(bufs[0], dtype="int32", stream=s0)
        assert communicator.group_depth() == 1
        c1.all_reduce(bufs[1], dtype="int32", stream=s1)  # the outermost end starts both
    assert communicator.group_depth() == 0
    assert _read(bufs[0], s0, "int32") == [3] * 4 and _read(bufs[1], s1, "int32") == [3] * 4
    with pytest.raises(KeyError):
        with communicator.group():
            raise KeyError("the body's error")
    assert communicator.group_depth() == 0
    with pytest.raises(cucore.InvalidArgumentError, match="ranks are 0..1"):
        with communicator.group():
            c0.broadcast(bufs[0], root=3, dtype="int32", stream=s0)
    assert communicator.group_depth() == 0
    communicator.group_start()
    communicator.group_end()
    with pytest.raises(cucore.InvalidStateError):
        communicator.group_end()


def _live(kind):
    gc.collect()
    return cucore.live_object_count(kind)


@pytest.mark.gpu
def test_objects_dropped_right_after_the_call(nccl_version):
    d0, d1 = _two_devices()
    kinds = (cucore.ObjectType.COMMUNICATOR, cucore.ObjectType.BUFFER, cucore.ObjectType.STREAM)
    keep_streams = [d0.create_stream(), d1.create_stream()]
    before = {k: _live(k) for k in kinds}
    results = []
    comms = Communicator.create_all([d0, d1])
    with communicator.group():
        for c, d, s in zip(comms, (d0, d1), keep_streams):
            s.launch_host_func(time.sleep, 0.05)  # the operation waits behind this
            send = _buffer(d, s, encode("float64", rank_values(c.rank, 16)))
            recv = d.allocate(16 * 8, stream=s)
            # The send buffer and a stream made for the call are dropped right after it; so is the communicator.
            temp = d.create_stream()
            temp.wait(s)
            c.all_reduce(send, recv, dtype="float64", stream=temp)
            del send, temp
            c.close()
            results.append((recv, s))
        del comms, c
    gc.collect()
    d0.sync()  # the dropped streams' work (enqueued at the group's end) included
    d1.sync()
    want = reduced("sum", "float64", [rank_values(r, 16) for r in range(2)])
    for recv, s in results:
        assert _read(recv, s, "float64") == want
    del results, recv
    deadline = time.monotonic() + 10  # the holds go once libcucore has seen the streams pass them
    while {k: _live(k) for k in kinds} != before and time.monotonic() < deadline:
        time.sleep(0.01)
    after = {k: _live(k) for k in kinds}
    assert after == before, (before, after)


@pytest.mark.gpu
def test_foreign_streams_and_graph_builders_are_streams(ranks):
    (c0, d0, s0), (c1, d1, s1) = ranks

    class Foreign:  # anything with __cuda_stream__
        def __init__(self, s):
            self.s = s

        def __cuda_stream__(self):
            return self.s.__cuda_stream__()
    bufs = [_buffer(d, s, encode("uint8", [c.rank + 5] * 3)) for c, d, s in ranks]
    with communicator.group():
        c0.all_reduce(bufs[0], dtype=DataType.UINT8, stream=Foreign(s0))
        c1.all_reduce(bufs[1], dtype=DataType.UINT8, stream=Foreign(s1))
    assert _read(bufs[0], s0, "uint8") == [11] * 3 and _read(bufs[1], s1, "uint8") == [11] * 3


@pytest.mark.gpu
def test_an_operation_captured_by_a_graph_builder_is_held_by_the_graph(nccl_version):
    """A clique of one: all-reduce copies send into recv. Captured by a GraphBuilder, the graph holds the
    communicator and both buffers, which are dropped before the graph runs (twice)."""
    d0 = cucore.Device(0)
    d0.set_current()
    s = d0.create_stream()
    (comm,) = Communicator.create_all([d0])
    send = _buffer(d0, s, encode("int32", [4, 5, 6, 7]))
    recv = _buffer(d0, s, encode("int32", [0] * 4))
    s.sync()
    gb = d0.create_graph_builder().begin_building()
    comm.all_reduce(send, recv, dtype="int32", stream=gb)
    graph = gb.end_building().complete()
    before = _live(cucore.ObjectType.COMMUNICATOR)
    comm.close()
    del comm, send, gb  # dropped (not closed: close() frees memory at once): the graph holds the buffer
    assert _live(cucore.ObjectType.COMMUNICATOR) == before  # still held
    graph.launch(s)
    assert _read(recv, s, "int32") == [4, 5, 6, 7]
    recv.fill(0, stream=s)
    graph.launch(s)
    assert _read(recv, s, "int32") == [4, 5, 6, 7]
    graph.close()
    s.sync()
    deadline = time.monotonic() + 10
    while _live(cucore.ObjectType.COMMUNICATOR) != before - 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _live(cucore.ObjectType.COMMUNICATOR) == before - 1


# ---- peer access ---------------------------------------------------------------------------------------------

@pytest.mark.gpu
def test_device_peer_access_enable_and_disable(gpu):
    if cucore.Device.count() < 2:
        with pytest.raises(cucore.InvalidArgumentError, match="itself"):
            gpu.enable_peer_access(gpu)
        pytest.skip("needs two GPUs for the rest")
    d0, d1 = _two_devices()
    with pytest.raises(cucore.InvalidArgumentError, match="itself"):
        d0.enable_peer_access(0)
    with pytest.raises(cucore.InvalidArgumentError, match="itself"):
        d0.disable_peer_access(d0)
    with pytest.raises(TypeError):
        d0.enable_peer_access("1")
    if not d1.can_access_peer(d0):
        with pytest.raises(cucore.NotSupportedError):
            d1.enable_peer_access(d0)
        pytest.skip("device 1 cannot access device 0")
    d1.enable_peer_access(d0)
    d1.enable_peer_access(0)  # twice: no error
    d1.disable_peer_access(d0)
    with pytest.raises(cucore.InvalidStateError):
        d1.disable_peer_access(d0)  # not enabled any more
    d0.set_current()


# ============================================================================================================
# Two real GPUs
# ============================================================================================================

real_gpu_only = pytest.mark.skipif(FAKE_DRIVER, reason="the fake driver's memory and NCCL live in one process and "
                                                       "run no device code")

PEER_KERNEL = r"""
extern "C" __global__ void add_from(const int *src, int *dst, int n, int add) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i] + add;
}
"""


def _peer_kernel(dev):
    from test_launch import real_kernel
    dev.set_current()
    return real_kernel(PEER_KERNEL, "add_from", dev=dev)


@pytest.mark.gpu
@real_gpu_only
def test_a_kernel_on_device_1_reads_a_pool_buffer_of_device_0(gpu):
    d0, d1 = _two_devices()
    if not d1.can_access_peer(d0):
        pytest.skip("device 1 cannot access device 0's memory")
    n = 4096
    s0 = d0.create_stream()
    mr = cucore.DeviceMemoryResource(d0, cucore.DeviceMemoryResourceOptions())
    mr.peer_accessible_by.add(d1)
    src = mr.allocate(4 * n, stream=s0)
    src.copy_from(struct.pack(f"<{n}i", *range(n)), stream=s0)
    s0.sync()
    kernel = _peer_kernel(d1)
    s1 = d1.create_stream()
    dst = d1.allocate(4 * n, stream=s1)
    cucore.launch(s1, cucore.LaunchConfig(grid=(n + 255) // 256, block=256), kernel, src, dst, n, 7)
    assert list(struct.unpack(f"<{n}i", dst.to_bytes(stream=s1))) == [i + 7 for i in range(n)]
    # ... and writes into it.
    cucore.launch(s1, cucore.LaunchConfig(grid=(n + 255) // 256, block=256), kernel, dst, src, n, 1)
    s1.sync()
    assert list(struct.unpack(f"<{n}i", src.to_bytes(stream=s0))) == [i + 8 for i in range(n)]
    mr.peer_accessible_by.discard(d1)
    d0.set_current()


@pytest.mark.gpu
@real_gpu_only
def test_a_kernel_on_device_1_reads_cu_mem_alloc_memory_after_enable_peer_access(gpu):
    d0, d1 = _two_devices()
    if not d1.can_access_peer(d0):
        pytest.skip("device 1 cannot access device 0's memory")
    n = 1024
    raw = RawDriver()
    raw.need_memory()
    d0.set_current()  # device 0's primary context, current for the raw cuMemAlloc
    ptr = ctypes.c_uint64()
    raw.check(raw.cuMemAlloc_v2(ctypes.byref(ptr), 4 * n), "cuMemAlloc")  # in device 0's primary context
    try:
        raw.write(ptr.value, struct.pack(f"<{n}i", *range(0, 3 * n, 3)))
        foreign = cucore.Buffer.from_handle(ptr.value, 4 * n, device_id=0)
        kernel = _peer_kernel(d1)
        d1.enable_peer_access(d0)
        try:
            s1 = d1.create_stream()
            dst = d1.allocate(4 * n, stream=s1)
            cucore.launch(s1, cucore.LaunchConfig(grid=n // 256, block=256), kernel, foreign, dst, n, -1)
            assert list(struct.unpack(f"<{n}i", dst.to_bytes(stream=s1))) == [3 * i - 1 for i in range(n)]
            cucore.launch(s1, cucore.LaunchConfig(grid=n // 256, block=256), kernel, dst, foreign, n, 2)
            s1.sync()
            d0.set_current()
            assert list(struct.unpack(f"<{n}i", raw.read(ptr.value, 4 * n))) == [3 * i + 1 for i in range(n)]
        finally:
            d1.disable_peer_access(d0)
        foreign.close()
    finally:
        d0.set_current()
        raw.cuMemFree_v2(ptr.value)


def _rank_process(results, cid, rank, n):
    """One rank in its own spawned process: the id arrived pickled."""
    try:
        os.environ["NCCL_NVLS_ENABLE"] = "0"
        assert type(cid) is CommunicatorId and os.environ.get("NCCL_NVLS_ENABLE") == "0"
        dev = cucore.Device(rank)
        dev.set_current()
        s = dev.create_stream()
        comm = Communicator(dev, cid, 2, rank)
        facts = {"rank": comm.rank, "rank_count": comm.rank_count, "device": comm.device.device_id}
        buf = _buffer(dev, s, encode("float32", rank_values(rank, n)))
        comm.all_reduce(buf, dtype="float32", stream=s)
        facts["all_reduce"] = _read(buf, s, "float32")
        send = _buffer(dev, s, encode("int64", rank_values(rank, n)))
        gathered = dev.allocate(2 * n * 8, stream=s)
        comm.all_gather(send, gathered, dtype="int64", stream=s)
        facts["all_gather"] = _read(gathered, s, "int64")
        b = _buffer(dev, s, encode("bfloat16", rank_values(rank, n)))
        comm.broadcast(b, root=1, dtype="bfloat16", stream=s)
        facts["broadcast"] = _read(b, s, "bfloat16")
        got = _buffer(dev, s, encode("int32", [0] * n))
        with communicator.group():  # a send and a receive on one thread
            comm.send(send, 1 - rank, count=n, dtype="int32", stream=s)
            comm.recv(got, 1 - rank, dtype="int32", stream=s)
        facts["sendrecv"] = _read(got, s, "int32")
        s.sync()
        comm.check()
        comm.close()
        results.put(("done", rank, facts))
    except BaseException:
        results.put(("error", rank, traceback.format_exc()))


@pytest.mark.gpu
@real_gpu_only
def test_one_process_per_gpu(nccl_version, monkeypatch):
    ctx = multiprocessing.get_context("spawn")
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "0")  # the children's environment
    cid = CommunicatorId.create()
    n = 10
    results = ctx.Queue()
    procs = [ctx.Process(target=_rank_process, args=(results, cid, r, n)) for r in range(2)]
    for p in procs:
        p.start()
    try:
        got = {}
        for _ in procs:
            try:
                kind, rank, value = results.get(timeout=DEADLINE)
            except queue.Empty:
                pytest.fail(f"a rank hung for {DEADLINE} s and was killed")
            assert kind == "done", value
            got[rank] = value
        for rank, facts in got.items():
            assert (facts["rank"], facts["rank_count"], facts["device"]) == (rank, 2, rank)
            assert facts["all_reduce"] == reduced("sum", "float32", [rank_values(r, n) for r in range(2)])
            assert facts["all_gather"] == rank_values(0, n) + rank_values(1, n)
            assert facts["broadcast"] == rank_values(1, n)
            # int64 values 2..4 read as int32: each value then a 0 (little endian), from the other rank.
            other = rank_values(1 - rank, n)
            assert facts["sendrecv"] == [v for x in other[:n // 2] for v in (x, 0)]
        for p in procs:
            p.join(DEADLINE)
            assert p.exitcode == 0
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
                p.join(10)
        results.close()


@pytest.mark.gpu
def test_threads_one_per_rank(nccl_version):
    """Communicator(device, id, 2, rank) from two threads of one process, each blocking until both joined."""
    d0, d1 = _two_devices()
    cid = CommunicatorId.create()
    made, errors = {}, []

    def join(rank, dev):
        try:
            made[rank] = Communicator(dev.device_id, bytes(cid), 2, rank)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
    threads = [threading.Thread(target=join, args=(r, d)) for r, d in ((0, d0), (1, d1))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(DEADLINE)
    assert not errors, errors
    assert [(made[r].rank, made[r].rank_count, made[r].device) for r in (0, 1)] == [(0, 2, d0), (1, 2, d1)]
    streams = [d0.create_stream(), d1.create_stream()]
    bufs = [_buffer(d, s, encode("int32", [r + 1] * 4)) for r, d, s in ((0, d0, streams[0]), (1, d1, streams[1]))]
    with communicator.group():
        for r in (0, 1):
            made[r].all_reduce(bufs[r], dtype="int32", op="prod", stream=streams[r])
    assert _read(bufs[0], streams[0], "int32") == [2] * 4 and _read(bufs[1], streams[1], "int32") == [2] * 4
    for c in made.values():
        c.close()
    d0.set_current()
