// C ABI: graph builders (stream capture).
#include "capi/capi.hpp"
#include "capi/graph_args.hpp"
#include "core/graph_builder.hpp"

using namespace cucore;

namespace {

void give_builders(std::vector<core::Ref<core::GraphBuilder>> made, cucore_graph_builder_t **out) {
    for (size_t i = 0; i < made.size(); ++i) out[i] = capi::give<cucore_graph_builder_t>(std::move(made[i]));
}

cucore_graph_builder_t **builder_array(cucore_graph_builder_t **builders, size_t count, const char *argument) {
    if (count && !builders) core::throw_invalid_argument(std::string("argument '") + argument + "' is NULL");
    for (size_t i = 0; i < count; ++i) builders[i] = nullptr;
    return builders;
}
}  // namespace

extern "C" {

cucore_status_t cucore_graph_builder_create(cucore_stream_t *stream, cucore_graph_builder_t **builder) {
    return capi::guarded(__func__, [&] {
        cucore_graph_builder_t *&result = capi::out(builder, "builder");
        core::Stream &target = capi::get(stream, "stream");
        result = capi::give<cucore_graph_builder_t>(core::GraphBuilder::create(core::Ref<core::Stream>(&target)));
    });
}

cucore_status_t cucore_graph_builder_create_on_device(cucore_device_t *device, cucore_graph_builder_t **builder) {
    return capi::guarded(__func__, [&] {
        cucore_graph_builder_t *&result = capi::out(builder, "builder");
        result = capi::give<cucore_graph_builder_t>(core::GraphBuilder::create_on_device(capi::get(device, "device")));
    });
}

cucore_status_t cucore_graph_builder_stream(const cucore_graph_builder_t *builder, cucore_stream_t **stream) {
    return capi::guarded(__func__, [&] {
        cucore_stream_t *&result = capi::out(stream, "stream");
        result = capi::give<cucore_stream_t>(capi::get(builder, "builder").stream_ref());
    });
}

cucore_status_t cucore_graph_builder_begin_building(cucore_graph_builder_t *builder, cucore_capture_mode_t mode) {
    return capi::guarded(__func__, [&] {
        core::GraphBuilder &object = capi::get(builder, "builder");
        object.begin(capi::check_enum_range(mode, CUCORE_CAPTURE_MODE_DEFAULT, CUCORE_CAPTURE_MODE_RELAXED, "mode",
                                            "must be a cucore_capture_mode_t (DEFAULT, GLOBAL, THREAD_LOCAL or "
                                            "RELAXED)"));
    });
}

cucore_status_t cucore_graph_builder_end_building(cucore_graph_builder_t *builder) {
    return capi::guarded(__func__, [&] { capi::get(builder, "builder").end(); });
}

cucore_status_t cucore_graph_builder_is_building(const cucore_graph_builder_t *builder, int *building) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(building, "building");
        result = capi::get(builder, "builder").building() ? 1 : 0;
    });
}

cucore_status_t cucore_graph_builder_definition(cucore_graph_builder_t *builder,
                                                cucore_graph_definition_t **definition) {
    return capi::guarded(__func__, [&] {
        cucore_graph_definition_t *&result = capi::out(definition, "definition");
        result = capi::give<cucore_graph_definition_t>(capi::get(builder, "builder").definition());
    });
}

cucore_status_t cucore_graph_builder_complete(cucore_graph_builder_t *builder,
                                              const cucore_graph_complete_options_t *options, cucore_graph_t **graph) {
    return capi::guarded(__func__, [&] {
        cucore_graph_t *&result = capi::out(graph, "graph");
        core::GraphBuilder &object = capi::get(builder, "builder");
        core::Stream *upload = nullptr;
        const cucore_graph_complete_options_t resolved = capi::read_complete_options(options, upload);
        result = capi::give<cucore_graph_t>(object.definition()->instantiate(resolved.flags, upload));
    });
}

cucore_status_t cucore_graph_builder_debug_dot_print(cucore_graph_builder_t *builder, const char *path,
                                                     uint32_t flags) {
    return capi::guarded(__func__, [&] {
        core::GraphBuilder &object = capi::get(builder, "builder");
        capi::check_dot_arguments(path, flags);
        object.definition()->debug_dot_print(path, flags);
    });
}

cucore_status_t cucore_graph_builder_split(cucore_graph_builder_t *builder, size_t count,
                                           cucore_graph_builder_t **builders) {
    return capi::guarded(__func__, [&] {
        cucore_graph_builder_t **out = builder_array(builders, count, "builders");
        if (!builders) core::throw_invalid_argument("argument 'builders' is NULL");
        give_builders(capi::get(builder, "builder").split(count), out);
    });
}

cucore_status_t cucore_graph_builder_join(cucore_graph_builder_t *builder, cucore_graph_builder_t *const *others,
                                          size_t count) {
    return capi::guarded(__func__, [&] {
        core::GraphBuilder &object = capi::get(builder, "builder");
        object.join(capi::get_all(others, count, "others"));
    });
}

cucore_status_t cucore_graph_builder_create_condition(cucore_graph_builder_t *builder, uint32_t default_value,
                                                      uint32_t flags, uint64_t *condition) {
    return capi::guarded(__func__, [&] {
        uint64_t &result = capi::out(condition, "condition");
        core::GraphBuilder &object = capi::get(builder, "builder");
        capi::check_flags(flags, CUCORE_GRAPH_CONDITION_SET_DEFAULT, "flags");
        result = object.create_condition(default_value, flags);
    });
}

cucore_status_t cucore_graph_builder_add_conditional(cucore_graph_builder_t *builder, uint64_t condition,
                                                     cucore_graph_conditional_type_t type, size_t body_count,
                                                     cucore_graph_builder_t **bodies) {
    return capi::guarded(__func__, [&] {
        cucore_graph_builder_t **out = builder_array(bodies, body_count, "bodies");
        core::GraphBuilder &object = capi::get(builder, "builder");
        const cucore_graph_conditional_type_t checked = capi::check_enum_range(
            type, CUCORE_GRAPH_CONDITIONAL_IF, CUCORE_GRAPH_CONDITIONAL_SWITCH, "type",
            "must be a cucore_graph_conditional_type_t (IF, WHILE or SWITCH)");
        give_builders(object.add_conditional(condition, checked, body_count), out);
    });
}

cucore_status_t cucore_graph_builder_embed(cucore_graph_builder_t *builder, cucore_graph_builder_t *child) {
    return capi::guarded(__func__, [&] { capi::get(builder, "builder").embed(capi::get(child, "child")); });
}

cucore_status_t cucore_graph_builder_callback(cucore_graph_builder_t *builder, cucore_host_fn fn, void *user_data,
                                              cucore_release_fn release) {
    const core::HostClosure closure{fn, user_data, release};
    bool handed = false;
    const cucore_status_t status = capi::guarded(__func__, [&] {
        core::GraphBuilder &object = capi::get(builder, "builder");
        if (!fn) core::throw_invalid_argument("argument 'fn' is NULL");
        handed = true;  // the core releases it from here, also when it fails
        object.callback(closure);
    });
    if (!handed) core::release_closure(closure);
    return status;
}

}  // extern "C"
