"""Programs: run-time compilation with NVRTC, libNVVM or the linker (include/cucore/program.h).

    prog = cucore.Program(source, "c++", cucore.ProgramOptions(arch="sm_90", std="c++17"))
    code = prog.compile("cubin", name_expressions=("saxpy<float>",), cache=cache)
    kernel = code.get_kernel("saxpy<float>")

As in cuda.core. Creating a Program is one C call (the options become their C struct once per
ProgramOptions object and are reused while it is unchanged), so a compile that hits a program cache
costs little more than the cache look-up itself.
"""
from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _lib
from ._handle import HandleObject
from .typing import PCHStatusType
from .common import CompilationError, NotSupportedError, NVRTCError, Status, closed_error, options_of, options_state, raise_error

(_cucore_program_create, _cucore_program_log, _cucore_program_code_type, _cucore_program_backend,
 _cucore_program_arch, _cucore_program_flags, _cucore_compiler_version, _cucore_program_pch_status) = _lib.bind(
    globals(), "cucore_program_create", "cucore_program_log", "cucore_program_code_type",
    "cucore_program_backend", "cucore_program_arch", "cucore_program_flags", "cucore_compiler_version",
    "cucore_program_pch_status")
# Typed forms of the hot-path functions too (every C function has its typed global; see test_common.py).
(_cucore_program_retain, _cucore_program_release, _cucore_program_compile) = _lib.bind(
    globals(), "cucore_program_retain", "cucore_program_release", "cucore_program_compile")
(_fast_program_create, _fast_program_release, _fast_program_compile) = _lib.bind_unchecked(
    globals(), "cucore_program_create", "cucore_program_release", "cucore_program_compile")

# cucore_pch_status_t -> cuda.core's PCHStatusType (NONE: None)
_PCH_STATUS = {_lib.C["CUCORE_PCH_STATUS_CREATED"]: PCHStatusType.CREATED,
               _lib.C["CUCORE_PCH_STATUS_NOT_ATTEMPTED"]: PCHStatusType.NOT_ATTEMPTED,
               _lib.C["CUCORE_PCH_STATUS_FAILED"]: PCHStatusType.FAILED}

_c_void_p = ctypes.c_void_p
_c_size_t = ctypes.c_size_t
_SIZE_NUL_TERMINATED = _c_size_t(0)  # code_size 0: the code is a NUL-terminated string
_c_char_p = ctypes.c_char_p
_byref = ctypes.byref
_handle_arg = _lib.handle_arg
_handle_outs = _lib.outs(_c_void_p)
_new_out = _lib.new_out

# Handed down by object_code.py, above this module (it uses the code types below), when it is imported
# (_lib.hand_down): Program.compile makes ObjectCode.
if TYPE_CHECKING:  # for type checkers only: at run time object_code.py hands it down (else:)
    from .object_code import ObjectCode
    from .program_cache import ProgramCache
    _wrap_object_code = ObjectCode._wrap
else:
    _wrap_object_code = None  # ObjectCode._wrap

# cucore_code_type_t and cucore_compiler_backend_t, by cuda.core's names.
CODE_TYPES = {"c++" if name == "cxx" else name: value
              for name, value in _lib.c_names("cucore_code_type_t", "CUCORE_CODE_", skip=("unset",)).items()}
CODE_TYPE_NAMES = {v: k for k, v in CODE_TYPES.items()}
_SOURCE_TYPES = frozenset(CODE_TYPES[name] for name in ("c++", "ptx", "nvvm"))  # what a Program compiles
BACKENDS = {_lib.C["CUCORE_BACKEND_NVRTC"]: "NVRTC", _lib.C["CUCORE_BACKEND_NVVM"]: "NVVM",
            _lib.C["CUCORE_BACKEND_NVJITLINK"]: "nvJitLink", _lib.C["CUCORE_BACKEND_DRIVER"]: "driver"}
BACKEND_IDS = {name.lower(): v for v, name in BACKENDS.items()}
TOGGLE_DEFAULT, TOGGLE_ON, TOGGLE_OFF = (_lib.C[f"CUCORE_TOGGLE_{name}"] for name in ("DEFAULT", "ON", "OFF"))
_ZERO = _c_size_t(0)


def code_type_id(value, allowed, what):
    """The cucore_code_type_t of `value` (a name such as "cubin", case-insensitive) among `allowed`."""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, one of {sorted(allowed)}, not {type(value).__name__}")
    v = CODE_TYPES.get(value.lower())
    if v is None or value.lower() not in allowed:
        raise ValueError(f"{what} {value!r} is not supported; use one of {sorted(allowed)}")
    return v


def read_string(fn, handle, *objects):
    """A string out of a (handle, buffer, capacity, length*) call: asks its length first, then copies."""
    n = _c_size_t()
    st = fn(handle, None, 0, n)
    if st:
        raise_error(st, *objects)
    buf = ctypes.create_string_buffer(n.value + 1)
    st = fn(handle, buf, n.value + 1, n)
    if st:
        raise_error(st, *objects)
    return buf.raw[:n.value].decode("utf-8", "replace")


def _strings(value, what, allow_path=False, owner="ProgramOptions"):
    """A str (or PathLike where allowed) or a sequence of them, as a tuple of str. `owner.what` names the
    field in errors."""
    kinds = (str, os.PathLike) if allow_path else (str,)
    if value is None:
        return ()
    if isinstance(value, kinds):
        return (os.fspath(value),)
    if isinstance(value, (bytes, dict)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{owner}.{what} must be a str or a sequence of str, not {type(value).__name__}")
    out = []
    for v in value:
        if not isinstance(v, kinds):
            raise TypeError(f"{owner}.{what} items must be str, not {type(v).__name__}")
        out.append(os.fspath(v))
    return tuple(out)


def _macros(value):
    """define_macro: "NAME", ("NAME", "VALUE") or a list of those -> ("NAME", "NAME=VALUE", ...)."""
    if value is None:
        return ()
    if isinstance(value, str) or (isinstance(value, tuple) and len(value) == 2
                                  and all(isinstance(v, str) for v in value)):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"ProgramOptions.define_macro must be a str, a (name, value) tuple or a list of those, "
                        f"not {type(value).__name__}")
    out = []
    for v in value:
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, tuple) and len(v) == 2 and all(isinstance(x, str) for x in v):
            out.append(f"{v[0]}={v[1]}")
        else:
            raise TypeError(f"ProgramOptions.define_macro items must be str or (name, value) tuples of str, "
                            f"not {v!r}")
    for v in out:
        if not v or v.startswith("="):
            raise ValueError(f"ProgramOptions.define_macro {v!r} has no name")
    return tuple(out)


def _diags(value, what):
    if value is None:
        return ()
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,)
    out = []
    for v in value if isinstance(value, (list, tuple)) else [value]:
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"ProgramOptions.{what} must be an int or a sequence of int, not {type(v).__name__}")
        if not 0 <= v < 2**32:
            raise ValueError(f"ProgramOptions.{what} {v} is not a diagnostic number")
        out.append(v)
    return tuple(out)


def _flag(value, what, owner="ProgramOptions"):
    if value is None:
        return 0
    if not isinstance(value, bool):
        raise TypeError(f"{owner}.{what} must be a bool or None, not {type(value).__name__}")
    return int(value)


def _toggle(value, what, owner="ProgramOptions"):
    if value is None:
        return TOGGLE_DEFAULT
    if not isinstance(value, bool):
        raise TypeError(f"{owner}.{what} must be a bool or None (the compiler's default), "
                        f"not {type(value).__name__}")
    return TOGGLE_ON if value else TOGGLE_OFF


def _opt_str(value, what, allow_path=False):
    if value is None:
        return None
    if isinstance(value, str) or (allow_path and isinstance(value, os.PathLike)):
        s = os.fspath(value)
        if "\0" in s:
            raise ValueError(f"ProgramOptions.{what} contains a NUL character")
        return s.encode()
    raise TypeError(f"ProgramOptions.{what} must be a str or None, not {type(value).__name__}")


def _arch(value):
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"ProgramOptions.arch must be a str such as 'sm_90' or None, not {type(value).__name__}")
    if not value:
        raise ValueError("ProgramOptions.arch is empty")
    return value.encode()


def _bool_flag(value, what):
    if value is not None and not isinstance(value, bool):
        raise TypeError(f"ProgramOptions.{what} must be a bool or None, not {type(value).__name__}")
    return value


def _bundled_headers_dir() -> str:
    """Where NVRTC installs the headers it bundles (--use-bundled-headers): a per-user cache directory."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "cucore", "nvrtc-bundled-headers")


def _nvrtc_flags(o) -> List[str]:
    """The NVRTC flags of the ProgramOptions fields libcucore's C options do not name, spelled as NVRTC (and
    cuda.core) spell them."""
    if o.extra_sources is not None or o.use_libdevice:
        raise NotSupportedError(Status.ERROR_NOT_SUPPORTED, "ProgramOptions.extra_sources and use_libdevice (NVVM) are not offered by "
                                "libcucore's compiler: link the modules with Linker, or compile them into one")
    flags = []
    for name, flag in (("gen_opt_lto", "--gen-opt-lto"), ("no_source_include", "--no-source-include"),
                       ("restrict", "--restrict"), ("device_int128", "--device-int128"),
                       ("device_float128", "--device-float128"), ("fdevice_syntax_only", "--fdevice-syntax-only"),
                       ("minimal", "--minimal"), ("no_cache", "--no-cache"), ("numba_debug", "--numba-debug")):
        if _bool_flag(getattr(o, name), name):
            flags.append(flag)
    for name, flag in (("builtin_move_forward", "--builtin-move-forward"),
                       ("builtin_initializer_list", "--builtin-initializer-list"),
                       ("pch_verbose", "--pch-verbose"), ("pch_messages", "--pch-messages"),
                       ("instantiate_templates_in_pch", "--instantiate-templates-in-pch")):
        value = _bool_flag(getattr(o, name), name)
        if value is not None:
            flags.append(f"{flag}={'true' if value else 'false'}")
    for name, flag in (("optimization_info", "--optimization-info"), ("time", "--time"),
                       ("fdevice_time_trace", "--fdevice-time-trace"), ("frandom_seed", "--frandom-seed"),
                       ("ofast_compile", "--Ofast-compile")):
        value = getattr(o, name)
        if value is not None:
            text = os.fspath(value) if isinstance(value, os.PathLike) else value
            if not isinstance(text, (str, int)) or isinstance(text, bool):
                raise TypeError(f"ProgramOptions.{name} must be a str or None, not {type(value).__name__}")
            flags.append(f"{flag}={text}")
    if o.split_compile is not None:
        if isinstance(o.split_compile, bool) or not isinstance(o.split_compile, int) or o.split_compile < 0:
            raise ValueError(f"ProgramOptions.split_compile must be a count of threads (>= 0), not {o.split_compile!r}")
        flags.append(f"--split-compile={o.split_compile}")
    if _bool_flag(o.use_bundled_headers, "use_bundled_headers"):
        flags.append(f"--use-bundled-headers={_bundled_headers_dir()}")
    return flags


class _CArrays:
    """The C struct of one ProgramOptions with every array and string it points at (kept alive here)."""
    __slots__ = ("struct", "ref", "keep")


def _c_strings(items):
    for s in items:
        if "\0" in s:
            raise ValueError(f"option string {s!r} contains a NUL character")
    encoded = [s.encode() for s in items]
    return (_c_char_p * len(encoded))(*encoded) if encoded else None, len(encoded)


@dataclass
class ProgramOptions:
    """Options of a Program (cucore_program_options_t), with cuda.core's field names.

    None (or False) leaves each option to the compiler. Switches whose default belongs to the compiler
    (device_code_optimize, ftz, prec_sqrt, prec_div, fma) take None, True or False. String lists take a
    str or a sequence of str; define_macro also takes ("NAME", "VALUE") tuples; the diag_* fields an int
    or a sequence of int. The NVRTC switches libcucore's C options do not name (gen_opt_lto, restrict,
    split_compile, time, the PCH messages, ...) become the NVRTC flags cuda.core gives them (as_bytes()).
    `headers` (cucore's addition) maps include names to their source, compiled from memory; `extra_options`
    are further compiler flags passed as written. Every field takes part in a program cache's key. Invalid
    values raise TypeError/ValueError when the options are made (and when a Program uses them after a change).
    extra_sources and use_libdevice (NVVM) are not offered by libcucore's compiler: NotSupportedError.
    """
    name: Optional[str] = "default_program"
    arch: Optional[str] = None
    relocatable_device_code: Optional[bool] = None
    extensible_whole_program: Optional[bool] = None
    debug: Optional[bool] = None
    lineinfo: Optional[bool] = None
    device_code_optimize: Optional[bool] = None
    ptxas_options: Any = None
    max_register_count: Optional[int] = None
    ftz: Optional[bool] = None
    prec_sqrt: Optional[bool] = None
    prec_div: Optional[bool] = None
    fma: Optional[bool] = None
    use_fast_math: Optional[bool] = None
    extra_device_vectorization: Optional[bool] = None
    link_time_optimization: Optional[bool] = None
    gen_opt_lto: Optional[bool] = None
    define_macro: Any = None
    undefine_macro: Any = None
    include_path: Any = None
    use_bundled_headers: Optional[bool] = None
    pre_include: Any = None
    no_source_include: Optional[bool] = None
    std: Optional[str] = None
    builtin_move_forward: Optional[bool] = None
    builtin_initializer_list: Optional[bool] = None
    disable_warnings: Optional[bool] = None
    restrict: Optional[bool] = None
    device_as_default_execution_space: Optional[bool] = None
    device_int128: Optional[bool] = None
    optimization_info: Optional[str] = None
    no_display_error_number: Optional[bool] = None
    diag_error: Any = None
    diag_suppress: Any = None
    diag_warn: Any = None
    brief_diagnostics: Optional[bool] = None
    time: Optional[str] = None
    split_compile: Optional[int] = None
    fdevice_syntax_only: Optional[bool] = None
    minimal: Optional[bool] = None
    no_cache: Optional[bool] = None
    fdevice_time_trace: Optional[str] = None
    device_float128: Optional[bool] = None
    frandom_seed: Optional[str] = None
    ofast_compile: Optional[str] = None
    pch: Optional[bool] = None
    create_pch: Optional[str] = None
    use_pch: Optional[str] = None
    pch_dir: Optional[str] = None
    pch_verbose: Optional[bool] = None
    pch_messages: Optional[bool] = None
    instantiate_templates_in_pch: Optional[bool] = None
    extra_sources: Any = None
    use_libdevice: Optional[bool] = None
    numba_debug: Optional[bool] = None
    headers: Optional[dict] = None
    extra_options: Any = None
    _c: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._to_c()  # validate now, as cuda.core does

    __getstate__ = options_state  # copies and pickles carry the fields, not the C struct

    def as_bytes(self, backend: str, target_type: Optional[str] = None) -> List[bytes]:
        """The compiler command line these options become for `backend` ("nvrtc", or "nvvm"), one flag per
        item, as bytes (cuda.core's form); `target_type` ("ptx", "cubin", "ltoir") adds what that target asks
        (-dlto for LTO-IR). An arch of None is the current device's."""
        kind = {"nvrtc": "c++", "nvvm": "nvvm"}.get(str(backend).lower())
        if kind is None:
            raise ValueError(f"backend must be 'nvrtc' or 'nvvm', not {backend!r}")
        flags = Program("\n" if kind == "c++" else b"\n", kind, self).flags
        if target_type is not None:
            if target_type not in ("ptx", "cubin", "ltoir"):
                raise ValueError(f"target_type must be 'ptx', 'cubin' or 'ltoir', not {target_type!r}")
            if target_type == "ltoir" and not self.link_time_optimization:
                flags.append("-dlto" if kind == "c++" else "-gen-lto")
        return [f.encode() for f in flags]

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if name != "_c":
            object.__setattr__(self, "_c", None)  # rebuilt (and revalidated) on next use

    def _to_c(self):
        """The C struct (cached until a field changes)."""
        c = self._c
        if c is not None:
            return c
        S = _lib.STRUCTS["cucore_program_options_t"]
        s = S()
        s.struct_size = ctypes.sizeof(S)
        keep = []
        s.name = _opt_str(self.name, "name")
        s.arch = _arch(self.arch)
        s.std = _opt_str(self.std, "std")
        for attr, count, items in (
                ("defines", "define_count", _macros(self.define_macro)),
                ("undefines", "undefine_count", _strings(self.undefine_macro, "undefine_macro")),
                ("include_paths", "include_path_count", _strings(self.include_path, "include_path", True)),
                ("pre_includes", "pre_include_count", _strings(self.pre_include, "pre_include")),
                ("ptxas_options", "ptxas_option_count", _strings(self.ptxas_options, "ptxas_options")),
                ("extra_options", "extra_option_count",
                 _nvrtc_flags(self) + list(_strings(self.extra_options, "extra_options")))):
            arr, n = _c_strings(items)
            keep.append(arr)
            setattr(s, attr, ctypes.cast(arr, ctypes.POINTER(_c_char_p)) if arr is not None else None)
            setattr(s, count, n)
        headers = self.headers
        if headers is not None:
            if not isinstance(headers, dict):
                raise TypeError(f"ProgramOptions.headers must be a dict of include name -> source, "
                                f"not {type(headers).__name__}")
            names, sources = [], []
            for k, v in headers.items():
                if not isinstance(k, str):
                    raise TypeError(f"ProgramOptions.headers names must be str, not {type(k).__name__}")
                if isinstance(v, (bytes, bytearray)):
                    v = bytes(v).decode()
                if not isinstance(v, str):
                    raise TypeError(f"ProgramOptions.headers[{k!r}] must be str or bytes, not {type(v).__name__}")
                names.append(k)
                sources.append(v)
            arr_n, n = _c_strings(names)
            arr_s, _ = _c_strings(sources)
            keep += [arr_n, arr_s]
            P = ctypes.POINTER(_c_char_p)
            s.header_names = ctypes.cast(arr_n, P) if n else None
            s.header_sources = ctypes.cast(arr_s, P) if n else None
            s.header_count = n
        for name in ("debug", "lineinfo", "use_fast_math", "extra_device_vectorization", "relocatable_device_code",
                     "extensible_whole_program", "link_time_optimization", "device_as_default_execution_space",
                     "disable_warnings", "brief_diagnostics", "no_display_error_number", "pch"):
            setattr(s, name, _flag(getattr(self, name), name))
        for name in ("device_code_optimize", "ftz", "prec_sqrt", "prec_div", "fma"):
            setattr(s, name, _toggle(getattr(self, name), name))
        m = self.max_register_count
        if m is not None:
            if isinstance(m, bool) or not isinstance(m, int):
                raise TypeError(f"ProgramOptions.max_register_count must be an int or None, not {type(m).__name__}")
            if not 0 < m < 2**32:
                raise ValueError(f"ProgramOptions.max_register_count must be positive, not {m}")
            s.max_register_count = m
        for attr, count, what in (("diag_error", "diag_error_count", "diag_error"),
                                  ("diag_suppress", "diag_suppress_count", "diag_suppress"),
                                  ("diag_warn", "diag_warn_count", "diag_warn")):
            items = _diags(getattr(self, what), what)
            if items:
                arr = (ctypes.c_uint32 * len(items))(*items)
                keep.append(arr)
                setattr(s, attr, ctypes.cast(arr, ctypes.POINTER(ctypes.c_uint32)))
            setattr(s, count, len(items))
        s.create_pch = _opt_str(self.create_pch, "create_pch", True)
        s.use_pch = _opt_str(self.use_pch, "use_pch", True)
        s.pch_dir = _opt_str(self.pch_dir, "pch_dir", True)
        c = _CArrays()
        c.struct, c.ref, c.keep = s, _byref(s), keep
        object.__setattr__(self, "_c", c)
        return c


_DEFAULT_OPTIONS_REF = None  # cucore's defaults: NULL options


class Program(HandleObject):
    """Source code and the options to compile it: `Program(code, code_type, options=None)` with code_type
    "c++" (NVRTC), "ptx" (assembled through the linker) or "nvvm" (libNVVM; str or bytes). `compile()`
    turns it into an ObjectCode. Closes like every cucore object (close(), `with`, or when collected).

    libcucore keeps the compiler's program private: Program has no raw handle (`handle` raises AttributeError;
    cuda.core's is an nvrtcProgram) and equals only itself; `flags`, `log` and `backend` tell what it does."""

    __slots__ = ("_options", "_code_type")
    _release = staticmethod(_fast_program_release)

    def __init__(self, code: Union[str, bytes], code_type: str, options: Union[ProgramOptions, Dict[str, Any], None] = None) -> None:
        if not isinstance(code_type, str):
            raise TypeError(f"code_type must be a str ('c++', 'ptx' or 'nvvm'), not {type(code_type).__name__}")
        ct = CODE_TYPES.get(code_type.lower())
        if ct not in _SOURCE_TYPES:
            raise ValueError(f"code_type {code_type!r} is not supported; use 'c++', 'ptx' or 'nvvm'")
        if type(code) is str:
            data = code.encode()
            size = _SIZE_NUL_TERMINATED  # bytes objects end with a NUL
        elif isinstance(code, str):
            data = code.encode()
            size = _SIZE_NUL_TERMINATED
        elif isinstance(code, (bytes, bytearray, memoryview)):
            if ct != CODE_TYPES["nvvm"]:
                raise TypeError(f"{code_type!r} code must be a str (only 'nvvm' takes bytes)")
            data = bytes(code)
            size = _c_size_t(len(data))
        else:
            raise TypeError(f"code must be a str (or bytes for 'nvvm'), not {type(code).__name__}")
        if options is None:
            ref = None
        else:
            if type(options) is not ProgramOptions:
                options = options_of(options, ProgramOptions)
            ref = options._to_c().ref
        self._h = None
        self._raw = None
        self._options = options
        self._code_type = code_type.lower()
        # A cache hit starts here: the pooled out-parameter idiom of the hot paths (see _lib.py).
        try:
            out, out_ref = pair = _handle_outs.pop()
        except IndexError:
            out, out_ref = pair = _new_out(_c_void_p)
        st = _fast_program_create(data, size, ct, ref, out_ref)
        hv = out.value
        _handle_outs.append(pair)
        if st:
            raise_error(st)
        self._h = _handle_arg(hv)

    @property
    def options(self) -> Optional[ProgramOptions]:
        """The ProgramOptions given (None for the defaults)."""
        return self._options

    @property
    def code_type(self) -> str:
        """"c++", "ptx" or "nvvm"."""
        return self._code_type

    @property
    def backend(self) -> str:
        """The tool that compiles this program: "NVRTC", "NVVM", "nvJitLink" or "driver"."""
        out = ctypes.c_int()
        st = _cucore_program_backend(self._h, _byref(out))
        if st:
            raise_error(st, self)
        return BACKENDS.get(out.value, str(out.value))

    @property
    def pch_status(self) -> Optional[PCHStatusType]:
        """What became of the precompiled header the last compile was asked to make (pch or create_pch):
        PCHStatusType.CREATED, NOT_ATTEMPTED or FAILED; None when none was asked for, nothing was compiled
        yet (a cache hit compiles nothing), or the code is not C++ (as cuda.core's)."""
        out = ctypes.c_int()
        st = _cucore_program_pch_status(self._h, _byref(out))
        if st:
            raise_error(st, self)
        return _PCH_STATUS.get(out.value)

    @property
    def arch(self) -> str:
        """The architecture it compiles for, e.g. "sm_90"."""
        out = _c_char_p()
        st = _cucore_program_arch(self._h, _byref(out))
        if st:
            raise_error(st, self)
        return out.value.decode()  # type: ignore[union-attr]

    @property
    def flags(self) -> List[str]:
        """The compiler command line the options become, one flag per item."""
        text = read_string(_cucore_program_flags, self._h, self)
        return [line for line in text.split("\n") if line]

    @property
    def log(self) -> str:
        """The log of the last compile that ran ("" before one, and after a cache hit)."""
        return read_string(_cucore_program_log, self._h, self)

    def get_log(self) -> str:
        """The log of the last compile that ran (cuda.core's name for `log`)."""
        return self.log

    def compile(self, target_type: str = "cubin", name_expressions: Sequence[Union[str, bytes]] = (), logs: Any = None, *, cache: Optional[ProgramCache] = None) -> ObjectCode:
        """Compile to `target_type` ("ptx", "cubin" or "ltoir"; "cubin" for PTX programs) and return the
        ObjectCode. `name_expressions` are C++ names (e.g. "saxpy<float>") the object code will find
        kernels and globals by. With `cache` (InMemoryProgramCache, FileStreamProgramCache), a hit skips
        the compiler. `logs`, if given, gets the compile log written to it (cuda.core's parameter).
        A rejected compile raises CompilationError whose `log` is the whole log."""
        target = _TARGETS.get(target_type)
        if target is None:
            target = code_type_id(target_type, ("ptx", "cubin", "ltoir"), "target_type")
        if name_expressions:
            names, n = _name_array(name_expressions)
        else:
            names, n = None, _ZERO
        ch = None
        if cache is not None:
            ch = getattr(cache, "_h", False)
            if ch is False:
                raise TypeError(f"cache must be an InMemoryProgramCache or a FileStreamProgramCache, "
                                f"not {type(cache).__name__}")
            if ch is None:
                raise closed_error(cache)
        try:
            out, ref = pair = _handle_outs.pop()
        except IndexError:
            out, ref = pair = _new_out(_c_void_p)
        st = _fast_program_compile(self._h, target, names, n, ch, ref)
        h = out.value
        _handle_outs.append(pair)
        if st:
            self._raise_compile(st)
        if logs is not None:
            logs.write(self.log)
        return _wrap_object_code(h)

    def _raise_compile(self, st):
        try:
            raise_error(st, self)
        except CompilationError as e:
            if self._code_type == "c++" and type(e) is CompilationError:  # NVRTC's: cuda.core's NVRTCError
                e = NVRTCError(e.status, e.message, e.cuda_result)
            try:
                e.log = self.log
            except Exception:
                pass
            raise e from None

    def __repr__(self):
        if self._h is None:
            return "<Program (closed)>"
        return f"<Program {self._code_type} for {self.arch}>"


_TARGETS = {name: CODE_TYPES[name] for name in ("cubin", "ptx", "ltoir")}


def _name_array(name_expressions):
    if isinstance(name_expressions, (str, bytes)):
        name_expressions = (name_expressions,)
    items = []
    for e in name_expressions:
        if isinstance(e, str):
            e = e.encode()
        elif not isinstance(e, bytes):
            raise TypeError(f"name expressions must be str, not {type(e).__name__}")
        items.append(e)
    return (_c_char_p * len(items))(*items), _c_size_t(len(items))


def compiler_version(backend: str = "nvrtc") -> Tuple[int, int]:
    """The installed compiler's version as (major, minor): backend "nvrtc", "nvvm" or "nvjitlink".
    Raises NotSupportedError when it is not installed."""
    b = BACKEND_IDS.get(str(backend).lower())
    if b is None or b == BACKEND_IDS["driver"]:
        raise ValueError(f"backend must be 'nvrtc', 'nvvm' or 'nvjitlink', not {backend!r}")
    out = ctypes.c_int()
    st = _cucore_compiler_version(b, _byref(out))
    if st:
        raise_error(st)
    return (out.value // 1000, out.value % 1000 // 10)

