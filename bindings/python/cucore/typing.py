"""The enumerations of the array, texture, surface and graph APIs (`cucore.typing`, as cuda.core's
`cuda.core.typing`).

They are string enumerations, as cuda.core's: each member equals its value (`ArrayFormatType.FLOAT32 ==
"float32"`), so wherever a member is taken its value is taken too, and a cuda.core member (also a str)
works here unchanged. ArrayFormatType has cuda.core's eight formats and the others libcucore offers
(normalized integers, the block-compressed BC formats, 10-10-10-2); ArrayKindType (not in cuda.core) names
the layered and cubemap arrays.

Pure data: this module imports nothing of the package (bindings/python/README.md, "Layers"). The C values
behind the names are read from the header by opaque_array.py, texture.py and _graph_options.py.
"""
from __future__ import annotations

import enum

__all__ = ["AddressModeType", "ArrayFormatType", "ArrayKindType", "FilterModeType", "GraphConditionalType",
           "GraphMemoryType", "ReadModeType"]


class _StrEnum(str, enum.Enum):
    """A str whose value is its name's lower-case spelling (enum.StrEnum, which Python 3.8-3.10 lack)."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return str.__format__(str(self.value), spec)


class ArrayFormatType(_StrEnum):
    """The element format of an OpaqueArray (the driver's CUarray_format), and of linear and pitched
    texture resources.

    cuda.core's: UINT8, UINT16, UINT32, INT8, INT16, INT32 (integers), FLOAT16, FLOAT32, each of 1, 2 or 4
    channels; NumPy dtypes of the same names are accepted wherever a format is.
    Beyond cuda.core: UNORM_INT8X1 ... SNORM_INT16X4 (normalized integers whose channel count is part of
    the format), UNORM_INT_101010_2 (4 channels in 4 bytes), and the block-compressed BC1..BC7 formats (4x4
    texel blocks of 8 or 16 bytes; 2D, 3D and layered arrays only, never surface load/store; the *_SRGB
    ones are sampled by textures with srgb=True only).
    """

    UINT8 = "uint8"
    UINT16 = "uint16"
    UINT32 = "uint32"
    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    FLOAT16 = "float16"
    FLOAT32 = "float32"
    UNORM_INT_101010_2 = "unorm_int_101010_2"
    BC1_UNORM = "bc1_unorm"
    BC1_UNORM_SRGB = "bc1_unorm_srgb"
    BC2_UNORM = "bc2_unorm"
    BC2_UNORM_SRGB = "bc2_unorm_srgb"
    BC3_UNORM = "bc3_unorm"
    BC3_UNORM_SRGB = "bc3_unorm_srgb"
    BC4_UNORM = "bc4_unorm"
    BC4_SNORM = "bc4_snorm"
    BC5_UNORM = "bc5_unorm"
    BC5_SNORM = "bc5_snorm"
    BC6H_UF16 = "bc6h_uf16"
    BC6H_SF16 = "bc6h_sf16"
    BC7_UNORM = "bc7_unorm"
    BC7_UNORM_SRGB = "bc7_unorm_srgb"
    UNORM_INT8X1 = "unorm_int8x1"
    UNORM_INT8X2 = "unorm_int8x2"
    UNORM_INT8X4 = "unorm_int8x4"
    UNORM_INT16X1 = "unorm_int16x1"
    UNORM_INT16X2 = "unorm_int16x2"
    UNORM_INT16X4 = "unorm_int16x4"
    SNORM_INT8X1 = "snorm_int8x1"
    SNORM_INT8X2 = "snorm_int8x2"
    SNORM_INT8X4 = "snorm_int8x4"
    SNORM_INT16X1 = "snorm_int16x1"
    SNORM_INT16X2 = "snorm_int16x2"
    SNORM_INT16X4 = "snorm_int16x4"


class ArrayKindType(_StrEnum):
    """How an array's extents are read (not in cuda.core, whose arrays are all PLAIN).

    PLAIN: 1D, 2D or 3D. LAYERED: `num_layers` layers of 1D or 2D arrays. CUBEMAP: six square faces.
    LAYERED_CUBEMAP: `num_layers` cubemaps.
    """

    PLAIN = "plain"
    LAYERED = "layered"
    CUBEMAP = "cubemap"
    LAYERED_CUBEMAP = "layered_cubemap"


class AddressModeType(_StrEnum):
    """What a texture read returns at a coordinate outside the resource (the driver's CUaddress_mode).

    WRAP: the coordinate wraps around (normalized coordinates only). CLAMP: the edge element (the
    default). MIRROR: reflected at each edge (normalized coordinates only). BORDER: the border color.
    """

    WRAP = "wrap"
    CLAMP = "clamp"
    MIRROR = "mirror"
    BORDER = "border"


class FilterModeType(_StrEnum):
    """How a texture read combines elements (the driver's CUfilter_mode): POINT, the nearest element; LINEAR,
    (bi/tri)linear interpolation, for float results only."""

    POINT = "point"
    LINEAR = "linear"


class ReadModeType(_StrEnum):
    """What a texture read of integer elements returns: ELEMENT_TYPE, the element as stored (integers stay
    integers); NORMALIZED_FLOAT, 8- and 16-bit integers as floats in [0, 1] (unsigned) or [-1, 1] (signed).
    Float elements read the same either way."""

    ELEMENT_TYPE = "element_type"
    NORMALIZED_FLOAT = "normalized_float"


class GraphConditionalType(_StrEnum):
    """The kind of a conditional graph node (cuda.core's; the driver's CUgraphConditionalNodeType).

    IF: the body runs once when the condition is non-zero (an if/else node has a second body, run when it is
    zero). WHILE: the body runs again and again while the condition is non-zero, checked before each run.
    SWITCH: body n runs when the condition is n, none when it is out of range.
    """

    IF = "if"
    WHILE = "while"
    SWITCH = "switch"


class GraphMemoryType(_StrEnum):
    """Where the memory of a graph allocation node lives (cuda.core's).

    DEVICE: device memory of the graph's device (the default). HOST: page-locked host memory (where the
    driver supports it). MANAGED: managed memory; libcucore's graphs do not offer it (NotSupportedError).
    """

    DEVICE = "device"
    HOST = "host"
    MANAGED = "managed"
