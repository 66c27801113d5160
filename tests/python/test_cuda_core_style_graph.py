"""Scenarios of `cuda.core.graph` written as a cuda.core 1.2 user writes them, run with both packages (the
`core` fixture: cucore, and cuda.core where it is installed): stream capture with a GraphBuilder, explicit
GraphDefinitions, and updates of an executable graph's nodes through `graph[node]`. Only cuda.core's public API
is used, through `core`; every scenario reads the data back and compares it.

Kernels are compiled with NVRTC and take 8-byte integers (`long long`): cuda.core passes a Python int as 8 bytes,
cucore packs it to the parameter's size. Scenarios that run device code need a real GPU (under the fake driver
of test_fake_driver.py they skip with the reason); those of copies and fills run there too."""
import struct

import pytest

from cuda_core_style import compile_cubin, read_bytes

SOURCE = r"""
extern "C" __global__ void axpb(long long *x, long long a, long long b, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * i + b;
}
extern "C" __global__ void add(long long *x, long long v, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) x[i] += v;
}
"""


def _kernels(core, dev):
    """axpb and add, compiled for `dev` as cuda.core's documentation does it."""
    code = compile_cubin(core, dev, SOURCE)
    return code.get_kernel("axpb"), code.get_kernel("add")


def _read(core, buf, stream, count, fmt="q"):
    """`count` values of `buf` (device memory), unpacked."""
    return list(struct.unpack(f"<{count}{fmt}", read_bytes(core, buf, stream, count * struct.calcsize(fmt))))


@pytest.mark.gpu
def test_a_captured_graph_of_kernels_fills_and_copies(core, core_device):
    dev = core_device
    axpb, add = _kernels(core, dev)
    stream = dev.create_stream()
    n = 1000
    x = dev.allocate(8 * n, stream=stream)
    y = dev.allocate(8 * n, stream=stream)
    y.fill(0, stream=stream)
    config = core.LaunchConfig(grid=(n + 127) // 128, block=128)

    gb = dev.create_graph_builder()
    gb.begin_building()
    y.fill(0xFF, stream=gb)
    core.launch(gb, config, axpb, x, 3, 1, n)      # x[i] = 3i + 1
    core.launch(gb, config, add, x, 10, n)         # x[i] += 10
    x.copy_to(y, stream=gb)
    gb.end_building()
    graph = gb.complete()

    assert _read(core, y, stream, n) == [0] * n                    # captured, not run
    graph.launch(stream)
    assert _read(core, y, stream, n) == [3 * i + 11 for i in range(n)]
    core.launch(stream, config, add, x, 5, n)      # changes x only: the graph starts again from axpb
    graph.launch(stream)
    assert _read(core, y, stream, n) == [3 * i + 11 for i in range(n)]
    graph.close()
    assert graph.is_closed


@pytest.mark.gpu
def test_an_explicit_graph_updated_node_by_node(core, core_device):
    dev = core_device
    axpb, _ = _kernels(core, dev)
    stream = dev.create_stream()
    n = 256
    x = dev.allocate(8 * n, stream=stream)
    y = dev.allocate(8 * n, stream=stream)
    y.fill(0, stream=stream)

    g = core.graph.GraphDefinition()
    fill = g.memset(x, 0xFF, 8 * n)                                    # every element -1
    k = fill.launch(core.LaunchConfig(grid=n // 128, block=128), axpb, x, 2, 1, n)
    copy = k.memcpy(y, x, 8 * n)
    assert isinstance(k, core.graph.KernelNode) and isinstance(copy, core.graph.MemcpyNode)
    assert k.kernel is not None and k.grid == (n // 128, 1, 1) and copy.size == 8 * n
    graph = g.instantiate()
    graph.launch(stream)
    assert _read(core, y, stream, n) == [2 * i + 1 for i in range(n)]

    kv = graph[k]
    assert isinstance(kv, core.graph.ExecutableKernelNode) and kv.is_enabled
    kv.update(config=core.LaunchConfig(grid=1, block=64), kernel=axpb, args=(x, 3, -5, 64))
    graph.launch(stream)
    assert _read(core, y, stream, n) == [3 * i - 5 for i in range(64)] + [-1] * (n - 64)

    graph[fill].update(dst=x, value=0, width=8 * n)
    graph.launch(stream)
    assert _read(core, y, stream, n) == [3 * i - 5 for i in range(64)] + [0] * (n - 64)

    y.fill(0x11, stream=stream)
    graph[copy].update(dst=y, src=x, size=8 * 32)                     # only the first 32 elements
    graph.launch(stream)
    assert _read(core, y, stream, n) == [3 * i - 5 for i in range(32)] + [0x1111111111111111] * (n - 32)

    graph[k].disable()
    assert not graph[k].is_enabled
    graph.launch(stream)
    assert _read(core, y, stream, 32) == [0] * 32                      # the fill and the copy alone
    graph[k].enable()
    graph.launch(stream)
    assert _read(core, y, stream, 32) == [3 * i - 5 for i in range(32)]

    # The definition kept its own parameters: a graph made from it now does what it did first ...
    g.instantiate().launch(stream)
    assert _read(core, y, stream, n) == [2 * i + 1 for i in range(n)]
    # ... and a definition node's update reaches the graphs made (or updated) after it.
    k.update(args=(x, 10, 0, n))
    graph.update(g)
    graph.launch(stream)
    assert _read(core, y, stream, n) == [10 * i for i in range(n)]


@pytest.mark.gpu
def test_a_graph_of_fills_and_copies_updated_through_its_views(core, core_device):
    dev = core_device
    stream = dev.create_stream()
    a = dev.allocate(64, stream=stream)
    b = dev.allocate(64, stream=stream)
    c = dev.allocate(64, stream=stream)
    for buf in (a, b, c):
        buf.fill(0, stream=stream)
    stream.sync()

    g = core.graph.GraphDefinition()
    fill = g.memset(a, 7, 64)
    copy = fill.memcpy(b, a, 64)
    graph = g.instantiate()
    graph.launch(stream)
    assert _read(core, b, stream, 64, "B") == [7] * 64

    assert isinstance(graph[fill], core.graph.ExecutableMemsetNode)
    graph[fill].update(dst=a, value=b"\x01\x02\x03\x04", width=16)   # a 4-byte pattern, 16 times
    graph[copy].update(dst=c, src=a, size=32)
    graph.launch(stream)
    assert _read(core, c, stream, 64, "B") == [1, 2, 3, 4] * 8 + [0] * 32
    assert _read(core, b, stream, 64, "B") == [7] * 64                  # the old destination: untouched

    graph[fill].disable()
    a.fill(9, stream=stream)
    graph.launch(stream)
    assert _read(core, c, stream, 64, "B") == [9] * 32 + [0] * 32

    fill.update(value=5)                          # the definition's node: kept destination and width
    g.instantiate().launch(stream)
    assert _read(core, b, stream, 64, "B") == [5] * 64


@pytest.mark.gpu
def test_host_callbacks_in_a_graph_and_their_update(core, core_device):
    dev = core_device
    stream = dev.create_stream()
    seen = []
    g = core.graph.GraphDefinition()
    first = g.callback(lambda: seen.append("first"))
    # (a HostCallbackNode's `callback` is its callable, so the next callback hangs off a join of it)
    then = g.join(first).callback(lambda: seen.append("then"))
    graph = g.instantiate()
    graph.launch(stream)
    stream.sync()
    assert seen == ["first", "then"]
    assert isinstance(graph[then], core.graph.ExecutableHostCallbackNode)
    graph[then].update(lambda: seen.append("changed"))
    graph.launch(stream)
    stream.sync()
    assert seen == ["first", "then", "first", "changed"]
    then.update(lambda: seen.append("definition"))
    g.instantiate().launch(stream)
    stream.sync()
    assert seen[4:] == ["first", "definition"]


@pytest.mark.gpu
def test_nodes_without_executable_updates_are_refused(core, core_device):
    g = core.graph.GraphDefinition()
    empty = g.empty()
    g.join(empty)
    graph = g.instantiate()
    with pytest.raises(TypeError):
        graph[empty]


@pytest.mark.gpu
def test_event_and_child_graph_nodes_take_new_events_and_graphs(core, core_device):
    dev = core_device
    stream = dev.create_stream()
    timing = core.EventOptions(timing_enabled=True)
    start, first, second = (dev.create_event(options=timing) for _ in range(3))
    a = dev.allocate(16, stream=stream)
    a.fill(0, stream=stream)

    def filling(value):
        g = core.graph.GraphDefinition()
        g.memset(a, value, 16)
        return g

    g = core.graph.GraphDefinition()
    child = g.embed(filling(1))
    rec = child.record(first)
    assert isinstance(child, core.graph.ChildGraphNode) and isinstance(rec, core.graph.EventRecordNode)
    rec.update(second)                          # the definition's nodes: for the graphs made from it now
    child.update(filling(2))
    graph = g.instantiate()
    stream.record(start)
    graph.launch(stream)
    stream.sync()
    assert _read(core, a, stream, 16, "B") == [2] * 16
    assert second - start >= 0.0                # the launch recorded the node's new event

    assert isinstance(graph[child], core.graph.ExecutableChildGraphNode)
    assert isinstance(graph[rec], core.graph.ExecutableEventRecordNode)
    graph[child].update(filling(3))             # the graph's nodes: a child of the same topology
    graph[rec].update(first)
    stream.record(start)
    graph.launch(stream)
    stream.sync()
    assert _read(core, a, stream, 16, "B") == [3] * 16
    assert first - start >= 0.0
