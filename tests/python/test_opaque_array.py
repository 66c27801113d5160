"""Opaque and mipmapped arrays (bindings/python/cucore/opaque_array.py, cucore.texture, cucore.typing).

Without a GPU: the names (cuda.core's, the seed's), the string enums, option checks with cuda.core's
exceptions and messages, the options' translation into the C struct field by field. With a GPU or the fake
driver (the `gpu` tests; test_fake_driver.py reruns them there): creation of every kind, the description,
whole-array copies of every format and channel count (bytes, Buffers, other arrays, NumPy arrays) read back
bit-exact, region copies, levels, foreign handles, lifetimes and errors."""
import array
import gc
import random
import weakref

import pytest

import cucore
from cucore import _lib, texture, textures
from cucore._array_options import FLAG_VALUES, FORMAT_VALUES, KIND_VALUES, format_of
from cucore.typing import AddressModeType, ArrayFormatType, ArrayKindType, FilterModeType, ReadModeType

PLAIN = {"uint8": 1, "uint16": 2, "uint32": 4, "int8": 1, "int16": 2, "int32": 4, "float16": 2, "float32": 4}


def data(n, seed):
    return random.Random(seed).randbytes(n)


# ---- names -------------------------------------------------------------------------------------------------

def test_cuda_core_names():
    for name in ("OpaqueArray", "OpaqueArrayOptions", "MipmappedArray", "MipmappedArrayOptions", "ResourceDescriptor",
                 "TextureObject", "TextureObjectOptions", "SurfaceObject"):
        assert getattr(texture, name) is getattr(cucore, name), name
    for name in ("ArrayFormatType", "AddressModeType", "FilterModeType", "ReadModeType"):
        assert getattr(texture, name) is getattr(cucore.typing, name)
    for name in ("create_opaque_array", "create_mipmapped_array", "create_texture_object", "create_surface_object"):
        assert callable(getattr(cucore.Device, name))


def test_the_seed_spelling_is_the_same_class():
    assert textures.CUDAArray is cucore.OpaqueArray is texture.OpaqueArray
    assert textures.ArrayFormat is ArrayFormatType
    assert callable(textures.CUDAArray.from_descriptor)
    for attr in ("element_size", "element_bytes", "size_bytes", "shape", "format", "num_channels", "device", "handle",
                 "is_surface_load_store"):
        assert isinstance(getattr(cucore.OpaqueArray, attr), property), attr


def test_enums_are_cuda_cores_strings():
    assert [m.value for m in ArrayFormatType][:8] == list(PLAIN)
    assert [m.value for m in AddressModeType] == ["wrap", "clamp", "mirror", "border"]
    assert [m.value for m in FilterModeType] == ["point", "linear"]
    assert [m.value for m in ReadModeType] == ["element_type", "normalized_float"]
    assert [m.value for m in ArrayKindType] == ["plain", "layered", "cubemap", "layered_cubemap"]
    assert ArrayFormatType.FLOAT32 == "float32" and isinstance(ArrayFormatType.FLOAT32, str)
    assert str(FilterModeType.LINEAR) == "linear" and f"{AddressModeType.WRAP}" == "wrap"


def test_every_c_value_has_its_name():
    # the names are Python's (cuda.core's); their values come from the header, and none is missing
    c_formats = _lib.c_names("cucore_array_format_t", "CUCORE_ARRAY_FORMAT_", skip=("unset",))
    assert {f.value for f in ArrayFormatType} == set(c_formats)
    assert all(FORMAT_VALUES[f] == c_formats[f.value] for f in ArrayFormatType)
    assert FORMAT_VALUES[ArrayFormatType.FLOAT32] == 0x20 and FORMAT_VALUES[ArrayFormatType.BC7_UNORM] == 0x9d
    assert {k.value for k in ArrayKindType} == set(_lib.c_names("cucore_array_kind_t", "CUCORE_ARRAY_KIND_"))
    assert set(FLAG_VALUES) == {"surface_load_store", "texture_gather", "depth_texture", "sparse"}
    assert {m.value for m in AddressModeType} == set(_lib.c_names("cucore_address_mode_t", "CUCORE_ADDRESS_MODE_"))
    assert {m.value for m in FilterModeType} == set(_lib.c_names("cucore_filter_mode_t", "CUCORE_FILTER_MODE_"))
    assert {m.value for m in ReadModeType} == set(_lib.c_names("cucore_read_mode_t", "CUCORE_READ_MODE_"))
    assert cucore.ObjectType.OPAQUE_ARRAY == 13 and cucore.ObjectType.MIPMAPPED_ARRAY == 14


def test_direct_instantiation_is_refused():
    with pytest.raises(RuntimeError, match=r"^OpaqueArray cannot be instantiated directly"):
        cucore.OpaqueArray()
    with pytest.raises(RuntimeError, match=r"^MipmappedArray cannot be instantiated directly"):
        cucore.MipmappedArray()


# ---- formats and options -----------------------------------------------------------------------------------

def test_formats_from_members_and_strings():
    assert format_of(ArrayFormatType.UINT16) is ArrayFormatType.UINT16
    assert format_of("float32") is ArrayFormatType.FLOAT32
    assert format_of("BC1_UNORM") is ArrayFormatType.BC1_UNORM
    with pytest.raises(ValueError, match="format must be an ArrayFormatType"):
        format_of(0)
    with pytest.raises(ValueError, match="format must be an ArrayFormatType or one of"):
        format_of("float64")


def test_formats_from_numpy_dtypes():
    np = pytest.importorskip("numpy")
    for dt, want in ((np.float32, "float32"), (np.dtype("float16"), "float16"), (np.uint8, "uint8"),
                     (np.dtype("i4"), "int32"), (np.int16, "int16"), (np.dtype(np.uint32), "uint32")):
        assert format_of(dt) is ArrayFormatType(want)
    with pytest.raises(ValueError, match="no ArrayFormatType equivalent"):
        format_of(np.float64)
    with pytest.raises(ValueError, match="no ArrayFormatType equivalent"):
        format_of(np.dtype(">i4"))  # not the device's byte order
    assert cucore.OpaqueArrayOptions((8, 8), np.float32, 1).format is ArrayFormatType.FLOAT32


def test_options_are_checked_when_made():
    o = cucore.OpaqueArrayOptions(shape=(32, 16), format="float32", num_channels=1)
    assert (o.shape, o.format, o.num_channels, o.is_surface_load_store, o.kind, o.num_layers) == \
        ((32, 16), ArrayFormatType.FLOAT32, 1, False, ArrayKindType.PLAIN, 0)
    assert cucore.OpaqueArrayOptions([8], "uint8", 2).shape == (8,)
    with pytest.raises(ValueError, match="num_channels"):
        cucore.OpaqueArrayOptions(shape=(8,), format=ArrayFormatType.UINT8, num_channels=3)
    with pytest.raises(ValueError, match="shape rank"):
        cucore.OpaqueArrayOptions(shape=(2, 2, 2, 2), format="uint8", num_channels=1)
    with pytest.raises(ValueError, match="shape rank"):
        cucore.OpaqueArrayOptions(shape=(), format="uint8", num_channels=1)
    with pytest.raises(TypeError, match="shape must be a tuple"):
        cucore.OpaqueArrayOptions(shape=8, format="uint8", num_channels=1)
    with pytest.raises(TypeError, match="shape must be a tuple"):
        cucore.OpaqueArrayOptions(shape=(8, 2.5), format="uint8", num_channels=1)
    with pytest.raises(ValueError, match=r"shape\[1\] must be >= 1"):
        cucore.OpaqueArrayOptions(shape=(8, 0), format="uint8", num_channels=1)
    with pytest.raises(ValueError, match="format must be an ArrayFormatType"):
        cucore.OpaqueArrayOptions(shape=(8,), format=0, num_channels=1)
    with pytest.raises(ValueError, match="kind must be an ArrayKindType"):
        cucore.OpaqueArrayOptions((8, 8), "uint8", 1, kind="cube")
    with pytest.raises(TypeError, match="is_surface_load_store"):
        cucore.OpaqueArrayOptions((8, 8), "uint8", 1, is_surface_load_store=1)
    with pytest.raises(TypeError, match="num_layers"):
        cucore.OpaqueArrayOptions((8, 8), "uint8", 1, kind="layered", num_layers=2.0)
    with pytest.raises(TypeError):
        cucore.OpaqueArrayOptions((8, 8), "uint8", 1, False, "layered")  # beyond cuda.core: keyword-only
    m = cucore.MipmappedArrayOptions((64, 32), "uint8", 4, 3)
    assert m.num_levels == 3
    with pytest.raises(ValueError, match="num_levels"):
        cucore.MipmappedArrayOptions(shape=(8, 8), format="uint8", num_channels=1, num_levels=0)
    with pytest.raises(ValueError, match="num_channels"):
        cucore.MipmappedArrayOptions(shape=(8, 8), format="uint8", num_channels=3, num_levels=2)
    with pytest.raises(ValueError, match=r"shape\[0\] must be >= 1"):
        cucore.MipmappedArrayOptions(shape=(0, 8), format="uint8", num_channels=1, num_levels=1)


def test_options_translate_field_by_field():
    c = cucore.OpaqueArrayOptions((64, 32), "uint16", 2, True, kind="layered", num_layers=5, is_texture_gather=True,
                                  is_depth_texture=True, is_sparse=True)._struct()
    assert c.struct_size == ctypes_sizeof("cucore_opaque_array_options_t")
    assert (c.format, c.num_channels, c.kind, c.flags) == \
        (_lib.C["CUCORE_ARRAY_FORMAT_UINT16"], 2, _lib.C["CUCORE_ARRAY_KIND_LAYERED"], 1 | 2 | 4 | 8)
    assert (c.width, c.height, c.depth, c.layers, c.reserved0) == (64, 32, 0, 5, 0)
    c = cucore.OpaqueArrayOptions((7, 6, 5), ArrayFormatType.FLOAT32, 4)._struct()
    assert (c.format, c.num_channels, c.kind, c.flags, c.width, c.height, c.depth, c.layers) == \
        (0x20, 4, 0, 0, 7, 6, 5, 0)
    c = cucore.OpaqueArrayOptions((16, 16), "bc1_unorm", None, kind="layered_cubemap", num_layers=2)._struct()
    assert (c.format, c.num_channels, c.kind, c.width, c.height, c.layers) == (0x91, 0, 3, 16, 16, 2)
    assert KIND_VALUES[ArrayKindType.CUBEMAP] == 2


def ctypes_sizeof(name):
    import ctypes
    return ctypes.sizeof(_lib.STRUCTS[name])


def test_array_region_checks_its_fields():
    with pytest.raises(TypeError, match="OpaqueArray"):
        cucore.ArrayRegion(b"not an array")


# ---- arrays on a device (a GPU or the fake driver) ------------------------------------------------------------

@pytest.fixture
def s(gpu):
    return gpu.create_stream()


def make(dev, shape, fmt="float32", channels=1, **kw):
    return dev.create_opaque_array(cucore.OpaqueArrayOptions(shape, fmt, channels, **kw))


@pytest.mark.gpu
def test_a_2d_array_describes_itself(gpu):
    arr = gpu.create_opaque_array(cucore.OpaqueArrayOptions(shape=(32, 16), format=ArrayFormatType.FLOAT32,
                                                            num_channels=1))
    try:
        assert arr.shape == (32, 16) and (arr.width, arr.height, arr.depth, arr.num_layers) == (32, 16, 0, 0)
        assert arr.format is ArrayFormatType.FLOAT32 and arr.num_channels == 1
        assert arr.element_bytes == arr.element_size == 4
        assert arr.size_bytes == arr.nbytes == 32 * 16 * 4
        assert (arr.row_bytes, arr.row_count, arr.slice_count) == (128, 16, 1)
        assert arr.is_surface_load_store is False and arr.flags == frozenset()
        assert arr.kind is ArrayKindType.PLAIN and arr.is_owned and not arr.is_mipmapped
        assert arr.handle != 0 and arr.device == gpu and arr.resource is None
        assert isinstance(arr, texture.OpaqueArray) and "OpaqueArray(shape=(32, 16)" in repr(arr)
    finally:
        arr.close()


@pytest.mark.gpu
@pytest.mark.parametrize("shape, kw, slices, rows", [
    ((100,), {}, 1, 1),
    ((8, 8, 4), {"is_surface_load_store": True}, 4, 8),
    ((16,), {"kind": "layered", "num_layers": 3}, 3, 1),
    ((16, 8), {"kind": "layered", "num_layers": 4}, 4, 8),
    ((16, 16), {"kind": "cubemap"}, 6, 16),
    ((8, 8), {"kind": "layered_cubemap", "num_layers": 2}, 12, 8),
])
def test_kinds_and_their_packed_layout(gpu, shape, kw, slices, rows):
    with make(gpu, shape, "uint8", 4, **kw) as arr:
        assert arr.shape == shape and arr.element_bytes == 4
        assert arr.kind == kw.get("kind", "plain") and arr.num_layers == kw.get("num_layers", 0)
        assert (arr.row_bytes, arr.row_count, arr.slice_count) == (shape[0] * 4, rows, slices)
        assert arr.size_bytes == shape[0] * 4 * rows * slices
        assert arr.is_surface_load_store == kw.get("is_surface_load_store", False)
        assert ("surface_load_store" in arr.flags) == arr.is_surface_load_store


@pytest.mark.gpu
def test_options_as_a_dict_and_the_seed_spelling(gpu, s):
    arr = gpu.create_opaque_array({"shape": (4, 4), "format": "int16", "num_channels": 2})
    assert (arr.shape, arr.format, arr.element_bytes) == ((4, 4), ArrayFormatType.INT16, 4)
    arr.close()
    seed = textures.CUDAArray.from_descriptor(shape=(16,), format=textures.ArrayFormat.UINT32, num_channels=1,
                                              is_surface_load_store=True)
    assert type(seed) is cucore.OpaqueArray and seed.is_surface_load_store and seed.element_size == 4
    src = array.array("I", range(16))
    dst = array.array("I", [0] * 16)
    seed.copy_from(src, stream=s)
    assert seed.copy_to(dst, stream=s) is dst
    s.sync()
    assert list(dst) == list(range(16)) and list(src) == list(range(16))
    with pytest.raises(TypeError, match="OpaqueArrayOptions"):
        gpu.create_opaque_array(cucore.MipmappedArrayOptions((4,), "uint8", 1, 1))


@pytest.mark.gpu
@pytest.mark.parametrize("fmt", list(PLAIN))
@pytest.mark.parametrize("channels", [1, 2, 4])
def test_every_plain_format_round_trips_bit_exact(gpu, s, fmt, channels):
    shape = (13, 5)
    with make(gpu, shape, fmt, channels) as arr:
        assert arr.element_bytes == PLAIN[fmt] * channels and arr.format == fmt and arr.num_channels == channels
        payload = data(arr.size_bytes, hash((fmt, channels)) & 0xFFFF)
        arr.copy_from(payload, stream=s)                      # bytes
        out = bytearray(arr.size_bytes)
        assert arr.copy_to(out, stream=s) is out
        s.sync()
        assert out == payload
        assert arr.to_bytes(stream=s) == payload
        mv = memoryview(bytearray(arr.size_bytes + 7))         # a longer destination: the rest is untouched
        mv[-7:] = b"\x99" * 7
        arr.copy_to(mv, stream=s)
        s.sync()
        assert bytes(mv[:arr.size_bytes]) == payload and bytes(mv[-7:]) == b"\x99" * 7


@pytest.mark.gpu
@pytest.mark.parametrize("fmt, channels, element", [
    ("unorm_int8x1", 1, 1), ("unorm_int8x2", 2, 2), ("unorm_int8x4", 4, 4), ("unorm_int16x1", 1, 2),
    ("unorm_int16x2", 2, 4), ("unorm_int16x4", 4, 8), ("snorm_int8x1", 1, 1), ("snorm_int8x2", 2, 2),
    ("snorm_int8x4", 4, 4), ("snorm_int16x1", 1, 2), ("snorm_int16x2", 2, 4), ("snorm_int16x4", 4, 8),
    ("unorm_int_101010_2", 4, 4),
])
def test_formats_with_their_own_channel_count_round_trip(gpu, s, fmt, channels, element):
    with make(gpu, (9, 3), fmt, None) as arr:
        assert arr.num_channels == channels and arr.element_bytes == element
        payload = data(arr.size_bytes, 7)
        arr.copy_from(bytearray(payload), stream=s)
        assert arr.to_bytes(stream=s) == payload


@pytest.mark.gpu
@pytest.mark.parametrize("fmt, block", [("bc1_unorm", 8), ("bc2_unorm", 16), ("bc3_unorm", 16), ("bc4_unorm", 8),
                                        ("bc4_snorm", 8), ("bc5_unorm", 16), ("bc5_snorm", 16), ("bc6h_uf16", 16),
                                        ("bc6h_sf16", 16), ("bc7_unorm", 16), ("bc7_unorm_srgb", 16)])
def test_block_compressed_formats_move_in_blocks(gpu, s, fmt, block):
    with make(gpu, (16, 8), fmt, None) as arr:  # 4 x 2 blocks
        assert arr.element_bytes == block and arr.row_bytes == 4 * block and arr.row_count == 2
        assert arr.size_bytes == 8 * block
        payload = data(arr.size_bytes, 11)
        arr.copy_from(payload, stream=s)
        assert arr.to_bytes(stream=s) == payload


@pytest.mark.gpu
def test_numpy_sources_round_trip_every_plain_format(gpu, s):
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(5)
    for fmt in PLAIN:
        for channels in (1, 2, 4):
            with make(gpu, (7, 5, 3), np.dtype(fmt), channels) as arr:
                host = np.frombuffer(rng.bytes(arr.size_bytes), dtype=fmt).reshape(3, 5, 7, channels)
                arr.copy_from(host, stream=s)
                back = np.zeros_like(host)
                assert arr.copy_to(back, stream=s) is back
                s.sync()
                assert back.tobytes() == host.tobytes(), (fmt, channels)


@pytest.mark.gpu
def test_copies_with_buffers_and_other_arrays(gpu, s):
    a = make(gpu, (16, 4), "uint32", 1)
    b = make(gpu, (16, 4), "uint32", 1)
    payload = data(a.size_bytes, 3)
    buf = gpu.allocate(a.size_bytes, stream=s)
    buf.copy_from(payload, stream=s)
    a.copy_from(buf, stream=s)                 # Buffer -> array
    b.copy_from(a, stream=s)                   # array -> array
    out = gpu.allocate(a.size_bytes + 64, stream=s)  # a larger Buffer takes the array at its start
    out.fill(0xEE, stream=s)
    assert b.copy_to(out, stream=s) is out
    assert out.to_bytes(stream=s) == payload + b"\xee" * 64
    c = make(gpu, (16, 4), "float32", 1)       # another format, the same packed layout
    assert a.copy_to(c, stream=s) is c
    assert c.to_bytes(stream=s) == payload
    with pytest.raises(ValueError):
        make(gpu, (8, 4), "uint32", 1).copy_from(a, stream=s)  # layouts differ
    for x in (a, b, c):
        x.close()


@pytest.mark.gpu
def test_short_copies_name_both_sizes(gpu, s):
    arr = make(gpu, (16,), "uint32", 1)  # 64 bytes
    small = array.array("I", [0] * 8)
    with pytest.raises(ValueError, match=r"32 bytes, smaller than the array extent \(64 bytes"):
        arr.copy_from(small, stream=s)
    with pytest.raises(ValueError, match=r"32 bytes, smaller than the array extent \(64 bytes"):
        arr.copy_to(small, stream=s)
    small_buf = gpu.allocate(32, stream=s)
    with pytest.raises(ValueError, match="32 bytes.*64 bytes"):
        arr.copy_from(small_buf, stream=s)
    with pytest.raises(ValueError, match="32 bytes.*64 bytes"):
        arr.copy_to(small_buf, stream=s)
    with pytest.raises(TypeError, match="writable"):
        arr.copy_to(bytes(64), stream=s)
    with pytest.raises(TypeError, match="buffer-protocol"):
        arr.copy_from("text", stream=s)
    with pytest.raises(TypeError, match="stream"):
        arr.copy_from(bytes(64), stream="not-a-stream")
    with pytest.raises(TypeError, match="stream"):
        arr.copy_to(bytearray(64), stream=None)
    arr.close()


@pytest.mark.gpu
def test_close_is_idempotent_and_use_after_close_raises(gpu, s):
    arr = make(gpu, (8, 8), "uint8", 1)
    h = arr.handle
    arr.close()
    assert arr.handle == 0 and h != 0
    arr.close()
    assert arr.shape == (8, 8) and arr.size_bytes == 64  # the description still answers
    with pytest.raises(cucore.InvalidHandleError, match="closed"):
        arr.copy_from(bytes(64), stream=s)
    with pytest.raises(cucore.InvalidHandleError, match="closed"):
        arr.copy_to(bytearray(64), stream=s)
    with pytest.raises(cucore.InvalidHandleError):
        cucore.ResourceDescriptor.from_opaque_array(arr)._struct()
    mip = gpu.create_mipmapped_array(cucore.MipmappedArrayOptions((8, 8), "uint8", 1, 2))
    mip.close()
    assert mip.handle == 0 and mip.num_levels == 2
    mip.close()
    with pytest.raises(cucore.InvalidHandleError):
        mip.get_level(0)


@pytest.mark.gpu
def test_shapes_the_kind_does_not_take_and_limits(gpu):
    with pytest.raises(ValueError):
        make(gpu, (16, 8), kind="cubemap")                     # faces are square
    with pytest.raises(ValueError):
        make(gpu, (16, 8, 4), kind="layered", num_layers=2)    # layers of 1D or 2D arrays
    with pytest.raises(ValueError):
        make(gpu, (16, 8), kind="layered", num_layers=0)
    with pytest.raises(ValueError):
        make(gpu, (16,), "bc1_unorm", None)                    # no 1D BC arrays
    with pytest.raises(ValueError):
        make(gpu, (16, 16), "bc1_unorm", None, is_surface_load_store=True)
    with pytest.raises(ValueError):
        make(gpu, (16, 16), "unorm_int8x4", 2)                 # not its own channel count
    with pytest.raises(ValueError):
        make(gpu, (1 << 40,))                                  # beyond every device's 1D limit
    with pytest.raises(ValueError):
        make(gpu, (1 << 20, 1 << 20))
    with pytest.raises(ValueError):
        gpu.create_mipmapped_array(cucore.MipmappedArrayOptions((16, 16), "uint8", 1, 6))  # 5 levels at most


@pytest.mark.gpu
def test_mipmapped_array_levels(gpu, s):
    mip = gpu.create_mipmapped_array(cucore.MipmappedArrayOptions(shape=(64, 32), format=ArrayFormatType.UINT8,
                                                                  num_channels=4, num_levels=4))
    assert (mip.shape, mip.format, mip.num_channels, mip.num_levels) == ((64, 32), ArrayFormatType.UINT8, 4, 4)
    assert mip.is_mipmapped and mip.handle != 0 and mip.device == gpu and mip.is_surface_load_store is False
    for level in range(4):
        lvl = mip.get_level(level)
        assert isinstance(lvl, cucore.OpaqueArray) and not lvl.is_owned
        assert lvl.shape == (max(1, 64 >> level), max(1, 32 >> level)) and lvl.format == "uint8"
        lvl.close()
    assert mip.level(0).shape == (64, 32)
    with pytest.raises(ValueError, match=r"the mipmapped array has \d+ levels?"):
        mip.get_level(mip.num_levels)
    with pytest.raises(ValueError, match=">= 0"):
        mip.get_level(-1)
    mip.close()


@pytest.mark.gpu
def test_a_level_outlives_its_dropped_parent(gpu, s):
    mip = gpu.create_mipmapped_array(cucore.MipmappedArrayOptions((16, 16), "uint32", 1, 3))
    lvl = mip.get_level(1)
    parent = weakref.ref(mip)
    del mip
    gc.collect()
    assert parent() is None and lvl.handle != 0
    n = lvl.shape[0] * lvl.shape[1]
    src = array.array("I", range(n))
    dst = array.array("I", [0] * n)
    lvl.copy_from(src, stream=s)
    lvl.copy_to(dst, stream=s)
    s.sync()
    assert list(dst) == list(range(n))
    other = gpu.create_mipmapped_array(cucore.MipmappedArrayOptions((16, 16), "uint32", 1, 3))
    lvl2 = other.get_level(2)
    other.close()  # closed while a level uses it: the level keeps it
    lvl2.copy_from(bytes(range(64)), stream=s)
    assert lvl2.to_bytes(stream=s) == bytes(range(64))
    lvl.close()
    lvl2.close()


@pytest.mark.gpu
def test_foreign_arrays_are_not_owned(gpu, s):
    arr = make(gpu, (8, 4), "uint16", 2)
    payload = data(arr.size_bytes, 9)
    arr.copy_from(payload, stream=s)

    class Owner:
        pass

    owner = Owner()
    gone = weakref.ref(owner)
    wrapped = cucore.OpaqueArray.from_handle(arr.handle, gpu, owner=owner)
    del owner
    gc.collect()
    assert gone() is not None  # libcucore holds it while the wrapper lives
    assert wrapped.handle == arr.handle and wrapped == arr and not wrapped.is_owned
    assert (wrapped.shape, wrapped.format, wrapped.num_channels) == ((8, 4), ArrayFormatType.UINT16, 2)
    assert wrapped.to_bytes(stream=s) == payload
    wrapped.close()
    gc.collect()
    assert gone() is None
    assert arr.to_bytes(stream=s) == payload  # the wrapper destroyed nothing
    mip = gpu.create_mipmapped_array(cucore.MipmappedArrayOptions((8, 8), "float32", 1, 4))
    wmip = cucore.MipmappedArray.from_handle(mip.handle, gpu)
    assert wmip.num_levels == 4 and wmip.shape == (8, 8) and wmip.get_level(3).shape == (1, 1)
    wmip.close()
    mip.close()
    arr.close()


@pytest.mark.gpu
def test_region_copies(gpu, s):
    w, h = 16, 8
    arr = make(gpu, (w, h), "uint8", 2)  # 2-byte elements
    base = data(arr.size_bytes, 21)
    arr.copy_from(base, stream=s)
    # a 5 x 3 block from a pitched host image (pitch 40 bytes, starting at byte 4 of row 1) to (x=6, y=2)
    host = bytes(range(40)) * 5
    cucore.OpaqueArray.copy(cucore.ArrayRegion(arr, x=6, y=2), cucore.MemoryRegion(host, pitch=40, x=4, y=1),
                             (5, 3), stream=s)
    want = bytearray(base)
    for r in range(3):
        row = host[(1 + r) * 40 + 4:(1 + r) * 40 + 14]
        want[(2 + r) * w * 2 + 12:(2 + r) * w * 2 + 22] = row
    assert arr.to_bytes(stream=s) == bytes(want)
    # back out into a packed host block, and into a Buffer with a pitch
    out = bytearray(5 * 3 * 2)
    cucore.OpaqueArray.copy(out, cucore.ArrayRegion(arr, x=6, y=2), (5, 3), stream=s)
    s.sync()
    assert out == b"".join(host[(1 + r) * 40 + 4:(1 + r) * 40 + 14] for r in range(3))
    buf = gpu.allocate(64 * 3, stream=s)
    buf.fill(0, stream=s)
    cucore.OpaqueArray.copy(cucore.MemoryRegion(buf, pitch=64, x=2), cucore.ArrayRegion(arr, y=5), (w, 3), stream=s)
    got = buf.to_bytes(stream=s)
    for r in range(3):
        assert got[r * 64 + 2:r * 64 + 2 + w * 2] == bytes(want[(5 + r) * w * 2:(6 + r) * w * 2])
    # array to array: rows 0-1 of `arr` to rows 6-7 of a second array
    other = make(gpu, (w, h), "int16", 1)
    other.copy_from(bytes(arr.size_bytes), stream=s)
    cucore.OpaqueArray.copy(cucore.ArrayRegion(other, y=6), arr, (w, 2), stream=s)
    assert other.to_bytes(stream=s) == bytes(6 * w * 2) + bytes(want[:2 * w * 2])
    # checks: a host region beyond its memory, no array side, a region outside the array
    with pytest.raises(ValueError, match="beyond its host memory"):
        cucore.OpaqueArray.copy(arr, cucore.MemoryRegion(bytes(40), pitch=40), (5, 3), stream=s)
    with pytest.raises(TypeError, match="one side at least"):
        cucore.OpaqueArray.copy(bytearray(8), bytes(8), 8, stream=s)
    with pytest.raises(ValueError):
        cucore.OpaqueArray.copy(cucore.ArrayRegion(arr, x=12), bytes(100), (5, 1), stream=s)
    with pytest.raises(ValueError, match="extent"):
        cucore.OpaqueArray.copy(arr, bytes(100), (5, 0), stream=s)
    arr.close()
    other.close()


@pytest.mark.gpu
def test_region_copies_per_layer_and_face(gpu, s):
    layered = make(gpu, (4, 4), "uint8", 1, kind="layered", num_layers=3)
    layered.copy_from(bytes(48), stream=s)
    cucore.OpaqueArray.copy(cucore.ArrayRegion(layered, z=2), b"\x07" * 16, (4, 4), stream=s)
    assert layered.to_bytes(stream=s) == bytes(32) + b"\x07" * 16
    cube = make(gpu, (2, 2), "uint8", 1, kind="cubemap")
    cube.copy_from(bytes(24), stream=s)
    faces = bytes(f for f in range(1, 7) for _ in range(4))
    cucore.OpaqueArray.copy(cube, faces, (2, 2, 6), stream=s)  # all six faces at once
    assert cube.to_bytes(stream=s) == faces
    cucore.OpaqueArray.copy(cucore.ArrayRegion(cube, z=4), b"\x50\x51\x52\x53", (2, 2), stream=s)  # +Z
    assert cube.to_bytes(stream=s) == faces[:16] + b"\x50\x51\x52\x53" + faces[20:]
    layered.close()
    cube.close()


@pytest.mark.gpu
def test_no_array_is_leaked(gpu, s):
    gc.collect()
    base = (cucore.live_object_count(cucore.ObjectType.OPAQUE_ARRAY),
            cucore.live_object_count(cucore.ObjectType.MIPMAPPED_ARRAY))
    for i in range(50):
        with make(gpu, (8, 8), "uint8", 1) as arr:
            arr.copy_from(bytes(64), stream=s)
        mip = gpu.create_mipmapped_array(cucore.MipmappedArrayOptions((8, 8), "uint8", 1, 3))
        lvl = mip.get_level(1)
        if i % 2:
            mip.close()
        del mip, lvl
    s.sync()
    gc.collect()
    assert (cucore.live_object_count(cucore.ObjectType.OPAQUE_ARRAY),
            cucore.live_object_count(cucore.ObjectType.MIPMAPPED_ARRAY)) == base
