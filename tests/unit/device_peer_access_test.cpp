// Device peer access (issue 19) against the fake driver: enabling twice is
// fine (the driver's "already enabled" is not an error), disabling what is not
// enabled is INVALID_STATE, a device and itself is INVALID_ARGUMENT, a driver
// failure is CUDA naming the call.
//
// Listed last in tests/unit/CMakeLists.txt: enabling pins both devices'
// primary contexts for the process, and the fault-injection scenarios of
// fault_injection_test.cpp need device 1's primary context unpinned (they
// fault its retain), so this runs after them.
#include <algorithm>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace {

using DevicePeerAccessTest = FakeDriverTest;

TEST_F(DevicePeerAccessTest, EnablesOnceDisablesOnceAndRefusesTheDeviceItself) {
    pins_primary_ = true;  // enabling pins both primary contexts for the process
    cucore_device_t *d0 = device(0), *d1 = device(1);
    int can = 0;
    ASSERT_EQ(cucore_device_can_access_peer(d0, d1, &can), CUCORE_SUCCESS);
    EXPECT_EQ(can, 1);
    fake::reset_calls();
    ASSERT_EQ(cucore_device_enable_peer_access(d0, d1), CUCORE_SUCCESS) << message();
    const std::vector<std::string> log = fake::call_log();
    EXPECT_NE(std::find(log.begin(), log.end(), "cuCtxEnablePeerAccess"), log.end());
    EXPECT_EQ(cucore_device_enable_peer_access(d0, d1), CUCORE_SUCCESS) << "enabling twice is fine: " << message();
    EXPECT_EQ(cucore_device_enable_peer_access(d1, d0), CUCORE_SUCCESS) << "the other direction is its own";
    EXPECT_EQ(cucore_device_disable_peer_access(d0, d1), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_device_disable_peer_access(d0, d1), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("device 0 has no peer access to device 1 to disable"), std::string::npos) << message();
    EXPECT_EQ(cucore_device_disable_peer_access(d1, d0), CUCORE_SUCCESS) << "still enabled that way";
    EXPECT_EQ(cucore_device_enable_peer_access(d1, d1), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("argument 'peer' is the device itself"), std::string::npos) << message();
    EXPECT_EQ(cucore_device_disable_peer_access(d0, d0), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("argument 'peer' is the device itself"), std::string::npos) << message();
    fake::fail_entry("cuCtxEnablePeerAccess", CUDA_ERROR_TOO_MANY_PEERS);
    EXPECT_EQ(cucore_device_enable_peer_access(d0, d1), CUCORE_ERROR_CUDA);
    EXPECT_NE(message().find("cuCtxEnablePeerAccess"), std::string::npos) << message();
    fake::fail_entry("");
    EXPECT_EQ(cucore_device_disable_peer_access(d0, d1), CUCORE_ERROR_INVALID_STATE) << "the failure enabled nothing";
    cucore_device_release(d1);
    cucore_device_release(d0);
}

}  // namespace
