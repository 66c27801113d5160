// libcucore C++ façade: graphs made by capturing the work of a stream (over
// cucore/graph_builder.h).
//
//   cucore::GraphBuilder builder = stream.create_graph_builder();
//   builder.begin_building();
//   cucore::launch(builder, config, scale, data, 2.0f, n);      // captured, not run
//   data.copy_to(result, builder.stream());                      // likewise
//   builder.callback([&] { ++done; });                           // a host callback node
//   builder.end_building();
//   cucore::Graph graph = builder.complete();
//   for (int i = 0; i < 1000; ++i) graph.launch(stream);
//
// A builder (cuda.core: GraphBuilder) owns a stream: its own (Device::
// create_graph_builder) or the one it was made from (Stream::
// create_graph_builder). Between begin_building() and end_building()
// everything the library enqueues on that stream becomes a node instead of
// running: launches (launch(builder, ...) or on builder.stream()), copies and
// fills, host functions, event records and waits, allocations and frees of
// stream-ordered memory resources (graph memory: graph_memory.hpp). The graph
// holds the objects that work uses. A call that cannot be captured throws
// Error (INVALID_STATE naming it): one the library knows (synchronizing the
// stream) leaves the capture going; one only the driver detects ends it, and
// end_building() then throws INVALID_STATE and leaves the stream usable.
//
// Forks and joins: split(n) gives builders on new streams continuing from
// this point; join() makes a builder wait for others. Conditional nodes
// (add_if, add_if_else, add_while, add_switch) give one builder per body,
// already building: capture the body's work on it, then end_building() it
// before the parent's.
#ifndef CUCORE_GRAPH_BUILDER_HPP
#define CUCORE_GRAPH_BUILDER_HPP

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common.hpp"
#include "device.hpp"
#include "graph.hpp"
#include "graph_builder.h"
#include "kernel.hpp"
#include "launch.hpp"
#include "stream.hpp"

namespace cucore {

// A graph builder (cuda.core: GraphBuilder). Copies share the one library
// object. A default-constructed GraphBuilder is empty.
class GraphBuilder : public Handle<GraphBuilder, cucore_graph_builder_t> {
public:
    GraphBuilder() noexcept = default;

    // A builder capturing on `stream` (held by the builder), or on a new
    // non-blocking stream of `device`'s primary context. Throws Error:
    // INVALID_HANDLE, INVALID_ARGUMENT (the legacy default stream, which
    // cannot capture), CUDA, OUT_OF_MEMORY.
    static GraphBuilder create(const Stream &stream) {
        cucore_graph_builder_t *raw = nullptr;
        detail::check(cucore_graph_builder_create(stream.get(), &raw));
        return adopt(raw);
    }
    static GraphBuilder create(const Device &device) {
        cucore_graph_builder_t *raw = nullptr;
        detail::check(cucore_graph_builder_create_on_device(device.get(), &raw));
        return adopt(raw);
    }

    // The builder's stream: enqueue work on it to capture it. Throws Error:
    // INVALID_HANDLE.
    Stream stream() const {
        cucore_stream_t *raw = nullptr;
        detail::check(cucore_graph_builder_stream(handle_, &raw));
        return Stream::adopt(raw);
    }

    // Starts capturing the stream in `mode` (DEFAULT: relaxed, as cuda.core);
    // returns this builder, so that a call can follow. Throws Error:
    // INVALID_HANDLE, INVALID_ARGUMENT (unknown mode), INVALID_STATE (already
    // building or built, or the stream is captured by someone else), CUDA.
    const GraphBuilder &begin_building(cucore_capture_mode_t mode = CUCORE_CAPTURE_MODE_DEFAULT) const {
        detail::check(cucore_graph_builder_begin_building(handle_, mode));
        return *this;
    }

    // Ends the capture; the builder then holds the captured definition.
    // Throws Error: INVALID_HANDLE, INVALID_STATE (not building; forks not
    // joined; bodies still building; a call that cannot be captured
    // invalidated the capture: the stream is usable again, nothing was
    // built), CUDA.
    const GraphBuilder &end_building() const {
        detail::check(cucore_graph_builder_end_building(handle_));
        return *this;
    }

    // Whether the builder is capturing. Throws Error: INVALID_HANDLE.
    bool is_building() const {
        int building = 0;
        detail::check(cucore_graph_builder_is_building(handle_, &building));
        return building != 0;
    }

    // What the builder captured (cuda.core: graph_definition), a definition
    // like any other. Throws Error: INVALID_HANDLE, INVALID_STATE (not built yet).
    GraphDefinition definition() const {
        cucore_graph_definition_t *raw = nullptr;
        detail::check(cucore_graph_builder_definition(handle_, &raw));
        return GraphDefinition::adopt(raw);
    }

    // The executable graph of what was captured, as GraphDefinition::
    // instantiate. Throws as that call, and INVALID_STATE (not built yet).
    Graph complete() const {
        cucore_graph_t *raw = nullptr;
        detail::check(cucore_graph_builder_complete(handle_, nullptr, &raw));
        return Graph::adopt(raw);
    }
    Graph complete(const GraphCompleteOptions &options) const {
        const cucore_graph_complete_options_t o = options.to_c();
        cucore_graph_t *raw = nullptr;
        detail::check(cucore_graph_builder_complete(handle_, &o, &raw));
        return Graph::adopt(raw);
    }

    // Writes what was captured as a DOT file, as GraphDefinition::
    // debug_dot_print. Throws as that call, and INVALID_STATE (not built yet).
    void debug_dot_print(const std::string &path, const GraphDebugPrintOptions &options = {}) const {
        detail::check(cucore_graph_builder_debug_dot_print(handle_, path.c_str(), options.to_c()));
    }

    // Forks the capture into `count` (>= 1) builders: the first is this
    // builder, the others capture on new streams and start from this point.
    // Join them back before ending. Throws Error: INVALID_HANDLE,
    // INVALID_ARGUMENT (count 0), INVALID_STATE (not building), CUDA,
    // OUT_OF_MEMORY.
    std::vector<GraphBuilder> split(std::size_t count) const {
        std::vector<GraphBuilder> result;
        result.reserve(count); // before the call: adopting below cannot throw
        std::vector<cucore_graph_builder_t *> raw(count, nullptr);
        detail::check(cucore_graph_builder_split(handle_, count, raw.data()));
        for (cucore_graph_builder_t *b : raw) result.push_back(adopt(b));
        return result;
    }

    // Makes this builder wait for the work captured so far on each of
    // `others` (builders of the same capture), whose captures are then
    // finished. Throws Error: INVALID_HANDLE, INVALID_ARGUMENT (this builder
    // among them), INVALID_STATE (one not building, or of another capture), CUDA.
    void join(std::initializer_list<std::reference_wrapper<const GraphBuilder>> others) const {
        std::vector<cucore_graph_builder_t *> raw;
        raw.reserve(others.size());
        for (const GraphBuilder &b : others) raw.push_back(b.handle_);
        detail::check(cucore_graph_builder_join(handle_, raw.data(), raw.size()));
    }
    void join(const std::vector<GraphBuilder> &others) const {
        std::vector<cucore_graph_builder_t *> raw;
        raw.reserve(others.size());
        for (const GraphBuilder &b : others) raw.push_back(b.handle_);
        detail::check(cucore_graph_builder_join(handle_, raw.data(), raw.size()));
    }

    // A condition of the graph being captured, as GraphDefinition::
    // create_condition. Throws as that call, and INVALID_STATE (not building).
    GraphCondition create_condition(std::optional<std::uint32_t> default_value = std::nullopt) const {
        std::uint64_t condition = 0;
        detail::check(cucore_graph_builder_create_condition(
            handle_, default_value.value_or(0),
            default_value ? static_cast<std::uint32_t>(CUCORE_GRAPH_CONDITION_SET_DEFAULT) : 0u, &condition));
        return GraphCondition(condition);
    }

    // Adds a conditional node on `condition` after the work captured so far,
    // and gives one builder per body, already building into it on its own
    // stream (types and counts as GraphDefinition::add_conditional); work
    // captured here afterwards runs after the node. add_if gives {then},
    // add_if_else {then, else}, add_while {body}, add_switch `count` cases
    // (cuda.core: if_then, if_else, while_loop, switch). Throws as
    // GraphDefinition::add_conditional, and INVALID_STATE (not building).
    std::vector<GraphBuilder> add_conditional(GraphCondition condition, cucore_graph_conditional_type_t type,
                                              std::size_t body_count) const {
        std::vector<GraphBuilder> result;
        result.reserve(body_count);
        std::vector<cucore_graph_builder_t *> raw(body_count, nullptr);
        detail::check(cucore_graph_builder_add_conditional(handle_, condition.handle(), type, body_count, raw.data()));
        for (cucore_graph_builder_t *b : raw) result.push_back(adopt(b));
        return result;
    }
    GraphBuilder add_if(GraphCondition condition) const {
        return std::move(add_conditional(condition, CUCORE_GRAPH_CONDITIONAL_IF, 1)[0]);
    }
    std::pair<GraphBuilder, GraphBuilder> add_if_else(GraphCondition condition) const {
        std::vector<GraphBuilder> bodies = add_conditional(condition, CUCORE_GRAPH_CONDITIONAL_IF, 2);
        return {std::move(bodies[0]), std::move(bodies[1])};
    }
    GraphBuilder add_while(GraphCondition condition) const {
        return std::move(add_conditional(condition, CUCORE_GRAPH_CONDITIONAL_WHILE, 1)[0]);
    }
    std::vector<GraphBuilder> add_switch(GraphCondition condition, std::size_t count) const {
        return add_conditional(condition, CUCORE_GRAPH_CONDITIONAL_SWITCH, count);
    }

    // Adds a child graph node running a copy of what `child` (a built
    // builder) captured, after the work captured so far. Throws Error:
    // INVALID_HANDLE, INVALID_STATE (this builder not building, `child` not
    // built), CUDA.
    void embed(const GraphBuilder &child) const { detail::check(cucore_graph_builder_embed(handle_, child.handle_)); }

    // Adds a host callback node after the work captured so far, running a
    // copy of `f` (called as f() on a driver thread each time the node runs;
    // it must not call CUDA, and a throw terminates), or the C function
    // `fn(user_data)` with its `release`, run once when nothing needs it any
    // more (also when this call fails). Throws Error: INVALID_HANDLE,
    // INVALID_STATE (not building), CUDA; also std::bad_alloc.
    template <typename F, typename = std::enable_if_t<detail::is_host_callable_v<F>>>
    void callback(F &&f) const {
        const detail::HostCallback c = detail::make_host_callback(std::forward<F>(f));
        callback(c.fn, c.user_data, c.release);
    }
    void callback(cucore_host_fn fn, void *user_data, cucore_release_fn release = nullptr) const {
        detail::check(cucore_graph_builder_callback(handle_, fn, user_data, release));
    }
};

static_assert(sizeof(GraphBuilder) == sizeof(void *), "a GraphBuilder is exactly one C handle");

// Captures a launch of `kernel` with `config` and `args` into `builder`'s
// graph (cuda.core: launch(builder, ...)): launch() on the builder's stream.
// Throws as launch(), and INVALID_HANDLE.
template <typename... Args>
inline void launch(const GraphBuilder &builder, const LaunchConfig &config, const Kernel &kernel,
                   const Args &...args) {
    launch(builder.stream(), config, kernel, args...);
}

// The members of earlier headers' classes that make or take a GraphBuilder
// (declared in device.hpp, stream.hpp and graph.hpp).
inline GraphBuilder Device::create_graph_builder() const { return GraphBuilder::create(*this); }
inline GraphBuilder Stream::create_graph_builder() const { return GraphBuilder::create(*this); }
inline void Graph::update(const GraphBuilder &builder) const { update(builder.definition()); }

} // namespace cucore

#endif // CUCORE_GRAPH_BUILDER_HPP
