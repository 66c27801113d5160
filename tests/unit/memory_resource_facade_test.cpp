// The C++ façade of memory resources against the fake driver: the options of
// every kind default to the C *_INIT macros and convert to C field by field,
// locations, and each factory makes its kind, with failures thrown as
// cucore::Error with the C status.
#include <cstdint>
#include <vector>

#include "memory_facade_support.hpp"

namespace {

using cucore::Location;

class MemoryResourceFacadeTest : public MemoryFacadeFixture {};

TEST(MemoryResourceFacadeOptions, DefaultsAreTheCInitMacros) {
    const cucore_device_memory_resource_options_t d0 = CUCORE_DEVICE_MEMORY_RESOURCE_OPTIONS_INIT;
    const cucore_device_memory_resource_options_t d = cucore::DeviceMemoryResourceOptions{}.to_c();
    EXPECT_EQ(d.struct_size, d0.struct_size);
    EXPECT_EQ(d.max_size, d0.max_size);
    EXPECT_EQ(d.release_threshold, d0.release_threshold);
    EXPECT_EQ(d.ipc_enabled, d0.ipc_enabled);
    EXPECT_EQ(d.reserved0 | d.reserved1, 0u);

    const cucore_pinned_memory_resource_options_t p0 = CUCORE_PINNED_MEMORY_RESOURCE_OPTIONS_INIT;
    const cucore_pinned_memory_resource_options_t p = cucore::PinnedMemoryResourceOptions{}.to_c();
    EXPECT_EQ(p.struct_size, p0.struct_size);
    EXPECT_EQ(p.ipc_enabled, p0.ipc_enabled);
    EXPECT_EQ(p.max_size, p0.max_size);
    EXPECT_EQ(p.release_threshold, p0.release_threshold);
    EXPECT_EQ(p.use_numa_id, 0u) << "any host memory";
    EXPECT_EQ(p.numa_id, 0);

    const cucore_managed_memory_resource_options_t m0 = CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
    const cucore_managed_memory_resource_options_t m = cucore::ManagedMemoryResourceOptions{}.to_c();
    EXPECT_EQ(m.struct_size, m0.struct_size);
    EXPECT_EQ(m.use_pool, m0.use_pool);
    EXPECT_EQ(m.use_pool, 0u) << "the default: cuMemAllocManaged";
    EXPECT_FALSE(cucore::ManagedMemoryResourceOptions{}.use_pool);
    EXPECT_EQ(m.preferred_location.type, CUCORE_LOCATION_NONE);
    EXPECT_EQ(m.preferred_location.id, 0);
    EXPECT_EQ(m.max_size, m0.max_size);
    EXPECT_EQ(m.release_threshold, m0.release_threshold);

    const cucore_virtual_memory_resource_options_t v0 = CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT;
    const cucore_virtual_memory_resource_options_t v = cucore::VirtualMemoryResourceOptions{}.to_c();
    EXPECT_EQ(v.struct_size, v0.struct_size);
    EXPECT_EQ(v.location_type, CUCORE_LOCATION_NONE) << "the default: the device";
    EXPECT_EQ(v.location_id, v0.location_id);
    EXPECT_EQ(v.minimum_granularity, 0u) << "the default: recommended";
    EXPECT_EQ(v.posix_fd_shareable, 0u);
    EXPECT_EQ(v.reserve_size, 0u);
    EXPECT_EQ(v.self_access, CUCORE_ACCESS_NONE) << "the default: read-write";
    EXPECT_EQ(v.reserved0 | v.reserved1, 0u);

    const cucore_copy_3d_t c0 = CUCORE_COPY_3D_INIT;
    const std::vector<uint8_t> host(4);
    const cucore_copy_3d_t c = cucore::to_c(cucore::MemoryRegion::host(host.data(), 4),
                                            cucore::MemoryRegion::host(host.data(), 4), {4});
    EXPECT_EQ(c.struct_size, c0.struct_size);
    EXPECT_EQ(c.rows, 1u);
    EXPECT_EQ(c.depth, 1u);
    EXPECT_EQ(c.reserved0, 0u);
}

TEST(MemoryResourceFacadeOptions, FieldsConvertToC) {
    cucore::PinnedMemoryResourceOptions p;
    p.ipc_enabled = true;
    p.max_size = 5;
    p.release_threshold = 6;
    p.numa_id = 2;
    const cucore_pinned_memory_resource_options_t pc = p.to_c();
    EXPECT_EQ(pc.ipc_enabled, 1u);
    EXPECT_EQ(pc.max_size, 5u);
    EXPECT_EQ(pc.release_threshold, 6u);
    EXPECT_EQ(pc.use_numa_id, 1u);
    EXPECT_EQ(pc.numa_id, 2);
    p.numa_id = 0;  // node 0 is a node, not "any"
    EXPECT_EQ(p.to_c().use_numa_id, 1u);
    EXPECT_EQ(p.to_c().numa_id, 0);
    p.numa_id.reset();
    EXPECT_EQ(p.to_c().use_numa_id, 0u);
    cucore::ManagedMemoryResourceOptions m;
    m.use_pool = true;
    m.preferred_location = Location::host_numa(3);
    m.max_size = 7;
    m.release_threshold = 8;
    const cucore_managed_memory_resource_options_t mc = m.to_c();
    EXPECT_EQ(mc.use_pool, 1u);
    EXPECT_EQ(mc.preferred_location.type, CUCORE_LOCATION_HOST_NUMA);
    EXPECT_EQ(mc.preferred_location.id, 3);
    EXPECT_EQ(mc.max_size, 7u);
    EXPECT_EQ(mc.release_threshold, 8u);
    m.use_pool = false;
    EXPECT_EQ(m.to_c().use_pool, 0u);
    cucore::VirtualMemoryResourceOptions v;
    v.location_type = CUCORE_LOCATION_HOST;
    v.minimum_granularity = true;
    v.posix_fd_shareable = true;
    v.reserve_size = 1 << 30;
    v.self_access = CUCORE_ACCESS_READ;
    const cucore_virtual_memory_resource_options_t vc = v.to_c();
    EXPECT_EQ(vc.location_type, CUCORE_LOCATION_HOST);
    EXPECT_EQ(vc.minimum_granularity, 1u);
    EXPECT_EQ(vc.posix_fd_shareable, 1u);
    EXPECT_EQ(vc.reserve_size, uint64_t{1} << 30);
    EXPECT_EQ(vc.self_access, CUCORE_ACCESS_READ);
    cucore::DeviceMemoryResourceOptions d;
    d.ipc_enabled = true;
    EXPECT_EQ(d.to_c().ipc_enabled, 1u);
}

TEST(MemoryResourceFacadeOptions, Locations) {
    EXPECT_TRUE(Location().is_none());
    EXPECT_EQ(Location::device(2).to_c().type, CUCORE_LOCATION_DEVICE);
    EXPECT_EQ(Location::device(2).to_c().id, 2);
    EXPECT_TRUE(Location::host().is_host());
    EXPECT_TRUE(Location::host_numa(1).is_host());
    EXPECT_FALSE(Location::device(0).is_host());
    EXPECT_TRUE(Location::device(0).is_device());
    EXPECT_EQ(Location::from_c({CUCORE_LOCATION_HOST_NUMA, 4}), Location::host_numa(4));
    EXPECT_NE(Location::host_numa(4), Location::host_numa(5));
    EXPECT_NE(Location::host(), Location::none());
}

TEST_F(MemoryResourceFacadeTest, FactoriesMakeEachKind) {
    cucore::PinnedMemoryResourceOptions p;
    p.numa_id = 1;
    const cucore::MemoryResource pinned = cucore::MemoryResource::pinned_pool(dev_, p);
    EXPECT_EQ(pinned.kind(), CUCORE_MEMORY_RESOURCE_PINNED);
    EXPECT_EQ(pinned.device_id(), -1);
    ASSERT_NE(pinned.handle(), nullptr);
    EXPECT_EQ(fake::pool_props(static_cast<CUmemoryPool>(pinned.handle())).location.type,
              CU_MEM_LOCATION_TYPE_HOST_NUMA);
    EXPECT_EQ(fake::pool_props(static_cast<CUmemoryPool>(pinned.handle())).location.id, 1);
    cucore::ManagedMemoryResourceOptions m;
    m.use_pool = true;
    m.preferred_location = Location::device(dev1_);
    const cucore::MemoryResource managed = cucore::MemoryResource::managed(dev_, m);
    EXPECT_EQ(managed.kind(), CUCORE_MEMORY_RESOURCE_MANAGED);
    EXPECT_TRUE(managed.is_managed());
    EXPECT_FALSE(pinned.is_managed());
    ASSERT_NE(managed.handle(), nullptr);
    const CUmemPoolProps props = fake::pool_props(static_cast<CUmemoryPool>(managed.handle()));
    EXPECT_EQ(props.allocType, CU_MEM_ALLOCATION_TYPE_MANAGED);
    EXPECT_EQ(props.location.type, CU_MEM_LOCATION_TYPE_DEVICE);
    EXPECT_EQ(props.location.id, 1);
    // Without use_pool: cuMemAllocManaged, no pool, the location advised per
    // allocation, and synchronous (no stream needed).
    m.use_pool = false;
    const cucore::MemoryResource plain = cucore::MemoryResource::managed(dev_, m);
    EXPECT_EQ(plain.kind(), CUCORE_MEMORY_RESOURCE_MANAGED);
    EXPECT_TRUE(plain.is_managed());
    EXPECT_EQ(plain.handle(), nullptr);
    const cucore::Buffer pb = plain.allocate(64);
    EXPECT_EQ(fake::managed_attach_flags(pb.address()), static_cast<unsigned>(CU_MEM_ATTACH_GLOBAL));
    EXPECT_EQ(pb.preferred_location(), Location::device(1));
    m.max_size = 1 << 20;  // pools only
    EXPECT_THROWS_STATUS(cucore::MemoryResource::managed(dev_, m), CUCORE_ERROR_INVALID_ARGUMENT);
    const cucore::MemoryResource vmm = cucore::MemoryResource::virtual_memory(dev1_);
    EXPECT_EQ(vmm.kind(), CUCORE_MEMORY_RESOURCE_VIRTUAL);
    EXPECT_EQ(vmm.device_id(), 1);
    EXPECT_EQ(vmm.handle(), nullptr);
    EXPECT_EQ(cucore::MemoryResource::pinned_pool(dev_).kind(), CUCORE_MEMORY_RESOURCE_PINNED);
    EXPECT_EQ(cucore::MemoryResource::managed(dev_).kind(), CUCORE_MEMORY_RESOURCE_MANAGED);
    cucore::VirtualMemoryResourceOptions bad;
    bad.self_access = static_cast<cucore_access_t>(2);  // neither NONE (the default), READ nor READ_WRITE
    EXPECT_THROWS_STATUS(cucore::MemoryResource::virtual_memory(dev_, bad), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(cucore::MemoryResource::pinned_pool(cucore::Device(), p), CUCORE_ERROR_INVALID_HANDLE);
}

}  // namespace
