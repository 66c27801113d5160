"""Checkpointing CUDA processes (include/cucore/checkpoint.h), as cuda.core's `cuda.core.checkpoint`.

`Process(pid)` names a CUDA process; the driver keeps its state: "running" -> lock() -> "locked" ->
checkpoint() -> "checkpointed" -> restore() -> "locked" -> unlock() -> "running". A step the driver or the
platform refuses raises with the driver's reason: NotSupportedError (e.g. in a container without the needed
privileges, or a driver older than 570), InvalidStateError (a step out of order), NotReadyError (a lock's
timeout passed; the process stays running). A process cannot lock itself (InvalidArgumentError).
"""
from __future__ import annotations

import ctypes
import uuid as _uuid
from typing import Dict, Literal, Mapping, Optional, Union

from . import _lib
from .common import raise_error
from .device import Device

__all__ = ["Process", "ProcessStateT"]

ProcessStateT = Literal["running", "locked", "checkpointed", "failed"]

(_cucore_process_get_state, _cucore_process_restore_thread_id, _cucore_process_lock, _cucore_process_checkpoint,
 _cucore_process_restore, _cucore_process_unlock) = _lib.bind(
    globals(), "cucore_process_get_state", "cucore_process_restore_thread_id", "cucore_process_lock",
    "cucore_process_checkpoint", "cucore_process_restore", "cucore_process_unlock")

_LockOptionsC = _lib.STRUCTS["cucore_process_lock_options_t"]
_GpuMappingC = _lib.STRUCTS["cucore_gpu_mapping_t"]
_STATES: Dict[int, str] = {v: k for k, v in _lib.c_names("cucore_process_state_t", "CUCORE_PROCESS_STATE_",
                                                           skip=("unset",)).items()}

UuidLike = Union[str, bytes, _uuid.UUID, Device]


def _uuid_bytes(value: UuidLike) -> bytes:
    """16 bytes of a GPU UUID given as a Device, "GPU-xxxxxxxx-...", "xxxxxxxx-...", a uuid.UUID or 16 bytes."""
    if isinstance(value, Device):
        value = value.uuid
    if isinstance(value, _uuid.UUID):
        return value.bytes
    if isinstance(value, (bytes, bytearray)):
        if len(value) != 16:
            raise ValueError(f"a GPU UUID as bytes has 16 of them, not {len(value)}")
        return bytes(value)
    if not isinstance(value, str):  # TypeError, as cuda.core, for what is no UUID at all
        raise TypeError(f"GPU UUID values must be UUID strings, uuid.UUID, 16 bytes or a Device, not "
                        f"{type(value).__name__}")
    text = value
    if text.upper().startswith("GPU-"):
        text = text[4:]
    try:
        return _uuid.UUID(text).bytes
    except ValueError:
        raise ValueError(f"{value!r} is not a GPU UUID (\"GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx\")") from None


class Process:
    """A CUDA process by process id (cuda.core: checkpoint.Process). Holds only the pid."""

    __slots__ = ("_pid",)

    def __init__(self, pid: int) -> None:
        if isinstance(pid, bool) or not isinstance(pid, int):
            raise TypeError(f"Process(pid) takes an int, not {pid!r}")
        if pid <= 0:
            raise ValueError(f"pid must be positive, not {pid}")
        self._pid = pid

    def __repr__(self) -> str:
        return f"<checkpoint.Process {self._pid}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Process) and other._pid == self._pid

    def __hash__(self) -> int:
        return hash(("Process", self._pid))

    @property
    def pid(self) -> int:
        """The process id."""
        return self._pid

    @property
    def state(self) -> ProcessStateT:
        """"running", "locked", "checkpointed" or "failed", as the driver says now."""
        out = ctypes.c_int()
        st = _cucore_process_get_state(self._pid, out)
        if st:
            raise_error(st)
        try:
            return _STATES[out.value]  # type: ignore[return-value]
        except KeyError:  # a state newer than this binding: RuntimeError, as cuda.core
            raise RuntimeError(f"Unknown CUDA checkpoint process state: {out.value}") from None

    @property
    def restore_thread_id(self) -> int:
        """The thread id of the process's CUDA restore thread."""
        out = ctypes.c_int()
        st = _cucore_process_restore_thread_id(self._pid, out)
        if st:
            raise_error(st)
        return out.value

    def lock(self, timeout_ms: int = 0) -> None:
        """Lock the running process (its CUDA calls then block, its work completes): "locked". Waits at most
        `timeout_ms` milliseconds (0: without bound) for its work, else NotReadyError and it stays "running"."""
        if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int):  # TypeError, ValueError as cuda.core
            raise TypeError(f"timeout_ms must be an int, not {type(timeout_ms).__name__}")
        if not 0 <= timeout_ms <= 0xFFFFFFFF:
            raise ValueError(f"timeout_ms must be in [0, 2**32), not {timeout_ms!r}")
        o = _LockOptionsC()
        o.struct_size = ctypes.sizeof(o)
        o.timeout_ms = timeout_ms
        st = _cucore_process_lock(self._pid, o)
        if st:
            raise_error(st)

    def checkpoint(self) -> None:
        """Checkpoint the locked process (its device memory to host memory, its GPUs released): "checkpointed"."""
        st = _cucore_process_checkpoint(self._pid)
        if st:
            raise_error(st)

    def restore(self, gpu_mapping: Optional[Mapping[UuidLike, UuidLike]] = None) -> None:
        """Restore the checkpointed process: "locked". `gpu_mapping` maps each GPU it was checkpointed on (UUID
        or Device) to the GPU to restore it onto (the same chip, enough memory); it must name every one."""
        if gpu_mapping is not None and not isinstance(gpu_mapping, Mapping):
            raise TypeError(f"gpu_mapping must be a mapping from checkpointed GPU UUID to restore GPU UUID, not "
                            f"{type(gpu_mapping).__name__}")
        pairs = list((gpu_mapping or {}).items())
        array = (_GpuMappingC * max(len(pairs), 1))()
        for i, (old, new) in enumerate(pairs):
            ctypes.memmove(array[i].old_uuid.bytes, _uuid_bytes(old), 16)
            ctypes.memmove(array[i].new_uuid.bytes, _uuid_bytes(new), 16)
        st = _cucore_process_restore(self._pid, array if pairs else None, len(pairs))
        if st:
            raise_error(st)

    def unlock(self) -> None:
        """Unlock the locked process: "running"."""
        st = _cucore_process_unlock(self._pid)
        if st:
            raise_error(st)
