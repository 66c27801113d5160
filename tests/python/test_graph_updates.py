"""Changing the nodes of graphs (cucore.graph), as cuda.core 1.2 does it: `update(...)` on a definition's nodes
(KernelNode, MemcpyNode, MemsetNode, HostCallbackNode: omitted parameters keep their values) and the views of an
executable graph's nodes, `graph[node]` (ExecutableKernelNode, ...: update, is_enabled, enable, disable), which
change that graph alone. Kept apart from test_graph.py (already long); the same fixtures.

Without a GPU: the classes and their names. Marked `gpu`: copies, fills and callbacks, which the fake driver runs
too; `fake`: kernel nodes under the fake driver (it records each launch's arguments); `real_gpu`: kernels
compiled with NVRTC whose results are read back. Every test checks what the graph did."""
import ctypes
import struct
import sys

import pytest

import cucore
from cucore import graph as cg
from test_launch import fake, fake_image, last_args, last_launch, real_gpu  # noqa: F401 (fixtures)

VIEWS = ("ExecutableGraphNode", "ExecutableKernelNode", "ExecutableMemcpyNode", "ExecutableMemsetNode",
         "ExecutableHostCallbackNode", "ExecutableChildGraphNode", "ExecutableEventRecordNode",
         "ExecutableEventWaitNode")


# ---- no GPU needed ------------------------------------------------------------------------------------------

def test_the_views_are_cucore_graph_names_and_cannot_be_made_directly():
    for name in VIEWS:
        assert name in cg.__all__
        cls = getattr(cg, name)
        assert cls.__module__ == "cucore.graph" and issubclass(cls, cg.ExecutableGraphNode)
        with pytest.raises(RuntimeError, match="directly constructing an executable graph node is not supported"):
            cls()
    for cls in (cg.ExecutableKernelNode, cg.ExecutableMemcpyNode, cg.ExecutableMemsetNode):
        assert isinstance(cls.is_enabled, property) and callable(cls.enable) and callable(cls.disable)
    assert not hasattr(cg.ExecutableHostCallbackNode, "is_enabled")  # the driver switches only these three
    assert cg.HostCallbackNode.set_callback is cg.HostCallbackNode.update  # one implementation, two names


# ---- fixtures -----------------------------------------------------------------------------------------------

from test_graph import _bytes, dev, stream  # noqa: E402,F401  (test_graph's fixtures and reader)


def _filled(dev, s, n, value):
    buf = dev.allocate(n, stream=s)
    buf.fill(value, stream=s)
    s.sync()
    return buf


# ---- executable views of copies, fills and callbacks -----------------------------------------------------

@pytest.mark.gpu
def test_views_change_the_graph_not_the_definition(dev, stream):
    a, b, c = _filled(dev, stream, 16, 0), _filled(dev, stream, 16, 9), _filled(dev, stream, 16, 0)
    seen = []
    d = cg.GraphDefinition(dev)
    fill = d.memset(a, 1, 16)
    copy = fill.memcpy(b, a, 16)
    cb = copy.callback(lambda: seen.append("old"))
    graph = d.instantiate()
    views = (graph[fill], graph[copy], graph[cb])
    assert [type(v) for v in views] == [cg.ExecutableMemsetNode, cg.ExecutableMemcpyNode,
                                        cg.ExecutableHostCallbackNode]
    assert views[0].node is fill and views[0].graph is graph
    assert repr(views[0]) == f"<ExecutableMemsetNode graph=0x{graph.handle:x} node=0x{fill.handle:x}>"
    graph[fill].update(dst=a, value=3, width=16)
    graph[cb].update(lambda: seen.append("new"))
    graph.launch(stream)
    stream.sync()
    assert _bytes(b, stream) == bytes([3]) * 16 and seen == ["new"]
    graph[copy].update(dst=c, src=a, size=8)                # another destination, half the bytes
    graph[fill].update(dst=a, value=b"\x05\x06", width=8)   # a 2-byte pattern
    graph.launch(stream)
    stream.sync()
    assert _bytes(c, stream) == b"\x05\x06" * 4 + bytes(8)
    assert fill.value == 1 and copy.dst == b.handle          # the definition is unchanged ...
    d.instantiate().launch(stream)                           # ... as a new graph of it shows
    stream.sync()
    assert _bytes(b, stream) == bytes([1]) * 16 and seen == ["new", "new", "old"]


@pytest.mark.gpu
def test_a_disabled_view_does_not_run_until_enabled(dev, stream):
    buf = _filled(dev, stream, 16, 0)
    d = cg.GraphDefinition(dev)
    fill = d.memset(buf, 7, 16)
    graph = d.instantiate()
    v = graph[fill]
    assert v.is_enabled
    v.disable()
    assert not v.is_enabled and not graph.is_node_enabled(fill)   # the same state, through either name
    graph.launch(stream)
    assert _bytes(buf, stream) == bytes(16)
    graph[fill].enable()                                       # a new view of the same node
    assert v.is_enabled
    graph.launch(stream)
    assert _bytes(buf, stream) == bytes([7]) * 16


@pytest.mark.gpu
def test_view_errors(dev, stream):
    buf = _filled(dev, stream, 16, 0)
    d, other = cg.GraphDefinition(dev), cg.GraphDefinition(dev)
    fill = d.memset(buf, 1, 16)
    foreign = other.memset(buf, 2, 16)
    empty = d.empty()
    graph = d.instantiate()
    with pytest.raises(TypeError, match="EmptyNode does not support executable updates"):
        graph[empty]
    with pytest.raises(TypeError, match="GraphNode"):
        graph["node"]
    v = graph[foreign]                      # made without asking the driver, as cuda.core's ...
    # ... and refused when used: a node of another definition (libcucore passes the driver's refusal on:
    # CUDA_ERROR_INVALID_VALUE)
    with pytest.raises((cucore.InvalidArgumentError, cucore.DriverError), match="INVALID"):
        v.update(dst=buf, value=3, width=16)
    with pytest.raises((cucore.InvalidArgumentError, cucore.DriverError), match="INVALID"):
        v.disable()
    graph.launch(stream)
    assert _bytes(buf, stream) == bytes([1]) * 16   # nothing changed
    with pytest.raises(TypeError):
        graph[fill].update(buf, 3, 16)      # keyword-only, as cuda.core's
    view = graph[fill]
    graph.close()
    with pytest.raises(cucore.InvalidHandleError, match="Graph is closed"):
        view.update(dst=buf, value=3, width=16)
    with pytest.raises(cucore.InvalidHandleError, match="Graph is closed"):
        graph[fill]
    assert "closed" in repr(view)


@pytest.mark.gpu
def test_destroyed_nodes_and_bad_arguments_fail_as_cuda_cores(dev, stream):
    a, b = _filled(dev, stream, 16, 0), _filled(dev, stream, 16, 0)
    d = cg.GraphDefinition(dev)
    fill = d.memset(a, 1, 16)
    copy = fill.memcpy(b, a, 16)
    cb = copy.callback(lambda: None)
    graph = d.instantiate()
    # out of range: OverflowError as cuda.core's (Cython's conversions), still the ValueError cucore raised
    for call in (lambda: fill.update(value=256), lambda: copy.update(size=-1),
                 lambda: graph[fill].update(dst=a, value=256, width=16), lambda: d.memset(a, 300, 1)):
        with pytest.raises(OverflowError) as info:
            call()
        assert isinstance(info.value, ValueError)
    for call in (lambda: fill.update(dst=object()), lambda: copy.update(src=object()), lambda: cb.update(object()),
                 lambda: graph[copy].update(dst=b, src=object(), size=4)):
        with pytest.raises(TypeError):
            call()
    graph.launch(stream)
    assert _bytes(b, stream) == bytes([1]) * 16           # nothing changed
    fill.destroy()
    for call in (lambda: graph[fill], lambda: fill.update(value=2)):
        with pytest.raises(RuntimeError, match="GraphNode has been destroyed") as info:
            call()
        assert isinstance(info.value, cucore.InvalidStateError)
    view = graph[copy]
    copy.destroy()
    with pytest.raises(cucore.CUDAError):
        view.update(dst=b, src=a, size=16)                # the view's node is gone from the definition


@pytest.mark.gpu
def test_child_graph_and_event_nodes_have_views(dev, stream):
    e = dev.create_event()
    child = cg.GraphDefinition(dev)
    child.empty()
    d = cg.GraphDefinition(dev)
    rec, wait, emb = d.record(e), d.wait(e), d.embed(child)
    graph = d.instantiate()
    assert type(graph[rec]) is cg.ExecutableEventRecordNode and type(graph[wait]) is cg.ExecutableEventWaitNode
    assert type(graph[emb]) is cg.ExecutableChildGraphNode
    graph.launch(stream)
    stream.sync()
    assert e.is_done


# ---- definition nodes: update() keeps what it is not given -----------------------------------------------

@pytest.mark.gpu
def test_memset_and_memcpy_node_updates_keep_what_they_are_not_given(dev, stream):
    a, b, c = _filled(dev, stream, 16, 0), _filled(dev, stream, 16, 0), _filled(dev, stream, 16, 0)
    d = cg.GraphDefinition(dev)
    fill = d.memset(a, b"\x01\x02", 8)
    copy = fill.memcpy(b, a, 16)
    fill.update(width=4)                           # the 2-byte pattern and a kept; 8 bytes filled
    assert (fill.value, fill.element_size, fill.width, fill.dptr) == (
        int.from_bytes(b"\x01\x02", sys.byteorder), 2, 4, a.handle)
    copy.update(dst=c)                             # src and size kept
    d.instantiate().launch(stream)
    assert _bytes(c, stream) == b"\x01\x02" * 4 + bytes(8) and _bytes(b, stream) == bytes(16)
    fill.update(value=9, width=16)                 # a 1-byte value again
    copy.update(size=4)
    d.instantiate().launch(stream)
    assert _bytes(c, stream) == bytes([9]) * 4 + b"\x01\x02" * 2 + bytes(8)
    # a raw address with an owner, kept for a later update that changes only the size
    owner = object()
    copy.update(dst=b.handle, dst_owner=owner)
    copy.update(size=16)
    d.instantiate().launch(stream)
    assert _bytes(b, stream) == bytes([9]) * 16
    with pytest.raises(ValueError, match="dst_owner requires dst"):
        copy.update(dst_owner=owner)
    with pytest.raises(ValueError, match="src_owner requires src"):
        copy.update(src_owner=owner)
    with pytest.raises(ValueError, match="dst_owner requires dst"):
        fill.update(dst_owner=owner)
    with pytest.raises(TypeError):
        fill.update(a, 1, 16)                      # keyword-only, as cuda.core's
    strided = d.memcpy_3d(cucore.MemoryRegion(c, pitch=8), cucore.MemoryRegion(a, pitch=8), (4, 2))
    with pytest.raises(NotImplementedError, match="multidimensional"):
        strided.update(size=4)


@pytest.mark.gpu
def test_captured_nodes_need_every_parameter(dev, stream):
    a, b = _filled(dev, stream, 16, 0), _filled(dev, stream, 16, 0)
    gb = dev.create_graph_builder().begin_building()
    a.fill(4, stream=gb)
    b.copy_from(a, stream=gb)
    gb.end_building()
    nodes = gb.graph_definition.nodes()
    fill = next(n for n in nodes if isinstance(n, cg.MemsetNode))
    copy = next(n for n in nodes if isinstance(n, cg.MemcpyNode))
    with pytest.raises(ValueError, match="not known to cucore"):
        fill.update(value=5)
    with pytest.raises(ValueError, match="not known to cucore"):
        copy.update(size=8)
    fill.update(dst=a, value=5, width=16)          # everything given: fine
    copy.update(dst=b, src=a, size=8)
    gb.graph_definition.instantiate().launch(stream)
    assert _bytes(b, stream) == bytes([5]) * 8 + bytes(8)


@pytest.mark.gpu
def test_host_callback_node_update(dev, stream):
    seen = []
    d = cg.GraphDefinition(dev)
    cb = d.callback(lambda: seen.append(1))
    cb.update(lambda: seen.append(2))
    assert cb.callback is not None and cb.callback() is None and seen == [2]
    seen.clear()
    d.instantiate().launch(stream)
    stream.sync()
    assert seen == [2]
    got = []
    fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lambda p: got.append(ctypes.string_at(p, 3)))
    cb.update(fn, user_data=b"abc")                # a ctypes CUhostFn with its data, as cuda.core
    assert cb.callback is None
    graph = d.instantiate()
    graph.launch(stream)
    graph.launch(stream)
    stream.sync()
    assert got == [b"abc", b"abc"] and seen == [2]
    graph[cb].update(lambda: seen.append(3))       # the executable graph's node alone
    graph.launch(stream)
    stream.sync()
    assert got == [b"abc", b"abc"] and seen == [2, 3]


# ---- kernel nodes under the fake driver (it records every launch) -----------------------------------------

@pytest.fixture
def put(fake):
    """A fake kernel `put(pointer, int)` (the fake driver records its arguments) and `empty()`."""
    code = cucore.ObjectCode.from_cubin(fake_image("kernel put 8,4", "kernel empty"))
    return code.get_kernel("put"), code.get_kernel("empty")


@pytest.mark.gpu
def test_kernel_node_update_keeps_what_it_is_not_given(fake, put, stream):
    put, empty = put
    out = fake.allocate(16, stream=stream)
    d = cg.GraphDefinition(fake)
    k = d.launch(cucore.LaunchConfig(grid=2, block=4), put, out, 1)

    def run():
        d.instantiate().launch(stream)
        stream.sync()
        return last_launch(), last_args()

    k.update(config=cucore.LaunchConfig(grid=3, block=8))          # the arguments kept
    L, args = run()
    assert (L.grid[0], L.block[0]) == (3, 8) and args == [struct.pack("=Q", out.handle), struct.pack("=i", 1)]
    k.update(args=(out, 2))                                        # the configuration kept
    L, args = run()
    assert L.grid[0] == 3 and args[1] == struct.pack("=i", 2) and k.grid == (3, 1, 1)
    with pytest.raises(ValueError, match="changing kernel requires args"):
        k.update(kernel=empty)
    k.update(kernel=empty, args=())
    L, args = run()
    assert args == [] and k.kernel is empty
    with pytest.raises(NotImplementedError, match="clustered or cooperative"):
        k.update(config=cucore.LaunchConfig(grid=1, block=1, cooperative_launch=True))
    with pytest.raises(TypeError):
        k.update(None, empty)                                      # keyword-only, as cuda.core's
    for bad in (dict(config=object()), dict(kernel=object(), args=()), dict(args=(object(),))):
        with pytest.raises(TypeError):
            k.update(**bad)
    L, args = run()
    assert args == [] and k.kernel is empty                        # the failed updates changed nothing


@pytest.mark.gpu
def test_executable_kernel_view_changes_the_next_launch_only_in_that_graph(fake, put, stream):
    put, _ = put
    out = fake.allocate(16, stream=stream)
    d = cg.GraphDefinition(fake)
    k = d.launch(cucore.LaunchConfig(block=4), put, out, 1)
    graph, twin = d.instantiate(), d.instantiate()
    view = graph[k]
    assert isinstance(view, cg.ExecutableKernelNode)
    view.update(config=cucore.LaunchConfig(grid=5, block=4), kernel=put, args=[out, 3])
    graph.launch(stream)
    stream.sync()
    assert last_args()[1] == struct.pack("=i", 3) and last_launch().grid[0] == 5
    twin.launch(stream)
    stream.sync()
    assert last_args()[1] == struct.pack("=i", 1) and last_launch().grid[0] == 1   # the other graph: unchanged
    before = last_launch().count
    view.disable()
    graph.launch(stream)
    stream.sync()
    assert last_launch().count == before and not view.is_enabled       # a disabled kernel node does not run
    view.enable()
    graph.launch(stream)
    stream.sync()
    assert last_launch().count == before + 1
    with pytest.raises(NotImplementedError, match="clustered or cooperative"):
        view.update(config=cucore.LaunchConfig(cooperative_launch=True), kernel=put, args=(out, 1))
    with pytest.raises(TypeError):
        view.update(config=cucore.LaunchConfig(), kernel=put)              # args is required, as cuda.core's


# ---- kernels on a real GPU: the data read back ------------------------------------------------------------

@pytest.mark.gpu
def test_kernel_updates_change_what_the_next_launch_computes(real_gpu, stream):
    dev = real_gpu
    cc = dev.compute_capability
    code = cucore.Program("""
extern "C" __global__ void axpb(int *x, int a, int b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i] + b;
}
""", "c++", cucore.ProgramOptions(arch=f"sm_{cc.major}{cc.minor}")).compile("cubin")
    axpb = code.get_kernel("axpb")
    n = 256
    x = dev.allocate(4 * n, stream=stream)
    seed = struct.pack(f"<{n}i", *range(n))
    start = dev.allocate(4 * n, stream=stream)
    start.copy_from(seed, stream=stream)
    stream.sync()
    d = cg.GraphDefinition(dev)
    reset = d.memcpy(x, start, 4 * n)                # every launch starts from 0, 1, 2, ...
    k = reset.launch(cucore.LaunchConfig(grid=n // 128, block=128), axpb, x, 2, 1, n)
    graph = d.instantiate()

    def run():
        graph.launch(stream)
        return list(struct.unpack(f"<{n}i", x.to_bytes(stream=stream)))

    assert run() == [2 * i + 1 for i in range(n)]
    graph[k].update(config=cucore.LaunchConfig(grid=n // 64, block=64), kernel=axpb, args=(x, 3, -5, n))
    assert run() == [3 * i - 5 for i in range(n)]
    graph[k].update(config=cucore.LaunchConfig(grid=1, block=64), kernel=axpb, args=(x, 3, -5, 64))
    assert run() == [3 * i - 5 for i in range(64)] + list(range(64, n))   # only the first 64
    graph[k].disable()
    assert run() == list(range(n))                                       # the copy alone
    k.update(args=(x, 10, 0, n))             # the definition: graphs made from it now, or updated from it
    graph.update(d)
    graph[k].enable()
    assert run() == [10 * i for i in range(n)]


# ---- event and child graph nodes: update(event), update(child) ------------------------------------------

def _timing_event(dev):
    return dev.create_event(cucore.EventOptions(timing_enabled=True))


def _was_recorded(event):
    """Whether a timing event was recorded: one never recorded has no elapsed time (the library refuses it, or
    the driver does once a graph may record it)."""
    try:
        return (event - event) == 0.0
    except cucore.CUDAError:
        return False


@pytest.mark.gpu
def test_event_record_node_updates_choose_the_event_a_launch_records(dev, stream):
    a, b, c = _timing_event(dev), _timing_event(dev), _timing_event(dev)
    d = cg.GraphDefinition(dev)
    rec = d.record(a)
    rec.update(b)                                   # the definition: graphs made from it now record b
    assert rec.event is b
    graph = d.instantiate()
    graph.launch(stream)
    stream.sync()
    assert _was_recorded(b) and not _was_recorded(a)
    graph[rec].update(c)                            # this graph alone records c from its next launch
    graph.launch(stream)
    stream.sync()
    assert _was_recorded(c)
    assert rec.event is b                           # the definition is unchanged


@pytest.mark.gpu
def test_event_wait_node_updates_and_their_errors(dev, stream):
    a, b, c = dev.create_event(), dev.create_event(), dev.create_event()
    buf = _filled(dev, stream, 8, 0)
    d = cg.GraphDefinition(dev)
    wait = d.wait(a)
    fill = wait.memset(buf, 4, 8)
    wait.update(b)
    assert wait.event is b
    graph = d.instantiate()
    graph[wait].update(c)
    stream.record(c)                                # the wait is for work recorded before the launch
    graph.launch(stream)
    stream.sync()
    assert _bytes(buf, stream) == bytes([4]) * 8
    with pytest.raises(TypeError):
        wait.update("not an event")
    with pytest.raises(TypeError):
        graph[wait].update(None)
    c.close()
    with pytest.raises(cucore.InvalidHandleError, match="Event is closed"):
        graph[wait].update(c)
    fill.destroy()
    wait.destroy()
    with pytest.raises(RuntimeError, match="GraphNode has been destroyed"):
        wait.update(a)                              # cuda.core's InvalidStateError for a destroyed node


@pytest.mark.gpu
def test_child_graph_node_updates(dev, stream):
    buf = _filled(dev, stream, 16, 0)

    def fills(*values):
        """A definition filling buf with values[0], then its first half with values[1], ... (a chain)."""
        g = cg.GraphDefinition(dev)
        node = g.memset(buf, values[0], 16)
        for v in values[1:]:
            node = node.memset(buf, v, 8)
        return g

    d = cg.GraphDefinition(dev)
    emb = d.embed(fills(1))
    old = emb.child_graph
    (old_fill,) = old.nodes()
    emb.update(fills(2, 3))                         # any topology: the node takes a copy
    assert len(emb.child_graph.nodes()) == 2
    with pytest.raises(cucore.InvalidStateError, match="given another graph"):
        old.nodes()                                 # the replaced graph went with the update ...
    with pytest.raises(RuntimeError):
        old_fill.type                               # ... and so did its nodes
    graph = d.instantiate()
    graph.launch(stream)
    stream.sync()
    assert _bytes(buf, stream) == bytes([3]) * 8 + bytes([2]) * 8

    graph[emb].update(fills(5, 6))                  # the executable's: the same topology only
    graph.launch(stream)
    stream.sync()
    assert _bytes(buf, stream) == bytes([6]) * 8 + bytes([5]) * 8
    with pytest.raises(cucore.CUDAError):
        graph[emb].update(fills(7))                 # another topology: the driver refuses it
    graph.launch(stream)
    stream.sync()
    assert _bytes(buf, stream) == bytes([6]) * 8 + bytes([5]) * 8   # the refused update changed nothing

    with pytest.raises(ValueError, match="own graph hierarchy"):
        emb.update(d)                               # not independent: cuda.core refuses it too
    with pytest.raises(TypeError):
        emb.update(graph)
    with pytest.raises(TypeError):
        graph[emb].update(emb)
    d.instantiate().launch(stream)                  # the definition still holds its own copy
    stream.sync()
    assert _bytes(buf, stream) == bytes([3]) * 8 + bytes([2]) * 8
