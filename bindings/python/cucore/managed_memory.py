"""Managed (unified) memory: ManagedMemoryResource and its options, ManagedBuffer, and the managed operations
(cucore_managed_memory_resource_create, cucore_buffer_advise ... cucore_buffer_discard).

    mr = cucore.ManagedMemoryResource(dev)        # cuMemAllocManaged: advice works (see ManagedMemoryResource)
    pool = cucore.ManagedMemoryResource(dev, {"use_pool": True})  # cuda.core's kind: a stream-ordered pool
    buf = mr.allocate(1 << 20, stream=s)          # a ManagedBuffer
    buf.read_mostly = True
    buf.preferred_location = "host"               # or a Device, an ordinal, ("host_numa", node), None
    buf.accessed_by.add(dev)                      # a live set of devices
    buf.prefetch(dev, stream=s)                   # migrate the pages to the device, in stream order
    buf.discard(stream=s)                         # contents no longer needed (CUDA 13 drivers)

A location is a Device or a device ordinal, a Host (Host(), Host(node), Host.numa_current()), "host" (or -1),
("host_numa", node) or "host_numa_current".
"""
from __future__ import annotations

import ctypes
import operator
from typing import TYPE_CHECKING, Any, Dict, Iterable, Iterator, Optional, Tuple, Union
from collections.abc import MutableSet
from dataclasses import dataclass

from . import _lib
from .buffer import Buffer
from .common import check_options, raise_error
from .device import Device
from .host import Host
from .memory_resource import MemoryResource, MemoryResourceKind, _create, _options_and_device
from .stream import _stream_of

# A memory location (managed memory advice and prefetch): a Device or its ordinal, a Host, "host", or
# ("host_numa", node).
Location = Union[Device, Host, int, str, Tuple[str, int]]

(_cucore_managed_memory_resource_create, _cucore_buffer_advise, _cucore_buffer_advice,
 _cucore_buffer_is_accessed_by, _cucore_buffer_last_prefetch_location, _cucore_buffer_prefetch,
 _cucore_buffer_discard, _cucore_managed_memory_resource_get_default) = _lib.bind(
    globals(), "cucore_managed_memory_resource_create", "cucore_buffer_advise", "cucore_buffer_advice",
    "cucore_buffer_is_accessed_by", "cucore_buffer_last_prefetch_location", "cucore_buffer_prefetch",
    "cucore_buffer_discard", "cucore_managed_memory_resource_get_default")

LocationC = _lib.STRUCTS["cucore_location_t"]
ManagedOptionsC = _lib.STRUCTS["cucore_managed_memory_resource_options_t"]

# cucore_location_type_t
LOCATION_NONE, LOCATION_DEVICE, LOCATION_HOST, LOCATION_HOST_NUMA, LOCATION_HOST_NUMA_CURRENT = (
    _lib.C[f"CUCORE_LOCATION_{name}"] for name in ("NONE", "DEVICE", "HOST", "HOST_NUMA", "HOST_NUMA_CURRENT"))
# cucore_memory_advice_t
(SET_READ_MOSTLY, UNSET_READ_MOSTLY, SET_PREFERRED_LOCATION, UNSET_PREFERRED_LOCATION, SET_ACCESSED_BY,
 UNSET_ACCESSED_BY) = (_lib.C[f"CUCORE_ADVICE_{name}"] for name in (
    "SET_READ_MOSTLY", "UNSET_READ_MOSTLY", "SET_PREFERRED_LOCATION", "UNSET_PREFERRED_LOCATION", "SET_ACCESSED_BY",
    "UNSET_ACCESSED_BY"))

_LOCATION_HELP = "a Device, a device ordinal, a Host, 'host', ('host_numa', node) or 'host_numa_current'"


def to_location(value, what="location"):
    """`value` as a cucore_location_t: a Device or ordinal, a Host, "host" or -1, ("host_numa", node),
    "host_numa_current"; ValueError/TypeError otherwise (None is not a location here)."""
    if isinstance(value, Device):
        return LocationC(LOCATION_DEVICE, value.device_id)
    if isinstance(value, Host):
        if value.is_numa_current:
            return LocationC(LOCATION_HOST_NUMA_CURRENT, 0)
        if value.numa_id is None:
            return LocationC(LOCATION_HOST, 0)
        return LocationC(LOCATION_HOST_NUMA, value.numa_id)
    if isinstance(value, str):
        if value == "host":
            return LocationC(LOCATION_HOST, 0)
        if value == "host_numa_current":
            return LocationC(LOCATION_HOST_NUMA_CURRENT, 0)
        raise ValueError(f"{what} must be {_LOCATION_HELP}, not {value!r}")
    if isinstance(value, tuple):
        if len(value) == 2 and value[0] in ("host_numa", "device"):
            node = value[1]
            if isinstance(node, bool) or not isinstance(node, int):
                raise TypeError(f"{what}: the id in {value!r} must be an int")
            if not 0 <= node < 2**31:
                raise ValueError(f"{what}: the id in {value!r} must be in [0, 2**31)")
            return LocationC(LOCATION_HOST_NUMA if value[0] == "host_numa" else LOCATION_DEVICE, node)
        raise ValueError(f"{what} must be {_LOCATION_HELP}, not {value!r}")
    if isinstance(value, bool):
        raise TypeError(f"{what} must be {_LOCATION_HELP}, not bool")
    try:
        ordinal = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be {_LOCATION_HELP}, not {type(value).__name__}") from None
    if ordinal == -1:
        return LocationC(LOCATION_HOST, 0)
    if not 0 <= ordinal < 2**31:
        raise ValueError(f"{what}: device ordinal {ordinal} is out of range")
    return LocationC(LOCATION_DEVICE, ordinal)


def from_location(c):
    """The Python form of a cucore_location_t: None, a Device, "host", ("host_numa", node) or
    "host_numa_current"."""
    if c.type == LOCATION_NONE:
        return None
    if c.type == LOCATION_DEVICE:
        return Device(c.id)
    if c.type == LOCATION_HOST:
        return "host"
    if c.type == LOCATION_HOST_NUMA:
        return ("host_numa", c.id)
    if c.type == LOCATION_HOST_NUMA_CURRENT:
        return "host_numa_current"
    return (c.type, c.id)  # a type newer than this binding


class ManagedBuffer(Buffer):
    """A Buffer of managed memory (from a ManagedMemoryResource, or a user-defined resource with
    is_managed): the driver migrates its pages between host and devices, steered by advice and prefetches."""

    __slots__ = ()

    def _advise(self, advice, loc):
        st = _cucore_buffer_advise(self._h, advice, loc)
        if st:
            raise_error(st, self)

    def _advice(self):
        read_mostly, preferred = ctypes.c_int(), LocationC()
        st = _cucore_buffer_advice(self._h, read_mostly, preferred)
        if st:
            raise_error(st, self)
        return bool(read_mostly.value), preferred

    @property
    def read_mostly(self) -> bool:
        """Whether the read-mostly advice is set (the driver may keep read-only copies on each accessor)."""
        return self._advice()[0]

    @read_mostly.setter
    def read_mostly(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"read_mostly must be a bool, not {type(value).__name__}")
        self._advise(SET_READ_MOSTLY if value else UNSET_READ_MOSTLY, LocationC(LOCATION_NONE, 0))

    @property
    def preferred_location(self) -> Optional[Location]:
        """The preferred location advice: a Device, "host", ("host_numa", node), or None when unset.
        Assign a location to set it, None to unset it."""
        return from_location(self._advice()[1])

    @preferred_location.setter
    def preferred_location(self, value: Optional[Location]) -> None:
        if value is None:
            self._advise(UNSET_PREFERRED_LOCATION, LocationC(LOCATION_NONE, 0))
        else:
            self._advise(SET_PREFERRED_LOCATION, to_location(value, "preferred_location"))

    @property
    def accessed_by(self) -> AccessedBySet:
        """The live set of devices with the accessed-by advice (their mappings are kept up to date):
        add, discard, update, clear, `in`, iteration (Devices). Assign an iterable to replace it."""
        return AccessedBySet(self)

    @accessed_by.setter
    def accessed_by(self, locations: Iterable[Location]) -> None:
        wanted = [to_location(x, "accessed_by") for x in locations]
        current = AccessedBySet(self)
        keep = {(c.type, c.id) for c in wanted}
        for dev in list(current):
            if (LOCATION_DEVICE, dev.device_id) not in keep:
                current.discard(dev)
        for c in wanted:
            self._advise(SET_ACCESSED_BY, c)

    @property
    def last_prefetch_location(self) -> Optional[Location]:
        """Where the memory was last prefetched to (a Device, "host", ...), or None if never or not all in
        one place."""
        out = LocationC()
        st = _cucore_buffer_last_prefetch_location(self._h, out)
        if st:
            raise_error(st, self)
        return from_location(out)

    def prefetch(self, location: Location, *, stream: Any) -> None:
        """Migrate the memory to `location` (a Device, an ordinal, "host", ...) in order on `stream`."""
        loc = to_location(location)
        s = _stream_of(stream)
        st = _cucore_buffer_prefetch(self._h, loc, s._h)
        if st:
            raise_error(st, self, s)

    def discard(self, *, stream: Any) -> None:
        """Tell the driver the contents are no longer needed, in order on `stream` (reading before writing
        afterwards gives unspecified values). Needs a CUDA 13 driver."""
        s = _stream_of(stream)
        st = _cucore_buffer_discard(self._h, None, s._h)
        if st:
            raise_error(st, self, s)

    def discard_prefetch(self, location: Location, *, stream: Any) -> None:
        """discard(), then make the pages resident at `location`, in order on `stream` (CUDA 13)."""
        loc = to_location(location)
        s = _stream_of(stream)
        st = _cucore_buffer_discard(self._h, ctypes.byref(loc), s._h)
        if st:
            raise_error(st, self, s)


class AccessedBySet(MutableSet):
    """The processors (Devices, and "host") a managed buffer has the accessed-by advice for, read from
    the driver on every use."""

    __slots__ = ("_buf",)

    def __init__(self, buf: ManagedBuffer) -> None:
        self._buf = buf

    def _query(self, loc):
        out = ctypes.c_int()
        st = _cucore_buffer_is_accessed_by(self._buf._h, loc, out)
        if st:
            raise_error(st, self._buf)
        return bool(out.value)

    def __contains__(self, value: object) -> bool:
        try:
            loc = to_location(value)
        except (TypeError, ValueError):
            return False
        if loc.type == LOCATION_DEVICE and loc.id >= Device.count():
            return False
        return self._query(loc)

    def __iter__(self) -> Iterator[Location]:
        for o in range(Device.count()):
            if self._query(LocationC(LOCATION_DEVICE, o)):
                yield Device(o)
        if self._query(LocationC(LOCATION_HOST, 0)):
            yield "host"

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def add(self, value: Location) -> None:
        """Set the accessed-by advice for a location (a Device, an ordinal, "host", ...)."""
        self._buf._advise(SET_ACCESSED_BY, to_location(value, "accessed_by"))

    def discard(self, value: Location) -> None:
        """Unset the accessed-by advice for a location."""
        self._buf._advise(UNSET_ACCESSED_BY, to_location(value, "accessed_by"))

    def update(self, *iterables: Iterable[Location]) -> None:
        """Set the accessed-by advice for every location of the iterables."""
        for values in iterables:
            for v in values:
                self.add(v)

    def clear(self) -> None:
        """Unset the accessed-by advice for every location that has it."""
        for dev in list(self):
            self.discard(dev)

    def __repr__(self):
        return f"AccessedBySet({[d.device_id for d in self]!r})"


# ---- the resource -------------------------------------------------------------------------------------------

@dataclass
class ManagedMemoryResourceOptions:
    """Options of a managed memory resource (cucore_managed_memory_resource_options_t).

    preferred_location: where the pages should live: None (no preference), a device ordinal (-1: the host,
        as cuda.core reads it without a preferred_location_type), or cucore's forms: a Device, "host",
        ("host_numa", node): the pool's, or advised on each allocation without a pool.
    preferred_location_type: how cuda.core reads preferred_location: None (as above), "device" (an ordinal),
        "host" (preferred_location None) or "host_numa" (a NUMA node, or None: the current device's
        host_numa_id).
    max_size: the most bytes the pool may reserve; 0 for no limit (pools only).
    release_threshold: bytes kept reserved after a synchronization; 0 for the driver's default (pools only).
    use_pool: True (the default, as cuda.core's) for a new managed memory pool; False for memory from
        cuMemAllocManaged (synchronous, no pool; see ManagedMemoryResource for why you may want it).
    """
    preferred_location: object = None
    preferred_location_type: Optional[str] = None
    max_size: int = 0
    release_threshold: int = 0
    use_pool: bool = True

    def __post_init__(self) -> None:
        check_options(self, ("max_size", "release_threshold"), ("use_pool",))
        self.preferred_location = _typed_location(self.preferred_location, self.preferred_location_type)
        self.preferred_location_type = None  # read into preferred_location
        if self.preferred_location is not None:
            to_location(self.preferred_location, "ManagedMemoryResourceOptions.preferred_location")
        if not self.use_pool:
            for name in ("max_size", "release_threshold"):
                if getattr(self, name):
                    raise ValueError(f"ManagedMemoryResourceOptions.{name} applies to managed pools only "
                                     f"(use_pool=True)")


def _typed_location(location, kind):
    """ManagedMemoryResourceOptions.preferred_location in cucore's forms, read as cuda.core reads it with
    preferred_location_type `kind`."""
    if kind is None:
        if isinstance(location, int) and not isinstance(location, bool) and location == -1:
            return "host"  # cuda.core's -1: the host
        return location
    kind = str(kind)
    if kind == "device":
        if isinstance(location, bool) or not isinstance(location, int) or location < 0:
            raise ValueError(f"preferred_location_type 'device' needs a device ordinal, not {location!r}")
        return location
    if kind == "host":
        if location is not None:
            raise ValueError(f"preferred_location_type 'host' takes preferred_location None, not {location!r}")
        return "host"
    if kind == "host_numa":
        if location is None:
            location = Device().properties.host_numa_id
        if isinstance(location, bool) or not isinstance(location, int) or location < 0:
            raise ValueError(f"preferred_location_type 'host_numa' needs a NUMA node (>= 0), not {location!r}")
        return ("host_numa", location)
    raise ValueError(f"preferred_location_type must be None, 'device', 'host' or 'host_numa', not {kind!r}")


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
    """Managed (unified) memory: `ManagedMemoryResource(options=None, *, device=None)`. Its buffers are
    ManagedBuffers, accessible from the host and every device, steered with advice, prefetch and discard.

    As cuda.core's: without options, the driver's current managed memory pool (its default one; not owned:
    closing the resource never destroys it); with options, a new managed pool (cuMemPoolCreate; a CUDA 13
    driver), destroyed once the resource and every buffer from it are gone. Pools allocate in stream order on
    streams of `device` (cucore's addition: a Device or an ordinal; None: the current device).

    cucore's option: ManagedMemoryResourceOptions(use_pool=False) takes memory from cuMemAllocManaged instead
    (synchronous: a stream is accepted and not needed). Drivers may refuse advice on managed-pool memory: on
    an H100 with driver 580, cuMemAdvise on pool memory fails with CUDA_ERROR_NOT_SUPPORTED
    (NotSupportedError here) while it works on cuMemAllocManaged memory; prefetch works on both."""

    __slots__ = ()
    _builtin = True
    _resource_kind = MemoryResourceKind.MANAGED

    def __new__(cls, options: Union[ManagedMemoryResourceOptions, Dict[str, Any], None] = None, *,
                device: Union[Device, int, None] = None) -> ManagedMemoryResource:
        options, dev = _options_and_device(options, device, ManagedMemoryResourceOptions)
        if options is None:
            h = ctypes.c_void_p()
            st = _cucore_managed_memory_resource_get_default(dev._h, h)
            if st:
                raise_error(st, dev)
            return cls._wrap(h.value, None, dev.device_id)
        return _create(cls, _cucore_managed_memory_resource_create, dev, _managed_struct(options), options,
                       dev.device_id)

    def allocate(self, size: int, *, stream: Any = None) -> ManagedBuffer:
        """A new ManagedBuffer of `size` bytes: from a pool, allocated in order on `stream` (where it is also
        freed); without one, at once (`stream` may be None and is not kept)."""
        b = MemoryResource.allocate(self, size, stream=stream)
        b.__class__ = ManagedBuffer  # the same layout: only the managed-memory methods are added
        return b  # type: ignore[return-value]  # a ManagedBuffer now

    @property
    def is_managed(self) -> bool:
        """True: the memory is managed memory."""
        return True

    @property
    def use_pool(self) -> bool:
        """Whether the memory comes from a managed memory pool (False: cuMemAllocManaged)."""
        return self.handle != 0  # the CUmemoryPool; 0 without a pool

    @property
    def preferred_location(self) -> Optional[Tuple[str, Optional[int]]]:
        """The preferred location of the memory, as cuda.core gives it: ("device", ordinal), ("host", None) or
        ("host_numa", node); None when there is none (the driver decides) or it is not known (a resource made
        elsewhere)."""
        loc = self._config.preferred_location if self._config is not None else None
        if loc is None:
            return None
        c = to_location(loc)
        if c.type == LOCATION_DEVICE:
            return ("device", c.id)
        if c.type == LOCATION_HOST:
            return ("host", None)
        return ("host_numa", c.id)
