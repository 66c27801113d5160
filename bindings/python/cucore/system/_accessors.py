"""The accessor objects of cucore.system.Device (cuda.core's ClockInfo, FanInfo, InforomInfo, MigInfo, NvlinkInfo,
PciInfo, Temperature): each keeps its device and asks NVML at each access, so a reading is always current."""
from __future__ import annotations

from typing import Any, Callable, Iterable, List, Tuple

from . import _calls
from ._info import (CLOCK_ID, FAN_CONTROL_POLICY, INFOROM_OBJECT, NVLINK_MAX_LINKS, NVLINK_VERSION,
                    TEMPERATURE_THRESHOLD, THERMAL_TARGET, ClockOffsets, ThermalSettings, member, pair)
from .typing import (ClockId, ClockType, FanControlPolicy, InforomObject, TemperatureThresholds, ThermalTarget)


class ClockInfo:
    """One clock domain of a device (Device.get_clock)."""

    __slots__ = ("_device", "_type")

    def __init__(self, device: Any, clock_type: int) -> None:
        self._device, self._type = device, clock_type

    def get_current_mhz(self, clock_id: ClockId | str = ClockId.CURRENT) -> int:
        """The clock's current speed in MHz (ClockId.CURRENT), or its customer boost maximum
        (ClockId.CUSTOMER_BOOST_MAX)."""
        which = CLOCK_ID[member(ClockId, clock_id, "clock id")]
        return _calls.query(self._device._h, "CLOCK", self._type, which)[0]

    def get_max_mhz(self) -> int:
        """The clock's highest speed in MHz."""
        return _calls.query(self._device._h, "MAX_CLOCK", self._type)[0]

    def get_max_customer_boost_mhz(self) -> int:
        """The clock's customer boost maximum in MHz."""
        return _calls.query(self._device._h, "MAX_CUSTOMER_BOOST_CLOCK", self._type)[0]

    def get_min_max_clock_of_pstate_mhz(self, pstate: int) -> Tuple[int, int]:
        """The clock's (min, max) speed in MHz at P-state `pstate` (0..15)."""
        return pair(_calls.query(self._device._h, "PSTATE_CLOCK_RANGE", self._type, _pstate(pstate)))

    def get_offsets(self, pstate: int) -> ClockOffsets:
        """The clock's offset and its range in MHz at P-state `pstate` (0..15)."""
        return ClockOffsets(_calls.query(self._device._h, "CLOCK_OFFSETS", self._type, _pstate(pstate)))


def _pstate(pstate: int) -> int:
    if isinstance(pstate, bool) or not isinstance(pstate, int) or not 0 <= pstate <= 15:
        raise ValueError(f"pstate must be an int in 0..15, not {pstate!r}")
    return pstate


class FanInfo:
    """One fan of a device (Device.get_fan)."""

    __slots__ = ("_device", "_fan")

    def __init__(self, device: Any, fan: int) -> None:
        self._device, self._fan = device, fan

    @property
    def speed(self) -> int:
        """The fan's intended speed, in percent of its maximum (may exceed 100); settable (needs root)."""
        return _calls.query(self._device._h, "FAN_SPEED", self._fan)[0]

    @speed.setter
    def speed(self, speed: int) -> None:
        _calls.control(self._device._h, "FAN_SPEED", self._fan, int(speed))

    @property
    def speed_rpm(self) -> int:
        """The fan's intended speed in revolutions per minute."""
        return _calls.query(self._device._h, "FAN_SPEED_RPM", self._fan)[0]

    @property
    def target_speed(self) -> int:
        """The speed the driver steers the fan to, in percent."""
        return _calls.query(self._device._h, "FAN_TARGET_SPEED", self._fan)[0]

    @property
    def min_max_speed(self) -> Tuple[int, int]:
        """(min, max) speed in percent of the device's fans."""
        return pair(_calls.query(self._device._h, "FAN_SPEED_RANGE"))

    @property
    def control_policy(self) -> FanControlPolicy:
        """Who sets the fan's speed."""
        return FAN_CONTROL_POLICY[_calls.query(self._device._h, "FAN_CONTROL_POLICY", self._fan)[0]]

    def set_default_speed(self) -> None:
        """Give the fan back to the driver's default control (needs root)."""
        _calls.control(self._device._h, "FAN_DEFAULT_SPEED", self._fan)


class InforomInfo:
    """A device's InfoROM (Device.inforom)."""

    __slots__ = ("_device",)

    def __init__(self, device: Any) -> None:
        self._device = device

    def get_version(self, inforom: InforomObject | str) -> str:
        """The version of InfoROM object `inforom`."""
        return _calls.device_text(self._device._h, "INFOROM_VERSION",
                                  INFOROM_OBJECT[member(InforomObject, inforom, "InfoROM object")])

    @property
    def image_version(self) -> str:
        """The InfoROM image's version."""
        return _calls.device_text(self._device._h, "INFOROM_IMAGE_VERSION")

    @property
    def configuration_checksum(self) -> int:
        """The checksum of the configuration the InfoROM stores."""
        return _calls.query(self._device._h, "INFOROM_CHECKSUM")[0]

    def validate(self) -> None:
        """Read the InfoROM and check its checksums: CorruptedInforomError where they do not match."""
        _calls.control(self._device._h, "VALIDATE_INFOROM")

    @property
    def bbx_flush_time(self) -> Tuple[int, int]:
        """(timestamp, duration in us) of the last flush of the InfoROM's black box in this run."""
        return pair(_calls.query(self._device._h, "BBX_FLUSH_TIME"))

    @property
    def board_part_number(self) -> str:
        """The board part number stored in the InfoROM."""
        return _calls.device_text(self._device._h, "BOARD_PART_NUMBER")


class MigInfo:
    """A device's Multi-Instance GPU state (Device.mig)."""

    __slots__ = ("_device", "_wrap")

    def __init__(self, device: Any, wrap: Callable[[int], Any]) -> None:
        self._device, self._wrap = device, wrap

    @property
    def is_mig_device(self) -> bool:
        """True if this device is a MIG device (a compute instance)."""
        return bool(_calls.query(self._device._h, "IS_MIG_DEVICE")[0])

    @property
    def mode(self) -> bool:
        """True if MIG mode is on now; settable (needs root; takes effect at the next reset)."""
        return bool(_calls.query(self._device._h, "MIG_MODE")[0])

    @mode.setter
    def mode(self, mode: bool) -> None:
        _calls.control(self._device._h, "MIG_MODE", 1 if mode else 0)

    @property
    def pending_mode(self) -> bool:
        """True if MIG mode will be on after the next reset."""
        return bool(_calls.query(self._device._h, "MIG_MODE")[1])

    @property
    def device_count(self) -> int:
        """The most MIG devices this GPU can hold (0 where MIG is off or unsupported)."""
        return _calls.query(self._device._h, "MAX_MIG_DEVICES")[0]

    @property
    def parent(self) -> Any:
        """The GPU this MIG device belongs to."""
        return self._related("MIG_PARENT", 0)[0]

    def get_device_by_index(self, index: int) -> Any:
        """The MIG device of index `index` (0 .. device_count - 1) under this GPU."""
        return self._related("MIG_DEVICE", int(index))[0]

    def get_all_devices(self) -> Iterable[Any]:
        """Every MIG device that exists under this GPU now."""
        out = []
        for index in range(self.device_count):
            try:
                out.append(self.get_device_by_index(index))
            except Exception as error:  # an empty slot: NVML answers NOT_FOUND
                if getattr(error, "status", None) != 6:
                    raise
        return out

    def _related(self, which: str, arg: int) -> List[Any]:
        return [self._wrap(h) for h in _calls.handles(_calls._cucore_system_device_related, self._device._h,
                                                      _calls.RELATION[which], arg)]


class _NvlinkInfoMeta(type):
    @property
    def max_links(cls) -> int:
        """NVML_NVLINK_MAX_LINKS, the most links any device has (deprecated by cuda.core: use
        Device.get_nvlink_count)."""
        return NVLINK_MAX_LINKS


class NvlinkInfo(metaclass=_NvlinkInfoMeta):
    """One NVLink of a device (Device.get_nvlink)."""

    __slots__ = ("_device", "_link")

    def __init__(self, device: Any, link: int) -> None:
        self._device, self._link = device, link

    @property
    def version(self) -> Tuple[int, int]:
        """The link's NVLink version as (major, minor)."""
        return NVLINK_VERSION.get(_calls.query(self._device._h, "NVLINK_VERSION", self._link)[0], (0, 0))

    @property
    def state(self) -> bool:
        """True if the link is active."""
        return bool(_calls.query(self._device._h, "NVLINK_STATE", self._link)[0])


class PciInfo:
    """A device's PCI identity (read when made) and its PCIe link (read at each access)."""

    __slots__ = ("_device", "_v", "_bus_id")

    def __init__(self, device: Any, values: List[int], bus_id: str) -> None:
        self._device, self._v, self._bus_id = device, values, bus_id

    @property
    def bus(self) -> int:
        """The bus, 0 to 255."""
        return self._v[1]

    @property
    def bus_id(self) -> str:
        """"domain:bus:device.function", as NVML writes it."""
        return self._bus_id

    @property
    def device(self) -> int:
        """The device (slot) on the bus, 0 to 31."""
        return self._v[2]

    @property
    def domain(self) -> int:
        """The PCI domain."""
        return self._v[0]

    @property
    def vendor_id(self) -> int:
        """The PCI vendor id (0x10de)."""
        return self._v[3] & 0xFFFF

    @property
    def device_id(self) -> int:
        """The PCI device id."""
        return (self._v[3] >> 16) & 0xFFFF

    @property
    def subsystem_id(self) -> int:
        """The subsystem id."""
        return self._v[4]

    @property
    def pci_device_id(self) -> int:
        """The combined device id << 16 | vendor id, as NVML gives it."""
        return self._v[3]

    @property
    def pci_sub_system_id(self) -> int:
        """The subsystem id (cucore's earlier name of subsystem_id)."""
        return self._v[4]

    @property
    def base_class(self) -> int:
        """The 8-bit PCI base class code."""
        return self._class_code(5)

    @property
    def sub_class(self) -> int:
        """The 8-bit PCI sub class code."""
        return self._class_code(6)

    def _class_code(self, i: int) -> int:
        value = self._v[i]
        if isinstance(value, BaseException):  # read through an NVML without nvmlDeviceGetPciInfoExt
            raise value
        return value

    @property
    def link_generation(self) -> int:
        """The highest PCIe generation the device and the system allow."""
        return _calls.query(self._device._h, "PCIE_MAX_LINK_GENERATION")[0]

    @property
    def max_link_generation(self) -> int:
        """The highest PCIe generation the GPU supports."""
        return _calls.query(self._device._h, "PCIE_GPU_MAX_LINK_GENERATION")[0]

    @property
    def max_link_width(self) -> int:
        """The widest PCIe link the device and the system allow."""
        return _calls.query(self._device._h, "PCIE_MAX_LINK_WIDTH")[0]

    @property
    def current_link_generation(self) -> int:
        """The PCIe generation now."""
        return _calls.query(self._device._h, "PCIE_LINK_GENERATION")[0]

    @property
    def current_link_width(self) -> int:
        """The PCIe link width now."""
        return _calls.query(self._device._h, "PCIE_LINK_WIDTH")[0]

    @property
    def rx_throughput(self) -> int:
        """PCIe receive throughput over 20 ms, in KB/s."""
        return _calls.query(self._device._h, "PCIE_THROUGHPUT", 1)[0]

    @property
    def tx_throughput(self) -> int:
        """PCIe transmit throughput over 20 ms, in KB/s."""
        return _calls.query(self._device._h, "PCIE_THROUGHPUT", 0)[0]

    @property
    def replay_counter(self) -> int:
        """The PCIe replay counter."""
        return _calls.query(self._device._h, "PCIE_REPLAY_COUNTER")[0]


class Temperature:
    """A device's temperatures (Device.temperature)."""

    __slots__ = ("_device",)

    def __init__(self, device: Any) -> None:
        self._device = device

    def get_sensor(self) -> int:
        """The GPU's temperature now, in degrees Celsius."""
        return self._device._unsigned(_calls._cucore_system_device_temperature)

    def get_threshold(self, threshold_type: TemperatureThresholds | str) -> int:
        """Temperature threshold `threshold_type` in degrees Celsius."""
        which = TEMPERATURE_THRESHOLD[member(TemperatureThresholds, threshold_type, "threshold")]
        return _calls.query(self._device._h, "TEMPERATURE_THRESHOLD", which)[0]

    @property
    def margin(self) -> int:
        """The distance to the nearest slowdown threshold, in degrees Celsius."""
        return _calls.query(self._device._h, "TEMPERATURE_MARGIN")[0]

    def get_thermal_settings(self, sensor_index: ThermalTarget | str) -> ThermalSettings:
        """The thermal sensors of target `sensor_index` (ThermalTarget.ALL: every one)."""
        which = THERMAL_TARGET[member(ThermalTarget, sensor_index, "thermal target")]
        return ThermalSettings(_calls.query(self._device._h, "THERMAL_SETTINGS", which))

    def __int__(self) -> int:
        """The GPU's temperature now (get_sensor()), for code that read cucore's earlier int."""
        return self.get_sensor()


CLOCK_TYPES = (ClockType.GRAPHICS, ClockType.SM, ClockType.MEMORY, ClockType.VIDEO)
