// Contexts: primary and foreign contexts, and the rule that no call changes the
// caller's current context.
#include <cstdint>
#include <string>

#include "gpu_test.hpp"

namespace {

using gpu::cu;
using gpu::GpuTest;

class ContextTest : public GpuTest {
protected:
    // A context made with the raw driver (not current afterwards).
    CUcontext make_raw_context() {
        CUcontext ctx = nullptr;
        EXPECT_EQ(cu().CtxCreate(&ctx, 0, cu_dev_), CUDA_SUCCESS);
        CUcontext popped = nullptr;
        EXPECT_EQ(cu().CtxPopCurrent(&popped), CUDA_SUCCESS);
        EXPECT_EQ(popped, ctx);
        return ctx;
    }

    // The raw context is intact (usable) after we released every wrapper.
    void expect_raw_context_alive(CUcontext ctx) {
        CU_ASSERT_OK(cu().CtxPushCurrent(ctx));
        CU_EXPECT_OK(cu().CtxSynchronize());
        CUstream s = nullptr;
        CU_EXPECT_OK(cu().StreamCreate(&s, CU_STREAM_NON_BLOCKING));
        if (s != nullptr) CU_EXPECT_OK(cu().StreamDestroy(s));
        CUcontext popped = nullptr;
        CU_EXPECT_OK(cu().CtxPopCurrent(&popped));
        EXPECT_EQ(popped, ctx);
    }
};

TEST_F(ContextTest, ForeignContextIsWrappedWithoutOwnership) {
    CUcontext raw_ctx = make_raw_context();
    ASSERT_NE(raw_ctx, nullptr);
    gpu::ReleaseCounter owner;
    cucore_context_t *ctx = nullptr;
    CUCORE_ASSERT_OK(cucore_context_from_handle(raw_ctx, &gpu::ReleaseCounter::callback, &owner, &ctx));
    void *h = nullptr;
    CUCORE_EXPECT_OK(cucore_context_handle(ctx, &h));
    EXPECT_EQ(h, static_cast<void *>(raw_ctx));
    int is_primary = -1;
    CUCORE_EXPECT_OK(cucore_context_is_primary(ctx, &is_primary));
    EXPECT_EQ(is_primary, 0);
    cucore_device_t *owner_dev = nullptr;
    CUCORE_EXPECT_OK(cucore_context_device(ctx, &owner_dev));
    EXPECT_EQ(ordinal(owner_dev), 0);
    cucore_device_release(owner_dev);
    EXPECT_EQ(gpu::current_context(), nullptr);

    // Objects made in it live in it.
    cucore_stream_t *s = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_create_in_context(ctx, nullptr, &s));
    void *cu_stream = nullptr;
    CUCORE_EXPECT_OK(cucore_stream_handle(s, &cu_stream));
    CUcontext stream_ctx = nullptr;
    {
        const gpu::ScopedContext bound(raw_ctx);
        CU_EXPECT_OK(cu().StreamGetCtx(static_cast<CUstream>(cu_stream), &stream_ctx));
    }
    EXPECT_EQ(stream_ctx, raw_ctx);
    cucore_context_t *sc = nullptr;
    CUCORE_EXPECT_OK(cucore_stream_context(s, &sc));
    EXPECT_EQ(sc, ctx);
    cucore_context_release(sc);
    cucore_event_t *e = nullptr;
    const cucore_event_options_t timing = {sizeof(cucore_event_options_t), CUCORE_EVENT_TIMING};
    CUCORE_ASSERT_OK(cucore_event_create_in_context(ctx, &timing, &e));
    auto flag = std::make_shared<std::atomic<int>>(0);
    CUCORE_EXPECT_OK(gpu::launch(s, [flag] { flag->store(7); }));
    CUCORE_EXPECT_OK(cucore_event_record(e, s));
    CUCORE_EXPECT_OK(cucore_event_synchronize(e));
    EXPECT_EQ(flag->load(), 7);

    // The owner hears of the release exactly once, when the last holder goes.
    CUCORE_EXPECT_OK(cucore_context_retain(ctx));
    CUCORE_EXPECT_OK(cucore_context_release(ctx));
    CUCORE_EXPECT_OK(cucore_context_release(ctx)); // the user's reference: s and e still hold it
    EXPECT_EQ(owner.calls.load(), 0);
    CUCORE_EXPECT_OK(cucore_stream_release(s));
    EXPECT_EQ(owner.calls.load(), 0);
    CUCORE_EXPECT_OK(cucore_event_release(e));
    EXPECT_EQ(owner.calls.load(), 1);
    CUCORE_EXPECT_STATUS(cucore_context_release(ctx), CUCORE_ERROR_INVALID_HANDLE); // stale now
    EXPECT_EQ(owner.calls.load(), 1);

    expect_raw_context_alive(raw_ctx);
    CU_EXPECT_OK(cu().CtxDestroy(raw_ctx));
    EXPECT_EQ(gpu::current_context(), nullptr);
}

TEST_F(ContextTest, ForeignContextThroughTheFacade) {
    CUcontext raw_ctx = make_raw_context();
    ASSERT_NE(raw_ctx, nullptr);
    gpu::ReleaseCounter owner;
    {
        cucore::Stream s;
        {
            const cucore::Context ctx =
                cucore::Context::from_handle(raw_ctx, &gpu::ReleaseCounter::callback, &owner);
            EXPECT_EQ(ctx.handle(), static_cast<void *>(raw_ctx));
            EXPECT_FALSE(ctx.is_primary());
            EXPECT_EQ(ctx.device().ordinal(), 0);
            cucore::Context copy = ctx;
            s = ctx.create_stream({false, 0});
            EXPECT_EQ(s.context(), ctx);
            EXPECT_FALSE(s.is_nonblocking());
        }
        EXPECT_EQ(owner.calls.load(), 0); // the stream holds the context
        auto flag = std::make_shared<std::atomic<int>>(0);
        s.launch_host_func([flag] { flag->store(1); });
        s.synchronize();
        EXPECT_EQ(flag->load(), 1);
    }
    EXPECT_EQ(owner.calls.load(), 1);
    expect_raw_context_alive(raw_ctx);
    CU_EXPECT_OK(cu().CtxDestroy(raw_ctx));
}

TEST_F(ContextTest, FromHandleRejectsNull) {
    cucore_context_t *ctx = nullptr;
    CUCORE_EXPECT_STATUS(cucore_context_from_handle(nullptr, nullptr, nullptr, &ctx), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(ctx, nullptr);
    CUCORE_EXPECT_THROW_STATUS(cucore::Context::from_handle(nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
}

TEST_F(ContextTest, SetCurrentAndSynchronize) {
    cucore_context_t *ctx = nullptr;
    CUCORE_ASSERT_OK(cucore_context_get_primary(dev_, &ctx));
    CUCORE_EXPECT_OK(cucore_context_set_current(ctx));
    EXPECT_EQ(gpu::current_context(), primary_);
    CU_ASSERT_OK(cu().CtxSetCurrent(nullptr));

    auto flag = std::make_shared<std::atomic<int>>(0);
    cucore_stream_t *s = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_create_in_context(ctx, nullptr, &s));
    CUCORE_EXPECT_OK(gpu::launch(s, [flag] {
        gpu::sleep_ms(20);
        flag->store(1);
    }));
    CUCORE_EXPECT_OK(cucore_context_synchronize(ctx));
    EXPECT_EQ(flag->load(), 1);
    cucore_stream_release(s);
    cucore_context_release(ctx);

    const cucore::Context c = cucore::Device(0).primary_context();
    c.set_current();
    EXPECT_EQ(gpu::current_context(), primary_);
    CU_ASSERT_OK(cu().CtxSetCurrent(nullptr));
    const cucore::Stream fs = c.create_stream();
    fs.launch_host_func([flag] {
        gpu::sleep_ms(20);
        flag->store(2);
    });
    c.synchronize();
    EXPECT_EQ(flag->load(), 2);
}

// ---- The caller's current context is never changed ----------------------------------

class CurrentContextTest : public ContextTest {
protected:
    // Makes `state` current, runs `call` (which must succeed) and checks that
    // `state` is still current.
    template <typename F> void keep(const char *what, F &&call) {
        ASSERT_EQ(cu().CtxSetCurrent(state_), CUDA_SUCCESS);
        const cucore_status_t s = call();
        EXPECT_EQ(s, CUCORE_SUCCESS) << what << ": " << cucore_last_error_message();
        EXPECT_EQ(gpu::current_context(), state_) << what << " changed the caller's current context";
    }

    // Every kind of call through the C ABI, with `state_` current.
    void run_c_abi_calls(CUcontext foreign_ctx) {
        int n = 0;
        keep("cucore_device_count", [&] { return cucore_device_count(&n); });
        keep("cucore_driver_version", [&] { return cucore_driver_version(&n); });
        cucore_device_t *dev = nullptr;
        keep("cucore_device_get", [&] { return cucore_device_get(device_count_ - 1, &dev); });
        const char *str = nullptr;
        keep("cucore_device_name", [&] { return cucore_device_name(dev, &str); });
        keep("cucore_device_pci_bus_id", [&] { return cucore_device_pci_bus_id(dev, &str); });
        cucore_uuid_t uuid;
        keep("cucore_device_uuid", [&] { return cucore_device_uuid(dev, &uuid); });
        int a = 0, b = 0;
        keep("cucore_device_compute_capability", [&] { return cucore_device_compute_capability(dev, &a, &b); });
        uint64_t mem = 0;
        keep("cucore_device_total_memory", [&] { return cucore_device_total_memory(dev, &mem); });
        keep("cucore_device_attribute",
             [&] { return cucore_device_attribute(dev, CUCORE_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &n); });
        cucore_device_properties_t props = CUCORE_DEVICE_PROPERTIES_INIT;
        keep("cucore_device_properties", [&] { return cucore_device_properties(dev, &props); });
        if (device_count_ > 1)
            keep("cucore_device_can_access_peer", [&] { return cucore_device_can_access_peer(dev, dev_, &n); });
        keep("cucore_stream_priority_range", [&] { return cucore_stream_priority_range(dev, &a, &b); });
        keep("cucore_device_synchronize", [&] { return cucore_device_synchronize(dev); });

        cucore_context_t *primary = nullptr;
        keep("cucore_context_get_primary", [&] { return cucore_context_get_primary(dev, &primary); });
        keep("cucore_context_synchronize", [&] { return cucore_context_synchronize(primary); });

        cucore_stream_t *s1 = nullptr, *s2 = nullptr, *legacy = nullptr, *ptds = nullptr, *wrapped = nullptr;
        const cucore_stream_options_t prio = {sizeof(cucore_stream_options_t), CUCORE_STREAM_BLOCKING, -1};
        keep("cucore_stream_create", [&] { return cucore_stream_create(dev, &prio, &s1); });
        keep("cucore_stream_create_in_context",
             [&] { return cucore_stream_create_in_context(primary, nullptr, &s2); });
        keep("cucore_stream_get_legacy_default", [&] { return cucore_stream_get_legacy_default(dev, &legacy); });
        keep("cucore_stream_get_per_thread_default",
             [&] { return cucore_stream_get_per_thread_default(dev, &ptds); });
        void *cu_stream = nullptr;
        keep("cucore_stream_handle", [&] { return cucore_stream_handle(s2, &cu_stream); });
        keep("cucore_stream_from_handle",
             [&] { return cucore_stream_from_handle(cu_stream, nullptr, nullptr, &wrapped); });
        keep("cucore_stream_priority", [&] { return cucore_stream_priority(s1, &n); });
        uint32_t flags = 0;
        keep("cucore_stream_flags", [&] { return cucore_stream_flags(s1, &flags); });
        keep("cucore_stream_query", [&] { return cucore_stream_query(s1, &n); });
        auto hits = std::make_shared<std::atomic<int>>(0);
        keep("cucore_stream_launch_host_func", [&] { return gpu::launch(s1, [hits] { hits->fetch_add(1); }); });

        cucore_event_t *e1 = nullptr, *e2 = nullptr, *e3 = nullptr;
        const cucore_event_options_t timing = {sizeof(cucore_event_options_t), CUCORE_EVENT_TIMING};
        keep("cucore_event_create", [&] { return cucore_event_create(dev, &timing, &e1); });
        keep("cucore_event_create_in_context",
             [&] { return cucore_event_create_in_context(primary, &timing, &e2); });
        keep("cucore_event_record", [&] { return cucore_event_record(e1, s1); });
        keep("cucore_stream_record", [&] { return cucore_stream_record(s1, &timing, &e3); });
        keep("cucore_stream_wait_event", [&] { return cucore_stream_wait_event(s2, e3); });
        keep("cucore_stream_wait_stream", [&] { return cucore_stream_wait_stream(legacy, s2); });
        keep("cucore_stream_wait_stream (per-thread)", [&] { return cucore_stream_wait_stream(ptds, wrapped); });
        keep("cucore_event_record (on wrapped)", [&] { return cucore_event_record(e2, wrapped); });
        keep("cucore_stream_synchronize", [&] { return cucore_stream_synchronize(s1); });
        keep("cucore_event_synchronize", [&] { return cucore_event_synchronize(e2); });
        keep("cucore_event_query", [&] { return cucore_event_query(e3, &n); });
        float ms = 0;
        keep("cucore_event_elapsed_time", [&] { return cucore_event_elapsed_time(e1, e3, &ms); });
        EXPECT_EQ(hits->load(), 1);

        if (foreign_ctx != nullptr) {
            // Wrapping an event uses the current context (the foreign one here).
            CUevent raw_event = nullptr;
            ASSERT_EQ(cu().EventCreate(&raw_event, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
            cucore_event_t *we = nullptr;
            keep("cucore_event_from_handle", [&] { return cucore_event_from_handle(raw_event, nullptr, nullptr, &we); });
            cucore_context_t *wc = nullptr;
            keep("cucore_event_context", [&] { return cucore_event_context(we, &wc); });
            void *h = nullptr;
            keep("cucore_context_handle", [&] { return cucore_context_handle(wc, &h); });
            EXPECT_EQ(h, static_cast<void *>(foreign_ctx));
            keep("cucore_context_release (wrapped current)", [&] { return cucore_context_release(wc); });
            keep("cucore_event_release (wrapped)", [&] { return cucore_event_release(we); });
            EXPECT_EQ(cu().EventDestroy(raw_event), CUDA_SUCCESS);
        } else {
            // With no current context, wrapping an event is refused, and still nothing changes.
            CUevent raw_event = nullptr;
            {
                const gpu::ScopedContext bound(primary_);
                ASSERT_EQ(cu().EventCreate(&raw_event, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
            }
            ASSERT_EQ(gpu::current_context(), nullptr);
            cucore_event_t *we = nullptr;
            EXPECT_EQ(cucore_event_from_handle(raw_event, nullptr, nullptr, &we), CUCORE_ERROR_INVALID_STATE)
                << cucore_last_error_message();
            EXPECT_EQ(gpu::current_context(), nullptr);
            const gpu::ScopedContext bound(primary_);
            EXPECT_EQ(cu().EventDestroy(raw_event), CUDA_SUCCESS);
        }

        // Releases run deleters (cuStreamDestroy, cuEventDestroy, primary context release).
        keep("cucore_event_release", [&] { return cucore_event_release(e3); });
        keep("cucore_event_release", [&] { return cucore_event_release(e2); });
        keep("cucore_stream_release (wrapped)", [&] { return cucore_stream_release(wrapped); });
        keep("cucore_stream_release (per-thread)", [&] { return cucore_stream_release(ptds); });
        keep("cucore_stream_release (legacy)", [&] { return cucore_stream_release(legacy); });
        keep("cucore_stream_release", [&] { return cucore_stream_release(s2); });
        keep("cucore_context_release", [&] { return cucore_context_release(primary); });
        keep("cucore_stream_release", [&] { return cucore_stream_release(s1); });
        keep("cucore_event_release", [&] { return cucore_event_release(e1); });
        keep("cucore_device_release", [&] { return cucore_device_release(dev); });
        cucore_device_t *cur = nullptr;
        keep("cucore_device_get_current", [&] { return cucore_device_get_current(&cur); });
        cucore_device_release(cur);
    }

    // The same through the façade.
    void run_facade_calls() {
        ASSERT_EQ(cu().CtxSetCurrent(state_), CUDA_SUCCESS);
        auto hits = std::make_shared<std::atomic<int>>(0);
        {
            const cucore::Device d(device_count_ - 1);
            (void)d.properties();
            const cucore::Stream s = d.create_stream({true, -1});
            const cucore::Stream t = d.primary_context().create_stream();
            const cucore::Event start = s.record({true, false});
            s.launch_host_func([hits] { hits->fetch_add(1); });
            t.wait(s);
            const cucore::Event end = t.record({true, false});
            end.synchronize();
            EXPECT_GE(end - start, 0.0f);
            EXPECT_TRUE(s.is_done());
            cucore::Stream::legacy_default(d).wait(end);
            d.synchronize();
        }
        EXPECT_EQ(hits->load(), 1);
        EXPECT_EQ(gpu::current_context(), state_) << "the façade changed the caller's current context";
    }

    CUcontext state_ = nullptr;
};

TEST_F(CurrentContextTest, UnchangedWhenNoneIsCurrent) {
    state_ = nullptr;
    run_c_abi_calls(nullptr);
    run_facade_calls();
    EXPECT_EQ(gpu::current_context(), nullptr);
}

TEST_F(CurrentContextTest, UnchangedWhenAnotherContextIsCurrent) {
    CUcontext other = make_raw_context();
    ASSERT_NE(other, nullptr);
    state_ = other;
    run_c_abi_calls(other);
    run_facade_calls();
    // Not just the top: the stack is as the caller left it (one entry, `other`).
    CUcontext popped = nullptr;
    CU_EXPECT_OK(cu().CtxPopCurrent(&popped));
    EXPECT_EQ(popped, other);
    EXPECT_EQ(gpu::current_context(), nullptr);
    CU_EXPECT_OK(cu().CtxDestroy(other));
}

TEST_F(CurrentContextTest, UnchangedWhenAnotherDevicesContextIsCurrent) {
    if (device_count_ < 2) GTEST_SKIP() << "needs 2 devices, found " << device_count_;
    CUdevice last = 0;
    CU_ASSERT_OK(cu().DeviceGet(&last, device_count_ - 1));
    CUcontext other = nullptr;
    CU_ASSERT_OK(cu().DevicePrimaryCtxRetain(&other, last));
    state_ = other;
    // Objects on device 0 while device N's context is current.
    ASSERT_EQ(cu().CtxSetCurrent(state_), CUDA_SUCCESS);
    {
        const cucore::Device d0(0);
        const cucore::Stream s = d0.create_stream();
        const cucore::Event e = s.record();
        e.synchronize();
        EXPECT_EQ(s.device(), d0);
    }
    EXPECT_EQ(gpu::current_context(), other);
    run_c_abi_calls(other);
    CU_EXPECT_OK(cu().CtxSetCurrent(nullptr));
    CU_EXPECT_OK(cu().DevicePrimaryCtxRelease(last));
}

} // namespace
