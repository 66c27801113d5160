// The fixture of the communicator tests (communicator_test.cpp,
// communicator_fault_injection_test.cpp): the fake driver with two devices,
// the fake NCCL (tests/fake_driver/fake_nccl.hpp) installed, a stream per
// device, and at the end of each test no communicator, NCCL comm, unmatched
// NCCL operation or open group left, and no fault the fake NCCL saw.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/graph_attachments.hpp"
#include "driver/nccl.hpp"
#include "fake_nccl.hpp"
#include "test_support.hpp"

class CommunicatorTest : public FakeDriverTest {
  protected:
    void SetUp() override {
        FakeDriverTest::SetUp();
        fake::nccl::install();
        communicators_before_ = live(CUCORE_OBJECT_COMMUNICATOR);
        for (int i = 0; i < 2; ++i) {
            d_[i] = device(i);
            ASSERT_EQ(cucore_stream_create(d_[i], nullptr, &s_[i]), CUCORE_SUCCESS) << message();
        }
    }
    void TearDown() override {
        while (cucore_communicator_group_depth() > 0) cucore_communicator_group_end();
        for (auto *&c : c_) {
            cucore_communicator_release(c);
            c = nullptr;
        }
        for (int i = 0; i < 2; ++i) {
            cucore_stream_release(s_[i]);
            cucore_device_release(d_[i]);
        }
        cucore::core::drain_graph_releases();
        EXPECT_EQ(live(CUCORE_OBJECT_COMMUNICATOR), communicators_before_) << "leaked communicators";
        EXPECT_EQ(fake::nccl::live_comms(), 0) << "NCCL comms not destroyed";
        EXPECT_EQ(fake::nccl::pending_operations(), 0) << "NCCL operations never matched";
        if (!expects_faults_) {
            EXPECT_EQ(fake::nccl::faults(), 0) << fake::nccl::last_fault();
        }
        fake::nccl::uninstall();
        FakeDriverTest::TearDown();
    }

    // c_[0], c_[1]: one clique over both devices.
    void make_all() {
        cucore_device_t *devices[2] = {d_[0], d_[1]};
        ASSERT_EQ(cucore_communicator_create_all(devices, 2, c_), CUCORE_SUCCESS) << message();
    }
    // A buffer of `size` bytes on device `d` (fresh bytes: fake::kFreshByte).
    cucore_buffer_t *buffer(int d, uint64_t size) {
        cucore_buffer_t *b = nullptr;
        EXPECT_EQ(cucore_device_allocate(d_[d], size, s_[d], &b), CUCORE_SUCCESS) << message();
        return b;
    }
    cucore_buffer_t *buffer_with(int d, const std::vector<uint8_t> &bytes) {
        cucore_buffer_t *b = buffer(d, bytes.size());
        EXPECT_EQ(cucore_buffer_copy_from_host(b, 0, bytes.data(), bytes.size(), s_[d]), CUCORE_SUCCESS) << message();
        return b;
    }
    std::vector<uint8_t> read(cucore_buffer_t *b, int d) {
        uint64_t size = 0;
        EXPECT_EQ(cucore_buffer_size(b, &size), CUCORE_SUCCESS);
        std::vector<uint8_t> bytes(size);
        EXPECT_EQ(cucore_buffer_copy_to_host(b, 0, bytes.data(), size, s_[d]), CUCORE_SUCCESS) << message();
        EXPECT_EQ(cucore_stream_synchronize(s_[d]), CUCORE_SUCCESS);
        return bytes;
    }
    // How many times NCCL entry point `name` was called since the last fake::nccl::reset_calls().
    static long nccl_calls(const std::string &name) {
        long n = 0;
        for (const std::string &entry : fake::nccl::call_log()) n += entry == name;
        return n;
    }

    cucore_device_t *d_[2] = {};
    cucore_stream_t *s_[2] = {};
    cucore_communicator_t *c_[2] = {};
    bool expects_faults_ = false;  // set by tests that provoke the fake NCCL's faults

  private:
    size_t communicators_before_ = 0;
};
