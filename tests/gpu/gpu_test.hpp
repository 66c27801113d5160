// The common fixture and helpers of the GPU tests.
//
// GpuTest skips (with the reason printed) when libcuda.so.1, the driver or a
// device is missing, so the binary passes on machines without a GPU. Every test
// starts from a known state (no context current on the test thread) and ends
// with libcucore's live object counts back where they started.
#pragma once

#include <gtest/gtest.h>

#include <cucore.h>
#include <cucore.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "raw_driver.hpp"

// A cucore call that must succeed; the library's message explains a failure.
#define CUCORE_ASSERT_OK(expr)                                                             \
    do {                                                                                   \
        const cucore_status_t cucore_status_ = (expr);                                     \
        ASSERT_EQ(cucore_status_, CUCORE_SUCCESS)                                          \
            << #expr << " -> " << cucore_status_string(cucore_status_) << ": "             \
            << cucore_last_error_message();                                                \
    } while (0)
#define CUCORE_EXPECT_OK(expr)                                                             \
    do {                                                                                   \
        const cucore_status_t cucore_status_ = (expr);                                     \
        EXPECT_EQ(cucore_status_, CUCORE_SUCCESS)                                          \
            << #expr << " -> " << cucore_status_string(cucore_status_) << ": "             \
            << cucore_last_error_message();                                                \
    } while (0)
// A cucore call that must fail with `status`.
#define CUCORE_EXPECT_STATUS(expr, expected_status)                                        \
    do {                                                                                   \
        const cucore_status_t cucore_status_ = (expr);                                     \
        EXPECT_EQ(cucore_status_, (expected_status))                                       \
            << #expr << " -> " << cucore_status_string(cucore_status_) << ": "             \
            << cucore_last_error_message();                                                \
    } while (0)
// A raw driver call that must succeed.
#define CU_ASSERT_OK(expr)                                                                 \
    do {                                                                                   \
        const CUresult cu_result_ = (expr);                                                \
        ASSERT_EQ(cu_result_, CUDA_SUCCESS) << #expr << " -> " << raw::error_name(cu_result_); \
    } while (0)
#define CU_EXPECT_OK(expr)                                                                 \
    do {                                                                                   \
        const CUresult cu_result_ = (expr);                                                \
        EXPECT_EQ(cu_result_, CUDA_SUCCESS) << #expr << " -> " << raw::error_name(cu_result_); \
    } while (0)
// A façade expression that must throw cucore::Error with `status`.
#define CUCORE_EXPECT_THROW_STATUS(expr, expected_status)                                  \
    do {                                                                                   \
        try {                                                                              \
            (void)(expr);                                                                  \
            ADD_FAILURE() << #expr << " did not throw";                                    \
        } catch (const cucore::Error &cucore_error_) {                                     \
            EXPECT_EQ(cucore_error_.status(), (expected_status)) << cucore_error_.what();  \
            EXPECT_STRNE(cucore_error_.what(), "");                                        \
        }                                                                                  \
    } while (0)

namespace gpu {

inline const raw::Driver &cu() { return raw::driver(); }

inline void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

inline std::size_t live(cucore_object_type_t type = CUCORE_OBJECT_ANY) {
    std::size_t n = 0;
    EXPECT_EQ(cucore_live_object_count(type, &n), CUCORE_SUCCESS) << cucore_last_error_message();
    return n;
}

// The calling thread's current context through the raw driver.
inline CUcontext current_context() {
    CUcontext c = nullptr;
    EXPECT_EQ(cu().CtxGetCurrent(&c), CUDA_SUCCESS);
    return c;
}

// Pushes a context for raw driver calls and pops it at scope exit.
class ScopedContext {
public:
    explicit ScopedContext(CUcontext ctx) { EXPECT_EQ(cu().CtxPushCurrent(ctx), CUDA_SUCCESS); }
    ~ScopedContext() {
        CUcontext popped = nullptr;
        EXPECT_EQ(cu().CtxPopCurrent(&popped), CUDA_SUCCESS);
    }
    ScopedContext(const ScopedContext &) = delete;
    ScopedContext &operator=(const ScopedContext &) = delete;
};

// Queues any callable on a stream through the C ABI (the callable is boxed
// and freed after it ran). Host functions must not call CUDA.
inline cucore_status_t launch(cucore_stream_t *stream, std::function<void()> fn) {
    auto *box = new std::function<void()>(std::move(fn));
    const cucore_status_t s = cucore_stream_launch_host_func(
        stream,
        [](void *p) {
            std::unique_ptr<std::function<void()>> f(static_cast<std::function<void()> *>(p));
            (*f)();
        },
        box);
    if (s != CUCORE_SUCCESS) delete box;
    return s;
}

// A host function that blocks its stream until the gate opens.
//
// Rules for tests. A driver may make more calls wait for pending work than its
// documentation promises (under compute-sanitizer, releasing a stream whose
// work waited on a gate hung), so:
//  * while the gate is closed, the thread that will open it makes no call that
//    may wait for the gated work: no synchronize of the gated stream, of a
//    stream or event behind it, of its context or device, and no release of
//    the gated stream. Where a test must make such a call, it arms
//    open_after() first, so that another thread opens the gate;
//  * every wait has a time limit: a gated host function gives up after
//    kGateTimeout and the gate then reports a failure, so a mistake becomes a
//    failed test, not a stalled binary.
// The state is shared with the queued function, and the gate opens (and joins
// its timer) when destroyed, so a failing test never leaves a driver thread
// blocked or a host function pointing at freed memory.
inline constexpr std::chrono::milliseconds kGateTimeout{5000};

class Gate {
public:
    Gate() : state_(std::make_shared<State>()) {}
    ~Gate() {
        open();
        if (timer_.joinable()) timer_.join();
        std::lock_guard<std::mutex> lock(state_->mutex);
        EXPECT_FALSE(state_->timed_out)
            << "a gated host function gave up after " << kGateTimeout.count()
            << " ms: the test blocked (or took too long) while its gate was closed";
    }
    Gate(const Gate &) = delete;
    Gate &operator=(const Gate &) = delete;

    // The function to queue (captures the shared state). It returns when the
    // gate opens, or after kGateTimeout (recorded as a failure of the test).
    std::function<void()> waiter() const {
        auto state = state_;
        return [state] {
            std::unique_lock<std::mutex> lock(state->mutex);
            if (!state->cv.wait_for(lock, kGateTimeout, [&] { return state->open; })) state->timed_out = true;
        };
    }
    void open() {
        {
            std::lock_guard<std::mutex> lock(state_->mutex);
            state_->open = true;
        }
        state_->cv.notify_all();
    }
    // Opens the gate from another thread after `delay` (sooner if open() or
    // the destructor comes first). At most once per gate.
    void open_after(std::chrono::milliseconds delay) {
        if (timer_.joinable()) {
            ADD_FAILURE() << "Gate::open_after called twice";
            return;
        }
        auto state = state_;
        timer_ = std::thread([state, delay] {
            std::unique_lock<std::mutex> lock(state->mutex);
            state->cv.wait_for(lock, delay, [&] { return state->open; });
            state->open = true;
            lock.unlock();
            state->cv.notify_all();
        });
    }
    bool is_open() const {
        std::lock_guard<std::mutex> lock(state_->mutex);
        return state_->open;
    }
    bool timed_out() const {
        std::lock_guard<std::mutex> lock(state_->mutex);
        return state_->timed_out;
    }

private:
    struct State {
        mutable std::mutex mutex;
        std::condition_variable cv;
        bool open = false;
        bool timed_out = false;
    };
    std::shared_ptr<State> state_;
    std::thread timer_;
};

// The fixture of every GPU test: skips without driver or device, holds device
// 0 (C handle and raw CUdevice), clears the current context, and checks at the
// end that the live object counts are back to the baseline and that the test
// left the thread's current context as it found it.
class GpuTest : public ::testing::Test {
protected:
    void SetUp() override {
        const raw::Driver &d = cu();
        if (!d.available) GTEST_SKIP() << "no usable CUDA driver/device: " << d.reason;
        int n = 0;
        const cucore_status_t s = cucore_device_count(&n);
        ASSERT_EQ(s, CUCORE_SUCCESS) << "the raw driver works but libcucore says "
                                     << cucore_status_string(s) << ": " << cucore_last_error_message();
        ASSERT_EQ(n, d.device_count) << "libcucore and the raw driver disagree on the device count";
        device_count_ = n;
        warm_up();
        if (HasFatalFailure()) return;
        CU_ASSERT_OK(d.CtxSetCurrent(nullptr)); // tests start with no current context
        for (int t = 0; t < CUCORE_OBJECT_TYPE_COUNT; ++t)
            baseline_[t] = live(static_cast<cucore_object_type_t>(t));
        ready_ = true;
        CUCORE_ASSERT_OK(cucore_device_get(0, &dev_));
        CU_ASSERT_OK(d.DeviceGet(&cu_dev_, 0));
        CU_ASSERT_OK(d.DevicePrimaryCtxRetain(&primary_, cu_dev_));
    }

    void TearDown() override {
        if (!ready_) return;
        cucore_device_release(dev_);
        dev_ = nullptr;
        for (int t = 0; t < CUCORE_OBJECT_TYPE_COUNT; ++t) {
            const auto type = static_cast<cucore_object_type_t>(t);
            EXPECT_EQ(live(type), baseline_[t])
                << "live " << cucore_object_type_name(type) << " objects differ from the test's start";
        }
        cu().CtxSetCurrent(nullptr);
        if (primary_ != nullptr) cu().DevicePrimaryCtxRelease(cu_dev_);
    }

    // Once per process: touch everything the library creates lazily and keeps
    // for the process (device objects, pinned primary contexts), so that the
    // per-test baseline is stable. Leaves no context current.
    void warm_up() {
        static bool done = false;
        if (done) return;
        done = true;
        for (int i = 0; i < device_count_; ++i) {
            cucore_device_t *dev = nullptr;
            CUCORE_ASSERT_OK(cucore_device_get(i, &dev));
            CUCORE_ASSERT_OK(cucore_device_set_current(dev));
            cucore_stream_t *s = nullptr;
            CUCORE_ASSERT_OK(cucore_stream_create(dev, nullptr, &s));
            cucore_event_t *e = nullptr;
            CUCORE_ASSERT_OK(cucore_stream_record(s, nullptr, &e));
            CUCORE_ASSERT_OK(cucore_event_synchronize(e));
            // Memory: whatever the library sets up on first use of a device's
            // pool or of pinned memory (statuses are the memory tests' business).
            cucore_memory_resource_t *mr = nullptr;
            cucore_buffer_t *buf = nullptr;
            if (cucore_device_memory_resource_get_default(dev, &mr) == CUCORE_SUCCESS &&
                cucore_memory_resource_allocate(mr, 256, s, &buf) == CUCORE_SUCCESS)
                cucore_buffer_release(buf);
            cucore_memory_resource_release(mr);
            mr = nullptr;
            buf = nullptr;
            if (cucore_legacy_pinned_memory_resource_create(dev, &mr) == CUCORE_SUCCESS &&
                cucore_memory_resource_allocate(mr, 256, nullptr, &buf) == CUCORE_SUCCESS)
                cucore_buffer_release(buf);
            cucore_memory_resource_release(mr);
            (void)cucore_stream_synchronize(s);
            cucore_clear_last_error();
            cucore_event_release(e);
            cucore_stream_release(s);
            cucore_device_release(dev);
        }
        cu().CtxSetCurrent(nullptr);
    }

    // The ordinal of a device handle (handles of one device may differ).
    static int ordinal(const cucore_device_t *dev) {
        int o = -1;
        EXPECT_EQ(cucore_device_ordinal(dev, &o), CUCORE_SUCCESS) << cucore_last_error_message();
        return o;
    }

    int device_count_ = 0;
    cucore_device_t *dev_ = nullptr; // device 0
    CUdevice cu_dev_ = 0;            // device 0
    CUcontext primary_ = nullptr;    // device 0's primary context (raw reference)
    std::size_t baseline_[CUCORE_OBJECT_TYPE_COUNT] = {};
    bool ready_ = false;
};

// Records calls of an owner's release callback.
struct ReleaseCounter {
    std::atomic<int> calls{0};
    static void callback(void *self) { static_cast<ReleaseCounter *>(self)->calls.fetch_add(1); }
};

} // namespace gpu
