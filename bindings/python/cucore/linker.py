"""Linking device code with nvJitLink, or the driver's cuLink* (include/cucore/linker.h).

    linker = cucore.Linker(a_ltoir, b_ltoir, options=cucore.LinkerOptions(arch="sm_90",
                                                                         link_time_optimization=True))
    code = linker.link("cubin")
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Union

from . import _lib
from ._handle import HandleObject
from .common import CompilationError, closed_error, options_of, options_state, raise_error
from .device import Device
from .object_code import ObjectCode
from .program import BACKENDS, _c_strings, _flag, _strings, _toggle, code_type_id, read_string

(_cucore_linker_create, _cucore_linker_link, _cucore_linker_error_log, _cucore_linker_info_log,
 _cucore_linker_backend, _cucore_linker_default_backend) = _lib.bind(
    globals(), "cucore_linker_create", "cucore_linker_link", "cucore_linker_error_log", "cucore_linker_info_log",
    "cucore_linker_backend", "cucore_linker_default_backend")
(_cucore_linker_retain, _cucore_linker_release) = _lib.bind(globals(), "cucore_linker_retain",
                                                             "cucore_linker_release")
(_fast_linker_release,) = _lib.bind_unchecked(globals(), "cucore_linker_release")

_byref = ctypes.byref
_BACKEND_OPTION = {None: _lib.C["CUCORE_BACKEND_DEFAULT"], "nvjitlink": _lib.C["CUCORE_BACKEND_NVJITLINK"],
                   "driver": _lib.C["CUCORE_BACKEND_DRIVER"]}


@dataclass
class LinkerOptions:
    """Options of a Linker (cucore_linker_options_t), with cuda.core's fields in cuda.core's order. None leaves
    each to the linker. The nvJitLink switches libcucore's C options do not name (time, ptx, kernels_used,
    variables_used, optimize_unused_variables, split_compile, split_compile_extended, no_cache) become the
    nvJitLink flags cuda.core gives them (as_bytes()); they need nvJitLink. cucore's additions: `extra_options`
    (further linker flags as written) and `backend`: None (nvJitLink where installed, else the driver),
    "nvjitlink" or "driver"."""
    name: Optional[str] = "<default linker>"
    arch: Optional[str] = None
    max_register_count: Optional[int] = None
    time: Optional[bool] = None
    verbose: Optional[bool] = None
    link_time_optimization: Optional[bool] = None
    ptx: Optional[bool] = None
    optimization_level: Optional[int] = None
    debug: Optional[bool] = None
    lineinfo: Optional[bool] = None
    ftz: Optional[bool] = None
    prec_div: Optional[bool] = None
    prec_sqrt: Optional[bool] = None
    fma: Optional[bool] = None
    kernels_used: Any = None
    variables_used: Any = None
    optimize_unused_variables: Optional[bool] = None
    ptxas_options: Any = None
    split_compile: Optional[int] = None
    split_compile_extended: Optional[int] = None
    no_cache: Optional[bool] = None
    numba_debug: Optional[bool] = None
    extra_options: Any = None
    backend: Optional[str] = None
    _c: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._to_c()

    __getstate__ = options_state  # copies and pickles carry the fields, not the C struct

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if name != "_c":
            object.__setattr__(self, "_c", None)

    def _to_c(self):
        if self._c is not None:
            return self._c
        S = _lib.STRUCTS["cucore_linker_options_t"]
        s = S()
        s.struct_size = ctypes.sizeof(S)
        keep = []
        for attr in ("name", "arch"):
            v = getattr(self, attr)
            if v is not None and not isinstance(v, str):
                raise TypeError(f"LinkerOptions.{attr} must be a str or None, not {type(v).__name__}")
            setattr(s, attr, v.encode() if v else None)
        b = self.backend.lower() if isinstance(self.backend, str) else self.backend
        if b not in _BACKEND_OPTION:
            raise ValueError(f"LinkerOptions.backend must be None, 'nvjitlink' or 'driver', not {self.backend!r}")
        s.backend = _BACKEND_OPTION[b]
        m = self.max_register_count
        if m is not None:
            if isinstance(m, bool) or not isinstance(m, int) or not 0 < m < 2**32:
                raise ValueError(f"LinkerOptions.max_register_count must be a positive int, not {m!r}")
            s.max_register_count = m
        o = self.optimization_level
        if o is not None:
            if isinstance(o, bool) or not isinstance(o, int) or not 0 <= o <= 3:
                raise ValueError(f"LinkerOptions.optimization_level must be 0..3, not {o!r}")
            s.optimization_level = o + 1  # CUCORE_OPTIMIZATION_LEVEL(n)
        for attr in ("debug", "lineinfo", "link_time_optimization", "verbose"):
            setattr(s, attr, _flag(getattr(self, attr), attr, "LinkerOptions"))
        for attr in ("ftz", "prec_div", "prec_sqrt", "fma"):
            setattr(s, attr, _toggle(getattr(self, attr), attr, "LinkerOptions"))
        P = ctypes.POINTER(ctypes.c_char_p)
        for attr, count in (("ptxas_options", "ptxas_option_count"), ("extra_options", "extra_option_count")):
            items = _strings(getattr(self, attr), attr, owner="LinkerOptions")
            if attr == "extra_options":
                items = self._nvjitlink_flags() + list(items)
            arr, n = _c_strings(items)
            keep.append(arr)
            setattr(s, attr, ctypes.cast(arr, P) if n else None)
            setattr(s, count, n)
        c = (s, _byref(s), keep)
        object.__setattr__(self, "_c", c)
        return c

    def _nvjitlink_flags(self) -> List[str]:
        """The nvJitLink flags of the fields libcucore's C options do not name, spelled as nvJitLink (and
        cuda.core) spell them."""
        flags = []
        for attr, flag in (("time", "-time"), ("ptx", "-ptx")):
            if _flag(getattr(self, attr), attr, "LinkerOptions"):
                flags.append(flag)
        for attr, flag in (("kernels_used", "-kernels-used"), ("variables_used", "-variables-used")):
            flags += [f"{flag}={name}" for name in _strings(getattr(self, attr), attr, owner="LinkerOptions")]
        if _flag(self.optimize_unused_variables, "optimize_unused_variables", "LinkerOptions"):
            flags.append("-optimize-unused-variables")
        for attr, flag in (("split_compile", "-split-compile"), ("split_compile_extended", "-split-compile-extended")):
            v = getattr(self, attr)
            if v is not None:
                if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                    raise ValueError(f"LinkerOptions.{attr} must be a count (>= 0), not {v!r}")
                flags.append(f"{flag}={v}")
        if _flag(self.no_cache, "no_cache", "LinkerOptions"):
            flags.append("-no-cache")
        _flag(self.numba_debug, "numba_debug", "LinkerOptions")  # no nvJitLink flag, as in cuda.core
        return flags

    def as_bytes(self, backend: str = "nvjitlink") -> List[bytes]:
        """The nvJitLink command line these options become, one flag per item, as bytes (cuda.core's form; only
        the "nvjitlink" backend has one). An arch of None is the current device's."""
        if str(backend).lower() != "nvjitlink":
            raise ValueError(f"as_bytes() only supports the 'nvjitlink' backend, not {backend!r}")
        self._to_c()  # validates
        arch = self.arch or f"sm_{Device().arch}"
        f = [f"-arch={arch}"]
        if self.max_register_count:
            f.append(f"-maxrregcount={self.max_register_count}")
        f += [flag for attr, flag in (("time", "-time"), ("verbose", "-verbose"), ("link_time_optimization", "-lto"),
                                      ("ptx", "-ptx")) if getattr(self, attr)]
        if self.optimization_level is not None:
            f.append(f"-O{self.optimization_level}")
        f += [flag for attr, flag in (("debug", "-g"), ("lineinfo", "-lineinfo")) if getattr(self, attr)]
        for attr, flag in (("ftz", "-ftz"), ("prec_div", "-prec-div"), ("prec_sqrt", "-prec-sqrt"), ("fma", "-fma")):
            v = getattr(self, attr)
            if v is not None:
                f.append(f"{flag}={'true' if v else 'false'}")
        rest = [flag for flag in self._nvjitlink_flags() if flag not in ("-time", "-ptx")]
        split = [flag for flag in rest if flag.startswith(("-split-compile", "-no-cache"))]
        f += [flag for flag in rest if flag not in split]  # kernels, variables, optimize_unused_variables
        f += [f"-Xptxas={p}" for p in _strings(self.ptxas_options, "ptxas_options", owner="LinkerOptions")]
        f += split + list(_strings(self.extra_options, "extra_options", owner="LinkerOptions"))
        return [x.encode() for x in f]


class Linker(HandleObject):
    """Links object codes (PTX, cubin, LTO-IR, fatbin, object, library) into one: `Linker(*object_codes,
    options=None)`, then `link("cubin")` (or "ptx" with link-time optimisation on nvJitLink). Rejected
    inputs raise CompilationError (when the linker is made or at link) with the error log in `log`."""

    __slots__ = ("_inputs",)
    _release = staticmethod(_fast_linker_release)

    def __init__(self, *object_codes: ObjectCode, options: Union[LinkerOptions, Dict[str, Any], None] = None) -> None:
        self._h = None
        self._raw = None
        if not object_codes:
            raise ValueError("Linker needs at least one ObjectCode")
        for i, o in enumerate(object_codes):
            if not isinstance(o, ObjectCode):
                raise TypeError(f"Linker input {i} must be an ObjectCode, not {type(o).__name__}")
            if o._h is None:
                raise closed_error(o)
        ref = None if options is None else options_of(options, LinkerOptions)._to_c()[1]
        self._inputs = object_codes
        arr = (ctypes.c_void_p * len(object_codes))(*[o._hv for o in object_codes])
        h = ctypes.c_void_p()
        st = _cucore_linker_create(arr, len(object_codes), ref, _byref(h))
        if st:
            raise_error(st, *object_codes)
        self._h = _lib.handle_arg(h.value)

    def link(self, target_type: str = "cubin") -> ObjectCode:
        """Link into an ObjectCode of `target_type` ("cubin", or "ptx" with link_time_optimization)."""
        t = code_type_id(target_type, ("cubin", "ptx"), "target_type")
        h = ctypes.c_void_p()
        st = _cucore_linker_link(self._h, t, _byref(h))
        if st:
            try:
                raise_error(st, self)
            except CompilationError as e:
                e.log = self.get_error_log()
                raise
        return ObjectCode._wrap(h.value)

    def get_error_log(self) -> str:
        """The linker's error log ("" when there is none)."""
        return read_string(_cucore_linker_error_log, self._h, self)

    def get_info_log(self) -> str:
        """The linker's information log (more with LinkerOptions(verbose=True))."""
        return read_string(_cucore_linker_info_log, self._h, self)

    @property
    def backend(self) -> str:
        """"nvJitLink" or "driver"."""
        out = ctypes.c_int()
        st = _cucore_linker_backend(self._h, _byref(out))
        if st:
            raise_error(st, self)
        return BACKENDS.get(out.value, str(out.value))

    @staticmethod
    def which_backend() -> str:
        """The backend a Linker with default options uses: "nvJitLink" where it loads, else "driver"."""
        out = ctypes.c_int()
        st = _cucore_linker_default_backend(_byref(out))
        if st:
            raise_error(st)
        return BACKENDS.get(out.value, str(out.value))

    def __repr__(self):
        return "<Linker (closed)>" if self._h is None else f"<Linker {self.backend}>"
