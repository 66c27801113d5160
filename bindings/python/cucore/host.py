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
import sys
from dataclasses import dataclass, field
from typing import Optional

from . import _lib
from .common import raise_error

(_cucore_host_numa_current,) = _lib.bind(globals(), "cucore_host_numa_current")


@dataclass(frozen=True, repr=False)
class Host:
    """Host memory as a location: any host memory (`Host()`), a NUMA node (`Host(numa_id)`), or the calling
    thread's node (`Host.numa_current()`). Immutable and hashable; equal when they name the same location.

    numa_id: the NUMA node named, or None (any node, or the current one).
    is_numa_current: whether this is Host.numa_current().
    """
    numa_id: Optional[int] = None
    is_numa_current: bool = field(default=False, kw_only=True) if sys.version_info >= (3, 10) else False

    def __post_init__(self) -> None:
        numa_id = self.numa_id
        if numa_id is not None:
            if isinstance(numa_id, bool):
                raise TypeError("Host numa_id must be an int or None, not bool")
            try:
                numa_id = operator.index(numa_id)
            except TypeError:
                raise TypeError(f"Host numa_id must be an int or None, not {type(numa_id).__name__}") from None
            if not 0 <= numa_id < 2**31:
                raise ValueError(f"Host numa_id must be a NUMA node (>= 0), not {numa_id}")
            if self.is_numa_current:
                raise ValueError("Host: a numa_id and is_numa_current exclude each other")
            object.__setattr__(self, "numa_id", numa_id)
        if not isinstance(self.is_numa_current, bool):
            raise TypeError(f"Host is_numa_current must be a bool, not {type(self.is_numa_current).__name__}")

    @classmethod
    def numa_current(cls) -> Host:
        """The NUMA node of the calling thread (CUCORE_LOCATION_HOST_NUMA_CURRENT): the driver resolves it when
        it acts, so a thread that moves between nodes gets the node it is on then."""
        return cls(None, is_numa_current=True)

    @staticmethod
    def current_numa_id() -> int:
        """The NUMA node the calling thread runs on now (cucore_host_numa_current: Linux getcpu, no libnuma;
        0 on a machine without NUMA). The thread may move unless it is pinned to a node's CPUs."""
        out = ctypes.c_int()
        st = _cucore_host_numa_current(ctypes.byref(out))
        if st:
            raise_error(st)
        return out.value

    def __repr__(self) -> str:
        if self.is_numa_current:
            return "Host.numa_current()"
        return "Host()" if self.numa_id is None else f"Host({self.numa_id})"
