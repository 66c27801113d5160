"""System information through NVML (include/cucore/system.h), as cuda.core's `cuda.core.system`.

NVML (libnvidia-ml.so.1, or the path in CUCORE_NVML_PATH) is loaded on first use by libcucore; where it is
absent each call raises NotSupportedError ("libnvidia-ml.so.1 could not be loaded: ...") and the rest of the
package works. `Device` here is a GPU as NVML sees it, by NVML index, UUID or PCI bus id (cuda.core's
`system.Device`); `to_cuda_device()` and `cucore.Device.to_system_device()` go from one to the other.
"""
from __future__ import annotations

import ctypes
from typing import Dict, List, NamedTuple, Optional, Tuple

from . import _lib
from ._handle import HandleObject
from .common import raise_error
from .device import Device as _CudaDevice
from .device import driver_version as _cuda_driver_version

__all__ = ["Device", "MemoryInfo", "PciInfo", "ProcessInfo", "Utilization", "get_cuda_driver_version",
           "get_driver_version", "get_kernel_mode_driver_version", "get_num_devices", "get_nvml_version",
           "get_user_mode_driver_version"]

(_cucore_system_driver_version, _cucore_system_nvml_version, _cucore_system_cuda_driver_version,
 _cucore_system_device_count, _cucore_system_device_get, _cucore_system_device_get_by_uuid,
 _cucore_system_device_get_by_pci_bus_id, _cucore_system_device_get_for_device, _cucore_system_device_to_device,
 _cucore_system_device_retain, _cucore_system_device_release, _cucore_system_device_handle,
 _cucore_system_device_index, _cucore_system_device_name, _cucore_system_device_uuid, _cucore_system_device_pci_bus_id,
 _cucore_system_device_pci_info, _cucore_system_device_memory_info, _cucore_system_device_utilization,
 _cucore_system_device_temperature, _cucore_system_device_power_usage, _cucore_system_device_power_limit,
 _cucore_system_device_clock, _cucore_system_device_max_clock, _cucore_system_device_compute_mode,
 _cucore_system_device_processes) = _lib.bind(
    globals(), "cucore_system_driver_version", "cucore_system_nvml_version", "cucore_system_cuda_driver_version",
    "cucore_system_device_count", "cucore_system_device_get", "cucore_system_device_get_by_uuid",
    "cucore_system_device_get_by_pci_bus_id", "cucore_system_device_get_for_device",
    "cucore_system_device_to_device", "cucore_system_device_retain", "cucore_system_device_release",
    "cucore_system_device_handle", "cucore_system_device_index", "cucore_system_device_name",
    "cucore_system_device_uuid",
    "cucore_system_device_pci_bus_id", "cucore_system_device_pci_info", "cucore_system_device_memory_info",
    "cucore_system_device_utilization", "cucore_system_device_temperature", "cucore_system_device_power_usage",
    "cucore_system_device_power_limit", "cucore_system_device_clock", "cucore_system_device_max_clock",
    "cucore_system_device_compute_mode", "cucore_system_device_processes")
(_fast_system_device_release,) = _lib.bind_unchecked(globals(), "cucore_system_device_release")
(_cucore_device_ordinal, _cucore_device_release) = _lib.bind(globals(), "cucore_device_ordinal",
                                                              "cucore_device_release")

_PciInfoC = _lib.STRUCTS["cucore_system_pci_info_t"]
_MemoryInfoC = _lib.STRUCTS["cucore_system_memory_info_t"]
_CLOCKS: Dict[str, int] = _lib.c_names("cucore_system_clock_t", "CUCORE_SYSTEM_CLOCK_", skip=("unset",))
_COMPUTE_MODES: Dict[int, str] = {v: k for k, v in _lib.c_names("cucore_compute_mode_t", "CUCORE_COMPUTE_MODE_",
                                                                   skip=("unset",)).items()}
# What ProcessInfo.used_gpu_memory reads where NVML cannot see it (the constants table reads it signed).
MEMORY_NOT_AVAILABLE: int = _lib.C["CUCORE_SYSTEM_MEMORY_NOT_AVAILABLE"] & 0xFFFFFFFFFFFFFFFF


def _text(fn) -> str:
    length = ctypes.c_size_t()
    st = fn(None, 0, length)
    if st:
        raise_error(st)
    buffer = ctypes.create_string_buffer(length.value + 1)
    st = fn(buffer, len(buffer), length)
    if st:
        raise_error(st)
    return buffer.value.decode("utf-8", "replace")


def _version_tuple(text: str) -> Tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part.isdigit())


def get_user_mode_driver_version() -> Tuple[int, int]:
    """The CUDA (user-mode) driver's version as (major, minor), e.g. (13, 0); needs no NVML."""
    v = _cuda_driver_version()
    return v // 1000, (v % 1000) // 10


def get_kernel_mode_driver_version() -> Tuple[int, ...]:
    """The kernel-mode driver's version, e.g. (580, 65, 6) for 580.65.06. NotSupportedError without NVML."""
    return _version_tuple(_text(_cucore_system_driver_version))


def get_driver_version() -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
    """(user-mode version, kernel-mode version), e.g. ((13, 0), (580, 65, 6)). NotSupportedError without NVML."""
    return get_user_mode_driver_version(), get_kernel_mode_driver_version()


def get_nvml_version() -> Tuple[int, ...]:
    """NVML's version, e.g. (13, 580, 65, 6). NotSupportedError without NVML."""
    return _version_tuple(_text(_cucore_system_nvml_version))


def get_cuda_driver_version() -> int:
    """The newest CUDA version the driver supports as NVML reports it (e.g. 13000). NotSupportedError without
    NVML."""
    v = ctypes.c_int()
    st = _cucore_system_cuda_driver_version(v)
    if st:
        raise_error(st)
    return v.value


def get_num_devices() -> int:
    """The number of GPUs NVML sees (every GPU of the machine, whatever CUDA_VISIBLE_DEVICES says).
    NotSupportedError without NVML."""
    n = ctypes.c_uint()
    st = _cucore_system_device_count(n)
    if st:
        raise_error(st)
    return n.value


class PciInfo(NamedTuple):
    """A GPU's PCI location and identifiers."""
    bus_id: str           # "00000000:65:00.0"
    domain: int
    bus: int
    device: int
    pci_device_id: int    # device id << 16 | vendor id
    pci_sub_system_id: int


class MemoryInfo(NamedTuple):
    """A GPU's memory in bytes now."""
    total: int
    used: int
    free: int


class Utilization(NamedTuple):
    """The percentage of the last sample period a kernel ran (gpu) and device memory was accessed (memory)."""
    gpu: int
    memory: int


class ProcessInfo(NamedTuple):
    """A process with a compute context on a GPU, and the device memory it uses (MEMORY_NOT_AVAILABLE where
    NVML cannot see it, e.g. from a container)."""
    pid: int
    used_gpu_memory: int


class Device(HandleObject):
    """One GPU as NVML sees it (cuda.core: system.Device): `Device(index)`, `Device(uuid="GPU-...")` or
    `Device(pci_bus_id="0000:65:00.0")`. Name, UUID and PCI bus id are read once; the other properties read
    the GPU's state at each access. Raises NotSupportedError without NVML, and NVML's failures as CUDAError
    subclasses with NVML's text."""

    __slots__ = ()
    _release = staticmethod(_fast_system_device_release)
    _handle_fn = staticmethod(_cucore_system_device_handle)  # `handle`: the nvmlDevice_t, as an int

    def __new__(cls, index: Optional[int] = None, *, uuid: Optional[str] = None,
                pci_bus_id: Optional[str] = None) -> Device:
        given = [x is not None for x in (index, uuid, pci_bus_id)]
        if sum(given) != 1:
            raise TypeError("system.Device() takes exactly one of index, uuid= and pci_bus_id=")
        h = ctypes.c_void_p()
        if index is not None:
            if isinstance(index, bool) or not isinstance(index, int) or index < 0:
                raise TypeError(f"system.Device(index) takes a non-negative int, not {index!r}")
            st = _cucore_system_device_get(index, h)
        elif uuid is not None:
            st = _cucore_system_device_get_by_uuid(str(uuid).encode(), h)
        else:
            st = _cucore_system_device_get_by_pci_bus_id(str(pci_bus_id).encode(), h)
        if st:
            raise_error(st)
        return cls._wrap(h)

    @classmethod
    def _wrap(cls, h) -> Device:
        obj = object.__new__(cls)
        obj._h = _lib.handle_arg(h.value)
        obj._raw = None
        return obj

    @classmethod
    def _of(cls, device: _CudaDevice) -> Device:
        h = ctypes.c_void_p()
        st = _cucore_system_device_get_for_device(device._h, h)
        if st:
            raise_error(st, device)
        return cls._wrap(h)

    def __copy__(self) -> Device:
        """Another wrapper of the same GPU, with a reference of its own (close() one, the other still works)."""
        if self._h is None:
            return self
        st = _cucore_system_device_retain(self._h)
        if st:
            raise_error(st, self)
        obj = object.__new__(type(self))
        obj._h = self._h
        obj._raw = self._raw
        return obj

    def __repr__(self) -> str:
        if self._h is None:
            return "<system.Device (closed)>"
        return f"<system.Device {self.index}: {self.name}>"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Device):
            return NotImplemented
        return self is other or (self._h is not None and other._h is not None and self.uuid == other.uuid)

    def __hash__(self) -> int:
        return hash(self.uuid) if self._h is not None else id(self) >> 4

    def _string(self, fn) -> str:
        out = ctypes.c_char_p()
        st = fn(self._h, out)
        if st:
            raise_error(st, self)
        return out.value.decode("utf-8", "replace")  # type: ignore[union-attr]

    def _unsigned(self, fn) -> int:
        out = ctypes.c_uint()
        st = fn(self._h, out)
        if st:
            raise_error(st, self)
        return out.value

    def to_cuda_device(self) -> _CudaDevice:
        """The cucore.Device of this GPU (matched by UUID); InvalidArgumentError where CUDA does not see it
        (CUDA_VISIBLE_DEVICES)."""
        h = ctypes.c_void_p()
        st = _cucore_system_device_to_device(self._h, h)
        if st:
            raise_error(st, self)
        ordinal = ctypes.c_int()
        st = _cucore_device_ordinal(h, ordinal)
        _cucore_device_release(h)
        if st:
            raise_error(st)
        return _CudaDevice(ordinal.value)

    @property
    def index(self) -> int:
        """The NVML index (which need not be the CUDA ordinal)."""
        return self._unsigned(_cucore_system_device_index)

    @property
    def name(self) -> str:
        """The product name, e.g. "NVIDIA H100 80GB HBM3"."""
        return self._string(_cucore_system_device_name)

    @property
    def uuid(self) -> str:
        """The UUID as NVML writes it: "GPU-" and 32 hex digits in groups."""
        return self._string(_cucore_system_device_uuid)

    @property
    def pci_bus_id(self) -> str:
        """The PCI bus id as NVML writes it, "00000000:65:00.0"."""
        return self._string(_cucore_system_device_pci_bus_id)

    @property
    def pci_info(self) -> PciInfo:
        """The PCI location and identifiers."""
        c = _PciInfoC()
        c.struct_size = ctypes.sizeof(c)
        st = _cucore_system_device_pci_info(self._h, c)
        if st:
            raise_error(st, self)
        return PciInfo(self.pci_bus_id, c.domain, c.bus, c.device, c.pci_device_id, c.pci_subsystem_id)

    @property
    def memory_info(self) -> MemoryInfo:
        """Total, used and free device memory in bytes, now."""
        c = _MemoryInfoC()
        c.struct_size = ctypes.sizeof(c)
        st = _cucore_system_device_memory_info(self._h, c)
        if st:
            raise_error(st, self)
        return MemoryInfo(c.total, c.used, c.free)

    @property
    def utilization(self) -> Utilization:
        """GPU and memory utilization in percent over the last sample period."""
        gpu, memory = ctypes.c_uint(), ctypes.c_uint()
        st = _cucore_system_device_utilization(self._h, gpu, memory)
        if st:
            raise_error(st, self)
        return Utilization(gpu.value, memory.value)

    @property
    def temperature(self) -> int:
        """The GPU die's temperature in degrees Celsius."""
        return self._unsigned(_cucore_system_device_temperature)

    @property
    def power_usage(self) -> int:
        """The board's power draw now, in milliwatts."""
        return self._unsigned(_cucore_system_device_power_usage)

    @property
    def power_limit(self) -> int:
        """The power limit the driver enforces, in milliwatts."""
        return self._unsigned(_cucore_system_device_power_limit)

    def clock(self, kind: str = "graphics") -> int:
        """The current frequency in MHz of clock `kind`: "graphics", "sm", "memory" or "video"."""
        return self._clock(_cucore_system_device_clock, kind)

    def max_clock(self, kind: str = "graphics") -> int:
        """The highest frequency in MHz of clock `kind`: "graphics", "sm", "memory" or "video"."""
        return self._clock(_cucore_system_device_max_clock, kind)

    def _clock(self, fn, kind: str) -> int:
        value = _CLOCKS.get(str(kind).lower())
        if value is None:
            raise ValueError(f"clock kind {kind!r} is not one of {', '.join(_CLOCKS)}")
        out = ctypes.c_uint()
        st = fn(self._h, value, out)
        if st:
            raise_error(st, self)
        return out.value

    @property
    def clocks(self) -> Dict[str, int]:
        """Every clock's current frequency in MHz, by kind."""
        return {kind: self.clock(kind) for kind in _CLOCKS}

    @property
    def compute_mode(self) -> str:
        """"default", "exclusive_thread", "prohibited" or "exclusive_process"."""
        out = ctypes.c_int()
        st = _cucore_system_device_compute_mode(self._h, out)
        if st:
            raise_error(st, self)
        return _COMPUTE_MODES[out.value]

    @property
    def compute_running_processes(self) -> List[ProcessInfo]:
        """The processes with a compute context on this GPU now."""
        count = ctypes.c_size_t()
        while True:  # the list may grow between the sizing call and the reading one
            st = _cucore_system_device_processes(self._h, None, None, 0, count)
            if st:
                raise_error(st, self)
            capacity = count.value + 4
            pids, used = (ctypes.c_uint32 * capacity)(), (ctypes.c_uint64 * capacity)()
            st = _cucore_system_device_processes(self._h, pids, used, capacity, count)
            if st:
                raise_error(st, self)
            if count.value <= capacity:
                return [ProcessInfo(pids[i], used[i]) for i in range(count.value)]


_lib.hand_down("device", _system_device_of=Device._of)
