// Retain/release and create/destroy from many threads at once.
#include <atomic>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace {

using ThreadTest = FakeDriverTest;

TEST_F(ThreadTest, SixteenThreadsRetainAndReleaseOneHandle) {
    cucore_device_t *d = device();
    cucore_stream_t *s = nullptr;
    ASSERT_EQ(cucore_stream_create(d, nullptr, &s), CUCORE_SUCCESS);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 16; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < 20000; ++i) {
                if (cucore_stream_retain(s) != CUCORE_SUCCESS) ++failures;
                if (cucore_stream_release(s) != CUCORE_SUCCESS) ++failures;
            }
        });
    }
    for (auto &thread : threads) thread.join();
    EXPECT_EQ(failures.load(), 0);
    int done = 0;
    EXPECT_EQ(cucore_stream_query(s, &done), CUCORE_SUCCESS) << "still alive: the creator's reference remains";
    EXPECT_EQ(fake::counters().streams, 1);
    EXPECT_EQ(cucore_stream_release(s), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().streams, 0) << "the last release destroyed it exactly once";
    EXPECT_EQ(cucore_stream_release(s), CUCORE_ERROR_INVALID_HANDLE);
    cucore_device_release(d);
}

TEST_F(ThreadTest, ConcurrentReleasesDestroyExactlyOnce) {
    cucore_device_t *d = device();
    for (int round = 0; round < 200; ++round) {
        cucore_event_t *e = nullptr;
        ASSERT_EQ(cucore_event_create(d, nullptr, &e), CUCORE_SUCCESS);
        for (int i = 0; i < 7; ++i) ASSERT_EQ(cucore_event_retain(e), CUCORE_SUCCESS);
        std::atomic<int> ok{0}, bad{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < 16; ++t)  // 8 references, 16 releases: 8 must be rejected
            threads.emplace_back([&] { (cucore_event_release(e) == CUCORE_SUCCESS ? ok : bad)++; });
        for (auto &thread : threads) thread.join();
        ASSERT_EQ(ok.load(), 8);
        ASSERT_EQ(bad.load(), 8);
        ASSERT_EQ(driver_objects().events, 0);
    }
    cucore_device_release(d);
}

TEST_F(ThreadTest, ObjectsCreatedAndUsedFromManyThreads) {
    cucore_device_t *d = device(1);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < 500; ++i) {
                cucore_stream_t *s = nullptr;
                cucore_event_t *e = nullptr;
                if (cucore_stream_create(d, nullptr, &s) != CUCORE_SUCCESS) { ++failures; continue; }
                if (cucore_stream_record(s, nullptr, &e) != CUCORE_SUCCESS) ++failures;
                if (cucore_event_synchronize(e) != CUCORE_SUCCESS) ++failures;
                if (fake::current_context() != nullptr) ++failures;  // each thread's context restored
                cucore_event_release(e);
                cucore_stream_release(s);
            }
        });
    }
    for (auto &thread : threads) thread.join();
    EXPECT_EQ(failures.load(), 0);
    cucore_device_release(d);
}

}  // namespace
