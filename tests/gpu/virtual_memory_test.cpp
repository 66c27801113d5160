// Virtual memory resources on a real GPU: buffers are physical memory mapped
// into reserved address ranges; they take data, grow in place within their
// reservation and, when the next addresses are taken, by moving their physical
// memory to a new range (no copy), keeping every byte. Access rights are read
// back through the raw driver (cuMemGetAccess).
#include <cstdint>
#include <cstdio>

#include "memory_gpu.hpp"

namespace {

using gpu::Bytes;
using gpu::cu;
using gpu::kMiB;
using gpu::pattern;
using gpu::same_bytes;

class VirtualMemoryGpuTest : public gpu::MemoryGpuTest {
protected:
    void SetUp() override {
        gpu::MemoryGpuTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        // The granularity libcucore rounds to by default (recommended, device memory).
        CUmemAllocationProp prop{};
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = cu_dev_;
        size_t g = 0;
        const CUresult r = cu().MemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
        if (r == CUDA_ERROR_NOT_SUPPORTED) GTEST_SKIP() << "no virtual memory management: " << raw::error_name(r);
        CU_ASSERT_OK(r);
        gran_ = g;
    }
    void TearDown() override {
        if (blocker_ != 0) {
            gpu::ScopedContext scope(primary_);
            CU_EXPECT_OK(cu().MemAddressFree(blocker_, blocker_size_));
        }
        blocker_ = 0;
        gpu::MemoryGpuTest::TearDown();
    }
    cucore_memory_resource_t *create(const cucore_virtual_memory_resource_options_t *o = nullptr,
                                     cucore_device_t *dev = nullptr) {
        cucore_memory_resource_t *r = nullptr;
        last_status_ = cucore_virtual_memory_resource_create(dev != nullptr ? dev : dev_, o, &r);
        return r;
    }
    // The access `device` has to the mapping at `address` (raw cuMemGetAccess).
    unsigned long long raw_access(std::uint64_t address, int device) {
        CUmemLocation location{};
        location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        location.id = device;
        unsigned long long flags = 0xFF;
        gpu::ScopedContext scope(primary_);
        const CUresult r = cu().MemGetAccess(&flags, &location, static_cast<CUdeviceptr>(address));
        EXPECT_EQ(r, CUDA_SUCCESS) << "cuMemGetAccess -> " << raw::error_name(r);
        return flags;
    }
    // Takes the addresses [address, address + size) so a grow cannot extend
    // into them; returns whether the driver gave exactly that range.
    bool block(std::uint64_t address, std::uint64_t size) {
        gpu::ScopedContext scope(primary_);
        CUdeviceptr got = 0;
        if (cu().MemAddressReserve(&got, static_cast<size_t>(size), 0, static_cast<CUdeviceptr>(address), 0) !=
            CUDA_SUCCESS)
            return false;
        if (got != address) {
            cu().MemAddressFree(got, static_cast<size_t>(size));
            return false;
        }
        blocker_ = got;
        blocker_size_ = static_cast<size_t>(size);
        return true;
    }
    // Writes `data` at byte 0 of `b` through libcucore and checks it through the raw driver.
    void fill_and_check(cucore_buffer_t *b, const Bytes &data) {
        write(b, data);
        EXPECT_TRUE(same_bytes(raw_read(gpu::address_of(b), data.size()), data));
    }

    std::uint64_t gran_ = 0;
    cucore_status_t last_status_ = CUCORE_SUCCESS;
    CUdeviceptr blocker_ = 0;
    size_t blocker_size_ = 0;
};

TEST_F(VirtualMemoryGpuTest, AllocateWriteReadAndTheOwnDevicesAccess) {
    cucore_memory_resource_t *r = create();
    CUCORE_SKIP_IF_NOT_SUPPORTED(last_status_, "virtual memory management");
    CUCORE_ASSERT_OK(last_status_);
    cucore_memory_resource_kind_t kind = CUCORE_MEMORY_RESOURCE_UNSET;
    CUCORE_EXPECT_OK(cucore_memory_resource_kind(r, &kind));
    EXPECT_EQ(kind, CUCORE_MEMORY_RESOURCE_VIRTUAL);
    cucore_access_t access = CUCORE_ACCESS_NONE;
    CUCORE_EXPECT_OK(cucore_memory_resource_peer_access(r, dev_, &access));
    EXPECT_EQ(access, CUCORE_ACCESS_READ_WRITE) << "the own device";

    const std::uint64_t n = 3 * kMiB + 7;
    cucore_buffer_t *b = alloc(r, n, nullptr);  // synchronous: no stream
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(gpu::size_of(b), n);
    const std::uint64_t address = gpu::address_of(b);
    EXPECT_EQ(address % gran_, 0u) << "mapped at a granularity boundary";
    EXPECT_EQ(raw_access(address, 0), static_cast<unsigned long long>(CU_MEM_ACCESS_FLAGS_PROT_READWRITE));
    EXPECT_EQ(pointer_attribute<int>(address, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL), 0);
    const Bytes data = pattern(static_cast<std::size_t>(n), 51);
    fill_and_check(b, data);
    const Bytes raw_data = pattern(static_cast<std::size_t>(n), 52);
    raw_write(address, raw_data);
    EXPECT_TRUE(same_bytes(read(b), raw_data));
    CUCORE_ASSERT_OK(cucore_buffer_fill(b, 0x2D, 1, s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_TRUE(same_bytes(raw_read(address, static_cast<std::size_t>(n)), Bytes(static_cast<std::size_t>(n), 0x2D)));
    // Copies to and from pool memory.
    cucore_memory_resource_t *pool = nullptr;
    CUCORE_ASSERT_OK(cucore_device_memory_resource_get_default(dev_, &pool));
    cucore_buffer_t *p = alloc(pool, n, s_);
    ASSERT_NE(p, nullptr);
    CUCORE_ASSERT_OK(cucore_buffer_copy_from_host(p, 0, data.data(), n, s_));
    CUCORE_ASSERT_OK(cucore_buffer_copy(b, p, s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_TRUE(same_bytes(raw_read(address, data.size()), data));
    cucore_buffer_release(p);
    cucore_memory_resource_release(pool);
    CUCORE_EXPECT_OK(cucore_buffer_release(b));
    CUCORE_EXPECT_OK(cucore_memory_resource_release(r));
}

TEST_F(VirtualMemoryGpuTest, GrowInPlaceWithinTheReservation) {
    cucore_virtual_memory_resource_options_t o = CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT;
    o.reserve_size = 4 * gran_;
    cucore_memory_resource_t *r = create(&o);
    CUCORE_SKIP_IF_NOT_SUPPORTED(last_status_, "virtual memory management");
    CUCORE_ASSERT_OK(last_status_);
    cucore_buffer_t *b = alloc(r, gran_, nullptr);
    ASSERT_NE(b, nullptr);
    const std::uint64_t address = gpu::address_of(b);
    const Bytes head = pattern(static_cast<std::size_t>(gran_), 53);
    fill_and_check(b, head);
    CUCORE_ASSERT_OK(cucore_buffer_grow(b, 3 * gran_ + 11));
    EXPECT_EQ(gpu::address_of(b), address) << "within the reservation: in place";
    EXPECT_EQ(gpu::size_of(b), 3 * gran_ + 11);
    EXPECT_TRUE(same_bytes(read(b, 0, gran_), head)) << "contents kept";
    EXPECT_EQ(raw_access(address + 3 * gran_, 0), static_cast<unsigned long long>(CU_MEM_ACCESS_FLAGS_PROT_READWRITE))
        << "the grown part is accessible";
    const Bytes tail = pattern(static_cast<std::size_t>(2 * gran_ + 11), 54);
    write(b, tail, gran_);
    EXPECT_TRUE(same_bytes(raw_read(address + gran_, tail.size()), tail));
    EXPECT_TRUE(same_bytes(raw_read(address, head.size()), head));
    // Up to the whole reservation.
    CUCORE_ASSERT_OK(cucore_buffer_grow(b, 4 * gran_));
    EXPECT_EQ(gpu::address_of(b), address);
    EXPECT_TRUE(same_bytes(read(b, 0, gran_), head));
    CUCORE_EXPECT_OK(cucore_buffer_release(b));
    CUCORE_EXPECT_OK(cucore_memory_resource_release(r));
}

TEST_F(VirtualMemoryGpuTest, GrowPastTheReservation) {
    // Mapped 1 granule of a 2-granule reservation, grown to 3: the new memory
    // straddles the reservation's end (extended in place if the next addresses
    // are free, else moved); either way every byte stays.
    cucore_virtual_memory_resource_options_t o = CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT;
    o.reserve_size = 2 * gran_;
    cucore_memory_resource_t *r = create(&o);
    CUCORE_SKIP_IF_NOT_SUPPORTED(last_status_, "virtual memory management");
    CUCORE_ASSERT_OK(last_status_);
    cucore_buffer_t *b = alloc(r, gran_, nullptr);
    ASSERT_NE(b, nullptr);
    const std::uint64_t address = gpu::address_of(b);
    const Bytes head = pattern(static_cast<std::size_t>(gran_), 55);
    fill_and_check(b, head);
    CUCORE_ASSERT_OK(cucore_buffer_grow(b, 3 * gran_));
    const std::uint64_t now = gpu::address_of(b);
    std::printf("[   INFO   ] grown past its reservation %s\n", now == address ? "in place" : "by moving");
    EXPECT_TRUE(same_bytes(read(b, 0, gran_), head));
    const Bytes all = pattern(static_cast<std::size_t>(3 * gran_), 56);
    fill_and_check(b, all);
    EXPECT_EQ(raw_access(now + 2 * gran_, 0), static_cast<unsigned long long>(CU_MEM_ACCESS_FLAGS_PROT_READWRITE));
    CUCORE_EXPECT_OK(cucore_buffer_release(b));
    CUCORE_EXPECT_OK(cucore_memory_resource_release(r));
}

TEST_F(VirtualMemoryGpuTest, GrowByRelocationKeepsEveryByte) {
    cucore_memory_resource_t *r = create();
    CUCORE_SKIP_IF_NOT_SUPPORTED(last_status_, "virtual memory management");
    CUCORE_ASSERT_OK(last_status_);
    cucore_buffer_t *b = alloc(r, 2 * gran_, nullptr);
    ASSERT_NE(b, nullptr);
    const std::uint64_t address = gpu::address_of(b);
    const Bytes head = pattern(static_cast<std::size_t>(2 * gran_), 57);
    fill_and_check(b, head);
    const bool blocked = block(address + 2 * gran_, 8 * gran_);
    if (!blocked) std::printf("[   INFO   ] the addresses after the buffer were not ours to block\n");
    CUCORE_ASSERT_OK(cucore_buffer_grow(b, 5 * gran_ - 3));
    const std::uint64_t moved = gpu::address_of(b);
    if (blocked) {
        EXPECT_NE(moved, address) << "the next addresses were taken: it had to move";
    }
    EXPECT_EQ(gpu::size_of(b), 5 * gran_ - 3);
    EXPECT_TRUE(same_bytes(read(b, 0, head.size()), head)) << "the same physical memory, remapped";
    EXPECT_TRUE(same_bytes(raw_read(moved, head.size()), head));
    EXPECT_EQ(raw_access(moved, 0), static_cast<unsigned long long>(CU_MEM_ACCESS_FLAGS_PROT_READWRITE));
    EXPECT_EQ(raw_access(moved + 4 * gran_, 0), static_cast<unsigned long long>(CU_MEM_ACCESS_FLAGS_PROT_READWRITE));
    const Bytes tail = pattern(static_cast<std::size_t>(3 * gran_ - 3), 58);
    write(b, tail, 2 * gran_);
    EXPECT_TRUE(same_bytes(read(b), [&] {
        Bytes all = head;
        all.insert(all.end(), tail.begin(), tail.end());
        return all;
    }()));
    // And again, now from the moved range.
    CUCORE_ASSERT_OK(cucore_buffer_grow(b, 7 * gran_));
    EXPECT_TRUE(same_bytes(read(b, 0, head.size()), head));
    EXPECT_TRUE(same_bytes(read(b, 2 * gran_, tail.size()), tail));
    CUCORE_EXPECT_OK(cucore_buffer_release(b));
    CUCORE_EXPECT_OK(cucore_memory_resource_release(r));
}

TEST_F(VirtualMemoryGpuTest, GrowRefusesOtherMemoryAndViews) {
    cucore_memory_resource_t *r = create();
    CUCORE_SKIP_IF_NOT_SUPPORTED(last_status_, "virtual memory management");
    CUCORE_ASSERT_OK(last_status_);
    cucore_buffer_t *b = alloc(r, gran_, nullptr);
    ASSERT_NE(b, nullptr);
    cucore_buffer_t *view = nullptr;
    CUCORE_ASSERT_OK(cucore_buffer_view(b, 0, 64, &view));
    CUCORE_EXPECT_STATUS(cucore_buffer_grow(b, 2 * gran_), CUCORE_ERROR_INVALID_STATE);
    CUCORE_EXPECT_STATUS(cucore_buffer_grow(view, 2 * gran_), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_buffer_release(view);
    cucore_memory_resource_t *pool = nullptr;
    CUCORE_ASSERT_OK(cucore_device_memory_resource_get_default(dev_, &pool));
    cucore_buffer_t *p = alloc(pool, 64, s_);
    CUCORE_EXPECT_STATUS(cucore_buffer_grow(p, 2 * gran_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(gpu::size_of(p), 64u);
    cucore_buffer_release(p);
    cucore_memory_resource_release(pool);
    CUCORE_EXPECT_OK(cucore_buffer_grow(b, 2 * gran_));  // without its view it grows
    cucore_buffer_release(b);
    cucore_memory_resource_release(r);
}

TEST_F(VirtualMemoryGpuTest, FacadeVirtualMemory) {
    cucore::Device dev = cucore::Device::get(0);
    cucore::Stream s = dev.create_stream();
    cucore::VirtualMemoryResourceOptions o;
    o.reserve_size = 4 * gran_;
    cucore::MemoryResource vmm;
    try {
        vmm = cucore::MemoryResource::virtual_memory(dev, o);
    } catch (const cucore::Error &e) {
        if (e.status() == CUCORE_ERROR_NOT_SUPPORTED) GTEST_SKIP() << e.what();
        throw;
    }
    EXPECT_EQ(vmm.peer_access(dev), CUCORE_ACCESS_READ_WRITE);
    const cucore::Buffer b = vmm.allocate(gran_);
    EXPECT_TRUE(b.is_device_accessible());
    EXPECT_FALSE(b.is_managed());
    EXPECT_FALSE(b.deallocation_stream());
    const Bytes data = pattern(static_cast<std::size_t>(gran_), 59);
    b.copy_from_host(data, s);
    b.grow(2 * gran_);
    Bytes got(static_cast<std::size_t>(gran_));
    b.copy_to_host(0, got, s);
    s.synchronize();
    EXPECT_TRUE(same_bytes(got, data));
    EXPECT_EQ(b.size(), 2 * gran_);
}

TEST_F(VirtualMemoryGpuTest, PeerAccessOnTwoDevices) {
    if (device_count_ < 2) GTEST_SKIP() << "needs 2 devices, this machine has " << device_count_;
    cucore_memory_resource_t *r = create();
    CUCORE_SKIP_IF_NOT_SUPPORTED(last_status_, "virtual memory management");
    CUCORE_ASSERT_OK(last_status_);
    cucore_device_t *dev1 = nullptr;
    CUCORE_ASSERT_OK(cucore_device_get(1, &dev1));
    cucore_buffer_t *a = alloc(r, gran_, nullptr);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(raw_access(gpu::address_of(a), 1), 0u) << "other devices get nothing by default";
    int can_access = 0;
    CUCORE_ASSERT_OK(cucore_device_can_access_peer(dev1, dev_, &can_access));
    if (!can_access) {
        CUCORE_EXPECT_STATUS(cucore_memory_resource_set_peer_access(r, dev1, CUCORE_ACCESS_READ_WRITE),
                             CUCORE_ERROR_NOT_SUPPORTED);
    } else {
        CUCORE_ASSERT_OK(cucore_memory_resource_set_peer_access(r, dev1, CUCORE_ACCESS_READ_WRITE));
        EXPECT_EQ(raw_access(gpu::address_of(a), 1),
                  static_cast<unsigned long long>(CU_MEM_ACCESS_FLAGS_PROT_READWRITE))
            << "the live mapping";
        cucore_buffer_t *b = alloc(r, gran_, nullptr);
        ASSERT_NE(b, nullptr);
        EXPECT_EQ(raw_access(gpu::address_of(b), 1),
                  static_cast<unsigned long long>(CU_MEM_ACCESS_FLAGS_PROT_READWRITE))
            << "a new mapping";
        cucore_access_t access = CUCORE_ACCESS_NONE;
        CUCORE_EXPECT_OK(cucore_memory_resource_peer_access(r, dev1, &access));
        EXPECT_EQ(access, CUCORE_ACCESS_READ_WRITE);
        // Device 1's stream writes device 0's virtual memory.
        cucore_stream_t *s1 = nullptr;
        CUCORE_ASSERT_OK(cucore_stream_create(dev1, nullptr, &s1));
        CUCORE_ASSERT_OK(cucore_buffer_fill(b, 0x4C, 1, s1));
        CUCORE_ASSERT_OK(cucore_stream_synchronize(s1));
        EXPECT_TRUE(same_bytes(read(b), Bytes(static_cast<std::size_t>(gran_), 0x4C)));
        cucore_stream_release(s1);
        CUCORE_ASSERT_OK(cucore_memory_resource_set_peer_access(r, dev1, CUCORE_ACCESS_NONE));
        EXPECT_EQ(raw_access(gpu::address_of(a), 1), 0u);
        EXPECT_EQ(raw_access(gpu::address_of(b), 1), 0u);
        cucore_buffer_release(b);
    }
    cucore_buffer_release(a);
    cucore_memory_resource_release(r);
    cucore_device_release(dev1);
}

} // namespace
