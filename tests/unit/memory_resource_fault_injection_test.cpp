// Fault injection (memory_fault_injection_support.hpp) for allocation from a
// resource of every kind: pinned and managed pools, managed memory with and
// without a preferred location, virtual and user resources.
#include "memory_fault_injection_support.hpp"

namespace {

class MemoryResourceFaultInjectionTest : public MemoryFaultInjectionFixture {};

TEST_F(MemoryResourceFaultInjectionTest, AllocationsOfEveryNewKind) {
    cucore_memory_resource_t *pinned = nullptr, *managed = nullptr, *managed_pool = nullptr, *advised = nullptr;
    cucore_memory_resource_t *vmm = nullptr, *user = nullptr;
    ASSERT_EQ(cucore_pinned_memory_resource_create(d1_, nullptr, &pinned), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_managed_memory_resource_create(d1_, nullptr, &managed), CUCORE_SUCCESS);
    cucore_managed_memory_resource_options_t o = CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
    o.use_pool = 1;
    ASSERT_EQ(cucore_managed_memory_resource_create(d1_, &o, &managed_pool), CUCORE_SUCCESS);
    o = CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
    o.preferred_location = cucore_location_t{CUCORE_LOCATION_HOST, 0};
    ASSERT_EQ(cucore_managed_memory_resource_create(d1_, &o, &advised), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_virtual_memory_resource_create(d1_, nullptr, &vmm), CUCORE_SUCCESS);
    cucore_memory_resource_callbacks_t callbacks{};
    callbacks.struct_size = sizeof callbacks;
    callbacks.allocate = [](void *, uint64_t size, cucore_stream_t *, uint64_t *address) {
        *address = reinterpret_cast<uintptr_t>(new uint8_t[size]);
        return CUCORE_SUCCESS;
    };
    callbacks.deallocate = [](void *, uint64_t address, uint64_t, cucore_stream_t *) {
        delete[] reinterpret_cast<uint8_t *>(address);
        return CUCORE_SUCCESS;
    };
    ASSERT_EQ(cucore_user_memory_resource_create(&callbacks, &user), CUCORE_SUCCESS);
    run(allocate_from(pinned, s1_, 256, 1));
    run(allocate_from(managed, nullptr, 256, 1));  // cuMemAllocManaged
    run(allocate_from(managed_pool, s1_, 256, 1));
    run(allocate_from(advised, s1_, 256, 2));  // cuMemAllocManaged, cuMemAdvise (then cuMemFree)
    run(allocate_from(vmm, nullptr, 256, 4));  // reserve, create, map, set access
    run(allocate_from(user, s1_, 256, 0));
    for (cucore_memory_resource_t *r : {pinned, managed, managed_pool, advised, vmm, user})
        cucore_memory_resource_release(r);
}

}  // namespace
