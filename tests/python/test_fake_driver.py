"""Run every GPU test against an in-memory CUDA driver (fake_cuda.c), so that the binding's stream,
event, context and device paths run through the real libcucore on machines without a GPU.

The fake is the one CMake built (CUCORE_TEST_FAKE_CUDA), or is compiled here with the system C compiler;
libcucore gets it through CUCORE_CUDA_DRIVER_PATH in a child pytest process (it loads the driver once per
process). Skips with the reason when there is neither a prebuilt fake nor a C compiler, or no libcucore."""
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
    prebuilt = os.environ.get("CUCORE_TEST_FAKE_CUDA")  # built by tests/python/CMakeLists.txt
    if prebuilt and os.path.isfile(prebuilt):
        return prebuilt
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        pytest.skip("no C compiler to build the fake CUDA driver")
    out = tmp_path_factory.mktemp("fake_cuda") / "libcuda.so.1"
    r = subprocess.run([cc, "-shared", "-fPIC", "-O1", "-pthread", "-o", str(out),
                        str(TESTS_DIR / "fake_cuda.c")], capture_output=True, text=True)
    assert r.returncode == 0, f"building the fake driver failed:\n{r.stderr}"
    return out


def test_gpu_suite_under_the_fake_driver(fake_driver_path):
    env = dict(os.environ, CUCORE_CUDA_DRIVER_PATH=str(fake_driver_path), CUCORE_TEST_FAKE_DRIVER="1",
               FAKE_CUDA_DEVICES="2")
    from cucore import _lib
    env.setdefault("CUCORE_LIBRARY", _lib.path())
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "gpu", "-rs",
           str(TESTS_DIR)]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, cwd=str(REPO))
    print(r.stdout[-6000:])
    print(r.stderr[-3000:])
    assert r.returncode == 0, "the GPU tests failed under the fake driver (output above)"
    assert " passed" in r.stdout
