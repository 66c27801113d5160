// Stream-ordered pools against the fake driver: a new device pool's lifetime
// and attributes (MemoryPoolTest, on device 0), pinned pools, the driver
// support pools need, and peer access (MemoryPoolKindsTest, on two devices).
// Managed pools are in managed_memory_test.cpp.
#include <cstring>
#include <string>
#include <vector>

#include "driver/driver.hpp"
#include "memory_support.hpp"

namespace {

class MemoryPoolTest : public DefaultPoolFixture {};
class MemoryPoolKindsTest : public MemoryFixture {};

TEST_F(MemoryPoolTest, ReleaseOrderNeverMattersForPools) {
    cucore_memory_resource_t *pool = nullptr;
    cucore_device_memory_resource_options_t options = CUCORE_DEVICE_MEMORY_RESOURCE_OPTIONS_INIT;
    options.max_size = 1 << 20;
    ASSERT_EQ(cucore_device_memory_resource_create(d_, &options, &pool), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().pools, 1);
    cucore_buffer_t *b = allocate(128, pool);
    cucore_memory_resource_t *owner = nullptr;
    ASSERT_EQ(cucore_buffer_memory_resource(b, &owner), CUCORE_SUCCESS);
    EXPECT_EQ(owner, pool);
    cucore_memory_resource_release(owner);
    cucore_memory_resource_release(pool);
    EXPECT_EQ(fake::counters().pools, 1) << "the buffer holds its pool";
    ASSERT_EQ(cucore_buffer_fill(b, 3, 1, s_), CUCORE_SUCCESS);
    EXPECT_EQ(read(b, 100, 4), std::vector<unsigned char>(4, 3));
    cucore_buffer_release(b);
    EXPECT_EQ(fake::counters().pools, 0) << "destroyed after its last buffer";
    // The default pool is never destroyed.
    cucore_buffer_t *c = allocate(8);
    cucore_buffer_release(c);
}

TEST_F(MemoryPoolTest, OwnsPoolTellsACreatedPoolFromTheDevicesCurrentOne) {
    int owns = 7;
    ASSERT_EQ(cucore_memory_resource_owns_pool(pool_, &owns), CUCORE_SUCCESS);
    EXPECT_EQ(owns, 0) << "the device's current pool is never destroyed by the library";
    cucore_memory_resource_t *pool = nullptr, *legacy = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_create(d_, nullptr, &pool), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_owns_pool(pool, &owns), CUCORE_SUCCESS);
    EXPECT_EQ(owns, 1);
    ASSERT_EQ(cucore_legacy_pinned_memory_resource_create(d_, &legacy), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_memory_resource_owns_pool(legacy, &owns), CUCORE_SUCCESS);
    EXPECT_EQ(owns, 0) << "no pool";
    cucore_memory_resource_release(legacy);
    cucore_memory_resource_release(pool);
}

TEST_F(MemoryPoolKindsTest, CurrentHostAndManagedPoolsAreTheDriversAndNotOwned) {
    cucore_memory_resource_t *host = nullptr, *again = nullptr, *managed = nullptr;
    ASSERT_EQ(cucore_pinned_memory_resource_get_default(d0_, &host), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_pinned_memory_resource_get_default(d0_, &again), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_managed_memory_resource_get_default(d0_, &managed), CUCORE_SUCCESS) << message();
    void *p1 = nullptr, *p2 = nullptr, *p3 = nullptr;
    ASSERT_EQ(cucore_memory_resource_handle(host, &p1), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_handle(again, &p2), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_handle(managed, &p3), CUCORE_SUCCESS);
    EXPECT_NE(p1, nullptr);
    EXPECT_EQ(p1, p2) << "the one current host pool";
    EXPECT_NE(p1, p3);
    EXPECT_EQ(kind_of(host), CUCORE_MEMORY_RESOURCE_PINNED);
    EXPECT_EQ(kind_of(managed), CUCORE_MEMORY_RESOURCE_MANAGED);
    int owns = 7, device_ok = 0, host_ok = 0, is_managed = 0, id = 0;
    EXPECT_EQ(cucore_memory_resource_owns_pool(host, &owns), CUCORE_SUCCESS);
    EXPECT_EQ(owns, 0);
    EXPECT_EQ(cucore_memory_resource_owns_pool(managed, &owns), CUCORE_SUCCESS);
    EXPECT_EQ(owns, 0);
    EXPECT_EQ(cucore_memory_resource_accessibility(host, &device_ok, &host_ok), CUCORE_SUCCESS);
    EXPECT_EQ(device_ok + host_ok, 2);
    EXPECT_EQ(cucore_memory_resource_device_id(host, &id), CUCORE_SUCCESS);
    EXPECT_EQ(id, -1);
    EXPECT_EQ(cucore_memory_resource_is_managed(managed, &is_managed), CUCORE_SUCCESS);
    EXPECT_EQ(is_managed, 1);
    // Both allocate in stream order on device 0's streams, the device reaching the host pool's memory.
    for (cucore_memory_resource_t *r : {host, managed}) {
        cucore_buffer_t *b = nullptr;
        EXPECT_EQ(cucore_memory_resource_allocate(r, 64, nullptr, &b), CUCORE_ERROR_INVALID_ARGUMENT);
        ASSERT_EQ(cucore_memory_resource_allocate(r, 64, s0_, &b), CUCORE_SUCCESS) << message();
        ASSERT_EQ(cucore_buffer_fill(b, 0x5a, 1, s0_), CUCORE_SUCCESS) << message();
        EXPECT_EQ(read(b, 0, 64), std::vector<unsigned char>(64, 0x5a));
        cucore_buffer_release(b);
    }
    const int pools = fake::counters().pools;
    cucore_memory_resource_release(host);
    cucore_memory_resource_release(again);
    cucore_memory_resource_release(managed);
    EXPECT_EQ(fake::counters().pools, pools) << "the driver's pools are never destroyed";
}

TEST_F(MemoryPoolTest, DeallocateReturnsMemoryAllocatedOutsideABuffer) {
    void *raw_pool = nullptr, *raw_stream = nullptr;
    ASSERT_EQ(cucore_memory_resource_handle(pool_, &raw_pool), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_stream_handle(s_, &raw_stream), CUCORE_SUCCESS);
    const int before = fake::counters().allocations;
    CUdeviceptr address = 0;
    ASSERT_EQ(CUCORE_DRIVER(cuMemAllocFromPoolAsync)(&address, 256, static_cast<CUmemoryPool>(raw_pool),
                                                     static_cast<CUstream>(raw_stream)),
              CUDA_SUCCESS);
    EXPECT_EQ(fake::counters().allocations, before + 1);
    EXPECT_EQ(cucore_memory_resource_deallocate(pool_, address, 256, nullptr), CUCORE_ERROR_INVALID_ARGUMENT)
        << "a pool frees in stream order";
    EXPECT_NE(message().find("'stream'"), std::string::npos) << message();
    EXPECT_EQ(fake::counters().allocations, before + 1) << "nothing freed by a refused call";
    ASSERT_EQ(cucore_memory_resource_deallocate(pool_, address, 256, s_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::counters().allocations, before);
    EXPECT_EQ(cucore_memory_resource_deallocate(pool_, 0, 0, s_), CUCORE_SUCCESS) << "address 0 is a no-op";
}

TEST_F(MemoryPoolTest, PoolAttributesReadAndWriteTheDriversPool) {
    cucore_memory_resource_t *pool = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_create(d_, nullptr, &pool), CUCORE_SUCCESS);
    uint64_t used = 9;
    ASSERT_EQ(cucore_memory_resource_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_USED_MEM_CURRENT, &used), CUCORE_SUCCESS);
    EXPECT_EQ(used, 0u);
    cucore_buffer_t *b = allocate(1000, pool);
    ASSERT_EQ(cucore_memory_resource_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_USED_MEM_CURRENT, &used), CUCORE_SUCCESS);
    EXPECT_EQ(used, 1000u);
    cucore_buffer_release(b);
    uint64_t high = 0;
    ASSERT_EQ(cucore_memory_resource_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_USED_MEM_HIGH, &high), CUCORE_SUCCESS);
    EXPECT_EQ(high, 1000u);
    ASSERT_EQ(cucore_memory_resource_set_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_USED_MEM_HIGH, 0), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_USED_MEM_HIGH, &high), CUCORE_SUCCESS);
    EXPECT_EQ(high, 0u) << "reset";
    ASSERT_EQ(cucore_memory_resource_set_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_RELEASE_THRESHOLD, 1 << 20),
              CUCORE_SUCCESS);
    uint64_t threshold = 0;
    ASSERT_EQ(cucore_memory_resource_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_RELEASE_THRESHOLD, &threshold),
              CUCORE_SUCCESS);
    EXPECT_EQ(threshold, uint64_t{1} << 20);
    ASSERT_EQ(cucore_memory_resource_set_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_REUSE_ALLOW_OPPORTUNISTIC, 0),
              CUCORE_SUCCESS);
    uint64_t flag = 9;
    ASSERT_EQ(cucore_memory_resource_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_REUSE_ALLOW_OPPORTUNISTIC, &flag),
              CUCORE_SUCCESS);
    EXPECT_EQ(flag, 0u);
    EXPECT_EQ(cucore_memory_resource_trim(pool, 0), CUCORE_SUCCESS);
    // Checked before the driver: read-only, reset-only, flag range, unknown attribute.
    fake::reset_calls();
    EXPECT_EQ(cucore_memory_resource_set_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_USED_MEM_CURRENT, 0),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("read-only"), std::string::npos) << message();
    EXPECT_EQ(cucore_memory_resource_set_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_USED_MEM_HIGH, 5),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_memory_resource_set_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_REUSE_ALLOW_OPPORTUNISTIC, 2),
              CUCORE_ERROR_INVALID_ARGUMENT);
    uint64_t value = 7;
    EXPECT_EQ(cucore_memory_resource_pool_attribute(pool, static_cast<cucore_pool_attribute_t>(99), &value),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(value, 0u);
    EXPECT_EQ(cucore_memory_resource_pool_attribute(pool, CUCORE_POOL_ATTRIBUTE_USED_MEM_HIGH, nullptr),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(fake::calls(), 0);
    // A resource without a pool says so.
    cucore_memory_resource_t *pinned = nullptr;
    ASSERT_EQ(cucore_legacy_pinned_memory_resource_create(d_, &pinned), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_memory_resource_trim(pinned, 0), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(cucore_memory_resource_pool_attribute(pinned, CUCORE_POOL_ATTRIBUTE_USED_MEM_HIGH, &value),
              CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_NE(message().find("no memory pool"), std::string::npos) << message();
    EXPECT_EQ(cucore_memory_resource_set_pool_attribute(pinned, CUCORE_POOL_ATTRIBUTE_RELEASE_THRESHOLD, 0),
              CUCORE_ERROR_NOT_SUPPORTED);
    cucore_memory_resource_release(pinned);
    cucore_memory_resource_release(pool);
}

TEST_F(MemoryPoolKindsTest, PinnedPoolIsAHostPoolTheDeviceCanReach) {
    cucore_pinned_memory_resource_options_t o = CUCORE_PINNED_MEMORY_RESOURCE_OPTIONS_INIT;
    o.max_size = 1 << 24;
    o.release_threshold = 1 << 20;
    cucore_memory_resource_t *pinned = nullptr;
    ASSERT_EQ(cucore_pinned_memory_resource_create(d0_, &o, &pinned), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::counters().pools, 1);
    EXPECT_EQ(kind_of(pinned), CUCORE_MEMORY_RESOURCE_PINNED);
    int id = 9, device_ok = 9, host_ok = 9;
    ASSERT_EQ(cucore_memory_resource_device_id(pinned, &id), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_accessibility(pinned, &device_ok, &host_ok), CUCORE_SUCCESS);
    EXPECT_EQ(id, -1) << "host memory";
    EXPECT_EQ(device_ok, 1);
    EXPECT_EQ(host_ok, 1);
    int managed_flag = 9;
    ASSERT_EQ(cucore_memory_resource_is_managed(pinned, &managed_flag), CUCORE_SUCCESS);
    EXPECT_EQ(managed_flag, 0);
    // What the driver was asked for: pinned host memory (any node), the size limit.
    const CUmemoryPool pool = pool_of(pinned);
    ASSERT_NE(pool, nullptr);
    const CUmemPoolProps props = fake::pool_props(pool);
    EXPECT_EQ(props.allocType, CU_MEM_ALLOCATION_TYPE_PINNED);
    EXPECT_EQ(props.location.type, CU_MEM_LOCATION_TYPE_HOST);
    EXPECT_EQ(props.handleTypes, CU_MEM_HANDLE_TYPE_NONE);
    EXPECT_EQ(props.maxSize, size_t{1} << 24);
    uint64_t threshold = 0;
    ASSERT_EQ(cucore_memory_resource_pool_attribute(pinned, CUCORE_POOL_ATTRIBUTE_RELEASE_THRESHOLD, &threshold),
              CUCORE_SUCCESS);
    EXPECT_EQ(threshold, uint64_t{1} << 20);
    // The creating device may use it; the other one not yet.
    EXPECT_EQ(fake::pool_access(pool, 0), CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    EXPECT_EQ(fake::pool_access(pool, 1), CU_MEM_ACCESS_FLAGS_PROT_NONE);
    cucore_access_t access = CUCORE_ACCESS_NONE;
    ASSERT_EQ(cucore_memory_resource_peer_access(pinned, d0_, &access), CUCORE_SUCCESS);
    EXPECT_EQ(access, CUCORE_ACCESS_READ_WRITE);
    ASSERT_EQ(cucore_memory_resource_peer_access(pinned, d1_, &access), CUCORE_SUCCESS);
    EXPECT_EQ(access, CUCORE_ACCESS_NONE);

    // Stream-ordered host memory: written by the host, copied to device memory.
    cucore_buffer_t *h = alloc(pinned, 64, s0_);
    ASSERT_NE(h, nullptr);
    EXPECT_EQ(accessibility(h), (std::vector<int>{1, 1, 0}));
    int buffer_device = 9;
    ASSERT_EQ(cucore_buffer_device_id(h, &buffer_device), CUCORE_SUCCESS);
    EXPECT_EQ(buffer_device, -1);
    const Bytes data = pattern(64, 1);
    std::memcpy(reinterpret_cast<void *>(address_of(h)), data.data(), data.size());
    cucore_memory_resource_t *pool0 = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_get_default(d0_, &pool0), CUCORE_SUCCESS);
    cucore_buffer_t *dev = alloc(pool0, 64, s0_);
    ASSERT_EQ(cucore_buffer_copy(dev, h, s0_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(read_all(dev), data);
    // Only the creating device's streams allocate (checked before the driver).
    cucore_buffer_t *other = nullptr;
    fake::reset_calls();
    EXPECT_EQ(cucore_memory_resource_allocate(pinned, 64, s1_, &other), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(other, nullptr);
    EXPECT_EQ(fake::calls(), 0);
    EXPECT_EQ(cucore_memory_resource_allocate(pinned, 64, nullptr, &other), CUCORE_ERROR_INVALID_ARGUMENT)
        << "a stream-ordered pool needs a stream";
    cucore_memory_resource_release(pinned);
    EXPECT_EQ(fake::counters().pools, 1) << "the buffer holds its pool";
    cucore_buffer_release(h);
    EXPECT_EQ(fake::counters().pools, 0);
    cucore_buffer_release(dev);
    cucore_memory_resource_release(pool0);
}

TEST_F(MemoryPoolKindsTest, PinnedPoolOnANumaNodeOrShareable) {
    cucore_pinned_memory_resource_options_t o = CUCORE_PINNED_MEMORY_RESOURCE_OPTIONS_INIT;
    o.use_numa_id = 1;
    o.numa_id = 2;
    cucore_memory_resource_t *numa = nullptr, *shared = nullptr;
    ASSERT_EQ(cucore_pinned_memory_resource_create(d0_, &o, &numa), CUCORE_SUCCESS) << message();
    CUmemPoolProps props = fake::pool_props(pool_of(numa));
    EXPECT_EQ(props.location.type, CU_MEM_LOCATION_TYPE_HOST_NUMA);
    EXPECT_EQ(props.location.id, 2);
    // Node 0 is a node like any other once use_numa_id says so.
    cucore_memory_resource_t *node0 = nullptr;
    o.numa_id = 0;
    ASSERT_EQ(cucore_pinned_memory_resource_create(d0_, &o, &node0), CUCORE_SUCCESS) << message();
    props = fake::pool_props(pool_of(node0));
    EXPECT_EQ(props.location.type, CU_MEM_LOCATION_TYPE_HOST_NUMA);
    EXPECT_EQ(props.location.id, 0);
    cucore_memory_resource_release(node0);
    // Shareable host pools need a NUMA node: without use_numa_id, node 0.
    o = CUCORE_PINNED_MEMORY_RESOURCE_OPTIONS_INIT;
    o.ipc_enabled = 1;
    ASSERT_EQ(cucore_pinned_memory_resource_create(d0_, &o, &shared), CUCORE_SUCCESS) << message();
    props = fake::pool_props(pool_of(shared));
    EXPECT_EQ(props.location.type, CU_MEM_LOCATION_TYPE_HOST_NUMA);
    EXPECT_EQ(props.location.id, 0);
    EXPECT_EQ(props.handleTypes, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    cucore_memory_resource_release(numa);
    cucore_memory_resource_release(shared);
}

// "A zero field means default": a struct that is zero but for struct_size is the
// INIT macro, and so are NULL options; numa_id is not read without use_numa_id.

TEST_F(MemoryPoolKindsTest, PinnedPoolZeroedOptionsAreTheDefaults) {
    const cucore_pinned_memory_resource_options_t init = CUCORE_PINNED_MEMORY_RESOURCE_OPTIONS_INIT;
    cucore_pinned_memory_resource_options_t zeroed;
    std::memset(&zeroed, 0, sizeof zeroed);
    zeroed.struct_size = sizeof zeroed;
    EXPECT_EQ(std::memcmp(&init, &zeroed, sizeof zeroed), 0) << "INIT is all zeros but struct_size";
    cucore_pinned_memory_resource_options_t ignored = zeroed;
    ignored.numa_id = 3;  // use_numa_id 0: not read
    const cucore_pinned_memory_resource_options_t *cases[] = {&zeroed, nullptr, &ignored};
    for (const cucore_pinned_memory_resource_options_t *o : cases) {
        SCOPED_TRACE(o == nullptr ? "NULL" : o == &zeroed ? "zeroed" : "numa_id without use_numa_id");
        cucore_memory_resource_t *r = nullptr;
        ASSERT_EQ(cucore_pinned_memory_resource_create(d0_, o, &r), CUCORE_SUCCESS) << message();
        const CUmemPoolProps props = fake::pool_props(pool_of(r));
        EXPECT_EQ(props.location.type, CU_MEM_LOCATION_TYPE_HOST) << "any host memory";
        EXPECT_EQ(props.location.id, 0);
        EXPECT_EQ(props.handleTypes, CU_MEM_HANDLE_TYPE_NONE) << "not shareable";
        EXPECT_EQ(props.maxSize, 0u) << "no limit";
        cucore_memory_resource_release(r);
    }
}

TEST_F(MemoryPoolKindsTest, PoolsNeedDriverSupport) {
    cucore_memory_resource_t *r = reinterpret_cast<cucore_memory_resource_t *>(0x1);
    cucore_managed_memory_resource_options_t pool = CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
    pool.use_pool = 1;
    fake::set_attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 0, 0);
    EXPECT_EQ(cucore_pinned_memory_resource_create(d0_, nullptr, &r), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(r, nullptr);
    r = reinterpret_cast<cucore_memory_resource_t *>(0x1);
    EXPECT_EQ(cucore_managed_memory_resource_create(d0_, &pool, &r), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(r, nullptr);
    fake::set_attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 0, 1);
    fake::set_attribute(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 0, 0);
    EXPECT_EQ(cucore_managed_memory_resource_create(d0_, &pool, &r), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_NE(message().find("managed"), std::string::npos) << message();
    fake::set_attribute(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 0, 1);
    fake::set_driver_version(12090);  // managed pools came with CUDA 13
    EXPECT_EQ(cucore_managed_memory_resource_create(d0_, &pool, &r), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_NE(message().find("CUDA 13"), std::string::npos) << message();
    EXPECT_EQ(r, nullptr);
    EXPECT_EQ(fake::counters().pools, 0) << "nothing made";
    fake::set_driver_version(13000);
    ASSERT_EQ(cucore_managed_memory_resource_create(d0_, &pool, &r), CUCORE_SUCCESS) << message();
    EXPECT_NE(pool_of(r), nullptr);
    cucore_memory_resource_release(r);
}

TEST_F(MemoryPoolKindsTest, DevicePoolPeerAccessIsGrantedAndRevoked) {
    cucore_memory_resource_t *pool = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_create(d0_, nullptr, &pool), CUCORE_SUCCESS);
    const CUmemoryPool raw = pool_of(pool);
    cucore_access_t access = CUCORE_ACCESS_READ_WRITE;
    ASSERT_EQ(cucore_memory_resource_peer_access(pool, d1_, &access), CUCORE_SUCCESS);
    EXPECT_EQ(access, CUCORE_ACCESS_NONE);
    ASSERT_EQ(cucore_memory_resource_set_peer_access(pool, d1_, CUCORE_ACCESS_READ_WRITE), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::pool_access(raw, 1), CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    ASSERT_EQ(cucore_memory_resource_peer_access(pool, d1_, &access), CUCORE_SUCCESS);
    EXPECT_EQ(access, CUCORE_ACCESS_READ_WRITE);
    ASSERT_EQ(cucore_memory_resource_set_peer_access(pool, d1_, CUCORE_ACCESS_NONE), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::pool_access(raw, 1), CU_MEM_ACCESS_FLAGS_PROT_NONE);
    ASSERT_EQ(cucore_memory_resource_peer_access(pool, d1_, &access), CUCORE_SUCCESS);
    EXPECT_EQ(access, CUCORE_ACCESS_NONE);
    // The own device always has read-write access and cannot lose it.
    ASSERT_EQ(cucore_memory_resource_peer_access(pool, d0_, &access), CUCORE_SUCCESS);
    EXPECT_EQ(access, CUCORE_ACCESS_READ_WRITE);
    EXPECT_EQ(cucore_memory_resource_set_peer_access(pool, d0_, CUCORE_ACCESS_READ_WRITE), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_memory_resource_set_peer_access(pool, d0_, CUCORE_ACCESS_NONE), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(fake::pool_access(raw, 0), CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    // The default pool too (a resource on a pool it does not own).
    cucore_memory_resource_t *current = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_get_default(d0_, &current), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_set_peer_access(current, d1_, CUCORE_ACCESS_READ_WRITE), CUCORE_SUCCESS);
    EXPECT_EQ(fake::pool_access(pool_of(current), 1), CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    ASSERT_EQ(cucore_memory_resource_set_peer_access(current, d1_, CUCORE_ACCESS_NONE), CUCORE_SUCCESS);
    cucore_memory_resource_release(current);
    cucore_memory_resource_release(pool);
}

TEST_F(MemoryPoolKindsTest, PeerAccessErrors) {
    cucore_memory_resource_t *pool = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_create(d0_, nullptr, &pool), CUCORE_SUCCESS);
    // Devices that cannot reach each other's memory: NOT_SUPPORTED, the pool unchanged.
    const auto can_access_peer = fake::table().cuDeviceCanAccessPeer;
    fake::table().cuDeviceCanAccessPeer = [](int *can, CUdevice, CUdevice) -> CUresult {
        *can = 0;
        return CUDA_SUCCESS;
    };
    fake::reinstall();
    EXPECT_EQ(cucore_memory_resource_set_peer_access(pool, d1_, CUCORE_ACCESS_READ_WRITE), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_NE(message().find("cannot access"), std::string::npos) << message();
    EXPECT_EQ(fake::pool_access(pool_of(pool), 1), CU_MEM_ACCESS_FLAGS_PROT_NONE);
    fake::table().cuDeviceCanAccessPeer = can_access_peer;
    fake::reinstall();
    // The driver refusing: CUDA with its result.
    fake::fail_entry("cuMemPoolSetAccess", CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(cucore_memory_resource_set_peer_access(pool, d1_, CUCORE_ACCESS_READ_WRITE), CUCORE_ERROR_CUDA);
    EXPECT_EQ(cucore_last_cuda_result(), CUDA_ERROR_INVALID_VALUE);
    EXPECT_NE(message().find("cuMemPoolSetAccess"), std::string::npos) << message();
    fake::fail_entry("");
    cucore_memory_resource_release(pool);

    // Kinds without peer access: NOT_SUPPORTED, no driver call.
    cucore_memory_resource_t *legacy = nullptr, *managed = nullptr, *user = nullptr;
    ASSERT_EQ(cucore_legacy_pinned_memory_resource_create(d0_, &legacy), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_managed_memory_resource_create(d0_, nullptr, &managed), CUCORE_SUCCESS);
    cucore_memory_resource_t *managed_pool_resource = managed_pool(d0_);  // managed memory reaches every device
    cucore_memory_resource_callbacks_t callbacks{};
    callbacks.struct_size = sizeof callbacks;
    callbacks.allocate = [](void *, uint64_t, cucore_stream_t *, uint64_t *) { return CUCORE_ERROR_OUT_OF_MEMORY; };
    callbacks.deallocate = [](void *, uint64_t, uint64_t, cucore_stream_t *) { return CUCORE_SUCCESS; };
    callbacks.device_id = 0;
    ASSERT_EQ(cucore_user_memory_resource_create(&callbacks, &user), CUCORE_SUCCESS);
    for (cucore_memory_resource_t *r : {legacy, managed, managed_pool_resource, user}) {
        SCOPED_TRACE(static_cast<int>(kind_of(r)));
        fake::reset_calls();
        EXPECT_EQ(cucore_memory_resource_set_peer_access(r, d1_, CUCORE_ACCESS_READ_WRITE), CUCORE_ERROR_NOT_SUPPORTED);
        cucore_access_t access = CUCORE_ACCESS_READ_WRITE;
        EXPECT_EQ(cucore_memory_resource_peer_access(r, d1_, &access), CUCORE_ERROR_NOT_SUPPORTED);
        EXPECT_EQ(access, CUCORE_ACCESS_NONE) << "out cleared";
        EXPECT_EQ(fake::calls(), 0);
    }
    cucore_memory_resource_release(legacy);
    cucore_memory_resource_release(managed);
    cucore_memory_resource_release(managed_pool_resource);
    cucore_memory_resource_release(user);
}

TEST_F(MemoryPoolKindsTest, PinnedPoolPeerAccess) {
    cucore_memory_resource_t *pinned = nullptr;
    ASSERT_EQ(cucore_pinned_memory_resource_create(d0_, nullptr, &pinned), CUCORE_SUCCESS);
    const CUmemoryPool raw = pool_of(pinned);
    ASSERT_EQ(cucore_memory_resource_set_peer_access(pinned, d1_, CUCORE_ACCESS_READ_WRITE), CUCORE_SUCCESS)
        << message();
    EXPECT_EQ(fake::pool_access(raw, 1), CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    cucore_access_t access = CUCORE_ACCESS_NONE;
    ASSERT_EQ(cucore_memory_resource_peer_access(pinned, d1_, &access), CUCORE_SUCCESS);
    EXPECT_EQ(access, CUCORE_ACCESS_READ_WRITE);
    ASSERT_EQ(cucore_memory_resource_set_peer_access(pinned, d1_, CUCORE_ACCESS_NONE), CUCORE_SUCCESS);
    EXPECT_EQ(fake::pool_access(raw, 1), CU_MEM_ACCESS_FLAGS_PROT_NONE);
    fake::reset_calls();
    EXPECT_EQ(cucore_memory_resource_set_peer_access(pinned, d1_, CUCORE_ACCESS_READ), CUCORE_ERROR_INVALID_ARGUMENT)
        << "pools grant read-write or nothing";
    // The creating device keeps the access it was granted (its streams allocate here).
    EXPECT_EQ(cucore_memory_resource_set_peer_access(pinned, d0_, CUCORE_ACCESS_NONE), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(fake::calls(), 0);
    EXPECT_EQ(fake::pool_access(raw, 0), CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    cucore_memory_resource_release(pinned);
}

}  // namespace
