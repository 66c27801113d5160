// The linker: the driver backend (cuLink*) on the fake driver, nvJitLink
// through the fake nvJitLink table (options to flags, refused inputs, failed
// links, logs), backend choice, and argument validation.
#include <algorithm>

#include "compile_support.hpp"
#include "fake_compilers.hpp"

namespace {

class LinkerTest : public CompileFixture {
  protected:
    void SetUp() override {
        CompileFixture::SetUp();
        compilers_ = std::make_unique<fake_compilers::Installed>();
    }
    void TearDown() override {
        for (cucore_object_code_t *o : codes_) cucore_object_code_release(o);
        EXPECT_EQ(fake_compilers::live_links(), 0) << "nvJitLink handles leaked";
        compilers_.reset();
        CompileFixture::TearDown();
    }
    cucore_object_code_t *code(const std::string &bytes, cucore_code_type_t type = CUCORE_CODE_PTX,
                               const char *name = nullptr) {
        cucore_object_code_t *o = nullptr;
        EXPECT_EQ(cucore_object_code_create(bytes.data(), bytes.size(), type, name, &o), CUCORE_SUCCESS) << message();
        codes_.push_back(o);
        return o;
    }
    static std::string text(cucore_status_t (*fn)(const cucore_linker_t *, char *, size_t, size_t *),
                            const cucore_linker_t *l) {
        size_t length = 0;
        EXPECT_EQ(fn(l, nullptr, 0, &length), CUCORE_SUCCESS);
        std::string t(length + 1, '\0');
        EXPECT_EQ(fn(l, t.data(), t.size(), &length), CUCORE_SUCCESS);
        t.resize(length);
        return t;
    }
    std::vector<cucore_object_code_t *> codes_;
    std::unique_ptr<fake_compilers::Installed> compilers_;
};

bool has_option(const std::vector<std::pair<int, uintptr_t>> &options, int key, uintptr_t value) {
    return std::find(options.begin(), options.end(), std::make_pair(key, value)) != options.end();
}

TEST_F(LinkerTest, DriverBackendLinksAndMapsOptions) {
    cucore_object_code_t *inputs[] = {code(fake::image({"a"}), CUCORE_CODE_PTX, "first"),
                                      code(fake::image({"b"}, {{"g", 4}}), CUCORE_CODE_CUBIN)};
    cucore_linker_options_t o = CUCORE_LINKER_OPTIONS_INIT;
    o.backend = CUCORE_BACKEND_DRIVER;
    o.arch = "sm_80";
    o.max_register_count = 32;
    o.optimization_level = CUCORE_OPTIMIZATION_LEVEL(2);
    o.debug = 1;
    o.lineinfo = 1;
    o.verbose = 1;
    const int states_before = fake::counters().link_states;
    cucore_linker_t *l = nullptr;
    ASSERT_EQ(cucore_linker_create(inputs, 2, &o, &l), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::current_context(), nullptr) << "the caller's context is restored";
    const auto options = fake::last_link_options();
    EXPECT_TRUE(has_option(options, CU_JIT_TARGET, 80));
    EXPECT_TRUE(has_option(options, CU_JIT_MAX_REGISTERS, 32));
    EXPECT_TRUE(has_option(options, CU_JIT_OPTIMIZATION_LEVEL, 2));
    EXPECT_TRUE(has_option(options, CU_JIT_GENERATE_DEBUG_INFO, 1));
    EXPECT_TRUE(has_option(options, CU_JIT_GENERATE_LINE_INFO, 1));
    EXPECT_TRUE(has_option(options, CU_JIT_LOG_VERBOSE, 1));
    cucore_compiler_backend_t backend = CUCORE_BACKEND_DEFAULT;
    EXPECT_EQ(cucore_linker_backend(l, &backend), CUCORE_SUCCESS);
    EXPECT_EQ(backend, CUCORE_BACKEND_DRIVER);
    EXPECT_EQ(fake::counters().link_states, states_before + 1);
    cucore_object_code_t *out = nullptr;
    ASSERT_EQ(cucore_linker_link(l, CUCORE_CODE_CUBIN, &out), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::counters().link_states, states_before) << "the state goes once the cubin is copied";
    EXPECT_EQ(bytes_of(out).substr(0, bytes_of(out).find('\0')), "FAKECUBIN\nkernel a\nkernel b\nglobal g 4\n");
    const char *name = nullptr;
    EXPECT_EQ(cucore_object_code_name(out, &name), CUCORE_SUCCESS);
    EXPECT_STREQ(name, "linker");
    size_t kernels = 0;
    EXPECT_EQ(cucore_object_code_kernel_count(out, &kernels), CUCORE_SUCCESS);
    EXPECT_EQ(kernels, 2u);
    cucore_object_code_t *other = nullptr;
    EXPECT_EQ(cucore_linker_link(l, CUCORE_CODE_PTX, &other), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("already linked to cubin"), std::string::npos) << message();
    cucore_object_code_release(out);
    cucore_linker_release(l);
}

TEST_F(LinkerTest, DriverBackendRefusals) {
    cucore_object_code_t *lto = code("lto", CUCORE_CODE_LTOIR, "ir");
    cucore_linker_options_t o = CUCORE_LINKER_OPTIONS_INIT;
    o.backend = CUCORE_BACKEND_DRIVER;
    cucore_linker_t *l = nullptr;
    EXPECT_EQ(cucore_linker_create(&lto, 1, &o, &l), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("inputs[0]"), std::string::npos) << message();
    EXPECT_NE(message().find("LTO-IR"), std::string::npos) << message();
    cucore_object_code_t *ptx = code(fake::image({"a"}));
    const char *extra[] = {"-x"};
    const std::vector<std::pair<const char *, std::function<void(cucore_linker_options_t &)>>> nvjitlink_only = {
        {"link_time_optimization", [](auto &x) { x.link_time_optimization = 1; }},
        {"ftz", [](auto &x) { x.ftz = CUCORE_TOGGLE_ON; }},
        {"prec_div", [](auto &x) { x.prec_div = CUCORE_TOGGLE_OFF; }},
        {"prec_sqrt", [](auto &x) { x.prec_sqrt = CUCORE_TOGGLE_ON; }},
        {"fma", [](auto &x) { x.fma = CUCORE_TOGGLE_ON; }},
        {"ptxas_options", [&](auto &x) { x.ptxas_options = extra; x.ptxas_option_count = 1; }},
        {"extra_options", [&](auto &x) { x.extra_options = extra; x.extra_option_count = 1; }},
    };
    for (const auto &[field, set] : nvjitlink_only) {
        cucore_linker_options_t bad = o;
        set(bad);
        EXPECT_EQ(cucore_linker_create(&ptx, 1, &bad, &l), CUCORE_ERROR_INVALID_ARGUMENT) << field;
        EXPECT_NE(message().find(field), std::string::npos) << message();
        EXPECT_NE(message().find("needs nvJitLink"), std::string::npos) << message();
    }
    ASSERT_EQ(cucore_linker_create(&ptx, 1, &o, &l), CUCORE_SUCCESS) << message();
    cucore_object_code_t *out = nullptr;
    EXPECT_EQ(cucore_linker_link(l, CUCORE_CODE_PTX, &out), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_linker_link(l, CUCORE_CODE_LTOIR, &out), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_linker_release(l);
    // A refused input: COMPILATION with the error log's lines; no state left.
    cucore_object_code_t *junk = code("not an image", CUCORE_CODE_PTX, "junk");
    EXPECT_EQ(cucore_linker_create(&junk, 1, &o, &l), CUCORE_ERROR_COMPILATION);
    EXPECT_NE(message().find("linker: input 'junk' (PTX) was refused"), std::string::npos) << message();
    EXPECT_NE(message().find("junk is not a fake image\nsecond line"), std::string::npos) << message();
    EXPECT_EQ(l, nullptr);
    // A driver failure of cuLinkComplete without a log: CUDA.
    ASSERT_EQ(cucore_linker_create(&ptx, 1, &o, &l), CUCORE_SUCCESS) << message();
    fake::fail_entry("cuLinkComplete", CUDA_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(cucore_linker_link(l, CUCORE_CODE_CUBIN, &out), CUCORE_ERROR_OUT_OF_MEMORY);
    fake::fail_entry("");
    EXPECT_EQ(cucore_linker_link(l, CUCORE_CODE_CUBIN, &out), CUCORE_ERROR_INVALID_STATE) << "a failed link is final";
    cucore_linker_release(l);
}

TEST_F(LinkerTest, NvJitLinkFlagsAndLogs) {
    cucore_object_code_t *inputs[] = {code(fake::image({"a"}), CUCORE_CODE_LTOIR),
                                      code(fake::image({"b"}), CUCORE_CODE_CUBIN)};
    const char *ptxas[] = {"-v"};
    const char *extra[] = {"-split-compile=0"};
    cucore_linker_options_t o = CUCORE_LINKER_OPTIONS_INIT;
    o.name = "mine";
    o.arch = "90a";
    o.max_register_count = 64;
    o.optimization_level = CUCORE_OPTIMIZATION_LEVEL(0);
    o.debug = 1;
    o.lineinfo = 1;
    o.link_time_optimization = 1;
    o.ftz = CUCORE_TOGGLE_ON;
    o.prec_div = CUCORE_TOGGLE_OFF;
    o.prec_sqrt = CUCORE_TOGGLE_ON;
    o.fma = CUCORE_TOGGLE_OFF;
    o.verbose = 1;
    o.ptxas_options = ptxas;
    o.ptxas_option_count = 1;
    o.extra_options = extra;
    o.extra_option_count = 1;
    cucore_linker_t *l = nullptr;
    ASSERT_EQ(cucore_linker_create(inputs, 2, &o, &l), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake_compilers::last_link_flags(),
              (std::vector<std::string>{"-arch=sm_90a", "-maxrregcount=64", "-O0", "-g", "-lineinfo", "-lto",
                                        "-ftz=true", "-prec-div=false", "-prec-sqrt=true", "-fma=false", "-verbose",
                                        "-Xptxas=-v", "-split-compile=0"}));
    cucore_compiler_backend_t backend = CUCORE_BACKEND_DEFAULT;
    EXPECT_EQ(cucore_linker_backend(l, &backend), CUCORE_SUCCESS);
    EXPECT_EQ(backend, CUCORE_BACKEND_NVJITLINK);
    cucore_object_code_t *out = nullptr;
    ASSERT_EQ(cucore_linker_link(l, CUCORE_CODE_PTX, &out), CUCORE_SUCCESS) << message();
    EXPECT_EQ(bytes_of(out), "FAKECUBIN\nkernel a\nkernel b\n");
    EXPECT_EQ(fake_compilers::live_links(), 0) << "destroyed once the result is copied";
    EXPECT_EQ(text(cucore_linker_info_log, l), "linked\n");
    EXPECT_EQ(text(cucore_linker_error_log, l), "");
    char small[4];
    size_t length = 0;
    EXPECT_EQ(cucore_linker_info_log(l, small, sizeof small, &length), CUCORE_SUCCESS);
    EXPECT_STREQ(small, "lin");
    EXPECT_EQ(length, 7u);
    EXPECT_EQ(cucore_linker_info_log(l, nullptr, 2, &length), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_linker_error_log(l, nullptr, 2, &length), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_object_code_release(out);
    cucore_linker_release(l);
    // PTX without LTO is refused before nvJitLink is asked.
    o.link_time_optimization = 0;
    ASSERT_EQ(cucore_linker_create(inputs, 2, &o, &l), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_linker_link(l, CUCORE_CODE_PTX, &out), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("link_time_optimization"), std::string::npos) << message();
    cucore_linker_release(l);
}

TEST_F(LinkerTest, NvJitLinkFailures) {
    cucore_object_code_t *good = code(fake::image({"a"}));
    cucore_object_code_t *bad = code("junk", CUCORE_CODE_PTX, "bad.ptx");
    cucore_object_code_t *unresolved = code(fake::image({"unresolved"}));
    cucore_linker_options_t o = CUCORE_LINKER_OPTIONS_INIT;
    o.arch = "sm_90";
    const char *bad_flag[] = {"-bad"};
    o.extra_options = bad_flag;
    o.extra_option_count = 1;
    cucore_linker_t *l = nullptr;
    EXPECT_EQ(cucore_linker_create(&good, 1, &o, &l), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("NVJITLINK_ERROR_UNRECOGNIZED_OPTION"), std::string::npos) << message();
    o.extra_option_count = 0;
    cucore_object_code_t *pair[] = {good, bad};
    EXPECT_EQ(cucore_linker_create(pair, 2, &o, &l), CUCORE_ERROR_COMPILATION);
    EXPECT_NE(message().find("linker: input 'bad.ptx' (PTX) was refused: NVJITLINK_ERROR_INVALID_INPUT:\n"
                             "error: bad.ptx is not a fake image\nsecond line"),
              std::string::npos)
        << message();
    ASSERT_EQ(cucore_linker_create(&unresolved, 1, &o, &l), CUCORE_SUCCESS) << message();
    cucore_object_code_t *out = nullptr;
    EXPECT_EQ(cucore_linker_link(l, CUCORE_CODE_CUBIN, &out), CUCORE_ERROR_COMPILATION);
    EXPECT_NE(message().find("linker: link failed: NVJITLINK_ERROR_PTX_COMPILE:\nerror: undefined reference"),
              std::string::npos)
        << message();
    EXPECT_EQ(text(cucore_linker_error_log, l), "error: undefined reference to 'unresolved'\n");
    cucore_linker_release(l);
}

TEST_F(LinkerTest, BackendChoice) {
    cucore_compiler_backend_t backend = CUCORE_BACKEND_DEFAULT;
    EXPECT_EQ(cucore_linker_default_backend(&backend), CUCORE_SUCCESS);
    EXPECT_EQ(backend, CUCORE_BACKEND_NVJITLINK);
    cucore::driver::mark_nvjitlink_absent("");
    fake::reset_calls();
    EXPECT_EQ(cucore_linker_default_backend(&backend), CUCORE_SUCCESS);
    EXPECT_EQ(backend, CUCORE_BACKEND_DRIVER);
    EXPECT_EQ(fake::calls(), 0) << "never loads the driver";
    cucore_object_code_t *ptx = code(fake::image({"a"}));
    cucore_linker_t *l = nullptr;
    ASSERT_EQ(cucore_linker_create(&ptx, 1, nullptr, &l), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_linker_backend(l, &backend), CUCORE_SUCCESS);
    EXPECT_EQ(backend, CUCORE_BACKEND_DRIVER) << "nvJitLink absent: the driver";
    cucore_linker_release(l);
    cucore_linker_options_t o = CUCORE_LINKER_OPTIONS_INIT;
    o.backend = CUCORE_BACKEND_NVJITLINK;
    EXPECT_EQ(cucore_linker_create(&ptx, 1, &o, &l), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_NE(message().find("nvJitLink"), std::string::npos) << message();
    fake_compilers::install();  // back to the fake for TearDown
}

TEST_F(LinkerTest, Validation) {
    cucore_object_code_t *ptx = code(fake::image({"a"}));
    cucore_linker_t *l = nullptr;
    EXPECT_EQ(cucore_linker_create(nullptr, 1, nullptr, &l), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("'inputs'"), std::string::npos);
    EXPECT_EQ(cucore_linker_create(&ptx, 0, nullptr, &l), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("input_count"), std::string::npos);
    cucore_object_code_t *with_null[] = {ptx, nullptr};
    EXPECT_EQ(cucore_linker_create(with_null, 2, nullptr, &l), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_NE(message().find("inputs[1]"), std::string::npos) << message();
    EXPECT_EQ(cucore_linker_create(&ptx, 1, nullptr, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    const char *null_string[] = {nullptr};
    const std::vector<std::pair<const char *, std::function<void(cucore_linker_options_t &)>>> cases = {
        {"options.backend", [](auto &x) { x.backend = CUCORE_BACKEND_NVRTC; }},
        {"options.optimization_level", [](auto &x) { x.optimization_level = 5; }},
        // nvJitLink takes -O0 and -O3 only.
        {"options.optimization_level", [](auto &x) { x.backend = CUCORE_BACKEND_NVJITLINK; x.optimization_level = CUCORE_OPTIMIZATION_LEVEL(2); }},
        {"options.debug", [](auto &x) { x.debug = 2; }},
        {"options.fma", [](auto &x) { x.fma = static_cast<cucore_toggle_t>(3); }},
        {"options.ptxas_options[0]", [&](auto &x) { x.ptxas_options = null_string; x.ptxas_option_count = 1; }},
        {"options.extra_options", [](auto &x) { x.extra_option_count = 1; }},
        {"options.arch", [](auto &x) { x.arch = "gpu"; }},
    };
    for (const auto &[field, set] : cases) {
        cucore_linker_options_t o = CUCORE_LINKER_OPTIONS_INIT;
        set(o);
        EXPECT_EQ(cucore_linker_create(&ptx, 1, &o, &l), CUCORE_ERROR_INVALID_ARGUMENT) << field;
        EXPECT_NE(message().find(field), std::string::npos) << message();
        EXPECT_EQ(l, nullptr);
    }
}

}  // namespace
