// Launches on the fake driver: the CUlaunchConfig cuLaunchKernelEx receives
// (grid * cluster, an attribute per flag, stream, shared memory, arguments),
// every validation message, the warm hot path (one driver call), context
// binding, cucore_launch_config_validate, cluster occupancy, and every driver
// call of the launch path failing once.
#include <cstring>

#include "kernel_support.hpp"

namespace {

class LaunchTest : public KernelFixture {
  protected:
    static cucore_launch_config_t config(uint32_t gx = 1, uint32_t bx = 1) {
        cucore_launch_config_t c = CUCORE_LAUNCH_CONFIG_INIT;
        c.grid[0] = gx;
        c.block[0] = bx;
        return c;
    }
    // Expects INVALID_ARGUMENT containing `text` and no launch made.
    void expect_refused(cucore_status_t status, const std::string &text) {
        EXPECT_EQ(status, CUCORE_ERROR_INVALID_ARGUMENT) << message();
        EXPECT_NE(message().find(text), std::string::npos) << message();
        EXPECT_EQ(count_calls("cuLaunchKernelEx"), 0) << "nothing is launched";
    }
    static const CUlaunchAttribute *find(const std::vector<CUlaunchAttribute> &attributes, CUlaunchAttributeID id) {
        for (const CUlaunchAttribute &a : attributes)
            if (a.id == id) return &a;
        return nullptr;
    }
};

TEST_F(LaunchTest, TheDriverReceivesTheConfigAndArguments) {
    CUkernel raw = nullptr;
    cucore_kernel_t *k = kernel(spec({8, 4, 2}), &raw);
    cucore_launch_config_t c = CUCORE_LAUNCH_CONFIG_INIT;
    c.grid[0] = 2;
    c.grid[1] = 3;
    c.grid[2] = 0;  // counts as 1
    c.block[0] = 32;
    c.block[1] = 2;
    c.block[2] = 0;
    c.shared_memory_bytes = 128;
    const double a = 2.5;
    const uint32_t b = 0xA1B2C3D4u;
    const uint16_t d = 0x5566;
    const void *args[] = {&a, &b, &d};
    const size_t sizes[] = {8, 4, 2};
    ASSERT_EQ(cucore_launch(s0_, &c, k, args, sizes, 3), CUCORE_SUCCESS) << message();
    const std::vector<fake::LaunchRecord> launches = fake::launches();
    ASSERT_EQ(launches.size(), 1u);
    const fake::LaunchRecord &r = launches[0];
    EXPECT_EQ(r.config.gridDimX, 2u);
    EXPECT_EQ(r.config.gridDimY, 3u);
    EXPECT_EQ(r.config.gridDimZ, 1u);
    EXPECT_EQ(r.config.blockDimX, 32u);
    EXPECT_EQ(r.config.blockDimY, 2u);
    EXPECT_EQ(r.config.blockDimZ, 1u);
    EXPECT_EQ(r.config.sharedMemBytes, 128u);
    EXPECT_EQ(r.config.hStream, cu_s0_);
    EXPECT_EQ(r.config.numAttrs, 0u);
    EXPECT_EQ(r.function, fake::make_function(raw, cu_c0_)) << "the CUfunction of the stream's context";
    ASSERT_EQ(r.args.size(), 3u);
    EXPECT_EQ(std::memcmp(r.args[0].data(), &a, 8), 0);
    EXPECT_EQ(std::memcmp(r.args[1].data(), &b, 4), 0);
    EXPECT_EQ(std::memcmp(r.args[2].data(), &d, 2), 0);
    EXPECT_EQ(r.current, nullptr) << "a created stream names its context: nothing is bound";
}

TEST_F(LaunchTest, NullConfigIsOneThreadAndZeroedConfigIsTheDefault) {
    cucore_kernel_t *k = kernel(spec({}));
    ASSERT_EQ(cucore_launch(s0_, nullptr, k, nullptr, nullptr, 0), CUCORE_SUCCESS) << message();
    cucore_launch_config_t zeroed;
    std::memset(&zeroed, 0, sizeof zeroed);
    zeroed.struct_size = sizeof zeroed;
    ASSERT_EQ(cucore_launch(s0_, &zeroed, k, nullptr, nullptr, 0), CUCORE_SUCCESS) << message();
    for (const fake::LaunchRecord &r : fake::launches()) {
        EXPECT_EQ(r.config.gridDimX * r.config.gridDimY * r.config.gridDimZ, 1u);
        EXPECT_EQ(r.config.blockDimX * r.config.blockDimY * r.config.blockDimZ, 1u);
        EXPECT_EQ(r.config.sharedMemBytes, 0u);
        EXPECT_EQ(r.config.numAttrs, 0u);
    }
}

TEST_F(LaunchTest, ClusterGridCountsClusters) {
    cucore_kernel_t *k = kernel(spec({}));
    cucore_launch_config_t c = config(2, 64);
    c.grid[1] = 3;
    c.cluster[0] = 2;
    c.cluster[1] = 2;  // z: 0 counts as 1
    ASSERT_EQ(cucore_launch(s0_, &c, k, nullptr, nullptr, 0), CUCORE_SUCCESS) << message();
    const fake::LaunchRecord r = fake::launches().at(0);
    EXPECT_EQ(r.config.gridDimX, 4u);
    EXPECT_EQ(r.config.gridDimY, 6u);
    EXPECT_EQ(r.config.gridDimZ, 1u);
    ASSERT_EQ(r.attributes.size(), 1u);
    const CUlaunchAttribute *cluster = find(r.attributes, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
    ASSERT_NE(cluster, nullptr);
    EXPECT_EQ(cluster->value.clusterDim.x, 2u);
    EXPECT_EQ(cluster->value.clusterDim.y, 2u);
    EXPECT_EQ(cluster->value.clusterDim.z, 1u);
    // A grid of clusters beyond 2^32-1 blocks is refused.
    fake::reset_calls();
    c.grid[0] = 0x80000000u;
    expect_refused(cucore_launch(s0_, &c, k, nullptr, nullptr, 0), "exceeds 2^32-1 blocks");
}

TEST_F(LaunchTest, EachFlagBecomesItsAttribute) {
    cucore_kernel_t *k = kernel(spec({}));
    cucore_launch_config_t c = config(4, 32);
    c.flags = CUCORE_LAUNCH_COOPERATIVE | CUCORE_LAUNCH_PROGRAMMATIC_STREAM_SERIALIZATION | CUCORE_LAUNCH_PRIORITY;
    c.priority = -3;
    ASSERT_EQ(cucore_launch(s0_, &c, k, nullptr, nullptr, 0), CUCORE_SUCCESS) << message();
    fake::LaunchRecord r = fake::launches().at(0);
    ASSERT_EQ(r.attributes.size(), 3u);
    ASSERT_NE(find(r.attributes, CU_LAUNCH_ATTRIBUTE_COOPERATIVE), nullptr);
    EXPECT_EQ(find(r.attributes, CU_LAUNCH_ATTRIBUTE_COOPERATIVE)->value.cooperative, 1);
    ASSERT_NE(find(r.attributes, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION), nullptr);
    EXPECT_EQ(find(r.attributes, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
                  ->value.programmaticStreamSerializationAllowed,
              1);
    ASSERT_NE(find(r.attributes, CU_LAUNCH_ATTRIBUTE_PRIORITY), nullptr);
    EXPECT_EQ(find(r.attributes, CU_LAUNCH_ATTRIBUTE_PRIORITY)->value.priority, -3);
    // One flag alone gives one attribute.
    for (uint32_t flag : {uint32_t{CUCORE_LAUNCH_PROGRAMMATIC_STREAM_SERIALIZATION}, uint32_t{CUCORE_LAUNCH_PRIORITY}}) {
        c.flags = flag;
        ASSERT_EQ(cucore_launch(s0_, &c, k, nullptr, nullptr, 0), CUCORE_SUCCESS) << message();
        r = fake::launches().back();
        ASSERT_EQ(r.attributes.size(), 1u);
        EXPECT_EQ(r.attributes[0].id, flag == CUCORE_LAUNCH_PRIORITY ? CU_LAUNCH_ATTRIBUTE_PRIORITY
                                                                     : CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
    }
}

TEST_F(LaunchTest, ArgumentChecksNameTheArgument) {
    cucore_kernel_t *k = kernel(spec({8, 4}, "saxpy"));
    const double a = 1;
    const float b = 2;
    const void *args[] = {&a, &b};
    const size_t sizes[] = {8, 4};
    fake::reset_calls();
    expect_refused(cucore_launch(s0_, nullptr, k, nullptr, sizes, 2), "argument 'args' is NULL with a non-zero arg_count");
    expect_refused(cucore_launch(s0_, nullptr, k, args, nullptr, 2),
                   "argument 'arg_sizes' is NULL with a non-zero arg_count");
    const void *with_null[] = {&a, nullptr};
    expect_refused(cucore_launch(s0_, nullptr, k, with_null, sizes, 2), "argument 'args[1]' is NULL");
    EXPECT_EQ(fake::calls(), 0) << "NULL checks come before any driver call";
    expect_refused(cucore_launch(s0_, nullptr, k, args, sizes, 1),
                   "argument 'arg_count' is 1, but kernel 'saxpy' has 2 parameters");
    const size_t wrong[] = {8, 8};
    expect_refused(cucore_launch(s0_, nullptr, k, args, wrong, 2),
                   "argument 'arg_sizes[1]' is 8 bytes, but parameter 1 of kernel 'saxpy' is 4 bytes");
    cucore_kernel_t *none = kernel(spec({}, "empty"));
    expect_refused(cucore_launch(s0_, nullptr, none, args, sizes, 2),
                   "argument 'arg_count' is 2, but kernel 'empty' has 0 parameters");
    cucore_kernel_t *one = kernel(spec({4}, "one"));
    expect_refused(cucore_launch(s0_, nullptr, one, nullptr, nullptr, 0),
                   "argument 'arg_count' is 0, but kernel 'one' has 1 parameter");
    ASSERT_EQ(cucore_launch(s0_, nullptr, k, args, sizes, 2), CUCORE_SUCCESS) << message();
}

TEST_F(LaunchTest, UnknownParamInfoSkipsTheCountAndSizeChecks) {
    fake::KernelSpec s = spec({4});
    s.param_info_supported = false;
    cucore_kernel_t *k = kernel(s);
    const double wide = 1;
    const void *args[] = {&wide};
    const size_t sizes[] = {8};
    ASSERT_EQ(cucore_launch(s0_, nullptr, k, args, sizes, 1), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::launches().size(), 1u);
}

TEST_F(LaunchTest, ConfigChecksAgainstTheKernel) {
    fake::KernelSpec s = spec({}, "tiled");
    s.max_threads_per_block = 256;
    s.max_dynamic_shared_bytes = 1000;
    CUkernel raw = nullptr;
    cucore_kernel_t *k = kernel(s, &raw);
    cucore_launch_config_t c = config(1, 16);
    c.block[1] = 17;
    fake::reset_calls();
    expect_refused(cucore_launch(s0_, &c, k, nullptr, nullptr, 0),
                   "block 16x17x1 has 272 threads, more than the 256 threads per block kernel 'tiled' allows on "
                   "device 0");
    c = config(1, 256);
    c.shared_memory_bytes = 1001;
    expect_refused(cucore_launch(s0_, &c, k, nullptr, nullptr, 0),
                   "shared_memory_bytes 1001 is above the 1000 bytes of dynamic shared memory kernel 'tiled' "
                   "allows on device 0");
    // Raising the allowance through the library lets the launch through...
    ASSERT_EQ(cucore_kernel_set_attribute(k, d0_, CUCORE_KERNEL_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 2000),
              CUCORE_SUCCESS);
    fake::reset_calls();
    ASSERT_EQ(cucore_launch(s0_, &c, k, nullptr, nullptr, 0), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::call_log(), std::vector<std::string>{"cuLaunchKernelEx"}) << "the cached allowance was updated";
    // ... and so does raising it behind the library's back (re-read once).
    c.shared_memory_bytes = 3000;
    ASSERT_EQ(fake::table().cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 4000, raw, 0),
              CUDA_SUCCESS);
    fake::reset_calls();
    ASSERT_EQ(cucore_launch(s0_, &c, k, nullptr, nullptr, 0), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::call_log(), (std::vector<std::string>{"cuFuncGetAttribute", "cuLaunchKernelEx"}));
}

TEST_F(LaunchTest, ClusterNeedsComputeCapability9) {
    cucore_kernel_t *k = kernel(spec({}));
    fake::set_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0, 8);
    fake::set_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0, 6);
    cucore_launch_config_t c = config(2, 32);
    c.cluster[0] = 2;
    fake::reset_calls();
    expect_refused(cucore_launch(s0_, &c, k, nullptr, nullptr, 0),
                   "asks for a cluster, which needs compute capability 9.0; device 0 has 8.6");
    c.cluster[0] = 0;
    EXPECT_EQ(cucore_launch(s0_, &c, k, nullptr, nullptr, 0), CUCORE_SUCCESS) << message();
}

TEST_F(LaunchTest, CooperativeGridMustBeResident) {
    cucore_kernel_t *k = kernel(spec({}, "coop"));  // 4 blocks per multiprocessor
    fake::set_attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0, 10);
    cucore_launch_config_t c = config(41, 128);
    c.shared_memory_bytes = 512;
    c.flags = CUCORE_LAUNCH_COOPERATIVE;
    fake::reset_calls();
    expect_refused(cucore_launch(s0_, &c, k, nullptr, nullptr, 0),
                   "a cooperative grid of 41 blocks (41x1x1) is larger than the 40 blocks that can be resident at "
                   "once on device 0 (4 per multiprocessor x 10 multiprocessors for kernel 'coop')");
    const fake::OccupancyCall call = fake::last_occupancy();
    EXPECT_EQ(call.block_size, 128);
    EXPECT_EQ(call.dynamic_shared_bytes, 512u);
    c.grid[0] = 40;
    EXPECT_EQ(cucore_launch(s0_, &c, k, nullptr, nullptr, 0), CUCORE_SUCCESS) << message();
}

TEST_F(LaunchTest, WarmLaunchMakesOneDriverCall) {
    cucore_kernel_t *k = kernel(spec({8}));
    const uint64_t value = 7;
    const void *args[] = {&value};
    const size_t sizes[] = {8};
    const cucore_launch_config_t c = config(128, 256);
    ASSERT_EQ(cucore_launch(s0_, &c, k, args, sizes, 1), CUCORE_SUCCESS) << message();
    fake::reset_calls();
    for (int i = 0; i < 3; ++i) ASSERT_EQ(cucore_launch(s0_, &c, k, args, sizes, 1), CUCORE_SUCCESS);
    EXPECT_EQ(fake::call_log(), (std::vector<std::string>{"cuLaunchKernelEx", "cuLaunchKernelEx", "cuLaunchKernelEx"}));
}

TEST_F(LaunchTest, DefaultStreamsLaunchInTheirBoundContext) {
    CUkernel raw = nullptr;
    cucore_kernel_t *k = kernel(spec({}), &raw);
    cucore_stream_t *legacy = nullptr;
    ASSERT_EQ(cucore_stream_get_legacy_default(d0_, &legacy), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_launch(legacy, nullptr, k, nullptr, nullptr, 0), CUCORE_SUCCESS) << message();
    const fake::LaunchRecord r = fake::launches().at(0);
    EXPECT_EQ(r.current, cu_c0_) << "the legacy stream means the bound context's";
    EXPECT_EQ(r.function, fake::make_function(raw, cu_c0_));
    EXPECT_EQ(r.config.hStream, CU_STREAM_LEGACY);
    EXPECT_EQ(fake::current_context(), nullptr) << "the caller's context is restored";
    cucore_stream_release(legacy);
}

TEST_F(LaunchTest, WrappedFunctionLaunchesOnlyInItsContext) {
    CUkernel raw = fake::make_kernel(spec({}, "fn"));
    CUfunction f = fake::make_function(raw, cu_c0_);
    fake::set_current_context(cu_c0_);
    cucore_kernel_t *k = nullptr;
    ASSERT_EQ(cucore_kernel_from_function(f, nullptr, nullptr, &k), CUCORE_SUCCESS) << message();
    fake::set_current_context(nullptr);
    kernels_.push_back(k);
    fake::reset_calls();
    ASSERT_EQ(cucore_launch(s0_, nullptr, k, nullptr, nullptr, 0), CUCORE_SUCCESS) << message();
    EXPECT_EQ(count_calls("cuKernelGetFunction"), 0);
    EXPECT_EQ(fake::launches().at(0).function, f);
    cucore_stream_t *other = nullptr;
    ASSERT_EQ(cucore_stream_create(d1_, nullptr, &other), CUCORE_SUCCESS);
    fake::reset_calls();
    expect_refused(cucore_launch(other, nullptr, k, nullptr, nullptr, 0),
                   "argument 'stream' belongs to another context than the wrapped CUfunction of kernel 'fn'");
    cucore_stream_release(other);
}

TEST_F(LaunchTest, ConfigStructIsChecked) {
    cucore_kernel_t *k = kernel(spec({}));
    cucore_launch_config_t c = config();
    c.flags = 0x100;
    fake::reset_calls();
    expect_refused(cucore_launch(s0_, &c, k, nullptr, nullptr, 0), "argument 'config.flags' has unknown flag bits 0x100");
    c = config();
    c.struct_size = 2;
    expect_refused(cucore_launch(s0_, &c, k, nullptr, nullptr, 0), "argument 'config' has struct_size 2");
    EXPECT_EQ(fake::calls(), 0);
    // An older caller's smaller struct reads only the fields it has.
    c = config(5, 7);
    c.struct_size = offsetof(cucore_launch_config_t, cluster);
    c.cluster[0] = 4;  // beyond its struct_size: ignored
    ASSERT_EQ(cucore_launch(s0_, &c, k, nullptr, nullptr, 0), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::launches().at(0).config.gridDimX, 5u);
    EXPECT_EQ(fake::launches().at(0).config.numAttrs, 0u);
}

TEST_F(LaunchTest, ValidateChecksDeviceLimitsWithoutLaunching) {
    fake::KernelSpec s = spec({}, "v");
    s.max_potential_cluster_size = 8;
    cucore_kernel_t *k = kernel(s);
    for (CUdevice_attribute a : {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
                                 CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z})
        fake::set_attribute(a, 0, 64);
    for (CUdevice_attribute a : {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
                                 CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z})
        fake::set_attribute(a, 0, 1000);
    cucore_launch_config_t c = config(10, 64);
    EXPECT_EQ(cucore_launch_config_validate(&c, k, d0_), CUCORE_SUCCESS) << message();
    c.block[1] = 65;
    fake::reset_calls();
    expect_refused(cucore_launch_config_validate(&c, k, d0_), "block.y is 65, above device 0's limit of 64");
    c = config(10, 64);
    c.grid[2] = 1001;
    expect_refused(cucore_launch_config_validate(&c, k, d0_),
                   "the grid has 1001 blocks in z, above device 0's limit of 1000");
    c = config(10, 64);
    c.block[1] = 32;  // 2048 threads: above the kernel's 1024
    expect_refused(cucore_launch_config_validate(&c, k, d0_),
                   "block 64x32x1 has 2048 threads, more than the 1024 threads per block kernel 'v' allows");
    c = config(10, 64);
    c.cluster[0] = 4;
    c.cluster[1] = 4;
    expect_refused(cucore_launch_config_validate(&c, k, d0_),
                   "a cluster of 4x4x1 = 16 blocks is larger than the 8 blocks per cluster kernel 'v' can use on "
                   "device 0");
    c.cluster[1] = 2;
    EXPECT_EQ(cucore_launch_config_validate(&c, k, d0_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::last_occupancy().entry, "cuOccupancyMaxPotentialClusterSize");
    c = config(10, 64);
    expect_refused(cucore_launch_config_validate(nullptr, k, d0_), "argument 'config' is NULL");
}

TEST_F(LaunchTest, ClusterOccupancyIsForwarded) {
    cucore_kernel_t *k = kernel(spec({}));
    cucore_launch_config_t c = config(6, 128);
    c.shared_memory_bytes = 256;
    c.cluster[0] = 2;
    int size = 0;
    ASSERT_EQ(cucore_launch_max_potential_cluster_size(&c, k, d0_, &size), CUCORE_SUCCESS) << message();
    EXPECT_EQ(size, 8);
    fake::OccupancyCall call = fake::last_occupancy();
    EXPECT_EQ(call.entry, "cuOccupancyMaxPotentialClusterSize");
    EXPECT_EQ(call.config.gridDimX, 6u) << "the config's cluster is ignored";
    EXPECT_EQ(call.config.blockDimX, 128u);
    EXPECT_EQ(call.config.sharedMemBytes, 256u);
    EXPECT_TRUE(call.attributes.empty());
    EXPECT_EQ(call.function, fake::make_function(static_cast<CUkernel>([&] {
                                                     void *h = nullptr;
                                                     cucore_kernel_handle(k, &h);
                                                     return h;
                                                 }()),
                                                 cu_c0_));
    int clusters = 0;
    ASSERT_EQ(cucore_launch_max_active_clusters(&c, k, d0_, &clusters), CUCORE_SUCCESS) << message();
    EXPECT_EQ(clusters, 16);
    call = fake::last_occupancy();
    EXPECT_EQ(call.entry, "cuOccupancyMaxActiveClusters");
    EXPECT_EQ(call.config.gridDimX, 12u) << "grid counts clusters";
    ASSERT_EQ(call.attributes.size(), 1u);
    EXPECT_EQ(call.attributes[0].id, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
    EXPECT_EQ(call.attributes[0].value.clusterDim.x, 2u);
    c.cluster[0] = 0;
    clusters = 3;
    EXPECT_EQ(cucore_launch_max_active_clusters(&c, k, d0_, &clusters), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(clusters, 0);
    EXPECT_NE(message().find("has no cluster"), std::string::npos) << message();
    fake::set_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0, 8);
    c.cluster[0] = 2;
    EXPECT_EQ(cucore_launch_max_potential_cluster_size(&c, k, d0_, &size), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_NE(message().find("cluster occupancy needs compute capability 9.0"), std::string::npos) << message();
    EXPECT_EQ(cucore_launch_max_active_clusters(&c, k, d0_, &clusters), CUCORE_ERROR_NOT_SUPPORTED);
}

// Each driver call of a cold launch (function lookup, attributes, parameter
// info, the cooperative occupancy query, a default stream's binding, the
// launch) failing once: a clear status, no launch recorded on failure, nothing
// leaked, and a later launch works.
TEST_F(LaunchTest, EveryDriverCallFailingOnce) {
    expects_release_errors_ = true;
    uint64_t errors = release_errors();
    cucore_stream_t *legacy = nullptr;
    ASSERT_EQ(cucore_stream_get_legacy_default(d0_, &legacy), CUCORE_SUCCESS);
    const uint32_t value = 1;
    const void *args[] = {&value};
    const size_t sizes[] = {4};
    cucore_launch_config_t c = config(8, 64);
    c.flags = CUCORE_LAUNCH_COOPERATIVE;
    for (long n = 1;; ++n) {
        SCOPED_TRACE(n);
        CUkernel raw = fake::make_kernel(spec({4}));
        cucore_kernel_t *k = nullptr;
        ASSERT_EQ(cucore_kernel_from_handle(raw, nullptr, nullptr, &k), CUCORE_SUCCESS);
        const size_t launches_before = fake::launches().size();
        fake::reset_calls();
        fake::fail_call(n);
        const cucore_status_t status = cucore_launch(legacy, &c, k, args, sizes, 1);
        const bool injected = fake::calls() >= n;
        fake::fail_call(0);
        fake::set_current_context(nullptr);
        if (!injected) {
            EXPECT_EQ(status, CUCORE_SUCCESS) << message();
            cucore_kernel_release(k);
            break;
        }
        if (status == CUCORE_SUCCESS) {
            EXPECT_GT(release_errors(), errors) << "call " << n << " failed silently";
            errors = release_errors();
        } else {
            EXPECT_NE(message().find("CUDA_ERROR_UNKNOWN"), std::string::npos) << message();
            EXPECT_EQ(fake::launches().size(), launches_before) << "a failed launch launched";
            // The same kernel launches once the driver works again.
            EXPECT_EQ(cucore_launch(legacy, &c, k, args, sizes, 1), CUCORE_SUCCESS) << message();
        }
        EXPECT_EQ(cucore_kernel_release(k), CUCORE_SUCCESS);
        ASSERT_LT(n, 100);
    }
    cucore_stream_release(legacy);
}

}  // namespace
