// Green contexts on a real GPU: a kernel launched on a green context of k SMs
// records %smid of every block, and at most k distinct SMs appear (the ids
// themselves are physical, so only their count and, between the disjoint
// groups of one split, their disjointness are knowable); two green contexts of
// one split run their kernels side by side with correct results on disjoint
// SMs; events and allocations on a green context's stream; release in any
// order; bad splits and resource sets are clear errors; workqueue resources
// are NOT_SUPPORTED (with the reason) on drivers before CUDA 13.1.
#include <algorithm>
#include <set>
#include <vector>

#include "kernel_gpu.hpp"

namespace gpu {
template <>
struct Releaser<cucore_context_t> {
    void operator()(cucore_context_t *p) const { (void)cucore_context_release(p); }
};
template <>
struct Releaser<cucore_sm_resource_t> {
    void operator()(cucore_sm_resource_t *p) const { (void)cucore_sm_resource_release(p); }
};
template <>
struct Releaser<cucore_workqueue_resource_t> {
    void operator()(cucore_workqueue_resource_t *p) const { (void)cucore_workqueue_resource_release(p); }
};
template <>
struct Releaser<cucore_event_t> {
    void operator()(cucore_event_t *p) const { (void)cucore_event_release(p); }
};
}  // namespace gpu

namespace {

using gpu::CompileTest;
using gpu::config;
using gpu::contains;
using gpu::Owned;

// Each block records the SM it ran on (block 0's thread 0 of each block) and
// keeps its SM busy for `spin` clock cycles, so that the blocks of a large
// grid are spread over every SM the context may use; every thread writes a
// known value to check the launch ran.
const char *const kSmidSource = R"(
extern "C" __global__ void record_smid(unsigned *smids, unsigned *values, unsigned n, long long spin) {
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    if (threadIdx.x == 0) smids[blockIdx.x] = smid;
    const long long start = clock64();
    while (clock64() - start < spin) {
    }
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) values[i] = i * 3u + 1u;
}
)";

constexpr unsigned kThreads = 128;
constexpr long long kSpin = 200000;  // clock cycles per block: ~0.1 ms, so blocks overlap on every SM

cucore_sm_resource_info_t info_of(const cucore_sm_resource_t *resource) {
    cucore_sm_resource_info_t out = CUCORE_SM_RESOURCE_INFO_INIT;
    EXPECT_EQ(cucore_sm_resource_info(resource, &out), CUCORE_SUCCESS) << cucore_last_error_message();
    return out;
}

// A launch of record_smid on a stream: its buffers, and the SM ids and values read back.
struct SmidRun {
    std::vector<unsigned> smids;
    std::vector<unsigned> values;
    std::set<unsigned> distinct() const { return std::set<unsigned>(smids.begin(), smids.end()); }
    bool values_right() const {
        for (unsigned i = 0; i < values.size(); ++i)
            if (values[i] != i * 3u + 1u) return false;
        return true;
    }
};

class GreenContextTest : public CompileTest {
protected:
    void SetUp() override {
        CompileTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        cucore_sm_resource_t *all = nullptr;
        const cucore_status_t s = cucore_sm_resource_of_device(dev_, &all);
        if (s == CUCORE_ERROR_NOT_SUPPORTED) GTEST_SKIP() << "no green contexts: " << cucore_last_error_message();
        CUCORE_ASSERT_OK(s);
        all_.reset(all);
        info_ = info_of(all);
        CUCORE_ASSERT_OK(cucore_device_attribute(dev_, CUCORE_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &sms_));
        ASSERT_EQ(info_.sm_count, static_cast<uint32_t>(sms_)) << "the device's SM resource holds all its SMs";
        ASSERT_GE(info_.min_partition_size, 1u);
        ASSERT_GE(info_.coscheduled_alignment, 1u);
        // The smallest group the rules allow: the minimum partition, rounded up to the alignment.
        const uint32_t a = info_.coscheduled_alignment;
        k_ = (info_.min_partition_size + a - 1) / a * a;
        if (info_.sm_count < 2 * k_) GTEST_SKIP() << "the device has too few SMs for two groups of " << k_;
        code_ = compile(kSmidSource);
        kernel_ = kernel(code_.get(), "record_smid");
        ASSERT_TRUE(kernel_);
    }
    void TearDown() override {
        kernel_.reset();
        code_.reset();
        all_.reset();
        CompileTest::TearDown();
    }

    // Splits the device's SMs into `count` groups of `sm_count`.
    std::vector<Owned<cucore_sm_resource_t>> split(uint32_t sm_count, uint32_t count,
                                                   Owned<cucore_sm_resource_t> *remainder = nullptr) {
        cucore_sm_resource_split_options_t o = CUCORE_SM_RESOURCE_SPLIT_OPTIONS_INIT;
        o.sm_count = sm_count;
        o.group_count = count;
        std::vector<cucore_sm_resource_t *> raw(count, nullptr);
        cucore_sm_resource_t *rest = nullptr;
        uint32_t made = 0;
        EXPECT_EQ(cucore_sm_resource_split(all_.get(), &o, raw.data(), count, &made, &rest), CUCORE_SUCCESS)
            << cucore_last_error_message();
        EXPECT_EQ(made, count);
        std::vector<Owned<cucore_sm_resource_t>> groups;
        for (uint32_t i = 0; i < made; ++i) groups.emplace_back(raw[i]);
        if (remainder)
            remainder->reset(rest);
        else
            (void)cucore_sm_resource_release(rest);
        return groups;
    }
    Owned<cucore_context_t> green(std::vector<cucore_sm_resource_t *> sm,
                                  std::vector<cucore_workqueue_resource_t *> workqueues = {}) {
        cucore_context_options_t o = CUCORE_CONTEXT_OPTIONS_INIT;
        o.sm_resource_count = static_cast<uint32_t>(sm.size());
        o.sm_resources = sm.data();
        o.workqueue_resource_count = static_cast<uint32_t>(workqueues.size());
        o.workqueue_resources = workqueues.data();
        cucore_context_t *c = nullptr;
        EXPECT_EQ(cucore_context_create(dev_, &o, &c), CUCORE_SUCCESS) << cucore_last_error_message();
        return Owned<cucore_context_t>(c);
    }
    Owned<cucore_stream_t> stream_in(cucore_context_t *context) {
        cucore_stream_t *s = nullptr;
        EXPECT_EQ(cucore_stream_create_in_context(context, nullptr, &s), CUCORE_SUCCESS)
            << cucore_last_error_message();
        return Owned<cucore_stream_t>(s);
    }

    // Queues record_smid with `blocks` blocks on `stream` (buffers allocated on it); read() waits and reads back.
    struct Pending {
        gpu::DeviceArray<unsigned> smids, values;
        SmidRun read() const { return {smids.download(), values.download()}; }
    };
    Pending queue(cucore_stream_t *stream, unsigned blocks) {
        Pending p{gpu::DeviceArray<unsigned>(dev_, stream, blocks), gpu::DeviceArray<unsigned>(dev_, stream,
                                                                                                blocks * kThreads)};
        p.smids.fill_zero();
        p.values.fill_zero();
        const unsigned n = blocks * kThreads;
        EXPECT_EQ(gpu::launch(stream, config(blocks, kThreads), kernel_.get(), static_cast<unsigned *>(p.smids.ptr()),
                              static_cast<unsigned *>(p.values.ptr()), n, kSpin),
                  CUCORE_SUCCESS)
            << cucore_last_error_message();
        return p;
    }
    unsigned many_blocks() const { return static_cast<unsigned>(sms_) * 4; }

    Owned<cucore_sm_resource_t> all_;
    cucore_sm_resource_info_t info_{};
    int sms_ = 0;
    uint32_t k_ = 0;
    Owned<cucore_object_code_t> code_;
    Owned<cucore_kernel_t> kernel_;
};

TEST_F(GreenContextTest, AKernelOnAGreenContextRunsOnlyOnItsSms) {
    std::vector<Owned<cucore_sm_resource_t>> groups = split(k_, 1);
    ASSERT_EQ(groups.size(), 1u);
    ASSERT_EQ(info_of(groups[0].get()).sm_count, k_);
    Owned<cucore_context_t> context = green({groups[0].get()});
    ASSERT_TRUE(context);
    int is_green = 0;
    CUCORE_ASSERT_OK(cucore_context_is_green(context.get(), &is_green));
    EXPECT_EQ(is_green, 1);
    Owned<cucore_stream_t> stream = stream_in(context.get());
    ASSERT_TRUE(stream);
    // The stream and the context report the group's SMs.
    cucore_sm_resource_t *mine = nullptr;
    CUCORE_ASSERT_OK(cucore_sm_resource_of_stream(stream.get(), &mine));
    EXPECT_EQ(info_of(mine).sm_count, k_);
    (void)cucore_sm_resource_release(mine);
    // The raw driver agrees that the stream belongs to the green context.
    void *cu_stream = nullptr, *cu_green = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_handle(stream.get(), &cu_stream));
    CUCORE_ASSERT_OK(cucore_context_green_handle(context.get(), &cu_green));
    ASSERT_NE(cu_green, nullptr);

    const SmidRun on_green = queue(stream.get(), many_blocks()).read();
    ASSERT_TRUE(on_green.values_right()) << "the kernel ran on the green context";
    const std::set<unsigned> used = on_green.distinct();
    EXPECT_GE(used.size(), 1u);
    EXPECT_LE(used.size(), k_) << "a green context of " << k_ << " SMs ran blocks on " << used.size() << " SMs";
    // The same grid on the primary context spreads over more SMs than the group has (the check has teeth).
    const SmidRun on_primary = queue(stream_.get(), many_blocks()).read();
    ASSERT_TRUE(on_primary.values_right());
    EXPECT_GT(on_primary.distinct().size(), static_cast<size_t>(k_));
}

TEST_F(GreenContextTest, TwoGreenContextsOfOneSplitRunSideBySideOnDisjointSms) {
    std::vector<Owned<cucore_sm_resource_t>> groups = split(k_, 2);
    ASSERT_EQ(groups.size(), 2u);
    Owned<cucore_context_t> first = green({groups[0].get()}), second = green({groups[1].get()});
    ASSERT_TRUE(first && second);
    Owned<cucore_stream_t> s1 = stream_in(first.get()), s2 = stream_in(second.get());
    ASSERT_TRUE(s1 && s2);
    // Both queued before either is waited for: the two kernels are in flight together.
    Pending p1 = queue(s1.get(), many_blocks());
    Pending p2 = queue(s2.get(), many_blocks());
    const SmidRun r1 = p1.read(), r2 = p2.read();
    ASSERT_TRUE(r1.values_right());
    ASSERT_TRUE(r2.values_right());
    const std::set<unsigned> a = r1.distinct(), b = r2.distinct();
    EXPECT_LE(a.size(), k_);
    EXPECT_LE(b.size(), k_);
    std::vector<unsigned> shared;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(shared));
    EXPECT_TRUE(shared.empty()) << "the groups of one split are disjoint, yet " << shared.size()
                                << " SMs ran blocks of both (first: " << shared.front() << ")";
}

TEST_F(GreenContextTest, EventsAndAllocationsOnAGreenContextsStream) {
    std::vector<Owned<cucore_sm_resource_t>> groups = split(k_, 1);
    Owned<cucore_context_t> context = green({groups[0].get()});
    Owned<cucore_stream_t> stream = stream_in(context.get());
    ASSERT_TRUE(stream);
    cucore_event_options_t timing = CUCORE_EVENT_OPTIONS_INIT;
    timing.flags = CUCORE_EVENT_TIMING;
    cucore_event_t *start = nullptr, *stop = nullptr;
    CUCORE_ASSERT_OK(cucore_event_create_in_context(context.get(), &timing, &start));
    Owned<cucore_event_t> own_start(start);
    CUCORE_ASSERT_OK(cucore_event_create_in_context(context.get(), &timing, &stop));
    Owned<cucore_event_t> own_stop(stop);
    CUCORE_ASSERT_OK(cucore_event_record(start, stream.get()));
    Pending p = queue(stream.get(), 64);
    CUCORE_ASSERT_OK(cucore_event_record(stop, stream.get()));
    CUCORE_ASSERT_OK(cucore_event_synchronize(stop));
    float ms = -1.0f;
    CUCORE_ASSERT_OK(cucore_event_elapsed_time(start, stop, &ms));
    EXPECT_GT(ms, 0.0f);
    // A stream of the primary context waits for the green one's event.
    CUCORE_ASSERT_OK(cucore_stream_wait_event(stream_.get(), stop));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(stream_.get()));
    const SmidRun r = p.read();
    EXPECT_TRUE(r.values_right());
    EXPECT_LE(r.distinct().size(), k_);
    uint32_t flags = 9;
    CUCORE_ASSERT_OK(cucore_stream_flags(stream.get(), &flags));
    const int flags_blocking = static_cast<int>(flags & CUCORE_STREAM_BLOCKING);
    EXPECT_EQ(flags_blocking, 0) << "a green context's streams are non-blocking";
}

TEST_F(GreenContextTest, ReleaseOrderNeverMatters) {
    std::vector<Owned<cucore_sm_resource_t>> groups = split(k_, 1);
    cucore_context_t *context = green({groups[0].get()}).release();
    ASSERT_NE(context, nullptr);
    cucore_stream_t *stream = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_create_in_context(context, nullptr, &stream));
    Owned<cucore_stream_t> own_stream(stream);
    cucore_event_t *event = nullptr;
    CUCORE_ASSERT_OK(cucore_event_create_in_context(context, nullptr, &event));
    Owned<cucore_event_t> own_event(event);
    // The context and its resources go first; the stream, event and buffers keep the green context alive.
    CUCORE_ASSERT_OK(cucore_context_release(context));
    groups.clear();
    all_.reset();
    const SmidRun r = queue(stream, many_blocks()).read();
    EXPECT_TRUE(r.values_right());
    EXPECT_LE(r.distinct().size(), k_) << "still confined to the group after its handles went";
    CUCORE_ASSERT_OK(cucore_event_record(event, stream));
    CUCORE_ASSERT_OK(cucore_event_synchronize(event));
    // Then the stream before the event.
    own_stream.reset();
    own_event.reset();
}

TEST_F(GreenContextTest, BadSplitsAndResourceSetsAreClearErrors) {
    cucore_sm_resource_t *groups[4] = {};
    cucore_sm_resource_t *rest = nullptr;
    uint32_t made = 0;
    cucore_sm_resource_split_options_t o = CUCORE_SM_RESOURCE_SPLIT_OPTIONS_INIT;
    o.sm_count = info_.sm_count + info_.coscheduled_alignment;
    o.group_count = 1;
    CUCORE_EXPECT_STATUS(cucore_sm_resource_split(all_.get(), &o, groups, 4, &made, &rest),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(gpu::last_message(), "more SMs than the resource has")) << gpu::last_message();
    if (info_.min_partition_size > 1) {
        o.sm_count = info_.min_partition_size - 1;
        CUCORE_EXPECT_STATUS(cucore_sm_resource_split(all_.get(), &o, groups, 4, &made, &rest),
                             CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_TRUE(contains(gpu::last_message(), "minimum partition size")) << gpu::last_message();
    }
    if (info_.coscheduled_alignment > 1) {
        o.sm_count = k_ + 1;
        CUCORE_EXPECT_STATUS(cucore_sm_resource_split(all_.get(), &o, groups, 4, &made, &rest),
                             CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_TRUE(contains(gpu::last_message(), "co-scheduled alignment")) << gpu::last_message();
    }
    o.sm_count = k_;
    o.group_count = info_.sm_count / k_ + 1;
    cucore_sm_resource_split_info_t planned = CUCORE_SM_RESOURCE_SPLIT_INFO_INIT;
    CUCORE_EXPECT_STATUS(cucore_sm_resource_split_dry_run(all_.get(), &o, &planned), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(gpu::last_message(), "more than the resource's")) << gpu::last_message();
    EXPECT_EQ(made, 0u);
    EXPECT_EQ(rest, nullptr);
    // A group does not split again; groups of two splits do not make one context.
    std::vector<Owned<cucore_sm_resource_t>> a = split(k_, 1), b = split(k_, 1);
    o.group_count = 1;
    CUCORE_EXPECT_STATUS(cucore_sm_resource_split(a[0].get(), &o, groups, 4, &made, &rest),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(gpu::last_message(), "earlier split")) << gpu::last_message();
    cucore_sm_resource_t *two[2] = {a[0].get(), b[0].get()};
    cucore_context_options_t co = CUCORE_CONTEXT_OPTIONS_INIT;
    co.sm_resource_count = 2;
    co.sm_resources = two;
    cucore_context_t *context = nullptr;
    CUCORE_EXPECT_STATUS(cucore_context_create(dev_, &co, &context), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(gpu::last_message(), "one split")) << gpu::last_message();
    EXPECT_EQ(context, nullptr);
    // The dry run of a legal split agrees with the real split.
    o.group_count = 0;
    CUCORE_ASSERT_OK(cucore_sm_resource_split_dry_run(all_.get(), &o, &planned));
    // As many as fit: at most sm_count / k (the GPU's processing clusters may leave fewer whole groups).
    EXPECT_GE(planned.group_count, 2u);
    EXPECT_LE(planned.group_count, info_.sm_count / k_);
    EXPECT_EQ(planned.group_sm_count, k_);
    EXPECT_EQ(planned.group_count * planned.group_sm_count + planned.remainder_sm_count, info_.sm_count);
}

TEST_F(GreenContextTest, WorkqueueResourcesFollowTheDriver) {
    int version = 0;
    CUCORE_ASSERT_OK(cucore_driver_version(&version));
    cucore_workqueue_resource_t *wq = nullptr;
    const cucore_status_t s = cucore_workqueue_resource_of_device(dev_, &wq);
    Owned<cucore_workqueue_resource_t> own(wq);
    if (version < 13010) {
        EXPECT_EQ(s, CUCORE_ERROR_NOT_SUPPORTED) << cucore_last_error_message();
        EXPECT_TRUE(contains(gpu::last_message(), "need a CUDA 13.1 driver")) << gpu::last_message();
        EXPECT_EQ(wq, nullptr);
        return;
    }
    if (s == CUCORE_ERROR_NOT_SUPPORTED) GTEST_SKIP() << "the driver refuses workqueues: " << gpu::last_message();
    CUCORE_ASSERT_OK(s);
    cucore_workqueue_resource_info_t i = CUCORE_WORKQUEUE_RESOURCE_INFO_INIT;
    CUCORE_ASSERT_OK(cucore_workqueue_resource_info(wq, &i));
    EXPECT_GE(i.concurrency_limit, 1u);
    cucore_workqueue_resource_options_t o = CUCORE_WORKQUEUE_RESOURCE_OPTIONS_INIT;
    o.sharing_scope = CUCORE_WORKQUEUE_SHARING_SCOPE_GREEN_CTX_BALANCED;
    CUCORE_ASSERT_OK(cucore_workqueue_resource_configure(wq, &o));
    std::vector<Owned<cucore_sm_resource_t>> groups = split(k_, 1);
    Owned<cucore_context_t> context = green({groups[0].get()}, {wq});
    ASSERT_TRUE(context);
    Owned<cucore_stream_t> stream = stream_in(context.get());
    const SmidRun r = queue(stream.get(), many_blocks()).read();
    EXPECT_TRUE(r.values_right());
    EXPECT_LE(r.distinct().size(), k_);
}

TEST_F(GreenContextTest, TheFacade) {
    const cucore::Device dev = cucore::Device::borrow(dev_);
    const cucore::SMResource sm = dev.resources().sm();
    EXPECT_EQ(sm.sm_count(), info_.sm_count);
    cucore::SMResourceSplit split = sm.split({k_, 2});
    ASSERT_EQ(split.groups.size(), 2u);
    EXPECT_EQ(split.remainder.sm_count(), info_.sm_count - 2 * k_);
    const cucore::Context green = dev.create_context({{split.groups[1]}, {}});
    EXPECT_TRUE(green.is_green());
    const cucore::Stream stream = green.create_stream();
    EXPECT_EQ(stream.resources().sm().sm_count(), k_);
    const SmidRun r = queue(stream.get(), many_blocks()).read();
    EXPECT_TRUE(r.values_right());
    EXPECT_LE(r.distinct().size(), k_);
}

}  // namespace
