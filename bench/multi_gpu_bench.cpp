// Several GPUs: peer copies of 1 GiB each way between devices 0 and 1, and an all-reduce of 1 GiB
// of floats over devices 0 and 1, beside the raw driver and NCCL called directly.
//
// peer_copy_0to1_1g / peer_copy_1to0_1g: device memory of one GPU into device memory of the other,
//   on a stream of the destination's device:
//     raw    cuMemcpyPeerAsync;  C ABI  cucore_buffer_copy;  C++  cucore::Buffer::copy_from.
//   Both sides work on pools of their own (raw: cuMemPoolCreate; cucore: a device memory resource),
//   each granting the other device access, with peer access enabled between the primary contexts:
//   the driver's fastest path, set up the same way for all three variants. The bytes counted are
//   the bytes moved over the link (1 GiB per copy).
// all_reduce_1g: a sum of 256 Mi floats (1 GiB) on every GPU, one process driving them all in one
//   group per operation, on a stream per GPU:
//     raw    ncclGroupStart, ncclAllReduce per rank, ncclGroupEnd, on communicators of
//            ncclCommInitAll, NCCL loaded here with dlopen (CUCORE_NCCL_PATH, else libnccl.so.2);
//     C ABI  cucore_communicator_group_start / _all_reduce / _group_end;
//     C++    cucore::Group and cucore::Communicator::all_reduce.
//   The bytes counted are NCCL's bus bandwidth convention: 2 (n - 1) / n of the buffer per operation.
// The rows skip (with the reason) on a machine with one GPU, or without NCCL. Checks, outside the
// timing: after each loop the destinations' first and last words hold the expected value.

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace cucore_bench {
namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr long long kCopyIterations = 16;      // ~3-8 ms each over NVLink or PCIe
constexpr long long kAllReduceIterations = 8;  // ~3-10 ms each
constexpr int kMaxRanks = 2;
constexpr double kBandwidthRatio = 0.98;  // performance_anchors.md / issue 19: >= 0.98x raw

int device_count() {
    int n = 0;
    return env().driver.cuDeviceGetCount_fn(&n) == CUDA_SUCCESS ? n : 0;
}

bool two_gpus(benchmark::State &state) {
    if (device_count() >= 2) return true;
    skip_run(state, "needs 2 GPUs; " + std::to_string(device_count()) + " present");
    return false;
}

// Float bits of n (the all-reduce's expected sum of ones).
std::uint32_t float_bits(float f) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &f, 4);
    return bits;
}

// ---- NCCL, called directly (the raw variant of the all-reduce) --------------------------------------

struct RawNccl {
    using Comm = struct ncclComm *;
    int (*CommInitAll)(Comm *, int, const int *) = nullptr;
    int (*CommDestroy)(Comm) = nullptr;
    int (*AllReduce)(const void *, void *, size_t, int, int, Comm, CUstream) = nullptr;
    int (*GroupStart)() = nullptr;
    int (*GroupEnd)() = nullptr;
    const char *(*GetErrorString)(int) = nullptr;
    std::string failure;

    static const RawNccl &get() {
        static const RawNccl nccl = [] {
            RawNccl n;
            const char *path = std::getenv("CUCORE_NCCL_PATH");
            void *lib = dlopen(path && *path ? path : "libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
            if (!lib) {
                const char *err = dlerror();
                n.failure = std::string("no NCCL (") + (err ? err : "dlopen failed") + ")";
                return n;
            }
            n.CommInitAll = reinterpret_cast<decltype(n.CommInitAll)>(dlsym(lib, "ncclCommInitAll"));
            n.CommDestroy = reinterpret_cast<decltype(n.CommDestroy)>(dlsym(lib, "ncclCommDestroy"));
            n.AllReduce = reinterpret_cast<decltype(n.AllReduce)>(dlsym(lib, "ncclAllReduce"));
            n.GroupStart = reinterpret_cast<decltype(n.GroupStart)>(dlsym(lib, "ncclGroupStart"));
            n.GroupEnd = reinterpret_cast<decltype(n.GroupEnd)>(dlsym(lib, "ncclGroupEnd"));
            n.GetErrorString = reinterpret_cast<decltype(n.GetErrorString)>(dlsym(lib, "ncclGetErrorString"));
            if (!n.CommInitAll || !n.CommDestroy || !n.AllReduce || !n.GroupStart || !n.GroupEnd || !n.GetErrorString)
                n.failure = "NCCL lacks an entry point";
            return n;
        }();
        return nccl;
    }
    bool ok(benchmark::State &state, int r, const char *what) const {
        if (r == 0) return true;
        fail_check(state, std::string(what) + " failed: " + GetErrorString(r));
        return false;
    }
};
constexpr int kNcclFloat32 = 7, kNcclSum = 0;

// ---- Raw driver: per-device state ---------------------------------------------------------------------

struct RawGpu {
    CUdevice device = 0;
    CUcontext context = nullptr;
    CUmemoryPool pool = nullptr;
    CUstream stream = nullptr;
};

// Each raw device's primary context, a pool of its own granting every other device access, and a stream.
class RawGpus {
  public:
    static RawGpus &get() {
        static RawGpus gpus;
        return gpus;
    }
    // Makes the first `n` devices (false with the failure reported).
    bool start(benchmark::State &state, int n) {
        const RawDriver &d = env().driver;
        while (static_cast<int>(gpus_.size()) < n) {
            RawGpu g;
            const int ordinal = static_cast<int>(gpus_.size());
            if (!ok(state, d.cuDeviceGet_fn(&g.device, ordinal), "cuDeviceGet") ||
                !ok(state, d.cuDevicePrimaryCtxRetain_fn(&g.context, g.device), "cuDevicePrimaryCtxRetain"))
                return false;
            if (!ok(state, d.cuCtxSetCurrent_fn(g.context), "cuCtxSetCurrent")) return false;
            CUmemPoolProps props{};
            props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
            props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
            props.location.id = g.device;
            const bool made = ok(state, d.cuMemPoolCreate_fn(&g.pool, &props), "cuMemPoolCreate") &&
                              ok(state, d.cuStreamCreateWithPriority_fn(&g.stream, CU_STREAM_NON_BLOCKING, 0),
                                 "cuStreamCreateWithPriority");
            gpus_.push_back(g);
            d.cuCtxSetCurrent_fn(env().cu_context);
            if (!made) return false;
            if (gpus_.size() == 1) at_tear_down(&RawGpus::release);
        }
        // Every pair: peer access between the contexts and to each other's pool.
        for (int a = 0; a < n; ++a)
            for (int b = 0; b < n; ++b) {
                if (a == b || granted_[a][b]) continue;
                d.cuCtxSetCurrent_fn(gpus_[a].context);
                const CUresult r = d.cuCtxEnablePeerAccess_fn(gpus_[b].context, 0);
                d.cuCtxSetCurrent_fn(env().cu_context);
                if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED &&
                    !ok(state, r, "cuCtxEnablePeerAccess"))
                    return false;
                CUmemAccessDesc access{};
                access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
                access.location.id = gpus_[a].device;
                access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
                if (!ok(state, d.cuMemPoolSetAccess_fn(gpus_[b].pool, &access, 1), "cuMemPoolSetAccess")) return false;
                granted_[a][b] = true;
            }
        return true;
    }
    RawGpu &operator[](int i) { return gpus_[static_cast<size_t>(i)]; }

  private:
    static void release() {
        const RawDriver &d = env().driver;
        for (RawGpu &g : get().gpus_) {
            if (g.stream) {
                d.cuStreamSynchronize_fn(g.stream);
                d.cuStreamDestroy_fn(g.stream);
            }
            if (g.pool) d.cuMemPoolDestroy_fn(g.pool);
            if (g.context) d.cuDevicePrimaryCtxRelease_fn(g.device);
        }
        get().gpus_.clear();
    }
    std::vector<RawGpu> gpus_;
    bool granted_[kMaxRanks][kMaxRanks] = {};
};

struct RawMemory {
    CUdeviceptr address = 0;
    bool allocate(benchmark::State &state, RawGpu &g, std::uint64_t bytes) {
        const RawDriver &d = env().driver;
        CUresult r = d.cuMemAllocFromPoolAsync_fn(&address, bytes, g.pool, g.stream);
        if (r == CUDA_SUCCESS) r = d.cuStreamSynchronize_fn(g.stream);
        if (r == CUDA_SUCCESS) return true;
        skip_run(state, "a 1 GiB allocation failed: " + d.error_name(r));
        return false;
    }
};

// ---- C ABI: per-device state ---------------------------------------------------------------------------

struct CGpu {
    cucore_device_t *device = nullptr;
    cucore_memory_resource_t *pool = nullptr;  // a pool of its own, granting every other device access
    cucore_stream_t *stream = nullptr;
};

class CGpus {
  public:
    static CGpus &get() {
        static CGpus gpus;
        return gpus;
    }
    bool start(benchmark::State &state, int n) {
        while (static_cast<int>(gpus_.size()) < n) {
            CGpu g;
            const int ordinal = static_cast<int>(gpus_.size());
            const bool made = ok(state, cucore_device_get(ordinal, &g.device), "cucore_device_get") &&
                              ok(state, cucore_device_memory_resource_create(g.device, nullptr, &g.pool),
                                 "cucore_device_memory_resource_create") &&
                              ok(state, cucore_stream_create(g.device, nullptr, &g.stream), "cucore_stream_create");
            gpus_.push_back(g);
            if (gpus_.size() == 1) at_tear_down(&CGpus::release);
            if (!made) return false;
        }
        for (int a = 0; a < n; ++a)
            for (int b = 0; b < n; ++b) {
                if (a == b || granted_[a][b]) continue;
                if (!ok(state, cucore_device_enable_peer_access(gpus_[a].device, gpus_[b].device),
                        "cucore_device_enable_peer_access") ||
                    !ok(state, cucore_memory_resource_set_peer_access(gpus_[b].pool, gpus_[a].device,
                                                                      CUCORE_ACCESS_READ_WRITE),
                        "cucore_memory_resource_set_peer_access"))
                    return false;
                granted_[a][b] = true;
            }
        return true;
    }
    CGpu &operator[](int i) { return gpus_[static_cast<size_t>(i)]; }

  private:
    static void release() {
        for (CGpu &g : get().gpus_) {
            if (g.stream) cucore_stream_synchronize(g.stream);
            cucore_stream_release(g.stream);
            cucore_memory_resource_release(g.pool);
            cucore_device_release(g.device);
        }
        get().gpus_.clear();
    }
    std::vector<CGpu> gpus_;
    bool granted_[kMaxRanks][kMaxRanks] = {};
};

cucore_buffer_t *c_allocate(benchmark::State &state, CGpu &g, std::uint64_t bytes) {
    cucore_buffer_t *b = nullptr;
    cucore_status_t s = cucore_memory_resource_allocate(g.pool, bytes, g.stream, &b);
    if (s == CUCORE_SUCCESS) s = cucore_stream_synchronize(g.stream);
    if (s == CUCORE_SUCCESS) return b;
    cucore_buffer_release(b);
    skip_run(state, std::string("a 1 GiB allocation failed: ") + cucore_last_error_message());
    return nullptr;
}

// The timed loop: `op()` once per iteration, and `sync()` (timed) after the last, so the time covers the data.
template <typename Op, typename Sync>
void timed_loop(benchmark::State &state, Op op, Sync sync) {
    const benchmark::IterationCount last = state.max_iterations;
    benchmark::IterationCount done = 0;
    for (auto _ : state) {
        if (!op()) return;
        if (++done == last && !sync()) return;
    }
}

void check_word(benchmark::State &state, const char *where, std::uint32_t got, std::uint32_t want) {
    if (got == want) return;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s holds 0x%08x after the loop, expected 0x%08x", where, got, want);
    fail_check(state, buf);
}

// ---- Peer copies ----------------------------------------------------------------------------------------

template <int kFrom, int kTo>
void peer_copy_raw(benchmark::State &state) {
    if (!two_gpus(state)) return;
    RawGpus &gpus = RawGpus::get();
    if (!gpus.start(state, 2)) return;
    const RawDriver &d = env().driver;
    RawMemory src, dst;
    if (!src.allocate(state, gpus[kFrom], kGiB)) return;
    if (dst.allocate(state, gpus[kTo], kGiB)) {
        RawGpu &to = gpus[kTo];
        const std::uint32_t pattern = 0xC0DE0000u | (kFrom << 4) | kTo;
        d.cuCtxSetCurrent_fn(gpus[kFrom].context);
        ok(state, d.cuMemsetD32Async_fn(src.address, pattern, kGiB / 4, gpus[kFrom].stream), "cuMemsetD32Async");
        d.cuStreamSynchronize_fn(gpus[kFrom].stream);
        d.cuCtxSetCurrent_fn(to.context);
        timed_loop(
            state,
            [&] {
                return ok(state, d.cuMemcpyPeerAsync_fn(dst.address, to.context, src.address, gpus[kFrom].context,
                                                        kGiB, to.stream),
                          "cuMemcpyPeerAsync");
            },
            [&] { return ok(state, d.cuStreamSynchronize_fn(to.stream), "cuStreamSynchronize"); });
        std::uint32_t first = 0, last = 0;
        d.cuMemcpyAsync_fn(reinterpret_cast<CUdeviceptr>(&first), dst.address, 4, to.stream);
        d.cuMemcpyAsync_fn(reinterpret_cast<CUdeviceptr>(&last), dst.address + kGiB - 4, 4, to.stream);
        d.cuStreamSynchronize_fn(to.stream);
        if (!state.error_occurred()) check_word(state, "the destination's first word", first, pattern);
        if (!state.error_occurred()) check_word(state, "the destination's last word", last, pattern);
        d.cuMemFreeAsync_fn(dst.address, to.stream);
        d.cuStreamSynchronize_fn(to.stream);
        d.cuCtxSetCurrent_fn(env().cu_context);
    }
    d.cuCtxSetCurrent_fn(gpus[kFrom].context);
    d.cuMemFreeAsync_fn(src.address, gpus[kFrom].stream);
    d.cuStreamSynchronize_fn(gpus[kFrom].stream);
    d.cuCtxSetCurrent_fn(env().cu_context);
}

template <int kFrom, int kTo>
void peer_copy_c(benchmark::State &state) {
    if (!two_gpus(state)) return;
    CGpus &gpus = CGpus::get();
    if (!gpus.start(state, 2)) return;
    cucore_buffer_t *src = c_allocate(state, gpus[kFrom], kGiB);
    cucore_buffer_t *dst = src ? c_allocate(state, gpus[kTo], kGiB) : nullptr;
    if (dst) {
        cucore_stream_t *stream = gpus[kTo].stream;
        const std::uint32_t pattern = 0xC0DE0000u | (kFrom << 4) | kTo;
        ok(state, cucore_buffer_fill(src, pattern, 4, gpus[kFrom].stream), "cucore_buffer_fill");
        cucore_stream_synchronize(gpus[kFrom].stream);
        timed_loop(
            state, [&] { return ok(state, cucore_buffer_copy(dst, src, stream), "cucore_buffer_copy"); },
            [&] { return ok(state, cucore_stream_synchronize(stream), "cucore_stream_synchronize"); });
        std::uint32_t first = 0, last = 0;
        cucore_buffer_copy_to_host(dst, 0, &first, 4, stream);
        cucore_buffer_copy_to_host(dst, kGiB - 4, &last, 4, stream);
        cucore_stream_synchronize(stream);
        if (!state.error_occurred()) check_word(state, "the destination's first word", first, pattern);
        if (!state.error_occurred()) check_word(state, "the destination's last word", last, pattern);
    }
    cucore_buffer_release(dst);
    cucore_buffer_release(src);
    cucore_stream_synchronize(gpus[kTo].stream);
    cucore_stream_synchronize(gpus[kFrom].stream);
}

template <int kFrom, int kTo>
void peer_copy_cpp(benchmark::State &state) {
    if (!two_gpus(state)) return;
    CGpus &gpus = CGpus::get();  // the same devices, pools and streams, borrowed by the façade
    if (!gpus.start(state, 2)) return;
    try {
        cucore::MemoryResource from_pool = cucore::MemoryResource::borrow(gpus[kFrom].pool);
        cucore::MemoryResource to_pool = cucore::MemoryResource::borrow(gpus[kTo].pool);
        cucore::Stream from_stream = cucore::Stream::borrow(gpus[kFrom].stream);
        cucore::Stream stream = cucore::Stream::borrow(gpus[kTo].stream);
        cucore::Buffer src = from_pool.allocate(kGiB, from_stream);
        cucore::Buffer dst = to_pool.allocate(kGiB, stream);
        const std::uint32_t pattern = 0xC0DE0000u | (kFrom << 4) | kTo;
        src.fill(pattern, from_stream);
        from_stream.synchronize();
        stream.synchronize();
        timed_loop(
            state,
            [&] {
                dst.copy_from(src, stream);
                return true;
            },
            [&] {
                stream.synchronize();
                return true;
            });
        std::uint32_t first = 0, last = 0;
        dst.copy_to_host(0, &first, 4, stream);
        dst.copy_to_host(kGiB - 4, &last, 4, stream);
        stream.synchronize();
        if (!state.error_occurred()) check_word(state, "the destination's first word", first, pattern);
        if (!state.error_occurred()) check_word(state, "the destination's last word", last, pattern);
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
}

// ---- All-reduce of 1 GiB over every GPU -----------------------------------------------------------------

// Two ranks, devices 0 and 1 (the bus bandwidth's 2 (n - 1) / n is then 1).
constexpr int kRanks = 2;
int ranks() { return kRanks; }

void no_op(void *) {}

// `with_host_function`: each rank's stream also gets a no-op host function after its all-reduce, as the
// library queued one to release what the operation holds until it moved to events (the reference row that
// priced it: docs/performance.md, issue 19).
void all_reduce_raw_impl(benchmark::State &state, bool with_host_function) {
    if (!two_gpus(state)) return;
    const RawNccl &nccl = RawNccl::get();
    if (!nccl.failure.empty()) return skip_run(state, nccl.failure);
    const int n = ranks();
    RawGpus &gpus = RawGpus::get();
    if (!gpus.start(state, n)) return;
    const RawDriver &d = env().driver;
    static std::vector<RawNccl::Comm> comms;  // made once: ncclCommInitAll takes seconds
    if (comms.empty()) {
        std::vector<int> ordinals;
        for (int i = 0; i < n; ++i) ordinals.push_back(i);
        comms.assign(static_cast<size_t>(n), nullptr);
        if (!nccl.ok(state, nccl.CommInitAll(comms.data(), n, ordinals.data()), "ncclCommInitAll")) {
            comms.clear();
            return;
        }
        d.cuCtxSetCurrent_fn(env().cu_context);
        at_tear_down([] {
            for (RawNccl::Comm c : comms) RawNccl::get().CommDestroy(c);
            comms.clear();
        });
    }
    std::vector<RawMemory> send(static_cast<size_t>(n)), recv(static_cast<size_t>(n));
    bool allocated = true;
    for (int i = 0; i < n && allocated; ++i) {
        d.cuCtxSetCurrent_fn(gpus[i].context);
        allocated = send[i].allocate(state, gpus[i], kGiB) && recv[i].allocate(state, gpus[i], kGiB) &&
                    ok(state, d.cuMemsetD32Async_fn(send[i].address, float_bits(1.0f), kGiB / 4, gpus[i].stream),
                       "cuMemsetD32Async") &&
                    ok(state, d.cuStreamSynchronize_fn(gpus[i].stream), "cuStreamSynchronize");
    }
    d.cuCtxSetCurrent_fn(env().cu_context);
    if (allocated) {
        timed_loop(
            state,
            [&] {
                if (!nccl.ok(state, nccl.GroupStart(), "ncclGroupStart")) return false;
                for (int i = 0; i < n; ++i)
                    if (!nccl.ok(state,
                                 nccl.AllReduce(reinterpret_cast<const void *>(send[i].address),
                                                reinterpret_cast<void *>(recv[i].address), kGiB / 4, kNcclFloat32,
                                                kNcclSum, comms[i], gpus[i].stream),
                                 "ncclAllReduce"))
                        return false;
                if (!nccl.ok(state, nccl.GroupEnd(), "ncclGroupEnd")) return false;
                if (with_host_function)
                    for (int i = 0; i < n; ++i) {
                        d.cuCtxSetCurrent_fn(gpus[i].context);
                        if (!ok(state, d.cuLaunchHostFunc_fn(gpus[i].stream, &no_op, nullptr), "cuLaunchHostFunc"))
                            return false;
                    }
                return true;
            },
            [&] {
                for (int i = 0; i < n; ++i)
                    if (!ok(state, d.cuStreamSynchronize_fn(gpus[i].stream), "cuStreamSynchronize")) return false;
                return true;
            });
        std::uint32_t first = 0;
        d.cuCtxSetCurrent_fn(gpus[n - 1].context);
        d.cuMemcpyAsync_fn(reinterpret_cast<CUdeviceptr>(&first), recv[n - 1].address + kGiB - 4, 4, gpus[n - 1].stream);
        d.cuStreamSynchronize_fn(gpus[n - 1].stream);
        if (!state.error_occurred()) check_word(state, "the last rank's last word", first, float_bits(static_cast<float>(n)));
    }
    for (int i = 0; i < n; ++i) {
        d.cuCtxSetCurrent_fn(gpus[i].context);
        if (send[i].address) d.cuMemFreeAsync_fn(send[i].address, gpus[i].stream);
        if (recv[i].address) d.cuMemFreeAsync_fn(recv[i].address, gpus[i].stream);
        d.cuStreamSynchronize_fn(gpus[i].stream);
    }
    d.cuCtxSetCurrent_fn(env().cu_context);
}

void all_reduce_raw(benchmark::State &state) { all_reduce_raw_impl(state, false); }
void all_reduce_raw_host_function(benchmark::State &state) { all_reduce_raw_impl(state, true); }

// The communicators of the C ABI and C++ rows, made once (creating them takes seconds).
std::vector<cucore_communicator_t *> &c_communicators(benchmark::State &state, int n) {
    static std::vector<cucore_communicator_t *> comms;
    if (comms.empty()) {
        CGpus &gpus = CGpus::get();
        std::vector<cucore_device_t *> devices;
        for (int i = 0; i < n; ++i) devices.push_back(gpus[i].device);
        comms.assign(static_cast<size_t>(n), nullptr);
        if (!ok(state, cucore_communicator_create_all(devices.data(), devices.size(), comms.data()),
                "cucore_communicator_create_all")) {
            comms.clear();
            return comms;
        }
        at_tear_down([] {
            for (cucore_communicator_t *c : comms) cucore_communicator_release(c);
            comms.clear();
        });
    }
    return comms;
}

bool nccl_present(benchmark::State &state) {
    int version = 0;
    if (cucore_communicator_library_version(&version) == CUCORE_SUCCESS) return true;
    skip_run(state, cucore_last_error_message());
    return false;
}

void all_reduce_c(benchmark::State &state) {
    if (!two_gpus(state) || !nccl_present(state)) return;
    const int n = ranks();
    CGpus &gpus = CGpus::get();
    if (!gpus.start(state, n)) return;
    std::vector<cucore_communicator_t *> &comms = c_communicators(state, n);
    if (comms.empty()) return;
    std::vector<cucore_buffer_t *> send(static_cast<size_t>(n)), recv(static_cast<size_t>(n));
    bool allocated = true;
    for (int i = 0; i < n && allocated; ++i)
        allocated = (send[i] = c_allocate(state, gpus[i], kGiB)) && (recv[i] = c_allocate(state, gpus[i], kGiB)) &&
                    ok(state, cucore_buffer_fill(send[i], float_bits(1.0f), 4, gpus[i].stream), "cucore_buffer_fill") &&
                    ok(state, cucore_stream_synchronize(gpus[i].stream), "cucore_stream_synchronize");
    if (allocated) {
        timed_loop(
            state,
            [&] {
                if (!ok(state, cucore_communicator_group_start(), "cucore_communicator_group_start")) return false;
                for (int i = 0; i < n; ++i)
                    if (!ok(state,
                            cucore_communicator_all_reduce(comms[i], send[i], recv[i], 0, CUCORE_DATA_TYPE_FLOAT32,
                                                           CUCORE_REDUCE_SUM, gpus[i].stream),
                            "cucore_communicator_all_reduce"))
                        return false;
                return ok(state, cucore_communicator_group_end(), "cucore_communicator_group_end");
            },
            [&] {
                for (int i = 0; i < n; ++i)
                    if (!ok(state, cucore_stream_synchronize(gpus[i].stream), "cucore_stream_synchronize")) return false;
                return true;
            });
        std::uint32_t last = 0;
        cucore_buffer_copy_to_host(recv[n - 1], kGiB - 4, &last, 4, gpus[n - 1].stream);
        cucore_stream_synchronize(gpus[n - 1].stream);
        if (!state.error_occurred()) check_word(state, "the last rank's last word", last, float_bits(static_cast<float>(n)));
    }
    for (int i = 0; i < n; ++i) {
        cucore_buffer_release(send[i]);
        cucore_buffer_release(recv[i]);
        cucore_stream_synchronize(gpus[i].stream);
    }
}

void all_reduce_cpp(benchmark::State &state) {
    if (!two_gpus(state) || !nccl_present(state)) return;
    const int n = ranks();
    CGpus &gpus = CGpus::get();  // the C ABI row's devices, pools, streams and communicators, borrowed
    if (!gpus.start(state, n)) return;
    std::vector<cucore_communicator_t *> &raw_comms = c_communicators(state, n);
    if (raw_comms.empty()) return;
    try {
        std::vector<cucore::Communicator> comms;
        std::vector<cucore::Stream> streams;
        std::vector<cucore::Buffer> send, recv;
        for (int i = 0; i < n; ++i) {
            comms.push_back(cucore::Communicator::borrow(raw_comms[i]));
            streams.push_back(cucore::Stream::borrow(gpus[i].stream));
            cucore::MemoryResource pool = cucore::MemoryResource::borrow(gpus[i].pool);
            send.push_back(pool.allocate(kGiB, streams[i]));
            recv.push_back(pool.allocate(kGiB, streams[i]));
            send[i].fill(float_bits(1.0f), streams[i]);
            streams[i].synchronize();
        }
        timed_loop(
            state,
            [&] {
                cucore::Group group;
                for (int i = 0; i < n; ++i) comms[i].all_reduce<float>(send[i], recv[i], streams[i]);
                group.end();
                return true;
            },
            [&] {
                for (cucore::Stream &s : streams) s.synchronize();
                return true;
            });
        std::uint32_t last = 0;
        recv[n - 1].copy_to_host(kGiB - 4, &last, 4, streams[n - 1]);
        streams[n - 1].synchronize();
        if (!state.error_occurred()) check_word(state, "the last rank's last word", last, float_bits(static_cast<float>(n)));
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
}

constexpr double kBusBytes = 2.0 * (kRanks - 1) / kRanks * static_cast<double>(kGiB);

const char *const kCopyNote =
    "issue 19: peer copy bandwidth of 1 GiB each way >= 0.98x the raw driver in GB/s, i.e. <= 1/0.98 = 1.0204x "
    "raw in time";

const bool registered = [] {
    register_operation({90, "peer_copy_0to1_1g", "peer copy 0 -> 1, 1 GiB", 1.0 / kBandwidthRatio, kCopyNote,
                        &peer_copy_raw<0, 1>, &peer_copy_c<0, 1>, &peer_copy_cpp<0, 1>, static_cast<double>(kGiB),
                        kBandwidthRatio, kCopyIterations});
    register_operation({91, "peer_copy_1to0_1g", "peer copy 1 -> 0, 1 GiB", 1.0 / kBandwidthRatio, kCopyNote,
                        &peer_copy_raw<1, 0>, &peer_copy_c<1, 0>, &peer_copy_cpp<1, 0>, static_cast<double>(kGiB),
                        kBandwidthRatio, kCopyIterations});
    register_operation({92, "all_reduce_1g", "all-reduce, 1 GiB float32, 2 GPUs (bus bandwidth)",
                        1.0 / kBandwidthRatio,
                        "issue 19: all-reduce of 1 GiB, bus bandwidth >= 0.98x NCCL called directly, i.e. <= "
                        "1.0204x in time",
                        &all_reduce_raw, &all_reduce_c, &all_reduce_cpp, kBusBytes, kBandwidthRatio,
                        kAllReduceIterations});
    register_operation({93, "all_reduce_1g_host_function",
                        "all-reduce, 1 GiB, 2 GPUs; raw + a host function per op (reference)", 0,
                        "the raw column also queues a no-op host function per rank and operation (how the library "
                        "released an operation's holds before it recorded events instead): prices that design",
                        &all_reduce_raw_host_function, &all_reduce_c, &all_reduce_cpp, kBusBytes, 0,
                        kAllReduceIterations});
    return true;
}();

}  // namespace
}  // namespace cucore_bench
