// cucore_bench: pinning the benchmark thread to one CPU (pinning.hpp).

#include "pinning.hpp"

#include <dirent.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace cucore_bench {
namespace {

// ---- Pinning -------------------------------------------------------------------------------------
// The benchmark thread (the main thread: Google Benchmark runs single-threaded benchmarks on it, and
// the primary context is current there) runs on one CPU for the whole run, so all three variants of
// every operation run on the same core, without migrations. Threads the driver starts inherit the
// affinity of the thread that starts them; before every run (outside the timed loop) the other
// threads of the process are moved off the benchmark CPU, so that e.g. the driver's host-function
// thread never competes with the benchmark thread for it.

struct Pinning {
    int cpu = -1;          // the benchmark thread's CPU; -1: not pinned
    cpu_set_t allowed{};   // the CPUs the process may run on, at start
    cpu_set_t others{};    // allowed minus cpu (empty when cpu is the only one)
    std::string why_not;   // when not pinned: why
};

Pinning &pinning() {
    static Pinning instance;
    return instance;
}

long current_tid() { return syscall(SYS_gettid); }

// Moves every other thread of the process whose affinity includes the benchmark CPU off it (to its
// own CPUs minus that one, or, when that leaves none, to the other allowed CPUs). Best effort;
// returns how many threads were moved.
int keep_other_threads_off() {
    const Pinning &p = pinning();
    if (p.cpu < 0 || CPU_COUNT(&p.others) == 0) return 0;
    DIR *dir = opendir("/proc/self/task");
    if (dir == nullptr) return 0;
    const long self = current_tid();
    int moved = 0;
    while (const dirent *de = readdir(dir)) {
        char *end = nullptr;
        const long tid = std::strtol(de->d_name, &end, 10);
        if (*de->d_name == '\0' || *end != '\0' || tid <= 0 || tid == self) continue;
        cpu_set_t mask;
        CPU_ZERO(&mask);
        if (sched_getaffinity(static_cast<pid_t>(tid), sizeof mask, &mask) != 0 || !CPU_ISSET(p.cpu, &mask))
            continue;
        CPU_CLR(p.cpu, &mask);
        if (CPU_COUNT(&mask) == 0) mask = p.others;
        if (sched_setaffinity(static_cast<pid_t>(tid), sizeof mask, &mask) == 0) ++moved;
    }
    closedir(dir);
    return moved;
}

std::string cpu_list_text(const cpu_set_t &set) {
    std::string out;
    for (int i = 0; i < CPU_SETSIZE; ++i) {
        if (!CPU_ISSET(i, &set)) continue;
        int j = i;
        while (j + 1 < CPU_SETSIZE && CPU_ISSET(j + 1, &set)) ++j;
        if (!out.empty()) out += ",";
        out += std::to_string(i);
        if (j > i) out += "-" + std::to_string(j);
        i = j;
    }
    return out.empty() ? "none" : out;
}

}  // namespace

// Called by every benchmark before its function (outside the timed loop).
void before_run() {
    const Pinning &p = pinning();
    if (p.cpu < 0) return;
    if (sched_getcpu() != p.cpu) {  // someone changed our affinity: pin again
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(p.cpu, &one);
        sched_setaffinity(0, sizeof one, &one);
    }
    keep_other_threads_off();
}

// Reads the CPUs this process may run on and checks --cpu against them (exit 2 when it is not one
// of them); does not pin yet.
void choose_cpu(bool pin, int requested_cpu) {
    Pinning &p = pinning();
    if (!pin) {
        p.why_not = "--cpu=none";
        return;
    }
    CPU_ZERO(&p.allowed);
    if (sched_getaffinity(0, sizeof p.allowed, &p.allowed) != 0) {
        p.why_not = std::string("sched_getaffinity: ") + std::strerror(errno);
        return;
    }
    if (requested_cpu >= 0 && !CPU_ISSET(requested_cpu, &p.allowed)) {
        std::fprintf(stderr, "cucore_bench: --cpu=%d: this process may run only on CPUs %s\n", requested_cpu,
                     cpu_list_text(p.allowed).c_str());
        std::exit(2);
    }
}

// Pins the calling thread (the benchmark thread) to --cpu, or by default to the highest-numbered
// CPU the process may run on (CPU 0 tends to take more of the system's housekeeping), and moves
// the process's other threads (the driver's) off it. Prints what it did.
void pin_benchmark_thread(int requested_cpu) {
    Pinning &p = pinning();
    int moved = 0;
    if (p.why_not.empty()) {
        int cpu = requested_cpu;
        for (int i = CPU_SETSIZE - 1; cpu < 0 && i >= 0; --i)
            if (CPU_ISSET(i, &p.allowed)) cpu = i;
        cpu_set_t one;
        CPU_ZERO(&one);
        if (cpu >= 0) CPU_SET(cpu, &one);
        if (cpu < 0) {
            p.why_not = "no CPU in the affinity mask";
        } else if (sched_setaffinity(0, sizeof one, &one) != 0) {
            p.why_not = std::string("sched_setaffinity: ") + std::strerror(errno);
        } else {
            p.cpu = cpu;
            p.others = p.allowed;
            CPU_CLR(cpu, &p.others);
            moved = keep_other_threads_off();
        }
    }
    if (p.cpu >= 0)
        std::printf("cucore_bench: benchmark thread pinned to CPU %d (this process may run on CPUs %s); "
                    "%d other thread%s of the process moved off it\n",
                    p.cpu, cpu_list_text(p.allowed).c_str(), moved, moved == 1 ? "" : "s");
    else
        std::printf("cucore_bench: benchmark thread not pinned (%s)\n", p.why_not.c_str());
    std::fflush(stdout);
}

std::string pinning_text() {
    const Pinning &p = pinning();
    if (p.cpu < 0) return "benchmark thread not pinned (" + p.why_not + ")";
    return "benchmark thread pinned to CPU " + std::to_string(p.cpu) + " (of " + cpu_list_text(p.allowed) + ")";
}

}  // namespace cucore_bench
