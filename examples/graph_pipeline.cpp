// graph_pipeline (C++ façade, cucore.hpp): a small pipeline of kernels and a
// copy captured once into a CUDA graph, launched many times with one call
// each, timed beside launching the same work one operation at a time, embedded
// in a second graph with a host callback, then changed in place (a kernel
// argument) and launched again; every result is checked against the host.
//
//   cucore::GraphBuilder builder = stream.create_graph_builder();
//   builder.begin_building();
//   cucore::launch(builder, config, affine, in, tmp, gain, bias, n);   // captured, not run
//   cucore::launch(builder, config, relu, tmp, n);
//   out.copy_from(tmp, builder.stream());
//   builder.end_building();
//   cucore::Graph graph = builder.complete();
//   graph.launch(stream);                                               // the whole pipeline
//   graph.set_kernel_node(node, config, affine, in, tmp, 2 * gain, bias, n);
//
// Without a GPU or NVRTC it says so and exits 0.
#include <cucore.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <string>
#include <vector>

namespace {

const char *const kSource = R"(
extern "C" __global__ void affine(const float *in, float *out, float gain, float bias, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * gain + bias;
}
extern "C" __global__ void relu(float *x, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
)";

constexpr unsigned kN = 4096;
constexpr int kRuns = 2000;

// The host's result of the pipeline, and whether `got` equals it.
bool check(const std::vector<float> &in, const std::vector<float> &got, float gain, float bias, const char *what) {
    for (unsigned i = 0; i < kN; ++i) {
        const float want = std::max(in[i] * gain + bias, 0.0f);
        if (got[i] != want) {
            std::printf("%s: WRONG at element %u: %g, expected %g\n", what, i, got[i], want);
            return false;
        }
    }
    std::printf("%s: OK (out[0..3] = %g %g %g %g)\n", what, got[0], got[1], got[2], got[3]);
    return true;
}

// Milliseconds `work` takes on `stream`, between two timing events.
template <typename Work>
float time_ms(const cucore::Stream &stream, Work work) {
    cucore::EventOptions timing;
    timing.timing_enabled = true;
    const cucore::Event start = stream.record(timing);
    work();
    const cucore::Event end = stream.record(timing);
    end.synchronize();
    return end - start;
}

} // namespace

int main() {
    std::printf("libcucore %s\n", cucore::version_string());
    try {
        int count = 0;
        try {
            count = cucore::Device::count();
        } catch (const cucore::Error &e) {
            if (e.status() != CUCORE_ERROR_NO_DRIVER) throw;
        }
        if (count == 0) {
            std::printf("No GPU here: run this on a machine with an NVIDIA GPU to build and launch the graph.\n");
            return 0;
        }
        try {
            (void)cucore::compiler_version(CUCORE_BACKEND_NVRTC);
        } catch (const cucore::Error &e) {
            if (e.status() != CUCORE_ERROR_NOT_SUPPORTED) throw;
            std::printf("NVRTC is not installed, so the kernels cannot be compiled here.\n  %s\n", e.what());
            return 0;
        }

        const cucore::Device dev(0);
        const cucore::Stream stream = dev.create_stream();
        cucore::ProgramOptions options; // arch: device 0's
        options.std = "c++17";
        const cucore::ObjectCode code =
            cucore::Program::create(kSource, CUCORE_CODE_CXX, options).compile(CUCORE_CODE_CUBIN);
        const cucore::Kernel affine = code.get_kernel("affine"), relu = code.get_kernel("relu");
        const cucore::LaunchConfig config((kN + 255) / 256, 256);

        std::vector<float> host_in(kN);
        for (unsigned i = 0; i < kN; ++i) host_in[i] = static_cast<float>(static_cast<int>(i % 64) - 32);
        const cucore::Buffer in = dev.allocate(kN * sizeof(float), stream);
        const cucore::Buffer tmp = dev.allocate(kN * sizeof(float), stream);
        const cucore::Buffer out = dev.allocate(kN * sizeof(float), stream);
        in.copy_from_host(host_in, stream);
        const float gain = 0.5f, bias = 2.0f;

        // Capture the pipeline once: nothing runs while it is captured.
        const cucore::GraphBuilder builder = stream.create_graph_builder();
        builder.begin_building();
        cucore::launch(builder, config, affine, in, tmp, gain, bias, kN);
        cucore::launch(builder, config, relu, tmp, kN);
        out.copy_from(tmp, builder.stream());
        builder.end_building();
        const cucore::Graph graph = builder.complete();
        std::printf("Captured a graph of %zu nodes.\n", builder.definition().nodes().size());

        bool ok = true;
        std::vector<float> result(kN);
        graph.launch(stream);
        out.copy_to_host(result, stream);
        stream.synchronize();
        ok = check(host_in, result, gain, bias, "one graph launch") && ok;

        // The same work, launched many times: one graph launch each, or its
        // three operations one by one.
        const float graph_ms = time_ms(stream, [&] {
            for (int i = 0; i < kRuns; ++i) graph.launch(stream);
        });
        const float one_by_one_ms = time_ms(stream, [&] {
            for (int i = 0; i < kRuns; ++i) {
                cucore::launch(stream, config, affine, in, tmp, gain, bias, kN);
                cucore::launch(stream, config, relu, tmp, kN);
                out.copy_from(tmp, stream);
            }
        });
        std::printf("%d pipelines: %.2f us each as one graph launch, %.2f us each launched one by one (%.2fx)\n",
                    kRuns, 1000.0f * graph_ms / kRuns, 1000.0f * one_by_one_ms / kRuns,
                    graph_ms > 0 ? one_by_one_ms / graph_ms : 0.0f);

        // A second graph embeds the first and tells the host when it is done
        // (a host node costs a round trip to the host on every launch, so the
        // timed pipeline above has none).
        std::atomic<int> pipelines_done{0};
        const cucore::GraphBuilder checked = stream.create_graph_builder();
        checked.begin_building();
        checked.embed(builder);
        checked.callback([&pipelines_done] { ++pipelines_done; });
        checked.end_building();
        const cucore::Graph checked_graph = checked.complete();
        for (int i = 0; i < 3; ++i) checked_graph.launch(stream);
        stream.synchronize();
        std::printf("The embedding graph's host callback ran %d times.\n", pipelines_done.load());
        ok = ok && pipelines_done.load() == 3;

        // Change a kernel argument of the executable graph in place: the next
        // launch uses the new gain and bias.
        cucore::GraphNode affine_node;
        for (const cucore::GraphNode &node : builder.definition().nodes()) {
            if (node.type() != CUCORE_GRAPH_NODE_KERNEL) continue;
            const cucore::Kernel kernel = node.kernel_config().kernel;
            if (kernel && std::string(kernel.name()) == "affine") affine_node = node;
        }
        const float new_gain = -1.5f, new_bias = 4.0f;
        graph.set_kernel_node(affine_node, config, affine, in, tmp, new_gain, new_bias, kN);
        graph.launch(stream);
        out.copy_to_host(result, stream);
        stream.synchronize();
        ok = check(host_in, result, new_gain, new_bias, "after updating the affine node") && ok;

        std::printf(ok ? "graph pipeline OK\n" : "graph pipeline FAILED\n");
        return ok ? 0 : 1;
    } catch (const cucore::Error &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
