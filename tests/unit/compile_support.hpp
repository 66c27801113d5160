// Shared fixture of the compile-side tests (programs, object code, linker,
// caches): FakeDriverTest plus leak checks of their objects and of the fake
// driver's libraries and link states, and helpers for the real compilers.
#pragma once

#include <string>
#include <vector>

#include "test_support.hpp"

class CompileFixture : public FakeDriverTest {
  protected:
    void SetUp() override {
        FakeDriverTest::SetUp();
        for (size_t i = 0; i < kTypes.size(); ++i) before_[i] = live(kTypes[i]);
        fake_before_ = driver_objects();
    }
    void TearDown() override {
        for (size_t i = 0; i < kTypes.size(); ++i)
            EXPECT_EQ(live(kTypes[i]), before_[i]) << "leaked objects of type " << kTypes[i];
        const fake::Counters after = driver_objects();
        EXPECT_EQ(after.libraries, fake_before_.libraries + refused_unloads_) << "driver libraries leaked";
        EXPECT_EQ(after.link_states, fake_before_.link_states + refused_link_destroys_) << "driver link states leaked";
        if (refused_unloads_ || refused_link_destroys_) fake::install(2);  // forget what the fake was made to keep
        FakeDriverTest::TearDown();
    }

    static bool has_compiler(cucore_compiler_backend_t backend) {
        int version = 0;
        return cucore_compiler_version(backend, &version) == CUCORE_SUCCESS;
    }

    // A program of `code` with the given arch (default sm_90: no device needed).
    static cucore_program_t *program(const std::string &code, cucore_code_type_t type = CUCORE_CODE_CXX,
                                     cucore_program_options_t options = CUCORE_PROGRAM_OPTIONS_INIT) {
        if (!options.arch) options.arch = "sm_90";
        cucore_program_t *p = nullptr;
        EXPECT_EQ(cucore_program_create(code.c_str(), 0, type, &options, &p), CUCORE_SUCCESS)
            << cucore_last_error_message();
        return p;
    }
    static std::string log_of(const cucore_program_t *p) {
        size_t length = 0;
        EXPECT_EQ(cucore_program_log(p, nullptr, 0, &length), CUCORE_SUCCESS);
        std::string text(length + 1, '\0');
        EXPECT_EQ(cucore_program_log(p, text.data(), text.size(), &length), CUCORE_SUCCESS);
        text.resize(length);
        return text;
    }
    static std::string flags_of(const cucore_program_t *p) {
        size_t length = 0;
        EXPECT_EQ(cucore_program_flags(p, nullptr, 0, &length), CUCORE_SUCCESS);
        std::string text(length + 1, '\0');
        EXPECT_EQ(cucore_program_flags(p, text.data(), text.size(), &length), CUCORE_SUCCESS);
        text.resize(length);
        return text;
    }
    static std::string bytes_of(const cucore_object_code_t *o) {
        const void *data = nullptr;
        size_t size = 0;
        EXPECT_EQ(cucore_object_code_data(o, &data, &size), CUCORE_SUCCESS);
        return std::string(static_cast<const char *>(data), size);
    }

    // Driver objects a test made the fake refuse to destroy (they stay in it).
    int refused_unloads_ = 0, refused_link_destroys_ = 0;

  private:
    const std::vector<cucore_object_type_t> kTypes{CUCORE_OBJECT_PROGRAM, CUCORE_OBJECT_OBJECT_CODE,
                                                   CUCORE_OBJECT_LINKER, CUCORE_OBJECT_PROGRAM_CACHE,
                                                   CUCORE_OBJECT_KERNEL};
    size_t before_[5] = {};
    fake::Counters fake_before_;
};

#define CUCORE_REQUIRE_COMPILER(backend, name)                                                      \
    if (!has_compiler(backend)) {                                                                 \
        GTEST_SKIP() << name " is not installed here: " << cucore_last_error_message();          \
    }
