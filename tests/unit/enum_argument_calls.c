/* See enum_argument_calls.h. Each value is built with memcpy from the int32_t,
 * as its bytes: every cucore enum is 4 bytes (a FORCE_INT32 member). */
#include "enum_argument_calls.h"

#include <string.h>

#define AS_ENUM(type, name, raw) \
    type name;                   \
    memcpy(&name, &raw, sizeof name)

typedef char cucore_enums_are_int32[sizeof(cucore_code_type_t) == sizeof(int32_t) ? 1 : -1];

const char *enum_call_status_string(int32_t raw) {
    AS_ENUM(cucore_status_t, status, raw);
    return cucore_status_string(status);
}
const char *enum_call_object_type_name(int32_t raw) {
    AS_ENUM(cucore_object_type_t, type, raw);
    return cucore_object_type_name(type);
}
cucore_status_t enum_call_live_object_count(int32_t raw, size_t *count) {
    AS_ENUM(cucore_object_type_t, type, raw);
    return cucore_live_object_count(type, count);
}
void enum_call_report_release_error(int32_t raw, const char *message) {
    AS_ENUM(cucore_status_t, status, raw);
    cucore_report_release_error(status, 0, message);
}
cucore_status_t enum_call_device_attribute(const cucore_device_t *device, int32_t raw, int *value) {
    AS_ENUM(cucore_device_attribute_t, attribute, raw);
    return cucore_device_attribute(device, attribute, value);
}
cucore_status_t enum_call_kernel_attribute(cucore_kernel_t *kernel, cucore_device_t *device, int32_t raw,
                                           int *value) {
    AS_ENUM(cucore_kernel_attribute_t, attribute, raw);
    return cucore_kernel_attribute(kernel, device, attribute, value);
}
cucore_status_t enum_call_kernel_set_attribute(cucore_kernel_t *kernel, cucore_device_t *device, int32_t raw,
                                               int value) {
    AS_ENUM(cucore_kernel_attribute_t, attribute, raw);
    return cucore_kernel_set_attribute(kernel, device, attribute, value);
}
cucore_status_t enum_call_linker_link(cucore_linker_t *linker, int32_t raw, cucore_object_code_t **object_code) {
    AS_ENUM(cucore_code_type_t, target, raw);
    return cucore_linker_link(linker, target, object_code);
}
cucore_status_t enum_call_buffer_advise(cucore_buffer_t *buffer, int32_t raw, cucore_location_t location) {
    AS_ENUM(cucore_memory_advice_t, advice, raw);
    return cucore_buffer_advise(buffer, advice, location);
}
cucore_status_t enum_call_pool_attribute(const cucore_memory_resource_t *resource, int32_t raw, uint64_t *value) {
    AS_ENUM(cucore_pool_attribute_t, attribute, raw);
    return cucore_memory_resource_pool_attribute(resource, attribute, value);
}
cucore_status_t enum_call_set_pool_attribute(cucore_memory_resource_t *resource, int32_t raw, uint64_t value) {
    AS_ENUM(cucore_pool_attribute_t, attribute, raw);
    return cucore_memory_resource_set_pool_attribute(resource, attribute, value);
}
cucore_status_t enum_call_set_peer_access(cucore_memory_resource_t *resource, cucore_device_t *peer, int32_t raw) {
    AS_ENUM(cucore_access_t, access, raw);
    return cucore_memory_resource_set_peer_access(resource, peer, access);
}
cucore_status_t enum_call_object_code_create(const void *data, size_t size, int32_t raw,
                                             cucore_object_code_t **object_code) {
    AS_ENUM(cucore_code_type_t, code_type, raw);
    return cucore_object_code_create(data, size, code_type, NULL, object_code);
}
cucore_status_t enum_call_object_code_create_from_file(const char *path, int32_t raw,
                                                       cucore_object_code_t **object_code) {
    AS_ENUM(cucore_code_type_t, code_type, raw);
    return cucore_object_code_create_from_file(path, code_type, NULL, object_code);
}
cucore_status_t enum_call_program_create(const char *code, int32_t raw, cucore_program_t **program) {
    AS_ENUM(cucore_code_type_t, code_type, raw);
    return cucore_program_create(code, 0, code_type, NULL, program);
}
cucore_status_t enum_call_program_compile(cucore_program_t *program, int32_t raw,
                                          cucore_object_code_t **object_code) {
    AS_ENUM(cucore_code_type_t, target, raw);
    return cucore_program_compile(program, target, NULL, 0, NULL, object_code);
}
cucore_status_t enum_call_compiler_version(int32_t raw, int *version) {
    AS_ENUM(cucore_compiler_backend_t, backend, raw);
    return cucore_compiler_version(backend, version);
}
cucore_status_t enum_call_program_cache_key(const cucore_program_t *program, int32_t raw, uint8_t key[32]) {
    AS_ENUM(cucore_code_type_t, target, raw);
    return cucore_program_cache_key(program, target, NULL, 0, key);
}
cucore_status_t enum_call_graph_builder_begin_building(cucore_graph_builder_t *builder, int32_t raw) {
    AS_ENUM(cucore_capture_mode_t, mode, raw);
    return cucore_graph_builder_begin_building(builder, mode);
}
cucore_status_t enum_call_graph_definition_add_conditional(cucore_graph_definition_t *definition, uint64_t condition,
                                                           int32_t raw, cucore_graph_definition_t **body,
                                                           cucore_graph_node_t **node) {
    AS_ENUM(cucore_graph_conditional_type_t, type, raw);
    return cucore_graph_definition_add_conditional(definition, NULL, 0, condition, type, 1, body, node);
}
cucore_status_t enum_call_graph_builder_add_conditional(cucore_graph_builder_t *builder, uint64_t condition,
                                                        int32_t raw, cucore_graph_builder_t **body) {
    AS_ENUM(cucore_graph_conditional_type_t, type, raw);
    return cucore_graph_builder_add_conditional(builder, condition, type, 1, body);
}
cucore_status_t enum_call_graph_memory_resource_attribute(const cucore_memory_resource_t *resource, int32_t raw,
                                                          uint64_t *value) {
    AS_ENUM(cucore_graph_memory_attribute_t, attribute, raw);
    return cucore_graph_memory_resource_attribute(resource, attribute, value);
}
cucore_status_t enum_call_graph_memory_resource_reset_attribute(cucore_memory_resource_t *resource, int32_t raw) {
    AS_ENUM(cucore_graph_memory_attribute_t, attribute, raw);
    return cucore_graph_memory_resource_reset_attribute(resource, attribute);
}
cucore_status_t enum_call_stream_memory_barrier(cucore_stream_t *stream, int32_t raw) {
    AS_ENUM(cucore_memory_barrier_scope_t, scope, raw);
    return cucore_stream_memory_barrier(stream, scope);
}
