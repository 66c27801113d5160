"""The layout of a strided tensor (shape, strides in elements, itemsize) and the element types of
StridedMemoryView (strided_memory_view.py), kept apart from the view so each file has one concern.

_StridedLayout is the private layout class cuda.core's StridedMemoryView.view() takes, with the part of
its interface a view needs; view() also takes cuda.core's own layout objects (anything with shape, strides
and itemsize). Element types are NumPy dtypes where NumPy is importable (as cuda.core's), else _DType, a
small stand-in with the same `name`, `kind`, `itemsize` and `str`. Nothing here calls libcucore.
"""
from __future__ import annotations

import importlib
import operator
import re
from typing import Any, Optional, Tuple

_numpy_module: Any = None


def _numpy() -> Any:
    """NumPy, or None where it is not installed (imported on first use: `import cucore` stays light)."""
    global _numpy_module
    if _numpy_module is None:
        try:
            import numpy
            _numpy_module = numpy
        except ImportError:
            _numpy_module = False
    return _numpy_module or None


def _ints(values: Any, what: str) -> Tuple[int, ...]:
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{what} must be a tuple of ints, not {type(values).__name__}")
    try:
        out = tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"{what} must be a tuple of ints, not {values!r}") from None
    if any(isinstance(v, bool) for v in values):
        raise TypeError(f"{what} must be a tuple of ints, not {values!r}")
    return out


class _StridedLayout:
    """shape, strides (in elements; None: C-contiguous) and itemsize (bytes per element) of a tensor."""

    __slots__ = ("shape", "strides", "itemsize", "slice_offset")

    def __init__(self, shape: Any, strides: Any, itemsize: int, divide_strides: bool = False) -> None:
        self.shape = _ints(shape, "shape")
        if any(n < 0 for n in self.shape):
            raise ValueError(f"shape {self.shape} has a negative extent")
        if isinstance(itemsize, bool) or not isinstance(itemsize, int) or itemsize <= 0:
            raise ValueError(f"itemsize must be a positive int, not {itemsize!r}")
        self.itemsize = itemsize
        self.slice_offset = 0
        if strides is None:
            self.strides: Optional[Tuple[int, ...]] = None
            return
        st = _ints(strides, "strides")
        if len(st) != len(self.shape):
            raise ValueError(f"strides {st} must have one entry per dimension of shape {self.shape}")
        if divide_strides:
            if any(s % itemsize for s in st):
                raise ValueError(f"strides {st} (bytes) are not multiples of the itemsize {itemsize}")
            st = tuple(s // itemsize for s in st)
        self.strides = st

    @classmethod
    def _of(cls, layout: Any) -> _StridedLayout:
        """A _StridedLayout from this class or any layout object with shape, strides and itemsize (cuda.core's)."""
        if isinstance(layout, cls):
            return layout
        try:
            out = cls(layout.shape, layout.strides, layout.itemsize)
        except AttributeError:
            raise TypeError(f"layout must have shape, strides and itemsize, not {type(layout).__name__}") from None
        out.slice_offset = operator.index(getattr(layout, "slice_offset", 0) or 0)
        return out

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.shape)

    @property
    def volume(self) -> int:
        """The number of elements."""
        n = 1
        for e in self.shape:
            n *= e
        return n

    @property
    def dense_strides(self) -> Tuple[int, ...]:
        """The strides in elements: the given ones, or the C-contiguous ones where none were given."""
        if self.strides is not None:
            return self.strides
        out, acc = [], 1
        for e in reversed(self.shape):
            out.append(acc)
            acc *= max(e, 1)
        return tuple(reversed(out))

    @property
    def strides_in_bytes(self) -> Optional[Tuple[int, ...]]:
        """The strides in bytes (None: C-contiguous)."""
        return None if self.strides is None else tuple(s * self.itemsize for s in self.strides)

    @property
    def slice_offset_in_bytes(self) -> int:
        """The byte offset of element (0, ...) from the memory the layout is applied to."""
        return self.slice_offset * self.itemsize

    @property
    def offset_bounds(self) -> Tuple[int, int]:
        """(lowest, highest) element offset from element (0, ...) any element reaches; (0, -1) when empty."""
        if self.volume == 0:
            return 0, -1
        low = high = 0
        for e, s in zip(self.shape, self.dense_strides):
            reach = (e - 1) * s
            if reach < 0:
                low += reach
            else:
                high += reach
        return low, high

    def required_size_in_bytes(self) -> int:
        """The bytes the elements span from element (0, ...); ValueError if a stride reaches below it."""
        low, high = self.offset_bounds
        if low < 0:
            raise ValueError(f"the layout's negative strides reach {-low} elements below its first element")
        return (high + 1) * self.itemsize

    @property
    def is_contiguous_c(self) -> bool:
        """Whether the elements are packed in row-major (C) order."""
        return self.volume == 0 or all(e == 1 or s == d for e, s, d in zip(
            self.shape, self.dense_strides, _StridedLayout(self.shape, None, self.itemsize).dense_strides))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _StridedLayout):
            return NotImplemented
        return (self.shape, self.dense_strides, self.itemsize, self.slice_offset) == \
            (other.shape, other.dense_strides, other.itemsize, other.slice_offset)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"_StridedLayout(shape={self.shape}, strides={self.strides}, itemsize={self.itemsize})"


# ---- element types -------------------------------------------------------------------------------------

# DLPack type codes (include/cucore/dlpack.h, DLDataTypeCode) <-> NumPy kinds.
_DL_INT, _DL_UINT, _DL_FLOAT, _DL_BFLOAT, _DL_COMPLEX, _DL_BOOL = 0, 1, 2, 4, 5, 6
_KIND_OF_CODE = {_DL_INT: "i", _DL_UINT: "u", _DL_FLOAT: "f", _DL_COMPLEX: "c", _DL_BOOL: "b"}
_CODE_OF_KIND = {v: k for k, v in _KIND_OF_CODE.items()}
_KIND_NAMES = {"b": "bool", "i": "int", "u": "uint", "f": "float", "c": "complex"}
_VALID_BITS = {"b": (8,), "i": (8, 16, 32, 64), "u": (8, 16, 32, 64), "f": (16, 32, 64), "c": (64, 128)}
_TYPESTR = re.compile(r"^([<>|=]?)([biufc])(\d+)$")
_NAME = re.compile(r"^(bool|int|uint|float|complex)(\d*)$")


class _DType:
    """A stand-in for numpy.dtype where NumPy is not installed: `name` ("float32"), `kind` ("f"), `itemsize`
    (bytes) and `str` ("<f4"). Equal to another _DType of the same type, and to its name or typestr."""

    __slots__ = ("kind", "itemsize")

    def __init__(self, kind: str, itemsize: int) -> None:
        if kind not in _VALID_BITS or itemsize * 8 not in _VALID_BITS[kind]:
            raise TypeError(f"unsupported element type: kind {kind!r}, {itemsize} bytes")
        self.kind = kind
        self.itemsize = itemsize

    @classmethod
    def parse(cls, value: Any) -> _DType:
        """From a _DType, a name ("float32", "bool") or a typestr ("<f4", "f4", "|b1")."""
        if isinstance(value, _DType):
            return value
        if isinstance(value, str):
            m = _TYPESTR.match(value)
            if m and m.group(1) != ">":
                return cls(m.group(2), int(m.group(3)))
            m = _NAME.match(value)
            if m:
                kind = {"bool": "b", "int": "i", "uint": "u", "float": "f", "complex": "c"}[m.group(1)]
                bits = int(m.group(2) or (8 if kind == "b" else 64))
                if bits % 8 == 0:
                    return cls(kind, bits // 8)
        raise TypeError(f"data type {value!r} not understood (without NumPy: a name such as 'float32' or a "
                        f"little-endian typestr such as '<f4')")

    @property
    def name(self) -> str:
        """The NumPy name of the type ("float32", "bool")."""
        return "bool" if self.kind == "b" else f"{_KIND_NAMES[self.kind]}{self.itemsize * 8}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            try:
                other = _DType.parse(other)
            except TypeError:
                return False
        if isinstance(other, _DType):
            return (self.kind, self.itemsize) == (other.kind, other.itemsize)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.kind, self.itemsize))

    def __repr__(self) -> str:
        return f"dtype('{self.name}')"

    # Last in the class: the property's name would shadow the builtin in the annotations after it.
    @property
    def str(self) -> str:
        """The array-interface typestr ("<f4")."""
        return f"{'|' if self.itemsize == 1 else '<'}{self.kind}{self.itemsize}"


def as_dtype(value: Any) -> Any:
    """A numpy.dtype of `value` (anything numpy.dtype() takes), or a _DType where NumPy is not installed."""
    np = _numpy()
    if np is not None:
        return np.dtype(value)
    if hasattr(value, "kind") and hasattr(value, "itemsize") and not isinstance(value, _DType):
        return _DType(value.kind, value.itemsize)
    return _DType.parse(value)


def dtype_of_typestr(typestr: Any) -> Any:
    """The element type of an array-interface typestr ("<f4"); BufferError for one not understood."""
    if not isinstance(typestr, str):
        raise BufferError(f"typestr must be a str, not {type(typestr).__name__}")
    try:
        return as_dtype(typestr)
    except (TypeError, ValueError) as e:
        raise BufferError(f"typestr {typestr!r} is not supported: {e}") from None


def dtype_of_dlpack(code: int, bits: int, lanes: int) -> Any:
    """The element type of a DLPack DLDataType, as cuda.core gives it (NotImplementedError for vector types and,
    without ml_dtypes, bfloat16; TypeError for the rest NumPy has no type for)."""
    if lanes != 1:
        raise NotImplementedError(f"vector dtypes (lanes={lanes}) are not supported")
    if code == _DL_BFLOAT:
        if bits == 16:
            try:
                ml_dtypes = importlib.import_module("ml_dtypes")  # optional, as in cuda.core
            except ImportError:
                raise NotImplementedError("bfloat16 needs the ml_dtypes package to be installed") from None
            return _numpy().dtype(ml_dtypes.bfloat16)
        raise TypeError(f"bfloat{bits} is not supported")
    kind = _KIND_OF_CODE.get(code)
    if kind is None:
        raise TypeError(f"unsupported dtype: DLPack type code {code}")
    if bits not in _VALID_BITS[kind]:
        raise TypeError(f"{_KIND_NAMES[kind]}{bits} is not supported")
    np = _numpy()
    return np.dtype(f"{kind}{bits // 8}") if np is not None else _DType(kind, bits // 8)


def dlpack_of_dtype(dtype: Any) -> Tuple[int, int, int]:
    """The DLPack (code, bits, lanes) of an element type; BufferError for one DLPack cannot carry."""
    if getattr(dtype, "fields", None) is not None:
        raise BufferError("structured dtypes are not supported for DLPack export")
    if getattr(dtype, "byteorder", "=") not in ("=", "|", "<"):
        raise BufferError(f"non-native byte order ({dtype}) is not supported for DLPack export")
    name, kind, itemsize = getattr(dtype, "name", ""), getattr(dtype, "kind", ""), getattr(dtype, "itemsize", 0)
    if name == "bfloat16":
        return _DL_BFLOAT, 16, 1
    if kind in _CODE_OF_KIND and itemsize * 8 in _VALID_BITS[kind]:
        return _CODE_OF_KIND[kind], itemsize * 8, 1
    raise BufferError(f"dtype {dtype} is not supported for DLPack export")
