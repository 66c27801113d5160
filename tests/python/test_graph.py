"""CUDA graphs (cucore.graph): capture with GraphBuilder, explicit GraphDefinitions and their nodes, executable
Graphs (launch, update, per-node updates), host callbacks, graph memory, DOT output and the errors.

Without a GPU: the options, conditions and enums. Marked `gpu`: everything that runs graphs made of copies, fills
and host callbacks, which the fake driver (test_fake_driver.py) runs too; `real_gpu`: what needs device code
(NVRTC kernels: captured kernels, while and if/else nodes, kernel argument updates). Every test checks the
data a graph produced, not only that no error was raised."""
import ctypes
import gc
import pickle
import struct
import sys
import weakref

import pytest

import cucore
from cucore import graph as cg
from cucore import graph_builder
from conftest import FAKE_DRIVER
from test_launch import fake, fake_image, last_args, last_launch, real_gpu  # noqa: F401 (fixtures)


# ---- no GPU needed ------------------------------------------------------------------------------------------

def test_the_module_has_cuda_cores_names():
    for name in ("Graph", "GraphBuilder", "GraphDefinition", "GraphNode", "GraphCondition", "GraphCompleteOptions",
                 "GraphDebugPrintOptions", "GraphAllocOptions", "EmptyNode", "KernelNode", "AllocNode", "FreeNode",
                 "MemsetNode", "MemcpyNode", "ChildGraphNode", "EventRecordNode", "EventWaitNode",
                 "HostCallbackNode", "ConditionalNode", "IfNode", "IfElseNode", "WhileNode", "SwitchNode"):
        assert name in cg.__all__
        obj = getattr(cg, name)
        assert obj.__module__ == "cucore.graph", name
    assert cucore.GraphMemoryResource.__module__ == "cucore"
    assert issubclass(cg.IfNode, cg.ConditionalNode) and issubclass(cg.KernelNode, cg.GraphNode)
    assert callable(cucore.Device.create_graph_builder) and callable(cucore.Stream.create_graph_builder)
    assert cucore.typing.GraphMemoryType.HOST == "host" and cucore.typing.GraphConditionalType.WHILE == "while"


def test_classes_cannot_be_made_directly():
    for cls in (cg.GraphNode, cg.KernelNode, cg.GraphCondition):
        with pytest.raises(TypeError, match="cannot be instantiated directly"):
            cls()
    with pytest.raises(RuntimeError, match="^Graph cannot be instantiated directly"):          # as cuda.core's
        cg.Graph()
    with pytest.raises(NotImplementedError, match="^GraphBuilder cannot be instantiated directly"):  # likewise
        cg.GraphBuilder()


def test_node_types_are_the_drivers_values():
    # CUgraphNodeType: KERNEL 0, MEMCPY 1, MEMSET 2, HOST 3, GRAPH 4, EMPTY 5, WAIT_EVENT 6, EVENT_RECORD 7,
    # ..., MEM_ALLOC 10, MEM_FREE 11, BATCH_MEM_OP 12, CONDITIONAL 13
    T = cg.GraphNodeType
    assert (T.KERNEL, T.MEMCPY, T.MEMSET, T.HOST_CALLBACK, T.CHILD_GRAPH, T.EMPTY, T.EVENT_WAIT,
            T.EVENT_RECORD) == tuple(range(8))
    assert (T.ALLOC, T.FREE, T.CONDITIONAL) == (10, 11, 13)
    assert cg.GraphUpdateResult.TOPOLOGY_CHANGED == 2 and cg.GraphUpdateResult.ATTRIBUTES_CHANGED == 8


def test_complete_options_are_checked():
    o = cg.GraphCompleteOptions(auto_free_on_launch=True, use_node_priority=True)
    assert o == cg.GraphCompleteOptions(True, None, False, True)
    with pytest.raises(TypeError, match="auto_free_on_launch"):
        cg.GraphCompleteOptions(auto_free_on_launch=1)
    with pytest.raises(TypeError, match="upload_stream"):
        cg.GraphCompleteOptions(upload_stream=5)


def test_debug_print_options_map_to_the_driver_flags():
    assert cg.GraphDebugPrintOptions()._to_flags() == 0
    o = cg.GraphDebugPrintOptions(verbose=True, memset_node_params=True, handles=True, conditional_node_params=True)
    assert o._to_flags() == 1 | (1 << 4) | (1 << 10) | (1 << 15)  # CU_GRAPH_DEBUG_DOT_FLAGS_*
    assert cg.GraphDebugPrintOptions(runtime_types=True)._to_flags() == 1 << 1  # CUCORE_GRAPH_DOT_RUNTIME_TYPES
    every = cg.GraphDebugPrintOptions(**{f: True for f in cg.GraphDebugPrintOptions.__dataclass_fields__})
    assert every._to_flags() == 0xFFFF  # one driver bit per field, none left out
    with pytest.raises(TypeError):
        cg.GraphDebugPrintOptions(verbose="yes")


def test_alloc_options_are_checked():
    o = cg.GraphAllocOptions("host", [0, 1])
    assert o.memory_type is cucore.typing.GraphMemoryType.HOST and o.peer_access == (0, 1)
    with pytest.raises(ValueError, match="memory_type"):
        cg.GraphAllocOptions("shared")
    with pytest.raises(ValueError, match="at most 8"):
        cg.GraphAllocOptions(peer_access=range(9))
    with pytest.raises(TypeError):
        cg.GraphAllocOptions(peer_access=["0"])


def test_update_error_carries_the_result_and_pickles():
    e = cg.GraphUpdateError(cucore.Status.ERROR_INVALID_STATE, "refused", 0, 2)
    assert isinstance(e, cucore.InvalidStateError) and isinstance(e, RuntimeError)
    assert e.result is cg.GraphUpdateResult.TOPOLOGY_CHANGED
    back = pickle.loads(pickle.dumps(e))
    assert back.result is cg.GraphUpdateResult.TOPOLOGY_CHANGED and back.message == "refused"


def test_a_condition_is_an_8_byte_kernel_argument():
    from cucore.launch import _describe
    c = cg.GraphCondition._from_value(0x1234)
    a = _describe(type(c), c, None)
    assert (a.code, a.size) == ("Q", 8) and a.convert(c) == 0x1234
    assert c == cg.GraphCondition._from_value(0x1234) and hash(c) == hash(cg.GraphCondition._from_value(0x1234))
    assert c.handle == 0x1234 and "0x1234" in repr(c)
    with pytest.raises(TypeError):
        pickle.dumps(c)


# ---- fixtures -----------------------------------------------------------------------------------------------

@pytest.fixture
def dev(gpu):
    return gpu


@pytest.fixture
def stream(dev):
    s = dev.create_stream()
    yield s
    s.sync()


def _bytes(buf, s):
    return buf.to_bytes(stream=s)


def _i32(buf, s):
    data = _bytes(buf, s)
    return list(struct.unpack(f"<{len(data) // 4}i", data))


# ---- capture: copies, fills, forks, host callbacks ---------------------------------------------------------

@pytest.mark.gpu
def test_builder_made_from_a_device_and_from_a_stream(dev, stream):
    gb = dev.create_graph_builder()
    assert isinstance(gb, cg.GraphBuilder) and not gb.is_building and not gb.is_join_required
    assert isinstance(gb.stream, cucore.Stream) and gb.__cuda_stream__() == gb.stream.__cuda_stream__()
    assert gb.begin_building() is gb and gb.is_building
    assert gb.stream.capture_status == "active"
    assert gb.end_building() is gb and not gb.is_building
    assert gb.stream.capture_status == "none"
    g = gb.complete()
    assert isinstance(g, cg.Graph) and g.handle != 0
    g.launch(stream)
    stream.sync()
    sb = stream.create_graph_builder()
    assert sb.stream == stream  # the same driver stream
    sb.begin_building("thread_local").end_building()
    with pytest.raises(ValueError, match="Unsupported build mode"):
        dev.create_graph_builder().begin_building("loose")


@pytest.mark.gpu
def test_captured_copies_and_fills_run_at_each_launch_not_during_capture(dev, stream):
    a, b = dev.allocate(256, stream=stream), dev.allocate(256, stream=stream)
    a.fill(1, stream=stream)
    b.fill(0, stream=stream)
    stream.sync()
    gb = dev.create_graph_builder().begin_building()
    a.fill(7, stream=gb)                    # the builder where a stream is taken
    b.copy_from(a, stream=gb)
    a.view(0, 16).fill(9, stream=gb.stream)  # or its stream
    gb.end_building()
    assert _bytes(a, stream) == bytes([1]) * 256 and _bytes(b, stream) == bytes(256)  # nothing ran yet
    graph = gb.complete()
    graph.launch(stream)
    assert _bytes(b, stream) == bytes([7]) * 256
    assert _bytes(a, stream) == bytes([9]) * 16 + bytes([7]) * 240
    b.fill(3, stream=stream)
    graph.launch(stream)                    # again: the same work
    assert _bytes(b, stream) == bytes([7]) * 256


@pytest.mark.gpu
def test_forked_branches_both_run_before_the_join(dev, stream):
    a, b, out = (dev.allocate(64, stream=stream) for _ in range(3))
    for buf in (a, b, out):
        buf.fill(0, stream=stream)
    stream.sync()
    gb = dev.create_graph_builder().begin_building()
    left, right = gb.split(2)
    assert left is gb and right.is_join_required and not left.is_join_required
    a.fill(5, stream=left)
    b.fill(6, stream=right)
    joined = cg.GraphBuilder.join(right, left)  # the builder that is not join-required continues
    assert joined is gb and right._h is None    # the other one is done (closed)
    out.view(0, 32).copy_from(a.view(0, 32), stream=joined)
    out.view(32, 32).copy_from(b.view(0, 32), stream=joined)
    graph = gb.end_building().complete()
    graph.launch(stream)
    assert _bytes(out, stream) == bytes([5]) * 32 + bytes([6]) * 32
    defn = gb.graph_definition
    memsets = [n for n in defn.nodes() if n.type == cg.GraphNodeType.MEMSET]
    copies = [n for n in defn.nodes() if isinstance(n, cg.MemcpyNode)]
    assert len(memsets) == 2 and len(copies) == 2
    for c in copies:  # each copy runs after both fills (the join)
        ancestors, todo = set(), list(c.pred)
        while todo:
            n = todo.pop()
            if n not in ancestors:
                ancestors.add(n)
                todo.extend(n.pred)
        assert set(memsets) <= ancestors


@pytest.mark.gpu
def test_split_and_join_arguments(dev):
    gb = dev.create_graph_builder().begin_building()
    with pytest.raises(ValueError, match="expecting >= 2"):
        gb.split(1)
    with pytest.raises(ValueError, match="at least two"):
        cg.GraphBuilder.join(gb)
    with pytest.raises(TypeError, match="GraphBuilder instances"):
        cg.GraphBuilder.join(gb, object())
    a, b, c = gb.split(3)
    with pytest.raises(cucore.InvalidStateError):  # forked builders not joined
        gb.end_building()
    cg.GraphBuilder.join(a, b, c)
    gb.end_building()


@pytest.mark.gpu
def test_host_callback_nodes_run_in_order_on_every_launch(dev, stream):
    seen = []
    gb = dev.create_graph_builder().begin_building()
    gb.callback(lambda: seen.append("first"))
    gb.stream.launch_host_func(seen.append, "second")     # a host function captured: a node too
    gb.callback(lambda: seen.append("third"))
    graph = gb.end_building().complete()
    assert seen == []
    graph.launch(stream)
    stream.sync()
    assert seen == ["first", "second", "third"]
    graph.launch(stream)
    graph.launch(stream)
    stream.sync()
    assert seen == ["first", "second", "third"] * 3


@pytest.mark.gpu
def test_explicit_host_callbacks_follow_their_edges(dev, stream):
    seen = []
    d = cg.GraphDefinition(dev)
    first = d.callback(lambda: seen.append(1))
    second = first.join().callback(lambda: seen.append(2))  # join(): an empty node after `first`
    third = d.callback(lambda: seen.append(3))
    third.pred.add(second)                                  # an edge added afterwards
    assert second in third.pred and third in second.succ
    graph = d.instantiate()
    for _ in range(2):
        graph.launch(stream)
    stream.sync()
    assert seen == [1, 2, 3, 1, 2, 3]
    assert isinstance(first, cg.HostCallbackNode) and first.callback is not None


@pytest.mark.gpu
def test_a_host_callback_exception_goes_to_unraisablehook(dev, stream, monkeypatch):
    caught = []
    monkeypatch.setattr(sys, "unraisablehook", lambda args: caught.append(args.exc_value))
    seen = []
    d = cg.GraphDefinition(dev)
    d.callback(lambda: 1 / 0).join().callback(lambda: seen.append("after"))
    d.instantiate().launch(stream)
    stream.sync()
    assert seen == ["after"] and len(caught) == 1 and isinstance(caught[0], ZeroDivisionError)


@pytest.mark.gpu
def test_ctypes_host_callbacks_get_their_user_data(dev, stream):
    got = []
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    fn = proto(lambda p: got.append(ctypes.string_at(p, 5)))
    d = cg.GraphDefinition(dev)
    node = d.callback(fn, user_data=b"hello")   # copied and kept with the graph
    assert node.callback is None
    d.instantiate().launch(stream)
    stream.sync()
    assert got == [b"hello"]
    with pytest.raises(TypeError, match="CUhostFn"):
        d.callback(ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(lambda p: 0))
    with pytest.raises(ValueError, match="user_data"):
        d.callback(print, user_data=1)
    with pytest.raises(TypeError, match="callable"):
        d.callback(5)


def _registrations(obj):
    """How many host callback registrations hold `obj` (graph_builder.callback_count(), the total, also moves
    while other tests' graphs are released on the library's thread, so this test counts its own)."""
    return sum(1 for held in graph_builder._callbacks.values() if held is obj)


@pytest.mark.gpu
def test_callables_live_exactly_as_long_as_the_graphs_need_them(dev, stream):
    seen = []

    class Callback:
        def __call__(self):
            seen.append(1)

    cb = Callback()
    ref = weakref.ref(cb)
    d = cg.GraphDefinition(dev)
    d.callback(cb)
    graph = d.instantiate()
    del cb
    gc.collect()
    assert ref() is not None and _registrations(ref()) == 1
    d.close()                     # release order never matters: the graph still runs it
    graph.launch(stream)
    stream.sync()
    assert seen == [1]
    graph.close()
    stream.sync()                 # past the host function the release queued behind the launch
    cucore.live_object_count()    # waits for the library's release thread: what it was handed is gone
    gc.collect()
    assert ref() is None          # the registration, its last holder, is gone


@pytest.mark.gpu
def test_embedded_builders_and_graphs_launched_inside_a_capture(dev, stream):
    a, b = dev.allocate(16, stream=stream), dev.allocate(16, stream=stream)
    for buf in (a, b):
        buf.fill(0, stream=stream)
    stream.sync()
    child = dev.create_graph_builder().begin_building()
    a.fill(1, stream=child)
    child.end_building()
    inner = dev.create_graph_builder().begin_building()
    b.fill(2, stream=inner)
    inner_graph = inner.end_building().complete()
    gb = dev.create_graph_builder().begin_building()
    gb.embed(child)                  # a child graph node of what `child` captured
    # The driver cannot capture a graph launch; the library says so before it invalidates the capture.
    with pytest.raises(cucore.InvalidStateError, match="embed its definition"):
        inner_graph.launch(gb)
    assert gb.is_building
    gb.embed(inner)
    graph = gb.end_building().complete()
    kinds = [n.type for n in gb.graph_definition.nodes()]
    assert kinds.count(cg.GraphNodeType.CHILD_GRAPH) == 2
    graph.launch(stream)
    assert _bytes(a, stream) == bytes([1]) * 16 and _bytes(b, stream) == bytes([2]) * 16
    with pytest.raises(TypeError, match="GraphBuilder"):
        gb.embed(object())


@pytest.mark.gpu
def test_streams_taken_from_a_builder_capture_into_it(dev, stream):
    buf = dev.allocate(16, stream=stream)
    buf.fill(0, stream=stream)
    stream.sync()
    gb = dev.create_graph_builder().begin_building()
    s = cucore.Stream.from_handle(gb)           # a new reference to the builder's own stream
    assert s == gb.stream and s is not gb.stream
    buf.fill(4, stream=s)
    s.close()
    assert gb.is_building                       # closing the other reference ends nothing
    buf.view(0, 8).fill(5, stream=dev.create_stream(gb))   # Device.create_stream(obj) wraps it likewise
    graph = gb.end_building().complete()
    assert [n.type for n in gb.graph_definition.nodes()] == [cg.GraphNodeType.MEMSET] * 2
    graph.launch(stream)
    assert _bytes(buf, stream) == bytes([5]) * 8 + bytes([4]) * 8


@pytest.mark.gpu
def test_ctypes_callbacks_captured_by_a_builder(dev, stream):
    got = []
    fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lambda p: got.append(p))
    gb = dev.create_graph_builder().begin_building()
    gb.callback(fn, user_data=0x1234)          # an int: passed as the pointer
    gb.callback(fn, user_data=bytearray(b"xy"))  # bytes-like: copied, kept with the graph
    graph = gb.end_building().complete()
    graph.launch(stream)
    stream.sync()
    assert got[0] == 0x1234 and ctypes.string_at(got[1], 2) == b"xy" and len(got) == 2


@pytest.mark.gpu
def test_strided_copy_nodes(dev, stream):
    src, dst = dev.allocate(64, stream=stream), dev.allocate(64, stream=stream)
    src.copy_from(bytes(range(64)), stream=stream)
    dst.fill(0, stream=stream)
    stream.sync()
    d = cg.GraphDefinition(dev)
    # rows 1..2 of an 8 x 8 image, columns 2..5, into the top-left corner of another 8 x 8 image
    node = d.memcpy_3d(cucore.MemoryRegion(dst, pitch=8), cucore.MemoryRegion(src, pitch=8, x=2, y=1), (4, 2))
    assert isinstance(node, cg.MemcpyNode) and node.type == cg.GraphNodeType.MEMCPY
    d.instantiate().launch(stream)
    out = _bytes(dst, stream)
    assert out[0:4] == bytes([10, 11, 12, 13]) and out[8:12] == bytes([18, 19, 20, 21])
    assert out[4:8] == bytes(4) and out[16:] == bytes(48)
    with pytest.raises(TypeError, match="Buffer"):
        d.memcpy_3d(bytearray(64), src, (8, 1))


@pytest.mark.gpu
def test_events_recorded_and_waited_in_a_graph(dev, stream):
    e = dev.create_event()
    d = cg.GraphDefinition(dev)
    rec = d.record(e)
    wait = rec.wait(e)
    assert isinstance(rec, cg.EventRecordNode) and rec.event is e and wait.event is e
    assert rec.type == cg.GraphNodeType.EVENT_RECORD and wait.type == cg.GraphNodeType.EVENT_WAIT
    d.instantiate().launch(stream)
    stream.sync()
    assert e.is_done


# ---- explicit definitions: structure, identity, edges ------------------------------------------------------

@pytest.mark.gpu
def test_nodes_keep_their_identity_and_kind(dev, stream):
    buf = dev.allocate(64, stream=stream)
    d = cg.GraphDefinition(dev)
    fill = d.memset(buf, 3, 64)
    empty = fill.empty()
    copy = empty.memcpy(buf.view(32, 32), buf.view(0, 32), 32)
    assert d.nodes() == {fill, empty, copy}
    assert d.edges() == {(fill, empty), (empty, copy)}
    assert next(iter(copy.pred)) is empty and fill.graph is d and d.is_valid and fill.is_valid
    assert (fill.type, empty.type, copy.type) == (cg.GraphNodeType.MEMSET, cg.GraphNodeType.EMPTY,
                                                  cg.GraphNodeType.MEMCPY)
    assert (fill.value, fill.element_size, fill.width, fill.height, fill.dptr) == (3, 1, 64, 1, buf.handle)
    assert (copy.dst, copy.src, copy.size) == (buf.handle + 32, buf.handle, 32)
    raw = fill.handle
    del fill, empty, copy
    gc.collect()
    again = {n.handle: n for n in d.nodes()}   # new objects of the right classes, with what was remembered
    assert isinstance(again[raw], cg.MemsetNode) and again[raw].value == 3
    assert sum(isinstance(n, cg.EmptyNode) for n in again.values()) == 1


@pytest.mark.gpu
def test_pred_and_succ_are_live_mutable_sets(dev):
    d = cg.GraphDefinition(dev)
    a, b, c = d.empty(), d.empty(), d.empty()
    c.pred = [a, b]
    assert set(c.pred) == {a, b} and len(c.pred) == 2 and c in a.succ
    c.pred.discard(a)
    assert set(c.pred) == {b} and d.edges() == {(b, c)}
    a.succ.update([b, c])
    assert set(a.succ) == {b, c}
    c.pred -= {a, b}
    assert len(c.pred) == 0 and d.edges() == {(a, b)}
    a.succ |= {c}
    assert a.succ & {b, c} == {b, c} and isinstance(a.succ & {b}, set)
    a.succ.clear()
    assert d.edges() == set()
    with pytest.raises(TypeError):
        a.succ.add(5)


@pytest.mark.gpu
def test_destroyed_nodes(dev):
    d = cg.GraphDefinition(dev)
    a = d.empty()
    b = a.empty()
    a.destroy()
    assert not a.is_valid and a.handle is None and d.nodes() == {b} and not d.edges()
    a.destroy()  # a no-op
    with pytest.raises(cucore.InvalidStateError):
        a.empty()
    assert "destroyed" in repr(a)


@pytest.mark.gpu
def test_join_depends_on_every_node(dev):
    d = cg.GraphDefinition(dev)
    a, b, c = d.empty(), d.empty(), d.empty()
    j = a.join(b, c)
    assert set(j.pred) == {a, b, c}
    k = d.join(a, b)
    assert set(k.pred) == {a, b}
    with pytest.raises(TypeError, match="GraphNode"):
        d.join(a, "b")


@pytest.mark.gpu
def test_raw_addresses_with_owners(dev, stream):
    src, dst = dev.allocate(32, stream=stream), dev.allocate(32, stream=stream)
    src.fill(4, stream=stream)
    dst.fill(0, stream=stream)
    stream.sync()
    owner = type("Owner", (), {})()
    ref = weakref.ref(owner)
    d = cg.GraphDefinition(dev)
    d.memcpy(dst.handle, src.handle, 32, dst_owner=owner)
    del owner
    gc.collect()
    assert ref() is not None   # kept by the graph
    graph = d.instantiate()
    graph.launch(stream)
    assert _bytes(dst, stream) == bytes([4]) * 32
    with pytest.raises(ValueError, match="dst_owner cannot be used"):
        d.memcpy(dst, src, 32, dst_owner=object())
    with pytest.raises(TypeError):
        d.memcpy("dst", src, 32)
    d.close()
    graph.close()
    stream.sync()
    cucore.live_object_count()    # waits for the library's release thread
    gc.collect()
    assert ref() is None


@pytest.mark.gpu
def test_memset_values_and_patterns(dev, stream):
    buf = dev.allocate(32, stream=stream)
    d = cg.GraphDefinition(dev)
    n = d.memset(buf, b"\x01\x02\x03\x04", 4)
    n.memset(buf.view(16, 16), b"\xaa\xbb", 4, height=2, pitch=8)
    assert (n.value, n.element_size) == (int.from_bytes(b"\x01\x02\x03\x04", sys.byteorder), 4)
    d.instantiate().launch(stream)
    data = _bytes(buf, stream)
    assert data[:16] == b"\x01\x02\x03\x04" * 4
    assert data[16:] == (b"\xaa\xbb" * 4) * 2
    with pytest.raises(ValueError, match=r"\[0, 256\)"):
        d.memset(buf, 256, 1)
    with pytest.raises(ValueError, match="1, 2 or 4 bytes"):
        d.memset(buf, b"abc", 1)


@pytest.mark.gpu
def test_child_graphs_and_clones(dev, stream):
    buf = dev.allocate(16, stream=stream)
    child = cg.GraphDefinition(dev)
    child.memset(buf, 8, 16)
    parent = cg.GraphDefinition(dev)
    node = parent.embed(child)
    assert isinstance(node, cg.ChildGraphNode) and node.type == cg.GraphNodeType.CHILD_GRAPH
    inner = node.child_graph
    assert isinstance(inner, cg.GraphDefinition) and not inner.is_owned and parent.is_owned
    assert len(inner.nodes()) == 1
    copy = parent.clone()
    assert copy != parent and len(copy.nodes()) == 1
    twin = node.find_in_clone(copy)
    assert isinstance(twin, cg.ChildGraphNode) and twin.graph is copy and twin in copy.nodes()
    child.close()
    parent.close()
    copy.instantiate().launch(stream)
    assert _bytes(buf, stream) == bytes([8]) * 16


@pytest.mark.gpu
def test_every_definition_knows_its_device(dev):
    # libcucore says which device a definition runs on, so the definitions this binding did not make itself
    # (captured, cloned, a conditional's body, a child graph) know it as well as those it made.
    for device in [cucore.Device(i) for i in range(min(cucore.Device.count(), 2))]:  # the fake driver has 2
        d = cg.GraphDefinition(device)
        child = d.embed(cg.GraphDefinition(device)).child_graph
        clone = d.clone()                          # before the conditional node: those cannot be cloned
        body = d.if_then(d.create_condition(0)).then
        gb = device.create_graph_builder().begin_building()
        then = gb.if_then(gb.create_condition(0))
        then.end_building()
        gb.end_building()
        made = {"made": d, "clone": clone, "body": body, "child": child, "captured": gb.graph_definition,
                "captured body": next(n for n in gb.graph_definition.nodes()
                                      if isinstance(n, cg.ConditionalNode)).branches[0]}
        assert {k: v.device for k, v in made.items()} == {k: device for k in made}
        captured = made["captured"]
        alloc = captured.allocate(16)              # allocation nodes are on the definition's device
        assert alloc.device_id == device.device_id
        if device != dev:
            with pytest.raises(ValueError, match=rf"graph's device \({device.device_id}\), not {dev.device_id}"):
                captured.allocate(16, device=dev)
    dev.set_current()
    d.close()
    with pytest.raises(cucore.InvalidHandleError, match="closed"):
        d.device


@pytest.mark.gpu
def test_dot_file_names_the_nodes(dev, stream, tmp_path):
    buf = dev.allocate(16, stream=stream)
    d = cg.GraphDefinition(dev)
    d.memset(buf, 1, 16).callback(lambda: None)
    path = tmp_path / "graph.dot"
    d.debug_dot_print(path, cg.GraphDebugPrintOptions(memset_node_params=True, handles=True))
    text = path.read_text()
    assert "digraph" in text and "MEMSET" in text.upper() and "HOST" in text.upper()
    path.unlink()
    d.debug_dot_print(path, {"verbose": True, "runtime_types": True})  # every flag is the driver's
    assert "MEMSET" in path.read_text().upper()
    gb = dev.create_graph_builder().begin_building()
    buf.fill(2, stream=gb)
    gb.end_building()
    path2 = str(tmp_path / "captured.dot")
    gb.debug_dot_print(path2)
    assert "MEMSET" in open(path2).read().upper()
    with pytest.raises(TypeError, match="path"):
        d.debug_dot_print(5)


# ---- executable graphs: update, per-node updates, enable -----------------------------------------------------

@pytest.mark.gpu
def test_update_from_a_changed_definition(dev, stream):
    buf = dev.allocate(16, stream=stream)
    d = cg.GraphDefinition(dev)
    fill = d.memset(buf, 1, 16)
    graph = d.instantiate()
    graph.launch(stream)
    assert _bytes(buf, stream) == bytes([1]) * 16
    fill.set_memset(buf, 2, 16)
    assert fill.value == 2
    graph.launch(stream)
    assert _bytes(buf, stream) == bytes([1]) * 16   # the graph has its own copy ...
    graph.update(d)
    graph.launch(stream)
    assert _bytes(buf, stream) == bytes([2]) * 16   # ... until updated


@pytest.mark.gpu
def test_update_with_a_changed_topology_is_refused_with_the_result(dev, stream):
    buf = dev.allocate(16, stream=stream)
    d = cg.GraphDefinition(dev)
    d.memset(buf, 1, 16)
    graph = d.instantiate()
    d.empty()
    with pytest.raises(cg.GraphUpdateError) as info:
        graph.update(d)
    assert info.value.result is cg.GraphUpdateResult.TOPOLOGY_CHANGED
    assert info.value.status == cucore.Status.ERROR_INVALID_STATE and info.value.message
    graph.launch(stream)           # still usable, unchanged
    assert _bytes(buf, stream) == bytes([1]) * 16
    with pytest.raises(TypeError):
        graph.update(object())


@pytest.mark.gpu
def test_update_from_a_builder(dev, stream):
    buf = dev.allocate(16, stream=stream)

    def capture(value):
        gb = dev.create_graph_builder().begin_building()
        buf.fill(value, stream=gb)
        return gb.end_building()

    graph = capture(5).complete()
    graph.update(capture(6))
    graph.launch(stream)
    assert _bytes(buf, stream) == bytes([6]) * 16


@pytest.mark.gpu
def test_per_node_updates_change_the_graph_not_the_definition(dev, stream):
    a, b = dev.allocate(16, stream=stream), dev.allocate(16, stream=stream)
    a.fill(0, stream=stream)
    b.fill(9, stream=stream)
    stream.sync()
    seen = []
    d = cg.GraphDefinition(dev)
    fill = d.memset(a, 1, 16)
    copy = fill.memcpy(b, a, 16)
    cb = copy.join().callback(lambda: seen.append("old"))
    graph = d.instantiate()
    graph.set_memset_node(fill, a, 3, 16)
    graph.set_callback_node(cb, lambda: seen.append("new"))
    graph.launch(stream)
    stream.sync()
    assert _bytes(b, stream) == bytes([3]) * 16 and seen == ["new"]
    assert fill.value == 1                                    # the definition is unchanged
    graph.set_memcpy_node(copy, b.view(0, 8), a.view(0, 8), 8)
    graph.set_memset_node(fill, a, 4, 16)
    b.fill(0, stream=stream)
    graph.launch(stream)
    assert _bytes(b, stream) == bytes([4]) * 8 + bytes(8)
    with pytest.raises(TypeError, match="MemsetNode"):
        graph.set_memset_node(copy, a, 1, 16)


@pytest.mark.gpu
def test_disabled_nodes_do_nothing(dev, stream):
    buf = dev.allocate(16, stream=stream)
    buf.fill(0, stream=stream)
    stream.sync()
    d = cg.GraphDefinition(dev)
    fill = d.memset(buf, 7, 16)
    cb = fill.callback(lambda: None)
    graph = d.instantiate()
    for call in (lambda: graph.set_node_enabled(cb, False), lambda: graph.is_node_enabled(cb)):
        with pytest.raises(cucore.InvalidArgumentError, match="host callback node; only kernel, memcpy and memset"):
            call()                         # libcucore names the kinds the driver can switch
    assert graph.is_node_enabled(fill)
    graph.set_node_enabled(fill, False)
    assert not graph.is_node_enabled(fill)
    graph.launch(stream)
    assert _bytes(buf, stream) == bytes(16)
    graph.set_node_enabled(fill, True)
    graph.launch(stream)
    assert _bytes(buf, stream) == bytes([7]) * 16


@pytest.mark.gpu
def test_upload_and_instantiate_options(dev, stream):
    buf = dev.allocate(16, stream=stream)
    d = cg.GraphDefinition(dev)
    d.memset(buf, 5, 16)
    graph = d.instantiate(cg.GraphCompleteOptions(upload_stream=stream))
    graph.upload(stream)
    graph.launch(stream)
    assert _bytes(buf, stream) == bytes([5]) * 16
    g2 = d.instantiate({"use_node_priority": True})
    g2.launch(stream)
    stream.sync()


# ---- errors ---------------------------------------------------------------------------------------------------

@pytest.mark.gpu
def test_synchronize_and_host_copies_during_capture_are_refused_and_the_capture_goes_on(dev, stream):
    buf = dev.allocate(16, stream=stream)
    arr = dev.create_opaque_array(cucore.OpaqueArrayOptions(shape=(16,), format="uint8", num_channels=1))
    gb = dev.create_graph_builder().begin_building()
    buf.fill(3, stream=gb)
    with pytest.raises(cucore.InvalidStateError, match="synchroni"):
        gb.stream.sync()
    assert gb.is_building
    # A graph cannot own host memory, so libcucore refuses every copy to or from it (page-locked or not) on a
    # capturing stream, before the driver sees it: the capture is not invalidated and goes on.
    host = bytearray(16)  # kept alive to the end: a copy captured by mistake would write into it at launch
    refused = {"a copy to host memory": lambda: buf.copy_to_host(host, stream=gb),
               "a copy from host memory": lambda: buf.copy_from(bytes(16), stream=gb),
               "a copy from an array to host memory": lambda: arr.copy_to(host, stream=gb),
               "a copy from host memory into an array": lambda: arr.copy_from(bytes(16), stream=gb)}
    for what, call in refused.items():
        with pytest.raises(cucore.InvalidStateError, match=f"{what}.* while the stream is being captured"):
            call()
        assert gb.is_building and gb.stream.capture_status == "active", what
    graph = gb.end_building().complete()
    assert [n.type for n in gb.graph_definition.nodes()] == [cg.GraphNodeType.MEMSET]
    graph.launch(stream)
    assert _bytes(buf, stream) == bytes([3]) * 16 and host == bytearray(16)


@pytest.mark.gpu
def test_builder_states(dev):
    gb = dev.create_graph_builder()
    with pytest.raises(cucore.InvalidStateError):
        gb.end_building()
    with pytest.raises(cucore.InvalidStateError):
        gb.complete()
    with pytest.raises(cucore.InvalidStateError):
        gb.graph_definition
    gb.begin_building()
    with pytest.raises(cucore.InvalidStateError):
        gb.begin_building()
    gb.end_building()
    with pytest.raises(cucore.InvalidStateError):
        gb.begin_building()        # a builder builds once
    gb.close()
    gb.close()
    with pytest.raises(cucore.InvalidHandleError, match="closed"):
        gb.stream
    assert "closed" in repr(gb)


@pytest.mark.gpu
def test_closed_objects_are_named(dev, stream):
    d = cg.GraphDefinition(dev)
    d.empty()
    graph = d.instantiate()
    graph.close()
    with pytest.raises(cucore.InvalidHandleError, match="Graph is closed"):
        graph.launch(stream)
    d.close()
    with pytest.raises(cucore.InvalidHandleError, match="closed"):
        d.empty()


@pytest.mark.gpu
def test_a_builder_dropped_while_capturing_ends_its_capture(dev, stream):
    gb = stream.create_graph_builder().begin_building()
    assert stream.capture_status == "active"
    gb.close()
    gc.collect()
    assert stream.capture_status == "none"
    buf = dev.allocate(16, stream=stream)
    buf.fill(1, stream=stream)    # the stream is usable again
    assert _bytes(buf, stream) == bytes([1]) * 16


# ---- graph memory ---------------------------------------------------------------------------------------------

@pytest.mark.gpu
def test_graph_memory_allocated_and_freed_inside_a_graph(dev, stream):
    gmr = cucore.GraphMemoryResource(dev)
    assert gmr.kind == cucore.MemoryResourceKind.GRAPH and gmr.device_id == dev.device_id
    out = dev.allocate(64, stream=stream)
    out.fill(0, stream=stream)
    stream.sync()
    with pytest.raises(cucore.InvalidStateError):
        gmr.allocate(64, stream=stream)   # only while capturing
    gb = dev.create_graph_builder().begin_building()
    tmp = gmr.allocate(64, stream=gb)
    tmp.fill(0x5A, stream=gb)
    out.copy_from(tmp, stream=gb)
    tmp.close(gb)                         # a free node
    graph = gb.end_building().complete()
    kinds = sorted(n.type for n in gb.graph_definition.nodes())
    assert cg.GraphNodeType.ALLOC in kinds and cg.GraphNodeType.FREE in kinds
    graph.launch(stream)
    assert _bytes(out, stream) == bytes([0x5A]) * 64
    attrs = gmr.attributes
    assert attrs.used_mem_high >= 64 and attrs.reserved_mem_high >= attrs.used_mem_current
    attrs.used_mem_high = 0
    attrs.reserved_mem_high = 0
    with pytest.raises(ValueError, match="only be set to 0"):
        attrs.used_mem_high = 5
    graph.close()
    stream.sync()
    gmr.trim()
    assert "used_mem_current" in repr(attrs)


@pytest.mark.gpu
def test_allocation_nodes_of_a_definition(dev, stream):
    out = dev.allocate(32, stream=stream)
    d = cg.GraphDefinition(dev)
    alloc = d.allocate(32)
    assert isinstance(alloc, cg.AllocNode) and alloc.bytesize == 32 and alloc.dptr != 0
    assert alloc.memory_type == "device" and alloc.device_id == dev.device_id and alloc.peer_access == ()
    fill = alloc.memset(alloc.dptr, 0x11, 32)
    copy = fill.memcpy(out, alloc.dptr, 32)
    free = copy.deallocate(alloc.dptr)
    assert isinstance(free, cg.FreeNode) and free.dptr == alloc.dptr
    d.instantiate().launch(stream)
    assert _bytes(out, stream) == bytes([0x11]) * 32
    with pytest.raises(cucore.NotSupportedError):
        d.allocate(32, memory_type="managed")


# ---- lifetimes ------------------------------------------------------------------------------------------------

@pytest.mark.gpu
def test_objects_used_by_nodes_live_while_a_graph_needs_them(dev, stream):
    src, dst = dev.allocate(32, stream=stream), dev.allocate(32, stream=stream)
    src.fill(6, stream=stream)
    stream.sync()
    d = cg.GraphDefinition(dev)
    d.memcpy(dst, src, 32)
    graph = d.instantiate()
    src_ref = weakref.ref(src)
    del src, d           # the Python objects can go: the graph holds the memory
    gc.collect()
    assert src_ref() is None
    dst_view = dst.view(0, 32)
    del dst
    gc.collect()
    graph.launch(stream)
    assert _bytes(dst_view, stream) == bytes([6]) * 32


@pytest.mark.gpu
@pytest.mark.parametrize("order", [("graph", "definition", "builder", "node"), ("definition", "node", "builder", "graph"),
                                   ("builder", "graph", "node", "definition"), ("node", "builder", "definition", "graph")])
def test_release_order_never_matters(dev, stream, order):
    buf = dev.allocate(16, stream=stream)
    buf.fill(0, stream=stream)
    stream.sync()
    seen = []
    gb = dev.create_graph_builder().begin_building()
    buf.fill(2, stream=gb)
    gb.callback(lambda: seen.append(1))
    gb.end_building()
    d = gb.graph_definition
    graph = gb.complete()
    objects = {"graph": graph, "definition": d, "builder": gb, "node": next(iter(d.nodes()))}
    graph.launch(stream)                   # in flight while everything is released
    for name in order:
        objects[name].close()
    del objects, graph, d, gb
    gc.collect()
    stream.sync()
    assert _bytes(buf, stream) == bytes([2]) * 16 and seen == [1]


@pytest.mark.gpu
def test_graph_objects_are_counted_and_released(dev, stream):
    gc.collect()
    counts = [cucore.live_object_count(t) for t in ("graph_definition", "graph_node", "graph", "graph_builder")]
    buf = dev.allocate(16, stream=stream)
    gb = dev.create_graph_builder().begin_building()
    buf.fill(1, stream=gb)
    gb.end_building()
    d = gb.graph_definition
    nodes = d.nodes()
    graph = gb.complete()
    graph.launch(stream)
    stream.sync()
    assert [cucore.live_object_count(t) for t in ("graph_definition", "graph_node", "graph", "graph_builder")] > counts
    del gb, d, nodes, graph
    gc.collect()
    stream.sync()  # past the host function each released graph queued behind its launches
    # Counting waits for the library's release thread, so the counts are exact at once.
    now = [cucore.live_object_count(t) for t in ("graph_definition", "graph_node", "graph", "graph_builder")]
    assert now == counts


# ---- kernel nodes and conditions under the fake driver (it records every kernel it runs) ---------------------

@pytest.fixture
def fake_code(fake):
    """A fake module: `put` takes (pointer, int), `cond` (a condition: 8 bytes, int); the fake driver runs
    `fake_set_condition` (condition, value: sets it) and `fake_count_condition` (condition, int *counter, limit:
    adds 1 to *counter and sets the condition to counter < limit), as device code would."""
    return cucore.ObjectCode.from_cubin(fake_image(
        "kernel put 8,4", "kernel cond 8,4", "kernel empty", "kernel fake_set_condition 8,4",
        "kernel fake_count_condition 8,8,4"))


@pytest.mark.gpu
def test_captured_kernels_run_with_their_arguments_at_each_launch(fake, fake_code, stream):
    put = fake_code.get_kernel("put")
    out = fake.allocate(16, stream=stream)
    gb = fake.create_graph_builder().begin_building()
    before = last_launch().count
    cucore.launch(gb, cucore.LaunchConfig(grid=(2, 3), block=32, shmem_size=64), put, out, -7)
    assert last_launch().count == before   # captured, not run
    graph = gb.end_building().complete()
    graph.launch(stream)
    stream.sync()
    L = last_launch()
    assert L.count == before + 1 and L.grid[:] == [2, 3, 1] and L.block[:] == [32, 1, 1]
    assert L.shared_memory_bytes == 64 and L.stream == stream.handle
    assert last_args() == [struct.pack("=Q", out.handle), struct.pack("=i", -7)]
    k = next(iter(gb.graph_definition.nodes()))
    assert isinstance(k, cg.KernelNode) and k.grid == (2, 3, 1) and k.block == (32, 1, 1) and k.shmem_size == 64
    assert k.config == cucore.LaunchConfig(grid=(2, 3), block=32, shmem_size=64)


@pytest.mark.gpu
def test_captured_kernel_nodes_know_their_kernel(fake, fake_code, stream):
    # graph.h: a kernel node's kernel is NULL only for nodes of foreign code; a captured cucore launch is not.
    put = fake_code.get_kernel("put")
    out = fake.allocate(16, stream=stream)
    gb = fake.create_graph_builder().begin_building()
    cucore.launch(gb, cucore.LaunchConfig(), put, out, 1)
    gb.end_building()
    k = next(iter(gb.graph_definition.nodes()))
    assert k.kernel == put
    k.set_kernel(None, None, out, 2)      # the node's kernel kept
    gb.complete().launch(stream)
    stream.sync()
    assert last_args()[1] == struct.pack("=i", 2)


@pytest.mark.gpu
def test_kernel_node_arguments_updated_in_the_definition_and_in_the_graph(fake, fake_code, stream):
    put = fake_code.get_kernel("put")
    out = fake.allocate(16, stream=stream)
    d = cg.GraphDefinition(fake)
    k = d.launch(cucore.LaunchConfig(block=4), put, out, 1)
    assert k.kernel is put and k.type == cg.GraphNodeType.KERNEL
    graph = d.instantiate()

    def run():
        graph.launch(stream)
        stream.sync()
        return last_args()[1]

    assert run() == struct.pack("=i", 1)
    k.set_kernel(None, None, out, 2)
    assert run() == struct.pack("=i", 1)                 # the graph keeps its copy ...
    graph.update(d)
    assert run() == struct.pack("=i", 2)                 # ... until updated
    graph.set_kernel_node(k, cucore.LaunchConfig(grid=5, block=4), None, out, 3)
    assert run() == struct.pack("=i", 3) and last_launch().grid[0] == 5
    assert k.config.grid == (1, 1, 1)                    # the definition's node is unchanged
    before = last_launch().count
    graph.set_node_enabled(k, False)
    graph.launch(stream)
    stream.sync()
    assert last_launch().count == before                 # a disabled kernel node does not run
    with pytest.raises(cucore.InvalidArgumentError):
        d.launch(cucore.LaunchConfig(), put, out)         # a missing argument, as launch() says
    with pytest.raises(TypeError, match="LaunchConfig"):
        d.launch(None, put, out, 1)


@pytest.mark.gpu
def test_a_condition_is_passed_to_kernels_as_8_bytes(fake, fake_code, stream):
    k = fake_code.get_kernel("cond")
    gb = fake.create_graph_builder().begin_building()
    c = gb.create_condition(default_value=0)
    assert isinstance(c, cg.GraphCondition) and c.handle != 0
    cucore.launch(gb, cucore.LaunchConfig(), k, c, 5)
    gb.if_then(c).end_building()
    gb.end_building().complete().launch(stream)
    stream.sync()
    assert last_args() == [struct.pack("=Q", c.handle), struct.pack("=i", 5)]
    d = cg.GraphDefinition(fake)
    c2 = d.create_condition()
    d.launch(cucore.LaunchConfig(), k, c2, 6).while_loop(c2)
    d.instantiate().launch(stream)   # the condition starts at 0: the body never runs
    stream.sync()
    assert last_args() == [struct.pack("=Q", c2.handle), struct.pack("=i", 6)]
    with pytest.raises(TypeError, match="GraphCondition"):
        d.if_then(5)


@pytest.mark.gpu
@pytest.mark.parametrize("default, expected", [(0, 0), (1, 1)])
def test_if_nodes_follow_the_conditions_default(fake, stream, default, expected):
    buf = fake.allocate(16, stream=stream)
    buf.fill(0, stream=stream)
    stream.sync()
    d = cg.GraphDefinition(fake)
    node = d.if_then(d.create_condition(default))
    assert isinstance(node, cg.IfNode) and node.cond_type == "if" and len(node.branches) == 1
    assert node.then.nodes() == set() and not node.then.is_owned
    node.then.memset(buf, 1, 16)
    d.instantiate().launch(stream)
    assert _bytes(buf, stream) == bytes([expected]) * 16


@pytest.mark.gpu
@pytest.mark.parametrize("default", [0, 1, 2, 7])
def test_switch_and_if_else_take_the_branch_of_the_condition(fake, stream, default):
    buf = fake.allocate(4, stream=stream)
    buf.fill(0xFF, stream=stream)
    stream.sync()
    gb = fake.create_graph_builder().begin_building()
    c = gb.create_condition(default_value=default)
    branches = gb.switch(c, 3)
    assert len(branches) == 3 and all(b.is_building for b in branches)
    for i, b in enumerate(branches):
        buf.fill(i, stream=b)
        b.end_building()
    gb.end_building().complete().launch(stream)
    assert _bytes(buf, stream) == (bytes([default]) * 4 if default < 3 else b"\xff" * 4)
    d = cg.GraphDefinition(fake)
    node = d.if_else(d.create_condition(default))
    node.then.memset(buf, 0x11, 4)
    node.else_.memset(buf, 0x22, 4)
    d.instantiate().launch(stream)
    assert _bytes(buf, stream) == (b"\x11" if default else b"\x22") * 4
    assert isinstance(node, cg.IfElseNode) and node.condition is not None and len(node.branches) == 2


@pytest.mark.gpu
def test_a_while_node_counts_to_n_under_the_fake_driver(fake, fake_code, stream):
    count = fake_code.get_kernel("fake_count_condition")
    counter = fake.allocate(4, stream=stream)
    counter.fill(0, stream=stream)
    stream.sync()
    gb = fake.create_graph_builder().begin_building()
    cond = gb.create_condition(default_value=1)
    body = gb.while_loop(cond).begin_building()
    cucore.launch(body, cucore.LaunchConfig(), count, cond, counter, 25)
    body.end_building()
    graph = gb.end_building().complete()
    graph.launch(stream)
    assert _i32(counter, stream) == [25]
    graph.launch(stream)         # the default starts the loop again: one more round, 26 is past the limit
    assert _i32(counter, stream) == [26]
    # explicitly
    counter.fill(0, stream=stream)
    d = cg.GraphDefinition(fake)
    c = d.create_condition(1)
    loop = d.while_loop(c)
    loop.body.launch(cucore.LaunchConfig(), count, c, counter, 9)
    d.instantiate().launch(stream)
    assert _i32(counter, stream) == [9]


@pytest.mark.gpu
@pytest.mark.parametrize("which", [0, 1])
def test_if_else_takes_the_branch_the_kernel_chose_under_the_fake_driver(fake, fake_code, stream, which):
    choose = fake_code.get_kernel("fake_set_condition")
    out = fake.allocate(4, stream=stream)
    out.fill(0, stream=stream)
    stream.sync()
    gb = fake.create_graph_builder().begin_building()
    cond = gb.create_condition()
    cucore.launch(gb, cucore.LaunchConfig(), choose, cond, which)
    then, else_ = gb.if_else(cond)
    out.fill(0xAA, stream=then)
    out.fill(0xBB, stream=else_)
    then.end_building()
    else_.end_building()
    gb.end_building().complete().launch(stream)
    assert _bytes(out, stream) == (b"\xaa" if which else b"\xbb") * 4
    d = cg.GraphDefinition(fake)
    c = d.create_condition()
    node = d.launch(cucore.LaunchConfig(), choose, c, 1 - which).if_else(c)
    node.then.memset(out, 0x11, 4)
    node.else_.memset(out, 0x22, 4)
    d.instantiate().launch(stream)
    assert _bytes(out, stream) == (b"\x11" if 1 - which else b"\x22") * 4


# ---- device code (a real GPU) ---------------------------------------------------------------------------------

KERNELS = r"""
extern "C" __device__ __cudart_builtin__ void CUDARTAPI cudaGraphSetConditional(cudaGraphConditionalHandle handle,
                                                                                unsigned int value);
extern "C" __global__ void add(int *data, int value, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += value;
}
extern "C" __global__ void scale(int *data, int factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}
extern "C" __global__ void count_until(int *counter, cudaGraphConditionalHandle cond, int limit) {
    int c = ++*counter;
    cudaGraphSetConditional(cond, c < limit ? 1u : 0u);
}
extern "C" __global__ void choose(cudaGraphConditionalHandle cond, const int *which) {
    cudaGraphSetConditional(cond, (unsigned int)*which);
}
extern "C" __global__ void put(int *out, int value) { *out = value; }
"""


@pytest.fixture
def kernels(real_gpu):
    dev = real_gpu
    opts = cucore.ProgramOptions(arch=f"sm_{dev.compute_capability.major}{dev.compute_capability.minor}",
                                 std="c++17")
    code = cucore.Program(KERNELS, "c++", opts).compile("cubin")
    return {name: code.get_kernel(name) for name in ("add", "scale", "count_until", "choose", "put")}


def _ints(dev, s, values):
    buf = dev.allocate(4 * len(values), stream=s)
    buf.copy_from(struct.pack(f"<{len(values)}i", *values), stream=s)
    s.sync()
    return buf


@pytest.mark.gpu
def test_captured_chain_of_kernels_and_copies(real_gpu, kernels, stream):
    dev, n = real_gpu, 1000
    data = _ints(dev, stream, list(range(n)))
    out = dev.allocate(4 * n, stream=stream)
    cfg = cucore.LaunchConfig(grid=(n + 127) // 128, block=128)
    gb = dev.create_graph_builder().begin_building()
    cucore.launch(gb, cfg, kernels["add"], data, 3, n)
    cucore.launch(gb, cfg, kernels["scale"], data, 2, n)
    out.copy_from(data, stream=gb)
    cucore.launch(gb.stream, cfg, kernels["add"], out, 1, n)
    graph = gb.end_building().complete()
    assert _i32(data, stream)[:3] == [0, 1, 2]
    graph.launch(stream)
    assert _i32(out, stream) == [(i + 3) * 2 + 1 for i in range(n)]
    graph.launch(stream)
    assert _i32(out, stream) == [((i + 3) * 2 + 3) * 2 + 1 for i in range(n)]
    kinds = [x.type for x in gb.graph_definition.nodes()]
    assert kinds.count(cg.GraphNodeType.KERNEL) == 3
    k = next(x for x in gb.graph_definition.nodes() if isinstance(x, cg.KernelNode))
    assert k.grid == cfg.grid and k.block == cfg.block


@pytest.mark.gpu
def test_a_while_node_counts_to_n(real_gpu, kernels, stream):
    dev = real_gpu
    counter = _ints(dev, stream, [0])
    gb = dev.create_graph_builder().begin_building()
    cond = gb.create_condition(default_value=1)
    body = gb.while_loop(cond)
    body.begin_building()   # accepted as cuda.core's bodies need it
    cucore.launch(body, cucore.LaunchConfig(), kernels["count_until"], counter, cond, 37)
    body.end_building()
    graph = gb.end_building().complete()
    graph.launch(stream)
    assert _i32(counter, stream) == [37]
    # explicitly
    counter2 = _ints(dev, stream, [0])
    d = cg.GraphDefinition(dev)
    c2 = d.create_condition(1)
    loop = d.while_loop(c2)
    assert isinstance(loop, cg.WhileNode) and loop.condition == c2 and loop.cond_type == "while"
    loop.body.launch(cucore.LaunchConfig(), kernels["count_until"], counter2, c2, 12)
    d.instantiate().launch(stream)
    assert _i32(counter2, stream) == [12]


@pytest.mark.gpu
@pytest.mark.parametrize("which", [0, 1])
def test_if_else_takes_the_branch_the_kernel_chose(real_gpu, kernels, stream, which):
    dev = real_gpu
    flag = _ints(dev, stream, [which])
    out = _ints(dev, stream, [-1])
    d = cg.GraphDefinition(dev)
    cond = d.create_condition()
    choose = d.launch(cucore.LaunchConfig(), kernels["choose"], cond, flag)
    try:
        node = choose.if_else(cond)
    except cucore.NotSupportedError as e:
        pytest.skip(f"if/else nodes need a newer driver: {e}")
    assert isinstance(node, cg.IfElseNode) and len(node.branches) == 2
    node.then.launch(cucore.LaunchConfig(), kernels["put"], out, 100)
    node.else_.launch(cucore.LaunchConfig(), kernels["put"], out, 200)
    d.instantiate().launch(stream)
    assert _i32(out, stream) == [100 if which else 200]
    # captured: the same with builders
    out.fill(0, stream=stream)
    gb = dev.create_graph_builder().begin_building()
    c = gb.create_condition()
    cucore.launch(gb, cucore.LaunchConfig(), kernels["choose"], c, flag)
    then, else_ = gb.if_else(c)
    cucore.launch(then, cucore.LaunchConfig(), kernels["put"], out, 1)
    cucore.launch(else_, cucore.LaunchConfig(), kernels["put"], out, 2)
    then.end_building()
    else_.end_building()
    gb.end_building().complete().launch(stream)
    assert _i32(out, stream) == [1 if which else 2]


@pytest.mark.gpu
def test_an_update_changes_a_kernel_argument(real_gpu, kernels, stream):
    dev = real_gpu
    out = _ints(dev, stream, [0])
    d = cg.GraphDefinition(dev)
    k = d.launch(cucore.LaunchConfig(), kernels["put"], out, 1)
    assert isinstance(k, cg.KernelNode) and k.kernel is kernels["put"] and k.config == cucore.LaunchConfig()
    graph = d.instantiate()
    graph.launch(stream)
    assert _i32(out, stream) == [1]
    k.set_kernel(None, None, out, 2)         # the definition ...
    graph.update(d)                          # ... then the graph from it
    graph.launch(stream)
    assert _i32(out, stream) == [2]
    graph.set_kernel_node(k, None, None, out, 3)   # the graph's node alone
    graph.launch(stream)
    assert _i32(out, stream) == [3]
    graph.set_node_enabled(k, False)
    out.fill(0, stream=stream)
    graph.launch(stream)
    assert _i32(out, stream) == [0]
    # a captured graph updated from a new capture with another argument
    def capture(v):
        gb = dev.create_graph_builder().begin_building()
        cucore.launch(gb, cucore.LaunchConfig(), kernels["put"], out, v)
        return gb.end_building()
    g2 = capture(10).complete()
    g2.update(capture(11))
    g2.launch(stream)
    assert _i32(out, stream) == [11]


@pytest.mark.gpu
def test_kernel_nodes_keep_their_kernel_alive(real_gpu, stream):
    dev = real_gpu
    opts = cucore.ProgramOptions(arch=f"sm_{dev.compute_capability.major}{dev.compute_capability.minor}")
    code = cucore.Program('extern "C" __global__ void put(int *o, int v) { *o = v; }', "c++", opts).compile("cubin")
    k = code.get_kernel("put")
    out = _ints(dev, stream, [0])
    d = cg.GraphDefinition(dev)
    d.launch(cucore.LaunchConfig(), k, out, 42)
    graph = d.instantiate()
    k.close()
    code.close()
    d.close()
    del k, code, d
    gc.collect()
    graph.launch(stream)
    assert _i32(out, stream) == [42]
