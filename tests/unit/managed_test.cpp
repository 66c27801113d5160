// Managed buffers: advice, range attributes, prefetch and discard through the
// fake driver (which keeps the advice per allocation and marks discarded bytes
// with fake::kDiscardedByte), and every managed call refused for other memory.
#include <algorithm>
#include <string>

#include "memory_support.hpp"

namespace {

constexpr cucore_location_t kNone{CUCORE_LOCATION_NONE, 0};
constexpr cucore_location_t kHost{CUCORE_LOCATION_HOST, 0};
constexpr cucore_location_t kDevice0{CUCORE_LOCATION_DEVICE, 0};
constexpr cucore_location_t kDevice1{CUCORE_LOCATION_DEVICE, 1};

bool same(cucore_location_t a, cucore_location_t b) { return a.type == b.type && a.id == b.id; }

class ManagedTest : public MemoryFixture {
  protected:
    void SetUp() override {
        MemoryFixture::SetUp();
        ASSERT_EQ(cucore_managed_memory_resource_create(d0_, nullptr, &managed_), CUCORE_SUCCESS) << message();
        b_ = alloc(managed_, 4096, s0_);
        ASSERT_NE(b_, nullptr);
    }
    void TearDown() override {
        cucore_buffer_release(b_);
        cucore_memory_resource_release(managed_);
        MemoryFixture::TearDown();
    }
    int read_mostly(cucore_buffer_t *b) {
        int v = -1;
        EXPECT_EQ(cucore_buffer_advice(b, &v, nullptr), CUCORE_SUCCESS) << message();
        return v;
    }
    cucore_location_t preferred(cucore_buffer_t *b) {
        cucore_location_t l{static_cast<cucore_location_type_t>(-1), -1};
        EXPECT_EQ(cucore_buffer_advice(b, nullptr, &l), CUCORE_SUCCESS) << message();
        return l;
    }
    int accessed_by(cucore_buffer_t *b, cucore_location_t l) {
        int v = -1;
        EXPECT_EQ(cucore_buffer_is_accessed_by(b, l, &v), CUCORE_SUCCESS) << message();
        return v;
    }
    cucore_location_t last_prefetch(cucore_buffer_t *b) {
        cucore_location_t l{static_cast<cucore_location_type_t>(-1), -1};
        EXPECT_EQ(cucore_buffer_last_prefetch_location(b, &l), CUCORE_SUCCESS) << message();
        return l;
    }
    cucore_memory_resource_t *managed_ = nullptr;
    cucore_buffer_t *b_ = nullptr;  // 4096 managed bytes
};

TEST_F(ManagedTest, FreshMemoryHasNoAdvice) {
    EXPECT_EQ(read_mostly(b_), 0);
    EXPECT_TRUE(same(preferred(b_), kNone));
    EXPECT_EQ(accessed_by(b_, kDevice0), 0);
    EXPECT_EQ(accessed_by(b_, kDevice1), 0);
    EXPECT_TRUE(same(last_prefetch(b_), kNone));
    // Both outs of cucore_buffer_advice at once.
    int rm = -1;
    cucore_location_t l{CUCORE_LOCATION_HOST, 5};
    ASSERT_EQ(cucore_buffer_advice(b_, &rm, &l), CUCORE_SUCCESS);
    EXPECT_EQ(rm, 0);
    EXPECT_TRUE(same(l, kNone));
}

TEST_F(ManagedTest, AdviceRoundTrips) {
    ASSERT_EQ(cucore_buffer_advise(b_, CUCORE_ADVICE_SET_READ_MOSTLY, kNone), CUCORE_SUCCESS)
        << "read-mostly ignores the location: " << message();
    EXPECT_EQ(read_mostly(b_), 1);
    ASSERT_EQ(cucore_buffer_advise(b_, CUCORE_ADVICE_UNSET_READ_MOSTLY, kNone), CUCORE_SUCCESS) << message();
    EXPECT_EQ(read_mostly(b_), 0);

    ASSERT_EQ(cucore_buffer_advise(b_, CUCORE_ADVICE_SET_PREFERRED_LOCATION, kDevice1), CUCORE_SUCCESS) << message();
    EXPECT_TRUE(same(preferred(b_), kDevice1));
    ASSERT_EQ(cucore_buffer_advise(b_, CUCORE_ADVICE_SET_PREFERRED_LOCATION, kHost), CUCORE_SUCCESS) << message();
    EXPECT_TRUE(same(preferred(b_), kHost));
    const cucore_location_t numa{CUCORE_LOCATION_HOST_NUMA, 1};
    ASSERT_EQ(cucore_buffer_advise(b_, CUCORE_ADVICE_SET_PREFERRED_LOCATION, numa), CUCORE_SUCCESS) << message();
    EXPECT_TRUE(same(preferred(b_), numa));
    ASSERT_EQ(cucore_buffer_advise(b_, CUCORE_ADVICE_UNSET_PREFERRED_LOCATION, kNone), CUCORE_SUCCESS) << message();
    EXPECT_TRUE(same(preferred(b_), kNone));

    ASSERT_EQ(cucore_buffer_advise(b_, CUCORE_ADVICE_SET_ACCESSED_BY, kDevice1), CUCORE_SUCCESS) << message();
    EXPECT_EQ(accessed_by(b_, kDevice1), 1);
    EXPECT_EQ(accessed_by(b_, kDevice0), 0);
    ASSERT_EQ(cucore_buffer_advise(b_, CUCORE_ADVICE_SET_ACCESSED_BY, kDevice0), CUCORE_SUCCESS);
    EXPECT_EQ(accessed_by(b_, kDevice0), 1);
    ASSERT_EQ(cucore_buffer_advise(b_, CUCORE_ADVICE_UNSET_ACCESSED_BY, kDevice1), CUCORE_SUCCESS);
    EXPECT_EQ(accessed_by(b_, kDevice1), 0);
    EXPECT_EQ(accessed_by(b_, kDevice0), 1);
    EXPECT_EQ(fake::current_context(), nullptr);
}

TEST_F(ManagedTest, ViewsOfManagedMemoryAreManaged) {
    cucore_buffer_t *view = nullptr;
    ASSERT_EQ(cucore_buffer_view(b_, 1024, 1024, &view), CUCORE_SUCCESS);
    EXPECT_EQ(accessibility(view), (std::vector<int>{1, 1, 1}));
    ASSERT_EQ(cucore_buffer_advise(view, CUCORE_ADVICE_SET_READ_MOSTLY, kNone), CUCORE_SUCCESS) << message();
    EXPECT_EQ(read_mostly(view), 1);
    ASSERT_EQ(cucore_buffer_prefetch(view, kDevice1, s0_), CUCORE_SUCCESS) << message();
    EXPECT_TRUE(same(last_prefetch(view), kDevice1));
    cucore_buffer_release(view);
}

TEST_F(ManagedTest, PrefetchMovesTheLastPrefetchLocation) {
    fake::reset_calls();
    ASSERT_EQ(cucore_buffer_prefetch(b_, kDevice1, s1_), CUCORE_SUCCESS) << message();
    EXPECT_TRUE(called("cuMemPrefetchAsync"));
    EXPECT_TRUE(same(last_prefetch(b_), kDevice1));
    ASSERT_EQ(cucore_buffer_prefetch(b_, kHost, s0_), CUCORE_SUCCESS) << message();
    EXPECT_TRUE(same(last_prefetch(b_), kHost));
    ASSERT_EQ(cucore_buffer_prefetch(b_, kDevice0, s0_), CUCORE_SUCCESS) << message();
    EXPECT_TRUE(same(last_prefetch(b_), kDevice0));
    EXPECT_EQ(fake::current_context(), nullptr);
    // The driver refusing: CUDA with its result.
    fake::fail_entry("cuMemPrefetchAsync", CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(cucore_buffer_prefetch(b_, kDevice1, s0_), CUCORE_ERROR_CUDA);
    EXPECT_EQ(cucore_last_cuda_result(), CUDA_ERROR_INVALID_VALUE);
    fake::fail_entry("");
}

TEST_F(ManagedTest, DiscardDropsExactlyTheBuffersBytes) {
    ASSERT_EQ(cucore_buffer_fill(b_, 0x11, 1, s0_), CUCORE_SUCCESS);
    cucore_buffer_t *view = nullptr;
    ASSERT_EQ(cucore_buffer_view(b_, 1024, 2048, &view), CUCORE_SUCCESS);
    fake::reset_calls();
    ASSERT_EQ(cucore_buffer_discard(view, nullptr, s0_), CUCORE_SUCCESS) << message();
    EXPECT_TRUE(called("cuMemDiscardBatchAsync"));
    Bytes expected(4096, 0x11);
    std::fill(expected.begin() + 1024, expected.begin() + 3072, fake::kDiscardedByte);
    EXPECT_EQ(read_all(b_), expected);
    EXPECT_TRUE(same(last_prefetch(b_), kNone)) << "a plain discard prefetches nothing";
    // Discard and prefetch: the pages are then resident where asked.
    ASSERT_EQ(cucore_buffer_fill(b_, 0x22, 1, s0_), CUCORE_SUCCESS);
    fake::reset_calls();
    ASSERT_EQ(cucore_buffer_discard(b_, &kDevice1, s0_), CUCORE_SUCCESS) << message();
    EXPECT_TRUE(called("cuMemDiscardAndPrefetchBatchAsync"));
    EXPECT_EQ(read_all(b_), Bytes(4096, fake::kDiscardedByte));
    EXPECT_TRUE(same(last_prefetch(b_), kDevice1));
    cucore_buffer_release(view);
}

TEST_F(ManagedTest, DiscardNeedsACuda13Driver) {
    auto &table = fake::table();
    const auto discard = table.cuMemDiscardBatchAsync;
    const auto discard_prefetch = table.cuMemDiscardAndPrefetchBatchAsync;
    table.cuMemDiscardBatchAsync = nullptr;
    table.cuMemDiscardAndPrefetchBatchAsync = nullptr;
    fake::reinstall();
    EXPECT_EQ(cucore_buffer_discard(b_, nullptr, s0_), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_NE(message().find("cuMemDiscardBatchAsync"), std::string::npos) << message();
    EXPECT_EQ(cucore_buffer_discard(b_, &kHost, s0_), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_NE(message().find("cuMemDiscardAndPrefetchBatchAsync"), std::string::npos) << message();
    table.cuMemDiscardBatchAsync = discard;
    table.cuMemDiscardAndPrefetchBatchAsync = discard_prefetch;
    fake::reinstall();
}

TEST_F(ManagedTest, ZeroSizeManagedBuffersNeedNoDriver) {
    cucore_buffer_t *z = alloc(managed_, 0, s0_);
    fake::reset_calls();
    EXPECT_EQ(read_mostly(z), 0);
    EXPECT_TRUE(same(preferred(z), kNone));
    EXPECT_EQ(accessed_by(z, kDevice0), 0);
    EXPECT_TRUE(same(last_prefetch(z), kNone));
    EXPECT_EQ(cucore_buffer_advise(z, CUCORE_ADVICE_SET_READ_MOSTLY, kNone), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_buffer_prefetch(z, kDevice0, s0_), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_buffer_discard(z, nullptr, s0_), CUCORE_SUCCESS);
    EXPECT_EQ(fake::calls(), 0);
    cucore_buffer_release(z);
}

TEST_F(ManagedTest, ClosedManagedBuffersAreInvalidState) {
    cucore_buffer_t *b = alloc(managed_, 64, s0_);
    ASSERT_EQ(cucore_buffer_close(b, nullptr), CUCORE_SUCCESS);
    fake::reset_calls();
    int v = 9;
    EXPECT_EQ(cucore_buffer_advise(b, CUCORE_ADVICE_SET_READ_MOSTLY, kNone), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(cucore_buffer_advice(b, &v, nullptr), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(v, 0);
    EXPECT_EQ(cucore_buffer_is_accessed_by(b, kDevice0, &v), CUCORE_ERROR_INVALID_STATE);
    cucore_location_t l = kHost;
    EXPECT_EQ(cucore_buffer_last_prefetch_location(b, &l), CUCORE_ERROR_INVALID_STATE);
    EXPECT_TRUE(same(l, kNone)) << "out cleared";
    EXPECT_EQ(cucore_buffer_prefetch(b, kDevice0, s0_), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(cucore_buffer_discard(b, nullptr, s0_), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(fake::calls(), 0);
    cucore_buffer_release(b);
}

// Every managed call on memory that is not managed: INVALID_ARGUMENT, no driver call.
TEST_F(ManagedTest, ManagedCallsAreRefusedForOtherMemory) {
    cucore_memory_resource_t *pool = nullptr, *pinned = nullptr, *legacy = nullptr, *vmm = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_get_default(d0_, &pool), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_pinned_memory_resource_create(d0_, nullptr, &pinned), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_legacy_pinned_memory_resource_create(d0_, &legacy), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_virtual_memory_resource_create(d0_, nullptr, &vmm), CUCORE_SUCCESS);
    std::vector<cucore_buffer_t *> others = {alloc(pool, 64, s0_), alloc(pinned, 64, s0_), alloc(legacy, 64, nullptr),
                                             alloc(vmm, 64, nullptr)};
    cucore_buffer_t *foreign = nullptr;
    ASSERT_EQ(cucore_buffer_from_handle(address_of(b_), 64, d0_, nullptr, nullptr, &foreign), CUCORE_SUCCESS);
    others.push_back(foreign);  // managed memory wrapped as foreign is not known to be managed
    for (cucore_buffer_t *b : others) {
        SCOPED_TRACE(std::to_string(accessibility(b)[0]) + std::to_string(accessibility(b)[1]));
        fake::reset_calls();
        auto refused = [](cucore_status_t status, const char *function) {
            EXPECT_EQ(status, CUCORE_ERROR_INVALID_ARGUMENT) << function;
            EXPECT_EQ(message().rfind(std::string(function) + ":", 0), 0u) << message();
            EXPECT_NE(message().find("managed"), std::string::npos) << message();
        };
        int v = 9;
        cucore_location_t l = kHost;
        refused(cucore_buffer_advise(b, CUCORE_ADVICE_SET_READ_MOSTLY, kNone), "cucore_buffer_advise");
        refused(cucore_buffer_advice(b, &v, &l), "cucore_buffer_advice");
        EXPECT_EQ(v, 0);
        EXPECT_TRUE(same(l, kNone));
        v = 9;
        refused(cucore_buffer_is_accessed_by(b, kDevice0, &v), "cucore_buffer_is_accessed_by");
        EXPECT_EQ(v, 0);
        l = kHost;
        refused(cucore_buffer_last_prefetch_location(b, &l), "cucore_buffer_last_prefetch_location");
        EXPECT_TRUE(same(l, kNone));
        refused(cucore_buffer_prefetch(b, kDevice0, s0_), "cucore_buffer_prefetch");
        refused(cucore_buffer_discard(b, nullptr, s0_), "cucore_buffer_discard");
        refused(cucore_buffer_discard(b, &kHost, s0_), "cucore_buffer_discard");
        EXPECT_EQ(fake::calls(), 0);
        cucore_buffer_release(b);
    }
    for (cucore_memory_resource_t *r : {pool, pinned, legacy, vmm}) cucore_memory_resource_release(r);
}

}  // namespace
