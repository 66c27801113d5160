#!/usr/bin/env python3
"""Generate every mechanical layer of libcucore from its C headers.

The C headers (include/cucore/*.h) are the one hand-written declaration of the ABI. This script reads them
with a real C parser (libclang, which scripts/setup.sh installs into build/venv: run it as
`build/venv/bin/python scripts/gen_bindings.py`) and measures their
structs with the C compiler, then writes:

  bindings/python/cucore/_abi.py              the Python raw layer: its functions
  bindings/python/cucore/_abi_types.py        its handle types, structs (with their layouts) and callbacks
  bindings/python/cucore/_abi_constants.py    and its enums and integer macros
  bindings/python/cucore/device_attributes.py the DeviceAttribute IntEnum
  bindings/rust/cucore-sys/src/*.rs           the Rust raw crate: one module per header, its lib.rs and
                                              layout tests
  bindings/rust/cucore/src/device_attributes.rs  DeviceAttribute's associated constants and name table
  bindings/rust/cucore/src/object_type.rs     ObjectType, one variant per handle type
  src/capi/handles.cpp                        every handle type's retain and release functions
  src/capi/handle_types.hpp                   CoreOf<>: the core class behind each C handle type
  src/capi/struct_fields.hpp                  each versioned struct's fields (read_options' struct_size check)
  src/capi/abi_layout.cpp                     cucore_abi_layout(): the struct layouts the library was built
                                              with, for the bindings' checks
  src/core/object_types.inc                   each object type's name
  include/cucore/handle_traits.hpp            the C++ façade's HandleTraits<> for each handle type

Every generated file says so at its top. The list of handle types is the header's: each
`typedef struct cucore_<noun> cucore_<noun>_t;` of an incomplete struct, with its CUCORE_OBJECT_<NOUN>
value and its cucore_<noun>_retain/_release declarations.

Usage:
  scripts/gen_bindings.py           regenerate (writes only files whose content changes)
  scripts/gen_bindings.py --check   exit 1, listing them, if any generated file is stale (CI)
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import pathlib
import re
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional, Tuple

ROOT = pathlib.Path(__file__).resolve().parent.parent
INCLUDE = ROOT / "include"
HEADERS_DIR = INCLUDE / "cucore"
SELF = "scripts/gen_bindings.py"

# Fixed-width and size types, by the name the headers use (the generated code keeps the name).
STDINT = {
    "int8_t": ("signed char", 1), "uint8_t": ("unsigned char", 1),
    "int16_t": ("short", 2), "uint16_t": ("unsigned short", 2),
    "int32_t": ("int", 4), "uint32_t": ("unsigned int", 4),
    "int64_t": ("long long", 8), "uint64_t": ("unsigned long long", 8),
    "size_t": ("unsigned long", 8), "uintptr_t": ("unsigned long", 8),
}
# Builtin C types the ABI may use, by clang's type kind name.
BUILTINS = {
    "VOID": "void", "INT": "int", "UINT": "unsigned int", "CHAR_S": "char", "SCHAR": "signed char",
    "UCHAR": "unsigned char", "FLOAT": "float", "DOUBLE": "double", "SHORT": "short",
    "USHORT": "unsigned short", "LONG": "long", "ULONG": "unsigned long", "LONGLONG": "long long",
    "ULONGLONG": "unsigned long long", "BOOL": "_Bool",
}


def die(message: str) -> None:
    print(f"gen_bindings: {message}", file=sys.stderr)
    sys.exit(2)


# ---------------------------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class CType:
    """A C type of the ABI. kind: prim (int, uint32_t...), enum, struct, handle, callback (a function-pointer
    typedef), ptr, array, fnptr (an unnamed function pointer, in struct fields)."""
    kind: str
    name: str = ""                      # prim, enum, struct, handle, callback
    const: bool = False                 # ptr: the pointee is const
    target: Optional["CType"] = None    # ptr, array
    count: int = 0                      # array
    ret: Optional["CType"] = None       # fnptr
    params: Tuple[Tuple[str, "CType"], ...] = ()  # fnptr


@dataclasses.dataclass
class Function:
    name: str
    header: str
    ret: CType
    params: List[Tuple[str, CType]]
    doc: str


@dataclasses.dataclass
class Field:
    name: str
    type: CType
    doc: str
    offset: int = -1


@dataclasses.dataclass
class Struct:
    name: str
    header: str
    fields: List[Field]
    doc: str
    size: int = -1
    align: int = -1
    init_macro: Optional[str] = None
    init: Dict[str, int] = dataclasses.field(default_factory=dict)  # leaf path -> value


@dataclasses.dataclass
class EnumMember:
    name: str
    value: int
    doc: str


@dataclasses.dataclass
class Enum:
    name: str
    header: str
    members: List[EnumMember]
    doc: str


@dataclasses.dataclass
class Callback:
    name: str
    header: str
    ret: CType
    params: List[Tuple[str, CType]]
    doc: str


@dataclasses.dataclass
class Constant:
    name: str
    header: str
    value: int
    ctype: str  # the C type of the macro's expression: int, unsigned int, long, unsigned long...
    doc: str
    array_length: bool = False  # used as an array length somewhere in the ABI


@dataclasses.dataclass
class Handle:
    noun: str          # "memory_resource"
    c_type: str        # "cucore_memory_resource_t"
    object_type: str   # "CUCORE_OBJECT_MEMORY_RESOURCE"
    object_value: int
    argument: str      # the retain/release parameter's name, for messages
    header: str        # where its retain/release are declared


@dataclasses.dataclass
class Model:
    headers: List[str]
    functions: List[Function]
    structs: List[Struct]
    enums: List[Enum]
    callbacks: List[Callback]
    constants: List[Constant]
    handles: List[Handle]
    handle_header: Dict[str, str]  # handle c_type -> header of its typedef (common)
    object_types: Enum

    def struct(self, name: str) -> Struct:
        return next(s for s in self.structs if s.name == name)


# ---------------------------------------------------------------------------------------------
# Reading the headers (libclang)
# ---------------------------------------------------------------------------------------------

_STUB_HEADERS = {
    "stdint.h": "\n".join(f"typedef {c} {n};" for n, (c, _) in STDINT.items() if n not in ("size_t",)) + "\n",
    "stddef.h": "typedef unsigned long size_t;\n#define NULL ((void *)0)\n",
}


def _comment_lines(lines: List[str]) -> str:
    """The text of a /* */ or // comment block, without its markers and leading stars."""
    text = "\n".join(lines).strip()
    text = re.sub(r"^/\*+ ?", "", text)
    text = re.sub(r"\s*\*+/$", "", text)
    out = []
    for line in text.split("\n"):
        line = re.sub(r"^\s*(\*(?!/)|//)\s?", "", line).rstrip()
        out.append(line)
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out)


class SourceDocs:
    """Comments next to declarations, read from the source text: the comment block that ends on the line
    just above a declaration, or a comment that follows it on its last line."""

    def __init__(self) -> None:
        self._files: Dict[str, List[str]] = {}

    def _lines(self, path: str) -> List[str]:
        if path not in self._files:
            self._files[path] = pathlib.Path(path).read_text().split("\n")
        return self._files[path]

    def before(self, path: str, line: int) -> str:
        lines = self._lines(path)
        i = line - 2  # 0-based index of the line above
        if i < 0:
            return ""
        if lines[i].rstrip().endswith("*/"):
            j = i
            while j >= 0 and "/*" not in lines[j]:
                j -= 1
            if j < 0 or lines[j].lstrip().startswith("#"):
                return ""
            block = lines[j:i + 1]
            block[0] = block[0][block[0].index("/*"):]
            if lines[j][:lines[j].index("/*")].strip():  # a trailing comment of the line above
                return ""
            return _comment_lines(block)
        if lines[i].lstrip().startswith("//"):
            j = i
            while j - 1 >= 0 and lines[j - 1].lstrip().startswith("//"):
                j -= 1
            return _comment_lines(lines[j:i + 1])
        return ""

    def after(self, path: str, line: int, column: int) -> str:
        """A comment after column `column` of line `line` (a field's or an enumerator's own comment)."""
        text = self._lines(path)[line - 1][column - 1:]
        m = re.search(r"/\*(.*?)\*/", text)
        if m:
            return _comment_lines(["/*" + m.group(1) + "*/"])
        m = re.search(r"//(.*)$", text)
        return m.group(1).strip() if m else ""


def _decay(t: CType) -> CType:
    """A parameter declared as an array is a pointer (C's adjustment)."""
    return CType("ptr", const=t.const, target=t.target) if t.kind == "array" else t


def _function_like(macro) -> bool:
    """#define F(x) ...: the name's token is followed at once (no space) by '('."""
    tokens = list(macro.get_tokens())
    return (len(tokens) > 1 and tokens[1].spelling == "("
            and tokens[1].extent.start.offset == tokens[0].extent.end.offset)


class Reader:
    def __init__(self) -> None:
        try:
            import clang.cindex as ci
        except ImportError:
            die("libclang's Python module is missing: run this script with the project's Python, "
                "build/venv/bin/python (scripts/setup.sh installs libclang==18.1.1 there)")
        self.ci = ci
        self.docs = SourceDocs()
        self.typedef_of_decl: Dict[str, str] = {}  # struct/enum declaration USR -> typedef name
        self.kinds: Dict[str, str] = {}            # typedef name -> enum/struct/handle/callback

    def parse(self) -> Model:
        ci = self.ci
        with tempfile.TemporaryDirectory() as stubs:
            for name, text in _STUB_HEADERS.items():
                pathlib.Path(stubs, name).write_text(text)
            index = ci.Index.create()
            tu = index.parse(str(INCLUDE / "cucore.h"),
                             args=["-x", "c", "-std=c11", f"-I{INCLUDE}", f"-isystem{stubs}", "-nostdinc"],
                             options=ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
                             | ci.TranslationUnit.PARSE_SKIP_FUNCTION_BODIES)
            errors = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
            if errors:
                die("the headers do not parse:\n  " + "\n  ".join(str(d) for d in errors))
            return self._model(tu)

    # -- helpers ---------------------------------------------------------------------------------

    @staticmethod
    def _header_of(cursor) -> Optional[str]:
        f = cursor.location.file
        if f is None:
            return None
        p = pathlib.Path(f.name).resolve()
        if p.parent != HEADERS_DIR.resolve():
            return None
        return p.stem

    def _doc(self, cursor) -> str:
        return self.docs.before(cursor.location.file.name, cursor.extent.start.line)

    def _trailing_doc(self, cursor) -> str:
        ext = cursor.extent
        return self.docs.after(ext.end.file.name, ext.end.line, ext.end.column)

    def ctype(self, t) -> CType:
        ci = self.ci
        K = ci.TypeKind
        if t.kind == K.ELABORATED:
            return self.ctype(t.get_named_type())
        if t.kind == K.TYPEDEF:
            name = t.get_typedef_name() or re.sub(r"\bconst\b", "", t.spelling).strip()
            if name in STDINT:
                return CType("prim", name)
            if name in self.kinds:
                return CType(self.kinds[name], name)
            return self.ctype(t.get_canonical())
        if t.kind in (K.RECORD, K.ENUM):
            usr = t.get_declaration().get_usr()
            if usr not in self.typedef_of_decl:
                die(f"type {t.spelling} has no typedef name (the ABI names every struct and enum by its typedef)")
            name = self.typedef_of_decl[usr]
            return CType(self.kinds[name], name)
        if t.kind == K.POINTER:
            pointee = t.get_pointee()
            if pointee.kind == K.FUNCTIONPROTO:
                return self._fnptr(pointee)
            return CType("ptr", const=pointee.is_const_qualified(), target=self.ctype(pointee))
        if t.kind in (K.CONSTANTARRAY,):
            return CType("array", const=t.element_type.is_const_qualified(), target=self.ctype(t.element_type),
                         count=t.element_count)
        if t.kind in (K.INCOMPLETEARRAY, K.DECAYED if hasattr(K, "DECAYED") else K.INVALID):
            return CType("ptr", const=t.element_type.is_const_qualified(), target=self.ctype(t.element_type))
        if t.kind.name in BUILTINS:
            return CType("prim", BUILTINS[t.kind.name])
        die(f"unsupported C type {t.spelling!r} ({t.kind})")
        raise AssertionError

    def _fnptr(self, proto) -> CType:
        params = tuple((f"arg{i}", self.ctype(a)) for i, a in enumerate(proto.argument_types()))
        return CType("fnptr", ret=self.ctype(proto.get_result()), params=params)

    # -- the model ---------------------------------------------------------------------------------

    def _model(self, tu) -> Model:
        ci = self.ci
        C = ci.CursorKind
        cursors = [c for c in tu.cursor.get_children() if self._header_of(c)]
        headers: List[str] = []
        for c in cursors:
            h = self._header_of(c)
            if h not in headers:
                headers.append(h)
        # First pass: the typedef name of every struct and enum, and what each typedef is.
        for c in cursors:
            if c.kind != C.TYPEDEF_DECL:
                continue
            under = c.underlying_typedef_type
            if under.kind == ci.TypeKind.ELABORATED:
                under = under.get_named_type()
            if under.kind == ci.TypeKind.RECORD:
                decl = under.get_declaration()
                self.typedef_of_decl[decl.get_usr()] = c.spelling
                complete = decl.get_definition() is not None
                self.kinds[c.spelling] = "struct" if complete else "handle"
            elif under.kind == ci.TypeKind.ENUM:
                self.typedef_of_decl[under.get_declaration().get_usr()] = c.spelling
                self.kinds[c.spelling] = "enum"
            elif under.kind == ci.TypeKind.POINTER and under.get_pointee().kind == ci.TypeKind.FUNCTIONPROTO:
                self.kinds[c.spelling] = "callback"
            else:
                die(f"typedef {c.spelling} ({under.spelling}) is of a kind the generator does not know")
        functions, structs, enums, callbacks = [], [], [], []
        macros = []
        handle_types: Dict[str, str] = {}
        for c in cursors:
            header = self._header_of(c)
            if c.kind == C.FUNCTION_DECL and c.spelling.startswith("cucore_"):
                params = [(a.spelling, _decay(self.ctype(a.type))) for a in c.get_arguments()]
                functions.append(Function(c.spelling, header, self.ctype(c.result_type), params, self._doc(c)))
            elif c.kind == C.TYPEDEF_DECL:
                kind = self.kinds[c.spelling]
                under = c.underlying_typedef_type
                if under.kind == ci.TypeKind.ELABORATED:
                    under = under.get_named_type()
                if kind == "handle":
                    handle_types[c.spelling] = header
                elif kind == "struct":
                    decl = under.get_declaration()
                    fields = [Field(f.spelling, self.ctype(f.type), self._field_doc(f))
                              for f in decl.get_children() if f.kind == C.FIELD_DECL]
                    doc = self._doc(decl) if decl.location.line < c.location.line else ""
                    structs.append(Struct(c.spelling, header, fields, doc or self._doc(c)))
                elif kind == "enum":
                    decl = under.get_declaration()
                    members = [EnumMember(m.spelling, m.enum_value, self._field_doc(m))
                               for m in decl.get_children() if m.kind == C.ENUM_CONSTANT_DECL]
                    too_wide = [m.name for m in members if not -2**31 <= m.value < 2**31]
                    if too_wide:
                        die(f"{c.spelling}: values outside int32 ({too_wide}); the ABI's enums are 32-bit ints")
                    doc = self._doc(decl) if decl.location.line < c.location.line else ""
                    enums.append(Enum(c.spelling, header, members, doc or self._doc(c)))
                else:
                    proto = under.get_pointee()
                    names = [a.spelling for a in c.get_children() if a.kind == C.PARM_DECL]
                    params = [(names[i] if i < len(names) and names[i] else f"arg{i}", self.ctype(a))
                              for i, a in enumerate(proto.argument_types())]
                    callbacks.append(Callback(c.spelling, header, self.ctype(proto.get_result()), params,
                                              self._doc(c)))
            elif c.kind == C.MACRO_DEFINITION:
                macros.append(c)
        object_types = next((e for e in enums if e.name == "cucore_object_type_t"), None)
        if object_types is None:
            die("include/cucore/common.h declares no cucore_object_type_t")
        constants = self._constants(macros)
        handles = self._handles(handle_types, functions, object_types)
        model = Model(headers, functions, structs, enums, callbacks, constants, handles, handle_types, object_types)
        self._link_inits(model, macros)
        return model

    def _field_doc(self, cursor) -> str:
        own = self._trailing_doc(cursor)
        return own or self._doc(cursor)

    def _constants(self, macros) -> List[Constant]:
        out = []
        for m in macros:
            name = m.spelling
            tokens = [t.spelling for t in m.get_tokens()][1:]
            if not tokens or name.endswith("_H") or name.endswith("_INIT"):
                continue
            if name in ("CUCORE_API", "CUCORE_EXTERN_C_BEGIN", "CUCORE_EXTERN_C_END"):
                continue
            if _function_like(m):
                continue  # e.g. CUCORE_OPTIMIZATION_LEVEL(n): the bindings spell their own helper
            out.append(Constant(name, self._header_of(m), 0, "", self._doc(m)))
        return out

    def _handles(self, handle_types: Dict[str, str], functions: List[Function], object_types: Enum) -> List[Handle]:
        by_name = {f.name: f for f in functions}
        values = {m.name: m.value for m in object_types.members}
        out = []
        for c_type in handle_types:
            noun = c_type[len("cucore_"):-len("_t")]
            object_type = "CUCORE_OBJECT_" + noun.upper()
            retain, release = by_name.get(f"cucore_{noun}_retain"), by_name.get(f"cucore_{noun}_release")
            problems = []
            if object_type not in values:
                problems.append(f"no {object_type} in cucore_object_type_t")
            for fn, verb in ((retain, "retain"), (release, "release")):
                if fn is None:
                    problems.append(f"no cucore_{noun}_{verb}")
                elif (len(fn.params) != 1 or fn.params[0][1] != CType("ptr", target=CType("handle", c_type))
                      or fn.ret != CType("enum", "cucore_status_t")):
                    problems.append(f"cucore_{noun}_{verb} is not cucore_status_t ({c_type} *)")
            if problems:
                die(f"handle type {c_type}: " + "; ".join(problems))
            if retain.params[0][0] != release.params[0][0]:
                die(f"cucore_{noun}_retain and _release name their parameter differently")
            out.append(Handle(noun, c_type, object_type, values[object_type], retain.params[0][0], retain.header))
        listed = {h.object_type for h in out}
        for m in object_types.members:
            if m.name not in listed and m.name not in ("CUCORE_OBJECT_ANY", "CUCORE_OBJECT_TYPE_COUNT",
                                                       "CUCORE_OBJECT_TYPE_FORCE_INT32"):
                die(f"{m.name} names no handle type (expected typedef struct cucore_<noun> cucore_<noun>_t)")
        return sorted(out, key=lambda h: h.object_value)

    def _link_inits(self, model: Model, macros) -> None:
        by_name = {s.name: s for s in model.structs}
        for m in macros:
            if not m.spelling.endswith("_INIT") or _function_like(m):
                continue
            struct = m.spelling[:-len("_INIT")].lower() + "_t"
            if struct not in by_name:
                die(f"{m.spelling} initialises no struct (expected a struct named {struct})")
            by_name[struct].init_macro = m.spelling


# ---------------------------------------------------------------------------------------------
# Measuring with the C compiler: sizes, offsets, INIT values, constants
# ---------------------------------------------------------------------------------------------

def _leaves(model: Model, t: CType, path: str) -> List[Tuple[str, CType]]:
    """The scalar leaves of a value of type t: ('a.b[2]', type)."""
    if t.kind == "struct":
        out = []
        for f in model.struct(t.name).fields:
            out += _leaves(model, f.type, f"{path}.{f.name}" if path else f.name)
        return out
    if t.kind == "array":
        out = []
        for i in range(t.count):
            out += _leaves(model, t.target, f"{path}[{i}]")
        return out
    return [(path, t)]


def measure(model: Model) -> None:
    cc = os.environ.get("CC", "cc")
    lines = ["#include <stddef.h>", "#include <stdint.h>", "#include <stdio.h>", '#include "cucore.h"',
             "#define TYPE_NAME(x) _Generic((x), int: \"int\", unsigned int: \"unsigned int\", long: \"long\", "
             "unsigned long: \"unsigned long\", long long: \"long long\", unsigned long long: "
             "\"unsigned long long\", default: \"other\")",
             "int main(void) {"]
    for c in model.constants:
        lines.append(f'    printf("C {c.name} %s %lld\\n", TYPE_NAME({c.name}), (long long)({c.name}));')
    for s in model.structs:
        lines.append(f'    printf("S {s.name} %zu %zu\\n", sizeof({s.name}), _Alignof({s.name}));')
        for f in s.fields:
            lines.append(f'    printf("F {s.name} {f.name} %zu\\n", offsetof({s.name}, {f.name}));')
        if s.init_macro:
            lines.append(f"    {{ {s.name} v = {s.init_macro};")
            for path, t in _leaves(model, CType("struct", s.name), ""):
                if t.kind in ("ptr", "fnptr", "callback"):
                    expr = f"(long long)(uintptr_t)v.{path}"
                else:
                    expr = f"(long long)v.{path}"
                lines.append(f'      printf("I {s.name} {path} %lld\\n", {expr});')
            lines.append("    }")
    lines += ["    return 0;", "}"]
    with tempfile.TemporaryDirectory() as d:
        src, exe = pathlib.Path(d, "measure.c"), pathlib.Path(d, "measure")
        src.write_text("\n".join(lines) + "\n")
        r = subprocess.run([cc, "-std=c11", "-Wall", "-Werror", f"-I{INCLUDE}", str(src), "-o", str(exe)],
                           capture_output=True, text=True)
        if r.returncode:
            die(f"measuring the structs with {cc} failed:\n{r.stderr}")
        out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    structs = {s.name: s for s in model.structs}
    constants = {c.name: c for c in model.constants}
    for line in out.splitlines():
        tag, rest = line.split(" ", 1)
        if tag == "C":
            name, rest = rest.split(" ", 1)
            ctype, value = rest.rsplit(" ", 1)
            constants[name].ctype, constants[name].value = ctype, int(value)
        elif tag == "S":
            name, size, align = rest.split()
            structs[name].size, structs[name].align = int(size), int(align)
        elif tag == "F":
            name, field, offset = rest.split()
            next(f for f in structs[name].fields if f.name == field).offset = int(offset)
        elif tag == "I":
            name, path, value = rest.split()
            structs[name].init[path] = int(value)
    bad = [c.name for c in model.constants if c.ctype in ("", "other")]
    if bad:
        die(f"macros that are not integer constants: {bad} (give them an integer value or an _INIT name)")
    # A constant used as an array length is a length in every language (usize in Rust).
    lengths = set()

    def visit(t: CType) -> None:
        if t.kind == "array":
            lengths.add(t.count)
            visit(t.target)
        elif t.kind == "ptr":
            visit(t.target)
    for s in model.structs:
        for f in s.fields:
            visit(f.type)
    for c in model.constants:
        c.array_length = c.name.endswith("_SIZE") and c.value in lengths or c.name.endswith("_DESCRIPTOR_SIZE")


# ---------------------------------------------------------------------------------------------
# Emitters
# ---------------------------------------------------------------------------------------------

def _file(lines: List[str]) -> str:
    """A generated file's text: its lines, without trailing blank lines, ending in one newline."""
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n"


def c_spelling(t: CType, owner: str = "") -> str:
    """The C spelling of _abi.py: const dropped, '*' attached, arrays as T[N]; an unnamed function pointer
    field is 'struct.field' (owner), listed among the callbacks."""
    if t.kind in ("prim", "enum", "struct", "handle", "callback"):
        return t.name
    if t.kind == "ptr":
        return c_spelling(t.target, owner) + "*"
    if t.kind == "array":
        return f"{c_spelling(t.target, owner)}[{t.count}]"
    if t.kind == "fnptr":
        return owner
    raise AssertionError(t)


def emit_python_abi_constants(model: Model) -> str:
    """The values of the C ABI (its enums and integer macros), apart from its shapes (_abi.py)."""
    out = [f'"""The enums and integer macros of the libcucore C ABI as pure data. GENERATED by {SELF} from',
           "include/cucore/*.h: do not edit. Keep it a literal: no imports, no computed values.",
           '"""', ""]
    out.append("# Enums (32-bit ints in the C ABI): name -> ((member, value), ...).")
    out.append("ENUMS = {")
    for e in model.enums:
        out.append(f"    {e.name!r}: (")
        for m in e.members:
            out.append(f"        ({m.name!r}, {m.value}),")
        out.append("    ),")
    out.append("}")
    out.append("ENUM_TYPES = (" + "".join(f"{e.name!r}, " for e in model.enums).rstrip() + ")")
    out.append("")
    out.append("# Integer macros: name -> value.")
    out.append("CONSTANTS = {")
    for c in model.constants:
        out.append(f"    {c.name!r}: {c.value},")
    out.append("}")
    out.append("")
    return _file(out)


def emit_python_abi_types(model: Model) -> str:
    """The types of the C ABI (handles, structs with their layouts and _INIT values, callbacks), apart from its
    functions (_abi.py) and values (_abi_constants.py)."""
    out = [f'"""The types of the libcucore C ABI as pure data. GENERATED by {SELF} from include/cucore/*.h: do not',
           "edit.",
           "",
           "Its handle types, structs and callbacks; its functions are in _abi.py, its enums and integer macros in",
           "_abi_constants.py. _lib.py turns the C type spellings below into ctypes types (const dropped, pointers as",
           "'T*', arrays as 'T[N]'); every struct carries the size, alignment and field offsets the C compiler gave it,",
           "which _lib.py compares with the ctypes layout and, once the library is loaded, with what the library",
           "reports (cucore_abi_layout). Keep it a literal: no imports, no computed values.",
           '"""', ""]
    out.append("# Handle types (opaque structs used through pointers): C type -> (noun, object type value).")
    out.append("HANDLE_TYPES = {")
    for h in model.handles:
        out.append(f"    {h.c_type!r}: ({h.noun!r}, {h.object_value}),")
    out.append("}")
    out.append("")
    out.append("# Structs: name -> ((field, C type), ...), in declaration order; a struct used as a field comes first.")
    out.append("STRUCTS = {")
    for s in _structs_in_dependency_order(model):
        out.append(f"    {s.name!r}: (")
        for f in s.fields:
            out.append(f"        ({f.name!r}, {c_spelling(f.type, s.name + '.' + f.name)!r}),")
        out.append("    ),")
    out.append("}")
    out.append("")
    out.append("# Struct layouts as the C compiler gives them: name -> (size, alignment, (offset of each field, ...)).")
    out.append("LAYOUTS = {")
    for s in model.structs:
        out.append(f"    {s.name!r}: ({s.size}, {s.align}, ({', '.join(str(f.offset) for f in s.fields)}{',' if len(s.fields) == 1 else ''})),")
    out.append("}")
    out.append("")
    out.append("# The non-zero values of each struct's _INIT macro but struct_size: name -> {field path: value}.")
    out.append("INITS = {")
    for s in model.structs:
        if s.init_macro:
            values = {p: v for p, v in s.init.items() if v and p != "struct_size"}
            out.append(f"    {s.name!r}: {values!r},")
    out.append("}")
    out.append("")
    out.append("# Function-pointer types: name -> (return type, (parameter type, ...)); an unnamed function pointer")
    out.append("# field of a struct is named 'struct.field'.")
    out.append("CALLBACKS = {")
    for cb in model.callbacks:
        out.append(f"    {cb.name!r}: ({c_spelling(cb.ret)!r}, ({''.join(repr(c_spelling(t)) + ', ' for _, t in cb.params)})),")
    for s in model.structs:
        for f in s.fields:
            if f.type.kind == "fnptr":
                params = "".join(repr(c_spelling(t)) + ", " for _, t in f.type.params)
                out.append(f"    {s.name + '.' + f.name!r}: ({c_spelling(f.type.ret)!r}, ({params})),")
    out.append("}")
    return _file(out)


def emit_python_abi(model: Model) -> str:
    """The functions of the C ABI; their types are in _abi_types.py."""
    out = [f'"""The functions of the libcucore C ABI as pure data. GENERATED by {SELF} from include/cucore/*.h: do',
           "not edit.",
           "",
           "Every exported function with the C spellings of its types (those of _abi_types.py); _lib.py binds each with",
           "ctypes. Keep it a literal: no imports, no computed values.",
           '"""', ""]
    out.append("# Every exported function: name -> (return type, (parameter type, ...)).")
    out.append("ABI = {")
    header = None
    for fn in model.functions:
        if fn.header != header:
            header = fn.header
            out.append(f"    # ---- include/cucore/{header}.h ----")
        params = "".join(repr(c_spelling(t)) + ", " for _, t in fn.params)
        out.append(f"    {fn.name!r}: ({c_spelling(fn.ret)!r}, ({params})),")
    out.append("}")
    return _file(out)


def _structs_in_dependency_order(model: Model) -> List[Struct]:
    done, order = set(), []

    def deps(t: CType) -> List[str]:
        if t.kind == "struct":
            return [t.name]
        if t.kind == "array":
            return deps(t.target)
        return []

    def visit(s: Struct) -> None:
        if s.name in done:
            return
        done.add(s.name)
        for f in s.fields:
            for d in deps(f.type):
                visit(model.struct(d))
        order.append(s)
    for s in model.structs:
        visit(s)
    return order


# ---- Python: DeviceAttribute ------------------------------------------------------------------

def emit_python_device_attributes(model: Model) -> str:
    enum = next(e for e in model.enums if e.name == "cucore_device_attribute_t")
    out = ['"""Device attribute identifiers: the values of include/cucore/device_attributes.h.',
           "",
           f"GENERATED by {SELF}; do not edit. The values equal the driver's CUdevice_attribute values.",
           "Query with Device.attribute(DeviceAttribute.X) or, cached, as Device.properties.x (the lower-case name).",
           '"""',
           "import enum",
           "",
           "",
           "class DeviceAttribute(enum.IntEnum):",
           '    """cucore_device_attribute_t (members with equal values are aliases, as in the header)."""',
           ""]
    for m in enum.members:
        short = m.name[len("CUCORE_DEVICE_ATTRIBUTE_"):]
        if short in ("UNSET", "FORCE_INT32"):
            continue
        if m.doc:
            out.append(f"    #: {' '.join(m.doc.split())}")
        out.append(f"    {short} = {m.value}")
    return _file(out)


# ---- Rust ---------------------------------------------------------------------------------------

RUST_KEYWORDS = set("""as break const continue crate else enum extern false fn for if impl in let loop match mod move
mut pub ref return self Self static struct super trait true type unsafe use where while async await dyn abstract
become box do final macro override priv typeof unsized virtual yield try""".split())

RUST_PRIMS = {
    "void": "c_void", "int": "c_int", "unsigned int": "c_uint", "char": "c_char", "signed char": "c_schar",
    "unsigned char": "c_uchar", "short": "c_short", "unsigned short": "c_ushort", "long": "c_long",
    "unsigned long": "c_ulong", "long long": "c_longlong", "unsigned long long": "c_ulonglong", "float": "f32",
    "double": "f64", "_Bool": "bool", "int8_t": "i8", "uint8_t": "u8", "int16_t": "i16", "uint16_t": "u16",
    "int32_t": "i32", "uint32_t": "u32", "int64_t": "i64", "uint64_t": "u64", "size_t": "usize",
    "uintptr_t": "usize",
}


def rust_ident(name: str) -> str:
    return name + "_" if name in RUST_KEYWORDS else name


def rust_type(t: CType) -> str:
    if t.kind == "prim":
        return RUST_PRIMS[t.name]
    if t.kind in ("enum", "struct", "handle", "callback"):
        return t.name
    if t.kind == "ptr":
        return ("*const " if t.const else "*mut ") + rust_type(t.target)
    if t.kind == "array":
        return f"[{rust_type(t.target)}; {t.count}]"
    if t.kind == "fnptr":
        params = ", ".join(f"{rust_ident(n)}: {rust_type(p)}" for n, p in t.params)
        ret = "" if t.ret == CType("prim", "void") else f" -> {rust_type(t.ret)}"
        return f'Option<unsafe extern "C" fn({params}){ret}>'
    raise AssertionError(t)


def rust_doc(text: str, indent: str = "") -> List[str]:
    if not text:
        return []
    out = []
    for line in text.split("\n"):
        # Markdown: brackets and angle brackets are text here (C++ templates, array sizes), URLs are links.
        line = line.replace("[", "\\[").replace("]", "\\]").replace("<", "\\<").replace(">", "\\>")
        line = re.sub(r"(https?://[^\s)]+)", lambda m: "<" + m.group(1).replace("\\", "") + ">", line)
        out.append(f"{indent}///{' ' + line if line else ''}".rstrip())
    return out


def _rust_value(model: Model, t: CType, value_of, path: str) -> str:
    """A Rust constant expression for a field's INIT value."""
    if t.kind == "struct":
        s = model.struct(t.name)
        inner = ", ".join(f"{rust_ident(f.name)}: {_rust_value(model, f.type, value_of, (path + '.' if path else '') + f.name)}"
                          for f in s.fields)
        return f"{t.name} {{ {inner} }}"
    if t.kind == "array":
        items = [_rust_value(model, t.target, value_of, f"{path}[{i}]") for i in range(t.count)]
        return f"[{items[0]}; {t.count}]" if len(set(items)) == 1 else "[" + ", ".join(items) + "]"
    v = value_of(path)
    if t.kind == "ptr":
        if v:
            die(f"a non-NULL pointer in an _INIT macro ({path})")
        return "ptr::null()" if t.const else "ptr::null_mut()"
    if t.kind in ("fnptr", "callback"):
        if v:
            die(f"a non-NULL function pointer in an _INIT macro ({path})")
        return "None"
    if path == "struct_size":
        return f"size_of::<{{S}}>() as {rust_type(t)}"
    if t.kind == "prim" and t.name in ("float", "double"):
        return f"{v}.0"
    return str(v)


def _rust_multiline(value: str, indent: int) -> str:
    """A struct literal 'T { a: 1, b: U { c: 2 } }' laid out one field per line (arrays stay on one line)."""
    out, depth, square, line, i = [], 0, 0, "", 0
    pad = lambda d: " " * (indent + 4 * d)
    while i < len(value):
        if square == 0 and value.startswith("{ ", i):
            depth += 1
            out.append(line + "{")
            line, i = pad(depth), i + 2
        elif square == 0 and value.startswith(" }", i):
            depth -= 1
            out.append(line + ",")
            line, i = pad(depth) + "}", i + 2
        elif square == 0 and depth and value.startswith(", ", i):
            out.append(line + ",")
            line, i = pad(depth), i + 2
        else:
            square += {"[": 1, "]": -1}.get(value[i], 0)
            line, i = line + value[i], i + 1
    out.append(line)
    return "\n".join(out)


def _rust_derives(model: Model, s: Struct) -> List[str]:
    flags = {"float": False, "fn": False}

    def visit(t: CType) -> None:
        if t.kind == "prim" and t.name in ("float", "double"):
            flags["float"] = True
        elif t.kind in ("fnptr", "callback"):
            flags["fn"] = True
        elif t.kind == "array":
            visit(t.target)
        elif t.kind == "struct":
            for f in model.struct(t.name).fields:
                visit(f.type)
    for f in s.fields:
        visit(f.type)
    derives = ["Clone", "Copy", "Debug"]
    if not flags["fn"]:
        derives.append("PartialEq")
        if not flags["float"]:
            derives += ["Eq", "Hash"]
    return derives


def _rust_const(model: Model, c: Constant) -> str:
    if c.array_length:
        ty = "usize"
    elif c.ctype in ("unsigned long", "unsigned long long", "long", "long long"):
        ty = "u64" if c.value >= 0 else "i64"
    else:
        ty = "u32" if c.value >= 0 else "i32"
    return f"pub const {c.name}: {ty} = {c.value};"


def emit_rust_module(model: Model, header: str) -> str:
    out = [f"//! The declarations of `include/cucore/{header}.h`.",
           f"//! GENERATED by {SELF} from the C header: do not edit.",
           "",
           "#![allow(unused_imports)]",
           "",
           "use std::mem::size_of;",
           "use std::os::raw::*;",
           "use std::ptr;",
           "",
           "use crate::*;",
           ""]
    consts = [c for c in model.constants if c.header == header]
    for c in consts:
        out += rust_doc(c.doc)
        out.append(_rust_const(model, c))
    if consts:
        out.append("")
    handles_here = [c for c, hh in model.handle_header.items() if hh == header]
    for c_type in handles_here:
        noun = c_type[:-2]
        out.append(f"/// `struct {noun}` (incomplete: used through pointers only).")
        out.append("#[repr(C)]")
        out.append(f"pub struct {noun} {{")
        out.append("    _data: [u8; 0],")
        out.append("    _marker: PhantomData<(*mut u8, PhantomPinned)>,")
        out.append("}")
        out.append(f"pub type {c_type} = {noun};")
        out.append("")
    for e in (e for e in model.enums if e.header == header):
        out += rust_doc(e.doc) or [f"/// `{e.name}`."]
        out.append(f"pub type {e.name} = c_int;")
        for m in e.members:
            out += rust_doc(m.doc)
            value = f"0x{m.value:x}" if m.value >= 0x10000 else str(m.value)
            out.append(f"pub const {m.name}: {e.name} = {value};")
        out.append("")
    for cb in (cb for cb in model.callbacks if cb.header == header):
        out += rust_doc(cb.doc)
        params = ", ".join(f"{rust_ident(n)}: {rust_type(t)}" for n, t in cb.params)
        ret = "" if cb.ret == CType("prim", "void") else f" -> {rust_type(cb.ret)}"
        out.append(f'pub type {cb.name} = Option<unsafe extern "C" fn({params}){ret}>;')
        out.append("")
    for s in (s for s in model.structs if s.header == header):
        out += rust_doc(s.doc) or [f"/// `{s.name}`."]
        out.append("#[repr(C)]")
        out.append(f"#[derive({', '.join(_rust_derives(model, s))})]")
        out.append(f"pub struct {s.name} {{")
        for f in s.fields:
            out += rust_doc(f.doc, "    ")
            out.append(f"    pub {rust_ident(f.name)}: {rust_type(f.type)},")
        out.append("}")
        out.append("")
        if s.init_macro:
            value = _rust_value(model, CType("struct", s.name), lambda p, s=s: s.init.get(p, 0), "")
            value = value.replace("{S}", s.name)
            out.append(f"impl {s.name} {{")
            out.append(f"    /// `{s.init_macro}`.")
            out.append(f"    pub const INIT: {s.name} = {_rust_multiline(value, 4)};")
            out.append("}")
            out.append("")
        out.append(f"impl Default for {s.name} {{")
        if s.init_macro:
            out.append(f"    /// `{s.init_macro}`.")
            out.append("    fn default() -> Self {")
            out.append("        Self::INIT")
        else:
            out.append("    /// All zeros (NULL pointers).")
            out.append("    fn default() -> Self {")
            out.append("        // SAFETY: every field is an integer, a raw pointer or an Option of a function pointer, for")
            out.append("        // which all-zero bytes are a valid value.")
            out.append("        unsafe { std::mem::zeroed() }")
        out.append("    }")
        out.append("}")
        out.append("")
    fns = [f for f in model.functions if f.header == header]
    if fns:
        out.append('extern "C" {')
        for fn in fns:
            out += rust_doc(fn.doc, "    ")
            params = ", ".join(f"{rust_ident(n)}: {rust_type(t)}" for n, t in fn.params)
            ret = "" if fn.ret == CType("prim", "void") else f" -> {rust_type(fn.ret)}"
            out.append(f"    pub fn {fn.name}({params}){ret};")
        out.append("}")
    return _file(out)


def emit_rust_lib(model: Model) -> str:
    out = ["//! Raw FFI declarations of libcucore's C ABI (`include/cucore.h` and `include/cucore/*.h`).",
           "//!",
           f"//! GENERATED by {SELF} from the C headers: do not edit. Everything here mirrors the headers one to",
           "//! one and is `unsafe` to use: every function; every enum as an integer type alias with a constant per",
           "//! value (C enums may carry values a Rust enum could not hold); every struct `#[repr(C)]` with its",
           "//! `_INIT` macro as `INIT`, its layout tested against the C compiler's (`layout_tests.rs`); handle",
           "//! types as opaque structs, each implementing [`Handle`]. The safe API is the `cucore` crate.",
           "//! One module per header, everything re-exported at the crate root.",
           "",
           "#![allow(non_camel_case_types)]",
           "#![allow(non_upper_case_globals)]",
           "#![allow(clippy::missing_safety_doc)]",
           "#![allow(clippy::unreadable_literal)]",
           "",
           "use std::marker::{PhantomData, PhantomPinned};",
           "",
           ]
    for h in model.headers:
        out.append(f"mod {h};")
        out.append(f"pub use {h}::*;")
    out += ["",
            "#[cfg(test)]",
            "mod layout_tests;",
            "",
            "/// A handle type of the C ABI: its object type and its retain and release functions.",
            "pub trait Handle {",
            "    /// `CUCORE_OBJECT_*` of this type.",
            "    const OBJECT_TYPE: cucore_object_type_t;",
            "    /// The noun of the C functions (`cucore_<noun>_retain`).",
            "    const NOUN: &'static str;",
            "    /// `cucore_<noun>_retain`.",
            "    ///",
            "    /// # Safety",
            "    /// `handle` is NULL or a handle of this type (anything else is INVALID_HANDLE, never a crash).",
            "    unsafe fn retain(handle: *mut Self) -> cucore_status_t;",
            "    /// `cucore_<noun>_release`.",
            "    ///",
            "    /// # Safety",
            "    /// As `retain`; the caller gives up the reference it releases.",
            "    unsafe fn release(handle: *mut Self) -> cucore_status_t;",
            "}",
            ""]
    for h in model.handles:
        out += [f"impl Handle for {h.c_type} {{",
                f"    const OBJECT_TYPE: cucore_object_type_t = {h.object_type};",
                f'    const NOUN: &\'static str = "{h.noun}";',
                "    unsafe fn retain(handle: *mut Self) -> cucore_status_t {",
                "        // SAFETY: forwarded to the C function under the trait's contract.",
                f"        unsafe {{ cucore_{h.noun}_retain(handle) }}",
                "    }",
                "    unsafe fn release(handle: *mut Self) -> cucore_status_t {",
                "        // SAFETY: as above.",
                f"        unsafe {{ cucore_{h.noun}_release(handle) }}",
                "    }",
                "}",
                ""]
    return _file(out)


def emit_rust_layout_tests(model: Model) -> str:
    out = [f"//! Layouts of the C structs as the C compiler gives them. GENERATED by {SELF}: do not edit.",
           "",
           "#![allow(non_snake_case)]",
           "",
           "use super::*;",
           "use std::mem::{align_of, size_of, MaybeUninit};",
           "",
           "/// Byte offset of a field (without `offset_of!`, Rust 1.77, so older compilers build the tests).",
           "macro_rules! offset {",
           "    ($ty:ty, $field:ident) => {{",
           "        let u = MaybeUninit::<$ty>::uninit();",
           "        let base = u.as_ptr();",
           "        // SAFETY: only computes an address inside the allocation; nothing is read.",
           "        let field = unsafe { std::ptr::addr_of!((*base).$field) };",
           "        field as usize - base as usize",
           "    }};",
           "}",
           ""]
    for s in model.structs:
        out.append("#[test]")
        out.append(f"fn layout_{s.name}() {{")
        out.append(f"    assert_eq!((size_of::<{s.name}>(), align_of::<{s.name}>()), ({s.size}, {s.align}));")
        for f in s.fields:
            out.append(f"    assert_eq!(offset!({s.name}, {rust_ident(f.name)}), {f.offset});")
        if s.init_macro and s.fields[0].name == "struct_size":
            out.append(f"    assert_eq!({s.name}::INIT.struct_size as usize, {s.size});")
        out.append("}")
        out.append("")
    out.append("#[test]")
    out.append("fn enums_are_c_sized() {")
    for e in model.enums:
        out.append(f"    assert_eq!(size_of::<{e.name}>(), 4);")
    for cb in model.callbacks:
        out.append(f"    assert_eq!(size_of::<{cb.name}>(), size_of::<*mut std::os::raw::c_void>());")
    out.append("}")
    return _file(out)


def emit_rust_device_attributes(model: Model) -> str:
    enum = next(e for e in model.enums if e.name == "cucore_device_attribute_t")
    rows = [m for m in enum.members if not m.name.endswith("_FORCE_INT32")]
    out = ["//! `DeviceAttribute`'s associated constants and name table, from `include/cucore/device_attributes.h`.",
           f"//! GENERATED by {SELF}: do not edit.",
           "",
           "use crate::device::DeviceAttribute;",
           "use crate::sys;",
           "",
           "#[allow(missing_docs)]",
           "impl DeviceAttribute {"]
    for m in rows:
        short = m.name[len("CUCORE_DEVICE_ATTRIBUTE_"):]
        out += rust_doc(m.doc, "    ")
        out.append(f"    pub const {short}: DeviceAttribute = DeviceAttribute(sys::{m.name});")
    out.append("}")
    out.append("")
    out.append("/// Every attribute the header names, as (C name without the `CUCORE_DEVICE_ATTRIBUTE_` prefix,")
    out.append("/// attribute), in header order (aliases included).")
    out.append("pub(crate) const ALL: &[(&str, DeviceAttribute)] = &[")
    for m in rows:
        short = m.name[len("CUCORE_DEVICE_ATTRIBUTE_"):]
        out.append(f'    ("{short}", DeviceAttribute::{short}),')
    out.append("];")
    return _file(out)


def emit_rust_object_type(model: Model) -> str:
    out = ["//! `ObjectType`: the kinds of objects the library counts, one per handle type of the C header.",
           f"//! GENERATED by {SELF} from `cucore_object_type_t` and the handle types: do not edit.",
           "",
           "use crate::sys;",
           "",
           "/// The kinds of objects the library counts (`cucore_object_type_t`).",
           "#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]",
           "pub enum ObjectType {",
           "    /// Every type, in queries.",
           "    Any,"]
    for h in model.handles:
        out.append(f"    /// [`{_camel(h.noun)}`](crate::{_camel(h.noun)})")
        out.append(f"    {_camel(h.noun)},")
    out += ["}",
            "",
            "impl ObjectType {",
            "    /// The raw `cucore_object_type_t`.",
            "    pub fn raw(self) -> sys::cucore_object_type_t {",
            "        match self {",
            "            ObjectType::Any => sys::CUCORE_OBJECT_ANY,"]
    for h in model.handles:
        out.append(f"            ObjectType::{_camel(h.noun)} => sys::{h.object_type},")
    out += ["        }", "    }", "}"]
    return _file(out)


# ---- C and C++ ----------------------------------------------------------------------------------

def _camel(noun: str) -> str:
    return "".join(part.capitalize() for part in noun.split("_"))


def emit_capi_handle_types(model: Model) -> str:
    out = [f"// The core class behind each C handle type. GENERATED by {SELF} from the handle types of",
           "// include/cucore/common.h: do not edit. A handle type cucore_<noun>_t is core::<Noun>, checked as",
           "// CUCORE_OBJECT_<NOUN>; `argument` names the parameter of its retain/release (for messages).",
           "#pragma once",
           "",
           '#include "cucore/common.h"',
           "",
           "namespace cucore::core {"]
    for h in model.handles:
        out.append(f"class {_camel(h.noun)};")
    out += ["}  // namespace cucore::core",
            "",
            "namespace cucore::capi {",
            "",
            "template <class Handle> struct CoreOf;"]
    for h in model.handles:
        out.append(f"template <> struct CoreOf<{h.c_type}> {{")
        out.append(f"    using type = core::{_camel(h.noun)};")
        out.append(f"    static constexpr cucore_object_type_t kind = {h.object_type};")
        out.append(f'    static constexpr const char *argument = "{h.argument}";')
        out.append("};")
    out += ["", "}  // namespace cucore::capi"]
    return _file(out)


def emit_capi_handles(model: Model) -> str:
    out = [f"// C ABI: every handle type's retain and release. GENERATED by {SELF} from the handle types of",
           "// include/cucore/common.h: do not edit.",
           '#include "capi/capi.hpp"',
           "",
           "using namespace cucore;",
           "",
           'extern "C" {']
    for h in model.handles:
        a = h.argument
        out += ["",
                f"cucore_status_t cucore_{h.noun}_retain({h.c_type} *{a}) {{",
                f"    return capi::guarded(__func__, [&] {{ capi::retain({a}); }});",
                "}",
                "",
                f"cucore_status_t cucore_{h.noun}_release({h.c_type} *{a}) {{",
                f"    return capi::guarded(__func__, [&] {{ capi::release({a}); }});",
                "}"]
    out += ["", '}  // extern "C"']
    return _file(out)


def emit_capi_struct_fields(model: Model) -> str:
    versioned = [st for st in model.structs if st.fields and st.fields[0].name == "struct_size"]
    out = [f"// The fields of every versioned struct (one that begins with struct_size). GENERATED by {SELF} from",
           "// include/cucore/*.h: do not edit. capi::read_options refuses a caller's struct_size that ends inside",
           "// a field, which would leave it half read (half a pointer).",
           "#pragma once",
           "",
           "#include <cstddef>",
           "",
           '#include "cucore.h"',
           "",
           "namespace cucore::capi {",
           "",
           "struct FieldSpan {",
           "    const char *name;",
           "    size_t offset;",
           "    size_t size;",
           "};",
           "",
           "template <class Struct> struct FieldsOf;"]
    for st in versioned:
        out.append(f"template <> struct FieldsOf<{st.name}> {{")
        out.append("    static constexpr FieldSpan fields[] = {")
        for f in st.fields:
            out.append(f'        {{"{f.name}", offsetof({st.name}, {f.name}), sizeof({st.name}::{f.name})}},')
        out.append("    };")
        out.append("};")
    out += ["", "}  // namespace cucore::capi"]
    return _file(out)


def emit_capi_abi_layout(model: Model) -> str:
    out = [f"// C ABI: cucore_abi_layout(). GENERATED by {SELF} from include/cucore/*.h: do not edit.",
           "// The layout of every struct of the ABI as this library was compiled, for bindings that check their",
           "// own declarations against it.",
           '#include <cstddef>',
           '#include <cstring>',
           "",
           '#include "capi/capi.hpp"',
           "",
           "using namespace cucore;",
           "",
           "namespace {",
           "",
           "struct FieldLayout {",
           "    const char *name;",
           "    size_t offset;",
           "};",
           "",
           "struct StructLayout {",
           "    const char *name;",
           "    size_t size;",
           "    const FieldLayout *fields;",
           "    size_t field_count;",
           "};",
           ""]
    for s in model.structs:
        out.append(f"const FieldLayout k_{s.name}[] = {{")
        for f in s.fields:
            out.append(f'    {{"{f.name}", offsetof({s.name}, {f.name})}},')
        out.append("};")
    out.append("")
    out.append("const StructLayout kStructs[] = {")
    for s in model.structs:
        out.append(f'    {{"{s.name}", sizeof({s.name}), k_{s.name}, {len(s.fields)}}},')
    out.append("};")
    out += ["",
            "}  // namespace",
            "",
            'extern "C" cucore_status_t cucore_abi_layout(const char *struct_name, const char *field, size_t *value) {',
            "    return capi::guarded(__func__, [&] {",
            '        size_t &result = capi::out(value, "value");',
            '        capi::require(struct_name, "struct_name");',
            "        for (const StructLayout &s : kStructs) {",
            "            if (std::strcmp(s.name, struct_name) != 0) continue;",
            "            if (!field) {",
            "                result = s.size;",
            "                return;",
            "            }",
            "            for (size_t i = 0; i < s.field_count; ++i)",
            "                if (std::strcmp(s.fields[i].name, field) == 0) {",
            "                    result = s.fields[i].offset;",
            "                    return;",
            "                }",
            "            core::throw_invalid_argument(std::string(\"argument 'field': \") + struct_name + \" has no field '\" +",
            "                                         field + \"'\");",
            "        }",
            "        core::throw_invalid_argument(std::string(\"argument 'struct_name': no struct '\") + struct_name +",
            "                                     \"' in the C ABI\");",
            "    });",
            "}"]
    return _file(out)


def emit_core_object_types(model: Model) -> str:
    out = [f"// Each object type and its name. GENERATED by {SELF} from cucore_object_type_t and the handle",
           "// types of include/cucore/common.h: do not edit. Use: #define CUCORE_OBJECT_TYPE(value, name) ...",
           ]
    for h in model.handles:
        out.append(f'CUCORE_OBJECT_TYPE({h.object_type}, "{h.noun.replace("_", " ")}")')
    return _file(out)


def emit_cpp_handle_traits(model: Model) -> str:
    out = [f"// The C++ façade's HandleTraits: each C handle type's retain and release. GENERATED by {SELF}",
           "// from the handle types of include/cucore/common.h: do not edit.",
           "#pragma once",
           ""]
    for header in sorted({h.header for h in model.handles}, key=model.headers.index):
        out.append(f'#include "{header}.h"')
    out += ["",
           "namespace cucore {",
           "namespace detail {",
           "",
           "// Per C handle type: its object type and its retain and release functions.",
           "template <typename CHandle> struct HandleTraits;",
           ""]
    for h in model.handles:
        out += [f"template <> struct HandleTraits<{h.c_type}> {{",
                f"    static constexpr cucore_object_type_t object_type = {h.object_type};",
                f"    static cucore_status_t retain({h.c_type} *h) noexcept {{ return cucore_{h.noun}_retain(h); }}",
                f"    static cucore_status_t release({h.c_type} *h) noexcept {{ return cucore_{h.noun}_release(h); }}",
                "};"]
    out += ["", "} // namespace detail", "} // namespace cucore"]
    return _file(out)


# ---------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------

def outputs(model: Model) -> Dict[str, str]:
    files = {
        "bindings/python/cucore/_abi.py": emit_python_abi(model),
        "bindings/python/cucore/_abi_types.py": emit_python_abi_types(model),
        "bindings/python/cucore/_abi_constants.py": emit_python_abi_constants(model),
        "bindings/python/cucore/device_attributes.py": emit_python_device_attributes(model),
        "bindings/rust/cucore-sys/src/lib.rs": emit_rust_lib(model),
        "bindings/rust/cucore-sys/src/layout_tests.rs": emit_rust_layout_tests(model),
        "bindings/rust/cucore/src/device_attributes.rs": emit_rust_device_attributes(model),
        "bindings/rust/cucore/src/object_type.rs": emit_rust_object_type(model),
        "src/capi/handle_types.hpp": emit_capi_handle_types(model),
        "src/capi/handles.cpp": emit_capi_handles(model),
        "src/capi/abi_layout.cpp": emit_capi_abi_layout(model),
        "src/capi/struct_fields.hpp": emit_capi_struct_fields(model),
        "src/core/object_types.inc": emit_core_object_types(model),
        "include/cucore/handle_traits.hpp": emit_cpp_handle_traits(model),
    }
    for h in model.headers:
        files[f"bindings/rust/cucore-sys/src/{h}.rs"] = emit_rust_module(model, h)
    return files


# Where generated files live; every file there that says it was generated by this script is one of ours.
GENERATED_DIRS = ("bindings/python/cucore", "bindings/rust/cucore-sys/src", "bindings/rust/cucore/src", "src/capi",
                  "src/core", "include/cucore")


def generated_files_on_disk() -> List[str]:
    out = []
    for d in GENERATED_DIRS:
        for path in sorted((ROOT / d).iterdir()):
            if path.is_file() and f"GENERATED by {SELF}" in path.read_text(errors="replace")[:400]:
                out.append(str(path.relative_to(ROOT)))
    return out


def read_model() -> Model:
    model = Reader().parse()
    measure(model)
    return model


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="fail if a generated file differs from what it would be")
    args = ap.parse_args(argv)
    files = outputs(read_model())
    stale = []
    # A generated file the headers no longer produce (a header renamed or split) is stale too: removed.
    orphans = [rel for rel in generated_files_on_disk() if rel not in files]
    for rel in orphans:
        stale.append(rel + " (no longer generated)")
        if not args.check:
            (ROOT / rel).unlink()
    for rel, text in files.items():
        path = ROOT / rel
        old = path.read_text() if path.exists() else None
        if old == text:
            continue
        stale.append(rel)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    if args.check:
        if stale:
            print("gen_bindings: generated files are stale (run scripts/gen_bindings.py and commit them):")
            for rel in stale:
                print(f"  {rel}")
            return 1
        print(f"gen_bindings: all {len(files)} generated files are up to date")
        return 0
    print(f"gen_bindings: {len(stale)} of {len(files)} generated files written" + (": " + ", ".join(stale) if stale else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
