// The C++ façade of managed memory against the fake driver: a managed
// buffer's advice, prefetch and discard, refused for other memory.
#include "memory_facade_support.hpp"

namespace {

using cucore::Location;

class ManagedMemoryFacadeTest : public MemoryFacadeFixture {};

TEST_F(ManagedMemoryFacadeTest, ManagedBufferAdviceAndPrefetch) {
    const cucore::Buffer m = cucore::MemoryResource::managed(dev_).allocate(4096, s_);
    EXPECT_FALSE(m.read_mostly());
    m.set_read_mostly(true);
    EXPECT_TRUE(m.read_mostly());
    m.set_read_mostly(false);
    EXPECT_FALSE(m.read_mostly());
    EXPECT_TRUE(m.preferred_location().is_none());
    m.set_preferred_location(Location::device(1));
    EXPECT_EQ(m.preferred_location(), Location::device(1));
    m.set_preferred_location(Location::host());
    EXPECT_EQ(m.preferred_location(), Location::host());
    m.set_preferred_location(Location::none());
    EXPECT_TRUE(m.preferred_location().is_none());
    EXPECT_FALSE(m.is_accessed_by(Location::device(dev1_)));
    m.add_accessed_by(Location::device(dev1_));
    EXPECT_TRUE(m.is_accessed_by(Location::device(1)));
    EXPECT_FALSE(m.is_accessed_by(Location::device(0)));
    m.remove_accessed_by(Location::device(1));
    EXPECT_FALSE(m.is_accessed_by(Location::device(1)));
    m.advise(CUCORE_ADVICE_SET_ACCESSED_BY, Location::device(0));
    EXPECT_TRUE(m.is_accessed_by(Location::device(0)));
    EXPECT_TRUE(m.last_prefetch_location().is_none());
    m.prefetch(Location::device(1), s_);
    EXPECT_EQ(m.last_prefetch_location(), Location::device(1));
    m.prefetch(Location::host(), s_);
    EXPECT_EQ(m.last_prefetch_location(), Location::host());
    m.fill(std::uint8_t{0x42}, s_);
    m.discard(s_);
    EXPECT_EQ(read(m), Bytes(4096, fake::kDiscardedByte));
    m.discard_prefetch(Location::device(0), s_);
    EXPECT_EQ(m.last_prefetch_location(), Location::device(0));
    // Not managed memory: INVALID_ARGUMENT from every call.
    const cucore::Buffer d = cucore::MemoryResource::device_default(dev_).allocate(64, s_);
    EXPECT_THROWS_STATUS(d.read_mostly(), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(d.set_read_mostly(true), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(d.preferred_location(), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(d.is_accessed_by(Location::device(0)), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(d.last_prefetch_location(), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(d.prefetch(Location::device(0), s_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(d.discard(s_), CUCORE_ERROR_INVALID_ARGUMENT);
}

}  // namespace
