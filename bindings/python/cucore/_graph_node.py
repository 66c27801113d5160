"""The nodes of graph definitions (cucore.graph's GraphNode and its typed classes; include/cucore/graph.h).

The layer above graph.py (bindings/python/README.md, "Layers"): a node is made by the adders of graph.py's
definitions and nodes, so graph.py gets the node classes handed down; they are public in `cucore.graph`, which
exports them. A node names one CUgraphNode of one definition and keeps that definition's Python object alive;
`pred` and `succ` are live set views of its edges (AdjacencySetProxy).
"""
from __future__ import annotations

import ctypes
import sys
from collections.abc import MutableSet
from typing import Any, Dict, Iterable, Iterator, Optional, Set, Tuple, Union, cast

from . import _lib
from ._graph_options import GraphCondition, node_type_of
from ._handle import HandleObject
from .buffer import Buffer
from .common import InvalidStateError, Status, closed_error, raise_error
from .event import Event
from .graph import (COOPERATIVE, PRIORITY, PROGRAMMATIC_STREAM_SERIALIZATION, GraphDefinition, LaunchConfigC,
                    _check_config, _check_kernel, _fill_value, _handle_arg, _hv, _kernel_args, _memset_extent,
                    _node_list, _NodeAdders, _operand, _packed, _u64)
from .graph_builder import _is_ctypes_function, host_callback_args
from .kernel import Kernel
from .launch import LaunchConfig
from .typing import GraphConditionalType, GraphMemoryType

(_cucore_graph_node_add_dependent, _cucore_graph_node_alloc_info, _cucore_graph_node_bodies, _cucore_graph_node_dependencies, _cucore_graph_node_dependents, _cucore_graph_node_destroy, _cucore_graph_node_find_in_clone, _cucore_graph_node_handle, _cucore_graph_node_kernel_config, _cucore_graph_node_remove_dependent, _cucore_graph_node_set_host_callback, _cucore_graph_node_set_kernel, _cucore_graph_node_set_memcpy, _cucore_graph_node_set_memset, _cucore_graph_node_type,) = _lib.bind(
    globals(), "cucore_graph_node_add_dependent", "cucore_graph_node_alloc_info", "cucore_graph_node_bodies", "cucore_graph_node_dependencies", "cucore_graph_node_dependents", "cucore_graph_node_destroy", "cucore_graph_node_find_in_clone", "cucore_graph_node_handle", "cucore_graph_node_kernel_config", "cucore_graph_node_remove_dependent", "cucore_graph_node_set_host_callback", "cucore_graph_node_set_kernel", "cucore_graph_node_set_memcpy", "cucore_graph_node_set_memset", "cucore_graph_node_type")
(_cucore_graph_node_set_event, _cucore_graph_node_set_child_graph) = _lib.bind(
    globals(), "cucore_graph_node_set_event", "cucore_graph_node_set_child_graph")
(_fast_graph_node_release, _fast_graph_definition_release, _fast_kernel_release) = _lib.bind_unchecked(
    globals(), "cucore_graph_node_release", "cucore_graph_definition_release", "cucore_kernel_release")
_c_void_p = ctypes.c_void_p
_c_int = ctypes.c_int
_c_size_t = ctypes.c_size_t


# ---- nodes --------------------------------------------------------------------------------------------------

class GraphNode(HandleObject, _NodeAdders):
    """A node of a GraphDefinition. Its adders (launch, memcpy, callback, if_then, ...) make nodes depending on
    it; `pred` and `succ` are live, mutable set views of the nodes it depends on and that depend on it.
    The typed subclasses (KernelNode, MemcpyNode, ...) add what each kind has."""

    __slots__ = ("_key", "_graph")
    _key: int
    _graph: GraphDefinition
    _release = staticmethod(_fast_graph_node_release)
    _handle_fn = staticmethod(_cucore_graph_node_handle)

    def __new__(cls, *args: Any, **kwargs: Any) -> GraphNode:
        raise TypeError("GraphNode cannot be instantiated directly: use the adders of GraphDefinition or of a node")

    def _check_open(self) -> Any:
        h = self._h
        if h is None:
            raise closed_error(self)
        return h

    def _check_live(self) -> Any:
        """The handle of a node that is not destroyed: InvalidStateError (a RuntimeError) names a destroyed
        one before any other check, as cuda.core's updates and executable views do."""
        if self._raw is None:
            raise InvalidStateError(Status.ERROR_INVALID_STATE, "GraphNode has been destroyed", 0)
        return self._check_open()

    def _deps(self) -> Tuple[GraphDefinition, Any, int]:
        return self._graph, (_c_void_p * 1)(_hv(self._check_open())), 1

    def _params(self) -> Dict[str, Any]:
        return self._graph._params(self._key) or {}

    def __repr__(self) -> str:
        if self._raw is None:
            return f"<{type(self).__name__} (destroyed)>"
        return f"<{type(self).__name__} handle=0x{self._key:x}>"

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, GraphNode):
            return NotImplemented
        return self is other or (self._key == other._key and self._graph is other._graph)

    def __hash__(self) -> int:
        return hash((GraphNode, self._key, self._graph._raw))

    @property
    def handle(self) -> Optional[int]:  # type: ignore[override]
        """The raw CUgraphNode as an int; None once the node is destroyed."""
        return self._raw

    @property
    def type(self) -> Any:
        """The node's kind, a GraphNodeType (whose values are the driver's CUgraphNodeType)."""
        out = _c_int()
        st = _cucore_graph_node_type(self._check_open(), out)
        if st:
            raise_error(st, self)
        return node_type_of(out.value)

    @property
    def graph(self) -> GraphDefinition:
        """The GraphDefinition the node belongs to."""
        return self._graph

    @property
    def is_valid(self) -> bool:
        """Whether the node and its definition can still be used (False after destroy())."""
        return self._raw is not None and self._h is not None and self._graph._h is not None

    def destroy(self) -> None:
        """Remove the node and its edges from its definition (cuGraphDestroyNode); is_valid is then False.
        A no-op on a destroyed node."""
        if self._raw is None or self._h is None:
            return
        st = _cucore_graph_node_destroy(self._h)
        if st:
            raise_error(st, self)
        self._graph._forget(self._key)
        self._raw = None

    def find_in_clone(self, clone: GraphDefinition) -> GraphNode:
        """The node of `clone` (GraphDefinition.clone() of this node's definition) made from this node."""
        if not isinstance(clone, GraphDefinition):
            raise TypeError(f"clone must be a GraphDefinition, not {type(clone).__name__}")
        out = _c_void_p()
        st = _cucore_graph_node_find_in_clone(self._check_open(), clone._check_open(), out)
        if st:
            raise_error(st, self, clone)
        return clone._adopt(out.value, type(self) if type(self) is not GraphNode else None, None)

    def _neighbours(self, forward: bool) -> Set[GraphNode]:
        call = _cucore_graph_node_dependents if forward else _cucore_graph_node_dependencies
        return self._graph._adopt_all(_node_list(call, self._check_open(), self))

    def _edge(self, other: Any, forward: bool, add: bool) -> None:
        if not isinstance(other, GraphNode):
            raise TypeError(f"a node's pred and succ hold GraphNodes, not {type(other).__name__}")
        a, b = (self, other) if forward else (other, self)
        call = _cucore_graph_node_add_dependent if add else _cucore_graph_node_remove_dependent
        st = call(a._check_open(), b._check_open())
        if st:
            raise_error(st, a, b)

    @property
    def pred(self) -> AdjacencySetProxy:
        """A live, mutable set view of the nodes this node depends on (add / discard / clear / update change
        the definition's edges)."""
        return AdjacencySetProxy(self, False)

    @pred.setter
    def pred(self, value: Iterable[GraphNode]) -> None:
        nodes = list(value)  # first: `value` may be this very view (`node.pred |= {...}` assigns it back)
        p = AdjacencySetProxy(self, False)
        p.clear()
        p.update(nodes)

    @property
    def succ(self) -> AdjacencySetProxy:
        """A live, mutable set view of the nodes that depend on this node."""
        return AdjacencySetProxy(self, True)

    @succ.setter
    def succ(self, value: Iterable[GraphNode]) -> None:
        nodes = list(value)  # first: `value` may be this very view
        s = AdjacencySetProxy(self, True)
        s.clear()
        s.update(nodes)


class AdjacencySetProxy(MutableSet):
    """A node's predecessors (pred) or successors (succ), read from libcucore on every use; add, discard,
    clear and update add and remove the definition's edges (cucore_graph_node_add_dependent /
    remove_dependent)."""

    __slots__ = ("_node", "_forward")

    def __init__(self, node: GraphNode, is_fwd: bool) -> None:
        self._node = node
        self._forward = is_fwd

    @classmethod
    def _from_iterable(cls, it: Iterable[Any]) -> Set[Any]:
        return set(it)  # set operations (|, &, -) give plain sets

    def __contains__(self, x: object) -> bool:
        return isinstance(x, GraphNode) and x in self._node._neighbours(self._forward)

    def __iter__(self) -> Iterator[GraphNode]:
        return iter(self._node._neighbours(self._forward))

    def __len__(self) -> int:
        return len(self._node._neighbours(self._forward))

    def add(self, value: GraphNode) -> None:
        """Add the edge to (succ) or from (pred) `value`; nothing if it exists."""
        if value not in self:
            self._node._edge(value, self._forward, True)

    def discard(self, value: GraphNode) -> None:
        """Remove the edge to (succ) or from (pred) `value`; nothing if there is none."""
        if isinstance(value, GraphNode) and value in self:
            self._node._edge(value, self._forward, False)

    def clear(self) -> None:
        """Remove every edge of this side."""
        for n in list(self):
            self._node._edge(n, self._forward, False)

    def update(self, *others: Iterable[GraphNode]) -> None:
        """Add the edges to (succ) or from (pred) every node of the iterables."""
        current = set(self)
        for it in others:
            for n in it:
                if n not in current:
                    self._node._edge(n, self._forward, True)
                    current.add(n)

    def __ior__(self, it: Any) -> AdjacencySetProxy:  # type: ignore[misc]
        self.update(it)
        return self

    def __isub__(self, it: Any) -> AdjacencySetProxy:  # type: ignore[misc]
        for n in list(it):
            self.discard(n)
        return self

    def __repr__(self) -> str:
        return f"{'succ' if self._forward else 'pred'}({set(self)!r})"


class EmptyNode(GraphNode):
    """A node that does nothing (a join point)."""

    __slots__ = ()


class KernelNode(GraphNode):
    """A kernel node: `grid`, `block`, `shmem_size`, `kernel` and `config` are read from libcucore;
    set_kernel changes the definition's node (Graph.set_kernel_node a graph's)."""

    __slots__ = ()

    def _read(self) -> Tuple[Any, Optional[Kernel]]:
        c = LaunchConfigC()
        c.struct_size = ctypes.sizeof(c)
        k = _c_void_p()
        st = _cucore_graph_node_kernel_config(self._check_open(), ctypes.byref(c), k)
        if st:
            raise_error(st, self)
        kernel = self._params().get("kernel")
        if k.value:
            if kernel is not None and kernel._h is not None:
                _fast_kernel_release(_handle_arg(k.value))
            else:
                kernel = Kernel._wrap(k.value, None)
        return c, kernel

    @property
    def grid(self) -> Tuple[int, int, int]:
        """The grid dimensions (blocks; clusters with a cluster configuration)."""
        return tuple(self._read()[0].grid)

    @property
    def block(self) -> Tuple[int, int, int]:
        """The block dimensions (threads)."""
        return tuple(self._read()[0].block)

    @property
    def shmem_size(self) -> int:
        """Dynamic shared memory per block, in bytes."""
        return self._read()[0].shared_memory_bytes

    @property
    def kernel(self) -> Optional[Kernel]:
        """The Kernel the node launches (None for a node of foreign code)."""
        return self._read()[1]

    @property
    def config(self) -> LaunchConfig:
        """A LaunchConfig made from the node's configuration (the cluster where the driver reports it)."""
        c = self._read()[0]
        cluster = tuple(c.cluster) if any(v > 1 for v in c.cluster) else None
        return LaunchConfig(grid=tuple(c.grid), cluster=cluster, block=tuple(c.block),
                            shmem_size=c.shared_memory_bytes, is_cooperative=bool(c.flags & COOPERATIVE),
                            programmatic_stream_serialization=bool(c.flags & PROGRAMMATIC_STREAM_SERIALIZATION),
                            priority=c.priority if c.flags & PRIORITY else None)

    def _resolved(self, config: Optional[LaunchConfig], kernel: Optional[Kernel]) -> Tuple[Any, Kernel]:
        """(the configuration to pass, the kernel the arguments are packed for) of set_kernel's arguments:
        None keeps the node's."""
        if config is None:
            config = self.config
        if kernel is None:
            kernel = self.kernel
            if kernel is None:
                raise ValueError("the node's kernel is not known to libcucore: pass the kernel")
        return _check_config(config), _check_kernel(kernel)

    def set_kernel(self, config: Optional[LaunchConfig], kernel: Optional[Kernel], *args: Any) -> None:
        """Replace the node's configuration (None: keep it), kernel (None: keep it) and arguments (packed as
        launch() packs them; none given: the kernel takes none) in the definition. Graphs made from it change
        with Graph.update. update() is cuda.core's form of it."""
        cref, k = self._resolved(config, kernel)
        p = _packed(k, args)
        ptrs, sizes, n = _kernel_args(p)
        st = _cucore_graph_node_set_kernel(self._check_open(), cref, None if kernel is None else k._h, ptrs, sizes, n)
        if st:
            raise_error(st, self, k)
        self._graph._info[self._key] = (KernelNode, dict(self._params(), kernel=k, args=args))

    def update(self, *, config: Optional[LaunchConfig] = None, kernel: Optional[Kernel] = None,
               args: Optional[Iterable[Any]] = None) -> None:
        """Replace selected launch parameters of the node in the definition (cuda.core's): omitted ones keep
        their values. Changing `kernel` requires `args` (the whole sequence; `args=()` for a kernel without
        parameters). Clustered and cooperative configurations and nodes are NotImplementedError, as cuda.core.
        Omitting `args` needs the node's arguments, which cucore knows for nodes added with launch() here
        (ValueError for a captured node: pass them). Graphs made from the definition change with
        Graph.update."""
        self._check_live()
        if kernel is not None and args is None:
            raise ValueError("changing kernel requires args (args=() for a kernel without parameters)")
        _check_config(config)  # TypeError for anything but a LaunchConfig (or None)
        if config is not None and (config.cluster is not None or config.cooperative_launch):
            raise NotImplementedError("updating clustered or cooperative kernel nodes is not supported")
        c = self._read()[0]
        if any(v > 1 for v in c.cluster) or c.flags & COOPERATIVE:
            raise NotImplementedError("updating clustered or cooperative kernel nodes is not supported")
        if args is None:
            known = self._params().get("args")
            if known is None:
                raise ValueError("the node's kernel arguments are not known to cucore (it did not add the node): "
                                 "pass args")
            args = known
        self.set_kernel(config, kernel, *args)


class AllocNode(GraphNode):
    """An allocation node: `dptr` (the memory's address in every launch), `bytesize` and
    `device_id` from libcucore; `memory_type` and `peer_access` as it was made."""

    __slots__ = ()

    def _info_pair(self) -> Tuple[int, int]:
        address, size = ctypes.c_uint64(), ctypes.c_uint64()
        st = _cucore_graph_node_alloc_info(self._check_open(), address, size)
        if st:
            raise_error(st, self)
        return address.value, size.value

    @property
    def dptr(self) -> int:
        """The address of the memory (the same in every launch)."""
        return self._info_pair()[0]

    @property
    def bytesize(self) -> int:
        """The number of bytes allocated."""
        return self._info_pair()[1]

    @property
    def device_id(self) -> int:
        """The ordinal of the graph's device (libcucore allocates on the definition's device)."""
        return self._graph.device.device_id

    @property
    def memory_type(self) -> GraphMemoryType:
        """Where the memory lives ("device" unless the node was made here with "host")."""
        return self._params().get("memory_type", GraphMemoryType.DEVICE)

    @property
    def peer_access(self) -> Tuple[int, ...]:
        """The other devices given read-write access (as the node was made here; () otherwise)."""
        return self._params().get("peer_access", ())


class FreeNode(GraphNode):
    """A node freeing graph memory: `dptr` (None for a node this binding did not add)."""

    __slots__ = ()

    @property
    def dptr(self) -> Optional[int]:
        """The address freed."""
        return self._params().get("dptr")


class MemsetNode(GraphNode):
    """A fill node: `dptr`, `value`, `element_size`, `width`, `height`, `pitch` as made or last set here (None
    for a node this binding did not add); set_memset changes the definition's node."""

    __slots__ = ()

    dptr = property(lambda self: self._params().get("dptr"), doc="The destination address.")
    value = property(lambda self: self._params().get("value"), doc="The fill value.")
    element_size = property(lambda self: self._params().get("element_size"), doc="Bytes per element (1, 2, 4).")
    width = property(lambda self: self._params().get("width"), doc="Elements per row.")
    height = property(lambda self: self._params().get("height"), doc="Rows.")
    pitch = property(lambda self: self._params().get("pitch"), doc="Bytes between rows (0: tightly).")

    def set_memset(self, dst: Union[Buffer, int], value: Any, width: int, height: int = 1, pitch: int = 0, *,
                   dst_owner: Any = None) -> None:
        """Replace the node's fill in the definition, with memset()'s arguments (update() is cuda.core's form,
        keeping what it is not given)."""
        val, element_size = _fill_value(value)
        width, height, pitch = _u64(width, "width"), _u64(height, "height"), _u64(pitch, "pitch")
        buf = _operand(dst, dst_owner, "dst", _memset_extent(width, height, pitch, element_size), self._graph)
        st = _cucore_graph_node_set_memset(self._check_open(), buf._h, 0, val, element_size, width, height, pitch)
        if st:
            raise_error(st, self, buf)
        self._graph._info[self._key] = (MemsetNode, {"dptr": buf.handle, "value": val, "element_size": element_size,
                                                     "width": width, "height": height, "pitch": pitch,
                                                     "dst_operand": (dst, dst_owner)})

    def update(self, *, dst: Union[Buffer, int, None] = None, value: Any = None, width: Optional[int] = None,
               height: Optional[int] = None, pitch: Optional[int] = None, dst_owner: Any = None) -> None:
        """Replace selected fill parameters of the node in the definition (cuda.core's): omitted ones keep their
        values; `dst_owner` only with a raw-address `dst`. Keeping a value needs it known: cucore knows the
        parameters of nodes added with memset() here (ValueError for a captured node: pass them all)."""
        self._check_live()
        if dst_owner is not None and dst is None:
            raise ValueError("dst_owner requires dst")
        p = self._params()
        if dst is None:
            dst, dst_owner = p.get("dst_operand", (None, None))
        if value is None and p.get("value") is not None:
            size = p["element_size"]  # the pattern as laid out in memory, as memset() took it
            value = p["value"] if size == 1 else p["value"].to_bytes(size, sys.byteorder)
        width = p.get("width") if width is None else width
        height = p.get("height") if height is None else height
        pitch = p.get("pitch") if pitch is None else pitch
        missing = [n for n, v in (("dst", dst), ("value", value), ("width", width)) if v is None]
        if missing:
            raise ValueError(f"the node's {', '.join(missing)} are not known to cucore (it did not add the node): "
                             f"pass them")
        self.set_memset(cast(Union[Buffer, int], dst), value, cast(int, width), 1 if height is None else height,
                        0 if pitch is None else pitch, dst_owner=dst_owner)


class MemcpyNode(GraphNode):
    """A copy node: `dst`, `src` (addresses) and `size` as made or last set here (None for a node this binding
    did not add, and `size` for a 3D copy); set_memcpy changes the definition's node."""

    __slots__ = ()

    dst = property(lambda self: self._params().get("dst"), doc="The destination address.")
    src = property(lambda self: self._params().get("src"), doc="The source address.")
    size = property(lambda self: self._params().get("size"), doc="The number of bytes copied.")

    def set_memcpy(self, dst: Union[Buffer, int], src: Union[Buffer, int], size: int, *, dst_owner: Any = None,
                   src_owner: Any = None) -> None:
        """Replace the node's copy in the definition, with memcpy()'s arguments (update() is cuda.core's form,
        keeping what it is not given)."""
        size = _u64(size, "size")
        dbuf = _operand(dst, dst_owner, "dst", size, self._graph)
        sbuf = _operand(src, src_owner, "src", size, self._graph)
        st = _cucore_graph_node_set_memcpy(self._check_open(), dbuf._h, 0, sbuf._h, 0, size)
        if st:
            raise_error(st, self, dbuf, sbuf)
        self._graph._info[self._key] = (MemcpyNode, {"dst": dbuf.handle, "src": sbuf.handle, "size": size,
                                                     "dst_operand": (dst, dst_owner),
                                                     "src_operand": (src, src_owner)})

    def update(self, *, dst: Union[Buffer, int, None] = None, src: Union[Buffer, int, None] = None,
               size: Optional[int] = None, dst_owner: Any = None, src_owner: Any = None) -> None:
        """Replace selected copy parameters of the node in the definition (cuda.core's): omitted ones keep
        their values; an owner only with its raw address. A 3D copy node (memcpy_3d) is NotImplementedError,
        as cuda.core's multidimensional ones. Keeping a value needs it known: cucore knows the parameters of
        nodes added with memcpy() here (ValueError for a captured node: pass them all)."""
        self._check_live()
        if dst_owner is not None and dst is None:
            raise ValueError("dst_owner requires dst")
        if src_owner is not None and src is None:
            raise ValueError("src_owner requires src")
        p = self._params()
        if "extent" in p:
            raise NotImplementedError("updating multidimensional, pitched, offset, or array-backed memcpy nodes "
                                      "is not supported")
        if dst is None:
            dst, dst_owner = p.get("dst_operand", (None, None))
        if src is None:
            src, src_owner = p.get("src_operand", (None, None))
        size = p.get("size") if size is None else size
        missing = [n for n, v in (("dst", dst), ("src", src), ("size", size)) if v is None]
        if missing:
            raise ValueError(f"the node's {', '.join(missing)} are not known to cucore (it did not add the node): "
                             f"pass them")
        self.set_memcpy(cast(Union[Buffer, int], dst), cast(Union[Buffer, int], src), cast(int, size),
                        dst_owner=dst_owner, src_owner=src_owner)


class ChildGraphNode(GraphNode):
    """A node running a child graph: `child_graph`, the node's own copy (changes to it change this node);
    update(child) replaces it with a copy of another graph."""

    __slots__ = ()

    @property
    def child_graph(self) -> GraphDefinition:
        """The embedded graph (a GraphDefinition belonging to this node)."""
        return _bodies(self)[0]

    def update(self, child: GraphDefinition) -> None:
        """Replace the embedded graph with a copy of `child` (taken now; any topology), as cuda.core's
        ChildGraphNode.update. `child` must belong to an independent graph hierarchy: this node's own
        definition or child graph is InvalidArgumentError (a ValueError). The old embedded graph goes with the
        update: a `child_graph` read before (and its nodes) is InvalidStateError (a RuntimeError) afterwards. Graphs instantiated before keep running
        the old one."""
        h = self._check_live()
        if not isinstance(child, GraphDefinition):
            raise TypeError(f"child must be a GraphDefinition, not {type(child).__name__}")
        st = _cucore_graph_node_set_child_graph(h, child._check_open())
        if st:
            raise_error(st, self, child)


def _set_event(node: GraphNode, event: Event) -> None:
    """The definition's event record or wait node `node` records (waits for) `event` from now on."""
    h = node._check_live()
    if not isinstance(event, Event):
        raise TypeError(f"event must be an Event, not {type(event).__name__}")
    st = _cucore_graph_node_set_event(h, event._h)
    if st:
        raise_error(st, node, event)
    node._graph._info[node._key] = (type(node), {"event": event})


class EventRecordNode(GraphNode):
    """A node recording `event`; update(event) replaces it."""

    __slots__ = ()

    @property
    def event(self) -> Optional[Event]:
        """The event recorded (None for a node this binding did not add)."""
        return self._params().get("event")

    def update(self, event: Event) -> None:
        """Replace the event recorded by this node (held by the definition from now on), as cuda.core's
        EventRecordNode.update. Graphs instantiated before keep recording the old one."""
        _set_event(self, event)


class EventWaitNode(GraphNode):
    """A node waiting for `event`; update(event) replaces it."""

    __slots__ = ()

    @property
    def event(self) -> Optional[Event]:
        """The event waited for (None for a node this binding did not add)."""
        return self._params().get("event")

    def update(self, event: Event) -> None:
        """Replace the event waited on by this node (held by the definition from now on), as cuda.core's
        EventWaitNode.update. Graphs instantiated before keep waiting for the old one."""
        _set_event(self, event)


class HostCallbackNode(GraphNode):
    """A host callback node: `callback`, the Python callable (None for a ctypes function pointer or a node this
    binding did not add); set_callback changes the definition's node."""

    __slots__ = ()

    @property
    def callback(self) -> Any:
        """The Python callable the node runs."""
        return self._params().get("callback")

    def update(self, fn: Any, *, user_data: Any = None) -> None:
        """Replace the node's function and user data in the definition (the callables callback() takes: a
        Python callable, or a ctypes CUhostFn with `user_data`). It must not call CUDA (nor cucore)."""
        h = self._check_live()
        c_fn, data, release = host_callback_args(fn, user_data)
        st = _cucore_graph_node_set_host_callback(h, c_fn, data, release)
        if st:
            raise_error(st, self)
        self._graph._info[self._key] = (HostCallbackNode, {"callback": None if _is_ctypes_function(fn) else fn})

    set_callback = update  # cucore's earlier name


def _bodies(node: GraphNode) -> Tuple[GraphDefinition, ...]:
    """A conditional node's bodies or a child graph node's graph, from libcucore."""
    h = node._check_open()
    count = _c_size_t()
    st = _cucore_graph_node_bodies(h, None, 0, count)
    if st:
        raise_error(st, node)
    n = count.value
    array = (_c_void_p * max(n, 1))()
    st = _cucore_graph_node_bodies(h, array, n, count)
    if st:
        raise_error(st, node)
    out = []
    try:
        for i in range(n):
            hv, array[i] = array[i], None  # its reference is the wrapper's (or released) from here
            out.append(GraphDefinition._from_owned(hv))
    finally:
        for i in range(n):
            if array[i]:
                _fast_graph_definition_release(_handle_arg(array[i]))
    return tuple(out)


class ConditionalNode(GraphNode):
    """A conditional node: `condition`, `cond_type` (as made here; None for a node this binding did not add)
    and `branches` (its body graphs, from libcucore). The adders give IfNode, IfElseNode, WhileNode, SwitchNode."""

    __slots__ = ()

    @property
    def condition(self) -> Optional[GraphCondition]:
        """The condition the node reads."""
        return self._params().get("condition")

    @property
    def cond_type(self) -> Optional[GraphConditionalType]:
        """GraphConditionalType.IF, WHILE or SWITCH."""
        return self._params().get("cond_type")

    @property
    def branches(self) -> Tuple[GraphDefinition, ...]:
        """The body graphs, in order (add their nodes with their adders)."""
        b = self._params().get("branches")
        return b if b is not None else _bodies(self)


class IfNode(ConditionalNode):
    """An if node: `then` runs when the condition is non-zero."""

    __slots__ = ()

    @property
    def then(self) -> GraphDefinition:
        """The body run when the condition is non-zero."""
        return self.branches[0]


class IfElseNode(ConditionalNode):
    """An if/else node: `then` runs when the condition is non-zero, `else_` when it is zero."""

    __slots__ = ()

    @property
    def then(self) -> GraphDefinition:
        """The body run when the condition is non-zero."""
        return self.branches[0]

    @property
    def else_(self) -> GraphDefinition:
        """The body run when the condition is zero."""
        return self.branches[1]


class WhileNode(ConditionalNode):
    """A while node: `body` runs again and again while the condition is non-zero."""

    __slots__ = ()

    @property
    def body(self) -> GraphDefinition:
        """The loop's body."""
        return self.branches[0]


class SwitchNode(ConditionalNode):
    """A switch node: branch n (of `branches`) runs when the condition is n."""

    __slots__ = ()


# cucore_graph_node_type_t -> the class a node of that kind gets when the binding did not make it
_NODE_CLASSES: Dict[int, type] = {
    _lib.C["CUCORE_GRAPH_NODE_EMPTY"]: EmptyNode, _lib.C["CUCORE_GRAPH_NODE_KERNEL"]: KernelNode,
    _lib.C["CUCORE_GRAPH_NODE_ALLOC"]: AllocNode, _lib.C["CUCORE_GRAPH_NODE_FREE"]: FreeNode,
    _lib.C["CUCORE_GRAPH_NODE_MEMSET"]: MemsetNode, _lib.C["CUCORE_GRAPH_NODE_MEMCPY"]: MemcpyNode,
    _lib.C["CUCORE_GRAPH_NODE_CHILD_GRAPH"]: ChildGraphNode, _lib.C["CUCORE_GRAPH_NODE_EVENT_RECORD"]: EventRecordNode,
    _lib.C["CUCORE_GRAPH_NODE_EVENT_WAIT"]: EventWaitNode, _lib.C["CUCORE_GRAPH_NODE_HOST_CALLBACK"]: HostCallbackNode,
    _lib.C["CUCORE_GRAPH_NODE_CONDITIONAL"]: ConditionalNode,
}


def _public_names() -> None:
    """The node classes say `cucore.graph` in reprs and tracebacks (the module that exports them; pickle finds
    them there); `_cucore_module` keeps this module, where _lib rebinds their C functions."""
    for obj in (GraphNode, AdjacencySetProxy, EmptyNode, KernelNode, AllocNode, FreeNode, MemsetNode, MemcpyNode,
                ChildGraphNode, EventRecordNode, EventWaitNode, HostCallbackNode, ConditionalNode, IfNode,
                IfElseNode, WhileNode, SwitchNode):
        setattr(obj, "_cucore_module", obj.__module__)
        obj.__module__ = "cucore.graph"


_public_names()

# graph.py's adders and listings make nodes of these classes; graph.py is below this module.
_lib.hand_down("graph", GraphNode=GraphNode, AdjacencySetProxy=AdjacencySetProxy, EmptyNode=EmptyNode,
               KernelNode=KernelNode, AllocNode=AllocNode, FreeNode=FreeNode, MemsetNode=MemsetNode,
               MemcpyNode=MemcpyNode, ChildGraphNode=ChildGraphNode, EventRecordNode=EventRecordNode,
               EventWaitNode=EventWaitNode, HostCallbackNode=HostCallbackNode, ConditionalNode=ConditionalNode,
               IfNode=IfNode, IfElseNode=IfElseNode, WhileNode=WhileNode, SwitchNode=SwitchNode,
               _NODE_CLASSES=_NODE_CLASSES)
