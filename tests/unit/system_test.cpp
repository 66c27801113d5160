// System information through NVML, against the fake NVML (fake_nvml.hpp) and
// the fake driver: versions, counts, each device's readings, the CUDA device of
// an NVML device and back, NVML's failures as statuses, NVML absent, and every
// create path with each NVML call failing once.
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cucore.hpp"
#include "driver/nvml.hpp"
#include "fake_nvml.hpp"
#include "fault_injection_support.hpp"
#include "test_support.hpp"

namespace {

namespace n = cucore::driver::nvml;

class SystemTest : public FakeDriverTest {
  protected:
    void SetUp() override {
        FakeDriverTest::SetUp();
        fake::nvml::install(2);
        system_devices_before_ = live(CUCORE_OBJECT_SYSTEM_DEVICE);
    }
    void TearDown() override {
        EXPECT_EQ(live(CUCORE_OBJECT_SYSTEM_DEVICE), system_devices_before_) << "leaked system devices";
        fake::nvml::uninstall();
        FakeDriverTest::TearDown();
    }
    cucore_system_device_t *system_device(unsigned index) {
        cucore_system_device_t *d = nullptr;
        EXPECT_EQ(cucore_system_device_get(index, &d), CUCORE_SUCCESS) << message();
        return d;
    }
    static std::string text(cucore_status_t (*fn)(char *, size_t, size_t *)) {
        size_t length = 0;
        EXPECT_EQ(fn(nullptr, 0, &length), CUCORE_SUCCESS) << message();
        std::string value(length + 1, '\0');
        EXPECT_EQ(fn(&value[0], value.size(), &length), CUCORE_SUCCESS) << message();
        value.resize(length);
        return value;
    }
    size_t system_devices_before_ = 0;
};

TEST_F(SystemTest, VersionsAndCount) {
    EXPECT_EQ(text(cucore_system_driver_version), "580.65.06");
    EXPECT_EQ(text(cucore_system_nvml_version), "13.580.65.06");
    char small[4] = {'x', 'x', 'x', 'x'};
    size_t length = 0;
    ASSERT_EQ(cucore_system_driver_version(small, sizeof small, &length), CUCORE_SUCCESS);
    EXPECT_STREQ(small, "580") << "truncated and terminated";
    EXPECT_EQ(length, 9u) << "the whole length";
    int version = 0;
    ASSERT_EQ(cucore_system_cuda_driver_version(&version), CUCORE_SUCCESS);
    EXPECT_EQ(version, 13000);
    unsigned count = 0;
    ASSERT_EQ(cucore_system_device_count(&count), CUCORE_SUCCESS);
    EXPECT_EQ(count, 2u);
}

TEST_F(SystemTest, EachDeviceAnswersItsOwnReadings) {
    for (unsigned d = 0; d < 2; ++d) {
        SCOPED_TRACE("device " + std::to_string(d));
        cucore_system_device_t *device = system_device(d);
        unsigned index = 99;
        ASSERT_EQ(cucore_system_device_index(device, &index), CUCORE_SUCCESS);
        EXPECT_EQ(index, d);
        void *nvml_device = nullptr;
        ASSERT_EQ(cucore_system_device_handle(device, &nvml_device), CUCORE_SUCCESS);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(nvml_device), d + 1) << "the fake's nvmlDevice_t";
        const char *name = nullptr, *uuid = nullptr, *bus = nullptr;
        ASSERT_EQ(cucore_system_device_name(device, &name), CUCORE_SUCCESS);
        EXPECT_EQ(std::string(name), "Fake GPU " + std::to_string(d));
        ASSERT_EQ(cucore_system_device_uuid(device, &uuid), CUCORE_SUCCESS);
        EXPECT_EQ(std::string(uuid), d == 0 ? "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f"
                                            : "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f");
        ASSERT_EQ(cucore_system_device_pci_bus_id(device, &bus), CUCORE_SUCCESS);
        EXPECT_EQ(std::string(bus), d == 0 ? "00000000:01:00.0" : "00000000:02:00.0");
        cucore_system_pci_info_t pci = CUCORE_SYSTEM_PCI_INFO_INIT;
        ASSERT_EQ(cucore_system_device_pci_info(device, &pci), CUCORE_SUCCESS);
        EXPECT_EQ(pci.struct_size, sizeof pci);
        EXPECT_EQ(pci.domain, 0u);
        EXPECT_EQ(pci.bus, d + 1);
        EXPECT_EQ(pci.device, 0u);
        EXPECT_EQ(pci.pci_device_id, 0x233010deu);
        EXPECT_EQ(pci.pci_subsystem_id, 0x16c110deu);
        cucore_system_memory_info_t memory = CUCORE_SYSTEM_MEMORY_INFO_INIT;
        ASSERT_EQ(cucore_system_device_memory_info(device, &memory), CUCORE_SUCCESS);
        EXPECT_EQ(memory.total, (80ull << 30) + d);
        EXPECT_EQ(memory.used, 1ull << 30);
        EXPECT_EQ(memory.free, memory.total - memory.used);
        unsigned gpu = 0, mem = 0, value = 0;
        ASSERT_EQ(cucore_system_device_utilization(device, &gpu, &mem), CUCORE_SUCCESS);
        EXPECT_EQ(gpu, 10 + d);
        EXPECT_EQ(mem, 20 + d);
        ASSERT_EQ(cucore_system_device_temperature(device, &value), CUCORE_SUCCESS);
        EXPECT_EQ(value, 40 + d);
        ASSERT_EQ(cucore_system_device_power_usage(device, &value), CUCORE_SUCCESS);
        EXPECT_EQ(value, 100000 + d);
        ASSERT_EQ(cucore_system_device_power_limit(device, &value), CUCORE_SUCCESS);
        EXPECT_EQ(value, 700000u);
        const struct {
            cucore_system_clock_t clock;
            unsigned current, maximum;
        } clocks[] = {{CUCORE_SYSTEM_CLOCK_GRAPHICS, 1755 + d, 1980},
                      {CUCORE_SYSTEM_CLOCK_SM, 1755 + d, 1980},
                      {CUCORE_SYSTEM_CLOCK_MEMORY, 2619, 2619},
                      {CUCORE_SYSTEM_CLOCK_VIDEO, 1545, 1710}};
        for (const auto &c : clocks) {
            ASSERT_EQ(cucore_system_device_clock(device, c.clock, &value), CUCORE_SUCCESS);
            EXPECT_EQ(value, c.current) << c.clock;
            ASSERT_EQ(cucore_system_device_max_clock(device, c.clock, &value), CUCORE_SUCCESS);
            EXPECT_EQ(value, c.maximum) << c.clock;
        }
        cucore_compute_mode_t mode = CUCORE_COMPUTE_MODE_UNSET;
        ASSERT_EQ(cucore_system_device_compute_mode(device, &mode), CUCORE_SUCCESS);
        EXPECT_EQ(mode, CUCORE_COMPUTE_MODE_DEFAULT);
        EXPECT_EQ(cucore_system_device_retain(device), CUCORE_SUCCESS);
        EXPECT_EQ(cucore_system_device_release(device), CUCORE_SUCCESS);
        EXPECT_EQ(cucore_system_device_release(device), CUCORE_SUCCESS);
    }
}

TEST_F(SystemTest, ComputeModesMapToTheLibrarysValues) {
    cucore_system_device_t *device = system_device(0);
    const std::pair<int, cucore_compute_mode_t> modes[] = {{0, CUCORE_COMPUTE_MODE_DEFAULT},
                                                           {1, CUCORE_COMPUTE_MODE_EXCLUSIVE_THREAD},
                                                           {2, CUCORE_COMPUTE_MODE_PROHIBITED},
                                                           {3, CUCORE_COMPUTE_MODE_EXCLUSIVE_PROCESS}};
    for (const auto &[nvml_mode, mode] : modes) {
        fake::nvml::set_compute_mode(nvml_mode);
        cucore_compute_mode_t got = CUCORE_COMPUTE_MODE_UNSET;
        ASSERT_EQ(cucore_system_device_compute_mode(device, &got), CUCORE_SUCCESS);
        EXPECT_EQ(got, mode);
    }
    fake::nvml::set_compute_mode(7);
    cucore_compute_mode_t got = CUCORE_COMPUTE_MODE_DEFAULT;
    EXPECT_EQ(cucore_system_device_compute_mode(device, &got), CUCORE_ERROR_CUDA);
    EXPECT_EQ(got, CUCORE_COMPUTE_MODE_UNSET);
    EXPECT_NE(message().find("(7)"), std::string::npos) << message();
    cucore_system_device_release(device);
}

TEST_F(SystemTest, ProcessesAreCountedThenRead) {
    cucore_system_device_t *device = system_device(1);
    size_t count = 99;
    ASSERT_EQ(cucore_system_device_processes(device, nullptr, nullptr, 0, &count), CUCORE_SUCCESS);
    EXPECT_EQ(count, 0u);
    fake::nvml::set_processes({{4242, 1ull << 20}, {4343, n::kNotAvailable}, {4444, 5}});
    ASSERT_EQ(cucore_system_device_processes(device, nullptr, nullptr, 0, &count), CUCORE_SUCCESS);
    EXPECT_EQ(count, 3u);
    uint32_t pids[2] = {0, 0};
    uint64_t used[2] = {0, 0};
    ASSERT_EQ(cucore_system_device_processes(device, pids, used, 2, &count), CUCORE_SUCCESS);
    EXPECT_EQ(count, 3u) << "the whole count, with a capacity of 2";
    EXPECT_EQ(pids[0], 4242u);
    EXPECT_EQ(used[0], 1ull << 20);
    EXPECT_EQ(pids[1], 4343u);
    EXPECT_EQ(used[1], CUCORE_SYSTEM_MEMORY_NOT_AVAILABLE);
    EXPECT_EQ(cucore_system_device_processes(device, nullptr, used, 2, &count), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("'pids'"), std::string::npos) << message();
    EXPECT_EQ(cucore_system_device_processes(device, pids, nullptr, 2, &count), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("'used_memory'"), std::string::npos) << message();
    cucore_system_device_release(device);
}

TEST_F(SystemTest, DevicesAreFoundByUuidAndPciBusId) {
    cucore_system_device_t *device = nullptr;
    ASSERT_EQ(cucore_system_device_get_by_uuid("GPU-10111213-1415-1617-1819-1a1b1c1d1e1f", &device), CUCORE_SUCCESS)
        << message();
    unsigned index = 9;
    cucore_system_device_index(device, &index);
    EXPECT_EQ(index, 1u);
    cucore_system_device_release(device);
    for (const char *bus : {"00000000:02:00.0", "0000:02:00.0", "02:00.0"}) {
        ASSERT_EQ(cucore_system_device_get_by_pci_bus_id(bus, &device), CUCORE_SUCCESS) << bus << message();
        index = 9;
        cucore_system_device_index(device, &index);
        EXPECT_EQ(index, 1u) << bus;
        cucore_system_device_release(device);
    }
    device = reinterpret_cast<cucore_system_device_t *>(0x1);
    EXPECT_EQ(cucore_system_device_get_by_uuid("GPU-ffffffff-1415-1617-1819-1a1b1c1d1e1f", &device),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(device, nullptr);
    EXPECT_NE(message().find("nvmlDeviceGetHandleByUUID failed: NVML_ERROR_NOT_FOUND (Not Found)"),
              std::string::npos)
        << message();
    EXPECT_EQ(cucore_system_device_get_by_pci_bus_id("0000:07:00.0", &device), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_device_get(2, &device), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("argument 'index' (2) is not below the number of GPUs NVML sees (2)"), std::string::npos)
        << message();
}

TEST_F(SystemTest, CudaDevicesAndSystemDevicesFindEachOther) {
    for (int ordinal = 0; ordinal < 2; ++ordinal) {
        cucore_device_t *cuda = device(ordinal);
        cucore_system_device_t *system = nullptr;
        ASSERT_EQ(cucore_system_device_get_for_device(cuda, &system), CUCORE_SUCCESS) << message();
        unsigned index = 9;
        cucore_system_device_index(system, &index);
        EXPECT_EQ(index, static_cast<unsigned>(ordinal));
        cucore_device_t *back = nullptr;
        ASSERT_EQ(cucore_system_device_to_device(system, &back), CUCORE_SUCCESS) << message();
        int back_ordinal = -1;
        cucore_device_ordinal(back, &back_ordinal);
        EXPECT_EQ(back_ordinal, ordinal);
        cucore_device_release(back);
        cucore_system_device_release(system);
        cucore_device_release(cuda);
    }
}

TEST_F(SystemTest, AGpuCudaDoesNotSeeIsAClearError) {
    fake::install(1);  // CUDA sees one device, NVML two
    fake::nvml::install(2);
    cucore_system_device_t *system = system_device(1);
    cucore_device_t *cuda = reinterpret_cast<cucore_device_t *>(0x1);
    EXPECT_EQ(cucore_system_device_to_device(system, &cuda), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cuda, nullptr);
    EXPECT_NE(message().find("is not among the 1 CUDA devices visible"), std::string::npos) << message();
    cucore_system_device_release(system);
}

TEST_F(SystemTest, NvmlFailuresMapToStatusesWithNvmlsText) {
    cucore_system_device_t *device = system_device(0);
    const struct {
        int result;
        cucore_status_t status;
        const char *name;
    } rows[] = {{n::kErrorNotSupported, CUCORE_ERROR_NOT_SUPPORTED, "NVML_ERROR_NOT_SUPPORTED (Not Supported)"},
                {n::kErrorNoPermission, CUCORE_ERROR_NOT_SUPPORTED,
                 "NVML_ERROR_NO_PERMISSION (Insufficient Permissions)"},
                {n::kErrorInvalidArgument, CUCORE_ERROR_INVALID_ARGUMENT, "NVML_ERROR_INVALID_ARGUMENT"},
                {n::kErrorDriverNotLoaded, CUCORE_ERROR_NO_DRIVER, "NVML_ERROR_DRIVER_NOT_LOADED"},
                {n::kErrorMemory, CUCORE_ERROR_OUT_OF_MEMORY, "NVML_ERROR_MEMORY (Insufficient Memory)"},
                {n::kErrorNotReady, CUCORE_ERROR_NOT_READY, "NVML_ERROR_NOT_READY"},
                {n::kErrorUnknown, CUCORE_ERROR_CUDA, "NVML_ERROR_UNKNOWN (Unknown Error)"},
                {12345, CUCORE_ERROR_CUDA, "NVML error 12345"}};
    for (const auto &row : rows) {
        SCOPED_TRACE(row.name);
        fake::nvml::fail_entry("nvmlDeviceGetPowerUsage", row.result);
        unsigned milliwatts = 7;
        EXPECT_EQ(cucore_system_device_power_usage(device, &milliwatts), row.status);
        EXPECT_EQ(milliwatts, 0u);
        EXPECT_EQ(message().rfind(std::string("cucore_system_device_power_usage: nvmlDeviceGetPowerUsage failed: ") +
                                      row.name,
                                  0),
                  0u)
            << message();
    }
    fake::nvml::fail_entry("");
    cucore_system_device_release(device);
}

TEST_F(SystemTest, WithoutNvmlEveryCallSaysSoAndTheRestWorks) {
    cucore::driver::mark_nvml_absent("libnvidia-ml.so.1 could not be loaded: libnvidia-ml.so.1: cannot open "
                                     "shared object file");
    unsigned count = 5;
    EXPECT_EQ(cucore_system_device_count(&count), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(count, 0u);
    EXPECT_NE(message().find("libnvidia-ml.so.1 could not be loaded"), std::string::npos) << message();
    cucore_system_device_t *system = nullptr;
    EXPECT_EQ(cucore_system_device_get(0, &system), CUCORE_ERROR_NOT_SUPPORTED);
    cucore_device_t *cuda = device(0);
    EXPECT_EQ(cucore_system_device_get_for_device(cuda, &system), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(system, nullptr);
    int ordinal = -1;
    EXPECT_EQ(cucore_device_ordinal(cuda, &ordinal), CUCORE_SUCCESS) << "the rest works";
    cucore_device_release(cuda);
    fake::nvml::install(2);
}

TEST_F(SystemTest, AnNvmlWithoutAnEntryPointSaysWhichIsMissing) {
    cucore::driver::NvmlTable old = fake::nvml::table(2);
    old.nvmlDeviceGetComputeRunningProcesses_v3 = nullptr;
    cucore::driver::install_nvml_substitute(&old);
    cucore_system_device_t *device = system_device(0);
    size_t count = 3;
    EXPECT_EQ(cucore_system_device_processes(device, nullptr, nullptr, 0, &count), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_NE(message().find("lacks nvmlDeviceGetComputeRunningProcesses_v3"), std::string::npos) << message();
    cucore_system_device_release(device);
    fake::nvml::install(2);
}

TEST_F(SystemTest, ArgumentsAreCheckedBeforeNvml) {
    cucore_system_device_t *device = system_device(0);
    fake::nvml::reset_calls();
    unsigned value = 0;
    EXPECT_EQ(cucore_system_device_clock(device, static_cast<cucore_system_clock_t>(9), &value),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("argument 'clock' (9)"), std::string::npos) << message();
    EXPECT_EQ(cucore_system_device_max_clock(device, CUCORE_SYSTEM_CLOCK_UNSET, &value),
              CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_system_device_t *out = nullptr;
    EXPECT_EQ(cucore_system_device_get_by_uuid(nullptr, &out), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_device_get_by_uuid("", &out), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("argument 'uuid' is empty"), std::string::npos) << message();
    EXPECT_EQ(cucore_system_device_get_by_pci_bus_id(nullptr, &out), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_device_get_by_pci_bus_id("", &out), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_system_pci_info_t pci = CUCORE_SYSTEM_PCI_INFO_INIT;
    pci.struct_size = 0;
    EXPECT_EQ(cucore_system_device_pci_info(device, &pci), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("CUCORE_SYSTEM_PCI_INFO_INIT"), std::string::npos) << message();
    cucore_system_memory_info_t memory = CUCORE_SYSTEM_MEMORY_INFO_INIT;
    memory.struct_size = 0;
    EXPECT_EQ(cucore_system_device_memory_info(device, &memory), CUCORE_ERROR_INVALID_ARGUMENT);
    char buffer[4];
    EXPECT_EQ(cucore_system_driver_version(nullptr, 4, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_nvml_version(nullptr, 4, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    (void)buffer;
    EXPECT_EQ(fake::nvml::calls(), 0) << "arguments are checked before any NVML call";
    cucore_system_device_release(device);
}

TEST_F(SystemTest, AnOlderPciInfoStructGetsTheFieldsItHas) {
    cucore_system_device_t *device = system_device(1);
    cucore_system_pci_info_t pci = CUCORE_SYSTEM_PCI_INFO_INIT;
    pci.struct_size = offsetof(cucore_system_pci_info_t, device);  // an older caller: domain and bus only
    pci.device = 77;
    ASSERT_EQ(cucore_system_device_pci_info(device, &pci), CUCORE_SUCCESS) << message();
    EXPECT_EQ(pci.bus, 2u);
    EXPECT_EQ(pci.device, 77u) << "beyond its struct_size: untouched";
    EXPECT_EQ(pci.struct_size, offsetof(cucore_system_pci_info_t, device));
    cucore_system_device_release(device);
}

// Each NVML call of a path failing once (fault injection): the path fails with
// the status of the failure and a message naming it, its out-pointer cleared,
// and no system device is left behind.
struct NvmlScenario {
    const char *function;
    std::function<cucore_status_t(void **handle)> run;
    std::function<void(void *handle)> release;
    long minimum_calls;
};

TEST_F(SystemTest, EveryCreatePathUnderFaultInjection) {
    cucore_device_t *cuda = device(1);
    std::vector<NvmlScenario> scenarios = {
        {"cucore_system_device_get",
         [](void **h) { return cucore_system_device_get(1, reinterpret_cast<cucore_system_device_t **>(h)); },
         [](void *h) { cucore_system_device_release(static_cast<cucore_system_device_t *>(h)); }, 6},
        {"cucore_system_device_get_by_uuid",
         [](void **h) {
             return cucore_system_device_get_by_uuid("GPU-10111213-1415-1617-1819-1a1b1c1d1e1f",
                                                     reinterpret_cast<cucore_system_device_t **>(h));
         },
         [](void *h) { cucore_system_device_release(static_cast<cucore_system_device_t *>(h)); }, 5},
        {"cucore_system_device_get_by_pci_bus_id",
         [](void **h) {
             return cucore_system_device_get_by_pci_bus_id("0000:02:00.0",
                                                           reinterpret_cast<cucore_system_device_t **>(h));
         },
         [](void *h) { cucore_system_device_release(static_cast<cucore_system_device_t *>(h)); }, 5},
        {"cucore_system_device_get_for_device",
         [cuda](void **h) {
             return cucore_system_device_get_for_device(cuda, reinterpret_cast<cucore_system_device_t **>(h));
         },
         [](void *h) { cucore_system_device_release(static_cast<cucore_system_device_t *>(h)); }, 5},
    };
    for (const NvmlScenario &scenario : scenarios) {
        SCOPED_TRACE(scenario.function);
        long failures = 0;
        for (long i = 1; i < 50; ++i) {
            const size_t live_before = live(CUCORE_OBJECT_SYSTEM_DEVICE);
            fake::nvml::reset_calls();
            fake::nvml::fail_call(i, n::kErrorMemory);
            void *handle = reinterpret_cast<void *>(0x1);
            const cucore_status_t status = scenario.run(&handle);
            const long made = fake::nvml::calls();
            fake::nvml::fail_call(0);
            const std::vector<std::string> log = fake::nvml::call_log();
            if (made < i) {  // every call of the path has failed once
                ASSERT_EQ(status, CUCORE_SUCCESS) << message();
                scenario.release(handle);
                EXPECT_GE(failures, scenario.minimum_calls);
                break;
            }
            ++failures;
            const std::string failed = log[static_cast<size_t>(i - 1)];
            SCOPED_TRACE("failing call " + std::to_string(i) + ": " + failed);
            EXPECT_EQ(status, CUCORE_ERROR_OUT_OF_MEMORY) << message();
            EXPECT_EQ(handle, nullptr) << "out-pointer cleared";
            EXPECT_EQ(message().rfind(std::string(scenario.function) + ": " + failed + " failed: NVML_ERROR_MEMORY", 0),
                      0u)
                << message();
            EXPECT_EQ(live(CUCORE_OBJECT_SYSTEM_DEVICE), live_before) << "no half-made object";
        }
    }
    cucore_device_release(cuda);
}

// The CUDA side of to_device (the driver's calls failing in turn, FaultInjection):
// a clear error, nothing left behind.
class SystemDriverFaults : public FaultInjection<SystemTest> {};

TEST_F(SystemDriverFaults, ToDeviceUnderDriverFaultInjection) {
    cucore_system_device_t *system = system_device(1);
    run({"cucore_system_device_to_device",
         [system](void **h) {
             return cucore_system_device_to_device(system, reinterpret_cast<cucore_device_t **>(h));
         },
         [](void *h) { cucore_device_release(static_cast<cucore_device_t *>(h)); }, 1});
    cucore_system_device_release(system);
}

// The readings under fault injection: each fails with the failure's status and
// clears its outs.
TEST_F(SystemTest, EveryReadingUnderFaultInjection) {
    cucore_system_device_t *device = system_device(0);
    unsigned a = 0, b = 0;
    cucore_compute_mode_t mode;
    size_t count = 0;
    cucore_system_pci_info_t pci = CUCORE_SYSTEM_PCI_INFO_INIT;
    cucore_system_memory_info_t memory = CUCORE_SYSTEM_MEMORY_INFO_INIT;
    int version = 0;
    char text[80];
    const std::vector<std::pair<const char *, std::function<cucore_status_t()>>> readings = {
        {"cucore_system_driver_version", [&] { return cucore_system_driver_version(text, sizeof text, nullptr); }},
        {"cucore_system_nvml_version", [&] { return cucore_system_nvml_version(text, sizeof text, nullptr); }},
        {"cucore_system_cuda_driver_version", [&] { return cucore_system_cuda_driver_version(&version); }},
        {"cucore_system_device_count", [&] { return cucore_system_device_count(&a); }},
        {"cucore_system_device_pci_info", [&] { return cucore_system_device_pci_info(device, &pci); }},
        {"cucore_system_device_memory_info", [&] { return cucore_system_device_memory_info(device, &memory); }},
        {"cucore_system_device_utilization", [&] { return cucore_system_device_utilization(device, &a, &b); }},
        {"cucore_system_device_temperature", [&] { return cucore_system_device_temperature(device, &a); }},
        {"cucore_system_device_power_usage", [&] { return cucore_system_device_power_usage(device, &a); }},
        {"cucore_system_device_power_limit", [&] { return cucore_system_device_power_limit(device, &a); }},
        {"cucore_system_device_clock",
         [&] { return cucore_system_device_clock(device, CUCORE_SYSTEM_CLOCK_SM, &a); }},
        {"cucore_system_device_max_clock",
         [&] { return cucore_system_device_max_clock(device, CUCORE_SYSTEM_CLOCK_SM, &a); }},
        {"cucore_system_device_compute_mode", [&] { return cucore_system_device_compute_mode(device, &mode); }},
        {"cucore_system_device_processes",
         [&] { return cucore_system_device_processes(device, nullptr, nullptr, 0, &count); }},
    };
    for (const auto &[function, run] : readings) {
        SCOPED_TRACE(function);
        fake::nvml::reset_calls();
        fake::nvml::fail_call(1, n::kErrorNotSupported);
        a = b = 5;
        memory.total = 5;
        pci.bus = 5;
        EXPECT_EQ(run(), CUCORE_ERROR_NOT_SUPPORTED);
        fake::nvml::fail_call(0);
        EXPECT_EQ(message().rfind(std::string(function) + ":", 0), 0u) << message();
        EXPECT_NE(message().find("NVML_ERROR_NOT_SUPPORTED (Not Supported)"), std::string::npos) << message();
        EXPECT_EQ(fake::nvml::calls(), 1);
        EXPECT_EQ(run(), CUCORE_SUCCESS) << message();
    }
    memory.total = 5;
    fake::nvml::fail_entry("nvmlDeviceGetMemoryInfo");
    EXPECT_NE(cucore_system_device_memory_info(device, &memory), CUCORE_SUCCESS);
    EXPECT_EQ(memory.total, 0u) << "a failed call leaves zeros";
    fake::nvml::fail_entry("");
    cucore_system_device_release(device);
}

// The façade: the same through cucore::SystemDevice and cucore::system.
TEST_F(SystemTest, Facade) {
    EXPECT_EQ(cucore::system::driver_version(), "580.65.06");
    EXPECT_EQ(cucore::system::nvml_version(), "13.580.65.06");
    EXPECT_EQ(cucore::system::cuda_driver_version(), 13000);
    EXPECT_EQ(cucore::system::device_count(), 2u);
    cucore::SystemDevice device(1);
    EXPECT_EQ(device.index(), 1u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(device.handle()), 2u);
    EXPECT_EQ(device.name(), "Fake GPU 1");
    EXPECT_EQ(device.uuid(), "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f");
    EXPECT_EQ(device.pci_bus_id(), "00000000:02:00.0");
    EXPECT_EQ(device.pci_info().bus, 2u);
    EXPECT_EQ(device.memory_info().total, (80ull << 30) + 1);
    EXPECT_EQ(device.utilization().gpu_percent, 11u);
    EXPECT_EQ(device.temperature(), 41u);
    EXPECT_EQ(device.power_usage(), 100001u);
    EXPECT_EQ(device.power_limit(), 700000u);
    EXPECT_EQ(device.clock(CUCORE_SYSTEM_CLOCK_SM), 1756u);
    EXPECT_EQ(device.max_clock(CUCORE_SYSTEM_CLOCK_MEMORY), 2619u);
    EXPECT_EQ(device.compute_mode(), CUCORE_COMPUTE_MODE_DEFAULT);
    fake::nvml::set_processes({{1, 2}, {3, 4}});
    const std::vector<cucore::SystemProcess> processes = device.processes();
    ASSERT_EQ(processes.size(), 2u);
    EXPECT_EQ(processes[1].pid, 3u);
    EXPECT_EQ(processes[1].used_memory, 4u);
    cucore::Device cuda = device.to_device();
    EXPECT_EQ(cuda.ordinal(), 1);
    EXPECT_EQ(cucore::SystemDevice::of(cuda).index(), 1u);
    EXPECT_EQ(cucore::SystemDevice::by_uuid(device.uuid()).index(), 1u);
    EXPECT_EQ(cucore::SystemDevice::by_pci_bus_id("02:00.0").index(), 1u);
    try {
        cucore::SystemDevice missing(7);
        FAIL() << "no GPU 7";
    } catch (const cucore::Error &error) {
        EXPECT_EQ(error.status(), CUCORE_ERROR_INVALID_ARGUMENT);
    }
}

}  // namespace
