"""Device resources and green contexts (cucore.DeviceResources, SMResource, SMResourceOptions, WorkqueueResource,
WorkqueueResourceOptions, ContextOptions, Device.resources, Device.create_context, Context.is_green,
Context.resources, Stream.resources).

Without a GPU: the options and their mapping onto the C ABI. Marked `gpu` (a real GPU, and the fake driver through
test_fake_driver.py): splits, green contexts and their streams, allocations and events, release in any order, the
rules of a bad split named. `fake`: the fake driver's known device (16 SMs, minimum partition 2, alignment 2) and
its CUDA 13.1 mode for workqueues. `real_gpu`: a kernel on a green context of k SMs records %smid of every block,
and at most k distinct SMs appear; two green contexts of one split run side by side on disjoint SMs."""
import array
import ctypes
import gc
import os

import pytest

import cucore
from conftest import FAKE_DRIVER
from test_launch import fake, real_gpu, real_kernel  # noqa: F401 (fixtures)


# ---- no GPU needed ------------------------------------------------------------------------------------------

def test_the_names_are_cuda_cores():
    for name in ("DeviceResources", "SMResource", "SMResourceOptions", "WorkqueueResource",
                 "WorkqueueResourceOptions", "ContextOptions"):
        assert name in cucore.__all__
        assert getattr(cucore, name).__module__ == "cucore"
    assert callable(cucore.Device.create_context)
    assert isinstance(cucore.Device.resources, property) and isinstance(cucore.Stream.resources, property)
    assert isinstance(cucore.Context.is_green, property) and isinstance(cucore.Context.resources, property)


def test_resources_cannot_be_made_directly():
    for cls in (cucore.SMResource, cucore.WorkqueueResource):
        with pytest.raises(TypeError, match="cannot be instantiated directly"):
            cls()


def test_split_options_map_onto_the_c_struct(lib):
    c = cucore.SMResourceOptions()._struct()
    assert (c.sm_count, c.group_count, c.flags) == (0, 0, 0)  # the minimum partition, as many as fit
    c = cucore.SMResourceOptions(count=8)._struct()
    assert (c.sm_count, c.group_count) == (8, 1)
    c = cucore.SMResourceOptions(count=[4, 4, 4], backfill=True)._struct()
    assert (c.sm_count, c.group_count) == (4, 3)
    assert c.flags == lib.C["CUCORE_SM_SPLIT_IGNORE_SM_COSCHEDULING"]
    assert c.struct_size == ctypes.sizeof(lib.STRUCTS["cucore_sm_resource_split_options_t"])


def test_split_options_are_checked():
    with pytest.raises(ValueError, match="at least 1"):
        cucore.SMResourceOptions(count=0)._struct()
    with pytest.raises(TypeError, match="must be an int"):
        cucore.SMResourceOptions(count=2.5)._struct()
    with pytest.raises(ValueError, match="empty sequence"):
        cucore.SMResourceOptions(count=[])._struct()
    with pytest.raises(cucore.NotSupportedError, match="different sizes"):
        cucore.SMResourceOptions(count=[8, 16])._struct()
    with pytest.raises(cucore.NotSupportedError, match="CUDA 13.1"):
        cucore.SMResourceOptions(count=8, coscheduled_sm_count=4)._struct()
    with pytest.raises(TypeError, match="backfill"):
        cucore.SMResourceOptions(count=8, backfill=1)._struct()


def test_workqueue_options_map_and_are_checked(lib):
    c = cucore.WorkqueueResourceOptions()._struct()
    assert (c.sharing_scope, c.concurrency_limit) == (0, 0)  # nothing changes
    c = cucore.WorkqueueResourceOptions(sharing_scope="green_ctx_balanced", concurrency_limit=4)._struct()
    assert c.sharing_scope == lib.C["CUCORE_WORKQUEUE_SHARING_SCOPE_GREEN_CTX_BALANCED"]
    assert c.concurrency_limit == 4
    c = cucore.WorkqueueResourceOptions(sharing_scope=cucore.WorkqueueSharingScopeType.DEVICE_CTX)._struct()
    assert c.sharing_scope == lib.C["CUCORE_WORKQUEUE_SHARING_SCOPE_DEVICE_CTX"]
    with pytest.raises(ValueError, match="sharing_scope"):
        cucore.WorkqueueResourceOptions(sharing_scope="everyone")._struct()
    with pytest.raises(ValueError, match="at least 1"):
        cucore.WorkqueueResourceOptions(concurrency_limit=0)._struct()


# ---- a GPU (real or the fake driver) ------------------------------------------------------------------------

def _group_size(sm):
    """The smallest group the rules allow: the minimum partition rounded up to the alignment."""
    a = sm.coscheduled_alignment
    return (sm.min_partition_size + a - 1) // a * a


@pytest.fixture
def sm(gpu):
    try:
        resource = gpu.resources.sm
    except cucore.NotSupportedError as e:
        pytest.skip(f"no green contexts: {e}")
    if resource.sm_count < 2 * _group_size(resource):
        pytest.skip("too few SMs for two groups")
    return resource


@pytest.mark.gpu
def test_a_split_makes_the_groups_asked_for(gpu, sm):
    k = _group_size(sm)
    groups, rest = sm.split(cucore.SMResourceOptions(count=[k, k]))
    assert [g.sm_count for g in groups] == [k, k]
    assert rest.sm_count == sm.sm_count - 2 * k
    planned, left = sm.split({"count": [k, k]}, dry_run=True)
    assert [p.sm_count for p in planned] == [k, k] and left.sm_count == rest.sm_count
    assert isinstance(planned[0], cucore.SMResourceInfo)
    every, rest = sm.split(cucore.SMResourceOptions(count=None))  # as many groups of the minimum as fit
    size = every[0].sm_count
    assert size >= sm.min_partition_size and all(g.sm_count == size for g in every)
    assert 2 <= len(every) <= sm.sm_count // size  # the GPU's clusters may leave fewer whole groups
    assert len(every) * size + rest.sm_count == sm.sm_count


@pytest.mark.gpu
def test_bad_splits_name_the_rule(gpu, sm):
    k = _group_size(sm)
    with pytest.raises(cucore.InvalidArgumentError, match="more SMs than the resource has"):
        sm.split(cucore.SMResourceOptions(count=sm.sm_count + sm.coscheduled_alignment))
    with pytest.raises(cucore.InvalidArgumentError, match="more than the resource's"):
        sm.split(cucore.SMResourceOptions(count=[k] * (sm.sm_count // k + 1)))
    if sm.min_partition_size > 1:
        with pytest.raises(cucore.InvalidArgumentError, match="minimum partition size"):
            sm.split(cucore.SMResourceOptions(count=sm.min_partition_size - 1))
    if sm.coscheduled_alignment > 1:
        with pytest.raises(cucore.InvalidArgumentError, match="co-scheduled alignment"):
            sm.split(cucore.SMResourceOptions(count=k + 1))
    groups, _ = sm.split(cucore.SMResourceOptions(count=k))
    with pytest.raises(cucore.InvalidArgumentError, match="earlier split"):
        groups[0].split(cucore.SMResourceOptions(count=k))
    others, _ = sm.split(cucore.SMResourceOptions(count=k))
    with pytest.raises(cucore.InvalidArgumentError, match="one split"):
        gpu.create_context(cucore.ContextOptions(resources=[groups[0], others[0]]))
    with pytest.raises(TypeError, match="SMResource or a WorkqueueResource"):
        gpu.create_context(cucore.ContextOptions(resources=[groups[0], 3]))


@pytest.mark.gpu
def test_a_green_context_runs_streams_events_and_allocations(gpu, sm):
    k = _group_size(sm)
    groups, _ = sm.split(cucore.SMResourceOptions(count=k))
    ctx = gpu.create_context(cucore.ContextOptions(resources=[groups[0]]))
    assert ctx.is_green and not ctx.is_primary and ctx.green_handle != 0
    assert not gpu.context.is_green
    assert ctx.device == gpu
    assert ctx.resources.sm.sm_count == k
    s = ctx.create_stream()
    assert s.resources.sm.sm_count == k
    assert s.context == ctx
    assert s.is_nonblocking
    with pytest.raises(cucore.InvalidArgumentError, match="CU_STREAM_NON_BLOCKING"):
        ctx.create_stream(cucore.StreamOptions(nonblocking=False))
    data = bytes(range(256)) * 16
    buf = gpu.allocate(len(data), stream=s)
    buf.copy_from_host(data, stream=s)
    start = ctx.create_event(cucore.EventOptions(timing_enabled=True))
    s.record(start)
    buf.fill(0x5A, stream=s, width=1)
    end = s.record(options=cucore.EventOptions(timing_enabled=True))
    end.sync()
    assert end - start >= 0.0
    assert buf.to_bytes(stream=s) == b"\x5a" * len(data)
    assert "green" in repr(ctx)


@pytest.mark.gpu
def test_release_order_never_matters(gpu, sm):
    k = _group_size(sm)
    groups, rest = sm.split(cucore.SMResourceOptions(count=k))
    ctx = gpu.create_context({"resources": groups})
    s = ctx.create_stream()
    e = ctx.create_event()
    buf = gpu.allocate(64, stream=s)
    # The context and its resources go first; what was made on it keeps the green context alive.
    ctx.close()
    for g in groups:
        g.close()
    rest.close()
    del ctx, groups, rest
    gc.collect()
    buf.fill(7, stream=s, width=1)
    s.record(e)
    e.sync()
    assert buf.to_bytes(stream=s) == b"\x07" * 64
    assert s.resources.sm.sm_count == k
    s.close()
    e.close()
    buf.close()


@pytest.mark.gpu
def test_workqueues_need_a_cuda_13_1_driver(gpu):
    if cucore.driver_version() >= 13010 and not FAKE_DRIVER:
        wq = gpu.resources.workqueue
        assert wq.concurrency_limit >= 1 and wq.device == gpu
        return
    with pytest.raises(cucore.NotSupportedError, match="CUDA 13.1"):
        gpu.resources.workqueue


# ---- the fake driver --------------------------------------------------------------------------------------------

def _fake_cuda():
    return ctypes.CDLL(os.environ["CUCORE_CUDA_DRIVER_PATH"])


@pytest.mark.gpu
def test_the_fake_devices_sms(fake):
    sm = fake.resources.sm
    assert (sm.sm_count, sm.min_partition_size, sm.coscheduled_alignment, sm.flags) == (16, 2, 2, 0)
    groups, rest = sm.split(cucore.SMResourceOptions(count=3, backfill=True))
    assert groups[0].sm_count == 3 and rest.sm_count == 13
    assert repr(sm) == "<SMResource of 16 SMs (min partition 2, alignment 2)>"


@pytest.mark.gpu
def test_green_contexts_are_destroyed_with_the_last_object_on_them(fake):
    live = _fake_cuda().fake_cuda_live_green_contexts
    before = live()
    groups, _ = fake.resources.sm.split(cucore.SMResourceOptions(count=[4, 4]))
    ctx = fake.create_context(cucore.ContextOptions(resources=[groups[1]]))
    s = ctx.create_stream()
    assert live() == before + 1
    ctx.close()
    assert live() == before + 1
    s.close()
    assert live() == before
    assert _fake_cuda().fake_cuda_green_context_violations() == 0


@pytest.mark.gpu
def test_workqueues_on_a_cuda_13_1_fake(fake):
    driver = _fake_cuda()
    driver.fake_cuda_set_workqueue_driver(1)
    try:
        wq = fake.resources.workqueue
        assert wq.sharing_scope is cucore.WorkqueueSharingScopeType.DEVICE_CTX
        assert wq.concurrency_limit == 8 and wq.device == fake
        wq.configure(cucore.WorkqueueResourceOptions(sharing_scope="green_ctx_balanced", concurrency_limit=2))
        assert wq.sharing_scope is cucore.WorkqueueSharingScopeType.GREEN_CTX_BALANCED
        assert wq.concurrency_limit == 2
        ctx = fake.create_context(cucore.ContextOptions(resources=[wq]))
        assert ctx.is_green
        theirs = ctx.create_stream().resources.workqueue
        assert (theirs.sharing_scope, theirs.concurrency_limit) == (cucore.WorkqueueSharingScopeType.GREEN_CTX_BALANCED,
                                                                    2)
    finally:
        driver.fake_cuda_set_workqueue_driver(0)


# ---- a real GPU: where blocks run --------------------------------------------------------------------------------

SMID = r"""
extern "C" __global__ void record_smid(unsigned *smids, unsigned *values, unsigned n, long long spin) {
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    if (threadIdx.x == 0) smids[blockIdx.x] = smid;
    const long long start = clock64();
    while (clock64() - start < spin) {
    }
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) values[i] = i * 3u + 1u;
}
"""
THREADS = 128


def _queue_smid(dev, kernel, stream, blocks):
    """Queues record_smid (many blocks, each spinning ~0.1 ms so they spread over every SM allowed)."""
    n = blocks * THREADS
    smids, values = dev.allocate(blocks * 4, stream=stream), dev.allocate(n * 4, stream=stream)
    smids.fill(0, stream=stream, width=1)
    values.fill(0, stream=stream, width=1)
    cucore.launch(stream, cucore.LaunchConfig(grid=blocks, block=THREADS), kernel, smids, values,
                  ctypes.c_uint32(n), ctypes.c_int64(200000))
    return smids, values, n


def _read_smid(stream, pending):
    smids, values, n = pending
    ids = array.array("I", smids.to_bytes(stream=stream))
    got = array.array("I", values.to_bytes(stream=stream))
    assert list(got) == [i * 3 + 1 for i in range(n)], "the kernel ran"
    return set(ids)


@pytest.mark.gpu
def test_a_kernel_on_a_green_context_runs_only_on_its_sms(real_gpu, sm):
    dev = real_gpu
    k = _group_size(sm)
    kernel = real_kernel(SMID, "record_smid")
    groups, _ = sm.split(cucore.SMResourceOptions(count=k))
    ctx = dev.create_context(cucore.ContextOptions(resources=[groups[0]]))
    s = ctx.create_stream()
    blocks = sm.sm_count * 4
    used = _read_smid(s, _queue_smid(dev, kernel, s, blocks))
    assert 1 <= len(used) <= k, f"a green context of {k} SMs ran blocks on {len(used)} SMs"
    p = dev.create_stream()
    assert len(_read_smid(p, _queue_smid(dev, kernel, p, blocks))) > k, "the primary context spreads wider"


@pytest.mark.gpu
def test_two_green_contexts_of_one_split_use_disjoint_sms(real_gpu, sm):
    dev = real_gpu
    k = _group_size(sm)
    kernel = real_kernel(SMID, "record_smid")
    groups, _ = sm.split(cucore.SMResourceOptions(count=[k, k]))
    streams = [dev.create_context(cucore.ContextOptions(resources=[g])).create_stream() for g in groups]
    blocks = sm.sm_count * 4
    pending = [_queue_smid(dev, kernel, s, blocks) for s in streams]  # both in flight before either is read
    a, b = (_read_smid(s, p) for s, p in zip(streams, pending))
    assert len(a) <= k and len(b) <= k
    assert not (a & b), f"SMs {sorted(a & b)} ran blocks of both green contexts"
