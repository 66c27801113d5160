// Driver events reused by their context (core/event_cache.hpp) against the fake driver: a released event's
// driver event serves the next event of the same kind without a cuEventCreate, and that event answers every
// call as a new one; what must never be reused is not (an event whose handle escaped, an interprocess one,
// one that entered a graph or a capture, one recorded on a stream others can reach, one whose record is still
// pending); the cache is bounded per kind and drained before its context goes. cucore_event_reset renews an
// event its caller holds alone by the same rules.
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "core/event_cache.hpp"
#include "test_support.hpp"

namespace {

using cucore::core::EventCache;

class EventCacheTest : public FakeDriverTest {
  protected:
    void SetUp() override {
        FakeDriverTest::SetUp();
        if (streams_ != fake::Streams::synchronous) fake::install(2, streams_);
        d_ = device(0);
        ASSERT_EQ(cucore_stream_create(d_, nullptr, &s_), CUCORE_SUCCESS) << message();
        spares_before_ = EventCache::total();
    }
    void TearDown() override {
        cucore_stream_release(s_);
        cucore_device_release(d_);
        FakeDriverTest::TearDown();
    }
    cucore_event_t *create(uint32_t flags = 0) {
        cucore_event_options_t o = CUCORE_EVENT_OPTIONS_INIT;
        o.flags = flags;
        cucore_event_t *e = nullptr;
        EXPECT_EQ(cucore_event_create(d_, &o, &e), CUCORE_SUCCESS) << message();
        return e;
    }
    // Spare driver events kept now beyond those at the start of the test.
    int spares() const { return EventCache::total() - spares_before_; }
    // How many cuEventCreate calls `body` makes.
    template <class Body>
    static int driver_creates(Body &&body) {
        fake::reset_calls();
        body();
        int creates = 0;
        for (const std::string &call : fake::call_log()) creates += call == "cuEventCreate";
        return creates;
    }

    fake::Streams streams_ = fake::Streams::synchronous;
    cucore_device_t *d_ = nullptr;
    cucore_stream_t *s_ = nullptr;
    int spares_before_ = 0;
};

TEST_F(EventCacheTest, AReleasedEventsDriverEventServesTheNextOfItsKind) {
    const int driver_events = fake::counters().events;
    cucore_event_t *first = create();
    ASSERT_EQ(cucore_event_release(first), CUCORE_SUCCESS);
    EXPECT_EQ(spares(), 1);
    EXPECT_EQ(fake::counters().events, driver_events + 1) << "kept, not destroyed";
    cucore_event_t *second = nullptr;
    EXPECT_EQ(driver_creates([&] { second = create(); }), 0) << "the spare is taken";
    EXPECT_EQ(spares(), 0);
    // Kinds are kept apart: a timing event is not served by a spare made without timing.
    ASSERT_EQ(cucore_event_release(second), CUCORE_SUCCESS);
    cucore_event_t *timing = nullptr;
    EXPECT_EQ(driver_creates([&] { timing = create(CUCORE_EVENT_TIMING); }), 1);
    uint32_t flags = 0;
    ASSERT_EQ(cucore_event_flags(timing, &flags), CUCORE_SUCCESS);
    EXPECT_EQ(flags, uint32_t{CUCORE_EVENT_TIMING});
    EXPECT_EQ(spares(), 1) << "the untimed spare waits for an untimed event";
    cucore_event_release(timing);
}

// What every new event answers: complete, nothing to wait for, no elapsed time.
void expect_answers_as_new(cucore_stream_t *stream, cucore_event_t *e) {
    int done = -1;
    EXPECT_EQ(cucore_event_query(e, &done), CUCORE_SUCCESS) << cucore_last_error_message();
    EXPECT_EQ(done, 1) << "a never-recorded event is complete";
    EXPECT_EQ(cucore_event_synchronize(e), CUCORE_SUCCESS) << cucore_last_error_message();
    EXPECT_EQ(cucore_stream_wait_event(stream, e), CUCORE_SUCCESS) << cucore_last_error_message();
    float ms = -1;
    EXPECT_EQ(cucore_event_elapsed_time(e, e, &ms), CUCORE_ERROR_INVALID_STATE);
    const std::string message = cucore_last_error_message();
    EXPECT_TRUE(message.find("never been recorded") != std::string::npos ||
                message.find("without CUCORE_EVENT_TIMING") != std::string::npos)
        << message;
}

TEST_F(EventCacheTest, AReusedEventAnswersAsANewOne) {
    // An untimed event, recorded and complete, is kept: with no timestamp, the driver answers as for a new one.
    cucore_event_t *used = create();
    ASSERT_EQ(cucore_event_record(used, s_), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_event_release(used), CUCORE_SUCCESS);
    ASSERT_EQ(spares(), 1) << "recorded and complete: kept";
    cucore_event_t *reused_untimed = nullptr;
    ASSERT_EQ(driver_creates([&] { reused_untimed = create(); }), 0);
    expect_answers_as_new(s_, reused_untimed);
    cucore_event_release(reused_untimed);
    ASSERT_EQ(spares(), 1);

    // A recorded timing event is not kept: its timestamp would show through the driver (elapsed time through
    // a raw handle, or once a graph may record it) where a new event has none. A never-recorded one is.
    const int driver_events = fake::counters().events;
    cucore_event_t *timed = create(CUCORE_EVENT_TIMING), *unrecorded = create(CUCORE_EVENT_TIMING);
    ASSERT_EQ(cucore_event_record(timed, s_), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_event_release(timed), CUCORE_SUCCESS);
    EXPECT_EQ(spares(), 1) << "the recorded timing event destroyed";
    ASSERT_EQ(cucore_event_release(unrecorded), CUCORE_SUCCESS);
    EXPECT_EQ(spares(), 2) << "the never-recorded timing event kept";
    EXPECT_EQ(fake::counters().events, driver_events + 1);

    cucore_event_t *reused = nullptr, *fresh = nullptr;
    ASSERT_EQ(driver_creates([&] { reused = create(CUCORE_EVENT_TIMING); }), 0);
    ASSERT_EQ(driver_creates([&] { fresh = create(CUCORE_EVENT_TIMING); }), 1);
    for (cucore_event_t *e : {reused, fresh}) {
        SCOPED_TRACE(e == reused ? "reused" : "fresh");
        expect_answers_as_new(s_, e);
    }
    // Recorded anew, it times like the new one.
    ASSERT_EQ(cucore_event_record(fresh, s_), CUCORE_SUCCESS);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    ASSERT_EQ(cucore_event_record(reused, s_), CUCORE_SUCCESS);
    float ms = -1;
    ASSERT_EQ(cucore_event_elapsed_time(fresh, reused, &ms), CUCORE_SUCCESS) << message();
    EXPECT_GE(ms, 2.0f);
    cucore_event_release(reused);
    cucore_event_release(fresh);
}

TEST_F(EventCacheTest, AnEventWhoseHandleEscapedOrThatIsInterprocessIsDestroyed) {
    const int driver_events = fake::counters().events;
    cucore_event_t *escaped = create();
    void *raw = nullptr;
    ASSERT_EQ(cucore_event_handle(escaped, &raw), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_event_release(escaped), CUCORE_SUCCESS);
    cucore_event_t *shared = create(CUCORE_EVENT_INTERPROCESS);
    uint8_t descriptor[CUCORE_IPC_EVENT_DESCRIPTOR_SIZE];
    ASSERT_EQ(cucore_ipc_export_event(shared, descriptor), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_event_release(shared), CUCORE_SUCCESS);
    cucore_event_t *interprocess = create(CUCORE_EVENT_INTERPROCESS);  // never exported: still not kept
    ASSERT_EQ(cucore_event_release(interprocess), CUCORE_SUCCESS);
    EXPECT_EQ(spares(), 0);
    EXPECT_EQ(fake::counters().events, driver_events) << "all three destroyed";
}

TEST_F(EventCacheTest, AnEventInAGraphOrACaptureOrOnAReachableStreamIsDestroyed) {
    const int driver_events = fake::counters().events;
    // A record node, and a wait node.
    cucore_graph_definition_t *definition = nullptr;
    ASSERT_EQ(cucore_graph_definition_create(d_, &definition), CUCORE_SUCCESS) << message();
    cucore_event_t *recorded_by_graph = create(), *waited_by_graph = create();
    cucore_graph_node_t *record = nullptr, *wait = nullptr;
    ASSERT_EQ(cucore_graph_definition_add_event_record(definition, nullptr, 0, recorded_by_graph, &record),
              CUCORE_SUCCESS)
        << message();
    ASSERT_EQ(cucore_graph_definition_add_event_wait(definition, nullptr, 0, waited_by_graph, &wait), CUCORE_SUCCESS)
        << message();
    cucore_graph_node_release(record);
    cucore_graph_node_release(wait);
    cucore_event_release(recorded_by_graph);
    cucore_event_release(waited_by_graph);
    cucore_graph_definition_release(definition);  // the last holder of both events
    // Recorded on a stream whose handle was given out (someone may capture it unseen), and on the legacy
    // default stream.
    cucore_stream_t *reachable = nullptr;
    ASSERT_EQ(cucore_stream_create(d_, nullptr, &reachable), CUCORE_SUCCESS);
    void *raw_stream = nullptr;
    ASSERT_EQ(cucore_stream_handle(reachable, &raw_stream), CUCORE_SUCCESS);
    cucore_stream_t *legacy = nullptr;
    ASSERT_EQ(cucore_stream_get_legacy_default(d_, &legacy), CUCORE_SUCCESS) << message();
    for (cucore_stream_t *stream : {reachable, legacy}) {
        cucore_event_t *e = create();
        ASSERT_EQ(cucore_event_record(e, stream), CUCORE_SUCCESS) << message();
        ASSERT_EQ(cucore_stream_synchronize(stream), CUCORE_SUCCESS);
        ASSERT_EQ(cucore_event_release(e), CUCORE_SUCCESS);
    }
    cucore_stream_release(reachable);
    cucore_stream_release(legacy);
    EXPECT_EQ(spares(), 0);
    EXPECT_EQ(fake::counters().events, driver_events) << "all four destroyed";
}

TEST_F(EventCacheTest, TheCacheIsBoundedPerKindAndDrainedWithItsContext) {
    cucore_sm_resource_t *all = nullptr;
    ASSERT_EQ(cucore_sm_resource_of_device(d_, &all), CUCORE_SUCCESS) << message();
    cucore_context_options_t o = CUCORE_CONTEXT_OPTIONS_INIT;
    o.sm_resource_count = 1;
    o.sm_resources = &all;
    cucore_context_t *green = nullptr;
    ASSERT_EQ(cucore_context_create(d_, &o, &green), CUCORE_SUCCESS) << message();
    cucore_sm_resource_release(all);
    const int driver_events = fake::counters().events;
    std::vector<cucore_event_t *> events(EventCache::kCapacity + 8, nullptr);
    for (cucore_event_t *&e : events) ASSERT_EQ(cucore_event_create_in_context(green, nullptr, &e), CUCORE_SUCCESS);
    cucore_event_t *timing = nullptr;
    cucore_event_options_t timed = CUCORE_EVENT_OPTIONS_INIT;
    timed.flags = CUCORE_EVENT_TIMING;
    ASSERT_EQ(cucore_event_create_in_context(green, &timed, &timing), CUCORE_SUCCESS);
    for (cucore_event_t *e : events) cucore_event_release(e);
    cucore_event_release(timing);
    EXPECT_EQ(spares(), EventCache::kCapacity + 1) << "a full kind, and one of the other";
    EXPECT_EQ(fake::counters().events, driver_events + EventCache::kCapacity + 1) << "the rest destroyed";
    const int greens = fake::green_contexts();
    ASSERT_EQ(cucore_context_release(green), CUCORE_SUCCESS);
    EXPECT_EQ(fake::green_contexts(), greens - 1);
    EXPECT_EQ(spares(), 0);
    EXPECT_EQ(fake::counters().events, driver_events) << "drained";
    EXPECT_EQ(fake::green_context_violations(), 0) << "drained before the green context was destroyed";
}

TEST_F(EventCacheTest, ResetKeepsAReusableDriverEventAndRenewsTheState) {
    cucore_event_t *e = create();
    ASSERT_EQ(cucore_event_record(e, s_), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
    fake::reset_calls();
    ASSERT_EQ(cucore_event_reset(e), CUCORE_SUCCESS) << message();
    for (const std::string &call : fake::call_log()) EXPECT_NE(call, "cuEventCreate") << "kept its driver event";
    expect_answers_as_new(s_, e);
    uint32_t flags = 99;
    ASSERT_EQ(cucore_event_flags(e, &flags), CUCORE_SUCCESS);
    EXPECT_EQ(flags, 0u);
    ASSERT_EQ(cucore_event_release(e), CUCORE_SUCCESS);
}

TEST_F(EventCacheTest, ResetReplacesADriverEventOthersMayUse) {
    // A recorded timing event (its timestamp), and one whose handle escaped: a new driver event each.
    cucore_event_t *timed = create(CUCORE_EVENT_TIMING), *escaped = create();
    ASSERT_EQ(cucore_event_record(timed, s_), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
    void *old_raw = nullptr;
    ASSERT_EQ(cucore_event_handle(escaped, &old_raw), CUCORE_SUCCESS);
    const int driver_events = fake::counters().events;
    for (cucore_event_t *e : {timed, escaped}) {
        EXPECT_EQ(driver_creates([&] { ASSERT_EQ(cucore_event_reset(e), CUCORE_SUCCESS) << message(); }), 1);
        expect_answers_as_new(s_, e);
    }
    EXPECT_EQ(fake::counters().events, driver_events) << "each old driver event destroyed";
    void *new_raw = nullptr;
    ASSERT_EQ(cucore_event_handle(escaped, &new_raw), CUCORE_SUCCESS);
    EXPECT_NE(new_raw, old_raw) << "the escaped driver event is the user's past, not the renewed event's";
    // Renewed, the timing event times anew.
    cucore_event_t *start = create(CUCORE_EVENT_TIMING);
    ASSERT_EQ(cucore_event_record(start, s_), CUCORE_SUCCESS);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    ASSERT_EQ(cucore_event_record(timed, s_), CUCORE_SUCCESS);
    float ms = -1;
    ASSERT_EQ(cucore_event_elapsed_time(start, timed, &ms), CUCORE_SUCCESS) << message();
    EXPECT_GE(ms, 2.0f);
    for (cucore_event_t *e : {timed, escaped, start}) cucore_event_release(e);
}

TEST_F(EventCacheTest, ResetRefusesAnEventHeldElsewhereOrForeign) {
    cucore_event_t *e = create();
    // Another user reference.
    ASSERT_EQ(cucore_event_retain(e), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_event_reset(e), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("held elsewhere"), std::string::npos) << message();
    ASSERT_EQ(cucore_event_release(e), CUCORE_SUCCESS);
    // A graph's reference.
    cucore_graph_definition_t *definition = nullptr;
    ASSERT_EQ(cucore_graph_definition_create(d_, &definition), CUCORE_SUCCESS);
    cucore_graph_node_t *node = nullptr;
    ASSERT_EQ(cucore_graph_definition_add_event_record(definition, nullptr, 0, e, &node), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_event_reset(e), CUCORE_ERROR_INVALID_STATE);
    cucore_graph_node_release(node);
    cucore_graph_definition_release(definition);
    EXPECT_EQ(driver_creates([&] { ASSERT_EQ(cucore_event_reset(e), CUCORE_SUCCESS) << message(); }), 1)
        << "alone again: renewed, with a new driver event (the graph's is never reused)";
    expect_answers_as_new(s_, e);
    ASSERT_EQ(cucore_event_release(e), CUCORE_SUCCESS);
    // A foreign event (wrapped in the current context: the primary one, made current for it).
    cucore_event_t *made = create();
    void *raw = nullptr;
    ASSERT_EQ(cucore_event_handle(made, &raw), CUCORE_SUCCESS);
    cucore_context_t *context = nullptr;
    ASSERT_EQ(cucore_event_context(made, &context), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_context_set_current(context), CUCORE_SUCCESS);
    cucore_event_t *foreign = nullptr;
    ASSERT_EQ(cucore_event_from_handle(raw, nullptr, nullptr, &foreign), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_event_reset(foreign), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("foreign"), std::string::npos) << message();
    cucore_event_release(foreign);
    cucore_event_release(made);
    cucore_context_release(context);
    fake::set_current_context(nullptr);
}

TEST_F(EventCacheTest, AFailedResetLeavesTheEventAsItWas) {
    cucore_event_t *e = create(CUCORE_EVENT_TIMING);
    ASSERT_EQ(cucore_event_record(e, s_), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
    fake::fail_entry("cuEventCreate", CUDA_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(cucore_event_reset(e), CUCORE_ERROR_OUT_OF_MEMORY) << message();
    EXPECT_EQ(cucore_last_cuda_result(), CUDA_ERROR_OUT_OF_MEMORY);
    fake::fail_entry("");
    float ms = -1;
    EXPECT_EQ(cucore_event_elapsed_time(e, e, &ms), CUCORE_SUCCESS) << "still recorded: " << message();
    EXPECT_EQ(ms, 0.0f);
    ASSERT_EQ(cucore_event_release(e), CUCORE_SUCCESS);
}

std::atomic<bool> g_release_host{false};
void wait_for_release(void *) {
    while (!g_release_host.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

class EventCachePendingTest : public EventCacheTest {
  protected:
    EventCachePendingTest() { streams_ = fake::Streams::worker_threads; }  // stream work runs later, as on a device
};

TEST_F(EventCachePendingTest, AnEventWhoseRecordIsPendingIsDestroyed) {
    const int driver_events = fake::counters().events;
    g_release_host = false;
    ASSERT_EQ(cucore_stream_launch_host_func(s_, wait_for_release, nullptr), CUCORE_SUCCESS) << message();
    cucore_event_t *pending = create();
    ASSERT_EQ(cucore_event_record(pending, s_), CUCORE_SUCCESS);
    int done = -1;
    ASSERT_EQ(cucore_event_query(pending, &done), CUCORE_SUCCESS);
    ASSERT_EQ(done, 0) << "the record waits behind the host function";
    ASSERT_EQ(cucore_event_release(pending), CUCORE_SUCCESS);
    EXPECT_EQ(spares(), 0) << "a reused event would answer 'not ready' where a new one answers 'done'";
    g_release_host = true;
    ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().events, driver_events);
}

}  // namespace
