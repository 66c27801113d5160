// Shared fixture of the kernel and launch tests: a device, its primary context
// and a stream, fake kernels wrapped as cucore kernels, and a leak check for
// kernel objects on top of FakeDriverTest's.
#pragma once

#include <string>
#include <vector>

#include "test_support.hpp"

class KernelFixture : public FakeDriverTest {
  protected:
    void SetUp() override {
        FakeDriverTest::SetUp();
        ASSERT_EQ(cucore_live_object_count(CUCORE_OBJECT_KERNEL, &kernels_before_), CUCORE_SUCCESS);
        d0_ = device(0);
        d1_ = device(1);
        ASSERT_EQ(cucore_context_get_primary(d0_, &c0_), CUCORE_SUCCESS);
        ASSERT_EQ(cucore_stream_create(d0_, nullptr, &s0_), CUCORE_SUCCESS);
        void *raw = nullptr;
        ASSERT_EQ(cucore_context_handle(c0_, &raw), CUCORE_SUCCESS);
        cu_c0_ = static_cast<CUcontext>(raw);
        ASSERT_EQ(cucore_stream_handle(s0_, &raw), CUCORE_SUCCESS);
        cu_s0_ = static_cast<CUstream>(raw);
    }
    void TearDown() override {
        for (cucore_kernel_t *k : kernels_) cucore_kernel_release(k);
        cucore_stream_release(s0_);
        cucore_context_release(c0_);
        cucore_device_release(d1_);
        cucore_device_release(d0_);
        fake::set_current_context(nullptr);
        EXPECT_EQ(live(CUCORE_OBJECT_KERNEL), kernels_before_) << "leaked kernels";
        FakeDriverTest::TearDown();
    }
    // A foreign CUkernel with `spec`, wrapped (released by TearDown).
    cucore_kernel_t *kernel(const fake::KernelSpec &spec, CUkernel *raw = nullptr) {
        CUkernel cu = fake::make_kernel(spec);
        if (raw) *raw = cu;
        cucore_kernel_t *k = nullptr;
        EXPECT_EQ(cucore_kernel_from_handle(cu, nullptr, nullptr, &k), CUCORE_SUCCESS) << message();
        kernels_.push_back(k);
        return k;
    }
    static fake::KernelSpec spec(std::vector<size_t> param_sizes, std::string name = "k") {
        fake::KernelSpec s;
        s.name = std::move(name);
        s.param_sizes = std::move(param_sizes);
        return s;
    }
    static long count_calls(const std::string &name) {
        long n = 0;
        for (const std::string &call : fake::call_log()) n += call == name;
        return n;
    }

    cucore_device_t *d0_ = nullptr, *d1_ = nullptr;
    cucore_context_t *c0_ = nullptr;
    cucore_stream_t *s0_ = nullptr;
    CUcontext cu_c0_ = nullptr;
    CUstream cu_s0_ = nullptr;
    std::vector<cucore_kernel_t *> kernels_;

  private:
    size_t kernels_before_ = 0;
};
