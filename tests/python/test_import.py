"""Importing never needs libcucore; the first call explains what was searched. No GPU needed."""
import os
import subprocess
import sys
import textwrap

from conftest import REPO

BINDING = str(REPO / "bindings" / "python")


def run_python(code, **env_changes):
    env = dict(os.environ)
    env.update({k: v for k, v in env_changes.items() if v is not None})
    for k, v in env_changes.items():
        if v is None:
            env.pop(k, None)
    env["PYTHONPATH"] = BINDING
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True,
                          text=True, timeout=120, cwd=str(REPO))


def test_import_does_not_load_the_library(tmp_path):
    r = run_python("""
        import cucore, cucore._lib as L
        assert not L.is_loaded()
        print(cucore.__version__, cucore.Device, cucore.EventOptions(), cucore.StreamOptions())
        """, CUCORE_LIBRARY=str(tmp_path / "missing" / "libcucore.so"))
    assert r.returncode == 0, r.stderr


def test_missing_library_raises_a_clear_error_on_first_call(tmp_path):
    missing = tmp_path / "nowhere" / "libcucore.so"
    r = run_python("""
        import cucore
        for call in (cucore.Device.count, cucore.Device, cucore.version):
            try:
                call()
            except cucore.LibraryNotFoundError as e:
                assert isinstance(e, OSError) and isinstance(e, cucore.CUDAError)
                print(e)
            else:
                raise SystemExit("no error")
        """, CUCORE_LIBRARY=str(missing))
    assert r.returncode == 0, r.stderr
    assert "CUCORE_LIBRARY" in r.stdout and str(missing) in r.stdout and "does not exist" in r.stdout


def test_unloadable_library_names_the_loader_error(tmp_path):
    bogus = tmp_path / "libcucore.so"
    bogus.write_text("not an ELF file")
    r = run_python("""
        import cucore
        try:
            cucore.Device.count()
        except cucore.LibraryNotFoundError as e:
            print(e)
        """, CUCORE_LIBRARY=str(bogus))
    assert r.returncode == 0, r.stderr
    assert str(bogus) in r.stdout


def test_search_lists_every_place_without_the_env_var(tmp_path):
    # Copy the package somewhere outside the checkout so neither the build tree nor a copy is found.
    import shutil
    pkg = tmp_path / "site" / "cucore"
    shutil.copytree(os.path.join(BINDING, "cucore"), pkg, ignore=shutil.ignore_patterns("libcucore*",
                                                                                        "__pycache__"))
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "site"), LD_LIBRARY_PATH="")
    env.pop("CUCORE_LIBRARY", None)
    code = textwrap.dedent("""
        import cucore
        try:
            cucore.driver_version()
        except cucore.LibraryNotFoundError as e:
            print(e)
        else:
            print("LOADED", cucore.library_path())
        """)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                       cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    if r.stdout.startswith("LOADED"):  # libcucore is installed system-wide here
        return
    for what in ("CUCORE_LIBRARY: not set", "package copy", "build tree", "system loader", "libcucore.so.0"):
        assert what in r.stdout, r.stdout


def test_library_found_in_build_tree_or_env(lib):
    import cucore
    assert os.path.exists(cucore.library_path()) or cucore.library_path().startswith("libcucore")


def _ctypes_module_path():
    import _ctypes  # a loadable shared object that is not libcucore
    return _ctypes.__file__


def test_env_var_naming_another_library_is_an_error(tmp_path):
    r = run_python("""
        import cucore
        try:
            cucore.Device.count()
        except cucore.LibraryNotFoundError as e:
            print(e)
        """, CUCORE_LIBRARY=_ctypes_module_path())
    assert r.returncode == 0, r.stderr
    assert "exports no cucore_version" in r.stdout


def test_star_import_needs_no_library_and_no_driver(tmp_path):
    # `from cucore import *` takes every name of __all__: none may ask the driver (the default streams are
    # looked up on access, so they stay out of __all__ and stay reachable as attributes).
    code = """
        import cucore, cucore._lib as L
        from cucore import *
        names = dict(globals())
        missing = [n for n in cucore.__all__ if n not in names]
        assert not missing, missing
        assert "LEGACY_DEFAULT_STREAM" not in cucore.__all__ and "LEGACY_DEFAULT_STREAM" in dir(cucore)
        print("loaded" if L.is_loaded() else "not loaded")
        """
    r = run_python(code, CUCORE_LIBRARY=str(tmp_path / "missing" / "libcucore.so"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "not loaded"
    # With the library but without a driver (the GPU server forces that too).
    r = run_python(code, CUCORE_CUDA_DRIVER_PATH="/nonexistent/cucore-test/libcuda.so.1")
    assert r.returncode == 0, r.stderr


def test_public_classes_are_named_by_the_package():
    # A traceback says cucore.NoDriverError, not cucore.common.NoDriverError; pickle still finds each class.
    import pickle
    import traceback

    import cucore
    classes = [getattr(cucore, n) for n in cucore.__all__ if isinstance(getattr(cucore, n), type)]
    assert len(classes) > 40
    for cls in classes:
        assert cls.__module__ == "cucore", cls
        assert getattr(cucore, cls.__qualname__) is cls
        assert pickle.loads(pickle.dumps(cls)) is cls
    try:
        raise cucore.NoDriverError(cucore.Status.ERROR_NO_DRIVER, "no CUDA driver (test)")
    except cucore.NoDriverError as e:
        text = "".join(traceback.format_exception(type(e), e, e.__traceback__))
        again = pickle.loads(pickle.dumps(e))
    assert "cucore.NoDriverError: " in text and "cucore.common" not in text, text
    assert type(again) is cucore.NoDriverError and again.status == cucore.Status.ERROR_NO_DRIVER
    assert pickle.loads(pickle.dumps(cucore.Status.ERROR_NO_DRIVER)) is cucore.Status.ERROR_NO_DRIVER
    assert pickle.loads(pickle.dumps(cucore.LaunchConfig(grid=1, block=1))) == cucore.LaunchConfig(grid=1, block=1)
