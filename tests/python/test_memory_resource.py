"""What every memory resource has (include/cucore/memory_resource.h; bindings/python/cucore/memory_resource.py): the
memory ABI against the header, the kinds and their exported names, the options structs of every kind,
constructor and raw create-function argument errors, the device's default resource (Device.memory_resource,
Device.allocate) and the legacy pinned resource.

Without a GPU: the header checks and argument errors. With a GPU (or the fake driver): the default resource,
legacy pinned memory and the wrapper identity of resources seen through their buffers, with the bytes read
back."""
import ctypes
import re

import pytest

import cucore
from cucore import _abi, _abi_constants, _abi_types, _lib
from cucore import buffer as buffer_module, memory_resource as memory_module
from conftest import (
    REPO, MemoryHeaders, memory_baseline as _baseline, or_skip as _or_skip, random_bytes as _random_bytes,
)

MEMORY_H = MemoryHeaders(REPO / "include" / "cucore")  # the memory headers, read as one text


@pytest.fixture
def stream(gpu):
    s = gpu.create_stream()
    yield s
    s.sync()


def _header_functions():
    text = re.sub(r"/\*.*?\*/", " ", MEMORY_H.read_text(), flags=re.S)
    return re.findall(r"CUCORE_API\s+[\w\s\*]+?\b(cucore_\w+)\s*\(", text)


def _header_struct_fields(name):
    text = re.sub(r"/\*.*?\*/", " ", MEMORY_H.read_text(), flags=re.S)
    body = re.search(rf"typedef struct {name[:-2]} \{{(.*?)\}} {name};", text, re.S).group(1)
    return [" ".join(d.split()).split()[-1] for d in body.split(";") if d.strip()]


# ============================================================================================================
# No GPU: the ABI, the kinds, options structs, argument errors
# ============================================================================================================


def test_abi_table_has_every_memory_function():
    if not MEMORY_H.is_file():
        pytest.skip("not running from a checkout")
    names = _header_functions()
    assert len(names) == 53, names
    missing = [n for n in names if n not in _abi.ABI]
    assert not missing
    # and the binding binds all of them (the device's default-resource functions live in device.py; buffers,
    # the resource kinds, pools and peer access, managed memory, virtual memory, strided copies and user
    # resources in the module of their capability)
    import importlib
    from cucore import device as device_module, managed_memory, memory_pool, user_memory, virtual_memory
    copy_3d_module = importlib.import_module("cucore.copy_3d")  # cucore.copy_3d is the function
    bound = {n[1:] for m in (memory_module, buffer_module, device_module, managed_memory, copy_3d_module,
                             memory_pool, virtual_memory, user_memory) for n in vars(m) if n.startswith("_cucore_")}
    assert set(names) <= bound, set(names) - bound
    for handle in ("cucore_memory_resource_t", "cucore_buffer_t"):
        assert handle in _abi_types.HANDLE_TYPES
    assert "cucore_memory_resource_kind_t" in _abi_constants.ENUM_TYPES


def test_kind_and_object_type_enums_match_the_header():
    text = MEMORY_H.read_text()
    kinds = {m.group(1): int(m.group(2)) for m in re.finditer(r"CUCORE_MEMORY_RESOURCE_(\w+)\s*=\s*(\d+)", text)
             if m.group(1) != "UNSET" and not m.group(1).endswith("FORCE_INT32")}
    assert {k.name: int(k) for k in cucore.MemoryResourceKind} == kinds
    assert (cucore.ObjectType.MEMORY_RESOURCE, cucore.ObjectType.BUFFER) == (5, 6)


def test_every_new_name_is_exported():
    # each name is the class of the module of its capability
    from cucore import memory_pool
    for name, module in (("Buffer", buffer_module), ("MemoryResource", memory_module),
                         ("MemoryResourceKind", memory_module), ("DeviceMemoryResource", memory_pool),
                         ("DeviceMemoryResourceOptions", memory_pool), ("LegacyPinnedMemoryResource", memory_module)):
        assert name in cucore.__all__ and getattr(cucore, name) is getattr(module, name)
    assert cucore.Buffer is buffer_module.Buffer  # Buffer lives in buffer.py


def test_classes_cannot_be_instantiated_directly():
    with pytest.raises(TypeError, match="allocate"):
        cucore.Buffer()
    with pytest.raises(TypeError, match="DeviceMemoryResource"):
        cucore.MemoryResource()


@pytest.mark.parametrize("name, size", [("cucore_pinned_memory_resource_options_t", 32),
                                        ("cucore_managed_memory_resource_options_t", 32),
                                        ("cucore_virtual_memory_resource_options_t", 64),
                                        ("cucore_location_t", 8)])
def test_option_structs_match_the_header(name, size):
    if not MEMORY_H.is_file():
        pytest.skip("not running from a checkout")
    assert [f for f, _ in _abi_types.STRUCTS[name]] == _header_struct_fields(name)
    assert ctypes.sizeof(_lib.STRUCTS[name]) == size
    text = MEMORY_H.read_text()
    macro = name[:-2].upper() + "_INIT"
    if macro in text:  # the INIT macro lists every field
        init = re.search(rf"#define {macro}\s*\\\s*\{{(.*?)\}}\s*\n", text, re.S).group(1)
        assert init.count(",") - init.count("{") == len(_abi_types.STRUCTS[name]) - 1, init


def test_every_resource_name_is_exported():
    for name in ("PinnedMemoryResource", "PinnedMemoryResourceOptions", "ManagedMemoryResource",
                 "ManagedMemoryResourceOptions", "ManagedBuffer", "VirtualMemoryResource",
                 "VirtualMemoryResourceOptions", "PeerAccessSet", "MemoryRegion", "copy_3d"):
        assert name in cucore.__all__ and hasattr(cucore, name), name
    kinds = {k.name: int(k) for k in cucore.MemoryResourceKind}
    assert kinds == {"DEVICE": 1, "LEGACY_PINNED": 2, "PINNED": 3, "MANAGED": 4, "VIRTUAL": 5, "USER": 6,
                     "IMPORTED": 7, "GRAPHICS": 8, "GRAPH": 9}


def test_every_kind_with_a_class_registers_it():
    # Answers naming a resource made elsewhere (Buffer.memory_resource, Device.memory_resource) give the class of
    # its kind: each built-in class registers itself by its _resource_kind when its module defines it.
    K = cucore.MemoryResourceKind
    classes = {K.DEVICE: cucore.DeviceMemoryResource, K.LEGACY_PINNED: cucore.LegacyPinnedMemoryResource,
               K.PINNED: cucore.PinnedMemoryResource, K.MANAGED: cucore.ManagedMemoryResource,
               K.VIRTUAL: cucore.VirtualMemoryResource, K.IMPORTED: cucore.ImportedMemoryResource,
               K.GRAPH: cucore.GraphMemoryResource}
    assert memory_module._KIND_CLASSES == classes
    assert set(K) - set(classes) == {K.USER, K.GRAPHICS}  # answered as MemoryResource


def test_constructor_argument_errors(lib):
    with pytest.raises(TypeError, match="options must be PinnedMemoryResourceOptions"):
        cucore.PinnedMemoryResource(cucore.VirtualMemoryResourceOptions(), device=0)
    with pytest.raises(TypeError, match="bogus"):
        cucore.PinnedMemoryResource({"bogus": 1}, device=0)
    with pytest.raises(TypeError, match="needs a device"):
        cucore.VirtualMemoryResource(None)
    with pytest.raises(TypeError, match="needs a device"):
        cucore.VirtualMemoryResource(cucore.VirtualMemoryResourceOptions())
    with pytest.raises(TypeError, match="device must be a Device, a device ordinal or None, not str"):
        cucore.ManagedMemoryResource(device="0")


def test_raw_create_functions_check_their_arguments(lib):
    f = lib.function
    out = ctypes.c_void_p(0x1234)
    for name in ("cucore_pinned_memory_resource_create", "cucore_managed_memory_resource_create",
                 "cucore_virtual_memory_resource_create"):
        st = f(name)(None, None, ctypes.byref(out))
        assert st in (cucore.Status.ERROR_INVALID_HANDLE, cucore.Status.ERROR_INVALID_ARGUMENT), name
        assert out.value is None and name in cucore.last_error_message()
    assert f("cucore_user_memory_resource_create")(None, ctypes.byref(out)) == cucore.Status.ERROR_INVALID_ARGUMENT
    c = _lib.STRUCTS["cucore_memory_resource_callbacks_t"]()
    c.struct_size = ctypes.sizeof(c)
    assert f("cucore_user_memory_resource_create")(c, ctypes.byref(out)) == cucore.Status.ERROR_INVALID_ARGUMENT
    assert "allocate" in cucore.last_error_message() and out.value is None


# ============================================================================================================
# GPU (or the fake driver)
# ============================================================================================================


@pytest.mark.gpu
def test_default_resource(gpu, stream):
    mr = gpu.memory_resource
    # The same pool (libcucore makes a new resource object per query while none is set).
    assert mr.handle == gpu.memory_resource.handle
    assert isinstance(mr, cucore.DeviceMemoryResource) and isinstance(mr, cucore.MemoryResource)
    assert (mr.kind, mr.device_id, mr.is_device_accessible, mr.is_host_accessible) == \
        (cucore.MemoryResourceKind.DEVICE, gpu.device_id, True, False)
    assert "DeviceMemoryResource of device" in repr(mr)
    assert mr.handle != 0  # the CUmemoryPool
    other = cucore.DeviceMemoryResource(gpu.device_id)  # the same pool, another resource object
    assert other.kind == cucore.MemoryResourceKind.DEVICE and other.device_id == gpu.device_id
    assert cucore.DeviceMemoryResource(gpu).device_id == gpu.device_id
    b = gpu.allocate(4096, stream=stream)
    assert b.memory_resource.handle == mr.handle  # the current pool (a new resource object per query)
    assert (b.size, b.device_id, b.is_device_accessible, b.is_host_accessible) == (4096, gpu.device_id, True, False)
    assert b.handle != 0 and b.handle == b.handle
    b2 = other.allocate(4096, stream=stream)
    assert b2.memory_resource is other and b2.handle != b.handle
    b.fill(0x5A, stream=stream)
    assert b.to_bytes(stream=stream) == b"\x5a" * 4096


@pytest.mark.gpu
def test_legacy_pinned_memory(gpu, stream):
    base = _baseline(gpu)
    mr = cucore.LegacyPinnedMemoryResource()
    assert (mr.kind, mr.device_id, mr.is_device_accessible, mr.is_host_accessible) == \
        (cucore.MemoryResourceKind.LEGACY_PINNED, -1, True, True)
    assert "host" in repr(mr)
    assert mr.handle == 0, "legacy pinned memory has no pool"
    pool = cucore.DeviceMemoryResource(gpu.device_id)
    assert pool.handle != 0, "the device's current CUmemoryPool"
    pool.close()
    assert cucore.LegacyPinnedMemoryResource(gpu.device_id).kind == cucore.MemoryResourceKind.LEGACY_PINNED
    n = 4096
    data = _random_bytes(n, seed=99)
    pinned = mr.allocate(n)  # synchronous: no stream needed
    assert (pinned.size, pinned.device_id, pinned.is_host_accessible, pinned.is_device_accessible) == \
        (n, -1, True, True)
    assert pinned.memory_resource is mr
    ctypes.memmove(pinned.handle, data, n)  # the address is host memory
    assert ctypes.string_at(pinned.handle, n) == data
    d = gpu.allocate(n, stream=stream)
    d.copy_from(pinned, stream=stream)
    assert d.to_bytes(stream=stream) == data
    d.fill(0x3C, stream=stream)
    pinned.copy_from(d, stream=stream)
    stream.sync()
    assert ctypes.string_at(pinned.handle, n) == b"\x3c" * n
    # fills and host copies work on pinned memory too
    pinned.fill(0x01020304, width=4, stream=stream)
    stream.sync()
    assert ctypes.string_at(pinned.handle, 8) == b"\x04\x03\x02\x01" * 2
    view = pinned.view(100, 10)
    assert view.is_host_accessible and view.memory_resource == mr
    ctypes.memmove(view.handle, b"0123456789", 10)
    assert pinned.to_bytes(stream=stream)[100:110] == b"0123456789"
    with_stream = mr.allocate(64, stream=stream)
    with_stream.close()
    pinned.close()
    del view, d, mr
    assert _baseline() == base


@pytest.mark.gpu
def test_device_memory_resource_setter(gpu, stream):
    default = gpu.memory_resource
    pinned = cucore.LegacyPinnedMemoryResource(gpu)
    try:
        gpu.memory_resource = pinned
        b = gpu.allocate(64, stream=stream)
        assert b.memory_resource is pinned and b.is_host_accessible
        with pytest.raises(TypeError):
            gpu.memory_resource = "pool"
    finally:
        gpu.memory_resource = None  # back to the device's current pool (nothing set)
    assert gpu.memory_resource.handle == default.handle


def test_default_resource_is_shared_and_resettable(gpu, stream):
    gpu.memory_resource = None  # start from the current pool whatever earlier tests assigned
    base = _baseline(gpu)
    pool = cucore.DeviceMemoryResource(gpu.device_id, cucore.DeviceMemoryResourceOptions())
    gpu.memory_resource = pool
    assert gpu.memory_resource is pool
    buf = gpu.allocate(4096, stream=stream)
    assert buf.memory_resource is pool
    buf.close(stream=stream)
    # Another Device object of the same ordinal (and every language) sees the same default.
    raw = ctypes.c_void_p()
    assert cucore._lib.function("cucore_device_get_memory_resource")(gpu._h, raw) == 0
    assert raw.value == pool._hv
    cucore._lib.function("cucore_memory_resource_release")(raw)
    gpu.memory_resource = None
    assert gpu.memory_resource.handle != pool.handle
    pool.close()
    stream.sync()
    assert _baseline(gpu) == base


@pytest.mark.gpu
def test_resources_keep_identity_through_buffers(gpu, stream):
    for make in (lambda: cucore.PinnedMemoryResource({}, device=gpu), lambda: cucore.VirtualMemoryResource(gpu)):
        mr = _or_skip(make, "this kind of resource")
        b = mr.allocate(256, stream=stream)
        v = b.view(0, 16)
        assert v.memory_resource is mr and type(v.memory_resource) is type(mr)
        b.close()
