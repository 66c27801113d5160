// The C++ façade of pools against the fake driver: peer access.
#include "memory_facade_support.hpp"

namespace {

class MemoryPoolFacadeTest : public MemoryFacadeFixture {};

TEST_F(MemoryPoolFacadeTest, PeerAccess) {
    cucore::MemoryResource pool = cucore::MemoryResource::device_pool(dev_);
    EXPECT_EQ(pool.peer_access(dev1_), CUCORE_ACCESS_NONE);
    pool.set_peer_access(dev1_, CUCORE_ACCESS_READ_WRITE);
    EXPECT_EQ(pool.peer_access(dev1_), CUCORE_ACCESS_READ_WRITE);
    EXPECT_EQ(fake::pool_access(static_cast<CUmemoryPool>(pool.handle()), 1), CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    EXPECT_EQ(pool.peer_access(dev_), CUCORE_ACCESS_READ_WRITE);
    EXPECT_THROWS_STATUS(pool.set_peer_access(dev_, CUCORE_ACCESS_NONE), CUCORE_ERROR_INVALID_ARGUMENT);
    const cucore::MemoryResource legacy = cucore::MemoryResource::legacy_pinned(dev_);
    EXPECT_THROWS_STATUS(legacy.peer_access(dev1_), CUCORE_ERROR_NOT_SUPPORTED);
    pool.set_peer_access(dev1_, CUCORE_ACCESS_NONE);
    EXPECT_EQ(pool.peer_access(dev1_), CUCORE_ACCESS_NONE);
}

}  // namespace
