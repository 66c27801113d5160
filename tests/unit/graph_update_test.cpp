// Node updates that replace what a node uses (issue 17): the event of event
// record and wait nodes and the graph of child graph nodes, in definitions
// (cucore_graph_node_set_event, cucore_graph_node_set_child_graph) and in
// executable graphs (cucore_graph_set_event_node,
// cucore_graph_set_child_graph_node), on the fake driver: the node uses the
// new event or graph, the graph holds what it brought, and the wrong kind of
// node, a child of the node's own hierarchy and a driver refusal are clear
// errors. Handle arguments are in handle_test.cpp.
#include <algorithm>
#include <vector>

#include "kernel_support.hpp"

namespace {

class GraphUpdateTest : public KernelFixture {
  protected:
    void SetUp() override {
        KernelFixture::SetUp();
        ASSERT_EQ(cucore_device_allocate(d0_, 16, s0_, &buffer_), CUCORE_SUCCESS) << message();
    }
    void TearDown() override {
        cucore_buffer_release(buffer_);
        fake::fail_entry("");
        KernelFixture::TearDown();
    }
    cucore_graph_definition_t *definition() {
        cucore_graph_definition_t *g = nullptr;
        EXPECT_EQ(cucore_graph_definition_create(d0_, &g), CUCORE_SUCCESS) << message();
        return g;
    }
    cucore_event_t *event(uint32_t flags = CUCORE_EVENT_TIMING) {
        cucore_event_options_t o = CUCORE_EVENT_OPTIONS_INIT;
        o.flags = flags;
        cucore_event_t *e = nullptr;
        EXPECT_EQ(cucore_event_create(d0_, &o, &e), CUCORE_SUCCESS) << message();
        return e;
    }
    static void *raw(cucore_event_t *e) {
        void *h = nullptr;
        EXPECT_EQ(cucore_event_handle(e, &h), CUCORE_SUCCESS);
        return h;
    }
    static CUgraphNode raw(cucore_graph_node_t *n) {
        void *h = nullptr;
        EXPECT_EQ(cucore_graph_node_handle(n, &h), CUCORE_SUCCESS);
        return static_cast<CUgraphNode>(h);
    }
    static CUgraphExec raw(cucore_graph_t *g) {
        void *h = nullptr;
        EXPECT_EQ(cucore_graph_handle(g, &h), CUCORE_SUCCESS);
        return static_cast<CUgraphExec>(h);
    }
    // A definition that fills the buffer with `value` (and, with `second`, its first half with it + 1 after).
    cucore_graph_definition_t *filler(uint8_t value, bool second = false) {
        cucore_graph_definition_t *g = definition();
        cucore_graph_node_t *fill = nullptr, *half = nullptr;
        EXPECT_EQ(cucore_graph_definition_add_memset(g, nullptr, 0, buffer_, 0, value, 1, 16, 1, 0, &fill),
                  CUCORE_SUCCESS)
            << message();
        if (second) {
            EXPECT_EQ(cucore_graph_definition_add_memset(g, &fill, 1, buffer_, 0, value + 1u, 1, 8, 1, 0, &half),
                      CUCORE_SUCCESS)
                << message();
        }
        cucore_graph_node_release(half);
        cucore_graph_node_release(fill);
        return g;
    }
    // Runs `graph` once and reads the buffer back.
    std::vector<uint8_t> run(cucore_graph_t *graph) {
        EXPECT_EQ(cucore_graph_launch(graph, s0_), CUCORE_SUCCESS) << message();
        std::vector<uint8_t> bytes(16);
        EXPECT_EQ(cucore_buffer_copy_to_host(buffer_, 0, bytes.data(), bytes.size(), s0_), CUCORE_SUCCESS)
            << message();
        EXPECT_EQ(cucore_stream_synchronize(s0_), CUCORE_SUCCESS) << message();
        return bytes;
    }
    // Whether `e` was recorded (a timing event never recorded has no elapsed time).
    static bool recorded(cucore_event_t *e) {
        float ms = -1;
        return cucore_event_elapsed_time(e, e, &ms) == CUCORE_SUCCESS;
    }
    static std::vector<uint8_t> halves(uint8_t first, uint8_t second) {
        std::vector<uint8_t> bytes(16, second);
        std::fill(bytes.begin(), bytes.begin() + 8, first);
        return bytes;
    }

    cucore_buffer_t *buffer_ = nullptr;
};

// ---- definitions ----------------------------------------------------------------

TEST_F(GraphUpdateTest, DefinitionEventNodesTakeTheNewEventAndHoldIt) {
    cucore_graph_definition_t *g = definition();
    cucore_event_t *a = event(), *b = event(), *c = event();
    cucore_graph_node_t *record = nullptr, *wait = nullptr, *empty = nullptr;
    ASSERT_EQ(cucore_graph_definition_add_event_record(g, nullptr, 0, a, &record), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_definition_add_event_wait(g, &record, 1, a, &wait), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_definition_add_empty(g, &wait, 1, &empty), CUCORE_SUCCESS) << message();

    ASSERT_EQ(cucore_graph_node_set_event(record, b), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_node_set_event(wait, c), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::graph_node_event(raw(record)), raw(b));
    EXPECT_EQ(fake::graph_node_event(raw(wait)), raw(c));
    EXPECT_EQ(cucore_graph_node_set_event(empty, b), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("an event record or an event wait node"), std::string::npos) << message();

    // The definition holds the new events: released by the caller, they live on.
    const size_t events = live(CUCORE_OBJECT_EVENT);
    cucore_event_release(c);
    EXPECT_EQ(live(CUCORE_OBJECT_EVENT), events) << "the definition holds the event its wait node uses";

    cucore_graph_t *exec = nullptr;
    ASSERT_EQ(cucore_graph_definition_instantiate(g, nullptr, &exec), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_launch(exec, s0_), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_synchronize(s0_), CUCORE_SUCCESS) << message();
    EXPECT_TRUE(recorded(b)) << "the launch recorded the node's new event";
    EXPECT_FALSE(recorded(a)) << "and not the one it replaced";

    // A destroyed node: INVALID_STATE.
    ASSERT_EQ(cucore_graph_node_destroy(empty), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_graph_node_set_event(empty, b), CUCORE_ERROR_INVALID_STATE);

    // A driver refusal changes nothing.
    fake::fail_entry("cuGraphEventRecordNodeSetEvent");
    EXPECT_EQ(cucore_graph_node_set_event(record, a), CUCORE_ERROR_CUDA);
    fake::fail_entry("");
    EXPECT_EQ(fake::graph_node_event(raw(record)), raw(b));

    cucore_graph_release(exec);
    cucore_graph_node_release(empty);
    cucore_graph_node_release(wait);
    cucore_graph_node_release(record);
    cucore_graph_definition_release(g);
    live(CUCORE_OBJECT_ANY);  // drains what the driver let go of
    EXPECT_EQ(live(CUCORE_OBJECT_EVENT), events - 1) << "the definition let go of the event with its last reference";
    cucore_event_release(b);
    cucore_event_release(a);
}

TEST_F(GraphUpdateTest, DefinitionChildGraphNodeTakesACopyOfAnIndependentGraph) {
    cucore_graph_definition_t *g = definition(), *first = filler(0x11), *second = filler(0x22, true);
    cucore_graph_node_t *child = nullptr, *empty = nullptr;
    ASSERT_EQ(cucore_graph_definition_add_child_graph(g, nullptr, 0, first, &child), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_definition_add_empty(g, &child, 1, &empty), CUCORE_SUCCESS) << message();
    cucore_graph_t *before = nullptr;
    ASSERT_EQ(cucore_graph_definition_instantiate(g, nullptr, &before), CUCORE_SUCCESS) << message();

    // The node's graph and a node of it, as they are before the update.
    cucore_graph_definition_t *old_body = nullptr;
    size_t old_count = 0;
    ASSERT_EQ(cucore_graph_node_bodies(child, &old_body, 1, &old_count), CUCORE_SUCCESS) << message();
    cucore_graph_node_t *old_node = nullptr;
    ASSERT_EQ(cucore_graph_definition_nodes(old_body, &old_node, 1, &old_count), CUCORE_SUCCESS) << message();

    // Another topology is fine in a definition; the caller's reference is not needed afterwards.
    ASSERT_EQ(cucore_graph_node_set_child_graph(child, second), CUCORE_SUCCESS) << message();
    cucore_graph_definition_release(second);

    // The replaced graph went with the update: its handles answer INVALID_STATE, never reach the driver.
    fake::reset_calls();
    EXPECT_EQ(cucore_graph_definition_nodes(old_body, nullptr, 0, &old_count), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("given another graph"), std::string::npos) << message();
    cucore_graph_t *stale = nullptr;
    EXPECT_EQ(cucore_graph_definition_instantiate(old_body, nullptr, &stale), CUCORE_ERROR_INVALID_STATE);
    cucore_graph_node_t *added = nullptr;
    EXPECT_EQ(cucore_graph_definition_add_empty(old_body, nullptr, 0, &added), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(cucore_graph_definition_add_child_graph(g, nullptr, 0, old_body, &added), CUCORE_ERROR_INVALID_STATE);
    cucore_graph_node_type_t old_type = CUCORE_GRAPH_NODE_UNSET;
    EXPECT_EQ(cucore_graph_node_type(old_node, &old_type), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(fake::calls(), 0) << "stale handles reach no driver call";
    cucore_graph_node_release(old_node);
    cucore_graph_definition_release(old_body);
    cucore_graph_definition_t *body = nullptr;
    size_t count = 0;
    ASSERT_EQ(cucore_graph_node_bodies(child, &body, 1, &count), CUCORE_SUCCESS) << message();
    size_t nodes = 0;
    ASSERT_EQ(cucore_graph_definition_nodes(body, nullptr, 0, &nodes), CUCORE_SUCCESS) << message();
    EXPECT_EQ(nodes, 2u) << "the node's graph is now a copy of the second one";

    cucore_graph_t *after = nullptr;
    ASSERT_EQ(cucore_graph_definition_instantiate(g, nullptr, &after), CUCORE_SUCCESS) << message();
    EXPECT_EQ(run(after), halves(0x23, 0x22));
    EXPECT_EQ(run(before), std::vector<uint8_t>(16, 0x11)) << "a graph instantiated before runs the old child";

    // The node's own hierarchy (the definition, the child graph itself) is refused, as cuda.core refuses it.
    EXPECT_EQ(cucore_graph_node_set_child_graph(child, g), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("own graph hierarchy"), std::string::npos) << message();
    EXPECT_EQ(cucore_graph_node_set_child_graph(child, body), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_graph_node_set_child_graph(empty, first), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("a child graph node"), std::string::npos) << message();
    cucore_graph_definition_release(body);

    // A driver refusal changes nothing.
    fake::fail_entry("cuGraphNodeSetParams");
    EXPECT_EQ(cucore_graph_node_set_child_graph(child, first), CUCORE_ERROR_CUDA);
    fake::fail_entry("");
    cucore_graph_t *again = nullptr;
    ASSERT_EQ(cucore_graph_definition_instantiate(g, nullptr, &again), CUCORE_SUCCESS) << message();
    EXPECT_EQ(run(again), halves(0x23, 0x22));

    cucore_graph_release(again);
    cucore_graph_release(after);
    cucore_graph_release(before);
    cucore_graph_node_release(empty);
    cucore_graph_node_release(child);
    cucore_graph_definition_release(first);
    cucore_graph_definition_release(g);
}

// ---- executable graphs ------------------------------------------------------------

TEST_F(GraphUpdateTest, ExecutableEventNodesTakeTheNewEventForLaterLaunchesOnly) {
    cucore_graph_definition_t *g = definition();
    cucore_event_t *a = event(), *b = event(), *c = event();
    cucore_graph_node_t *record = nullptr, *wait = nullptr, *empty = nullptr;
    ASSERT_EQ(cucore_graph_definition_add_event_record(g, nullptr, 0, a, &record), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_definition_add_event_wait(g, &record, 1, a, &wait), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_definition_add_empty(g, &wait, 1, &empty), CUCORE_SUCCESS) << message();
    cucore_graph_t *exec = nullptr;
    ASSERT_EQ(cucore_graph_definition_instantiate(g, nullptr, &exec), CUCORE_SUCCESS) << message();

    ASSERT_EQ(cucore_graph_set_event_node(exec, record, b), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_set_event_node(exec, wait, c), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::graph_exec_node_event(raw(exec), raw(record)), raw(b));
    EXPECT_EQ(fake::graph_exec_node_event(raw(exec), raw(wait)), raw(c));
    EXPECT_EQ(fake::graph_node_event(raw(record)), raw(a)) << "the definition is not changed";
    EXPECT_EQ(cucore_graph_set_event_node(exec, empty, b), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("an event record or an event wait node"), std::string::npos) << message();

    const size_t events = live(CUCORE_OBJECT_EVENT);
    cucore_event_release(c);
    EXPECT_EQ(live(CUCORE_OBJECT_EVENT), events) << "the graph holds the event its wait node uses";
    ASSERT_EQ(cucore_graph_launch(exec, s0_), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_synchronize(s0_), CUCORE_SUCCESS) << message();
    EXPECT_TRUE(recorded(b)) << "the launch recorded the new event";
    EXPECT_FALSE(recorded(a)) << "and not the definition's";

    // A node of another definition is the driver's to refuse; a destroyed one is INVALID_STATE.
    cucore_graph_definition_t *other = definition();
    cucore_graph_node_t *foreign = nullptr;
    ASSERT_EQ(cucore_graph_definition_add_event_record(other, nullptr, 0, a, &foreign), CUCORE_SUCCESS) << message();
    EXPECT_NE(cucore_graph_set_event_node(exec, foreign, b), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_graph_node_destroy(foreign), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_graph_set_event_node(exec, foreign, b), CUCORE_ERROR_INVALID_STATE);

    cucore_graph_node_release(foreign);
    cucore_graph_definition_release(other);
    cucore_graph_release(exec);
    cucore_graph_node_release(empty);
    cucore_graph_node_release(wait);
    cucore_graph_node_release(record);
    cucore_graph_definition_release(g);
    live(CUCORE_OBJECT_ANY);
    EXPECT_EQ(live(CUCORE_OBJECT_EVENT), events - 1) << "the graph let go of the event when it went";
    cucore_event_release(b);
    cucore_event_release(a);
}

TEST_F(GraphUpdateTest, ExecutableChildGraphNodeTakesTheParametersOfAGraphOfItsTopology) {
    cucore_graph_definition_t *g = definition(), *first = filler(0x11), *same = filler(0x44),
                              *bigger = filler(0x22, true);
    cucore_graph_node_t *child = nullptr, *empty = nullptr;
    ASSERT_EQ(cucore_graph_definition_add_child_graph(g, nullptr, 0, first, &child), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_definition_add_empty(g, &child, 1, &empty), CUCORE_SUCCESS) << message();
    cucore_graph_t *exec = nullptr;
    ASSERT_EQ(cucore_graph_definition_instantiate(g, nullptr, &exec), CUCORE_SUCCESS) << message();
    EXPECT_EQ(run(exec), std::vector<uint8_t>(16, 0x11));

    ASSERT_EQ(cucore_graph_set_child_graph_node(exec, child, same), CUCORE_SUCCESS) << message();
    cucore_graph_definition_release(same);  // the graph holds what it holds
    EXPECT_EQ(run(exec), std::vector<uint8_t>(16, 0x44));

    EXPECT_EQ(cucore_graph_set_child_graph_node(exec, child, bigger), CUCORE_ERROR_CUDA) << "another topology";
    EXPECT_EQ(run(exec), std::vector<uint8_t>(16, 0x44)) << "a refused update changes nothing";
    EXPECT_EQ(cucore_graph_set_child_graph_node(exec, empty, first), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("a child graph node"), std::string::npos) << message();

    cucore_graph_t *fresh = nullptr;
    ASSERT_EQ(cucore_graph_definition_instantiate(g, nullptr, &fresh), CUCORE_SUCCESS) << message();
    EXPECT_EQ(run(fresh), std::vector<uint8_t>(16, 0x11)) << "the definition is not changed";

    cucore_graph_release(fresh);
    cucore_graph_release(exec);
    cucore_graph_node_release(empty);
    cucore_graph_node_release(child);
    cucore_graph_definition_release(bigger);
    cucore_graph_definition_release(first);
    cucore_graph_definition_release(g);
}

}  // namespace
