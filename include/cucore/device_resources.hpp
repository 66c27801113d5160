// libcucore C++ façade: device resources and green contexts (over cucore/device_resources.h).
//
//   cucore::SMResource all = dev.resources().sm();
//   cucore::SMResourceSplit split = all.split({/*sm_count=*/8, /*group_count=*/2});
//   cucore::Context green = dev.create_context({{split.groups[0]}});
//   cucore::Stream s = green.create_stream();          // runs only on the group's SMs
//
// An SMResource describes SMs of a device, context or stream (cuda.core:
// SMResource); split() divides it into disjoint groups of one size and a
// remainder. A WorkqueueResource (CUDA 13.1 drivers) says how a green
// context's work queues are shared. A green context (Context::create,
// Device::create_context) is made of groups of one split and/or a workqueue
// resource; streams, events, buffers and launches on it run on its SMs only.
// Resources and contexts are exactly one C handle each.
#ifndef CUCORE_DEVICE_RESOURCES_HPP
#define CUCORE_DEVICE_RESOURCES_HPP

#include <cstdint>
#include <vector>

#include "common.hpp"
#include "context.hpp"
#include "device.hpp"
#include "device_resources.h"
#include "stream.hpp"

namespace cucore {

// How SMResource::split divides an SM resource (cuda.core: SMResourceOptions).
struct SMResourceOptions {
    // SMs per group; 0: the smallest allowed (min_partition_size rounded up to
    // the alignment). At least
    // min_partition_size and a multiple of coscheduled_alignment unless
    // CUCORE_SM_SPLIT_IGNORE_SM_COSCHEDULING is in flags.
    std::uint32_t sm_count = 0;
    // Groups to make; 0: as many as fit.
    std::uint32_t group_count = 0;
    std::uint32_t flags = 0;  // cucore_sm_split_flag_t bits

    cucore_sm_resource_split_options_t to_c() const noexcept {
        cucore_sm_resource_split_options_t o = CUCORE_SM_RESOURCE_SPLIT_OPTIONS_INIT;
        o.sm_count = sm_count;
        o.group_count = group_count;
        o.flags = flags;
        return o;
    }
};

struct SMResourceSplit;

// SMs of a device, context or stream (cuda.core: SMResource). A
// default-constructed SMResource is empty.
class SMResource : public Handle<SMResource, cucore_sm_resource_t> {
public:
    SMResource() noexcept = default;

    // The SMs of a device, of a context (a green one's own) or of a stream's
    // context. Throws Error: INVALID_HANDLE, NOT_SUPPORTED, CUDA.
    static SMResource of(const Device &device) {
        cucore_sm_resource_t *raw = nullptr;
        detail::check(cucore_sm_resource_of_device(device.get(), &raw));
        return adopt(raw);
    }
    static SMResource of(const Context &context) {
        cucore_sm_resource_t *raw = nullptr;
        detail::check(cucore_sm_resource_of_context(context.get(), &raw));
        return adopt(raw);
    }
    static SMResource of(const Stream &stream) {
        cucore_sm_resource_t *raw = nullptr;
        detail::check(cucore_sm_resource_of_stream(stream.get(), &raw));
        return adopt(raw);
    }

    // Its SM count, minimum partition size, co-scheduled alignment and flags.
    // Throws Error: INVALID_HANDLE.
    cucore_sm_resource_info_t info() const {
        cucore_sm_resource_info_t out = CUCORE_SM_RESOURCE_INFO_INIT;
        detail::check(cucore_sm_resource_info(handle_, &out));
        return out;
    }
    std::uint32_t sm_count() const { return info().sm_count; }
    std::uint32_t min_partition_size() const { return info().min_partition_size; }
    std::uint32_t coscheduled_alignment() const { return info().coscheduled_alignment; }
    std::uint32_t flags() const { return info().flags; }

    // Splits into disjoint groups of options.sm_count SMs: exactly
    // options.group_count groups, or as many as fit, and the remainder (see
    // cucore_sm_resource_split). Throws Error: INVALID_HANDLE, INVALID_ARGUMENT
    // (the rule a bad split breaks is named), CUDA.
    SMResourceSplit split(const SMResourceOptions &options = {}) const;

    // What split(options) would make, without making it. Throws as split().
    cucore_sm_resource_split_info_t dry_run(const SMResourceOptions &options = {}) const {
        const cucore_sm_resource_split_options_t c = options.to_c();
        cucore_sm_resource_split_info_t out = CUCORE_SM_RESOURCE_SPLIT_INFO_INIT;
        detail::check(cucore_sm_resource_split_dry_run(handle_, &c, &out));
        return out;
    }
};

static_assert(sizeof(SMResource) == sizeof(void *), "an SMResource is exactly one C handle");

// What SMResource::split makes: the groups (all of one size) and the SMs left
// over (a remainder of 0 SMs when the groups take them all).
struct SMResourceSplit {
    std::vector<SMResource> groups;
    SMResource remainder;
};

inline SMResourceSplit SMResource::split(const SMResourceOptions &options) const {
    const cucore_sm_resource_split_info_t planned = dry_run(options);
    std::vector<cucore_sm_resource_t *> raw(planned.group_count ? planned.group_count : 1, nullptr);
    const cucore_sm_resource_split_options_t c = options.to_c();
    std::uint32_t made = 0;
    cucore_sm_resource_t *rest = nullptr;
    detail::check(cucore_sm_resource_split(handle_, &c, raw.data(), static_cast<std::uint32_t>(raw.size()), &made,
                                           &rest));
    SMResourceSplit result;
    result.remainder = adopt(rest);
    result.groups.reserve(made);
    for (std::uint32_t i = 0; i < made; ++i) result.groups.push_back(adopt(raw[i]));
    return result;
}

// How WorkqueueResource::configure changes a workqueue resource (cuda.core:
// WorkqueueResourceOptions); a zero field leaves its value.
struct WorkqueueResourceOptions {
    cucore_workqueue_sharing_scope_t sharing_scope = CUCORE_WORKQUEUE_SHARING_SCOPE_UNSET;
    std::uint32_t concurrency_limit = 0;

    cucore_workqueue_resource_options_t to_c() const noexcept {
        cucore_workqueue_resource_options_t o = CUCORE_WORKQUEUE_RESOURCE_OPTIONS_INIT;
        o.sharing_scope = sharing_scope;
        o.concurrency_limit = concurrency_limit;
        return o;
    }
};

// How a green context's work queues are shared (cuda.core: WorkqueueResource;
// CUDA 13.1 drivers). A default-constructed WorkqueueResource is empty.
class WorkqueueResource : public Handle<WorkqueueResource, cucore_workqueue_resource_t> {
public:
    WorkqueueResource() noexcept = default;

    // The workqueue resource of a device, context or stream's context. Throws
    // Error: INVALID_HANDLE, NOT_SUPPORTED (a driver before CUDA 13.1), CUDA.
    static WorkqueueResource of(const Device &device) {
        cucore_workqueue_resource_t *raw = nullptr;
        detail::check(cucore_workqueue_resource_of_device(device.get(), &raw));
        return adopt(raw);
    }
    static WorkqueueResource of(const Context &context) {
        cucore_workqueue_resource_t *raw = nullptr;
        detail::check(cucore_workqueue_resource_of_context(context.get(), &raw));
        return adopt(raw);
    }
    static WorkqueueResource of(const Stream &stream) {
        cucore_workqueue_resource_t *raw = nullptr;
        detail::check(cucore_workqueue_resource_of_stream(stream.get(), &raw));
        return adopt(raw);
    }

    // Its sharing scope and concurrency limit. Throws Error: INVALID_HANDLE.
    cucore_workqueue_resource_info_t info() const {
        cucore_workqueue_resource_info_t out = CUCORE_WORKQUEUE_RESOURCE_INFO_INIT;
        detail::check(cucore_workqueue_resource_info(handle_, &out));
        return out;
    }
    cucore_workqueue_sharing_scope_t sharing_scope() const { return info().sharing_scope; }
    std::uint32_t concurrency_limit() const { return info().concurrency_limit; }

    // Changes it in place (for contexts made of it afterwards). Throws Error:
    // INVALID_HANDLE, INVALID_ARGUMENT.
    void configure(const WorkqueueResourceOptions &options) const {
        const cucore_workqueue_resource_options_t c = options.to_c();
        detail::check(cucore_workqueue_resource_configure(handle_, &c));
    }

    // The device it is of. Throws Error: INVALID_HANDLE.
    Device device() const {
        cucore_device_t *raw = nullptr;
        detail::check(cucore_workqueue_resource_device(handle_, &raw));
        return Device::adopt(raw);
    }
};

static_assert(sizeof(WorkqueueResource) == sizeof(void *), "a WorkqueueResource is exactly one C handle");

// The resources of a device, context or stream (cuda.core: DeviceResources):
// sm() and workqueue() ask when called.
class DeviceResources {
public:
    explicit DeviceResources(Device device) : device_(std::move(device)) {}
    explicit DeviceResources(Context context) : context_(std::move(context)) {}
    explicit DeviceResources(Stream stream) : stream_(std::move(stream)) {}

    // Throws as SMResource::of.
    SMResource sm() const {
        if (stream_) return SMResource::of(stream_);
        if (context_) return SMResource::of(context_);
        return SMResource::of(device_);
    }
    // Throws as WorkqueueResource::of (NOT_SUPPORTED before CUDA 13.1).
    WorkqueueResource workqueue() const {
        if (stream_) return WorkqueueResource::of(stream_);
        if (context_) return WorkqueueResource::of(context_);
        return WorkqueueResource::of(device_);
    }

private:
    Device device_;
    Context context_;
    Stream stream_;
};

// What a green context is made of (cuda.core: ContextOptions): groups (and the
// remainder) of one split, or one whole SM resource, and at most one workqueue
// resource.
struct ContextOptions {
    std::vector<SMResource> sm_resources;
    std::vector<WorkqueueResource> workqueue_resources;
};

inline Context Context::create(const Device &device, const ContextOptions &options) {
    std::vector<cucore_sm_resource_t *> sm;
    std::vector<cucore_workqueue_resource_t *> workqueues;
    sm.reserve(options.sm_resources.size());
    workqueues.reserve(options.workqueue_resources.size());
    for (const SMResource &resource : options.sm_resources) sm.push_back(resource.get());
    for (const WorkqueueResource &resource : options.workqueue_resources) workqueues.push_back(resource.get());
    cucore_context_options_t c = CUCORE_CONTEXT_OPTIONS_INIT;
    c.sm_resource_count = static_cast<std::uint32_t>(sm.size());
    c.sm_resources = sm.data();
    c.workqueue_resource_count = static_cast<std::uint32_t>(workqueues.size());
    c.workqueue_resources = workqueues.data();
    cucore_context_t *raw = nullptr;
    detail::check(cucore_context_create(device.get(), &c, &raw));
    return adopt(raw);
}

inline DeviceResources Context::resources() const { return DeviceResources(*this); }
inline DeviceResources Device::resources() const { return DeviceResources(*this); }
inline Context Device::create_context(const ContextOptions &options) const { return Context::create(*this, options); }
inline DeviceResources Stream::resources() const { return DeviceResources(*this); }

} // namespace cucore

#endif // CUCORE_DEVICE_RESOURCES_HPP
