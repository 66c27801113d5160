// Linking: two modules (a kernel in one calls a device function of the other),
// as LTO-IR through nvJitLink with link-time optimisation, and as PTX through
// nvJitLink and through the driver's cuLink; the linked cubin runs and its
// results are compared with the host. Link errors surface the error log.
#include "kernel_gpu.hpp"

namespace {

using gpu::CompileTest;
using gpu::config;
using gpu::contains;
using gpu::Owned;

// The kernel's module: calls combine(), defined in the other module.
const char *const kCallerSource = R"(
extern __device__ float combine(float a, float b);
extern "C" __global__ void apply(const float *x, float *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = combine(x[i], 3.0f);
}
)";
// The device function's module.
const char *const kCalleeSource = R"(
__device__ float combine(float a, float b) { return a * b + 1.0f; }
)";

// Both modules' linker logs, for failure messages.
std::string logs(const cucore_linker_t *linker) {
    std::string out;
    for (auto fn : {cucore_linker_error_log, cucore_linker_info_log}) {
        std::size_t n = 0;
        if (fn(linker, nullptr, 0, &n) != CUCORE_SUCCESS) continue;
        std::string s(n + 1, '\0');
        if (fn(linker, &s[0], s.size(), &n) == CUCORE_SUCCESS) out += s.substr(0, n) + "\n";
    }
    return out;
}

class LinkerTest : public CompileTest {
protected:
    void TearDown() override {
        caller_.reset(); // before the fixture's leak check
        callee_.reset();
        CompileTest::TearDown();
    }

    // Compiles both modules with relocatable device code to `target`.
    void compile_modules(cucore_code_type_t target) {
        cucore_program_options_t o = options();
        o.relocatable_device_code = 1;
        if (target == CUCORE_CODE_LTOIR) o.link_time_optimization = 1;
        caller_ = compile(kCallerSource, target, {}, &o);
        callee_ = compile(kCalleeSource, target, {}, &o);
    }

    bool nvjitlink_available() {
        int version = 0;
        return cucore_compiler_version(CUCORE_BACKEND_NVJITLINK, &version) == CUCORE_SUCCESS;
    }

    // Links the two modules with `o` and runs the result against the host.
    void link_and_run(cucore_linker_options_t o, cucore_compiler_backend_t expect_backend) {
        ASSERT_TRUE(caller_ && callee_);
        o.arch = arch_.c_str();
        cucore_object_code_t *inputs[] = {caller_.get(), callee_.get()};
        cucore_linker_t *raw_linker = nullptr;
        CUCORE_ASSERT_OK(cucore_linker_create(inputs, 2, &o, &raw_linker));
        Owned<cucore_linker_t> linker(raw_linker);
        cucore_compiler_backend_t backend = CUCORE_BACKEND_DEFAULT;
        CUCORE_ASSERT_OK(cucore_linker_backend(linker.get(), &backend));
        EXPECT_EQ(backend, expect_backend);
        cucore_object_code_t *raw_code = nullptr;
        const cucore_status_t s = cucore_linker_link(linker.get(), CUCORE_CODE_CUBIN, &raw_code);
        ASSERT_EQ(s, CUCORE_SUCCESS) << cucore_last_error_message() << "\n" << logs(linker.get());
        Owned<cucore_object_code_t> linked(raw_code);
        cucore_code_type_t type = CUCORE_CODE_UNSET;
        CUCORE_ASSERT_OK(cucore_object_code_code_type(linked.get(), &type));
        EXPECT_EQ(type, CUCORE_CODE_CUBIN);
        // Linking again returns the same code.
        cucore_object_code_t *again = nullptr;
        CUCORE_ASSERT_OK(cucore_linker_link(linker.get(), CUCORE_CODE_CUBIN, &again));
        Owned<cucore_object_code_t> again_owned(again);
        EXPECT_EQ(gpu::code_bytes(again), gpu::code_bytes(linked.get()));
        linker.reset(); // the linked code lives on without its linker

        Owned<cucore_kernel_t> k = kernel(linked.get(), "apply");
        ASSERT_TRUE(k);
        const unsigned n = 500;
        std::vector<float> x(n);
        for (unsigned i = 0; i < n; ++i) x[i] = static_cast<float>(i) - 250.0f;
        auto dx = array(x);
        auto dout = array<float>(n);
        CUCORE_ASSERT_OK(gpu::launch(stream_.get(), config(4, 128), k.get(), static_cast<const float *>(dx.ptr()),
                                     static_cast<float *>(dout.ptr()), n));
        const std::vector<float> out = dout.download();
        for (unsigned i = 0; i < n; ++i) ASSERT_FLOAT_EQ(out[i], x[i] * 3.0f + 1.0f) << i;
    }

    Owned<cucore_object_code_t> caller_, callee_;
};

TEST_F(LinkerTest, TwoLtoIrModulesLinkedByNvJitLink) {
    if (!nvjitlink_available()) GTEST_SKIP() << "nvJitLink is not installed: " << cucore_last_error_message();
    compile_modules(CUCORE_CODE_LTOIR);
    cucore_code_type_t type = CUCORE_CODE_UNSET;
    ASSERT_TRUE(caller_);
    CUCORE_ASSERT_OK(cucore_object_code_code_type(caller_.get(), &type));
    EXPECT_EQ(type, CUCORE_CODE_LTOIR);
    cucore_linker_options_t o = CUCORE_LINKER_OPTIONS_INIT;
    o.link_time_optimization = 1;
    o.backend = CUCORE_BACKEND_NVJITLINK;
    link_and_run(o, CUCORE_BACKEND_NVJITLINK);
}

TEST_F(LinkerTest, PtxModulesLinkedByNvJitLink) {
    if (!nvjitlink_available()) GTEST_SKIP() << "nvJitLink is not installed: " << cucore_last_error_message();
    compile_modules(CUCORE_CODE_PTX);
    cucore_linker_options_t o = CUCORE_LINKER_OPTIONS_INIT;
    o.backend = CUCORE_BACKEND_NVJITLINK;
    // nvJitLink accepts only -O0 and -O3: -O2 is refused before it is called.
    o.optimization_level = CUCORE_OPTIMIZATION_LEVEL(2);
    cucore_object_code_t *inputs[2] = {caller_.get(), callee_.get()};
    cucore_linker_t *refused = nullptr;
    CUCORE_EXPECT_STATUS(cucore_linker_create(inputs, 2, &o, &refused), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(refused, nullptr);
    EXPECT_TRUE(contains(gpu::last_message(), "only -O0 and -O3")) << gpu::last_message();
    o.optimization_level = CUCORE_OPTIMIZATION_LEVEL(3);
    o.verbose = 1;
    link_and_run(o, CUCORE_BACKEND_NVJITLINK);
}

TEST_F(LinkerTest, PtxModulesLinkedByTheDriver) {
    compile_modules(CUCORE_CODE_PTX);
    cucore_linker_options_t o = CUCORE_LINKER_OPTIONS_INIT;
    o.backend = CUCORE_BACKEND_DRIVER;
    link_and_run(o, CUCORE_BACKEND_DRIVER);
}

TEST_F(LinkerTest, TheDriverRefusesLtoIr) {
    compile_modules(CUCORE_CODE_LTOIR);
    ASSERT_TRUE(caller_ && callee_);
    cucore_linker_options_t o = CUCORE_LINKER_OPTIONS_INIT;
    o.backend = CUCORE_BACKEND_DRIVER;
    o.arch = arch_.c_str();
    cucore_object_code_t *inputs[] = {caller_.get(), callee_.get()};
    cucore_linker_t *linker = nullptr;
    CUCORE_EXPECT_STATUS(cucore_linker_create(inputs, 2, &o, &linker), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(linker, nullptr);
    cucore_linker_release(linker);
}

TEST_F(LinkerTest, AnUndefinedSymbolFailsWithTheErrorLog) {
    // The caller alone: combine() is never defined.
    cucore_program_options_t po = options();
    po.relocatable_device_code = 1;
    caller_ = compile(kCallerSource, CUCORE_CODE_PTX, {}, &po);
    ASSERT_TRUE(caller_);
    for (const cucore_compiler_backend_t backend : {CUCORE_BACKEND_NVJITLINK, CUCORE_BACKEND_DRIVER}) {
        if (backend == CUCORE_BACKEND_NVJITLINK && !nvjitlink_available()) continue;
        SCOPED_TRACE(backend == CUCORE_BACKEND_DRIVER ? "driver" : "nvJitLink");
        cucore_linker_options_t o = CUCORE_LINKER_OPTIONS_INIT;
        o.backend = backend;
        o.arch = arch_.c_str();
        cucore_object_code_t *inputs[] = {caller_.get()};
        cucore_linker_t *raw_linker = nullptr;
        cucore_status_t s = cucore_linker_create(inputs, 1, &o, &raw_linker);
        Owned<cucore_linker_t> linker(raw_linker);
        if (s == CUCORE_SUCCESS) {
            cucore_object_code_t *code = nullptr;
            s = cucore_linker_link(linker.get(), CUCORE_CODE_CUBIN, &code);
            EXPECT_EQ(code, nullptr);
            cucore_object_code_release(code);
        }
        EXPECT_EQ(s, CUCORE_ERROR_COMPILATION) << cucore_last_error_message();
        const std::string message = gpu::last_message();
        EXPECT_TRUE(contains(message, "combine")) << message;
        if (linker) {
            const std::string log = logs(linker.get());
            EXPECT_TRUE(contains(log, "combine")) << log;
        }
    }
}

} // namespace
