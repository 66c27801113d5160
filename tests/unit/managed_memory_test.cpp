// Managed memory against the fake driver. The resource (ManagedMemoryTest):
// without a pool (the default of cucore_managed_memory_resource_create),
// cuMemAllocManaged and cuMemFree; with options.use_pool, a managed pool.
// Managed buffers (ManagedBufferTest): advice, range attributes, prefetch and
// discard (the fake keeps the advice per allocation and marks discarded bytes
// with fake::kDiscardedByte), and every managed call refused for other memory.
#include <algorithm>
#include <cstring>
#include <string>

#include "memory_support.hpp"

namespace {

bool same(cucore_location_t a, cucore_location_t b) { return a.type == b.type && a.id == b.id; }

class ManagedMemoryTest : public MemoryFixture {
  protected:
    // A resource with `o` (NULL: defaults); NULL if the call failed.
    static cucore_memory_resource_t *create(const cucore_managed_memory_resource_options_t *o,
                                            cucore_device_t *d) {
        cucore_memory_resource_t *r = nullptr;
        EXPECT_EQ(cucore_managed_memory_resource_create(d, o, &r), CUCORE_SUCCESS) << message();
        return r;
    }
    static cucore_location_t preferred(const cucore_buffer_t *b) {
        cucore_location_t l{static_cast<cucore_location_type_t>(-1), -1};
        EXPECT_EQ(cucore_buffer_advice(b, nullptr, &l), CUCORE_SUCCESS) << message();
        return l;
    }
    // The calls since the last fake::reset_calls() named `name`.
    static int count(const char *name) {
        int n = 0;
        for (const std::string &call : fake::call_log()) n += call == name;
        return n;
    }
};

constexpr cucore_location_t kNone{CUCORE_LOCATION_NONE, 0};
constexpr cucore_location_t kHost{CUCORE_LOCATION_HOST, 0};
constexpr cucore_location_t kDevice0{CUCORE_LOCATION_DEVICE, 0};
constexpr cucore_location_t kDevice1{CUCORE_LOCATION_DEVICE, 1};

// A managed buffer of 4096 bytes from cuMemAllocManaged on device 0.
class ManagedBufferTest : public MemoryFixture {
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

// ---- The resource ----------------------------------------------------------------------

TEST_F(ManagedMemoryTest, TheDefaultIsCuMemAllocManagedWithoutAPool) {
    fake::reset_calls();
    cucore_memory_resource_t *managed = create(nullptr, d0_);
    ASSERT_NE(managed, nullptr);
    EXPECT_FALSE(called("cuMemPoolCreate"));
    EXPECT_EQ(fake::counters().pools, 0);
    EXPECT_EQ(kind_of(managed), CUCORE_MEMORY_RESOURCE_MANAGED);
    EXPECT_EQ(pool_of(managed), nullptr) << "no pool";
    int id = 9, device_ok = 9, host_ok = 9, is_managed = 9;
    ASSERT_EQ(cucore_memory_resource_device_id(managed, &id), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_accessibility(managed, &device_ok, &host_ok), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_is_managed(managed, &is_managed), CUCORE_SUCCESS);
    EXPECT_EQ(id, 0);
    EXPECT_EQ(device_ok, 1);
    EXPECT_EQ(host_ok, 1);
    EXPECT_EQ(is_managed, 1);

    // Synchronous: no stream needed; global attachment; no advice without a preferred location.
    const int allocations = fake::counters().allocations;
    fake::reset_calls();
    cucore_buffer_t *b = alloc(managed, 256, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(count("cuMemAllocManaged"), 1);
    EXPECT_FALSE(called("cuMemAllocFromPoolAsync"));
    EXPECT_FALSE(called("cuMemAdvise"));
    EXPECT_EQ(fake::managed_attach_flags(address_of(b)), static_cast<unsigned>(CU_MEM_ATTACH_GLOBAL));
    EXPECT_EQ(fake::counters().allocations, allocations + 1);
    EXPECT_EQ(fake::current_context(), nullptr) << "the caller's context is restored";
    EXPECT_EQ(accessibility(b), (std::vector<int>{1, 1, 1}));
    int buffer_device = 9;
    ASSERT_EQ(cucore_buffer_device_id(b, &buffer_device), CUCORE_SUCCESS);
    EXPECT_EQ(buffer_device, 0);
    cucore_memory_resource_t *owner = nullptr;
    ASSERT_EQ(cucore_buffer_memory_resource(b, &owner), CUCORE_SUCCESS);
    EXPECT_EQ(owner, managed);
    cucore_memory_resource_release(owner);

    // The memory is usable from the host directly and through copies and fills.
    std::memset(reinterpret_cast<void *>(address_of(b)), 0x5A, 256);
    EXPECT_EQ(read_all(b), Bytes(256, 0x5A));
    const Bytes data = pattern(256, 11);
    write(b, 0, data);
    EXPECT_EQ(std::memcmp(reinterpret_cast<const void *>(address_of(b)), data.data(), 256), 0);
    ASSERT_EQ(cucore_buffer_fill(b, 0xBEEF, 2, s0_), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_synchronize(s0_), CUCORE_SUCCESS);
    EXPECT_EQ(reinterpret_cast<const uint16_t *>(address_of(b))[127], 0xBEEF);

    // Released with cuMemFree (never a stream-ordered free), in the resource's context.
    fake::reset_calls();
    ASSERT_EQ(cucore_buffer_release(b), CUCORE_SUCCESS);
    EXPECT_EQ(count("cuMemFree"), 1);
    EXPECT_FALSE(called("cuMemFreeAsync"));
    EXPECT_EQ(fake::counters().allocations, allocations);
    EXPECT_EQ(fake::current_context(), nullptr);
    cucore_memory_resource_release(managed);
}

TEST_F(ManagedMemoryTest, AZeroedStructIsTheDefault) {
    cucore_managed_memory_resource_options_t zeroed;
    std::memset(&zeroed, 0, sizeof zeroed);
    zeroed.struct_size = sizeof zeroed;
    const cucore_managed_memory_resource_options_t init = CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
    EXPECT_EQ(std::memcmp(&zeroed, &init, sizeof zeroed), 0) << "INIT is zeros but struct_size";
    cucore_memory_resource_t *managed = create(&zeroed, d1_);
    ASSERT_NE(managed, nullptr);
    EXPECT_EQ(pool_of(managed), nullptr);
    int id = 9;
    ASSERT_EQ(cucore_memory_resource_device_id(managed, &id), CUCORE_SUCCESS);
    EXPECT_EQ(id, 1);
    fake::reset_calls();
    cucore_buffer_t *b = alloc(managed, 64, nullptr);
    EXPECT_TRUE(called("cuMemAllocManaged"));
    EXPECT_FALSE(called("cuMemAdvise"));
    cucore_buffer_release(b);
    cucore_memory_resource_release(managed);
}

// Not stream-ordered: any stream (of any device) or none; no deallocation stream.

TEST_F(ManagedMemoryTest, AllocationIgnoresTheStream) {
    cucore_memory_resource_t *managed = create(nullptr, d0_);
    ASSERT_NE(managed, nullptr);
    for (cucore_stream_t *s : {static_cast<cucore_stream_t *>(nullptr), s0_, s1_}) {
        SCOPED_TRACE(s == nullptr ? "NULL" : s == s0_ ? "device 0" : "device 1");
        cucore_buffer_t *b = alloc(managed, 128, s);
        ASSERT_NE(b, nullptr);
        cucore_stream_t *dealloc = s0_;
        ASSERT_EQ(cucore_buffer_deallocation_stream(b, &dealloc), CUCORE_SUCCESS);
        EXPECT_EQ(dealloc, nullptr) << "freed synchronously";
        // Closing frees at once, whatever stream is named.
        fake::reset_calls();
        ASSERT_EQ(cucore_buffer_close(b, s1_), CUCORE_SUCCESS) << message();
        EXPECT_EQ(count("cuMemFree"), 1);
        EXPECT_EQ(size_of(b), 0u);
        cucore_buffer_release(b);
    }
    // Size 0: no memory and no driver call.
    fake::reset_calls();
    cucore_buffer_t *empty = alloc(managed, 0, nullptr);
    EXPECT_EQ(address_of(empty), 0u);
    EXPECT_EQ(fake::calls(), 0);
    cucore_buffer_release(empty);
    EXPECT_EQ(fake::calls(), 0);
    cucore_memory_resource_release(managed);
}

TEST_F(ManagedMemoryTest, PreferredLocationIsAdvisedOnEachAllocation) {
    const cucore_location_t cases[] = {
        {CUCORE_LOCATION_DEVICE, 1},
        {CUCORE_LOCATION_HOST, 0},
        {CUCORE_LOCATION_HOST_NUMA, 3},
    };
    for (const cucore_location_t &where : cases) {
        SCOPED_TRACE(static_cast<int>(where.type));
        cucore_managed_memory_resource_options_t o = CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
        o.preferred_location = where;
        cucore_memory_resource_t *managed = create(&o, d0_);
        ASSERT_NE(managed, nullptr);
        EXPECT_EQ(pool_of(managed), nullptr);
        for (int i = 0; i < 2; ++i) {
            fake::reset_calls();
            cucore_buffer_t *b = alloc(managed, 4096, s0_);
            ASSERT_NE(b, nullptr);
            const std::vector<std::string> log = fake::call_log();
            size_t at = 0;
            while (at < log.size() && log[at] != "cuMemAllocManaged") ++at;
            ASSERT_LT(at + 1, log.size());
            EXPECT_EQ(log[at + 1], "cuMemAdvise") << "advised right after the allocation";
            EXPECT_EQ(count("cuMemAdvise"), 1);
            EXPECT_TRUE(same(preferred(b), where));
            EXPECT_EQ(fake::current_context(), nullptr);
            // Advice stays the buffer's to change.
            ASSERT_EQ(cucore_buffer_advise(b, CUCORE_ADVICE_UNSET_PREFERRED_LOCATION, {CUCORE_LOCATION_NONE, 0}),
                      CUCORE_SUCCESS)
                << message();
            EXPECT_TRUE(same(preferred(b), {CUCORE_LOCATION_NONE, 0}));
            cucore_buffer_release(b);
        }
        cucore_memory_resource_release(managed);
    }
}

TEST_F(ManagedMemoryTest, AFailedAdviceFreesTheAllocation) {
    cucore_managed_memory_resource_options_t o = CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
    o.preferred_location = {CUCORE_LOCATION_DEVICE, 1};
    cucore_memory_resource_t *managed = create(&o, d0_);
    ASSERT_NE(managed, nullptr);
    const int allocations = fake::counters().allocations;
    const size_t buffers = live(CUCORE_OBJECT_BUFFER);
    const uint64_t release_errors_before = release_errors();
    // As an H100 with driver 580 answers advice on managed-pool memory.
    fake::fail_entry("cuMemAdvise", CUDA_ERROR_NOT_SUPPORTED);
    fake::reset_calls();
    cucore_buffer_t *b = reinterpret_cast<cucore_buffer_t *>(0x1);
    EXPECT_EQ(cucore_memory_resource_allocate(managed, 4096, s0_, &b), CUCORE_ERROR_NOT_SUPPORTED);
    fake::fail_entry("");
    EXPECT_EQ(b, nullptr);
    EXPECT_EQ(message().rfind("cucore_memory_resource_allocate:", 0), 0u) << message();
    EXPECT_NE(message().find("cuMemAdvise"), std::string::npos) << message();
    EXPECT_EQ(cucore_last_cuda_result(), CUDA_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(count("cuMemFree"), 1) << "the allocation is given back";
    EXPECT_EQ(fake::counters().allocations, allocations);
    EXPECT_EQ(live(CUCORE_OBJECT_BUFFER), buffers);
    EXPECT_EQ(release_errors(), release_errors_before);
    EXPECT_EQ(fake::current_context(), nullptr);
    // Any other driver error: CUDA with its result.
    fake::fail_entry("cuMemAdvise", CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(cucore_memory_resource_allocate(managed, 4096, s0_, &b), CUCORE_ERROR_CUDA);
    fake::fail_entry("");
    EXPECT_EQ(cucore_last_cuda_result(), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(fake::counters().allocations, allocations);
    // The allocation itself failing.
    fake::fail_entry("cuMemAllocManaged", CUDA_ERROR_OUT_OF_MEMORY);
    fake::reset_calls();
    EXPECT_EQ(cucore_memory_resource_allocate(managed, 4096, s0_, &b), CUCORE_ERROR_OUT_OF_MEMORY);
    fake::fail_entry("");
    EXPECT_NE(message().find("cuMemAllocManaged"), std::string::npos) << message();
    EXPECT_FALSE(called("cuMemAdvise"));
    EXPECT_FALSE(called("cuMemFree"));
    EXPECT_EQ(fake::counters().allocations, allocations);
    cucore_memory_resource_release(managed);
}

TEST_F(ManagedMemoryTest, AFailedFreeIsReported) {
    expects_release_errors_ = true;
    cucore_memory_resource_t *managed = create(nullptr, d0_);
    ASSERT_NE(managed, nullptr);
    cucore_buffer_t *b = alloc(managed, 64, nullptr);
    const uint64_t before = release_errors();
    fake::fail_entry("cuMemFree", CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(cucore_buffer_release(b), CUCORE_SUCCESS);
    fake::fail_entry("");
    EXPECT_EQ(release_errors(), before + 1);
    EXPECT_EQ(fake::counters().allocations, 1) << "the driver refused: the memory is still allocated";
    cucore_memory_resource_release(managed);
    fake::forget_allocations();  // so the leak check at the end sees only what the library owns
}

// No pool: pool attributes, trim and peer access are NOT_SUPPORTED before any driver call.

TEST_F(ManagedMemoryTest, HasNoPool) {
    cucore_memory_resource_t *managed = create(nullptr, d0_);
    ASSERT_NE(managed, nullptr);
    fake::reset_calls();
    void *raw = reinterpret_cast<void *>(0x1);
    ASSERT_EQ(cucore_memory_resource_handle(managed, &raw), CUCORE_SUCCESS);
    EXPECT_EQ(raw, nullptr);
    uint64_t value = 7;
    EXPECT_EQ(cucore_memory_resource_pool_attribute(managed, CUCORE_POOL_ATTRIBUTE_RELEASE_THRESHOLD, &value),
              CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(value, 0u) << "out cleared";
    EXPECT_NE(message().find("pool"), std::string::npos) << message();
    EXPECT_EQ(cucore_memory_resource_set_pool_attribute(managed, CUCORE_POOL_ATTRIBUTE_RELEASE_THRESHOLD, 1 << 20),
              CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(cucore_memory_resource_trim(managed, 0), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(cucore_memory_resource_set_peer_access(managed, d1_, CUCORE_ACCESS_READ_WRITE),
              CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(fake::calls(), 0);
    cucore_memory_resource_release(managed);
}

// Managed memory is all it needs: no memory pools, no CUDA 13 driver.

TEST_F(ManagedMemoryTest, NeedsManagedMemoryOnly) {
    fake::set_attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 0, 0);
    fake::set_driver_version(12040);
    cucore_memory_resource_t *managed = create(nullptr, d0_);
    ASSERT_NE(managed, nullptr);
    cucore_buffer_t *b = alloc(managed, 32, nullptr);
    EXPECT_NE(b, nullptr);
    cucore_buffer_release(b);
    cucore_memory_resource_release(managed);
    fake::set_attribute(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 0, 0);
    cucore_memory_resource_t *r = reinterpret_cast<cucore_memory_resource_t *>(0x1);
    EXPECT_EQ(cucore_managed_memory_resource_create(d0_, nullptr, &r), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(r, nullptr);
    EXPECT_EQ(message().rfind("cucore_managed_memory_resource_create:", 0), 0u) << message();
    EXPECT_NE(message().find("managed memory"), std::string::npos) << message();
}

// A driver without the entry point: NOT_SUPPORTED naming it, on first use.

TEST_F(ManagedMemoryTest, AMissingEntryPointIsNotSupported) {
    cucore_memory_resource_t *managed = create(nullptr, d0_);
    ASSERT_NE(managed, nullptr);
    auto &table = fake::table();
    const auto alloc_managed = table.cuMemAllocManaged;
    table.cuMemAllocManaged = nullptr;
    fake::reinstall();
    cucore_buffer_t *b = reinterpret_cast<cucore_buffer_t *>(0x1);
    EXPECT_EQ(cucore_memory_resource_allocate(managed, 64, nullptr, &b), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(b, nullptr);
    EXPECT_NE(message().find("cuMemAllocManaged"), std::string::npos) << message();
    table.cuMemAllocManaged = alloc_managed;
    fake::reinstall();
    cucore_memory_resource_release(managed);
}

// Copies between managed memory and device memory in both directions.

TEST_F(ManagedMemoryTest, CopiesToAndFromDeviceMemory) {
    cucore_memory_resource_t *managed = create(nullptr, d1_), *pool = nullptr;
    ASSERT_NE(managed, nullptr);
    ASSERT_EQ(cucore_device_memory_resource_get_default(d0_, &pool), CUCORE_SUCCESS);
    cucore_buffer_t *m = alloc(managed, 512, nullptr), *d = alloc(pool, 512, s0_);
    const Bytes data = pattern(512, 21);
    write(d, 0, data);
    ASSERT_EQ(cucore_buffer_copy(m, d, s0_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(read_all(m), data);
    ASSERT_EQ(cucore_buffer_fill(d, 0, 1, s0_), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_buffer_copy(d, m, s0_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(read_all(d), data);
    for (cucore_buffer_t *b : {m, d}) cucore_buffer_release(b);
    cucore_memory_resource_release(pool);
    cucore_memory_resource_release(managed);
}

// ---- Managed pools ------------------------------------------------------------------

TEST_F(ManagedMemoryTest, ManagedPoolGivesManagedBuffersEverywhereReachable) {
    cucore_memory_resource_t *managed = managed_pool(d0_);
    ASSERT_NE(managed, nullptr);
    EXPECT_EQ(fake::counters().pools, 1);
    EXPECT_EQ(kind_of(managed), CUCORE_MEMORY_RESOURCE_MANAGED);
    int id = 9, device_ok = 9, host_ok = 9;
    ASSERT_EQ(cucore_memory_resource_device_id(managed, &id), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_accessibility(managed, &device_ok, &host_ok), CUCORE_SUCCESS);
    EXPECT_EQ(id, 0);
    EXPECT_EQ(device_ok, 1);
    EXPECT_EQ(host_ok, 1);
    int managed_flag = 9;
    ASSERT_EQ(cucore_memory_resource_is_managed(managed, &managed_flag), CUCORE_SUCCESS);
    EXPECT_EQ(managed_flag, 1);
    cucore_memory_resource_t *device_pool = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_create(d0_, nullptr, &device_pool), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_is_managed(device_pool, &managed_flag), CUCORE_SUCCESS);
    EXPECT_EQ(managed_flag, 0) << "a device pool is not managed";
    int ordered = 9;
    ASSERT_EQ(cucore_memory_resource_is_stream_ordered(device_pool, &ordered), CUCORE_SUCCESS);
    EXPECT_EQ(ordered, 1) << "a pool allocates in stream order";
    cucore_memory_resource_t *legacy = nullptr;
    ASSERT_EQ(cucore_legacy_pinned_memory_resource_create(d0_, &legacy), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_is_stream_ordered(legacy, &ordered), CUCORE_SUCCESS);
    EXPECT_EQ(ordered, 0) << "legacy pinned memory is synchronous";
    EXPECT_EQ(cucore_memory_resource_is_stream_ordered(legacy, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_memory_resource_release(legacy);
    cucore_memory_resource_release(device_pool);
    EXPECT_EQ(cucore_memory_resource_is_managed(managed, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    const CUmemPoolProps props = fake::pool_props(pool_of(managed));
    EXPECT_EQ(props.allocType, CU_MEM_ALLOCATION_TYPE_MANAGED);
    EXPECT_EQ(props.location.type, CU_MEM_LOCATION_TYPE_NONE) << "no preferred location by default";
    // Stream-ordered: a stream of its device is needed.
    cucore_buffer_t *none = reinterpret_cast<cucore_buffer_t *>(0x1);
    EXPECT_EQ(cucore_memory_resource_allocate(managed, 128, nullptr, &none), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(none, nullptr);
    EXPECT_EQ(cucore_memory_resource_allocate(managed, 128, s1_, &none), CUCORE_ERROR_INVALID_ARGUMENT);
    fake::reset_calls();
    cucore_buffer_t *b = alloc(managed, 128, s0_);
    ASSERT_NE(b, nullptr);
    EXPECT_TRUE(called("cuMemAllocFromPoolAsync"));
    EXPECT_FALSE(called("cuMemAllocManaged"));
    EXPECT_EQ(fake::managed_attach_flags(address_of(b)), 0u) << "pool memory";
    cucore_stream_t *dealloc = nullptr;
    ASSERT_EQ(cucore_buffer_deallocation_stream(b, &dealloc), CUCORE_SUCCESS);
    EXPECT_EQ(dealloc, s0_);
    cucore_stream_release(dealloc);
    EXPECT_EQ(accessibility(b), (std::vector<int>{1, 1, 1}));
    // Managed memory is usable from the host directly and through copies.
    std::memset(reinterpret_cast<void *>(address_of(b)), 0x3C, 128);
    EXPECT_EQ(read_all(b), Bytes(128, 0x3C));
    ASSERT_EQ(cucore_buffer_fill(b, 0x1234, 2, s0_), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_stream_synchronize(s0_), CUCORE_SUCCESS);
    EXPECT_EQ(reinterpret_cast<const uint16_t *>(address_of(b))[63], 0x1234);
    fake::reset_calls();
    cucore_buffer_release(b);
    EXPECT_TRUE(called("cuMemFreeAsync"));
    EXPECT_FALSE(called("cuMemFree"));
    cucore_memory_resource_release(managed);
}

TEST_F(ManagedMemoryTest, ManagedPoolPreferredLocationReachesTheDriver) {
    struct Case {
        cucore_location_t preferred;
        CUmemLocationType type;
        int id;
    };
    const Case cases[] = {
        {{CUCORE_LOCATION_DEVICE, 1}, CU_MEM_LOCATION_TYPE_DEVICE, 1},
        {{CUCORE_LOCATION_HOST, 0}, CU_MEM_LOCATION_TYPE_HOST, 0},
        {{CUCORE_LOCATION_HOST_NUMA, 3}, CU_MEM_LOCATION_TYPE_HOST_NUMA, 3},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(static_cast<int>(c.type));
        cucore_managed_memory_resource_options_t o = CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
        o.use_pool = 1;
        o.preferred_location = c.preferred;
        o.release_threshold = 4096;
        cucore_memory_resource_t *managed = nullptr;
        ASSERT_EQ(cucore_managed_memory_resource_create(d0_, &o, &managed), CUCORE_SUCCESS) << message();
        const CUmemPoolProps props = fake::pool_props(pool_of(managed));
        EXPECT_EQ(props.location.type, c.type);
        EXPECT_EQ(props.location.id, c.id);
        uint64_t threshold = 0;
        ASSERT_EQ(cucore_memory_resource_pool_attribute(managed, CUCORE_POOL_ATTRIBUTE_RELEASE_THRESHOLD, &threshold),
                  CUCORE_SUCCESS);
        EXPECT_EQ(threshold, 4096u);
        cucore_memory_resource_release(managed);
    }
}

// ---- Managed buffers --------------------------------------------------------------------

TEST_F(ManagedBufferTest, FreshMemoryHasNoAdvice) {
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

TEST_F(ManagedBufferTest, AdviceRoundTrips) {
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

TEST_F(ManagedBufferTest, ViewsOfManagedMemoryAreManaged) {
    cucore_buffer_t *view = nullptr;
    ASSERT_EQ(cucore_buffer_view(b_, 1024, 1024, &view), CUCORE_SUCCESS);
    EXPECT_EQ(accessibility(view), (std::vector<int>{1, 1, 1}));
    ASSERT_EQ(cucore_buffer_advise(view, CUCORE_ADVICE_SET_READ_MOSTLY, kNone), CUCORE_SUCCESS) << message();
    EXPECT_EQ(read_mostly(view), 1);
    ASSERT_EQ(cucore_buffer_prefetch(view, kDevice1, s0_), CUCORE_SUCCESS) << message();
    EXPECT_TRUE(same(last_prefetch(view), kDevice1));
    cucore_buffer_release(view);
}

TEST_F(ManagedBufferTest, PrefetchMovesTheLastPrefetchLocation) {
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

TEST_F(ManagedBufferTest, DiscardDropsExactlyTheBuffersBytes) {
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

TEST_F(ManagedBufferTest, DiscardNeedsACuda13Driver) {
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

TEST_F(ManagedBufferTest, ZeroSizeManagedBuffersNeedNoDriver) {
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

TEST_F(ManagedBufferTest, ClosedManagedBuffersAreInvalidState) {
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

TEST_F(ManagedBufferTest, ManagedCallsAreRefusedForOtherMemory) {
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
