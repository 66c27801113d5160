// Device resources and green contexts against the fake driver (16 SMs per
// device, minimum partition 2, alignment 2; green_contexts.cpp): reading and
// splitting SM resources, the rules of a split named before the driver call,
// green contexts and their streams, events, allocations and launches,
// release in any order, workqueue resources (NOT_SUPPORTED before CUDA 13.1),
// every create path under fault injection, and the C++ façade.
#include <cucore.hpp>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "fault_injection_support.hpp"

namespace {

class GreenContextTest : public FakeDriverTest {
  protected:
    void SetUp() override {
        FakeDriverTest::SetUp();
        greens_before_ = fake::green_contexts();
        d0_ = device(0);
        ASSERT_EQ(cucore_sm_resource_of_device(d0_, &all_), CUCORE_SUCCESS) << message();
    }
    void TearDown() override {
        cucore_sm_resource_release(all_);
        cucore_device_release(d0_);
        fake::set_current_context(nullptr);
        EXPECT_EQ(fake::green_contexts(), greens_before_) << "green contexts leaked";
        EXPECT_EQ(fake::green_context_violations(), 0) << "a green context went before its streams or events";
        EXPECT_EQ(live(CUCORE_OBJECT_SM_RESOURCE), 0u) << "leaked SM resources";
        EXPECT_EQ(live(CUCORE_OBJECT_WORKQUEUE_RESOURCE), 0u) << "leaked workqueue resources";
        FakeDriverTest::TearDown();
    }
    static cucore_sm_resource_info_t info(const cucore_sm_resource_t *resource) {
        cucore_sm_resource_info_t out = CUCORE_SM_RESOURCE_INFO_INIT;
        EXPECT_EQ(cucore_sm_resource_info(resource, &out), CUCORE_SUCCESS) << message();
        return out;
    }
    static cucore_sm_resource_split_options_t split_options(uint32_t sm_count, uint32_t group_count,
                                                            uint32_t flags = 0) {
        cucore_sm_resource_split_options_t o = CUCORE_SM_RESOURCE_SPLIT_OPTIONS_INIT;
        o.sm_count = sm_count;
        o.group_count = group_count;
        o.flags = flags;
        return o;
    }
    // Splits `all_` into groups of `sm_count` (exactly `group_count`); the groups and remainder are the caller's.
    std::vector<cucore_sm_resource_t *> split(uint32_t sm_count, uint32_t group_count,
                                              cucore_sm_resource_t **remainder) {
        const cucore_sm_resource_split_options_t o = split_options(sm_count, group_count);
        std::vector<cucore_sm_resource_t *> groups(group_count, nullptr);
        uint32_t made = 0;
        EXPECT_EQ(cucore_sm_resource_split(all_, &o, groups.data(), group_count, &made, remainder), CUCORE_SUCCESS)
            << message();
        EXPECT_EQ(made, group_count);
        return groups;
    }
    static cucore_context_t *green(cucore_device_t *device, std::vector<cucore_sm_resource_t *> sm,
                                   std::vector<cucore_workqueue_resource_t *> workqueues = {}) {
        cucore_context_options_t o = CUCORE_CONTEXT_OPTIONS_INIT;
        o.sm_resource_count = static_cast<uint32_t>(sm.size());
        o.sm_resources = sm.data();
        o.workqueue_resource_count = static_cast<uint32_t>(workqueues.size());
        o.workqueue_resources = workqueues.data();
        cucore_context_t *context = nullptr;
        EXPECT_EQ(cucore_context_create(device, &o, &context), CUCORE_SUCCESS) << message();
        return context;
    }
    static void release_all(const std::vector<cucore_sm_resource_t *> &resources) {
        for (cucore_sm_resource_t *r : resources) cucore_sm_resource_release(r);
    }
    void expect_invalid(cucore_status_t status, const char *function, const char *rule) {
        EXPECT_EQ(status, CUCORE_ERROR_INVALID_ARGUMENT) << message();
        EXPECT_EQ(message().rfind(std::string(function) + ":", 0), 0u) << message();
        EXPECT_NE(message().find(rule), std::string::npos) << message();
    }

    int greens_before_ = 0;
    cucore_device_t *d0_ = nullptr;
    cucore_sm_resource_t *all_ = nullptr;
};

TEST_F(GreenContextTest, ADeviceReportsItsSms) {
    const cucore_sm_resource_info_t i = info(all_);
    EXPECT_EQ(i.sm_count, 16u);
    EXPECT_EQ(i.min_partition_size, 2u);
    EXPECT_EQ(i.coscheduled_alignment, 2u);
    EXPECT_EQ(i.flags, 0u);
    // The primary context and its streams report the device's SMs.
    cucore_context_t *primary = nullptr;
    cucore_stream_t *stream = nullptr;
    cucore_sm_resource_t *of_context = nullptr, *of_stream = nullptr;
    ASSERT_EQ(cucore_context_get_primary(d0_, &primary), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_stream_create(d0_, nullptr, &stream), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_sm_resource_of_context(primary, &of_context), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_sm_resource_of_stream(stream, &of_stream), CUCORE_SUCCESS) << message();
    EXPECT_EQ(info(of_context).sm_count, 16u);
    EXPECT_EQ(info(of_stream).sm_count, 16u);
    int is_green = 1;
    EXPECT_EQ(cucore_context_is_green(primary, &is_green), CUCORE_SUCCESS);
    EXPECT_EQ(is_green, 0);
    void *green_handle = &is_green;
    EXPECT_EQ(cucore_context_green_handle(primary, &green_handle), CUCORE_SUCCESS);
    EXPECT_EQ(green_handle, nullptr);
    // An older caller's smaller info struct gets the fields it has.
    cucore_sm_resource_info_t older = CUCORE_SM_RESOURCE_INFO_INIT;
    older.struct_size = offsetof(cucore_sm_resource_info_t, min_partition_size);
    ASSERT_EQ(cucore_sm_resource_info(all_, &older), CUCORE_SUCCESS);
    EXPECT_EQ(older.sm_count, 16u);
    EXPECT_EQ(older.min_partition_size, 0u);
    cucore_sm_resource_release(of_stream);
    cucore_sm_resource_release(of_context);
    cucore_stream_release(stream);
    cucore_context_release(primary);
}

TEST_F(GreenContextTest, SplitsMakeExactlyTheGroupsAskedFor) {
    cucore_sm_resource_t *rest = nullptr;
    std::vector<cucore_sm_resource_t *> groups = split(4, 3, &rest);
    for (cucore_sm_resource_t *g : groups) EXPECT_EQ(info(g).sm_count, 4u);
    EXPECT_EQ(info(rest).sm_count, 4u);
    // The dry run says the same and makes nothing.
    const size_t live_before = live(CUCORE_OBJECT_SM_RESOURCE);
    const cucore_sm_resource_split_options_t o = split_options(4, 3);
    cucore_sm_resource_split_info_t planned = CUCORE_SM_RESOURCE_SPLIT_INFO_INIT;
    ASSERT_EQ(cucore_sm_resource_split_dry_run(all_, &o, &planned), CUCORE_SUCCESS) << message();
    EXPECT_EQ(planned.group_count, 3u);
    EXPECT_EQ(planned.group_sm_count, 4u);
    EXPECT_EQ(planned.remainder_sm_count, 4u);
    EXPECT_EQ(live(CUCORE_OBJECT_SM_RESOURCE), live_before);
    cucore_sm_resource_release(rest);
    release_all(groups);
}

TEST_F(GreenContextTest, ZeroCountsMeanTheMinimumAndAsManyAsFit) {
    cucore_sm_resource_split_info_t planned = CUCORE_SM_RESOURCE_SPLIT_INFO_INIT;
    ASSERT_EQ(cucore_sm_resource_split_dry_run(all_, nullptr, &planned), CUCORE_SUCCESS) << message();
    EXPECT_EQ(planned.group_count, 8u);  // groups of the minimum partition, 2 SMs
    EXPECT_EQ(planned.group_sm_count, 2u);
    EXPECT_EQ(planned.remainder_sm_count, 0u);
    // As many as fit, up to the capacity: 3 of the 4 groups of 4, 4 SMs left.
    const cucore_sm_resource_split_options_t o = split_options(4, 0);
    cucore_sm_resource_t *groups[3] = {nullptr, nullptr, nullptr};
    cucore_sm_resource_t *rest = nullptr;
    uint32_t made = 0;
    ASSERT_EQ(cucore_sm_resource_split(all_, &o, groups, 3, &made, &rest), CUCORE_SUCCESS) << message();
    EXPECT_EQ(made, 3u);
    EXPECT_EQ(info(rest).sm_count, 4u);
    for (cucore_sm_resource_t *g : groups) cucore_sm_resource_release(g);
    cucore_sm_resource_release(rest);
    // Ignoring co-scheduling allows odd sizes: 5 groups of 3, 1 SM left.
    const cucore_sm_resource_split_options_t odd = split_options(3, 0, CUCORE_SM_SPLIT_IGNORE_SM_COSCHEDULING);
    ASSERT_EQ(cucore_sm_resource_split_dry_run(all_, &odd, &planned), CUCORE_SUCCESS) << message();
    EXPECT_EQ(planned.group_count, 5u);
    EXPECT_EQ(planned.group_sm_count, 3u);
    EXPECT_EQ(planned.remainder_sm_count, 1u);
}

TEST_F(GreenContextTest, BadSplitsNameTheRuleBeforeTheDriverIsAsked) {
    cucore_sm_resource_t *groups[8] = {};
    cucore_sm_resource_t *rest = nullptr;
    uint32_t made = 0;
    auto attempt = [&](cucore_sm_resource_split_options_t o, uint32_t capacity = 8) {
        fake::reset_calls();
        const cucore_status_t status = cucore_sm_resource_split(all_, &o, groups, capacity, &made, &rest);
        EXPECT_EQ(fake::calls(), 0) << "the rule is known before the driver call";
        EXPECT_EQ(made, 0u);
        EXPECT_EQ(rest, nullptr);
        return status;
    };
    expect_invalid(attempt(split_options(3, 1)), "cucore_sm_resource_split", "co-scheduled alignment (2 SMs)");
    expect_invalid(attempt(split_options(1, 1)), "cucore_sm_resource_split", "minimum partition size (2 SMs)");
    expect_invalid(attempt(split_options(18, 1)), "cucore_sm_resource_split", "more SMs than the resource has (16)");
    expect_invalid(attempt(split_options(4, 5)), "cucore_sm_resource_split", "need 20 SMs, more than the resource's 16");
    expect_invalid(attempt(split_options(2, 4), 3), "cucore_sm_resource_split", "argument 'capacity' (3)");
    fake::reset_calls();
    cucore_sm_resource_split_info_t planned = CUCORE_SM_RESOURCE_SPLIT_INFO_INIT;
    const cucore_sm_resource_split_options_t over = split_options(6, 3);
    expect_invalid(cucore_sm_resource_split_dry_run(all_, &over, &planned), "cucore_sm_resource_split_dry_run",
                   "need 18 SMs");
    EXPECT_EQ(planned.group_count, 0u);
    // A group of a split does not split again.
    cucore_sm_resource_t *remainder = nullptr;
    std::vector<cucore_sm_resource_t *> made_groups = split(4, 2, &remainder);
    const cucore_sm_resource_split_options_t o = split_options(2, 1);
    expect_invalid(cucore_sm_resource_split(made_groups[0], &o, groups, 8, &made, &rest), "cucore_sm_resource_split",
                   "a group of an earlier split");
    expect_invalid(cucore_sm_resource_split(remainder, &o, groups, 8, &made, &rest), "cucore_sm_resource_split",
                   "the remainder of an earlier split");
    cucore_sm_resource_release(remainder);
    release_all(made_groups);
}

TEST_F(GreenContextTest, AGreenContextRunsStreamsEventsAllocationsAndLaunches) {
    cucore_sm_resource_t *rest = nullptr;
    std::vector<cucore_sm_resource_t *> groups = split(4, 2, &rest);
    cucore_context_t *context = green(d0_, {groups[0]});
    ASSERT_NE(context, nullptr);
    EXPECT_EQ(fake::green_contexts(), greens_before_ + 1);
    int flag = 0;
    EXPECT_EQ(cucore_context_is_green(context, &flag), CUCORE_SUCCESS);
    EXPECT_EQ(flag, 1);
    EXPECT_EQ(cucore_context_is_primary(context, &flag), CUCORE_SUCCESS);
    EXPECT_EQ(flag, 0);
    void *cu_green = nullptr, *cu_context = nullptr;
    EXPECT_EQ(cucore_context_green_handle(context, &cu_green), CUCORE_SUCCESS);
    EXPECT_NE(cu_green, nullptr);
    EXPECT_EQ(cucore_context_handle(context, &cu_context), CUCORE_SUCCESS);
    CUcontext converted = nullptr;
    ASSERT_EQ(fake::table().cuCtxFromGreenCtx(&converted, static_cast<CUgreenCtx>(cu_green)), CUDA_SUCCESS);
    EXPECT_EQ(cu_context, converted) << "the context is the green context converted";
    cucore_device_t *of = nullptr;
    ASSERT_EQ(cucore_context_device(context, &of), CUCORE_SUCCESS);
    int ordinal = -1;
    EXPECT_EQ(cucore_device_ordinal(of, &ordinal), CUCORE_SUCCESS);
    EXPECT_EQ(ordinal, 0);
    cucore_device_release(of);
    // Its resources are the group's.
    cucore_sm_resource_t *mine = nullptr;
    ASSERT_EQ(cucore_sm_resource_of_context(context, &mine), CUCORE_SUCCESS) << message();
    EXPECT_EQ(info(mine).sm_count, 4u);
    cucore_sm_resource_release(mine);
    // A stream: made in the green context (cuGreenCtxStreamCreate), non-blocking only.
    fake::reset_calls();
    cucore_stream_t *stream = nullptr;
    ASSERT_EQ(cucore_stream_create_in_context(context, nullptr, &stream), CUCORE_SUCCESS) << message();
    const std::vector<std::string> calls = fake::call_log();
    EXPECT_NE(std::find(calls.begin(), calls.end(), "cuGreenCtxStreamCreate"), calls.end());
    EXPECT_EQ(std::find(calls.begin(), calls.end(), "cuStreamCreateWithPriority"), calls.end());
    void *cu_stream = nullptr;
    ASSERT_EQ(cucore_stream_handle(stream, &cu_stream), CUCORE_SUCCESS);
    CUgreenCtx owner = nullptr;
    ASSERT_EQ(fake::table().cuStreamGetGreenCtx(static_cast<CUstream>(cu_stream), &owner), CUDA_SUCCESS);
    EXPECT_EQ(owner, cu_green);
    ASSERT_EQ(cucore_sm_resource_of_stream(stream, &mine), CUCORE_SUCCESS) << message();
    EXPECT_EQ(info(mine).sm_count, 4u);
    cucore_sm_resource_release(mine);
    uint32_t flags = 9;
    EXPECT_EQ(cucore_stream_flags(stream, &flags), CUCORE_SUCCESS);
    EXPECT_EQ(flags, 0u) << "non-blocking";
    cucore_stream_options_t blocking = CUCORE_STREAM_OPTIONS_INIT;
    blocking.flags = CUCORE_STREAM_BLOCKING;
    cucore_stream_t *refused = nullptr;
    expect_invalid(cucore_stream_create_in_context(context, &blocking, &refused), "cucore_stream_create_in_context",
                   "CU_STREAM_NON_BLOCKING");
    // An allocation ordered on it, filled and read back there.
    cucore_buffer_t *buffer = nullptr;
    ASSERT_EQ(cucore_device_allocate(d0_, 64, stream, &buffer), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_buffer_fill(buffer, 0x5a, 1, stream), CUCORE_SUCCESS) << message();
    unsigned char bytes[64] = {};
    ASSERT_EQ(cucore_buffer_copy_to_host(buffer, 0, bytes, sizeof bytes, stream), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_synchronize(stream), CUCORE_SUCCESS) << message();
    for (unsigned char b : bytes) ASSERT_EQ(b, 0x5a);
    // An event of the green context, recorded on the stream.
    cucore_event_t *event = nullptr;
    ASSERT_EQ(cucore_event_create_in_context(context, nullptr, &event), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_event_record(event, stream), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_event_synchronize(event), CUCORE_SUCCESS) << message();
    // A launch on it runs in the green context.
    cucore_kernel_t *kernel = nullptr;
    ASSERT_EQ(cucore_kernel_from_handle(fake::make_kernel(), nullptr, nullptr, &kernel), CUCORE_SUCCESS);
    const cucore_launch_config_t config = CUCORE_LAUNCH_CONFIG_INIT;
    const size_t before = fake::launches().size();
    ASSERT_EQ(cucore_launch(stream, &config, kernel, nullptr, nullptr, 0), CUCORE_SUCCESS) << message();
    const std::vector<fake::LaunchRecord> launches = fake::launches();
    ASSERT_EQ(launches.size(), before + 1);
    EXPECT_EQ(launches.back().config.hStream, cu_stream);
    EXPECT_EQ(launches.back().function_context, converted) << "the kernel's function in the green context";
    // Released in the worst order: the context, its resources, then what was made on it.
    cucore_context_release(context);
    cucore_sm_resource_release(rest);
    release_all(groups);
    EXPECT_EQ(fake::green_contexts(), greens_before_ + 1) << "its stream, event, buffer and kernel hold it";
    cucore_stream_release(stream);
    cucore_event_release(event);
    EXPECT_EQ(fake::green_contexts(), greens_before_ + 1);
    cucore_buffer_release(buffer);
    cucore_kernel_release(kernel);
    EXPECT_EQ(fake::green_contexts(), greens_before_) << "destroyed with the last object made on it";
}

TEST_F(GreenContextTest, GroupsAndTheRemainderOfOneSplitMakeOneContext) {
    cucore_sm_resource_t *rest = nullptr;
    std::vector<cucore_sm_resource_t *> groups = split(4, 2, &rest);
    cucore_context_t *context = green(d0_, {groups[0], groups[1], rest});
    cucore_sm_resource_t *mine = nullptr;
    ASSERT_EQ(cucore_sm_resource_of_context(context, &mine), CUCORE_SUCCESS) << message();
    EXPECT_EQ(info(mine).sm_count, 16u);
    // A context's resource is whole: it splits again.
    cucore_sm_resource_split_info_t planned = CUCORE_SM_RESOURCE_SPLIT_INFO_INIT;
    const cucore_sm_resource_split_options_t o = split_options(8, 2);
    EXPECT_EQ(cucore_sm_resource_split_dry_run(mine, &o, &planned), CUCORE_SUCCESS) << message();
    EXPECT_EQ(planned.group_count, 2u);
    cucore_sm_resource_release(mine);
    cucore_context_release(context);
    cucore_sm_resource_release(rest);
    release_all(groups);
    // The whole device's resource alone makes a green context too.
    cucore_context_t *whole = green(d0_, {all_});
    EXPECT_NE(whole, nullptr);
    cucore_context_release(whole);
}

TEST_F(GreenContextTest, BadResourceSetsNameTheRule) {
    cucore_sm_resource_t *rest = nullptr, *other_rest = nullptr;
    std::vector<cucore_sm_resource_t *> groups = split(4, 2, &rest);
    std::vector<cucore_sm_resource_t *> others = split(8, 2, &other_rest);  // no SMs left over
    EXPECT_EQ(info(other_rest).sm_count, 0u);
    cucore_device_t *d1 = device(1);
    auto attempt = [&](cucore_device_t *device, std::vector<cucore_sm_resource_t *> sm) {
        cucore_context_options_t o = CUCORE_CONTEXT_OPTIONS_INIT;
        o.sm_resource_count = static_cast<uint32_t>(sm.size());
        o.sm_resources = sm.data();
        cucore_context_t *context = reinterpret_cast<cucore_context_t *>(0x1);
        fake::reset_calls();
        const cucore_status_t status = cucore_context_create(device, &o, &context);
        EXPECT_EQ(context, nullptr);
        EXPECT_EQ(fake::calls(), 0) << "the rule is known before the driver call";
        return status;
    };
    expect_invalid(attempt(d0_, {groups[0], others[0]}), "cucore_context_create", "one split");
    expect_invalid(attempt(d0_, {all_, groups[0]}), "cucore_context_create", "one split");
    expect_invalid(attempt(d0_, {groups[0], groups[0]}), "cucore_context_create", "named once");
    expect_invalid(attempt(d1, {groups[0]}), "cucore_context_create", "is of device 0, not of device 1");
    expect_invalid(attempt(d0_, {other_rest}), "cucore_context_create", "has no SMs");
    EXPECT_EQ(fake::green_contexts(), greens_before_);
    cucore_device_release(d1);
    cucore_sm_resource_release(rest);
    cucore_sm_resource_release(other_rest);
    release_all(groups);
    release_all(others);
}

TEST_F(GreenContextTest, TheDriversRefusalsComeBackAsTheirErrors) {
    // A rule only the driver knows: it answers, and nothing is made.
    fake::fail_entry("cuGreenCtxCreate", CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
    cucore_context_options_t o = CUCORE_CONTEXT_OPTIONS_INIT;
    o.sm_resource_count = 1;
    o.sm_resources = &all_;
    cucore_context_t *context = nullptr;
    EXPECT_EQ(cucore_context_create(d0_, &o, &context), CUCORE_ERROR_CUDA);
    EXPECT_NE(message().find("cuGreenCtxCreate failed"), std::string::npos) << message();
    EXPECT_EQ(cucore_last_cuda_result(), CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
    EXPECT_EQ(context, nullptr);
    fake::fail_entry("");
    // A driver without green contexts: NOT_SUPPORTED naming the entry point.
    fake::table().cuDeviceGetDevResource = nullptr;
    fake::reinstall();
    cucore_sm_resource_t *resource = nullptr;
    EXPECT_EQ(cucore_sm_resource_of_device(d0_, &resource), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_NE(message().find("cuDeviceGetDevResource"), std::string::npos) << message();
    EXPECT_EQ(resource, nullptr);
}

TEST_F(GreenContextTest, WorkqueueResourcesNeedACuda131Driver) {
    cucore_workqueue_resource_t *wq = reinterpret_cast<cucore_workqueue_resource_t *>(0x1);
    EXPECT_EQ(cucore_workqueue_resource_of_device(d0_, &wq), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_NE(message().find("need a CUDA 13.1 driver; this driver is CUDA 13.0"), std::string::npos) << message();
    EXPECT_EQ(wq, nullptr);
    // A 13.1 driver that still refuses the type: NOT_SUPPORTED with its answer.
    fake::set_driver_version(13010);
    fake::fail_entry("cuDeviceGetDevResource", CUDA_ERROR_INVALID_RESOURCE_TYPE);
    EXPECT_EQ(cucore_workqueue_resource_of_device(d0_, &wq), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(cucore_last_cuda_result(), CUDA_ERROR_INVALID_RESOURCE_TYPE);
    EXPECT_NE(message().find("does not offer workqueue resources"), std::string::npos) << message();
    fake::fail_entry("");
}

TEST_F(GreenContextTest, WorkqueueResourcesConfigureAGreenContext) {
    fake::set_driver_version(13010);
    cucore_workqueue_resource_t *wq = nullptr;
    ASSERT_EQ(cucore_workqueue_resource_of_device(d0_, &wq), CUCORE_SUCCESS) << message();
    cucore_workqueue_resource_info_t i = CUCORE_WORKQUEUE_RESOURCE_INFO_INIT;
    ASSERT_EQ(cucore_workqueue_resource_info(wq, &i), CUCORE_SUCCESS);
    EXPECT_EQ(i.sharing_scope, CUCORE_WORKQUEUE_SHARING_SCOPE_DEVICE_CTX);
    EXPECT_EQ(i.concurrency_limit, 8u);
    cucore_device_t *of = nullptr;
    ASSERT_EQ(cucore_workqueue_resource_device(wq, &of), CUCORE_SUCCESS);
    int ordinal = -1;
    EXPECT_EQ(cucore_device_ordinal(of, &ordinal), CUCORE_SUCCESS);
    EXPECT_EQ(ordinal, 0);
    cucore_device_release(of);
    cucore_workqueue_resource_options_t o = CUCORE_WORKQUEUE_RESOURCE_OPTIONS_INIT;
    o.sharing_scope = CUCORE_WORKQUEUE_SHARING_SCOPE_GREEN_CTX_BALANCED;
    o.concurrency_limit = 4;
    ASSERT_EQ(cucore_workqueue_resource_configure(wq, &o), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_workqueue_resource_configure(wq, nullptr), CUCORE_SUCCESS) << "NULL changes nothing";
    ASSERT_EQ(cucore_workqueue_resource_info(wq, &i), CUCORE_SUCCESS);
    EXPECT_EQ(i.sharing_scope, CUCORE_WORKQUEUE_SHARING_SCOPE_GREEN_CTX_BALANCED);
    EXPECT_EQ(i.concurrency_limit, 4u);
    // A green context of SMs and the workqueue gets the configuration; so do its streams.
    cucore_sm_resource_t *rest = nullptr;
    std::vector<cucore_sm_resource_t *> groups = split(4, 1, &rest);
    cucore_context_t *context = green(d0_, {groups[0]}, {wq});
    cucore_stream_t *stream = nullptr;
    ASSERT_EQ(cucore_stream_create_in_context(context, nullptr, &stream), CUCORE_SUCCESS) << message();
    cucore_workqueue_resource_t *theirs = nullptr;
    ASSERT_EQ(cucore_workqueue_resource_of_stream(stream, &theirs), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_workqueue_resource_info(theirs, &i), CUCORE_SUCCESS);
    EXPECT_EQ(i.sharing_scope, CUCORE_WORKQUEUE_SHARING_SCOPE_GREEN_CTX_BALANCED);
    EXPECT_EQ(i.concurrency_limit, 4u);
    cucore_workqueue_resource_release(theirs);
    // The primary context's is the device's.
    cucore_context_t *primary = nullptr;
    ASSERT_EQ(cucore_context_get_primary(d0_, &primary), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_workqueue_resource_of_context(primary, &theirs), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_workqueue_resource_info(theirs, &i), CUCORE_SUCCESS);
    EXPECT_EQ(i.sharing_scope, CUCORE_WORKQUEUE_SHARING_SCOPE_DEVICE_CTX);
    cucore_workqueue_resource_release(theirs);
    cucore_context_release(primary);
    // A workqueue alone makes a green context; two are refused.
    cucore_context_t *only = green(d0_, {}, {wq});
    EXPECT_NE(only, nullptr);
    cucore_context_release(only);
    cucore_workqueue_resource_t *two[2] = {wq, wq};
    cucore_context_options_t co = CUCORE_CONTEXT_OPTIONS_INIT;
    co.workqueue_resource_count = 2;
    co.workqueue_resources = two;
    cucore_context_t *refused = nullptr;
    expect_invalid(cucore_context_create(d0_, &co, &refused), "cucore_context_create", "at most one");
    cucore_stream_release(stream);
    cucore_context_release(context);
    cucore_sm_resource_release(rest);
    release_all(groups);
    cucore_workqueue_resource_release(wq);
}

TEST_F(GreenContextTest, TheFacadeReadsLikeCudaCore) {
    const cucore::Device dev = cucore::Device::borrow(d0_);
    const cucore::SMResource sm = dev.resources().sm();
    EXPECT_EQ(sm.sm_count(), 16u);
    EXPECT_EQ(sm.min_partition_size(), 2u);
    EXPECT_EQ(sm.coscheduled_alignment(), 2u);
    EXPECT_EQ(sm.dry_run({4, 2}).remainder_sm_count, 8u);
    cucore::SMResourceSplit split = sm.split({4, 2});
    ASSERT_EQ(split.groups.size(), 2u);
    EXPECT_EQ(split.remainder.sm_count(), 8u);
    const cucore::Context green = dev.create_context({{split.groups[1]}, {}});
    EXPECT_TRUE(green.is_green());
    EXPECT_FALSE(dev.primary_context().is_green());
    const cucore::Stream stream = green.create_stream();
    EXPECT_EQ(stream.resources().sm().sm_count(), 4u);
    EXPECT_EQ(green.resources().sm().sm_count(), 4u);
    try {
        (void)sm.split({3, 1});
        ADD_FAILURE() << "an unaligned split";
    } catch (const cucore::Error &e) {
        EXPECT_EQ(e.status(), CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_NE(std::string(e.what()).find("co-scheduled alignment"), std::string::npos) << e.what();
    }
    try {
        (void)dev.resources().workqueue();
        ADD_FAILURE() << "workqueues on a CUDA 13.0 driver";
    } catch (const cucore::Error &e) {
        EXPECT_EQ(e.status(), CUCORE_ERROR_NOT_SUPPORTED);
    }
    fake::set_driver_version(13010);
    const cucore::WorkqueueResource wq = cucore::WorkqueueResource::of(dev);
    wq.configure({CUCORE_WORKQUEUE_SHARING_SCOPE_GREEN_CTX_BALANCED, 2});
    EXPECT_EQ(wq.sharing_scope(), CUCORE_WORKQUEUE_SHARING_SCOPE_GREEN_CTX_BALANCED);
    EXPECT_EQ(wq.concurrency_limit(), 2u);
    EXPECT_EQ(wq.device(), dev);
    const cucore::Context both = cucore::Context::create(dev, {{split.groups[0]}, {wq}});
    EXPECT_EQ(both.resources().workqueue().concurrency_limit(), 2u);
}

// ---- every create path's driver calls failing once ----

class GreenContextFaultInjection : public FaultInjection<GreenContextTest> {
  protected:
    void TearDown() override { FaultInjection<GreenContextTest>::TearDown(); }
    static void release_resource(void *h) { cucore_sm_resource_release(static_cast<cucore_sm_resource_t *>(h)); }
    static void release_context(void *h) { cucore_context_release(static_cast<cucore_context_t *>(h)); }
};

TEST_F(GreenContextFaultInjection, ReadingADevicesSms) {
    run({"cucore_sm_resource_of_device",
         [&](void **h) { return cucore_sm_resource_of_device(d0_, reinterpret_cast<cucore_sm_resource_t **>(h)); },
         release_resource, 1});
}

TEST_F(GreenContextFaultInjection, Splitting) {
    // The splits' outs: the first group goes through the scenario's handle, the rest are released here.
    run({"cucore_sm_resource_split",
         [&](void **h) {
             const cucore_sm_resource_split_options_t o = split_options(4, 0);
             cucore_sm_resource_t *groups[4] = {};
             cucore_sm_resource_t *rest = nullptr;
             uint32_t made = 0;
             const cucore_status_t status = cucore_sm_resource_split(all_, &o, groups, 4, &made, &rest);
             *h = groups[0];
             for (uint32_t i = 1; i < made; ++i) cucore_sm_resource_release(groups[i]);
             cucore_sm_resource_release(rest);
             return status;
         },
         release_resource, 2});
}

TEST_F(GreenContextFaultInjection, CreatingAGreenContextAndReadingItsSms) {
    cucore_sm_resource_t *rest = nullptr;
    std::vector<cucore_sm_resource_t *> groups = split(4, 2, &rest);
    run({"cucore_context_create",
         [&](void **h) {
             cucore_context_options_t o = CUCORE_CONTEXT_OPTIONS_INIT;
             o.sm_resource_count = 1;
             o.sm_resources = &groups[0];
             return cucore_context_create(d0_, &o, reinterpret_cast<cucore_context_t **>(h));
         },
         release_context, 3});
    cucore_context_t *context = green(d0_, {groups[1]});
    run({"cucore_sm_resource_of_context",
         [&](void **h) {
             return cucore_sm_resource_of_context(context, reinterpret_cast<cucore_sm_resource_t **>(h));
         },
         release_resource, 1});
    run({"cucore_stream_create_in_context",
         [&](void **h) {
             return cucore_stream_create_in_context(context, nullptr, reinterpret_cast<cucore_stream_t **>(h));
         },
         [](void *h) { cucore_stream_release(static_cast<cucore_stream_t *>(h)); }, 1});
    cucore_context_release(context);
    cucore_sm_resource_release(rest);
    release_all(groups);
}

TEST_F(GreenContextFaultInjection, ReadingAWorkqueueResourceAndMakingAGreenContextOfIt) {
    fake::set_driver_version(13010);
    auto release_workqueue = [](void *h) {
        cucore_workqueue_resource_release(static_cast<cucore_workqueue_resource_t *>(h));
    };
    run({"cucore_workqueue_resource_of_device",
         [&](void **h) {
             return cucore_workqueue_resource_of_device(d0_, reinterpret_cast<cucore_workqueue_resource_t **>(h));
         },
         release_workqueue, 2});
    cucore_workqueue_resource_t *wq = nullptr;
    ASSERT_EQ(cucore_workqueue_resource_of_device(d0_, &wq), CUCORE_SUCCESS) << message();
    run({"cucore_context_create",
         [&](void **h) {
             cucore_context_options_t o = CUCORE_CONTEXT_OPTIONS_INIT;
             o.workqueue_resource_count = 1;
             o.workqueue_resources = &wq;
             return cucore_context_create(d0_, &o, reinterpret_cast<cucore_context_t **>(h));
         },
         release_context, 3});
    cucore_context_t *context = green(d0_, {}, {wq});
    run({"cucore_workqueue_resource_of_context",
         [&](void **h) {
             return cucore_workqueue_resource_of_context(context,
                                                         reinterpret_cast<cucore_workqueue_resource_t **>(h));
         },
         release_workqueue, 2});
    cucore_stream_t *stream = nullptr;
    ASSERT_EQ(cucore_stream_create_in_context(context, nullptr, &stream), CUCORE_SUCCESS) << message();
    run({"cucore_sm_resource_of_stream",
         [&](void **h) {
             return cucore_sm_resource_of_stream(stream, reinterpret_cast<cucore_sm_resource_t **>(h));
         },
         release_resource, 1});
    cucore_stream_release(stream);
    cucore_context_release(context);
    cucore_workqueue_resource_release(wq);
}

}  // namespace
