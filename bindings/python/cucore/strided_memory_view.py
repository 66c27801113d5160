"""StridedMemoryView: a strided tensor's metadata (address, shape, strides, dtype, device) over memory
exchanged zero-copy with NumPy, CuPy, PyTorch and any DLPack or CUDA Array Interface producer, with
cuda.core 1.2's API (cuda.core.utils.StridedMemoryView, args_viewable_as_strided_memory).

    view = StridedMemoryView.from_dlpack(torch_tensor, stream_ptr=s.handle)   # s waits for the producer
    view.shape, view.strides, view.dtype, view.ptr, view.device_id
    t = torch.from_dlpack(view)                            # back out, typed and strided, zero-copy
    v = StridedMemoryView.from_buffer(buf, (64, 64), dtype=numpy.float32)   # a cucore Buffer, typed
    v.copy_to(other_view, s)                               # a strided copy (copy_3d)
    tmap = v.as_tensor_map(box_dim=(8, 32))                # a TensorMapDescriptor of the view

Sources: DLPack producers (versioned and legacy capsules), `__cuda_array_interface__` v3 and
`__array_interface__` (host) objects, and cucore Buffers. Streams, as cuda.core: `stream_ptr` is the
consumer's CUstream as an int; DLPack producers get it as __dlpack__(stream=...), and a CUDA Array
Interface's "stream" is waited for on it (an event, no host synchronization); -1 opts out of ordering.
None is refused for CUDA memory (BufferError "stream=None is ambiguous"), as cuda.core does.

Lifetime: a view holds the exporting object (a DLPack import holds the producer's tensor and calls its
deleter once the view and everything exported from it are gone). A view exports `__dlpack__` with its
real dtype, shape and strides through libcucore's DLPack export (cucore_dlpack_export with a layout).

Beyond cuda.core 1.2 (where these raise NotImplementedError or are missing): copy_from/copy_to copy
between views of positive strides with 3D strided copies (else NotImplementedError says why); from_any_interface
and the decorator also take `__array_interface__`-only objects; dtype without NumPy is a small stand-in.
"""
from __future__ import annotations

import dataclasses
import functools
import operator
import warnings
from typing import Any, Callable, Optional, Tuple

from . import dlpack as _dlpack
from ._strided_copy import _copy
from ._strided_layout import _StridedLayout, as_dtype, dlpack_of_dtype, dtype_of_dlpack, dtype_of_typestr
from .buffer import Buffer
from .common import closed_error
from .device import _device
from .stream import Stream
from .tensor_map import TensorMapDescriptor, TensorMapDescriptorOptions

_CPU, _CUDA, _CUDA_HOST, _CUDA_MANAGED = 1, 2, 3, 13  # DLDeviceType values
_AMBIGUOUS = "stream=None is ambiguous with view()"


def _protocol(obj: Any) -> str:
    """"dlpack", "cai" or "array": the protocol a view of `obj` uses, in cuda.core's order (DLPack first)."""
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        return "dlpack"
    if hasattr(obj, "__cuda_array_interface__"):
        return "cai"
    if hasattr(obj, "__array_interface__"):
        return "array"
    raise BufferError("the input object does not support any data exchange protocol")


class StridedMemoryView:
    """A strided dense tensor's metadata over memory it does not own: `ptr` (the address of element
    (0, ...)), `shape`, `strides` (in elements; None: C-contiguous), `dtype`, `device_id` (-1 for host
    memory), `is_device_accessible`, `readonly`, and `exporting_obj` (the object viewed, kept alive).

    Made by from_dlpack, from_cuda_array_interface, from_array_interface, from_any_interface, from_buffer,
    or the args_viewable_as_strided_memory decorator. `StridedMemoryView(obj, stream_ptr)` does what
    from_any_interface does, with cuda.core's DeprecationWarning. `stream_ptr` is the consumer's stream
    (an int CUstream); stream order is established unless it is -1."""

    __slots__ = ("_ptr", "_device_id", "_is_device_accessible", "_readonly", "_exporting_obj", "_layout_",
                 "_dtype", "_dl_dtype", "_dl_device", "_buffer", "_span", "__weakref__")

    def __init__(self, obj: Any = None, stream_ptr: Optional[int] = None) -> None:
        self._reset()
        name = type(self).__name__
        if obj is None:
            warnings.warn(f"Constructing an empty {name} is deprecated; use one of the classmethods `from_dlpack`, "
                          f"`from_cuda_array_interface` or `from_any_interface` to construct a StridedMemoryView "
                          f"from an object", DeprecationWarning, stacklevel=2)
            return
        kind = _protocol(obj)
        protocol = "a DLPack-supporting" if kind == "dlpack" else "a CUDA-array-interface-supporting" \
            if kind == "cai" else "an array-interface-supporting"
        warnings.warn(f"Constructing a {name} directly from {protocol} object is deprecated; use "
                      f"`StridedMemoryView.from_any_interface` instead.", DeprecationWarning, stacklevel=2)
        _VIEWERS[kind](self, obj, stream_ptr)

    def _reset(self) -> None:
        self._ptr = 0
        self._device_id = 0
        self._is_device_accessible = False
        self._readonly = False
        self._exporting_obj: Any = None
        self._layout_: Optional[_StridedLayout] = None
        self._dtype: Any = None
        self._dl_dtype: Optional[Tuple[int, int, int]] = None
        self._dl_device: Optional[Tuple[int, int]] = None
        self._buffer: Optional[Buffer] = None
        self._span: Optional[Tuple[int, int]] = None

    @classmethod
    def _new(cls) -> StridedMemoryView:
        view = cls.__new__(cls)
        view._reset()
        return view

    # ---- construction --------------------------------------------------------------------------------

    @classmethod
    def from_dlpack(cls, obj: Any, stream_ptr: Optional[int] = None) -> StridedMemoryView:
        """A view of an object with `__dlpack__` and `__dlpack_device__` (a PyTorch tensor, a CuPy or NumPy
        array, a Buffer...), zero-copy: its tensor (versioned or legacy capsule) is consumed and held until the
        view and all exports of it are gone. `stream_ptr` (the consumer's CUstream as an int; -1: no ordering)
        is passed to `__dlpack__` for CUDA memory; None is refused for CPU and CUDA tensors (BufferError), as
        cuda.core does."""
        view = cls._new()
        _view_as_dlpack(view, obj, stream_ptr)
        return view

    @classmethod
    def from_cuda_array_interface(cls, obj: Any, stream_ptr: Optional[int] = None) -> StridedMemoryView:
        """A view of an object with `__cuda_array_interface__` (version 3 or later), holding the object. Unless
        `stream_ptr` is -1, that stream (a CUstream as an int) is made to wait for the interface's "stream"
        (an event: no host synchronization). None is refused (BufferError), as cuda.core does. The device is
        the current one (the interface does not name it)."""
        view = cls._new()
        _view_as_cai(view, obj, stream_ptr)
        return view

    @classmethod
    def from_array_interface(cls, obj: Any) -> StridedMemoryView:
        """A view of host memory an object describes with `__array_interface__` (version 3 or later; a NumPy
        array), holding the object. `device_id` is -1 and `is_device_accessible` False."""
        view = cls._new()
        _view_as_array_interface(view, obj)
        return view

    @classmethod
    def from_any_interface(cls, obj: Any, stream_ptr: Optional[int] = None) -> StridedMemoryView:
        """A view of `obj` through DLPack if it has it, else `__cuda_array_interface__`, else (cucore's
        addition) `__array_interface__`; BufferError for an object with none of them."""
        kind = _protocol(obj)
        if kind == "dlpack":
            return cls.from_dlpack(obj, stream_ptr)
        if kind == "cai":
            return cls.from_cuda_array_interface(obj, stream_ptr)
        return cls.from_array_interface(obj)

    @classmethod
    def from_buffer(cls, buffer: Buffer, shape: Tuple[int, ...], strides: Optional[Tuple[int, ...]] = None, *,
                    itemsize: Optional[int] = None, dtype: Any = None, is_readonly: bool = False) -> StridedMemoryView:
        """A view of a cucore Buffer as a tensor of `shape` and `strides` (in elements; None: C-contiguous),
        with element size `itemsize` or `dtype` (one of them; both must agree). No synchronization is done:
        order the buffer's users yourself. The elements must lie in the buffer (ValueError), unless it is
        foreign memory of size 0 (Buffer.from_handle(ptr, 0, owner=...)), whose extent is unknown.
        `exporting_obj` is the buffer."""
        if not isinstance(buffer, Buffer):
            raise TypeError(f"from_buffer() takes a cucore Buffer, not {type(buffer).__name__}")
        if itemsize is None and dtype is None:
            raise ValueError("Either itemsize or dtype must be specified")
        if dtype is not None:
            dtype = as_dtype(dtype)
            if itemsize is not None and itemsize != dtype.itemsize:
                raise ValueError(f"itemsize ({itemsize}) does not match dtype.itemsize ({dtype.itemsize})")
            itemsize = dtype.itemsize
        assert itemsize is not None
        view = cls._new()
        _view_buffer(view, buffer, _StridedLayout(shape, strides, itemsize), dtype, bool(is_readonly))
        return view

    def view(self, layout: Any = None, dtype: Any = None) -> StridedMemoryView:
        """A new view of the same memory with another layout (a _StridedLayout, or any object with shape,
        strides and itemsize, offsets relative to this view's first element) and/or dtype (its itemsize must
        be the layout's). With neither, this view. The elements must stay in the memory viewed (ValueError)."""
        if layout is None and dtype is None:
            return self
        base = self._get_layout()
        new_layout = base if layout is None else _StridedLayout._of(layout)
        new = type(self)._new()
        for name in ("_device_id", "_is_device_accessible", "_readonly", "_exporting_obj", "_dl_device", "_buffer",
                     "_span"):
            setattr(new, name, getattr(self, name))
        if dtype is None:
            new._dtype, new._dl_dtype = self._dtype, self._dl_dtype
        else:
            new._dtype = as_dtype(dtype)
            if new._dtype.itemsize != new_layout.itemsize:
                raise ValueError(f"The dtype's itemsize ({new._dtype.itemsize}) does not match the layout's itemsize "
                                 f"({new_layout.itemsize}).")
        if dtype is None and new_layout.itemsize != base.itemsize and (self._dtype is not None or self._dl_dtype):
            raise ValueError(f"The layout's itemsize ({new_layout.itemsize}) does not match the dtype's "
                             f"({base.itemsize}): pass a dtype too")
        new._ptr = self._ptr - base.slice_offset_in_bytes + new_layout.slice_offset_in_bytes
        new._layout_ = new_layout
        new._check_in_span()
        return new

    def _check_in_span(self) -> None:
        """ValueError unless every element lies in the memory this view's source covers (where known)."""
        layout = self._get_layout()
        if self._span is None or layout.volume == 0:
            return
        low, high = layout.offset_bounds
        first, end = self._ptr + low * layout.itemsize, self._ptr + (high + 1) * layout.itemsize
        lo, size = self._span
        if first < lo or end > lo + size:
            raise ValueError(f"the layout reaches bytes [{first - lo}, {end - lo}) of the viewed memory, which has "
                             f"{size} bytes")

    # ---- properties ----------------------------------------------------------------------------------

    @property
    def ptr(self) -> int:
        """The address of element (0, ...) as an int (device or host)."""
        return self._ptr

    @property
    def device_id(self) -> int:
        """The device the memory is on; -1 for host memory only the host can access."""
        return self._device_id

    @property
    def is_device_accessible(self) -> bool:
        """Whether the GPU can access the memory (device, page-locked or managed memory)."""
        return self._is_device_accessible

    @property
    def readonly(self) -> bool:
        """Whether the memory must not be written through this view."""
        return self._readonly

    @property
    def exporting_obj(self) -> Any:
        """The object viewed (for from_buffer: the Buffer), kept alive by the view."""
        return self._exporting_obj

    def _get_layout(self) -> _StridedLayout:
        if self._layout_ is None:
            raise ValueError("Cannot infer layout from the exporting object")
        return self._layout_

    @property
    def _layout(self) -> _StridedLayout:
        """The layout (shape, strides, itemsize) of the view."""
        return self._get_layout()

    @property
    def shape(self) -> Tuple[int, ...]:
        """Shape of the tensor."""
        return self._get_layout().shape

    @property
    def strides(self) -> Optional[Tuple[int, ...]]:
        """Strides of the tensor (in **counts**, not bytes); None for a C-contiguous tensor that gave none."""
        return self._get_layout().strides

    @property
    def size(self) -> int:
        """The number of elements."""
        return self._get_layout().volume

    @property
    def dtype(self) -> Any:
        """Data type of the tensor: a numpy.dtype (bfloat16 with ml_dtypes installed, else NotImplementedError),
        a small stand-in with name, kind, itemsize and str where NumPy is not installed, or None for a view made
        from a buffer with an itemsize only."""
        if self._dtype is None and self._dl_dtype is not None:
            self._dtype = dtype_of_dlpack(*self._dl_dtype)
        return self._dtype

    def __repr__(self) -> str:
        layout = self._layout_
        return (f"StridedMemoryView(ptr={self._ptr},\n"
                f"                  shape={None if layout is None else layout.shape},\n"
                f"                  strides={None if layout is None else layout.strides},\n"
                f"                  itemsize={None if layout is None else layout.itemsize},\n"
                f"                  dtype={self._dtype_name()},\n"
                f"                  device_id={self._device_id},\n"
                f"                  is_device_accessible={self._is_device_accessible},\n"
                f"                  readonly={self._readonly},\n"
                f"                  exporting_obj={_simple_repr(self._exporting_obj)})")

    def _dtype_name(self) -> str:
        try:
            dtype = self.dtype
        except (NotImplementedError, TypeError):
            return f"<DLPack type {self._dl_dtype}>"
        return "None" if dtype is None else str(getattr(dtype, "name", dtype))

    # ---- the memory ------------------------------------------------------------------------------------

    def _on_device_memory(self) -> bool:
        """Whether the memory is a device's (CUDA or managed), as opposed to host memory (pageable or pinned)."""
        if self._dl_device is not None:
            return self._dl_device[0] in (_CUDA, _CUDA_MANAGED)
        return self._device_id >= 0

    def _memory(self) -> Tuple[Buffer, int]:
        """(a Buffer holding every element, the byte offset of element (0, ...) in it)."""
        layout = self._get_layout()
        buf = self._buffer
        if buf is not None and buf._h is None:
            raise closed_error(buf)
        low, high = layout.offset_bounds
        first = self._ptr + low * layout.itemsize if layout.volume else self._ptr
        nbytes = (high - low + 1) * layout.itemsize if layout.volume else 0
        if buf is None or (layout.volume and (first < buf.handle or first + nbytes > buf.handle + buf.size)):
            # CUDA/array interface memory, or a view of foreign memory of unknown size (a Buffer of size 0,
            # its extent not checked): a Buffer over the elements' bytes, holding what holds the memory.
            owner = buf if buf is not None else self._exporting_obj
            device_id = self._device_id if self._on_device_memory() else None  # None: host memory
            buf = Buffer.from_handle(first, nbytes, device_id=device_id, owner=owner)
            if self._buffer is None:
                self._buffer = buf
        return buf, (self._ptr - buf.handle if layout.volume else 0)

    def _dlpack_dtype(self) -> Tuple[int, int, int]:
        if self._dl_dtype is not None:
            return self._dl_dtype
        if self._dtype is None:
            raise BufferError("Cannot export StridedMemoryView via DLPack without dtype information; create the "
                              "view with dtype specified.")
        return dlpack_of_dtype(self._dtype)

    def __dlpack__(self, *, stream: Optional[int] = None, max_version: Optional[Tuple[int, int]] = None,
                   dl_device: Optional[Tuple[int, int]] = None, copy: Optional[bool] = None) -> Any:
        """A DLPack capsule of the view (versioned when max_version >= (1, 0), else legacy) with its dtype,
        shape and strides, zero-copy; it holds the memory until the consumer deletes it. A view of a pool
        Buffer orders the consumer's `stream` after the buffer's deallocation stream (-1: no ordering), as
        Buffer.__dlpack__; other views were ordered when they were made. copy=True is refused (BufferError)."""
        if copy is True:
            raise BufferError("Sorry, not supported: copy=True")
        if max_version is not None and (not isinstance(max_version, tuple) or len(max_version) != 2):
            raise BufferError(f"Expected max_version tuple[int, int], got {max_version}")
        layout = self._get_layout()
        dtype = self._dlpack_dtype()
        buf, offset = self._memory()
        c_layout = _dlpack.make_layout(dtype, layout.shape, layout.dense_strides, offset, self._readonly)
        return _dlpack.export(buf, stream, max_version, dl_device, copy, c_layout)

    def __dlpack_device__(self) -> Tuple[int, int]:
        """(DLPack device type, device id) of the memory: (1, 0) for host memory, (2, ordinal) for device
        memory, (3, 0) page-locked and (13, 0) managed memory."""
        if self._dl_device is not None:
            kind, ordinal = self._dl_device
            return kind, ordinal if kind == _CUDA else 0
        if not self._is_device_accessible:
            return _CPU, 0
        kind, ordinal = _dlpack.device(self._memory()[0])
        kind = int(kind)
        return kind, ordinal if kind == _CUDA else 0

    # ---- copies ----------------------------------------------------------------------------------------

    def copy_from(self, other: StridedMemoryView, stream: Any, allocator: Any = None,
                  blocking: Optional[bool] = None) -> None:
        """Copy the elements of `other` (same shape and itemsize) into this view on `stream` (a Stream or
        anything with __cuda_stream__), host-to-device, device-to-host or device-to-device, with strided
        copies (copy_3d; one where, after merging the dimensions both layouts lay out alike, at most three
        remain), for positive strides (else NotImplementedError). `allocator` is accepted for cuda.core's signature;
        no temporary is needed. `blocking` True synchronizes the stream after the copy; None does for copies
        involving host memory only."""
        _copy(self, _view_arg(other), stream, blocking)

    def copy_to(self, other: StridedMemoryView, stream: Any = None, allocator: Any = None,
                blocking: Optional[bool] = None) -> None:
        """Copy this view's elements into `other`; see copy_from. `stream` None: the legacy default stream
        of the device involved."""
        _copy(_view_arg(other), self, stream, blocking)

    # ---- TMA ------------------------------------------------------------------------------------------

    def as_tensor_map(self, box_dim: Optional[Tuple[int, ...]] = None, *,
                      options: Optional[TensorMapDescriptorOptions] = None,
                      element_strides: Optional[Tuple[int, ...]] = None, data_type: Any = None, interleave: Any = None,
                      swizzle: Any = None, l2_promotion: Any = None, oob_fill: Any = None) -> TensorMapDescriptor:
        """A tiled TensorMapDescriptor of this view (device-accessible, 16-byte aligned; 1 to 5 dimensions),
        moving boxes of `box_dim` elements (row-major, like the shape). Pass box_dim and the other fields
        (data_type None: the view's dtype), or `options` (a TensorMapDescriptorOptions or a dict), not both
        (TypeError). The descriptor holds the memory."""
        fields = {k: v for k, v in (("element_strides", element_strides), ("data_type", data_type),
                                    ("interleave", interleave), ("swizzle", swizzle), ("l2_promotion", l2_promotion),
                                    ("oob_fill", oob_fill)) if v is not None}
        if options is not None:
            if box_dim is not None or fields:
                raise TypeError("Specify either options or the individual tensor map arguments, not both")
            opts = TensorMapDescriptorOptions(**options) if isinstance(options, dict) else options
            if not isinstance(opts, TensorMapDescriptorOptions):
                raise TypeError(f"options must be a TensorMapDescriptorOptions, not {type(options).__name__}")
        else:
            if box_dim is None:
                raise TypeError("box_dim is required unless options is provided")
            opts = TensorMapDescriptorOptions(box_dim=box_dim, **fields)
        if not self._is_device_accessible:
            raise ValueError("as_tensor_map() needs device-accessible memory; this view is of host memory")
        if opts.data_type is None:
            dtype = self.dtype
            if dtype is None:
                raise ValueError("the view has no dtype: pass data_type")
            opts = dataclasses.replace(opts, data_type=dtype)
        layout = self._get_layout()
        buf, offset = self._memory()
        target = buf if offset == 0 else buf.view(offset, buf.size - offset)
        return TensorMapDescriptor.from_tiled(target, layout.shape, strides=layout.strides_in_bytes, options=opts)


def _view_arg(other: Any) -> StridedMemoryView:
    if not isinstance(other, StridedMemoryView):
        raise TypeError(f"copies are between StridedMemoryViews, not {type(other).__name__}")
    return other


def _simple_repr(obj: Any) -> str:
    cls = obj if isinstance(obj, type) else type(obj)
    return cls.__name__ if cls.__module__ in (None, "builtins") else f"{cls.__module__}.{cls.__name__}"


# ---- the sources ----------------------------------------------------------------------------------------

def _index(value: Any, what: str) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{what} must be an int, not bool")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an int, not {type(value).__name__}") from None


def _view_as_dlpack(view: StridedMemoryView, obj: Any, stream_ptr: Any) -> None:
    protocol = getattr(obj, "__dlpack__", None)
    where = getattr(obj, "__dlpack_device__", None)
    if protocol is None or where is None:
        raise BufferError(f"{type(obj).__name__} does not support DLPack (__dlpack__ and __dlpack_device__)")
    try:
        kind, _ = (int(v) for v in where())
    except (TypeError, ValueError):
        raise BufferError(f"{type(obj).__name__}.__dlpack_device__() did not return (device type, id)") from None
    if stream_ptr is not None:
        stream_ptr = _index(stream_ptr, "stream_ptr")
    if kind == _CPU:
        if stream_ptr is None:
            raise BufferError(_AMBIGUOUS)
        stream = None  # CPU producers take no stream (the DLPack protocol)
    elif kind == _CUDA:
        if stream_ptr is None:
            raise BufferError(_AMBIGUOUS)
        stream = stream_ptr or None  # passed through, -1 included (no ordering)
    elif kind in (_CUDA_HOST, _CUDA_MANAGED):
        stream = stream_ptr or None  # accessible from both sides: passed through, unchecked
    else:
        raise BufferError(f"device not supported: DLPack device type {kind}")
    try:
        capsule = protocol(stream=stream, max_version=_dlpack.DLPACK_VERSION)
    except TypeError:  # a producer older than DLPack 1.0 knows no max_version
        capsule = protocol(stream=stream)
    try:
        buf, info = _dlpack.import_tensor(capsule, obj)
    except TypeError as e:
        raise BufferError(f"{type(obj).__name__}.__dlpack__() did not return a DLPack capsule ({e})") from None
    code, bits, lanes = info["dtype"]
    dev_kind, ordinal = info["device"]
    view._ptr = info["ptr"]
    view._layout_ = _StridedLayout(info["shape"], info["strides"], bits * lanes // 8)
    view._dl_dtype = info["dtype"]
    view._dl_device = (dev_kind, ordinal)
    view._device_id = -1 if dev_kind == _CPU else ordinal
    view._is_device_accessible = dev_kind != _CPU
    view._readonly = info["readonly"]
    view._exporting_obj = obj
    view._buffer = buf  # owns the tensor: its deleter runs when the view and its exports are gone
    view._span = (buf.handle, buf.size)


def _interface(obj: Any, attribute: str, name: str) -> Tuple[dict, int, bool, Any, _StridedLayout]:
    """(the dict, address, read-only, dtype, layout) of an array interface, checked."""
    try:
        data = getattr(obj, attribute)
    except AttributeError:
        raise BufferError(f"{type(obj).__name__} has no {attribute}") from None
    if not isinstance(data, dict):
        raise BufferError(f"{attribute} must be a dict, not {type(data).__name__}")
    version = data.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 3:
        raise BufferError(f"only {name} v3 or above is supported (version {version!r})")
    if data.get("mask") is not None:
        raise BufferError("mask is not supported")
    pair = data.get("data")
    if not isinstance(pair, tuple) or len(pair) != 2:
        raise BufferError(f"{attribute}['data'] must be (address, read-only), not {pair!r}")
    address = _index(pair[0], f"the {attribute} address")
    if address < 0:
        raise BufferError(f"{attribute} address {address} is negative")
    if "shape" not in data or "typestr" not in data:
        raise BufferError(f"{attribute} lacks 'shape' or 'typestr'")
    dtype = dtype_of_typestr(data["typestr"])
    layout = _StridedLayout(data["shape"], data.get("strides"), dtype.itemsize, divide_strides=True)
    if layout.volume:
        if not address:
            raise BufferError(f"{attribute} data is NULL but the array has elements")
        if address + layout.offset_bounds[0] * layout.itemsize < 0:
            raise BufferError(f"{attribute} strides reach below address 0")
    return data, address, bool(pair[1]), dtype, layout


def _set_span(view: StridedMemoryView) -> None:
    layout = view._get_layout()
    low, high = layout.offset_bounds
    view._span = (view._ptr + low * layout.itemsize, (high - low + 1) * layout.itemsize) if layout.volume else None


def _view_as_cai(view: StridedMemoryView, obj: Any, stream_ptr: Any) -> None:
    data, address, readonly, dtype, layout = _interface(obj, "__cuda_array_interface__", "CUDA Array Interface")
    if stream_ptr is None:
        raise BufferError(_AMBIGUOUS)
    stream_ptr = _index(stream_ptr, "stream_ptr")
    device = _device(None)  # the interface names no device: the current one, where its memory is used
    if stream_ptr != -1:
        producer = data.get("stream")
        if producer is not None:
            if isinstance(producer, bool) or not isinstance(producer, int) or producer <= 0:
                raise BufferError(f"__cuda_array_interface__ stream {producer!r} is not a stream (0 is not allowed)")
            if producer != stream_ptr:
                _wait(stream_ptr, producer)
    view._ptr = address
    view._layout_ = layout
    view._dtype = dtype
    view._device_id = device.device_id
    view._is_device_accessible = True
    view._readonly = readonly
    view._exporting_obj = obj
    _set_span(view)


def _wait(consumer: int, producer: int) -> None:
    """Makes stream `consumer` wait for the work queued on stream `producer` (an event; no host sync). 0, the
    driver API's NULL stream, is the legacy default stream (CU_STREAM_LEGACY, 1)."""
    c = Stream.from_handle(consumer or 1)
    try:
        p = Stream.from_handle(producer)
        try:
            c.wait(p)
        finally:
            p.close()
    finally:
        c.close()


def _view_as_array_interface(view: StridedMemoryView, obj: Any, stream_ptr: Any = None) -> None:
    data, address, readonly, dtype, layout = _interface(obj, "__array_interface__", "NumPy Array Interface")
    view._ptr = address
    view._layout_ = layout
    view._dtype = dtype
    view._device_id = -1
    view._is_device_accessible = False
    view._readonly = readonly
    view._exporting_obj = obj
    _set_span(view)


_VIEWERS: dict = {"dlpack": _view_as_dlpack, "cai": _view_as_cai, "array": _view_as_array_interface}


def _view_buffer(view: StridedMemoryView, buffer: Buffer, layout: _StridedLayout, dtype: Any, readonly: bool) -> None:
    if buffer._h is None:
        raise closed_error(buffer)
    if layout.volume:
        low, high = layout.offset_bounds
        if low < 0:
            raise ValueError(f"the layout's negative strides reach {-low} elements below the start of the buffer")
        need = (high + 1) * layout.itemsize
        if (buffer.size or buffer.memory_resource is not None) and buffer.size < need:
            raise ValueError(f"Buffer size is too small for the layout. Expected at least {need} bytes, got "
                             f"{buffer.size} bytes.")
    view._ptr = buffer.handle + layout.slice_offset_in_bytes
    view._layout_ = layout
    view._dtype = dtype
    device_id = buffer.device_id
    view._device_id = -1 if device_id is None else device_id
    view._is_device_accessible = buffer.is_device_accessible
    view._readonly = readonly
    view._exporting_obj = view._buffer = buffer
    view._span = (buffer.handle, buffer.size) if buffer.size else None


# ---- the decorator --------------------------------------------------------------------------------------

class _StridedMemoryViewProxy:
    """What a decorated function receives for a viewable argument: `obj`, and view(stream_ptr) to view it."""

    __slots__ = ("obj", "has_dlpack", "_kind")

    def __init__(self, obj: Any) -> None:
        self.obj = obj
        self._kind = _protocol(obj)
        self.has_dlpack = self._kind == "dlpack"

    def view(self, stream_ptr: Optional[int] = None) -> StridedMemoryView:
        """A StridedMemoryView of the argument, its consumer stream `stream_ptr` (see StridedMemoryView)."""
        if self._kind == "dlpack":
            return StridedMemoryView.from_dlpack(self.obj, stream_ptr)
        if self._kind == "cai":
            return StridedMemoryView.from_cuda_array_interface(self.obj, stream_ptr)
        return StridedMemoryView.from_array_interface(self.obj)


def args_viewable_as_strided_memory(arg_indices: Tuple[int, ...]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator: the positional arguments at `arg_indices` (a tuple) reach the function as proxies whose
    `view(stream_ptr)` gives a StridedMemoryView of the object passed (any DLPack, CUDA Array Interface or
    array interface object), keeping the function's body independent of the array library:

        @args_viewable_as_strided_memory((1,))
        def my_func(arg0, arg1, arg2, stream):
            view = arg1.view(stream.handle)
    """
    if not isinstance(arg_indices, tuple):
        raise TypeError(f"arg_indices must be a tuple of ints, not {type(arg_indices).__name__}")

    def wrapped_func_with_indices(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def wrapped_func(*args: Any, **kwargs: Any) -> Any:
            args_list = list(args)
            for idx in arg_indices:
                args_list[idx] = _StridedMemoryViewProxy(args_list[idx])
            return func(*args_list, **kwargs)
        return wrapped_func
    return wrapped_func_with_indices


__all__ = ["StridedMemoryView", "args_viewable_as_strided_memory"]
