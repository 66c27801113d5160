"""Virtual memory resources (cucore_virtual_memory_resource_create): virtual memory management (VMM).

    vmm = cucore.VirtualMemoryResource(dev, cucore.VirtualMemoryResourceOptions(reserve_size=1 << 30, peers=[1]))
    buf = vmm.allocate(1 << 21)                             # synchronous: no stream needed
    vmm.modify_allocation(buf, 1 << 22)                     # grows, keeping the contents
    vmm.peer_accessible_by.discard(1)                       # peer access as for pools (memory_pool.py)

Options are dataclasses checked when made (TypeError / ValueError naming the field); a dict of their fields
is accepted wherever they are.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Iterable, Optional, Union

from . import _lib
from .buffer import Buffer
from .common import NotSupportedError, Status, check_options, options_of
from .device import _device
from .host import Host
from .memory_pool import PeerAccessible, access_value
from .memory_resource import MemoryResource, MemoryResourceKind, _create

if TYPE_CHECKING:
    from .device import Device

(_cucore_virtual_memory_resource_create,) = _lib.bind(globals(), "cucore_virtual_memory_resource_create")

VirtualOptionsC = _lib.STRUCTS["cucore_virtual_memory_resource_options_t"]

_LOCATION_TYPES = _lib.c_names("cucore_location_type_t", "CUCORE_LOCATION_", skip=("none", "host_numa_current"))
_GRANULARITIES = ("recommended", "minimum")
_HANDLE_TYPES = (None, "posix_fd", "fabric", "win32_kmt")
_ACCESS = ("rw", "r")


@dataclass
class VirtualMemoryResourceOptions:
    """Options of a virtual memory resource (cucore_virtual_memory_resource_options_t), with cuda.core's fields
    and defaults, and cucore's own two at the end.

    allocation_type: "pinned" (the only kind here: "managed" raises NotSupportedError).
    location_type: where the physical memory lives: "device" (the resource's device), "host", "host_numa"
        (node: location_id) or "host_numa_current" (the calling thread's node, when the resource is made).
    handle_type: "posix_fd" (the default: the physical memory can be exported as a file descriptor), "fabric"
        (a fabric handle), or None; "win32_kmt" is Windows-only (NotSupportedError here).
    granularity: "recommended" (the default) or "minimum": what sizes are rounded up to.
    gpu_direct_rdma: ask for memory usable by GPUDirect RDMA (a hint).
    addr_hint: where each buffer's address range should start if free (0: the driver chooses).
    addr_align: the alignment of each buffer's address range, a power of two (None: the granularity).
    peers: ordinals (or Devices) of other devices granted `peer_access` when the resource is made.
    self_access: the access of the resource's own device: "rw" or "r".
    peer_access: the access of `peers`: "rw" or "r".
    location_id: the NUMA node for "host_numa" (cucore's; ignored otherwise).
    reserve_size: address space reserved per buffer, in bytes: a buffer grows in place up to it (cucore's;
        0: just its size).
    """
    allocation_type: str = "pinned"
    location_type: str = "device"
    handle_type: Optional[str] = "posix_fd"
    granularity: str = "recommended"
    gpu_direct_rdma: bool = False
    addr_hint: int = 0
    addr_align: Optional[int] = None
    peers: Iterable[Any] = ()
    self_access: str = "rw"
    peer_access: str = "rw"
    location_id: int = 0
    reserve_size: int = 0

    def __post_init__(self) -> None:
        name = "VirtualMemoryResourceOptions"
        for field, allowed in (("allocation_type", ("pinned", "managed")),
                               ("location_type", tuple(_LOCATION_TYPES) + ("host_numa_current",)),
                               ("granularity", _GRANULARITIES), ("handle_type", _HANDLE_TYPES),
                               ("self_access", _ACCESS), ("peer_access", _ACCESS)):
            value = getattr(self, field)
            if isinstance(value, str):
                value = str(value)  # a cucore.typing member is its value
            if value not in allowed or isinstance(value, bool):
                raise ValueError(f"{name}.{field} must be one of {', '.join(map(repr, allowed))}, not {value!r}")
            setattr(self, field, value)
        check_options(self, ("reserve_size", "addr_hint"), ("gpu_direct_rdma",))
        if self.addr_align is not None:
            check_options(self, ("addr_align",))
            if self.addr_align & (self.addr_align - 1):
                raise ValueError(f"{name}.addr_align must be a power of two, not {self.addr_align}")
        if isinstance(self.location_id, bool) or not isinstance(self.location_id, int):
            raise TypeError(f"{name}.location_id must be an int, not {type(self.location_id).__name__}")
        if not 0 <= self.location_id < 2**31:
            raise ValueError(f"{name}.location_id must be in [0, 2**31), not {self.location_id}")
        self.peers = tuple(self.peers)


def _virtual_struct(options):
    """The cucore_virtual_memory_resource_options_t of VirtualMemoryResourceOptions; every value is spelled
    out (the struct's zeros would mean the same defaults)."""
    if options.allocation_type != "pinned":
        raise NotSupportedError(Status.ERROR_NOT_SUPPORTED, "VirtualMemoryResourceOptions.allocation_type 'managed': libcucore's virtual "
                                "memory resources map pinned physical memory only")
    if options.handle_type == "win32_kmt":
        raise NotSupportedError(Status.ERROR_NOT_SUPPORTED, "VirtualMemoryResourceOptions.handle_type 'win32_kmt' is for Windows")
    c = VirtualOptionsC()
    c.struct_size = ctypes.sizeof(c)
    location_type, location_id = options.location_type, options.location_id
    if location_type == "host_numa_current":
        location_type, location_id = "host_numa", Host.current_numa_id()
    c.location_type = _LOCATION_TYPES[location_type]
    c.location_id = location_id
    c.minimum_granularity = options.granularity == "minimum"
    c.posix_fd_shareable = options.handle_type == "posix_fd"
    c.fabric_shareable = options.handle_type == "fabric"
    c.gpu_direct_rdma = bool(options.gpu_direct_rdma)
    c.address_hint = options.addr_hint
    c.address_alignment = options.addr_align or 0
    c.reserve_size = options.reserve_size
    c.self_access = access_value(options.self_access, "self_access")
    return c


class VirtualMemoryResource(MemoryResource, PeerAccessible):
    """Virtual memory management (cuMemCreate + cuMemAddressReserve + cuMemMap + cuMemSetAccess): each
    buffer is physical memory mapped into an address range of its own, which it can grow into
    (modify_allocation / Buffer.grow). `VirtualMemoryResource(device_id, config=None)` as cuda.core's (`config`
    a VirtualMemoryResourceOptions; `options` is the same argument by cucore's earlier name); allocation and
    release are synchronous (`stream` is optional and unused); sizes round up to the allocation granularity."""

    __slots__ = ()
    _builtin = True
    _resource_kind = MemoryResourceKind.VIRTUAL

    def __new__(cls, device_id: Union[Device, int], config: Union[VirtualMemoryResourceOptions, Dict[str, Any], None] = None,
                *, options: Union[VirtualMemoryResourceOptions, Dict[str, Any], None] = None) -> VirtualMemoryResource:
        if isinstance(device_id, (VirtualMemoryResourceOptions, dict)) or device_id is None:
            raise TypeError("VirtualMemoryResource(device_id, config=None) needs a device (a Device or an ordinal)")
        if config is not None and options is not None:
            raise TypeError("VirtualMemoryResource(): give config or options (the same argument), not both")
        config = config if config is not None else options
        dev = _device(device_id)
        config = VirtualMemoryResourceOptions() if config is None else \
            options_of(config, VirtualMemoryResourceOptions)
        mr = _create(cls, _cucore_virtual_memory_resource_create, dev, _virtual_struct(config), config,
                     dev.device_id)
        for peer in config.peers:
            mr.set_peer_access(peer, config.peer_access)
        return mr

    def modify_allocation(self, buf: Buffer, new_size: int, config: Optional[VirtualMemoryResourceOptions] = None) -> Buffer:
        """Grow `buf` (a Buffer of this resource) to `new_size` bytes keeping its contents, and return it
        (cuda.core's name; Buffer.grow does the same). Its address changes when the reservation cannot
        extend in place; shrinking is not supported (a smaller size changes nothing). The new memory is made
        as the resource's own: a `config` other than the resource's raises ValueError."""
        if config is not None and options_of(config, VirtualMemoryResourceOptions) != self._config:
            raise ValueError("modify_allocation(): libcucore grows a buffer with its resource's own options; "
                             "make a VirtualMemoryResource with the other config instead")
        if not isinstance(buf, Buffer):
            raise TypeError(f"modify_allocation() takes a Buffer, not {type(buf).__name__}")
        if buf.memory_resource is not self:
            raise ValueError("modify_allocation(): the buffer was not allocated from this VirtualMemoryResource")
        return buf.grow(new_size)
