"""Sharing memory and events between processes (include/cucore/ipc.h; Linux).

    # The exporting process
    mr = cucore.DeviceMemoryResource(dev, cucore.DeviceMemoryResourceOptions(ipc_enabled=True))
    handle = mr.allocation_handle            # IPCAllocationHandle (.handle: the fd, owned by mr), .uuid
    buf = mr.allocate(1 << 20, stream=s)
    desc = buf.ipc_descriptor                # IPCBufferDescriptor (bytes(desc): 128 bytes; .size), picklable
    ev = dev.create_event(cucore.EventOptions(ipc_enabled=True))
    s.record(ev)                             # after the work the other process must see
    edesc = ev.ipc_descriptor                # IPCEventDescriptor (bytes(edesc): 72 bytes), picklable

    # The importing process, having received the fd (SCM_RIGHTS, multiprocessing, ...) and the descriptors
    mr2 = cucore.DeviceMemoryResource.from_allocation_handle(dev, handle)  # mapped: imports, cannot allocate
    ev2 = cucore.Event.from_ipc_descriptor(edesc)
    s2.wait(ev2)
    buf2 = cucore.Buffer.from_ipc_descriptor(mr2, desc, stream=s2)       # the same memory

With multiprocessing, IPC-enabled resources, their buffers and interprocess events pickle: a resource
travels as its pool's file descriptor (multiprocessing.reduction.DupFd) and is imported on arrival (on the
same device ordinal; pinned pools on the current device), a buffer as its resource and descriptor
(imported on the legacy default stream of the resource's device, which then frees it), an event as its
descriptor. The exporting process must keep a buffer alive until every importer has released it; order
the processes with events.
"""
from __future__ import annotations

import ctypes
import os
import sys
import uuid as _uuid
import weakref
from typing import Any, Dict, Optional, Union

from . import _lib
from .buffer import Buffer
from .common import raise_error
from .device import Device, _device
from .event import Event, EVENT_INTERPROCESS
from .memory_resource import MemoryResource, MemoryResourceKind
from .stream import _stream_of

(_cucore_ipc_export_memory_resource, _cucore_ipc_import_memory_resource, _cucore_ipc_memory_resource_pool_id,
 _cucore_ipc_export_buffer, _cucore_ipc_import_buffer, _cucore_ipc_export_event, _cucore_ipc_import_event,
 _cucore_buffer_size, _cucore_memory_resource_kind) = _lib.bind(
    globals(), "cucore_ipc_export_memory_resource", "cucore_ipc_import_memory_resource",
    "cucore_ipc_memory_resource_pool_id", "cucore_ipc_export_buffer", "cucore_ipc_import_buffer",
    "cucore_ipc_export_event", "cucore_ipc_import_event", "cucore_buffer_size", "cucore_memory_resource_kind")

PoolHandleC = _lib.STRUCTS["cucore_ipc_pool_handle_t"]
POOL_ID_SIZE = _lib.C["CUCORE_IPC_POOL_ID_SIZE"]
BUFFER_DESCRIPTOR_SIZE = _lib.C["CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE"]
EVENT_DESCRIPTOR_SIZE = _lib.C["CUCORE_IPC_EVENT_DESCRIPTOR_SIZE"]

_u8p = ctypes.POINTER(ctypes.c_uint8)


def _bytes_arg(data, what):
    """(ctypes pointer, length) of a bytes-like descriptor; a wrong length is left to libcucore, which says
    how it is wrong."""
    try:
        data = bytes(memoryview(data).cast("B"))
    except TypeError:
        raise TypeError(f"{what} must be bytes-like, not {type(data).__name__}") from None
    return ctypes.cast(ctypes.c_char_p(data), _u8p), len(data), data


# ---- pools ----------------------------------------------------------------------------------------------------

class IPCAllocationHandle:
    """An exported memory pool (cuda.core's IPCAllocationHandle): a POSIX file descriptor this object owns,
    the pool's kind (MemoryResourceKind.DEVICE or PINNED) and its 16-byte identifier. close() (or the
    finalizer, or leaving a `with` block) closes the descriptor; detach() gives it up. int(handle) is the
    descriptor. It pickles for multiprocessing (the descriptor travels with multiprocessing.reduction.DupFd)."""

    __slots__ = ("_fd", "_kind", "_pool_id", "__weakref__")

    def __init__(self, fd: int, kind: int, pool_id: bytes) -> None:
        """Takes ownership of `fd`, received with the pool's `kind` and `pool_id` (16 bytes)."""
        if isinstance(fd, bool) or not isinstance(fd, int):
            raise TypeError(f"fd must be an int, not {type(fd).__name__}")
        pool_id = bytes(pool_id)
        if len(pool_id) != POOL_ID_SIZE:
            raise ValueError(f"pool_id has {len(pool_id)} bytes, not {POOL_ID_SIZE}")
        self._fd = fd
        self._kind = MemoryResourceKind(kind)
        self._pool_id = pool_id

    @property
    def fd(self) -> int:
        """The file descriptor (-1 once closed or detached)."""
        return self._fd

    @property
    def handle(self) -> int:
        """The file descriptor, as cuda.core names it (-1 once closed or detached)."""
        return self._fd

    @property
    def is_closed(self) -> bool:
        """Whether the descriptor was closed or detached."""
        return self._fd < 0

    @property
    def uuid(self) -> _uuid.UUID:
        """The exported pool's identifier as a UUID: the `uuid` of the resource on both sides."""
        return _uuid.UUID(bytes=self._pool_id)

    @property
    def kind(self) -> int:
        """The exported pool's MemoryResourceKind (DEVICE or PINNED)."""
        return self._kind

    @property
    def pool_id(self) -> bytes:
        """The exported pool's 16-byte identifier (bytes): the same pool imported twice is one resource."""
        return self._pool_id

    def __int__(self) -> int:
        return self._fd

    def close(self) -> None:
        """Close the file descriptor (idempotent)."""
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)

    def detach(self) -> int:
        """Give up the file descriptor and return it (the caller closes it)."""
        fd, self._fd = self._fd, -1
        return fd

    def __enter__(self) -> IPCAllocationHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __reduce__(self):
        if self._fd < 0:
            raise ValueError("a closed IPCAllocationHandle cannot be pickled")
        from multiprocessing.reduction import DupFd
        return _rebuild_handle, (DupFd(self._fd), int(self._kind), self._pool_id)

    def __repr__(self):
        return f"<IPCAllocationHandle fd={self._fd} {self._kind.name} pool {self._pool_id.hex()}>"

    def _c(self):
        c = PoolHandleC()
        c.fd = self._fd
        c.kind = int(self._kind)
        c.pool_id[:] = self._pool_id
        return c


def _rebuild_handle(dup, kind, pool_id):
    return IPCAllocationHandle(dup.detach(), kind, pool_id)


def export_memory_resource(mr):
    """A new IPCAllocationHandle of the IPC-enabled pool `mr` (cuMemPoolExportToShareableHandle); the
    caller owns (closes) it. NotSupportedError for a pool created without ipc_enabled."""
    c = PoolHandleC()
    st = _cucore_ipc_export_memory_resource(mr._h, c)
    if st:
        raise_error(st, mr)
    return IPCAllocationHandle(c.fd, c.kind, bytes(c.pool_id))


def import_memory_resource(device, handle):
    """The pool another process exported as `handle` (an IPCAllocationHandle, which stays open: close it
    when done), imported on `device` (a Device or an ordinal; for a pinned pool, the device whose streams
    will use it). Importing the same pool again gives the same resource object. A bare file descriptor (an
    int, which cuda.core also takes) is refused: it lacks the pool identifier every buffer descriptor is
    checked against, so nothing could be imported into it."""
    if isinstance(handle, int) and not isinstance(handle, bool):
        raise TypeError("alloc_handle must be the IPCAllocationHandle the exporting process sent (a bare file "
                        "descriptor lacks the pool identifier its buffers' descriptors are checked against)")
    if not isinstance(handle, IPCAllocationHandle):
        raise TypeError(f"alloc_handle must be an IPCAllocationHandle or a file descriptor (int), "
                        f"not {type(handle).__name__}")
    dev = _device(device)
    out = ctypes.c_void_p()
    st = _cucore_ipc_import_memory_resource(dev._h, handle._c(), out)
    if st:
        raise_error(st, dev)
    mr = MemoryResource._from_owned_handle(out.value)
    if getattr(mr, "_home", None) is None:
        mr._home = dev.device_id
    return mr


def allocation_handle(mr):
    """MemoryResource.allocation_handle: the pool's export, made once and kept (and closed) by `mr`'s wrapper;
    made again if its user closed it."""
    handle = _pickle_handles.get(mr)
    if handle is None or handle.is_closed:
        handle = _pickle_handles[mr] = export_memory_resource(mr)
    return handle


def uuid_of(mr) -> Optional[_uuid.UUID]:
    """The resource's `uuid`: its pool identifier (the same in every process that has the pool), for an
    IPC-enabled or imported pool; None for the others."""
    if mr._h is None:
        return None
    out = (ctypes.c_uint8 * POOL_ID_SIZE)()
    return _uuid.UUID(bytes=bytes(out)) if _cucore_ipc_memory_resource_pool_id(mr._h, out) == 0 else None


_registry: Dict[_uuid.UUID, Any] = {}


def register(mr, key):
    """MemoryResource.register: remember the imported resource `mr` under `key` (a UUID) in this process and
    return the one registered under it (an earlier one wins)."""
    if not isinstance(key, _uuid.UUID):
        raise TypeError(f"uuid must be a uuid.UUID, not {type(key).__name__}")
    existing = _registry.get(key)
    if existing is not None and existing._h is not None:
        return existing
    _registry[key] = mr
    return mr


def from_registry(key):
    """MemoryResource.from_registry: the resource registered under `key`; RuntimeError when there is none."""
    mr = _registry.get(key)
    if mr is None or mr._h is None:
        raise RuntimeError(f"no memory resource is registered under {key}")
    return mr


def pool_id(mr):
    """The 16-byte identifier of an IPC-enabled or imported pool (NotSupportedError for other resources)."""
    out = (ctypes.c_uint8 * POOL_ID_SIZE)()
    st = _cucore_ipc_memory_resource_pool_id(mr._h, out)
    if st:
        raise_error(st, mr)
    return bytes(out)


def is_ipc_enabled(mr):
    """Whether `mr` is a pool other processes can import (created with ipc_enabled)."""
    return not is_mapped(mr) and _has_pool_id(mr)


def is_mapped(mr):
    """Whether `mr` was imported from another process (it maps buffers and cannot allocate)."""
    return mr.kind == MemoryResourceKind.IMPORTED


def _has_pool_id(mr):
    out = (ctypes.c_uint8 * POOL_ID_SIZE)()
    return _cucore_ipc_memory_resource_pool_id(mr._h, out) == 0


class ImportedMemoryResource(MemoryResource):
    """A memory pool imported from another process (MemoryResource.from_allocation_handle): buffers that
    process exports are mapped into it with Buffer.from_ipc_descriptor; it cannot allocate. Its memory is
    device memory of the device it was imported on, or (an exported pinned pool) host memory (device_id
    -1)."""

    __slots__ = ()
    _builtin = True
    _resource_kind = MemoryResourceKind.IMPORTED

    def __new__(cls, *args, **kwargs):
        raise TypeError("ImportedMemoryResource cannot be instantiated directly: use "
                        "MemoryResource.from_allocation_handle(device, handle)")


# The export each resource pickles with, kept open as long as the resource's wrapper (a spawning
# multiprocessing context passes the descriptor when the child starts, so it must stay open until then).
_pickle_handles: Any = weakref.WeakKeyDictionary()


def reduce_resource(mr):
    """MemoryResource.__reduce__: an IPC-enabled pool travels as its exported file descriptor."""
    if mr._h is None or not is_ipc_enabled(mr):
        raise TypeError(f"{type(mr).__name__} cannot be pickled: only memory pools created with "
                        f"ipc_enabled=True can be sent to other processes")
    handle = allocation_handle(mr)
    ordinal = mr.device_id if mr.device_id >= 0 else getattr(mr, "_home", None)
    return _rebuild_resource, (ordinal, handle)


def _rebuild_resource(ordinal, handle):
    try:
        return import_memory_resource(Device(ordinal), handle)
    finally:
        handle.close()


# ---- descriptors ----------------------------------------------------------------------------------------------

class _Descriptor:
    """Bytes another process needs, with what describes them; `bytes(descriptor)` is the payload. Picklable and
    comparable; the payload comes from the exporting peer: treat it as untrusted input."""

    __slots__ = ("_payload",)

    def __init__(self, payload: bytes) -> None:
        self._payload = bytes(payload)

    def __bytes__(self) -> bytes:
        return self._payload

    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and self.__reduce__()[1] == other.__reduce__()[1]

    def __hash__(self) -> int:
        return hash(self.__reduce__()[1])


class IPCBufferDescriptor(_Descriptor):
    """A buffer of an IPC-enabled pool as another process imports it (Buffer.ipc_descriptor, cuda.core's
    IPCBufferDescriptor): 128 bytes (`bytes(d)`) and the buffer's `size`."""

    __slots__ = ("_size",)

    def __init__(self, payload: bytes, size: int) -> None:
        super().__init__(payload)
        self._size = int(size)

    @property
    def size(self) -> int:
        """The exported buffer's size in bytes."""
        return self._size

    def __reduce__(self):
        return IPCBufferDescriptor, (self._payload, self._size)

    def __repr__(self):
        return f"<IPCBufferDescriptor of {self._size} bytes>"


class IPCEventDescriptor(_Descriptor):
    """An interprocess event as another process opens it (Event.ipc_descriptor, cuda.core's IPCEventDescriptor):
    72 bytes (`bytes(d)`) and the ordinal of the exporting event's device, where it is opened."""

    __slots__ = ("_device_id",)

    def __init__(self, payload: bytes, device_id: int) -> None:
        super().__init__(payload)
        self._device_id = int(device_id)

    def __reduce__(self):
        return IPCEventDescriptor, (self._payload, self._device_id)

    def __repr__(self):
        return f"<IPCEventDescriptor of an event of device {self._device_id}>"


# ---- buffers --------------------------------------------------------------------------------------------------

def export_buffer(buf):
    """The IPCBufferDescriptor of a whole buffer of an IPC-enabled pool (cuMemPoolExportPointer)."""
    out = (ctypes.c_uint8 * BUFFER_DESCRIPTOR_SIZE)()
    st = _cucore_ipc_export_buffer(buf._h, out)
    if st:
        raise_error(st, buf)
    return IPCBufferDescriptor(bytes(out), buf.size)


def import_buffer(mr, descriptor, stream):
    """The buffer of `descriptor` (an IPCBufferDescriptor, or its bytes) mapped into the imported pool `mr`,
    freed on `stream` (a Stream or any object with __cuda_stream__) when released. A second import of a live
    buffer shares the first mapping (and its stream)."""
    if not isinstance(mr, MemoryResource):
        raise TypeError(f"mr must be a MemoryResource, not {type(mr).__name__}")
    s = _stream_of(stream)
    if isinstance(descriptor, IPCBufferDescriptor):
        descriptor = bytes(descriptor)
    pointer, size, keep = _bytes_arg(descriptor, "ipc_descriptor")
    out = ctypes.c_void_p()
    st = _cucore_ipc_import_buffer(mr._h, pointer, size, s._h, out)
    del keep
    if st:
        raise_error(st, mr, s)
    n = ctypes.c_uint64()
    st = _cucore_buffer_size(_lib.handle_arg(out.value), n)
    b = Buffer._wrap(out.value, n.value, mr)
    if st:
        raise_error(st, b)
    return b


def reduce_buffer(buf):
    """Buffer.__reduce__: a buffer of an IPC-enabled pool travels as its resource and descriptor."""
    mr = buf.memory_resource if buf._h is not None else None
    if mr is None or not is_ipc_enabled(mr):
        raise TypeError("this Buffer cannot be pickled: only buffers of memory pools created with "
                        "ipc_enabled=True can be sent to other processes")
    return _rebuild_buffer, (mr, export_buffer(buf))


def _rebuild_buffer(mr, descriptor):
    home = mr.device_id if mr.device_id >= 0 else getattr(mr, "_home", None)
    return import_buffer(mr, descriptor, Device(home).default_stream)


# ---- events ---------------------------------------------------------------------------------------------------

def export_event(event):
    """The IPCEventDescriptor of an event created with EventOptions(ipc_enabled=True) (cuIpcGetEventHandle)."""
    out = (ctypes.c_uint8 * EVENT_DESCRIPTOR_SIZE)()
    st = _cucore_ipc_export_event(event._h, out)
    if st:
        raise_error(st, event)
    return IPCEventDescriptor(bytes(out), event.device.device_id)


def import_event(device, descriptor):
    """The event of `descriptor` (an IPCEventDescriptor, opened on its device; or its bytes, opened on `device`:
    None for the current one), opened in that device's primary context (cuIpcOpenEventHandle); it is recorded,
    waited on and synchronized as any event (no timing)."""
    if isinstance(descriptor, IPCEventDescriptor):
        device = descriptor._device_id if device is None else device
        descriptor = bytes(descriptor)
    dev = Device() if device is None else _device(device)
    pointer, size, keep = _bytes_arg(descriptor, "ipc_descriptor")
    out = ctypes.c_void_p()
    st = _cucore_ipc_import_event(dev._h, pointer, size, out)
    del keep
    if st:
        raise_error(st, dev)
    return Event._wrap(out, EVENT_INTERPROCESS)


def reduce_event(event):
    """Event.__reduce__: an interprocess event travels as its descriptor, opened on the same device ordinal."""
    if event._h is None or not event.is_ipc_enabled:
        raise TypeError("this Event cannot be pickled: only events created with EventOptions(ipc_enabled=True) "
                        "can be sent to other processes")
    return _rebuild_event, (export_event(event),)


def _rebuild_event(descriptor):
    return import_event(None, descriptor)


__all__ = ["IPCAllocationHandle", "IPCBufferDescriptor", "IPCEventDescriptor", "ImportedMemoryResource", "export_memory_resource", "import_memory_resource",
           "pool_id", "is_ipc_enabled", "is_mapped", "export_buffer", "import_buffer", "export_event",
           "import_event"]

# The IPC methods of Event, Buffer and MemoryResource are this module's work; event.py, buffer.py and
# memory_resource.py are below this module.
_lib.hand_down(("event", "buffer", "memory_resource"), ipc=sys.modules[__name__])
