#include "core/graph_builder.hpp"

#include <string>

#include "core/device.hpp"
#include "core/error.hpp"
#include "core/owned.hpp"
#include "core/release.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

namespace {

CUstreamCaptureMode driver_mode(cucore_capture_mode_t mode) noexcept {
    switch (mode) {
        case CUCORE_CAPTURE_MODE_GLOBAL: return CU_STREAM_CAPTURE_MODE_GLOBAL;
        case CUCORE_CAPTURE_MODE_THREAD_LOCAL: return CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
        default: return CU_STREAM_CAPTURE_MODE_RELAXED;
    }
}

const char *state_text(GraphBuilder::State state) noexcept {
    switch (state) {
        case GraphBuilder::State::idle: return "has not begun building";
        case GraphBuilder::State::built: return "has already ended building";
        case GraphBuilder::State::joined: return "was joined into another builder";
        default: return "is building";
    }
}

}  // namespace

Ref<GraphBuilder> GraphBuilder::create(Ref<Stream> stream) {
    if (stream->cu() == CU_STREAM_LEGACY)
        throw_invalid_argument("argument 'stream' is the legacy default stream, which cannot be captured; use a "
                               "created stream or the per-thread default stream");
    return make<GraphBuilder>(std::move(stream), Role::root);
}

Ref<GraphBuilder> GraphBuilder::create_on_device(Device &device) {
    return create(Stream::create(device.primary_context(), 0, 0));
}

GraphBuilder::GraphBuilder(Ref<Stream> stream, Role role) noexcept
    : Object(CUCORE_OBJECT_GRAPH_BUILDER), stream_(std::move(stream)), role_(role) {}

GraphBuilder::~GraphBuilder() { stop_capture(); }

void GraphBuilder::stop_capture() noexcept {
    if (state_ != State::building) return;
    stream_->set_capture_sink(nullptr);
    if (role_ == Role::fork) return;  // its root's end reports it unjoined
    CUgraph dropped = nullptr;
    {
        ScopedContext bind(stream_->cu_context(), ScopedContext::ReleasePath{"ending a dropped graph capture"});
        if (const driver::Table *api = driver::peek()) api->cuStreamEndCapture(stream_->cu(), &dropped);
    }
    if (role_ == Role::root) {
        if (dropped)
            release_reported("cuGraphDestroy", "destroying a dropped capture's graph",
                             [dropped](const driver::Table &api) { return api.cuGraphDestroy(dropped); });
    } else if (capture_) {
        std::lock_guard<std::mutex> lock(capture_->mutex);
        --capture_->open_bodies;
    }
    state_ = State::idle;
}

bool GraphBuilder::building() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return state_ == State::building;
}

void GraphBuilder::require_building(const char *what) const {
    if (state_ != State::building)
        throw Error(CUCORE_ERROR_INVALID_STATE,
                    std::string(what) + " needs a builder that is building; this one " + state_text(state_));
}

void GraphBuilder::begin(cucore_capture_mode_t mode) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (role_ != Role::root)
        throw Error(CUCORE_ERROR_INVALID_STATE, "forked and conditional-body builders begin building when made");
    if (state_ != State::idle)
        throw Error(CUCORE_ERROR_INVALID_STATE, std::string("the builder ") + state_text(state_) +
                                                    "; a builder builds one graph (make another builder)");
    if (stream_->capture_sink())
        throw Error(CUCORE_ERROR_INVALID_STATE, "the stream is already being captured by another graph builder");
    auto capture = std::make_shared<CaptureState>();
    capture->mode = driver_mode(mode);
    capture->attachments = std::make_shared<GraphAttachments>();
    capture->hierarchy = std::make_shared<GraphHierarchy>();
    {
        ScopedContext bind(stream_->cu_context(), stream_->is_builtin());
        CUCORE_CALL(cuStreamBeginCapture, stream_->cu(), capture->mode);
    }
    stream_->set_capture_sink(capture->attachments.get());
    capture_ = std::move(capture);
    state_ = State::building;
}

void GraphBuilder::end() {
    std::lock_guard<std::mutex> lock(mutex_);
    require_building("ending a capture");
    if (role_ == Role::fork)
        throw Error(CUCORE_ERROR_INVALID_STATE,
                    "a forked builder ends by being joined into another (cucore_graph_builder_join)");
    if (role_ == Role::root) {
        std::lock_guard<std::mutex> capture_lock(capture_->mutex);
        if (capture_->open_forks || capture_->open_bodies)
            throw Error(CUCORE_ERROR_INVALID_STATE,
                        std::to_string(capture_->open_forks) + " forked builder(s) not joined and " +
                            std::to_string(capture_->open_bodies) +
                            " conditional body builder(s) still building; join and end them first");
    }
    CUgraph graph = nullptr;
    CUresult result;
    {
        ScopedContext bind(stream_->cu_context(), stream_->is_builtin());
        result = CUCORE_DRIVER(cuStreamEndCapture)(stream_->cu(), &graph);
    }
    stream_->set_capture_sink(nullptr);
    if (role_ == Role::body) {
        std::lock_guard<std::mutex> capture_lock(capture_->mutex);
        --capture_->open_bodies;
    }
    if (result != CUDA_SUCCESS) {
        if (graph && role_ == Role::root)
            release_reported("cuGraphDestroy", "destroying an invalidated capture's graph",
                             [graph](const driver::Table &api) { return api.cuGraphDestroy(graph); });
        state_ = role_ == Role::root ? State::idle : State::built;
        if (role_ == Role::root) capture_.reset();
        throw_cuda(result, "cuStreamEndCapture");
    }
    state_ = State::built;
    if (role_ == Role::root) {
        std::shared_ptr<CaptureState> capture = std::move(capture_);
        definition_ = GraphDefinition::adopt(stream_->context_ref(), graph, capture->attachments, capture->hierarchy);
    }
}

Ref<GraphDefinition> GraphBuilder::definition() const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (role_ != Role::root)
        throw Error(CUCORE_ERROR_INVALID_STATE, "a forked or conditional-body builder has no graph of its own; ask "
                                                "the builder that began the capture");
    if (state_ != State::built || !definition_)
        throw Error(CUCORE_ERROR_INVALID_STATE,
                    std::string("the builder ") + state_text(state_) + "; its graph exists once it ends building");
    return definition_;
}

GraphBuilder::CapturePoint GraphBuilder::capture_point() const {
    CapturePoint point;
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t id = 0;
    ScopedContext bind(stream_->cu_context(), stream_->is_builtin());
    CUCORE_CALL(cuStreamGetCaptureInfo, stream_->cu(), &status, &id, &point.graph, &point.dependencies,
                &point.edges, &point.count);
    if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE)
        throw Error(CUCORE_ERROR_INVALID_STATE,
                    "the capture was invalidated by an earlier call that cannot be captured; end it (the stream is "
                    "then usable again)");
    return point;
}

void GraphBuilder::advance_to(CUgraphNode node) const {
    ScopedContext bind(stream_->cu_context(), stream_->is_builtin());
    CUCORE_CALL(cuStreamUpdateCaptureDependencies, stream_->cu(), &node, nullptr, 1,
                CU_STREAM_SET_CAPTURE_DEPENDENCIES);
}

std::vector<Ref<GraphBuilder>> GraphBuilder::split(size_t count) {
    std::lock_guard<std::mutex> lock(mutex_);
    require_building("splitting");
    if (count == 0) throw_invalid_argument("argument 'count' is 0; split into at least 1 builder");
    std::vector<Ref<GraphBuilder>> builders;
    builders.reserve(count);
    builders.push_back(Ref<GraphBuilder>(this));
    for (size_t i = 1; i < count; ++i) {
        Ref<Stream> stream = Stream::create(stream_->context_ref(), 0, 0);
        stream->wait(*stream_);  // joins the capture from this builder's current point
        Ref<GraphBuilder> fork = make<GraphBuilder>(stream, Role::fork);
        fork->capture_ = capture_;
        fork->parent_ = Ref<GraphBuilder>(this);
        fork->state_ = State::building;
        stream->set_capture_sink(capture_->attachments.get());
        {
            std::lock_guard<std::mutex> capture_lock(capture_->mutex);
            ++capture_->open_forks;
        }
        builders.push_back(std::move(fork));
    }
    return builders;
}

void GraphBuilder::join(const std::vector<GraphBuilder *> &others) {
    std::lock_guard<std::mutex> lock(mutex_);
    require_building("joining");
    for (size_t i = 0; i < others.size(); ++i) {
        GraphBuilder &other = *others[i];
        const std::string name = "argument 'others[" + std::to_string(i) + "]'";
        if (&other == this) throw_invalid_argument(name + " is the builder itself");
        if (other.role_ != Role::fork)
            throw_invalid_argument(name + " is not a forked builder (cucore_graph_builder_split makes them); only "
                                          "forks are joined");
    }
    for (size_t i = 0; i < others.size(); ++i) {
        GraphBuilder &other = *others[i];
        std::lock_guard<std::mutex> other_lock(other.mutex_);
        if (other.state_ != State::building || other.capture_ != capture_)
            throw Error(CUCORE_ERROR_INVALID_STATE, "argument 'others[" + std::to_string(i) + "]' " +
                                                        (other.capture_ != capture_ ? "belongs to another capture"
                                                                                    : state_text(other.state_)));
        stream_->wait(other.stream());
        other.stream_->set_capture_sink(nullptr);
        other.state_ = State::joined;
        std::lock_guard<std::mutex> capture_lock(capture_->mutex);
        --capture_->open_forks;
    }
}

uint64_t GraphBuilder::create_condition(uint32_t default_value, uint32_t flags) {
    std::lock_guard<std::mutex> lock(mutex_);
    require_building("creating a condition");
    return make_condition(capture_point().graph, stream_->cu_context(), default_value, flags);
}

std::vector<Ref<GraphBuilder>> GraphBuilder::add_conditional(uint64_t condition, cucore_graph_conditional_type_t type,
                                                             size_t body_count) {
    std::lock_guard<std::mutex> lock(mutex_);
    require_building("adding a conditional node");
    const CapturePoint point = capture_point();
    std::vector<CUgraph> graphs;
    const CUgraphNode node = add_conditional_node(point.graph, stream_->cu_context(), point.dependencies, point.edges,
                                                  point.count, condition, type, body_count, graphs);
    advance_to(node);
    {
        std::lock_guard<std::mutex> hierarchy_lock(capture_->hierarchy->mutex);
        capture_->hierarchy->bodies[node] = graphs;
    }
    std::vector<Ref<GraphBuilder>> bodies;
    for (CUgraph graph : graphs) {
        Ref<Stream> stream = Stream::create(stream_->context_ref(), 0, 0);
        Ref<GraphBuilder> body = make<GraphBuilder>(stream, Role::body);
        {
            ScopedContext bind(stream->cu_context());
            CUCORE_CALL(cuStreamBeginCaptureToGraph, stream->cu(), graph, nullptr, nullptr, 0, capture_->mode);
        }
        body->capture_ = capture_;
        body->parent_ = Ref<GraphBuilder>(this);
        body->body_graph_ = graph;
        body->state_ = State::building;
        stream->set_capture_sink(capture_->attachments.get());
        {
            std::lock_guard<std::mutex> capture_lock(capture_->mutex);
            ++capture_->open_bodies;
        }
        bodies.push_back(std::move(body));
    }
    return bodies;
}

void GraphBuilder::embed(GraphBuilder &child) {
    if (&child == this) throw_invalid_argument("argument 'child' is the builder itself");
    Ref<GraphDefinition> graph = child.definition();
    std::lock_guard<std::mutex> lock(mutex_);
    require_building("embedding a graph");
    const CapturePoint point = capture_point();
    CUgraphNode node = nullptr;
    {
        ScopedContext bind(stream_->cu_context());
        CUCORE_CALL(cuGraphAddChildGraphNode, &node, point.graph, point.dependencies, point.count, graph->cu());
    }
    advance_to(node);
    capture_->attachments->keep_attachments(graph->attachments_ref());
}

void GraphBuilder::callback(const HostClosure &closure) {
    auto pending = own(closure, [](HostClosure unused) noexcept { release_closure(unused); });
    std::lock_guard<std::mutex> lock(mutex_);
    require_building("adding a host callback");
    const CapturePoint point = capture_point();
    CUDA_HOST_NODE_PARAMS params{};
    params.fn = closure.fn;
    params.userData = closure.user_data;
    CUgraphNode node = nullptr;
    CUCORE_CALL(cuGraphAddHostNode, &node, point.graph, point.dependencies, point.count, &params);
    capture_->attachments->keep_closure(closure);
    pending.release();
    advance_to(node);
}

}  // namespace cucore::core
