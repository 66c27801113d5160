#include "core/device_resources.hpp"

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "core/context.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

namespace {

// Groups and the remainder of one split share an id; whole resources have 0.
std::atomic<uint64_t> g_next_split_id{1};

std::string text(uint64_t value) { return std::to_string(value); }

// A workqueue resource needs a CUDA 13.1 driver: older ones do not know the
// resource type (driver 580 = CUDA 13.0 answers it as an invalid resource type).
void require_workqueue_driver(const char *call) {
    const int version = Device::driver_version();
    if (version < kWorkqueueDriverVersion)
        throw Error(CUCORE_ERROR_NOT_SUPPORTED,
                    std::string("workqueue resources (") + call +
                        " with CU_DEV_RESOURCE_TYPE_WORKQUEUE_CONFIG) need a CUDA 13.1 driver; this driver is CUDA " +
                        text(version / 1000) + "." + text(version % 1000 / 10));
}

// The driver's answer for a workqueue resource: a refusal of the type itself is NOT_SUPPORTED with the reason.
void check_workqueue_result(CUresult result, const char *call) {
    if (result == CUDA_ERROR_INVALID_RESOURCE_TYPE || result == CUDA_ERROR_NOT_SUPPORTED)
        throw Error(CUCORE_ERROR_NOT_SUPPORTED,
                    std::string(call) + " refused CU_DEV_RESOURCE_TYPE_WORKQUEUE_CONFIG (" + cuda_error_name(result) +
                        "): this driver does not offer workqueue resources",
                    static_cast<int>(result));
    check(result, call);
}

}  // namespace

WorkqueueConfig workqueue_config_of(const CUdevResource &resource) noexcept {
    WorkqueueConfig config;
    std::memcpy(&config, reinterpret_cast<const unsigned char *>(&resource) + kResourceUnionOffset, sizeof config);
    return config;
}

void set_workqueue_config(CUdevResource &resource, const WorkqueueConfig &config) noexcept {
    std::memcpy(reinterpret_cast<unsigned char *>(&resource) + kResourceUnionOffset, &config, sizeof config);
}

CUdevResource context_resource(Context &context, int type) {
    CUdevResource resource;
    std::memset(&resource, 0, sizeof resource);
    const auto driver_type = static_cast<CUdevResourceType>(type);
    const bool workqueue = type == kResourceTypeWorkqueueConfig;
    if (workqueue) require_workqueue_driver(context.is_green() ? "cuGreenCtxGetDevResource" : "cuCtxGetDevResource");
    CUresult result;
    const char *call;
    if (context.is_green()) {
        call = "cuGreenCtxGetDevResource";
        result = CUCORE_DRIVER(cuGreenCtxGetDevResource)(context.green(), &resource, driver_type);
    } else {
        call = "cuCtxGetDevResource";
        result = CUCORE_DRIVER(cuCtxGetDevResource)(context.cu(), &resource, driver_type);
    }
    if (workqueue)
        check_workqueue_result(result, call);
    else
        check(result, call);
    return resource;
}

// ---- SM resources ----

SmResource::SmResource(Ref<Device> device, const CUdevResource &resource, Origin origin, uint64_t split_id) noexcept
    : Object(CUCORE_OBJECT_SM_RESOURCE),
      device_(std::move(device)),
      resource_(resource),
      origin_(origin),
      split_id_(split_id) {}

SmResource::~SmResource() = default;

Ref<SmResource> SmResource::of_device(Device &device) {
    CUdevResource resource;
    std::memset(&resource, 0, sizeof resource);
    CUCORE_CALL(cuDeviceGetDevResource, device.cu(), &resource, CU_DEV_RESOURCE_TYPE_SM);
    return make<SmResource>(Ref<Device>(&device), resource, Origin::whole, 0);
}

Ref<SmResource> SmResource::of_context(Context &context) {
    CUdevResource resource = context_resource(context, CU_DEV_RESOURCE_TYPE_SM);
    return make<SmResource>(context.device_ref(), resource, Origin::whole, 0);
}

cucore_sm_resource_info_t SmResource::info() const noexcept {
    cucore_sm_resource_info_t info = CUCORE_SM_RESOURCE_INFO_INIT;
    if (resource_.type != CU_DEV_RESOURCE_TYPE_SM) return info;  // an empty remainder
    info.sm_count = resource_.sm.smCount;
    info.min_partition_size = resource_.sm.minSmPartitionSize;
    info.coscheduled_alignment = resource_.sm.smCoscheduledAlignment;
    // CUDA 13.1 added a flags word after the alignment (0 from older drivers: the struct is zeroed first).
    uint32_t flags = 0;
    std::memcpy(&flags, reinterpret_cast<const unsigned char *>(&resource_) + kResourceUnionOffset + 12, sizeof flags);
    info.flags = flags;
    return info;
}

cucore_sm_resource_split_info_t SmResource::split(const cucore_sm_resource_split_options_t &options,
                                                  uint32_t capacity, bool make_handles,
                                                  std::vector<Ref<SmResource>> *groups,
                                                  Ref<SmResource> *remainder) const {
    if (origin_ != Origin::whole)
        throw_invalid_argument(std::string("argument 'resource' is ") +
                               (origin_ == Origin::group ? "a group" : "the remainder") +
                               " of an earlier split, which the driver cannot split again: make a green context "
                               "of it and split that context's SM resource");
    const cucore_sm_resource_info_t have = info();
    if (have.sm_count == 0) throw_invalid_argument("argument 'resource' has no SMs to split");
    const bool ignore_coscheduling = (options.flags & CUCORE_SM_SPLIT_IGNORE_SM_COSCHEDULING) != 0;
    // 0: the smallest group the rules allow (the minimum partition, rounded up to the alignment).
    const uint32_t align = have.coscheduled_alignment > 1 ? have.coscheduled_alignment : 1;
    const uint32_t per_group =
        options.sm_count ? options.sm_count : (have.min_partition_size + align - 1) / align * align;
    if (per_group > have.sm_count)
        throw_invalid_argument("options.sm_count (" + text(per_group) + ") is more SMs than the resource has (" +
                               text(have.sm_count) + ")");
    if (!ignore_coscheduling) {
        if (per_group < have.min_partition_size)
            throw_invalid_argument("options.sm_count (" + text(per_group) +
                                   ") is below the resource's minimum partition size (" +
                                   text(have.min_partition_size) +
                                   " SMs); ask for more, or set CUCORE_SM_SPLIT_IGNORE_SM_COSCHEDULING");
        if (have.coscheduled_alignment > 1 && per_group % have.coscheduled_alignment != 0)
            throw_invalid_argument("options.sm_count (" + text(per_group) +
                                   ") is not a multiple of the resource's co-scheduled alignment (" +
                                   text(have.coscheduled_alignment) +
                                   " SMs); round it, or set CUCORE_SM_SPLIT_IGNORE_SM_COSCHEDULING");
    }
    if (options.group_count != 0 && uint64_t(options.group_count) * per_group > have.sm_count)
        throw_invalid_argument("options.group_count (" + text(options.group_count) + ") groups of " +
                               text(per_group) + " SMs need " + text(uint64_t(options.group_count) * per_group) +
                               " SMs, more than the resource's " + text(have.sm_count));

    unsigned wanted = options.group_count;
    if (wanted == 0) {  // as many as fit: the driver's dry run says how many
        unsigned fit = 0;
        CUCORE_CALL(cuDevSmResourceSplitByCount, nullptr, &fit, &resource_, nullptr, options.flags, per_group);
        wanted = (make_handles && fit > capacity) ? capacity : fit;
        if (wanted == 0)
            throw_invalid_argument("no group of " + text(per_group) + " SMs fits in the resource's " +
                                   text(have.sm_count) + " SMs");
    }
    std::vector<CUdevResource> results(wanted);
    std::memset(results.data(), 0, results.size() * sizeof(CUdevResource));
    CUdevResource rest;
    std::memset(&rest, 0, sizeof rest);
    unsigned made = wanted;
    CUCORE_CALL(cuDevSmResourceSplitByCount, results.data(), &made, &resource_, &rest, options.flags, per_group);
    if (made > wanted) made = wanted;  // never trust a count past the array
    if (options.group_count != 0 && made < options.group_count)
        throw_invalid_argument("only " + text(made) + " groups of " + text(per_group) + " SMs fit in the resource's " +
                               text(have.sm_count) + " SMs (options.group_count asks for " +
                               text(options.group_count) +
                               "): the GPU's processing clusters leave fewer whole groups; ask for fewer or smaller "
                               "groups");

    cucore_sm_resource_split_info_t info = CUCORE_SM_RESOURCE_SPLIT_INFO_INIT;
    info.group_count = made;
    info.group_sm_count = made ? results[0].sm.smCount : 0;
    info.remainder_sm_count = rest.type == CU_DEV_RESOURCE_TYPE_SM ? rest.sm.smCount : 0;
    if (!make_handles) return info;
    const uint64_t id = g_next_split_id.fetch_add(1, std::memory_order_relaxed);
    std::vector<Ref<SmResource>> made_groups;
    made_groups.reserve(made);
    for (unsigned i = 0; i < made; ++i) made_groups.push_back(make<SmResource>(device_, results[i], Origin::group, id));
    Ref<SmResource> made_remainder = make<SmResource>(device_, rest, Origin::remainder, id);
    *groups = std::move(made_groups);
    if (remainder) *remainder = std::move(made_remainder);
    return info;
}

// ---- workqueue resources ----

WorkqueueResource::WorkqueueResource(Ref<Device> device, const CUdevResource &resource) noexcept
    : Object(CUCORE_OBJECT_WORKQUEUE_RESOURCE), device_(std::move(device)), resource_(resource) {}

WorkqueueResource::~WorkqueueResource() = default;

Ref<WorkqueueResource> WorkqueueResource::of_device(Device &device) {
    require_workqueue_driver("cuDeviceGetDevResource");
    CUdevResource resource;
    std::memset(&resource, 0, sizeof resource);
    check_workqueue_result(CUCORE_DRIVER(cuDeviceGetDevResource)(
                               device.cu(), &resource, static_cast<CUdevResourceType>(kResourceTypeWorkqueueConfig)),
                           "cuDeviceGetDevResource");
    return make<WorkqueueResource>(Ref<Device>(&device), resource);
}

Ref<WorkqueueResource> WorkqueueResource::of_context(Context &context) {
    CUdevResource resource = context_resource(context, kResourceTypeWorkqueueConfig);
    return make<WorkqueueResource>(context.device_ref(), resource);
}

cucore_workqueue_resource_info_t WorkqueueResource::info() const {
    const WorkqueueConfig config = workqueue_config_of(cu());
    cucore_workqueue_resource_info_t info = CUCORE_WORKQUEUE_RESOURCE_INFO_INIT;
    info.sharing_scope = config.sharing_scope == kWorkqueueScopeGreenCtxBalanced
                             ? CUCORE_WORKQUEUE_SHARING_SCOPE_GREEN_CTX_BALANCED
                             : CUCORE_WORKQUEUE_SHARING_SCOPE_DEVICE_CTX;
    info.concurrency_limit = config.concurrency_limit;
    return info;
}

void WorkqueueResource::configure(const cucore_workqueue_resource_options_t &options) {
    std::lock_guard<std::mutex> lock(mutex_);
    WorkqueueConfig config = workqueue_config_of(resource_);
    if (options.sharing_scope == CUCORE_WORKQUEUE_SHARING_SCOPE_DEVICE_CTX)
        config.sharing_scope = kWorkqueueScopeDeviceCtx;
    else if (options.sharing_scope == CUCORE_WORKQUEUE_SHARING_SCOPE_GREEN_CTX_BALANCED)
        config.sharing_scope = kWorkqueueScopeGreenCtxBalanced;
    if (options.concurrency_limit != 0) config.concurrency_limit = options.concurrency_limit;
    set_workqueue_config(resource_, config);
}

CUdevResource WorkqueueResource::cu() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return resource_;
}

}  // namespace cucore::core
