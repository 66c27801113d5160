// The C++ façade of virtual memory against the fake driver: growing a buffer.
#include "memory_facade_support.hpp"

namespace {

class VirtualMemoryFacadeTest : public MemoryFacadeFixture {};

TEST_F(VirtualMemoryFacadeTest, VirtualMemoryGrows) {
    cucore::VirtualMemoryResourceOptions o;
    o.reserve_size = 4 * fake::kVmmRecommendedGranularity;
    const cucore::MemoryResource vmm = cucore::MemoryResource::virtual_memory(dev_, o);
    const cucore::Buffer b = vmm.allocate(1000);
    const Bytes data = pattern(1000, 8);
    b.copy_from_host(data, s_);
    const std::uint64_t address = b.address();
    b.grow(3 * fake::kVmmRecommendedGranularity);
    EXPECT_EQ(b.size(), 3 * fake::kVmmRecommendedGranularity);
    EXPECT_EQ(b.address(), address);
    Bytes head(1000);
    b.copy_to_host(0, head, s_);
    s_.synchronize();
    EXPECT_EQ(head, data);
    const cucore::Buffer view = b.view(0, 8);
    EXPECT_THROWS_STATUS(b.grow(4 * fake::kVmmRecommendedGranularity), CUCORE_ERROR_INVALID_STATE);
    const cucore::Buffer d = cucore::MemoryResource::device_default(dev_).allocate(8, s_);
    EXPECT_THROWS_STATUS(d.grow(16), CUCORE_ERROR_INVALID_ARGUMENT);
}

}  // namespace
