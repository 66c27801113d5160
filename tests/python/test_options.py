"""StreamOptions / EventOptions validation and their C structs. No GPU needed."""
import ctypes

import pytest

import cucore
from cucore import _lib
from cucore.event import _options_struct as event_struct
from cucore.stream import _options_struct as stream_struct


def test_stream_options_defaults():
    o = cucore.StreamOptions()
    assert o.nonblocking is True and o.priority is None
    s = stream_struct(o)
    assert (s.struct_size, s.flags, s.priority) == (ctypes.sizeof(_lib.StreamOptionsC), 0, 0)
    assert ctypes.sizeof(_lib.StreamOptionsC) == 12
    assert stream_struct(None) is None


def test_stream_options_mapping():
    s = stream_struct(cucore.StreamOptions(nonblocking=False, priority=-3))
    assert (s.flags, s.priority) == (1, -3)
    s = stream_struct({"nonblocking": True, "priority": -1})
    assert (s.flags, s.priority) == (0, -1)


@pytest.mark.parametrize("kwargs, exc", [
    ({"nonblocking": 1}, TypeError),
    ({"nonblocking": None}, TypeError),
    ({"priority": 1.5}, TypeError),
    ({"priority": "high"}, TypeError),
    ({"priority": True}, TypeError),
    ({"priority": 2**40}, ValueError),
])
def test_stream_options_validation(kwargs, exc):
    with pytest.raises(exc):
        cucore.StreamOptions(**kwargs)


def test_stream_options_wrong_type():
    with pytest.raises(TypeError):
        stream_struct(cucore.EventOptions())
    with pytest.raises(TypeError):
        stream_struct({"bogus": 1})


def test_event_options_defaults_and_mapping():
    o = cucore.EventOptions()
    assert o.timing_enabled is False and o.blocking_sync is False
    assert ctypes.sizeof(_lib.EventOptionsC) == 8
    assert event_struct(o).flags == 0
    assert event_struct(cucore.EventOptions(timing_enabled=True)).flags == 1
    assert event_struct(cucore.EventOptions(blocking_sync=True)).flags == 2
    s = event_struct({"timing_enabled": True, "blocking_sync": True})
    assert (s.struct_size, s.flags) == (8, 3)
    assert event_struct(None) is None


@pytest.mark.parametrize("kwargs", [{"timing_enabled": 1}, {"blocking_sync": "yes"}, {"timing_enabled": None}])
def test_event_options_validation(kwargs):
    with pytest.raises(TypeError):
        cucore.EventOptions(**kwargs)


def test_event_options_unknown_field():
    with pytest.raises(TypeError):
        cucore.EventOptions(interprocess=True)  # the field is ipc_enabled
    with pytest.raises(TypeError):
        event_struct(cucore.StreamOptions())


def test_managed_options_layout():
    # cucore_managed_memory_resource_options_t: use_pool took reserved0's place; nothing else moved.
    C = _lib.STRUCTS["cucore_managed_memory_resource_options_t"]
    assert [f for f, _ in C._fields_] == ["struct_size", "use_pool", "preferred_location", "max_size",
                                          "release_threshold"]
    assert (C.use_pool.offset, C.preferred_location.offset, C.max_size.offset, C.release_threshold.offset,
            ctypes.sizeof(C)) == (4, 8, 16, 24, 32)


def test_struct_layouts_match_the_header():
    assert [f for f, _ in _lib.StreamOptionsC._fields_] == ["struct_size", "flags", "priority"]
    assert ctypes.sizeof(_lib.UuidC) == 16
    # cucore_device_properties_t: uint32 + 21 ints + padding + uint64
    assert ctypes.sizeof(_lib.DevicePropertiesC) == 96
    assert _lib.DevicePropertiesC.total_memory.offset == 88


def test_objects_cannot_be_made_directly():
    for cls in (cucore.Stream, cucore.Event, cucore.Context):
        with pytest.raises(TypeError, match="cannot be instantiated directly"):
            cls()


def test_attribute_names():
    from cucore.device import attribute_id
    A = cucore.DeviceAttribute
    assert attribute_id(A.MULTIPROCESSOR_COUNT) == 16
    assert attribute_id("multiprocessor_count") == 16
    assert attribute_id("MULTIPROCESSOR_COUNT") == 16
    assert attribute_id("CUCORE_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT") == 16
    assert attribute_id("CU_DEVICE_ATTRIBUTE_WARP_SIZE") == 10
    assert attribute_id(75) == 75
    with pytest.raises(ValueError):
        attribute_id("no_such_attribute")
    with pytest.raises(TypeError):
        attribute_id(1.0)
    with pytest.raises(TypeError):
        attribute_id(True)


def test_device_argument_validation():
    with pytest.raises(TypeError):
        cucore.Device("0")
    with pytest.raises(TypeError):
        cucore.Device(True)


def test_abi_structs_match_the_headers():
    import re
    from conftest import REPO
    from cucore import _abi, _abi_constants, _abi_types
    headers = REPO / "include" / "cucore"
    if not headers.is_dir():
        pytest.skip("not running from a checkout")
    text = "\n".join(p.read_text() for p in sorted(headers.glob("*.h")))
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    found = {}
    # named and anonymous structs (DLPack's DLTensor, DLDevice... are `typedef struct { ... } Name;`)
    for m in re.finditer(r"typedef struct (\w*)\s*\{(.*?)\} (\w+);", text, re.S):
        fields = []
        for decl in m.group(2).split(";"):
            decl = " ".join(decl.split())
            if not decl:
                continue
            fp = re.match(r"^.*\(\*(\w+)\)\s*\(.*\)$", decl)  # a function-pointer field
            if fp:  # _abi.py names its type "<struct>.<field>" in CALLBACKS
                fields.append((fp.group(1), f"{m.group(3)}.{fp.group(1)}"))
                continue
            fm = re.match(r"^(.*?)\s*(\w+)(?:\[(\w+)\])?$", decl)  # an array's size may be a macro
            spelling = re.sub(r"\s*\*", "*", re.sub(r"\bconst\b\s*", "", fm.group(1)).strip())
            if fm.group(3):  # _abi.py spells arrays T[N] with N a number
                size = fm.group(3)
                spelling += f"[{_abi_constants.CONSTANTS.get(size, size)}]"
            fields.append((fm.group(2), spelling))
        found[m.group(3)] = tuple(fields)
    assert set(found) == set(_abi_types.STRUCTS)
    for name, fields in _abi_types.STRUCTS.items():
        assert found[name] == fields, name
    for name in _abi_types.CALLBACKS:
        if "." in name:  # a function-pointer field of a struct (checked above)
            struct, field = name.split(".")
            assert (field, name) in found[struct], name
        else:
            assert re.search(rf"\(\*{name}\)\(", text), name


# ---- copy and pickle (issue 12: LaunchConfig raised AttributeError on copy.copy and PicklingError on pickle;
# ProgramOptions and LinkerOptions could not be deep-copied or pickled, their cached C structs hold pointers) ----

def _every_options_object():
    """One object of every options class of the package (and LaunchConfig), with fields away from the defaults."""
    return [
        cucore.LaunchConfig(grid=(4, 2), cluster=2, block=128, shmem_size=1024, cooperative_launch=True,
                            programmatic_stream_serialization=True, priority=-1),
        cucore.LaunchConfig(),
        cucore.StreamOptions(nonblocking=False, priority=-2),
        cucore.EventOptions(timing_enabled=True, blocking_sync=True),
        cucore.DeviceMemoryResourceOptions(max_size=1 << 20, release_threshold=4096, ipc_enabled=True),
        cucore.PinnedMemoryResourceOptions(ipc_enabled=True, max_size=1 << 20, numa_id=0),
        cucore.ManagedMemoryResourceOptions(max_size=1 << 20, use_pool=True),
        cucore.VirtualMemoryResourceOptions(location_type="host", granularity="minimum", reserve_size=1 << 21,
                                            self_access="r"),
        cucore.ProgramOptions(name="k.cu", arch="sm_90", std="c++17", define_macro=["A", ("B", "2")],
                              include_path=["/usr/include"], ftz=True, prec_div=False, max_register_count=32,
                              headers={"h.cuh": "#define H 1\n"}),
        cucore.LinkerOptions(name="l", arch="sm_90", ftz=True, fma=False, ptxas_options=["-v"],
                             extra_options=["-lto"], backend="driver"),
        cucore.OpaqueArrayOptions((64, 32), "uint16", 2, True, kind="layered", num_layers=3, is_texture_gather=True),
        cucore.MipmappedArrayOptions((64, 64), "float32", 1, 5, is_depth_texture=True),
        cucore.TextureObjectOptions(address_mode=("wrap", "border"), filter_mode="linear", read_mode="normalized_float",
                                    normalized_coords=True, max_anisotropy=4, mipmap_level_bias=0.5,
                                    border_color=(1.0, 2.0, 3.0, 4.0)),
        cucore.TensorMapDescriptorOptions(box_dim=(8, 32), element_strides=(1, 2), data_type="float16",
                                          swizzle=cucore.TensorMapSwizzle.SWIZZLE_64B, l2_promotion="l2_128b"),
        cucore.SMResourceOptions(count=[8, 8], backfill=True),
        cucore.WorkqueueResourceOptions(sharing_scope="green_ctx_balanced", concurrency_limit=4),
        cucore.ContextOptions(resources=[]),  # resources are handles, which do not pickle
    ]


def test_every_options_class_is_covered():
    covered = {type(o).__name__ for o in _every_options_object()}
    public = {name for name in dir(cucore) if name.endswith("Options") or name == "LaunchConfig"}
    assert public == covered


def _fields(o):
    if isinstance(o, cucore.LaunchConfig):
        return o._key()
    return {k: v for k, v in vars(o).items() if k != "_c"}


@pytest.mark.parametrize("how", ["copy", "deepcopy", "pickle"])
def test_options_copy_and_pickle_to_equal_independent_objects(how):
    import copy
    import pickle
    make = {"copy": copy.copy, "deepcopy": copy.deepcopy,
            "pickle": lambda o: pickle.loads(pickle.dumps(o, protocol=pickle.HIGHEST_PROTOCOL))}[how]
    for original in _every_options_object():
        duplicate = make(original)
        name = type(original).__name__
        assert type(duplicate) is type(original), name
        assert duplicate is not original, name
        assert duplicate == original, name
        assert _fields(duplicate) == _fields(original), name
        if isinstance(original, cucore.LaunchConfig):
            # The copy has its own C struct, with the same contents.
            assert duplicate._struct is not original._struct
            assert bytes(duplicate._struct) == bytes(original._struct)
            assert hash(duplicate) == hash(original)
            duplicate.shmem_size = 7
            assert original.shmem_size != 7 and duplicate != original
        elif isinstance(original, (cucore.OpaqueArrayOptions, cucore.MipmappedArrayOptions,
                                   cucore.TextureObjectOptions)):
            # The copy builds its own C struct, equal to the original's.
            a, b = original._struct(), duplicate._struct()
            assert a is not b and bytes(a) == bytes(b), name
            if isinstance(original, cucore.TextureObjectOptions):
                duplicate.max_anisotropy = 2
                assert original.max_anisotropy == 4 and duplicate != original
                assert original._struct().max_anisotropy == 4 and duplicate._struct().max_anisotropy == 2
        elif hasattr(original, "_to_c"):
            # The copy builds its own C struct (the cache is not carried), equal to the original's.
            a, b = original._to_c(), duplicate._to_c()
            assert a is not b
            # The struct itself: ProgramOptions keeps it with its arrays (.struct), LinkerOptions as (struct, ref, ...).
            a, b = (getattr(x, "struct", None) or x[0] for x in (a, b))
            assert (a.struct_size, a.ftz, a.fma, a.arch) == (b.struct_size, b.ftz, b.fma, b.arch), name
            duplicate.name = "other"
            assert original.name != "other" and duplicate != original
