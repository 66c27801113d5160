"""Pinned, managed and virtual memory resources (cucore_{pinned,managed,virtual}_memory_resource_create).

    pinned = cucore.PinnedMemoryResource(dev)              # stream-ordered page-locked host memory
    managed = cucore.ManagedMemoryResource(dev, cucore.ManagedMemoryResourceOptions(preferred_location="host"))
    pool = cucore.ManagedMemoryResource(dev, {"use_pool": True})  # cuda.core's kind: a stream-ordered pool
    vmm = cucore.VirtualMemoryResource(dev, cucore.VirtualMemoryResourceOptions(reserve_size=1 << 30))
    buf = vmm.allocate(1 << 21)                             # synchronous: no stream needed
    vmm.modify_allocation(buf, 1 << 22)                     # grows, keeping the contents

Options are dataclasses checked when made (TypeError / ValueError naming the field); a dict of their fields
is accepted wherever they are.
"""
import ctypes
from dataclasses import dataclass
from typing import Optional

from . import _lib
from .buffer import Buffer
from .common import raise_error
from .managed_memory import ManagedBuffer, from_location, to_location
from .memory_resource import (
    _KIND_CLASSES, MemoryResource, MemoryResourceKind, _device, check_options, options_of,
)
from .memory_pool import PeerAccessible, access_value

(_cucore_pinned_memory_resource_create, _cucore_managed_memory_resource_create,
 _cucore_virtual_memory_resource_create) = _lib.bind(
    globals(), "cucore_pinned_memory_resource_create", "cucore_managed_memory_resource_create",
    "cucore_virtual_memory_resource_create")

PinnedOptionsC = _lib.STRUCTS["cucore_pinned_memory_resource_options_t"]
ManagedOptionsC = _lib.STRUCTS["cucore_managed_memory_resource_options_t"]
VirtualOptionsC = _lib.STRUCTS["cucore_virtual_memory_resource_options_t"]


def _device_and_options(device, options, options_cls):
    """(Device, options) of a constructor taking (device=None, options=None); as in cuda.core, the options
    may come first (PinnedMemoryResource(PinnedMemoryResourceOptions(...)))."""
    if options is None and isinstance(device, (options_cls, dict)):
        device, options = None, device
    options = options_cls() if options is None else options_of(options, options_cls)
    return _device(device), options


def _create(cls, create, dev, struct, options, home):
    h = ctypes.c_void_p()
    st = create(dev._h, struct, h)
    if st:
        raise_error(st, dev)
    return cls._wrap(h.value, options, home)


# ---- pinned -------------------------------------------------------------------------------------------------

@dataclass
class PinnedMemoryResourceOptions:
    """Options of a pinned (page-locked host) memory pool (cucore_pinned_memory_resource_options_t).

    ipc_enabled: True for a pool other processes can import (Linux; needs a NUMA node: numa_id None then
        means node 0).
    max_size: the most bytes the pool may reserve; 0 for no limit.
    release_threshold: bytes kept reserved after a synchronization; 0 for the driver's default.
    numa_id: the host NUMA node the memory comes from; None for any.
    """
    ipc_enabled: bool = False
    max_size: int = 0
    release_threshold: int = 0
    numa_id: Optional[int] = None

    def __post_init__(self):
        check_options(self, ("max_size", "release_threshold"), ("ipc_enabled",))
        if self.numa_id is not None:
            if isinstance(self.numa_id, bool) or not isinstance(self.numa_id, int):
                raise TypeError(f"PinnedMemoryResourceOptions.numa_id must be an int or None, not "
                                f"{type(self.numa_id).__name__}")
            if not 0 <= self.numa_id < 2**31:
                raise ValueError(f"PinnedMemoryResourceOptions.numa_id must be a NUMA node (>= 0) or None, not "
                                 f"{self.numa_id}")


def _pinned_struct(options):
    """The cucore_pinned_memory_resource_options_t of PinnedMemoryResourceOptions (zero fields: defaults)."""
    c = PinnedOptionsC()
    c.struct_size = ctypes.sizeof(c)
    c.ipc_enabled = options.ipc_enabled
    c.max_size = options.max_size
    c.release_threshold = options.release_threshold
    if options.numa_id is not None:  # None: use_numa_id 0, any host memory
        c.use_numa_id = 1
        c.numa_id = options.numa_id
    return c


class PinnedMemoryResource(MemoryResource, PeerAccessible):
    """A stream-ordered pool of page-locked host memory (cuMemPoolCreate on the host or a host NUMA node).

    `PinnedMemoryResource(device=None, options=None)`: allocates in stream order on streams of `device` (a
    Device or an ordinal; None: the current device), which may access the memory; other devices join through
    `peer_accessible_by`. Buffers are host- and device-accessible; `device_id` is -1 (host memory)."""

    __slots__ = ()
    _builtin = True

    def __new__(cls, device=None, options=None):
        dev, options = _device_and_options(device, options, PinnedMemoryResourceOptions)
        return _create(cls, _cucore_pinned_memory_resource_create, dev, _pinned_struct(options), options,
                       dev.device_id)

    @property
    def numa_id(self):
        """The host NUMA node the memory comes from (None: any, or not known for a resource made elsewhere)."""
        return self._config.numa_id if self._config is not None else None


# ---- managed ------------------------------------------------------------------------------------------------

@dataclass
class ManagedMemoryResourceOptions:
    """Options of a managed memory resource (cucore_managed_memory_resource_options_t).

    preferred_location: where the pages should live: None (no preference), a Device or device ordinal,
        "host", or ("host_numa", node): the pool's, or advised on each allocation without a pool.
    max_size: the most bytes the pool may reserve; 0 for no limit (pools only).
    release_threshold: bytes kept reserved after a synchronization; 0 for the driver's default (pools only).
    use_pool: False (the default) for memory from cuMemAllocManaged, True for a managed memory pool as
        cuda.core's ManagedMemoryResource has (see ManagedMemoryResource for why the default differs).
    """
    preferred_location: object = None
    max_size: int = 0
    release_threshold: int = 0
    use_pool: bool = False

    def __post_init__(self):
        check_options(self, ("max_size", "release_threshold"), ("use_pool",))
        if self.preferred_location is not None:
            to_location(self.preferred_location, "ManagedMemoryResourceOptions.preferred_location")
        if not self.use_pool:
            for name in ("max_size", "release_threshold"):
                if getattr(self, name):
                    raise ValueError(f"ManagedMemoryResourceOptions.{name} applies to managed pools only "
                                     f"(use_pool=True)")


def _managed_struct(options):
    """The cucore_managed_memory_resource_options_t of ManagedMemoryResourceOptions (zero fields: defaults)."""
    c = ManagedOptionsC()
    c.struct_size = ctypes.sizeof(c)
    c.use_pool = options.use_pool
    if options.preferred_location is not None:
        c.preferred_location = to_location(options.preferred_location, "preferred_location")
    c.max_size = options.max_size
    c.release_threshold = options.release_threshold
    return c


class ManagedMemoryResource(MemoryResource):
    """Managed (unified) memory of `device`: `ManagedMemoryResource(device=None, options=None)`. Its buffers
    are ManagedBuffers, accessible from the host and every device, steered with advice, prefetch and discard.

    By default the memory comes from cuMemAllocManaged and goes back with cuMemFree: allocation is
    synchronous (a stream is accepted and not needed) and there is no pool. With options use_pool=True it is
    a stream-ordered pool of managed memory (cuMemPoolCreate with managed allocations; a CUDA 13 driver),
    which is what cuda.core's ManagedMemoryResource always is. The default differs from cuda.core because
    drivers may refuse advice on managed-pool memory: on an H100 with driver 580, cuMemAdvise on pool memory
    fails with CUDA_ERROR_NOT_SUPPORTED (NotSupportedError here) while it works on cuMemAllocManaged memory;
    prefetch works on both. Choose use_pool=True for stream-ordered allocation, max_size or
    release_threshold, and expect NotSupportedError from advice there."""

    __slots__ = ()
    _builtin = True

    def __new__(cls, device=None, options=None):
        dev, options = _device_and_options(device, options, ManagedMemoryResourceOptions)
        return _create(cls, _cucore_managed_memory_resource_create, dev, _managed_struct(options), options,
                       dev.device_id)

    def allocate(self, size, *, stream=None):
        """A new ManagedBuffer of `size` bytes: from a pool, allocated in order on `stream` (where it is also
        freed); without one, at once (`stream` may be None and is not kept)."""
        b = MemoryResource.allocate(self, size, stream=stream)
        b.__class__ = ManagedBuffer  # the same layout: only the managed-memory methods are added
        return b

    @property
    def is_managed(self):
        return True

    @property
    def use_pool(self):
        """Whether the memory comes from a managed memory pool (False: cuMemAllocManaged)."""
        return self.handle != 0  # the CUmemoryPool; 0 without a pool

    @property
    def preferred_location(self):
        """The preferred location as given in the options (a Device, "host", ("host_numa", node)), or
        None when there is none or it is not known (a resource made elsewhere)."""
        loc = self._config.preferred_location if self._config is not None else None
        return None if loc is None else from_location(to_location(loc))


# ---- virtual ------------------------------------------------------------------------------------------------

_LOCATION_TYPES = {"device": 1, "host": 2, "host_numa": 3}
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

    def __post_init__(self):
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

    def __new__(cls, device, options=None):
        if isinstance(device, (VirtualMemoryResourceOptions, dict)) or device is None:
            raise TypeError("VirtualMemoryResource(device, options=None) needs a device (a Device or an ordinal)")
        dev = _device(device)
        options = VirtualMemoryResourceOptions() if options is None else \
            options_of(options, VirtualMemoryResourceOptions)
        return _create(cls, _cucore_virtual_memory_resource_create, dev, _virtual_struct(options), options,
                       dev.device_id)

    def modify_allocation(self, buf, new_size):
        """Grow `buf` (a Buffer of this resource) to `new_size` bytes keeping its contents, and return it
        (cuda.core's name; Buffer.grow does the same). Its address changes when the reservation cannot
        extend in place; shrinking is not supported (a smaller size changes nothing)."""
        if not isinstance(buf, Buffer):
            raise TypeError(f"modify_allocation() takes a Buffer, not {type(buf).__name__}")
        if buf.memory_resource is not self:
            raise ValueError("modify_allocation(): the buffer was not allocated from this VirtualMemoryResource")
        return buf.grow(new_size)


_KIND_CLASSES.update({MemoryResourceKind.PINNED: PinnedMemoryResource,
                      MemoryResourceKind.MANAGED: ManagedMemoryResource,
                      MemoryResourceKind.VIRTUAL: VirtualMemoryResource})
