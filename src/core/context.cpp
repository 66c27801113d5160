#include "core/context.hpp"

#include <string>

#include "core/device.hpp"
#include "core/device_resources.hpp"
#include "core/error.hpp"
#include "core/owned.hpp"
#include "core/release.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

ScopedContext::ScopedContext(CUcontext context, bool needed) {
    if (!needed) return;
    CUCORE_CALL(cuCtxGetCurrent, &previous_);
    if (previous_ != context) {
        CUCORE_CALL(cuCtxSetCurrent, context);
        switched_ = true;
    }
}

ScopedContext::ScopedContext(CUcontext context, RestoreAlways) {
    CUCORE_CALL(cuCtxGetCurrent, &previous_);
    if (context && previous_ != context) CUCORE_CALL(cuCtxSetCurrent, context);
    switched_ = true;
}

ScopedContext::ScopedContext(CUcontext context, ReleasePath release) noexcept {
    const driver::Table *api = driver::peek();
    if (!api) return;  // no driver: the release call itself reports that
    CUresult result = api->cuCtxGetCurrent ? api->cuCtxGetCurrent(&previous_) : CUDA_ERROR_NOT_INITIALIZED;
    if (result != CUDA_SUCCESS) {
        report_release_failure(result, "cuCtxGetCurrent", release.what);
        return;
    }
    if (previous_ == context) return;
    result = api->cuCtxSetCurrent ? api->cuCtxSetCurrent(context) : CUDA_ERROR_NOT_INITIALIZED;
    if (result != CUDA_SUCCESS) {
        report_release_failure(result, "cuCtxSetCurrent", release.what);
        return;
    }
    switched_ = true;
}

ScopedContext::~ScopedContext() {
    if (!switched_) return;
    const driver::Table *api = driver::peek();
    CUresult result = api && api->cuCtxSetCurrent ? api->cuCtxSetCurrent(previous_) : CUDA_ERROR_NOT_INITIALIZED;
    if (result != CUDA_SUCCESS)
        report_release_failure(result, "cuCtxSetCurrent", "restoring the caller's current context");
}

int device_ordinal_of(CUcontext context) {
    CUdevice device = 0;
    {
        ScopedContext bind(context);
        CUCORE_CALL(cuCtxGetDevice, &device);
    }
    return Device::ordinal_of(device);
}

void release_primary_context(CUdevice device, const char *what) noexcept {
    release_reported("cuDevicePrimaryCtxRelease", what, [device](const driver::Table &api) {
        return api.cuDevicePrimaryCtxRelease ? api.cuDevicePrimaryCtxRelease(device) : CUDA_ERROR_NOT_INITIALIZED;
    });
}

Context::Context(Ref<Device> device, CUcontext context, bool primary) noexcept
    : Object(CUCORE_OBJECT_CONTEXT), device_(std::move(device)), context_(context), primary_(primary) {}

namespace {

void destroy_green_context(CUgreenCtx green, const char *what) noexcept {
    // cuGreenCtxDestroy names its green context, so no context is bound (see ScopedContext).
    release_reported("cuGreenCtxDestroy", what, [green](const driver::Table &api) {
        return api.cuGreenCtxDestroy ? api.cuGreenCtxDestroy(green) : CUDA_ERROR_NOT_INITIALIZED;
    });
}

// The driver's rules for the resources of one green context, checked before
// any call so that a refusal names the rule (the driver answers
// INVALID_RESOURCE_CONFIGURATION for all of them).
void check_green_resources(Device &device, const std::vector<SmResource *> &sm,
                           const std::vector<WorkqueueResource *> &workqueues) {
    if (sm.empty() && workqueues.empty())
        throw_invalid_argument("argument 'options' names no resource: a green context is made of SM and/or "
                               "workqueue resources");
    if (workqueues.size() > 1)
        throw_invalid_argument("argument 'options' names " + std::to_string(workqueues.size()) +
                               " workqueue resources; a green context takes at most one");
    for (size_t i = 0; i < sm.size(); ++i) {
        const std::string name = "options.sm_resources[" + std::to_string(i) + "]";
        if (sm[i]->device().ordinal() != device.ordinal())
            throw_invalid_argument(name + " is of device " + std::to_string(sm[i]->device().ordinal()) +
                                   ", not of device " + std::to_string(device.ordinal()));
        if (sm[i]->info().sm_count == 0) throw_invalid_argument(name + " has no SMs");
        if (sm.size() > 1 && (sm[i]->split_id() == 0 || sm[i]->split_id() != sm[0]->split_id()))
            throw_invalid_argument("options.sm_resources: several SM resources must be groups or the remainder of "
                                   "one split (" + name + " is not of the split of options.sm_resources[0])");
        for (size_t j = 0; j < i; ++j)
            if (sm[j] == sm[i])
                throw_invalid_argument(name + " is options.sm_resources[" + std::to_string(j) +
                                       " again; each SM resource may be named once");
    }
    for (size_t i = 0; i < workqueues.size(); ++i)
        if (workqueues[i]->device().ordinal() != device.ordinal())
            throw_invalid_argument("options.workqueue_resources[" + std::to_string(i) + "] is of device " +
                                   std::to_string(workqueues[i]->device().ordinal()) + ", not of device " +
                                   std::to_string(device.ordinal()));
}

}  // namespace

Ref<Context> Context::create_green(Device &device, const std::vector<SmResource *> &sm,
                                   const std::vector<WorkqueueResource *> &workqueues) {
    check_green_resources(device, sm, workqueues);
    std::vector<CUdevResource> resources;
    resources.reserve(sm.size() + workqueues.size());
    for (SmResource *resource : sm) resources.push_back(resource->cu());
    for (WorkqueueResource *resource : workqueues) resources.push_back(resource->cu());
    // A descriptor is plain data for the driver (there is no call to destroy one).
    CUdevResourceDesc desc = nullptr;
    CUCORE_CALL(cuDevResourceGenerateDesc, &desc, resources.data(), static_cast<unsigned>(resources.size()));
    CUgreenCtx raw = nullptr;
    CUCORE_CALL(cuGreenCtxCreate, &raw, desc, device.cu(), CU_GREEN_CTX_DEFAULT_STREAM);
    auto created = own(raw, [](CUgreenCtx unmade) noexcept {
        destroy_green_context(unmade, "destroying a green context that was not made");
    });
    CUcontext converted = nullptr;
    CUCORE_CALL(cuCtxFromGreenCtx, &converted, created.get());
    std::vector<Ref<Object>> held;
    held.reserve(sm.size() + workqueues.size());
    for (SmResource *resource : sm) held.emplace_back(resource);
    for (WorkqueueResource *resource : workqueues) held.emplace_back(resource);
    Ref<Context> context = make<Context>(Ref<Device>(&device), converted, false);
    context->resources_ = std::move(held);
    context->green_ = created.release();  // the Context destroys it from here
    return context;
}

Context::~Context() {
    events_.drain();  // while the driver context still exists
    if (green_) {
        destroy_green_context(green_, "destroying a green context");
    } else if (primary_) {
        device_->forget_primary(this);
        release_primary_context(device_->cu(), "releasing a primary context");
    } else {
        owner_.notify();
    }
}

Ref<Context> Context::primary(Device &device) { return device.primary_context(); }

Ref<Context> Context::wrap(CUcontext context, cucore_release_fn on_release, void *user_data) {
    Ref<Device> device = Device::get(device_ordinal_of(context), false);
    Ref<Context> wrapped = make<Context>(std::move(device), context, false);
    wrapped->owner_.set(on_release, user_data);
    return wrapped;
}

Ref<Context> Context::current() {
    Ref<Context> context = current_if_any();
    if (!context) throw Error(CUCORE_ERROR_INVALID_STATE, "no CUDA context is current on this thread");
    return context;
}

Ref<Context> Context::current_if_any() {
    CUcontext context = nullptr;
    CUCORE_CALL(cuCtxGetCurrent, &context);
    if (!context) return {};
    Ref<Device> device = Device::get(device_ordinal_of(context), false);
    if (Ref<Context> primary = device->primary_if_alive(); primary && primary->cu() == context) return primary;
    return make<Context>(std::move(device), context, false);
}

void Context::set_current() { CUCORE_CALL(cuCtxSetCurrent, context_); }

void Context::synchronize() {
    ScopedContext bind(context_);
    CUCORE_CALL(cuCtxSynchronize);
}

}  // namespace cucore::core
