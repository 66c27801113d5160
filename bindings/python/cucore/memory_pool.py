"""Peer access to the memory of pool and virtual resources (cucore_memory_resource_[set_]peer_access).

    mr = cucore.DeviceMemoryResource(0, cucore.DeviceMemoryResourceOptions())
    mr.peer_accessible_by.add(1)         # device 1 may now read and write the pool's memory
    assert 1 in mr.peer_accessible_by
    mr.peer_accessible_by = []           # revoke every peer (the owning device keeps its access)

`peer_accessible_by` is a live set of device ordinals: every read asks libcucore, every change is a
cuMemPoolSetAccess / cuMemSetAccess. The resource's own device is never in it and cannot be removed.
"""
import ctypes
import operator
from collections.abc import MutableSet

from . import _lib
from .common import raise_error
from .device import Device

(_cucore_memory_resource_set_peer_access, _cucore_memory_resource_peer_access) = _lib.bind(
    globals(), "cucore_memory_resource_set_peer_access", "cucore_memory_resource_peer_access")

# cucore_access_t
ACCESS_NONE = 0
ACCESS_READ = 1
ACCESS_READ_WRITE = 3
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

    def _peer_owner(self):
        """The ordinal of the device whose access is implied (never listed, never revoked), or None."""
        return self._home if self._home is not None else (self.device_id if self.device_id >= 0 else None)

    def peer_access(self, device):
        """The access `device` (a Device or an ordinal) has to the memory: "rw", "r" or None."""
        dev = Device(ordinal_of(device))
        out = ctypes.c_int()
        st = _cucore_memory_resource_peer_access(self._h, dev._h, out)
        if st:
            raise_error(st, self, dev)
        return _NAME_OF.get(out.value, out.value)

    def set_peer_access(self, device, access="rw"):
        """Grant `device` (a Device or an ordinal) access to the memory: "rw" (read and write), "r"
        (read only; virtual memory resources only) or None (revoke). Applies to existing buffers too."""
        value = access_value(access)
        dev = Device(ordinal_of(device))
        st = _cucore_memory_resource_set_peer_access(self._h, dev._h, value)
        if st:
            raise_error(st, self, dev)

    @property
    def peer_accessible_by(self):
        """The live set of the ordinals of the other devices that can access this memory (add, discard,
        update, clear, `in`, iteration; assign an iterable of devices to replace it)."""
        return PeerAccessSet(self)

    @peer_accessible_by.setter
    def peer_accessible_by(self, devices):
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

    def __init__(self, mr):
        self._mr = mr

    def __contains__(self, device):
        try:
            o = ordinal_of(device)
        except TypeError:
            return False
        if o == self._mr._peer_owner() or not 0 <= o < Device.count():
            return False
        return self._mr.peer_access(o) is not None

    def __iter__(self):
        owner = self._mr._peer_owner()
        for o in range(Device.count()):
            if o != owner and self._mr.peer_access(o) is not None:
                yield o

    def __len__(self):
        return sum(1 for _ in self)

    def add(self, device):
        """Grant read-write access to `device` (its own device already has it)."""
        o = ordinal_of(device)
        if o != self._mr._peer_owner():
            self._mr.set_peer_access(o, "rw")

    def discard(self, device):
        """Revoke `device`'s access (its own device keeps it)."""
        o = ordinal_of(device)
        if o != self._mr._peer_owner():
            self._mr.set_peer_access(o, None)

    def update(self, *iterables):
        for devices in iterables:
            for d in devices:
                self.add(d)

    def clear(self):
        for o in list(self):
            self.discard(o)

    def __repr__(self):
        return f"PeerAccessSet({sorted(self)!r})"
