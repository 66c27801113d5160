// Kernel launches: an empty kernel with 0, 2 and 16 arguments and with one 64-byte struct passed
// by value (host submit time), and launch + stream synchronize (a round trip).
//
// The kernels are compiled once per run to a cubin by libcucore (NVRTC, for the device's arch);
// every column then uses that same cubin: the raw column loads it itself (cuLibraryLoadData,
// cuLibraryGetKernel, cuKernelGetFunction in the primary context) and launches with cuLaunchKernel,
// as a C program using the driver API does; the C ABI column loads it as an object code
// (cucore_object_code_create, cucore_object_code_get_kernel) and calls cucore_launch; the C++
// column does the same through the façade and calls cucore::launch with typed arguments.
// (libcucore launches with cuLaunchKernelEx, which carries the launch attributes; the anchors'
// raw column, and this one, is the plain cuLaunchKernel a C program calls.)
//
// How host submit time is measured, identically in every column: launches are queued back to
// back on one non-blocking stream with a 1x1 grid, and every kSyncEvery launches the stream is
// synchronized with the timer paused (queued_loop). The queue thus never fills, so no launch
// waits for the GPU, and the time per iteration is the host's cost of submitting one launch. The
// round trip instead synchronizes after every launch, inside the timing.
//
// Setup (compiling, loading, creating the stream and the argument arrays) happens outside the
// timed loops, once per run; what is loaded is kept until the end of the run (at_tear_down).
// Without NVRTC the rows are skipped with the reason.

#include <array>
#include <cstdint>
#include <cstring>
#include <string>

#include "bench_common.hpp"

namespace cucore_bench {
namespace {

constexpr int kSyncEvery = 256;

// 64 bytes passed by value.
struct Struct64 {
    double d[4];
    std::int64_t q[2];
    std::int32_t i[3];
    float f;
};
static_assert(sizeof(Struct64) == 64, "Struct64 is 64 bytes");

const char *const kSource = R"(
struct Struct64 { double d[4]; long long q[2]; int i[3]; float f; };
extern "C" __global__ void empty0() {}
extern "C" __global__ void empty2(int *p, int n) {}
extern "C" __global__ void empty16(int *p0, int *p1, int *p2, int *p3, int *p4, int *p5, int *p6, int *p7,
                                   int i0, int i1, int i2, int i3, int i4, int i5, int i6, int i7) {}
extern "C" __global__ void empty_struct(Struct64 s) {}
)";

enum KernelId { kEmpty0, kEmpty2, kEmpty16, kEmptyStruct, kKernelCount };
const char *const kKernelNames[kKernelCount] = {"empty0", "empty2", "empty16", "empty_struct"};

// The arguments, the same bytes for every column: 8 pointers and 8 ints for the 16-argument
// kernel (the pointers are never dereferenced by the empty kernels), 2 of them for empty2.
struct Arguments {
    int *pointers[8];
    int ints[8];
    Struct64 s;
    void *ptrs16[16];
    std::size_t sizes16[16];
    Arguments() {
        for (int i = 0; i < 8; ++i) {
            pointers[i] = reinterpret_cast<int *>(static_cast<std::uintptr_t>(0x1000 * (i + 1)));
            ints[i] = i * 3 + 1;
        }
        std::memset(&s, 0, sizeof s);
        s.d[0] = 1.5;
        s.q[1] = -7;
        s.f = 2.0f;
        for (int i = 0; i < 8; ++i) {
            ptrs16[i] = &pointers[i];
            sizes16[i] = sizeof(int *);
            ptrs16[8 + i] = &ints[i];
            sizes16[8 + i] = sizeof(int);
        }
    }
};

Arguments &arguments() {
    static Arguments a;
    return a;
}

// The cubin, compiled once (empty with the reason in `why` when it could not be).
struct Compiled {
    std::string cubin;
    std::string why;
};

const Compiled &compiled() {
    static const Compiled c = [] {
        Compiled out;
        int major = 0, minor = 0;
        if (cucore_device_compute_capability(env().device, &major, &minor) != CUCORE_SUCCESS) {
            out.why = std::string("compute capability: ") + cucore_last_error_message();
            return out;
        }
        const std::string arch = "sm_" + std::to_string(major * 10 + minor);
        cucore_program_options_t o = CUCORE_PROGRAM_OPTIONS_INIT;
        o.arch = arch.c_str();
        cucore_program_t *p = nullptr;
        cucore_object_code_t *code = nullptr;
        const void *data = nullptr;
        std::size_t size = 0;
        if (cucore_program_create(kSource, 0, CUCORE_CODE_CXX, &o, &p) != CUCORE_SUCCESS ||
            cucore_program_compile(p, CUCORE_CODE_CUBIN, nullptr, 0, nullptr, &code) != CUCORE_SUCCESS ||
            cucore_object_code_data(code, &data, &size) != CUCORE_SUCCESS)
            out.why = std::string("cannot compile the benchmark kernels: ") + cucore_last_error_message();
        else
            out.cubin.assign(static_cast<const char *>(data), size);
        cucore_object_code_release(code);
        cucore_program_release(p);
        return out;
    }();
    return c;
}

// ---- What each column loads, once per run ---------------------------------------------------

struct RawLoaded {
    CUlibrary library = nullptr;
    CUfunction functions[kKernelCount] = {};
    CUstream stream = nullptr;
    std::string why;  // set when loading failed
};

RawLoaded &raw_loaded() {
    static RawLoaded r;
    static const bool done = [] {
        const RawDriver &d = env().driver;
        const Compiled &c = compiled();
        if (c.cubin.empty()) {
            r.why = c.why;
            return true;
        }
        CUresult res = d.cuLibraryLoadData_fn(&r.library, c.cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
        for (int k = 0; res == CUDA_SUCCESS && k < kKernelCount; ++k) {
            CUkernel kernel = nullptr;
            res = d.cuLibraryGetKernel_fn(&kernel, r.library, kKernelNames[k]);
            if (res == CUDA_SUCCESS) res = d.cuKernelGetFunction_fn(&r.functions[k], kernel);
        }
        if (res == CUDA_SUCCESS) res = d.cuStreamCreateWithPriority_fn(&r.stream, CU_STREAM_NON_BLOCKING, 0);
        if (res != CUDA_SUCCESS) r.why = "raw load of the benchmark kernels: " + d.error_name(res);
        at_tear_down([] {
            RawLoaded &x = raw_loaded();
            if (x.stream != nullptr) env().driver.cuStreamDestroy_fn(x.stream);
            if (x.library != nullptr) env().driver.cuLibraryUnload_fn(x.library);
            x = RawLoaded{};
        });
        return true;
    }();
    (void)done;
    return r;
}

struct CLoaded {
    cucore_object_code_t *code = nullptr;
    cucore_kernel_t *kernels[kKernelCount] = {};
    cucore_stream_t *stream = nullptr;
    std::string why;
};

CLoaded &c_loaded() {
    static CLoaded c;
    static const bool done = [] {
        const Compiled &comp = compiled();
        if (comp.cubin.empty()) {
            c.why = comp.why;
            return true;
        }
        bool ok = cucore_object_code_create(comp.cubin.data(), comp.cubin.size(), CUCORE_CODE_CUBIN, "launch_bench",
                                            &c.code) == CUCORE_SUCCESS;
        for (int k = 0; ok && k < kKernelCount; ++k)
            ok = cucore_object_code_get_kernel(c.code, kKernelNames[k], &c.kernels[k]) == CUCORE_SUCCESS;
        ok = ok && cucore_stream_create(env().device, nullptr, &c.stream) == CUCORE_SUCCESS;
        if (!ok) c.why = std::string("C ABI load of the benchmark kernels: ") + cucore_last_error_message();
        at_tear_down([] {
            CLoaded &x = c_loaded();
            cucore_stream_release(x.stream);
            for (cucore_kernel_t *k : x.kernels) cucore_kernel_release(k);
            cucore_object_code_release(x.code);
            x = CLoaded{};
        });
        return true;
    }();
    (void)done;
    return c;
}

struct CppLoaded {
    std::optional<cucore::ObjectCode> code;
    std::optional<cucore::Kernel> kernels[kKernelCount];
    std::optional<cucore::Stream> stream;
    std::string why;
};

CppLoaded &cpp_loaded() {
    static CppLoaded c;
    static const bool done = [] {
        const Compiled &comp = compiled();
        if (comp.cubin.empty()) {
            c.why = comp.why;
            return true;
        }
        try {
            c.code = cucore::ObjectCode::create(comp.cubin.data(), comp.cubin.size(), CUCORE_CODE_CUBIN, "launch_bench");
            for (int k = 0; k < kKernelCount; ++k) c.kernels[k] = c.code->get_kernel(kKernelNames[k]);
            c.stream = env().cpp_device->create_stream();
        } catch (const std::exception &e) {
            c.why = std::string("C++ load of the benchmark kernels: ") + e.what();
        }
        at_tear_down([] {
            CppLoaded &x = cpp_loaded();
            x.stream.reset();
            for (auto &k : x.kernels) k.reset();
            x.code.reset();
        });
        return true;
    }();
    (void)done;
    return c;
}

// ---- The loops --------------------------------------------------------------------------------

// Raw: cuLaunchKernel of `kernel` with `params` on a 1x1 grid.
void raw_launches(benchmark::State &state, KernelId kernel, void **params, bool round_trip) {
    const RawDriver &d = env().driver;
    RawLoaded &r = raw_loaded();
    if (!r.why.empty()) return skip_run(state, r.why);
    CUfunction f = r.functions[kernel];
    CUstream s = r.stream;
    auto step = [&] { return ok(state, d.cuLaunchKernel_fn(f, 1, 1, 1, 1, 1, 1, 0, s, params, nullptr), "cuLaunchKernel"); };
    auto sync = [&] { return ok(state, d.cuStreamSynchronize_fn(s), "cuStreamSynchronize"); };
    if (round_trip) {
        for (auto _ : state)
            if (!step() || !sync()) return;
    } else {
        queued_loop(state, kSyncEvery, step, sync);
    }
}

// C ABI: cucore_launch with the same argument bytes.
void c_launches(benchmark::State &state, KernelId kernel, const void *const *args, const std::size_t *sizes,
                std::size_t count, bool round_trip) {
    CLoaded &c = c_loaded();
    if (!c.why.empty()) return skip_run(state, c.why);
    cucore_kernel_t *k = c.kernels[kernel];
    cucore_stream_t *s = c.stream;
    const cucore_launch_config_t config = CUCORE_LAUNCH_CONFIG_INIT;
    auto step = [&] { return ok(state, cucore_launch(s, &config, k, args, sizes, count), "cucore_launch"); };
    auto sync = [&] { return ok(state, cucore_stream_synchronize(s), "cucore_stream_synchronize"); };
    if (round_trip) {
        for (auto _ : state)
            if (!step() || !sync()) return;
    } else {
        queued_loop(state, kSyncEvery, step, sync);
    }
}

// C++: cucore::launch with typed arguments (packed at compile time by the façade).
template <typename... Args>
void cpp_launches(benchmark::State &state, KernelId kernel, bool round_trip, const Args &...args) {
    CppLoaded &c = cpp_loaded();
    if (!c.why.empty()) return skip_run(state, c.why);
    try {
        const cucore::Kernel &k = *c.kernels[kernel];
        const cucore::Stream &s = *c.stream;
        const cucore::LaunchConfig config;
        auto step = [&] {
            cucore::launch(s, config, k, args...);
            return true;
        };
        auto sync = [&] {
            s.synchronize();
            return true;
        };
        if (round_trip) {
            for (auto _ : state) {
                step();
                sync();
            }
        } else {
            queued_loop(state, kSyncEvery, step, sync);
        }
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
}

// ---- 0 arguments -------------------------------------------------------------------------------

void launch0_raw(benchmark::State &state) { raw_launches(state, kEmpty0, nullptr, false); }
void launch0_c(benchmark::State &state) { c_launches(state, kEmpty0, nullptr, nullptr, 0, false); }
void launch0_cpp(benchmark::State &state) { cpp_launches(state, kEmpty0, false); }

// ---- 2 arguments -------------------------------------------------------------------------------

void launch2_raw(benchmark::State &state) {
    Arguments &a = arguments();
    void *params[2] = {&a.pointers[0], &a.ints[0]};
    raw_launches(state, kEmpty2, params, false);
}
void launch2_c(benchmark::State &state) {
    Arguments &a = arguments();
    const void *args[2] = {&a.pointers[0], &a.ints[0]};
    const std::size_t sizes[2] = {sizeof(int *), sizeof(int)};
    c_launches(state, kEmpty2, args, sizes, 2, false);
}
void launch2_cpp(benchmark::State &state) {
    Arguments &a = arguments();
    cpp_launches(state, kEmpty2, false, a.pointers[0], a.ints[0]);
}

// ---- 16 arguments ------------------------------------------------------------------------------

void launch16_raw(benchmark::State &state) { raw_launches(state, kEmpty16, arguments().ptrs16, false); }
void launch16_c(benchmark::State &state) {
    Arguments &a = arguments();
    c_launches(state, kEmpty16, a.ptrs16, a.sizes16, 16, false);
}
void launch16_cpp(benchmark::State &state) {
    Arguments &a = arguments();
    int *const *p = a.pointers;
    const int *i = a.ints;
    cpp_launches(state, kEmpty16, false, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], i[0], i[1], i[2], i[3],
                 i[4], i[5], i[6], i[7]);
}

// ---- one 64-byte struct ------------------------------------------------------------------------

void launch_struct_raw(benchmark::State &state) {
    void *params[1] = {&arguments().s};
    raw_launches(state, kEmptyStruct, params, false);
}
void launch_struct_c(benchmark::State &state) {
    const void *args[1] = {&arguments().s};
    const std::size_t sizes[1] = {sizeof(Struct64)};
    c_launches(state, kEmptyStruct, args, sizes, 1, false);
}
void launch_struct_cpp(benchmark::State &state) { cpp_launches(state, kEmptyStruct, false, arguments().s); }

// ---- launch + synchronize round trip (2 arguments) ---------------------------------------------

void round_trip_raw(benchmark::State &state) {
    Arguments &a = arguments();
    void *params[2] = {&a.pointers[0], &a.ints[0]};
    raw_launches(state, kEmpty2, params, true);
}
void round_trip_c(benchmark::State &state) {
    Arguments &a = arguments();
    const void *args[2] = {&a.pointers[0], &a.ints[0]};
    const std::size_t sizes[2] = {sizeof(int *), sizeof(int)};
    c_launches(state, kEmpty2, args, sizes, 2, true);
}
void round_trip_cpp(benchmark::State &state) {
    Arguments &a = arguments();
    cpp_launches(state, kEmpty2, true, a.pointers[0], a.ints[0]);
}

const bool registered = [] {
    register_operation({110, "launch_0_args", "kernel launch, 0 args", 1.03,
                        "performance_anchors.md: empty kernel launch, host submit time", launch0_raw, launch0_c,
                        launch0_cpp});
    register_operation({111, "launch_2_args", "kernel launch, 2 args", 1.03,
                        "performance_anchors.md: 2-argument kernel launch, host submit", launch2_raw, launch2_c,
                        launch2_cpp});
    register_operation({112, "launch_16_args", "kernel launch, 16 args", 1.03,
                        "performance_anchors.md: kernel launch (C ABI <= 1.03x raw)", launch16_raw, launch16_c,
                        launch16_cpp});
    register_operation({113, "launch_struct64", "kernel launch, 64 B struct", 1.03,
                        "performance_anchors.md: kernel launch (C ABI <= 1.03x raw)", launch_struct_raw,
                        launch_struct_c, launch_struct_cpp});
    register_operation({114, "launch_round_trip", "launch + sync round trip", 1.02,
                        "performance_anchors.md: launch + stream synchronize round trip", round_trip_raw,
                        round_trip_c, round_trip_cpp});
    return true;
}();

}  // namespace
}  // namespace cucore_bench
