"""__cuda_stream__ interop with PyTorch and CuPy, when installed. Needs a real GPU."""
import pytest

import cucore

pytestmark = pytest.mark.gpu


@pytest.fixture
def real_gpu(gpu, fake_driver):
    if fake_driver:
        pytest.skip("interop needs the real CUDA driver, not the fake one")
    return gpu


def test_torch_streams(real_gpu):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA")
    ts = torch.cuda.Stream(device=0)
    wrapped = cucore.Stream.from_handle(ts if hasattr(ts, "__cuda_stream__") else ts.cuda_stream)
    assert wrapped.handle == ts.cuda_stream and not wrapped.is_owned
    # ordering: torch work, then a host function on our wrapper of the same stream
    seen = []
    with torch.cuda.stream(ts):
        x = torch.ones(1 << 20, device="cuda")
        y = x * 2
    wrapped.launch_host_func(seen.append, "after torch")
    wrapped.sync()
    assert seen == ["after torch"]
    assert float(y.sum()) == 2.0 * (1 << 20)
    # the other direction: torch uses our stream
    ours = real_gpu.create_stream()
    ext = torch.cuda.ExternalStream(ours.handle)
    with torch.cuda.stream(ext):
        z = torch.arange(10, device="cuda") * 3
    ev = ours.record()
    ev.sync()
    assert z.cpu().tolist() == [i * 3 for i in range(10)]


def test_cupy_streams(real_gpu):
    cupy = pytest.importorskip("cupy")
    cs = cupy.cuda.Stream(non_blocking=True)
    wrapped = cucore.Stream.from_handle(cs if hasattr(cs, "__cuda_stream__") else cs.ptr)
    assert wrapped.handle == cs.ptr
    with cs:
        a = cupy.arange(1000) * 2
    wrapped.sync()
    assert int(a.sum()) == 2 * sum(range(1000))
    ours = real_gpu.create_stream()
    ext = cupy.cuda.ExternalStream(ours.handle)
    with ext:
        b = cupy.ones(10) * 5
    ours.sync()
    assert float(b.sum()) == 50.0
