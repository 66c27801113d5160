// Every driver call of the graph create paths failing once (fault_injection_support.hpp):
// a clear error, nothing leaked (no graph, executable, user object, stream or
// library object left), no half-made object, and a host callback's data
// released exactly once however the call ends.
#include "fault_injection_support.hpp"

namespace {

class GraphFaultInjection : public FaultInjection<FakeDriverTest> {
  protected:
    void SetUp() override {
        FaultInjection<FakeDriverTest>::SetUp();
        d0_ = device(0);
        ASSERT_EQ(cucore_stream_create(d0_, nullptr, &s0_), CUCORE_SUCCESS) << message();
        ASSERT_EQ(cucore_device_allocate(d0_, 64, s0_, &buffer_), CUCORE_SUCCESS) << message();
        ASSERT_EQ(cucore_graph_definition_create(d0_, &graph_), CUCORE_SUCCESS) << message();
    }
    void TearDown() override {
        cucore_graph_definition_release(graph_);
        cucore_buffer_release(buffer_);
        cucore_stream_release(s0_);
        cucore_device_release(d0_);
        FaultInjection<FakeDriverTest>::TearDown();
    }
    static void release_node(void *node) { cucore_graph_node_release(static_cast<cucore_graph_node_t *>(node)); }

    cucore_device_t *d0_ = nullptr;
    cucore_stream_t *s0_ = nullptr;
    cucore_buffer_t *buffer_ = nullptr;
    cucore_graph_definition_t *graph_ = nullptr;
};

TEST_F(GraphFaultInjection, CreatingADefinition) {
    run({"cucore_graph_definition_create",
         [&](void **h) {
             return cucore_graph_definition_create(d0_, reinterpret_cast<cucore_graph_definition_t **>(h));
         },
         [](void *h) { cucore_graph_definition_release(static_cast<cucore_graph_definition_t *>(h)); }, 2});
}

TEST_F(GraphFaultInjection, AddingAFillNode) {
    run({"cucore_graph_definition_add_memset",
         [&](void **h) {
             return cucore_graph_definition_add_memset(graph_, nullptr, 0, buffer_, 0, 1, 1, 64, 1, 0,
                                                       reinterpret_cast<cucore_graph_node_t **>(h));
         },
         release_node, 1});
}

TEST_F(GraphFaultInjection, AddingAHostCallbackReleasesItsDataOnce) {
    int released = 0, made = 0;
    run({"cucore_graph_definition_add_host_callback",
         [&](void **h) {
             ++made;
             return cucore_graph_definition_add_host_callback(
                 graph_, nullptr, 0, [](void *) {}, &released, [](void *c) { ++*static_cast<int *>(c); },
                 reinterpret_cast<cucore_graph_node_t **>(h));
         },
         release_node, 1});
    // The successful callbacks' data goes with the definition.
    cucore_graph_definition_release(graph_);
    graph_ = nullptr;
    live(CUCORE_OBJECT_ANY);
    EXPECT_EQ(released, made) << "each callback's data released exactly once";
}

TEST_F(GraphFaultInjection, AddingAConditionalNode) {
    uint64_t condition = 0;
    ASSERT_EQ(cucore_graph_definition_create_condition(graph_, 0, 0, &condition), CUCORE_SUCCESS) << message();
    run({"cucore_graph_definition_add_conditional",
         [&](void **h) {
             cucore_graph_definition_t *bodies[2] = {};
             const cucore_status_t status = cucore_graph_definition_add_conditional(
                 graph_, nullptr, 0, condition, CUCORE_GRAPH_CONDITIONAL_IF, 2, bodies,
                 reinterpret_cast<cucore_graph_node_t **>(h));
             for (cucore_graph_definition_t *body : bodies) cucore_graph_definition_release(body);
             return status;
         },
         // A condition drives one conditional node: the node goes, so the next round can use it again.
         [](void *h) {
             auto *node = static_cast<cucore_graph_node_t *>(h);
             cucore_graph_node_destroy(node);
             cucore_graph_node_release(node);
         },
         1});
}

TEST_F(GraphFaultInjection, CloningAndInstantiating) {
    cucore_graph_node_t *node = nullptr;
    ASSERT_EQ(cucore_graph_definition_add_memset(graph_, nullptr, 0, buffer_, 0, 1, 1, 64, 1, 0, &node),
              CUCORE_SUCCESS);
    run({"cucore_graph_definition_clone",
         [&](void **h) {
             return cucore_graph_definition_clone(graph_, reinterpret_cast<cucore_graph_definition_t **>(h));
         },
         [](void *h) { cucore_graph_definition_release(static_cast<cucore_graph_definition_t *>(h)); }, 3});
    cucore_graph_complete_options_t options = CUCORE_GRAPH_COMPLETE_OPTIONS_INIT;
    options.upload_stream = s0_;
    run({"cucore_graph_definition_instantiate",
         [&](void **h) {
             return cucore_graph_definition_instantiate(graph_, &options, reinterpret_cast<cucore_graph_t **>(h));
         },
         [](void *h) { cucore_graph_release(static_cast<cucore_graph_t *>(h)); }, 1});
    cucore_graph_node_release(node);
}

TEST_F(GraphFaultInjection, BuildersOnTheirOwnStreamsAndBeginningACapture) {
    run({"cucore_graph_builder_create_on_device",
         [&](void **h) {
             return cucore_graph_builder_create_on_device(d0_, reinterpret_cast<cucore_graph_builder_t **>(h));
         },
         [](void *h) { cucore_graph_builder_release(static_cast<cucore_graph_builder_t *>(h)); }, 1});
    run({"cucore_graph_builder_begin_building",
         [&](void **h) {
             cucore_graph_builder_t *builder = nullptr;
             if (cucore_graph_builder_create(s0_, &builder) != CUCORE_SUCCESS) return CUCORE_ERROR_INTERNAL;
             const cucore_status_t status = cucore_graph_builder_begin_building(builder, CUCORE_CAPTURE_MODE_DEFAULT);
             if (status != CUCORE_SUCCESS) {
                 cucore_graph_builder_release(builder);
                 builder = nullptr;
             }
             *h = builder;
             return status;
         },
         [](void *h) { cucore_graph_builder_release(static_cast<cucore_graph_builder_t *>(h)); }, 1});
}

TEST_F(GraphFaultInjection, CreatingAGraphMemoryResource) {
    run({"cucore_graph_memory_resource_create",
         [&](void **h) {
             return cucore_graph_memory_resource_create(d0_, reinterpret_cast<cucore_memory_resource_t **>(h));
         },
         [](void *h) { cucore_memory_resource_release(static_cast<cucore_memory_resource_t *>(h)); }, 0});
}

}  // namespace
