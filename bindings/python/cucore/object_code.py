"""Object code: cubin, PTX, LTO-IR, fatbin, objects and libraries (include/cucore/object_code.h).

    code = cucore.ObjectCode.from_cubin(open("k.cubin", "rb").read())   # or a path
    kernel = code.get_kernel("k")
    addr, size = code.get_global("table")

Loadable kinds (cubin, PTX, fatbin) are loaded into the driver on first use and unloaded when the last
reference goes (kernels keep their code loaded); LTO-IR, objects and libraries are linker inputs.
"""
from __future__ import annotations

import ctypes
import os
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple, Union

from . import _lib
from ._handle import HandleObject
from .buffer import _HostMemory
from .common import raise_error
from .device import _device
from .kernel import Kernel
from .program import CODE_TYPE_NAMES, CODE_TYPES

if TYPE_CHECKING:
    from .device import Device

(_cucore_object_code_create, _cucore_object_code_create_from_file, _cucore_object_code_load,
 _cucore_object_code_code_type, _cucore_object_code_data, _cucore_object_code_name,
 _cucore_object_code_name_expression_count, _cucore_object_code_name_expression, _cucore_object_code_kernel_count,
 _cucore_object_code_get_global, _cucore_object_code_read_global, _cucore_object_code_write_global,
 _cucore_object_code_handle, _cucore_object_code_module) = _lib.bind(
    globals(), "cucore_object_code_create", "cucore_object_code_create_from_file", "cucore_object_code_load",
    "cucore_object_code_code_type", "cucore_object_code_data", "cucore_object_code_name",
    "cucore_object_code_name_expression_count", "cucore_object_code_name_expression",
    "cucore_object_code_kernel_count", "cucore_object_code_get_global", "cucore_object_code_read_global",
    "cucore_object_code_write_global", "cucore_object_code_handle", "cucore_object_code_module")
(_cucore_object_code_retain, _cucore_object_code_release, _cucore_object_code_get_kernel) = _lib.bind(
    globals(), "cucore_object_code_retain", "cucore_object_code_release", "cucore_object_code_get_kernel")
(_fast_object_code_release, _fast_object_code_get_kernel) = _lib.bind_unchecked(
    globals(), "cucore_object_code_release", "cucore_object_code_get_kernel")

_c_void_p = ctypes.c_void_p
_c_size_t = ctypes.c_size_t
_c_char_p = ctypes.c_char_p
_byref = ctypes.byref
_new = object.__new__
_handle_arg = _lib.handle_arg


class ObjectCode(HandleObject):
    """Compiled device code. Made by Program.compile(), Linker.link() or the from_* factories, which
    take bytes, or a path (str or PathLike) read at once."""

    __slots__ = ("_code_type", "_symbols", "_bytes", "_hv")  # _hv: the libcucore handle as an int (Linker)
    _code_type: Optional[str]
    _symbols: Any
    _bytes: Optional[bytes]
    _hv: int
    _release = staticmethod(_fast_object_code_release)
    _handle_fn = staticmethod(_cucore_object_code_handle)

    def __new__(cls, *args, **kwargs):
        raise TypeError("ObjectCode cannot be instantiated directly: use Program.compile(), Linker.link() or "
                        "ObjectCode.from_cubin() and the other from_* factories")

    @classmethod
    def _wrap(cls, hv):
        o = _new(cls)
        o._h = _handle_arg(hv)
        o._hv = hv
        o._raw = None
        o._code_type = None
        o._symbols = None
        o._bytes = None
        return o

    @classmethod
    def _create(cls, module, code_type, name, symbol_mapping=None):
        ct = CODE_TYPES[code_type]
        if symbol_mapping is not None:
            if not isinstance(symbol_mapping, dict) or not all(
                    isinstance(k, str) and isinstance(v, str) for k, v in symbol_mapping.items()):
                raise TypeError("symbol_mapping must be a dict of name expression -> lowered name (str -> str)")
        if name is None:
            name = ""
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        h = _c_void_p()
        if isinstance(module, (str, os.PathLike)):
            path = os.fspath(module)
            if isinstance(path, bytes):
                path = os.fsdecode(path)
            st = _cucore_object_code_create_from_file(os.fsencode(path), ct, name.encode() or None, _byref(h))
        elif isinstance(module, (bytes, bytearray, memoryview)):
            data = bytes(module)
            st = _cucore_object_code_create(data, len(data), ct, name.encode() or None, _byref(h))
        else:
            raise TypeError(f"ObjectCode.from_{code_type}() takes bytes or a path (str or PathLike), "
                            f"not {type(module).__name__}")
        if st:
            raise_error(st)
        o = cls._wrap(h.value)
        o._code_type = code_type
        if symbol_mapping:
            o._symbols = dict(symbol_mapping)  # get_kernel and get_global resolve these names
        return o

    @classmethod
    def from_cubin(cls, module: Union[bytes, bytearray, memoryview, str, os.PathLike], *, name: str = "",
                  symbol_mapping: Optional[Dict[str, str]] = None) -> ObjectCode:
        """A cubin from bytes or a file."""
        return cls._create(module, "cubin", name, symbol_mapping)

    @classmethod
    def from_ptx(cls, module: Union[bytes, bytearray, memoryview, str, os.PathLike], *, name: str = "",
                  symbol_mapping: Optional[Dict[str, str]] = None) -> ObjectCode:
        """PTX from bytes or a file (a str is a path, as in cuda.core; use Program(ptx, "ptx") for text)."""
        return cls._create(module, "ptx", name, symbol_mapping)

    @classmethod
    def from_ltoir(cls, module: Union[bytes, bytearray, memoryview, str, os.PathLike], *, name: str = "",
                  symbol_mapping: Optional[Dict[str, str]] = None) -> ObjectCode:
        """LTO-IR (a linker input) from bytes or a file (a str is a path)."""
        return cls._create(module, "ltoir", name, symbol_mapping)

    @classmethod
    def from_fatbin(cls, module: Union[bytes, bytearray, memoryview, str, os.PathLike], *, name: str = "",
                  symbol_mapping: Optional[Dict[str, str]] = None) -> ObjectCode:
        """A fat binary from bytes or a file (a str is a path)."""
        return cls._create(module, "fatbin", name, symbol_mapping)

    @classmethod
    def from_object(cls, module: Union[bytes, bytearray, memoryview, str, os.PathLike], *, name: str = "",
                  symbol_mapping: Optional[Dict[str, str]] = None) -> ObjectCode:
        """A host object file holding device code (a linker input) from bytes or a file (a str is a path)."""
        return cls._create(module, "object", name, symbol_mapping)

    @classmethod
    def from_library(cls, module: Union[bytes, bytearray, memoryview, str, os.PathLike], *, name: str = "",
                  symbol_mapping: Optional[Dict[str, str]] = None) -> ObjectCode:
        """A library of device code (a linker input) from bytes or a file (a str is a path)."""
        return cls._create(module, "library", name, symbol_mapping)

    # ---- what it holds ------------------------------------------------------------------------

    @property
    def code_type(self) -> str:
        """"cubin", "ptx", "ltoir", "fatbin", "object" or "library"."""
        ct = self._code_type
        if ct is None:
            out = ctypes.c_int()
            st = _cucore_object_code_code_type(self._h, _byref(out))
            if st:
                raise_error(st, self)
            ct = self._code_type = CODE_TYPE_NAMES.get(out.value, str(out.value))
        return ct

    @property
    def code(self) -> bytes:
        """The code's bytes."""
        b = self._bytes
        if b is None:
            data, size = _c_void_p(), _c_size_t()
            st = _cucore_object_code_data(self._h, _byref(data), _byref(size))
            if st:
                raise_error(st, self)
            b = self._bytes = ctypes.string_at(data.value, size.value) if size.value else b""  # type: ignore[arg-type]
        return b

    @property
    def name(self) -> str:
        """The code's name ("" when none)."""
        out = _c_char_p()
        st = _cucore_object_code_name(self._h, _byref(out))
        if st:
            raise_error(st, self)
        return (out.value or b"").decode("utf-8", "replace")

    @property
    def symbol_mapping(self) -> Dict[str, str]:
        """{name expression: lowered (mangled) name} for the name expressions of the compile."""
        m = self._symbols
        if m is None:
            n = _c_size_t()
            st = _cucore_object_code_name_expression_count(self._h, _byref(n))
            if st:
                raise_error(st, self)
            m = {}
            e, lowered = _c_char_p(), _c_char_p()
            for i in range(n.value):
                st = _cucore_object_code_name_expression(self._h, i, _byref(e), _byref(lowered))
                if st:
                    raise_error(st, self)
                m[e.value.decode()] = lowered.value.decode()  # type: ignore[union-attr]
            self._symbols = m
        return dict(m)

    # ---- the driver side ----------------------------------------------------------------------

    def load(self) -> None:
        """Load the code into the driver now (otherwise the first use does), so load errors surface here."""
        st = _cucore_object_code_load(self._h)
        if st:
            raise_error(st, self)

    def __reduce__(self):
        # Pickles as its code, as cuda.core's: the code type, the bytes, the name and the symbol mapping (a
        # process that unpickles it loads the code on first use).
        return _rebuild, (self.code_type, self.code, self.name, self.symbol_mapping or None)

    def get_module(self) -> int:
        """The raw CUmodule of the code in the current context (cuLibraryGetModule), as an int, for driver APIs
        that take a module (cuda.core's get_module). It lives as long as this object code."""
        out = _c_void_p()
        st = _cucore_object_code_module(self._h, _byref(out))
        if st:
            raise_error(st, self)
        return out.value or 0

    @property
    def kernel_count(self) -> int:
        """The number of kernels in the code (loads it)."""
        n = _c_size_t()
        st = _cucore_object_code_kernel_count(self._h, _byref(n))
        if st:
            raise_error(st, self)
        return n.value

    def get_kernel(self, name: Union[str, bytes]) -> Kernel:
        """The Kernel named `name`: a name expression of the compile (or of the symbol_mapping given) or the
        symbol name."""
        m = self._symbols
        if m and name in m:
            name = m[name]
        if isinstance(name, str):
            name = name.encode()
        elif not isinstance(name, bytes):
            raise TypeError(f"kernel name must be a str, not {type(name).__name__}")
        h = _c_void_p()
        st = _fast_object_code_get_kernel(self._h, name, _byref(h))
        if st:
            raise_error(st, self)
        return Kernel._wrap(h.value, self)

    def get_global(self, name: Union[str, bytes], device: Union[Device, int, None] = None) -> Tuple[int, int]:
        """(device address, size in bytes) of the __device__/__constant__ variable `name` (a name
        expression or the symbol name) on `device` (default: the current device)."""
        dev = _device(device)
        addr, size = ctypes.c_uint64(), _c_size_t()
        st = _cucore_object_code_get_global(self._h, dev._h, _encode(name), _byref(addr), _byref(size))
        if st:
            raise_error(st, self)
        return (addr.value, size.value)

    def read_global(self, name: Union[str, bytes], dtype: Any = None, *, device: Union[Device, int, None] = None) -> Any:
        """The bytes of the global `name` (synchronously): `bytes`, or with `dtype` a NumPy array of it."""
        dev = _device(device)
        _, size = self.get_global(name, dev)
        buf = ctypes.create_string_buffer(max(size, 1))
        st = _cucore_object_code_read_global(self._h, dev._h, _encode(name), buf, size)
        if st:
            raise_error(st, self)
        data = buf.raw[:size]
        if dtype is None:
            return data
        import numpy
        return numpy.frombuffer(bytearray(data), dtype=dtype)

    def write_global(self, name: Union[str, bytes], data: Any, *, device: Union[Device, int, None] = None) -> None:
        """Write `data` (any buffer-protocol object of exactly the global's size) into the global `name`
        (synchronously, after the device's earlier work)."""
        dev = _device(device)
        with _HostMemory(data, writable=False) as host:
            st = _cucore_object_code_write_global(self._h, dev._h, _encode(name), host.address, host.nbytes)
        if st:
            raise_error(st, self)

    def __repr__(self):
        if self._h is None:
            return "<ObjectCode (closed)>"
        return f"<ObjectCode {self.code_type} {self.name!r}>"


def _rebuild(code_type, code, name, symbol_mapping):
    return ObjectCode._create(code, code_type, name, symbol_mapping)


def _encode(name):
    if isinstance(name, str):
        return name.encode()
    if isinstance(name, bytes):
        return name
    raise TypeError(f"a global's name must be a str, not {type(name).__name__}")


# Program.compile makes ObjectCode; program.py is below this module.
_lib.hand_down("program", _wrap_object_code=ObjectCode._wrap)
