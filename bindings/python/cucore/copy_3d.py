"""2D and 3D strided copies (cucore_copy_3d) between buffers and host memory.

    # rows 2..5 of an 8-row image with 256-byte rows, columns 16..79, into a tightly packed host array
    img = dev.allocate(256 * 8, stream=s)
    out = numpy.empty((4, 64), numpy.uint8)
    cucore.copy_3d(out, cucore.MemoryRegion(img, pitch=256, x=16, y=2), (64, 4), stream=s)

Each side is a MemoryRegion, or a Buffer or host object by itself (then laid out tightly: pitch = the copy's
width, height = its rows). Host memory is any contiguous buffer-protocol object (bytes, bytearray, NumPy
arrays, ...; writable for a destination); it is checked here to hold every byte the copy touches, which
libcucore cannot check. From pageable host memory the source has been read when the call returns; into it,
the copy has completed when the call returns (as Buffer.copy_from_host / copy_to_host).
"""
from __future__ import annotations

import contextlib
import ctypes
import operator
from typing import Any, Tuple, Union
from dataclasses import dataclass

from . import _lib
from .buffer import Buffer, _HostMemory
from .common import _U64_MAX, closed_error, raise_error
from .stream import _stream_of

(_cucore_copy_3d,) = _lib.bind(globals(), "cucore_copy_3d")

Copy3dC = _lib.STRUCTS["cucore_copy_3d_t"]


@dataclass
class MemoryRegion:
    """One side of a strided copy: `memory` (a Buffer, or a host buffer-protocol object) laid out as rows of
    `pitch` bytes and slices of `height` rows from byte `offset`; the copy starts at byte `x` of row `y` of
    slice `z`. `height` may stay 0 for 2D copies."""
    memory: object
    pitch: int
    height: int = 0
    offset: int = 0
    x: int = 0
    y: int = 0
    z: int = 0

    def __post_init__(self) -> None:
        for name in ("pitch", "height", "offset", "x", "y", "z"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"MemoryRegion.{name} must be an int, not {type(value).__name__}")
            if not 0 <= value <= _U64_MAX:
                raise ValueError(f"MemoryRegion.{name} must be in [0, 2**64), not {value}")


def _extent(extent):
    try:
        values = tuple(extent)
    except TypeError:
        raise TypeError(f"extent must be (width in bytes, rows) or (width in bytes, rows, depth), not "
                        f"{type(extent).__name__}") from None
    if len(values) not in (2, 3):
        raise ValueError(f"extent must be (width in bytes, rows) or (width in bytes, rows, depth), not {extent!r}")
    out = []
    for name, v in zip(("width", "rows", "depth"), values):
        if isinstance(v, bool):
            raise TypeError(f"extent {name} must be an int, not bool")
        try:
            v = operator.index(v)
        except TypeError:
            raise TypeError(f"extent {name} must be an int, not {type(v).__name__}") from None
        if not (0 if name == "width" else 1) <= v <= _U64_MAX:
            raise ValueError(f"extent {name} must be {'>= 0' if name == 'width' else '>= 1'}, not {v}")
        out.append(v)
    if len(out) == 2:
        out.append(1)
    return out


def _region(side, width, rows):
    if isinstance(side, MemoryRegion):
        return side
    return MemoryRegion(side, pitch=width, height=rows)


def _check_layout(r, what, width, rows, depth):
    if r.x + width > r.pitch:
        raise ValueError(f"copy_3d(): {what}: x ({r.x}) + width ({width}) exceeds the pitch ({r.pitch})")
    if depth > 1 and r.y + rows > r.height:
        raise ValueError(f"copy_3d(): {what}: y ({r.y}) + rows ({rows}) exceeds the height ({r.height}) of a "
                         f"3D copy's slices")


def _end(r, width, rows, depth):
    """One past the last byte of the layout the copy touches. A 2D copy's slice height is what the driver is
    given (libcucore raises it to hold the rows), so a z of a 2D copy counts slices of that height."""
    if width == 0:
        return r.offset
    height = r.height if depth > 1 else max(r.height, r.y + rows)
    return r.offset + ((r.z + depth - 1) * height + r.y + rows - 1) * r.pitch + r.x + width


def copy_3d(dst: Any, src: Any, extent: Union[Tuple[int, int], Tuple[int, int, int]], *, stream: Any) -> None:
    """Copy `depth` slices of `rows` rows of `width` bytes (extent = (width, rows) or (width, rows, depth))
    from `src` to `dst`, in order on `stream`. Each side is a MemoryRegion, or a Buffer or host object
    laid out tightly. Raises ValueError for a region that does not fit its host memory or its pitch and
    height, TypeError for what is neither a Buffer nor host memory."""
    width, rows, depth = _extent(extent)
    d = _region(dst, width, rows)
    s = _region(src, width, rows)
    for r, what in ((d, "dst"), (s, "src")):
        _check_layout(r, what, width, rows, depth)
    c = Copy3dC()
    c.struct_size = ctypes.sizeof(c)
    c.width, c.rows, c.depth = width, rows, depth
    with contextlib.ExitStack() as hosts:
        for r, cr, what, writable in ((d, c.dst, "dst", True), (s, c.src, "src", False)):
            cr.offset, cr.pitch, cr.height, cr.x, cr.y, cr.z = r.offset, r.pitch, r.height, r.x, r.y, r.z
            mem = r.memory
            if isinstance(mem, Buffer):
                if mem._h is None:
                    raise closed_error(mem)
                cr.buffer = ctypes.cast(mem._h, ctypes.c_void_p).value  # the handle's value
                continue
            try:
                m = hosts.enter_context(_HostMemory(mem, writable))
            except TypeError:
                raise TypeError(f"copy_3d(): {what} must be a Buffer, host memory (a buffer-protocol object) or "
                                f"a MemoryRegion of one, not {type(mem).__name__}") from None
            except BufferError as e:
                raise ValueError(f"copy_3d(): {what} host memory cannot be used: {e}"
                                 + (" (a destination must be writable)" if writable else "")) from None
            end = _end(r, width, rows, depth)
            if end > m.nbytes:
                raise ValueError(f"copy_3d(): the {what} region ends at byte {end}, beyond its host memory of "
                                 f"{m.nbytes} bytes")
            cr.host = m.address
        strm = _stream_of(stream)
        if width == 0:
            return  # nothing to copy (and empty host memory has no address to give)
        st = _cucore_copy_3d(c, strm._h)
    if st:
        raise_error(st, strm, *(r.memory for r in (d, s) if isinstance(r.memory, Buffer)))
