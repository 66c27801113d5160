"""Graphics interop with OpenGL (include/cucore/graphics.h): GL buffers, textures and renderbuffers
registered with CUDA, mapped as Buffers or as CUDA arrays (OpaqueArray, MipmappedArray: opaque_array.py).

    res = cucore.GraphicsResource.from_gl_buffer(vbo, flags="write_discard")   # a GL context is current
    with res.map(stream=s) as buf:          # a Buffer; unmapped on `s` when it is released or closed
        kernel_writes(buf)
    res.close()                             # unregisters (unmaps first if still mapped); idempotent

    with cucore.GraphicsResource.from_gl_buffer(vbo, stream=s) as buf:   # registers and maps on entry,
        ...                                                              # unmaps and unregisters on exit

    tex = cucore.GraphicsResource.from_gl_image(name, GL_TEXTURE_2D)
    with tex.map_array(stream=s) as arr:    # an OpaqueArray (level 0, layer 0) that holds the mapping
        arr.copy_from(pixels, stream=s)     # bytes, NumPy arrays, or a Buffer holding the array packed
        texture = dev.create_texture_object(resource=cucore.texture.ResourceDescriptor.from_opaque_array(arr))

    with cucore.GraphicsResource.map_all([a, b], s) as (va, vb):   # one driver call maps both...
        ...                                                       # ...and one unmaps both at the block's end
    cucore.GraphicsResource.unmap_all([a, b])   # or unmap mapped resources in one call, wherever mapped from

The registration belongs to the device's primary context (the library binds it for each call); a GL
context of that GPU must be current on the calling thread. A mapping holds the registration: whatever
order things are released in, the unmap (on the stream it was mapped on) comes before unregistration.
"""
from __future__ import annotations

import ctypes
import weakref
from typing import TYPE_CHECKING, Any, List, Literal, Sequence, Union

from . import _lib
from ._handle import HandleObject
from .buffer import _UNKNOWN, Buffer
from .common import CUDAError, InvalidArgumentError, Status, closed_error, raise_error
from .device import _device
from .opaque_array import MipmappedArray, OpaqueArray
from .stream import _stream_of

if TYPE_CHECKING:
    from .device import Device

(_cucore_graphics_resource_from_gl_buffer, _cucore_graphics_resource_from_gl_image,
 _cucore_graphics_resource_release, _cucore_graphics_resource_map, _cucore_graphics_resources_map,
 _cucore_graphics_resource_map_array, _cucore_graphics_resource_map_mipmapped_array,
 _cucore_graphics_resource_unmap, _cucore_graphics_resource_is_mapped, _cucore_graphics_resource_close,
 _cucore_graphics_resource_handle, _cucore_gl_get_devices, _cucore_buffer_size) = _lib.bind(
    globals(), "cucore_graphics_resource_from_gl_buffer", "cucore_graphics_resource_from_gl_image",
    "cucore_graphics_resource_release", "cucore_graphics_resource_map", "cucore_graphics_resources_map",
    "cucore_graphics_resource_map_array", "cucore_graphics_resource_map_mipmapped_array",
    "cucore_graphics_resource_unmap", "cucore_graphics_resource_is_mapped", "cucore_graphics_resource_close",
    "cucore_graphics_resource_handle", "cucore_gl_get_devices", "cucore_buffer_size")
(_cucore_graphics_resource_retain, _cucore_graphics_resources_unmap, _cucore_report_release_error) = _lib.bind(
    globals(), "cucore_graphics_resource_retain", "cucore_graphics_resources_unmap", "cucore_report_release_error")
(_fast_graphics_resource_release,) = _lib.bind_unchecked(globals(), "cucore_graphics_resource_release")

_c_void_p = ctypes.c_void_p
_c_uint32 = ctypes.c_uint32
_c_uint64 = ctypes.c_uint64

# Registration flags (cucore_graphics_register_flag_t) and per-map hints (cucore_graphics_map_hint_t).
REGISTER_FLAGS = _lib.c_names("cucore_graphics_register_flag_t", "CUCORE_GRAPHICS_REGISTER_")
MAP_HINTS = _lib.c_names("cucore_graphics_map_hint_t", "CUCORE_GRAPHICS_MAP_HINT_")
GL_DEVICE_LISTS = _lib.c_names("cucore_gl_device_list_t", "CUCORE_GL_DEVICES_")


def _invalid(message):
    return InvalidArgumentError(Status.ERROR_INVALID_ARGUMENT, message, 0)


def _parse_names(value, table, what):
    """`value` (None, a name, or an iterable of names of `table`) as the OR of their bits."""
    if value is None:
        return 0
    names = [value] if isinstance(value, str) else value
    try:
        names = list(names)
    except TypeError:
        raise TypeError(f"{what} must be a str, a list of str or None, not {type(value).__name__}") from None
    bits = 0
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"{what} must be a str, a list of str or None, not a list holding "
                            f"{type(name).__name__}")
        try:
            bits |= table[name.lower()]
        except KeyError:
            raise _invalid(f"unknown {what} {name!r}; known: {', '.join(table)}") from None
    return bits


def parse_register_flags(flags):
    """Registration `flags` ("read_only", "write_discard", "surface_load_store", "texture_gather", "none",
    or a list of them) as cucore_graphics_register_flag_t bits; an unknown name raises ValueError."""
    return _parse_names(flags, REGISTER_FLAGS, "registration flag")


def _parse_hint(hint):
    if hint is None:
        return 0
    if not isinstance(hint, str):
        raise TypeError(f"hint must be 'none', 'read_only', 'write_discard' or None, not {type(hint).__name__}")
    try:
        return MAP_HINTS[hint.lower()]
    except KeyError:
        raise _invalid(f"unknown map hint {hint!r}; known: {', '.join(MAP_HINTS)}") from None


def _gl_uint(value, what):
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise TypeError(f"{what} must be an int (a GL name or enum), not {type(value).__name__}")
    value = int(value)
    if not 0 <= value <= 0xFFFFFFFF:
        raise ValueError(f"{what} {value} does not fit in a GLuint")
    return value


def _open(stream):
    """(Stream, its handle) of a stream argument (a Stream or anything with __cuda_stream__)."""
    s = _stream_of(stream)
    if s._h is None:
        raise closed_error(s)
    return s, s._h


def _mapped_buffer(hv):
    size = _c_uint64()
    st = _cucore_buffer_size(hv, size)
    if st:
        _lib.unchecked_function("cucore_buffer_release")(_c_void_p(hv))
        raise_error(st)
    return Buffer._wrap(hv, size.value, _UNKNOWN)


class GraphicsResource(HandleObject):
    """A GL buffer, texture or renderbuffer registered with CUDA (CUgraphicsResource).

    Made with from_gl_buffer() or from_gl_image(); close() (or the end of a `with` block) unregisters it.
    After close(), `is_mapped` is False, `handle` is 0 and every other call raises InvalidStateError."""

    __slots__ = ("_hv", "_stream", "_is_image", "_closed", "_views", "_entered")
    _hv: int
    _stream: Any
    _is_image: bool
    _closed: bool
    _views: Any
    _entered: Any
    _release = staticmethod(_fast_graphics_resource_release)
    _handle_fn = staticmethod(_cucore_graphics_resource_handle)

    def __new__(cls, *args, **kwargs):
        raise TypeError("GraphicsResource cannot be instantiated directly: use GraphicsResource.from_gl_buffer() "
                        "or GraphicsResource.from_gl_image()")

    @classmethod
    def _wrap(cls, hv, stream, is_image):
        obj = object.__new__(cls)
        obj._h = _lib.handle_arg(hv)
        obj._hv = hv       # the handle as an int (for arrays of handles)
        obj._raw = None
        obj._stream = stream
        obj._is_image = is_image
        obj._closed = False
        obj._views = []    # weak references to the Buffers of live mappings
        obj._entered = None
        return obj

    @classmethod
    def from_gl_buffer(cls, gl_buffer: int, *, flags: Any = None, stream: Any = None,
                       device: Union[Device, int, None] = None) -> GraphicsResource:
        """Register GL buffer object `gl_buffer` (a GL context of the device's GPU must be current). `flags`: a
        name or list of names of REGISTER_FLAGS. `stream`, if given, is the default stream of map() and
        close(), and makes the resource's `with` block map on entry and give the Buffer. `device`: a
        Device or an ordinal (default: the stream's device, else the current device)."""
        name = _gl_uint(gl_buffer, "GL buffer name")
        bits = parse_register_flags(flags)
        s = None
        if stream is not None:
            s, _ = _open(stream)
        dev = _device(device if device is not None else (s.device if s is not None else None))
        out = _c_void_p()
        st = _cucore_graphics_resource_from_gl_buffer(dev._h, name, bits, out)
        if st:
            raise_error(st, dev)
        return cls._wrap(out.value, s, False)

    @classmethod
    def from_gl_image(cls, image: int, target: int, *, flags: Any = None,
                      device: Union[Device, int, None] = None) -> GraphicsResource:
        """Register GL texture or renderbuffer `image` of `target` (GL_TEXTURE_2D, GL_RENDERBUFFER, ...).
        Its mappings are arrays: map_array(), map_mipmapped_array()."""
        name = _gl_uint(image, "GL image name")
        target = _gl_uint(target, "GL target")
        bits = parse_register_flags(flags)
        dev = _device(device)
        out = _c_void_p()
        st = _cucore_graphics_resource_from_gl_image(dev._h, name, target, bits, out)
        if st:
            raise_error(st, dev)
        return cls._wrap(out.value, None, True)

    # ---- state ---------------------------------------------------------------------------------------

    def _live(self):
        h = self._h
        if h is None:
            raise closed_error(self)
        return h

    def _stream_or_default(self, stream):
        if stream is None:
            if self._stream is None:
                raise TypeError("a stream is required (the resource was registered without one)")
            stream = self._stream
        return _open(stream)

    def _track(self, obj):
        self._views = [r for r in self._views if r() is not None]
        self._views.append(weakref.ref(obj))
        return obj

    def _forget_views(self):
        """After an unmap or close: the mapped Buffers read as closed (their C objects are; mapped arrays
        answer INVALID_STATE from libcucore itself)."""
        for r in self._views:
            obj = r()
            if isinstance(obj, Buffer):
                obj._size = 0
        self._views = []

    @property
    def is_image(self) -> bool:
        """True for a texture or renderbuffer (mapped as arrays), False for a buffer object."""
        return self._is_image

    @property
    def is_mapped(self) -> bool:
        """Whether the resource is mapped now (False after close)."""
        out = ctypes.c_int()
        st = _cucore_graphics_resource_is_mapped(self._live(), out)
        if st:
            raise_error(st, self)
        return bool(out.value)

    @property
    def handle(self) -> int:
        """The raw CUgraphicsResource as an int (0 after close)."""
        out = _c_void_p()
        st = _cucore_graphics_resource_handle(self._live(), out)
        if st:
            raise_error(st, self)
        return out.value or 0

    resource_handle = handle

    # ---- mapping --------------------------------------------------------------------------------------

    def map(self, *, stream: Any = None, hint: Any = None) -> Buffer:
        """Map a registered GL buffer on `stream` (default: the registration's) and return its memory as a
        Buffer. Releasing or closing that Buffer (and its views) unmaps on the mapping stream; `with
        res.map(stream=s) as buf:` unmaps at the block's end. `hint`: None, "read_only" or "write_discard".
        Mapping twice raises InvalidStateError (a RuntimeError)."""
        bits = _parse_hint(hint)
        s, sh = self._stream_or_default(stream)
        out = _c_void_p()
        st = _cucore_graphics_resource_map(self._live(), sh, bits, out)
        if st:
            raise_error(st, self, s)
        return self._track(_mapped_buffer(out.value))

    def map_array(self, stream: Any = None, *, array_index: int = 0, mip_level: int = 0, hint: Any = None) -> OpaqueArray:
        """Map a registered GL image on `stream` and return sub-resource (`array_index`: cube face or
        layer, `mip_level`) as an OpaqueArray, usable everywhere an array is (copies, texture and surface
        objects). It is not owned and holds the mapping: when it and every texture or surface object over it
        are gone (or closed), the image is unmapped on `stream`. After the resource is unmapped or closed,
        calls on the array raise InvalidStateError."""
        bits = _parse_hint(hint)
        s, sh = self._stream_or_default(stream)
        out = _c_void_p()
        st = _cucore_graphics_resource_map_array(self._live(), sh, bits, _c_uint32(array_index),
                                                 _c_uint32(mip_level), out)
        if st:
            raise_error(st, self, s)
        return OpaqueArray._wrap(out.value, self)

    def map_mipmapped_array(self, stream: Any = None, *, hint: Any = None) -> MipmappedArray:
        """As map_array(), for the whole image as a MipmappedArray (its levels, get_level() or level(), hold
        the mapping too)."""
        bits = _parse_hint(hint)
        s, sh = self._stream_or_default(stream)
        out = _c_void_p()
        st = _cucore_graphics_resource_map_mipmapped_array(self._live(), sh, bits, out)
        if st:
            raise_error(st, self, s)
        return MipmappedArray._wrap(out.value, self)

    def unmap(self, *, stream: Any = None) -> None:
        """Unmap now, on `stream` when given (the override), else on the stream it was mapped on. The
        mapped Buffer reads as closed (size 0) afterwards. Not mapped: InvalidStateError."""
        s = sh = None
        if stream is not None:
            s, sh = _open(stream)
        try:
            st = _cucore_graphics_resource_unmap(self._live(), sh)
            if st:
                raise_error(st, self, s)
        finally:
            if not self.is_mapped:
                self._forget_views()

    def close(self, stream: Any = None) -> None:
        """Unmap if mapped (on `stream`, or the mapping's stream when None), then unregister. Idempotent;
        afterwards every call but close(), is_mapped and handle raises InvalidStateError."""
        h = self._h
        if h is None or self._closed:
            return
        s = sh = None
        if stream is not None:
            s, sh = _open(stream)
        self._closed = True
        self._forget_views()
        self._stream = None
        st = _cucore_graphics_resource_close(h, sh)
        if st:
            raise_error(st, self, s)

    @staticmethod
    def map_all(resources: Sequence[GraphicsResource], stream: Any) -> MappedBuffers:
        """Map several registered GL buffers in one driver call on `stream` and return their Buffers, in
        order, as a MappedBuffers (a list): `with GraphicsResource.map_all([a, b], s) as (va, vb):` unmaps
        them all in one call at the block's end; otherwise each unmaps on its own when released. On failure
        nothing stays mapped."""
        resources = _resource_list(resources, "GraphicsResource.map_all")
        s, sh = _open(stream)
        n = len(resources)
        for r in resources:
            r._live()
        handles = (_c_void_p * n)(*[r._hv for r in resources])
        outs = (_c_void_p * n)()
        st = _cucore_graphics_resources_map(handles, n, sh, outs)
        if st:
            raise_error(st, s, *resources)
        buffers = []
        try:
            for i in range(n):
                hv, outs[i] = outs[i], None
                buffers.append(resources[i]._track(_mapped_buffer(hv)))
        finally:
            if len(buffers) < n:  # the rest were never wrapped: release them (each unmaps its resource)
                release = _lib.unchecked_function("cucore_buffer_release")
                for i in range(len(buffers) + 1, n):
                    if outs[i]:
                        release(_c_void_p(outs[i]))
        return MappedBuffers._make(resources, buffers)

    @staticmethod
    def unmap_all(resources: Sequence[GraphicsResource], stream: Any = None) -> None:
        """Unmap several mapped GraphicsResources in one driver call (cuGraphicsUnmapResources with a count),
        on `stream` when given, else on the stream they were all mapped on (ValueError if they were mapped on
        different streams). Their mapped Buffers read as closed (size 0) afterwards, and releasing them later
        does nothing more. A resource not mapped (or closed) raises InvalidStateError naming its index, and
        nothing is unmapped then; a driver failure raises DriverError and the resources count as unmapped."""
        resources = _resource_list(resources, "GraphicsResource.unmap_all")
        s = sh = None
        if stream is not None:
            s, sh = _open(stream)
        for r in resources:
            r._live()
        _unmap_all(resources, s, sh)

    def __enter__(self) -> Any:  # the mapped Buffer for a resource registered with a stream, else itself
        if self._stream is not None:
            self._entered = self.map(stream=self._stream)
            return self._entered
        return self

    def __exit__(self, *exc: object) -> None:
        buf, self._entered = self._entered, None
        stream = self._stream
        if buf is not None:
            buf.close()
        self.close(stream)  # returns None: exceptions of the block propagate

    def __eq__(self, other: object) -> bool:
        # Wrappers of one libcucore registration (copies) are equal, before and after close.
        if not isinstance(other, GraphicsResource):
            return NotImplemented
        return self._hv == other._hv

    def __hash__(self) -> int:
        return hash((GraphicsResource, self._hv))

    def __copy__(self) -> GraphicsResource:
        """A second wrapper of the same registration, holding its own reference (state is shared: closing
        either closes the registration; the last wrapper or mapping to go releases it)."""
        st = _cucore_graphics_resource_retain(self._live())
        if st:
            raise_error(st, self)
        obj = GraphicsResource._wrap(self._hv, self._stream, self._is_image)
        obj._closed = self._closed
        return obj

    def __repr__(self):
        if self._h is None or self._closed:
            return "<GraphicsResource (closed)>"
        kind = "image" if self._is_image else "buffer"
        return f"<GraphicsResource {kind} handle={self.handle:#x} mapped={self.is_mapped}>"


def _resource_list(resources, what):
    """`resources` as a non-empty list of GraphicsResources (TypeError, ValueError otherwise)."""
    try:
        resources = list(resources)
    except TypeError:
        raise TypeError(f"{what}() takes a list of GraphicsResources, not {type(resources).__name__}") from None
    if not resources:
        raise _invalid(f"{what}() needs at least one resource")
    for r in resources:
        if not isinstance(r, GraphicsResource):
            raise TypeError(f"{what}() takes GraphicsResources, not {type(r).__name__}")
    return resources


def _unmap_all(resources, s, sh):
    """One cucore_graphics_resources_unmap of `resources` (GraphicsResources) on stream handle `sh` (None:
    their mapping stream); raises its error. Afterwards the mapped wrappers of the resources it unmapped
    read as closed: all of them on success; on failure those no longer mapped (a driver failure counts
    as an unmap, a refused call unmaps none)."""
    n = len(resources)
    handles = (_c_void_p * n)(*[r._hv for r in resources])
    st = _cucore_graphics_resources_unmap(handles, n, sh)
    try:
        if st:
            raise_error(st, s, *resources)
    finally:
        if not st:
            for r in resources:
                r._forget_views()
        else:
            out = ctypes.c_int()
            for r in resources:
                if r._h is not None and not _cucore_graphics_resource_is_mapped(r._h, out) and not out.value:
                    r._forget_views()


class MappedBuffers(list):
    """The Buffers of one GraphicsResource.map_all() call, in the resources' order (a list), and the batch's
    scope:

        with cucore.GraphicsResource.map_all([a, b], stream=s) as (va, vb):
            ...                        # va, vb: Buffers of a's and b's memory
        # here a and b are unmapped, in one driver call on `s`

    The end of the `with` block (or unmap()) unmaps, in one call, the resources this batch still maps:
    those whose Buffer was closed or whose resource was unmapped on its own meanwhile are left out, and
    with none left nothing is called. Its Buffers read as closed (size 0) afterwards. Without `with` or
    unmap(), each Buffer unmaps its resource alone when it is released (one driver call each)."""

    _batch = ()  # ((resource, buffer), ...) as mapped; emptied by the batch's unmap

    @classmethod
    def _make(cls, resources, buffers):
        obj = cls(buffers)
        obj._batch = tuple(zip(resources, buffers))
        return obj

    def _still_mapped(self):
        """The resources whose mapping by this batch is live: their Buffer is open and not size 0 in the
        library (an unmap through another wrapper of the resource closes the Buffer there too)."""
        size = _c_uint64()
        live = []
        for r, b in self._batch:
            h = b._h
            if h is not None and b._size and r._h is not None and not _cucore_buffer_size(h, size) and size.value:
                live.append(r)
        return live

    def unmap(self, stream: Any = None) -> None:
        """Unmap now, in one call, the resources this batch still maps: on `stream` when given, else on the
        stream they were mapped on. Raises as GraphicsResource.unmap_all(); the batch is over either way (the end of a
        `with` block then does nothing more). The Buffers stay in the list, closed."""
        s = sh = None
        if stream is not None:
            s, sh = _open(stream)
        live = self._still_mapped()
        self._batch = ()
        if live:
            _unmap_all(live, s, sh)

    def __enter__(self) -> MappedBuffers:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Literal[False]:
        if exc_type is None:
            self.unmap()
            return False
        # Another exception is on its way out: an unmap failure must not replace it, and is not lost
        # either: it goes to the release-error path (release_error_count, the release error handler).
        try:
            self.unmap()
        except CUDAError as e:
            status = Status.ERROR_INTERNAL if e.status is None else int(e.status)
            _cucore_report_release_error(status, e.cuda_result or 0, (e.message or "").encode("utf-8", "replace"))
        return False

    def __repr__(self):
        return f"MappedBuffers({list.__repr__(self)})"


def gl_get_devices(device_list: str = "all") -> List[int]:
    """The CUDA device ordinals of the GL context current on this thread (cuGLGetDevices), as a list of
    ints. `device_list`: "all", "current_frame" or "next_frame" (SLI). No current NVIDIA GL context:
    DriverError with a message saying so."""
    if not isinstance(device_list, str) or device_list.lower() not in GL_DEVICE_LISTS:
        raise _invalid(f"unknown GL device list {device_list!r}; known: {', '.join(GL_DEVICE_LISTS)}")
    which = GL_DEVICE_LISTS[device_list.lower()]
    count = _c_uint32()
    st = _cucore_gl_get_devices(which, None, 0, count)
    if st:
        raise_error(st)
    while True:
        n = count.value
        ordinals = (ctypes.c_int * max(n, 1))()
        st = _cucore_gl_get_devices(which, ordinals, n, count)
        if st:
            raise_error(st)
        if count.value <= n:
            return [ordinals[i] for i in range(count.value)]


__all__ = ["GraphicsResource", "MappedBuffers", "gl_get_devices",
           "parse_register_flags", "REGISTER_FLAGS", "MAP_HINTS"]
