// The fake driver's graphs and stream capture, called directly (no library): what libcucore's graph tests rely
// on it for. Captured work runs only when its graph is launched, in a topological order; clones map their nodes;
// an update that changes the topology is refused; user objects die with the last graph or executable holding
// them; conditional nodes follow the conditions kernels set; the DOT output names the nodes' types.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace {

// Appends its number to a list when its node or stream operation runs.
struct Step {
    std::vector<int> *order;
    int number;
    static void run(void *self) {
        auto *step = static_cast<Step *>(self);
        step->order->push_back(step->number);
    }
};

// Counts its destructor's runs.
void count_destruction(void *counter) { ++*static_cast<int *>(counter); }

class FakeGraphsTest : public FakeDriverTest {
  protected:
    void SetUp() override {
        FakeDriverTest::SetUp();
        ASSERT_EQ(t().cuDevicePrimaryCtxRetain(&context_, 0), CUDA_SUCCESS);
        fake::set_current_context(context_);
        ASSERT_EQ(t().cuDeviceGetMemPool(&pool_, 0), CUDA_SUCCESS);
        ASSERT_EQ(t().cuStreamCreateWithPriority(&stream_, CU_STREAM_NON_BLOCKING, 0), CUDA_SUCCESS);
    }
    void TearDown() override {
        EXPECT_EQ(t().cuStreamDestroy(stream_), CUDA_SUCCESS);
        for (CUdeviceptr address : allocations_) EXPECT_EQ(t().cuMemFreeAsync(address, nullptr), CUDA_SUCCESS);
        EXPECT_EQ(fake::counters().graphs, 0) << "graphs leaked";
        EXPECT_EQ(fake::counters().graph_execs, 0) << "executables leaked";
        EXPECT_EQ(fake::counters().user_objects, 0) << "user objects leaked";
        EXPECT_EQ(fake::graph_run_errors(), 0) << "a node could not run";
        fake::set_current_context(nullptr);
        EXPECT_EQ(t().cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
        before_uninstall();
        FakeDriverTest::TearDown();
    }
    virtual void before_uninstall() {}
    static cucore::driver::Table &t() { return fake::table(); }
    // `size` bytes of device memory from the default pool, freed at the end of the test.
    CUdeviceptr device_memory(size_t size) {
        CUdeviceptr address = 0;
        EXPECT_EQ(t().cuMemAllocFromPoolAsync(&address, size, pool_, stream_), CUDA_SUCCESS);
        allocations_.push_back(address);
        return address;
    }
    CUstream new_stream() {
        CUstream s = nullptr;
        EXPECT_EQ(t().cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, 0), CUDA_SUCCESS);
        return s;
    }
    // A function of a kernel named `name` with parameters of `sizes`.
    CUfunction function(const std::string &name, std::vector<size_t> sizes) {
        fake::KernelSpec spec;
        spec.name = name;
        spec.param_sizes = std::move(sizes);
        return fake::make_function(fake::make_kernel(spec), context_);
    }
    static CUDA_KERNEL_NODE_PARAMS_v2 kernel_node(CUfunction f, void **args) {
        CUDA_KERNEL_NODE_PARAMS_v2 p{};
        p.func = f;
        p.gridDimX = p.gridDimY = p.gridDimZ = 1;
        p.blockDimX = p.blockDimY = p.blockDimZ = 1;
        p.kernelParams = args;
        return p;
    }
    static CUDA_MEMSET_NODE_PARAMS memset_node(CUdeviceptr dst, unsigned value, size_t width) {
        return CUDA_MEMSET_NODE_PARAMS{dst, 0, value, 1, width, 1};
    }
    CUgraphNode add_host(CUgraph graph, Step *step, std::vector<CUgraphNode> dependencies = {}) {
        CUDA_HOST_NODE_PARAMS p{&Step::run, step};
        CUgraphNode node = nullptr;
        EXPECT_EQ(t().cuGraphAddHostNode(&node, graph, dependencies.data(), dependencies.size(), &p), CUDA_SUCCESS);
        return node;
    }
    CUgraphExec instantiate(CUgraph graph, cuuint64_t flags = 0) {
        CUDA_GRAPH_INSTANTIATE_PARAMS params{};
        params.flags = flags;
        CUgraphExec exec = nullptr;
        EXPECT_EQ(t().cuGraphInstantiateWithParams(&exec, graph, &params), CUDA_SUCCESS);
        EXPECT_EQ(params.result_out, CUDA_GRAPH_INSTANTIATE_SUCCESS);
        return exec;
    }
    void launch(CUgraphExec exec) {
        ASSERT_EQ(t().cuGraphLaunch(exec, stream_), CUDA_SUCCESS);
        ASSERT_EQ(t().cuStreamSynchronize(stream_), CUDA_SUCCESS);
    }
    static std::vector<CUgraphNode> nodes(CUgraph graph) {
        size_t count = 0;
        EXPECT_EQ(t().cuGraphGetNodes(graph, nullptr, &count), CUDA_SUCCESS);
        std::vector<CUgraphNode> out(count);
        EXPECT_EQ(t().cuGraphGetNodes(graph, out.data(), &count), CUDA_SUCCESS);
        return out;
    }
    static unsigned char byte_at(CUdeviceptr address) { return *reinterpret_cast<const unsigned char *>(address); }

    CUcontext context_ = nullptr;
    CUmemoryPool pool_ = nullptr;
    CUstream stream_ = nullptr;
    std::vector<CUdeviceptr> allocations_;
};

TEST_F(FakeGraphsTest, CapturedCopiesAndHostFunctionsRunWhenTheGraphIsLaunched) {
    const std::vector<unsigned char> source{1, 2, 3, 4, 5, 6, 7, 8};
    std::vector<unsigned char> result(8, 0);
    const CUdeviceptr device = device_memory(8);
    std::vector<int> order;
    Step first{&order, 1}, second{&order, 2};
    ASSERT_EQ(t().cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    ASSERT_EQ(t().cuStreamIsCapturing(stream_, &status), CUDA_SUCCESS);
    EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    ASSERT_EQ(t().cuMemcpyAsync(device, reinterpret_cast<CUdeviceptr>(source.data()), 8, stream_), CUDA_SUCCESS);
    ASSERT_EQ(t().cuLaunchHostFunc(stream_, &Step::run, &first), CUDA_SUCCESS);
    ASSERT_EQ(t().cuMemsetD8Async(device + 6, 0x42, 2, stream_), CUDA_SUCCESS);
    ASSERT_EQ(t().cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(result.data()), device, 8, stream_), CUDA_SUCCESS);
    ASSERT_EQ(t().cuLaunchHostFunc(stream_, &Step::run, &second), CUDA_SUCCESS);
    CUgraph graph = nullptr;
    ASSERT_EQ(t().cuStreamEndCapture(stream_, &graph), CUDA_SUCCESS);
    EXPECT_TRUE(order.empty()) << "captured work ran during the capture";
    EXPECT_EQ(result, std::vector<unsigned char>(8, 0));
    EXPECT_EQ(byte_at(device), fake::kFreshByte);
    const std::vector<CUgraphNode> captured = nodes(graph);
    ASSERT_EQ(captured.size(), 5u);
    CUgraphNodeType type;
    ASSERT_EQ(t().cuGraphNodeGetType(captured[1], &type), CUDA_SUCCESS);
    EXPECT_EQ(type, CU_GRAPH_NODE_TYPE_HOST);
    ASSERT_EQ(t().cuGraphNodeGetType(captured[2], &type), CUDA_SUCCESS);
    EXPECT_EQ(type, CU_GRAPH_NODE_TYPE_MEMSET);
    size_t edges = 0;
    ASSERT_EQ(t().cuGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges), CUDA_SUCCESS);
    EXPECT_EQ(edges, 4u);  // a chain

    CUgraphExec exec = instantiate(graph);
    launch(exec);
    EXPECT_EQ(result, (std::vector<unsigned char>{1, 2, 3, 4, 5, 6, 0x42, 0x42}));
    EXPECT_EQ(order, (std::vector<int>{1, 2}));
    launch(exec);
    EXPECT_EQ(order, (std::vector<int>{1, 2, 1, 2}));
    ASSERT_EQ(t().cuStreamIsCapturing(stream_, &status), CUDA_SUCCESS);
    EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_NONE);
    EXPECT_EQ(t().cuGraphExecDestroy(exec), CUDA_SUCCESS);
    EXPECT_EQ(t().cuGraphDestroy(graph), CUDA_SUCCESS);
}

TEST_F(FakeGraphsTest, NodesRunInATopologicalOrderNotTheirCreationOrder) {
    CUgraph graph = nullptr;
    ASSERT_EQ(t().cuGraphCreate(&graph, 0), CUDA_SUCCESS);
    std::vector<int> order;
    Step three{&order, 3}, one{&order, 1}, two{&order, 2};
    CUgraphNode last = add_host(graph, &three), first = add_host(graph, &one), middle = add_host(graph, &two);
    const CUgraphNode from[] = {first, middle}, to[] = {middle, last};
    ASSERT_EQ(t().cuGraphAddDependencies(graph, from, to, nullptr, 2), CUDA_SUCCESS);
    EXPECT_EQ(t().cuGraphAddDependencies(graph, from, to, nullptr, 1), CUDA_ERROR_INVALID_VALUE) << "an edge twice";
    CUgraphNode found[2] = {};
    size_t count = 2;
    ASSERT_EQ(t().cuGraphNodeGetDependencies(last, found, nullptr, &count), CUDA_SUCCESS);
    ASSERT_EQ(count, 1u);
    EXPECT_EQ(found[0], middle);
    EXPECT_EQ(found[1], nullptr);
    count = 2;
    ASSERT_EQ(t().cuGraphNodeGetDependentNodes(first, found, nullptr, &count), CUDA_SUCCESS);
    ASSERT_EQ(count, 1u);
    EXPECT_EQ(found[0], middle);
    CUgraphExec exec = instantiate(graph);
    launch(exec);
    EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
    EXPECT_EQ(t().cuGraphExecDestroy(exec), CUDA_SUCCESS);

    // A cycle cannot be instantiated.
    const CUgraphNode back_from[] = {last}, back_to[] = {first};
    ASSERT_EQ(t().cuGraphAddDependencies(graph, back_from, back_to, nullptr, 1), CUDA_SUCCESS);
    CUDA_GRAPH_INSTANTIATE_PARAMS params{};
    EXPECT_EQ(t().cuGraphInstantiateWithParams(&exec, graph, &params), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(params.result_out, CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE);
    ASSERT_EQ(t().cuGraphRemoveDependencies(graph, back_from, back_to, nullptr, 1), CUDA_SUCCESS);
    EXPECT_EQ(t().cuGraphRemoveDependencies(graph, back_from, back_to, nullptr, 1), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(t().cuGraphDestroy(graph), CUDA_SUCCESS);
}

TEST_F(FakeGraphsTest, AClonesNodesAreFoundFromTheOriginals) {
    CUgraph graph = nullptr, clone = nullptr, other = nullptr;
    ASSERT_EQ(t().cuGraphCreate(&graph, 0), CUDA_SUCCESS);
    ASSERT_EQ(t().cuGraphCreate(&other, 0), CUDA_SUCCESS);
    std::vector<int> order;
    Step one{&order, 1}, two{&order, 2};
    CUgraphNode a = add_host(graph, &one);
    CUgraphNode b = add_host(graph, &two, {a});
    CUgraphNode stranger = add_host(other, &one);
    ASSERT_EQ(t().cuGraphClone(&clone, graph), CUDA_SUCCESS);
    ASSERT_EQ(nodes(clone).size(), 2u);
    CUgraphNode a_copy = nullptr, b_copy = nullptr;
    ASSERT_EQ(t().cuGraphNodeFindInClone(&a_copy, a, clone), CUDA_SUCCESS);
    ASSERT_EQ(t().cuGraphNodeFindInClone(&b_copy, b, clone), CUDA_SUCCESS);
    EXPECT_NE(a_copy, a);
    EXPECT_EQ(nodes(clone), (std::vector<CUgraphNode>{a_copy, b_copy}));
    CUgraphNode dependency = nullptr;
    size_t count = 1;
    ASSERT_EQ(t().cuGraphNodeGetDependencies(b_copy, &dependency, nullptr, &count), CUDA_SUCCESS);
    EXPECT_EQ(dependency, a_copy);
    CUgraphNode none = nullptr;
    EXPECT_EQ(t().cuGraphNodeFindInClone(&none, stranger, clone), CUDA_ERROR_INVALID_VALUE);
    // The clone is a graph of its own: changing the original leaves it alone.
    ASSERT_EQ(t().cuGraphDestroyNode(b), CUDA_SUCCESS);
    EXPECT_EQ(nodes(graph).size(), 1u);
    EXPECT_EQ(nodes(clone).size(), 2u);
    CUgraphNodeType type;
    EXPECT_EQ(t().cuGraphNodeGetType(b, &type), CUDA_ERROR_INVALID_VALUE) << "a destroyed node";
    for (CUgraph g : {graph, clone, other}) EXPECT_EQ(t().cuGraphDestroy(g), CUDA_SUCCESS);
}

TEST_F(FakeGraphsTest, AnUpdateTakesNewParametersAndRefusesANewTopology) {
    const CUfunction f = function("scale", {4});
    int value = 7;
    void *args[] = {&value};
    const CUDA_KERNEL_NODE_PARAMS_v2 params = kernel_node(f, args);
    CUgraph original = nullptr, changed = nullptr, grown = nullptr;
    CUgraphNode node = nullptr, extra = nullptr;
    for (CUgraph *g : {&original, &changed, &grown}) {
        ASSERT_EQ(t().cuGraphCreate(g, 0), CUDA_SUCCESS);
        if (g == &changed) value = 9;
        ASSERT_EQ(t().cuGraphAddKernelNode(&node, *g, nullptr, 0, &params), CUDA_SUCCESS);
    }
    ASSERT_EQ(t().cuGraphAddEmptyNode(&extra, grown, &node, 1), CUDA_SUCCESS);
    CUgraphExec exec = instantiate(original);

    CUgraphExecUpdateResultInfo info{};
    EXPECT_EQ(t().cuGraphExecUpdate(exec, grown, &info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    EXPECT_EQ(info.result, CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
    EXPECT_EQ(info.errorNode, extra);
    launch(exec);
    int launched = 0;
    std::memcpy(&launched, fake::launches().back().args[0].data(), sizeof launched);
    EXPECT_EQ(launched, 7) << "a refused update changed nothing";

    ASSERT_EQ(t().cuGraphExecUpdate(exec, changed, &info), CUDA_SUCCESS);
    EXPECT_EQ(info.result, CU_GRAPH_EXEC_UPDATE_SUCCESS);
    launch(exec);
    std::memcpy(&launched, fake::launches().back().args[0].data(), sizeof launched);
    EXPECT_EQ(launched, 9);
    EXPECT_EQ(fake::launches().back().config.hStream, stream_);

    // A per-node update of the executable, through the original graph's node, and disabling it.
    CUgraphNode original_node = nodes(original)[0];
    value = 11;
    ASSERT_EQ(t().cuGraphExecKernelNodeSetParams(exec, original_node, &params), CUDA_SUCCESS);
    launch(exec);
    std::memcpy(&launched, fake::launches().back().args[0].data(), sizeof launched);
    EXPECT_EQ(launched, 11);
    ASSERT_EQ(t().cuGraphNodeSetEnabled(exec, original_node, 0), CUDA_SUCCESS);
    unsigned enabled = 1;
    ASSERT_EQ(t().cuGraphNodeGetEnabled(exec, original_node, &enabled), CUDA_SUCCESS);
    EXPECT_EQ(enabled, 0u);
    const size_t before = fake::launches().size();
    launch(exec);
    EXPECT_EQ(fake::launches().size(), before) << "a disabled kernel node ran";
    EXPECT_EQ(t().cuGraphExecDestroy(exec), CUDA_SUCCESS);
    for (CUgraph g : {original, changed, grown}) EXPECT_EQ(t().cuGraphDestroy(g), CUDA_SUCCESS);
}

TEST_F(FakeGraphsTest, AUserObjectIsDestroyedOnceWhenTheLastGraphOrExecutableHoldingItGoes) {
    int destroyed = 0;
    CUuserObject object = nullptr;
    ASSERT_EQ(t().cuUserObjectCreate(&object, &destroyed, &count_destruction, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC),
              CUDA_SUCCESS);
    CUgraph graph = nullptr, clone = nullptr;
    ASSERT_EQ(t().cuGraphCreate(&graph, 0), CUDA_SUCCESS);
    ASSERT_EQ(t().cuGraphRetainUserObject(graph, object, 1, CU_GRAPH_USER_OBJECT_MOVE), CUDA_SUCCESS);
    ASSERT_EQ(t().cuGraphClone(&clone, graph), CUDA_SUCCESS);
    CUgraphExec exec = instantiate(graph);
    ASSERT_EQ(t().cuGraphDestroy(graph), CUDA_SUCCESS);
    ASSERT_EQ(t().cuGraphDestroy(clone), CUDA_SUCCESS);
    EXPECT_EQ(destroyed, 0) << "the executable still holds it";
    ASSERT_EQ(t().cuGraphExecDestroy(exec), CUDA_SUCCESS);
    EXPECT_EQ(destroyed, 1);

    // A caller's own reference keeps it past the graph's.
    ASSERT_EQ(t().cuUserObjectCreate(&object, &destroyed, &count_destruction, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC),
              CUDA_SUCCESS);
    ASSERT_EQ(t().cuGraphCreate(&graph, 0), CUDA_SUCCESS);
    ASSERT_EQ(t().cuGraphRetainUserObject(graph, object, 2, 0), CUDA_SUCCESS);
    ASSERT_EQ(t().cuGraphDestroy(graph), CUDA_SUCCESS);
    EXPECT_EQ(destroyed, 1);
    ASSERT_EQ(t().cuUserObjectRelease(object, 1), CUDA_SUCCESS);
    EXPECT_EQ(destroyed, 2);
    EXPECT_EQ(t().cuUserObjectRelease(object, 1), CUDA_ERROR_INVALID_VALUE) << "a dead object";
}

TEST_F(FakeGraphsTest, AnIfNodeTakesTheBranchAKernelChose) {
    const CUfunction set = function(fake::kSetConditionKernel, {8, 4});
    const CUdeviceptr flag = device_memory(1);
    CUgraph graph = nullptr;
    ASSERT_EQ(t().cuGraphCreate(&graph, 0), CUDA_SUCCESS);
    CUgraphConditionalHandle handle = 0;
    ASSERT_EQ(t().cuGraphConditionalHandleCreate(&handle, graph, context_, 0, 0), CUDA_SUCCESS);
    unsigned choice = 1;
    void *args[] = {&handle, &choice};
    const CUDA_KERNEL_NODE_PARAMS_v2 chooser = kernel_node(set, args);
    CUgraphNode decide = nullptr, branch = nullptr;
    ASSERT_EQ(t().cuGraphAddKernelNode(&decide, graph, nullptr, 0, &chooser), CUDA_SUCCESS);
    CUgraphNodeParams params{};
    params.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    params.conditional = {handle, CU_GRAPH_COND_TYPE_IF, 2, nullptr, context_};
    ASSERT_EQ(t().cuGraphAddNode(&branch, graph, &decide, nullptr, 1, &params), CUDA_SUCCESS);
    ASSERT_NE(params.conditional.phGraph_out, nullptr);
    CUgraph then_body = params.conditional.phGraph_out[0], else_body = params.conditional.phGraph_out[1];
    CUgraphNode fill = nullptr;
    const CUDA_MEMSET_NODE_PARAMS one = memset_node(flag, 1, 1), two = memset_node(flag, 2, 1);
    ASSERT_EQ(t().cuGraphAddMemsetNode(&fill, then_body, nullptr, 0, &one, context_), CUDA_SUCCESS);
    ASSERT_EQ(t().cuGraphAddMemsetNode(&fill, else_body, nullptr, 0, &two, context_), CUDA_SUCCESS);
    std::vector<int> order;
    Step taken{&order, 1};
    CUDA_HOST_NODE_PARAMS host{&Step::run, &taken};
    ASSERT_EQ(t().cuGraphAddHostNode(&fill, then_body, nullptr, 0, &host), CUDA_SUCCESS) << "as CUDA 13 takes it";
    CUevent event = nullptr;
    ASSERT_EQ(t().cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
    EXPECT_EQ(t().cuGraphAddEventRecordNode(&fill, then_body, nullptr, 0, event), CUDA_ERROR_NOT_SUPPORTED)
        << "bodies take no event nodes";
    EXPECT_EQ(t().cuEventDestroy(event), CUDA_SUCCESS);
    EXPECT_EQ(t().cuGraphDestroy(then_body), CUDA_ERROR_INVALID_VALUE) << "a body goes with its node";

    CUgraphExec exec = instantiate(graph);
    launch(exec);
    EXPECT_EQ(byte_at(flag), 1);
    EXPECT_EQ(order, std::vector<int>{1});
    choice = 0;
    ASSERT_EQ(t().cuGraphExecKernelNodeSetParams(exec, decide, &chooser), CUDA_SUCCESS);
    launch(exec);
    EXPECT_EQ(byte_at(flag), 2);
    EXPECT_EQ(order, std::vector<int>{1}) << "the other branch ran";
    EXPECT_EQ(fake::condition_value(handle), 0);
    EXPECT_EQ(t().cuGraphExecDestroy(exec), CUDA_SUCCESS);
    EXPECT_EQ(t().cuGraphDestroy(graph), CUDA_SUCCESS);
}

TEST_F(FakeGraphsTest, AWhileNodeCountsToTheLimitItsBodySets) {
    const CUfunction count = function(fake::kCountConditionKernel, {8, 8, 4});
    const CUdeviceptr counter = device_memory(sizeof(int));
    CUgraph graph = nullptr;
    ASSERT_EQ(t().cuGraphCreate(&graph, 0), CUDA_SUCCESS);
    CUgraphConditionalHandle handle = 0;
    ASSERT_EQ(t().cuGraphConditionalHandleCreate(&handle, graph, context_, 1, CU_GRAPH_COND_ASSIGN_DEFAULT),
              CUDA_SUCCESS);
    CUgraphNode zero = nullptr, loop = nullptr, body_node = nullptr;
    const CUDA_MEMSET_NODE_PARAMS clear{counter, 0, 0, 4, 1, 1};
    ASSERT_EQ(t().cuGraphAddMemsetNode(&zero, graph, nullptr, 0, &clear, context_), CUDA_SUCCESS);
    CUgraphNodeParams params{};
    params.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    params.conditional = {handle, CU_GRAPH_COND_TYPE_WHILE, 1, nullptr, context_};
    ASSERT_EQ(t().cuGraphAddNode(&loop, graph, &zero, nullptr, 1, &params), CUDA_SUCCESS);
    int limit = 5;
    void *args[] = {&handle, const_cast<CUdeviceptr *>(&counter), &limit};
    const CUDA_KERNEL_NODE_PARAMS_v2 step = kernel_node(count, args);
    ASSERT_EQ(t().cuGraphAddKernelNode(&body_node, params.conditional.phGraph_out[0], nullptr, 0, &step), CUDA_SUCCESS);

    CUgraphExec exec = instantiate(graph);
    const size_t before = fake::launches().size();
    launch(exec);
    int counted = 0;
    std::memcpy(&counted, reinterpret_cast<const void *>(counter), sizeof counted);
    EXPECT_EQ(counted, 5);
    EXPECT_EQ(fake::launches().size() - before, 5u);
    // The default is assigned again at each launch: the loop runs again.
    launch(exec);
    std::memcpy(&counted, reinterpret_cast<const void *>(counter), sizeof counted);
    EXPECT_EQ(counted, 5);
    CUDA_GRAPH_INSTANTIATE_PARAMS again{};
    CUgraphExec second = nullptr;
    EXPECT_EQ(t().cuGraphInstantiateWithParams(&second, graph, &again), CUDA_ERROR_INVALID_VALUE)
        << "one executable at a time of a graph with conditional nodes";
    CUgraph clone = nullptr;
    EXPECT_EQ(t().cuGraphClone(&clone, graph), CUDA_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(t().cuGraphExecDestroy(exec), CUDA_SUCCESS);
    EXPECT_EQ(t().cuGraphDestroy(graph), CUDA_SUCCESS);
}

TEST_F(FakeGraphsTest, AConditionNoNodeUsesFailsTheInstantiation) {
    CUgraph graph = nullptr;
    ASSERT_EQ(t().cuGraphCreate(&graph, 0), CUDA_SUCCESS);
    CUgraphConditionalHandle handle = 0;
    ASSERT_EQ(t().cuGraphConditionalHandleCreate(&handle, graph, context_, 0, 0), CUDA_SUCCESS);
    CUDA_GRAPH_INSTANTIATE_PARAMS params{};
    CUgraphExec exec = nullptr;
    EXPECT_EQ(t().cuGraphInstantiateWithParams(&exec, graph, &params), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(params.result_out, CUDA_GRAPH_INSTANTIATE_CONDITIONAL_HANDLE_UNUSED);
    EXPECT_TRUE(fake::set_condition(handle, 3));
    EXPECT_EQ(fake::condition_value(handle), 3);
    EXPECT_EQ(t().cuGraphDestroy(graph), CUDA_SUCCESS);
}

TEST_F(FakeGraphsTest, TheDotFileNamesEveryNodesType) {
    const CUfunction f = function("saxpy", {});
    const CUdeviceptr memory = device_memory(16);
    CUgraph graph = nullptr;
    ASSERT_EQ(t().cuGraphCreate(&graph, 0), CUDA_SUCCESS);
    CUgraphNode kernel = nullptr, fill = nullptr, copy = nullptr, empty = nullptr;
    const CUDA_KERNEL_NODE_PARAMS_v2 launch_params = kernel_node(f, nullptr);
    ASSERT_EQ(t().cuGraphAddKernelNode(&kernel, graph, nullptr, 0, &launch_params), CUDA_SUCCESS);
    const CUDA_MEMSET_NODE_PARAMS zero = memset_node(memory, 0, 16);
    ASSERT_EQ(t().cuGraphAddMemsetNode(&fill, graph, &kernel, 1, &zero, context_), CUDA_SUCCESS);
    CUDA_MEMCPY3D c{};
    c.srcMemoryType = c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = memory;
    c.dstDevice = memory + 8;
    c.WidthInBytes = c.srcPitch = c.dstPitch = 8;
    c.Height = c.Depth = 1;
    ASSERT_EQ(t().cuGraphAddMemcpyNode(&copy, graph, &fill, 1, &c, context_), CUDA_SUCCESS);
    Step step{nullptr, 0};
    add_host(graph, &step, {copy});
    ASSERT_EQ(t().cuGraphAddEmptyNode(&empty, graph, nullptr, 0), CUDA_SUCCESS);
    const std::string path = ::testing::TempDir() + "fake_graphs_test.dot";
    ASSERT_EQ(t().cuGraphDebugDotPrint(graph, path.c_str(), CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE), CUDA_SUCCESS);
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    const std::string dot = text.str();
    EXPECT_EQ(dot.rfind("digraph", 0), 0u);
    for (const char *word : {"kernel", "saxpy", "memset", "memcpy", "host", "empty", "->"})
        EXPECT_NE(dot.find(word), std::string::npos) << word << " missing from\n" << dot;
    std::remove(path.c_str());
    EXPECT_EQ(t().cuGraphDebugDotPrint(graph, "/nonexistent/dir/g.dot", 0), CUDA_ERROR_OPERATING_SYSTEM);
    EXPECT_EQ(t().cuGraphDestroy(graph), CUDA_SUCCESS);
}

TEST_F(FakeGraphsTest, ForkedStreamsJoinTheCaptureAndMustJoinBack) {
    CUstream other = new_stream();
    CUevent fork = nullptr, join = nullptr;
    ASSERT_EQ(t().cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
    ASSERT_EQ(t().cuEventCreate(&join, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
    std::vector<int> order;
    Step one{&order, 1}, two{&order, 2}, three{&order, 3};
    for (bool joined : {true, false}) {
        order.clear();
        ASSERT_EQ(t().cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
        ASSERT_EQ(t().cuLaunchHostFunc(stream_, &Step::run, &one), CUDA_SUCCESS);
        ASSERT_EQ(t().cuEventRecord(fork, stream_), CUDA_SUCCESS);
        ASSERT_EQ(t().cuStreamWaitEvent(other, fork, 0), CUDA_SUCCESS);
        CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
        ASSERT_EQ(t().cuStreamIsCapturing(other, &status), CUDA_SUCCESS);
        EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_ACTIVE) << "the waiting stream joined the capture";
        ASSERT_EQ(t().cuLaunchHostFunc(other, &Step::run, &two), CUDA_SUCCESS);
        if (joined) {
            ASSERT_EQ(t().cuEventRecord(join, other), CUDA_SUCCESS);
            ASSERT_EQ(t().cuStreamWaitEvent(stream_, join, 0), CUDA_SUCCESS);
        }
        ASSERT_EQ(t().cuLaunchHostFunc(stream_, &Step::run, &three), CUDA_SUCCESS);
        CUgraph graph = nullptr;
        if (!joined) {
            EXPECT_EQ(t().cuStreamEndCapture(stream_, &graph), CUDA_ERROR_STREAM_CAPTURE_UNJOINED);
            EXPECT_EQ(graph, nullptr);
            ASSERT_EQ(t().cuStreamIsCapturing(other, &status), CUDA_SUCCESS);
            EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_NONE) << "the capture ended for every stream";
            break;
        }
        ASSERT_EQ(t().cuStreamEndCapture(stream_, &graph), CUDA_SUCCESS);
        EXPECT_TRUE(order.empty());
        const std::vector<CUgraphNode> captured = nodes(graph);
        ASSERT_EQ(captured.size(), 3u);
        size_t count = 2;
        CUgraphNode dependencies[2] = {};
        ASSERT_EQ(t().cuGraphNodeGetDependencies(captured[2], dependencies, nullptr, &count), CUDA_SUCCESS);
        EXPECT_EQ(count, 2u) << "the last node waits for both branches";
        CUgraphExec exec = instantiate(graph);
        launch(exec);
        EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
        EXPECT_EQ(t().cuGraphExecDestroy(exec), CUDA_SUCCESS);
        EXPECT_EQ(t().cuGraphDestroy(graph), CUDA_SUCCESS);
    }
    // Both streams are usable again.
    order.clear();
    ASSERT_EQ(t().cuLaunchHostFunc(other, &Step::run, &one), CUDA_SUCCESS);
    ASSERT_EQ(t().cuStreamSynchronize(other), CUDA_SUCCESS);
    EXPECT_EQ(order, std::vector<int>{1});
    EXPECT_EQ(t().cuEventDestroy(fork), CUDA_SUCCESS);
    EXPECT_EQ(t().cuEventDestroy(join), CUDA_SUCCESS);
    EXPECT_EQ(t().cuStreamDestroy(other), CUDA_SUCCESS);
}

TEST_F(FakeGraphsTest, ASynchronizeDuringCaptureInvalidatesItAndTheStreamStaysUsable) {
    std::vector<int> order;
    Step one{&order, 1};
    ASSERT_EQ(t().cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    std::vector<unsigned char> host(4, 0);
    EXPECT_EQ(t().cuMemcpyDtoH(host.data(), reinterpret_cast<CUdeviceptr>(host.data()), 4),
              CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
        << "a synchronous copy during a global capture";
    EXPECT_EQ(t().cuStreamSynchronize(stream_), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    ASSERT_EQ(t().cuStreamIsCapturing(stream_, &status), CUDA_SUCCESS);
    EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_INVALIDATED);
    EXPECT_EQ(t().cuLaunchHostFunc(stream_, &Step::run, &one), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    CUgraph graph = reinterpret_cast<CUgraph>(&order);
    EXPECT_EQ(t().cuStreamEndCapture(stream_, &graph), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    EXPECT_EQ(graph, nullptr);
    EXPECT_EQ(t().cuStreamEndCapture(stream_, &graph), CUDA_ERROR_ILLEGAL_STATE) << "not capturing any more";
    ASSERT_EQ(t().cuLaunchHostFunc(stream_, &Step::run, &one), CUDA_SUCCESS);
    ASSERT_EQ(t().cuStreamSynchronize(stream_), CUDA_SUCCESS);
    EXPECT_EQ(order, std::vector<int>{1});
    EXPECT_EQ(t().cuStreamBeginCapture(nullptr, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
        << "the legacy stream cannot capture";
}

TEST_F(FakeGraphsTest, GraphMemoryIsLiveBetweenItsAllocationAndFreeNodes) {
    std::vector<unsigned char> result(16, 0);
    ASSERT_EQ(t().cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
    CUdeviceptr memory = 0;
    ASSERT_EQ(t().cuMemAllocAsync(&memory, 16, stream_), CUDA_SUCCESS);
    ASSERT_NE(memory, 0u);
    ASSERT_EQ(t().cuMemsetD8Async(memory, 0x5A, 16, stream_), CUDA_SUCCESS);
    ASSERT_EQ(t().cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(result.data()), memory, 16, stream_), CUDA_SUCCESS);
    ASSERT_EQ(t().cuMemFreeAsync(memory, stream_), CUDA_SUCCESS);
    CUgraph graph = nullptr;
    ASSERT_EQ(t().cuStreamEndCapture(stream_, &graph), CUDA_SUCCESS);
    const std::vector<CUgraphNode> captured = nodes(graph);
    ASSERT_EQ(captured.size(), 4u);
    CUDA_MEM_ALLOC_NODE_PARAMS alloc{};
    ASSERT_EQ(t().cuGraphMemAllocNodeGetParams(captured[0], &alloc), CUDA_SUCCESS);
    EXPECT_EQ(alloc.dptr, memory);
    EXPECT_EQ(alloc.bytesize, 16u);
    EXPECT_EQ(fake::counters().allocations, 0) << "not allocated before the node runs";

    CUgraphExec exec = instantiate(graph);
    launch(exec);
    EXPECT_EQ(result, std::vector<unsigned char>(16, 0x5A));
    launch(exec);  // again: the same memory, kept by the executable
    EXPECT_EQ(result, std::vector<unsigned char>(16, 0x5A));
    cuuint64_t value = 0;
    ASSERT_EQ(t().cuDeviceGetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &value), CUDA_SUCCESS);
    EXPECT_EQ(value, 16u) << "freed in the graph, still the executable's";
    ASSERT_EQ(t().cuDeviceGetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &value), CUDA_SUCCESS);
    EXPECT_EQ(value, 16u);
    ASSERT_EQ(t().cuDeviceGraphMemTrim(0), CUDA_SUCCESS);
    ASSERT_EQ(t().cuDeviceGetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, &value), CUDA_SUCCESS);
    EXPECT_EQ(value, 16u) << "a trim keeps what an executable holds";
    EXPECT_EQ(t().cuGraphExecDestroy(exec), CUDA_SUCCESS);
    ASSERT_EQ(t().cuDeviceGetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &value), CUDA_SUCCESS);
    EXPECT_EQ(value, 0u);
    ASSERT_EQ(t().cuDeviceGraphMemTrim(0), CUDA_SUCCESS);
    ASSERT_EQ(t().cuDeviceGetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, &value), CUDA_SUCCESS);
    EXPECT_EQ(value, 0u);
    cuuint64_t zero = 0;
    ASSERT_EQ(t().cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &zero), CUDA_SUCCESS);
    ASSERT_EQ(t().cuDeviceGetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &value), CUDA_SUCCESS);
    EXPECT_EQ(value, 0u);
    cuuint64_t one = 1;
    EXPECT_EQ(t().cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &one), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(t().cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &zero), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(t().cuGraphDestroy(graph), CUDA_SUCCESS);

    // Outside a capture, cuMemAllocAsync allocates from the device's default pool.
    ASSERT_EQ(t().cuMemAllocAsync(&memory, 16, stream_), CUDA_SUCCESS);
    EXPECT_EQ(fake::counters().allocations, 1);
    ASSERT_EQ(t().cuMemFreeAsync(memory, stream_), CUDA_SUCCESS);
}

TEST_F(FakeGraphsTest, AGraphAllocationNotFreedRefusesTheNextLaunchUnlessAutoFreed) {
    CUgraph graph = nullptr;
    ASSERT_EQ(t().cuGraphCreate(&graph, 0), CUDA_SUCCESS);
    CUDA_MEM_ALLOC_NODE_PARAMS alloc{};
    alloc.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    alloc.poolProps.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    alloc.bytesize = 64;
    CUgraphNode node = nullptr;
    ASSERT_EQ(t().cuGraphAddMemAllocNode(&node, graph, nullptr, 0, &alloc), CUDA_SUCCESS);
    CUgraph parent = nullptr;
    ASSERT_EQ(t().cuGraphCreate(&parent, 0), CUDA_SUCCESS);
    CUgraphNode child = nullptr;
    EXPECT_EQ(t().cuGraphAddChildGraphNode(&child, parent, nullptr, 0, graph), CUDA_ERROR_INVALID_VALUE)
        << "a copied child graph holds no memory nodes";
    EXPECT_EQ(t().cuGraphDestroy(parent), CUDA_SUCCESS);
    CUDA_GRAPH_INSTANTIATE_PARAMS device_launch{};
    device_launch.flags = CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH;
    CUgraphExec refused = nullptr;
    EXPECT_EQ(t().cuGraphInstantiateWithParams(&refused, graph, &device_launch), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(device_launch.result_out, CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED);
    for (cuuint64_t flags : {cuuint64_t{0}, cuuint64_t{CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH}}) {
        CUgraphExec exec = instantiate(graph, flags);
        launch(exec);
        EXPECT_EQ(fake::counters().allocations, 1);
        if (flags) launch(exec);
        else EXPECT_EQ(t().cuGraphLaunch(exec, stream_), CUDA_ERROR_INVALID_VALUE);
        EXPECT_EQ(fake::counters().allocations, 1);
        ASSERT_EQ(t().cuMemFreeAsync(alloc.dptr, stream_), CUDA_SUCCESS);  // graph memory is freed like pool memory
        ASSERT_EQ(t().cuStreamSynchronize(stream_), CUDA_SUCCESS);
        EXPECT_EQ(fake::counters().allocations, 0);
        EXPECT_EQ(t().cuGraphExecDestroy(exec), CUDA_SUCCESS);
    }
    EXPECT_EQ(t().cuGraphDestroy(graph), CUDA_SUCCESS);
}

TEST_F(FakeGraphsTest, GraphEntryPointsAreCountedAndCanBeFailed) {
    fake::reset_calls();
    CUgraph graph = nullptr;
    fake::fail_entry("cuGraphCreate", CUDA_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(t().cuGraphCreate(&graph, 0), CUDA_ERROR_OUT_OF_MEMORY);
    fake::fail_entry("");
    ASSERT_EQ(t().cuGraphCreate(&graph, 0), CUDA_SUCCESS);
    fake::fail_call(1);
    CUgraphExec exec = nullptr;
    CUDA_GRAPH_INSTANTIATE_PARAMS params{};
    EXPECT_EQ(t().cuGraphInstantiateWithParams(&exec, graph, &params), CUDA_ERROR_UNKNOWN);
    EXPECT_EQ(fake::counters().graph_execs, 0) << "a refused call changes nothing";
    EXPECT_EQ(t().cuGraphDestroy(graph), CUDA_SUCCESS);
    EXPECT_EQ(fake::calls(), 4);
}

// The shared library's way: the launch runs on the stream's worker thread, after the stream's earlier work.
class FakeGraphsWorkerTest : public FakeGraphsTest {
  protected:
    void SetUp() override {
        FakeDriverTest::SetUp();
        fake::install(2, fake::Streams::worker_threads);
        ASSERT_EQ(t().cuDevicePrimaryCtxRetain(&context_, 0), CUDA_SUCCESS);
        ASSERT_EQ(t().cuCtxSetCurrent(context_), CUDA_SUCCESS);
        ASSERT_EQ(t().cuDeviceGetMemPool(&pool_, 0), CUDA_SUCCESS);
        ASSERT_EQ(t().cuStreamCreateWithPriority(&stream_, CU_STREAM_NON_BLOCKING, 0), CUDA_SUCCESS);
    }
    void TearDown() override {
        EXPECT_EQ(t().cuCtxSynchronize(), CUDA_SUCCESS);
        FakeGraphsTest::TearDown();
    }
    void before_uninstall() override { fake::install(2); }  // waits for the workers
};

TEST_F(FakeGraphsWorkerTest, ALaunchRunsInStreamOrderAndRecordsItsEvents) {
    CUevent done = nullptr;
    ASSERT_EQ(t().cuEventCreate(&done, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
    CUgraph graph = nullptr;
    ASSERT_EQ(t().cuGraphCreate(&graph, 0), CUDA_SUCCESS);
    std::vector<int> order;
    Step one{&order, 1}, two{&order, 2};
    CUgraphNode host = add_host(graph, &two), record = nullptr;
    ASSERT_EQ(t().cuGraphAddEventRecordNode(&record, graph, &host, 1, done), CUDA_SUCCESS);
    CUgraphExec exec = instantiate(graph);
    ASSERT_EQ(t().cuLaunchHostFunc(stream_, &Step::run, &one), CUDA_SUCCESS);
    ASSERT_EQ(t().cuGraphLaunch(exec, stream_), CUDA_SUCCESS);
    ASSERT_EQ(t().cuEventSynchronize(done), CUDA_SUCCESS);
    EXPECT_EQ(order, (std::vector<int>{1, 2}));
    EXPECT_EQ(t().cuGraphExecDestroy(exec), CUDA_SUCCESS);  // may go while queued: it finishes first
    EXPECT_EQ(t().cuGraphDestroy(graph), CUDA_SUCCESS);
    EXPECT_EQ(t().cuEventDestroy(done), CUDA_SUCCESS);
}

}  // namespace
