"""Texture and surface objects (bindings/python/cucore/texture.py): cuda.core's names and checks, and real
sampling on a GPU.

Without a GPU: TextureObjectOptions (cuda.core's fields, defaults, checks and messages) and its translation into
the C struct field by field. With a GPU or the fake driver: resource descriptors, texture and surface objects
made, described, kept alive and closed in every order; the checks libcucore makes before the driver; textures
and surfaces as launch arguments (the fake driver records the 8 bytes). On a real GPU, kernels compiled with
NVRTC sample and write them, and every result is compared with the value computed here: point and linear
filtering, each address mode, normalized coordinates, normalized-float reads, explicit levels of detail,
layered and cubemap fetches, linear and pitched textures, surface writes read back through copies."""
import ctypes
import gc
import os
import struct

import pytest

import cucore
from conftest import FAKE_DRIVER
from cucore import _lib
from cucore.texture import (
    MipmappedArrayOptions, OpaqueArrayOptions, ResourceDescriptor, SurfaceObject, TextureObject, TextureObjectOptions,
    _address_modes,
)
from cucore.typing import AddressModeType, ArrayFormatType, FilterModeType, ReadModeType
from test_launch import fake_image, last_args


# ---- without a GPU ---------------------------------------------------------------------------------------------

def test_direct_instantiation_is_refused():
    with pytest.raises(RuntimeError, match=r"^TextureObject cannot be instantiated directly"):
        TextureObject()
    with pytest.raises(RuntimeError, match=r"^SurfaceObject cannot be instantiated directly"):
        SurfaceObject()
    with pytest.raises(RuntimeError, match=r"^ResourceDescriptor cannot be instantiated"):
        ResourceDescriptor()


def test_texture_options_defaults_are_cuda_cores():
    o = TextureObjectOptions()
    assert (o.address_mode, o.filter_mode, o.read_mode, o.mipmap_filter_mode) == \
        (AddressModeType.CLAMP, FilterModeType.POINT, ReadModeType.ELEMENT_TYPE, FilterModeType.POINT)
    assert (o.normalized_coords, o.srgb, o.disable_trilinear_optimization, o.seamless_cubemap, o.max_anisotropy) == \
        (False, False, False, False, 0)
    assert (o.mipmap_level_bias, o.min_mipmap_level_clamp, o.max_mipmap_level_clamp, o.border_color) == \
        (0.0, 0.0, 0.0, None)
    assert TextureObjectOptions(filter_mode="linear").filter_mode is FilterModeType.LINEAR
    assert TextureObjectOptions(read_mode="NORMALIZED_FLOAT").read_mode is ReadModeType.NORMALIZED_FLOAT
    assert TextureObjectOptions(filter_mode="linear") == TextureObjectOptions(filter_mode=FilterModeType.LINEAR)


@pytest.mark.parametrize("field", ["filter_mode", "read_mode", "mipmap_filter_mode"])
def test_enum_fields_are_checked_when_made(field):
    kind = "ReadModeType" if field == "read_mode" else "FilterModeType"
    with pytest.raises(ValueError, match=f"{field} must be a {kind}"):
        TextureObjectOptions(**{field: 0})  # an int, not a member
    with pytest.raises(ValueError, match=f"{field} must be a {kind}"):
        TextureObjectOptions(**{field: "nearest"})


def test_address_modes_normalize_as_cuda_core():
    W, C, M, B = AddressModeType.WRAP, AddressModeType.CLAMP, AddressModeType.MIRROR, AddressModeType.BORDER
    assert _address_modes(W) == (W, W, W)
    assert _address_modes("border") == (B, B, B)
    assert _address_modes((W, C)) == (W, C, C)
    assert _address_modes([W, "clamp", M]) == (W, C, M)
    with pytest.raises(TypeError, match="address_mode"):
        _address_modes(42)
    with pytest.raises(ValueError, match="address_mode tuple must have 1-3"):
        _address_modes(())
    with pytest.raises(ValueError, match="address_mode tuple must have 1-3"):
        _address_modes((W, W, W, W))
    with pytest.raises(TypeError, match=r"address_mode\[1\]"):
        _address_modes((W, 3, C))
    with pytest.raises(ValueError, match=r"address_mode\[1\]"):
        _address_modes((W, "bad", C))


def test_texture_options_translate_field_by_field():
    o = TextureObjectOptions(address_mode=("wrap", "mirror"), filter_mode="linear", read_mode="normalized_float",
                             normalized_coords=True, srgb=True, disable_trilinear_optimization=True,
                             seamless_cubemap=True, max_anisotropy=8, mipmap_filter_mode="linear",
                             mipmap_level_bias=0.5, min_mipmap_level_clamp=1.0, max_mipmap_level_clamp=3.5,
                             border_color=[0.25, 0.5, 0.75, 1.0])
    c = o._struct()
    C = _lib.C
    assert c.struct_size == ctypes.sizeof(_lib.STRUCTS["cucore_texture_object_options_t"])
    assert list(c.address_mode) == [C["CUCORE_ADDRESS_MODE_WRAP"], C["CUCORE_ADDRESS_MODE_MIRROR"],
                                    C["CUCORE_ADDRESS_MODE_MIRROR"]] == [1, 2, 2]
    assert (c.filter_mode, c.read_mode, c.mipmap_filter_mode) == (1, 1, 1)
    assert (c.normalized_coords, c.srgb, c.disable_trilinear_optimization, c.seamless_cubemap, c.max_anisotropy) == \
        (1, 1, 1, 1, 8)
    assert (c.mipmap_level_bias, c.min_mipmap_level_clamp, c.max_mipmap_level_clamp) == (0.5, 1.0, 3.5)
    assert list(c.border_color) == [0.25, 0.5, 0.75, 1.0]
    assert o.border_color == (0.25, 0.5, 0.75, 1.0)  # a list is kept as a tuple (a snapshot)
    d = TextureObjectOptions()._struct()
    assert list(d.address_mode) == [0, 0, 0] and (d.filter_mode, d.read_mode, d.max_anisotropy) == (0, 0, 0)
    assert list(d.border_color) == [0.0] * 4
    # the struct is made once and made again when a field changes
    assert o._struct() is c
    o.max_anisotropy = 4
    assert o._struct() is not c and o._struct().max_anisotropy == 4


def test_texture_options_checked_when_a_texture_is_made():
    for kwargs, exc, words in (({"max_anisotropy": -1}, ValueError, "max_anisotropy"),
                               ({"border_color": (0.0, 0.0)}, ValueError, "border_color must have 4"),
                               ({"address_mode": 42}, TypeError, "address_mode"),
                               ({"address_mode": ()}, ValueError, "address_mode tuple must have 1-3"),
                               ({"normalized_coords": "yes"}, TypeError, "normalized_coords")):
        o = TextureObjectOptions(**kwargs)  # made without complaint, as cuda.core
        with pytest.raises(exc, match=words):
            o._struct()


def test_copies_and_pickles_of_options():
    import copy
    import pickle
    o = TextureObjectOptions(filter_mode="linear", border_color=(1.0, 2.0, 3.0, 4.0))
    o._struct()
    for other in (copy.copy(o), copy.deepcopy(o), pickle.loads(pickle.dumps(o))):
        assert other == o and other._struct() is not o._struct()
        assert list(other._struct().border_color) == [1.0, 2.0, 3.0, 4.0]


def test_resource_descriptor_type_checks():
    with pytest.raises(TypeError, match="Buffer"):
        ResourceDescriptor.from_linear(object(), format=ArrayFormatType.UINT8, num_channels=1)
    with pytest.raises(TypeError, match="buffer must be a Buffer"):
        ResourceDescriptor.from_pitch2d(object(), format="uint8", num_channels=1, width=8, height=8, pitch_bytes=64)
    with pytest.raises(TypeError, match="MipmappedArray"):
        ResourceDescriptor.from_mipmapped_array(object())
    with pytest.raises(TypeError, match="OpaqueArray"):
        ResourceDescriptor.from_opaque_array(object())


def test_launch_describes_textures_and_surfaces_as_8_bytes():
    from cucore.launch import _describe
    for cls in (TextureObject, SurfaceObject):
        a = _describe(cls, None, 8)
        assert (a.code, a.size, a.align) == ("Q", 8, 8)


# ---- on a device (a GPU or the fake driver) --------------------------------------------------------------------

@pytest.fixture
def s(gpu):
    return gpu.create_stream()


def float_array(dev, shape, channels=1, **kw):
    return dev.create_opaque_array(OpaqueArrayOptions(shape, "float32", channels, **kw))


def texture_memory(dev, size, stream):
    """A Buffer of `size` bytes whose address meets the device's texture alignment (a view into a larger
    allocation, which the view keeps), as linear and pitched texture resources need."""
    align = dev.properties.texture_alignment
    parent = dev.allocate(size + align, stream=stream)
    view = parent.view(-parent.handle % align, size)
    parent.close()  # the view holds the memory
    return view


@pytest.mark.gpu
def test_texture_object_over_an_array(gpu):
    arr = float_array(gpu, (32, 16))
    res = ResourceDescriptor.from_opaque_array(arr)
    assert res.kind == "array" and res.source is arr and res.format is None and res.num_channels is None
    assert (res.size_bytes, res.width, res.height, res.pitch_bytes) == (None, None, None, None)
    opts = TextureObjectOptions(address_mode=AddressModeType.CLAMP, filter_mode=FilterModeType.LINEAR,
                                read_mode=ReadModeType.ELEMENT_TYPE, normalized_coords=True)
    tex = TextureObject.from_descriptor(resource=res, texture_descriptor=opts)
    assert tex.handle != 0 and tex.resource is res and tex.texture_descriptor is opts and tex.options is opts
    assert tex.device == gpu and tex == tex and "TextureObject(handle=" in repr(tex)
    tex2 = gpu.create_texture_object(resource=res, options={"filter_mode": "point"})
    assert tex2.options.filter_mode is FilterModeType.POINT and tex2.handle != tex.handle and tex2 != tex
    with gpu.create_texture_object(resource=res) as tex3:
        assert tex3.options == TextureObjectOptions() and tex3.handle != 0
    assert tex3.handle == 0
    tex.close()
    assert tex.handle == 0
    tex.close()
    tex2.close()
    arr.close()


@pytest.mark.gpu
def test_texture_objects_over_mipmapped_linear_and_pitched_memory(gpu, s):
    mip = gpu.create_mipmapped_array(MipmappedArrayOptions((32, 32), "float32", 1, 3))
    res = ResourceDescriptor.from_mipmapped_array(mip)
    assert res.kind == "mipmapped_array" and res.source is mip
    opts = TextureObjectOptions(filter_mode="linear", normalized_coords=True, mipmap_filter_mode="linear",
                                max_mipmap_level_clamp=float(mip.num_levels - 1))
    with TextureObject.from_descriptor(resource=res, texture_descriptor=opts) as tex:
        assert tex.handle != 0 and tex.resource is res
    buf = texture_memory(gpu, 4096, s)
    lin = ResourceDescriptor.from_linear(buf, format=ArrayFormatType.FLOAT32, num_channels=1)
    assert (lin.kind, lin.source, lin.format, lin.num_channels, lin.size_bytes) == \
        ("linear", buf, ArrayFormatType.FLOAT32, 1, 4096)
    assert "linear" in repr(lin)
    assert ResourceDescriptor.from_linear(buf, format="uint32", num_channels=1, size_bytes=2048).size_bytes == 2048
    with TextureObject.from_descriptor(resource=lin, texture_descriptor=TextureObjectOptions()) as tex:
        assert tex.handle != 0 and tex.resource is lin and tex.device == gpu
    align = gpu.properties.texture_pitch_alignment
    pitch = -(-128 // align) * align  # a row of 32 RGBA8 elements, rounded up to the alignment
    pbuf = texture_memory(gpu, pitch * 16, s)
    p2 = ResourceDescriptor.from_pitch2d(pbuf, format="uint8", num_channels=4, width=32, height=16, pitch_bytes=pitch)
    assert (p2.kind, p2.width, p2.height, p2.pitch_bytes, p2.size_bytes) == ("pitch2d", 32, 16, pitch, None)
    assert "pitch2d" in repr(p2)
    with gpu.create_texture_object(resource=p2) as tex:
        assert tex.handle != 0
    mip.close()
    buf.close(s)
    pbuf.close(s)


@pytest.mark.gpu
def test_resource_descriptor_checks(gpu, s):
    buf = gpu.allocate(1024, stream=s)
    with pytest.raises(ValueError, match="exceeds buffer.size"):
        ResourceDescriptor.from_linear(buf, format="uint8", num_channels=1, size_bytes=2048)
    with pytest.raises(ValueError, match="num_channels"):
        ResourceDescriptor.from_linear(buf, format="uint8", num_channels=3)
    with pytest.raises(ValueError, match="at least one element"):
        ResourceDescriptor.from_linear(buf, format="uint32", num_channels=1, size_bytes=0)
    with pytest.raises(ValueError, match="multiple of element size"):
        ResourceDescriptor.from_linear(buf, format="uint32", num_channels=1, size_bytes=10)
    with pytest.raises(ValueError, match="pitch_bytes"):
        ResourceDescriptor.from_pitch2d(buf, format="uint32", num_channels=1, width=16, height=8, pitch_bytes=32)
    with pytest.raises(ValueError, match="exceeds buffer.size"):
        ResourceDescriptor.from_pitch2d(buf, format="uint8", num_channels=4, width=64, height=128, pitch_bytes=512)
    with pytest.raises(ValueError, match="format must be an ArrayFormatType"):
        ResourceDescriptor.from_pitch2d(buf, format=0, num_channels=1, width=8, height=8, pitch_bytes=64)
    with pytest.raises(ValueError, match="num_channels"):
        ResourceDescriptor.from_pitch2d(buf, format="uint8", num_channels=3, width=8, height=8, pitch_bytes=64)
    with pytest.raises(ValueError, match="width"):
        ResourceDescriptor.from_pitch2d(buf, format="uint8", num_channels=1, width=0, height=8, pitch_bytes=64)
    with pytest.raises(ValueError, match="height"):
        ResourceDescriptor.from_pitch2d(buf, format="uint8", num_channels=1, width=8, height=0, pitch_bytes=64)
    buf.close(s)


@pytest.mark.gpu
def test_texture_creation_errors(gpu, s):
    arr = float_array(gpu, (8, 8))
    res = ResourceDescriptor.from_opaque_array(arr)
    with pytest.raises(TypeError, match="resource must be a ResourceDescriptor"):
        TextureObject.from_descriptor(resource=object(), texture_descriptor=TextureObjectOptions())
    with pytest.raises(TypeError, match="texture_descriptor must be a TextureObjectOptions"):
        TextureObject.from_descriptor(resource=res, texture_descriptor="nope")
    with pytest.raises(TypeError, match="options must be a TextureObjectOptions"):
        gpu.create_texture_object(resource=res, options="nope")
    with pytest.raises(TypeError, match="not both"):
        TextureObject.from_descriptor(resource=res, texture_descriptor=TextureObjectOptions(),
                                      options=TextureObjectOptions())
    with pytest.raises(ValueError, match="max_anisotropy"):
        TextureObject.from_descriptor(resource=res, texture_descriptor=TextureObjectOptions(max_anisotropy=-1))
    with pytest.raises(ValueError, match="border_color must have 4"):
        TextureObject.from_descriptor(resource=res, texture_descriptor=TextureObjectOptions(border_color=(0.0, 0.0)))
    with pytest.raises(ValueError, match=r"address_mode\[1\]"):
        gpu.create_texture_object(resource=res, options=TextureObjectOptions(address_mode=("wrap", "bad")))
    # libcucore's checks before the driver (the C ABI's, raised as InvalidArgumentError, a ValueError)
    with pytest.raises(ValueError, match="max_anisotropy' is 17"):
        gpu.create_texture_object(resource=res, options=TextureObjectOptions(max_anisotropy=17))
    with pytest.raises(ValueError, match="mipmap_level_bias' is not a finite number"):
        gpu.create_texture_object(resource=res, options=TextureObjectOptions(mipmap_level_bias=float("nan")))
    with pytest.raises(ValueError, match="seamless_cubemap is set but the resource is not a cubemap"):
        gpu.create_texture_object(resource=res, options=TextureObjectOptions(seamless_cubemap=True))
    ints = gpu.create_opaque_array(OpaqueArrayOptions((8, 8), "uint8", 1))
    with pytest.raises(ValueError, match="integers cannot be interpolated"):
        gpu.create_texture_object(resource=ResourceDescriptor.from_opaque_array(ints),
                                  options=TextureObjectOptions(filter_mode="linear"))
    with gpu.create_texture_object(resource=ResourceDescriptor.from_opaque_array(ints),
                                   options=TextureObjectOptions(filter_mode="linear",
                                                                read_mode="normalized_float")) as tex:
        assert tex.handle != 0  # as normalized floats they can
    srgb = gpu.create_opaque_array(OpaqueArrayOptions((8, 8), "bc1_unorm_srgb", None))
    with pytest.raises(ValueError, match="set options.srgb"):
        gpu.create_texture_object(resource=ResourceDescriptor.from_opaque_array(srgb))
    with gpu.create_texture_object(resource=ResourceDescriptor.from_opaque_array(srgb),
                                   options=TextureObjectOptions(srgb=True)) as tex:
        assert tex.handle != 0
    if cucore.Device.count() > 1:  # the resource's device, not another
        with pytest.raises(ValueError):
            cucore.Device(1).create_texture_object(resource=res)
    arr.close()
    with pytest.raises(cucore.InvalidHandleError, match="closed"):
        gpu.create_texture_object(resource=res)
    ints.close()
    srgb.close()


@pytest.mark.gpu
def test_surface_objects(gpu, s):
    arr = gpu.create_opaque_array(OpaqueArrayOptions(shape=(8, 8), format="uint8", num_channels=4,
                                                     is_surface_load_store=True))
    surf = SurfaceObject.from_array(arr)
    assert surf.handle != 0 and isinstance(surf.resource, ResourceDescriptor) and surf.resource.source is arr
    assert surf.device == gpu
    surf2 = gpu.create_surface_object(resource=ResourceDescriptor.from_opaque_array(arr))
    assert surf2.handle != 0 and surf2 != surf
    with SurfaceObject.from_descriptor(resource=surf.resource) as surf3:
        assert surf3.handle != 0
    assert surf3.handle == 0
    surf.close()
    assert surf.handle == 0
    surf.close()
    surf2.close()
    plain = gpu.create_opaque_array(OpaqueArrayOptions((8, 8), "uint8", 4))
    with pytest.raises(ValueError, match="is_surface_load_store=True"):
        SurfaceObject.from_array(plain)
    with pytest.raises(ValueError, match="is_surface_load_store=True"):
        gpu.create_surface_object(resource=ResourceDescriptor.from_opaque_array(plain))
    buf = texture_memory(gpu, 4096, s)
    with pytest.raises(ValueError, match="array-backed"):
        SurfaceObject.from_descriptor(resource=ResourceDescriptor.from_linear(buf, format="uint32", num_channels=1))
    with pytest.raises(ValueError, match="array-backed"):
        SurfaceObject.from_descriptor(resource=ResourceDescriptor.from_pitch2d(
            buf, format="uint8", num_channels=4, width=8, height=8, pitch_bytes=64))
    mip = gpu.create_mipmapped_array(MipmappedArrayOptions((16, 16), "uint8", 4, 2, is_surface_load_store=True))
    with pytest.raises(ValueError, match="array-backed"):
        SurfaceObject.from_descriptor(resource=ResourceDescriptor.from_mipmapped_array(mip))
    with SurfaceObject.from_array(mip.get_level(1)) as level_surface:  # a level is an array
        assert level_surface.handle != 0
    with pytest.raises(TypeError, match="OpaqueArray"):
        SurfaceObject.from_array(buf)
    for x in (arr, plain, mip):
        x.close()
    buf.close(s)


class FakeArrays:
    """The fake driver's records of arrays, texture and surface objects (tests/fake_driver, its fake_cuda_*
    exports), or None elsewhere or where the fake lacks them."""

    class Texture(ctypes.Structure):  # TextureObject of tests/fake_driver/shared_library.cpp
        _fields_ = [("res_type", ctypes.c_int), ("destroyed", ctypes.c_int), ("array", ctypes.c_void_p),
                    ("mipmapped", ctypes.c_void_p), ("dev_ptr", ctypes.c_ulonglong), ("format", ctypes.c_int),
                    ("num_channels", ctypes.c_uint), ("size_in_bytes", ctypes.c_size_t), ("width", ctypes.c_size_t),
                    ("height", ctypes.c_size_t), ("pitch_in_bytes", ctypes.c_size_t),
                    ("address_mode", ctypes.c_int * 3), ("filter_mode", ctypes.c_int), ("flags", ctypes.c_uint),
                    ("max_anisotropy", ctypes.c_uint), ("mipmap_filter_mode", ctypes.c_int),
                    ("mipmap_level_bias", ctypes.c_float), ("min_mipmap_level_clamp", ctypes.c_float),
                    ("max_mipmap_level_clamp", ctypes.c_float), ("border_color", ctypes.c_float * 4)]

    @classmethod
    def load(cls):
        if not FAKE_DRIVER:
            return None
        dll = ctypes.CDLL(os.environ["CUCORE_CUDA_DRIVER_PATH"])
        if not hasattr(dll, "fake_cuda_texture_object"):
            return None
        self = cls()
        self.dll = dll
        dll.fake_cuda_texture_object.argtypes = [ctypes.c_ulonglong, ctypes.POINTER(cls.Texture)]
        dll.fake_cuda_surface_object.argtypes = [ctypes.c_ulonglong, ctypes.POINTER(ctypes.c_void_p),
                                                 ctypes.POINTER(ctypes.c_int)]
        return self

    def live(self):
        gc.collect()
        d = self.dll
        return (d.fake_cuda_live_arrays(), d.fake_cuda_live_texture_objects(), d.fake_cuda_live_surface_objects())

    def violations(self):
        return self.dll.fake_cuda_resource_violations()

    def texture(self, handle):
        out = self.Texture()
        assert self.dll.fake_cuda_texture_object(handle, ctypes.byref(out)) == 1
        return out

    def surface(self, handle):
        array, destroyed = ctypes.c_void_p(), ctypes.c_int()
        assert self.dll.fake_cuda_surface_object(handle, ctypes.byref(array), ctypes.byref(destroyed)) == 1
        return array.value, destroyed.value


@pytest.fixture
def fake_arrays(gpu):
    fa = FakeArrays.load()
    if fa is None:
        pytest.skip("reads the fake driver's records of texture objects (test_fake_driver.py reruns this there; a "
                    "fake driver built before them lacks them)")
    return fa


@pytest.mark.gpu
def test_objects_keep_their_resources_alive(gpu):
    fa = FakeArrays.load()
    gc.collect()
    base = cucore.live_object_count(cucore.ObjectType.OPAQUE_ARRAY)
    driver_base = fa.live() if fa else None
    arr = float_array(gpu, (8, 8))
    res = ResourceDescriptor.from_opaque_array(arr)
    tex = TextureObject.from_descriptor(resource=res, texture_descriptor=TextureObjectOptions())
    arr_id, res_id = id(arr), id(res)
    del arr, res
    gc.collect()
    # as cuda.core: the texture holds the descriptor, the descriptor the array
    res_back = [r for r in gc.get_referents(tex) if id(r) == res_id]
    assert len(res_back) == 1
    assert [r for r in gc.get_referents(res_back[0]) if id(r) == arr_id]
    # and libcucore holds the array's storage itself: the array closed, the driver's array lives on under the
    # texture (the array object, a handle, is gone)
    res_back[0].source.close()
    assert cucore.live_object_count(cucore.ObjectType.OPAQUE_ARRAY) == base
    if fa:
        assert fa.live() == (driver_base[0] + 1, driver_base[1] + 1, driver_base[2])
    assert tex.handle != 0
    tex.close()
    if fa:
        assert fa.live() == driver_base and fa.violations() == 0
    # a surface likewise, released by the collector
    sarr = gpu.create_opaque_array(OpaqueArrayOptions((8, 8), "uint8", 4, is_surface_load_store=True))
    surf = SurfaceObject.from_array(sarr)
    sarr.close()
    if fa:
        assert fa.live() == (driver_base[0] + 1, driver_base[1], driver_base[2] + 1)
    del surf
    gc.collect()
    assert cucore.live_object_count(cucore.ObjectType.OPAQUE_ARRAY) == base
    if fa:
        assert fa.live() == driver_base and fa.violations() == 0


@pytest.mark.gpu
def test_descriptors_reach_the_driver_field_by_field(fake_arrays, gpu):
    s = gpu.create_stream()
    arr = float_array(gpu, (8, 8))
    opts = TextureObjectOptions(address_mode=("wrap", "mirror", "border"), filter_mode="linear",
                                normalized_coords=True, disable_trilinear_optimization=True, max_anisotropy=4,
                                border_color=(0.5, 1.5, 2.5, 3.5))
    with gpu.create_texture_object(resource=ResourceDescriptor.from_opaque_array(arr), options=opts) as tex:
        t = fake_arrays.texture(tex.handle)
        assert (t.res_type, t.array, t.destroyed) == (0, arr.handle, 0)  # CU_RESOURCE_TYPE_ARRAY
        assert list(t.address_mode) == [0, 2, 3]  # the driver's WRAP 0, MIRROR 2, BORDER 3
        assert t.filter_mode == 1 and t.max_anisotropy == 4
        assert t.flags == 0x02 | 0x20  # NORMALIZED_COORDINATES, trilinear off (floats: no READ_AS_INTEGER)
        assert list(t.border_color) == [0.5, 1.5, 2.5, 3.5]
        handle = tex.handle
    assert fake_arrays.texture(handle).destroyed == 1
    ints = gpu.create_opaque_array(OpaqueArrayOptions((8,), "int16", 2))
    with gpu.create_texture_object(resource=ResourceDescriptor.from_opaque_array(ints)) as tex:
        assert fake_arrays.texture(tex.handle).flags == 0x01  # integers read as ELEMENT_TYPE: READ_AS_INTEGER
    with gpu.create_texture_object(resource=ResourceDescriptor.from_opaque_array(ints),
                                   options=TextureObjectOptions(read_mode="normalized_float")) as tex:
        assert fake_arrays.texture(tex.handle).flags == 0
    ints.close()
    cube = float_array(gpu, (4, 4), kind="cubemap")
    opts = TextureObjectOptions(read_mode="normalized_float", srgb=True, seamless_cubemap=True)
    with gpu.create_texture_object(resource=ResourceDescriptor.from_opaque_array(cube), options=opts) as tex:
        t = fake_arrays.texture(tex.handle)
        assert list(t.address_mode) == [1, 1, 1] and t.filter_mode == 0  # the driver's CLAMP, POINT
        assert t.flags == 0x10 | 0x40  # SRGB, SEAMLESS_CUBEMAP; normalized float is no flag
    mip = gpu.create_mipmapped_array(MipmappedArrayOptions((16, 16), "float32", 1, 5))
    opts = TextureObjectOptions(mipmap_filter_mode="linear", mipmap_level_bias=0.25, min_mipmap_level_clamp=1.0,
                                max_mipmap_level_clamp=3.0)
    with gpu.create_texture_object(resource=ResourceDescriptor.from_mipmapped_array(mip), options=opts) as tex:
        t = fake_arrays.texture(tex.handle)
        assert (t.res_type, t.mipmapped, t.mipmap_filter_mode) == (1, mip.handle, 1)
        assert (t.mipmap_level_bias, t.min_mipmap_level_clamp, t.max_mipmap_level_clamp) == (0.25, 1.0, 3.0)
    buf = gpu.allocate(4096, stream=s)
    lin = ResourceDescriptor.from_linear(buf, format="uint16", num_channels=2, size_bytes=1024)
    with gpu.create_texture_object(resource=lin) as tex:
        t = fake_arrays.texture(tex.handle)
        assert (t.res_type, t.dev_ptr, t.format, t.num_channels, t.size_in_bytes) == (2, buf.handle, 0x02, 2, 1024)
    align = gpu.properties.texture_pitch_alignment
    p2 = ResourceDescriptor.from_pitch2d(buf, format="float32", num_channels=1, width=6, height=3,
                                         pitch_bytes=-(-24 // align) * align)
    with gpu.create_texture_object(resource=p2) as tex:
        t = fake_arrays.texture(tex.handle)
        assert (t.res_type, t.dev_ptr, t.format, t.num_channels, t.width, t.height, t.pitch_in_bytes) == \
            (3, buf.handle, 0x20, 1, 6, 3, p2.pitch_bytes)
    sarr = gpu.create_opaque_array(OpaqueArrayOptions((8, 8), "uint8", 4, is_surface_load_store=True))
    with SurfaceObject.from_array(sarr) as surf:
        assert fake_arrays.surface(surf.handle) == (sarr.handle, 0)
        handle = surf.handle
    assert fake_arrays.surface(handle) == (sarr.handle, 1)
    for x in (arr, cube, mip, sarr):
        x.close()
    buf.close(s)
    assert fake_arrays.violations() == 0


@pytest.mark.gpu
def test_no_texture_or_surface_is_leaked(gpu, s):
    gc.collect()
    kinds = (cucore.ObjectType.TEXTURE_OBJECT, cucore.ObjectType.SURFACE_OBJECT, cucore.ObjectType.OPAQUE_ARRAY,
             cucore.ObjectType.BUFFER)
    base = [cucore.live_object_count(k) for k in kinds]
    arr = gpu.create_opaque_array(OpaqueArrayOptions((8, 8), "float32", 1, is_surface_load_store=True))
    buf = texture_memory(gpu, 1024, s)
    for i in range(60):
        res = ResourceDescriptor.from_opaque_array(arr) if i % 3 else ResourceDescriptor.from_linear(
            buf, format="float32", num_channels=1)
        tex = gpu.create_texture_object(resource=res)
        surf = SurfaceObject.from_array(arr)
        if i % 2:
            tex.close()
        del tex, surf
    arr.close()
    buf.close(s)
    s.sync()
    gc.collect()
    assert [cucore.live_object_count(k) for k in kinds] == base


@pytest.mark.gpu
def test_textures_and_surfaces_are_launch_arguments(gpu):
    if not FAKE_DRIVER:
        pytest.skip("reads the fake driver's record of the launch (test_fake_driver.py reruns this there)")
    code = cucore.ObjectCode.from_cubin(fake_image("kernel takes3 8,8,4", "kernel takes_int 4,4"))
    k = code.get_kernel("takes3")
    s = gpu.create_stream()
    arr = gpu.create_opaque_array(OpaqueArrayOptions((8, 8), "float32", 1, is_surface_load_store=True))
    tex = gpu.create_texture_object(resource=ResourceDescriptor.from_opaque_array(arr))
    surf = SurfaceObject.from_array(arr)
    cucore.launch(s, cucore.LaunchConfig(), k, tex, surf, 7)
    assert last_args() == [struct.pack("<Q", tex.handle), struct.pack("<Q", surf.handle), struct.pack("<i", 7)]
    cucore.launch(s, cucore.LaunchConfig(), k, surf, tex, 9)  # another packer for another order of types
    assert last_args() == [struct.pack("<Q", surf.handle), struct.pack("<Q", tex.handle), struct.pack("<i", 9)]
    with pytest.raises(ValueError):  # an 8-byte handle for a 4-byte parameter: the parameter-size check
        cucore.launch(s, cucore.LaunchConfig(), code.get_kernel("takes_int"), tex, 1)
    tex.close()
    with pytest.raises(cucore.InvalidHandleError, match="closed"):
        cucore.launch(s, cucore.LaunchConfig(), k, tex, surf, 7)
    surf.close()
    arr.close()


# ---- on a real GPU: kernels sample and write -----------------------------------------------------------------

KERNELS = r"""
extern "C" __global__ void sample1d(cudaTextureObject_t tex, const float *x, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1D<float>(tex, x[i]);
}
extern "C" __global__ void sample1d_uint(cudaTextureObject_t tex, const float *x, unsigned int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1D<unsigned int>(tex, x[i]);
}
extern "C" __global__ void fetch1d(cudaTextureObject_t tex, const float *unused, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float>(tex, i);
}
extern "C" __global__ void sample2d(cudaTextureObject_t tex, const float *xy, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float>(tex, xy[2 * i], xy[2 * i + 1]);
}
extern "C" __global__ void sample2d_lod(cudaTextureObject_t tex, const float *xyl, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2DLod<float>(tex, xyl[3 * i], xyl[3 * i + 1], xyl[3 * i + 2]);
}
extern "C" __global__ void sample3d(cudaTextureObject_t tex, const float *xyz, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex3D<float>(tex, xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]);
}
extern "C" __global__ void sample2d_layered(cudaTextureObject_t tex, const float *xyl, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2DLayered<float>(tex, xyl[3 * i], xyl[3 * i + 1], (int)xyl[3 * i + 2]);
}
extern "C" __global__ void sample_cube(cudaTextureObject_t tex, const float *xyz, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = texCubemap<float>(tex, xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]);
}
extern "C" __global__ void sample_cube_layered(cudaTextureObject_t tex, const float *xyzl, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = texCubemapLayered<float>(tex, xyzl[4 * i], xyzl[4 * i + 1], xyzl[4 * i + 2],
                                                 (int)xyzl[4 * i + 3]);
}
extern "C" __global__ void write_surface(cudaSurfaceObject_t surf, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) surf2Dwrite<float>(x + 100.0f * y, surf, x * (int)sizeof(float), y);
}
extern "C" __global__ void write_surface_rgba8(cudaSurfaceObject_t surf, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) surf2Dwrite<uchar4>(make_uchar4(x, y, x + y, 255 - x), surf, x * 4, y);
}
extern "C" __global__ void copy_surface_layered(cudaSurfaceObject_t src, cudaSurfaceObject_t dst, int w, int h,
                                                int layers) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    for (int l = 0; l < layers; ++l)
        if (x < w && y < h) {
            float v = surf2DLayeredread<float>(src, x * 4, y, l);
            surf2DLayeredwrite<float>(v * 2.0f + l, dst, x * 4, y, l);
        }
}
"""

_compiled = {}


@pytest.fixture
def k(gpu):
    """The kernels above, compiled once (skips without a real GPU or NVRTC)."""
    if FAKE_DRIVER:
        pytest.skip("needs a real GPU to run device code (this is the fake driver)")
    if "code" not in _compiled:
        try:
            cucore.compiler_version("nvrtc")
        except cucore.CUDAError as e:
            pytest.skip(f"NVRTC is not installed: {e}")
        opts = cucore.ProgramOptions(arch=f"sm_{gpu.compute_capability.major}{gpu.compute_capability.minor}",
                                     std="c++17")
        _compiled["code"] = cucore.Program(KERNELS, "c++", opts).compile("cubin")
    return _compiled["code"]


class Sampler:
    """Runs a sampling kernel over a list of coordinates on a stream and returns the results."""

    def __init__(self, dev, code):
        self.dev, self.code, self.s = dev, code, dev.create_stream()

    def run(self, name, tex, coords, per=1, out="f"):
        n = len(coords) // per
        cbuf = self.dev.allocate(max(4 * len(coords), 4), stream=self.s)
        cbuf.copy_from(struct.pack(f"<{len(coords)}f", *coords) or bytes(4), stream=self.s)
        obuf = self.dev.allocate(4 * n, stream=self.s)
        cucore.launch(self.s, cucore.LaunchConfig(grid=(n + 63) // 64, block=64), self.code.get_kernel(name), tex,
                      cbuf, obuf, n)
        got = struct.unpack(f"<{n}{out}", obuf.to_bytes(stream=self.s))
        cbuf.close()
        obuf.close()
        return list(got)


def fill(arr, values, stream, fmt="f"):
    arr.copy_from(struct.pack(f"<{len(values)}{fmt}", *values), stream=stream)


def bilinear(img, w, h, x, y):
    """What LINEAR filtering with CLAMP reads at (x, y) of a w x h image (img[y][x]), non-normalized."""
    x, y = x - 0.5, y - 0.5
    i, j = int(x // 1), int(y // 1)
    a, b = x - i, y - j

    def at(ii, jj):
        return img[min(max(jj, 0), h - 1)][min(max(ii, 0), w - 1)]
    return ((1 - a) * (1 - b) * at(i, j) + a * (1 - b) * at(i + 1, j) + (1 - a) * b * at(i, j + 1)
            + a * b * at(i + 1, j + 1))


@pytest.mark.gpu
def test_point_and_linear_filtering_exact(gpu, k):
    w, h = 6, 4
    img = [[4.0 * (x + 10 * y) for x in range(w)] for y in range(h)]
    arr = float_array(gpu, (w, h))
    sm = Sampler(gpu, k)
    fill(arr, [v for row in img for v in row], sm.s)
    res = ResourceDescriptor.from_opaque_array(arr)
    # weights of 0, 1/4, 1/2, 3/4 are exact in the texture unit's 8-bit fractions, and so are the results here
    points = [(x + 0.5, y + 0.5) for y in range(h) for x in range(w)]
    between = [(1.25, 0.5), (1.0, 1.0), (2.75, 3.25), (0.0, 0.0), (6.25, 3.75), (3.5, 2.0), (5.75, 0.25)]
    with gpu.create_texture_object(resource=res, options=TextureObjectOptions(filter_mode="point")) as tex:
        got = sm.run("sample2d", tex, [c for p in points for c in p], per=2)
        assert got == [img[int(y)][int(x)] for x, y in points]
        got = sm.run("sample2d", tex, [c for p in between for c in p], per=2)
        assert got == [img[min(max(int(y), 0), h - 1)][min(max(int(x), 0), w - 1)] for x, y in between]
    with gpu.create_texture_object(resource=res, options=TextureObjectOptions(filter_mode="linear")) as tex:
        got = sm.run("sample2d", tex, [c for p in points + between for c in p], per=2)
        assert got == [bilinear(img, w, h, x, y) for x, y in points + between]
        assert got[len(points):len(points) + 3] == [3.0, 22.0, 4.0 * (2.25 + 10 * 2.75)]
    arr.close()


@pytest.mark.gpu
def test_each_address_mode_out_of_range(gpu, k):
    n = 8
    values = [float(i + 1) for i in range(n)]
    arr = float_array(gpu, (n,))
    sm = Sampler(gpu, k)
    fill(arr, values, sm.s)
    res = ResourceDescriptor.from_opaque_array(arr)

    def sample(xs, **opts):
        with gpu.create_texture_object(resource=res, options=TextureObjectOptions(**opts)) as tex:
            return sm.run("sample1d", tex, xs)
    # element coordinates: CLAMP reads the edge, BORDER the border color
    assert sample([-5.0, -0.5, 0.5, 7.5, 8.5, 100.0]) == [1.0, 1.0, 1.0, 8.0, 8.0, 8.0]
    assert sample([-5.0, -0.5, 0.5, 7.5, 8.5, 100.0], address_mode="border", border_color=(9.5, 0, 0, 0)) == \
        [9.5, 9.5, 1.0, 8.0, 9.5, 9.5]
    # normalized coordinates in [0, 1): WRAP repeats, MIRROR reflects, CLAMP clamps
    inside = [(i + 0.5) / n for i in range(n)]
    assert sample(inside, normalized_coords=True) == values
    assert sample([u + 1 for u in inside] + [u - 2 for u in inside], address_mode="wrap",
                  normalized_coords=True) == values + values
    assert sample([u + 1 for u in inside] + [u - 1 for u in inside], address_mode="mirror",
                  normalized_coords=True) == values[::-1] + values[::-1]
    assert sample([-0.5, 1.5, 3.0], normalized_coords=True) == [1.0, 8.0, 8.0]
    assert sample([-0.5, 1.5], address_mode=("border",), border_color=[7.0, 0.0, 0.0, 0.0],
                  normalized_coords=True) == [7.0, 7.0]
    arr.close()


@pytest.mark.gpu
@pytest.mark.parametrize("fmt, code, values, scale", [
    ("uint8", "B", [0, 1, 51, 128, 254, 255], lambda v: v / 255),
    ("uint16", "H", [0, 1, 257, 32768, 65534, 65535], lambda v: v / 65535),
    ("int8", "b", [-128, -127, -1, 0, 64, 127], lambda v: max(v / 127, -1.0)),
    ("int16", "h", [-32768, -32767, -2, 0, 1000, 32767], lambda v: max(v / 32767, -1.0)),
])
def test_normalized_float_reads(gpu, k, fmt, code, values, scale):
    arr = gpu.create_opaque_array(OpaqueArrayOptions((len(values),), fmt, 1))
    sm = Sampler(gpu, k)
    fill(arr, values, sm.s, code)
    with gpu.create_texture_object(resource=ResourceDescriptor.from_opaque_array(arr),
                                   options=TextureObjectOptions(read_mode="normalized_float")) as tex:
        got = sm.run("sample1d", tex, [i + 0.5 for i in range(len(values))])
    want = [struct.unpack("<f", struct.pack("<f", scale(v)))[0] for v in values]
    for g, w_ in zip(got, want):
        assert abs(g - w_) <= 2 ** -23, (fmt, got, want)  # the conversion, to within one unit in the last place
    assert got[0] == want[0] and got[-1] == want[-1]  # 0, the extremes and -1 exactly
    # ELEMENT_TYPE: the integers themselves (unsigned here)
    if fmt in ("uint8", "uint16"):
        with gpu.create_texture_object(resource=ResourceDescriptor.from_opaque_array(arr)) as tex:
            assert sm.run("sample1d_uint", tex, [i + 0.5 for i in range(len(values))], out="I") == values
    arr.close()


@pytest.mark.gpu
def test_normalized_float_reads_filter_linearly(gpu, k):
    arr = gpu.create_opaque_array(OpaqueArrayOptions((2,), "uint8", 1))
    sm = Sampler(gpu, k)
    fill(arr, [0, 255], sm.s, "B")
    with gpu.create_texture_object(resource=ResourceDescriptor.from_opaque_array(arr),
                                   options=TextureObjectOptions(read_mode="normalized_float",
                                                                filter_mode="linear")) as tex:
        got = sm.run("sample1d", tex, [0.5, 0.75, 1.0, 1.25, 1.5])
    # The texture unit interpolates normalized values in its own fixed point: on the H100 the quarter point read
    # 0.2500038 (4e-6 off), not 0.25. Within 2^-16 of the exact weights, and the ends exact.
    want = [0.0, 0.25, 0.5, 0.75, 1.0]
    assert all(abs(g - w) <= 2 ** -16 for g, w in zip(got, want)), got
    assert got[0] == 0.0 and got[-1] == 1.0
    arr.close()


@pytest.mark.gpu
def test_explicit_level_of_detail(gpu, k):
    levels = 4
    mip = gpu.create_mipmapped_array(MipmappedArrayOptions((8, 8), "float32", 1, levels))
    sm = Sampler(gpu, k)
    for i in range(levels):
        lvl = mip.get_level(i)
        fill(lvl, [10.0 * (i + 1)] * (lvl.shape[0] * lvl.shape[1]), sm.s)
    res = ResourceDescriptor.from_mipmapped_array(mip)
    coords = [c for lod in (0.0, 1.0, 2.0, 3.0, 0.5, 2.25, 5.0) for c in (0.5, 0.5, lod)]
    point = TextureObjectOptions(normalized_coords=True, max_mipmap_level_clamp=float(levels - 1))
    with gpu.create_texture_object(resource=res, options=point) as tex:
        got = sm.run("sample2d_lod", tex, coords, per=3)
        assert got[:4] == [10.0, 20.0, 30.0, 40.0] and got[6] == 40.0
    blend = TextureObjectOptions(normalized_coords=True, mipmap_filter_mode="linear", filter_mode="linear",
                                 max_mipmap_level_clamp=float(levels - 1))
    with gpu.create_texture_object(resource=res, options=blend) as tex:
        got = sm.run("sample2d_lod", tex, coords, per=3)
        assert got == [10.0, 20.0, 30.0, 40.0, 15.0, 32.5, 40.0]
    clamped = TextureObjectOptions(normalized_coords=True, min_mipmap_level_clamp=1.0, max_mipmap_level_clamp=2.0)
    with gpu.create_texture_object(resource=res, options=clamped) as tex:
        assert sm.run("sample2d_lod", tex, coords, per=3)[:4] == [20.0, 20.0, 30.0, 30.0]
    mip.close()


@pytest.mark.gpu
def test_3d_layered_and_cubemap_fetches(gpu, k):
    sm = Sampler(gpu, k)
    point = TextureObjectOptions()
    # 3D
    vol = float_array(gpu, (4, 3, 2))
    fill(vol, [float(1000 * z + 10 * y + x) for z in range(2) for y in range(3) for x in range(4)], sm.s)
    with gpu.create_texture_object(resource=ResourceDescriptor.from_opaque_array(vol), options=point) as tex:
        pts = [(x, y, z) for z in range(2) for y in range(3) for x in range(4)]
        assert sm.run("sample3d", tex, [c + 0.5 for p in pts for c in p], per=3) == \
            [float(1000 * z + 10 * y + x) for x, y, z in pts]
    # 2D layered
    layered = float_array(gpu, (4, 4), kind="layered", num_layers=3)
    fill(layered, [float(100 * l + 4 * y + x) for l in range(3) for y in range(4) for x in range(4)], sm.s)
    with gpu.create_texture_object(resource=ResourceDescriptor.from_opaque_array(layered), options=point) as tex:
        pts = [(x, y, l) for l in (2, 0, 1) for y in range(4) for x in range(4)]
        assert sm.run("sample2d_layered", tex, [v for x, y, l in pts for v in (x + 0.5, y + 0.5, l)], per=3) == \
            [float(100 * l + 4 * y + x) for x, y, l in pts]
    # cubemap: face f (+X, -X, +Y, -Y, +Z, -Z) holds f + 1; directions, read with normalized coordinates (as
    # the CUDA samples do)
    point = TextureObjectOptions(normalized_coords=True)
    cube = float_array(gpu, (4, 4), kind="cubemap")
    fill(cube, [float(f + 1) for f in range(6) for _ in range(16)], sm.s)
    directions = [(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)]
    with gpu.create_texture_object(resource=ResourceDescriptor.from_opaque_array(cube), options=point) as tex:
        assert sm.run("sample_cube", tex, [float(c) for d in directions for c in d], per=3) == \
            [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    with gpu.create_texture_object(resource=ResourceDescriptor.from_opaque_array(cube),
                                   options=TextureObjectOptions(seamless_cubemap=True, filter_mode="linear",
                                                                normalized_coords=True)) as tex:
        assert sm.run("sample_cube", tex, [float(c) for d in directions for c in d], per=3) == \
            [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]  # the centre of a face is one face's
    # layered cubemap: cubemap c, face f holds 10 c + f + 1
    cubes = float_array(gpu, (2, 2), kind="layered_cubemap", num_layers=2)
    fill(cubes, [float(10 * c + f + 1) for c in range(2) for f in range(6) for _ in range(4)], sm.s)
    with gpu.create_texture_object(resource=ResourceDescriptor.from_opaque_array(cubes), options=point) as tex:
        coords = [float(v) for c in (1, 0) for d in directions for v in d + (c,)]
        assert sm.run("sample_cube_layered", tex, coords, per=4) == \
            [float(10 * c + f + 1) for c in (1, 0) for f in range(6)]
    for a in (vol, layered, cube, cubes):
        a.close()


@pytest.mark.gpu
def test_linear_and_pitched_textures(gpu, k):
    sm = Sampler(gpu, k)
    n = 64
    buf = texture_memory(gpu, 4 * n, sm.s)
    fill(buf, [1.5 * i for i in range(n)], sm.s)
    lin = ResourceDescriptor.from_linear(buf, format="float32", num_channels=1)
    with gpu.create_texture_object(resource=lin) as tex:
        got = sm.run("fetch1d", tex, [0.0] * (n + 4))  # 4 fetches past the end read 0
        assert got == [1.5 * i for i in range(n)] + [0.0] * 4
    half = ResourceDescriptor.from_linear(buf, format="float32", num_channels=1, size_bytes=4 * 16)
    with gpu.create_texture_object(resource=half) as tex:
        assert sm.run("fetch1d", tex, [0.0] * 20) == [1.5 * i for i in range(16)] + [0.0] * 4
    # pitched 2D: rows of 5 floats, `pitch` bytes apart (the device's texture pitch alignment)
    w, h = 5, 3
    pitch = max(gpu.properties.texture_pitch_alignment, 32)
    img = texture_memory(gpu, pitch * h, sm.s)
    img.fill(0, stream=sm.s)
    for y in range(h):
        img.copy_from_host(struct.pack(f"<{w}f", *[10.0 * y + x for x in range(w)]), stream=sm.s, offset=y * pitch)
    p2 = ResourceDescriptor.from_pitch2d(img, format="float32", num_channels=1, width=w, height=h, pitch_bytes=pitch)
    with gpu.create_texture_object(resource=p2) as tex:
        pts = [(x + 0.5, y + 0.5) for y in range(h) for x in range(w)] + [(9.0, 9.0), (-3.0, 1.5)]
        assert sm.run("sample2d", tex, [c for p in pts for c in p], per=2) == \
            [10.0 * y + x for y in range(h) for x in range(w)] + [24.0, 10.0]
    with gpu.create_texture_object(resource=p2, options=TextureObjectOptions(filter_mode="linear")) as tex:
        assert sm.run("sample2d", tex, [1.0, 0.5, 2.0, 1.75], per=2) == [0.5, 1.5 + 10.0 * 1.25]
    # the pitch and the address must meet the device's alignments
    with pytest.raises(ValueError):
        gpu.create_texture_object(resource=ResourceDescriptor.from_pitch2d(
            img, format="float32", num_channels=1, width=w, height=2, pitch_bytes=pitch + 4))
    with pytest.raises(ValueError):
        gpu.create_texture_object(resource=ResourceDescriptor.from_linear(buf.view(4, 64), format="float32",
                                                                          num_channels=1))
    buf.close()
    img.close()


@pytest.mark.gpu
def test_textures_keep_their_memory_when_everything_else_is_closed(gpu, k):
    sm = Sampler(gpu, k)
    arr = float_array(gpu, (4,))
    fill(arr, [1.0, 2.0, 3.0, 4.0], sm.s)
    tex = gpu.create_texture_object(resource=ResourceDescriptor.from_opaque_array(arr))
    buf = texture_memory(gpu, 16, sm.s)
    fill(buf, [5.0, 6.0, 7.0, 8.0], sm.s)
    ltex = gpu.create_texture_object(resource=ResourceDescriptor.from_linear(buf, format="float32", num_channels=1))
    sm.s.sync()
    arr.close()
    buf.close()
    gc.collect()
    assert sm.run("sample1d", tex, [0.5, 1.5, 2.5, 3.5]) == [1.0, 2.0, 3.0, 4.0]
    assert sm.run("fetch1d", ltex, [0.0] * 4) == [5.0, 6.0, 7.0, 8.0]
    tex.close()
    ltex.close()


@pytest.mark.gpu
def test_surface_writes_read_back(gpu, k):
    s = gpu.create_stream()
    w, h = 19, 7
    arr = float_array(gpu, (w, h), is_surface_load_store=True)
    with SurfaceObject.from_array(arr) as surf:
        cucore.launch(s, cucore.LaunchConfig(grid=((w + 7) // 8, (h + 7) // 8), block=(8, 8)),
                      k.get_kernel("write_surface"), surf, w, h)
        out = bytearray(arr.size_bytes)
        arr.copy_to(out, stream=s)
        s.sync()
    assert list(struct.unpack(f"<{w * h}f", out)) == [x + 100.0 * y for y in range(h) for x in range(w)]
    rgba = gpu.create_opaque_array(OpaqueArrayOptions((w, h), "uint8", 4, is_surface_load_store=True))
    with gpu.create_surface_object(resource=ResourceDescriptor.from_opaque_array(rgba)) as surf:
        cucore.launch(s, cucore.LaunchConfig(grid=((w + 7) // 8, (h + 7) // 8), block=(8, 8)),
                      k.get_kernel("write_surface_rgba8"), surf, w, h)
        got = rgba.to_bytes(stream=s)
    assert got == bytes(v for y in range(h) for x in range(w) for v in (x, y, x + y, 255 - x))
    # layered surfaces: read one, write another
    src = float_array(gpu, (4, 2), kind="layered", num_layers=3, is_surface_load_store=True)
    dst = float_array(gpu, (4, 2), kind="layered", num_layers=3, is_surface_load_store=True)
    values = [float(i) for i in range(24)]
    fill(src, values, s)
    with SurfaceObject.from_array(src) as a, SurfaceObject.from_array(dst) as b:
        cucore.launch(s, cucore.LaunchConfig(grid=1, block=(4, 2)), k.get_kernel("copy_surface_layered"), a, b, 4, 2, 3)
        got = struct.unpack("<24f", dst.to_bytes(stream=s))
    assert list(got) == [2.0 * v + i // 8 for i, v in enumerate(values)]
    for x in (arr, rgba, src, dst):
        x.close()
