"""CUDA graphs (include/cucore/graph.h), and the public module `cucore.graph` with cuda.core's names.

    from cucore.graph import GraphDefinition
    g = GraphDefinition(dev)                          # an explicit graph: nodes and their dependencies
    fill = g.memset(buf, 0, n)                        # an entry node (no dependencies)
    k = fill.launch(config, kernel, buf, n)           # a node depending on `fill`
    done = k.callback(lambda: print("ran"))           # a host callback node, run on every launch
    graph = g.instantiate()                           # the executable Graph
    graph.launch(stream)
    k.set_kernel(None, None, buf, n2)                 # change the definition's node ...
    graph.update(g)                                   # ... and the graph from it (GraphUpdateError if refused)
    graph.set_kernel_node(k, None, None, buf, n3)     # or the graph's node alone

Three nouns, as in cuda.core: a GraphDefinition (a CUgraph: nodes and edges, made here or captured by a
GraphBuilder, graph_builder.py), its GraphNodes (typed: KernelNode, MemcpyNode, ...), and a Graph (a CUgraphExec:
launched, uploaded, updated). Each adder of GraphDefinition makes an entry node; the same adder of a node makes
a node depending on it; `pred` and `succ` are live set views of a node's edges. The same CUgraphNode gives the
same Python object while that object lives (a registry per definition), so nodes compare by identity, and a
definition's nodes keep their definition's Python object alive.

Lifetimes: libcucore keeps every object a node uses (buffers and the memory of raw pointers given with an owner,
kernels, events, child graphs) until the definition, its clones, the graphs made from it and their launches are
done; the Python objects need no extra reference. Host callbacks are Python callables kept until libcucore
releases them (graph_builder.py). A node's parameters that libcucore cannot read back (memset values, copy
addresses, callbacks, conditions) are remembered by the definition's Python object for the nodes added through it.

The layer above graph_builder.py (bindings/python/README.md, "Layers"): Graph and GraphDefinition are handed
down to it. The node classes live in _graph_node.py, the layer above this one, which hands them down here; this
module exports them.
"""
from __future__ import annotations

import ctypes
import sys
import weakref
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Set, Tuple, Union

from . import _lib
from ._graph_options import (CONDITIONAL_VALUES, GraphAllocOptions, GraphCompleteOptions, GraphCondition,
                             GraphDebugPrintOptions, GraphNodeType, GraphUpdateResult, alloc_options_struct,
                             check_condition, complete_options_struct, condition_args, dot_flags, dot_path)
from ._handle import HandleObject
from .buffer import Buffer
from .common import (InvalidStateError, NotSupportedError, Status, _u64 as _common_u64, closed_error,
                     error_from_status, raise_error)
from .copy_3d import Copy3dC, _check_layout, _extent, _region
from .device import Device, _device, _device_from_owned_handle
from .event import Event
from .graph_builder import GraphBuilder, _is_ctypes_function, host_callback_args
from .kernel import Kernel
from .launch import LaunchConfig, _new_packer
from .stream import Stream, _stream_of
from .typing import GraphConditionalType, GraphMemoryType

if TYPE_CHECKING:  # for type checkers only: at run time _graph_node.py hands these down (else:)
    from ._graph_node import (_NODE_CLASSES, AdjacencySetProxy, AllocNode, ChildGraphNode, ConditionalNode, EmptyNode,
                              EventRecordNode, EventWaitNode, FreeNode, GraphNode, HostCallbackNode, IfElseNode,
                              IfNode, KernelNode, MemcpyNode, MemsetNode, SwitchNode, WhileNode)
else:  # _graph_node.py: the node classes, made by the adders and listings here
    GraphNode = AdjacencySetProxy = EmptyNode = KernelNode = AllocNode = FreeNode = MemsetNode = MemcpyNode = None
    ChildGraphNode = EventRecordNode = EventWaitNode = HostCallbackNode = ConditionalNode = IfNode = None
    IfElseNode = WhileNode = SwitchNode = _NODE_CLASSES = None
if TYPE_CHECKING:  # likewise _executable_graph_node.py: the views of a graph's nodes (Graph.__getitem__)
    from ._executable_graph_node import (ExecutableChildGraphNode, ExecutableEventRecordNode, ExecutableEventWaitNode,
                                         ExecutableGraphNode, ExecutableHostCallbackNode, ExecutableKernelNode,
                                         ExecutableMemcpyNode, ExecutableMemsetNode, _executable_view)
else:
    ExecutableGraphNode = ExecutableKernelNode = ExecutableMemcpyNode = ExecutableMemsetNode = None
    ExecutableHostCallbackNode = ExecutableChildGraphNode = ExecutableEventRecordNode = None
    ExecutableEventWaitNode = _executable_view = None

__all__ = [
    "Graph", "GraphBuilder", "GraphDefinition", "GraphNode", "GraphCondition", "GraphCompleteOptions",
    "GraphDebugPrintOptions", "GraphAllocOptions", "GraphNodeType", "GraphUpdateResult", "GraphUpdateError",
    "AdjacencySetProxy", "EmptyNode", "KernelNode", "AllocNode", "FreeNode", "MemsetNode", "MemcpyNode",
    "ChildGraphNode", "EventRecordNode", "EventWaitNode", "HostCallbackNode", "ConditionalNode", "IfNode",
    "IfElseNode", "WhileNode", "SwitchNode", "GraphConditionalType", "GraphMemoryType", "ExecutableGraphNode",
    "ExecutableKernelNode", "ExecutableMemcpyNode", "ExecutableMemsetNode", "ExecutableHostCallbackNode",
    "ExecutableChildGraphNode", "ExecutableEventRecordNode", "ExecutableEventWaitNode",
]

(_cucore_graph_definition_create, _cucore_graph_definition_handle, _cucore_graph_definition_device,
 _cucore_graph_definition_is_owned, _cucore_graph_definition_clone, _cucore_graph_definition_debug_dot_print,
 _cucore_graph_definition_nodes, _cucore_graph_definition_edges, _cucore_graph_definition_instantiate,
 _cucore_graph_definition_create_condition, _cucore_graph_definition_add_empty, _cucore_graph_definition_add_kernel,
 _cucore_graph_definition_add_memcpy, _cucore_graph_definition_add_memcpy_3d, _cucore_graph_definition_add_memset,
 _cucore_graph_definition_add_host_callback, _cucore_graph_definition_add_event_record,
 _cucore_graph_definition_add_event_wait, _cucore_graph_definition_add_child_graph,
 _cucore_graph_definition_add_alloc, _cucore_graph_definition_add_free, _cucore_graph_definition_add_conditional,
 _cucore_graph_node_destroy, _cucore_graph_node_handle, _cucore_graph_node_type, _cucore_graph_node_definition,
 _cucore_graph_node_dependencies, _cucore_graph_node_dependents, _cucore_graph_node_add_dependent,
 _cucore_graph_node_remove_dependent, _cucore_graph_node_find_in_clone, _cucore_graph_node_kernel_config,
 _cucore_graph_node_set_kernel, _cucore_graph_node_set_memcpy, _cucore_graph_node_set_memset,
 _cucore_graph_node_set_host_callback, _cucore_graph_node_alloc_info, _cucore_graph_node_bodies, _cucore_graph_handle,
 _cucore_graph_upload, _cucore_graph_update, _cucore_graph_set_kernel_node, _cucore_graph_set_memcpy_node,
 _cucore_graph_set_memset_node, _cucore_graph_set_host_callback_node, _cucore_graph_set_node_enabled,
 _cucore_graph_node_enabled, _cucore_graph_definition_retain, _cucore_graph_definition_release,
 _cucore_graph_node_retain, _cucore_graph_node_release, _cucore_graph_retain, _cucore_graph_release,
 _cucore_graph_launch) = _lib.bind(
    globals(), "cucore_graph_definition_create", "cucore_graph_definition_handle", "cucore_graph_definition_device",
    "cucore_graph_definition_is_owned", "cucore_graph_definition_clone", "cucore_graph_definition_debug_dot_print",
    "cucore_graph_definition_nodes", "cucore_graph_definition_edges", "cucore_graph_definition_instantiate",
    "cucore_graph_definition_create_condition", "cucore_graph_definition_add_empty",
    "cucore_graph_definition_add_kernel", "cucore_graph_definition_add_memcpy",
    "cucore_graph_definition_add_memcpy_3d", "cucore_graph_definition_add_memset",
    "cucore_graph_definition_add_host_callback", "cucore_graph_definition_add_event_record",
    "cucore_graph_definition_add_event_wait", "cucore_graph_definition_add_child_graph",
    "cucore_graph_definition_add_alloc", "cucore_graph_definition_add_free",
    "cucore_graph_definition_add_conditional", "cucore_graph_node_destroy", "cucore_graph_node_handle",
    "cucore_graph_node_type", "cucore_graph_node_definition", "cucore_graph_node_dependencies",
    "cucore_graph_node_dependents", "cucore_graph_node_add_dependent", "cucore_graph_node_remove_dependent",
    "cucore_graph_node_find_in_clone", "cucore_graph_node_kernel_config", "cucore_graph_node_set_kernel",
    "cucore_graph_node_set_memcpy", "cucore_graph_node_set_memset", "cucore_graph_node_set_host_callback",
    "cucore_graph_node_alloc_info", "cucore_graph_node_bodies", "cucore_graph_handle", "cucore_graph_upload",
    "cucore_graph_update", "cucore_graph_set_kernel_node", "cucore_graph_set_memcpy_node",
    "cucore_graph_set_memset_node", "cucore_graph_set_host_callback_node", "cucore_graph_set_node_enabled",
    "cucore_graph_node_enabled", "cucore_graph_definition_retain", "cucore_graph_definition_release",
    "cucore_graph_node_retain", "cucore_graph_node_release", "cucore_graph_retain", "cucore_graph_release",
    "cucore_graph_launch")
(_fast_graph_definition_release, _fast_graph_node_release, _fast_graph_release,
 _fast_graph_launch) = _lib.bind_unchecked(
    globals(), "cucore_graph_definition_release", "cucore_graph_node_release", "cucore_graph_release",
    "cucore_graph_launch")

LaunchConfigC = _lib.STRUCTS["cucore_launch_config_t"]
COOPERATIVE = _lib.C["CUCORE_LAUNCH_COOPERATIVE"]
PRIORITY = _lib.C["CUCORE_LAUNCH_PRIORITY"]
PROGRAMMATIC_STREAM_SERIALIZATION = _lib.C["CUCORE_LAUNCH_PROGRAMMATIC_STREAM_SERIALIZATION"]
_c_void_p = ctypes.c_void_p
_c_int = ctypes.c_int
_c_size_t = ctypes.c_size_t
_new = object.__new__
_handle_arg = _lib.handle_arg
_Stream = Stream


def _hv(h: Any) -> int:
    """The address a handle argument object (`_h`) holds."""
    return ctypes.cast(h, _c_void_p).value or 0


# ---- errors -------------------------------------------------------------------------------------------------

class GraphUpdateError(InvalidStateError):
    """Graph.update refused the new definition (CUCORE_ERROR_INVALID_STATE): `result` is the driver's verdict
    (a GraphUpdateResult: TOPOLOGY_CHANGED, NODE_TYPE_CHANGED, FUNCTION_CHANGED, ...); the message names it and
    the kind of the node that failed. The graph is unchanged and can still be launched."""

    result: Any

    def __init__(self, status: Optional[int], message: str = "", cuda_result: int = 0,
                 result: Any = GraphUpdateResult.ERROR) -> None:
        super().__init__(status, message, cuda_result)
        try:
            result = GraphUpdateResult(result)
        except ValueError:
            pass
        self.result = result

    def __reduce__(self) -> Any:
        return (type(self), (self.status, self.message, self.cuda_result, self.result))


# ---- arguments ----------------------------------------------------------------------------------------------

class _OutOfRangeError(OverflowError, ValueError):
    """A size or fill value out of its C type's range: cuda.core raises OverflowError there (Cython's
    conversion to size_t or unsigned char), cucore raised ValueError; this is both."""


def _u64(value: Any, what: str) -> int:
    """`value` as a size (common._u64) whose range error is an _OutOfRangeError."""
    try:
        return _common_u64(value, what)
    except ValueError as e:
        raise _OutOfRangeError(str(e)) from None


def _packed(kernel: Kernel, args: Tuple[Any, ...]) -> Any:
    """A packer holding `args` as `kernel`'s parameters (launch()'s packing; libcucore copies the bytes when the
    node is made), or None without arguments."""
    if not args:
        return None
    # A packer made for these very values (launch()'s cached packers serve repeated launches; a node is made
    # once), so every value fits its slot: pack_checked converts and range-checks them.
    p = _new_packer(kernel, tuple(map(type, args)), args, cache=False)
    p.pack_checked(args)
    return p


def _kernel_args(p: Any) -> Tuple[Any, Any, int]:
    """(argument pointers, sizes, count) of a packer from _packed (None: no arguments)."""
    if p is None:
        return None, None, 0
    return p.ptrs, p.sizes, p.n


def _check_config(config: Any) -> Any:
    if config is not None and not isinstance(config, LaunchConfig):
        raise TypeError(f"config must be a LaunchConfig, not {type(config).__name__}")
    return None if config is None else config._ref


def _check_kernel(kernel: Any) -> Kernel:
    if not isinstance(kernel, Kernel):
        raise TypeError(f"kernel must be a Kernel, not {type(kernel).__name__}")
    if kernel._h is None:
        raise closed_error(kernel)
    return kernel


def _operand(operand: Any, owner: Any, side: str, size: int, definition: GraphDefinition) -> Buffer:
    """A copy's or fill's side as a Buffer: a Buffer as it is, or a raw address (an int) wrapped without owning
    the memory, `size` bytes on `definition`'s device, with `owner` kept alive by libcucore for as long as
    the graphs need the memory (cuda.core's dst_owner / src_owner)."""
    if isinstance(operand, Buffer):
        if owner is not None:
            raise ValueError(f"{side}_owner cannot be used when {side} is a Buffer")
        if operand._h is None:
            raise closed_error(operand)
        return operand
    if isinstance(operand, bool) or not isinstance(operand, int):
        raise TypeError(f"{side} must be a Buffer or an address (int), not {type(operand).__name__}")
    return Buffer.from_handle(operand, size, owner=owner, device_id=definition.device)


def _fill_value(value: Any) -> Tuple[int, int]:
    """(value, element size) of a memset value: an int for a 1-byte fill ([0, 256)), or a bytes-like object of
    1, 2 or 4 bytes laid out in memory as given (cuda.core's)."""
    if isinstance(value, bool):
        raise TypeError("value must be an int or a bytes-like object of 1, 2 or 4 bytes, not bool")
    if isinstance(value, int):
        if not 0 <= value < 256:
            raise _OutOfRangeError(f"an int fill value is one byte: [0, 256), not {value}")
        return value, 1
    try:
        pattern = memoryview(value).cast("B").tobytes()
    except TypeError:
        raise TypeError(f"value must be an int or a bytes-like object of 1, 2 or 4 bytes, not "
                        f"{type(value).__name__}") from None
    if len(pattern) not in (1, 2, 4):
        raise ValueError(f"a fill value has 1, 2 or 4 bytes, not {len(pattern)}")
    return int.from_bytes(pattern, sys.byteorder), len(pattern)


def _memset_extent(width: int, height: int, pitch: int, element_size: int) -> int:
    """The bytes a fill of `height` rows of `width` elements, rows `pitch` bytes apart, covers."""
    row = width * element_size
    if height <= 1:
        return row
    return (pitch or row) * (height - 1) + row


# ---- the adders (GraphDefinition's make entry nodes; GraphNode's make nodes depending on it) --------------

class _NodeAdders:
    """The node-making methods cuda.core's GraphDefinition and GraphNode share. `_deps()` gives (the
    definition, the dependencies as a C array or None, their count)."""

    __slots__ = ()

    def _deps(self) -> Tuple[GraphDefinition, Any, int]:
        raise NotImplementedError

    def _add(self, cls: type, params: Optional[Dict[str, Any]], add: Any, *args: Any,
             uses: Tuple[Any, ...] = ()) -> Any:
        d, deps, count = self._deps()
        out = _c_void_p()
        st = add(d._check_open(), deps, count, *args, out)
        if st:
            raise_error(st, d, self, *uses)
        return d._adopt(out.value, cls, params)

    def empty(self) -> EmptyNode:
        """A node that does nothing (a join point)."""
        return self._add(EmptyNode, None, _cucore_graph_definition_add_empty)

    def join(self, *nodes: GraphNode) -> EmptyNode:
        """An empty node depending on this one (for a node) and on every node in `nodes`."""
        for n in nodes:
            if not isinstance(n, GraphNode):
                raise TypeError(f"join() takes GraphNodes, not {type(n).__name__}")
        d, deps, count = self._deps()
        own = [deps[i] for i in range(count)] if deps is not None else []
        handles = own + [_hv(n._check_open()) for n in nodes]
        array = (_c_void_p * len(handles))(*handles) if handles else None
        out = _c_void_p()
        st = _cucore_graph_definition_add_empty(d._check_open(), array, len(handles), out)
        if st:
            raise_error(st, d, self, *nodes)
        return d._adopt(out.value, EmptyNode, None)

    def launch(self, config: LaunchConfig, kernel: Kernel, *args: Any) -> KernelNode:
        """A kernel node: `kernel` with `config` and `args`, packed as launch() packs them (a GraphCondition
        included); the bytes are copied now. Cooperative and cluster configurations become the node's
        attributes."""
        if not isinstance(config, LaunchConfig):
            raise TypeError(f"config must be a LaunchConfig, not {type(config).__name__}")
        _check_kernel(kernel)
        p = _packed(kernel, args)
        ptrs, sizes, n = _kernel_args(p)
        return self._add(KernelNode, {"kernel": kernel, "args": args}, _cucore_graph_definition_add_kernel, config._ref,
                         kernel._h, ptrs, sizes, n, uses=(kernel,))

    def memset(self, dst: Union[Buffer, int], value: Any, width: int, height: int = 1, pitch: int = 0, *,
               dst_owner: Any = None) -> MemsetNode:
        """A fill node: `height` rows of `width` elements of `value` (an int: one byte; or a bytes-like object
        of 1, 2 or 4 bytes, laid out as given), rows `pitch` bytes apart (0: tightly), at `dst` (a Buffer, held
        by the graph; or an address, with `dst_owner` kept alive while the graphs need it)."""
        val, element_size = _fill_value(value)
        width, height, pitch = _u64(width, "width"), _u64(height, "height"), _u64(pitch, "pitch")
        d = self._deps()[0]
        buf = _operand(dst, dst_owner, "dst", _memset_extent(width, height, pitch, element_size), d)
        params = {"dptr": buf.handle, "value": val, "element_size": element_size, "width": width,
                  "height": height, "pitch": pitch, "dst_operand": (dst, dst_owner)}
        return self._add(MemsetNode, params, _cucore_graph_definition_add_memset, buf._h, 0, val, element_size,
                         width, height, pitch, uses=(buf,))

    def memcpy(self, dst: Union[Buffer, int], src: Union[Buffer, int], size: int, *, dst_owner: Any = None,
               src_owner: Any = None) -> MemcpyNode:
        """A copy node of `size` bytes from `src` to `dst`: each a Buffer (held by the graph), or an address
        (device or page-locked host memory) with an optional owner kept alive while the graphs need it."""
        size = _u64(size, "size")
        d = self._deps()[0]
        dbuf = _operand(dst, dst_owner, "dst", size, d)
        sbuf = _operand(src, src_owner, "src", size, d)
        params = {"dst": dbuf.handle, "src": sbuf.handle, "size": size, "dst_operand": (dst, dst_owner),
                  "src_operand": (src, src_owner)}
        return self._add(MemcpyNode, params, _cucore_graph_definition_add_memcpy, dbuf._h, 0, sbuf._h, 0, size,
                         uses=(dbuf, sbuf))

    def memcpy_3d(self, dst: Any, src: Any, extent: Union[Tuple[int, int], Tuple[int, int, int]]) -> MemcpyNode:
        """A strided 2D/3D copy node (beyond cuda.core), described as copy_3d() describes it: each side a
        MemoryRegion of a Buffer, or a Buffer laid out tightly; extent = (width in bytes, rows[, depth])."""
        width, rows, depth = _extent(extent)
        c = Copy3dC()
        c.struct_size = ctypes.sizeof(c)
        c.width, c.rows, c.depth = width, rows, depth
        regions = []
        for side, cr, what in ((dst, c.dst, "dst"), (src, c.src, "src")):
            r = _region(side, width, rows)
            _check_layout(r, what, width, rows, depth)
            if not isinstance(r.memory, Buffer):
                raise TypeError(f"memcpy_3d(): {what} must be a Buffer or a MemoryRegion of one (a graph runs "
                                f"later: wrap page-locked host memory with Buffer.from_handle), not "
                                f"{type(r.memory).__name__}")
            if r.memory._h is None:
                raise closed_error(r.memory)
            cr.buffer = _hv(r.memory._h)
            cr.offset, cr.pitch, cr.height, cr.x, cr.y, cr.z = r.offset, r.pitch, r.height, r.x, r.y, r.z
            regions.append(r)
        params = {"dst": regions[0].memory.handle + regions[0].offset,
                  "src": regions[1].memory.handle + regions[1].offset, "size": None, "extent": (width, rows, depth)}
        return self._add(MemcpyNode, params, _cucore_graph_definition_add_memcpy_3d, c,
                         uses=tuple(r.memory for r in regions))

    def embed(self, child: GraphDefinition) -> ChildGraphNode:
        """A child graph node running a copy of `child` taken now (later changes to `child` do not reach it)."""
        if not isinstance(child, GraphDefinition):
            raise TypeError(f"child must be a GraphDefinition, not {type(child).__name__}")
        return self._add(ChildGraphNode, None, _cucore_graph_definition_add_child_graph, child._check_open(),
                         uses=(child,))

    def record(self, event: Event) -> EventRecordNode:
        """A node recording `event` (held by the graph)."""
        if not isinstance(event, Event):
            raise TypeError(f"event must be an Event, not {type(event).__name__}")
        return self._add(EventRecordNode, {"event": event}, _cucore_graph_definition_add_event_record, event._h,
                         uses=(event,))

    def wait(self, event: Event) -> EventWaitNode:
        """A node waiting for `event` (held by the graph)."""
        if not isinstance(event, Event):
            raise TypeError(f"event must be an Event, not {type(event).__name__}")
        return self._add(EventWaitNode, {"event": event}, _cucore_graph_definition_add_event_wait, event._h,
                         uses=(event,))

    def callback(self, fn: Any, *, user_data: Any = None) -> HostCallbackNode:
        """A host callback node: `fn` runs on the host each time a launch reaches it (GraphBuilder.callback
        says which callables are taken). It must not call CUDA (nor cucore)."""
        c_fn, data, release = host_callback_args(fn, user_data)
        params = {"callback": None if _is_ctypes_function(fn) else fn}
        return self._add(HostCallbackNode, params, _cucore_graph_definition_add_host_callback, c_fn, data, release)

    def allocate(self, size: int, *, device: Union[Device, int, None] = None,
                 memory_type: Union[GraphMemoryType, str] = GraphMemoryType.DEVICE,
                 peer_access: Optional[Iterable[Union[Device, int]]] = None,
                 options: Optional[GraphAllocOptions] = None) -> AllocNode:
        """An allocation node of `size` bytes; its `dptr` is the address the memory has in every launch, until a
        free node (deallocate) frees it or, with GraphCompleteOptions(auto_free_on_launch=True), the next
        launch. `memory_type`: "device" (the graph's device) or "host"; `peer_access`: other devices given
        read-write access; or both as `options` (GraphAllocOptions). `device`, if given, must be the graph's
        device (libcucore allocates on the definition's device)."""
        if options is None:
            options = GraphAllocOptions(memory_type, peer_access or ())
        elif not isinstance(options, GraphAllocOptions):
            raise TypeError(f"options must be GraphAllocOptions or None, not {type(options).__name__}")
        if options.memory_type == GraphMemoryType.MANAGED:
            raise NotSupportedError(Status.ERROR_NOT_SUPPORTED, "graph allocation nodes of managed memory are not "
                                    "supported by libcucore (memory_type 'device' or 'host')", 0)
        size = _u64(size, "size")
        d, deps, count = self._deps()
        if device is not None:
            wanted, own = _device(device), d.device
            if wanted != own:
                raise ValueError(f"allocation nodes allocate on the graph's device ({own.device_id}), not "
                                 f"{wanted.device_id}")
        node, address = _c_void_p(), ctypes.c_uint64()
        st = _cucore_graph_definition_add_alloc(d._check_open(), deps, count, size, alloc_options_struct(options),
                                                node, address)
        if st:
            raise_error(st, d, self)
        params = {"dptr": address.value, "bytesize": size, "memory_type": GraphMemoryType(options.memory_type),
                  "peer_access": tuple(options.peer_access)}
        return d._adopt(node.value, AllocNode, params)

    def deallocate(self, dptr: int) -> FreeNode:
        """A node freeing `dptr`, the memory of an allocation node (AllocNode.dptr) or other graph memory."""
        dptr = _u64(dptr, "dptr")
        return self._add(FreeNode, {"dptr": dptr}, _cucore_graph_definition_add_free, dptr)

    def _conditional(self, condition: Any, kind: GraphConditionalType, count: int, cls: type) -> Any:
        value = check_condition(condition, "GraphDefinition")
        d, deps, n = self._deps()
        bodies = (_c_void_p * count)()
        node = _c_void_p()
        st = _cucore_graph_definition_add_conditional(d._check_open(), deps, n, value, CONDITIONAL_VALUES[kind],
                                                      count, bodies, node)
        if st:
            raise_error(st, d, self)
        branches = []
        try:
            for i in range(count):
                hv, bodies[i] = bodies[i], None  # its reference is the wrapper's (or released) from here
                branches.append(GraphDefinition._from_owned(hv))
        finally:
            for i in range(count):
                if bodies[i]:
                    _fast_graph_definition_release(_handle_arg(bodies[i]))
        params = {"condition": condition, "cond_type": kind, "branches": tuple(branches)}
        return d._adopt(node.value, cls, params)

    def if_then(self, condition: GraphCondition) -> IfNode:
        """A conditional node whose body (`.then`, an empty GraphDefinition to add nodes to) runs when
        `condition` is non-zero."""
        return self._conditional(condition, GraphConditionalType.IF, 1, IfNode)

    def if_else(self, condition: GraphCondition) -> IfElseNode:
        """An if/else node: `.then` runs when `condition` is non-zero, `.else_` when it is zero
        (NotSupportedError on drivers before CUDA 12.8)."""
        return self._conditional(condition, GraphConditionalType.IF, 2, IfElseNode)

    def while_loop(self, condition: GraphCondition) -> WhileNode:
        """A while node whose body (`.body`) runs again and again while `condition` is non-zero."""
        return self._conditional(condition, GraphConditionalType.WHILE, 1, WhileNode)

    def switch(self, condition: GraphCondition, count: int) -> SwitchNode:
        """A switch node of `count` bodies (`.branches`): body n runs when `condition` is n, none when it is out
        of range (NotSupportedError on drivers before CUDA 12.8)."""
        if isinstance(count, bool) or not isinstance(count, int):
            raise TypeError(f"switch count must be an int, not {type(count).__name__}")
        if count < 1:
            raise ValueError(f"switch count must be >= 1, not {count}")
        return self._conditional(condition, GraphConditionalType.SWITCH, count, SwitchNode)


# ---- definitions --------------------------------------------------------------------------------------------

# Live definition wrappers by raw CUgraph: the same graph gives the same Python object while it lives (its
# node registry and remembered parameters with it).
_definitions: Any = weakref.WeakValueDictionary()


def _node_list(call: Any, h: Any, *owners: Any) -> List[Any]:
    """The node handles (ints, +1 each) a listing call `call(h, array, capacity, count)` gives."""
    count = _c_size_t()
    st = call(h, None, 0, count)
    if st:
        raise_error(st, *owners)
    while True:
        capacity = count.value
        if capacity == 0:
            return []
        array = (_c_void_p * capacity)()
        st = call(h, array, capacity, count)
        if st:
            raise_error(st, *owners)
        got = min(capacity, count.value)
        handles = [array[i] for i in range(got)]
        if count.value <= capacity:
            return handles
        for hv in handles:  # the graph grew in between: ask again
            _fast_graph_node_release(_handle_arg(hv))


def _replaced(definition: Any) -> bool:
    """Whether `definition` is a child graph a child-graph node update replaced: the driver may give its CUgraph
    address to a new graph, whose wrapper must then be a new one."""
    count = _c_size_t()
    return _cucore_graph_definition_nodes(definition._h, None, 0, count) == Status.ERROR_INVALID_STATE


class GraphDefinition(HandleObject, _NodeAdders):
    """A graph definition (a CUgraph): nodes and the dependencies between them, added explicitly (this
    object's adders make entry nodes; a node's adders make nodes depending on it) or captured by a
    GraphBuilder (GraphBuilder.graph_definition). `instantiate()` gives the executable Graph.
    `GraphDefinition(device=None)` makes an empty one whose nodes run on `device` (None: the current device)."""

    __slots__ = ("_nodes", "_info")
    _nodes: Any
    _info: Dict[int, Tuple[type, Optional[Dict[str, Any]]]]
    _release = staticmethod(_fast_graph_definition_release)
    _handle_fn = staticmethod(_cucore_graph_definition_handle)

    def __new__(cls, device: Union[Device, int, None] = None) -> GraphDefinition:
        dev = _device(device)
        out = _c_void_p()
        st = _cucore_graph_definition_create(dev._h, out)
        if st:
            raise_error(st, dev)
        return cls._from_owned(out.value)

    def __init__(self, device: Union[Device, int, None] = None) -> None:
        pass  # made by __new__

    @classmethod
    def _from_owned(cls, hv: Any) -> GraphDefinition:
        """The wrapper of the +1 definition handle `hv` (an int): the live wrapper of the same CUgraph if there
        is one (the extra reference dropped), else a new one (libcucore knows its device: `device`)."""
        h = _handle_arg(hv)
        raw = _c_void_p()
        st = _cucore_graph_definition_handle(h, raw)
        if st:
            _fast_graph_definition_release(h)
            raise_error(st)
        existing = _definitions.get(raw.value)
        if existing is not None and existing._h is not None and not _replaced(existing):
            _fast_graph_definition_release(h)
            return existing
        d = _new(cls)
        d._h = h
        d._raw = raw.value or 0
        d._nodes = weakref.WeakValueDictionary()
        d._info = {}
        _definitions[d._raw] = d
        return d

    def _check_open(self) -> Any:
        h = self._h
        if h is None:
            raise closed_error(self)
        return h

    def close(self) -> None:
        """Release this object's reference (idempotent). The graph itself lives on while its builder, its
        nodes' and bodies' objects, its clones' sources or the graphs made from it need it; what this object
        remembered of its nodes (and the Python objects in it) is dropped."""
        try:
            super().close()
        finally:
            self._info.clear()

    def _deps(self) -> Tuple[GraphDefinition, Any, int]:
        return self, None, 0

    def _adopt(self, hv: Any, cls: Optional[type] = None, params: Optional[Dict[str, Any]] = None) -> Any:
        """The node wrapper of the +1 node handle `hv` (an int) of this definition: the live one if there is one
        (the extra reference dropped), else a new one of `cls` (None: of the node's kind, or what this
        definition remembers of it). `params` are what libcucore cannot read back, remembered here."""
        h = _handle_arg(hv)
        raw = _c_void_p()
        st = _cucore_graph_node_handle(h, raw)
        if st:
            _fast_graph_node_release(h)
            raise_error(st)
        key = raw.value or 0
        existing = self._nodes.get(key)
        if existing is not None and existing._h is not None:
            _fast_graph_node_release(h)
            if params is not None:
                self._info[key] = (type(existing), params)
            return existing
        if cls is None:
            info = self._info.get(key)
            if info is not None:
                cls = info[0]
            else:
                t = _c_int()
                st = _cucore_graph_node_type(h, t)
                if st:
                    _fast_graph_node_release(h)
                    raise_error(st, self)
                cls = _NODE_CLASSES.get(t.value, GraphNode)
        elif params is not None:
            self._info[key] = (cls, params)
        n: Any = _new(cls)
        n._h = h
        n._raw = key
        n._key = key
        n._graph = self
        self._nodes[key] = n
        return n

    def _params(self, key: int) -> Optional[Dict[str, Any]]:
        info = self._info.get(key)
        return None if info is None else info[1]

    def _forget(self, key: int) -> None:
        self._nodes.pop(key, None)
        self._info.pop(key, None)

    def __repr__(self) -> str:
        if self._h is None:
            return "<GraphDefinition (closed)>"
        return f"<GraphDefinition handle=0x{self._raw or 0:x}>"

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, GraphDefinition):
            return NotImplemented
        return self is other or (self._raw is not None and self._raw == other._raw)

    def __hash__(self) -> int:
        return hash((GraphDefinition, self._raw))

    @property
    def is_valid(self) -> bool:
        """Whether this definition can still be used (not closed)."""
        return self._h is not None

    @property
    def device(self) -> Device:
        """The Device whose primary context the nodes run in (beyond cuda.core), asked of libcucore, so a
        definition captured by a builder, a clone, a conditional's body or a child graph knows it too."""
        out = _c_void_p()
        st = _cucore_graph_definition_device(self._check_open(), out)
        if st:
            raise_error(st, self)
        return _device_from_owned_handle(out)

    @property
    def is_owned(self) -> bool:
        """Whether the CUgraph is this definition's own (False: a body or child graph belonging to a node of
        another definition)."""
        out = _c_int()
        st = _cucore_graph_definition_is_owned(self._check_open(), out)
        if st:
            raise_error(st, self)
        return bool(out.value)

    def create_condition(self, default_value: Optional[int] = None) -> GraphCondition:
        """A condition of this graph for its conditional nodes and its kernels (a launch argument; device code
        sets it with cudaGraphSetConditional). `default_value`: its value at the start of every launch; None
        keeps the last launch's (initially 0). NotSupportedError on drivers before CUDA 12.3."""
        value, flags = condition_args(default_value)
        out = ctypes.c_uint64()
        st = _cucore_graph_definition_create_condition(self._check_open(), value, flags, out)
        if st:
            raise_error(st, self)
        return GraphCondition._from_value(out.value)

    def instantiate(self, options: Union[GraphCompleteOptions, Dict[str, Any], None] = None) -> Graph:
        """The executable Graph of this definition (GraphCompleteOptions: auto free on launch, upload, device
        launch, node priorities). The definition can change afterwards without changing the graph (update)."""
        struct, keep = complete_options_struct(options)
        out = _c_void_p()
        st = _cucore_graph_definition_instantiate(self._check_open(), struct, out)
        if st:
            raise_error(st, self, keep)
        return Graph._wrap(out.value)

    def clone(self) -> GraphDefinition:
        """A copy with the same nodes and dependencies (cuGraphClone), holding the same objects; find a node's
        copy with GraphNode.find_in_clone."""
        out = _c_void_p()
        st = _cucore_graph_definition_clone(self._check_open(), out)
        if st:
            raise_error(st, self)
        return GraphDefinition._from_owned(out.value)

    def debug_dot_print(self, path: Any, options: Union[GraphDebugPrintOptions, Dict[str, Any], None] = None) -> None:
        """Write the graph to `path` as a Graphviz DOT file, with what `options` (GraphDebugPrintOptions) adds."""
        st = _cucore_graph_definition_debug_dot_print(self._check_open(), dot_path(path), dot_flags(options))
        if st:
            raise_error(st, self)

    def nodes(self) -> Set[GraphNode]:
        """Every node of the graph (the same objects as the adders gave, while those live)."""
        handles = _node_list(_cucore_graph_definition_nodes, self._check_open(), self)
        return self._adopt_all(handles)

    def _adopt_all(self, handles: List[Any]) -> Set[GraphNode]:
        out: Set[GraphNode] = set()
        for i, hv in enumerate(handles):
            try:
                out.add(self._adopt(hv))
            except BaseException:
                for rest in handles[i + 1:]:
                    _fast_graph_node_release(_handle_arg(rest))
                raise
        return out

    def edges(self) -> Set[Tuple[GraphNode, GraphNode]]:
        """Every dependency of the graph as a (from_node, to_node) pair: `to_node` runs after `from_node`."""
        h = self._check_open()
        count = _c_size_t()
        st = _cucore_graph_definition_edges(h, None, None, 0, count)
        if st:
            raise_error(st, self)
        while True:
            capacity = count.value
            if capacity == 0:
                return set()
            froms, tos = (_c_void_p * capacity)(), (_c_void_p * capacity)()
            st = _cucore_graph_definition_edges(h, froms, tos, capacity, count)
            if st:
                raise_error(st, self)
            got = min(capacity, count.value)
            pairs = [(froms[i], tos[i]) for i in range(got)]
            if count.value <= capacity:
                break
            for a, b in pairs:
                _fast_graph_node_release(_handle_arg(a))
                _fast_graph_node_release(_handle_arg(b))
        flat = [hv for pair in pairs for hv in pair]
        nodes = []
        for i, hv in enumerate(flat):
            try:
                nodes.append(self._adopt(hv))
            except BaseException:
                for rest in flat[i + 1:]:
                    _fast_graph_node_release(_handle_arg(rest))
                raise
        return {(nodes[2 * i], nodes[2 * i + 1]) for i in range(len(pairs))}


# ---- executable graphs --------------------------------------------------------------------------------------

def _node_of(node: Any, cls: Any) -> Any:
    """The handle of a node argument of a per-node update (TypeError for another kind of node)."""
    if not isinstance(node, cls):
        raise TypeError(f"node must be a {cls.__name__}, not {type(node).__name__}")
    return node._check_open()


class Graph(HandleObject):
    """An executable graph (a CUgraphExec), made by GraphBuilder.complete() or GraphDefinition.instantiate():
    launch(stream), upload(stream), update(definition) and per-node updates, which change this graph, not its
    definition: cuda.core's `graph[node].update(...)` (ExecutableGraphNode views) or set_kernel_node, ...,
    set_node_enabled, which the views call."""

    __slots__ = ()
    _release = staticmethod(_fast_graph_release)
    _handle_fn = staticmethod(_cucore_graph_handle)

    def __new__(cls, *args: Any, **kwargs: Any) -> Graph:
        raise RuntimeError("Graph cannot be instantiated directly: use GraphBuilder.complete() or "  # cuda.core's
                        "GraphDefinition.instantiate()")

    @classmethod
    def _wrap(cls, hv: Any) -> Graph:
        g = _new(cls)
        g._h = _handle_arg(hv)
        g._raw = None
        return g

    def __repr__(self) -> str:
        if self._h is None:
            return "<Graph (closed)>"
        return f"<Graph handle=0x{self.handle:x}>"

    def __getitem__(self, node: GraphNode) -> ExecutableGraphNode:
        """The view of `node` (a node of the definition this graph was instantiated or last updated from) in
        this graph, as cuda.core's: an ExecutableKernelNode, ExecutableMemcpyNode, ExecutableMemsetNode,
        ExecutableHostCallbackNode, ExecutableChildGraphNode, ExecutableEventRecordNode or
        ExecutableEventWaitNode, whose update() changes the node for this graph's future launches (kernel,
        memcpy and memset views also enable and disable it). TypeError for a node of another kind."""
        return _executable_view(self, node)

    def launch(self, stream: Any) -> None:
        """Launch the graph on `stream` (a Stream, a GraphBuilder, or anything with __cuda_stream__); one
        driver call. Asynchronous: returns once queued."""
        if type(stream) is _Stream:
            sh = stream._h
            if sh is None:
                raise closed_error(stream)
        else:
            stream = _stream_of(stream)
            sh = stream._h
            if sh is None:
                raise closed_error(stream)
        st = _fast_graph_launch(self._h, sh)
        if st:
            raise_error(st, self, stream)

    def upload(self, stream: Any) -> None:
        """Upload the graph's device work on `stream` ahead of a launch."""
        s = _stream_of(stream)
        if s._h is None:
            raise closed_error(s)
        st = _cucore_graph_upload(self._h, s._h)
        if st:
            raise_error(st, self, s)

    def update(self, source: Union[GraphBuilder, GraphDefinition]) -> None:
        """Update the graph in place from `source` (a GraphDefinition, or a GraphBuilder whose building has
        ended), which must have the graph's topology: kernel arguments, copies, fills and callbacks change.
        GraphUpdateError (an InvalidStateError) carries the driver's `result` when refused."""
        if isinstance(source, GraphBuilder):
            source = source.graph_definition
        if not isinstance(source, GraphDefinition):
            raise TypeError(f"update() takes a GraphBuilder or a GraphDefinition, not {type(source).__name__}")
        result = _c_int()
        st = _cucore_graph_update(self._h, source._check_open(), result)
        if st:
            if st == Status.ERROR_INVALID_STATE:
                e = error_from_status(st)
                raise GraphUpdateError(e.status, e.message, e.cuda_result, result.value)
            raise_error(st, self, source)

    # ---- per-node updates of this graph (its definition is not changed) ----------------------------------

    def set_kernel_node(self, node: KernelNode, config: Optional[LaunchConfig], kernel: Optional[Kernel],
                        *args: Any) -> None:
        """Give the graph's copy of `node` (a node of the definition the graph was made from) a new
        configuration (None: the definition's node's), kernel (None: keep it) and arguments, packed as
        launch() packs them; the next launch uses them."""
        h = _node_of(node, KernelNode)
        cref, k = node._resolved(config, kernel)
        p = _packed(k, args)
        ptrs, sizes, n = _kernel_args(p)
        st = _cucore_graph_set_kernel_node(self._h, h, cref, None if kernel is None else k._h, ptrs, sizes, n)
        if st:
            raise_error(st, self, node, k)

    def set_memcpy_node(self, node: MemcpyNode, dst: Union[Buffer, int], src: Union[Buffer, int], size: int, *,
                        dst_owner: Any = None, src_owner: Any = None) -> None:
        """Give the graph's copy of `node` a new copy (memcpy()'s arguments)."""
        h = _node_of(node, MemcpyNode)
        size = _u64(size, "size")
        dbuf = _operand(dst, dst_owner, "dst", size, node._graph)
        sbuf = _operand(src, src_owner, "src", size, node._graph)
        st = _cucore_graph_set_memcpy_node(self._h, h, dbuf._h, 0, sbuf._h, 0, size)
        if st:
            raise_error(st, self, node, dbuf, sbuf)

    def set_memset_node(self, node: MemsetNode, dst: Union[Buffer, int], value: Any, width: int, height: int = 1,
                        pitch: int = 0, *, dst_owner: Any = None) -> None:
        """Give the graph's copy of `node` a new fill (memset()'s arguments)."""
        h = _node_of(node, MemsetNode)
        val, element_size = _fill_value(value)
        width, height, pitch = _u64(width, "width"), _u64(height, "height"), _u64(pitch, "pitch")
        buf = _operand(dst, dst_owner, "dst", _memset_extent(width, height, pitch, element_size), node._graph)
        st = _cucore_graph_set_memset_node(self._h, h, buf._h, 0, val, element_size, width, height, pitch)
        if st:
            raise_error(st, self, node, buf)

    def set_callback_node(self, node: HostCallbackNode, fn: Any, *, user_data: Any = None) -> None:
        """Give the graph's copy of `node` a new host function (the callables callback() takes)."""
        h = _node_of(node, HostCallbackNode)
        c_fn, data, release = host_callback_args(fn, user_data)
        st = _cucore_graph_set_host_callback_node(self._h, h, c_fn, data, release)
        if st:
            raise_error(st, self, node)

    def set_node_enabled(self, node: GraphNode, enabled: bool) -> None:
        """Enable or disable the graph's copy of a kernel, memcpy or memset node (a disabled node does nothing
        when the graph runs, its dependencies still hold); InvalidArgumentError names any other kind."""
        h = _node_of(node, GraphNode)
        st = _cucore_graph_set_node_enabled(self._h, h, 1 if enabled else 0)
        if st:
            raise_error(st, self, node)

    def is_node_enabled(self, node: GraphNode) -> bool:
        """Whether the graph's copy of a kernel, memcpy or memset node is enabled (InvalidArgumentError for
        any other kind)."""
        h = _node_of(node, GraphNode)
        out = _c_int()
        st = _cucore_graph_node_enabled(self._h, h, out)
        if st:
            raise_error(st, self, node)
        return bool(out.value)


def _public_names() -> None:
    """The public classes say `cucore.graph` in reprs and tracebacks (pickle finds them there: the module
    exports them); `_cucore_module` keeps the defining module, where _lib rebinds their C functions."""
    namespace = globals()
    for name in __all__:
        obj = namespace[name]
        if isinstance(obj, type) and obj.__module__ in ("cucore.graph_builder", "cucore._graph_options"):
            setattr(obj, "_cucore_module", obj.__module__)
            obj.__module__ = __name__


_public_names()

# GraphBuilder.complete and GraphBuilder.graph_definition make Graphs and GraphDefinitions; graph_builder.py is
# below this module.
_lib.hand_down("graph_builder", Graph=Graph, GraphDefinition=GraphDefinition)
