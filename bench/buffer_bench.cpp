// Copies and fills: host-to-device and device-to-host copies from and to page-locked host memory,
// device-to-device copies, a 4-byte synchronous device-to-host copy, and 4-byte-pattern fills.
//
// Each variant does the same work through its own API:
//   raw    cuMemcpyAsync / cuMemsetD32Async on host memory from cuMemAllocHost and device memory
//          from the device's current pool (cuMemAllocFromPoolAsync), on a stream made with
//          cuStreamCreateWithPriority(CU_STREAM_NON_BLOCKING, 0);
//   C ABI  cucore_buffer_copy_from_host / cucore_buffer_copy_to_host / cucore_buffer_copy /
//          cucore_buffer_fill on buffers from the legacy pinned resource and the device's default
//          pool resource, on a stream with cucore's defaults;
//   C++    the same through cucore::Buffer.
// libcucore calls cuMemcpyAsync for every direction and cuMemsetD32Async for 4-byte fills, so the
// raw column calls those entry points too, and a ratio is the wrapper's cost alone.
//
// Copies and fills are timed until their data has landed, not as host submit time: the stream is
// synchronized inside the timed loop, every sync_every(bytes) operations and after the last, so a
// repetition's time per operation is the throughput of back-to-back operations. GB/s (main.cpp's
// table) is bytes per operation over that time; device-to-device copies count read + write bytes,
// as performance_anchors.md does. The 4-byte synchronous copy is a latency: every iteration copies
// 4 bytes into page-locked memory and synchronizes the stream.
//
// Memory: each variant keeps, for the whole run, one stream and, per size, one page-locked host
// allocation and two device allocations, made on first use and freed at tear-down (pinning 1 GiB
// for every repetition would take longer than the copies). A 1 GiB allocation that fails skips its
// rows with the reason (skip_run); a smaller one that fails is an error. The 1 MiB and 1 GiB copies
// run a fixed number of iterations per repetition (20-60 ms each at the anchors' bandwidths), the
// rest as long as --benchmark_min_time asks: about 40 s of timed loops with the defaults (estimated
// from these counts), and a few seconds, mostly the first allocations, in a smoke run
// (--benchmark_min_time=0.001 --benchmark_repetitions=1).
//
// Checks, outside the timing: before each loop the source gets a fresh 32-bit pattern and the
// destination zeros; after it, the first and the last word of the destination must hold the
// pattern.

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <utility>

#include "bench_common.hpp"

namespace cucore_bench {
namespace {

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = 1024 * kKiB;
constexpr std::uint64_t kGiB = 1024 * kMiB;

// Allocations this large may fail on a smaller GPU or host: their rows are skipped, not failed.
constexpr std::uint64_t kMayFail = kGiB;

// The anchors' bound on bandwidth for the 1 GiB copies: >= 0.98x raw.
constexpr double kBandwidthRatio = 0.98;

// Operations queued between two (timed) stream synchronizations: ~256 MiB of data, at least 1 and
// at most 1024 (the queue depth the other benchmarks use).
constexpr long long sync_every(std::uint64_t bytes) {
    const std::uint64_t n = 256 * kMiB / bytes;
    return n < 1 ? 1 : n > 1024 ? 1024 : static_cast<long long>(n);
}

// A fresh non-zero pattern for each run's check, so that memory from an earlier run cannot pass it.
std::uint32_t next_pattern() {
    static std::uint32_t counter = 0;
    return 0xC0000000u | (++counter & 0x3FFFFFFFu);
}

// ---- The variants ------------------------------------------------------------------------------
// Each keeps a stream and the resources it allocates from (start, stop), allocates and frees one
// piece of memory (allocate: false with the reason; free), and offers the timed operations, which
// check their result the way every benchmark does (ok(...) for raw and C ABI; the C++ façade
// throws, caught around the whole run). `bytes` is each operation's size; C ABI and C++ buffers
// have exactly that size and use it only where their call takes one.

class Raw {
public:
    struct Mem {
        CUdeviceptr address = 0;
        void *host = nullptr;  // page-locked host memory: its pointer (== address)
    };

    bool start(benchmark::State &state) {
        d_ = &env().driver;
        if (!ok(state, d_->cuDeviceGetMemPool_fn(&pool_, env().cu_device), "cuDeviceGetMemPool")) return false;
        return ok(state, d_->cuStreamCreateWithPriority_fn(&stream_, CU_STREAM_NON_BLOCKING, 0),
                  "cuStreamCreateWithPriority");
    }
    void sync_quietly() {
        if (stream_ != nullptr) d_->cuStreamSynchronize_fn(stream_);
    }
    void stop() {
        if (stream_ == nullptr) return;
        sync_quietly();
        d_->cuStreamDestroy_fn(stream_);
        stream_ = nullptr;
    }

    bool allocate(bool host, std::uint64_t bytes, Mem *m, std::string *why) {
        CUresult r;
        if (host) {
            r = d_->cuMemAllocHost_fn(&m->host, bytes);
            if (r == CUDA_SUCCESS) m->address = reinterpret_cast<CUdeviceptr>(m->host);
        } else {
            r = d_->cuMemAllocFromPoolAsync_fn(&m->address, bytes, pool_, stream_);
            if (r == CUDA_SUCCESS) r = d_->cuStreamSynchronize_fn(stream_);
        }
        if (r == CUDA_SUCCESS) return true;
        free(*m);
        *why = "cu" + std::string(host ? "MemAllocHost" : "MemAllocFromPoolAsync") + ": " + d_->error_name(r);
        return false;
    }
    void free(Mem &m) {
        if (m.host != nullptr)
            d_->cuMemFreeHost_fn(m.host);
        else if (m.address != 0)
            d_->cuMemFreeAsync_fn(m.address, stream_);
        m = Mem{};
    }

    bool h2d(benchmark::State &state, const Mem &dst, const Mem &src, std::uint64_t bytes) {
        return ok(state, d_->cuMemcpyAsync_fn(dst.address, src.address, bytes, stream_), "cuMemcpyAsync");
    }
    bool d2h(benchmark::State &state, const Mem &dst, const Mem &src, std::uint64_t bytes) {
        return ok(state, d_->cuMemcpyAsync_fn(dst.address, src.address, bytes, stream_), "cuMemcpyAsync");
    }
    bool d2d(benchmark::State &state, const Mem &dst, const Mem &src, std::uint64_t bytes) {
        return ok(state, d_->cuMemcpyAsync_fn(dst.address, src.address, bytes, stream_), "cuMemcpyAsync");
    }
    bool fill(benchmark::State &state, const Mem &dst, std::uint64_t bytes, std::uint32_t value) {
        return ok(state, d_->cuMemsetD32Async_fn(dst.address, value, bytes / 4, stream_), "cuMemsetD32Async");
    }
    bool sync(benchmark::State &state) { return ok(state, d_->cuStreamSynchronize_fn(stream_), "cuStreamSynchronize"); }

    // For the checks: the 4 bytes of device memory `m` at `offset`.
    bool read_word(benchmark::State &state, const Mem &m, std::uint64_t offset, std::uint32_t *word) {
        return ok(state, d_->cuMemcpyAsync_fn(reinterpret_cast<CUdeviceptr>(word), m.address + offset, 4, stream_),
                  "cuMemcpyAsync") &&
               sync(state);
    }

private:
    const RawDriver *d_ = nullptr;
    CUmemoryPool pool_ = nullptr;
    CUstream stream_ = nullptr;
};

std::string c_error(const char *what, cucore_status_t s) {
    return std::string(what) + ": " + cucore_status_string(s) + ": " + cucore_last_error_message();
}

class CAbi {
public:
    struct Mem {
        cucore_buffer_t *buffer = nullptr;
        void *host = nullptr;  // page-locked host memory: its pointer
    };

    bool start(benchmark::State &state) {
        cucore_device_t *device = env().device;
        if (ok(state, cucore_device_memory_resource_get_default(device, &device_memory_),
               "cucore_device_memory_resource_get_default") &&
            ok(state, cucore_legacy_pinned_memory_resource_create(device, &pinned_memory_),
               "cucore_legacy_pinned_memory_resource_create") &&
            ok(state, cucore_stream_create(device, nullptr, &stream_), "cucore_stream_create"))
            return true;
        stop();
        return false;
    }
    void sync_quietly() {
        if (stream_ != nullptr) cucore_stream_synchronize(stream_);
    }
    void stop() {
        sync_quietly();
        cucore_stream_release(stream_);
        cucore_memory_resource_release(pinned_memory_);
        cucore_memory_resource_release(device_memory_);
        stream_ = nullptr;
        pinned_memory_ = device_memory_ = nullptr;
    }

    bool allocate(bool host, std::uint64_t bytes, Mem *m, std::string *why) {
        cucore_status_t s = cucore_memory_resource_allocate(host ? pinned_memory_ : device_memory_, bytes,
                                                            host ? nullptr : stream_, &m->buffer);
        const char *what = "cucore_memory_resource_allocate";
        if (s == CUCORE_SUCCESS && host) {
            std::uint64_t address = 0;
            what = "cucore_buffer_address";
            s = cucore_buffer_address(m->buffer, &address);
            m->host = reinterpret_cast<void *>(static_cast<std::uintptr_t>(address));
        } else if (s == CUCORE_SUCCESS) {
            what = "cucore_stream_synchronize";
            s = cucore_stream_synchronize(stream_);
        }
        if (s == CUCORE_SUCCESS) return true;
        *why = c_error(what, s);
        free(*m);
        return false;
    }
    void free(Mem &m) {
        cucore_buffer_release(m.buffer);
        m = Mem{};
    }

    bool h2d(benchmark::State &state, const Mem &dst, const Mem &src, std::uint64_t bytes) {
        return ok(state, cucore_buffer_copy_from_host(dst.buffer, 0, src.host, bytes, stream_),
                  "cucore_buffer_copy_from_host");
    }
    bool d2h(benchmark::State &state, const Mem &dst, const Mem &src, std::uint64_t bytes) {
        return ok(state, cucore_buffer_copy_to_host(src.buffer, 0, dst.host, bytes, stream_),
                  "cucore_buffer_copy_to_host");
    }
    bool d2d(benchmark::State &state, const Mem &dst, const Mem &src, std::uint64_t) {
        return ok(state, cucore_buffer_copy(dst.buffer, src.buffer, stream_), "cucore_buffer_copy");
    }
    bool fill(benchmark::State &state, const Mem &dst, std::uint64_t, std::uint32_t value) {
        return ok(state, cucore_buffer_fill(dst.buffer, value, 4, stream_), "cucore_buffer_fill");
    }
    bool sync(benchmark::State &state) {
        return ok(state, cucore_stream_synchronize(stream_), "cucore_stream_synchronize");
    }

    bool read_word(benchmark::State &state, const Mem &m, std::uint64_t offset, std::uint32_t *word) {
        return ok(state, cucore_buffer_copy_to_host(m.buffer, offset, word, 4, stream_), "cucore_buffer_copy_to_host") &&
               sync(state);
    }

private:
    cucore_memory_resource_t *device_memory_ = nullptr;
    cucore_memory_resource_t *pinned_memory_ = nullptr;
    cucore_stream_t *stream_ = nullptr;
};

class Cpp {
public:
    struct Mem {
        cucore::Buffer buffer;
        void *host = nullptr;  // page-locked host memory: its pointer
    };

    bool start(benchmark::State &) {  // throws cucore::Error
        const cucore::Device &device = *env().cpp_device;
        device_memory_ = cucore::MemoryResource::device_default(device);
        pinned_memory_ = cucore::MemoryResource::legacy_pinned(device);
        stream_ = device.create_stream();
        return true;
    }
    void sync_quietly() {
        try {
            if (stream_) stream_.synchronize();
        } catch (const std::exception &) {  // tear-down: nothing left to report to
        }
    }
    void stop() {
        sync_quietly();
        stream_.reset();
        pinned_memory_.reset();
        device_memory_.reset();
    }

    bool allocate(bool host, std::uint64_t bytes, Mem *m, std::string *why) {
        try {
            if (host) {
                m->buffer = pinned_memory_.allocate(bytes);
                m->host = m->buffer.data();
            } else {
                m->buffer = device_memory_.allocate(bytes, stream_);
                stream_.synchronize();
            }
            return true;
        } catch (const cucore::Error &e) {
            *why = std::string("cucore::Error ") + e.status_name() + ": " + e.what();
            free(*m);
            return false;
        }
    }
    void free(Mem &m) {
        m.buffer.reset();
        m.host = nullptr;
    }

    bool h2d(benchmark::State &, const Mem &dst, const Mem &src, std::uint64_t bytes) {
        dst.buffer.copy_from_host(0, src.host, bytes, stream_);
        return true;
    }
    bool d2h(benchmark::State &, const Mem &dst, const Mem &src, std::uint64_t bytes) {
        src.buffer.copy_to_host(0, dst.host, bytes, stream_);
        return true;
    }
    bool d2d(benchmark::State &, const Mem &dst, const Mem &src, std::uint64_t) {
        dst.buffer.copy_from(src.buffer, stream_);
        return true;
    }
    bool fill(benchmark::State &, const Mem &dst, std::uint64_t, std::uint32_t value) {
        dst.buffer.fill(value, stream_);
        return true;
    }
    bool sync(benchmark::State &) {
        stream_.synchronize();
        return true;
    }

    bool read_word(benchmark::State &, const Mem &m, std::uint64_t offset, std::uint32_t *word) {
        m.buffer.copy_to_host(offset, word, 4, stream_);
        stream_.synchronize();
        return true;
    }

private:
    cucore::MemoryResource device_memory_;
    cucore::MemoryResource pinned_memory_;
    cucore::Stream stream_;
};

// ---- The memory each variant keeps for the run ---------------------------------------------------

enum Role { kHost, kDeviceA, kDeviceB };

template <typename V>
struct Store {
    struct Slot {
        bool tried = false;
        std::string failure;  // why the allocation failed; empty when it worked
        typename V::Mem mem;
    };
    V variant;
    bool started = false;
    bool hooked = false;  // release() registered with at_tear_down
    std::map<std::pair<int, std::uint64_t>, Slot> slots;

    // At tear-down: every allocation freed, then the stream and the resources.
    static void release();
};

template <typename V>
Store<V> &store() {
    static Store<V> instance;
    return instance;
}

template <typename V>
void Store<V>::release() {
    Store &s = store<V>();
    if (!s.started) return;
    s.variant.sync_quietly();
    for (auto &kv : s.slots)
        if (kv.second.failure.empty()) s.variant.free(kv.second.mem);
    s.slots.clear();
    s.variant.stop();
    s.started = false;
}

// The variant, started on first use (false after reporting why it could not start).
template <typename V>
V *begin(benchmark::State &state) {
    Store<V> &s = store<V>();
    if (!s.started) {
        if (!s.variant.start(state)) return nullptr;
        s.started = true;
        if (!s.hooked) at_tear_down(&Store<V>::release);
        s.hooked = true;
    }
    return &s.variant;
}

// The variant's memory for `role` and `bytes`, allocated on first use. nullptr when it cannot be
// had: the run is skipped when the allocation is kMayFail bytes or more, else failed.
template <typename V>
typename V::Mem *memory(benchmark::State &state, Role role, std::uint64_t bytes) {
    Store<V> &s = store<V>();
    typename Store<V>::Slot &slot = s.slots[{role, bytes}];
    if (!slot.tried) {
        slot.tried = true;
        if (!s.variant.allocate(role == kHost, bytes, &slot.mem, &slot.failure) && slot.failure.empty())
            slot.failure = "unknown error";
    }
    if (slot.failure.empty()) return &slot.mem;
    const std::string why = std::string(role == kHost ? "page-locked host" : "device") + " allocation of " +
                            size_text(static_cast<double>(bytes)) + " failed (" + slot.failure + ")";
    if (bytes >= kMayFail)
        skip_run(state, why);
    else
        fail_check(state, why);
    return nullptr;
}

// ---- Shared pieces of the rows -------------------------------------------------------------------

// Runs the benchmark's body; a C++ exception (the façade's errors) fails the run.
template <typename Body>
void guarded(benchmark::State &state, Body body) {
    try {
        body();
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
}

// The timed loop of copies and fills: `op()` once per iteration, and `sync()` (timed) every
// `every` iterations and after the last, so the time covers the data landing.
template <typename Op, typename Sync>
void streamed_loop(benchmark::State &state, long long every, Op op, Sync sync) {
    const benchmark::IterationCount last = state.max_iterations;
    benchmark::IterationCount done = 0;
    for (auto _ : state) {
        if (!op()) return;
        if ((++done % every == 0 || done == last) && !sync()) return;
    }
}

void set_host_ends(void *host, std::uint64_t bytes, std::uint32_t value) {
    std::memcpy(host, &value, 4);
    std::memcpy(static_cast<char *>(host) + bytes - 4, &value, 4);
}

void check_word(benchmark::State &state, const char *where, std::uint32_t got, std::uint32_t want) {
    if (got == want) return;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s holds 0x%08x after the loop, expected 0x%08x", where, got, want);
    fail_check(state, buf);
}

void check_host_ends(benchmark::State &state, const void *host, std::uint64_t bytes, std::uint32_t want) {
    std::uint32_t first = 0, last = 0;
    std::memcpy(&first, host, 4);
    std::memcpy(&last, static_cast<const char *>(host) + bytes - 4, 4);
    check_word(state, "the destination's first word", first, want);
    if (!state.error_occurred()) check_word(state, "the destination's last word", last, want);
}

template <typename V>
void check_device_ends(benchmark::State &state, V &v, const typename V::Mem &m, std::uint64_t bytes,
                       std::uint32_t want) {
    std::uint32_t first = 0, last = 0;
    if (!v.read_word(state, m, 0, &first) || !v.read_word(state, m, bytes - 4, &last)) return;
    check_word(state, "the destination's first word", first, want);
    if (!state.error_occurred()) check_word(state, "the destination's last word", last, want);
}

// ---- The rows -------------------------------------------------------------------------------------
// One struct per kind of row: run<V, kBytes> is the benchmark of variant V; kCounted is how many
// bytes per byte of size the row's GB/s counts (0: a latency, no GB/s).

// Host to device: page-locked host memory into device memory.
struct HostToDevice {
    static constexpr double kCounted = 1;
    template <typename V, std::uint64_t kBytes>
    static void run(benchmark::State &state) {
        guarded(state, [&] {
            V *v = begin<V>(state);
            if (v == nullptr) return;
            typename V::Mem *src = memory<V>(state, kHost, kBytes);
            if (src == nullptr) return;
            typename V::Mem *dst = memory<V>(state, kDeviceA, kBytes);
            if (dst == nullptr) return;
            const std::uint32_t pattern = next_pattern();
            set_host_ends(src->host, kBytes, pattern);
            if (!v->fill(state, *dst, kBytes, 0) || !v->sync(state)) return;
            streamed_loop(
                state, sync_every(kBytes), [&] { return v->h2d(state, *dst, *src, kBytes); },
                [&] { return v->sync(state); });
            if (!state.error_occurred()) check_device_ends(state, *v, *dst, kBytes, pattern);
        });
    }
};

// Device to host: device memory into page-locked host memory.
struct DeviceToHost {
    static constexpr double kCounted = 1;
    template <typename V, std::uint64_t kBytes>
    static void run(benchmark::State &state) {
        guarded(state, [&] {
            V *v = begin<V>(state);
            if (v == nullptr) return;
            typename V::Mem *src = memory<V>(state, kDeviceA, kBytes);
            if (src == nullptr) return;
            typename V::Mem *dst = memory<V>(state, kHost, kBytes);
            if (dst == nullptr) return;
            const std::uint32_t pattern = next_pattern();
            if (!v->fill(state, *src, kBytes, pattern) || !v->sync(state)) return;
            set_host_ends(dst->host, kBytes, 0);
            streamed_loop(
                state, sync_every(kBytes), [&] { return v->d2h(state, *dst, *src, kBytes); },
                [&] { return v->sync(state); });
            if (!state.error_occurred()) check_host_ends(state, dst->host, kBytes, pattern);
        });
    }
};

// Device to device: one device allocation into another (read + write bytes counted).
struct DeviceToDevice {
    static constexpr double kCounted = 2;
    template <typename V, std::uint64_t kBytes>
    static void run(benchmark::State &state) {
        guarded(state, [&] {
            V *v = begin<V>(state);
            if (v == nullptr) return;
            typename V::Mem *src = memory<V>(state, kDeviceB, kBytes);
            if (src == nullptr) return;
            typename V::Mem *dst = memory<V>(state, kDeviceA, kBytes);
            if (dst == nullptr) return;
            const std::uint32_t pattern = next_pattern();
            if (!v->fill(state, *src, kBytes, pattern) || !v->fill(state, *dst, kBytes, 0) || !v->sync(state))
                return;
            streamed_loop(
                state, sync_every(kBytes), [&] { return v->d2d(state, *dst, *src, kBytes); },
                [&] { return v->sync(state); });
            if (!state.error_occurred()) check_device_ends(state, *v, *dst, kBytes, pattern);
        });
    }
};

// Fill device memory with a 4-byte pattern (cuMemsetD32Async; written bytes counted).
struct Fill32 {
    static constexpr double kCounted = 1;
    template <typename V, std::uint64_t kBytes>
    static void run(benchmark::State &state) {
        guarded(state, [&] {
            V *v = begin<V>(state);
            if (v == nullptr) return;
            typename V::Mem *dst = memory<V>(state, kDeviceA, kBytes);
            if (dst == nullptr) return;
            const std::uint32_t pattern = next_pattern();
            if (!v->fill(state, *dst, kBytes, 0) || !v->sync(state)) return;
            streamed_loop(
                state, sync_every(kBytes), [&] { return v->fill(state, *dst, kBytes, pattern); },
                [&] { return v->sync(state); });
            if (!state.error_occurred()) check_device_ends(state, *v, *dst, kBytes, pattern);
        });
    }
};

// Synchronous device-to-host copy: copy kBytes into page-locked host memory, then synchronize the
// stream, every iteration (a latency).
struct SyncDeviceToHost {
    static constexpr double kCounted = 0;
    template <typename V, std::uint64_t kBytes>
    static void run(benchmark::State &state) {
        guarded(state, [&] {
            V *v = begin<V>(state);
            if (v == nullptr) return;
            typename V::Mem *src = memory<V>(state, kDeviceA, kBytes);
            if (src == nullptr) return;
            typename V::Mem *dst = memory<V>(state, kHost, kBytes);
            if (dst == nullptr) return;
            const std::uint32_t pattern = next_pattern();
            if (!v->fill(state, *src, kBytes, pattern) || !v->sync(state)) return;
            set_host_ends(dst->host, kBytes, 0);
            for (auto _ : state)
                if (!v->d2h(state, *dst, *src, kBytes) || !v->sync(state)) return;
            check_host_ends(state, dst->host, kBytes, pattern);
        });
    }
};

// ---- Registration -------------------------------------------------------------------------------

// A row of kind `Row` at `kBytes`: its three variants, the bytes its GB/s counts, and the target.
template <typename Row, std::uint64_t kBytes>
Operation row(int order, const char *key, const char *title, long long iterations, double c_over_raw_target = 0,
              double min_bandwidth_ratio = 0, const char *target_note = "") {
    return Operation{
        order,
        key,
        title,
        c_over_raw_target,
        target_note,
        &Row::template run<Raw, kBytes>,
        &Row::template run<CAbi, kBytes>,
        &Row::template run<Cpp, kBytes>,
        Row::kCounted * static_cast<double>(kBytes),
        min_bandwidth_ratio,
        iterations,
    };
}

// The anchors give their copy targets on bandwidth (>= 0.98x raw); the table's C/raw is on time.
constexpr double kTimeBound = 1.0 / kBandwidthRatio;

// Iterations per repetition of the rows whose operation takes ~20 us or more (0: by min_time):
// ~20-60 ms per repetition on an H100 (~55 GB/s over PCIe, ~3 TB/s in device memory).
constexpr long long kIterPcie1M = 1024;  // 1 MiB over PCIe: ~19 us each
constexpr long long kIterPcie1G = 3;     // 1 GiB over PCIe: ~20 ms each
constexpr long long kIterD2D1G = 32;     // 1 GiB device to device: ~0.7 ms each
constexpr long long kIterFill1G = 64;    // 1 GiB fill: ~0.35 ms each

const bool registered = [] {
    register_operation(row<HostToDevice, 4 * kKiB>(70, "copy_h2d_4k", "H2D copy, pinned, 4 KiB", 0));
    register_operation(row<HostToDevice, kMiB>(71, "copy_h2d_1m", "H2D copy, pinned, 1 MiB", kIterPcie1M));
    register_operation(row<HostToDevice, kGiB>(
        72, "copy_h2d_1g", "H2D copy, pinned, 1 GiB", kIterPcie1G, kTimeBound, kBandwidthRatio,
        "performance_anchors.md: host-to-device copy, pinned, 1 GiB: >= 0.98x raw in GB/s, i.e. <= 1/0.98 = "
        "1.0204x raw in time"));
    register_operation(row<DeviceToHost, 4 * kKiB>(73, "copy_d2h_4k", "D2H copy, pinned, 4 KiB", 0));
    register_operation(row<DeviceToHost, kMiB>(74, "copy_d2h_1m", "D2H copy, pinned, 1 MiB", kIterPcie1M));
    register_operation(row<DeviceToHost, kGiB>(
        75, "copy_d2h_1g", "D2H copy, pinned, 1 GiB", kIterPcie1G, kTimeBound, kBandwidthRatio,
        "performance_anchors.md: device-to-host copy, pinned, 1 GiB: >= 0.98x raw in GB/s, i.e. <= 1/0.98 = "
        "1.0204x raw in time"));
    register_operation(row<DeviceToDevice, 4 * kKiB>(76, "copy_d2d_4k", "D2D copy, 4 KiB", 0));
    register_operation(row<DeviceToDevice, kMiB>(77, "copy_d2d_1m", "D2D copy, 1 MiB", 0));
    register_operation(row<DeviceToDevice, kGiB>(
        78, "copy_d2d_1g", "D2D copy, 1 GiB", kIterD2D1G, kTimeBound, kBandwidthRatio,
        "performance_anchors.md: device-to-device copy, 1 GiB (read+write bytes): >= 0.98x raw in GB/s, i.e. "
        "<= 1/0.98 = 1.0204x raw in time"));
    register_operation(row<SyncDeviceToHost, 4>(
        79, "copy_d2h_4b_sync", "D2H 4 B copy + sync", 0, 1.05, 0,
        "performance_anchors.md: 4-byte synchronous device-to-host copy (here: into page-locked memory, then "
        "stream synchronize)"));
    register_operation(row<Fill32, kMiB>(80, "fill_d32_1m", "fill (D32), 1 MiB", 0));
    register_operation(row<Fill32, kGiB>(81, "fill_d32_1g", "fill (D32), 1 GiB", kIterFill1G));
    return true;
}();

}  // namespace
}  // namespace cucore_bench
