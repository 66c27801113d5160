"""scripts/check_bindings.py: it detects missing and wrong bindings, and the Python binding is complete."""
import importlib.util
import io
import subprocess
import sys

import pytest

from conftest import REPO

SCRIPT = REPO / "scripts" / "check_bindings.py"


@pytest.fixture(scope="module")
def cb():
    spec = importlib.util.spec_from_file_location("check_bindings", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run(cb, tmp_path, header, abi, rust, unbound=None):
    (tmp_path / "h.h").write_text(header)
    (tmp_path / "abi.py").write_text(abi)
    if rust is not None:
        (tmp_path / "lib.rs").write_text(rust)
    out = io.StringIO()
    rc = cb.run(tmp_path, ("python", "rust"), header_paths=[tmp_path / "h.h"],
                python_path=tmp_path / "abi.py", rust_path=tmp_path / "lib.rs", unbound=unbound or {}, out=out)
    return rc, out.getvalue()


def test_self_test_mode():
    r = subprocess.run([sys.executable, str(SCRIPT), "--self-test"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ok" in r.stdout


def test_complete_bindings_pass(cb, tmp_path):
    rc, out = _run(cb, tmp_path, cb.SELF_TEST_HEADER, cb.SELF_TEST_PYTHON_GOOD, cb.SELF_TEST_RUST_GOOD)
    assert rc == 0, out


def test_detects_a_missing_python_binding(cb, tmp_path):
    abi = cb.SELF_TEST_PYTHON_GOOD.replace('    "cucore_version": ("uint32_t", ()),\n', "")
    rc, out = _run(cb, tmp_path, cb.SELF_TEST_HEADER, abi, cb.SELF_TEST_RUST_GOOD)
    assert rc == 1 and "python: cucore_version (0 parameters) is not bound" in out


def test_detects_a_wrong_arity_python_binding(cb, tmp_path):
    abi = cb.SELF_TEST_PYTHON_GOOD.replace('("cucore_thing_t*",)', '("cucore_thing_t*", "int")')
    rc, out = _run(cb, tmp_path, cb.SELF_TEST_HEADER, abi, cb.SELF_TEST_RUST_GOOD)
    assert rc == 1 and "cucore_thing_release is bound with 2 parameters, the header has 1" in out


def test_detects_a_missing_and_a_wrong_arity_rust_binding(cb, tmp_path):
    rust = cb.SELF_TEST_RUST_GOOD.replace("pub fn cucore_version() -> u32;", "") \
        .replace("pub safe fn cucore_thing_release(thing: *mut cucore_thing_t)",
                 "pub safe fn cucore_thing_release(thing: *mut cucore_thing_t, extra: i32)")
    rc, out = _run(cb, tmp_path, cb.SELF_TEST_HEADER, cb.SELF_TEST_PYTHON_GOOD, rust)
    assert rc == 1
    assert "rust: cucore_version (0 parameters) is not declared" in out
    assert "rust: cucore_thing_release is declared with 2 parameters, the header has 1" in out


def test_missing_rust_file_is_a_problem(cb, tmp_path):
    rc, out = _run(cb, tmp_path, cb.SELF_TEST_HEADER, cb.SELF_TEST_PYTHON_GOOD, None)
    assert rc == 1 and "does not exist" in out


def test_rust_outside_extern_blocks_does_not_count(cb):
    text = 'pub fn cucore_a(x: i32) {}\nextern "C" {\n    pub fn cucore_b(x: i32, y: *mut *const c_char) -> u64;\n}\n'
    assert cb.parse_rust_text(text) == {"cucore_b": ("uint64_t", ["int32_t", "char**"])}


def test_detects_a_wrong_rust_type(cb, tmp_path):
    rust = cb.SELF_TEST_RUST_GOOD.replace("pub safe fn cucore_thing_release(thing: *mut cucore_thing_t)",
                                          "pub safe fn cucore_thing_release(thing: *mut c_void)")
    rc, out = _run(cb, tmp_path, cb.SELF_TEST_HEADER, cb.SELF_TEST_PYTHON_GOOD, rust)
    assert rc == 1
    assert "rust: cucore_thing_release parameter 1 is declared as 'void*', the header has 'cucore_thing_t*'" in out


def test_header_parsing(cb):
    text = ("CUCORE_API cucore_status_t cucore_x(const cucore_device_t *d,\n   int *out);\n"
            "CUCORE_API void cucore_y(void);\n/* CUCORE_API int cucore_z(int a); */\n")
    assert cb.parse_header_text(text) == {"cucore_x": ("cucore_status_t", ["cucore_device_t*", "int*"]),
                                          "cucore_y": ("void", [])}


def test_repository_python_bindings_are_complete():
    r = subprocess.run([sys.executable, str(SCRIPT), "--languages", "python"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_repository_rust_bindings_are_complete():
    lib_rs = REPO / "bindings" / "rust" / "cucore-sys" / "src" / "lib.rs"
    if not lib_rs.is_file():
        pytest.skip(f"{lib_rs.relative_to(REPO)} does not exist yet")
    r = subprocess.run([sys.executable, str(SCRIPT), "--languages", "rust"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_every_bound_function_is_exported_by_the_library(lib):
    from cucore import _abi
    import ctypes
    dll = ctypes.CDLL(lib.path())
    missing = [name for name in _abi.ABI if not hasattr(dll, name)]
    assert not missing, f"the library does not export {missing}"
