// Fault injection (memory_fault_injection_support.hpp) for creating managed
// memory resources: a managed pool, and cuMemAllocManaged's resource with a
// preferred location.
#include "memory_fault_injection_support.hpp"

namespace {

class ManagedMemoryFaultInjectionTest : public MemoryFaultInjectionFixture {};

TEST_F(ManagedMemoryFaultInjectionTest, ManagedPoolCreate) {
    cucore_managed_memory_resource_options_t o = CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
    o.use_pool = 1;
    o.release_threshold = 1 << 20;
    o.preferred_location = cucore_location_t{CUCORE_LOCATION_DEVICE, 1};
    run(create_on_fresh_device("cucore_managed_memory_resource_create",
                               [o](cucore_device_t *d, cucore_memory_resource_t **r) {
                                   return cucore_managed_memory_resource_create(d, &o, r);
                               },
                               4));
}

TEST_F(ManagedMemoryFaultInjectionTest, ManagedResourceCreate) {
    cucore_managed_memory_resource_options_t o = CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
    o.preferred_location = cucore_location_t{CUCORE_LOCATION_DEVICE, 0};
    // the managed-memory attribute (the fixture's stream holds the primary context already)
    run(create_on_fresh_device("cucore_managed_memory_resource_create",
                               [o](cucore_device_t *d, cucore_memory_resource_t **r) {
                                   return cucore_managed_memory_resource_create(d, &o, r);
                               },
                               1));
}

}  // namespace
