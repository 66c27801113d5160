// Real compiles (no GPU needed): NVRTC to PTX, cubin and LTO-IR, compile
// errors, name expressions, nvJitLink LTO of two modules, PTX programs and
// libNVVM. Each test skips with the reason when its compiler is missing.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <thread>

#include <sys/stat.h>
#include <unistd.h>

#include "compile_support.hpp"

namespace {

const char *kSaxpy = R"(
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
__device__ float scale_factor = 2.0f;
)";

const char *kTemplates = R"(
template <typename T> __global__ void fill(T *out, T value) { out[threadIdx.x] = value; }
namespace ns { __global__ void plain(int *p) { *p = 1; } }
)";

bool is_elf(const std::string &bytes) { return bytes.size() > 4 && bytes.compare(0, 4, "\x7f" "ELF") == 0; }

class ProgramCompileTest : public CompileFixture {
  protected:
    cucore_object_code_t *compile(cucore_program_t *p, cucore_code_type_t target,
                                  std::vector<const char *> names = {}) {
        cucore_object_code_t *o = nullptr;
        EXPECT_EQ(cucore_program_compile(p, target, names.data(), names.size(), nullptr, &o), CUCORE_SUCCESS)
            << message();
        return o;
    }
};

TEST_F(ProgramCompileTest, CxxToPtxCubinAndLtoir) {
    CUCORE_REQUIRE_COMPILER(CUCORE_BACKEND_NVRTC, "NVRTC");
    cucore_program_t *p = program(kSaxpy);
    ASSERT_NE(p, nullptr);
    cucore_object_code_t *ptx = compile(p, CUCORE_CODE_PTX);
    ASSERT_NE(ptx, nullptr);
    const std::string text = bytes_of(ptx);
    EXPECT_NE(text.find(".entry saxpy"), std::string::npos) << text.substr(0, 400);
    EXPECT_NE(text.find(".target sm_90"), std::string::npos);
    EXPECT_EQ(text.find('\0'), std::string::npos) << "PTX is text without the terminating NUL";
    cucore_code_type_t type = CUCORE_CODE_UNSET;
    EXPECT_EQ(cucore_object_code_code_type(ptx, &type), CUCORE_SUCCESS);
    EXPECT_EQ(type, CUCORE_CODE_PTX);
    const char *name = nullptr;
    EXPECT_EQ(cucore_object_code_name(ptx, &name), CUCORE_SUCCESS);
    EXPECT_STREQ(name, "default_program");

    cucore_object_code_t *cubin = compile(p, CUCORE_CODE_CUBIN);
    ASSERT_NE(cubin, nullptr);
    EXPECT_TRUE(is_elf(bytes_of(cubin)));
    cucore_object_code_t *ltoir = compile(p, CUCORE_CODE_LTOIR);
    ASSERT_NE(ltoir, nullptr);
    EXPECT_GT(bytes_of(ltoir).size(), 16u);
    EXPECT_EQ(cucore_object_code_code_type(ltoir, &type), CUCORE_SUCCESS);
    EXPECT_EQ(type, CUCORE_CODE_LTOIR);
    // LTO-IR must be linked before it can be loaded.
    EXPECT_EQ(cucore_object_code_load(ltoir), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("link it first"), std::string::npos) << message();
    for (cucore_object_code_t *o : {ptx, cubin, ltoir}) cucore_object_code_release(o);
    cucore_program_release(p);
}

TEST_F(ProgramCompileTest, CompileErrorKeepsTheLog) {
    CUCORE_REQUIRE_COMPILER(CUCORE_BACKEND_NVRTC, "NVRTC");
    cucore_program_options_t o = CUCORE_PROGRAM_OPTIONS_INIT;
    o.name = "broken.cu";
    cucore_program_t *p = program("__global__ void k() { undefined_thing = 1; }\n", CUCORE_CODE_CXX, o);
    ASSERT_NE(p, nullptr);
    cucore_object_code_t *out = reinterpret_cast<cucore_object_code_t *>(1);
    EXPECT_EQ(cucore_program_compile(p, CUCORE_CODE_PTX, nullptr, 0, nullptr, &out), CUCORE_ERROR_COMPILATION);
    EXPECT_EQ(out, nullptr);
    const std::string m = message();
    EXPECT_EQ(m.rfind("cucore_program_compile: broken.cu: compilation failed:\n", 0), 0u) << m;
    EXPECT_NE(m.find("undefined_thing"), std::string::npos) << m;
    const std::string log = log_of(p);
    EXPECT_NE(log.find("broken.cu"), std::string::npos) << log;
    EXPECT_NE(log.find("error"), std::string::npos) << log;
    EXPECT_NE(m.find(log.substr(0, log.find('\n'))), std::string::npos) << "the message starts the log";
    cucore_program_release(p);
}

TEST_F(ProgramCompileTest, NameExpressionsGiveLoweredNames) {
    CUCORE_REQUIRE_COMPILER(CUCORE_BACKEND_NVRTC, "NVRTC");
    cucore_program_t *p = program(kTemplates);
    ASSERT_NE(p, nullptr);
    cucore_object_code_t *o = compile(p, CUCORE_CODE_CUBIN, {"fill<float>", "fill<int>", "ns::plain"});
    ASSERT_NE(o, nullptr);
    size_t count = 0;
    EXPECT_EQ(cucore_object_code_name_expression_count(o, &count), CUCORE_SUCCESS);
    ASSERT_EQ(count, 3u);
    const char *expression = nullptr, *lowered = nullptr;
    EXPECT_EQ(cucore_object_code_name_expression(o, 0, &expression, &lowered), CUCORE_SUCCESS);
    EXPECT_STREQ(expression, "fill<float>");
    EXPECT_STREQ(lowered, "_Z4fillIfEvPT_S0_");
    EXPECT_EQ(cucore_object_code_name_expression(o, 1, &expression, &lowered), CUCORE_SUCCESS);
    EXPECT_STREQ(lowered, "_Z4fillIiEvPT_S0_");
    EXPECT_EQ(cucore_object_code_name_expression(o, 2, &expression, &lowered), CUCORE_SUCCESS);
    EXPECT_STREQ(lowered, "_ZN2ns5plainEPi");
    EXPECT_NE(bytes_of(o).find("_Z4fillIfEvPT_S0_"), std::string::npos) << "the cubin has the symbol";
    EXPECT_EQ(cucore_object_code_name_expression(o, 3, &expression, &lowered), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(expression, nullptr);
    EXPECT_EQ(lowered, nullptr);
    // A name expression the program does not instantiate.
    cucore_object_code_t *bad = nullptr;
    const char *unknown[] = {"no_such<int>"};
    EXPECT_NE(cucore_program_compile(p, CUCORE_CODE_PTX, unknown, 1, nullptr, &bad), CUCORE_SUCCESS);
    EXPECT_EQ(bad, nullptr);
    cucore_object_code_release(o);
    cucore_program_release(p);
}

TEST_F(ProgramCompileTest, HeadersDefinesAndIncludes) {
    CUCORE_REQUIRE_COMPILER(CUCORE_BACKEND_NVRTC, "NVRTC");
    const char *names[] = {"params.cuh"};
    const char *sources[] = {"#define FACTOR 3\n"};
    const char *defines[] = {"VALUE=7"};
    cucore_program_options_t o = CUCORE_PROGRAM_OPTIONS_INIT;
    o.header_names = names;
    o.header_sources = sources;
    o.header_count = 1;
    o.defines = defines;
    o.define_count = 1;
    o.std = "c++17";
    cucore_program_t *p = program(
        "#include \"params.cuh\"\nstatic_assert(FACTOR == 3 && VALUE == 7, \"options applied\");\n"
        "__global__ void k(int *p) { if constexpr (FACTOR == 3) *p = VALUE; }\n",
        CUCORE_CODE_CXX, o);
    ASSERT_NE(p, nullptr);
    cucore_object_code_t *out = compile(p, CUCORE_CODE_PTX);
    EXPECT_NE(out, nullptr);
    cucore_object_code_release(out);
    cucore_program_release(p);
}

TEST_F(ProgramCompileTest, PchStatusSaysWhatBecameOfThePrecompiledHeader) {
    CUCORE_REQUIRE_COMPILER(CUCORE_BACKEND_NVRTC, "NVRTC");
    const std::string directory = ::testing::TempDir() + "cucore_pch_" + std::to_string(::getpid());
    ASSERT_EQ(::mkdir(directory.c_str(), 0700) == 0 || errno == EEXIST, true);
    const std::string pch_file = directory + "/header.pch";
    std::remove(pch_file.c_str());
    // A header worth precompiling, from memory (no include path is needed).
    const char *header_names[] = {"traits.cuh"};
    const char *header_sources[] = {"#pragma once\n"
                                    "template <class A, class B> struct same { static const bool value = false; };\n"
                                    "template <class A> struct same<A, A> { static const bool value = true; };\n"};
    const char *code = "#include \"traits.cuh\"\n"
                       "__global__ void k(int *p) { *p = same<int, int>::value; }\n";
    cucore_program_options_t with_header = CUCORE_PROGRAM_OPTIONS_INIT;
    with_header.header_names = header_names;
    with_header.header_sources = header_sources;
    with_header.header_count = 1;
    cucore_program_t *plain = program(code, CUCORE_CODE_CXX, with_header);
    ASSERT_NE(plain, nullptr);
    cucore_pch_status_t status = CUCORE_PCH_STATUS_FAILED;
    EXPECT_EQ(cucore_program_pch_status(plain, &status), CUCORE_SUCCESS);
    EXPECT_EQ(status, CUCORE_PCH_STATUS_NONE) << "nothing compiled yet";
    cucore_object_code_t *out = compile(plain, CUCORE_CODE_PTX);
    EXPECT_EQ(cucore_program_pch_status(plain, &status), CUCORE_SUCCESS);
    EXPECT_EQ(status, CUCORE_PCH_STATUS_NONE) << "no PCH asked for";
    cucore_object_code_release(out);
    cucore_program_release(plain);

    cucore_program_options_t o = with_header;
    o.create_pch = pch_file.c_str();
    cucore_program_t *p = program(code, CUCORE_CODE_CXX, o);
    ASSERT_NE(p, nullptr);
    out = compile(p, CUCORE_CODE_PTX);
    EXPECT_NE(out, nullptr);
    EXPECT_EQ(cucore_program_pch_status(p, &status), CUCORE_SUCCESS);
    EXPECT_EQ(status, CUCORE_PCH_STATUS_CREATED) << message();
    EXPECT_EQ(::access(pch_file.c_str(), R_OK), 0) << "the PCH file was written";
    cucore_object_code_release(out);
    cucore_program_release(p);
    std::remove(pch_file.c_str());
    ::rmdir(directory.c_str());
}

TEST_F(ProgramCompileTest, TargetsAndArguments) {
    CUCORE_REQUIRE_COMPILER(CUCORE_BACKEND_NVRTC, "NVRTC");
    cucore_program_t *p = program(kSaxpy);
    ASSERT_NE(p, nullptr);
    cucore_object_code_t *o = nullptr;
    EXPECT_EQ(cucore_program_compile(p, CUCORE_CODE_FATBIN, nullptr, 0, nullptr, &o), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("'target'"), std::string::npos);
    const char *null_name[] = {nullptr};
    EXPECT_EQ(cucore_program_compile(p, CUCORE_CODE_PTX, null_name, 1, nullptr, &o), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("name_expressions[0]"), std::string::npos) << message();
    EXPECT_EQ(cucore_program_compile(p, CUCORE_CODE_PTX, nullptr, 2, nullptr, &o), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_program_compile(p, CUCORE_CODE_PTX, nullptr, 0, nullptr, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("'object_code'"), std::string::npos);
    cucore_program_release(p);
    // A virtual architecture cannot make a cubin.
    cucore_program_options_t virt = CUCORE_PROGRAM_OPTIONS_INIT;
    virt.arch = "compute_90";
    p = program(kSaxpy, CUCORE_CODE_CXX, virt);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(cucore_program_compile(p, CUCORE_CODE_CUBIN, nullptr, 0, nullptr, &o), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("sm_"), std::string::npos) << message();
    cucore_object_code_t *ptx = compile(p, CUCORE_CODE_PTX);
    EXPECT_NE(ptx, nullptr);
    cucore_object_code_release(ptx);
    cucore_program_release(p);
}

TEST_F(ProgramCompileTest, PtxProgramCompilesToCubin) {
    CUCORE_REQUIRE_COMPILER(CUCORE_BACKEND_NVRTC, "NVRTC");
    CUCORE_REQUIRE_COMPILER(CUCORE_BACKEND_NVJITLINK, "nvJitLink");
    cucore_program_t *source = program(kSaxpy);
    ASSERT_NE(source, nullptr);
    cucore_object_code_t *ptx = compile(source, CUCORE_CODE_PTX);
    ASSERT_NE(ptx, nullptr);
    cucore_program_options_t o = CUCORE_PROGRAM_OPTIONS_INIT;
    o.name = "from_ptx";
    o.max_register_count = 32;
    cucore_program_t *p = program(bytes_of(ptx), CUCORE_CODE_PTX, o);
    ASSERT_NE(p, nullptr);
    cucore_object_code_t *cubin = compile(p, CUCORE_CODE_CUBIN);
    ASSERT_NE(cubin, nullptr);
    EXPECT_TRUE(is_elf(bytes_of(cubin)));
    cucore_object_code_t *o2 = nullptr;
    EXPECT_EQ(cucore_program_compile(p, CUCORE_CODE_PTX, nullptr, 0, nullptr, &o2), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("PTX programs compile to CUBIN"), std::string::npos) << message();
    // Broken PTX: COMPILATION naming the program, the linker's log kept.
    cucore_program_t *broken = program(".version 8.0\n.target sm_90\n.address_size 64\nthis is not ptx\n",
                                       CUCORE_CODE_PTX, o);
    ASSERT_NE(broken, nullptr);
    EXPECT_EQ(cucore_program_compile(broken, CUCORE_CODE_CUBIN, nullptr, 0, nullptr, &o2), CUCORE_ERROR_COMPILATION);
    EXPECT_NE(message().find("from_ptx"), std::string::npos) << message();
    EXPECT_FALSE(log_of(broken).empty());
    cucore_program_release(broken);
    for (cucore_object_code_t *x : {ptx, cubin}) cucore_object_code_release(x);
    cucore_program_release(p);
    cucore_program_release(source);
}

TEST_F(ProgramCompileTest, NvJitLinkLinksTwoLtoModules) {
    CUCORE_REQUIRE_COMPILER(CUCORE_BACKEND_NVRTC, "NVRTC");
    CUCORE_REQUIRE_COMPILER(CUCORE_BACKEND_NVJITLINK, "nvJitLink");
    cucore_program_options_t o = CUCORE_PROGRAM_OPTIONS_INIT;
    o.relocatable_device_code = 1;
    o.name = "caller.cu";
    cucore_program_t *caller = program(
        "extern __device__ float twice(float);\n"
        "extern \"C\" __global__ void apply(float *x) { x[threadIdx.x] = twice(x[threadIdx.x]); }\n",
        CUCORE_CODE_CXX, o);
    o.name = "callee.cu";
    cucore_program_t *callee = program("__device__ float twice(float v) { return 2.0f * v; }\n", CUCORE_CODE_CXX, o);
    ASSERT_NE(caller, nullptr);
    ASSERT_NE(callee, nullptr);
    cucore_object_code_t *inputs[2] = {compile(caller, CUCORE_CODE_LTOIR), compile(callee, CUCORE_CODE_LTOIR)};
    ASSERT_NE(inputs[0], nullptr);
    ASSERT_NE(inputs[1], nullptr);
    cucore_linker_options_t lo = CUCORE_LINKER_OPTIONS_INIT;
    lo.arch = "sm_90";
    lo.link_time_optimization = 1;
    lo.name = "lto";
    cucore_linker_t *linker = nullptr;
    ASSERT_EQ(cucore_linker_create(inputs, 2, &lo, &linker), CUCORE_SUCCESS) << message();
    cucore_compiler_backend_t backend = CUCORE_BACKEND_DEFAULT;
    EXPECT_EQ(cucore_linker_backend(linker, &backend), CUCORE_SUCCESS);
    EXPECT_EQ(backend, CUCORE_BACKEND_NVJITLINK);
    cucore_object_code_t *cubin = nullptr;
    ASSERT_EQ(cucore_linker_link(linker, CUCORE_CODE_CUBIN, &cubin), CUCORE_SUCCESS) << message();
    const std::string bytes = bytes_of(cubin);
    EXPECT_TRUE(is_elf(bytes));
    EXPECT_NE(bytes.find("apply"), std::string::npos);
    const char *name = nullptr;
    EXPECT_EQ(cucore_object_code_name(cubin, &name), CUCORE_SUCCESS);
    EXPECT_STREQ(name, "lto");
    // Linking again: the same result; another target: INVALID_STATE.
    cucore_object_code_t *again = nullptr;
    EXPECT_EQ(cucore_linker_link(linker, CUCORE_CODE_CUBIN, &again), CUCORE_SUCCESS);
    EXPECT_EQ(again, cubin);
    EXPECT_EQ(cucore_linker_link(linker, CUCORE_CODE_PTX, &again), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(again, nullptr);
    cucore_object_code_release(cubin);
    cucore_object_code_release(cubin);  // the second reference from the second link
    cucore_linker_release(linker);

    // Without the callee the link fails: COMPILATION with the error log.
    ASSERT_EQ(cucore_linker_create(inputs, 1, &lo, &linker), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_linker_link(linker, CUCORE_CODE_CUBIN, &cubin), CUCORE_ERROR_COMPILATION);
    EXPECT_NE(message().find("lto: link failed"), std::string::npos) << message();
    size_t length = 0;
    EXPECT_EQ(cucore_linker_error_log(linker, nullptr, 0, &length), CUCORE_SUCCESS);
    EXPECT_GT(length, 0u);
    std::string log(length + 1, '\0');
    EXPECT_EQ(cucore_linker_error_log(linker, log.data(), log.size(), &length), CUCORE_SUCCESS);
    EXPECT_NE(log.find("twice"), std::string::npos) << log;
    EXPECT_EQ(cucore_linker_info_log(linker, nullptr, 0, &length), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_linker_link(linker, CUCORE_CODE_CUBIN, &cubin), CUCORE_ERROR_INVALID_STATE) << "links once";
    cucore_linker_release(linker);

    // With LTO, the linker can also produce PTX.
    ASSERT_EQ(cucore_linker_create(inputs, 2, &lo, &linker), CUCORE_SUCCESS) << message();
    cucore_object_code_t *ptx = nullptr;
    ASSERT_EQ(cucore_linker_link(linker, CUCORE_CODE_PTX, &ptx), CUCORE_SUCCESS) << message();
    EXPECT_NE(bytes_of(ptx).find(".entry apply"), std::string::npos);
    cucore_object_code_release(ptx);
    cucore_linker_release(linker);
    for (cucore_object_code_t *x : inputs) cucore_object_code_release(x);
    cucore_program_release(caller);
    cucore_program_release(callee);
}

TEST_F(ProgramCompileTest, NvvmIrToPtxAndCubin) {
    CUCORE_REQUIRE_COMPILER(CUCORE_BACKEND_NVVM, "libNVVM");
    const char *ir = R"(target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @store_one(float* %p) {
  store float 1.0, float* %p
  ret void
}

!nvvm.annotations = !{!0}
!0 = !{void (float*)* @store_one, !"kernel", i32 1}
!nvvmir.version = !{!1}
!1 = !{i32 2, i32 0}
)";
    cucore_program_t *p = program(ir, CUCORE_CODE_NVVM);
    ASSERT_NE(p, nullptr);
    cucore_compiler_backend_t backend = CUCORE_BACKEND_DEFAULT;
    EXPECT_EQ(cucore_program_backend(p, &backend), CUCORE_SUCCESS);
    EXPECT_EQ(backend, CUCORE_BACKEND_NVVM);
    cucore_object_code_t *ptx = compile(p, CUCORE_CODE_PTX);
    ASSERT_NE(ptx, nullptr) << log_of(p);
    EXPECT_NE(bytes_of(ptx).find(".entry store_one"), std::string::npos) << bytes_of(ptx);
    if (has_compiler(CUCORE_BACKEND_NVJITLINK)) {
        cucore_object_code_t *cubin = compile(p, CUCORE_CODE_CUBIN);
        ASSERT_NE(cubin, nullptr);
        EXPECT_TRUE(is_elf(bytes_of(cubin)));
        cucore_object_code_release(cubin);
    }
    cucore_object_code_release(ptx);
    cucore_program_release(p);
    // Invalid IR: COMPILATION with libNVVM's log.
    p = program("this is not IR", CUCORE_CODE_NVVM);
    ASSERT_NE(p, nullptr);
    cucore_object_code_t *o = nullptr;
    EXPECT_EQ(cucore_program_compile(p, CUCORE_CODE_PTX, nullptr, 0, nullptr, &o), CUCORE_ERROR_COMPILATION);
    EXPECT_NE(message().find("default_program: compilation failed"), std::string::npos) << message();
    cucore_program_release(p);
}

TEST_F(ProgramCompileTest, ConcurrentCompilesOfOneProgram) {
    CUCORE_REQUIRE_COMPILER(CUCORE_BACKEND_NVRTC, "NVRTC");
    cucore_program_t *p = program(kSaxpy);
    ASSERT_NE(p, nullptr);
    cucore_object_code_t *results[4] = {};
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&, i] {
            EXPECT_EQ(cucore_program_compile(p, i % 2 ? CUCORE_CODE_PTX : CUCORE_CODE_CUBIN, nullptr, 0, nullptr,
                                             &results[i]),
                      CUCORE_SUCCESS);
        });
    for (std::thread &t : threads) t.join();
    EXPECT_EQ(bytes_of(results[0]), bytes_of(results[2])) << "compiles are deterministic";
    EXPECT_EQ(bytes_of(results[1]), bytes_of(results[3]));
    for (cucore_object_code_t *o : results) cucore_object_code_release(o);
    cucore_program_release(p);
}

}  // namespace
