// Executable graphs (CUgraphExec): instantiation, launch, upload, updates.
#include <string>

#include "core/buffer.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/event.hpp"
#include "core/graph.hpp"
#include "core/kernel.hpp"
#include "core/owned.hpp"
#include "core/release.hpp"
#include "core/stream.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

namespace {

void destroy_exec(CUgraphExec exec, const char *what) noexcept {
    release_reported("cuGraphExecDestroy", what,
                     [exec](const driver::Table &api) { return api.cuGraphExecDestroy(exec); });
}

const char *instantiate_result_text(CUgraphInstantiateResult result) noexcept {
    switch (result) {
        case CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE: return "the graph's structure is invalid (e.g. a cycle)";
        case CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED:
            return "a node's operation is not supported with these options";
        case CUDA_GRAPH_INSTANTIATE_MULTIPLE_CTXS_NOT_SUPPORTED:
            return "a device-launchable graph has nodes of several contexts";
        case CUDA_GRAPH_INSTANTIATE_CONDITIONAL_HANDLE_UNUSED:
            return "a condition made for the graph is used by no conditional node";
        default: return "the driver refused it";
    }
}

const char *update_result_name(CUgraphExecUpdateResult result) noexcept {
    switch (result) {
        case CU_GRAPH_EXEC_UPDATE_SUCCESS: return "SUCCESS";
        case CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED: return "TOPOLOGY_CHANGED (nodes or edges differ)";
        case CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED: return "NODE_TYPE_CHANGED";
        case CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED: return "FUNCTION_CHANGED (a kernel of another context)";
        case CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED: return "PARAMETERS_CHANGED (a change that cannot be made in place)";
        case CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED: return "NOT_SUPPORTED (a node whose change cannot be updated)";
        case CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE: return "UNSUPPORTED_FUNCTION_CHANGE";
        case CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED: return "ATTRIBUTES_CHANGED";
        default: return "ERROR";
    }
}

std::string node_text(CUgraphNode node) {
    if (!node) return "";
    CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
    if (CUCORE_DRIVER(cuGraphNodeGetType)(node, &type) != CUDA_SUCCESS) return "";
    return std::string(" at a ") + node_type_name(type) + " node";
}

}  // namespace

Ref<Graph> GraphDefinition::instantiate(uint32_t flags, Stream *upload_stream) {
    check_live();
    CUDA_GRAPH_INSTANTIATE_PARAMS params{};
    if (flags & CUCORE_GRAPH_COMPLETE_AUTO_FREE_ON_LAUNCH) params.flags |= CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH;
    if (flags & CUCORE_GRAPH_COMPLETE_DEVICE_LAUNCH) params.flags |= CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH;
    if (flags & CUCORE_GRAPH_COMPLETE_USE_NODE_PRIORITY) params.flags |= CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
    if (upload_stream) {
        if (upload_stream->device_ordinal() != context_->device().ordinal())
            throw_invalid_argument("argument 'options.upload_stream' belongs to device " +
                                   std::to_string(upload_stream->device_ordinal()) + ", the graph to device " +
                                   std::to_string(context_->device().ordinal()));
        params.flags |= CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD;
        params.hUploadStream = upload_stream->cu();
    }
    CUgraphExec exec = nullptr;
    {
        ScopedContext bind(context_->cu());
        const CUresult result = CUCORE_DRIVER(cuGraphInstantiateWithParams)(&exec, graph_, &params);
        if (result != CUDA_SUCCESS) {
            std::string detail = instantiate_result_text(params.result_out);
            detail += node_text(params.hErrNode_out);
            throw Error(status_of(result),
                        std::string("cuGraphInstantiateWithParams failed: ") + cuda_error_name(result) + " (" +
                            detail + ")",
                        static_cast<int>(result));
        }
    }
    auto made = own(exec, [](CUgraphExec unmade) noexcept { destroy_exec(unmade, "destroying a graph that was not made"); });
    Ref<Graph> graph = make<Graph>(context_, exec, attachments_);
    made.release();
    return graph;
}

Graph::Graph(Ref<Context> context, CUgraphExec exec, std::shared_ptr<GraphAttachments> attachments)
    : Object(CUCORE_OBJECT_GRAPH),
      context_(std::move(context)),
      exec_(exec),
      device_ordinal_(context_->device().ordinal()),
      attachments_{std::move(attachments)} {}

Graph::~Graph() {
    destroy_exec(exec_, "destroying a graph");  // launches in flight go on in the driver
    if (launched_on_.empty()) return;           // what it holds goes with the members
    // Held until every stream it was launched on has run past its launches.
    struct Held {
        std::vector<std::shared_ptr<GraphAttachments>> attachments;
        std::shared_ptr<GraphAttachments> updates;
    };
    std::shared_ptr<Held> held;
    try {
        held = std::make_shared<Held>(Held{std::move(attachments_), std::move(updates_)});
    } catch (...) {
        // No memory for the bundle: wait for the streams instead.
        for (const Ref<Stream> &stream : launched_on_)
            release_reported("cuStreamSynchronize", "waiting for a graph's launches before releasing what it used",
                             [&stream](const driver::Table &api) { return api.cuStreamSynchronize(stream->cu()); });
        return;
    }
    release_after(launched_on_, std::move(held));
}

void Graph::note_launch_stream(Stream &stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    bool known = false;
    for (const Ref<Stream> &s : launched_on_) known = known || s.get() == &stream;
    if (!known) launched_on_.push_back(Ref<Stream>(&stream));
    last_stream_.store(&stream, std::memory_order_relaxed);
}

void Graph::check_stream(const Stream &stream) const {
    if (__builtin_expect(stream.device_ordinal() != device_ordinal_, 0))
        throw_invalid_argument("argument 'stream' belongs to device " + std::to_string(stream.device_ordinal()) +
                               ", the graph to device " + std::to_string(device_ordinal_));
}

void Graph::check_node(const GraphNode &node) const {
    if (&node.definition().context() != context_.get())
        throw_invalid_argument("argument 'node' is a node of a definition of another context than the graph's");
}

void Graph::launch(Stream &stream) {
    check_stream(stream);
    // The driver cannot capture a graph launch (it invalidates the capture): say so and keep the capture.
    stream.refuse_during_capture("launching an executable graph (embed its definition instead: "
                                 "cucore_graph_builder_embed or cucore_graph_definition_add_child_graph)");
    ScopedContext bind(stream.cu_context(), stream.is_builtin());
    CUCORE_CALL(cuGraphLaunch, exec_, stream.cu());
    if (__builtin_expect(last_stream_.load(std::memory_order_relaxed) != &stream, 0)) note_launch_stream(stream);
}

void Graph::upload(Stream &stream) {
    check_stream(stream);
    ScopedContext bind(stream.cu_context(), stream.is_builtin());
    CUCORE_CALL(cuGraphUpload, exec_, stream.cu());
}

void Graph::update(GraphDefinition &definition, cucore_graph_update_result_t &result) {
    definition.check_live();
    CUgraphExecUpdateResultInfo info{};
    CUresult status;
    {
        ScopedContext bind(context_->cu());
        status = CUCORE_DRIVER(cuGraphExecUpdate)(exec_, definition.cu(), &info);
    }
    result = static_cast<cucore_graph_update_result_t>(info.result);
    if (status == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE) {
        if (result == CUCORE_GRAPH_UPDATE_SUCCESS) result = CUCORE_GRAPH_UPDATE_ERROR;
        throw Error(CUCORE_ERROR_INVALID_STATE,
                    std::string("the driver refused to update the graph: ") + update_result_name(info.result) +
                        node_text(info.errorNode) + "; the graph is unchanged",
                    static_cast<int>(status));
    }
    check(status, "cuGraphExecUpdate");
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto &held : attachments_)
        if (held == definition.attachments_ref()) return;
    attachments_.push_back(definition.attachments_ref());
}

void Graph::set_kernel_node(GraphNode &node, const KernelRequest &request) {
    check_node(node);
    node.require_type(CU_GRAPH_NODE_TYPE_KERNEL, "setting a kernel");
    Ref<Kernel> kernel;
    if (request.kernel) {
        kernel = Ref<Kernel>(request.kernel);
    } else {
        node.kernel_config(kernel);
        if (!kernel)
            throw_invalid_argument("argument 'kernel' is NULL, but the node's kernel was not set by this library; "
                                   "pass the kernel");
    }
    const CUDA_KERNEL_NODE_PARAMS params = kernel_params(request, *kernel, *context_);
    {
        ScopedContext bind(context_->cu());
        CUCORE_CALL(cuGraphExecKernelNodeSetParams, exec_, node.cu(), &params);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!updates_) updates_ = std::make_shared<GraphAttachments>();
    updates_->keep(Ref<Object>(kernel.get()));
}

void Graph::set_memcpy_node(GraphNode &node, const MemcpyRequest &request) {
    check_node(node);
    node.require_type(CU_GRAPH_NODE_TYPE_MEMCPY, "setting a copy");
    const CUDA_MEMCPY3D params = memcpy_params(request);
    {
        ScopedContext bind(context_->cu());
        CUCORE_CALL(cuGraphExecMemcpyNodeSetParams, exec_, node.cu(), &params, context_->cu());
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!updates_) updates_ = std::make_shared<GraphAttachments>();
    updates_->keep_buffer(*request.dst);
    updates_->keep_buffer(*request.src);
}

void Graph::set_memset_node(GraphNode &node, const MemsetRequest &request) {
    check_node(node);
    node.require_type(CU_GRAPH_NODE_TYPE_MEMSET, "setting a fill");
    const CUDA_MEMSET_NODE_PARAMS params = memset_params(request);
    {
        ScopedContext bind(context_->cu());
        CUCORE_CALL(cuGraphExecMemsetNodeSetParams, exec_, node.cu(), &params, context_->cu());
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!updates_) updates_ = std::make_shared<GraphAttachments>();
    updates_->keep_buffer(*request.buffer);
}

void Graph::set_host_callback_node(GraphNode &node, const HostClosure &closure) {
    auto pending = own(closure, [](HostClosure unused) noexcept { release_closure(unused); });
    check_node(node);
    node.require_type(CU_GRAPH_NODE_TYPE_HOST, "setting a host callback");
    CUDA_HOST_NODE_PARAMS params{};
    params.fn = closure.fn;
    params.userData = closure.user_data;
    CUCORE_CALL(cuGraphExecHostNodeSetParams, exec_, node.cu(), &params);
    std::lock_guard<std::mutex> lock(mutex_);
    if (!updates_) updates_ = std::make_shared<GraphAttachments>();
    updates_->keep_closure(closure);
    pending.release();
}

void Graph::set_event_node(GraphNode &node, Event &event) {
    check_node(node);
    const CUgraphNodeType type = node.require_event_node("setting an event");
    {
        ScopedContext bind(context_->cu());
        if (type == CU_GRAPH_NODE_TYPE_EVENT_RECORD)
            CUCORE_CALL(cuGraphExecEventRecordNodeSetEvent, exec_, node.cu(), event.cu());
        else
            CUCORE_CALL(cuGraphExecEventWaitNodeSetEvent, exec_, node.cu(), event.cu());
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!updates_) updates_ = std::make_shared<GraphAttachments>();
    updates_->keep(Ref<Object>(&event));
    event.note_graph_use(type == CU_GRAPH_NODE_TYPE_EVENT_RECORD);
}

void Graph::set_child_graph_node(GraphNode &node, GraphDefinition &child) {
    check_node(node);
    node.require_type(CU_GRAPH_NODE_TYPE_GRAPH, "setting a child graph");
    child.check_live("child");
    {
        ScopedContext bind(context_->cu());
        CUCORE_CALL(cuGraphExecChildGraphNodeSetParams, exec_, node.cu(), child.cu());
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!updates_) updates_ = std::make_shared<GraphAttachments>();
    updates_->keep_attachments(child.attachments_ref());
}

namespace {
// Only kernel, copy and fill nodes can be enabled and disabled.
void require_switchable(const GraphNode &node) {
    const CUgraphNodeType type = node.driver_type();
    if (type != CU_GRAPH_NODE_TYPE_KERNEL && type != CU_GRAPH_NODE_TYPE_MEMCPY && type != CU_GRAPH_NODE_TYPE_MEMSET)
        throw_invalid_argument(std::string("argument 'node' is a ") + node_type_name(type) +
                               " node; only kernel, memcpy and memset nodes are enabled and disabled");
}
}  // namespace

void Graph::set_node_enabled(GraphNode &node, bool enabled) {
    check_node(node);
    require_switchable(node);
    CUCORE_CALL(cuGraphNodeSetEnabled, exec_, node.cu(), enabled ? 1u : 0u);
}

bool Graph::node_enabled(GraphNode &node) {
    check_node(node);
    require_switchable(node);
    unsigned enabled = 0;
    CUCORE_CALL(cuGraphNodeGetEnabled, exec_, node.cu(), &enabled);
    return enabled != 0;
}

}  // namespace cucore::core
