#include "core/event.hpp"

#include <utility>

#include "core/call_frame.hpp"
#include "core/error.hpp"
#include "core/owned.hpp"
#include "core/release.hpp"
#include "core/stream.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

unsigned driver_event_flags(uint32_t flags) noexcept {
    unsigned driver_flags = CU_EVENT_DEFAULT;
    if (!(flags & CUCORE_EVENT_TIMING)) driver_flags |= CU_EVENT_DISABLE_TIMING;
    if (flags & CUCORE_EVENT_BLOCKING_SYNC) driver_flags |= CU_EVENT_BLOCKING_SYNC;
    // The driver shares only events without timing (cuIpcGetEventHandle).
    if (flags & CUCORE_EVENT_INTERPROCESS) driver_flags |= CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING;
    return driver_flags;
}

namespace {
// A driver event of cucore_event_flag_t `flags` in `context` that no one else uses: a spare of the context's
// (core/event_cache.hpp) when it keeps one of this kind, else a new one.
CUevent fresh_driver_event(Context &context, uint32_t flags) {
    EventCache *spares = context.spare_events();
    CUevent raw = spares ? spares->take(flags) : nullptr;
    if (!raw) {
        ScopedContext bind(context.cu());
        CUCORE_CALL(cuEventCreate, &raw, driver_event_flags(flags));
    }
    return raw;
}
}  // namespace

Ref<Event> Event::create(Ref<Context> context, uint32_t flags) {
    CUevent raw = fresh_driver_event(*context, flags);
    auto created =
        own(raw, [](CUevent unmade) noexcept { destroy_event(unmade, "destroying an event that was not made"); });
    Ref<Event> event = make<Event>(std::move(context), created.get(), flags, true);
    created.release();  // the Event destroys it from here
    return event;
}

Ref<Event> Event::wrap(CUevent event, cucore_release_fn on_release, void *user_data) {
    Ref<Context> context = Context::current();
    Ref<Event> wrapped = make<Event>(std::move(context), event, 0u, false);
    wrapped->owner_.set(on_release, user_data);
    return wrapped;
}

Event::Event(Ref<Context> context, CUevent event, uint32_t flags, bool owned) noexcept
    : Object(CUCORE_OBJECT_EVENT),
      context_(std::move(context)),
      cu_context_(context_->cu()),
      event_(event),
      flags_(flags),
      owned_(owned),
      reusable_(owned && !(flags & CUCORE_EVENT_INTERPROCESS)) {}

void destroy_event(CUevent event, const char *what) noexcept {
    // cuEventDestroy names its event, so no context is bound (see ScopedContext).
    release_reported("cuEventDestroy", what, [event](const driver::Table &api) {
        return api.cuEventDestroy ? api.cuEventDestroy(event) : CUDA_ERROR_NOT_INITIALIZED;
    });
}

bool Event::reusable_now() const noexcept {
    if (!reusable_.load(std::memory_order_relaxed)) return false;
    if (!recorded_.load(std::memory_order_relaxed)) return true;
    // A timing event keeps the timestamp of its last record, which the driver would show (elapsed time
    // through a raw handle, or once a graph may record it) where a new event has none; an untimed event has
    // no timestamp, so once its record completes the driver answers as for a new one.
    if (flags_ & CUCORE_EVENT_TIMING) return false;
    // Recorded only on the library's own streams outside any capture (else not reusable): the query can
    // neither meet a captured record nor disturb a capture.
    const driver::Table *api = driver::peek();
    return api && api->cuEventQuery && api->cuEventQuery(event_) == CUDA_SUCCESS;
}

Event::~Event() {
    if (!owned_) {
        owner_.notify();
        return;
    }
    EventCache *spares = context_->spare_events();
    if (spares && reusable_now() && spares->give(flags_, event_)) return;
    destroy_event(event_, "destroying an event");
}

void Event::reset() {
    // The caller's one reference, and the holds of the running C ABI call (call_frame.hpp).
    if (!handles::held_only_by(this, 1 + CallFrame::holds(this)))
        throw Error(CUCORE_ERROR_INVALID_STATE, "argument 'event' is held elsewhere too (another reference, a graph "
                                                "or a capture); release it instead");
    if (!owned_)
        throw Error(CUCORE_ERROR_INVALID_STATE, "argument 'event' wraps a foreign CUevent (cucore_event_from_handle), "
                                                "which the library cannot renew");
    if (!reusable_now()) {
        // Someone may still use (or read the past of) this driver event: a spare or a new one takes its place.
        destroy_event(std::exchange(event_, fresh_driver_event(*context_, flags_)),
                      "destroying an event's driver event replaced by a reset");
    }
    recorded_.store(false, std::memory_order_relaxed);
    reusable_.store(!(flags_ & CUCORE_EVENT_INTERPROCESS), std::memory_order_relaxed);
}

void Event::record(Stream &stream) {
    // The event names its context; only a default stream depends on the current one.
    ScopedContext bind(cu_context_, stream.is_builtin());
    CUCORE_CALL(cuEventRecord, event_, stream.cu());
    recorded_.store(true, std::memory_order_relaxed);
    // A capture, seen or not, may hold this record after the event goes: its driver event is not reused.
    if (__builtin_expect(stream.shared() || stream.capture_sink() != nullptr, 0)) {
        reusable_.store(false, std::memory_order_relaxed);
        hold_for_capture(stream, *this);
    }
}

void Event::synchronize() {
    CUCORE_CALL(cuEventSynchronize, event_);
}

bool Event::query() {
    CUresult result = CUCORE_DRIVER(cuEventQuery)(event_);
    if (result == CUDA_ERROR_NOT_READY) return false;
    check(result, "cuEventQuery");
    return true;
}

float Event::elapsed_ms(Event &start, Event &end) {
    // Owned events know their flags and whether they were recorded, so these
    // errors are explained here rather than left to the driver's generic codes.
    for (Event *event : {&start, &end}) {
        const char *which = event == &start ? "start" : "end";
        if (event->owned_ && !(event->flags_ & CUCORE_EVENT_TIMING))
            throw Error(CUCORE_ERROR_INVALID_STATE, std::string("event '") + which +
                                                        "' was created without CUCORE_EVENT_TIMING, so it "
                                                        "has no timestamp");
        if (event->owned_ && !event->recorded_.load(std::memory_order_relaxed))
            throw Error(CUCORE_ERROR_INVALID_STATE,
                        std::string("event '") + which + "' has never been recorded");
    }
    float ms = 0.0f;
    CUresult result = CUCORE_DRIVER(cuEventElapsedTime)(&ms, start.event_, end.event_);
    if (result == CUDA_ERROR_NOT_READY)
        throw Error(CUCORE_ERROR_NOT_READY, "the work recorded by the events has not completed yet "
                                            "(cuEventElapsedTime: CUDA_ERROR_NOT_READY); synchronize first",
                    result);
    check(result, "cuEventElapsedTime");
    return ms;
}

}  // namespace cucore::core
