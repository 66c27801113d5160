"""System information through NVML (include/cucore/system.h), as cuda.core's `cuda.core.system`.

NVML (libnvidia-ml.so.1, or the path in CUCORE_NVML_PATH) is loaded on first use by libcucore; where it is
absent each call raises LibraryNotFoundError and the rest of the package works. Every NVML failure raises the
NvmlError subclass of NVML's return code (cucore.system.exceptions). `Device` here is a GPU as NVML sees it, by
NVML index, UUID or PCI bus id (cuda.core's `system.Device`); `to_cuda_device()` and
`cucore.Device.to_system_device()` go from one to the other. `register_events()` records system events (a GPU
bound to or unbound from the driver) for `RegisteredSystemEvents.wait()`. The enumerations are in
cucore.system.typing.
"""
from __future__ import annotations

import ctypes
from typing import Tuple

from .. import _lib
from ..device import driver_version as _cuda_driver_version
from . import exceptions, typing
from . import _calls
from ._accessors import ClockInfo, FanInfo, InforomInfo, MigInfo, NvlinkInfo, PciInfo, Temperature
from ._device import Device, DeviceEvents, EventData, get_p2p_status, get_topology_common_ancestor
from ._system_events import RegisteredSystemEvents, SystemEvent, SystemEvents, register_events
from ._info import (BAR1MemoryInfo, ClockOffsets, CoolerInfo, DeviceAttributes, FieldValue, FieldValues,
                    GpuDynamicPstatesInfo, GpuDynamicPstatesUtilization, MemoryInfo, ProcessInfo, RepairStatus,
                    ThermalSensor, ThermalSettings, Utilization)
from .exceptions import (AlreadyInitializedError, ArgumentVersionMismatchError, CorruptedInforomError,
                         DeprecatedError, DriverNotLoadedError, FreqNotSupportedError, FunctionNotFoundError,
                         GpuIsLostError, GpuNotFoundError, InsufficientPowerError, InsufficientResourcesError,
                         InsufficientSizeError, InUseError, InvalidArgumentError, InvalidStateError, IrqIssueError,
                         LibraryNotFoundError, LibRmVersionMismatchError, MemoryError, NoDataError,
                         NoPermissionError, NotFoundError, NotReadyError, NotSupportedError, NvmlError,
                         OperatingSystemError, ResetRequiredError, ResetTypeNotSupportedError, TimeoutError,
                         UninitializedError, UnknownError, VgpuEccNotSupportedError)

__all__ = ["CUDA_BINDINGS_NVML_IS_COMPATIBLE", "Device", "NvlinkInfo", "get_cuda_driver_version",
           "get_driver_branch", "get_driver_version", "get_kernel_mode_driver_version", "get_num_devices",
           "get_nvml_version", "get_p2p_status", "get_process_name", "get_topology_common_ancestor",
           "get_user_mode_driver_version", "register_events", "exceptions", "typing"] + exceptions.__all__

# cuda.core tells with this whether its cuda-bindings has NVML; cucore reaches NVML through libcucore, always.
CUDA_BINDINGS_NVML_IS_COMPATIBLE: bool = True

# What ProcessInfo.used_gpu_memory reads where NVML cannot see it (the constants table reads it signed).
MEMORY_NOT_AVAILABLE: int = _lib.C["CUCORE_SYSTEM_MEMORY_NOT_AVAILABLE"] & 0xFFFFFFFFFFFFFFFF


def _version_tuple(text: str) -> Tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part.isdigit())


def get_user_mode_driver_version() -> Tuple[int, ...]:
    """The CUDA (user-mode) driver's version as (major, minor), e.g. (13, 0); needs no NVML."""
    v = _cuda_driver_version()
    return v // 1000, (v % 1000) // 10


def get_kernel_mode_driver_version() -> Tuple[int, ...]:
    """The kernel-mode driver's version, e.g. (580, 65, 6) for 580.65.06."""
    return _version_tuple(_calls.text(_calls._cucore_system_driver_version))


def get_driver_version() -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
    """(user-mode version, kernel-mode version), e.g. ((13, 0), (580, 65, 6))."""
    return get_user_mode_driver_version(), get_kernel_mode_driver_version()


def get_nvml_version() -> Tuple[int, ...]:
    """NVML's version, e.g. (13, 580, 65, 6)."""
    return _version_tuple(_calls.text(_calls._cucore_system_nvml_version))


def get_driver_branch() -> str:
    """The driver's branch, e.g. "r580_00"."""
    return _calls.text(_calls._cucore_system_driver_branch)


def get_process_name(pid: int) -> str:
    """The name of process `pid` (NotFoundError where there is none)."""
    return _calls.text(_calls._cucore_system_process_name, int(pid))


def get_cuda_driver_version() -> int:
    """The newest CUDA version the driver supports as NVML reports it (e.g. 13000)."""
    v = ctypes.c_int()
    st = _calls._cucore_system_cuda_driver_version(v)
    if st:
        _calls.fail(st)
    return v.value


def get_num_devices() -> int:
    """The number of GPUs NVML sees (every GPU of the machine, whatever CUDA_VISIBLE_DEVICES says)."""
    return Device.get_device_count()


# The package's C functions, bound in its own namespace too (as each flat module of cucore binds what it
# calls), so that the package's top level names every C function of include/cucore/system.h.
for _name, _fn in zip(_calls.NAMES, _lib.bind(globals(), *_calls.NAMES)):
    globals()["_" + _name] = _fn
del _name, _fn

_lib.hand_down("device", _system_device_of=Device._of)
