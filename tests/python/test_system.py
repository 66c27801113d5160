"""cucore.system (NVML): against the tests' fake NVML (libcucore_fake_nvml.so, in a child process, since
libcucore loads NVML once per process), without NVML (a clear LibraryNotFoundError, the rest working), and on a
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


def _child(script, **env):
    """Runs `script` in a child Python with `env` added; returns the finished process."""
    from cucore import _lib
    full = dict(os.environ, PYTHONPATH=str(REPO / "bindings" / "python"), CUCORE_LIBRARY=_lib.path(), **env)
    full.pop("CUCORE_TEST_FAKE_DRIVER", None)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], env=full, capture_output=True, text=True,
                          timeout=120, cwd=str(REPO))


def _run(script, **env):
    """Runs `script` in a child Python with `env` added; returns its stdout (fails on a non-zero exit)."""
    r = _child(script, **env)
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
        d = system.Device(index=1)
        assert d.index == 1 and d.name == "Fake GPU 1"
        assert d.uuid == "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f"
        assert d.pci_bus_id == "00000000:02:00.0"
        pci = d.pci_info
        assert (pci.bus_id, pci.domain, pci.bus, pci.device) == ("00000000:02:00.0", 0, 2, 0)
        assert (pci.pci_device_id, pci.pci_sub_system_id) == (0x233010de, 0x16c110de)
        memory = d.memory_info
        assert (memory.total, memory.used, memory.reserved) == ((80 << 30) + 1, 1 << 30, 512 << 20)
        assert memory.free == memory.total - memory.used - memory.reserved
        assert d.utilization == system.Utilization(11, 21)
        assert (d.temperature.get_sensor(), int(d.temperature), d.power_usage, d.power_limit) == (41, 41, 100001,
                                                                                                 700000)
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
        assert d.compute_running_processes[0].gpu_instance_id == 0xFFFFFFFF
        assert system.Device(uuid=d.uuid) == d
        assert system.Device(uuid=d.uuid.encode()) == d
        assert system.Device(pci_bus_id="0000:02:00.0") == d
        assert system.Device(index=1) == d
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
            except ValueError:  # cuda.core's error for anything but one of them
                pass
        try:
            system.Device(index=5)
            raise AssertionError("no GPU 5")
        except system.InvalidArgumentError as e:
            assert e.status == 2 and "not below the number of GPUs NVML sees (2)" in str(e)
        try:
            system.Device(uuid="GPU-ffffffff-0000-0000-0000-000000000000")
            raise AssertionError("no such UUID")
        except system.NotFoundError as e:
            assert "NVML_ERROR_NOT_FOUND" in str(e)
        fake.fake_nvml_fail_entry(b"nvmlDeviceGetPowerUsage", 3)
        try:
            d.power_usage
            raise AssertionError("refused")
        except system.NotSupportedError as e:
            assert isinstance(e, system.NvmlError) and e.status == 3
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


def test_every_cuda_core_member_against_the_fake_nvml(fakes):
    out = _run("""
        import ctypes, os
        from cucore import system
        from cucore.system.typing import (AddressingMode, AffinityScope, ClockId, ClocksEventReasons, ClockType,
                                          CoolerControl, CoolerTarget, DeviceArch, EventType, FanControlPolicy,
                                          FieldId, GpuP2PCapsIndex, GpuP2PStatus, GpuTopologyLevel, InforomObject,
                                          TemperatureThresholds, ThermalController, ThermalTarget)
        fake = ctypes.CDLL(os.environ["CUCORE_NVML_PATH"])
        assert system.CUDA_BINDINGS_NVML_IS_COMPATIBLE is True
        assert system.get_driver_branch() == "r580_00"
        assert system.get_process_name(4321) == "fake-process-4321"
        try:
            system.get_process_name(0)
            raise AssertionError("no process 0")
        except system.NotFoundError as e:
            assert e.status == 6
        d0, d1 = system.Device(index=0), system.Device(index=1)
        assert system.Device.get_device_count() == 2
        assert list(system.Device.get_all_devices()) == [d0, d1]
        assert list(system.Device.get_all_devices_with_cpu_affinity(5)) == [d1]
        assert d1.uuid_without_prefix == "10111213-1415-1617-1819-1a1b1c1d1e1f"
        assert (d1.numa_node_id, d1.minor_number, d1.module_id) == (1, 1, 2)
        assert d0.arch is DeviceArch.HOPPER and d0.arch.name == "HOPPER"
        assert d0.brand == "NVIDIA" and d1.serial == "1658220000001"
        assert (d0.is_c2c_enabled, d1.is_c2c_enabled) == (False, True)
        assert d0.is_persistence_mode_enabled is True
        d0.is_persistence_mode_enabled = False
        assert d0.is_persistence_mode_enabled is False
        assert d0.cuda_compute_capability == (9, 0)
        assert (d0.addressing_mode, d1.addressing_mode) == (AddressingMode.HMM, None)
        assert d0.get_memory_affinity() == [0] and d1.get_memory_affinity("socket") == [1]
        assert d1.get_cpu_affinity(AffinityScope.NODE) == [4, 5, 6, 7]
        d0.set_cpu_affinity()
        d0.clear_cpu_affinity()
        clock = d1.get_clock(ClockType.GRAPHICS)
        assert clock.get_current_mhz() == 1756 and clock.get_current_mhz(ClockId.CUSTOMER_BOOST_MAX) == 1980
        assert d1.get_clock("memory").get_max_mhz() == 2619
        assert clock.get_max_customer_boost_mhz() == 1980
        assert clock.get_min_max_clock_of_pstate_mhz(2) == (212, 1980)
        offsets = d0.get_clock("sm").get_offsets(2)
        assert (offsets.clock_offset_mhz, offsets.min_offset_mhz, offsets.max_offset_mhz) == (12, -500, 1000)
        try:
            clock.get_offsets(16)
            raise AssertionError("P-state 16")
        except ValueError:
            pass
        assert d0.is_auto_boosted_clocks_enabled == (True, False)
        assert d0.current_clock_event_reasons == [ClocksEventReasons.GPU_IDLE]
        assert len(d0.supported_clock_event_reasons) == 9
        cooler = d0.cooler
        assert cooler.signal_type is CoolerControl.VARIABLE
        assert cooler.target == [CoolerTarget.GPU, CoolerTarget.MEMORY]
        a = d1.attributes
        assert (a.multiprocessor_count, a.shared_copy_engine_count, a.shared_ofa_count, a.memory_size_mb) == (
            133, 7, 1, 81559)
        assert (d0.is_display_connected, d0.is_display_active) == (False, False)
        assert d0.get_supported_event_types() == [EventType.SINGLE_BIT_ECC_ERROR, EventType.DOUBLE_BIT_ECC_ERROR,
                                                  EventType.XID_CRITICAL_ERROR]
        assert d0.num_fans == 1
        fan = d0.get_fan()
        assert (fan.speed, fan.speed_rpm, fan.target_speed, fan.min_max_speed) == (30, 1500, 35, (20, 100))
        assert fan.control_policy is FanControlPolicy.TEMPERATURE_CONTROLLED
        fan.speed = 75
        assert fan.speed == 75
        fan.set_default_speed()
        assert fan.speed == 30
        try:
            d0.get_fan(3)
            raise AssertionError("no fan 3")
        except ValueError as e:
            assert str(e) == "Fan index 3 is out of range [0, 1)", e
        values = d0.get_field_values([FieldId.DEV_NVLINK_LINK_COUNT, (FieldId.DEV_POWER_INSTANT, 0),
                                      FieldId.DEV_ECC_PENDING])
        assert len(values) == 3
        assert values[0].field_id is FieldId.DEV_NVLINK_LINK_COUNT and values[0].value == 18
        assert values[1].value == 100.5 and values[1].latency_usec == 7 and values[1].scope_id == 0
        assert values[2].timestamp > 0
        try:
            values[2].value
            raise AssertionError("field not supported")
        except system.NotSupportedError:
            pass
        try:
            values.validate()
            raise AssertionError("validate")
        except system.NotSupportedError:
            pass
        assert values[0:2] and [v.value for v in list(values)[:2]] == [18, 100.5]
        d0.clear_field_values([FieldId.DEV_NVLINK_LINK_COUNT])
        inforom = d0.inforom
        assert inforom.get_version(InforomObject.ECC) == "7.0" and inforom.get_version("oem") == "2.1"
        assert inforom.image_version == "G520.0200.00.05"
        assert inforom.configuration_checksum == 0x1234
        inforom.validate()
        assert inforom.bbx_flush_time == (1700000000, 1500)
        assert inforom.board_part_number == "692-2G520-0200-000"
        fake.fake_nvml_fail_entry(b"nvmlDeviceValidateInforom", 14)
        try:
            inforom.validate()
            raise AssertionError("corrupted")
        except system.CorruptedInforomError:
            pass
        fake.fake_nvml_fail_entry(None, 0)
        bar1 = d1.bar1_memory_info
        assert isinstance(bar1, system.MemoryInfo)
        assert (bar1.total, bar1.used, bar1.free) == (128 << 30, (32 << 20) + 1, (128 << 30) - (32 << 20) - 1)
        assert d0.get_nvlink_count() == 18
        link = d0.get_nvlink(15)
        assert isinstance(link, system.NvlinkInfo) and link.version == (4, 0) and link.state is True
        assert d0.get_nvlink(16).state is False
        assert len(list(d0.get_nvlinks())) == 18 and system.NvlinkInfo.max_links == 18
        try:
            d0.get_nvlink(18)
            raise AssertionError("link 18")
        except ValueError:
            pass
        pci = d1.pci_info
        assert (pci.vendor_id, pci.device_id, pci.subsystem_id) == (0x10de, 0x2330, 0x16c110de)
        assert (pci.base_class, pci.sub_class) == (3, 2)
        assert (pci.link_generation, pci.max_link_generation, pci.max_link_width) == (5, 5, 16)
        assert (pci.current_link_generation, pci.current_link_width) == (4, 8)
        assert (pci.tx_throughput, pci.rx_throughput, pci.replay_counter) == (1000, 2000, 4)
        assert (d0.performance_state, d1.performance_state) == (0, None)
        assert d0.supported_pstates == [0, 5, 8]
        pstates = d1.dynamic_pstates_info
        assert len(pstates) == 8 and pstates[0].is_present and not pstates[1].is_present
        assert (pstates[0].percentage, pstates[0].inc_threshold, pstates[0].dec_threshold) == (11, 30, 20)
        assert (d1.repair_status.channel_repair_pending, d1.repair_status.tpc_repair_pending) == (False, True)
        t = d1.temperature
        assert t.get_sensor() == 41 and t.margin == 44
        assert t.get_threshold(TemperatureThresholds.SLOWDOWN) == 89 and t.get_threshold("shutdown") == 92
        try:
            t.get_threshold("acoustic_min")
            raise AssertionError("acoustic")
        except system.NotSupportedError:
            pass
        sensors = t.get_thermal_settings(ThermalTarget.ALL)
        assert len(sensors) == 1
        s = sensors[0]
        assert (s.controller, s.target) == (ThermalController.GPU_INTERNAL, ThermalTarget.GPU)
        assert (s.default_min_temp, s.default_max_temp, s.current_temp) == (0, 92, 41)
        assert list(d0.get_topology_nearest_gpus(GpuTopologyLevel.NODE)) == [d1]
        assert system.get_topology_common_ancestor(d0, d1) is GpuTopologyLevel.NODE
        assert system.get_p2p_status(d0, d1, GpuP2PCapsIndex.READ) is GpuP2PStatus.OK
        assert system.get_p2p_status(d0, d1, "atomics") is GpuP2PStatus.NOT_SUPPORTED
        mig = d0.mig
        assert (mig.is_mig_device, mig.mode, mig.pending_mode, mig.device_count) == (False, False, False, 0)
        mig.mode = True
        assert (mig.mode, mig.pending_mode) == (False, True)
        assert list(mig.get_all_devices()) == []
        try:
            mig.get_device_by_index(0)
            raise AssertionError("no MIG device")
        except system.NotFoundError:
            pass
        try:
            mig.parent
            raise AssertionError("not a MIG device")
        except system.InvalidArgumentError:
            pass
        events = d0.register_events([EventType.XID_CRITICAL_ERROR, "single_bit_ecc_error"])
        try:
            events.wait(timeout_ms=5)
            raise AssertionError("no event yet")
        except system.TimeoutError as e:
            assert e.status == 10 and isinstance(e, system.NvmlError)
        fake.fake_nvml_post_event(0, 0x8, 79)
        event = events.wait(timeout_ms=1000)
        assert event.event_type is EventType.XID_CRITICAL_ERROR and event.event_data == 79
        assert event.device == d0 and event.gpu_instance_id == 0xFFFFFFFF
        assert fake.fake_nvml_live_event_sets() == 1
        events.close()
        assert fake.fake_nvml_live_event_sets() == 0
        try:
            d0.register_events(EventType.CLOCK)
            raise AssertionError("clock events are not supported here")
        except system.NotSupportedError:
            pass
        try:
            d0.get_clock("shader")
            raise AssertionError("a bad clock type")
        except ValueError as e:
            assert "'graphics'" in str(e)
        print("ok")
    """, **fakes)
    assert out.strip().endswith("ok")


def test_system_events_against_the_fake_nvml(fakes):
    out = _run("""
        import ctypes, os
        import cucore
        from cucore import system
        from cucore.system.typing import SystemEventType
        fake = ctypes.CDLL(os.environ["CUCORE_NVML_PATH"])
        fake.fake_nvml_post_system_event.argtypes = [ctypes.c_ulonglong, ctypes.c_uint]
        fake.fake_nvml_live_system_event_sets.restype = ctypes.c_ulong
        fake.fake_nvml_fail_entry.argtypes = [ctypes.c_char_p, ctypes.c_int]
        UNBIND, BIND = 1, 2  # NVML's nvmlSystemEventType bits
        GPU0, GPU1 = 0x100, 0x200  # packed PCI locations of the fake's 00000000:01:00.0 and 00000000:02:00.0
        fake.fake_nvml_post_system_event(BIND, GPU0)  # before any registration: recorded nowhere
        events = system.register_events([SystemEventType.UNBIND, "bind"])
        assert isinstance(events, system.RegisteredSystemEvents) and fake.fake_nvml_live_system_event_sets() == 1
        try:
            events.wait(timeout_ms=5)
            raise AssertionError("no event yet")
        except system.TimeoutError as e:
            assert e.status == 10 and isinstance(e, system.NvmlError) and "nvmlSystemEventSetWait" in str(e)
        fake.fake_nvml_post_system_event(UNBIND, GPU1)
        fake.fake_nvml_post_system_event(BIND, GPU0)
        fake.fake_nvml_post_system_event(BIND, GPU1)
        got = events.wait(timeout_ms=1000, buffer_size=2)
        assert isinstance(got, system.SystemEvents) and len(got) == 2
        assert [(e.event_type, e.gpu_id) for e in got] == [(SystemEventType.UNBIND, GPU1), (SystemEventType.BIND, GPU0)]
        assert isinstance(got[0], system.SystemEvent) and got[-1] is got[1] and list(got) == [got[0], got[1]]
        assert got[0].device == system.Device(index=1) and got[1].device.pci_bus_id == "00000000:01:00.0"
        rest = events.wait(buffer_size=8)  # no time limit: one is ready
        assert len(rest) == 1 and rest[0].event_type is SystemEventType.BIND and rest[0].device.index == 1
        # A set records only its own types.
        binds = system.register_events(SystemEventType.BIND)
        fake.fake_nvml_post_system_event(UNBIND, GPU0)
        try:
            binds.wait(timeout_ms=1)
            raise AssertionError("an unbind is not recorded in a set of binds")
        except system.TimeoutError:
            pass
        assert [e.gpu_id for e in events.wait(timeout_ms=1, buffer_size=3)] == [GPU0]
        assert fake.fake_nvml_live_system_event_sets() == 2
        events.close()
        binds.close()
        assert fake.fake_nvml_live_system_event_sets() == 0
        try:
            events.wait()
            raise AssertionError("closed")
        except cucore.InvalidHandleError:
            pass
        for bad in ("suspend", []):
            try:
                system.register_events(bad)
                raise AssertionError(bad)
            except ValueError:
                pass
        for bad in (0, -1):
            try:
                system.register_events("bind").wait(buffer_size=bad)
                raise AssertionError(bad)
            except system.InvalidArgumentError as e:  # NVML's answer to an empty buffer, as cuda.core's
                assert e.status == 2
        assert fake.fake_nvml_live_system_event_sets() == 0, "freed with their wrappers"
        fake.fake_nvml_fail_entry(b"nvmlSystemRegisterEvents", 3)  # as on a VM: NVML's NOT_SUPPORTED
        try:
            system.register_events(SystemEventType.UNBIND)
            raise AssertionError("not supported")
        except system.NotSupportedError as e:
            assert e.status == 3
        fake.fake_nvml_fail_entry(None, 0)
        assert fake.fake_nvml_live_system_event_sets() == 0
        print("ok")
    """, **fakes)
    assert out.strip().endswith("ok")


# The same system-event scenario through either package (argv[1]); the fake NVML is found as
# libnvidia-ml.so.1 on LD_LIBRARY_PATH, as cuda.core looks for it, and is the library both packages call.
_EVENTS_BOTH = """
import ctypes, importlib, json, sys
fake = ctypes.CDLL("libnvidia-ml.so.1")
fake.fake_nvml_post_system_event.argtypes = [ctypes.c_ulonglong, ctypes.c_uint]
system = importlib.import_module(sys.argv[1] + ".system")
typing = importlib.import_module(sys.argv[1] + ".system.typing")
if not system.CUDA_BINDINGS_NVML_IS_COMPATIBLE:  # a cuda-bindings without NVML: cuda.core's system is inert
    print(json.dumps("incompatible"))
    sys.exit(0)
out = []
events = system.register_events([typing.SystemEventType.UNBIND, "bind"])
try:
    events.wait(timeout_ms=5)
except system.TimeoutError:
    out.append("TimeoutError")
fake.fake_nvml_post_system_event(1, 0x200)
fake.fake_nvml_post_system_event(2, 0x100)
fake.fake_nvml_post_system_event(2, 0x200)
got = events.wait(timeout_ms=100, buffer_size=2)
out.append([[str(got[i].event_type), got[i].gpu_id, got[i].device.pci_bus_id, got[i].device.index]
            for i in range(len(got))])
rest = events.wait(buffer_size=8)
out.append([len(rest), str(rest[0].event_type), rest[0].device.index, bool(rest)])
try:
    got[5]
except IndexError:
    out.append("IndexError")
try:
    events.wait(buffer_size=0)
except system.InvalidArgumentError:
    out.append("InvalidArgumentError")
try:
    system.register_events("suspend")
except ValueError:
    out.append("ValueError")
print(json.dumps(out))
"""


def test_system_events_behave_as_cuda_cores_on_the_fake_nvml(fakes, tmp_path):
    import importlib.util
    if importlib.util.find_spec("cuda") is None or importlib.util.find_spec("cuda.core") is None:
        pytest.skip("cuda.core is not installed beside cucore here (the GPU server has it)")
    libs = tmp_path / "libs"
    libs.mkdir()
    (libs / "libnvidia-ml.so.1").symlink_to(fakes["CUCORE_NVML_PATH"])
    (libs / "libcuda.so.1").symlink_to(fakes["CUCORE_CUDA_DRIVER_PATH"])
    env = dict(fakes, LD_LIBRARY_PATH=f"{libs}:{os.environ.get('LD_LIBRARY_PATH', '')}")
    expected = ["TimeoutError", [["unbind", 0x200, "00000000:02:00.0", 1], ["bind", 0x100, "00000000:01:00.0", 0]],
                [1, "bind", 1, True], "IndexError", "InvalidArgumentError", "ValueError"]
    import json
    script = textwrap.dedent(_EVENTS_BOTH)
    ours = json.loads(_run(script.replace("sys.argv[1]", "'cucore'"), **env).strip().splitlines()[-1])
    assert ours == expected
    r = _child(script.replace("sys.argv[1]", "'cuda.core'"), **env)
    if r.returncode != 0 and "cannot resize this array" in r.stderr:
        # cuda-bindings 13.3's nvml.system_event_set_wait resizes a NumPy array it does not own (the GPU
        # server's version): cuda.core cannot wait there at all, so there is nothing to compare with.
        pytest.skip("cuda-bindings' nvml.system_event_set_wait fails in this version: " + r.stderr.splitlines()[-1])
    assert r.returncode == 0, f"child failed:\n{r.stdout}\n{r.stderr}"
    theirs = json.loads(r.stdout.strip().splitlines()[-1])
    if theirs == "incompatible":
        pytest.skip("this cuda-bindings has no NVML for cuda.core.system")
    assert theirs == expected, "cuda.core on the same fake NVML"


def test_without_nvml_each_call_says_so_and_the_rest_works(fakes):
    out = _run("""
        import cucore
        from cucore import system
        for call in (system.get_num_devices, system.get_nvml_version, system.get_kernel_mode_driver_version,
                     system.get_driver_branch, lambda: system.Device(index=0), lambda: cucore.Device(0).to_system_device(),
                     lambda: system.register_events("bind")):
            try:
                call()
                raise AssertionError("NVML is absent")
            except system.LibraryNotFoundError as e:
                assert e.status == 12 and "libnvidia-ml.so.1 could not be loaded" in str(e), str(e)
        assert system.get_user_mode_driver_version() == (13, 0)  # the CUDA driver's, no NVML needed
        assert cucore.Device(0).name == "Fake GPU 0"
        print("ok")
    """, **dict(fakes, CUCORE_NVML_PATH="/nonexistent/libnvidia-ml.so.1"))
    assert out.strip().endswith("ok")


def test_the_exceptions_are_nvmls_return_codes():
    from cucore.system import exceptions
    assert system.NvmlError.__mro__[1:] == (Exception, BaseException, object)  # as cuda.core's
    for name in exceptions.__all__:
        cls = getattr(system, name)
        assert issubclass(cls, system.NvmlError) and cls is getattr(exceptions, name)
    assert system.MemoryError is not MemoryError and system.TimeoutError is not TimeoutError
    assert type(exceptions.nvml_error(3, "x")) is system.NotSupportedError
    assert type(exceptions.nvml_error(30)) is system.ResetTypeNotSupportedError
    assert type(exceptions.nvml_error(12345)) is system.UnknownError
    e = exceptions.nvml_error(9, "no driver")
    assert (e.status, str(e)) == (9, "no driver") and isinstance(e, system.DriverNotLoadedError)
    import pickle
    again = pickle.loads(pickle.dumps(e))
    assert type(again) is system.DriverNotLoadedError and again.status == 9


def test_typing_members_are_cuda_cores():
    import cucore.system.typing as typing
    assert typing.ClockType.GRAPHICS == "graphics" and str(typing.GpuP2PStatus.GPU_NOT_SUPPORTED) == \
        "GPU not supported"
    assert typing.DeviceArch(9) is typing.DeviceArch.HOPPER and typing.DeviceArch.UNKNOWN == 0xFFFFFFFF
    assert typing.FieldId.DEV_ECC_CURRENT == 1 and typing.FieldId(91).name == "DEV_NVLINK_LINK_COUNT"
    assert len(typing.FieldId) == 294 and 91 in typing.FieldId and 100000 not in typing.FieldId
    assert typing.FieldId.MAX == 289, "NVML_FI_MAX of CUDA 13.0, which cuda.core over cuda-bindings 13.3 names"
    with pytest.raises(ValueError):
        typing.DeviceArch(1)


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
    assert system.Device(index=d.index) == d
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
    assert 0 < memory.free <= memory.total and 0 < memory.used <= memory.total and memory.reserved >= 0
    major, minor = system.get_user_mode_driver_version()
    assert system.get_cuda_driver_version() == cucore.driver_version() == major * 1000 + minor * 10
    kmd = system.get_kernel_mode_driver_version()
    assert len(kmd) >= 2 and kmd[0] >= 500
    assert d.power_limit > 0
    assert 0 < d.temperature.get_sensor() < 120
    util = d.utilization
    assert 0 <= util.gpu <= 100 and 0 <= util.memory <= 100
    assert d.max_clock("sm") >= d.clock("sm") > 0
    assert d.compute_mode in ("default", "exclusive_thread", "prohibited", "exclusive_process")
    assert all(p.pid > 0 for p in d.compute_running_processes)



def _supported(read):
    """`read()`, or None where this GPU or driver lacks it (NVML's NOT_SUPPORTED, or an NVML without the entry
    point): the members below are checked on every GPU that has them."""
    try:
        return read()
    except (system.NotSupportedError, system.FunctionNotFoundError):
        return None


@pytest.mark.gpu
def test_every_cuda_core_member_on_the_real_nvml(gpu, fake_driver):
    if fake_driver:
        pytest.skip("the real NVML describes the real GPUs, not the fake driver's")
    try:
        d = gpu.to_system_device()
    except system.NvmlError as e:
        pytest.skip(f"NVML is not available here: {e}")
    from cucore.system.typing import ClockType, DeviceArch, FieldId, GpuTopologyLevel, TemperatureThresholds
    cc = gpu.compute_capability
    assert d.cuda_compute_capability == (cc.major, cc.minor)
    arch = {7: DeviceArch.VOLTA, 8: DeviceArch.AMPERE, 9: DeviceArch.HOPPER, 10: DeviceArch.BLACKWELL,
            12: DeviceArch.BLACKWELL}
    if cc.major in arch and (cc.major, cc.minor) not in ((7, 5), (8, 9)):
        assert d.arch is arch[cc.major], (d.arch, cc)
    assert d.uuid_without_prefix == gpu.uuid
    assert isinstance(d.brand, str) and d.brand != ""
    serial = _supported(lambda: d.serial)
    assert serial is None or (isinstance(serial, str) and serial.strip() != "")
    assert d.minor_number >= 0
    assert isinstance(d.is_persistence_mode_enabled, bool)
    branch = _supported(system.get_driver_branch)
    assert branch is None or branch.strip() != ""
    import os
    try:
        name = system.get_process_name(os.getpid())
        assert "python" in name.lower(), name
    except system.NotFoundError:
        pass  # NVML may not find this process from a container (cuda.core's own test allows it too)
    bar1 = d.bar1_memory_info
    assert bar1.total > 0 and bar1.used <= bar1.total and bar1.free <= bar1.total
    memory = d.memory_info
    assert memory.total > memory.free > 0
    for kind in ClockType:
        clock = d.get_clock(kind)
        current, maximum = _supported(clock.get_current_mhz), _supported(clock.get_max_mhz)
        if kind in (ClockType.GRAPHICS, ClockType.SM, ClockType.MEMORY):
            assert current and current > 0 and maximum and maximum >= current * 0.9, (kind, current, maximum)
    pstate = d.performance_state
    assert pstate is None or 0 <= pstate <= 15
    pstates = _supported(lambda: d.supported_pstates)
    assert pstates is None or (pstates and all(0 <= p <= 15 for p in pstates))
    temperature = d.temperature
    assert 0 < temperature.get_sensor() < 120
    slowdown = _supported(lambda: temperature.get_threshold(TemperatureThresholds.SLOWDOWN))
    assert slowdown is None or temperature.get_sensor() < slowdown < 150
    pci = d.pci_info
    assert pci.vendor_id == 0x10DE and pci.device_id != 0
    assert _supported(lambda: pci.current_link_width) in (None, 1, 2, 4, 8, 16, 32)
    attributes = _supported(lambda: d.attributes)
    if attributes is not None and not d.mig.mode:
        assert attributes.multiprocessor_count == gpu.properties.multiprocessor_count
    links = _supported(d.get_nvlink_count)
    if links:
        assert all(isinstance(link.state, bool) for link in d.get_nvlinks())
        assert d.get_nvlink(0).version >= (1, 0)
    # A data-center GPU has no fans: NVML answers NOT_SUPPORTED (cuda.core's NotSupportedError), never a crash.
    fans = _supported(lambda: d.num_fans)
    if not fans:  # none (ValueError, as cuda.core), or no fan count at all (NotSupportedError)
        with pytest.raises((system.NotSupportedError, ValueError)):
            d.get_fan(0).speed
    else:
        assert 0 <= d.get_fan(0).speed <= 200
    values = d.get_field_values([FieldId.DEV_ECC_CURRENT, FieldId.DEV_NVLINK_LINK_COUNT])
    assert len(values) == 2 and values[0].field_id is FieldId.DEV_ECC_CURRENT and values[0].timestamp > 0
    for v in values:
        try:
            assert isinstance(v.value, (int, float))
        except system.NvmlError:
            pass  # a field this GPU lacks raises its own error, as documented
    assert all(p.pid > 0 for p in d.compute_running_processes)
    others = [system.Device(index=i) for i in range(system.get_num_devices())]
    assert d in others
    # A virtual machine's NVML may not know the topology (NotSupportedError, as cuda.core's); where it does, a GPU
    # is its own INTERNAL ancestor.
    level = _supported(lambda: system.get_topology_common_ancestor(d, d))
    assert level is None or level is GpuTopologyLevel.INTERNAL
    for other in others:
        if other != d and level is not None:
            assert isinstance(system.get_topology_common_ancestor(d, other), GpuTopologyLevel)
            assert isinstance(system.get_p2p_status(d, other, "read"), system.typing.GpuP2PStatus)


@pytest.mark.gpu
def test_system_events_on_the_real_nvml_register_or_are_not_supported(gpu, fake_driver):
    if fake_driver:
        pytest.skip("the real NVML describes the real GPUs, not the fake driver's")
    from cucore.system.typing import SystemEventType
    try:
        events = system.register_events([SystemEventType.UNBIND, SystemEventType.BIND])
    except system.LibraryNotFoundError as e:
        pytest.skip(f"NVML is not available here: {e}")
    except (system.NotSupportedError, system.FunctionNotFoundError, system.UnknownError) as e:
        # Many virtual machines record no system events (NVML says NOT_SUPPORTED, or UNKNOWN as on the GPU
        # server's VM, where cuda.core gets the same); an older NVML lacks the calls: said, never a crash.
        assert e.status in (3, 13, 999) and "nvmlSystem" in str(e), str(e)
        return
    with events:
        # Nobody binds or unbinds a GPU meanwhile: a short wait times out (or, woken early, gives known types).
        try:
            received = events.wait(timeout_ms=10, buffer_size=4)
        except system.TimeoutError as e:
            assert e.status == 10
            received = []
        assert len(received) <= 4 and all(e.event_type in SystemEventType for e in received)
    assert events.is_closed
