// The C++ façade of user memory resources against the fake driver: they keep
// their object alive until the library destroys them, pass the deallocation
// stream, turn exceptions into statuses and release errors, and come from an
// object, two callables or the C callbacks.
#include <atomic>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "memory_facade_support.hpp"

namespace {

class UserMemoryFacadeTest : public MemoryFacadeFixture {};

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

TEST_F(UserMemoryFacadeTest, UserResourceKeepsItsObjectUntilTheLastBuffer) {
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

TEST_F(UserMemoryFacadeTest, UserResourceDeallocateGetsTheDeallocationStream) {
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

TEST_F(UserMemoryFacadeTest, UserResourceExceptionsBecomeStatuses) {
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

TEST_F(UserMemoryFacadeTest, UserResourceDeallocateExceptionsAreReleaseErrors) {
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

TEST_F(UserMemoryFacadeTest, AFailedUserResourceCreateDropsTheObject) {
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

TEST_F(UserMemoryFacadeTest, UserResourceFromCallables) {
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

TEST_F(UserMemoryFacadeTest, UserResourceFromCCallbacks) {
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
