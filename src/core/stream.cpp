#include "core/stream.hpp"

#include "core/device.hpp"
#include "core/error.hpp"
#include "core/event.hpp"
#include "core/graph_attachments.hpp"
#include "core/owned.hpp"
#include "core/release.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

Ref<Stream> Stream::create(Ref<Context> context, uint32_t flags, int priority) {
    CUstream raw = nullptr;
    unsigned driver_flags = (flags & CUCORE_STREAM_BLOCKING) ? CU_STREAM_DEFAULT : CU_STREAM_NON_BLOCKING;
    if (context->is_green()) {  // the driver takes only non-blocking streams of a green context
        if (flags & CUCORE_STREAM_BLOCKING)
            throw_invalid_argument("options.flags: a stream of a green context cannot be blocking (the driver's "
                                   "cuGreenCtxStreamCreate requires CU_STREAM_NON_BLOCKING)");
        ScopedContext bind(context->cu());
        CUCORE_CALL(cuGreenCtxStreamCreate, &raw, context->green(), CU_STREAM_NON_BLOCKING, priority);
    } else {
        ScopedContext bind(context->cu());
        CUCORE_CALL(cuStreamCreateWithPriority, &raw, driver_flags, priority);
    }
    auto created =
        own(raw, [](CUstream unmade) noexcept { destroy_stream(unmade, "destroying a stream that was not made"); });
    Ref<Stream> stream = make<Stream>(std::move(context), created.get(), true);
    created.release();  // the Stream destroys it from here
    return stream;
}

Ref<Stream> Stream::builtin(Ref<Context> context, CUstream which) {
    return make<Stream>(std::move(context), which, false);
}

Ref<Stream> Stream::wrap(CUstream stream, cucore_release_fn on_release, void *user_data) {
    Ref<Context> context;
    if (stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD || stream == nullptr) {
        context = Context::current();
    } else {
        CUcontext cu_context = nullptr;
        CUCORE_CALL(cuStreamGetCtx, stream, &cu_context);
        Ref<Device> device = Device::get(device_ordinal_of(cu_context), false);
        Ref<Context> primary = device->primary_if_alive();
        context = (primary && primary->cu() == cu_context)
                      ? primary
                      : make<Context>(std::move(device), cu_context, false);
    }
    Ref<Stream> wrapped = make<Stream>(std::move(context), stream, false);
    wrapped->owner_.set(on_release, user_data);
    return wrapped;
}

Stream::Stream(Ref<Context> context, CUstream stream, bool owned) noexcept
    : Object(CUCORE_OBJECT_STREAM),
      context_(std::move(context)),
      cu_context_(context_->cu()),
      device_ordinal_(context_->device().ordinal()),
      stream_(stream),
      builtin_(stream == nullptr || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD),
      owned_(owned),
      shared_(builtin_ || !owned) {}

void destroy_stream(CUstream stream, const char *what) noexcept {
    // cuStreamDestroy names its stream, so no context is bound (see ScopedContext).
    release_reported("cuStreamDestroy", what, [stream](const driver::Table &api) {
        return api.cuStreamDestroy ? api.cuStreamDestroy(stream) : CUDA_ERROR_NOT_INITIALIZED;
    });
}

Stream::~Stream() {
    if (owned_)
        destroy_stream(stream_, "destroying a stream");
    else
        owner_.notify();
}

void Stream::refuse_during_capture(const char *call) const {
    if (__builtin_expect(capture_sink() != nullptr, 0))
        throw Error(CUCORE_ERROR_INVALID_STATE,
                    std::string(call) +
                        " is not allowed while the stream is being captured into a graph (a graph builder is "
                        "building on it); the capture goes on: end it first to wait for the stream");
}

void hold_for_capture_slow(Stream &stream, Object &object) {
    if (GraphAttachments *sink = stream.capture_sink()) sink->keep(Ref<Object>(&object));
}

void Stream::synchronize() {
    refuse_during_capture("synchronizing a stream");
    ScopedContext bind(cu_context_, builtin_);
    CUCORE_CALL(cuStreamSynchronize, stream_);
}

bool Stream::query() {
    refuse_during_capture("querying a stream");
    ScopedContext bind(cu_context_, builtin_);
    CUresult result = CUCORE_DRIVER(cuStreamQuery)(stream_);
    if (result == CUDA_ERROR_NOT_READY) return false;
    check(result, "cuStreamQuery");
    return true;
}

void Stream::wait(Event &event) {
    ScopedContext bind(cu_context_, builtin_);
    CUCORE_CALL(cuStreamWaitEvent, stream_, event.cu(), 0);
    if (__builtin_expect(capture_sink() != nullptr, 0)) {
        event.note_graph_use(false);
        hold_for_capture_slow(*this, event);
    }
}

void Stream::wait(Stream &other) {
    // A temporary event in the other stream's context, destroyed once queued
    // (the driver keeps what the wait needs).
    CUevent raw = nullptr;
    {
        ScopedContext bind(other.context_->cu());
        CUCORE_CALL(cuEventCreate, &raw, CU_EVENT_DISABLE_TIMING);
    }
    auto marker = own(raw, [](CUevent event) noexcept { destroy_event(event, "destroying a stream-wait marker"); });
    {
        ScopedContext bind(other.cu_context_, other.builtin_);
        CUCORE_CALL(cuEventRecord, marker.get(), other.stream_);
    }
    ScopedContext bind(cu_context_, builtin_);
    CUCORE_CALL(cuStreamWaitEvent, stream_, marker.get(), 0);
}

Ref<Event> Stream::record(uint32_t event_flags) {
    Ref<Event> event = Event::create(context_, event_flags);
    event->record(*this);
    return event;
}

void Stream::launch_host_func(cucore_host_fn fn, void *user_data) {
    ScopedContext bind(cu_context_, builtin_);
    CUCORE_CALL(cuLaunchHostFunc, stream_, fn, user_data);
}

cucore_capture_status_t Stream::capture_status() {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    ScopedContext bind(cu_context_, builtin_);
    CUCORE_CALL(cuStreamIsCapturing, stream_, &status);
    static_assert(static_cast<int>(CUCORE_CAPTURE_STATUS_INVALIDATED) == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
    return static_cast<cucore_capture_status_t>(status);
}

int Stream::priority() {
    int priority = 0;
    ScopedContext bind(cu_context_, builtin_);
    CUCORE_CALL(cuStreamGetPriority, stream_, &priority);
    return priority;
}

uint32_t Stream::flags() {
    unsigned driver_flags = 0;
    ScopedContext bind(cu_context_, builtin_);
    CUCORE_CALL(cuStreamGetFlags, stream_, &driver_flags);
    return (driver_flags & CU_STREAM_NON_BLOCKING) ? 0u : uint32_t{CUCORE_STREAM_BLOCKING};
}

void stream_priority_range(Context &context, int &least, int &greatest) {
    ScopedContext bind(context.cu());
    CUCORE_CALL(cuCtxGetStreamPriorityRange, &least, &greatest);
}

}  // namespace cucore::core
