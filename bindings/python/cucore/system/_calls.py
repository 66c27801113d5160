"""cucore.system's C functions (include/cucore/system.h) and the checks that turn their failures into NVML's
errors: a failure NVML answered raises the NvmlError subclass of its return code (cucore_system_last_nvml_result),
one before NVML (a bad argument, a closed device) cucore's own error."""
from __future__ import annotations

import ctypes
from typing import Callable, List, NoReturn

from .. import _lib
from ..common import raise_error
from .exceptions import nvml_error

# Every C function of include/cucore/system.h this package calls.
NAMES = ("cucore_system_driver_version", "cucore_system_nvml_version", "cucore_system_cuda_driver_version",
            "cucore_system_device_count", "cucore_system_device_get", "cucore_system_device_get_by_uuid",
            "cucore_system_device_get_by_pci_bus_id", "cucore_system_device_get_for_device",
            "cucore_system_device_to_device", "cucore_system_device_retain", "cucore_system_device_release",
            "cucore_system_device_handle", "cucore_system_device_index", "cucore_system_device_name",
            "cucore_system_device_uuid", "cucore_system_device_pci_bus_id", "cucore_system_device_pci_info",
            "cucore_system_device_memory_info", "cucore_system_device_utilization", "cucore_system_device_temperature",
            "cucore_system_device_power_usage", "cucore_system_device_power_limit", "cucore_system_device_clock",
            "cucore_system_device_max_clock", "cucore_system_device_compute_mode", "cucore_system_device_processes",
            "cucore_system_last_nvml_result", "cucore_system_driver_branch", "cucore_system_process_name",
            "cucore_system_devices_with_cpu_affinity", "cucore_system_device_query", "cucore_system_device_text",
            "cucore_system_device_control", "cucore_system_device_related", "cucore_system_device_field_values",
            "cucore_system_device_clear_field_values", "cucore_system_device_p2p_status",
            "cucore_system_device_common_ancestor", "cucore_system_device_register_events",
            "cucore_system_device_wait_event", "cucore_system_register_events", "cucore_system_event_set_retain",
            "cucore_system_event_set_release", "cucore_system_event_set_wait")
(_cucore_system_driver_version, _cucore_system_nvml_version, _cucore_system_cuda_driver_version,
 _cucore_system_device_count, _cucore_system_device_get, _cucore_system_device_get_by_uuid,
 _cucore_system_device_get_by_pci_bus_id, _cucore_system_device_get_for_device, _cucore_system_device_to_device,
 _cucore_system_device_retain, _cucore_system_device_release, _cucore_system_device_handle,
 _cucore_system_device_index, _cucore_system_device_name, _cucore_system_device_uuid, _cucore_system_device_pci_bus_id,
 _cucore_system_device_pci_info, _cucore_system_device_memory_info, _cucore_system_device_utilization,
 _cucore_system_device_temperature, _cucore_system_device_power_usage, _cucore_system_device_power_limit,
 _cucore_system_device_clock, _cucore_system_device_max_clock, _cucore_system_device_compute_mode,
 _cucore_system_device_processes, _cucore_system_last_nvml_result, _cucore_system_driver_branch,
 _cucore_system_process_name, _cucore_system_devices_with_cpu_affinity, _cucore_system_device_query,
 _cucore_system_device_text, _cucore_system_device_control, _cucore_system_device_related,
 _cucore_system_device_field_values, _cucore_system_device_clear_field_values, _cucore_system_device_p2p_status,
 _cucore_system_device_common_ancestor, _cucore_system_device_register_events,
 _cucore_system_device_wait_event, _cucore_system_register_events, _cucore_system_event_set_retain,
 _cucore_system_event_set_release, _cucore_system_event_set_wait) = _lib.bind(globals(), *NAMES)
(_fast_system_device_release, _fast_system_event_set_release) = _lib.bind_unchecked(
    globals(), "cucore_system_device_release", "cucore_system_event_set_release")
(_cucore_device_ordinal, _cucore_device_release, _cucore_last_error_message) = _lib.bind(
    globals(), "cucore_device_ordinal", "cucore_device_release", "cucore_last_error_message")

_C = _lib.C
QUERY = {k[len("CUCORE_SYSTEM_QUERY_"):]: v for k, v in _C.items() if k.startswith("CUCORE_SYSTEM_QUERY_")}
TEXT = {k[len("CUCORE_SYSTEM_TEXT_"):]: v for k, v in _C.items() if k.startswith("CUCORE_SYSTEM_TEXT_")}
CONTROL = {k[len("CUCORE_SYSTEM_CONTROL_"):]: v for k, v in _C.items() if k.startswith("CUCORE_SYSTEM_CONTROL_")}
RELATION = {k[len("CUCORE_SYSTEM_RELATION_"):]: v for k, v in _C.items() if k.startswith("CUCORE_SYSTEM_RELATION_")}
FieldValueC = _lib.STRUCTS["cucore_system_field_value_t"]
EventC = _lib.STRUCTS["cucore_system_event_t"]


def fail(status: int, *objects: object) -> NoReturn:
    """Raise the error of a failed system call: NVML's exact error where NVML answered, else cucore's."""
    result = _cucore_system_last_nvml_result()
    if result:
        raise nvml_error(result, _cucore_last_error_message().decode("utf-8", "replace"))
    raise_error(status, *objects)


def text(fn: Callable, *args) -> str:
    """A text out of (buffer, capacity, length) function `fn(*args, buffer, capacity, length)`."""
    length = ctypes.c_size_t()
    st = fn(*args, None, 0, length)
    if st:
        fail(st)
    buffer = ctypes.create_string_buffer(length.value + 1)
    st = fn(*args, buffer, len(buffer), length)
    if st:
        fail(st)
    return buffer.value.decode("utf-8", "replace")


def query(h, which: str, arg0: int = 0, arg1: int = 0) -> List[int]:
    """cucore_system_device_query's values of query `which` ("ARCHITECTURE", ...): sized, then read (the
    variable-length ones may grow in between: read again until they fit)."""
    code = QUERY[which]
    count = ctypes.c_size_t()
    capacity = 64
    while True:
        values = (ctypes.c_int64 * capacity)()
        st = _cucore_system_device_query(h, code, arg0, arg1, values, capacity, count)
        if st:
            fail(st)
        if count.value <= capacity:
            return list(values[:count.value])
        capacity = count.value + 16


def device_text(h, which: str, arg: int = 0) -> str:
    """cucore_system_device_text of `which` ("SERIAL", ...)."""
    return text(_cucore_system_device_text, h, TEXT[which], arg)


def control(h, which: str, arg0: int = 0, arg1: int = 0) -> None:
    """cucore_system_device_control of `which` ("PERSISTENCE_MODE", ...)."""
    st = _cucore_system_device_control(h, CONTROL[which], arg0, arg1)
    if st:
        fail(st)


def handles(fn: Callable, *args) -> List[int]:
    """The new device handles (ints) of a (devices, capacity, count) function `fn(*args, devices, capacity,
    count)`; the caller owns each."""
    count = ctypes.c_size_t()
    capacity = 8
    while True:
        out = (ctypes.c_void_p * capacity)()
        st = fn(*args, out, capacity, count)
        if st:
            fail(st)
        got: List[int] = [h for h in (out[i] for i in range(min(count.value, capacity))) if h]
        if count.value <= capacity:
            return got
        for h in got:  # the list grew between the calls: give these back and read it again
            _fast_system_device_release(h)
        capacity = count.value + 8
