"""Run every GPU test against the tests' in-memory CUDA driver (tests/fake_driver, the same one the unit
tests install in-process), so that the binding's stream, event, context and device paths run through the
real libcucore on machines without a GPU.

The fake is the shared library CMake built (CUCORE_TEST_FAKE_CUDA), or is compiled here with the system C++
compiler from tests/fake_driver (needs cuda.h: CUDA_HOME, CUDA_PATH or /usr/local/cuda); libcucore gets it
through CUCORE_CUDA_DRIVER_PATH in a child pytest process (it loads the driver once per process), and the fake
NCCL (CUCORE_TEST_FAKE_NCCL, or libcucore_fake_nccl.so beside the fake driver) through CUCORE_NCCL_PATH. Skips with
the reason when there is neither a prebuilt fake nor a C++ compiler and cuda.h, or no libcucore."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import FAKE_DRIVER, REPO, TESTS_DIR, library_state


@pytest.fixture(scope="module")
def fake_driver_path(tmp_path_factory):
    if FAKE_DRIVER:
        pytest.skip("already running under the fake driver")
    reason = library_state()
    if reason:
        pytest.skip(reason)
    prebuilt = os.environ.get("CUCORE_TEST_FAKE_CUDA")  # built by tests/fake_driver/CMakeLists.txt
    if prebuilt and os.path.isfile(prebuilt):
        return prebuilt
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if not cxx:
        pytest.skip("no C++ compiler to build the fake CUDA driver")
    roots = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH")] + ["/usr/local/cuda"]
    includes = [os.path.join(r, "include") for r in roots if r and os.path.isfile(os.path.join(r, "include", "cuda.h"))]
    if not includes:
        pytest.skip("cuda.h (the CUDA toolkit's headers) not found to build the fake CUDA driver; set CUDA_HOME")
    source = REPO / "tests" / "fake_driver"
    # Everything but the in-process installation, which needs libcucore's internals.
    sources = sorted(str(f) for f in source.glob("*.cpp") if f.name != "in_process.cpp")
    out = tmp_path_factory.mktemp("fake_cuda") / "libcuda.so.1"
    r = subprocess.run([cxx, "-std=c++17", "-shared", "-fPIC", "-O1", "-pthread", "-fvisibility=hidden",
                        f"-I{source}", f"-I{REPO / 'src'}", f"-I{includes[0]}", "-o", str(out), *sources],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"building the fake driver failed:\n{r.stderr}"
    return out


def fake_nccl_path(fake_driver_path):
    """The fake NCCL (tests/fake_nccl, over the fake driver's memory): CUCORE_TEST_FAKE_NCCL, else the one CMake
    built beside the fake driver or libcucore; else a path that does not exist, so that the communicator tests
    skip (NCCL missing) rather than load a real NCCL, which would drive the real driver."""
    from cucore import _lib
    name = "libcucore_fake_nccl.so"
    candidates = [os.environ.get("CUCORE_TEST_FAKE_NCCL"), os.path.join(os.path.dirname(str(fake_driver_path)), name),
                  os.path.join(os.path.dirname(_lib.path()), name)]
    found = next((p for p in candidates if p and os.path.isfile(p)), None)
    return found or f"/nonexistent/{name} (not built: the communicator tests skip)"


def test_gpu_suite_under_the_fake_driver(fake_driver_path):
    env = dict(os.environ, CUCORE_CUDA_DRIVER_PATH=str(fake_driver_path), CUCORE_TEST_FAKE_DRIVER="1",
               FAKE_CUDA_DEVICES="2", CUCORE_NCCL_PATH=fake_nccl_path(fake_driver_path))
    from cucore import _lib
    env.setdefault("CUCORE_LIBRARY", _lib.path())
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "gpu", "-rfEs", "--tb=short",
           str(TESTS_DIR)]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, cwd=str(REPO))
    print(r.stdout[-20000:])
    print(r.stderr[-3000:])
    assert r.returncode == 0, "the GPU tests failed under the fake driver (output above)"
    assert " passed" in r.stdout
