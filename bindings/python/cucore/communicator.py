"""Collective communication between GPUs through NCCL (include/cucore/communicator.h).

    import cucore
    from cucore import communicator

    comms = cucore.Communicator.create_all([0, 1])      # one process driving two GPUs
    with communicator.group():                           # one thread, several ranks: group their operations
        for c, buf, s in zip(comms, buffers, streams):
            c.all_reduce(buf, dtype="float32", stream=s)  # in place: every rank's buf holds the sum

    uid = cucore.CommunicatorId.create()                 # one process per GPU: pass uid (pickled) to the others
    comm = cucore.Communicator(device, uid, rank_count, rank)   # blocks until every rank has joined

A Communicator is one rank of a clique (NCCL's ncclComm_t). Operations are enqueued on a stream of the
communicator's device (a Stream, a GraphBuilder, or anything with __cuda_stream__) and keep the communicator,
their buffers and their stream alive until the stream has passed them, so everything may be dropped right after
the call. Counts are in elements of `dtype`; without a count, the buffers' sizes give it (and must then match
exactly). `recv=None` works in place where NCCL allows it (all_reduce, broadcast, reduce). Failures raise the
package's CUDAError subclasses; without NCCL, NotSupportedError naming what was tried.

Where NCCL is found: libcucore loads CUCORE_NCCL_PATH if set, else libnccl.so.2 through the system loader. When
CUCORE_NCCL_PATH is unset and the pip package nvidia-nccl-cu* is installed (`nvidia/nccl/lib/libnccl.so.2` in
site-packages), this module sets CUCORE_NCCL_PATH to that library before its first NCCL call, so a pip-installed
NCCL (the one PyTorch uses) works without LD_LIBRARY_PATH. Set CUCORE_NCCL_PATH to choose another.

Above every other module but __init__ (bindings/python/README.md, "Layers"): it takes Devices, Buffers and
Streams and hands nothing down.
"""
from __future__ import annotations

import ctypes
import enum
import importlib.util
import operator
import os
import pathlib
import sys
import threading
from typing import Any, List, Optional, Sequence, Union

from . import _lib
from ._handle import HandleObject
from .buffer import Buffer
from .common import InvalidArgumentError, Status, _u64, closed_error, raise_error
from .device import Device, _device, _device_from_owned_handle
from .stream import _open_stream_handle

(_cucore_communicator_library_version, _cucore_data_type_size, _cucore_communicator_id_create,
 _cucore_communicator_create, _cucore_communicator_create_all, _cucore_communicator_retain,
 _cucore_communicator_release, _cucore_communicator_rank, _cucore_communicator_rank_count,
 _cucore_communicator_device, _cucore_communicator_handle, _cucore_communicator_check,
 _cucore_communicator_all_reduce, _cucore_communicator_all_gather, _cucore_communicator_reduce_scatter,
 _cucore_communicator_broadcast, _cucore_communicator_reduce, _cucore_communicator_send,
 _cucore_communicator_recv, _cucore_communicator_group_start, _cucore_communicator_group_end,
 _cucore_communicator_group_depth) = _lib.bind(
    globals(), "cucore_communicator_library_version", "cucore_data_type_size", "cucore_communicator_id_create",
    "cucore_communicator_create", "cucore_communicator_create_all", "cucore_communicator_retain",
    "cucore_communicator_release", "cucore_communicator_rank", "cucore_communicator_rank_count",
    "cucore_communicator_device", "cucore_communicator_handle", "cucore_communicator_check",
    "cucore_communicator_all_reduce", "cucore_communicator_all_gather", "cucore_communicator_reduce_scatter",
    "cucore_communicator_broadcast", "cucore_communicator_reduce", "cucore_communicator_send",
    "cucore_communicator_recv", "cucore_communicator_group_start", "cucore_communicator_group_end",
    "cucore_communicator_group_depth")
(_fast_communicator_release,) = _lib.bind_unchecked(globals(), "cucore_communicator_release")

IdC = _lib.STRUCTS["cucore_communicator_id_t"]
ID_BYTES = _lib.C["CUCORE_COMMUNICATOR_ID_BYTES"]
_c_int = ctypes.c_int
_c_void_p = ctypes.c_void_p
_INT_MIN, _INT_MAX = -(1 << 31), (1 << 31) - 1


def _invalid(message: str) -> InvalidArgumentError:
    return InvalidArgumentError(Status.ERROR_INVALID_ARGUMENT, message, 0)


# ---- finding NCCL ----------------------------------------------------------------------------------------------

_nccl_lock = threading.Lock()
_nccl_looked = False


def _package_dirs(name: str) -> List[pathlib.Path]:
    """The directories of the package `name` (found, not imported beyond its parents), or none."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return []
    return [pathlib.Path(d) for d in ((spec.submodule_search_locations or ()) if spec is not None else ())]


def _pip_nccl() -> Optional[str]:
    """The libnccl.so.2 of the pip package nvidia-nccl-cu13 (or -cu12): nvidia/nccl/lib in site-packages (or the
    CUDA 13 wheels' nvidia/cu13/lib), or None."""
    candidates = [d / "lib" / "libnccl.so.2" for d in _package_dirs("nvidia.nccl")]
    candidates += [d / cu / "lib" / "libnccl.so.2" for d in _package_dirs("nvidia") for cu in ("cu13", "cu12")]
    return next((str(c) for c in candidates if c.is_file()), None)


def _find_nccl() -> None:
    """Before the first NCCL call of the process: point CUCORE_NCCL_PATH at a pip-installed NCCL when it is unset
    (libcucore reads it once, when it loads NCCL)."""
    global _nccl_looked
    if _nccl_looked:
        return
    with _nccl_lock:
        if not _nccl_looked:
            if not os.environ.get("CUCORE_NCCL_PATH"):
                found = _pip_nccl()
                if found:
                    os.environ["CUCORE_NCCL_PATH"] = found
            _nccl_looked = True


def library_version() -> int:
    """The version of the NCCL libcucore loaded (NCCL_VERSION_CODE: 22809 for 2.28.9); loads it if needed.
    NotSupportedError (naming what was tried) when NCCL is missing."""
    _find_nccl()
    out = _c_int()
    st = _cucore_communicator_library_version(out)
    if st:
        raise_error(st)
    return out.value


# ---- element types and reductions -------------------------------------------------------------------------------

class DataType(enum.IntEnum):
    """Element types of collective operations (cucore_data_type_t; NCCL's ncclDataType_t). The 8-bit floats need
    NCCL 2.24 or later. Wherever a `dtype` is taken, a member, its name in lower case ("float32", "bfloat16"), a
    NumPy dtype or scalar type, or a PyTorch dtype does too."""
    INT8 = _lib.C["CUCORE_DATA_TYPE_INT8"]
    UINT8 = _lib.C["CUCORE_DATA_TYPE_UINT8"]
    INT32 = _lib.C["CUCORE_DATA_TYPE_INT32"]
    UINT32 = _lib.C["CUCORE_DATA_TYPE_UINT32"]
    INT64 = _lib.C["CUCORE_DATA_TYPE_INT64"]
    UINT64 = _lib.C["CUCORE_DATA_TYPE_UINT64"]
    FLOAT16 = _lib.C["CUCORE_DATA_TYPE_FLOAT16"]
    FLOAT32 = _lib.C["CUCORE_DATA_TYPE_FLOAT32"]
    FLOAT64 = _lib.C["CUCORE_DATA_TYPE_FLOAT64"]
    BFLOAT16 = _lib.C["CUCORE_DATA_TYPE_BFLOAT16"]
    FLOAT8_E4M3 = _lib.C["CUCORE_DATA_TYPE_FLOAT8_E4M3"]
    FLOAT8_E5M2 = _lib.C["CUCORE_DATA_TYPE_FLOAT8_E5M2"]

    @property
    def itemsize(self) -> int:
        """Bytes per element (cucore_data_type_size; needs no NCCL)."""
        out = ctypes.c_uint32()
        st = _cucore_data_type_size(int(self), out)
        if st:
            raise_error(st)
        return out.value


class ReduceOp(enum.IntEnum):
    """Reductions (cucore_reduce_op_t; NCCL's ncclRedOp_t). AVG divides the sum by the number of ranks (integer
    types: truncated). Wherever an `op` is taken, its name in lower case ("sum", "prod", ...) does too."""
    SUM = _lib.C["CUCORE_REDUCE_SUM"]
    PROD = _lib.C["CUCORE_REDUCE_PROD"]
    MAX = _lib.C["CUCORE_REDUCE_MAX"]
    MIN = _lib.C["CUCORE_REDUCE_MIN"]
    AVG = _lib.C["CUCORE_REDUCE_AVG"]


# Names a dtype goes by: the members' (lower case) and NumPy's, ml_dtypes' and PyTorch's spellings of them.
_DTYPE_NAMES = {m.name.lower(): m for m in DataType}
# ("float", "int", "byte" are left out: NumPy and PyTorch read them as different types.)
_DTYPE_NAMES.update({"float8_e4m3fn": DataType.FLOAT8_E4M3, "half": DataType.FLOAT16, "double": DataType.FLOAT64})
_OP_NAMES = {m.name.lower(): m for m in ReduceOp}


# Names NumPy and PyTorch give different widths (NumPy's "float" is 64 bits, PyTorch's 32).
_AMBIGUOUS_NAMES = frozenset({"float", "int", "byte", "long", "short", "uint"})


def data_type(dtype: Any) -> DataType:
    """`dtype` as a DataType: a member, its value, a name ("float32", "bfloat16", "float8_e4m3fn", NumPy's "f4"
    when NumPy is imported), a NumPy dtype or scalar type, or a PyTorch dtype (torch.float32). TypeError for
    None or a non-type, InvalidArgumentError (a ValueError) for a type NCCL has no element type for."""
    if isinstance(dtype, DataType):
        return dtype
    if dtype is None:
        raise TypeError("dtype is required (a DataType, a name such as 'float32', or a NumPy dtype)")
    if isinstance(dtype, int) and not isinstance(dtype, bool):
        try:
            return DataType(dtype)
        except ValueError:
            raise _invalid(f"dtype {dtype} is not a DataType value") from None
    name = None
    if isinstance(dtype, str):
        name = dtype.lower()
        if name.startswith("torch."):
            name = name[len("torch."):]
    elif type(dtype).__module__ == "torch":  # torch.float32: its str is "torch.float32"
        name = str(dtype)[len("torch."):]
    else:
        name = getattr(dtype, "name", None)
        if not isinstance(name, str) and isinstance(dtype, type):
            name = getattr(dtype, "__name__", None)  # a NumPy scalar type (numpy.float32) without NumPy's help
    if isinstance(name, str):
        found = _DTYPE_NAMES.get(name.lower())
        if found is not None:
            return found
        numpy = sys.modules.get("numpy")  # NumPy's spellings ("f4", "<i8") only from a program that imported it
        # ("float", "int" and "byte" stay refused: NumPy and PyTorch read them as different types)
        if numpy is not None and name.lower() not in _AMBIGUOUS_NAMES:
            try:
                found = _DTYPE_NAMES.get(numpy.dtype(dtype).name)
            except (TypeError, ValueError):
                found = None
            if found is not None:
                return found
        raise _invalid(f"dtype {dtype!r} has no NCCL element type; one of {', '.join(m.name.lower() for m in DataType)}")
    raise TypeError(f"dtype must be a DataType, a name or a NumPy/PyTorch dtype, not {type(dtype).__name__}")


def reduce_op(op: Any) -> ReduceOp:
    """`op` as a ReduceOp: a member, its value, or its name ("sum", "prod", "max", "min", "avg")."""
    if isinstance(op, ReduceOp):
        return op
    if isinstance(op, str):
        found = _OP_NAMES.get(op.lower())
        if found is None:
            raise _invalid(f"op {op!r} is not a reduction; one of {', '.join(_OP_NAMES)}")
        return found
    if isinstance(op, int) and not isinstance(op, bool):
        try:
            return ReduceOp(op)
        except ValueError:
            raise _invalid(f"op {op} is not a ReduceOp value") from None
    raise TypeError(f"op must be a ReduceOp or its name, not {type(op).__name__}")


# ---- arguments ------------------------------------------------------------------------------------------------

def _rank_arg(value: Any, what: str) -> int:
    """A rank (root, peer, rank, rank_count) as a C int; libcucore checks the range of ranks."""
    if isinstance(value, bool):
        raise TypeError(f"{what} must be an int, not bool")
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an int, not {type(value).__name__}") from None
    if not _INT_MIN <= value <= _INT_MAX:
        raise _invalid(f"{what} is {value}, outside a C int")
    return value


def _count_arg(count: Optional[int]) -> int:
    """None (all of it: the buffers give the count) is 0 to libcucore."""
    return 0 if count is None else _u64(count, "count")


def _buffer_arg(buffer: Any, what: str) -> Any:
    """A Buffer's handle argument; TypeError for anything else, InvalidHandleError once it is closed."""
    if not isinstance(buffer, Buffer):
        raise TypeError(f"{what} must be a cucore Buffer, not {type(buffer).__name__}")
    h = buffer._h
    if h is None:
        raise closed_error(buffer)
    return h


# ---- ids -------------------------------------------------------------------------------------------------------

class CommunicatorId(bytes):
    """The 128 bytes that name one clique of ranks across processes (cucore_communicator_id_t, NCCL's
    ncclUniqueId): `CommunicatorId.create()` in one process, then `bytes(id)` or the object itself (it pickles,
    so multiprocessing passes it) to every process that joins with `Communicator(device, id, rank_count, rank)`.
    A bytes object: compares, hashes and slices as its bytes."""

    def __new__(cls, data: Union[bytes, bytearray, memoryview]) -> CommunicatorId:
        raw = bytes(data)
        if len(raw) != ID_BYTES:
            raise _invalid(f"a CommunicatorId is {ID_BYTES} bytes, not {len(raw)}")
        return super().__new__(cls, raw)

    @classmethod
    def create(cls) -> CommunicatorId:
        """A new id (ncclGetUniqueId); this process listens on a socket where the ranks meet."""
        _find_nccl()
        c = IdC()
        st = _cucore_communicator_id_create(c)
        if st:
            raise_error(st)
        return cls(ctypes.string_at(ctypes.addressof(c), ID_BYTES))

    @classmethod
    def from_bytes(cls, data: Union[bytes, bytearray, memoryview]) -> CommunicatorId:
        """The id whose bytes are `data` (128 of them, as `bytes(id)` gave them)."""
        return cls(data)

    def __reduce__(self):
        return (CommunicatorId, (bytes(self),))

    def __repr__(self) -> str:
        return f"CommunicatorId({bytes(self[:8]).hex()}...)"

    def _c(self) -> Any:
        return IdC.from_buffer_copy(self)


# ---- communicators ---------------------------------------------------------------------------------------------

class Communicator(HandleObject):
    """One rank of a clique of GPUs that reduce, gather and exchange buffers together (NCCL's ncclComm_t).

    `Communicator(device, id, rank_count, rank)` joins the clique `id` (a CommunicatorId) as `rank` on `device`
    (a Device or ordinal) and blocks until all `rank_count` ranks have joined (from their own processes or
    threads; one thread making several must do it inside `group()`). `Communicator.create_all(devices)` makes
    all the ranks of one process's GPUs at once. `handle` is the ncclComm_t, for calling NCCL directly.

    The collectives are methods; each takes keyword-only `count` (elements; None: the buffers' sizes, which
    must then match exactly), `dtype` (required: a DataType, "float32", a NumPy dtype...) and `stream` (of the
    communicator's device). Not picklable: pass the CommunicatorId to other processes instead."""

    __slots__ = ("_rank", "_rank_count")
    _rank: int
    _rank_count: int
    _release = staticmethod(_fast_communicator_release)
    _handle_fn = staticmethod(_cucore_communicator_handle)

    def __init__(self, device: Union[Device, int], id: Union[CommunicatorId, bytes], rank_count: int,
                 rank: int) -> None:
        self._h = None
        self._raw = None
        dev = _device(device)
        if not isinstance(id, CommunicatorId):
            if not isinstance(id, (bytes, bytearray, memoryview)):
                raise TypeError(f"id must be a CommunicatorId (or its {ID_BYTES} bytes), not {type(id).__name__}")
            id = CommunicatorId(id)
        rank_count = _rank_arg(rank_count, "rank_count")
        rank = _rank_arg(rank, "rank")
        _find_nccl()
        out = _c_void_p()
        st = _cucore_communicator_create(dev._h, id._c(), rank_count, rank, out)
        if st:
            raise_error(st, dev)
        self._h = _lib.handle_arg(out.value)
        self._rank = rank
        self._rank_count = rank_count

    @classmethod
    def _wrap(cls, address: int, rank: int, rank_count: int) -> Communicator:
        """A new wrapper owning the +1 reference at `address`."""
        obj = object.__new__(cls)
        obj._h = _lib.handle_arg(address)
        obj._raw = None
        obj._rank = rank
        obj._rank_count = rank_count
        return obj

    @classmethod
    def create_all(cls, devices: Optional[Sequence[Union[Device, int]]] = None) -> List[Communicator]:
        """One process driving several GPUs: a clique of one rank per device, rank i on devices[i]
        (ncclCommInitAll); None: every visible device. All or nothing: on failure none is made."""
        devs = list(Device.get_all_devices()) if devices is None else [_device(d) for d in devices]
        n = len(devs)
        if n == 0:
            raise _invalid("create_all needs at least one device")
        handles = (_c_void_p * n)(*[ctypes.cast(d._h, _c_void_p).value for d in devs])
        out = (_c_void_p * n)()
        _find_nccl()
        st = _cucore_communicator_create_all(handles, n, out)
        if st:
            raise_error(st)
        return [cls._wrap(out[i] or 0, i, n) for i in range(n)]  # never NULL on success

    def __reduce__(self):
        raise TypeError("a Communicator cannot be pickled: pass its CommunicatorId to the other process and "
                        "make a Communicator there")

    def __repr__(self) -> str:
        if self._h is None:
            return "<Communicator (closed)>"
        try:
            return f"<Communicator rank {self._rank} of {self._rank_count} on device {self.device.device_id}>"
        except Exception:
            return f"<Communicator rank {self._rank} of {self._rank_count}>"

    def _handle_arg(self) -> Any:
        h = self._h
        if h is None:
            raise closed_error(self)
        return h

    def _int(self, fn: Any) -> int:
        out = _c_int()
        st = fn(self._handle_arg(), out)
        if st:
            raise_error(st, self)
        return out.value

    @property
    def rank(self) -> int:
        """This communicator's rank in its clique (ncclCommUserRank)."""
        return self._int(_cucore_communicator_rank)

    @property
    def rank_count(self) -> int:
        """The number of ranks in its clique (ncclCommCount)."""
        return self._int(_cucore_communicator_rank_count)

    @property
    def device(self) -> Device:
        """The Device the communicator runs on."""
        out = _c_void_p()
        st = _cucore_communicator_device(self._handle_arg(), out)
        if st:
            raise_error(st, self)
        return _device_from_owned_handle(out)

    def check(self) -> None:
        """Raise the error NCCL reported asynchronously on this communicator (ncclCommGetAsyncError), if any."""
        st = _cucore_communicator_check(self._handle_arg())
        if st:
            raise_error(st, self)

    # ---- collectives --------------------------------------------------------------------------------------------

    def all_reduce(self, send: Buffer, recv: Optional[Buffer] = None, *, count: Optional[int] = None,
                   dtype: Any = None, op: Any = "sum", stream: Any) -> None:
        """Reduce (`op`: "sum" by default) `count` elements of every rank's `send` into every rank's `recv`
        (ncclAllReduce); `recv` None: in place, into `send`."""
        h = self._handle_arg()
        sh = _buffer_arg(send, "send")
        rh = sh if recv is None else _buffer_arg(recv, "recv")
        t, o, n = data_type(dtype), reduce_op(op), _count_arg(count)
        keep, st_h = _open_stream_handle(stream)
        st = _cucore_communicator_all_reduce(h, sh, rh, n, t, o, st_h)
        if st:
            raise_error(st, self, send, recv, keep)

    def all_gather(self, send: Buffer, recv: Buffer, *, count: Optional[int] = None, dtype: Any = None,
                   stream: Any) -> None:
        """Concatenate every rank's `count` elements of `send` into every rank's `recv`, in rank order
        (ncclAllGather); `recv` holds rank_count times as much. In place: `send` a view of `recv` at this rank's
        block. Without a count, `send`'s size gives it and `recv` must be exactly rank_count times that."""
        if recv is None:
            raise TypeError("all_gather needs a recv buffer (rank_count times send's size)")
        h = self._handle_arg()
        sh, rh = _buffer_arg(send, "send"), _buffer_arg(recv, "recv")
        t, n = data_type(dtype), _count_arg(count)
        keep, st_h = _open_stream_handle(stream)
        st = _cucore_communicator_all_gather(h, sh, rh, n, t, st_h)
        if st:
            raise_error(st, self, send, recv, keep)

    def reduce_scatter(self, send: Buffer, recv: Buffer, *, count: Optional[int] = None, dtype: Any = None,
                       op: Any = "sum", stream: Any) -> None:
        """Reduce every rank's `send` (rank_count * count elements) and leave block r of the result in rank r's
        `recv` (`count` elements; ncclReduceScatter). In place: `recv` a view of `send` at this rank's block.
        Without a count, `recv`'s size gives it and `send` must be exactly rank_count times that."""
        if recv is None:
            raise TypeError("reduce_scatter needs a recv buffer (send's size / rank_count)")
        h = self._handle_arg()
        sh, rh = _buffer_arg(send, "send"), _buffer_arg(recv, "recv")
        t, o, n = data_type(dtype), reduce_op(op), _count_arg(count)
        keep, st_h = _open_stream_handle(stream)
        st = _cucore_communicator_reduce_scatter(h, sh, rh, n, t, o, st_h)
        if st:
            raise_error(st, self, send, recv, keep)

    def broadcast(self, send: Optional[Buffer], recv: Optional[Buffer] = None, *, root: int,
                  count: Optional[int] = None, dtype: Any = None, stream: Any) -> None:
        """Copy rank `root`'s `send` into every rank's `recv` (ncclBroadcast). `recv` None: in place (`send` is
        the buffer on every rank); only the root reads `send`, so other ranks may pass None with a `recv`."""
        h = self._handle_arg()
        if send is None and recv is None:
            raise TypeError("broadcast needs a buffer: send (in place), or recv (and send on the root)")
        sh = None if send is None else _buffer_arg(send, "send")
        rh = sh if recv is None else _buffer_arg(recv, "recv")
        t, n, r = data_type(dtype), _count_arg(count), _rank_arg(root, "root")
        keep, st_h = _open_stream_handle(stream)
        st = _cucore_communicator_broadcast(h, sh, rh, n, t, r, st_h)
        if st:
            raise_error(st, self, send, recv, keep)

    def reduce(self, send: Buffer, recv: Optional[Buffer] = None, *, root: int, count: Optional[int] = None,
               dtype: Any = None, op: Any = "sum", stream: Any) -> None:
        """Reduce every rank's `send` into rank `root`'s `recv` (ncclReduce). `recv` None: in place, into the
        root's `send`; other ranks' `recv` is never written."""
        h = self._handle_arg()
        sh = _buffer_arg(send, "send")
        rh = sh if recv is None else _buffer_arg(recv, "recv")
        t, o, n, r = data_type(dtype), reduce_op(op), _count_arg(count), _rank_arg(root, "root")
        keep, st_h = _open_stream_handle(stream)
        st = _cucore_communicator_reduce(h, sh, rh, n, t, o, r, st_h)
        if st:
            raise_error(st, self, send, recv, keep)

    def send(self, buffer: Buffer, peer: int, *, count: Optional[int] = None, dtype: Any = None,
             stream: Any) -> None:
        """Send `count` elements of `buffer` (None: all of it) to rank `peer`, which receives them with recv()
        (ncclSend). A send and its receive driven by one thread need a `group()` around them."""
        h = self._handle_arg()
        bh = _buffer_arg(buffer, "buffer")
        t, n, p = data_type(dtype), _count_arg(count), _rank_arg(peer, "peer")
        keep, st_h = _open_stream_handle(stream)
        st = _cucore_communicator_send(h, bh, n, t, p, st_h)
        if st:
            raise_error(st, self, buffer, keep)

    def recv(self, buffer: Buffer, peer: int, *, count: Optional[int] = None, dtype: Any = None,
             stream: Any) -> None:
        """Receive `count` elements (None: `buffer`'s size) from rank `peer` into `buffer` (ncclRecv)."""
        h = self._handle_arg()
        bh = _buffer_arg(buffer, "buffer")
        t, n, p = data_type(dtype), _count_arg(count), _rank_arg(peer, "peer")
        keep, st_h = _open_stream_handle(stream)
        st = _cucore_communicator_recv(h, bh, n, t, p, st_h)
        if st:
            raise_error(st, self, buffer, keep)


# ---- groups ----------------------------------------------------------------------------------------------------

def group_start() -> None:
    """Open a group on the calling thread (ncclGroupStart; groups nest): the operations and creations that follow
    go to NCCL together at the outermost group_end(). Prefer `with group():`."""
    _find_nccl()
    st = _cucore_communicator_group_start()
    if st:
        raise_error(st)


def group_end() -> None:
    """Close the innermost group of the calling thread (ncclGroupEnd); at the outermost, the grouped operations
    start. InvalidStateError when no group is open."""
    st = _cucore_communicator_group_end()
    if st:
        raise_error(st)


def group_depth() -> int:
    """How many groups are open on the calling thread (0: none)."""
    return int(_cucore_communicator_group_depth())


class group:
    """`with group():` around operations (or creations) of several ranks driven by one thread, which NCCL needs
    to run together (ncclGroupStart / ncclGroupEnd). Nests. When the body raises, the group is still closed and
    the body's exception is the one raised."""

    __slots__ = ()

    def __enter__(self) -> None:
        group_start()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            group_end()
            return
        try:
            group_end()
        except Exception:  # noqa: BLE001  (the body's exception says more)
            pass
