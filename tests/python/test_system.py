"""cucore.system (NVML): against the tests' fake NVML (libcucore_fake_nvml.so, in a child process, since
libcucore loads NVML once per process), without NVML (a clear NotSupportedError, the rest working), and on a
GPU against the real NVML and the CUDA driver."""
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import cucore
from cucore import system
from conftest import FAKE_DRIVER, REPO, library_state


def _library_dir():
    from cucore import _lib
    return pathlib.Path(_lib.path()).parent


def _fake(name):
    """A fake library CMake built beside libcucore (or the fake CUDA driver), or None."""
    candidates = [_library_dir() / name]
    fake_cuda = os.environ.get("CUCORE_TEST_FAKE_CUDA")
    if fake_cuda:
        candidates.insert(0, pathlib.Path(fake_cuda).with_name(name))
    return next((str(p.resolve()) for p in candidates if p.is_file()), None)


def _run(script, **env):
    """Runs `script` in a child Python with `env` added; returns its stdout (fails on a non-zero exit)."""
    from cucore import _lib
    full = dict(os.environ, PYTHONPATH=str(REPO / "bindings" / "python"), CUCORE_LIBRARY=_lib.path(), **env)
    full.pop("CUCORE_TEST_FAKE_DRIVER", None)
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], env=full, capture_output=True, text=True,
                       timeout=120, cwd=str(REPO))
    assert r.returncode == 0, f"child failed:\n{r.stdout}\n{r.stderr}"
    return r.stdout


@pytest.fixture(scope="module")
def fakes():
    reason = library_state()
    if reason:
        pytest.skip(reason)
    nvml, cuda = _fake("libcucore_fake_nvml.so"), _fake("libcucore_fake_cuda.so")
    if not nvml or not cuda:
        pytest.skip("the fake NVML and fake CUDA driver (tests/fake_nvml, tests/fake_driver) are not built beside "
                    f"libcucore in {_library_dir()}")
    return {"CUCORE_NVML_PATH": nvml, "CUCORE_CUDA_DRIVER_PATH": cuda, "FAKE_NVML_DEVICES": "2",
            "FAKE_CUDA_DEVICES": "2"}


def test_everything_against_the_fake_nvml(fakes):
    out = _run("""
        import ctypes, os
        import cucore
        from cucore import system
        fake = ctypes.CDLL(os.environ["CUCORE_NVML_PATH"])
        assert system.get_kernel_mode_driver_version() == (580, 65, 6)
        assert system.get_nvml_version() == (13, 580, 65, 6)
        assert system.get_cuda_driver_version() == 13000
        assert system.get_user_mode_driver_version() == (13, 0)
        assert system.get_driver_version() == ((13, 0), (580, 65, 6))
        assert system.get_num_devices() == 2
        d = system.Device(1)
        assert d.index == 1 and d.name == "Fake GPU 1"
        assert d.uuid == "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f"
        assert d.pci_bus_id == "00000000:02:00.0"
        assert d.pci_info == system.PciInfo("00000000:02:00.0", 0, 2, 0, 0x233010de, 0x16c110de)
        assert d.memory_info == system.MemoryInfo((80 << 30) + 1, 1 << 30, (80 << 30) + 1 - (1 << 30))
        assert d.utilization == system.Utilization(11, 21)
        assert (d.temperature, d.power_usage, d.power_limit) == (41, 100001, 700000)
        assert d.clocks == {"graphics": 1756, "sm": 1756, "memory": 2619, "video": 1545}
        assert d.max_clock("sm") == 1980 and d.clock("MEMORY") == 2619
        try:
            d.clock("shader")
            raise AssertionError("a bad clock kind")
        except ValueError as e:
            assert "graphics, sm, memory, video" in str(e)
        assert d.compute_mode == "default"
        fake.fake_nvml_set_compute_mode(3)
        assert d.compute_mode == "exclusive_process"
        assert d.compute_running_processes == []
        pids = (ctypes.c_uint * 2)(77, 88)
        used = (ctypes.c_ulonglong * 2)(1 << 20, system.MEMORY_NOT_AVAILABLE)
        fake.fake_nvml_set_processes(pids, used, 2)
        assert d.compute_running_processes == [system.ProcessInfo(77, 1 << 20),
                                               system.ProcessInfo(88, system.MEMORY_NOT_AVAILABLE)]
        assert system.Device(uuid=d.uuid) == d
        assert system.Device(pci_bus_id="0000:02:00.0") == d
        assert d.to_cuda_device() is cucore.Device(1)
        assert cucore.Device(1).to_system_device() == d
        assert cucore.Device(0).to_system_device().index == 0
        assert "system.Device 1: Fake GPU 1" in repr(d)
        assert d.handle == 2  # the fake's nvmlDevice_t of GPU 1
        import copy
        twin = copy.copy(d)
        assert twin == d and twin is not d
        twin.close()
        assert d.name == "Fake GPU 1"  # its own reference
        for bad in ({}, {"index": 0, "uuid": "x"}):
            try:
                system.Device(**bad)
                raise AssertionError(bad)
            except TypeError:
                pass
        try:
            system.Device(5)
            raise AssertionError("no GPU 5")
        except cucore.InvalidArgumentError as e:
            assert "not below the number of GPUs NVML sees (2)" in str(e)
        try:
            system.Device(uuid="GPU-ffffffff-0000-0000-0000-000000000000")
            raise AssertionError("no such UUID")
        except cucore.InvalidArgumentError as e:
            assert "NVML_ERROR_NOT_FOUND" in str(e)
        fake.fake_nvml_fail_entry(b"nvmlDeviceGetPowerUsage", 3)
        try:
            d.power_usage
            raise AssertionError("refused")
        except cucore.NotSupportedError as e:
            assert "nvmlDeviceGetPowerUsage failed: NVML_ERROR_NOT_SUPPORTED (Not Supported)" in str(e)
        fake.fake_nvml_fail_entry(None, 0)
        assert d.power_usage == 100001
        d.close()
        try:
            d.name
            raise AssertionError("closed")
        except cucore.InvalidHandleError:
            pass
        print("ok")
    """, **fakes)
    assert out.strip().endswith("ok")


def test_without_nvml_each_call_says_so_and_the_rest_works(fakes):
    out = _run("""
        import cucore
        from cucore import system
        for call in (system.get_num_devices, system.get_nvml_version, system.get_kernel_mode_driver_version,
                     lambda: system.Device(0), lambda: cucore.Device(0).to_system_device()):
            try:
                call()
                raise AssertionError("NVML is absent")
            except cucore.NotSupportedError as e:
                assert "libnvidia-ml.so.1 could not be loaded" in str(e), str(e)
        assert system.get_user_mode_driver_version() == (13, 0)  # the CUDA driver's, no NVML needed
        assert cucore.Device(0).name == "Fake GPU 0"
        print("ok")
    """, **dict(fakes, CUCORE_NVML_PATH="/nonexistent/libnvidia-ml.so.1"))
    assert out.strip().endswith("ok")


@pytest.mark.gpu
def test_nvml_agrees_with_the_cuda_driver(gpu, fake_driver):
    if fake_driver:
        pytest.skip("the real NVML describes the real GPUs, not the fake driver's")
    try:
        count = system.get_num_devices()
    except cucore.NotSupportedError as e:
        pytest.skip(f"NVML is not available here: {e}")
    assert count >= cucore.Device.count() > 0  # CUDA_VISIBLE_DEVICES may hide some from CUDA
    d = gpu.to_system_device()
    assert d.uuid == "GPU-" + gpu.uuid
    assert d.name == gpu.name
    assert d.to_cuda_device() is gpu
    assert system.Device(uuid=d.uuid) == d
    assert system.Device(pci_bus_id=gpu.pci_bus_id) == d
    assert system.Device(d.index) == d
    assert d.pci_bus_id.lower().endswith(gpu.pci_bus_id.lower().split(":", 1)[1])
    info = d.pci_info
    _, bus, slot = gpu.pci_bus_id.split(".")[0].split(":")  # "dddd:bb:dd.f"
    assert (info.bus, info.device) == (int(bus, 16), int(slot, 16))
    assert info.pci_device_id & 0xFFFF == 0x10DE  # NVIDIA's vendor id
    memory = d.memory_info
    total = gpu.total_memory
    # NVML's total counts the memory the driver reserves for itself, which CUDA's leaves out (about 0.5 GiB
    # of an H100's 80): the two agree within 5 %, NVML's never the smaller.
    assert total <= memory.total <= total * 1.05, (total, memory.total)
    assert memory.used + memory.free == memory.total
    major, minor = system.get_user_mode_driver_version()
    assert system.get_cuda_driver_version() == cucore.driver_version() == major * 1000 + minor * 10
    kmd = system.get_kernel_mode_driver_version()
    assert len(kmd) >= 2 and kmd[0] >= 500
    assert d.power_limit > 0
    assert 0 < d.temperature < 120
    util = d.utilization
    assert 0 <= util.gpu <= 100 and 0 <= util.memory <= 100
    assert d.max_clock("sm") >= d.clock("sm") > 0
    assert d.compute_mode in ("default", "exclusive_thread", "prohibited", "exclusive_process")
    assert all(p.pid > 0 for p in d.compute_running_processes)

