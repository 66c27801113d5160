"""System events (cuda.core's `cuda.core.system.register_events`): GPUs bound to or unbound from the driver,
recorded from the registration on in a libcucore system event set (cucore_system_register_events) and waited
for in batches (cucore_system_event_set_wait). Linux only; where NVML cannot record them (an older NVML, many
virtual machines) registering raises NotSupportedError."""
from __future__ import annotations

import ctypes
from typing import Iterator, List, Sequence, Tuple, Union, overload

from .. import _lib
from .._handle import HandleObject
from . import _calls as _c
from ._device import Device
from ._info import member
from .exceptions import InvalidArgumentError
from .typing import SystemEventType

__all__ = ["RegisteredSystemEvents", "SystemEvent", "SystemEvents", "register_events"]

# SystemEventType -> NVML's nvmlSystemEventType bit (CUCORE_SYSTEM_EVENT_*).
_EVENT_BITS = {SystemEventType.UNBIND: _lib.C["CUCORE_SYSTEM_EVENT_GPU_DRIVER_UNBIND"],
               SystemEventType.BIND: _lib.C["CUCORE_SYSTEM_EVENT_GPU_DRIVER_BIND"]}
_EVENT_OF = {bit: kind for kind, bit in _EVENT_BITS.items()}


def _pci_bus_id_from_gpu_id(gpu_id: int) -> str:
    """The NVML-style PCI bus id ("00000000:65:00.0") of a system event's packed `gpu_id` (domain << 16 |
    bus << 8 | device), as cuda.core decodes it."""
    return f"{(gpu_id >> 16) & 0xFFFF:08X}:{(gpu_id >> 8) & 0xFF:02X}:{gpu_id & 0xFF:02X}.0"


def _event_mask(events: Union[SystemEventType, str, List[Union[SystemEventType, str]]]) -> int:
    items = events if isinstance(events, (list, tuple)) else [events]
    mask = 0
    for item in items:
        mask |= _EVENT_BITS[member(SystemEventType, item, "system event type")]
    if not mask:
        raise ValueError(f"no system event type to register in {events!r}")
    return mask


class SystemEvent:
    """One system event (cuda.core's `SystemEvent`): its type and its GPU."""

    __slots__ = ("_type", "_gpu_id")

    def __init__(self, event_data: Tuple[int, int]) -> None:
        self._type, self._gpu_id = int(event_data[0]), int(event_data[1])

    @property
    def event_type(self) -> SystemEventType:
        """The SystemEventType that was triggered (UNBIND or BIND)."""
        return _EVENT_OF[self._type]

    @property
    def gpu_id(self) -> int:
        """The GPU's id in NVML's packed PCI format (domain << 16 | bus << 8 | device)."""
        return self._gpu_id

    @property
    def device(self) -> Device:
        """The cucore.system.Device of the event's GPU, found by the PCI bus id its gpu_id packs."""
        return Device(pci_bus_id=_pci_bus_id_from_gpu_id(self._gpu_id))

    def __repr__(self) -> str:
        return f"<SystemEvent {self.event_type.value} of GPU {_pci_bus_id_from_gpu_id(self._gpu_id)}>"


class SystemEvents(Sequence[SystemEvent]):
    """The events one wait received (cuda.core's `SystemEvents`): a sequence of SystemEvent, in order."""

    __slots__ = ("_events",)

    def __init__(self, event_data: Sequence[Tuple[int, int]]) -> None:
        self._events = [SystemEvent(item) for item in event_data]

    def __len__(self) -> int:
        """The number of events received."""
        return len(self._events)

    @overload
    def __getitem__(self, idx: int) -> SystemEvent: ...

    @overload
    def __getitem__(self, idx: slice) -> List[SystemEvent]: ...

    def __getitem__(self, idx):
        """The SystemEvent at index `idx` (negative counts from the end; IndexError past it)."""
        return self._events[idx]

    def __iter__(self) -> Iterator[SystemEvent]:
        return iter(self._events)

    def __repr__(self) -> str:
        return f"<SystemEvents {self._events!r}>"


class RegisteredSystemEvents(HandleObject):
    """A set of system event types being recorded (cuda.core's `RegisteredSystemEvents`; system.register_events
    makes one): wait() returns what happened since. The set is freed by close(), `with` or garbage collection."""

    __slots__ = ()
    _release = staticmethod(_c._fast_system_event_set_release)

    def __init__(self, events: Union[SystemEventType, str, List[Union[SystemEventType, str]]]) -> None:
        mask = _event_mask(events)
        h = ctypes.c_void_p()
        st = _c._cucore_system_register_events(mask, h)
        if st:
            self._h = None
            _c.fail(st)
        self._h = _lib.handle_arg(h.value or 0)
        self._raw = None

    def wait(self, timeout_ms: int = 0, buffer_size: int = 1) -> SystemEvents:
        """Wait up to `timeout_ms` milliseconds (0: no limit) for events, returning at once where some are ready,
        and return up to `buffer_size` (at least 1) of them. Raises cucore.system.TimeoutError when none came in
        time, GpuIsLostError where a GPU fell off the bus, InvalidArgumentError for a buffer_size below 1."""
        if isinstance(buffer_size, bool) or not isinstance(buffer_size, int):
            raise TypeError(f"buffer_size must be an int, not {buffer_size!r}")
        if buffer_size < 1:  # NVML's own answer to an empty buffer, as cuda.core raises it
            raise InvalidArgumentError(2, f"buffer_size must be at least 1, not {buffer_size}")
        if not 0 <= int(timeout_ms) <= 0xFFFFFFFF:
            raise ValueError(f"timeout_ms must be in 0..4294967295, not {timeout_ms!r}")
        if self._h is None:
            _c.fail(_lib.C["CUCORE_ERROR_INVALID_HANDLE"], self)
        types = (ctypes.c_uint64 * buffer_size)()
        gpus = (ctypes.c_uint32 * buffer_size)()
        count = ctypes.c_size_t()
        st = _c._cucore_system_event_set_wait(self._h, int(timeout_ms), types, gpus, buffer_size, count)
        if st:
            _c.fail(st, self)
        n = min(count.value, buffer_size)
        return SystemEvents([(types[i], gpus[i]) for i in range(n)])

    def __repr__(self) -> str:
        return "<RegisteredSystemEvents (closed)>" if self._h is None else "<RegisteredSystemEvents>"


def register_events(events: Union[SystemEventType, str, List[Union[SystemEventType, str]]]) -> RegisteredSystemEvents:
    """Start recording the system events of `events` (a SystemEventType, its string, or a list of them); events
    before this call are not recorded. Linux only. Wait for them with RegisteredSystemEvents.wait. Raises
    NotSupportedError where NVML cannot record the requested types here."""
    return RegisteredSystemEvents(events)
