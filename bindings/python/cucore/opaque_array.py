"""CUDA arrays (include/cucore/opaque_array.h): opaque arrays, mipmapped arrays, and the copies in and out of
them. The public names are in `cucore.texture` too, as cuda.core has them.

    dev = cucore.Device(0)
    dev.set_current()
    s = dev.create_stream()
    arr = dev.create_opaque_array(OpaqueArrayOptions(shape=(640, 480), format="float32", num_channels=1))
    arr.copy_from(numpy.zeros((480, 640), numpy.float32), stream=s)    # any buffer-protocol object
    out = arr.copy_to(bytearray(arr.size_bytes), stream=s)            # returns the destination
    layered = dev.create_opaque_array(OpaqueArrayOptions((64, 64), "uint8", 4, kind="layered", num_layers=6))
    mip = dev.create_mipmapped_array(MipmappedArrayOptions((256, 256), "float32", 1, num_levels=9))
    level3 = mip.get_level(3)                                        # an OpaqueArray of 32 x 32

An OpaqueArray is a hardware-laid-out allocation (CUarray) that kernels reach only through texture and
surface objects (texture.py); it has no device address, so data moves by copies: whole-array copies
(copy_from, copy_to) with Buffers, host memory and other arrays, and region copies (OpaqueArray.copy).
Shapes are in elements, width first as in cuda.core: (width,), (width, height), (width, height, depth).

Lifetimes: an array's storage is shared by the array, its levels (for a mipmapped array) and every texture or
surface object over it; close() lets go of this array's share at once (the storage goes when the last of them
does), and release order never matters. Arrays also come from a mapped GL image (GraphicsResource.map_array,
map_mipmapped_array: not owned, they keep the mapping) and from foreign handles (from_handle).

The layer above the memory modules (bindings/python/README.md, "Layers"): it uses buffer.py, copy_3d.py and the
object model; Device's create_opaque_array and create_mipmapped_array are handed down to device.py.
"""
from __future__ import annotations

import contextlib
import ctypes
import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, FrozenSet, Optional, Tuple, Union

from . import _lib
from ._handle import HandleObject, wrap_foreign
from .buffer import Buffer, _HostMemory
from .common import _U64_MAX, closed_error, options_of, raise_error
from .copy_3d import MemoryRegion
from .device import Device, _device
from .stream import _open_stream_handle
from .typing import ArrayFormatType, ArrayKindType
from ._array_options import (
    DEPTH_TEXTURE, FLAG_VALUES, KIND_VALUES, SPARSE, SURFACE_LOAD_STORE, TEXTURE_GATHER, MipmappedArrayOptions,
    OpaqueArrayOptions, _BC_FORMATS, _FORMAT_OF_VALUE, _KIND_OF_VALUE, _count, _invalid,
)

if TYPE_CHECKING:  # for type checkers only: graphics.py, above, sets the resource of the arrays it maps
    from .graphics import GraphicsResource

(_cucore_opaque_array_create, _cucore_opaque_array_from_handle, _cucore_opaque_array_retain,
 _cucore_opaque_array_release, _cucore_mipmapped_array_retain, _cucore_mipmapped_array_release,
 _cucore_opaque_array_close, _cucore_opaque_array_info, _cucore_opaque_array_handle,
 _cucore_opaque_array_copy_from_host, _cucore_opaque_array_copy_to_host, _cucore_opaque_array_copy_from_buffer,
 _cucore_opaque_array_copy_to_buffer, _cucore_opaque_array_copy_from_array, _cucore_opaque_array_copy,
 _cucore_mipmapped_array_create, _cucore_mipmapped_array_from_handle, _cucore_mipmapped_array_close,
 _cucore_mipmapped_array_info, _cucore_mipmapped_array_handle, _cucore_mipmapped_array_level) = _lib.bind(
    globals(), "cucore_opaque_array_create", "cucore_opaque_array_from_handle", "cucore_opaque_array_retain",
    "cucore_opaque_array_release", "cucore_mipmapped_array_retain", "cucore_mipmapped_array_release",
    "cucore_opaque_array_close", "cucore_opaque_array_info", "cucore_opaque_array_handle",
    "cucore_opaque_array_copy_from_host", "cucore_opaque_array_copy_to_host", "cucore_opaque_array_copy_from_buffer",
    "cucore_opaque_array_copy_to_buffer", "cucore_opaque_array_copy_from_array", "cucore_opaque_array_copy",
    "cucore_mipmapped_array_create", "cucore_mipmapped_array_from_handle", "cucore_mipmapped_array_close",
    "cucore_mipmapped_array_info", "cucore_mipmapped_array_handle", "cucore_mipmapped_array_level")
(_fast_opaque_array_create, _fast_opaque_array_release, _fast_opaque_array_close, _fast_mipmapped_array_release,
 _fast_mipmapped_array_close) = _lib.bind_unchecked(
    globals(), "cucore_opaque_array_create", "cucore_opaque_array_release", "cucore_opaque_array_close",
    "cucore_mipmapped_array_release", "cucore_mipmapped_array_close")

InfoC = _lib.STRUCTS["cucore_opaque_array_info_t"]
CopyC = _lib.STRUCTS["cucore_opaque_array_copy_t"]

_c_void_p = ctypes.c_void_p
_c_uint32 = ctypes.c_uint32
_c_uint64 = ctypes.c_uint64
_INFO_SIZE = ctypes.sizeof(InfoC)
_new = object.__new__
_handle_arg = _lib.handle_arg
_handle_outs = _lib.outs(_c_void_p)
_new_out = _lib.new_out

# ---- the description every array kind answers -------------------------------------------------------------

class _Described:
    """What an array (or a mipmapped array: its level 0) is, read from libcucore once (cucore_opaque_array_info)
    and kept: it never changes, and it still answers after close(). Also the handle behaviour both kinds share:
    wrapping, wrapping a foreign driver object, the raw handle, the mapped GL resource, close()."""

    __slots__ = ()
    _info: Any
    _hv: int
    _resource: Optional[GraphicsResource]
    _info_fn: Any = None  # each class: staticmethod(the C info function)

    if TYPE_CHECKING:
        _h: Any
        _raw: Any
        _release: Any

    @classmethod
    def _wrap(cls, hv, resource=None):
        a: Any = _new(cls)
        a._h = _handle_arg(hv)
        a._hv = hv
        a._raw = None
        a._info = None
        a._resource = resource
        return a

    @classmethod
    def _from_foreign(cls, from_handle_fn, handle, device, owner):
        """cls wrapping the foreign driver object `handle` of `device` through `from_handle_fn`."""
        dev = _device(device)
        st, hv = wrap_foreign(from_handle_fn, owner, dev._h, _c_void_p(_raw_handle(handle)))
        if st:
            raise_error(st, dev)
        return cls._wrap(hv)

    def _live(self):
        h = self._h
        if h is None:
            raise closed_error(self)
        return h

    @property
    def handle(self) -> int:
        """The raw CUarray (CUmipmappedArray for a MipmappedArray) as an int (0 after close())."""
        if self._h is None:
            return 0
        return HandleObject.handle.fget(self)  # type: ignore[attr-defined]

    @property
    def resource(self) -> Optional[GraphicsResource]:
        """The GraphicsResource whose mapping this is (None for arrays that are not a mapped GL image)."""
        return self._resource

    def _closing(self) -> Any:
        """The first half of close(): the handle to close and release, or None when closed already. The
        description is kept (it still answers), the GL resource let go."""
        me: Any = self  # the slots are the subclasses'
        h = me._h
        if h is None:
            return None
        me._keep_description()
        me._h = None
        me._resource = None
        return h

    def _closed(self, h: Any, status: int) -> None:
        """The second half of close(): release `h`, whose close answered `status`."""
        self._release(h)
        if status:
            raise_error(status)

    def _described(self):
        info = self._info
        if info is None:
            h = self._h
            if h is None:
                raise closed_error(self)
            info = InfoC()
            info.struct_size = _INFO_SIZE
            st = self._info_fn(h, info)
            if st:
                raise_error(st, self)
            self._info = info
        return info

    def _keep_description(self):
        """Before close(): read the description if it was never asked for, so it still answers afterwards
        (a GL image already unmapped has none left to read)."""
        if self._info is None:
            try:
                self._described()
            except Exception:
                pass

    @property
    def shape(self) -> Tuple[int, ...]:
        """The extent in elements, width first: (width,), (width, height) or (width, height, depth); for a
        layered array one layer's, for a cubemap one face's (num_layers and kind say the rest)."""
        i = self._described()
        if i.depth:
            return (i.width, i.height, i.depth)
        if i.height:
            return (i.width, i.height)
        return (i.width,)

    @property
    def width(self) -> int:
        """Elements per row."""
        return self._described().width

    @property
    def height(self) -> int:
        """Rows (0 for a 1D array)."""
        return self._described().height

    @property
    def depth(self) -> int:
        """Slices of a 3D array (0 otherwise)."""
        return self._described().depth

    @property
    def num_layers(self) -> int:
        """Layers of a layered array, cubemaps of a layered cubemap, else 0."""
        return self._described().layers

    @property
    def format(self) -> ArrayFormatType:
        """The element format (an ArrayFormatType)."""
        return _FORMAT_OF_VALUE[self._described().format]

    @property
    def num_channels(self) -> int:
        """Channels per element."""
        return self._described().num_channels

    @property
    def element_bytes(self) -> int:
        """Bytes per element (the format's size times the channels; for a BC format, bytes per 4x4 block)."""
        return self._described().element_size

    @property
    def element_size(self) -> int:
        """Bytes per element: element_bytes, as the seed's CUDAArray names it."""
        return self._described().element_size

    @property
    def kind(self) -> ArrayKindType:
        """ArrayKindType.PLAIN, LAYERED, CUBEMAP or LAYERED_CUBEMAP."""
        return _KIND_OF_VALUE[self._described().kind]

    @property
    def flags(self) -> FrozenSet[str]:
        """The array's flags by name: "surface_load_store", "texture_gather", "depth_texture", "sparse"."""
        bits = self._described().flags
        return frozenset(name for name, bit in FLAG_VALUES.items() if bits & bit)

    @property
    def is_surface_load_store(self) -> bool:
        """Whether the array may back a SurfaceObject (created with is_surface_load_store=True)."""
        return bool(self._described().flags & SURFACE_LOAD_STORE)

    @property
    def is_texture_gather(self) -> bool:
        """Whether the array may be read with texture gather."""
        return bool(self._described().flags & TEXTURE_GATHER)

    @property
    def is_depth_texture(self) -> bool:
        """Whether the array is a depth texture."""
        return bool(self._described().flags & DEPTH_TEXTURE)

    @property
    def is_sparse(self) -> bool:
        """Whether the array is sparse."""
        return bool(self._described().flags & SPARSE)

    @property
    def size_bytes(self) -> int:
        """The bytes of the array tightly packed, as whole-array copies read and write it: row_bytes x
        row_count x slice_count (for a mipmapped array, level 0's)."""
        return self._described().size_bytes

    @property
    def nbytes(self) -> int:
        """size_bytes (the name NumPy and the mapped GL arrays of earlier versions use)."""
        return self._described().size_bytes

    @property
    def row_bytes(self) -> int:
        """Bytes of one packed row (for a BC format, of one row of 4x4 blocks)."""
        return self._described().row_bytes

    @property
    def row_count(self) -> int:
        """Packed rows per slice (for a BC format, rows of blocks)."""
        return self._described().row_count

    @property
    def slice_count(self) -> int:
        """Packed slices: the depth of a 3D array, layers, 6 faces per cubemap, else 1."""
        return self._described().slice_count

    @property
    def is_owned(self) -> bool:
        """True for an array the library created (destroyed once unused); False for a level of a mipmapped
        array, a wrapped foreign array and a mapped GL image."""
        return bool(self._described().is_owned)

    @property
    def device(self) -> Device:
        """The Device the array is on."""
        return Device(self._described().device_ordinal)


# ---- opaque arrays ----------------------------------------------------------------------------------------

def _open(stream):
    """(Stream, its handle) of a stream argument (a Stream or anything with __cuda_stream__)."""
    return _open_stream_handle(stream)


def _host(obj, writable, what):
    """_HostMemory of a copy's host side; TypeError naming what it must be."""
    try:
        return _HostMemory(obj, writable)
    except (TypeError, BufferError) as e:
        raise TypeError(f"{what} must be an OpaqueArray, a Buffer or a contiguous"
                        f"{' writable' if writable else ''} buffer-protocol object (bytes, bytearray, NumPy "
                        f"array, ...), got {type(obj).__name__} ({e})") from None


class OpaqueArray(_Described, HandleObject):
    """An opaque, hardware-laid-out allocation (CUarray) that kernels reach through TextureObject and
    SurfaceObject only; data moves in and out by copies (copy_from, copy_to, OpaqueArray.copy).

    Made by Device.create_opaque_array(options), OpaqueArray.from_descriptor(...) (the seed's spelling),
    MipmappedArray.get_level(), GraphicsResource.map_array() or OpaqueArray.from_handle(). close() (or the
    end of a `with` block) lets go of it: its storage goes once no texture, surface or level uses it.
    After close() `handle` reads 0 and copies raise; the description (shape, format, ...) still answers.
    """

    __slots__ = ("_hv", "_info", "_resource")
    _release = staticmethod(_fast_opaque_array_release)
    _handle_fn = staticmethod(_cucore_opaque_array_handle)
    _info_fn = staticmethod(_cucore_opaque_array_info)

    def __new__(cls, *args: Any, **kwargs: Any) -> OpaqueArray:
        raise RuntimeError("OpaqueArray cannot be instantiated directly. Use Device.create_opaque_array().")

    @classmethod
    def from_descriptor(cls, *, shape: Any, format: Any, num_channels: Optional[int],
                        is_surface_load_store: bool = False) -> OpaqueArray:
        """A new array on the current device (the seed's cuda.core.textures.CUDAArray.from_descriptor):
        Device().create_opaque_array(OpaqueArrayOptions(shape, format, num_channels, is_surface_load_store))."""
        return _create_opaque_array(Device(), OpaqueArrayOptions(shape, format, num_channels, is_surface_load_store))

    @classmethod
    def from_handle(cls, handle: int, device: Union[Device, int, None] = None, *, owner: Any = None) -> OpaqueArray:
        """Wrap a foreign CUarray (an int, or anything int() takes) of `device` (default: the current one)
        without owning it: it is never destroyed here. `owner`, if given, is kept alive until libcucore lets go
        of the array (this object and every texture or surface object over it are gone)."""
        return cls._from_foreign(_cucore_opaque_array_from_handle, handle, device, owner)

    # ---- state ---------------------------------------------------------------------------------------

    @property
    def is_mipmapped(self) -> bool:
        """False: an OpaqueArray is one array (MipmappedArray answers True)."""
        return False

    def close(self) -> None:
        """Let go of the array now (idempotent): it is destroyed unless texture or surface objects (or, for a
        level, nothing: a level only holds its mipmapped array) still use it, then with the last of them; a
        mapped GL image is unmapped once nothing holds the mapping."""
        h = self._closing()
        if h is not None:
            self._closed(h, _fast_opaque_array_close(h))

    # ---- whole-array copies ----------------------------------------------------------------------------

    def copy_from(self, src: Any, *, stream: Any) -> None:
        """Fill the whole array from `src`, ordered on `stream` (a Stream or anything with __cuda_stream__):
        an OpaqueArray of the same packed layout, a Buffer, or host memory (any contiguous buffer-protocol
        object: NumPy arrays, bytes, bytearray, array.array, memoryview) holding at least size_bytes, read
        tightly packed (row_bytes per row; rows, then slices). A shorter source raises ValueError naming both
        sizes. Pageable host memory has been read when the call returns."""
        h = self._live()
        s, sh = _open(stream)
        if isinstance(src, OpaqueArray):
            st = _cucore_opaque_array_copy_from_array(h, src._live(), sh)
            if st:
                raise_error(st, self, src, s)
            return
        # libcucore checks that the source holds size_bytes (ValueError naming both sizes)
        if isinstance(src, Buffer):
            st = _cucore_opaque_array_copy_from_buffer(h, src._h, sh)
            if st:
                raise_error(st, self, src, s)
            return
        with _host(src, False, "copy_from(): the source") as m:
            st = _cucore_opaque_array_copy_from_host(h, _c_void_p(m.address), _c_uint64(m.nbytes), sh)
        if st:
            raise_error(st, self, s)

    @staticmethod
    def copy(dst: Any, src: Any, extent: Union[int, Tuple[int, ...]], *, stream: Any) -> None:
        """Copy a region of `extent` = width, (width, height) or (width, height, depth) elements (for a BC
        format: texels, multiples of 4 unless they reach the array's edge; depth counts slices, layers or
        faces) from `src` to `dst`, in order on `stream` (cucore_opaque_array_copy; C++ and Rust
        OpaqueArray::copy).

        Each side is an ArrayRegion (or an OpaqueArray: its origin), or memory: a MemoryRegion of a Buffer or
        host memory (x in bytes; pitch 0: the rows copied tightly; height 0: slices of the rows copied), or a
        Buffer or host object alone (tightly packed from its start). At least one side is an array; between
        two arrays the element sizes must agree."""
        _copy_region(dst, src, extent, stream=stream)

    def copy_to(self, dst: Any, *, stream: Any) -> Any:
        """Copy the whole array into `dst` on `stream` and return `dst`: an OpaqueArray of the same packed
        layout, a Buffer, or writable host memory (bytearray, NumPy array, array.array, writable
        memoryview, ...) of at least size_bytes, written tightly packed. Pageable host memory is filled when
        the call returns; synchronize the stream before reading page-locked memory."""
        h = self._live()
        s, sh = _open(stream)
        if isinstance(dst, OpaqueArray):
            st = _cucore_opaque_array_copy_from_array(dst._live(), h, sh)
            if st:
                raise_error(st, dst, self, s)
            return dst
        if isinstance(dst, Buffer):
            st = _cucore_opaque_array_copy_to_buffer(h, dst._h, sh)
            if st:
                raise_error(st, self, dst, s)
            return dst
        with _host(dst, True, "copy_to(): the destination") as m:
            st = _cucore_opaque_array_copy_to_host(h, _c_void_p(m.address), _c_uint64(m.nbytes), sh)
        if st:
            raise_error(st, self, s)
        return dst

    def to_bytes(self, *, stream: Any) -> bytes:
        """The array's contents, tightly packed, as bytes (copied on `stream`, which is then synchronized)."""
        s, _ = _open(stream)
        out = bytearray(self._described().size_bytes)
        self.copy_to(out, stream=s)
        s.sync()
        return bytes(out)

    def __repr__(self) -> str:
        if self._info is None and self._h is None:
            return "<OpaqueArray (closed)>"
        try:
            i = self._described()
            extra = "" if i.kind == KIND_VALUES[ArrayKindType.PLAIN] else \
                f", kind={self.kind.value!r}, num_layers={i.layers}"
            closed = " (closed)" if self._h is None else ""
            return (f"OpaqueArray(shape={self.shape}, format={self.format.name}, num_channels={i.num_channels}"
                    f"{extra}){closed}")
        except Exception:  # an unmapped GL image: its description is gone
            return "<OpaqueArray (unmapped)>"


def _raw_handle(handle):
    if isinstance(handle, bool):
        raise TypeError("handle must be an int, not bool")
    if isinstance(handle, ctypes.c_void_p):
        return handle.value or 0
    try:
        value = operator.index(handle)
    except TypeError:
        if not hasattr(type(handle), "__int__"):
            raise TypeError(f"handle must be an int (or convertible with int()), not {type(handle).__name__}") \
                from None
        value = int(handle)
    if not 0 <= value <= _U64_MAX:
        raise ValueError(f"handle {value:#x} does not fit in 64 bits")
    return value


def _create_opaque_array(device: Device, options: Any) -> OpaqueArray:
    """Device.create_opaque_array: a new array on `device` from OpaqueArrayOptions (or a dict of its fields)."""
    if options is None:
        raise TypeError("create_opaque_array() needs an OpaqueArrayOptions (shape, format, num_channels)")
    if type(options) is not OpaqueArrayOptions:
        options = options_of(options, OpaqueArrayOptions)
    ref = options._struct_ref()[1]
    try:
        out, oref = pair = _handle_outs.pop()
    except IndexError:
        out, oref = pair = _new_out(_c_void_p)
    st = _fast_opaque_array_create(device._h, ref, oref)
    h = out.value
    _handle_outs.append(pair)
    if st:
        raise_error(st, device)
    return OpaqueArray._wrap(h)


# ---- mipmapped arrays -------------------------------------------------------------------------------------

class MipmappedArray(_Described, HandleObject):
    """A chain of levels (CUmipmappedArray) for mipmapped texture sampling; each level is an OpaqueArray
    (get_level) that keeps the mipmapped array alive. The description (shape, format, ...) is level 0's.

    Made by Device.create_mipmapped_array(options), GraphicsResource.map_mipmapped_array() or
    MipmappedArray.from_handle(). close() lets go of it: the storage goes once no level or texture object
    uses it. After close() `handle` reads 0."""

    __slots__ = ("_hv", "_info", "_resource")
    _release = staticmethod(_fast_mipmapped_array_release)
    _handle_fn = staticmethod(_cucore_mipmapped_array_handle)
    _info_fn = staticmethod(_cucore_mipmapped_array_info)

    def __new__(cls, *args: Any, **kwargs: Any) -> MipmappedArray:
        raise RuntimeError("MipmappedArray cannot be instantiated directly. Use Device.create_mipmapped_array().")

    @classmethod
    def from_handle(cls, handle: int, device: Union[Device, int, None] = None, *,
                    owner: Any = None) -> MipmappedArray:
        """Wrap a foreign CUmipmappedArray of `device` (default: the current one) without owning it, as
        OpaqueArray.from_handle; its level count is found by asking the driver."""
        return cls._from_foreign(_cucore_mipmapped_array_from_handle, handle, device, owner)

    @property
    def num_levels(self) -> int:
        """The number of levels."""
        return self._described().num_levels

    @property
    def is_mipmapped(self) -> bool:
        """True (an OpaqueArray answers False)."""
        return True

    def get_level(self, level: int) -> OpaqueArray:
        """Level `level` (0 is the largest) as an OpaqueArray that is not owned and keeps this mipmapped array
        (and, for a mapped GL image, its mapping) alive. ValueError for a level outside [0, num_levels)."""
        if isinstance(level, bool) or not isinstance(level, int):
            try:
                level = operator.index(level)
            except TypeError:
                raise TypeError(f"level must be an int, not {type(level).__name__}") from None
        if level < 0:
            raise _invalid(f"level must be >= 0, got {level}")
        # libcucore refuses a level past the last, naming the count
        out = _c_void_p()
        st = _cucore_mipmapped_array_level(self._live(), _c_uint32(level), out)
        if st:
            raise_error(st, self)
        return OpaqueArray._wrap(out.value, self._resource)

    level = get_level

    def close(self) -> None:
        """Let go of the mipmapped array now (idempotent): destroyed unless levels or texture objects still use
        it, then with the last of them."""
        h = self._closing()
        if h is not None:
            self._closed(h, _fast_mipmapped_array_close(h))

    def __repr__(self) -> str:
        if self._info is None and self._h is None:
            return "<MipmappedArray (closed)>"
        try:
            i = self._described()
            closed = " (closed)" if self._h is None else ""
            return (f"MipmappedArray(shape={self.shape}, format={self.format.name}, num_channels={i.num_channels}, "
                    f"num_levels={i.num_levels}){closed}")
        except Exception:
            return "<MipmappedArray (unmapped)>"


def _create_mipmapped_array(device: Device, options: Any) -> MipmappedArray:
    """Device.create_mipmapped_array: a new mipmapped array on `device` from MipmappedArrayOptions (or a dict)."""
    if options is None:
        raise TypeError("create_mipmapped_array() needs a MipmappedArrayOptions (shape, format, num_channels, "
                        "num_levels)")
    opts = options_of(options, MipmappedArrayOptions)
    c = opts._struct()
    levels = _count(opts.num_levels, "num_levels", 1)
    out = _c_void_p()
    st = _cucore_mipmapped_array_create(device._h, c, _c_uint32(levels), out)
    if st:
        raise_error(st, device)
    return MipmappedArray._wrap(out.value)


# ---- region copies ------------------------------------------------------------------------------------------

@dataclass
class ArrayRegion:
    """Where in an array a region copy starts, in elements (for a BC format: texels, multiples of 4): `x`,
    `y`, and `z`, the slice of a 3D array, the layer of a layered array, the face of a cubemap (+X, -X, +Y,
    -Y, +Z, -Z), or 6 x cubemap + face of a layered cubemap."""
    array: OpaqueArray
    x: int = 0
    y: int = 0
    z: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.array, OpaqueArray):
            raise TypeError(f"ArrayRegion.array must be an OpaqueArray, not {type(self.array).__name__}")
        for name in ("x", "y", "z"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"ArrayRegion.{name} must be an int, not {type(value).__name__}")
            if not 0 <= value <= _U64_MAX:
                raise ValueError(f"ArrayRegion.{name} must be in [0, 2**64), not {value}")


def _copy_extent(extent):
    if isinstance(extent, int) and not isinstance(extent, bool):
        extent = (extent,)
    try:
        values = tuple(extent)
    except TypeError:
        raise TypeError(f"extent must be an int or (width, height[, depth]) in elements, not "
                        f"{type(extent).__name__}") from None
    if not 1 <= len(values) <= 3:
        raise ValueError(f"extent must have 1 to 3 entries (width, height, depth), not {len(values)}")
    out = []
    for name, v in zip(("width", "height", "depth"), values):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"extent {name} must be an int, not {type(v).__name__}")
        if not 1 <= v <= _U64_MAX:
            raise ValueError(f"extent {name} must be >= 1, not {v}")
        out.append(v)
    return tuple(out) + (1,) * (3 - len(out))


def _copy_region(dst: Any, src: Any, extent: Union[int, Tuple[int, ...]], *, stream: Any) -> None:
    """OpaqueArray.copy: copy a region of `extent` = width, (width, height) or (width, height, depth) elements (for a BC
    format: texels, multiples of 4 unless they reach the array's edge; depth counts slices, layers or faces)
    from `src` to `dst`, in order on `stream` (cucore_opaque_array_copy).

    Each side is an ArrayRegion (or an OpaqueArray: its origin), or memory: a MemoryRegion of a Buffer or
    host memory (x in bytes; pitch 0: the rows copied tightly; height 0: slices of the rows copied), or a
    Buffer or host object alone (tightly packed from its start). At least one side is an array; between
    two arrays the element sizes must agree. libcucore checks each array region against its extents and
    each Buffer region against its size; host regions are checked here against the host object's size."""
    width, height, depth = _copy_extent(extent)
    sides = []
    for side, what in ((src, "src"), (dst, "dst")):
        if isinstance(side, OpaqueArray):
            side = ArrayRegion(side)
        elif not isinstance(side, (ArrayRegion, MemoryRegion)):
            side = MemoryRegion(side, pitch=0)
        sides.append(side)
    s_side, d_side = sides
    arrays = [x for x in sides if isinstance(x, ArrayRegion)]
    if not arrays:
        raise TypeError("OpaqueArray.copy(): one side at least must be an OpaqueArray or an ArrayRegion "
                        "(copies between memory are copy_3d's)")
    info = arrays[0].array._described()
    blocks = _FORMAT_OF_VALUE.get(info.format) in _BC_FORMATS
    row_bytes = (-(-width // 4) if blocks else width) * info.element_size
    rows = -(-height // 4) if blocks else height
    c = CopyC()
    c.struct_size = ctypes.sizeof(CopyC)
    c.width, c.height, c.depth = width, height, depth
    strm, sh = _open(stream)
    used: list = []
    with contextlib.ExitStack() as hosts:
        for side, ca, cm, what, writable in ((s_side, c.src_array, c.src_memory, "src", False),
                                             (d_side, c.dst_array, c.dst_memory, "dst", True)):
            if isinstance(side, ArrayRegion):
                side.array._live()
                ca.array = side.array._hv
                ca.x, ca.y, ca.z = side.x, side.y, side.z
                used.append(side.array)
                continue
            cm.offset, cm.pitch, cm.height, cm.x, cm.y, cm.z = side.offset, side.pitch, side.height, side.x, side.y, \
                side.z
            mem = side.memory
            if isinstance(mem, Buffer):
                if mem._h is None:
                    raise closed_error(mem)
                cm.buffer = ctypes.cast(mem._h, _c_void_p).value  # the handle's value
                used.append(mem)
                continue
            m = hosts.enter_context(_host(mem, writable, f"OpaqueArray.copy(): {what}"))
            pitch = side.pitch or row_bytes
            slice_rows = side.height or rows
            end = side.offset + ((side.z + depth - 1) * slice_rows + side.y + rows - 1) * pitch + side.x + row_bytes
            if end > m.nbytes:
                raise _invalid(f"OpaqueArray.copy(): the {what} region ends at byte {end}, beyond its host memory "
                               f"of {m.nbytes} bytes")
            cm.host = m.address
        st = _cucore_opaque_array_copy(c, sh)
    if st:
        raise_error(st, strm, *used)


# Device.create_opaque_array and create_mipmapped_array (device.py is below this module).
_lib.hand_down("device", _create_opaque_array=_create_opaque_array, _create_mipmapped_array=_create_mipmapped_array)

# The public names are cucore.texture's (texture.py), where they are documented; this module exports none itself.
__all__: list = []
