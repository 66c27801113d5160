// The C++ façade of host locations, batched and stream memory operations
// against the fake driver.
#include <cstdint>
#include <cstring>
#include <vector>

#include "../fake_driver/memory_operations.hpp"
#include "memory_facade_support.hpp"

namespace {

class MemoryOperationsFacadeTest : public MemoryFacadeFixture {};

TEST_F(MemoryOperationsFacadeTest, HostIsALocation) {
    EXPECT_EQ(cucore::Location(cucore::Host()), cucore::Location::host());
    EXPECT_EQ(cucore::Location(cucore::Host(3)), cucore::Location::host_numa(3));
    EXPECT_EQ(cucore::Location(cucore::Host::numa_current()), cucore::Location::host_numa_current());
    EXPECT_NE(cucore::Host(1), cucore::Host(2));
    EXPECT_GE(cucore::Host::current_numa_id(), 0);
    const cucore::MemoryResource managed = cucore::MemoryResource::managed(dev_);
    const cucore::Buffer m = managed.allocate(4096, s_);
    m.prefetch(cucore::Host(), s_);
    s_.synchronize();
    EXPECT_EQ(m.last_prefetch_location(), cucore::Location::host());
    cucore::prefetch_batch(s_, {m}, cucore::Location::device(dev1_));
    s_.synchronize();
    EXPECT_EQ(m.last_prefetch_location(), cucore::Location::device(1));
    cucore::discard_prefetch_batch(s_, {m}, cucore::Host::numa_current());
    s_.synchronize();
    EXPECT_EQ(m.last_prefetch_location(), cucore::Location::host_numa_current());
    cucore::discard_batch(s_, {m});
    EXPECT_EQ(read(m), Bytes(4096, fake::kDiscardedByte));
}

TEST_F(MemoryOperationsFacadeTest, CopyBatchBothForms) {
    const cucore::MemoryResource pool = cucore::MemoryResource::device_default(dev_);
    const cucore::Buffer a = pool.allocate(512, s_), b = pool.allocate(512, s_), c = pool.allocate(512, s_);
    a.copy_from_host(pattern(512, 21), s_);
    std::vector<std::uint8_t> host(64, 0);
    cucore::CopyOptions any_order;
    any_order.src_access_order = cucore::MemcpySrcAccessOrder::any;
    cucore::copy_batch(s_, {cucore::BatchCopy{cucore::CopySide(a), cucore::CopySide(b), 512, 0},
                            cucore::BatchCopy{cucore::CopySide(a, 64), cucore::CopySide::pointer(host.data()), 64, 1}},
                       {cucore::CopyOptions{}, any_order});
    s_.synchronize();
    EXPECT_EQ(read(b), pattern(512, 21));
    const Bytes expected = pattern(512, 21);
    EXPECT_EQ(Bytes(host.begin(), host.end()), Bytes(expected.begin() + 64, expected.begin() + 128));
    EXPECT_EQ(fake::last_copy_batch().attributes.at(1).srcAccessOrder, CU_MEMCPY_SRC_ACCESS_ORDER_ANY);
    cucore::copy_batch(s_, std::vector<cucore::Buffer>{b}, std::vector<cucore::Buffer>{c});
    EXPECT_EQ(read(c), pattern(512, 21));
    EXPECT_THROWS_STATUS(cucore::copy_batch(s_, std::vector<cucore::Buffer>{b}, std::vector<cucore::Buffer>{}),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(cucore::copy_batch(s_, {cucore::BatchCopy{cucore::CopySide(a, 500), cucore::CopySide(b), 64}}),
                         CUCORE_ERROR_INVALID_ARGUMENT);
}

TEST_F(MemoryOperationsFacadeTest, Copy3DBatch) {
    const cucore::MemoryResource pool = cucore::MemoryResource::device_default(dev_);
    const cucore::Buffer image = pool.allocate(64 * 8, s_), packed = pool.allocate(16 * 4, s_);
    image.copy_from_host(pattern(64 * 8, 31), s_);
    std::vector<std::uint8_t> host(8 * 2, 0);
    cucore::copy_3d_batch(s_, {cucore::to_c(cucore::MemoryRegion(packed, 16), cucore::MemoryRegion(image, 64).at(4, 2),
                                            {16, 4, 1}),
                               cucore::to_c(cucore::MemoryRegion::host(host.data(), 8),
                                            cucore::MemoryRegion(image, 64).at(0, 7), {8, 1, 1})});
    s_.synchronize();
    const Bytes pixels = pattern(64 * 8, 31), got = read(packed);
    for (std::size_t row = 0; row < 4; ++row)
        for (std::size_t x = 0; x < 16; ++x) ASSERT_EQ(got[row * 16 + x], pixels[(2 + row) * 64 + 4 + x]);
    EXPECT_EQ(Bytes(host.begin(), host.begin() + 8), Bytes(pixels.begin() + 7 * 64, pixels.begin() + 7 * 64 + 8));
    EXPECT_THROWS_STATUS(cucore::copy_3d_batch(s_, {cucore::to_c(cucore::MemoryRegion(packed, 16),
                                                                 cucore::MemoryRegion(image, 64).at(60, 0), {16, 1, 1})}),
                         CUCORE_ERROR_INVALID_ARGUMENT);
}

TEST_F(MemoryOperationsFacadeTest, StreamMemoryOperations) {
    const cucore::Buffer flag = cucore::MemoryResource::device_default(dev_).allocate(64, s_);
    flag.fill(std::uint32_t{0}, s_);
    cucore::write_value_32(s_, flag, 0, 41u);
    cucore::write_value_64(s_, flag, 8, 0xABCDEF0123ull);
    const int unmet = fake::unmet_waits();
    cucore::wait_value_32(s_, flag, 0, 41u, cucore::WaitCondition::eq);
    cucore::wait_value_64(s_, flag, 8, 1u);
    cucore::memory_barrier(s_, cucore::MemoryBarrierScope::device);
    cucore::flush_remote_writes(s_);
    cucore::batch_memory_ops(s_, {cucore::StreamMemoryOp::write_value_32(flag, 4, 7u),
                                  cucore::StreamMemoryOp::wait_value_32(flag, 4, 7u, cucore::WaitCondition::and_),
                                  cucore::StreamMemoryOp::memory_barrier()});
    EXPECT_EQ(fake::unmet_waits(), unmet);
    const Bytes got = read(flag);
    std::uint32_t v0, v1;
    std::uint64_t v2;
    std::memcpy(&v0, got.data(), 4);
    std::memcpy(&v1, got.data() + 4, 4);
    std::memcpy(&v2, got.data() + 8, 8);
    EXPECT_EQ(v0, 41u);
    EXPECT_EQ(v1, 7u);
    EXPECT_EQ(v2, 0xABCDEF0123ull);
    EXPECT_THROWS_STATUS(cucore::write_value_64(s_, flag, 4, 1u), CUCORE_ERROR_INVALID_ARGUMENT);
}

}  // namespace
