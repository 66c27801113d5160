"""The enumerations and type aliases of the API (`cucore.typing`, as cuda.core's `cuda.core.typing`): arrays,
textures, surfaces, graphs, compilation, virtual and managed memory, work queues and checkpoints.

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
from typing import Any, Literal, Optional, Protocol, Sequence, Tuple, runtime_checkable

__all__ = ["AddressModeType", "ArrayFormatType", "ArrayKindType", "CompilerBackendType", "DevicePointerType",
           "DeviceResourcesType", "FilterModeType", "GraphConditionalType", "GraphMemoryType", "IsStreamType",
           "ManagedMemoryLocationType", "ObjectCodeFormatType", "PCHStatusType", "ProcessStateType", "ReadModeType",
           "SourceCodeType", "VirtualMemoryAccessType", "VirtualMemoryAllocationType", "VirtualMemoryGranularityType",
           "VirtualMemoryHandleType", "VirtualMemoryLocationType", "WorkqueueSharingScopeType"]


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


class CompilerBackendType(_StrEnum):
    """Which library compiles or links (Program.backend, Linker.backend): NVRTC for C++, NVVM for NVVM IR,
    NVJITLINK or the DRIVER's linker (cuLink) for PTX and linking. The values are cuda.core's spellings."""

    NVRTC = "NVRTC"
    NVVM = "NVVM"
    NVJITLINK = "nvJitLink"
    DRIVER = "driver"


class SourceCodeType(_StrEnum):
    """The code_type of a Program: CXX ("c++", compiled by NVRTC), PTX (linked), NVVM (NVVM IR)."""

    CXX = "c++"
    PTX = "ptx"
    NVVM = "nvvm"


class ObjectCodeFormatType(_StrEnum):
    """The format of an ObjectCode's code (ObjectCode.code_type)."""

    PTX = "ptx"
    CUBIN = "cubin"
    LTOIR = "ltoir"
    FATBIN = "fatbin"
    OBJECT = "object"
    LIBRARY = "library"


class PCHStatusType(_StrEnum):
    """What became of a precompiled header the last compile asked for (Program.pch_status)."""

    CREATED = "created"
    NOT_ATTEMPTED = "not_attempted"
    FAILED = "failed"


class ManagedMemoryLocationType(_StrEnum):
    """The kind of a managed memory resource's preferred location: a DEVICE, the HOST, or a HOST_NUMA node."""

    DEVICE = "device"
    HOST = "host"
    HOST_NUMA = "host_numa"


class VirtualMemoryAccessType(_StrEnum):
    """The access a device gets to virtual memory: READ_WRITE ("rw") or READ ("r")."""

    READ_WRITE = "rw"
    READ = "r"


class VirtualMemoryAllocationType(_StrEnum):
    """The physical memory behind a virtual memory resource: PINNED (device or host pinned) or MANAGED."""

    PINNED = "pinned"
    MANAGED = "managed"


class VirtualMemoryGranularityType(_StrEnum):
    """The granularity sizes are rounded to: the driver's MINIMUM or its RECOMMENDED one (faster)."""

    MINIMUM = "minimum"
    RECOMMENDED = "recommended"


class VirtualMemoryHandleType(_StrEnum):
    """The shareable handle virtual memory can be exported as: POSIX_FD, WIN32_KMT or FABRIC."""

    POSIX_FD = "posix_fd"
    WIN32_KMT = "win32_kmt"
    FABRIC = "fabric"


class VirtualMemoryLocationType(_StrEnum):
    """Where virtual memory's physical pages live: a DEVICE, the HOST, a HOST_NUMA node, or the NUMA node of the
    calling thread (HOST_NUMA_CURRENT)."""

    DEVICE = "device"
    HOST = "host"
    HOST_NUMA = "host_numa"
    HOST_NUMA_CURRENT = "host_numa_current"


class WorkqueueSharingScopeType(_StrEnum):
    """How a green context's work queues are shared: DEVICE_CTX, with every context of the device (the driver's
    default); GREEN_CTX_BALANCED, where possible not with other balanced green contexts."""

    DEVICE_CTX = "device_ctx"
    GREEN_CTX_BALANCED = "green_ctx_balanced"


@runtime_checkable
class IsStreamType(Protocol):
    """Any object that names a CUDA stream through the `__cuda_stream__` protocol: `__cuda_stream__()` returns
    (protocol version 0, the CUstream as an int). Stream arguments of cucore accept such objects."""

    def __cuda_stream__(self) -> Tuple[int, int]:
        """(0, the CUstream address)."""
        ...


DevicePointerType = Optional[int]
"""A device pointer as cucore takes it: an int address (a CUdeviceptr), or None."""

DeviceResourcesType = Sequence[Any]
"""A sequence of SMResource and WorkqueueResource objects (ContextOptions.resources)."""

ProcessStateType = Literal["running", "locked", "checkpointed", "failed"]
"""The checkpoint state of a process (checkpoint.Process.state)."""
