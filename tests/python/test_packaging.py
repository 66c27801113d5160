"""The in-tree build backend, generated files and the package's documentation. No GPU needed."""
import importlib
import subprocess
import sys
import tarfile
import zipfile

import pytest

from conftest import REPO

BINDING = REPO / "bindings" / "python"


@pytest.fixture
def backend(monkeypatch):
    monkeypatch.syspath_prepend(str(BINDING / "_build_backend"))
    return importlib.import_module("cucore_build")


def test_pure_wheel(backend, tmp_path, monkeypatch):
    monkeypatch.delenv("CUCORE_LIBRARY", raising=False)
    name = backend.build_wheel(str(tmp_path))
    assert name == "cucore-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(tmp_path / name) as zf:
        names = zf.namelist()
        assert "cucore/__init__.py" in names and "cucore/_abi.py" in names
        assert "cucore/device_attributes.py" in names
        assert not any("libcucore" in n for n in names)
        assert "cucore-0.1.0.dist-info/RECORD" in names
        meta = zf.read("cucore-0.1.0.dist-info/METADATA").decode()
        assert "Name: cucore" in meta and "Requires-Python: >=3.8" in meta
        assert "Tag: py3-none-any" in zf.read("cucore-0.1.0.dist-info/WHEEL").decode()
        record = zf.read("cucore-0.1.0.dist-info/RECORD").decode()
        assert "cucore/_lib.py,sha256=" in record


def test_wheel_bundles_the_library(backend, tmp_path, monkeypatch, lib):
    monkeypatch.setenv("CUCORE_LIBRARY", lib.path())
    name = backend.build_wheel(str(tmp_path))
    assert "py3-none-any" not in name
    with zipfile.ZipFile(tmp_path / name) as zf:
        libs = [n for n in zf.namelist() if n.startswith("cucore/libcucore")]
        assert len(libs) == 1
        assert zf.getinfo(libs[0]).file_size > 10000


def test_sdist_and_editable(backend, tmp_path):
    name = backend.build_sdist(str(tmp_path))
    with tarfile.open(tmp_path / name) as tf:
        names = tf.getnames()
    assert "cucore-0.1.0/pyproject.toml" in names and "cucore-0.1.0/_build_backend/cucore_build.py" in names
    assert "cucore-0.1.0/cucore/stream.py" in names
    ed = backend.build_editable(str(tmp_path / "ed"), None) if (tmp_path / "ed").mkdir() is None else None
    with zipfile.ZipFile(tmp_path / "ed" / ed) as zf:
        assert "__editable__.cucore.pth" in zf.namelist()
    assert backend.get_requires_for_build_wheel() == []


def test_abi_table_is_pure_data():
    import ast
    for name in ("_abi.py", "_abi_constants.py"):
        tree = ast.parse((BINDING / "cucore" / name).read_text())
        assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom, ast.Call))], name
def test_every_module_and_public_name_has_a_docstring():
    # Every module, and every public class, function and method (property setters aside), says what it is.
    import ast
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
