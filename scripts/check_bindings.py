#!/usr/bin/env python3
"""Prove that the language bindings never drift from the C ABI.

Every function the headers export (`CUCORE_API` declarations in include/cucore/*.h) must be bound

- in Python, in the pure-data table `ABI` of bindings/python/cucore/_abi.py, with the same number of
  parameters and the same (const-free) C types, and
- in Rust, as `pub fn cucore_xxx(...)` inside an `extern "C"` block of a file of
  bindings/rust/cucore-sys/src/ (every *.rs there is read), with the same number of parameters and the
  same types (Rust types read back as C spellings: `*mut *const c_char` is `char**`, `u32` is
  `uint32_t`, `c_int` is `int`),

or be listed in DELIBERATELY_UNBOUND below with the reason. Bindings of functions the headers do not
declare are reported too (they would fail to resolve against the library).

Usage:
    scripts/check_bindings.py                 # check the repository this script lives in
    scripts/check_bindings.py --languages python
    scripts/check_bindings.py --self-test     # prove the checker catches missing and wrong bindings

Exit status: 0 when everything is bound, 1 with a list of problems otherwise, 2 on usage errors.
Both raw layers are generated from the headers by scripts/gen_bindings.py; this checker is the independent
proof that they match (it parses the headers with its own reader, not the generator's).
Standard library only; nothing is imported from the bindings (the Python table is read with ast).
"""
from __future__ import annotations

import argparse
import ast
import pathlib
import re
import sys
import tempfile
from typing import Dict, List, Optional, Sequence, Tuple

# name -> why it has no binding (in any language). Keep the reason concrete.
DELIBERATELY_UNBOUND: Dict[str, str] = {}

ROOT = pathlib.Path(__file__).resolve().parent.parent
LANGUAGES = ("python", "rust")

Signature = Tuple[str, List[str]]  # (return type, parameter types), types normalised


# ---------------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------------

def _strip_c_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _split_top_level(params: str) -> List[str]:
    """Split a parameter list at the commas that are not nested in (), <> or []."""
    parts, depth, cur = [], 0, []
    for ch in params:
        if ch in "(<[":
            depth += 1
        elif ch in ")>]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    parts = [p.strip() for p in parts]
    if parts and parts[-1] == "":  # trailing comma (Rust allows it)
        parts.pop()
    return parts


def normalize_c_type(decl: str, has_name: bool) -> str:
    """'const cucore_device_t *device' -> 'cucore_device_t*' (const, a `struct` tag and the parameter name
    dropped: every struct the header names by its tag also has a typedef of that name)."""
    decl = re.sub(r"\b(const|struct)\b", " ", decl)
    # An array parameter is a pointer: 'uint8_t pool_id[CUCORE_IPC_POOL_ID_SIZE]' -> 'uint8_t*'.
    decl = re.sub(r"\b[A-Za-z_]\w*\s*\[[^\]]*\]\s*$", "*", decl.strip()) if has_name else decl
    decl = re.sub(r"\s*\*\s*", "*", decl.strip())
    decl = re.sub(r"\s+", " ", decl).strip()
    if has_name:
        m = re.match(r"^(.*?[\s*])([A-Za-z_]\w*)$", decl)
        if m:
            decl = m.group(1)
    return decl.replace(" *", "*").strip()


def parse_header_text(text: str) -> Dict[str, Signature]:
    text = _strip_c_comments(text)
    text = re.sub(r"^\s*#.*$", " ", text, flags=re.M)  # preprocessor lines (the macro's own definition)
    out: Dict[str, Signature] = {}
    for m in re.finditer(r"\bCUCORE_API\s+([^;{}()]*?)\b(cucore_\w+)\s*\(([^;{}]*?)\)\s*;", text, re.S):
        ret, name, params = m.group(1), m.group(2), m.group(3).strip()
        if params in ("", "void"):
            types: List[str] = []
        else:
            types = [normalize_c_type(p, has_name=True) for p in _split_top_level(params)]
        out[name] = (normalize_c_type(ret, has_name=False), types)
    return out


def parse_headers(paths: Sequence[pathlib.Path]) -> Dict[str, Signature]:
    out: Dict[str, Signature] = {}
    for p in sorted(paths):
        out.update(parse_header_text(p.read_text()))
    return out


def parse_python_abi_text(text: str) -> Dict[str, Signature]:
    """Read `ABI = {name: (restype, (argtype, ...)), ...}` without importing the module."""
    tree = ast.parse(text)
    for node in tree.body:
        target = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if isinstance(target, ast.Name) and target.id == "ABI" and value is not None:
            table = ast.literal_eval(value)
            return {name: (str(ret), [str(a) for a in args]) for name, (ret, args) in table.items()}
    raise ValueError("no literal `ABI = {...}` table found")


RUST_TO_C = {
    "u8": "uint8_t", "u16": "uint16_t", "u32": "uint32_t", "u64": "uint64_t", "i8": "int8_t", "i16": "int16_t",
    "i32": "int32_t", "i64": "int64_t", "usize": "size_t", "c_int": "int", "c_uint": "unsigned int",
    "c_char": "char", "c_uchar": "unsigned char", "c_void": "void", "f32": "float", "f64": "double",
}


def rust_type_to_c(ty: str) -> str:
    """A Rust FFI type as the C spelling normalize_c_type gives: '*mut *const c_char' -> 'char**'."""
    ty = " ".join(ty.split())
    stars = 0
    while True:
        m = re.match(r"^\*(?:mut|const)\s+(.*)$", ty)
        if not m:
            break
        stars, ty = stars + 1, m.group(1)
    ty = re.sub(r"^(?:std::os::raw::|core::ffi::|std::ffi::)", "", ty)
    return RUST_TO_C.get(ty, ty) + "*" * stars


def parse_rust_text(text: str) -> Dict[str, Signature]:
    """`pub fn cucore_x(...) -> R` declarations inside extern "C" blocks -> (C return type, C parameter types)."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    out: Dict[str, Signature] = {}
    for m in re.finditer(r'\b(?:unsafe\s+)?extern\s+"C"\s*\{', text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
            i += 1
        block = text[m.end():i - 1]
        for f in re.finditer(r"\bpub(?:\([^)]*\))?\s+(?:(?:unsafe|safe)\s+)?fn\s+(cucore_\w+)\s*\(", block):
            depth, j = 1, f.end()
            while j < len(block) and depth:
                if block[j] == "(":
                    depth += 1
                elif block[j] == ")":
                    depth -= 1
                j += 1
            params = block[f.end():j - 1].strip()
            rest = re.match(r"\s*(?:->\s*([^;]+?))?\s*;", block[j:])
            ret = rust_type_to_c(rest.group(1)) if rest and rest.group(1) else "void"
            types = [rust_type_to_c(p.split(":", 1)[1]) if ":" in p else "?" for p in _split_top_level(params)] \
                if params else []
            out[f.group(1)] = (ret, types)
    return out


# ---------------------------------------------------------------------------------------------
# Checking
# ---------------------------------------------------------------------------------------------

def check(header: Dict[str, Signature], python: Optional[Dict[str, Signature]],
          rust: Optional[Dict[str, Signature]], unbound: Dict[str, str]) -> List[str]:
    """Problems, one readable line each; `None` for a language means it is not checked."""
    problems: List[str] = []
    for name in sorted(unbound):
        if name not in header:
            problems.append(f"DELIBERATELY_UNBOUND lists {name}, which no header declares (stale entry)")
    for name, (ret, params) in sorted(header.items()):
        if name in unbound:
            continue
        n = len(params)
        if python is not None:
            if name not in python:
                problems.append(f"python: {name} ({n} parameters) is not bound in _abi.py")
            else:
                pret, pparams = python[name]
                if len(pparams) != n:
                    problems.append(f"python: {name} is bound with {len(pparams)} parameters, "
                                    f"the header has {n}: ({', '.join(params)})")
                else:
                    for i, (want, got) in enumerate(zip(params, pparams)):
                        if want != got:
                            problems.append(f"python: {name} parameter {i + 1} is bound as {got!r}, "
                                            f"the header has {want!r}")
                if pret != ret:
                    problems.append(f"python: {name} returns {pret!r} in _abi.py, the header has {ret!r}")
        if rust is not None:
            if name not in rust:
                problems.append(f"rust: {name} ({n} parameters) is not declared in cucore-sys")
            else:
                rret, rparams = rust[name]
                if len(rparams) != n:
                    problems.append(f"rust: {name} is declared with {len(rparams)} parameters, the header has {n}")
                else:
                    for i, (want, got) in enumerate(zip(params, rparams)):
                        if want != got:
                            problems.append(f"rust: {name} parameter {i + 1} is declared as {got!r}, "
                                            f"the header has {want!r}")
                if rret != ret:
                    problems.append(f"rust: {name} returns {rret!r} in cucore-sys, the header has {ret!r}")
    for lang, table in (("python", python), ("rust", rust)):
        for name in sorted(set(table or ()) - set(header)):
            problems.append(f"{lang}: {name} is bound but no header declares it")
    return problems


def run(root: pathlib.Path, languages: Sequence[str], header_paths: Optional[Sequence[pathlib.Path]] = None,
        python_path: Optional[pathlib.Path] = None, rust_path: Optional[pathlib.Path] = None,
        unbound: Optional[Dict[str, str]] = None, out=sys.stdout) -> int:
    header_paths = list(header_paths or sorted((root / "include" / "cucore").glob("*.h")))
    python_path = python_path or root / "bindings" / "python" / "cucore" / "_abi.py"
    # A directory: every *.rs under it (each capability declares its functions in its own file).
    rust_path = rust_path or root / "bindings" / "rust" / "cucore-sys" / "src"
    unbound = DELIBERATELY_UNBOUND if unbound is None else unbound
    problems: List[str] = []
    header = parse_headers(header_paths)
    if not header:
        problems.append(f"no CUCORE_API declarations found in {[str(p) for p in header_paths]}")
    python = rust = None
    if "python" in languages:
        if python_path.is_file():
            try:
                python = parse_python_abi_text(python_path.read_text())
            except (SyntaxError, ValueError) as e:
                problems.append(f"python: cannot read {python_path}: {e}")
        else:
            problems.append(f"python: {python_path} does not exist")
    if "rust" in languages:
        if rust_path.is_dir():
            rust = {}
            for rs in sorted(rust_path.rglob("*.rs")):
                rust.update(parse_rust_text(rs.read_text()))
        elif rust_path.is_file():
            rust = parse_rust_text(rust_path.read_text())
        else:
            problems.append(f"rust: {rust_path} does not exist")
    problems += check(header, python, rust, unbound)
    checked = ", ".join(lang for lang in languages)
    if problems:
        print(f"check_bindings: {len(problems)} problem(s) ({len(header)} C functions; checked {checked}):",
              file=out)
        for p in problems:
            print(f"  - {p}", file=out)
        return 1
    print(f"check_bindings: all {len(header)} C functions are bound in {checked} "
          f"({len(unbound)} deliberately unbound)", file=out)
    return 0


# ---------------------------------------------------------------------------------------------
# Self-test: prove the checker detects a missing and a wrong-arity binding
# ---------------------------------------------------------------------------------------------

SELF_TEST_HEADER = """
#define CUCORE_API __attribute__((visibility("default")))
/* CUCORE_API int cucore_commented_out(void); */
CUCORE_API uint32_t cucore_version(void);
CUCORE_API cucore_status_t cucore_thing_create(const cucore_device_t *device,
                                               const cucore_thing_options_t *options,
                                               cucore_thing_t **thing);
CUCORE_API cucore_status_t cucore_thing_release(cucore_thing_t *thing);
CUCORE_API void cucore_set_handler(cucore_release_error_fn handler, void *user_data);
"""

SELF_TEST_PYTHON_GOOD = """
ABI = {
    "cucore_version": ("uint32_t", ()),
    "cucore_thing_create": ("cucore_status_t",
                            ("cucore_device_t*", "cucore_thing_options_t*", "cucore_thing_t**")),
    "cucore_thing_release": ("cucore_status_t", ("cucore_thing_t*",)),
    "cucore_set_handler": ("void", ("cucore_release_error_fn", "void*")),
}
"""

SELF_TEST_RUST_GOOD = """
use core::ffi::c_void;
// pub fn cucore_not_in_a_block(x: i32);
#[link(name = "cucore")]
unsafe extern "C" {
    pub fn cucore_version() -> u32;
    pub fn cucore_thing_create(
        device: *const cucore_device_t,
        options: *const cucore_thing_options_t,
        thing: *mut *mut cucore_thing_t,
    ) -> cucore_status_t;
    pub safe fn cucore_thing_release(thing: *mut cucore_thing_t) -> cucore_status_t;
    pub fn cucore_set_handler(handler: cucore_release_error_fn, user_data: *mut c_void);
}
"""


def self_test(out=sys.stdout) -> int:
    failures: List[str] = []

    def expect(label: str, files: Dict[str, str], want_rc: int, must_contain: Sequence[str],
               unbound: Optional[Dict[str, str]] = None) -> None:
        import io
        with tempfile.TemporaryDirectory() as d:
            dp = pathlib.Path(d)
            for rel, text in files.items():
                (dp / rel).write_text(text)
            buf = io.StringIO()
            rc = run(dp, LANGUAGES, header_paths=[dp / "h.h"], python_path=dp / "abi.py",
                     rust_path=dp / "lib.rs", unbound=unbound or {}, out=buf)
            text = buf.getvalue()
            if rc != want_rc or any(s not in text for s in must_contain):
                failures.append(f"{label}: rc={rc} (wanted {want_rc}), output:\n{text}")

    good = {"h.h": SELF_TEST_HEADER, "abi.py": SELF_TEST_PYTHON_GOOD, "lib.rs": SELF_TEST_RUST_GOOD}
    expect("complete bindings pass", good, 0, ["all 4 C functions"])
    expect("missing python binding",
           dict(good, **{"abi.py": SELF_TEST_PYTHON_GOOD.replace(
               '    "cucore_thing_release": ("cucore_status_t", ("cucore_thing_t*",)),\n', "")}),
           1, ["python: cucore_thing_release (1 parameters) is not bound"])
    expect("wrong python arity",
           dict(good, **{"abi.py": SELF_TEST_PYTHON_GOOD.replace('"void*"))', '"void*", "int"))')}),
           1, ["python: cucore_set_handler is bound with 3 parameters, the header has 2"])
    expect("wrong python type",
           dict(good, **{"abi.py": SELF_TEST_PYTHON_GOOD.replace('("cucore_thing_t*",)', '("void*",)')}),
           1, ["python: cucore_thing_release parameter 1 is bound as 'void*'"])
    expect("missing rust binding",
           dict(good, **{"lib.rs": SELF_TEST_RUST_GOOD.replace("pub fn cucore_version() -> u32;", "")}),
           1, ["rust: cucore_version (0 parameters) is not declared"])
    expect("wrong rust arity",
           dict(good, **{"lib.rs": SELF_TEST_RUST_GOOD.replace(
               "thing: *mut *mut cucore_thing_t,", "")}),
           1, ["rust: cucore_thing_create is declared with 2 parameters, the header has 3"])
    expect("wrong rust type",
           dict(good, **{"lib.rs": SELF_TEST_RUST_GOOD.replace(
               "thing: *mut *mut cucore_thing_t,", "thing: *mut *mut c_void,")}),
           1, ["rust: cucore_thing_create parameter 3 is declared as 'void**', the header has 'cucore_thing_t**'"])
    expect("wrong rust return type",
           dict(good, **{"lib.rs": SELF_TEST_RUST_GOOD.replace("cucore_version() -> u32;", "cucore_version() -> i32;")}),
           1, ["rust: cucore_version returns 'int32_t' in cucore-sys, the header has 'uint32_t'"])
    expect("binding of an undeclared function",
           dict(good, **{"abi.py": SELF_TEST_PYTHON_GOOD.replace(
               "ABI = {", 'ABI = {\n    "cucore_ghost": ("void", ()),')}),
           1, ["python: cucore_ghost is bound but no header declares it"])
    expect("deliberately unbound is accepted",
           dict(good, **{"abi.py": SELF_TEST_PYTHON_GOOD.replace(
               '    "cucore_thing_release": ("cucore_status_t", ("cucore_thing_t*",)),\n', ""),
               "lib.rs": SELF_TEST_RUST_GOOD.replace(
               "pub safe fn cucore_thing_release(thing: *mut cucore_thing_t) -> cucore_status_t;", "")}),
           0, ["1 deliberately unbound"], unbound={"cucore_thing_release": "self-test"})
    expect("stale deliberately-unbound entry", good, 1, ["cucore_gone, which no header declares"],
           unbound={"cucore_gone": "self-test"})
    with tempfile.TemporaryDirectory() as d:
        import io
        dp = pathlib.Path(d)
        (dp / "h.h").write_text(SELF_TEST_HEADER)
        (dp / "abi.py").write_text(SELF_TEST_PYTHON_GOOD)
        buf = io.StringIO()
        rc = run(dp, LANGUAGES, header_paths=[dp / "h.h"], python_path=dp / "abi.py",
                 rust_path=dp / "missing.rs", unbound={}, out=buf)
        if rc != 1 or "does not exist" not in buf.getvalue():
            failures.append(f"missing rust file: rc={rc}, output:\n{buf.getvalue()}")
    if failures:
        print("check_bindings self-test FAILED:", file=out)
        for f in failures:
            print("  - " + f.replace("\n", "\n    "), file=out)
        return 1
    print("check_bindings self-test: ok (detects missing, wrong-arity, wrong-type (Python and Rust) and undeclared "
          "bindings)",
          file=out)
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=pathlib.Path, default=ROOT, help="repository root (default: this checkout)")
    ap.add_argument("--languages", default=",".join(LANGUAGES),
                    help="comma-separated subset of: python,rust (default: both)")
    ap.add_argument("--self-test", action="store_true", help="prove the checker detects broken bindings")
    args = ap.parse_args(argv)
    if args.self_test:
        return self_test()
    langs = [x.strip() for x in args.languages.split(",") if x.strip()]
    bad = [x for x in langs if x not in LANGUAGES]
    if bad or not langs:
        ap.error(f"unknown language(s) {bad}; choose from {LANGUAGES}")
    return run(args.root.resolve(), langs)


if __name__ == "__main__":
    sys.exit(main())
