"""Graph builders: graphs made by capturing the work enqueued on a stream (include/cucore/graph_builder.h;
cuda.core's GraphBuilder, exported by `cucore.graph`), and the host callbacks of graphs.

    gb = dev.create_graph_builder().begin_building()
    cucore.launch(gb, config, kernel, buf, n)           # a GraphBuilder is taken wherever a stream is
    buf.copy_to(out, stream=gb)
    left, right = gb.split(2)                           # forked branches, joined back before the end
    cucore.launch(right, config, other, buf2)
    gb = cucore.graph.GraphBuilder.join(left, right)
    gb.callback(lambda: print("done"))                  # a host node: a Python callable, run on each launch
    graph = gb.end_building().complete()
    graph.launch(stream)

Everything libcucore enqueues on the builder's stream between begin_building and end_building (kernel launches,
copies and fills, 3D and array copies, event records and waits, allocations of a GraphMemoryResource or a pool)
becomes a node instead of running, and the objects that work uses are held by the graph. Calls that cannot be
captured raise InvalidStateError naming the call (a synchronize leaves the capture going). Conditional bodies
(if_then, if_else, while_loop, switch) are builders that are already capturing into their body: enqueue the
body's work on them and end_building() each before the parent (begin_building() on them is accepted and does
nothing, as cuda.core's bodies need it).

Host callbacks: a Python callable is kept in a registry until libcucore says the graphs no longer need it
(the release function of the C API), and runs on a driver thread under the GIL on each launch; an exception it
raises goes to sys.unraisablehook and never reaches the driver. A ctypes function pointer (CFUNCTYPE(None,
c_void_p)) is called by the driver directly with `user_data` (an int, or a bytes-like object copied and kept
with the graph); the caller keeps the function pointer itself alive.

Below graph.py in the layers (bindings/python/README.md, "Layers"): Graph and GraphDefinition (what complete()
and graph_definition give) are handed down from there.
"""
from __future__ import annotations

import ctypes
import functools
import itertools
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Tuple, Union

from . import _lib
from ._graph_options import (CAPTURE_MODES, CONDITIONAL_VALUES, GraphCompleteOptions, GraphCondition,
                             GraphDebugPrintOptions, check_condition, complete_options_struct, condition_args,
                             dot_flags, dot_path)
from ._handle import HandleObject
from .common import InvalidStateError, Status, closed_error, raise_error, report_unraisable
from .device import Device
from .stream import Stream, _get_ident, _pin_thread_state, _pinned_threads
from .typing import GraphConditionalType

if TYPE_CHECKING:  # for type checkers only: at run time graph.py hands these down (else:)
    from .graph import Graph, GraphDefinition
else:
    Graph = GraphDefinition = None  # graph.py: GraphBuilder.complete, GraphBuilder.graph_definition

(_cucore_graph_builder_create, _cucore_graph_builder_create_on_device, _cucore_graph_builder_retain,
 _cucore_graph_builder_stream, _cucore_graph_builder_begin_building, _cucore_graph_builder_end_building,
 _cucore_graph_builder_is_building, _cucore_graph_builder_definition, _cucore_graph_builder_complete,
 _cucore_graph_builder_debug_dot_print, _cucore_graph_builder_split, _cucore_graph_builder_join,
 _cucore_graph_builder_create_condition, _cucore_graph_builder_add_conditional, _cucore_graph_builder_embed,
 _cucore_graph_builder_callback, _cucore_graph_builder_release, _cucore_stream_retain,
 _cucore_stream_capture_status) = _lib.bind(
    globals(), "cucore_graph_builder_create", "cucore_graph_builder_create_on_device",
    "cucore_graph_builder_retain", "cucore_graph_builder_stream", "cucore_graph_builder_begin_building",
    "cucore_graph_builder_end_building", "cucore_graph_builder_is_building", "cucore_graph_builder_definition",
    "cucore_graph_builder_complete", "cucore_graph_builder_debug_dot_print", "cucore_graph_builder_split",
    "cucore_graph_builder_join", "cucore_graph_builder_create_condition", "cucore_graph_builder_add_conditional",
    "cucore_graph_builder_embed", "cucore_graph_builder_callback", "cucore_graph_builder_release",
    "cucore_stream_retain", "cucore_stream_capture_status")
(_fast_graph_builder_release,) = _lib.bind_unchecked(globals(), "cucore_graph_builder_release")

_c_void_p = ctypes.c_void_p
_c_int = ctypes.c_int
_new = object.__new__
_handle_arg = _lib.handle_arg
CAPTURE_STATUS_INVALIDATED = _lib.C["CUCORE_CAPTURE_STATUS_INVALIDATED"]

# The three kinds of builders (cuda.core's): PRIMARY made from a device or a stream; FORKED by split(), to be
# joined back; BODY by the conditional methods, capturing into a body graph of a conditional node.
PRIMARY, FORKED, BODY = "primary", "forked", "body"


# ---- host callbacks: Python callables kept until libcucore releases them ---------------------------------------

_callbacks: Dict[int, Any] = {}  # user_data key -> the callable (or, for ctypes functions, what keeps their data)
_next_key = itertools.count(1).__next__


def _run_callback(key):
    # Runs on a driver thread (ctypes takes the GIL); the callable stays registered: a graph runs it on every
    # launch, and libcucore says when the last graph is gone (_release_callback).
    tid = _get_ident()
    if tid not in _pinned_threads:
        _pin_thread_state(tid)
    fn = _callbacks.get(key)
    if fn is None:
        return
    try:
        fn()
    except BaseException as e:  # never let an exception cross into the driver's thread
        report_unraisable(e, "Exception ignored in a host callback of a cucore graph", fn)


def _release_callback(key):
    # libcucore's release function: once, when no definition, clone or graph needs the callback any more
    # (also when the call that was to add it failed). May run on a library thread, or at exit.
    try:
        _callbacks.pop(key, None)
    except BaseException:
        pass


_RUN_CB = _lib.HostFn(_run_callback)
_RELEASE_CB = _lib.ReleaseFn(_release_callback)


def _is_ctypes_function(fn):
    return isinstance(fn, ctypes._CFuncPtr)  # noqa: SLF001 (the base class of every ctypes function pointer)


def host_callback_args(fn: Any, user_data: Any) -> Tuple[Any, Any, Any]:
    """(C function, user_data, release function) for a host callback: `fn` a Python callable taking no
    arguments (registered until released) or a ctypes function pointer of the driver's CUhostFn prototype
    (`user_data` an int passed as the pointer, a bytes-like object copied and kept with the graph, or None).
    TypeError or ValueError (cuda.core's) for anything else."""
    if _is_ctypes_function(fn):
        if fn.restype is not None or tuple(fn.argtypes or ()) != (ctypes.c_void_p,):
            raise TypeError(f"a ctypes host callback must have the driver's CUhostFn prototype "
                            f"ctypes.CFUNCTYPE(None, ctypes.c_void_p); this one returns {fn.restype} and takes "
                            f"{fn.argtypes}")
        if user_data is None or (isinstance(user_data, int) and not isinstance(user_data, bool)):
            return fn, user_data, None  # the caller keeps `fn` (and what user_data points at) alive
        try:
            data = ctypes.create_string_buffer(bytes(memoryview(user_data)))
        except TypeError:
            raise TypeError(f"user_data must be an int, a bytes-like object or None, not "
                            f"{type(user_data).__name__}") from None
        key = ctypes.addressof(data)  # unique while `data` lives: the registry keeps it until released
        _callbacks[key] = (fn, data)
        return fn, key, _RELEASE_CB
    if not callable(fn):
        raise TypeError(f"a host callback must be callable (or a ctypes function pointer), not {type(fn).__name__}")
    if user_data is not None:
        raise ValueError("user_data is only for ctypes function pointers: bind a Python callable's state with a "
                         "closure or functools.partial")
    key = _next_key()
    _callbacks[key] = fn
    return _RUN_CB, key, _RELEASE_CB


def callback_count() -> int:
    """How many host callbacks graphs hold now (for leak tests)."""
    return len(_callbacks)


# ---- the builder's stream -------------------------------------------------------------------------------------

class _BuilderStream(Stream):
    """A GraphBuilder's stream: a Stream whose launch_host_func, while the builder captures, adds a host node
    that runs on every launch of the graph (a plain Stream's host function runs once and is then forgotten)."""

    __slots__ = ("_builder",)
    _builder: Any

    @classmethod
    def _wrap_for(cls, hv: Any, builder: GraphBuilder) -> _BuilderStream:
        s = _new(cls)
        s._h = _handle_arg(hv)
        s._hv = hv
        s._raw = None
        s._builder = builder
        return s

    def launch_host_func(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> None:
        """As Stream.launch_host_func; while the builder captures, a host callback node of its graph."""
        b = self._builder
        if b is not None and b._h is not None and b.is_building:
            if not callable(fn):
                raise TypeError(f"launch_host_func() needs a callable, not {type(fn).__name__}")
            b.callback(functools.partial(fn, *args, **kwargs) if args or kwargs else fn)
            return
        super().launch_host_func(fn, *args, **kwargs)


# ---- GraphBuilder ---------------------------------------------------------------------------------------------

class GraphBuilder(HandleObject):
    """A graph under construction by stream capture (cuda.core's GraphBuilder). Make one with
    Device.create_graph_builder() or Stream.create_graph_builder(); it speaks __cuda_stream__ and is taken
    wherever a stream is (launch, copies, allocations), which then capture into its graph."""

    __slots__ = ("_stream", "_builder_kind", "_began")
    _stream: Any
    _builder_kind: str
    _began: bool
    _release = staticmethod(_fast_graph_builder_release)

    def __new__(cls, *args: Any, **kwargs: Any) -> GraphBuilder:
        # NotImplementedError, as cuda.core's GraphBuilder()
        raise NotImplementedError("GraphBuilder cannot be instantiated directly: use Device.create_graph_builder() "
                                  "or Stream.create_graph_builder()")

    @classmethod
    def _wrap(cls, hv: Any, kind: str) -> GraphBuilder:
        """A new wrapper owning the +1 reference `hv` (an int), with the builder's stream."""
        b = _new(cls)
        b._h = _handle_arg(hv)
        b._raw = None
        b._builder_kind = kind
        b._began = kind == FORKED  # forked builders capture from the start; bodies too, but accept one begin
        b._stream = None
        out = _c_void_p()
        st = _cucore_graph_builder_stream(b._h, out)
        if st:
            raise_error(st, b)
        b._stream = _BuilderStream._wrap_for(out.value, b)
        return b

    @classmethod
    def _create(cls, stream: Stream) -> GraphBuilder:
        if stream._h is None:
            raise closed_error(stream)
        out = _c_void_p()
        st = _cucore_graph_builder_create(stream._h, out)
        if st:
            raise_error(st, stream)
        return cls._wrap(out.value, PRIMARY)

    @classmethod
    def _create_on_device(cls, device: Device) -> GraphBuilder:
        out = _c_void_p()
        st = _cucore_graph_builder_create_on_device(device._h, out)
        if st:
            raise_error(st, device)
        return cls._wrap(out.value, PRIMARY)

    def _check_open(self) -> Any:
        h = self._h
        if h is None:
            raise closed_error(self)
        return h

    def _new_stream_reference(self) -> Stream:
        """A new wrapper (+1) of the builder's stream (Stream.from_handle(builder))."""
        s = self.stream
        st = _cucore_stream_retain(s._h)
        if st:
            raise_error(st, s)
        return _BuilderStream._wrap_for(ctypes.cast(s._h, _c_void_p).value, self)

    def close(self) -> None:
        """Release the builder (idempotent). The last reference of a builder still capturing ends its capture
        and discards it; a built builder's graph lives on in the graphs completed from it."""
        s, self._stream = self._stream, None
        try:
            super().close()
        finally:
            if s is not None:
                s._builder = None
                s.close()

    def __repr__(self) -> str:
        if self._h is None:
            return "<GraphBuilder (closed)>"
        return f"<GraphBuilder ({self._builder_kind}) on {self._stream!r}>"

    # ---- the stream ---------------------------------------------------------------------------------------

    @property
    def stream(self) -> Stream:
        """The stream the builder captures (enqueue work on it, or on the builder itself)."""
        s = self._stream
        if s is None or self._h is None:
            raise closed_error(self)
        return s

    def __cuda_stream__(self) -> Tuple[int, int]:
        """The stream protocol: the builder's stream."""
        return self.stream.__cuda_stream__()

    @property
    def is_join_required(self) -> bool:
        """Whether this builder (made by split()) must be joined back before building ends."""
        return self._builder_kind == FORKED

    # ---- building -----------------------------------------------------------------------------------------

    def begin_building(self, mode: Optional[str] = "relaxed") -> GraphBuilder:
        """Start capturing the builder's stream and return the builder. `mode` says which potentially unsafe
        calls of other threads are refused meanwhile: "global" (every thread's), "thread_local" (this thread's
        streams'), "relaxed" (none, the default). A conditional body is already capturing: its first
        begin_building() only returns it."""
        h = self._check_open()
        if mode is None:
            mode = "relaxed"
        try:
            value = CAPTURE_MODES[mode]
        except (KeyError, TypeError):
            raise ValueError(f"Unsupported build mode: {mode}") from None
        if self._builder_kind == BODY and not self._began:
            self._began = True
            return self
        st = _cucore_graph_builder_begin_building(h, value)
        if st:
            raise_error(st, self)
        self._began = True
        return self

    @property
    def is_building(self) -> bool:
        """Whether the builder is capturing. InvalidStateError (a RuntimeError) when a call that cannot be
        captured invalidated the capture: end_building() then fails and leaves the stream usable."""
        h = self._check_open()
        out = _c_int()
        st = _cucore_graph_builder_is_building(h, out)
        if st:
            raise_error(st, self)
        if not out.value:
            return False
        status = _c_int()
        st = _cucore_stream_capture_status(self._stream._h, status)
        if st:
            raise_error(st, self._stream)
        if status.value == CAPTURE_STATUS_INVALIDATED:
            raise InvalidStateError(Status.ERROR_INVALID_STATE, "Build process encountered an error and has been "
                                    "invalidated. Build process must now be ended.", 0)
        return True

    def end_building(self) -> GraphBuilder:
        """End the capture and return the builder, which then holds the captured graph (complete(),
        graph_definition, debug_dot_print). InvalidStateError when forked builders are not joined, bodies are
        still capturing, or the capture was invalidated."""
        st = _cucore_graph_builder_end_building(self._check_open())
        if st:
            raise_error(st, self)
        return self

    @property
    def graph_definition(self) -> GraphDefinition:
        """The captured graph as a GraphDefinition, once building has ended (InvalidStateError before): a view
        of the same graph, so nodes added through it are in later complete() and debug_dot_print() calls."""
        h = self._check_open()
        out = _c_void_p()
        st = _cucore_graph_builder_definition(h, out)
        if st:
            raise_error(st, self)
        return GraphDefinition._from_owned(out.value)

    def complete(self, options: Union[GraphCompleteOptions, Dict[str, Any], None] = None) -> Graph:
        """The executable Graph of what was captured (GraphCompleteOptions: auto free on launch, upload,
        device launch, node priorities)."""
        h = self._check_open()
        struct, keep = complete_options_struct(options)
        out = _c_void_p()
        st = _cucore_graph_builder_complete(h, struct, out)
        if st:
            raise_error(st, self, keep)
        return Graph._wrap(out.value)

    def debug_dot_print(self, path: Any, options: Union[GraphDebugPrintOptions, Dict[str, Any], None] = None) -> None:
        """Write the captured graph to `path` as a Graphviz DOT file, with what `options` (GraphDebugPrintOptions)
        adds; after end_building only."""
        h = self._check_open()
        st = _cucore_graph_builder_debug_dot_print(h, dot_path(path), dot_flags(options))
        if st:
            raise_error(st, self)

    # ---- forks and joins ----------------------------------------------------------------------------------

    def split(self, count: int) -> Tuple[GraphBuilder, ...]:
        """Fork the capture into `count` (>= 2) builders continuing from this point: this builder first, then
        new ones on new streams (their is_join_required is True). Join them back before end_building."""
        if isinstance(count, bool) or not isinstance(count, int):
            raise TypeError(f"split count must be an int, not {type(count).__name__}")
        if count < 2:
            raise ValueError(f"Invalid split count: expecting >= 2, got {count}")
        h = self._check_open()
        out = (_c_void_p * count)()
        st = _cucore_graph_builder_split(h, count, out)
        if st:
            raise_error(st, self)
        _fast_graph_builder_release(_handle_arg(out[0]))  # builders[0] is this builder again
        made = [self]
        try:
            for i in range(1, count):
                hv, out[i] = out[i], None  # its reference is the wrapper's from here, even if _wrap fails
                made.append(GraphBuilder._wrap(hv, FORKED))
        finally:
            for i in range(1, count):  # what a failure left unwrapped
                if out[i]:
                    _fast_graph_builder_release(_handle_arg(out[i]))
        return tuple(made)

    @staticmethod
    def join(*graph_builders: GraphBuilder) -> GraphBuilder:
        """Join builders into one and return it: the first that is not join-required (else the first) waits
        for the work captured on the others, which are then done and closed."""
        if any(not isinstance(b, GraphBuilder) for b in graph_builders):
            raise TypeError("All arguments must be GraphBuilder instances")
        if len(graph_builders) < 2:
            raise ValueError("Must join with at least two graph builders")
        root = next((b for b in graph_builders if not b.is_join_required), graph_builders[0])
        others = [b for b in graph_builders if b is not root]
        handles = (_c_void_p * len(others))(*[ctypes.cast(b._check_open(), _c_void_p).value for b in others])
        st = _cucore_graph_builder_join(root._check_open(), handles, len(others))
        if st:
            raise_error(st, root, *others)
        for b in others:
            b.close()
        return root

    # ---- conditions and conditional bodies ---------------------------------------------------------------

    def create_condition(self, default_value: Optional[int] = None) -> GraphCondition:
        """A condition of the graph being captured, for if_then / if_else / while_loop / switch and for kernels
        (a launch argument; device code sets it with cudaGraphSetConditional). `default_value`: its value at
        the start of every launch; None keeps the last launch's (initially 0). NotSupportedError on drivers
        before CUDA 12.3."""
        value, flags = condition_args(default_value)
        out = ctypes.c_uint64()
        st = _cucore_graph_builder_create_condition(self._check_open(), value, flags, out)
        if st:
            raise_error(st, self)
        return GraphCondition._from_value(out.value)

    def _conditional(self, condition: Any, kind: GraphConditionalType, count: int) -> Tuple[GraphBuilder, ...]:
        value = check_condition(condition, "GraphBuilder")
        h = self._check_open()
        out = (_c_void_p * count)()
        st = _cucore_graph_builder_add_conditional(h, value, CONDITIONAL_VALUES[kind], count, out)
        if st:
            raise_error(st, self)
        made = []
        try:
            for i in range(count):
                hv, out[i] = out[i], None
                made.append(GraphBuilder._wrap(hv, BODY))
        finally:
            for i in range(count):
                if out[i]:
                    _fast_graph_builder_release(_handle_arg(out[i]))
        return tuple(made)

    def if_then(self, condition: GraphCondition) -> GraphBuilder:
        """Add a conditional node whose body runs when `condition` is non-zero, after the work captured so far;
        returns the body's builder (capturing: enqueue the body on it, then end_building())."""
        return self._conditional(condition, GraphConditionalType.IF, 1)[0]

    def if_else(self, condition: GraphCondition) -> Tuple[GraphBuilder, GraphBuilder]:
        """Add an if/else node: the first builder's body runs when `condition` is non-zero, the second's when it
        is zero. NotSupportedError on drivers before CUDA 12.8."""
        then, else_ = self._conditional(condition, GraphConditionalType.IF, 2)
        return then, else_

    def switch(self, condition: GraphCondition, count: int) -> Tuple[GraphBuilder, ...]:
        """Add a switch node of `count` bodies: body n runs when `condition` is n, none when it is out of range.
        NotSupportedError on drivers before CUDA 12.8."""
        if isinstance(count, bool) or not isinstance(count, int):
            raise TypeError(f"switch count must be an int, not {type(count).__name__}")
        if count < 1:
            raise ValueError(f"switch count must be >= 1, not {count}")
        return self._conditional(condition, GraphConditionalType.SWITCH, count)

    def while_loop(self, condition: GraphCondition) -> GraphBuilder:
        """Add a while node whose body runs again and again while `condition` is non-zero (checked before each
        run); returns the body's builder."""
        return self._conditional(condition, GraphConditionalType.WHILE, 1)[0]

    # ---- nodes added directly ------------------------------------------------------------------------------

    def embed(self, child: GraphBuilder) -> None:
        """Add a child graph node running a copy of what `child` (a builder whose building has ended)
        captured, after the work captured so far."""
        if not isinstance(child, GraphBuilder):
            raise TypeError(f"child must be a GraphBuilder, not {type(child).__name__}")
        st = _cucore_graph_builder_embed(self._check_open(), child._check_open())
        if st:
            raise_error(st, self, child)

    def callback(self, fn: Any, *, user_data: Any = None) -> None:
        """Add a host callback node after the work captured so far: `fn` runs on the host each time a launch
        of the graph reaches it. A Python callable takes no arguments (bind state with a closure or
        functools.partial) and runs under the GIL on a driver thread; a ctypes function pointer of prototype
        CFUNCTYPE(None, c_void_p) is called with `user_data` (an int, or a bytes-like object copied and kept
        with the graph). It must not call CUDA (nor cucore)."""
        h = self._check_open()
        c_fn, data, release = host_callback_args(fn, user_data)
        st = _cucore_graph_builder_callback(h, c_fn, data, release)
        if st:
            raise_error(st, self)


# Device.create_graph_builder and Stream.create_graph_builder make builders, and every stream argument takes one;
# device.py and stream.py are below this module.
_lib.hand_down(("device", "stream"), GraphBuilder=GraphBuilder)
