// Fault injection for the memory create, allocate and grow paths of pinned,
// managed (pool and cuMemAllocManaged), virtual and user resources: every driver call of each path fails in
// turn (fault_injection_support.hpp's loop, as in fault_injection_test.cpp), and after each failure nothing is
// left: no library object, no pool, no allocation, no physical memory, address
// reservation or mapping, no context retain; a grow that fails leaves its
// buffer as it was. The scenarios shared by the <capability>_fault_injection_test.cpp
// files of memory (memory_resource, memory_pool, managed_memory, virtual_memory).
#pragma once

#include <functional>
#include <string>

#include "fault_injection_support.hpp"
#include "memory_support.hpp"

inline constexpr uint64_t kGran = fake::kVmmRecommendedGranularity;

class MemoryFaultInjectionFixture : public FaultInjection<MemoryFixture> {
  protected:
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

    // Where a successful grow leaves the buffer: at its address (the resource's
    // reservation had room) or moved to a new reservation.
    enum class Growth { in_place, by_moving };

    // Grows a fresh buffer of `resource` from `from` to `to` bytes. A grow that
    // succeeds keeps the contents, in place or moved as `growth` says; a failed
    // grow must leave the buffer's size, address and bytes as they were.
    Scenario grow(cucore_memory_resource_t *resource, uint64_t from, uint64_t to, Growth growth, int minimum) {
        return {"cucore_buffer_grow",
                [this, resource, from, to, growth](void **h) {
                    cucore_buffer_t *b = nullptr;
                    const Bytes data = pattern(static_cast<size_t>(from), 77);
                    {
                        fake::Uncounted setup;
                        if (cucore_memory_resource_allocate(resource, from, nullptr, &b) != CUCORE_SUCCESS)
                            return CUCORE_ERROR_INTERNAL;
                        write(b, 0, data);
                    }
                    const uint64_t address = address_of(b);
                    const cucore_status_t status = cucore_buffer_grow(b, to);
                    fake::Uncounted cleanup;
                    if (status == CUCORE_SUCCESS) {
                        EXPECT_EQ(size_of(b), to);
                        EXPECT_EQ(read(b, 0, from), data) << "contents kept";
                        if (growth == Growth::in_place)
                            EXPECT_EQ(address_of(b), address) << "grown in its reservation";
                        else
                            EXPECT_NE(address_of(b), address) << "moved to a larger reservation";
                        *h = b;
                    } else {
                        EXPECT_EQ(size_of(b), from) << "a failed grow leaves the buffer as it was";
                        EXPECT_EQ(address_of(b), address);
                        EXPECT_EQ(read(b, 0, from), data);
                        cucore_buffer_release(b);
                        *h = nullptr;
                    }
                    return status;
                },
                [](void *h) {
                    fake::Uncounted cleanup;
                    cucore_buffer_release(static_cast<cucore_buffer_t *>(h));
                },
                minimum};
    }
};
