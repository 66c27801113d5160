// The C++ façade of buffers against the fake driver: what a Buffer says about
// itself, views and copies.
#include <cstring>
#include <vector>

#include "memory_facade_support.hpp"

namespace {

class BufferFacadeTest : public MemoryFacadeFixture {};

TEST_F(BufferFacadeTest, BuffersDescribeThemselves) {
    const cucore::MemoryResource managed = cucore::MemoryResource::managed(dev_);
    const cucore::MemoryResource pool = cucore::MemoryResource::device_default(dev_);
    const cucore::Buffer m = managed.allocate(256, s_);
    const cucore::Buffer d = pool.allocate(256, s_);
    EXPECT_TRUE(m.is_managed());
    EXPECT_TRUE(m.is_host_accessible());
    EXPECT_TRUE(m.is_device_accessible());
    EXPECT_FALSE(d.is_managed());
    EXPECT_FALSE(d.is_host_accessible());
    EXPECT_TRUE(d.is_device_accessible());
    EXPECT_EQ(d.deallocation_stream(), s_);
    const cucore::Stream other = dev_.create_stream();
    d.set_deallocation_stream(other);
    EXPECT_EQ(d.deallocation_stream(), other);
    d.close();
    EXPECT_FALSE(d.deallocation_stream()) << "closed: none";
    // copy_to(stream): a new buffer from the same resource with the same bytes.
    const Bytes data = pattern(256, 4);
    m.copy_from_host(data, s_);
    const cucore::Buffer copy = m.copy_to(s_);
    EXPECT_NE(copy, m);
    EXPECT_EQ(copy.memory_resource(), managed);
    EXPECT_TRUE(copy.is_managed());
    EXPECT_EQ(read(copy), data);
    EXPECT_THROWS_STATUS(cucore::Buffer().is_managed(), CUCORE_ERROR_INVALID_HANDLE);
}

}  // namespace
