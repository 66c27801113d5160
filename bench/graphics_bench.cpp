// Graphics interop (OpenGL): register + unregister of one GL buffer, map + pointer + unmap of one
// GL buffer, and 8 GL buffers mapped with 8 single calls versus one batch call.
//
// The GL buffers live in a headless NVIDIA GL context made current on the benchmark thread once per
// run (tests/gl/egl_context.hpp, through EGL; nothing links EGL or GL). Where no NVIDIA GL context
// can be made (no libEGL, Mesa only, no EGL device of the CUDA device), every row stops as skipped
// with that reason. The raw column resolves the GL interop entry points itself (cuGetProcAddress
// with the toolkit's CUDA_VERSION): bench/raw_driver.hpp's table holds no graphics entry points, and
// the toolkit's stub libcuda exports none (docs/architecture.md, "Graphics interop").
//
// Map rows: map, the mapped pointer, unmap, on one non-blocking stream; the stream is synchronized
// every kSyncEvery iterations with the timer paused, as for the other queued operations. GL has a
// queue too: registrations and maps add work to the GL context's command stream, which nothing
// drains while only CUDA calls run. Left alone it grows, and each later call gets slower (on the
// H200 server register + unregister went from 0.46 ms to a mean of 12 ms and a run of the GL rows
// past 200 s). So every row also drains GL (glFinish) with the stream, timer paused, as a frame
// loop would; and the rows run a fixed number of iterations per repetition, since one operation
// takes tens to hundreds of microseconds. The batch rows report, at the end of the run, how much
// faster one batch call is than 8 single calls, per variant (target >= 6.5x).

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <cucore/graphics.h>
#include <cucore/graphics.hpp>

#include "bench_common.hpp"
#include "egl_context.hpp"

namespace cucore_bench {
namespace {

constexpr int kSyncEvery = 64;
constexpr int kBatchSyncEvery = 8;  // iterations of 8 buffers between drains in the batch rows
constexpr unsigned kBatch = 8;
constexpr long long kRegisterIterations = 256;
constexpr long long kMapIterations = 1024;
constexpr long long kBatchIterations = 64;
constexpr std::size_t kBufferBytes = 1 << 20;

// ---- The raw driver's interop entry points ------------------------------------------------------

struct RawGraphics {
    CUresult (*GLRegisterBuffer)(CUgraphicsResource *, unsigned int, unsigned int) = nullptr;
    CUresult (*UnregisterResource)(CUgraphicsResource) = nullptr;
    CUresult (*MapResources)(unsigned int, CUgraphicsResource *, CUstream) = nullptr;
    CUresult (*ResourceGetMappedPointer)(CUdeviceptr *, size_t *, CUgraphicsResource) = nullptr;
    CUresult (*UnmapResources)(unsigned int, CUgraphicsResource *, CUstream) = nullptr;
};

bool resolve(void *library, const char *symbol, int version, void **out, std::string *why) {
    using GetProcV2 = CUresult (*)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
    auto get_proc = reinterpret_cast<GetProcV2>(dlsym(library, "cuGetProcAddress_v2"));
    if (get_proc == nullptr) {
        *why = "the CUDA driver has no cuGetProcAddress_v2";
        return false;
    }
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (get_proc(symbol, out, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status) != CUDA_SUCCESS ||
        status != CU_GET_PROC_ADDRESS_SUCCESS || *out == nullptr) {
        *why = std::string("the CUDA driver lacks ") + symbol;
        return false;
    }
    return true;
}

// ---- The GL side, set up once per run ----------------------------------------------------------

struct GlState {
    bool tried = false;
    std::string reason;  // why there is no GL, when gl is null
    std::unique_ptr<gltest::EglContext> gl;
    RawGraphics raw;
    std::vector<gltest::GLuint> buffers;  // kBatch GL buffers of kBufferBytes each
};

GlState &gl_state() {
    static GlState state;
    return state;
}

void tear_down_gl() {
    GlState &s = gl_state();
    if (s.gl != nullptr) {
        s.gl->make_current();
        if (!s.buffers.empty())
            s.gl->gl().DeleteBuffers(static_cast<gltest::GLsizei>(s.buffers.size()), s.buffers.data());
        s.gl.reset();
    }
    s.buffers.clear();
    // The CUDA primary context stays current on the benchmark thread (EGL does not change it).
    env().driver.cuCtxSetCurrent_fn(env().cu_context);
}

// The GL state, made on first use; null with `*why` where this machine has no NVIDIA GL context.
const GlState *gl_ready(std::string *why) {
    GlState &s = gl_state();
    if (!s.tried) {
        s.tried = true;
        std::string reason;
        void *lib = env().driver.library;
        const int v = CUDA_VERSION;
        if (!resolve(lib, "cuGraphicsGLRegisterBuffer", 3000, reinterpret_cast<void **>(&s.raw.GLRegisterBuffer),
                     &reason) ||
            !resolve(lib, "cuGraphicsUnregisterResource", v, reinterpret_cast<void **>(&s.raw.UnregisterResource),
                     &reason) ||
            !resolve(lib, "cuGraphicsMapResources", v, reinterpret_cast<void **>(&s.raw.MapResources), &reason) ||
            !resolve(lib, "cuGraphicsResourceGetMappedPointer", v,
                     reinterpret_cast<void **>(&s.raw.ResourceGetMappedPointer), &reason) ||
            !resolve(lib, "cuGraphicsUnmapResources", v, reinterpret_cast<void **>(&s.raw.UnmapResources),
                     &reason)) {
            s.reason = reason;
        } else {
            s.gl = gltest::EglContext::create(env().ordinal, &reason);
            if (s.gl == nullptr) {
                s.reason = "no NVIDIA GL context on CUDA device " + std::to_string(env().ordinal) + ": " + reason;
            } else {
                at_tear_down(&tear_down_gl);
                const gltest::GlFunctions &gl = s.gl->gl();
                s.buffers.assign(kBatch, 0);
                gl.GenBuffers(static_cast<gltest::GLsizei>(kBatch), s.buffers.data());
                for (gltest::GLuint name : s.buffers) {
                    gl.BindBuffer(gltest::GL_ARRAY_BUFFER, name);
                    gl.BufferData(gltest::GL_ARRAY_BUFFER, static_cast<gltest::GLsizeiptr>(kBufferBytes), nullptr,
                                  gltest::GL_DYNAMIC_DRAW);
                }
                gl.BindBuffer(gltest::GL_ARRAY_BUFFER, 0);
                gl.Finish();
                if (gl.GetError() != gltest::GL_NO_ERROR) {
                    s.reason = "creating the GL buffers failed";
                    tear_down_gl();
                }
            }
            env().driver.cuCtxSetCurrent_fn(env().cu_context);
        }
    }
    if (s.gl == nullptr) {
        *why = s.reason;
        return nullptr;
    }
    if (!s.gl->is_current()) s.gl->make_current();
    return &s;
}

#define CUCORE_BENCH_NEED_GL(state, s)            \
    std::string why_no_gl_;                       \
    const GlState *s = gl_ready(&why_no_gl_);     \
    if (s == nullptr) {                           \
        skip_run(state, why_no_gl_);              \
        return;                                   \
    }

// Drains GL's queue on the benchmark thread (its context is current there).
void gl_finish(const GlState *s) { s->gl->gl().Finish(); }

// ---- register + unregister ---------------------------------------------------------------------

void register_raw(benchmark::State &state) {
    CUCORE_BENCH_NEED_GL(state, s)
    queued_loop(
        state, kSyncEvery,
        [&] {
            CUgraphicsResource r = nullptr;
            if (!ok(state, s->raw.GLRegisterBuffer(&r, s->buffers[0], 0), "cuGraphicsGLRegisterBuffer"))
                return false;
            return ok(state, s->raw.UnregisterResource(r), "cuGraphicsUnregisterResource");
        },
        [&] {
            gl_finish(s);
            return true;
        });
}

void register_c(benchmark::State &state) {
    CUCORE_BENCH_NEED_GL(state, s)
    cucore_device_t *device = env().device;
    const long long before = live_objects(CUCORE_OBJECT_GRAPHICS_RESOURCE);
    queued_loop(
        state, kSyncEvery,
        [&] {
            cucore_graphics_resource_t *r = nullptr;
            if (!ok(state, cucore_graphics_resource_from_gl_buffer(device, s->buffers[0], 0, &r),
                    "cucore_graphics_resource_from_gl_buffer"))
                return false;
            return ok(state, cucore_graphics_resource_release(r), "cucore_graphics_resource_release");
        },
        [&] {
            gl_finish(s);
            return true;
        });
    if (live_objects(CUCORE_OBJECT_GRAPHICS_RESOURCE) != before)
        fail_check(state, "live graphics resource count changed (a leak)");
}

void register_cpp(benchmark::State &state) {
    CUCORE_BENCH_NEED_GL(state, s)
    try {
        const cucore::Device &device = *env().cpp_device;
        const long long before = live_objects(CUCORE_OBJECT_GRAPHICS_RESOURCE);
        queued_loop(
            state, kSyncEvery,
            [&] {
                cucore::GraphicsResource r = cucore::GraphicsResource::from_gl_buffer(device, s->buffers[0]);
                benchmark::DoNotOptimize(r.get());
                return true;
            },
            [&] {
                gl_finish(s);
                return true;
            });
        if (live_objects(CUCORE_OBJECT_GRAPHICS_RESOURCE) != before)
            fail_check(state, "live graphics resource count changed (a leak)");
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
}

// ---- map + pointer + unmap of one buffer -------------------------------------------------------

void map_raw(benchmark::State &state) {
    CUCORE_BENCH_NEED_GL(state, s)
    const RawDriver &d = env().driver;
    CUstream stream = nullptr;
    CUgraphicsResource r = nullptr;
    if (!ok(state, d.cuStreamCreateWithPriority_fn(&stream, CU_STREAM_NON_BLOCKING, 0), "cuStreamCreateWithPriority"))
        return;
    if (ok(state, s->raw.GLRegisterBuffer(&r, s->buffers[0], 0), "cuGraphicsGLRegisterBuffer")) {
        queued_loop(
            state, kSyncEvery,
            [&] {
                if (!ok(state, s->raw.MapResources(1, &r, stream), "cuGraphicsMapResources")) return false;
                CUdeviceptr p = 0;
                size_t size = 0;
                if (!ok(state, s->raw.ResourceGetMappedPointer(&p, &size, r), "cuGraphicsResourceGetMappedPointer"))
                    return false;
                benchmark::DoNotOptimize(p);
                return ok(state, s->raw.UnmapResources(1, &r, stream), "cuGraphicsUnmapResources");
            },
            [&] {
                gl_finish(s);
                return ok(state, d.cuStreamSynchronize_fn(stream), "cuStreamSynchronize");
            });
        d.cuStreamSynchronize_fn(stream);
        s->raw.UnregisterResource(r);
    }
    d.cuStreamDestroy_fn(stream);
}

void map_c(benchmark::State &state) {
    CUCORE_BENCH_NEED_GL(state, s)
    cucore_device_t *device = env().device;
    cucore_stream_t *stream = nullptr;
    cucore_graphics_resource_t *r = nullptr;
    if (!ok(state, cucore_stream_create(device, nullptr, &stream), "cucore_stream_create")) return;
    if (ok(state, cucore_graphics_resource_from_gl_buffer(device, s->buffers[0], 0, &r),
           "cucore_graphics_resource_from_gl_buffer")) {
        const long long before = live_objects(CUCORE_OBJECT_BUFFER);
        queued_loop(
            state, kSyncEvery,
            [&] {
                cucore_buffer_t *b = nullptr;
                if (!ok(state, cucore_graphics_resource_map(r, stream, 0, &b), "cucore_graphics_resource_map"))
                    return false;
                std::uint64_t p = 0;
                if (!ok(state, cucore_buffer_address(b, &p), "cucore_buffer_address")) return false;
                benchmark::DoNotOptimize(p);
                return ok(state, cucore_buffer_release(b), "cucore_buffer_release (unmaps)");
            },
            [&] {
                gl_finish(s);
                return ok(state, cucore_stream_synchronize(stream), "cucore_stream_synchronize");
            });
        if (live_objects(CUCORE_OBJECT_BUFFER) != before) fail_check(state, "live buffer count changed (a leak)");
        cucore_stream_synchronize(stream);
        cucore_graphics_resource_release(r);
    }
    cucore_stream_release(stream);
}

void map_cpp(benchmark::State &state) {
    CUCORE_BENCH_NEED_GL(state, s)
    try {
        const cucore::Device &device = *env().cpp_device;
        cucore::Stream stream = device.create_stream();
        cucore::GraphicsResource r = cucore::GraphicsResource::from_gl_buffer(device, s->buffers[0]);
        queued_loop(
            state, kSyncEvery,
            [&] {
                cucore::Buffer b = r.map(stream);  // unmaps at the end of the scope
                benchmark::DoNotOptimize(b.address());
                return true;
            },
            [&] {
                gl_finish(s);
                stream.synchronize();
                return true;
            });
        stream.synchronize();
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
}

// ---- 8 buffers: 8 single calls vs one batch call -------------------------------------------------
// Both rows: map all 8, get each pointer, unmap all 8. "single": one map call and one unmap call
// per buffer. "batch": one map call and one unmap call for all 8 (cuGraphicsMapResources and
// cuGraphicsUnmapResources with a count / cucore_graphics_resources_map and _unmap / the scope of
// GraphicsResource::map_all's MappedBuffers).

// Per-variant best time per iteration (ns), measured around each run's loop, for the speed-up line.
double g_single_ns[3] = {0, 0, 0};
double g_batch_ns[3] = {0, 0, 0};

// The anchor (docs/performance.md, "Targets"): the raw driver's batch is 7.07x faster than 8 single
// calls on the H200, and the library's batch must stay >= 6.5x, i.e. keep >= 6.5 / 7.07 of the raw speed-up.
// The raw speed-up differs per machine, so the line shows both the absolute figure and that share.
constexpr double kAnchorRawSpeedup = 7.07;
constexpr double kAnchorTarget = 6.5;

void print_speedup() {
    bool any = false;
    for (int v = 0; v < 3; ++v) any = any || (g_single_ns[v] > 0 && g_batch_ns[v] > 0);
    if (!any) return;
    const double raw = g_single_ns[0] > 0 && g_batch_ns[0] > 0 ? g_single_ns[0] / g_batch_ns[0] : 0;
    std::printf("\ngraphics: 8 GL buffers, 8 single map/unmap calls / one batch map/unmap (anchor: raw %.2fx on the "
                "H200, target >= %.1fx = %.0f%% of raw's):",
                kAnchorRawSpeedup, kAnchorTarget, 100 * kAnchorTarget / kAnchorRawSpeedup);
    for (int v = 0; v < 3; ++v) {
        if (g_single_ns[v] <= 0 || g_batch_ns[v] <= 0) continue;
        const double speedup = g_single_ns[v] / g_batch_ns[v];
        std::printf(" %s %.2fx", kVariantNames[v], speedup);
        if (v > 0 && raw > 0) {
            const double share = speedup / raw;
            std::printf(" (%.0f%% of raw's%s)", 100 * share,
                        share >= kAnchorTarget / kAnchorRawSpeedup ? "" : ", below target");
        }
    }
    std::printf("\n");
}

// Runs `loop(drain)` (which runs the state's iterations, calling drain(sync) every kBatchSyncEvery
// of them) and keeps the best ns per iteration in `slot`, without the drains' time.
bool g_speedup_hooked = false;  // one hook for every instantiation of timed()

template <typename Loop>
void timed(benchmark::State &state, double *slot, Loop loop) {
    if (!g_speedup_hooked) {
        g_speedup_hooked = true;
        at_tear_down(&print_speedup);
    }
    double paused_ns = 0;
    int pending = 0;
    // Drains GL and the stream (`sync`) with the timer paused, every kBatchSyncEvery calls.
    auto drain = [&](auto sync) {
        if (++pending < kBatchSyncEvery) return true;
        pending = 0;
        state.PauseTiming();
        const auto p0 = std::chrono::steady_clock::now();
        const bool synced = sync();
        paused_ns += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - p0).count();
        state.ResumeTiming();
        return synced;
    };
    const auto t0 = std::chrono::steady_clock::now();
    loop(drain);
    const auto t1 = std::chrono::steady_clock::now();
    if (state.iterations() == 0 || state.error_occurred()) return;
    const double ns = (std::chrono::duration<double, std::nano>(t1 - t0).count() - paused_ns) /
                      static_cast<double>(state.iterations());
    if (*slot == 0 || ns < *slot) *slot = ns;
}

template <bool kBatchCall>
void map8_raw(benchmark::State &state) {
    CUCORE_BENCH_NEED_GL(state, s)
    const RawDriver &d = env().driver;
    CUstream stream = nullptr;
    if (!ok(state, d.cuStreamCreateWithPriority_fn(&stream, CU_STREAM_NON_BLOCKING, 0), "cuStreamCreateWithPriority"))
        return;
    CUgraphicsResource r[kBatch] = {};
    unsigned registered = 0;
    for (; registered < kBatch; ++registered)
        if (!ok(state, s->raw.GLRegisterBuffer(&r[registered], s->buffers[registered], 0), "cuGraphicsGLRegisterBuffer"))
            break;
    if (registered == kBatch) {
        timed(state, kBatchCall ? &g_batch_ns[0] : &g_single_ns[0], [&](auto drain) {
            for (auto _ : state) {
                if (kBatchCall) {
                    if (!ok(state, s->raw.MapResources(kBatch, r, stream), "cuGraphicsMapResources")) return;
                } else {
                    for (unsigned i = 0; i < kBatch; ++i)
                        if (!ok(state, s->raw.MapResources(1, &r[i], stream), "cuGraphicsMapResources")) return;
                }
                for (unsigned i = 0; i < kBatch; ++i) {
                    CUdeviceptr p = 0;
                    size_t size = 0;
                    if (!ok(state, s->raw.ResourceGetMappedPointer(&p, &size, r[i]),
                            "cuGraphicsResourceGetMappedPointer"))
                        return;
                    benchmark::DoNotOptimize(p);
                }
                if (kBatchCall) {
                    if (!ok(state, s->raw.UnmapResources(kBatch, r, stream), "cuGraphicsUnmapResources")) return;
                } else {
                    for (unsigned i = 0; i < kBatch; ++i)
                        if (!ok(state, s->raw.UnmapResources(1, &r[i], stream), "cuGraphicsUnmapResources")) return;
                }
                if (!drain([&] {
                        gl_finish(s);
                        return ok(state, d.cuStreamSynchronize_fn(stream), "cuStreamSynchronize");
                    }))
                    return;
            }
        });
        d.cuStreamSynchronize_fn(stream);
    }
    for (unsigned i = 0; i < registered; ++i) s->raw.UnregisterResource(r[i]);
    d.cuStreamDestroy_fn(stream);
}

template <bool kBatchCall>
void map8_c(benchmark::State &state) {
    CUCORE_BENCH_NEED_GL(state, s)
    cucore_device_t *device = env().device;
    cucore_stream_t *stream = nullptr;
    if (!ok(state, cucore_stream_create(device, nullptr, &stream), "cucore_stream_create")) return;
    cucore_graphics_resource_t *r[kBatch] = {};
    unsigned registered = 0;
    for (; registered < kBatch; ++registered)
        if (!ok(state, cucore_graphics_resource_from_gl_buffer(device, s->buffers[registered], 0, &r[registered]),
                "cucore_graphics_resource_from_gl_buffer"))
            break;
    if (registered == kBatch) {
        const long long before = live_objects(CUCORE_OBJECT_BUFFER);
        timed(state, kBatchCall ? &g_batch_ns[1] : &g_single_ns[1], [&](auto drain) {
            for (auto _ : state) {
                cucore_buffer_t *b[kBatch] = {};
                if (kBatchCall) {
                    if (!ok(state, cucore_graphics_resources_map(r, kBatch, stream, b), "cucore_graphics_resources_map"))
                        return;
                } else {
                    for (unsigned i = 0; i < kBatch; ++i)
                        if (!ok(state, cucore_graphics_resource_map(r[i], stream, 0, &b[i]),
                                "cucore_graphics_resource_map"))
                            return;
                }
                for (unsigned i = 0; i < kBatch; ++i) {
                    std::uint64_t p = 0;
                    if (!ok(state, cucore_buffer_address(b[i], &p), "cucore_buffer_address")) return;
                    benchmark::DoNotOptimize(p);
                }
                if (kBatchCall &&
                    !ok(state, cucore_graphics_resources_unmap(r, kBatch, nullptr), "cucore_graphics_resources_unmap"))
                    return;
                for (unsigned i = 0; i < kBatch; ++i)
                    if (!ok(state, cucore_buffer_release(b[i]), kBatchCall ? "cucore_buffer_release"
                                                                           : "cucore_buffer_release (unmaps)"))
                        return;
                if (!drain([&] {
                        gl_finish(s);
                        return ok(state, cucore_stream_synchronize(stream), "cucore_stream_synchronize");
                    }))
                    return;
            }
        });
        if (live_objects(CUCORE_OBJECT_BUFFER) != before) fail_check(state, "live buffer count changed (a leak)");
        cucore_stream_synchronize(stream);
    }
    for (unsigned i = 0; i < registered; ++i) cucore_graphics_resource_release(r[i]);
    cucore_stream_release(stream);
}

template <bool kBatchCall>
void map8_cpp(benchmark::State &state) {
    CUCORE_BENCH_NEED_GL(state, s)
    try {
        const cucore::Device &device = *env().cpp_device;
        cucore::Stream stream = device.create_stream();
        std::vector<cucore::GraphicsResource> r;
        for (unsigned i = 0; i < kBatch; ++i) r.push_back(cucore::GraphicsResource::from_gl_buffer(device, s->buffers[i]));
        timed(state, kBatchCall ? &g_batch_ns[2] : &g_single_ns[2], [&](auto drain) {
            for (auto _ : state) {
                if (kBatchCall) {
                    cucore::MappedBuffers b = cucore::GraphicsResource::map_all(r, stream);
                    for (const cucore::Buffer &buf : b) benchmark::DoNotOptimize(buf.address());
                } else {  // one unmap call per buffer as each goes
                    std::vector<cucore::Buffer> b;
                    b.reserve(kBatch);
                    for (const cucore::GraphicsResource &res : r) b.push_back(res.map(stream));
                    for (const cucore::Buffer &buf : b) benchmark::DoNotOptimize(buf.address());
                }  // the batch unmaps in one call here; the singles one by one
                drain([&] {
                    gl_finish(s);
                    stream.synchronize();
                    return true;
                });
            }
        });
        stream.synchronize();
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
}

const bool registered_register = register_operation({
    900,
    "gl_buffer_register",
    "GL buffer register + unregister",
    1.02,
    "graphics capability (issue 5): register + unregister <= 1.02x raw",
    register_raw,
    register_c,
    register_cpp,
    0,
    0,
    kRegisterIterations,
});

const bool registered_map = register_operation({
    910,
    "gl_buffer_map",
    "GL buffer map + pointer + unmap",
    1.02,
    "graphics capability (issue 5): map + pointer + unmap <= 1.02x raw",
    map_raw,
    map_c,
    map_cpp,
    0,
    0,
    kMapIterations,
});

const bool registered_map8_single = register_operation({
    920,
    "gl_map8_single",
    "8 GL buffers, 8 single map calls",
    0,
    "",
    map8_raw<false>,
    map8_c<false>,
    map8_cpp<false>,
    0,
    0,
    kBatchIterations,
});

const bool registered_map8_batch = register_operation({
    930,
    "gl_map8_batch",
    "8 GL buffers, one batch map call",
    0,
    "",
    map8_raw<true>,
    map8_c<true>,
    map8_cpp<true>,
    0,
    0,
    kBatchIterations,
});

}  // namespace
}  // namespace cucore_bench
