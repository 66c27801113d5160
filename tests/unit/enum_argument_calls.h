/* Calls of the C ABI functions that take an enum parameter, with any int32_t
 * as that enum: what a C caller may pass (C converts any int to an enum type).
 * They are made in C (enum_argument_calls.c), so that no C++ test code ever
 * holds an out-of-range value as a C++ enum, which would itself be undefined
 * behaviour; the library must read such values without it. */
#ifndef CUCORE_TEST_ENUM_ARGUMENT_CALLS_H
#define CUCORE_TEST_ENUM_ARGUMENT_CALLS_H

#include "cucore.h"

#ifdef __cplusplus
extern "C" {
#endif

const char *enum_call_status_string(int32_t status);
const char *enum_call_object_type_name(int32_t type);
cucore_status_t enum_call_live_object_count(int32_t type, size_t *count);
void enum_call_report_release_error(int32_t status, const char *message);
cucore_status_t enum_call_device_attribute(const cucore_device_t *device, int32_t attribute, int *value);
cucore_status_t enum_call_kernel_attribute(cucore_kernel_t *kernel, cucore_device_t *device, int32_t attribute,
                                           int *value);
cucore_status_t enum_call_kernel_set_attribute(cucore_kernel_t *kernel, cucore_device_t *device, int32_t attribute,
                                               int value);
cucore_status_t enum_call_linker_link(cucore_linker_t *linker, int32_t target, cucore_object_code_t **object_code);
cucore_status_t enum_call_buffer_advise(cucore_buffer_t *buffer, int32_t advice, cucore_location_t location);
cucore_status_t enum_call_pool_attribute(const cucore_memory_resource_t *resource, int32_t attribute,
                                         uint64_t *value);
cucore_status_t enum_call_set_pool_attribute(cucore_memory_resource_t *resource, int32_t attribute, uint64_t value);
cucore_status_t enum_call_set_peer_access(cucore_memory_resource_t *resource, cucore_device_t *peer, int32_t access);
cucore_status_t enum_call_object_code_create(const void *data, size_t size, int32_t code_type,
                                             cucore_object_code_t **object_code);
cucore_status_t enum_call_object_code_create_from_file(const char *path, int32_t code_type,
                                                       cucore_object_code_t **object_code);
cucore_status_t enum_call_program_create(const char *code, int32_t code_type, cucore_program_t **program);
cucore_status_t enum_call_program_compile(cucore_program_t *program, int32_t target,
                                          cucore_object_code_t **object_code);
cucore_status_t enum_call_compiler_version(int32_t backend, int *version);
cucore_status_t enum_call_program_cache_key(const cucore_program_t *program, int32_t target, uint8_t key[32]);
cucore_status_t enum_call_graph_builder_begin_building(cucore_graph_builder_t *builder, int32_t mode);
cucore_status_t enum_call_graph_definition_add_conditional(cucore_graph_definition_t *definition, uint64_t condition,
                                                           int32_t type, cucore_graph_definition_t **body,
                                                           cucore_graph_node_t **node);
cucore_status_t enum_call_graph_builder_add_conditional(cucore_graph_builder_t *builder, uint64_t condition,
                                                        int32_t type, cucore_graph_builder_t **body);
cucore_status_t enum_call_graph_memory_resource_attribute(const cucore_memory_resource_t *resource,
                                                          int32_t attribute, uint64_t *value);
cucore_status_t enum_call_graph_memory_resource_reset_attribute(cucore_memory_resource_t *resource,
                                                                int32_t attribute);
cucore_status_t enum_call_stream_memory_barrier(cucore_stream_t *stream, int32_t scope);

#ifdef __cplusplus
}
#endif

#endif
