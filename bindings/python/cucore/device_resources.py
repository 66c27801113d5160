"""The partitionable resources of a device and green contexts (include/cucore/device_resources.h): cuda.core's
DeviceResources, SMResource, SMResourceOptions, WorkqueueResource, WorkqueueResourceOptions and ContextOptions.

    sm = dev.resources.sm                                   # every SM of the device
    groups, rest = sm.split(SMResourceOptions(count=[8, 8]))  # two disjoint groups of 8 SMs, and the rest
    ctx = dev.create_context(ContextOptions(resources=[groups[0]]))
    ctx.is_green                                            # True
    s = ctx.create_stream()                                 # its work runs on the group's 8 SMs only

An SMResource splits with cuDevSmResourceSplitByCount: groups of one size (`count`, a number or a sequence of
equal numbers), at least the resource's `min_partition_size` and a multiple of its `coscheduled_alignment`
(`backfill=True` lifts both: the driver then ignores the GPU's processing clusters). A group does not split
again; groups and the remainder of one split may make one green context together. Workqueue resources need a
CUDA 13.1 driver: older ones raise NotSupportedError saying so.
"""
from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple, Union

from . import _lib
from ._handle import HandleObject
from .common import NotSupportedError, Status, closed_error, options_of, raise_error
from .context import Context
from .device import Device, _device_from_owned_handle
from .stream import Stream
from .typing import WorkqueueSharingScopeType

(_cucore_sm_resource_of_device, _cucore_sm_resource_of_context, _cucore_sm_resource_of_stream,
 _cucore_sm_resource_info, _cucore_sm_resource_split, _cucore_sm_resource_split_dry_run,
 _cucore_workqueue_resource_of_device, _cucore_workqueue_resource_of_context,
 _cucore_workqueue_resource_of_stream, _cucore_workqueue_resource_info, _cucore_workqueue_resource_configure,
 _cucore_workqueue_resource_device, _cucore_context_create, _cucore_sm_resource_retain, _cucore_sm_resource_release,
 _cucore_workqueue_resource_retain, _cucore_workqueue_resource_release) = _lib.bind(
    globals(), "cucore_sm_resource_of_device", "cucore_sm_resource_of_context", "cucore_sm_resource_of_stream",
    "cucore_sm_resource_info", "cucore_sm_resource_split", "cucore_sm_resource_split_dry_run",
    "cucore_workqueue_resource_of_device", "cucore_workqueue_resource_of_context",
    "cucore_workqueue_resource_of_stream", "cucore_workqueue_resource_info", "cucore_workqueue_resource_configure",
    "cucore_workqueue_resource_device", "cucore_context_create", "cucore_sm_resource_retain",
    "cucore_sm_resource_release", "cucore_workqueue_resource_retain", "cucore_workqueue_resource_release")
(_fast_sm_resource_release, _fast_workqueue_resource_release) = _lib.bind_unchecked(
    globals(), "cucore_sm_resource_release", "cucore_workqueue_resource_release")

_c_void_p = ctypes.c_void_p
_handle_arg = _lib.handle_arg
_SmInfoC = _lib.STRUCTS["cucore_sm_resource_info_t"]
_SplitOptionsC = _lib.STRUCTS["cucore_sm_resource_split_options_t"]
_SplitInfoC = _lib.STRUCTS["cucore_sm_resource_split_info_t"]
_WorkqueueInfoC = _lib.STRUCTS["cucore_workqueue_resource_info_t"]
_WorkqueueOptionsC = _lib.STRUCTS["cucore_workqueue_resource_options_t"]
_ContextOptionsC = _lib.STRUCTS["cucore_context_options_t"]
_IGNORE_SM_COSCHEDULING = _lib.C["CUCORE_SM_SPLIT_IGNORE_SM_COSCHEDULING"]


# The C value of each sharing scope (cucore.typing.WorkqueueSharingScopeType, a str enum as cuda.core's).
_SCOPE_VALUES = {WorkqueueSharingScopeType.DEVICE_CTX: _lib.C["CUCORE_WORKQUEUE_SHARING_SCOPE_DEVICE_CTX"],
                 WorkqueueSharingScopeType.GREEN_CTX_BALANCED: _lib.C["CUCORE_WORKQUEUE_SHARING_SCOPE_GREEN_CTX_BALANCED"]}
_SCOPE_NAMES = {v: k for k, v in _SCOPE_VALUES.items()}


def _scope(value: Union[WorkqueueSharingScopeType, str]) -> int:
    if isinstance(value, str):
        try:
            return _SCOPE_VALUES[WorkqueueSharingScopeType(value.lower())]
        except ValueError:
            pass
    raise ValueError(f"sharing_scope must be a WorkqueueSharingScopeType, 'device_ctx' or 'green_ctx_balanced', "
                     f"not {value!r}")


def _count(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    if not 1 <= value < 2**32:
        raise ValueError(f"{what} must be at least 1 (and fit in 32 bits), not {value}")
    return value


@dataclass
class SMResourceOptions:
    """How SMResource.split divides SMs (cuda.core's SMResourceOptions).

    count: SMs per group: an int for one group, a sequence of equal ints for that many groups, or None for
        as many groups as fit of the smallest size allowed (min_partition_size rounded up to
        coscheduled_alignment). Groups of different sizes need the
        driver's cuDevSmResourceSplit (CUDA 13.1), which libcucore does not use yet (NotSupportedError).
    coscheduled_sm_count, preferred_coscheduled_sm_count: CUDA 13.1 split parameters; must stay None.
    backfill: True lets the driver ignore the GPU's processing clusters (CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_
        COSCHEDULING): any count from 1 SM, without the minimum partition size and alignment.
    """
    count: Union[int, Sequence, None] = None
    coscheduled_sm_count: Union[int, Sequence, None] = None
    preferred_coscheduled_sm_count: Union[int, Sequence, None] = None
    backfill: Union[bool, Sequence] = False

    def _struct(self) -> Any:
        for name in ("coscheduled_sm_count", "preferred_coscheduled_sm_count"):
            if getattr(self, name) is not None:
                raise NotSupportedError(Status.ERROR_NOT_SUPPORTED, f"SMResourceOptions.{name} needs the driver's "
                                        "cuDevSmResourceSplit (CUDA 13.1), which libcucore does not use yet", 0)
        backfill = self.backfill
        if isinstance(backfill, Sequence) and not isinstance(backfill, str):
            values = set(backfill)
            if len(values) > 1:
                raise NotSupportedError(Status.ERROR_NOT_SUPPORTED, "SMResourceOptions.backfill differs between "
                                        "groups, which needs cuDevSmResourceSplit (CUDA 13.1)", 0)
            backfill = values.pop() if values else False
        if not isinstance(backfill, bool):
            raise TypeError(f"SMResourceOptions.backfill must be a bool, not {type(backfill).__name__}")
        count = self.count
        if count is None:
            per_group, groups = 0, 0
        elif isinstance(count, Sequence) and not isinstance(count, str):
            sizes = [_count(c, "SMResourceOptions.count[i]") for c in count]
            if not sizes:
                raise ValueError("SMResourceOptions.count is an empty sequence: give at least one group")
            if len(set(sizes)) > 1:
                raise NotSupportedError(Status.ERROR_NOT_SUPPORTED, f"SMResourceOptions.count {sizes} asks for "
                                        "groups of different sizes, which needs cuDevSmResourceSplit (CUDA 13.1); "
                                        "libcucore splits into groups of one size", 0)
            per_group, groups = sizes[0], len(sizes)
        else:
            per_group, groups = _count(count, "SMResourceOptions.count"), 1
        return _SplitOptionsC(ctypes.sizeof(_SplitOptionsC), per_group, groups,
                              _IGNORE_SM_COSCHEDULING if backfill else 0)


@dataclass(frozen=True)
class SMResourceInfo:
    """What a dry run of SMResource.split says a group or the remainder would be."""
    sm_count: int
    min_partition_size: int
    coscheduled_alignment: int
    flags: int = 0


class SMResource(HandleObject):
    """SMs of a device, context or stream (cuda.core's SMResource): from DeviceResources.sm or split(). A
    plain description: it holds nothing on the device. It has no raw handle in cucore (`handle` raises)."""

    __slots__ = ()
    _release = staticmethod(_fast_sm_resource_release)

    def __new__(cls, *args, **kwargs):
        raise TypeError("SMResource cannot be instantiated directly: use Device.resources.sm or SMResource.split()")

    @classmethod
    def _wrap(cls, h):
        obj = object.__new__(cls)
        obj._h = _handle_arg(h.value if isinstance(h, _c_void_p) else h)
        obj._raw = None
        return obj

    def _info(self) -> Any:
        out = _SmInfoC(ctypes.sizeof(_SmInfoC), 0, 0, 0, 0)
        st = _cucore_sm_resource_info(self._h, out)
        if st:
            raise_error(st, self)
        return out

    @property
    def sm_count(self) -> int:
        """The SMs in the resource."""
        return self._info().sm_count

    @property
    def min_partition_size(self) -> int:
        """The fewest SMs a group split from it may have."""
        return self._info().min_partition_size

    @property
    def coscheduled_alignment(self) -> int:
        """A group's SM count is a multiple of this (SMs guaranteed to be co-scheduled)."""
        return self._info().coscheduled_alignment

    @property
    def flags(self) -> int:
        """The driver's flags of the resource (0 before CUDA 13.1)."""
        return self._info().flags

    def split(self, options: Union[SMResourceOptions, Dict[str, Any], None] = None, *,
              dry_run: bool = False) -> Tuple[List[Any], Any]:
        """Split into disjoint groups and the SMs left over: (groups, remainder). With dry_run, what the
        split would make, as SMResourceInfo values, without making it. InvalidArgumentError names the rule a
        bad split breaks (too many SMs, below the minimum partition, not a multiple of the alignment, a group
        of an earlier split)."""
        options = SMResourceOptions() if options is None else options_of(options, SMResourceOptions)
        c = options._struct()
        if dry_run:
            planned = _SplitInfoC(ctypes.sizeof(_SplitInfoC), 0, 0, 0)
            st = _cucore_sm_resource_split_dry_run(self._h, c, planned)
            if st:
                raise_error(st, self)
            i = self._info()
            group = SMResourceInfo(planned.group_sm_count, i.min_partition_size, i.coscheduled_alignment, i.flags)
            left = SMResourceInfo(planned.remainder_sm_count, i.min_partition_size, i.coscheduled_alignment, i.flags)
            return [group] * planned.group_count, left
        capacity = c.group_count
        if capacity == 0:  # as many as fit: the dry run says how many
            planned = _SplitInfoC(ctypes.sizeof(_SplitInfoC), 0, 0, 0)
            st = _cucore_sm_resource_split_dry_run(self._h, c, planned)
            if st:
                raise_error(st, self)
            capacity = max(planned.group_count, 1)
        groups = (_c_void_p * capacity)()
        made = ctypes.c_uint32()
        rest = _c_void_p()
        st = _cucore_sm_resource_split(self._h, c, groups, capacity, made, rest)
        if st:
            raise_error(st, self)
        return [SMResource._wrap(groups[i]) for i in range(made.value)], SMResource._wrap(rest)

    def __repr__(self) -> str:
        if self._h is None:
            return "<SMResource (closed)>"
        i = self._info()
        return f"<SMResource of {i.sm_count} SMs (min partition {i.min_partition_size}, " \
               f"alignment {i.coscheduled_alignment})>"


@dataclass
class WorkqueueResourceOptions:
    """What WorkqueueResource.configure changes (cuda.core's WorkqueueResourceOptions); None leaves a value.

    sharing_scope: a WorkqueueSharingScopeType, "device_ctx" or "green_ctx_balanced".
    concurrency_limit: the expected most stream-ordered workloads at once, at least 1 (the driver's cap is
        CUDA_DEVICE_MAX_CONNECTIONS; more is allowed, without the promise of non-overlapping submission).
    """
    sharing_scope: Union[WorkqueueSharingScopeType, str, None] = None
    concurrency_limit: Optional[int] = None

    def _struct(self) -> Any:
        scope = 0 if self.sharing_scope is None else _scope(self.sharing_scope)
        limit = 0 if self.concurrency_limit is None else _count(self.concurrency_limit,
                                                                 "WorkqueueResourceOptions.concurrency_limit")
        return _WorkqueueOptionsC(ctypes.sizeof(_WorkqueueOptionsC), scope, limit)


class WorkqueueResource(HandleObject):
    """How a green context's work queues are shared (cuda.core's WorkqueueResource; CUDA 13.1 drivers): from
    DeviceResources.workqueue. It has no raw handle in cucore (`handle` raises)."""

    __slots__ = ()
    _release = staticmethod(_fast_workqueue_resource_release)

    def __new__(cls, *args, **kwargs):
        raise TypeError("WorkqueueResource cannot be instantiated directly: use Device.resources.workqueue")

    @classmethod
    def _wrap(cls, h):
        obj = object.__new__(cls)
        obj._h = _handle_arg(h.value)
        obj._raw = None
        return obj

    def _info(self) -> Any:
        out = _WorkqueueInfoC(ctypes.sizeof(_WorkqueueInfoC), 0, 0)
        st = _cucore_workqueue_resource_info(self._h, out)
        if st:
            raise_error(st, self)
        return out

    @property
    def sharing_scope(self) -> WorkqueueSharingScopeType:
        """The sharing scope now."""
        return _SCOPE_NAMES[self._info().sharing_scope]

    @property
    def concurrency_limit(self) -> int:
        """The expected most stream-ordered workloads at once."""
        return self._info().concurrency_limit

    @property
    def device(self) -> Device:
        """The Device the resource is of."""
        out = _c_void_p()
        st = _cucore_workqueue_resource_device(self._h, out)
        if st:
            raise_error(st, self)
        return _device_from_owned_handle(out)

    def configure(self, options: Union[WorkqueueResourceOptions, Dict[str, Any]]) -> None:
        """Change the sharing scope and concurrency limit in place (for green contexts made afterwards)."""
        options = options_of(options, WorkqueueResourceOptions)
        st = _cucore_workqueue_resource_configure(self._h, options._struct())
        if st:
            raise_error(st, self)


class DeviceResources:
    """The resources of a Device, Context or Stream (cuda.core's DeviceResources): `sm` and `workqueue` are
    asked for each time they are read (a green context's are its own)."""

    __slots__ = ("_owner", "_sm", "_workqueue")

    def __init__(self, owner: Any) -> None:
        if isinstance(owner, Device):
            self._sm, self._workqueue = _cucore_sm_resource_of_device, _cucore_workqueue_resource_of_device
        elif isinstance(owner, Context):
            self._sm, self._workqueue = _cucore_sm_resource_of_context, _cucore_workqueue_resource_of_context
        elif isinstance(owner, Stream):
            self._sm, self._workqueue = _cucore_sm_resource_of_stream, _cucore_workqueue_resource_of_stream
        else:
            raise TypeError(f"DeviceResources of a Device, Context or Stream, not {type(owner).__name__}")
        self._owner = owner

    @property
    def sm(self) -> SMResource:
        """The SMs (an SMResource)."""
        out = _c_void_p()
        st = self._sm(self._owner._h, out)
        if st:
            raise_error(st, self._owner)
        return SMResource._wrap(out)

    @property
    def workqueue(self) -> WorkqueueResource:
        """The workqueue configuration (a WorkqueueResource; NotSupportedError before CUDA 13.1)."""
        out = _c_void_p()
        st = self._workqueue(self._owner._h, out)
        if st:
            raise_error(st, self._owner)
        return WorkqueueResource._wrap(out)

    def __repr__(self) -> str:
        return f"<DeviceResources of {self._owner!r}>"


@dataclass
class ContextOptions:
    """What a green context is made of (cuda.core's ContextOptions): `resources`, SMResources (groups and the
    remainder of one split, or one resource as it came) and at most one WorkqueueResource, of one device."""
    resources: Sequence = field(default_factory=list)


def _create_context(device: Device, options: Union[ContextOptions, Dict[str, Any], None]) -> Context:
    """Device.create_context: a green context of `device` made of `options.resources`."""
    options = options_of(options, ContextOptions)
    resources = options.resources
    if not resources:
        raise ValueError("Device.create_context() needs ContextOptions(resources=...): SM resources (from "
                         "dev.resources.sm.split(...)) and at most one workqueue resource")
    if isinstance(resources, (SMResource, WorkqueueResource)):
        resources = [resources]
    sm: List[Any] = []
    workqueues: List[Any] = []
    for i, r in enumerate(resources):
        if not isinstance(r, (SMResource, WorkqueueResource)):
            raise TypeError(f"ContextOptions.resources[{i}] must be an SMResource or a WorkqueueResource, "
                            f"not {type(r).__name__}")
        if r._h is None:
            raise closed_error(r)
        (sm if isinstance(r, SMResource) else workqueues).append(ctypes.cast(r._h, _c_void_p).value)
    sm_array = (_c_void_p * max(len(sm), 1))(*sm)
    wq_array = (_c_void_p * max(len(workqueues), 1))(*workqueues)
    c = _ContextOptionsC()
    c.struct_size = ctypes.sizeof(_ContextOptionsC)
    c.sm_resource_count = len(sm)
    c.sm_resources = ctypes.cast(sm_array, type(c.sm_resources)) if sm else None
    c.workqueue_resource_count = len(workqueues)
    c.workqueue_resources = ctypes.cast(wq_array, type(c.workqueue_resources)) if workqueues else None
    out = _c_void_p()
    st = _cucore_context_create(device._h, c, out)
    if st:
        raise_error(st, device)
    return Context._wrap(out)


# Device.resources, Device.create_context, Context.resources and Stream.resources; device.py, context.py and
# stream.py are below this module.
_lib.hand_down("device", DeviceResources=DeviceResources, _create_context=_create_context)
_lib.hand_down(("context", "stream"), DeviceResources=DeviceResources)
