// Program options: every field's flag (through cucore_program_flags), the
// defaults, validation messages, architectures, and the program's getters.
// NVRTC is a substitute table here (creating a program never calls it), so
// these tests run whether or not NVRTC is installed.
#include <cstring>

#include "compile_support.hpp"
#include "driver/compilers.hpp"

namespace {

class ProgramOptionsTest : public CompileFixture {
  protected:
    void SetUp() override {
        CompileFixture::SetUp();
        cucore::driver::install_nvrtc_substitute(&nvrtc_, 12080);
    }
    void TearDown() override {
        cucore::driver::install_nvrtc_substitute(nullptr);
        CompileFixture::TearDown();
    }
    std::string flags(cucore_program_options_t options, cucore_code_type_t type = CUCORE_CODE_CXX) {
        cucore_program_t *p = program(type == CUCORE_CODE_NVVM ? "target triple" : "x", type, options);
        if (!p) return "<failed>";
        std::string text = flags_of(p);
        cucore_program_release(p);
        return text;
    }
    cucore_status_t create(const cucore_program_options_t &options, cucore_code_type_t type = CUCORE_CODE_CXX) {
        cucore_program_t *p = reinterpret_cast<cucore_program_t *>(1);
        cucore_status_t status = cucore_program_create("x", 0, type, &options, &p);
        EXPECT_TRUE(status == CUCORE_SUCCESS || p == nullptr) << "out-pointer cleared on failure";
        cucore_program_release(p);
        return status;
    }
    cucore::driver::NvrtcTable nvrtc_{};  // never called by create
};

TEST_F(ProgramOptionsTest, EveryFieldBecomesItsNvrtcFlag) {
    const char *defines[] = {"N=4", "DEBUG"};
    const char *undefines[] = {"OLD"};
    const char *includes[] = {"/opt/inc"};
    const char *pre[] = {"pre.h"};
    const char *header_names[] = {"h.cuh"};
    const char *header_sources[] = {"#define H 1"};
    const uint32_t errors[] = {20};
    const uint32_t suppress[] = {177, 550};
    const uint32_t warn[] = {1};
    const char *ptxas[] = {"-v"};
    const char *extra[] = {"--expt-relaxed-constexpr"};
    cucore_program_options_t o = CUCORE_PROGRAM_OPTIONS_INIT;
    o.name = "mine";
    o.arch = "sm_80";
    o.std = "c++17";
    o.defines = defines; o.define_count = 2;
    o.undefines = undefines; o.undefine_count = 1;
    o.include_paths = includes; o.include_path_count = 1;
    o.pre_includes = pre; o.pre_include_count = 1;
    o.header_names = header_names; o.header_sources = header_sources; o.header_count = 1;
    o.debug = 1;
    o.lineinfo = 1;
    o.device_code_optimize = CUCORE_TOGGLE_OFF;
    o.use_fast_math = 1;
    o.ftz = CUCORE_TOGGLE_ON;
    o.prec_sqrt = CUCORE_TOGGLE_OFF;
    o.prec_div = CUCORE_TOGGLE_ON;
    o.fma = CUCORE_TOGGLE_OFF;
    o.extra_device_vectorization = 1;
    o.max_register_count = 64;
    o.relocatable_device_code = 1;
    o.extensible_whole_program = 1;
    o.link_time_optimization = 1;
    o.device_as_default_execution_space = 1;
    o.disable_warnings = 1;
    o.brief_diagnostics = 1;
    o.no_display_error_number = 1;
    o.diag_error = errors; o.diag_error_count = 1;
    o.diag_suppress = suppress; o.diag_suppress_count = 2;
    o.diag_warn = warn; o.diag_warn_count = 1;
    o.pch = 1;
    o.create_pch = "a.pch";
    o.use_pch = "b.pch";
    o.pch_dir = "/tmp/pch";
    o.ptxas_options = ptxas; o.ptxas_option_count = 1;
    o.extra_options = extra; o.extra_option_count = 1;
    EXPECT_EQ(flags(o),
              "-arch=sm_80\n-std=c++17\n-DN=4\n-DDEBUG\n-UOLD\n-I/opt/inc\n--pre-include=pre.h\n-G\n-lineinfo\n"
              "-dopt=off\n--use_fast_math\n--ftz=true\n--prec-sqrt=false\n--prec-div=true\n--fmad=false\n"
              "--extra-device-vectorization\n--maxrregcount=64\n-rdc=true\n-ewp\n-dlto\n-default-device\n-w\n"
              "--brief-diagnostics\n--no-display-error-number\n--diag-error=20\n--diag-suppress=177\n"
              "--diag-suppress=550\n--diag-warn=1\n-pch\n--create-pch=a.pch\n--use-pch=b.pch\n--pch-dir=/tmp/pch\n"
              "-Xptxas=-v\n--expt-relaxed-constexpr\n");
    // The toggles' other sides.
    cucore_program_options_t t = CUCORE_PROGRAM_OPTIONS_INIT;
    t.device_code_optimize = CUCORE_TOGGLE_ON;
    t.ftz = CUCORE_TOGGLE_OFF;
    t.prec_sqrt = CUCORE_TOGGLE_ON;
    t.prec_div = CUCORE_TOGGLE_OFF;
    t.fma = CUCORE_TOGGLE_ON;
    EXPECT_EQ(flags(t), "-arch=sm_90\n-dopt=on\n--ftz=false\n--prec-sqrt=true\n--prec-div=false\n--fmad=true\n");
}

TEST_F(ProgramOptionsTest, DefaultsAndZeroedStructAreTheSame) {
    const cucore_program_options_t init = CUCORE_PROGRAM_OPTIONS_INIT;
    cucore_program_options_t zeroed;
    std::memset(&zeroed, 0, sizeof zeroed);
    zeroed.struct_size = sizeof zeroed;
    EXPECT_EQ(flags(init), "-arch=sm_90\n");
    EXPECT_EQ(flags(zeroed), flags(init));
}

TEST_F(ProgramOptionsTest, PtxAndNvvmFlags) {
    const char *ptxas[] = {"-O2"};
    cucore_program_options_t o = CUCORE_PROGRAM_OPTIONS_INIT;
    o.debug = 1;
    o.lineinfo = 1;
    o.max_register_count = 32;
    o.ftz = CUCORE_TOGGLE_ON;
    o.prec_sqrt = CUCORE_TOGGLE_OFF;
    o.prec_div = CUCORE_TOGGLE_ON;
    o.fma = CUCORE_TOGGLE_OFF;
    o.ptxas_options = ptxas;
    o.ptxas_option_count = 1;
    EXPECT_EQ(flags(o, CUCORE_CODE_PTX), "-arch=sm_90\n-g\n-lineinfo\n-maxrregcount=32\n-ftz=true\n"
                                         "-prec-sqrt=false\n-prec-div=true\n-fma=false\n-Xptxas=-O2\n");
    if (!has_compiler(CUCORE_BACKEND_NVVM)) GTEST_SKIP() << "libNVVM is not installed: " << message();
    cucore_program_options_t n = CUCORE_PROGRAM_OPTIONS_INIT;
    n.debug = 1;
    n.lineinfo = 1;
    n.device_code_optimize = CUCORE_TOGGLE_OFF;
    n.ftz = CUCORE_TOGGLE_ON;
    n.prec_sqrt = CUCORE_TOGGLE_OFF;
    n.prec_div = CUCORE_TOGGLE_ON;
    n.fma = CUCORE_TOGGLE_OFF;
    n.link_time_optimization = 1;
    EXPECT_EQ(flags(n, CUCORE_CODE_NVVM), "-arch=compute_90\n-g\n-generate-line-info\n-opt=0\n-ftz=1\n"
                                          "-prec-sqrt=0\n-prec-div=1\n-fma=0\n-gen-lto\n");
}

TEST_F(ProgramOptionsTest, ArchitectureSpellings) {
    cucore_program_options_t o = CUCORE_PROGRAM_OPTIONS_INIT;
    const std::pair<const char *, const char *> good[] = {
        {"90", "sm_90"}, {"sm_90a", "sm_90a"}, {"compute_80", "compute_80"}, {"100f", "sm_100f"}, {"sm_120", "sm_120"}};
    for (const auto &[given, expected] : good) {
        o.arch = given;
        cucore_program_t *p = program("x", CUCORE_CODE_CXX, o);
        ASSERT_NE(p, nullptr);
        const char *arch = nullptr;
        EXPECT_EQ(cucore_program_arch(p, &arch), CUCORE_SUCCESS);
        EXPECT_STREQ(arch, expected);
        cucore_program_release(p);
    }
    for (const char *bad : {"foo", "sm_9", "sm_", "9", "sm_90xy", "compute_1234"}) {
        o.arch = bad;
        EXPECT_EQ(create(o), CUCORE_ERROR_INVALID_ARGUMENT) << bad;
        EXPECT_NE(message().find("options.arch"), std::string::npos) << message();
        EXPECT_NE(message().find(bad), std::string::npos) << message();
    }
}

TEST_F(ProgramOptionsTest, DefaultArchIsTheCurrentDevices) {
    fake::set_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0, 9);
    fake::set_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0, 0);
    fake::set_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 1, 8);
    fake::set_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 1, 6);
    cucore_program_t *p = nullptr;
    ASSERT_EQ(cucore_program_create("x", 0, CUCORE_CODE_CXX, nullptr, &p), CUCORE_SUCCESS) << message();
    const char *arch = nullptr;
    EXPECT_EQ(cucore_program_arch(p, &arch), CUCORE_SUCCESS);
    EXPECT_STREQ(arch, "sm_90") << "no current context: device 0";
    cucore_program_release(p);
    // With device 1's primary context current, device 1's.
    cucore_device_t *d1 = device(1);
    cucore_context_t *c1 = nullptr;
    ASSERT_EQ(cucore_context_get_primary(d1, &c1), CUCORE_SUCCESS);
    void *raw = nullptr;
    ASSERT_EQ(cucore_context_handle(c1, &raw), CUCORE_SUCCESS);
    fake::set_current_context(static_cast<CUcontext>(raw));
    ASSERT_EQ(cucore_program_create("x", 0, CUCORE_CODE_CXX, nullptr, &p), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_program_arch(p, &arch), CUCORE_SUCCESS);
    EXPECT_STREQ(arch, "sm_86");
    cucore_program_release(p);
    fake::set_current_context(nullptr);
    cucore_context_release(c1);
    cucore_device_release(d1);
}

TEST_F(ProgramOptionsTest, ValidationMessages) {
    const char *with_null[] = {"A", nullptr};
    struct Case {
        const char *field;
        std::function<void(cucore_program_options_t &)> set;
        cucore_code_type_t type;
    };
    const std::vector<Case> cases = {
        {"options.defines[1]", [&](auto &o) { o.defines = with_null; o.define_count = 2; }, CUCORE_CODE_CXX},
        {"options.include_paths", [](auto &o) { o.include_path_count = 3; }, CUCORE_CODE_CXX},
        {"options.header_sources", [&](auto &o) { o.header_names = with_null; o.header_count = 1; }, CUCORE_CODE_CXX},
        {"options.debug", [](auto &o) { o.debug = 2; }, CUCORE_CODE_CXX},
        {"options.ftz", [](auto &o) { o.ftz = static_cast<cucore_toggle_t>(7); }, CUCORE_CODE_CXX},
        {"options.diag_warn", [](auto &o) { o.diag_warn_count = 1; }, CUCORE_CODE_CXX},
        {"options.defines", [&](auto &o) { o.defines = with_null; o.define_count = 1; }, CUCORE_CODE_PTX},
        {"options.use_fast_math", [](auto &o) { o.use_fast_math = 1; }, CUCORE_CODE_PTX},
        {"options.std", [](auto &o) { o.std = "c++17"; }, CUCORE_CODE_PTX},
        {"options.relocatable_device_code", [](auto &o) { o.relocatable_device_code = 1; }, CUCORE_CODE_PTX},
        {"options.pch", [](auto &o) { o.pch = 1; }, CUCORE_CODE_PTX},
    };
    for (const Case &c : cases) {
        cucore_program_options_t o = CUCORE_PROGRAM_OPTIONS_INIT;
        o.arch = "sm_90";
        c.set(o);
        EXPECT_EQ(create(o, c.type), CUCORE_ERROR_INVALID_ARGUMENT) << c.field;
        EXPECT_NE(message().find(c.field), std::string::npos) << message();
        EXPECT_EQ(message().rfind("cucore_program_create:", 0), 0u) << message();
    }
    cucore_program_options_t o = CUCORE_PROGRAM_OPTIONS_INIT;
    o.use_fast_math = 1;
    EXPECT_EQ(create(o, CUCORE_CODE_PTX), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("does not apply to PTX programs"), std::string::npos) << message();

    cucore_program_t *p = nullptr;
    EXPECT_EQ(cucore_program_create(nullptr, 0, CUCORE_CODE_CXX, nullptr, &p), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("'code'"), std::string::npos);
    EXPECT_EQ(cucore_program_create("x", 0, CUCORE_CODE_CUBIN, nullptr, &p), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("code_type"), std::string::npos);
    EXPECT_EQ(cucore_program_create("", 0, CUCORE_CODE_CXX, nullptr, &p), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("empty"), std::string::npos);
    o = CUCORE_PROGRAM_OPTIONS_INIT;
    o.struct_size = 2;
    EXPECT_EQ(cucore_program_create("x", 0, CUCORE_CODE_CXX, &o, &p), CUCORE_ERROR_INVALID_ARGUMENT);
    // A newer caller's larger struct with a field this version does not know.
    struct Newer {
        cucore_program_options_t options;
        uint64_t unknown;
    } newer{CUCORE_PROGRAM_OPTIONS_INIT, 1};
    newer.options.struct_size = sizeof newer;
    EXPECT_EQ(cucore_program_create("x", 0, CUCORE_CODE_CXX, &newer.options, &p), CUCORE_ERROR_NOT_SUPPORTED);
    newer.unknown = 0;
    newer.options.arch = "sm_90";
    ASSERT_EQ(cucore_program_create("x", 0, CUCORE_CODE_CXX, &newer.options, &p), CUCORE_SUCCESS) << message();
    cucore_program_release(p);
}

TEST_F(ProgramOptionsTest, GettersAndTextOut) {
    cucore_program_t *p = program("__global__ void k() {}");
    ASSERT_NE(p, nullptr);
    cucore_code_type_t type = CUCORE_CODE_UNSET;
    EXPECT_EQ(cucore_program_code_type(p, &type), CUCORE_SUCCESS);
    EXPECT_EQ(type, CUCORE_CODE_CXX);
    cucore_compiler_backend_t backend = CUCORE_BACKEND_DEFAULT;
    EXPECT_EQ(cucore_program_backend(p, &backend), CUCORE_SUCCESS);
    EXPECT_EQ(backend, CUCORE_BACKEND_NVRTC);
    EXPECT_EQ(log_of(p), "") << "no compile ran yet";
    // Truncation: capacity 5 holds 4 characters and the NUL; the length is whole.
    char small[5] = "zzzz";
    size_t length = 0;
    EXPECT_EQ(cucore_program_flags(p, small, sizeof small, &length), CUCORE_SUCCESS);
    EXPECT_STREQ(small, "-arc");
    EXPECT_EQ(length, std::strlen("-arch=sm_90\n"));
    EXPECT_EQ(cucore_program_flags(p, nullptr, 3, &length), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(length, 0u) << "cleared on failure";
    EXPECT_EQ(cucore_program_log(p, nullptr, 1, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_program_release(p);

    // A PTX program's backend is the linker's.
    p = program(".version 8.0", CUCORE_CODE_PTX);
    ASSERT_NE(p, nullptr);
    cucore_compiler_backend_t linker_default = CUCORE_BACKEND_DEFAULT;
    EXPECT_EQ(cucore_linker_default_backend(&linker_default), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_program_backend(p, &backend), CUCORE_SUCCESS);
    EXPECT_EQ(backend, linker_default);
    cucore_program_release(p);
}

TEST_F(ProgramOptionsTest, CompilerVersions) {
    int version = 0;
    EXPECT_EQ(cucore_compiler_version(CUCORE_BACKEND_NVRTC, &version), CUCORE_SUCCESS);
    EXPECT_EQ(version, 12080) << "the substitute's";
    EXPECT_EQ(cucore_compiler_version(CUCORE_BACKEND_DRIVER, &version), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(version, 0);
    EXPECT_EQ(cucore_compiler_version(CUCORE_BACKEND_NVRTC, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
}

TEST_F(ProgramOptionsTest, MissingNvrtcIsNotSupportedAtCreate) {
    cucore::driver::mark_nvrtc_absent("NVRTC (libnvrtc.so) is not installed: tried libnvrtc.so.13 (test)");
    cucore_program_t *p = nullptr;
    cucore_program_options_t o = CUCORE_PROGRAM_OPTIONS_INIT;
    o.arch = "sm_90";
    EXPECT_EQ(cucore_program_create("x", 0, CUCORE_CODE_CXX, &o, &p), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_NE(message().find("NVRTC (libnvrtc.so) is not installed"), std::string::npos) << message();
    EXPECT_EQ(p, nullptr);
    int version = 1;
    EXPECT_EQ(cucore_compiler_version(CUCORE_BACKEND_NVRTC, &version), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(version, 0);
    cucore::driver::install_nvrtc_substitute(nullptr);  // back to the real one (TearDown again is harmless)
}

}  // namespace
