"""TensorMap (TMA) descriptors (include/cucore/tensor_map.h), with cuda.core's names.

    from cucore import TensorMapDescriptor, TensorMapDescriptorOptions, TensorMapSwizzle
    opts = TensorMapDescriptorOptions(box_dim=(8, 32), data_type="float32", swizzle=TensorMapSwizzle.SWIZZLE_128B)
    tmap = TensorMapDescriptor.from_tiled(buf, (rows, cols), options=opts)
    cucore.launch(s, config, kernel, tmap, out)   # a `const __grid_constant__ CUtensorMap` parameter
    tmap.replace_address(other_buf)

Shapes, strides, box dimensions and element strides are given in row-major order, as NumPy's shape and strides
(the outermost dimension first; strides in bytes, the innermost one the element size or omitted), as cuda.core
takes them; libcucore's C ABI takes them innermost first, as the driver does. Every rule the driver documents
is checked by libcucore before the driver is asked, and an InvalidArgumentError names the rule. A descriptor
made over a Buffer holds the buffer's memory, so the Buffer may be closed first; over an int address the
memory is the caller's to keep.

The enums' values are the driver's CUtensorMap* values, as cuda.core's are.
Above textures (bindings/python/README.md, "Layers"); launch.py packs descriptors.
"""
from __future__ import annotations

import ctypes
import enum
import operator
from dataclasses import dataclass, fields
from typing import Any, Optional, Sequence, Tuple, Union

from . import _lib
from ._handle import HandleObject
from .buffer import Buffer
from .common import InvalidArgumentError, Status, closed_error, raise_error
from .device import Device

(_cucore_tensor_map_descriptor_create_tiled, _cucore_tensor_map_descriptor_create_im2col,
 _cucore_tensor_map_descriptor_create_im2col_wide, _cucore_tensor_map_descriptor_replace_address,
 _cucore_tensor_map_descriptor_data, _cucore_tensor_map_descriptor_copy, _cucore_tensor_map_descriptor_address,
 _cucore_tensor_map_descriptor_kind, _cucore_tensor_map_descriptor_retain,
 _cucore_tensor_map_descriptor_release) = _lib.bind(
    globals(), "cucore_tensor_map_descriptor_create_tiled", "cucore_tensor_map_descriptor_create_im2col",
    "cucore_tensor_map_descriptor_create_im2col_wide", "cucore_tensor_map_descriptor_replace_address",
    "cucore_tensor_map_descriptor_data", "cucore_tensor_map_descriptor_copy", "cucore_tensor_map_descriptor_address",
    "cucore_tensor_map_descriptor_kind", "cucore_tensor_map_descriptor_retain",
    "cucore_tensor_map_descriptor_release")
(_fast_tensor_map_descriptor_release,) = _lib.bind_unchecked(globals(), "cucore_tensor_map_descriptor_release")

LayoutC = _lib.STRUCTS["cucore_tensor_map_layout_t"]
OptionsC = _lib.STRUCTS["cucore_tensor_map_descriptor_options_t"]
SIZE = _lib.C["CUCORE_TENSOR_MAP_SIZE"]
MAX_RANK = _lib.C["CUCORE_TENSOR_MAP_MAX_RANK"]
_string_at = ctypes.string_at


class TensorMapDataType(enum.IntEnum):
    """Element types (CUtensorMapDataType values, as cuda.core's). The packed ones hold 16 values of 4 or 6 bits
    in 8 or 16 bytes; their dimensions count values."""
    UINT8 = 0
    UINT16 = 1
    UINT32 = 2
    INT32 = 3
    UINT64 = 4
    INT64 = 5
    FLOAT16 = 6
    FLOAT32 = 7
    FLOAT64 = 8
    BFLOAT16 = 9
    FLOAT32_FTZ = 10
    TFLOAT32 = 11
    TFLOAT32_FTZ = 12
    UINT4X16_ALIGN8B = 13   # CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B
    UINT4X16_ALIGN16B = 14  # CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B
    UINT6X16_ALIGN16B = 15  # CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B


class TensorMapInterleave(enum.IntEnum):
    """Interleaved layouts (CUtensorMapInterleave)."""
    NONE = 0
    INTERLEAVE_16B = 1
    INTERLEAVE_32B = 2


class TensorMapSwizzle(enum.IntEnum):
    """Shared-memory bank swizzling (CUtensorMapSwizzle)."""
    NONE = 0
    SWIZZLE_32B = 1
    SWIZZLE_64B = 2
    SWIZZLE_128B = 3
    SWIZZLE_128B_ATOM_32B = 4
    SWIZZLE_128B_ATOM_32B_FLIP_8B = 5
    SWIZZLE_128B_ATOM_64B = 6


class TensorMapL2Promotion(enum.IntEnum):
    """L2 fill granularity (CUtensorMapL2promotion)."""
    NONE = 0
    L2_64B = 1
    L2_128B = 2
    L2_256B = 3


class TensorMapOOBFill(enum.IntEnum):
    """What elements outside the tensor read (CUtensorMapFloatOOBfill): zero, or a NaN FMA treats as zero
    (floating-point types only)."""
    NONE = 0
    NAN_REQUEST_ZERO_FMA = 1


class TensorMapIm2ColWideMode(enum.IntEnum):
    """How an im2col-wide descriptor loads along W (CUtensorMapIm2ColWideMode; compute capability 10.0)."""
    W = 0
    W128 = 1


# Memory per element in bits (the packed types: 16 values in 8 or 16 bytes).
_BITS = {TensorMapDataType.UINT8: 8, TensorMapDataType.UINT16: 16, TensorMapDataType.UINT32: 32,
         TensorMapDataType.INT32: 32, TensorMapDataType.UINT64: 64, TensorMapDataType.INT64: 64,
         TensorMapDataType.FLOAT16: 16, TensorMapDataType.FLOAT32: 32, TensorMapDataType.FLOAT64: 64,
         TensorMapDataType.BFLOAT16: 16, TensorMapDataType.FLOAT32_FTZ: 32, TensorMapDataType.TFLOAT32: 32,
         TensorMapDataType.TFLOAT32_FTZ: 32, TensorMapDataType.UINT4X16_ALIGN8B: 4,
         TensorMapDataType.UINT4X16_ALIGN16B: 8, TensorMapDataType.UINT6X16_ALIGN16B: 8}
# NumPy's dtype names (and ml_dtypes' bfloat16) -> the data type.
_DTYPE_NAMES = {"uint8": TensorMapDataType.UINT8, "uint16": TensorMapDataType.UINT16,
                "uint32": TensorMapDataType.UINT32, "int32": TensorMapDataType.INT32,
                "uint64": TensorMapDataType.UINT64, "int64": TensorMapDataType.INT64,
                "float16": TensorMapDataType.FLOAT16, "float32": TensorMapDataType.FLOAT32,
                "float64": TensorMapDataType.FLOAT64, "bfloat16": TensorMapDataType.BFLOAT16}
KINDS = {_lib.C["CUCORE_TENSOR_MAP_KIND_TILED"]: "tiled", _lib.C["CUCORE_TENSOR_MAP_KIND_IM2COL"]: "im2col",
         _lib.C["CUCORE_TENSOR_MAP_KIND_IM2COL_WIDE"]: "im2col_wide"}


def _invalid(message: str) -> InvalidArgumentError:
    return InvalidArgumentError(Status.ERROR_INVALID_ARGUMENT, message, 0)


def _data_type(value: Any) -> TensorMapDataType:
    """A TensorMapDataType from itself, its name, or a dtype (anything with .name, e.g. numpy.dtype('f4'))."""
    if isinstance(value, TensorMapDataType):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return TensorMapDataType(value)
        except ValueError:
            raise _invalid(f"data_type {value} is not a TensorMapDataType value") from None
    name = getattr(value, "name", value)
    if isinstance(name, str):
        if name.upper() in TensorMapDataType.__members__:
            return TensorMapDataType[name.upper()]
        if name in _DTYPE_NAMES:
            return _DTYPE_NAMES[name]
    raise TypeError(f"data_type must be a TensorMapDataType or a dtype name ({', '.join(_DTYPE_NAMES)}), "
                    f"not {value!r}")


def _enum(cls: Any, value: Any, name: str) -> Any:
    if isinstance(value, cls):
        return value
    if isinstance(value, str) and value.upper() in cls.__members__:
        return cls[value.upper()]
    try:
        return cls(operator.index(value))
    except (TypeError, ValueError):
        raise _invalid(f"{name} must be a {cls.__name__}, not {value!r}") from None


def _ints(values: Any, name: str) -> Tuple[int, ...]:
    if isinstance(values, int) and not isinstance(values, bool):
        values = (values,)
    try:
        out = tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of ints, not {values!r}") from None
    return out


@dataclass
class TensorMapDescriptorOptions:
    """How a descriptor moves boxes (cuda.core's TensorMapDescriptorOptions). `box_dim` (tiled descriptors) and
    `element_strides` are row-major, like the shape; `data_type` is a TensorMapDataType or a dtype name
    ("float32"; required); the enums take their members, names or values."""
    box_dim: Optional[Sequence[int]] = None
    element_strides: Optional[Sequence[int]] = None
    data_type: Any = None
    interleave: Any = TensorMapInterleave.NONE
    swizzle: Any = TensorMapSwizzle.NONE
    l2_promotion: Any = TensorMapL2Promotion.NONE
    oob_fill: Any = TensorMapOOBFill.NONE

    def _with(self, overrides: dict) -> TensorMapDescriptorOptions:
        known = {f.name for f in fields(self)}
        for k in overrides:
            if k not in known:
                raise TypeError(f"unknown TensorMapDescriptorOptions field {k!r}")
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(overrides)
        return TensorMapDescriptorOptions(**values)

    def _struct(self, rank: int, wide_mode: Any = TensorMapIm2ColWideMode.W) -> Any:
        c = OptionsC()
        c.struct_size = ctypes.sizeof(OptionsC)
        if self.element_strides is not None:
            es = _ints(self.element_strides, "element_strides")
            if len(es) != rank:
                raise _invalid(f"element_strides must have {rank} elements (the rank), got {len(es)}")
            for i, v in enumerate(reversed(es[:MAX_RANK])):
                if not 0 <= v < 2**32:
                    raise _invalid(f"element_strides[{rank - 1 - i}] is {v}; elementStrides in 1..8")
                c.element_strides[i] = v
        c.interleave = _enum(TensorMapInterleave, self.interleave, "interleave")
        c.swizzle = _enum(TensorMapSwizzle, self.swizzle, "swizzle")
        c.l2_promotion = _enum(TensorMapL2Promotion, self.l2_promotion, "l2_promotion")
        c.oob_fill = _enum(TensorMapOOBFill, self.oob_fill, "oob_fill")
        c.im2col_wide_mode = _enum(TensorMapIm2ColWideMode, wide_mode, "mode")
        return c


def _options_of(options: Optional[TensorMapDescriptorOptions], overrides: dict) -> TensorMapDescriptorOptions:
    if options is None:
        options = TensorMapDescriptorOptions()
    elif isinstance(options, dict):
        options = TensorMapDescriptorOptions(**options)
    elif not isinstance(options, TensorMapDescriptorOptions):
        raise TypeError(f"options must be a TensorMapDescriptorOptions, not {type(options).__name__}")
    return options._with(overrides) if overrides else options


def _layout(shape: Any, strides: Any, data_type: Any) -> Tuple[Any, int]:
    """The cucore_tensor_map_layout_t of a row-major shape and byte strides (None: C-contiguous)."""
    if data_type is None:
        raise _invalid("data_type is required (a TensorMapDataType or a dtype name such as 'float32')")
    dt = _data_type(data_type)
    shape = _ints(shape, "shape")
    rank = len(shape)
    c = LayoutC()
    c.struct_size = ctypes.sizeof(LayoutC)
    c.data_type = int(dt) + 1  # 0 is unset in the C ABI
    c.rank = rank  # libcucore refuses 0 and more than 5, naming the rule
    if not 1 <= rank <= MAX_RANK:
        return c, rank
    for i, n in enumerate(reversed(shape)):
        if not 0 <= n < 2**64:
            raise _invalid(f"shape[{rank - 1 - i}] is {n}; globalDim[i] must be in 1..2^32")
        c.global_dim[i] = n
    if strides is None:  # C-contiguous: each stride the bytes of one index of the dimension below
        acc = (shape[-1] * _BITS[dt] + 7) // 8
        strides_inner_first = []
        for i in range(1, rank):
            strides_inner_first.append(acc)
            acc *= shape[rank - 1 - i]
    else:
        st = _ints(strides, "strides")
        if len(st) != rank:
            raise _invalid(f"strides must have {rank} elements (one per dimension), got {len(st)}")
        if _BITS[dt] >= 8 and st[-1] != _BITS[dt] // 8:
            raise _invalid(f"strides[{rank - 1}] is {st[-1]}; the innermost dimension must be contiguous "
                           f"(its stride the element size, {_BITS[dt] // 8} bytes)")
        strides_inner_first = list(reversed(st[:-1]))
    for i, s in enumerate(strides_inner_first):
        if not 0 <= s < 2**64:
            raise _invalid(f"stride {s} is out of range; globalStrides[i] must be a multiple of 16 and < 2^40")
        c.global_strides[i] = s
    return c, rank


def _target(tensor: Any) -> Tuple[Any, int]:
    """(the buffer handle or None, the address) of a Buffer or an int device address."""
    if isinstance(tensor, Buffer):
        if tensor._h is None:
            raise closed_error(tensor)
        return tensor._h, 0
    if isinstance(tensor, bool):
        raise TypeError("tensor must be a Buffer or an int device address, not bool")
    try:
        address = operator.index(tensor)
    except TypeError:
        raise TypeError(f"tensor must be a Buffer or an int device address, not {type(tensor).__name__}") from None
    if not 0 <= address < 2**64:
        raise _invalid(f"address {address} is out of range")
    return None, address


class TensorMapDescriptor(HandleObject):
    """A TMA descriptor (CUtensorMap): pass it to launch() as a kernel argument (the kernel's parameter is a
    `const __grid_constant__ CUtensorMap`); it is passed by value, its 128 bytes copied at the launch.

    Made by from_tiled(), from_im2col() or from_im2col_wide() over a Buffer (held: release order never
    matters) or an int device address. close() (or the end of a `with` block) releases it."""

    __slots__ = ("_tensor", "_data", "_kind_name", "_device_id")
    _tensor: Optional[Buffer]
    _device_id: Optional[int]
    _data: int
    _kind_name: str
    _release = staticmethod(_fast_tensor_map_descriptor_release)

    def __new__(cls, *args: Any, **kwargs: Any) -> TensorMapDescriptor:
        raise RuntimeError("TensorMapDescriptor cannot be instantiated directly. Use TensorMapDescriptor.from_tiled(), "
                           "from_im2col() or from_im2col_wide().")

    @classmethod
    def _made(cls, create: Any, tensor: Any, kind: str) -> TensorMapDescriptor:
        out = ctypes.c_void_p()
        st = create(out)
        if st:
            raise_error(st)
        d = object.__new__(cls)
        d._h = _lib.handle_arg(out.value)
        d._raw = None
        d._tensor = tensor if isinstance(tensor, Buffer) else None
        d._device_id = tensor.device_id if isinstance(tensor, Buffer) else None
        d._kind_name = kind
        data = ctypes.c_void_p()
        st = _cucore_tensor_map_descriptor_data(d._h, ctypes.byref(data))
        if st:
            raise_error(st, d)
        d._data = data.value or 0
        return d

    @classmethod
    def from_tiled(cls, tensor: Union[Buffer, int], shape: Sequence[int], *, strides: Optional[Sequence[int]] = None,
                   options: Optional[TensorMapDescriptorOptions] = None, **fields: Any) -> TensorMapDescriptor:
        """A tiled descriptor (cuTensorMapEncodeTiled) of the tensor of `shape` (row-major, 1-5 dimensions) and
        byte `strides` (row-major, None: C-contiguous) at `tensor`, moving boxes of options.box_dim elements.
        `fields` override the options' fields (box_dim=, data_type=, swizzle=, ...)."""
        o = _options_of(options, fields)
        layout, rank = _layout(shape, strides, o.data_type)
        if o.box_dim is None:
            raise _invalid("box_dim is required for a tiled descriptor")
        box = _ints(o.box_dim, "box_dim")
        if len(box) != rank:
            raise _invalid(f"box_dim must have {rank} elements (the rank), got {len(box)}")
        box_c = (ctypes.c_uint32 * MAX_RANK)()
        for i, v in enumerate(reversed(box[:MAX_RANK])):  # a larger rank: libcucore names the rank rule
            if not 0 <= v < 2**32:
                raise _invalid(f"box_dim[{rank - 1 - i}] is {v}; boxDim[i] must be in 1..256")
            box_c[i] = v
        opts = o._struct(rank)
        buffer, address = _target(tensor)
        return cls._made(lambda out: _cucore_tensor_map_descriptor_create_tiled(
            buffer, address, ctypes.byref(layout), box_c, ctypes.byref(opts), ctypes.byref(out)), tensor, "tiled")

    @classmethod
    def from_im2col(cls, tensor: Union[Buffer, int], shape: Sequence[int], *, pixel_box_lower_corner: Sequence[int],
                    pixel_box_upper_corner: Sequence[int], channels_per_pixel: int, pixels_per_column: int,
                    strides: Optional[Sequence[int]] = None, options: Optional[TensorMapDescriptorOptions] = None,
                    **fields: Any) -> TensorMapDescriptor:
        """An im2col descriptor (cuTensorMapEncodeIm2col) of an NWC, NHWC or NDHWC tensor (`shape` row-major:
        (N, W, C), (N, H, W, C) or (N, D, H, W, C)); the corners are rank - 2 offsets in (D, H, W) order."""
        o = _options_of(options, fields)
        layout, rank = _layout(shape, strides, o.data_type)
        lower, upper = _ints(pixel_box_lower_corner, "pixel_box_lower_corner"), _ints(pixel_box_upper_corner,
                                                                                     "pixel_box_upper_corner")
        corners = max(rank - 2, 0)
        for name, c in (("pixel_box_lower_corner", lower), ("pixel_box_upper_corner", upper)):
            if len(c) != corners:
                raise _invalid(f"{name} must have {corners} offsets (rank - 2), got {len(c)}")
        lo, up = (ctypes.c_int32 * 3)(*lower[:3]), (ctypes.c_int32 * 3)(*upper[:3])
        opts = o._struct(rank)
        buffer, address = _target(tensor)
        return cls._made(lambda out: _cucore_tensor_map_descriptor_create_im2col(
            buffer, address, ctypes.byref(layout), lo, up, channels_per_pixel, pixels_per_column, ctypes.byref(opts),
            ctypes.byref(out)), tensor, "im2col")

    @classmethod
    def from_im2col_wide(cls, tensor: Union[Buffer, int], shape: Sequence[int], *, pixel_box_lower_corner_width: int,
                         pixel_box_upper_corner_width: int, channels_per_pixel: int, pixels_per_column: int,
                         mode: Any = TensorMapIm2ColWideMode.W, strides: Optional[Sequence[int]] = None,
                         options: Optional[TensorMapDescriptorOptions] = None, **fields: Any) -> TensorMapDescriptor:
        """An im2col-wide descriptor (cuTensorMapEncodeIm2colWide; compute capability 10.0): as from_im2col,
        the box bounded along W only. NotSupportedError on drivers without it."""
        o = _options_of(options, fields)
        layout, rank = _layout(shape, strides, o.data_type)
        opts = o._struct(rank, mode)
        buffer, address = _target(tensor)
        return cls._made(lambda out: _cucore_tensor_map_descriptor_create_im2col_wide(
            buffer, address, ctypes.byref(layout), pixel_box_lower_corner_width, pixel_box_upper_corner_width,
            channels_per_pixel, pixels_per_column, ctypes.byref(opts), ctypes.byref(out)), tensor, "im2col_wide")

    def replace_address(self, tensor: Union[Buffer, int]) -> None:
        """Point the descriptor at `tensor` (a Buffer, then held, or an int device address), under the same
        alignment rule; the tensor must fit a Buffer. Not while another thread launches with it."""
        h = self._h
        if h is None:
            raise closed_error(self)
        buffer, address = _target(tensor)
        st = _cucore_tensor_map_descriptor_replace_address(h, buffer, address)
        if st:
            raise_error(st, self)
        self._tensor = tensor if isinstance(tensor, Buffer) else None
        self._device_id = tensor.device_id if isinstance(tensor, Buffer) else None

    def _kernel_arg(self) -> bytes:
        """The 128 bytes launch() passes (a closed descriptor: InvalidHandleError)."""
        if self._h is None:
            raise closed_error(self)
        return _string_at(self._data, SIZE)

    def __bytes__(self) -> bytes:
        """A copy of the descriptor's 128 bytes."""
        h = self._h
        if h is None:
            raise closed_error(self)
        out = ctypes.create_string_buffer(SIZE)
        st = _cucore_tensor_map_descriptor_copy(h, out, SIZE)
        if st:
            raise_error(st, self)
        return out.raw

    @property
    def address(self) -> int:
        """The global address the descriptor points at now."""
        h = self._h
        if h is None:
            raise closed_error(self)
        out = ctypes.c_uint64()
        st = _cucore_tensor_map_descriptor_address(h, ctypes.byref(out))
        if st:
            raise_error(st, self)
        return out.value

    @property
    def kind(self) -> str:
        """"tiled", "im2col" or "im2col_wide"."""
        return self._kind_name

    @property
    def device(self) -> Optional[Device]:
        """The Device of the buffer it describes (cuda.core's `device`); None over a raw address."""
        return None if self._device_id is None or self._device_id < 0 else Device(self._device_id)

    @property
    def tensor(self) -> Optional[Buffer]:
        """The Buffer it was made over (or last pointed at), None for a raw address."""
        return self._tensor

    def __repr__(self) -> str:
        if self._h is None:
            return "<TensorMapDescriptor (closed)>"
        return f"<TensorMapDescriptor {self._kind_name} at {self.address:#x}>"


__all__ = ["TensorMapDescriptor", "TensorMapDescriptorOptions", "TensorMapDataType", "TensorMapInterleave",
           "TensorMapSwizzle", "TensorMapL2Promotion", "TensorMapOOBFill", "TensorMapIm2ColWideMode"]
