// Virtual memory resources against the fake driver, whose VMM is real: physical
// memory is a memfd mapped into reserved address ranges, so a grow that moves
// the memory keeps its bytes only if the library remaps the same physical
// memory. Every test ends with the driver's VMM counters back where they were.
#include <cstring>
#include <string>

#include "memory_support.hpp"

namespace {

constexpr uint64_t kGran = fake::kVmmRecommendedGranularity;  // the default rounding

class VirtualMemoryTest : public MemoryFixture {
  protected:
    cucore_memory_resource_t *create(const cucore_virtual_memory_resource_options_t *options = nullptr,
                                     cucore_device_t *device = nullptr) {
        cucore_memory_resource_t *r = nullptr;
        EXPECT_EQ(cucore_virtual_memory_resource_create(device ? device : d0_, options, &r), CUCORE_SUCCESS)
            << message();
        return r;
    }
    // Reserves [address, address + size) behind the library's back (so a grow
    // cannot extend into it); returns whether it got exactly that range.
    bool block(uint64_t address, uint64_t size) {
        fake::Uncounted quiet;
        CUdeviceptr got = 0;
        if (fake::table().cuMemAddressReserve(&got, size, 0, address, 0) != CUDA_SUCCESS) return false;
        blocked_.push_back({got, size});
        return got == address;
    }
    void TearDown() override {
        {
            fake::Uncounted quiet;
            for (auto &[address, size] : blocked_) fake::table().cuMemAddressFree(address, size);
        }
        MemoryFixture::TearDown();
    }
    std::vector<std::pair<CUdeviceptr, uint64_t>> blocked_;
};

TEST_F(VirtualMemoryTest, AVirtualResourceMapsReadWriteDeviceMemory) {
    cucore_memory_resource_t *r = create();
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(kind_of(r), CUCORE_MEMORY_RESOURCE_VIRTUAL);
    int id = 9, device_ok = 9, host_ok = 9;
    ASSERT_EQ(cucore_memory_resource_device_id(r, &id), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_accessibility(r, &device_ok, &host_ok), CUCORE_SUCCESS);
    EXPECT_EQ(id, 0);
    EXPECT_EQ(device_ok, 1);
    EXPECT_EQ(host_ok, 0);
    int managed = 9;
    ASSERT_EQ(cucore_memory_resource_is_managed(r, &managed), CUCORE_SUCCESS);
    EXPECT_EQ(managed, 0);
    EXPECT_EQ(pool_of(r), nullptr);
    const fake::Counters before = fake::counters();

    cucore_buffer_t *b = alloc(r, 1000, nullptr);  // synchronous: no stream needed
    ASSERT_NE(b, nullptr);
    const fake::Counters during = fake::counters();
    EXPECT_EQ(during.vmm_handles, before.vmm_handles + 1);
    EXPECT_EQ(during.reservations, before.reservations + 1);
    EXPECT_EQ(during.mappings, before.mappings + 1);
    EXPECT_EQ(size_of(b), 1000u);
    EXPECT_EQ(accessibility(b), (std::vector<int>{1, 0, 0}));
    const uint64_t a = address_of(b);
    EXPECT_EQ(fake::vmm_access(a, 0), CU_MEM_ACCESS_FLAGS_PROT_READWRITE) << "the device may use it";
    EXPECT_EQ(fake::vmm_access(a + kGran - 1, 0), CU_MEM_ACCESS_FLAGS_PROT_READWRITE) << "all of the rounded size";
    EXPECT_EQ(fake::vmm_access(a, 1), CU_MEM_ACCESS_FLAGS_PROT_NONE) << "other devices only when granted";
    const CUmemAllocationProp prop = fake::vmm_prop(a);
    EXPECT_EQ(prop.type, CU_MEM_ALLOCATION_TYPE_PINNED);
    EXPECT_EQ(prop.location.type, CU_MEM_LOCATION_TYPE_DEVICE);
    EXPECT_EQ(prop.location.id, 0);
    EXPECT_EQ(prop.requestedHandleTypes, CU_MEM_HANDLE_TYPE_NONE);
    const Bytes data = pattern(1000, 5);
    write(b, 0, data);
    EXPECT_EQ(read_all(b), data);
    cucore_stream_t *dealloc = s1_;
    ASSERT_EQ(cucore_buffer_deallocation_stream(b, &dealloc), CUCORE_SUCCESS);
    EXPECT_EQ(dealloc, nullptr) << "synchronous memory";
    // A stream may be given; it is not used.
    cucore_buffer_t *c = alloc(r, 10, s0_);
    ASSERT_NE(c, nullptr);
    cucore_buffer_release(c);
    cucore_buffer_release(b);
    const fake::Counters after = fake::counters();
    EXPECT_EQ(after.vmm_handles, before.vmm_handles);
    EXPECT_EQ(after.reservations, before.reservations);
    EXPECT_EQ(after.mappings, before.mappings);
    cucore_memory_resource_release(r);
}

TEST_F(VirtualMemoryTest, OptionsReachThePhysicalMemory) {
    struct Case {
        cucore_location_type_t type;
        int id;
        uint32_t shareable;
        CUmemLocationType want_type;
        int want_id;
    };
    const Case cases[] = {
        {CUCORE_LOCATION_DEVICE, 7, 0, CU_MEM_LOCATION_TYPE_DEVICE, 1},  // the resource's device; id ignored
        {CUCORE_LOCATION_HOST_NUMA, 1, 0, CU_MEM_LOCATION_TYPE_HOST_NUMA, 1},
        {CUCORE_LOCATION_HOST, 0, 1, CU_MEM_LOCATION_TYPE_HOST, 0},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(static_cast<int>(c.type));
        cucore_virtual_memory_resource_options_t o = CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT;
        o.location_type = c.type;
        o.location_id = c.id;
        o.posix_fd_shareable = c.shareable;
        cucore_memory_resource_t *r = create(&o, d1_);
        ASSERT_NE(r, nullptr);
        cucore_buffer_t *b = alloc(r, 64, nullptr);
        const CUmemAllocationProp prop = fake::vmm_prop(address_of(b));
        EXPECT_EQ(prop.location.type, c.want_type);
        if (c.want_type != CU_MEM_LOCATION_TYPE_HOST) {
            EXPECT_EQ(prop.location.id, c.want_id);
        }
        EXPECT_EQ(prop.requestedHandleTypes,
                  c.shareable ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE);
        EXPECT_EQ(fake::vmm_access(address_of(b), 1), CU_MEM_ACCESS_FLAGS_PROT_READWRITE) << "device 1's resource";
        int device_id = 9;
        ASSERT_EQ(cucore_buffer_device_id(b, &device_id), CUCORE_SUCCESS);
        EXPECT_EQ(device_id, 1);
        cucore_buffer_release(b);
        cucore_memory_resource_release(r);
    }
}

// "A zero field means default": a struct that is zero but for struct_size is the
// INIT macro and behaves as NULL options and as the defaults spelled out (the
// resource's device, the recommended granularity, read-write self access).
TEST_F(VirtualMemoryTest, ZeroedOptionsAreTheDefaults) {
    const cucore_virtual_memory_resource_options_t init = CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT;
    cucore_virtual_memory_resource_options_t zeroed;
    std::memset(&zeroed, 0, sizeof zeroed);
    zeroed.struct_size = sizeof zeroed;
    EXPECT_EQ(std::memcmp(&init, &zeroed, sizeof zeroed), 0) << "INIT is all zeros but struct_size";
    cucore_virtual_memory_resource_options_t spelled = zeroed;
    spelled.location_type = CUCORE_LOCATION_DEVICE;
    spelled.self_access = CUCORE_ACCESS_READ_WRITE;
    const cucore_virtual_memory_resource_options_t *cases[] = {&zeroed, nullptr, &spelled};
    for (const cucore_virtual_memory_resource_options_t *o : cases) {
        SCOPED_TRACE(o == nullptr ? "NULL" : o == &zeroed ? "zeroed" : "spelled out");
        cucore_memory_resource_t *r = create(o, d1_);
        ASSERT_NE(r, nullptr);
        cucore_buffer_t *b = alloc(r, 1000, nullptr);
        ASSERT_NE(b, nullptr);
        const uint64_t a = address_of(b);
        const CUmemAllocationProp prop = fake::vmm_prop(a);
        EXPECT_EQ(prop.location.type, CU_MEM_LOCATION_TYPE_DEVICE);
        EXPECT_EQ(prop.location.id, 1) << "the resource's device";
        EXPECT_EQ(prop.requestedHandleTypes, CU_MEM_HANDLE_TYPE_NONE);
        EXPECT_EQ(fake::vmm_access(a, 1), CU_MEM_ACCESS_FLAGS_PROT_READWRITE) << "read-write self access";
        EXPECT_EQ(fake::vmm_access(a + kGran - 1, 1), CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            << "rounded to the recommended granularity, not the minimum";
        EXPECT_EQ(fake::vmm_access(a, 0), CU_MEM_ACCESS_FLAGS_PROT_NONE) << "no other device";
        cucore_access_t access = CUCORE_ACCESS_NONE;
        ASSERT_EQ(cucore_memory_resource_peer_access(r, d1_, &access), CUCORE_SUCCESS);
        EXPECT_EQ(access, CUCORE_ACCESS_READ_WRITE);
        cucore_buffer_release(b);
        cucore_memory_resource_release(r);
    }
    // The minimum granularity is what the switch asks for: 1000 bytes take 64 KiB.
    cucore_virtual_memory_resource_options_t minimum = zeroed;
    minimum.minimum_granularity = 1;
    cucore_memory_resource_t *r = create(&minimum, d1_);
    cucore_buffer_t *b = alloc(r, 1000, nullptr);
    EXPECT_EQ(fake::vmm_access(address_of(b) + fake::kVmmMinimumGranularity - 1, 1), CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    EXPECT_EQ(fake::vmm_access(address_of(b) + fake::kVmmMinimumGranularity, 1), -1) << "nothing mapped beyond";
    cucore_buffer_release(b);
    cucore_memory_resource_release(r);
}

TEST_F(VirtualMemoryTest, PlacementAndRdmaOptionsReachTheDriver) {
    // A free, aligned range asked for by hint is where the buffer lands; the alignment is honoured. The hint is
    // a range the driver just gave out and took back, so it is free whatever other tests reserved.
    CUdeviceptr hint = 0;
    {
        fake::Uncounted quiet;
        ASSERT_EQ(fake::table().cuMemAddressReserve(&hint, kGran, 0, 0, 0), CUDA_SUCCESS);
        ASSERT_EQ(fake::table().cuMemAddressFree(hint, kGran), CUDA_SUCCESS);
    }
    cucore_virtual_memory_resource_options_t o = CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT;
    o.address_hint = hint;
    o.gpu_direct_rdma = 1;
    cucore_memory_resource_t *r = create(&o);
    cucore_buffer_t *b = alloc(r, 1000, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(address_of(b), static_cast<uint64_t>(hint)) << "the hinted range was free";
    EXPECT_EQ(fake::vmm_prop(address_of(b)).allocFlags.gpuDirectRDMACapable, 1);
    cucore_buffer_release(b);
    cucore_memory_resource_release(r);

    cucore_virtual_memory_resource_options_t aligned = CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT;
    aligned.address_alignment = uint64_t{1} << 30;
    r = create(&aligned);
    b = alloc(r, 1000, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(address_of(b) % aligned.address_alignment, 0u);
    EXPECT_EQ(fake::vmm_prop(address_of(b)).allocFlags.gpuDirectRDMACapable, 0);
    cucore_buffer_release(b);
    cucore_memory_resource_release(r);

    aligned.address_alignment = 3 << 20;
    cucore_memory_resource_t *bad = nullptr;
    EXPECT_EQ(cucore_virtual_memory_resource_create(d0_, &aligned, &bad), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("address_alignment"), std::string::npos) << message();
    EXPECT_EQ(bad, nullptr);
}

TEST_F(VirtualMemoryTest, SizesRoundToTheChosenGranularity) {
    // Recommended (default): 1000 bytes take 128 KiB, so growing to 100 KiB needs no new memory.
    cucore_memory_resource_t *r = create();
    cucore_buffer_t *b = alloc(r, 1000, nullptr);
    const uint64_t a = address_of(b);
    write(b, 0, pattern(1000, 1));
    fake::reset_calls();
    ASSERT_EQ(cucore_buffer_grow(b, 100 << 10), CUCORE_SUCCESS) << message();
    EXPECT_FALSE(called("cuMemCreate")) << "the granularity's slack holds it";
    EXPECT_EQ(address_of(b), a);
    EXPECT_EQ(size_of(b), uint64_t{100} << 10);
    EXPECT_EQ(read(b, 0, 1000), pattern(1000, 1));
    cucore_buffer_release(b);
    cucore_memory_resource_release(r);
    // Minimum: 1000 bytes take 64 KiB, so the same grow maps more memory.
    cucore_virtual_memory_resource_options_t o = CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT;
    o.minimum_granularity = 1;
    r = create(&o);
    b = alloc(r, 1000, nullptr);
    write(b, 0, pattern(1000, 2));
    fake::reset_calls();
    ASSERT_EQ(cucore_buffer_grow(b, 100 << 10), CUCORE_SUCCESS) << message();
    EXPECT_TRUE(called("cuMemCreate"));
    EXPECT_EQ(read(b, 0, 1000), pattern(1000, 2));
    const Bytes tail = pattern((100 << 10) - 1000, 3);
    write(b, 1000, tail);
    EXPECT_EQ(read(b, 1000, tail.size()), tail) << "the grown part is usable";
    cucore_buffer_release(b);
    cucore_memory_resource_release(r);
}

TEST_F(VirtualMemoryTest, GrowInPlaceWithinTheReservation) {
    cucore_virtual_memory_resource_options_t o = CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT;
    o.reserve_size = 8 * kGran;
    cucore_memory_resource_t *r = create(&o);
    const fake::Counters before = fake::counters();
    cucore_buffer_t *b = alloc(r, 2 * kGran - 100, nullptr);
    const uint64_t a = address_of(b);
    const Bytes head = pattern(2 * kGran - 100, 11);
    write(b, 0, head);
    fake::reset_calls();
    ASSERT_EQ(cucore_buffer_grow(b, 5 * kGran + 1), CUCORE_SUCCESS) << message();
    EXPECT_EQ(address_of(b), a) << "in place: the reservation holds it";
    EXPECT_EQ(size_of(b), 5 * kGran + 1);
    EXPECT_TRUE(called("cuMemcpyAsync")) << "one new allocation of the whole size, filled by a copy";
    fake::Counters now = fake::counters();
    EXPECT_EQ(now.reservations, before.reservations + 1) << "the staging range is given back";
    EXPECT_EQ(now.mappings, before.mappings + 1) << "one allocation per buffer";
    EXPECT_EQ(now.vmm_handles, before.vmm_handles + 1) << "the old allocation is released";
    EXPECT_EQ(fake::vmm_access(a + 5 * kGran, 0), CU_MEM_ACCESS_FLAGS_PROT_READWRITE) << "the new part is accessible";
    EXPECT_EQ(read(b, 0, head.size()), head) << "contents kept";
    const Bytes tail = pattern(5 * kGran + 1 - head.size(), 12);
    write(b, head.size(), tail);
    EXPECT_EQ(read(b, head.size(), tail.size()), tail);
    // Up to the whole reservation, still in place.
    ASSERT_EQ(cucore_buffer_grow(b, 8 * kGran), CUCORE_SUCCESS) << message();
    EXPECT_EQ(address_of(b), a);
    EXPECT_EQ(read(b, 0, head.size()), head);
    EXPECT_EQ(read(b, head.size(), tail.size()), tail);
    // Not below the size: a no-op without a driver call.
    fake::reset_calls();
    ASSERT_EQ(cucore_buffer_grow(b, kGran), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_buffer_grow(b, 8 * kGran), CUCORE_SUCCESS);
    EXPECT_EQ(fake::calls(), 0);
    EXPECT_EQ(size_of(b), 8 * kGran);
    cucore_buffer_release(b);
    now = fake::counters();
    EXPECT_EQ(now.reservations, before.reservations);
    EXPECT_EQ(now.mappings, before.mappings);
    EXPECT_EQ(now.vmm_handles, before.vmm_handles);
    cucore_memory_resource_release(r);
}

TEST_F(VirtualMemoryTest, GrowPastTheReservationMovesAndKeepsTheData) {
    cucore_memory_resource_t *r = create();
    const fake::Counters before = fake::counters();
    cucore_buffer_t *b = alloc(r, kGran, nullptr);
    const uint64_t a = address_of(b);
    const Bytes head = pattern(kGran, 31);
    write(b, 0, head);
    fake::reset_calls();
    ASSERT_EQ(cucore_buffer_grow(b, 3 * kGran - 7), CUCORE_SUCCESS) << message();
    const uint64_t moved = address_of(b);
    EXPECT_NE(moved, a) << "no room in the reservation: it moved";
    EXPECT_EQ(size_of(b), 3 * kGran - 7);
    EXPECT_TRUE(called("cuMemcpyAsync")) << "the contents are copied into the new allocation";
    EXPECT_EQ(read(b, 0, kGran), head) << "contents kept";
    EXPECT_EQ(fake::vmm_access(a, 0), -1) << "the old range is unmapped";
    EXPECT_EQ(fake::vmm_access(moved, 0), CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    EXPECT_EQ(fake::vmm_access(moved + 2 * kGran, 0), CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    const fake::Counters now = fake::counters();
    EXPECT_EQ(now.reservations, before.reservations + 1) << "the old range freed";
    EXPECT_EQ(now.mappings, before.mappings + 1);
    EXPECT_EQ(now.vmm_handles, before.vmm_handles + 1);
    const Bytes tail = pattern(2 * kGran - 7, 32);
    write(b, kGran, tail);
    EXPECT_EQ(read(b, kGran, tail.size()), tail);
    cucore_buffer_release(b);
    EXPECT_EQ(fake::counters().reservations, before.reservations);
    EXPECT_EQ(fake::counters().mappings, before.mappings);
    EXPECT_EQ(fake::counters().vmm_handles, before.vmm_handles);
    cucore_memory_resource_release(r);
}

TEST_F(VirtualMemoryTest, GrowErrorsLeaveTheBufferAsItWas) {
    cucore_memory_resource_t *r = create();
    cucore_buffer_t *b = alloc(r, kGran, nullptr);
    const uint64_t a = address_of(b);
    write(b, 0, pattern(kGran, 41));
    const fake::Counters before = fake::counters();
    // The driver out of memory: OUT_OF_MEMORY, nothing changed or leaked.
    fake::fail_entry("cuMemCreate", CUDA_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(cucore_buffer_grow(b, 4 * kGran), CUCORE_ERROR_OUT_OF_MEMORY);
    EXPECT_NE(message().find("cuMemCreate"), std::string::npos) << message();
    fake::fail_entry("");
    EXPECT_EQ(address_of(b), a);
    EXPECT_EQ(size_of(b), kGran);
    EXPECT_EQ(read(b, 0, kGran), pattern(kGran, 41));
    fake::Counters now = fake::counters();
    EXPECT_EQ(now.vmm_handles, before.vmm_handles);
    EXPECT_EQ(now.mappings, before.mappings);
    EXPECT_EQ(now.reservations, before.reservations);
    // Absurd sizes: OUT_OF_MEMORY before the driver.
    fake::reset_calls();
    EXPECT_EQ(cucore_buffer_grow(b, UINT64_MAX), CUCORE_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(fake::calls(), 0);
    // Views would be left at the old address.
    cucore_buffer_t *view = nullptr;
    ASSERT_EQ(cucore_buffer_view(b, 0, 16, &view), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_buffer_grow(b, 2 * kGran), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("views"), std::string::npos) << message();
    EXPECT_EQ(cucore_buffer_grow(view, 2 * kGran), CUCORE_ERROR_INVALID_ARGUMENT) << "a view does not grow";
    cucore_buffer_release(view);
    // Without the view it grows (the failures left it intact).
    ASSERT_EQ(cucore_buffer_grow(b, 2 * kGran), CUCORE_SUCCESS) << message();
    EXPECT_EQ(read(b, 0, kGran), pattern(kGran, 41));
    // Closed.
    ASSERT_EQ(cucore_buffer_close(b, nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_buffer_grow(b, 4 * kGran), CUCORE_ERROR_INVALID_STATE);
    cucore_buffer_release(b);
    // Other kinds of memory do not grow.
    cucore_memory_resource_t *pool = nullptr, *legacy = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_get_default(d0_, &pool), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_legacy_pinned_memory_resource_create(d0_, &legacy), CUCORE_SUCCESS);
    cucore_buffer_t *p = alloc(pool, 64, s0_), *h = alloc(legacy, 64, nullptr), *f = nullptr;
    ASSERT_EQ(cucore_buffer_from_handle(0x10000, 64, d0_, nullptr, nullptr, &f), CUCORE_SUCCESS);
    for (cucore_buffer_t *x : {p, h, f}) {
        fake::reset_calls();
        EXPECT_EQ(cucore_buffer_grow(x, 1 << 20), CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_NE(message().find("virtual memory"), std::string::npos) << message();
        EXPECT_EQ(size_of(x), 64u);
        EXPECT_EQ(fake::calls(), 0);
        cucore_buffer_release(x);
    }
    cucore_memory_resource_release(legacy);
    cucore_memory_resource_release(pool);
    cucore_memory_resource_release(r);
}

TEST_F(VirtualMemoryTest, PeerAccessCoversLiveAndFutureMappings) {
    cucore_memory_resource_t *r = create();
    cucore_buffer_t *a = alloc(r, kGran, nullptr);
    cucore_access_t access = CUCORE_ACCESS_NONE;
    ASSERT_EQ(cucore_memory_resource_peer_access(r, d0_, &access), CUCORE_SUCCESS);
    EXPECT_EQ(access, CUCORE_ACCESS_READ_WRITE) << "the own device: self_access";
    ASSERT_EQ(cucore_memory_resource_peer_access(r, d1_, &access), CUCORE_SUCCESS);
    EXPECT_EQ(access, CUCORE_ACCESS_NONE);
    ASSERT_EQ(cucore_memory_resource_set_peer_access(r, d1_, CUCORE_ACCESS_READ), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::vmm_access(address_of(a), 1), CU_MEM_ACCESS_FLAGS_PROT_READ) << "the live mapping";
    EXPECT_EQ(fake::vmm_access(address_of(a), 0), CU_MEM_ACCESS_FLAGS_PROT_READWRITE) << "unchanged";
    ASSERT_EQ(cucore_memory_resource_peer_access(r, d1_, &access), CUCORE_SUCCESS);
    EXPECT_EQ(access, CUCORE_ACCESS_READ);
    cucore_buffer_t *b = alloc(r, kGran, nullptr);
    EXPECT_EQ(fake::vmm_access(address_of(b), 1), CU_MEM_ACCESS_FLAGS_PROT_READ) << "a new mapping";
    // A grow's new mappings too.
    ASSERT_TRUE(block(address_of(a) + kGran, kGran));
    ASSERT_EQ(cucore_buffer_grow(a, 2 * kGran), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::vmm_access(address_of(a), 1), CU_MEM_ACCESS_FLAGS_PROT_READ);
    EXPECT_EQ(fake::vmm_access(address_of(a) + kGran, 1), CU_MEM_ACCESS_FLAGS_PROT_READ);
    ASSERT_EQ(cucore_memory_resource_set_peer_access(r, d1_, CUCORE_ACCESS_READ_WRITE), CUCORE_SUCCESS);
    EXPECT_EQ(fake::vmm_access(address_of(b), 1), CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    ASSERT_EQ(cucore_memory_resource_set_peer_access(r, d1_, CUCORE_ACCESS_NONE), CUCORE_SUCCESS);
    EXPECT_EQ(fake::vmm_access(address_of(a), 1), CU_MEM_ACCESS_FLAGS_PROT_NONE);
    EXPECT_EQ(fake::vmm_access(address_of(b), 1), CU_MEM_ACCESS_FLAGS_PROT_NONE);
    ASSERT_EQ(cucore_memory_resource_peer_access(r, d1_, &access), CUCORE_SUCCESS);
    EXPECT_EQ(access, CUCORE_ACCESS_NONE);
    // The own device keeps its access.
    fake::reset_calls();
    EXPECT_EQ(cucore_memory_resource_set_peer_access(r, d0_, CUCORE_ACCESS_NONE), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_memory_resource_set_peer_access(r, d1_, static_cast<cucore_access_t>(2)),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(fake::calls(), 0);
    EXPECT_EQ(fake::vmm_access(address_of(a), 0), CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    cucore_buffer_release(a);
    cucore_buffer_release(b);
    cucore_memory_resource_release(r);
}

TEST_F(VirtualMemoryTest, ReadOnlySelfAccess) {
    cucore_virtual_memory_resource_options_t o = CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT;
    o.self_access = CUCORE_ACCESS_READ;
    cucore_memory_resource_t *r = create(&o);
    cucore_buffer_t *b = alloc(r, 64, nullptr);
    EXPECT_EQ(fake::vmm_access(address_of(b), 0), CU_MEM_ACCESS_FLAGS_PROT_READ);
    cucore_access_t access = CUCORE_ACCESS_NONE;
    ASSERT_EQ(cucore_memory_resource_peer_access(r, d0_, &access), CUCORE_SUCCESS);
    EXPECT_EQ(access, CUCORE_ACCESS_READ);
    cucore_buffer_release(b);
    cucore_memory_resource_release(r);
}

TEST_F(VirtualMemoryTest, NotSupportedWithoutVirtualMemoryManagement) {
    fake::set_attribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0, 0);
    cucore_memory_resource_t *r = reinterpret_cast<cucore_memory_resource_t *>(0x1);
    EXPECT_EQ(cucore_virtual_memory_resource_create(d0_, nullptr, &r), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(r, nullptr);
    EXPECT_NE(message().find("virtual memory"), std::string::npos) << message();
    // Device 1 still has it.
    ASSERT_EQ(cucore_virtual_memory_resource_create(d1_, nullptr, &r), CUCORE_SUCCESS) << message();
    cucore_memory_resource_release(r);
}

}  // namespace
