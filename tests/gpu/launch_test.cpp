// Launches: a struct passed by value read back field by field, 3-D grids and
// blocks, argument checks naming the argument, a cooperative launch with a
// grid-wide sync (and a too-large cooperative grid refused), a cluster launch
// whose blocks report their cluster rank and dimensions, and launches on the
// streams of two devices.
#include <sys/stat.h>

#include <cstdlib>

#include "kernel_gpu.hpp"

namespace {

using gpu::CompileTest;
using gpu::config;
using gpu::contains;
using gpu::cu;
using gpu::Owned;

// 64 bytes of mixed fields, laid out the same by the host compiler and NVRTC.
struct Mixed {
    double d;           // 0
    int i;              // 8
    char c;             // 12
    unsigned short s;   // 14
    float f[8];         // 16
    long long q;        // 48
    unsigned char b[8]; // 56
};
static_assert(sizeof(Mixed) == 64, "Mixed is 64 bytes");

const char *const kMixedSource = R"(
struct Mixed { double d; int i; char c; unsigned short s; float f[8]; long long q; unsigned char b[8]; };
static_assert(sizeof(Mixed) == 64, "Mixed is 64 bytes");
// Writes every field back (as double) and the struct itself, after the scalar arguments.
extern "C" __global__ void read_back(int before, Mixed m, short after, double *fields, Mixed *copy) {
    fields[0] = before;
    fields[1] = m.d;
    fields[2] = m.i;
    fields[3] = m.c;
    fields[4] = m.s;
    for (int k = 0; k < 8; ++k) fields[5 + k] = m.f[k];
    fields[13] = (double)m.q;
    for (int k = 0; k < 8; ++k) fields[14 + k] = m.b[k];
    fields[22] = after;
    *copy = m;
}
)";

class LaunchTest : public CompileTest {};

TEST_F(LaunchTest, StructByValueIsReadBack) {
    Owned<cucore_object_code_t> code = compile(kMixedSource);
    Owned<cucore_kernel_t> k = kernel(code.get(), "read_back");
    ASSERT_TRUE(k);
    Mixed m{};
    m.d = -1.25e10;
    m.i = -123456;
    m.c = 'Q';
    m.s = 65000;
    for (int j = 0; j < 8; ++j) m.f[j] = 0.5f * static_cast<float>(j) - 3.0f;
    m.q = -(1ll << 40) - 7;
    for (int j = 0; j < 8; ++j) m.b[j] = static_cast<unsigned char>(250 + j);
    auto fields = array<double>(23);
    auto copy = array<Mixed>(1);
    const int before = 77;
    const short after = -5;
    CUCORE_ASSERT_OK(gpu::launch(stream_.get(), config(1, 1), k.get(), before, m, after,
                                 static_cast<double *>(fields.ptr()), static_cast<Mixed *>(copy.ptr())));
    const std::vector<double> f = fields.download();
    std::vector<double> want = {77, m.d, static_cast<double>(m.i), 'Q', 65000};
    for (float x : m.f) want.push_back(x);
    want.push_back(static_cast<double>(m.q));
    for (unsigned char x : m.b) want.push_back(x);
    want.push_back(-5);
    EXPECT_EQ(f, want);
    const Mixed back = copy.download()[0];
    EXPECT_EQ(std::memcmp(&back, &m, sizeof m), 0);
}

TEST_F(LaunchTest, FacadeCompilesAndLaunchesTypedArguments) {
    // The same work through the C++ façade: a template through a name
    // expression, a struct by value, a Buffer and scalars packed at compile time.
    const cucore::Device dev(0);
    const cucore::Stream stream = dev.create_stream();
    cucore::ProgramOptions o;
    o.arch = arch_;
    o.std = "c++17";
    const cucore::Program program = cucore::Program::create(
        std::string(kMixedSource) + "template <typename T> __global__ void fill(T *out, T value, unsigned n) {\n"
                                    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                    "    if (i < n) out[i] = value + (T)i;\n}\n",
        CUCORE_CODE_CXX, o);
    const cucore::ObjectCode code = program.compile(CUCORE_CODE_CUBIN, {"fill<double>"});
    const auto expressions = code.name_expressions();
    ASSERT_EQ(expressions.size(), 1u);
    EXPECT_EQ(expressions[0].first, "fill<double>");
    EXPECT_EQ(expressions[0].second, "_Z4fillIdEvPT_S0_j");

    const unsigned n = 1000;
    const cucore::Buffer out = dev.allocate(n * sizeof(double), stream);
    cucore::launch(stream, cucore::LaunchConfig((n + 127) / 128, 128), code.get_kernel("fill<double>"), out, 0.5, n);
    std::vector<double> got(n);
    out.copy_to_host(got, stream);
    stream.synchronize();
    for (unsigned i = 0; i < n; ++i) ASSERT_EQ(got[i], 0.5 + i) << i;

    Mixed m{};
    m.d = 3.25;
    m.i = 9;
    m.c = 'z';
    m.s = 7;
    m.q = 1ll << 50;
    m.b[7] = 200;
    const cucore::Buffer fields = dev.allocate(23 * sizeof(double), stream);
    const cucore::Buffer copy = dev.allocate(sizeof(Mixed), stream);
    cucore::launch(stream, cucore::LaunchConfig(1, 1), code.get_kernel("read_back"), 1, m, short{2}, fields, copy);
    Mixed back{};
    std::vector<double> f(23);
    copy.copy_to_host(0, &back, sizeof back, stream);
    fields.copy_to_host(f, stream);
    stream.synchronize();
    EXPECT_EQ(std::memcmp(&back, &m, sizeof m), 0);
    EXPECT_EQ(f[1], 3.25);
    EXPECT_EQ(f[13], static_cast<double>(1ll << 50));
    EXPECT_EQ(f[21], 200.0);
    EXPECT_EQ(f[22], 2.0);

    // A wrong argument type is refused with the C ABI's message, as cucore::Error
    // (where the driver gives parameter info to check against).
    const cucore::Kernel fill = code.get_kernel("fill<double>");
    std::size_t params = 0;
    if (cucore_kernel_param_count(fill.get(), &params) == CUCORE_SUCCESS) {
        CUCORE_EXPECT_THROW_STATUS(cucore::launch(stream, cucore::LaunchConfig(1, 1), fill, out, 0.5f, n),
                                   CUCORE_ERROR_INVALID_ARGUMENT);
    }
}

TEST_F(LaunchTest, ThreeDimensionalGridAndBlock) {
    const char *src = R"(
extern "C" __global__ void where(unsigned *out) {
    unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned id = block * (blockDim.x * blockDim.y * blockDim.z) + thread;
    out[id] = (blockIdx.x << 24) | (blockIdx.y << 16) | (blockIdx.z << 8) | (threadIdx.x << 4) | (threadIdx.y << 2) | threadIdx.z;
}
)";
    Owned<cucore_object_code_t> code = compile(src);
    Owned<cucore_kernel_t> k = kernel(code.get(), "where");
    ASSERT_TRUE(k);
    cucore_launch_config_t c = CUCORE_LAUNCH_CONFIG_INIT;
    const unsigned g[3] = {3, 2, 4}, b[3] = {4, 3, 2};
    for (int i = 0; i < 3; ++i) {
        c.grid[i] = g[i];
        c.block[i] = b[i];
    }
    const unsigned total = 3 * 2 * 4 * 4 * 3 * 2;
    auto out = array<unsigned>(total);
    out.fill_zero();
    CUCORE_ASSERT_OK(gpu::launch(stream_.get(), c, k.get(), static_cast<unsigned *>(out.ptr())));
    const std::vector<unsigned> got = out.download();
    unsigned id = 0;
    for (unsigned bz = 0; bz < g[2]; ++bz)
        for (unsigned by = 0; by < g[1]; ++by)
            for (unsigned bx = 0; bx < g[0]; ++bx)
                for (unsigned tz = 0; tz < b[2]; ++tz)
                    for (unsigned ty = 0; ty < b[1]; ++ty)
                        for (unsigned tx = 0; tx < b[0]; ++tx, ++id)
                            ASSERT_EQ(got[id], (bx << 24) | (by << 16) | (bz << 8) | (tx << 4) | (ty << 2) | tz) << id;
}

TEST_F(LaunchTest, WrongArgumentsAreRefusedNamingTheArgument) {
    Owned<cucore_object_code_t> code = compile(gpu::kSaxpySource);
    Owned<cucore_kernel_t> k = kernel(code.get(), "saxpy");
    ASSERT_TRUE(k);
    size_t params = 0;
    if (cucore_kernel_param_count(k.get(), &params) == CUCORE_ERROR_NOT_SUPPORTED)
        GTEST_SKIP() << "driver without parameter info: launches are not checked";
    auto out = array<float>(1);
    float *p = static_cast<float *>(out.ptr());
    // Four arguments for five parameters.
    CUCORE_EXPECT_STATUS(gpu::launch(stream_.get(), config(1, 1), k.get(), 1.0f, p, p, p),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(gpu::last_message(), "arg_count")) << gpu::last_message();
    EXPECT_TRUE(contains(gpu::last_message(), "4")) << gpu::last_message();
    EXPECT_TRUE(contains(gpu::last_message(), "5")) << gpu::last_message();
    // A double where the kernel takes a float (argument 0), then a 64-bit count (argument 4).
    CUCORE_EXPECT_STATUS(gpu::launch(stream_.get(), config(1, 1), k.get(), 1.0, p, p, p, 1u),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(gpu::last_message(), "arg_sizes[0]")) << gpu::last_message();
    CUCORE_EXPECT_STATUS(gpu::launch(stream_.get(), config(1, 1), k.get(), 1.0f, p, p, p, std::size_t{1}),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(gpu::last_message(), "arg_sizes[4]")) << gpu::last_message();
    // A NULL argument pointer.
    const float a = 1.0f;
    const void *args[5] = {&a, &p, &p, nullptr, &a};
    const size_t sizes[5] = {4, 8, 8, 8, 4};
    const cucore_launch_config_t c = config(1, 1);
    CUCORE_EXPECT_STATUS(cucore_launch(stream_.get(), &c, k.get(), args, sizes, 5), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(gpu::last_message(), "args[3]")) << gpu::last_message();
    // A block larger than the kernel allows.
    CUCORE_EXPECT_STATUS(gpu::launch(stream_.get(), config(1, 2048), k.get(), 1.0f, p, p, p, 1u),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(gpu::last_message(), "block")) << gpu::last_message();
    // Nothing ran: the output is untouched by the refused launches.
    out.fill_zero();
    EXPECT_EQ(out.download()[0], 0.0f);
}

// cooperative_groups needs the toolkit's headers (cooperative_groups.h and
// CCCL); where they are absent the kernel synchronizes the grid by hand, which
// is equally valid because a cooperative launch guarantees that every block is
// resident at once. Returns the include paths, empty when not found.
std::vector<std::string> cooperative_groups_includes() {
    std::vector<std::string> roots;
    for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
        if (const char *v = std::getenv(var)) roots.push_back(std::string(v) + "/include");
    roots.push_back("/usr/local/cuda/include");
    roots.push_back("/usr/local/cuda-13.0/include");
    for (const std::string &root : roots) {
        struct stat st {};
        if (stat((root + "/cooperative_groups.h").c_str(), &st) == 0 &&
            stat((root + "/cccl/cuda/std/type_traits").c_str(), &st) == 0)
            return {root, root + "/cccl"};
        if (stat((root + "/cooperative_groups.h").c_str(), &st) == 0 &&
            stat((root + "/cuda/std/type_traits").c_str(), &st) == 0)
            return {root};
    }
    return {};
}

const char *const kGridSumSource = R"(
#ifdef USE_CG
#include <cooperative_groups.h>
#endif
// Every block publishes its value, the grid synchronizes, then every block sums all values.
extern "C" __global__ void grid_sum(unsigned *values, unsigned *sums, unsigned *barrier) {
    if (threadIdx.x == 0) values[blockIdx.x] = blockIdx.x + 1;
#ifdef USE_CG
    cooperative_groups::this_grid().sync();
#else
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(barrier, 1u);
        while (atomicAdd(barrier, 0u) < gridDim.x) {}
        __threadfence();
    }
    __syncthreads();
#endif
    if (threadIdx.x == 0) {
        unsigned s = 0;
        for (unsigned b = 0; b < gridDim.x; ++b) s += ((volatile unsigned *)values)[b];
        sums[blockIdx.x] = s;
    }
}
)";

TEST_F(LaunchTest, CooperativeLaunchWithAGridWideSync) {
    const std::vector<std::string> includes = cooperative_groups_includes();
    std::vector<const char *> include_ptrs;
    for (const std::string &s : includes) include_ptrs.push_back(s.c_str());
    const char *defines[] = {"USE_CG"};
    cucore_program_options_t o = options();
    if (!includes.empty()) {
        o.include_paths = include_ptrs.data();
        o.include_path_count = include_ptrs.size();
        o.defines = defines;
        o.define_count = 1;
    }
    std::printf("[ INFO     ] grid sync through %s\n",
                includes.empty() ? "a hand-written barrier (no toolkit headers found)" : "cooperative_groups");
    Owned<cucore_object_code_t> code = compile(kGridSumSource, CUCORE_CODE_CUBIN, {}, &o);
    Owned<cucore_kernel_t> k = kernel(code.get(), "grid_sum");
    ASSERT_TRUE(k);
    int per_sm = 0, sms = 0;
    CUCORE_ASSERT_OK(cucore_kernel_max_active_blocks_per_multiprocessor(k.get(), dev_, 128, 0, &per_sm));
    CU_ASSERT_OK(cu().DeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cu_dev_));
    ASSERT_GT(per_sm, 0);
    const unsigned blocks = static_cast<unsigned>(per_sm * sms); // the largest resident grid
    auto values = array<unsigned>(blocks + 1), sums = array<unsigned>(blocks), barrier = array<unsigned>(1);
    values.fill_zero();
    sums.fill_zero();
    barrier.fill_zero();
    cucore_launch_config_t c = config(blocks, 128);
    c.flags = CUCORE_LAUNCH_COOPERATIVE;
    CUCORE_ASSERT_OK(cucore_launch_config_validate(&c, k.get(), dev_));
    CUCORE_ASSERT_OK(gpu::launch(stream_.get(), c, k.get(), static_cast<unsigned *>(values.ptr()),
                                 static_cast<unsigned *>(sums.ptr()), static_cast<unsigned *>(barrier.ptr())));
    const std::vector<unsigned> got = sums.download();
    const unsigned want = blocks * (blocks + 1) / 2;
    for (unsigned b = 0; b < blocks; ++b) ASSERT_EQ(got[b], want) << "block " << b;

    // One block more than can be resident: refused before the driver, saying why.
    c.grid[0] = blocks + 1;
    CUCORE_EXPECT_STATUS(cucore_launch_config_validate(&c, k.get(), dev_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(gpu::last_message(), "cooperative")) << gpu::last_message();
    EXPECT_TRUE(contains(gpu::last_message(), std::to_string(blocks + 1))) << gpu::last_message();
    CUCORE_EXPECT_STATUS(gpu::launch(stream_.get(), c, k.get(), static_cast<unsigned *>(values.ptr()),
                                     static_cast<unsigned *>(sums.ptr()), static_cast<unsigned *>(barrier.ptr())),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(gpu::last_message(), "cooperative")) << gpu::last_message();
}

TEST_F(LaunchTest, ClusterLaunchReportsRanksAndDimensions) {
    if (cc_major_ < 9) {
        // Testable here only as a refusal; the message is checked in the unit tests too.
        Owned<cucore_object_code_t> code = compile(gpu::kSaxpySource);
        Owned<cucore_kernel_t> k = kernel(code.get(), "saxpy");
        ASSERT_TRUE(k);
        cucore_launch_config_t c = config(2, 32);
        c.cluster[0] = 2;
        CUCORE_EXPECT_STATUS(cucore_launch_config_validate(&c, k.get(), dev_), CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_TRUE(contains(gpu::last_message(), "9.0")) << gpu::last_message();
        GTEST_SKIP() << "cluster launches need compute capability 9.0; device 0 is " << cc_major_ << "." << cc_minor_
                     << " (the refusal was checked)";
    }
    const char *src = R"(
extern "C" __global__ void cluster_info(unsigned *out) {
    unsigned rank, count, id_x, id_y, dim_x, dim_y;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(count));
    asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(id_x));
    asm volatile("mov.u32 %0, %%clusterid.y;" : "=r"(id_y));
    asm volatile("mov.u32 %0, %%cluster_nctaid.x;" : "=r"(dim_x));
    asm volatile("mov.u32 %0, %%cluster_nctaid.y;" : "=r"(dim_y));
    if (threadIdx.x == 0) {
        unsigned b = blockIdx.x + gridDim.x * blockIdx.y;
        unsigned *o = out + 6 * b;
        o[0] = rank; o[1] = count; o[2] = id_x; o[3] = id_y; o[4] = dim_x; o[5] = dim_y;
    }
}
)";
    Owned<cucore_object_code_t> code = compile(src);
    Owned<cucore_kernel_t> k = kernel(code.get(), "cluster_info");
    ASSERT_TRUE(k);
    // A grid of 3 x 2 clusters of 2 x 2 blocks: 6 x 4 blocks.
    cucore_launch_config_t c = config(3, 64);
    c.grid[1] = 2;
    c.cluster[0] = 2;
    c.cluster[1] = 2;
    c.cluster[2] = 1;
    const unsigned gx = 6, gy = 4;
    auto out = array<unsigned>(6 * gx * gy);
    out.fill_zero();
    CUCORE_ASSERT_OK(gpu::launch(stream_.get(), c, k.get(), static_cast<unsigned *>(out.ptr())));
    const std::vector<unsigned> got = out.download();
    for (unsigned by = 0; by < gy; ++by) {
        for (unsigned bx = 0; bx < gx; ++bx) {
            const unsigned *o = &got[6 * (bx + gx * by)];
            SCOPED_TRACE("block (" + std::to_string(bx) + ", " + std::to_string(by) + ")");
            EXPECT_EQ(o[0], (bx % 2) + 2 * (by % 2)); // rank within the cluster, x fastest
            EXPECT_EQ(o[1], 4u);
            EXPECT_EQ(o[2], bx / 2);
            EXPECT_EQ(o[3], by / 2);
            EXPECT_EQ(o[4], 2u);
            EXPECT_EQ(o[5], 2u);
        }
    }
}

TEST_F(LaunchTest, PriorityFlagLaunchRuns) {
    Owned<cucore_object_code_t> code = compile(gpu::kSaxpySource);
    ASSERT_TRUE(code);
    int least = 0, greatest = 0;
    CUCORE_ASSERT_OK(cucore_stream_priority_range(dev_, &least, &greatest));
    Owned<cucore_kernel_t> k = kernel(code.get(), "saxpy");
    auto x = array(std::vector<float>{1, 2}), y = array(std::vector<float>{0, 0});
    auto out = array<float>(2);
    cucore_launch_config_t c = config(1, 32);
    c.flags = CUCORE_LAUNCH_PRIORITY;
    c.priority = greatest;
    CUCORE_ASSERT_OK(gpu::launch(stream_.get(), c, k.get(), 4.0f, static_cast<const float *>(x.ptr()),
                                 static_cast<const float *>(y.ptr()), static_cast<float *>(out.ptr()), 2u));
    EXPECT_EQ(out.download(), (std::vector<float>{4, 8}));
    c.flags = 1u << 20; // unknown flag bit
    CUCORE_EXPECT_STATUS(cucore_launch_config_validate(&c, k.get(), dev_), CUCORE_ERROR_INVALID_ARGUMENT);
}

TEST_F(LaunchTest, OneKernelOnTheStreamsOfTwoDevices) {
    if (device_count_ < 2) GTEST_SKIP() << "needs 2 GPUs; " << device_count_ << " present";
    Owned<cucore_object_code_t> code = compile(gpu::kSaxpySource);
    Owned<cucore_kernel_t> k = kernel(code.get(), "saxpy");
    ASSERT_TRUE(k);
    cucore_device_t *raw_dev1 = nullptr;
    CUCORE_ASSERT_OK(cucore_device_get(1, &raw_dev1));
    Owned<cucore_device_t> dev1(raw_dev1);
    int major1 = 0, minor1 = 0;
    CUCORE_ASSERT_OK(cucore_device_compute_capability(dev1.get(), &major1, &minor1));
    if (major1 != cc_major_ || minor1 != cc_minor_)
        GTEST_SKIP() << "device 1 has another architecture than device 0 (the cubin is for " << arch_ << ")";
    cucore_stream_t *raw_s1 = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_create(dev1.get(), nullptr, &raw_s1));
    Owned<cucore_stream_t> s1(raw_s1);
    const unsigned n = 64;
    std::vector<float> x(n), y(n, 1.0f);
    for (unsigned i = 0; i < n; ++i) x[i] = static_cast<float>(i);
    for (int d = 0; d < 2; ++d) {
        SCOPED_TRACE("device " + std::to_string(d));
        cucore_device_t *device = d == 0 ? dev_ : dev1.get();
        cucore_stream_t *stream = d == 0 ? stream_.get() : s1.get();
        gpu::DeviceArray<float> dx(device, stream, x), dy(device, stream, y), dout(device, stream, n);
        const float a = d == 0 ? 2.0f : 3.0f;
        CUCORE_ASSERT_OK(gpu::launch(stream, config(1, 64), k.get(), a, static_cast<const float *>(dx.ptr()),
                                     static_cast<const float *>(dy.ptr()), static_cast<float *>(dout.ptr()), n));
        const std::vector<float> out = dout.download();
        for (unsigned i = 0; i < n; ++i) ASSERT_FLOAT_EQ(out[i], a * x[i] + 1.0f) << i;
        void *f = nullptr;
        CUCORE_EXPECT_OK(cucore_kernel_function(k.get(), device, &f));
        EXPECT_NE(f, nullptr);
    }
    (void)cucore_stream_synchronize(s1.get());
}

} // namespace
