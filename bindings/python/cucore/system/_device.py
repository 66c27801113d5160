"""cucore.system.Device: one GPU as NVML sees it (cuda.core's `cuda.core.system.Device`), and the functions of
device pairs (get_p2p_status, get_topology_common_ancestor)."""
from __future__ import annotations

import ctypes
from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

from .. import _lib
from .._handle import HandleObject
from ..device import Device as _CudaDevice
from . import _calls
from ._accessors import CLOCK_TYPES, ClockInfo, FanInfo, InforomInfo, MigInfo, NvlinkInfo, PciInfo, Temperature
from ._info import (CLOCK_TYPE, CLOCKS_EVENT_REASONS, EVENT_TYPES, BAR1MemoryInfo, CoolerInfo, DeviceAttributes,
                    FieldValues, GpuDynamicPstatesInfo, MemoryInfo, ProcessInfo, RepairStatus, Utilization,
                    field_array, flags, member, pair)
from .exceptions import FunctionNotFoundError
from .typing import (AddressingMode, AffinityScope, ClocksEventReasons, ClockType, DeviceArch, EventType,
                     GpuP2PCapsIndex, GpuP2PStatus, GpuTopologyLevel)

__all__ = ["Device", "NvlinkInfo", "get_p2p_status", "get_topology_common_ancestor"]

_c = _calls
_COMPUTE_MODES: Dict[int, str] = {v: k for k, v in _lib.c_names("cucore_compute_mode_t", "CUCORE_COMPUTE_MODE_",
                                                                   skip=("unset",)).items()}
_LEGACY_CLOCKS: Dict[str, int] = _lib.c_names("cucore_system_clock_t", "CUCORE_SYSTEM_CLOCK_", skip=("unset",))
_BRANDS = {0: "Unknown", 1: "Quadro", 2: "Tesla", 3: "NVS", 4: "GRID", 5: "GeForce", 6: "Titan", 7: "NVIDIA vApps",
           8: "NVIDIA VPC", 9: "NVIDIA VCS", 10: "NVIDIA VWS", 11: "NVIDIA Cloud Gaming", 12: "Quadro RTX",
           13: "NVIDIA RTX", 14: "NVIDIA", 15: "GeForce RTX", 16: "Titan RTX", 17: "NVIDIA vGaming"}
_ADDRESSING = {1: AddressingMode.HMM, 2: AddressingMode.ATS}
_AFFINITY_SCOPE = {AffinityScope.NODE: 0, AffinityScope.SOCKET: 1}
_TOPOLOGY = {GpuTopologyLevel.INTERNAL: 0, GpuTopologyLevel.SINGLE: 10, GpuTopologyLevel.MULTIPLE: 20,
             GpuTopologyLevel.HOSTBRIDGE: 30, GpuTopologyLevel.NODE: 40, GpuTopologyLevel.SYSTEM: 50}
_TOPOLOGY_OF = {v: k for k, v in _TOPOLOGY.items()}
_P2P_CAPS = {GpuP2PCapsIndex.READ: 0, GpuP2PCapsIndex.WRITE: 1, GpuP2PCapsIndex.NVLINK: 2,
             GpuP2PCapsIndex.ATOMICS: 3, GpuP2PCapsIndex.PCI: 4, GpuP2PCapsIndex.PROP: 4,
             GpuP2PCapsIndex.UNKNOWN: 5}
_P2P_STATUS = dict(enumerate(GpuP2PStatus))
_PSTATE_UNKNOWN = 32
_PciInfoC = _lib.STRUCTS["cucore_system_pci_info_t"]
_MemoryInfoC = _lib.STRUCTS["cucore_system_memory_info_t"]


class Device(HandleObject):
    """One GPU as NVML sees it (cuda.core: system.Device): `Device(index=0)`, `Device(uuid="GPU-...")` or
    `Device(pci_bus_id="0000:65:00.0")` (each keyword-only, as in cuda.core). Name, UUID and PCI bus id
    are read once; the other properties read the GPU's state at each access. NVML's failures raise the
    cucore.system.NvmlError subclass of NVML's return code (NotSupportedError where the GPU or driver lacks a
    feature, LibraryNotFoundError without NVML)."""

    __slots__ = ()
    _release = staticmethod(_c._fast_system_device_release)
    _handle_fn = staticmethod(_c._cucore_system_device_handle)  # `handle`: the nvmlDevice_t, as an int

    def __new__(cls, *, index: Optional[int] = None, uuid: Union[bytes, str, None] = None,
                pci_bus_id: Union[bytes, str, None] = None) -> Device:
        if sum(x is not None for x in (index, uuid, pci_bus_id)) != 1:
            raise ValueError("system.Device() takes exactly one of index, uuid and pci_bus_id")
        h = ctypes.c_void_p()
        if index is not None:
            if isinstance(index, bool) or not isinstance(index, int) or index < 0:
                raise TypeError(f"system.Device(index) takes a non-negative int, not {index!r}")
            st = _c._cucore_system_device_get(index, h)
        elif uuid is not None:
            st = _c._cucore_system_device_get_by_uuid(_bytes(uuid), h)
        elif pci_bus_id is not None:
            st = _c._cucore_system_device_get_by_pci_bus_id(_bytes(pci_bus_id), h)
        if st:
            _c.fail(st)
        return cls._wrap(h.value or 0)

    def __init__(self, *, index: Optional[int] = None, uuid: Union[bytes, str, None] = None,
                 pci_bus_id: Union[bytes, str, None] = None) -> None:
        pass  # made in __new__ (a handle object); __init__ carries cuda.core's signature

    @classmethod
    def _wrap(cls, h: int) -> Device:
        obj = object.__new__(cls)
        obj._h = _lib.handle_arg(h)
        obj._raw = None
        return obj

    @classmethod
    def _of(cls, device: _CudaDevice) -> Device:
        h = ctypes.c_void_p()
        st = _c._cucore_system_device_get_for_device(device._h, h)
        if st:
            _c.fail(st, device)
        return cls._wrap(h.value or 0)

    def __copy__(self) -> Device:
        """Another wrapper of the same GPU, with a reference of its own (close() one, the other still works)."""
        if self._h is None:
            return self
        st = _c._cucore_system_device_retain(self._h)
        if st:
            _c.fail(st, self)
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
            _c.fail(st, self)
        return out.value.decode("utf-8", "replace")  # type: ignore[union-attr]

    def _unsigned(self, fn) -> int:
        out = ctypes.c_uint()
        st = fn(self._h, out)
        if st:
            _c.fail(st, self)
        return out.value

    def _query(self, which: str, arg0: int = 0, arg1: int = 0) -> List[int]:
        if self._h is None:
            _c.fail(_lib.C["CUCORE_ERROR_INVALID_HANDLE"], self)
        return _c.query(self._h, which, arg0, arg1)

    # ---- identity ----

    @classmethod
    def get_device_count(cls) -> int:
        """The number of GPUs NVML sees."""
        n = ctypes.c_uint()
        st = _c._cucore_system_device_count(n)
        if st:
            _c.fail(st)
        return n.value

    @classmethod
    def get_all_devices(cls) -> Iterable[Device]:
        """Every GPU NVML sees, by index."""
        return [cls(index=i) for i in range(cls.get_device_count())]

    @classmethod
    def get_all_devices_with_cpu_affinity(cls, cpu_index: int) -> Iterable[Device]:
        """The GPUs with an affinity to CPU `cpu_index` (Linux)."""
        return [cls._wrap(h) for h in _c.handles(_c._cucore_system_devices_with_cpu_affinity, int(cpu_index))]

    def to_cuda_device(self) -> _CudaDevice:
        """The cucore.Device of this GPU (matched by UUID); InvalidArgumentError where CUDA does not see it
        (CUDA_VISIBLE_DEVICES, a GPU in MIG mode)."""
        h = ctypes.c_void_p()
        st = _c._cucore_system_device_to_device(self._h, h)
        if st:
            _c.raise_error(st, self)
        ordinal = ctypes.c_int()
        st = _c._cucore_device_ordinal(h, ordinal)
        _c._cucore_device_release(h)
        if st:
            _c.raise_error(st)
        return _CudaDevice(ordinal.value)

    @property
    def index(self) -> int:
        """The NVML index (which need not be the CUDA ordinal)."""
        return self._unsigned(_c._cucore_system_device_index)

    @property
    def name(self) -> str:
        """The product name, e.g. "NVIDIA H100 80GB HBM3"."""
        return self._string(_c._cucore_system_device_name)

    @property
    def uuid(self) -> str:
        """The UUID as NVML writes it: "GPU-" (or "MIG-") and 32 hex digits in groups."""
        return self._string(_c._cucore_system_device_uuid)

    @property
    def uuid_without_prefix(self) -> str:
        """The UUID without its "GPU-" / "MIG-" prefix, as CUDA writes it."""
        uuid = self.uuid
        return uuid.split("-", 1)[1] if uuid[:4].upper() in ("GPU-", "MIG-") else uuid

    @property
    def pci_bus_id(self) -> str:
        """The PCI bus id as NVML writes it, "00000000:65:00.0"."""
        return self._string(_c._cucore_system_device_pci_bus_id)

    @property
    def numa_node_id(self) -> int:
        """The NUMA node of the GPU (on platforms where GPUs are NUMA nodes)."""
        return self._query("NUMA_NODE_ID")[0]

    @property
    def arch(self) -> DeviceArch:
        """The architecture (DeviceArch.HOPPER, ...; UNKNOWN for one this package does not name)."""
        value = self._query("ARCHITECTURE")[0]
        try:
            return DeviceArch(value)
        except ValueError:  # an architecture newer than this package's table
            return DeviceArch(DeviceArch.UNKNOWN)

    @property
    def brand(self) -> str:
        """The brand ("Tesla", "NVIDIA", "GeForce", ...; "Unknown" where NVML does not say)."""
        return _BRANDS.get(self._query("BRAND")[0], "Unknown")

    @property
    def serial(self) -> str:
        """The board's serial number (products with an InfoROM)."""
        return _c.device_text(self._h, "SERIAL")

    @property
    def module_id(self) -> int:
        """The GPU module's id on its baseboard (0 for a product without one)."""
        return self._query("MODULE_ID")[0]

    @property
    def minor_number(self) -> int:
        """N of the device node /dev/nvidiaN (Linux)."""
        return self._query("MINOR_NUMBER")[0]

    @property
    def is_c2c_enabled(self) -> bool:
        """True if chip-to-chip (C2C) mode is on."""
        return bool(self._query("C2C_ENABLED")[0])

    @property
    def is_persistence_mode_enabled(self) -> bool:
        """True if persistence mode is on (Linux); settable (needs root)."""
        return bool(self._query("PERSISTENCE_MODE")[0])

    @is_persistence_mode_enabled.setter
    def is_persistence_mode_enabled(self, enabled: bool) -> None:
        _c.control(self._h, "PERSISTENCE_MODE", 1 if enabled else 0)

    @property
    def cuda_compute_capability(self) -> Tuple[int, int]:
        """The CUDA compute capability as (major, minor), e.g. (9, 0)."""
        return pair(self._query("COMPUTE_CAPABILITY"))

    @property
    def addressing_mode(self) -> Optional[AddressingMode]:
        """How the GPU addresses host memory (HMM or ATS), or None."""
        return _ADDRESSING.get(self._query("ADDRESSING_MODE")[0])

    @property
    def mig(self) -> MigInfo:
        """The GPU's Multi-Instance GPU state."""
        return MigInfo(self, type(self)._wrap)

    # ---- affinity and topology ----

    def get_memory_affinity(self, scope: AffinityScope | str = AffinityScope.NODE) -> List[int]:
        """The NUMA nodes (or CPU sockets) nearest the GPU's memory (Linux)."""
        return self._query("MEMORY_AFFINITY", _AFFINITY_SCOPE[member(AffinityScope, scope, "scope")])

    def get_cpu_affinity(self, scope: AffinityScope | str = AffinityScope.NODE) -> List[int]:
        """The CPUs nearest the GPU, of its NUMA node (or CPU socket) (Linux)."""
        return self._query("CPU_AFFINITY", _AFFINITY_SCOPE[member(AffinityScope, scope, "scope")])

    def set_cpu_affinity(self) -> None:
        """Bind the calling thread to the CPUs nearest the GPU (Linux)."""
        _c.control(self._h, "SET_CPU_AFFINITY")

    def clear_cpu_affinity(self) -> None:
        """Clear the calling thread's CPU binding (Linux)."""
        _c.control(self._h, "CLEAR_CPU_AFFINITY")

    def get_topology_nearest_gpus(self, level: GpuTopologyLevel | str) -> Iterable[Device]:
        """The GPUs connected to this one at topology level `level` (Linux)."""
        which = _TOPOLOGY[member(GpuTopologyLevel, level, "topology level")]
        return [type(self)._wrap(h) for h in _c.handles(_c._cucore_system_device_related, self._h,
                                                         _c.RELATION["NEAREST_GPUS"], which)]

    # ---- clocks and performance ----

    def get_clock(self, clock_type: ClockType | str) -> ClockInfo:
        """Clock domain `clock_type` (graphics, sm, memory, video)."""
        return ClockInfo(self, CLOCK_TYPE[member(ClockType, clock_type, "clock type")])

    @property
    def is_auto_boosted_clocks_enabled(self) -> Tuple[bool, bool]:
        """(auto boost on now, on by default)."""
        now, default = self._query("AUTO_BOOSTED_CLOCKS")
        return bool(now), bool(default)

    @property
    def current_clock_event_reasons(self) -> List[ClocksEventReasons]:
        """Why the clocks are where they are now ([ClocksEventReasons.NONE] for no reason)."""
        return flags(self._query("CLOCK_EVENT_REASONS")[0], CLOCKS_EVENT_REASONS) or [ClocksEventReasons.NONE]

    @property
    def supported_clock_event_reasons(self) -> List[ClocksEventReasons]:
        """The clock event reasons this GPU can report."""
        return flags(self._query("SUPPORTED_CLOCK_EVENT_REASONS")[0], CLOCKS_EVENT_REASONS)

    @property
    def performance_state(self) -> Optional[int]:
        """The P-state now (0 fastest .. 15), or None where NVML does not know it."""
        value = self._query("PERFORMANCE_STATE")[0]
        return None if value == _PSTATE_UNKNOWN else value

    @property
    def supported_pstates(self) -> List[int]:
        """The P-states the GPU supports."""
        return self._query("SUPPORTED_PSTATES")

    @property
    def dynamic_pstates_info(self) -> GpuDynamicPstatesInfo:
        """The performance monitor's utilization domains."""
        return GpuDynamicPstatesInfo(self._query("DYNAMIC_PSTATES"))

    # ---- cooling and temperature ----

    @property
    def cooler(self) -> CoolerInfo:
        """The GPU's cooler."""
        return CoolerInfo(*self._query("COOLER")[:2])

    def get_fan(self, fan: int = 0) -> FanInfo:
        """Fan `fan` (0 .. num_fans - 1): ValueError outside that range, as cuda.core (NotSupportedError where
        the product reports no fan count)."""
        count = self.num_fans
        if not 0 <= int(fan) < count:
            raise ValueError(f"Fan index {fan} is out of range [0, {count})")
        return FanInfo(self, int(fan))

    @property
    def num_fans(self) -> int:
        """The number of fans (NotSupportedError on products without: data-center GPUs)."""
        return self._query("FAN_COUNT")[0]

    @property
    def temperature(self) -> Temperature:
        """The GPU's temperatures (get_sensor(), thresholds, margin, sensors)."""
        return Temperature(self)

    # ---- display, events, fields ----

    @property
    def is_display_connected(self) -> bool:
        """True if a display is connected to one of the GPU's outputs."""
        return bool(self._query("DISPLAY_CONNECTED")[0])

    @property
    def is_display_active(self) -> bool:
        """True if a display is initialised on the GPU (an X server, with or without a monitor)."""
        return bool(self._query("DISPLAY_ACTIVE")[0])

    def register_events(self, events: Union[EventType, str, List[Union[EventType, str]]]) -> DeviceEvents:
        """Start recording events of the given types on this GPU (Linux); wait for them with
        DeviceEvents.wait. Events before this call are not recorded. NotSupportedError where the GPU lacks a
        type (get_supported_event_types lists its types)."""
        items = events if isinstance(events, (list, tuple)) else [events]
        mask = 0
        for item in items:
            mask |= EVENT_TYPES.get(member(EventType, item, "event type"), 0)
        if not mask:
            raise ValueError(f"no event type to register in {events!r}")
        return DeviceEvents(self, mask)

    def get_supported_event_types(self) -> List[EventType]:
        """The event types this GPU can report (Linux)."""
        return flags(self._query("SUPPORTED_EVENT_TYPES")[0], EVENT_TYPES)

    def get_field_values(self, field_ids: List[Union[int, Tuple[int, int]]]) -> FieldValues:
        """Several NVML fields at once: each item a FieldId or (FieldId, scope id). A field NVML cannot read
        raises its NvmlError when its value is read (FieldValues.validate checks them all)."""
        array = field_array(field_ids)
        st = _c._cucore_system_device_field_values(self._h, array, len(array))
        if st:
            _c.fail(st, self)
        return FieldValues(array)

    def clear_field_values(self, field_ids: List[Union[int, Tuple[int, int]]]) -> None:
        """Reset fields (counters) to zero: each item a FieldId or (FieldId, scope id)."""
        array = field_array(field_ids)
        st = _c._cucore_system_device_clear_field_values(self._h, array, len(array))
        if st:
            _c.fail(st, self)

    # ---- memory, PCI, NVLink ----

    @property
    def inforom(self) -> InforomInfo:
        """The GPU's InfoROM."""
        return InforomInfo(self)

    @property
    def bar1_memory_info(self) -> BAR1MemoryInfo:
        """The BAR1 memory (the window of device memory the CPU and peers reach), in bytes."""
        return BAR1MemoryInfo(*self._query("BAR1_MEMORY")[:3])

    @property
    def memory_info(self) -> MemoryInfo:
        """Total, reserved, free and used device memory in bytes, now (reserved 0 with an NVML older than
        nvmlDeviceGetMemoryInfo_v2, whose used then counts it)."""
        try:
            return MemoryInfo(*self._query("MEMORY")[:4])
        except FunctionNotFoundError:
            c = _MemoryInfoC()
            c.struct_size = ctypes.sizeof(c)
            st = _c._cucore_system_device_memory_info(self._h, c)
            if st:
                _c.fail(st, self)
            return MemoryInfo(c.total, 0, c.free, c.used)

    def get_nvlink(self, link: int) -> NvlinkInfo:
        """NVLink `link` (0 .. get_nvlink_count() - 1; ValueError for another)."""
        count = self.get_nvlink_count()
        if isinstance(link, bool) or not isinstance(link, int) or not 0 <= link < count:
            raise ValueError(f"link {link!r} is not in 0..{count - 1} (this device has {count} NVLinks)")
        return NvlinkInfo(self, link)

    def get_nvlink_count(self) -> int:
        """The number of NVLinks of the GPU."""
        return self._query("NVLINK_COUNT")[0]

    def get_nvlinks(self) -> Iterable[NvlinkInfo]:
        """Every NVLink of the GPU."""
        return [NvlinkInfo(self, link) for link in range(self.get_nvlink_count())]

    @property
    def pci_info(self) -> PciInfo:
        """The PCI identity and link of the GPU (base_class and sub_class need an NVML with
        nvmlDeviceGetPciInfoExt: with an older one they raise its FunctionNotFoundError)."""
        try:
            return PciInfo(self, self._query("PCI_INFO"), self.pci_bus_id)
        except FunctionNotFoundError as missing:
            c = _PciInfoC()
            c.struct_size = ctypes.sizeof(c)
            st = _c._cucore_system_device_pci_info(self._h, c)
            if st:
                _c.fail(st, self)
            values: List[Any] = [c.domain, c.bus, c.device, c.pci_device_id, c.pci_subsystem_id, missing, missing]
            return PciInfo(self, values, self.pci_bus_id)

    # ---- use ----

    @property
    def utilization(self) -> Utilization:
        """GPU and memory utilization in percent over the last sample period."""
        gpu, memory = ctypes.c_uint(), ctypes.c_uint()
        st = _c._cucore_system_device_utilization(self._h, gpu, memory)
        if st:
            _c.fail(st, self)
        return Utilization(gpu.value, memory.value)

    @property
    def compute_running_processes(self) -> List[ProcessInfo]:
        """The processes with a compute context on this GPU now."""
        v = self._query("PROCESSES")
        return [ProcessInfo(v[i], v[i + 1] & 0xFFFFFFFFFFFFFFFF, v[i + 2], v[i + 3]) for i in range(0, len(v), 4)]

    @property
    def repair_status(self) -> RepairStatus:
        """Whether a TPC or channel repair is pending."""
        return RepairStatus(*self._query("REPAIR_STATUS")[:2])

    @property
    def attributes(self) -> DeviceAttributes:
        """Counts of the GPU's engines and slices (Ampere and newer, Linux)."""
        return DeviceAttributes(self._query("ATTRIBUTES"))

    # ---- cucore's own (beyond cuda.core) ----

    @property
    def power_usage(self) -> int:
        """The board's power draw now, in milliwatts."""
        return self._unsigned(_c._cucore_system_device_power_usage)

    @property
    def power_limit(self) -> int:
        """The power limit the driver enforces, in milliwatts."""
        return self._unsigned(_c._cucore_system_device_power_limit)

    def clock(self, kind: str = "graphics") -> int:
        """The current frequency in MHz of clock `kind`: "graphics", "sm", "memory" or "video"."""
        return self._legacy_clock(_c._cucore_system_device_clock, kind)

    def max_clock(self, kind: str = "graphics") -> int:
        """The highest frequency in MHz of clock `kind`: "graphics", "sm", "memory" or "video"."""
        return self._legacy_clock(_c._cucore_system_device_max_clock, kind)

    def _legacy_clock(self, fn, kind: str) -> int:
        value = _LEGACY_CLOCKS.get(str(kind).lower())
        if value is None:
            raise ValueError(f"clock kind {kind!r} is not one of {', '.join(_LEGACY_CLOCKS)}")
        out = ctypes.c_uint()
        st = fn(self._h, value, out)
        if st:
            _c.fail(st, self)
        return out.value

    @property
    def clocks(self) -> Dict[str, int]:
        """Every clock's current frequency in MHz, by kind."""
        return {str(kind): self.clock(str(kind)) for kind in CLOCK_TYPES}

    @property
    def compute_mode(self) -> str:
        """"default", "exclusive_thread", "prohibited" or "exclusive_process"."""
        out = ctypes.c_int()
        st = _c._cucore_system_device_compute_mode(self._h, out)
        if st:
            _c.fail(st, self)
        return _COMPUTE_MODES[out.value]


class EventData:
    """One event of a device (DeviceEvents.wait)."""

    __slots__ = ("_device", "_c")

    def __init__(self, device: Optional[Device], c: Any) -> None:
        self._device, self._c = device, c

    @property
    def device(self) -> Optional[Device]:
        """The GPU (or MIG device) the event happened on."""
        return self._device

    @property
    def event_type(self) -> EventType:
        """The event's type."""
        for member_, bit in EVENT_TYPES.items():
            if self._c.event_type == bit:
                return member_
        return EventType.NONE

    @property
    def event_data(self) -> int:
        """The event's data (for an XID critical error, the XID)."""
        return int(self._c.event_data)

    @property
    def gpu_instance_id(self) -> int:
        """The MIG GPU instance of the event (0xFFFFFFFF where the GPU is not in MIG mode)."""
        return int(self._c.gpu_instance_id)

    @property
    def compute_instance_id(self) -> int:
        """The MIG compute instance of the event (0xFFFFFFFF where the GPU is not in MIG mode)."""
        return int(self._c.compute_instance_id)


class DeviceEvents:
    """The events registered on a GPU (Device.register_events): its own handle of the GPU, whose event set
    records them until close() or garbage collection."""

    __slots__ = ("_device",)

    def __init__(self, device: Device, event_types: int) -> None:
        # A handle of its own: each handle object of libcucore has its own event set.
        self._device = Device(uuid=device.uuid)
        st = _c._cucore_system_device_register_events(self._device._h, event_types)
        if st:
            self._device.close()
            _c.fail(st)

    def wait(self, timeout_ms: int = 0) -> EventData:
        """The next event, waiting up to `timeout_ms` milliseconds for it (0: no limit); TimeoutError
        (cucore.system's, NVML's) when none came in time, GpuIsLostError where the GPU fell off the bus."""
        if self._device._h is None:
            _c.fail(_lib.C["CUCORE_ERROR_INVALID_HANDLE"], self._device)
        event = _c.EventC()
        h = ctypes.c_void_p()
        st = _c._cucore_system_device_wait_event(self._device._h, int(timeout_ms), event, h)
        if st:
            _c.fail(st, self._device)
        return EventData(Device._wrap(h.value) if h.value else None, event)

    def close(self) -> None:
        """Stop recording (frees the event set)."""
        self._device.close()

    def __enter__(self) -> DeviceEvents:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _bytes(text: Union[bytes, str]) -> bytes:
    return text if isinstance(text, bytes) else str(text).encode()


def get_topology_common_ancestor(device1: Device, device2: Device) -> GpuTopologyLevel:
    """The nearest common ancestor of two GPUs in the PCI topology (Linux)."""
    level = ctypes.c_int()
    st = _c._cucore_system_device_common_ancestor(device1._h, device2._h, level)
    if st:
        _c.fail(st, device1, device2)
    return _TOPOLOGY_OF[level.value]


def get_p2p_status(device1: Device, device2: Device, index: GpuP2PCapsIndex | str) -> GpuP2PStatus:
    """Whether peer-to-peer capability `index` works between two GPUs, and why not."""
    caps = _P2P_CAPS[member(GpuP2PCapsIndex, index, "P2P capability")]
    status = ctypes.c_int()
    st = _c._cucore_system_device_p2p_status(device1._h, device2._h, caps, status)
    if st:
        _c.fail(st, device1, device2)
    return _P2P_STATUS.get(status.value, GpuP2PStatus.UNKNOWN)
