"""The generated raw layer (_abi.py, _abi_constants.py) against the C compiler and the loaded library."""
import ctypes

import pytest

import cucore
from cucore import _abi, _abi_constants, _abi_types, _lib


def test_ctypes_structs_have_the_c_compilers_layout():
    # _lib checks this at import; here each struct is compared explicitly, field by field.
    assert _abi_types.LAYOUTS.keys() == _abi_types.STRUCTS.keys()
    for name, (size, align, offsets) in _abi_types.LAYOUTS.items():
        cls = _lib.STRUCTS[name]
        assert (ctypes.sizeof(cls), ctypes.alignment(cls)) == (size, align), name
        for (field, _), offset in zip(_abi_types.STRUCTS[name], offsets):
            assert getattr(cls, field).offset == offset, f"{name}.{field}"


def test_the_library_reports_the_same_layouts(lib):
    path = lib.load()
    assert _lib._check_library_layouts(_lib._dll, path) == []


class _LibraryWithOtherLayouts:
    """A stand-in library whose cucore_abi_layout answers 8 more than this binding expects for one field."""

    def __init__(self, struct, field):
        self.struct, self.field = struct, field

        def query(struct_name, field_name, value):
            name = struct_name.decode()
            size, _, offsets = _abi_types.LAYOUTS[name]
            if field_name is None:
                result = size
            else:
                fields = [f for f, _ in _abi_types.STRUCTS[name]]
                result = offsets[fields.index(field_name.decode())]
                if (name, field_name.decode()) == (self.struct, self.field):
                    result += 8
            value[0] = result
            return 0

        self.cucore_abi_layout = query


def test_a_library_with_other_layouts_is_refused():
    fake = _LibraryWithOtherLayouts("cucore_stream_options_t", "priority")
    problems = _lib._check_library_layouts(fake, "/fake/libcucore.so")
    assert len(problems) == 1
    assert "cucore_stream_options_t.priority" in problems[0] and "16 in the library, 8 in this binding" in problems[0]


def test_a_library_without_layouts_is_refused():
    class Old:
        pass
    problems = _lib._check_library_layouts(Old(), "/old/libcucore.so")
    assert problems and "exports no cucore_abi_layout" in problems[0]


def test_python_enums_are_the_headers():
    for member, value in _abi_constants.ENUMS["cucore_status_t"]:
        if not member.endswith("FORCE_INT32"):
            assert cucore.Status[member[len("CUCORE_"):]] == value
    types = {m: v for m, v in _abi_constants.ENUMS["cucore_object_type_t"]}
    assert {t.name for t in cucore.ObjectType} == {
        m[len("CUCORE_OBJECT_"):] for m in types if not m.endswith(("FORCE_INT32", "TYPE_COUNT"))}
    for t in cucore.ObjectType:
        assert types["CUCORE_OBJECT_" + t.name] == t.value


def test_every_handle_type_has_an_object_type_and_retain_release():
    for c_type, (noun, object_type) in _abi_types.HANDLE_TYPES.items():
        assert c_type == f"cucore_{noun}_t"
        assert dict(_abi_constants.ENUMS["cucore_object_type_t"])[f"CUCORE_OBJECT_{noun.upper()}"] == object_type
        for verb in ("retain", "release"):
            assert _abi.ABI[f"cucore_{noun}_{verb}"] == ("cucore_status_t", (f"{c_type}*",))
