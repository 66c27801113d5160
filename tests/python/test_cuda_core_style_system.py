"""cuda.core.system scenarios in cuda.core's style (NVML through `core.system`), run with cucore and, where it is
installed, cuda.core: the same bodies pass with both. They need a GPU and its NVML."""
import importlib
import os

import pytest

from conftest import FAKE_DRIVER


def _system(core):
    """`core.system` (cuda.core imports its system package on demand), skipping where NVML is unusable or the
    CUDA devices are the fake driver's (NVML describes the machine's real GPUs)."""
    if FAKE_DRIVER:
        pytest.skip("the real NVML describes the real GPUs, not the fake driver's")
    system = importlib.import_module(core.__name__ + ".system")
    if not system.CUDA_BINDINGS_NVML_IS_COMPATIBLE:
        pytest.skip("this cuda-bindings has no NVML")
    try:
        system.get_num_devices()
    except Exception as e:  # noqa: BLE001  (no NVML on this machine: each package says so its own way)
        pytest.skip(f"NVML is not usable here: {e}")
    return system


def _nvml_device_of(system, dev):
    """The system.Device of CUDA device `dev`, found the documented way: by UUID among all devices."""
    matches = [d for d in system.Device.get_all_devices() if d.uuid_without_prefix == dev.uuid]
    assert len(matches) == 1, [d.uuid for d in system.Device.get_all_devices()]
    return matches[0]


def test_versions_and_devices(core, core_device):
    system = _system(core)
    major, minor = system.get_user_mode_driver_version()[:2]
    assert major >= 12 and minor >= 0
    kmd = system.get_kernel_mode_driver_version()
    assert len(kmd) >= 2 and all(isinstance(p, int) for p in kmd) and kmd[0] >= 500
    assert len(system.get_nvml_version()) >= 2
    count = system.get_num_devices()
    assert count == system.Device.get_device_count() >= 1
    devices = list(system.Device.get_all_devices())
    assert [d.index for d in devices] == list(range(count))
    assert len({d.uuid for d in devices}) == count


def test_system_device_is_the_cuda_device(core, core_device):
    system = _system(core)
    nvml_dev = _nvml_device_of(system, core_device)
    assert nvml_dev.uuid.upper().startswith(("GPU-", "MIG-"))
    assert nvml_dev.name == core_device.name
    cc = core_device.compute_capability
    assert nvml_dev.cuda_compute_capability == (cc.major, cc.minor)
    assert nvml_dev.to_cuda_device().uuid == core_device.uuid
    assert system.Device(uuid=nvml_dev.uuid).uuid == nvml_dev.uuid
    assert system.Device(pci_bus_id=nvml_dev.pci_bus_id).index == nvml_dev.index
    assert system.Device(index=nvml_dev.index).pci_bus_id == nvml_dev.pci_bus_id
    pci = nvml_dev.pci_info
    assert pci.vendor_id == 0x10DE
    assert pci.bus_id.lower().endswith(nvml_dev.pci_bus_id.lower()[-7:])


def test_memory_clocks_and_temperature(core, core_device):
    system = _system(core)
    from_typing = importlib.import_module(core.__name__ + ".system.typing")
    dev = _nvml_device_of(system, core_device)
    memory = dev.memory_info
    assert memory.total > memory.free > 0 and memory.used > 0
    buffer = core_device.allocate(64 << 20, stream=core_device.default_stream)  # NVML then sees more in use
    try:
        assert dev.memory_info.used >= memory.used
    finally:
        buffer.close()
    bar1 = dev.bar1_memory_info
    assert bar1.total > 0 and bar1.free <= bar1.total
    sm = dev.get_clock(from_typing.ClockType.SM)
    assert 0 < sm.get_current_mhz() <= sm.get_max_mhz() * 1.1
    assert dev.get_clock("memory").get_max_mhz() > 0
    assert 0 < dev.temperature.get_sensor() < 120
    utilization = dev.utilization
    assert 0 <= utilization.gpu <= 100 and 0 <= utilization.memory <= 100
    state = dev.performance_state
    assert state is None or 0 <= state <= 15


def test_processes_include_this_one(core, core_device):
    system = _system(core)
    dev = _nvml_device_of(system, core_device)
    buffer = core_device.allocate(1 << 20, stream=core_device.default_stream)  # a context of ours on the device
    try:
        pids = [p.pid for p in dev.compute_running_processes]
    finally:
        buffer.close()
    # In a container NVML may list no process of ours (another PID namespace): the listing holds valid pids.
    assert all(isinstance(p, int) and p > 0 for p in pids)


def test_process_name_of_this_process(core, core_device):
    system = _system(core)
    try:
        name = system.get_process_name(os.getpid())
    except system.NotFoundError:  # NVML may not find it from a container (as cuda.core's own test allows)
        pytest.skip("NVML does not find this process")
    assert isinstance(name, str) and "python" in name.lower()


def test_field_values_and_errors(core, core_device):
    system = _system(core)
    typing = importlib.import_module(core.__name__ + ".system.typing")
    dev = _nvml_device_of(system, core_device)
    values = dev.get_field_values([typing.FieldId.DEV_ECC_CURRENT, (typing.FieldId.DEV_ECC_PENDING, 0)])
    assert len(values) == 2
    assert values[0].field_id == typing.FieldId.DEV_ECC_CURRENT and values[0].timestamp > 0
    try:
        assert values[0].value in (0, 1)  # ECC off or on
    except system.NvmlError:
        pass  # a GPU without ECC fields answers with the field's error, as documented
    with pytest.raises(system.InvalidArgumentError):
        system.Device(index=system.get_num_devices() + 1000)
    fans = 0
    try:
        fans = dev.num_fans
    except system.NotSupportedError:
        pass
    if fans == 0:  # a data-center GPU: no fan 0 (cuda.core checks the index against num_fans)
        with pytest.raises((system.NotSupportedError, ValueError)):
            dev.get_fan(0).speed


def test_system_events_register_and_wait(core, core_device):
    system = _system(core)
    typing = importlib.import_module(core.__name__ + ".system.typing")
    try:
        events = system.register_events([typing.SystemEventType.UNBIND, typing.SystemEventType.BIND])
    except (system.NotSupportedError, system.UnknownError) as e:  # many virtual machines record none
        pytest.skip(f"NVML records no system events on this machine ({type(e).__name__}: {e})")
    # Nobody binds or unbinds a GPU during the test: a short wait raises TimeoutError (or, woken early, returns
    # the few events there are, each of a registered type and a GPU NVML knows).
    try:
        received = events.wait(timeout_ms=10, buffer_size=4)
    except system.TimeoutError:
        received = []
    assert len(received) <= 4
    for i in range(len(received)):
        event = received[i]
        assert event.event_type in (typing.SystemEventType.UNBIND, typing.SystemEventType.BIND)
        assert isinstance(event.gpu_id, int) and event.gpu_id >= 0
