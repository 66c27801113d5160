// The fault-injection loop of the unit tests (fault_injection_test.cpp and the
// <capability>_fault_injection_test.cpp files of memory): every driver call of
// a path fails in turn, and after each failure
//  - either the call failed with a clear message (its function, the failing
//    driver call) and OUT_OF_MEMORY, its out-pointer cleared,
//  - or it succeeded because the failing call belonged to a cleanup after the
//    work (restoring the caller's context, destroying a temporary), and the
//    failure was reported as one release error,
//  - or it succeeded because the path reached the same result another way (the
//    scenario's `tolerated` call), with no release error;
// and in every case no library object and no driver object (stream, event,
// pool, allocation, physical memory, reservation, mapping, primary-context
// retain, array, mipmapped array, texture or surface object, graph, graph
// executable, user object) was left behind,
// but the one temporary the driver refused to destroy.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "test_support.hpp"

struct Scenario {
    const char *function;
    // Runs the path; returns its status and the handle it made (or NULL).
    std::function<cucore_status_t(void **handle)> run;
    std::function<void(void *handle)> release;
    int minimum_driver_calls;  // the path is known to make at least this many
    // A call whose failure the path may absorb by another way to the same
    // result (a grow that cannot extend its reservation moves instead).
    std::string tolerated = "";
};

inline bool same_driver_state(const fake::Counters &a, const fake::Counters &b) {
    return a.streams == b.streams && a.events == b.events && a.pools == b.pools && a.allocations == b.allocations &&
           a.vmm_handles == b.vmm_handles && a.reservations == b.reservations && a.mappings == b.mappings &&
           a.primary_retained == b.primary_retained && a.arrays == b.arrays &&
           a.mipmapped_arrays == b.mipmapped_arrays && a.texture_objects == b.texture_objects &&
           a.surface_objects == b.surface_objects && a.graphs == b.graphs && a.graph_execs == b.graph_execs &&
           a.user_objects == b.user_objects;
}

inline std::string describe(const fake::Counters &c) {
    return "streams " + std::to_string(c.streams) + ", events " + std::to_string(c.events) + ", pools " +
           std::to_string(c.pools) + ", allocations " + std::to_string(c.allocations) + ", physical " +
           std::to_string(c.vmm_handles) + ", reservations " + std::to_string(c.reservations) + ", mappings " +
           std::to_string(c.mappings) + ", primary retains " + std::to_string(c.primary_retained) + ", arrays " +
           std::to_string(c.arrays) + ", mipmapped arrays " + std::to_string(c.mipmapped_arrays) + ", textures " +
           std::to_string(c.texture_objects) + ", surfaces " + std::to_string(c.surface_objects) + ", graphs " +
           std::to_string(c.graphs) + ", graph executables " + std::to_string(c.graph_execs) + ", user objects " +
           std::to_string(c.user_objects);
}

// `Fixture` (FakeDriverTest or one derived from it) with run(scenario).
template <class Fixture>
class FaultInjection : public Fixture {
  protected:
    void SetUp() override {
        Fixture::SetUp();
        this->expects_release_errors_ = true;
    }
    void TearDown() override {
        // A temporary the driver refused to destroy stays in the fake: forget
        // it, so the fixture's leak checks see only what the library owns.
        if (refused_cleanup_) fake::install(2);
        Fixture::TearDown();
    }

    void run(const Scenario &scenario) {
        SCOPED_TRACE(scenario.function);
        int failures_seen = 0;
        for (long i = 1; i < 200; ++i) {
            const size_t live_before = Fixture::live(CUCORE_OBJECT_ANY);
            const fake::Counters driver_before = driver_objects();
            const uint64_t release_errors_before = Fixture::release_errors();
            fake::reset_calls();
            fake::fail_call(i, CUDA_ERROR_OUT_OF_MEMORY);
            void *handle = reinterpret_cast<void *>(0x1);
            const cucore_status_t status = scenario.run(&handle);
            const long made = fake::calls();
            fake::fail_call(0);
            const std::vector<std::string> log = fake::call_log();
            const std::string failed_call = i <= static_cast<long>(log.size()) ? log[i - 1] : "";
            SCOPED_TRACE("failing call " + std::to_string(i) + ": " + failed_call);
            fake::set_current_context(nullptr);
            if (made < i) {  // every call of the path has failed once
                ASSERT_EQ(status, CUCORE_SUCCESS) << Fixture::message();
                scenario.release(handle);
                EXPECT_GE(failures_seen, scenario.minimum_driver_calls);
                return;
            }
            ++failures_seen;
            fake::Counters expected = driver_before;
            if (status == CUCORE_SUCCESS && failed_call == scenario.tolerated) {
                EXPECT_EQ(Fixture::release_errors(), release_errors_before) << "a fallback, not a failure";
                scenario.release(handle);
            } else if (status == CUCORE_SUCCESS) {
                // Only a cleanup after the work may fail without failing the call.
                EXPECT_EQ(Fixture::release_errors(), release_errors_before + 1) << "a late failure must be reported";
                // A temporary the driver refused to destroy stays in the fake (and only it).
                const bool event_left = failed_call == "cuEventDestroy", stream_left = failed_call == "cuStreamDestroy";
                expected.events += event_left;
                expected.streams += stream_left;
                refused_cleanup_ = refused_cleanup_ || event_left || stream_left;
                scenario.release(handle);
            } else {
                EXPECT_EQ(handle, nullptr) << "out-pointer cleared";
                const std::string message = Fixture::message();
                EXPECT_EQ(message.rfind(std::string(scenario.function) + ":", 0), 0u) << message;
                EXPECT_NE(message.find(failed_call), std::string::npos) << message;
                EXPECT_EQ(status, CUCORE_ERROR_OUT_OF_MEMORY) << message;
            }
            EXPECT_EQ(Fixture::live(CUCORE_OBJECT_ANY), live_before) << "no half-made object";
            const fake::Counters after = driver_objects();
            EXPECT_TRUE(same_driver_state(after, expected))
                << "expected: " << describe(expected) << "\nafter:    " << describe(after);
        }
        FAIL() << "the path never completed";
    }

  private:
    bool refused_cleanup_ = false;
};
