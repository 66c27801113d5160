// cucore_bench: each libcucore operation beside the raw driver call doing the same work, in one
// process and one run, with the ratios C ABI / raw and C++ / C ABI at the end.
//
// The benchmarks live in one file per capability (event_bench.cpp, stream_bench.cpp,
// device_bench.cpp, memory_pool_bench.cpp, buffer_bench.cpp) and register themselves through
// register_operation(). This file sets up the shared environment (the raw driver, the device's
// primary context made current, the same device through the C ABI and the C++ façade), pins the
// benchmark thread to one CPU, runs Google Benchmark with interleaved repetitions, collects each
// variant's minimum and median over the repetitions and prints the ratio table (verdicts from the
// minima; written as markdown with --ratio_out), with a GB/s table for the operations that move
// data and a gain table for the batch rows (Operation::gain_over). A run stopped with skip_run (e.g.
// a 1 GiB allocation this machine cannot make) shows as SKIP, not as an error.
// Without a CUDA driver or device it prints "skipped: <reason>" and exits 0.

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "pinning.hpp"

namespace cucore_bench {

// ---- Shared state --------------------------------------------------------------------------------

Env &env() {
    static Env instance;
    return instance;
}

std::vector<Operation> &operations() {
    static std::vector<Operation> list;
    return list;
}

namespace {

double min_of(const std::vector<double> &v) { return v.empty() ? NAN : *std::min_element(v.begin(), v.end()); }

// The message of a run stopped with skip_run (Google Benchmark 1.7 knows only errors).
const char *const kSkipPrefix = "skipped: ";

std::vector<void (*)()> &tear_down_hooks() {
    static std::vector<void (*)()> hooks;
    return hooks;
}

}  // namespace

bool register_operation(const Operation &op) {
    operations().push_back(op);
    void (*fns[3])(benchmark::State &) = {op.raw, op.c_abi, op.cpp};
    for (int v = 0; v < 3; ++v) {
        std::string name = std::string(op.key) + "/" + kVariantNames[v];
        void (*fn)(benchmark::State &) = fns[v];
        benchmark::internal::Benchmark *b =
            benchmark::RegisterBenchmark(name.c_str(),
                                         [fn](benchmark::State &state) {
                                             before_run();
                                             fn(state);
                                         })
                ->UseRealTime()
                ->Unit(benchmark::kNanosecond)
                // The minimum over the repetitions, beside Google Benchmark's mean, median, stddev, cv.
                ->ComputeStatistics("min", min_of);
        if (op.iterations > 0) b->Iterations(op.iterations);
    }
    return true;
}

void skip_run(benchmark::State &state, const std::string &why) {
    std::string msg = kSkipPrefix + why;
    state.SkipWithError(msg.c_str());
}

void at_tear_down(void (*fn)()) { tear_down_hooks().push_back(fn); }

void fail_raw(benchmark::State &state, CUresult r, const char *what) {
    std::string msg = std::string(what) + " failed: " + env().driver.error_name(r);
    state.SkipWithError(msg.c_str());
}

void fail_c(benchmark::State &state, cucore_status_t s, const char *what) {
    std::string msg = std::string(what) + " failed: " + cucore_status_string(s) + ": " +
                      cucore_last_error_message();
    state.SkipWithError(msg.c_str());
}

void fail_cpp(benchmark::State &state, const std::exception &e) {
    const auto *error = dynamic_cast<const cucore::Error *>(&e);
    std::string msg = error != nullptr ? std::string("cucore::Error ") + error->status_name() + ": " + e.what()
                                       : std::string("exception: ") + e.what();
    state.SkipWithError(msg.c_str());
}

void fail_check(benchmark::State &state, const std::string &what) {
    std::string msg = "check failed: " + what;
    state.SkipWithError(msg.c_str());
}

long long live_objects(cucore_object_type_t type) {
    size_t count = 0;
    if (cucore_live_object_count(type, &count) != CUCORE_SUCCESS) return -1;
    return static_cast<long long>(count);
}

namespace {

// ---- Command line --------------------------------------------------------------------------------

struct Options {
    std::string ratio_out;   // --ratio_out=FILE: the ratio table as markdown
    int device = 0;          // --device=N
    bool strict = false;     // --ratio_strict: exit 1 when a target is missed
    bool list_only = false;  // --benchmark_list_tests: list without a GPU
    bool color = false;
    bool interleaved = true;  // --benchmark_enable_random_interleaving, ours by default
    int cpu = -1;             // --cpu=N: the benchmark thread's CPU; -1: chosen here
    bool pin = true;          // --cpu=none: do not pin
    std::string min_time;     // the --benchmark_min_time in effect (ours unless overridden)
};

const char *const kUsage =
    "cucore_bench: libcucore beside the raw CUDA driver, same work, same process, same run.\n"
    "\n"
    "Own options (the rest go to Google Benchmark, see --help below):\n"
    "  --ratio_out=FILE   also write the ratio table as markdown to FILE\n"
    "  --device=N         the CUDA device ordinal to measure on (default 0)\n"
    "  --ratio_strict     exit 1 when a ratio misses its target (default: report only)\n"
    "  --cpu=N            pin the benchmark thread to CPU N (default: the highest-numbered CPU\n"
    "                     this process may run on); --cpu=none: do not pin\n"
    "Defaults given to Google Benchmark (later arguments override them):\n"
    "  --benchmark_repetitions=15 --benchmark_enable_random_interleaving=true\n"
    "  --benchmark_min_time=0.1 --benchmark_display_aggregates_only=true\n"
    "\n";

const char *const kMinTimeFlag = "--benchmark_min_time=";
const char *const kDefaultArgs[] = {
    "--benchmark_repetitions=15",
    "--benchmark_enable_random_interleaving=true",
    "--benchmark_min_time=0.1",
    "--benchmark_display_aggregates_only=true",
};

bool starts_with(const std::string &s, const char *prefix) {
    return s.compare(0, std::strlen(prefix), prefix) == 0;
}

// Takes our own options out of argv; returns the arguments for Google Benchmark (program name,
// our defaults, then the user's arguments so that theirs win). Exits on a malformed option.
std::vector<std::string> parse_args(int argc, char **argv, Options *opt) {
    std::vector<std::string> out;
    out.emplace_back(argc > 0 ? argv[0] : "cucore_bench");
    for (const char *d : kDefaultArgs) {
        out.emplace_back(d);
        if (starts_with(d, kMinTimeFlag)) opt->min_time = d + std::strlen(kMinTimeFlag);
    }
    std::string color_flag = "auto";
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (starts_with(a, "--ratio_out=")) {
            opt->ratio_out = a.substr(std::strlen("--ratio_out="));
            if (opt->ratio_out.empty()) {
                std::fprintf(stderr, "cucore_bench: --ratio_out needs a file name\n");
                std::exit(2);
            }
        } else if (starts_with(a, "--device=")) {
            char *end = nullptr;
            const char *num = a.c_str() + std::strlen("--device=");
            long v = std::strtol(num, &end, 10);
            if (*num == '\0' || *end != '\0' || v < 0 || v > 1 << 20) {
                std::fprintf(stderr, "cucore_bench: bad --device value '%s'\n", num);
                std::exit(2);
            }
            opt->device = static_cast<int>(v);
        } else if (a == "--ratio_strict" || a == "--ratio_strict=true") {
            opt->strict = true;
        } else if (a == "--ratio_strict=false") {
            opt->strict = false;
        } else if (starts_with(a, "--cpu=")) {
            const char *num = a.c_str() + std::strlen("--cpu=");
            if (std::strcmp(num, "none") == 0) {
                opt->pin = false;
                continue;
            }
            char *end = nullptr;
            long v = std::strtol(num, &end, 10);
            if (*num == '\0' || *end != '\0' || v < 0 || v >= CPU_SETSIZE) {
                std::fprintf(stderr, "cucore_bench: bad --cpu value '%s' (a CPU number, or none)\n", num);
                std::exit(2);
            }
            opt->pin = true;
            opt->cpu = static_cast<int>(v);
        } else {
            if (a == "--help" || a == "-h") std::fputs(kUsage, stdout);
            if (a == "--benchmark_list_tests" || a == "--benchmark_list_tests=true") opt->list_only = true;
            if (a == "--benchmark_list_tests=false") opt->list_only = false;
            if (starts_with(a, "--benchmark_color=")) color_flag = a.substr(std::strlen("--benchmark_color="));
            if (starts_with(a, "--benchmark_enable_random_interleaving="))
                opt->interleaved = a == "--benchmark_enable_random_interleaving=true";
            if (starts_with(a, kMinTimeFlag)) opt->min_time = a.substr(std::strlen(kMinTimeFlag));
            out.push_back(a);
        }
    }
    if (color_flag == "auto") {
        const char *term = std::getenv("TERM");
        opt->color = isatty(STDOUT_FILENO) && term != nullptr && std::strcmp(term, "dumb") != 0 &&
                     std::getenv("NO_COLOR") == nullptr;
    } else {
        opt->color = color_flag == "true" || color_flag == "yes" || color_flag == "1";
    }
    return out;
}

// ---- Environment ---------------------------------------------------------------------------------

// Why the benchmarks cannot run here (no driver, no device): they are skipped, not failed.
struct Skip {
    std::string why;
};
// The driver works but libcucore does not: a real failure.
struct Failure {
    std::string why;
};

void set_up(int ordinal) {
    Env &e = env();
    e.ordinal = ordinal;
    RawDriver &d = e.driver;
    std::string why;
    if (!d.load(&why)) throw Skip{why};
    CUresult r = d.cuInit_fn(0);
    if (r == CUDA_ERROR_NO_DEVICE) throw Skip{"no CUDA device (cuInit: " + d.error_name(r) + ")"};
    if (r != CUDA_SUCCESS) throw Skip{"the CUDA driver does not initialise (cuInit: " + d.error_name(r) + ")"};
    int count = 0;
    r = d.cuDeviceGetCount_fn(&count);
    if (r != CUDA_SUCCESS) throw Skip{"cuDeviceGetCount: " + d.error_name(r)};
    if (count == 0) throw Skip{"no CUDA device"};
    if (ordinal >= count)
        throw Skip{"no CUDA device " + std::to_string(ordinal) + " (" + std::to_string(count) + " present)"};
    d.cuDriverGetVersion_fn(&e.driver_version);

    if ((r = d.cuDeviceGet_fn(&e.cu_device, ordinal)) != CUDA_SUCCESS)
        throw Failure{"cuDeviceGet: " + d.error_name(r)};
    char name[256] = {0};
    if (d.cuDeviceGetName_fn(name, sizeof name - 1, e.cu_device) == CUDA_SUCCESS) e.device_name = name;
    if ((r = d.cuDevicePrimaryCtxRetain_fn(&e.cu_context, e.cu_device)) != CUDA_SUCCESS)
        throw Failure{"cuDevicePrimaryCtxRetain: " + d.error_name(r)};
    if ((r = d.cuCtxSetCurrent_fn(e.cu_context)) != CUDA_SUCCESS)
        throw Failure{"cuCtxSetCurrent: " + d.error_name(r)};

    // The same device through the C ABI; its primary context made current (a no-op here: it is
    // the one the raw driver made current, which the check below confirms).
    cucore_status_t s = cucore_device_get(ordinal, &e.device);
    if (s != CUCORE_SUCCESS)
        throw Failure{std::string("cucore_device_get: ") + cucore_status_string(s) + ": " +
                      cucore_last_error_message()};
    s = cucore_device_set_current(e.device);
    if (s != CUCORE_SUCCESS)
        throw Failure{std::string("cucore_device_set_current: ") + cucore_status_string(s) + ": " +
                      cucore_last_error_message()};
    CUcontext current = nullptr;
    d.cuCtxGetCurrent_fn(&current);
    if (current != e.cu_context)
        throw Failure{"cucore_device_set_current did not leave the device's primary context current"};

    // And through the C++ façade (one more reference to the same device object).
    e.cpp_device.emplace(cucore::Device::borrow(e.device));
}

void tear_down() {
    Env &e = env();
    std::vector<void (*)()> &hooks = tear_down_hooks();
    while (!hooks.empty()) {
        void (*fn)() = hooks.back();
        hooks.pop_back();
        fn();
    }
    e.cpp_device.reset();
    if (e.device != nullptr) cucore_device_release(e.device);
    e.device = nullptr;
    if (e.cu_context != nullptr) e.driver.cuDevicePrimaryCtxRelease_fn(e.cu_device);
    e.cu_context = nullptr;
}

// ---- Collecting the results ------------------------------------------------------------------------

struct Samples {
    std::vector<double> ns;       // per-repetition ns/op (real time)
    double median_agg = NAN;      // the "median" aggregate, when only aggregates were reported
    double min_agg = NAN;         // the "min" aggregate (ours, see register_operation)
    double cv_agg = NAN;          // the "cv" aggregate (a fraction)
    int repetitions = 0;          // as Google Benchmark reports it
    std::string error;            // the first error, if any run failed
    std::string skipped;          // why, if a run was skipped (skip_run)
};

double to_ns(const benchmark::BenchmarkReporter::Run &run) {
    return run.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(run.time_unit) * 1e9;
}

class Collector : public benchmark::ConsoleReporter {
public:
    using benchmark::ConsoleReporter::ConsoleReporter;

    bool ReportContext(const Context &context) override {
        host_ = context.sys_info.name;
        cpus_ = context.cpu_info.num_cpus;
        mhz_ = context.cpu_info.cycles_per_second / 1e6;
        return benchmark::ConsoleReporter::ReportContext(context);
    }

    void ReportRuns(const std::vector<Run> &runs) override {
        for (const Run &run : runs) {
            Samples &s = by_name_[run.run_name.function_name];
            s.repetitions = static_cast<int>(run.repetitions);
            if (run.error_occurred) {
                const std::string &m = run.error_message;
                if (m.compare(0, std::strlen(kSkipPrefix), kSkipPrefix) == 0) {
                    if (s.skipped.empty()) s.skipped = m.substr(std::strlen(kSkipPrefix));
                } else if (s.error.empty()) {
                    s.error = m.empty() ? "error" : m;
                }
                continue;
            }
            if (run.run_type == Run::RT_Iteration) {
                s.ns.push_back(to_ns(run));
            } else if (run.aggregate_name == "median") {
                s.median_agg = to_ns(run);
            } else if (run.aggregate_name == "min") {
                s.min_agg = to_ns(run);
            } else if (run.aggregate_name == "cv") {
                // cv is a percentage unit aggregate: the value itself, not a time.
                s.cv_agg = run.real_accumulated_time;
            }
        }
        benchmark::ConsoleReporter::ReportRuns(runs);
    }

    const Samples *find(const std::string &name) const {
        auto it = by_name_.find(name);
        return it == by_name_.end() ? nullptr : &it->second;
    }
    bool any_error() const {
        for (const auto &kv : by_name_)
            if (!kv.second.error.empty()) return true;
        return false;
    }
    const std::string &host() const { return host_; }
    int cpus() const { return cpus_; }
    double mhz() const { return mhz_; }

private:
    std::map<std::string, Samples> by_name_;
    std::string host_;
    int cpus_ = 0;
    double mhz_ = 0;
};

double median_of(std::vector<double> v) {
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The coefficient of variation (stddev / mean) of the repetitions, as a fraction.
double cv_of(const std::vector<double> &v) {
    if (v.size() < 2) return NAN;
    double mean = 0;
    for (double x : v) mean += x;
    mean /= static_cast<double>(v.size());
    double var = 0;
    for (double x : v) var += (x - mean) * (x - mean);
    var /= static_cast<double>(v.size() - 1);
    return mean > 0 ? std::sqrt(var) / mean : NAN;
}

// ---- The ratio table ---------------------------------------------------------------------------------

struct Row {
    const Operation *op;
    double min[3] = {NAN, NAN, NAN};     // per variant: the minimum over the repetitions (ns/op)
    double median[3] = {NAN, NAN, NAN};  // and the median
    double cv = NAN;  // the largest of the three variants' CVs
    int reps = 0;     // the fewest repetitions among the three
    std::string error;
    std::string skipped;  // why a variant could not run here (SKIP)
    double c_over_raw = NAN;  // from the minima: the verdict's
    double cpp_over_c = NAN;
    double c_over_raw_median = NAN;  // from the medians: shown beside
    double cpp_over_c_median = NAN;
    enum Verdict { NONE, PASS, FAIL, ERROR, SKIP } verdict = NONE;
    Verdict median_verdict = NONE;  // what the medians would say (a note when it differs)
    // Batch rows (Operation::gain_over): the row of the same work without the batch, each variant's
    // gain (that row's time over this one's) from the minima and from the medians, the C ABI's and
    // C++'s gains over the raw driver's, and the verdict on the C ABI's share (min_gain_share).
    const Row *baseline = nullptr;
    double gain[3] = {NAN, NAN, NAN};
    double gain_median[3] = {NAN, NAN, NAN};
    double gain_share = NAN;  // C ABI gain / raw gain, minima: the verdict's
    double gain_share_cpp = NAN;
    double gain_share_median = NAN;
    Verdict gain_verdict = NONE;
};

std::vector<Row> build_rows(const Collector &c) {
    std::vector<const Operation *> ops;
    for (const Operation &op : operations()) ops.push_back(&op);
    std::sort(ops.begin(), ops.end(), [](const Operation *a, const Operation *b) { return a->order < b->order; });
    std::vector<Row> rows;
    for (const Operation *op : ops) {
        Row row;
        row.op = op;
        row.reps = 1 << 30;
        bool seen_any = false;
        for (int v = 0; v < 3; ++v) {
            const Samples *s = c.find(std::string(op->key) + "/" + kVariantNames[v]);
            if (s == nullptr) {
                row.reps = 0;
                continue;
            }
            seen_any = true;
            if (!s->error.empty() && row.error.empty()) row.error = std::string(kVariantNames[v]) + ": " + s->error;
            if (!s->skipped.empty() && row.skipped.empty())
                row.skipped = std::string(kVariantNames[v]) + ": " + s->skipped;
            row.min[v] = !s->ns.empty() ? min_of(s->ns) : s->min_agg;
            row.median[v] = !s->ns.empty() ? median_of(s->ns) : s->median_agg;
            double cv = !s->ns.empty() ? cv_of(s->ns) : s->cv_agg;
            if (!std::isnan(cv)) row.cv = std::isnan(row.cv) ? cv : std::max(row.cv, cv);
            row.reps = std::min(row.reps, !s->ns.empty() ? static_cast<int>(s->ns.size()) : s->repetitions);
        }
        if (!seen_any) continue;  // filtered out with --benchmark_filter
        row.c_over_raw = row.min[1] / row.min[0];
        row.cpp_over_c = row.min[2] / row.min[1];
        row.c_over_raw_median = row.median[1] / row.median[0];
        row.cpp_over_c_median = row.median[2] / row.median[1];
        if (!row.error.empty()) {
            row.verdict = row.median_verdict = Row::ERROR;
        } else if (!row.skipped.empty()) {
            row.verdict = row.median_verdict = Row::SKIP;
        } else if (op->c_over_raw_target > 0) {
            if (!std::isnan(row.c_over_raw))
                row.verdict = row.c_over_raw <= op->c_over_raw_target ? Row::PASS : Row::FAIL;
            if (!std::isnan(row.c_over_raw_median))
                row.median_verdict = row.c_over_raw_median <= op->c_over_raw_target ? Row::PASS : Row::FAIL;
        }
        rows.push_back(row);
    }
    // Gains of the batch rows, once every row is in (a baseline may come after its batch row).
    for (Row &row : rows) {
        if (row.op->gain_over == nullptr) continue;
        for (const Row &other : rows)
            if (std::strcmp(other.op->key, row.op->gain_over) == 0) row.baseline = &other;
        const Row *base = row.baseline;
        if (base == nullptr) continue;  // filtered out: no gain to show
        for (int v = 0; v < 3; ++v) {
            row.gain[v] = base->min[v] / row.min[v];
            row.gain_median[v] = base->median[v] / row.median[v];
        }
        row.gain_share = row.gain[1] / row.gain[0];
        row.gain_share_cpp = row.gain[2] / row.gain[0];
        row.gain_share_median = row.gain_median[1] / row.gain_median[0];
        if (row.verdict == Row::ERROR || base->verdict == Row::ERROR)
            row.gain_verdict = Row::ERROR;
        else if (row.verdict == Row::SKIP || base->verdict == Row::SKIP)
            row.gain_verdict = Row::SKIP;
        else if (row.op->min_gain_share > 0 && !std::isnan(row.gain_share))
            row.gain_verdict = row.gain_share >= row.op->min_gain_share ? Row::PASS : Row::FAIL;
    }
    return rows;
}

std::string fmt(const char *format, double v) {
    if (std::isnan(v)) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

// ns/op: one decimal, none from 1 ms up (1 GiB copies), so the columns keep their width.
std::string ns_text(double v) { return fmt(!std::isnan(v) && v >= 1e6 ? "%.0f" : "%.1f", v); }

// GB/s (1e9 bytes/s) of `op` at `ns` per operation.
double gb_per_s(const Operation &op, double ns) { return ns > 0 ? op.bytes_per_op / ns : NAN; }

std::string bandwidth_target_text(const Operation &op) {
    if (op.min_bandwidth_ratio <= 0) return "-";
    return fmt(">= %.2f", op.min_bandwidth_ratio);
}

std::string gain_target_text(const Operation &op) {
    if (op.min_gain_share <= 0) return "-";
    return fmt(">= %.2f", op.min_gain_share);
}

std::string target_text(const Operation &op) {
    if (op.c_over_raw_target <= 0) return "-";
    return fmt("<= %.2f", op.c_over_raw_target);
}

const char *verdict_text(Row::Verdict v) {
    switch (v) {
    case Row::PASS: return "PASS";
    case Row::FAIL: return "FAIL";
    case Row::ERROR: return "ERROR";
    case Row::SKIP: return "SKIP";
    default: return "-";
    }
}

std::string driver_version_text(int v) {
    if (v <= 0) return "unknown";
    return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

std::string now_utc() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[64];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
    return buf;
}

std::string min_time_text(const std::string &t) {
    if (t.empty()) return "";
    const char last = t.back();
    return " of >= " + t + (last == 's' || last == 'x' ? "" : " s") + " each";
}

std::string setup_line(const Options &opt, const Collector &c, const std::vector<Row> &rows) {
    const Env &e = env();
    int reps = -1;
    for (const Row &r : rows)
        if (r.reps > 0) reps = reps < 0 ? r.reps : std::min(reps, r.reps);
    std::ostringstream os;
    os << "Device " << e.ordinal << ": " << (e.device_name.empty() ? "unknown" : e.device_name)
       << "; driver API " << driver_version_text(e.driver_version) << "; built against CUDA "
       << driver_version_text(CUDA_VERSION) << "; libcucore " << cucore_version_string() << ".\n"
       << "Host " << (c.host().empty() ? "unknown" : c.host()) << ", " << c.cpus() << " CPUs at "
       << fmt("%.0f", c.mhz()) << " MHz; " << now_utc() << "; " << pinning_text() << ".\n"
       << "Minimum and median of real time per operation over "
       << (reps > 0 ? std::to_string(reps) : std::string("the")) << (opt.interleaved ? " randomly interleaved" : "")
       << (reps == 1 ? " repetition" : " repetitions") << min_time_text(opt.min_time)
       << "; ratios and results from the minima.";
    return os.str();
}

const char *const kNotes[] = {
    ("raw, C ABI, C++: real time per operation of each variant (ns/op), the minimum and the median over the "
     "repetitions (a repetition's time is its mean over its iterations)."),
    ("C/raw: the C ABI's over the raw driver's; C++/C: the C++ facade's over the C ABI's. Both are taken from "
     "the minima, and the result from C/raw of the minima: interference on a shared machine (other load, "
     "preemption, interrupts, clock changes) only adds time, so a variant's fastest repetition is the "
     "standard estimator of its intrinsic cost. The same ratios of the medians are shown beside them."),
    "target: performance_anchors.md's bound on C/raw, where it gives one; PASS when C/raw (minima) <= target.",
    ("max cv: the largest coefficient of variation of the repetitions among the three variants: how noisy "
     "the run was. The larger it is, the less the medians' ratios mean; the minima suffer far less from it, "
     "but a C/raw within a few percent of its target is still a lead, not a verdict: rerun."),
};

const char *const kBandwidthNotes[] = {
    ("GB/s: bytes per operation over real time per operation (1e9 bytes/s), for the copy and fill rows: best from "
     "the minimum time, median from the median time; device-to-device copies count read + write bytes, as "
     "performance_anchors.md does."),
    ("C/raw (GB/s): the C ABI's bandwidth over the raw driver's, from the minima: the reciprocal of C/raw above, "
     "so the same result; target: performance_anchors.md's bound on bandwidth, where it gives one."),
};

const char *const kGainNotes[] = {
    ("gain: a batch row's speed-up over the row doing the same work without the batch (its time over the batch "
     "row's), per column, from the minima (the medians' C ABI share beside)."),
    ("C/raw share: the C ABI's gain over the raw driver's (C++/raw: the C++ facade's); target: the share of the "
     "driver's own gain the library must keep; PASS when the minima's share >= target."),
};

bool any_gain(const std::vector<Row> &rows) {
    for (const Row &r : rows)
        if (r.baseline != nullptr) return true;
    return false;
}

// Rows that run a fixed number of iterations per repetition (--benchmark_min_time does not apply).
std::vector<std::string> iteration_notes(const std::vector<Row> &rows) {
    std::vector<std::string> out;
    for (const Row &r : rows)
        if (r.op->iterations > 0)
            out.push_back(std::string(r.op->title) + ": " + std::to_string(r.op->iterations) +
                          " iterations per repetition, fixed (--benchmark_min_time does not apply)");
    return out;
}

bool any_bandwidth(const std::vector<Row> &rows) {
    for (const Row &r : rows)
        if (r.op->bytes_per_op > 0) return true;
    return false;
}

// Notes on rows whose medians would give another result than their minima (nothing hidden).
std::vector<std::string> disagreement_notes(const std::vector<Row> &rows) {
    std::vector<std::string> out;
    for (const Row &r : rows) {
        if (r.verdict != Row::PASS && r.verdict != Row::FAIL) continue;
        if (r.median_verdict == r.verdict || r.median_verdict == Row::NONE) continue;
        out.push_back(std::string(r.op->title) + ": the medians' C/raw " + fmt("%.3f", r.c_over_raw_median) +
                      " would " + verdict_text(r.median_verdict) + " its target (" + target_text(*r.op) +
                      "); the result is the minima's C/raw " + fmt("%.3f", r.c_over_raw) + " (" +
                      verdict_text(r.verdict) + "). The run was noisy for this row: rerun to confirm.");
    }
    return out;
}

std::string center(const std::string &text, size_t width) {
    if (text.size() >= width) return text;
    size_t left = (width - text.size() + 1) / 2;
    return std::string(left, ' ') + text + std::string(width - text.size() - left, ' ');
}

void print_table(std::ostream &os, const Options &opt, const Collector &c, const std::vector<Row> &rows) {
    static const char *const kRow = "%-44s %9s %9s  %9s %9s  %9s %9s  %7s %8s %6s %7s  %7s %7s %7s\n";
    char line[768];
    os << "\n" << setup_line(opt, c, rows) << "\n\n";
    os << std::string(44, ' ') << " " << center("raw ns/op", 19) << "  " << center("C ABI ns/op", 19) << "  "
       << center("C++ ns/op", 19) << "  " << center("C/raw", 31) << "  " << center("C++/C", 15) << "\n";
    std::snprintf(line, sizeof line, kRow, "operation", "min", "median", "min", "median", "min", "median", "min",
                  "target", "result", "median", "min", "median", "max cv");
    os << line;
    os << std::string(std::strlen(line) - 1, '-') << "\n";
    for (const Row &r : rows) {
        std::snprintf(line, sizeof line, kRow, r.op->title, ns_text(r.min[0]).c_str(), ns_text(r.median[0]).c_str(),
                      ns_text(r.min[1]).c_str(), ns_text(r.median[1]).c_str(), ns_text(r.min[2]).c_str(),
                      ns_text(r.median[2]).c_str(), fmt("%.3f", r.c_over_raw).c_str(),
                      target_text(*r.op).c_str(), verdict_text(r.verdict), fmt("%.3f", r.c_over_raw_median).c_str(),
                      fmt("%.3f", r.cpp_over_c).c_str(), fmt("%.3f", r.cpp_over_c_median).c_str(),
                      fmt("%.1f%%", r.cv * 100).c_str());
        os << line;
        if (!r.error.empty()) os << "    error: " << r.error << "\n";
        if (r.error.empty() && !r.skipped.empty()) os << "    skipped: " << r.skipped << "\n";
    }
    if (any_bandwidth(rows)) {
        static const char *const kBwRow = "%-44s %8s  %8s %8s  %8s %8s  %8s %8s  %7s %8s %6s\n";
        os << "\n" << std::string(44, ' ') << " " << std::string(8, ' ') << "  " << center("raw GB/s", 17) << "  "
           << center("C ABI GB/s", 17) << "  " << center("C++ GB/s", 17) << "  " << center("C/raw (GB/s)", 23)
           << "\n";
        std::snprintf(line, sizeof line, kBwRow, "operation", "bytes/op", "best", "median", "best", "median", "best",
                      "median", "best", "target", "result");
        os << line;
        os << std::string(std::strlen(line) - 1, '-') << "\n";
        for (const Row &r : rows) {
            const Operation &op = *r.op;
            if (op.bytes_per_op <= 0) continue;
            std::snprintf(line, sizeof line, kBwRow, op.title, size_text(op.bytes_per_op).c_str(),
                          fmt("%.2f", gb_per_s(op, r.min[0])).c_str(), fmt("%.2f", gb_per_s(op, r.median[0])).c_str(),
                          fmt("%.2f", gb_per_s(op, r.min[1])).c_str(), fmt("%.2f", gb_per_s(op, r.median[1])).c_str(),
                          fmt("%.2f", gb_per_s(op, r.min[2])).c_str(), fmt("%.2f", gb_per_s(op, r.median[2])).c_str(),
                          fmt("%.3f", 1.0 / r.c_over_raw).c_str(), bandwidth_target_text(op).c_str(),
                          verdict_text(r.verdict));
            os << line;
        }
    }
    if (any_gain(rows)) {
        static const char *const kGainRow = "%-44s %-44s %7s %7s %7s  %7s %8s %6s %7s  %7s\n";
        os << "\n";
        std::snprintf(line, sizeof line, kGainRow, "batch row", "gain over", "raw", "C ABI", "C++", "C/raw",
                      "target", "result", "median", "C++/raw");
        os << line;
        os << std::string(std::strlen(line) - 1, '-') << "\n";
        for (const Row &r : rows) {
            if (r.baseline == nullptr) continue;
            std::snprintf(line, sizeof line, kGainRow, r.op->title, r.baseline->op->title,
                          fmt("%.2fx", r.gain[0]).c_str(), fmt("%.2fx", r.gain[1]).c_str(),
                          fmt("%.2fx", r.gain[2]).c_str(), fmt("%.3f", r.gain_share).c_str(),
                          gain_target_text(*r.op).c_str(), verdict_text(r.gain_verdict),
                          fmt("%.3f", r.gain_share_median).c_str(), fmt("%.3f", r.gain_share_cpp).c_str());
            os << line;
        }
    }
    os << "\n";
    for (const char *n : kNotes) os << "  " << n << "\n";
    if (any_bandwidth(rows))
        for (const char *n : kBandwidthNotes) os << "  " << n << "\n";
    if (any_gain(rows))
        for (const char *n : kGainNotes) os << "  " << n << "\n";
    for (const std::string &n : iteration_notes(rows)) os << "  " << n << "\n";
    for (const Row &r : rows)
        if (r.op->target_note[0] != '\0') os << "  target of " << r.op->title << ": " << r.op->target_note << "\n";
    for (const std::string &n : disagreement_notes(rows)) os << "  note: " << n << "\n";
}

void write_markdown(const Options &opt, const Collector &c, const std::vector<Row> &rows) {
    const std::string &path = opt.ratio_out;
    std::ofstream f(path);
    if (!f) throw Failure{"cannot write " + path};
    f << "<!-- written by cucore_bench --ratio_out -->\n";
    std::string setup = setup_line(opt, c, rows);
    for (char &ch : setup)
        if (ch == '\n') ch = ' ';
    f << setup << "\n\n";
    f << "| operation | raw min ns/op | raw median ns/op | C ABI min ns/op | C ABI median ns/op | C++ min ns/op "
         "| C++ median ns/op | C ABI / raw (minima) | target | result | C ABI / raw (medians) "
         "| C++ / C ABI (minima) | C++ / C ABI (medians) | max cv |\n";
    f << "|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|\n";
    for (const Row &r : rows) {
        std::string target = target_text(*r.op);
        if (target != "-") target = "&le; " + target.substr(3) + "x";
        f << "| " << r.op->title;
        for (int v = 0; v < 3; ++v) f << " | " << ns_text(r.min[v]) << " | " << ns_text(r.median[v]);
        f << " | " << fmt("%.3f", r.c_over_raw) << " | " << target << " | " << verdict_text(r.verdict) << " | "
          << fmt("%.3f", r.c_over_raw_median) << " | " << fmt("%.3f", r.cpp_over_c) << " | "
          << fmt("%.3f", r.cpp_over_c_median) << " | " << fmt("%.1f%%", r.cv * 100) << " |\n";
    }
    if (any_bandwidth(rows)) {
        f << "\n| operation | bytes per op | raw GB/s (best) | raw GB/s (median) | C ABI GB/s (best) "
             "| C ABI GB/s (median) | C++ GB/s (best) | C++ GB/s (median) | C ABI / raw GB/s (best) | target "
             "| result |\n";
        f << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n";
        for (const Row &r : rows) {
            const Operation &op = *r.op;
            if (op.bytes_per_op <= 0) continue;
            std::string target = bandwidth_target_text(op);
            if (target != "-") target = "&ge; " + target.substr(3) + "x";
            f << "| " << op.title << " | " << size_text(op.bytes_per_op);
            for (int v = 0; v < 3; ++v)
                f << " | " << fmt("%.2f", gb_per_s(op, r.min[v])) << " | " << fmt("%.2f", gb_per_s(op, r.median[v]));
            f << " | " << fmt("%.3f", 1.0 / r.c_over_raw) << " | " << target << " | " << verdict_text(r.verdict)
              << " |\n";
        }
    }
    if (any_gain(rows)) {
        f << "\n| batch row | gain over | raw gain | C ABI gain | C++ gain | C ABI / raw gain (minima) | target "
             "| result | C ABI / raw gain (medians) | C++ / raw gain (minima) |\n";
        f << "|---|---|---:|---:|---:|---:|---|---|---:|---:|\n";
        for (const Row &r : rows) {
            if (r.baseline == nullptr) continue;
            std::string target = gain_target_text(*r.op);
            if (target != "-") target = "&ge; " + target.substr(3);
            f << "| " << r.op->title << " | " << r.baseline->op->title;
            for (int v = 0; v < 3; ++v) f << " | " << fmt("%.2fx", r.gain[v]);
            f << " | " << fmt("%.3f", r.gain_share) << " | " << target << " | " << verdict_text(r.gain_verdict)
              << " | " << fmt("%.3f", r.gain_share_median) << " | " << fmt("%.3f", r.gain_share_cpp) << " |\n";
        }
    }
    f << "\n";
    for (const char *n : kNotes) f << "- " << n << "\n";
    if (any_bandwidth(rows))
        for (const char *n : kBandwidthNotes) f << "- " << n << "\n";
    if (any_gain(rows))
        for (const char *n : kGainNotes) f << "- " << n << "\n";
    for (const std::string &n : iteration_notes(rows)) f << "- " << n << "\n";
    for (const Row &r : rows)
        if (r.op->target_note[0] != '\0') f << "- target of " << r.op->title << ": " << r.op->target_note << "\n";
    for (const std::string &n : disagreement_notes(rows)) f << "- note: " << n << "\n";
    for (const Row &r : rows)
        if (!r.error.empty()) f << "- " << r.op->title << " failed: " << r.error << "\n";
    for (const Row &r : rows)
        if (r.error.empty() && !r.skipped.empty()) f << "- " << r.op->title << " skipped: " << r.skipped << "\n";
    if (!f) throw Failure{"cannot write " + path};
}

int run(int argc, char **argv) {
    Options opt;
    std::vector<std::string> args = parse_args(argc, argv, &opt);
    std::vector<char *> bargv;
    for (std::string &a : args) bargv.push_back(a.data());
    bargv.push_back(nullptr);
    int bargc = static_cast<int>(args.size());
    benchmark::Initialize(&bargc, bargv.data());
    if (benchmark::ReportUnrecognizedArguments(bargc, bargv.data())) return 2;

    if (opt.list_only) {  // needs no GPU
        benchmark::RunSpecifiedBenchmarks();
        benchmark::Shutdown();
        return 0;
    }

    choose_cpu(opt.pin, opt.cpu);  // a --cpu the process may not run on is a bad command line, GPU or not
    try {
        set_up(opt.device);
    } catch (const Skip &s) {
        std::printf("cucore_bench: skipped: %s\n", s.why.c_str());
        tear_down();
        return 0;
    } catch (const Failure &f) {
        std::fprintf(stderr, "cucore_bench: error: %s\n", f.why.c_str());
        tear_down();
        return 1;
    } catch (const std::exception &ex) {
        std::fprintf(stderr, "cucore_bench: error: %s\n", ex.what());
        tear_down();
        return 1;
    }

    // After set_up: the driver's threads started so far keep their own CPUs, less the benchmark's.
    pin_benchmark_thread(opt.cpu);

    Collector collector(opt.color ? benchmark::ConsoleReporter::OO_ColorTabular
                                  : benchmark::ConsoleReporter::OO_Tabular);
    benchmark::RunSpecifiedBenchmarks(&collector);
    benchmark::Shutdown();

    std::vector<Row> rows = build_rows(collector);
    int rc = 0;
    print_table(std::cout, opt, collector, rows);
    std::cout.flush();
    if (!opt.ratio_out.empty()) {
        try {
            write_markdown(opt, collector, rows);
            std::printf("cucore_bench: ratio table written to %s\n", opt.ratio_out.c_str());
        } catch (const Failure &f) {
            std::fprintf(stderr, "cucore_bench: error: %s\n", f.why.c_str());
            rc = 1;
        }
    }
    if (collector.any_error()) {
        std::fprintf(stderr, "cucore_bench: error: some benchmarks failed (see above)\n");
        rc = 1;
    }
    if (opt.strict) {
        for (const Row &r : rows)
            if (r.verdict == Row::FAIL || r.gain_verdict == Row::FAIL) {
                std::fprintf(stderr, "cucore_bench: %s misses its target (--ratio_strict)\n", r.op->title);
                rc = 1;
            }
    }
    tear_down();
    return rc;
}

}  // namespace
}  // namespace cucore_bench

int main(int argc, char **argv) { return cucore_bench::run(argc, argv); }
