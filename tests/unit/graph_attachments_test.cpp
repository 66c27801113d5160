// core::release_after, the one mechanism that keeps what enqueued work uses until its streams have passed it
// (graph launches, collectives): an event recorded behind the work, polled by the release thread. On the fake
// driver's worker-thread streams (work runs later, as on a device), a stream held up by a host function shows
// that the holds stay while the work is pending, that counting live objects does not wait for the work, and that
// everything goes once the stream has passed it.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace {

std::atomic<bool> g_go{false};
void wait_for_go(void *) {
    while (!g_go.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

class ReleaseAfterTest : public FakeDriverTest {
  protected:
    void SetUp() override {
        FakeDriverTest::SetUp();
        fake::install(2, fake::Streams::worker_threads);
        d_ = device(0);
        ASSERT_EQ(cucore_stream_create(d_, nullptr, &s_), CUCORE_SUCCESS) << message();
    }
    void TearDown() override {
        g_go = true;
        cucore_stream_synchronize(s_);
        cucore_stream_release(s_);
        cucore_device_release(d_);
        FakeDriverTest::TearDown();
    }
    cucore_device_t *d_ = nullptr;
    cucore_stream_t *s_ = nullptr;
};

TEST_F(ReleaseAfterTest, AReleasedGraphHoldsItsBufferUntilTheStreamHasPassedItsLaunch) {
    cucore_buffer_t *buffer = nullptr;
    ASSERT_EQ(cucore_device_allocate(d_, 64, s_, &buffer), CUCORE_SUCCESS) << message();
    cucore_graph_definition_t *g = nullptr;
    ASSERT_EQ(cucore_graph_definition_create(d_, &g), CUCORE_SUCCESS) << message();
    cucore_graph_node_t *node = nullptr;
    ASSERT_EQ(cucore_graph_definition_add_memset(g, nullptr, 0, buffer, 0, 7, 1, 64, 1, 0, &node), CUCORE_SUCCESS)
        << message();
    cucore_graph_t *exec = nullptr;
    ASSERT_EQ(cucore_graph_definition_instantiate(g, nullptr, &exec), CUCORE_SUCCESS) << message();
    cucore_graph_node_release(node);
    cucore_graph_definition_release(g);
    const size_t buffers = live(CUCORE_OBJECT_BUFFER);

    g_go = false;
    ASSERT_EQ(cucore_stream_launch_host_func(s_, wait_for_go, nullptr), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_launch(exec, s_), CUCORE_SUCCESS) << message();
    fake::reset_calls();
    ASSERT_EQ(cucore_buffer_release(buffer), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_graph_release(exec), CUCORE_SUCCESS);
    const std::vector<std::string> log = fake::call_log();
    EXPECT_NE(std::find(log.begin(), log.end(), "cuEventRecord"), log.end()) << "an event follows the launch";
    EXPECT_EQ(std::find(log.begin(), log.end(), "cuLaunchHostFunc"), log.end()) << "not a host function";
    EXPECT_EQ(live(CUCORE_OBJECT_BUFFER), buffers) << "the launch still holds the buffer (and counting did not wait)";
    EXPECT_EQ(live(CUCORE_OBJECT_GRAPH), 0u) << "the executable itself goes; what its launch uses stays";

    g_go = true;
    ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(live(CUCORE_OBJECT_BUFFER), buffers - 1) << "released once the stream passed the launch";
}

}  // namespace
