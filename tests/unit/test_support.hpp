// Shared fixture for unit tests: installs the fake driver and checks, at the
// end of each test, that no library object and no fake driver resource leaked.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "core/event_cache.hpp"
#include "cucore.h"
#include "fake_driver.hpp"

// The fake driver's objects that the library's objects own: its counters less the spare driver events that
// contexts keep for reuse (core/event_cache.hpp), which live until their context goes.
inline fake::Counters driver_objects() {
    fake::Counters counters = fake::counters();
    counters.events -= cucore::core::EventCache::total();
    return counters;
}

class FakeDriverTest : public ::testing::Test {
  protected:
    void SetUp() override {
        fake::install(2);
        ASSERT_EQ(cucore_live_object_count(CUCORE_OBJECT_CONTEXT, &contexts_before_), CUCORE_SUCCESS);
        ASSERT_EQ(cucore_live_object_count(CUCORE_OBJECT_STREAM, &streams_before_), CUCORE_SUCCESS);
        ASSERT_EQ(cucore_live_object_count(CUCORE_OBJECT_EVENT, &events_before_), CUCORE_SUCCESS);
        ASSERT_EQ(cucore_live_object_count(CUCORE_OBJECT_MEMORY_RESOURCE, &resources_before_), CUCORE_SUCCESS);
        ASSERT_EQ(cucore_live_object_count(CUCORE_OBJECT_BUFFER, &buffers_before_), CUCORE_SUCCESS);
        driver_before_ = driver_objects();
        ASSERT_EQ(cucore_release_error_count(&release_errors_before_), CUCORE_SUCCESS);
    }
    void TearDown() override {
        if (!pins_primary_) {
            EXPECT_EQ(live(CUCORE_OBJECT_CONTEXT), contexts_before_) << "leaked contexts";
        }
        EXPECT_EQ(live(CUCORE_OBJECT_STREAM), streams_before_) << "leaked streams";
        EXPECT_EQ(live(CUCORE_OBJECT_EVENT), events_before_) << "leaked events";
        fake::Counters after = driver_objects();
        EXPECT_EQ(after.streams, driver_before_.streams) << "driver streams leaked";
        EXPECT_EQ(after.events, driver_before_.events) << "driver events leaked";
        EXPECT_EQ(after.pools, driver_before_.pools) << "driver memory pools leaked";
        EXPECT_EQ(after.allocations, driver_before_.allocations) << "driver allocations leaked";
        EXPECT_EQ(after.vmm_handles, driver_before_.vmm_handles) << "driver physical memory (cuMemCreate) leaked";
        EXPECT_EQ(after.reservations, driver_before_.reservations) << "driver address reservations leaked";
        EXPECT_EQ(after.mappings, driver_before_.mappings) << "driver mappings leaked";
        EXPECT_EQ(after.arrays, driver_before_.arrays) << "driver arrays leaked";
        EXPECT_EQ(after.mipmapped_arrays, driver_before_.mipmapped_arrays) << "driver mipmapped arrays leaked";
        EXPECT_EQ(after.texture_objects, driver_before_.texture_objects) << "driver texture objects leaked";
        EXPECT_EQ(after.surface_objects, driver_before_.surface_objects) << "driver surface objects leaked";
        EXPECT_EQ(after.graphs, driver_before_.graphs) << "driver graphs leaked";
        EXPECT_EQ(after.graph_execs, driver_before_.graph_execs) << "driver graph executables leaked";
        EXPECT_EQ(after.user_objects, driver_before_.user_objects) << "driver user objects leaked";
        EXPECT_EQ(fake::resource_violations(), 0) << "an array, mipmapped array, memory or GL mapping went while a "
                                                     "texture or surface object read it";
        EXPECT_EQ(live(CUCORE_OBJECT_MEMORY_RESOURCE), resources_before_) << "leaked memory resources";
        EXPECT_EQ(live(CUCORE_OBJECT_BUFFER), buffers_before_) << "leaked buffers";
        if (!pins_primary_) {
            EXPECT_EQ(after.primary_retained, driver_before_.primary_retained) << "primary context retain leaked";
        }
        if (!expects_release_errors_) {
            EXPECT_EQ(release_errors(), release_errors_before_);
        }
        cucore_set_release_error_handler(nullptr, nullptr);
        fake::uninstall();
    }
    static size_t live(cucore_object_type_t type) {
        size_t count = 0;
        EXPECT_EQ(cucore_live_object_count(type, &count), CUCORE_SUCCESS);
        return count;
    }
    static uint64_t release_errors() {
        uint64_t count = 0;
        EXPECT_EQ(cucore_release_error_count(&count), CUCORE_SUCCESS);
        return count;
    }
    cucore_device_t *device(int ordinal = 0) {
        cucore_device_t *d = nullptr;
        EXPECT_EQ(cucore_device_get(ordinal, &d), CUCORE_SUCCESS) << cucore_last_error_message();
        return d;
    }
    static std::string message() { return cucore_last_error_message(); }

    bool pins_primary_ = false;           // set by tests that call set_current
    bool expects_release_errors_ = false;  // set by tests that provoke them
    uint64_t release_errors_before_ = 0;

  private:
    size_t contexts_before_ = 0, streams_before_ = 0, events_before_ = 0;
    size_t resources_before_ = 0, buffers_before_ = 0;
    fake::Counters driver_before_;
};
