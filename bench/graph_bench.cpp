// CUDA graphs: launch of a 1-node and of a 100-node graph (host submit time), 100 kernels
// launched one by one against one 100-node graph (both until the work is done: the speed-up
// table at the end), instantiation of a 100-node graph, and a whole-graph update of it.
//
// Every graph is a chain of kernel nodes of one tiny kernel, `tick(counter, step)`, which adds
// `step` to a device counter (one thread), built explicitly in each column through its own API:
//   raw    cuGraphCreate + cuGraphAddKernelNode (the CUfunction of cuKernelGetFunction, as the
//          launch rows load it) + cuGraphInstantiateWithParams; launched with cuGraphLaunch,
//          updated with cuGraphExecUpdate, destroyed with cuGraphExecDestroy;
//   C ABI  cucore_graph_definition_create + cucore_graph_definition_add_kernel +
//          cucore_graph_definition_instantiate; cucore_graph_launch, cucore_graph_update,
//          cucore_graph_release;
//   C++    GraphDefinition::create + add_kernel (typed arguments) + instantiate; Graph::launch,
//          Graph::update, the Graph's destructor.
// libcucore launches an executable graph with one cuGraphLaunch, so the launch rows compare that
// call with the wrapper's handle lookup and checks around it. The counter lives in memory of the
// device's current pool (raw: cuMemAllocFromPoolAsync; C ABI and C++: the device's default
// resource); the kernel is compiled once per run by libcucore (NVRTC, the device's arch) and
// every column loads that cubin.
//
// What is timed, identically in every column:
//   graph launch, 1 / 100 nodes      launches queued back to back on one non-blocking stream; the
//                                    stream is synchronized with the timer paused every 256
//                                    (1 node) or 8 (100 nodes) launches, so no launch waits for
//                                    the GPU: the host's cost of submitting one launch (100 nodes:
//                                    2048 launches per repetition, fixed);
//   100 launches + sync              100 kernel launches (cuLaunchKernel, cucore_launch,
//                                    cucore::launch) then a stream synchronize, every iteration;
//   100-node graph launch + sync     one launch of the 100-node graph then a stream synchronize:
//                                    the same work as the row above, until it is done;
//   graph instantiate, 100 nodes     instantiation + destruction of the executable graph;
//   whole-graph update, 100 nodes    an update of one executable graph from one of two
//                                    definitions of the same topology, alternately (the kernels'
//                                    `step` argument differs), so that every update changes it.
// After the run a table gives, per column, 100 launches + sync over the 100-node graph launch +
// sync: the speed-up of one graph launch over launching its kernels one by one (best times).
//
// Checks, outside the timing: after each launch loop the counter holds iterations x nodes x step
// (the kernels really ran, as many times as launched); after the update loop a launch of the
// updated graph adds the step of the last definition applied; the C ABI and C++ instantiate loops
// leave the live graph count where it was. Without NVRTC the rows are skipped with the reason.

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace cucore_bench {
namespace {

constexpr int kNodes = 100;
constexpr int kSyncEvery1 = 256;  // 1-node launches between paused synchronizations
constexpr int kSyncEvery100 = 8;  // 100-node launches between paused synchronizations
// 100-node launches per repetition, fixed: each costs the host microseconds but the GPU ~100 us or
// more, so the paused synchronizations would otherwise take seconds per repetition.
constexpr long long kLaunches100 = 2048;

const char *const kSource = R"(
extern "C" __global__ void tick(int *counter, int step) { atomicAdd(counter, step); }
)";

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
            out.why = std::string("cannot compile the benchmark kernel: ") + cucore_last_error_message();
        else
            out.cubin.assign(static_cast<const char *>(data), size);
        cucore_object_code_release(code);
        cucore_program_release(p);
        return out;
    }();
    return c;
}

// ---- What each column builds, once per run ----------------------------------------------------
// Each has: the 1-node and the 100-node graph (step 1) instantiated, the 100-node definitions of
// step 1 and 2 (the update's two sources) and an executable graph made from the first.

struct RawSide {
    CUlibrary library = nullptr;
    CUfunction function = nullptr;
    CUstream stream = nullptr;
    CUdeviceptr counter = 0;
    CUgraph one = nullptr, chain[2] = {nullptr, nullptr};  // chain[s]: 100 nodes of step s + 1
    CUgraphExec one_exec = nullptr, chain_exec = nullptr, update_exec = nullptr;
    std::string why;
};

// A chain of `nodes` kernel nodes of tick(counter, step).
CUresult raw_chain(const RawDriver &d, CUfunction f, CUdeviceptr counter, int step, int nodes, CUgraph *graph) {
    CUresult r = d.cuGraphCreate_fn(graph, 0);
    CUgraphNode previous = nullptr;
    for (int i = 0; r == CUDA_SUCCESS && i < nodes; ++i) {
        void *params[2] = {&counter, &step};
        CUDA_KERNEL_NODE_PARAMS p{};
        p.func = f;
        p.gridDimX = p.gridDimY = p.gridDimZ = 1;
        p.blockDimX = p.blockDimY = p.blockDimZ = 1;
        p.kernelParams = params;
        CUgraphNode node = nullptr;
        r = d.cuGraphAddKernelNode_fn(&node, *graph, previous != nullptr ? &previous : nullptr,
                                      previous != nullptr ? 1 : 0, &p);
        previous = node;
    }
    return r;
}

CUresult raw_instantiate(const RawDriver &d, CUgraph graph, CUgraphExec *exec) {
    CUDA_GRAPH_INSTANTIATE_PARAMS p{};
    const CUresult r = d.cuGraphInstantiateWithParams_fn(exec, graph, &p);
    return r == CUDA_SUCCESS && p.result_out != CUDA_GRAPH_INSTANTIATE_SUCCESS ? CUDA_ERROR_INVALID_VALUE : r;
}

RawSide &raw_side() {
    static RawSide r;
    static const bool done = [] {
        const RawDriver &d = env().driver;
        const Compiled &c = compiled();
        if (c.cubin.empty()) {
            r.why = c.why;
            return true;
        }
        CUresult res = d.cuLibraryLoadData_fn(&r.library, c.cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
        CUkernel kernel = nullptr;
        if (res == CUDA_SUCCESS) res = d.cuLibraryGetKernel_fn(&kernel, r.library, "tick");
        if (res == CUDA_SUCCESS) res = d.cuKernelGetFunction_fn(&r.function, kernel);
        if (res == CUDA_SUCCESS) res = d.cuStreamCreateWithPriority_fn(&r.stream, CU_STREAM_NON_BLOCKING, 0);
        CUmemoryPool pool = nullptr;
        if (res == CUDA_SUCCESS) res = d.cuDeviceGetMemPool_fn(&pool, env().cu_device);
        if (res == CUDA_SUCCESS) res = d.cuMemAllocFromPoolAsync_fn(&r.counter, sizeof(int), pool, r.stream);
        if (res == CUDA_SUCCESS) res = raw_chain(d, r.function, r.counter, 1, 1, &r.one);
        if (res == CUDA_SUCCESS) res = raw_chain(d, r.function, r.counter, 1, kNodes, &r.chain[0]);
        if (res == CUDA_SUCCESS) res = raw_chain(d, r.function, r.counter, 2, kNodes, &r.chain[1]);
        if (res == CUDA_SUCCESS) res = raw_instantiate(d, r.one, &r.one_exec);
        if (res == CUDA_SUCCESS) res = raw_instantiate(d, r.chain[0], &r.chain_exec);
        if (res == CUDA_SUCCESS) res = raw_instantiate(d, r.chain[0], &r.update_exec);
        if (res != CUDA_SUCCESS) r.why = "raw graph set-up: " + d.error_name(res);
        at_tear_down([] {
            RawSide &x = raw_side();
            const RawDriver &dd = env().driver;
            if (x.stream != nullptr) dd.cuStreamSynchronize_fn(x.stream);
            for (CUgraphExec e : {x.one_exec, x.chain_exec, x.update_exec})
                if (e != nullptr) dd.cuGraphExecDestroy_fn(e);
            for (CUgraph g : {x.one, x.chain[0], x.chain[1]})
                if (g != nullptr) dd.cuGraphDestroy_fn(g);
            if (x.counter != 0) dd.cuMemFreeAsync_fn(x.counter, x.stream);
            if (x.stream != nullptr) {
                dd.cuStreamSynchronize_fn(x.stream);
                dd.cuStreamDestroy_fn(x.stream);
            }
            if (x.library != nullptr) dd.cuLibraryUnload_fn(x.library);
            x = RawSide{};
        });
        return true;
    }();
    (void)done;
    return r;
}

struct CSide {
    cucore_object_code_t *code = nullptr;
    cucore_kernel_t *kernel = nullptr;
    cucore_stream_t *stream = nullptr;
    cucore_buffer_t *counter = nullptr;
    cucore_graph_definition_t *one = nullptr, *chain[2] = {nullptr, nullptr};
    cucore_graph_t *one_graph = nullptr, *chain_graph = nullptr, *update_graph = nullptr;
    std::string why;
};

cucore_status_t c_chain(cucore_kernel_t *kernel, cucore_buffer_t *counter, int step, int nodes,
                        cucore_graph_definition_t **definition) {
    std::uint64_t address = 0;
    cucore_status_t s = cucore_buffer_address(counter, &address);
    if (s == CUCORE_SUCCESS) s = cucore_graph_definition_create(env().device, definition);
    void *pointer = reinterpret_cast<void *>(static_cast<std::uintptr_t>(address));
    const void *args[2] = {&pointer, &step};
    const std::size_t sizes[2] = {sizeof pointer, sizeof step};
    const cucore_launch_config_t config = CUCORE_LAUNCH_CONFIG_INIT;
    cucore_graph_node_t *previous = nullptr;
    for (int i = 0; s == CUCORE_SUCCESS && i < nodes; ++i) {
        cucore_graph_node_t *node = nullptr;
        s = cucore_graph_definition_add_kernel(*definition, previous != nullptr ? &previous : nullptr,
                                               previous != nullptr ? 1 : 0, &config, kernel, args, sizes, 2, &node);
        cucore_graph_node_release(previous);
        previous = node;
    }
    cucore_graph_node_release(previous);
    return s;
}

CSide &c_side() {
    static CSide c;
    static const bool done = [] {
        const Compiled &comp = compiled();
        if (comp.cubin.empty()) {
            c.why = comp.why;
            return true;
        }
        cucore_memory_resource_t *mr = nullptr;
        bool ok = cucore_object_code_create(comp.cubin.data(), comp.cubin.size(), CUCORE_CODE_CUBIN, "graph_bench",
                                            &c.code) == CUCORE_SUCCESS &&
                  cucore_object_code_get_kernel(c.code, "tick", &c.kernel) == CUCORE_SUCCESS &&
                  cucore_stream_create(env().device, nullptr, &c.stream) == CUCORE_SUCCESS &&
                  cucore_device_memory_resource_get_default(env().device, &mr) == CUCORE_SUCCESS &&
                  cucore_memory_resource_allocate(mr, sizeof(int), c.stream, &c.counter) == CUCORE_SUCCESS &&
                  c_chain(c.kernel, c.counter, 1, 1, &c.one) == CUCORE_SUCCESS &&
                  c_chain(c.kernel, c.counter, 1, kNodes, &c.chain[0]) == CUCORE_SUCCESS &&
                  c_chain(c.kernel, c.counter, 2, kNodes, &c.chain[1]) == CUCORE_SUCCESS &&
                  cucore_graph_definition_instantiate(c.one, nullptr, &c.one_graph) == CUCORE_SUCCESS &&
                  cucore_graph_definition_instantiate(c.chain[0], nullptr, &c.chain_graph) == CUCORE_SUCCESS &&
                  cucore_graph_definition_instantiate(c.chain[0], nullptr, &c.update_graph) == CUCORE_SUCCESS;
        if (!ok) c.why = std::string("C ABI graph set-up: ") + cucore_last_error_message();
        cucore_memory_resource_release(mr);
        at_tear_down([] {
            CSide &x = c_side();
            if (x.stream != nullptr) cucore_stream_synchronize(x.stream);
            for (cucore_graph_t *g : {x.one_graph, x.chain_graph, x.update_graph}) cucore_graph_release(g);
            for (cucore_graph_definition_t *d : {x.one, x.chain[0], x.chain[1]}) cucore_graph_definition_release(d);
            cucore_buffer_release(x.counter);
            cucore_stream_release(x.stream);
            cucore_kernel_release(x.kernel);
            cucore_object_code_release(x.code);
            x = CSide{};
        });
        return true;
    }();
    (void)done;
    return c;
}

struct CppSide {
    std::optional<cucore::ObjectCode> code;
    std::optional<cucore::Kernel> kernel;
    std::optional<cucore::Stream> stream;
    std::optional<cucore::Buffer> counter;
    std::optional<cucore::GraphDefinition> one, chain[2];
    std::optional<cucore::Graph> one_graph, chain_graph, update_graph;
    std::string why;
};

cucore::GraphDefinition cpp_chain(const cucore::Kernel &kernel, const cucore::Buffer &counter, int step,
                                  int nodes) {
    cucore::GraphDefinition def = cucore::GraphDefinition::create(*env().cpp_device);
    const cucore::LaunchConfig config;
    cucore::GraphNode previous;
    for (int i = 0; i < nodes; ++i)
        previous = i == 0 ? def.add_kernel({}, config, kernel, counter, step)
                          : def.add_kernel(previous, config, kernel, counter, step);
    return def;
}

CppSide &cpp_side() {
    static CppSide c;
    static const bool done = [] {
        const Compiled &comp = compiled();
        if (comp.cubin.empty()) {
            c.why = comp.why;
            return true;
        }
        try {
            c.code = cucore::ObjectCode::create(comp.cubin.data(), comp.cubin.size(), CUCORE_CODE_CUBIN, "graph_bench");
            c.kernel = c.code->get_kernel("tick");
            c.stream = env().cpp_device->create_stream();
            c.counter = env().cpp_device->allocate(sizeof(int), *c.stream);
            c.one = cpp_chain(*c.kernel, *c.counter, 1, 1);
            c.chain[0] = cpp_chain(*c.kernel, *c.counter, 1, kNodes);
            c.chain[1] = cpp_chain(*c.kernel, *c.counter, 2, kNodes);
            c.one_graph = c.one->instantiate();
            c.chain_graph = c.chain[0]->instantiate();
            c.update_graph = c.chain[0]->instantiate();
        } catch (const std::exception &e) {
            c.why = std::string("C++ graph set-up: ") + e.what();
        }
        at_tear_down([] {
            CppSide &x = cpp_side();
            if (x.stream) x.stream->synchronize();
            for (auto *g : {&x.one_graph, &x.chain_graph, &x.update_graph}) g->reset();
            for (auto *d : {&x.one, &x.chain[0], &x.chain[1]}) d->reset();
            x.counter.reset();
            x.stream.reset();
            x.kernel.reset();
            x.code.reset();
        });
        return true;
    }();
    (void)done;
    return c;
}

// ---- Counter checks (outside the timing) ---------------------------------------------------------

bool raw_reset(benchmark::State &state, const RawSide &r) {
    const RawDriver &d = env().driver;
    return ok(state, d.cuMemsetD32Async_fn(r.counter, 0, 1, r.stream), "cuMemsetD32Async") &&
           ok(state, d.cuStreamSynchronize_fn(r.stream), "cuStreamSynchronize");
}
bool raw_expect(benchmark::State &state, const RawSide &r, long long expected) {
    const RawDriver &d = env().driver;
    int value = -1;
    if (!ok(state, d.cuMemcpyAsync_fn(reinterpret_cast<CUdeviceptr>(&value), r.counter, sizeof value, r.stream),
            "cuMemcpyAsync") ||
        !ok(state, d.cuStreamSynchronize_fn(r.stream), "cuStreamSynchronize"))
        return false;
    if (value == expected) return true;
    fail_check(state, "raw: the counter holds " + std::to_string(value) + ", expected " + std::to_string(expected));
    return false;
}

bool c_reset(benchmark::State &state, const CSide &c) {
    return ok(state, cucore_buffer_fill(c.counter, 0, 4, c.stream), "cucore_buffer_fill") &&
           ok(state, cucore_stream_synchronize(c.stream), "cucore_stream_synchronize");
}
bool c_expect(benchmark::State &state, const CSide &c, long long expected) {
    int value = -1;
    if (!ok(state, cucore_buffer_copy_to_host(c.counter, 0, &value, sizeof value, c.stream),
            "cucore_buffer_copy_to_host") ||
        !ok(state, cucore_stream_synchronize(c.stream), "cucore_stream_synchronize"))
        return false;
    if (value == expected) return true;
    fail_check(state, "C ABI: the counter holds " + std::to_string(value) + ", expected " + std::to_string(expected));
    return false;
}

void cpp_reset(const CppSide &c) {
    c.counter->fill(std::uint32_t{0}, *c.stream);
    c.stream->synchronize();
}
bool cpp_expect(benchmark::State &state, const CppSide &c, long long expected) {
    int value = -1;
    c.counter->copy_to_host(0, &value, sizeof value, *c.stream);
    c.stream->synchronize();
    if (value == expected) return true;
    fail_check(state, "C++: the counter holds " + std::to_string(value) + ", expected " + std::to_string(expected));
    return false;
}

// ---- The speed-up table's times ----------------------------------------------------------------------

// Best (least) time per operation of each column of the two rows the speed-up compares, in ns.
enum SpeedupRow { kOneByOne, kGraph, kSpeedupRows };
double best_ns[kSpeedupRows][3] = {{NAN, NAN, NAN}, {NAN, NAN, NAN}};

// Runs `body` (false after a failure) once per iteration and records this run's time per
// iteration in best_ns[row][column] (nothing is paused in these loops).
template <typename Body>
void timed(benchmark::State &state, SpeedupRow row, int column, Body body) {
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

// ---- Graph launch, 1 and 100 nodes (host submit time) ---------------------------------------------

void launch_raw(benchmark::State &state, bool hundred) {
    RawSide &r = raw_side();
    if (!r.why.empty()) return skip_run(state, r.why);
    const RawDriver &d = env().driver;
    if (!raw_reset(state, r)) return;
    CUgraphExec exec = hundred ? r.chain_exec : r.one_exec;
    CUstream s = r.stream;
    queued_loop(
        state, hundred ? kSyncEvery100 : kSyncEvery1,
        [&] { return ok(state, d.cuGraphLaunch_fn(exec, s), "cuGraphLaunch"); },
        [&] { return ok(state, d.cuStreamSynchronize_fn(s), "cuStreamSynchronize"); });
    if (!state.error_occurred()) raw_expect(state, r, static_cast<long long>(state.iterations()) * (hundred ? kNodes : 1));
}

void launch_c(benchmark::State &state, bool hundred) {
    CSide &c = c_side();
    if (!c.why.empty()) return skip_run(state, c.why);
    if (!c_reset(state, c)) return;
    cucore_graph_t *graph = hundred ? c.chain_graph : c.one_graph;
    cucore_stream_t *s = c.stream;
    queued_loop(
        state, hundred ? kSyncEvery100 : kSyncEvery1,
        [&] { return ok(state, cucore_graph_launch(graph, s), "cucore_graph_launch"); },
        [&] { return ok(state, cucore_stream_synchronize(s), "cucore_stream_synchronize"); });
    if (!state.error_occurred()) c_expect(state, c, static_cast<long long>(state.iterations()) * (hundred ? kNodes : 1));
}

void launch_cpp(benchmark::State &state, bool hundred) {
    CppSide &c = cpp_side();
    if (!c.why.empty()) return skip_run(state, c.why);
    try {
        cpp_reset(c);
        const cucore::Graph &graph = hundred ? *c.chain_graph : *c.one_graph;
        const cucore::Stream &s = *c.stream;
        queued_loop(
            state, hundred ? kSyncEvery100 : kSyncEvery1,
            [&] {
                graph.launch(s);
                return true;
            },
            [&] {
                s.synchronize();
                return true;
            });
        cpp_expect(state, c, static_cast<long long>(state.iterations()) * (hundred ? kNodes : 1));
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
}

void launch1_raw(benchmark::State &state) { launch_raw(state, false); }
void launch1_c(benchmark::State &state) { launch_c(state, false); }
void launch1_cpp(benchmark::State &state) { launch_cpp(state, false); }
void launch100_raw(benchmark::State &state) { launch_raw(state, true); }
void launch100_c(benchmark::State &state) { launch_c(state, true); }
void launch100_cpp(benchmark::State &state) { launch_cpp(state, true); }

// ---- 100 launches + sync, and one 100-node graph launch + sync -------------------------------------

void one_by_one_raw(benchmark::State &state) {
    RawSide &r = raw_side();
    if (!r.why.empty()) return skip_run(state, r.why);
    const RawDriver &d = env().driver;
    if (!raw_reset(state, r)) return;
    CUdeviceptr counter = r.counter;
    int step = 1;
    void *params[2] = {&counter, &step};
    timed(state, kOneByOne, 0, [&] {
        for (int i = 0; i < kNodes; ++i)
            if (!ok(state, d.cuLaunchKernel_fn(r.function, 1, 1, 1, 1, 1, 1, 0, r.stream, params, nullptr),
                    "cuLaunchKernel"))
                return false;
        return ok(state, d.cuStreamSynchronize_fn(r.stream), "cuStreamSynchronize");
    });
    if (!state.error_occurred()) raw_expect(state, r, static_cast<long long>(state.iterations()) * kNodes);
}

void one_by_one_c(benchmark::State &state) {
    CSide &c = c_side();
    if (!c.why.empty()) return skip_run(state, c.why);
    if (!c_reset(state, c)) return;
    std::uint64_t address = 0;
    if (!ok(state, cucore_buffer_address(c.counter, &address), "cucore_buffer_address")) return;
    void *pointer = reinterpret_cast<void *>(static_cast<std::uintptr_t>(address));
    int step = 1;
    const void *args[2] = {&pointer, &step};
    const std::size_t sizes[2] = {sizeof pointer, sizeof step};
    const cucore_launch_config_t config = CUCORE_LAUNCH_CONFIG_INIT;
    timed(state, kOneByOne, 1, [&] {
        for (int i = 0; i < kNodes; ++i)
            if (!ok(state, cucore_launch(c.stream, &config, c.kernel, args, sizes, 2), "cucore_launch")) return false;
        return ok(state, cucore_stream_synchronize(c.stream), "cucore_stream_synchronize");
    });
    if (!state.error_occurred()) c_expect(state, c, static_cast<long long>(state.iterations()) * kNodes);
}

void one_by_one_cpp(benchmark::State &state) {
    CppSide &c = cpp_side();
    if (!c.why.empty()) return skip_run(state, c.why);
    try {
        cpp_reset(c);
        const cucore::LaunchConfig config;
        const cucore::Kernel &k = *c.kernel;
        const cucore::Stream &s = *c.stream;
        // A raw pointer, as the other columns pass (and as the launch rows' C++ column does).
        int *const counter = static_cast<int *>(c.counter->data());
        timed(state, kOneByOne, 2, [&] {
            for (int i = 0; i < kNodes; ++i) cucore::launch(s, config, k, counter, 1);
            s.synchronize();
            return true;
        });
        cpp_expect(state, c, static_cast<long long>(state.iterations()) * kNodes);
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
}

void graph_sync_raw(benchmark::State &state) {
    RawSide &r = raw_side();
    if (!r.why.empty()) return skip_run(state, r.why);
    const RawDriver &d = env().driver;
    if (!raw_reset(state, r)) return;
    timed(state, kGraph, 0, [&] {
        return ok(state, d.cuGraphLaunch_fn(r.chain_exec, r.stream), "cuGraphLaunch") &&
               ok(state, d.cuStreamSynchronize_fn(r.stream), "cuStreamSynchronize");
    });
    if (!state.error_occurred()) raw_expect(state, r, static_cast<long long>(state.iterations()) * kNodes);
}

void graph_sync_c(benchmark::State &state) {
    CSide &c = c_side();
    if (!c.why.empty()) return skip_run(state, c.why);
    if (!c_reset(state, c)) return;
    timed(state, kGraph, 1, [&] {
        return ok(state, cucore_graph_launch(c.chain_graph, c.stream), "cucore_graph_launch") &&
               ok(state, cucore_stream_synchronize(c.stream), "cucore_stream_synchronize");
    });
    if (!state.error_occurred()) c_expect(state, c, static_cast<long long>(state.iterations()) * kNodes);
}

void graph_sync_cpp(benchmark::State &state) {
    CppSide &c = cpp_side();
    if (!c.why.empty()) return skip_run(state, c.why);
    try {
        cpp_reset(c);
        const cucore::Graph &graph = *c.chain_graph;
        const cucore::Stream &s = *c.stream;
        timed(state, kGraph, 2, [&] {
            graph.launch(s);
            s.synchronize();
            return true;
        });
        cpp_expect(state, c, static_cast<long long>(state.iterations()) * kNodes);
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
}

// ---- Instantiate (+ destroy), 100 nodes ---------------------------------------------------------------

void instantiate_raw(benchmark::State &state) {
    RawSide &r = raw_side();
    if (!r.why.empty()) return skip_run(state, r.why);
    const RawDriver &d = env().driver;
    for (auto _ : state) {
        CUgraphExec exec = nullptr;
        if (!ok(state, raw_instantiate(d, r.chain[0], &exec), "cuGraphInstantiateWithParams") ||
            !ok(state, d.cuGraphExecDestroy_fn(exec), "cuGraphExecDestroy"))
            return;
    }
}

void instantiate_c(benchmark::State &state) {
    CSide &c = c_side();
    if (!c.why.empty()) return skip_run(state, c.why);
    const long long graphs = live_objects(CUCORE_OBJECT_GRAPH);
    for (auto _ : state) {
        cucore_graph_t *graph = nullptr;
        if (!ok(state, cucore_graph_definition_instantiate(c.chain[0], nullptr, &graph),
                "cucore_graph_definition_instantiate") ||
            !ok(state, cucore_graph_release(graph), "cucore_graph_release"))
            return;
    }
    if (live_objects(CUCORE_OBJECT_GRAPH) != graphs) fail_check(state, "C ABI: graphs leaked");
}

void instantiate_cpp(benchmark::State &state) {
    CppSide &c = cpp_side();
    if (!c.why.empty()) return skip_run(state, c.why);
    const long long graphs = live_objects(CUCORE_OBJECT_GRAPH);
    try {
        const cucore::GraphDefinition &def = *c.chain[0];
        for (auto _ : state) {
            const cucore::Graph graph = def.instantiate();
            benchmark::DoNotOptimize(graph.get());
        }
    } catch (const std::exception &e) {
        return fail_cpp(state, e);
    }
    if (live_objects(CUCORE_OBJECT_GRAPH) != graphs) fail_check(state, "C++: graphs leaked");
}

// ---- Whole-graph update, 100 nodes ------------------------------------------------------------------

void update_raw(benchmark::State &state) {
    RawSide &r = raw_side();
    if (!r.why.empty()) return skip_run(state, r.why);
    const RawDriver &d = env().driver;
    int next = 1;  // the executable starts as chain[0]: every update changes the step
    for (auto _ : state) {
        CUgraphExecUpdateResultInfo info{};
        if (!ok(state, d.cuGraphExecUpdate_fn(r.update_exec, r.chain[next], &info), "cuGraphExecUpdate")) return;
        next ^= 1;
    }
    // The last definition applied was chain[next ^ 1] (step next ^ 1 + 1).
    if (raw_reset(state, r) && ok(state, d.cuGraphLaunch_fn(r.update_exec, r.stream), "cuGraphLaunch"))
        raw_expect(state, r, static_cast<long long>(kNodes) * ((next ^ 1) + 1));
    if (!state.error_occurred() && next == 0) {  // back to chain[0] for the next run
        CUgraphExecUpdateResultInfo info{};
        ok(state, d.cuGraphExecUpdate_fn(r.update_exec, r.chain[0], &info), "cuGraphExecUpdate");
    }
}

void update_c(benchmark::State &state) {
    CSide &c = c_side();
    if (!c.why.empty()) return skip_run(state, c.why);
    int next = 1;
    for (auto _ : state) {
        cucore_graph_update_result_t result = CUCORE_GRAPH_UPDATE_SUCCESS;
        if (!ok(state, cucore_graph_update(c.update_graph, c.chain[next], &result), "cucore_graph_update")) return;
        next ^= 1;
    }
    if (c_reset(state, c) && ok(state, cucore_graph_launch(c.update_graph, c.stream), "cucore_graph_launch"))
        c_expect(state, c, static_cast<long long>(kNodes) * ((next ^ 1) + 1));
    if (!state.error_occurred() && next == 0) {
        cucore_graph_update_result_t result = CUCORE_GRAPH_UPDATE_SUCCESS;
        ok(state, cucore_graph_update(c.update_graph, c.chain[0], &result), "cucore_graph_update");
    }
}

void update_cpp(benchmark::State &state) {
    CppSide &c = cpp_side();
    if (!c.why.empty()) return skip_run(state, c.why);
    try {
        const cucore::Graph &graph = *c.update_graph;
        const cucore::GraphDefinition *defs[2] = {&*c.chain[0], &*c.chain[1]};
        int next = 1;
        for (auto _ : state) {
            graph.update(*defs[next]);
            next ^= 1;
        }
        cpp_reset(c);
        graph.launch(*c.stream);
        cpp_expect(state, c, static_cast<long long>(kNodes) * ((next ^ 1) + 1));
        if (next == 0) graph.update(*defs[0]);
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
}

// ---- The speed-up table at the end of the run -----------------------------------------------------------

void print_speedup() {
    bool any = false;
    for (int r = 0; r < kSpeedupRows; ++r)
        for (int c = 0; c < 3; ++c) any = any || !std::isnan(best_ns[r][c]);
    if (!any) return;
    auto us = [](double ns) -> std::string {
        if (std::isnan(ns)) return "-";
        char b[32];
        std::snprintf(b, sizeof b, "%.2f us", ns / 1e3);
        return b;
    };
    auto ratio = [](double a, double b) -> std::string {
        if (std::isnan(a) || std::isnan(b) || b <= 0) return "-";
        char t[32];
        std::snprintf(t, sizeof t, "%.2fx", a / b);
        return t;
    };
    static const char *const kColumns[3] = {"raw", "C ABI", "C++"};
    std::printf("\nGraphs: %d empty-ish kernels (tick) launched one by one + sync against one %d-node graph launch "
                "+ sync (best time per iteration)\n",
                kNodes, kNodes);
    std::printf("%-8s %16s %16s %10s\n", "column", "one by one", "graph", "speed-up");
    for (int c = 0; c < 3; ++c)
        std::printf("%-8s %16s %16s %10s\n", kColumns[c], us(best_ns[kOneByOne][c]).c_str(),
                    us(best_ns[kGraph][c]).c_str(), ratio(best_ns[kOneByOne][c], best_ns[kGraph][c]).c_str());
    const char *const note =
        "speed-up: one by one over graph, from each column's best repetition (both rows of the ratio table: "
        "\"100 launches + sync\" and \"100-node graph + sync\"); the work is the same 100 kernels, until done.";
    std::printf("  %s\n", note);

    // The same table in the markdown of --ratio_out (main.cpp writes that file before the tear-down
    // hooks run; the option is read back from the command line, which main.cpp does not hand over).
    std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
    const std::string args((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
    const std::string key = "--ratio_out=";
    std::string path;
    for (std::size_t at = 0; at < args.size(); at = args.find('\0', at) + 1) {
        if (args.compare(at, key.size(), key) == 0)
            path = args.substr(at + key.size(), args.find('\0', at) - at - key.size());
        if (args.find('\0', at) == std::string::npos) break;
    }
    if (path.empty()) return;
    std::ofstream md(path, std::ios::app);
    md << "\n### Graphs: " << kNodes << " kernels launched one by one against one " << kNodes
       << "-node graph (until done)\n\n"
       << "| column | one by one + sync | graph launch + sync | speed-up |\n|---|---:|---:|---:|\n";
    for (int c = 0; c < 3; ++c)
        md << "| " << kColumns[c] << " | " << us(best_ns[kOneByOne][c]) << " | " << us(best_ns[kGraph][c]) << " | "
           << ratio(best_ns[kOneByOne][c], best_ns[kGraph][c]) << " |\n";
    md << "\n" << note << "\n";
}

const bool registered = [] {
    register_operation({300, "graph_launch_1_node", "graph launch, 1 node", 1.03,
                        "issue 15: graph launch, C ABI <= 1.03x the raw driver (host submit time)", launch1_raw,
                        launch1_c, launch1_cpp});
    register_operation({301, "graph_launch_100_nodes", "graph launch, 100 nodes", 1.03,
                        "issue 15: graph launch, C ABI <= 1.03x the raw driver (host submit time)", launch100_raw,
                        launch100_c, launch100_cpp, 0, 0, kLaunches100});
    register_operation({302, "launch_100_kernels_sync", "100 launches + sync", 1.03,
                        "performance_anchors.md: kernel launch (C ABI <= 1.03x raw); see the graphs table",
                        one_by_one_raw, one_by_one_c, one_by_one_cpp});
    register_operation({303, "graph_100_nodes_sync", "100-node graph + sync", 1.03,
                        "issue 15: graph launch (C ABI <= 1.03x raw); see the graphs table", graph_sync_raw,
                        graph_sync_c, graph_sync_cpp});
    register_operation({304, "graph_instantiate_100_nodes", "graph instantiate, 100 nodes", 0,
                        "issue 15: instantiate cost beside raw (no bound)", instantiate_raw, instantiate_c,
                        instantiate_cpp});
    register_operation({305, "graph_update_100_nodes", "whole-graph update, 100 nodes", 0,
                        "issue 15: update cost beside raw (no bound)", update_raw, update_c, update_cpp});
    at_tear_down(print_speedup);  // registered first, so it runs last, after the graphs are released
    return true;
}();

}  // namespace
}  // namespace cucore_bench
