"""GraphicsResource (cucore.graphics): OpenGL interop through the Python binding.

Three layers:
- flag parsing and the API's shape, with no library or GPU;
- the lifetime rules through the fake driver (tests/fake_driver, run by test_fake_driver.py), which logs every
  register/map/unmap/unregister with its stream: unmap on the mapping stream or the override, unregister
  never before unmap in every release order, release failures reported;
- real GL round trips on an NVIDIA headless EGL context (egl_context.py), skipping with its reason where
  there is none (no GPU, no libEGL, Mesa only, the fake driver).
"""
import copy
import ctypes
import gc
import os
import threading

import pytest

import cucore
from cucore import graphics
from conftest import FAKE_DRIVER

GL_TEXTURE_2D = 0x0DE1


# ---- no library needed -------------------------------------------------------------------------------

@pytest.mark.parametrize("flags, bits", [
    (None, 0), ("none", 0), ("read_only", 1), ("write_discard", 2), ("surface_load_store", 4),
    ("texture_gather", 8), (["surface_load_store", "texture_gather"], 12), (("READ_ONLY",), 1), ([], 0),
])
def test_register_flags_parse(flags, bits):
    assert graphics.parse_register_flags(flags) == bits


@pytest.mark.parametrize("flags", ["readonly", ["read_only", "bogus"], "discard"])
def test_unknown_register_flag_is_value_error(flags):
    with pytest.raises(ValueError, match="unknown registration flag"):
        graphics.parse_register_flags(flags)
    with pytest.raises(cucore.InvalidArgumentError):
        graphics.parse_register_flags(flags)


@pytest.mark.parametrize("flags", [1, [1], object()])
def test_register_flags_of_the_wrong_type(flags):
    with pytest.raises(TypeError):
        graphics.parse_register_flags(flags)


def test_api_shape():
    for name in ("GraphicsResource", "MappedBuffers", "gl_get_devices"):
        assert name in cucore.__all__ and getattr(cucore, name) is getattr(graphics, name)
    # GL images map as the library's own arrays (cucore.texture); the mapped-array class of old is gone
    for old in ("GraphicsArray", "GraphicsArrayInfo"):
        assert not hasattr(cucore, old) and not hasattr(graphics, old)
    # The batch calls are GraphicsResource's, as in C++ and Rust; one name each (no module-level twins).
    assert callable(cucore.GraphicsResource.map_all) and callable(cucore.GraphicsResource.unmap_all)
    for old in ("map_resources", "unmap_resources", "ArrayInfo"):
        assert not hasattr(cucore, old) and not hasattr(graphics, old)
    assert issubclass(cucore.MappedBuffers, list)
    with pytest.raises(TypeError, match="from_gl_buffer"):
        cucore.GraphicsResource()
    assert issubclass(cucore.InvalidStateError, RuntimeError)
    assert cucore.ObjectType.GRAPHICS_RESOURCE == 12 and cucore.ObjectType.OPAQUE_ARRAY == 13
    assert not hasattr(cucore.ObjectType, "GRAPHICS_ARRAY")


def test_gl_get_devices_refuses_an_unknown_list():
    with pytest.raises(ValueError, match="unknown GL device list"):
        cucore.gl_get_devices("some")


# ---- the fake driver: lifetime rules -------------------------------------------------------------------

class FakeGl:
    """The fake driver's graphics log (one line per call: "map 3 stream 0x..", "unregister 3", ...)."""

    def __init__(self):
        self.dll = ctypes.CDLL(os.environ["CUCORE_CUDA_DRIVER_PATH"])
        self.dll.fake_cuda_graphics_log.restype = ctypes.c_size_t
        self.dll.fake_cuda_graphics_log.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        self.dll.fake_cuda_live_graphics_resources.restype = ctypes.c_int
        gc.collect()  # what earlier tests left to the collector goes before the log starts
        self.dll.fake_cuda_graphics_clear_log()
        self.names = iter(range(100, 1 << 30))

    def lines(self):
        """The lines about resources registered since this test began."""
        out = ctypes.create_string_buffer(1 << 16)
        self.dll.fake_cuda_graphics_log(out, len(out))
        lines = out.value.decode().splitlines()
        ours = {ln.split()[1] for ln in lines if ln.startswith("register")}
        return [ln for ln in lines if set(ln.split()[1:-2] if ln.startswith(("map ", "unmap ")) else
                                          ln.split()[1:2]) & ours]

    def live(self):
        return self.dll.fake_cuda_live_graphics_resources()

    def name(self):
        """A fresh GL name (the fake registers any name but 0)."""
        return next(self.names)


@pytest.fixture
def fake(gpu):
    if not FAKE_DRIVER:
        pytest.skip("needs the fake driver's call log (test_fake_driver.py runs this under it)")
    return FakeGl()


def _id(line):
    return line.split()[1]


def _stream(line):
    return int(line.rsplit(" ", 1)[1], 16)


@pytest.mark.gpu
def test_unmap_on_the_mapping_stream_by_default(fake, gpu):
    s, other = gpu.create_stream(), gpu.create_stream()
    res = cucore.GraphicsResource.from_gl_buffer(fake.name(), flags="write_discard")
    with res.map(stream=s) as buf:
        assert res.is_mapped and buf.size == 4096
        # A mapping is memory of no memory resource (as foreign memory is); the buffer holds the mapping.
        assert buf.memory_resource is None and buf.is_device_accessible and not buf.is_host_accessible
    assert not res.is_mapped and buf.size == 0
    res.close(other)  # not mapped: nothing to unmap on `other`
    reg, mapped, unmapped, unreg = fake.lines()
    assert reg.startswith("register") and reg.endswith("flags 2")
    assert mapped.startswith("map ") and _stream(mapped) == s.handle
    assert unmapped.startswith("unmap ") and _stream(unmapped) == s.handle
    assert unreg == f"unregister {_id(reg)}"


@pytest.mark.gpu
def test_unmap_on_the_override_stream(fake, gpu):
    s, other = gpu.create_stream(), gpu.create_stream()
    res = cucore.GraphicsResource.from_gl_buffer(fake.name())
    buf = res.map(stream=s)
    res.unmap(stream=other)
    assert not res.is_mapped and buf.size == 0
    buf.close()  # the mapping is gone: nothing more happens
    buf2 = res.map(stream=s)
    res.close(other)  # close while mapped, with an override: unmaps there first
    assert buf2.size == 0
    lines = fake.lines()
    assert [ln.split()[0] for ln in lines] == ["register", "map", "unmap", "map", "unmap", "unregister"]
    assert _stream(lines[2]) == other.handle and _stream(lines[4]) == other.handle
    assert _stream(lines[1]) == s.handle and _stream(lines[3]) == s.handle


@pytest.mark.gpu
def test_registered_stream_is_the_default(fake, gpu):
    s = gpu.create_stream()
    res = cucore.GraphicsResource.from_gl_buffer(fake.name(), stream=s)
    buf = res.map()
    del buf
    gc.collect()
    res.close()
    assert [_stream(ln) for ln in fake.lines() if ln.split()[0] in ("map", "unmap")] == [s.handle, s.handle]
    unstreamed = cucore.GraphicsResource.from_gl_buffer(fake.name())
    with pytest.raises(TypeError, match="stream is required"):
        unstreamed.map()
    unstreamed.close()


@pytest.mark.gpu
def test_release_order_buffer_first(fake, gpu):
    s = gpu.create_stream()
    res = cucore.GraphicsResource.from_gl_buffer(fake.name())
    buf = res.map(stream=s)
    view = buf.view(16, 32)
    buf.close()
    assert res.is_mapped, "a view keeps the mapping"
    del view
    gc.collect()
    assert not res.is_mapped
    res.close()
    assert [ln.split()[0] for ln in fake.lines()] == ["register", "map", "unmap", "unregister"]


@pytest.mark.gpu
def test_copies_share_the_registration(fake, gpu):
    s = gpu.create_stream()
    res = cucore.GraphicsResource.from_gl_buffer(fake.name())
    twin = copy.copy(res)
    assert twin.handle == res.handle and twin is not res and twin == res and len({twin, res}) == 1
    buf = twin.map(stream=s)
    assert res.is_mapped
    del res
    gc.collect()
    assert [ln.split()[0] for ln in fake.lines()] == ["register", "map"]
    twin.close()
    assert buf.size == 0
    assert [ln.split()[0] for ln in fake.lines()] == ["register", "map", "unmap", "unregister"]


@pytest.mark.gpu
def test_release_order_resource_first(fake, gpu):
    s = gpu.create_stream()
    before = cucore.live_object_count("graphics_resource")
    res = cucore.GraphicsResource.from_gl_buffer(fake.name())
    buf = res.map(stream=s)
    del res  # the Python wrapper goes: the mapping still holds the registration
    gc.collect()
    assert [ln.split()[0] for ln in fake.lines()] == ["register", "map"]
    assert cucore.live_object_count("graphics_resource") == before + 1
    buf.fill(7, stream=s)
    assert buf.to_bytes(stream=s) == b"\x07" * 4096
    del buf
    gc.collect()
    assert [ln.split()[0] for ln in fake.lines()] == ["register", "map", "unmap", "unregister"]
    assert cucore.live_object_count("graphics_resource") == before


@pytest.mark.gpu
def test_close_while_mapped(fake, gpu):
    s = gpu.create_stream()
    live = fake.live()
    res = cucore.GraphicsResource.from_gl_buffer(fake.name())
    buf = res.map(stream=s)
    res.close()
    assert fake.live() == live
    assert [ln.split()[0] for ln in fake.lines()] == ["register", "map", "unmap", "unregister"]
    assert _stream(fake.lines()[2]) == s.handle
    assert buf.size == 0 and not res.is_mapped and res.handle == 0
    buf.close()  # closed by the unmap: nothing more
    del buf
    gc.collect()
    assert len(fake.lines()) == 4
    res.close()  # idempotent
    assert len(fake.lines()) == 4


@pytest.mark.gpu
def test_garbage_collection_of_a_cycle(fake, gpu):
    s = gpu.create_stream()
    before = cucore.live_object_count("graphics_resource")
    live = fake.live()

    class Holder:
        pass

    h = Holder()
    h.res = cucore.GraphicsResource.from_gl_buffer(fake.name())
    h.buf = h.res.map(stream=s)
    h.me = h  # a reference cycle: only the garbage collector frees it
    del h
    gc.collect()
    lines = fake.lines()
    assert [ln.split()[0] for ln in lines] == ["register", "map", "unmap", "unregister"]
    assert fake.live() == live
    assert cucore.live_object_count("graphics_resource") == before


@pytest.mark.gpu
def test_errors_are_runtime_errors(fake, gpu):
    s = gpu.create_stream()
    res = cucore.GraphicsResource.from_gl_buffer(fake.name())
    with pytest.raises(RuntimeError, match="not mapped"):
        res.unmap()
    buf = res.map(stream=s)
    with pytest.raises(cucore.InvalidStateError, match="already mapped"):
        res.map(stream=s)
    buf.close()
    with pytest.raises(RuntimeError, match="GL buffer, which maps as a pointer"):
        res.map_array(stream=s)
    with pytest.raises(ValueError, match="unknown map hint"):
        res.map(stream=s, hint="sometimes")
    res.close()
    for call in (lambda: res.map(stream=s), lambda: res.unmap(), lambda: res.map_array(stream=s)):
        with pytest.raises(cucore.InvalidStateError, match="closed"):
            call()
    assert not res.is_mapped and res.handle == 0
    assert "closed" in repr(res)


@pytest.mark.gpu
def test_registration_errors(fake, gpu):
    with pytest.raises(cucore.DriverError, match="GL buffer 0") as e:
        cucore.GraphicsResource.from_gl_buffer(0)
    assert e.value.cuda_result == 400  # CUDA_ERROR_INVALID_HANDLE, as the driver says for a bad name
    with pytest.raises(ValueError):
        cucore.GraphicsResource.from_gl_buffer(fake.name(), flags="surface_load_store")  # images only
    with pytest.raises(ValueError, match="unknown registration flag"):
        cucore.GraphicsResource.from_gl_image(fake.name(), GL_TEXTURE_2D, flags="fast")
    with pytest.raises(TypeError):
        cucore.GraphicsResource.from_gl_buffer("7")
    assert [ln for ln in fake.lines() if ln.startswith("register")] == []


@pytest.mark.gpu
def test_with_scopes_the_registration(fake, gpu):
    s = gpu.create_stream()
    with cucore.GraphicsResource.from_gl_buffer(fake.name()) as res:
        with res.map(stream=s) as buf:
            buf.fill(1, stream=s)
    assert [ln.split()[0] for ln in fake.lines()] == ["register", "map", "unmap", "unregister"]
    with pytest.raises(cucore.InvalidStateError):
        res.map(stream=s)


@pytest.mark.gpu
def test_with_stream_registers_and_maps(fake, gpu):
    s = gpu.create_stream()
    res = cucore.GraphicsResource.from_gl_buffer(fake.name(), stream=s)
    with res as buf:
        assert isinstance(buf, cucore.Buffer) and buf.size == 4096 and res.is_mapped
        buf.fill(5, stream=s)
        s.sync()
    assert buf.size == 0 and not res.is_mapped
    lines = fake.lines()
    assert [ln.split()[0] for ln in lines] == ["register", "map", "unmap", "unregister"]
    assert _stream(lines[1]) == _stream(lines[2]) == s.handle
    with pytest.raises(RuntimeError):
        with cucore.GraphicsResource.from_gl_buffer(fake.name(), stream=s) as buf2:
            raise RuntimeError("inside the block")
    assert buf2.size == 0
    assert [ln.split()[0] for ln in fake.lines()][-2:] == ["unmap", "unregister"]


@pytest.mark.gpu
def test_data_persists_across_maps(fake, gpu):
    s = gpu.create_stream()
    with cucore.GraphicsResource.from_gl_buffer(fake.name()) as res:
        with res.map(stream=s, hint="write_discard") as buf:
            buf.copy_from_host(bytes(range(256)) * 16, stream=s)
            s.sync()
        with res.map(stream=s, hint="read_only") as buf:
            assert buf.to_bytes(stream=s) == bytes(range(256)) * 16
    flags = [ln for ln in fake.lines() if ln.startswith("mapflags")]
    assert [ln.split()[2] for ln in flags] == ["2", "1"]


@pytest.mark.gpu
def test_batch_map(fake, gpu):
    s, other = gpu.create_stream(), gpu.create_stream()
    a = cucore.GraphicsResource.from_gl_buffer(fake.name())
    b = cucore.GraphicsResource.from_gl_buffer(fake.name())
    bufs = cucore.GraphicsResource.map_all([a, b], s)
    assert [x.size for x in bufs] == [4096, 4096] and a.is_mapped and b.is_mapped
    maps = [ln for ln in fake.lines() if ln.startswith("map ")]
    assert len(maps) == 1 and len(maps[0].split()) == 5  # one driver call for both
    a.unmap(stream=other)  # each unmaps on its own
    assert not a.is_mapped and b.is_mapped and bufs[0].size == 0
    del bufs
    gc.collect()
    assert not b.is_mapped
    unmaps = [ln for ln in fake.lines() if ln.startswith("unmap")]
    assert [_stream(ln) for ln in unmaps] == [other.handle, s.handle]
    with pytest.raises(ValueError, match="twice"):
        cucore.GraphicsResource.map_all([a, a], s)
    with pytest.raises(ValueError):
        cucore.GraphicsResource.map_all([], s)
    held = a.map(stream=s)
    with pytest.raises(RuntimeError, match="already mapped"):
        cucore.GraphicsResource.map_all([b, a], s)
    assert not b.is_mapped, "a failed batch map leaves nothing mapped"
    held.close()
    a.close()
    b.close()
    with pytest.raises(cucore.InvalidStateError):
        cucore.GraphicsResource.map_all([a], s)


def _unmaps(fake):
    """The unmap lines of the log as (resource ids, stream handle): one per driver call."""
    return [(ln.split()[1:-2], _stream(ln)) for ln in fake.lines() if ln.startswith("unmap ")]


def _ids(fake, *resources):
    """The fake's ids of `resources` (from their register lines, in registration order)."""
    regs = [_id(ln) for ln in fake.lines() if ln.startswith("register")]
    return regs if not resources else [regs[i] for i in resources]


@pytest.mark.gpu
def test_unmap_all_is_one_call(fake, gpu):
    s, other = gpu.create_stream(), gpu.create_stream()
    a, b, c = (cucore.GraphicsResource.from_gl_buffer(fake.name()) for _ in range(3))
    ia, ib, ic = _ids(fake)
    bufs = cucore.GraphicsResource.map_all([a, b, c], s)
    cucore.GraphicsResource.unmap_all([a, b, c])  # no stream: the one they were mapped on
    assert _unmaps(fake) == [([ia, ib, ic], s.handle)]
    assert [x.size for x in bufs] == [0, 0, 0]
    assert not (a.is_mapped or b.is_mapped or c.is_mapped)
    del bufs
    gc.collect()
    assert len(_unmaps(fake)) == 1, "releasing the unmapped buffers unmaps nothing more"
    # The override stream, in another order than the map's.
    bufs = cucore.GraphicsResource.map_all([a, b], s)
    cucore.GraphicsResource.unmap_all((b, a), stream=other)
    assert _unmaps(fake)[1:] == [([ib, ia], other.handle)] and [x.size for x in bufs] == [0, 0]
    # Mapped one by one, on different streams: the stream must be named.
    va, vb = a.map(stream=s), b.map(stream=other)
    with pytest.raises(ValueError, match="different streams") as e:
        cucore.GraphicsResource.unmap_all([a, b])
    assert isinstance(e.value, cucore.InvalidArgumentError)
    assert a.is_mapped and b.is_mapped and va.size == vb.size == 4096, "a refused call unmaps nothing"
    cucore.GraphicsResource.unmap_all([a, b], other)
    assert _unmaps(fake)[2:] == [([ia, ib], other.handle)] and va.size == vb.size == 0
    # Images too (their arrays become unusable).
    img = cucore.GraphicsResource.from_gl_image(fake.name(), GL_TEXTURE_2D)
    arr = img.map_array(stream=s)
    vc = c.map(stream=s)
    cucore.GraphicsResource.unmap_all([img, c])
    assert not img.is_mapped and vc.size == 0 and len(_unmaps(fake)) == 4
    with pytest.raises(cucore.InvalidStateError):
        arr.to_bytes(stream=s)
    del arr, vc
    gc.collect()
    assert len(_unmaps(fake)) == 4
    for r in (a, b, c, img):
        r.close()
    assert [ln.split()[0] for ln in fake.lines()].count("unregister") == 4


@pytest.mark.gpu
def test_unmap_all_errors(fake, gpu):
    s = gpu.create_stream()
    a, b, c = (cucore.GraphicsResource.from_gl_buffer(fake.name()) for _ in range(3))
    va = a.map(stream=s)
    with pytest.raises(cucore.InvalidStateError, match=r"resources\[1\] is not mapped") as e:
        cucore.GraphicsResource.unmap_all([a, b])
    assert isinstance(e.value, RuntimeError)
    c.close()
    with pytest.raises(cucore.InvalidStateError, match=r"resources\[1\] is closed"):
        cucore.GraphicsResource.unmap_all([a, c])
    with pytest.raises(ValueError, match="twice"):
        cucore.GraphicsResource.unmap_all([a, a])
    with pytest.raises(ValueError, match="twice"):
        cucore.GraphicsResource.unmap_all([a, copy.copy(a)])  # two wrappers of one registration
    with pytest.raises(cucore.InvalidArgumentError, match="at least one"):
        cucore.GraphicsResource.unmap_all([])
    with pytest.raises(TypeError, match="GraphicsResources"):
        cucore.GraphicsResource.unmap_all([a, va])
    with pytest.raises(TypeError, match="list of GraphicsResources"):
        cucore.GraphicsResource.unmap_all(a)
    with pytest.raises(TypeError, match="stream"):
        cucore.GraphicsResource.unmap_all([a], stream=5)
    assert a.is_mapped and va.size == 4096, "no failed call unmapped anything"
    assert _unmaps(fake) == []
    cucore.GraphicsResource.unmap_all([a])
    assert va.size == 0 and len(_unmaps(fake)) == 1
    with pytest.raises(cucore.InvalidStateError, match=r"resources\[0\] is not mapped"):
        cucore.GraphicsResource.unmap_all([a])
    a.close()
    b.close()


@pytest.mark.gpu
def test_unmap_all_driver_failure(fake, gpu, monkeypatch):
    s = gpu.create_stream()
    a, b = (cucore.GraphicsResource.from_gl_buffer(fake.name()) for _ in range(2))
    bufs = cucore.GraphicsResource.map_all([a, b], s)
    before = cucore.release_error_count()
    monkeypatch.setenv("FAKE_CUDA_FAIL", "cuGraphicsUnmapResources:after")
    with pytest.raises(cucore.DriverError, match="cuGraphicsUnmapResources") as e:
        cucore.GraphicsResource.unmap_all([a, b])
    monkeypatch.delenv("FAKE_CUDA_FAIL")
    assert e.value.cuda_result == 999  # CUDA_ERROR_UNKNOWN, the fake's injected failure
    assert not a.is_mapped and not b.is_mapped and [x.size for x in bufs] == [0, 0]
    del bufs
    gc.collect()
    assert len(_unmaps(fake)) == 1, "the failed call counts as the unmap: nothing more on release"
    assert cucore.release_error_count() == before
    bufs = cucore.GraphicsResource.map_all([a, b], s)  # mappable again
    assert [x.size for x in bufs] == [4096, 4096]
    a.close()
    b.close()


@pytest.mark.gpu
def test_map_all_with_block(fake, gpu):
    s, other = gpu.create_stream(), gpu.create_stream()
    a, b, c = (cucore.GraphicsResource.from_gl_buffer(fake.name()) for _ in range(3))
    ia, ib, ic = _ids(fake)
    with cucore.GraphicsResource.map_all([a, b, c], s) as (va, vb, vc):
        assert all(x.size == 4096 for x in (va, vb, vc))
        va.fill(1, stream=s)
        b.unmap()  # on its own, inside the block: the batch's end leaves it out
        assert vb.size == 0
    assert _unmaps(fake) == [([ib], s.handle), ([ia, ic], s.handle)]
    assert va.size == vc.size == 0 and not (a.is_mapped or b.is_mapped or c.is_mapped)
    # A buffer closed inside the block (it unmaps its resource) is left out too.
    with cucore.GraphicsResource.map_all([a, b], s) as bufs:
        assert isinstance(bufs, cucore.MappedBuffers) and isinstance(bufs, list) and len(bufs) == 2
        bufs[1].close()
    assert _unmaps(fake)[2:] == [([ib], s.handle), ([ia], s.handle)]
    # Nothing left to unmap at the end: no call at all.
    with cucore.GraphicsResource.map_all([a, b], s) as (va, vb):
        cucore.GraphicsResource.unmap_all([b, a])
    assert len(_unmaps(fake)) == 5
    # unmap() ends the batch now, on the override stream; the block's end then does nothing.
    with cucore.GraphicsResource.map_all([a, b, c], s) as bufs:
        bufs.unmap(other)
        assert [x.size for x in bufs] == [0, 0, 0]
    assert _unmaps(fake)[5:] == [([ia, ib, ic], other.handle)]
    # Without `with`, the buffers still unmap one by one when released.
    bufs = cucore.GraphicsResource.map_all([a, b], s)
    del bufs
    gc.collect()
    assert len(_unmaps(fake)) == 8 and not a.is_mapped and not b.is_mapped
    # An exception leaving the block still unmaps the batch, in one call.
    with pytest.raises(KeyError):
        with cucore.GraphicsResource.map_all([a, c], s):
            raise KeyError("inside the block")
    assert _unmaps(fake)[8:] == [([ia, ic], s.handle)]
    for r in (a, b, c):
        r.close()


@pytest.mark.gpu
def test_map_all_with_block_unmap_failure(fake, gpu, monkeypatch):
    s = gpu.create_stream()
    a, b = (cucore.GraphicsResource.from_gl_buffer(fake.name()) for _ in range(2))
    # No exception in the block: the failure raises from the block's end; they are unmapped all the same.
    with pytest.raises(cucore.DriverError, match="cuGraphicsUnmapResources"):
        with cucore.GraphicsResource.map_all([a, b], s) as (va, vb):
            monkeypatch.setenv("FAKE_CUDA_FAIL", "cuGraphicsUnmapResources:after")
    monkeypatch.delenv("FAKE_CUDA_FAIL")
    assert not a.is_mapped and not b.is_mapped and va.size == vb.size == 0
    # An exception in the block: it propagates unchanged, and the unmap failure goes to the release-error
    # path instead of replacing it.
    calls = []
    before = cucore.release_error_count()
    previous = cucore.set_release_error_handler(lambda *args: calls.append(args))
    try:
        with pytest.raises(KeyError, match="inside"):
            with cucore.GraphicsResource.map_all([a, b], s) as (va, vb):
                monkeypatch.setenv("FAKE_CUDA_FAIL", "cuGraphicsUnmapResources:after")
                raise KeyError("inside the block")
        monkeypatch.delenv("FAKE_CUDA_FAIL")
    finally:
        cucore.set_release_error_handler(previous)
    assert cucore.release_error_count() == before + 1
    assert len(calls) == 1 and calls[0][0] == cucore.Status.ERROR_CUDA and calls[0][1] == 999
    assert "cuGraphicsUnmapResources" in calls[0][2]
    assert not a.is_mapped and not b.is_mapped and va.size == vb.size == 0
    assert len(_unmaps(fake)) == 2
    a.close()
    b.close()


@pytest.mark.gpu
def test_images_map_as_arrays(fake, gpu):
    s = gpu.create_stream()
    img = cucore.GraphicsResource.from_gl_image(fake.name(), GL_TEXTURE_2D, flags=["surface_load_store"])
    assert img.is_image
    with pytest.raises(RuntimeError, match="maps as arrays"):
        img.map(stream=s)
    with img.map_array(stream=s) as arr:
        assert isinstance(arr, cucore.OpaqueArray) and isinstance(arr, cucore.texture.OpaqueArray)
        assert (arr.num_channels, arr.element_bytes, arr.shape, arr.is_mipmapped) == (4, 4, (16, 8), False)
        assert arr.nbytes == arr.size_bytes == 16 * 8 * 4 and arr.handle != 0 and arr.resource is img
        assert not arr.is_owned and arr.format == "uint8"
        with pytest.raises(ValueError, match="3 bytes, smaller than the array extent"):
            arr.copy_from(b"\0" * 3, stream=s)
    assert not img.is_mapped
    # a texture object over the mapped array holds the mapping too
    arr = img.map_array(stream=s)
    tex = gpu.create_texture_object(resource=cucore.ResourceDescriptor.from_opaque_array(arr))
    arr.close()
    assert img.is_mapped
    tex.close()
    assert not img.is_mapped
    mip = img.map_mipmapped_array(stream=s)
    assert isinstance(mip, cucore.MipmappedArray) and mip.is_mipmapped and mip.resource is img
    level1 = mip.level(1)
    assert level1.shape == (8, 4) and level1.resource is img
    del mip
    gc.collect()
    assert img.is_mapped, "a level holds the mapping"
    del level1
    gc.collect()
    assert not img.is_mapped
    # after an explicit unmap the array answers InvalidStateError (libcucore's), and its description stays
    arr = img.map_array(stream=s)
    assert arr.shape == (16, 8)
    img.unmap()
    with pytest.raises(cucore.InvalidStateError):
        arr.copy_to(bytearray(arr.size_bytes), stream=s)
    assert arr.shape == (16, 8)
    arr.close()
    img.close()
    assert [ln.split()[0] for ln in fake.lines()] == ["register", "map", "unmap", "map", "unmap", "map", "unmap",
                                                     "map", "unmap", "unregister"]


@pytest.mark.gpu
def test_release_failures_are_reported(fake, gpu, monkeypatch):
    s = gpu.create_stream()
    calls = []
    before = cucore.release_error_count()
    previous = cucore.set_release_error_handler(lambda *args: calls.append(args))
    try:
        res = cucore.GraphicsResource.from_gl_buffer(fake.name())
        buf = res.map(stream=s)
        monkeypatch.setenv("FAKE_CUDA_FAIL", "cuGraphicsUnmapResources:after")
        del buf
        gc.collect()
        monkeypatch.setenv("FAKE_CUDA_FAIL", "cuGraphicsUnregisterResource:after")
        del res
        gc.collect()
        monkeypatch.delenv("FAKE_CUDA_FAIL")
    finally:
        cucore.set_release_error_handler(previous)
    assert cucore.release_error_count() == before + 2
    assert len(calls) == 2
    assert all(c[0] == cucore.Status.ERROR_CUDA and c[1] == 999 for c in calls)
    assert [ln.split()[0] for ln in fake.lines()] == ["register", "map", "unmap", "unregister"]


@pytest.mark.gpu
def test_explicit_unmap_failure_raises_and_unmaps(fake, gpu, monkeypatch):
    s = gpu.create_stream()
    res = cucore.GraphicsResource.from_gl_buffer(fake.name())
    buf = res.map(stream=s)
    monkeypatch.setenv("FAKE_CUDA_FAIL", "cuGraphicsUnmapResources:after")
    with pytest.raises(cucore.DriverError):
        res.unmap()
    monkeypatch.delenv("FAKE_CUDA_FAIL")
    assert not res.is_mapped and buf.size == 0
    res.close()


@pytest.mark.gpu
def test_gl_get_devices_under_the_fake(fake):
    assert cucore.gl_get_devices() == [0]
    assert cucore.gl_get_devices("current_frame") == [0]


@pytest.mark.gpu
def test_map_unmap_cycles_leak_nothing(fake, gpu):
    s = gpu.create_stream()
    before = cucore.live_object_count()
    res = cucore.GraphicsResource.from_gl_buffer(fake.name())
    for _ in range(2000):
        with res.map(stream=s):
            pass
    res.close()
    del res
    gc.collect()
    assert cucore.live_object_count() == before


# ---- a real NVIDIA GL context ----------------------------------------------------------------------------

@pytest.fixture
def egl(gpu):
    if FAKE_DRIVER:
        pytest.skip("the fake driver has no GL")
    from egl_context import EglContext, EglUnavailable
    try:
        ctx = EglContext(0)
    except EglUnavailable as e:
        pytest.skip(f"no NVIDIA GL context: {e}")
    try:
        yield ctx
    finally:
        ctx.close()


@pytest.mark.gpu
def test_gl_devices(egl):
    assert 0 in cucore.gl_get_devices()


@pytest.mark.gpu
def test_gl_buffer_cuda_writes_gl_reads(egl, gpu):
    s = gpu.create_stream()
    vbo = egl.gl.gen_buffer(size=4096)
    pattern = bytes((i * 7) & 0xFF for i in range(4096))
    with cucore.GraphicsResource.from_gl_buffer(vbo, flags="write_discard", stream=s) as buf:
        assert buf.size == 4096
        buf.copy_from_host(pattern, stream=s)
        s.sync()
    assert egl.gl.read_buffer(vbo, 4096) == pattern
    with cucore.GraphicsResource.from_gl_buffer(vbo) as res:
        with res.map(stream=s) as buf:
            buf.fill(0x5A, stream=s)
            s.sync()
    assert egl.gl.read_buffer(vbo, 4096) == b"\x5a" * 4096
    egl.gl.delete_buffer(vbo)


@pytest.mark.gpu
def test_gl_buffer_gl_writes_cuda_reads(egl, gpu):
    s = gpu.create_stream()
    data = bytes(range(256)) * 4
    vbo = egl.gl.gen_buffer(data=data)
    with cucore.GraphicsResource.from_gl_buffer(vbo, flags="read_only") as res:
        with res.map(stream=s, hint="read_only") as buf:
            assert buf.to_bytes(stream=s) == data
    egl.gl.delete_buffer(vbo)


@pytest.mark.gpu
def test_gl_rgba8_texture_through_arrays(egl, gpu):
    s = gpu.create_stream()
    w, h = 32, 16
    pixels = bytes((x * 5 + y * 11 + c) & 0xFF for y in range(h) for x in range(w) for c in range(4))
    tex = egl.gl.gen_texture(w, h)
    with cucore.GraphicsResource.from_gl_image(tex, GL_TEXTURE_2D, flags="surface_load_store") as res:
        with res.map_array(stream=s, hint="write_discard") as arr:
            assert arr.shape == (w, h) and arr.num_channels == 4 and arr.nbytes == len(pixels)
            arr.copy_from(pixels, stream=s)
            s.sync()
    assert egl.gl.read_texture(tex, len(pixels)) == pixels
    upload = bytes(reversed(pixels))
    tex2 = egl.gl.gen_texture(w, h, data=upload)
    res2 = cucore.GraphicsResource.from_gl_image(tex2, GL_TEXTURE_2D)
    with res2.map_array(stream=s) as arr:
        assert arr.to_bytes(stream=s) == upload
        dev_buf = gpu.allocate(arr.nbytes, stream=s)
        arr.copy_to(dev_buf, stream=s)
        assert dev_buf.to_bytes(stream=s) == upload
        dev_buf.fill(0x11, stream=s)
        arr.copy_from(dev_buf, stream=s)
        s.sync()
    res2.close()
    assert egl.gl.read_texture(tex2, len(upload)) == b"\x11" * len(upload)
    egl.gl.delete_texture(tex)
    egl.gl.delete_texture(tex2)


GL_SAMPLER = r"""
extern "C" __global__ void read_rgba8(cudaTextureObject_t tex, uchar4 *out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[y * w + x] = tex2D<uchar4>(tex, x + 0.5f, y + 0.5f);
}
"""


@pytest.mark.gpu
def test_gl_texture_sampled_through_a_texture_object(egl, gpu):
    try:
        cucore.compiler_version("nvrtc")
    except cucore.CUDAError as e:
        pytest.skip(f"NVRTC is not installed: {e}")
    cc = gpu.compute_capability
    kernel = cucore.Program(GL_SAMPLER, "c++", cucore.ProgramOptions(arch=f"sm_{cc.major}{cc.minor}")) \
        .compile("cubin").get_kernel("read_rgba8")
    s = gpu.create_stream()
    w, h = 24, 10
    pixels = bytes((x * 7 + y * 3 + c * 50) & 0xFF for y in range(h) for x in range(w) for c in range(4))
    name = egl.gl.gen_texture(w, h, data=pixels)
    with cucore.GraphicsResource.from_gl_image(name, GL_TEXTURE_2D, flags="read_only") as res:
        arr = res.map_array(stream=s)
        tex = gpu.create_texture_object(resource=cucore.ResourceDescriptor.from_opaque_array(arr))
        arr.close()  # the texture object holds the mapping
        assert res.is_mapped
        out = gpu.allocate(w * h * 4, stream=s)
        cucore.launch(s, cucore.LaunchConfig(grid=((w + 7) // 8, (h + 7) // 8), block=(8, 8)), kernel, tex, out, w, h)
        got = out.to_bytes(stream=s)
        tex.close()
        assert not res.is_mapped
    assert got == pixels
    egl.gl.delete_texture(name)


@pytest.mark.gpu
def test_gl_batch_map(egl, gpu):
    s = gpu.create_stream()
    vbos = [egl.gl.gen_buffer(size=1024) for _ in range(3)]
    resources = [cucore.GraphicsResource.from_gl_buffer(v) for v in vbos]
    bufs = cucore.GraphicsResource.map_all(resources, s)
    for i, b in enumerate(bufs):
        b.fill(i + 1, stream=s)
    s.sync()
    for b in bufs:
        b.close()
    for r in resources:
        r.close()
    assert [egl.gl.read_buffer(v, 1024) for v in vbos] == [bytes([i + 1]) * 1024 for i in range(3)]


@pytest.mark.gpu
def test_gl_batch_unmap(egl, gpu):
    s = gpu.create_stream()
    size = 4096
    vbos = [egl.gl.gen_buffer(size=size) for _ in range(4)]
    resources = [cucore.GraphicsResource.from_gl_buffer(v) for v in vbos]
    bufs = cucore.GraphicsResource.map_all(resources, s)
    pattern = bytes((i * 13 + 5) & 0xFF for i in range(size))
    for i, b in enumerate(bufs[:3]):
        b.fill(0x21 + i, stream=s)
    bufs[3].copy_from_host(pattern, stream=s)
    # No sync: the unmap orders the stream's work before the GL commands issued after it.
    cucore.GraphicsResource.unmap_all(resources)
    assert [b.size for b in bufs] == [0] * 4 and not any(r.is_mapped for r in resources)
    expected = [bytes([0x21 + i]) * size for i in range(3)] + [pattern]
    assert [egl.gl.read_buffer(v, size) for v in vbos] == expected
    # The same through the batch's `with` block, one buffer unmapped on its own inside it.
    with cucore.GraphicsResource.map_all(resources, s) as mapped:
        for i, b in enumerate(mapped):
            b.fill(0x40 + i, stream=s)
        resources[1].unmap()
    assert not any(r.is_mapped for r in resources)
    assert [egl.gl.read_buffer(v, size) for v in vbos] == [bytes([0x40 + i]) * size for i in range(4)]
    for r in resources:
        r.close()
    for v in vbos:
        egl.gl.delete_buffer(v)


@pytest.mark.gpu
def test_gl_errors(egl, gpu):
    s = gpu.create_stream()
    with pytest.raises(cucore.CUDAError, match="GL buffer 987654"):
        cucore.GraphicsResource.from_gl_buffer(987654)
    vbo = egl.gl.gen_buffer(size=256)
    res = cucore.GraphicsResource.from_gl_buffer(vbo)
    with pytest.raises(RuntimeError, match="not mapped"):
        res.unmap()
    with res.map(stream=s):
        with pytest.raises(RuntimeError, match="already mapped"):
            res.map(stream=s)
    res.close()
    with pytest.raises(cucore.InvalidStateError):
        res.map(stream=s)
    egl.gl.delete_buffer(vbo)


@pytest.mark.gpu
def test_gl_without_a_current_context(egl, gpu):
    vbo = egl.gl.gen_buffer(size=256)
    errors = []

    def other_thread():  # no GL context is current here
        try:
            cucore.GraphicsResource.from_gl_buffer(vbo)
        except cucore.CUDAError as e:
            errors.append(e)

    t = threading.Thread(target=other_thread)
    t.start()
    t.join()
    assert len(errors) == 1 and "GL" in str(errors[0])
    egl.gl.delete_buffer(vbo)


@pytest.mark.gpu
def test_gl_map_cycles_leak_nothing(egl, gpu):
    s = gpu.create_stream()
    vbo = egl.gl.gen_buffer(size=256)
    # One cycle first: it creates what lives for the process (the device's cached default stream object,
    # which a registration without a stream uses); the 10,000 cycles after it must add nothing.
    with cucore.GraphicsResource.from_gl_buffer(vbo) as res:
        with res.map(stream=s):
            pass
    gc.collect()
    before = cucore.live_object_count()
    with cucore.GraphicsResource.from_gl_buffer(vbo) as res:
        for _ in range(10000):
            with res.map(stream=s):
                pass
    gc.collect()
    assert cucore.live_object_count() == before
    egl.gl.delete_buffer(vbo)
