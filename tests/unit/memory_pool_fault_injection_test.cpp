// Fault injection (memory_fault_injection_support.hpp) for creating a pinned
// pool. (Device pools: fault_injection_test.cpp.)
#include "memory_fault_injection_support.hpp"

namespace {

class MemoryPoolFaultInjectionTest : public MemoryFaultInjectionFixture {};

TEST_F(MemoryPoolFaultInjectionTest, PinnedPoolCreate) {
    cucore_pinned_memory_resource_options_t o = CUCORE_PINNED_MEMORY_RESOURCE_OPTIONS_INIT;
    o.release_threshold = 1 << 20;
    run(create_on_fresh_device("cucore_pinned_memory_resource_create",
                               [o](cucore_device_t *d, cucore_memory_resource_t **r) {
                                   return cucore_pinned_memory_resource_create(d, &o, r);
                               },
                               5));
}

}  // namespace
