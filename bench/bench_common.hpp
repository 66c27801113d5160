// libcucore benchmarks: what every capability file shares.
//
// Each operation is measured three ways in the same process and run, on the same device, with the
// device's primary context current on the benchmark thread:
//   <operation>/raw     the driver API called directly (raw_driver.hpp),
//   <operation>/c_abi   the C ABI (cucore.h),
//   <operation>/cpp     the C++ façade (cucore.hpp).
// main.cpp sets up the environment once, runs the benchmarks (interleaved repetitions) and prints
// the ratios C ABI / raw and C++ / C ABI against the targets of performance_anchors.md.
#ifndef CUCORE_BENCH_COMMON_HPP
#define CUCORE_BENCH_COMMON_HPP

#include <benchmark/benchmark.h>
#include <cucore.h>
#include <cucore.hpp>

#include <optional>
#include <string>
#include <vector>

#include "raw_driver.hpp"

namespace cucore_bench {

// Set up by main() before any benchmark runs; the benchmarks only read it.
struct Env {
    RawDriver driver;
    int ordinal = 0;
    CUdevice cu_device = 0;
    CUcontext cu_context = nullptr;      // the primary context: retained, current on the main thread
    cucore_device_t *device = nullptr;   // the same device through the C ABI (one reference)
    std::optional<cucore::Device> cpp_device;  // and through the C++ façade
    std::string device_name;
    int driver_version = 0;
};

Env &env();

// One operation, three variants. `order` fixes its row in the ratio table.
struct Operation {
    int order;
    const char *key;    // benchmark name prefix, e.g. "event_record"
    const char *title;  // the row title, e.g. "event record"
    // The anchor's bound on C ABI / raw (0: the anchors give none) and where it comes from.
    double c_over_raw_target;
    const char *target_note;
    void (*raw)(benchmark::State &);
    void (*c_abi)(benchmark::State &);
    void (*cpp)(benchmark::State &);
    // Copies and fills: the bytes one operation moves (device-to-device: read + write, as the
    // anchors count them), so that the table also gives GB/s; 0 for the other operations.
    double bytes_per_op = 0;
    // Where the anchors bound the C ABI's bandwidth over the raw driver's (>= 0.98x), that bound;
    // c_over_raw_target is then its reciprocal (the same bound on time per operation). 0: none.
    double min_bandwidth_ratio = 0;
    // Iterations per repetition, fixed, for operations that take milliseconds (1 GiB copies);
    // 0: as many as --benchmark_min_time asks for.
    long long iterations = 0;
    // Batch rows: the key of the operation that does the same work without the batch (e.g. 8 single
    // calls). Each variant's gain is that operation's time over this one's, from the minima, and the
    // gain table after the ratio table compares the C ABI's and C++'s gains with the raw driver's;
    // nullptr: not a batch row.
    const char *gain_over = nullptr;
    // The bound on C ABI gain / raw gain (e.g. 0.92: the library keeps >= 92% of the driver's own
    // gain), checked like c_over_raw_target; 0: none.
    double min_gain_share = 0;
};

// The variants, in the order of the ratio table's columns; names are the benchmark name suffixes.
inline constexpr const char *kVariantNames[3] = {"raw", "c_abi", "cpp"};

// All operations registered so far (by the static registrars of the capability files).
std::vector<Operation> &operations();

// Registers the three benchmarks of `op` ("<key>/raw", "<key>/c_abi", "<key>/cpp"); meant for a
// namespace-scope `static const bool registered = register_operation({...});`.
bool register_operation(const Operation &op);

// ---- The loop of operations that queue work ------------------------------------------------------
// Runs `step()` (false after it reported a failure) once per iteration and, every `sync_every`
// iterations, `sync()` with the timer paused, so the stream's queue stays short and every variant
// measures the same thing: the host cost of enqueuing.
template <typename Step, typename Sync>
void queued_loop(benchmark::State &state, int sync_every, Step step, Sync sync) {
    int pending = 0;
    for (auto _ : state) {
        if (!step()) return;
        if (++pending == sync_every) {
            state.PauseTiming();
            bool synced = sync();
            state.ResumeTiming();
            if (!synced) return;
            pending = 0;
        }
    }
    sync();
}

// ---- Error checks inside timed loops -----------------------------------------------------------
// Every variant checks every call the same way: one compare on the fast path, the message built
// only on failure, after which the benchmark stops with SkipWithError (and main() exits non-zero).

[[gnu::cold, gnu::noinline]] void fail_raw(benchmark::State &state, CUresult r, const char *what);
[[gnu::cold, gnu::noinline]] void fail_c(benchmark::State &state, cucore_status_t s,
                                         const char *what);
[[gnu::cold, gnu::noinline]] void fail_cpp(benchmark::State &state, const std::exception &e);
[[gnu::cold, gnu::noinline]] void fail_check(benchmark::State &state, const std::string &what);

inline bool ok(benchmark::State &state, CUresult r, const char *what) {
    if (__builtin_expect(r == CUDA_SUCCESS, 1)) return true;
    fail_raw(state, r, what);
    return false;
}

inline bool ok(benchmark::State &state, cucore_status_t s, const char *what) {
    if (__builtin_expect(s == CUCORE_SUCCESS, 1)) return true;
    fail_c(state, s, what);
    return false;
}

// Stops the benchmark as skipped, not failed: for what this machine cannot do (a 1 GiB
// allocation that fails). Its row shows SKIP and `why`; the exit status stays 0.
[[gnu::cold, gnu::noinline]] void skip_run(benchmark::State &state, const std::string &why);

// Runs `fn` once at the end of the run, before the device and its primary context are released
// (for memory a capability file keeps across runs); the last registered runs first.
void at_tear_down(void (*fn)());

// "4 B", "4 KiB", "1 MiB", "2 GiB" (other counts: "<n> B").
inline std::string size_text(double bytes) {
    static const char *const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int unit = 0;
    while (unit < 4 && bytes >= 1024 && static_cast<long long>(bytes) % 1024 == 0) {
        bytes /= 1024;
        ++unit;
    }
    return std::to_string(static_cast<long long>(bytes)) + " " + kUnits[unit];
}

// Live objects of `type` through the C ABI (for leak checks outside the timed loops); -1 on error.
long long live_objects(cucore_object_type_t type);

}  // namespace cucore_bench

#endif  // CUCORE_BENCH_COMMON_HPP
