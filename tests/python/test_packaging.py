"""Packaging (pyproject.toml: scikit-build-core builds libcucore into the wheel), generated files and the
package's documentation. No GPU needed. The full `pip install` and `pip install -e` into fresh virtual
environments, which compile the library, are CTest's python_install (check_install.py)."""
import ast
import os
import subprocess
import sys
import tarfile

import pytest

from conftest import REPO, require_module

BINDING = REPO / "bindings" / "python"


def _pyproject():
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        tomllib = require_module("tomli", "reads pyproject.toml before Python 3.11")
    return tomllib.loads((BINDING / "pyproject.toml").read_text())


def _backend(hook, *args):
    """Call a PEP 517 hook of scikit-build-core in a subprocess run in bindings/python (hooks read the
    current directory), and return what it returned."""
    require_module("scikit_build_core", "the binding's build backend")
    code = (f"import sys, scikit_build_core.build as b; r = b.{hook}(*sys.argv[1:]); "
            "print('RESULT', r)")
    r = subprocess.run([sys.executable, "-c", code, *map(str, args)], cwd=BINDING, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout.split("RESULT ", 1)[1].strip()


def test_pyproject_builds_the_library_into_the_package():
    project = _pyproject()
    assert project["build-system"]["build-backend"] == "scikit_build_core.build"
    assert any(r.startswith("scikit-build-core") for r in project["build-system"]["requires"])
    meta = project["project"]
    assert meta["license"] == "Apache-2.0" and meta["license-files"] == ["LICENSE"]
    skb = project["tool"]["scikit-build"]
    assert skb["build"]["targets"] == ["cucore"]          # the library only: no tests, examples, benchmarks
    assert skb["install"]["components"] == ["python"]
    assert skb["wheel"]["packages"] == ["cucore"]
    cmake = (BINDING / "CMakeLists.txt").read_text()
    assert "DESTINATION cucore" in cmake and "COMPONENT python" in cmake
    for option in ("TESTS", "BENCH", "EXAMPLES", "RUST", "PYTHON"):
        assert f"set(CUCORE_BUILD_{option} OFF)" in cmake, option
    # The license is the repository's: bindings/python/LICENSE is a copy (an sdist cannot hold a link out of
    # its folder, and license-files may not name ../..), and must stay the same text.
    assert (BINDING / "LICENSE").read_bytes() == (REPO / "LICENSE").read_bytes()
    assert not (BINDING / "LICENSE").is_symlink()
    assert "Apache License" in (REPO / "LICENSE").read_text()
    assert (BINDING / "cucore" / "py.typed").is_file()


def test_the_loader_looks_in_the_package_first():
    # The wheel installs cucore/libcucore.so.0; _lib.py tries it right after CUCORE_LIBRARY.
    text = (BINDING / "cucore" / "_lib.py").read_text()
    order = [text.index(s) for s in ('("CUCORE_LIBRARY", env)', '("package copy",', '("build tree",',
                                     '("system loader",')]
    assert order == sorted(order)


def test_wheel_metadata(tmp_path):
    name = _backend("prepare_metadata_for_build_wheel", tmp_path)
    assert name == "cucore-0.1.0.dist-info"
    dist_info = tmp_path / name
    meta = (dist_info / "METADATA").read_text()
    for line in ("Name: cucore", "Version: 0.1.0", "License-Expression: Apache-2.0", "License-File: LICENSE",
                 "Requires-Python: >=3.8", "Classifier: Typing :: Typed"):
        assert line + "\n" in meta, line
    assert (dist_info / "licenses" / "LICENSE").read_text() == (REPO / "LICENSE").read_text()


def test_sdist_and_editable(tmp_path):
    name = _backend("build_sdist", tmp_path)
    assert name == "cucore-0.1.0.tar.gz"
    with tarfile.open(tmp_path / name) as tf:
        names = set(tf.getnames())
        license_text = tf.extractfile("cucore-0.1.0/LICENSE").read().decode()
    for member in ("pyproject.toml", "CMakeLists.txt", "LICENSE", "README.md", "PKG-INFO", "cucore/stream.py",
                   "cucore/_abi.py", "cucore/device_attributes.py", "cucore/py.typed"):
        assert f"cucore-0.1.0/{member}" in names, member
    assert "Apache License" in license_text
    assert not any("libcucore" in n or "__pycache__" in n for n in names), sorted(names)
    # Editable installs go through the same backend (built for real by CTest's python_install). It asks for
    # nothing beyond CMake and Ninja, and for those only where the machine's own are missing or too old.
    requires = ast.literal_eval(_backend("get_requires_for_build_editable"))
    assert all(r.startswith(("cmake>=", "ninja>=")) for r in requires), requires


def test_abi_table_is_pure_data():
    for name in ("_abi.py", "_abi_constants.py"):
        tree = ast.parse((BINDING / "cucore" / name).read_text())
        assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom, ast.Call))], name


def test_every_module_and_public_name_has_a_docstring():
    # Every module, and every public class, function and method (property setters aside), says what it is.
    missing = []
    for path in sorted((BINDING / "cucore").glob("*.py")):
        if path.name in ("_abi.py", "_abi_constants.py"):  # generated data
            continue
        tree = ast.parse(path.read_text())
        if not ast.get_docstring(tree):
            missing.append(path.name)

        def walk(body, prefix):
            for node in body:
                if not isinstance(node, (ast.FunctionDef, ast.ClassDef)) or node.name.startswith("_"):
                    continue
                decorators = getattr(node, "decorator_list", ())
                if any(isinstance(d, ast.Attribute) and d.attr == "setter" for d in decorators):
                    continue
                if not ast.get_docstring(node):
                    missing.append(f"{path.name}:{node.lineno} {prefix}{node.name}")
                if isinstance(node, ast.ClassDef):
                    walk(node.body, f"{prefix}{node.name}.")
        walk(tree.body, "")
    assert not missing, missing
