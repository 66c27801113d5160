"""Memory pools (include/cucore/memory_pool.h): device and pinned pools, their options, pool attributes, trim
and peer access.

    pool = cucore.DeviceMemoryResource(dev, cucore.DeviceMemoryResourceOptions(release_threshold=1 << 30))
    pinned = cucore.PinnedMemoryResource(dev)              # stream-ordered page-locked host memory
    buf = pool.allocate(1 << 20, stream=s)
    pool.attributes.used_mem_current                       # the pool's attributes (PoolAttributes)
    pool.trim(0)                                           # return unused reserved memory to the system
    pool.peer_accessible_by.add(1)                         # device 1 may now read and write the pool's memory
    assert 1 in pool.peer_accessible_by
    pool.peer_accessible_by = []                           # revoke every peer (the owning device keeps its access)

DeviceMemoryResource(dev) is the device's current pool, DeviceMemoryResource(dev, options) a new one. Every
resource answers pool_attribute, set_pool_attribute, attributes and trim (NotSupportedError without a pool:
the methods are MemoryResource's, their work is here). `peer_accessible_by` (pools and virtual memory
resources) is a live set of device ordinals: every read asks libcucore, every change is a cuMemPoolSetAccess /
cuMemSetAccess. The resource's own device is never in it and cannot be removed. Options are dataclasses
checked when made (TypeError / ValueError naming the field); a dict of their fields is accepted wherever they
are.
"""
from __future__ import annotations

import ctypes
import operator
import sys
from collections.abc import MutableSet
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Iterable, Iterator, Optional, Union

from . import _lib
from .common import _c_enum, _u64, check_options, options_of, raise_error
from .device import Device, _device
from .host import Host
from .memory_resource import MemoryResource, MemoryResourceKind, _create, _device_and_options, _options_and_device

(_cucore_device_memory_resource_get_default, _cucore_device_memory_resource_create,
 _cucore_pinned_memory_resource_create, _cucore_pinned_memory_resource_get_default,
 _cucore_memory_resource_pool_attribute,
 _cucore_memory_resource_set_pool_attribute, _cucore_memory_resource_trim, _cucore_memory_resource_set_peer_access,
 _cucore_memory_resource_peer_access) = _lib.bind(
    globals(), "cucore_device_memory_resource_get_default", "cucore_device_memory_resource_create",
    "cucore_pinned_memory_resource_create", "cucore_pinned_memory_resource_get_default",
    "cucore_memory_resource_pool_attribute",
    "cucore_memory_resource_set_pool_attribute", "cucore_memory_resource_trim",
    "cucore_memory_resource_set_peer_access", "cucore_memory_resource_peer_access")

PinnedOptionsC = _lib.STRUCTS["cucore_pinned_memory_resource_options_t"]
_c_void_p = ctypes.c_void_p


# ---- peer access --------------------------------------------------------------------------------------------

# cucore_access_t
ACCESS_NONE = _lib.C["CUCORE_ACCESS_NONE"]
ACCESS_READ = _lib.C["CUCORE_ACCESS_READ"]
ACCESS_READ_WRITE = _lib.C["CUCORE_ACCESS_READ_WRITE"]
_ACCESS_OF = {None: ACCESS_NONE, "none": ACCESS_NONE, "r": ACCESS_READ, "rw": ACCESS_READ_WRITE}
_NAME_OF = {ACCESS_NONE: None, ACCESS_READ: "r", ACCESS_READ_WRITE: "rw"}


def access_value(access, what="access"):
    """cucore_access_t of "rw", "r", or None / "none"."""
    try:
        return _ACCESS_OF[access]
    except (KeyError, TypeError):
        raise ValueError(f"{what} must be 'rw', 'r' or None, not {access!r}") from None


def ordinal_of(device, what="device"):
    """A device ordinal from a Device or an int."""
    if isinstance(device, Device):
        return device.device_id
    if isinstance(device, bool):
        raise TypeError(f"{what} must be a Device or a device ordinal, not bool")
    try:
        return operator.index(device)
    except TypeError:
        raise TypeError(f"{what} must be a Device or a device ordinal, not {type(device).__name__}") from None


class PeerAccessible:
    """Mixin of the resources whose memory other devices can be granted access to (device and pinned
    pools, virtual memory resources)."""

    __slots__ = ()
    _h: Any
    _home: Any

    def _peer_owner(self):
        """The ordinal of the device whose access is implied (never listed, never revoked), or None."""
        return self._home if self._home is not None else (self.device_id if self.device_id >= 0 else None)

    def peer_access(self, device: Union[Device, int]) -> Optional[str]:
        """The access `device` (a Device or an ordinal) has to the memory: "rw", "r" or None."""
        dev = Device(ordinal_of(device))
        out = ctypes.c_int()
        st = _cucore_memory_resource_peer_access(self._h, dev._h, out)
        if st:
            raise_error(st, self, dev)
        return _NAME_OF.get(out.value, out.value)  # type: ignore[arg-type]

    def set_peer_access(self, device: Union[Device, int], access: Optional[str] = "rw") -> None:
        """Grant `device` (a Device or an ordinal) access to the memory: "rw" (read and write), "r"
        (read only; virtual memory resources only) or None (revoke). Applies to existing buffers too."""
        value = access_value(access)
        dev = Device(ordinal_of(device))
        st = _cucore_memory_resource_set_peer_access(self._h, dev._h, value)
        if st:
            raise_error(st, self, dev)

    @property
    def peer_accessible_by(self) -> PeerAccessSet:
        """The live set of the ordinals of the other devices that can access this memory (add, discard,
        update, clear, `in`, iteration; assign an iterable of devices to replace it)."""
        return PeerAccessSet(self)

    @peer_accessible_by.setter
    def peer_accessible_by(self, devices: Iterable[Union[Device, int]]) -> None:
        wanted = {ordinal_of(d) for d in devices}
        current = PeerAccessSet(self)
        for o in set(current) - wanted:
            current.discard(o)
        for o in wanted:
            current.add(o)


class PeerAccessSet(MutableSet):
    """The devices (ordinals) other than its own that may access a resource's memory, read from and
    written to libcucore on every use."""

    __slots__ = ("_mr",)

    def __init__(self, mr: PeerAccessible) -> None:
        self._mr = mr

    def __contains__(self, device: object) -> bool:
        try:
            o = ordinal_of(device)
        except TypeError:
            return False
        if o == self._mr._peer_owner() or not 0 <= o < Device.count():
            return False
        return self._mr.peer_access(o) is not None

    def __iter__(self) -> Iterator[int]:
        owner = self._mr._peer_owner()
        for o in range(Device.count()):
            if o != owner and self._mr.peer_access(o) is not None:
                yield o

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def add(self, device: Union[Device, int]) -> None:
        """Grant read-write access to `device` (its own device already has it)."""
        o = ordinal_of(device)
        if o != self._mr._peer_owner():
            self._mr.set_peer_access(o, "rw")

    def discard(self, device: Union[Device, int]) -> None:
        """Revoke `device`'s access (its own device keeps it)."""
        o = ordinal_of(device)
        if o != self._mr._peer_owner():
            self._mr.set_peer_access(o, None)

    def update(self, *iterables: Iterable[Union[Device, int]]) -> None:
        """Grant read-write access to every device of the iterables."""
        for devices in iterables:
            for d in devices:
                self.add(d)

    def clear(self) -> None:
        """Revoke the access of every other device."""
        for o in list(self):
            self.discard(o)

    def __repr__(self):
        return f"PeerAccessSet({sorted(self)!r})"


# ---- device pools -------------------------------------------------------------------------------------------

@dataclass
class DeviceMemoryResourceOptions:
    """Options of a new device memory pool (cucore_device_memory_resource_options_t).

    max_size: the most bytes the pool may reserve; 0 for no limit (the driver's default).
    release_threshold: bytes the pool keeps reserved after a synchronization instead of returning them to
        the system; 0 for the driver's default (return everything).
    ipc_enabled: True for a pool other processes can import (a POSIX file descriptor; Linux only).
    """
    ipc_enabled: bool = False
    max_size: int = 0
    release_threshold: int = 0

    def __post_init__(self) -> None:
        check_options(self, ("max_size", "release_threshold"), ("ipc_enabled",))


def _pool_options_struct(options):
    options = options_of(options, DeviceMemoryResourceOptions)
    c = _lib.DeviceMemoryResourceOptionsC()
    c.struct_size = ctypes.sizeof(c)
    c.max_size = options.max_size
    c.release_threshold = options.release_threshold
    c.ipc_enabled = options.ipc_enabled
    return c


class DeviceMemoryResource(MemoryResource, PeerAccessible):
    """Device memory from a stream-ordered memory pool (cuMemAllocFromPoolAsync / cuMemFreeAsync).

    `DeviceMemoryResource(device_id)` uses the device's current memory pool (not owned: closing the
    resource never destroys that pool); `DeviceMemoryResource(device_id, DeviceMemoryResourceOptions(...))`
    creates a new pool, destroyed once the resource and every buffer from it are gone. `device_id` is an
    ordinal or a Device. `allocate(size, stream=s)` needs a stream of this device (allocation is stream-
    ordered; the stream is also where the buffer is freed unless changed). `peer_accessible_by` is the
    live set of other devices' ordinals allowed to access the pool's memory."""

    __slots__ = ()
    _builtin = True
    _resource_kind = MemoryResourceKind.DEVICE

    def __new__(cls, device_id: Union[Device, int], options: Union[DeviceMemoryResourceOptions, Dict[str, Any], None] = None) -> DeviceMemoryResource:
        dev = _device(device_id)
        if options is None:
            h = _c_void_p()
            st = _cucore_device_memory_resource_get_default(dev._h, h)
            if st:
                raise_error(st, dev)
            return cls._wrap(h.value, None, dev.device_id)
        options = options_of(options, DeviceMemoryResourceOptions)
        return _create(cls, _cucore_device_memory_resource_create, dev, _pool_options_struct(options), options,
                       dev.device_id)


# ---- pinned pools -------------------------------------------------------------------------------------------

@dataclass
class PinnedMemoryResourceOptions:
    """Options of a pinned (page-locked host) memory pool (cucore_pinned_memory_resource_options_t).

    ipc_enabled: True for a pool other processes can import (Linux; needs a NUMA node: numa_id None then
        means node 0).
    max_size: the most bytes the pool may reserve; 0 for no limit.
    release_threshold: bytes kept reserved after a synchronization; 0 for the driver's default.
    numa_id: the host NUMA node the memory comes from; None for any. A Host is taken too: Host(node) is that
        node, Host() any, Host.numa_current() the calling thread's node now (a pool lives on one node).
    """
    ipc_enabled: bool = False
    max_size: int = 0
    numa_id: Union[int, Host, None] = None
    release_threshold: int = 0

    def __post_init__(self) -> None:
        check_options(self, ("max_size", "release_threshold"), ("ipc_enabled",))
        if isinstance(self.numa_id, Host):
            self.numa_id = Host.current_numa_id() if self.numa_id.is_numa_current else self.numa_id.numa_id
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

    `PinnedMemoryResource(options=None, *, device=None)`, as cuda.core's: without options, the driver's
    current pool of pinned host memory (its default one unless another was made current; not owned: closing
    the resource never destroys it); with options, a new pool, destroyed once the resource and every buffer
    from it are gone. It allocates in stream order on streams of `device` (cucore's addition: a Device or an
    ordinal; None: the current device), which may access the memory; other devices join through
    `peer_accessible_by`. Buffers are host- and device-accessible; `device_id` is -1 (host memory)."""

    __slots__ = ()
    _builtin = True
    _resource_kind = MemoryResourceKind.PINNED

    def __new__(cls, options: Union[PinnedMemoryResourceOptions, Dict[str, Any], None] = None, *,
                device: Union[Device, int, None] = None) -> PinnedMemoryResource:
        options, dev = _options_and_device(options, device, PinnedMemoryResourceOptions)
        if options is None:
            h = _c_void_p()
            st = _cucore_pinned_memory_resource_get_default(dev._h, h)
            if st:
                raise_error(st, dev)
            return cls._wrap(h.value, None, dev.device_id)
        return _create(cls, _cucore_pinned_memory_resource_create, dev, _pinned_struct(options), options,
                       dev.device_id)

    @classmethod
    def from_allocation_handle(cls, alloc_handle: Any,  # type: ignore[override]
                               device_id: Union[Device, int, None] = None) -> MemoryResource:
        """The pinned pool another process exported (the IPCAllocationHandle it sent), imported for the streams
        of `device_id` (cucore's addition; None: the current device): a mapped resource, which imports buffers
        and cannot allocate."""
        return MemoryResource.from_allocation_handle.__func__(  # type: ignore[attr-defined]
            cls, Device() if device_id is None else device_id, alloc_handle)

    @property
    def numa_id(self) -> Optional[int]:
        """The host NUMA node the memory comes from (None: any, or not known for a resource made elsewhere)."""
        return self._config.numa_id if self._config is not None else None


# ---- pool attributes and trim (of every resource: NotSupportedError without a pool) ------------------------

PoolAttribute = _c_enum(
    "PoolAttribute", "cucore_pool_attribute_t", "CUCORE_POOL_ATTRIBUTE_", module=__name__,
    skip=("CUCORE_POOL_ATTRIBUTE_UNSET",), doc="""cucore_pool_attribute_t (the driver's CUmemPool_attribute values):

    REUSE_FOLLOW_EVENT_DEPENDENCIES     0/1, settable
    REUSE_ALLOW_OPPORTUNISTIC           0/1, settable
    REUSE_ALLOW_INTERNAL_DEPENDENCIES   0/1, settable
    RELEASE_THRESHOLD                   bytes, settable
    RESERVED_MEM_CURRENT                bytes
    RESERVED_MEM_HIGH                   bytes; reset by setting 0
    USED_MEM_CURRENT                    bytes
    USED_MEM_HIGH                       bytes; reset by setting 0
    """)


def _pool_property(attribute: int, doc: str, *, flag: bool = False, settable: bool = True) -> Any:
    """A property of PoolAttributes reading (and, when settable, writing) one pool attribute: a bool for the
    reuse flags, else a byte count."""
    if flag:
        def get_flag(self: PoolAttributes) -> bool:
            return bool(self._mr.pool_attribute(attribute))

        def set_flag(self: PoolAttributes, value: bool) -> None:
            self._mr.set_pool_attribute(attribute, int(bool(value)))
        return property(get_flag, set_flag, doc=doc)

    def get(self: PoolAttributes) -> int:
        return self._mr.pool_attribute(attribute)

    def set_(self: PoolAttributes, value: int) -> None:
        self._mr.set_pool_attribute(attribute, value)
    return property(get, set_ if settable else None, doc=doc)


class PoolAttributes:
    """A pool resource's attributes as properties (cuda.core's `mr.attributes`): the reuse flags are bools,
    the rest byte counts; `release_threshold` and the reuse flags are settable, and setting a `*_high`
    to 0 resets it."""
    __slots__ = ("_mr",)

    def __init__(self, mr: MemoryResource) -> None:
        self._mr = mr



    # Their types, for type checkers (the properties are made by _pool_property below).
    reuse_follow_event_dependencies: bool
    reuse_allow_opportunistic: bool
    reuse_allow_internal_dependencies: bool
    release_threshold: int
    reserved_mem_current: int
    reserved_mem_high: int
    used_mem_current: int
    used_mem_high: int

    reuse_follow_event_dependencies = _pool_property(
        PoolAttribute.REUSE_FOLLOW_EVENT_DEPENDENCIES, "Whether the pool reuses memory across streams ordered by "
        "events (settable)", flag=True)
    reuse_allow_opportunistic = _pool_property(
        PoolAttribute.REUSE_ALLOW_OPPORTUNISTIC, "Whether the pool reuses memory freed on streams that have "
        "since completed it (settable)", flag=True)
    reuse_allow_internal_dependencies = _pool_property(
        PoolAttribute.REUSE_ALLOW_INTERNAL_DEPENDENCIES, "Whether the pool may insert dependencies to reuse "
        "memory (settable)", flag=True)
    release_threshold = _pool_property(
        PoolAttribute.RELEASE_THRESHOLD, "Bytes of reserved memory the pool keeps before releasing (settable)")
    reserved_mem_current = _pool_property(
        PoolAttribute.RESERVED_MEM_CURRENT, "Bytes of memory the pool reserves now", settable=False)
    reserved_mem_high = _pool_property(
        PoolAttribute.RESERVED_MEM_HIGH, "The high-water mark of reserved bytes (set 0 to reset it)")
    used_mem_current = _pool_property(
        PoolAttribute.USED_MEM_CURRENT, "Bytes of memory allocated from the pool now", settable=False)
    used_mem_high = _pool_property(
        PoolAttribute.USED_MEM_HIGH, "The high-water mark of allocated bytes (set 0 to reset it)")


def pool_attribute(mr, attribute):
    """MemoryResource.pool_attribute: a pool attribute (a PoolAttribute or its value) as an int."""
    out = ctypes.c_uint64()
    st = _cucore_memory_resource_pool_attribute(mr._h, int(attribute), out)
    if st:
        raise_error(st, mr)
    return out.value


def set_pool_attribute(mr, attribute, value):
    """MemoryResource.set_pool_attribute: sets a settable pool attribute (high-water marks: 0 only)."""
    st = _cucore_memory_resource_set_pool_attribute(mr._h, int(attribute), _u64(value, "value"))
    if st:
        raise_error(st, mr)


def trim(mr, min_bytes_to_keep):
    """MemoryResource.trim: return unused reserved memory to the system, keeping `min_bytes_to_keep` bytes."""
    st = _cucore_memory_resource_trim(mr._h, _u64(min_bytes_to_keep, "min_bytes_to_keep"))
    if st:
        raise_error(st, mr)


# MemoryResource's pool_attribute, set_pool_attribute, attributes and trim are this module's work;
# memory_resource.py is below this module.
_lib.hand_down("memory_resource", memory_pool=sys.modules[__name__])
