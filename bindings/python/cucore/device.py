"""CUDA devices and the driver (include/cucore/device.h).

The lowest layer of the object model (bindings/python/README.md, "Layers"): every other module may use Device.
What Device's methods make (contexts, streams, events, buffers) is defined by the modules above, which hand
their classes down to this one (_lib.hand_down), as the C++ façade defines these members in the later headers.
"""
from __future__ import annotations

import ctypes
import operator
import threading
from typing import TYPE_CHECKING, Any, Dict, List, NamedTuple, Optional, Tuple, Union

from . import _lib
from .common import raise_error
from .device_attributes import DeviceAttribute

(_cucore_driver_version, _cucore_device_count, _cucore_device_get, _cucore_device_get_current,
 _cucore_device_retain, _cucore_device_release, _cucore_device_ordinal, _cucore_device_handle,
 _cucore_device_name, _cucore_device_pci_bus_id, _cucore_device_uuid, _cucore_device_compute_capability,
 _cucore_device_total_memory, _cucore_device_attribute, _cucore_device_properties,
 _cucore_device_set_current, _cucore_device_synchronize, _cucore_device_can_access_peer,
 _cucore_stream_priority_range, _cucore_device_get_memory_resource, _cucore_device_set_memory_resource,
 _cucore_device_enable_peer_access, _cucore_device_disable_peer_access) = _lib.bind(
    globals(), "cucore_driver_version", "cucore_device_count", "cucore_device_get",
    "cucore_device_get_current", "cucore_device_retain", "cucore_device_release", "cucore_device_ordinal",
    "cucore_device_handle", "cucore_device_name", "cucore_device_pci_bus_id", "cucore_device_uuid",
    "cucore_device_compute_capability", "cucore_device_total_memory", "cucore_device_attribute",
    "cucore_device_properties", "cucore_device_set_current", "cucore_device_synchronize",
    "cucore_device_can_access_peer", "cucore_stream_priority_range", "cucore_device_get_memory_resource",
    "cucore_device_set_memory_resource", "cucore_device_enable_peer_access", "cucore_device_disable_peer_access")
(_fast_device_get_current, _fast_device_ordinal, _fast_device_release, _fast_device_attribute,
 _fast_device_set_current, _fast_device_synchronize, _fast_stream_create, _fast_event_create) = \
    _lib.bind_unchecked(
        globals(), "cucore_device_get_current", "cucore_device_ordinal", "cucore_device_release",
        "cucore_device_attribute", "cucore_device_set_current", "cucore_device_synchronize",
        "cucore_stream_create", "cucore_event_create")

_c_int = ctypes.c_int
_c_void_p = ctypes.c_void_p
_new = object.__new__
_int_outs = _lib.outs(_c_int)
_handle_outs = _lib.outs(_c_void_p)
_new_out = _lib.new_out
_handle_arg = _lib.handle_arg

# Handed down by the modules above when they are imported (_lib.hand_down): what Device's methods make or take.
if TYPE_CHECKING:  # for type checkers only: at run time the modules above hand these down (else:)
    from . import user_memory
    from .buffer import Buffer
    from .context import Context
    from .event import Event, EventOptions
    from .memory_resource import MemoryResource, _allocate_from_device
    from .stream import Stream, StreamOptions
    from .event import _flags_ref as _event_flags_ref
    from .event import _options_flags as _event_options_flags
    from .stream import _options_ref as _stream_options_ref
    from .opaque_array import (MipmappedArray, MipmappedArrayOptions, OpaqueArray, OpaqueArrayOptions,
                               _create_mipmapped_array, _create_opaque_array)
    from .texture import (ResourceDescriptor, SurfaceObject, TextureObject, TextureObjectOptions,
                          _create_surface_object, _create_texture_object)
    from .graph_builder import GraphBuilder
    from .system import Device as _SystemDevice
    _system_device_of = _SystemDevice._of
    from .device_resources import ContextOptions, DeviceResources, _create_context
else:
    Context = None                                  # context.py: Device.context
    Event = _event_flags_ref = _event_options_flags = None  # event.py: Device.create_event
    Stream = _stream_options_ref = None             # stream.py: Device.create_stream, the default streams
    MemoryResource = _allocate_from_device = None   # memory_resource.py: Device.memory_resource, Device.allocate
    user_memory = None                              # user_memory.py: a user-defined default resource is kept
    _create_opaque_array = _create_mipmapped_array = None    # opaque_array.py: Device.create_opaque_array, ...
    _create_texture_object = _create_surface_object = None   # texture.py: Device.create_texture_object, ...
    GraphBuilder = None                             # graph_builder.py: Device.create_graph_builder
    _system_device_of = None                        # system.py: Device.to_system_device
    DeviceResources = _create_context = None        # device_resources.py: Device.resources, create_context


class ComputeCapability(NamedTuple):
    """A compute capability: (major, minor)."""
    major: int
    minor: int


class StreamPriorityRange(NamedTuple):
    """The stream priorities of a device: (least, greatest); greater priorities are smaller numbers."""
    least: int
    greatest: int


def driver_version() -> int:
    """The CUDA driver's version, e.g. 13000 for 13.0 (raises NoDriverError without a driver)."""
    out = _c_int()
    st = _cucore_driver_version(out)
    if st:
        raise_error(st)
    return out.value


# lower-case attribute name -> value, for Device.properties and Device.attribute("name")
_ATTRIBUTES = {name.lower(): int(member) for name, member in DeviceAttribute.__members__.items()}
_DeviceAttribute = DeviceAttribute


def attribute_id(attr: Union[DeviceAttribute, int, str]) -> int:
    """A device attribute as its integer value: a DeviceAttribute, an int, or a name
    ("multiprocessor_count", "MULTIPROCESSOR_COUNT" or "CUCORE_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT")."""
    if type(attr) is _DeviceAttribute:
        return attr
    if isinstance(attr, str):
        key = attr.lower()
        for prefix in ("cucore_device_attribute_", "cu_device_attribute_"):
            if key.startswith(prefix):
                key = key[len(prefix):]
        try:
            return _ATTRIBUTES[key]
        except KeyError:
            raise ValueError(f"unknown device attribute {attr!r}") from None
    if isinstance(attr, bool):
        raise TypeError("a device attribute must be a DeviceAttribute, an int or a name")
    try:
        value = operator.index(attr)
    except TypeError:
        raise TypeError(f"a device attribute must be a DeviceAttribute, an int or a name, not "
                        f"{type(attr).__name__}") from None
    if not -0x80000000 <= value <= 0x7FFFFFFF:  # cucore_device_attribute_t is an int
        raise ValueError(f"device attribute {value} is out of range")
    return value


# The yes/no attributes: DeviceProperties gives them as bool, as cuda.core does (Device.attribute() gives the
# driver's int).
_BOOLEAN_ATTRIBUTES = frozenset({
    "can_flush_remote_writes", "can_map_host_memory", "can_tex2d_gather", "can_use_64_bit_stream_mem_ops",
    "can_use_host_pointer_for_registered_mem", "can_use_stream_wait_value_nor", "cluster_launch",
    "compute_preemption_supported", "concurrent_kernels", "concurrent_managed_access", "cooperative_launch",
    "d3d12_cig_supported", "deferred_mapping_cuda_array_supported", "direct_managed_mem_access_from_host",
    "dma_buf_supported", "ecc_enabled", "generic_compression_supported", "global_l1_cache_supported",
    "gpu_direct_rdma_supported", "gpu_direct_rdma_with_cuda_vmm_supported", "gpu_overlap",
    "handle_type_fabric_supported", "handle_type_posix_file_descriptor_supported",
    "handle_type_win32_handle_supported", "handle_type_win32_kmt_handle_supported", "host_alloc_dma_buf_supported",
    "host_memory_pools_supported", "host_native_atomic_supported", "host_numa_memory_pools_supported",
    "host_numa_multinode_ipc_supported", "host_numa_virtual_memory_management_supported",
    "host_register_supported", "host_virtual_memory_management_supported", "integrated", "ipc_event_supported",
    "kernel_exec_timeout", "local_l1_cache_supported", "managed_memory", "memory_pools_supported", "mps_enabled",
    "multi_gpu_board", "multicast_supported", "only_partial_host_native_atomic_supported",
    "pageable_memory_access", "pageable_memory_access_uses_host_page_tables", "read_only_host_register_supported",
    "sparse_cuda_array_supported", "stream_priorities_supported", "tcc_driver", "tensor_map_access_supported",
    "timeline_semaphore_interop_supported", "unified_addressing", "unified_function_pointers",
    "virtual_memory_management_supported", "vulkan_cig_supported",
})


class DeviceProperties:
    """Every device attribute of include/cucore/device_attributes.h as a read-only, cached property
    named in lower case: `dev.properties.multiprocessor_count`; the yes/no ones are bool, as cuda.core's.
    Values are queried on first access and kept (they are fixed for a device); use Device.attribute() for a
    fresh query."""

    def __init__(self, device: Device) -> None:
        object.__setattr__(self, "_device", device)

    def __getattr__(self, name):  # only reached when the value is not cached yet
        attr = _ATTRIBUTES.get(name)
        if attr is None:
            raise AttributeError(f"'DeviceProperties' has no attribute {name!r} (no device attribute "
                                 f"of that name)")
        value = self._device.attribute(attr)
        if name in _BOOLEAN_ATTRIBUTES:
            value = bool(value)
        self.__dict__[name] = value
        return value

    def __setattr__(self, name, value):
        raise AttributeError("device properties are read-only")

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | set(_ATTRIBUTES))

    def __repr__(self):
        return f"<DeviceProperties of {self._device!r}>"


_devices: Dict[Any, Device] = {}
_devices_lock = threading.Lock()


class Device:
    """A CUDA device: one object per ordinal for the life of the process.

    `Device(device_id=None)` gives the device with that ordinal, or with None the device of the calling
    thread's current context (device 0 when none is current). Getting a device creates no CUDA context;
    `set_current()` does.
    """

    _h: Any                  # the handle argument (_lib.handle_arg)
    _id: int
    _cache: Dict[str, Any]   # values that never change, once asked for
    _event_spares: Tuple[List[Any], ...]  # renewed events for create_event, per kind (see __new__)

    def __new__(cls, device_id: Union[int, Device, None] = None) -> Device:
        if device_id is None:
            try:
                hout, href = hpair = _handle_outs.pop()
            except IndexError:
                hout, href = hpair = _new_out(_c_void_p)
            st = _fast_device_get_current(href)
            h = hout.value
            _handle_outs.append(hpair)
            if st:
                raise_error(st)
            h = _handle_arg(h)
            try:
                out, ref = pair = _int_outs.pop()
            except IndexError:
                out, ref = pair = _new_out(_c_int)
            st = _fast_device_ordinal(h, ref)
            device_id = out.value
            _int_outs.append(pair)
            _fast_device_release(h)
            if st:
                raise_error(st)
        elif type(device_id) is int:
            dev = _devices.get(device_id)
            if dev is not None:
                return dev
        else:
            if isinstance(device_id, bool):
                raise TypeError("device_id must be an int or None")
            device_id = operator.index(device_id)
        dev = _devices.get(device_id)
        if dev is not None:
            return dev
        with _devices_lock:
            dev = _devices.get(device_id)
            if dev is not None:
                return dev
            h = _c_void_p()
            st = _cucore_device_get(device_id, h)
            if st:
                raise_error(st)
            dev = object.__new__(cls)
            dev._h = _handle_arg(h.value)
            dev._id = device_id  # type: ignore[assignment]  # an int here (narrowed above)
            dev._cache = {}
            # Events given back by Event.close(), renewed (cucore_event_reset), for create_event to hand out
            # again: one list per kind (EVENT_TIMING | EVENT_BLOCKING_SYNC bits); never interprocess ones.
            dev._event_spares = ([], [], [], [])
            _devices[device_id] = dev
            return dev

    @staticmethod
    def count() -> int:
        """The number of CUDA devices (0 when a driver is installed but no device is visible)."""
        out = _c_int()
        st = _cucore_device_count(out)
        if st:
            raise_error(st)
        return out.value

    @staticmethod
    def get_all_devices() -> Tuple[Device, ...]:
        """Every visible device, in ordinal order."""
        return tuple(Device(i) for i in range(Device.count()))

    # ---- identity ---------------------------------------------------------------------------

    @property
    def device_id(self) -> int:
        """The ordinal."""
        return self._id

    def __int__(self) -> int:
        return self._id

    def __index__(self) -> int:
        return self._id

    def __eq__(self, other):
        if isinstance(other, Device):
            return self._id == other._id
        return NotImplemented

    def __hash__(self):
        return hash((Device, self._id))

    def __reduce__(self):
        return (Device, (self._id,))

    def __repr__(self):
        try:
            return f"<Device {self._id} ({self.name})>"
        except Exception:
            return f"<Device {self._id}>"

    @property
    def handle(self) -> int:
        """The raw CUdevice (an int)."""
        v = self._cache.get("handle")
        if v is None:
            out = _c_int()
            st = _cucore_device_handle(self._h, out)
            if st:
                raise_error(st, self)
            v = self._cache["handle"] = out.value
        return v

    # ---- fixed properties (cached) ----------------------------------------------------------

    @property
    def name(self) -> str:
        """The device's name, e.g. "NVIDIA H200"."""
        v = self._cache.get("name")
        if v is None:
            out = ctypes.c_char_p()
            st = _cucore_device_name(self._h, out)
            if st:
                raise_error(st, self)
            v = self._cache["name"] = out.value.decode("utf-8", "replace")  # type: ignore[union-attr]
        return v

    @property
    def pci_bus_id(self) -> str:
        """The PCI bus id, "dddd:bb:dd.f"."""
        v = self._cache.get("pci_bus_id")
        if v is None:
            out = ctypes.c_char_p()
            st = _cucore_device_pci_bus_id(self._h, out)
            if st:
                raise_error(st, self)
            v = self._cache["pci_bus_id"] = out.value.decode("ascii", "replace")  # type: ignore[union-attr]
        return v

    @property
    def uuid(self) -> str:
        """The device's UUID as a string, "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"."""
        v = self._cache.get("uuid")
        if v is None:
            out = _lib.UuidC()
            st = _cucore_device_uuid(self._h, out)
            if st:
                raise_error(st, self)
            x = bytes(out.bytes).hex()
            v = self._cache["uuid"] = f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}"
        return v

    @property
    def compute_capability(self) -> ComputeCapability:
        """(major, minor) as a named tuple."""
        v = self._cache.get("cc")
        if v is None:
            major, minor = _c_int(), _c_int()
            st = _cucore_device_compute_capability(self._h, major, minor)
            if st:
                raise_error(st, self)
            v = self._cache["cc"] = ComputeCapability(major.value, minor.value)
        return v

    @property
    def arch(self) -> str:
        """The architecture as a string, e.g. "90" for compute capability 9.0."""
        major, minor = self.compute_capability
        return f"{major}{minor}"

    @property
    def total_memory(self) -> int:
        """Total device memory in bytes."""
        v = self._cache.get("total_memory")
        if v is None:
            out = ctypes.c_uint64()
            st = _cucore_device_total_memory(self._h, out)
            if st:
                raise_error(st, self)
            v = self._cache["total_memory"] = out.value
        return v

    @property
    def properties(self) -> DeviceProperties:
        """Every device attribute as a cached, lower-case named property (DeviceProperties)."""
        p = self._cache.get("properties")
        if p is None:
            p = self._cache["properties"] = DeviceProperties(self)
        return p

    def attribute(self, attr: Union[DeviceAttribute, int, str]) -> int:
        """Query one device attribute now (uncached): a DeviceAttribute, an int, or a name."""
        if type(attr) is not _DeviceAttribute and (type(attr) is not int or not -0x80000000 <= attr <= 0x7FFFFFFF):
            attr = attribute_id(attr)
        try:
            out, ref = pair = _int_outs.pop()
        except IndexError:
            out, ref = pair = _new_out(_c_int)
        st = _fast_device_attribute(self._h, attr, ref)
        value = out.value
        _int_outs.append(pair)
        if st:
            raise_error(st, self)
        return value

    def basic_properties(self) -> Dict[str, Any]:
        """The properties most programs want, read in one call (cucore_device_properties), as a dict."""
        props = _lib.DevicePropertiesC()
        props.struct_size = ctypes.sizeof(props)
        st = _cucore_device_properties(self._h, props)
        if st:
            raise_error(st, self)
        return {name: getattr(props, name) for name, _ in props._fields_ if name != "struct_size"}

    @property
    def stream_priority_range(self) -> StreamPriorityRange:
        """(least, greatest) stream priorities: least is the default (0), greatest the highest
        priority (a negative number)."""
        least, greatest = _c_int(), _c_int()
        st = _cucore_stream_priority_range(self._h, least, greatest)
        if st:
            raise_error(st, self)
        return StreamPriorityRange(least.value, greatest.value)

    # ---- actions ----------------------------------------------------------------------------

    def set_current(self, ctx: Optional[Context] = None) -> Optional[Context]:
        """Make a context of this device current on the calling thread.

        Without `ctx`: retain the device's primary context, make it current and return None. With `ctx` (a
        Context of this device, a green one for instance): make it current in place of the context current
        now, and return that one (a Context, or None when none was current), as cuda.core does."""
        if ctx is None:
            st = _fast_device_set_current(self._h)
            if st:
                raise_error(st, self)
            return None
        if not isinstance(ctx, Context):
            raise TypeError(f"ctx must be a Context, not {type(ctx).__name__}")
        if ctx.device != self:
            raise ValueError(f"the context belongs to device {ctx.device.device_id}, not to device {self.device_id}")
        previous = Context._current()
        ctx.set_current()
        return previous

    def sync(self) -> None:
        """Wait until all work in the device's primary context has completed."""
        st = _fast_device_synchronize(self._h)
        if st:
            raise_error(st, self)

    def can_access_peer(self, peer: Union[Device, int]) -> bool:
        """Whether this device can access `peer`'s (a Device or ordinal) memory directly."""
        if not isinstance(peer, Device):
            peer = Device(peer)
        out = _c_int()
        st = _cucore_device_can_access_peer(self._h, peer._h, out)
        if st:
            raise_error(st, self, peer)
        return bool(out.value)

    def enable_peer_access(self, peer: Union[Device, int]) -> None:
        """Let kernels and copies on this device reach memory of `peer` (a Device or ordinal) directly
        (cuCtxEnablePeerAccess between the primary contexts): memory of `peer`'s primary context made by
        cuMemAlloc and foreign pointers there. Pool and virtual memory are granted per resource instead
        (`DeviceMemoryResource.peer_accessible_by`). Lasts until disabled or the process ends; enabling twice
        is no error. InvalidArgumentError when `peer` is this device, NotSupportedError when
        `can_access_peer(peer)` is False."""
        other: Device = peer if isinstance(peer, Device) else _device(peer)
        st = _cucore_device_enable_peer_access(self._h, other._h)
        if st:
            raise_error(st, self, other)

    def disable_peer_access(self, peer: Union[Device, int]) -> None:
        """Withdraw what `enable_peer_access(peer)` granted (cuCtxDisablePeerAccess). InvalidStateError when
        it was not enabled, InvalidArgumentError when `peer` is this device."""
        other: Device = peer if isinstance(peer, Device) else _device(peer)
        st = _cucore_device_disable_peer_access(self._h, other._h)
        if st:
            raise_error(st, self, other)

    @property
    def context(self) -> Context:
        """The device's primary Context (retained while the returned object lives)."""
        return Context._primary(self)

    @property
    def resources(self) -> DeviceResources:
        """The device's SM and workqueue resources (DeviceResources: .sm, .workqueue)."""
        return DeviceResources(self)

    def create_context(self, options: Union[ContextOptions, Dict[str, Any], None] = None) -> Context:
        """A green context made of `options.resources` (ContextOptions): its streams run only on those SMs. It is
        not made current. Without resources there is nothing to make it of (ValueError)."""
        return _create_context(self, options)

    def create_stream(self, obj: Any = None, options: Union[StreamOptions, Dict[str, Any], None] = None) -> Stream:
        """A new Stream in the device's primary context; with `obj` (anything with __cuda_stream__, or
        a raw CUstream as an int), a non-owning Stream wrapping that stream instead."""
        if obj is not None:
            if options is not None:
                raise ValueError("options cannot be given when wrapping an existing stream")
            return Stream.from_handle(obj)
        try:
            out, ref = pair = _handle_outs.pop()
        except IndexError:
            out, ref = pair = _new_out(_c_void_p)
        st = _fast_stream_create(self._h, None if options is None else _stream_options_ref(options), ref)
        h = out.value
        _handle_outs.append(pair)
        if st:
            raise_error(st, self)
        s = _new(Stream)
        s._h = _handle_arg(h)
        s._hv = h
        s._raw = None
        return s

    def create_event(self, options: Union[EventOptions, Dict[str, Any], None] = None) -> Event:
        """A new Event in the device's primary context (EventOptions or None for the defaults). An event
        closed earlier may come back renewed: it answers every call as a newly created one."""
        flags = 0 if options is None else _event_options_flags(options)
        spares = self._event_spares[flags] if flags < 4 else None  # interprocess events are never kept
        try:
            if spares is None:
                raise IndexError
            h = spares.pop()
        except IndexError:
            try:
                out, ref = pair = _handle_outs.pop()
            except IndexError:
                out, ref = pair = _new_out(_c_void_p)
            st = _fast_event_create(self._h, _event_flags_ref(flags), ref)
            value = out.value
            _handle_outs.append(pair)
            if st:
                raise_error(st, self)
            h = _handle_arg(value)
        e = _new(Event)
        e._h = h
        e._raw = None
        e._flags = None
        e._spares = spares
        return e

    def create_graph_builder(self) -> GraphBuilder:
        """A new GraphBuilder capturing on a new non-blocking stream of the device's primary context (its
        `stream`): begin_building(), enqueue work on it (launch(builder, ...), copies, allocations), then
        end_building() and complete()."""
        return GraphBuilder._create_on_device(self)

    def to_system_device(self) -> "_SystemDevice":
        """This GPU as NVML sees it (cucore.system.Device), matched by UUID. NotSupportedError without NVML."""
        return _system_device_of(self)

    @property
    def default_stream(self) -> Stream:
        """The legacy default stream bound to this device's primary context."""
        s = self._cache.get("legacy_stream")
        if s is None:
            s = self._cache["legacy_stream"] = Stream._legacy_default(self)
        return s

    @property
    def memory_resource(self) -> MemoryResource:
        """The resource Device.allocate() uses (libcucore's per-device default, seen by every language): the
        one assigned, else a DeviceMemoryResource of the device's current memory pool. Assign a
        MemoryResource to change it, or None to return to the current pool."""
        out = ctypes.c_void_p()
        st = _cucore_device_get_memory_resource(self._h, out)
        if st:
            raise_error(st, self)
        return MemoryResource._from_owned_handle(out.value)

    @memory_resource.setter
    def memory_resource(self, mr: Optional[MemoryResource]) -> None:
        if mr is not None and not isinstance(mr, MemoryResource):
            raise TypeError(f"Device.memory_resource must be a MemoryResource or None, not {type(mr).__name__}")
        st = _cucore_device_set_memory_resource(self._h, None if mr is None else mr._h)
        if st:
            raise_error(st, self, mr)
        if mr is not None and mr._user_defined:
            user_memory.pin(mr)  # the device holds it now, where Python cannot see it

    def allocate(self, size: int, *, stream: Any) -> Buffer:
        """A new Buffer of `size` bytes from Device.memory_resource, allocated in order on `stream` (a
        Stream or any object with __cuda_stream__), where it is also freed unless changed."""
        return _allocate_from_device(self, size, stream)

    def create_opaque_array(self, options: Union[OpaqueArrayOptions, Dict[str, Any]]) -> OpaqueArray:
        """A new OpaqueArray (a CUDA array) on this device, described by an OpaqueArrayOptions (or a dict of its
        fields). The shape is checked against the device's limits first; the error names the limit."""
        return _create_opaque_array(self, options)

    def create_mipmapped_array(self, options: Union[MipmappedArrayOptions, Dict[str, Any]]) -> MipmappedArray:
        """A new MipmappedArray on this device, described by a MipmappedArrayOptions (or a dict of its
        fields): level 0 and num_levels."""
        return _create_mipmapped_array(self, options)

    def create_texture_object(self, *, resource: ResourceDescriptor,
                              options: Union[TextureObjectOptions, Dict[str, Any], None] = None) -> TextureObject:
        """A new TextureObject reading `resource` (a ResourceDescriptor of this device's memory) as `options`
        (a TextureObjectOptions; None: its defaults) says."""
        return _create_texture_object(self, resource, options)

    def create_surface_object(self, *, resource: ResourceDescriptor) -> SurfaceObject:
        """A new SurfaceObject over `resource` (ResourceDescriptor.from_opaque_array of an array of this device
        created with is_surface_load_store=True)."""
        return _create_surface_object(self, resource)

    @property
    def per_thread_default_stream(self) -> Stream:
        """The per-thread default stream bound to this device's primary context."""
        s = self._cache.get("per_thread_stream")
        if s is None:
            s = self._cache["per_thread_stream"] = Stream._per_thread_default(self)
        return s


def _device_from_owned_handle(h):
    """The Device for a +1 device handle a C call returned; the reference is dropped."""
    ordinal = _c_int()
    st = _cucore_device_ordinal(h, ordinal)
    _cucore_device_release(h)
    if st:
        raise_error(st)
    return Device(ordinal.value)


def _device(device_id):
    """A Device from a Device, a device ordinal or None (the current device); TypeError for anything else."""
    if isinstance(device_id, Device):
        return device_id
    if device_id is not None and (isinstance(device_id, bool) or not hasattr(type(device_id), "__index__")):
        raise TypeError(f"device must be a Device, a device ordinal or None, not {type(device_id).__name__}")
    return Device(device_id)
