// User memory resources (cucore_user_memory_resource_create): the callbacks get
// the right arguments, errors propagate, and destroy runs exactly once, after
// the last buffer, whatever the release order.
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "memory_support.hpp"

namespace {

// Records every callback and hands out host memory (the fake's copies reach it).
struct Recorder {
    struct Call {
        uint64_t address;
        uint64_t size;
        cucore_stream_t *stream;
        int stream_usable;  // the borrowed stream answered a query during the call
    };
    std::vector<Call> allocations, deallocations;
    int destroyed = 0;
    size_t deallocations_at_destroy = 0;
    cucore_status_t refuse = CUCORE_SUCCESS;  // what allocate returns instead of memory
    cucore_status_t refuse_free = CUCORE_SUCCESS;  // what deallocate returns (the memory is freed either way)
    bool zero_address = false;                // success with address 0
    std::map<uint64_t, std::unique_ptr<uint8_t[]>> live;

    static int usable(cucore_stream_t *stream) {
        if (!stream) return -1;
        int owned = 0;
        return cucore_stream_is_owned(stream, &owned) == CUCORE_SUCCESS ? 1 : 0;
    }
    static cucore_status_t allocate(void *self, uint64_t size, cucore_stream_t *stream, uint64_t *address) {
        auto *r = static_cast<Recorder *>(self);
        r->allocations.push_back({0, size, stream, usable(stream)});
        if (r->refuse != CUCORE_SUCCESS) return r->refuse;
        if (r->zero_address) {
            *address = 0;
            return CUCORE_SUCCESS;
        }
        std::unique_ptr<uint8_t[]> memory(new uint8_t[size]);
        *address = reinterpret_cast<uintptr_t>(memory.get());
        r->allocations.back().address = *address;
        r->live[*address] = std::move(memory);
        return CUCORE_SUCCESS;
    }
    static cucore_status_t deallocate(void *self, uint64_t address, uint64_t size, cucore_stream_t *stream) {
        auto *r = static_cast<Recorder *>(self);
        r->deallocations.push_back({address, size, stream, usable(stream)});
        r->live.erase(address);
        return r->refuse_free;
    }
    static void destroy(void *self) {
        auto *r = static_cast<Recorder *>(self);
        ++r->destroyed;
        r->deallocations_at_destroy = r->deallocations.size();
    }
    cucore_memory_resource_callbacks_t callbacks(int device_id = 0) {
        cucore_memory_resource_callbacks_t c{};
        c.struct_size = sizeof c;
        c.allocate = &Recorder::allocate;
        c.deallocate = &Recorder::deallocate;
        c.destroy = &Recorder::destroy;
        c.user_data = this;
        c.device_id = device_id;
        c.device_accessible = 1;
        return c;
    }
};

class UserMemoryTest : public MemoryFixture {
  protected:
    cucore_memory_resource_t *create(Recorder &recorder, int device_id = 0) {
        cucore_memory_resource_callbacks_t c = recorder.callbacks(device_id);
        cucore_memory_resource_t *r = nullptr;
        EXPECT_EQ(cucore_user_memory_resource_create(&c, &r), CUCORE_SUCCESS) << message();
        c.allocate = nullptr;  // the library copied the struct
        return r;
    }
};

TEST_F(UserMemoryTest, CallbacksGetTheirArgumentsAndDescribeTheMemory) {
    Recorder rec;
    cucore_memory_resource_t *r = create(rec);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(kind_of(r), CUCORE_MEMORY_RESOURCE_USER);
    int id = 9, device_ok = 9, host_ok = 9;
    ASSERT_EQ(cucore_memory_resource_device_id(r, &id), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_accessibility(r, &device_ok, &host_ok), CUCORE_SUCCESS);
    EXPECT_EQ(id, 0);
    EXPECT_EQ(device_ok, 1);
    EXPECT_EQ(host_ok, 0);
    EXPECT_EQ(pool_of(r), nullptr) << "no driver pool";

    fake::reset_calls();
    cucore_buffer_t *b = alloc(r, 100, s0_);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(fake::calls(), 0) << "the user's memory: no driver call";
    ASSERT_EQ(rec.allocations.size(), 1u);
    EXPECT_EQ(rec.allocations[0].size, 100u);
    EXPECT_EQ(rec.allocations[0].stream, s0_) << "the caller's stream, borrowed";
    EXPECT_EQ(rec.allocations[0].stream_usable, 1);
    EXPECT_EQ(address_of(b), rec.allocations[0].address);
    EXPECT_EQ(size_of(b), 100u);
    EXPECT_EQ(accessibility(b), (std::vector<int>{1, 0, 0}));
    int buffer_device = 9;
    ASSERT_EQ(cucore_buffer_device_id(b, &buffer_device), CUCORE_SUCCESS);
    EXPECT_EQ(buffer_device, 0);
    cucore_memory_resource_t *owner = nullptr;
    ASSERT_EQ(cucore_buffer_memory_resource(b, &owner), CUCORE_SUCCESS);
    EXPECT_EQ(owner, r);
    cucore_memory_resource_release(owner);
    // The memory is used like any other (the fake copies reach host memory).
    const Bytes data = pattern(100, 3);
    write(b, 0, data);
    EXPECT_EQ(read_all(b), data);
    EXPECT_EQ(std::memcmp(reinterpret_cast<const void *>(rec.allocations[0].address), data.data(), 100), 0);

    // Without a stream: the callback gets NULL.
    cucore_buffer_t *b2 = alloc(r, 50, nullptr);
    ASSERT_EQ(rec.allocations.size(), 2u);
    EXPECT_EQ(rec.allocations[1].stream, nullptr);
    EXPECT_EQ(rec.allocations[1].size, 50u);

    cucore_buffer_release(b);
    ASSERT_EQ(rec.deallocations.size(), 1u);
    EXPECT_EQ(rec.deallocations[0].address, rec.allocations[0].address);
    EXPECT_EQ(rec.deallocations[0].size, 100u);
    EXPECT_EQ(rec.deallocations[0].stream, s0_) << "freed on its deallocation stream (the allocation stream)";
    EXPECT_EQ(rec.deallocations[0].stream_usable, 1);
    cucore_buffer_release(b2);
    ASSERT_EQ(rec.deallocations.size(), 2u);
    EXPECT_EQ(rec.deallocations[1].address, rec.allocations[1].address);
    EXPECT_EQ(rec.deallocations[1].size, 50u);
    EXPECT_EQ(rec.deallocations[1].stream, nullptr);
    EXPECT_EQ(rec.destroyed, 0) << "the caller still holds the resource";
    cucore_memory_resource_release(r);
    EXPECT_EQ(rec.destroyed, 1);
    EXPECT_TRUE(rec.live.empty());
}

TEST_F(UserMemoryTest, DeallocateReachesTheCallbackWithItsArguments) {
    Recorder rec;
    cucore_memory_resource_t *r = create(rec);
    uint64_t address = 0;
    ASSERT_EQ(Recorder::allocate(&rec, 48, s0_, &address), CUCORE_SUCCESS);  // memory outside any buffer
    ASSERT_EQ(cucore_memory_resource_deallocate(r, address, 48, s0_), CUCORE_SUCCESS) << message();
    ASSERT_EQ(rec.deallocations.size(), 1u);
    EXPECT_EQ(rec.deallocations[0].address, address);
    EXPECT_EQ(rec.deallocations[0].size, 48u);
    EXPECT_EQ(rec.deallocations[0].stream_usable, 1) << "the caller's stream, lent for the call";
    EXPECT_TRUE(rec.live.empty());
    rec.refuse_free = CUCORE_ERROR_OUT_OF_MEMORY;
    ASSERT_EQ(Recorder::allocate(&rec, 8, s0_, &address), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_memory_resource_deallocate(r, address, 8, s0_), CUCORE_ERROR_OUT_OF_MEMORY)
        << "the callback's status comes back";
    cucore_memory_resource_release(r);
}

TEST_F(UserMemoryTest, DestroyRunsOnceAfterTheLastBufferWhateverTheOrder) {
    Recorder rec;
    cucore_memory_resource_t *r = create(rec, -1);
    cucore_buffer_t *a = alloc(r, 16, s0_), *b = alloc(r, 32, s1_);
    cucore_buffer_t *view = nullptr;
    ASSERT_EQ(cucore_buffer_view(a, 4, 8, &view), CUCORE_SUCCESS);
    cucore_memory_resource_release(r);  // the resource before its buffers
    EXPECT_EQ(rec.destroyed, 0);
    cucore_buffer_release(a);
    EXPECT_TRUE(rec.deallocations.empty()) << "the view keeps a's memory";
    cucore_buffer_release(b);
    ASSERT_EQ(rec.deallocations.size(), 1u);
    EXPECT_EQ(rec.deallocations[0].size, 32u);
    EXPECT_EQ(rec.deallocations[0].stream, s1_);
    EXPECT_EQ(rec.destroyed, 0);
    cucore_buffer_release(view);
    ASSERT_EQ(rec.deallocations.size(), 2u);
    EXPECT_EQ(rec.deallocations[1].address, rec.allocations[0].address);
    EXPECT_EQ(rec.deallocations[1].size, 16u) << "the whole allocation, not the view";
    EXPECT_EQ(rec.destroyed, 1);
    EXPECT_EQ(rec.deallocations_at_destroy, 2u) << "destroy comes after every deallocate";
    EXPECT_TRUE(rec.live.empty());
}

TEST_F(UserMemoryTest, CloseAndDeallocationStreamReachDeallocate) {
    Recorder rec;
    cucore_memory_resource_t *r = create(rec);
    cucore_buffer_t *a = alloc(r, 16, s0_), *b = alloc(r, 16, s0_);
    ASSERT_EQ(cucore_buffer_close(a, s1_), CUCORE_SUCCESS) << message();
    ASSERT_EQ(rec.deallocations.size(), 1u) << "closing frees at once";
    EXPECT_EQ(rec.deallocations[0].stream, s1_) << "on the stream given to close";
    EXPECT_EQ(cucore_buffer_close(a, nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(rec.deallocations.size(), 1u) << "closing twice frees once";
    ASSERT_EQ(cucore_buffer_set_deallocation_stream(b, s1_), CUCORE_SUCCESS);
    cucore_buffer_release(b);
    ASSERT_EQ(rec.deallocations.size(), 2u);
    EXPECT_EQ(rec.deallocations[1].stream, s1_);
    cucore_buffer_release(a);
    EXPECT_EQ(rec.deallocations.size(), 2u);
    cucore_memory_resource_release(r);
    EXPECT_EQ(rec.destroyed, 1);
}

TEST_F(UserMemoryTest, AllocateErrorsReachTheCaller) {
    Recorder rec;
    cucore_memory_resource_t *r = create(rec);
    for (cucore_status_t refused : {CUCORE_ERROR_OUT_OF_MEMORY, CUCORE_ERROR_INVALID_STATE, CUCORE_ERROR_CUDA}) {
        SCOPED_TRACE(cucore_status_string(refused));
        rec.refuse = refused;
        cucore_buffer_t *b = reinterpret_cast<cucore_buffer_t *>(0x1);
        EXPECT_EQ(cucore_memory_resource_allocate(r, 64, s0_, &b), refused);
        EXPECT_EQ(b, nullptr);
        EXPECT_EQ(message().rfind("cucore_memory_resource_allocate:", 0), 0u) << message();
        EXPECT_NE(message().find("allocate"), std::string::npos) << message();
    }
    // Success without memory is out of memory.
    rec.refuse = CUCORE_SUCCESS;
    rec.zero_address = true;
    cucore_buffer_t *b = reinterpret_cast<cucore_buffer_t *>(0x1);
    EXPECT_EQ(cucore_memory_resource_allocate(r, 64, s0_, &b), CUCORE_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(b, nullptr);
    EXPECT_TRUE(rec.deallocations.empty()) << "nothing to give back";
    // Zero bytes never reach the callback.
    rec.zero_address = false;
    const size_t calls = rec.allocations.size();
    cucore_buffer_t *empty = alloc(r, 0, s0_);
    ASSERT_NE(empty, nullptr);
    EXPECT_EQ(rec.allocations.size(), calls);
    EXPECT_EQ(address_of(empty), 0u);
    cucore_buffer_release(empty);
    EXPECT_TRUE(rec.deallocations.empty());
    cucore_memory_resource_release(r);
    EXPECT_EQ(rec.destroyed, 1);
}

// What the release error handler was told.
struct ReleaseErrors {
    int calls = 0;
    cucore_status_t status = CUCORE_SUCCESS;
    int cuda_result = -1;
    std::string message;
    static void record(cucore_status_t status, int cuda_result, const char *message, void *self) {
        auto *seen = static_cast<ReleaseErrors *>(self);
        ++seen->calls;
        seen->status = status;
        seen->cuda_result = cuda_result;
        seen->message = message;
    }
};

std::string hex(uint64_t value) {
    char text[32];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
    return text;
}

// A deallocate callback's error status cannot be returned by the release that
// freed the buffer: it is counted and passed to the handler, never retried.
TEST_F(UserMemoryTest, AFailedDeallocateIsAReleaseError) {
    expects_release_errors_ = true;
    ReleaseErrors seen;
    cucore_set_release_error_handler(&ReleaseErrors::record, &seen);
    Recorder rec;
    cucore_memory_resource_t *r = create(rec);
    const uint64_t before = release_errors();

    cucore_buffer_t *b = alloc(r, 64, s0_);
    ASSERT_NE(b, nullptr);
    const uint64_t b_address = address_of(b);
    rec.refuse_free = CUCORE_ERROR_INVALID_STATE;
    EXPECT_EQ(cucore_buffer_release(b), CUCORE_SUCCESS) << "the handle is released either way";
    ASSERT_EQ(rec.deallocations.size(), 1u) << "called once, not retried";
    EXPECT_EQ(release_errors(), before + 1);
    EXPECT_EQ(seen.calls, 1);
    EXPECT_EQ(seen.status, CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(seen.cuda_result, 0) << "not a driver failure";
    EXPECT_NE(seen.message.find("freeing a buffer"), std::string::npos) << seen.message;
    EXPECT_NE(seen.message.find("deallocate callback"), std::string::npos) << seen.message;
    EXPECT_NE(seen.message.find("64 bytes at " + hex(b_address)), std::string::npos) << seen.message;

    // Closing reports it the same way; close itself succeeds and the buffer is closed.
    cucore_buffer_t *c = alloc(r, 32, s0_);
    const uint64_t c_address = address_of(c);
    rec.refuse_free = CUCORE_ERROR_CUDA;
    EXPECT_EQ(cucore_buffer_close(c, s1_), CUCORE_SUCCESS) << message();
    ASSERT_EQ(rec.deallocations.size(), 2u);
    EXPECT_EQ(rec.deallocations[1].stream, s1_);
    EXPECT_EQ(release_errors(), before + 2);
    EXPECT_EQ(seen.calls, 2);
    EXPECT_EQ(seen.status, CUCORE_ERROR_CUDA);
    EXPECT_NE(seen.message.find("32 bytes at " + hex(c_address)), std::string::npos) << seen.message;
    EXPECT_EQ(size_of(c), 0u) << "closed";
    EXPECT_EQ(cucore_buffer_close(c, nullptr), CUCORE_SUCCESS);
    cucore_buffer_release(c);
    EXPECT_EQ(rec.deallocations.size(), 2u) << "freed once";
    EXPECT_EQ(release_errors(), before + 2);

    // Success reports nothing.
    rec.refuse_free = CUCORE_SUCCESS;
    cucore_buffer_release(alloc(r, 16, s0_));
    EXPECT_EQ(rec.deallocations.size(), 3u);
    EXPECT_EQ(release_errors(), before + 2);
    EXPECT_EQ(seen.calls, 2);
    cucore_memory_resource_release(r);
    EXPECT_EQ(rec.destroyed, 1);
    EXPECT_TRUE(rec.live.empty());
}

TEST_F(UserMemoryTest, AFailedCreateNeverCallsDestroy) {
    Recorder rec;
    cucore_memory_resource_callbacks_t c = rec.callbacks();
    c.deallocate = nullptr;
    cucore_memory_resource_t *r = reinterpret_cast<cucore_memory_resource_t *>(0x1);
    EXPECT_EQ(cucore_user_memory_resource_create(&c, &r), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(r, nullptr);
    c = rec.callbacks();
    c.device_id = -7;
    EXPECT_EQ(cucore_user_memory_resource_create(&c, &r), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(rec.destroyed, 0);
    // Destroy is optional.
    c = rec.callbacks();
    c.destroy = nullptr;
    c.managed = 1;
    c.host_accessible = 1;
    ASSERT_EQ(cucore_user_memory_resource_create(&c, &r), CUCORE_SUCCESS) << message();
    int managed = 9;
    ASSERT_EQ(cucore_memory_resource_is_managed(r, &managed), CUCORE_SUCCESS);
    EXPECT_EQ(managed, 1) << "what the callbacks say";
    cucore_buffer_t *b = alloc(r, 8, nullptr);
    EXPECT_EQ(accessibility(b), (std::vector<int>{1, 1, 1}));
    cucore_memory_resource_release(r);
    cucore_buffer_release(b);
    EXPECT_EQ(rec.deallocations.size(), 1u);
    EXPECT_EQ(rec.destroyed, 0);
}

}  // namespace
