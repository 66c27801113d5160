// Fault injection for the memory create, allocate and grow paths of pinned,
// managed (pool and cuMemAllocManaged), virtual and user resources: every driver call of each path fails in
// turn (as in fault_injection_test.cpp), and after each failure nothing is
// left: no library object, no pool, no allocation, no physical memory, address
// reservation or mapping, no context retain; a grow that fails leaves its
// buffer as it was. The harness shared by the <capability>_fault_injection_test.cpp
// files of memory (memory_resource, memory_pool, managed_memory, virtual_memory).
#pragma once

#include <functional>
#include <string>

#include "memory_support.hpp"

inline constexpr uint64_t kGran = fake::kVmmRecommendedGranularity;

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
           a.primary_retained == b.primary_retained;
}

inline std::string describe(const fake::Counters &c) {
    return "streams " + std::to_string(c.streams) + ", events " + std::to_string(c.events) + ", pools " +
           std::to_string(c.pools) + ", allocations " + std::to_string(c.allocations) + ", physical " +
           std::to_string(c.vmm_handles) + ", reservations " + std::to_string(c.reservations) + ", mappings " +
           std::to_string(c.mappings) + ", primary retains " + std::to_string(c.primary_retained);
}

class MemoryFaultInjectionFixture : public MemoryFixture {
  protected:
    void SetUp() override {
        MemoryFixture::SetUp();
        expects_release_errors_ = true;
    }

    void check(const Scenario &scenario) {
        SCOPED_TRACE(scenario.function);
        int failures_seen = 0;
        for (long i = 1; i < 200; ++i) {
            const size_t live_before = live(CUCORE_OBJECT_ANY);
            const fake::Counters driver_before = fake::counters();
            const uint64_t release_errors_before = release_errors();
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
                ASSERT_EQ(status, CUCORE_SUCCESS) << message();
                scenario.release(handle);
                EXPECT_GE(failures_seen, scenario.minimum_driver_calls);
                return;
            }
            ++failures_seen;
            if (status == CUCORE_SUCCESS && failed_call == scenario.tolerated) {
                EXPECT_EQ(release_errors(), release_errors_before) << "a fallback, not a failure";
                scenario.release(handle);
            } else if (status == CUCORE_SUCCESS) {
                // Only a cleanup after the work may fail without failing the call.
                EXPECT_EQ(release_errors(), release_errors_before + 1) << "a late failure must be reported";
                scenario.release(handle);
            } else {
                EXPECT_EQ(handle, nullptr) << "out-pointer cleared";
                EXPECT_EQ(message().rfind(std::string(scenario.function) + ":", 0), 0u) << message();
                EXPECT_NE(message().find(failed_call), std::string::npos) << message();
                EXPECT_EQ(status, CUCORE_ERROR_OUT_OF_MEMORY) << message();
            }
            EXPECT_EQ(live(CUCORE_OBJECT_ANY), live_before) << "no half-made object";
            const fake::Counters after = fake::counters();
            EXPECT_TRUE(same_driver_state(after, driver_before))
                << "before: " << describe(driver_before) << "\nafter:  " << describe(after);
        }
        FAIL() << "the path never completed";
    }

    // A scenario that creates a resource with `create(device, out)` on a fresh
    // device handle (so the primary context retain is part of the path).
    Scenario create_on_fresh_device(const char *function,
                                    std::function<cucore_status_t(cucore_device_t *, cucore_memory_resource_t **)> create,
                                    int minimum) {
        return {function,
                [create](void **h) {
                    cucore_device_t *d = nullptr;
                    {
                        fake::Uncounted setup;
                        if (cucore_device_get(1, &d) != CUCORE_SUCCESS) return CUCORE_ERROR_INTERNAL;
                    }
                    const cucore_status_t status = create(d, reinterpret_cast<cucore_memory_resource_t **>(h));
                    fake::Uncounted cleanup;
                    cucore_device_release(d);
                    return status;
                },
                [](void *h) { cucore_memory_resource_release(static_cast<cucore_memory_resource_t *>(h)); }, minimum};
    }

    Scenario allocate_from(cucore_memory_resource_t *resource, cucore_stream_t *stream, uint64_t size, int minimum) {
        return {"cucore_memory_resource_allocate",
                [resource, stream, size](void **h) {
                    return cucore_memory_resource_allocate(resource, size, stream, reinterpret_cast<cucore_buffer_t **>(h));
                },
                [](void *h) { cucore_buffer_release(static_cast<cucore_buffer_t *>(h)); }, minimum};
    }

    // Grows a fresh buffer of `resource` from `from` to `to` bytes; before the
    // grow `prepare(buffer)` may arrange the address space. A failed grow must
    // leave the buffer's size, address and bytes as they were.
    Scenario grow(cucore_memory_resource_t *resource, uint64_t from, uint64_t to,
                  std::function<void(cucore_buffer_t *)> prepare, int minimum, std::string tolerated = "") {
        return {"cucore_buffer_grow",
                [this, resource, from, to, prepare](void **h) {
                    cucore_buffer_t *b = nullptr;
                    const Bytes data = pattern(static_cast<size_t>(from), 77);
                    {
                        fake::Uncounted setup;
                        if (cucore_memory_resource_allocate(resource, from, nullptr, &b) != CUCORE_SUCCESS)
                            return CUCORE_ERROR_INTERNAL;
                        write(b, 0, data);
                        prepare(b);
                    }
                    const uint64_t address = address_of(b);
                    const cucore_status_t status = cucore_buffer_grow(b, to);
                    fake::Uncounted cleanup;
                    if (status == CUCORE_SUCCESS) {
                        EXPECT_EQ(size_of(b), to);
                        EXPECT_EQ(read(b, 0, from), data) << "contents kept";
                        *h = b;
                    } else {
                        EXPECT_EQ(size_of(b), from) << "a failed grow leaves the buffer as it was";
                        EXPECT_EQ(address_of(b), address);
                        EXPECT_EQ(read(b, 0, from), data);
                        cucore_buffer_release(b);
                        *h = nullptr;
                    }
                    unblock();
                    return status;
                },
                [](void *h) {
                    fake::Uncounted cleanup;
                    cucore_buffer_release(static_cast<cucore_buffer_t *>(h));
                },
                minimum, std::move(tolerated)};
    }

    // Takes the addresses right after `b`'s reservation, so a grow must move.
    void block_after(cucore_buffer_t *b, uint64_t reserved) {
        CUdeviceptr got = 0;
        ASSERT_EQ(fake::table().cuMemAddressReserve(&got, 8 * kGran, 0, address_of(b) + reserved, 0), CUDA_SUCCESS);
        blocker_ = got;
        ASSERT_EQ(got, address_of(b) + reserved);
    }
    void unblock() {
        if (blocker_) fake::table().cuMemAddressFree(blocker_, 8 * kGran);
        blocker_ = 0;
    }
    CUdeviceptr blocker_ = 0;
};
