// Pinned and managed pools (managed memory without a pool:
// memory_managed_test.cpp), peer access, what buffers say about themselves
// (accessibility, deallocation stream) and copies between devices, against
// the fake driver.
#include <cstring>
#include <string>

#include "memory_support.hpp"

namespace {

class MemoryResourcesTest : public MemoryFixture {
  protected:
    // A managed memory pool (options.use_pool) on `d`; NULL if the call failed.
    static cucore_memory_resource_t *managed_pool(cucore_device_t *d) {
        cucore_managed_memory_resource_options_t o = CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
        o.use_pool = 1;
        cucore_memory_resource_t *r = nullptr;
        EXPECT_EQ(cucore_managed_memory_resource_create(d, &o, &r), CUCORE_SUCCESS) << message();
        return r;
    }
};

// ---- Pinned pools ----------------------------------------------------------------

TEST_F(MemoryResourcesTest, PinnedPoolIsAHostPoolTheDeviceCanReach) {
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

TEST_F(MemoryResourcesTest, PinnedPoolOnANumaNodeOrShareable) {
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
TEST_F(MemoryResourcesTest, PinnedPoolZeroedOptionsAreTheDefaults) {
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

TEST_F(MemoryResourcesTest, PoolsNeedDriverSupport) {
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

// ---- Managed pools ------------------------------------------------------------------

TEST_F(MemoryResourcesTest, ManagedPoolGivesManagedBuffersEverywhereReachable) {
    cucore_memory_resource_t *managed = managed_pool(d0_);
    ASSERT_NE(managed, nullptr);
    EXPECT_EQ(fake::counters().pools, 1);
    EXPECT_EQ(kind_of(managed), CUCORE_MEMORY_RESOURCE_MANAGED);
    int id = 9, device_ok = 9, host_ok = 9;
    ASSERT_EQ(cucore_memory_resource_device_id(managed, &id), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_accessibility(managed, &device_ok, &host_ok), CUCORE_SUCCESS);
    EXPECT_EQ(id, 0);
    EXPECT_EQ(device_ok, 1);
    EXPECT_EQ(host_ok, 1);
    int managed_flag = 9;
    ASSERT_EQ(cucore_memory_resource_is_managed(managed, &managed_flag), CUCORE_SUCCESS);
    EXPECT_EQ(managed_flag, 1);
    cucore_memory_resource_t *device_pool = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_create(d0_, nullptr, &device_pool), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_is_managed(device_pool, &managed_flag), CUCORE_SUCCESS);
    EXPECT_EQ(managed_flag, 0) << "a device pool is not managed";
    int ordered = 9;
    ASSERT_EQ(cucore_memory_resource_is_stream_ordered(device_pool, &ordered), CUCORE_SUCCESS);
    EXPECT_EQ(ordered, 1) << "a pool allocates in stream order";
    cucore_memory_resource_t *legacy = nullptr;
    ASSERT_EQ(cucore_legacy_pinned_memory_resource_create(d0_, &legacy), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_is_stream_ordered(legacy, &ordered), CUCORE_SUCCESS);
    EXPECT_EQ(ordered, 0) << "legacy pinned memory is synchronous";
    EXPECT_EQ(cucore_memory_resource_is_stream_ordered(legacy, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_memory_resource_release(legacy);
    cucore_memory_resource_release(device_pool);
    EXPECT_EQ(cucore_memory_resource_is_managed(managed, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    const CUmemPoolProps props = fake::pool_props(pool_of(managed));
    EXPECT_EQ(props.allocType, CU_MEM_ALLOCATION_TYPE_MANAGED);
    EXPECT_EQ(props.location.type, CU_MEM_LOCATION_TYPE_NONE) << "no preferred location by default";
    // Stream-ordered: a stream of its device is needed.
    cucore_buffer_t *none = reinterpret_cast<cucore_buffer_t *>(0x1);
    EXPECT_EQ(cucore_memory_resource_allocate(managed, 128, nullptr, &none), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(none, nullptr);
    EXPECT_EQ(cucore_memory_resource_allocate(managed, 128, s1_, &none), CUCORE_ERROR_INVALID_ARGUMENT);
    fake::reset_calls();
    cucore_buffer_t *b = alloc(managed, 128, s0_);
    ASSERT_NE(b, nullptr);
    EXPECT_TRUE(called("cuMemAllocFromPoolAsync"));
    EXPECT_FALSE(called("cuMemAllocManaged"));
    EXPECT_EQ(fake::managed_attach_flags(address_of(b)), 0u) << "pool memory";
    cucore_stream_t *dealloc = nullptr;
    ASSERT_EQ(cucore_buffer_deallocation_stream(b, &dealloc), CUCORE_SUCCESS);
    EXPECT_EQ(dealloc, s0_);
    cucore_stream_release(dealloc);
    EXPECT_EQ(accessibility(b), (std::vector<int>{1, 1, 1}));
    // Managed memory is usable from the host directly and through copies.
    std::memset(reinterpret_cast<void *>(address_of(b)), 0x3C, 128);
    EXPECT_EQ(read_all(b), Bytes(128, 0x3C));
    ASSERT_EQ(cucore_buffer_fill(b, 0x1234, 2, s0_), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_stream_synchronize(s0_), CUCORE_SUCCESS);
    EXPECT_EQ(reinterpret_cast<const uint16_t *>(address_of(b))[63], 0x1234);
    fake::reset_calls();
    cucore_buffer_release(b);
    EXPECT_TRUE(called("cuMemFreeAsync"));
    EXPECT_FALSE(called("cuMemFree"));
    cucore_memory_resource_release(managed);
}

TEST_F(MemoryResourcesTest, ManagedPoolPreferredLocationReachesTheDriver) {
    struct Case {
        cucore_location_t preferred;
        CUmemLocationType type;
        int id;
    };
    const Case cases[] = {
        {{CUCORE_LOCATION_DEVICE, 1}, CU_MEM_LOCATION_TYPE_DEVICE, 1},
        {{CUCORE_LOCATION_HOST, 0}, CU_MEM_LOCATION_TYPE_HOST, 0},
        {{CUCORE_LOCATION_HOST_NUMA, 3}, CU_MEM_LOCATION_TYPE_HOST_NUMA, 3},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(static_cast<int>(c.type));
        cucore_managed_memory_resource_options_t o = CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
        o.use_pool = 1;
        o.preferred_location = c.preferred;
        o.release_threshold = 4096;
        cucore_memory_resource_t *managed = nullptr;
        ASSERT_EQ(cucore_managed_memory_resource_create(d0_, &o, &managed), CUCORE_SUCCESS) << message();
        const CUmemPoolProps props = fake::pool_props(pool_of(managed));
        EXPECT_EQ(props.location.type, c.type);
        EXPECT_EQ(props.location.id, c.id);
        uint64_t threshold = 0;
        ASSERT_EQ(cucore_memory_resource_pool_attribute(managed, CUCORE_POOL_ATTRIBUTE_RELEASE_THRESHOLD, &threshold),
                  CUCORE_SUCCESS);
        EXPECT_EQ(threshold, 4096u);
        cucore_memory_resource_release(managed);
    }
}

// ---- Peer access ----------------------------------------------------------------------

TEST_F(MemoryResourcesTest, DevicePoolPeerAccessIsGrantedAndRevoked) {
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

TEST_F(MemoryResourcesTest, PeerAccessErrors) {
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

TEST_F(MemoryResourcesTest, PinnedPoolPeerAccess) {
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

// ---- Buffers describe themselves ---------------------------------------------------

TEST_F(MemoryResourcesTest, AccessibilityOfEveryKindOfBuffer) {
    cucore_memory_resource_t *pool = nullptr, *legacy = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_get_default(d1_, &pool), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_legacy_pinned_memory_resource_create(d0_, &legacy), CUCORE_SUCCESS);
    cucore_buffer_t *device_buffer = alloc(pool, 16, s1_);
    cucore_buffer_t *host_buffer = alloc(legacy, 16, nullptr);
    EXPECT_EQ(accessibility(device_buffer), (std::vector<int>{1, 0, 0}));
    EXPECT_EQ(accessibility(host_buffer), (std::vector<int>{1, 1, 0}));
    cucore_buffer_t *view = nullptr;
    ASSERT_EQ(cucore_buffer_view(host_buffer, 4, 4, &view), CUCORE_SUCCESS);
    EXPECT_EQ(accessibility(view), (std::vector<int>{1, 1, 0})) << "a view is what its parent is";
    cucore_buffer_t *foreign_device = nullptr, *foreign_host = nullptr;
    ASSERT_EQ(cucore_buffer_from_handle(0x10000, 16, d1_, nullptr, nullptr, &foreign_device), CUCORE_SUCCESS);
    char local[16];
    ASSERT_EQ(cucore_buffer_from_handle(reinterpret_cast<uintptr_t>(local), 16, nullptr, nullptr, nullptr,
                                        &foreign_host),
              CUCORE_SUCCESS);
    EXPECT_EQ(accessibility(foreign_device), (std::vector<int>{1, 0, 0}));
    EXPECT_EQ(accessibility(foreign_host), (std::vector<int>{0, 1, 0}));
    // Closed buffers still say what they were.
    ASSERT_EQ(cucore_buffer_close(device_buffer, nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(accessibility(device_buffer), (std::vector<int>{1, 0, 0}));
    for (cucore_buffer_t *b : {device_buffer, host_buffer, view, foreign_device, foreign_host}) cucore_buffer_release(b);
    cucore_memory_resource_release(legacy);
    cucore_memory_resource_release(pool);
}

TEST_F(MemoryResourcesTest, DeallocationStreamIsTheAllocationStreamUntilChanged) {
    cucore_memory_resource_t *pool = nullptr, *legacy = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_get_default(d0_, &pool), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_legacy_pinned_memory_resource_create(d0_, &legacy), CUCORE_SUCCESS);
    cucore_buffer_t *b = alloc(pool, 32, s0_);
    cucore_stream_t *got = nullptr;
    ASSERT_EQ(cucore_buffer_deallocation_stream(b, &got), CUCORE_SUCCESS);
    EXPECT_EQ(got, s0_) << "the allocation stream (+1 reference)";
    cucore_stream_release(got);
    cucore_stream_t *other = nullptr;
    ASSERT_EQ(cucore_stream_create(d0_, nullptr, &other), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_buffer_set_deallocation_stream(b, other), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_buffer_deallocation_stream(b, &got), CUCORE_SUCCESS);
    EXPECT_EQ(got, other);
    cucore_stream_release(got);
    // A view frees on its allocation's stream.
    cucore_buffer_t *view = nullptr;
    ASSERT_EQ(cucore_buffer_view(b, 8, 8, &view), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_buffer_deallocation_stream(view, &got), CUCORE_SUCCESS);
    EXPECT_EQ(got, other);
    cucore_stream_release(got);
    cucore_stream_release(other);  // the buffer holds it
    // Closed: none.
    ASSERT_EQ(cucore_buffer_close(b, nullptr), CUCORE_SUCCESS);
    got = s1_;
    ASSERT_EQ(cucore_buffer_deallocation_stream(b, &got), CUCORE_SUCCESS);
    EXPECT_EQ(got, nullptr);
    // Synchronous and foreign memory: none.
    cucore_buffer_t *h = alloc(legacy, 32, nullptr);
    got = s1_;
    ASSERT_EQ(cucore_buffer_deallocation_stream(h, &got), CUCORE_SUCCESS);
    EXPECT_EQ(got, nullptr);
    cucore_buffer_t *foreign = nullptr;
    ASSERT_EQ(cucore_buffer_from_handle(0x10000, 16, d0_, nullptr, nullptr, &foreign), CUCORE_SUCCESS);
    got = s1_;
    ASSERT_EQ(cucore_buffer_deallocation_stream(foreign, &got), CUCORE_SUCCESS);
    EXPECT_EQ(got, nullptr);
    for (cucore_buffer_t *x : {b, view, h, foreign}) cucore_buffer_release(x);
    cucore_memory_resource_release(legacy);
    cucore_memory_resource_release(pool);
}

// ---- Copies between devices ----------------------------------------------------------------

TEST_F(MemoryResourcesTest, CopiesBetweenDevicesArePeerCopies) {
    cucore_memory_resource_t *pool0 = nullptr, *pool1 = nullptr, *managed = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_get_default(d0_, &pool0), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_device_memory_resource_get_default(d1_, &pool1), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_managed_memory_resource_create(d1_, nullptr, &managed), CUCORE_SUCCESS);
    cucore_buffer_t *a = alloc(pool0, 256, s0_), *b = alloc(pool1, 256, s1_), *m = alloc(managed, 256, s1_);
    const Bytes data = pattern(256, 7);
    write(a, 0, data);
    fake::reset_calls();
    ASSERT_EQ(cucore_buffer_copy(b, a, s0_), CUCORE_SUCCESS) << message();
    EXPECT_TRUE(called("cuMemcpyPeerAsync")) << "device 0 -> device 1 memory";
    EXPECT_FALSE(called("cuMemcpyAsync"));
    EXPECT_EQ(read_all(b), data);
    // Managed memory is reachable from both devices: a plain copy.
    fake::reset_calls();
    ASSERT_EQ(cucore_buffer_copy(m, a, s0_), CUCORE_SUCCESS) << message();
    EXPECT_TRUE(called("cuMemcpyAsync"));
    EXPECT_FALSE(called("cuMemcpyPeerAsync"));
    EXPECT_EQ(read_all(m), data);
    // Same device: a plain copy.
    cucore_buffer_t *c = alloc(pool1, 256, s1_);
    fake::reset_calls();
    ASSERT_EQ(cucore_buffer_copy(c, b, s1_), CUCORE_SUCCESS);
    EXPECT_FALSE(called("cuMemcpyPeerAsync"));
    EXPECT_EQ(read_all(c), data);
    EXPECT_EQ(fake::current_context(), nullptr) << "the caller's context is left alone";
    for (cucore_buffer_t *x : {a, b, m, c}) cucore_buffer_release(x);
    for (cucore_memory_resource_t *r : {pool0, pool1, managed}) cucore_memory_resource_release(r);
}

}  // namespace
