"""Copies between StridedMemoryViews (strided_memory_view.py: copy_from, copy_to) as 3D strided copies
(copy_3d.py, cucore_copy_3d): the dimensions both layouts lay out alike are merged, the innermost (at most
three) become one copy, and the rest are looped over, one copy per index. Kept apart from the view so each
file has one concern; it reads the views' private fields (_ptr, _layout_, _buffer, ...)."""
from __future__ import annotations

import ctypes
import itertools
from typing import Any, Optional, Tuple

from ._strided_layout import dlpack_of_dtype
from .common import closed_error
from .copy_3d import MemoryRegion, copy_3d
from .device import _device
from .stream import _stream_of

_MAX_COPIES = 1 << 16  # copy_3d calls one copy may make (each is a driver call)


def _copy_plan(shape: Tuple[int, ...], dst: Tuple[int, ...], src: Tuple[int, ...], itemsize: int) -> Any:
    """How to move the elements of `shape` between the element strides `dst` and `src` with 3D copies:
    (width in bytes, rows, depth, (dst pitch, dst slice height), (src pitch, src slice height), loops), where
    loops are the (extent, dst byte stride, src byte stride) of the dimensions left over, one copy_3d per
    index of them. Dimensions both sides lay out alike are merged first."""
    dims = [(e, d, s) for e, d, s in zip(shape, dst, src) if e != 1]
    if any(d <= 0 or s <= 0 for _, d, s in dims):
        raise NotImplementedError("copies between views with negative or zero strides are not supported")
    merged: list = []  # innermost first
    for e, d, s in reversed(dims):
        if merged and merged[-1][1] * merged[-1][0] == d and merged[-1][2] * merged[-1][0] == s:
            merged[-1] = (merged[-1][0] * e, merged[-1][1], merged[-1][2])
        else:
            merged.append((e, d, s))
    if merged and merged[0][1] == 1 and merged[0][2] == 1:
        width, rest = merged[0][0] * itemsize, merged[1:]
    else:
        width, rest = itemsize, merged
    rows = depth = dh = sh = 1
    dp = sp = width
    if rest:
        rows, dr, sr = rest.pop(0)
        dp, sp, dh, sh = dr * itemsize, sr * itemsize, rows, rows
        if dp < width or sp < width:
            raise NotImplementedError(f"rows overlap (strides {dst}, {src}): not a strided copy")
        if rest:
            e, dz, sz = rest[0]
            if dz % dr == 0 and sz % sr == 0 and dz // dr >= rows and sz // sr >= rows:  # whole slices of rows
                rest.pop(0)
                depth, dh, sh = e, dz // dr, sz // sr
    loops = [(e, d * itemsize, s * itemsize) for e, d, s in rest]
    calls = 1
    for e, _, _ in loops:
        calls *= e
    if calls > _MAX_COPIES:
        raise NotImplementedError(f"the layouts (strides {dst}, {src}) would need {calls} strided copies")
    return width, rows, depth, (dp, dh), (sp, sh), loops


def _region(view: Any, pitch: int, height: int) -> Tuple[MemoryRegion, Any]:
    """The MemoryRegion of a view's elements for copy_3d, and what must stay alive during the copy."""
    if view._is_device_accessible:
        buf, offset = view._memory()
        return MemoryRegion(buf, pitch=pitch, height=height, offset=offset), buf
    if view._buffer is not None and view._buffer._h is None:
        raise closed_error(view._buffer)  # a closed Buffer no longer holds the memory's owner
    layout = view._get_layout()
    low, high = layout.offset_bounds
    first = view._ptr + low * layout.itemsize
    host = (ctypes.c_char * ((high - low + 1) * layout.itemsize)).from_address(first)
    return MemoryRegion(host, pitch=pitch, height=height, offset=view._ptr - first), host


def _copy(dst: Any, src: Any, stream: Any, blocking: Optional[bool]) -> None:
    for v in (dst, src):
        if v._buffer is not None and v._buffer._h is None:
            raise closed_error(v._buffer)  # a closed Buffer no longer holds the memory
    if dst._readonly:
        raise ValueError("the destination view is read-only")
    dl, sl = dst._get_layout(), src._get_layout()
    if dl.shape != sl.shape:
        raise ValueError(f"the views' shapes differ: {dl.shape} (destination) and {sl.shape} (source)")
    if dl.itemsize != sl.itemsize:
        raise ValueError(f"the views' itemsizes differ: {dl.itemsize} (destination) and {sl.itemsize} (source)")
    dd, sd = (v._dl_dtype or (v._dtype is not None and dlpack_of_dtype(v._dtype)) or None for v in (dst, src))
    if dd is not None and sd is not None and dd != sd:
        raise ValueError(f"the views' dtypes differ: {dst._dtype_name()} (destination) and {src._dtype_name()} "
                         f"(source)")
    if stream is None:
        on = dst if dst._device_id >= 0 else src
        stream = _device(on._device_id if on._device_id >= 0 else None).default_stream
    s = _stream_of(stream)
    if dl.volume == 0:
        return
    width, rows, depth, (dp, dh), (sp, sh), loops = _copy_plan(dl.shape, dl.dense_strides, sl.dense_strides,
                                                               dl.itemsize)
    d_region, d_keep = _region(dst, dp, dh)
    s_region, s_keep = _region(src, sp, sh)
    d_base, s_base = d_region.offset, s_region.offset
    for index in itertools.product(*(range(e) for e, _, _ in loops)):
        d_region.offset = d_base + sum(i * d for i, (_, d, _) in zip(index, loops))
        s_region.offset = s_base + sum(i * s for i, (_, _, s) in zip(index, loops))
        copy_3d(d_region, s_region, (width, rows, depth), stream=s)
    if blocking is None:
        blocking = not (dst._is_device_accessible and src._is_device_accessible)
    if blocking:
        s.sync()
    del d_keep, s_keep
