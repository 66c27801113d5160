"""Virtual memory resources (cucore_virtual_memory_resource_create): virtual memory management (VMM).

    vmm = cucore.VirtualMemoryResource(dev, cucore.VirtualMemoryResourceOptions(reserve_size=1 << 30))
    buf = vmm.allocate(1 << 21)                             # synchronous: no stream needed
    vmm.modify_allocation(buf, 1 << 22)                     # grows, keeping the contents
    vmm.peer_accessible_by.add(1)                           # peer access as for pools (memory_pool.py)

Options are dataclasses checked when made (TypeError / ValueError naming the field); a dict of their fields
is accepted wherever they are.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Optional, Union

from . import _lib
from .buffer import Buffer
from .common import check_options, options_of
from .device import _device
from .memory_pool import PeerAccessible, access_value
from .memory_resource import MemoryResource, MemoryResourceKind, _create

if TYPE_CHECKING:
    from .device import Device

(_cucore_virtual_memory_resource_create,) = _lib.bind(globals(), "cucore_virtual_memory_resource_create")

VirtualOptionsC = _lib.STRUCTS["cucore_virtual_memory_resource_options_t"]

_LOCATION_TYPES = _lib.c_names("cucore_location_type_t", "CUCORE_LOCATION_", skip=("none", "host_numa_current"))
_GRANULARITIES = ("recommended", "minimum")
_HANDLE_TYPES = (None, "posix_fd")
_SELF_ACCESS = ("rw", "r")


@dataclass
class VirtualMemoryResourceOptions:
    """Options of a virtual memory resource (cucore_virtual_memory_resource_options_t).

    location_type: where the physical memory lives: "device" (the resource's device), "host" or "host_numa".
    location_id: the NUMA node for "host_numa" (ignored otherwise).
    granularity: "recommended" (the default) or "minimum": what sizes are rounded up to.
    handle_type: None, or "posix_fd" for physical memory exportable as a file descriptor.
    reserve_size: address space reserved per buffer, in bytes: a buffer grows in place up to it
        (0: just its size).
    self_access: the access of the resource's own device: "rw" or "r".
    """
    location_type: str = "device"
    location_id: int = 0
    granularity: str = "recommended"
    handle_type: Optional[str] = None
    reserve_size: int = 0
    self_access: str = "rw"

    def __post_init__(self) -> None:
        name = "VirtualMemoryResourceOptions"
        for field, allowed in (("location_type", tuple(_LOCATION_TYPES)), ("granularity", _GRANULARITIES),
                               ("handle_type", _HANDLE_TYPES), ("self_access", _SELF_ACCESS)):
            value = getattr(self, field)
            if value not in allowed or isinstance(value, bool):
                raise ValueError(f"{name}.{field} must be one of {', '.join(map(repr, allowed))}, not {value!r}")
        check_options(self, ("reserve_size",))
        if isinstance(self.location_id, bool) or not isinstance(self.location_id, int):
            raise TypeError(f"{name}.location_id must be an int, not {type(self.location_id).__name__}")
        if not 0 <= self.location_id < 2**31:
            raise ValueError(f"{name}.location_id must be in [0, 2**31), not {self.location_id}")


def _virtual_struct(options):
    """The cucore_virtual_memory_resource_options_t of VirtualMemoryResourceOptions; every value is spelled
    out (the struct's zeros would mean the same defaults)."""
    c = VirtualOptionsC()
    c.struct_size = ctypes.sizeof(c)
    c.location_type = _LOCATION_TYPES[options.location_type]
    c.location_id = options.location_id
    c.minimum_granularity = options.granularity == "minimum"
    c.posix_fd_shareable = options.handle_type == "posix_fd"
    c.reserve_size = options.reserve_size
    c.self_access = access_value(options.self_access, "self_access")
    return c


class VirtualMemoryResource(MemoryResource, PeerAccessible):
    """Virtual memory management (cuMemCreate + cuMemAddressReserve + cuMemMap + cuMemSetAccess): each
    buffer is physical memory mapped into an address range of its own, which it can grow into
    (modify_allocation / Buffer.grow). `VirtualMemoryResource(device, options=None)`; allocation and release
    are synchronous (`stream` is optional and unused); sizes round up to the allocation granularity."""

    __slots__ = ()
    _builtin = True
    _resource_kind = MemoryResourceKind.VIRTUAL

    def __new__(cls, device: Union[Device, int], options: Union[VirtualMemoryResourceOptions, Dict[str, Any], None] = None) -> VirtualMemoryResource:
        if isinstance(device, (VirtualMemoryResourceOptions, dict)) or device is None:
            raise TypeError("VirtualMemoryResource(device, options=None) needs a device (a Device or an ordinal)")
        dev = _device(device)
        options = VirtualMemoryResourceOptions() if options is None else \
            options_of(options, VirtualMemoryResourceOptions)
        return _create(cls, _cucore_virtual_memory_resource_create, dev, _virtual_struct(options), options,
                       dev.device_id)

    def modify_allocation(self, buf: Buffer, new_size: int) -> Buffer:
        """Grow `buf` (a Buffer of this resource) to `new_size` bytes keeping its contents, and return it
        (cuda.core's name; Buffer.grow does the same). Its address changes when the reservation cannot
        extend in place; shrinking is not supported (a smaller size changes nothing)."""
        if not isinstance(buf, Buffer):
            raise TypeError(f"modify_allocation() takes a Buffer, not {type(buf).__name__}")
        if buf.memory_resource is not self:
            raise ValueError("modify_allocation(): the buffer was not allocated from this VirtualMemoryResource")
        return buf.grow(new_size)
