// Kernels on the fake driver: wrapping foreign CUkernels and CUfunctions,
// names, attributes (the enum mapping, settable ones only), parameter info,
// occupancy queries forwarded with the right function and arguments, the
// per-context CUfunction cache, library kernels holding their owner, and every
// driver call of these paths failing once.
#include <algorithm>
#include <atomic>
#include <thread>
#include <climits>
#include <cstring>

#include "core/call_frame.hpp"
#include "core/kernel.hpp"
#include "core/stream.hpp"
#include "kernel_support.hpp"

namespace {

class KernelTest : public KernelFixture {};

void count_release(void *counter) { ++*static_cast<int *>(counter); }

TEST_F(KernelTest, FromHandleWrapsWithoutOwningAndTellsTheOwnerOnce) {
    CUkernel raw = fake::make_kernel(spec({8}, "wrapped"));
    int released = 0;
    cucore_kernel_t *k = nullptr;
    ASSERT_EQ(cucore_kernel_from_handle(raw, count_release, &released, &k), CUCORE_SUCCESS) << message();
    void *handle = nullptr;
    EXPECT_EQ(cucore_kernel_handle(k, &handle), CUCORE_SUCCESS);
    EXPECT_EQ(handle, static_cast<void *>(raw));
    ASSERT_EQ(cucore_kernel_retain(k), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_kernel_release(k), CUCORE_SUCCESS);
    EXPECT_EQ(released, 0);
    ASSERT_EQ(cucore_kernel_release(k), CUCORE_SUCCESS);
    EXPECT_EQ(released, 1);
    EXPECT_EQ(cucore_kernel_release(k), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(released, 1);
}

TEST_F(KernelTest, FailedWrapsNeverCallTheOwner) {
    int released = 0;
    cucore_kernel_t *k = reinterpret_cast<cucore_kernel_t *>(1);
    EXPECT_EQ(cucore_kernel_from_handle(nullptr, count_release, &released, &k), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(k, nullptr);
    EXPECT_NE(message().find("'cu_kernel'"), std::string::npos) << message();
    k = reinterpret_cast<cucore_kernel_t *>(1);
    EXPECT_EQ(cucore_kernel_from_function(nullptr, count_release, &released, &k), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(k, nullptr);
    // A CUfunction needs a current context to belong to.
    CUfunction f = fake::make_function(fake::make_kernel(), cu_c0_);
    EXPECT_EQ(cucore_kernel_from_function(f, count_release, &released, &k), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("no CUDA context is current"), std::string::npos) << message();
    EXPECT_EQ(released, 0);
}

TEST_F(KernelTest, FromFunctionBelongsToTheCurrentContext) {
    CUkernel raw = fake::make_kernel(spec({4}, "fn"));
    CUfunction f = fake::make_function(raw, cu_c0_);
    fake::set_current_context(cu_c0_);
    int released = 0;
    cucore_kernel_t *k = nullptr;
    ASSERT_EQ(cucore_kernel_from_function(f, count_release, &released, &k), CUCORE_SUCCESS) << message();
    fake::set_current_context(nullptr);
    void *handle = reinterpret_cast<void *>(1);
    EXPECT_EQ(cucore_kernel_handle(k, &handle), CUCORE_SUCCESS);
    EXPECT_EQ(handle, nullptr) << "a wrapped CUfunction has no CUkernel";
    void *function = nullptr;
    EXPECT_EQ(cucore_kernel_function(k, d0_, &function), CUCORE_SUCCESS) << message();
    EXPECT_EQ(function, static_cast<void *>(f));
    EXPECT_EQ(cucore_kernel_function(k, d1_, &function), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(function, nullptr);
    EXPECT_NE(message().find("belongs to a context of device 0"), std::string::npos) << message();
    const char *name = nullptr;
    EXPECT_EQ(cucore_kernel_name(k, &name), CUCORE_SUCCESS);
    EXPECT_STREQ(name, "fn");
    EXPECT_EQ(count_calls("cuFuncGetName"), 1);
    fake::reset_calls();
    int value = 0;
    EXPECT_EQ(cucore_kernel_attribute(k, d0_, CUCORE_KERNEL_ATTRIBUTE_NUM_REGS, &value), CUCORE_SUCCESS);
    EXPECT_EQ(value, CU_FUNC_ATTRIBUTE_NUM_REGS * 100 + 0);
    EXPECT_EQ(fake::call_log(), std::vector<std::string>{"cuFuncGetAttribute"});
    EXPECT_EQ(cucore_kernel_set_attribute(k, d0_, CUCORE_KERNEL_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50),
              CUCORE_SUCCESS);
    EXPECT_EQ(fake::kernel_attribute_set(raw, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 0), 50);
    EXPECT_EQ(cucore_kernel_attribute(k, d1_, CUCORE_KERNEL_ATTRIBUTE_NUM_REGS, &value), CUCORE_ERROR_INVALID_ARGUMENT);
    size_t count = 0;
    EXPECT_EQ(cucore_kernel_param_count(k, &count), CUCORE_SUCCESS);
    EXPECT_EQ(count, 1u);
    EXPECT_GE(count_calls("cuFuncGetParamInfo"), 1);
    EXPECT_EQ(cucore_kernel_release(k), CUCORE_SUCCESS);
    EXPECT_EQ(released, 1);
}

TEST_F(KernelTest, NameIsAskedOnce) {
    cucore_kernel_t *k = kernel(spec({}, "_Z6kernelPf"));
    fake::reset_calls();
    const char *first = nullptr, *second = nullptr;
    ASSERT_EQ(cucore_kernel_name(k, &first), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_kernel_name(k, &second), CUCORE_SUCCESS);
    EXPECT_STREQ(first, "_Z6kernelPf");
    EXPECT_EQ(first, second) << "the name is kept on the kernel";
    EXPECT_EQ(fake::call_log(), std::vector<std::string>{"cuKernelGetName"});
}

TEST_F(KernelTest, MissingNameEntryPointIsNotSupported) {
    cucore_kernel_t *k = kernel(spec({}));
    fake::table().cuKernelGetName = nullptr;
    fake::reinstall();
    const char *name = "x";
    EXPECT_EQ(cucore_kernel_name(k, &name), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(name, nullptr);
    EXPECT_NE(message().find("cuKernelGetName"), std::string::npos) << message();
}

TEST_F(KernelTest, EveryAttributeMapsToTheDriversValue) {
    fake::KernelSpec s = spec({});
    s.max_threads_per_block = 640;
    s.max_dynamic_shared_bytes = 12345;
    CUkernel raw = nullptr;
    cucore_kernel_t *k = kernel(s, &raw);
    for (int a = CUCORE_KERNEL_ATTRIBUTE_MAX_THREADS_PER_BLOCK; a < CUCORE_KERNEL_ATTRIBUTE_COUNT; ++a) {
        SCOPED_TRACE(a);
        int value = -1;
        fake::reset_calls();
        ASSERT_EQ(cucore_kernel_attribute(k, d1_, static_cast<cucore_kernel_attribute_t>(a), &value), CUCORE_SUCCESS)
            << message();
        EXPECT_EQ(fake::call_log(), std::vector<std::string>{"cuKernelGetAttribute"});
        const int driver = a - 1;
        const int expected = driver == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK            ? 640
                             : driver == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ? 12345
                                                                                         : driver * 100 + 1;
        EXPECT_EQ(value, expected);
    }
    for (int bad : {0, static_cast<int>(CUCORE_KERNEL_ATTRIBUTE_COUNT), 1000, 0x7ffffffe}) {
        int value = 7;
        fake::reset_calls();
        EXPECT_EQ(cucore_kernel_attribute(k, d0_, static_cast<cucore_kernel_attribute_t>(bad), &value),
                  CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(value, 0);
        EXPECT_NE(message().find("not a known kernel attribute"), std::string::npos) << message();
        EXPECT_EQ(fake::calls(), 0);
    }
}

TEST_F(KernelTest, OnlySettableAttributesAreSet) {
    CUkernel raw = nullptr;
    cucore_kernel_t *k = kernel(spec({}), &raw);
    const cucore_kernel_attribute_t settable[] = {
        CUCORE_KERNEL_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, CUCORE_KERNEL_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
        CUCORE_KERNEL_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH,       CUCORE_KERNEL_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT,
        CUCORE_KERNEL_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH,       CUCORE_KERNEL_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
        CUCORE_KERNEL_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE};
    for (int a = CUCORE_KERNEL_ATTRIBUTE_MAX_THREADS_PER_BLOCK; a < CUCORE_KERNEL_ATTRIBUTE_COUNT; ++a) {
        SCOPED_TRACE(a);
        const auto attribute = static_cast<cucore_kernel_attribute_t>(a);
        const bool is_settable = std::find(std::begin(settable), std::end(settable), attribute) != std::end(settable);
        fake::reset_calls();
        const cucore_status_t status = cucore_kernel_set_attribute(k, d1_, attribute, 10 + a);
        if (is_settable) {
            EXPECT_EQ(status, CUCORE_SUCCESS) << message();
            EXPECT_EQ(fake::kernel_attribute_set(raw, static_cast<CUfunction_attribute>(a - 1), 1), 10 + a);
            int value = 0;
            EXPECT_EQ(cucore_kernel_attribute(k, d1_, attribute, &value), CUCORE_SUCCESS);
            EXPECT_EQ(value, 10 + a);
        } else {
            EXPECT_EQ(status, CUCORE_ERROR_INVALID_ARGUMENT);
            EXPECT_NE(message().find("is read-only"), std::string::npos) << message();
            EXPECT_EQ(fake::calls(), 0);
        }
    }
    // A value the driver refuses is its error, named.
    EXPECT_EQ(cucore_kernel_set_attribute(k, d0_, CUCORE_KERNEL_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, -7),
              CUCORE_ERROR_CUDA);
    EXPECT_NE(message().find("cuKernelSetAttribute failed: CUDA_ERROR_INVALID_VALUE"), std::string::npos) << message();
    EXPECT_EQ(cucore_last_cuda_result(), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(KernelTest, ParamInfoIsFetchedOnce) {
    cucore_kernel_t *k = kernel(spec({8, 4, 4, 64, 1, 2}));
    fake::reset_calls();
    size_t count = 0;
    ASSERT_EQ(cucore_kernel_param_count(k, &count), CUCORE_SUCCESS) << message();
    EXPECT_EQ(count, 6u);
    EXPECT_EQ(count_calls("cuKernelGetParamInfo"), 7) << "six parameters and the index past the last";
    const size_t offsets[] = {0, 8, 12, 16, 80, 82}, sizes[] = {8, 4, 4, 64, 1, 2};
    for (size_t i = 0; i < 6; ++i) {
        size_t offset = 99, size = 99;
        ASSERT_EQ(cucore_kernel_param_info(k, i, &offset, &size), CUCORE_SUCCESS);
        EXPECT_EQ(offset, offsets[i]) << i;
        EXPECT_EQ(size, sizes[i]) << i;
    }
    size_t offset = 9, size = 9;
    EXPECT_EQ(cucore_kernel_param_info(k, 6, &offset, &size), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(offset, 0u);
    EXPECT_EQ(size, 0u);
    EXPECT_NE(message().find("argument 'index' is 6, but the kernel has 6 parameters"), std::string::npos)
        << message();
    EXPECT_EQ(count_calls("cuKernelGetParamInfo"), 7) << "asked once";
}

TEST_F(KernelTest, ParamInfoUnknownIsNotSupported) {
    fake::KernelSpec s = spec({4});
    s.param_info_supported = false;
    cucore_kernel_t *k = kernel(s);
    size_t count = 9;
    EXPECT_EQ(cucore_kernel_param_count(k, &count), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(count, 0u);
    EXPECT_NE(message().find("needs CUDA 12.4"), std::string::npos) << message();
    // An old driver without the entry point likewise.
    cucore_kernel_t *other = kernel(spec({4}));
    fake::table().cuKernelGetParamInfo = nullptr;
    fake::reinstall();
    size_t offset = 0, size = 0;
    EXPECT_EQ(cucore_kernel_param_info(other, 0, &offset, &size), CUCORE_ERROR_NOT_SUPPORTED);
}

TEST_F(KernelTest, ParamInfoFailureIsReportedAndRetried) {
    cucore_kernel_t *k = kernel(spec({4, 4}));
    fake::fail_entry("cuKernelGetParamInfo", CUDA_ERROR_UNKNOWN);
    size_t count = 0;
    EXPECT_EQ(cucore_kernel_param_count(k, &count), CUCORE_ERROR_CUDA);
    EXPECT_NE(message().find("cuKernelGetParamInfo failed: CUDA_ERROR_UNKNOWN"), std::string::npos) << message();
    fake::fail_entry("");
    EXPECT_EQ(cucore_kernel_param_count(k, &count), CUCORE_SUCCESS);
    EXPECT_EQ(count, 2u);
}

TEST_F(KernelTest, OccupancyIsForwardedOnThePrimaryContextsFunction) {
    CUkernel raw = nullptr;
    cucore_kernel_t *k = kernel(spec({}), &raw);
    cucore_context_t *c1 = nullptr;
    ASSERT_EQ(cucore_context_get_primary(d1_, &c1), CUCORE_SUCCESS);
    void *cu_c1 = nullptr;
    ASSERT_EQ(cucore_context_handle(c1, &cu_c1), CUCORE_SUCCESS);
    const CUfunction f1 = fake::make_function(raw, static_cast<CUcontext>(cu_c1));

    int blocks = 0;
    ASSERT_EQ(cucore_kernel_max_active_blocks_per_multiprocessor(k, d1_, 256, 1024, &blocks), CUCORE_SUCCESS)
        << message();
    EXPECT_EQ(blocks, 4);
    fake::OccupancyCall call = fake::last_occupancy();
    EXPECT_EQ(call.entry, "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags");
    EXPECT_EQ(call.function, f1);
    EXPECT_EQ(call.block_size, 256);
    EXPECT_EQ(call.dynamic_shared_bytes, 1024u);
    EXPECT_EQ(call.flags, 0u);
    EXPECT_EQ(call.current, static_cast<CUcontext>(cu_c1)) << "queries bind the primary context";
    EXPECT_EQ(fake::current_context(), nullptr) << "and restore the caller's";

    int grid = 0, block = 0;
    ASSERT_EQ(cucore_kernel_max_potential_block_size(k, d1_, 2048, 128, &grid, &block), CUCORE_SUCCESS);
    EXPECT_EQ(block, 128);
    EXPECT_EQ(grid, 4 * 132);
    call = fake::last_occupancy();
    EXPECT_EQ(call.entry, "cuOccupancyMaxPotentialBlockSize");
    EXPECT_EQ(call.function, f1);
    EXPECT_EQ(call.dynamic_shared_bytes, 2048u);
    EXPECT_EQ(call.block_size_limit, 128);

    size_t bytes = 0;
    ASSERT_EQ(cucore_kernel_available_dynamic_shared_memory(k, d1_, 3, 64, &bytes), CUCORE_SUCCESS);
    EXPECT_EQ(bytes, (size_t{228} << 10) / 3);
    call = fake::last_occupancy();
    EXPECT_EQ(call.entry, "cuOccupancyAvailableDynamicSMemPerBlock");
    EXPECT_EQ(call.num_blocks, 3);
    EXPECT_EQ(call.block_size, 64);

    fake::reset_calls();
    blocks = 5;
    EXPECT_EQ(cucore_kernel_max_active_blocks_per_multiprocessor(k, d1_, 0, 0, &blocks), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(blocks, 0);
    EXPECT_EQ(cucore_kernel_available_dynamic_shared_memory(k, d1_, 0, 64, &bytes), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_kernel_available_dynamic_shared_memory(k, d1_, 1, 0, &bytes), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_kernel_max_active_blocks_per_multiprocessor(k, d1_, 0x80000000u, 0, &blocks),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("more than the driver accepts"), std::string::npos) << message();
    EXPECT_EQ(fake::calls(), 0) << "sizes are checked before any driver call";
    void *function = nullptr;
    EXPECT_EQ(cucore_kernel_function(k, d1_, &function), CUCORE_SUCCESS);
    EXPECT_EQ(function, static_cast<void *>(f1));
    cucore_context_release(c1);
}

TEST_F(KernelTest, OneFunctionLookupPerContext) {
    CUkernel raw = nullptr;
    cucore_kernel_t *k = kernel(spec({}), &raw);
    // Twelve contexts: more than the lock-free entries hold.
    std::vector<cucore_context_t *> contexts;
    std::vector<cucore_stream_t *> streams;
    for (int i = 0; i < 12; ++i) {
        cucore_context_t *c = nullptr;
        ASSERT_EQ(cucore_context_from_handle(fake::make_foreign_context(i % 2), nullptr, nullptr, &c), CUCORE_SUCCESS);
        cucore_stream_t *s = nullptr;
        ASSERT_EQ(cucore_stream_create_in_context(c, nullptr, &s), CUCORE_SUCCESS);
        contexts.push_back(c);
        streams.push_back(s);
    }
    fake::reset_calls();
    for (int round = 0; round < 3; ++round)
        for (cucore_stream_t *s : streams) ASSERT_EQ(cucore_launch(s, nullptr, k, nullptr, nullptr, 0), CUCORE_SUCCESS) << message();
    EXPECT_EQ(count_calls("cuKernelGetFunction"), 12);
    EXPECT_EQ(count_calls("cuLaunchKernelEx"), 36);
    const std::vector<fake::LaunchRecord> launches = fake::launches();
    ASSERT_EQ(launches.size(), 36u);
    for (size_t i = 0; i < launches.size(); ++i) {
        void *cu_context = nullptr;
        cucore_context_handle(contexts[i % 12], &cu_context);
        EXPECT_EQ(launches[i].function_context, static_cast<CUcontext>(cu_context)) << i;
        EXPECT_EQ(launches[i].function, fake::make_function(raw, static_cast<CUcontext>(cu_context))) << i;
    }
    for (cucore_stream_t *s : streams) cucore_stream_release(s);
    for (cucore_context_t *c : contexts) cucore_context_release(c);
}

TEST_F(KernelTest, ConcurrentFirstLaunchesFillEachContextOnce) {
    cucore_kernel_t *k = kernel(spec({4}));
    std::vector<cucore_context_t *> contexts;
    std::vector<cucore_stream_t *> streams;
    for (int i = 0; i < 10; ++i) {  // more than the lock-free entries: the overflow list too
        cucore_context_t *c = nullptr;
        ASSERT_EQ(cucore_context_from_handle(fake::make_foreign_context(i % 2), nullptr, nullptr, &c), CUCORE_SUCCESS);
        cucore_stream_t *s = nullptr;
        ASSERT_EQ(cucore_stream_create_in_context(c, nullptr, &s), CUCORE_SUCCESS);
        contexts.push_back(c);
        streams.push_back(s);
    }
    fake::reset_calls();
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 16; ++t)
        threads.emplace_back([&, t] {
            const uint32_t value = static_cast<uint32_t>(t);
            const void *args[] = {&value};
            const size_t sizes[] = {4};
            for (int i = 0; i < 50; ++i)
                if (cucore_launch(streams[(t + i) % streams.size()], nullptr, k, args, sizes, 1) != CUCORE_SUCCESS)
                    ++failures;
        });
    for (std::thread &thread : threads) thread.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(count_calls("cuKernelGetFunction"), 10);
    EXPECT_EQ(count_calls("cuLaunchKernelEx"), 16 * 50);
    for (cucore_stream_t *s : streams) cucore_stream_release(s);
    for (cucore_context_t *c : contexts) cucore_context_release(c);
}

TEST_F(KernelTest, LibraryKernelHoldsItsOwnerAndKnowsItsName) {
    using namespace cucore;
    CUkernel raw = fake::make_kernel(spec({}, "driver_name"));
    // Any object can stand for the library owner; a stream is at hand.
    core::Ref<core::Object> owner;
    {
        core::CallFrame frame;  // as a call would: held while the library reference is taken
        owner = core::Ref<core::Object>(core::CallFrame::hold(s0_, CUCORE_OBJECT_STREAM, "s"));
    }
    core::Ref<core::Kernel> made = core::make_library_kernel(std::move(owner), raw, "looked_up_name");
    ASSERT_TRUE(made);
    cucore_stream_release(s0_);
    EXPECT_EQ(live(CUCORE_OBJECT_STREAM), 1u) << "the kernel keeps its owner";
    fake::reset_calls();
    EXPECT_STREQ(made->name(), "looked_up_name");
    EXPECT_EQ(fake::calls(), 0) << "a library kernel knows its name";
    made = nullptr;
    EXPECT_EQ(live(CUCORE_OBJECT_STREAM), 0u);
    s0_ = nullptr;
}

// Each driver call of wrapping, querying and occupancy failing once: a clear
// status and message, nothing leaked, and the next attempt works.
TEST_F(KernelTest, EveryDriverCallFailingOnce) {
    CUkernel raw = fake::make_kernel(spec({8, 4}));
    expects_release_errors_ = true;
    uint64_t errors = release_errors();
    for (long n = 1;; ++n) {
        SCOPED_TRACE(n);
        fake::reset_calls();
        fake::fail_call(n);
        cucore_kernel_t *k = nullptr;
        cucore_status_t status = cucore_kernel_from_handle(raw, nullptr, nullptr, &k);
        size_t count = 0;
        int blocks = 0, grid = 0, block = 0;
        size_t bytes = 0;
        void *function = nullptr;
        if (status == CUCORE_SUCCESS) status = cucore_kernel_param_count(k, &count);
        if (status == CUCORE_SUCCESS) status = cucore_kernel_max_active_blocks_per_multiprocessor(k, d1_, 64, 0, &blocks);
        if (status == CUCORE_SUCCESS) status = cucore_kernel_max_potential_block_size(k, d1_, 0, 0, &grid, &block);
        if (status == CUCORE_SUCCESS) status = cucore_kernel_available_dynamic_shared_memory(k, d1_, 1, 64, &bytes);
        if (status == CUCORE_SUCCESS) status = cucore_kernel_function(k, d0_, &function);
        const bool injected = fake::calls() >= n;
        fake::fail_call(0);
        fake::set_current_context(nullptr);  // a failed restore leaves the bound context current
        if (!injected) {
            EXPECT_EQ(status, CUCORE_SUCCESS) << message();
            EXPECT_EQ(count, 2u);
            cucore_kernel_release(k);
            break;
        }
        if (status == CUCORE_SUCCESS) {
            // Only restoring the caller's context failed: reported as a release error.
            EXPECT_GT(release_errors(), errors) << "call " << n << " failed silently";
            errors = release_errors();
        } else {
            EXPECT_NE(message().find("CUDA_ERROR_UNKNOWN"), std::string::npos) << message();
        }
        EXPECT_EQ(cucore_kernel_release(k), CUCORE_SUCCESS);
        EXPECT_EQ(live(CUCORE_OBJECT_KERNEL), 0u);
        ASSERT_LT(n, 100);
    }
}

}  // namespace
