// NULL out-pointers, bad ordinals, bad options and flags: INVALID_ARGUMENT (or
// NOT_SUPPORTED for options from a newer header) before any driver call.
#include <cstring>

#include "test_support.hpp"

namespace {

class ArgumentTest : public FakeDriverTest {
  protected:
    void SetUp() override {
        FakeDriverTest::SetUp();
        d_ = device();
        ASSERT_EQ(cucore_context_get_primary(d_, &c_), CUCORE_SUCCESS);
        ASSERT_EQ(cucore_stream_create(d_, nullptr, &s_), CUCORE_SUCCESS);
        ASSERT_EQ(cucore_event_create(d_, nullptr, &e_), CUCORE_SUCCESS);
        fake::reset_calls();
    }
    void TearDown() override {
        cucore_event_release(e_);
        cucore_stream_release(s_);
        cucore_context_release(c_);
        cucore_device_release(d_);
        FakeDriverTest::TearDown();
    }
    // Expects `status` to be `expected` with a message naming `argument`, and no driver call.
    void expect(cucore_status_t status, const char *function, const char *argument,
                cucore_status_t expected = CUCORE_ERROR_INVALID_ARGUMENT) {
        SCOPED_TRACE(std::string(function) + " " + argument);
        EXPECT_EQ(status, expected) << message();
        EXPECT_EQ(message().rfind(std::string(function) + ":", 0), 0u) << message();
        EXPECT_NE(message().find(argument), std::string::npos) << message();
        EXPECT_EQ(fake::calls(), 0) << "arguments are checked before any driver call";
        fake::reset_calls();
    }
    cucore_device_t *d_ = nullptr;
    cucore_context_t *c_ = nullptr;
    cucore_stream_t *s_ = nullptr;
    cucore_event_t *e_ = nullptr;
};

TEST_F(ArgumentTest, NullOutPointersEverywhere) {
    expect(cucore_driver_version(nullptr), "cucore_driver_version", "'version'");
    expect(cucore_device_count(nullptr), "cucore_device_count", "'count'");
    expect(cucore_device_get(0, nullptr), "cucore_device_get", "'device'");
    expect(cucore_device_get_current(nullptr), "cucore_device_get_current", "'device'");
    expect(cucore_device_ordinal(d_, nullptr), "cucore_device_ordinal", "'ordinal'");
    expect(cucore_device_handle(d_, nullptr), "cucore_device_handle", "'cu_device'");
    expect(cucore_device_name(d_, nullptr), "cucore_device_name", "'name'");
    expect(cucore_device_pci_bus_id(d_, nullptr), "cucore_device_pci_bus_id", "'pci_bus_id'");
    expect(cucore_device_uuid(d_, nullptr), "cucore_device_uuid", "'uuid'");
    int value = 0;
    expect(cucore_device_compute_capability(d_, nullptr, &value), "cucore_device_compute_capability", "'major'");
    expect(cucore_device_compute_capability(d_, &value, nullptr), "cucore_device_compute_capability", "'minor'");
    expect(cucore_device_total_memory(d_, nullptr), "cucore_device_total_memory", "'bytes'");
    expect(cucore_device_attribute(d_, CUCORE_DEVICE_ATTRIBUTE_WARP_SIZE, nullptr), "cucore_device_attribute", "'value'");
    expect(cucore_device_properties(d_, nullptr), "cucore_device_properties", "'properties'");
    expect(cucore_device_can_access_peer(d_, d_, nullptr), "cucore_device_can_access_peer", "'can_access'");
    expect(cucore_context_get_primary(d_, nullptr), "cucore_context_get_primary", "'context'");
    expect(cucore_context_from_handle(reinterpret_cast<void *>(1), nullptr, nullptr, nullptr), "cucore_context_from_handle", "'context'");
    expect(cucore_context_handle(c_, nullptr), "cucore_context_handle", "'cu_context'");
    expect(cucore_context_device(c_, nullptr), "cucore_context_device", "'device'");
    expect(cucore_context_is_primary(c_, nullptr), "cucore_context_is_primary", "'is_primary'");
    expect(cucore_stream_create(d_, nullptr, nullptr), "cucore_stream_create", "'stream'");
    expect(cucore_stream_create_in_context(c_, nullptr, nullptr), "cucore_stream_create_in_context", "'stream'");
    expect(cucore_stream_get_legacy_default(d_, nullptr), "cucore_stream_get_legacy_default", "'stream'");
    expect(cucore_stream_get_per_thread_default(d_, nullptr), "cucore_stream_get_per_thread_default", "'stream'");
    expect(cucore_stream_from_handle(nullptr, nullptr, nullptr, nullptr), "cucore_stream_from_handle", "'stream'");
    expect(cucore_stream_query(s_, nullptr), "cucore_stream_query", "'done'");
    expect(cucore_stream_record(s_, nullptr, nullptr), "cucore_stream_record", "'event'");
    expect(cucore_stream_launch_host_func(s_, nullptr, nullptr), "cucore_stream_launch_host_func", "'fn'");
    expect(cucore_stream_device(s_, nullptr), "cucore_stream_device", "'device'");
    expect(cucore_stream_context(s_, nullptr), "cucore_stream_context", "'context'");
    expect(cucore_stream_priority(s_, nullptr), "cucore_stream_priority", "'priority'");
    expect(cucore_stream_flags(s_, nullptr), "cucore_stream_flags", "'flags'");
    expect(cucore_stream_is_owned(s_, nullptr), "cucore_stream_is_owned", "'owned'");
    expect(cucore_stream_handle(s_, nullptr), "cucore_stream_handle", "'cu_stream'");
    expect(cucore_stream_priority_range(d_, nullptr, &value), "cucore_stream_priority_range", "'least'");
    expect(cucore_stream_priority_range(d_, &value, nullptr), "cucore_stream_priority_range", "'greatest'");
    expect(cucore_event_create(d_, nullptr, nullptr), "cucore_event_create", "'event'");
    expect(cucore_event_create_in_context(c_, nullptr, nullptr), "cucore_event_create_in_context", "'event'");
    expect(cucore_event_from_handle(reinterpret_cast<void *>(1), nullptr, nullptr, nullptr), "cucore_event_from_handle", "'event'");
    expect(cucore_event_query(e_, nullptr), "cucore_event_query", "'done'");
    expect(cucore_event_elapsed_time(e_, e_, nullptr), "cucore_event_elapsed_time", "'milliseconds'");
    expect(cucore_event_flags(e_, nullptr), "cucore_event_flags", "'flags'");
    expect(cucore_event_device(e_, nullptr), "cucore_event_device", "'device'");
    expect(cucore_event_context(e_, nullptr), "cucore_event_context", "'context'");
    expect(cucore_event_handle(e_, nullptr), "cucore_event_handle", "'cu_event'");
}

TEST_F(ArgumentTest, NullForeignHandlesAreRejected) {
    cucore_context_t *context = reinterpret_cast<cucore_context_t *>(0x1);
    expect(cucore_context_from_handle(nullptr, nullptr, nullptr, &context), "cucore_context_from_handle", "'cu_context'");
    EXPECT_EQ(context, nullptr);
    cucore_event_t *event = reinterpret_cast<cucore_event_t *>(0x1);
    expect(cucore_event_from_handle(nullptr, nullptr, nullptr, &event), "cucore_event_from_handle", "'cu_event'");
    EXPECT_EQ(event, nullptr);
}

TEST_F(ArgumentTest, BadOrdinalsAndAttributes) {
    cucore_device_t *d = reinterpret_cast<cucore_device_t *>(0x1);
    expect(cucore_device_get(-1, &d), "cucore_device_get", "'ordinal'");
    EXPECT_EQ(d, nullptr);
    int value = 5;
    expect(cucore_device_attribute(d_, CUCORE_DEVICE_ATTRIBUTE_UNSET, &value), "cucore_device_attribute", "'attribute'");
    EXPECT_EQ(value, 0);
    // An ordinal past the last device is NO_DEVICE (the driver is asked how many there are).
    EXPECT_EQ(cucore_device_get(2, &d), CUCORE_ERROR_NO_DEVICE);
    EXPECT_NE(message().find("2 devices visible"), std::string::npos) << message();
    fake::reset_calls();
    cucore_device_properties_t tiny;
    tiny.struct_size = 4;
    expect(cucore_device_properties(d_, &tiny), "cucore_device_properties", "struct_size");
}

TEST_F(ArgumentTest, OptionsAreValidated) {
    cucore_stream_t *stream = reinterpret_cast<cucore_stream_t *>(0x1);
    cucore_stream_options_t zero_size = CUCORE_STREAM_OPTIONS_INIT;
    zero_size.struct_size = 0;
    expect(cucore_stream_create(d_, &zero_size, &stream), "cucore_stream_create", "struct_size");
    EXPECT_EQ(stream, nullptr);

    cucore_stream_options_t bad_flags = CUCORE_STREAM_OPTIONS_INIT;
    bad_flags.flags = 0x80;
    expect(cucore_stream_create(d_, &bad_flags, &stream), "cucore_stream_create", "options.flags");
    expect(cucore_stream_create_in_context(c_, &bad_flags, &stream), "cucore_stream_create_in_context", "options.flags");

    cucore_event_options_t bad_event = CUCORE_EVENT_OPTIONS_INIT;
    bad_event.flags = 0x100;
    cucore_event_t *event = reinterpret_cast<cucore_event_t *>(0x1);
    expect(cucore_event_create(d_, &bad_event, &event), "cucore_event_create", "options.flags");
    EXPECT_EQ(event, nullptr);
    expect(cucore_stream_record(s_, &bad_event, &event), "cucore_stream_record", "options.flags");

    // A newer caller's larger struct: accepted if the unknown tail is zero,
    // NOT_SUPPORTED if it asks for something this library does not know.
    struct Newer {
        cucore_event_options_t known;
        uint64_t future_field;
    } newer{};
    newer.known = CUCORE_EVENT_OPTIONS_INIT;
    newer.known.struct_size = sizeof newer;
    newer.future_field = 1;
    expect(cucore_event_create(d_, &newer.known, &event), "cucore_event_create", "does not know",
           CUCORE_ERROR_NOT_SUPPORTED);
    newer.future_field = 0;
    ASSERT_EQ(cucore_event_create(d_, &newer.known, &event), CUCORE_SUCCESS) << message();
    cucore_event_release(event);

    // An older caller's smaller struct: the missing fields take their defaults.
    cucore_stream_options_t older = CUCORE_STREAM_OPTIONS_INIT;
    older.struct_size = offsetof(cucore_stream_options_t, priority);
    older.priority = -3;  // beyond struct_size: must be ignored
    ASSERT_EQ(cucore_stream_create(d_, &older, &stream), CUCORE_SUCCESS) << message();
    int priority = 9;
    ASSERT_EQ(cucore_stream_priority(stream, &priority), CUCORE_SUCCESS);
    EXPECT_EQ(priority, 0);
    cucore_stream_release(stream);
}

}  // namespace
