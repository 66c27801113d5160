// Graphs on the fake driver, through the C ABI: explicit definitions (every
// node kind, dependencies, clones, DOT output), executable graphs (launch,
// whole and per-node updates, enabling nodes), graph builders (capture,
// forks and joins, conditional bodies, embedding, host callbacks, calls
// refused during capture), graph memory, lifetimes (what nodes use outlives
// its handles; host callback data released exactly once) and every argument
// check.
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "kernel_support.hpp"

namespace {

// Host callbacks append their tag to `order`; their release counts.
struct Tagged {
    std::vector<int> *order;
    int tag;
    int *released;
};
void record_tag(void *data) {
    auto *t = static_cast<Tagged *>(data);
    t->order->push_back(t->tag);
}
void release_tag(void *data) {
    auto *t = static_cast<Tagged *>(data);
    ++*t->released;
}

class GraphTest : public KernelFixture {
  protected:
    void SetUp() override {
        KernelFixture::SetUp();
        for (cucore_object_type_t t : {CUCORE_OBJECT_GRAPH_DEFINITION, CUCORE_OBJECT_GRAPH_NODE, CUCORE_OBJECT_GRAPH,
                                       CUCORE_OBJECT_GRAPH_BUILDER})
            graphs_before_.push_back(live(t));
    }
    void TearDown() override {
        for (cucore_buffer_t *b : buffers_) cucore_buffer_release(b);
        int i = 0;
        for (cucore_object_type_t t : {CUCORE_OBJECT_GRAPH_DEFINITION, CUCORE_OBJECT_GRAPH_NODE, CUCORE_OBJECT_GRAPH,
                                       CUCORE_OBJECT_GRAPH_BUILDER})
            EXPECT_EQ(live(t), graphs_before_[i++]) << "leaked " << cucore_object_type_name(t);
        KernelFixture::TearDown();
    }
    cucore_buffer_t *buffer(uint64_t size) {
        cucore_buffer_t *b = nullptr;
        EXPECT_EQ(cucore_device_allocate(d0_, size, s0_, &b), CUCORE_SUCCESS) << message();
        buffers_.push_back(b);
        return b;
    }
    std::vector<uint8_t> read(cucore_buffer_t *b, uint64_t size) {
        std::vector<uint8_t> bytes(size);
        EXPECT_EQ(cucore_buffer_copy_to_host(b, 0, bytes.data(), size, s0_), CUCORE_SUCCESS) << message();
        EXPECT_EQ(cucore_stream_synchronize(s0_), CUCORE_SUCCESS) << message();
        return bytes;
    }
    cucore_graph_definition_t *definition() {
        cucore_graph_definition_t *g = nullptr;
        EXPECT_EQ(cucore_graph_definition_create(d0_, &g), CUCORE_SUCCESS) << message();
        return g;
    }
    static cucore_graph_node_type_t type_of(cucore_graph_node_t *node) {
        cucore_graph_node_type_t type = CUCORE_GRAPH_NODE_UNSET;
        EXPECT_EQ(cucore_graph_node_type(node, &type), CUCORE_SUCCESS) << message();
        return type;
    }
    static void *raw(cucore_graph_node_t *node) {
        void *h = nullptr;
        EXPECT_EQ(cucore_graph_node_handle(node, &h), CUCORE_SUCCESS) << message();
        return h;
    }
    static size_t node_count(cucore_graph_definition_t *g) {
        size_t count = 0;
        EXPECT_EQ(cucore_graph_definition_nodes(g, nullptr, 0, &count), CUCORE_SUCCESS) << message();
        return count;
    }
    static void release_all(std::vector<cucore_graph_node_t *> nodes) {
        for (cucore_graph_node_t *n : nodes) cucore_graph_node_release(n);
    }

    std::vector<cucore_buffer_t *> buffers_;
    std::vector<size_t> graphs_before_;
};

// ---- definitions ----------------------------------------------------------------

TEST_F(GraphTest, AFillACopyAndCallbacksRunInDependencyOrder) {
    cucore_buffer_t *a = buffer(64), *b = buffer(64);
    cucore_graph_definition_t *g = definition();
    std::vector<int> order;
    int released = 0;
    Tagged first{&order, 1, &released}, second{&order, 2, &released};
    cucore_graph_node_t *fill = nullptr, *copy = nullptr, *host1 = nullptr, *host2 = nullptr;
    ASSERT_EQ(cucore_graph_definition_add_memset(g, nullptr, 0, a, 0, 0x5A, 1, 64, 1, 0, &fill), CUCORE_SUCCESS)
        << message();
    ASSERT_EQ(cucore_graph_definition_add_memcpy(g, &fill, 1, b, 0, a, 0, 64, &copy), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_definition_add_host_callback(g, &copy, 1, record_tag, &first, release_tag, &host1),
              CUCORE_SUCCESS)
        << message();
    ASSERT_EQ(cucore_graph_definition_add_host_callback(g, &host1, 1, record_tag, &second, release_tag, &host2),
              CUCORE_SUCCESS)
        << message();
    EXPECT_EQ(type_of(fill), CUCORE_GRAPH_NODE_MEMSET);
    EXPECT_EQ(type_of(copy), CUCORE_GRAPH_NODE_MEMCPY);
    EXPECT_EQ(type_of(host1), CUCORE_GRAPH_NODE_HOST_CALLBACK);
    EXPECT_EQ(node_count(g), 4u);

    cucore_graph_t *exec = nullptr;
    ASSERT_EQ(cucore_graph_definition_instantiate(g, nullptr, &exec), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_launch(exec, s0_), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_launch(exec, s0_), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_synchronize(s0_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(read(b, 64), std::vector<uint8_t>(64, 0x5A));
    EXPECT_EQ(order, (std::vector<int>{1, 2, 1, 2}));
    EXPECT_EQ(cucore_graph_set_node_enabled(exec, host1, 0), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("host callback node"), std::string::npos) << message();

    // The definition's copy node changed to copy only the first half: instantiations made after it copy less.
    ASSERT_EQ(cucore_graph_node_set_memcpy(copy, b, 0, a, 0, 32), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_graph_node_set_memcpy(fill, b, 0, a, 0, 32), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_buffer_fill(b, 0, 1, s0_);
    cucore_graph_t *halved = nullptr;
    ASSERT_EQ(cucore_graph_definition_instantiate(g, nullptr, &halved), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_launch(halved, s0_), CUCORE_SUCCESS) << message();
    std::vector<uint8_t> expected(64, 0);
    std::fill(expected.begin(), expected.begin() + 32, 0x5A);
    EXPECT_EQ(read(b, 64), expected);
    cucore_graph_release(halved);
    order.clear();
    ASSERT_EQ(cucore_graph_launch(exec, s0_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(read(b, 64), std::vector<uint8_t>(64, 0x5A)) << "the earlier executable keeps the whole copy";
    order.clear();

    release_all({fill, copy, host1, host2});
    ASSERT_EQ(cucore_graph_definition_release(g), CUCORE_SUCCESS);
    live(CUCORE_OBJECT_ANY);  // drains what the driver let go of
    EXPECT_EQ(released, 0) << "the executable graph still needs the callbacks' data";
    ASSERT_EQ(cucore_graph_launch(exec, s0_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(order.size(), 2u) << "the graph runs after its definition is gone";
    ASSERT_EQ(cucore_graph_release(exec), CUCORE_SUCCESS);
    live(CUCORE_OBJECT_ANY);
    EXPECT_EQ(released, 2) << "each callback's data released exactly once, once nothing needs it";
}

TEST_F(GraphTest, NodesEdgesAndDependenciesAreListedAndChangeable) {
    cucore_graph_definition_t *g = definition();
    cucore_graph_node_t *root = nullptr, *left = nullptr, *right = nullptr, *join = nullptr;
    ASSERT_EQ(cucore_graph_definition_add_empty(g, nullptr, 0, &root), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_definition_add_empty(g, &root, 1, &left), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_graph_definition_add_empty(g, &root, 1, &right), CUCORE_SUCCESS);
    cucore_graph_node_t *both[] = {left, right};
    ASSERT_EQ(cucore_graph_definition_add_empty(g, both, 2, &join), CUCORE_SUCCESS);
    EXPECT_EQ(type_of(join), CUCORE_GRAPH_NODE_EMPTY);

    size_t count = 0;
    cucore_graph_node_t *deps[4] = {};
    ASSERT_EQ(cucore_graph_node_dependencies(join, deps, 4, &count), CUCORE_SUCCESS) << message();
    ASSERT_EQ(count, 2u);
    EXPECT_TRUE((raw(deps[0]) == raw(left) && raw(deps[1]) == raw(right)) ||
                (raw(deps[0]) == raw(right) && raw(deps[1]) == raw(left)));
    release_all({deps[0], deps[1]});
    ASSERT_EQ(cucore_graph_node_dependents(root, deps, 1, &count), CUCORE_SUCCESS) << message();
    EXPECT_EQ(count, 2u) << "the total, though only one handle fitted";
    cucore_graph_node_release(deps[0]);

    cucore_graph_node_t *from[8] = {}, *to[8] = {};
    ASSERT_EQ(cucore_graph_definition_edges(g, from, to, 8, &count), CUCORE_SUCCESS) << message();
    EXPECT_EQ(count, 4u);
    for (size_t i = 0; i < count; ++i) {
        cucore_graph_node_release(from[i]);
        cucore_graph_node_release(to[i]);
    }

    ASSERT_EQ(cucore_graph_node_remove_dependent(left, join), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_node_dependencies(join, nullptr, 0, &count), CUCORE_SUCCESS);
    EXPECT_EQ(count, 1u);
    ASSERT_EQ(cucore_graph_node_add_dependent(left, join), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_node_dependencies(join, nullptr, 0, &count), CUCORE_SUCCESS);
    EXPECT_EQ(count, 2u);
    EXPECT_EQ(cucore_graph_node_add_dependent(left, left), CUCORE_ERROR_INVALID_ARGUMENT);

    cucore_graph_definition_t *owner = nullptr;
    ASSERT_EQ(cucore_graph_node_definition(left, &owner), CUCORE_SUCCESS);
    void *mine = nullptr, *theirs = nullptr;
    cucore_graph_definition_handle(g, &mine);
    cucore_graph_definition_handle(owner, &theirs);
    EXPECT_EQ(mine, theirs);
    cucore_graph_definition_release(owner);

    // A destroyed node: every handle of it is INVALID_STATE, the rest of the graph stays.
    cucore_graph_node_t *again = nullptr;
    ASSERT_EQ(cucore_graph_node_dependents(left, &again, 1, &count), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_graph_node_destroy(join), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_graph_node_type(again, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_graph_node_type_t type;
    EXPECT_EQ(cucore_graph_node_type(again, &type), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("destroyed"), std::string::npos) << message();
    EXPECT_EQ(cucore_graph_node_destroy(join), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(node_count(g), 3u);

    // A dependency of another definition is refused.
    cucore_graph_definition_t *other = definition();
    cucore_graph_node_t *foreign = nullptr;
    EXPECT_EQ(cucore_graph_definition_add_empty(other, &root, 1, &foreign), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(foreign, nullptr);
    EXPECT_NE(message().find("dependencies[0]"), std::string::npos) << message();
    cucore_graph_definition_release(other);
    release_all({root, left, right, join, again});
    cucore_graph_definition_release(g);
}

TEST_F(GraphTest, KernelNodesTakeTheLaunchChecksAndCanBeReadAndSet) {
    CUkernel raw_kernel = nullptr;
    cucore_kernel_t *k = kernel(spec({8, 4}), &raw_kernel);
    cucore_graph_definition_t *g = definition();
    cucore_launch_config_t c = CUCORE_LAUNCH_CONFIG_INIT;
    c.grid[0] = 4;
    c.block[0] = 64;
    const uint64_t pointer = 0x1000;
    const uint32_t n = 7;
    const void *args[] = {&pointer, &n};
    const size_t sizes[] = {8, 4};
    cucore_graph_node_t *node = nullptr;
    // Count and size checks are the launch's.
    EXPECT_EQ(cucore_graph_definition_add_kernel(g, nullptr, 0, &c, k, args, sizes, 1, &node),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("arg_count"), std::string::npos) << message();
    cucore_launch_config_t cluster = c;
    cluster.cluster[0] = 2;
    EXPECT_EQ(cucore_graph_definition_add_kernel(g, nullptr, 0, &cluster, k, args, sizes, 2, &node),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("kernel node"), std::string::npos) << message();
    ASSERT_EQ(cucore_graph_definition_add_kernel(g, nullptr, 0, &c, k, args, sizes, 2, &node), CUCORE_SUCCESS)
        << message();
    EXPECT_EQ(type_of(node), CUCORE_GRAPH_NODE_KERNEL);

    cucore_launch_config_t read_back = CUCORE_LAUNCH_CONFIG_INIT;
    cucore_kernel_t *found = nullptr;
    ASSERT_EQ(cucore_graph_node_kernel_config(node, &read_back, &found), CUCORE_SUCCESS) << message();
    EXPECT_EQ(read_back.grid[0], 4u);
    EXPECT_EQ(read_back.block[0], 64u);
    ASSERT_NE(found, nullptr);
    void *a = nullptr, *b = nullptr;
    cucore_kernel_handle(found, &a);
    cucore_kernel_handle(k, &b);
    EXPECT_EQ(a, b);
    cucore_kernel_release(found);

    c.grid[0] = 8;
    ASSERT_EQ(cucore_graph_node_set_kernel(node, &c, nullptr, args, sizes, 2), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_node_kernel_config(node, &read_back, nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(read_back.grid[0], 8u);

    // The graph launches it with the arguments of the node; a per-node update changes the next launch.
    cucore_graph_t *exec = nullptr;
    ASSERT_EQ(cucore_graph_definition_instantiate(g, nullptr, &exec), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_launch(exec, s0_), CUCORE_SUCCESS) << message();
    const uint32_t m = 9;
    const void *args2[] = {&pointer, &m};
    ASSERT_EQ(cucore_graph_set_kernel_node(exec, node, &c, nullptr, args2, sizes, 2), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_launch(exec, s0_), CUCORE_SUCCESS) << message();
    std::vector<fake::LaunchRecord> launches = fake::launches();
    ASSERT_EQ(launches.size(), 2u);
    uint32_t seen = 0;
    std::memcpy(&seen, launches[0].args[1].data(), 4);
    EXPECT_EQ(seen, 7u);
    std::memcpy(&seen, launches[1].args[1].data(), 4);
    EXPECT_EQ(seen, 9u) << "the executable graph's node was updated";
    EXPECT_EQ(launches[1].config.gridDimX, 8u);

    // Disabled nodes do not run.
    int enabled = -1;
    ASSERT_EQ(cucore_graph_node_enabled(exec, node, &enabled), CUCORE_SUCCESS) << message();
    EXPECT_EQ(enabled, 1);
    ASSERT_EQ(cucore_graph_set_node_enabled(exec, node, 0), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_node_enabled(exec, node, &enabled), CUCORE_SUCCESS);
    EXPECT_EQ(enabled, 0);
    ASSERT_EQ(cucore_graph_launch(exec, s0_), CUCORE_SUCCESS);
    EXPECT_EQ(fake::launches().size(), 2u);
    EXPECT_EQ(cucore_graph_set_node_enabled(exec, node, 2), CUCORE_ERROR_INVALID_ARGUMENT);

    // Wrong node kinds are named.
    cucore_buffer_t *buf = buffer(16);
    EXPECT_EQ(cucore_graph_node_set_memset(node, buf, 0, 0, 1, 16, 1, 0), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("a kernel node"), std::string::npos) << message();
    uint64_t address = 0, size = 0;
    EXPECT_EQ(cucore_graph_node_alloc_info(node, &address, &size), CUCORE_ERROR_INVALID_ARGUMENT);

    cucore_graph_release(exec);
    cucore_graph_node_release(node);
    cucore_graph_definition_release(g);
}

TEST_F(GraphTest, TheGraphHoldsTheKernelItsNodesUse) {
    size_t kernels_before = live(CUCORE_OBJECT_KERNEL);
    cucore_kernel_t *k = nullptr;
    ASSERT_EQ(cucore_kernel_from_handle(fake::make_kernel(spec({4})), nullptr, nullptr, &k), CUCORE_SUCCESS);
    cucore_graph_definition_t *g = definition();
    const uint32_t n = 1;
    const void *args[] = {&n};
    const size_t sizes[] = {4};
    cucore_graph_node_t *node = nullptr;
    ASSERT_EQ(cucore_graph_definition_add_kernel(g, nullptr, 0, nullptr, k, args, sizes, 1, &node), CUCORE_SUCCESS)
        << message();
    cucore_graph_t *exec = nullptr;
    ASSERT_EQ(cucore_graph_definition_instantiate(g, nullptr, &exec), CUCORE_SUCCESS);
    // Release order never matters: the kernel, the node and the definition first.
    cucore_kernel_release(k);
    cucore_graph_node_release(node);
    cucore_graph_definition_release(g);
    EXPECT_EQ(live(CUCORE_OBJECT_KERNEL), kernels_before + 1) << "the executable graph holds the kernel";
    ASSERT_EQ(cucore_graph_launch(exec, s0_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::launches().size(), 1u);
    cucore_graph_release(exec);
    EXPECT_EQ(live(CUCORE_OBJECT_KERNEL), kernels_before);
}

TEST_F(GraphTest, CopyFillEventChildAllocAndFreeNodes) {
    cucore_buffer_t *a = buffer(256), *b = buffer(256);
    cucore_graph_definition_t *g = definition();
    // A 2D fill: 4 rows of 8 16-bit elements, rows 64 bytes apart.
    cucore_graph_node_t *fill = nullptr, *refused = nullptr;
    EXPECT_EQ(cucore_graph_definition_add_memset(g, nullptr, 0, a, 0, 0x1FFFF, 2, 8, 1, 0, &refused),
              CUCORE_ERROR_INVALID_ARGUMENT)
        << "a value wider than the element";
    EXPECT_EQ(cucore_graph_definition_add_memset(g, nullptr, 0, a, 0, 1, 3, 8, 1, 0, &refused),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_graph_definition_add_memset(g, nullptr, 0, a, 0, 1, 4, 8, 5, 64, &refused),
              CUCORE_ERROR_INVALID_ARGUMENT)
        << "4 rows of 64 bytes and a fifth run past the buffer";
    ASSERT_EQ(cucore_graph_definition_add_memset(g, nullptr, 0, a, 0, 0xBEEF, 2, 8, 4, 64, &fill), CUCORE_SUCCESS)
        << message();
    // A strided copy of those rows into b, packed.
    cucore_copy_3d_t copy = CUCORE_COPY_3D_INIT;
    copy.src.buffer = a;
    copy.src.pitch = 64;
    copy.dst.buffer = b;
    copy.dst.pitch = 16;
    copy.width = 16;
    copy.rows = 4;
    cucore_graph_node_t *strided = nullptr;
    ASSERT_EQ(cucore_graph_definition_add_memcpy_3d(g, &fill, 1, &copy, &strided), CUCORE_SUCCESS) << message();
    cucore_graph_node_t *outside = reinterpret_cast<cucore_graph_node_t *>(0x1);
    EXPECT_EQ(cucore_graph_definition_add_memcpy(g, nullptr, 0, b, 200, a, 0, 100, &outside),
              CUCORE_ERROR_INVALID_ARGUMENT)
        << "outside 'dst'";
    EXPECT_EQ(outside, nullptr);

    // Event record and wait nodes.
    cucore_event_t *e = nullptr;
    ASSERT_EQ(cucore_event_create(d0_, nullptr, &e), CUCORE_SUCCESS);
    cucore_graph_node_t *record = nullptr, *wait = nullptr;
    ASSERT_EQ(cucore_graph_definition_add_event_record(g, &strided, 1, e, &record), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_definition_add_event_wait(g, &record, 1, e, &wait), CUCORE_SUCCESS) << message();
    EXPECT_EQ(type_of(record), CUCORE_GRAPH_NODE_EVENT_RECORD);
    EXPECT_EQ(type_of(wait), CUCORE_GRAPH_NODE_EVENT_WAIT);
    cucore_event_release(e);  // held by the definition

    // A child graph copied in, and its body read back.
    cucore_graph_definition_t *child = definition();
    cucore_graph_node_t *inner = nullptr, *embedded = nullptr;
    ASSERT_EQ(cucore_graph_definition_add_empty(child, nullptr, 0, &inner), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_graph_definition_add_child_graph(g, &wait, 1, child, &embedded), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_graph_definition_add_child_graph(g, nullptr, 0, g, &refused), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_graph_definition_t *body = nullptr;
    size_t count = 0;
    ASSERT_EQ(cucore_graph_node_bodies(embedded, &body, 1, &count), CUCORE_SUCCESS) << message();
    ASSERT_EQ(count, 1u);
    EXPECT_EQ(node_count(body), 1u);
    int owned = 1;
    ASSERT_EQ(cucore_graph_definition_is_owned(body, &owned), CUCORE_SUCCESS);
    EXPECT_EQ(owned, 0) << "a child graph belongs to its node";
    cucore_graph_definition_release(body);
    cucore_graph_definition_release(child);

    // Allocation and free nodes.
    cucore_graph_node_t *alloc = nullptr, *free_node = nullptr;
    uint64_t address = 0, size = 0;
    EXPECT_EQ(cucore_graph_definition_add_alloc(g, nullptr, 0, 0, nullptr, &refused, &address),
              CUCORE_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(cucore_graph_definition_add_alloc(g, &embedded, 1, 4096, nullptr, &alloc, &address), CUCORE_SUCCESS)
        << message();
    EXPECT_NE(address, 0u);
    ASSERT_EQ(cucore_graph_node_alloc_info(alloc, &address, &size), CUCORE_SUCCESS) << message();
    EXPECT_EQ(size, 4096u);
    ASSERT_EQ(cucore_graph_definition_add_free(g, &alloc, 1, address, &free_node), CUCORE_SUCCESS) << message();
    EXPECT_EQ(type_of(alloc), CUCORE_GRAPH_NODE_ALLOC);
    EXPECT_EQ(type_of(free_node), CUCORE_GRAPH_NODE_FREE);
    cucore_graph_alloc_options_t options = CUCORE_GRAPH_ALLOC_OPTIONS_INIT;
    options.peer_access_count = 9;
    EXPECT_EQ(cucore_graph_definition_add_alloc(g, nullptr, 0, 64, &options, &refused, &address),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(refused, nullptr);

    cucore_graph_t *exec = nullptr;
    ASSERT_EQ(cucore_graph_definition_instantiate(g, nullptr, &exec), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_launch(exec, s0_), CUCORE_SUCCESS) << message();
    const std::vector<uint8_t> packed = read(b, 64);
    for (size_t i = 0; i < 64; i += 2) {
        ASSERT_EQ(packed[i], 0xEF) << i;
        ASSERT_EQ(packed[i + 1], 0xBE) << i;
    }
    cucore_graph_release(exec);
    release_all({fill, strided, record, wait, inner, embedded, alloc, free_node});
    cucore_graph_definition_release(g);
}

TEST_F(GraphTest, ClonesFindTheirNodesAndTheDotFileNamesThem) {
    cucore_buffer_t *a = buffer(32);
    cucore_graph_definition_t *g = definition();
    cucore_graph_node_t *fill = nullptr;
    ASSERT_EQ(cucore_graph_definition_add_memset(g, nullptr, 0, a, 0, 7, 4, 8, 1, 0, &fill), CUCORE_SUCCESS);
    cucore_graph_definition_t *clone = nullptr;
    ASSERT_EQ(cucore_graph_definition_clone(g, &clone), CUCORE_SUCCESS) << message();
    EXPECT_EQ(node_count(clone), 1u);
    cucore_graph_node_t *copy = nullptr;
    ASSERT_EQ(cucore_graph_node_find_in_clone(fill, clone, &copy), CUCORE_SUCCESS) << message();
    EXPECT_NE(raw(copy), raw(fill));
    EXPECT_EQ(type_of(copy), CUCORE_GRAPH_NODE_MEMSET);
    // The clone changes alone.
    cucore_graph_node_t *extra = nullptr;
    ASSERT_EQ(cucore_graph_definition_add_empty(clone, &copy, 1, &extra), CUCORE_SUCCESS);
    EXPECT_EQ(node_count(g), 1u);
    EXPECT_EQ(node_count(clone), 2u);

    const std::string path = ::testing::TempDir() + "cucore_graph_test.dot";
    std::remove(path.c_str());
    ASSERT_EQ(cucore_graph_definition_debug_dot_print(clone, path.c_str(), CUCORE_GRAPH_DOT_VERBOSE), CUCORE_SUCCESS)
        << message();
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    EXPECT_NE(text.str().find("digraph"), std::string::npos) << text.str();
    EXPECT_NE(text.str().find("memset"), std::string::npos) << text.str();
    std::remove(path.c_str());
    EXPECT_EQ(cucore_graph_definition_debug_dot_print(g, "", 0), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_graph_definition_debug_dot_print(g, path.c_str(), 1u << 16), CUCORE_ERROR_INVALID_ARGUMENT);

    release_all({fill, copy, extra});
    cucore_graph_definition_release(clone);
    cucore_graph_definition_release(g);
}

TEST_F(GraphTest, AnUpdateWithTheSameTopologyTakesItsParametersAndAnotherIsRefused) {
    cucore_buffer_t *a = buffer(16);
    cucore_graph_definition_t *first = definition(), *second = definition(), *bigger = definition();
    cucore_graph_node_t *n1 = nullptr, *n2 = nullptr, *n3 = nullptr, *n4 = nullptr;
    ASSERT_EQ(cucore_graph_definition_add_memset(first, nullptr, 0, a, 0, 1, 1, 16, 1, 0, &n1), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_graph_definition_add_memset(second, nullptr, 0, a, 0, 2, 1, 16, 1, 0, &n2), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_graph_definition_add_memset(bigger, nullptr, 0, a, 0, 3, 1, 16, 1, 0, &n3), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_graph_definition_add_empty(bigger, &n3, 1, &n4), CUCORE_SUCCESS);
    cucore_graph_t *exec = nullptr;
    ASSERT_EQ(cucore_graph_definition_instantiate(first, nullptr, &exec), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_graph_launch(exec, s0_), CUCORE_SUCCESS);
    EXPECT_EQ(read(a, 16), std::vector<uint8_t>(16, 1));

    cucore_graph_update_result_t result = CUCORE_GRAPH_UPDATE_ERROR;
    ASSERT_EQ(cucore_graph_update(exec, second, &result), CUCORE_SUCCESS) << message();
    EXPECT_EQ(result, CUCORE_GRAPH_UPDATE_SUCCESS);
    ASSERT_EQ(cucore_graph_launch(exec, s0_), CUCORE_SUCCESS);
    EXPECT_EQ(read(a, 16), std::vector<uint8_t>(16, 2));

    EXPECT_EQ(cucore_graph_update(exec, bigger, &result), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(result, CUCORE_GRAPH_UPDATE_TOPOLOGY_CHANGED);
    EXPECT_NE(message().find("TOPOLOGY_CHANGED"), std::string::npos) << message();
    ASSERT_EQ(cucore_graph_launch(exec, s0_), CUCORE_SUCCESS);
    EXPECT_EQ(read(a, 16), std::vector<uint8_t>(16, 2)) << "a refused update leaves the graph as it was";

    // Per-node updates of fills and copies.
    cucore_buffer_t *b = buffer(16);
    ASSERT_EQ(cucore_graph_set_memset_node(exec, n1, a, 0, 5, 1, 16, 1, 0), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_launch(exec, s0_), CUCORE_SUCCESS);
    EXPECT_EQ(read(a, 16), std::vector<uint8_t>(16, 5));
    EXPECT_EQ(cucore_graph_set_memcpy_node(exec, n1, b, 0, a, 0, 16), CUCORE_ERROR_INVALID_ARGUMENT)
        << "a memset node is not a memcpy node";
    int calls = 0;
    EXPECT_EQ(cucore_graph_set_host_callback_node(exec, n1, [](void *c) { ++*static_cast<int *>(c); }, &calls,
                                                  nullptr),
              CUCORE_ERROR_INVALID_ARGUMENT);

    cucore_graph_release(exec);
    release_all({n1, n2, n3, n4});
    for (cucore_graph_definition_t *g : {first, second, bigger}) cucore_graph_definition_release(g);
}

TEST_F(GraphTest, ConditionalNodesGetBodiesOfTheirKind) {
    cucore_graph_definition_t *g = definition();
    uint64_t condition = 0;
    ASSERT_EQ(cucore_graph_definition_create_condition(g, 1, CUCORE_GRAPH_CONDITION_SET_DEFAULT, &condition),
              CUCORE_SUCCESS)
        << message();
    EXPECT_NE(condition, 0u);
    uint64_t refused_condition = 5;
    EXPECT_EQ(cucore_graph_definition_create_condition(g, 1, 2, &refused_condition), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(refused_condition, 0u);
    cucore_graph_definition_t *bodies[3] = {};
    cucore_graph_node_t *node = nullptr;
    EXPECT_EQ(cucore_graph_definition_add_conditional(g, nullptr, 0, condition, CUCORE_GRAPH_CONDITIONAL_WHILE, 2,
                                                      bodies, &node),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("WHILE"), std::string::npos) << message();
    EXPECT_EQ(cucore_graph_definition_add_conditional(g, nullptr, 0, condition, CUCORE_GRAPH_CONDITIONAL_IF, 3, bodies,
                                                      &node),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_graph_definition_add_conditional(g, nullptr, 0, 0, CUCORE_GRAPH_CONDITIONAL_IF, 1, bodies,
                                                      &node),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_graph_definition_add_conditional(g, nullptr, 0, condition,
                                                      static_cast<cucore_graph_conditional_type_t>(9), 1, bodies,
                                                      &node),
              CUCORE_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(cucore_graph_definition_add_conditional(g, nullptr, 0, condition, CUCORE_GRAPH_CONDITIONAL_IF, 2,
                                                      bodies, &node),
              CUCORE_SUCCESS)
        << message();
    EXPECT_EQ(type_of(node), CUCORE_GRAPH_NODE_CONDITIONAL);
    ASSERT_NE(bodies[0], nullptr);
    ASSERT_NE(bodies[1], nullptr);
    cucore_graph_node_t *then_node = nullptr;
    ASSERT_EQ(cucore_graph_definition_add_empty(bodies[0], nullptr, 0, &then_node), CUCORE_SUCCESS) << message();
    cucore_graph_definition_t *listed[2] = {};
    size_t count = 0;
    ASSERT_EQ(cucore_graph_node_bodies(node, listed, 2, &count), CUCORE_SUCCESS) << message();
    ASSERT_EQ(count, 2u);
    EXPECT_EQ(node_count(listed[0]), 1u);
    EXPECT_EQ(node_count(listed[1]), 0u);
    for (cucore_graph_definition_t *d : listed) cucore_graph_definition_release(d);
    // Older drivers lack else bodies and switches.
    fake::set_driver_version(12040);
    cucore_graph_node_t *refused = nullptr;
    EXPECT_EQ(cucore_graph_definition_add_conditional(g, nullptr, 0, condition, CUCORE_GRAPH_CONDITIONAL_SWITCH, 2,
                                                      listed, &refused),
              CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_NE(message().find("12.8"), std::string::npos) << message();
    fake::set_driver_version(13000);
    cucore_graph_node_release(then_node);
    // The body definitions outlive their handles' parent: release order never matters.
    cucore_graph_node_release(node);
    cucore_graph_definition_release(g);
    for (cucore_graph_definition_t *d : bodies) cucore_graph_definition_release(d);
}

// ---- builders ------------------------------------------------------------------------

TEST_F(GraphTest, ABuilderCapturesTheStreamsWorkAndItRunsOnLaunch) {
    cucore_buffer_t *a = buffer(64), *b = buffer(64);
    cucore_graph_builder_t *builder = nullptr;
    ASSERT_EQ(cucore_graph_builder_create(s0_, &builder), CUCORE_SUCCESS) << message();
    int building = -1;
    ASSERT_EQ(cucore_graph_builder_is_building(builder, &building), CUCORE_SUCCESS);
    EXPECT_EQ(building, 0);
    ASSERT_EQ(cucore_graph_builder_begin_building(builder, CUCORE_CAPTURE_MODE_DEFAULT), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_builder_is_building(builder, &building), CUCORE_SUCCESS);
    EXPECT_EQ(building, 1);
    cucore_capture_status_t status = CUCORE_CAPTURE_STATUS_NONE;
    ASSERT_EQ(cucore_stream_capture_status(s0_, &status), CUCORE_SUCCESS) << message();
    EXPECT_EQ(status, CUCORE_CAPTURE_STATUS_ACTIVE);

    std::vector<int> order;
    int released = 0;
    Tagged tag{&order, 7, &released};
    ASSERT_EQ(cucore_buffer_fill(a, 0x3C, 1, s0_), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_buffer_copy(b, a, s0_), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_builder_callback(builder, record_tag, &tag, release_tag), CUCORE_SUCCESS) << message();
    EXPECT_TRUE(order.empty()) << "captured work does not run";

    // A synchronize is refused by name and the capture goes on.
    EXPECT_EQ(cucore_stream_synchronize(s0_), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("captured"), std::string::npos) << message();
    ASSERT_EQ(cucore_stream_capture_status(s0_, &status), CUCORE_SUCCESS);
    EXPECT_EQ(status, CUCORE_CAPTURE_STATUS_ACTIVE);
    int done = 0;
    EXPECT_EQ(cucore_stream_query(s0_, &done), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(cucore_graph_builder_begin_building(builder, CUCORE_CAPTURE_MODE_GLOBAL), CUCORE_ERROR_INVALID_STATE);
    cucore_graph_definition_t *early = nullptr;
    EXPECT_EQ(cucore_graph_builder_definition(builder, &early), CUCORE_ERROR_INVALID_STATE);

    ASSERT_EQ(cucore_graph_builder_end_building(builder), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_capture_status(s0_, &status), CUCORE_SUCCESS);
    EXPECT_EQ(status, CUCORE_CAPTURE_STATUS_NONE);
    cucore_graph_definition_t *captured = nullptr;
    ASSERT_EQ(cucore_graph_builder_definition(builder, &captured), CUCORE_SUCCESS) << message();
    EXPECT_EQ(node_count(captured), 3u) << "fill, copy, callback";
    cucore_graph_definition_release(captured);

    cucore_graph_t *exec = nullptr;
    ASSERT_EQ(cucore_graph_builder_complete(builder, nullptr, &exec), CUCORE_SUCCESS) << message();
    // The builder's buffers may go: the graph holds them.
    ASSERT_EQ(cucore_graph_builder_release(builder), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_graph_launch(exec, s0_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(read(b, 64), std::vector<uint8_t>(64, 0x3C));
    EXPECT_EQ(order, std::vector<int>{7});
    cucore_graph_release(exec);
    live(CUCORE_OBJECT_ANY);
    EXPECT_EQ(released, 1);
}

TEST_F(GraphTest, ForkedBuildersMustBeJoinedAndBothBranchesLand) {
    cucore_buffer_t *a = buffer(16), *b = buffer(16);
    cucore_graph_builder_t *root = nullptr;
    ASSERT_EQ(cucore_graph_builder_create_on_device(d0_, &root), CUCORE_SUCCESS) << message();
    cucore_graph_builder_t *forks[2] = {};
    EXPECT_EQ(cucore_graph_builder_split(root, 2, forks), CUCORE_ERROR_INVALID_STATE) << "not building yet";
    ASSERT_EQ(cucore_graph_builder_begin_building(root, CUCORE_CAPTURE_MODE_THREAD_LOCAL), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_graph_builder_split(root, 2, forks), CUCORE_SUCCESS) << message();
    cucore_stream_t *left = nullptr, *right = nullptr;
    ASSERT_EQ(cucore_graph_builder_stream(forks[0], &left), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_graph_builder_stream(forks[1], &right), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_buffer_fill(a, 1, 1, left), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_buffer_fill(b, 2, 1, right), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_graph_builder_end_building(root), CUCORE_ERROR_INVALID_STATE) << "a fork is not joined";
    EXPECT_NE(message().find("not joined"), std::string::npos) << message();
    EXPECT_EQ(cucore_graph_builder_end_building(forks[1]), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(cucore_graph_builder_join(root, &root, 1), CUCORE_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(cucore_graph_builder_join(root, &forks[1], 1), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_graph_builder_join(root, &forks[1], 1), CUCORE_ERROR_INVALID_STATE) << "joined already";
    ASSERT_EQ(cucore_graph_builder_end_building(root), CUCORE_SUCCESS) << message();
    cucore_graph_definition_t *captured = nullptr;
    ASSERT_EQ(cucore_graph_builder_definition(root, &captured), CUCORE_SUCCESS);
    EXPECT_GE(node_count(captured), 2u);
    cucore_graph_t *exec = nullptr;
    ASSERT_EQ(cucore_graph_definition_instantiate(captured, nullptr, &exec), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_launch(exec, s0_), CUCORE_SUCCESS);
    EXPECT_EQ(read(a, 16), std::vector<uint8_t>(16, 1));
    EXPECT_EQ(read(b, 16), std::vector<uint8_t>(16, 2));
    cucore_graph_release(exec);
    cucore_graph_definition_release(captured);
    cucore_stream_release(left);
    cucore_stream_release(right);
    for (cucore_graph_builder_t *f : forks) cucore_graph_builder_release(f);
    cucore_graph_builder_release(root);
}

TEST_F(GraphTest, ConditionalBodiesAreBuildersAndEmbeddedGraphsAreCopied) {
    cucore_buffer_t *a = buffer(16);
    cucore_graph_builder_t *child = nullptr;
    ASSERT_EQ(cucore_graph_builder_create_on_device(d0_, &child), CUCORE_SUCCESS);
    cucore_stream_t *child_stream = nullptr;
    ASSERT_EQ(cucore_graph_builder_stream(child, &child_stream), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_graph_builder_begin_building(child, CUCORE_CAPTURE_MODE_RELAXED), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_buffer_fill(a, 9, 1, child_stream), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_graph_builder_end_building(child), CUCORE_SUCCESS) << message();

    cucore_graph_builder_t *root = nullptr;
    ASSERT_EQ(cucore_graph_builder_create(s0_, &root), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_graph_builder_embed(root, child), CUCORE_ERROR_INVALID_STATE) << "root not building";
    ASSERT_EQ(cucore_graph_builder_begin_building(root, CUCORE_CAPTURE_MODE_DEFAULT), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_graph_builder_embed(root, child), CUCORE_SUCCESS) << message();
    uint64_t condition = 0;
    ASSERT_EQ(cucore_graph_builder_create_condition(root, 0, 0, &condition), CUCORE_SUCCESS) << message();
    cucore_graph_builder_t *bodies[2] = {};
    ASSERT_EQ(cucore_graph_builder_add_conditional(root, condition, CUCORE_GRAPH_CONDITIONAL_IF, 2, bodies),
              CUCORE_SUCCESS)
        << message();
    int building = 0;
    ASSERT_EQ(cucore_graph_builder_is_building(bodies[0], &building), CUCORE_SUCCESS);
    EXPECT_EQ(building, 1) << "bodies are building when made";
    cucore_stream_t *then_stream = nullptr;
    ASSERT_EQ(cucore_graph_builder_stream(bodies[0], &then_stream), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_buffer_fill(a, 4, 1, then_stream), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_graph_builder_end_building(root), CUCORE_ERROR_INVALID_STATE) << "bodies still building";
    ASSERT_EQ(cucore_graph_builder_end_building(bodies[0]), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_builder_end_building(bodies[1]), CUCORE_SUCCESS) << message();
    cucore_graph_definition_t *none = nullptr;
    EXPECT_EQ(cucore_graph_builder_definition(bodies[0], &none), CUCORE_ERROR_INVALID_STATE);
    ASSERT_EQ(cucore_graph_builder_end_building(root), CUCORE_SUCCESS) << message();

    cucore_graph_definition_t *captured = nullptr;
    ASSERT_EQ(cucore_graph_builder_definition(root, &captured), CUCORE_SUCCESS);
    cucore_graph_node_t *nodes[4] = {};
    size_t count = 0;
    ASSERT_EQ(cucore_graph_definition_nodes(captured, nodes, 4, &count), CUCORE_SUCCESS);
    ASSERT_EQ(count, 2u) << "the child graph and the conditional";
    bool saw_child = false, saw_conditional = false;
    for (size_t i = 0; i < count; ++i) {
        saw_child |= type_of(nodes[i]) == CUCORE_GRAPH_NODE_CHILD_GRAPH;
        if (type_of(nodes[i]) == CUCORE_GRAPH_NODE_CONDITIONAL) {
            saw_conditional = true;
            cucore_graph_definition_t *listed[2] = {};
            size_t bodies_count = 0;
            ASSERT_EQ(cucore_graph_node_bodies(nodes[i], listed, 2, &bodies_count), CUCORE_SUCCESS) << message();
            ASSERT_EQ(bodies_count, 2u);
            EXPECT_EQ(node_count(listed[0]), 1u) << "the then body captured its fill";
            for (cucore_graph_definition_t *d : listed) cucore_graph_definition_release(d);
        }
        cucore_graph_node_release(nodes[i]);
    }
    EXPECT_TRUE(saw_child);
    EXPECT_TRUE(saw_conditional);
    const std::string path = ::testing::TempDir() + "cucore_builder_test.dot";
    ASSERT_EQ(cucore_graph_builder_debug_dot_print(root, path.c_str(), 0), CUCORE_SUCCESS) << message();
    std::remove(path.c_str());
    cucore_graph_definition_release(captured);
    cucore_stream_release(then_stream);
    cucore_stream_release(child_stream);
    for (cucore_graph_builder_t *b : bodies) cucore_graph_builder_release(b);
    cucore_graph_builder_release(root);
    cucore_graph_builder_release(child);
}

TEST_F(GraphTest, AnInvalidatedCaptureEndsWithAClearErrorAndLeavesTheStreamUsable) {
    cucore_graph_builder_t *builder = nullptr;
    ASSERT_EQ(cucore_graph_builder_create(s0_, &builder), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_graph_builder_begin_building(builder, CUCORE_CAPTURE_MODE_GLOBAL), CUCORE_SUCCESS);
    // A context synchronize in a global-mode capture is the driver's to refuse; the message says why.
    cucore_context_t *context = nullptr;
    ASSERT_EQ(cucore_context_get_primary(d0_, &context), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_context_synchronize(context), CUCORE_ERROR_INVALID_STATE) << message();
    EXPECT_NE(message().find("captured into a graph"), std::string::npos) << message();
    cucore_context_release(context);
    // The same stream wrapped as a foreign stream is not known to capture: its synchronize reaches the
    // driver, which invalidates the capture.
    cucore_stream_t *foreign = nullptr;
    ASSERT_EQ(cucore_stream_from_handle(cu_s0_, nullptr, nullptr, &foreign), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_stream_synchronize(foreign), CUCORE_ERROR_INVALID_STATE) << message();
    EXPECT_NE(message().find("cuStreamSynchronize"), std::string::npos) << message();
    cucore_stream_release(foreign);
    EXPECT_EQ(cucore_graph_builder_end_building(builder), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("invalidated"), std::string::npos) << message();
    cucore_capture_status_t status = CUCORE_CAPTURE_STATUS_ACTIVE;
    ASSERT_EQ(cucore_stream_capture_status(s0_, &status), CUCORE_SUCCESS);
    EXPECT_EQ(status, CUCORE_CAPTURE_STATUS_NONE);
    EXPECT_EQ(cucore_stream_synchronize(s0_), CUCORE_SUCCESS) << "the stream is usable again: " << message();
    cucore_graph_builder_release(builder);
}

TEST_F(GraphTest, ABuilderReleasedWhileBuildingEndsItsCapture) {
    cucore_graph_builder_t *builder = nullptr;
    ASSERT_EQ(cucore_graph_builder_create(s0_, &builder), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_graph_builder_begin_building(builder, CUCORE_CAPTURE_MODE_DEFAULT), CUCORE_SUCCESS);
    cucore_graph_builder_release(builder);
    cucore_capture_status_t status = CUCORE_CAPTURE_STATUS_ACTIVE;
    ASSERT_EQ(cucore_stream_capture_status(s0_, &status), CUCORE_SUCCESS);
    EXPECT_EQ(status, CUCORE_CAPTURE_STATUS_NONE);
    EXPECT_EQ(cucore_stream_synchronize(s0_), CUCORE_SUCCESS) << message();
    cucore_stream_t *legacy = nullptr;
    ASSERT_EQ(cucore_stream_get_legacy_default(d0_, &legacy), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_graph_builder_create(legacy, &builder), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("legacy"), std::string::npos) << message();
    cucore_stream_release(legacy);
}

TEST_F(GraphTest, CapturedLaunchesKnowTheirKernelAndHostCopiesAreRefused) {
    cucore_kernel_t *k = kernel(spec({4}));
    cucore_buffer_t *a = buffer(16);
    cucore_graph_builder_t *builder = nullptr;
    ASSERT_EQ(cucore_graph_builder_create(s0_, &builder), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_graph_builder_begin_building(builder, CUCORE_CAPTURE_MODE_DEFAULT), CUCORE_SUCCESS);
    const uint32_t n = 3;
    const void *args[] = {&n};
    const size_t sizes[] = {4};
    ASSERT_EQ(cucore_launch(s0_, nullptr, k, args, sizes, 1), CUCORE_SUCCESS) << message();
    uint8_t host[16] = {};
    EXPECT_EQ(cucore_buffer_copy_to_host(a, 0, host, 16, s0_), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("pinned buffer"), std::string::npos) << message();
    EXPECT_EQ(cucore_buffer_copy_from_host(a, 0, host, 16, s0_), CUCORE_ERROR_INVALID_STATE);
    ASSERT_EQ(cucore_graph_builder_end_building(builder), CUCORE_SUCCESS) << message();
    cucore_graph_definition_t *captured = nullptr;
    ASSERT_EQ(cucore_graph_builder_definition(builder, &captured), CUCORE_SUCCESS);
    cucore_graph_node_t *node = nullptr;
    size_t count = 0;
    ASSERT_EQ(cucore_graph_definition_nodes(captured, &node, 1, &count), CUCORE_SUCCESS);
    ASSERT_EQ(count, 1u) << "the refused copies left nothing in the graph";
    cucore_launch_config_t config = CUCORE_LAUNCH_CONFIG_INIT;
    cucore_kernel_t *found = nullptr;
    ASSERT_EQ(cucore_graph_node_kernel_config(node, &config, &found), CUCORE_SUCCESS) << message();
    EXPECT_NE(found, nullptr) << "a captured launch's node knows its kernel";
    cucore_kernel_release(found);
    // So its arguments can be set without naming the kernel again.
    const uint32_t m = 4;
    const void *args2[] = {&m};
    EXPECT_EQ(cucore_graph_node_set_kernel(node, nullptr, nullptr, args2, sizes, 1), CUCORE_SUCCESS) << message();
    cucore_device_t *owner = nullptr;
    ASSERT_EQ(cucore_graph_definition_device(captured, &owner), CUCORE_SUCCESS) << message();
    int ordinal = -1;
    ASSERT_EQ(cucore_device_ordinal(owner, &ordinal), CUCORE_SUCCESS);
    EXPECT_EQ(ordinal, 0);
    cucore_device_release(owner);
    // A bad handle is named before a NULL function.
    EXPECT_EQ(cucore_graph_builder_callback(nullptr, nullptr, nullptr, nullptr), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(cucore_graph_node_set_host_callback(nullptr, nullptr, nullptr, nullptr), CUCORE_ERROR_INVALID_HANDLE);
    cucore_graph_node_release(node);
    cucore_graph_definition_release(captured);
    cucore_graph_builder_release(builder);
}

// ---- graph memory ------------------------------------------------------------------

TEST_F(GraphTest, GraphMemoryAllocatesOnlyWhileCapturing) {
    cucore_memory_resource_t *resource = nullptr;
    ASSERT_EQ(cucore_graph_memory_resource_create(d0_, &resource), CUCORE_SUCCESS) << message();
    cucore_memory_resource_kind_t kind = CUCORE_MEMORY_RESOURCE_UNSET;
    ASSERT_EQ(cucore_memory_resource_kind(resource, &kind), CUCORE_SUCCESS);
    EXPECT_EQ(kind, CUCORE_MEMORY_RESOURCE_GRAPH);
    cucore_buffer_t *refused = nullptr;
    EXPECT_EQ(cucore_memory_resource_allocate(resource, 256, s0_, &refused), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("captured"), std::string::npos) << message();

    cucore_graph_builder_t *builder = nullptr;
    ASSERT_EQ(cucore_graph_builder_create(s0_, &builder), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_graph_builder_begin_building(builder, CUCORE_CAPTURE_MODE_DEFAULT), CUCORE_SUCCESS);
    cucore_buffer_t *scratch = nullptr;
    ASSERT_EQ(cucore_memory_resource_allocate(resource, 256, s0_, &scratch), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_buffer_fill(scratch, 0, 4, s0_), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_buffer_release(scratch), CUCORE_SUCCESS) << "a free node, captured";
    ASSERT_EQ(cucore_graph_builder_end_building(builder), CUCORE_SUCCESS) << message();
    cucore_graph_definition_t *captured = nullptr;
    ASSERT_EQ(cucore_graph_builder_definition(builder, &captured), CUCORE_SUCCESS);
    cucore_graph_node_t *nodes[4] = {};
    size_t count = 0;
    ASSERT_EQ(cucore_graph_definition_nodes(captured, nodes, 4, &count), CUCORE_SUCCESS);
    ASSERT_EQ(count, 3u);
    int allocs = 0, frees = 0;
    for (size_t i = 0; i < count; ++i) {
        allocs += type_of(nodes[i]) == CUCORE_GRAPH_NODE_ALLOC;
        frees += type_of(nodes[i]) == CUCORE_GRAPH_NODE_FREE;
        cucore_graph_node_release(nodes[i]);
    }
    EXPECT_EQ(allocs, 1);
    EXPECT_EQ(frees, 1);
    cucore_graph_t *exec = nullptr;
    ASSERT_EQ(cucore_graph_builder_complete(builder, nullptr, &exec), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_launch(exec, s0_), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_synchronize(s0_), CUCORE_SUCCESS);

    uint64_t value = 0;
    ASSERT_EQ(cucore_graph_memory_resource_attribute(resource, CUCORE_GRAPH_MEMORY_USED_HIGH, &value), CUCORE_SUCCESS)
        << message();
    EXPECT_GE(value, 256u);
    ASSERT_EQ(cucore_graph_memory_resource_reset_attribute(resource, CUCORE_GRAPH_MEMORY_USED_HIGH), CUCORE_SUCCESS)
        << message();
    EXPECT_EQ(cucore_graph_memory_resource_reset_attribute(resource, CUCORE_GRAPH_MEMORY_USED_CURRENT),
              CUCORE_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(cucore_graph_memory_resource_attribute(resource, CUCORE_GRAPH_MEMORY_RESERVED_CURRENT, &value),
              CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_trim(resource, 0), CUCORE_SUCCESS) << message();
    cucore_memory_resource_t *pool = nullptr;
    ASSERT_EQ(cucore_device_get_memory_resource(d0_, &pool), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_graph_memory_resource_attribute(pool, CUCORE_GRAPH_MEMORY_USED_HIGH, &value),
              CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_memory_resource_release(pool);

    cucore_graph_release(exec);
    cucore_graph_definition_release(captured);
    cucore_graph_builder_release(builder);
    cucore_memory_resource_release(resource);
}

// ---- arguments and handles -------------------------------------------------------------

TEST_F(GraphTest, ArgumentsAreCheckedAndOutPointersCleared) {
    cucore_graph_definition_t *g = definition();
    EXPECT_EQ(cucore_graph_definition_create(d0_, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_graph_node_t *node = reinterpret_cast<cucore_graph_node_t *>(0x1);
    EXPECT_EQ(cucore_graph_definition_add_empty(nullptr, nullptr, 0, &node), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(node, nullptr);
    EXPECT_EQ(cucore_graph_definition_add_empty(g, nullptr, 2, &node), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_graph_definition_add_host_callback(g, nullptr, 0, nullptr, nullptr, nullptr, &node),
              CUCORE_ERROR_INVALID_ARGUMENT);
    int released = 0;
    std::vector<int> order;
    Tagged tag{&order, 0, &released};
    EXPECT_EQ(cucore_graph_definition_add_host_callback(nullptr, nullptr, 0, record_tag, &tag, release_tag, &node),
              CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(released, 1) << "a failed call releases the callback's data";
    cucore_graph_complete_options_t options = CUCORE_GRAPH_COMPLETE_OPTIONS_INIT;
    options.flags = 64;
    cucore_graph_t *exec = nullptr;
    EXPECT_EQ(cucore_graph_definition_instantiate(g, &options, &exec), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("options.flags"), std::string::npos) << message();
    options.flags = CUCORE_GRAPH_COMPLETE_AUTO_FREE_ON_LAUNCH;
    options.upload_stream = s0_;
    ASSERT_EQ(cucore_graph_definition_instantiate(g, &options, &exec), CUCORE_SUCCESS) << message();
    cucore_stream_t *other = nullptr;
    ASSERT_EQ(cucore_stream_create(d1_, nullptr, &other), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_graph_launch(exec, other), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("device 1"), std::string::npos) << message();
    ASSERT_EQ(cucore_graph_upload(exec, s0_), CUCORE_SUCCESS) << message();
    void *cu = nullptr;
    ASSERT_EQ(cucore_graph_handle(exec, &cu), CUCORE_SUCCESS);
    EXPECT_NE(cu, nullptr);
    EXPECT_EQ(cucore_graph_builder_begin_building(reinterpret_cast<cucore_graph_builder_t *>(g),
                                                  CUCORE_CAPTURE_MODE_DEFAULT),
              CUCORE_ERROR_INVALID_HANDLE)
        << "a definition is not a builder";
    cucore_graph_builder_t *builder = nullptr;
    ASSERT_EQ(cucore_graph_builder_create(s0_, &builder), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_graph_builder_begin_building(builder, static_cast<cucore_capture_mode_t>(7)),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_graph_builder_callback(builder, record_tag, &tag, release_tag), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(released, 2);
    EXPECT_EQ(cucore_graph_builder_end_building(builder), CUCORE_ERROR_INVALID_STATE);
    cucore_graph_builder_release(builder);
    cucore_stream_release(other);
    cucore_graph_release(exec);
    cucore_graph_definition_release(g);
    EXPECT_EQ(cucore_graph_definition_release(g), CUCORE_ERROR_INVALID_HANDLE) << "an extra release";
}

}  // namespace
