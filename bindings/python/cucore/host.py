"""Host memory as a location, as cuda.core's Host (include/cucore/memory_operations.h for the NUMA query).

    cucore.Host()                  # any host memory (CUCORE_LOCATION_HOST)
    cucore.Host(1)                 # host NUMA node 1 (CUCORE_LOCATION_HOST_NUMA)
    cucore.Host.numa_current()     # the calling thread's NUMA node, whichever it is when the driver asks
    cucore.Host.current_numa_id()  # which node that is now (getcpu; 0 on a machine without NUMA)

A Host is accepted wherever a location is taken: managed-memory advice and prefetch (ManagedBuffer), the batched
prefetches of cucore.utils, copy location hints (utils.CopyOptions), and a pinned pool's numa_id
(PinnedMemoryResourceOptions). The older forms ("host", ("host_numa", node), "host_numa_current") still work.
"""
from __future__ import annotations

import ctypes
import operator
from typing import Optional

from . import _lib
from .common import raise_error

(_cucore_host_numa_current,) = _lib.bind(globals(), "cucore_host_numa_current")


class Host:
    """Host memory as a location: any host memory (`Host()`), a NUMA node (`Host(numa_id)`), or the calling
    thread's node (`Host.numa_current()`). Immutable and hashable; equal when they name the same location."""

    __slots__ = ("_numa_id", "_is_numa_current")

    def __init__(self, numa_id: Optional[int] = None) -> None:
        if numa_id is not None:
            if isinstance(numa_id, bool):
                raise TypeError("Host numa_id must be an int or None, not bool")
            try:
                numa_id = operator.index(numa_id)
            except TypeError:
                raise TypeError(f"Host numa_id must be an int or None, not {type(numa_id).__name__}") from None
            if not 0 <= numa_id < 2**31:
                raise ValueError(f"Host numa_id must be a NUMA node (>= 0), not {numa_id}")
        object.__setattr__(self, "_numa_id", numa_id)
        object.__setattr__(self, "_is_numa_current", False)

    @classmethod
    def numa_current(cls) -> Host:
        """The NUMA node of the calling thread (CUCORE_LOCATION_HOST_NUMA_CURRENT): the driver resolves it when
        it acts, so a thread that moves between nodes gets the node it is on then."""
        h = cls()
        object.__setattr__(h, "_is_numa_current", True)
        return h

    @staticmethod
    def current_numa_id() -> int:
        """The NUMA node the calling thread runs on now (cucore_host_numa_current: Linux getcpu, no libnuma;
        0 on a machine without NUMA). The thread may move unless it is pinned to a node's CPUs."""
        out = ctypes.c_int()
        st = _cucore_host_numa_current(ctypes.byref(out))
        if st:
            raise_error(st)
        return out.value

    @property
    def numa_id(self) -> Optional[int]:
        """The NUMA node named at construction, or None (any node, or the current one)."""
        return self._numa_id

    @property
    def is_numa_current(self) -> bool:
        """Whether this is Host.numa_current()."""
        return self._is_numa_current

    def __setattr__(self, name, value):
        raise AttributeError("Host is immutable")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Host):
            return NotImplemented
        return (self._numa_id, self._is_numa_current) == (other._numa_id, other._is_numa_current)

    def __hash__(self) -> int:
        return hash((Host, self._numa_id, self._is_numa_current))

    def __repr__(self) -> str:
        if self._is_numa_current:
            return "Host.numa_current()"
        return "Host()" if self._numa_id is None else f"Host({self._numa_id})"
