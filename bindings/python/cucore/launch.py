"""Launch configurations and kernel launches (include/cucore/launch.h).

    config = cucore.LaunchConfig(grid=(n + 255) // 256, block=256)
    cucore.launch(stream, config, kernel, a, x, y, numpy.uint64(n))

launch() packs each argument into the bytes the kernel's parameter takes:
  - Python int: 64-bit (as cuda.core: a pointer-sized integer), float: double, bool: C bool, complex:
    double complex. cucore's improvement over cuda.core: where the driver reports the kernel's
    parameters (cuKernelGetParamInfo, CUDA 12.4+), an int or float takes the parameter's size instead
    (an int for an `int` parameter becomes 4 bytes, a float for a `float` parameter 4 bytes), so plain
    Python numbers work for any scalar parameter; a value that does not fit raises OverflowError. An
    int parameter takes both signed and unsigned values of its width (-2**31 .. 2**32-1 for 4 bytes).
  - NumPy scalars (bool, int8..int64, uint8..uint64, float16/32/64, complex64/128): their own bytes;
    NumPy structured scalars (numpy.void) by value.
  - ctypes scalars, ctypes.Structure/Union/Array: by value (structs by value, which cuda.core cannot).
  - Buffer: its address; anything with __cuda_array_interface__ (CuPy, PyTorch, Numba arrays): its data
    pointer; objects with getPtr() (cuda.bindings pointer types): that pointer.
  - TextureObject, SurfaceObject: their 64-bit handle (a cudaTextureObject_t / cudaSurfaceObject_t
    parameter); a closed one raises InvalidHandleError.
  - GraphCondition: its 64-bit CUgraphConditionalHandle (a cudaGraphConditionalHandle parameter).
  - TensorMapDescriptor: its 128 bytes, by value (a `const __grid_constant__ CUtensorMap` parameter); a
    closed one raises InvalidHandleError.
  - anything else: TypeError naming the argument's index and type.
The stream is a Stream or any object with __cuda_stream__; a GraphBuilder captures the launch into its graph.

The hot path costs one ctypes call with one argument (cucore_launch_block): each kernel keeps, per tuple of
argument types, free lists of packers (a preallocated launch block followed by the argument bytes, its
pointer and size arrays, a compiled struct.Struct and a fill function made for the argument types), read-only
blocks for launches without arguments per stream and config, and each LaunchConfig its C struct.
"""
from __future__ import annotations

import ctypes
import operator
import struct
from typing import TYPE_CHECKING, Any, Optional, Tuple, Union

from . import _lib
from ._graph_options import GraphCondition
from .buffer import Buffer
from .common import closed_error, raise_error
from .kernel import Kernel, _device
from .stream import Stream
from .tensor_map import SIZE, TensorMapDescriptor
from .texture import SurfaceObject, TextureObject

if TYPE_CHECKING:
    from .device import Device

(_cucore_launch_config_validate, _cucore_launch, _cucore_launch_block) = _lib.bind(
    globals(), "cucore_launch_config_validate", "cucore_launch", "cucore_launch_block")
(_fast_launch_block,) = _lib.bind_unchecked(globals(), "cucore_launch_block")

_c_size_t = ctypes.c_size_t
_Block = _lib.STRUCTS["cucore_launch_block_t"]
_BLOCK_SIZE = ctypes.sizeof(_Block)
_BLOCK_HEAD = struct.Struct("=II" + "Q" * (_Block.stream.offset // 8 - 1))  # struct_size, arg_count, args, arg_sizes
_BLOCK_TAIL = _Block.stream.offset  # stream, config and kernel, then (after the block) the arguments
_BLOCK_HANDLES = struct.Struct("=QQQ")
_BLOCK_STREAM_CONFIG = struct.Struct("=QQ")
assert (_Block.config.offset, _Block.kernel.offset, _BLOCK_SIZE) == (_BLOCK_TAIL + 8, _BLOCK_TAIL + 16,
                                                                    _BLOCK_TAIL + 24)
_Struct = struct.Struct
_struct_error = struct.error

COOPERATIVE = _lib.C["CUCORE_LAUNCH_COOPERATIVE"]
PROGRAMMATIC_STREAM_SERIALIZATION = _lib.C["CUCORE_LAUNCH_PROGRAMMATIC_STREAM_SERIALIZATION"]
PRIORITY = _lib.C["CUCORE_LAUNCH_PRIORITY"]


def _dims(value, what, allow_none_default):
    """An int or a 1-3 tuple of positive ints -> a 3-tuple (missing dimensions 1)."""
    if value is None:
        return allow_none_default
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,)
    elif not isinstance(value, tuple):
        raise TypeError(f"LaunchConfig.{what} must be an int or a tuple of 1-3 ints, not {type(value).__name__}")
    if not 1 <= len(value) <= 3:
        raise ValueError(f"LaunchConfig.{what} must have 1 to 3 dimensions, not {len(value)}")
    for v in value:
        if isinstance(v, bool) or not hasattr(type(v), "__index__"):
            raise TypeError(f"LaunchConfig.{what} dimensions must be ints, not {type(v).__name__}")
        if not 1 <= operator.index(v) < 2**32:
            raise ValueError(f"LaunchConfig.{what} dimensions must be positive 32-bit ints, not {v}")
    value = tuple(operator.index(v) for v in value)
    return value + (1,) * (3 - len(value))


class LaunchConfig:
    """How to launch: `grid` (blocks; clusters when `cluster` is set), `block` (threads per block),
    `cluster` (blocks per cluster; compute capability 9.0+), each an int or a 1-3 tuple (normalised to 3);
    `shmem_size` (dynamic shared memory per block, bytes); `is_cooperative` (grid-wide sync; the whole
    grid must be resident; `cooperative_launch` is the same field by cucore's earlier name); `programmatic_stream_serialization`; `priority` (the launch's priority instead
    of the stream's). None for grid/block means 1. Validated here (types and ranges) and by libcucore
    against the kernel and device at launch (cucore_launch_config_validate gives the same messages first:
    `validate(kernel)`)."""

    __slots__ = ("grid", "cluster", "block", "shmem_size", "is_cooperative",
                 "programmatic_stream_serialization", "priority", "_struct", "_ref", "_addr")
    grid: Tuple[int, int, int]
    cluster: Optional[Tuple[int, int, int]]
    block: Tuple[int, int, int]
    shmem_size: int
    is_cooperative: bool
    programmatic_stream_serialization: bool
    priority: Optional[int]
    _struct: Any
    _ref: Any
    _addr: int

    def __init__(self, grid: Union[int, Tuple[int, ...], None] = None, cluster: Union[int, Tuple[int, ...], None] = None,
                 block: Union[int, Tuple[int, ...], None] = None, shmem_size: Optional[int] = None,
                 is_cooperative: bool = False, programmatic_stream_serialization: bool = False,
                 priority: Optional[int] = None, *, cooperative_launch: Optional[bool] = None) -> None:
        if cooperative_launch is not None:  # cucore's earlier name of is_cooperative
            is_cooperative = cooperative_launch
        set_ = object.__setattr__
        set_(self, "grid", _dims(grid, "grid", (1, 1, 1)))
        set_(self, "cluster", _dims(cluster, "cluster", None))
        set_(self, "block", _dims(block, "block", (1, 1, 1)))
        if shmem_size is None:
            shmem_size = 0
        if isinstance(shmem_size, bool) or not isinstance(shmem_size, int) or not 0 <= shmem_size < 2**32:
            raise ValueError(f"LaunchConfig.shmem_size must be a non-negative 32-bit int, not {shmem_size!r}")
        set_(self, "shmem_size", shmem_size)
        for name, v in (("is_cooperative", is_cooperative),
                        ("programmatic_stream_serialization", programmatic_stream_serialization)):
            if not isinstance(v, bool):
                raise TypeError(f"LaunchConfig.{name} must be a bool, not {type(v).__name__}")
            set_(self, name, v)
        if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int)
                                     or not -2**31 <= priority < 2**31):
            raise ValueError(f"LaunchConfig.priority must be a 32-bit int or None, not {priority!r}")
        set_(self, "priority", priority)
        S = _lib.STRUCTS["cucore_launch_config_t"]
        s = S()
        s.struct_size = ctypes.sizeof(S)
        s.grid[:] = self.grid
        s.block[:] = self.block
        if self.cluster is not None:
            s.cluster[:] = self.cluster
        s.shared_memory_bytes = shmem_size
        s.flags = ((COOPERATIVE if is_cooperative else 0)
                   | (PROGRAMMATIC_STREAM_SERIALIZATION if programmatic_stream_serialization else 0)
                   | (PRIORITY if priority is not None else 0))
        s.priority = priority or 0
        set_(self, "_struct", s)
        set_(self, "_ref", ctypes.byref(s))
        set_(self, "_addr", ctypes.addressof(s))  # what a launch block holds (kept alive by _struct)

    @property
    def cooperative_launch(self) -> bool:
        """is_cooperative, by cucore's earlier name."""
        return self.is_cooperative

    def __setattr__(self, name, value):
        # Changing a field rebuilds (and revalidates) the C struct launches use.
        if name == "cooperative_launch":
            name = "is_cooperative"
        if name.startswith("_") or name not in LaunchConfig.__slots__:
            raise AttributeError(f"LaunchConfig has no attribute {name!r}")
        fields = {f: getattr(self, f) for f in LaunchConfig.__slots__ if not f.startswith("_")}
        fields[name] = value
        self.__init__(**fields)

    def __reduce__(self):
        # Copies and pickles are rebuilt from the fields (the C struct and its byref cannot be copied or
        # pickled; __setattr__ refuses the private names a slot-by-slot copy would set).
        return (LaunchConfig, self._key())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LaunchConfig):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self):
        return (self.grid, self.cluster, self.block, self.shmem_size, self.is_cooperative,
                self.programmatic_stream_serialization, self.priority)

    def __repr__(self):
        return (f"LaunchConfig(grid={self.grid}, cluster={self.cluster}, block={self.block}, "
                f"shmem_size={self.shmem_size}, is_cooperative={self.is_cooperative}, "
                f"programmatic_stream_serialization={self.programmatic_stream_serialization}, "
                f"priority={self.priority})")

    def validate(self, kernel: Kernel, device: Union[Device, int, None] = None) -> None:
        """Check this configuration for `kernel` on `device` (default: current) without launching;
        raises InvalidArgumentError with the message a launch would fail with."""
        if not isinstance(kernel, Kernel):
            raise TypeError(f"kernel must be a Kernel, not {type(kernel).__name__}")
        dev = _device(device)
        st = _cucore_launch_config_validate(self._ref, kernel._h, dev._h)
        if st:
            raise_error(st, kernel)


# ---- argument packing ------------------------------------------------------------------------------------

_INT_CODES = {1: "b", 2: "h", 4: "i", 8: "q"}
_UINT_CODES = {1: "B", 2: "H", 4: "I", 8: "Q"}
_FLOAT_CODES = {2: "e", 4: "f", 8: "d"}


def _buffer_address(b):
    if b._h is None:
        raise closed_error(b)
    raw = b._raw
    return raw if raw is not None else b.handle


_bound_handle = TextureObject._kernel_arg  # TextureObject and SurfaceObject share it


_condition_value = GraphCondition._kernel_arg

_tensor_map_bytes = TensorMapDescriptor._kernel_arg


def _cai_address(obj):
    return obj.__cuda_array_interface__["data"][0] or 0


def _ptr_address(obj):
    return int(obj.getPtr())


def _to_bytes(obj):
    return bytes(obj)


def _numpy_bytes(obj):
    return obj.tobytes()


def _complex128(v):
    return struct.pack("=dd", v.real, v.imag)


def _complex64(v):
    return struct.pack("=ff", v.real, v.imag)


class _Arg:
    """How one argument type packs: struct code, size, alignment, converter (None: the value as it is),
    kind ("int"/"float" for Python numbers, whose range is checked on overflow)."""
    __slots__ = ("code", "size", "align", "convert", "kind")

    def __init__(self, code, size, align, convert=None, kind=None):
        self.code, self.size, self.align, self.convert, self.kind = code, size, align, convert, kind


class _LayoutChanged(Exception):
    """A NumPy structured scalar of another dtype than the packer was made for (they share one type)."""


def _void_bytes(size):
    def convert(v):
        b = v.tobytes()
        if len(b) != size:
            raise _LayoutChanged
        return b
    return convert


def _describe(tp, value, param_size):
    """The _Arg for an argument `value` of type `tp` (param_size: the kernel's parameter size or None)."""
    if tp is bool and param_size in (None, 1):
        return _Arg("?", 1, 1)
    if issubclass(tp, int):  # int, bool for a wider parameter, IntEnum, ...
        size = param_size if param_size in _INT_CODES else 8
        return _Arg(_INT_CODES[size], size, size, None if tp is int or tp is bool else operator.index, "int")
    if issubclass(tp, float):
        size = param_size if param_size in _FLOAT_CODES else 8
        return _Arg(_FLOAT_CODES[size], size, size, None if tp is float else float, "float")
    if issubclass(tp, complex):
        if param_size == 8:
            return _Arg("8s", 8, 8, _complex64)
        return _Arg("16s", 16, 16, _complex128)
    if issubclass(tp, Buffer):
        return _Arg("Q", 8, 8, _buffer_address)
    if issubclass(tp, (TextureObject, SurfaceObject)):
        return _Arg("Q", 8, 8, _bound_handle)
    if issubclass(tp, GraphCondition):
        return _Arg("Q", 8, 8, _condition_value)
    if issubclass(tp, TensorMapDescriptor):  # a __grid_constant__ CUtensorMap, by value
        return _Arg(f"{SIZE}s", SIZE, 64, _tensor_map_bytes)
    if issubclass(tp, (ctypes._SimpleCData, ctypes.Structure, ctypes.Union, ctypes.Array)):
        size = ctypes.sizeof(tp)
        return _Arg(f"{size}s", size, max(ctypes.alignment(tp), 1), _to_bytes)
    if tp.__module__.split(".")[0] == "numpy" and hasattr(tp, "dtype"):
        import numpy
        if issubclass(tp, numpy.generic):
            dt = value.dtype  # numpy.void's size is the value's (structured) dtype's
            kind, size = dt.kind, dt.itemsize
            if kind == "b":
                return _Arg("?", 1, 1)
            if kind == "i" and size in _INT_CODES:
                return _Arg(_INT_CODES[size], size, size)
            if kind == "u" and size in _UINT_CODES:
                return _Arg(_UINT_CODES[size], size, size)
            if kind == "f" and size in _FLOAT_CODES:
                return _Arg(_FLOAT_CODES[size], size, size)
            if kind == "V" and size > 0:  # structured scalars (numpy.void), by value
                return _Arg(f"{size}s", size, min(16, max(dt.alignment, 1)), _void_bytes(size))
            if kind in "cf" and size > 0:  # complex, long double
                return _Arg(f"{size}s", size, min(16, max(dt.alignment, 1)), _numpy_bytes)
    if hasattr(tp, "__cuda_array_interface__"):
        return _Arg("Q", 8, 8, _cai_address)
    if hasattr(tp, "getPtr"):
        return _Arg("Q", 8, 8, _ptr_address)
    return None


class _Packer:
    """One launch block (cucore_launch_block_t, then the argument bytes) for one kernel and one tuple of
    argument types: `fill(*args)` checks the arguments' types and writes them (converted) at their offsets
    (`pack(buf, at, *values)` writes values already converted), and `ref` is what cucore_launch_block takes. struct_size, arg_count, the argument pointer and size arrays and the kernel
    are written once, here; the stream and config when they differ from the last launch's (`stream`,
    `config`: the ints last written, compared by identity: a false miss only writes them again)."""
    __slots__ = ("pack", "fill", "buf", "at", "head", "ref", "ptrs", "sizes", "n", "converts", "args", "key",
                 "stream", "config")

    def __init__(self, key, args_desc, kernel_hv=0):
        self.key = key
        self.args = args_desc
        fmt, offset, offsets = ["="], _BLOCK_SIZE, []
        for a in args_desc:
            align = 16 if a.align > 8 else 8  # every argument starts on 8 bytes at least
            pad = -offset % align
            if pad:
                fmt.append(f"{pad}x")
            offset += pad
            offsets.append(offset)
            fmt.append(a.code)
            offset += a.size
        s = _Struct("".join(fmt))
        n = len(args_desc)
        self.buf = ctypes.create_string_buffer(offset + 16)
        base = ctypes.addressof(self.buf)
        at = -base % 16  # the block starts on 16 bytes (a by-value argument may need them)
        block = base + at
        self.head = at + _BLOCK_TAIL
        self.at = at + _BLOCK_SIZE
        self.pack = s.pack_into
        self.ptrs = (ctypes.c_void_p * n)(*[block + o for o in offsets])
        self.sizes = (_c_size_t * n)(*[a.size for a in args_desc])
        self.n = _c_size_t(n)  # graph kernel nodes take ptrs, sizes and n (graph.py)
        _BLOCK_HEAD.pack_into(self.buf, at, _BLOCK_SIZE, n, ctypes.addressof(self.ptrs) if n else 0,
                              ctypes.addressof(self.sizes) if n else 0)
        _BLOCK_HANDLES.pack_into(self.buf, self.head, 0, 0, kernel_hv)
        self.stream = self.config = None
        self.ref = ctypes.byref(self.buf, at)
        conv = tuple((i, a.convert) for i, a in enumerate(args_desc) if a.convert is not None)
        self.converts = conv or None
        self.fill = _fill_function(s.pack_into, self.buf, self.at, key, conv) if n else None

    def set_handles(self, sh, config):
        """Write the stream and config (ints) into the block."""
        _BLOCK_STREAM_CONFIG.pack_into(self.buf, self.head, sh, config)
        self.stream, self.config = sh, config

    def values(self, args):
        conv = self.converts
        if conv is None:
            return args
        vals = list(args)
        for i, f in conv:
            vals[i] = f(vals[i])
        return vals

    def pack_checked(self, args):
        """The slow path after the packer refused a value: check each Python number against its
        parameter, pass unsigned values of an int parameter's width, raise OverflowError otherwise."""
        vals = list(self.values(args))
        for i, (a, v) in enumerate(zip(self.args, vals)):
            if a.kind == "int":
                bits = 8 * a.size
                v = operator.index(v)
                if not -(1 << (bits - 1)) <= v < (1 << bits):
                    raise OverflowError(f"launch argument {i}: {v} does not fit in the kernel's {a.size}-byte "
                                        f"parameter")
                vals[i] = v - (1 << bits) if v >= 1 << (bits - 1) else v
            elif a.kind == "float":
                try:
                    struct.pack("=" + a.code, v)
                except (OverflowError, _struct_error):
                    raise OverflowError(f"launch argument {i}: {v!r} does not fit in the kernel's "
                                        f"{a.size}-byte floating-point parameter") from None
        self.pack(self.buf, self.at, *vals)


class _Mismatch(Exception):
    """An argument of another type than the packer was made for (raised by its fill function)."""


def _fill_function(pack, buf, at, key, conv):
    """`fill(*args)`: checks that each argument has the type of `key` (else _Mismatch), then packs them
    (converted where `conv` says) into `buf` at `at`: a function made for this argument list, so a launch
    needs no tuple of types, no per-launch list, loop or method call for conversions."""
    names = [f"a{i}" for i in range(len(key))]
    converted = dict(conv)
    check = " or ".join(f"_type({a}) is not _t{i}" for i, a in enumerate(names))
    values = ", ".join(f"_c{i}({a})" if i in converted else a for i, a in enumerate(names))
    namespace = {"_pack": pack, "_buf": buf, "_at": at, "_type": type, "_Mismatch": _Mismatch,
                 **{f"_t{i}": t for i, t in enumerate(key)}, **{f"_c{i}": f for i, f in conv}}
    exec(f"def fill({', '.join(names)}):\n"  # noqa: S102
         f"    if {check}:\n        raise _Mismatch\n"
         f"    _pack(_buf, _at, {values})\n", namespace)
    return namespace["fill"]


def _new_packer(kernel, key, args, cache=True):
    params = kernel._param_info() if kernel._h is not None and key else None
    if params is not None and len(params) != len(args):
        params = None  # libcucore reports the count mismatch, naming the kernel
    desc = []
    for i, tp in enumerate(key):
        a = _describe(tp, args[i], params[i].size if params is not None else None)
        if a is None:
            raise TypeError(f"launch argument {i} of type {tp.__module__}.{tp.__qualname__} is not supported: "
                            f"pass an int, float, bool, complex, a NumPy or ctypes scalar, a ctypes.Structure, "
                            f"a NumPy structured scalar, a Buffer, a TextureObject, a SurfaceObject, a GraphCondition, "
                            f"a TensorMapDescriptor or "
                            f"an object with __cuda_array_interface__")
        desc.append(a)
    if cache:
        kernel._packers.setdefault(key, [])
    return _Packer(key, desc, kernel._hv if kernel._h is not None else 0)


def _block0(kernel, sh, config):
    """The read-only block of launches of `kernel` without arguments into the stream `sh` (an int) with
    `config` (a LaunchConfig), made on first use and kept in kernel._blocks0[sh][config._addr]: its content
    is its key, so any number of threads may launch from it at once. Each level keeps at most 64 entries
    (streams and configs come and go)."""
    streams = kernel._blocks0
    configs = streams.get(sh)
    if configs is None:
        if len(streams) >= 64:
            streams.clear()
        configs = streams[sh] = {}
    elif len(configs) >= 64:
        configs.clear()
    p = _Packer((), (), kernel._hv)
    p.set_handles(sh, config._addr)
    configs[config._addr] = p.ref  # the byref keeps the block's buffer alive
    return p.ref


def _other_packer(kernel, popped, args):
    """A packer for the types of `args`, filled with them (the launch's most recent packer, `popped`, was
    for other types, or there was none): from the kernel's free list for those types, else new."""
    if popped is not None:
        kernel._packers[popped.key].append(popped)
    key = tuple(map(type, args))
    try:
        p = kernel._packers[key].pop()
    except (KeyError, IndexError):
        p = _new_packer(kernel, key, args)
    try:
        p.fill(*args)
    except (_struct_error, OverflowError):
        p.pack_checked(args)
    except _LayoutChanged:
        kernel._packers[key].append(p)
        return _one_off_packer(kernel, args)
    return p


def _one_off_packer(kernel, args):
    """A packer for this one launch (key None: not kept), for a NumPy structured scalar of another dtype than
    the kept packer's (they share one type)."""
    p = _new_packer(kernel, tuple(map(type, args)), args, cache=False)
    p.pack_checked(args)
    p.key = None
    return p


def _slow_operands(stream, config, kernel):
    """Checks and conversions for launch() arguments off the fast path; returns (stream, its handle as
    an int)."""
    if not isinstance(config, LaunchConfig):
        raise TypeError(f"config must be a LaunchConfig, not {type(config).__name__}")
    if not isinstance(kernel, Kernel):
        raise TypeError(f"kernel must be a Kernel, not {type(kernel).__name__}")
    if not isinstance(stream, Stream):
        if stream is None or not hasattr(stream, "__cuda_stream__"):
            raise TypeError(f"stream must be a Stream or an object with __cuda_stream__, "
                            f"not {type(stream).__name__}")
        stream = Stream.from_handle(stream)
    if stream._h is None:
        raise closed_error(stream)
    if kernel._h is None:
        raise closed_error(kernel)
    try:
        return stream, stream._hv
    except AttributeError:
        return stream, _stream_int(stream)


def _stream_int(stream):
    """The libcucore handle of `stream` as an int, kept in its `_hv` (every Stream the package makes has
    it; this serves one made another way)."""
    hv = stream._hv = ctypes.cast(stream._h, ctypes.c_void_p).value
    return hv


def launch(stream: Any, config: LaunchConfig, kernel: Kernel, *args: Any) -> None:
    """Launch `kernel` on `stream` (a Stream or an object with __cuda_stream__) with `config` (a
    LaunchConfig) and `args` (packed as the module docstring says). Asynchronous: returns once queued."""
    # Module globals, not defaults bound as locals: keyword-only defaults are copied into every call
    # (~750 host instructions for six on Python 3.11), a global read is cached.
    # One ctypes call with one argument (cucore_launch_block): ctypes costs per argument (~400 host
    # instructions each), so the stream, config, kernel and arguments go into a prepared block.
    if type(stream) is Stream and type(config) is LaunchConfig and type(kernel) is Kernel \
            and stream._h is not None and kernel._h is not None:
        try:
            sh = stream._hv
        except AttributeError:  # a Stream made without it (its int handle is then read once)
            sh = _stream_int(stream)
    else:
        stream, sh = _slow_operands(stream, config, kernel)
    # Without arguments: a read-only block per stream and config (_block0). With arguments, the kernel's
    # most recent packers wait in a free list: the common case (the same argument types as last time)
    # costs one pop and one append; other types go through the per-types free lists. A packer belongs to
    # one launch at a time (ctypes lets other threads run during the call); one lost to an exception is
    # only garbage, its list makes another.
    if not args:
        try:
            ref = kernel._blocks0[sh][config._addr]
        except KeyError:
            ref = _block0(kernel, sh, config)
        st = _fast_launch_block(ref)
        if st:
            raise_error(st, kernel, stream)
        return
    free = kernel._free
    try:
        p = free.pop()
        p.fill(*args)  # checks the argument types first: _Mismatch if this packer is for others
    except IndexError:  # no packer yet
        p = _other_packer(kernel, None, args)
    except (_Mismatch, TypeError):  # other types, or another number of arguments (or a converter's error,
        p = _other_packer(kernel, p, args)  # which the new packer raises again)
    except (_struct_error, OverflowError):
        try:
            p.pack_checked(args)
        except BaseException:
            free.append(p)
            raise
    except _LayoutChanged:  # rare: a one-off packer for this structured dtype
        free.append(p)
        p = _one_off_packer(kernel, args)
    if p.stream is not sh or p.config is not config._addr:
        p.set_handles(sh, config._addr)
    st = _fast_launch_block(p.ref)
    if p.key is not None:
        free.append(p)
    if st:
        raise_error(st, kernel, stream)


# Kernel's cluster queries take a LaunchConfig; kernel.py is below this module.
_lib.hand_down("kernel", LaunchConfig=LaunchConfig)
