// Events: timing, elapsed-time errors, flags, queries and foreign events.
#include <cstdint>

#include "gpu_test.hpp"

namespace {

using gpu::cu;
using gpu::Gate;
using gpu::GpuTest;

constexpr int kSleepMs = 20;
constexpr float kToleranceMs = 5.0f;

const cucore_event_options_t kTiming = {sizeof(cucore_event_options_t), CUCORE_EVENT_TIMING};
const cucore_event_options_t kNoTiming = {sizeof(cucore_event_options_t), 0};

class EventTest : public GpuTest {
protected:
    void SetUp() override {
        GpuTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &stream_));
    }
    void TearDown() override {
        if (stream_ != nullptr) {
            cucore_stream_synchronize(stream_);
            cucore_stream_release(stream_);
        }
        GpuTest::TearDown();
    }
    cucore_event_t *make(const cucore_event_options_t &o) {
        cucore_event_t *e = nullptr;
        EXPECT_EQ(cucore_event_create(dev_, &o, &e), CUCORE_SUCCESS) << cucore_last_error_message();
        return e;
    }
    void sleep_on_stream(int ms) {
        ASSERT_EQ(gpu::launch(stream_, [ms] { gpu::sleep_ms(ms); }), CUCORE_SUCCESS);
    }
    // Records `start`, a host function sleeping kSleepMs and `end` on the stream, waits for `end`, and returns
    // the elapsed milliseconds, checked to cover the sleep.
    float time_a_sleep(cucore_event_t *start, cucore_event_t *end) {
        float ms = -1;
        EXPECT_EQ(cucore_event_record(start, stream_), CUCORE_SUCCESS) << cucore_last_error_message();
        sleep_on_stream(kSleepMs);
        EXPECT_EQ(cucore_event_record(end, stream_), CUCORE_SUCCESS) << cucore_last_error_message();
        EXPECT_EQ(cucore_event_synchronize(end), CUCORE_SUCCESS) << cucore_last_error_message();
        EXPECT_EQ(cucore_event_elapsed_time(start, end, &ms), CUCORE_SUCCESS) << cucore_last_error_message();
        EXPECT_GE(ms, kSleepMs - kToleranceMs);
        EXPECT_LT(ms, 10000.0f);
        return ms;
    }
    cucore_stream_t *stream_ = nullptr;
};

int done(cucore_event_t *e) {
    int d = -1;
    EXPECT_EQ(cucore_event_query(e, &d), CUCORE_SUCCESS) << cucore_last_error_message();
    return d;
}

TEST_F(EventTest, ElapsedTimeCoversASleepingHostFunction) {
    cucore_event_t *start = make(kTiming), *end = make(kTiming);
    const float ms = time_a_sleep(start, end);
    float back = 1;
    CUCORE_EXPECT_OK(cucore_event_elapsed_time(end, start, &back)); // reversed: negative
    EXPECT_NEAR(back, -ms, 0.01);
    // The raw driver measures the same interval.
    void *hs = nullptr, *he = nullptr;
    CUCORE_ASSERT_OK(cucore_event_handle(start, &hs));
    CUCORE_ASSERT_OK(cucore_event_handle(end, &he));
    CU_ASSERT_OK(cu().CtxPushCurrent(primary_));
    float raw_ms = -1;
    CU_EXPECT_OK(cu().EventElapsedTime(&raw_ms, static_cast<CUevent>(hs), static_cast<CUevent>(he)));
    CUcontext popped = nullptr;
    CU_EXPECT_OK(cu().CtxPopCurrent(&popped));
    EXPECT_NEAR(ms, raw_ms, 0.01);
    cucore_event_release(start);
    cucore_event_release(end);
}

TEST_F(EventTest, FacadeElapsedTime) {
    const cucore::Stream s = cucore::Device(0).create_stream();
    const cucore::Event start = s.record({true, false});
    s.launch_host_func([] { gpu::sleep_ms(kSleepMs); });
    const cucore::Event end = s.record({true, false});
    end.synchronize();
    const float ms = end - start;
    EXPECT_GE(ms, kSleepMs - kToleranceMs);
    EXPECT_LT(ms, 10000.0f);
    EXPECT_FLOAT_EQ(cucore::Event::elapsed_time(start, end), ms);
    // Recording an existing event again moves its timestamp.
    s.launch_host_func([] { gpu::sleep_ms(kSleepMs); });
    s.record(end);
    end.synchronize();
    EXPECT_GE(end - start, 2 * kSleepMs - kToleranceMs);
}

TEST_F(EventTest, ElapsedTimeErrors) {
    // Timing disabled on either event.
    cucore_event_t *plain = make(kNoTiming), *timed = make(kTiming), *timed2 = make(kTiming);
    CUCORE_ASSERT_OK(cucore_event_record(plain, stream_));
    CUCORE_ASSERT_OK(cucore_event_record(timed, stream_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(stream_));
    float ms = 123;
    CUCORE_EXPECT_STATUS(cucore_event_elapsed_time(plain, timed, &ms), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(ms, 0.0f); // out-parameters are zeroed on failure
    CUCORE_EXPECT_STATUS(cucore_event_elapsed_time(timed, plain, &ms), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(std::string(cucore_last_error_message()), "");
    // Never recorded.
    CUCORE_EXPECT_STATUS(cucore_event_elapsed_time(timed2, timed, &ms), CUCORE_ERROR_INVALID_STATE);
    CUCORE_EXPECT_STATUS(cucore_event_elapsed_time(timed, timed2, &ms), CUCORE_ERROR_INVALID_STATE);
    // Not complete yet.
    {
        Gate gate;
        CUCORE_ASSERT_OK(gpu::launch(stream_, gate.waiter()));
        CUCORE_ASSERT_OK(cucore_event_record(timed2, stream_));
        gpu::sleep_ms(20);
        CUCORE_EXPECT_STATUS(cucore_event_elapsed_time(timed, timed2, &ms), CUCORE_ERROR_NOT_READY);
        gate.open();
        CUCORE_ASSERT_OK(cucore_event_synchronize(timed2));
        CUCORE_EXPECT_OK(cucore_event_elapsed_time(timed, timed2, &ms));
        EXPECT_GE(ms, 0.0f);
    }
    // Arguments.
    CUCORE_EXPECT_STATUS(cucore_event_elapsed_time(timed, timed2, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_event_elapsed_time(nullptr, timed2, &ms), CUCORE_ERROR_INVALID_HANDLE);
    CUCORE_EXPECT_STATUS(cucore_event_elapsed_time(timed, nullptr, &ms), CUCORE_ERROR_INVALID_HANDLE);
    cucore_event_release(plain);
    cucore_event_release(timed);
    cucore_event_release(timed2);
}

TEST_F(EventTest, FacadeElapsedTimeErrors) {
    const cucore::Stream s = cucore::Device(0).create_stream();
    const cucore::Event plain = s.record();
    const cucore::Event timed = s.record({true, false});
    const cucore::Event never = cucore::Device(0).create_event({true, false});
    s.synchronize();
    CUCORE_EXPECT_THROW_STATUS(timed - plain, CUCORE_ERROR_INVALID_STATE);
    CUCORE_EXPECT_THROW_STATUS(never - timed, CUCORE_ERROR_INVALID_STATE);
    {
        Gate gate;
        s.launch_host_func(gate.waiter());
        const cucore::Event pending = s.record({true, false});
        gpu::sleep_ms(20);
        try {
            (void)(pending - timed);
            ADD_FAILURE() << "elapsed time of an incomplete event did not throw";
        } catch (const cucore::Error &e) {
            EXPECT_EQ(e.status(), CUCORE_ERROR_NOT_READY);
            EXPECT_STRNE(e.what(), "");
        }
        gate.open();
        pending.synchronize();
        EXPECT_GE(pending - timed, 0.0f);
    }
}

// Assignment of real events (also a unit test, on the fake driver).
TEST_F(EventTest, FacadeAssignmentReleasesThePreviousObject) {
    const cucore::Device dev(0);
    const std::size_t events0 = gpu::live(CUCORE_OBJECT_EVENT);
    cucore::Event a = dev.create_event();
    cucore::Event b = dev.create_event();
    EXPECT_EQ(gpu::live(CUCORE_OBJECT_EVENT), events0 + 2);
    a = b; // a's first event is released
    EXPECT_EQ(gpu::live(CUCORE_OBJECT_EVENT), events0 + 1);
    const cucore::Event &same = a;
    a = same; // self-assignment keeps it
    EXPECT_EQ(gpu::live(CUCORE_OBJECT_EVENT), events0 + 1);
    b = std::move(a);
    EXPECT_FALSE(static_cast<bool>(a)); // NOLINT(bugprone-use-after-move): moved-from is empty
    EXPECT_EQ(gpu::live(CUCORE_OBJECT_EVENT), events0 + 1);
    b = cucore::Event{};
    EXPECT_EQ(gpu::live(CUCORE_OBJECT_EVENT), events0);
}

TEST_F(EventTest, FlagsRoundTripAndReachTheDriver) {
    const uint32_t all[] = {0u, static_cast<uint32_t>(CUCORE_EVENT_TIMING),
                            static_cast<uint32_t>(CUCORE_EVENT_BLOCKING_SYNC),
                            static_cast<uint32_t>(CUCORE_EVENT_TIMING | CUCORE_EVENT_BLOCKING_SYNC)};
    cucore_event_t *reference = make(kTiming);
    CUCORE_ASSERT_OK(cucore_event_record(reference, stream_));
    void *ref_handle = nullptr;
    CUCORE_ASSERT_OK(cucore_event_handle(reference, &ref_handle));
    for (const uint32_t flags : all) {
        SCOPED_TRACE("flags " + std::to_string(flags));
        const cucore_event_options_t o = {sizeof(cucore_event_options_t), flags};
        cucore_event_t *e = make(o);
        ASSERT_NE(e, nullptr);
        uint32_t got = 99;
        CUCORE_EXPECT_OK(cucore_event_flags(e, &got));
        EXPECT_EQ(got, flags);
        // The driver's own answer on timing: raw elapsed time works only with it.
        CUCORE_ASSERT_OK(cucore_event_record(e, stream_));
        CUCORE_ASSERT_OK(cucore_event_synchronize(e));
        EXPECT_EQ(done(e), 1);
        void *h = nullptr;
        CUCORE_ASSERT_OK(cucore_event_handle(e, &h));
        CU_ASSERT_OK(cu().CtxPushCurrent(primary_));
        float ms = 0;
        const CUresult r = cu().EventElapsedTime(&ms, static_cast<CUevent>(ref_handle), static_cast<CUevent>(h));
        CUcontext popped = nullptr;
        CU_EXPECT_OK(cu().CtxPopCurrent(&popped));
        if ((flags & CUCORE_EVENT_TIMING) != 0) {
            EXPECT_EQ(r, CUDA_SUCCESS) << raw::error_name(r);
        } else {
            EXPECT_NE(r, CUDA_SUCCESS) << "the driver's event records timestamps although timing is off";
        }
        cucore_event_release(e);

        const cucore::Event fe = cucore::Device(0).create_event(
            {(flags & CUCORE_EVENT_TIMING) != 0, (flags & CUCORE_EVENT_BLOCKING_SYNC) != 0});
        EXPECT_EQ(fe.flags(), flags);
        EXPECT_EQ(fe.is_timing_enabled(), (flags & CUCORE_EVENT_TIMING) != 0);
        EXPECT_EQ(fe.is_blocking_sync(), (flags & CUCORE_EVENT_BLOCKING_SYNC) != 0);
        EXPECT_NE(fe.handle(), nullptr);
    }
    cucore_event_release(reference);
    // stream_record passes its options on; NULL means defaults (no timing).
    cucore_event_t *r1 = nullptr, *r2 = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_record(stream_, &kTiming, &r1));
    CUCORE_ASSERT_OK(cucore_stream_record(stream_, nullptr, &r2));
    uint32_t f1 = 99, f2 = 99;
    CUCORE_EXPECT_OK(cucore_event_flags(r1, &f1));
    CUCORE_EXPECT_OK(cucore_event_flags(r2, &f2));
    EXPECT_EQ(f1, static_cast<uint32_t>(CUCORE_EVENT_TIMING));
    EXPECT_EQ(f2, 0u);
    cucore_event_release(r1);
    cucore_event_release(r2);
    // Bad options.
    cucore_event_t *bad = reinterpret_cast<cucore_event_t *>(std::uintptr_t{1});
    const cucore_event_options_t unknown = {sizeof(cucore_event_options_t), 0x80};
    CUCORE_EXPECT_STATUS(cucore_event_create(dev_, &unknown, &bad), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(bad, nullptr);
    const cucore_event_options_t small = {1, 0};
    CUCORE_EXPECT_STATUS(cucore_event_create(dev_, &small, &bad), CUCORE_ERROR_INVALID_ARGUMENT);
}

TEST_F(EventTest, QueryAndSynchronizeFollowTheRecordedWork) {
    const cucore_event_options_t blocking = {sizeof(cucore_event_options_t), CUCORE_EVENT_BLOCKING_SYNC};
    for (const cucore_event_options_t &o : {kNoTiming, blocking}) {
        cucore_event_t *e = make(o);
        EXPECT_EQ(done(e), 1); // never recorded: complete
        CUCORE_EXPECT_OK(cucore_event_synchronize(e));
        Gate gate;
        auto flag = std::make_shared<std::atomic<int>>(0);
        CUCORE_ASSERT_OK(gpu::launch(stream_, gate.waiter()));
        CUCORE_ASSERT_OK(gpu::launch(stream_, [flag] { flag->store(1); }));
        CUCORE_ASSERT_OK(cucore_event_record(e, stream_));
        gpu::sleep_ms(20);
        EXPECT_EQ(done(e), 0);
        gate.open();
        CUCORE_EXPECT_OK(cucore_event_synchronize(e)); // returns only after the host functions ran
        EXPECT_EQ(flag->load(), 1);
        EXPECT_EQ(done(e), 1);
        cucore_event_release(e);
    }
    // Waiting on a never-recorded event is a no-op.
    cucore_event_t *never = make(kNoTiming), *after = nullptr;
    CUCORE_EXPECT_OK(cucore_stream_wait_event(stream_, never));
    CUCORE_ASSERT_OK(cucore_stream_record(stream_, nullptr, &after));
    CUCORE_EXPECT_OK(cucore_event_synchronize(after));
    EXPECT_EQ(done(after), 1);
    cucore_event_release(never);
    cucore_event_release(after);
    int d = 0;
    CUCORE_EXPECT_STATUS(cucore_event_query(nullptr, &d), CUCORE_ERROR_INVALID_HANDLE);
}

TEST_F(EventTest, DeviceAndContextOfAnEvent) {
    cucore_event_t *e = make(kNoTiming);
    cucore_device_t *d = nullptr;
    CUCORE_EXPECT_OK(cucore_event_device(e, &d));
    EXPECT_EQ(ordinal(d), 0);
    cucore_device_release(d);
    cucore_context_t *c = nullptr;
    CUCORE_EXPECT_OK(cucore_event_context(e, &c));
    void *h = nullptr;
    CUCORE_EXPECT_OK(cucore_context_handle(c, &h));
    EXPECT_EQ(h, static_cast<void *>(primary_));
    cucore_context_release(c);
    cucore_event_release(e);
    const cucore::Event fe = cucore::Device(0).create_event();
    EXPECT_EQ(fe.device().ordinal(), 0);
    EXPECT_EQ(fe.context().handle(), static_cast<void *>(primary_));
}

TEST_F(EventTest, ForeignEventIsWrappedWithoutOwnership) {
    CU_ASSERT_OK(cu().CtxPushCurrent(primary_));
    CUevent raw_start = nullptr, raw_end = nullptr;
    CU_EXPECT_OK(cu().EventCreate(&raw_start, CU_EVENT_DEFAULT)); // timing enabled
    CU_EXPECT_OK(cu().EventCreate(&raw_end, CU_EVENT_DEFAULT));
    gpu::ReleaseCounter owner;
    cucore_event_t *start = nullptr, *end = nullptr;
    const cucore_status_t s1 = cucore_event_from_handle(raw_start, &gpu::ReleaseCounter::callback, &owner, &start);
    const cucore_status_t s2 = cucore_event_from_handle(raw_end, nullptr, nullptr, &end);
    EXPECT_EQ(gpu::current_context(), primary_);
    CUcontext popped = nullptr;
    CU_ASSERT_OK(cu().CtxPopCurrent(&popped));
    CUCORE_ASSERT_OK(s1);
    CUCORE_ASSERT_OK(s2);

    void *h = nullptr;
    CUCORE_EXPECT_OK(cucore_event_handle(start, &h));
    EXPECT_EQ(h, static_cast<void *>(raw_start));
    uint32_t flags = 99;
    CUCORE_EXPECT_OK(cucore_event_flags(start, &flags));
    EXPECT_EQ(flags, 0u); // unknown to the library
    cucore_context_t *c = nullptr;
    CUCORE_EXPECT_OK(cucore_event_context(start, &c));
    void *ch = nullptr;
    CUCORE_EXPECT_OK(cucore_context_handle(c, &ch));
    EXPECT_EQ(ch, static_cast<void *>(primary_));
    cucore_context_release(c);

    // Usable like our own: the driver times it.
    CUCORE_ASSERT_OK(cucore_event_record(start, stream_));
    sleep_on_stream(kSleepMs);
    CUCORE_ASSERT_OK(cucore_event_record(end, stream_));
    CUCORE_ASSERT_OK(cucore_event_synchronize(end));
    EXPECT_EQ(done(start), 1);
    float ms = 0;
    CUCORE_EXPECT_OK(cucore_event_elapsed_time(start, end, &ms));
    EXPECT_GE(ms, kSleepMs - kToleranceMs);
    EXPECT_LT(ms, 10000.0f);

    // The owner hears of the last release, once.
    CUCORE_EXPECT_OK(cucore_event_retain(start));
    CUCORE_EXPECT_OK(cucore_event_release(start));
    EXPECT_EQ(owner.calls.load(), 0);
    CUCORE_EXPECT_OK(cucore_event_release(start));
    EXPECT_EQ(owner.calls.load(), 1);
    CUCORE_EXPECT_OK(cucore_event_release(end));
    EXPECT_EQ(owner.calls.load(), 1);

    // Not destroyed: the raw events still work.
    CU_ASSERT_OK(cu().CtxPushCurrent(primary_));
    CU_EXPECT_OK(cu().EventRecord(raw_start, CU_STREAM_LEGACY));
    CU_EXPECT_OK(cu().EventSynchronize(raw_start));
    CU_EXPECT_OK(cu().EventQuery(raw_end));

    // The façade wraps (in the current context) and lets go the same way.
    {
        const cucore::Event fe = cucore::Event::from_handle(raw_end, &gpu::ReleaseCounter::callback, &owner);
        CU_EXPECT_OK(cu().CtxPopCurrent(&popped));
        cucore::Event copy = fe;
        EXPECT_EQ(copy.handle(), static_cast<void *>(raw_end));
        EXPECT_EQ(copy.flags(), 0u);
        const cucore::Stream s = cucore::Device(0).create_stream();
        s.record(copy);
        copy.synchronize();
        EXPECT_TRUE(fe.is_done());
        EXPECT_EQ(owner.calls.load(), 1);
    }
    EXPECT_EQ(owner.calls.load(), 2);
    CU_ASSERT_OK(cu().CtxPushCurrent(primary_));
    CU_EXPECT_OK(cu().EventDestroy(raw_start));
    CU_EXPECT_OK(cu().EventDestroy(raw_end));
    CU_EXPECT_OK(cu().CtxPopCurrent(&popped));
    EXPECT_EQ(gpu::current_context(), nullptr);
}

TEST_F(EventTest, FromHandleNeedsACurrentContext) {
    ASSERT_EQ(gpu::current_context(), nullptr);
    CU_ASSERT_OK(cu().CtxPushCurrent(primary_));
    CUevent raw_event = nullptr;
    CU_ASSERT_OK(cu().EventCreate(&raw_event, CU_EVENT_DISABLE_TIMING));
    CUcontext popped = nullptr;
    CU_ASSERT_OK(cu().CtxPopCurrent(&popped));
    cucore_event_t *e = nullptr;
    CUCORE_EXPECT_STATUS(cucore_event_from_handle(raw_event, nullptr, nullptr, &e), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(e, nullptr);
    CUCORE_EXPECT_STATUS(cucore_event_from_handle(nullptr, nullptr, nullptr, &e), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_THROW_STATUS(cucore::Event::from_handle(raw_event), CUCORE_ERROR_INVALID_STATE);
    CU_ASSERT_OK(cu().CtxPushCurrent(primary_));
    CU_EXPECT_OK(cu().EventDestroy(raw_event));
    CU_EXPECT_OK(cu().CtxPopCurrent(&popped));
}

} // namespace

namespace {

// The library reuses the driver events of released events (core/event_cache.hpp): an event made right after
// one was released (complete, pending, timed, blocking) answers every call as a new one would.
TEST_F(EventTest, EventsMadeAfterReleasesAnswerAsNewOnes) {
    const cucore_event_options_t blocking = {sizeof(cucore_event_options_t), CUCORE_EVENT_BLOCKING_SYNC};
    for (const cucore_event_options_t &o : {kNoTiming, kTiming, blocking}) {
        SCOPED_TRACE(o.flags);
        // Released complete, and released with its record still pending.
        cucore_event_t *complete = make(o);
        CUCORE_ASSERT_OK(cucore_event_record(complete, stream_));
        CUCORE_ASSERT_OK(cucore_stream_synchronize(stream_));
        cucore_event_release(complete);
        Gate gate;
        CUCORE_ASSERT_OK(gpu::launch(stream_, gate.waiter()));
        cucore_event_t *pending = make(o);
        CUCORE_ASSERT_OK(cucore_event_record(pending, stream_));
        cucore_event_release(pending);
        for (int round = 0; round < 2; ++round) {
            cucore_event_t *e = make(o);
            EXPECT_EQ(done(e), 1) << "never recorded: complete";
            CUCORE_EXPECT_OK(cucore_event_synchronize(e));
            float ms = -1;
            CUCORE_EXPECT_STATUS(cucore_event_elapsed_time(e, e, &ms), CUCORE_ERROR_INVALID_STATE);
            // Recorded behind the gate, it is not done until the gate opens (round 1 with the gate open).
            CUCORE_ASSERT_OK(cucore_event_record(e, stream_));
            if (round == 0) {
                gpu::sleep_ms(20);
                EXPECT_EQ(done(e), 0) << "its record waits behind the gate";
                gate.open();
            }
            CUCORE_ASSERT_OK(cucore_event_synchronize(e));
            EXPECT_EQ(done(e), 1);
            cucore_event_release(e);
        }
    }
    // Timed anew: the interval of a sleeping host function.
    cucore_event_t *start = make(kTiming), *end = make(kTiming);
    time_a_sleep(start, end);
    cucore_event_release(start);
    cucore_event_release(end);
}

// cucore_event_reset on the real driver: a recorded timing event and an escaped one come back as new ones
// (with another driver event), and time anew.
TEST_F(EventTest, ResetEventsAnswerAsNewOnes) {
    cucore_event_t *timed = make(kTiming), *escaped = make(kTiming);
    CUCORE_ASSERT_OK(cucore_event_record(timed, stream_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(stream_));
    void *old_raw = nullptr;
    CUCORE_ASSERT_OK(cucore_event_handle(escaped, &old_raw));
    for (cucore_event_t *e : {timed, escaped}) {
        CUCORE_ASSERT_OK(cucore_event_reset(e));
        EXPECT_EQ(done(e), 1);
        CUCORE_EXPECT_OK(cucore_event_synchronize(e));
        float ms = -1;
        CUCORE_EXPECT_STATUS(cucore_event_elapsed_time(e, e, &ms), CUCORE_ERROR_INVALID_STATE);
    }
    void *new_raw = nullptr;
    CUCORE_ASSERT_OK(cucore_event_handle(escaped, &new_raw));
    EXPECT_NE(new_raw, old_raw);
    time_a_sleep(timed, escaped);
    // Held twice: refused, unchanged.
    CUCORE_ASSERT_OK(cucore_event_retain(timed));
    CUCORE_EXPECT_STATUS(cucore_event_reset(timed), CUCORE_ERROR_INVALID_STATE);
    cucore_event_release(timed);
    cucore_event_release(timed);
    cucore_event_release(escaped);
}

}  // namespace
