"""cucore: the CUDA driver API made safe and pleasant, over libcucore's C ABI (pure ctypes).

    import cucore
    dev = cucore.Device()            # the current device (device 0 when none is current)
    dev.set_current()
    s = dev.create_stream()
    start = s.record(options=cucore.EventOptions(timing_enabled=True))
    s.launch_host_func(print, "hello from the stream")
    buf = dev.allocate(1024, stream=s)
    buf.fill(7, stream=s)
    assert buf.to_bytes(stream=s) == bytes([7]) * 1024
    end = s.record(options=cucore.EventOptions(timing_enabled=True))
    end.sync()
    print(end - start, "ms")

Importing never loads libcucore; the first call does (see cucore._lib for where it is searched) and
raises LibraryNotFoundError if it cannot be found. Failures raise CUDAError subclasses carrying
`status`, `cuda_result` and `message`.
"""
from ._version import __version__
# The modules in their layer order (bindings/python/README.md, "Layers"): each imports only those above it
# here, and importing them all puts in place every name a module hands down to a lower one (_lib.hand_down).
from .common import (
    CUDAError, DriverError, InternalError, InvalidArgumentError, InvalidHandleError, InvalidStateError,
    CompilationError, NVRTCError, LibraryNotFoundError, LibraryVersion, NoDeviceError, NoDriverError, NotReadyError,
    NotSupportedError,
    ObjectType, OutOfMemoryError, Status, clear_last_error, last_cuda_result, last_error_message,
    last_error_status, library_path, version, version_string, live_object_count,
    object_type_name, release_error_count, set_release_error_handler, status_string,
)
from .device_attributes import DeviceAttribute
from . import typing  # noqa: F401  (cucore.typing: ArrayFormatType, AddressModeType, FilterModeType, ...)
from .device import ComputeCapability, Device, DeviceProperties, StreamPriorityRange, driver_version
from .context import Context
from .event import Event, EventOptions
from .stream import Stream, StreamOptions, legacy_default_stream, per_thread_default_stream
from .device_resources import (
    ContextOptions, DeviceResources, SMResource, SMResourceInfo, SMResourceOptions, WorkqueueResource,
    WorkqueueResourceOptions, WorkqueueSharingScopeType,
)
from .buffer import Buffer
from .host import Host
from .memory_resource import LegacyPinnedMemoryResource, MemoryResource, MemoryResourceKind
from .memory_pool import (
    DeviceMemoryResource, DeviceMemoryResourceOptions, PeerAccessSet, PinnedMemoryResource,
    PinnedMemoryResourceOptions, PoolAttribute, PoolAttributes,
)
from .managed_memory import ManagedBuffer, ManagedMemoryResource, ManagedMemoryResourceOptions
from .virtual_memory import VirtualMemoryResource, VirtualMemoryResourceOptions
from .graph_memory import GraphMemoryResource, GraphMemoryResourceAttributes
from . import user_memory as _user_memory  # noqa: F401  (user-defined MemoryResource subclasses)
from .copy_3d import MemoryRegion, copy_3d
from .memory_operations import StreamMemoryOp
from . import utils  # noqa: F401  (cucore.utils, as cuda.core's: copy_batch, CopyOptions, prefetch_batch, ...)
from .ipc import IPCAllocationHandle, ImportedMemoryResource
from .dlpack import DLDeviceType, from_dlpack
from .opaque_array import (
    ArrayRegion, MipmappedArray, MipmappedArrayOptions, OpaqueArray, OpaqueArrayOptions,
)
from .texture import ResourceDescriptor, SurfaceObject, TextureObject, TextureObjectOptions
from . import texture, textures  # noqa: F401  (cucore.texture, as cuda.core's; cucore.textures, the seed's names)
from .tensor_map import (TensorMapDataType, TensorMapDescriptor, TensorMapDescriptorOptions, TensorMapIm2ColWideMode,
                         TensorMapInterleave, TensorMapL2Promotion, TensorMapOOBFill, TensorMapSwizzle)
from .graphics import GraphicsResource, MappedBuffers, gl_get_devices
from .kernel import Kernel, KernelAttributes, KernelOccupancy, MaxPotentialBlockSizeOccupancyResult, ParamInfo
from .launch import LaunchConfig, launch
from .program import Program, ProgramOptions, compiler_version
from .object_code import ObjectCode
from .program_cache import (
    FileStreamProgramCache, InMemoryProgramCache, ProgramCache, ProgramCacheStats, make_program_cache_key,
)
from .linker import Linker, LinkerOptions
from . import graph_builder as _graph_builder  # noqa: F401  (cucore.graph's GraphBuilder; hands it down)
from . import graph  # noqa: F401  (cucore.graph, as cuda.core's: Graph, GraphBuilder, GraphDefinition, nodes)
from . import _graph_node  # noqa: F401  (cucore.graph's node classes; hands them down to it)
from . import _executable_graph_node  # noqa: F401  (cucore.graph's Executable*Node views; hands them down to it)
from . import system  # noqa: F401  (cucore.system, as cuda.core's: NVML; hands Device.to_system_device down)
from . import checkpoint  # noqa: F401  (cucore.checkpoint, as cuda.core's: Process)
from . import communicator  # noqa: F401  (cucore.communicator: group(), library_version(), NCCL)
from .communicator import Communicator, CommunicatorId, DataType, ReduceOp

__all__ = [
    "__version__",
    # errors
    "CUDAError", "CompilationError", "NVRTCError", "DriverError", "InternalError", "InvalidArgumentError", "InvalidHandleError",
    "InvalidStateError", "LibraryNotFoundError", "NoDeviceError", "NoDriverError", "NotReadyError",
    "NotSupportedError", "OutOfMemoryError", "Status",
    # library, last error, diagnostics
    "LibraryVersion", "library_path", "version", "version_string", "status_string",
    "last_error_message", "last_cuda_result", "last_error_status", "clear_last_error", "ObjectType",
    "object_type_name", "live_object_count", "release_error_count", "set_release_error_handler",
    # devices
    "Device", "DeviceAttribute", "DeviceProperties", "ComputeCapability", "StreamPriorityRange",
    "driver_version",
    # contexts, streams, events
    "Context", "Stream", "StreamOptions", "Event", "EventOptions", "legacy_default_stream",
    "per_thread_default_stream",
    # device resources and green contexts
    "ContextOptions", "DeviceResources", "SMResource", "SMResourceInfo", "SMResourceOptions", "WorkqueueResource",
    "WorkqueueResourceOptions", "WorkqueueSharingScopeType",
    # memory
    "Buffer", "MemoryResource", "MemoryResourceKind", "DeviceMemoryResource", "DeviceMemoryResourceOptions",
    "LegacyPinnedMemoryResource", "PoolAttribute", "PoolAttributes", "PinnedMemoryResource",
    "PinnedMemoryResourceOptions", "ManagedMemoryResource", "ManagedMemoryResourceOptions", "ManagedBuffer",
    "VirtualMemoryResource", "VirtualMemoryResourceOptions", "PeerAccessSet", "MemoryRegion", "copy_3d",
    "Host", "StreamMemoryOp", "utils",
    "GraphMemoryResource", "GraphMemoryResourceAttributes",
    # IPC (cucore.ipc)
    "IPCAllocationHandle", "ImportedMemoryResource",
    # DLPack and the CUDA Array Interface
    "DLDeviceType", "from_dlpack",
    # compile and launch
    "Program", "ProgramOptions", "compiler_version", "ObjectCode", "Linker", "LinkerOptions",
    "ProgramCache", "InMemoryProgramCache", "FileStreamProgramCache", "ProgramCacheStats", "make_program_cache_key",
    "Kernel", "KernelAttributes", "KernelOccupancy", "MaxPotentialBlockSizeOccupancyResult", "ParamInfo",
    "LaunchConfig", "launch",
    # arrays, textures and surfaces (also in cucore.texture; their enums in cucore.typing)
    "OpaqueArray", "OpaqueArrayOptions", "MipmappedArray", "MipmappedArrayOptions", "ArrayRegion",
    "ResourceDescriptor", "TextureObject", "TextureObjectOptions", "SurfaceObject",
    # TensorMap (TMA) descriptors
    "TensorMapDescriptor", "TensorMapDescriptorOptions", "TensorMapDataType", "TensorMapInterleave",
    "TensorMapSwizzle", "TensorMapL2Promotion", "TensorMapOOBFill", "TensorMapIm2ColWideMode",
    # graphics interop (OpenGL)
    "GraphicsResource", "MappedBuffers", "gl_get_devices",
    # collectives between GPUs (NCCL; cucore.communicator has group() and library_version())
    "Communicator", "CommunicatorId", "DataType", "ReduceOp",
]


# cucore.LEGACY_DEFAULT_STREAM and cucore.PER_THREAD_DEFAULT_STREAM are not in __all__: they ask the driver
# (module __getattr__ below), and `from cucore import *` must work on a machine without a GPU.
_DRIVER_ATTRIBUTES = ("LEGACY_DEFAULT_STREAM", "PER_THREAD_DEFAULT_STREAM")


def _public_module_names():
    """Give the public classes and exceptions the module users name them by (`cucore.NoDriverError` in a
    traceback and a repr, not `cucore.common.NoDriverError`). pickle finds a class by `__module__` and
    `__qualname__`, and `cucore.<name>` is the same object, so pickling keeps working."""
    namespace = globals()
    for name in __all__:
        obj = namespace[name]
        if isinstance(obj, type) and obj.__module__.startswith(__name__ + "."):
            obj._cucore_module = obj.__module__  # the defining module (_lib.load() rebinds its C functions)
            obj.__module__ = __name__


_public_module_names()


def __dir__():
    return sorted(set(globals()) | set(_DRIVER_ATTRIBUTES))


def __getattr__(name):
    # The default streams need the driver, so they are looked up on access (not at import), each time
    # for the device current at that moment.
    if name == "LEGACY_DEFAULT_STREAM":
        return legacy_default_stream()
    if name == "PER_THREAD_DEFAULT_STREAM":
        return per_thread_default_stream()
    raise AttributeError(f"module 'cucore' has no attribute {name!r}")
