// Programs: CUDA C++ compiled with NVRTC through libcucore, run on device 0 and
// compared with host results (saxpy, a reduction, templates through name
// expressions, options that change the code), PTX programs, and compile errors
// that surface the log.
#include <numeric>

#include "kernel_gpu.hpp"

namespace {

using gpu::CompileTest;
using gpu::config;
using gpu::contains;
using gpu::Owned;

class ProgramTest : public CompileTest {};

TEST_F(ProgramTest, SaxpyToCubinMatchesTheHost) {
    Owned<cucore_object_code_t> code = compile(gpu::kSaxpySource);
    ASSERT_TRUE(code);
    cucore_code_type_t type = CUCORE_CODE_UNSET;
    CUCORE_ASSERT_OK(cucore_object_code_code_type(code.get(), &type));
    EXPECT_EQ(type, CUCORE_CODE_CUBIN);
    // A cubin is an ELF image.
    EXPECT_EQ(gpu::code_bytes(code.get()).substr(0, 4), std::string("\x7f" "ELF"));
    check_saxpy(code.get());
}

TEST_F(ProgramTest, SaxpyToPtxIsJitCompiledByTheDriver) {
    Owned<cucore_object_code_t> code = compile(gpu::kSaxpySource, CUCORE_CODE_PTX);
    ASSERT_TRUE(code);
    const std::string ptx = gpu::code_bytes(code.get());
    EXPECT_TRUE(contains(ptx, ".entry saxpy")) << ptx.substr(0, 400);
    EXPECT_TRUE(contains(ptx, ".target " + arch_)) << ptx.substr(0, 400);
    check_saxpy(code.get());
}

TEST_F(ProgramTest, ProgramInfoReportsWhatWasAskedFor) {
    Owned<cucore_program_t> p = program(gpu::kSaxpySource);
    ASSERT_TRUE(p);
    cucore_code_type_t type = CUCORE_CODE_UNSET;
    CUCORE_EXPECT_OK(cucore_program_code_type(p.get(), &type));
    EXPECT_EQ(type, CUCORE_CODE_CXX);
    cucore_compiler_backend_t backend = CUCORE_BACKEND_DEFAULT;
    CUCORE_EXPECT_OK(cucore_program_backend(p.get(), &backend));
    EXPECT_EQ(backend, CUCORE_BACKEND_NVRTC);
    const char *arch = nullptr;
    CUCORE_EXPECT_OK(cucore_program_arch(p.get(), &arch));
    ASSERT_NE(arch, nullptr);
    EXPECT_EQ(std::string(arch), arch_);
    EXPECT_GE(nvrtc_version_, 12000);
}

TEST_F(ProgramTest, DefaultArchIsTheCurrentDevice) {
    // No arch: the current context's device, else device 0; both are device 0 here.
    cucore_program_options_t o = CUCORE_PROGRAM_OPTIONS_INIT;
    Owned<cucore_program_t> p = program(gpu::kSaxpySource, &o);
    ASSERT_TRUE(p);
    const char *arch = nullptr;
    CUCORE_ASSERT_OK(cucore_program_arch(p.get(), &arch));
    EXPECT_EQ(std::string(arch), arch_);
    cucore_object_code_t *code = nullptr;
    CUCORE_ASSERT_OK(cucore_program_compile(p.get(), CUCORE_CODE_CUBIN, nullptr, 0, nullptr, &code));
    Owned<cucore_object_code_t> owned(code);
    check_saxpy(code);
}

// Every block sums its part in shared memory (a tree), then adds it with one atomicAdd.
const char *const kReduceSource = R"(
extern "C" __global__ void reduce(const int *in, unsigned long long *total, unsigned n) {
    __shared__ unsigned long long part[256];
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    part[threadIdx.x] = i < n ? (unsigned long long)in[i] : 0ull;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(total, part[0]);
}
)";

TEST_F(ProgramTest, ReductionEqualsTheHostSum) {
    Owned<cucore_object_code_t> code = compile(kReduceSource);
    Owned<cucore_kernel_t> k = kernel(code.get(), "reduce");
    ASSERT_TRUE(k);
    const unsigned n = 1u << 20;
    std::vector<int> in(n);
    for (unsigned i = 0; i < n; ++i) in[i] = static_cast<int>((i * 2654435761u) % 1000u);
    auto din = array(in);
    auto dtotal = array<unsigned long long>(1);
    dtotal.fill_zero();
    CUCORE_ASSERT_OK(gpu::launch(stream_.get(), config(n / 256, 256), k.get(), static_cast<const int *>(din.ptr()),
                                 static_cast<unsigned long long *>(dtotal.ptr()), n));
    const unsigned long long want = std::accumulate(in.begin(), in.end(), 0ull);
    EXPECT_EQ(dtotal.download()[0], want);
}

const char *const kTemplateSource = R"(
template <typename T>
__global__ void scale(T *data, T factor, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = data[i] * factor;
}
)";

TEST_F(ProgramTest, TemplatesThroughNameExpressions) {
    const std::vector<const char *> expressions = {"scale<float>", "scale<int>"};
    Owned<cucore_object_code_t> code = compile(kTemplateSource, CUCORE_CODE_CUBIN, expressions);
    ASSERT_TRUE(code);
    size_t count = 0;
    CUCORE_ASSERT_OK(cucore_object_code_name_expression_count(code.get(), &count));
    ASSERT_EQ(count, 2u);
    std::string lowered[2];
    for (size_t i = 0; i < 2; ++i) {
        const char *expr = nullptr, *low = nullptr;
        CUCORE_ASSERT_OK(cucore_object_code_name_expression(code.get(), i, &expr, &low));
        EXPECT_STREQ(expr, expressions[i]);
        lowered[i] = low;
    }
    // The Itanium mangling of the two instantiations.
    EXPECT_EQ(lowered[0], "_Z5scaleIfEvPT_S0_j");
    EXPECT_EQ(lowered[1], "_Z5scaleIiEvPT_S0_j");
    const char *expr = nullptr, *low = nullptr;
    CUCORE_EXPECT_STATUS(cucore_object_code_name_expression(code.get(), 2, &expr, &low),
                         CUCORE_ERROR_INVALID_ARGUMENT);

    const unsigned n = 300;
    {
        Owned<cucore_kernel_t> k = kernel(code.get(), "scale<float>");
        ASSERT_TRUE(k);
        const char *name = nullptr;
        CUCORE_ASSERT_OK(cucore_kernel_name(k.get(), &name));
        EXPECT_EQ(std::string(name), lowered[0]);
        std::vector<float> v(n);
        for (unsigned i = 0; i < n; ++i) v[i] = static_cast<float>(i) + 0.25f;
        auto d = array(v);
        CUCORE_ASSERT_OK(gpu::launch(stream_.get(), config(3, 128), k.get(), static_cast<float *>(d.ptr()), 2.5f, n));
        const std::vector<float> out = d.download();
        for (unsigned i = 0; i < n; ++i) ASSERT_FLOAT_EQ(out[i], v[i] * 2.5f) << i;
    }
    {
        // By its lowered name too.
        Owned<cucore_kernel_t> k = kernel(code.get(), lowered[1].c_str());
        ASSERT_TRUE(k);
        std::vector<int> v(n);
        for (unsigned i = 0; i < n; ++i) v[i] = static_cast<int>(i) - 150;
        auto d = array(v);
        CUCORE_ASSERT_OK(gpu::launch(stream_.get(), config(3, 128), k.get(), static_cast<int *>(d.ptr()), -3, n));
        const std::vector<int> out = d.download();
        for (unsigned i = 0; i < n; ++i) ASSERT_EQ(out[i], v[i] * -3) << i;
    }
    // An instantiation that was not asked for is not there.
    cucore_kernel_t *missing = nullptr;
    CUCORE_EXPECT_STATUS(cucore_object_code_get_kernel(code.get(), "scale<double>", &missing),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(missing, nullptr);
    EXPECT_TRUE(contains(gpu::last_message(), "scale<double>")) << gpu::last_message();
}

TEST_F(ProgramTest, DefinesAndFastMathOptionsReachTheCompiler) {
    const char *src = R"(
extern "C" __global__ void value(int *out) { out[0] = VALUE * 2; }
)";
    const char *defines[] = {"VALUE=21"};
    cucore_program_options_t o = options();
    o.defines = defines;
    o.define_count = 1;
    o.use_fast_math = 1;
    o.lineinfo = 1;
    Owned<cucore_program_t> p = program(src, &o);
    ASSERT_TRUE(p);
    std::size_t n = 0;
    CUCORE_ASSERT_OK(cucore_program_flags(p.get(), nullptr, 0, &n));
    std::string flags(n + 1, '\0');
    CUCORE_ASSERT_OK(cucore_program_flags(p.get(), &flags[0], flags.size(), &n));
    flags.resize(n);
    EXPECT_TRUE(contains(flags, "VALUE=21")) << flags;
    EXPECT_TRUE(contains(flags, "fast_math") || contains(flags, "fast-math")) << flags;
    cucore_object_code_t *code = nullptr;
    CUCORE_ASSERT_OK(cucore_program_compile(p.get(), CUCORE_CODE_CUBIN, nullptr, 0, nullptr, &code));
    Owned<cucore_object_code_t> owned(code);
    Owned<cucore_kernel_t> k = kernel(code, "value");
    ASSERT_TRUE(k);
    auto out = array<int>(1);
    CUCORE_ASSERT_OK(gpu::launch(stream_.get(), config(1, 1), k.get(), static_cast<int *>(out.ptr())));
    EXPECT_EQ(out.download()[0], 42);
}

TEST_F(ProgramTest, InMemoryHeadersAreIncluded) {
    const char *names[] = {"answer.cuh"};
    const char *sources[] = {"#pragma once\n__device__ inline int answer() { return 4242; }\n"};
    cucore_program_options_t o = options();
    o.header_names = names;
    o.header_sources = sources;
    o.header_count = 1;
    Owned<cucore_object_code_t> code =
        compile("#include \"answer.cuh\"\nextern \"C\" __global__ void k(int *out) { out[0] = answer(); }\n",
                CUCORE_CODE_CUBIN, {}, &o);
    Owned<cucore_kernel_t> k = kernel(code.get(), "k");
    ASSERT_TRUE(k);
    auto out = array<int>(1);
    CUCORE_ASSERT_OK(gpu::launch(stream_.get(), config(1, 1), k.get(), static_cast<int *>(out.ptr())));
    EXPECT_EQ(out.download()[0], 4242);
}

TEST_F(ProgramTest, CompileErrorSurfacesTheLog) {
    const char *src = R"(
extern "C" __global__ void broken(int *out) { out[0] = undeclared_identifier_xyz; }
)";
    Owned<cucore_program_t> p = program(src);
    ASSERT_TRUE(p);
    cucore_object_code_t *code = reinterpret_cast<cucore_object_code_t *>(this);
    CUCORE_EXPECT_STATUS(cucore_program_compile(p.get(), CUCORE_CODE_CUBIN, nullptr, 0, nullptr, &code),
                         CUCORE_ERROR_COMPILATION);
    EXPECT_EQ(code, nullptr);
    const std::string message = gpu::last_message();
    EXPECT_TRUE(contains(message, "undeclared_identifier_xyz")) << message;
    EXPECT_TRUE(contains(message, "error")) << message;
    const std::string log = gpu::program_log(p.get());
    EXPECT_TRUE(contains(log, "undeclared_identifier_xyz")) << log;
    EXPECT_TRUE(contains(log, "error")) << log;
    // A truncated copy of the log is NUL-terminated and the length is the whole log's.
    char small[8];
    std::size_t length = 0;
    CUCORE_ASSERT_OK(cucore_program_log(p.get(), small, sizeof small, &length));
    EXPECT_EQ(length, log.size());
    EXPECT_EQ(std::string(small), log.substr(0, sizeof small - 1));
    EXPECT_EQ(gpu::live(CUCORE_OBJECT_OBJECT_CODE), baseline_[CUCORE_OBJECT_OBJECT_CODE]);
}

TEST_F(ProgramTest, PtxProgramCompilesToCubin) {
    Owned<cucore_object_code_t> ptx = compile(gpu::kSaxpySource, CUCORE_CODE_PTX);
    ASSERT_TRUE(ptx);
    const std::string text = gpu::code_bytes(ptx.get());
    Owned<cucore_program_t> p = program(text, nullptr, CUCORE_CODE_PTX);
    ASSERT_TRUE(p);
    cucore_compiler_backend_t backend = CUCORE_BACKEND_DEFAULT;
    CUCORE_ASSERT_OK(cucore_program_backend(p.get(), &backend));
    EXPECT_TRUE(backend == CUCORE_BACKEND_NVJITLINK || backend == CUCORE_BACKEND_DRIVER) << backend;
    cucore_object_code_t *cubin = nullptr;
    CUCORE_ASSERT_OK(cucore_program_compile(p.get(), CUCORE_CODE_CUBIN, nullptr, 0, nullptr, &cubin));
    Owned<cucore_object_code_t> owned(cubin);
    EXPECT_EQ(gpu::code_bytes(cubin).substr(0, 4), std::string("\x7f" "ELF"));
    check_saxpy(cubin);
}

TEST_F(ProgramTest, CompilesOfDifferentProgramsRunInParallel) {
    // Four threads each compile and run their own program: results stay apart.
    constexpr int kThreads = 4;
    std::vector<std::thread> threads;
    std::vector<int> results(kThreads, -1);
    std::vector<std::string> errors(kThreads);
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            const std::string src = "extern \"C\" __global__ void k(int *out) { out[0] = " + std::to_string(100 + t) +
                                    "; }\n";
            cucore_program_options_t o = options();
            cucore_program_t *p = nullptr;
            cucore_object_code_t *code = nullptr;
            cucore_kernel_t *k = nullptr;
            if (cucore_program_create(src.c_str(), 0, CUCORE_CODE_CXX, &o, &p) != CUCORE_SUCCESS ||
                cucore_program_compile(p, CUCORE_CODE_CUBIN, nullptr, 0, nullptr, &code) != CUCORE_SUCCESS ||
                cucore_object_code_get_kernel(code, "k", &k) != CUCORE_SUCCESS) {
                errors[t] = cucore_last_error_message();
            } else {
                gpu::DeviceArray<int> out(dev_, stream_.get(), 1);
                if (gpu::launch(stream_.get(), config(1, 1), k, static_cast<int *>(out.ptr())) != CUCORE_SUCCESS)
                    errors[t] = cucore_last_error_message();
                else
                    results[t] = out.download()[0];
            }
            cucore_kernel_release(k);
            cucore_object_code_release(code);
            cucore_program_release(p);
        });
    }
    for (auto &th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) {
        EXPECT_EQ(errors[t], "") << "thread " << t;
        EXPECT_EQ(results[t], 100 + t) << "thread " << t;
    }
}

} // namespace
