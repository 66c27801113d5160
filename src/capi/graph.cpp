// C ABI: graph definitions, graph nodes and executable graphs.
#include "capi/capi.hpp"
#include "capi/graph_args.hpp"
#include "capi/copy_side.hpp"
#include "capi/launch_args.hpp"
#include "core/graph.hpp"
#include "core/graph_attachments.hpp"

using namespace cucore;

namespace {

constexpr cucore_graph_alloc_options_t kAllocDefaults = CUCORE_GRAPH_ALLOC_OPTIONS_INIT;

std::vector<core::GraphNode *> dependencies_of(cucore_graph_node_t *const *dependencies, size_t count) {
    return capi::get_all(dependencies, count, "dependencies");
}

core::KernelRequest kernel_request(const cucore_launch_config_t *config, cucore_kernel_t *kernel, bool kernel_optional,
                                   const void *const *args, const size_t *arg_sizes, size_t arg_count,
                                   cucore_launch_config_t &resolved) {
    resolved = capi::read_config(config);
    capi::check_args(args, arg_sizes, arg_count);
    core::KernelRequest request;
    request.config = &resolved;
    request.kernel = kernel_optional ? capi::get_optional(kernel, "kernel") : &capi::get(kernel, "kernel");
    request.args = args;
    request.arg_sizes = arg_sizes;
    request.arg_count = arg_count;
    return request;
}

core::MemcpyRequest memcpy_request(cucore_buffer_t *dst, uint64_t dst_offset, cucore_buffer_t *src,
                                   uint64_t src_offset, uint64_t size) {
    core::MemcpyRequest request;
    request.dst = &capi::get(dst, "dst");
    request.dst_offset = dst_offset;
    request.src = &capi::get(src, "src");
    request.src_offset = src_offset;
    request.size = size;
    return request;
}

core::MemsetRequest memset_request(cucore_buffer_t *buffer, uint64_t offset, uint32_t value, uint32_t element_size,
                                   uint64_t width, uint64_t height, uint64_t pitch) {
    core::MemsetRequest request;
    request.buffer = &capi::get(buffer, "buffer");
    request.offset = offset;
    request.value = value;
    request.element_size = element_size;
    request.width = width;
    request.height = height;
    request.pitch = pitch;
    return request;
}

// Runs `body` with the closure released if anything before the core call throws.
template <class Body>
void with_closure(const core::HostClosure &closure, Body body) {
    bool handed = false;
    try {
        body(handed);
    } catch (...) {
        if (!handed) core::release_closure(closure);
        throw;
    }
}

}  // namespace

extern "C" {

// ---- definitions --------------------------------------------------------------------

cucore_status_t cucore_graph_definition_create(cucore_device_t *device, cucore_graph_definition_t **definition) {
    return capi::guarded(__func__, [&] {
        cucore_graph_definition_t *&result = capi::out(definition, "definition");
        core::Device &owner = capi::get(device, "device");
        result = capi::give<cucore_graph_definition_t>(core::GraphDefinition::create(owner.primary_context()));
    });
}

cucore_status_t cucore_graph_definition_handle(const cucore_graph_definition_t *definition, void **cu_graph) {
    return capi::guarded(__func__, [&] {
        void *&result = capi::out(cu_graph, "cu_graph");
        result = capi::get(definition, "definition").cu();
    });
}

cucore_status_t cucore_graph_definition_device(const cucore_graph_definition_t *definition,
                                               cucore_device_t **device) {
    return capi::guarded(__func__, [&] {
        cucore_device_t *&result = capi::out(device, "device");
        result = capi::give<cucore_device_t>(capi::get(definition, "definition").context().device_ref());
    });
}

cucore_status_t cucore_graph_definition_is_owned(const cucore_graph_definition_t *definition, int *owned) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(owned, "owned");
        result = capi::get(definition, "definition").owned() ? 1 : 0;
    });
}

cucore_status_t cucore_graph_definition_clone(cucore_graph_definition_t *definition,
                                              cucore_graph_definition_t **clone) {
    return capi::guarded(__func__, [&] {
        cucore_graph_definition_t *&result = capi::out(clone, "clone");
        result = capi::give<cucore_graph_definition_t>(capi::get(definition, "definition").clone());
    });
}

cucore_status_t cucore_graph_definition_debug_dot_print(cucore_graph_definition_t *definition, const char *path,
                                                        uint32_t flags) {
    return capi::guarded(__func__, [&] {
        core::GraphDefinition &object = capi::get(definition, "definition");
        capi::check_dot_arguments(path, flags);
        object.debug_dot_print(path, flags);
    });
}

cucore_status_t cucore_graph_definition_nodes(cucore_graph_definition_t *definition, cucore_graph_node_t **nodes,
                                              size_t capacity, size_t *count) {
    return capi::guarded(__func__, [&] {
        size_t &total = capi::out(count, "count");
        capi::give_list(capi::get(definition, "definition").nodes(), nodes, capacity, total, "nodes");
    });
}

cucore_status_t cucore_graph_definition_edges(cucore_graph_definition_t *definition, cucore_graph_node_t **from,
                                              cucore_graph_node_t **to, size_t capacity, size_t *count) {
    return capi::guarded(__func__, [&] {
        size_t &total = capi::out(count, "count");
        capi::require_array(from, capacity, "from", "capacity");
        capi::require_array(to, capacity, "to", "capacity");
        std::vector<core::Ref<core::GraphNode>> sources, targets;
        capi::get(definition, "definition").edges(sources, targets);
        const size_t given = sources.size() < capacity ? sources.size() : capacity;
        for (size_t i = 0; i < given; ++i) {
            from[i] = capi::give<cucore_graph_node_t>(std::move(sources[i]));
            to[i] = capi::give<cucore_graph_node_t>(std::move(targets[i]));
        }
        total = sources.size();
    });
}

cucore_status_t cucore_graph_definition_instantiate(cucore_graph_definition_t *definition,
                                                    const cucore_graph_complete_options_t *options,
                                                    cucore_graph_t **graph) {
    return capi::guarded(__func__, [&] {
        cucore_graph_t *&result = capi::out(graph, "graph");
        core::GraphDefinition &object = capi::get(definition, "definition");
        core::Stream *upload = nullptr;
        const cucore_graph_complete_options_t resolved = capi::read_complete_options(options, upload);
        result = capi::give<cucore_graph_t>(object.instantiate(resolved.flags, upload));
    });
}

cucore_status_t cucore_graph_definition_create_condition(cucore_graph_definition_t *definition,
                                                         uint32_t default_value, uint32_t flags,
                                                         uint64_t *condition) {
    return capi::guarded(__func__, [&] {
        uint64_t &result = capi::out(condition, "condition");
        core::GraphDefinition &object = capi::get(definition, "definition");
        capi::check_flags(flags, CUCORE_GRAPH_CONDITION_SET_DEFAULT, "flags");
        result = object.create_condition(default_value, flags);
    });
}

// ---- adding nodes -----------------------------------------------------------------------

cucore_status_t cucore_graph_definition_add_empty(cucore_graph_definition_t *definition,
                                                  cucore_graph_node_t *const *dependencies, size_t dependency_count,
                                                  cucore_graph_node_t **node) {
    return capi::guarded(__func__, [&] {
        cucore_graph_node_t *&result = capi::out(node, "node");
        core::GraphDefinition &object = capi::get(definition, "definition");
        result = capi::give<cucore_graph_node_t>(object.add_empty(dependencies_of(dependencies, dependency_count)));
    });
}

cucore_status_t cucore_graph_definition_add_kernel(cucore_graph_definition_t *definition,
                                                   cucore_graph_node_t *const *dependencies, size_t dependency_count,
                                                   const cucore_launch_config_t *config, cucore_kernel_t *kernel,
                                                   const void *const *args, const size_t *arg_sizes,
                                                   size_t arg_count, cucore_graph_node_t **node) {
    return capi::guarded(__func__, [&] {
        cucore_graph_node_t *&result = capi::out(node, "node");
        core::GraphDefinition &object = capi::get(definition, "definition");
        const auto deps = dependencies_of(dependencies, dependency_count);
        cucore_launch_config_t resolved;
        const core::KernelRequest request = kernel_request(config, kernel, false, args, arg_sizes, arg_count, resolved);
        result = capi::give<cucore_graph_node_t>(object.add_kernel(deps, request));
    });
}

cucore_status_t cucore_graph_definition_add_memcpy(cucore_graph_definition_t *definition,
                                                   cucore_graph_node_t *const *dependencies, size_t dependency_count,
                                                   cucore_buffer_t *dst, uint64_t dst_offset, cucore_buffer_t *src,
                                                   uint64_t src_offset, uint64_t size, cucore_graph_node_t **node) {
    return capi::guarded(__func__, [&] {
        cucore_graph_node_t *&result = capi::out(node, "node");
        core::GraphDefinition &object = capi::get(definition, "definition");
        const auto deps = dependencies_of(dependencies, dependency_count);
        result = capi::give<cucore_graph_node_t>(
            object.add_memcpy(deps, memcpy_request(dst, dst_offset, src, src_offset, size)));
    });
}

cucore_status_t cucore_graph_definition_add_memcpy_3d(cucore_graph_definition_t *definition,
                                                      cucore_graph_node_t *const *dependencies,
                                                      size_t dependency_count, const cucore_copy_3d_t *copy,
                                                      cucore_graph_node_t **node) {
    return capi::guarded(__func__, [&] {
        cucore_graph_node_t *&result = capi::out(node, "node");
        core::GraphDefinition &object = capi::get(definition, "definition");
        const auto deps = dependencies_of(dependencies, dependency_count);
        const cucore_copy_3d_t resolved = capi::read_copy_3d(copy);
        const core::CopySide source = capi::copy_side(resolved.src, "copy.src.buffer", "src");
        const core::CopySide destination = capi::copy_side(resolved.dst, "copy.dst.buffer", "dst");
        result = capi::give<cucore_graph_node_t>(
            object.add_memcpy_3d(deps, source, destination, resolved.width, resolved.rows, resolved.depth));
    });
}

cucore_status_t cucore_graph_definition_add_memset(cucore_graph_definition_t *definition,
                                                   cucore_graph_node_t *const *dependencies, size_t dependency_count,
                                                   cucore_buffer_t *buffer, uint64_t offset, uint32_t value,
                                                   uint32_t element_size, uint64_t width, uint64_t height,
                                                   uint64_t pitch, cucore_graph_node_t **node) {
    return capi::guarded(__func__, [&] {
        cucore_graph_node_t *&result = capi::out(node, "node");
        core::GraphDefinition &object = capi::get(definition, "definition");
        const auto deps = dependencies_of(dependencies, dependency_count);
        result = capi::give<cucore_graph_node_t>(
            object.add_memset(deps, memset_request(buffer, offset, value, element_size, width, height, pitch)));
    });
}

cucore_status_t cucore_graph_definition_add_host_callback(cucore_graph_definition_t *definition,
                                                          cucore_graph_node_t *const *dependencies,
                                                          size_t dependency_count, cucore_host_fn fn, void *user_data,
                                                          cucore_release_fn release, cucore_graph_node_t **node) {
    const core::HostClosure closure{fn, user_data, release};
    return capi::guarded(__func__, [&] {
        with_closure(closure, [&](bool &handed) {
            cucore_graph_node_t *&result = capi::out(node, "node");
            core::GraphDefinition &object = capi::get(definition, "definition");
            if (!fn) core::throw_invalid_argument("argument 'fn' is NULL");
            const auto deps = dependencies_of(dependencies, dependency_count);
            handed = true;  // the core releases it from here
            result = capi::give<cucore_graph_node_t>(object.add_host_callback(deps, closure));
        });
    });
}

cucore_status_t cucore_graph_definition_add_event_record(cucore_graph_definition_t *definition,
                                                         cucore_graph_node_t *const *dependencies,
                                                         size_t dependency_count, cucore_event_t *event,
                                                         cucore_graph_node_t **node) {
    return capi::guarded(__func__, [&] {
        cucore_graph_node_t *&result = capi::out(node, "node");
        core::GraphDefinition &object = capi::get(definition, "definition");
        const auto deps = dependencies_of(dependencies, dependency_count);
        result = capi::give<cucore_graph_node_t>(object.add_event_record(deps, capi::get(event, "event")));
    });
}

cucore_status_t cucore_graph_definition_add_event_wait(cucore_graph_definition_t *definition,
                                                       cucore_graph_node_t *const *dependencies,
                                                       size_t dependency_count, cucore_event_t *event,
                                                       cucore_graph_node_t **node) {
    return capi::guarded(__func__, [&] {
        cucore_graph_node_t *&result = capi::out(node, "node");
        core::GraphDefinition &object = capi::get(definition, "definition");
        const auto deps = dependencies_of(dependencies, dependency_count);
        result = capi::give<cucore_graph_node_t>(object.add_event_wait(deps, capi::get(event, "event")));
    });
}

cucore_status_t cucore_graph_definition_add_child_graph(cucore_graph_definition_t *definition,
                                                        cucore_graph_node_t *const *dependencies,
                                                        size_t dependency_count, cucore_graph_definition_t *child,
                                                        cucore_graph_node_t **node) {
    return capi::guarded(__func__, [&] {
        cucore_graph_node_t *&result = capi::out(node, "node");
        core::GraphDefinition &object = capi::get(definition, "definition");
        const auto deps = dependencies_of(dependencies, dependency_count);
        result = capi::give<cucore_graph_node_t>(object.add_child_graph(deps, capi::get(child, "child")));
    });
}

cucore_status_t cucore_graph_definition_add_alloc(cucore_graph_definition_t *definition,
                                                  cucore_graph_node_t *const *dependencies, size_t dependency_count,
                                                  uint64_t size, const cucore_graph_alloc_options_t *options,
                                                  cucore_graph_node_t **node, uint64_t *address) {
    return capi::guarded(__func__, [&] {
        cucore_graph_node_t *&result = capi::out(node, "node");
        uint64_t &result_address = capi::out(address, "address");
        core::GraphDefinition &object = capi::get(definition, "definition");
        const auto deps = dependencies_of(dependencies, dependency_count);
        cucore_graph_alloc_options_t resolved = capi::read_options(options, kAllocDefaults, "options");
        resolved.memory_type = capi::check_enum_range(resolved.memory_type, CUCORE_GRAPH_MEMORY_DEFAULT,
                                                      CUCORE_GRAPH_MEMORY_HOST, "options.memory_type",
                                                      "must be a cucore_graph_memory_type_t (DEFAULT, DEVICE or HOST)");
        uint64_t allocated = 0;
        core::Ref<core::GraphNode> made = object.add_alloc(deps, size, resolved, allocated);
        result = capi::give<cucore_graph_node_t>(std::move(made));
        result_address = allocated;
    });
}

cucore_status_t cucore_graph_definition_add_free(cucore_graph_definition_t *definition,
                                                 cucore_graph_node_t *const *dependencies, size_t dependency_count,
                                                 uint64_t address, cucore_graph_node_t **node) {
    return capi::guarded(__func__, [&] {
        cucore_graph_node_t *&result = capi::out(node, "node");
        core::GraphDefinition &object = capi::get(definition, "definition");
        const auto deps = dependencies_of(dependencies, dependency_count);
        result = capi::give<cucore_graph_node_t>(object.add_free(deps, address));
    });
}

cucore_status_t cucore_graph_definition_add_conditional(cucore_graph_definition_t *definition,
                                                        cucore_graph_node_t *const *dependencies,
                                                        size_t dependency_count, uint64_t condition,
                                                        cucore_graph_conditional_type_t type, size_t body_count,
                                                        cucore_graph_definition_t **bodies,
                                                        cucore_graph_node_t **node) {
    return capi::guarded(__func__, [&] {
        cucore_graph_node_t *&result = capi::out(node, "node");
        if (body_count && !bodies) core::throw_invalid_argument("argument 'bodies' is NULL");
        for (size_t i = 0; i < body_count; ++i) bodies[i] = nullptr;
        core::GraphDefinition &object = capi::get(definition, "definition");
        const auto deps = dependencies_of(dependencies, dependency_count);
        const cucore_graph_conditional_type_t checked = capi::check_enum_range(
            type, CUCORE_GRAPH_CONDITIONAL_IF, CUCORE_GRAPH_CONDITIONAL_SWITCH, "type",
            "must be a cucore_graph_conditional_type_t (IF, WHILE or SWITCH)");
        std::vector<core::Ref<core::GraphDefinition>> made;
        core::Ref<core::GraphNode> added = object.add_conditional(deps, condition, checked, body_count, made);
        for (size_t i = 0; i < made.size(); ++i) bodies[i] = capi::give<cucore_graph_definition_t>(std::move(made[i]));
        result = capi::give<cucore_graph_node_t>(std::move(added));
    });
}

// ---- nodes ---------------------------------------------------------------------------------

cucore_status_t cucore_graph_node_destroy(cucore_graph_node_t *node) {
    return capi::guarded(__func__, [&] { capi::get(node, "node").destroy(); });
}

cucore_status_t cucore_graph_node_handle(const cucore_graph_node_t *node, void **cu_graph_node) {
    return capi::guarded(__func__, [&] {
        void *&result = capi::out(cu_graph_node, "cu_graph_node");
        result = capi::get(node, "node").cu();
    });
}

cucore_status_t cucore_graph_node_type(const cucore_graph_node_t *node, cucore_graph_node_type_t *type) {
    return capi::guarded(__func__, [&] {
        cucore_graph_node_type_t &result = capi::out(type, "type");
        result = capi::get(node, "node").type();
    });
}

cucore_status_t cucore_graph_node_definition(const cucore_graph_node_t *node,
                                             cucore_graph_definition_t **definition) {
    return capi::guarded(__func__, [&] {
        cucore_graph_definition_t *&result = capi::out(definition, "definition");
        result = capi::give<cucore_graph_definition_t>(capi::get(node, "node").definition_ref());
    });
}

cucore_status_t cucore_graph_node_dependencies(cucore_graph_node_t *node, cucore_graph_node_t **nodes,
                                               size_t capacity, size_t *count) {
    return capi::guarded(__func__, [&] {
        size_t &total = capi::out(count, "count");
        capi::give_list(capi::get(node, "node").dependencies(), nodes, capacity, total, "nodes");
    });
}

cucore_status_t cucore_graph_node_dependents(cucore_graph_node_t *node, cucore_graph_node_t **nodes, size_t capacity,
                                             size_t *count) {
    return capi::guarded(__func__, [&] {
        size_t &total = capi::out(count, "count");
        capi::give_list(capi::get(node, "node").dependents(), nodes, capacity, total, "nodes");
    });
}

cucore_status_t cucore_graph_node_add_dependent(cucore_graph_node_t *from, cucore_graph_node_t *to) {
    return capi::guarded(__func__, [&] { capi::get(from, "from").add_dependent(capi::get(to, "to")); });
}

cucore_status_t cucore_graph_node_remove_dependent(cucore_graph_node_t *from, cucore_graph_node_t *to) {
    return capi::guarded(__func__, [&] { capi::get(from, "from").remove_dependent(capi::get(to, "to")); });
}

cucore_status_t cucore_graph_node_find_in_clone(cucore_graph_node_t *node, cucore_graph_definition_t *clone,
                                                cucore_graph_node_t **clone_node) {
    return capi::guarded(__func__, [&] {
        cucore_graph_node_t *&result = capi::out(clone_node, "clone_node");
        core::GraphNode &object = capi::get(node, "node");
        result = capi::give<cucore_graph_node_t>(object.find_in_clone(capi::get(clone, "clone")));
    });
}

cucore_status_t cucore_graph_node_kernel_config(cucore_graph_node_t *node, cucore_launch_config_t *config,
                                                cucore_kernel_t **kernel) {
    return capi::guarded(__func__, [&] {
        capi::require(config, "config");
        cucore_kernel_t **kernel_out = capi::optional_out(kernel);
        core::Ref<core::Kernel> found;
        const cucore_launch_config_t read = capi::get(node, "node").kernel_config(found);
        capi::write_versioned(config, read, "config", "CUCORE_LAUNCH_CONFIG_INIT");
        if (kernel_out && found) *kernel_out = capi::give<cucore_kernel_t>(std::move(found));
    });
}

cucore_status_t cucore_graph_node_set_kernel(cucore_graph_node_t *node, const cucore_launch_config_t *config,
                                             cucore_kernel_t *kernel, const void *const *args,
                                             const size_t *arg_sizes, size_t arg_count) {
    return capi::guarded(__func__, [&] {
        core::GraphNode &object = capi::get(node, "node");
        cucore_launch_config_t resolved;
        object.set_kernel(kernel_request(config, kernel, true, args, arg_sizes, arg_count, resolved));
    });
}

cucore_status_t cucore_graph_node_set_memcpy(cucore_graph_node_t *node, cucore_buffer_t *dst, uint64_t dst_offset,
                                             cucore_buffer_t *src, uint64_t src_offset, uint64_t size) {
    return capi::guarded(__func__, [&] {
        capi::get(node, "node").set_memcpy(memcpy_request(dst, dst_offset, src, src_offset, size));
    });
}

cucore_status_t cucore_graph_node_set_memset(cucore_graph_node_t *node, cucore_buffer_t *buffer, uint64_t offset,
                                             uint32_t value, uint32_t element_size, uint64_t width, uint64_t height,
                                             uint64_t pitch) {
    return capi::guarded(__func__, [&] {
        capi::get(node, "node").set_memset(memset_request(buffer, offset, value, element_size, width, height, pitch));
    });
}

cucore_status_t cucore_graph_node_set_host_callback(cucore_graph_node_t *node, cucore_host_fn fn, void *user_data,
                                                    cucore_release_fn release) {
    const core::HostClosure closure{fn, user_data, release};
    return capi::guarded(__func__, [&] {
        with_closure(closure, [&](bool &handed) {
            core::GraphNode &object = capi::get(node, "node");
            if (!fn) core::throw_invalid_argument("argument 'fn' is NULL");
            handed = true;
            object.set_host_callback(closure);
        });
    });
}

cucore_status_t cucore_graph_node_set_event(cucore_graph_node_t *node, cucore_event_t *event) {
    return capi::guarded(__func__, [&] {
        core::GraphNode &object = capi::get(node, "node");
        object.set_event(capi::get(event, "event"));
    });
}

cucore_status_t cucore_graph_node_set_child_graph(cucore_graph_node_t *node, cucore_graph_definition_t *child) {
    return capi::guarded(__func__, [&] {
        core::GraphNode &object = capi::get(node, "node");
        object.set_child_graph(capi::get(child, "child"));
    });
}

cucore_status_t cucore_graph_node_alloc_info(cucore_graph_node_t *node, uint64_t *address, uint64_t *size) {
    return capi::guarded(__func__, [&] {
        uint64_t &result_address = capi::out(address, "address");
        uint64_t &result_size = capi::out(size, "size");
        capi::get(node, "node").alloc_info(result_address, result_size);
    });
}

cucore_status_t cucore_graph_node_bodies(cucore_graph_node_t *node, cucore_graph_definition_t **bodies,
                                         size_t capacity, size_t *count) {
    return capi::guarded(__func__, [&] {
        size_t &total = capi::out(count, "count");
        capi::give_list(capi::get(node, "node").bodies(), bodies, capacity, total, "bodies");
    });
}

// ---- executable graphs ------------------------------------------------------------------------

cucore_status_t cucore_graph_handle(const cucore_graph_t *graph, void **cu_graph_exec) {
    return capi::guarded(__func__, [&] {
        void *&result = capi::out(cu_graph_exec, "cu_graph_exec");
        result = capi::get(graph, "graph").cu();
    });
}

cucore_status_t cucore_graph_launch(cucore_graph_t *graph, cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] { capi::get(graph, "graph").launch(capi::get(stream, "stream")); });
}

cucore_status_t cucore_graph_upload(cucore_graph_t *graph, cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] { capi::get(graph, "graph").upload(capi::get(stream, "stream")); });
}

cucore_status_t cucore_graph_update(cucore_graph_t *graph, cucore_graph_definition_t *definition,
                                    cucore_graph_update_result_t *result) {
    if (result) *result = CUCORE_GRAPH_UPDATE_SUCCESS;
    return capi::guarded(__func__, [&] {
        core::Graph &object = capi::get(graph, "graph");
        cucore_graph_update_result_t verdict = CUCORE_GRAPH_UPDATE_SUCCESS;
        try {
            object.update(capi::get(definition, "definition"), verdict);
        } catch (...) {
            if (result) *result = verdict;
            throw;
        }
        if (result) *result = verdict;
    });
}

cucore_status_t cucore_graph_set_kernel_node(cucore_graph_t *graph, cucore_graph_node_t *node,
                                             const cucore_launch_config_t *config, cucore_kernel_t *kernel,
                                             const void *const *args, const size_t *arg_sizes, size_t arg_count) {
    return capi::guarded(__func__, [&] {
        core::Graph &object = capi::get(graph, "graph");
        core::GraphNode &target = capi::get(node, "node");
        cucore_launch_config_t resolved;
        object.set_kernel_node(target, kernel_request(config, kernel, true, args, arg_sizes, arg_count, resolved));
    });
}

cucore_status_t cucore_graph_set_memcpy_node(cucore_graph_t *graph, cucore_graph_node_t *node, cucore_buffer_t *dst,
                                             uint64_t dst_offset, cucore_buffer_t *src, uint64_t src_offset,
                                             uint64_t size) {
    return capi::guarded(__func__, [&] {
        core::Graph &object = capi::get(graph, "graph");
        core::GraphNode &target = capi::get(node, "node");
        object.set_memcpy_node(target, memcpy_request(dst, dst_offset, src, src_offset, size));
    });
}

cucore_status_t cucore_graph_set_memset_node(cucore_graph_t *graph, cucore_graph_node_t *node,
                                             cucore_buffer_t *buffer, uint64_t offset, uint32_t value,
                                             uint32_t element_size, uint64_t width, uint64_t height,
                                             uint64_t pitch) {
    return capi::guarded(__func__, [&] {
        core::Graph &object = capi::get(graph, "graph");
        core::GraphNode &target = capi::get(node, "node");
        object.set_memset_node(target, memset_request(buffer, offset, value, element_size, width, height, pitch));
    });
}

cucore_status_t cucore_graph_set_host_callback_node(cucore_graph_t *graph, cucore_graph_node_t *node,
                                                    cucore_host_fn fn, void *user_data, cucore_release_fn release) {
    const core::HostClosure closure{fn, user_data, release};
    return capi::guarded(__func__, [&] {
        with_closure(closure, [&](bool &handed) {
            core::Graph &object = capi::get(graph, "graph");
            core::GraphNode &target = capi::get(node, "node");
            if (!fn) core::throw_invalid_argument("argument 'fn' is NULL");
            handed = true;
            object.set_host_callback_node(target, closure);
        });
    });
}

cucore_status_t cucore_graph_set_event_node(cucore_graph_t *graph, cucore_graph_node_t *node, cucore_event_t *event) {
    return capi::guarded(__func__, [&] {
        core::Graph &object = capi::get(graph, "graph");
        object.set_event_node(capi::get(node, "node"), capi::get(event, "event"));
    });
}

cucore_status_t cucore_graph_set_child_graph_node(cucore_graph_t *graph, cucore_graph_node_t *node,
                                                  cucore_graph_definition_t *child) {
    return capi::guarded(__func__, [&] {
        core::Graph &object = capi::get(graph, "graph");
        object.set_child_graph_node(capi::get(node, "node"), capi::get(child, "child"));
    });
}

cucore_status_t cucore_graph_set_node_enabled(cucore_graph_t *graph, cucore_graph_node_t *node, int enabled) {
    return capi::guarded(__func__, [&] {
        core::Graph &object = capi::get(graph, "graph");
        core::GraphNode &target = capi::get(node, "node");
        object.set_node_enabled(target, capi::check_switch(static_cast<uint32_t>(enabled), "enabled") != 0);
    });
}

cucore_status_t cucore_graph_node_enabled(cucore_graph_t *graph, cucore_graph_node_t *node, int *enabled) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(enabled, "enabled");
        core::Graph &object = capi::get(graph, "graph");
        result = object.node_enabled(capi::get(node, "node")) ? 1 : 0;
    });
}

}  // extern "C"
