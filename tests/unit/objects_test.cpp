// Behaviour of devices, contexts, streams and events against the fake driver:
// answers are the driver's, contexts are bound and restored, foreign objects
// are never destroyed, owners are told once, release order never matters.
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "test_support.hpp"

namespace {

using ObjectsTest = FakeDriverTest;

TEST_F(ObjectsTest, DeviceAnswersAreTheDrivers) {
    int count = 0;
    ASSERT_EQ(cucore_device_count(&count), CUCORE_SUCCESS);
    EXPECT_EQ(count, 2);
    int version = 0;
    ASSERT_EQ(cucore_driver_version(&version), CUCORE_SUCCESS);
    EXPECT_EQ(version, 13000);
    cucore_device_t *d = device(1);
    const char *name = nullptr;
    ASSERT_EQ(cucore_device_name(d, &name), CUCORE_SUCCESS);
    EXPECT_STREQ(name, "Fake GPU 1");
    const char *bus = nullptr;
    ASSERT_EQ(cucore_device_pci_bus_id(d, &bus), CUCORE_SUCCESS);
    EXPECT_STREQ(bus, "0000:02:00.0");
    cucore_uuid_t uuid;
    ASSERT_EQ(cucore_device_uuid(d, &uuid), CUCORE_SUCCESS);
    EXPECT_EQ(uuid.bytes[0], 16);
    EXPECT_EQ(uuid.bytes[15], 31);
    int ordinal = -1, raw = -1;
    ASSERT_EQ(cucore_device_ordinal(d, &ordinal), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_device_handle(d, &raw), CUCORE_SUCCESS);
    EXPECT_EQ(ordinal, 1);
    EXPECT_EQ(raw, 1);
    int value = 0;
    ASSERT_EQ(cucore_device_attribute(d, CUCORE_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &value), CUCORE_SUCCESS);
    EXPECT_EQ(value, CUCORE_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT * 10 + 1);
    int major = 0, minor = 0;
    ASSERT_EQ(cucore_device_compute_capability(d, &major, &minor), CUCORE_SUCCESS);
    EXPECT_EQ(major, CUCORE_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR * 10 + 1);
    EXPECT_EQ(minor, CUCORE_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR * 10 + 1);
    uint64_t memory = 0;
    ASSERT_EQ(cucore_device_total_memory(d, &memory), CUCORE_SUCCESS);
    EXPECT_EQ(memory, (uint64_t{80} << 30) + 1);
    cucore_device_properties_t props = CUCORE_DEVICE_PROPERTIES_INIT;
    ASSERT_EQ(cucore_device_properties(d, &props), CUCORE_SUCCESS);
    EXPECT_EQ(props.struct_size, sizeof props);
    EXPECT_EQ(props.ordinal, 1);
    EXPECT_EQ(props.warp_size, CUCORE_DEVICE_ATTRIBUTE_WARP_SIZE * 10 + 1);
    EXPECT_EQ(props.total_memory, memory);
    // An older caller's shorter struct: nothing written past its struct_size.
    unsigned char buffer[sizeof(cucore_device_properties_t)];
    std::memset(buffer, 0xAB, sizeof buffer);
    auto *old_props = reinterpret_cast<cucore_device_properties_t *>(buffer);
    old_props->struct_size = offsetof(cucore_device_properties_t, multiprocessor_count);
    ASSERT_EQ(cucore_device_properties(d, old_props), CUCORE_SUCCESS);
    EXPECT_EQ(old_props->ordinal, 1);
    EXPECT_EQ(buffer[offsetof(cucore_device_properties_t, multiprocessor_count)], 0xAB);

    cucore_device_t *other = device(0);
    int can = -1;
    ASSERT_EQ(cucore_device_can_access_peer(d, other, &can), CUCORE_SUCCESS);
    EXPECT_EQ(can, 1);
    ASSERT_EQ(cucore_device_can_access_peer(d, d, &can), CUCORE_SUCCESS);
    EXPECT_EQ(can, 0) << "a device is not its own peer";
    cucore_device_release(other);
    cucore_device_release(d);
}

TEST_F(ObjectsTest, CallsRestoreTheCallersCurrentContext) {
    cucore_device_t *d = device(1);
    CUcontext foreign = fake::make_foreign_context(0);
    for (CUcontext callers : {CUcontext{nullptr}, foreign}) {
        fake::set_current_context(callers);
        cucore_stream_t *s = nullptr;
        cucore_event_t *e = nullptr;
        ASSERT_EQ(cucore_stream_create(d, nullptr, &s), CUCORE_SUCCESS) << message();
        EXPECT_EQ(fake::current_context(), callers);
        ASSERT_EQ(cucore_event_create(d, nullptr, &e), CUCORE_SUCCESS);
        ASSERT_EQ(cucore_event_record(e, s), CUCORE_SUCCESS);
        ASSERT_EQ(cucore_stream_synchronize(s), CUCORE_SUCCESS);
        ASSERT_EQ(cucore_device_synchronize(d), CUCORE_SUCCESS);
        EXPECT_EQ(fake::current_context(), callers);
        cucore_event_release(e);
        cucore_stream_release(s);
        EXPECT_EQ(fake::current_context(), callers) << "release paths restore it too";
    }
    fake::set_current_context(nullptr);
    cucore_device_release(d);
}

TEST_F(ObjectsTest, PrimaryContextIsRetainedWhileObjectsLiveAndSharedBetweenThem) {
    cucore_device_t *d = device(1);
    int before = fake::counters().primary_retained;
    cucore_stream_t *s = nullptr;
    cucore_event_t *e = nullptr;
    ASSERT_EQ(cucore_stream_create(d, nullptr, &s), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_event_create(d, nullptr, &e), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().primary_retained, before + 1) << "one retain shared by both";
    cucore_context_t *sc = nullptr, *ec = nullptr;
    ASSERT_EQ(cucore_stream_context(s, &sc), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_event_context(e, &ec), CUCORE_SUCCESS);
    EXPECT_EQ(sc, ec) << "the same context object";
    int primary = 0;
    ASSERT_EQ(cucore_context_is_primary(sc, &primary), CUCORE_SUCCESS);
    EXPECT_EQ(primary, 1);
    // Release in creation order: the context outlives the device handle and the stream.
    cucore_device_release(d);
    cucore_context_release(sc);
    cucore_stream_release(s);
    EXPECT_EQ(fake::counters().primary_retained, before + 1) << "the event still holds it";
    cucore_device_t *ed = nullptr;
    ASSERT_EQ(cucore_event_device(e, &ed), CUCORE_SUCCESS);
    int ordinal = -1;
    ASSERT_EQ(cucore_device_ordinal(ed, &ordinal), CUCORE_SUCCESS);
    EXPECT_EQ(ordinal, 1);
    cucore_device_release(ed);
    cucore_event_release(e);
    cucore_context_release(ec);
    EXPECT_EQ(fake::counters().primary_retained, before) << "released with the last object";
}

TEST_F(ObjectsTest, SetCurrentPinsThePrimaryContext) {
    pins_primary_ = true;
    cucore_device_t *d = device(0);
    ASSERT_EQ(cucore_device_set_current(d), CUCORE_SUCCESS);
    int pinned = fake::counters().primary_retained;
    EXPECT_GE(pinned, 1);
    void *raw = nullptr;
    cucore_context_t *c = nullptr;
    ASSERT_EQ(cucore_context_get_primary(d, &c), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_context_handle(c, &raw), CUCORE_SUCCESS);
    EXPECT_EQ(fake::current_context(), raw);
    cucore_context_release(c);
    cucore_device_release(d);
    EXPECT_EQ(fake::counters().primary_retained, pinned) << "stays retained for the process";
    fake::set_current_context(nullptr);
}

TEST_F(ObjectsTest, StreamsReportOptionsAndRunHostFunctions) {
    cucore_device_t *d = device();
    cucore_stream_options_t options = CUCORE_STREAM_OPTIONS_INIT;
    options.flags = CUCORE_STREAM_BLOCKING;
    options.priority = -2;
    cucore_stream_t *s = nullptr;
    ASSERT_EQ(cucore_stream_create(d, &options, &s), CUCORE_SUCCESS);
    int priority = 0, owned = 0, least = 1, greatest = 1;
    uint32_t flags = 0;
    ASSERT_EQ(cucore_stream_priority(s, &priority), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_stream_flags(s, &flags), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_stream_is_owned(s, &owned), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_stream_priority_range(d, &least, &greatest), CUCORE_SUCCESS);
    EXPECT_EQ(priority, -2);
    EXPECT_EQ(flags, uint32_t{CUCORE_STREAM_BLOCKING});
    EXPECT_EQ(owned, 1);
    EXPECT_EQ(least, 0);
    EXPECT_EQ(greatest, -5);
    int ran = 0;
    ASSERT_EQ(cucore_stream_launch_host_func(s, [](void *p) { ++*static_cast<int *>(p); }, &ran), CUCORE_SUCCESS);
    EXPECT_EQ(ran, 1);
    int done = 0;
    ASSERT_EQ(cucore_stream_query(s, &done), CUCORE_SUCCESS);
    EXPECT_EQ(done, 1);
    cucore_stream_t *legacy = nullptr, *per_thread = nullptr;
    ASSERT_EQ(cucore_stream_get_legacy_default(d, &legacy), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_stream_get_per_thread_default(d, &per_thread), CUCORE_SUCCESS);
    void *raw = nullptr;
    ASSERT_EQ(cucore_stream_handle(legacy, &raw), CUCORE_SUCCESS);
    EXPECT_EQ(raw, reinterpret_cast<void *>(1));
    ASSERT_EQ(cucore_stream_handle(per_thread, &raw), CUCORE_SUCCESS);
    EXPECT_EQ(raw, reinterpret_cast<void *>(2));
    int streams = fake::counters().streams;
    cucore_stream_release(legacy);
    cucore_stream_release(per_thread);
    EXPECT_EQ(fake::counters().streams, streams) << "built-in streams are never destroyed";
    ASSERT_EQ(cucore_stream_wait_stream(s, s), CUCORE_SUCCESS);
    cucore_stream_release(s);
    cucore_device_release(d);
}

TEST_F(ObjectsTest, ElapsedTimeExplainsEachFailure) {
    cucore_device_t *d = device();
    cucore_stream_t *s = nullptr;
    ASSERT_EQ(cucore_stream_create(d, nullptr, &s), CUCORE_SUCCESS);
    cucore_event_options_t timing = CUCORE_EVENT_OPTIONS_INIT;
    timing.flags = CUCORE_EVENT_TIMING;
    cucore_event_t *a = nullptr, *b = nullptr, *untimed = nullptr;
    ASSERT_EQ(cucore_event_create(d, &timing, &a), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_event_create(d, &timing, &b), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_event_create(d, nullptr, &untimed), CUCORE_SUCCESS);
    float ms = -1;
    EXPECT_EQ(cucore_event_elapsed_time(a, b, &ms), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("never been recorded"), std::string::npos) << message();
    ASSERT_EQ(cucore_event_record(a, s), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_event_record(untimed, s), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_event_elapsed_time(a, untimed, &ms), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("'end' was created without CUCORE_EVENT_TIMING"), std::string::npos) << message();
    // `recorded` completes at least 2 ms after `a` (the fake times completions by the monotonic clock), so
    // the answer must be the driver's for (a, recorded) in that order: not the reverse pair's, nor a zero.
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    cucore_event_t *recorded = nullptr;
    ASSERT_EQ(cucore_stream_record(s, &timing, &recorded), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_event_elapsed_time(a, recorded, &ms), CUCORE_SUCCESS) << message();
    void *raw_a = nullptr, *raw_recorded = nullptr;
    ASSERT_EQ(cucore_event_handle(a, &raw_a), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_event_handle(recorded, &raw_recorded), CUCORE_SUCCESS);
    float driver_ms = -1;
    ASSERT_EQ(fake::table().cuEventElapsedTime(&driver_ms, static_cast<CUevent>(raw_a),
                                               static_cast<CUevent>(raw_recorded)),
              CUDA_SUCCESS);
    EXPECT_FLOAT_EQ(ms, driver_ms) << "the driver's answer";
    EXPECT_GE(ms, 2.0f) << "from `a` to `recorded`";
    uint32_t flags = 0;
    ASSERT_EQ(cucore_event_flags(recorded, &flags), CUCORE_SUCCESS);
    EXPECT_EQ(flags, uint32_t{CUCORE_EVENT_TIMING});
    fake::fail_entry("cuEventElapsedTime", CUDA_ERROR_NOT_READY);
    EXPECT_EQ(cucore_event_elapsed_time(a, recorded, &ms), CUCORE_ERROR_NOT_READY);
    EXPECT_EQ(cucore_last_cuda_result(), CUDA_ERROR_NOT_READY);
    EXPECT_NE(message().find("not completed"), std::string::npos) << message();
    fake::fail_entry("");
    for (cucore_event_t *e : {a, b, untimed, recorded}) cucore_event_release(e);
    cucore_stream_release(s);
    cucore_device_release(d);
}

struct OwnerLog {
    int released = 0;
};
void note_release(void *user_data) { ++static_cast<OwnerLog *>(user_data)->released; }

TEST_F(ObjectsTest, ForeignObjectsAreNotDestroyedAndOwnersAreToldOnce) {
    cucore_device_t *d = device(1);
    cucore_context_t *primary = nullptr;
    ASSERT_EQ(cucore_context_get_primary(d, &primary), CUCORE_SUCCESS);
    void *raw_primary = nullptr;
    cucore_context_handle(primary, &raw_primary);

    // A foreign context: its device is found, it is not released, its owner is told.
    CUcontext foreign = fake::make_foreign_context(1);
    OwnerLog context_owner;
    cucore_context_t *wrapped = nullptr;
    ASSERT_EQ(cucore_context_from_handle(foreign, note_release, &context_owner, &wrapped), CUCORE_SUCCESS) << message();
    int is_primary = 1;
    ASSERT_EQ(cucore_context_is_primary(wrapped, &is_primary), CUCORE_SUCCESS);
    EXPECT_EQ(is_primary, 0);
    cucore_device_t *wd = nullptr;
    ASSERT_EQ(cucore_context_device(wrapped, &wd), CUCORE_SUCCESS);
    int ordinal = -1;
    cucore_device_ordinal(wd, &ordinal);
    EXPECT_EQ(ordinal, 1);
    cucore_device_release(wd);

    // A foreign stream in the primary context: recognised as that context.
    fake::set_current_context(static_cast<CUcontext>(raw_primary));
    CUstream raw_stream = nullptr;
    ASSERT_EQ(fake::table().cuStreamCreateWithPriority(&raw_stream, 0, 0), CUDA_SUCCESS);
    fake::set_current_context(nullptr);
    OwnerLog stream_owner;
    cucore_stream_t *s = nullptr;
    ASSERT_EQ(cucore_stream_from_handle(raw_stream, note_release, &stream_owner, &s), CUCORE_SUCCESS) << message();
    cucore_context_t *sc = nullptr;
    ASSERT_EQ(cucore_stream_context(s, &sc), CUCORE_SUCCESS);
    EXPECT_EQ(sc, primary) << "a foreign stream of the primary context shares its context object";
    int owned = 1;
    cucore_stream_is_owned(s, &owned);
    EXPECT_EQ(owned, 0);

    // A foreign event, wrapped in the current context.
    fake::set_current_context(foreign);
    CUevent raw_event = nullptr;
    ASSERT_EQ(fake::table().cuEventCreate(&raw_event, 0), CUDA_SUCCESS);
    OwnerLog event_owner;
    cucore_event_t *e = nullptr;
    ASSERT_EQ(cucore_event_from_handle(raw_event, note_release, &event_owner, &e), CUCORE_SUCCESS) << message();
    fake::set_current_context(nullptr);
    ASSERT_EQ(cucore_event_record(e, s), CUCORE_SUCCESS);

    int streams = fake::counters().streams, events = driver_objects().events;
    ASSERT_EQ(cucore_stream_retain(s), CUCORE_SUCCESS);
    cucore_stream_release(s);
    EXPECT_EQ(stream_owner.released, 0) << "not before the last reference";
    cucore_stream_release(s);
    cucore_event_release(e);
    cucore_context_release(wrapped);
    EXPECT_EQ(stream_owner.released, 1);
    EXPECT_EQ(event_owner.released, 1);
    EXPECT_EQ(context_owner.released, 1) << "told exactly once, when its own wrapper went";
    EXPECT_EQ(fake::counters().streams, streams) << "a foreign stream is not destroyed";
    EXPECT_EQ(driver_objects().events, events) << "a foreign event is not destroyed";
    fake::table().cuStreamDestroy(raw_stream);
    fake::table().cuEventDestroy(raw_event);
    cucore_context_release(sc);
    cucore_context_release(primary);
    cucore_device_release(d);
}

TEST_F(ObjectsTest, WrappedContextOwnerIsToldAtLastRelease) {
    CUcontext foreign = fake::make_foreign_context(0);
    OwnerLog owner;
    cucore_context_t *wrapped = nullptr;
    ASSERT_EQ(cucore_context_from_handle(foreign, note_release, &owner, &wrapped), CUCORE_SUCCESS);
    cucore_stream_t *s = nullptr;
    ASSERT_EQ(cucore_stream_create_in_context(wrapped, nullptr, &s), CUCORE_SUCCESS);
    cucore_context_release(wrapped);
    EXPECT_EQ(owner.released, 0) << "the stream still holds the context";
    cucore_stream_release(s);
    EXPECT_EQ(owner.released, 1);
}

struct ReleaseErrors {
    int calls = 0;
    cucore_status_t status = CUCORE_SUCCESS;
    int cuda_result = 0;
    std::string message;
};

TEST_F(ObjectsTest, ReleaseFailuresAreCountedAndReported) {
    expects_release_errors_ = true;
    ReleaseErrors seen;
    cucore_set_release_error_handler(
        [](cucore_status_t status, int cuda_result, const char *message, void *data) {
            auto *log = static_cast<ReleaseErrors *>(data);
            ++log->calls;
            log->status = status;
            log->cuda_result = cuda_result;
            log->message = message;
        },
        &seen);
    cucore_device_t *d = device();
    cucore_stream_t *s = nullptr;
    ASSERT_EQ(cucore_stream_create(d, nullptr, &s), CUCORE_SUCCESS);
    fake::fail_entry("cuStreamDestroy", CUDA_ERROR_UNKNOWN);
    EXPECT_EQ(cucore_stream_release(s), CUCORE_SUCCESS) << "the handle is released either way";
    fake::fail_entry("");
    EXPECT_EQ(release_errors(), release_errors_before_ + 1);
    EXPECT_EQ(seen.calls, 1);
    EXPECT_EQ(seen.status, CUCORE_ERROR_CUDA);
    EXPECT_EQ(seen.cuda_result, CUDA_ERROR_UNKNOWN);
    EXPECT_NE(seen.message.find("cuStreamDestroy"), std::string::npos) << seen.message;
    EXPECT_NE(seen.message.find("CUDA_ERROR_UNKNOWN"), std::string::npos) << seen.message;
    // The fake stream leaked because the driver refused: clean it up for the leak check.
    cucore_device_release(d);
    fake::install(2);
}

TEST_F(ObjectsTest, MissingEntryPointIsNotSupportedNamingIt) {
    cucore_device_t *d = device();
    fake::table().cuLaunchHostFunc = nullptr;
    fake::reinstall();
    cucore_stream_t *s = nullptr;
    ASSERT_EQ(cucore_stream_create(d, nullptr, &s), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_stream_launch_host_func(s, [](void *) {}, nullptr), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_NE(message().find("cuLaunchHostFunc"), std::string::npos) << message();
    cucore_stream_release(s);
    cucore_device_release(d);
}

TEST_F(ObjectsTest, NoDeviceMeansCountZeroAndNoDeviceErrors) {
    fake::install(0);
    int count = -1;
    ASSERT_EQ(cucore_device_count(&count), CUCORE_SUCCESS);
    EXPECT_EQ(count, 0);
    cucore_device_t *d = nullptr;
    EXPECT_EQ(cucore_device_get(0, &d), CUCORE_ERROR_NO_DEVICE);
    EXPECT_NE(message().find("0 devices visible"), std::string::npos) << message();
    fake::install(2);
}

}  // namespace
