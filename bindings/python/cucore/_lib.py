"""Finding, loading and binding libcucore.

Importing the package never loads the library. Each module declares the C functions it calls with
`(_cucore_x, ...) = bind(globals(), "cucore_x", ...)`, which gives stubs; the first call of any stub loads
the library, sets up every function of _abi.ABI with its ctypes types and replaces all stubs, in every
module, by the ctypes functions themselves. From then on a call costs one global
lookup and the ctypes call, nothing else.

Hot paths call the same C functions through `bind_unchecked()`: a second ctypes function object per
symbol, derived here from the same _abi.ABI entry (same restype) but without argtypes, so that ctypes
converts nothing (typed calls convert each argument through its type's from_param, and an out-parameter
through a new pointer object). Callers of unchecked functions pass exactly the C types: handles as the
`handle_arg()` objects the wrappers keep in `_h` (or None for NULL), out-parameters as `byref()` of the
right ctypes type (see `outs()`), structs as `byref()`, enums as ints (C int). Nothing checks that at
run time; tests/python/test_fast_paths.py checks every call site's arity against _abi.ABI.

The library is searched, in order, at:
  1. the path in the environment variable CUCORE_LIBRARY (an error if set and unloadable),
  2. a copy inside the package (cucore/libcucore.so.0, built into the wheel by pip install),
  3. the repository's build tree (build/default/lib/libcucore.so) when running from a checkout,
  4. the system loader ("libcucore.so.0").
If none loads, every call raises LibraryNotFoundError naming what was searched.

The package's lowest layer of code (bindings/python/README.md, "Layers"): of the package it imports only _abi,
_abi_types and _abi_constants (data). hand_down() below is how a module gives the modules beneath it what their methods need of it.
"""
import ctypes
import importlib
import os
import re
import pathlib
import sys
import threading
from typing import Any, Dict, List

from . import _abi, _abi_constants, _abi_types

# The errors of common.py, which is above this module (it imports this one to bind its C functions): handed
# down by common.py; raised only by calls, after the package has been imported.
LibraryNotFoundError = NotSupportedError = Status = None

# The ABI major version this binding was written against (include/cucore/common.h).
ABI_VERSION_MAJOR = 0
ABI_VERSION_MINOR = 1

PACKAGE_DIR = pathlib.Path(__file__).resolve().parent

# The C functions load() calls through the library object itself, before it binds anything.
LOADER_CALLS = frozenset({"cucore_version", "cucore_abi_layout"})

if sys.platform == "darwin":  # pragma: no cover - Linux is the supported platform
    SYSTEM_NAMES = ("libcucore.0.dylib", "libcucore.dylib")
elif sys.platform == "win32":  # pragma: no cover
    SYSTEM_NAMES = ("cucore.dll",)
else:
    SYSTEM_NAMES = ("libcucore.so.0",)

# ---------------------------------------------------------------------------------------------
# C type spellings of _abi.py -> ctypes
# ---------------------------------------------------------------------------------------------

_SCALARS = {
    "void": None,
    "int": ctypes.c_int,
    "unsigned int": ctypes.c_uint,
    "char": ctypes.c_char,
    "unsigned char": ctypes.c_ubyte,
    "int8_t": ctypes.c_int8,
    "uint8_t": ctypes.c_uint8,
    "int16_t": ctypes.c_int16,
    "uint16_t": ctypes.c_uint16,
    "int32_t": ctypes.c_int32,
    "int64_t": ctypes.c_int64,
    "uint32_t": ctypes.c_uint32,
    "uint64_t": ctypes.c_uint64,
    "size_t": ctypes.c_size_t,
    "float": ctypes.c_float,
    "double": ctypes.c_double,
    "char*": ctypes.c_char_p,
    "void*": ctypes.c_void_p,
}
for _e in _abi_constants.ENUMS:
    _SCALARS[_e] = ctypes.c_int  # every enum of the C ABI is a 32-bit int

_ARRAY = re.compile(r"^(.*)\[(\d+)\]$")

# Struct classes exist before their fields are set, so that a function-pointer field may name its own struct.
STRUCTS: Dict[str, Any] = {name: type(name, (ctypes.Structure,), {}) for name in _abi_types.STRUCTS}


def ctype(spelling):
    """The ctypes type for a C type spelling of _abi.py."""
    if spelling in _SCALARS:
        return _SCALARS[spelling]
    if spelling in STRUCTS:
        return STRUCTS[spelling]
    array = _ARRAY.match(spelling)
    if array:
        return ctype(array.group(1)) * int(array.group(2))
    if spelling in _abi_types.CALLBACKS:
        # A function pointer parameter: c_void_p accepts both a CFUNCTYPE instance and None (NULL),
        # where the CFUNCTYPE type itself would refuse None.
        return ctypes.c_void_p
    if spelling.endswith("*"):
        base = spelling[:-1]
        if base in _abi_types.HANDLE_TYPES:
            return ctypes.c_void_p  # an opaque handle: passed and stored as its address
        return ctypes.POINTER(ctype(base))
    raise TypeError(f"_abi.py uses a C type _lib.py cannot map: {spelling!r}")


def _callback_param(spelling):
    # A struct pointer reaches a Python callback as its address (the struct may still be incomplete here).
    if spelling.endswith("*") and spelling[:-1] in STRUCTS:
        return ctypes.c_void_p
    return ctype(spelling)


def _field_ctype(spelling):
    """A struct field's ctypes type: as ctype(), except that a function pointer field is its CFUNCTYPE
    (so a callback object can be stored in it)."""
    if spelling in _abi_types.CALLBACKS:
        return CALLBACKS[spelling]
    return ctype(spelling)


CALLBACKS = {name: ctypes.CFUNCTYPE(ctype(ret), *[_callback_param(a) for a in args])
             for name, (ret, args) in _abi_types.CALLBACKS.items()}
for _name, _fields in _abi_types.STRUCTS.items():  # in order: a struct used as a field comes before its users
    STRUCTS[_name]._fields_ = [(f, _field_ctype(t)) for f, t in _fields]


def _check_layouts():
    """The ctypes structs against the C compiler's layouts recorded in _abi.py (a generator or ctypes bug)."""
    for name, (size, align, offsets) in _abi_types.LAYOUTS.items():
        cls = STRUCTS[name]
        got = (ctypes.sizeof(cls), ctypes.alignment(cls), tuple(getattr(cls, f).offset for f, _ in _abi_types.STRUCTS[name]))
        if got != (size, align, tuple(offsets)):
            raise ImportError(f"cucore: ctypes lays out {name} as (size, align, offsets) {got}; "
                              f"the C compiler as {(size, align, tuple(offsets))}")


_check_layouts()


def _check_library_layouts(dll, path):
    """Every struct's size and field offsets as the loaded library reports them (cucore_abi_layout) against
    this binding's: a library built from other headers than this binding's is refused, not misread."""
    query = getattr(dll, "cucore_abi_layout", None)
    if query is None:
        return [f"{path} exports no cucore_abi_layout (a libcucore older than this binding)"]
    query.restype = ctypes.c_int
    query.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_size_t)]
    value = ctypes.c_size_t()
    out = ctypes.pointer(value)
    problems = []
    for name, (size, _, offsets) in _abi_types.LAYOUTS.items():
        fields = [f for f, _ in _abi_types.STRUCTS[name]]
        for field, want in [(None, size)] + list(zip(fields, offsets)):
            status = query(name.encode(), field.encode() if field else None, out)
            what = f"{name}.{field}" if field else f"sizeof({name})"
            if status != 0:
                problems.append(f"{what}: the library does not know it")
            elif value.value != want:
                problems.append(f"{what}: {value.value} in the library, {want} in this binding")
    return problems


# Every enum member and integer macro of the C headers by its C name (from _abi_constants.py). The modules read the values
# they name from here (EVENT_TIMING = _lib.C["CUCORE_EVENT_TIMING"]), so no value of the header is written twice.
C = {member: value for members in _abi_constants.ENUMS.values() for member, value in members}
C.update(_abi_constants.CONSTANTS)


def c_names(c_enum, prefix, skip=()):
    """{name: value} of the members of the C enum `c_enum` that start with `prefix`, named in lower case without
    it, in the header's order; FORCE_INT32 and the names in `skip` are left out. The tables of the names the
    API takes as strings ("write_discard", "cubin", ...)."""
    out = {}
    for member, value in _abi_constants.ENUMS[c_enum]:
        name = member[len(prefix):].lower()
        if member.startswith(prefix) and not member.endswith("FORCE_INT32") and name not in skip:
            out[name] = value
    return out


StreamOptionsC = STRUCTS["cucore_stream_options_t"]
EventOptionsC = STRUCTS["cucore_event_options_t"]
UuidC = STRUCTS["cucore_uuid_t"]
DevicePropertiesC = STRUCTS["cucore_device_properties_t"]
DeviceMemoryResourceOptionsC = STRUCTS["cucore_device_memory_resource_options_t"]
ReleaseFn = CALLBACKS["cucore_release_fn"]
HostFn = CALLBACKS["cucore_host_fn"]
ReleaseErrorFn = CALLBACKS["cucore_release_error_fn"]

# ---------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------

_lock = threading.RLock()
_dll = None
_path = None
_functions: Dict[str, Any] = {}  # C name -> ctypes function with argtypes (or a raiser for symbols the library lacks)
_unchecked: Dict[str, Any] = {}  # C name -> ctypes function without argtypes (or the same raiser)
_namespaces: List[Any] = []  # (module globals, {global name: C name}, table) registered by bind*()


def _package_dirs():
    """The package's directories: its own, then any other of its __path__ (an editable install of
    scikit-build-core keeps the sources in the tree and the built library in site-packages/cucore)."""
    dirs = [PACKAGE_DIR]
    package = sys.modules.get(__package__ or "")
    for entry in getattr(package, "__path__", None) or ():
        d = pathlib.Path(entry).resolve()
        if d not in dirs and d.is_dir():
            dirs.append(d)
    return dirs


def _candidates():
    """(description, loader argument) pairs in search order; description says why it was tried."""
    out = []
    env = os.environ.get("CUCORE_LIBRARY")
    if env:
        out.append(("CUCORE_LIBRARY", env))
    for directory in _package_dirs():
        local = sorted(directory.glob("libcucore.so*"), key=lambda p: (len(p.name), p.name))
        local += sorted(directory.glob("libcucore*.dylib")) + sorted(directory.glob("cucore*.dll"))
        for p in local:
            out.append(("package copy", str(p)))
    repo = PACKAGE_DIR.parents[2] if len(PACKAGE_DIR.parents) > 2 else None
    if repo is not None and (repo / "include" / "cucore.h").is_file():
        out.append(("build tree", str(repo / "build" / "default" / "lib" / "libcucore.so")))
    for name in SYSTEM_NAMES:
        out.append(("system loader", name))
    return out, env


def _search():
    """Load the first candidate that loads. Returns (dll, path, report lines)."""
    cands, env = _candidates()
    report = []
    if not env:
        report.append("CUCORE_LIBRARY: not set")
    if not any(d == "package copy" for d, _ in cands):
        report.append("package copy: no libcucore.so* in " + ", ".join(str(d) for d in _package_dirs()))
    if not any(d == "build tree" for d, _ in cands):
        report.append("build tree: not running from a repository checkout")
    for desc, arg in cands:
        if desc in ("CUCORE_LIBRARY", "package copy", "build tree") and not os.path.exists(arg):
            report.append(f"{desc}: {arg} does not exist")
            if desc == "CUCORE_LIBRARY":
                break
            continue
        try:
            dll = ctypes.CDLL(arg)
        except OSError as e:
            report.append(f"{desc}: {arg}: {e}")
            if desc == "CUCORE_LIBRARY":
                break  # an explicit choice that fails is an error, not a reason to load another copy
            continue
        if not hasattr(dll, "cucore_version"):
            report.append(f"{desc}: {arg} loaded but exports no cucore_version (not libcucore)")
            if desc == "CUCORE_LIBRARY":
                break
            continue
        return dll, arg, report
    raise LibraryNotFoundError(
        "libcucore could not be loaded. Searched:\n  - " + "\n  - ".join(report)
        + "\nBuild it (cmake --preset default && cmake --build --preset default --target cucore) and set "
          "CUCORE_LIBRARY to the path of libcucore.so, or install a wheel that bundles it.",
        searched=tuple(report))


def _missing(name, path):
    def raiser(*args):
        raise NotSupportedError(Status.ERROR_NOT_SUPPORTED,
                                f"{name} is not exported by {path} (a libcucore older than this binding?)")
    raiser.__name__ = name
    return raiser


def load():
    """Load libcucore now (idempotent) and return the path it was loaded from."""
    global _dll, _path
    if _dll is not None:
        return _path
    with _lock:
        if _dll is not None:
            return _path
        dll, path, _ = _search()
        dll.cucore_version.restype = ctypes.c_uint32
        major = dll.cucore_version() // 10000
        if major != ABI_VERSION_MAJOR:
            raise LibraryNotFoundError(
                f"{path} has ABI major version {major}; this binding needs {ABI_VERSION_MAJOR}",
                searched=(path,))
        problems = _check_library_layouts(dll, path)
        if problems:
            raise LibraryNotFoundError(
                f"{path} was built from other C headers than this binding (struct layouts differ):\n  - "
                + "\n  - ".join(problems[:20]), searched=(path,))
        functions, unchecked = {}, {}
        for name, (ret, args) in _abi.ABI.items():
            try:
                fn = getattr(dll, name)
            except AttributeError:
                functions[name] = unchecked[name] = _missing(name, path)
                continue
            restype = ctype(ret)
            fn.restype = restype
            fn.argtypes = [ctype(a) for a in args]
            functions[name] = fn
            fast = dll[name]  # a second, distinct function object for the same symbol
            fast.restype = restype  # argtypes stay None: arguments are passed as they are
            unchecked[name] = fast
        _functions.update(functions)
        _unchecked.update(unchecked)
        tables = {"typed": functions, "unchecked": unchecked}
        for ns, names, table in _namespaces:
            for key, name in names.items():
                ns[key] = tables[table][name]
        for ns in {id(ns): ns for ns, _, _ in _namespaces}.values():
            _rebind_class_stubs(ns)
        _path = path
        _dll = dll  # last: other threads take the fast path only once everything is bound
        return path


def is_loaded():
    """Whether libcucore has been loaded (importing the package does not load it; the first call does)."""
    return _dll is not None


def path():
    """The path (or loader name) libcucore was loaded from; loads it if needed."""
    return load()


def function(name):
    """The ctypes function for the C function `name` (for tests and advanced use); loads the library."""
    load()
    return _functions[name]


def unchecked_function(name):
    """The unchecked (argtypes-less) ctypes function for `name` (for tests); loads the library."""
    load()
    return _unchecked[name]


def unchecked_name(name):
    """The global name bind_unchecked() gives the C function `name`: "cucore_event_record" ->
    "_fast_event_record"."""
    return "_fast_" + name[len("cucore_"):]


def bind(namespace, *names):
    """Return, for each C function name, what a module should call it through, to be assigned to
    `_<name>` in that module (`namespace` is its globals()): a stub until the library loads, which
    loading then replaces in `namespace` by the ctypes function itself (with argtypes)."""
    return _bind(namespace, names, "typed", lambda name: "_" + name)


def bind_unchecked(namespace, *names):
    """As bind(), for the unchecked functions (no argtypes; see the module docstring), to be assigned to
    `_fast_<name without "cucore_">` in that module."""
    return _bind(namespace, names, "unchecked", unchecked_name)


def _bind(namespace, names, table, key_of):
    for name in names:
        if name not in _abi.ABI:
            raise KeyError(f"{name} is not in _abi.ABI")
    keys = {key_of(name): name for name in names}
    with _lock:
        _namespaces.append((namespace, keys, table))
        if _dll is not None:
            loaded = _functions if table == "typed" else _unchecked
            return tuple(loaded[name] for name in names)
        return tuple(_stub(namespace, key_of(name)) for name in names)


def _stub(namespace, key):
    def stub(*args):
        load()
        return namespace[key](*args)
    stub.__name__ = key
    stub.__qualname__ = key
    stub._cucore_stub_key = key
    return stub


def _rebind_class_stubs(namespace):
    """Classes keep C functions as staticmethods (`_release = staticmethod(_fast_event_release)`),
    which captured the stub: point them at the loaded function, so no call pays the stub's detour."""
    for obj in list(namespace.values()):
        # A class of this module (cucore/__init__.py renames the public ones' __module__ to "cucore" and
        # keeps the defining module in _cucore_module).
        if not isinstance(obj, type) or vars(obj).get("_cucore_module", obj.__module__) != namespace.get("__name__"):
            continue
        for attr, value in list(vars(obj).items()):
            if isinstance(value, staticmethod):
                key = getattr(value.__func__, "_cucore_stub_key", None)
                if key is not None and key in namespace:
                    setattr(obj, attr, staticmethod(namespace[key]))


# ---------------------------------------------------------------------------------------------
# Names handed down the layers
# ---------------------------------------------------------------------------------------------

def hand_down(to, **names):
    """Set `names` in the module(s) `to` (a module name relative to the package, or a tuple of them), which
    are below the calling module in the layer order and declare each of these names at their top (as None).

    The package's modules import each other in one direction only (bindings/python/README.md, "Layers"): a
    module imports only modules below it, and only at its top. Where a method needs a class or a function of
    a module above its own (Device.create_stream makes a Stream, Buffer.__dlpack__ is dlpack.py's work), the
    module above hands it down, as the last thing it does when imported; cucore/__init__.py imports every
    module, so every name is in place before any call. The method reads it as a module global, as it reads
    its C functions: no import inside a function, nothing extra on hot paths. tests/python/test_layers.py
    checks the layer order and lists every name handed down."""
    for target in (to,) if isinstance(to, str) else to:
        namespace = vars(importlib.import_module(f"{__package__}.{target}"))
        for name, value in names.items():
            if name not in namespace:
                raise ImportError(f"cucore.{target} declares no {name!r} to be handed down to it")
            namespace[name] = value


# ---------------------------------------------------------------------------------------------
# Out-parameters for unchecked calls
# ---------------------------------------------------------------------------------------------

def outs(ctype):
    """A free list of (value, byref(value)) pairs of `ctype` for out-parameters of unchecked calls:

        try:
            out, ref = pair = free.pop()
        except IndexError:
            out, ref = pair = new_out(ctype)
        st = _fast_x(handle, ref)
        value = out.value
        free.append(pair)

    A pair belongs to one call at a time (list.pop/append are atomic), so threads (ctypes releases the
    GIL during the call) and re-entrant calls (signal handlers, finalizers) never share one; reusing
    pairs saves creating a ctypes object and a byref per call."""
    return _OUTS.setdefault(ctype, [])


def new_out(ctype):
    """A new (value, byref(value)) out-parameter pair of `ctype`, for when the free list of outs() is empty."""
    value = ctype()
    return value, ctypes.byref(value)


# The form in which the wrappers keep their libcucore handle (`_h`): c_void_p.from_param(address) gives
# a ctypes argument object (a 'P' cparam) that ctypes copies into a call as it is, where a c_void_p
# instance costs a temporary argument object per call (~15 ns); typed (argtypes c_void_p) calls take it
# too. Made once per wrapper from the out-parameter's value.
handle_arg = ctypes.c_void_p.from_param


_OUTS: Dict[Any, Any] = {}
