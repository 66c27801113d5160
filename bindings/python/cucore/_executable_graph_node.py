"""Views of a node in an executable graph (cucore.graph's ExecutableGraphNode and its typed classes), as
cuda.core's: `graph[node]` pairs a Graph with a node of the definition it was instantiated from (or updated
from), and `update(...)`, `enable()`, `disable()` change that node in the graph alone, for its future launches;
the definition is not changed. include/cucore/graph.h: cucore_graph_set_*_node, cucore_graph_set_node_enabled.

A view holds its graph and node and nothing else: the Graph's per-node methods (set_kernel_node, ...,
set_node_enabled) do the work, so there is one implementation; the event and child graph views, which Graph has
no methods for, call libcucore here. As in cuda.core, a view is made without asking
the driver: libcucore checks that the node belongs to the graph when an operation runs (InvalidArgumentError
for a node of another definition).

The layer above _graph_node.py (bindings/python/README.md, "Layers"): graph.py gets `_executable_view` and the
classes handed down (Graph.__getitem__ makes the views; cucore.graph exports the classes).
"""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Type, Union, cast

from . import _lib
from ._graph_node import (ChildGraphNode, EventRecordNode, EventWaitNode, GraphNode, HostCallbackNode, KernelNode,
                          MemcpyNode, MemsetNode)
from .buffer import Buffer
from .common import closed_error, raise_error
from .event import Event
from .graph import Graph, GraphDefinition
from .kernel import Kernel
from .launch import LaunchConfig

(_cucore_graph_set_event_node, _cucore_graph_set_child_graph_node) = _lib.bind(
    globals(), "cucore_graph_set_event_node", "cucore_graph_set_child_graph_node")
_new = object.__new__


class ExecutableGraphNode:
    """A view pairing an executable Graph with a node of the definition it was made from: `graph[node]`
    makes one of the typed classes (ExecutableKernelNode, ...), whose methods change the node in that graph
    alone, for its future launches. libcucore checks that the node is the graph's when an operation runs."""

    __slots__ = ("_graph", "_node")
    _graph: Graph
    _node: GraphNode

    def __new__(cls, *args: Any, **kwargs: Any) -> ExecutableGraphNode:
        raise RuntimeError("directly constructing an executable graph node is not supported: use graph[node]")

    @classmethod
    def _of(cls, graph: Graph, node: GraphNode) -> ExecutableGraphNode:
        v = _new(cls)
        v._graph = graph
        v._node = node
        return v

    @property
    def graph(self) -> Graph:
        """The executable Graph (beyond cuda.core)."""
        return self._graph

    @property
    def node(self) -> GraphNode:
        """The definition's node this view names (beyond cuda.core)."""
        return self._node

    def _open(self) -> Graph:
        g = self._graph
        if g._h is None:
            raise closed_error(g)
        return g

    def __repr__(self) -> str:
        g = "closed" if self._graph._h is None else f"0x{self._graph.handle:x}"
        node = "destroyed" if self._node.handle is None else f"0x{self._node.handle:x}"
        return f"<{type(self).__name__} graph={g} node={node}>"


class _Switchable(ExecutableGraphNode):
    """The kinds the driver can enable and disable in an executable graph (kernel, memcpy, memset)."""

    __slots__ = ()

    @property
    def is_enabled(self) -> bool:
        """Whether this node is enabled in the executable graph (a disabled node does nothing when the graph
        runs; its dependencies still hold)."""
        return self._open().is_node_enabled(self._node)

    def enable(self) -> None:
        """Enable this node in the executable graph."""
        self._open().set_node_enabled(self._node, True)

    def disable(self) -> None:
        """Disable this node in the executable graph."""
        self._open().set_node_enabled(self._node, False)


class ExecutableKernelNode(_Switchable):
    """A kernel node of an executable graph: update(config=, kernel=, args=) replaces every launch parameter;
    is_enabled, enable(), disable()."""

    __slots__ = ()

    def update(self, *, config: LaunchConfig, kernel: Kernel, args: Iterable[Any]) -> None:
        """Replace all launch parameters for future launches: `args` is the whole argument sequence (`args=()`
        for a kernel without parameters), packed as launch() packs them. Clustered and cooperative
        configurations are NotImplementedError, as cuda.core. Beyond cuda.core, None for `config` takes the
        definition's node's and None for `kernel` keeps the graph's."""
        if not isinstance(config, (LaunchConfig, type(None))):
            raise TypeError(f"config must be a LaunchConfig, not {type(config).__name__}")
        if config is not None and (config.cluster is not None or config.cooperative_launch):
            raise NotImplementedError("updating clustered or cooperative kernel nodes is not supported")
        self._open().set_kernel_node(cast(KernelNode, self._node), config, kernel, *args)


class ExecutableMemcpyNode(_Switchable):
    """A copy node of an executable graph: update(dst=, src=, size=); is_enabled, enable(), disable()."""

    __slots__ = ()

    def update(self, *, dst: Union[Buffer, int], src: Union[Buffer, int], size: int) -> None:
        """Replace all copy parameters for future launches: `size` bytes from `src` to `dst` (each a Buffer,
        or a device or page-locked host address the caller keeps valid while the graph runs)."""
        self._open().set_memcpy_node(cast(MemcpyNode, self._node), dst, src, size)


class ExecutableMemsetNode(_Switchable):
    """A fill node of an executable graph: update(dst=, value=, width=, height=, pitch=); is_enabled,
    enable(), disable()."""

    __slots__ = ()

    def update(self, *, dst: Union[Buffer, int], value: Any, width: int, height: int = 1, pitch: int = 0) -> None:
        """Replace all fill parameters for future launches (memset()'s: `value` an int for one byte, or a
        bytes-like object of 1, 2 or 4 bytes; `height` rows of `width` elements, `pitch` bytes apart)."""
        self._open().set_memset_node(cast(MemsetNode, self._node), dst, value, width, height, pitch)


class ExecutableHostCallbackNode(ExecutableGraphNode):
    """A host callback node of an executable graph: update(fn, user_data=)."""

    __slots__ = ()

    def update(self, fn: Any, *, user_data: Any = None) -> None:
        """Replace the callback and its user data for future launches (a Python callable, or a ctypes CUhostFn
        with `user_data`). It must not call CUDA (nor cucore)."""
        self._open().set_callback_node(cast(HostCallbackNode, self._node), fn, user_data=user_data)


class ExecutableChildGraphNode(ExecutableGraphNode):
    """A child graph node of an executable graph: update(child)."""

    __slots__ = ()

    def update(self, child: GraphDefinition) -> None:
        """Replace the embedded graph's parameters for future launches with those of `child`, which must have the
        topology of the node's graph (nodes added in the same order); the driver refuses another (CUDAError).
        The graph holds what `child` uses from now on."""
        g = self._open()
        h = self._node._check_live()
        if not isinstance(child, GraphDefinition):
            raise TypeError(f"child must be a GraphDefinition, not {type(child).__name__}")
        st = _cucore_graph_set_child_graph_node(g._h, h, child._check_open())
        if st:
            raise_error(st, g, self._node, child)


def _set_event_node(view: ExecutableGraphNode, event: Event) -> None:
    """The view's node records (waits for) `event` in the graph's future launches."""
    g = view._open()
    h = view._node._check_live()
    if not isinstance(event, Event):
        raise TypeError(f"event must be an Event, not {type(event).__name__}")
    st = _cucore_graph_set_event_node(g._h, h, event._h)
    if st:
        raise_error(st, g, view._node, event)


class ExecutableEventRecordNode(ExecutableGraphNode):
    """An event record node of an executable graph: update(event)."""

    __slots__ = ()

    def update(self, event: Event) -> None:
        """Replace the event recorded by future launches (held by the graph from now on)."""
        _set_event_node(self, event)


class ExecutableEventWaitNode(ExecutableGraphNode):
    """An event wait node of an executable graph: update(event)."""

    __slots__ = ()

    def update(self, event: Event) -> None:
        """Replace the event waited on by future launches (held by the graph from now on)."""
        _set_event_node(self, event)


# The view class of each node class; a node of any other kind has none (TypeError, as cuda.core).
_VIEWS: Dict[type, Type[ExecutableGraphNode]] = {
    KernelNode: ExecutableKernelNode, MemcpyNode: ExecutableMemcpyNode, MemsetNode: ExecutableMemsetNode,
    HostCallbackNode: ExecutableHostCallbackNode, ChildGraphNode: ExecutableChildGraphNode,
    EventRecordNode: ExecutableEventRecordNode, EventWaitNode: ExecutableEventWaitNode,
}


def _executable_view(graph: Graph, node: Any) -> ExecutableGraphNode:
    """Graph.__getitem__: the view of `node` in `graph`."""
    if not isinstance(node, GraphNode):
        raise TypeError(f"an executable graph is indexed by a GraphNode, not {type(node).__name__}")
    if graph._h is None:
        raise closed_error(graph)
    node._check_live()  # a destroyed node: InvalidStateError (a RuntimeError), as cuda.core
    view: Optional[Type[ExecutableGraphNode]] = None
    for cls in type(node).__mro__:
        view = _VIEWS.get(cls)
        if view is not None:
            break
    if view is None:
        raise TypeError(f"{type(node).__name__} does not support executable updates")
    return view._of(graph, node)


def _public_names() -> None:
    """The classes say `cucore.graph` in reprs and tracebacks (the module that exports them);
    `_cucore_module` keeps this module."""
    for obj in (ExecutableGraphNode, ExecutableKernelNode, ExecutableMemcpyNode, ExecutableMemsetNode,
                ExecutableHostCallbackNode, ExecutableChildGraphNode, ExecutableEventRecordNode,
                ExecutableEventWaitNode):
        setattr(obj, "_cucore_module", obj.__module__)
        obj.__module__ = "cucore.graph"


_public_names()

# Graph.__getitem__ makes the views; cucore.graph exports the classes. graph.py is below this module.
_lib.hand_down("graph", _executable_view=_executable_view, ExecutableGraphNode=ExecutableGraphNode,
               ExecutableKernelNode=ExecutableKernelNode, ExecutableMemcpyNode=ExecutableMemcpyNode,
               ExecutableMemsetNode=ExecutableMemsetNode, ExecutableHostCallbackNode=ExecutableHostCallbackNode,
               ExecutableChildGraphNode=ExecutableChildGraphNode, ExecutableEventRecordNode=ExecutableEventRecordNode,
               ExecutableEventWaitNode=ExecutableEventWaitNode)
