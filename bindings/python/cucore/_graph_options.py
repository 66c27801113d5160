"""The values of the graph API (include/cucore/graph.h, graph_builder.h): cuda.core's GraphCompleteOptions,
GraphDebugPrintOptions and GraphCondition, the options of allocation nodes (GraphAllocOptions), the kinds of
nodes (GraphNodeType) and the verdicts of graph updates (GraphUpdateResult), with the C values behind them.
Part of graph.py, which exports the public names (`cucore.graph`); kept apart so that launch.py, below the
graphs, can pack a GraphCondition as a kernel argument.

Below kernel.py and launch.py in the layers (bindings/python/README.md, "Layers"): it uses only common.py,
device.py, stream.py and typing.py.
"""
from __future__ import annotations

import ctypes
import enum
import operator
import os
from dataclasses import dataclass, fields
from typing import Any, Dict, Iterable, Optional, Tuple, Union

from . import _abi_constants, _lib
from .common import _c_enum, check_options, options_of
from .device import Device
from .stream import Stream, _open_stream_handle
from .typing import GraphConditionalType, GraphMemoryType

CompleteOptionsC = _lib.STRUCTS["cucore_graph_complete_options_t"]
AllocOptionsC = _lib.STRUCTS["cucore_graph_alloc_options_t"]

# cucore_graph_complete_flag_t
AUTO_FREE_ON_LAUNCH = _lib.C["CUCORE_GRAPH_COMPLETE_AUTO_FREE_ON_LAUNCH"]
DEVICE_LAUNCH = _lib.C["CUCORE_GRAPH_COMPLETE_DEVICE_LAUNCH"]
USE_NODE_PRIORITY = _lib.C["CUCORE_GRAPH_COMPLETE_USE_NODE_PRIORITY"]

# cucore_graph_condition_flag_t
CONDITION_SET_DEFAULT = _lib.C["CUCORE_GRAPH_CONDITION_SET_DEFAULT"]

# GraphConditionalType -> cucore_graph_conditional_type_t
CONDITIONAL_VALUES: Dict[GraphConditionalType, int] = {
    t: _lib.C["CUCORE_GRAPH_CONDITIONAL_" + t.name] for t in GraphConditionalType}

# GraphMemoryType -> cucore_graph_memory_type_t (MANAGED has none: libcucore's allocation nodes cannot make it)
MEMORY_TYPE_VALUES: Dict[GraphMemoryType, int] = {GraphMemoryType.DEVICE: _lib.C["CUCORE_GRAPH_MEMORY_DEVICE"],
                                                  GraphMemoryType.HOST: _lib.C["CUCORE_GRAPH_MEMORY_HOST"]}

# The capture modes of GraphBuilder.begin_building (cuda.core's strings) -> cucore_capture_mode_t
CAPTURE_MODES: Dict[str, int] = _lib.c_names("cucore_capture_mode_t", "CUCORE_CAPTURE_MODE_", skip=("default",))

# The most peers an allocation node grants access to (cucore_graph_alloc_options_t.peer_access)
MAX_PEERS = len(AllocOptionsC().peer_access)


GraphNodeType = enum.IntEnum(  # type: ignore[misc]
    "GraphNodeType",
    [(member[len("CUCORE_GRAPH_NODE_"):], value - 1)
     for member, value in _abi_constants.ENUMS["cucore_graph_node_type_t"]
     if member not in ("CUCORE_GRAPH_NODE_UNSET", "CUCORE_GRAPH_NODE_TYPE_FORCE_INT32")],
    module="cucore.graph")
GraphNodeType.__doc__ = """The kind of a graph node (GraphNode.type): KERNEL, MEMCPY, MEMSET, HOST_CALLBACK,
CHILD_GRAPH, EMPTY, EVENT_WAIT, EVENT_RECORD, EXTERNAL_SEMAPHORE_SIGNAL, EXTERNAL_SEMAPHORE_WAIT, ALLOC, FREE, BATCH_MEM_OP,
CONDITIONAL. The values are the driver's CUgraphNodeType (cucore_graph_node_type_t - 1), so a node's type
compares equal to cuda.bindings' `driver.CUgraphNodeType` members, as cuda.core's GraphNode.type does."""


def node_type_of(c_value: int) -> Any:
    """The GraphNodeType of a cucore_graph_node_type_t value (an int for a kind newer than this binding)."""
    try:
        return GraphNodeType(c_value - 1)
    except ValueError:
        return c_value - 1


GraphUpdateResult = _c_enum(
    "GraphUpdateResult", "cucore_graph_update_result_t", "CUCORE_GRAPH_UPDATE_", module="cucore.graph",
    doc="""The driver's verdict on Graph.update (cucore_graph_update_result_t, the driver's CUgraphExecUpdateResult):
    SUCCESS, ERROR, TOPOLOGY_CHANGED, NODE_TYPE_CHANGED, FUNCTION_CHANGED, PARAMETERS_CHANGED, NOT_SUPPORTED,
    UNSUPPORTED_FUNCTION_CHANGE, ATTRIBUTES_CHANGED.""")


# ---- options ------------------------------------------------------------------------------------------------

@dataclass
class GraphCompleteOptions:
    """Options of instantiating a graph (GraphBuilder.complete, GraphDefinition.instantiate;
    cucore_graph_complete_options_t).

    auto_free_on_launch: memory the graph allocates and does not free is freed before its next launch.
    upload_stream: a Stream (or anything with __cuda_stream__) to upload the graph on as part of
        instantiation; None for none.
    device_launch: the graph can be launched from the device (not together with auto_free_on_launch).
    use_node_priority: kernel nodes run with their own priority attribute instead of the stream's.
    """
    auto_free_on_launch: bool = False
    upload_stream: Optional[Any] = None
    device_launch: bool = False
    use_node_priority: bool = False

    def __post_init__(self) -> None:
        check_options(self, flags=("auto_free_on_launch", "device_launch", "use_node_priority"))
        s = self.upload_stream
        if s is not None and not isinstance(s, Stream) and not hasattr(s, "__cuda_stream__"):
            raise TypeError(f"GraphCompleteOptions.upload_stream must be a Stream, an object with __cuda_stream__ "
                            f"or None, not {type(s).__name__}")


def complete_options_struct(options: Any) -> Tuple[Any, Any]:
    """(the cucore_graph_complete_options_t of `options` or None for NULL, the upload Stream to keep alive for
    the call or None)."""
    if options is None:
        return None, None
    options = options_of(options, GraphCompleteOptions)
    c = CompleteOptionsC()
    c.struct_size = ctypes.sizeof(c)
    c.flags = ((AUTO_FREE_ON_LAUNCH if options.auto_free_on_launch else 0)
               | (DEVICE_LAUNCH if options.device_launch else 0)
               | (USE_NODE_PRIORITY if options.use_node_priority else 0))
    keep = None
    if options.upload_stream is not None:
        keep, sh = _open_stream_handle(options.upload_stream)
        c.upload_stream = ctypes.cast(sh, ctypes.c_void_p).value
    return c, keep


# GraphDebugPrintOptions' fields -> cucore_graph_dot_flag_t bits (one per field, same names).
DOT_FLAGS: Dict[str, int] = _lib.c_names("cucore_graph_dot_flag_t", "CUCORE_GRAPH_DOT_", skip=("default",))


@dataclass
class GraphDebugPrintOptions:
    """What debug_dot_print writes beside the nodes and edges (cuda.core's; the driver's
    CU_GRAPH_DEBUG_DOT_FLAGS_*). Every field is a bool, False by default: verbose (everything),
    runtime_types (CUDA Runtime structure names), kernel_node_params,
    memcpy_node_params, memset_node_params, host_node_params, event_node_params,
    ext_semas_signal_node_params, ext_semas_wait_node_params, kernel_node_attributes, handles,
    mem_alloc_node_params, mem_free_node_params, batch_mem_op_node_params, extra_topo_info,
    conditional_node_params."""
    verbose: bool = False
    runtime_types: bool = False
    kernel_node_params: bool = False
    memcpy_node_params: bool = False
    memset_node_params: bool = False
    host_node_params: bool = False
    event_node_params: bool = False
    ext_semas_signal_node_params: bool = False
    ext_semas_wait_node_params: bool = False
    kernel_node_attributes: bool = False
    handles: bool = False
    mem_alloc_node_params: bool = False
    mem_free_node_params: bool = False
    batch_mem_op_node_params: bool = False
    extra_topo_info: bool = False
    conditional_node_params: bool = False

    def __post_init__(self) -> None:
        check_options(self, flags=tuple(f.name for f in fields(self)))

    def _to_flags(self) -> int:
        """The cucore_graph_dot_flag_t bits of the options."""
        return sum(bit for name, bit in DOT_FLAGS.items() if getattr(self, name))


def dot_flags(options: Any) -> int:
    """The flags of debug_dot_print's `options` (GraphDebugPrintOptions, a dict of its fields, or None)."""
    return 0 if options is None else options_of(options, GraphDebugPrintOptions)._to_flags()


def dot_path(path: Any) -> bytes:
    """A DOT file's path as the bytes the C call takes (str, bytes or os.PathLike)."""
    try:
        return os.fsencode(path)
    except TypeError:
        raise TypeError(f"path must be a str, bytes or os.PathLike, not {type(path).__name__}") from None


def _ordinal(device: Any, what: str) -> int:
    if isinstance(device, Device):
        return device.device_id
    if isinstance(device, bool):
        raise TypeError(f"{what} must be a Device or a device ordinal, not bool")
    try:
        return operator.index(device)
    except TypeError:
        raise TypeError(f"{what} must be a Device or a device ordinal, not {type(device).__name__}") from None


@dataclass
class GraphAllocOptions:
    """What an allocation node allocates (cucore_graph_alloc_options_t; cuda.core's allocate() keywords).

    memory_type: a GraphMemoryType or its value: "device" (the default) or "host" ("managed" is not offered
        by libcucore's allocation nodes: NotSupportedError when the node is added).
    peer_access: the other devices (Devices or ordinals, up to 8) given read-write access to the memory.
    """
    memory_type: Union[GraphMemoryType, str] = GraphMemoryType.DEVICE
    peer_access: Iterable[Union[Device, int]] = ()

    def __post_init__(self) -> None:
        try:
            self.memory_type = GraphMemoryType(self.memory_type)
        except ValueError:
            raise ValueError(f"GraphAllocOptions.memory_type must be one of "
                             f"{[m.value for m in GraphMemoryType]}, not {self.memory_type!r}") from None
        if self.peer_access is None:
            self.peer_access = ()
        peers = tuple(_ordinal(d, "GraphAllocOptions.peer_access") for d in self.peer_access)
        if len(peers) > MAX_PEERS:
            raise ValueError(f"GraphAllocOptions.peer_access names {len(peers)} devices; at most {MAX_PEERS}")
        self.peer_access = peers


def alloc_options_struct(options: GraphAllocOptions) -> Any:
    """The cucore_graph_alloc_options_t of `options` (memory_type MANAGED is the caller's to refuse)."""
    c = AllocOptionsC()
    c.struct_size = ctypes.sizeof(c)
    c.memory_type = MEMORY_TYPE_VALUES[GraphMemoryType(options.memory_type)]
    peers = tuple(options.peer_access)
    c.peer_access_count = len(peers)
    for i, p in enumerate(peers):
        c.peer_access[i] = p
    return c


# ---- conditions ---------------------------------------------------------------------------------------------

class GraphCondition:
    """A condition of a graph for its conditional nodes (a CUgraphConditionalHandle), made by
    GraphBuilder.create_condition or GraphDefinition.create_condition. Pass it to launch() (or a kernel node's
    arguments) as a kernel argument: kernels take it as a `cudaGraphConditionalHandle` (8 bytes) and set its
    value with cudaGraphSetConditional; if_then / if_else / while_loop / switch read it."""

    __slots__ = ("_value", "__weakref__")
    _value: int

    def __new__(cls, *args: Any, **kwargs: Any) -> GraphCondition:
        raise TypeError("GraphCondition cannot be instantiated directly: use GraphBuilder.create_condition() or "
                        "GraphDefinition.create_condition()")

    @classmethod
    def _from_value(cls, value: int) -> GraphCondition:
        c = object.__new__(cls)
        c._value = value
        return c

    @property
    def handle(self) -> int:
        """The raw CUgraphConditionalHandle as an int (what a kernel argument of this condition holds)."""
        return self._value

    def _kernel_arg(self) -> int:
        """The 8-byte value launch() packs for this condition."""
        return self._value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GraphCondition):
            return NotImplemented
        return self._value == other._value

    def __hash__(self) -> int:
        return hash((GraphCondition, self._value))

    def __repr__(self) -> str:
        return f"<GraphCondition handle=0x{self._value:x}>"

    def __reduce__(self) -> Any:
        raise TypeError("a GraphCondition names a condition of one graph of this process: it cannot be pickled")


def condition_args(default_value: Optional[int]) -> Tuple[int, int]:
    """(default value, cucore_graph_condition_flag_t) of create_condition's `default_value` (None: no default,
    the condition keeps the value of the last launch, initially 0)."""
    if default_value is None:
        return 0, 0
    if isinstance(default_value, bool) or not isinstance(default_value, int):
        try:
            default_value = operator.index(default_value)
        except TypeError:
            raise TypeError(f"default_value must be an int or None, not {type(default_value).__name__}") from None
    if not 0 <= default_value < 2**32:
        raise ValueError(f"default_value must be a 32-bit unsigned int, not {default_value}")
    return default_value, CONDITION_SET_DEFAULT


def check_condition(condition: Any, where: str) -> int:
    """The value of a GraphCondition argument; TypeError (cuda.core's) for anything else."""
    if not isinstance(condition, GraphCondition):
        raise TypeError(f"condition must be a GraphCondition object (from {where}.create_condition()), got "
                        f"{type(condition).__name__}")
    return condition._value
