#include "core/context.hpp"

#include "core/device.hpp"
#include "core/error.hpp"
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

Context::~Context() {
    if (primary_) {
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
    CUcontext context = nullptr;
    CUCORE_CALL(cuCtxGetCurrent, &context);
    if (!context) throw Error(CUCORE_ERROR_INVALID_STATE, "no CUDA context is current on this thread");
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
