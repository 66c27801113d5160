// C ABI: events.
#include "capi/capi.hpp"

using namespace cucore;

extern "C" {

cucore_status_t cucore_event_create(cucore_device_t *device, const cucore_event_options_t *options,
                                    cucore_event_t **event) {
    return capi::guarded(__func__, [&] {
        cucore_event_t *&result = capi::out(event, "event");
        core::Device &object = capi::get(device, "device");
        uint32_t flags = capi::read_event_flags(options);  // before the primary context is retained
        result = capi::give_new<cucore_event_t>(core::Event::create(object.primary_context(), flags));
    });
}

cucore_status_t cucore_event_create_in_context(cucore_context_t *context, const cucore_event_options_t *options,
                                               cucore_event_t **event) {
    return capi::guarded(__func__, [&] {
        cucore_event_t *&result = capi::out(event, "event");
        core::Context &object = capi::get(context, "context");
        uint32_t flags = capi::read_event_flags(options);  // before the primary context is retained
        result = capi::give_new<cucore_event_t>(core::Event::create(core::Ref<core::Context>(&object), flags));
    });
}

cucore_status_t cucore_event_from_handle(void *cu_event, cucore_release_fn on_release, void *user_data,
                                         cucore_event_t **event) {
    return capi::guarded(__func__, [&] {
        cucore_event_t *&result = capi::out(event, "event");
        capi::require(cu_event, "cu_event");
        result = capi::give<cucore_event_t>(core::Event::wrap(static_cast<CUevent>(cu_event), on_release, user_data));
    });
}

cucore_status_t cucore_event_reset(cucore_event_t *event) {
    return capi::guarded(__func__, [&] {
        capi::get(event, "event").reset();
    });
}

cucore_status_t cucore_event_record(cucore_event_t *event, cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        core::Event &object = capi::get(event, "event");
        object.record(capi::get(stream, "stream"));
    });
}

cucore_status_t cucore_event_synchronize(cucore_event_t *event) {
    return capi::guarded(__func__, [&] { capi::get(event, "event").synchronize(); });
}

cucore_status_t cucore_event_query(cucore_event_t *event, int *done) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(done, "done");
        result = capi::get(event, "event").query() ? 1 : 0;
    });
}

cucore_status_t cucore_event_elapsed_time(cucore_event_t *start, cucore_event_t *end, float *milliseconds) {
    return capi::guarded(__func__, [&] {
        float &result = capi::out(milliseconds, "milliseconds");
        core::Event &first = capi::get(start, "start");
        core::Event &second = capi::get(end, "end");
        result = core::Event::elapsed_ms(first, second);
    });
}

cucore_status_t cucore_event_flags(const cucore_event_t *event, uint32_t *flags) {
    return capi::guarded(__func__, [&] {
        uint32_t &result = capi::out(flags, "flags");
        result = capi::get(event, "event").flags();
    });
}

cucore_status_t cucore_event_device(const cucore_event_t *event, cucore_device_t **device) {
    return capi::guarded(__func__, [&] {
        cucore_device_t *&result = capi::out(device, "device");
        result = capi::give<cucore_device_t>(capi::get(event, "event").context().device_ref());
    });
}

cucore_status_t cucore_event_context(const cucore_event_t *event, cucore_context_t **context) {
    return capi::guarded(__func__, [&] {
        cucore_context_t *&result = capi::out(context, "context");
        result = capi::give<cucore_context_t>(capi::get(event, "event").context_ref());
    });
}

cucore_status_t cucore_event_handle(const cucore_event_t *event, void **cu_event) {
    return capi::guarded(__func__, [&] {
        void *&result = capi::out(cu_event, "cu_event");
        result = capi::get(event, "event").escape();
    });
}

}  // extern "C"
