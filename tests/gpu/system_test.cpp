// System information through the real NVML: what it says of each GPU agrees
// with the CUDA driver (count, name, UUID, PCI location, memory), its readings
// are in a physical range, and a CUDA device and its NVML view find each other.
// Skips with the reason where NVML (libnvidia-ml.so.1) is not installed.
#include <cstdio>
#include <string>
#include <vector>

#include "gpu_test.hpp"

namespace {

using gpu::cu;
using gpu::GpuTest;

class SystemTest : public GpuTest {
protected:
    void SetUp() override {
        GpuTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        unsigned count = 0;
        const cucore_status_t s = cucore_system_device_count(&count);
        if (s == CUCORE_ERROR_NOT_SUPPORTED) GTEST_SKIP() << "NVML is not available: " << cucore_last_error_message();
        ASSERT_EQ(s, CUCORE_SUCCESS) << cucore_last_error_message();
        nvml_count_ = count;
    }
    static std::string raw_uuid_text(CUdevice device) {
        CUuuid u{};
        EXPECT_EQ(cu().DeviceGetUuid(&u, device), CUDA_SUCCESS);
        const unsigned char *b = reinterpret_cast<const unsigned char *>(u.bytes);
        char text[48];
        std::snprintf(text, sizeof text,
                      "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
                      b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
        return text;
    }
    unsigned nvml_count_ = 0;
};

TEST_F(SystemTest, EveryCudaDeviceIsAnNvmlDeviceWithTheSameIdentity) {
    // CUDA_VISIBLE_DEVICES may hide GPUs from CUDA, never from NVML.
    ASSERT_GE(nvml_count_, static_cast<unsigned>(device_count_));
    for (int ordinal = 0; ordinal < device_count_; ++ordinal) {
        SCOPED_TRACE("CUDA device " + std::to_string(ordinal));
        CUdevice raw = 0;
        CU_ASSERT_OK(cu().DeviceGet(&raw, ordinal));
        cucore_device_t *cuda = nullptr;
        CUCORE_ASSERT_OK(cucore_device_get(ordinal, &cuda));
        cucore_system_device_t *system = nullptr;
        CUCORE_ASSERT_OK(cucore_system_device_get_for_device(cuda, &system));

        const char *uuid = nullptr, *name = nullptr, *bus = nullptr;
        CUCORE_ASSERT_OK(cucore_system_device_uuid(system, &uuid));
        EXPECT_EQ(std::string(uuid), raw_uuid_text(raw));
        char raw_name[256] = {};
        CU_ASSERT_OK(cu().DeviceGetName(raw_name, sizeof raw_name, raw));
        CUCORE_ASSERT_OK(cucore_system_device_name(system, &name));
        EXPECT_EQ(std::string(name), std::string(raw_name));

        // The PCI location agrees with the driver's attributes; NVIDIA's vendor id is in the low 16 bits.
        int domain = -1, pci_bus = -1, pci_device = -1;
        CU_ASSERT_OK(cu().DeviceGetAttribute(&domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, raw));
        CU_ASSERT_OK(cu().DeviceGetAttribute(&pci_bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, raw));
        CU_ASSERT_OK(cu().DeviceGetAttribute(&pci_device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, raw));
        cucore_system_pci_info_t pci = CUCORE_SYSTEM_PCI_INFO_INIT;
        CUCORE_ASSERT_OK(cucore_system_device_pci_info(system, &pci));
        EXPECT_EQ(pci.domain, static_cast<unsigned>(domain));
        EXPECT_EQ(pci.bus, static_cast<unsigned>(pci_bus));
        EXPECT_EQ(pci.device, static_cast<unsigned>(pci_device));
        EXPECT_EQ(pci.pci_device_id & 0xFFFFu, 0x10DEu);
        CUCORE_ASSERT_OK(cucore_system_device_pci_bus_id(system, &bus));
        char expected_bus[32];
        std::snprintf(expected_bus, sizeof expected_bus, "%08X:%02X:%02X.0", static_cast<unsigned>(domain),
                      static_cast<unsigned>(pci_bus), static_cast<unsigned>(pci_device));
        EXPECT_STRCASEEQ(bus, expected_bus);

        // The same GPU by NVML index, UUID and bus id; and back to the same CUDA device.
        unsigned index = 0;
        CUCORE_ASSERT_OK(cucore_system_device_index(system, &index));
        EXPECT_LT(index, nvml_count_);
        cucore_system_device_t *by_index = nullptr, *by_uuid = nullptr, *by_bus = nullptr;
        CUCORE_ASSERT_OK(cucore_system_device_get(index, &by_index));
        CUCORE_ASSERT_OK(cucore_system_device_get_by_uuid(uuid, &by_uuid));
        CUCORE_ASSERT_OK(cucore_system_device_get_by_pci_bus_id(bus, &by_bus));
        for (cucore_system_device_t *same : {by_index, by_uuid, by_bus}) {
            const char *u = nullptr;
            CUCORE_EXPECT_OK(cucore_system_device_uuid(same, &u));
            EXPECT_STREQ(u, uuid);
            cucore_system_device_release(same);
        }
        cucore_device_t *back = nullptr;
        CUCORE_ASSERT_OK(cucore_system_device_to_device(system, &back));
        int back_ordinal = -1;
        CUCORE_EXPECT_OK(cucore_device_ordinal(back, &back_ordinal));
        EXPECT_EQ(back_ordinal, ordinal);
        cucore_device_release(back);

        // Memory: NVML's total counts what the driver reserves for itself, which CUDA's leaves out
        // (about 0.5 GiB of an H100's 80): NVML's is never the smaller, and within 5 %.
        size_t raw_total = 0;
        CU_ASSERT_OK(cu().DeviceTotalMem(&raw_total, raw));
        cucore_system_memory_info_t memory = CUCORE_SYSTEM_MEMORY_INFO_INIT;
        CUCORE_ASSERT_OK(cucore_system_device_memory_info(system, &memory));
        EXPECT_GE(memory.total, raw_total);
        EXPECT_LE(static_cast<double>(memory.total), static_cast<double>(raw_total) * 1.05);
        EXPECT_EQ(memory.used + memory.free, memory.total);

        cucore_system_device_release(system);
        cucore_device_release(cuda);
    }
}

TEST_F(SystemTest, ReadingsAreInAPhysicalRange) {
    cucore_system_device_t *d = nullptr;
    CUCORE_ASSERT_OK(cucore_system_device_get_for_device(dev_, &d));
    unsigned celsius = 0, draw = 0, limit = 0, gpu_percent = 101, memory_percent = 101;
    CUCORE_EXPECT_OK(cucore_system_device_temperature(d, &celsius));
    EXPECT_GT(celsius, 0u);
    EXPECT_LT(celsius, 120u);
    CUCORE_EXPECT_OK(cucore_system_device_power_limit(d, &limit));
    EXPECT_GT(limit, 0u);
    const cucore_status_t usage = cucore_system_device_power_usage(d, &draw);
    if (usage == CUCORE_SUCCESS)
        EXPECT_GT(draw, 0u);
    else
        EXPECT_EQ(usage, CUCORE_ERROR_NOT_SUPPORTED) << cucore_last_error_message();
    CUCORE_EXPECT_OK(cucore_system_device_utilization(d, &gpu_percent, &memory_percent));
    EXPECT_LE(gpu_percent, 100u);
    EXPECT_LE(memory_percent, 100u);
    for (cucore_system_clock_t clock : {CUCORE_SYSTEM_CLOCK_SM, CUCORE_SYSTEM_CLOCK_MEMORY}) {
        unsigned now = 0, most = 0;
        CUCORE_EXPECT_OK(cucore_system_device_clock(d, clock, &now));
        CUCORE_EXPECT_OK(cucore_system_device_max_clock(d, clock, &most));
        EXPECT_GT(now, 0u) << clock;
        EXPECT_GE(most, now) << clock;
    }
    cucore_compute_mode_t mode = CUCORE_COMPUTE_MODE_UNSET;
    CUCORE_EXPECT_OK(cucore_system_device_compute_mode(d, &mode));
    EXPECT_NE(mode, CUCORE_COMPUTE_MODE_UNSET);
    size_t count = 0;
    CUCORE_EXPECT_OK(cucore_system_device_processes(d, nullptr, nullptr, 0, &count));
    int version = 0, cuda_version = 0;
    CUCORE_EXPECT_OK(cucore_system_cuda_driver_version(&version));
    CU_ASSERT_OK(cu().DriverGetVersion(&cuda_version));
    EXPECT_EQ(version, cuda_version);
    cucore_system_device_release(d);
}

TEST_F(SystemTest, Facade) {
    cucore::Device device(0);
    cucore::SystemDevice system = device.to_system_device();
    EXPECT_EQ(system.name(), device.name());
    EXPECT_EQ(system.to_device(), device);
    EXPECT_FALSE(cucore::system::driver_version().empty());
    EXPECT_FALSE(cucore::system::nvml_version().empty());
    EXPECT_GT(system.memory_info().total, 0u);
    CUCORE_EXPECT_THROW_STATUS(cucore::SystemDevice(nvml_count_), CUCORE_ERROR_INVALID_ARGUMENT);
}

// The generic readers on the real NVML: values in a physical range where the GPU
// has the property, NVML's NOT_SUPPORTED (or FUNCTION_NOT_FOUND with an older
// driver) where it does not, never a crash.
TEST_F(SystemTest, TheGenericReadersAnswerRealValues) {
    CUdevice raw = 0;
    CU_ASSERT_OK(cu().DeviceGet(&raw, 0));
    cucore_device_t *cuda = nullptr;
    CUCORE_ASSERT_OK(cucore_device_get(0, &cuda));
    cucore_system_device_t *d = nullptr;
    CUCORE_ASSERT_OK(cucore_system_device_get_for_device(cuda, &d));
    // Reads `query`; an empty vector where this GPU or driver lacks it (the NVML code is checked).
    auto query = [d](cucore_system_query_t query, int64_t a0 = 0, int64_t a1 = 0) {
        int64_t values[64] = {};
        size_t count = 0;
        const cucore_status_t s = cucore_system_device_query(d, query, a0, a1, values, 64, &count);
        if (s != CUCORE_SUCCESS) {
            const int nvml = cucore_system_last_nvml_result();
            EXPECT_TRUE(nvml == 3 || nvml == 13) << "query " << query << ": " << cucore_last_error_message();
            return std::vector<int64_t>{};
        }
        return std::vector<int64_t>(values, values + (count < 64 ? count : 64));
    };
    int major = 0, minor = 0;
    CU_ASSERT_OK(cu().DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, raw));
    CU_ASSERT_OK(cu().DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, raw));
    EXPECT_EQ(query(CUCORE_SYSTEM_QUERY_COMPUTE_CAPABILITY), (std::vector<int64_t>{major, minor}));
    if (major == 9) {
        EXPECT_EQ(query(CUCORE_SYSTEM_QUERY_ARCHITECTURE), std::vector<int64_t>{9}) << "Hopper";
    }
    if (major == 8 && minor == 0) {
        EXPECT_EQ(query(CUCORE_SYSTEM_QUERY_ARCHITECTURE), std::vector<int64_t>{7}) << "Ampere";
    }
    const std::vector<int64_t> bar1 = query(CUCORE_SYSTEM_QUERY_BAR1_MEMORY);
    ASSERT_EQ(bar1.size(), 3u);
    EXPECT_GT(bar1[0], 0) << "BAR1 total";
    EXPECT_LE(bar1[2], bar1[0]) << "BAR1 used within total";
    const std::vector<int64_t> sm = query(CUCORE_SYSTEM_QUERY_CLOCK, 1 /* SM */, 0 /* current */);
    ASSERT_EQ(sm.size(), 1u);
    EXPECT_GT(sm[0], 0);
    const std::vector<int64_t> max_sm = query(CUCORE_SYSTEM_QUERY_MAX_CLOCK, 1);
    ASSERT_EQ(max_sm.size(), 1u);
    EXPECT_GE(max_sm[0] * 11 / 10, sm[0]);
    const std::vector<int64_t> pci = query(CUCORE_SYSTEM_QUERY_PCI_INFO);
    if (!pci.empty()) {
        EXPECT_EQ(pci[3] & 0xFFFF, 0x10DE) << "NVIDIA's vendor id";
    }
    const std::vector<int64_t> pstate = query(CUCORE_SYSTEM_QUERY_PERFORMANCE_STATE);
    ASSERT_EQ(pstate.size(), 1u);
    EXPECT_TRUE((pstate[0] >= 0 && pstate[0] <= 15) || pstate[0] == 32) << pstate[0];
    int sms = 0;
    CU_ASSERT_OK(cu().DeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, raw));
    const std::vector<int64_t> mig = query(CUCORE_SYSTEM_QUERY_MIG_MODE);
    const std::vector<int64_t> attributes = query(CUCORE_SYSTEM_QUERY_ATTRIBUTES);
    if (!attributes.empty() && (mig.empty() || mig[0] == 0)) {
        EXPECT_EQ(attributes[0], sms) << "multiprocessors";
    }
    // Serial: digits on a product with an InfoROM.
    size_t length = 0;
    char serial[64] = {};
    const cucore_status_t s = cucore_system_device_text(d, CUCORE_SYSTEM_TEXT_SERIAL, 0, serial, sizeof serial, &length);
    if (s == CUCORE_SUCCESS) {
        EXPECT_GT(length, 0u);
    } else {
        EXPECT_EQ(cucore_system_last_nvml_result(), 3) << cucore_last_error_message();
    }
    // Fans: a data-center GPU has none, and each fan query is NOT_SUPPORTED (or fan 0 is out of range).
    const std::vector<int64_t> fans = query(CUCORE_SYSTEM_QUERY_FAN_COUNT);
    if (fans.empty() || fans[0] == 0) {
        size_t count = 0;
        int64_t speed = 0;
        EXPECT_NE(cucore_system_device_query(d, CUCORE_SYSTEM_QUERY_FAN_SPEED, 0, 0, &speed, 1, &count),
                  CUCORE_SUCCESS);
        const int nvml = cucore_system_last_nvml_result();
        EXPECT_TRUE(nvml == 3 || nvml == 2) << cucore_last_error_message();
    }
    // This process has a context: NVML lists it where it sees this PID namespace.
    const std::vector<int64_t> processes = query(CUCORE_SYSTEM_QUERY_PROCESSES);
    EXPECT_EQ(processes.size() % 4, 0u);
    // A virtual machine's NVML may not know the topology (NOT_SUPPORTED); where it does, a GPU is its own
    // INTERNAL ancestor.
    int level = -1;
    const cucore_status_t topology = cucore_system_device_common_ancestor(d, d, &level);
    if (topology == CUCORE_ERROR_NOT_SUPPORTED)
        EXPECT_EQ(cucore_system_last_nvml_result(), 3) << cucore_last_error_message();
    else
        EXPECT_EQ(topology == CUCORE_SUCCESS ? level : -2, 0) << "a GPU is its own INTERNAL ancestor";
    cucore_system_device_release(d);
    cucore_device_release(cuda);
}

}  // namespace
