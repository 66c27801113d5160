// The C++ façade of graphs (graph.hpp, graph_builder.hpp, graph_memory.hpp)
// against the fake driver, whose graphs really run (copies and fills move
// bytes, host nodes call back, kernel nodes are recorded as launches): the
// options' conversions, GraphDependencies, explicit definitions whose nodes
// run in order with their arguments packed as launch() packs them, node
// queries and identity, per-node and whole-graph updates, callables kept and
// released with their last owner, stream capture through builders (launch()
// on a builder, forks and joins, conditional bodies, callbacks), graph
// memory, lifetimes in any release order, and errors thrown with the C status.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "memory_facade_support.hpp"

namespace {

constexpr cucore_object_type_t kGraphTypes[] = {CUCORE_OBJECT_GRAPH_DEFINITION, CUCORE_OBJECT_GRAPH_NODE,
                                                CUCORE_OBJECT_GRAPH, CUCORE_OBJECT_GRAPH_BUILDER};

struct Pair { // a 16-byte struct passed by value
    std::int64_t a;
    double b;
};

class GraphFacadeTest : public MemoryFacadeFixture {
  protected:
    void SetUp() override {
        MemoryFacadeFixture::SetUp();
        for (std::size_t i = 0; i < 4; ++i) graph_objects_before_[i] = live(kGraphTypes[i]);
    }
    void TearDown() override {
        s_.synchronize();
        for (std::size_t i = 0; i < 4; ++i)
            EXPECT_EQ(live(kGraphTypes[i]), graph_objects_before_[i])
                << "leaked " << cucore_object_type_name(kGraphTypes[i]) << " objects";
        MemoryFacadeFixture::TearDown();
    }

    // A fake kernel with parameters of `sizes`, wrapped.
    static cucore::Kernel kernel(std::vector<size_t> sizes, const char *name = "k") {
        fake::KernelSpec spec;
        spec.name = name;
        spec.param_sizes = std::move(sizes);
        return cucore::Kernel::from_handle(fake::make_kernel(spec));
    }
    cucore::Buffer zeros(std::uint64_t size) {
        cucore::Buffer b = dev_.allocate(size, s_);
        b.fill(std::uint8_t{0}, s_);
        s_.synchronize();
        return b;
    }
    template <typename T>
    static void expect_bytes(const std::vector<unsigned char> &received, const T &expected, const char *what) {
        ASSERT_EQ(received.size(), sizeof(T)) << what;
        EXPECT_EQ(std::memcmp(received.data(), &expected, sizeof(T)), 0) << what;
    }

    std::size_t graph_objects_before_[4] = {};
};

// The options structs convert field by field and default to the C *_INIT macros.
TEST_F(GraphFacadeTest, OptionsConvertFieldByField) {
    const cucore_graph_complete_options_t init = CUCORE_GRAPH_COMPLETE_OPTIONS_INIT;
    const cucore_graph_complete_options_t dflt = cucore::GraphCompleteOptions{}.to_c();
    EXPECT_EQ(std::memcmp(&init, &dflt, sizeof init), 0) << "the defaults are the C *_INIT macro";
    cucore::GraphCompleteOptions co;
    co.auto_free_on_launch = true;
    co.use_node_priority = true;
    co.upload_stream = s_;
    cucore_graph_complete_options_t c = co.to_c();
    EXPECT_EQ(c.struct_size, sizeof c);
    EXPECT_EQ(c.flags, static_cast<std::uint32_t>(CUCORE_GRAPH_COMPLETE_AUTO_FREE_ON_LAUNCH |
                                                  CUCORE_GRAPH_COMPLETE_USE_NODE_PRIORITY));
    EXPECT_EQ(c.upload_stream, s_.get());
    co = cucore::GraphCompleteOptions{};
    co.device_launch = true;
    c = co.to_c();
    EXPECT_EQ(c.flags, static_cast<std::uint32_t>(CUCORE_GRAPH_COMPLETE_DEVICE_LAUNCH));
    EXPECT_EQ(c.upload_stream, nullptr);

    const cucore_graph_alloc_options_t ainit = CUCORE_GRAPH_ALLOC_OPTIONS_INIT;
    const cucore_graph_alloc_options_t adflt = cucore::GraphAllocOptions{}.to_c();
    EXPECT_EQ(std::memcmp(&ainit, &adflt, sizeof ainit), 0);
    cucore::GraphAllocOptions ao;
    ao.memory_type = CUCORE_GRAPH_MEMORY_HOST;
    ao.peer_access = {1, 3};
    const cucore_graph_alloc_options_t a = ao.to_c();
    EXPECT_EQ(a.struct_size, sizeof a);
    EXPECT_EQ(a.memory_type, CUCORE_GRAPH_MEMORY_HOST);
    EXPECT_EQ(a.peer_access_count, 2u);
    EXPECT_EQ(a.peer_access[0], 1);
    EXPECT_EQ(a.peer_access[1], 3);
    ao.peer_access.assign(9, 1);
    EXPECT_EQ(ao.to_c().peer_access_count, 9u) << "more peers than the struct holds reach the library, which refuses";

    // Each debug-print field is its own driver bit, all of them every bit the C header names.
    EXPECT_EQ(cucore::GraphDebugPrintOptions{}.to_c(), 0u);
    cucore::GraphDebugPrintOptions all;
    using Field = bool cucore::GraphDebugPrintOptions::*;
    const Field fields[] = {&cucore::GraphDebugPrintOptions::verbose,
                            &cucore::GraphDebugPrintOptions::runtime_types,
                            &cucore::GraphDebugPrintOptions::kernel_node_params,
                            &cucore::GraphDebugPrintOptions::memcpy_node_params,
                            &cucore::GraphDebugPrintOptions::memset_node_params,
                            &cucore::GraphDebugPrintOptions::host_node_params,
                            &cucore::GraphDebugPrintOptions::event_node_params,
                            &cucore::GraphDebugPrintOptions::ext_semas_signal_node_params,
                            &cucore::GraphDebugPrintOptions::ext_semas_wait_node_params,
                            &cucore::GraphDebugPrintOptions::kernel_node_attributes,
                            &cucore::GraphDebugPrintOptions::handles,
                            &cucore::GraphDebugPrintOptions::mem_alloc_node_params,
                            &cucore::GraphDebugPrintOptions::mem_free_node_params,
                            &cucore::GraphDebugPrintOptions::batch_mem_op_node_params,
                            &cucore::GraphDebugPrintOptions::extra_topo_info,
                            &cucore::GraphDebugPrintOptions::conditional_node_params};
    std::uint32_t seen = 0;
    for (const Field f : fields) {
        cucore::GraphDebugPrintOptions one;
        one.*f = true;
        const std::uint32_t bit = one.to_c();
        EXPECT_NE(bit, 0u);
        EXPECT_EQ(bit & (bit - 1), 0u) << "one field, one bit";
        EXPECT_EQ(seen & bit, 0u) << "each field its own bit";
        seen |= bit;
        all.*f = true;
    }
    EXPECT_EQ(all.to_c(), seen);
    EXPECT_EQ(seen, 0xFFFFu) << "every CU_GRAPH_DEBUG_DOT_FLAGS_* the C header names";

    // A condition is a plain 8-byte kernel argument.
    static_assert(cucore::detail::KernelArg<cucore::GraphCondition>::size == 8);
    const cucore::GraphCondition none;
    EXPECT_FALSE(none);
    EXPECT_EQ(none.handle(), 0u);
    EXPECT_EQ(cucore::GraphCondition(42).handle(), 42u);
    EXPECT_EQ(cucore::GraphCondition(42), cucore::GraphCondition(42));
    EXPECT_NE(cucore::GraphCondition(42), none);
}

// Dependencies list their nodes' handles, inline up to 8 and on the heap beyond.
TEST_F(GraphFacadeTest, DependenciesListTheirNodes) {
    const cucore::GraphDefinition def = cucore::GraphDefinition::create(dev_);
    std::vector<cucore::GraphNode> nodes;
    for (int i = 0; i < 10; ++i) nodes.push_back(def.add_empty({}));
    const cucore::GraphDependencies none;
    EXPECT_EQ(none.size(), 0u);
    EXPECT_EQ(none.data(), nullptr);
    const cucore::GraphDependencies one(nodes[3]);
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one.data()[0], nodes[3].get());
    const cucore::GraphDependencies two{nodes[0], nodes[1]};
    ASSERT_EQ(two.size(), 2u);
    EXPECT_EQ(two.data()[1], nodes[1].get());
    const cucore::GraphDependencies ten(nodes);
    ASSERT_EQ(ten.size(), 10u);
    for (std::size_t i = 0; i < 10; ++i) EXPECT_EQ(ten.data()[i], nodes[i].get()) << i;
    // A join of all ten has them as its dependencies, whatever handles a listing gives.
    const cucore::GraphNode join = def.add_empty(nodes);
    const std::vector<cucore::GraphNode> deps = join.dependencies();
    ASSERT_EQ(deps.size(), 10u);
    for (const cucore::GraphNode &n : nodes)
        EXPECT_NE(std::find(deps.begin(), deps.end(), n), deps.end()) << "== compares nodes, not handles";
    EXPECT_EQ(def.nodes().size(), 11u);
    EXPECT_EQ(def.edges().size(), 10u);
    EXPECT_EQ(nodes[0].dependents().size(), 1u);
    EXPECT_EQ(nodes[0].dependents()[0], join);
}

// An explicit definition runs its nodes in order, each launch, with the
// kernel's arguments packed as launch() packs them; nothing runs before a launch.
TEST_F(GraphFacadeTest, ExplicitDefinitionRunsInOrder) {
    const cucore::Buffer src = zeros(256), dst = zeros(256);
    const cucore::Kernel k = kernel({8, 4, 8, 16}, "packed");
    std::vector<int> order;
    const cucore::GraphDefinition def = cucore::GraphDefinition::create(dev_);
    const cucore::GraphCondition cond = def.create_condition(1u);
    const cucore::GraphNode fill = def.add_memset({}, src, std::uint32_t{0x11223344}, 64);
    const cucore::GraphNode copy = def.add_memcpy(fill, dst, 16, src, 0, 128);
    const cucore::GraphNode call = def.add_host_callback(copy, [&order] { order.push_back(1); });
    const cucore::GraphNode launch =
        def.add_kernel(call, cucore::LaunchConfig(cucore::Dim3(2, 3), 64), k, dst, 2.5f, cond, Pair{-7, 0.5});
    const cucore::GraphNode after = def.add_host_callback(launch, [&order] { order.push_back(2); });
    // The condition the kernel received decides a conditional node (its default, 1: the body runs).
    const cucore::Buffer flag = zeros(4);
    const cucore::GraphDefinition::Conditional branch = def.add_if(after, cond);
    branch.bodies[0].add_memset({}, flag, std::uint8_t{0xF1}, 4);
    EXPECT_EQ(fill.type(), CUCORE_GRAPH_NODE_MEMSET);
    EXPECT_EQ(copy.type(), CUCORE_GRAPH_NODE_MEMCPY);
    EXPECT_EQ(call.type(), CUCORE_GRAPH_NODE_HOST_CALLBACK);
    EXPECT_EQ(launch.type(), CUCORE_GRAPH_NODE_KERNEL);
    EXPECT_EQ(launch.definition(), def);
    EXPECT_EQ(def.nodes().size(), 6u);
    const std::vector<cucore::GraphEdge> edges = def.edges();
    ASSERT_EQ(edges.size(), 5u);
    EXPECT_NE(std::find_if(edges.begin(), edges.end(),
                           [&](const cucore::GraphEdge &e) { return e.from == copy && e.to == call; }),
              edges.end());
    const cucore::GraphKernelNodeConfig kc = launch.kernel_config();
    EXPECT_EQ(kc.config.grid.x, 2u);
    EXPECT_EQ(kc.config.grid.y, 3u);
    EXPECT_EQ(kc.config.block.x, 64u);
    EXPECT_EQ(kc.kernel, k);

    const cucore::Graph graph = def.instantiate();
    s_.synchronize();
    EXPECT_TRUE(order.empty()) << "nothing runs before a launch";
    EXPECT_TRUE(fake::launches().empty());
    EXPECT_EQ(read(dst), Bytes(256, 0));
    graph.launch(s_);
    graph.launch(s_);
    s_.synchronize();
    EXPECT_EQ(order, (std::vector<int>{1, 2, 1, 2}));
    EXPECT_EQ(read(flag), Bytes(4, 0xF1));
    const Bytes out = read(dst);
    for (std::size_t i = 0; i < 256; ++i) {
        const std::uint8_t expected = i >= 16 && i < 144 ? static_cast<std::uint8_t>(0x44 - (i % 4) * 0x11) : 0;
        ASSERT_EQ(out[i], expected) << "byte " << i;
    }
    const std::vector<fake::LaunchRecord> launches = fake::launches();
    ASSERT_EQ(launches.size(), 2u);
    const fake::LaunchRecord &r = launches[1];
    EXPECT_EQ(r.config.gridDimX, 2u);
    EXPECT_EQ(r.config.gridDimY, 3u);
    EXPECT_EQ(r.config.blockDimX, 64u);
    ASSERT_EQ(r.args.size(), 4u);
    expect_bytes(r.args[0], dst.address(), "Buffer");
    expect_bytes(r.args[1], 2.5f, "float");
    expect_bytes(r.args[2], cond.handle(), "GraphCondition");
    EXPECT_NE(cond.handle(), 0u);
    std::int64_t a = 0;
    std::memcpy(&a, r.args[3].data(), sizeof a);
    EXPECT_EQ(a, -7) << "struct by value";
}

// Node parameters change in the definition (later instantiations) or in the
// executable graph only (its next launches), and nodes can be disabled.
TEST_F(GraphFacadeTest, PerNodeUpdatesReachTheNextLaunch) {
    const cucore::Buffer a = zeros(64), b = zeros(64);
    const cucore::Kernel k = kernel({8, 4});
    const cucore::GraphDefinition def = cucore::GraphDefinition::create(dev_);
    const cucore::GraphNode fill = def.add_memset({}, a, std::uint8_t{1}, 64);
    const cucore::GraphNode kern = def.add_kernel(fill, cucore::LaunchConfig(1, 32), k, a, 1);
    int first = 0, second = 0;
    const cucore::GraphNode call = def.add_host_callback(kern, [&first] { ++first; });
    const cucore::Graph graph = def.instantiate();

    graph.set_kernel_node(kern, cucore::LaunchConfig(4, 32), cucore::Kernel(), b, 2); // keeps the kernel
    graph.set_memset_node(fill, b, std::uint16_t{0x0707}, 32);
    graph.set_host_callback_node(call, [&second] { ++second; });
    graph.launch(s_);
    s_.synchronize();
    EXPECT_EQ(read(a), Bytes(64, 0)) << "the fill moved to b";
    EXPECT_EQ(read(b), Bytes(64, 7));
    EXPECT_EQ(first, 0);
    EXPECT_EQ(second, 1);
    std::vector<fake::LaunchRecord> launches = fake::launches();
    ASSERT_EQ(launches.size(), 1u);
    EXPECT_EQ(launches[0].config.gridDimX, 4u);
    expect_bytes(launches[0].args[0], b.address(), "updated Buffer");
    expect_bytes(launches[0].args[1], 2, "updated int");
    // The definition kept its own parameters: a new instantiation runs them.
    EXPECT_EQ(kern.kernel_config().config.grid.x, 1u);
    const cucore::Graph again = def.instantiate();
    again.launch(s_);
    s_.synchronize();
    EXPECT_EQ(read(a), Bytes(64, 1));
    EXPECT_EQ(first, 1);
    launches = fake::launches();
    ASSERT_EQ(launches.size(), 2u);
    expect_bytes(launches[1].args[0], a.address(), "the definition's Buffer");

    // Disabled nodes do not run; enabled again, they do.
    EXPECT_TRUE(graph.node_enabled(fill));
    graph.set_node_enabled(fill, false);
    EXPECT_FALSE(graph.node_enabled(fill));
    b.fill(std::uint8_t{0}, s_);
    graph.launch(s_);
    s_.synchronize();
    EXPECT_EQ(read(b), Bytes(64, 0));
    graph.set_node_enabled(fill, true);
    graph.launch(s_);
    s_.synchronize();
    EXPECT_EQ(read(b), Bytes(64, 7));

    // Definition-side setters, then a whole-graph update from the changed definition.
    kern.set_kernel(cucore::LaunchConfig(8, 16), k, a, 3);
    fill.set_memset(a, std::uint32_t{0x09090909}, 16);
    call.set_host_callback([&second] { second += 10; });
    graph.update(def);
    graph.launch(s_);
    s_.synchronize();
    EXPECT_EQ(read(a), Bytes(64, 9));
    EXPECT_EQ(second, 13) << "three launches of the replaced callable (+1 each), one of the definition's (+10)";
    launches = fake::launches();
    expect_bytes(launches.back().args[1], 3, "the updated definition's int");
    EXPECT_EQ(launches.back().config.gridDimX, 8u);
    EXPECT_EQ(graph.try_update(def), CUCORE_GRAPH_UPDATE_SUCCESS);

    // Copy nodes: the definition's copy replaced before instantiation, the graph's after.
    const cucore::Buffer c = zeros(64);
    c.fill(std::uint8_t{0xC3}, s_);
    a.fill(std::uint8_t{0}, s_);
    b.fill(std::uint8_t{0}, s_);
    const cucore::GraphDefinition copies = cucore::GraphDefinition::create(dev_);
    const cucore::GraphNode copy = copies.add_memcpy({}, a, c, 64);
    copy.set_memcpy(b, 8, c, 0, 16);
    const cucore::Graph copy_graph = copies.instantiate();
    copy_graph.launch(s_);
    s_.synchronize();
    EXPECT_EQ(read(a), Bytes(64, 0)) << "the copy into a was replaced";
    Bytes expected(64, 0);
    std::fill(expected.begin() + 8, expected.begin() + 24, std::uint8_t{0xC3});
    EXPECT_EQ(read(b), expected);
    copy_graph.set_memcpy_node(copy, a, 0, c, 0, 64);
    copy_graph.launch(s_);
    s_.synchronize();
    EXPECT_EQ(read(a), Bytes(64, 0xC3));
}

// Event and child graph nodes take a new event or graph: the definition's
// nodes for later instantiations, the graph's for its later launches.
TEST_F(GraphFacadeTest, EventAndChildGraphNodesTakeANewEventOrGraph) {
    cucore::EventOptions timing;
    timing.timing_enabled = true;
    const cucore::Event a = cucore::Event::create(dev_, timing), b = cucore::Event::create(dev_, timing),
                        c = cucore::Event::create(dev_, timing);
    const cucore::Buffer data = zeros(16);
    const cucore::GraphDefinition first = cucore::GraphDefinition::create(dev_),
                                  second = cucore::GraphDefinition::create(dev_);
    first.add_memset({}, data, std::uint8_t{1}, 16);
    second.add_memset({}, data, std::uint8_t{2}, 16);
    const cucore::GraphDefinition def = cucore::GraphDefinition::create(dev_);
    const cucore::GraphNode record = def.add_event_record({}, a);
    const cucore::GraphNode child = def.add_child_graph(record, first);
    const cucore::GraphNode empty = def.add_empty(child);

    record.set_event(b);
    child.set_child_graph(second);
    EXPECT_THROWS_STATUS(empty.set_event(b), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(empty.set_child_graph(second), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(child.set_child_graph(def), CUCORE_ERROR_INVALID_ARGUMENT);  // its own hierarchy
    const cucore::Graph graph = def.instantiate();
    graph.launch(s_);
    s_.synchronize();
    EXPECT_EQ(read(data), Bytes(16, 2));
    EXPECT_GE(cucore::Event::elapsed_time(b, b), 0.0f) << "b was recorded by the graph";

    graph.set_event_node(record, c);
    graph.set_child_graph_node(child, first);  // the same topology
    EXPECT_THROWS_STATUS(graph.set_event_node(empty, c), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(graph.set_child_graph_node(empty, first), CUCORE_ERROR_INVALID_ARGUMENT);
    graph.launch(s_);
    s_.synchronize();
    EXPECT_EQ(read(data), Bytes(16, 1));
    EXPECT_GE(cucore::Event::elapsed_time(c, c), 0.0f) << "c was recorded by the updated graph";
}

// The copy of a callable lives while a definition or graph needs it, and is
// destroyed once after the last of them; small trivial callables need no copy.
TEST_F(GraphFacadeTest, CallablesLiveWithTheirLastOwner) {
    auto token = std::make_shared<int>(0);
    std::atomic<int> calls{0};
    {
        cucore::GraphDefinition def = cucore::GraphDefinition::create(dev_);
        def.add_host_callback({}, [token, &calls] {
            (void)token;
            ++calls;
        });
        EXPECT_EQ(token.use_count(), 2) << "one copy, held by the definition";
        const cucore::GraphDefinition copy = def.clone();
        cucore::Graph graph = copy.instantiate();
        def.reset();
        EXPECT_EQ(token.use_count(), 2) << "the clone and the graph still need it";
        graph.launch(s_);
        s_.synchronize();
        EXPECT_EQ(calls.load(), 1);
    }
    // The last owner releases it (on the library's own thread: wait, bounded).
    for (int i = 0; i < 500 && token.use_count() != 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(token.use_count(), 1) << "the copy was destroyed with the last owner";

    // A callable that fits in a pointer travels inside it.
    int counter = 0;
    int *p = &counter;
    const cucore::GraphDefinition def = cucore::GraphDefinition::create(dev_);
    def.add_host_callback({}, [p] { ++*p; });
    def.add_host_callback({}, +[](void *q) { *static_cast<int *>(q) += 100; }, &counter);
    def.instantiate().launch(s_);
    s_.synchronize();
    EXPECT_EQ(counter, 101);
}

// Capture: work enqueued on a building builder's stream becomes nodes, runs
// only when the graph is launched, and can be launched again.
TEST_F(GraphFacadeTest, CaptureRecordsInsteadOfRunning) {
    const cucore::Buffer data = zeros(64), out = zeros(64);
    const cucore::Kernel k = kernel({8, 4});
    int calls = 0;
    const cucore::GraphBuilder builder = s_.create_graph_builder();
    EXPECT_FALSE(builder.is_building());
    EXPECT_EQ(builder.stream(), s_);
    EXPECT_TRUE(builder.begin_building().is_building());
    data.fill(std::uint32_t{0x5A5A5A5A}, builder.stream());
    cucore::launch(builder, cucore::LaunchConfig(2, 32), k, data, 7);
    out.copy_from(data, builder.stream());
    builder.callback([&calls] { ++calls; });
    builder.end_building();
    EXPECT_FALSE(builder.is_building());
    EXPECT_EQ(read(data), Bytes(64, 0)) << "captured, not run";
    EXPECT_TRUE(fake::launches().empty());
    EXPECT_EQ(calls, 0);
    const cucore::GraphDefinition captured = builder.definition();
    EXPECT_EQ(captured.nodes().size(), 4u);
    const cucore::Graph graph = builder.complete();
    for (int i = 0; i < 3; ++i) graph.launch(s_);
    s_.synchronize();
    EXPECT_EQ(read(out), Bytes(64, 0x5A));
    EXPECT_EQ(calls, 3);
    const std::vector<fake::LaunchRecord> launches = fake::launches();
    ASSERT_EQ(launches.size(), 3u);
    expect_bytes(launches[0].args[0], data.address(), "Buffer");
    expect_bytes(launches[0].args[1], 7, "int");

    // A builder of its own on the device, with options at completion.
    const cucore::GraphBuilder own = dev_.create_graph_builder();
    EXPECT_NE(own.stream(), s_);
    own.begin_building(CUCORE_CAPTURE_MODE_GLOBAL);
    out.fill(std::uint8_t{3}, own.stream());
    own.end_building();
    cucore::GraphCompleteOptions options;
    options.upload_stream = s_;
    own.complete(options).launch(s_);
    s_.synchronize();
    EXPECT_EQ(read(out), Bytes(64, 3));
}

// Forked builders capture on their own streams; the join makes both run
// before what follows it.
TEST_F(GraphFacadeTest, ForkedBranchesJoin) {
    const cucore::Buffer a = zeros(64), b = zeros(64), both = zeros(128);
    const cucore::GraphBuilder builder = dev_.create_graph_builder();
    builder.begin_building();
    const std::vector<cucore::GraphBuilder> forks = builder.split(3);
    ASSERT_EQ(forks.size(), 3u);
    EXPECT_EQ(forks[0], builder) << "the first is this builder";
    EXPECT_TRUE(forks[1].is_building());
    EXPECT_NE(forks[1].stream(), forks[2].stream());
    a.fill(std::uint8_t{0xA1}, forks[1].stream());
    b.fill(std::uint8_t{0xB2}, forks[2].stream());
    builder.join({forks[1], forks[2]});
    EXPECT_FALSE(forks[1].is_building()) << "joined builders are done";
    const cucore::Buffer lo = both.view(0, 64), hi = both.view(64, 64);
    lo.copy_from(a, builder.stream());
    hi.copy_from(b, builder.stream());
    builder.end_building();
    // Each copy depends on both fills through the join.
    const cucore::GraphDefinition def = builder.definition();
    int copies = 0;
    for (const cucore::GraphNode &n : def.nodes())
        if (n.type() == CUCORE_GRAPH_NODE_MEMCPY) {
            ++copies;
            EXPECT_FALSE(n.dependencies().empty());
        }
    EXPECT_EQ(copies, 2);
    builder.complete().launch(s_);
    s_.synchronize();
    Bytes expected(64, 0xA1);
    expected.insert(expected.end(), 64, 0xB2);
    EXPECT_EQ(read(both), expected);
}

// Conditional nodes: bodies are definitions (explicit) or building builders
// (capture); the condition's default value picks the branch.
TEST_F(GraphFacadeTest, ConditionalBodiesTakeTheirBranch) {
    const cucore::Buffer then_buf = zeros(16), else_buf = zeros(16);
    for (std::uint32_t value : {1u, 0u}) {
        then_buf.fill(std::uint8_t{0}, s_);
        else_buf.fill(std::uint8_t{0}, s_);
        const cucore::GraphDefinition def = cucore::GraphDefinition::create(dev_);
        const cucore::GraphCondition cond = def.create_condition(value);
        const cucore::GraphDefinition::Conditional node = def.add_if_else({}, cond);
        EXPECT_EQ(node.node.type(), CUCORE_GRAPH_NODE_CONDITIONAL);
        ASSERT_EQ(node.bodies.size(), 2u);
        EXPECT_FALSE(node.bodies[0].is_owned()) << "a body belongs to its node";
        EXPECT_EQ(node.node.bodies().size(), 2u);
        node.bodies[0].add_memset({}, then_buf, std::uint8_t{1}, 16);
        node.bodies[1].add_memset({}, else_buf, std::uint8_t{2}, 16);
        def.instantiate().launch(s_);
        s_.synchronize();
        EXPECT_EQ(read(then_buf), Bytes(16, value != 0 ? 1 : 0)) << "condition " << value;
        EXPECT_EQ(read(else_buf), Bytes(16, value != 0 ? 0 : 2)) << "condition " << value;
    }
    // The other kinds' body counts.
    const cucore::GraphDefinition def = cucore::GraphDefinition::create(dev_);
    // A condition drives one conditional node (the driver refuses a second): one each.
    const cucore::GraphCondition cond = def.create_condition(0u);
    EXPECT_EQ(def.add_if({}, cond).bodies.size(), 1u);
    EXPECT_EQ(def.add_while({}, def.create_condition(0u)).bodies.size(), 1u);
    EXPECT_EQ(def.add_switch({}, def.create_condition(0u), 3).bodies.size(), 3u);
    EXPECT_THROWS_STATUS(def.add_while({}, cond), CUCORE_ERROR_CUDA);
    EXPECT_THROWS_STATUS(def.add_conditional({}, cond, CUCORE_GRAPH_CONDITIONAL_WHILE, 2),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(def.add_if({}, cucore::GraphCondition()), CUCORE_ERROR_INVALID_ARGUMENT);

    // Captured: the switch case the condition names runs.
    const cucore::Buffer cases = zeros(3);
    const cucore::GraphBuilder builder = s_.create_graph_builder();
    builder.begin_building();
    const cucore::GraphCondition sw = builder.create_condition(2u);
    const std::vector<cucore::GraphBuilder> bodies = builder.add_switch(sw, 3);
    ASSERT_EQ(bodies.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_TRUE(bodies[i].is_building());
        cases.view(i, 1).fill(std::uint8_t{static_cast<std::uint8_t>(i + 1)}, bodies[i].stream());
        bodies[i].end_building();
    }
    builder.end_building();
    builder.complete().launch(s_);
    s_.synchronize();
    EXPECT_EQ(read(cases), (Bytes{0, 0, 3}));
}

// Graph memory: a GraphMemoryResource allocates on a capturing stream only,
// as allocation and free nodes; explicit allocation nodes give fixed addresses.
TEST_F(GraphFacadeTest, GraphMemoryInsideGraphs) {
    cucore::GraphMemoryResource memory = cucore::GraphMemoryResource::create(dev_);
    EXPECT_EQ(memory.kind(), CUCORE_MEMORY_RESOURCE_GRAPH);
    EXPECT_EQ(memory.device_id(), 0);
    const cucore::MemoryResource as_resource = memory; // a MemoryResource like any other
    EXPECT_EQ(as_resource, memory);
    EXPECT_THROWS_STATUS(memory.allocate(64, s_), CUCORE_ERROR_INVALID_STATE);

    const cucore::Buffer out = zeros(64);
    const cucore::GraphBuilder builder = s_.create_graph_builder();
    builder.begin_building();
    {
        const cucore::Buffer scratch = memory.allocate(64, builder.stream());
        scratch.fill(std::uint8_t{0x6B}, builder.stream());
        out.copy_from(scratch, builder.stream());
        scratch.close(builder.stream()); // a free node
    }
    builder.end_building();
    int allocs = 0, frees = 0;
    for (const cucore::GraphNode &n : builder.definition().nodes()) {
        allocs += n.type() == CUCORE_GRAPH_NODE_ALLOC;
        frees += n.type() == CUCORE_GRAPH_NODE_FREE;
    }
    EXPECT_EQ(allocs, 1);
    EXPECT_EQ(frees, 1);
    memory.reset_used_mem_high();
    builder.complete().launch(s_);
    s_.synchronize();
    EXPECT_EQ(read(out), Bytes(64, 0x6B));
    EXPECT_GE(memory.used_mem_high(), 64u);
    EXPECT_EQ(memory.used_mem_current(), 0u) << "freed inside the graph";
    EXPECT_GE(memory.reserved_mem_high(), memory.reserved_mem_current());
    EXPECT_EQ(memory.attribute(CUCORE_GRAPH_MEMORY_USED_HIGH), memory.used_mem_high());
    memory.reset_reserved_mem_high();
    memory.trim();
    EXPECT_THROWS_STATUS(memory.reset_attribute(CUCORE_GRAPH_MEMORY_USED_CURRENT), CUCORE_ERROR_INVALID_ARGUMENT);

    // Explicit allocation and free nodes.
    const cucore::GraphDefinition def = cucore::GraphDefinition::create(dev_);
    const cucore::GraphAllocation alloc = def.add_alloc({}, 128);
    EXPECT_NE(alloc.address, 0u);
    EXPECT_EQ(alloc.data(), reinterpret_cast<void *>(static_cast<std::uintptr_t>(alloc.address)));
    const cucore::GraphAllocInfo info = alloc.node.alloc_info();
    EXPECT_EQ(info.address, alloc.address);
    EXPECT_GE(info.size, 128u);
    const cucore::GraphNode free = def.add_free(alloc.node, alloc.address);
    EXPECT_EQ(free.type(), CUCORE_GRAPH_NODE_FREE);
    def.instantiate().launch(s_);
    s_.synchronize();
    cucore::GraphAllocOptions too_many;
    too_many.peer_access.assign(9, 1);
    EXPECT_THROWS_STATUS(def.add_alloc({}, 64, too_many), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(def.add_alloc({}, 0), CUCORE_ERROR_INVALID_ARGUMENT);
}

// Whatever is released first, the graph still runs with what its nodes use;
// the last owner lets go of it.
TEST_F(GraphFacadeTest, ReleaseOrderNeverMatters) {
    const std::size_t buffers = live(CUCORE_OBJECT_BUFFER), kernels = live(CUCORE_OBJECT_KERNEL);
    const cucore::Buffer out = zeros(32);
    cucore::Graph graph;
    {
        cucore::Buffer src = zeros(32);
        src.fill(std::uint8_t{0x3C}, s_);
        s_.synchronize();
        cucore::Kernel k = kernel({8});
        cucore::GraphBuilder builder = s_.create_graph_builder();
        builder.begin_building();
        cucore::launch(builder, cucore::LaunchConfig(1, 1), k, src);
        out.copy_from(src, builder.stream());
        builder.end_building();
        cucore::GraphDefinition def = builder.definition();
        graph = def.instantiate();
        // Released in the "wrong" order: the kernel, the source buffer, the definition, the builder.
        k.reset();
        src.reset();
        def.reset();
        builder.reset();
    }
    EXPECT_EQ(live(CUCORE_OBJECT_KERNEL), kernels + 1) << "the graph holds the kernel";
    EXPECT_EQ(live(CUCORE_OBJECT_BUFFER), buffers + 2) << "the graph holds the source buffer";
    graph.launch(s_);
    s_.synchronize();
    EXPECT_EQ(read(out), Bytes(32, 0x3C));
    ASSERT_EQ(fake::launches().size(), 1u);
    // Copies share the graph; the last one lets go of everything.
    cucore::Graph copy = graph;
    EXPECT_EQ(copy, graph);
    cucore::Graph moved = std::move(graph);
    EXPECT_FALSE(graph); // NOLINT(bugprone-use-after-move): moved-from is empty by contract
    moved.reset();
    copy.launch(s_);
    s_.synchronize();
    copy.reset();
    for (int i = 0; i < 500 && live(CUCORE_OBJECT_BUFFER) != buffers + 1; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(live(CUCORE_OBJECT_BUFFER), buffers + 1) << "only `out` is left";
    EXPECT_EQ(live(CUCORE_OBJECT_KERNEL), kernels);
}

// Errors throw cucore::Error with the C status; a capture survives the calls the library refuses.
TEST_F(GraphFacadeTest, ErrorsThrowWithTheCStatus) {
    EXPECT_THROWS_STATUS(cucore::GraphDefinition().nodes(), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_THROWS_STATUS(cucore::Graph().launch(s_), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_THROWS_STATUS(cucore::GraphBuilder::create(cucore::Stream::legacy_default(dev_)),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    const cucore::Buffer buf = zeros(64);
    const cucore::GraphBuilder builder = s_.create_graph_builder();
    EXPECT_THROWS_STATUS(builder.end_building(), CUCORE_ERROR_INVALID_STATE);
    EXPECT_THROWS_STATUS(builder.definition(), CUCORE_ERROR_INVALID_STATE);
    EXPECT_THROWS_STATUS(builder.complete(), CUCORE_ERROR_INVALID_STATE);
    EXPECT_THROWS_STATUS(builder.split(2), CUCORE_ERROR_INVALID_STATE);
    builder.begin_building();
    EXPECT_THROWS_STATUS(builder.begin_building(), CUCORE_ERROR_INVALID_STATE);
    buf.fill(std::uint8_t{9}, builder.stream());
    EXPECT_THROWS_STATUS(builder.stream().synchronize(), CUCORE_ERROR_INVALID_STATE);
    EXPECT_TRUE(builder.is_building()) << "the capture goes on";
    buf.fill(std::uint8_t{8}, builder.stream());
    builder.end_building();
    builder.complete().launch(s_);
    s_.synchronize();
    EXPECT_EQ(read(buf), Bytes(64, 8));

    // An update that changes the topology is refused with the driver's verdict.
    const cucore::GraphDefinition def = cucore::GraphDefinition::create(dev_);
    def.add_memset({}, buf, std::uint8_t{1}, 64);
    const cucore::Graph graph = def.instantiate();
    const cucore::GraphDefinition bigger = def.clone();
    bigger.add_empty({});
    EXPECT_EQ(graph.try_update(bigger), CUCORE_GRAPH_UPDATE_TOPOLOGY_CHANGED);
    EXPECT_THROWS_STATUS(graph.update(bigger), CUCORE_ERROR_INVALID_STATE);
    graph.launch(s_); // the graph is unchanged and still runs
    s_.synchronize();
    EXPECT_EQ(read(buf), Bytes(64, 1));

    // A destroyed node: every handle of it is INVALID_STATE.
    const cucore::GraphNode node = def.add_empty({});
    const std::vector<cucore::GraphNode> listed = def.nodes();
    const auto found = std::find(listed.begin(), listed.end(), node);
    ASSERT_NE(found, listed.end());
    const cucore::GraphNode same = *found;
    EXPECT_NE(same.get(), node.get()) << "listings make new handles";
    node.destroy();
    EXPECT_THROWS_STATUS(node.handle(), CUCORE_ERROR_INVALID_STATE);
    EXPECT_THROWS_STATUS(same.type(), CUCORE_ERROR_INVALID_STATE);
    EXPECT_THROWS_STATUS(node.destroy(), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(node, node);
    EXPECT_NE(node, same) << "destroyed nodes equal only themselves";
    // Nodes of another definition, another kind of node.
    const cucore::GraphDefinition other = cucore::GraphDefinition::create(dev_);
    const cucore::GraphNode foreign = other.add_empty({});
    EXPECT_THROWS_STATUS(def.add_empty(foreign), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(foreign.alloc_info(), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(foreign.kernel_config(), CUCORE_ERROR_INVALID_ARGUMENT);
    // An empty node of another definition (the driver refuses it: the library checks only the context).
    EXPECT_THROW(graph.set_node_enabled(foreign, false), cucore::Error);
    EXPECT_THROWS_STATUS(def.debug_dot_print(""), CUCORE_ERROR_INVALID_ARGUMENT);
}

// Handles: copy = retain, move = steal, adopt/release pass ownership to and from C.
TEST_F(GraphFacadeTest, HandlesFollowTheFacadeRules) {
    const std::size_t defs = live(CUCORE_OBJECT_GRAPH_DEFINITION);
    cucore::GraphDefinition def = cucore::GraphDefinition::create(dev_);
    EXPECT_EQ(live(CUCORE_OBJECT_GRAPH_DEFINITION), defs + 1);
    cucore::GraphDefinition copy = def;
    EXPECT_EQ(copy.get(), def.get());
    EXPECT_EQ(live(CUCORE_OBJECT_GRAPH_DEFINITION), defs + 1) << "a copy is a reference, not an object";
    cucore::GraphDefinition moved = std::move(copy);
    EXPECT_FALSE(copy); // NOLINT(bugprone-use-after-move): moved-from is empty by contract
    cucore_graph_definition_t *raw = moved.release();
    cucore::GraphDefinition back = cucore::GraphDefinition::adopt(raw);
    EXPECT_EQ(back, def);
    EXPECT_TRUE(def.is_owned());
    EXPECT_EQ(def.device(), dev_);
    EXPECT_EQ(cucore::GraphDefinition::create(dev1_).device().ordinal(), 1);
    EXPECT_NE(def.handle(), nullptr);
    void *cu_graph = nullptr;
    ASSERT_EQ(cucore_graph_definition_handle(def.get(), &cu_graph), CUCORE_SUCCESS);
    EXPECT_EQ(def.handle(), cu_graph);
    // A reference the C side took is one the façade can adopt (and release), for every graph handle.
    ASSERT_EQ(cucore_graph_definition_retain(def.get()), CUCORE_SUCCESS);
    const cucore::GraphDefinition adopted = cucore::GraphDefinition::adopt(def.get());
    const cucore::GraphNode node = def.add_empty({});
    ASSERT_EQ(cucore_graph_node_retain(node.get()), CUCORE_SUCCESS);
    const cucore::GraphNode adopted_node = cucore::GraphNode::adopt(node.get());
    const cucore::Graph graph = def.instantiate();
    ASSERT_EQ(cucore_graph_retain(graph.get()), CUCORE_SUCCESS);
    const cucore::Graph adopted_graph = cucore::Graph::adopt(graph.get());
    const cucore::GraphBuilder builder = s_.create_graph_builder();
    ASSERT_EQ(cucore_graph_builder_retain(builder.get()), CUCORE_SUCCESS);
    const cucore::GraphBuilder adopted_builder = cucore::GraphBuilder::adopt(builder.get());
    EXPECT_EQ(adopted, def);
    EXPECT_EQ(adopted_node, node);
    EXPECT_EQ(adopted_graph, graph);
    EXPECT_EQ(adopted_builder, builder);
    EXPECT_EQ(live(CUCORE_OBJECT_GRAPH_DEFINITION), defs + 1) << "references, not objects";
    const cucore::GraphMemoryResource gm = cucore::GraphMemoryResource::create(dev_);
    const cucore::GraphMemoryResource borrowed = cucore::GraphMemoryResource::borrow(gm.get());
    EXPECT_EQ(borrowed, gm);

    // The DOT file is written where asked.
    char path[] = "/tmp/cucore-graph-facade-XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    close(fd);
    cucore::GraphDebugPrintOptions dot;
    dot.verbose = true;
    def.debug_dot_print(path, dot);
    std::ifstream in(path);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_FALSE(text.empty());
    std::remove(path);
}

} // namespace
