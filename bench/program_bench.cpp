// Programs: a cold compile of one small kernel to cubin, and program cache hits in memory and on
// disk, each including the program's creation and the object code it returns.
//
// Columns:
//   cold compile  raw: NVRTC called directly (nvrtcCreateProgram, nvrtcCompileProgram with the very
//                 flags libcucore passes, read from cucore_program_flags, nvrtcGetCUBIN,
//                 nvrtcDestroyProgram); C ABI: cucore_program_create + cucore_program_compile
//                 (no cache) + releases; C++: the façade's Program and ObjectCode.
//   cache hits    raw: the least work any cache must do for a hit (in memory: a hash-map lookup of
//                 the source and a copy of the cubin; on disk: open, read and close the entry
//                 file), so the ratio shows what the key, the checks and the handles cost over
//                 that; C ABI and C++: create the program, compile it through a cache that
//                 already holds it (a hit: no compiler runs), release both.
// The anchors bound these rows in absolute time against cuda.core (cold: the same as cuda.core's
// 216 ms; hits: <= 0.5x cuda.core's 74.6 us on disk and 22.2 us in memory, i.e. <= 37 us and
// <= 11 us), not as a ratio to a raw column: at the end of the run a table prints each column's
// best time per operation beside those anchors and targets.
// The cold compile is slow (hundreds of ms), so its rows run 1 iteration per repetition.
// Without NVRTC the rows are skipped with the reason.

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench_common.hpp"

namespace cucore_bench {
namespace {

const char *const kSource = R"(
extern "C" __global__ void saxpy(float a, const float *x, const float *y, float *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
)";

// ---- NVRTC, loaded by the benchmark itself (the raw column) -------------------------------------

struct RawNvrtc {
    using Create = int (*)(void **, const char *, const char *, int, const char *const *, const char *const *);
    using Compile = int (*)(void *, int, const char *const *);
    using GetSize = int (*)(void *, std::size_t *);
    using Get = int (*)(void *, char *);
    using Destroy = int (*)(void **);
    Create create = nullptr;
    Compile compile = nullptr;
    GetSize cubin_size = nullptr;
    Get cubin = nullptr;
    Destroy destroy = nullptr;
    std::string why;  // set when NVRTC could not be loaded
};

const RawNvrtc &raw_nvrtc() {
    static const RawNvrtc n = [] {
        RawNvrtc r;
        void *lib = nullptr;
        const char *override_path = std::getenv("CUCORE_NVRTC_PATH");
        if (override_path != nullptr && *override_path != '\0') {
            lib = dlopen(override_path, RTLD_NOW | RTLD_LOCAL);
        } else {
            for (const char *name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"})
                if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
        }
        if (lib == nullptr) {
            r.why = "NVRTC not found (libnvrtc.so.13/.12)";
            return r;
        }
        r.create = reinterpret_cast<RawNvrtc::Create>(dlsym(lib, "nvrtcCreateProgram"));
        r.compile = reinterpret_cast<RawNvrtc::Compile>(dlsym(lib, "nvrtcCompileProgram"));
        r.cubin_size = reinterpret_cast<RawNvrtc::GetSize>(dlsym(lib, "nvrtcGetCUBINSize"));
        r.cubin = reinterpret_cast<RawNvrtc::Get>(dlsym(lib, "nvrtcGetCUBIN"));
        r.destroy = reinterpret_cast<RawNvrtc::Destroy>(dlsym(lib, "nvrtcDestroyProgram"));
        if (!r.create || !r.compile || !r.cubin_size || !r.cubin || !r.destroy) r.why = "NVRTC lacks an entry point";
        return r;
    }();
    return n;
}

// The options every column compiles with (the device's arch), and the NVRTC flags libcucore
// makes of them (for the raw column).
struct Setup {
    std::string arch;
    cucore_program_options_t options = CUCORE_PROGRAM_OPTIONS_INIT;
    std::vector<std::string> flags;
    std::string why;  // set when the rows cannot run here
};

const Setup &setup() {
    static Setup out;  // filled in place: options.arch points into out.arch
    static const bool done = [] {
        int version = 0;
        if (cucore_compiler_version(CUCORE_BACKEND_NVRTC, &version) != CUCORE_SUCCESS) {
            out.why = std::string("NVRTC: ") + cucore_last_error_message();
            return true;
        }
        int major = 0, minor = 0;
        if (cucore_device_compute_capability(env().device, &major, &minor) != CUCORE_SUCCESS) {
            out.why = cucore_last_error_message();
            return true;
        }
        out.arch = "sm_" + std::to_string(major * 10 + minor);
        out.options.arch = out.arch.c_str();
        cucore_program_t *p = nullptr;
        std::size_t n = 0;
        std::string text;
        if (cucore_program_create(kSource, 0, CUCORE_CODE_CXX, &out.options, &p) == CUCORE_SUCCESS &&
            cucore_program_flags(p, nullptr, 0, &n) == CUCORE_SUCCESS) {
            text.assign(n + 1, '\0');
            cucore_program_flags(p, &text[0], text.size(), &n);
            text.resize(n);
        } else {
            out.why = std::string("cucore_program_flags: ") + cucore_last_error_message();
        }
        cucore_program_release(p);
        std::size_t start = 0;
        while (start < text.size()) {
            std::size_t end = text.find('\n', start);
            if (end == std::string::npos) end = text.size();
            if (end > start) out.flags.push_back(text.substr(start, end - start));
            start = end + 1;
        }
        return true;
    }();
    (void)done;
    return out;
}

// Best (least) time per operation seen by each column of each row, in ns, for the final table.
enum Row { kCold, kMemory, kDisk, kRows };
double best_ns[kRows][3] = {{NAN, NAN, NAN}, {NAN, NAN, NAN}, {NAN, NAN, NAN}};

// Runs the timed loop `body` (its result false after a failure) and records the best per-operation
// time of this run in best_ns[row][column].
template <typename Body>
void timed(benchmark::State &state, Row row, int column, Body body) {
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state)
        if (!body()) return;
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    if (state.iterations() > 0) {
        const double per_op = ns / static_cast<double>(state.iterations());
        double &best = best_ns[row][column];
        if (std::isnan(best) || per_op < best) best = per_op;
    }
}

// ---- cold compile ------------------------------------------------------------------------------

void cold_raw(benchmark::State &state) {
    const Setup &s = setup();
    const RawNvrtc &n = raw_nvrtc();
    if (!s.why.empty()) return skip_run(state, s.why);
    if (!n.why.empty()) return skip_run(state, n.why);
    std::vector<const char *> flags;
    for (const std::string &f : s.flags) flags.push_back(f.c_str());
    std::string cubin;
    timed(state, kCold, 0, [&] {
        void *prog = nullptr;
        std::size_t size = 0;
        int r = n.create(&prog, kSource, "default_program", 0, nullptr, nullptr);
        if (r == 0) r = n.compile(prog, static_cast<int>(flags.size()), flags.data());
        if (r == 0) r = n.cubin_size(prog, &size);
        if (r == 0) {
            cubin.resize(size);
            r = n.cubin(prog, &cubin[0]);
        }
        if (prog != nullptr) n.destroy(&prog);
        if (r != 0) fail_check(state, "NVRTC failed with nvrtcResult " + std::to_string(r));
        return r == 0;
    });
}

void cold_c(benchmark::State &state) {
    const Setup &s = setup();
    if (!s.why.empty()) return skip_run(state, s.why);
    timed(state, kCold, 1, [&] {
        cucore_program_t *p = nullptr;
        cucore_object_code_t *code = nullptr;
        if (!ok(state, cucore_program_create(kSource, 0, CUCORE_CODE_CXX, &s.options, &p), "cucore_program_create"))
            return false;
        const bool good = ok(state, cucore_program_compile(p, CUCORE_CODE_CUBIN, nullptr, 0, nullptr, &code),
                             "cucore_program_compile");
        cucore_object_code_release(code);
        cucore_program_release(p);
        return good;
    });
}

void cold_cpp(benchmark::State &state) {
    const Setup &s = setup();
    if (!s.why.empty()) return skip_run(state, s.why);
    try {
        const std::string source = kSource;
        cucore::ProgramOptions options;
        options.arch = s.arch;
        timed(state, kCold, 2, [&] {
            const cucore::Program p = cucore::Program::create(source, CUCORE_CODE_CXX, options);
            const cucore::ObjectCode code = p.compile(CUCORE_CODE_CUBIN);
            return true;
        });
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
}

// ---- cache hits ----------------------------------------------------------------------------------

// A C ABI cache of `kind` (memory or a fresh temporary directory) that holds the program.
struct Cache {
    cucore_program_cache_t *c = nullptr;
    std::string dir;  // on disk: the directory (removed at the end)
    std::string entry_path;
    std::string why;
};

std::string make_temp_dir() {
    const char *base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/cucore-bench-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    return mkdtemp(buf.data()) != nullptr ? std::string(buf.data()) : std::string();
}

// Fills `cache` with the program (one miss) and, on disk, finds its one entry file.
void prime(Cache &cache, const Setup &s) {
    cucore_program_t *p = nullptr;
    cucore_object_code_t *code = nullptr;
    if (cucore_program_create(kSource, 0, CUCORE_CODE_CXX, &s.options, &p) != CUCORE_SUCCESS ||
        cucore_program_compile(p, CUCORE_CODE_CUBIN, nullptr, 0, cache.c, &code) != CUCORE_SUCCESS)
        cache.why = std::string("priming the cache: ") + cucore_last_error_message();
    cucore_object_code_release(code);
    cucore_program_release(p);
    if (!cache.dir.empty() && cache.why.empty()) {
        // The one regular file of the directory is the entry.
        if (FILE *f = popen(("find '" + cache.dir + "' -maxdepth 1 -type f").c_str(), "r")) {
            char line[4096];
            if (std::fgets(line, sizeof line, f) != nullptr) {
                cache.entry_path = line;
                while (!cache.entry_path.empty() && cache.entry_path.back() == '\n') cache.entry_path.pop_back();
            }
            pclose(f);
        }
        if (cache.entry_path.empty()) cache.why = "no entry file in the on-disk cache " + cache.dir;
    }
}

Cache &memory_cache() {
    static Cache c;
    static const bool done = [] {
        const Setup &s = setup();
        if (!s.why.empty()) {
            c.why = s.why;
            return true;
        }
        if (cucore_program_cache_create_in_memory(0, &c.c) != CUCORE_SUCCESS)
            c.why = cucore_last_error_message();
        else
            prime(c, s);
        at_tear_down([] {
            cucore_program_cache_release(memory_cache().c);
            memory_cache().c = nullptr;
        });
        return true;
    }();
    (void)done;
    return c;
}

Cache &disk_cache() {
    static Cache c;
    static const bool done = [] {
        const Setup &s = setup();
        if (!s.why.empty()) {
            c.why = s.why;
            return true;
        }
        c.dir = make_temp_dir();
        if (c.dir.empty())
            c.why = "mkdtemp failed";
        else if (cucore_program_cache_create_on_disk(c.dir.c_str(), 0, &c.c) != CUCORE_SUCCESS)
            c.why = cucore_last_error_message();
        else
            prime(c, s);
        at_tear_down([] {
            Cache &x = disk_cache();
            cucore_program_cache_release(x.c);
            x.c = nullptr;
            if (!x.dir.empty()) (void)std::system(("rm -rf '" + x.dir + "'").c_str());
        });
        return true;
    }();
    (void)done;
    return c;
}

// The C ABI and C++ hit loops, the same for both kinds of cache.
void hit_c(benchmark::State &state, Cache &cache, Row row) {
    const Setup &s = setup();
    if (!cache.why.empty()) return skip_run(state, cache.why);
    cucore_program_cache_stats_t before = CUCORE_PROGRAM_CACHE_STATS_INIT, after = before;
    cucore_program_cache_stats(cache.c, &before);
    timed(state, row, 1, [&] {
        cucore_program_t *p = nullptr;
        cucore_object_code_t *code = nullptr;
        if (!ok(state, cucore_program_create(kSource, 0, CUCORE_CODE_CXX, &s.options, &p), "cucore_program_create"))
            return false;
        const bool good = ok(state, cucore_program_compile(p, CUCORE_CODE_CUBIN, nullptr, 0, cache.c, &code),
                             "cucore_program_compile");
        cucore_object_code_release(code);
        cucore_program_release(p);
        return good;
    });
    cucore_program_cache_stats(cache.c, &after);
    if (after.misses != before.misses) fail_check(state, "a cache-hit loop missed the cache");
}

void hit_cpp(benchmark::State &state, Cache &cache, Row row) {
    const Setup &s = setup();
    if (!cache.why.empty()) return skip_run(state, cache.why);
    try {
        // The façade borrows the C cache through a retained reference.
        const cucore::ProgramCache c = cucore::ProgramCache::borrow(cache.c);
        const std::uint64_t misses = c.stats().misses;
        const std::string source = kSource;
        cucore::ProgramOptions options;
        options.arch = s.arch;
        timed(state, row, 2, [&] {
            const cucore::Program p = cucore::Program::create(source, CUCORE_CODE_CXX, options);
            const cucore::ObjectCode code = p.compile(CUCORE_CODE_CUBIN, {}, c);
            return true;
        });
        if (c.stats().misses != misses) fail_check(state, "a cache-hit loop missed the cache");
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
}

// Raw, in memory: a hash map from source to cubin, and a copy of the cubin out of it.
void memory_raw(benchmark::State &state) {
    Cache &cache = memory_cache();
    if (!cache.why.empty()) return skip_run(state, cache.why);
    std::unordered_map<std::string, std::string> map;
    map[kSource] = std::string(12 * 1024, 'x');  // about a small kernel's cubin
    std::string out;
    timed(state, kMemory, 0, [&] {
        const auto it = map.find(kSource);
        if (it == map.end()) return false;
        out = it->second;
        benchmark::DoNotOptimize(out.data());
        return true;
    });
}

// Raw, on disk: open, read and close the very entry file the C ABI's hits read.
void disk_raw(benchmark::State &state) {
    Cache &cache = disk_cache();
    if (!cache.why.empty()) return skip_run(state, cache.why);
    std::vector<char> buf;
    timed(state, kDisk, 0, [&] {
        const int fd = open(cache.entry_path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            fail_check(state, "open " + cache.entry_path + " failed");
            return false;
        }
        struct stat st {};
        fstat(fd, &st);
        buf.resize(static_cast<std::size_t>(st.st_size));
        const ssize_t got = read(fd, buf.data(), buf.size());
        close(fd);
        benchmark::DoNotOptimize(buf.data());
        return got == static_cast<ssize_t>(buf.size());
    });
}

void memory_c(benchmark::State &state) { hit_c(state, memory_cache(), kMemory); }
void memory_cpp(benchmark::State &state) { hit_cpp(state, memory_cache(), kMemory); }
void disk_c(benchmark::State &state) { hit_c(state, disk_cache(), kDisk); }
void disk_cpp(benchmark::State &state) { hit_cpp(state, disk_cache(), kDisk); }

// ---- The absolute table at the end of the run ------------------------------------------------------

void print_absolute() {
    struct Anchor {
        const char *title;
        double cuda_core_ns;
        double target_ns;  // our bound (0: none)
        const char *target_text;
    };
    static const Anchor kAnchors[kRows] = {
        {"NVRTC compile to cubin, cold", 216e6, 0, "same as cuda.core (cold)"},
        {"program cache hit, in memory", 22.2e3, 11e3, "<= 11 us (0.5x cuda.core)"},
        {"program cache hit, on disk", 74.6e3, 37e3, "<= 37 us (0.5x cuda.core)"},
    };
    bool any = false;
    for (int r = 0; r < kRows; ++r)
        for (int c = 0; c < 3; ++c) any = any || !std::isnan(best_ns[r][c]);
    if (!any) return;
    auto us = [](double ns) -> std::string {
        if (std::isnan(ns)) return "-";
        char b[32];
        std::snprintf(b, sizeof b, ns >= 1e6 ? "%.1f ms" : "%.2f us", ns >= 1e6 ? ns / 1e6 : ns / 1e3);
        return b;
    };
    // PASS/FAIL of the C ABI and C++ columns against the row's target.
    auto result_of = [&](int r) -> std::string {
        const Anchor &a = kAnchors[r];
        if (a.target_ns <= 0 || std::isnan(best_ns[r][1])) return "-";
        std::string result = best_ns[r][1] <= a.target_ns ? "PASS" : "FAIL";
        if (!std::isnan(best_ns[r][2])) result += best_ns[r][2] <= a.target_ns ? ", PASS" : ", FAIL";
        return result;
    };
    std::printf("\nPrograms: best time per operation (creation + compile/hit + release) against cuda.core 1.2's "
                "anchors (H200)\n");
    std::printf("%-30s %12s %12s %12s %14s  %-28s %s\n", "operation", "raw", "C ABI", "C++", "cuda.core", "target",
                "result (C ABI, C++)");
    for (int r = 0; r < kRows; ++r) {
        const Anchor &a = kAnchors[r];
        const std::string result = result_of(r);
        std::printf("%-30s %12s %12s %12s %14s  %-28s %s\n", a.title, us(best_ns[r][0]).c_str(),
                    us(best_ns[r][1]).c_str(), us(best_ns[r][2]).c_str(), us(a.cuda_core_ns).c_str(), a.target_text,
                    result.c_str());
    }
    const char *const note =
        "raw: NVRTC called directly (cold); a hash-map lookup + copy (memory); open + read + close of the entry "
        "file (disk). The anchors are absolute times of another run on an H200: a lead, not a same-run ratio.";
    std::printf("  %s\n", note);

    // The same table in the markdown of --ratio_out (main.cpp writes that file before the tear-down
    // hooks run; the option is read back from the command line, which main.cpp does not hand over).
    std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
    const std::string args((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
    const std::string key = "--ratio_out=";
    std::string path;
    for (std::size_t at = 0; at < args.size(); at = args.find('\0', at) + 1) {
        if (args.compare(at, key.size(), key) == 0) path = args.substr(at + key.size(), args.find('\0', at) - at - key.size());
        if (args.find('\0', at) == std::string::npos) break;
    }
    if (path.empty()) return;
    std::ofstream md(path, std::ios::app);
    md << "\n### Programs: best time per operation against cuda.core 1.2 (absolute)\n\n"
       << "| operation | raw | C ABI | C++ | cuda.core | target | result (C ABI, C++) |\n|---|---|---|---|---|---|---|\n";
    for (int r = 0; r < kRows; ++r) {
        const Anchor &a = kAnchors[r];
        const std::string result = result_of(r);
        md << "| " << a.title << " | " << us(best_ns[r][0]) << " | " << us(best_ns[r][1]) << " | "
           << us(best_ns[r][2]) << " | " << us(a.cuda_core_ns) << " | " << a.target_text << " | " << result << " |\n";
    }
    md << "\n" << note << "\n";
}

const bool registered = [] {
    register_operation({200, "program_compile_cold", "NVRTC compile, cold", 0,
                        "performance_anchors.md: NVRTC compile of one small kernel to cubin (absolute, see the "
                        "programs table)",
                        cold_raw, cold_c, cold_cpp, 0, 0, 1});
    register_operation({210, "program_cache_hit_memory", "cache hit, in memory", 0,
                        "performance_anchors.md: program cache hit, in memory (absolute, see the programs table)",
                        memory_raw, memory_c, memory_cpp});
    register_operation({220, "program_cache_hit_disk", "cache hit, on disk", 0,
                        "performance_anchors.md: program cache hit, on disk (absolute, see the programs table)",
                        disk_raw, disk_c, disk_cpp});
    at_tear_down(print_absolute);  // registered first, so it runs last, after the caches are released
    return true;
}();

}  // namespace
}  // namespace cucore_bench
