// Handles: what one reference round trip costs, the unit of the library's per-call overhead.
//
// Every C ABI call holds each handle it is given for its duration (DESIGN.md: a release on another thread
// cannot free an object under a running call): one atomic compare-and-swap on the handle's word to take the
// hold and one to give it back. This row puts a retain + release of one handle beside two atomic
// read-modify-writes on a private counter (the "raw" column: what the hardware charges for the pair), so the
// overhead of the other rows can be read in units of it. It has no target: it explains the others.
#include <atomic>

#include "bench_common.hpp"

namespace cucore_bench {
namespace {

void reference_round_trip_raw(benchmark::State &state) {
    std::atomic<uint64_t> count{1};
    for (auto _ : state) {
        count.fetch_add(1, std::memory_order_acq_rel);
        count.fetch_sub(1, std::memory_order_acq_rel);
    }
    benchmark::DoNotOptimize(count.load());
}

void reference_round_trip_c(benchmark::State &state) {
    cucore_stream_t *stream = nullptr;
    if (!ok(state, cucore_stream_create(env().device, nullptr, &stream), "cucore_stream_create")) return;
    for (auto _ : state) {
        if (!ok(state, cucore_stream_retain(stream), "cucore_stream_retain") ||
            !ok(state, cucore_stream_release(stream), "cucore_stream_release"))
            break;
    }
    cucore_stream_release(stream);
}

void reference_round_trip_cpp(benchmark::State &state) {
    try {
        const cucore::Stream stream = env().cpp_device->create_stream();
        for (auto _ : state) {
            cucore::Stream copy = stream;  // retain; released at the end of the iteration
            benchmark::DoNotOptimize(copy);
        }
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
}

const bool registered = register_operation({
    5,
    "reference_round_trip",
    "retain + release (raw: 2 atomic RMWs)",
    0.0,  // none: the unit the other rows' overheads are read in
    "",
    reference_round_trip_raw,
    reference_round_trip_c,
    reference_round_trip_cpp,
});

}  // namespace
}  // namespace cucore_bench
