"""NVML's errors, as cuda.core's `cuda.core.system.exceptions`: NvmlError and one subclass per nvmlReturn_t.

Every failure of NVML in cucore.system raises the subclass of NVML's return code (read from libcucore through
cucore_system_last_nvml_result), so `except system.NotSupportedError` catches what a GPU or driver lacks. As in
cuda.core, NvmlError derives from Exception alone (not from cucore.CUDAError), and `MemoryError` / `TimeoutError`
here are NVML's, not the builtins.
"""
from __future__ import annotations

from typing import Dict, Optional, Type

__all__ = ["AlreadyInitializedError", "ArgumentVersionMismatchError", "CorruptedInforomError", "DeprecatedError",
           "DriverNotLoadedError", "FreqNotSupportedError", "FunctionNotFoundError", "GpuIsLostError",
           "GpuNotFoundError", "InUseError", "InsufficientPowerError", "InsufficientResourcesError",
           "InsufficientSizeError", "InvalidArgumentError", "InvalidStateError", "IrqIssueError",
           "LibRmVersionMismatchError", "LibraryNotFoundError", "MemoryError", "NoDataError", "NoPermissionError",
           "NotFoundError", "NotReadyError", "NotSupportedError", "NvmlError", "OperatingSystemError",
           "ResetRequiredError", "ResetTypeNotSupportedError", "TimeoutError", "UninitializedError", "UnknownError",
           "VgpuEccNotSupportedError"]


class NvmlError(Exception):
    """A failed NVML call. `status` is NVML's nvmlReturn_t, `message` libcucore's detail (the NVML function and
    nvmlErrorString's text)."""

    status: int
    message: str

    def __init__(self, status: int, message: str = "") -> None:
        self.status = int(status)
        self.message = message
        super().__init__(message or f"NVML error {self.status}")

    def __reduce__(self):
        return (type(self), (self.status, self.message))


_BY_RESULT: Dict[int, Type[NvmlError]] = {}


def _code(result: int):
    def register(cls):
        _BY_RESULT[result] = cls
        cls._result = result
        return cls
    return register


@_code(1)
class UninitializedError(NvmlError):
    """NVML_ERROR_UNINITIALIZED: NVML was not initialised."""


@_code(2)
class InvalidArgumentError(NvmlError):
    """NVML_ERROR_INVALID_ARGUMENT: an argument NVML refused."""


@_code(3)
class NotSupportedError(NvmlError):
    """NVML_ERROR_NOT_SUPPORTED: the device or driver lacks the feature."""


@_code(4)
class NoPermissionError(NvmlError):
    """NVML_ERROR_NO_PERMISSION: the call needs more privileges (often root)."""


@_code(5)
class AlreadyInitializedError(NvmlError):
    """NVML_ERROR_ALREADY_INITIALIZED (deprecated by NVML)."""


@_code(6)
class NotFoundError(NvmlError):
    """NVML_ERROR_NOT_FOUND: no such object (device, process, ...)."""


@_code(7)
class InsufficientSizeError(NvmlError):
    """NVML_ERROR_INSUFFICIENT_SIZE: a buffer was too small."""


@_code(8)
class InsufficientPowerError(NvmlError):
    """NVML_ERROR_INSUFFICIENT_POWER: the device's external power cables are not attached."""


@_code(9)
class DriverNotLoadedError(NvmlError):
    """NVML_ERROR_DRIVER_NOT_LOADED: the NVIDIA kernel driver is not loaded."""


@_code(10)
class NvmlTimeoutError(NvmlError):
    """NVML_ERROR_TIMEOUT: the call timed out (cucore.system.TimeoutError)."""


@_code(11)
class IrqIssueError(NvmlError):
    """NVML_ERROR_IRQ_ISSUE: the kernel detected an interrupt issue with the GPU."""


@_code(12)
class LibraryNotFoundError(NvmlError):
    """NVML_ERROR_LIBRARY_NOT_FOUND: NVML (libnvidia-ml.so.1) could not be loaded."""


@_code(13)
class FunctionNotFoundError(NvmlError):
    """NVML_ERROR_FUNCTION_NOT_FOUND: the installed NVML lacks the function (an older driver)."""


@_code(14)
class CorruptedInforomError(NvmlError):
    """NVML_ERROR_CORRUPTED_INFOROM: the InfoROM is corrupted."""


@_code(15)
class GpuIsLostError(NvmlError):
    """NVML_ERROR_GPU_IS_LOST: the GPU fell off the bus or is otherwise inaccessible."""


@_code(16)
class ResetRequiredError(NvmlError):
    """NVML_ERROR_RESET_REQUIRED: the GPU needs a reset."""


@_code(17)
class OperatingSystemError(NvmlError):
    """NVML_ERROR_OPERATING_SYSTEM: the operating system blocked the call."""


@_code(18)
class LibRmVersionMismatchError(NvmlError):
    """NVML_ERROR_LIB_RM_VERSION_MISMATCH: NVML and the kernel driver are of different versions."""


@_code(19)
class InUseError(NvmlError):
    """NVML_ERROR_IN_USE: the GPU is in use."""


@_code(20)
class NvmlMemoryError(NvmlError):
    """NVML_ERROR_MEMORY: insufficient memory (cucore.system.MemoryError)."""


@_code(21)
class NoDataError(NvmlError):
    """NVML_ERROR_NO_DATA: no data."""


@_code(22)
class VgpuEccNotSupportedError(NvmlError):
    """NVML_ERROR_VGPU_ECC_NOT_SUPPORTED: ECC is on, which vGPU does not support."""


@_code(23)
class InsufficientResourcesError(NvmlError):
    """NVML_ERROR_INSUFFICIENT_RESOURCES: not enough resources for the operation."""


@_code(24)
class FreqNotSupportedError(NvmlError):
    """NVML_ERROR_FREQ_NOT_SUPPORTED: the frequency is not supported."""


@_code(25)
class ArgumentVersionMismatchError(NvmlError):
    """NVML_ERROR_ARGUMENT_VERSION_MISMATCH: a versioned struct's version is not the one NVML expects."""


@_code(26)
class DeprecatedError(NvmlError):
    """NVML_ERROR_DEPRECATED: the function is deprecated."""


@_code(27)
class NotReadyError(NvmlError):
    """NVML_ERROR_NOT_READY: the system is not ready for the request."""


@_code(28)
class GpuNotFoundError(NvmlError):
    """NVML_ERROR_GPU_NOT_FOUND: no GPU matches the request."""


@_code(29)
class InvalidStateError(NvmlError):
    """NVML_ERROR_INVALID_STATE: the resource is in an invalid state for the operation."""


@_code(30)
class ResetTypeNotSupportedError(NvmlError):
    """NVML_ERROR_RESET_TYPE_NOT_SUPPORTED: the reset type is not supported."""


@_code(999)
class UnknownError(NvmlError):
    """NVML_ERROR_UNKNOWN: an internal NVML error."""


MemoryError = NvmlMemoryError  # noqa: A001  (cuda.core's name, NVML's error; not the builtin)
TimeoutError = NvmlTimeoutError  # noqa: A001


def nvml_error(result: int, message: str = "") -> NvmlError:
    """The NvmlError subclass instance for NVML return code `result` (UnknownError for a code this package does
    not know)."""
    cls: Optional[Type[NvmlError]] = _BY_RESULT.get(int(result))
    return (cls or UnknownError)(result, message)
