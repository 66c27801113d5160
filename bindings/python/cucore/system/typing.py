"""The enumerations of cucore.system, as cuda.core's `cuda.core.system.typing`.

Most are string enums (cuda.core's values: `ClockType.GRAPHICS == "graphics"`), so a plain string works wherever
one is taken; `DeviceArch` and `FieldId` are integer enums with NVML's own numbers. libcucore's C ABI takes NVML's
numbers (include/cucore/system.h); the tables that translate live beside the classes that use them.
"""
from __future__ import annotations

import enum

from ._field_ids import FieldId
from ._int_enum import _IntEnum

__all__ = ["AddressingMode", "AffinityScope", "ClockId", "ClockType", "ClocksEventReasons", "CoolerControl",
           "CoolerTarget", "DeviceArch", "EventType", "FanControlPolicy", "FieldId", "GpuP2PCapsIndex",
           "GpuP2PStatus", "GpuTopologyLevel", "InforomObject", "SystemEventType", "TemperatureThresholds",
           "ThermalController", "ThermalTarget"]


class _StrEnum(str, enum.Enum):
    """A string enum (enum.StrEnum on every Python this package supports): members compare equal to their values
    and print as them."""

    def __str__(self) -> str:
        return str(self.value)


class AddressingMode(_StrEnum):
    """How the device addresses host memory (NVML's nvmlDeviceAddressingModeType_t)."""
    HMM = "hmm"
    ATS = "ats"


class AffinityScope(_StrEnum):
    """The scope of a CPU or memory affinity query: NUMA node or CPU socket."""
    NODE = "node"
    SOCKET = "socket"


class ClockId(_StrEnum):
    """Which reading of a clock: the current one or the customer boost maximum."""
    CURRENT = "current"
    CUSTOMER_BOOST_MAX = "customer_boost_max"


class ClockType(_StrEnum):
    """A clock domain of a device."""
    GRAPHICS = "graphics"
    SM = "sm"
    MEMORY = "memory"
    VIDEO = "video"


class ClocksEventReasons(_StrEnum):
    """Why the clocks are where they are (NVML's clocks event reasons, one bit each)."""
    NONE = "none"
    GPU_IDLE = "gpu_idle"
    APPLICATIONS_CLOCKS_SETTING = "applications_clocks_setting"
    SW_POWER_CAP = "sw_power_cap"
    HW_SLOWDOWN = "hw_slowdown"
    SYNC_BOOST = "sync_boost"
    SW_THERMAL_SLOWDOWN = "sw_thermal_slowdown"
    HW_THERMAL_SLOWDOWN = "hw_thermal_slowdown"
    HW_POWER_BRAKE_SLOWDOWN = "hw_power_brake_slowdown"
    DISPLAY_CLOCK_SETTING = "display_clock_setting"


class CoolerControl(_StrEnum):
    """How a cooler is driven: on/off or variable speed."""
    TOGGLE = "toggle"
    VARIABLE = "variable"


class CoolerTarget(_StrEnum):
    """What a cooler cools."""
    NONE = "none"
    GPU = "gpu"
    MEMORY = "memory"
    POWER_SUPPLY = "power_supply"


class DeviceArch(_IntEnum):
    """Device architecture (NVML's nvmlDeviceArchitecture_t numbers)."""
    KEPLER = 2
    MAXWELL = 3
    PASCAL = 4
    VOLTA = 5
    TURING = 6
    AMPERE = 7
    ADA = 8
    HOPPER = 9
    BLACKWELL = 10
    UNKNOWN = 0xFFFFFFFF


class EventType(_StrEnum):
    """A device event (NVML's nvmlEventType bits)."""
    NONE = "none"
    SINGLE_BIT_ECC_ERROR = "single_bit_ecc_error"
    DOUBLE_BIT_ECC_ERROR = "double_bit_ecc_error"
    PSTATE = "pstate"
    XID_CRITICAL_ERROR = "xid_critical_error"
    CLOCK = "clock"
    POWER_SOURCE_CHANGE = "power_source_change"
    MIG_CONFIG_CHANGE = "mig_config_change"
    SINGLE_BIT_ECC_ERROR_STORM = "single_bit_ecc_error_storm"
    DRAM_RETIREMENT_EVENT = "dram_retirement_event"
    DRAM_RETIREMENT_FAILURE = "dram_retirement_failure"
    NON_FATAL_POISON_ERROR = "non_fatal_poison_error"
    FATAL_POISON_ERROR = "fatal_poison_error"
    GPU_UNAVAILABLE_ERROR = "gpu_unavailable_error"
    GPU_RECOVERY_ACTION = "gpu_recovery_action"


class FanControlPolicy(_StrEnum):
    """Who sets a fan's speed: the driver from the temperature, or the user."""
    TEMPERATURE_CONTROLLED = "temperature_controlled"
    MANUAL = "manual"



class GpuP2PCapsIndex(_StrEnum):
    """A peer-to-peer capability between two devices."""
    READ = "read"
    WRITE = "write"
    NVLINK = "nvlink"
    ATOMICS = "atomics"
    PCI = "pci"
    PROP = "prop"
    UNKNOWN = "unknown"


class GpuP2PStatus(_StrEnum):
    """Whether a peer-to-peer capability is there, and why not."""
    OK = "ok"
    CHIPSET_NOT_SUPPORTED = "chipset not supported"
    GPU_NOT_SUPPORTED = "GPU not supported"
    IOH_TOPOLOGY_NOT_SUPPORTED = "IOH topology not supported"
    DISABLED_BY_REGKEY = "disabled by regkey"
    NOT_SUPPORTED = "not supported"
    UNKNOWN = "unknown"


class GpuTopologyLevel(_StrEnum):
    """How two devices are connected, nearest first."""
    INTERNAL = "internal"
    SINGLE = "single"
    MULTIPLE = "multiple"
    HOSTBRIDGE = "hostbridge"
    NODE = "node"
    SYSTEM = "system"


class InforomObject(_StrEnum):
    """An object of the InfoROM."""
    OEM = "oem"
    ECC = "ecc"
    POWER = "power"
    DEN = "den"


class SystemEventType(_StrEnum):
    """A system event: a GPU unbound from or bound to the driver."""
    UNBIND = "unbind"
    BIND = "bind"


class TemperatureThresholds(_StrEnum):
    """A temperature threshold of a device."""
    SHUTDOWN = "shutdown"
    SLOWDOWN = "slowdown"
    MEM_MAX = "mem_max"
    GPU_MAX = "gpu_max"
    ACOUSTIC_MIN = "acoustic_min"
    ACOUSTIC_CURR = "acoustic_curr"
    ACOUSTIC_MAX = "acoustic_max"
    GPS_CURR = "gps_curr"


class ThermalController(_StrEnum):
    """The chip that reads a thermal sensor."""
    GPU_INTERNAL = "gpu_internal"
    ADM1032 = "adm1032"
    ADT7461 = "adt7461"
    MAX6649 = "max6649"
    MAX1617 = "max1617"
    LM99 = "lm99"
    LM89 = "lm89"
    LM64 = "lm64"
    G781 = "g781"
    ADT7473 = "adt7473"
    SBMAX6649 = "sbmax6649"
    VBIOSEVT = "vbiosevt"
    OS = "os"
    NVSYSCON_CANOAS = "nvsyscon_canoas"
    NVSYSCON_E551 = "nvsyscon_e551"
    MAX6649R = "max6649r"
    ADT7473S = "adt7473s"
    UNKNOWN = "unknown"


class ThermalTarget(_StrEnum):
    """What a thermal sensor measures."""
    NONE = "none"
    GPU = "gpu"
    MEMORY = "memory"
    POWER_SUPPLY = "power_supply"
    BOARD = "board"
    VCD_BOARD = "vcd_board"
    VCD_INLET = "vcd_inlet"
    VCD_OUTLET = "vcd_outlet"
    ALL = "all"
