"""Array formats and the options of arrays to create (include/cucore/opaque_array.h: cucore_array_format_t,
cucore_array_kind_t, cucore_array_flag_t, cucore_opaque_array_options_t): cuda.core's OpaqueArrayOptions and
MipmappedArrayOptions, checked when made as cuda.core checks them, and the C values of the enums. Part of
opaque_array.py, which exports the public names (and texture.py, which uses the format helpers); kept apart so
that each file has one concern.

Below opaque_array.py in the layers (bindings/python/README.md, "Layers"): it uses only common.py and typing.py.
"""
from __future__ import annotations

import ctypes
import operator
import sys
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple, Union

from . import _lib
from .common import CachedStruct, InvalidArgumentError, Status, _U64_MAX
from .typing import ArrayFormatType, ArrayKindType

OptionsC = _lib.STRUCTS["cucore_opaque_array_options_t"]
_OPTIONS_SIZE = ctypes.sizeof(OptionsC)

# The C values of the names (cucore_array_format_t, cucore_array_kind_t, cucore_array_flag_t), read from the
# header by name; tests/python/test_opaque_array.py checks that every C value has its name here.
FORMAT_VALUES: Dict[ArrayFormatType, int] = {f: _lib.C["CUCORE_ARRAY_FORMAT_" + f.name] for f in ArrayFormatType}
_FORMAT_OF_VALUE = {v: f for f, v in FORMAT_VALUES.items()}
KIND_VALUES: Dict[ArrayKindType, int] = {k: _lib.C["CUCORE_ARRAY_KIND_" + k.name] for k in ArrayKindType}
_KIND_OF_VALUE = {v: k for k, v in KIND_VALUES.items()}
FLAG_VALUES: Dict[str, int] = _lib.c_names("cucore_array_flag_t", "CUCORE_ARRAY_FLAG_", skip=("none",))
SURFACE_LOAD_STORE = FLAG_VALUES["surface_load_store"]
TEXTURE_GATHER = FLAG_VALUES["texture_gather"]
DEPTH_TEXTURE = FLAG_VALUES["depth_texture"]
SPARSE = FLAG_VALUES["sparse"]

# cuda.core's eight formats, their bytes per channel, and their NumPy dtype names (the formats' values).
_PLAIN_SIZES = {ArrayFormatType.UINT8: 1, ArrayFormatType.INT8: 1, ArrayFormatType.UINT16: 2,
                ArrayFormatType.INT16: 2, ArrayFormatType.FLOAT16: 2, ArrayFormatType.UINT32: 4,
                ArrayFormatType.INT32: 4, ArrayFormatType.FLOAT32: 4}
_BC_FORMATS = frozenset(f for f in ArrayFormatType if f.name.startswith("BC"))


def _invalid(message):
    return InvalidArgumentError(Status.ERROR_INVALID_ARGUMENT, message, 0)


# ---- arguments ----------------------------------------------------------------------------------------------

def _choices(enum_type):
    return "{" + ", ".join(repr(m.value) for m in enum_type) + "}"


def format_of(format: Any, what: str = "format") -> ArrayFormatType:
    """`format` as an ArrayFormatType: a member, its value ("float32", any case), or a NumPy dtype (or
    scalar type) of one of cuda.core's eight formats. ValueError for anything else, as cuda.core."""
    if isinstance(format, ArrayFormatType):
        return format
    if isinstance(format, str):
        try:
            return ArrayFormatType(format.lower())
        except ValueError:
            raise _invalid(f"{what} must be an ArrayFormatType or one of {_choices(ArrayFormatType)}, "
                           f"got {format!r}") from None
    numpy = sys.modules.get("numpy")  # a NumPy dtype can only come from a program that imported NumPy
    if numpy is not None and (isinstance(format, numpy.dtype)
                              or (isinstance(format, type) and issubclass(format, numpy.generic))):
        dt = numpy.dtype(format)
        if dt.isnative and dt.fields is None and dt.name in _PLAIN_SIZES:
            return ArrayFormatType(dt.name)
        raise _invalid(f"NumPy dtype {dt!r} has no ArrayFormatType equivalent; supported formats: "
                       f"{_choices(ArrayFormatType)}")
    raise _invalid(f"{what} must be an ArrayFormatType, str, or NumPy dtype, got {format!r}")


def _channels_of(fmt, num_channels):
    """The channel count to pass (0: the format's own) after cuda.core's check for its eight formats."""
    if num_channels is None:
        return 0
    if isinstance(num_channels, bool):
        raise TypeError("num_channels must be an int or None, not bool")
    try:
        num_channels = operator.index(num_channels)  # NumPy integers too
    except TypeError:
        raise TypeError(f"num_channels must be an int or None, not {type(num_channels).__name__}") from None
    if fmt in _PLAIN_SIZES and num_channels not in (1, 2, 4):
        raise _invalid(f"num_channels must be 1, 2, or 4, got {num_channels!r}")
    if not 0 <= num_channels <= 0xFFFFFFFF:
        raise _invalid(f"num_channels must be 1, 2, or 4 (or the format's own count), got {num_channels!r}")
    return num_channels


def _shape_of(shape):
    """`shape` as a tuple of 1 to 3 ints >= 1 (TypeError, ValueError otherwise, as cuda.core)."""
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise TypeError(f"shape must be a tuple of ints, got {type(shape).__name__}")
    out = []
    for v in shape:
        if isinstance(v, bool):
            raise TypeError("shape must be a tuple of ints, got a bool in it")
        try:
            out.append(operator.index(v))
        except TypeError:
            raise TypeError(f"shape must be a tuple of ints, got a {type(v).__name__} in it") from None
    if not 1 <= len(out) <= 3:
        raise _invalid(f"shape rank must be 1, 2, or 3, got {len(out)}")
    for i, v in enumerate(out):
        if v < 1:
            raise _invalid(f"shape[{i}] must be >= 1, got {v}")
        if v > _U64_MAX:
            raise _invalid(f"shape[{i}] does not fit in 64 bits: {v}")
    return tuple(out)


def _kind_of(kind):
    if isinstance(kind, ArrayKindType):
        return kind
    if isinstance(kind, str):
        try:
            return ArrayKindType(kind.lower())
        except ValueError:
            pass
    raise _invalid(f"kind must be an ArrayKindType or one of {_choices(ArrayKindType)}, got {kind!r}")


def _bool(value, name):
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, not {type(value).__name__}")
    return value


def _count(value, name, low=0):
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an int, not bool")
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an int, not {type(value).__name__}") from None
    if not low <= value <= 0xFFFFFFFF:
        raise _invalid(f"{name} must be >= {low}, got {value}")
    return value


# ---- options ----------------------------------------------------------------------------------------------

class _ArrayOptionsBase(CachedStruct):
    """The fields OpaqueArrayOptions and MipmappedArrayOptions share, checked when made."""

    shape: Tuple[int, ...]
    format: ArrayFormatType
    num_channels: Optional[int]
    is_surface_load_store: bool
    kind: ArrayKindType
    num_layers: int
    is_texture_gather: bool
    is_depth_texture: bool
    is_sparse: bool

    def _set(self, shape, format, num_channels, is_surface_load_store, kind, num_layers, is_texture_gather,
             is_depth_texture, is_sparse):
        self.format = format_of(format)
        channels = _channels_of(self.format, num_channels)
        self.num_channels = None if num_channels is None else channels
        self.shape = _shape_of(shape)
        self.is_surface_load_store = _bool(is_surface_load_store, "is_surface_load_store")
        self.kind = _kind_of(kind)
        self.num_layers = _count(num_layers, "num_layers")
        self.is_texture_gather = _bool(is_texture_gather, "is_texture_gather")
        self.is_depth_texture = _bool(is_depth_texture, "is_depth_texture")
        self.is_sparse = _bool(is_sparse, "is_sparse")

    def _make_struct(self):
        fmt = format_of(self.format)
        shape = _shape_of(self.shape)
        c = OptionsC()
        c.struct_size = _OPTIONS_SIZE
        c.format = FORMAT_VALUES[fmt]
        c.num_channels = _channels_of(fmt, self.num_channels)
        c.kind = KIND_VALUES[_kind_of(self.kind)]
        c.flags = ((SURFACE_LOAD_STORE if self.is_surface_load_store else 0)
                   | (TEXTURE_GATHER if self.is_texture_gather else 0)
                   | (DEPTH_TEXTURE if self.is_depth_texture else 0) | (SPARSE if self.is_sparse else 0))
        c.width = shape[0]
        c.height = shape[1] if len(shape) > 1 else 0
        c.depth = shape[2] if len(shape) > 2 else 0
        c.layers = _count(self.num_layers, "num_layers")
        return c


@dataclass(init=False)
class OpaqueArrayOptions(_ArrayOptionsBase):
    """The description of an OpaqueArray to create (Device.create_opaque_array), checked when made.

    shape: (width,), (width, height) or (width, height, depth) in elements (a 1D, 2D or 3D array); for a
        layered array the shape of one layer, for a cubemap (width, width), the shape of one face.
    format: an ArrayFormatType, its value ("float32") or a NumPy dtype.
    num_channels: 1, 2 or 4 channels per element for cuda.core's eight formats; None (or the count) for the
        formats that name their own (normalized, BC, 101010_2).
    is_surface_load_store: the array may back a SurfaceObject (kernel-side stores).
    Beyond cuda.core (keyword-only): kind ("plain", "layered", "cubemap", "layered_cubemap"), num_layers
    (layers of a layered array, cubemaps of a layered cubemap), is_texture_gather (2D only),
    is_depth_texture, is_sparse (NotSupportedError where the device has no sparse arrays).
    """

    shape: Tuple[int, ...]
    format: ArrayFormatType
    num_channels: Optional[int]
    # Class-level defaults, as cuda.core's dataclass fields have (OpaqueArrayOptions.is_surface_load_store reads
    # False); every instance sets its own in __init__.
    is_surface_load_store: bool = False
    kind: ArrayKindType = ArrayKindType.PLAIN
    num_layers: int = 0
    is_texture_gather: bool = False
    is_depth_texture: bool = False
    is_sparse: bool = False

    def __init__(self, shape: Any, format: Any, num_channels: Optional[int], is_surface_load_store: bool = False, *,
                 kind: Union[ArrayKindType, str] = ArrayKindType.PLAIN, num_layers: int = 0,
                 is_texture_gather: bool = False, is_depth_texture: bool = False, is_sparse: bool = False) -> None:
        self._set(shape, format, num_channels, is_surface_load_store, kind, num_layers, is_texture_gather,
                  is_depth_texture, is_sparse)


@dataclass(init=False)
class MipmappedArrayOptions(_ArrayOptionsBase):
    """The description of a MipmappedArray to create (Device.create_mipmapped_array): level 0's, as
    OpaqueArrayOptions, and `num_levels`, 1 to 1 + floor(log2(the largest extent)) (each level halves every
    extent, down to 1; a count above the maximum is refused, where the driver would clamp it silently)."""

    shape: Tuple[int, ...]
    format: ArrayFormatType
    num_channels: Optional[int]
    num_levels: int
    is_surface_load_store: bool = False  # class-level defaults, as cuda.core's fields (see OpaqueArrayOptions)
    kind: ArrayKindType = ArrayKindType.PLAIN
    num_layers: int = 0
    is_texture_gather: bool = False
    is_depth_texture: bool = False
    is_sparse: bool = False

    def __init__(self, shape: Any, format: Any, num_channels: Optional[int], num_levels: int,
                 is_surface_load_store: bool = False, *, kind: Union[ArrayKindType, str] = ArrayKindType.PLAIN,
                 num_layers: int = 0, is_texture_gather: bool = False, is_depth_texture: bool = False,
                 is_sparse: bool = False) -> None:
        self._set(shape, format, num_channels, is_surface_load_store, kind, num_layers, is_texture_gather,
                  is_depth_texture, is_sparse)
        if isinstance(num_levels, bool):
            raise TypeError("num_levels must be an int, not bool")
        try:
            num_levels = operator.index(num_levels)
        except TypeError:
            raise TypeError(f"num_levels must be an int, not {type(num_levels).__name__}") from None
        if num_levels < 1:
            raise _invalid(f"num_levels must be >= 1, got {num_levels}")
        self.num_levels = num_levels
