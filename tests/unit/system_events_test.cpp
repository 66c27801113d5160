// System event sets (cucore_system_register_events, cucore_system_event_set_wait)
// against the fake NVML: events posted come back with their type and GPU id, in
// order and split by the capacity; each set records only its types; NVML's
// TIMEOUT, NOT_SUPPORTED and a missing entry point with their nvmlReturn_t; the
// set freed with its last reference and on a failed registration; the façade.
#include <string>
#include <vector>

#include "cucore.hpp"
#include "driver/nvml.hpp"
#include "fake_nvml.hpp"
#include "test_support.hpp"

namespace {

namespace n = cucore::driver::nvml;

constexpr uint64_t kUnbind = CUCORE_SYSTEM_EVENT_GPU_DRIVER_UNBIND;
constexpr uint64_t kBind = CUCORE_SYSTEM_EVENT_GPU_DRIVER_BIND;
// The packed PCI location of fake GPU d ("00000000:<d + 1>:00.0").
constexpr uint32_t gpu_id(unsigned d) { return (d + 1) << 8; }

class SystemEventsTest : public FakeDriverTest {
  protected:
    void SetUp() override {
        FakeDriverTest::SetUp();
        fake::nvml::install(2);
        before_ = live(CUCORE_OBJECT_SYSTEM_EVENT_SET);
    }
    void TearDown() override {
        EXPECT_EQ(live(CUCORE_OBJECT_SYSTEM_EVENT_SET), before_) << "leaked system event sets";
        EXPECT_EQ(fake::nvml::live_system_event_sets(), 0u) << "NVML sets not freed";
        fake::nvml::uninstall();
        FakeDriverTest::TearDown();
    }
    size_t before_ = 0;
};

TEST_F(SystemEventsTest, PostedEventsComeBackWithTheirTypeAndGpu) {
    cucore_system_event_set_t *set = nullptr;
    ASSERT_EQ(cucore_system_register_events(kUnbind | kBind, &set), CUCORE_SUCCESS) << message();
    ASSERT_NE(set, nullptr);
    EXPECT_EQ(live(CUCORE_OBJECT_SYSTEM_EVENT_SET), before_ + 1);
    EXPECT_EQ(fake::nvml::live_system_event_sets(), 1u);
    fake::nvml::post_system_event(kUnbind, gpu_id(1));
    fake::nvml::post_system_event(kBind, gpu_id(1));
    fake::nvml::post_system_event(kUnbind, gpu_id(0));

    uint64_t types[4] = {7, 7, 7, 7};
    uint32_t gpus[4] = {7, 7, 7, 7};
    size_t count = 99;
    ASSERT_EQ(cucore_system_event_set_wait(set, 0, types, gpus, 2, &count), CUCORE_SUCCESS) << message();
    ASSERT_EQ(count, 2u) << "no more than the capacity";
    EXPECT_EQ(types[0], kUnbind);
    EXPECT_EQ(gpus[0], gpu_id(1));
    EXPECT_EQ(types[1], kBind);
    EXPECT_EQ(gpus[1], gpu_id(1));
    EXPECT_EQ(types[2], 7u) << "nothing written past the capacity";
    ASSERT_EQ(cucore_system_event_set_wait(set, 100, types, gpus, 4, &count), CUCORE_SUCCESS) << message();
    ASSERT_EQ(count, 1u) << "the rest";
    EXPECT_EQ(types[0], kUnbind);
    EXPECT_EQ(gpus[0], gpu_id(0));

    // None left: NVML's TIMEOUT, as NOT_READY.
    EXPECT_EQ(cucore_system_event_set_wait(set, 10, types, gpus, 4, &count), CUCORE_ERROR_NOT_READY);
    EXPECT_EQ(count, 0u) << "cleared";
    EXPECT_EQ(cucore_system_last_nvml_result(), n::kErrorTimeout);
    EXPECT_NE(message().find("nvmlSystemEventSetWait"), std::string::npos) << message();

    // A reference more keeps the set; the last one frees it in NVML.
    ASSERT_EQ(cucore_system_event_set_retain(set), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_system_event_set_release(set), CUCORE_SUCCESS);
    EXPECT_EQ(fake::nvml::live_system_event_sets(), 1u);
    ASSERT_EQ(cucore_system_event_set_release(set), CUCORE_SUCCESS);
    EXPECT_EQ(fake::nvml::live_system_event_sets(), 0u);
    EXPECT_EQ(cucore_system_event_set_release(nullptr), CUCORE_SUCCESS) << "NULL is a no-op";
}

TEST_F(SystemEventsTest, EachSetRecordsItsOwnTypesFromItsRegistrationOn) {
    fake::nvml::post_system_event(kBind, gpu_id(0));  // before any set: recorded nowhere
    cucore_system_event_set_t *binds = nullptr, *unbinds = nullptr;
    ASSERT_EQ(cucore_system_register_events(kBind, &binds), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_system_register_events(kUnbind, &unbinds), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::nvml::live_system_event_sets(), 2u);
    fake::nvml::post_system_event(kUnbind, gpu_id(1));
    uint64_t type = 0;
    uint32_t gpu = 0;
    size_t count = 0;
    EXPECT_EQ(cucore_system_event_set_wait(binds, 0, &type, &gpu, 1, &count), CUCORE_ERROR_NOT_READY)
        << "neither the event before it nor an unbind";
    ASSERT_EQ(cucore_system_event_set_wait(unbinds, 0, &type, &gpu, 1, &count), CUCORE_SUCCESS) << message();
    EXPECT_EQ(count, 1u);
    EXPECT_EQ(type, kUnbind);
    EXPECT_EQ(gpu, gpu_id(1));
    cucore_system_event_set_release(binds);
    cucore_system_event_set_release(unbinds);
}

TEST_F(SystemEventsTest, RequestsCarryVersionOneOfNvmlsStructs) {
    // The fake answers ARGUMENT_VERSION_MISMATCH to any other version; these are NVML's values.
    EXPECT_EQ(n::struct_version<n::SystemEventSetCreateRequest>(1), 0x1000010u);
    EXPECT_EQ(n::struct_version<n::SystemEventSetFreeRequest>(1), 0x1000010u);
    EXPECT_EQ(n::struct_version<n::SystemRegisterEventRequest>(1), 0x1000018u);
    EXPECT_EQ(n::struct_version<n::SystemEventSetWaitRequest>(1), 0x1000020u);
    EXPECT_EQ(sizeof(n::SystemEventData), 16u);
    fake::nvml::reset_calls();
    cucore_system_event_set_t *set = nullptr;
    ASSERT_EQ(cucore_system_register_events(kBind, &set), CUCORE_SUCCESS) << message();
    cucore_system_event_set_release(set);
    const std::vector<std::string> log = fake::nvml::call_log();
    EXPECT_EQ(log, (std::vector<std::string>{"nvmlSystemEventSetCreate", "nvmlSystemRegisterEvents",
                                             "nvmlSystemEventSetFree"}));
}

TEST_F(SystemEventsTest, ArgumentsAreCheckedBeforeNvml) {
    cucore_system_event_set_t *set = reinterpret_cast<cucore_system_event_set_t *>(1);
    fake::nvml::reset_calls();
    EXPECT_EQ(cucore_system_register_events(0, &set), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(set, nullptr) << "cleared";
    EXPECT_NE(message().find("event_types"), std::string::npos) << message();
    EXPECT_EQ(cucore_system_register_events(kBind, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(fake::nvml::calls(), 0);
    EXPECT_EQ(cucore_system_last_nvml_result(), 0) << "failed before NVML";

    ASSERT_EQ(cucore_system_register_events(kBind, &set), CUCORE_SUCCESS) << message();
    uint64_t types[2];
    uint32_t gpus[2];
    size_t count = 5;
    fake::nvml::reset_calls();
    EXPECT_EQ(cucore_system_event_set_wait(set, 0, types, gpus, 0, &count), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("capacity"), std::string::npos) << message();
    EXPECT_EQ(count, 0u);
    EXPECT_EQ(cucore_system_event_set_wait(set, 0, types, gpus, size_t(UINT32_MAX) + 1, &count),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_event_set_wait(set, 0, nullptr, gpus, 2, &count), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_event_set_wait(set, 0, types, nullptr, 2, &count), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_event_set_wait(set, 0, types, gpus, 2, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_system_event_set_wait(nullptr, 0, types, gpus, 2, &count), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(fake::nvml::calls(), 0);
    cucore_system_event_set_release(set);
}

TEST_F(SystemEventsTest, UnsupportedTypesAreNvmlsNotSupported) {
    cucore_system_event_set_t *set = reinterpret_cast<cucore_system_event_set_t *>(1);
    EXPECT_EQ(cucore_system_register_events(0x4, &set), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(set, nullptr);
    EXPECT_EQ(cucore_system_last_nvml_result(), n::kErrorNotSupported);
    EXPECT_NE(message().find("nvmlSystemRegisterEvents"), std::string::npos) << message();
    EXPECT_EQ(fake::nvml::live_system_event_sets(), 0u) << "the set made before the refusal is freed";
    // As on a virtual machine, where NVML records no system event.
    fake::nvml::fail_entry("nvmlSystemRegisterEvents", n::kErrorNotSupported);
    EXPECT_EQ(cucore_system_register_events(kBind, &set), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(cucore_system_last_nvml_result(), n::kErrorNotSupported);
    EXPECT_EQ(fake::nvml::live_system_event_sets(), 0u);
    fake::nvml::fail_entry("");
}

TEST_F(SystemEventsTest, EachNvmlCallFailingInTurnLeaksNothing) {
    // Create, register: each failure gives NVML's result and leaves no set (fault injection).
    for (long k = 1; k <= 2; ++k) {
        fake::nvml::fail_call(k, n::kErrorUnknown);
        cucore_system_event_set_t *set = nullptr;
        EXPECT_EQ(cucore_system_register_events(kBind, &set), CUCORE_ERROR_CUDA) << k;
        EXPECT_EQ(set, nullptr);
        EXPECT_EQ(cucore_system_last_nvml_result(), n::kErrorUnknown);
        EXPECT_EQ(fake::nvml::live_system_event_sets(), 0u) << k;
        fake::nvml::fail_call(0);
    }
    cucore_system_event_set_t *set = nullptr;
    ASSERT_EQ(cucore_system_register_events(kBind, &set), CUCORE_SUCCESS) << message();
    fake::nvml::fail_entry("nvmlSystemEventSetWait", 15);  // NVML_ERROR_GPU_IS_LOST
    uint64_t type = 0;
    uint32_t gpu = 0;
    size_t count = 0;
    EXPECT_EQ(cucore_system_event_set_wait(set, 0, &type, &gpu, 1, &count), CUCORE_ERROR_CUDA);
    EXPECT_EQ(cucore_system_last_nvml_result(), 15);
    fake::nvml::fail_entry("nvmlSystemEventSetFree", n::kErrorUnknown);
    expects_release_errors_ = true;
    const uint64_t errors = release_errors();
    EXPECT_EQ(cucore_system_event_set_release(set), CUCORE_SUCCESS) << "reported, never returned";
    EXPECT_EQ(release_errors(), errors + 1);
    fake::nvml::fail_entry("");
    fake::nvml::install(2);  // forget the set whose free failed
}

TEST_F(SystemEventsTest, AnNvmlWithoutSystemEventsIsFunctionNotFound) {
    cucore::driver::NvmlTable table = fake::nvml::current_table();
    table.nvmlSystemEventSetCreate = nullptr;
    cucore::driver::install_nvml_substitute(&table);
    cucore_system_event_set_t *set = nullptr;
    EXPECT_EQ(cucore_system_register_events(kBind, &set), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(cucore_system_last_nvml_result(), 13) << "NVML_ERROR_FUNCTION_NOT_FOUND";
    EXPECT_NE(message().find("nvmlSystemEventSetCreate"), std::string::npos) << message();
    cucore::driver::mark_nvml_absent("");
    EXPECT_EQ(cucore_system_register_events(kBind, &set), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(cucore_system_last_nvml_result(), n::kErrorLibraryNotFound);
    fake::nvml::install(2);
}

TEST_F(SystemEventsTest, Facade) {
    {
        const cucore::SystemEventSet set = cucore::SystemEventSet::register_events(kUnbind | kBind);
        fake::nvml::post_system_event(kBind, gpu_id(0));
        fake::nvml::post_system_event(kUnbind, gpu_id(1));
        const std::vector<cucore::SystemEvent> events = set.wait(0, 8);
        ASSERT_EQ(events.size(), 2u);
        EXPECT_EQ(events[0].event_type, kBind);
        EXPECT_EQ(events[0].gpu_id, gpu_id(0));
        EXPECT_EQ(events[1].event_type, kUnbind);
        EXPECT_EQ(events[1].gpu_id, gpu_id(1));
        try {
            set.wait(5);
            FAIL() << "timeout";
        } catch (const cucore::Error &error) {
            EXPECT_EQ(error.status(), CUCORE_ERROR_NOT_READY);
            EXPECT_EQ(cucore::system::last_nvml_result(), n::kErrorTimeout);
        }
        // The event's GPU, found by the bus id its id packs.
        const cucore::SystemDevice device = cucore::SystemDevice::by_pci_bus_id("00000000:02:00.0");
        EXPECT_EQ(device.index(), 1u);
    }
    try {
        cucore::SystemEventSet::register_events(kBind).wait(0, 0);
        FAIL() << "capacity 0";
    } catch (const cucore::Error &error) {
        EXPECT_EQ(error.status(), CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_NE(std::string(error.what()).find("capacity"), std::string::npos) << error.what();
    }
    try {
        cucore::SystemEventSet::register_events(0);
        FAIL() << "no type";
    } catch (const cucore::Error &error) {
        EXPECT_EQ(error.status(), CUCORE_ERROR_INVALID_ARGUMENT);
    }
}

}  // namespace
