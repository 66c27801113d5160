"""Sharing memory and events between processes (include/cucore/ipc.h; Linux).

    # The exporting process
    mr = cucore.DeviceMemoryResource(dev, cucore.DeviceMemoryResourceOptions(ipc_enabled=True))
    handle = mr.allocation_handle()          # IPCAllocationHandle: .fd (owned: close it), .kind, .pool_id
    buf = mr.allocate(1 << 20, stream=s)
    desc = buf.ipc_descriptor()              # 128 bytes, for any channel
    ev = dev.create_event(cucore.EventOptions(ipc_enabled=True))
    s.record(ev)                             # after the work the other process must see
    edesc = ev.ipc_descriptor()              # 72 bytes

    # The importing process, having received the fd (SCM_RIGHTS, multiprocessing, ...) and the bytes
    mr2 = cucore.MemoryResource.from_allocation_handle(dev, handle)   # kind IMPORTED: maps, cannot allocate
    ev2 = cucore.Event.from_ipc_descriptor(dev, edesc)
    s2.wait(ev2)
    buf2 = cucore.Buffer.from_ipc_descriptor(mr2, desc, stream=s2)    # the same memory

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
import weakref
from typing import Any, Dict

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
    will use it). Importing the same pool again gives the same resource object."""
    if not isinstance(handle, IPCAllocationHandle):
        raise TypeError(f"handle must be an IPCAllocationHandle, not {type(handle).__name__}")
    dev = _device(device)
    out = ctypes.c_void_p()
    st = _cucore_ipc_import_memory_resource(dev._h, handle._c(), out)
    if st:
        raise_error(st, dev)
    mr = MemoryResource._from_owned_handle(out.value)
    if getattr(mr, "_home", None) is None:
        mr._home = dev.device_id
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
    handle = _pickle_handles.get(mr)
    if handle is None or handle.fd < 0:
        handle = _pickle_handles[mr] = export_memory_resource(mr)
    ordinal = mr.device_id if mr.device_id >= 0 else getattr(mr, "_home", None)
    return _rebuild_resource, (ordinal, handle)


def _rebuild_resource(ordinal, handle):
    try:
        return import_memory_resource(Device(ordinal), handle)
    finally:
        handle.close()


# ---- buffers --------------------------------------------------------------------------------------------------

def export_buffer(buf):
    """The descriptor (bytes) of a whole buffer of an IPC-enabled pool (cuMemPoolExportPointer)."""
    out = (ctypes.c_uint8 * BUFFER_DESCRIPTOR_SIZE)()
    st = _cucore_ipc_export_buffer(buf._h, out)
    if st:
        raise_error(st, buf)
    return bytes(out)


def import_buffer(mr, descriptor, stream):
    """The buffer of `descriptor` mapped into the imported pool `mr`, freed on `stream` (a Stream or any
    object with __cuda_stream__) when released. A second import of a live buffer shares the first
    mapping (and its stream)."""
    if not isinstance(mr, MemoryResource):
        raise TypeError(f"mr must be a MemoryResource, not {type(mr).__name__}")
    s = _stream_of(stream)
    pointer, size, keep = _bytes_arg(descriptor, "descriptor")
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
    """The descriptor (bytes) of an event created with EventOptions(ipc_enabled=True) (cuIpcGetEventHandle)."""
    out = (ctypes.c_uint8 * EVENT_DESCRIPTOR_SIZE)()
    st = _cucore_ipc_export_event(event._h, out)
    if st:
        raise_error(st, event)
    return bytes(out)


def import_event(device, descriptor):
    """The event of `descriptor`, opened in `device`'s primary context (cuIpcOpenEventHandle); it is
    recorded, waited on and synchronized as any event (no timing)."""
    dev = _device(device)
    pointer, size, keep = _bytes_arg(descriptor, "descriptor")
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
    return _rebuild_event, (event.device.device_id, export_event(event))


def _rebuild_event(ordinal, descriptor):
    return import_event(Device(ordinal), descriptor)


__all__ = ["IPCAllocationHandle", "ImportedMemoryResource", "export_memory_resource", "import_memory_resource",
           "pool_id", "is_ipc_enabled", "is_mapped", "export_buffer", "import_buffer", "export_event",
           "import_event"]

# The IPC methods of Event, Buffer and MemoryResource are this module's work; event.py, buffer.py and
# memory_resource.py are below this module.
_lib.hand_down(("event", "buffer", "memory_resource"), ipc=sys.modules[__name__])
