// Events: record, and create + destroy.
//
// Event record: one event recorded again and again on one non-blocking stream. Every
// kSyncEvery records the stream is synchronized with the timer paused, so the queue stays short
// and every variant measures the same thing: the host cost of enqueuing a record.
// Event create + destroy: an event with cucore's default options (no timing, spin on synchronize),
// i.e. CU_EVENT_DISABLE_TIMING for the raw driver.

#include "bench_common.hpp"

namespace cucore_bench {
namespace {

constexpr int kSyncEvery = 1024;

// The one loop every event-record variant runs: `record()` returns false after reporting a
// failure; `sync()` waits for the stream (outside the timed region).

// ---- event record ------------------------------------------------------------------------------

void event_record_raw(benchmark::State &state) {
    const RawDriver &d = env().driver;
    CUstream stream = nullptr;
    CUevent event = nullptr;
    if (!ok(state, d.cuStreamCreateWithPriority_fn(&stream, CU_STREAM_NON_BLOCKING, 0), "cuStreamCreateWithPriority"))
        return;
    if (ok(state, d.cuEventCreate_fn(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate")) {
        queued_loop(
            state, kSyncEvery, [&] { return ok(state, d.cuEventRecord_fn(event, stream), "cuEventRecord"); },
            [&] { return ok(state, d.cuStreamSynchronize_fn(stream), "cuStreamSynchronize"); });
        d.cuEventDestroy_fn(event);
    }
    d.cuStreamDestroy_fn(stream);
}

void event_record_c(benchmark::State &state) {
    cucore_device_t *device = env().device;
    cucore_stream_t *stream = nullptr;
    cucore_event_t *event = nullptr;
    if (!ok(state, cucore_stream_create(device, nullptr, &stream), "cucore_stream_create")) return;
    if (ok(state, cucore_event_create(device, nullptr, &event), "cucore_event_create")) {
        queued_loop(
            state, kSyncEvery, [&] { return ok(state, cucore_event_record(event, stream), "cucore_event_record"); },
            [&] { return ok(state, cucore_stream_synchronize(stream), "cucore_stream_synchronize"); });
        cucore_event_release(event);
    }
    cucore_stream_release(stream);
}

void event_record_cpp(benchmark::State &state) {
    try {
        const cucore::Device &device = *env().cpp_device;
        cucore::Stream stream = device.create_stream();
        cucore::Event event = device.create_event();
        // A failing call throws out of the loop, into the handler below.
        queued_loop(
            state, kSyncEvery,
            [&] {
                event.record(stream);
                return true;
            },
            [&] {
                stream.synchronize();
                return true;
            });
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
}

// ---- event create + destroy --------------------------------------------------------------------

void event_create_destroy_raw(benchmark::State &state) {
    const RawDriver &d = env().driver;
    for (auto _ : state) {
        CUevent event = nullptr;
        if (!ok(state, d.cuEventCreate_fn(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate")) return;
        if (!ok(state, d.cuEventDestroy_fn(event), "cuEventDestroy")) return;
    }
}

void event_create_destroy_c(benchmark::State &state) {
    cucore_device_t *device = env().device;
    const long long before = live_objects(CUCORE_OBJECT_EVENT);
    for (auto _ : state) {
        cucore_event_t *event = nullptr;
        if (!ok(state, cucore_event_create(device, nullptr, &event), "cucore_event_create")) return;
        if (!ok(state, cucore_event_release(event), "cucore_event_release")) return;
    }
    if (live_objects(CUCORE_OBJECT_EVENT) != before) fail_check(state, "live event count changed (a leak)");
}

void event_create_destroy_cpp(benchmark::State &state) {
    try {
        const cucore::Device &device = *env().cpp_device;
        const long long before = live_objects(CUCORE_OBJECT_EVENT);
        for (auto _ : state) {
            cucore::Event event = device.create_event();  // destroyed at the end of the iteration
        }
        if (live_objects(CUCORE_OBJECT_EVENT) != before) fail_check(state, "live event count changed (a leak)");
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
}

const bool registered_record = register_operation({
    10,
    "event_record",
    "event record",
    1.03,
    "issue 18: event record (C ABI <= 1.03x raw)",
    event_record_raw,
    event_record_c,
    event_record_cpp,
});

const bool registered_create = register_operation({
    20,
    "event_create_destroy",
    "event create + destroy",
    0.50,
    "issue 18: event create + destroy (C ABI <= 0.5x raw: driver events reused per context and kind)",
    event_create_destroy_raw,
    event_create_destroy_c,
    event_create_destroy_cpp,
});

}  // namespace
}  // namespace cucore_bench
