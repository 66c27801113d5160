// data_parallel (C++ façade, cucore.hpp): the pattern of data-parallel training
// without the training. A batch is split over every GPU; a kernel on each
// computes its shard's "gradient" (here: per-feature sums of squares of the
// shard's rows); one all-reduce through NCCL adds the GPUs' partial sums, so
// every GPU ends with the whole batch's result; the host checks it.
//
//   std::vector<cucore::Communicator> comms = cucore::Communicator::create_all(devices);
//   for (i) cucore::launch(streams[i], config, partial_sums, shards[i], grads[i], rows, features);
//   {
//       cucore::Group group;                      // one thread drives every rank
//       for (i) comms[i].all_reduce<float>(grads[i], grads[i], streams[i]);   // in place, a sum
//       group.end();
//   }
//
// With one GPU it still runs (a clique of one); without a GPU, NVRTC or NCCL it
// says so and exits 0. NVLink multicast is never asked for (set
// NCCL_NVLS_ENABLE=0 where NCCL might pick it by itself).
#include <cucore.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {

const char *const kSource = R"(
// Each thread owns one feature (column) and sums the squares of its shard's rows.
extern "C" __global__ void partial_sums(const float *shard, float *grad, unsigned rows, unsigned features) {
    unsigned f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= features) return;
    float sum = 0.0f;
    for (unsigned r = 0; r < rows; ++r) {
        float x = shard[r * features + f];
        sum += x * x;
    }
    grad[f] = sum;
}
)";

constexpr unsigned kFeatures = 1024;
constexpr unsigned kRowsPerGpu = 256;

// Row r's feature f: small integers, so every partial and total sum is exact in float.
float sample(unsigned row, unsigned feature) { return static_cast<float>((row * 7 + feature * 3) % 11) - 5.0f; }

}  // namespace

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
            std::printf("No GPU here: run this on a machine with NVIDIA GPUs (and NCCL) to all-reduce across them.\n");
            return 0;
        }
        try {
            std::printf("NCCL %d\n", cucore::communicator_library_version());
        } catch (const cucore::Error &e) {
            if (e.status() != CUCORE_ERROR_NOT_SUPPORTED) throw;
            std::printf("NCCL is not installed, so there is nothing to all-reduce with here.\n  %s\n", e.what());
            return 0;
        }
        try {
            (void)cucore::compiler_version(CUCORE_BACKEND_NVRTC);
        } catch (const cucore::Error &e) {
            if (e.status() != CUCORE_ERROR_NOT_SUPPORTED) throw;
            std::printf("NVRTC is not installed, so the kernel cannot be compiled here.\n  %s\n", e.what());
            return 0;
        }

        // One rank per GPU, all driven from this thread.
        std::vector<cucore::Device> devices;
        for (int d = 0; d < count; ++d) devices.emplace_back(d);
        std::vector<cucore::Communicator> comms = cucore::Communicator::create_all(devices);
        std::printf("%zu GPUs, one communicator each\n", comms.size());

        // The batch, and the host's answer: each feature's sum of squares over every row.
        const unsigned rows = kRowsPerGpu * static_cast<unsigned>(count);
        std::vector<float> batch(static_cast<size_t>(rows) * kFeatures);
        std::vector<float> expected(kFeatures, 0.0f);
        for (unsigned r = 0; r < rows; ++r)
            for (unsigned f = 0; f < kFeatures; ++f) {
                batch[static_cast<size_t>(r) * kFeatures + f] = sample(r, f);
                expected[f] += sample(r, f) * sample(r, f);
            }

        // Each GPU gets its shard of rows, compiles the kernel for its own architecture, and computes its sums.
        std::vector<cucore::Stream> streams;
        std::vector<cucore::Buffer> shards, grads;
        std::vector<cucore::ObjectCode> codes;
        const cucore::LaunchConfig config((kFeatures + 255) / 256, 256);
        for (int d = 0; d < count; ++d) {
            streams.push_back(devices[d].create_stream());
            const size_t shard_floats = static_cast<size_t>(kRowsPerGpu) * kFeatures;
            shards.push_back(devices[d].allocate(shard_floats * sizeof(float), streams[d]));
            grads.push_back(devices[d].allocate(kFeatures * sizeof(float), streams[d]));
            shards[d].copy_from_host(0, batch.data() + d * shard_floats, shard_floats * sizeof(float), streams[d]);
            cucore::ProgramOptions options;
            const cucore::ComputeCapability cc = devices[d].compute_capability();
            options.arch = "sm_" + std::to_string(cc.major * 10 + cc.minor);
            codes.push_back(cucore::Program::create(kSource, CUCORE_CODE_CXX, options).compile(CUCORE_CODE_CUBIN));
            cucore::launch(streams[d], config, codes[d].get_kernel("partial_sums"), shards[d], grads[d], kRowsPerGpu,
                           kFeatures);
        }

        // One all-reduce adds the partial sums: afterwards every GPU holds the whole batch's.
        {
            cucore::Group group;
            for (int d = 0; d < count; ++d) comms[d].all_reduce<float>(grads[d], grads[d], streams[d]);
            group.end();
        }

        bool ok = true;
        for (int d = 0; d < count; ++d) {
            std::vector<float> got(kFeatures);
            grads[d].copy_to_host(0, got.data(), kFeatures * sizeof(float), streams[d]);
            streams[d].synchronize();
            for (unsigned f = 0; f < kFeatures && ok; ++f)
                if (got[f] != expected[f]) {
                    std::printf("GPU %d: WRONG sum of feature %u: %g, expected %g\n", d, f, got[f], expected[f]);
                    ok = false;
                }
            if (ok)
                std::printf("GPU %d: all %u sums match the host's (feature 0: %g over %u rows)\n", d, kFeatures,
                            got[0], rows);
        }
        std::printf(ok ? "data_parallel OK\n" : "data_parallel FAILED\n");
        return ok ? 0 : 1;
    } catch (const cucore::Error &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
