"""Kernel: attributes, parameters and occupancy through the fake driver, and equal to the C ABI's answers
on a real GPU."""
import ctypes

import pytest

import cucore
from test_launch import fake, fake_image, real_gpu, real_kernel  # noqa: F401 (fixtures)


@pytest.fixture
def kernel(fake):
    return cucore.ObjectCode.from_cubin(fake_image("kernel k 8,4,2")).get_kernel("k")


@pytest.mark.gpu
def test_attributes(kernel, fake):
    a = kernel.attributes
    # The fake answers its kernel spec's limits, and CU_FUNC_ATTRIBUTE_<X> * 100 + device for the rest
    # (NUM_REGS is 4, PTX_VERSION 5, CACHE_MODE_CA 7), so a wrong attribute or device would show.
    assert a.max_threads_per_block == 1024 and a.num_regs == 4 * 100 + 0 and a.ptx_version == 5 * 100 + 0
    assert a.cache_mode_ca is True  # 700, as a bool
    a.max_dynamic_shared_size_bytes = 100000
    assert a.max_dynamic_shared_size_bytes == 100000
    assert kernel.attributes[fake].max_dynamic_shared_size_bytes == 100000
    a.set_attribute("preferred_shared_memory_carveout", 50)
    assert a.get("preferred_shared_memory_carveout") == 50
    with pytest.raises(AttributeError, match="read-only"):
        a.set_attribute("num_regs", 3)
    with pytest.raises(AttributeError):
        a.num_regs = 3
    with pytest.raises(ValueError):
        a.get("nonsense")
    with pytest.raises(cucore.DriverError):
        a.max_dynamic_shared_size_bytes = 10**7  # the driver refuses


@pytest.mark.gpu
def test_parameters(kernel):
    assert kernel.num_arguments == 3
    assert kernel.arguments_info == [cucore.ParamInfo(0, 8), cucore.ParamInfo(8, 4), cucore.ParamInfo(12, 2)]


@pytest.mark.gpu
def test_occupancy(kernel):
    occ = kernel.occupancy
    # The fake's kernel spec: 4 blocks per multiprocessor, 132 multiprocessors, clusters of up to 8, 16 active.
    assert occ.max_active_blocks_per_multiprocessor(256, 0) == 4
    r = occ.max_potential_block_size(0, 512)
    assert r == cucore.MaxPotentialBlockSizeOccupancyResult(132 * 4, 512) and r.max_block_size == 512
    assert occ.available_dynamic_shared_memory_per_block(2, 128) == 233472 // 2
    assert occ.max_potential_cluster_size(cucore.LaunchConfig(grid=4, block=128)) == 8
    assert occ.max_active_clusters(cucore.LaunchConfig(grid=4, cluster=4, block=128)) == 16
    with pytest.raises(ValueError):
        occ.max_active_blocks_per_multiprocessor(-1)
    with pytest.raises(TypeError):
        occ.max_potential_cluster_size((1, 1))


@pytest.mark.gpu
def test_from_handle_keeps_the_owner(kernel):
    code = kernel._code
    raw = kernel.handle
    w = cucore.Kernel.from_handle(raw, code)
    assert w.handle == raw and w.name == "k" and w == kernel
    w.close()
    with pytest.raises(TypeError):
        cucore.Kernel.from_handle("x")
    with pytest.raises(TypeError):
        cucore.Kernel()


@pytest.mark.gpu
def test_from_function_wraps_a_cufunction(kernel, fake):
    fake.set_current()  # a CUfunction belongs to the context current when it is wrapped
    fn = kernel.function()
    w = cucore.Kernel.from_function(fn, kernel)
    assert w.function() == fn and w.handle == 0, "a wrapped CUfunction has no CUkernel"
    w.close()
    with pytest.raises(cucore.InvalidArgumentError):
        cucore.Kernel.from_function(0)
    assert not hasattr(cucore, "kernel_from_function"), "one name: Kernel.from_function (as C++ and Rust)"


@pytest.mark.gpu
def test_occupancy_equals_the_c_abi(real_gpu):
    dev = real_gpu
    k = real_kernel('extern "C" __global__ void k(float *x) { x[threadIdx.x] *= 2; }', "k")
    fn = cucore._lib.function("cucore_kernel_max_active_blocks_per_multiprocessor")
    for block in (32, 128, 256, 1024):
        out = ctypes.c_int()
        assert fn(k._h, dev._h, block, 0, ctypes.byref(out)) == 0
        assert k.occupancy.max_active_blocks_per_multiprocessor(block, 0) == out.value
    grid, blk = ctypes.c_int(), ctypes.c_int()
    assert cucore._lib.function("cucore_kernel_max_potential_block_size")(
        k._h, dev._h, 0, 0, ctypes.byref(grid), ctypes.byref(blk)) == 0
    assert tuple(k.occupancy.max_potential_block_size(0)) == (grid.value, blk.value)
    assert k.attributes.max_threads_per_block == 1024 or k.attributes.max_threads_per_block > 0
