// Kernels: every attribute and every occupancy answer equals the raw driver's
// for the same CUfunction; MAX_DYNAMIC_SHARED_SIZE_BYTES lets a launch use more
// than 48 KiB of dynamic shared memory; parameter count and layout of a known
// signature; foreign CUkernel/CUfunction wrapping.
#include "kernel_gpu.hpp"

namespace {

using gpu::CompileTest;
using gpu::config;
using gpu::contains;
using gpu::cu;
using gpu::Owned;

// A kernel with registers, static shared memory and a loop, so its attributes are not all zero.
const char *const kBusySource = R"(
extern "C" __global__ void busy(float *out, unsigned n) {
    __shared__ float tile[128];
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (unsigned k = 0; k < n; ++k) acc = acc * 0.5f + (float)(k ^ i);
    tile[threadIdx.x % 128] = acc;
    __syncthreads();
    out[i] = tile[(threadIdx.x + 1) % 128];
}
)";

class KernelTest : public CompileTest {
protected:
    void SetUp() override {
        CompileTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        code_ = compile(kBusySource);
        kernel_ = kernel(code_.get(), "busy");
        ASSERT_TRUE(kernel_);
        void *f = nullptr;
        CUCORE_ASSERT_OK(cucore_kernel_function(kernel_.get(), dev_, &f));
        function_ = static_cast<CUfunction>(f);
        void *k = nullptr;
        CUCORE_ASSERT_OK(cucore_kernel_handle(kernel_.get(), &k));
        cu_kernel_ = static_cast<CUkernel>(k);
        ASSERT_NE(function_, nullptr);
        ASSERT_NE(cu_kernel_, nullptr);
    }
    void TearDown() override {
        kernel_.reset();
        code_.reset();
        CompileTest::TearDown();
    }
    int device_attribute(CUdevice_attribute a) {
        int v = 0;
        EXPECT_EQ(cu().DeviceGetAttribute(&v, a, cu_dev_), CUDA_SUCCESS);
        return v;
    }
    Owned<cucore_object_code_t> code_;
    Owned<cucore_kernel_t> kernel_;
    CUfunction function_ = nullptr;
    CUkernel cu_kernel_ = nullptr;
};

TEST_F(KernelTest, NameIsTheSymbol) {
    const char *name = nullptr;
    CUCORE_ASSERT_OK(cucore_kernel_name(kernel_.get(), &name));
    EXPECT_STREQ(name, "busy");
}

TEST_F(KernelTest, EveryAttributeEqualsTheRawDriver) {
    gpu::ScopedContext scope(primary_);
    for (int a = CUCORE_KERNEL_ATTRIBUTE_MAX_THREADS_PER_BLOCK; a < CUCORE_KERNEL_ATTRIBUTE_COUNT; ++a) {
        SCOPED_TRACE("attribute " + std::to_string(a));
        const auto raw_attribute = static_cast<CUfunction_attribute>(a - 1);
        int raw_value = -1, raw_kernel_value = -1, value = -2;
        const CUresult r = cu().FuncGetAttribute(&raw_value, raw_attribute, function_);
        const cucore_status_t s =
            cucore_kernel_attribute(kernel_.get(), dev_, static_cast<cucore_kernel_attribute_t>(a), &value);
        if (r != CUDA_SUCCESS) {
            EXPECT_NE(s, CUCORE_SUCCESS) << "the raw driver failed with " << raw::error_name(r);
            continue;
        }
        ASSERT_EQ(s, CUCORE_SUCCESS) << cucore_last_error_message();
        EXPECT_EQ(value, raw_value);
        // The CUkernel's view on the device agrees where the driver answers it.
        if (cu().KernelGetAttribute(&raw_kernel_value, raw_attribute, cu_kernel_, cu_dev_) == CUDA_SUCCESS) {
            EXPECT_EQ(value, raw_kernel_value);
        }
    }
    // Sanity: the values mean what they say.
    int threads = 0, shared = 0, regs = 0;
    CUCORE_ASSERT_OK(cucore_kernel_attribute(kernel_.get(), dev_, CUCORE_KERNEL_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &threads));
    CUCORE_ASSERT_OK(cucore_kernel_attribute(kernel_.get(), dev_, CUCORE_KERNEL_ATTRIBUTE_SHARED_SIZE_BYTES, &shared));
    CUCORE_ASSERT_OK(cucore_kernel_attribute(kernel_.get(), dev_, CUCORE_KERNEL_ATTRIBUTE_NUM_REGS, &regs));
    EXPECT_GT(threads, 0);
    EXPECT_EQ(shared, 128 * 4);
    EXPECT_GT(regs, 0);
    int value = 0;
    CUCORE_EXPECT_STATUS(cucore_kernel_attribute(kernel_.get(), dev_, CUCORE_KERNEL_ATTRIBUTE_COUNT, &value),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_kernel_set_attribute(kernel_.get(), dev_, CUCORE_KERNEL_ATTRIBUTE_NUM_REGS, 8),
                         CUCORE_ERROR_INVALID_ARGUMENT);
}

TEST_F(KernelTest, OccupancyEqualsTheRawDriver) {
    gpu::ScopedContext scope(primary_);
    for (const unsigned block : {32u, 128u, 256u, 1024u}) {
        for (const size_t smem : {size_t{0}, size_t{4096}}) {
            SCOPED_TRACE("block " + std::to_string(block) + ", dynamic shared " + std::to_string(smem));
            int raw_blocks = -1, blocks = -2;
            CU_ASSERT_OK(cu().OccupancyMaxActiveBlocksPerMultiprocessor(&raw_blocks, function_, static_cast<int>(block),
                                                                        smem));
            CUCORE_ASSERT_OK(
                cucore_kernel_max_active_blocks_per_multiprocessor(kernel_.get(), dev_, block, smem, &blocks));
            EXPECT_EQ(blocks, raw_blocks);
            EXPECT_GT(blocks, 0);
            if (raw_blocks > 0) {
                size_t raw_bytes = 1, bytes = 2;
                CU_ASSERT_OK(cu().OccupancyAvailableDynamicSMemPerBlock(&raw_bytes, function_, raw_blocks,
                                                                        static_cast<int>(block)));
                CUCORE_ASSERT_OK(cucore_kernel_available_dynamic_shared_memory(
                    kernel_.get(), dev_, static_cast<uint32_t>(raw_blocks), block, &bytes));
                EXPECT_EQ(bytes, raw_bytes);
            }
        }
    }
    for (const unsigned limit : {0u, 64u, 256u}) {
        SCOPED_TRACE("block size limit " + std::to_string(limit));
        int raw_grid = -1, raw_block = -1, grid = -2, block = -2;
        CU_ASSERT_OK(cu().OccupancyMaxPotentialBlockSize(&raw_grid, &raw_block, function_, nullptr, 1024,
                                                         static_cast<int>(limit)));
        CUCORE_ASSERT_OK(cucore_kernel_max_potential_block_size(kernel_.get(), dev_, 1024, limit, &grid, &block));
        EXPECT_EQ(grid, raw_grid);
        EXPECT_EQ(block, raw_block);
        if (limit != 0) {
            EXPECT_LE(block, static_cast<int>(limit));
        }
    }
    CUCORE_EXPECT_STATUS(cucore_kernel_max_active_blocks_per_multiprocessor(kernel_.get(), dev_, 0, 0, nullptr),
                         CUCORE_ERROR_INVALID_ARGUMENT);
}

TEST_F(KernelTest, ClusterOccupancyEqualsTheRawDriver) {
    if (cc_major_ < 9) {
        int size = 0;
        cucore_launch_config_t c = config(8, 128);
        CUCORE_EXPECT_STATUS(cucore_launch_max_potential_cluster_size(&c, kernel_.get(), dev_, &size),
                             CUCORE_ERROR_NOT_SUPPORTED);
        GTEST_SKIP() << "clusters need compute capability 9.0; device 0 is " << cc_major_ << "." << cc_minor_;
    }
    gpu::ScopedContext scope(primary_);
    // Largest cluster for a grid of 16 blocks of 128 threads (the config's cluster is ignored).
    cucore_launch_config_t c = config(16, 128);
    CUlaunchConfig raw{};
    raw.gridDimX = 16;
    raw.gridDimY = raw.gridDimZ = 1;
    raw.blockDimX = 128;
    raw.blockDimY = raw.blockDimZ = 1;
    int raw_size = -1, size = -2;
    CU_ASSERT_OK(cu().OccupancyMaxPotentialClusterSize(&raw_size, function_, &raw));
    CUCORE_ASSERT_OK(cucore_launch_max_potential_cluster_size(&c, kernel_.get(), dev_, &size));
    EXPECT_EQ(size, raw_size);
    EXPECT_GE(size, 1);

    // Active clusters of 2 blocks: the config's grid counts clusters (8 clusters = 16 blocks).
    c = config(8, 128);
    c.cluster[0] = 2;
    c.cluster[1] = c.cluster[2] = 1;
    CUlaunchAttribute attr{};
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = 2;
    attr.value.clusterDim.y = attr.value.clusterDim.z = 1;
    raw.attrs = &attr;
    raw.numAttrs = 1;
    int raw_clusters = -1, clusters = -2;
    CU_ASSERT_OK(cu().OccupancyMaxActiveClusters(&raw_clusters, function_, &raw));
    CUCORE_ASSERT_OK(cucore_launch_max_active_clusters(&c, kernel_.get(), dev_, &clusters));
    EXPECT_EQ(clusters, raw_clusters);
    EXPECT_GT(clusters, 0);
}

TEST_F(KernelTest, MaxDynamicSharedMemoryAboveTheDefault) {
    const int optin = device_attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    constexpr int kBytes = 64 * 1024;
    if (optin < kBytes) GTEST_SKIP() << "device 0 allows only " << optin << " bytes of shared memory per block";
    const char *src = R"(
extern "C" __global__ void reverse_in_shared(const int *in, int *out, unsigned n) {
    extern __shared__ int buf[];
    for (unsigned i = threadIdx.x; i < n; i += blockDim.x) buf[i] = in[i];
    __syncthreads();
    for (unsigned i = threadIdx.x; i < n; i += blockDim.x) out[i] = buf[n - 1 - i];
}
)";
    Owned<cucore_object_code_t> code = compile(src);
    Owned<cucore_kernel_t> k = kernel(code.get(), "reverse_in_shared");
    ASSERT_TRUE(k);
    const unsigned n = kBytes / sizeof(int);
    std::vector<int> in(n);
    for (unsigned i = 0; i < n; ++i) in[i] = static_cast<int>(i * 7 + 1);
    auto din = array(in);
    auto dout = array<int>(n);
    const cucore_launch_config_t c = config(1, 256, kBytes);
    // Above the default 48 KiB without the attribute: refused before the driver.
    CUCORE_EXPECT_STATUS(gpu::launch(stream_.get(), c, k.get(), static_cast<const int *>(din.ptr()),
                                     static_cast<int *>(dout.ptr()), n),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(gpu::last_message(), "shared")) << gpu::last_message();
    CUCORE_ASSERT_OK(cucore_kernel_set_attribute(k.get(), dev_, CUCORE_KERNEL_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                 kBytes));
    int value = 0;
    CUCORE_ASSERT_OK(cucore_kernel_attribute(k.get(), dev_, CUCORE_KERNEL_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                             &value));
    EXPECT_EQ(value, kBytes);
    CUCORE_ASSERT_OK(gpu::launch(stream_.get(), c, k.get(), static_cast<const int *>(din.ptr()),
                                 static_cast<int *>(dout.ptr()), n));
    const std::vector<int> out = dout.download();
    for (unsigned i = 0; i < n; ++i) ASSERT_EQ(out[i], in[n - 1 - i]) << i;
    // A value above the device's opt-in limit is the driver's refusal, named.
    CUCORE_EXPECT_STATUS(cucore_kernel_set_attribute(k.get(), dev_,
                                                     CUCORE_KERNEL_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin + 4096),
                         CUCORE_ERROR_CUDA);
    EXPECT_TRUE(contains(gpu::last_message(), "CUDA_ERROR_")) << gpu::last_message();
}

TEST_F(KernelTest, ParameterCountAndLayout) {
    const char *src = R"(
struct Mixed { double d; int i; char c; float f[12]; long long q; };
static_assert(sizeof(Mixed) == 72, "layout");
extern "C" __global__ void params(int a, double b, char c, void *p, Mixed s, short t) {}
)";
    Owned<cucore_object_code_t> code = compile(src);
    Owned<cucore_kernel_t> k = kernel(code.get(), "params");
    ASSERT_TRUE(k);
    size_t count = 0;
    const cucore_status_t s = cucore_kernel_param_count(k.get(), &count);
    if (s == CUCORE_ERROR_NOT_SUPPORTED) GTEST_SKIP() << "driver without cuKernelGetParamInfo: " << gpu::last_message();
    ASSERT_EQ(s, CUCORE_SUCCESS) << gpu::last_message();
    ASSERT_EQ(count, 6u);
    const size_t want[6][2] = {{0, 4}, {8, 8}, {16, 1}, {24, 8}, {32, 72}, {104, 2}};
    for (size_t i = 0; i < 6; ++i) {
        size_t offset = 99, size = 99;
        CUCORE_ASSERT_OK(cucore_kernel_param_info(k.get(), i, &offset, &size));
        EXPECT_EQ(offset, want[i][0]) << "parameter " << i;
        EXPECT_EQ(size, want[i][1]) << "parameter " << i;
    }
    size_t offset = 0, size = 0;
    CUCORE_EXPECT_STATUS(cucore_kernel_param_info(k.get(), 6, &offset, &size), CUCORE_ERROR_INVALID_ARGUMENT);
}

TEST_F(KernelTest, AForeignCUfunctionLaunchesInItsContext) {
    gpu::ReleaseCounter released;
    cucore_kernel_t *wrapped = nullptr;
    {
        gpu::ScopedContext scope(primary_);
        CUCORE_ASSERT_OK(cucore_kernel_from_function(function_, gpu::ReleaseCounter::callback, &released, &wrapped));
    }
    Owned<cucore_kernel_t> k(wrapped);
    void *f = nullptr;
    CUCORE_ASSERT_OK(cucore_kernel_function(k.get(), dev_, &f));
    EXPECT_EQ(f, static_cast<void *>(function_));
    void *handle = reinterpret_cast<void *>(1);
    CUCORE_ASSERT_OK(cucore_kernel_handle(k.get(), &handle));
    EXPECT_EQ(handle, nullptr);
    // Same answers as the library's own kernel.
    int a = -1, b = -2;
    CUCORE_ASSERT_OK(cucore_kernel_attribute(k.get(), dev_, CUCORE_KERNEL_ATTRIBUTE_NUM_REGS, &a));
    CUCORE_ASSERT_OK(cucore_kernel_attribute(kernel_.get(), dev_, CUCORE_KERNEL_ATTRIBUTE_NUM_REGS, &b));
    EXPECT_EQ(a, b);
    const unsigned n = 256;
    auto via_wrapped = array<float>(n), via_own = array<float>(n);
    CUCORE_ASSERT_OK(gpu::launch(stream_.get(), config(2, 128), k.get(), static_cast<float *>(via_wrapped.ptr()), 10u));
    CUCORE_ASSERT_OK(
        gpu::launch(stream_.get(), config(2, 128), kernel_.get(), static_cast<float *>(via_own.ptr()), 10u));
    const std::vector<float> x = via_wrapped.download(), y = via_own.download();
    EXPECT_EQ(x, y);
    EXPECT_NE(x[0], 0.0f);
    k.reset();
    EXPECT_EQ(released.calls.load(), 1);
}

} // namespace
