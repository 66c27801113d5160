// The fake driver's worker-thread streams (what the Python tests run against),
// in-process so they run under the sanitizers too: operations run in stream
// order, after what they wait for, and report progress as a device does.
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace {

// A host function that blocks its stream until the test opens it.
struct Gate {
    std::atomic<bool> entered{false}, open{false};
    static void run(void *self) {
        auto *gate = static_cast<Gate *>(self);
        gate->entered = true;
        while (!gate->open) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    void wait_entered() const {
        while (!entered) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
};

// Appends its number to a shared list when its stream gets to it.
struct Step {
    std::mutex *mutex;
    std::vector<int> *order;
    int number;
    static void run(void *self) {
        auto *step = static_cast<Step *>(self);
        std::lock_guard<std::mutex> lock(*step->mutex);
        step->order->push_back(step->number);
    }
};

class FakeWorkerStreamsTest : public FakeDriverTest {
  protected:
    void SetUp() override {
        FakeDriverTest::SetUp();
        fake::install(2, fake::Streams::worker_threads);
        ASSERT_EQ(t().cuDevicePrimaryCtxRetain(&context_, 0), CUDA_SUCCESS);
        ASSERT_EQ(t().cuCtxSetCurrent(context_), CUDA_SUCCESS);
        ASSERT_EQ(t().cuDeviceGetMemPool(&pool_, 0), CUDA_SUCCESS);
    }
    void TearDown() override {
        EXPECT_EQ(t().cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
        EXPECT_EQ(t().cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
        fake::install(2);  // waits for the workers
        FakeDriverTest::TearDown();
    }
    static cucore::driver::Table &t() { return fake::table(); }
    CUstream stream() {
        CUstream s = nullptr;
        EXPECT_EQ(t().cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, 0), CUDA_SUCCESS);
        return s;
    }
    CUevent event(unsigned flags) {
        CUevent e = nullptr;
        EXPECT_EQ(t().cuEventCreate(&e, flags), CUDA_SUCCESS);
        return e;
    }
    CUcontext context_ = nullptr;
    CUmemoryPool pool_ = nullptr;
};

TEST_F(FakeWorkerStreamsTest, WorkWaitsForWhatItIsOrderedAfter) {
    CUstream first = stream(), second = stream();
    CUevent done = event(CU_EVENT_DISABLE_TIMING);
    Gate gate;
    std::mutex mutex;
    std::vector<int> order;
    Step one{&mutex, &order, 1}, two{&mutex, &order, 2};
    ASSERT_EQ(t().cuLaunchHostFunc(first, &Gate::run, &gate), CUDA_SUCCESS);
    ASSERT_EQ(t().cuLaunchHostFunc(first, &Step::run, &one), CUDA_SUCCESS);
    ASSERT_EQ(t().cuEventRecord(done, first), CUDA_SUCCESS);
    ASSERT_EQ(t().cuStreamWaitEvent(second, done, 0), CUDA_SUCCESS);
    ASSERT_EQ(t().cuLaunchHostFunc(second, &Step::run, &two), CUDA_SUCCESS);
    gate.wait_entered();
    EXPECT_EQ(t().cuStreamQuery(first), CUDA_ERROR_NOT_READY);
    EXPECT_EQ(t().cuEventQuery(done), CUDA_ERROR_NOT_READY);
    EXPECT_EQ(t().cuStreamQuery(second), CUDA_ERROR_NOT_READY) << "it waits for the event";
    EXPECT_EQ(t().cuStreamDestroy(first), CUDA_SUCCESS) << "its queued work still runs";
    gate.open = true;
    ASSERT_EQ(t().cuStreamSynchronize(second), CUDA_SUCCESS);
    EXPECT_EQ(t().cuEventQuery(done), CUDA_SUCCESS);
    EXPECT_EQ(order, (std::vector<int>{1, 2}));
    EXPECT_EQ(t().cuStreamDestroy(second), CUDA_SUCCESS);
    EXPECT_EQ(t().cuEventDestroy(done), CUDA_SUCCESS);
}

TEST_F(FakeWorkerStreamsTest, ElapsedTimeIsTheTimeBetweenCompletions) {
    CUstream s = stream();
    CUevent start = event(0), end = event(0);
    Gate gate;
    ASSERT_EQ(t().cuEventRecord(start, s), CUDA_SUCCESS);
    ASSERT_EQ(t().cuLaunchHostFunc(s, &Gate::run, &gate), CUDA_SUCCESS);
    ASSERT_EQ(t().cuEventRecord(end, s), CUDA_SUCCESS);
    gate.wait_entered();  // `start` has completed
    float ms = -1;
    EXPECT_EQ(t().cuEventElapsedTime(&ms, start, end), CUDA_ERROR_NOT_READY);
    const auto held_from = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const double held_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - held_from).count();
    gate.open = true;
    ASSERT_EQ(t().cuEventSynchronize(end), CUDA_SUCCESS);
    ASSERT_EQ(t().cuEventElapsedTime(&ms, start, end), CUDA_SUCCESS);
    EXPECT_GE(ms, held_ms - 0.01) << "`end` completes after the gate opens";
    EXPECT_EQ(t().cuStreamDestroy(s), CUDA_SUCCESS);
    EXPECT_EQ(t().cuEventDestroy(start), CUDA_SUCCESS);
    EXPECT_EQ(t().cuEventDestroy(end), CUDA_SUCCESS);
}

TEST_F(FakeWorkerStreamsTest, PageableMemoryIsReadAtTheCallAndWrittenBeforeItReturns) {
    CUstream s = stream();
    CUdeviceptr device = 0;
    ASSERT_EQ(t().cuMemAllocFromPoolAsync(&device, 4, pool_, s), CUDA_SUCCESS);
    Gate gate;
    ASSERT_EQ(t().cuLaunchHostFunc(s, &Gate::run, &gate), CUDA_SUCCESS);
    unsigned char host[4] = {1, 2, 3, 4};
    ASSERT_EQ(t().cuMemcpyAsync(device, reinterpret_cast<CUdeviceptr>(host), 4, s), CUDA_SUCCESS);
    host[0] = 9;  // after the call: the copy took the bytes already
    ASSERT_EQ(t().cuMemsetD8Async(device + 3, 7, 1, s), CUDA_SUCCESS);
    gate.wait_entered();
    EXPECT_EQ(t().cuStreamQuery(s), CUDA_ERROR_NOT_READY);
    std::thread opener([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        gate.open = true;
    });
    unsigned char back[4] = {};
    ASSERT_EQ(t().cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(back), device, 4, s), CUDA_SUCCESS);
    opener.join();
    EXPECT_EQ(t().cuStreamQuery(s), CUDA_SUCCESS) << "a copy to pageable memory returns after the stream's work";
    EXPECT_EQ(std::vector<unsigned char>(back, back + 4), (std::vector<unsigned char>{1, 2, 3, 7}));
    ASSERT_EQ(t().cuMemFreeAsync(device, s), CUDA_SUCCESS);
    EXPECT_EQ(t().cuMemsetD8Async(device, 0, 1, s), CUDA_ERROR_INVALID_VALUE) << "freed memory is refused";
    ASSERT_EQ(t().cuStreamSynchronize(s), CUDA_SUCCESS);
    EXPECT_EQ(t().cuStreamDestroy(s), CUDA_SUCCESS);
}

}  // namespace
