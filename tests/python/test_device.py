"""Devices: every property equals the raw driver's answer. Needs a GPU (or the fake driver)."""
import ctypes
import pickle

import pytest

import cucore
from cucore import DeviceAttribute

pytestmark = pytest.mark.gpu


def test_driver_version_and_count(raw):
    v = ctypes.c_int()
    raw.check(raw.cuDriverGetVersion(ctypes.byref(v)), "cuDriverGetVersion")
    assert cucore.driver_version() == v.value
    n = ctypes.c_int()
    raw.check(raw.cuDeviceGetCount(ctypes.byref(n)), "cuDeviceGetCount")
    assert cucore.Device.count() == n.value
    assert [d.device_id for d in cucore.Device.get_all_devices()] == list(range(n.value))


def test_one_object_per_ordinal(gpu):
    assert cucore.Device(0) is cucore.Device(0) is gpu
    assert cucore.Device() is gpu  # device 0 is current (the fixture made it so)
    assert int(gpu) == 0 and gpu.device_id == 0
    assert gpu == cucore.Device(0) and hash(gpu) == hash(cucore.Device(0))
    assert pickle.loads(pickle.dumps(gpu)) is gpu
    assert "Device 0" in repr(gpu)


def test_current_device_follows_set_current(gpu):
    n = cucore.Device.count()
    if n < 2:
        pytest.skip("needs 2 devices")
    try:
        cucore.Device(1).set_current()
        assert cucore.Device() is cucore.Device(1)
    finally:
        gpu.set_current()
    assert cucore.Device() is gpu


def test_bad_ordinals(gpu):
    with pytest.raises(cucore.NoDeviceError):
        cucore.Device(cucore.Device.count())
    with pytest.raises(cucore.InvalidArgumentError):
        cucore.Device(-1)


@pytest.mark.parametrize("ordinal", [0, 1])
def test_identity_properties_match_the_driver(raw, ordinal):
    if ordinal >= cucore.Device.count():
        pytest.skip(f"no device {ordinal}")
    dev = cucore.Device(ordinal)
    name = ctypes.create_string_buffer(256)
    raw.check(raw.cuDeviceGetName(name, 256, raw.device(ordinal)), "cuDeviceGetName")
    assert dev.name == name.value.decode()
    mem = ctypes.c_size_t()
    raw.check(raw.cuDeviceTotalMem_v2(ctypes.byref(mem), raw.device(ordinal)), "cuDeviceTotalMem_v2")
    assert dev.total_memory == mem.value
    major = raw.attribute(DeviceAttribute.COMPUTE_CAPABILITY_MAJOR, ordinal)[1]
    minor = raw.attribute(DeviceAttribute.COMPUTE_CAPABILITY_MINOR, ordinal)[1]
    assert dev.compute_capability == (major, minor)
    assert dev.compute_capability.major == major
    assert dev.arch == f"{major}{minor}"
    assert dev.handle == raw.device(ordinal)
    domain = raw.attribute(DeviceAttribute.PCI_DOMAIN_ID, ordinal)[1]
    bus = raw.attribute(DeviceAttribute.PCI_BUS_ID, ordinal)[1]
    pci_device = raw.attribute(DeviceAttribute.PCI_DEVICE_ID, ordinal)[1]
    assert dev.pci_bus_id.lower().startswith(f"{domain:04x}:{bus:02x}:{pci_device:02x}")
    u = dev.uuid
    assert len(u) == 36 and u.count("-") == 4
    int(u.replace("-", ""), 16)


# cuda.core 1.2's boolean DeviceProperties (its stubs' `-> bool` properties); test_cuda_core_api.py checks this
# list against cuda.core where it is installed.
BOOLEAN_ATTRIBUTES = cucore.device._BOOLEAN_ATTRIBUTES


def test_every_attribute_matches_the_driver(raw, gpu):
    checked = 0
    for name, attr in DeviceAttribute.__members__.items():
        result, value = raw.attribute(attr, 0)
        if result != 0:  # this driver does not know the attribute: cucore reports the driver's error
            with pytest.raises(cucore.CUDAError):
                gpu.attribute(attr)
            continue
        assert gpu.attribute(attr) == value, name
        assert gpu.attribute(name.lower()) == value, name
        prop = getattr(gpu.properties, name.lower())
        if name.lower() in BOOLEAN_ATTRIBUTES:  # the yes/no ones are bool, as cuda.core's
            assert prop is (value != 0), name
        else:
            assert prop == value and type(prop) is int, name
        checked += 1
    assert checked > 100


def test_properties_are_cached_and_read_only(gpu):
    p = gpu.properties
    assert p is gpu.properties
    sm = p.multiprocessor_count
    assert sm > 0 and "multiprocessor_count" in vars(p)
    assert p.multiprocessor_count == sm
    with pytest.raises(AttributeError):
        p.multiprocessor_count = 3
    with pytest.raises(AttributeError):
        p.no_such_attribute
    assert "warp_size" in dir(p)


def test_attribute_errors(gpu):
    with pytest.raises(cucore.InvalidArgumentError):
        gpu.attribute(0)
    with pytest.raises(cucore.InvalidArgumentError, match="100000"):  # past the toolkit's last attribute
        gpu.attribute(100000)
    with pytest.raises(ValueError):
        gpu.attribute("no_such_attribute")


def test_basic_properties_match_attributes(gpu):
    b = gpu.basic_properties()
    p = gpu.properties
    assert b["ordinal"] == 0
    assert b["multiprocessor_count"] == p.multiprocessor_count
    assert b["warp_size"] == p.warp_size
    assert b["compute_capability_major"] == gpu.compute_capability.major
    assert b["clock_rate_khz"] == p.clock_rate
    assert b["memory_bus_width"] == p.global_memory_bus_width
    assert b["total_memory"] == gpu.total_memory


def test_sync_and_peer_access(gpu):
    gpu.sync()
    assert gpu.can_access_peer(gpu) in (True, False)
    if cucore.Device.count() > 1:
        assert isinstance(gpu.can_access_peer(1), bool)
        assert gpu.can_access_peer(cucore.Device(1)) == gpu.can_access_peer(1)


def test_stream_priority_range(gpu):
    r = gpu.stream_priority_range
    assert r.least >= r.greatest
