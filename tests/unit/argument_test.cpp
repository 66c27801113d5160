// NULL out-pointers, bad ordinals, bad options and flags: INVALID_ARGUMENT (or
// NOT_SUPPORTED for options from a newer header) before any driver call.
#include <cstddef>
#include <cstring>
#include <limits>

#include "fake_nvml.hpp"
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
    expect(cucore_context_get_current(nullptr), "cucore_context_get_current", "'context'");
    {
        cucore_memory_resource_t *pool = nullptr;
        ASSERT_EQ(cucore_device_memory_resource_get_default(d_, &pool), CUCORE_SUCCESS);
        fake::reset_calls();  // making the pool called the driver; the checks below must not
        expect(cucore_memory_resource_owns_pool(pool, nullptr), "cucore_memory_resource_owns_pool", "'owns_pool'");
        expect(cucore_pinned_memory_resource_get_default(d_, nullptr), "cucore_pinned_memory_resource_get_default",
               "'resource'");
        expect(cucore_managed_memory_resource_get_default(d_, nullptr), "cucore_managed_memory_resource_get_default",
               "'resource'");
        expect(cucore_memory_resource_deallocate(pool, 64, 8, nullptr), "cucore_memory_resource_deallocate", "'stream'");
        cucore_memory_resource_release(pool);
    }
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
    // Past the toolkit's last attribute: refused before it becomes an out-of-range CUdevice_attribute.
    value = 5;
    expect(cucore_device_attribute(d_, static_cast<cucore_device_attribute_t>(100000), &value),
           "cucore_device_attribute", "'attribute'");
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

TEST_F(ArgumentTest, AStructSizeEndingInsideAFieldIsRefused) {
    // 12 bytes end halfway through `name` (bytes 8..15): reading it would leave half a pointer (a crash in strlen
    // found by the options fuzzer). Sizes between fields are an older caller's struct and stay accepted
    // (OptionsAreValidated).
    cucore_linker_options_t options = CUCORE_LINKER_OPTIONS_INIT;
    options.name = "halved";
    options.backend = CUCORE_BACKEND_DRIVER;
    const std::string image = fake::image({"k"}, {});
    cucore_object_code_t *inputs[1] = {nullptr};
    ASSERT_EQ(cucore_object_code_create(image.data(), image.size(), CUCORE_CODE_CUBIN, "m", &inputs[0]),
              CUCORE_SUCCESS);
    cucore_linker_t *linker = reinterpret_cast<cucore_linker_t *>(0x1);
    for (uint32_t size : {9u, 12u, 15u, 17u, 23u}) {  // inside `name` (8..15) or `arch` (16..23)
        options.struct_size = size;
        expect(cucore_linker_create(inputs, 1, &options, &linker), "cucore_linker_create", "ends inside its field");
        EXPECT_EQ(linker, nullptr);
    }
    options.struct_size = 12;
    expect(cucore_linker_create(inputs, 1, &options, &linker), "cucore_linker_create", "field 'name'");
    cucore_object_code_release(inputs[0]);
    cucore_stream_options_t stream_options = CUCORE_STREAM_OPTIONS_INIT;
    stream_options.struct_size = offsetof(cucore_stream_options_t, priority) + 1;
    cucore_stream_t *stream = nullptr;
    expect(cucore_stream_create(d_, &stream_options, &stream), "cucore_stream_create", "field 'priority'");
}

cucore_status_t refuse_allocate(void *, uint64_t, cucore_stream_t *, uint64_t *) { return CUCORE_ERROR_OUT_OF_MEMORY; }
cucore_status_t ignore_deallocate(void *, uint64_t, uint64_t, cucore_stream_t *) { return CUCORE_SUCCESS; }

cucore_memory_resource_callbacks_t valid_callbacks() {
    cucore_memory_resource_callbacks_t c{};
    c.struct_size = sizeof c;
    c.allocate = refuse_allocate;
    c.deallocate = ignore_deallocate;
    c.device_id = -1;
    return c;
}

cucore_memory_resource_t *const kJunkResource = reinterpret_cast<cucore_memory_resource_t *>(0x1);

TEST_F(ArgumentTest, MemoryNullOutPointers) {
    cucore_memory_resource_t *pool = nullptr;
    cucore_buffer_t *b = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_get_default(d_, &pool), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_allocate(pool, 64, s_, &b), CUCORE_SUCCESS);
    fake::reset_calls();
    expect(cucore_pinned_memory_resource_create(d_, nullptr, nullptr), "cucore_pinned_memory_resource_create", "'resource'");
    expect(cucore_managed_memory_resource_create(d_, nullptr, nullptr), "cucore_managed_memory_resource_create", "'resource'");
    expect(cucore_virtual_memory_resource_create(d_, nullptr, nullptr), "cucore_virtual_memory_resource_create", "'resource'");
    const cucore_memory_resource_callbacks_t callbacks = valid_callbacks();
    expect(cucore_user_memory_resource_create(&callbacks, nullptr), "cucore_user_memory_resource_create", "'resource'");
    cucore_memory_resource_t *r = kJunkResource;
    expect(cucore_user_memory_resource_create(nullptr, &r), "cucore_user_memory_resource_create", "'callbacks'");
    EXPECT_EQ(r, nullptr);
    expect(cucore_memory_resource_peer_access(pool, d_, nullptr), "cucore_memory_resource_peer_access", "'access'");
    expect(cucore_memory_resource_is_managed(pool, nullptr), "cucore_memory_resource_is_managed", "'managed'");
    expect(cucore_buffer_deallocation_stream(b, nullptr), "cucore_buffer_deallocation_stream", "'stream'");
    expect(cucore_buffer_is_accessed_by(b, cucore_location_t{CUCORE_LOCATION_DEVICE, 0}, nullptr),
           "cucore_buffer_is_accessed_by", "'accessed_by'");
    expect(cucore_buffer_last_prefetch_location(b, nullptr), "cucore_buffer_last_prefetch_location", "'location'");
    expect(cucore_copy_3d(nullptr, s_), "cucore_copy_3d", "'copy'");
    expect(cucore_host_numa_current(nullptr), "cucore_host_numa_current", "'numa_id'");
    // The accessibility outs may each be NULL.
    EXPECT_EQ(cucore_buffer_accessibility(b, nullptr, nullptr, nullptr), CUCORE_SUCCESS) << message();
    int device_ok = 9;
    EXPECT_EQ(cucore_buffer_accessibility(b, &device_ok, nullptr, nullptr), CUCORE_SUCCESS) << message();
    EXPECT_EQ(device_ok, 1);
    EXPECT_EQ(fake::calls(), 0);
    cucore_buffer_release(b);
    cucore_memory_resource_release(pool);
}

TEST_F(ArgumentTest, MemoryResourceOptionsAreValidated) {
    cucore_memory_resource_t *r = kJunkResource;
    auto create_pinned = [&](const cucore_pinned_memory_resource_options_t &o) {
        r = kJunkResource;
        return cucore_pinned_memory_resource_create(d_, &o, &r);
    };
    auto create_managed = [&](const cucore_managed_memory_resource_options_t &o) {
        r = kJunkResource;
        return cucore_managed_memory_resource_create(d_, &o, &r);
    };
    auto create_virtual = [&](const cucore_virtual_memory_resource_options_t &o) {
        r = kJunkResource;
        return cucore_virtual_memory_resource_create(d_, &o, &r);
    };
    const char *pinned = "cucore_pinned_memory_resource_create";
    const char *managed = "cucore_managed_memory_resource_create";
    const char *vmm = "cucore_virtual_memory_resource_create";

    // struct_size
    cucore_pinned_memory_resource_options_t p = CUCORE_PINNED_MEMORY_RESOURCE_OPTIONS_INIT;
    p.struct_size = 0;
    expect(create_pinned(p), pinned, "struct_size");
    EXPECT_EQ(r, nullptr);
    cucore_managed_memory_resource_options_t m = CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
    m.struct_size = 2;
    expect(create_managed(m), managed, "struct_size");
    EXPECT_EQ(r, nullptr);
    cucore_virtual_memory_resource_options_t v = CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT;
    v.struct_size = 0;
    expect(create_virtual(v), vmm, "struct_size");
    EXPECT_EQ(r, nullptr);

    // Reserved fields.
    p = CUCORE_PINNED_MEMORY_RESOURCE_OPTIONS_INIT;
    p.use_numa_id = 2;
    expect(create_pinned(p), pinned, "options.use_numa_id");
    v = CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT;
    v.reserved0 = 1;
    expect(create_virtual(v), vmm, "options.reserved0");
    v = CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT;
    v.reserved1 = 1;
    expect(create_virtual(v), vmm, "options.reserved1");
    cucore_device_memory_resource_options_t d = CUCORE_DEVICE_MEMORY_RESOURCE_OPTIONS_INIT;
    d.reserved1 = 1;
    r = kJunkResource;
    expect(cucore_device_memory_resource_create(d_, &d, &r), "cucore_device_memory_resource_create", "options.reserved1");
    EXPECT_EQ(r, nullptr);

    // Switches (0 or 1).
    d = CUCORE_DEVICE_MEMORY_RESOURCE_OPTIONS_INIT;
    d.ipc_enabled = 2;
    expect(cucore_device_memory_resource_create(d_, &d, &r), "cucore_device_memory_resource_create", "options.ipc_enabled");
    p = CUCORE_PINNED_MEMORY_RESOURCE_OPTIONS_INIT;
    p.ipc_enabled = 2;
    expect(create_pinned(p), pinned, "options.ipc_enabled");
    m = CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
    m.use_pool = 2;
    expect(create_managed(m), managed, "options.use_pool");
    EXPECT_EQ(r, nullptr);
    // Pool-only fields without use_pool: refused, not ignored.
    m = CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
    m.max_size = 1 << 20;
    expect(create_managed(m), managed, "max_size");
    EXPECT_NE(message().find("use_pool"), std::string::npos) << message();
    EXPECT_EQ(r, nullptr);
    m = CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
    m.release_threshold = 4096;
    expect(create_managed(m), managed, "release_threshold");
    EXPECT_EQ(r, nullptr);
    v = CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT;
    v.minimum_granularity = 2;
    expect(create_virtual(v), vmm, "options");
    v = CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT;
    v.posix_fd_shareable = 7;
    expect(create_virtual(v), vmm, "options");

    // Unknown enum values and out-of-range ids.
    v = CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT;
    v.location_type = static_cast<cucore_location_type_t>(99);
    expect(create_virtual(v), vmm, "options.location_type");
    v.location_type = CUCORE_LOCATION_HOST_NUMA_CURRENT;  // not among DEVICE, HOST_NUMA, HOST
    expect(create_virtual(v), vmm, "options.location_type");
    v.location_type = CUCORE_LOCATION_HOST_NUMA;
    v.location_id = -1;
    expect(create_virtual(v), vmm, "options.location");
    v = CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT;
    v.self_access = static_cast<cucore_access_t>(2);
    expect(create_virtual(v), vmm, "options.self_access");
    v.self_access = static_cast<cucore_access_t>(99);
    expect(create_virtual(v), vmm, "options.self_access");
    for (uint32_t use_pool : {0u, 1u}) {  // both kinds check the location before the driver
        SCOPED_TRACE("use_pool " + std::to_string(use_pool));
        m = CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
        m.use_pool = use_pool;
        m.preferred_location.type = static_cast<cucore_location_type_t>(99);
        expect(create_managed(m), managed, "options.preferred_location");
        m.preferred_location = cucore_location_t{CUCORE_LOCATION_DEVICE, -1};
        expect(create_managed(m), managed, "options.preferred_location");
        m.preferred_location = cucore_location_t{CUCORE_LOCATION_HOST_NUMA, -2};
        expect(create_managed(m), managed, "options.preferred_location");
        m.preferred_location = cucore_location_t{CUCORE_LOCATION_HOST_NUMA_CURRENT, 0};
        expect(create_managed(m), managed, "options.preferred_location");
        EXPECT_EQ(r, nullptr);
    }
    p = CUCORE_PINNED_MEMORY_RESOURCE_OPTIONS_INIT;
    p.use_numa_id = 1;
    p.numa_id = -1;  // with use_numa_id, a node must be named
    expect(create_pinned(p), pinned, "options.numa_id");
    EXPECT_EQ(r, nullptr);

    // A newer caller's larger struct asking for something unknown.
    struct Newer {
        cucore_pinned_memory_resource_options_t known;
        uint64_t future_field;
    } newer{};
    newer.known = CUCORE_PINNED_MEMORY_RESOURCE_OPTIONS_INIT;
    newer.known.struct_size = sizeof newer;
    newer.future_field = 1;
    expect(create_pinned(newer.known), pinned, "does not know", CUCORE_ERROR_NOT_SUPPORTED);
}

TEST_F(ArgumentTest, UserResourceCallbacksAreValidated) {
    const char *fn = "cucore_user_memory_resource_create";
    cucore_memory_resource_t *r = kJunkResource;
    cucore_memory_resource_callbacks_t c = valid_callbacks();
    c.struct_size = 0;
    expect(cucore_user_memory_resource_create(&c, &r), fn, "struct_size");
    EXPECT_EQ(r, nullptr);
    c = valid_callbacks();
    c.reserved0 = 1;
    expect(cucore_user_memory_resource_create(&c, &r), fn, "callbacks.reserved0");
    c = valid_callbacks();
    c.allocate = nullptr;
    expect(cucore_user_memory_resource_create(&c, &r), fn, "callbacks.allocate");
    c = valid_callbacks();
    c.deallocate = nullptr;
    expect(cucore_user_memory_resource_create(&c, &r), fn, "callbacks.deallocate");
    c = valid_callbacks();
    c.device_id = -2;
    expect(cucore_user_memory_resource_create(&c, &r), fn, "callbacks.device_id");
    c = valid_callbacks();
    c.managed = 2;
    expect(cucore_user_memory_resource_create(&c, &r), fn, "callbacks");
    c = valid_callbacks();
    c.host_accessible = 5;
    expect(cucore_user_memory_resource_create(&c, &r), fn, "callbacks");
    EXPECT_EQ(r, nullptr);
}

TEST_F(ArgumentTest, PeerAccessAndManagedArgumentsAreValidated) {
    cucore_device_t *d1 = device(1);
    cucore_memory_resource_t *pool = nullptr, *managed = nullptr;
    cucore_buffer_t *b = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_create(d_, nullptr, &pool), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_managed_memory_resource_create(d_, nullptr, &managed), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_memory_resource_allocate(managed, 256, s_, &b), CUCORE_SUCCESS) << message();
    fake::reset_calls();
    const char *set = "cucore_memory_resource_set_peer_access";
    expect(cucore_memory_resource_set_peer_access(pool, d1, static_cast<cucore_access_t>(2)), set, "access");
    expect(cucore_memory_resource_set_peer_access(pool, d1, static_cast<cucore_access_t>(99)), set, "access");
    expect(cucore_memory_resource_set_peer_access(pool, d1, CUCORE_ACCESS_READ), set, "read-only");
    expect(cucore_memory_resource_set_peer_access(pool, d_, CUCORE_ACCESS_NONE), set, "own device");

    const cucore_location_t dev0{CUCORE_LOCATION_DEVICE, 0};
    const cucore_location_t unknown{static_cast<cucore_location_type_t>(99), 0};
    expect(cucore_buffer_advise(b, static_cast<cucore_memory_advice_t>(99), dev0), "cucore_buffer_advise", "'advice'");
    expect(cucore_buffer_advise(b, CUCORE_ADVICE_UNSET, dev0), "cucore_buffer_advise", "'advice'");
    expect(cucore_buffer_advise(b, CUCORE_ADVICE_SET_PREFERRED_LOCATION, unknown), "cucore_buffer_advise", "'location'");
    expect(cucore_buffer_advise(b, CUCORE_ADVICE_SET_ACCESSED_BY, cucore_location_t{CUCORE_LOCATION_DEVICE, -3}),
           "cucore_buffer_advise", "'location'");
    expect(cucore_buffer_prefetch(b, unknown, s_), "cucore_buffer_prefetch", "'location'");
    expect(cucore_buffer_prefetch(b, cucore_location_t{CUCORE_LOCATION_NONE, 0}, s_), "cucore_buffer_prefetch",
           "'location'");
    expect(cucore_buffer_discard(b, &unknown, s_), "cucore_buffer_discard", "'prefetch_location'");
    int yes = 9;
    // Accessed-by is kept per processor: devices and the host, not NUMA nodes.
    expect(cucore_buffer_is_accessed_by(b, cucore_location_t{CUCORE_LOCATION_HOST_NUMA, 0}, &yes),
           "cucore_buffer_is_accessed_by", "'location'");
    EXPECT_EQ(yes, 0);
    expect(cucore_buffer_is_accessed_by(b, unknown, &yes), "cucore_buffer_is_accessed_by", "'location'");
    cucore_buffer_release(b);
    cucore_memory_resource_release(managed);
    cucore_memory_resource_release(pool);
    cucore_device_release(d1);
}

TEST_F(ArgumentTest, MemoryOperationsArgumentsAreValidated) {
    cucore_memory_resource_t *pool = nullptr;
    cucore_buffer_t *b = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_get_default(d_, &pool), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_allocate(pool, 64, s_, &b), CUCORE_SUCCESS);
    fake::reset_calls();
    cucore_copy_batch_item_t item{};
    item.src = b;
    item.dst = b;
    item.dst_offset = 32;
    item.size = 16;
    const char *copy = "cucore_copy_batch";
    expect(cucore_copy_batch(s_, nullptr, 1, nullptr, 0), copy, "'items'");
    expect(cucore_copy_batch(s_, &item, 1, nullptr, 1), copy, "'options'");
    cucore_copy_options_t o = CUCORE_COPY_OPTIONS_INIT;
    const cucore_copy_options_t *options[] = {&o};
    o.struct_size = 0;
    expect(cucore_copy_batch(s_, &item, 1, options, 1), copy, "options[0]");
    o = CUCORE_COPY_OPTIONS_INIT;
    o.src_access_order = static_cast<cucore_memcpy_src_access_order_t>(99);
    expect(cucore_copy_batch(s_, &item, 1, options, 1), copy, "options[0].src_access_order");
    o = CUCORE_COPY_OPTIONS_INIT;
    o.dst_location_hint = cucore_location_t{static_cast<cucore_location_type_t>(42), 0};
    expect(cucore_copy_batch(s_, &item, 1, options, 1), copy, "options[0].dst_location_hint");
    o = CUCORE_COPY_OPTIONS_INIT;
    item.options_index = 3;
    expect(cucore_copy_batch(s_, &item, 1, options, 1), copy, "items[0].options_index");
    item.options_index = 0;
    item.dst_offset = 60;  // past the end: judged before any driver call
    expect(cucore_copy_batch(s_, &item, 1, nullptr, 0), copy, "items[0].dst");
    expect(cucore_copy_3d_batch(s_, nullptr, 1, nullptr), "cucore_copy_3d_batch", "'copies'");
    const cucore_copy_3d_t *no_copy[] = {nullptr};
    expect(cucore_copy_3d_batch(s_, no_copy, 1, nullptr), "cucore_copy_3d_batch", "copies[0]");
    cucore_buffer_t *buffers[] = {b};
    const cucore_location_t bad{CUCORE_LOCATION_HOST_NUMA, -2};
    expect(cucore_prefetch_batch(s_, nullptr, 1, &bad, 1), "cucore_prefetch_batch", "'buffers'");
    expect(cucore_prefetch_batch(s_, buffers, 1, &bad, 1), "cucore_prefetch_batch", "locations[0]");
    expect(cucore_prefetch_batch(s_, buffers, 1, nullptr, 1), "cucore_prefetch_batch", "'locations'");
    expect(cucore_discard_prefetch_batch(s_, buffers, 1, &bad, 0), "cucore_discard_prefetch_batch", "'location_count'");
    expect(cucore_discard_batch(s_, nullptr, 2), "cucore_discard_batch", "'buffers'");
    expect(cucore_discard_batch(s_, buffers, 1), "cucore_discard_batch", "not managed");
    expect(cucore_stream_write_value_32(s_, b, 0, 1, 4), "cucore_stream_write_value_32", "'flags'");
    expect(cucore_stream_write_value_32(s_, b, 2, 1, 0), "cucore_stream_write_value_32", "aligned");
    expect(cucore_stream_wait_value_32(s_, b, 0, 1, 0x10), "cucore_stream_wait_value_32", "'flags'");
    expect(cucore_stream_wait_value_64(s_, b, 60, 1, 0), "cucore_stream_wait_value_64", "'buffer'");
    expect(cucore_stream_memory_barrier(s_, static_cast<cucore_memory_barrier_scope_t>(7)),
           "cucore_stream_memory_barrier", "'scope'");
    cucore_stream_memory_op_t op{CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_32, 0, b, 0, uint64_t{1} << 33};
    const char *batch = "cucore_stream_batch_memory_ops";
    expect(cucore_stream_batch_memory_ops(s_, &op, 1), batch, "ops[0].value");
    op = {static_cast<cucore_stream_memory_op_type_t>(9), 0, b, 0, 0};
    expect(cucore_stream_batch_memory_ops(s_, &op, 1), batch, "ops[0].type");
    op = {CUCORE_STREAM_MEMORY_OP_BARRIER, 0, nullptr, 8, 0};
    expect(cucore_stream_batch_memory_ops(s_, &op, 1), batch, "ops[0]");
    expect(cucore_stream_batch_memory_ops(s_, nullptr, 1), batch, "'ops'");
    expect(cucore_stream_batch_memory_ops(s_, &op, 300), batch, "'count'");
    cucore_buffer_release(b);
    cucore_memory_resource_release(pool);
}

TEST_F(ArgumentTest, IpcNullPointers) {
    cucore_memory_resource_t *pool = nullptr;
    cucore_buffer_t *b = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_get_default(d_, &pool), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_memory_resource_allocate(pool, 64, s_, &b), CUCORE_SUCCESS);
    fake::reset_calls();
    cucore_ipc_pool_handle_t h{};
    uint8_t d[CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE] = {};
    cucore_memory_resource_t *r = kJunkResource;
    cucore_buffer_t *ib = reinterpret_cast<cucore_buffer_t *>(0x1);
    cucore_event_t *ie = reinterpret_cast<cucore_event_t *>(0x1);
    expect(cucore_ipc_export_memory_resource(pool, nullptr), "cucore_ipc_export_memory_resource", "'handle'");
    expect(cucore_ipc_import_memory_resource(d_, &h, nullptr), "cucore_ipc_import_memory_resource", "'resource'");
    expect(cucore_ipc_import_memory_resource(d_, nullptr, &r), "cucore_ipc_import_memory_resource", "'handle'");
    EXPECT_EQ(r, nullptr);
    expect(cucore_ipc_memory_resource_pool_id(pool, nullptr), "cucore_ipc_memory_resource_pool_id", "'pool_id'");
    expect(cucore_ipc_export_buffer(b, nullptr), "cucore_ipc_export_buffer", "'descriptor'");
    expect(cucore_ipc_import_buffer(pool, d, sizeof d, s_, nullptr), "cucore_ipc_import_buffer", "'buffer'");
    expect(cucore_ipc_import_buffer(pool, nullptr, sizeof d, s_, &ib), "cucore_ipc_import_buffer", "'descriptor'");
    EXPECT_EQ(ib, nullptr);
    expect(cucore_ipc_export_event(e_, nullptr), "cucore_ipc_export_event", "'descriptor'");
    expect(cucore_ipc_import_event(d_, d, CUCORE_IPC_EVENT_DESCRIPTOR_SIZE, nullptr), "cucore_ipc_import_event",
           "'event'");
    expect(cucore_ipc_import_event(d_, nullptr, CUCORE_IPC_EVENT_DESCRIPTOR_SIZE, &ie), "cucore_ipc_import_event",
           "'descriptor'");
    EXPECT_EQ(ie, nullptr);
    // Unknown event flag bits are refused, and INTERPROCESS is known.
    cucore_event_options_t o = CUCORE_EVENT_OPTIONS_INIT;
    o.flags = 8;
    expect(cucore_event_create(d_, &o, &ie), "cucore_event_create", "'options.flags'");
    o.flags = CUCORE_EVENT_INTERPROCESS | CUCORE_EVENT_TIMING;
    expect(cucore_event_create(d_, &o, &ie), "cucore_event_create", "'options.flags'");
    cucore_buffer_release(b);
    cucore_memory_resource_release(pool);
}

TEST_F(ArgumentTest, KernelAndLaunchArguments) {
    cucore_kernel_t *k = nullptr;
    ASSERT_EQ(cucore_kernel_from_handle(fake::make_kernel(), nullptr, nullptr, &k), CUCORE_SUCCESS);
    fake::reset_calls();
    int value = 0;
    size_t size = 0;
    void *raw = nullptr;
    expect(cucore_kernel_from_handle(reinterpret_cast<void *>(1), nullptr, nullptr, nullptr), "cucore_kernel_from_handle", "'kernel'");
    cucore_kernel_t *other = k;
    expect(cucore_kernel_from_handle(nullptr, nullptr, nullptr, &other), "cucore_kernel_from_handle", "'cu_kernel'");
    EXPECT_EQ(other, nullptr);
    other = k;
    expect(cucore_kernel_from_function(reinterpret_cast<void *>(1), nullptr, nullptr, nullptr), "cucore_kernel_from_function", "'kernel'");
    expect(cucore_kernel_from_function(nullptr, nullptr, nullptr, &other), "cucore_kernel_from_function", "'cu_function'");
    EXPECT_EQ(other, nullptr);
    expect(cucore_kernel_name(k, nullptr), "cucore_kernel_name", "'name'");
    expect(cucore_kernel_attribute(k, d_, CUCORE_KERNEL_ATTRIBUTE_NUM_REGS, nullptr), "cucore_kernel_attribute", "'value'");
    expect(cucore_kernel_attribute(k, d_, CUCORE_KERNEL_ATTRIBUTE_UNSET, &value), "cucore_kernel_attribute", "'attribute'");
    expect(cucore_kernel_set_attribute(k, d_, CUCORE_KERNEL_ATTRIBUTE_COUNT, 1), "cucore_kernel_set_attribute", "'attribute'");
    expect(cucore_kernel_set_attribute(k, d_, CUCORE_KERNEL_ATTRIBUTE_NUM_REGS, 1), "cucore_kernel_set_attribute", "'attribute'");
    expect(cucore_kernel_param_count(k, nullptr), "cucore_kernel_param_count", "'count'");
    expect(cucore_kernel_param_info(k, 0, nullptr, &size), "cucore_kernel_param_info", "'offset'");
    expect(cucore_kernel_param_info(k, 0, &size, nullptr), "cucore_kernel_param_info", "'size'");
    expect(cucore_kernel_max_active_blocks_per_multiprocessor(k, d_, 64, 0, nullptr), "cucore_kernel_max_active_blocks_per_multiprocessor", "'blocks'");
    expect(cucore_kernel_max_active_blocks_per_multiprocessor(k, d_, 0, 0, &value), "cucore_kernel_max_active_blocks_per_multiprocessor", "'block_size'");
    expect(cucore_kernel_max_potential_block_size(k, d_, 0, 0, nullptr, &value), "cucore_kernel_max_potential_block_size", "'min_grid_size'");
    expect(cucore_kernel_max_potential_block_size(k, d_, 0, 0, &value, nullptr), "cucore_kernel_max_potential_block_size", "'block_size'");
    expect(cucore_kernel_max_potential_block_size(k, d_, 0, 0x80000000u, &value, &value), "cucore_kernel_max_potential_block_size", "'block_size_limit'");
    expect(cucore_kernel_available_dynamic_shared_memory(k, d_, 1, 64, nullptr), "cucore_kernel_available_dynamic_shared_memory", "'bytes'");
    expect(cucore_kernel_available_dynamic_shared_memory(k, d_, 0, 64, &size), "cucore_kernel_available_dynamic_shared_memory", "'num_blocks'");
    expect(cucore_kernel_available_dynamic_shared_memory(k, d_, 1, 0, &size), "cucore_kernel_available_dynamic_shared_memory", "'block_size'");
    expect(cucore_kernel_handle(k, nullptr), "cucore_kernel_handle", "'cu_kernel'");
    expect(cucore_kernel_function(k, d_, nullptr), "cucore_kernel_function", "'cu_function'");
    (void)raw;
    // Launch configurations: NULL where one is required, bad struct_size, unknown flags, a newer caller's fields.
    cucore_launch_config_t c = CUCORE_LAUNCH_CONFIG_INIT;
    expect(cucore_launch_config_validate(nullptr, k, d_), "cucore_launch_config_validate", "'config'");
    expect(cucore_launch_max_potential_cluster_size(nullptr, k, d_, &value), "cucore_launch_max_potential_cluster_size", "'config'");
    expect(cucore_launch_max_potential_cluster_size(&c, k, d_, nullptr), "cucore_launch_max_potential_cluster_size", "'cluster_size'");
    expect(cucore_launch_max_active_clusters(nullptr, k, d_, &value), "cucore_launch_max_active_clusters", "'config'");
    expect(cucore_launch_max_active_clusters(&c, k, d_, nullptr), "cucore_launch_max_active_clusters", "'clusters'");
    expect(cucore_launch_max_active_clusters(&c, k, d_, &value), "cucore_launch_max_active_clusters", "has no cluster");
    c.flags = 8;
    expect(cucore_launch(s_, &c, k, nullptr, nullptr, 0), "cucore_launch", "'config.flags'");
    expect(cucore_launch_config_validate(&c, k, d_), "cucore_launch_config_validate", "'config.flags'");
    c = CUCORE_LAUNCH_CONFIG_INIT;
    c.struct_size = 0;
    expect(cucore_launch(s_, &c, k, nullptr, nullptr, 0), "cucore_launch", "'config' has struct_size 0");
    struct Newer {
        cucore_launch_config_t known;
        uint32_t future;
    } newer{};
    newer.known = CUCORE_LAUNCH_CONFIG_INIT;
    newer.known.struct_size = sizeof newer;
    newer.future = 1;
    expect(cucore_launch(s_, &newer.known, k, nullptr, nullptr, 0), "cucore_launch", "'config' sets fields", CUCORE_ERROR_NOT_SUPPORTED);
    const void *args[] = {nullptr};
    const size_t sizes[] = {4};
    expect(cucore_launch(s_, nullptr, k, nullptr, sizes, 1), "cucore_launch", "'args'");
    expect(cucore_launch(s_, nullptr, k, args, nullptr, 1), "cucore_launch", "'arg_sizes'");
    expect(cucore_launch(s_, nullptr, k, args, sizes, 1), "cucore_launch", "'args[0]'");
    expect(cucore_launch_block(nullptr), "cucore_launch_block", "'block'");
    cucore_launch_block_t b = CUCORE_LAUNCH_BLOCK_INIT;
    b.stream = s_;
    b.kernel = k;
    b.struct_size = 0;
    expect(cucore_launch_block(&b), "cucore_launch_block", "'block' has struct_size 0");
    cucore_kernel_release(k);
}

TEST_F(ArgumentTest, CompileSideNullPointers) {
    cucore_program_options_t po = CUCORE_PROGRAM_OPTIONS_INIT;
    po.arch = "sm_90";
    cucore_program_t *p = nullptr;
    ASSERT_EQ(cucore_program_create(".version 8.0", 0, CUCORE_CODE_PTX, &po, &p), CUCORE_SUCCESS) << message();
    const std::string image = fake::image({"k"}, {{"g", 4}});
    cucore_object_code_t *o = nullptr;
    ASSERT_EQ(cucore_object_code_create(image.data(), image.size(), CUCORE_CODE_CUBIN, "o", &o), CUCORE_SUCCESS);
    cucore_program_cache_t *cache = nullptr;
    ASSERT_EQ(cucore_program_cache_create_in_memory(0, &cache), CUCORE_SUCCESS);
    cucore_linker_options_t lo = CUCORE_LINKER_OPTIONS_INIT;
    lo.backend = CUCORE_BACKEND_DRIVER;
    cucore_linker_t *l = nullptr;
    ASSERT_EQ(cucore_linker_create(&o, 1, &lo, &l), CUCORE_SUCCESS) << message();
    fake::reset_calls();
    const void *data = nullptr;
    size_t size = 0;
    const char *text = nullptr;
    uint64_t address = 0;
    uint32_t value = 0;
    cucore_program_t *scratch_p = nullptr;
    cucore_object_code_t *scratch_o = nullptr;
    cucore_program_cache_t *scratch_c = nullptr;
    cucore_linker_t *scratch_l = nullptr;
    expect(cucore_program_create(nullptr, 0, CUCORE_CODE_CXX, nullptr, &scratch_p), "cucore_program_create", "'code'");
    expect(cucore_program_create("x", 0, CUCORE_CODE_CXX, nullptr, nullptr), "cucore_program_create", "'program'");
    cucore_program_options_t small = CUCORE_PROGRAM_OPTIONS_INIT;
    small.struct_size = 0;
    expect(cucore_program_create("x", 0, CUCORE_CODE_CXX, &small, &scratch_p), "cucore_program_create", "'options'");
    expect(cucore_program_compile(p, CUCORE_CODE_CUBIN, nullptr, 0, nullptr, nullptr), "cucore_program_compile", "'object_code'");
    expect(cucore_program_log(p, nullptr, 4, nullptr), "cucore_program_log", "'buffer'");
    expect(cucore_program_pch_status(p, nullptr), "cucore_program_pch_status", "'status'");
    expect(cucore_program_flags(p, nullptr, 4, nullptr), "cucore_program_flags", "'buffer'");
    expect(cucore_program_code_type(p, nullptr), "cucore_program_code_type", "'code_type'");
    expect(cucore_program_backend(p, nullptr), "cucore_program_backend", "'backend'");
    expect(cucore_program_arch(p, nullptr), "cucore_program_arch", "'arch'");
    expect(cucore_compiler_version(CUCORE_BACKEND_NVRTC, nullptr), "cucore_compiler_version", "'version'");
    int version = 0;
    expect(cucore_compiler_version(CUCORE_BACKEND_DEFAULT, &version), "cucore_compiler_version", "'backend'");
    expect(cucore_program_cache_key(p, CUCORE_CODE_CUBIN, nullptr, 0, nullptr), "cucore_program_cache_key", "'key'");
    expect(cucore_program_cache_create_in_memory(0, nullptr), "cucore_program_cache_create_in_memory", "'cache'");
    expect(cucore_program_cache_create_on_disk(nullptr, 0, &scratch_c), "cucore_program_cache_create_on_disk", "'directory'");
    expect(cucore_program_cache_stats(cache, nullptr), "cucore_program_cache_stats", "'stats'");
    {
        const uint8_t k[32] = {1};
        cucore_object_code_t *got = nullptr;
        expect(cucore_program_cache_get(cache, nullptr, &got), "cucore_program_cache_get", "'key'");
        expect(cucore_program_cache_get(cache, k, nullptr), "cucore_program_cache_get", "'object_code'");
        expect(cucore_program_cache_put(cache, nullptr, o), "cucore_program_cache_put", "'key'");
        expect(cucore_program_cache_remove(cache, nullptr, nullptr), "cucore_program_cache_remove", "'key'");
    }
    expect(cucore_object_code_create(nullptr, 1, CUCORE_CODE_CUBIN, nullptr, &scratch_o), "cucore_object_code_create", "'data'");
    expect(cucore_object_code_create("x", 1, CUCORE_CODE_CUBIN, nullptr, nullptr), "cucore_object_code_create", "'object_code'");
    expect(cucore_object_code_create_from_file(nullptr, CUCORE_CODE_CUBIN, nullptr, &scratch_o), "cucore_object_code_create_from_file", "'path'");
    expect(cucore_object_code_code_type(o, nullptr), "cucore_object_code_code_type", "'code_type'");
    expect(cucore_object_code_data(o, nullptr, &size), "cucore_object_code_data", "'data'");
    expect(cucore_object_code_data(o, &data, nullptr), "cucore_object_code_data", "'size'");
    expect(cucore_object_code_name(o, nullptr), "cucore_object_code_name", "'name'");
    expect(cucore_object_code_name_expression_count(o, nullptr), "cucore_object_code_name_expression_count", "'count'");
    expect(cucore_object_code_name_expression(o, 0, nullptr, &text), "cucore_object_code_name_expression", "'expression'");
    expect(cucore_object_code_name_expression(o, 0, &text, nullptr), "cucore_object_code_name_expression", "'lowered_name'");
    expect(cucore_object_code_name_expression(o, 0, &text, &text), "cucore_object_code_name_expression", "'index'");
    expect(cucore_object_code_get_kernel(o, "k", nullptr), "cucore_object_code_get_kernel", "'kernel'");
    cucore_kernel_t *k = nullptr;
    expect(cucore_object_code_get_kernel(o, nullptr, &k), "cucore_object_code_get_kernel", "'name'");
    expect(cucore_object_code_kernel_count(o, nullptr), "cucore_object_code_kernel_count", "'count'");
    expect(cucore_object_code_get_global(o, d_, "g", nullptr, &size), "cucore_object_code_get_global", "'address'");
    expect(cucore_object_code_get_global(o, d_, "g", &address, nullptr), "cucore_object_code_get_global", "'size'");
    expect(cucore_object_code_get_global(o, d_, nullptr, &address, &size), "cucore_object_code_get_global", "'name'");
    expect(cucore_object_code_read_global(o, d_, nullptr, &value, 4), "cucore_object_code_read_global", "'name'");
    expect(cucore_object_code_read_global(o, d_, "g", nullptr, 4), "cucore_object_code_read_global", "'dst'");
    expect(cucore_object_code_write_global(o, d_, nullptr, &value, 4), "cucore_object_code_write_global", "'name'");
    expect(cucore_object_code_write_global(o, d_, "g", nullptr, 4), "cucore_object_code_write_global", "'src'");
    expect(cucore_object_code_handle(o, nullptr), "cucore_object_code_handle", "'cu_library'");
    expect(cucore_object_code_module(o, nullptr), "cucore_object_code_module", "'cu_module'");
    expect(cucore_linker_create(&o, 1, nullptr, nullptr), "cucore_linker_create", "'linker'");
    expect(cucore_linker_create(nullptr, 1, nullptr, &scratch_l), "cucore_linker_create", "'inputs'");
    cucore_linker_t *l2 = nullptr;
    cucore_linker_options_t bad = CUCORE_LINKER_OPTIONS_INIT;
    bad.struct_size = 1;
    expect(cucore_linker_create(&o, 1, &bad, &l2), "cucore_linker_create", "'options'");
    expect(cucore_linker_link(l, CUCORE_CODE_CUBIN, nullptr), "cucore_linker_link", "'object_code'");
    expect(cucore_linker_error_log(l, nullptr, 1, nullptr), "cucore_linker_error_log", "'buffer'");
    expect(cucore_linker_info_log(l, nullptr, 1, nullptr), "cucore_linker_info_log", "'buffer'");
    expect(cucore_linker_backend(l, nullptr), "cucore_linker_backend", "'backend'");
    expect(cucore_linker_default_backend(nullptr), "cucore_linker_default_backend", "'backend'");
    // Retain/release pairs of every compile-side type.
    EXPECT_EQ(cucore_program_retain(p), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_program_release(p), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_object_code_retain(o), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_object_code_release(o), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_linker_retain(l), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_linker_release(l), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_program_cache_retain(cache), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_program_cache_release(cache), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_program_release(nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_object_code_release(nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_linker_release(nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_program_cache_release(nullptr), CUCORE_SUCCESS);
    cucore_linker_release(l);
    cucore_program_cache_release(cache);
    cucore_object_code_release(o);
    cucore_program_release(p);
}

// Arrays, mipmapped arrays, texture and surface objects: NULL outs, bad struct sizes, bad enums and flags.
class ArrayArgumentTest : public ArgumentTest {
  protected:
    void SetUp() override {
        ArgumentTest::SetUp();
        cucore_opaque_array_options_t o = CUCORE_OPAQUE_ARRAY_OPTIONS_INIT;
        o.format = CUCORE_ARRAY_FORMAT_FLOAT32;
        o.width = 8;
        o.height = 8;
        o.flags = CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE;
        ASSERT_EQ(cucore_opaque_array_create(d_, &o, &a_), CUCORE_SUCCESS) << message();
        ASSERT_EQ(cucore_mipmapped_array_create(d_, &o, 2, &m_), CUCORE_SUCCESS) << message();
        ASSERT_EQ(cucore_opaque_array_handle(a_, &cu_array_), CUCORE_SUCCESS);
        ASSERT_EQ(cucore_mipmapped_array_handle(m_, &cu_mipmapped_), CUCORE_SUCCESS);
        resource_.kind = CUCORE_RESOURCE_KIND_OPAQUE_ARRAY;
        resource_.array = a_;
        ASSERT_EQ(cucore_texture_object_create(nullptr, &resource_, nullptr, &t_), CUCORE_SUCCESS) << message();
        ASSERT_EQ(cucore_surface_object_create(nullptr, &resource_, &s_obj_), CUCORE_SUCCESS) << message();
        cucore_memory_resource_t *pool = nullptr;
        ASSERT_EQ(cucore_device_memory_resource_get_default(d_, &pool), CUCORE_SUCCESS);
        ASSERT_EQ(cucore_memory_resource_allocate(pool, 4096, s_, &b_), CUCORE_SUCCESS);
        cucore_memory_resource_release(pool);
        fake::reset_calls();
    }
    void TearDown() override {
        cucore_buffer_release(b_);
        cucore_surface_object_release(s_obj_);
        cucore_texture_object_release(t_);
        cucore_mipmapped_array_release(m_);
        cucore_opaque_array_release(a_);
        ArgumentTest::TearDown();
    }
    static cucore_opaque_array_options_t options() {
        cucore_opaque_array_options_t o = CUCORE_OPAQUE_ARRAY_OPTIONS_INIT;
        o.format = CUCORE_ARRAY_FORMAT_UINT8;
        o.width = 4;
        o.height = 4;
        return o;
    }
    // Expects both creates (array and mipmapped array) to refuse `o`, naming `named`.
    void expect_both(const cucore_opaque_array_options_t &o, const char *named) {
        cucore_opaque_array_t *a = reinterpret_cast<cucore_opaque_array_t *>(0x1);
        expect(cucore_opaque_array_create(d_, &o, &a), "cucore_opaque_array_create", named);
        EXPECT_EQ(a, nullptr);
        cucore_mipmapped_array_t *m = reinterpret_cast<cucore_mipmapped_array_t *>(0x1);
        expect(cucore_mipmapped_array_create(d_, &o, 1, &m), "cucore_mipmapped_array_create", named);
        EXPECT_EQ(m, nullptr);
    }
    void expect_texture(const cucore_resource_descriptor_t &r, const cucore_texture_object_options_t *o,
                        const char *named) {
        cucore_texture_object_t *t = reinterpret_cast<cucore_texture_object_t *>(0x1);
        expect(cucore_texture_object_create(nullptr, &r, o, &t), "cucore_texture_object_create", named);
        EXPECT_EQ(t, nullptr);
    }
    cucore_opaque_array_t *a_ = nullptr;
    cucore_mipmapped_array_t *m_ = nullptr;
    void *cu_array_ = nullptr, *cu_mipmapped_ = nullptr;
    cucore_texture_object_t *t_ = nullptr;
    cucore_surface_object_t *s_obj_ = nullptr;
    cucore_buffer_t *b_ = nullptr;
    cucore_resource_descriptor_t resource_ = CUCORE_RESOURCE_DESCRIPTOR_INIT;
};

TEST_F(ArrayArgumentTest, NullOutPointersAndArguments) {
    const cucore_opaque_array_options_t o = options();
    expect(cucore_opaque_array_create(d_, &o, nullptr), "cucore_opaque_array_create", "'array'");
    cucore_opaque_array_t *a = reinterpret_cast<cucore_opaque_array_t *>(0x1);
    expect(cucore_opaque_array_create(d_, nullptr, &a), "cucore_opaque_array_create", "'options'");
    EXPECT_EQ(a, nullptr);
    expect(cucore_opaque_array_from_handle(d_, cu_array_, nullptr, nullptr, nullptr), "cucore_opaque_array_from_handle",
           "'array'");
    expect(cucore_opaque_array_from_handle(d_, nullptr, nullptr, nullptr, &a), "cucore_opaque_array_from_handle",
           "'cu_array'");
    expect(cucore_opaque_array_info(a_, nullptr), "cucore_opaque_array_info", "'info'");
    expect(cucore_opaque_array_handle(a_, nullptr), "cucore_opaque_array_handle", "'cu_array'");
    expect(cucore_opaque_array_copy_from_host(a_, nullptr, 256, s_), "cucore_opaque_array_copy_from_host", "'src'");
    expect(cucore_opaque_array_copy_to_host(a_, nullptr, 256, s_), "cucore_opaque_array_copy_to_host", "'dst'");
    expect(cucore_opaque_array_copy(nullptr, s_), "cucore_opaque_array_copy", "'copy'");
    expect(cucore_mipmapped_array_create(d_, &o, 1, nullptr), "cucore_mipmapped_array_create", "'mipmapped_array'");
    cucore_mipmapped_array_t *m = reinterpret_cast<cucore_mipmapped_array_t *>(0x1);
    expect(cucore_mipmapped_array_create(d_, nullptr, 1, &m), "cucore_mipmapped_array_create", "'options'");
    EXPECT_EQ(m, nullptr);
    expect(cucore_mipmapped_array_from_handle(d_, cu_mipmapped_, nullptr, nullptr, nullptr),
           "cucore_mipmapped_array_from_handle", "'mipmapped_array'");
    expect(cucore_mipmapped_array_from_handle(d_, nullptr, nullptr, nullptr, &m), "cucore_mipmapped_array_from_handle",
           "'cu_mipmapped_array'");
    expect(cucore_mipmapped_array_info(m_, nullptr), "cucore_mipmapped_array_info", "'info'");
    expect(cucore_mipmapped_array_handle(m_, nullptr), "cucore_mipmapped_array_handle", "'cu_mipmapped_array'");
    expect(cucore_mipmapped_array_level(m_, 0, nullptr), "cucore_mipmapped_array_level", "'array'");
    expect(cucore_texture_object_create(nullptr, &resource_, nullptr, nullptr), "cucore_texture_object_create",
           "'texture'");
    cucore_texture_object_t *t = reinterpret_cast<cucore_texture_object_t *>(0x1);
    expect(cucore_texture_object_create(nullptr, nullptr, nullptr, &t), "cucore_texture_object_create", "'resource'");
    EXPECT_EQ(t, nullptr);
    expect(cucore_texture_object_handle(t_, nullptr), "cucore_texture_object_handle", "'handle'");
    expect(cucore_surface_object_create(nullptr, &resource_, nullptr), "cucore_surface_object_create", "'surface'");
    cucore_surface_object_t *so = reinterpret_cast<cucore_surface_object_t *>(0x1);
    expect(cucore_surface_object_create(nullptr, nullptr, &so), "cucore_surface_object_create", "'resource'");
    EXPECT_EQ(so, nullptr);
    expect(cucore_surface_object_handle(s_obj_, nullptr), "cucore_surface_object_handle", "'handle'");
}

TEST_F(ArrayArgumentTest, StructSizesAreChecked) {
    cucore_opaque_array_options_t o = options();
    o.struct_size = 0;
    expect_both(o, "struct_size");
    o.struct_size = static_cast<uint32_t>(offsetof(cucore_opaque_array_options_t, width) + 3);
    expect_both(o, "field 'width'");
    // A newer caller's larger struct with a tail set: refused as NOT_SUPPORTED.
    struct Larger {
        cucore_opaque_array_options_t options;
        uint64_t newer;
    } larger{options(), 1};
    larger.options.struct_size = sizeof larger;
    cucore_opaque_array_t *a = nullptr;
    expect(cucore_opaque_array_create(d_, &larger.options, &a), "cucore_opaque_array_create", "struct_size",
           CUCORE_ERROR_NOT_SUPPORTED);
    cucore_opaque_array_info_t info = CUCORE_OPAQUE_ARRAY_INFO_INIT;
    info.struct_size = 2;
    expect(cucore_opaque_array_info(a_, &info), "cucore_opaque_array_info", "struct_size");
    expect(cucore_mipmapped_array_info(m_, &info), "cucore_mipmapped_array_info", "struct_size");
    cucore_opaque_array_copy_t copy = CUCORE_OPAQUE_ARRAY_COPY_INIT;
    copy.struct_size = 0;
    expect(cucore_opaque_array_copy(&copy, s_), "cucore_opaque_array_copy", "struct_size");
    cucore_resource_descriptor_t r = resource_;
    r.struct_size = 2;
    expect_texture(r, nullptr, "struct_size");
    cucore_surface_object_t *so = nullptr;
    expect(cucore_surface_object_create(nullptr, &r, &so), "cucore_surface_object_create", "struct_size");
    cucore_texture_object_options_t to = CUCORE_TEXTURE_OBJECT_OPTIONS_INIT;
    to.struct_size = 1;
    expect_texture(resource_, &to, "struct_size");
    // An older caller's options, ending between fields: the rest are defaults.
    cucore_opaque_array_info_t old = CUCORE_OPAQUE_ARRAY_INFO_INIT;
    old.struct_size = static_cast<uint32_t>(offsetof(cucore_opaque_array_info_t, width));
    old.width = 12345;
    ASSERT_EQ(cucore_opaque_array_info(a_, &old), CUCORE_SUCCESS) << message();
    EXPECT_EQ(old.format, CUCORE_ARRAY_FORMAT_FLOAT32);
    EXPECT_EQ(old.width, 12345u) << "not written past the caller's struct_size";
}

TEST_F(ArrayArgumentTest, BadEnumsAndFlagsAreRefused) {
    auto with = [](auto change) {
        cucore_opaque_array_options_t o = options();
        change(o);
        return o;
    };
    auto raw = [](auto &field, uint32_t value) { std::memcpy(&field, &value, sizeof value); };
    expect_both(with([&](auto &o) { raw(o.format, 0x04); }), "options.format");
    expect_both(with([&](auto &o) { raw(o.format, 0xb0); }), "options.format");  // NV12: not offered
    expect_both(with([&](auto &o) { raw(o.format, 0x80000020u); }), "options.format");
    expect_both(with([&](auto &o) { raw(o.kind, 4); }), "options.kind");
    expect_both(with([&](auto &o) { raw(o.kind, 0xffffffffu); }), "options.kind");
    expect_both(with([](auto &o) { o.flags = 0x10; }), "options.flags");
    expect_both(with([](auto &o) { o.flags = 0x80000000u; }), "options.flags");
    expect_both(with([](auto &o) { o.reserved0 = 7; }), "options.reserved0");
    expect_both(with([](auto &o) { o.num_channels = 3; }), "options.num_channels");
    cucore_opaque_array_copy_t copy = CUCORE_OPAQUE_ARRAY_COPY_INIT;
    copy.reserved0 = 1;
    expect(cucore_opaque_array_copy(&copy, s_), "cucore_opaque_array_copy", "copy.reserved0");

    cucore_resource_descriptor_t r = resource_;
    raw(r.kind, 0);
    expect_texture(r, nullptr, "resource.kind");
    raw(r.kind, 5);
    expect_texture(r, nullptr, "resource.kind");
    raw(r.kind, 0x80000001u);
    expect_texture(r, nullptr, "resource.kind");
    cucore_resource_descriptor_t lin = CUCORE_RESOURCE_DESCRIPTOR_INIT;
    lin.kind = CUCORE_RESOURCE_KIND_LINEAR;
    lin.buffer = b_;
    raw(lin.format, 0x04);
    expect_texture(lin, nullptr, "resource.format");
    raw(lin.format, 0xb0);
    expect_texture(lin, nullptr, "resource.format");
    struct Row {
        const char *named;
        void (*change)(cucore_texture_object_options_t &);
    };
    const Row rows[] = {
        {"options.address_mode[0]", [](auto &o) { const uint32_t v = 4; std::memcpy(&o.address_mode[0], &v, 4); }},
        {"options.address_mode[1]", [](auto &o) { const uint32_t v = 0x80000000u; std::memcpy(&o.address_mode[1], &v, 4); }},
        {"options.address_mode[2]", [](auto &o) { const uint32_t v = 9; std::memcpy(&o.address_mode[2], &v, 4); }},
        {"options.filter_mode", [](auto &o) { const uint32_t v = 2; std::memcpy(&o.filter_mode, &v, 4); }},
        {"options.mipmap_filter_mode", [](auto &o) { const uint32_t v = 3; std::memcpy(&o.mipmap_filter_mode, &v, 4); }},
        {"options.read_mode", [](auto &o) { const uint32_t v = 2; std::memcpy(&o.read_mode, &v, 4); }},
        {"options.normalized_coords", [](auto &o) { o.normalized_coords = 2; }},
        {"options.srgb", [](auto &o) { o.srgb = 5; }},
        {"options.disable_trilinear_optimization", [](auto &o) { o.disable_trilinear_optimization = 2; }},
        {"options.seamless_cubemap", [](auto &o) { o.seamless_cubemap = 0xffffffffu; }},
        {"options.max_anisotropy", [](auto &o) { o.max_anisotropy = 17; }},
        {"options.mipmap_level_bias", [](auto &o) { o.mipmap_level_bias = std::numeric_limits<float>::quiet_NaN(); }},
        {"options.min_mipmap_level_clamp", [](auto &o) { o.min_mipmap_level_clamp = -std::numeric_limits<float>::infinity(); }},
        {"options.max_mipmap_level_clamp", [](auto &o) { o.max_mipmap_level_clamp = std::numeric_limits<float>::infinity(); }},
        {"options.border_color[2]", [](auto &o) { o.border_color[2] = std::numeric_limits<float>::quiet_NaN(); }},
    };
    for (const Row &row : rows) {
        SCOPED_TRACE(row.named);
        cucore_texture_object_options_t o = CUCORE_TEXTURE_OBJECT_OPTIONS_INIT;
        row.change(o);
        expect_texture(resource_, &o, row.named);
    }
    // Retain/release pairs and NULL releases of the four types.
    EXPECT_EQ(cucore_opaque_array_retain(a_), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_opaque_array_release(a_), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_mipmapped_array_retain(m_), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_mipmapped_array_release(m_), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_texture_object_retain(t_), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_texture_object_release(t_), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_surface_object_retain(s_obj_), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_surface_object_release(s_obj_), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_opaque_array_release(nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_mipmapped_array_release(nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_texture_object_release(nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_surface_object_release(nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(fake::calls(), 0);
}

// System information and checkpointing (issue 16): NULL outs before any NVML or driver call.
TEST_F(ArgumentTest, SystemAndCheckpointNullOuts) {
    fake::nvml::install(2);
    cucore_system_device_t *sd = nullptr;
    ASSERT_EQ(cucore_system_device_get(0, &sd), CUCORE_SUCCESS) << message();
    fake::nvml::reset_calls();
    unsigned u = 0;
    expect(cucore_system_cuda_driver_version(nullptr), "cucore_system_cuda_driver_version", "'version'");
    expect(cucore_system_device_count(nullptr), "cucore_system_device_count", "'count'");
    expect(cucore_system_device_get(0, nullptr), "cucore_system_device_get", "'device'");
    expect(cucore_system_device_get_by_uuid("GPU-x", nullptr), "cucore_system_device_get_by_uuid", "'device'");
    expect(cucore_system_device_get_by_pci_bus_id("01:00.0", nullptr), "cucore_system_device_get_by_pci_bus_id",
           "'device'");
    expect(cucore_system_device_get_for_device(d_, nullptr), "cucore_system_device_get_for_device",
           "'system_device'");
    expect(cucore_system_device_to_device(sd, nullptr), "cucore_system_device_to_device", "'cuda_device'");
    expect(cucore_system_device_handle(sd, nullptr), "cucore_system_device_handle", "'nvml_device'");
    expect(cucore_system_device_index(sd, nullptr), "cucore_system_device_index", "'index'");
    expect(cucore_system_device_name(sd, nullptr), "cucore_system_device_name", "'name'");
    expect(cucore_system_device_uuid(sd, nullptr), "cucore_system_device_uuid", "'uuid'");
    expect(cucore_system_device_pci_bus_id(sd, nullptr), "cucore_system_device_pci_bus_id", "'pci_bus_id'");
    expect(cucore_system_device_pci_info(sd, nullptr), "cucore_system_device_pci_info", "'info'");
    expect(cucore_system_device_memory_info(sd, nullptr), "cucore_system_device_memory_info", "'info'");
    expect(cucore_system_device_utilization(sd, nullptr, &u), "cucore_system_device_utilization", "'gpu_percent'");
    expect(cucore_system_device_utilization(sd, &u, nullptr), "cucore_system_device_utilization",
           "'memory_percent'");
    expect(cucore_system_device_temperature(sd, nullptr), "cucore_system_device_temperature", "'celsius'");
    expect(cucore_system_device_power_usage(sd, nullptr), "cucore_system_device_power_usage", "'milliwatts'");
    expect(cucore_system_device_power_limit(sd, nullptr), "cucore_system_device_power_limit", "'milliwatts'");
    expect(cucore_system_device_clock(sd, CUCORE_SYSTEM_CLOCK_SM, nullptr), "cucore_system_device_clock", "'mhz'");
    expect(cucore_system_device_max_clock(sd, CUCORE_SYSTEM_CLOCK_SM, nullptr), "cucore_system_device_max_clock",
           "'mhz'");
    expect(cucore_system_device_clock(sd, static_cast<cucore_system_clock_t>(5), &u), "cucore_system_device_clock",
           "'clock' (5)");
    expect(cucore_system_device_compute_mode(sd, nullptr), "cucore_system_device_compute_mode", "'mode'");
    expect(cucore_system_device_processes(sd, nullptr, nullptr, 0, nullptr), "cucore_system_device_processes",
           "'count'");
    char buffer[8];
    expect(cucore_system_driver_version(nullptr, sizeof buffer, nullptr), "cucore_system_driver_version",
           "'buffer'");
    expect(cucore_system_nvml_version(nullptr, sizeof buffer, nullptr), "cucore_system_nvml_version", "'buffer'");
    // System event sets (issue 17).
    expect(cucore_system_register_events(CUCORE_SYSTEM_EVENT_GPU_DRIVER_BIND, nullptr),
           "cucore_system_register_events", "'event_set'");
    expect(cucore_system_register_events(0, nullptr), "cucore_system_register_events", "'event_set'");
    cucore_system_event_set_t *es = nullptr;
    ASSERT_EQ(cucore_system_register_events(CUCORE_SYSTEM_EVENT_GPU_DRIVER_BIND, &es), CUCORE_SUCCESS) << message();
    fake::nvml::reset_calls();
    uint64_t types[1];
    uint32_t gpus[1];
    size_t n = 0;
    expect(cucore_system_event_set_wait(es, 0, types, gpus, 1, nullptr), "cucore_system_event_set_wait", "'count'");
    expect(cucore_system_event_set_wait(es, 0, nullptr, gpus, 1, &n), "cucore_system_event_set_wait",
           "'event_types'");
    expect(cucore_system_event_set_wait(es, 0, types, nullptr, 1, &n), "cucore_system_event_set_wait", "'gpu_ids'");
    expect(cucore_system_event_set_wait(es, 0, types, gpus, 0, &n), "cucore_system_event_set_wait",
           "'capacity' (0)");
    EXPECT_EQ(fake::nvml::calls(), 0) << "arguments are checked before any NVML call";
    cucore_system_event_set_release(es);
    cucore_system_device_release(sd);
    fake::nvml::uninstall();
    expect(cucore_process_get_state(1, nullptr), "cucore_process_get_state", "'state'");
    expect(cucore_process_restore_thread_id(1, nullptr), "cucore_process_restore_thread_id", "'thread_id'");
    cucore_process_lock_options_t o = CUCORE_PROCESS_LOCK_OPTIONS_INIT;
    o.struct_size = 0;
    expect(cucore_process_lock(1, &o), "cucore_process_lock", "'options'");
    expect(cucore_process_checkpoint(-1), "cucore_process_checkpoint", "'pid'");
    expect(cucore_process_restore(1, nullptr, 2), "cucore_process_restore", "'mappings'");
    expect(cucore_process_unlock(0), "cucore_process_unlock", "'pid'");
}

// TensorMap descriptors: NULL outs and inputs, bad struct sizes (the rules themselves: tensor_map_test.cpp).
TEST_F(ArgumentTest, TensorMapNullPointersAndStructSizes) {
    cucore_buffer_t *b = nullptr;  // wrapped memory: no driver call
    ASSERT_EQ(cucore_buffer_from_handle(0x10000, 256, d_, nullptr, nullptr, &b), CUCORE_SUCCESS) << message();
    cucore_tensor_map_layout_t l = CUCORE_TENSOR_MAP_LAYOUT_INIT;
    l.data_type = CUCORE_TENSOR_MAP_DATA_TYPE_UINT8;
    l.rank = 1;
    l.global_dim[0] = 256;
    const uint32_t box[1] = {16};
    const int32_t corner[3] = {};
    cucore_tensor_map_descriptor_t *d = nullptr;
    {
        fake::Uncounted setup;
        ASSERT_EQ(cucore_tensor_map_descriptor_create_tiled(b, 0, &l, box, nullptr, &d), CUCORE_SUCCESS) << message();
    }
    fake::reset_calls();
    expect(cucore_tensor_map_descriptor_create_tiled(b, 0, &l, box, nullptr, nullptr),
           "cucore_tensor_map_descriptor_create_tiled", "'descriptor'");
    cucore_tensor_map_descriptor_t *out = reinterpret_cast<cucore_tensor_map_descriptor_t *>(0x1);
    expect(cucore_tensor_map_descriptor_create_tiled(b, 0, nullptr, box, nullptr, &out),
           "cucore_tensor_map_descriptor_create_tiled", "'layout'");
    EXPECT_EQ(out, nullptr);
    expect(cucore_tensor_map_descriptor_create_tiled(b, 0, &l, nullptr, nullptr, &out),
           "cucore_tensor_map_descriptor_create_tiled", "'box_dim'");
    expect(cucore_tensor_map_descriptor_create_im2col(b, 0, &l, corner, corner, 1, 1, nullptr, nullptr),
           "cucore_tensor_map_descriptor_create_im2col", "'descriptor'");
    expect(cucore_tensor_map_descriptor_create_im2col(b, 0, &l, corner, nullptr, 1, 1, nullptr, &out),
           "cucore_tensor_map_descriptor_create_im2col", "'pixel_box_upper_corner'");
    expect(cucore_tensor_map_descriptor_create_im2col_wide(b, 0, &l, 0, 0, 1, 1, nullptr, nullptr),
           "cucore_tensor_map_descriptor_create_im2col_wide", "'descriptor'");
    expect(cucore_tensor_map_descriptor_create_im2col_wide(b, 0, nullptr, 0, 0, 1, 1, nullptr, &out),
           "cucore_tensor_map_descriptor_create_im2col_wide", "'layout'");
    expect(cucore_tensor_map_descriptor_data(d, nullptr), "cucore_tensor_map_descriptor_data", "'data'");
    expect(cucore_tensor_map_descriptor_copy(d, nullptr, 128), "cucore_tensor_map_descriptor_copy", "'bytes'");
    expect(cucore_tensor_map_descriptor_address(d, nullptr), "cucore_tensor_map_descriptor_address", "'address'");
    expect(cucore_tensor_map_descriptor_kind(d, nullptr), "cucore_tensor_map_descriptor_kind", "'kind'");
    // Struct sizes: too small, ending inside a field, and a larger struct with unknown fields set.
    cucore_tensor_map_layout_t small = l;
    small.struct_size = 2;
    expect(cucore_tensor_map_descriptor_create_tiled(b, 0, &small, box, nullptr, &out),
           "cucore_tensor_map_descriptor_create_tiled", "struct_size");
    small.struct_size = 10;
    expect(cucore_tensor_map_descriptor_create_tiled(b, 0, &small, box, nullptr, &out),
           "cucore_tensor_map_descriptor_create_tiled", "ends inside its field");
    struct {
        cucore_tensor_map_descriptor_options_t o;
        uint32_t extra;
    } larger{};
    larger.o = CUCORE_TENSOR_MAP_DESCRIPTOR_OPTIONS_INIT;
    larger.o.struct_size = sizeof larger;
    larger.extra = 1;
    expect(cucore_tensor_map_descriptor_create_tiled(b, 0, &l, box, &larger.o, &out),
           "cucore_tensor_map_descriptor_create_tiled", "does not know", CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(cucore_tensor_map_descriptor_retain(d), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_tensor_map_descriptor_release(d), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_tensor_map_descriptor_release(nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(fake::calls(), 0);
    cucore_tensor_map_descriptor_release(d);
    cucore_buffer_release(b);
}

// Device resources and green contexts (device_resources.h, context.h).
TEST_F(ArgumentTest, DeviceResourcesNullOutsAndBadOptions) {
    cucore_sm_resource_t *sm = nullptr;
    ASSERT_EQ(cucore_sm_resource_of_device(d_, &sm), CUCORE_SUCCESS) << message();
    fake::set_driver_version(13010);
    cucore_workqueue_resource_t *wq = nullptr;
    ASSERT_EQ(cucore_workqueue_resource_of_device(d_, &wq), CUCORE_SUCCESS) << message();
    fake::reset_calls();
    expect(cucore_sm_resource_of_device(d_, nullptr), "cucore_sm_resource_of_device", "'resource'");
    expect(cucore_sm_resource_of_context(c_, nullptr), "cucore_sm_resource_of_context", "'resource'");
    expect(cucore_sm_resource_of_stream(s_, nullptr), "cucore_sm_resource_of_stream", "'resource'");
    expect(cucore_sm_resource_info(sm, nullptr), "cucore_sm_resource_info", "'info'");
    cucore_sm_resource_info_t info = CUCORE_SM_RESOURCE_INFO_INIT;
    info.struct_size = 0;
    expect(cucore_sm_resource_info(sm, &info), "cucore_sm_resource_info", "struct_size");
    cucore_sm_resource_t *groups[2] = {nullptr, nullptr};
    cucore_sm_resource_t *rest = nullptr;
    uint32_t count = 9;
    expect(cucore_sm_resource_split(sm, nullptr, groups, 2, nullptr, &rest), "cucore_sm_resource_split", "'group_count'");
    expect(cucore_sm_resource_split(sm, nullptr, nullptr, 2, &count, &rest), "cucore_sm_resource_split", "'groups'");
    expect(cucore_sm_resource_split(sm, nullptr, groups, 0, &count, &rest), "cucore_sm_resource_split", "'capacity'");
    cucore_sm_resource_split_options_t split = CUCORE_SM_RESOURCE_SPLIT_OPTIONS_INIT;
    split.flags = 0x10;
    expect(cucore_sm_resource_split(sm, &split, groups, 2, &count, &rest), "cucore_sm_resource_split", "options.flags");
    EXPECT_EQ(count, 0u);
    EXPECT_EQ(rest, nullptr);
    split.flags = 0;
    split.struct_size = 2;
    expect(cucore_sm_resource_split(sm, &split, groups, 2, &count, &rest), "cucore_sm_resource_split", "struct_size");
    expect(cucore_sm_resource_split_dry_run(sm, nullptr, nullptr), "cucore_sm_resource_split_dry_run", "'info'");
    cucore_sm_resource_split_info_t planned = CUCORE_SM_RESOURCE_SPLIT_INFO_INIT;
    expect(cucore_sm_resource_split_dry_run(sm, &split, &planned), "cucore_sm_resource_split_dry_run", "struct_size");
    expect(cucore_workqueue_resource_of_device(d_, nullptr), "cucore_workqueue_resource_of_device", "'resource'");
    expect(cucore_workqueue_resource_of_context(c_, nullptr), "cucore_workqueue_resource_of_context", "'resource'");
    expect(cucore_workqueue_resource_of_stream(s_, nullptr), "cucore_workqueue_resource_of_stream", "'resource'");
    expect(cucore_workqueue_resource_info(wq, nullptr), "cucore_workqueue_resource_info", "'info'");
    expect(cucore_workqueue_resource_device(wq, nullptr), "cucore_workqueue_resource_device", "'device'");
    cucore_workqueue_resource_options_t configure = CUCORE_WORKQUEUE_RESOURCE_OPTIONS_INIT;
    const int32_t bad_scope = 3;
    std::memcpy(&configure.sharing_scope, &bad_scope, sizeof bad_scope);
    expect(cucore_workqueue_resource_configure(wq, &configure), "cucore_workqueue_resource_configure",
           "options.sharing_scope");
    cucore_context_t *context = reinterpret_cast<cucore_context_t *>(0x1);
    cucore_context_options_t options = CUCORE_CONTEXT_OPTIONS_INIT;
    expect(cucore_context_create(d_, nullptr, &context), "cucore_context_create", "'options'");
    EXPECT_EQ(context, nullptr);
    options.sm_resource_count = 1;
    expect(cucore_context_create(d_, &options, &context), "cucore_context_create", "options.sm_resources");
    options.sm_resource_count = 0;
    options.workqueue_resource_count = 2;
    expect(cucore_context_create(d_, &options, &context), "cucore_context_create", "options.workqueue_resources");
    options.workqueue_resource_count = 0;
    options.reserved = 1;
    expect(cucore_context_create(d_, &options, &context), "cucore_context_create", "options.reserved");
    options.reserved = 0;
    expect(cucore_context_create(d_, &options, &context), "cucore_context_create", "names no resource");
    options.sm_resource_count = 1;
    options.sm_resources = &sm;
    expect(cucore_context_create(d_, &options, nullptr), "cucore_context_create", "'context'");
    expect(cucore_context_is_green(c_, nullptr), "cucore_context_is_green", "'is_green'");
    expect(cucore_context_green_handle(c_, nullptr), "cucore_context_green_handle", "'cu_green_context'");
    cucore_workqueue_resource_release(wq);
    cucore_sm_resource_release(sm);
}

}  // namespace
