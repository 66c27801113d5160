// cucore_bench: the benchmark thread (the main thread: Google Benchmark runs single-threaded
// benchmarks on it, and the primary context is current there) runs on one CPU for the whole run, so
// all three variants of every operation run on the same core, without migrations; the process's
// other threads (the driver's) are kept off that CPU.
#ifndef CUCORE_BENCH_PINNING_HPP
#define CUCORE_BENCH_PINNING_HPP

#include <string>

namespace cucore_bench {

// Reads the CPUs this process may run on and checks `requested_cpu` (--cpu=N; -1: none asked for)
// against them (exit 2 when it is not one of them); `pin` false (--cpu=none): no pinning. Does not
// pin yet.
void choose_cpu(bool pin, int requested_cpu);

// Pins the calling thread to `requested_cpu`, or by default to the highest-numbered CPU the process
// may run on, and moves the process's other threads off it. Prints what it did.
void pin_benchmark_thread(int requested_cpu);

// Called by every benchmark before its function (outside the timed loop): pins again if someone
// changed the thread's affinity, and moves threads the driver started since off the CPU.
void before_run();

// "benchmark thread pinned to CPU N (of ...)" or why not, for the table's header.
std::string pinning_text();

}  // namespace cucore_bench

#endif  // CUCORE_BENCH_PINNING_HPP
