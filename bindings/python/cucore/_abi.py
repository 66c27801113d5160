"""The C ABI of libcucore as pure data: the one table the binding is set up from.

Every function the headers (include/cucore/*.h) export appears here as

    "cucore_name": (return type, (parameter type, ...)),

with C type spellings as in the header, `const` and parameter names dropped ("const cucore_device_t *device"
reads "cucore_device_t*"). _lib.py turns these spellings into ctypes types; scripts/check_bindings.py reads
this file with `ast` (without importing it) and proves that it matches the headers, function by function,
parameter by parameter. Keep it a literal: no imports, no computed values.
"""

# Handle types (opaque structs used through pointers).
HANDLE_TYPES = ("cucore_device_t", "cucore_context_t", "cucore_stream_t", "cucore_event_t",
                "cucore_memory_resource_t", "cucore_buffer_t")

# Plain enums (all int-sized in the C ABI: each has a FORCE_INT32 member).
ENUM_TYPES = ("cucore_status_t", "cucore_object_type_t", "cucore_device_attribute_t",
              "cucore_memory_resource_kind_t", "cucore_pool_attribute_t")

# Structs passed by pointer: name -> ((field, C type), ...), in declaration order.
STRUCTS = {
    "cucore_uuid_t": (("bytes", "unsigned char[16]"),),
    "cucore_stream_options_t": (("struct_size", "uint32_t"), ("flags", "uint32_t"), ("priority", "int32_t")),
    "cucore_event_options_t": (("struct_size", "uint32_t"), ("flags", "uint32_t")),
    "cucore_device_memory_resource_options_t": (
        ("struct_size", "uint32_t"),
        ("reserved0", "uint32_t"),
        ("max_size", "uint64_t"),
        ("release_threshold", "uint64_t"),
    ),
    "cucore_device_properties_t": (
        ("struct_size", "uint32_t"),
        ("ordinal", "int"),
        ("compute_capability_major", "int"),
        ("compute_capability_minor", "int"),
        ("multiprocessor_count", "int"),
        ("max_threads_per_block", "int"),
        ("max_threads_per_multiprocessor", "int"),
        ("warp_size", "int"),
        ("max_shared_memory_per_block", "int"),
        ("max_shared_memory_per_multiprocessor", "int"),
        ("l2_cache_size", "int"),
        ("clock_rate_khz", "int"),
        ("memory_clock_rate_khz", "int"),
        ("memory_bus_width", "int"),
        ("pci_domain_id", "int"),
        ("pci_bus_id", "int"),
        ("pci_device_id", "int"),
        ("integrated", "int"),
        ("concurrent_managed_access", "int"),
        ("memory_pools_supported", "int"),
        ("cooperative_launch", "int"),
        ("unified_addressing", "int"),
        ("total_memory", "uint64_t"),
    ),
}

# Function-pointer typedefs: name -> (return type, (parameter type, ...)).
CALLBACKS = {
    "cucore_release_fn": ("void", ("void*",)),
    "cucore_release_error_fn": ("void", ("cucore_status_t", "int", "char*", "void*")),
    "cucore_host_fn": ("void", ("void*",)),
}

# Every exported function.
ABI = {
    # ---- include/cucore/common.h ----
    "cucore_version": ("uint32_t", ()),
    "cucore_version_string": ("char*", ()),
    "cucore_status_string": ("char*", ("cucore_status_t",)),
    "cucore_last_error_message": ("char*", ()),
    "cucore_last_cuda_result": ("int", ()),
    "cucore_last_error_status": ("cucore_status_t", ()),
    "cucore_clear_last_error": ("void", ()),
    "cucore_object_type_name": ("char*", ("cucore_object_type_t",)),
    "cucore_live_object_count": ("cucore_status_t", ("cucore_object_type_t", "size_t*")),
    "cucore_release_error_count": ("cucore_status_t", ("uint64_t*",)),
    "cucore_set_release_error_handler": ("void", ("cucore_release_error_fn", "void*")),
    # ---- include/cucore/device.h ----
    "cucore_driver_version": ("cucore_status_t", ("int*",)),
    "cucore_device_count": ("cucore_status_t", ("int*",)),
    "cucore_device_get": ("cucore_status_t", ("int", "cucore_device_t**")),
    "cucore_device_get_current": ("cucore_status_t", ("cucore_device_t**",)),
    "cucore_device_retain": ("cucore_status_t", ("cucore_device_t*",)),
    "cucore_device_release": ("cucore_status_t", ("cucore_device_t*",)),
    "cucore_device_ordinal": ("cucore_status_t", ("cucore_device_t*", "int*")),
    "cucore_device_handle": ("cucore_status_t", ("cucore_device_t*", "int*")),
    "cucore_device_name": ("cucore_status_t", ("cucore_device_t*", "char**")),
    "cucore_device_pci_bus_id": ("cucore_status_t", ("cucore_device_t*", "char**")),
    "cucore_device_uuid": ("cucore_status_t", ("cucore_device_t*", "cucore_uuid_t*")),
    "cucore_device_compute_capability": ("cucore_status_t", ("cucore_device_t*", "int*", "int*")),
    "cucore_device_total_memory": ("cucore_status_t", ("cucore_device_t*", "uint64_t*")),
    "cucore_device_attribute": ("cucore_status_t", ("cucore_device_t*", "cucore_device_attribute_t", "int*")),
    "cucore_device_properties": ("cucore_status_t", ("cucore_device_t*", "cucore_device_properties_t*")),
    "cucore_device_set_current": ("cucore_status_t", ("cucore_device_t*",)),
    "cucore_device_synchronize": ("cucore_status_t", ("cucore_device_t*",)),
    "cucore_device_can_access_peer": ("cucore_status_t", ("cucore_device_t*", "cucore_device_t*", "int*")),
    # ---- include/cucore/context.h ----
    "cucore_context_get_primary": ("cucore_status_t", ("cucore_device_t*", "cucore_context_t**")),
    "cucore_context_from_handle": ("cucore_status_t", ("void*", "cucore_release_fn", "void*", "cucore_context_t**")),
    "cucore_context_retain": ("cucore_status_t", ("cucore_context_t*",)),
    "cucore_context_release": ("cucore_status_t", ("cucore_context_t*",)),
    "cucore_context_handle": ("cucore_status_t", ("cucore_context_t*", "void**")),
    "cucore_context_device": ("cucore_status_t", ("cucore_context_t*", "cucore_device_t**")),
    "cucore_context_is_primary": ("cucore_status_t", ("cucore_context_t*", "int*")),
    "cucore_context_set_current": ("cucore_status_t", ("cucore_context_t*",)),
    "cucore_context_synchronize": ("cucore_status_t", ("cucore_context_t*",)),
    # ---- include/cucore/stream.h ----
    "cucore_stream_create": ("cucore_status_t", ("cucore_device_t*", "cucore_stream_options_t*", "cucore_stream_t**")),
    "cucore_stream_create_in_context": ("cucore_status_t", ("cucore_context_t*", "cucore_stream_options_t*", "cucore_stream_t**")),
    "cucore_stream_get_legacy_default": ("cucore_status_t", ("cucore_device_t*", "cucore_stream_t**")),
    "cucore_stream_get_per_thread_default": ("cucore_status_t", ("cucore_device_t*", "cucore_stream_t**")),
    "cucore_stream_from_handle": ("cucore_status_t", ("void*", "cucore_release_fn", "void*", "cucore_stream_t**")),
    "cucore_stream_retain": ("cucore_status_t", ("cucore_stream_t*",)),
    "cucore_stream_release": ("cucore_status_t", ("cucore_stream_t*",)),
    "cucore_stream_synchronize": ("cucore_status_t", ("cucore_stream_t*",)),
    "cucore_stream_query": ("cucore_status_t", ("cucore_stream_t*", "int*")),
    "cucore_stream_wait_event": ("cucore_status_t", ("cucore_stream_t*", "cucore_event_t*")),
    "cucore_stream_wait_stream": ("cucore_status_t", ("cucore_stream_t*", "cucore_stream_t*")),
    "cucore_stream_record": ("cucore_status_t", ("cucore_stream_t*", "cucore_event_options_t*", "cucore_event_t**")),
    "cucore_stream_launch_host_func": ("cucore_status_t", ("cucore_stream_t*", "cucore_host_fn", "void*")),
    "cucore_stream_device": ("cucore_status_t", ("cucore_stream_t*", "cucore_device_t**")),
    "cucore_stream_context": ("cucore_status_t", ("cucore_stream_t*", "cucore_context_t**")),
    "cucore_stream_priority": ("cucore_status_t", ("cucore_stream_t*", "int*")),
    "cucore_stream_flags": ("cucore_status_t", ("cucore_stream_t*", "uint32_t*")),
    "cucore_stream_is_owned": ("cucore_status_t", ("cucore_stream_t*", "int*")),
    "cucore_stream_handle": ("cucore_status_t", ("cucore_stream_t*", "void**")),
    "cucore_stream_priority_range": ("cucore_status_t", ("cucore_device_t*", "int*", "int*")),
    # ---- include/cucore/event.h ----
    "cucore_event_create": ("cucore_status_t", ("cucore_device_t*", "cucore_event_options_t*", "cucore_event_t**")),
    "cucore_event_create_in_context": ("cucore_status_t", ("cucore_context_t*", "cucore_event_options_t*", "cucore_event_t**")),
    "cucore_event_from_handle": ("cucore_status_t", ("void*", "cucore_release_fn", "void*", "cucore_event_t**")),
    "cucore_event_retain": ("cucore_status_t", ("cucore_event_t*",)),
    "cucore_event_release": ("cucore_status_t", ("cucore_event_t*",)),
    "cucore_event_record": ("cucore_status_t", ("cucore_event_t*", "cucore_stream_t*")),
    "cucore_event_synchronize": ("cucore_status_t", ("cucore_event_t*",)),
    "cucore_event_query": ("cucore_status_t", ("cucore_event_t*", "int*")),
    "cucore_event_elapsed_time": ("cucore_status_t", ("cucore_event_t*", "cucore_event_t*", "float*")),
    "cucore_event_flags": ("cucore_status_t", ("cucore_event_t*", "uint32_t*")),
    "cucore_event_device": ("cucore_status_t", ("cucore_event_t*", "cucore_device_t**")),
    "cucore_event_context": ("cucore_status_t", ("cucore_event_t*", "cucore_context_t**")),
    "cucore_event_handle": ("cucore_status_t", ("cucore_event_t*", "void**")),
    # ---- include/cucore/memory.h ----
    "cucore_device_memory_resource_get_default": ("cucore_status_t", ("cucore_device_t*", "cucore_memory_resource_t**")),
    "cucore_device_memory_resource_create": ("cucore_status_t", ("cucore_device_t*", "cucore_device_memory_resource_options_t*", "cucore_memory_resource_t**")),
    "cucore_legacy_pinned_memory_resource_create": ("cucore_status_t", ("cucore_device_t*", "cucore_memory_resource_t**")),
    "cucore_memory_resource_retain": ("cucore_status_t", ("cucore_memory_resource_t*",)),
    "cucore_memory_resource_release": ("cucore_status_t", ("cucore_memory_resource_t*",)),
    "cucore_memory_resource_allocate": ("cucore_status_t", ("cucore_memory_resource_t*", "uint64_t", "cucore_stream_t*", "cucore_buffer_t**")),
    "cucore_device_memory_resource": ("cucore_status_t", ("cucore_device_t*", "cucore_memory_resource_t**")),
    "cucore_device_set_memory_resource": ("cucore_status_t", ("cucore_device_t*", "cucore_memory_resource_t*")),
    "cucore_device_allocate": ("cucore_status_t", ("cucore_device_t*", "uint64_t", "cucore_stream_t*", "cucore_buffer_t**")),
    "cucore_memory_resource_handle": ("cucore_status_t", ("cucore_memory_resource_t*", "void**")),
    "cucore_memory_resource_pool_attribute": ("cucore_status_t", ("cucore_memory_resource_t*", "cucore_pool_attribute_t", "uint64_t*")),
    "cucore_memory_resource_set_pool_attribute": ("cucore_status_t", ("cucore_memory_resource_t*", "cucore_pool_attribute_t", "uint64_t")),
    "cucore_memory_resource_trim": ("cucore_status_t", ("cucore_memory_resource_t*", "uint64_t")),
    "cucore_memory_resource_kind": ("cucore_status_t", ("cucore_memory_resource_t*", "cucore_memory_resource_kind_t*")),
    "cucore_memory_resource_device_id": ("cucore_status_t", ("cucore_memory_resource_t*", "int*")),
    "cucore_memory_resource_accessibility": ("cucore_status_t", ("cucore_memory_resource_t*", "int*", "int*")),
    "cucore_buffer_from_handle": ("cucore_status_t", ("uint64_t", "uint64_t", "cucore_device_t*", "cucore_release_fn", "void*", "cucore_buffer_t**")),
    "cucore_buffer_retain": ("cucore_status_t", ("cucore_buffer_t*",)),
    "cucore_buffer_release": ("cucore_status_t", ("cucore_buffer_t*",)),
    "cucore_buffer_close": ("cucore_status_t", ("cucore_buffer_t*", "cucore_stream_t*")),
    "cucore_buffer_set_deallocation_stream": ("cucore_status_t", ("cucore_buffer_t*", "cucore_stream_t*")),
    "cucore_buffer_size": ("cucore_status_t", ("cucore_buffer_t*", "uint64_t*")),
    "cucore_buffer_address": ("cucore_status_t", ("cucore_buffer_t*", "uint64_t*")),
    "cucore_buffer_device_id": ("cucore_status_t", ("cucore_buffer_t*", "int*")),
    "cucore_buffer_memory_resource": ("cucore_status_t", ("cucore_buffer_t*", "cucore_memory_resource_t**")),
    "cucore_buffer_view": ("cucore_status_t", ("cucore_buffer_t*", "uint64_t", "uint64_t", "cucore_buffer_t**")),
    "cucore_buffer_copy": ("cucore_status_t", ("cucore_buffer_t*", "cucore_buffer_t*", "cucore_stream_t*")),
    "cucore_buffer_copy_from_host": ("cucore_status_t", ("cucore_buffer_t*", "uint64_t", "void*", "uint64_t", "cucore_stream_t*")),
    "cucore_buffer_copy_to_host": ("cucore_status_t", ("cucore_buffer_t*", "uint64_t", "void*", "uint64_t", "cucore_stream_t*")),
    "cucore_buffer_fill": ("cucore_status_t", ("cucore_buffer_t*", "uint32_t", "uint32_t", "cucore_stream_t*")),
}
