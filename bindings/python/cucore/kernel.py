"""Kernels: attributes, parameters and occupancy (include/cucore/kernel.h).

    k = code.get_kernel("saxpy")
    k.attributes.num_regs                       # on the current device; k.attributes[dev] for another
    k.attributes.max_dynamic_shared_size_bytes = 64 << 10
    k.arguments_info                            # [ParamInfo(offset=0, size=4), ...]
    k.occupancy.max_potential_block_size(0)     # MaxPotentialBlockSizeOccupancyResult(min_grid_size, ...)
"""
from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any, List, NamedTuple, Optional, Union

from . import _lib
from ._handle import HandleObject, wrap_foreign
from .common import NotSupportedError, Status, raise_error
from .device import _device
from .stream import _stream_of

(_cucore_kernel_from_handle, _cucore_kernel_from_function, _cucore_kernel_name, _cucore_kernel_attribute,
 _cucore_kernel_set_attribute, _cucore_kernel_param_count, _cucore_kernel_param_info,
 _cucore_kernel_max_active_blocks_per_multiprocessor, _cucore_kernel_max_potential_block_size,
 _cucore_kernel_available_dynamic_shared_memory, _cucore_kernel_handle, _cucore_kernel_function,
 _cucore_launch_max_potential_cluster_size, _cucore_launch_max_active_clusters) = _lib.bind(
    globals(), "cucore_kernel_from_handle", "cucore_kernel_from_function", "cucore_kernel_name",
    "cucore_kernel_attribute", "cucore_kernel_set_attribute", "cucore_kernel_param_count",
    "cucore_kernel_param_info", "cucore_kernel_max_active_blocks_per_multiprocessor",
    "cucore_kernel_max_potential_block_size", "cucore_kernel_available_dynamic_shared_memory",
    "cucore_kernel_handle", "cucore_kernel_function", "cucore_launch_max_potential_cluster_size",
    "cucore_launch_max_active_clusters")
(_cucore_kernel_retain, _cucore_kernel_release) = _lib.bind(globals(), "cucore_kernel_retain",
                                                             "cucore_kernel_release")
(_fast_kernel_release,) = _lib.bind_unchecked(globals(), "cucore_kernel_release")

_c_int = ctypes.c_int
_c_size_t = ctypes.c_size_t
_byref = ctypes.byref
_new = object.__new__

# Handed down by launch.py, above this module, when it is imported (_lib.hand_down).
if TYPE_CHECKING:  # for type checkers only: at run time launch.py hands it down (else:)
    from .device import Device
    from .launch import LaunchConfig
else:
    LaunchConfig = None  # the cluster queries take a LaunchConfig


class ParamInfo(NamedTuple):
    """A kernel parameter: its offset and size in bytes."""
    offset: int
    size: int


class MaxPotentialBlockSizeOccupancyResult(NamedTuple):
    """KernelOccupancy.max_potential_block_size(): the smallest grid for full occupancy, the largest block."""
    min_grid_size: int
    max_block_size: int

# cucore_kernel_attribute_t by cuda.core's property names; the settable ones.
ATTRIBUTES = _lib.c_names("cucore_kernel_attribute_t", "CUCORE_KERNEL_ATTRIBUTE_", skip=("unset", "count"))
SETTABLE = frozenset(("max_dynamic_shared_size_bytes", "preferred_shared_memory_carveout", "required_cluster_width",
                      "required_cluster_height", "required_cluster_depth", "non_portable_cluster_size_allowed",
                      "cluster_scheduling_policy_preference"))
_BOOL_ATTRIBUTES = frozenset(("cache_mode_ca", "cluster_size_must_be_set", "non_portable_cluster_size_allowed"))


def _attribute_id(attribute):
    if isinstance(attribute, str):
        v = ATTRIBUTES.get(attribute)
        if v is None:
            raise ValueError(f"unknown kernel attribute {attribute!r}; one of {sorted(ATTRIBUTES)}")
        return v, attribute
    if isinstance(attribute, int) and not isinstance(attribute, bool):
        for k, v in ATTRIBUTES.items():
            if v == attribute:
                return v, k
        raise ValueError(f"unknown kernel attribute {attribute}")
    raise TypeError(f"a kernel attribute is its name (str) or cucore_kernel_attribute_t, not "
                    f"{type(attribute).__name__}")


class KernelAttributes:
    """A kernel's attributes on one device (`kernel.attributes`: the current device at each read;
    `kernel.attributes[device]`: that device). Each is read from the driver when asked."""

    __slots__ = ("_kernel", "_device")

    if TYPE_CHECKING:  # the attributes, properties set below (one per name of ATTRIBUTES)
        def __getattr__(self, name: str) -> int: ...

    def __init__(self, kernel: Kernel, device: Optional[Device]) -> None:
        self._kernel = kernel
        self._device = device

    def __getitem__(self, device: Union[Device, int, None]) -> KernelAttributes:
        return KernelAttributes(self._kernel, _device(device))

    def get(self, attribute: Union[str, int]) -> int:
        """The value of `attribute` (its name or cucore_kernel_attribute_t)."""
        aid, name = _attribute_id(attribute)
        dev = self._device or _device(None)
        out = _c_int()
        st = _cucore_kernel_attribute(self._kernel._h, dev._h, aid, _byref(out))
        if st:
            raise_error(st, self._kernel)
        return bool(out.value) if name in _BOOL_ATTRIBUTES else out.value

    def set_attribute(self, attribute: Union[str, int], value: int) -> None:
        """Set a settable attribute (max_dynamic_shared_size_bytes, preferred_shared_memory_carveout, the
        required cluster dimensions, non_portable_cluster_size_allowed,
        cluster_scheduling_policy_preference)."""
        aid, name = _attribute_id(attribute)
        if name not in SETTABLE:
            raise AttributeError(f"kernel attribute {name} is read-only")
        if isinstance(value, bool):
            value = int(value)
        if not isinstance(value, int) or not -2**31 <= value < 2**31:
            raise ValueError(f"kernel attribute {name} takes a 32-bit int, not {value!r}")
        dev = self._device or _device(None)
        st = _cucore_kernel_set_attribute(self._kernel._h, dev._h, aid, value)
        if st:
            raise_error(st, self._kernel)

    def __repr__(self):
        return f"<KernelAttributes on device {(self._device or _device(None)).device_id}>"


def _make_property(name):
    def getter(self: KernelAttributes) -> int:
        return self.get(name)
    getter.__name__ = name
    if name in SETTABLE:
        def setter(self: KernelAttributes, value: int) -> None:
            self.set_attribute(name, value)
        return property(getter, setter, doc=f"{name} (settable)")
    return property(getter, doc=name)


for _name in ATTRIBUTES:
    setattr(KernelAttributes, _name, _make_property(_name))


class KernelOccupancy:
    """Occupancy queries of a kernel on the current device (cuda.core's KernelOccupancy)."""

    __slots__ = ("_kernel",)

    def __init__(self, kernel: Kernel) -> None:
        self._kernel = kernel

    def max_active_blocks_per_multiprocessor(self, block_size: int, dynamic_shared_memory_size: int = 0, *, device: Union[Device, int, None] = None) -> int:
        """How many blocks of `block_size` threads fit on one multiprocessor."""
        dev = _device(device)
        out = _c_int()
        st = _cucore_kernel_max_active_blocks_per_multiprocessor(
            self._kernel._h, dev._h, _u32(block_size, "block_size"), _size(dynamic_shared_memory_size), _byref(out))
        if st:
            raise_error(st, self._kernel)
        return out.value

    def max_potential_block_size(self, dynamic_shared_memory_needed: int = 0, block_size_limit: int = 0, *, device: Union[Device, int, None] = None) -> MaxPotentialBlockSizeOccupancyResult:
        """(min_grid_size, max_block_size) for the highest occupancy with that much dynamic shared memory
        per block (an int; cuda.core's per-block-size callback is not supported)."""
        if callable(dynamic_shared_memory_needed):
            raise TypeError("dynamic_shared_memory_needed must be an int (a callable is not supported)")
        dev = _device(device)
        grid, block = _c_int(), _c_int()
        st = _cucore_kernel_max_potential_block_size(self._kernel._h, dev._h, _size(dynamic_shared_memory_needed),
                                                     _u32(block_size_limit, "block_size_limit"), _byref(grid),
                                                     _byref(block))
        if st:
            raise_error(st, self._kernel)
        return MaxPotentialBlockSizeOccupancyResult(grid.value, block.value)

    def available_dynamic_shared_memory_per_block(self, num_blocks_per_multiprocessor: int, block_size: int, *, device: Union[Device, int, None] = None) -> int:
        """The dynamic shared memory (bytes) each block can have when `num_blocks_per_multiprocessor` blocks of
        `block_size` threads share a multiprocessor of `device` (default: the current device)."""
        dev = _device(device)
        out = _c_size_t()
        st = _cucore_kernel_available_dynamic_shared_memory(
            self._kernel._h, dev._h, _u32(num_blocks_per_multiprocessor, "num_blocks_per_multiprocessor"),
            _u32(block_size, "block_size"), _byref(out))
        if st:
            raise_error(st, self._kernel)
        return out.value

    def max_potential_cluster_size(self, config: LaunchConfig, *, stream: Any = None, device: Union[Device, int, None] = None) -> int:
        """The largest cluster size `config` (a LaunchConfig; its cluster is ignored) can use."""
        return self._cluster_query(_cucore_launch_max_potential_cluster_size, config, stream, device)

    def max_active_clusters(self, config: LaunchConfig, *, stream: Any = None, device: Union[Device, int, None] = None) -> int:
        """How many clusters of `config`'s cluster dimensions can be resident at once."""
        return self._cluster_query(_cucore_launch_max_active_clusters, config, stream, device)

    def _cluster_query(self, fn, config, stream, device):
        if not isinstance(config, LaunchConfig):
            raise TypeError(f"config must be a LaunchConfig, not {type(config).__name__}")
        if device is None and stream is not None:
            device = _stream_of(stream).device
        dev = _device(device)
        out = _c_int()
        st = fn(config._ref, self._kernel._h, dev._h, _byref(out))
        if st:
            raise_error(st, self._kernel)
        return out.value


def _u32(v, what):
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2**32:
        raise ValueError(f"{what} must be an int in 0..2**32-1, not {v!r}")
    return v


def _size(v):
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"a shared memory size must be a non-negative int, not {v!r}")
    return v


class Kernel(HandleObject):
    """A kernel of an ObjectCode (ObjectCode.get_kernel), or a wrapped foreign CUkernel
    (Kernel.from_handle). Launch it with cucore.launch()."""

    __slots__ = ("_hv", "_code", "_params", "_packers", "_free", "_blocks0")
    _hv: int  # the libcucore handle as an int (launch blocks hold it); valid while _h is not None
    _code: Any
    _params: Any
    _packers: Any
    _free: Any
    _blocks0: Any
    _release = staticmethod(_fast_kernel_release)
    _handle_fn = staticmethod(_cucore_kernel_handle)

    def __new__(cls, *args, **kwargs):
        raise TypeError("Kernel cannot be instantiated directly: use ObjectCode.get_kernel() or Kernel.from_handle()")

    @classmethod
    def _wrap(cls, hv, code):
        k = _new(cls)
        k._h = _lib.handle_arg(hv)
        k._hv = hv
        k._raw = None
        k._code = code
        k._params = None   # ParamInfo list once asked (False: the driver cannot say)
        k._packers = {}    # launch.py: argument types -> free list of packers
        k._free = []       # launch.py: the most recently used packers (any argument types)
        k._blocks0 = {}    # launch.py: the blocks of launches without arguments, by stream and config
        return k

    @classmethod
    def from_handle(cls, handle: int, mod: Any = None) -> Kernel:
        """Wrap a foreign CUkernel (an int address) without owning it; `mod` (e.g. the ObjectCode or the
        object that owns its library) is kept alive while the wrapper lives."""
        if isinstance(handle, bool) or not isinstance(handle, int):
            try:
                handle = int(handle)
            except (TypeError, ValueError):
                raise TypeError(f"handle must be a CUkernel address (int), not {type(handle).__name__}") from None
        st, hv = wrap_foreign(_cucore_kernel_from_handle, mod, handle)
        if st:
            raise_error(st)
        return cls._wrap(hv, mod)

    @classmethod
    def from_function(cls, function: int, owner: Any = None) -> Kernel:
        """Wrap a foreign CUfunction (an int) of the calling thread's current context; `owner` is kept
        alive while the wrapper lives. It launches only into streams of that context."""
        st, hv = wrap_foreign(_cucore_kernel_from_function, owner, int(function))
        if st:
            raise_error(st)
        return cls._wrap(hv, owner)

    @property
    def name(self) -> str:
        """The kernel's symbol name (lowered for C++)."""
        out = ctypes.c_char_p()
        st = _cucore_kernel_name(self._h, _byref(out))
        if st:
            raise_error(st, self)
        return out.value.decode()  # type: ignore[union-attr]

    @property
    def attributes(self) -> KernelAttributes:
        """The kernel's attributes (KernelAttributes) on the current device; `attributes[device]` on another."""
        return KernelAttributes(self, None)

    @property
    def occupancy(self) -> KernelOccupancy:
        """The occupancy queries of the kernel (KernelOccupancy)."""
        return KernelOccupancy(self)

    def _param_info(self):
        """The ParamInfo list, or None when the driver cannot tell (cached)."""
        p = self._params
        if p is None:
            n = _c_size_t()
            st = _cucore_kernel_param_count(self._h, _byref(n))
            if st == Status.ERROR_NOT_SUPPORTED:  # a driver before 12.4
                self._params = False
                return None
            if st:
                raise_error(st, self)
            out = []
            off, size = _c_size_t(), _c_size_t()
            for i in range(n.value):
                st = _cucore_kernel_param_info(self._h, i, _byref(off), _byref(size))
                if st:
                    raise_error(st, self)
                out.append(ParamInfo(off.value, size.value))
            p = self._params = tuple(out)
        return p or None

    @property
    def num_arguments(self) -> int:
        """The number of the kernel's parameters (NotSupportedError where the driver cannot tell: before 12.4)."""
        p = self._param_info()
        if p is None:
            raise _params_unknown()
        return len(p)

    @property
    def arguments_info(self) -> List[ParamInfo]:
        """[ParamInfo(offset, size)] of the kernel's parameters (cuKernelGetParamInfo)."""
        p = self._param_info()
        if p is None:
            raise _params_unknown()
        return list(p)

    def function(self, device: Union[Device, int, None] = None) -> int:
        """The raw CUfunction of the kernel in `device`'s primary context (an int)."""
        dev = _device(device)
        out = ctypes.c_void_p()
        st = _cucore_kernel_function(self._h, dev._h, _byref(out))
        if st:
            raise_error(st, self)
        return out.value or 0

    def __repr__(self):
        if self._h is None:
            return "<Kernel (closed)>"
        try:
            return f"<Kernel {self.name}>"
        except Exception:
            return "<Kernel>"


def _params_unknown():
    return NotSupportedError(Status.ERROR_NOT_SUPPORTED, "the driver does not report kernel parameters "
                             "(cuKernelGetParamInfo needs a CUDA 12.4 driver)")
