"""The memory of graph allocation nodes (include/cucore/graph_memory.h): cuda.core's GraphMemoryResource.

    gmr = cucore.GraphMemoryResource(dev)
    gb = dev.create_graph_builder().begin_building()
    tmp = gmr.allocate(1 << 20, stream=gb)          # an allocation node of the graph being captured
    cucore.launch(gb, config, kernel, tmp)
    tmp.close(gb)                                   # a free node (on the capturing builder)
    graph = gb.end_building().complete()
    gmr.attributes.used_mem_high                    # the device's graph memory, in bytes
    gmr.attributes.used_mem_high = 0                # resets the high-water mark
    gmr.trim()                                      # gives unused graph memory back to the system

Graph memory comes from a reserve the driver keeps per device for graphs; the resource allocates only on a
stream being captured (a GraphBuilder, or its stream: InvalidStateError otherwise), each allocation becoming an
allocation node and the buffer's release on the capturing stream a free node. Every GraphMemoryResource of a
device reports and trims the same reserve.
"""
from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Union

from . import _lib
from .common import InvalidArgumentError, Status, raise_error
from .device import _device
from .memory_resource import MemoryResource, MemoryResourceKind

if TYPE_CHECKING:
    from .device import Device

(_cucore_graph_memory_resource_create, _cucore_graph_memory_resource_attribute,
 _cucore_graph_memory_resource_reset_attribute) = _lib.bind(
    globals(), "cucore_graph_memory_resource_create", "cucore_graph_memory_resource_attribute",
    "cucore_graph_memory_resource_reset_attribute")

# cucore_graph_memory_attribute_t
USED_CURRENT = _lib.C["CUCORE_GRAPH_MEMORY_USED_CURRENT"]
USED_HIGH = _lib.C["CUCORE_GRAPH_MEMORY_USED_HIGH"]
RESERVED_CURRENT = _lib.C["CUCORE_GRAPH_MEMORY_RESERVED_CURRENT"]
RESERVED_HIGH = _lib.C["CUCORE_GRAPH_MEMORY_RESERVED_HIGH"]


def _attribute(mr: MemoryResource, attribute: int) -> int:
    out = ctypes.c_uint64()
    st = _cucore_graph_memory_resource_attribute(mr._h, attribute, out)
    if st:
        raise_error(st, mr)
    return out.value


def _reset(mr: MemoryResource, attribute: int, value: int, name: str) -> None:
    # The driver resets a high-water mark to the current value; only 0 asks for that (cuda.core's rule).
    if isinstance(value, bool) or not isinstance(value, int) or value != 0:
        raise InvalidArgumentError(Status.ERROR_INVALID_ARGUMENT, f"{name} can only be set to 0 (which resets it "
                                   f"to the current usage), not {value!r}", 0)
    st = _cucore_graph_memory_resource_reset_attribute(mr._h, attribute)
    if st:
        raise_error(st, mr)


class GraphMemoryResourceAttributes:
    """The graph memory of a GraphMemoryResource's device, in bytes (cuda.core's `attributes`): what graphs use
    now and at most, what is reserved for them now and at most; the high-water marks reset when set to 0."""

    __slots__ = ("_mr",)

    def __init__(self, mr: MemoryResource) -> None:
        self._mr = mr

    @property
    def reserved_mem_current(self) -> int:
        """Bytes of backing memory reserved for graphs now."""
        return _attribute(self._mr, RESERVED_CURRENT)

    @property
    def reserved_mem_high(self) -> int:
        """The most bytes reserved since the last reset (set 0 to reset it to the current value)."""
        return _attribute(self._mr, RESERVED_HIGH)

    @reserved_mem_high.setter
    def reserved_mem_high(self, value: int) -> None:
        _reset(self._mr, RESERVED_HIGH, value, "reserved_mem_high")

    @property
    def used_mem_current(self) -> int:
        """Bytes of graph memory in use now."""
        return _attribute(self._mr, USED_CURRENT)

    @property
    def used_mem_high(self) -> int:
        """The most bytes in use since the last reset (set 0 to reset it to the current value)."""
        return _attribute(self._mr, USED_HIGH)

    @used_mem_high.setter
    def used_mem_high(self, value: int) -> None:
        _reset(self._mr, USED_HIGH, value, "used_mem_high")

    def __repr__(self) -> str:
        return (f"GraphMemoryResourceAttributes(reserved_mem_current={self.reserved_mem_current}, "
                f"reserved_mem_high={self.reserved_mem_high}, used_mem_current={self.used_mem_current}, "
                f"used_mem_high={self.used_mem_high})")


class GraphMemoryResource(MemoryResource):
    """Memory for allocations inside graphs on a device (cuda.core's): `allocate(size, stream=builder)` while a
    GraphBuilder captures (InvalidStateError otherwise) makes an allocation node; the buffer's release on the
    capturing stream a free node. `attributes` report the device's graph memory, `trim()` gives what no graph
    uses back to the system. `GraphMemoryResource(device)`: a Device or an ordinal (None: the current device)."""

    __slots__ = ()
    _builtin = True
    _resource_kind = MemoryResourceKind.GRAPH

    def __new__(cls, device_id: Union[Device, int, None] = None) -> GraphMemoryResource:
        dev = _device(device_id)
        h = ctypes.c_void_p()
        st = _cucore_graph_memory_resource_create(dev._h, h)
        if st:
            raise_error(st, dev)
        return cls._wrap(h.value, None, dev.device_id)

    @property
    def attributes(self) -> GraphMemoryResourceAttributes:  # type: ignore[override]
        """The device's graph memory, in bytes (GraphMemoryResourceAttributes)."""
        return GraphMemoryResourceAttributes(self)

    def trim(self, min_bytes_to_keep: int = 0) -> None:
        """Give the device's graph memory that no graph uses (none running or about to) back to the system."""
        super().trim(min_bytes_to_keep)
