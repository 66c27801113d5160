"""Batched memory operations and stream memory operations (include/cucore/memory_operations.h). The batched
ones are exported by cucore.utils under cuda.core's names.

    from cucore import utils
    utils.copy_batch(stream, srcs, dsts)                      # one cuMemcpyBatchAsync (CUDA 13.0 drivers)
    utils.copy_batch(stream, srcs, dsts, options=utils.CopyOptions(src_access_order="during_api_call"))
    utils.prefetch_batch(stream, managed_buffers, dev)        # one location for all, or one per buffer
    utils.discard_batch(stream, managed_buffers)
    utils.discard_prefetch_batch(stream, managed_buffers, cucore.Host())

    producer.write_value(flag, 1)                             # after the producer's earlier work
    consumer.wait_value(flag, 1)                              # the consumer's later work waits for it (GEQ)
    consumer.wait_value(flag, 1 << 40, offset=8, width=64, condition="eq")
    stream.batch_memory_ops([StreamMemoryOp.write_value(flag, 2), StreamMemoryOp.memory_barrier("device")])

The stream memory operations are Stream methods (write_value, wait_value, flush_remote_writes,
memory_barrier, batch_memory_ops) whose work is done here. Their memory is a Buffer (at `offset`) or an int
device address the caller keeps alive; it must not be managed memory, and 32-/64-bit values must be 4-/8-byte
aligned. The ordering a wait makes is invisible to CUDA: what writes the value must not itself wait behind the
waiting stream.
"""
from __future__ import annotations

import contextlib
import ctypes
import operator
import sys
from dataclasses import dataclass
from enum import Enum
from typing import Any, Dict, Optional, Sequence, Union

from . import _lib
from .buffer import Buffer, _HostMemory
from .common import closed_error, raise_error
from .copy_3d import Copy3dC, _check_layout, _end, _extent, _region
from .device import Device
from .host import Host
from .managed_memory import to_location
from .stream import _stream_of

(_cucore_copy_3d_batch,) = _lib.bind(globals(), "cucore_copy_3d_batch")
(_cucore_copy_batch, _cucore_prefetch_batch, _cucore_discard_batch, _cucore_discard_prefetch_batch,
 _cucore_stream_write_value_32, _cucore_stream_write_value_64, _cucore_stream_wait_value_32,
 _cucore_stream_wait_value_64, _cucore_stream_flush_remote_writes, _cucore_stream_memory_barrier,
 _cucore_stream_batch_memory_ops) = _lib.bind(
    globals(), "cucore_copy_batch", "cucore_prefetch_batch", "cucore_discard_batch",
    "cucore_discard_prefetch_batch", "cucore_stream_write_value_32", "cucore_stream_write_value_64",
    "cucore_stream_wait_value_32", "cucore_stream_wait_value_64", "cucore_stream_flush_remote_writes",
    "cucore_stream_memory_barrier", "cucore_stream_batch_memory_ops")

_ItemC = _lib.STRUCTS["cucore_copy_batch_item_t"]
_OptionsC = _lib.STRUCTS["cucore_copy_options_t"]
_OpC = _lib.STRUCTS["cucore_stream_memory_op_t"]
_LocationC = _lib.STRUCTS["cucore_location_t"]
_C = _lib.C
_c_void_p = ctypes.c_void_p
_cast = ctypes.cast


def _address(h):
    """A handle's value, for a struct field or an array element (None: NULL, which the library refuses)."""
    return _cast(h, _c_void_p).value if h is not None else None

__all__ = ["CopyOptions", "MemcpySrcAccessOrder", "MemcpyOverlapMode", "copy_batch", "copy_3d_batch", "prefetch_batch",
           "discard_batch", "discard_prefetch_batch", "StreamMemoryOp", "WaitCondition", "MemoryBarrierScope"]


# ---- batched copies -------------------------------------------------------------------------------------

class MemcpySrcAccessOrder(str, Enum):
    """How a batched copy may read its source (cucore_memcpy_src_access_order_t; the destination is always
    written in stream order).

    STREAM: in stream order (the default). DURING_API_CALL: out of stream order, all reads done before
    copy_batch returns (a source that is about to change or go; no earlier work on the stream may use it).
    ANY: out of stream order, possibly after the call: keep the source unchanged until the copy is done."""
    STREAM = "stream"
    DURING_API_CALL = "during_api_call"
    ANY = "any"


class MemcpyOverlapMode(str, Enum):
    """Whether a batched copy should overlap with compute work (cucore_memcpy_overlap_mode_t; a hint the
    driver may ignore)."""
    DEFAULT = "default"
    PREFER_OVERLAP_WITH_COMPUTE = "prefer_overlap_with_compute"


_ORDER_C = {MemcpySrcAccessOrder.STREAM: _C["CUCORE_MEMCPY_SRC_ACCESS_ORDER_STREAM"],
            MemcpySrcAccessOrder.DURING_API_CALL: _C["CUCORE_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL"],
            MemcpySrcAccessOrder.ANY: _C["CUCORE_MEMCPY_SRC_ACCESS_ORDER_ANY"]}
_OVERLAP_C = {MemcpyOverlapMode.DEFAULT: _C["CUCORE_MEMCPY_OVERLAP_MODE_DEFAULT"],
              MemcpyOverlapMode.PREFER_OVERLAP_WITH_COMPUTE:
                  _C["CUCORE_MEMCPY_OVERLAP_MODE_PREFER_OVERLAP_WITH_COMPUTE"]}


def _enum_value(cls, value, what):
    try:
        return cls(value)
    except ValueError:
        names = ", ".join(repr(m.value) for m in cls)
        raise ValueError(f"{what} must be a {cls.__name__} or one of {names}, not {value!r}") from None


def _hint(value, what):
    if value is None:
        return None
    if not isinstance(value, (Device, Host)):
        raise TypeError(f"{what} must be a Device, a Host or None, not {type(value).__name__}")
    return to_location(value, what)


@dataclass(frozen=True)
class CopyOptions:
    """The options of copies in a batch (cucore_copy_options_t), as cuda.core's utils.CopyOptions.

    src_access_order: a MemcpySrcAccessOrder or its value ("stream", "during_api_call", "any").
    src_location_hint, dst_location_hint: a Device or a Host where the operand is expected to be, or None. The
        driver reads them only for managed memory (devices with concurrent managed access) and pageable memory
        (devices that access it); they neither prefetch nor advise.
    overlap_mode: a MemcpyOverlapMode or its value ("default", "prefer_overlap_with_compute").
    """
    src_access_order: Union[MemcpySrcAccessOrder, str] = MemcpySrcAccessOrder.STREAM
    src_location_hint: Union[Device, Host, None] = None
    dst_location_hint: Union[Device, Host, None] = None
    overlap_mode: Union[MemcpyOverlapMode, str] = MemcpyOverlapMode.DEFAULT

    def __post_init__(self) -> None:
        object.__setattr__(self, "src_access_order", _enum_value(MemcpySrcAccessOrder, self.src_access_order,
                                                                 "CopyOptions.src_access_order"))
        object.__setattr__(self, "overlap_mode", _enum_value(MemcpyOverlapMode, self.overlap_mode,
                                                             "CopyOptions.overlap_mode"))
        _hint(self.src_location_hint, "CopyOptions.src_location_hint")
        _hint(self.dst_location_hint, "CopyOptions.dst_location_hint")

    def _to_c(self):
        c = _OptionsC()
        c.struct_size = ctypes.sizeof(c)
        c.src_access_order = _ORDER_C[self.src_access_order]
        c.overlap_mode = _OVERLAP_C[self.overlap_mode]
        for name, value in (("src_location_hint", self.src_location_hint),
                            ("dst_location_hint", self.dst_location_hint)):
            loc = _hint(value, name)
            if loc is not None:
                setattr(c, name, loc)
        return c


_DEFAULT_OPTIONS = CopyOptions()


def _buffers(value, what):
    if isinstance(value, Buffer):
        raise TypeError(f"{what} must be a sequence of Buffers, not a single Buffer (for one copy use "
                        f"Buffer.copy_to / Buffer.copy_from)")
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{what} must be a sequence of Buffers, not {type(value).__name__}")
    for i, b in enumerate(value):
        if not isinstance(b, Buffer):
            raise TypeError(f"{what}[{i}] must be a Buffer, not {type(b).__name__}")
    return value


def copy_batch(stream: Any, srcs: Sequence[Buffer], dsts: Sequence[Buffer], *,
               options: Union[CopyOptions, Sequence[CopyOptions], None] = None) -> None:
    """Copy srcs[i] into dsts[i] for every i in one cuMemcpyBatchAsync, ordered on `stream` (as cuda.core's
    utils.copy_batch). Sizes are the sources'; each destination must have the same size. The batch runs in
    stream order as a whole, its copies in no particular order among themselves (no copy may depend on
    another; destinations must not overlap). `options`: one CopyOptions for every copy, a sequence of one per
    copy, or None (stream-ordered defaults). Pinned host memory takes part as a Buffer of a pinned resource.

    Not on the legacy default stream (the driver refuses it) nor on a stream being captured (the driver has no
    graph node for batched copies): InvalidArgumentError / InvalidStateError. NotSupportedError on drivers
    before CUDA 13.0."""
    srcs = _buffers(srcs, "srcs")
    dsts = _buffers(dsts, "dsts")
    n = len(srcs)
    if len(dsts) != n:
        raise ValueError(f"srcs and dsts differ in length ({n} and {len(dsts)})")
    if options is None or isinstance(options, CopyOptions):
        per_copy = [options or _DEFAULT_OPTIONS] * n
    else:
        per_copy = list(options)
        if len(per_copy) != n:
            raise ValueError(f"options has {len(per_copy)} entries; it must have one per copy ({n}) or be one "
                             f"CopyOptions")
        for i, o in enumerate(per_copy):
            if not isinstance(o, CopyOptions):
                raise TypeError(f"options[{i}] must be a CopyOptions, not {type(o).__name__}")
    s = _stream_of(stream)
    items = (_ItemC * n)()
    unique: Dict[CopyOptions, int] = {}
    for i, (src, dst) in enumerate(zip(srcs, dsts)):
        size = src.size
        if dst.size != size:
            raise ValueError(f"srcs[{i}] has {size} bytes and dsts[{i}] {dst.size}: sizes must match")
        item = items[i]
        item.src = src._hv if src._h is not None else None  # a closed buffer: NULL, which the library refuses
        item.dst = dst._hv if dst._h is not None else None
        item.size = size
        item.options_index = unique.setdefault(per_copy[i], len(unique))
    structs = [o._to_c() for o in unique]
    pointers = (ctypes.POINTER(_OptionsC) * len(structs))(*[ctypes.pointer(c) for c in structs])
    st = _cucore_copy_batch(s._h, items, n, pointers, len(structs))
    if st:
        raise_error(st, s, *srcs, *dsts)


def _strided(dst, src, extent, hosts, i):
    """(the cucore_copy_3d_t of copies[i], as copy_3d() checks and describes one, or None for a copy of
    width 0; the Buffers it names; whether a side is host memory). Host memory is entered in `hosts`, held
    until the library has the batch."""
    what = f"copy_3d_batch(): copies[{i}]"
    width, rows, depth = _extent(extent)
    regions = {"dst": _region(dst, width, rows), "src": _region(src, width, rows)}
    for side, r in regions.items():
        _check_layout(r, side, width, rows, depth)
    c = Copy3dC()
    c.struct_size = ctypes.sizeof(c)
    c.width, c.rows, c.depth = width, rows, depth
    named = [r.memory for r in regions.values() if isinstance(r.memory, Buffer)]
    on_host = len(named) < 2
    if width == 0:
        return None, named, on_host  # nothing to copy (and empty host memory has no address to give)
    for side, r in regions.items():
        cr = getattr(c, side)
        cr.offset, cr.pitch, cr.height, cr.x, cr.y, cr.z = r.offset, r.pitch, r.height, r.x, r.y, r.z
        mem = r.memory
        if isinstance(mem, Buffer):
            if mem._h is None:
                raise closed_error(mem)
            cr.buffer = mem._hv
            continue
        try:
            m = hosts.enter_context(_HostMemory(mem, side == "dst"))
        except (TypeError, BufferError) as e:
            raise TypeError(f"{what}: {side} must be a Buffer, writable host memory for a destination, or a "
                            f"MemoryRegion of one ({e})") from None
        end = _end(r, width, rows, depth)
        if end > m.nbytes:
            raise ValueError(f"{what}: the {side} region ends at byte {end}, beyond its host memory of "
                             f"{m.nbytes} bytes")
        cr.host = m.address
    return c, named, on_host


def copy_3d_batch(stream: Any, copies: Sequence[Any], *, options: Optional[CopyOptions] = None) -> None:
    """Copy strided regions in one cuMemcpy3DBatchAsync, ordered on `stream` (cucore_copy_3d_batch): each copy
    is a (dst, src, extent) tuple as copy_3d() takes them (MemoryRegions, Buffers or host memory; extent
    (width, rows) or (width, rows, depth)), checked as copy_3d() checks it. `options`: one CopyOptions for
    every copy. Host memory (pageable or not) is waited for before returning, so it may change afterwards.
    CUDA 13.0 drivers; not while the stream is captured."""
    s = _stream_of(stream)
    o = (options or _DEFAULT_OPTIONS)._to_c()
    with contextlib.ExitStack() as hosts:
        structs, buffers, host = [], [], False
        for i, copy in enumerate(copies):
            try:
                dst, src, extent = copy
            except (TypeError, ValueError):
                raise TypeError(f"copy_3d_batch(): copies[{i}] must be a (dst, src, extent) tuple") from None
            c, named, on_host = _strided(dst, src, extent, hosts, i)
            buffers.extend(named)
            if c is not None:
                structs.append(c)
                host = host or on_host
        pointers = (ctypes.POINTER(Copy3dC) * len(structs))(*[ctypes.pointer(c) for c in structs])
        st = _cucore_copy_3d_batch(s._h, pointers, len(structs), o)
        if not st and host:  # host memory: the copies must be done before it goes
            s.sync()
    if st:
        raise_error(st, s, *buffers)


# ---- batched prefetches and discards -----------------------------------------------------------------------

def _managed_handles(buffers, what="buffers"):
    buffers = _buffers(buffers, what)
    return buffers, (_c_void_p * len(buffers))(*[b._hv if b._h is not None else None for b in buffers])


def _location_list(locations, count):
    """One cucore_location_t for all the buffers, or one each (a sequence of `count`)."""
    if isinstance(locations, (Device, Host, str, int, tuple)) and not (
            isinstance(locations, tuple) and locations and not isinstance(locations[0], str)):
        one = to_location(locations, "locations")
        return (_LocationC * 1)(one), 1
    locations = list(locations)
    if len(locations) != count:
        raise ValueError(f"locations has {len(locations)} entries; it must have one per buffer ({count}) or be "
                         f"one location")
    return (_LocationC * count)(*[to_location(l, f"locations[{i}]") for i, l in enumerate(locations)]), count


def prefetch_batch(stream: Any, buffers: Sequence[Buffer], locations: Any) -> None:
    """Migrate managed buffers in one cuMemPrefetchBatchAsync, ordered on `stream`: all to one location (a
    Device, a Host, an ordinal, "host", ...) or each to its own (a sequence of one per buffer). CUDA 13.0
    drivers (NotSupportedError before)."""
    buffers, handles = _managed_handles(buffers)
    locs, count = _location_list(locations, len(buffers))
    s = _stream_of(stream)
    st = _cucore_prefetch_batch(s._h, handles, len(buffers), locs, count)
    if st:
        raise_error(st, s, *buffers)


def discard_batch(stream: Any, buffers: Sequence[Buffer]) -> None:
    """Tell the driver the managed buffers' contents are no longer needed (cuMemDiscardBatchAsync), ordered on
    `stream`: reading them before writing gives unspecified values. CUDA 13.0 drivers."""
    buffers, handles = _managed_handles(buffers)
    s = _stream_of(stream)
    st = _cucore_discard_batch(s._h, handles, len(buffers))
    if st:
        raise_error(st, s, *buffers)


def discard_prefetch_batch(stream: Any, buffers: Sequence[Buffer], locations: Any) -> None:
    """discard_batch, then make the pages resident at the location(s) (cuMemDiscardAndPrefetchBatchAsync);
    locations as prefetch_batch. CUDA 13.0 drivers."""
    buffers, handles = _managed_handles(buffers)
    locs, count = _location_list(locations, len(buffers))
    s = _stream_of(stream)
    st = _cucore_discard_prefetch_batch(s._h, handles, len(buffers), locs, count)
    if st:
        raise_error(st, s, *buffers)


# ---- stream memory operations ---------------------------------------------------------------------------

class WaitCondition(str, Enum):
    """What a wait waits for: GEQ (a cyclic >=: (int)(*address - value) >= 0, the default), EQ, AND
    ((*address & value) != 0) or NOR (~(*address | value) != 0; devices with CAN_USE_STREAM_WAIT_VALUE_NOR)."""
    GEQ = "geq"
    EQ = "eq"
    AND = "and"
    NOR = "nor"


class MemoryBarrierScope(str, Enum):
    """The scope of a memory barrier: the whole system (the default) or the device."""
    SYSTEM = "system"
    DEVICE = "device"


_CONDITION_C = {c: _C[f"CUCORE_STREAM_WAIT_VALUE_{c.name}"] for c in WaitCondition}
_WAIT_FLUSH = _C["CUCORE_STREAM_WAIT_VALUE_FLUSH"]
_WRITE_NO_MEMORY_BARRIER = _C["CUCORE_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER"]
_SCOPE_C = {MemoryBarrierScope.SYSTEM: _C["CUCORE_MEMORY_BARRIER_SCOPE_SYSTEM"],
            MemoryBarrierScope.DEVICE: _C["CUCORE_MEMORY_BARRIER_SCOPE_DEVICE"]}
_OP = {name: _C[f"CUCORE_STREAM_MEMORY_OP_{name}"] for name in (
    "WAIT_VALUE_32", "WRITE_VALUE_32", "FLUSH_REMOTE_WRITES", "WAIT_VALUE_64", "WRITE_VALUE_64", "BARRIER")}


def _memory(target, offset, what="target"):
    """(buffer handle or None, offset) for a Buffer at `offset` or an int device address (+ offset)."""
    offset = operator.index(offset)
    if offset < 0:
        raise ValueError(f"offset must be >= 0, not {offset}")
    if isinstance(target, Buffer):
        return target._h, offset
    if isinstance(target, bool) or not isinstance(target, int):
        raise TypeError(f"{what} must be a Buffer or an int device address, not {type(target).__name__}")
    if not 0 < target + offset < 2**64:
        raise ValueError(f"{what}: address {target} + offset {offset} is not an address")
    return None, target + offset


def _width(width):
    if width not in (32, 64):
        raise ValueError(f"width must be 32 or 64, not {width!r}")
    return width


def _value(value, width):
    value = operator.index(value)
    if not 0 <= value < 2**width:
        raise ValueError(f"value {value} does not fit in {width} unsigned bits")
    return value


def _wait_flags(condition, flush):
    return _CONDITION_C[_enum_value(WaitCondition, condition, "condition")] | (_WAIT_FLUSH if flush else 0)


def write_value(stream: Any, target: Union[Buffer, int], value: int, *, offset: int = 0, width: int = 32,
                no_memory_barrier: bool = False) -> None:
    """Write `value` (`width` 32 or 64 bits) at byte `offset` of `target` (a Buffer, or an int device address)
    after `stream`'s earlier work (cuStreamWriteValue32/64). The write is fenced after the stream's earlier
    writes unless `no_memory_barrier` (which drivers may refuse)."""
    handle, off = _memory(target, offset)
    fn = _cucore_stream_write_value_32 if _width(width) == 32 else _cucore_stream_write_value_64
    s = _stream_of(stream)
    st = fn(s._h, handle, off, _value(value, width), _WRITE_NO_MEMORY_BARRIER if no_memory_barrier else 0)
    if st:
        raise_error(st, s, target)


def wait_value(stream: Any, target: Union[Buffer, int], value: int, *, offset: int = 0, width: int = 32,
               condition: Union[WaitCondition, str] = WaitCondition.GEQ, flush: bool = False) -> None:
    """Make `stream`'s later work wait until the value (`width` bits) at byte `offset` of `target` meets
    `condition` against `value` ("geq", the default, is a cyclic >=; "eq", "and", "nor"), then flush remote
    writes if `flush` (cuStreamWaitValue32/64). NotSupportedError for "nor", flush or 64 bits on a device
    without them."""
    handle, off = _memory(target, offset)
    fn = _cucore_stream_wait_value_32 if _width(width) == 32 else _cucore_stream_wait_value_64
    s = _stream_of(stream)
    st = fn(s._h, handle, off, _value(value, width), _wait_flags(condition, flush))
    if st:
        raise_error(st, s, target)


def flush_remote_writes(stream: Any) -> None:
    """Flush outstanding remote (e.g. GPUDirect RDMA) writes before `stream`'s later work; NotSupportedError
    where the device cannot (CAN_FLUSH_REMOTE_WRITES)."""
    s = _stream_of(stream)
    st = _cucore_stream_flush_remote_writes(s._h)
    if st:
        raise_error(st, s)


def memory_barrier(stream: Any, scope: Union[MemoryBarrierScope, str] = MemoryBarrierScope.SYSTEM) -> None:
    """A memory barrier in `stream`'s order, of `scope` "system" (the default) or "device"."""
    s = _stream_of(stream)
    st = _cucore_stream_memory_barrier(s._h, _SCOPE_C[_enum_value(MemoryBarrierScope, scope, "scope")])
    if st:
        raise_error(st, s)


class StreamMemoryOp:
    """One operation of Stream.batch_memory_ops (cucore_stream_memory_op_t), made by its constructors:
    write_value, wait_value, flush_remote_writes, memory_barrier (arguments as the Stream methods). It keeps
    its Buffer until the batch is queued."""

    __slots__ = ("_c", "_buffer")

    def __init__(self, kind: str, flags: int = 0, target: Union[Buffer, int, None] = None, offset: int = 0,
                 value: int = 0) -> None:
        """Prefer the constructors; `kind` is a cucore_stream_memory_op_type_t name without its prefix."""
        self._c = _OpC(_OP[kind], flags, None, 0, value)
        self._buffer = None
        if target is not None:
            handle, off = _memory(target, offset)
            self._c.buffer = _address(handle)
            self._c.offset = off
            self._buffer = target if isinstance(target, Buffer) else None

    @classmethod
    def write_value(cls, target: Union[Buffer, int], value: int, *, offset: int = 0, width: int = 32,
                    no_memory_barrier: bool = False) -> StreamMemoryOp:
        """A write of `value` (`width` 32 or 64 bits) at `offset` of `target` (a Buffer or a device address);
        `no_memory_barrier` drops the fence before the write."""
        return cls(f"WRITE_VALUE_{_width(width)}", _WRITE_NO_MEMORY_BARRIER if no_memory_barrier else 0, target,
                   offset, _value(value, width))

    @classmethod
    def wait_value(cls, target: Union[Buffer, int], value: int, *, offset: int = 0, width: int = 32,
                   condition: Union[WaitCondition, str] = WaitCondition.GEQ, flush: bool = False) -> StreamMemoryOp:
        """A wait until the value at `offset` of `target` meets `condition` against `value` (`width` 32 or 64
        bits); `flush` flushes remote writes before the work after the wait."""
        return cls(f"WAIT_VALUE_{_width(width)}", _wait_flags(condition, flush), target, offset, _value(value, width))

    @classmethod
    def flush_remote_writes(cls) -> StreamMemoryOp:
        """A flush of remote (RDMA) writes into the GPU's memory; needs CAN_FLUSH_REMOTE_WRITES."""
        return cls("FLUSH_REMOTE_WRITES")

    @classmethod
    def memory_barrier(cls, scope: Union[MemoryBarrierScope, str] = MemoryBarrierScope.SYSTEM) -> StreamMemoryOp:
        """A memory barrier of `scope` ("system" or "device") ordering the writes around it."""
        return cls("BARRIER", _SCOPE_C[_enum_value(MemoryBarrierScope, scope, "scope")])

    def __repr__(self):
        kind = {v: k for k, v in _OP.items()}.get(self._c.type, self._c.type)
        return f"StreamMemoryOp({kind}, flags={self._c.flags:#x}, offset={self._c.offset}, value={self._c.value})"


def batch_memory_ops(stream: Any, ops: Sequence[StreamMemoryOp]) -> None:
    """Enqueue the operations on `stream` in one cuStreamBatchMemOp, in order (at most 255)."""
    ops = list(ops)
    for i, op in enumerate(ops):
        if not isinstance(op, StreamMemoryOp):
            raise TypeError(f"ops[{i}] must be a StreamMemoryOp, not {type(op).__name__}")
    array = (_OpC * len(ops))(*[op._c for op in ops])
    s = _stream_of(stream)
    st = _cucore_stream_batch_memory_ops(s._h, array, len(ops))
    if st:
        raise_error(st, s, *[op._buffer for op in ops if op._buffer is not None])


# The Stream methods (write_value, wait_value, ...) do their work here; stream.py is below this module.
_lib.hand_down(("stream", "buffer"), memory_operations=sys.modules[__name__])
