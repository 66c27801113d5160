"""DLPack and the CUDA Array Interface (include/cucore/dlpack.h): buffers exchanged zero-copy with
PyTorch, CuPy, NumPy, JAX...

    t = torch.from_dlpack(buf)                  # buf.__dlpack__(): a 1-D uint8 tensor of its bytes
    a = cupy.asarray(buf)                       # buf.__cuda_array_interface__ (device memory only)
    b = cucore.from_dlpack(torch_tensor)        # a Buffer over the tensor's bytes
    c = cucore.Buffer.from_cuda_array_interface(cupy_array)

Ownership. An exported tensor holds the buffer's memory (not the Buffer object): closing the buffer
while a consumer holds the tensor frees nothing; the consumer's deleter does. A capsule nobody consumed
calls the deleter when it is garbage-collected; a consumed one (renamed "used_dltensor[_versioned]")
leaves that to the consumer. An imported tensor belongs to the Buffer, which calls its deleter once the
buffer and all its views are gone.

Streams (the array API's __dlpack__ protocol). A buffer is ordered on its deallocation stream (see
Buffer.set_deallocation_stream). `stream` names the consumer's stream: None or 1 (the legacy default
stream), 2 (the per-thread default stream) or a CUstream as an int; the consumer's stream is made to
wait for the deallocation stream (an event, no host synchronization). -1 asks for no ordering. The CUDA
Array Interface carries the deallocation stream as its "stream" entry, which consumers wait for.
"""
from __future__ import annotations

import ctypes
import datetime
import enum
import operator
import re
import sys
import types
from typing import TYPE_CHECKING, Any, Union

from . import _lib
from .buffer import Buffer
from .common import closed_error, raise_error
from .device import _device
from .stream import Stream, _cuda_stream_handle, legacy_default_stream, per_thread_default_stream

if TYPE_CHECKING:
    from .device import Device

(_cucore_dlpack_export, _cucore_dlpack_export_legacy, _cucore_dlpack_import, _cucore_dlpack_import_legacy,
 _cucore_dlpack_device, _cucore_buffer_size) = _lib.bind(
    globals(), "cucore_dlpack_export", "cucore_dlpack_export_legacy", "cucore_dlpack_import",
    "cucore_dlpack_import_legacy", "cucore_dlpack_device", "cucore_buffer_size")

DLManagedTensor = _lib.STRUCTS["DLManagedTensor"]
DLManagedTensorVersioned = _lib.STRUCTS["DLManagedTensorVersioned"]
DLTensor = _lib.STRUCTS["DLTensor"]
DLDataType = _lib.STRUCTS["DLDataType"]
_VersionedP = ctypes.POINTER(DLManagedTensorVersioned)
_LegacyP = ctypes.POINTER(DLManagedTensor)

# The DLPack version libcucore reads and writes (include/cucore/dlpack.h).
DLPACK_VERSION = (_lib.C["DLPACK_MAJOR_VERSION"], _lib.C["DLPACK_MINOR_VERSION"])
_READ_ONLY = _lib.C["DLPACK_FLAG_BITMASK_READ_ONLY"]
DLPackLayout = _lib.STRUCTS["cucore_dlpack_layout_t"]


class DLDeviceType(enum.IntEnum):
    """The DLPack device types libcucore exports and imports (DLDeviceType)."""
    CPU = _lib.C["kDLCPU"]                    # host memory
    CUDA = _lib.C["kDLCUDA"]                  # device memory
    CUDA_HOST = _lib.C["kDLCUDAHost"]         # page-locked host memory
    CUDA_MANAGED = _lib.C["kDLCUDAManaged"]   # managed (unified) memory


# ---- capsules -------------------------------------------------------------------------------------------

def _static_name(text):
    """A NUL-terminated name that lives as long as the process: a capsule keeps its name's pointer, and a
    capsule may outlive this module (freed during interpreter shutdown)."""
    buf = ctypes.create_string_buffer(text)
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(buf))  # never freed, on purpose
    return buf, ctypes.addressof(buf)


_NAME_VERSIONED = _static_name(b"dltensor_versioned")[1]
_NAME_LEGACY = _static_name(b"dltensor")[1]
_NAME_USED_VERSIONED = _static_name(b"used_dltensor_versioned")[1]
_NAME_USED_LEGACY = _static_name(b"used_dltensor")[1]

_CapsuleType = getattr(types, "CapsuleType", None) or type(datetime.datetime_CAPI)


def _pythonapi(name, restype, *argtypes):
    """A fresh function object of the C API (pythonapi caches one per name; its argtypes would be shared)."""
    fn = ctypes.pythonapi[name]
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


# Capsules are passed by address (id() of a live object), names by address: no Python object is made from
# a capsule being destroyed.
_capsule_new = _pythonapi("PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_capsule_is_valid = _pythonapi("PyCapsule_IsValid", ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
_capsule_get_pointer = _pythonapi("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_capsule_set_name = _pythonapi("PyCapsule_SetName", ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
_capsule_get_name = _pythonapi("PyCapsule_GetName", ctypes.c_char_p, ctypes.c_void_p)

_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_VERSIONED_DELETER_OFFSET = DLManagedTensorVersioned.deleter.offset
_LEGACY_DELETER_OFFSET = DLManagedTensor.deleter.offset


def _call_deleter(tensor, offset, _read=ctypes.c_void_p.from_address, _deleter=_DELETER):
    """Calls the deleter of the managed tensor at address `tensor` (its field at `offset`), if it has one."""
    fn = _read(tensor + offset).value
    if fn:
        _deleter(fn)(tensor)


def _capsule_destructor(capsule, _valid=_capsule_is_valid, _pointer=_capsule_get_pointer, _call=_call_deleter,
                        _names=((_NAME_VERSIONED, _VERSIONED_DELETER_OFFSET), (_NAME_LEGACY, _LEGACY_DELETER_OFFSET))):
    # Still named "dltensor[_versioned]": nobody consumed it, so the tensor is still the capsule's to free.
    # (Default arguments keep what it needs alive when module globals are cleared at shutdown.)
    for name, offset in _names:
        if _valid(capsule, name):
            tensor = _pointer(capsule, name)
            if tensor:
                _call(tensor, offset)
            return


_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(_capsule_destructor)
ctypes.pythonapi.Py_IncRef(ctypes.py_object(_DESTRUCTOR))  # capsules may outlive the module: never freed
_DESTRUCTOR_ADDRESS = ctypes.cast(_DESTRUCTOR, ctypes.c_void_p).value


def _capsule(tensor, versioned):
    """A new capsule owning the managed tensor at address `tensor`. If making it fails, the tensor is freed."""
    try:
        return _capsule_new(tensor, _NAME_VERSIONED if versioned else _NAME_LEGACY, _DESTRUCTOR_ADDRESS)
    except BaseException:
        _call_deleter(tensor, _VERSIONED_DELETER_OFFSET if versioned else _LEGACY_DELETER_OFFSET)
        raise


def _capsule_name(capsule):
    name = _capsule_get_name(id(capsule))
    return name.decode("ascii", "replace") if name is not None else None


# ---- export: Buffer.__dlpack__, __dlpack_device__, __cuda_array_interface__ -------------------------------

def device(buffer):
    """Buffer.__dlpack_device__(): (DLDeviceType, device id)."""
    t, i = ctypes.c_int32(), ctypes.c_int32()
    st = _cucore_dlpack_device(buffer._h, t, i)
    if st:
        raise_error(st, buffer)
    try:
        return DLDeviceType(t.value), i.value
    except ValueError:  # a device type newer than this binding
        return t.value, i.value


def _consumer_stream(stream, device_of):
    """The Stream a __dlpack__ `stream` argument names (None and 1: the legacy default stream, 2: the
    per-thread default stream, else a CUstream as an int, or an object with __cuda_stream__)."""
    if stream is None or (type(stream) is int and stream == 1):
        return legacy_default_stream(device_of())
    if type(stream) is int and stream == 2:
        return per_thread_default_stream(device_of())
    if isinstance(stream, Stream):
        return stream
    if isinstance(stream, int) and not isinstance(stream, bool):
        if stream == 0:
            raise BufferError("stream 0 is ambiguous and not allowed by the DLPack protocol: pass 1 for the legacy "
                              "default stream, 2 for the per-thread default stream, or -1 for no ordering")
        if stream < -1:
            raise BufferError(f"stream {stream} is not a stream: pass None, -1, 1, 2 or a CUstream address")
        return Stream.from_handle(stream)
    if hasattr(stream, "__cuda_stream__"):
        return Stream.from_handle(stream)
    raise TypeError(f"stream must be None, an int (a CUstream) or an object with __cuda_stream__, not "
                    f"{type(stream).__name__}")


def _hand_off(buffer, stream, device_type):
    """Orders the consumer's `stream` after the buffer's deallocation stream (no host synchronization)."""
    if type(stream) is int and stream == -1:
        return  # the consumer asked for no ordering
    if device_type == DLDeviceType.CPU:
        return  # host memory: no stream touches it
    producer = buffer.deallocation_stream  # the Stream its users are ordered on, or None
    if producer is None:
        return  # synchronous or foreign memory: nothing queued to wait for
    try:
        consumer = _consumer_stream(stream, lambda: producer.device)  # may be a Device's cached default stream
        if consumer.handle != producer.handle:
            consumer.wait(producer)
    finally:
        producer.close()


def export(buffer, stream=None, max_version=None, dl_device=None, copy=None, layout=None):
    """Buffer.__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None); `layout` (a
    cucore_dlpack_layout_t made by make_layout, or None: 1-D uint8) presents the bytes as a typed tensor
    (StridedMemoryView.__dlpack__)."""
    if buffer._h is None:
        raise closed_error(buffer)
    if copy:
        raise BufferError("__dlpack__: copy=True is not supported (the memory is exported as it is, zero-copy)")
    where = device(buffer)
    if dl_device is not None:
        try:
            wanted = (int(dl_device[0]), int(dl_device[1]))
        except (TypeError, ValueError, IndexError):
            raise BufferError(f"dl_device must be a (device type, device id) pair, not {dl_device!r}") from None
        if wanted != (int(where[0]), where[1]):
            raise BufferError(f"__dlpack__: the memory is on {where}, not on {wanted} "
                              f"(exporting to another device would need a copy)")
    versioned = False
    if max_version is not None:
        try:
            versioned = int(max_version[0]) >= 1
        except (TypeError, ValueError, IndexError):
            raise TypeError(f"max_version must be a (major, minor) pair, not {max_version!r}") from None
    _hand_off(buffer, stream, where[0])
    ref = None if layout is None else ctypes.byref(layout)
    if versioned:
        out = _VersionedP()
        st = _cucore_dlpack_export(buffer._h, ref, ctypes.byref(out))
    else:
        out = _LegacyP()
        st = _cucore_dlpack_export_legacy(buffer._h, ref, ctypes.byref(out))
    if st:
        raise_error(st, buffer)
    return _capsule(ctypes.cast(out, ctypes.c_void_p).value, versioned)


def make_layout(dtype, shape, strides, byte_offset, read_only):
    """A cucore_dlpack_layout_t: `dtype` a DLPack (code, bits, lanes), `shape` and `strides` (in elements,
    None: compact row-major) tuples, `byte_offset` of the first element into the buffer. The arrays it
    points to live as long as the struct."""
    layout = DLPackLayout()
    layout.struct_size = ctypes.sizeof(DLPackLayout)
    layout.read_only = 1 if read_only else 0
    layout.dtype.code, layout.dtype.bits, layout.dtype.lanes = dtype
    layout.ndim = len(shape)
    arrays = []
    if shape:
        arrays.append((ctypes.c_int64 * len(shape))(*shape))
        layout.shape = arrays[-1]
        if strides is not None:
            arrays.append((ctypes.c_int64 * len(strides))(*strides))
            layout.strides = arrays[-1]
    layout.byte_offset = byte_offset
    layout._arrays = arrays  # the struct only points at them
    return layout


def cuda_array_interface(buffer):
    """Buffer.__cuda_array_interface__: version 3, a 1-D "|u1" array of the buffer's bytes, with the
    buffer's deallocation stream (for the consumer to wait for). AttributeError for memory the device
    cannot reach (foreign host memory), so that hasattr() says False."""
    if buffer._h is None:
        raise closed_error(buffer)
    where = device(buffer)
    if where[0] == DLDeviceType.CPU:
        raise AttributeError("__cuda_array_interface__: the buffer is host memory the device cannot access "
                             "(use __dlpack__ or the buffer protocol of the memory's owner)")
    producer = buffer.deallocation_stream  # the Stream its users are ordered on, or None
    try:
        stream = producer.handle if producer is not None else None
    finally:
        if producer is not None:
            producer.close()
    return {
        "shape": (buffer.size,),
        "typestr": "|u1",
        "descr": [("", "|u1")],
        "data": (buffer.handle, False),
        "strides": None,
        "stream": stream,
        "version": 3,
    }


# ---- import: cucore.from_dlpack, Buffer.from_cuda_array_interface ----------------------------------------

def _buffer(h, owner):
    """A Buffer wrapper owning the +1 reference `h` (an int) to foreign memory, keeping `owner` alive."""
    size = ctypes.c_uint64()
    st = _cucore_buffer_size(h, size)
    b = Buffer._wrap(h, size.value, None)
    if st:
        raise_error(st, b)
    b._owner = owner
    return b


def _import_capsule(capsule, owner):
    """Imports the tensor of a "dltensor_versioned" or "dltensor" capsule and marks the capsule consumed."""
    return import_tensor(capsule, owner)[0]


def import_tensor(capsule, owner):
    """(a Buffer owning the tensor of a "dltensor_versioned" or "dltensor" capsule, which is marked consumed;
    the tensor as a dict: ptr (data + byte_offset), shape, strides (elements, or None), dtype (code, bits,
    lanes), device (type, id) and readonly). TypeError for what is not a DLPack capsule, BufferError for a
    consumed one; libcucore validates the tensor (InvalidArgumentError, NotSupportedError)."""
    if not isinstance(capsule, _CapsuleType):
        raise TypeError(f"not a DLPack capsule: a {type(capsule).__name__}")
    address = id(capsule)
    for name, used, versioned in ((_NAME_VERSIONED, _NAME_USED_VERSIONED, True),
                                  (_NAME_LEGACY, _NAME_USED_LEGACY, False)):
        if not _capsule_is_valid(address, name):
            continue
        tensor = _capsule_get_pointer(address, name)
        h = ctypes.c_void_p()
        if versioned:
            managed = ctypes.cast(tensor, _VersionedP)
            st = _cucore_dlpack_import(managed, ctypes.byref(h))
        else:
            managed = ctypes.cast(tensor, _LegacyP)
            st = _cucore_dlpack_import_legacy(managed, ctypes.byref(h))
        if st:
            raise_error(st)  # the capsule still owns the tensor: its destructor frees it
        if _capsule_set_name(address, used):  # the buffer owns the tensor now
            ctypes.pythonapi.PyErr_Clear()
        buf = _buffer(h.value, owner)
        # Read after the import: libcucore has checked ndim, shape and strides, and the buffer keeps the
        # tensor alive (its deleter runs when the buffer's memory is released).
        m = managed.contents
        t = m.dl_tensor
        ndim = t.ndim
        info = {
            "ptr": (t.data or 0) + t.byte_offset,
            "shape": tuple(t.shape[i] for i in range(ndim)),
            "strides": tuple(t.strides[i] for i in range(ndim)) if ndim and t.strides else None,
            "dtype": (t.dtype.code, t.dtype.bits, t.dtype.lanes),
            "device": (int(t.device.device_type), t.device.device_id),
            "readonly": bool(versioned and m.flags & _READ_ONLY),
        }
        return buf, info
    name = _capsule_name(capsule)
    if name in ("used_dltensor", "used_dltensor_versioned"):
        raise BufferError("the DLPack capsule was already consumed (a capsule can be imported once)")
    raise TypeError(f"not a DLPack capsule: its name is {name!r}, not 'dltensor' or 'dltensor_versioned'")


def from_dlpack(obj: Any, *, stream: Any = None) -> Buffer:
    """A Buffer over the memory of a DLPack tensor, zero-copy: `obj` is an object with __dlpack__ (a
    PyTorch tensor, a CuPy, NumPy or JAX array, a Buffer...) or a DLPack capsule (consumed: it can be
    imported once). The Buffer spans the bytes the tensor's elements reach; it owns the tensor and calls
    its deleter once the Buffer and all its views are gone. `stream` (a Stream, an object with
    __cuda_stream__, or an int as in __dlpack__) is the stream the buffer will be used on: the producer
    orders it after its own work. With None, the producer orders the legacy default stream; synchronize
    before using the buffer on another stream."""
    if isinstance(obj, _CapsuleType):
        return _import_capsule(obj, None)
    protocol = getattr(obj, "__dlpack__", None)
    if protocol is None:
        raise TypeError(f"from_dlpack() takes an object with __dlpack__ or a DLPack capsule, not "
                        f"{type(obj).__name__}")
    kwargs = {}
    dev = getattr(obj, "__dlpack_device__", None)
    on_cpu = dev is not None and int(dev()[0]) == DLDeviceType.CPU
    if stream is not None and not on_cpu:  # CPU producers take no stream
        kwargs["stream"] = stream if isinstance(stream, int) and not isinstance(stream, bool) else \
            _stream_handle(stream)
    try:
        capsule = protocol(max_version=(1, 0), **kwargs)
    except TypeError:  # a producer older than DLPack 1.0 knows no max_version
        capsule = protocol(**kwargs)
    return _import_capsule(capsule, obj)


def _stream_handle(stream):
    """The raw CUstream a Stream or an object with __cuda_stream__ names, as __dlpack__ takes it."""
    if isinstance(stream, Stream):
        return stream.handle
    raw = _cuda_stream_handle(stream)
    if raw is None:
        raise TypeError(f"stream must be a Stream, an int or an object with __cuda_stream__, not "
                        f"{type(stream).__name__}")
    return raw


_TYPESTR = re.compile(r"^[<>|=]([a-zA-Z])(\d+)$")


def _cai_span(shape, strides, itemsize):
    """(lowest byte offset, bytes) the elements reach from the first one; bytes 0 without elements."""
    if any(n == 0 for n in shape):
        return 0, 0
    if strides is None:  # C-contiguous
        return 0, itemsize * _product(shape)
    low = high = 0
    for n, s in zip(shape, strides):
        reach = (n - 1) * s
        if reach < 0:
            low += reach
        else:
            high += reach
    return low, high - low + itemsize


def _product(values):
    p = 1
    for v in values:
        p *= v
    return p


def from_cuda_array_interface(obj: Any, *, stream: Any = None, device_id: Union[Device, int, None] = None) -> Buffer:
    """Buffer.from_cuda_array_interface(obj): a Buffer over the device memory an object describes with
    __cuda_array_interface__ (versions 2 and 3; `obj` may also be the dict itself), zero-copy, spanning
    the bytes its elements reach and keeping `obj` alive until the buffer and all its views are gone.

    The interface does not name the device: `device_id` does (default: the current device). A "stream"
    entry (version 3) is honoured as the interface asks: `stream` (a Stream or an object with
    __cuda_stream__), if given, is made to wait for it; otherwise the producer's stream is synchronized."""
    cai = obj if isinstance(obj, dict) else getattr(obj, "__cuda_array_interface__", None)
    if not isinstance(cai, dict):
        raise TypeError(f"{type(obj).__name__} has no __cuda_array_interface__")
    version = cai.get("version")
    if version not in (2, 3):
        raise ValueError(f"__cuda_array_interface__ version {version!r} is not supported (2 and 3 are)")
    if cai.get("mask") is not None:
        raise ValueError("__cuda_array_interface__ with a mask is not supported")
    try:
        shape = tuple(operator.index(n) for n in cai["shape"])
        address = operator.index(cai["data"][0])
        typestr = cai["typestr"]
    except (KeyError, TypeError, IndexError) as e:
        raise ValueError(f"malformed __cuda_array_interface__ ({e!r}): {cai!r}") from None
    m = _TYPESTR.match(typestr) if isinstance(typestr, str) else None
    if m is None or int(m.group(2)) == 0:
        raise ValueError(f"__cuda_array_interface__ typestr {typestr!r} is not '<kind><bytes>' (e.g. '<f4')")
    itemsize = int(m.group(2))
    strides = cai.get("strides")
    if strides is not None:
        strides = tuple(operator.index(s) for s in strides)
        if len(strides) != len(shape):
            raise ValueError(f"__cuda_array_interface__ has {len(shape)} dimensions but {len(strides)} strides")
    if any(n < 0 for n in shape):
        raise ValueError(f"__cuda_array_interface__ shape {shape} has a negative dimension")
    low, size = _cai_span(shape, strides, itemsize)
    if size and not address:
        raise ValueError("__cuda_array_interface__ data is NULL but the array has elements")
    if address + low < 0:
        raise ValueError("__cuda_array_interface__ strides reach below address 0")
    producer_stream = cai.get("stream") if version >= 3 else None
    if producer_stream is not None:
        if isinstance(producer_stream, bool) or not isinstance(producer_stream, int) or producer_stream == 0:
            raise ValueError(f"__cuda_array_interface__ stream {producer_stream!r} is not a stream (0 is not "
                             f"allowed; 1 and 2 are the default streams)")
        producer = Stream.from_handle(producer_stream)
        try:
            if stream is None:
                producer.sync()
            else:
                consumer = stream if isinstance(stream, Stream) else Stream.from_handle(stream)
                consumer.wait(producer)
        finally:
            producer.close()
    return Buffer.from_handle(address + low if size else address, size, owner=obj, device_id=_device(device_id))


# Buffer's DLPack and CUDA Array Interface methods are this module's work; buffer.py is below this module.
_lib.hand_down("buffer", dlpack=sys.modules[__name__])
