// The C++ façade of the new memory functions (cucore/memory.hpp, copy_3d.hpp,
// memory_user.hpp) against the fake driver: options default to the C *_INIT
// macros, every call forwards to the C ABI, failures throw cucore::Error with
// the C status, and user resources keep their object alive until the library
// destroys them.
#include <cucore.hpp>

#include <atomic>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "memory_support.hpp"

namespace {

using cucore::Location;

#define EXPECT_THROWS_STATUS(expr, expected)                                        \
    do {                                                                            \
        try {                                                                       \
            (void)(expr);                                                           \
            ADD_FAILURE() << #expr << " did not throw";                             \
        } catch (const cucore::Error &e) {                                          \
            EXPECT_EQ(e.status(), (expected)) << e.what();                          \
        }                                                                           \
    } while (0)

// ---- Options and locations (no driver) --------------------------------------------------

TEST(MemoryFacadeOptions, DefaultsAreTheCInitMacros) {
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

TEST(MemoryFacadeOptions, FieldsConvertToC) {
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

TEST(MemoryFacadeOptions, Locations) {
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

// ---- Against the fake driver -----------------------------------------------------------

class MemoryFacadeTest : public MemoryFixture {
  protected:
    void SetUp() override {
        MemoryFixture::SetUp();
        dev_ = cucore::Device::get(0);
        dev1_ = cucore::Device::get(1);
        s_ = dev_.create_stream();
    }
    void TearDown() override {
        s_.reset();
        dev_.reset();
        dev1_.reset();
        MemoryFixture::TearDown();
    }
    Bytes read(const cucore::Buffer &b) {
        Bytes out(static_cast<size_t>(b.size()));
        b.copy_to_host(out, s_);
        s_.synchronize();
        return out;
    }
    cucore::Device dev_, dev1_;
    cucore::Stream s_;
};

TEST_F(MemoryFacadeTest, FactoriesMakeEachKind) {
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

TEST_F(MemoryFacadeTest, BuffersDescribeThemselves) {
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

TEST_F(MemoryFacadeTest, PeerAccess) {
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

TEST_F(MemoryFacadeTest, VirtualMemoryGrows) {
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

TEST_F(MemoryFacadeTest, ManagedBufferAdviceAndPrefetch) {
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

TEST_F(MemoryFacadeTest, StridedCopies) {
    const cucore::Buffer image = cucore::MemoryResource::device_default(dev_).allocate(64 * 8, s_);
    const Bytes pixels = pattern(64 * 8, 12);
    image.copy_from_host(pixels, s_);
    // A 16 x 5 tile at byte 4 of row 2 into packed host rows.
    std::vector<std::uint8_t> tile(16 * 5, 0);
    cucore::copy_2d(cucore::MemoryRegion::host(tile.data(), 16), cucore::MemoryRegion(image, 64).at(4, 2), 16, 5, s_);
    s_.synchronize();
    for (std::size_t row = 0; row < 5; ++row)
        for (std::size_t x = 0; x < 16; ++x)
            ASSERT_EQ(tile[row * 16 + x], pixels[(2 + row) * 64 + 4 + x]) << "row " << row << " byte " << x;
    // 3D: 2 slices of 3 rows of 4 bytes from a host volume into the image's slices.
    const Bytes volume = pattern(2 * 3 * 4, 13);
    cucore::copy_3d(cucore::MemoryRegion(image, 64, 4, 8).at(1, 1, 0), cucore::MemoryRegion::host(volume.data(), 4, 3),
                    cucore::Extent3D{4, 3, 2}, s_);
    Bytes expected = pixels;
    for (std::size_t z = 0; z < 2; ++z)
        for (std::size_t y = 0; y < 3; ++y)
            for (std::size_t x = 0; x < 4; ++x) expected[8 + (z * 4 + 1 + y) * 64 + 1 + x] = volume[(z * 3 + y) * 4 + x];
    EXPECT_EQ(read(image), expected);
    // Errors are thrown with the C status.
    EXPECT_THROWS_STATUS(cucore::copy_2d(cucore::MemoryRegion::host(tile.data(), 16),
                                         cucore::MemoryRegion(image, 64).at(60, 0), 16, 1, s_),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(cucore::copy_2d(cucore::MemoryRegion::host(tile.data(), 16),
                                         cucore::MemoryRegion(image, 64).at(0, 8), 16, 1, s_),
                         CUCORE_ERROR_INVALID_ARGUMENT);
}

// ---- User resources ----------------------------------------------------------------------

struct Arena final : cucore::UserMemoryResource {
    struct Call {
        std::uint64_t address, size;
        cucore_stream_t *stream;
    };
    std::vector<Call> allocations, deallocations;
    int throw_kind = 0;  // 1: cucore::Error, 2: std::bad_alloc, 3: std::runtime_error
    int throw_free = 0;  // the same for deallocate (after freeing: the library never retries)
    std::uint64_t allocate(std::uint64_t size, const cucore::Stream &stream) override {
        if (throw_kind == 1) throw cucore::Error(CUCORE_ERROR_OUT_OF_MEMORY, 0, "arena full");
        if (throw_kind == 2) throw std::bad_alloc();
        if (throw_kind == 3) throw std::runtime_error("arena broken");
        const auto address = reinterpret_cast<std::uintptr_t>(new std::uint8_t[size]);
        allocations.push_back({address, size, stream.get()});
        return address;
    }
    void deallocate(std::uint64_t address, std::uint64_t size, const cucore::Stream &stream) override {
        deallocations.push_back({address, size, stream.get()});
        delete[] reinterpret_cast<std::uint8_t *>(address);
        if (throw_free == 1) throw cucore::Error(CUCORE_ERROR_INVALID_STATE, 0, "arena refuses");
        if (throw_free == 2) throw std::bad_alloc();
        if (throw_free == 3) throw std::runtime_error("arena broken");
    }
};

TEST_F(MemoryFacadeTest, UserResourceKeepsItsObjectUntilTheLastBuffer) {
    auto arena = std::make_shared<Arena>();
    std::weak_ptr<Arena> watch = arena;
    cucore::Buffer b;
    {
        const cucore::MemoryResource mr = cucore::MemoryResource::user(arena, {0, true, false, false});
        EXPECT_EQ(mr.kind(), CUCORE_MEMORY_RESOURCE_USER);
        EXPECT_EQ(mr.device_id(), 0);
        EXPECT_TRUE(mr.is_device_accessible());
        EXPECT_FALSE(mr.is_host_accessible());
        b = mr.allocate(64, s_);
        ASSERT_EQ(arena->allocations.size(), 1u);
        EXPECT_EQ(arena->allocations[0].size, 64u);
        EXPECT_EQ(arena->allocations[0].stream, s_.get()) << "the caller's stream";
        EXPECT_EQ(b.address(), arena->allocations[0].address);
        const cucore::Buffer unordered = mr.allocate(8);
        EXPECT_EQ(arena->allocations[1].stream, nullptr) << "no stream: an empty Stream";
    }
    ASSERT_EQ(arena->deallocations.size(), 1u) << "the stream-less buffer went with its scope";
    EXPECT_EQ(arena->deallocations[0].size, 8u);
    const Bytes data = pattern(64, 14);
    b.copy_from_host(data, s_);
    EXPECT_EQ(read(b), data);
    arena.reset();
    EXPECT_FALSE(watch.expired()) << "the library keeps the object while a buffer lives";
    b.reset();
    EXPECT_TRUE(watch.expired()) << "destroyed with the last buffer";
}

TEST_F(MemoryFacadeTest, UserResourceDeallocateGetsTheDeallocationStream) {
    auto arena = std::make_shared<Arena>();
    {
        const cucore::MemoryResource mr = cucore::MemoryResource::user(arena, cucore::UserMemoryTraits{});
        const cucore::Buffer b = mr.allocate(16, s_);
        const cucore::Buffer c = mr.allocate(16, s_);
        const cucore::Stream other = dev_.create_stream();
        c.close(other);
        ASSERT_EQ(arena->deallocations.size(), 1u);
        EXPECT_EQ(arena->deallocations[0].stream, other.get());
    }
    ASSERT_EQ(arena->deallocations.size(), 2u);
    EXPECT_EQ(arena->deallocations[1].stream, s_.get()) << "the allocation stream";
}

TEST_F(MemoryFacadeTest, UserResourceExceptionsBecomeStatuses) {
    auto arena = std::make_shared<Arena>();
    const cucore::MemoryResource mr = cucore::MemoryResource::user(arena, cucore::UserMemoryTraits{});
    arena->throw_kind = 1;
    EXPECT_THROWS_STATUS(mr.allocate(16, s_), CUCORE_ERROR_OUT_OF_MEMORY);
    arena->throw_kind = 2;
    EXPECT_THROWS_STATUS(mr.allocate(16, s_), CUCORE_ERROR_OUT_OF_MEMORY);
    arena->throw_kind = 3;
    EXPECT_THROWS_STATUS(mr.allocate(16, s_), CUCORE_ERROR_INTERNAL);
    arena->throw_kind = 0;
    EXPECT_EQ(mr.allocate(16, s_).size(), 16u);
    EXPECT_TRUE(arena->deallocations.size() == 1u);
}

// What the release error handler was told last.
struct ReleaseErrorLog {
    int calls = 0;
    cucore_status_t status = CUCORE_SUCCESS;
    std::string message;
};

TEST_F(MemoryFacadeTest, UserResourceDeallocateExceptionsAreReleaseErrors) {
    expects_release_errors_ = true;
    ReleaseErrorLog log;
    cucore_set_release_error_handler(
        [](cucore_status_t status, int, const char *message, void *self) {
            auto *seen = static_cast<ReleaseErrorLog *>(self);
            ++seen->calls;
            seen->status = status;
            seen->message = message;
        },
        &log);
    auto arena = std::make_shared<Arena>();
    const cucore::MemoryResource mr = cucore::MemoryResource::user(arena, cucore::UserMemoryTraits{});
    const std::uint64_t before = cucore::release_error_count();
    const struct {
        int kind;
        cucore_status_t status;
    } cases[] = {{1, CUCORE_ERROR_INVALID_STATE}, {2, CUCORE_ERROR_OUT_OF_MEMORY}, {3, CUCORE_ERROR_INTERNAL}};
    int n = 0;
    for (const auto &c : cases) {
        SCOPED_TRACE(c.kind);
        arena->throw_free = c.kind;
        cucore::Buffer b = mr.allocate(16, s_);
        EXPECT_NO_THROW(b.reset()) << "destructors and releases never throw";
        ++n;
        EXPECT_EQ(cucore::release_error_count(), before + n);
        EXPECT_EQ(log.calls, n);
        EXPECT_EQ(log.status, c.status);
        EXPECT_NE(log.message.find("deallocate callback"), std::string::npos) << log.message;
    }
    // close() reports it too, and does not throw.
    arena->throw_free = 1;
    const cucore::Buffer c = mr.allocate(16, s_);
    EXPECT_NO_THROW(c.close());
    EXPECT_EQ(cucore::release_error_count(), before + 4);
    EXPECT_EQ(log.status, CUCORE_ERROR_INVALID_STATE);
    arena->throw_free = 0;
    EXPECT_EQ(arena->deallocations.size(), 4u) << "each freed once";
}

TEST_F(MemoryFacadeTest, AFailedUserResourceCreateDropsTheObject) {
    auto arena = std::make_shared<Arena>();
    cucore::UserMemoryTraits bad;
    bad.device_id = -5;
    EXPECT_THROWS_STATUS(cucore::MemoryResource::user(arena, bad), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(arena.use_count(), 1) << "the library's reference was dropped";
    EXPECT_THROWS_STATUS(cucore::MemoryResource::user(std::shared_ptr<cucore::UserMemoryResource>(), bad),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(cucore::MemoryResource::user(nullptr, [](std::uint64_t, std::uint64_t, const cucore::Stream &) {},
                                                      cucore::UserMemoryTraits{}),
                         CUCORE_ERROR_INVALID_ARGUMENT);
}

TEST_F(MemoryFacadeTest, UserResourceFromCallables) {
    std::vector<std::uint64_t> freed;
    std::vector<std::unique_ptr<std::uint8_t[]>> blocks;
    {
        const cucore::MemoryResource mr = cucore::MemoryResource::user(
            [&blocks](std::uint64_t size, const cucore::Stream &) {
                blocks.emplace_back(new std::uint8_t[size]);
                return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(blocks.back().get()));
            },
            [&freed](std::uint64_t address, std::uint64_t, const cucore::Stream &) { freed.push_back(address); },
            {-1, false, true, false});
        EXPECT_EQ(mr.device_id(), -1);
        EXPECT_TRUE(mr.is_host_accessible());
        const cucore::Buffer b = mr.allocate(32, s_);
        EXPECT_TRUE(b.is_host_accessible());
        EXPECT_FALSE(b.is_device_accessible());
        std::memset(b.data(), 0x77, 32);
        EXPECT_EQ(read(b), Bytes(32, 0x77));
        EXPECT_TRUE(freed.empty());
    }
    ASSERT_EQ(freed.size(), 1u);
    EXPECT_EQ(freed[0], reinterpret_cast<std::uintptr_t>(blocks[0].get()));
}

struct CCounts {
    std::atomic<int> allocations{0}, deallocations{0}, destroyed{0};
};

TEST_F(MemoryFacadeTest, UserResourceFromCCallbacks) {
    CCounts counts;
    cucore_memory_resource_callbacks_t c{};
    c.struct_size = sizeof c;
    c.allocate = [](void *self, uint64_t size, cucore_stream_t *, uint64_t *address) {
        ++static_cast<CCounts *>(self)->allocations;
        *address = reinterpret_cast<std::uintptr_t>(new std::uint8_t[size]);
        return CUCORE_SUCCESS;
    };
    c.deallocate = [](void *self, uint64_t address, uint64_t, cucore_stream_t *) {
        ++static_cast<CCounts *>(self)->deallocations;
        delete[] reinterpret_cast<std::uint8_t *>(address);
        return CUCORE_SUCCESS;
    };
    c.destroy = [](void *self) { ++static_cast<CCounts *>(self)->destroyed; };
    c.user_data = &counts;
    c.device_id = -1;
    c.host_accessible = 1;
    {
        const cucore::MemoryResource mr = cucore::MemoryResource::user(c);
        const cucore::Buffer b = mr.allocate(8);
        EXPECT_EQ(counts.allocations.load(), 1);
    }
    EXPECT_EQ(counts.deallocations.load(), 1);
    EXPECT_EQ(counts.destroyed.load(), 1);
    c.allocate = nullptr;
    EXPECT_THROWS_STATUS(cucore::MemoryResource::user(c), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(counts.destroyed.load(), 1);
}

}  // namespace
