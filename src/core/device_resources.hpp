// Device resources: the SM and workqueue resources of a device, context or
// stream, and SM splits. Plain descriptions (a CUdevResource each): reading and
// splitting them makes nothing on the device; a green context is made of them
// (Context::create_green).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "core/handle.hpp"
#include "core/thread_cache.hpp"
#include "cucore/device_resources.h"

namespace cucore::core {

class Context;
class Device;

// CUDA 13.1 added workqueue resources; the 13.0 headers this builds with lack
// them. The values and the layout below are 13.1's cuda.h (the CUdevResource
// union at byte 96, 40 bytes, then a nextResource pointer, 144 bytes in all,
// the same size as 13.0's), kept here, never in a public header.
constexpr int kResourceTypeWorkqueueConfig = 1000;  // CU_DEV_RESOURCE_TYPE_WORKQUEUE_CONFIG
constexpr int kWorkqueueScopeDeviceCtx = 0;         // CU_WORKQUEUE_SCOPE_DEVICE_CTX
constexpr int kWorkqueueScopeGreenCtxBalanced = 1;  // CU_WORKQUEUE_SCOPE_GREEN_CTX_BALANCED
constexpr int kWorkqueueDriverVersion = 13010;      // the first driver that knows them
// CUdevWorkqueueConfigResource, at the union's offset.
struct WorkqueueConfig {
    CUdevice device;
    unsigned int concurrency_limit;  // wqConcurrencyLimit
    int sharing_scope;               // CUdevWorkqueueConfigScope
};
constexpr size_t kResourceUnionOffset = 96;
static_assert(sizeof(CUdevResource) == 144, "CUdevResource is 144 bytes in CUDA 12.4 to 13.1");
static_assert(offsetof(CUdevResource, sm) == kResourceUnionOffset, "the union of CUdevResource at byte 96");

WorkqueueConfig workqueue_config_of(const CUdevResource &resource) noexcept;
void set_workqueue_config(CUdevResource &resource, const WorkqueueConfig &config) noexcept;

// Where the driver answers the resources of a context: its green context's or the context's own.
CUdevResource context_resource(Context &context, int type);

class SmResource final : public Object, public Pooled<SmResource> {
  public:
    // Where a resource came from: groups and a remainder of one split share a
    // split id (a whole resource has none), which a green context checks.
    enum class Origin { whole, group, remainder };

    static Ref<SmResource> of_device(Device &device);
    static Ref<SmResource> of_context(Context &context);

    SmResource(Ref<Device> device, const CUdevResource &resource, Origin origin, uint64_t split_id) noexcept;
    ~SmResource() override;

    cucore_sm_resource_info_t info() const noexcept;
    // Checks options against this resource (INVALID_ARGUMENT naming the rule),
    // then splits; `capacity` (at least options.group_count: capi checks it)
    // bounds the groups made when group_count is 0. A dry run (make false)
    // has no bound and makes no handle; else `groups` and `remainder` get them.
    cucore_sm_resource_split_info_t split(const cucore_sm_resource_split_options_t &options, uint32_t capacity,
                                          bool make, std::vector<Ref<SmResource>> *groups,
                                          Ref<SmResource> *remainder) const;

    const CUdevResource &cu() const noexcept { return resource_; }
    Device &device() const noexcept { return *device_; }
    Origin origin() const noexcept { return origin_; }
    uint64_t split_id() const noexcept { return split_id_; }

  private:
    Ref<Device> device_;
    CUdevResource resource_;
    Origin origin_;
    uint64_t split_id_;
};

class WorkqueueResource final : public Object, public Pooled<WorkqueueResource> {
  public:
    static Ref<WorkqueueResource> of_device(Device &device);
    static Ref<WorkqueueResource> of_context(Context &context);

    WorkqueueResource(Ref<Device> device, const CUdevResource &resource) noexcept;
    ~WorkqueueResource() override;

    cucore_workqueue_resource_info_t info() const;
    // A zero field leaves its value (the options are checked by capi).
    void configure(const cucore_workqueue_resource_options_t &options);
    // A copy of the driver's description as configured now.
    CUdevResource cu() const;
    Device &device() const noexcept { return *device_; }
    const Ref<Device> &device_ref() const noexcept { return device_; }

  private:
    Ref<Device> device_;
    mutable std::mutex mutex_;  // configure() may race with a context being made of it
    CUdevResource resource_;
};

}  // namespace cucore::core
