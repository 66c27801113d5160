"""The small objects cucore.system.Device returns, with cuda.core's attribute names (MemoryInfo, PciInfo,
ClockInfo, FanInfo, Temperature, ...), and the tables between NVML's numbers and the enums of
cucore.system.typing. Each reads through the device's handle (`_calls`); a snapshot object (MemoryInfo,
Utilization, ...) holds what one NVML call answered, an accessor object (ClockInfo, FanInfo, ...) asks NVML at
each access."""
from __future__ import annotations

import struct
from typing import Any, Iterator, List, NamedTuple, Sequence, Tuple, Union

from . import _calls
from .exceptions import nvml_error
from .typing import (ClockId, ClocksEventReasons, ClockType, CoolerControl, CoolerTarget, EventType,
                     FanControlPolicy, FieldId, InforomObject, TemperatureThresholds, ThermalController,
                     ThermalTarget)

# ---- NVML's numbers of the typing enums (nvml.h) -------------------------------------------------------------

CLOCK_TYPE = {ClockType.GRAPHICS: 0, ClockType.SM: 1, ClockType.MEMORY: 2, ClockType.VIDEO: 3}
CLOCK_ID = {ClockId.CURRENT: 0, ClockId.CUSTOMER_BOOST_MAX: 3}
CLOCKS_EVENT_REASONS = {ClocksEventReasons.GPU_IDLE: 0x1, ClocksEventReasons.APPLICATIONS_CLOCKS_SETTING: 0x2,
                        ClocksEventReasons.SW_POWER_CAP: 0x4, ClocksEventReasons.HW_SLOWDOWN: 0x8,
                        ClocksEventReasons.SYNC_BOOST: 0x10, ClocksEventReasons.SW_THERMAL_SLOWDOWN: 0x20,
                        ClocksEventReasons.HW_THERMAL_SLOWDOWN: 0x40,
                        ClocksEventReasons.HW_POWER_BRAKE_SLOWDOWN: 0x80,
                        ClocksEventReasons.DISPLAY_CLOCK_SETTING: 0x100}
EVENT_TYPES = {EventType.SINGLE_BIT_ECC_ERROR: 0x1, EventType.DOUBLE_BIT_ECC_ERROR: 0x2, EventType.PSTATE: 0x4,
               EventType.XID_CRITICAL_ERROR: 0x8, EventType.CLOCK: 0x10, EventType.POWER_SOURCE_CHANGE: 0x80,
               EventType.MIG_CONFIG_CHANGE: 0x100, EventType.SINGLE_BIT_ECC_ERROR_STORM: 0x200,
               EventType.DRAM_RETIREMENT_EVENT: 0x400, EventType.DRAM_RETIREMENT_FAILURE: 0x800,
               EventType.NON_FATAL_POISON_ERROR: 0x1000, EventType.FATAL_POISON_ERROR: 0x2000,
               EventType.GPU_UNAVAILABLE_ERROR: 0x4000, EventType.GPU_RECOVERY_ACTION: 0x8000}
COOLER_CONTROL = {1: CoolerControl.TOGGLE, 2: CoolerControl.VARIABLE}
COOLER_TARGET = {CoolerTarget.NONE: 0x1, CoolerTarget.GPU: 0x2, CoolerTarget.MEMORY: 0x4,
                 CoolerTarget.POWER_SUPPLY: 0x8}
FAN_CONTROL_POLICY = {0: FanControlPolicy.TEMPERATURE_CONTROLLED, 1: FanControlPolicy.MANUAL}
INFOROM_OBJECT = {InforomObject.OEM: 0, InforomObject.ECC: 1, InforomObject.POWER: 2, InforomObject.DEN: 3}
TEMPERATURE_THRESHOLD = {t: i for i, t in enumerate(TemperatureThresholds)}
THERMAL_CONTROLLER = {i + 1: c for i, c in enumerate(c for c in ThermalController if c != ThermalController.UNKNOWN)}
THERMAL_TARGET = {ThermalTarget.NONE: 0, ThermalTarget.GPU: 1, ThermalTarget.MEMORY: 2,
                  ThermalTarget.POWER_SUPPLY: 4, ThermalTarget.BOARD: 8, ThermalTarget.VCD_BOARD: 9,
                  ThermalTarget.VCD_INLET: 10, ThermalTarget.VCD_OUTLET: 11, ThermalTarget.ALL: 15}
THERMAL_TARGET_OF = {v: k for k, v in THERMAL_TARGET.items()}
NVLINK_VERSION = {1: (1, 0), 2: (2, 0), 3: (2, 2), 4: (3, 0), 5: (3, 1), 6: (4, 0), 7: (5, 0), 8: (6, 0)}
NVLINK_MAX_LINKS = 18  # NVML_NVLINK_MAX_LINKS


def member(enum_cls, value: Union[str, Any], what: str):
    """`value` (a member or its string) as a member of `enum_cls`; ValueError naming the choices otherwise."""
    try:
        return enum_cls(value)
    except ValueError:
        choices = ", ".join(repr(m.value) for m in enum_cls)
        raise ValueError(f"{what} {value!r} is not one of {choices}") from None


def flags(mask: int, table) -> list:
    """The members of `table` (member -> bit) whose bits are set in `mask`, in the table's order."""
    return [m for m, bit in table.items() if mask & bit]


# ---- snapshots ------------------------------------------------------------------------------------------------

class MemoryInfo:
    """A device's memory in bytes, as NVML read it (nvmlDeviceGetMemoryInfo_v2)."""

    __slots__ = ("_total", "_reserved", "_free", "_used")

    def __init__(self, total: int, reserved: int, free: int, used: int) -> None:
        self._total, self._reserved, self._free, self._used = total, reserved, free, used

    @property
    def free(self) -> int:
        """Unallocated device memory, in bytes."""
        return self._free

    @property
    def total(self) -> int:
        """Total physical device memory, in bytes."""
        return self._total

    @property
    def used(self) -> int:
        """Allocated device memory, in bytes."""
        return self._used

    @property
    def reserved(self) -> int:
        """Device memory reserved for system use (driver or firmware), in bytes."""
        return self._reserved

    def __repr__(self) -> str:
        return f"<{type(self).__name__} total={self.total} used={self.used} free={self.free}>"


class BAR1MemoryInfo(MemoryInfo):
    """A device's BAR1 memory (the window through which the CPU and peers reach device memory), in bytes."""

    __slots__ = ()

    def __init__(self, total: int, free: int, used: int) -> None:
        super().__init__(total, 0, free, used)


class Utilization(NamedTuple):
    """The percentage of the last sample period a kernel ran (gpu) and device memory was accessed (memory)."""
    gpu: int
    memory: int


class ProcessInfo(NamedTuple):
    """A process with a compute context on a GPU, the device memory it uses (MEMORY_NOT_AVAILABLE where NVML cannot
    see it, e.g. from a container), and its GPU and compute instance ids (MIG only)."""
    pid: int
    used_gpu_memory: int
    gpu_instance_id: int = 0xFFFFFFFF
    compute_instance_id: int = 0xFFFFFFFF


class DeviceAttributes:
    """Counts of a device's engines and slices (nvmlDeviceGetAttributes_v2)."""

    __slots__ = ("_v",)

    def __init__(self, values: Sequence[int]) -> None:
        self._v = tuple(values)

    @property
    def multiprocessor_count(self) -> int:
        """The number of streaming multiprocessors."""
        return self._v[0]

    @property
    def shared_copy_engine_count(self) -> int:
        """The number of copy engines (shared between MIG instances)."""
        return self._v[1]

    @property
    def shared_decoder_count(self) -> int:
        """The number of video decoders."""
        return self._v[2]

    @property
    def shared_encoder_count(self) -> int:
        """The number of video encoders."""
        return self._v[3]

    @property
    def shared_jpeg_count(self) -> int:
        """The number of JPEG engines."""
        return self._v[4]

    @property
    def shared_ofa_count(self) -> int:
        """The number of optical flow accelerators."""
        return self._v[5]

    @property
    def gpu_instance_slice_count(self) -> int:
        """The number of GPU instance slices."""
        return self._v[6]

    @property
    def compute_instance_slice_count(self) -> int:
        """The number of compute instance slices."""
        return self._v[7]

    @property
    def memory_size_mb(self) -> int:
        """Device memory in MiB."""
        return self._v[8]


class CoolerInfo:
    """A device's cooler: how it is driven and what it cools (nvmlDeviceGetCoolerInfo)."""

    __slots__ = ("_signal", "_target")

    def __init__(self, signal_type: int, target: int) -> None:
        self._signal, self._target = signal_type, target

    @property
    def signal_type(self) -> Union[CoolerControl, None]:
        """The cooler's control signal (CoolerControl), or None where it has none."""
        return COOLER_CONTROL.get(self._signal)

    @property
    def target(self) -> List[CoolerTarget]:
        """What the cooler cools."""
        return flags(self._target, COOLER_TARGET)


class RepairStatus:
    """Whether a TPC or channel repair is pending (nvmlDeviceGetRepairStatus)."""

    __slots__ = ("_channel", "_tpc")

    def __init__(self, channel: int, tpc: int) -> None:
        self._channel, self._tpc = bool(channel), bool(tpc)

    @property
    def channel_repair_pending(self) -> bool:
        """True if a channel repair is pending."""
        return self._channel

    @property
    def tpc_repair_pending(self) -> bool:
        """True if a TPC repair is pending."""
        return self._tpc


class GpuDynamicPstatesUtilization:
    """One utilization domain of the performance monitor."""

    __slots__ = ("_v",)

    def __init__(self, values: Sequence[int]) -> None:
        self._v = tuple(values)

    @property
    def is_present(self) -> bool:
        """True if the domain is present on this GPU."""
        return bool(self._v[0])

    @property
    def percentage(self) -> int:
        """Percentage of the last second in which the domain was busy."""
        return self._v[1]

    @property
    def inc_threshold(self) -> int:
        """The utilization above which the P-state rises."""
        return self._v[2]

    @property
    def dec_threshold(self) -> int:
        """The utilization below which the P-state falls."""
        return self._v[3]


class GpuDynamicPstatesInfo:
    """The performance monitor's samples: a sequence of its 8 utilization domains (nvmlDeviceGetDynamicPstatesInfo)."""

    __slots__ = ("_domains",)

    def __init__(self, values: Sequence[int]) -> None:
        self._domains = [GpuDynamicPstatesUtilization(values[1 + 4 * i:5 + 4 * i]) for i in range((len(values) - 1) // 4)]

    def __len__(self) -> int:
        return len(self._domains)

    def __getitem__(self, idx: int) -> GpuDynamicPstatesUtilization:
        return self._domains[idx]

    def __iter__(self) -> Iterator[GpuDynamicPstatesUtilization]:
        return iter(self._domains)


class ThermalSensor:
    """One thermal sensor of a device."""

    __slots__ = ("_v",)

    def __init__(self, values: Sequence[int]) -> None:
        self._v = tuple(values)

    @property
    def controller(self) -> ThermalController:
        """The chip that reads it."""
        return THERMAL_CONTROLLER.get(self._v[0], ThermalController.UNKNOWN)

    @property
    def default_min_temp(self) -> int:
        """Its default minimum, in degrees Celsius."""
        return self._v[1]

    @property
    def default_max_temp(self) -> int:
        """Its default maximum, in degrees Celsius."""
        return self._v[2]

    @property
    def current_temp(self) -> int:
        """Its reading now, in degrees Celsius."""
        return self._v[3]

    @property
    def target(self) -> ThermalTarget:
        """What it measures."""
        return THERMAL_TARGET_OF.get(self._v[4], ThermalTarget.NONE)


class ThermalSettings:
    """The thermal sensors of a device (nvmlDeviceGetThermalSettings): a sequence of ThermalSensor."""

    __slots__ = ("_sensors",)

    def __init__(self, values: Sequence[int]) -> None:
        self._sensors = [ThermalSensor(values[5 * i:5 * i + 5]) for i in range(len(values) // 5)]

    def __len__(self) -> int:
        return len(self._sensors)

    def __getitem__(self, idx: int) -> ThermalSensor:
        return self._sensors[idx]

    def __iter__(self) -> Iterator[ThermalSensor]:
        return iter(self._sensors)


class ClockOffsets:
    """A clock's offset at a P-state, and its range (nvmlDeviceGetClockOffsets)."""

    __slots__ = ("_v",)

    def __init__(self, values: Sequence[int]) -> None:
        self._v = tuple(values)

    @property
    def clock_offset_mhz(self) -> int:
        """The current offset in MHz."""
        return self._v[0]

    @property
    def min_offset_mhz(self) -> int:
        """The smallest offset in MHz."""
        return self._v[1]

    @property
    def max_offset_mhz(self) -> int:
        """The largest offset in MHz."""
        return self._v[2]


class FieldValue:
    """One field NVML read (Device.get_field_values): its id, scope, sample time and value, or its error."""

    __slots__ = ("_c",)

    def __init__(self, c) -> None:
        self._c = c

    @property
    def field_id(self) -> FieldId:
        """The field id."""
        try:
            return FieldId(self._c.field_id)
        except ValueError:  # a field newer than this package's table: its number, still an int
            return self._c.field_id

    @property
    def scope_id(self) -> int:
        """The scope id (an NVLink, a GPU instance, ... as the field defines)."""
        return self._c.scope_id

    @property
    def timestamp(self) -> int:
        """The CPU time at which it was sampled, in microseconds since 1970."""
        return self._c.timestamp

    @property
    def latency_usec(self) -> int:
        """How long NVML took to update it, in microseconds."""
        return self._c.latency_usec

    @property
    def value(self) -> Union[int, float]:
        """The value; raises the field's NvmlError where NVML could not read it."""
        c = self._c
        if c.result:
            raise nvml_error(c.result, f"nvmlDeviceGetFieldValues: field {c.field_id} (scope {c.scope_id})")
        bits = c.value
        kind = c.value_type
        if kind == 0:
            return struct.unpack("<d", struct.pack("<Q", bits))[0]
        if kind == 4:
            return bits - (1 << 64) if bits >> 63 else bits
        if kind == 5:
            bits &= 0xFFFFFFFF
            return bits - (1 << 32) if bits >> 31 else bits
        return bits


class FieldValues:
    """The fields of one Device.get_field_values call, in the order asked."""

    __slots__ = ("_values",)

    def __init__(self, array) -> None:
        self._values = [FieldValue(array[i]) for i in range(len(array))]

    def __getitem__(self, idx: int) -> FieldValue:
        return self._values[idx]

    def __len__(self) -> int:
        return len(self._values)

    def __iter__(self) -> Iterator[FieldValue]:
        return iter(self._values)

    def validate(self) -> None:
        """Raise the NvmlError of the first field NVML could not read, if any."""
        for v in self._values:
            v.value

    def get_all_values(self) -> List[Union[int, float]]:
        """Every value, in order (raises the first field's NvmlError, if any)."""
        return [v.value for v in self._values]


def field_array(field_ids) -> Any:
    """A C array of cucore_system_field_value_t with the ids (FieldId or (FieldId, scope id)) of `field_ids`."""
    ids = list(field_ids)
    array = (_calls.FieldValueC * len(ids))()
    for i, item in enumerate(ids):
        field, scope = (item if isinstance(item, tuple) else (item, 0))
        array[i].field_id = int(field)
        array[i].scope_id = int(scope)
    return array


def pair(values: Sequence[int]) -> Tuple[int, int]:
    """Two values of a query as a tuple."""
    return int(values[0]), int(values[1])

