// C ABI: streams.
#include "capi/capi.hpp"

using namespace cucore;

namespace {
constexpr cucore_stream_options_t kStreamDefaults = CUCORE_STREAM_OPTIONS_INIT;

cucore_stream_options_t stream_options(const cucore_stream_options_t *options) {
    cucore_stream_options_t resolved = capi::read_options(options, kStreamDefaults, "options");
    capi::check_flags(resolved.flags, CUCORE_STREAM_BLOCKING, "options.flags");
    return resolved;
}
}  // namespace

extern "C" {

cucore_status_t cucore_stream_create(cucore_device_t *device, const cucore_stream_options_t *options,
                                     cucore_stream_t **stream) {
    return capi::guarded(__func__, [&] {
        cucore_stream_t *&result = capi::out(stream, "stream");
        core::Device &object = capi::get(device, "device");
        cucore_stream_options_t resolved = stream_options(options);
        result = capi::give_new<cucore_stream_t>(
            core::Stream::create(object.primary_context(), resolved.flags, resolved.priority));
    });
}

cucore_status_t cucore_stream_create_in_context(cucore_context_t *context, const cucore_stream_options_t *options,
                                                cucore_stream_t **stream) {
    return capi::guarded(__func__, [&] {
        cucore_stream_t *&result = capi::out(stream, "stream");
        core::Context &object = capi::get(context, "context");
        cucore_stream_options_t resolved = stream_options(options);
        result = capi::give_new<cucore_stream_t>(
            core::Stream::create(core::Ref<core::Context>(&object), resolved.flags, resolved.priority));
    });
}

cucore_status_t cucore_stream_get_legacy_default(cucore_device_t *device, cucore_stream_t **stream) {
    return capi::guarded(__func__, [&] {
        cucore_stream_t *&result = capi::out(stream, "stream");
        core::Device &object = capi::get(device, "device");
        result = capi::give<cucore_stream_t>(core::Stream::builtin(object.primary_context(), CU_STREAM_LEGACY));
    });
}

cucore_status_t cucore_stream_get_per_thread_default(cucore_device_t *device, cucore_stream_t **stream) {
    return capi::guarded(__func__, [&] {
        cucore_stream_t *&result = capi::out(stream, "stream");
        core::Device &object = capi::get(device, "device");
        result = capi::give<cucore_stream_t>(core::Stream::builtin(object.primary_context(), CU_STREAM_PER_THREAD));
    });
}

cucore_status_t cucore_stream_from_handle(void *cu_stream, cucore_release_fn on_release, void *user_data,
                                          cucore_stream_t **stream) {
    return capi::guarded(__func__, [&] {
        cucore_stream_t *&result = capi::out(stream, "stream");
        result = capi::give<cucore_stream_t>(
            core::Stream::wrap(static_cast<CUstream>(cu_stream), on_release, user_data));
    });
}

cucore_status_t cucore_stream_synchronize(cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] { capi::get(stream, "stream").synchronize(); });
}

cucore_status_t cucore_stream_query(cucore_stream_t *stream, int *done) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(done, "done");
        result = capi::get(stream, "stream").query() ? 1 : 0;
    });
}

cucore_status_t cucore_stream_wait_event(cucore_stream_t *stream, cucore_event_t *event) {
    return capi::guarded(__func__, [&] {
        core::Stream &object = capi::get(stream, "stream");
        object.wait(capi::get(event, "event"));
    });
}

cucore_status_t cucore_stream_wait_stream(cucore_stream_t *stream, cucore_stream_t *other) {
    return capi::guarded(__func__, [&] {
        core::Stream &object = capi::get(stream, "stream");
        object.wait(capi::get(other, "other"));
    });
}

cucore_status_t cucore_stream_record(cucore_stream_t *stream, const cucore_event_options_t *options,
                                     cucore_event_t **event) {
    return capi::guarded(__func__, [&] {
        cucore_event_t *&result = capi::out(event, "event");
        core::Stream &object = capi::get(stream, "stream");
        result = capi::give<cucore_event_t>(object.record(capi::read_event_flags(options)));
    });
}

cucore_status_t cucore_stream_launch_host_func(cucore_stream_t *stream, cucore_host_fn fn, void *user_data) {
    return capi::guarded(__func__, [&] {
        core::Stream &object = capi::get(stream, "stream");
        capi::require(fn, "fn");
        object.launch_host_func(fn, user_data);
    });
}

cucore_status_t cucore_stream_device(const cucore_stream_t *stream, cucore_device_t **device) {
    return capi::guarded(__func__, [&] {
        cucore_device_t *&result = capi::out(device, "device");
        result = capi::give<cucore_device_t>(capi::get(stream, "stream").context().device_ref());
    });
}

cucore_status_t cucore_stream_context(const cucore_stream_t *stream, cucore_context_t **context) {
    return capi::guarded(__func__, [&] {
        cucore_context_t *&result = capi::out(context, "context");
        result = capi::give<cucore_context_t>(capi::get(stream, "stream").context_ref());
    });
}

cucore_status_t cucore_stream_priority(const cucore_stream_t *stream, int *priority) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(priority, "priority");
        result = capi::get(stream, "stream").priority();
    });
}

cucore_status_t cucore_stream_flags(const cucore_stream_t *stream, uint32_t *flags) {
    return capi::guarded(__func__, [&] {
        uint32_t &result = capi::out(flags, "flags");
        result = capi::get(stream, "stream").flags();
    });
}

cucore_status_t cucore_stream_is_owned(const cucore_stream_t *stream, int *owned) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(owned, "owned");
        result = capi::get(stream, "stream").owned() ? 1 : 0;
    });
}

cucore_status_t cucore_stream_capture_status(cucore_stream_t *stream, cucore_capture_status_t *status) {
    return capi::guarded(__func__, [&] {
        cucore_capture_status_t &result = capi::out(status, "status");
        result = capi::get(stream, "stream").capture_status();
    });
}

cucore_status_t cucore_stream_handle(const cucore_stream_t *stream, void **cu_stream) {
    return capi::guarded(__func__, [&] {
        void *&result = capi::out(cu_stream, "cu_stream");
        result = capi::get(stream, "stream").escape();
    });
}

cucore_status_t cucore_stream_priority_range(cucore_device_t *device, int *least, int *greatest) {
    return capi::guarded(__func__, [&] {
        int &least_out = capi::out(least, "least");
        int &greatest_out = capi::out(greatest, "greatest");
        core::Device &object = capi::get(device, "device");
        core::stream_priority_range(*object.primary_context(), least_out, greatest_out);
    });
}

}  // extern "C"
