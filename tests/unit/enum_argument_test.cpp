// Every C ABI function that takes an enum parameter or an options/descriptor
// struct with an enum field, given values no enumerator has (negative ones,
// which C allows and C++ cannot hold in these enums): each is refused as
// INVALID_ARGUMENT naming the argument and its value (the status and object
// type names say "unknown"), with no undefined behaviour, which the
// UndefinedBehaviorSanitizer build (-fno-sanitize-recover) would abort on
// (issue 12: 15 functions aborted there). The enum parameters are passed from
// C (enum_argument_calls.c); struct fields are written as bytes.
#include <cstring>
#include <string>
#include <vector>

#include "compile_support.hpp"
#include "enum_argument_calls.h"
#include "fake_compilers.hpp"

namespace {

constexpr int32_t kBad[] = {-1, INT32_MIN};

// Writes `raw` into an enum field as its bytes (never a C++ enum value out of range).
template <class Enum>
void set_raw(Enum &field, int32_t raw) {
    static_assert(sizeof(Enum) == sizeof(raw));
    std::memcpy(&field, &raw, sizeof raw);
}

class EnumArgumentTest : public CompileFixture {
  protected:
    void SetUp() override {
        CompileFixture::SetUp();
        compilers_ = std::make_unique<fake_compilers::Installed>();
        d0_ = device(0);
        d1_ = device(1);
        ASSERT_EQ(cucore_stream_create(d0_, nullptr, &s0_), CUCORE_SUCCESS) << message();
    }
    void TearDown() override {
        cucore_stream_release(s0_);
        cucore_device_release(d1_);
        cucore_device_release(d0_);
        compilers_.reset();
        CompileFixture::TearDown();
    }
    // `status` is INVALID_ARGUMENT and the message names `argument` and, when given, the value.
    static void expect_refused(cucore_status_t status, const std::string &argument, int32_t raw,
                               bool names_value = true) {
        SCOPED_TRACE(argument + " = " + std::to_string(raw));
        EXPECT_EQ(status, CUCORE_ERROR_INVALID_ARGUMENT) << message();
        EXPECT_NE(message().find("argument '" + argument + "'"), std::string::npos) << message();
        if (names_value) {
            EXPECT_NE(message().find("(" + std::to_string(raw) + ")"), std::string::npos) << message();
        }
    }

    cucore_device_t *d0_ = nullptr, *d1_ = nullptr;
    cucore_stream_t *s0_ = nullptr;
    std::unique_ptr<fake_compilers::Installed> compilers_;
};

TEST_F(EnumArgumentTest, StatusAndObjectTypeNamesOfUnknownValues) {
    for (int32_t raw : kBad) {
        EXPECT_STREQ(enum_call_status_string(raw), "CUCORE_STATUS_UNKNOWN");
        EXPECT_STREQ(enum_call_object_type_name(raw), "unknown object type");
        size_t count = 7;
        expect_refused(enum_call_live_object_count(raw, &count), "type", raw);
    }
    // A release error reported with a value that names no status is counted, as INTERNAL.
    expects_release_errors_ = true;
    struct Seen {
        std::vector<cucore_status_t> statuses;
        static void record(cucore_status_t status, int, const char *, void *self) {
            static_cast<Seen *>(self)->statuses.push_back(status);
        }
    } seen;
    const uint64_t before = release_errors();
    cucore_set_release_error_handler(&Seen::record, &seen);
    for (int32_t raw : kBad) enum_call_report_release_error(raw, "a binding's scoped object");
    cucore_set_release_error_handler(nullptr, nullptr);
    EXPECT_EQ(release_errors(), before + 2);
    EXPECT_EQ(seen.statuses, (std::vector<cucore_status_t>{CUCORE_ERROR_INTERNAL, CUCORE_ERROR_INTERNAL}));
}

TEST_F(EnumArgumentTest, DeviceAndKernelAttributes) {
    fake::KernelSpec spec;
    cucore_kernel_t *k = nullptr;
    ASSERT_EQ(cucore_kernel_from_handle(fake::make_kernel(spec), nullptr, nullptr, &k), CUCORE_SUCCESS) << message();
    for (int32_t raw : kBad) {
        int value = 0;
        expect_refused(enum_call_device_attribute(d0_, raw, &value), "attribute", raw);
        expect_refused(enum_call_kernel_attribute(k, d0_, raw, &value), "attribute", raw);
        expect_refused(enum_call_kernel_set_attribute(k, d0_, raw, 1), "attribute", raw);
    }
    cucore_kernel_release(k);
}

TEST_F(EnumArgumentTest, PoolAttributesAndPeerAccess) {
    cucore_memory_resource_t *pool = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_create(d0_, nullptr, &pool), CUCORE_SUCCESS) << message();
    for (int32_t raw : kBad) {
        uint64_t value = 0;
        expect_refused(enum_call_pool_attribute(pool, raw, &value), "attribute", raw);
        expect_refused(enum_call_set_pool_attribute(pool, raw, 0), "attribute", raw);
        expect_refused(enum_call_set_peer_access(pool, d1_, raw), "access", raw);
    }
    cucore_memory_resource_release(pool);
}

TEST_F(EnumArgumentTest, ManagedMemoryAdviceAndLocations) {
    cucore_memory_resource_t *managed = nullptr;
    ASSERT_EQ(cucore_managed_memory_resource_create(d0_, nullptr, &managed), CUCORE_SUCCESS) << message();
    cucore_buffer_t *b = nullptr;
    ASSERT_EQ(cucore_memory_resource_allocate(managed, 4096, s0_, &b), CUCORE_SUCCESS) << message();
    const cucore_location_t device0 = {CUCORE_LOCATION_DEVICE, 0};
    for (int32_t raw : kBad) {
        expect_refused(enum_call_buffer_advise(b, raw, device0), "advice", raw);
        cucore_location_t bad = device0;
        set_raw(bad.type, raw);
        expect_refused(enum_call_buffer_advise(b, CUCORE_ADVICE_SET_PREFERRED_LOCATION, bad), "location", raw);
        int accessed = 0;
        expect_refused(cucore_buffer_is_accessed_by(b, bad, &accessed), "location", raw, false);
        expect_refused(cucore_buffer_prefetch(b, bad, s0_), "location", raw);
        expect_refused(cucore_buffer_discard(b, &bad, s0_), "prefetch_location", raw);

        cucore_managed_memory_resource_options_t o = CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
        set_raw(o.preferred_location.type, raw);
        cucore_memory_resource_t *r = reinterpret_cast<cucore_memory_resource_t *>(0x1);
        expect_refused(cucore_managed_memory_resource_create(d0_, &o, &r), "options.preferred_location", raw);
        EXPECT_EQ(r, nullptr);
    }
    cucore_buffer_release(b);
    cucore_memory_resource_release(managed);
}

TEST_F(EnumArgumentTest, VirtualMemoryOptions) {
    for (int32_t raw : kBad) {
        cucore_memory_resource_t *r = reinterpret_cast<cucore_memory_resource_t *>(0x1);
        cucore_virtual_memory_resource_options_t o = CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT;
        set_raw(o.self_access, raw);
        expect_refused(cucore_virtual_memory_resource_create(d0_, &o, &r), "options.self_access", raw);
        EXPECT_EQ(r, nullptr);
        o = CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT;
        set_raw(o.location_type, raw);
        expect_refused(cucore_virtual_memory_resource_create(d0_, &o, &r), "options.location_type", raw, false);
        EXPECT_EQ(r, nullptr);
    }
}

TEST_F(EnumArgumentTest, ProgramsObjectCodeAndCaches) {
    cucore_program_t *p = program("kernel k\n");
    ASSERT_NE(p, nullptr);
    const std::string bytes = fake::image({"a"});
    for (int32_t raw : kBad) {
        cucore_program_t *q = reinterpret_cast<cucore_program_t *>(0x1);
        expect_refused(enum_call_program_create("kernel k\n", raw, &q), "code_type", raw);
        EXPECT_EQ(q, nullptr);
        cucore_object_code_t *o = reinterpret_cast<cucore_object_code_t *>(0x1);
        expect_refused(enum_call_program_compile(p, raw, &o), "target", raw);
        EXPECT_EQ(o, nullptr);
        uint8_t key[32];
        expect_refused(enum_call_program_cache_key(p, raw, key), "target", raw);
        expect_refused(enum_call_object_code_create(bytes.data(), bytes.size(), raw, &o), "code_type", raw);
        expect_refused(enum_call_object_code_create_from_file("/nonexistent/cucore-test.cubin", raw, &o), "code_type",
                       raw);
        int version = 0;
        expect_refused(enum_call_compiler_version(raw, &version), "backend", raw);

        using Toggle = cucore_toggle_t cucore_program_options_t::*;
        for (auto [field, name] : std::vector<std::pair<Toggle, const char *>>{
                 {&cucore_program_options_t::device_code_optimize, "options.device_code_optimize"},
                 {&cucore_program_options_t::ftz, "options.ftz"},
                 {&cucore_program_options_t::prec_sqrt, "options.prec_sqrt"},
                 {&cucore_program_options_t::prec_div, "options.prec_div"},
                 {&cucore_program_options_t::fma, "options.fma"}}) {
            cucore_program_options_t options = CUCORE_PROGRAM_OPTIONS_INIT;
            set_raw(options.*field, raw);
            q = reinterpret_cast<cucore_program_t *>(0x1);
            expect_refused(cucore_program_create("kernel k\n", 0, CUCORE_CODE_CXX, &options, &q), name, raw);
            EXPECT_EQ(q, nullptr);
        }
    }
    cucore_program_release(p);
}

TEST_F(EnumArgumentTest, LinkerTargetAndOptions) {
    const std::string bytes = fake::image({"a"});
    cucore_object_code_t *ptx = nullptr;
    ASSERT_EQ(cucore_object_code_create(bytes.data(), bytes.size(), CUCORE_CODE_PTX, nullptr, &ptx), CUCORE_SUCCESS)
        << message();
    cucore_linker_options_t good = CUCORE_LINKER_OPTIONS_INIT;
    good.arch = "sm_90";
    cucore_linker_t *l = nullptr;
    ASSERT_EQ(cucore_linker_create(&ptx, 1, &good, &l), CUCORE_SUCCESS) << message();
    for (int32_t raw : kBad) {
        cucore_object_code_t *o = reinterpret_cast<cucore_object_code_t *>(0x1);
        expect_refused(enum_call_linker_link(l, raw, &o), "target", raw);
        EXPECT_EQ(o, nullptr);

        cucore_linker_options_t options = good;
        set_raw(options.backend, raw);
        cucore_linker_t *bad = reinterpret_cast<cucore_linker_t *>(0x1);
        expect_refused(cucore_linker_create(&ptx, 1, &options, &bad), "options.backend", raw);
        EXPECT_EQ(bad, nullptr);
        using Toggle = cucore_toggle_t cucore_linker_options_t::*;
        for (auto [field, name] : std::vector<std::pair<Toggle, const char *>>{
                 {&cucore_linker_options_t::ftz, "options.ftz"},
                 {&cucore_linker_options_t::prec_div, "options.prec_div"},
                 {&cucore_linker_options_t::prec_sqrt, "options.prec_sqrt"},
                 {&cucore_linker_options_t::fma, "options.fma"}}) {
            options = good;
            set_raw(options.*field, raw);
            bad = reinterpret_cast<cucore_linker_t *>(0x1);
            expect_refused(cucore_linker_create(&ptx, 1, &options, &bad), name, raw);
            EXPECT_EQ(bad, nullptr);
        }
    }
    cucore_linker_release(l);
    cucore_object_code_release(ptx);
}

// A DLPack producer's device type is an enum of DLPack's header (which has more members than ours): any value is
// read as an int; unknown ones are NOT_SUPPORTED, as documented, and the tensor stays the caller's.
TEST_F(EnumArgumentTest, DlpackDeviceTypes) {
    float data[4] = {1, 2, 3, 4};
    int64_t shape[1] = {4};
    for (int32_t raw : {-1, INT32_MIN, 16, 1000}) {
        DLManagedTensorVersioned t{};
        t.version = DLPackVersion{1, 0};
        t.dl_tensor.data = data;
        set_raw(t.dl_tensor.device.device_type, raw);
        t.dl_tensor.ndim = 1;
        t.dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
        t.dl_tensor.shape = shape;
        cucore_buffer_t *b = reinterpret_cast<cucore_buffer_t *>(0x1);
        EXPECT_EQ(cucore_dlpack_import(&t, &b), CUCORE_ERROR_NOT_SUPPORTED) << raw << ": " << message();
        EXPECT_EQ(b, nullptr);
        EXPECT_NE(message().find("device_type is " + std::to_string(raw)), std::string::npos) << message();
    }
}

TEST_F(EnumArgumentTest, GraphsBuildersAndGraphMemory) {
    cucore_graph_definition_t *g = nullptr;
    ASSERT_EQ(cucore_graph_definition_create(d0_, &g), CUCORE_SUCCESS) << message();
    uint64_t condition = 0;
    ASSERT_EQ(cucore_graph_definition_create_condition(g, 0, 0, &condition), CUCORE_SUCCESS) << message();
    cucore_graph_builder_t *builder = nullptr;
    ASSERT_EQ(cucore_graph_builder_create(s0_, &builder), CUCORE_SUCCESS) << message();
    cucore_memory_resource_t *graph_memory = nullptr;
    ASSERT_EQ(cucore_graph_memory_resource_create(d0_, &graph_memory), CUCORE_SUCCESS) << message();
    for (int32_t raw : kBad) {
        expect_refused(enum_call_graph_builder_begin_building(builder, raw), "mode", raw);
        cucore_graph_definition_t *body = nullptr;
        cucore_graph_node_t *node = nullptr;
        expect_refused(enum_call_graph_definition_add_conditional(g, condition, raw, &body, &node), "type", raw);
        EXPECT_EQ(node, nullptr);
        uint64_t value = 0;
        expect_refused(enum_call_graph_memory_resource_attribute(graph_memory, raw, &value), "attribute", raw);
        expect_refused(enum_call_graph_memory_resource_reset_attribute(graph_memory, raw), "attribute", raw);
        cucore_graph_alloc_options_t o = CUCORE_GRAPH_ALLOC_OPTIONS_INIT;
        set_raw(o.memory_type, raw);
        uint64_t address = 1;
        node = reinterpret_cast<cucore_graph_node_t *>(0x1);
        expect_refused(cucore_graph_definition_add_alloc(g, nullptr, 0, 64, &o, &node, &address),
                       "options.memory_type", raw);
        EXPECT_EQ(node, nullptr);
        EXPECT_EQ(address, 0u);
    }
    ASSERT_EQ(cucore_graph_builder_begin_building(builder, CUCORE_CAPTURE_MODE_DEFAULT), CUCORE_SUCCESS) << message();
    uint64_t captured_condition = 0;
    ASSERT_EQ(cucore_graph_builder_create_condition(builder, 0, 0, &captured_condition), CUCORE_SUCCESS) << message();
    for (int32_t raw : kBad) {
        cucore_graph_builder_t *body = nullptr;
        expect_refused(enum_call_graph_builder_add_conditional(builder, captured_condition, raw, &body), "type", raw);
        EXPECT_EQ(body, nullptr);
    }
    ASSERT_EQ(cucore_graph_builder_end_building(builder), CUCORE_SUCCESS) << message();
    cucore_memory_resource_release(graph_memory);
    cucore_graph_builder_release(builder);
    cucore_graph_definition_release(g);
}

}  // namespace
