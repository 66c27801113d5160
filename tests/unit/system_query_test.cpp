// The generic readers of system.h against the fake NVML (fake_nvml.hpp lists
// its values): every numeric query, text, change, related device list, field
// values, device pairs, the driver branch and process names; NVML's return
// code of each failure (cucore_system_last_nvml_result); argument checks; and
// handles given out by the list calls (none leaked).
#include <cstring>
#include <string>
#include <vector>

#include "cucore.hpp"
#include "driver/nvml.hpp"
#include "fake_nvml.hpp"
#include "test_support.hpp"

namespace {

namespace n = cucore::driver::nvml;

class SystemQueryTest : public FakeDriverTest {
  protected:
    void SetUp() override {
        FakeDriverTest::SetUp();
        fake::nvml::install(2);
        before_ = live(CUCORE_OBJECT_SYSTEM_DEVICE);
        ASSERT_EQ(cucore_system_device_get(0, &d0_), CUCORE_SUCCESS) << message();
        ASSERT_EQ(cucore_system_device_get(1, &d1_), CUCORE_SUCCESS) << message();
    }
    void TearDown() override {
        cucore_system_device_release(d0_);
        cucore_system_device_release(d1_);
        EXPECT_EQ(live(CUCORE_OBJECT_SYSTEM_DEVICE), before_) << "leaked system devices";
        fake::nvml::uninstall();
        FakeDriverTest::TearDown();
    }
    // The values of `query` on `device`, sized then read.
    std::vector<int64_t> q(cucore_system_device_t *device, cucore_system_query_t query, int64_t a0 = 0,
                           int64_t a1 = 0) {
        size_t count = 99;
        EXPECT_EQ(cucore_system_device_query(device, query, a0, a1, nullptr, 0, &count), CUCORE_SUCCESS)
            << query << ": " << message();
        std::vector<int64_t> values(count + 1, -7);
        EXPECT_EQ(cucore_system_device_query(device, query, a0, a1, values.data(), values.size(), &count),
                  CUCORE_SUCCESS)
            << message();
        EXPECT_EQ(values[count], -7) << "nothing written past the count";
        values.resize(count);
        return values;
    }
    std::string text(cucore_system_device_t *device, cucore_system_text_t which, int64_t arg = 0) {
        size_t length = 0;
        EXPECT_EQ(cucore_system_device_text(device, which, arg, nullptr, 0, &length), CUCORE_SUCCESS) << message();
        std::string value(length + 1, '\0');
        EXPECT_EQ(cucore_system_device_text(device, which, arg, &value[0], value.size(), &length), CUCORE_SUCCESS);
        value.resize(length);
        return value;
    }
    std::vector<std::string> uuids(const std::vector<cucore_system_device_t *> &devices) {
        std::vector<std::string> out;
        for (cucore_system_device_t *d : devices) {
            const char *uuid = nullptr;
            EXPECT_EQ(cucore_system_device_uuid(d, &uuid), CUCORE_SUCCESS);
            out.push_back(uuid ? uuid : "");
            cucore_system_device_release(d);
        }
        return out;
    }
    std::string uuid_of(cucore_system_device_t *d) {
        const char *uuid = nullptr;
        EXPECT_EQ(cucore_system_device_uuid(d, &uuid), CUCORE_SUCCESS);
        return uuid;
    }
    cucore_system_device_t *d0_ = nullptr, *d1_ = nullptr;
    size_t before_ = 0;
};

using V = std::vector<int64_t>;

TEST_F(SystemQueryTest, EveryQueryAnswersTheFakesValues) {
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_ARCHITECTURE), V{9});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_BRAND), V{14});
    EXPECT_EQ(q(d1_, CUCORE_SYSTEM_QUERY_MINOR_NUMBER), V{1});
    EXPECT_EQ(q(d1_, CUCORE_SYSTEM_QUERY_MODULE_ID), V{2});
    EXPECT_EQ(q(d1_, CUCORE_SYSTEM_QUERY_NUMA_NODE_ID), V{1});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_C2C_ENABLED), V{0});
    EXPECT_EQ(q(d1_, CUCORE_SYSTEM_QUERY_C2C_ENABLED), V{1});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_PERSISTENCE_MODE), V{1});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_DISPLAY_CONNECTED), V{0});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_DISPLAY_ACTIVE), V{0});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_COMPUTE_CAPABILITY), (V{9, 0}));
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_ADDRESSING_MODE), V{1});
    EXPECT_EQ(q(d1_, CUCORE_SYSTEM_QUERY_ADDRESSING_MODE), V{0});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_PERFORMANCE_STATE), V{0});
    EXPECT_EQ(q(d1_, CUCORE_SYSTEM_QUERY_PERFORMANCE_STATE), V{32});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_SUPPORTED_PSTATES), (V{0, 5, 8}));
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_CLOCK_EVENT_REASONS), V{1});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_SUPPORTED_CLOCK_EVENT_REASONS), V{0x1FF});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_SUPPORTED_EVENT_TYPES), V{0xB});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_AUTO_BOOSTED_CLOCKS), (V{1, 0}));
    EXPECT_EQ(q(d1_, CUCORE_SYSTEM_QUERY_CLOCK, 0, 0), V{1756});
    EXPECT_EQ(q(d1_, CUCORE_SYSTEM_QUERY_CLOCK, 2, 3), V{2619});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_MAX_CLOCK, 3), V{1710});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_MAX_CUSTOMER_BOOST_CLOCK, 1), V{1980});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_PSTATE_CLOCK_RANGE, 0, 2), (V{212, 1980}));
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_CLOCK_OFFSETS, 1, 2), (V{12, -500, 1000})) << "signed values kept";
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_FAN_COUNT), V{1});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_FAN_SPEED, 0), V{30});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_FAN_SPEED_RPM, 0), V{1500});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_FAN_TARGET_SPEED, 0), V{35});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_FAN_SPEED_RANGE), (V{20, 100}));
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_FAN_CONTROL_POLICY, 0), V{0});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_COOLER), (V{2, 6}));
    EXPECT_EQ(q(d1_, CUCORE_SYSTEM_QUERY_ATTRIBUTES), (V{133, 7, 7, 0, 7, 1, 7, 7, 81559}));
    EXPECT_EQ(q(d1_, CUCORE_SYSTEM_QUERY_BAR1_MEMORY), (V{128LL << 30, (128LL << 30) - (32LL << 20) - 1, (32LL << 20) + 1}));
    EXPECT_EQ(q(d1_, CUCORE_SYSTEM_QUERY_MEMORY),
              (V{(80LL << 30) + 1, 512LL << 20, (80LL << 30) + 1 - (1LL << 30) - (512LL << 20), 1LL << 30}));
    EXPECT_EQ(q(d1_, CUCORE_SYSTEM_QUERY_PCI_INFO), (V{0, 2, 0, 0x233010de, 0x16c110de, 3, 2}));
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_PCIE_MAX_LINK_GENERATION), V{5});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_PCIE_GPU_MAX_LINK_GENERATION), V{5});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_PCIE_MAX_LINK_WIDTH), V{16});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_PCIE_LINK_GENERATION), V{4});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_PCIE_LINK_WIDTH), V{8});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_PCIE_THROUGHPUT, 0), V{1000});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_PCIE_THROUGHPUT, 1), V{2000});
    EXPECT_EQ(q(d1_, CUCORE_SYSTEM_QUERY_PCIE_REPLAY_COUNTER), V{4});
    const V pstates = q(d1_, CUCORE_SYSTEM_QUERY_DYNAMIC_PSTATES);
    ASSERT_EQ(pstates.size(), 33u) << "flags and 8 domains of 4";
    EXPECT_EQ((V{pstates.begin(), pstates.begin() + 5}), (V{0, 1, 11, 30, 20}));
    EXPECT_EQ(pstates[5], 0) << "domain 1 absent";
    EXPECT_EQ(q(d1_, CUCORE_SYSTEM_QUERY_REPAIR_STATUS), (V{0, 1}));
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_TEMPERATURE_THRESHOLD, 1), V{89});
    EXPECT_EQ(q(d1_, CUCORE_SYSTEM_QUERY_TEMPERATURE_MARGIN), V{44});
    EXPECT_EQ(q(d1_, CUCORE_SYSTEM_QUERY_THERMAL_SETTINGS, 15), (V{1, 0, 92, 41, 1}));
    EXPECT_EQ(q(d1_, CUCORE_SYSTEM_QUERY_THERMAL_SETTINGS, 2), V{}) << "no memory sensor: no values";
    EXPECT_EQ(q(d1_, CUCORE_SYSTEM_QUERY_INFOROM_CHECKSUM), V{0x1235});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_BBX_FLUSH_TIME), (V{1700000000, 1500}));
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_NVLINK_COUNT), V{18});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_NVLINK_VERSION, 17), V{6});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_NVLINK_STATE, 15), V{1});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_NVLINK_STATE, 16), V{0});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_MIG_MODE), (V{0, 0}));
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_IS_MIG_DEVICE), V{0});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_MAX_MIG_DEVICES), V{0});
    EXPECT_EQ(q(d1_, CUCORE_SYSTEM_QUERY_CPU_AFFINITY, 0), (V{4, 5, 6, 7})) << "the set bits' indices";
    EXPECT_EQ(q(d1_, CUCORE_SYSTEM_QUERY_MEMORY_AFFINITY, 1), V{1});
}

TEST_F(SystemQueryTest, ProcessesComeWithTheirInstanceIds) {
    fake::nvml::set_processes({{1234, 1ull << 20}, {99, n::kNotAvailable}});
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_PROCESSES),
              (V{1234, 1 << 20, 0xFFFFFFFFLL, 0xFFFFFFFFLL, 99, -1, 0xFFFFFFFFLL, 0xFFFFFFFFLL}));
    int64_t values[3] = {-7, -7, -7};
    size_t count = 0;
    ASSERT_EQ(cucore_system_device_query(d0_, CUCORE_SYSTEM_QUERY_PROCESSES, 0, 0, values, 2, &count),
              CUCORE_SUCCESS);
    EXPECT_EQ(count, 8u) << "the whole count";
    EXPECT_EQ(values[1], 1 << 20);
    EXPECT_EQ(values[2], -7) << "nothing past the capacity";
}

TEST_F(SystemQueryTest, TextsAndTheirTruncation) {
    EXPECT_EQ(text(d1_, CUCORE_SYSTEM_TEXT_SERIAL), "1658220000001");
    EXPECT_EQ(text(d0_, CUCORE_SYSTEM_TEXT_BOARD_PART_NUMBER), "692-2G520-0200-000");
    EXPECT_EQ(text(d0_, CUCORE_SYSTEM_TEXT_INFOROM_IMAGE_VERSION), "G520.0200.00.05");
    EXPECT_EQ(text(d0_, CUCORE_SYSTEM_TEXT_INFOROM_VERSION, 1), "7.0");
    char small[4];
    size_t length = 0;
    ASSERT_EQ(cucore_system_device_text(d0_, CUCORE_SYSTEM_TEXT_SERIAL, 0, small, sizeof small, &length),
              CUCORE_SUCCESS);
    EXPECT_STREQ(small, "165");
    EXPECT_EQ(length, 13u);
    EXPECT_EQ(cucore_system_device_text(d0_, CUCORE_SYSTEM_TEXT_INFOROM_VERSION, 9, small, sizeof small, &length),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_last_nvml_result(), n::kErrorInvalidArgument) << "NVML refused the object";
    EXPECT_EQ(length, 0u);
}

TEST_F(SystemQueryTest, DriverBranchAndProcessNames) {
    size_t length = 0;
    char buffer[64];
    ASSERT_EQ(cucore_system_driver_branch(buffer, sizeof buffer, &length), CUCORE_SUCCESS) << message();
    EXPECT_STREQ(buffer, "r580_00");
    ASSERT_EQ(cucore_system_process_name(4321, buffer, sizeof buffer, &length), CUCORE_SUCCESS) << message();
    EXPECT_STREQ(buffer, "fake-process-4321");
    EXPECT_EQ(length, 17u);
    EXPECT_EQ(cucore_system_process_name(0, buffer, sizeof buffer, &length), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_last_nvml_result(), n::kErrorNotFound);
    EXPECT_NE(message().find("NVML_ERROR_NOT_FOUND"), std::string::npos) << message();
    EXPECT_STREQ(buffer, "") << "cleared on failure";
}

TEST_F(SystemQueryTest, ControlsChangeWhatTheQueriesRead) {
    ASSERT_EQ(cucore_system_device_control(d0_, CUCORE_SYSTEM_CONTROL_PERSISTENCE_MODE, 0, 0), CUCORE_SUCCESS);
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_PERSISTENCE_MODE), V{0});
    ASSERT_EQ(cucore_system_device_control(d0_, CUCORE_SYSTEM_CONTROL_FAN_SPEED, 0, 80), CUCORE_SUCCESS);
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_FAN_SPEED, 0), V{80});
    ASSERT_EQ(cucore_system_device_control(d0_, CUCORE_SYSTEM_CONTROL_FAN_DEFAULT_SPEED, 0, 0), CUCORE_SUCCESS);
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_FAN_SPEED, 0), V{30});
    ASSERT_EQ(cucore_system_device_control(d0_, CUCORE_SYSTEM_CONTROL_MIG_MODE, 1, 0), CUCORE_SUCCESS);
    EXPECT_EQ(q(d0_, CUCORE_SYSTEM_QUERY_MIG_MODE), (V{0, 1})) << "pending until a reset";
    EXPECT_EQ(cucore_system_device_control(d0_, CUCORE_SYSTEM_CONTROL_SET_CPU_AFFINITY, 0, 0), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_system_device_control(d0_, CUCORE_SYSTEM_CONTROL_CLEAR_CPU_AFFINITY, 0, 0), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_system_device_control(d0_, CUCORE_SYSTEM_CONTROL_VALIDATE_INFOROM, 0, 0), CUCORE_SUCCESS);
    fake::nvml::fail_entry("nvmlDeviceValidateInforom", 14);
    EXPECT_EQ(cucore_system_device_control(d0_, CUCORE_SYSTEM_CONTROL_VALIDATE_INFOROM, 0, 0), CUCORE_ERROR_CUDA);
    EXPECT_EQ(cucore_system_last_nvml_result(), 14) << "NVML_ERROR_CORRUPTED_INFOROM";
    fake::nvml::fail_entry("");
    EXPECT_EQ(cucore_system_device_control(d0_, CUCORE_SYSTEM_CONTROL_FAN_SPEED, 0, 101), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_last_nvml_result(), n::kErrorInvalidArgument);
}

TEST_F(SystemQueryTest, RelatedDevicesAreNewHandles) {
    size_t count = 0;
    cucore_system_device_t *found[4] = {};
    ASSERT_EQ(cucore_system_device_related(d0_, CUCORE_SYSTEM_RELATION_NEAREST_GPUS, 40, nullptr, 0, &count),
              CUCORE_SUCCESS);
    EXPECT_EQ(count, 1u);
    ASSERT_EQ(cucore_system_device_related(d0_, CUCORE_SYSTEM_RELATION_NEAREST_GPUS, 40, found, 4, &count),
              CUCORE_SUCCESS);
    ASSERT_EQ(count, 1u);
    EXPECT_EQ(uuids({found[0]}), std::vector<std::string>{uuid_of(d1_)});
    EXPECT_EQ(cucore_system_device_related(d0_, CUCORE_SYSTEM_RELATION_MIG_DEVICE, 0, found, 4, &count),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_last_nvml_result(), n::kErrorNotFound);
    EXPECT_EQ(found[0], nullptr) << "cleared on failure";
    EXPECT_EQ(count, 0u);
    EXPECT_EQ(cucore_system_device_related(d0_, CUCORE_SYSTEM_RELATION_MIG_PARENT, 0, found, 4, &count),
              CUCORE_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(cucore_system_devices_with_cpu_affinity(5, found, 4, &count), CUCORE_SUCCESS) << message();
    ASSERT_EQ(count, 1u);
    EXPECT_EQ(uuids({found[0]}), std::vector<std::string>{uuid_of(d1_)});
    ASSERT_EQ(cucore_system_devices_with_cpu_affinity(64, found, 4, &count), CUCORE_SUCCESS);
    EXPECT_EQ(count, 0u);
}

TEST_F(SystemQueryTest, FieldValuesEachWithItsResult) {
    cucore_system_field_value_t fields[3] = {};
    fields[0].field_id = 91;
    fields[1].field_id = 186;
    fields[2].field_id = 5;
    ASSERT_EQ(cucore_system_device_field_values(d0_, fields, 3), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fields[0].result, 0);
    EXPECT_EQ(fields[0].value_type, 1);
    EXPECT_EQ(fields[0].value, 18u);
    EXPECT_EQ(fields[0].latency_usec, 7);
    EXPECT_EQ(fields[1].value_type, 0);
    double power = 0;
    std::memcpy(&power, &fields[1].value, sizeof power);
    EXPECT_EQ(power, 100.5);
    EXPECT_EQ(fields[2].result, n::kErrorNotSupported) << "one field failing is not the call failing";
    EXPECT_EQ(fields[2].timestamp, 1700000000000002LL);
    ASSERT_EQ(cucore_system_device_clear_field_values(d0_, fields, 2), CUCORE_SUCCESS);
    EXPECT_EQ(fake::nvml::cleared_fields(), (std::vector<unsigned>{91, 186}));
    EXPECT_EQ(cucore_system_device_field_values(d0_, fields, 0), CUCORE_SUCCESS) << "nothing to read";
    EXPECT_EQ(cucore_system_device_field_values(d0_, nullptr, 1), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_device_clear_field_values(d0_, nullptr, 2), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_device_field_values(d0_, fields, size_t(1) << 40), CUCORE_ERROR_INVALID_ARGUMENT);
}

TEST_F(SystemQueryTest, DevicePairs) {
    int value = -1;
    ASSERT_EQ(cucore_system_device_p2p_status(d0_, d1_, 0, &value), CUCORE_SUCCESS);
    EXPECT_EQ(value, 0);
    ASSERT_EQ(cucore_system_device_p2p_status(d0_, d1_, 3, &value), CUCORE_SUCCESS);
    EXPECT_EQ(value, 5) << "atomics not supported";
    ASSERT_EQ(cucore_system_device_common_ancestor(d0_, d1_, &value), CUCORE_SUCCESS);
    EXPECT_EQ(value, 40);
    ASSERT_EQ(cucore_system_device_common_ancestor(d0_, d0_, &value), CUCORE_SUCCESS);
    EXPECT_EQ(value, 0);
    EXPECT_EQ(cucore_system_device_p2p_status(d0_, d1_, -1, &value), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_last_nvml_result(), 0) << "refused before NVML";
    EXPECT_EQ(cucore_system_device_p2p_status(d0_, nullptr, 0, &value), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(cucore_system_device_common_ancestor(d0_, d1_, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
}

TEST_F(SystemQueryTest, ArgumentsAreCheckedBeforeNvml) {
    size_t count = 5;
    int64_t value = 0;
    const long calls = fake::nvml::calls();
    EXPECT_EQ(cucore_system_device_query(d0_, CUCORE_SYSTEM_QUERY_UNSET, 0, 0, &value, 1, &count),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(count, 0u);
    EXPECT_EQ(cucore_system_device_query(d0_, static_cast<cucore_system_query_t>(57), 0, 0, &value, 1, &count),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_device_query(d0_, CUCORE_SYSTEM_QUERY_FAN_SPEED, -1, 0, &value, 1, &count),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("arg0"), std::string::npos) << message();
    EXPECT_EQ(cucore_system_device_query(d0_, CUCORE_SYSTEM_QUERY_CLOCK, 0, int64_t(1) << 40, &value, 1, &count),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_device_query(d0_, CUCORE_SYSTEM_QUERY_BRAND, 0, 0, nullptr, 1, &count),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_device_query(d0_, CUCORE_SYSTEM_QUERY_BRAND, 0, 0, &value, 1, nullptr),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_device_query(nullptr, CUCORE_SYSTEM_QUERY_BRAND, 0, 0, &value, 1, &count),
              CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(cucore_system_device_text(d0_, CUCORE_SYSTEM_TEXT_UNSET, 0, nullptr, 0, nullptr),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_device_text(d0_, CUCORE_SYSTEM_TEXT_SERIAL, 0, nullptr, 4, nullptr),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_device_control(d0_, CUCORE_SYSTEM_CONTROL_UNSET, 0, 0), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_device_control(nullptr, CUCORE_SYSTEM_CONTROL_PERSISTENCE_MODE, 0, 0),
              CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(cucore_system_device_related(d0_, CUCORE_SYSTEM_RELATION_UNSET, 0, nullptr, 0, &count),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_device_related(d0_, CUCORE_SYSTEM_RELATION_NEAREST_GPUS, 0, nullptr, 2, &count),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_devices_with_cpu_affinity(0, nullptr, 0, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_last_nvml_result(), 0);
    EXPECT_EQ(fake::nvml::calls(), calls) << "no argument reached NVML";
}

TEST_F(SystemQueryTest, NvmlFailuresKeepTheirReturnCode) {
    const struct {
        const char *entry;
        int result;
        cucore_status_t status;
    } cases[] = {{"nvmlDeviceGetNumFans", n::kErrorNotSupported, CUCORE_ERROR_NOT_SUPPORTED},
                 {"nvmlDeviceGetNumFans", n::kErrorNoPermission, CUCORE_ERROR_NOT_SUPPORTED},
                 {"nvmlDeviceGetNumFans", 15 /* GPU_IS_LOST */, CUCORE_ERROR_CUDA},
                 {"nvmlDeviceGetNumFans", n::kErrorUnknown, CUCORE_ERROR_CUDA}};
    for (const auto &c : cases) {
        fake::nvml::fail_entry(c.entry, c.result);
        size_t count = 9;
        int64_t value = 9;
        EXPECT_EQ(cucore_system_device_query(d0_, CUCORE_SYSTEM_QUERY_FAN_COUNT, 0, 0, &value, 1, &count), c.status);
        EXPECT_EQ(cucore_system_last_nvml_result(), c.result);
        EXPECT_EQ(count, 0u);
        EXPECT_NE(message().find("nvmlDeviceGetNumFans failed"), std::string::npos) << message();
        // A later success (of any system call) starts clean.
        unsigned index = 0;
        ASSERT_EQ(cucore_system_device_index(d0_, &index), CUCORE_SUCCESS);
        EXPECT_EQ(cucore_system_last_nvml_result(), 0);
    }
    fake::nvml::fail_entry("");
    // A versioned struct of the wrong version: NVML's ARGUMENT_VERSION_MISMATCH, as the fake checks each.
    fake::nvml::fail_entry("nvmlDeviceGetMemoryInfo_v2", n::kErrorArgumentVersionMismatch);
    size_t count = 0;
    EXPECT_EQ(cucore_system_device_query(d0_, CUCORE_SYSTEM_QUERY_MEMORY, 0, 0, nullptr, 0, &count), CUCORE_ERROR_CUDA);
    EXPECT_EQ(cucore_system_last_nvml_result(), n::kErrorArgumentVersionMismatch);
    fake::nvml::fail_entry("");
}

TEST_F(SystemQueryTest, WithoutNvmlTheResultIsLibraryNotFound) {
    cucore::driver::mark_nvml_absent("");
    size_t count = 0;
    EXPECT_EQ(cucore_system_device_query(d0_, CUCORE_SYSTEM_QUERY_BRAND, 0, 0, nullptr, 0, &count),
              CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(cucore_system_last_nvml_result(), n::kErrorLibraryNotFound);
    char buffer[8];
    EXPECT_EQ(cucore_system_driver_branch(buffer, sizeof buffer, nullptr), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(cucore_system_last_nvml_result(), n::kErrorLibraryNotFound);
    fake::nvml::install(2);
}

TEST_F(SystemQueryTest, AnNvmlWithoutTheEntryPointIsFunctionNotFound) {
    cucore::driver::NvmlTable table = fake::nvml::current_table();
    table.nvmlDeviceGetRepairStatus = nullptr;
    cucore::driver::install_nvml_substitute(&table);
    size_t count = 0;
    EXPECT_EQ(cucore_system_device_query(d0_, CUCORE_SYSTEM_QUERY_REPAIR_STATUS, 0, 0, nullptr, 0, &count),
              CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(cucore_system_last_nvml_result(), 13) << "NVML_ERROR_FUNCTION_NOT_FOUND";
    EXPECT_NE(message().find("nvmlDeviceGetRepairStatus"), std::string::npos) << message();
    fake::nvml::install(2);
}

TEST_F(SystemQueryTest, Facade) {
    EXPECT_EQ(cucore::system::driver_branch(), "r580_00");
    EXPECT_EQ(cucore::system::process_name(7), "fake-process-7");
    const cucore::SystemDevice a(0), b(1);
    EXPECT_EQ(a.query(CUCORE_SYSTEM_QUERY_SUPPORTED_PSTATES), (V{0, 5, 8}));
    EXPECT_EQ(b.query(CUCORE_SYSTEM_QUERY_CLOCK, 1, 0), V{1756});
    EXPECT_EQ(b.text(CUCORE_SYSTEM_TEXT_SERIAL), "1658220000001");
    a.control(CUCORE_SYSTEM_CONTROL_PERSISTENCE_MODE, 0);
    EXPECT_EQ(a.query(CUCORE_SYSTEM_QUERY_PERSISTENCE_MODE), V{0});
    const std::vector<cucore::SystemDevice> near = a.related(CUCORE_SYSTEM_RELATION_NEAREST_GPUS, 40);
    ASSERT_EQ(near.size(), 1u);
    EXPECT_EQ(near[0].index(), 1u);
    const std::vector<cucore::SystemDevice> cpu = cucore::SystemDevice::with_cpu_affinity(2);
    ASSERT_EQ(cpu.size(), 1u);
    EXPECT_EQ(cpu[0].index(), 0u);
    std::vector<cucore_system_field_value_t> fields(1);
    fields[0].field_id = 91;
    a.field_values(fields);
    EXPECT_EQ(fields[0].value, 18u);
    a.clear_field_values(fields);
    EXPECT_EQ(a.p2p_status(b, 0), 0);
    EXPECT_EQ(a.common_ancestor(b), 40);
    try {
        a.query(CUCORE_SYSTEM_QUERY_MIG_MODE);
        fake::nvml::fail_entry("nvmlDeviceGetMigMode", n::kErrorNotSupported);
        a.query(CUCORE_SYSTEM_QUERY_MIG_MODE);
        FAIL() << "NOT_SUPPORTED";
    } catch (const cucore::Error &error) {
        EXPECT_EQ(error.status(), CUCORE_ERROR_NOT_SUPPORTED);
        EXPECT_EQ(cucore::system::last_nvml_result(), n::kErrorNotSupported);
    }
    fake::nvml::fail_entry("");
    b.register_events(0x8);
    fake::nvml::post_event(1, 0x8, 48);
    cucore::SystemDevice from;
    const cucore_system_event_t event = b.wait_event(0, &from);
    EXPECT_EQ(event.event_data, 48u);
    EXPECT_EQ(from.index(), 1u);
}

TEST_F(SystemQueryTest, EventsAreRecordedPerHandleAndWaitedFor) {
    cucore_system_event_t event{};
    cucore_system_device_t *from = reinterpret_cast<cucore_system_device_t *>(1);
    EXPECT_EQ(cucore_system_device_wait_event(d0_, 0, &event, &from), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(from, nullptr) << "cleared";
    EXPECT_NE(message().find("no events are registered"), std::string::npos) << message();
    EXPECT_EQ(cucore_system_device_register_events(d0_, 0), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_device_register_events(d0_, 0x10), CUCORE_ERROR_NOT_SUPPORTED) << "clock events";
    EXPECT_EQ(cucore_system_last_nvml_result(), n::kErrorNotSupported);
    // A second handle of GPU 0 records on its own set.
    cucore_system_device_t *other = nullptr;
    ASSERT_EQ(cucore_system_device_get(0, &other), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_system_device_register_events(d0_, 0x8), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_system_device_register_events(other, 0x1), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::nvml::live_event_sets(), 2u);
    EXPECT_EQ(cucore_system_device_wait_event(d0_, 10, &event, nullptr), CUCORE_ERROR_NOT_READY);
    EXPECT_EQ(cucore_system_last_nvml_result(), n::kErrorTimeout);
    fake::nvml::post_event(0, 0x8, 79);  // an XID 79 (fallen off the bus)
    fake::nvml::post_event(1, 0x8, 13);  // not registered on GPU 1
    ASSERT_EQ(cucore_system_device_wait_event(d0_, 0, &event, &from), CUCORE_SUCCESS) << message();
    EXPECT_EQ(event.event_type, 0x8u);
    EXPECT_EQ(event.event_data, 79u);
    EXPECT_EQ(event.gpu_instance_id, 0xFFFFFFFFu);
    ASSERT_NE(from, nullptr);
    EXPECT_EQ(uuid_of(from), uuid_of(d0_));
    cucore_system_device_release(from);
    EXPECT_EQ(cucore_system_device_wait_event(other, 0, &event, nullptr), CUCORE_ERROR_NOT_READY)
        << "the other handle registered only ECC events";
    EXPECT_EQ(cucore_system_device_wait_event(d0_, 0, nullptr, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_device_register_events(nullptr, 0x8), CUCORE_ERROR_INVALID_HANDLE);
    cucore_system_device_release(other);
    EXPECT_EQ(fake::nvml::live_event_sets(), 1u) << "freed with its handle";
}

}  // namespace
