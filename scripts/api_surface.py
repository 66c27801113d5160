#!/usr/bin/env python3
"""The public Python API of cuda.core, described as data, and compared with cucore's.

A surface is a JSON-able dict: for each public module (`cuda.core`, `cuda.core.utils`, ...), each public name
with its kind (module, class, enum, exception, function, data), and for classes each public member with its kind
(method, classmethod, staticmethod, property, data) and, for callables, the parameters (name, kind, default) and
return annotation. cucore must offer a superset: the same modules under `cucore`, the same names, kinds,
parameters (name, position, keyword-only or not, default; extra parameters only after them and with defaults),
enum members and values, and exception classes. Deliberate departures are listed, with reasons, in
docs/moving_from_cuda_core.md; `compare` takes them as a set of dotted names.

    scripts/api_surface.py snapshot OUT.json     # describe the importable cuda.core (run where it is installed)
    scripts/api_surface.py compare [SNAPSHOT]    # compare cucore with cuda.core (live if importable, else SNAPSHOT)
"""
from __future__ import annotations

import ast
import dataclasses
import enum
import importlib
import importlib.util
import inspect
import json
import re
import sys
import types
import typing
from pathlib import Path

REFERENCE_PACKAGE = "cuda.core"
MODULES = ("", ".utils", ".typing", ".graph", ".texture", ".system", ".system.typing", ".system.exceptions",
           ".checkpoint")
# Protocol methods a user calls through syntax or another library; other dunders are implementation.
PROTOCOL_DUNDERS = frozenset({
    "__cuda_stream__", "__dlpack__", "__dlpack_device__", "__cuda_array_interface__", "__array_interface__",
    "__enter__", "__exit__", "__sub__", "__int__", "__index__", "__getitem__", "__setitem__",
    "__delitem__", "__len__", "__iter__", "__contains__", "__call__", "__bool__", "__buffer__", "__fspath__",
})
# Member kinds a user cannot tell apart by using them: `obj.x` reads a field or a property alike, and
# `Cls.f(...)` calls a static or a class method alike.
SAME_USE = ({"data", "property"}, {"staticmethod", "classmethod"})
EXCLUSIONS_DOC = Path(__file__).resolve().parent.parent / "docs" / "moving_from_cuda_core.md"


def _parameters(func) -> list | None:
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return None
    params = []
    for p in sig.parameters.values():
        entry = {"name": p.name, "kind": p.kind.name}
        if p.default is not inspect.Parameter.empty:
            entry["default"] = _default_repr(p.default)
        params.append(entry)
    return params


def _default_repr(value) -> str:
    if isinstance(value, enum.Enum):
        return repr(value.value)
    if isinstance(value, (int, float, str, bool, bytes, type(None), tuple, frozenset)):
        return repr(value)
    return "<object>"


def _only_varargs(params) -> bool:
    return params is not None and all(p["kind"] in ("VAR_POSITIONAL", "VAR_KEYWORD") for p in params)


def _constructor(cls) -> list | None:
    """The parameters of `cls(...)`, or None where nothing says them (a constructor inherited from object, or a
    (*args, **kwargs) that only raises "cannot be instantiated directly")."""
    if not any("__init__" in vars(k) or "__new__" in vars(k) for k in cls.__mro__ if k is not object):
        return None
    params = _parameters(cls)
    if params is None or _only_varargs(params):
        # A __new__ or __init__ further down the class, or (Cython classes) the signature the first line of the
        # class docstring embeds: "Name(a: int, int b: int = 0) -> None", C types before some names.
        for klass in cls.__mro__[:-1]:
            for method in ("__new__", "__init__"):
                if method in vars(klass):
                    found = _parameters(vars(klass)[method])
                    if found and not _only_varargs(found[1:]) and found[0]["name"] in ("cls", "self"):
                        return found[1:]
        return _stub_constructor(cls)
    return params


def _stub_constructor(cls) -> list | None:
    """The __init__ parameters a compiled module's .pyi stub beside it declares for `cls` (Cython classes)."""
    try:
        origin = importlib.util.find_spec(cls.__module__).origin
    except (ImportError, AttributeError, ValueError):
        return None
    stub = Path(origin).with_name(Path(origin).name.split(".")[0] + ".pyi") if origin else None
    if stub is None or not stub.is_file():
        return None
    for node in ast.walk(ast.parse(stub.read_text())):
        if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    a = item.args
                    positional = a.posonlyargs + a.args
                    out = [{"name": x.arg, "kind": "POSITIONAL_ONLY" if x in a.posonlyargs else "POSITIONAL_OR_KEYWORD"}
                           for x in positional]
                    for entry, default in zip(out[len(out) - len(a.defaults):], a.defaults):
                        entry["default"] = ast.unparse(default)
                    if a.vararg:
                        out.append({"name": a.vararg.arg, "kind": "VAR_POSITIONAL"})
                    for x, d in zip(a.kwonlyargs, a.kw_defaults):
                        out.append({"name": x.arg, "kind": "KEYWORD_ONLY", **({"default": ast.unparse(d)} if d else {})})
                    if a.kwarg:
                        out.append({"name": a.kwarg.arg, "kind": "VAR_KEYWORD"})
                    out = out[1:]  # self
                    return None if _only_varargs(out) else out
    return None


def _member_kind(cls, name) -> tuple[str, object]:
    for klass in cls.__mro__:
        if name in vars(klass):
            raw = vars(klass)[name]
            break
    else:
        return "data", None
    if isinstance(raw, classmethod) or type(raw).__name__ == "classmethod_descriptor":
        return "classmethod", getattr(cls, name)
    if isinstance(raw, staticmethod):
        return "staticmethod", getattr(cls, name)
    if isinstance(raw, property) or inspect.isdatadescriptor(raw) or inspect.isgetsetdescriptor(raw):
        return "property", raw
    if callable(raw):
        return "method", raw
    return "data", raw


def _describe_class(cls) -> dict:
    if issubclass(cls, enum.Enum):
        return {"kind": "enum", "members": {m.name: repr(m.value) for m in cls}}
    if issubclass(cls, BaseException):
        return {"kind": "exception", "bases": [b.__name__ for b in cls.__mro__[1:] if b is not object]}
    members = {}
    # What a class inherits from a builtin (int's bit_length, is_integer...) is Python's, not the package's API.
    names = {n for klass in cls.__mro__ if klass.__module__ != "builtins" for n in vars(klass)}
    for name in sorted(names):
        if name.startswith("_") and name not in PROTOCOL_DUNDERS:
            continue
        kind, raw = _member_kind(cls, name)
        entry = {"kind": kind}
        if kind == "property":
            # Only a Python property says whether it can be set (every C-level getset descriptor has __set__).
            entry["settable"] = bool(getattr(raw, "fset", None))
        elif kind in ("method", "classmethod", "staticmethod"):
            entry["parameters"] = _parameters(raw)
        members[name] = entry
    if dataclasses.is_dataclass(cls):  # fields with a default_factory are no class attributes
        for f in dataclasses.fields(cls):
            members.setdefault(f.name, {"kind": "data"})
    init = _constructor(cls)
    return {"kind": "class", "constructor": init, "members": members}


def describe(package: str, everything_public: bool = False) -> dict:
    """The public surface of `package` (the reference's module layout, under `package`'s name): the names of
    each module's `__all__`, or with `everything_public` also every other public attribute (cucore keeps names
    that need the driver, such as LEGACY_DEFAULT_STREAM, out of `__all__` so that `import *` works anywhere)."""
    surface = {}
    for suffix in MODULES:
        try:
            module = importlib.import_module(package + suffix)
        except ImportError:
            continue
        public = [n for n in dir(module) if not n.startswith("_")]
        names = getattr(module, "__all__", None) or public
        if everything_public:
            names = sorted(set(names) | set(public))
        entries = {}
        for name in names:
            try:
                obj = getattr(module, name)
            except Exception:  # noqa: BLE001  (an attribute that needs the driver still exists)
                entries[name] = {"kind": "data"}
                continue
            if typing.get_origin(obj) is not None or isinstance(obj, types.UnionType):
                entries[name] = {"kind": "data"}  # a type alias (Literal[...], Sequence[...], X | None)
            elif inspect.ismodule(obj):
                entries[name] = {"kind": "module"}
            elif inspect.isclass(obj):
                entries[name] = _describe_class(obj)
            elif callable(obj) and not hasattr(obj, "__cuda_stream__"):
                entries[name] = {"kind": "function", "parameters": _parameters(obj)}
            else:
                entries[name] = {"kind": "data"}
        surface[suffix or "."] = entries
    return surface


def _compare_parameters(where: str, ref: list | None, ours: list | None, gaps: list) -> None:
    if ref is None or ours is None:
        return
    ref = [p for p in ref if p["name"] != "self"]
    ours = [p for p in ours if p["name"] != "self"]
    ours_by_name = {p["name"]: (i, p) for i, p in enumerate(ours)}
    for i, p in enumerate(ref):
        if p["kind"] in ("VAR_POSITIONAL", "VAR_KEYWORD"):
            if not any(q["kind"] == p["kind"] for q in ours):
                gaps.append(f"{where}: no {'*' if p['kind'] == 'VAR_POSITIONAL' else '**'}{p['name']}")
            continue
        if p["name"] not in ours_by_name:
            if p["kind"] != "KEYWORD_ONLY" and i < len(ours) and ours[i]["kind"] == "VAR_POSITIONAL":
                continue
            gaps.append(f"{where}: no parameter {p['name']!r}")
            continue
        j, q = ours_by_name[p["name"]]
        if p["kind"] != "KEYWORD_ONLY" and j != i:
            gaps.append(f"{where}: parameter {p['name']!r} is at position {j}, cuda.core's at {i}")
        if p["kind"] != q["kind"] and not (p["kind"] == "POSITIONAL_ONLY" and q["kind"] == "POSITIONAL_OR_KEYWORD"):
            gaps.append(f"{where}: parameter {p['name']!r} is {q['kind']}, cuda.core's is {p['kind']}")
        if "default" in p and "default" not in q:
            gaps.append(f"{where}: parameter {p['name']!r} has no default, cuda.core's is {p['default']}")
        elif "default" in p and p["default"] != q["default"] and "<object>" not in (p["default"], q["default"]):
            gaps.append(f"{where}: parameter {p['name']!r} defaults to {q['default']}, cuda.core's to {p['default']}")
    ref_names = {p["name"] for p in ref}
    for q in ours:
        if q["name"] not in ref_names and q["kind"] in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY") \
                and "default" not in q:
            gaps.append(f"{where}: extra parameter {q['name']!r} without a default")


def compare(reference: dict, ours: dict, exclusions=frozenset()) -> list[str]:
    """Every way `ours` falls short of `reference`, as lines `cuda.core.Name.member: what`; names (or their
    prefixes) in `exclusions` are skipped."""
    gaps = []

    def excluded(dotted):
        return any(dotted == e or dotted.startswith(e + ".") or dotted.startswith(e + ":") for e in exclusions)

    for module, entries in reference.items():
        prefix = REFERENCE_PACKAGE + ("" if module == "." else module)
        if module not in ours:
            if not excluded(prefix):
                gaps.append(f"{prefix}: no module cucore{'' if module == '.' else module}")
            continue
        for name, ref in entries.items():
            where = f"{prefix}.{name}"
            if excluded(where):
                continue
            mine = ours[module].get(name)
            if mine is None:
                gaps.append(f"{where}: missing")
                continue
            if ref["kind"] != mine["kind"]:
                gaps.append(f"{where}: is a {mine['kind']}, cuda.core's is a {ref['kind']}")
                continue
            if ref["kind"] == "function":
                _compare_parameters(where, ref["parameters"], mine["parameters"], gaps)
            elif ref["kind"] == "enum":
                for member, value in ref["members"].items():
                    if excluded(f"{where}.{member}"):
                        continue
                    if member not in mine["members"]:
                        gaps.append(f"{where}.{member}: missing")
                    elif mine["members"][member] != value:
                        gaps.append(f"{where}.{member}: value {mine['members'][member]}, cuda.core's {value}")
            elif ref["kind"] == "class":
                if ref.get("constructor") is not None and not excluded(f"{where}()"):
                    _compare_parameters(f"{where}()", ref["constructor"], mine.get("constructor"), gaps)
                for member, rm in ref["members"].items():
                    mwhere = f"{where}.{member}"
                    if excluded(mwhere):
                        continue
                    mm = mine["members"].get(member)
                    if mm is None:
                        gaps.append(f"{mwhere}: missing")
                    elif rm["kind"] != mm["kind"] and {rm["kind"], mm["kind"]} not in SAME_USE:
                        gaps.append(f"{mwhere}: is a {mm['kind']}, cuda.core's is a {rm['kind']}")
                    elif rm["kind"] == "property" and rm.get("settable") and not mm.get("settable"):
                        gaps.append(f"{mwhere}: read-only, cuda.core's can be set")
                    elif "parameters" in rm and member not in PROTOCOL_DUNDERS:
                        _compare_parameters(mwhere, rm["parameters"], mm.get("parameters"), gaps)
    return gaps


def documented_exclusions(doc: Path = EXCLUSIONS_DOC) -> dict[str, str]:
    """The deliberate exclusions: rows `| `cuda.core.X.y` | reason |` of the doc's exclusions table."""
    rows = {}
    for line in doc.read_text().splitlines():
        m = re.match(r"\|\s*`(cuda\.core[^`]*)`\s*\|\s*(.+?)\s*\|\s*$", line)
        if m:
            rows[m.group(1)] = m.group(2)
    return rows


def reference_surface(snapshot: Path | None) -> tuple[dict, str]:
    """cuda.core's surface: described live when it imports, else read from `snapshot`."""
    try:
        importlib.import_module(REFERENCE_PACKAGE)
    except Exception:  # noqa: BLE001  (not installed, or its bindings cannot load here)
        if snapshot is None:
            raise
        return json.loads(snapshot.read_text())["surface"], f"snapshot {snapshot.name}"
    return describe(REFERENCE_PACKAGE), "live cuda.core " + importlib.import_module(REFERENCE_PACKAGE).__version__


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "snapshot":
        core = importlib.import_module(REFERENCE_PACKAGE)
        bindings = importlib.import_module("cuda.bindings")
        data = {"generated_by": "scripts/api_surface.py snapshot", "cuda_core_version": core.__version__,
                "cuda_bindings_version": bindings.__version__, "python": sys.version.split()[0],
                "surface": describe(REFERENCE_PACKAGE)}
        Path(argv[1]).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        return 0
    if argv and argv[0] == "compare":
        snapshot = Path(argv[1]) if len(argv) > 1 else None
        reference, source = reference_surface(snapshot)
        gaps = compare(reference, describe("cucore", everything_public=True), frozenset(documented_exclusions()))
        print("\n".join(gaps))
        print(f"{len(gaps)} gaps against {source}", file=sys.stderr)
        return 1 if gaps else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
