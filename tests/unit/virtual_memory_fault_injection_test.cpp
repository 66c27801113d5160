// Fault injection (memory_fault_injection_support.hpp) for creating a virtual
// memory resource and growing its buffers, in place and by moving.
#include "memory_fault_injection_support.hpp"

namespace {

class VirtualMemoryFaultInjectionTest : public MemoryFaultInjectionFixture {};

TEST_F(VirtualMemoryFaultInjectionTest, VirtualResourceCreate) {
    run(create_on_fresh_device("cucore_virtual_memory_resource_create",
                               [](cucore_device_t *d, cucore_memory_resource_t **r) {
                                   return cucore_virtual_memory_resource_create(d, nullptr, r);
                               },
                               2));
}

TEST_F(VirtualMemoryFaultInjectionTest, GrowInPlace) {
    cucore_virtual_memory_resource_options_t o = CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT;
    o.reserve_size = 4 * kGran;
    cucore_memory_resource_t *vmm = nullptr;
    ASSERT_EQ(cucore_virtual_memory_resource_create(d0_, &o, &vmm), CUCORE_SUCCESS);
    // create, reserve staging, map, set access, copy, synchronize, unmap old,
    // map in place, set access, then the give-backs (late failures, reported)
    run(grow(vmm, kGran, 3 * kGran, Growth::in_place, 9));
    cucore_memory_resource_release(vmm);
}

TEST_F(VirtualMemoryFaultInjectionTest, GrowByMoving) {
    cucore_memory_resource_t *vmm = nullptr;
    ASSERT_EQ(cucore_virtual_memory_resource_create(d0_, nullptr, &vmm), CUCORE_SUCCESS);
    // create, reserve, map, set access, copy, synchronize, then the give-backs
    run(grow(vmm, 2 * kGran, 5 * kGran, Growth::by_moving, 6));
    cucore_memory_resource_release(vmm);
}

}  // namespace
