"""Texture and surface objects (include/cucore/texture.h), and the public module `cucore.texture` with
cuda.core's names (the arrays are opaque_array.py's, the same classes).

    from cucore.texture import OpaqueArrayOptions, ResourceDescriptor, TextureObjectOptions
    arr = dev.create_opaque_array(OpaqueArrayOptions((w, h), "float32", 1))
    arr.copy_from(pixels, stream=s)
    tex = dev.create_texture_object(resource=ResourceDescriptor.from_opaque_array(arr),
                                    options=TextureObjectOptions(filter_mode="linear", address_mode="clamp"))
    cucore.launch(s, config, kernel, tex, out)        # the kernel takes a cudaTextureObject_t
    surf = dev.create_surface_object(resource=ResourceDescriptor.from_opaque_array(rw_array))

A ResourceDescriptor says what a texture reads: an OpaqueArray, a MipmappedArray, a Buffer read as typed 1D
elements (linear) or as rows of a pitched 2D image (pitch2d). TextureObjectOptions say how it samples. Texture
and surface objects are kernel arguments by their 64-bit handle (launch() packs them), and each keeps its
resource alive: closing or dropping the array or Buffer does not free it under the object, and release order
never matters. SurfaceObject loads and stores the elements of an array created with is_surface_load_store.

The layer above opaque_array.py (bindings/python/README.md, "Layers"); Device's create_texture_object and
create_surface_object are handed down to device.py.
"""
from __future__ import annotations

import ctypes
import operator
from dataclasses import dataclass
from typing import Any, Optional, Tuple

from . import _lib
from ._handle import HandleObject
from .buffer import Buffer
from .common import CachedStruct, InvalidArgumentError, Status, _U64_MAX, closed_error, raise_error
from .device import Device
from ._array_options import FORMAT_VALUES, _PLAIN_SIZES, _channels_of, format_of
from .opaque_array import ArrayRegion, MipmappedArray, MipmappedArrayOptions, OpaqueArray, OpaqueArrayOptions
from .typing import AddressModeType, ArrayFormatType, ArrayKindType, FilterModeType, ReadModeType  # noqa: F401

(_cucore_texture_object_create, _cucore_texture_object_handle, _cucore_texture_object_retain,
 _cucore_texture_object_release, _cucore_texture_object_close, _cucore_surface_object_create,
 _cucore_surface_object_handle, _cucore_surface_object_retain, _cucore_surface_object_release,
 _cucore_surface_object_close) = _lib.bind(
    globals(), "cucore_texture_object_create", "cucore_texture_object_handle", "cucore_texture_object_retain",
    "cucore_texture_object_release", "cucore_texture_object_close", "cucore_surface_object_create",
    "cucore_surface_object_handle", "cucore_surface_object_retain", "cucore_surface_object_release",
    "cucore_surface_object_close")
(_fast_texture_object_create, _fast_texture_object_release, _fast_surface_object_release) = _lib.bind_unchecked(
    globals(), "cucore_texture_object_create", "cucore_texture_object_release", "cucore_surface_object_release")

ResourceC = _lib.STRUCTS["cucore_resource_descriptor_t"]
TextureOptionsC = _lib.STRUCTS["cucore_texture_object_options_t"]
_RESOURCE_SIZE = ctypes.sizeof(ResourceC)
_TEXTURE_OPTIONS_SIZE = ctypes.sizeof(TextureOptionsC)
_c_void_p = ctypes.c_void_p
_c_uint64 = ctypes.c_uint64
_byref = ctypes.byref
_new = object.__new__
_handle_arg = _lib.handle_arg
_handle_outs = _lib.outs(_c_void_p)
_new_out = _lib.new_out

# ResourceDescriptor.kind (cuda.core's strings) -> cucore_resource_kind_t
RESOURCE_KINDS = {"array": _lib.C["CUCORE_RESOURCE_KIND_OPAQUE_ARRAY"],
                  "mipmapped_array": _lib.C["CUCORE_RESOURCE_KIND_MIPMAPPED_ARRAY"],
                  "linear": _lib.C["CUCORE_RESOURCE_KIND_LINEAR"],
                  "pitch2d": _lib.C["CUCORE_RESOURCE_KIND_PITCH_2D"]}
ADDRESS_MODE_VALUES = {m: _lib.C["CUCORE_ADDRESS_MODE_" + m.name] for m in AddressModeType}
FILTER_MODE_VALUES = {m: _lib.C["CUCORE_FILTER_MODE_" + m.name] for m in FilterModeType}
READ_MODE_VALUES = {m: _lib.C["CUCORE_READ_MODE_" + m.name] for m in ReadModeType}


def _invalid(message):
    return InvalidArgumentError(Status.ERROR_INVALID_ARGUMENT, message, 0)


def _size(value, name):
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            value = operator.index(value)
        except TypeError:
            raise TypeError(f"{name} must be an int, not {type(value).__name__}") from None
    if not 0 <= value <= _U64_MAX:
        raise _invalid(f"{name} must be in [0, 2**64), got {value}")
    return value


# ---- resource descriptors ------------------------------------------------------------------------------

class ResourceDescriptor:
    """What a TextureObject (or SurfaceObject) reads; made with the from_* class methods:

    - from_opaque_array(array): an OpaqueArray (textures and surfaces); kind "array".
    - from_mipmapped_array(mipmapped_array): a MipmappedArray (textures only); kind "mipmapped_array".
    - from_linear(buffer, format=, num_channels=, size_bytes=None): `size_bytes` of a Buffer read as 1D
      elements (tex1Dfetch: no filtering, normalized coordinates or address modes); kind "linear".
    - from_pitch2d(buffer, format=, num_channels=, width=, height=, pitch_bytes=): rows of a pitched 2D
      image in a Buffer; kind "pitch2d".

    The descriptor holds its source (`source`); a texture or surface object holds the descriptor. The
    device's alignment rules (the Buffer's address a multiple of its texture alignment, the pitch of its
    texture pitch alignment) are checked when a texture object is made."""

    __slots__ = ("_kind", "_source", "_format", "_num_channels", "_size_bytes", "_width", "_height",
                 "_pitch_bytes", "_c")
    _kind: str
    _source: Any
    _format: Optional[ArrayFormatType]
    _num_channels: Optional[int]
    _size_bytes: Optional[int]
    _width: Optional[int]
    _height: Optional[int]
    _pitch_bytes: Optional[int]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("ResourceDescriptor cannot be instantiated directly. Use ResourceDescriptor.from_* "
                           "factories.")

    @classmethod
    def _make(cls, kind, source, format=None, num_channels=None, size_bytes=None, width=None, height=None,
              pitch_bytes=None):
        self = _new(cls)
        self._kind = kind
        self._source = source
        self._format = format
        self._num_channels = num_channels
        self._size_bytes = size_bytes
        self._width = width
        self._height = height
        self._pitch_bytes = pitch_bytes
        self._c = None
        return self

    @classmethod
    def from_opaque_array(cls, array: OpaqueArray) -> ResourceDescriptor:
        """A resource of an OpaqueArray (for a TextureObject or, if the array has is_surface_load_store, a
        SurfaceObject)."""
        if not isinstance(array, OpaqueArray):
            raise TypeError(f"array must be an OpaqueArray, got {type(array).__name__}")
        return cls._make("array", array)

    @classmethod
    def from_mipmapped_array(cls, mipmapped_array: MipmappedArray) -> ResourceDescriptor:
        """A resource of a MipmappedArray, for mipmapped sampling by a TextureObject (a SurfaceObject takes
        one level: MipmappedArray.get_level)."""
        if not isinstance(mipmapped_array, MipmappedArray):
            raise TypeError(f"mipmapped_array must be a MipmappedArray, got {type(mipmapped_array).__name__}")
        return cls._make("mipmapped_array", mipmapped_array)

    @classmethod
    def from_linear(cls, buffer: Buffer, *, format: Any, num_channels: Optional[int],
                    size_bytes: Optional[int] = None) -> ResourceDescriptor:
        """A resource of the first `size_bytes` bytes of `buffer` (default: all of it) read as 1D elements of
        `format` x `num_channels` (1, 2 or 4; None: the format's own count). The size must be at least one
        element and a multiple of the element size."""
        if not isinstance(buffer, Buffer):
            raise TypeError(f"buffer must be a Buffer, got {type(buffer).__name__}")
        fmt = format_of(format)
        channels = _channels_of(fmt, num_channels)
        buf_size = buffer.size
        size = buf_size if size_bytes is None else _size(size_bytes, "size_bytes")
        if size > buf_size:
            raise _invalid(f"size_bytes ({size}) exceeds buffer.size ({buf_size})")
        if fmt in _PLAIN_SIZES:
            elem = _PLAIN_SIZES[fmt] * channels
            if size < elem:
                raise _invalid(f"size_bytes ({size}) must be at least one element ({elem} bytes)")
            if size % elem:
                raise _invalid(f"size_bytes ({size}) must be a multiple of element size ({elem} bytes for "
                               f"{fmt.name} x {channels})")
        return cls._make("linear", buffer, fmt, num_channels, size)

    @classmethod
    def from_pitch2d(cls, buffer: Buffer, *, format: Any, num_channels: Optional[int], width: int, height: int,
                     pitch_bytes: int) -> ResourceDescriptor:
        """A resource of `height` rows of `width` elements of `format` x `num_channels`, `pitch_bytes` apart, in
        `buffer` (from its start). The pitch must be at least width x element size (and, checked when a
        texture is made, a multiple of the device's texture pitch alignment); the rows must fit the buffer."""
        if not isinstance(buffer, Buffer):
            raise TypeError(f"buffer must be a Buffer, got {type(buffer).__name__}")
        fmt = format_of(format)
        channels = _channels_of(fmt, num_channels)
        w = _size(width, "width")
        h = _size(height, "height")
        p = _size(pitch_bytes, "pitch_bytes")
        if w < 1:
            raise _invalid(f"width must be >= 1, got {w}")
        if h < 1:
            raise _invalid(f"height must be >= 1, got {h}")
        if fmt in _PLAIN_SIZES:
            row = w * _PLAIN_SIZES[fmt] * channels
            if p < row:
                raise _invalid(f"pitch_bytes ({p}) must be >= width * element_bytes ({row})")
            end = (h - 1) * p + row
            if end > buffer.size:
                raise _invalid(f"the rows end at byte {end} (pitch_bytes {p} x (height {h} - 1) + a row of {row} "
                               f"bytes), which exceeds buffer.size ({buffer.size})")
        return cls._make("pitch2d", buffer, fmt, num_channels, None, w, h, p)

    @property
    def kind(self) -> str:
        """"array", "mipmapped_array", "linear" or "pitch2d"."""
        return self._kind

    @property
    def source(self) -> Any:
        """What the resource reads: the OpaqueArray, MipmappedArray or Buffer."""
        return self._source

    @property
    def format(self) -> Optional[ArrayFormatType]:
        """The element format of a linear or pitch2d resource (None for arrays: theirs is the array's)."""
        return self._format

    @property
    def num_channels(self) -> Optional[int]:
        """Channels per element of a linear or pitch2d resource (None for arrays, or for the format's own)."""
        return self._num_channels

    @property
    def size_bytes(self) -> Optional[int]:
        """The bytes a linear resource reads (None for other kinds)."""
        return self._size_bytes

    @property
    def width(self) -> Optional[int]:
        """The elements per row of a pitch2d resource (None for other kinds)."""
        return self._width

    @property
    def height(self) -> Optional[int]:
        """The rows of a pitch2d resource (None for other kinds)."""
        return self._height

    @property
    def pitch_bytes(self) -> Optional[int]:
        """The bytes from a row to the next of a pitch2d resource (None for other kinds)."""
        return self._pitch_bytes

    def _struct(self):
        """The cucore_resource_descriptor_t (its source must still be open)."""
        return self._struct_ref()[0]

    def _struct_ref(self):
        """(the cucore_resource_descriptor_t, a byref of it), made once: the descriptor never changes, and the
        handle values it holds are its source's for as long as the source is open (checked on every use)."""
        src = self._source
        if src._h is None:
            raise closed_error(src)
        pair = self._c
        if pair is None:
            c = self._make_struct()
            pair = self._c = (c, _byref(c))
        return pair

    def _make_struct(self):
        c = ResourceC()
        c.struct_size = _RESOURCE_SIZE
        kind = self._kind
        c.kind = RESOURCE_KINDS[kind]
        src = self._source
        if kind == "array":
            c.array = src._hv
        elif kind == "mipmapped_array":
            c.mipmapped_array = src._hv
        else:
            c.buffer = ctypes.cast(src._h, _c_void_p).value
            c.format = FORMAT_VALUES[self._format]
            c.num_channels = self._num_channels or 0
            if kind == "linear":
                c.size_bytes = self._size_bytes
            else:
                c.width, c.height, c.pitch_bytes = self._width, self._height, self._pitch_bytes
        return c

    def __repr__(self) -> str:
        fmt = self._format.name if self._format is not None else None
        if self._kind == "linear":
            return (f"ResourceDescriptor(kind='linear', format={fmt}, num_channels={self._num_channels}, "
                    f"size_bytes={self._size_bytes})")
        if self._kind == "pitch2d":
            return (f"ResourceDescriptor(kind='pitch2d', format={fmt}, num_channels={self._num_channels}, "
                    f"width={self._width}, height={self._height}, pitch_bytes={self._pitch_bytes})")
        return f"ResourceDescriptor(kind={self._kind!r}, source={self._source!r})"


# ---- texture options ------------------------------------------------------------------------------------

def _enum_of(name, value, enum_type):
    if isinstance(value, enum_type):
        return value
    if isinstance(value, str):
        try:
            return enum_type(value.lower())
        except ValueError:
            pass
    choices = ", ".join(repr(m.value) for m in enum_type)
    raise _invalid(f"{name} must be a {enum_type.__name__} or one of {{{choices}}}, got {value!r}")


def _address_modes(address_mode):
    """A scalar or 1-3 entries of AddressModeType (or their values) as 3 (the last repeated), as cuda.core."""
    if isinstance(address_mode, (AddressModeType, str)):
        m = _enum_of("address_mode", address_mode, AddressModeType)
        return (m, m, m)
    try:
        modes = tuple(address_mode)
    except TypeError:
        raise TypeError(f"address_mode must be an AddressModeType or a tuple of AddressModeType, got "
                        f"{type(address_mode).__name__}") from None
    if not 1 <= len(modes) <= 3:
        raise _invalid(f"address_mode tuple must have 1-3 entries, got {len(modes)}")
    out = []
    for i, m in enumerate(modes):
        if not isinstance(m, (AddressModeType, str)):
            raise TypeError(f"address_mode[{i}] must be an AddressModeType, got {type(m).__name__}")
        out.append(_enum_of(f"address_mode[{i}]", m, AddressModeType))
    return tuple(out + [out[-1]] * (3 - len(out)))


_TEXTURE_FIELDS = ("address_mode", "filter_mode", "read_mode", "normalized_coords", "srgb",
                   "disable_trilinear_optimization", "seamless_cubemap", "max_anisotropy", "mipmap_filter_mode",
                   "mipmap_level_bias", "min_mipmap_level_clamp", "max_mipmap_level_clamp", "border_color")


@dataclass
class TextureObjectOptions(CachedStruct):
    """How a TextureObject samples (CUDA_TEXTURE_DESC), with cuda.core's fields and defaults.

    address_mode: an AddressModeType for every dimension, or a tuple of 1-3 (one per dimension, the last
        repeated): "clamp" (default), "wrap", "mirror" (both for normalized coordinates), "border".
    filter_mode: "point" (default) or "linear" (float results only: integer elements read as
        ELEMENT_TYPE cannot be interpolated and are refused).
    read_mode: "element_type" (default) or "normalized_float" (8- and 16-bit integers as [0, 1] / [-1, 1]).
    normalized_coords: coordinates in [0, 1) instead of elements.
    srgb: sRGB to linear conversion on read (the *_SRGB formats need it).
    disable_trilinear_optimization, seamless_cubemap (cubemap resources only), max_anisotropy (0-16).
    mipmap_filter_mode, mipmap_level_bias, min_mipmap_level_clamp, max_mipmap_level_clamp: mipmapped resources.
    border_color: 4 floats that BORDER reads (None: zeros).
    The enum fields take their members or values (strings) and are checked when made; address_mode,
    max_anisotropy and border_color when a texture object is made, as cuda.core does."""

    address_mode: Any = AddressModeType.CLAMP
    filter_mode: Any = FilterModeType.POINT
    read_mode: Any = ReadModeType.ELEMENT_TYPE
    normalized_coords: bool = False
    srgb: bool = False
    disable_trilinear_optimization: bool = False
    seamless_cubemap: bool = False
    max_anisotropy: int = 0
    mipmap_filter_mode: Any = FilterModeType.POINT
    mipmap_level_bias: float = 0.0
    min_mipmap_level_clamp: float = 0.0
    max_mipmap_level_clamp: float = 0.0
    border_color: Optional[Tuple[float, ...]] = None

    def __post_init__(self) -> None:
        self.filter_mode = _enum_of("filter_mode", self.filter_mode, FilterModeType)
        self.read_mode = _enum_of("read_mode", self.read_mode, ReadModeType)
        self.mipmap_filter_mode = _enum_of("mipmap_filter_mode", self.mipmap_filter_mode, FilterModeType)

    _cached_fields = _TEXTURE_FIELDS

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, list) and name in ("address_mode", "border_color"):
            value = tuple(value)  # a snapshot: the C struct made from these fields is kept until one changes
        super().__setattr__(name, value)

    def _make_struct(self):
        """The cucore_texture_object_options_t of these fields, checked."""
        c = TextureOptionsC()
        c.struct_size = _TEXTURE_OPTIONS_SIZE
        modes = _address_modes(self.address_mode)
        for i in range(3):
            c.address_mode[i] = ADDRESS_MODE_VALUES[modes[i]]
        c.filter_mode = FILTER_MODE_VALUES[_enum_of("filter_mode", self.filter_mode, FilterModeType)]
        c.read_mode = READ_MODE_VALUES[_enum_of("read_mode", self.read_mode, ReadModeType)]
        for name in ("normalized_coords", "srgb", "disable_trilinear_optimization", "seamless_cubemap"):
            value = getattr(self, name)
            if not isinstance(value, (bool, int)):
                raise TypeError(f"{name} must be a bool, not {type(value).__name__}")
            setattr(c, name, 1 if value else 0)
        aniso = self.max_anisotropy
        if isinstance(aniso, bool) or not isinstance(aniso, int):
            raise TypeError(f"max_anisotropy must be an int, not {type(aniso).__name__}")
        if aniso < 0:  # the C field is unsigned; libcucore checks the upper bound (16)
            raise _invalid(f"max_anisotropy must be >= 0, got {aniso}")
        c.max_anisotropy = min(aniso, 0xFFFFFFFF)
        c.mipmap_filter_mode = FILTER_MODE_VALUES[_enum_of("mipmap_filter_mode", self.mipmap_filter_mode,
                                                           FilterModeType)]
        for name in ("mipmap_level_bias", "min_mipmap_level_clamp", "max_mipmap_level_clamp"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{name} must be a float, not {type(value).__name__}")
            setattr(c, name, float(value))  # libcucore refuses what is not finite
        if self.border_color is not None:
            try:
                bc = tuple(self.border_color)
            except TypeError:
                raise TypeError(f"border_color must be 4 floats or None, not "
                                f"{type(self.border_color).__name__}") from None
            if len(bc) != 4:
                raise _invalid(f"border_color must have 4 elements, got {len(bc)}")
            for i, v in enumerate(bc):
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    raise TypeError(f"border_color[{i}] must be a float, not {type(v).__name__}")
                c.border_color[i] = float(v)
        return c


def _texture_options_of(options, what):
    if options is None:
        return TextureObjectOptions()
    if isinstance(options, dict):
        return TextureObjectOptions(**options)
    if not isinstance(options, TextureObjectOptions):
        raise TypeError(f"{what} must be a TextureObjectOptions, got {type(options).__name__}")
    return options


# ---- texture objects -----------------------------------------------------------------------------------------

class _BoundObject(HandleObject):
    """What TextureObject and SurfaceObject share: the 64-bit handle, the resource, the device, close()."""

    __slots__ = ("_hv", "_value", "_resource", "_device")
    _hv: int
    _value: Optional[int]
    _resource: ResourceDescriptor
    _device: Optional[Device]
    _value_fn: Any = None  # each class: staticmethod(the C function giving the 64-bit handle)
    _close_fn: Any = None  # each class: staticmethod(the C close)

    @classmethod
    def _wrap(cls, hv, resource, device):
        t = _new(cls)
        t._h = _handle_arg(hv)
        t._hv = hv
        t._raw = None
        t._value = None
        t._resource = resource
        t._device = device
        return t

    def _kernel_arg(self) -> int:
        """The 64-bit handle a kernel takes (launch() packs it); closed: InvalidHandleError."""
        v = self._value
        if v is None or self._h is None:
            h = self._h
            if h is None:
                raise closed_error(self)
            out = _c_uint64()
            st = self._value_fn(h, out)
            if st:
                raise_error(st, self)
            v = self._value = out.value
        return v

    @property
    def handle(self) -> int:
        """The handle as an int, the kernel argument (0 after close())."""
        if self._h is None:
            return 0
        return self._kernel_arg()

    @property
    def resource(self) -> ResourceDescriptor:
        """The ResourceDescriptor this object was made from."""
        return self._resource

    @property
    def device(self) -> Device:
        """The Device of the resource."""
        dev = self._device
        if dev is None:
            src = self._resource.source
            dev = self._device = (Device(src.device_id) if isinstance(src, Buffer) else src.device)
        return dev

    def close(self) -> None:
        """Destroy the object now and let go of its resource (idempotent); `handle` reads 0 afterwards."""
        h = self._h
        if h is None:
            return
        self._h = None
        st = self._close_fn(h)
        self._release(h)
        if st:
            raise_error(st)

    def __eq__(self, other: Any) -> bool:
        if getattr(other, "_kind", None) is not self._kind:
            return NotImplemented
        if self._h is None or other._h is None:
            return self is other
        return bool(self._kernel_arg() == other._kernel_arg())

    def __hash__(self) -> int:
        return id(self) >> 4 if self._h is None else hash((self._kind, self._kernel_arg()))

    def __repr__(self) -> str:
        if self._h is None:
            return f"<{type(self).__name__} (closed)>"
        return f"{type(self).__name__}(handle={self.handle:#x}, resource={self._resource!r})"


class TextureObject(_BoundObject):
    """A texture object (CUtexObject): a kernel's sampled, read-only view of a resource. Pass it to launch()
    as a kernel argument (the kernel's parameter is a cudaTextureObject_t); it keeps its resource alive.

    Made by Device.create_texture_object(resource=, options=) or TextureObject.from_descriptor(resource=,
    texture_descriptor=). close() (or the end of a `with` block) destroys it."""

    __slots__ = ("_options",)
    _options: TextureObjectOptions
    _release = staticmethod(_fast_texture_object_release)
    _value_fn = staticmethod(_cucore_texture_object_handle)
    _close_fn = staticmethod(_cucore_texture_object_close)

    def __new__(cls, *args: Any, **kwargs: Any) -> TextureObject:
        raise RuntimeError("TextureObject cannot be instantiated directly. Use TextureObject.from_descriptor() or "
                           "Device.create_texture_object().")

    @classmethod
    def from_descriptor(cls, *, resource: ResourceDescriptor, texture_descriptor: Optional[TextureObjectOptions] = None,
                        options: Optional[TextureObjectOptions] = None) -> TextureObject:
        """A texture object reading `resource` (a ResourceDescriptor) as `texture_descriptor` (or `options`,
        the name Device.create_texture_object uses; a TextureObjectOptions, default: its defaults) says, on
        the resource's device."""
        if texture_descriptor is not None and options is not None:
            raise TypeError("give texture_descriptor or options, not both")
        if options is None:
            return _create_texture_object(None, resource, texture_descriptor, "texture_descriptor")
        return _create_texture_object(None, resource, options, "options")

    @property
    def options(self) -> TextureObjectOptions:
        """The TextureObjectOptions this texture was made with."""
        return self._options

    @property
    def texture_descriptor(self) -> TextureObjectOptions:
        """The TextureObjectOptions this texture was made with (cuda.core's other name for `options`)."""
        return self._options


TextureObject._kind = TextureObject  # equality by kind: a texture never equals a surface of the same value


def _create_texture_object(device, resource, options, what="options"):
    """Device.create_texture_object (device: the Device) and TextureObject.from_descriptor (device None: the
    resource's)."""
    if not isinstance(resource, ResourceDescriptor):
        raise TypeError(f"resource must be a ResourceDescriptor, got {type(resource).__name__}")
    opts = _texture_options_of(options, what)
    rref = resource._struct_ref()[1]
    oref = opts._struct_ref()[1]
    try:
        out, ref = pair = _handle_outs.pop()
    except IndexError:
        out, ref = pair = _new_out(_c_void_p)
    st = _fast_texture_object_create(None if device is None else device._h, rref, oref, ref)
    h = out.value
    _handle_outs.append(pair)
    if st:
        raise_error(st, device, resource.source)
    t = TextureObject._wrap(h, resource, device)
    t._options = opts
    return t


# ---- surface objects ------------------------------------------------------------------------------------

class SurfaceObject(_BoundObject):
    """A surface object (CUsurfObject): a kernel's typed loads and stores (surf2Dwrite, ...) of an OpaqueArray
    created with is_surface_load_store=True. Pass it to launch() as a kernel argument (a
    cudaSurfaceObject_t); it keeps its array alive.

    Made by Device.create_surface_object(resource=), SurfaceObject.from_array(array) or
    SurfaceObject.from_descriptor(resource=). close() destroys it."""

    __slots__ = ()
    _release = staticmethod(_fast_surface_object_release)
    _value_fn = staticmethod(_cucore_surface_object_handle)
    _close_fn = staticmethod(_cucore_surface_object_close)

    def __new__(cls, *args: Any, **kwargs: Any) -> SurfaceObject:
        raise RuntimeError("SurfaceObject cannot be instantiated directly. Use SurfaceObject.from_array() or "
                           "SurfaceObject.from_descriptor().")

    @classmethod
    def from_array(cls, array: OpaqueArray) -> SurfaceObject:
        """A surface object over `array`, which must have been created with is_surface_load_store=True."""
        if not isinstance(array, OpaqueArray):
            raise TypeError(f"array must be an OpaqueArray, got {type(array).__name__}")
        return _create_surface_object(None, ResourceDescriptor.from_opaque_array(array))

    @classmethod
    def from_descriptor(cls, *, resource: ResourceDescriptor) -> SurfaceObject:
        """A surface object over an array resource (ResourceDescriptor.from_opaque_array) whose array has
        is_surface_load_store; any other resource is a ValueError."""
        return _create_surface_object(None, resource)


SurfaceObject._kind = SurfaceObject


def _create_surface_object(device, resource):
    if not isinstance(resource, ResourceDescriptor):
        raise TypeError(f"resource must be a ResourceDescriptor, got {type(resource).__name__}")
    if resource.kind != "array":
        raise _invalid(f"SurfaceObject requires an array-backed ResourceDescriptor, got kind={resource.kind!r}")
    array = resource.source  # libcucore checks its surface load/store flag
    rc = resource._struct()
    out = _c_void_p()
    st = _cucore_surface_object_create(None if device is None else device._h, rc, out)
    if st:
        raise_error(st, device, array)
    return SurfaceObject._wrap(out.value, resource, device)


# Device.create_texture_object and create_surface_object (device.py is below this module).
_lib.hand_down("device", _create_texture_object=_create_texture_object, _create_surface_object=_create_surface_object)

# cuda.core's names of cuda.core.texture, and the region copies; the enums are cucore.typing's (importable from
# here by name too, as `from cucore.texture import ArrayFormatType`).
__all__ = ["ArrayRegion", "MipmappedArray", "MipmappedArrayOptions", "OpaqueArray", "OpaqueArrayOptions",
           "ResourceDescriptor", "SurfaceObject", "TextureObject", "TextureObjectOptions"]
