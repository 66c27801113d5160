"""2D and 3D strided copies: cucore.copy_3d and MemoryRegion (bindings/python/cucore/copy_3d.py).

Without a GPU: argument checks (they come before any call). With a GPU (or the fake driver): sub-blocks of
NumPy arrays go to pitched device buffers and back, and every result is compared with NumPy's slicing."""
import pytest

import cucore
from cucore.copy_3d import _end

np = pytest.importorskip("numpy")


def test_memory_region_checks_its_fields():
    r = cucore.MemoryRegion(b"x", pitch=4)
    assert (r.height, r.offset, r.x, r.y, r.z) == (0, 0, 0, 0, 0)
    for name in ("pitch", "height", "offset", "x", "y", "z"):
        with pytest.raises(ValueError, match=name):
            cucore.MemoryRegion(b"x", **dict({"pitch": 4}, **{name: -1}))
        with pytest.raises(TypeError, match=name):
            cucore.MemoryRegion(b"x", **dict({"pitch": 4}, **{name: 1.0}))


def test_the_end_of_a_region():
    # the last byte: offset + ((z + depth - 1) * height + y + rows - 1) * pitch + x + width
    r = cucore.MemoryRegion(None, pitch=100, height=10, offset=7, x=3, y=2, z=1)
    assert _end(r, 5, 4, 2) == 7 + ((1 + 1) * 10 + 2 + 3) * 100 + 3 + 5
    assert _end(r, 0, 4, 2) == 7
    # a 2D copy: slices as tall as the rows it copies (height 0 is raised to y + rows)
    assert _end(cucore.MemoryRegion(None, pitch=10, z=2), 4, 3, 1) == (2 * 3 + 2) * 10 + 4


def test_argument_errors_before_any_call(lib):
    host = bytearray(64)
    for extent, exc, words in (((8,), ValueError, "extent"), ((8, 1, 1, 1), ValueError, "extent"),
                               (8, TypeError, "extent"), ((8, 0), ValueError, "rows"), ((8, 1, 0), ValueError, "depth"),
                               ((-1, 1), ValueError, "width"), ((8.0, 1), TypeError, "width"),
                               ((8, True), TypeError, "rows")):
        with pytest.raises(exc, match=words):
            cucore.copy_3d(host, b"12345678", extent, stream=None)
    with pytest.raises(ValueError, match="x .* exceeds the pitch"):
        cucore.copy_3d(cucore.MemoryRegion(host, pitch=8, x=4), b"12345678", (8, 1), stream=None)
    with pytest.raises(ValueError, match="exceeds the height"):
        cucore.copy_3d(cucore.MemoryRegion(host, pitch=8, height=2, y=1), bytes(64), (8, 2, 2), stream=None)


def test_host_regions_are_checked_against_their_memory(lib):
    s = None  # the stream is looked at last: each of these fails before
    with pytest.raises(ValueError, match="the dst region ends at byte 72, beyond its host memory of 64 bytes"):
        cucore.copy_3d(cucore.MemoryRegion(bytearray(64), pitch=8, y=1), bytes(64), (8, 8), stream=s)
    with pytest.raises(ValueError, match="the src region ends at byte 65"):
        cucore.copy_3d(bytearray(64), cucore.MemoryRegion(bytes(64), pitch=8, offset=1), (8, 8), stream=s)
    with pytest.raises(ValueError, match="writable"):
        cucore.copy_3d(b"read-only", b"123456789", (9, 1), stream=s)
    with pytest.raises(TypeError, match="dst must be a Buffer, host memory"):
        cucore.copy_3d("text", b"1234", (4, 1), stream=s)
    with pytest.raises(TypeError, match="src must be a Buffer, host memory"):
        cucore.copy_3d(bytearray(4), 1234, (4, 1), stream=s)
    with pytest.raises(ValueError, match="src host memory cannot be used"):
        cucore.copy_3d(bytearray(4), memoryview(bytes(8))[::2], (4, 1), stream=s)
    with pytest.raises(TypeError, match="stream"):
        cucore.copy_3d(bytearray(4), b"1234", (4, 1), stream=None)


# ============================================================================================================
# GPU (or the fake driver)
# ============================================================================================================

@pytest.fixture
def stream(gpu):
    s = gpu.create_stream()
    yield s
    s.sync()


def _device_image(gpu, stream, rows, pitch, fill):
    buf = gpu.allocate(rows * pitch, stream=stream)
    buf.fill(fill, stream=stream)
    return buf


def _as_array(buf, stream, shape):
    return np.frombuffer(buf.to_bytes(stream=stream), np.uint8).reshape(shape)


@pytest.mark.gpu
def test_2d_host_to_device_to_host(gpu, stream):
    rng = np.random.default_rng(1)
    image = rng.integers(0, 256, (12, 40), np.uint8)
    pitch = 64
    d = _device_image(gpu, stream, 16, pitch, 0xEE)
    # rows 2..9, columns 5..34 of the image into the pitched buffer at row 3, byte 7
    src = cucore.MemoryRegion(image, pitch=40, x=5, y=2)
    cucore.copy_3d(cucore.MemoryRegion(d, pitch=pitch, x=7, y=3), src, (30, 8), stream=stream)
    expected = np.full((16, pitch), 0xEE, np.uint8)
    expected[3:11, 7:37] = image[2:10, 5:35]
    assert np.array_equal(_as_array(d, stream, (16, pitch)), expected)
    # and back, into a tightly packed array
    out = np.zeros((8, 30), np.uint8)
    cucore.copy_3d(out, cucore.MemoryRegion(d, pitch=pitch, x=7, y=3), (30, 8), stream=stream)
    stream.sync()
    assert np.array_equal(out, image[2:10, 5:35])


@pytest.mark.gpu
def test_3d_blocks(gpu, stream):
    rng = np.random.default_rng(2)
    volume = rng.integers(0, 256, (5, 6, 20), np.uint8)  # slices, rows, bytes
    pitch, height, depth = 32, 8, 5
    d = _device_image(gpu, stream, height * depth, pitch, 0)
    cucore.copy_3d(cucore.MemoryRegion(d, pitch=pitch, height=height, x=4, y=1, z=1),
                   cucore.MemoryRegion(volume, pitch=20, height=6, x=2, y=1, z=1), (16, 4, 3), stream=stream)
    expected = np.zeros((depth, height, pitch), np.uint8)
    expected[1:4, 1:5, 4:20] = volume[1:4, 1:5, 2:18]
    assert np.array_equal(_as_array(d, stream, (depth, height, pitch)), expected)
    out = np.full((3, 4, 16), 0xFF, np.uint8)
    cucore.copy_3d(out, cucore.MemoryRegion(d, pitch=pitch, height=height, x=4, y=1, z=1), (16, 4, 3),
                   stream=stream)
    stream.sync()
    assert np.array_equal(out, volume[1:4, 1:5, 2:18])


@pytest.mark.gpu
def test_device_to_device_with_offsets(gpu, stream):
    rng = np.random.default_rng(3)
    a = rng.integers(0, 256, (10, 48), np.uint8)
    src = gpu.allocate(a.nbytes + 16, stream=stream)
    src.fill(0, stream=stream)
    src.copy_from_host(a, stream=stream, offset=16)
    dst = _device_image(gpu, stream, 6, 24, 0xAB)
    cucore.copy_3d(cucore.MemoryRegion(dst, pitch=24, offset=24),
                   cucore.MemoryRegion(src, pitch=48, offset=16, x=8, y=4), (24, 5), stream=stream)
    expected = np.full((6, 24), 0xAB, np.uint8)
    expected[1:6] = a[4:9, 8:32]
    assert np.array_equal(_as_array(dst, stream, (6, 24)), expected)


@pytest.mark.gpu
def test_bare_buffers_and_bytearrays(gpu, stream):
    d = gpu.allocate(4 * 16, stream=stream)
    cucore.copy_3d(d, bytes(range(64)), (16, 4), stream=stream)  # both tightly packed
    assert d.to_bytes(stream=stream) == bytes(range(64))
    out = bytearray(64)
    cucore.copy_3d(out, d, (16, 4), stream=stream)
    stream.sync()
    assert out == bytearray(range(64))
    cucore.copy_3d(out, d, (0, 4), stream=stream)  # nothing to copy


@pytest.mark.gpu
def test_buffer_regions_are_checked_by_libcucore(gpu, stream):
    d = gpu.allocate(256, stream=stream)
    with pytest.raises(cucore.InvalidArgumentError, match="past the end of its buffer"):
        cucore.copy_3d(cucore.MemoryRegion(d, pitch=32, y=1), bytes(256), (32, 8), stream=stream)
    with pytest.raises(cucore.InvalidArgumentError, match="past the end of its buffer"):
        cucore.copy_3d(bytearray(512), cucore.MemoryRegion(d, pitch=64), (64, 5), stream=stream)
    d.close()
    with pytest.raises(cucore.InvalidHandleError, match="closed"):
        cucore.copy_3d(d, bytes(256), (32, 8), stream=stream)
