"""An in-tree PEP 517 / PEP 660 build backend for the pure-ctypes `cucore` package.

It needs nothing but the standard library, so `pip install ./bindings/python` works offline (pip's build
isolation installs the build requirements, and there are none). Wheels are written with zipfile.

If the environment variable CUCORE_LIBRARY names a libcucore shared library when a wheel is built, a copy
goes into the package (cucore/libcucore.so...) and the wheel is tagged for this platform; otherwise the
wheel is pure Python (py3-none-any) and finds the library at run time (see cucore/_lib.py).
"""
import base64
import hashlib
import io
import os
import pathlib
import re
import sysconfig
import tarfile
import time
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent  # bindings/python
NAME = "cucore"
SUMMARY = "The CUDA driver API made safe and pleasant: Python (ctypes) binding of libcucore"
REQUIRES_PYTHON = ">=3.8"


def _version():
    text = (ROOT / NAME / "_version.py").read_text()
    return re.search(r'^__version__\s*=\s*"([^"]+)"', text, re.M).group(1)


def _package_files():
    """(archive name, bytes) of the package's Python sources."""
    out = []
    for p in sorted((ROOT / NAME).rglob("*.py")):
        if "__pycache__" in p.parts:
            continue
        out.append((p.relative_to(ROOT).as_posix(), p.read_bytes()))
    return out


def _bundled_library():
    """(archive name, bytes) of the library named by CUCORE_LIBRARY, or None."""
    path = os.environ.get("CUCORE_LIBRARY")
    if not path:
        return None
    p = pathlib.Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"CUCORE_LIBRARY={path} does not name a file")
    name = p.name
    # Keep a loadable name: libcucore.so.0.1.0 -> libcucore.so.0 (the soname); libcucore.so stays.
    m = re.match(r"^(libcucore\.so\.\d+)(\.\d+)*$", name)
    if m:
        name = m.group(1)
    return (f"{NAME}/{name}", p.resolve().read_bytes())


def _metadata():
    readme = ROOT / "README.md"
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {NAME}",
        f"Version: {_version()}",
        f"Summary: {SUMMARY}",
        f"Requires-Python: {REQUIRES_PYTHON}",
        "License: see the repository",
        "Classifier: Programming Language :: Python :: 3",
        "Classifier: Operating System :: POSIX :: Linux",
    ]
    text = "\n".join(lines) + "\n"
    if readme.is_file():
        text = text.replace("Classifier: Programming", "Description-Content-Type: text/markdown\n"
                            "Classifier: Programming", 1)
        text += "\n" + readme.read_text()
    return text


def _platform_tag():
    return re.sub(r"[^A-Za-z0-9]", "_", sysconfig.get_platform())


def _dist_info():
    return f"{NAME}-{_version()}.dist-info"


def _wheel_file(tag):
    return (f"Wheel-Version: 1.0\nGenerator: cucore_build\nRoot-Is-Purelib: "
            f"{'true' if tag.endswith('any') else 'false'}\nTag: {tag}\n")


def _write_wheel(directory, files, tag):
    version = _version()
    wheel_name = f"{NAME}-{version}-{tag}.whl"
    dist_info = _dist_info()
    files = list(files) + [
        (f"{dist_info}/METADATA", _metadata().encode()),
        (f"{dist_info}/WHEEL", _wheel_file(tag).encode()),
        (f"{dist_info}/top_level.txt", f"{NAME}\n".encode()),
    ]
    record = []
    path = pathlib.Path(directory) / wheel_name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for arcname, data in files:
            info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            is_lib = "/libcucore" in arcname
            info.external_attr = ((0o755 if is_lib else 0o644) | 0o100000) << 16
            zf.writestr(info, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{arcname},sha256={digest},{len(data)}")
        record.append(f"{dist_info}/RECORD,,")
        info = zipfile.ZipInfo(f"{dist_info}/RECORD", date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = (0o644 | 0o100000) << 16
        zf.writestr(info, "\n".join(record) + "\n")
    return wheel_name


# ---- PEP 517 hooks ------------------------------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def _prepare_metadata(metadata_directory):
    d = pathlib.Path(metadata_directory) / _dist_info()
    d.mkdir(parents=True, exist_ok=True)
    (d / "METADATA").write_text(_metadata())
    (d / "WHEEL").write_text(_wheel_file("py3-none-any"))
    (d / "top_level.txt").write_text(f"{NAME}\n")
    return d.name


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _prepare_metadata(metadata_directory)


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return _prepare_metadata(metadata_directory)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = _package_files()
    lib = _bundled_library()
    tag = "py3-none-any"
    if lib is not None:
        files.append(lib)
        tag = f"py3-none-{_platform_tag()}"
    return _write_wheel(wheel_directory, files, tag)


_EDITABLE_FINDER = """\
# Installed by `pip install -e bindings/python`: imports cucore from the source tree, in place.
import importlib.util
import sys

_PACKAGE = {package!r}


class _CucoreEditableFinder:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "cucore":
            return None
        return importlib.util.spec_from_file_location(
            name, _PACKAGE + "/__init__.py", submodule_search_locations=[_PACKAGE])


if not any(getattr(f, "__name__", "") == "_CucoreEditableFinder" for f in sys.meta_path):
    sys.meta_path.append(_CucoreEditableFinder)
"""


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # Only `cucore` is mapped to the sources (a plain path entry would also expose tools/ and the backend).
    finder = _EDITABLE_FINDER.format(package=str(ROOT / NAME)).encode()
    files = [(f"__editable___{NAME}_finder.py", finder),
             (f"__editable__.{NAME}.pth", f"import __editable___{NAME}_finder\n".encode())]
    return _write_wheel(wheel_directory, files, "py3-none-any")


def build_sdist(sdist_directory, config_settings=None):
    base = f"{NAME}-{_version()}"
    name = f"{base}.tar.gz"
    members = [("pyproject.toml", (ROOT / "pyproject.toml").read_bytes()),
               ("_build_backend/cucore_build.py", pathlib.Path(__file__).read_bytes()),
               ("PKG-INFO", _metadata().encode())]
    if (ROOT / "README.md").is_file():
        members.append(("README.md", (ROOT / "README.md").read_bytes()))
    members += _package_files()
    with tarfile.open(pathlib.Path(sdist_directory) / name, "w:gz", format=tarfile.PAX_FORMAT) as tf:
        for arcname, data in members:
            info = tarfile.TarInfo(f"{base}/{arcname}")
            info.size = len(data)
            info.mtime = int(time.time())
            info.mode = 0o644
            tf.addfile(info, io.BytesIO(data))
    return name
