// Streams: ordering (events, stream waits, default streams), options, foreign
// streams, lifetimes and concurrent use.
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "gpu_test.hpp"

namespace {

using gpu::cu;
using gpu::Gate;
using gpu::GpuTest;

class StreamTest : public GpuTest {};

int event_done(cucore_event_t *e) {
    int done = -1;
    EXPECT_EQ(cucore_event_query(e, &done), CUCORE_SUCCESS) << cucore_last_error_message();
    return done;
}

int stream_done(cucore_stream_t *s) {
    int done = -1;
    EXPECT_EQ(cucore_stream_query(s, &done), CUCORE_SUCCESS) << cucore_last_error_message();
    return done;
}

// How `b` is made to wait for `a`.
enum class WaitKind { event, stream };

// Proves that work on `b` queued after the wait runs only after `a`'s earlier
// work: (1) GPU-side work on `b` (an event record) stays pending while a host
// function on `a` is blocked, whereas the same on an unrelated stream completes;
// (2) a host function on `b` sees the value a sleeping host function on `a` set.
void check_ordering(cucore_stream_t *a, cucore_stream_t *b, cucore_stream_t *unrelated, WaitKind kind) {
    // (1) Blocked upstream work holds the downstream stream.
    {
        Gate gate;
        CUCORE_ASSERT_OK(gpu::launch(a, gate.waiter()));
        cucore_event_t *ea = nullptr;
        if (kind == WaitKind::event) {
            CUCORE_ASSERT_OK(cucore_stream_record(a, nullptr, &ea));
            CUCORE_EXPECT_OK(cucore_stream_wait_event(b, ea));
        } else {
            CUCORE_EXPECT_OK(cucore_stream_wait_stream(b, a));
        }
        cucore_event_t *eb = nullptr, *ec = nullptr;
        CUCORE_ASSERT_OK(cucore_stream_record(b, nullptr, &eb));
        CUCORE_ASSERT_OK(cucore_stream_record(unrelated, nullptr, &ec));
        CUCORE_EXPECT_OK(cucore_event_synchronize(ec)); // the control is free to complete
        gpu::sleep_ms(20);
        EXPECT_EQ(event_done(ec), 1);
        EXPECT_EQ(event_done(eb), 0) << "work after the wait ran before the awaited work";
        EXPECT_EQ(stream_done(b), 0);
        gate.open();
        CUCORE_EXPECT_OK(cucore_event_synchronize(eb));
        EXPECT_EQ(event_done(eb), 1);
        EXPECT_EQ(stream_done(b), 1);
        cucore_event_release(ea);
        cucore_event_release(eb);
        cucore_event_release(ec);
    }
    // (2) The downstream host function sees what the upstream one wrote.
    for (int round = 0; round < 3; ++round) {
        auto value = std::make_shared<std::atomic<int>>(0);
        auto seen = std::make_shared<std::atomic<int>>(-1);
        CUCORE_ASSERT_OK(gpu::launch(a, [value, round] {
            gpu::sleep_ms(20);
            value->store(round + 1);
        }));
        cucore_event_t *ea = nullptr;
        if (kind == WaitKind::event) {
            CUCORE_ASSERT_OK(cucore_stream_record(a, nullptr, &ea));
            CUCORE_EXPECT_OK(cucore_stream_wait_event(b, ea));
        } else {
            CUCORE_EXPECT_OK(cucore_stream_wait_stream(b, a));
        }
        CUCORE_ASSERT_OK(gpu::launch(b, [value, seen] { seen->store(value->load()); }));
        CUCORE_EXPECT_OK(cucore_stream_synchronize(b));
        EXPECT_EQ(seen->load(), round + 1);
        cucore_event_release(ea);
    }
    CUCORE_EXPECT_OK(cucore_stream_synchronize(a));
}

TEST_F(StreamTest, WaitEventOrdersStreams) {
    cucore_stream_t *a = nullptr, *b = nullptr, *c = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &a));
    CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &b));
    CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &c));
    check_ordering(a, b, c, WaitKind::event);
    cucore_stream_release(a);
    cucore_stream_release(b);
    cucore_stream_release(c);
}

TEST_F(StreamTest, WaitStreamOrdersStreams) {
    cucore_stream_t *a = nullptr, *b = nullptr, *c = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &a));
    CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &b));
    CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &c));
    check_ordering(a, b, c, WaitKind::stream);
    cucore_stream_release(a);
    cucore_stream_release(b);
    cucore_stream_release(c);
}

TEST_F(StreamTest, WaitStreamOrdersStreamsAcrossDevices) {
    if (device_count_ < 2) GTEST_SKIP() << "needs 2 devices, found " << device_count_;
    cucore_device_t *dev1 = nullptr;
    CUCORE_ASSERT_OK(cucore_device_get(1, &dev1));
    cucore_stream_t *a = nullptr, *b = nullptr, *c = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &a));
    CUCORE_ASSERT_OK(cucore_stream_create(dev1, nullptr, &b));
    CUCORE_ASSERT_OK(cucore_stream_create(dev1, nullptr, &c));
    check_ordering(a, b, c, WaitKind::stream);
    check_ordering(b, a, c, WaitKind::stream);
    cucore_stream_release(a);
    cucore_stream_release(b);
    cucore_stream_release(c);
    cucore_device_release(dev1);
}

TEST_F(StreamTest, FacadeOrdersStreams) {
    const cucore::Device d(0);
    const cucore::Stream a = d.create_stream();
    const cucore::Stream b = d.create_stream();
    for (int round = 0; round < 4; ++round) {
        auto value = std::make_shared<std::atomic<int>>(0);
        auto seen = std::make_shared<std::atomic<int>>(-1);
        a.launch_host_func([value, round] {
            gpu::sleep_ms(20);
            value->store(round + 1);
        });
        if (round % 2 == 0) {
            b.wait(a.record());
        } else {
            b.wait(a);
        }
        b.launch_host_func([value, seen] { seen->store(value->load()); });
        b.synchronize();
        EXPECT_EQ(seen->load(), round + 1);
    }
    // GPU-side work stays behind a blocked upstream stream.
    Gate gate;
    a.launch_host_func(gate.waiter());
    const cucore::Event upstream = a.record();
    b.wait(upstream);
    const cucore::Event downstream = b.record();
    gpu::sleep_ms(20);
    EXPECT_FALSE(downstream.is_done());
    EXPECT_FALSE(upstream.is_done());
    EXPECT_FALSE(b.is_done());
    gate.open();
    downstream.synchronize();
    EXPECT_TRUE(upstream.is_done());
    EXPECT_TRUE(b.is_done());
}

TEST_F(StreamTest, QueryAndSynchronizeFollowTheWork) {
    cucore_stream_t *s = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &s));
    EXPECT_EQ(stream_done(s), 1); // empty
    Gate gate;
    auto after = std::make_shared<std::atomic<int>>(0);
    CUCORE_ASSERT_OK(gpu::launch(s, gate.waiter()));
    CUCORE_ASSERT_OK(gpu::launch(s, [after] { after->store(1); }));
    gpu::sleep_ms(20);
    EXPECT_EQ(stream_done(s), 0);
    EXPECT_EQ(after->load(), 0); // blocked behind the gate
    gate.open();
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s));
    EXPECT_EQ(stream_done(s), 1);
    EXPECT_EQ(after->load(), 1);
    int done = 0;
    CUCORE_EXPECT_STATUS(cucore_stream_query(s, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_stream_launch_host_func(s, nullptr, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_stream_release(s);
    // A released handle is stale, never a crash.
    CUCORE_EXPECT_STATUS(cucore_stream_synchronize(s), CUCORE_ERROR_INVALID_HANDLE);
    CUCORE_EXPECT_STATUS(cucore_stream_query(s, &done), CUCORE_ERROR_INVALID_HANDLE);
    CUCORE_EXPECT_STATUS(cucore_stream_release(s), CUCORE_ERROR_INVALID_HANDLE);
}

TEST_F(StreamTest, PriorityAndFlagsRoundTrip) {
    int least = 0, greatest = 0;
    CUCORE_ASSERT_OK(cucore_stream_priority_range(dev_, &least, &greatest));
    EXPECT_LE(greatest, least);
    const int requested[] = {0, least, greatest, (least + greatest) / 2, greatest - 10, least + 10};
    for (const uint32_t flags : {0u, static_cast<uint32_t>(CUCORE_STREAM_BLOCKING)}) {
        for (const int p : requested) {
            SCOPED_TRACE("flags " + std::to_string(flags) + ", priority " + std::to_string(p));
            const int expected = std::min(std::max(p, greatest), least); // the driver clamps
            const cucore_stream_options_t o = {sizeof(cucore_stream_options_t), flags, p};
            cucore_stream_t *s = nullptr;
            CUCORE_ASSERT_OK(cucore_stream_create(dev_, &o, &s));
            int prio = 99;
            CUCORE_EXPECT_OK(cucore_stream_priority(s, &prio));
            EXPECT_EQ(prio, expected);
            uint32_t got_flags = 99;
            CUCORE_EXPECT_OK(cucore_stream_flags(s, &got_flags));
            EXPECT_EQ(got_flags, flags);
            int owned = -1;
            CUCORE_EXPECT_OK(cucore_stream_is_owned(s, &owned));
            EXPECT_EQ(owned, 1);
            // The driver agrees.
            void *h = nullptr;
            CUCORE_ASSERT_OK(cucore_stream_handle(s, &h));
            int raw_prio = 99;
            unsigned raw_flags = 99;
            {
                const gpu::ScopedContext bound(primary_);
                CU_EXPECT_OK(cu().StreamGetPriority(static_cast<CUstream>(h), &raw_prio));
                CU_EXPECT_OK(cu().StreamGetFlags(static_cast<CUstream>(h), &raw_flags));
            }
            EXPECT_EQ(raw_prio, expected);
            EXPECT_EQ(raw_flags, flags == 0 ? static_cast<unsigned>(CU_STREAM_NON_BLOCKING)
                                            : static_cast<unsigned>(CU_STREAM_DEFAULT));
            cucore_stream_release(s);

            // Façade.
            const cucore::Stream fs = cucore::Device(0).create_stream({flags == 0, p});
            EXPECT_EQ(fs.priority(), expected);
            EXPECT_EQ(fs.is_nonblocking(), flags == 0);
            EXPECT_EQ(fs.flags(), flags);
            EXPECT_TRUE(fs.is_owned());
        }
    }
    // NULL options: the defaults (non-blocking, priority 0 clamped into the range).
    cucore_stream_t *s = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &s));
    uint32_t f = 99;
    CUCORE_EXPECT_OK(cucore_stream_flags(s, &f));
    EXPECT_EQ(f, 0u);
    int prio = 99;
    CUCORE_EXPECT_OK(cucore_stream_priority(s, &prio));
    EXPECT_EQ(prio, std::min(std::max(0, greatest), least));
    cucore_stream_release(s);
    // Bad options.
    cucore_stream_options_t bad = {sizeof(cucore_stream_options_t), 0x100, 0};
    s = reinterpret_cast<cucore_stream_t *>(std::uintptr_t{1});
    CUCORE_EXPECT_STATUS(cucore_stream_create(dev_, &bad, &s), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(s, nullptr);
    bad = {1, 0, 0};
    CUCORE_EXPECT_STATUS(cucore_stream_create(dev_, &bad, &s), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_stream_create(dev_, nullptr, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
}

TEST_F(StreamTest, DeviceAndContextOfAStream) {
    cucore_stream_t *s = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &s));
    cucore_device_t *d = nullptr;
    CUCORE_EXPECT_OK(cucore_stream_device(s, &d));
    EXPECT_EQ(ordinal(d), 0);
    cucore_device_release(d);
    cucore_context_t *c = nullptr;
    CUCORE_EXPECT_OK(cucore_stream_context(s, &c));
    void *h = nullptr;
    CUCORE_EXPECT_OK(cucore_context_handle(c, &h));
    EXPECT_EQ(h, static_cast<void *>(primary_));
    void *cu_stream = nullptr;
    CUCORE_EXPECT_OK(cucore_stream_handle(s, &cu_stream));
    CUcontext raw_ctx = nullptr;
    {
        const gpu::ScopedContext bound(primary_);
        CU_EXPECT_OK(cu().StreamGetCtx(static_cast<CUstream>(cu_stream), &raw_ctx));
    }
    EXPECT_EQ(raw_ctx, primary_);
    cucore_context_release(c);
    cucore_stream_release(s);

    const cucore::Stream fs = cucore::Device(0).create_stream();
    EXPECT_EQ(fs.device().ordinal(), 0);
    EXPECT_EQ(fs.context().handle(), static_cast<void *>(primary_));
    EXPECT_TRUE(fs.context().is_primary());
}

// ---- Default streams ------------------------------------------------------------

TEST_F(StreamTest, LegacyDefaultStreamSynchronizesWithBlockingStreams) {
    cucore_stream_t *legacy = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_get_legacy_default(dev_, &legacy));
    void *h = nullptr;
    CUCORE_EXPECT_OK(cucore_stream_handle(legacy, &h));
    EXPECT_EQ(h, reinterpret_cast<void *>(std::uintptr_t{1})); // CU_STREAM_LEGACY
    cucore_context_t *c = nullptr;
    CUCORE_EXPECT_OK(cucore_stream_context(legacy, &c));
    void *ch = nullptr;
    CUCORE_EXPECT_OK(cucore_context_handle(c, &ch));
    EXPECT_EQ(ch, static_cast<void *>(primary_));
    cucore_context_release(c);

    const cucore_stream_options_t blocking_opts = {sizeof(cucore_stream_options_t), CUCORE_STREAM_BLOCKING, 0};
    cucore_stream_t *blocking = nullptr, *nonblocking = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_create(dev_, &blocking_opts, &blocking));
    CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &nonblocking));
    {
        // Work on a blocking stream waits for the legacy stream; a non-blocking one does not.
        Gate gate;
        CUCORE_ASSERT_OK(gpu::launch(legacy, gate.waiter()));
        cucore_event_t *eb = nullptr, *en = nullptr;
        CUCORE_ASSERT_OK(cucore_stream_record(blocking, nullptr, &eb));
        CUCORE_ASSERT_OK(cucore_stream_record(nonblocking, nullptr, &en));
        CUCORE_EXPECT_OK(cucore_event_synchronize(en));
        gpu::sleep_ms(20);
        EXPECT_EQ(event_done(eb), 0) << "a blocking stream did not wait for the legacy default stream";
        EXPECT_EQ(event_done(en), 1);
        gate.open();
        CUCORE_EXPECT_OK(cucore_stream_synchronize(legacy));
        CUCORE_EXPECT_OK(cucore_event_synchronize(eb));
        EXPECT_EQ(event_done(eb), 1);
        cucore_event_release(eb);
        cucore_event_release(en);
    }
    {
        // And the legacy stream waits for earlier work on blocking streams.
        auto seen = std::make_shared<std::atomic<int>>(-1);
        auto value = std::make_shared<std::atomic<int>>(0);
        CUCORE_ASSERT_OK(gpu::launch(blocking, [value] {
            gpu::sleep_ms(20);
            value->store(5);
        }));
        CUCORE_ASSERT_OK(gpu::launch(legacy, [value, seen] { seen->store(value->load()); }));
        CUCORE_EXPECT_OK(cucore_stream_synchronize(legacy));
        EXPECT_EQ(seen->load(), 5);
    }
    cucore_stream_release(blocking);
    cucore_stream_release(nonblocking);
    cucore_stream_release(legacy); // destroys nothing: the legacy stream still works
    {
        const gpu::ScopedContext bound(primary_);
        CU_EXPECT_OK(cu().StreamSynchronize(CU_STREAM_LEGACY));
    }

    const cucore::Stream fl = cucore::Stream::legacy_default(cucore::Device(0));
    EXPECT_EQ(fl.handle(), reinterpret_cast<void *>(std::uintptr_t{1}));
    auto ran = std::make_shared<std::atomic<int>>(0);
    fl.launch_host_func([ran] { ran->store(1); });
    fl.synchronize();
    EXPECT_EQ(ran->load(), 1);
    EXPECT_EQ(fl.context().handle(), static_cast<void *>(primary_));
}

TEST_F(StreamTest, PerThreadDefaultStream) {
    cucore_stream_t *ptds = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_get_per_thread_default(dev_, &ptds));
    void *h = nullptr;
    CUCORE_EXPECT_OK(cucore_stream_handle(ptds, &h));
    EXPECT_EQ(h, reinterpret_cast<void *>(std::uintptr_t{2})); // CU_STREAM_PER_THREAD
    cucore_device_t *d = nullptr;
    CUCORE_EXPECT_OK(cucore_stream_device(ptds, &d));
    EXPECT_EQ(ordinal(d), 0);
    cucore_device_release(d);
    cucore_stream_t *legacy = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_get_legacy_default(dev_, &legacy));
    {
        // The legacy default stream waits for the per-thread default stream's work.
        Gate gate;
        CUCORE_ASSERT_OK(gpu::launch(ptds, gate.waiter()));
        cucore_event_t *el = nullptr;
        CUCORE_ASSERT_OK(cucore_stream_record(legacy, nullptr, &el));
        gpu::sleep_ms(20);
        EXPECT_EQ(event_done(el), 0);
        EXPECT_EQ(stream_done(ptds), 0);
        gate.open();
        CUCORE_EXPECT_OK(cucore_event_synchronize(el));
        CUCORE_EXPECT_OK(cucore_stream_synchronize(ptds));
        EXPECT_EQ(stream_done(ptds), 1);
        cucore_event_release(el);
    }
    // Each thread's per-thread stream is its own: host functions queued from two
    // threads both run, and each thread's synchronize sees its own.
    auto counter = std::make_shared<std::atomic<int>>(0);
    std::thread other([counter] {
        const cucore::Stream mine = cucore::Stream::per_thread_default(cucore::Device(0));
        mine.launch_host_func([counter] { counter->fetch_add(10); });
        mine.synchronize();
        EXPECT_EQ(gpu::current_context(), nullptr);
    });
    other.join();
    CUCORE_ASSERT_OK(gpu::launch(ptds, [counter] { counter->fetch_add(1); }));
    CUCORE_EXPECT_OK(cucore_stream_synchronize(ptds));
    EXPECT_EQ(counter->load(), 11);
    cucore_stream_release(legacy);
    cucore_stream_release(ptds);
    EXPECT_EQ(cucore::Stream::per_thread_default(cucore::Device(0)).handle(),
              reinterpret_cast<void *>(std::uintptr_t{2}));
}

// ---- Foreign streams ---------------------------------------------------------------

TEST_F(StreamTest, ForeignStreamIsWrappedWithoutOwnership) {
    int least = 0, greatest = 0;
    CUCORE_ASSERT_OK(cucore_stream_priority_range(dev_, &least, &greatest));
    CU_ASSERT_OK(cu().CtxPushCurrent(primary_));
    CUstream raw_stream = nullptr;
    const CUresult r = cu().StreamCreateWithPriority(&raw_stream, CU_STREAM_NON_BLOCKING, greatest);
    CUcontext popped = nullptr;
    CU_ASSERT_OK(cu().CtxPopCurrent(&popped));
    CU_ASSERT_OK(r);

    gpu::ReleaseCounter owner;
    cucore_stream_t *s = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_from_handle(raw_stream, &gpu::ReleaseCounter::callback, &owner, &s));
    EXPECT_EQ(gpu::current_context(), nullptr);
    void *h = nullptr;
    CUCORE_EXPECT_OK(cucore_stream_handle(s, &h));
    EXPECT_EQ(h, static_cast<void *>(raw_stream));
    int owned = -1;
    CUCORE_EXPECT_OK(cucore_stream_is_owned(s, &owned));
    EXPECT_EQ(owned, 0);
    int prio = 0;
    CUCORE_EXPECT_OK(cucore_stream_priority(s, &prio));
    EXPECT_EQ(prio, greatest);
    uint32_t flags = 99;
    CUCORE_EXPECT_OK(cucore_stream_flags(s, &flags));
    EXPECT_EQ(flags, 0u); // non-blocking
    cucore_context_t *c = nullptr;
    CUCORE_EXPECT_OK(cucore_stream_context(s, &c));
    void *ch = nullptr;
    CUCORE_EXPECT_OK(cucore_context_handle(c, &ch));
    EXPECT_EQ(ch, static_cast<void *>(primary_));
    cucore_context_release(c);
    cucore_device_t *d = nullptr;
    CUCORE_EXPECT_OK(cucore_stream_device(s, &d));
    EXPECT_EQ(ordinal(d), 0);
    cucore_device_release(d);

    auto flag = std::make_shared<std::atomic<int>>(0);
    CUCORE_EXPECT_OK(gpu::launch(s, [flag] { flag->store(3); }));
    cucore_event_t *e = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_record(s, nullptr, &e));
    CUCORE_EXPECT_OK(cucore_event_synchronize(e));
    EXPECT_EQ(flag->load(), 3);
    cucore_event_release(e);

    // The owner's callback runs once, at the last release.
    CUCORE_EXPECT_OK(cucore_stream_retain(s));
    CUCORE_EXPECT_OK(cucore_stream_release(s));
    EXPECT_EQ(owner.calls.load(), 0);
    CUCORE_EXPECT_OK(cucore_stream_release(s));
    EXPECT_EQ(owner.calls.load(), 1);
    CUCORE_EXPECT_STATUS(cucore_stream_release(s), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(owner.calls.load(), 1);

    // The foreign stream was not destroyed: it still runs work.
    auto after = std::make_shared<std::atomic<int>>(0);
    {
        const gpu::ScopedContext bound(primary_);
        auto *box = new std::shared_ptr<std::atomic<int>>(after);
        CU_EXPECT_OK(cu().LaunchHostFunc(
            raw_stream,
            [](void *p) {
                std::unique_ptr<std::shared_ptr<std::atomic<int>>> b(
                    static_cast<std::shared_ptr<std::atomic<int>> *>(p));
                (*b)->store(1);
            },
            box));
        CU_EXPECT_OK(cu().StreamSynchronize(raw_stream));
    }
    EXPECT_EQ(after->load(), 1);

    // The façade, wrapping the same stream again.
    {
        const cucore::Stream fs = cucore::Stream::from_handle(raw_stream, &gpu::ReleaseCounter::callback, &owner);
        EXPECT_FALSE(fs.is_owned());
        EXPECT_EQ(fs.handle(), static_cast<void *>(raw_stream));
        EXPECT_EQ(fs.priority(), greatest);
        EXPECT_TRUE(fs.is_nonblocking());
        cucore::Stream copy = fs;
        cucore::Stream moved = std::move(copy);
        moved.launch_host_func([flag] { flag->store(4); });
        moved.synchronize();
        EXPECT_EQ(flag->load(), 4);
        EXPECT_EQ(owner.calls.load(), 1);
    }
    EXPECT_EQ(owner.calls.load(), 2);
    const gpu::ScopedContext bound(primary_);
    CU_EXPECT_OK(cu().StreamQuery(raw_stream));
    CU_EXPECT_OK(cu().StreamDestroy(raw_stream));
}

TEST_F(StreamTest, FromHandleOfTheDefaultStreamsUsesTheCurrentContext) {
    CU_ASSERT_OK(cu().CtxSetCurrent(primary_));
    cucore_stream_t *s = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_from_handle(CU_STREAM_LEGACY, nullptr, nullptr, &s));
    EXPECT_EQ(gpu::current_context(), primary_);
    CU_ASSERT_OK(cu().CtxSetCurrent(nullptr));
    cucore_context_t *c = nullptr;
    CUCORE_EXPECT_OK(cucore_stream_context(s, &c));
    void *ch = nullptr;
    CUCORE_EXPECT_OK(cucore_context_handle(c, &ch));
    EXPECT_EQ(ch, static_cast<void *>(primary_));
    auto flag = std::make_shared<std::atomic<int>>(0);
    CUCORE_EXPECT_OK(gpu::launch(s, [flag] { flag->store(1); }));
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s));
    EXPECT_EQ(flag->load(), 1);
    cucore_context_release(c);
    cucore_stream_release(s);
}

// ---- Lifetimes ----------------------------------------------------------------------------

// Device and context handles go first; the stream and event keep what they need.
void use_after_parents_released(CUcontext expected_ctx, bool release_stream_first) {
    cucore_device_t *d = nullptr;
    CUCORE_ASSERT_OK(cucore_device_get(0, &d));
    cucore_context_t *c = nullptr;
    CUCORE_ASSERT_OK(cucore_context_get_primary(d, &c));
    cucore_stream_t *s = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_create_in_context(c, nullptr, &s));
    cucore_event_t *e = nullptr;
    const cucore_event_options_t timing = {sizeof(cucore_event_options_t), CUCORE_EVENT_TIMING};
    CUCORE_ASSERT_OK(cucore_event_create_in_context(c, &timing, &e));
    CUCORE_EXPECT_OK(cucore_context_release(c));
    CUCORE_EXPECT_OK(cucore_device_release(d));

    auto flag = std::make_shared<std::atomic<int>>(0);
    cucore_event_t *start = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_record(s, &timing, &start));
    CUCORE_EXPECT_OK(gpu::launch(s, [flag] {
        gpu::sleep_ms(5);
        flag->store(1);
    }));
    CUCORE_EXPECT_OK(cucore_event_record(e, s));
    CUCORE_EXPECT_OK(cucore_event_synchronize(e));
    EXPECT_EQ(flag->load(), 1);
    float ms = -1;
    CUCORE_EXPECT_OK(cucore_event_elapsed_time(start, e, &ms));
    EXPECT_GE(ms, 0.0f);
    cucore_context_t *sc = nullptr;
    CUCORE_EXPECT_OK(cucore_stream_context(s, &sc));
    void *h = nullptr;
    CUCORE_EXPECT_OK(cucore_context_handle(sc, &h));
    EXPECT_EQ(h, static_cast<void *>(expected_ctx));
    cucore_context_release(sc);
    cucore_event_release(start);
    if (release_stream_first) {
        CUCORE_EXPECT_OK(cucore_stream_release(s)); // creation order
        CUCORE_EXPECT_OK(cucore_event_synchronize(e));
        CUCORE_EXPECT_OK(cucore_event_release(e));
    } else {
        CUCORE_EXPECT_OK(cucore_event_release(e)); // reverse creation order
        CUCORE_EXPECT_OK(cucore_stream_synchronize(s));
        CUCORE_EXPECT_OK(cucore_stream_release(s));
    }
}

TEST_F(StreamTest, ObjectsOutliveTheCallersOtherReferences) {
    use_after_parents_released(primary_, true);
    use_after_parents_released(primary_, false);
}

TEST_F(StreamTest, ReleasingAStreamWithPendingWorkLetsTheWorkFinish) {
    // The release may return at once (what cuStreamDestroy documents) or wait
    // until the stream has drained (as it did under compute-sanitizer):
    // either way the pending work runs to its end and the event recorded after
    // it completes. Since the release may wait for the gated work, a timer
    // opens the gate, not this thread after the release.
    cucore_stream_t *s = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &s));
    Gate gate;
    auto flag = std::make_shared<std::atomic<int>>(0);
    CUCORE_ASSERT_OK(gpu::launch(s, gate.waiter()));
    CUCORE_ASSERT_OK(gpu::launch(s, [flag] { flag->store(1); }));
    cucore_event_t *e = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_record(s, nullptr, &e));
    EXPECT_EQ(event_done(e), 0); // the gate is closed and nobody can open it yet
    gate.open_after(std::chrono::milliseconds(20));
    CUCORE_EXPECT_OK(cucore_stream_release(s)); // pending work
    // Whenever the release returned, the work did not finish before the gate opened.
    const int done = event_done(e);
    EXPECT_TRUE(done == 0 || gate.is_open()) << "work behind a closed gate completed";
    CUCORE_EXPECT_OK(cucore_event_synchronize(e));
    EXPECT_TRUE(gate.is_open());
    EXPECT_EQ(flag->load(), 1);
    EXPECT_EQ(event_done(e), 1);
    cucore_event_release(e);
}

TEST_F(StreamTest, FacadeObjectsOutliveTheirParents) {
    cucore::Stream s;
    cucore::Event e;
    {
        const cucore::Device d(0);
        const cucore::Context c = d.primary_context();
        s = c.create_stream();
        e = c.create_event({true, false});
    } // device and context wrappers gone
    auto flag = std::make_shared<std::atomic<int>>(0);
    const cucore::Event start = s.record({true, false});
    s.launch_host_func([flag] { flag->store(1); });
    s.record(e);
    e.synchronize();
    EXPECT_EQ(flag->load(), 1);
    EXPECT_GE(e - start, 0.0f);
    EXPECT_EQ(s.context().handle(), static_cast<void *>(primary_));
    EXPECT_EQ(e.device().ordinal(), 0);
    s.reset(); // creation order
    EXPECT_TRUE(e.is_done());
}

// Copy, move and the C round trip of a real stream (also a unit test, on the fake driver).
TEST_F(StreamTest, FacadeCopyMoveAndCRoundTripKeepEveryObjectCount) {
    const cucore::Device dev(0);
    const std::size_t streams0 = gpu::live(CUCORE_OBJECT_STREAM);
    const std::size_t any0 = gpu::live(CUCORE_OBJECT_ANY);
    {
        cucore::Stream a = dev.create_stream();
        const std::size_t any1 = gpu::live(CUCORE_OBJECT_ANY);
        EXPECT_EQ(gpu::live(CUCORE_OBJECT_STREAM), streams0 + 1);
        cucore::Stream b = a; // retain: same object
        EXPECT_TRUE(a == b);
        EXPECT_EQ(gpu::live(CUCORE_OBJECT_STREAM), streams0 + 1);
        a.reset(); // b keeps it alive
        EXPECT_EQ(gpu::live(CUCORE_OBJECT_STREAM), streams0 + 1);
        EXPECT_NO_THROW(b.synchronize());
        cucore::Stream c = std::move(b);
        EXPECT_FALSE(static_cast<bool>(b)); // NOLINT(bugprone-use-after-move): moved-from is empty
        EXPECT_EQ(b.get(), nullptr);        // NOLINT(bugprone-use-after-move)
        EXPECT_EQ(gpu::live(CUCORE_OBJECT_ANY), any1);
        // Ownership to C and back.
        cucore_stream_t *raw = c.release();
        EXPECT_EQ(c.get(), nullptr);
        CUCORE_EXPECT_OK(cucore_stream_synchronize(raw));
        cucore::Stream d = cucore::Stream::adopt(raw);
        cucore::Stream e = cucore::Stream::borrow(d.get()); // +1
        d.reset();
        EXPECT_EQ(gpu::live(CUCORE_OBJECT_STREAM), streams0 + 1);
        e.reset(); // last reference
        EXPECT_EQ(gpu::live(CUCORE_OBJECT_STREAM), streams0);
    }
    EXPECT_EQ(gpu::live(CUCORE_OBJECT_ANY), any0);
}

// ---- Host functions through the façade --------------------------------------------------

TEST_F(StreamTest, FacadeHostFunctionsRunInOrderAndAreFreed) {
    const cucore::Stream s = cucore::Device(0).create_stream();
    auto order = std::make_shared<std::vector<int>>();
    auto mutex = std::make_shared<std::mutex>();
    auto tracker = std::make_shared<int>(0); // counts the boxed copies through use_count
    int inline_hits = 0;                     // read only after synchronize
    for (int i = 0; i < 16; ++i) {
        s.launch_host_func([order, mutex, tracker, i] {
            std::lock_guard<std::mutex> lock(*mutex);
            order->push_back(i);
        });
    }
    s.launch_host_func([p = &inline_hits] { ++*p; }); // travels without allocation
    s.launch_host_func([](void *p) { ++*static_cast<int *>(p); }, &inline_hits);
    s.synchronize();
    std::vector<int> expected(16);
    for (int i = 0; i < 16; ++i) expected[static_cast<size_t>(i)] = i;
    EXPECT_EQ(*order, expected);
    EXPECT_EQ(inline_hits, 2);
    // Each box was destroyed after it ran (allow the driver thread a moment).
    for (int i = 0; i < 100 && tracker.use_count() != 1; ++i) gpu::sleep_ms(1);
    EXPECT_EQ(tracker.use_count(), 1);
}

// ---- Concurrency -------------------------------------------------------------------------

TEST_F(StreamTest, ObjectsUsedFromEightThreadsAtOnce) {
    constexpr int kThreads = 8;
    constexpr int kIterations = 20;
    cucore_stream_t *shared = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &shared));
    auto first = std::make_shared<std::atomic<int>>(0);
    auto second = std::make_shared<std::atomic<int>>(0);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            auto fail = [&](const char *what) {
                failures.fetch_add(1);
                ADD_FAILURE() << "thread " << t << ": " << what << ": " << cucore_last_error_message();
            };
            cucore_device_t *dev = nullptr;
            if (cucore_device_get(0, &dev) != CUCORE_SUCCESS) return fail("device_get");
            cucore_stream_retain(shared);
            for (int i = 0; i < kIterations; ++i) {
                const cucore_stream_options_t o = {sizeof(cucore_stream_options_t),
                                                   (i % 2) != 0 ? static_cast<uint32_t>(CUCORE_STREAM_BLOCKING) : 0u,
                                                   -(i % 2)};
                cucore_stream_t *s = nullptr;
                if (cucore_stream_create(dev, &o, &s) != CUCORE_SUCCESS) return fail("stream_create");
                if (gpu::launch(s, [first] { first->fetch_add(1); }) != CUCORE_SUCCESS) fail("launch");
                cucore_event_t *e = nullptr;
                const cucore_event_options_t eo = {sizeof(cucore_event_options_t),
                                                   (i % 3) == 0 ? static_cast<uint32_t>(CUCORE_EVENT_TIMING) : 0u};
                if (cucore_event_create(dev, &eo, &e) != CUCORE_SUCCESS) return fail("event_create");
                if (cucore_event_record(e, s) != CUCORE_SUCCESS) fail("event_record");
                if (cucore_stream_wait_event(shared, e) != CUCORE_SUCCESS) fail("wait_event on shared");
                cucore_event_t *es = nullptr;
                if (cucore_stream_record(shared, nullptr, &es) != CUCORE_SUCCESS) fail("record on shared");
                if (cucore_stream_wait_event(s, es) != CUCORE_SUCCESS) fail("wait_event");
                if (gpu::launch(s, [second] { second->fetch_add(1); }) != CUCORE_SUCCESS) fail("launch");
                if (cucore_stream_synchronize(s) != CUCORE_SUCCESS) fail("stream_synchronize");
                int done = 0;
                if (cucore_event_query(e, &done) != CUCORE_SUCCESS || done != 1) fail("event_query");
                if (cucore_event_synchronize(es) != CUCORE_SUCCESS) fail("event_synchronize");
                cucore_event_release(es);
                if ((i % 2) != 0) {
                    cucore_stream_release(s);
                    cucore_event_release(e);
                } else {
                    cucore_event_release(e);
                    cucore_stream_release(s);
                }
                CUcontext cur = nullptr;
                cu().CtxGetCurrent(&cur);
                if (cur != nullptr) fail("a context became current on the thread");
            }
            cucore_stream_release(shared);
            cucore_device_release(dev);
        });
    }
    for (std::thread &t : threads) t.join();
    CUCORE_EXPECT_OK(cucore_stream_synchronize(shared));
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(first->load(), kThreads * kIterations);
    EXPECT_EQ(second->load(), kThreads * kIterations);
    cucore_stream_release(shared);
}

TEST_F(StreamTest, FacadeObjectsSharedAcrossEightThreads) {
    constexpr int kThreads = 8;
    constexpr int kIterations = 20;
    const cucore::Device d(0);
    const cucore::Stream shared = d.create_stream();
    auto hits = std::make_shared<std::atomic<int>>(0);
    std::atomic<int> errors{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([shared, d, hits, &errors] { // copies: retains from many threads
            try {
                for (int i = 0; i < kIterations; ++i) {
                    cucore::Stream mine = d.create_stream({i % 2 == 0, 0});
                    cucore::Stream alias = shared;
                    mine.launch_host_func([hits] { hits->fetch_add(1); });
                    const cucore::Event e = mine.record({true, false});
                    alias.wait(e);
                    mine.wait(alias.record());
                    mine.synchronize();
                    if (!e.is_done()) errors.fetch_add(1);
                    cucore::Stream moved = std::move(mine);
                    moved.reset();
                }
            } catch (const cucore::Error &ex) {
                errors.fetch_add(1);
                ADD_FAILURE() << ex.what();
            }
        });
    }
    for (std::thread &t : threads) t.join();
    shared.synchronize();
    EXPECT_EQ(errors.load(), 0);
    EXPECT_EQ(hits->load(), kThreads * kIterations);
}

} // namespace
