"""`pip install ./bindings/python` gives a working package: run by CTest (python_install), no GPU needed.

1. A fresh virtual environment gets a plain `pip install ./bindings/python`, offline: pip's isolated build
   takes the build backend (scikit-build-core) from --wheelhouse (scripts/setup.sh fills build/wheelhouse),
   and the backend builds libcucore into the wheel.
2. Outside the source tree and without CUCORE_LIBRARY, `import cucore` there loads the libcucore inside the
   installed package, `from cucore import *` works without a GPU, and the installed metadata carries the
   license (Apache-2.0, the repository's LICENSE file) and the py.typed marker.
3. A second fresh environment gets `pip install -e ./bindings/python` (the same CMake build folder, so
   nothing is compiled again): cucore then comes from the source tree and still finds a libcucore.
"""
import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
BINDING = REPO / "bindings" / "python"

CHECK = r"""
import importlib.metadata as md, pathlib, sys
import cucore
from cucore import *  # noqa: F401,F403  (must work without a GPU or driver)
lib = pathlib.Path(cucore.library_path()).resolve()
pkg = pathlib.Path(cucore.__file__).resolve().parent
mode = sys.argv[1]
print(f"{mode}: cucore {cucore.__version__} from {pkg}; libcucore {cucore.version_string()} from {lib}")
if mode == "wheel":
    assert pkg.parent.name == "site-packages", pkg
    assert lib.parent == pkg and lib.name == "libcucore.so.0", (lib, pkg)
else:
    assert pkg == pathlib.Path(sys.argv[2]).resolve(), (pkg, sys.argv[2])
    assert "site-packages" in lib.parts, lib   # the library the editable install built, not the build tree's
meta = md.metadata("cucore")
assert meta.get("License-Expression") == "Apache-2.0", meta.get("License-Expression")
files = {str(f) for f in md.files("cucore") or ()}
assert any(f.endswith("licenses/LICENSE") for f in files), sorted(files)
if mode == "wheel":
    assert "cucore/py.typed" in files, sorted(files)
    assert "Apache License" in (pkg.parent / next(f for f in files if f.endswith("licenses/LICENSE"))).read_text()
try:
    print(f"{mode}: {cucore.Device.count()} device(s)")
except cucore.CUDAError as e:
    print(f"{mode}: no GPU here ({type(e).__name__}: {e})".splitlines()[0])
"""


def run(cmd, **kw):
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, **kw)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", required=True, type=pathlib.Path, help="a scratch folder (emptied first)")
    ap.add_argument("--wheelhouse", type=pathlib.Path,
                    help="the build backend's wheels (offline); without it pip fetches them from the index")
    args = ap.parse_args()
    work = args.work.resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("CUCORE_LIBRARY", "PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME") and not k.startswith("PIP_")}
    index = []
    if args.wheelhouse:
        if not any(args.wheelhouse.glob("scikit_build_core-*.whl")):
            sys.exit(f"check_install: no scikit-build-core wheel in {args.wheelhouse}: run scripts/setup.sh")
        index = ["--no-index", "--find-links", args.wheelhouse.resolve()]
    # The CMake build folder is kept under --work (not pip's temporary one), so the editable install
    # below finds the library already built.
    pip_flags = ["--disable-pip-version-check", "--no-cache-dir", *index,
                 f"--config-settings=build-dir={work / 'cmake'}"]
    for mode in ("wheel", "editable"):
        venv = work / f"venv-{mode}"
        run([sys.executable, "-m", "venv", venv], env=env)
        py = venv / "bin" / "python"
        started = time.monotonic()
        run([py, "-m", "pip", "install", "--quiet", *pip_flags, *(["-e"] if mode == "editable" else []), BINDING],
            env=env, cwd=work)
        print(f"check_install: pip install ({mode}) took {time.monotonic() - started:.0f} s", flush=True)
        # In --work, so neither the source tree (the current directory) nor the build tree is on the path.
        run([py, "-c", CHECK, mode, BINDING / "cucore"], env=env, cwd=work)
    print("check_install: OK")


if __name__ == "__main__":
    main()
