// Streams: create + destroy, and a host function + synchronize round trip.
//
// Stream create + destroy: a stream with cucore's default options (non-blocking, priority 0), i.e.
// cuStreamCreateWithPriority(CU_STREAM_NON_BLOCKING, 0) for the raw driver, the entry point
// libcucore calls, so the ratio is the wrapper's cost alone.
// Host function round trip: queue one host function (cuLaunchHostFunc) on an idle non-blocking
// stream and synchronize the stream; the function counts its calls, and the count is checked
// against the iterations afterwards.

#include <atomic>
#include <cstdint>
#include <string>

#include "bench_common.hpp"

namespace cucore_bench {
namespace {

// ---- stream create + destroy -------------------------------------------------------------------

void stream_create_destroy_raw(benchmark::State &state) {
    const RawDriver &d = env().driver;
    for (auto _ : state) {
        CUstream stream = nullptr;
        if (!ok(state, d.cuStreamCreateWithPriority_fn(&stream, CU_STREAM_NON_BLOCKING, 0),
                "cuStreamCreateWithPriority"))
            return;
        if (!ok(state, d.cuStreamDestroy_fn(stream), "cuStreamDestroy")) return;
    }
}

void stream_create_destroy_c(benchmark::State &state) {
    cucore_device_t *device = env().device;
    const long long before = live_objects(CUCORE_OBJECT_STREAM);
    for (auto _ : state) {
        cucore_stream_t *stream = nullptr;
        if (!ok(state, cucore_stream_create(device, nullptr, &stream), "cucore_stream_create")) return;
        if (!ok(state, cucore_stream_release(stream), "cucore_stream_release")) return;
    }
    if (live_objects(CUCORE_OBJECT_STREAM) != before) fail_check(state, "live stream count changed (a leak)");
}

void stream_create_destroy_cpp(benchmark::State &state) {
    try {
        const cucore::Device &device = *env().cpp_device;
        const long long before = live_objects(CUCORE_OBJECT_STREAM);
        for (auto _ : state) {
            cucore::Stream stream = device.create_stream();  // destroyed at the end of the iteration
        }
        if (live_objects(CUCORE_OBJECT_STREAM) != before) fail_check(state, "live stream count changed (a leak)");
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
}

// ---- host function + stream synchronize round trip ---------------------------------------------

// The host function of every variant: counts its calls (on the driver's thread).
void count_call(void *user_data) {
    static_cast<std::atomic<std::uint64_t> *>(user_data)->fetch_add(1, std::memory_order_relaxed);
}

// After the loop: every queued host function ran exactly once.
void check_calls(benchmark::State &state, const std::atomic<std::uint64_t> &calls) {
    if (state.error_occurred()) return;
    const std::uint64_t n = calls.load();
    if (n != static_cast<std::uint64_t>(state.iterations()))
        fail_check(state, "the host function ran " + std::to_string(n) + " times for " +
                              std::to_string(state.iterations()) + " launches");
}

void host_func_round_trip_raw(benchmark::State &state) {
    const RawDriver &d = env().driver;
    CUstream stream = nullptr;
    if (!ok(state, d.cuStreamCreateWithPriority_fn(&stream, CU_STREAM_NON_BLOCKING, 0), "cuStreamCreateWithPriority"))
        return;
    std::atomic<std::uint64_t> calls{0};
    for (auto _ : state) {
        if (!ok(state, d.cuLaunchHostFunc_fn(stream, count_call, &calls), "cuLaunchHostFunc")) break;
        if (!ok(state, d.cuStreamSynchronize_fn(stream), "cuStreamSynchronize")) break;
    }
    d.cuStreamDestroy_fn(stream);
    check_calls(state, calls);
}

void host_func_round_trip_c(benchmark::State &state) {
    cucore_stream_t *stream = nullptr;
    if (!ok(state, cucore_stream_create(env().device, nullptr, &stream), "cucore_stream_create")) return;
    std::atomic<std::uint64_t> calls{0};
    for (auto _ : state) {
        if (!ok(state, cucore_stream_launch_host_func(stream, count_call, &calls), "cucore_stream_launch_host_func"))
            break;
        if (!ok(state, cucore_stream_synchronize(stream), "cucore_stream_synchronize")) break;
    }
    cucore_stream_release(stream);
    check_calls(state, calls);
}

void host_func_round_trip_cpp(benchmark::State &state) {
    std::atomic<std::uint64_t> calls{0};
    try {
        cucore::Stream stream = env().cpp_device->create_stream();
        for (auto _ : state) {
            stream.launch_host_func(count_call, &calls);
            stream.synchronize();
        }
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
    check_calls(state, calls);
}

const bool registered_create = register_operation({
    30,
    "stream_create_destroy",
    "stream create + destroy",
    1.03,
    "issue 18: stream create + destroy (C ABI <= 1.03x raw)",
    stream_create_destroy_raw,
    stream_create_destroy_c,
    stream_create_destroy_cpp,
});

const bool registered_host_func = register_operation({
    40,
    "host_func_round_trip",
    "host func + sync round trip",
    1.02,
    "performance_anchors.md gives <= 1.02 for a kernel launch + stream synchronize round trip; "
    "applied to the host-function round trip, its closest analogue",
    host_func_round_trip_raw,
    host_func_round_trip_c,
    host_func_round_trip_cpp,
});

}  // namespace
}  // namespace cucore_bench
