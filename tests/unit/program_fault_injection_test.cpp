// Fault injection on the compile side: every call of NVRTC, nvJitLink and the
// driver (libraries, globals, cuLink*) fails once in turn. A failing call
// gives the right status with out-pointers cleared and nothing left behind
// (library objects, cache entries, compiler and driver handles); a failure
// in a cleanup after the work (destroying a compiler handle) lets the call
// succeed and is reported as a release error; a failure reading a log only
// loses the log.
#include <functional>

#include "compile_support.hpp"
#include "fake_compilers.hpp"

namespace {

class CompileFaultTest : public CompileFixture {
  protected:
    void SetUp() override {
        CompileFixture::SetUp();
        expects_release_errors_ = true;
        compilers_ = std::make_unique<fake_compilers::Installed>();
    }
    void TearDown() override {
        compilers_.reset();
        CompileFixture::TearDown();
    }
    std::unique_ptr<fake_compilers::Installed> compilers_;
};

// Runs `attempt` with compiler call n failing, for n = 1.. until it makes
// fewer calls than n. `attempt` returns its status and releases what it made.
void each_compiler_call_failing(const std::function<cucore_status_t()> &attempt,
                                const std::function<void(long n, cucore_status_t, uint64_t release_errors)> &check) {
    fake_compilers::fail_call(0);
    ASSERT_EQ(attempt(), CUCORE_SUCCESS) << cucore_last_error_message();
    const long total = fake_compilers::calls();
    ASSERT_GT(total, 3);
    for (long n = 1; n <= total; ++n) {
        uint64_t before = 0, after = 0;
        cucore_release_error_count(&before);
        fake_compilers::fail_call(n);
        const cucore_status_t status = attempt();
        fake_compilers::fail_call(0);
        cucore_release_error_count(&after);
        SCOPED_TRACE("compiler call " + std::to_string(n) + " of " + std::to_string(total) + " failing: " +
                     std::string(status ? cucore_last_error_message() : "succeeded"));
        check(n, status, after - before);
    }
}

TEST_F(CompileFaultTest, EveryNvrtcCallFailingOnce) {
    cucore_program_cache_t *cache = nullptr;
    ASSERT_EQ(cucore_program_cache_create_in_memory(0, &cache), CUCORE_SUCCESS);
    cucore_program_t *p = program("kernel k\n");
    const char *names[] = {"f<int>", "g"};
    int tolerated = 0, destroy_failures = 0;
    each_compiler_call_failing(
        [&] {
            cucore_program_cache_clear(cache);
            cucore_object_code_t *o = reinterpret_cast<cucore_object_code_t *>(1);
            const cucore_status_t status = cucore_program_compile(p, CUCORE_CODE_CUBIN, names, 2, cache, &o);
            if (status != CUCORE_SUCCESS) {
                EXPECT_EQ(o, nullptr) << "out-pointer cleared";
            }
            cucore_object_code_release(status == CUCORE_SUCCESS ? o : nullptr);
            return status;
        },
        [&](long, cucore_status_t status, uint64_t release_errors) {
            cucore_program_cache_stats_t s = CUCORE_PROGRAM_CACHE_STATS_INIT;
            cucore_program_cache_stats(cache, &s);
            if (status == CUCORE_SUCCESS) {
                ++tolerated;
                if (release_errors) {
                    ++destroy_failures;  // nvrtcDestroyProgram: the fake keeps the program
                    EXPECT_NE(std::string(cucore_last_error_message()).size(), 0u);
                }
                EXPECT_EQ(s.entries, 1u);
            } else {
                EXPECT_EQ(status, CUCORE_ERROR_COMPILATION) << message();
                EXPECT_NE(message().find("NVRTC_ERROR (fake)"), std::string::npos) << message();
                EXPECT_EQ(release_errors, 0u);
                EXPECT_EQ(s.entries, 0u) << "a failed compile stores nothing";
                EXPECT_EQ(fake_compilers::live_programs(), destroy_failures) << "the NVRTC program was destroyed";
            }
        });
    EXPECT_EQ(destroy_failures, 1);
    EXPECT_EQ(tolerated, 3) << "the two log reads and the destroy";
    cucore_program_release(p);
    cucore_program_cache_release(cache);
}

TEST_F(CompileFaultTest, EveryNvJitLinkCallFailingOnce) {
    const std::string a = fake::image({"a"}), b = fake::image({"b"});
    cucore_object_code_t *inputs[2] = {};
    ASSERT_EQ(cucore_object_code_create(a.data(), a.size(), CUCORE_CODE_LTOIR, "a", &inputs[0]), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_object_code_create(b.data(), b.size(), CUCORE_CODE_PTX, "b", &inputs[1]), CUCORE_SUCCESS);
    cucore_linker_options_t o = CUCORE_LINKER_OPTIONS_INIT;
    o.arch = "sm_90";
    int destroy_failures = 0;
    each_compiler_call_failing(
        [&] {
            cucore_linker_t *l = reinterpret_cast<cucore_linker_t *>(1);
            cucore_status_t status = cucore_linker_create(inputs, 2, &o, &l);
            if (status != CUCORE_SUCCESS) {
                EXPECT_EQ(l, nullptr);
                return status;
            }
            cucore_object_code_t *out = reinterpret_cast<cucore_object_code_t *>(1);
            status = cucore_linker_link(l, CUCORE_CODE_CUBIN, &out);
            if (status == CUCORE_SUCCESS)
                cucore_object_code_release(out);
            else
                EXPECT_EQ(out, nullptr);
            cucore_linker_release(l);
            return status;
        },
        [&](long, cucore_status_t status, uint64_t release_errors) {
            if (release_errors) ++destroy_failures;  // nvJitLinkDestroy: the fake keeps the handle
            if (status != CUCORE_SUCCESS) {
                EXPECT_EQ(status, CUCORE_ERROR_COMPILATION) << message();
                EXPECT_NE(message().find("NVJITLINK_ERROR_INTERNAL"), std::string::npos) << message();
            }
            EXPECT_EQ(fake_compilers::live_links(), destroy_failures) << "the nvJitLink handle was destroyed";
        });
    EXPECT_EQ(destroy_failures, 1);
    for (cucore_object_code_t *x : inputs) cucore_object_code_release(x);
    // The fake keeps the handle whose destroy failed; forget it for the next tests.
    fake_compilers::uninstall();
    fake_compilers::install();
}

TEST_F(CompileFaultTest, PtxProgramWithEveryNvJitLinkCallFailingOnce) {
    cucore_program_t *p = program(fake::image({"k"}), CUCORE_CODE_PTX);
    ASSERT_NE(p, nullptr);
    each_compiler_call_failing(
        [&] {
            cucore_object_code_t *out = nullptr;
            const cucore_status_t status = cucore_program_compile(p, CUCORE_CODE_CUBIN, nullptr, 0, nullptr, &out);
            cucore_object_code_release(out);
            return status;
        },
        [&](long, cucore_status_t status, uint64_t) {
            if (status != CUCORE_SUCCESS) {
                EXPECT_EQ(status, CUCORE_ERROR_COMPILATION) << message();
                EXPECT_EQ(message().rfind("cucore_program_compile: default_program: ", 0), 0u) << message();
            }
        });
    cucore_program_release(p);
}

// The driver side: each driver call of a path failing once.
void each_driver_call_failing(const std::function<cucore_status_t()> &attempt,
                              const std::function<void(const std::string &call, cucore_status_t)> &check) {
    fake::reset_calls();
    ASSERT_EQ(attempt(), CUCORE_SUCCESS) << cucore_last_error_message();
    const long total = fake::calls();
    for (long n = 1; n <= total; ++n) {
        fake::reset_calls();
        fake::fail_call(n, CUDA_ERROR_INVALID_IMAGE);
        const cucore_status_t status = attempt();
        fake::fail_call(0);
        const std::vector<std::string> log = fake::call_log();
        if (n > static_cast<long>(log.size())) {  // later runs make fewer calls (cached device records)
            EXPECT_EQ(status, CUCORE_SUCCESS) << cucore_last_error_message();
            break;
        }
        const std::string call = log[n - 1];
        SCOPED_TRACE("driver call " + std::to_string(n) + " (" + call + ") failing");
        fake::set_current_context(nullptr);
        check(call, status);
    }
}

TEST_F(CompileFaultTest, ObjectCodeDriverCalls) {
    // A refused primary-context release leaves a retain in the fake (that path
    // is fault_injection_test's); the other leak checks stay on.
    pins_primary_ = true;
    const std::string image = fake::image({"k"}, {{"g", 4}});
    cucore_device_t *d = device(0);
    each_driver_call_failing(
        [&] {
            cucore_object_code_t *o = nullptr;
            cucore_status_t status = cucore_object_code_create(image.data(), image.size(), CUCORE_CODE_CUBIN, "m", &o);
            cucore_kernel_t *k = reinterpret_cast<cucore_kernel_t *>(1);
            if (status == CUCORE_SUCCESS) status = cucore_object_code_get_kernel(o, "k", &k);
            if (status == CUCORE_SUCCESS) {
                cucore_kernel_release(k);
            } else {
                EXPECT_EQ(k, nullptr);
            }
            uint32_t value = 5;
            if (status == CUCORE_SUCCESS) status = cucore_object_code_write_global(o, d, "g", &value, 4);
            if (status == CUCORE_SUCCESS) status = cucore_object_code_read_global(o, d, "g", &value, 4);
            if (status == CUCORE_SUCCESS) {
                EXPECT_EQ(value, 5u);
            }
            cucore_object_code_release(o);
            return status;
        },
        [&](const std::string &call, cucore_status_t status) {
            if (call == "cuLibraryUnload") {
                EXPECT_EQ(status, CUCORE_SUCCESS) << "a release-path failure is reported, not returned";
                ++refused_unloads_;
            } else if (call == "cuDevicePrimaryCtxRelease" || (call == "cuCtxSetCurrent" && status == CUCORE_SUCCESS)) {
                // restoring the caller's context or letting the primary context go: release errors
            } else {
                EXPECT_NE(status, CUCORE_SUCCESS) << call;
            }
        });
    cucore_device_release(d);
}

TEST_F(CompileFaultTest, DriverLinkerCalls) {
    pins_primary_ = true;  // as in ObjectCodeDriverCalls
    const std::string a = fake::image({"a"}), b = fake::image({"b"});
    cucore_object_code_t *inputs[2] = {};
    ASSERT_EQ(cucore_object_code_create(a.data(), a.size(), CUCORE_CODE_PTX, "a", &inputs[0]), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_object_code_create(b.data(), b.size(), CUCORE_CODE_CUBIN, "b", &inputs[1]), CUCORE_SUCCESS);
    cucore_linker_options_t o = CUCORE_LINKER_OPTIONS_INIT;
    o.backend = CUCORE_BACKEND_DRIVER;
    each_driver_call_failing(
        [&] {
            cucore_linker_t *l = nullptr;
            cucore_status_t status = cucore_linker_create(inputs, 2, &o, &l);
            cucore_object_code_t *out = nullptr;
            if (status == CUCORE_SUCCESS) status = cucore_linker_link(l, CUCORE_CODE_CUBIN, &out);
            cucore_object_code_release(out);
            cucore_linker_release(l);
            return status;
        },
        [&](const std::string &call, cucore_status_t status) {
            if (call == "cuLinkDestroy") {
                EXPECT_EQ(status, CUCORE_SUCCESS);
                ++refused_link_destroys_;
            } else if (call == "cuDevicePrimaryCtxRelease" || (call == "cuCtxSetCurrent" && status == CUCORE_SUCCESS)) {
            } else {
                EXPECT_NE(status, CUCORE_SUCCESS) << call;
                if (call == "cuLinkAddData" || call == "cuLinkComplete") {
                    EXPECT_EQ(cucore_last_cuda_result(), CUDA_ERROR_INVALID_IMAGE);
                }
            }
        });
    for (cucore_object_code_t *x : inputs) cucore_object_code_release(x);
}

}  // namespace
