"""cuda.core.utils scenarios, written as cuda.core's documentation writes them and run with both packages
(`core` is cucore here, and cuda.core too where it is importable): StridedMemoryView over NumPy, CuPy and
PyTorch arrays and over Buffers, DLPack export of a view, args_viewable_as_strided_memory, and the program
caches. Each test uses only cuda.core's public API through `core` and asserts data or metadata."""
import pytest

from cuda_core_style import import_cupy, import_torch, needs_real_gpu

SRC = 'extern "C" __global__ void set(int *out) { *out = 42; }'


@pytest.fixture
def np():
    return pytest.importorskip("numpy", reason="NumPy is not installed")


@pytest.fixture
def cupy(core_device):
    return import_cupy()


@pytest.fixture
def torch(core_device):
    return import_torch()


def _real_gpu():
    needs_real_gpu("CuPy, PyTorch and NVRTC-compiled code")


# ---- no GPU needed -------------------------------------------------------------------------------------------

def test_view_of_a_numpy_array(core, np):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    view = core.utils.StridedMemoryView.from_dlpack(a, stream_ptr=-1)
    assert view.ptr == a.ctypes.data
    assert view.shape == (3, 4)
    assert view.strides == (4, 1)  # in elements
    assert view.dtype == np.float32
    assert view.size == 12
    assert view.device_id == -1 and not view.is_device_accessible
    assert not view.readonly and view.exporting_obj is a

    every_other = core.utils.StridedMemoryView.from_dlpack(a[:, ::2], stream_ptr=-1)
    assert every_other.shape == (3, 2) and every_other.strides == (4, 2)

    a.flags.writeable = False
    assert core.utils.StridedMemoryView.from_dlpack(a, stream_ptr=-1).readonly


def test_view_needs_a_stream_choice(core, np):
    with pytest.raises(BufferError):
        core.utils.StridedMemoryView.from_dlpack(np.zeros(4), stream_ptr=None)
    with pytest.raises(BufferError):
        core.utils.StridedMemoryView.from_any_interface(object(), stream_ptr=-1)


def test_view_exports_to_numpy(core, np):
    a = np.arange(24, dtype=np.int32).reshape(4, 6)[:, 1::2]
    view = core.utils.StridedMemoryView.from_dlpack(a, stream_ptr=-1)
    b = np.from_dlpack(view)
    assert b.ctypes.data == a.ctypes.data and b.strides == a.strides and b.dtype == a.dtype
    assert b.tolist() == a.tolist()


def test_decorated_function_views_its_arguments(core, np):
    @core.utils.args_viewable_as_strided_memory((0,))
    def total_size(arr, scale):
        view = arr.view(-1)
        assert isinstance(view, core.utils.StridedMemoryView)
        return view.size * scale, view.shape, view.dtype

    assert total_size(np.ones((2, 5), dtype=np.int16), 3) == (30, (2, 5), np.int16)


def test_program_cache_names(core, tmp_path):
    cache = core.utils.InMemoryProgramCache(max_size_bytes=1 << 20)
    assert isinstance(cache, core.utils.ProgramCacheResource)
    with core.utils.FileStreamProgramCache(tmp_path / "cache", max_size_bytes=1 << 20) as disk:
        assert isinstance(disk, core.utils.ProgramCacheResource)
        assert len(disk) == 0
    cache.close()


# ---- on a GPU --------------------------------------------------------------------------------------------------

@pytest.mark.gpu
def test_view_of_a_buffer(core, core_device, np):
    dev = core_device
    s = dev.create_stream()
    buf = dev.allocate(64 * 4, stream=s)
    view = core.utils.StridedMemoryView.from_buffer(buf, (8, 8), dtype=np.dtype(np.float32))
    assert view.ptr == int(buf.handle)
    assert view.shape == (8, 8) and view.size == 64
    assert view.dtype == np.float32
    assert view.device_id == dev.device_id and view.is_device_accessible
    assert view.exporting_obj is buf and not view.readonly
    assert view.__dlpack_device__() == (2, dev.device_id)  # kDLCUDA
    with pytest.raises(ValueError):
        core.utils.StridedMemoryView.from_buffer(buf, (8, 8))  # neither itemsize nor dtype
    s.sync()


@pytest.mark.gpu
def test_numpy_array_interface_view(core, core_device, np):
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    view = core.utils.StridedMemoryView.from_array_interface(a)
    assert view.ptr == a.ctypes.data and view.shape == (2, 3) and view.dtype == np.int64
    assert not view.is_device_accessible


@pytest.mark.gpu
def test_buffer_view_goes_to_cupy_and_back(core, core_device, np, cupy):
    _real_gpu()
    dev = core_device
    s = dev.create_stream()
    buf = dev.allocate(12 * 4, stream=s)
    s.sync()
    view = core.utils.StridedMemoryView.from_buffer(buf, (3, 4), dtype=np.dtype(np.int32))
    c = cupy.from_dlpack(view)
    assert c.data.ptr == int(buf.handle) and c.shape == (3, 4) and c.dtype == cupy.int32
    c[...] = cupy.arange(12, dtype=cupy.int32).reshape(3, 4)
    cupy.cuda.get_current_stream().synchronize()
    again = core.utils.StridedMemoryView.from_dlpack(c, stream_ptr=cupy.cuda.get_current_stream().ptr)
    assert again.ptr == view.ptr and again.shape == (3, 4) and again.dtype == np.int32
    assert cupy.asnumpy(cupy.from_dlpack(again)).tolist() == [[4 * r + k for k in range(4)] for r in range(3)]
    cai = core.utils.StridedMemoryView.from_cuda_array_interface(c.T, stream_ptr=cupy.cuda.get_current_stream().ptr)
    assert cai.ptr == view.ptr and cai.shape == (4, 3) and cai.strides == (1, 4)


@pytest.mark.gpu
def test_torch_tensor_view_and_back(core, core_device, torch):
    _real_gpu()
    dev = core_device
    x = torch.arange(24, dtype=torch.float32, device=f"cuda:{dev.device_id}").reshape(4, 6)
    stream_ptr = torch.cuda.current_stream().cuda_stream
    view = core.utils.StridedMemoryView.from_dlpack(x[:, ::3], stream_ptr=stream_ptr)
    assert view.ptr == x.data_ptr() and view.shape == (4, 2) and view.strides == (6, 3)
    assert view.device_id == dev.device_id and view.is_device_accessible
    y = torch.from_dlpack(view)
    assert y.data_ptr() == x.data_ptr() and y.stride() == (6, 3)
    assert torch.equal(y, x[:, ::3])


@pytest.mark.gpu
def test_decorated_function_with_a_device_array(core, core_device, cupy):
    _real_gpu()

    @core.utils.args_viewable_as_strided_memory((1,))
    def describe(stream, arr):
        view = arr.view(int(stream.handle))
        return view.ptr, view.shape, view.device_id

    s = core_device.create_stream()
    a = cupy.zeros((5, 7), dtype=cupy.float64)
    assert describe(s, a) == (a.data.ptr, (5, 7), core_device.device_id)
    s.sync()


@pytest.mark.gpu
def test_compile_with_a_cache(core, core_device, tmp_path):
    _real_gpu()  # the fake driver's device has no architecture NVRTC knows
    dev = core_device
    options = core.ProgramOptions(arch=f"sm_{dev.arch}")
    with core.utils.FileStreamProgramCache(tmp_path) as cache:
        try:
            first = core.Program(SRC, "c++", options=options).compile("cubin", cache=cache)
        except Exception as e:  # noqa: BLE001
            if type(e).__name__ == "NotSupportedError":
                pytest.skip(f"no NVRTC here: {e}")
            raise
        assert len(cache) == 1
        second = core.Program(SRC, "c++", options=options).compile("cubin", cache=cache)
        assert len(cache) == 1, "the second compile was a hit"
        assert bytes(second.code) == bytes(first.code)
    key = core.utils.make_program_cache_key(code=SRC, code_type="c++", options=options, target_type="cubin")
    assert isinstance(key, bytes) and key
    assert key == core.utils.make_program_cache_key(code=SRC, code_type="c++", options=options, target_type="cubin")
    assert key != core.utils.make_program_cache_key(code=SRC + " ", code_type="c++", options=options,
                                                    target_type="cubin")
    assert key != core.utils.make_program_cache_key(code=SRC, code_type="c++", options=options, target_type="ptx")
    assert key != core.utils.make_program_cache_key(code=SRC, code_type="c++", options=options, target_type="cubin",
                                                    extra_digest=b"headers v2")
